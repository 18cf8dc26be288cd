//! Fixed benchmark scenarios for `fabricsim bench`: a 3-tier k-ary fat-tree with 100G
//! links of 1 us, a permutation of 2 MB flows at line rate (no congestion control, PFC
//! on), 4096 B MTU. k = 8 has 128 hosts, k = 16 has 1024. The work is the same as the
//! htsim reference runs quoted in the foundation issue, so packet-hops per wall second
//! compare directly.

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

/// Runs the benchmark for radix `k`.
pub fn run(k: u32) -> BenchResult {
    let t0 = Instant::now();
    let l = load_str(&scenario_toml(k), "<bench>", Path::new("."), &[])
        .expect("bench scenario is valid");
    let mut sim =
        Simulation::build(&l.scenario, "<bench>", Path::new(".")).expect("bench scenario builds");
    let build = t0.elapsed().as_secs_f64();
    let t1 = Instant::now();
    sim.run(&mut |_| {});
    let wall = t1.elapsed().as_secs_f64();
    BenchResult {
        name: format!("fat-tree k={k} permutation 2MB"),
        hosts: sim.nics.hosts.len(),
        wall_seconds: wall,
        build_seconds: build,
        packet_hops: sim.ctx.counters.packet_hops,
        events: sim.events(),
        sim_ps: sim.ctx.now,
        flows: (sim.flows_done(), sim.nics.flows.len()),
    }
}
