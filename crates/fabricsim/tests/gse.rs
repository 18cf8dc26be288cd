//! Collectives, PKTC, the reorder buffer and DGSQ (issue: GSE vs RoCE).

use fabricsim::model::fabric::NodeKind;
use fabricsim::run::runner::build_all;
use fabricsim::sim::Simulation;
use fabricsim::{analysis::invariants, load_str, Outcome};
use std::path::Path;

fn build(toml: &str, sets: &[&str]) -> Simulation {
    let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
    let l = load_str(toml, "<test>", Path::new("."), &sets).expect("valid scenario");
    build_all(&l, None)
        .expect("builds")
        .pop()
        .expect("one run")
        .1
}

fn run(sim: &mut Simulation) {
    let o = sim.run(&mut |_| {});
    assert_eq!(o, Outcome::Completed);
    let bad = invariants::check(sim);
    assert!(bad.is_empty(), "{bad:#?}");
}

/// 4 leaves x 8 NICs at 100G, 400G uplinks; `spines` spines.
fn testbed(spines: u32, workload: &str) -> String {
    format!(
        r#"
name = "t"
[topology]
kind = "leaf_spine"
leaves = 4
spines = {spines}
servers_per_leaf = 1
nics_per_server = 8
host_rate = "100Gbps"
uplink_rate = "400Gbps"
link_delay = "1us"
[cc]
algorithm = "none"
{workload}
"#
    )
}

#[test]
fn idle_fabric_collectives_meet_their_lower_bound_within_5_percent() {
    for coll in ["ring_allreduce", "alltoall", "halving_doubling"] {
        let w = format!(
            "[[workload]]\nkind = \"collective\"\ncollective = \"{coll}\"\nsize = \"32MiB\"\nhosts = [0, 8, 16, 24]\n"
        );
        let mut sim = build(&testbed(4, &w), &[]);
        run(&mut sim);
        assert_eq!(sim.nics.jobs.len(), 1);
        let jct = sim.jct(0).expect("finished") as f64;
        let lb = sim.job_lower_bound(0) as f64;
        assert!(jct >= lb, "{coll}: JCT {jct} below the bound {lb}");
        assert!(
            jct <= 1.05 * lb,
            "{coll}: JCT {jct} more than 5% above {lb}"
        );
    }
}

#[test]
fn repeated_jobs_run_back_to_back() {
    let w = "[[workload]]\nkind = \"collective\"\ncollective = \"ring_allreduce\"\nsize = \"1MiB\"\nhosts = [0, 8, 16, 24]\nrepeat = 3\n";
    let mut sim = build(&testbed(4, w), &[]);
    run(&mut sim);
    assert_eq!(sim.nics.jobs.len(), 3);
    for j in 1..3 {
        assert_eq!(sim.nics.jobs[j].started, sim.nics.jobs[j - 1].finish);
        assert!(sim.jct(j).unwrap() >= sim.job_lower_bound(j));
    }
}

#[test]
fn pktc_keeps_containers_whole_delivers_in_order_and_spreads_containers() {
    // One long flow leaf0 -> leaf1 over 4 spines.
    let w = "[[workload]]\nkind = \"flows\"\nflows = [{ src = 0, dst = 8, size = \"64MiB\" }]\n";
    let mut sim = build(
        &testbed(4, w),
        &[
            "fabric.load_balance.algorithm=\"pktc\"",
            "fabric.pfc.scope=\"edge\"",
        ],
    );
    run(&mut sim);
    let g = sim.roles.gse.as_ref().expect("GSE on");
    assert_eq!(
        g.stats_total().intra_container_gaps,
        0,
        "a container was split"
    );
    assert!(
        g.stats_total().containers >= 4096,
        "{} containers",
        g.stats_total().containers
    );
    // In order at the NIC: no NACK, nothing sent twice.
    let f = &sim.nics.flows[0];
    assert_eq!(f.nacks, 0);
    assert_eq!(f.retx_bytes, 0);
    // The uplinks of leaf 0 carry within 10% of an even share.
    let leaf0 = sim
        .fabric
        .nodes
        .iter()
        .position(|n| n.name.starts_with("leaf") && n.name.ends_with('0'))
        .expect("leaf0");
    let node = &sim.fabric.nodes[leaf0];
    let up: Vec<u64> = node
        .ports
        .iter()
        .map(|p| p.0)
        .filter(|&p| {
            let peer = sim.fabric.ports[p as usize].peer;
            matches!(sim.fabric.ports[peer].owner(), NodeKind::Switch(_))
        })
        .map(|p| sim.fabric.ports[p as usize].tx_bytes)
        .collect();
    assert_eq!(up.len(), 4);
    let mean = up.iter().sum::<u64>() as f64 / 4.0;
    for b in &up {
        assert!(
            (*b as f64 - mean).abs() <= 0.10 * mean,
            "uplink bytes {up:?} not within 10% of even"
        );
    }
}

#[test]
fn reorder_buffer_restores_order_when_containers_overtake() {
    // Leaves 0 and 2 each send eight flows into leaf 1 (2:1 onto its NICs). Each source
    // GSP balances its own uplinks, but the spines' queues toward leaf 1 differ, so
    // containers overtake each other and the destination GSP holds them until the
    // earlier ones arrive. A deep buffer keeps the fabric lossless without PFC.
    let flows: Vec<String> = (0..8)
        .flat_map(|i| {
            [
                format!("{{ src = {i}, dst = {}, size = \"4MiB\" }}", 8 + i),
                format!(
                    "{{ src = {}, dst = {}, size = \"4MiB\" }}",
                    16 + i,
                    8 + (i + 1) % 8
                ),
            ]
        })
        .collect();
    let w = format!(
        "[[workload]]\nkind = \"flows\"\nflows = [{}]\n",
        flows.join(", ")
    );
    let mut sim = build(
        &testbed(3, &w),
        &[
            "fabric.load_balance.algorithm=\"pktc\"",
            "fabric.pfc.scope=\"edge\"",
            "fabric.buffer=\"200MB\"",
        ],
    );
    run(&mut sim);
    let g = sim.roles.gse.as_ref().unwrap();
    assert_eq!(g.stats_total().intra_container_gaps, 0);
    assert!(
        g.stats_total().reordered_packets > 0,
        "nothing was reordered: the test is moot"
    );
    assert!(g.stats_total().reorder_max_bytes > 0);
    for f in &sim.nics.flows {
        assert_eq!(f.nacks, 0, "a flow saw a packet out of order");
    }
}

#[test]
fn dgsq_holds_a_31_to_1_incast_to_the_port_rate_without_drops() {
    let senders: Vec<String> = (1..32).map(|h| h.to_string()).collect();
    let w = format!(
        "[[workload]]\nkind = \"incast\"\nsenders = [{}]\nreceiver = 0\nsize = \"2MiB\"\n",
        senders.join(", ")
    );
    let mut sim = build(
        &testbed(4, &w),
        &[
            "fabric.load_balance.algorithm=\"pktc\"",
            "fabric.pfc.scope=\"edge\"",
            "fabric.gse.scheduling=\"dgsq\"",
        ],
    );
    run(&mut sim);
    assert_eq!(sim.ctx.counters.drops, 0);
    // The receiver's downlink (leaf 0 -> host 0) never queues more than a few containers.
    let host_port = sim.nics.hosts[0].port;
    let down = sim.fabric.ports[host_port].peer;
    let q = sim.fabric.ports[down].max_queue_bytes;
    assert!(
        q <= 4 * 16_384 + 4 * 4_170,
        "downlink queue reached {q} bytes"
    );
    // Grants never exceed the port's line rate: the grants before the last fit in the
    // time between the first and the last grant.
    let g = sim.roles.gse.as_ref().unwrap();
    let s = &g.sched[0];
    let first = s.first_at.expect("grants were issued");
    let bytes_before_last = s.granted - s.last_bytes;
    let wire_bits = bytes_before_last as f64 * (4096.0 + 58.0 + 16.0) / 4096.0 * 8.0;
    let secs = (s.last_at - first) as f64 / 1e12;
    assert!(
        wire_bits / secs <= 100e9,
        "granted {} Gbps",
        wire_bits / secs / 1e9
    );
    assert!(s.grants >= 31 * 2 * 1024 * 1024 / 16_384);
    // Grants name the spine link each container comes in by, least loaded first: the four
    // spine -> leaf 0 links carry within 10% of an even share.
    let leaf = sim.fabric.ports[down].node;
    let node = &sim.fabric.nodes[leaf];
    let inbound: Vec<u64> = node
        .ports
        .iter()
        .map(|p| p.0)
        .filter(|&p| {
            matches!(
                sim.fabric.ports[sim.fabric.ports[p as usize].peer.idx()].owner(),
                NodeKind::Switch(_)
            )
        })
        .map(|p| sim.fabric.ports[sim.fabric.ports[p as usize].peer.idx()].tx_bytes)
        .collect();
    assert_eq!(inbound.len(), 4);
    let mean = inbound.iter().sum::<u64>() as f64 / 4.0;
    for b in &inbound {
        assert!(
            (*b as f64 - mean).abs() <= 0.10 * mean,
            "spine links into the receiver's leaf: {inbound:?}"
        );
    }
    // Without DGSQ the same incast overflows the fabric (PFC is only at the edge).
    let mut no = build(
        &testbed(4, &w),
        &[
            "fabric.load_balance.algorithm=\"pktc\"",
            "fabric.pfc.scope=\"edge\"",
            "fabric.buffer=\"2MB\"",
        ],
    );
    no.run(&mut |_| {});
    assert!(
        no.ctx.counters.drops > 0,
        "PKTC alone should drop under 31:1 incast"
    );
}

#[test]
fn an_ecmp_collision_puts_two_flows_on_one_uplink() {
    // Two flows from leaf 0 to leaf 1 over 2 spines: find a seed whose hashes collide.
    let w = "[[workload]]\nkind = \"flows\"\nflows = [{ src = 0, dst = 8, size = \"8MiB\" }, { src = 1, dst = 9, size = \"8MiB\" }]\n";
    let t = testbed(2, w).replace("uplink_rate = \"400Gbps\"", "uplink_rate = \"100Gbps\"");
    let mut found = None;
    for seed in 1..64u64 {
        let sim = build(&t, &[&format!("seed={seed}")]);
        let a = sim.path_of(0);
        let b = sim.path_of(1);
        // Same spine: identical second hop rate/delay does not tell; compare uplink ports.
        let up = |i: usize| {
            let f = &sim.nics.flows[i];
            let leaf_port = sim.fabric.ports[sim.nics.hosts[f.spec.src as usize].port.idx()].peer;
            let leaf = sim.fabric.ports[leaf_port].node;
            let NodeKind::Switch(s) = sim.fabric.nodes[leaf].kind else {
                unreachable!()
            };
            let c = sim.fabric.routing.candidates(s, f.spec.dst);
            c[fabricsim::model::routing::ecmp::pick(
                f.hash,
                sim.fabric.switches[s as usize].salt,
                c.len(),
            )]
        };
        assert_eq!(a.len(), b.len());
        if up(0) == up(1) {
            found = Some((seed, up(0)));
            break;
        }
    }
    let (seed, port) = found.expect("some seed makes the two flows collide");
    let mut sim = build(&t, &[&format!("seed={seed}")]);
    run(&mut sim);
    // The collided uplink carried both flows; the other uplink carried nothing of them.
    let node = &sim.fabric.nodes[sim.fabric.ports[port as usize].node];
    let ups: Vec<u64> = node
        .ports
        .iter()
        .map(|p| p.0)
        .filter(|&p| {
            matches!(
                sim.fabric.ports[sim.fabric.ports[p as usize].peer.idx()].owner(),
                NodeKind::Switch(_)
            )
        })
        .map(|p| sim.fabric.ports[p as usize].tx_bytes)
        .collect();
    let hot = sim.fabric.ports[port as usize].tx_bytes;
    let one_flow = 8 * 1024 * 1024;
    assert!(
        hot as f64 >= 2.0 * one_flow as f64,
        "collided uplink carried {hot}"
    );
    assert_eq!(
        ups.iter().filter(|&&b| b > one_flow / 100).count(),
        1,
        "{ups:?}"
    );
    // Each flow gets half the uplink: FCT about twice the ideal.
    for i in 0..2 {
        let slow = fabricsim::output::fct(&sim, i).unwrap() as f64 / sim.ideal[i] as f64;
        assert!(slow > 1.8, "flow {i} slowdown {slow}");
    }
}

/// A small GSE-vs-RoCE sweep: 2 variants x 2 collectives x 2 sizes.
fn small_sweep() -> String {
    let base = testbed(
        3,
        "[[workload]]\nkind = \"collective\"\ncollective = \"alltoall\"\nsize = \"1MiB\"\njobs = \"nic_index\"\n",
    )
    .replace("[cc]\nalgorithm = \"none\"", "[cc]\nalgorithm = \"dcqcn\"");
    format!(
        "# test sweep\n{base}\n[[variants]]\nname = \"roce\"\n[[variants]]\nname = \"gse\"\nset = {{ \"fabric.load_balance.algorithm\" = \"pktc\", \"fabric.gse.scheduling\" = \"dgsq\", \"fabric.pfc.scope\" = \"edge\", \"cc.algorithm\" = \"none\" }}\n[[sweep]]\npath = \"workload[0].collective\"\nlabel = \"collective\"\nvalues = [\"alltoall\", \"ring_allreduce\"]\n[[sweep]]\npath = \"workload[0].size\"\nlabel = \"size\"\nvalues = [\"256KiB\", \"1MiB\"]\n"
    )
}

fn run_sweep(dir: &Path) {
    let l = load_str(&small_sweep(), "<sweep>", Path::new("."), &[]).unwrap();
    let opts = fabricsim::run::runner::RunOptions {
        out: Some(dir.to_path_buf()),
        seed: None,
        threads: 2,
        threads_per_run: 1,
    };
    let res = fabricsim::run::runner::run(&l, &opts, &|_, _| {}).unwrap();
    assert_eq!(res.len(), 8);
}

#[test]
fn the_sweep_output_is_byte_identical_across_runs() {
    let a = tempfile::tempdir().unwrap();
    let b = tempfile::tempdir().unwrap();
    run_sweep(a.path());
    run_sweep(b.path());
    let mut files = vec![
        "comparison.csv".to_string(),
        "jct.csv".to_string(),
        "report.html".to_string(),
    ];
    for e in std::fs::read_dir(a.path()).unwrap() {
        let e = e.unwrap();
        if e.path().is_dir() {
            let name = e.file_name().to_string_lossy().to_string();
            for f in ["jobs.csv", "flows.csv", "ports.csv"] {
                files.push(format!("{name}/{f}"));
            }
        }
    }
    assert_eq!(files.len(), 3 + 8 * 3);
    for f in &files {
        let x = std::fs::read(a.path().join(f)).unwrap();
        let y = std::fs::read(b.path().join(f)).unwrap();
        assert!(x == y, "{f} differs between two runs of the same sweep");
    }
    // jct.csv pairs the variants at each sweep point.
    let jct = std::fs::read_to_string(a.path().join("jct.csv")).unwrap();
    let mut lines = jct.lines();
    let header = lines.next().unwrap();
    assert!(header.starts_with("collective,size,roce_jct_mean_ns"));
    assert!(header.contains("ratio_mean_roce_over_gse"));
    assert_eq!(lines.count(), 4);
}

#[test]
fn the_report_is_well_formed_html_with_one_svg_per_chart() {
    let d = tempfile::tempdir().unwrap();
    run_sweep(d.path());
    let html = std::fs::read_to_string(d.path().join("report.html")).unwrap();
    assert!(html.starts_with("<!DOCTYPE html>"));
    fabricsim::base::charts::check_well_formed(&html).expect("well-formed HTML");
    // The headline (each variant's JCT over the baseline's against size), then one
    // chart group per collective, two charts (mean, max JCT) per group.
    assert_eq!(html.matches("<svg").count(), 1 + 2 * 2);
    assert_eq!(html.matches("</svg>").count(), 1 + 2 * 2);
    let first_svg = html.find("<svg").unwrap();
    assert!(
        html[..first_svg].contains("relative to"),
        "the page opens with the headline ratio"
    );
    assert!(!html.contains("<script"), "self-contained: no scripts");
    assert!(html.contains("roce") && html.contains("gse"));
    assert!(html.contains("256KiB") && html.contains("1MiB"));
}
