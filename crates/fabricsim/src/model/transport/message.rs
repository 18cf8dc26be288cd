//! The Sunway NIC's message transport (document 003): out-of-order delivery and message
//! completion, for NICs whose packets take different rails.
//!
//! The SWHNI's message engines execute messages out of order and let each packet of a
//! message leave by whichever port is free, so the packets of one message arrive
//! interleaved over two independent planes. Go-back-N would take every reordering for a
//! loss; instead the receiver places each packet where it belongs and the message is
//! complete when all its bytes have arrived, whatever their order. The fabric is
//! lossless (credit-based flow control), so the receiver keeps only the in-order prefix
//! and, past it, the ranges that arrived early (a few, as the rails interleave), never a
//! per-packet map.
//!
//! Reliability is the document's "ack protocol for RDMA" [recon: its form is not given]:
//! the receiver acknowledges the in-order prefix every `ack_every` new packets and when
//! the message is complete (and again if a copy of a packet of a complete message
//! arrives, so that a sender that timed out learns it); a sender whose retransmission
//! timer expires sends again from the acknowledged prefix, and the receiver drops what
//! it already has. Packets are never NACKed: a gap is only the other rail being late.

use super::{Flow, NicTransport, RxOutcome, RxReply};
use crate::base::param::{Described, Param, ParamError};
use crate::base::units::serde_units as su;
use crate::base::units::{Time, NS};
use serde::Deserialize;

/// `[transport.message]`: the Sunway NIC's message engines.
///
/// The SWHNI has two message engines sharing both ports; each keeps up to 256 messages
/// in flight. Before a message's first packet an engine fetches its descriptor and sets
/// up the DMA (`setup`); messages of at most `short_bytes` (128 B) go by programmed I/O,
/// the fast path, whose setup is `short_setup`. An engine sets up one message at a time,
/// so a stream of small messages is bounded by the engines' setup rate, not the link.
/// Both setup times are [recon]: the document gives none; they are chosen from PCIe
/// round trips, and docs/results/sunway.md puts the resulting message rates beside the
/// document's 4 KB figure.
///
/// `pcie_round_trip` (off at 0) derives the DMA setup from the host interface instead:
/// document 003 says that a fast short message, whose descriptor and data the CPU writes
/// into the NIC by programmed I/O, saves "2 accesses across PCIe" (the descriptor fetch
/// and the data read), so a DMA message's engine time is the fast path's plus two PCIe
/// read round trips: `short_setup + 2 x pcie_round_trip`, which then replaces `setup`.
/// pcie-bench measured a 64-byte PCIe Gen3 DMA read (a descriptor's size) at a median of
/// 533 to 666 ns on Xeon E5 servers, 546 ns on the newest, a Broadwell E5-2630 v4, from
/// the NIC's own socket (Neugebauer et al., "Understanding PCIe performance for end host
/// networking", SIGCOMM 2018; data at github.com/pcie-bench/data, `lat_dma_sizes`); the
/// document gives no figure of its own.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct MessageCfg {
    /// Message engines per NIC.
    #[serde(default = "d_engines")]
    pub engines: u32,
    /// Messages in flight per engine; more wait for one to finish sending.
    #[serde(default = "d_in_flight")]
    pub in_flight: u32,
    /// Engine time to set up a DMA message before its first packet.
    #[serde(default = "d_setup", deserialize_with = "su::time")]
    pub setup: Time,
    /// Largest message on the programmed-I/O fast path.
    #[serde(default = "d_short_bytes", deserialize_with = "su::bytes")]
    pub short_bytes: u64,
    /// Engine time to set up a fast-path message.
    #[serde(default = "d_short_setup", deserialize_with = "su::time")]
    pub short_setup: Time,
    /// PCIe read round trip; when not 0, a DMA message's setup is `short_setup` plus two
    /// of them (descriptor and data, what the fast path saves) instead of `setup`.
    #[serde(default, deserialize_with = "su::time")]
    pub pcie_round_trip: Time,
}

fn d_engines() -> u32 {
    2
}
fn d_in_flight() -> u32 {
    256
}
fn d_setup() -> Time {
    500 * NS
}
fn d_short_bytes() -> u64 {
    128
}
fn d_short_setup() -> Time {
    150 * NS
}

impl Default for MessageCfg {
    fn default() -> Self {
        MessageCfg {
            engines: d_engines(),
            in_flight: d_in_flight(),
            setup: d_setup(),
            short_bytes: d_short_bytes(),
            short_setup: d_short_setup(),
            pcie_round_trip: 0,
        }
    }
}

/// Most message engines per NIC.
pub const MAX_ENGINES: u32 = 1024;
/// Most messages in flight per engine.
pub const MAX_IN_FLIGHT: u32 = 1 << 20;

impl MessageCfg {
    /// Checks the fields (names relative to `[transport.message]`).
    pub fn validate(&self) -> Result<(), ParamError> {
        // Each NIC keeps a slot per engine, and engines x in_flight messages must stay a
        // 32-bit count: the bounds are far above the Sunway NIC's 2 x 256.
        if !(1..=MAX_ENGINES).contains(&self.engines) {
            return Err(ParamError::new(
                "engines",
                format!(
                    "{}: a NIC has 1 to {MAX_ENGINES} message engines",
                    self.engines
                ),
            ));
        }
        if !(1..=MAX_IN_FLIGHT).contains(&self.in_flight) {
            return Err(ParamError::new(
                "in_flight",
                format!(
                    "{}: an engine keeps 1 to {MAX_IN_FLIGHT} messages in flight",
                    self.in_flight
                ),
            ));
        }
        Ok(())
    }

    /// Engine time to set up a message of `size` bytes (once per message).
    pub fn setup_of(&self, size: u64) -> Time {
        if size <= self.short_bytes {
            self.short_setup
        } else if self.pcie_round_trip > 0 {
            (self.short_setup).saturating_add(self.pcie_round_trip.saturating_mul(2))
        } else {
            self.setup
        }
    }
}

impl Described for MessageCfg {
    const ABOUT: &'static str = "the Sunway NIC's message engines (kind = \"message\")";
    fn params() -> Vec<Param> {
        vec![
            Param::plain("engines", d_engines(), "message engines per NIC"),
            Param::plain("in_flight", d_in_flight(), "messages in flight per engine"),
            Param::time(
                "setup",
                d_setup(),
                "engine time to set up a DMA message [recon]",
            ),
            Param::bytes(
                "short_bytes",
                d_short_bytes(),
                "largest message on the programmed-I/O fast path",
            ),
            Param::time(
                "short_setup",
                d_short_setup(),
                "engine time to set up a fast-path message [recon]",
            ),
            Param::time(
                "pcie_round_trip",
                0,
                "PCIe read round trip; not 0: a DMA message's setup is short_setup + 2 of \
                 them (descriptor, data), replacing setup",
            ),
        ]
    }
}

/// The NICs' message engines at run time: when each engine is free, and the messages
/// waiting for a place in flight.
#[derive(Clone, Debug, Default)]
pub struct Engines {
    /// Settings.
    pub cfg: MessageCfg,
    /// Per (NIC, engine): when it is free to set up the next message.
    pub free_at: Vec<Time>,
    /// Per NIC: messages waiting for a place in flight, in order.
    pub waiting: Vec<std::collections::VecDeque<u32>>,
}

impl Engines {
    /// Engines for `nics` NICs.
    pub fn new(cfg: MessageCfg, nics: usize) -> Engines {
        Engines {
            free_at: vec![0; nics * cfg.engines as usize],
            waiting: vec![Default::default(); nics],
            cfg,
        }
    }

    /// The most messages NIC may keep in flight.
    pub fn capacity(&self) -> usize {
        (self.cfg.engines * self.cfg.in_flight) as usize
    }

    /// NIC `h` takes a message of `size` bytes at `now`: the engine free first sets it
    /// up; returns when its first packet may leave.
    pub fn set_up(&mut self, h: u32, size: u64, now: Time) -> Time {
        let n = self.cfg.engines as usize;
        let mine = &mut self.free_at[h as usize * n..(h as usize + 1) * n];
        let (e, &free) = mine
            .iter()
            .enumerate()
            .min_by_key(|&(_, &t)| t)
            .expect("a NIC has engines");
        let ready = free.max(now) + self.cfg.setup_of(size);
        mine[e] = ready;
        ready
    }
}

/// The message transport.
#[derive(Clone, Debug)]
pub struct MessageTransport {
    /// New packets per acknowledgement of the in-order prefix.
    pub ack_every: u32,
}

/// Records bytes `[seq, end)` of `f` at the receiver; returns false if they had all
/// arrived before. `f.rcv_nxt` is the in-order prefix and `f.rx_early` the disjoint,
/// sorted ranges beyond it.
fn receive(f: &mut Flow, seq: u64, end: u64) -> bool {
    if end <= f.rcv_nxt {
        return false;
    }
    if seq <= f.rcv_nxt {
        f.rcv_nxt = end;
        // Ranges that arrived early and now touch the prefix join it.
        if let Some(early) = f.rx_early.as_mut() {
            let n = early.iter().take_while(|r| r.0 <= f.rcv_nxt).count();
            if n > 0 {
                f.rcv_nxt = f.rcv_nxt.max(early[n - 1].1);
                early.drain(..n);
            }
        }
        return true;
    }
    let early = f
        .rx_early
        .get_or_insert_with(|| Box::new(Vec::with_capacity(4)));
    // The first range that ends at or after seq; merge every range that touches [seq, end).
    let i = early.partition_point(|r| r.1 < seq);
    let mut j = i;
    let (mut lo, mut hi) = (seq, end);
    while j < early.len() && early[j].0 <= end {
        if early[j].0 <= seq && early[j].1 >= end {
            return false;
        }
        lo = lo.min(early[j].0);
        hi = hi.max(early[j].1);
        j += 1;
    }
    early.splice(i..j, [(lo, hi)]);
    true
}

impl NicTransport for MessageTransport {
    #[inline]
    fn on_data(&self, f: &mut Flow, seq: u64, bytes: u32) -> RxOutcome {
        let size = f.spec.size;
        f.out_of_order_pkts += (seq > f.rcv_nxt) as u64;
        let new = receive(f, seq, seq + bytes as u64);
        let done = f.rcv_nxt >= size;
        if new {
            f.unacked_pkts += 1;
        }
        let reply =
            if done && (new || f.finish.is_some()) || new && f.unacked_pkts >= self.ack_every {
                f.unacked_pkts = 0;
                RxReply::Ack(f.rcv_nxt)
            } else {
                RxReply::Nothing
            };
        RxOutcome {
            reply,
            in_order: new,
            completed: new && done && f.finish.is_none(),
        }
    }

    #[inline]
    fn on_cumulative_ack(&self, f: &mut Flow, seq: u64) -> u64 {
        if seq <= f.snd_una {
            return 0;
        }
        let newly = seq - f.snd_una;
        f.snd_una = seq;
        f.snd_nxt = f.snd_nxt.max(seq);
        newly
    }

    #[inline]
    fn on_nack(&self, _f: &mut Flow, _seq: u64) -> bool {
        false
    }

    #[inline]
    fn on_timeout(&self, f: &mut Flow) -> bool {
        if f.snd_una < f.spec.size {
            f.snd_nxt = f.snd_una;
            f.timeouts += 1;
            true
        } else {
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::cc::line_rate::LineRate;
    use crate::model::cc::AnyCc;
    use crate::model::workload::FlowSpec;

    fn flow(size: u64) -> Flow {
        let spec = FlowSpec {
            src: 0,
            dst: 1,
            size,
            start: 0,
        };
        Flow::new(spec, 0, 0, AnyCc::LineRate(LineRate { bps: 1e11 }))
    }

    #[test]
    fn a_message_completes_when_every_byte_arrived_in_any_order() {
        let t = MessageTransport { ack_every: 100 };
        let mut f = flow(5000);
        // 1000-byte packets in the order 3, 0, 4, 2, 1.
        let order = [3u64, 0, 4, 2, 1];
        for (i, &k) in order.iter().enumerate() {
            let rx = t.on_data(&mut f, k * 1000, 1000);
            assert!(rx.in_order, "packet {k} is new");
            let last = i == order.len() - 1;
            assert_eq!(rx.completed, last);
            assert_eq!(
                rx.reply,
                if last {
                    RxReply::Ack(5000)
                } else {
                    RxReply::Nothing
                }
            );
        }
        assert_eq!(f.rcv_nxt, 5000);
        assert!(f.rx_early.as_ref().is_none_or(|e| e.is_empty()));
    }

    #[test]
    fn copies_are_dropped_and_a_complete_message_is_acknowledged_again() {
        let t = MessageTransport { ack_every: 100 };
        let mut f = flow(3000);
        assert!(t.on_data(&mut f, 2000, 1000).in_order);
        assert!(
            !t.on_data(&mut f, 2000, 1000).in_order,
            "a copy of an early packet"
        );
        assert!(t.on_data(&mut f, 0, 1000).in_order);
        assert!(
            !t.on_data(&mut f, 0, 1000).in_order,
            "a copy inside the prefix"
        );
        let rx = t.on_data(&mut f, 1000, 1000);
        assert!(rx.completed);
        f.finish = Some(1);
        let again = t.on_data(&mut f, 1000, 1000);
        assert_eq!((again.in_order, again.completed), (false, false));
        assert_eq!(again.reply, RxReply::Ack(3000));
    }

    #[test]
    fn the_prefix_is_acknowledged_every_n_new_packets() {
        let t = MessageTransport { ack_every: 2 };
        let mut f = flow(5000);
        assert_eq!(t.on_data(&mut f, 1000, 1000).reply, RxReply::Nothing);
        // Second new packet: the prefix (2000, with the early range joined).
        assert_eq!(t.on_data(&mut f, 0, 1000).reply, RxReply::Ack(2000));
        assert_eq!(t.on_data(&mut f, 0, 1000).reply, RxReply::Nothing, "a copy");
        assert_eq!(t.on_data(&mut f, 3000, 1000).reply, RxReply::Nothing);
        assert_eq!(t.on_data(&mut f, 4000, 1000).reply, RxReply::Ack(2000));
        assert_eq!(t.on_data(&mut f, 2000, 1000).reply, RxReply::Ack(5000));
    }

    #[test]
    fn pcie_round_trips_replace_the_dma_setup_and_spare_the_fast_path() {
        let mut cfg = MessageCfg::default();
        assert_eq!(cfg.setup_of(4096), cfg.setup, "off: the plain setup");
        cfg.pcie_round_trip = 500 * NS;
        assert_eq!(cfg.setup_of(4096), cfg.short_setup + 1000 * NS);
        assert_eq!(cfg.setup_of(cfg.short_bytes), cfg.short_setup);
    }

    #[test]
    fn early_ranges_merge_and_join_the_prefix() {
        let mut f = flow(10_000);
        for k in [2u64, 4, 6, 3, 5] {
            assert!(receive(&mut f, k * 1000, k * 1000 + 1000));
        }
        assert_eq!(**f.rx_early.as_ref().unwrap(), vec![(2000, 7000)]);
        assert!(receive(&mut f, 0, 1000));
        assert_eq!(f.rcv_nxt, 1000);
        assert!(receive(&mut f, 1000, 2000));
        assert_eq!(f.rcv_nxt, 7000);
        assert!(f.rx_early.as_ref().unwrap().is_empty());
    }

    #[test]
    fn a_timeout_sends_again_from_the_acknowledged_prefix() {
        let t = MessageTransport { ack_every: 1 };
        let mut f = flow(4000);
        f.snd_nxt = 4000;
        assert!(t.on_timeout(&mut f));
        assert_eq!((f.snd_nxt, f.timeouts), (0, 1));
        f.snd_nxt = 4000;
        assert_eq!(t.on_cumulative_ack(&mut f, 1000), 1000);
        assert!(t.on_timeout(&mut f));
        assert_eq!(f.snd_nxt, 1000);
        assert_eq!(t.on_cumulative_ack(&mut f, 4000), 3000);
        assert!(!t.on_timeout(&mut f));
        assert!(!t.on_nack(&mut f, 0));
    }
}
