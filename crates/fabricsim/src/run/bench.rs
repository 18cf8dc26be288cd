//! Fixed benchmark scenarios for `fabricsim bench`.
//!
//! - **fat tree** ([`Case::FatTree`]): a 3-tier k-ary fat-tree with 100G links of 1 us, a
//!   permutation of 2 MB flows at line rate (no congestion control, PFC on), 4096 B MTU.
//!   k = 8 has 128 hosts, k = 16 has 1024. The work is the same as the htsim reference
//!   runs quoted in the foundation issue, so packet-hops per wall second compare directly.
//! - **long haul** ([`Case::LongHaul`]): two `multi_campus` campuses of 256 hosts (100G
//!   NICs) with 12.8 Tbps of DCI between them, DCQCN, Poisson Google-RPC flows at load
//!   0.2 for 3 ms between random hosts (half of them cross the DCI). Run once with 120 km
//!   of fibre (600 us per DCI link) and once with the DCI as short as the campus links
//!   (1 us): same fabric, same flows, so the ratio of their events per second is what
//!   long links cost the engine (within 20 %). Many small flows over a
//!   1.2 ms round trip keep hundreds of flows per NIC waiting for ACKs, the case that
//!   once made the NIC's round robin linear in them.

use crate::scenario::load_str;
use crate::sim::Simulation;
use std::path::Path;
use std::time::Instant;

/// The benchmark scenario for radix `k`.
pub fn scenario_toml(k: u32) -> String {
    format!(
        r#"name = "bench-fattree-k{k}"
seed = 1
max_time = "100ms"

[topology]
kind = "fat_tree"
k = {k}
rate = "100Gbps"
link_delay = "1us"

[fabric]
switch_latency = "0ns"

[cc]
algorithm = "none"

[[workload]]
kind = "permutation"
size = "2MB"
"#
    )
}

/// Measurements of one benchmark run.
#[derive(Clone, Debug)]
pub struct BenchResult {
    /// Case name.
    pub name: String,
    /// Hosts.
    pub hosts: usize,
    /// Wall seconds of the event loop.
    pub wall_seconds: f64,
    /// Wall seconds to build the model.
    pub build_seconds: f64,
    /// Packet-hops simulated.
    pub packet_hops: u64,
    /// Events processed.
    pub events: u64,
    /// Simulated time (ps).
    pub sim_ps: u64,
    /// Flows finished / total.
    pub flows: (usize, usize),
    /// Memory by part at the end of the run (capacities at their peak).
    pub memory: crate::sim::memory::Breakdown,
    /// Shards the run was cut into (1: the serial engine).
    pub shards: usize,
    /// Threads the shards ran on (fewer than the shards where the machine runs fewer at
    /// once: [`crate::sim::machine_threads`]).
    pub threads: usize,
    /// Why fewer shards than threads asked for, if so.
    pub notes: Vec<String>,
    /// Events over those on the critical path of the shards' windows, when cut
    /// ([`crate::sim::ParallelWork::parallelism`]): the speedup a core per shard could
    /// give at most, the same on any machine.
    pub parallelism: Option<f64>,
    /// Seconds the threads waited at the windows' barriers, on average and at most
    /// ([`crate::sim::ParallelWork::barrier_wait_seconds`]), when cut.
    pub barrier_wait_seconds: Option<(f64, f64)>,
    /// The average by barrier ([`crate::sim::ParallelWork::barrier_wait_by_barrier`]).
    pub barrier_wait_by_barrier: Option<[f64; 3]>,
}

impl BenchResult {
    /// Packet-hops per wall second.
    pub fn hops_per_sec(&self) -> f64 {
        self.packet_hops as f64 / self.wall_seconds
    }
    /// Events per wall second.
    pub fn events_per_sec(&self) -> f64 {
        self.events as f64 / self.wall_seconds
    }
}

/// Largest fat-tree radix `fabricsim bench --k` runs: k = 74 is 101,306 hosts (the
/// scaling target; minutes of wall time and gigabytes); the reference cases are 8 and 16.
pub const MAX_BENCH_K: u32 = 74;
/// Most runs per case (`--repeat`): the median of 100 is as good as it gets.
pub const MAX_BENCH_REPEAT: u32 = 100;

/// Checks `fabricsim bench`'s arguments before any case runs, so that a bad one is an
/// input error with the argument named, not a failed child process: `k`, the radix of
/// the fat-tree case (even, 2..=[`MAX_BENCH_K`]: a fat tree's pods split their switches
/// in halves); `repeat`, runs per case (1..=[`MAX_BENCH_REPEAT`]); `km`, the DCI fibre of
/// the long-haul case (positive, finite, at most the 1 s of delay a link may have).
pub fn check_args(k: Option<u32>, repeat: u32, km: Option<f64>) -> Result<(), String> {
    if let Some(k) = k {
        if !(2..=MAX_BENCH_K).contains(&k) || !k.is_multiple_of(2) {
            return Err(format!(
                "--k {k}: the fat-tree radix must be even, between 2 and {MAX_BENCH_K} \
                 (the reference cases are 8 and 16)"
            ));
        }
    }
    if !(1..=MAX_BENCH_REPEAT).contains(&repeat) {
        return Err(format!(
            "--repeat {repeat}: runs per case must be between 1 and {MAX_BENCH_REPEAT}"
        ));
    }
    if let Some(km) = km {
        let most = crate::model::topology::multi_campus::MAX_FIBER_KM;
        if !(km.is_finite() && km > 0.0 && km <= most) {
            return Err(format!(
                "--km {km}: the DCI fibre must be a positive number of km, at most {most}"
            ));
        }
    }
    Ok(())
}

/// A benchmark case.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Case {
    /// The fat-tree permutation of radix `k`.
    FatTree(u32),
    /// The two-campus Poisson run over DCI fibre of this many km.
    LongHaul(f64),
}

impl Case {
    /// The case's scenario.
    pub fn scenario_toml(self) -> String {
        match self {
            Case::FatTree(k) => scenario_toml(k),
            Case::LongHaul(km) => long_haul_toml(km),
        }
    }
    /// The case's name in the table.
    pub fn name(self) -> String {
        match self {
            Case::FatTree(k) => format!("fat-tree k={k} permutation 2MB"),
            Case::LongHaul(km) => format!("2 campuses, DCI {km} km, Poisson"),
        }
    }
}

/// Fibre of the long-haul case without long links: 0.2 km, the 1 us of the campus links.
pub const SHORT_DCI_KM: f64 = 0.2;

/// The long-haul benchmark scenario with DCI fibre of `fiber_km`.
pub fn long_haul_toml(fiber_km: f64) -> String {
    format!(
        r#"name = "bench-long-haul"
seed = 1
max_time = "50ms"

[topology]
kind = "multi_campus"
leaves = 8
spines = 4
servers_per_leaf = 32
host_rate = "100Gbps"
uplink_rate = "400Gbps"
uplinks_per_pair = 2
dci_capacity = "12800Gbps"
fiber_km = {fiber_km}
link_delay = "1us"

[transport]
rto = "20ms"

[cc]
algorithm = "dcqcn"

[[workload]]
kind = "poisson"
cdf = "googlerpc2008"
load = 0.2
duration = "3ms"
"#
    )
}

/// Runs the fat-tree benchmark for radix `k`.
pub fn run(k: u32) -> BenchResult {
    run_case(Case::FatTree(k))
}

/// Runs one benchmark case.
pub fn run_case(case: Case) -> BenchResult {
    run_case_on(case, 1)
}

/// Runs one benchmark case cut into `threads` shards on as many threads, or on the
/// machine's threads when fewer ([`Simulation::set_threads_per_run`]).
pub fn run_case_on(case: Case, threads: usize) -> BenchResult {
    let t0 = Instant::now();
    let l = load_str(&case.scenario_toml(), "<bench>", Path::new("."), &[])
        .expect("bench scenario is valid");
    let mut sim =
        Simulation::build(&l.scenario, "<bench>", Path::new(".")).expect("bench scenario builds");
    let notes = sim.set_threads_per_run(threads);
    let build = t0.elapsed().as_secs_f64();
    let t1 = Instant::now();
    sim.run(&mut |_| {});
    let wall = t1.elapsed().as_secs_f64();
    let work = sim.parallel_work();
    BenchResult {
        name: case.name(),
        hosts: sim.nics.hosts.len(),
        wall_seconds: wall,
        build_seconds: build,
        packet_hops: sim.packet_hops(),
        events: sim.events(),
        sim_ps: sim.ctx.now,
        flows: (sim.flows_done(), sim.nics.flows.len()),
        memory: sim.memory_breakdown(),
        shards: sim.shard_count(),
        threads: work.map_or(1, |w| w.threads),
        notes,
        parallelism: work.map(|w| w.parallelism),
        barrier_wait_seconds: work.map(|w| (w.barrier_wait_seconds, w.barrier_wait_seconds_max)),
        barrier_wait_by_barrier: work.map(|w| w.barrier_wait_by_barrier),
    }
}
