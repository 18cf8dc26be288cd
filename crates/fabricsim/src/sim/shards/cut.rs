//! Whether and where a run is cut: the features the parallel engine runs, the
//! partition, and the checks a cut must pass (dependency latencies, DR campuses).

use super::*;
use crate::model::transport::launcher::JOIN_SHARD;

/// Shards (at most `shards`, at least one) whose capture logs of `per_log` bytes each fit
/// in `allowed` bytes beside the run's estimate (`estimate`, which counts one log).
fn shards_within_budget(shards: usize, per_log: u64, allowed: u64, estimate: u64) -> usize {
    let more = allowed.saturating_sub(estimate) / per_log.max(1);
    shards
        .min(more.saturating_add(1).min(usize::MAX as u64) as usize)
        .max(1)
}

/// Threads this machine runs at once (`std::thread::available_parallelism`: its cores,
/// or fewer under a CPU quota or affinity mask); 1 when it cannot tell.
pub fn machine_threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// A cut chosen for a run: the partition, each host's shard, how far a window may reach
/// for the dependencies between shards and the least time one is heard, and the
/// crossing grid.
struct Cut {
    partition: Partition,
    host_shard: Vec<u16>,
    least_lag: Time,
    least_heard: Time,
    grid: Time,
}

impl Simulation {
    /// Cuts this simulation into `n` shards when the model can be cut and
    /// the parallel engine runs everything it uses; otherwise it stays on one. The
    /// shards run on `n` threads, or on as many as the machine runs at once
    /// ([`machine_threads`]) when that is fewer, taking turns: a waiting thread spins,
    /// and threads outnumbering cores spent their time waiting for one another (k = 16
    /// on 2 cores: 8 threads 1.2 s, 8 shards on 2 threads 0.75-0.9 s, 2 on 2 0.63 s).
    /// Returns notes saying why fewer shards than asked for, if so. The results are the
    /// same bytes whatever `n` and whatever the threads (see the module documentation).
    /// Call before the run starts.
    pub fn set_threads_per_run(&mut self, n: usize) -> Vec<String> {
        self.set_shards(n, n.min(machine_threads()))
    }

    /// [`Self::set_threads_per_run`] with `shards` shards run on `threads` threads (1: in
    /// turn on the caller's thread, the same windows; for tests and the hand-off bench).
    pub fn set_shards(&mut self, shards: usize, threads: usize) -> Vec<String> {
        // Every feature of the model runs sharded (what leaves no lookahead, link-level
        // replays and dependencies between shards without a latency, is checked on the
        // cut below), but a run is cut before it starts: once started it stays as it is.
        if self.started || !self.ctx.queue.is_empty() {
            if shards.max(1) == self.shard_count() {
                return Vec::new();
            }
            return vec![format!(
                "{shards} threads per run asked for, but the run has already started (a run \
                 is cut before it starts): it goes on as it is"
            )];
        }
        self.uncut();
        if shards <= 1 {
            return Vec::new();
        }
        if crossing_grid(&self.fabric) == 0 {
            return vec![format!(
                "{shards} threads per run asked for, but a cable has no delay, so no shard \
                 could run ahead of another: running on one thread"
            )];
        }
        let mut notes = Vec::new();
        let shards = self.shards_for_captures(shards, &mut notes);
        if shards <= 1 {
            return notes;
        }
        let Some(cut) = self.choose_cut(shards, &mut notes) else {
            return notes;
        };
        self.apply_cut(cut, threads);
        self.check_indices();
        notes
    }

    /// The run back on one shard, as built: one lane of flows in start order, one INT
    /// table, capture log, collective and multicast record, GSE counter set and queue
    /// pool; no link cut.
    fn uncut(&mut self) {
        if self.nics.launcher.lanes.len() > 1 {
            // Cut before (and called again before the run): the flows go back to one
            // lane, in the order the run was built with (start time, then flow id).
            let l = &mut self.nics.launcher;
            let flows = &self.nics.flows;
            let mut order: Vec<u32> = (l.lanes.iter()).flat_map(|x| x.order.clone()).collect();
            order.sort_by_key(|&i| (flows[i as usize].spec.start, i));
            l.lanes = vec![crate::model::transport::launcher::Lane {
                order,
                ..Default::default()
            }];
            l.host_shard.clear();
            l.everywhere.clear();
        }
        self.nics.launcher.released_at = Vec::new();
        self.shards = None;
        self.fabric.telemetry.int.truncate(1);
        if let Some(c) = self.fabric.capture.as_mut() {
            c.set_shards(1);
        }
        if let Some(hw) = self.nics.hw.as_mut() {
            hw.set_shards(1);
        }
        if let Some(m) = self.fabric.multicast.as_mut() {
            m.set_shards(1);
        }
        if let Some(g) = self.roles.gse.as_mut() {
            g.stats.truncate(1);
        }
        for (l, p) in self.fabric.links.iter_mut().zip(&mut self.fabric.ports) {
            l.cut_to = 0;
            p.set_cut(false);
            p.pool = 0;
        }
        // Nothing is queued before the run starts.
        debug_assert!(self.fabric.queue_pools.iter().all(|p| p.live_blocks() == 0));
        self.fabric.queue_pools.truncate(1);
    }

    /// At most `shards`, as many as the memory budget holds when each keeps its own
    /// capture log up to the limit (the budget priced one); a note says when fewer.
    fn shards_for_captures(&self, shards: usize, notes: &mut Vec<String>) -> usize {
        let Some(c) = self.fabric.capture.as_deref() else {
            return shards;
        };
        let per_log = c.limit() * (crate::model::capture::RECORD_BYTES + 8);
        let (allowed, source) = crate::scenario::budget::limit();
        let fit = shards_within_budget(shards, per_log, allowed, self.memory_estimate);
        if fit < shards {
            notes.push(format!(
                "{shards} threads per run asked for, but each shard keeps its own \
                 capture of up to record.pcap.limit = {} frames (about {} each), \
                 and {} are allowed ({}): running on {fit}",
                c.limit(),
                crate::scenario::budget::approx_bytes(per_log),
                crate::scenario::budget::approx_bytes(allowed),
                if source == "--max-memory" {
                    source
                } else {
                    format!("{source}; --max-memory to change it")
                }
            ));
        }
        fit
    }

    /// The cut into at most `shards` shards that keeps whole what must stay in one shard
    /// (a dependency between hosts heard sooner than the crossing grid, a campus of
    /// switches that send CNPs for each other): a coarser cut may keep it whole, so each
    /// refusal halves the shards, down to two, before the run falls back to one thread
    /// (`None`, with a note why).
    fn choose_cut(&self, shards: usize, notes: &mut Vec<String>) -> Option<Cut> {
        let grid = crossing_grid(&self.fabric);
        let mut want = shards.min(u16::MAX as usize - 1) as u32;
        let mut refused: Option<(usize, String)> = None;
        let (p, host_shard, least_lag, least_heard) = loop {
            let p = partition(&self.fabric, &self.roles, want);
            if p.shards <= 1 {
                notes.extend(p.notes.iter().cloned());
                return None;
            }
            let host_shard: Vec<u16> = (0..self.nics.hosts.len() as u32)
                .map(|h| self.shard_of_host(&p, h) as u16)
                .collect();
            let why = match self.dependency_crossings(&host_shard, grid) {
                Ok((lag, heard)) => match self.dr_campus_split(&p) {
                    None => break (p, host_shard, lag, heard),
                    Some(why) => why,
                },
                Err(why) => why,
            };
            if p.shards <= 2 {
                notes.push(format!(
                    "{shards} threads per run asked for, but {}{why}: running on one thread",
                    if refused.is_some() {
                        "even cut into 2 shards, "
                    } else {
                        ""
                    },
                ));
                return None;
            }
            refused.get_or_insert((p.shards as usize, why));
            // Three halve to two, not one: two may yet keep it whole.
            want = (p.shards / 2).max(2);
        };
        notes.extend(p.notes.iter().cloned());
        if let Some((n, why)) = refused {
            notes.push(format!(
                "{shards} threads per run asked for, but cut into {n} shards, {why}: \
                 running on {} shards, whose cut keeps it within one",
                p.shards
            ));
        }
        Some(Cut {
            partition: p,
            host_shard,
            least_lag,
            least_heard,
            grid,
        })
    }

    /// The model cut as `cut` says, run on at most `threads` threads: each shard's
    /// records, queue pool, cut links and lane of flows, and the window span.
    fn apply_cut(&mut self, cut: Cut, threads: usize) {
        let Cut {
            partition: p,
            host_shard,
            least_lag,
            least_heard,
            grid,
        } = cut;
        let s = p.shards as usize;
        // Joins that wait for nothing run in every shard (see `FlowLauncher`).
        let nf = self.nics.flows.len();
        let l = &mut self.nics.launcher;
        l.everywhere = (l.phases.iter().enumerate())
            .map(|(i, p)| p.host.is_none() && l.deps.pending[nf + i] == 0)
            .collect();
        l.host_shard = host_shard;
        let int = self.fabric.telemetry.int[0].clone();
        self.fabric.telemetry.int.resize(s, int);
        if let Some(g) = self.roles.gse.as_mut() {
            g.stats.resize(s, Default::default());
        }
        if let Some(c) = self.fabric.capture.as_mut() {
            c.set_shards(s);
        }
        if let Some(hw) = self.nics.hw.as_mut() {
            hw.set_shards(s);
        }
        if let Some(m) = self.fabric.multicast.as_mut() {
            m.set_shards(s);
        }
        // Links whose far end is in another shard; each shard's ports queue in its own
        // pool.
        let fabric = &mut self.fabric;
        fabric
            .queue_pools
            .resize_with(s, crate::model::fabric::port::queue_pool);
        for i in 0..fabric.ports.len() {
            let from = p.shard_of_node[fabric.ports[i].node.idx()];
            fabric.ports[i].pool = from as u16;
            let to = p.shard_of_node[fabric.ports[fabric.ports[i].peer.idx()].node.idx()];
            if from != to {
                fabric.links[i].cut_to = to as u16 + 1;
                fabric.ports[i].set_cut(true);
            }
        }
        // Each shard starts the flows its hosts send, in the same order.
        let lane = std::mem::take(&mut self.nics.launcher.lanes);
        let mut lanes = vec![crate::model::transport::launcher::Lane::default(); s];
        for &fid in lane.iter().flat_map(|l| l.order.iter()) {
            let sh = self.shard_of_host(&p, self.nics.flows[fid as usize].spec.src);
            lanes[sh].order.push(fid);
        }
        self.nics.launcher.lanes = lanes;
        let threads = threads.clamp(1, s);
        // A window reaches as far as nothing can cross between shards; a parent's
        // reading of its children's partial reductions (hardware collectives) relies on
        // windows of one cell.
        let reach = p.lookahead.min(least_lag);
        let span = if self.nics.hw.is_some() || reach == Time::MAX || grid == 0 {
            grid
        } else {
            (reach / grid).max(1) * grid
        };
        if least_heard < span {
            // Some releases between shards will be taken late (`take_release`).
            let nodes = self.nics.flows.len() + self.nics.launcher.phases.len();
            self.nics.launcher.released_at = vec![0; nodes];
        }
        self.shards = Some(Box::new(Shards {
            partition: p,
            threads,
            ctxs: Vec::new(),
            windows: 0,
            handoffs: 0,
            waited: Vec::new(),
            critical: 0,
            popped_at: Vec::new(),
            next_sample: None,
            last_sample: 0,
            between: 0,
            next_fault: 0,
            span,
            done_bound: 0,
            bound_next: 0,
            host_bps: Vec::new(),
        }));
    }

    /// How far a window may reach for the dependencies between shards, and the least
    /// time after which one is heard (`Time::MAX` each if none); or why the dependencies
    /// cannot be cut so. A shard learns what another did only at the next barrier, so
    /// every dependency whose two ends are in different shards (a flow's end at its
    /// receiver, its start and last byte sent at its sender, a compute phase on its
    /// host, a join point in [`JOIN_SHARD`]; the next node where it starts), and every
    /// start of a job iteration after the previous one (accounted between windows),
    /// must not act within the crossing grid `grid`: its notification latency
    /// (`[transport] notify_latency`, which the serial engine applies alike) plus its
    /// own delay plus the time before what it sets off first acts in a shard
    /// ([`Self::phase_reach`]: nothing for a flow, which starts sending; a compute
    /// phase's duration). A release heard before the end of the window the other shard
    /// has run is taken late, as of its time (`FlowLauncher::take_release`). A join that
    /// waits for nothing runs in every shard, so what waits for it never crosses.
    fn dependency_crossings(&self, host_shard: &[u16], grid: Time) -> Result<(Time, Time), String> {
        let mut least = Time::MAX;
        let mut heard = Time::MAX;
        let reach = self.phase_reach();
        let n = &self.nics;
        let d = &n.launcher.deps;
        let nf = n.flows.len();
        let flow = |f: u32| &n.flows[f as usize].spec;
        let name = |v: usize| {
            if v < nf {
                format!("flow {v}")
            } else {
                format!("phase {}", v - nf)
            }
        };
        // Where node `v` is at `point` (None: in every shard).
        let shard = |v: usize, at_end: bool| -> Option<u32> {
            if v < nf {
                let f = flow(v as u32);
                return Some(host_shard[if at_end { f.dst } else { f.src } as usize] as u32);
            }
            let p = &n.launcher.phases[v - nf];
            match p.host {
                Some(h) => Some(host_shard[h as usize] as u32),
                None if d.pending[v] == 0 => None,
                None => Some(JOIN_SHARD),
            }
        };
        let lists = [
            (&d.off, &d.after, &d.lag, true),
            (&d.soff, &d.safter, &d.slag, false),
            (&d.xoff, &d.xafter, &d.xlag, false),
        ];
        for (off, after, lag, at_end) in lists {
            for b in 0..off.len().saturating_sub(1) {
                let Some(here) = shard(b, at_end) else {
                    continue;
                };
                for k in off[b] as usize..off[b + 1] as usize {
                    let a = after[k] as usize;
                    if shard(a, false) == Some(here) {
                        continue;
                    }
                    let acts = lag[k].saturating_add(reach(a));
                    least = least.min(acts);
                    heard = heard.min(lag[k]);
                    if acts < grid {
                        return Err(format!(
                            "{} waits for {} in another shard and acts {} after it, \
                             less than the crossing grid ({}, the least cable delay): set \
                             [transport] notify_latency to at least that",
                            name(a),
                            name(b),
                            crate::base::units::fmt_time(acts),
                            crate::base::units::fmt_time(grid)
                        ));
                    }
                }
            }
        }
        for (j, js) in n.jobs.iter().enumerate() {
            if js.spec.after.is_none() {
                continue;
            }
            let first = js.spec.first_flow..js.spec.first_flow + js.spec.n_flows;
            let phases = nf as u32 + js.spec.first_phase;
            let phases = phases..phases + js.spec.n_phases;
            for v in first.chain(phases).filter(|&v| d.root[v as usize]) {
                let lag = d.chain_lag.get(v as usize).copied().unwrap_or(0);
                let acts = lag.saturating_add(reach(v as usize));
                least = least.min(acts);
                heard = heard.min(lag);
                if acts < grid {
                    return Err(format!(
                        "job iteration {j} starts when the one before ends, which a run cut \
                         into shards learns at a barrier, and its {} hears of it after {}, \
                         less than the crossing grid ({}, the least cable delay): set \
                         [transport] notify_latency to at least that (a join point, \
                         which hears at once, cannot start an iteration of a run cut into \
                         shards)",
                        name(v as usize),
                        crate::base::units::fmt_time(acts),
                        crate::base::units::fmt_time(grid)
                    ));
                }
            }
        }
        for (f, prev) in d.prev_on_conn.iter().enumerate() {
            if let Some(p) = prev {
                let (a, b) = (flow(f as u32).src, flow(*p).src);
                if host_shard[a as usize] != host_shard[b as usize] {
                    return Err(format!(
                        "flows {p} and {f} share a queue pair but not a sending shard"
                    ));
                }
            }
        }
        Ok((least, heard))
    }

    /// For each node of the dependency graph, a time within which nothing it sets off
    /// acts in a shard once it is released: what a release taken late may skip over
    /// ([`Self::dependency_crossings`]). A flow: 0 (it starts sending). A phase: the
    /// least, over what waits for its begin, of that edge's delay plus its reach, and
    /// over what waits for its end, its duration plus the same (`Time::MAX` when nothing
    /// waits for it). Its begin and end themselves only set times and counts. (A phase
    /// may begin later, at its `not_before`: that only adds.)
    fn phase_reach(&self) -> impl Fn(usize) -> Time {
        let n = &self.nics;
        let d = &n.launcher.deps;
        let nf = n.flows.len();
        let np = n.launcher.phases.len();
        // (successor, delay, after the phase's end) of phase node `v`.
        let edges = |v: usize| {
            let list = |off: &[u32], after: &[u32], lag: &[Time], end: bool| {
                let r = if off.is_empty() {
                    0..0
                } else {
                    off[v] as usize..off[v + 1] as usize
                };
                r.map(|k| (after[k] as usize, lag[k], end))
                    .collect::<Vec<_>>()
            };
            let mut e = list(&d.off, &d.after, &d.lag, true);
            e.extend(list(&d.soff, &d.safter, &d.slag, false));
            e
        };
        // Depth first without recursion (chains of phases can be long). A successor
        // not worked out when needed (on a cycle, which never starts) counts 0.
        let mut reach: Vec<Option<Time>> = vec![None; np];
        let mut open = vec![false; np];
        let mut stack: Vec<(usize, bool)> = Vec::new();
        for first in 0..np {
            stack.push((first, false));
            while let Some((i, expanded)) = stack.pop() {
                if reach[i].is_some() || (open[i] && !expanded) {
                    continue;
                }
                let v = nf + i;
                if !expanded {
                    open[i] = true;
                    stack.push((i, true));
                    for (s, _, _) in edges(v) {
                        if s >= nf && reach[s - nf].is_none() && !open[s - nf] {
                            stack.push((s - nf, false));
                        }
                    }
                    continue;
                }
                let dur = n.launcher.phases[i].duration;
                let mut r = Time::MAX;
                for (s, lag, end) in edges(v) {
                    let next = if s < nf {
                        0
                    } else {
                        reach[s - nf].unwrap_or(0)
                    };
                    let t = lag.saturating_add(next);
                    r = r.min(if end { dur.saturating_add(t) } else { t });
                }
                reach[i] = Some(r);
            }
        }
        move |v: usize| {
            if v < nf {
                0
            } else {
                reach[v - nf].unwrap_or(0)
            }
        }
    }

    /// Why the DR switches cannot be cut so, if they cannot: a flow's DR notifications
    /// are paced per flow (`DrState::next_cnp`) by the DRs of the campus it leaves (a
    /// DCI path never passes through a third campus), so those DRs must all be in one
    /// shard.
    fn dr_campus_split(&self, p: &Partition) -> Option<String> {
        let dr = self.roles.dr.as_ref()?;
        let mut shard_of_campus: Vec<Option<u32>> = Vec::new();
        for &(port, campus) in &dr.dci_ports {
            let s = p.shard_of_node[self.fabric.ports[port].node.idx()];
            let c = campus as usize;
            if shard_of_campus.len() <= c {
                shard_of_campus.resize(c + 1, None);
            }
            match shard_of_campus[c] {
                None => shard_of_campus[c] = Some(s),
                Some(t) if t != s => {
                    return Some(format!(
                        "the DR switches of campus {c} fell into two shards"
                    ))
                }
                Some(_) => {}
            }
        }
        None
    }

    fn shard_of_host(&self, p: &Partition, h: u32) -> usize {
        let port = self.nics.hosts[h as usize].port;
        p.shard_of_node[self.fabric.ports[port].node.idx()] as usize
    }

    /// Windows the parallel engine ran (0 for a run on one thread), and how far each
    /// could reach (the span, a whole number of grid cells; 0 on one thread).
    pub fn windows(&self) -> (u64, Time) {
        self.shards.as_ref().map_or((0, 0), |s| (s.windows, s.span))
    }

    /// What the parallel engine did, when the run is cut into shards.
    pub fn parallel_work(&self) -> Option<ParallelWork> {
        let s = self.shards.as_ref()?;
        let events = s.ctxs.iter().map(|c| c.queue.popped()).sum::<u64>() + s.between;
        // What the shards ran since the last window (late releases taken when the run
        // was gathered) ran on the caller's thread.
        let since: u64 = (s.ctxs.iter().enumerate())
            .map(|(i, c)| c.queue.popped() - s.popped_at.get(i).copied().unwrap_or(0))
            .sum();
        let critical = s.critical + s.between + since;
        // Averaged over the threads, by barrier.
        let threads = (s.waited.len() / WAITS).max(1) as f64;
        let by_barrier: [f64; WAITS] = std::array::from_fn(|b| {
            (s.waited.iter().skip(b).step_by(WAITS)).sum::<u64>() as f64 / threads / 1e9
        });
        Some(ParallelWork {
            shards: s.partition.shards as usize,
            threads: s.threads,
            windows: s.windows,
            window_span_ns: s.span as f64 / 1000.0,
            lookahead_ns: s.partition.lookahead as f64 / 1000.0,
            handoffs: s.handoffs,
            critical_path_events: critical,
            parallelism: match critical {
                0 => 1.0,
                c => events as f64 / c as f64,
            },
            barrier_wait_seconds: by_barrier.iter().sum(),
            barrier_wait_seconds_max: (s.waited.chunks(WAITS))
                .map(|w| w.iter().sum::<u64>())
                .max()
                .map_or(0.0, |w| w as f64 / 1e9),
            barrier_wait_by_barrier: by_barrier,
        })
    }

    /// The cut's cables between shards and its heaviest shard's ports over the mean
    /// (1.0: even), for `fabricsim check`; `None` when the run is not cut.
    pub fn cut_balance(&self) -> Option<(usize, f64)> {
        let p = &self.shards.as_ref()?.partition;
        let total: u64 = p.ports.iter().sum();
        let max = p.ports.iter().copied().max().unwrap_or(0);
        let mean = total as f64 / p.ports.len().max(1) as f64;
        Some((
            p.cut_cables,
            if mean > 0.0 { max as f64 / mean } else { 1.0 },
        ))
    }

    /// Shards the run is cut into (1 when it runs on one thread).
    pub fn shard_count(&self) -> usize {
        self.shards
            .as_ref()
            .map_or(1, |s| s.partition.shards as usize)
    }
}

#[cfg(test)]
mod tests {
    use super::shards_within_budget;

    #[test]
    fn capture_logs_of_every_shard_must_fit_the_budget() {
        // (shards, bytes a log, allowed, the run's estimate with one log) -> shards.
        for (shards, per_log, allowed, estimate, want) in [
            (4, 100, 10_000, 1_000, 4),
            (4, 100, 1_250, 1_000, 3),
            (4, 100, 1_199, 1_000, 2),
            (4, 100, 1_099, 1_000, 1),
            (4, 100, 500, 1_000, 1),
            (16, 72, 1 << 40, 1 << 30, 16),
            (1, 100, 0, 1_000, 1),
        ] {
            assert_eq!(
                shards_within_budget(shards, per_log, allowed, estimate),
                want,
                "{shards} shards, {per_log} B a log, {allowed} allowed, {estimate} estimated"
            );
        }
    }
}
