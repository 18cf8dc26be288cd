//! The event queue.
//!
//! An event is a time plus the component to wake; components keep their own state and
//! the payload of an event is only "who" (htsim's design). Events are ordered by
//! (time, insertion sequence), which makes every run a pure function of its inputs: two
//! events at the same picosecond fire in the order they were scheduled.
//!
//! An event is one `u128` key: time in the high 64 bits, then a 36-bit insertion sequence,
//! a 4-bit kind and a 24-bit component index. Comparing keys is one integer compare, an
//! event costs 16 bytes, and keys are unique, so the order is total.

use crate::units::Time;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

/// The component an event wakes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// The head packet of link `n` reaches the far end.
    LinkArrive(u32),
    /// Port `n` may be able to start a transmission.
    PortWake(u32),
    /// Time to start the flows whose start time has come.
    FlowArrivals,
    /// Retransmission timer of flow `n`.
    Rto(u32),
    /// Receiver-side CNP pacing timer of flow `n`.
    CnpTimer(u32),
    /// PFC: refresh the pause sent on ingress port `n` before it expires.
    PfcRefresh(u32),
    /// Record time-series samples.
    Sample,
    /// Congestion-control timer of flow `n`.
    CcTimer(u32),
    /// GSE: reorder-timeout check of stream `n`.
    Reorder(u32),
    /// GSE: the grant scheduler of destination host `n` may grant.
    Grant(u32),
}

const IDX_BITS: u32 = 24;
const KIND_BITS: u32 = 4;
const SEQ_BITS: u32 = 36;
/// Largest component index an event can address.
pub const MAX_INDEX: u32 = (1 << IDX_BITS) - 1;

impl Event {
    #[inline]
    fn encode(self) -> u64 {
        let (k, i) = match self {
            Event::LinkArrive(i) => (0, i),
            Event::PortWake(i) => (1, i),
            Event::FlowArrivals => (2, 0),
            Event::Rto(i) => (3, i),
            Event::CnpTimer(i) => (4, i),
            Event::PfcRefresh(i) => (5, i),
            Event::Sample => (6, 0),
            Event::CcTimer(i) => (7, i),
            Event::Reorder(i) => (8, i),
            Event::Grant(i) => (9, i),
        };
        debug_assert!(i <= MAX_INDEX);
        ((k as u64) << IDX_BITS) | i as u64
    }
    #[inline]
    fn decode(v: u64) -> Event {
        let i = (v & MAX_INDEX as u64) as u32;
        match (v >> IDX_BITS) & ((1 << KIND_BITS) - 1) {
            0 => Event::LinkArrive(i),
            1 => Event::PortWake(i),
            2 => Event::FlowArrivals,
            3 => Event::Rto(i),
            4 => Event::CnpTimer(i),
            5 => Event::PfcRefresh(i),
            6 => Event::Sample,
            7 => Event::CcTimer(i),
            8 => Event::Reorder(i),
            _ => Event::Grant(i),
        }
    }
}

/// Pending events ordered by (time, insertion order), in a binary heap of keys.
#[derive(Default)]
pub struct HeapQueue {
    heap: BinaryHeap<Reverse<u128>>,
    last: u128,
    seq: u64,
    popped: u64,
}

impl HeapQueue {
    /// An empty queue with room for `cap` events.
    pub fn with_capacity(cap: usize) -> Self {
        HeapQueue {
            heap: BinaryHeap::with_capacity(cap),
            last: 0,
            seq: 0,
            popped: 0,
        }
    }
    /// Schedules `ev` at `time`.
    #[inline(always)]
    pub fn push(&mut self, time: Time, ev: Event) {
        let seq = self.seq & ((1 << SEQ_BITS) - 1);
        self.seq += 1;
        let low = (seq << (IDX_BITS + KIND_BITS)) | ev.encode();
        self.heap
            .push(Reverse(((time as u128) << 64) | low as u128));
    }
    /// Removes and returns the earliest event.
    #[inline]
    pub fn pop(&mut self) -> Option<(Time, Event)> {
        let Reverse(k) = self.heap.pop()?;
        self.last = k;
        self.popped += 1;
        let low = k as u64 & ((1u64 << (IDX_BITS + KIND_BITS)) - 1);
        Some(((k >> 64) as Time, Event::decode(low)))
    }
    /// Puts back the event `pop` just returned.
    pub fn unpop(&mut self) {
        self.popped -= 1;
        self.heap.push(Reverse(self.last));
    }
    /// Time of the earliest event.
    pub fn peek_time(&self) -> Option<Time> {
        self.heap.peek().map(|Reverse(k)| (k >> 64) as Time)
    }
    /// The `n`-th event to pop next, if cheap to find (only `n == 0` here).
    #[inline]
    pub fn peek_near(&self, n: usize) -> Option<Event> {
        if n > 0 {
            return None;
        }
        self.heap
            .peek()
            .map(|Reverse(k)| Event::decode(*k as u64 & ((1u64 << (IDX_BITS + KIND_BITS)) - 1)))
    }
    /// Events pending.
    pub fn len(&self) -> usize {
        self.heap.len()
    }
    /// True when nothing is pending.
    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }
    /// Events processed so far.
    pub fn popped(&self) -> u64 {
        self.popped
    }
}

/// Below this many expected pending events the binary heap is faster (it fits in cache
/// and does fewer instructions); above it the radix heap's sequential bucket scans miss
/// the cache less. Measured with cachegrind and wall time on the fat-tree benchmarks: the
/// heap wins at k = 8 (768 ports), the radix heap at k = 16 (6144 ports).
pub const RADIX_THRESHOLD: usize = 8192;

/// The event queue: one of two interchangeable implementations, chosen by size. Both
/// order events by (time, insertion sequence), so results do not depend on the choice.
pub enum EventQueue {
    /// Binary heap of keys.
    Heap(HeapQueue),
    /// Radix heap on times.
    Radix(RadixQueue),
}

impl Default for EventQueue {
    fn default() -> Self {
        EventQueue::Heap(HeapQueue::default())
    }
}

macro_rules! each {
    ($self:ident, $q:ident => $e:expr) => {
        match $self {
            EventQueue::Heap($q) => $e,
            EventQueue::Radix($q) => $e,
        }
    };
}

impl EventQueue {
    /// A queue sized for about `cap` pending events.
    pub fn with_capacity(cap: usize) -> Self {
        if cap >= RADIX_THRESHOLD {
            EventQueue::Radix(RadixQueue::with_capacity(cap))
        } else {
            EventQueue::Heap(HeapQueue::with_capacity(cap))
        }
    }
    /// Schedules `ev` at `time` (never earlier than the last event popped).
    #[inline(always)]
    pub fn push(&mut self, time: Time, ev: Event) {
        each!(self, q => q.push(time, ev))
    }
    /// Removes and returns the earliest event.
    #[inline]
    pub fn pop(&mut self) -> Option<(Time, Event)> {
        each!(self, q => q.pop())
    }
    /// Puts back the event `pop` just returned.
    pub fn unpop(&mut self) {
        each!(self, q => q.unpop())
    }
    /// Time of the earliest event.
    pub fn peek_time(&self) -> Option<Time> {
        each!(self, q => q.peek_time())
    }
    /// The event `n` places ahead in pop order, when it is cheap to know (events at the
    /// current time); used only for prefetching, never for semantics.
    #[inline(always)]
    pub fn peek_near(&self, n: usize) -> Option<Event> {
        each!(self, q => q.peek_near(n))
    }
    /// Events pending.
    pub fn len(&self) -> usize {
        each!(self, q => q.len())
    }
    /// True when nothing is pending.
    pub fn is_empty(&self) -> bool {
        each!(self, q => q.is_empty())
    }
    /// Events processed so far.
    pub fn popped(&self) -> u64 {
        each!(self, q => q.popped())
    }
}

/// Pending events ordered by (time, insertion order), in a radix heap (Ahuja, Mehlhorn, Orlin and Tarjan, 1990) on event times. It relies on
/// the event queue of a discrete-event simulation being *monotone*: nothing is ever
/// scheduled before the last event popped. An event lives in the bucket numbered by the
/// highest bit in which its time differs from the last time popped; bucket 0 holds the
/// events at exactly the last time, in key order (insertion sequence), as a FIFO. A push is
/// an XOR, a leading-zero count and a `Vec` push; a pop that finds bucket 0 empty empties
/// the lowest non-empty bucket into lower ones (each event moves down a few times over
/// its life). Buckets keep their capacity, so a steady run allocates nothing.
pub struct RadixQueue {
    /// Bucket 0: events at `last_time`, in key order.
    now: VecDeque<u64>,
    /// Buckets 1..=64 as (time, low key) pairs.
    buckets: Vec<Vec<(u64, u64)>>,
    /// Bit i set when bucket i (1..=64) is non-empty.
    nonempty: u128,
    last_time: Time,
    last_low: u64,
    len: usize,
    seq: u64,
    popped: u64,
}

impl Default for RadixQueue {
    fn default() -> Self {
        Self::with_capacity(0)
    }
}

impl RadixQueue {
    /// An empty queue; `cap` is a hint for the number of pending events.
    pub fn with_capacity(cap: usize) -> Self {
        let mut buckets: Vec<Vec<(u64, u64)>> = (0..65).map(|_| Vec::new()).collect();
        for b in buckets.iter_mut().skip(8) {
            b.reserve(cap / 16);
        }
        RadixQueue {
            now: VecDeque::with_capacity(64),
            buckets,
            nonempty: 0,
            last_time: 0,
            last_low: 0,
            len: 0,
            seq: 0,
            popped: 0,
        }
    }

    #[inline]
    fn put(&mut self, time: Time, low: u64) {
        if time <= self.last_time {
            // Same time as the last pop (or, if a caller broke monotonicity, earlier:
            // clamped so it still pops next rather than being lost).
            self.now.push_back(low);
        } else {
            let b = 64 - (time ^ self.last_time).leading_zeros() as usize;
            self.buckets[b].push((time, low));
            self.nonempty |= 1 << b;
        }
    }

    /// Schedules `ev` at `time`. `time` must not be earlier than the last event popped.
    #[inline(always)]
    pub fn push(&mut self, time: Time, ev: Event) {
        // 2^36 insertions is 68 billion events: far beyond any run this simulator makes in
        // a day; past it the tie-break among equal times would restart.
        let seq = self.seq & ((1 << SEQ_BITS) - 1);
        self.seq += 1;
        let low = (seq << (IDX_BITS + KIND_BITS)) | ev.encode();
        debug_assert!(time >= self.last_time, "event scheduled in the past");
        self.len += 1;
        self.put(time, low);
    }

    /// Removes and returns the earliest event.
    #[inline]
    pub fn pop(&mut self) -> Option<(Time, Event)> {
        if self.now.is_empty() {
            if self.nonempty == 0 {
                return None;
            }
            let b = self.nonempty.trailing_zeros() as usize;
            let mut items = std::mem::take(&mut self.buckets[b]);
            self.nonempty &= !(1 << b);
            let t = items.iter().map(|e| e.0).min().expect("bucket non-empty");
            self.last_time = t;
            // Events at the new time go to bucket 0 in key order; the rest move down.
            let first = self.now.len();
            for &(time, low) in &items {
                self.put(time, low);
            }
            if self.now.len() - first > 1 {
                self.now.make_contiguous().sort_unstable();
            }
            items.clear();
            self.buckets[b] = items;
        }
        let low = self.now.pop_front().expect("bucket 0 non-empty");
        self.last_low = low;
        self.len -= 1;
        self.popped += 1;
        Some((
            self.last_time,
            Event::decode(low & ((1u64 << (IDX_BITS + KIND_BITS)) - 1)),
        ))
    }

    /// Puts back the event `pop` just returned, with its original key (so its order among
    /// equal-time events is kept). Only valid right after a `pop`.
    pub fn unpop(&mut self) {
        self.len += 1;
        self.popped -= 1;
        self.now.push_front(self.last_low);
    }

    /// The event `n` places ahead among those at the current time, if any.
    #[inline]
    pub fn peek_near(&self, n: usize) -> Option<Event> {
        self.now
            .get(n)
            .map(|&low| Event::decode(low & ((1u64 << (IDX_BITS + KIND_BITS)) - 1)))
    }

    /// Time of the earliest event.
    pub fn peek_time(&self) -> Option<Time> {
        if !self.now.is_empty() {
            return Some(self.last_time);
        }
        if self.nonempty == 0 {
            return None;
        }
        let b = self.nonempty.trailing_zeros() as usize;
        self.buckets[b].iter().map(|e| e.0).min()
    }
    /// Events pending.
    pub fn len(&self) -> usize {
        self.len
    }
    /// True when nothing is pending.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    /// Events processed so far.
    pub fn popped(&self) -> u64 {
        self.popped
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn orders_by_time_then_insertion() {
        for mut q in [
            EventQueue::with_capacity(0),
            EventQueue::with_capacity(RADIX_THRESHOLD),
        ] {
            q.push(10, Event::PortWake(3));
            q.push(5, Event::LinkArrive(7));
            q.push(10, Event::Rto(1));
            q.push(10, Event::PortWake(2));
            q.push(0, Event::FlowArrivals);
            let got: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
            assert_eq!(
                got,
                vec![
                    (0, Event::FlowArrivals),
                    (5, Event::LinkArrive(7)),
                    (10, Event::PortWake(3)),
                    (10, Event::Rto(1)),
                    (10, Event::PortWake(2)),
                ]
            );
        }
    }

    #[test]
    fn matches_a_sorted_reference_under_random_monotone_use() {
        use rand::{Rng, SeedableRng};
        for mut q in [
            EventQueue::with_capacity(0),
            EventQueue::with_capacity(RADIX_THRESHOLD),
        ] {
            let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
            let mut reference: Vec<(u64, u64, u32)> = Vec::new();
            let mut seq = 0u64;
            let mut now = 0u64;
            for _ in 0..20_000 {
                if rng.gen_bool(0.55) || reference.is_empty() {
                    let t = now + rng.gen_range(0..5_000u64) * rng.gen_range(0..3u64);
                    let idx = rng.gen_range(0..1000u32);
                    q.push(t, Event::PortWake(idx));
                    reference.push((t, seq, idx));
                    seq += 1;
                } else {
                    reference.sort();
                    let (t, _, idx) = reference.remove(0);
                    assert_eq!(q.pop(), Some((t, Event::PortWake(idx))));
                    now = t;
                }
                assert_eq!(q.len(), reference.len());
            }
        }
    }

    #[test]
    fn unpop_restores_order() {
        for mut q in [
            EventQueue::with_capacity(0),
            EventQueue::with_capacity(RADIX_THRESHOLD),
        ] {
            q.push(5, Event::PortWake(1));
            q.push(5, Event::PortWake(2));
            q.push(7, Event::PortWake(3));
            assert_eq!(q.pop(), Some((5, Event::PortWake(1))));
            q.unpop();
            assert_eq!(q.pop(), Some((5, Event::PortWake(1))));
            assert_eq!(q.pop(), Some((5, Event::PortWake(2))));
            assert_eq!(q.pop(), Some((7, Event::PortWake(3))));
            q.unpop();
            assert_eq!(q.pop(), Some((7, Event::PortWake(3))));
            assert_eq!(q.pop(), None);
        }
    }

    #[test]
    fn every_kind_round_trips() {
        for ev in [
            Event::LinkArrive(MAX_INDEX),
            Event::PortWake(0),
            Event::FlowArrivals,
            Event::Rto(12345),
            Event::CnpTimer(9),
            Event::PfcRefresh(4),
            Event::Sample,
            Event::CcTimer(77),
            Event::Reorder(5),
            Event::Grant(MAX_INDEX),
        ] {
            assert_eq!(Event::decode(ev.encode()), ev);
        }
    }
}
