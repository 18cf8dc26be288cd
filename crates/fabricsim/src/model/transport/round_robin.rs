//! A NIC's round robin over its active flows.
//!
//! The NIC serves the flows that still have bytes to acknowledge in the order they
//! started, one packet each, resuming after the flow it served last. Over long links a
//! NIC holds hundreds of flows that have sent every byte and only wait for ACKs (a 120 km
//! round trip is 1.2 ms), and thousands of small flows come and go each millisecond; so
//! every operation here is O(1) or a scan of bit words, never a walk of the flows:
//!
//! - entries sit in start order in a vector; a flow that leaves becomes a tombstone (its
//!   bits cleared), and the vector is compacted once tombstones outnumber the living, so
//!   removal is O(1) amortised. A flow knows its entry ([`Slot`], kept in the flow and
//!   updated by the compaction's callback).
//! - one bit per entry says "alive", one "has bytes to send" (alive and not every byte
//!   sent since its last go-back-N rewind); the scan jumps from set bit to set bit, a
//!   word of 64 entries at a time, so flows waiting only for ACKs cost nothing.
//!
//! The order is the one a plain list gives (`Vec` of the living flows in start order, a
//! cursor that is an index into it, `cursor % len` where the scan starts, and the cursor
//! left in place when an entry leaves, so that an entry leaving before the cursor moves
//! the next start one flow further). The cursor is kept as that index (a rank among the
//! living), so results do not depend on tombstones or on how the scan is done.

/// An entry of a [`RoundRobin`]: where a flow sits until the next compaction.
pub type Slot = u32;

/// Active flows of one NIC in start order, with "alive" and "has bytes to send" bits.
/// Kept to 56 bytes so that a [`super::Host`] is 64: every transmission of the NIC
/// reads it.
#[derive(Clone, Debug, Default)]
pub struct RoundRobin {
    /// Flow ids, in the order they started; entries of flows that left are tombstones.
    fids: Vec<u32>,
    /// Per 64 entries, two words: [`LIVE`] (bit `i` set: entry `i` is a flow still
    /// active) and [`SENDABLE`] (alive and has bytes to send).
    bits: Vec<u64>,
    /// Living entries.
    n_live: u32,
    /// The list index (rank among the living) to look at first: one past the last served.
    cursor: u32,
}

impl RoundRobin {
    /// Heap bytes of the list (by capacity).
    pub fn heap_bytes(&self) -> u64 {
        crate::base::memory::vec_bytes(&self.fids) + crate::base::memory::vec_bytes(&self.bits)
    }
}

/// Offset of the "alive" word in a pair of [`RoundRobin::bits`].
const LIVE: usize = 0;
/// Offset of the "has bytes to send" word.
const SENDABLE: usize = 1;

/// Word `w` of kind `kind` (`LIVE` or `SENDABLE`) in interleaved `bits`.
#[inline(always)]
fn word(bits: &[u64], kind: usize, w: usize) -> u64 {
    bits[2 * w + kind]
}

/// The position of the `k`-th live entry (0-based); there must be more than `k`.
fn select(bits: &[u64], mut k: usize) -> usize {
    for w in 0..bits.len() / 2 {
        let word = word(bits, LIVE, w);
        // The first live entry (a NIC with one flow, or the cursor on the first) needs
        // no count: `count_ones` is a dozen instructions on the baseline x86-64 target,
        // which has no `popcnt`.
        if k == 0 && word != 0 {
            return w * 64 + word.trailing_zeros() as usize;
        }
        let n = word.count_ones() as usize;
        if k < n {
            let mut x = word;
            for _ in 0..k {
                x &= x - 1;
            }
            return w * 64 + x.trailing_zeros() as usize;
        }
        k -= n;
    }
    unreachable!("select beyond the set bits")
}

/// Live entries before position `i`.
fn rank(bits: &[u64], i: usize) -> usize {
    let (w, b) = (i / 64, i % 64);
    let full: usize = (0..w)
        .map(|k| word(bits, LIVE, k).count_ones() as usize)
        .sum();
    let part = if b == 0 {
        0
    } else {
        (word(bits, LIVE, w) & ((1u64 << b) - 1)).count_ones() as usize
    };
    full + part
}

impl RoundRobin {
    /// No active flow.
    pub fn is_empty(&self) -> bool {
        self.n_live == 0
    }

    /// Some flow has bytes to send (it may yet wait for its pacer or its window): a word
    /// per 64 entries, one for most NICs.
    #[inline(always)]
    pub fn has_sendable(&self) -> bool {
        match self.bits.as_slice() {
            // One word pair (up to 64 entries), most NICs: no iterator (10 instructions
            // a transmission, against 2).
            [_, sendable] => *sendable != 0,
            bits => bits.chunks_exact(2).any(|w| w[SENDABLE] != 0),
        }
    }

    /// Active flows.
    pub fn len(&self) -> usize {
        self.n_live as usize
    }

    /// Flow `fid` started: it joins the end with bytes to send. Returns its slot. Before
    /// that, if tombstones outnumber the living, the entries are compacted and
    /// `moved(fid, slot)` is called for every living flow with its new slot.
    pub fn push(&mut self, fid: u32, moved: impl FnMut(u32, Slot)) -> Slot {
        if self.fids.len() >= 64 && self.fids.len() >= 2 * self.len() {
            self.compact(moved);
        }
        let i = self.fids.len();
        self.fids.push(fid);
        if i.is_multiple_of(64) {
            self.bits.extend([0, 0]);
        }
        let (w, bit) = (i / 64, 1u64 << (i % 64));
        self.bits[2 * w + LIVE] |= bit;
        self.bits[2 * w + SENDABLE] |= bit;
        self.n_live += 1;
        i as Slot
    }

    /// Drops the tombstones, keeping the living in order (the cursor is a rank among the
    /// living, so it stays).
    fn compact(&mut self, mut moved: impl FnMut(u32, Slot)) {
        let old_bits = std::mem::take(&mut self.bits);
        let old = std::mem::take(&mut self.fids);
        self.bits = vec![0; 2 * self.len().div_ceil(64)];
        self.fids.reserve(self.len());
        for (i, &fid) in old.iter().enumerate() {
            let (w, bit) = (i / 64, 1u64 << (i % 64));
            if word(&old_bits, LIVE, w) & bit == 0 {
                continue;
            }
            let j = self.fids.len();
            self.fids.push(fid);
            let (v, to) = (j / 64, 1u64 << (j % 64));
            self.bits[2 * v + LIVE] |= to;
            if word(&old_bits, SENDABLE, w) & bit != 0 {
                self.bits[2 * v + SENDABLE] |= to;
            }
            moved(fid, j as Slot);
        }
    }

    /// The flow at `slot` is acknowledged in full: it leaves; the list's entries after it
    /// move up one and the cursor stays where it is.
    pub fn remove(&mut self, slot: Slot) {
        let (w, bit) = (slot as usize / 64, 1u64 << (slot % 64));
        debug_assert!(
            word(&self.bits, LIVE, w) & bit != 0,
            "removing a flow twice"
        );
        self.bits[2 * w + LIVE] &= !bit;
        self.bits[2 * w + SENDABLE] &= !bit;
        self.n_live -= 1;
    }

    /// The bytes-to-send state of the flow at `slot` becomes `v` (after it sent its last
    /// byte, a go-back-N rewind, or an ACK beyond what it sent).
    pub fn set_sendable(&mut self, slot: Slot, v: bool) {
        let (w, bit) = (slot as usize / 64, 1u64 << (slot % 64));
        debug_assert!(word(&self.bits, LIVE, w) & bit != 0);
        if v {
            self.bits[2 * w + SENDABLE] |= bit;
        } else {
            self.bits[2 * w + SENDABLE] &= !bit;
        }
    }

    /// The flow at `slot` was served: the next scan starts after it.
    pub fn served(&mut self, slot: Slot) {
        self.cursor = rank(&self.bits, slot as usize) as u32 + 1;
    }

    /// The flow at `slot` is served next again (its queue pair keeps the NIC's turn,
    /// `qp_turn.rs`).
    pub fn serve_again(&mut self, slot: Slot) {
        self.cursor = rank(&self.bits, slot as usize) as u32;
    }

    /// The flow at `slot`.
    pub fn fid(&self, slot: Slot) -> u32 {
        self.fids[slot as usize]
    }

    /// The slots with bytes to send, in round-robin order from the cursor: first those
    /// at or after it, then those before.
    pub fn sendable_from_cursor(&self) -> SendableIter<'_> {
        let n = self.fids.len();
        let start = if self.n_live == 0 {
            0
        } else {
            select(&self.bits, (self.cursor % self.n_live) as usize)
        };
        SendableIter {
            bits: &self.bits,
            next: start,
            end: n,
            wrap: Some(start),
        }
    }
}

/// Slots of a [`RoundRobin`] with bytes to send, over `[start, len)` then `[0, start)`.
pub struct SendableIter<'a> {
    /// The round robin's interleaved words.
    bits: &'a [u64],
    next: usize,
    end: usize,
    /// Where the second pass ends, while it is still to come.
    wrap: Option<usize>,
}

impl SendableIter<'_> {
    /// The first set bit in `[from, end)`.
    fn first_set(&self, from: usize, end: usize) -> Option<usize> {
        let mut w = from / 64;
        if from >= end {
            return None;
        }
        let mut bits = word(self.bits, SENDABLE, w) & (!0u64 << (from % 64));
        loop {
            if bits != 0 {
                let i = w * 64 + bits.trailing_zeros() as usize;
                return (i < end).then_some(i);
            }
            w += 1;
            if w * 64 >= end {
                return None;
            }
            bits = word(self.bits, SENDABLE, w);
        }
    }
}

impl Iterator for SendableIter<'_> {
    type Item = Slot;

    fn next(&mut self) -> Option<Slot> {
        loop {
            if let Some(i) = self.first_set(self.next, self.end) {
                self.next = i + 1;
                return Some(i as Slot);
            }
            let stop = self.wrap.take()?;
            self.next = 0;
            self.end = stop;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    /// The plain list the round robin must match: the living flows in start order with
    /// their bytes-to-send flag, and a cursor index that removals leave in place.
    #[derive(Default)]
    struct Plain {
        flows: Vec<(u32, bool)>,
        cursor: usize,
    }

    impl Plain {
        fn order(&self) -> Vec<u32> {
            let n = self.flows.len();
            (0..n)
                .map(|k| (self.cursor + k) % n)
                .filter(|&i| self.flows[i].1)
                .map(|i| self.flows[i].0)
                .collect()
        }
    }

    /// The round robin with the slot bookkeeping a NIC does.
    #[derive(Default)]
    struct Kept {
        rr: RoundRobin,
        slot: HashMap<u32, Slot>,
    }

    impl Kept {
        fn push(&mut self, fid: u32) {
            let slots = &mut self.slot;
            let s = self.rr.push(fid, |f, s| {
                slots.insert(f, s);
            });
            self.slot.insert(fid, s);
        }
        fn order(&self) -> Vec<u32> {
            self.rr
                .sendable_from_cursor()
                .map(|s| self.rr.fid(s))
                .collect()
        }
    }

    #[test]
    fn matches_a_plain_list_through_pushes_removals_compactions_and_flag_changes() {
        // A deterministic mix of operations over lists that cross word boundaries and
        // shrink far enough to compact.
        let mut kept = Kept::default();
        let mut plain = Plain::default();
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next_fid = 0u32;
        let mut compactions = 0;
        for step in 0..40_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            // Phases of growth and of shrinking, so that tombstones pile up.
            let grow = (step / 2_000) % 2 == 0;
            let before = kept.rr.fids.len();
            match x % 8 {
                0..=2 if grow => {
                    kept.push(next_fid);
                    plain.flows.push((next_fid, true));
                    next_fid += 1;
                }
                0 => {
                    kept.push(next_fid);
                    plain.flows.push((next_fid, true));
                    next_fid += 1;
                }
                1..=3 if !plain.flows.is_empty() => {
                    let j = (x >> 8) as usize % plain.flows.len();
                    let fid = plain.flows.remove(j).0;
                    kept.rr.remove(kept.slot.remove(&fid).unwrap());
                }
                4 | 5 if !plain.flows.is_empty() => {
                    let j = (x >> 8) as usize % plain.flows.len();
                    let v = (x >> 40) & 1 == 1;
                    plain.flows[j].1 = v;
                    kept.rr.set_sendable(kept.slot[&plain.flows[j].0], v);
                }
                _ if !plain.flows.is_empty() => {
                    let j = (x >> 8) as usize % plain.flows.len();
                    kept.rr.served(kept.slot[&plain.flows[j].0]);
                    plain.cursor = j + 1;
                }
                _ => {}
            }
            if kept.rr.fids.len() < before {
                compactions += 1;
            }
            assert_eq!(kept.rr.len(), plain.flows.len());
            assert_eq!(kept.order(), plain.order(), "step {step}");
            for &(fid, _) in &plain.flows {
                assert_eq!(kept.rr.fid(kept.slot[&fid]), fid);
            }
        }
        assert!(next_fid > 5_000, "the mix pushed {next_fid} flows");
        assert!(compactions > 3, "only {compactions} compactions");
    }

    #[test]
    fn removal_keeps_the_cursor_index() {
        let mut k = Kept::default();
        for f in 0..5 {
            k.push(f);
        }
        k.rr.served(k.slot[&2]); // next: list entry 3 (flow 3)
        k.rr.remove(k.slot[&1]); // entries move up: list entry 3 is now flow 4
        assert_eq!(k.order(), vec![4, 0, 2, 3]);
        k.rr.set_sendable(k.slot[&0], false);
        assert_eq!(k.order(), vec![4, 2, 3]);
    }

    #[test]
    fn select_and_rank_are_inverse_on_live_bits() {
        let live = [0b1011_0000u64, 0, u64::MAX, 1 << 63];
        // Interleaved with "sendable" words that must not count.
        let bits: Vec<u64> = live.iter().flat_map(|&l| [l, !l]).collect();
        let set: Vec<usize> = (0..256)
            .filter(|&i| live[i / 64] >> (i % 64) & 1 == 1)
            .collect();
        for (k, &i) in set.iter().enumerate() {
            assert_eq!(select(&bits, k), i);
            assert_eq!(rank(&bits, i), k);
        }
    }

    #[test]
    fn a_nic_is_one_cache_line_long() {
        assert_eq!(std::mem::size_of::<RoundRobin>(), 56);
        assert_eq!(std::mem::size_of::<crate::model::transport::Host>(), 64);
    }
}
