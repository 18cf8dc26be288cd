//! The event queue.
//!
//! An event is a time plus the component to wake; components keep their own state and
//! the payload of an event is only "who" (htsim's design). Events are ordered by
//! (time, event key), the key being the event's kind (in the order of [`code`]) and its
//! component's index. Nothing in the order depends on when or by whom an event was
//! scheduled: two events at one picosecond fire in key order, and two with equal keys
//! are the same event (an event carries nothing but its key), so their order cannot
//! matter. A run is therefore a pure function of its inputs, and would be the same if
//! the fabric were cut into parts that each run their own queue and hand each other
//! events: an order by insertion would depend on which part scheduled first.
//!
//! The queue is a calendar (a timing wheel): almost every event of a packet simulation is
//! scheduled a little ahead of the current time (a serialization time, a link delay), so
//! time is cut into slots of 2^`shift` ps and a wheel of [`SLOTS`] slots covers the next
//! `SLOTS << shift` ps. An event in that window is appended to its slot (a few integer
//! operations, no comparisons); when the loop reaches a slot, its events are put in
//! (time, key) order, often already the case, and popped in turn. Events beyond
//! the window (timers) wait in a binary heap until the wheel comes near them. The slot
//! width is tuned to the model ([`EventQueue::set_slots`]): a few events a slot at the
//! model's full-load event rate, and a window that covers at least a packet's
//! serialization plus a link delay.

use crate::base::block_pool::{BlockFifo, BlockPool};
use crate::base::ids::{FlowId, HostId, LinkId, PortId};
use crate::base::trusted::Trusted;
use crate::base::units::Time;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// The component an event wakes. Each variant's discriminant is its kind's [`code`], so
/// that decoding an event from the queue is its code and index, not a branch per kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub enum Event {
    /// Faults: step `i` of the fault timeline (a fault acts, or routing re-converges).
    Fault(u32) = code::FAULT,
    /// The head packet of the link reaches the far end.
    LinkArrive(LinkId) = code::LINK_ARRIVE,
    /// Credit flow control: credit returns reach the egress port.
    CreditReturn(PortId) = code::CREDIT,
    /// Faults: the sender of the link hears the receiver's link-level replay request.
    Replay(LinkId) = code::REPLAY,
    /// PFC: refresh the pause sent on the ingress port before it expires.
    PfcRefresh(PortId) = code::PFC_REFRESH,
    /// Time to start the flows whose start time has come.
    FlowArrivals = code::FLOW_ARRIVALS,
    /// Hardware collectives: timer `i` of the collective engine.
    Collective(u32) = code::COLLECTIVE,
    /// GSE: the grant scheduler of the destination host may grant.
    Grant(HostId) = code::GRANT,
    /// GSE: reorder-timeout check of stream `n`.
    Reorder(u32) = code::REORDER,
    /// Retransmission timer of the flow.
    Rto(FlowId) = code::RTO,
    /// Receiver-side CNP pacing timer of the flow.
    CnpTimer(FlowId) = code::CNP_TIMER,
    /// The port may be able to start a transmission.
    PortWake(PortId) = code::PORT_WAKE,
    /// Record time-series samples.
    Sample = code::SAMPLE,
}

use crate::base::ids::IDX_BITS;
const KIND_BITS: u32 = 4;
/// Bits of an encoded event (kind and index).
const EV_BITS: u32 = IDX_BITS + KIND_BITS;
const EV_MASK: u64 = (1 << EV_BITS) - 1;
use crate::base::ids::MAX_INDEX;

/// Event kinds as the 4-bit code stored in the queue, defined once: [`Event`]'s encoding
/// and the look-ahead ([`EventQueue::peek_codes`]) both use these.
pub mod code {
    // The numbers are also the order of events at one picosecond (see the module
    // comment): the world changes first (a fault), then frames and link-level signals
    // arrive, then hosts act on timers, then ports pick their next frame among everything
    // that arrived, and a sample sees the picosecond's end state.
    /// [`super::Event::Fault`]: a fault at a flow's start time acts before the flow starts.
    pub const FAULT: u32 = 0;
    /// [`super::Event::LinkArrive`].
    pub const LINK_ARRIVE: u32 = 1;
    /// [`super::Event::CreditReturn`].
    pub const CREDIT: u32 = 2;
    /// [`super::Event::Replay`].
    pub const REPLAY: u32 = 3;
    /// [`super::Event::PfcRefresh`].
    pub const PFC_REFRESH: u32 = 4;
    /// [`super::Event::FlowArrivals`].
    pub const FLOW_ARRIVALS: u32 = 5;
    /// [`super::Event::Collective`].
    pub const COLLECTIVE: u32 = 6;
    /// [`super::Event::Grant`].
    pub const GRANT: u32 = 7;
    /// [`super::Event::Reorder`].
    pub const REORDER: u32 = 8;
    /// [`super::Event::Rto`].
    pub const RTO: u32 = 9;
    /// [`super::Event::CnpTimer`].
    pub const CNP_TIMER: u32 = 10;
    /// [`super::Event::PortWake`].
    pub const PORT_WAKE: u32 = 11;
    /// [`super::Event::Sample`].
    pub const SAMPLE: u32 = 12;
    /// The largest code.
    pub const LAST: u32 = SAMPLE;
}

impl Event {
    #[inline(always)]
    fn encode(self) -> u64 {
        let (k, i) = match self {
            Event::LinkArrive(i) => (code::LINK_ARRIVE, i.0),
            Event::PortWake(i) => (code::PORT_WAKE, i.0),
            Event::FlowArrivals => (code::FLOW_ARRIVALS, 0),
            Event::Rto(i) => (code::RTO, i.0),
            Event::CnpTimer(i) => (code::CNP_TIMER, i.0),
            Event::PfcRefresh(i) => (code::PFC_REFRESH, i.0),
            Event::Sample => (code::SAMPLE, 0),
            Event::Reorder(i) => (code::REORDER, i),
            Event::Grant(i) => (code::GRANT, i.0),
            Event::CreditReturn(i) => (code::CREDIT, i.0),
            Event::Fault(i) => (code::FAULT, i),
            Event::Replay(i) => (code::REPLAY, i.0),
            Event::Collective(i) => (code::COLLECTIVE, i),
        };
        debug_assert!(i <= MAX_INDEX);
        ((k as u64) << IDX_BITS) | i as u64
    }
    /// The event of an entry's low 32 bits (see [`EventQueue::peek_codes`]: nothing
    /// else is there, so no mask): its kind's code is its discriminant and its index
    /// its field, so the event is the two words as they are (a `match` building each
    /// variant took 3.4 instructions an event more at k = 16, cachegrind).
    #[inline(always)]
    fn decode(v: u32) -> Event {
        let kind = v >> IDX_BITS;
        // Codes above the last kind are never encoded (a panic branch here costs less
        // than mapping them to a kind).
        if kind > code::LAST {
            unreachable!("event code {v:#x} was never encoded");
        }
        // SAFETY: `Event` is `repr(u32)`: a `u32` discriminant, then the variant's field
        // (every one a `u32` or a `repr(transparent)` id of one; the two variants
        // without a field leave the second word as padding). `kind` is a discriminant
        // of `Event` (0..=LAST, each a variant's, `codes_are_the_discriminants`).
        #[allow(unsafe_code)]
        unsafe {
            std::mem::transmute::<[u32; 2], Event>([kind, v & MAX_INDEX])
        }
    }
}

/// Slots in the wheel (a power of two).
pub const SLOTS: usize = 1 << SLOT_BITS;
/// The window spans this many horizons under [`EventQueue::set_horizon`] (the width from
/// the horizon alone, where the event rate is not known). With one, a slot
/// held one or two events on average and moving to the next slot (a bitmap scan, a
/// copy, a sort) cost about 50 instructions an event at k = 8. Two share that cost
/// (cachegrind: -1.7 % at k = 8, k = 16 unchanged); four saved more at k = 8 (-3.3 %)
/// but cost 1.3 % at k = 16, whose busier slots then sort more.
const HORIZONS_PER_WINDOW: u64 = 2;
/// Events a slot holds on average when sized by [`EventQueue::set_slots`]: fewer, and
/// moving to the next slot costs more than its events; more, and sorting them does
/// (cachegrind, `bench --child --k 8`: 3 per slot 584.7 M instructions, 6 per slot
/// 586.1 M, 1.5 per slot, the width the horizon alone gave, 593.4 M).
const EVENTS_PER_SLOT: u64 = 3;
const SLOT_BITS: u32 = 12;
const SLOT_MASK: u64 = SLOTS as u64 - 1;
/// Entries a slot holds inline (four cache lines); more go to the slot's spill list.
const INLINE: usize = 32;
/// Entries per block of the spill lists.
const SPILL_BLOCK: usize = 32;
/// [`EventQueue::peek_codes`] where no event is known.
pub const NO_EVENT: u32 = u32::MAX;

/// The kind of an event code from [`EventQueue::peek_codes`] (one of [`code`]) and its
/// component index.
#[inline(always)]
pub fn peek_code(code: u32) -> (u32, u32) {
    (code >> IDX_BITS, code & MAX_INDEX)
}

/// `EventQueue::ahead` when there is no slot to look into.
const NO_SLOT: usize = usize::MAX;
/// The look-ahead entries where nothing is known (`EventQueue::drain`).
const FILLERS: [u64; 4] = [NO_EVENT as u64; 4];
/// Widest slot: 2^12 ps (4.1 ns), so that the time within a slot fits the key's top bits.
const MAX_SHIFT: u32 = 12;
/// Narrowest slot: 2 ps.
const MIN_SHIFT: u32 = 1;
// A slot entry is one `u64`: the time within the slot in the top `shift` bits (at most
// 12), the event (its key) in the low 28. Sorting entries as integers orders them by
// (time, key).
const _: () = assert!(MAX_SHIFT + EV_BITS <= 64);

/// Pending events ordered by (time, event key), in a calendar of [`SLOTS`] slots of
/// 2^`shift` ps plus a binary heap for events beyond the calendar's window.
///
/// It relies on the event queue of a discrete-event simulation being *monotone*: nothing
/// is scheduled before the last event popped. Within the window an event is appended to
/// its slot; its entry is (time within the slot, key) as one integer, so sorting a slot's
/// entries orders them. Events for the slot being drained (same time or a few ps ahead)
/// are inserted in order into the drained run. Far events move into the wheel when the
/// window reaches their slot. A slot's entries beyond its inline ones go to a list of
/// blocks lent from one pool ([`crate::base::block_pool`]) and returned when the slot drains;
/// the pool, the slots and the drain buffer keep their capacity, so a steady run
/// allocates nothing.
pub struct EventQueue {
    /// log2 of the slot width in ps.
    shift: u32,
    /// 64 - `shift`: where an entry's time within its slot starts.
    lsh: u32,
    /// Absolute number (time >> shift) of the slot being drained.
    cur: u64,
    /// First time of the current slot.
    base: Time,
    /// Entries of the current slot in pop order, `drain[head..end]` still pending,
    /// followed by four entries for [`Self::peek_codes`] (with look-ahead, the next
    /// occupied slot's first entries; else fillers or stale entries); more stale entries
    /// may follow. Always at least `end + 4` long, so `peek_codes` reads unchecked.
    drain: Vec<u64>,
    head: usize,
    end: usize,
    /// Entries per slot (inline, then spilled).
    counts: Box<[u32; SLOTS]>,
    /// `INLINE` entries per slot.
    inline: Box<[[u64; INLINE]; SLOTS]>,
    /// Entries beyond `INLINE`, per slot, in blocks of `spill_blocks`: a block goes back
    /// as soon as its slot is drained, so spills hold the most entries spilled at once
    /// (a vector per slot kept, each, the longest burst any slot had seen: 1.5 KB a host
    /// at k = 32).
    spill: Box<[BlockFifo]>,
    spill_blocks: BlockPool<u64, SPILL_BLOCK>,
    /// Bit i set when slot i holds entries.
    occupied: Box<[u64; SLOTS / 64]>,
    /// Bit w set when word w of `occupied` is not zero: the next occupied slot is found
    /// in a few steps however far it is, and an empty wheel is known at once (with no
    /// count of the wheel's entries, which cost an instruction a push).
    summary: u64,
    /// Index of the first occupied slot after the current one when it was entered
    /// (`NO_SLOT` when none or when look-ahead is off): where [`Self::peek_codes`] looks
    /// past the current slot.
    ahead: usize,
    /// Keep `ahead` up to date.
    lookahead: bool,
    /// Events beyond the window: key time(64) . event(28) in the low half.
    far: BinaryHeap<Reverse<u128>>,
    /// Slot of the earliest far event (`u64::MAX` when none).
    far_slot: u64,
    popped: u64,
}

/// A boxed array of `N` copies of `x` (built on the heap: the wheel's arrays are too
/// large for the stack). Fixed lengths let the compiler drop the bounds checks of
/// indices masked to the wheel's size.
fn boxed_array<T: Copy, const N: usize>(x: T) -> Box<[T; N]> {
    vec![x; N]
        .into_boxed_slice()
        .try_into()
        .unwrap_or_else(|_| unreachable!("a vector of N items"))
}

impl Default for EventQueue {
    fn default() -> Self {
        Self::with_capacity(0)
    }
}

impl EventQueue {
    /// An empty queue with 1 ns slots; `cap` is a hint for the number of pending events.
    pub fn with_capacity(cap: usize) -> Self {
        EventQueue {
            shift: 10,
            lsh: 64 - 10,
            cur: 0,
            base: 0,
            drain: {
                let mut d = Vec::with_capacity(256);
                d.extend_from_slice(&FILLERS);
                d
            },
            head: 0,
            end: 0,
            counts: boxed_array(0),
            inline: boxed_array([0; INLINE]),
            spill: vec![BlockFifo::new(); SLOTS].into_boxed_slice(),
            spill_blocks: BlockPool::new(0),
            occupied: boxed_array(0),
            summary: 0,
            ahead: NO_SLOT,
            lookahead: false,
            far: BinaryHeap::with_capacity(cap / 16),
            far_slot: u64::MAX,
            popped: 0,
        }
    }

    /// Sizes the slots so that the window spans at least [`HORIZONS_PER_WINDOW`] times
    /// `horizon` ps (the longest a packet event is scheduled ahead: serialization plus
    /// link delay), within limits. Pending events are kept, in order.
    pub fn set_horizon(&mut self, horizon: Time) {
        let per_slot = horizon.div_ceil(SLOTS as u64 / HORIZONS_PER_WINDOW).max(1);
        self.set_shift(64 - (per_slot - 1).leading_zeros());
    }

    /// Sizes the slots for a model whose events come about `gap` ps apart: a slot about
    /// [`EVENTS_PER_SLOT`] events wide, and the window at least `horizon` ps (the
    /// longest a packet event is scheduled ahead), within limits. The width follows the
    /// model's event rate, not only its horizon: with the same links, a model of 8 times
    /// the ports (k = 16 against k = 8) put 8 times the events in each slot, which then
    /// spilled and sorted more. Pending events are kept, in order.
    pub fn set_slots(&mut self, horizon: Time, gap: Time) {
        let least = 64 - (horizon.div_ceil(SLOTS as u64).max(1) - 1).leading_zeros();
        let width = gap.saturating_mul(EVENTS_PER_SLOT).max(1);
        // The power of two nearest to `width` (in log scale).
        let floor = 63 - width.leading_zeros();
        let near = floor + u32::from(width > (1 << floor) + (1 << floor) / 2);
        self.set_shift(near.max(least));
    }

    /// Slots of 2^`shift` ps (clamped to the limits); pending events are kept, in order.
    fn set_shift(&mut self, shift: u32) {
        let shift = shift.clamp(MIN_SHIFT, MAX_SHIFT);
        if shift == self.shift {
            return;
        }
        // Every pending event is at or after the current slot's start.
        let now = self.base;
        let popped = self.popped;
        let mut pending = Vec::with_capacity(self.len());
        while let Some(e) = self.pop() {
            pending.push(e);
        }
        self.shift = shift;
        self.lsh = 64 - shift;
        self.cur = now >> shift;
        self.base = self.cur << shift;
        self.popped = popped;
        self.ahead = NO_SLOT;
        for (t, ev) in pending {
            self.push(t, ev);
        }
    }

    /// Schedules `ev` at `time` (never earlier than the last event popped).
    #[inline(always)]
    pub fn push(&mut self, time: Time, ev: Event) {
        let ev = ev.encode();
        let s = time >> self.shift;
        let d = s.wrapping_sub(self.cur);
        if d.wrapping_sub(1) < SLOT_MASK {
            // 1 <= d < SLOTS: in the window, after the current slot.
            self.put(s, time, ev);
        } else {
            self.push_other(time, ev);
        }
    }

    /// Appends an event to the wheel slot `s` (inside the window).
    #[inline(always)]
    fn put(&mut self, s: u64, time: Time, ev: u64) {
        let i = (s & SLOT_MASK) as usize;
        let n = self.counts[i];
        let key = (time << self.lsh) | ev;
        if (n as usize) < INLINE {
            self.inline[i][n as usize] = key;
            if n == 0 {
                self.occupied[i >> 6] |= 1 << (i & 63);
                self.summary |= 1 << (i >> 6);
            }
        } else {
            self.put_spill(i, n, key);
        }
        self.counts[i] = n + 1;
    }

    /// Appends entry `key` (the `n`-th) to slot `i` whose inline entries are full.
    /// Inlined: the benchmark's hosts send in lockstep, so bursts of one picosecond
    /// spill often, and a call for each spilled entry cost more than the code it adds
    /// (cachegrind, k = 16: -0.23 %; fewer I1 misses, 0.94 M against 1.14 M).
    #[inline(always)]
    fn put_spill(&mut self, i: usize, n: u32, key: u64) {
        debug_assert_eq!(self.spill[i].len() + INLINE, n as usize);
        // Into the tail block if it has room: the new-block path, out of line, would
        // otherwise give this one its stack frame (a block of fill) and register saves.
        if !self.spill[i].push_back_in_tail(&mut self.spill_blocks, key) {
            self.put_spill_block(i, key);
        }
    }

    /// [`Self::put_spill`] when the slot's tail block is full (or it has none).
    #[cold]
    #[inline(never)]
    fn put_spill_block(&mut self, i: usize, key: u64) {
        self.spill[i].push_back(&mut self.spill_blocks, key);
    }

    /// An event for the slot being drained, or beyond the window.
    #[cold]
    #[inline(never)]
    fn push_other(&mut self, time: Time, ev: u64) {
        let s = time >> self.shift;
        if s <= self.cur {
            // The current slot (or, if a caller broke monotonicity, earlier: clamped so it
            // still pops next rather than being lost): in (time, key) order among the
            // slot's pending entries.
            let off = time.saturating_sub(self.base).min((1 << self.shift) - 1);
            let key = (off << self.lsh) | ev;
            let pending = &self.drain[self.head..self.end];
            let pos = self.head + pending.partition_point(|&k| k <= key);
            // Past the look-ahead entries the buffer holds stale ones (see `enter`):
            // not worth shifting.
            self.drain.truncate(self.end + 4);
            self.drain.insert(pos, key);
            self.end += 1;
        } else {
            self.far.push(Reverse(((time as u128) << 64) | ev as u128));
            self.far_slot = self.far_slot.min(s);
        }
    }

    /// Removes and returns the earliest event.
    #[inline(always)]
    pub fn pop(&mut self) -> Option<(Time, Event)> {
        if self.head < self.end {
            let k = *self.drain.at(self.head);
            self.head += 1;
            self.popped += 1;
            return Some((self.base + (k >> self.lsh), Event::decode(k as u32)));
        }
        self.advance()
    }

    /// Removes and returns the earliest event if it is due before `end`. Unlike a `pop`
    /// followed by [`Self::unpop`], it never moves the calendar to a slot that starts at
    /// or after `end`, so events may still be pushed for any time from `end` on (a
    /// shard's window, `sim/shards/`: frames handed over arrive at or after its end).
    #[inline(always)]
    pub fn pop_before(&mut self, end: Time) -> Option<(Time, Event)> {
        if self.head < self.end {
            // (`head < end <= drain.len()`, as in `pop`.)
            let k = *self.drain.at(self.head);
            let t = self.base + (k >> self.lsh);
            if t >= end {
                return None;
            }
            self.head += 1;
            self.popped += 1;
            return Some((t, Event::decode(k as u32)));
        }
        // Enter the next slot only if it starts before `end`: a later push (at `end` or
        // after) then still lands at or after the current slot's start.
        let near = self.next_occupied();
        let next = match near {
            Some(s) => s.min(self.far_slot),
            None => self.far_slot,
        };
        if next == u64::MAX || next << self.shift >= end {
            return None;
        }
        // The slot starts before `end` but its first event may not: then it stays
        // pending (the slot is entered, which is safe: it starts before `end`).
        let (t, ev) = self.advance_from(near)?;
        if t >= end {
            self.unpop();
            return None;
        }
        Some((t, ev))
    }

    /// Lets [`Self::peek_codes`] look past the current slot (at a small cost per slot).
    pub fn set_lookahead(&mut self, on: bool) {
        self.lookahead = on;
        self.ahead = NO_SLOT;
    }

    /// The first occupied slot after the current one, if the wheel holds any.
    #[inline(always)]
    fn next_occupied(&self) -> Option<u64> {
        self.next_occupied_after(self.cur)
    }

    /// The first occupied slot after slot `cur`, if the wheel holds any.
    #[inline(always)]
    fn next_occupied_after(&self, cur: u64) -> Option<u64> {
        const _: () = assert!(SLOTS / 64 == 64, "one summary bit per word of `occupied`");
        let s = cur + 1;
        let i = (s & SLOT_MASK) as usize;
        let wi = i >> 6;
        // The slots from `i` to the end of its word, then the words after it, then from
        // the wheel's start: the window's later slots, before `i`.
        let w = self.occupied[wi] & (!0u64 << (i & 63));
        let j = if w != 0 {
            (wi << 6) | w.trailing_zeros() as usize
        } else {
            let later = self.summary & (!1u64 << wi);
            let v = if later != 0 {
                later.trailing_zeros() as usize
            } else if self.summary != 0 {
                self.summary.trailing_zeros() as usize
            } else {
                return None;
            };
            (v << 6) | self.occupied[v & 63].trailing_zeros() as usize
        };
        // Slot index `j` is `(j - i) mod SLOTS` slots after `s`.
        Some(s + (j.wrapping_sub(i) & SLOT_MASK as usize) as u64)
    }

    /// Moves to the next slot holding events and pops its first one.
    #[inline(never)]
    fn advance(&mut self) -> Option<(Time, Event)> {
        let near = self.next_occupied();
        self.advance_to(near)
    }

    /// [`Self::advance`] for a caller that has just found the next occupied slot,
    /// `near` (`pop_before`: the scan is not made twice).
    #[inline(never)]
    fn advance_from(&mut self, near: Option<u64>) -> Option<(Time, Event)> {
        self.advance_to(near)
    }

    /// Moves to the next slot holding events, `near` being the next occupied slot of
    /// the wheel, and pops its first one.
    #[inline(always)]
    fn advance_to(&mut self, near: Option<u64>) -> Option<(Time, Event)> {
        let next = match near {
            // The common case: the next slot is in the wheel and no far event is due to
            // enter the window.
            Some(s) if self.far_slot > s + SLOT_MASK => s,
            near => return self.advance_far(near),
        };
        self.enter(next);
        if self.lookahead {
            self.ahead = self
                .next_occupied_after(next)
                .map_or(NO_SLOT, |s| (s & SLOT_MASK) as usize);
            self.preview();
        }
        self.first()
    }

    /// Writes the look-ahead entries after the current slot's: the next occupied slot's
    /// first four entries as they stand (not sorted yet), or fillers. Four stores, not a
    /// copy of a variable length (a `memcpy` call and a loop of fillers).
    #[inline(always)]
    fn preview(&mut self) {
        let mut next = FILLERS;
        if self.ahead != NO_SLOT {
            let i = self.ahead & SLOT_MASK as usize;
            let (n, inline) = (self.counts[i] as usize, &self.inline[i]);
            for (j, x) in next.iter_mut().enumerate() {
                if j < n {
                    *x = inline[j];
                }
            }
        }
        let end = self.end;
        match self.drain.get_mut(end..end + 4) {
            Some(d) => d.copy_from_slice(&next),
            None => {
                self.drain.truncate(end);
                self.drain.extend_from_slice(&next);
            }
        }
    }

    /// [`Self::advance`] when far events come into the window (or the wheel is empty).
    #[cold]
    #[inline(never)]
    fn advance_far(&mut self, near: Option<u64>) -> Option<(Time, Event)> {
        let next = match near {
            Some(s) => s.min(self.far_slot),
            None if self.far.is_empty() => {
                self.drain.clear();
                self.drain.extend_from_slice(&FILLERS);
                self.head = 0;
                self.end = 0;
                return None;
            }
            None => self.far_slot,
        };
        // Far events whose slot is now inside the window enter it, in order, before any
        // later event can be appended to their slot.
        while let Some(&Reverse(k)) = self.far.peek() {
            let t = (k >> 64) as u64;
            if (t >> self.shift) - next > SLOT_MASK {
                break;
            }
            self.far.pop();
            self.put(t >> self.shift, t, k as u64 & EV_MASK);
        }
        self.far_slot = self
            .far
            .peek()
            .map_or(u64::MAX, |Reverse(k)| ((k >> 64) as u64) >> self.shift);
        self.enter(next);
        self.ahead = NO_SLOT;
        if self.lookahead {
            self.preview();
        }
        self.first()
    }

    /// Makes slot `next` (occupied) the current one: its entries go to the drain buffer
    /// in pop order.
    #[inline(always)]
    fn enter(&mut self, next: u64) {
        self.cur = next;
        self.base = next << self.shift;
        let i = (next & SLOT_MASK) as usize;
        let n = self.counts[i] as usize;
        self.counts[i] = 0;
        let w = &mut self.occupied[i >> 6];
        *w &= !(1 << (i & 63));
        if *w == 0 {
            self.summary &= !(1 << (i >> 6));
        }
        self.head = 0;
        self.end = n;
        if n > INLINE {
            return self.enter_spilled(i, n);
        }
        // The buffer keeps at least `INLINE` + 4 entries, whatever it held before (stale
        // past `end` and the look-ahead entries): the slot's entries are written in
        // place, with no `memcpy` call and no length to keep.
        if self.drain.len() < INLINE + 4 {
            self.drain.resize(INLINE + 4, NO_EVENT as u64);
        }
        let d = &mut self.drain[..INLINE + 4];
        let src = &self.inline[i];
        // Copied in insertion-sort order: entries mostly arrive in time order already,
        // so each is first compared with the largest so far (held in a register), and
        // only one that comes before it searches back. (By index: as
        // `src[..n].iter().enumerate()` the loop cost 6 instructions an event more at
        // k = 16, cachegrind.)
        let mut last = src[0];
        d[0] = last;
        #[allow(clippy::needless_range_loop)]
        for j in 1..n {
            let k = src[j];
            if k >= last {
                d[j] = k;
                last = k;
                continue;
            }
            let mut m = j;
            while m > 0 && d[m - 1] > k {
                d[m] = d[m - 1];
                m -= 1;
            }
            d[m] = k;
        }
    }

    /// [`Self::enter`] for a slot with spilled entries.
    #[cold]
    #[inline(never)]
    fn enter_spilled(&mut self, i: usize, n: usize) {
        self.drain.clear();
        self.drain.extend_from_slice(&self.inline[i]);
        debug_assert_eq!(self.spill[i].len() + INLINE, n);
        self.spill[i].drain_into(&mut self.spill_blocks, &mut self.drain);
        // Large slots are mostly bursts of events at one time, already in order.
        if !self.drain.is_sorted() {
            self.drain.sort_unstable();
        }
        // The look-ahead entries' places (`preview` fills them when it runs).
        self.drain.extend_from_slice(&FILLERS);
    }

    /// Pops the first entry of a slot just entered.
    #[inline(always)]
    fn first(&mut self) -> Option<(Time, Event)> {
        let k = *self.drain.at(0);
        self.head = 1;
        self.popped += 1;
        Some((self.base + (k >> self.lsh), Event::decode(k as u32)))
    }

    /// Puts back the event `pop` just returned (it pops next again). Only valid right
    /// after a `pop` that returned an event.
    pub fn unpop(&mut self) {
        debug_assert!(self.head > 0);
        self.head -= 1;
        self.popped -= 1;
    }

    /// The events 0..4 places ahead in pop order, as [`peek_code`] values (`NO_EVENT`
    /// where unknown): the current slot's next entries, then, past it, the next occupied
    /// slot's first entries, not sorted yet, so that order is approximate. For prefetching
    /// only, never for semantics; needs [`Self::set_lookahead`].
    #[inline(always)]
    pub fn peek_codes(&self) -> [u32; 4] {
        let (h, d) = (self.head, &self.drain[..]);
        // `head <= end` and the buffer is at least `end + 4` long (see `drain`).
        debug_assert!(h <= self.end && self.end + 4 <= d.len());
        // An entry's low 32 bits are its event alone (its time is in bits 52 and up), and
        // a filler's are `NO_EVENT`: no mask to apply, nor for the caller to test a kind.
        const _: () = assert!(64 - MAX_SHIFT >= 32 && EV_BITS <= 32);
        [
            *d.at(h) as u32,
            *d.at(h + 1) as u32,
            *d.at(h + 2) as u32,
            *d.at(h + 3) as u32,
        ]
    }

    /// Time of the earliest event.
    pub fn peek_time(&self) -> Option<Time> {
        if self.head < self.end {
            return Some(self.base + (self.drain[self.head] >> self.lsh));
        }
        let near = self.next_occupied().map(|s| {
            let i = (s & SLOT_MASK) as usize;
            let n = self.counts[i] as usize;
            let inline = &self.inline[i][..n.min(INLINE)];
            let spilled = self.spill[i].iter(&self.spill_blocks);
            let first = inline.iter().chain(spilled).min().copied();
            (s << self.shift) + (first.expect("occupied slot") >> self.lsh)
        });
        let far = self.far.peek().map(|Reverse(k)| (k >> 64) as Time);
        match (near, far) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Events pending (a sum over the wheel's slots: not for every event).
    pub fn len(&self) -> usize {
        let in_wheel: usize = self.counts.iter().map(|&n| n as usize).sum();
        self.end - self.head + in_wheel + self.far.len()
    }

    /// True when nothing is pending.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Events processed so far.
    pub fn popped(&self) -> u64 {
        self.popped
    }

    /// Counts `n` events popped elsewhere (the shards of a parallel run, gathered).
    pub fn add_popped(&mut self, n: u64) {
        self.popped += n;
    }
}

#[cfg(test)]
mod tests;
