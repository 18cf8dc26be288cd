//! A first-in first-out ring of `Copy` items in one buffer: what a link keeps its frames
//! in flight in. `VecDeque` does the same, but its `push_back` calls `push_back_mut`,
//! which the compiler kept out of line in most copies of the transmit path (2.9 M calls,
//! 84 M instructions at k = 16), and its index arithmetic takes more steps than a ring
//! that only ever moves its ends by one item.

/// A ring of `Copy` items. Every slot of `buf` holds an item (stale past the live ones),
/// so it needs no uninitialized memory; its capacity is `buf.len()`.
///
/// Its ends are byte offsets into `buf`, not indices: a link's item is 28 bytes, and
/// an index cost three instructions of multiplication at each access (four accesses a
/// hop, and three more for the look-ahead; cachegrind). Invariant: `head` and `tail`
/// are multiples of the item size below `end` (or 0 with no buffer), and `len` items
/// lie from `head` on, wrapping at `end`, up to `tail`.
#[derive(Clone, Debug)]
pub struct Ring<T: Copy> {
    buf: Box<[T]>,
    /// Byte offset of the oldest item.
    head: u32,
    /// Byte offset where the next item goes.
    tail: u32,
    /// Items held.
    len: u32,
    /// The buffer's size in bytes.
    end: u32,
}

impl<T: Copy> Default for Ring<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T: Copy> Ring<T> {
    /// The item size, in the offsets' type.
    const SIZE: u32 = {
        assert!(std::mem::size_of::<T>() > 0 && std::mem::size_of::<T>() <= u32::MAX as usize);
        std::mem::size_of::<T>() as u32
    };

    /// An empty ring with no buffer.
    pub fn new() -> Self {
        Ring {
            buf: Box::new([]),
            head: 0,
            tail: 0,
            len: 0,
            end: 0,
        }
    }

    /// Items held.
    #[inline(always)]
    pub fn len(&self) -> usize {
        self.len as usize
    }

    /// True when it holds nothing.
    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Items it holds without growing.
    #[inline(always)]
    pub fn capacity(&self) -> usize {
        self.buf.len()
    }

    /// The offset after `at`, wrapped at the end.
    #[inline(always)]
    fn next(&self, at: u32) -> u32 {
        let n = at + Self::SIZE;
        if n == self.end {
            0
        } else {
            n
        }
    }

    /// The item at byte offset `at`, without a bounds check: the operations on every
    /// frame in flight pass `head`, `tail` or the offset before `tail`, below `end` by
    /// the invariant (with the checks, two to three instructions an access, k = 16 took
    /// 5,873 M instructions against 5,774 M, cachegrind).
    #[inline(always)]
    fn at(&self, at: u32) -> &T {
        debug_assert!(at < self.end && at.is_multiple_of(Self::SIZE));
        // SAFETY: `at` is a multiple of the item size below the buffer's size in
        // bytes: the start of an item of `buf`.
        #[allow(unsafe_code)]
        unsafe {
            &*self.buf.as_ptr().byte_add(at as usize)
        }
    }

    /// [`Self::at`] to write.
    #[inline(always)]
    fn at_mut(&mut self, at: u32) -> &mut T {
        debug_assert!(at < self.end && at.is_multiple_of(Self::SIZE));
        // SAFETY: as in `at`.
        #[allow(unsafe_code)]
        unsafe {
            &mut *self.buf.as_mut_ptr().byte_add(at as usize)
        }
    }

    /// Appends `x`; a full ring first grows by `grow(capacity)` items (at least one).
    #[inline(always)]
    pub fn push_back(&mut self, x: T, grow: fn(usize) -> usize) {
        if self.len as usize == self.buf.len() {
            return self.grow_and_push(x, grow);
        }
        let t = self.tail;
        *self.at_mut(t) = x;
        self.tail = self.next(t);
        self.len += 1;
    }

    /// [`Self::push_back`] with the new item written in its slot by `write` (`item`
    /// makes it whole only for a full ring, which grows). An item built whole and then
    /// copied in went through the stack, written there field by field and read back
    /// 16 bytes at a time: a read the CPU cannot forward from those narrower writes,
    /// which waits for them to reach the cache (the reads of the links' `put`, with
    /// the instructions that wait behind them, took 10 % of the samples of `perf
    /// record` at k = 8).
    #[inline(always)]
    pub fn push_back_with(
        &mut self,
        grow: fn(usize) -> usize,
        item: impl FnOnce() -> T,
        write: impl FnOnce(&mut T),
    ) {
        if self.len as usize == self.buf.len() {
            return self.grow_and_push(item(), grow);
        }
        let t = self.tail;
        write(self.at_mut(t));
        self.tail = self.next(t);
        self.len += 1;
    }

    /// [`Self::push_back`] into a full ring: a new buffer with the items in order from
    /// its start (a ring grows a few times in a run; out of line).
    #[cold]
    #[inline(never)]
    fn grow_and_push(&mut self, x: T, grow: fn(usize) -> usize) {
        let cap = self.buf.len();
        let new_cap = cap + grow(cap).max(1);
        let end = new_cap
            .checked_mul(Self::SIZE as usize)
            .and_then(|e| u32::try_from(e).ok())
            .expect("a link's ring under 4 GiB");
        let mut buf = Vec::with_capacity(new_cap);
        buf.extend(self.iter().copied());
        buf.resize(new_cap, x);
        self.buf = buf.into_boxed_slice();
        self.end = end;
        self.head = 0;
        self.len += 1;
        self.tail = self.next((self.len - 1) * Self::SIZE);
    }

    /// Removes and returns the oldest item.
    #[inline(always)]
    pub fn pop_front(&mut self) -> Option<T> {
        if self.len == 0 {
            return None;
        }
        let h = self.head;
        let x = *self.at(h);
        self.head = self.next(h);
        self.len -= 1;
        Some(x)
    }

    /// The oldest item.
    #[inline(always)]
    pub fn front(&self) -> Option<&T> {
        if self.len == 0 {
            return None;
        }
        Some(self.at(self.head))
    }

    /// The newest item.
    #[inline(always)]
    pub fn back(&self) -> Option<&T> {
        if self.len == 0 {
            return None;
        }
        let t = if self.tail == 0 { self.end } else { self.tail };
        Some(self.at(t - Self::SIZE))
    }

    /// The index of the oldest item.
    fn head_index(&self) -> usize {
        (self.head / Self::SIZE) as usize
    }

    /// The `i`-th item from the oldest.
    pub fn get_mut(&mut self, i: usize) -> Option<&mut T> {
        if i >= self.len as usize {
            return None;
        }
        let j = self.head_index() + i;
        let cap = self.buf.len();
        Some(&mut self.buf[if j >= cap { j - cap } else { j }])
    }

    /// The items, oldest first.
    pub fn iter(&self) -> std::iter::Chain<std::slice::Iter<'_, T>, std::slice::Iter<'_, T>> {
        let (h, n) = (self.head_index(), self.len as usize);
        let first = n.min(self.buf.len() - h);
        self.buf[h..h + first].iter().chain(&self.buf[..n - first])
    }

    /// The items, oldest first, to change in place.
    pub fn iter_mut(&mut self) -> impl Iterator<Item = &mut T> {
        let (h, n) = (self.head_index(), self.len as usize);
        let first = n.min(self.buf.len() - h);
        let (low, high) = self.buf.split_at_mut(h);
        high[..first].iter_mut().chain(&mut low[..n - first])
    }
}
impl<'a, T: Copy> IntoIterator for &'a Ring<T> {
    type Item = &'a T;
    type IntoIter = std::iter::Chain<std::slice::Iter<'a, T>, std::slice::Iter<'a, T>>;

    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

#[cfg(test)]
mod tests {
    use super::Ring;
    use std::collections::VecDeque;

    fn quarter(cap: usize) -> usize {
        if cap == 0 {
            4
        } else {
            cap / 4
        }
    }

    #[test]
    fn a_ring_keeps_fifo_order_as_it_wraps_and_grows() {
        let mut r = Ring::new();
        let mut v = VecDeque::new();
        let mut x = 0u32;
        for round in 0..200u32 {
            for _ in 0..(round * 7 % 11) {
                // Both ways in, a full ring growing under either.
                if x.is_multiple_of(2) {
                    r.push_back(x, quarter);
                } else {
                    r.push_back_with(quarter, || x, |slot| *slot = x);
                }
                v.push_back(x);
                x += 1;
            }
            for _ in 0..(round * 5 % 9) {
                assert_eq!(r.pop_front(), v.pop_front());
            }
            assert_eq!(r.len(), v.len());
            assert_eq!(r.front(), v.front());
            assert_eq!(r.back(), v.back());
            assert_eq!(r.get_mut(1).copied(), v.get(1).copied());
            assert!(r.iter().eq(v.iter()));
            for y in r.iter_mut() {
                *y += 1;
            }
            for y in v.iter_mut() {
                *y += 1;
            }
            assert!(r.iter().eq(v.iter()));
        }
        while let Some(y) = v.pop_front() {
            assert_eq!(r.pop_front(), Some(y));
        }
        assert!(r.is_empty() && r.pop_front().is_none() && r.front().is_none());
    }

    #[test]
    fn a_ring_grows_by_what_it_is_told() {
        let mut r = Ring::new();
        let mut caps = vec![];
        for x in 0..40u8 {
            r.push_back(x, quarter);
            caps.push(r.capacity());
        }
        caps.dedup();
        assert_eq!(caps, [4, 5, 6, 7, 8, 10, 12, 15, 18, 22, 27, 33, 41]);
    }
}
