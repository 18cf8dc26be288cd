//! PKTC, the packet container (document 000): the source GSP's load balancer.
//!
//! For each (source GSP, destination egress port) the source keeps the current container
//! number and the payload bytes it holds. A packet that does not fit the remaining bytes
//! opens the next container. Every packet of a container leaves on the uplink chosen when
//! the container opened, so a container's packets stay in order (one path, FIFO queues);
//! successive containers go to the best uplink. Containers are logical: nothing waits to
//! fill one. Each packet carries (container, index in container, packet count of the
//! previous container), from which the destination GSP restores order.

use crate::model::routing::{LbAlgorithm, LbEntry};

/// `pktc`, the load balancer that turns GSE on (settings in `[fabric.gse]`).
pub static LB_ENTRY: LbEntry = LbEntry {
    name: "pktc",
    about: "GSE packet containers: per container at the source GSP, reordered at the destination",
    algorithm: LbAlgorithm::Pktc,
};

/// PKTC between switches: a container's packets carry the container's hash, so ECMP on
/// it keeps them together (the GSPs choose the uplinks themselves, see `gse/gsp.rs`).
pub struct Pktc;

impl crate::model::routing::LoadBalancer for Pktc {
    #[inline(always)]
    fn pick(&self, hash: u32, n: usize, sw: crate::model::routing::LbState<'_>) -> usize {
        crate::model::routing::ecmp::pick(hash, sw.salt, n)
    }
}

pub use crate::kernel::packet::Tag;

/// Container state of one (source GSP, destination) stream.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TxStream {
    /// Current container.
    pub cont: u32,
    /// Payload bytes in it.
    pub used: u64,
    /// Packets in it.
    pub count: u16,
    /// Packets in the previous container.
    pub prev: u16,
    /// Uplink port of the current container (`None` before the first).
    pub uplink: Option<crate::base::ids::PortId>,
    /// Containers opened.
    pub opened: u64,
}

impl TxStream {
    /// Places a packet of `payload` bytes. Returns its tag and whether it opened a new
    /// container (the caller then picks the container's uplink). `force_new` opens a
    /// container regardless (DGSQ: one container per grant).
    pub fn assign(&mut self, payload: u64, container: u64, force_new: bool) -> (Tag, bool) {
        let open = self.count == 0
            || force_new
            || self.used + payload > container
            || self.count == u16::MAX;
        if open && self.count > 0 {
            self.prev = self.count;
            self.cont = self.cont.wrapping_add(1);
            self.used = 0;
            self.count = 0;
        }
        if open {
            self.opened += 1;
        }
        let tag = Tag {
            cont: self.cont,
            idx: self.count,
            prev: self.prev,
        };
        self.used += payload;
        self.count += 1;
        (tag, open)
    }
}

/// The best uplink: least queued bytes, ties broken round robin from `*rr`.
/// `queued(k)` gives the bytes queued on candidate `k` of `n`.
pub fn best_uplink(n: usize, rr: &mut u32, queued: impl Fn(usize) -> u64) -> usize {
    debug_assert!(n > 0);
    let start = *rr as usize % n;
    let mut best = start;
    let mut best_q = queued(start);
    for j in 1..n {
        let k = (start + j) % n;
        let q = queued(k);
        if q < best_q {
            best = k;
            best_q = q;
        }
    }
    *rr = (best + 1) as u32;
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn four_4k_packets_fill_a_16k_container() {
        let mut s = TxStream::default();
        let mut tags = Vec::new();
        for _ in 0..9 {
            tags.push(s.assign(4096, 16384, false));
        }
        let opens: Vec<bool> = tags.iter().map(|t| t.1).collect();
        assert_eq!(
            opens,
            vec![true, false, false, false, true, false, false, false, true]
        );
        assert_eq!(
            tags[3].0,
            Tag {
                cont: 0,
                idx: 3,
                prev: 0
            }
        );
        assert_eq!(
            tags[4].0,
            Tag {
                cont: 1,
                idx: 0,
                prev: 4
            }
        );
        assert_eq!(
            tags[8].0,
            Tag {
                cont: 2,
                idx: 0,
                prev: 4
            }
        );
        assert_eq!(s.opened, 3);
    }

    #[test]
    fn a_packet_that_does_not_fit_opens_the_next_container() {
        let mut s = TxStream::default();
        s.assign(10_000, 16384, false);
        let (t, open) = s.assign(10_000, 16384, false);
        assert!(open);
        assert_eq!(
            t,
            Tag {
                cont: 1,
                idx: 0,
                prev: 1
            }
        );
        let (t, open) = s.assign(100, 16384, true);
        assert!(open);
        assert_eq!(t.cont, 2);
    }

    #[test]
    fn best_uplink_takes_the_least_queued_and_rotates_ties() {
        let mut rr = 0;
        let q = [5u64, 3, 3, 9];
        assert_eq!(best_uplink(4, &mut rr, |k| q[k]), 1);
        assert_eq!(best_uplink(4, &mut rr, |k| q[k]), 2);
        assert_eq!(best_uplink(4, &mut rr, |k| q[k]), 1);
        let z = [0u64; 3];
        let picks: Vec<usize> = (0..6).map(|_| best_uplink(3, &mut rr, |k| z[k])).collect();
        let mut counts = [0; 3];
        for p in picks {
            counts[p] += 1;
        }
        assert_eq!(counts, [2, 2, 2]);
    }
}
