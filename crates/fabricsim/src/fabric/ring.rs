//! A FIFO ring of `Copy` items for port queues: 24 bytes (a boxed slice and two `u32`
//! positions) where a `VecDeque` is 32.
//!
//! A fat tree has six ports per host and eight queues a port, so the queue head is paid
//! 48 times per host (issue 19, item 3). A ring grows only when a push finds it full, by
//! doubling, as a `VecDeque` does: once queues reach their working size, pushing and
//! popping allocate nothing. (Growing by half instead held 7-17 % more on the fat-tree
//! benchmarks, not less: PFC caps queues at similar lengths, and doubling happened to
//! fit them better.)

/// A first-in first-out ring.
#[derive(Clone, Debug)]
pub struct Ring<T: Copy> {
    buf: Box<[T]>,
    /// Index of the oldest item.
    head: u32,
    /// Items held.
    len: u32,
}

impl<T: Copy> Default for Ring<T> {
    fn default() -> Self {
        Ring {
            buf: Vec::new().into_boxed_slice(),
            head: 0,
            len: 0,
        }
    }
}

/// Capacity of a ring's first allocation.
const FIRST: usize = 4;

impl<T: Copy> Ring<T> {
    /// Items held.
    #[inline]
    pub fn len(&self) -> usize {
        self.len as usize
    }

    /// True when empty.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Items it can hold without growing.
    pub fn capacity(&self) -> usize {
        self.buf.len()
    }

    /// Bytes it holds (its capacity).
    pub fn heap_bytes(&self) -> u64 {
        std::mem::size_of_val::<[T]>(&self.buf) as u64
    }

    /// Appends `v` at the back.
    #[inline]
    pub fn push_back(&mut self, v: T) {
        let cap = self.buf.len();
        if self.len as usize == cap {
            return self.grow_and_push(v);
        }
        let mut i = self.head as usize + self.len as usize;
        if i >= cap {
            i -= cap;
        }
        self.buf[i] = v;
        self.len += 1;
    }

    /// Takes the oldest item.
    #[inline]
    pub fn pop_front(&mut self) -> Option<T> {
        if self.len == 0 {
            return None;
        }
        let v = self.buf[self.head as usize];
        self.head += 1;
        if self.head as usize == self.buf.len() {
            self.head = 0;
        }
        self.len -= 1;
        Some(v)
    }

    /// The oldest item.
    #[inline]
    pub fn front(&self) -> Option<&T> {
        if self.len == 0 {
            None
        } else {
            Some(&self.buf[self.head as usize])
        }
    }

    /// The items, oldest first.
    pub fn iter(&self) -> impl Iterator<Item = &T> {
        let (a, b) = self.halves();
        a.iter().chain(b.iter())
    }

    /// The items as two slices, oldest first.
    fn halves(&self) -> (&[T], &[T]) {
        let (head, len, cap) = (self.head as usize, self.len as usize, self.buf.len());
        if head + len <= cap {
            (&self.buf[head..head + len], &[])
        } else {
            (&self.buf[head..], &self.buf[..head + len - cap])
        }
    }

    /// Moves the items, in order, to a ring twice as large (at least [`FIRST`]), then
    /// appends `v`. The free slots are filled with copies of `v`: a slot is always
    /// written before it is read.
    #[cold]
    #[inline(never)]
    fn grow_and_push(&mut self, v: T) {
        let cap = self.buf.len();
        let new_cap = (cap * 2).max(FIRST);
        assert!(
            new_cap <= u32::MAX as usize,
            "a ring of more than 2^32 items"
        );
        let mut next = Vec::with_capacity(new_cap);
        let (a, b) = self.halves();
        next.extend_from_slice(a);
        next.extend_from_slice(b);
        next.resize(new_cap, v);
        self.buf = next.into_boxed_slice();
        self.head = 0;
        self.len = cap as u32 + 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use std::collections::VecDeque;

    #[test]
    fn a_ring_is_24_bytes() {
        assert_eq!(std::mem::size_of::<Ring<crate::packet::Desc>>(), 24);
    }

    /// Random pushes and pops in bursts (growing, wrapping, draining) agree with a
    /// `VecDeque` at every step.
    #[test]
    fn matches_a_vecdeque_under_random_use() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(19);
        let mut ring: Ring<u64> = Ring::default();
        let mut model: VecDeque<u64> = VecDeque::new();
        let mut next = 0u64;
        for _ in 0..2000 {
            let burst = rng.gen_range(0..40);
            let push = rng.gen_bool(0.55);
            for _ in 0..burst {
                if push {
                    ring.push_back(next);
                    model.push_back(next);
                    next += 1;
                } else {
                    assert_eq!(ring.pop_front(), model.pop_front());
                }
                assert_eq!(ring.len(), model.len());
                assert_eq!(ring.front(), model.front());
                assert!(ring.capacity() >= ring.len());
            }
            assert!(ring.iter().eq(model.iter()));
        }
        assert!(next > 10_000, "the test pushed {next}");
    }

    #[test]
    fn growth_doubles() {
        let mut r: Ring<u32> = Ring::default();
        assert_eq!((r.capacity(), r.heap_bytes()), (0, 0));
        let mut caps = Vec::new();
        for i in 0..100 {
            r.push_back(i);
            if caps.last() != Some(&r.capacity()) {
                caps.push(r.capacity());
            }
        }
        assert_eq!(caps, [4, 8, 16, 32, 64, 128]);
        assert_eq!(r.heap_bytes(), 128 * 4);
        // Wrapped and grown again: order is kept.
        for i in 0..90 {
            assert_eq!(r.pop_front(), Some(i));
        }
        for i in 100..300 {
            r.push_back(i);
        }
        assert!(r.iter().copied().eq(90..300));
        assert_eq!(r.front(), Some(&90));
    }
}
