//! Sizes from settings alone (`GraphGenerator::size`, `Generator::size`) against what the
//! generators build: topology counts are exact, workload counts are upper bounds and
//! not much looser than what is generated (each kind's `size` says how tight it is).

use fabricsim::load_file;
use fabricsim::model::topology::{self, TopoGraph, TopoSize};
use fabricsim::model::workload::collective::select::AlgorithmCfg;
use fabricsim::model::workload::{self, WorkSize, Workload, WorkloadCfg};
use proptest::prelude::*;
use std::collections::HashSet;
use std::path::{Path, PathBuf};

fn scenarios_dir() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../scenarios"))
}

/// What a built graph has, counted the way `TopoSize` counts.
fn graph_size(g: &TopoGraph) -> TopoSize {
    let hosts: HashSet<usize> = g.hosts.iter().copied().collect();
    let mut edge = HashSet::new();
    let mut host_rate = 0;
    for l in &g.links {
        for (me, other) in [(l.a, l.b), (l.b, l.a)] {
            if g.nodes[me].is_switch && hosts.contains(&other) {
                edge.insert(me);
                host_rate = l.rate.0.max(host_rate);
            }
        }
    }
    TopoSize {
        hosts: g.hosts.len() as u64,
        switches: g.nodes.iter().filter(|n| n.is_switch).count() as u64,
        edge_switches: edge.len() as u64,
        links: g.links.len() as u64,
        host_rate_bps: host_rate * g.rails.max(1) as u64,
    }
}

/// What a generated workload holds, counted the way `WorkSize` counts: a training job
/// is a job, a hardware collective's ranks are its operations, its `repeat` its
/// iterations and each rank's elements what its partial reductions hold.
fn work_size(w: &Workload) -> WorkSize {
    WorkSize {
        flows: w.flows.len() as u64,
        deps: (w.deps.len() + w.timed.len()) as u64,
        phases: w.phases.len() as u64,
        jobs: (w.jobs.len() + w.trainings.len()) as u64,
        hw_ops: w.hw.iter().map(|h| h.ranks.len() as u64).sum(),
        hw_iters: w.hw.iter().map(|h| h.repeat as u64).sum(),
        hw_elems: w
            .hw
            .iter()
            .map(|h| h.ranks.len() as u64 * h.count as u64)
            .sum(),
        bytes: Some(w.flows.iter().map(|f| f.size).sum()),
    }
}

/// `bound` holds `actual` in every count.
fn assert_bounds(bound: WorkSize, actual: WorkSize, what: &str) {
    for (name, b, a) in [
        ("flows", bound.flows, actual.flows),
        ("deps", bound.deps, actual.deps),
        ("phases", bound.phases, actual.phases),
        ("jobs", bound.jobs, actual.jobs),
        ("hw_ops", bound.hw_ops, actual.hw_ops),
        ("hw_iters", bound.hw_iters, actual.hw_iters),
        ("hw_elems", bound.hw_elems, actual.hw_elems),
    ] {
        assert!(b >= a, "{what}: {name} bound {b} < {a} generated");
    }
    // Bytes, where the kind bounds them (the budget prices packets alive with it).
    if let (Some(b), Some(a)) = (bound.bytes, actual.bytes) {
        assert!(b >= a, "{what}: bytes bound {b} < {a} generated");
    }
}

/// Whether an entry's flow bound may be looser than 4x + 16, and why (each kind's
/// `size` documents it): Poisson arrivals over a duration depend on the host link
/// rates, which are unknown before the graph is built; collectives with
/// `jobs = "nic_index"` are grouped by server, which the host count does not tell.
fn loose(cfg: &WorkloadCfg) -> bool {
    match cfg {
        WorkloadCfg::Poisson(p) => p.flows.is_none(),
        // An operation's algorithm (`allreduce` with `algorithm = "auto"`) is chosen from
        // the servers and the NVSwitches, which the budget does not see: its bound is
        // the largest of its algorithms' (a ring's, quadratic in the ranks). NVLS's rail
        // ring spans the servers, which the budget does not see either: its bound takes
        // as many as there are ranks (so one server is counted as a ring of all ranks).
        WorkloadCfg::Collective(c) => {
            c.jobs == workload::JobGrouping::NicIndex
                || (c.collective.is_operation()
                    && c.algorithm
                        .is_none_or(|a| a == AlgorithmCfg::Auto || a == AlgorithmCfg::Nvls))
        }
        _ => false,
    }
}

#[test]
fn every_shipped_scenario_has_exact_topology_counts_and_workload_bounds() {
    let mut entries: Vec<_> = std::fs::read_dir(scenarios_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().and_then(|e| e.to_str()) == Some("toml"))
        .collect();
    entries.sort();
    let (mut topologies, mut entries_checked) = (0, 0);
    let mut seen = HashSet::new();
    for path in entries {
        let loaded = load_file(&path, &[]).unwrap();
        let base = loaded.base_dir.clone();
        for run in loaded.expand_runs().unwrap() {
            let sc = &run.scenario;
            // Sweeps repeat the same topology and workload under other settings.
            let key = format!("{:?}{:?}", sc.topology, sc.workload);
            if !seen.insert(key) {
                continue;
            }
            let what = format!("{} / {}", path.display(), run.name);
            let size = topology::size(&sc.topology, &base)
                .unwrap()
                .unwrap_or_else(|| panic!("{what}: no topology size"));
            let g = topology::build(&sc.topology, &base).unwrap();
            assert_eq!(size, graph_size(&g), "{what}: topology counts");
            topologies += 1;

            let bounds = workload::size(&sc.workload, size.hosts, &base).unwrap();
            for (i, ((bound, drivers), cfg)) in bounds.into_iter().zip(&sc.workload).enumerate() {
                let what = format!("{what} workload[{i}]");
                let bound = bound.unwrap_or_else(|| panic!("{what}: no size"));
                assert!(!drivers.is_empty(), "{what}: no drivers");
                let w = workload::generate(std::slice::from_ref(cfg), &g, sc.seed, &base).unwrap();
                let actual = work_size(&w);
                assert_bounds(bound, actual, &what);
                if !loose(cfg) {
                    assert!(
                        bound.flows <= 4 * actual.flows + 16,
                        "{what}: flow bound {} for {} generated",
                        bound.flows,
                        actual.flows
                    );
                    assert!(
                        bound.deps <= 4 * actual.deps + 16,
                        "{what}: edge bound {} for {} generated",
                        bound.deps,
                        actual.deps
                    );
                }
                entries_checked += 1;
            }
        }
    }
    assert!(
        topologies >= 20 && entries_checked >= 30,
        "{topologies} {entries_checked}"
    );
}

/// The knobs a budget refusal may name are fields of their kind (a `window.chunk` of its
/// `window`), and a knob at its least value never makes a count larger.
#[test]
fn every_knob_is_a_field_of_its_kind_and_only_shrinks() {
    let listed = |kinds: &[fabricsim::base::param::KindEntry], kind: &str| -> Vec<&'static str> {
        let k = kinds
            .iter()
            .find(|k| k.name == kind)
            .expect("a registered kind");
        (k.params)().iter().map(|p| p.name).collect()
    };
    let mut knobs_seen = 0;
    for path in std::fs::read_dir(scenarios_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
    {
        if path.extension().and_then(|e| e.to_str()) != Some("toml") {
            continue;
        }
        let loaded = load_file(&path, &[]).unwrap();
        let base = loaded.base_dir.clone();
        for run in loaded.expand_runs().unwrap() {
            let sc = &run.scenario;
            let what = format!("{} / {}", path.display(), run.name);
            let size = topology::size(&sc.topology, &base).unwrap().unwrap();
            let fields = listed(topology::KINDS, sc.topology.kind());
            for k in topology::size_knobs(&sc.topology, &base) {
                assert!(
                    fields.contains(&k.field),
                    "{what}: topology knob {}",
                    k.field
                );
                if let Some(l) = k.least {
                    assert!(
                        l.hosts <= size.hosts && l.links <= size.links,
                        "{what}: topology.{} at its least grows the graph",
                        k.field
                    );
                }
                knobs_seen += 1;
            }
            let ctx = workload::SizeCtx {
                hosts: size.hosts,
                host_rate_bps: size.host_rate_bps,
                base_dir: &base,
            };
            for (i, w) in sc.workload.iter().enumerate() {
                let fields = listed(workload::KINDS, w.kind());
                let now = w.model().size(&ctx).unwrap().unwrap();
                for k in workload::size_knobs(w, &ctx) {
                    let top = k.field.split('.').next().unwrap();
                    assert!(
                        fields.contains(&top),
                        "{what}: workload[{i}] knob {}",
                        k.field
                    );
                    if let Some(l) = k.least {
                        assert!(
                            l.flows <= now.flows && l.hw_ops <= now.hw_ops,
                            "{what}: workload[{i}].{} at its least grows the entry",
                            k.field
                        );
                    }
                    knobs_seen += 1;
                }
            }
        }
    }
    assert!(knobs_seen > 100, "{knobs_seen}");
}

/// Parses one `[[workload]]` entry.
fn entry(src: &str) -> WorkloadCfg {
    toml::from_str(src).unwrap_or_else(|e| panic!("{src}: {e}"))
}

fn leaf_spine(leaves: u32, servers: u32, nics: u32) -> topology::TopologyCfg {
    toml::from_str(&format!(
        "kind = \"leaf_spine\"\nleaves = {leaves}\nspines = 2\nservers_per_leaf = {servers}\n\
         nics_per_server = {nics}\nhost_rate = \"100Gbps\""
    ))
    .unwrap()
}

/// The bound and what is generated, or `None` when the generator refuses the settings.
fn bound_and_actual(
    topo: &topology::TopologyCfg,
    cfg: &WorkloadCfg,
) -> Option<(WorkSize, WorkSize)> {
    let dir = Path::new(".");
    let g = topology::build(topo, dir).unwrap();
    let w = workload::generate(std::slice::from_ref(cfg), &g, 7, dir).ok()?;
    let size = topology::size(topo, dir).unwrap().unwrap();
    let (bound, _) = workload::size(std::slice::from_ref(cfg), size.hosts, dir).unwrap()[0];
    Some((bound.unwrap(), work_size(&w)))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn collective_bounds_hold_and_are_exact_for_one_job(
        leaves in 1u32..4,
        servers in 2u32..5,
        nics in 1u32..3,
        kind in 0usize..4,
        ranks in prop_oneof![Just(None), (2i64..9).prop_map(Some)],
        nic_index in any::<bool>(),
        size in 1u64..100_000,
        chunks in 1u32..5,
        channels in 1u32..4,
        repeat in 1u32..4,
        rounds in any::<bool>(),
        window in prop_oneof![Just(None), (1u64..20_000, 1u64..5).prop_map(Some)],
    ) {
        let topo = leaf_spine(leaves, servers, nics);
        let kind = ["ring_allreduce", "alltoall", "halving_doubling", "p2p"][kind];
        let hosts = ranks.map_or("\"all\"".to_string(), |n| n.to_string());
        let jobs = if nic_index { "nic_index" } else { "one" };
        let mut src = format!(
            "kind = \"collective\"\ncollective = \"{kind}\"\nsize = {size}\nhosts = {hosts}\n\
             jobs = \"{jobs}\"\nrepeat = {repeat}\nchannels = {channels}\nrounds = {rounds}\n"
        );
        match window {
            // A window cuts its own chunks.
            Some((chunk, slots)) => src += &format!(
                "window = {{ buffer = {}, chunk = {chunk}, slots = {slots} }}\n",
                chunk * slots
            ),
            None => src += &format!("chunks = {chunks}\n"),
        }
        let cfg = entry(&src);
        if let Some((bound, actual)) = bound_and_actual(&topo, &cfg) {
            assert_bounds(bound, actual, &src);
            if window.is_some() {
                // Pieces exact (one group) or bounded; credits at most one per piece.
                prop_assert!(nic_index || bound.flows <= 2 * actual.flows, "{src}: {bound:?} {actual:?}");
            } else if !nic_index {
                // Counts exact; bytes a bound (2 S per rank), checked by assert_bounds.
                let counts = |w: WorkSize| WorkSize { bytes: None, ..w };
                prop_assert_eq!(counts(bound), counts(actual), "{}", src);
            }
        }
    }

    #[test]
    fn nccl_collective_bounds_hold(
        servers in 2u32..5,
        nics in 1u32..3,
        kind in 0usize..9,
        protocol in 0usize..5,
        nic_index in any::<bool>(),
        min in 1u64..5_000,
        steps in 0u32..4,
        chunks in 1u32..5,
        channels in 1u32..4,
        repeat in 1u32..3,
    ) {
        // A rail-optimized cluster with NVLink, so that NVLS is among the choices.
        let topo: topology::TopologyCfg = toml::from_str(&format!(
            "kind = \"rail_optimized\"\nservers = {servers}\ngpus_per_server = {}\n\
             nic_rate = \"100Gbps\"\nnvlink = \"h100\"",
            2 * nics
        ))
        .unwrap();
        let kind = [
            "allreduce", "tree_allreduce", "nvls_allreduce", "allgather",
            "ring_reduce_scatter", "broadcast", "ring_allreduce", "hierarchical_allreduce",
            "pat_reduce_scatter",
        ][kind];
        let protocol = ["auto", "simple", "ll", "ll128", "none"][protocol];
        let jobs = if nic_index { "nic_index" } else { "one" };
        let src = format!(
            "kind = \"collective\"\ncollective = \"{kind}\"\nprotocol = \"{protocol}\"\n\
             sizes = {{ min = {min}, max = {}, factor = 4 }}\njobs = \"{jobs}\"\n\
             repeat = {repeat}\nchannels = {channels}\nchunks = {chunks}\n",
            min << (2 * steps)
        );
        let cfg = entry(&src);
        if let Some((bound, actual)) = bound_and_actual(&topo, &cfg) {
            assert_bounds(bound, actual, &src);
        }
    }

    #[test]
    fn incast_permutation_all_to_all_bounds_are_exact(
        leaves in 1u32..4,
        servers in 2u32..5,
        nics in 1u32..3,
        which in 0usize..3,
        hosts in prop_oneof![Just(None), (1i64..12).prop_map(Some)],
        repeat in 1u32..5,
    ) {
        let topo = leaf_spine(leaves, servers, nics);
        let set = hosts.map_or("\"all\"".to_string(), |n| n.to_string());
        let src = match which {
            0 => format!(
                "kind = \"incast\"\nsenders = {set}\nreceiver = 0\nsize = 1000\n\
                 repeat = {repeat}\ninterval = \"1us\""
            ),
            1 => format!("kind = \"permutation\"\nhosts = {set}\nsize = 1000"),
            _ => format!("kind = \"all_to_all\"\nhosts = {set}\nsize = 1000"),
        };
        let cfg = entry(&src);
        if let Some((bound, actual)) = bound_and_actual(&topo, &cfg) {
            prop_assert_eq!(bound, actual, "{}", src);
        }
    }
}

#[test]
fn sw_collective_and_training_bounds_hold() {
    let topo = leaf_spine(2, 4, 2);
    let mut checked = 0;
    for coll in ["barrier", "allreduce", "bcast"] {
        for alg in ["default", "tree"] {
            for rph in [1, 2, 3] {
                for hosts in ["\"all\"", "5", "[0, 3, 3, 6]"] {
                    let src = format!(
                        "kind = \"sw_collective\"\ncollective = \"{coll}\"\nalgorithm = \"{alg}\"\n\
                         hosts = {hosts}\nranks_per_host = {rph}\nrepeat = 2"
                    );
                    let cfg = entry(&src);
                    if let Some((bound, actual)) = bound_and_actual(&topo, &cfg) {
                        assert_bounds(bound, actual, &src);
                        // Messages and edges are exact; only local messages move
                        // between flows and phases.
                        assert_eq!(bound.deps, actual.deps, "{src}");
                        // Every message is a flow or (inside a host) a phase: the bound
                        // counts each as a flow and, when ranks can share a host, also
                        // as a phase.
                        let shared = rph > 1 || hosts.starts_with('[');
                        let extra = if shared { bound.flows } else { 0 };
                        assert_eq!(
                            bound.flows + bound.phases - extra,
                            actual.flows + actual.phases,
                            "{src}"
                        );
                        checked += 1;
                    }
                }
            }
        }
    }
    for par in ["pp", "dp", "dp_zero3"] {
        for channels in [1, 3] {
            for window in ["", "window = { buffer = 4096, chunk = 1024, slots = 2 }"] {
                let src = format!(
                    "kind = \"training\"\nparallelism = \"{par}\"\niterations = 2\n\
                     microbatches = 4\nstages = 4\nactivation = 10000\nforward = \"1us\"\n\
                     backward = \"2us\"\ncompute = \"5us\"\ngradient = 100000\n\
                     parameters = 50000\nchannels = {channels}\n{window}"
                );
                let src = match par {
                    "pp" => src.replace(
                        "compute = \"5us\"\ngradient = 100000\nparameters = 50000\n",
                        "",
                    ),
                    "dp" => src.replace("parameters = 50000\n", ""),
                    _ => src,
                };
                let src = if par == "pp" {
                    src
                } else {
                    src.replace(
                        "microbatches = 4\nstages = 4\nactivation = 10000\nforward = \"1us\"\n\
                         backward = \"2us\"\n",
                        "",
                    )
                };
                let cfg = entry(&src);
                let (bound, actual) =
                    bound_and_actual(&topo, &cfg).unwrap_or_else(|| panic!("{src}: refused"));
                assert_bounds(bound, actual, &src);
                assert_eq!(bound.phases, actual.phases, "{src}");
                if window.is_empty() {
                    assert_eq!(bound.flows, actual.flows, "{src}");
                    // DP's compute edges are counted at the widest message.
                    assert!(
                        bound.deps * 10 <= actual.deps * 11,
                        "{src}: {bound:?} {actual:?}"
                    );
                } else {
                    assert!(
                        bound.flows <= 2 * actual.flows,
                        "{src}: {bound:?} {actual:?}"
                    );
                    assert!(bound.deps <= 3 * actual.deps, "{src}: {bound:?} {actual:?}");
                }
                checked += 1;
            }
        }
    }
    assert!(checked > 40, "{checked}");
}

#[test]
fn u32_max_settings_give_huge_bounds_quickly_without_panicking() {
    let t0 = std::time::Instant::now();
    let hosts = 1u64 << 24;
    let dir = Path::new(".");
    let m = u32::MAX;
    let cases = [
        format!("kind = \"incast\"\nsenders = \"all\"\nreceiver = 0\nsize = 1\nrepeat = {m}\ninterval = \"1us\""),
        format!("kind = \"collective\"\ncollective = \"ring_allreduce\"\nsize = 1\nchunks = {m}"),
        format!("kind = \"collective\"\ncollective = \"alltoall\"\nsize = 1\nchannels = {m}\nrounds = true"),
        format!("kind = \"collective\"\ncollective = \"halving_doubling\"\nsize = \"1TB\"\nrepeat = {m}\nchunks = {m}"),
        "kind = \"collective\"\ncollective = \"p2p\"\nsize = 1\nchannels = 100000000\njobs = \"nic_index\"".to_string(),
        format!("kind = \"collective\"\ncollective = \"ring_allreduce\"\nsize = \"1TB\"\nwindow = {{ chunk = 1 , buffer = 8 }}\nrepeat = {m}"),
        format!("kind = \"sw_collective\"\ncollective = \"barrier\"\nranks_per_host = {m}\nrepeat = {m}"),
        format!("kind = \"training\"\nparallelism = \"pp\"\nactivation = \"1TB\"\nforward = \"1us\"\nbackward = \"1us\"\nmicrobatches = {m}\niterations = {m}\nchannels = {m}\nwindow = {{ chunk = 1, buffer = 1 }}"),
        format!("kind = \"training\"\nparallelism = \"dp_zero3\"\ncompute = \"1us\"\ngradient = \"1TB\"\nparameters = \"1TB\"\niterations = {m}\nchannels = {m}"),
        format!("kind = \"hw_collective\"\ncollective = \"barrier\"\nranks_per_host = {m}"),
        "kind = \"all_to_all\"\nsize = 1".to_string(),
    ];
    for src in &cases {
        for hosts in [hosts, u64::MAX] {
            let cfg = entry(src);
            let (b, _) = workload::size(std::slice::from_ref(&cfg), hosts, dir).unwrap()[0];
            let b = b.unwrap();
            let total = b.flows.max(b.hw_ops);
            assert!(total >= 1 << 32, "{src}: {b:?}");
        }
    }
    // Topologies with fields near u32::MAX count without wrapping.
    for src in [
        format!("kind = \"leaf_spine\"\nleaves = {m}\nspines = {m}\nservers_per_leaf = {m}\nnics_per_server = {m}\nuplinks_per_pair = {m}\nhost_rate = \"1Gbps\""),
        format!("kind = \"three_tier\"\npods = {m}\ntors_per_pod = {m}\nservers_per_tor = {m}\naggs_per_pod = {m}\ncores = {m}\nhost_rate = \"1Gbps\""),
        format!("kind = \"sunway\"\nplanes = {m}\nleaves = 2\nspines = 1\nnodes_per_leaf = 2\nnodes = 4\nuplinks_per_pair = 1"),
        format!("kind = \"rail_optimized\"\nservers = {m}\ngpus_per_server = 64\nspines = {m}\nuplinks_per_pair = {m}\nnic_rate = \"1Gbps\""),
    ] {
        let t: topology::TopologyCfg = toml::from_str(&src).unwrap();
        let s = topology::size(&t, dir).unwrap().unwrap();
        assert!(s.links >= 1 << 32 || s.hosts >= 1 << 32, "{src}: {s:?}");
        // And the generator refuses it before allocating.
        assert!(topology::build(&t, dir).is_err(), "{src}");
    }
    assert!(t0.elapsed().as_secs() < 2, "{:?}", t0.elapsed());
}

#[test]
fn file_sizes_read_the_files_and_errors_name_the_file_field() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("f.csv"),
        "# flows\nsrc,dst,size,start\n0,1,1000,0\n\n1,0,2000,5us\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("f.txt"),
        "3\n0 1 3 100 10 0\n1 0 3 100 10 0\n\n0 1 3 100 10 1\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("t.txt"),
        "5 2 4\n3 4\n0 3 100Gbps 1us 0\n1 3 100Gbps 1us 0\n2 4 100Gbps 1us 0\n3 4 100Gbps 1us 0\n",
    )
    .unwrap();
    let d = dir.path();
    for (src, flows) in [
        ("kind = \"csv\"\nfile = \"f.csv\"", 2),
        ("kind = \"hpcc_flow_file\"\nfile = \"f.txt\"", 3),
    ] {
        let cfg = entry(src);
        let (b, _) = workload::size(std::slice::from_ref(&cfg), 4, d).unwrap()[0];
        assert_eq!(b.unwrap().flows, flows, "{src}");
        let missing = entry(&src.replace("f.", "missing."));
        let e = workload::size(std::slice::from_ref(&missing), 4, d).unwrap_err();
        assert_eq!(e.field, "[0].file", "{e}");
    }
    let t: topology::TopologyCfg = toml::from_str("kind = \"ns3_file\"\nfile = \"t.txt\"").unwrap();
    let s = topology::size(&t, d).unwrap().unwrap();
    let g = topology::build(&t, d).unwrap();
    let built = graph_size(&g);
    assert_eq!(
        (s.hosts, s.switches, s.links),
        (built.hosts, built.switches, built.links)
    );
    // Which switches have hosts is only in the links: a bound there.
    assert!(s.edge_switches >= built.edge_switches && s.edge_switches <= s.switches);
    std::fs::write(d.join("t.txt"), "5 6 3\n").unwrap();
    let e = topology::size(&t, d).unwrap_err();
    assert_eq!(e.field, "file", "{e}");
    assert!(e.message.contains("t.txt:1:1"), "{e}");
}
