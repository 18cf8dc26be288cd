//! Routing tables against their definition: on any switch graph, switch s's candidates
//! toward host h are the port to h where h hangs off s, else, in port order, the ports
//! to switches one hop closer to h's switch. The reference below walks the graph again
//! for every (switch, host) pair with its own breadth-first search; the tables are built
//! once per edge switch in one pass over compact adjacency (`routing::RoutingTable::
//! build_over`), which must not change a single entry.

use fabricsim::model::fabric::NodeKind;
use fabricsim::sim::Simulation;
use proptest::prelude::*;
use std::collections::VecDeque;
use std::path::Path;

/// Every link of the custom topologies.
const LINK: &str = r#"rate = "100Gbps", delay = "1us""#;

/// A custom topology of `n_sw` switches: a random tree joins them (so every host
/// reaches every other), `extra` adds links (parallel links and cycles included), and
/// host i hangs off switch `host_sw[i]`.
fn scenario(n_sw: usize, tree: &[usize], extra: &[(usize, usize)], host_sw: &[usize]) -> String {
    let switches: Vec<String> = (0..n_sw).map(|i| format!("\"s{i}\"")).collect();
    let hosts: Vec<String> = (0..host_sw.len()).map(|i| format!("\"h{i}\"")).collect();
    let mut links = Vec::new();
    for (i, &parent) in tree.iter().enumerate() {
        // Switch i + 1 hangs off an earlier switch.
        links.push(format!(
            "{{ a = \"s{}\", b = \"s{}\", {LINK} }}",
            i + 1,
            parent % (i + 1)
        ));
    }
    for &(a, b) in extra {
        if a % n_sw != b % n_sw {
            links.push(format!(
                "{{ a = \"s{}\", b = \"s{}\", {LINK} }}",
                a % n_sw,
                b % n_sw
            ));
        }
    }
    for (i, &s) in host_sw.iter().enumerate() {
        links.push(format!("{{ a = \"h{i}\", b = \"s{}\", {LINK} }}", s % n_sw));
    }
    format!(
        r#"
max_time = "1ms"
[topology]
kind = "custom"
hosts = [{}]
switches = [{}]
links = [{}]
[cc]
algorithm = "none"
[[workload]]
kind = "flows"
flows = [{{ src = "h0", dst = "h1", size = "4KB" }}]
"#,
        hosts.join(", "),
        switches.join(", "),
        links.join(", ")
    )
}

/// The candidates of every (host, switch), by definition.
fn reference(sim: &Simulation) -> Vec<Vec<Vec<u32>>> {
    let f = &sim.fabric;
    let switch_nodes: Vec<usize> = (0..f.nodes.len())
        .filter(|&n| matches!(f.nodes[n].kind, NodeKind::Switch(_)))
        .collect();
    let peer_node = |p: u32| f.ports[f.ports[p as usize].peer.idx()].node.idx();
    let sw_of = |n: usize| match f.nodes[n].kind {
        NodeKind::Switch(s) => Some(s as usize),
        NodeKind::Host(_) => None,
    };
    let n_hosts = sim.nics.hosts.len();
    let mut out = Vec::with_capacity(n_hosts);
    for h in 0..n_hosts {
        let host_node = (0..f.nodes.len())
            .find(|&n| f.nodes[n].kind == NodeKind::Host(h as u32))
            .unwrap();
        let host_port = f.nodes[host_node].ports.port(0).0;
        let edge_port = f.ports[host_port as usize].peer.0;
        let edge = sw_of(f.ports[edge_port as usize].node.idx()).unwrap();
        let mut dist = vec![usize::MAX; switch_nodes.len()];
        dist[edge] = 0;
        let mut q = VecDeque::from([edge]);
        while let Some(s) = q.pop_front() {
            for p in f.nodes[switch_nodes[s]].ports.iter() {
                if let Some(t) = sw_of(peer_node(p.0)) {
                    if dist[t] == usize::MAX {
                        dist[t] = dist[s] + 1;
                        q.push_back(t);
                    }
                }
            }
        }
        let row = switch_nodes.iter().enumerate().map(|(s, &sn)| {
            if s == edge {
                vec![edge_port]
            } else {
                f.nodes[sn]
                    .ports
                    .iter()
                    .map(|p| p.0)
                    .filter(|&p| {
                        sw_of(peer_node(p)).is_some_and(|t| dist[t].wrapping_add(1) == dist[s])
                    })
                    .collect()
            }
        });
        out.push(row.collect::<Vec<Vec<u32>>>());
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]
    #[test]
    fn every_entry_lists_the_ports_one_hop_closer_in_port_order(
        n_sw in 2usize..10,
        tree in prop::collection::vec(0usize..10, 9),
        extra in prop::collection::vec((0usize..10, 0usize..10), 0..14),
        host_sw in prop::collection::vec(0usize..10, 2..9),
    ) {
        let src = scenario(n_sw, &tree[..n_sw - 1], &extra, &host_sw);
        let l = fabricsim::load_str(&src, "routing.toml", Path::new("."), &[])
            .expect("loads");
        let sim = Simulation::build(&l.scenario, "routing.toml", Path::new("."))
            .expect("builds");
        let want = reference(&sim);
        for (h, row) in want.iter().enumerate() {
            for (s, ports) in row.iter().enumerate() {
                prop_assert_eq!(
                    &sim.fabric.routing.candidates(s as u32, h as u32),
                    ports,
                    "switch {} toward host {}\n{}", s, h, src
                );
            }
        }
    }
}

/// A fat tree of radix 8: every core switch reaches every host by one port down, every
/// edge switch reaches a host of another edge through its k/2 up ports.
#[test]
fn a_fat_tree_goes_up_on_every_up_port_and_down_on_one() {
    let src = r#"
max_time = "1ms"
[topology]
kind = "fat_tree"
k = 8
rate = "100Gbps"
link_delay = "1us"
[cc]
algorithm = "none"
[[workload]]
kind = "permutation"
size = "4KB"
"#;
    let l = fabricsim::load_str(src, "ft.toml", Path::new("."), &[]).expect("loads");
    let sim = Simulation::build(&l.scenario, "ft.toml", Path::new(".")).expect("builds");
    let want = reference(&sim);
    let mut up = 0;
    for (h, row) in want.iter().enumerate() {
        for (s, ports) in row.iter().enumerate() {
            let got = sim.fabric.routing.candidates(s as u32, h as u32);
            assert_eq!(&got, ports, "switch {s} toward host {h}");
            assert!(got.len() == 1 || got.len() == 4, "{got:?}");
            up += (got.len() == 4) as usize;
        }
    }
    // Edge switches (32) toward the 124 hosts off other edges, aggregation switches
    // (32) toward the 112 hosts of other pods.
    assert_eq!(up, 32 * 124 + 32 * 112);
}
