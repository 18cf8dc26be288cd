//! DGSQ, the dynamic global scheduling queue (document 000): request/grant scheduling
//! of containers toward every destination egress port.
//!
//! The source GSP keeps a virtual output queue per destination port (here: per
//! destination NIC, whose leaf downlink is that port). Bytes entering the VOQ are
//! requested from the scheduler of the destination port with REQUEST packets; the
//! scheduler answers with GRANTs of one container each, round robin over the GSPs that
//! have requested bytes outstanding, paced so that the granted bytes never exceed
//! (1 - eps) of the port's rate. A source sends a container only against a grant, so no
//! more traffic heads for a port than it can take and the fabric never builds an incast
//! queue. REQUESTs and GRANTs are real packets at the control priority.
//!
//! Requests are batched: a VOQ asks for its bytes when it had nothing outstanding or
//! when a container's worth has accumulated, and after every grant for what arrived
//! meanwhile.

use std::collections::VecDeque;

use crate::base::units::Time;
use crate::kernel::packet::Desc;

/// The VOQ of one (source GSP, destination) stream.
#[derive(Clone, Debug, Default)]
pub struct Voq {
    /// Packets waiting for a grant, in arrival order.
    pub q: VecDeque<Desc>,
    /// Payload bytes waiting.
    pub bytes: u64,
    /// Payload bytes that arrived since the last request.
    pub unrequested: u64,
    /// Requested payload bytes not yet granted.
    pub outstanding: u64,
    /// Granted payload bytes not yet used (negative: the last packet overdrew).
    pub credit: i64,
    /// Most payload bytes ever waiting.
    pub max_bytes: u64,
}

impl Voq {
    /// Queues a packet; returns the bytes to request now (0: none).
    pub fn push(&mut self, d: Desc, payload: u64, container: u64) -> u64 {
        self.q.push_back(d);
        self.bytes += payload;
        self.max_bytes = self.max_bytes.max(self.bytes);
        self.unrequested += payload;
        self.request_due(container)
    }

    /// Bytes to request now, if a request is due.
    pub fn request_due(&mut self, container: u64) -> u64 {
        if self.unrequested > 0 && (self.outstanding == 0 || self.unrequested >= container) {
            let r = self.unrequested;
            self.outstanding += r;
            self.unrequested = 0;
            r
        } else {
            0
        }
    }

    /// A grant of `bytes` arrived.
    pub fn grant(&mut self, bytes: u64) {
        self.outstanding = self.outstanding.saturating_sub(bytes);
        self.credit += bytes as i64;
    }

    /// The next packet the credit allows, if any (`payload` gives a packet's payload).
    pub fn release(&mut self, payload: impl Fn(&Desc) -> u64) -> Option<Desc> {
        if self.credit <= 0 {
            return None;
        }
        let d = self.q.pop_front()?;
        let p = payload(&d);
        self.bytes -= p;
        self.credit -= p as i64;
        if self.q.is_empty() && self.credit > 0 {
            // Credit is for bytes that were requested; with nothing left to send it
            // lapses (the packets it was for left on an earlier overdraft).
            self.credit = 0;
        }
        Some(d)
    }
}

/// The grant scheduler of one destination port.
#[derive(Clone, Debug, Default)]
pub struct Scheduler {
    /// Requested, not yet granted payload bytes per source GSP.
    pub pending: Vec<u64>,
    /// Round-robin position.
    pub rr: usize,
    /// Earliest time of the next grant (pacing).
    pub next_grant: Time,
    /// A grant event is scheduled.
    pub timer: bool,
    /// Grants issued.
    pub grants: u64,
    /// Payload bytes granted.
    pub granted: u64,
    /// Time of the first grant.
    pub first_at: Option<Time>,
    /// Time of the last grant.
    pub last_at: Time,
    /// Bytes of the last grant.
    pub last_bytes: u64,
}

impl Scheduler {
    /// A scheduler for `n_gsp` possible requesters.
    pub fn new(n_gsp: usize) -> Scheduler {
        Scheduler {
            pending: vec![0; n_gsp],
            ..Default::default()
        }
    }

    /// Adds a request. Returns true if a grant event must be scheduled (at
    /// `max(now, next_grant)`).
    pub fn request(&mut self, gsp: usize, bytes: u64) -> bool {
        self.pending[gsp] += bytes;
        if self.timer {
            false
        } else {
            self.timer = true;
            true
        }
    }

    /// Issues the next grant at `now`: (requesting GSP, payload bytes), round robin,
    /// at most `container` bytes. `wire_time(bytes)` is the time the port needs for that
    /// many payload bytes at the paced rate. Returns the grant and whether another grant
    /// event is due (at `next_grant`).
    pub fn grant(
        &mut self,
        now: Time,
        container: u64,
        wire_time: impl Fn(u64) -> Time,
    ) -> (Option<(usize, u64)>, bool) {
        self.timer = false;
        let n = self.pending.len();
        let mut out = None;
        for j in 0..n {
            let g = (self.rr + j) % n;
            if self.pending[g] > 0 {
                let b = self.pending[g].min(container);
                self.pending[g] -= b;
                self.rr = g + 1;
                self.grants += 1;
                self.granted += b;
                self.first_at.get_or_insert(now);
                self.last_at = now;
                self.last_bytes = b;
                self.next_grant = now.max(self.next_grant) + wire_time(b);
                out = Some((g, b));
                break;
            }
        }
        let more = self.pending.iter().any(|&p| p > 0);
        self.timer = more;
        (out, more)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::packet::PacketKind;

    fn d(i: u32) -> Desc {
        Desc::for_test(i, PacketKind::Data, 3, 4170)
    }

    #[test]
    fn voq_requests_in_batches_and_sends_only_on_credit() {
        let mut v = Voq::default();
        assert_eq!(v.push(d(0), 4096, 16384), 4096, "first packet asks at once");
        assert_eq!(
            v.push(d(1), 4096, 16384),
            0,
            "then waits for a container's worth"
        );
        assert_eq!(v.push(d(2), 4096, 16384), 0);
        assert_eq!(v.push(d(3), 4096, 16384), 0);
        assert_eq!(v.push(d(4), 4096, 16384), 16384);
        assert!(v.release(|_| 4096).is_none(), "no grant, nothing leaves");
        v.grant(4096);
        assert_eq!(v.release(|_| 4096).map(|x| x.id.0), Some(0));
        assert!(v.release(|_| 4096).is_none());
        v.grant(16384);
        let n = std::iter::from_fn(|| v.release(|_| 4096)).count();
        assert_eq!(n, 4);
        assert_eq!(v.bytes, 0);
        assert_eq!(v.outstanding, 0);
    }

    #[test]
    fn scheduler_round_robins_and_paces() {
        let mut s = Scheduler::new(3);
        assert!(s.request(0, 40_000));
        assert!(!s.request(2, 10_000));
        let wt = |b: u64| b; // 1 ps per byte
        let mut t = 0;
        let mut order = Vec::new();
        loop {
            let (g, more) = s.grant(t, 16384, wt);
            if let Some(x) = g {
                order.push(x);
            }
            if !more {
                break;
            }
            t = s.next_grant;
        }
        assert_eq!(
            order,
            vec![(0, 16384), (2, 10_000), (0, 16384), (0, 40_000 - 32768)]
        );
        // Paced: the last grant is issued after the previous grants' time has passed.
        assert_eq!(t, 16384 + 10_000 + 16384);
        assert_eq!(s.granted, 50_000);
    }
}
