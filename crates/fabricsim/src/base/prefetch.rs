//! Software prefetch: a hint to the CPU to start loading a cache line that the event loop
//! will touch soon. The loop looks one event ahead and prefetches what that event's
//! handler reads first, so the cache misses of the next event overlap with the work of the
//! current one. A prefetch never faults and never changes a result.

/// Hints that the cache line holding `*r` will be read soon.
#[inline(always)]
pub fn prefetch<T>(r: &T) {
    prefetch_at(r as *const T);
}

/// Hints that the cache line at `p` will be read soon. `p` need not point into an
/// allocation: an address computed without a bounds check costs no check and, past the
/// end, loads a line for nothing.
#[inline(always)]
fn prefetch_at<T>(p: *const T) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        // SAFETY: PREFETCHT0 is a hint: it does not access memory architecturally, cannot
        // fault (whatever the address) and has no effect on program state; SSE is part
        // of the x86_64 baseline.
        #[allow(unsafe_code)]
        unsafe {
            _mm_prefetch::<_MM_HINT_T0>(p.cast());
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = p;
    }
}

/// Hints that the item after `*r` in memory will be read soon (past the end of its
/// allocation, a line for nothing).
#[inline(always)]
pub fn prefetch_next<T>(r: &T) {
    prefetch_at((r as *const T).wrapping_add(1));
}

/// Hints that item `i` of `items` will be read soon, without a bounds check (an index
/// past the end prefetches a line for nothing).
#[inline(always)]
pub fn prefetch_item<T>(items: &[T], i: usize) {
    prefetch_at(items.as_ptr().wrapping_add(i));
}

/// Starts loading the byte `offset` bytes into item `i` of `items` (a field of the
/// item: `std::mem::offset_of!`). Only the address is computed, with wrapping
/// arithmetic and no bounds check: a prefetch of any address is harmless.
#[inline(always)]
pub fn prefetch_field<T>(items: &[T], i: usize, offset: usize) {
    prefetch_at(items.as_ptr().wrapping_add(i).wrapping_byte_add(offset));
}
