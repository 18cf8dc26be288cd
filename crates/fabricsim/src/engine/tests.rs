//! Tests of the event queue: order by (time, insertion) across slots, the window and the
//! far heap.

use super::*;

/// Queues with slots of 1 ps, 1 ns and the widest, so that the tests cross slot
/// boundaries, the window and the far heap.
fn queues() -> Vec<EventQueue> {
    [1u64, 1 << 20, 1 << 40]
        .into_iter()
        .flat_map(|h| {
            [false, true].map(|look| {
                let mut q = EventQueue::with_capacity(0);
                q.set_horizon(h);
                q.set_lookahead(look);
                q
            })
        })
        .collect()
}

#[test]
fn peek_codes_show_the_next_events() {
    let mut q = EventQueue::with_capacity(0);
    q.set_horizon(1 << 20);
    q.set_lookahead(true);
    for i in 0..3 {
        q.push(1000, Event::PortWake(PortId(i)));
    }
    q.push(1_000_000, Event::LinkArrive(LinkId(9)));
    q.push(1_000_001, Event::Rto(FlowId(4)));
    assert_eq!(q.pop(), Some((1000, Event::PortWake(PortId(0)))));
    let codes = q.peek_codes().map(peek_code);
    // Two more in this slot, then the next slot's first entries (Rto is not a
    // packet event: its kind is neither 0 nor 1).
    assert_eq!(&codes[..3], &[(1, 1), (1, 2), (0, 9)]);
    assert!(codes[3].0 > 1);
}

#[test]
fn orders_by_time_then_insertion() {
    for mut q in queues() {
        q.push(10, Event::PortWake(PortId(3)));
        q.push(5, Event::LinkArrive(LinkId(7)));
        q.push(10, Event::Rto(FlowId(1)));
        q.push(10, Event::PortWake(PortId(2)));
        q.push(0, Event::FlowArrivals);
        let got: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(
            got,
            vec![
                (0, Event::FlowArrivals),
                (5, Event::LinkArrive(LinkId(7))),
                (10, Event::PortWake(PortId(3))),
                (10, Event::Rto(FlowId(1))),
                (10, Event::PortWake(PortId(2))),
            ]
        );
    }
}

#[test]
fn matches_a_sorted_reference_under_random_monotone_use() {
    use rand::{Rng, SeedableRng};
    for (qi, mut q) in queues().into_iter().enumerate() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7 + qi as u64);
        let mut reference: Vec<(u64, u64, u32)> = Vec::new();
        let mut seq = 0u64;
        let mut now = 0u64;
        for step in 0..60_000 {
            if rng.gen_bool(0.55) || reference.is_empty() {
                // Mostly near-future events, some at the current time, some far.
                let d = match rng.gen_range(0..10) {
                    0 => 0,
                    1 => rng.gen_range(0..5u64),
                    2 => rng.gen_range(0..100_000_000u64),
                    _ => rng.gen_range(0..5_000u64) * rng.gen_range(0..3u64),
                };
                let t = now + d;
                let idx = rng.gen_range(0..1000u32);
                q.push(t, Event::PortWake(PortId(idx)));
                reference.push((t, seq, idx));
                seq += 1;
            } else {
                reference.sort();
                let (t, _, idx) = reference.remove(0);
                if step % 7 == 0 {
                    assert_eq!(q.peek_time(), Some(t));
                }
                assert_eq!(
                    q.pop(),
                    Some((t, Event::PortWake(PortId(idx)))),
                    "queue {qi} step {step} now {now}"
                );
                now = t;
            }
            assert_eq!(q.len(), reference.len());
        }
    }
}

#[test]
fn many_events_in_one_slot_keep_their_order() {
    for mut q in queues() {
        // More than a slot holds inline, in reverse time order, then some at the
        // current time and just after it while the slot drains.
        let mut reference: Vec<(u64, u64, Event)> = Vec::new();
        for i in 0..100u32 {
            let t = 1000 - (i as u64 % 7);
            q.push(t, Event::LinkArrive(LinkId(i)));
            reference.push((t, i as u64, Event::LinkArrive(LinkId(i))));
        }
        reference.sort_by_key(|&(t, s, _)| (t, s));
        let mut got = Vec::new();
        for _ in 0..50 {
            got.push(q.pop().unwrap());
        }
        let now = got.last().unwrap().0;
        q.push(now, Event::Rto(FlowId(1)));
        q.push(now + 2, Event::Rto(FlowId(2)));
        let mut rest = reference.split_off(50);
        rest.push((now, 100, Event::Rto(FlowId(1))));
        rest.push((now + 2, 101, Event::Rto(FlowId(2))));
        rest.sort_by_key(|&(t, s, _)| (t, s));
        reference.extend(rest);
        while let Some(e) = q.pop() {
            got.push(e);
        }
        let want: Vec<(u64, Event)> = reference.into_iter().map(|(t, _, e)| (t, e)).collect();
        assert_eq!(got, want);
    }
}

#[test]
fn set_horizon_keeps_pending_events() {
    let mut q = EventQueue::with_capacity(0);
    q.push(5, Event::PortWake(PortId(1)));
    q.push(7_000_000, Event::PortWake(PortId(2)));
    q.push(5, Event::PortWake(PortId(3)));
    assert_eq!(q.pop(), Some((5, Event::PortWake(PortId(1)))));
    q.set_horizon(1 << 30);
    assert_eq!(q.len(), 2);
    assert_eq!(q.pop(), Some((5, Event::PortWake(PortId(3)))));
    assert_eq!(q.pop(), Some((7_000_000, Event::PortWake(PortId(2)))));
    assert_eq!(q.pop(), None);
    assert_eq!(q.popped(), 3);
}

#[test]
fn unpop_restores_order() {
    for mut q in queues() {
        q.push(5, Event::PortWake(PortId(1)));
        q.push(5, Event::PortWake(PortId(2)));
        q.push(7, Event::PortWake(PortId(3)));
        q.push(1 << 41, Event::PortWake(PortId(4)));
        assert_eq!(q.pop(), Some((5, Event::PortWake(PortId(1)))));
        q.unpop();
        assert_eq!(q.pop(), Some((5, Event::PortWake(PortId(1)))));
        assert_eq!(q.pop(), Some((5, Event::PortWake(PortId(2)))));
        assert_eq!(q.pop(), Some((7, Event::PortWake(PortId(3)))));
        q.unpop();
        assert_eq!(q.pop(), Some((7, Event::PortWake(PortId(3)))));
        assert_eq!(q.pop(), Some((1 << 41, Event::PortWake(PortId(4)))));
        q.unpop();
        assert_eq!(q.peek_time(), Some(1 << 41));
        assert_eq!(q.pop(), Some((1 << 41, Event::PortWake(PortId(4)))));
        assert_eq!(q.pop(), None);
    }
}

#[test]
fn every_kind_round_trips() {
    for ev in [
        Event::LinkArrive(LinkId(MAX_INDEX)),
        Event::PortWake(PortId(0)),
        Event::FlowArrivals,
        Event::Rto(FlowId(12345)),
        Event::CnpTimer(FlowId(9)),
        Event::PfcRefresh(PortId(4)),
        Event::Sample,
        Event::Reorder(5),
        Event::Grant(HostId(MAX_INDEX)),
    ] {
        assert_eq!(Event::decode(ev.encode()), ev);
    }
}
