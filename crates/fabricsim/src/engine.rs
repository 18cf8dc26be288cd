//! The event queue.
//!
//! An event is a time plus the component to wake; components keep their own state and
//! the payload of an event is only "who" (htsim's design). Events are ordered by
//! (time, insertion sequence), which makes every run a pure function of its inputs: two
//! events at the same picosecond fire in the order they were scheduled.
//!
//! The queue is a binary heap of one `u128` per event: time in the high 64 bits, then a
//! 36-bit insertion sequence, a 4-bit kind and a 24-bit component index. Comparing keys is
//! one integer compare, and an event costs 16 bytes.

use crate::units::Time;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

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
#[derive(Default)]
pub struct EventQueue {
    heap: BinaryHeap<Reverse<u128>>,
    seq: u64,
    popped: u64,
}

impl EventQueue {
    /// An empty queue with room for `cap` events.
    pub fn with_capacity(cap: usize) -> Self {
        EventQueue {
            heap: BinaryHeap::with_capacity(cap),
            seq: 0,
            popped: 0,
        }
    }
    /// Schedules `ev` at `time`.
    #[inline]
    pub fn push(&mut self, time: Time, ev: Event) {
        // 2^36 insertions is 68 billion events: far beyond any run this simulator makes in
        // a day, but wrap safely (ordering among equal times would then restart).
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
        self.popped += 1;
        let low = k as u64 & ((1u64 << (IDX_BITS + KIND_BITS)) - 1);
        Some(((k >> 64) as Time, Event::decode(low)))
    }
    /// Time of the earliest event.
    pub fn peek_time(&self) -> Option<Time> {
        self.heap.peek().map(|Reverse(k)| (k >> 64) as Time)
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
