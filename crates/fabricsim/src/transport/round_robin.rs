//! A NIC's round robin over its active flows.
//!
//! The NIC serves the flows that still have bytes to acknowledge in the order they
//! started, one packet each, resuming after the flow it served last. Over long links a
//! NIC holds hundreds of flows that have sent every byte and only wait for ACKs (a 120 km
//! round trip is 1.2 ms); scanning past them on every transmission once made the NIC's
//! choice linear in them. So beside the list of active flows the round robin keeps one
//! bit per entry, set while the flow has bytes to send, and the scan jumps from set bit
//! to set bit, a word of 64 entries at a time. The order and the cursor are exactly the
//! list's (a cursor that is an index into it, left in place when an entry before it
//! leaves), so results do not depend on how the scan is done.

/// Active flows of one NIC in start order, with a "has bytes to send" bit each.
#[derive(Clone, Debug, Default)]
pub struct RoundRobin {
    /// Flow ids, in the order they started.
    fids: Vec<u32>,
    /// Bit `i` set: `fids[i]` has bytes to send (not every byte sent since its last
    /// go-back-N rewind).
    sendable: Vec<u64>,
    /// The entry to look at first: one past the last served (may be `>= len`).
    cursor: usize,
}

impl RoundRobin {
    /// No active flow.
    pub fn is_empty(&self) -> bool {
        self.fids.is_empty()
    }

    /// Active flows.
    pub fn len(&self) -> usize {
        self.fids.len()
    }

    /// Flow `fid` started: it joins the end with bytes to send.
    pub fn push(&mut self, fid: u32) {
        let i = self.fids.len();
        self.fids.push(fid);
        if i.is_multiple_of(64) {
            self.sendable.push(0);
        }
        self.sendable[i / 64] |= 1 << (i % 64);
    }

    /// Flow `fid` is acknowledged in full: it leaves, the entries after it move up one
    /// and the cursor stays where it is.
    pub fn remove(&mut self, fid: u32) {
        let Some(j) = self.fids.iter().position(|&f| f == fid) else {
            return;
        };
        self.fids.remove(j);
        let (w, b) = (j / 64, j % 64);
        let below = (1u64 << b) - 1;
        let words = self.sendable.len();
        let carry = |bits: &[u64], k: usize| if k + 1 < words { bits[k + 1] & 1 } else { 0 };
        let first = self.sendable[w];
        self.sendable[w] =
            (first & below) | ((first >> 1) & !below) | (carry(&self.sendable, w) << 63);
        for k in w + 1..words {
            self.sendable[k] = (self.sendable[k] >> 1) | (carry(&self.sendable, k) << 63);
        }
        self.sendable.truncate(self.fids.len().div_ceil(64));
    }

    /// Flow `fid`'s bytes-to-send state becomes `v` (after a rewind or a late ACK).
    pub fn set_sendable(&mut self, fid: u32, v: bool) {
        if let Some(i) = self.fids.iter().position(|&f| f == fid) {
            self.set_sendable_at(i, v);
        }
    }

    /// Entry `i`'s bytes-to-send state becomes `v`.
    pub fn set_sendable_at(&mut self, i: usize, v: bool) {
        let (w, bit) = (i / 64, 1u64 << (i % 64));
        if v {
            self.sendable[w] |= bit;
        } else {
            self.sendable[w] &= !bit;
        }
    }

    /// Entry `i` was served: the next scan starts after it.
    pub fn served(&mut self, i: usize) {
        self.cursor = i + 1;
    }

    /// The flow of entry `i`.
    pub fn fid(&self, i: usize) -> u32 {
        self.fids[i]
    }

    /// The entries with bytes to send, in round-robin order from the cursor: first those
    /// at or after it, then those before.
    pub fn sendable_from_cursor(&self) -> SendableIter<'_> {
        let n = self.fids.len();
        let start = if n == 0 { 0 } else { self.cursor % n };
        SendableIter {
            bits: &self.sendable,
            next: start,
            end: n,
            wrap: Some(start),
        }
    }
}

/// Entries of a [`RoundRobin`] whose bit is set, over `[start, len)` then `[0, start)`.
pub struct SendableIter<'a> {
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
        let mut word = self.bits[w] & (!0u64 << (from % 64));
        loop {
            if word != 0 {
                let i = w * 64 + word.trailing_zeros() as usize;
                return (i < end).then_some(i);
            }
            w += 1;
            if w * 64 >= end {
                return None;
            }
            word = self.bits[w];
        }
    }
}

impl Iterator for SendableIter<'_> {
    type Item = usize;

    fn next(&mut self) -> Option<usize> {
        loop {
            if let Some(i) = self.first_set(self.next, self.end) {
                self.next = i + 1;
                return Some(i);
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

    /// The plain scan the round robin must match: every entry from the cursor, cyclic,
    /// keeping those with bytes to send.
    fn naive(fids: &[(u32, bool)], cursor: usize) -> Vec<usize> {
        let n = fids.len();
        (0..n)
            .map(|k| (cursor + k) % n)
            .filter(|&i| fids[i].1)
            .collect()
    }

    #[test]
    fn matches_a_plain_scan_through_pushes_removals_and_flag_changes() {
        // A deterministic mix of operations over lists that cross word boundaries.
        let mut rr = RoundRobin::default();
        let mut model: Vec<(u32, bool)> = Vec::new();
        let mut cursor = 0usize;
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next_fid = 0u32;
        for step in 0..20_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            match x % 7 {
                0..=2 => {
                    rr.push(next_fid);
                    model.push((next_fid, true));
                    next_fid += 1;
                }
                3 if !model.is_empty() => {
                    let j = (x >> 8) as usize % model.len();
                    let fid = model[j].0;
                    rr.remove(fid);
                    model.remove(j);
                }
                4 | 5 if !model.is_empty() => {
                    let j = (x >> 8) as usize % model.len();
                    let v = (x >> 40) & 1 == 1;
                    rr.set_sendable(model[j].0, v);
                    model[j].1 = v;
                }
                _ if !model.is_empty() => {
                    let j = (x >> 8) as usize % model.len();
                    rr.served(j);
                    cursor = j + 1;
                }
                _ => {}
            }
            assert_eq!(rr.len(), model.len());
            let got: Vec<usize> = rr.sendable_from_cursor().collect();
            assert_eq!(got, naive(&model, cursor), "step {step}");
            for (i, &(fid, _)) in model.iter().enumerate() {
                assert_eq!(rr.fid(i), fid);
            }
        }
        assert!(next_fid > 5_000, "the mix pushed {next_fid} flows");
    }

    #[test]
    fn removal_keeps_the_cursor_index() {
        let mut rr = RoundRobin::default();
        for f in 0..5 {
            rr.push(f);
        }
        rr.served(2); // next: entry 3 (flow 3)
        rr.remove(1); // entries move up: entry 3 is now flow 4
        let order: Vec<u32> = rr.sendable_from_cursor().map(|i| rr.fid(i)).collect();
        assert_eq!(order, vec![4, 0, 2, 3]);
        rr.set_sendable(0, false);
        let order: Vec<u32> = rr.sendable_from_cursor().map(|i| rr.fid(i)).collect();
        assert_eq!(order, vec![4, 2, 3]);
    }
}
