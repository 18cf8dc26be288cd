//! Software prefetch: a hint to the CPU to start loading a cache line that the event loop
//! will touch soon. The loop looks one event ahead and prefetches what that event's
//! handler reads first, so the cache misses of the next event overlap with the work of the
//! current one. A prefetch never faults and never changes a result.

/// Hints that the cache line holding `*r` will be read soon.
#[inline(always)]
pub fn prefetch<T>(r: &T) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        // SAFETY: PREFETCHT0 is a hint: it does not access memory architecturally, cannot
        // fault and has no effect on program state; SSE is part of the x86_64 baseline.
        #[allow(unsafe_code)]
        unsafe {
            _mm_prefetch::<_MM_HINT_T0>((r as *const T).cast());
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = r;
    }
}
