//! NCCL-like channel windows (document 001): at most `buffer` bytes in flight per channel.
//!
//! A collective library moves a channel's data through a staging buffer at the receiver
//! of `buffer` bytes in `slots` slots of `chunk` bytes. The sender puts a chunk on the
//! wire only into a free slot; the receiver frees the slot once the chunk has arrived and
//! tells the sender (NCCL: an RDMA write of the new head pointer), which learns it one
//! one-way delay later. So at most `slots` chunks of a (channel, sender, receiver) are in
//! flight, and the channel's throughput is at most `slots * chunk / RTT`. NCCL sizes the
//! slots by what the pair carries ([`WindowTraffic`]): a collective's buffer is 4 MiB in
//! 8 slots of 512 KiB, about 28 Gbit/s per channel over 120 km (RTT about 1.2 ms); a
//! point-to-point connection (a send/receive, a pipeline's activations) holds 8 chunks of
//! 128 KiB, 1 MiB, about 7 Gbit/s: which is why document 001 finds every message above
//! 1 MB paying at least one extra round trip.
//!
//! Here that mechanism is built from the transfers themselves, after the collective's
//! pattern is known ([`apply`]):
//! - every transfer is cut into chunk-sized pieces, sent on its queue pair in order;
//! - a "starts after" edge of the pattern (`b` before `a`) becomes piece-wise edges
//!   (piece `p` of `a` after piece `p` of `b`; extra pieces of `a` after `b`'s last), so
//!   steps still pipeline chunk by chunk as NCCL's do;
//! - on each queue pair, piece `i` (counting across the steps that share the pair) waits
//!   for the slot credit of piece `i - slots`: a [`CREDIT_BYTES`] transfer from the
//!   receiver back to the sender that starts when piece `i - slots` has been received;
//! - a queue pair sends its pieces one after another, as an RDMA queue pair executes its
//!   work requests in order (and NCCL posts one chunk after the other): piece `i` may
//!   start once piece `i - 1` has put its last byte on the wire (a `Sent` edge), so the
//!   first chunk of a window arrives after one chunk's serialization, not after the
//!   whole window's.
//!
//! The credit is a real packet, so the slot is freed after the real reverse path's
//! latency (fiber, switches, queues), not after an assumed RTT. Credit transfers are part
//! of the job (they appear in `flows.csv` with `size` = [`CREDIT_BYTES`]).

use super::collective::{Dag, Transfer};
use crate::base::param::{Described, Param, ParamError};
use crate::base::units::serde_units as su;
use serde::Deserialize;
use std::collections::HashMap;

/// Bytes of a slot credit (NCCL writes an 8-byte head pointer).
pub const CREDIT_BYTES: u64 = 8;

/// Slots per buffer, NCCL_STEPS (8: Hu et al., "Demystifying NCCL", arXiv 2507.04786).
pub const NCCL_STEPS: u64 = 8;

/// A collective's staging buffer per channel and peer, NCCL_BUFFSIZE (4 MiB, NCCL's
/// environment variable documentation), in [`NCCL_STEPS`] slots of 512 KiB.
pub const NCCL_BUFFSIZE: u64 = 4 << 20;

/// The piece a point-to-point operation (ncclSend/ncclRecv) puts on the network,
/// NCCL_P2P_NET_CHUNKSIZE (128 KiB, NCCL's environment variable documentation,
/// docs.nvidia.com/deeplearning/nccl/user-guide/docs/env.html); its connection holds
/// [`NCCL_STEPS`] of them in flight, 1 MiB.
pub const NCCL_P2P_NET_CHUNKSIZE: u64 = 128 << 10;

/// What a window's queue pairs carry: NCCL sizes the slots of a collective's buffer and
/// of a point-to-point connection differently.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WindowTraffic {
    /// A collective's steps: `buffer` NCCL_BUFFSIZE in slots of buffer / NCCL_STEPS.
    Collective,
    /// Send/receive (p2p, a pipeline's activations): NCCL_STEPS slots of
    /// NCCL_P2P_NET_CHUNKSIZE.
    PointToPoint,
}

/// `window = { ... }` of a collective or training workload: the NCCL-like channel
/// buffer. A field left out takes NCCL's default for the traffic it carries
/// ([`WindowCfg::resolve`]).
#[derive(Clone, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct WindowCfg {
    /// Staging buffer per channel and peer (NCCL's `NCCL_BUFFSIZE`).
    #[serde(default, deserialize_with = "su::opt_bytes")]
    pub buffer: Option<u64>,
    /// Bytes per slot: the size of the pieces a transfer is cut into.
    #[serde(default, deserialize_with = "su::opt_bytes")]
    pub chunk: Option<u64>,
    /// Slots per buffer (NCCL_STEPS); at most `buffer / chunk`. Default `buffer / chunk`.
    #[serde(default)]
    pub slots: Option<u64>,
}

/// A window with every field known: what [`apply`] cuts transfers by.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Window {
    /// Staging buffer per channel and peer, bytes.
    pub buffer: u64,
    /// Bytes per slot (the piece size).
    pub chunk: u64,
    /// Chunks in flight per queue pair.
    pub slots: u64,
}

impl WindowCfg {
    /// NCCL's window for `traffic`, the fields given kept: a collective's buffer
    /// NCCL_BUFFSIZE in 512 KiB slots; a point-to-point connection NCCL_STEPS slots of
    /// NCCL_P2P_NET_CHUNKSIZE (with a `chunk` given, NCCL_STEPS of it), which is why
    /// document 001 finds every send over 1 MB per channel paying a round trip.
    /// Not checked: see [`Self::validate`].
    pub fn resolve(&self, traffic: WindowTraffic) -> Window {
        let (buffer, chunk) = match traffic {
            WindowTraffic::Collective => (
                self.buffer.unwrap_or(NCCL_BUFFSIZE),
                self.chunk.unwrap_or(NCCL_BUFFSIZE / NCCL_STEPS),
            ),
            WindowTraffic::PointToPoint => {
                let chunk = self.chunk.unwrap_or(NCCL_P2P_NET_CHUNKSIZE);
                (
                    self.buffer
                        .unwrap_or_else(|| chunk.saturating_mul(NCCL_STEPS)),
                    chunk,
                )
            }
        };
        Window {
            buffer,
            chunk,
            slots: self.slots.unwrap_or(buffer / chunk.max(1)),
        }
    }

    /// Checks the fields as resolved for `traffic` (names relative to the `window`
    /// table).
    pub fn validate(&self, traffic: WindowTraffic) -> Result<Window, ParamError> {
        let w = self.resolve(traffic);
        if w.chunk == 0 {
            return Err(ParamError::new("chunk", "must be at least 1 byte"));
        }
        if w.buffer < w.chunk {
            return Err(ParamError::new(
                "buffer",
                format!(
                    "{} bytes cannot hold one chunk of {} bytes: buffer must be at least chunk",
                    w.buffer, w.chunk
                ),
            ));
        }
        let max = w.buffer / w.chunk;
        match self.slots {
            Some(0) => Err(ParamError::new("slots", "must be at least 1")),
            Some(s) if s > max => Err(ParamError::new(
                "slots",
                format!(
                    "{s} slots of {} bytes do not fit in a buffer of {} bytes: at most buffer / chunk = {max}",
                    w.chunk, w.buffer
                ),
            )),
            _ => Ok(w),
        }
    }
}

impl Described for WindowCfg {
    const ABOUT: &'static str =
        "NCCL-like channel window: at most `slots` chunks in flight per queue pair";
    fn params() -> Vec<Param> {
        vec![
            Param::unset(
                "buffer",
                "staging buffer per channel and peer; default 4 MiB (NCCL_BUFFSIZE) for collectives, 8 chunks for send/receive",
            ),
            Param::unset(
                "chunk",
                "bytes per slot (the piece size); default 512 KiB for collectives, 128 KiB (NCCL_P2P_NET_CHUNKSIZE) for send/receive",
            ),
            Param::unset(
                "slots",
                "slots per buffer (at most buffer / chunk); default buffer / chunk",
            ),
        ]
    }
}

/// The queue pair a transfer travels on.
fn pair(t: &Transfer) -> (u32, u32, u32) {
    (t.channel, t.src, t.dst)
}

/// Rewrites `dag` under window `w` (see the module doc). Transfers keep their order of
/// issue per queue pair; the returned graph's transfers are the pieces, then the credits.
/// Also returns the pieces of each of `dag`'s transfers, in order. The caller must issue
/// the transfers of a queue pair in an order their dependencies allow (a transfer never
/// waits for a later one of its pair), or the in-order `Sent` edges close a cycle.
pub fn apply(dag: &Dag, w: &Window) -> (Dag, Vec<Vec<u32>>) {
    let slots = w.slots as usize;
    let mut out = Dag::default();
    // Pieces of each original transfer, in order.
    let mut pieces: Vec<Vec<u32>> = Vec::with_capacity(dag.transfers.len());
    // Pieces of each queue pair, in issue order (transfer order, then piece order).
    let mut on_pair: HashMap<(u32, u32, u32), Vec<u32>> = HashMap::new();
    let mut pair_order: Vec<(u32, u32, u32)> = Vec::new();
    for t in &dag.transfers {
        let n = t.size.div_ceil(w.chunk).max(1);
        let mut ids = Vec::with_capacity(n as usize);
        for k in 0..n {
            let size = if k + 1 < n {
                w.chunk
            } else {
                t.size - w.chunk * (n - 1)
            };
            out.transfers.push(Transfer {
                size: size.max(1),
                ..*t
            });
            ids.push((out.transfers.len() - 1) as u32);
        }
        let list = on_pair.entry(pair(t)).or_insert_with(|| {
            pair_order.push(pair(t));
            Vec::new()
        });
        list.extend(&ids);
        pieces.push(ids);
    }
    debug_assert!(dag.sent.is_empty(), "a window is applied once");
    for &(b, a) in &dag.edges {
        let (pb, pa) = (&pieces[b as usize], &pieces[a as usize]);
        for (p, &after) in pa.iter().enumerate() {
            let before = pb[p.min(pb.len() - 1)];
            out.edges.push((before, after));
        }
    }
    for key in pair_order {
        let list = &on_pair[&key];
        out.sent.extend(list.windows(2).map(|p| (p[0], p[1])));
        for i in slots..list.len() {
            let freed = out.transfers[list[i - slots] as usize];
            out.transfers.push(Transfer {
                src: freed.dst,
                dst: freed.src,
                size: CREDIT_BYTES,
                channel: freed.channel,
            });
            let credit = (out.transfers.len() - 1) as u32;
            out.edges.push((list[i - slots], credit));
            out.edges.push((credit, list[i]));
        }
    }
    (out, pieces)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(src: u32, dst: u32, size: u64) -> Transfer {
        Transfer {
            src,
            dst,
            size,
            channel: 0,
        }
    }

    #[test]
    fn nccl_defaults_are_4mib_in_8_slots_for_collectives_and_8_chunks_of_128kib_for_send_receive() {
        let w = WindowCfg::default();
        let c = w.validate(WindowTraffic::Collective).unwrap();
        assert_eq!((c.buffer, c.chunk, c.slots), (4 << 20, 512 << 10, 8));
        let p = w.validate(WindowTraffic::PointToPoint).unwrap();
        assert_eq!((p.buffer, p.chunk, p.slots), (1 << 20, 128 << 10, 8));
        // A chunk given: NCCL_STEPS of it in flight (the p2p buffer follows the chunk).
        let tuned = WindowCfg {
            chunk: Some(512 << 10),
            ..WindowCfg::default()
        };
        let p = tuned.validate(WindowTraffic::PointToPoint).unwrap();
        assert_eq!((p.buffer, p.chunk, p.slots), (4 << 20, 512 << 10, 8));
        // Fields given are kept for either traffic.
        let given = WindowCfg {
            buffer: Some(64 << 20),
            chunk: Some(4 << 20),
            slots: Some(16),
        };
        for t in [WindowTraffic::Collective, WindowTraffic::PointToPoint] {
            let w = given.validate(t).unwrap();
            assert_eq!((w.buffer, w.chunk, w.slots), (64 << 20, 4 << 20, 16));
        }
    }

    #[test]
    fn a_transfer_is_cut_into_chunks_and_every_chunk_beyond_the_window_waits_for_a_credit() {
        let dag = Dag {
            transfers: vec![t(0, 1, 10_500)],
            ..Default::default()
        };
        let w = Window {
            buffer: 3000,
            chunk: 1000,
            slots: 2,
        };
        let (out, pieces) = apply(&dag, &w);
        assert_eq!(pieces, vec![(0..11).collect::<Vec<u32>>()]);
        // One after the other on their queue pair.
        assert_eq!(out.sent, (0..10).map(|k| (k, k + 1)).collect::<Vec<_>>());
        // 11 pieces (10 of 1000, one of 500), then 9 credits.
        let data: Vec<u64> = out.transfers[..11].iter().map(|t| t.size).collect();
        assert_eq!(data.iter().sum::<u64>(), 10_500);
        assert_eq!(data[10], 500);
        assert_eq!(out.transfers.len(), 11 + 9);
        for (k, c) in out.transfers[11..].iter().enumerate() {
            assert_eq!((c.src, c.dst, c.size), (1, 0, CREDIT_BYTES));
            let credit = 11 + k as u32;
            // The credit of piece k starts after piece k and releases piece k + 2.
            assert!(out.edges.contains(&(k as u32, credit)));
            assert!(out.edges.contains(&(credit, k as u32 + 2)));
        }
        assert_eq!(out.edges.len(), 2 * 9);
    }

    #[test]
    fn steps_pipeline_piece_by_piece_and_share_the_pairs_window() {
        // Two steps on one pair (0 -> 1), the second after the first (a ring of 2).
        let dag = Dag {
            transfers: vec![t(0, 1, 2000), t(0, 1, 3000)],
            edges: vec![(0, 1)],
            ..Default::default()
        };
        let w = Window {
            buffer: 4000,
            chunk: 1000,
            slots: 4,
        };
        let (out, pieces) = apply(&dag, &w);
        assert_eq!(pieces, vec![vec![0, 1], vec![2, 3, 4]]);
        // The pair's five pieces leave in issue order, across the two steps.
        assert_eq!(out.sent, vec![(0, 1), (1, 2), (2, 3), (3, 4)]);
        // Pieces 0-1 (step 1), 2-4 (step 2), then one credit (piece 4 waits for piece 0).
        assert_eq!(out.transfers.len(), 5 + 1);
        assert!(out.edges.contains(&(0, 2)) && out.edges.contains(&(1, 3)));
        assert!(
            out.edges.contains(&(1, 4)),
            "extra pieces wait for the last"
        );
        assert!(out.edges.contains(&(0, 5)) && out.edges.contains(&(5, 4)));
    }

    #[test]
    fn bad_windows_name_the_field() {
        let bad = |w: WindowCfg| {
            w.validate(WindowTraffic::Collective)
                .unwrap_err()
                .to_string()
        };
        let w = |buffer, chunk, slots| WindowCfg {
            buffer: Some(buffer),
            chunk: Some(chunk),
            slots,
        };
        assert!(bad(w(4096, 0, None)).contains("chunk"));
        assert!(bad(w(1000, 4096, None)).contains("buffer"));
        assert!(bad(w(4096, 1024, Some(5))).contains("at most buffer / chunk = 4"));
        assert!(bad(w(4096, 1024, Some(0))).contains("slots"));
    }
}
