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
//! the receiver acknowledges a message once, when it is complete (and again if a copy of
//! a packet of a complete message arrives, so that a sender that timed out learns it);
//! a sender whose retransmission timer expires without that acknowledgement sends the
//! whole message again, and the receiver drops what it already has. Packets are never
//! NACKed.

use super::{Flow, NicTransport, RxOutcome, RxReply};

/// The message transport.
#[derive(Clone, Debug, Default)]
pub struct MessageTransport;

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
        let new = receive(f, seq, seq + bytes as u64);
        let done = f.rcv_nxt >= size;
        let reply = if done && (new || f.finish.is_some()) {
            RxReply::Ack(size)
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
            f.snd_nxt = 0;
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
    use crate::cc::line_rate::LineRate;
    use crate::cc::AnyCc;
    use crate::transport::FlowSpec;

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
        let t = MessageTransport;
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
        let t = MessageTransport;
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
    fn a_timeout_sends_the_whole_message_again_until_it_is_acknowledged() {
        let t = MessageTransport;
        let mut f = flow(4000);
        f.snd_nxt = 4000;
        assert!(t.on_timeout(&mut f));
        assert_eq!((f.snd_nxt, f.timeouts), (0, 1));
        assert_eq!(t.on_cumulative_ack(&mut f, 4000), 4000);
        assert!(!t.on_timeout(&mut f));
        assert!(!t.on_nack(&mut f, 0));
    }
}
