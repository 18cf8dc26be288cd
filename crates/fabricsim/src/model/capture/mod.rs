//! Packet capture: `[record.pcap]` -> `capture.pcapng`.
//!
//! A run with `[record.pcap]` notes every frame that *starts transmission* on the ports it
//! names (switch egress ports as `"<switch>:<port>"`, NIC ports as `"<host>"` or
//! `"<host>:<port>"`, local indices as in `ports.csv`), within an optional time window,
//! up to `limit` frames: the first `limit` in (time, interface, the port's frame count)
//! order, a key no two frames share, so which frames are kept and the file's order do
//! not depend on the order handlers ran in. Noting a frame is one copy of a fixed-size
//! [`CaptureRecord`] (time, interface, the frame's descriptor and arena slot) into a
//! vector reserved to the limit at build, so the per-packet path allocates
//! nothing. A run cut into shards (`sim/shards`) notes each shard's frames in a log of
//! its own ([`CaptureLog`], each reserved to `limit`) and merges the logs, by that key, when
//! it pauses or ends: the serial run's frames, in the same order. A captured
//! port carries a bit (`Port::slow_transmit`, beside the credit bit) that sends its
//! transmissions through the out-of-line path credit ports already take, so other ports
//! and runs without a capture pay nothing new. Frames become bytes only when the
//! file is written after the run ([`frame`]: Ethernet, IPv4, UDP, BTH and its extension
//! headers, PFC, GSE, from [`crate::base::wire`]) as pcapng ([`pcapng`]) with nanosecond
//! timestamps and one interface per captured port.
//!
//! What a frame holds is in `docs/pcap.md`: headers only (caplen < original length for
//! data; the original length is the simulator's wire bytes), addresses derived from ids
//! ([`crate::base::wire::addr`]), the priority in the IPv4 DSCP and the ECN mark in its ECN
//! bits, the PSN from the sequence number, zero ICRCs.

use crate::base::ids::PortId;
use crate::base::param::{Described, Param, ParamError};
use crate::base::units::serde_units as su;
use crate::base::units::Time;
use crate::kernel::packet::{Desc, Packet, PacketArena};
use serde::Deserialize;

/// The file a run's capture is written to.
pub const FILE: &str = "capture.pcapng";
/// Frames captured at most unless `limit` says otherwise.
pub const DEFAULT_LIMIT: u64 = 100_000;
/// The largest `limit`: a record is [`RECORD_BYTES`], so a capture holds at most
/// ~90 MB whatever the run.
pub const MAX_LIMIT: u64 = 1_000_000;
/// Bytes one captured frame holds until the file is written.
pub const RECORD_BYTES: u64 = std::mem::size_of::<CaptureRecord>() as u64;

/// Which RDMA verb data frames are written as.
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Verb {
    /// RC SEND (first / middle / last / only).
    #[default]
    Send,
    /// RC RDMA WRITE (first / middle / last / only; a RETH on the first and only).
    Write,
}

/// `[record.pcap]`.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct PcapCfg {
    /// Ports whose transmissions to capture: `"<switch>:<port>"` (a switch egress port),
    /// `"<host>"` (its NIC's first port) or `"<host>:<port>"`, local indices as in
    /// `ports.csv`.
    pub ports: Vec<String>,
    /// Frames captured at most (1..=[`MAX_LIMIT`]); later frames are counted, not kept.
    #[serde(default = "d_limit")]
    pub limit: u64,
    /// Capture frames that start at or after this time.
    #[serde(default, deserialize_with = "su::opt_time")]
    pub from: Option<Time>,
    /// Capture frames that start before this time.
    #[serde(default, deserialize_with = "su::opt_time")]
    pub to: Option<Time>,
    /// Data frames as RC SEND or RC RDMA WRITE.
    #[serde(default)]
    pub verb: Verb,
    /// Write data frames whole, their payload and ICRC as zeros (else headers only: a
    /// smaller file, and Wireshark notes the truncated payload).
    #[serde(default)]
    pub payload: bool,
}

fn d_limit() -> u64 {
    DEFAULT_LIMIT
}

impl PcapCfg {
    /// Checks the settings that need no fabric (ports are resolved in [`Capture::resolve`]).
    pub fn validate(&self) -> Result<(), ParamError> {
        if self.ports.is_empty() {
            return Err(ParamError::new(
                "ports",
                "names no port: list at least one, as \"<switch>:<port>\" or \"<host>\"",
            ));
        }
        if self.limit == 0 || self.limit > MAX_LIMIT {
            return Err(ParamError::new(
                "limit",
                format!(
                    "{} frames: must be 1 to {MAX_LIMIT} (a capture is held in memory until the \
                     run ends, {RECORD_BYTES} bytes a frame)",
                    self.limit
                ),
            ));
        }
        if let (Some(f), Some(t)) = (self.from, self.to) {
            if t <= f {
                return Err(ParamError::new("to", "must be after `from`"));
            }
        }
        Ok(())
    }
}

impl Described for PcapCfg {
    const ABOUT: &'static str =
        "capture the frames chosen ports send, written as capture.pcapng (docs/pcap.md)";
    fn params() -> Vec<Param> {
        vec![
            Param::required(
                "ports",
                "[\"switch:port\", \"host\", \"host:port\"] egress ports to capture (local \
                 indices as in ports.csv)",
            ),
            Param::plain(
                "limit",
                DEFAULT_LIMIT,
                format!("frames captured at most, 1 to {MAX_LIMIT}; later ones are counted"),
            ),
            Param::unset("from", "capture frames starting at or after this time"),
            Param::unset("to", "capture frames starting before this time"),
            Param::new(
                "verb",
                "\"send\"",
                "data frames as RC \"send\" or \"write\"",
            ),
            Param::plain(
                "payload",
                false,
                "write data frames whole (payload as zeros); false: headers only",
            ),
        ]
    }
}

/// One captured frame, as it started transmission.
#[derive(Clone, Copy, Debug)]
pub struct CaptureRecord {
    /// When its first bit left.
    pub t: Time,
    /// Interface (index into [`Capture::interfaces`]).
    pub iface: u32,
    /// Frames its port had sent before it (the low 32 bits): with the time and the
    /// interface, a key no two frames share (a link-level replay sends frames again).
    pub nth: u32,
    /// What switches read of it (ECN as marked so far, priority, wire bytes).
    pub desc: Desc,
    /// What the end NICs read of it (kind, flow, sequence, source).
    pub pkt: Packet,
    /// Its GSE container tag (zero outside GSE).
    pub tag: crate::model::routing::pktc::Tag,
}

/// One captured port.
#[derive(Clone, Debug, PartialEq)]
pub struct Interface {
    /// The name the scenario gave.
    pub name: String,
    /// Its port.
    pub port: PortId,
    /// "egress of leaf1 port 3 toward host16".
    pub description: String,
    /// Line rate, bit/s.
    pub speed_bps: u64,
}

/// Marks a port that is not captured in [`Capture`]'s per-port map.
pub(crate) const NOT_CAPTURED: u32 = u32::MAX;

/// A run's capture: what to note and what was noted.
#[derive(Clone, Debug)]
pub struct Capture {
    /// Per port: its interface index, or [`NOT_CAPTURED`].
    pub(crate) iface_of: Vec<u32>,
    /// The captured ports, in the scenario's order.
    pub interfaces: Vec<Interface>,
    pub(crate) from: Time,
    pub(crate) to: Time,
    /// Data frames as SEND or WRITE.
    pub verb: Verb,
    /// Data frames whole (payload zeros) or headers only.
    pub payload: bool,
    /// What was noted: one log, or one per shard of a cut run (merged into the first
    /// when the run pauses or ends, [`Self::merge_logs`]).
    pub(crate) logs: Vec<CaptureLog>,
}

/// The frames one shard noted: the first `limit` by [`CaptureRecord::key`] of those it
/// saw. Aligned to a cache line: shards on different threads write their own logs side
/// by side.
#[derive(Debug)]
#[repr(align(64))]
pub struct CaptureLog {
    /// The frames kept, in a vector reserved to `limit` at build: pushing within it
    /// allocates nothing, and the pages a log does not fill are never touched (a cut
    /// run's logs cost what they hold, not `limit` each).
    slots: Vec<CaptureRecord>,
    /// Frames kept at most.
    limit: usize,
    /// Frames seen but not kept (beyond the limit, or pushed out by an earlier key).
    missed: u64,
    /// Once the slots are full, the one with the greatest key (the next to give way).
    last: Option<usize>,
}

impl Clone for CaptureLog {
    /// Reserved to `limit` as the original (a derived clone would reserve what it holds,
    /// and the next frame kept would allocate).
    fn clone(&self) -> CaptureLog {
        let mut slots = Vec::with_capacity(self.limit);
        slots.extend_from_slice(&self.slots);
        CaptureLog { slots, ..*self }
    }
}

impl CaptureLog {
    pub(crate) fn new(limit: usize) -> CaptureLog {
        CaptureLog {
            slots: Vec::with_capacity(limit),
            limit,
            missed: 0,
            last: None,
        }
    }

    /// Keeps `r` if it is among the first `limit` by key seen so far. Frames come in
    /// time order but for replays and frames of one instant, so once the slots are full
    /// a new frame almost always has the greatest key and is only counted.
    #[inline(always)]
    fn keep(&mut self, r: CaptureRecord) {
        if self.slots.len() < self.limit {
            self.slots.push(r);
            return;
        }
        self.missed += 1;
        self.give_way(r);
    }

    /// The slots are full: `r` takes the place of the greatest key if it is less.
    #[cold]
    #[inline(never)]
    fn give_way(&mut self, r: CaptureRecord) {
        let greatest = |slots: &[CaptureRecord]| (0..slots.len()).max_by_key(|&i| slots[i].key());
        let last = match self.last {
            Some(i) => i,
            None => match greatest(&self.slots) {
                Some(i) => i,
                None => return,
            },
        };
        if r.key() < self.slots[last].key() {
            self.slots[last] = r;
            self.last = greatest(&self.slots);
        } else {
            self.last = Some(last);
        }
    }
}

/// What a capture kept and what its `limit` left out, for `summary.json` and the
/// command line's warning.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct CaptureStats {
    /// Frames in `capture.pcapng`.
    pub frames: u64,
    /// Frames the captured ports sent within the window beyond `limit`, not in the file
    /// (0: the file holds every frame of the window).
    pub frames_not_kept: u64,
    /// The `limit` the run had.
    pub limit: u64,
}

impl Capture {
    /// What the capture kept and left out.
    pub fn stats(&self) -> CaptureStats {
        CaptureStats {
            frames: self.records().len() as u64,
            frames_not_kept: self.missed(),
            limit: self.logs[0].limit as u64,
        }
    }

    /// Frames on captured ports within the window beyond the limit (not kept).
    pub fn missed(&self) -> u64 {
        let seen: u64 = (self.logs.iter())
            .map(|l| l.slots.len() as u64 + l.missed)
            .sum();
        seen - seen.min(self.logs[0].limit as u64)
    }

    /// The frames kept, in (time, interface, frame) order once the run has paused or
    /// ended ([`Self::merge_logs`]; a serial run's are in the order noted, which differs
    /// only within an instant and for replays).
    pub fn records(&self) -> &[CaptureRecord] {
        &self.logs[0].slots
    }

    /// A frame starts transmission on port `port` at `now` in shard `shard`, the port's
    /// `nth` (frames it sent before): note it if the port is captured, the time in the
    /// window and the frame among the first `limit`. Only captured ports' transmissions
    /// get here (`Port::slow_transmit`); the log was reserved at build, so nothing is
    /// allocated.
    #[inline(always)]
    pub(crate) fn note(
        &mut self,
        shard: u32,
        now: Time,
        port: usize,
        nth: u64,
        desc: Desc,
        arena: &PacketArena,
    ) {
        let Some(&iface) = self.iface_of.get(port) else {
            return;
        };
        if iface == NOT_CAPTURED || now < self.from || now >= self.to {
            return;
        }
        self.logs[shard as usize].keep(CaptureRecord {
            t: now,
            iface,
            nth: nth as u32,
            desc,
            pkt: arena.get(desc.id, desc.kind(), now),
            tag: arena.tag(desc.id),
        });
    }

    /// [`Self::note`] out of line, for the paths where frames are rare (link-level
    /// replays).
    #[inline(never)]
    pub(crate) fn on_transmit(
        &mut self,
        shard: u32,
        now: Time,
        port: usize,
        nth: u64,
        desc: &Desc,
        arena: &PacketArena,
    ) {
        self.note(shard, now, port, nth, *desc, arena);
    }

    /// One log per shard of a run cut into `shards` (each with `limit` slots), or back
    /// to one. Call before the run starts.
    /// Frames a log keeps at most (`record.pcap.limit`).
    pub(crate) fn limit(&self) -> u64 {
        self.logs[0].limit as u64
    }

    pub(crate) fn set_shards(&mut self, shards: usize) {
        let limit = self.logs[0].limit;
        self.logs.truncate(1);
        self.logs
            .resize_with(shards.max(1), || CaptureLog::new(limit));
    }

    /// The shards' logs merged into the first, in key order: the first `limit` frames
    /// of all, the others counted as missed; the other logs start again empty. The same
    /// records, in the same order, as a serial run's log sorted by key: the first
    /// `limit` of a union are the first `limit` of the union of each part's first
    /// `limit`. Also sorts a serial run's one log.
    pub(crate) fn merge_logs(&mut self) {
        let limit = self.logs[0].limit;
        let seen: u64 = (self.logs.iter())
            .map(|l| l.slots.len() as u64 + l.missed)
            .sum();
        let mut all: Vec<CaptureRecord> = (self.logs.iter())
            .flat_map(|l| l.slots.iter().copied())
            .collect();
        all.sort_unstable_by_key(CaptureRecord::key);
        all.truncate(limit);
        for l in self.logs.iter_mut() {
            l.slots.clear();
            l.missed = 0;
            l.last = None;
        }
        let first = &mut self.logs[0];
        first.slots.extend_from_slice(&all);
        first.missed = seen - all.len() as u64;
    }
}

impl CaptureRecord {
    /// The order frames are kept and written in: time, interface, the port's count.
    pub fn key(&self) -> (Time, u32, u32) {
        (self.t, self.iface, self.nth)
    }

    /// A record of nothing.
    #[cfg(test)]
    const EMPTY: CaptureRecord = CaptureRecord {
        t: 0,
        iface: 0,
        nth: 0,
        desc: crate::kernel::packet::Desc::BLANK.at_in_port(0),
        pkt: Packet::new(
            crate::kernel::packet::Payload::Ack {
                flow: crate::base::ids::FlowId(0),
                seq: 0,
            },
            0,
        ),
        tag: crate::model::routing::pktc::Tag {
            cont: 0,
            idx: 0,
            prev: 0,
        },
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(ports: &[&str]) -> PcapCfg {
        PcapCfg {
            ports: ports.iter().map(|s| s.to_string()).collect(),
            limit: DEFAULT_LIMIT,
            from: None,
            to: None,
            verb: Verb::Send,
            payload: false,
        }
    }

    #[test]
    fn settings_are_checked_by_field() {
        assert!(cfg(&["host0"]).validate().is_ok());
        assert_eq!(cfg(&[]).validate().unwrap_err().field, "ports");
        for limit in [0, MAX_LIMIT + 1] {
            let e = PcapCfg {
                limit,
                ..cfg(&["host0"])
            }
            .validate()
            .unwrap_err();
            assert_eq!(e.field, "limit");
            assert!(e.message.contains("1 to 1000000"), "{}", e.message);
        }
        let e = PcapCfg {
            from: Some(5),
            to: Some(5),
            ..cfg(&["host0"])
        }
        .validate()
        .unwrap_err();
        assert_eq!(e.field, "to");
    }

    /// A record whose key is (t, iface, nth).
    fn rec(t: Time, iface: u32, nth: u32) -> CaptureRecord {
        CaptureRecord {
            t,
            iface,
            nth,
            ..CaptureRecord::EMPTY
        }
    }

    #[test]
    fn logs_keep_the_first_frames_by_key_however_they_are_noted_and_split() {
        // Frames in time order but for ties (many frames of one instant, in no order)
        // and a few noted ahead of their time (replays), split among 1 to 4 logs as
        // shards would (a port's frames all in one): the merge keeps the `limit` least
        // keys, in order, and counts the rest as missed.
        let mut frames = Vec::new();
        let mut x = 12345u64;
        let mut next = |m: u64| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (x >> 33) % m
        };
        let mut t = 0;
        for i in 0..400u32 {
            t += next(3) * 1000; // a third of the frames share their instant with the last
            let ahead = if next(20) == 0 { 5000 } else { 0 };
            frames.push(rec(t.saturating_sub(ahead), next(6) as u32, i));
        }
        let mut sorted: Vec<_> = frames.iter().map(CaptureRecord::key).collect();
        sorted.sort_unstable();
        for limit in [1usize, 7, 100, 399, 400, 1000] {
            for shards in 1..=4u32 {
                let mut cap = Capture {
                    iface_of: vec![],
                    interfaces: vec![],
                    from: 0,
                    to: Time::MAX,
                    verb: Verb::Send,
                    payload: false,
                    logs: vec![CaptureLog::new(limit)],
                };
                cap.set_shards(shards as usize);
                for r in &frames {
                    cap.logs[(r.iface % shards) as usize].keep(*r);
                }
                assert_eq!(cap.missed(), 400 - limit.min(400) as u64);
                cap.merge_logs();
                let kept: Vec<_> = cap.records().iter().map(CaptureRecord::key).collect();
                assert_eq!(
                    kept,
                    sorted[..limit.min(400)],
                    "limit {limit}, {shards} logs"
                );
                assert_eq!(cap.missed(), 400 - limit.min(400) as u64);
            }
        }
    }

    #[test]
    fn a_record_stays_small() {
        // The memory budget prices a capture at this per frame, and docs/pcap.md says it.
        assert_eq!(std::mem::size_of::<CaptureRecord>(), 80);
    }
}
