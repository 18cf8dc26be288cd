//! The threads of a sharded run: a barrier per phase, and the model's tables shared
//! through a raw pointer (see the module documentation of [`super`]).

use super::*;

/// The `end` that tells the worker threads to leave.
pub(super) const EXIT: u64 = u64::MAX;

/// What the threads of a sharded run share besides the model: a barrier, and the end of
/// the next window.
pub(super) struct Pool {
    pub(super) barrier: SpinBarrier,
    pub(super) end: std::sync::atomic::AtomicU64,
    /// The first panic of a thread in the window just run: the threads still meet at
    /// every barrier (a thread that left would hang the others), and the caller's
    /// thread stops the rest and resumes the panic.
    pub(super) panic: std::sync::Mutex<Option<Box<dyn std::any::Any + Send>>>,
    /// Nanoseconds each thread has waited at the barrier, by [`Wait`] (`WAITS * j + wait`
    /// for thread `j`; [`Pool::wait`]).
    pub(super) waited: Vec<std::sync::atomic::AtomicU64>,
}

/// Barriers a window has ([`Wait`]).
pub(super) const WAITS: usize = 3;

/// Which of a window's [`WAITS`] barriers a thread waits at.
#[derive(Clone, Copy)]
pub(super) enum Wait {
    /// Before the window: the workers for the caller's thread's work between windows
    /// (the caller, for the workers to come back from the last one).
    Start = 0,
    /// After the thread's shards ran their events: for the other threads' shards.
    Events = 1,
    /// After the thread's shards took the frames handed to them.
    Handover = 2,
}

/// A barrier whose threads spin a while, then yield, until the last one arrives. The
/// threads of a sharded run meet three times a window, and windows can be short (a
/// microsecond of simulated time, a few microseconds of work): `std::sync::Barrier`
/// (a mutex and a condition variable, a sleep and a wake-up each time) cost about 60
/// us a window with two threads, more than the window's work on a long-haul run. A
/// waiting thread yields its core after the spin, so threads outnumbering cores still
/// make progress.
pub(super) struct SpinBarrier {
    threads: usize,
    /// Threads arrived in this round.
    arrived: std::sync::atomic::AtomicUsize,
    /// Rounds completed.
    round: std::sync::atomic::AtomicUsize,
}

/// Spins before a waiting thread starts yielding (each a few tens of cycles).
const SPINS: u32 = 1 << 11;

impl SpinBarrier {
    pub(super) fn new(threads: usize) -> SpinBarrier {
        SpinBarrier {
            threads,
            arrived: Default::default(),
            round: Default::default(),
        }
    }

    /// Waits for every thread. What a thread wrote before it arrived is visible to every
    /// thread after they leave: each arrival releases (`arrived`, one chain of
    /// read-modify-writes), the last one acquires them all and releases the new round,
    /// which the others acquire.
    pub(super) fn wait(&self) {
        use std::sync::atomic::Ordering::{AcqRel, Acquire, Relaxed, Release};
        let round = self.round.load(Acquire);
        if self.arrived.fetch_add(1, AcqRel) + 1 == self.threads {
            // Reset before the round moves on: no thread arrives for the next round
            // before it sees the new one.
            self.arrived.store(0, Relaxed);
            self.round.store(round.wrapping_add(1), Release);
            return;
        }
        let mut spins = 0;
        while self.round.load(Acquire) == round {
            if spins < SPINS {
                spins += 1;
                std::hint::spin_loop();
            } else {
                std::thread::yield_now();
            }
        }
    }
}

impl Pool {
    /// A pool for `threads` threads.
    pub(super) fn new(threads: usize) -> Pool {
        Pool {
            barrier: SpinBarrier::new(threads),
            end: std::sync::atomic::AtomicU64::new(0),
            panic: std::sync::Mutex::new(None),
            waited: (0..WAITS * threads).map(|_| Default::default()).collect(),
        }
    }

    /// Thread `j` waits at the barrier `at`, counting how long (two clock reads, a few
    /// tens of nanoseconds, against a window's microseconds of work at the least).
    pub(super) fn wait(&self, j: usize, at: Wait) {
        let t = std::time::Instant::now();
        self.barrier.wait();
        let ns = t.elapsed().as_nanos() as u64;
        self.waited[WAITS * j + at as usize].fetch_add(ns, std::sync::atomic::Ordering::Relaxed);
    }

    /// Runs `f`, keeping its panic (the first of the window) instead of unwinding.
    pub(super) fn guard(&self, f: impl FnOnce()) {
        if let Err(p) = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
            let mut slot = self.panic.lock().unwrap_or_else(|e| e.into_inner());
            slot.get_or_insert(p);
        }
    }
}

/// The model's tables and the shards' contexts, shared by the threads of a sharded run.
/// In a window each thread writes only what its shards own (module documentation);
/// between windows only the caller's thread touches anything, while the others wait at
/// the barrier.
#[derive(Clone, Copy)]
pub(super) struct SharedModel {
    pub(super) fabric: *mut Fabric,
    pub(super) roles: *mut RoleStates,
    pub(super) nics: *mut Nics,
    pub(super) ctxs: *mut Ctx,
    pub(super) shards: usize,
}

// SAFETY: see `SharedModel` and `SharedModel::window`.
#[allow(unsafe_code)]
unsafe impl Send for SharedModel {}
#[allow(unsafe_code)]
unsafe impl Sync for SharedModel {}

impl SharedModel {
    /// Thread `j` of `threads` runs the window of its shards (`i % threads == j`), waits
    /// for every thread, takes the frames handed to its shards, and waits again.
    #[allow(unsafe_code)]
    pub(super) fn window(
        &self,
        j: usize,
        threads: usize,
        end: Time,
        build: LoopBuild,
        pool: &Pool,
    ) {
        // SAFETY: shard i's context is touched by thread i % threads only; the model's
        // tables are written only where the running shard owns them (the partition
        // makes those parts disjoint, and `unsupported` admits only handlers that keep
        // to them); the barriers order each phase's writes before the next phase.
        for i in (j..self.shards).step_by(threads) {
            let (ctx, fabric, roles, nics) = unsafe {
                (
                    &mut *self.ctxs.add(i),
                    &mut *self.fabric,
                    &mut *self.roles,
                    &mut *self.nics,
                )
            };
            pool.guard(|| run_window(ctx, fabric, roles, nics, end, build));
        }
        pool.wait(j, Wait::Events);
        for to in (j..self.shards).step_by(threads) {
            // (A shard never hands frames to itself: a cut link joins two shards.)
            for from in (0..self.shards).filter(|&f| f != to) {
                // SAFETY: `outbox[to]` of every shard is touched by the thread of shard
                // `to` alone in this phase, and so is shard `to`'s context, the rings
                // of the links and credit returns arriving in it, and its launcher lane.
                let (src, dst, fabric, nics) = unsafe {
                    (
                        &mut *self.ctxs.add(from),
                        &mut *self.ctxs.add(to),
                        &mut *self.fabric,
                        &mut *self.nics,
                    )
                };
                let mut msgs = std::mem::take(&mut src.outbox[to]);
                pool.guard(|| receive(dst, fabric, nics, &msgs));
                msgs.clear();
                src.outbox[to] = msgs;
            }
        }
        pool.wait(j, Wait::Handover);
    }
}

#[cfg(test)]
mod tests {
    use super::SpinBarrier;
    use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

    #[test]
    fn a_spin_barrier_holds_every_thread_until_all_arrive_and_shows_their_writes() {
        // Each round every thread writes its slot, meets the others, reads every slot
        // (all must hold this round: nobody left early, every write is seen), and meets
        // them again before the next round's writes. Four threads on fewer cores also
        // exercise the yielding wait.
        let threads = 4;
        let barrier = SpinBarrier::new(threads);
        let slots: Vec<AtomicU64> = (0..threads).map(|_| AtomicU64::new(0)).collect();
        std::thread::scope(|s| {
            for j in 0..threads {
                let (barrier, slots) = (&barrier, &slots);
                s.spawn(move || {
                    for round in 1..=2000u64 {
                        slots[j].store(round, Relaxed);
                        barrier.wait();
                        for (i, x) in slots.iter().enumerate() {
                            assert_eq!(x.load(Relaxed), round, "thread {j} saw slot {i}");
                        }
                        barrier.wait();
                    }
                });
            }
        });
    }
}
