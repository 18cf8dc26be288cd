//! The process's allocator: the system's, with the model's memory asked to live on
//! transparent huge pages where they round nothing up.
//!
//! A fabric of 100,000 hosts keeps about 1.8 GB of model (port queues, the packet arena,
//! links, routing) and touches it nearly at random: every event lands on another switch's
//! ports. With 4 KiB pages that is some 450,000 pages, far past what the TLB holds, so
//! most events also walk the page tables; on 2 MiB pages it is under 1,000. Many Linux
//! systems give anonymous memory huge pages only where asked
//! (`/sys/kernel/mm/transparent_hugepage/enabled` = `madvise`), so this asks
//! (`madvise(MADV_HUGEPAGE)`) for
//! - the heap the allocator grows with `brk`, beyond its first [`SMALL_HEAP`] bytes:
//!   the packet arena and the queues' blocks come in chunks of tens of KiB, so they live
//!   there, not in blocks of their own. A small run keeps its 4 KiB pages (a huge page
//!   would round its few MB of model up: the heap's top huge page is partly used), and
//!   the heap grows in steps of [`HEAP_STEP`] so that whole huge pages fit in each;
//! - the heap's first [`SMALL_HEAP`] bytes too, 2 MiB at a time as each fills: they hold
//!   the tables built first below [`HINT_BYTES`] (links, switches, link rings) and the
//!   pools' first chunks (at 1,024 hosts nearly all of the model's 18 MB). When a block
//!   of at least [`COLLAPSE_TRIGGER`] bytes (a pool's chunk, as a model grows) is
//!   allocated past such 2 MiB, and each of their pages is in use, the kernel is asked
//!   to move them onto huge pages (`MADV_COLLAPSE`, Linux 6.1 on; where it is refused,
//!   nothing is asked again). Only full ones: the page rounds nothing up, and the peak
//!   memory stays the same;
//! - every allocation of at least [`HINT_BYTES`] (the allocator maps those apart from
//!   the heap): the whole 2 MiB pages inside it.
//!
//! A run cut into shards (`--threads-per-run` above 1) has every thread allocate from
//! this heap ([`one_heap`]): each shard's thread grows its packet arena and queue pools
//! as the run goes, and in an arena of the thread's own (glibc maps one per thread and
//! grows it a page at a time) they would all lie on 4 KiB pages.
//!
//! The model is allocated while it is built and when a pool grows, never per packet, so
//! the checks run on the cold path only (`fabricsim/tests/no_alloc.rs`). It is a hint: where the
//! kernel has no huge pages, or refuses, nothing changes, and nothing the simulation
//! computes depends on where its memory lies. Otherwise other threads' allocations (the
//! other runs of a parallel sweep) come from the allocator's other arenas and are hinted
//! only when large; `runner::run_sweep` runs a lone run on the calling thread so that
//! its model lies in this heap.
//!
//! `FABRICSIM_HUGE_PAGES=0` (or `off`, `false`, `no`) in the environment turns the hints
//! off, to measure them or where huge pages are unwelcome; any other value, or none,
//! leaves them on.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// A transparent huge page on x86-64 and most aarch64 kernels.
const HUGE_PAGE: usize = 2 << 20;

/// A base page on x86-64, the alignment `madvise` needs (where pages are larger, a
/// misaligned hint is refused and nothing changes).
const PAGE: usize = 4096;

/// The heap's first bytes, kept on small pages.
pub const SMALL_HEAP: usize = 32 << 20;

/// What the allocator adds to the heap beyond each request that grows it
/// (`M_TOP_PAD`): several huge pages, so that whole ones lie in each step.
pub const HEAP_STEP: usize = 8 * HUGE_PAGE;

/// The heap's end up to which hints have been given (0 until [`read_environment`]
/// has read where the heap starts, and while hints are off).
static HINTED_TO: AtomicUsize = AtomicUsize::new(0);

/// Allocations this large or larger look for full 2 MiB of the heap's first
/// [`SMALL_HEAP`] bytes to collapse: the chunks the packet arena and the queues' blocks
/// grow by (42 and 64 KiB), not the many small blocks of building a model.
pub const COLLAPSE_TRIGGER: usize = 16 << 10;

/// The first 2 MiB of the heap's first [`SMALL_HEAP`] bytes not yet collapsed nor
/// given up on (0 while hints are off, once the kernel refused, and once all are done).
static COLLAPSE_NEXT: AtomicUsize = AtomicUsize::new(0);

/// The end of the last whole 2 MiB in the heap's first [`SMALL_HEAP`] bytes.
static COLLAPSE_END: AtomicUsize = AtomicUsize::new(0);

/// Held by the thread that collapses (another allocating thread then does not wait).
static COLLAPSING: AtomicBool = AtomicBool::new(false);

/// Allocations this large or larger are hinted: two huge pages, so at least one whole
/// one lies inside whatever the allocator returns.
pub const HINT_BYTES: usize = 2 * HUGE_PAGE;

/// Whether to hint; set once from the environment at the top of `main`, before the
/// model is built (so the allocator itself never reads the environment).
static ENABLED: AtomicBool = AtomicBool::new(true);

/// Reads `FABRICSIM_HUGE_PAGES` (`0` turns the hints off) and, with them on, notes
/// where the heap starts and has it grow in [`HEAP_STEP`]s.
pub fn read_environment() {
    let on = hints_wanted(std::env::var_os("FABRICSIM_HUGE_PAGES").as_deref());
    ENABLED.store(on, Ordering::Relaxed);
    if on {
        // SAFETY: `sbrk(0)` only reads the current end of the heap; `mallopt` sets a
        // tuning parameter of the allocator, which stays correct with any value of it.
        // The mmap threshold is fixed at HINT_BYTES (it otherwise moves with what the
        // run frees, and fixing one parameter fixes it at 128 KiB): what is smaller comes
        // from the heap, what is not is mapped apart and hinted on its own.
        let end = unsafe {
            libc::mallopt(libc::M_MMAP_THRESHOLD, HINT_BYTES as libc::c_int);
            libc::mallopt(libc::M_TOP_PAD, HEAP_STEP as libc::c_int);
            libc::mallopt(libc::M_TRIM_THRESHOLD, (2 * HEAP_STEP) as libc::c_int);
            libc::sbrk(0) as usize
        };
        if end != usize::MAX {
            HINTED_TO.store(end + SMALL_HEAP, Ordering::Relaxed);
            if let Some((first, last)) = whole_huge_pages(end, SMALL_HEAP) {
                COLLAPSE_END.store(last, Ordering::Relaxed);
                COLLAPSE_NEXT.store(first, Ordering::Relaxed);
            }
        }
    }
}

/// Has every thread allocate from the main heap (glibc's `M_ARENA_MAX` of 1), for a
/// process that runs models cut into shards on threads of their own: what a shard's
/// thread allocates as the run goes (its pools' chunks of 42 and 64 KiB) then lies past
/// the heap's first [`SMALL_HEAP`] bytes, on huge pages, beside the rest of the model.
/// A thread's own arena grows a page at a time, so none of it would (the benchmark at
/// k = 32 on two threads: 52 MB of the second shard's pools there, none on huge pages;
/// `docs/design/performance.md`). No thread allocates per packet, so sharing one heap costs
/// nothing while the model runs. Call it before any other thread exists: glibc fixes
/// the arenas' limit when a second thread first allocates. Nothing with the hints off.
pub fn one_heap() {
    if ENABLED.load(Ordering::Relaxed) {
        // SAFETY: `mallopt` sets a tuning parameter of the allocator, which stays
        // correct with any value of it.
        unsafe {
            libc::mallopt(libc::M_ARENA_MAX, 1);
        }
    }
}

/// Whether `FABRICSIM_HUGE_PAGES` (`value`) leaves the hints on: all but `0`, `off`,
/// `false` and `no` (in any case) do.
fn hints_wanted(value: Option<&std::ffi::OsStr>) -> bool {
    value.is_none_or(|v| {
        let v = v.to_string_lossy();
        !["0", "off", "false", "no"]
            .iter()
            .any(|off| v.eq_ignore_ascii_case(off))
    })
}

/// The system allocator, hinting huge pages for large blocks.
pub struct HugePageHint;

impl HugePageHint {
    /// `ptr`, a block of `size` bytes just allocated, once the hints it calls for are given.
    #[inline]
    fn hinted(ptr: *mut u8, size: usize) -> *mut u8 {
        if size >= HINT_BYTES {
            Self::hint(ptr, size);
        }
        Self::hint_heap();
        if size >= COLLAPSE_TRIGGER {
            Self::collapse_below(ptr as usize);
        }
        ptr
    }

    /// Collapses the full 2 MiB of the heap's first [`SMALL_HEAP`] bytes that lie
    /// below `addr`, a block just allocated (in order; see the module's doc).
    #[cold]
    #[inline(never)]
    fn collapse_below(addr: usize) {
        let next = COLLAPSE_NEXT.load(Ordering::Relaxed);
        // (A block of another thread's arena lies past the heap's end.)
        // SAFETY: `sbrk(0)` reads the current end of the heap and changes nothing.
        if next == 0 || addr < next + HUGE_PAGE || addr > unsafe { libc::sbrk(0) } as usize {
            return;
        }
        if COLLAPSING.swap(true, Ordering::Acquire) {
            return;
        }
        let end = COLLAPSE_END.load(Ordering::Relaxed);
        let mut r = COLLAPSE_NEXT.load(Ordering::Relaxed);
        while r != 0 && r < end && r + HUGE_PAGE <= addr {
            if !all_resident(r) {
                // Not yet in use throughout: try again at a later block, unless the
                // heap has gone well past it (a hole that may never be touched).
                if addr < r + 2 * HUGE_PAGE {
                    break;
                }
            } else if let Collapse::Refused = collapse(r) {
                r = 0;
                break;
            }
            r += HUGE_PAGE;
        }
        COLLAPSE_NEXT.store(if r >= end { 0 } else { r }, Ordering::Relaxed);
        COLLAPSING.store(false, Ordering::Release);
    }

    /// Hints the heap grown since the last call, past its first [`SMALL_HEAP`] bytes.
    #[inline]
    fn hint_heap() {
        let from = HINTED_TO.load(Ordering::Relaxed);
        if from == 0 {
            return;
        }
        // SAFETY: `sbrk(0)` reads the current end of the heap and changes nothing.
        let end = unsafe { libc::sbrk(0) } as usize;
        if end > from {
            Self::grown_heap(from, end);
        }
    }

    #[cold]
    #[inline(never)]
    fn grown_heap(from: usize, end: usize) {
        if HINTED_TO.fetch_max(end, Ordering::Relaxed) >= end {
            return;
        }
        let start = from & !(PAGE - 1);
        // SAFETY: `[start, end)` lies inside the heap (its start is past the end read
        // when the hints began, rounded down to a page that holds heap); MADV_HUGEPAGE
        // only sets a flag on the mapping and neither moves nor frees memory.
        unsafe {
            libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE);
        }
    }

    /// Asks for huge pages over the whole 2 MiB pages of `[ptr, ptr + size)`.
    #[cold]
    fn hint(ptr: *mut u8, size: usize) {
        if ptr.is_null() || !ENABLED.load(Ordering::Relaxed) {
            return;
        }
        if let Some((start, end)) = whole_huge_pages(ptr as usize, size) {
            // SAFETY: the range lies inside a block the system allocator just handed
            // out, page-aligned at both ends; MADV_HUGEPAGE only sets a flag on the
            // mapping and neither moves nor frees memory. An error (a kernel without
            // transparent huge pages) leaves the memory as it was.
            unsafe {
                libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE);
            }
        }
    }
}

/// Whether every page of the 2 MiB at `start` (inside the heap) is in memory.
fn all_resident(start: usize) -> bool {
    let mut pages = [0u8; HUGE_PAGE / PAGE];
    // SAFETY: `[start, start + HUGE_PAGE)` lies inside the heap (below its end, past its
    // start); mincore only reads the page tables and writes one byte a page to `pages`,
    // which has one for each.
    let r = unsafe {
        libc::mincore(
            start as *mut libc::c_void,
            HUGE_PAGE,
            pages.as_mut_ptr().cast(),
        )
    };
    r == 0 && pages.iter().all(|&p| p & 1 != 0)
}

/// What the kernel said to a collapse.
enum Collapse {
    Done,
    /// It cannot: no `MADV_COLLAPSE` (before Linux 6.1), or no huge pages at all.
    Refused,
    /// Not now: no huge page free, or the range busy (not asked again: the pages stay
    /// small).
    Busy,
}

/// Asks the kernel to move the 2 MiB at `start` onto one huge page.
fn collapse(start: usize) -> Collapse {
    // SAFETY: the range is 2 MiB of the heap, aligned, each page in use. MADV_COLLAPSE
    // copies what the pages hold into a huge page mapped at the same addresses: neither
    // the addresses nor the contents change, for this thread or any other.
    let r = unsafe { libc::madvise(start as *mut libc::c_void, HUGE_PAGE, libc::MADV_COLLAPSE) };
    if r == 0 {
        return Collapse::Done;
    }
    match std::io::Error::last_os_error().raw_os_error() {
        Some(libc::EAGAIN) | Some(libc::ENOMEM) => Collapse::Busy,
        _ => Collapse::Refused,
    }
}

/// The whole 2 MiB pages inside `[addr, addr + size)`, if any.
fn whole_huge_pages(addr: usize, size: usize) -> Option<(usize, usize)> {
    let start = addr.next_multiple_of(HUGE_PAGE);
    let end = (addr + size) & !(HUGE_PAGE - 1);
    (end > start).then_some((start, end))
}

// SAFETY: every method forwards to `System` unchanged; the hint only advises the kernel
// about memory the caller now owns.
unsafe impl GlobalAlloc for HugePageHint {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        Self::hinted(unsafe { System.alloc(layout) }, layout.size())
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        Self::hinted(unsafe { System.alloc_zeroed(layout) }, layout.size())
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }

    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        Self::hinted(unsafe { System.realloc(ptr, layout, new_size) }, new_size)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_whole_huge_pages_inside_a_block_are_hinted() {
        let h = HUGE_PAGE;
        // A block from 16 bytes past a huge page to 16 bytes short of the fourth end.
        assert_eq!(whole_huge_pages(16, 4 * h - 32), Some((h, 3 * h)));
        // An aligned block of exactly one huge page.
        assert_eq!(whole_huge_pages(5 * h, h), Some((5 * h, 6 * h)));
        // Just short of one whole page, however it lies.
        assert_eq!(whole_huge_pages(h + 8, h), None);
        assert_eq!(whole_huge_pages(h, h - 1), None);
        // The smallest hinted allocation always holds a whole one.
        for offset in [0, 16, 4096, h - 16] {
            let (a, b) = whole_huge_pages(h + offset, HINT_BYTES).unwrap();
            assert!(a >= h + offset && b <= h + offset + HINT_BYTES && b - a >= h);
        }
    }

    #[test]
    fn a_2_mib_is_resident_once_each_of_its_pages_is_touched() {
        // Two huge pages of fresh anonymous memory, so that one whole one lies inside.
        // SAFETY: a private anonymous mapping of our own, unmapped at the end; the
        // writes stay inside it.
        unsafe {
            let len = 2 * HUGE_PAGE;
            let m = libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            );
            assert_ne!(m, libc::MAP_FAILED);
            // Small pages even where the system gives huge ones to all memory.
            libc::madvise(m, len, libc::MADV_NOHUGEPAGE);
            let start = (m as usize).next_multiple_of(HUGE_PAGE);
            assert!(!all_resident(start), "nothing touched yet");
            for page in (start..start + HUGE_PAGE - PAGE).step_by(PAGE) {
                *(page as *mut u8) = 1;
            }
            assert!(!all_resident(start), "the last page untouched");
            *((start + HUGE_PAGE - PAGE) as *mut u8) = 1;
            assert!(all_resident(start));
            libc::munmap(m, len);
        }
    }

    #[test]
    fn only_a_no_turns_the_hints_off() {
        use std::ffi::OsStr;
        assert!(hints_wanted(None));
        for off in ["0", "off", "OFF", "false", "No"] {
            assert!(!hints_wanted(Some(OsStr::new(off))), "{off:?}");
        }
        for on in ["1", "", "yes", "on"] {
            assert!(hints_wanted(Some(OsStr::new(on))), "{on:?}");
        }
    }
}
