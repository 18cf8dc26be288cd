//! First-in first-out lists of small items kept in fixed-size blocks that one pool lends
//! to all of them (memory per host).
//!
//! A fabric has hundreds of thousands of egress queues. Each grown as a ring of its own
//! keeps its own peak (a ring doubles and never shrinks), so together the rings held
//! about 420 descriptors a host at k = 48 against some 290 queued at the worst moment;
//! and every slot of an event calendar kept a spill vector as long as the longest burst
//! any slot had seen (1.5 KB a host at k = 32, none of it itemized). Here every list
//! takes blocks of `B` items from the pool of its owner (a shard's ports, an event
//! queue's slots) and gives each back the moment it is emptied, so a pool holds the most
//! blocks in use at once, plus at most one part-used block at each end of each list.
//!
//! Blocks live in chunks that never move: a pool grows without copying what it holds
//! and without the transient double of a vector's growth, and once grown it serves a
//! steady run without allocating. Freed blocks form a stack threaded through their
//! `next` field, so the free list costs nothing of its own.
//!
//! The order of items in a list is all a caller sees; which blocks hold them is not
//! observable, so nothing a run computes depends on the pool.

use crate::base::trusted::Trusted;

/// Blocks per chunk (a power of two).
const CHUNK: usize = 256;
/// The free list's end.
const NONE: u32 = u32::MAX;

/// Items in chunks of `N` (a power of two) that never move, indexed by a `u32`: a store
/// that grows without copying what it holds and without the transient double of a
/// vector's growth. The packet arena's slots and a pool's blocks live in one.
pub(crate) struct Chunks<T: Copy, const N: usize> {
    /// Arrays, not slices: an index masked to the chunk needs no bounds check.
    chunks: Vec<Box<[T; N]>>,
    /// Items handed out so far (the next never-used one).
    used: u32,
}

impl<T: Copy, const N: usize> Chunks<T, N> {
    /// An empty store.
    pub(crate) const fn new() -> Self {
        assert!(N.is_power_of_two());
        Chunks {
            chunks: Vec::new(),
            used: 0,
        }
    }

    /// Item `i`.
    #[inline(always)]
    pub(crate) fn get(&self, i: u32) -> &T {
        &self.chunks.at(i as usize / N)[i as usize % N]
    }

    /// Item `i`, to change it.
    #[inline(always)]
    pub(crate) fn get_mut(&mut self, i: u32) -> &mut T {
        &mut self.chunks.at_mut(i as usize / N)[i as usize % N]
    }

    /// A never-used item, with a new chunk (of `fill`) when the last one is full. Its
    /// index stays below `u32::MAX`, which callers may keep as a sentinel.
    #[inline]
    pub(crate) fn grow(&mut self, fill: T) -> u32 {
        let i = self.used;
        if i as usize == self.chunks.len() * N {
            self.new_chunk(fill);
        }
        self.used += 1;
        i
    }

    #[cold]
    #[inline(never)]
    fn new_chunk(&mut self, fill: T) {
        assert!(
            self.chunks.len() < u32::MAX as usize / N,
            "more than 2^32 items in use"
        );
        let chunk: Box<[T; N]> = vec![fill; N]
            .into_boxed_slice()
            .try_into()
            .unwrap_or_else(|_| unreachable!("a chunk has N items"));
        self.chunks.push(chunk);
    }

    /// Items handed out so far.
    #[cfg(test)]
    pub(crate) fn used(&self) -> u32 {
        self.used
    }

    /// Bytes the store holds: its chunks and the chunk table, by capacity.
    pub(crate) fn heap_bytes(&self) -> u64 {
        (self.chunks.len() * std::mem::size_of::<[T; N]>()) as u64
            + crate::base::memory::vec_bytes(&self.chunks)
    }
}

/// `B` items and the index of the list's next block.
#[derive(Clone, Copy)]
struct Block<T: Copy, const B: usize> {
    items: [T; B],
    next: u32,
}

/// A pool of blocks of `B` items of `T`, lent to [`BlockFifo`]s. Aligned to a cache line
/// so that the pools of shards run on different threads never share one.
#[repr(align(64))]
pub struct BlockPool<T: Copy, const B: usize> {
    blocks: Chunks<Block<T, B>, CHUNK>,
    /// Head of the free list ([`NONE`]: empty).
    free: u32,
    /// Blocks lent now.
    live: u32,
    /// What new blocks are filled with (never read: an item is written before a list
    /// reads it).
    fill: T,
}

impl<T: Copy, const B: usize> BlockPool<T, B> {
    /// An empty pool; `fill` is any value of `T` (new blocks start filled with it).
    pub fn new(fill: T) -> Self {
        assert!(
            B > 0 && B < u16::MAX as usize,
            "a block holds 1 to 65534 items"
        );
        BlockPool {
            blocks: Chunks::new(),
            free: NONE,
            live: 0,
            fill,
        }
    }

    #[inline(always)]
    fn block(&self, b: u32) -> &Block<T, B> {
        self.blocks.get(b)
    }

    #[inline(always)]
    fn block_mut(&mut self, b: u32) -> &mut Block<T, B> {
        self.blocks.get_mut(b)
    }

    /// Lends a block. Its `next` is left as it was: a list reads a block's `next` only
    /// once it has linked one there.
    #[inline(always)]
    fn take(&mut self) -> u32 {
        self.live += 1;
        if self.free != NONE {
            let b = self.free;
            self.free = self.block(b).next;
            b
        } else {
            self.grow()
        }
    }

    /// Takes back block `b`.
    #[inline(always)]
    fn give(&mut self, b: u32) {
        self.live -= 1;
        let next = self.free;
        self.block_mut(b).next = next;
        self.free = b;
    }

    /// A never-used block. Out of line: the block of fill it builds would give every
    /// caller of [`Self::take`] its stack frame.
    #[cold]
    #[inline(never)]
    fn grow(&mut self) -> u32 {
        let empty = Block {
            items: [self.fill; B],
            next: NONE,
        };
        self.blocks.grow(empty)
    }

    /// Blocks lent now.
    pub fn live_blocks(&self) -> usize {
        self.live as usize
    }

    /// Bytes the pool holds: its chunks and the chunk table, by capacity.
    pub fn heap_bytes(&self) -> u64 {
        self.blocks.heap_bytes()
    }
}

/// A first-in first-out list whose items are in blocks of a [`BlockPool`]: 14 bytes,
/// packed to 2 (its fields are read and written by value).
///
/// Its items are at `head_pos..` of the head block, then in whole blocks, then at the
/// start of the tail block: the tail's next free position is `(head_pos + len) % B`. An
/// empty list holds no block. Every operation takes the pool the list's blocks come
/// from, always the same one (the owner's).
#[derive(Clone, Copy, Debug, Default)]
#[repr(C, packed(2))]
pub struct BlockFifo {
    head: u32,
    tail: u32,
    len: u32,
    head_pos: u16,
}

impl BlockFifo {
    /// An empty list.
    pub const fn new() -> Self {
        BlockFifo {
            head: 0,
            tail: 0,
            len: 0,
            head_pos: 0,
        }
    }

    /// Items in the list.
    #[inline(always)]
    pub fn len(&self) -> usize {
        self.len as usize
    }

    /// True when the list is empty.
    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Appends `x`.
    #[inline(always)]
    pub fn push_back<T: Copy, const B: usize>(&mut self, pool: &mut BlockPool<T, B>, x: T) {
        let pos = (self.head_pos as usize + self.len as usize) % B;
        if pos == 0 {
            self.new_tail(pool);
        }
        pool.block_mut(self.tail).items[pos] = x;
        self.len += 1;
    }

    /// Appends `x` if the tail block has room for it (else false, and nothing changes).
    #[inline(always)]
    pub fn push_back_in_tail<T: Copy, const B: usize>(
        &mut self,
        pool: &mut BlockPool<T, B>,
        x: T,
    ) -> bool {
        let pos = (self.head_pos as usize + self.len as usize) % B;
        if pos == 0 {
            return false;
        }
        pool.block_mut(self.tail).items[pos] = x;
        self.len += 1;
        true
    }

    /// The tail block is full (or there is none): a new one. Always inlined: a port
    /// queue that holds one packet at a time takes (and gives back) a block per packet,
    /// not one every `B` (with `#[inline]` the compiler kept it out of line, a call per
    /// enqueue into an empty queue: k = 8 ran 0.57 % more instructions, cachegrind).
    #[inline(always)]
    fn new_tail<T: Copy, const B: usize>(&mut self, pool: &mut BlockPool<T, B>) {
        let b = pool.take();
        if self.len == 0 {
            self.head = b;
        } else {
            pool.block_mut(self.tail).next = b;
        }
        self.tail = b;
    }

    /// Removes and returns the first item.
    #[inline(always)]
    pub fn pop_front<T: Copy, const B: usize>(&mut self, pool: &mut BlockPool<T, B>) -> Option<T> {
        if self.len == 0 {
            return None;
        }
        let x = pool.block(self.head).items[self.head_pos as usize];
        self.len -= 1;
        self.head_pos += 1;
        if self.len == 0 || self.head_pos as usize == B {
            self.spend_head(pool);
        }
        Some(x)
    }

    /// The head block is spent: back to the pool (an empty list holds none, and starts
    /// its next block at position 0). Inlined, as [`Self::new_tail`].
    #[inline]
    fn spend_head<T: Copy, const B: usize>(&mut self, pool: &mut BlockPool<T, B>) {
        let next = pool.block(self.head).next;
        pool.give(self.head);
        self.head = next;
        self.head_pos = 0;
    }

    /// The first item.
    #[inline]
    pub fn front<'a, T: Copy, const B: usize>(&self, pool: &'a BlockPool<T, B>) -> Option<&'a T> {
        if self.len == 0 {
            return None;
        }
        Some(&pool.block(self.head).items[self.head_pos as usize])
    }

    /// The items, first to last.
    pub fn iter<'a, T: Copy, const B: usize>(
        &self,
        pool: &'a BlockPool<T, B>,
    ) -> impl Iterator<Item = &'a T> + 'a {
        let (mut block, mut pos) = (self.head, self.head_pos as usize);
        let mut left = self.len as usize;
        std::iter::from_fn(move || {
            if left == 0 {
                return None;
            }
            if pos == B {
                block = pool.block(block).next;
                pos = 0;
            }
            let x = &pool.block(block).items[pos];
            pos += 1;
            left -= 1;
            Some(x)
        })
    }

    /// Calls `f` on every item, first to last, with leave to change it.
    pub fn for_each_mut<T: Copy, const B: usize>(
        &mut self,
        pool: &mut BlockPool<T, B>,
        mut f: impl FnMut(&mut T),
    ) {
        let (mut block, mut pos) = (self.head, self.head_pos as usize);
        for _ in 0..self.len {
            if pos == B {
                block = pool.block(block).next;
                pos = 0;
            }
            f(&mut pool.block_mut(block).items[pos]);
            pos += 1;
        }
    }

    /// Appends every item to `out`, first to last, and empties the list (its blocks go
    /// back to the pool).
    pub fn drain_into<T: Copy, const B: usize>(
        &mut self,
        pool: &mut BlockPool<T, B>,
        out: &mut Vec<T>,
    ) {
        while self.len > 0 {
            let b = self.head;
            let start = self.head_pos as usize;
            let n = (B - start).min(self.len as usize);
            let block = pool.block(b);
            out.extend_from_slice(&block.items[start..start + n]);
            let next = block.next;
            pool.give(b);
            self.len -= n as u32;
            self.head = next;
            self.head_pos = 0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::VecDeque;

    proptest::proptest! {
        /// Any sequence of pushes and pops on several lists sharing one pool gives what
        /// as many rings would; the pool lends exactly the blocks the lists hold, and
        /// takes all of them back once the lists are emptied.
        #[test]
        fn lists_in_one_pool_behave_as_rings(
            ops in proptest::collection::vec((0usize..4, 0u8..3, 0u32..1000), 0..600)
        ) {
            let mut pool: BlockPool<u32, 5> = BlockPool::new(0);
            let mut lists = [BlockFifo::new(); 4];
            let mut rings: [VecDeque<u32>; 4] = Default::default();
            for (l, op, x) in ops {
                if op < 2 {
                    lists[l].push_back(&mut pool, x);
                    rings[l].push_back(x);
                } else {
                    proptest::prop_assert_eq!(lists[l].pop_front(&mut pool), rings[l].pop_front());
                }
                proptest::prop_assert_eq!(lists[l].front(&pool).copied(), rings[l].front().copied());
                let held: usize = (lists.iter())
                    .filter(|f| !f.is_empty())
                    .map(|f| (f.head_pos as usize + f.len()).div_ceil(5))
                    .sum();
                proptest::prop_assert_eq!(pool.live_blocks(), held);
            }
            for (f, r) in lists.iter_mut().zip(&rings) {
                proptest::prop_assert_eq!(f.len(), r.len());
                let got: Vec<u32> = f.iter(&pool).copied().collect();
                proptest::prop_assert_eq!(&got, &r.iter().copied().collect::<Vec<_>>());
                f.for_each_mut(&mut pool, |x| *x += 1);
                let mut out = Vec::new();
                f.drain_into(&mut pool, &mut out);
                proptest::prop_assert_eq!(out, r.iter().map(|x| x + 1).collect::<Vec<_>>());
                proptest::prop_assert!(f.is_empty() && f.front(&pool).is_none());
            }
            proptest::prop_assert_eq!(pool.live_blocks(), 0);
        }
    }

    #[test]
    fn freed_blocks_are_reused_before_the_pool_grows() {
        let mut pool: BlockPool<u64, 4> = BlockPool::new(0);
        let mut a = BlockFifo::new();
        for round in 0..1000u64 {
            for i in 0..10 {
                a.push_back(&mut pool, round * 10 + i);
            }
            for i in 0..10 {
                assert_eq!(a.pop_front(&mut pool), Some(round * 10 + i));
            }
        }
        // Ten items span at most three blocks of four, reused: the pool never grew past
        // them, and one chunk serves them forever.
        assert_eq!(pool.blocks.used(), 3);
        assert_eq!(pool.live_blocks(), 0);
        let one_chunk = (CHUNK * std::mem::size_of::<Block<u64, 4>>()) as u64;
        assert!(pool.heap_bytes() >= one_chunk && pool.heap_bytes() < 2 * one_chunk);
    }
}
