//! Reordering at the destination GSP (document 000): packets of one (source GSP,
//! destination) stream are delivered to the NIC in container order.
//!
//! Within a container packets arrive in order (one path); containers may overtake each
//! other. The next deliverable packet is either the next one of the current container or
//! the first of the next container, provided that one says the current container had as
//! many packets as were delivered. Anything else waits in the buffer. If the head of the
//! stream is missing for longer than a timeout (a packet was dropped in a lossy fabric),
//! the stream skips to the earliest packet it holds; the RDMA transport then recovers
//! the loss end to end.

use super::pktc::Tag;
use crate::base::units::Time;
use crate::kernel::packet::Desc;

/// A packet waiting in a reorder buffer.
#[derive(Clone, Copy, Debug)]
pub struct Held {
    /// Its container tag.
    pub tag: Tag,
    /// The packet.
    pub desc: Desc,
    /// When it arrived.
    pub since: Time,
}

/// Reorder state of one (source GSP, destination) stream.
#[derive(Clone, Debug, Default)]
pub struct RxStream {
    /// Container expected.
    pub exp_cont: u32,
    /// Packets of it delivered so far.
    pub exp_idx: u16,
    /// Out-of-order packets.
    pub held: Vec<Held>,
    /// Bytes held.
    pub bytes: u64,
    /// A timeout check is scheduled.
    pub timer: bool,
    /// When the head of the stream started waiting (the oldest held packet's arrival).
    pub blocked_since: Time,
}

impl RxStream {
    /// True if a packet with `tag` is next in order.
    pub fn is_next(&self, tag: Tag) -> bool {
        (tag.cont == self.exp_cont && tag.idx == self.exp_idx)
            || (tag.cont == self.exp_cont.wrapping_add(1)
                && tag.idx == 0
                && tag.prev == self.exp_idx)
    }

    /// True if `tag` is behind the stream's position (it was skipped over): deliver it at
    /// once, the transport sorts it out.
    pub fn is_stale(&self, tag: Tag) -> bool {
        let d = tag.cont.wrapping_sub(self.exp_cont) as i32;
        d < 0 || (d == 0 && tag.idx < self.exp_idx)
    }

    /// Records the delivery of `tag` (which must be next, or the skip target).
    pub fn advance(&mut self, tag: Tag) {
        self.exp_cont = tag.cont;
        self.exp_idx = tag.idx + 1;
    }

    /// Holds an out-of-order packet.
    pub fn hold(&mut self, h: Held) {
        if self.held.is_empty() {
            self.blocked_since = h.since;
        }
        self.bytes += h.desc.wire() as u64;
        self.held.push(h);
    }

    /// Takes the held packet that is next in order, if any.
    pub fn take_next(&mut self) -> Option<Held> {
        let i = self.held.iter().position(|h| self.is_next(h.tag))?;
        let h = self.held.swap_remove(i);
        self.bytes -= h.desc.wire() as u64;
        self.advance(h.tag);
        if let Some(t) = self.held.iter().map(|h| h.since).min() {
            self.blocked_since = t;
        }
        Some(h)
    }

    /// Gives up on the missing head: takes the earliest held packet in stream order and
    /// moves the stream to it.
    pub fn skip(&mut self) -> Option<Held> {
        let base = self.exp_cont;
        let i = (0..self.held.len()).min_by_key(|&i| {
            let t = self.held[i].tag;
            (t.cont.wrapping_sub(base), t.idx)
        })?;
        let h = self.held.swap_remove(i);
        self.bytes -= h.desc.wire() as u64;
        self.advance(h.tag);
        if let Some(t) = self.held.iter().map(|h| h.since).min() {
            self.blocked_since = t;
        }
        Some(h)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::packet::PacketKind;

    fn held(cont: u32, idx: u16, prev: u16, t: Time) -> Held {
        Held {
            tag: Tag { cont, idx, prev },
            desc: Desc::for_test(cont * 100 + idx as u32, PacketKind::Data, 3, 1000),
            since: t,
        }
    }

    /// Feeds packets in the given arrival order and returns delivery order.
    fn run(arrivals: &[(u32, u16, u16)]) -> Vec<(u32, u16)> {
        let mut s = RxStream::default();
        let mut out = Vec::new();
        for (i, &(c, k, p)) in arrivals.iter().enumerate() {
            let h = held(c, k, p, i as Time);
            if s.is_next(h.tag) {
                s.advance(h.tag);
                out.push((c, k));
                while let Some(n) = s.take_next() {
                    out.push((n.tag.cont, n.tag.idx));
                }
            } else {
                s.hold(h);
            }
        }
        assert!(s.held.is_empty());
        assert_eq!(s.bytes, 0);
        out
    }

    #[test]
    fn containers_overtaking_each_other_are_put_back_in_order() {
        // Container 0 has 3 packets, container 1 has 2, container 2 has 1; container 1
        // arrives first, then 2, then 0.
        let got = run(&[
            (1, 0, 3),
            (1, 1, 3),
            (2, 0, 2),
            (0, 0, 0),
            (0, 1, 0),
            (0, 2, 0),
        ]);
        assert_eq!(got, vec![(0, 0), (0, 1), (0, 2), (1, 0), (1, 1), (2, 0)]);
    }

    #[test]
    fn the_next_container_waits_until_the_current_one_is_complete() {
        let mut s = RxStream::default();
        s.advance(Tag {
            cont: 0,
            idx: 0,
            prev: 0,
        });
        // Container 0 had 2 packets; only one was delivered.
        assert!(!s.is_next(Tag {
            cont: 1,
            idx: 0,
            prev: 2
        }));
        assert!(s.is_next(Tag {
            cont: 0,
            idx: 1,
            prev: 0
        }));
        s.advance(Tag {
            cont: 0,
            idx: 1,
            prev: 0,
        });
        assert!(s.is_next(Tag {
            cont: 1,
            idx: 0,
            prev: 2
        }));
    }

    #[test]
    fn skip_moves_past_a_lost_packet() {
        let mut s = RxStream::default();
        s.advance(Tag {
            cont: 0,
            idx: 0,
            prev: 0,
        });
        // (0,1) is lost; (1,0) says container 0 had 2 packets; (1,1) follows.
        s.hold(held(1, 1, 2, 10));
        s.hold(held(1, 0, 2, 11));
        assert!(s.take_next().is_none());
        assert_eq!(s.blocked_since, 10);
        let h = s.skip().expect("something held");
        assert_eq!((h.tag.cont, h.tag.idx), (1, 0));
        let h = s.take_next().expect("then in order");
        assert_eq!((h.tag.cont, h.tag.idx), (1, 1));
        assert!(s.is_stale(Tag {
            cont: 0,
            idx: 1,
            prev: 0
        }));
        assert!(!s.is_stale(Tag {
            cont: 1,
            idx: 2,
            prev: 0
        }));
    }
}
