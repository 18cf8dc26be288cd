//! The generated three-tier Clos (`kind = "three_tier"`) and document 004's 320-server
//! fat-tree: the preset documented in docs/SCENARIOS.md builds the same network as the
//! HPCC ns-3 file `data/topo/ns3-fat-320.txt` (counts, rates, degrees per tier, hop
//! counts between hosts, routed paths and ideal FCTs), and a lone flow on the generated
//! tree meets its ideal FCT exactly.

use fabricsim::model::topology::{self, TopoGraph};
use fabricsim::output::fct;
use fabricsim::scenario::LoadedScenario;
use fabricsim::{analysis::invariants, load_str, Outcome, Simulation};
use std::collections::{BTreeMap, VecDeque};
use std::path::{Path, PathBuf};

fn manifest_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn topo_dir() -> PathBuf {
    manifest_dir().join("data/topo")
}

/// The TOML block of docs/SCENARIOS.md that holds the document 004 preset (the fenced
/// block with `kind = "three_tier"`), so the documented snippet is the one tested.
fn documented_preset() -> String {
    let doc = std::fs::read_to_string(manifest_dir().join("../../docs/SCENARIOS.md"))
        .expect("docs/SCENARIOS.md");
    let mut blocks = doc.split("```toml\n").skip(1).map(|b| {
        b.split_once("```")
            .expect("closed code block")
            .0
            .to_string()
    });
    blocks
        .find(|b| b.contains("kind = \"three_tier\"") && b.contains("pods = 5"))
        .expect("docs/SCENARIOS.md has a ```toml block with the three_tier preset")
}

fn load(src: &str, base: &Path) -> LoadedScenario {
    load_str(src, "t.toml", base, &[]).unwrap_or_else(|e| panic!("{e}\n{src}"))
}

fn with_flows(head: &str, flows: &str) -> String {
    format!(
        "{head}\n[cc]\nalgorithm = \"none\"\n\n[[workload]]\nkind = \"flows\"\nflows = [{flows}]\n"
    )
}

fn ns3_head() -> String {
    "[topology]\nkind = \"ns3_file\"\nfile = \"ns3-fat-320.txt\"\n\n[fabric]\nbuffer = \"32MB\"\n[fabric.pfc]\nthreshold = \"static\"\nxoff = \"512KB\"\n".to_string()
}

fn graph(src: &str, base: &Path) -> TopoGraph {
    let l = load(src, base);
    topology::build(&l.scenario.topology, &l.base_dir).unwrap()
}

fn sim(src: &str, base: &Path) -> Simulation {
    let l = load(src, base);
    Simulation::build(&l.scenario, &l.file, &l.base_dir).unwrap_or_else(|e| panic!("{e}"))
}

/// Both graphs of document 004's network: generated, imported.
fn both() -> (TopoGraph, TopoGraph) {
    let flows = "{ src = 0, dst = 1, size = 4096 }";
    (
        graph(&with_flows(&documented_preset(), flows), Path::new(".")),
        graph(&with_flows(&ns3_head(), flows), &topo_dir()),
    )
}

fn adjacency(g: &TopoGraph) -> Vec<Vec<usize>> {
    let mut adj = vec![Vec::new(); g.nodes.len()];
    for l in &g.links {
        adj[l.a].push(l.b);
        adj[l.b].push(l.a);
    }
    adj
}

fn bfs(adj: &[Vec<usize>], from: &[usize]) -> Vec<usize> {
    let mut d = vec![usize::MAX; adj.len()];
    let mut q = VecDeque::new();
    for &n in from {
        d[n] = 0;
        q.push_back(n);
    }
    while let Some(n) = q.pop_front() {
        for &m in &adj[n] {
            if d[m] == usize::MAX {
                d[m] = d[n] + 1;
                q.push_back(m);
            }
        }
    }
    d
}

/// Tier of every node, from the structure alone: 0 host, 1 ToR (hosts attached),
/// 2 aggregation, 3 core (hops from the nearest host).
fn tiers(g: &TopoGraph) -> Vec<usize> {
    bfs(&adjacency(g), &g.hosts)
}

/// Per switch, its tier and how many neighbours it has in each tier; sorted.
fn degree_profile(g: &TopoGraph) -> Vec<(usize, [usize; 4])> {
    let (adj, tier) = (adjacency(g), tiers(g));
    let mut v: Vec<(usize, [usize; 4])> = (0..g.nodes.len())
        .filter(|&n| g.nodes[n].is_switch)
        .map(|n| {
            let mut by = [0; 4];
            for &m in &adj[n] {
                by[tier[m]] += 1;
            }
            (tier[n], by)
        })
        .collect();
    v.sort();
    v
}

/// How many ordered host pairs are how many links apart.
fn hop_histogram(g: &TopoGraph) -> BTreeMap<usize, usize> {
    let adj = adjacency(g);
    let mut hist = BTreeMap::new();
    for (h, &n) in g.hosts.iter().enumerate() {
        let d = bfs(&adj, &[n]);
        for (o, &m) in g.hosts.iter().enumerate() {
            if o != h {
                *hist.entry(d[m]).or_insert(0) += 1;
            }
        }
    }
    hist
}

#[test]
fn preset_has_the_counts_and_rates_of_the_ns3_file() {
    let (gen, ns3) = both();
    for g in [&gen, &ns3] {
        let switches = g.nodes.iter().filter(|n| n.is_switch).count();
        assert_eq!((g.hosts.len(), switches, g.links.len()), (320, 56, 480));
        assert!(
            g.links.iter().all(|l| l.delay == 1_000_000),
            "1 us per link"
        );
    }
    let rates = |g: &TopoGraph| {
        let mut m = BTreeMap::new();
        for l in &g.links {
            *m.entry(l.rate.0).or_insert(0) += 1;
        }
        m
    };
    assert_eq!(rates(&gen), rates(&ns3));
    assert_eq!(
        rates(&gen),
        BTreeMap::from([(100_000_000_000, 320), (400_000_000_000, 160)])
    );
    // Readable names, hosts numbered like the file.
    assert_eq!(gen.nodes[gen.hosts[319]].name, "host319");
    let names: Vec<&str> = [320, 339, 340, 359, 360, 375]
        .iter()
        .map(|&n| gen.nodes[n].name.as_str())
        .collect();
    assert_eq!(
        names,
        ["tor0_0", "tor4_3", "agg0_0", "agg4_3", "core0", "core15"]
    );
}

#[test]
fn preset_is_the_ns3_file_node_for_node_and_link_for_link() {
    let (gen, ns3) = both();
    assert_eq!(gen.hosts, ns3.hosts);
    for (i, (a, b)) in gen.nodes.iter().zip(&ns3.nodes).enumerate() {
        assert_eq!(a.is_switch, b.is_switch, "node {i}");
    }
    for (i, (a, b)) in gen.links.iter().zip(&ns3.links).enumerate() {
        assert_eq!(
            (a.a, a.b, a.rate, a.delay),
            (b.a, b.b, b.rate, b.delay),
            "link {i}: {} - {} vs {} - {}",
            gen.nodes[a.a].name,
            gen.nodes[a.b].name,
            ns3.nodes[b.a].name,
            ns3.nodes[b.b].name
        );
    }
}

#[test]
fn same_degrees_per_tier() {
    let (gen, ns3) = both();
    let p = degree_profile(&gen);
    assert_eq!(p, degree_profile(&ns3));
    // 20 ToRs: 16 hosts and 4 aggregation switches; 20 aggregation switches: 4 ToRs and
    // 4 cores; 16 cores: one aggregation switch in each of the 5 pods.
    let mut want = vec![(1, [16, 0, 4, 0]); 20];
    want.extend(vec![(2, [0, 4, 0, 4]); 20]);
    want.extend(vec![(3, [0, 0, 5, 0]); 16]);
    assert_eq!(p, want);
}

#[test]
fn same_hop_counts_between_hosts() {
    let (gen, ns3) = both();
    let hist = hop_histogram(&gen);
    assert_eq!(hist, hop_histogram(&ns3));
    // Same ToR: 20 x 16 x 15 ordered pairs, 2 links; same pod, other ToR: 5 x 64 x 48,
    // 4 links; other pod: 320 x 256, 6 links.
    assert_eq!(hist, BTreeMap::from([(2, 4800), (4, 15360), (6, 81920)]));
    // And by position: pod = host / 64, ToR = host / 16.
    let adj = adjacency(&gen);
    for h in [0usize, 17, 100, 319] {
        let d = bfs(&adj, &[gen.hosts[h]]);
        for o in (0..320).filter(|&o| o != h) {
            let want = if o / 16 == h / 16 {
                2
            } else if o / 64 == h / 64 {
                4
            } else {
                6
            };
            assert_eq!(d[gen.hosts[o]], want, "host {h} to host {o}");
        }
    }
}

/// Sample flows: same ToR, same pod, across pods, of several sizes and starts.
const SAMPLE_FLOWS: &str = "{ src = 0, dst = 1, size = 4096 }, { src = 40, dst = 20, size = 10000 }, { src = 3, dst = 319, size = \"1MB\" }, { src = 100, dst = 250, size = \"64KB\", start = \"5us\" }, { src = 255, dst = 64, size = 1 }, { src = 130, dst = 131, size = \"2MB\" }";

#[test]
fn same_routes_and_ideal_fct_per_flow() {
    let gen = sim(
        &with_flows(&documented_preset(), SAMPLE_FLOWS),
        Path::new("."),
    );
    let ns3 = sim(&with_flows(&ns3_head(), SAMPLE_FLOWS), &topo_dir());
    assert_eq!(gen.nics.flows.len(), 6);
    assert_eq!(ns3.nics.flows.len(), 6);
    let want_hops = [2, 4, 6, 6, 6, 2];
    for (i, &hops) in want_hops.iter().enumerate() {
        let (pg, pn) = (gen.path_of(i), ns3.path_of(i));
        assert_eq!(pg.len(), hops, "flow {i}: {pg:?}");
        assert_eq!(pn.len(), hops, "flow {i}: {pn:?}");
        let rates = |p: &[fabricsim::model::transport::rdma::Hop]| {
            p.iter().map(|h| h.bps).collect::<Vec<_>>()
        };
        assert_eq!(rates(&pg), rates(&pn), "flow {i}");
        assert_eq!(gen.ideal[i], ns3.ideal[i], "flow {i}: ideal FCT");
        assert!(gen.ideal[i] > 0);
    }
    // The cross-pod path runs 100G, then 400G through aggregation and core, then 100G.
    let gbps: Vec<u64> = gen
        .path_of(2)
        .iter()
        .map(|h| h.bps / 1_000_000_000)
        .collect();
    assert_eq!(gbps, [100, 400, 400, 400, 400, 100]);
}

#[test]
fn lone_flows_on_the_generated_tree_meet_their_ideal() {
    for flow in [
        "{ src = 3, dst = 319, size = \"1MB\" }",
        "{ src = 40, dst = 20, size = 10000 }",
        "{ src = 130, dst = 131, size = \"256KB\" }",
    ] {
        let mut s = sim(&with_flows(&documented_preset(), flow), Path::new("."));
        let o = s.run(&mut |_| {});
        assert_eq!(o, Outcome::Completed, "{flow}");
        let bad = invariants::check(&s);
        assert!(bad.is_empty(), "{flow}: {bad:?}");
        assert_eq!(fct(&s, 0), Some(s.ideal[0]), "{flow}: FCT == ideal");
    }
}

#[test]
fn all_sample_flows_complete_on_both_with_the_same_fcts() {
    // All six at once on both networks: every flow finishes no sooner than its ideal, and
    // the flows whose routes (data and ACKs) share no link with another flow in either
    // network (the two within a ToR, the one within pod 0) meet it exactly on both. The
    // cross-pod flows' ECMP choices differ between the two (switch names seed the hash
    // salts), so their ACKs may meet other flows' data at different places.
    let mut gen = sim(
        &with_flows(&documented_preset(), SAMPLE_FLOWS),
        Path::new("."),
    );
    let mut ns3 = sim(&with_flows(&ns3_head(), SAMPLE_FLOWS), &topo_dir());
    assert_eq!(gen.run(&mut |_| {}), Outcome::Completed);
    assert_eq!(ns3.run(&mut |_| {}), Outcome::Completed);
    for s in [&gen, &ns3] {
        assert!(invariants::check(s).is_empty());
        for i in 0..6 {
            assert!(fct(s, i).unwrap() >= s.ideal[i]);
        }
    }
    for i in [0, 1, 5] {
        assert_eq!(fct(&gen, i), Some(gen.ideal[i]), "flow {i}");
        assert_eq!(fct(&gen, i), fct(&ns3, i), "flow {i}");
    }
}

#[test]
fn rates_default_down_the_tiers() {
    let head = "[topology]\nkind = \"three_tier\"\npods = 2\ntors_per_pod = 2\nservers_per_tor = 2\naggs_per_pod = 2\ncores = 2\nhost_rate = \"25Gbps\"\n";
    let flows = "{ src = 0, dst = 7, size = 4096 }";
    let g = graph(&with_flows(head, flows), Path::new("."));
    assert!(g.links.iter().all(|l| l.rate.0 == 25_000_000_000));
    let g = graph(
        &with_flows(&format!("{head}tor_agg_rate = \"100Gbps\"\n"), flows),
        Path::new("."),
    );
    // 8 host links at 25G, the 8 ToR-agg and 4 agg-core links at 100G.
    assert_eq!(g.links.len(), 20);
    assert!(g.links[..8].iter().all(|l| l.rate.0 == 25_000_000_000));
    assert!(g.links[8..].iter().all(|l| l.rate.0 == 100_000_000_000));
    // One pod: cores are still wired (one link per aggregation switch in each group).
    let g = graph(
        &with_flows(
            &head
                .replace("pods = 2", "pods = 1")
                .replace("cores = 2", "cores = 4"),
            "{ src = 0, dst = 3, size = 4096 }",
        ),
        Path::new("."),
    );
    assert_eq!(g.links.len(), 4 + 4 + 4);
}

#[test]
fn bad_values_name_their_field() {
    let base = "[topology]\nkind = \"three_tier\"\npods = 2\ntors_per_pod = 2\nservers_per_tor = 2\naggs_per_pod = 2\ncores = 4\nhost_rate = \"100Gbps\"\n";
    let flows = "{ src = 0, dst = 7, size = 4096 }";
    for (from, to, field, what) in [
        ("pods = 2", "pods = 0", "topology.pods", "at least 1 pod"),
        (
            "tors_per_pod = 2",
            "tors_per_pod = 0",
            "topology.tors_per_pod",
            "at least 1",
        ),
        (
            "servers_per_tor = 2",
            "servers_per_tor = 0",
            "topology.servers_per_tor",
            "at least 1",
        ),
        (
            "aggs_per_pod = 2",
            "aggs_per_pod = 0",
            "topology.aggs_per_pod",
            "at least 1",
        ),
        ("cores = 4", "cores = 0", "topology.cores", "at least 1"),
        ("cores = 4", "cores = 3", "topology.cores", "not a multiple"),
        (
            "host_rate = \"100Gbps\"",
            "host_rate = \"100Gbps\"\nagg_core_rate = \"0Gbps\"",
            "topology.agg_core_rate",
            "positive",
        ),
        (
            "host_rate = \"100Gbps\"",
            "host_rate = \"100Gbps\"\nlink_delay = \"1us\"\nlink_length = \"2m\"",
            "topology.link_delay",
            "not both",
        ),
        ("pods = 2", "pods = 5000000", "topology.pods", "too large"),
    ] {
        let src = with_flows(&base.replace(from, to), flows);
        let l = load(&src, Path::new("."));
        let e = match Simulation::build(&l.scenario, &l.file, &l.base_dir) {
            Ok(_) => panic!("built:\n{src}"),
            Err(e) => e,
        };
        assert_eq!(e.field.as_deref(), Some(field), "{e}");
        assert!(e.to_string().contains(what), "{e}");
    }
    // Unknown fields are rejected by name.
    let e = load_str(
        &with_flows(&base.replace("cores = 4", "core = 4"), flows),
        "t.toml",
        Path::new("."),
        &[],
    )
    .unwrap_err();
    assert!(e.to_string().contains("unknown field `core`"), "{e}");
}
