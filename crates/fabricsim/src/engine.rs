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
            _ => Event::CcTimer(i),
        }
    }
}

/// Pending events ordered by (time, insertion order).
///
/// A radix heap (Ahuja, Mehlhorn, Orlin and Tarjan, 1990) over the 128-bit keys. It relies
/// on the event queue of a discrete-event simulation being *monotone*: nothing is ever
/// scheduled before the last event popped, and since the insertion sequence grows, every
/// new key is larger than the last key popped. Keys live in 129 buckets by the highest bit
/// in which they differ from the last key popped; a push is one XOR, one leading-zero
/// count and a `Vec` push, and a pop empties the lowest non-empty bucket into lower ones.
/// Buckets keep their capacity, so a steady run allocates nothing.
pub struct EventQueue {
    buckets: Vec<Vec<u128>>,
    /// Bit i set when bucket i is non-empty.
    nonempty: [u64; 3],
    last: u128,
    len: usize,
    seq: u64,
    popped: u64,
}

impl Default for EventQueue {
    fn default() -> Self {
        Self::with_capacity(0)
    }
}

impl EventQueue {
    /// An empty queue; `cap` is a hint for the number of pending events.
    pub fn with_capacity(cap: usize) -> Self {
        let mut buckets: Vec<Vec<u128>> = (0..129).map(|_| Vec::new()).collect();
        for b in buckets.iter_mut().skip(64) {
            b.reserve(cap / 32);
        }
        EventQueue {
            buckets,
            nonempty: [0; 3],
            last: 0,
            len: 0,
            seq: 0,
            popped: 0,
        }
    }

    #[inline]
    fn bucket_of(&self, key: u128) -> usize {
        128 - (key ^ self.last).leading_zeros() as usize
    }

    #[inline]
    fn put(&mut self, key: u128) {
        let b = self.bucket_of(key);
        self.buckets[b].push(key);
        self.nonempty[b >> 6] |= 1 << (b & 63);
    }

    /// Schedules `ev` at `time`. `time` must not be earlier than the last event popped.
    #[inline]
    pub fn push(&mut self, time: Time, ev: Event) {
        // 2^36 insertions is 68 billion events: far beyond any run this simulator makes in
        // a day; past it the tie-break among equal times would restart.
        let seq = self.seq & ((1 << SEQ_BITS) - 1);
        self.seq += 1;
        let low = (seq << (IDX_BITS + KIND_BITS)) | ev.encode();
        let key = ((time as u128) << 64) | low as u128;
        debug_assert!(
            key > self.last || self.popped == 0,
            "event scheduled in the past"
        );
        // A key below `last` (only possible if a caller breaks monotonicity) is clamped
        // into bucket 0's neighbour so that it still pops next rather than being lost.
        let key = key.max(self.last);
        self.len += 1;
        self.put(key);
    }

    #[inline]
    fn first_nonempty(&self) -> Option<usize> {
        for (w, &bits) in self.nonempty.iter().enumerate() {
            if bits != 0 {
                return Some(w * 64 + bits.trailing_zeros() as usize);
            }
        }
        None
    }

    /// Removes and returns the earliest event.
    #[inline]
    pub fn pop(&mut self) -> Option<(Time, Event)> {
        let b = self.first_nonempty()?;
        let key = if b == 0 {
            let k = self.buckets[0].pop().expect("bucket 0 non-empty");
            if self.buckets[0].is_empty() {
                self.nonempty[0] &= !1;
            }
            k
        } else {
            // Move the bucket's keys below the new minimum.
            let mut items = std::mem::take(&mut self.buckets[b]);
            self.nonempty[b >> 6] &= !(1 << (b & 63));
            let min = *items.iter().min().expect("bucket non-empty");
            self.last = min;
            let mut found = false;
            for &k in &items {
                if k == min && !found {
                    found = true;
                    continue;
                }
                self.put(k);
            }
            items.clear();
            self.buckets[b] = items;
            min
        };
        self.last = key;
        self.len -= 1;
        self.popped += 1;
        let low = key as u64 & ((1u64 << (IDX_BITS + KIND_BITS)) - 1);
        Some(((key >> 64) as Time, Event::decode(low)))
    }

    /// Puts back the event `pop` just returned, with its original key (so its order among
    /// equal-time events is kept). Only valid right after a `pop`.
    pub fn unpop(&mut self) {
        let key = self.last;
        self.len += 1;
        self.popped -= 1;
        self.put(key);
    }

    /// Time of the earliest event.
    pub fn peek_time(&self) -> Option<Time> {
        let b = self.first_nonempty()?;
        self.buckets[b].iter().min().map(|k| (k >> 64) as Time)
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
        let mut q = EventQueue::default();
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

    #[test]
    fn matches_a_sorted_reference_under_random_monotone_use() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        let mut q = EventQueue::default();
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

    #[test]
    fn unpop_restores_order() {
        let mut q = EventQueue::default();
        q.push(5, Event::PortWake(1));
        q.push(5, Event::PortWake(2));
        assert_eq!(q.pop(), Some((5, Event::PortWake(1))));
        q.unpop();
        assert_eq!(q.pop(), Some((5, Event::PortWake(1))));
        assert_eq!(q.pop(), Some((5, Event::PortWake(2))));
        assert_eq!(q.pop(), None);
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
        ] {
            assert_eq!(Event::decode(ev.encode()), ev);
        }
    }
}
