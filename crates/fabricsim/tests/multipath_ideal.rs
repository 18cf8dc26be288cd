//! Ideal FCT and job lower bounds of flows that spread over several paths: FCT >= ideal
//! and JCT >= lower bound in every configuration, and the ideal of a sprayed flow is
//! that of its path set's narrowest cut, not of one path.

use fabricsim::analysis::invariants;
use fabricsim::model::transport::rdma::ideal_fct;
use fabricsim::run::runner::build_all;
use fabricsim::sim::{Outcome, Simulation};
use rand::{Rng, SeedableRng};
use std::path::Path;

fn build(toml: &str) -> Simulation {
    let l = fabricsim::load_str(toml, "<test>", Path::new("."), &[]).expect("valid scenario");
    build_all(&l, None)
        .expect("builds")
        .pop()
        .expect("one run")
        .1
}

/// One host per leaf on two leaves, one spine joined to each leaf by `members` links of
/// `uplink`; one flow of 8 MiB from host 0 to host 1 balanced by `lb`, over `transport`.
fn one_flow(host: &str, uplink: &str, members: u32, lb: &str, transport: &str) -> String {
    format!(
        r#"
name = "t"
max_time = "100ms"
[transport]
kind = "{transport}"
[topology]
kind = "leaf_spine"
leaves = 2
spines = 1
uplinks_per_pair = {members}
servers_per_leaf = 1
host_rate = "{host}"
uplink_rate = "{uplink}"
link_delay = "1us"
[fabric.load_balance]
algorithm = "{lb}"
[cc]
algorithm = "none"
[[workload]]
kind = "flows"
flows = [{{ src = 0, dst = 1, size = "8MiB" }}]
"#
    )
}

fn run(sim: &mut Simulation) -> Outcome {
    let o = sim.run(&mut |_| {});
    let bad = invariants::check(sim);
    assert!(bad.is_empty(), "{bad:#?}");
    o
}

/// Spraying one flow over 4 x 100G members under a 400G NIC: the NIC is the narrowest
/// cut, so the ideal is about the size at 400G, a quarter of one member's path ideal. A
/// transport that accepts packets out of order (the message transport) beats one
/// member's path by far and comes within 25 % of it on the idle fabric; go-back-N RC, which spraying at 4x a member's rate reorders
/// (the ACKs share the switches' round-robin cursors, so the members drift out of
/// step), stays above it. Under a 100G NIC the NIC binds and the ideal is the single
/// path's; ECMP keeps the single path's ideal.
#[test]
fn a_sprayed_flow_is_bounded_by_its_narrowest_cut() {
    let size = 8u64 << 20;
    let mut rc = build(&one_flow("400Gbps", "100Gbps", 4, "spray_rr", "rdma_rc"));
    assert_eq!(run(&mut rc), Outcome::Completed);
    let mut fast = build(&one_flow("400Gbps", "100Gbps", 4, "spray_rr", "message"));
    assert_eq!(
        fast.ideal[0], rc.ideal[0],
        "the ideal does not depend on the transport"
    );
    assert_eq!(run(&mut fast), Outcome::Completed);
    let ideal = fast.ideal[0];
    let one_path = ideal_fct(
        size,
        fast.ctx.params.mtu,
        fast.ctx.params.header,
        &fast.path_of(0),
    );
    let at_nic = (size as f64 * 8.0 / 400e9 * 1e12) as u64;
    assert!(
        ideal >= at_nic,
        "{ideal} below the bytes at 400G ({at_nic})"
    );
    assert!(
        ideal < at_nic + at_nic / 10,
        "{ideal}: not the 400G NIC's bound ({at_nic})"
    );
    assert!(
        4 * ideal < one_path + one_path / 10,
        "{ideal} vs one 100G path {one_path}"
    );
    let fct = fast.nics.flows[0].finish.unwrap() - fast.nics.flows[0].spec.start;
    assert!(fct >= ideal);
    // It beats one member's path by far, so that path's ideal (the old one) was no bound.
    assert!(
        2 * fct < one_path,
        "FCT {fct} vs one 100G path's ideal {one_path}"
    );
    // Not quite the ideal: a switch's round-robin cursor also turns for the ACKs it
    // forwards, so the data packets do not share the members evenly.
    assert!(
        fct < ideal + ideal / 4,
        "idle fabric: FCT {fct} vs ideal {ideal}"
    );
    assert_eq!(fast.nics.flows[0].retx_bytes, 0);
    let f = &rc.nics.flows[0];
    assert!(f.finish.unwrap() - f.spec.start >= ideal);

    let slow = build(&one_flow("100Gbps", "100Gbps", 4, "spray_rr", "rdma_rc"));
    let path = ideal_fct(
        size,
        slow.ctx.params.mtu,
        slow.ctx.params.header,
        &slow.path_of(0),
    );
    assert_eq!(slow.ideal[0], path, "a 100G NIC binds, as on one path");
    // ECMP keeps the single-path ideal, whatever the members.
    let ecmp = build(&one_flow("400Gbps", "100Gbps", 4, "ecmp", "rdma_rc"));
    let path = ideal_fct(
        size,
        ecmp.ctx.params.mtu,
        ecmp.ctx.params.header,
        &ecmp.path_of(0),
    );
    assert_eq!(ecmp.ideal[0], path);
}

/// Leaf-spine fabrics in many shapes (parallel members, oversubscribed, thin members
/// under a fast NIC), every load balancer, random flows and an AlltoAll: no flow beats its
/// ideal and no job its lower bound (the invariants, which the runner checks after every
/// run, hold).
#[test]
fn no_flow_beats_its_ideal_in_any_configuration() {
    let shapes = [
        // (leaves, spines, members, servers per leaf, host rate, uplink rate)
        (2, 2, 1, 2, "100Gbps", "100Gbps"),
        (3, 2, 2, 4, "100Gbps", "100Gbps"),
        (2, 1, 4, 2, "400Gbps", "100Gbps"),
        (3, 1, 2, 4, "100Gbps", "25Gbps"),
        (4, 2, 3, 2, "200Gbps", "50Gbps"),
    ];
    let balancers = [
        ("ecmp", ""),
        ("spray_random", ""),
        ("spray_rr", ""),
        ("pktc", "\n[fabric.gse]\nreorder_timeout = \"5ms\""),
    ];
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(16);
    let mut checked = 0;
    for (leaves, spines, members, spl, host, up) in shapes {
        let hosts = leaves * spl;
        for (lb, extra) in balancers {
            let flows: Vec<String> = (0..12)
                .map(|_| {
                    let src = rng.gen_range(0..hosts);
                    let dst = (src + rng.gen_range(1..hosts)) % hosts;
                    let size = rng.gen_range(1..300_000u64);
                    let start = rng.gen_range(0..20u64);
                    format!("{{ src = {src}, dst = {dst}, size = {size}, start = \"{start}us\" }}")
                })
                .collect();
            let ranks: Vec<String> = (0..leaves).map(|l| (l * spl).to_string()).collect();
            let toml = format!(
                r#"
name = "t"
seed = {seed}
max_time = "200ms"
[topology]
kind = "leaf_spine"
leaves = {leaves}
spines = {spines}
uplinks_per_pair = {members}
servers_per_leaf = {spl}
host_rate = "{host}"
uplink_rate = "{up}"
link_delay = "1us"
[fabric.load_balance]
algorithm = "{lb}"{extra}
[[workload]]
kind = "flows"
flows = [{flows}]
[[workload]]
kind = "collective"
collective = "alltoall"
size = "512KiB"
hosts = [{ranks}]
"#,
                seed = rng.gen_range(1..1000u32),
                flows = flows.join(", "),
                ranks = ranks.join(", "),
            );
            let mut sim = build(&toml);
            let o = run(&mut sim);
            assert_eq!(o, Outcome::Completed, "{lb} on {leaves}x{spines}x{members}");
            for (i, f) in sim.nics.flows.iter().enumerate() {
                let fct = f.finish.unwrap() - f.spec.start;
                assert!(
                    fct >= sim.ideal[i],
                    "{lb}: flow {i} FCT {fct} < ideal {}",
                    sim.ideal[i]
                );
            }
            for j in 0..sim.nics.jobs.len() {
                assert!(sim.jct(j).unwrap() >= sim.job_lower_bound(j));
            }
            checked += 1;
        }
    }
    assert_eq!(checked, 20);
}

/// The example: a 1 MB flow sprayed packet by packet, or in
/// PKTC containers (GSE), over four 25G uplinks under 100G hosts. The narrowest cut is
/// the four uplinks together (100G, like the NIC), so the ideal is about 1 MB at 100G,
/// and the flow does not beat it. The check can fail: an ideal raised above the measured
/// FCT, or a job's lower bound above its JCT, is reported.
#[test]
fn spraying_over_slow_uplinks_keeps_fct_above_ideal_and_the_check_can_fail() {
    for (lb, extra) in [
        ("spray_rr", ""),
        ("pktc", "\n[fabric.gse]\nreorder_timeout = \"5ms\""),
    ] {
        let toml = format!(
            r#"
name = "t"
max_time = "100ms"
[topology]
kind = "leaf_spine"
leaves = 2
spines = 1
uplinks_per_pair = 4
servers_per_leaf = 2
host_rate = "100Gbps"
uplink_rate = "25Gbps"
link_delay = "1us"
[fabric.load_balance]
algorithm = "{lb}"{extra}
[[workload]]
kind = "flows"
flows = [{{ src = 0, dst = 2, size = "1MB" }}]
[[workload]]
kind = "collective"
collective = "ring_allreduce"
size = "256KiB"
hosts = [1, 3]
start = "200us"
"#
        );
        let mut sim = build(&toml);
        assert_eq!(run(&mut sim), Outcome::Completed, "{lb}");
        let f = &sim.nics.flows[0];
        let fct = f.finish.unwrap() - f.spec.start;
        let at_100g = 8_000_000 * 10; // 1 MB at 100 Gbit/s, ps
        assert!(
            sim.ideal[0] >= at_100g && sim.ideal[0] < at_100g + at_100g / 5,
            "{lb}: ideal {} vs 1 MB at 100G {at_100g}",
            sim.ideal[0]
        );
        assert!(
            fct >= sim.ideal[0],
            "{lb}: FCT {fct} < ideal {}",
            sim.ideal[0]
        );
        // Tamper with the recorded bounds: the check must see it.
        sim.ideal[0] = fct + 1;
        let bad = invariants::check(&sim);
        assert_eq!(bad.len(), 1, "{lb}: {bad:#?}");
        assert!(bad[0].starts_with("flow 0: FCT") && bad[0].contains("below its ideal"));
        sim.ideal[0] = fct;
        assert!(
            invariants::check(&sim).is_empty(),
            "{lb}: FCT = ideal is allowed"
        );
        let j = sim.nics.jobs.len() - 1;
        let jct = sim.jct(j).unwrap();
        assert!(jct >= sim.job_lower_bound(j));
        // A lower bound for 1000 times the bytes lies far above the measured JCT.
        sim.nics.jobs[j].spec.size *= 1000;
        let bad = invariants::check(&sim);
        assert_eq!(bad.len(), 1, "{lb}: {bad:#?}");
        assert!(bad[0].contains("is below its lower bound"), "{}", bad[0]);
    }
}
