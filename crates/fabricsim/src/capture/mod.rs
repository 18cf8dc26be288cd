//! Packet capture: `[record.pcap]` -> `capture.pcapng`.
//!
//! A run with `[record.pcap]` notes every frame that *starts transmission* on the ports it
//! names (switch egress ports as `"<switch>:<port>"`, NIC ports as `"<host>"` or
//! `"<host>:<port>"`, local indices as in `ports.csv`), within an optional time window,
//! up to `limit` frames. Noting a frame is one copy of a fixed-size [`CaptureRecord`]
//! (time, interface, the frame's descriptor and arena slot) into a slot of a vector
//! filled to the limit at build, so the per-packet path allocates nothing. A captured
//! port carries a bit (`Port::slow_transmit`, beside the credit bit) that sends its
//! transmissions through the out-of-line path credit ports already take, so other ports
//! and runs without a capture pay nothing new. Frames become bytes only when the
//! file is written after the run ([`frame`]: Ethernet, IPv4, UDP, BTH and its extension
//! headers, PFC, GSE, from [`crate::wire`]) as pcapng ([`pcapng`]) with nanosecond
//! timestamps and one interface per captured port.
//!
//! What a frame holds is in `docs/pcap.md`: headers only (caplen < original length for
//! data; the original length is the simulator's wire bytes), addresses derived from ids
//! ([`crate::wire::addr`]), the priority in the IPv4 DSCP and the ECN mark in its ECN
//! bits, the PSN from the sequence number, zero ICRCs.

pub mod frame;
pub mod pcapng;

use crate::ids::PortId;
use crate::packet::{Desc, Packet, PacketArena};
use crate::param::{Described, Param, ParamError};
use crate::sim::Simulation;
use crate::units::serde_units as su;
use crate::units::Time;
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
    /// What switches read of it (ECN as marked so far, priority, wire bytes).
    pub desc: Desc,
    /// What the end NICs read of it (kind, flow, sequence, source).
    pub pkt: Packet,
    /// Its GSE container tag (zero outside GSE).
    pub tag: crate::gse::pktc::Tag,
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
const NOT_CAPTURED: u32 = u32::MAX;

/// A run's capture: what to note and what was noted.
#[derive(Clone, Debug)]
pub struct Capture {
    /// Per port: its interface index, or [`NOT_CAPTURED`].
    iface_of: Vec<u32>,
    /// The captured ports, in the scenario's order.
    pub interfaces: Vec<Interface>,
    from: Time,
    to: Time,
    /// Data frames as SEND or WRITE.
    pub verb: Verb,
    /// Data frames whole (payload zeros) or headers only.
    pub payload: bool,
    /// `limit` slots, filled at build: noting a frame writes the next one (no call, no
    /// allocation on the transmit path).
    slots: Vec<CaptureRecord>,
    /// Slots written.
    len: usize,
    /// Frames on captured ports within the window beyond the limit (not kept).
    pub missed: u64,
}

impl Capture {
    /// Resolves port names against a built simulation and reserves the records; the
    /// error is `"<field>: <message>"` relative to `[record.pcap]`.
    pub fn resolve(cfg: &PcapCfg, sim: &Simulation) -> Result<Capture, String> {
        let fabric = &sim.fabric;
        let mut iface_of = vec![NOT_CAPTURED; fabric.ports.len()];
        let mut interfaces: Vec<Interface> = Vec::new();
        for (i, name) in cfg.ports.iter().enumerate() {
            let port = find_port(sim, name).ok_or_else(|| {
                format!(
                    "ports[{i}]: `{name}` names no port: use \"<switch>:<port>\" (a switch \
                     egress port), \"<host>\" (its NIC) or \"<host>:<port>\", with node names \
                     and local port indices as in ports.csv"
                )
            })?;
            if iface_of[port.idx()] != NOT_CAPTURED {
                return Err(format!(
                    "ports[{i}]: `{name}` is the same port as ports[{}]",
                    iface_of[port.idx()]
                ));
            }
            let p = &fabric.ports[port.idx()];
            iface_of[port.idx()] = interfaces.len() as u32;
            interfaces.push(Interface {
                name: name.clone(),
                port,
                description: format!(
                    "egress of {} port {} toward {} port {}",
                    sim.port_node_name(port),
                    p.local,
                    sim.port_node_name(p.peer),
                    fabric.ports[p.peer.idx()].local
                ),
                speed_bps: p.rate.0,
            });
        }
        let limit = cfg.limit.min(MAX_LIMIT) as usize;
        Ok(Capture {
            iface_of,
            interfaces,
            from: cfg.from.unwrap_or(0),
            to: cfg.to.unwrap_or(Time::MAX),
            verb: cfg.verb,
            payload: cfg.payload,
            slots: vec![CaptureRecord::EMPTY; limit],
            len: 0,
            missed: 0,
        })
    }

    /// The frames noted, in the order they were.
    pub fn records(&self) -> &[CaptureRecord] {
        &self.slots[..self.len]
    }

    /// A frame starts transmission on port `port` at `now`: note it if the port is
    /// captured, the time in the window and the limit not reached. Only captured ports'
    /// transmissions get here (`Port::slow_transmit`); the slot was written at build, so
    /// nothing is allocated.
    #[inline(always)]
    pub(crate) fn note(&mut self, now: Time, port: usize, desc: Desc, arena: &PacketArena) {
        let Some(&iface) = self.iface_of.get(port) else {
            return;
        };
        if iface == NOT_CAPTURED || now < self.from || now >= self.to {
            return;
        }
        match self.slots.get_mut(self.len) {
            Some(slot) => {
                *slot = CaptureRecord {
                    t: now,
                    iface,
                    desc,
                    pkt: *arena.get(desc.id),
                    tag: arena.tag(desc.id),
                };
                self.len += 1;
            }
            None => self.missed += 1,
        }
    }

    /// [`Self::note`] out of line, for the paths where frames are rare (link-level
    /// replays).
    #[inline(never)]
    pub(crate) fn on_transmit(&mut self, now: Time, port: usize, desc: &Desc, arena: &PacketArena) {
        self.note(now, port, *desc, arena);
    }
}

impl CaptureRecord {
    /// What a slot holds before a frame is noted in it.
    const EMPTY: CaptureRecord = CaptureRecord {
        t: 0,
        iface: 0,
        desc: Desc {
            id: crate::packet::PktId(0),
            dst: 0,
            hash: 0,
            wire: 0,
            kind: crate::packet::PacketKind::Data,
            prio: 0,
            ecn: 0,
            in_port: 0,
            mark: 0,
            flags: 0,
        },
        pkt: Packet::new(
            crate::packet::Payload::Ack {
                flow: crate::ids::FlowId(0),
                seq: 0,
            },
            0,
        ),
        tag: crate::gse::pktc::Tag {
            cont: 0,
            idx: 0,
            prev: 0,
        },
    };
}

/// The port `name` names: `"<node>:<local>"` for any node, or `"<host>"` for a host's
/// first port.
fn find_port(sim: &Simulation, name: &str) -> Option<PortId> {
    let (node, local) = match name.rsplit_once(':') {
        Some((n, l)) => (n, l.parse::<u32>().ok()?),
        None => (name, 0),
    };
    let n = sim.fabric.nodes.iter().find(|n| n.name == node)?;
    let bare_host = !name.contains(':');
    if bare_host && !matches!(n.kind, crate::fabric::NodeKind::Host(_)) {
        return None;
    }
    n.ports
        .iter()
        .find(|&p| sim.fabric.ports[p.idx()].local == local)
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

    #[test]
    fn a_record_stays_small() {
        // The memory budget prices a capture at this per frame, and docs/pcap.md says it.
        assert_eq!(std::mem::size_of::<CaptureRecord>(), 80);
    }
}
