//! The event loop built without the tests for the fabric's extras (faults, switch roles,
//! multicast, table routing, credits, telemetry, ECN bias, a security mode's bytes a frame: `model::fabric`): a
//! run that uses none of them takes it and gives what the loop that tests for all of them
//! gives, on one thread and cut into shards; each shipped scenario that uses an extra
//! takes the full loop.

use fabricsim::sim::{Outcome, Simulation};
use std::path::Path;

fn build(src: &str) -> Simulation {
    let l = fabricsim::load_str(src, "extras.toml", Path::new("."), &[])
        .unwrap_or_else(|e| panic!("{e}"));
    Simulation::build(&l.scenario, &l.file, &l.base_dir).unwrap_or_else(|e| panic!("{e}"))
}

/// A fat tree of radix 4 at 100G with 1 us links, and `rest`.
fn fat_tree(rest: &str) -> String {
    format!(
        "name = \"extras\"\nseed = 11\nmax_time = \"50ms\"\n[topology]\nkind = \"fat_tree\"\n\
         k = 4\nrate = \"100Gbps\"\nlink_delay = \"1us\"\n{rest}"
    )
}

/// What a run did: each flow's finish at the receiver and the sender, each port's
/// counters, the packet-hops, the end time and the events.
fn digest(sim: &Simulation) -> String {
    let flows: Vec<_> = (sim.nics.flows.iter())
        .map(|f| (f.finish, f.sender_done, f.data_pkts_sent))
        .collect();
    let ports: Vec<_> = (sim.fabric.ports.iter())
        .map(|p| {
            let s = &p.stats;
            (p.tx_packets, p.tx_bytes, s.drops, s.ecn_marked, s.paused_ps)
        })
        .collect();
    format!(
        "{flows:?} {ports:?} {} {} {}",
        sim.packet_hops(),
        sim.ctx.now,
        sim.events()
    )
}

#[test]
fn a_plain_run_takes_the_plain_loop_and_gives_the_full_loops_results() {
    let cases = [
        // The benchmark's kind: a permutation at line rate under PFC, no congestion control.
        (
            "permutation-pfc",
            fat_tree(
                "[cc]\nalgorithm = \"none\"\n[[workload]]\nkind = \"permutation\"\n\
                 size = \"200KB\"\n",
            ),
        ),
        // DCQCN: ECN marks and CNPs, an incast whose switches pause their upstreams.
        (
            "incast-dcqcn",
            fat_tree(
                "[fabric]\nbuffer = \"1MB\"\n[fabric.ecn]\nkmin = \"20KB\"\nkmax = \"200KB\"\n\
                 [fabric.pfc]\nthreshold = \"static\"\nxoff = \"64KB\"\n[cc]\n\
                 algorithm = \"dcqcn\"\n[[workload]]\nkind = \"incast\"\nsenders = 12\n\
                 receiver = 0\nsize = \"400KB\"\n[[workload]]\nkind = \"permutation\"\n\
                 size = \"50KB\"\n",
            ),
        ),
    ];
    for (name, src) in &cases {
        for threads in [1, 2] {
            let mut plain = build(src);
            assert!(!plain.uses_extras(), "{name}: uses no extra");
            let mut full = build(src);
            full.always_test_extras();
            if threads > 1 {
                plain.set_threads_per_run(threads);
                full.set_threads_per_run(threads);
            }
            assert_eq!(plain.run(&mut |_| {}), Outcome::Completed, "{name}");
            assert_eq!(full.run(&mut |_| {}), Outcome::Completed, "{name}");
            assert!(plain.packet_hops() > 0, "{name}");
            assert_eq!(digest(&plain), digest(&full), "{name} on {threads} threads");
        }
    }
    // The incast did pause and mark: the tests it leaves out ran past those paths.
    let mut sim = build(&cases[1].1);
    assert_eq!(sim.run(&mut |_| {}), Outcome::Completed);
    let c = &sim.ctx.counters;
    assert!(c.pfc_frames > 0 && c.ecn_marks > 0 && c.cnps > 0, "{c:?}");
}

#[test]
fn the_shipped_scenarios_that_use_an_extra_take_the_full_loop() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios");
    // (scenario, overrides as `--set` takes them, the extra it uses; `None`: none).
    let expect: &[(&str, &[&str], Option<&str>)] = &[
        ("quickstart.toml", &[], None),
        ("incast-pfc.toml", &[], None),
        ("dcqcn-fairness.toml", &[], None),
        ("acc-convergence.toml", &[], None),
        ("pfc-vs-credit-buffer.toml", &[], None),
        ("sunway-faults.toml", &[], Some("faults")),
        ("sunway-adaptive.toml", &[], Some("table routing")),
        ("sunway-collectives.toml", &[], Some("multicast")),
        (
            "pfc-vs-credit-buffer.toml",
            &["fabric.pfc.enabled=false", "fabric.credit.enabled=true"],
            Some("credits"),
        ),
        (
            "acc-convergence.toml",
            &["cc.algorithm=\"acc\""],
            Some("TCD"),
        ),
        (
            "acc-convergence.toml",
            &["cc.algorithm=\"hpcc\""],
            Some("INT"),
        ),
        ("ecn-unfairness.toml", &[], None),
        (
            "ecn-unfairness.toml",
            &["fabric.ecn.ingress_bias={ \"leaf0:2\" = 2.0 }"],
            Some("ECN ingress bias"),
        ),
        ("security-overhead.toml", &[], None),
        (
            "security-overhead.toml",
            &["fabric.security.mode=\"macsec\""],
            Some("MACsec's bytes a frame"),
        ),
        ("gse-ablation.toml", &[], None),
        (
            "gse-ablation.toml",
            &[
                "fabric.load_balance.algorithm=\"pktc\"",
                "fabric.gse.scheduling=\"dgsq\"",
                "fabric.pfc.scope=\"edge\"",
                "cc.algorithm=\"none\"",
            ],
            Some("GSE roles"),
        ),
        ("longhaul-cnp.toml", &[], Some("DR roles")),
        ("rail-optimized.toml", &[], None),
        ("rail-optimized.toml", &["topology.nvlink=\"h100\""], None),
        (
            "rail-optimized.toml",
            &["topology.planes=2"],
            Some("two ports a NIC, data on both"),
        ),
        (
            "rail-optimized.toml",
            &["topology.planes=2", "transport.rail=1"],
            Some("two ports a NIC, data on one"),
        ),
        (
            "rail-optimized.toml",
            &["transport.qp_burst=65536"],
            Some("QP bursts"),
        ),
        ("forward-cnp.toml", &[], None),
        (
            "forward-cnp.toml",
            &["cc.dcqcn.cnp_from=\"switch\""],
            Some("switch CNPs"),
        ),
    ];
    for &(file, set, extra) in expect {
        let src = std::fs::read_to_string(dir.join(file)).unwrap_or_else(|e| panic!("{file}: {e}"));
        let set: Vec<String> = set.iter().map(|s| s.to_string()).collect();
        let l = fabricsim::load_str(&src, file, &dir, &set).unwrap_or_else(|e| panic!("{e}"));
        let sim = Simulation::build(&l.scenario, &l.file, &l.base_dir)
            .unwrap_or_else(|e| panic!("{file}: {e}"));
        assert_eq!(
            sim.uses_extras(),
            extra.is_some(),
            "{file} {set:?}: {extra:?}"
        );
    }
    // INT, which only the NICs' packets ask for.
    let hpcc = build(&fat_tree(
        "[cc]\nalgorithm = \"hpcc\"\n[[workload]]\nkind = \"permutation\"\nsize = \"50KB\"\n",
    ));
    assert!(hpcc.uses_extras(), "HPCC's INT");
}
