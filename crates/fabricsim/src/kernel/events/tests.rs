//! Tests of the event queue: order by (time, event key) across slots, the window and the
//! far heap, whatever the order events were pushed in.

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
    // Past the first slot (the one current before any pop), whatever its width.
    for i in 0..3 {
        q.push(5000, Event::PortWake(PortId(i)));
    }
    q.push(1_000_000, Event::LinkArrive(LinkId(9)));
    q.push(1_000_001, Event::Rto(FlowId(4)));
    assert_eq!(q.pop(), Some((5000, Event::PortWake(PortId(0)))));
    let codes = q.peek_codes().map(peek_code);
    // Two more in this slot, then the next slot's first entries (Rto is not a
    // packet event).
    let (port, link) = (code::PORT_WAKE, code::LINK_ARRIVE);
    assert_eq!(&codes[..3], &[(port, 1), (port, 2), (link, 9)]);
    assert!(codes[3].0 != port && codes[3].0 != link);
}

#[test]
fn orders_by_time_then_key() {
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
                // At one time by kind (timers before port wakeups), then by index.
                (10, Event::Rto(FlowId(1))),
                (10, Event::PortWake(PortId(2))),
                (10, Event::PortWake(PortId(3))),
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
                // Ties by the event's key (here its port), not by when it was pushed.
                reference.push((t, 0, idx));
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
        reference.sort_by_key(|&(t, _, e)| (t, e.encode()));
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
        rest.sort_by_key(|&(t, _, e)| (t, e.encode()));
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
        Event::CreditReturn(PortId(17)),
        Event::Fault(MAX_INDEX),
        Event::Replay(LinkId(7)),
        Event::Collective(3),
    ] {
        assert_eq!(Event::decode(ev.encode() as u32), ev);
    }
}

/// `Event::decode` reads an event as its two words: a discriminant that is its kind's
/// code, then its index.
#[test]
fn codes_are_the_discriminants() {
    assert_eq!(std::mem::size_of::<Event>(), 8);
    let all = [
        (Event::Fault(1), code::FAULT),
        (Event::LinkArrive(LinkId(2)), code::LINK_ARRIVE),
        (Event::CreditReturn(PortId(3)), code::CREDIT),
        (Event::Replay(LinkId(4)), code::REPLAY),
        (Event::PfcRefresh(PortId(5)), code::PFC_REFRESH),
        (Event::FlowArrivals, code::FLOW_ARRIVALS),
        (Event::Collective(6), code::COLLECTIVE),
        (Event::Grant(HostId(7)), code::GRANT),
        (Event::Reorder(8), code::REORDER),
        (Event::Rto(FlowId(9)), code::RTO),
        (Event::CnpTimer(FlowId(10)), code::CNP_TIMER),
        (Event::PortWake(PortId(11)), code::PORT_WAKE),
        (Event::Sample, code::SAMPLE),
    ];
    assert_eq!(all.len() as u32, code::LAST + 1);
    for (i, (ev, c)) in all.into_iter().enumerate() {
        assert_eq!(c, i as u32, "the codes are 0..=LAST in order");
        // SAFETY: a `repr(u32)` enum starts with its `u32` discriminant.
        #[allow(unsafe_code)]
        let tag = unsafe { *(&ev as *const Event as *const u32) };
        assert_eq!(tag, c, "{ev:?}");
        assert_eq!(ev.encode() >> IDX_BITS, c as u64, "{ev:?}");
    }
}

/// A queue checked against a binary heap of (time, event key) at every step.
struct Checked {
    q: EventQueue,
    reference: BinaryHeap<Reverse<(Time, u64)>>,
    last: Option<(Time, u64)>,
    now: Time,
}

impl Checked {
    fn new(horizon: Time, lookahead: bool) -> Checked {
        let mut q = EventQueue::with_capacity(0);
        q.set_horizon(horizon);
        q.set_lookahead(lookahead);
        Checked {
            q,
            reference: BinaryHeap::new(),
            last: None,
            now: 0,
        }
    }

    /// The span of the calendar's window in ps.
    fn window(&self) -> Time {
        (SLOTS as Time) << self.q.shift
    }

    fn push(&mut self, t: Time, ev: Event) {
        assert!(t >= self.now, "the queue is monotone");
        self.q.push(t, ev);
        self.reference.push(Reverse((t, ev.encode())));
        self.last = None;
        self.check_drain();
    }

    /// The drain buffer holds the four look-ahead entries past its pending ones, which
    /// `peek_codes` reads unchecked.
    fn check_drain(&self) {
        let q = &self.q;
        assert!(q.head <= q.end, "head {} past end {}", q.head, q.end);
        assert!(
            q.end + 4 <= q.drain.len(),
            "a drain buffer of {} for {} entries",
            q.drain.len(),
            q.end
        );
        if q.lookahead {
            let _ = q.peek_codes();
        }
    }

    fn pop(&mut self) -> Option<(Time, Event)> {
        let want = self.reference.pop().map(|Reverse(e)| e);
        assert_eq!(self.q.peek_time(), want.map(|(t, _)| t));
        let got = self.q.pop();
        assert_eq!(got, want.map(|(t, e)| (t, Event::decode(e as u32))));
        if let Some((t, _)) = want {
            self.now = t;
        }
        self.last = want;
        assert_eq!(self.q.len(), self.reference.len());
        self.check_drain();
        got
    }

    /// Puts back the event just popped; false when the last operation was not a pop
    /// that returned one.
    fn unpop(&mut self) -> bool {
        let Some(e) = self.last.take() else {
            return false;
        };
        self.q.unpop();
        self.reference.push(Reverse(e));
        self.check_drain();
        true
    }

    fn set_horizon(&mut self, h: Time) {
        self.q.set_horizon(h);
        self.last = None;
        assert_eq!(self.q.len(), self.reference.len());
        self.check_drain();
    }

    fn drain(&mut self) {
        while self.pop().is_some() {}
        assert!(self.q.is_empty());
    }
}

use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Horizons of the tests: 1 ps slots, 1 ns, a 1 us link, a 600 us (120 km) link, widest.
const HORIZONS: [Time; 5] = [1, 1 << 20, 1_500_000, 675_000_000, 1 << 40];

fn checked() -> impl Iterator<Item = Checked> {
    HORIZONS
        .into_iter()
        .flat_map(|h| [false, true].map(move |look| Checked::new(h, look)))
}

fn wake(i: u32) -> Event {
    Event::PortWake(PortId(i))
}

#[test]
fn events_at_the_window_edge_keep_their_order() {
    for mut c in checked() {
        let w = c.window();
        let slot = w / SLOTS as Time;
        c.push(3, wake(0));
        c.pop();
        // Just inside the window, on its edge, just beyond, a window later: two each,
        // pushed in reverse time order.
        let offsets = [
            w - slot,
            w - 1,
            w,
            w + 1,
            w + slot,
            2 * w - 1,
            2 * w,
            2 * w + 1,
        ];
        for (i, &o) in offsets.iter().enumerate().rev() {
            c.push(3 + o, wake(i as u32));
            c.push(3 + o, wake(100 + i as u32));
        }
        // Events that move the wheel on while the far ones are pending; then more at
        // the far times, now inside the window, after those waiting since before.
        for k in 1..8 {
            c.push(3 + k * w / 4, Event::Rto(FlowId(k as u32)));
        }
        for _ in 0..6 {
            c.pop();
        }
        let now = c.now;
        for (i, &o) in offsets.iter().enumerate() {
            if 3 + o >= now {
                c.push(3 + o, wake(200 + i as u32));
            }
        }
        c.drain();
    }
}

/// The next occupied slot is found across the wheel's words (`summary`) and around its
/// end: events a word of slots apart, then, the wheel part way round, events whose slots
/// lie before the current one's index; and an empty wheel with only a far event.
#[test]
fn sparse_slots_are_found_across_words_and_around_the_wheel() {
    for mut c in checked() {
        let w = c.window();
        let slot = w / SLOTS as Time;
        c.push(1, wake(0));
        c.pop();
        for k in 1..64u64 {
            c.push(1 + k * 64 * slot + k % 3, wake(k as u32));
        }
        for _ in 0..40 {
            c.pop();
        }
        let now = c.now;
        c.push(now + w - slot, wake(500));
        c.push(now + w / 2, wake(501));
        c.drain();
        let now = c.now;
        c.push(now + 3 * w, wake(502));
        c.push(now + 3 * w + slot, wake(503));
        c.drain();
    }
}

#[test]
fn far_events_at_one_time_pop_in_key_order() {
    for mut c in checked() {
        let w = c.window();
        let t = 5 * w + 17;
        // Ties at a far time, pushed while it is far, while it is in the window, and
        // while it is the current time.
        for i in 0..40 {
            c.push(t, wake(i));
            c.push(t + (i as Time % 3), Event::LinkArrive(LinkId(i)));
        }
        let mut s = 0;
        while c.now + w / 2 < t {
            s += 1;
            c.push(c.now + w / 2, Event::Sample);
            c.pop();
            assert!(s < 100);
        }
        for i in 40..80 {
            c.push(t, wake(i));
        }
        while c.now < t {
            c.pop();
        }
        for i in 80..120 {
            c.push(t, wake(i));
        }
        c.drain();
    }
}

#[test]
fn unpop_works_on_events_that_came_from_far() {
    for mut c in checked() {
        let w = c.window();
        for i in 0..10 {
            c.push(7 * w + i as Time, wake(i));
            c.push(7 * w, wake(100 + i));
        }
        while c.pop().is_some() {
            assert!(c.unpop());
            c.pop();
        }
    }
}

#[test]
fn horizon_changes_keep_pending_events_in_order() {
    for mut c in checked() {
        let mut x = 99u64;
        for round in 0..40u32 {
            for i in 0..20 {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                let d = match i % 4 {
                    0 => 0,
                    1 => x >> 54,
                    2 => x >> 40,
                    _ => x >> 24,
                };
                c.push(c.now + d, wake(round * 100 + i));
            }
            for _ in 0..12 {
                c.pop();
            }
            c.set_horizon(HORIZONS[round as usize % HORIZONS.len()] + round as Time);
        }
        c.drain();
    }
}

#[test]
fn long_links_as_delay_lines() {
    // Links of 600 us carrying back-to-back packets, one pending event per link (its
    // head's), beside short links: the pattern of a long-haul run.
    for mut c in checked() {
        const LINKS: usize = 8;
        let delay = |l: usize| {
            if l.is_multiple_of(2) {
                600_000_000
            } else {
                1_000_000
            }
        };
        let mut rings: Vec<std::collections::VecDeque<Time>> = vec![Default::default(); LINKS];
        let mut next_tx = [0 as Time; LINKS];
        let mut x = 5u64;
        for l in 0..LINKS {
            c.push(l as Time, wake(l as u32));
        }
        for _ in 0..20_000 {
            let Some((t, ev)) = c.pop() else { break };
            match ev {
                Event::PortWake(PortId(l)) => {
                    let l = l as usize;
                    x = x
                        .wrapping_mul(6364136223846793005)
                        .wrapping_add(1442695040888963407);
                    let arrival = t + delay(l);
                    rings[l].push_back(arrival);
                    if rings[l].len() == 1 {
                        c.push(arrival, Event::LinkArrive(LinkId(l as u32)));
                    }
                    // Serialization, sometimes an idle gap.
                    next_tx[l] = t + 82_000 + if x >> 60 == 0 { x >> 34 } else { 0 };
                    c.push(next_tx[l], wake(l as u32));
                }
                Event::LinkArrive(LinkId(l)) => {
                    let l = l as usize;
                    assert_eq!(rings[l].pop_front(), Some(t));
                    if let Some(&next) = rings[l].front() {
                        c.push(next, Event::LinkArrive(LinkId(l as u32)));
                    }
                }
                _ => unreachable!(),
            }
        }
    }
}

mod randomized {
    use super::*;
    use proptest::prelude::*;

    /// One step: push (a delay class and value), pop, pop then unpop, change the horizon.
    #[derive(Clone, Debug)]
    enum Op {
        Push(u8, u64),
        Pop,
        PopUnpop,
        Horizon(usize),
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            6 => (0u8..7, any::<u64>()).prop_map(|(c, v)| Op::Push(c, v)),
            5 => Just(Op::Pop),
            1 => Just(Op::PopUnpop),
            1 => (0..HORIZONS.len() * 8).prop_map(Op::Horizon),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]
        #[test]
        fn matches_a_binary_heap_reference(
            h in 0..HORIZONS.len(),
            look in any::<bool>(),
            ops in prop::collection::vec(op(), 1..3000),
        ) {
            let mut c = Checked::new(HORIZONS[h], look);
            for (i, op) in ops.into_iter().enumerate() {
                match op {
                    Op::Push(class, v) => {
                        let w = c.window();
                        let d = match class {
                            // Now, a few ps, within a slot or two, a link delay, around
                            // the window's edge, far (timers, long links), very far.
                            0 => 0,
                            1 => v % 8,
                            2 => v % (2 * w / SLOTS as Time + 1),
                            3 => v % 2_000_000,
                            4 => (w - 2 * w / SLOTS as Time) + v % (4 * w / SLOTS as Time + 1),
                            5 => v % 1_000_000_000,
                            _ => v % (1 << 42),
                        };
                        let ev = match v % 3 {
                            0 => Event::LinkArrive(LinkId(i as u32)),
                            1 => Event::PortWake(PortId(i as u32)),
                            _ => Event::Rto(FlowId(i as u32)),
                        };
                        c.push(c.now + d, ev);
                    }
                    Op::Pop => {
                        c.pop();
                    }
                    Op::PopUnpop => {
                        if c.pop().is_some() {
                            prop_assert!(c.unpop());
                        }
                    }
                    // Mostly tiny changes that keep the slot width, sometimes new widths.
                    Op::Horizon(k) => c.set_horizon(HORIZONS[k % HORIZONS.len()] + (k / 5) as Time),
                }
            }
            c.drain();
        }
    }
}

#[test]
fn the_order_pushed_in_does_not_change_the_order_popped() {
    // The property a queue per shard relies on: the same events, pushed in any order (by
    // different components, or handed over from another part of the fabric), pop in the
    // same order. Events of every kind at a few shared times, near and far.
    use rand::seq::SliceRandom;
    use rand::SeedableRng;
    let mut events = Vec::new();
    for i in 0..60u32 {
        let t = [40, 40, 41, 5_000, 3 << 30][i as usize % 5];
        let ev = match i % 7 {
            0 => Event::LinkArrive(LinkId(i)),
            1 => Event::PortWake(PortId(i % 4)),
            2 => Event::Rto(FlowId(i)),
            3 => Event::Fault(i % 3),
            4 => Event::Sample,
            5 => Event::CreditReturn(PortId(i)),
            _ => Event::Collective(i),
        };
        events.push((t, ev));
    }
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
    for h in HORIZONS {
        let mut first: Option<Vec<(Time, Event)>> = None;
        for _ in 0..20 {
            events.shuffle(&mut rng);
            let mut q = EventQueue::with_capacity(0);
            q.set_horizon(h);
            for &(t, ev) in &events {
                q.push(t, ev);
            }
            let got: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
            assert_eq!(got.len(), events.len());
            assert!(got
                .windows(2)
                .all(|w| (w[0].0, w[0].1.encode()) <= (w[1].0, w[1].1.encode())));
            match &first {
                None => first = Some(got),
                Some(f) => assert_eq!(f, &got, "horizon {h}"),
            }
        }
    }
}

/// A shard's use (`sim/shards/`): pop every event before a window's end, then push
/// events at any time from that end on (frames handed over), never earlier than it:
/// the order stays the sorted one.
#[test]
fn pop_before_then_pushes_from_the_window_end_keep_order() {
    use rand::{Rng, SeedableRng};
    for (qi, mut q) in queues().into_iter().enumerate() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(11 + qi as u64);
        let mut reference: Vec<(u64, u32)> = Vec::new();
        let mut end = 0u64;
        for _window in 0..3_000 {
            end += rng.gen_range(1..3_000u64);
            // Pushes from handlers: at or after the last event popped.
            while let Some((t, ev)) = q.pop_before(end) {
                reference.sort();
                let (rt, ri) = reference.remove(0);
                assert_eq!((t, ev), (rt, Event::PortWake(PortId(ri))), "queue {qi}");
                assert!(t < end);
                let now = t;
                // Fewer than one push per pop on average, so that a window ends.
                if rng.gen_bool(0.45) {
                    let t = now + rng.gen_range(0..4_000u64) * rng.gen_range(0..2u64);
                    let idx = rng.gen_range(0..1000u32);
                    q.push(t, Event::PortWake(PortId(idx)));
                    reference.push((t, idx));
                }
            }
            reference.sort();
            assert!(
                reference.first().is_none_or(|&(t, _)| t >= end),
                "queue {qi}"
            );
            // Deliveries at the barrier: at the window's end or later.
            for _ in 0..rng.gen_range(0..6) {
                let t = end + rng.gen_range(0..5_000u64) * rng.gen_range(0..2u64);
                let idx = rng.gen_range(0..1000u32);
                q.push(t, Event::PortWake(PortId(idx)));
                reference.push((t, idx));
            }
        }
    }
}
