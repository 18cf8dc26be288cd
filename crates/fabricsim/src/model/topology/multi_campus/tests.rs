//! Counts, capacities, delays, names and roles of generated multi-campus graphs, and the
//! errors of bad settings.

use super::*;
use crate::model::topology::leaf_spine::{self, LeafSpineCfg};
use crate::model::topology::three_tier::{self, ThreeTierCfg};

/// Two campuses of 2 leaves x 2 spines x 2 servers, 2 DRs each, one link per
/// (spine, DR) pair at 400G and 2 DCI links.
const SMALL: &str = "leaves = 2\nspines = 2\nservers_per_leaf = 2\ndr_switches = 2\ncampus_to_dr_capacity = \"1600Gbps\"\ndci_capacity = \"800Gbps\"\n";

/// The testbed: two campuses, 8 spines and 4 DRs each, 12.8 Tbps to the DRs, 3.2 Tbps
/// of DCI over 120 km (all defaults but the campus fabric's size).
const TESTBED: &str = "leaves = 8\nspines = 8\nservers_per_leaf = 4\n";

/// Two three-tier campuses of 2 pods x 2 ToRs x 2 servers, 2 aggregation switches per pod
/// and 2 cores, 2 DRs each with one 400G link per (core, DR) pair, and 2 DCI links.
const TIERED: &str = "campus = \"three_tier\"\npods = 2\ntors_per_pod = 2\nservers_per_tor = 2\naggs_per_pod = 2\ncores = 2\ndr_switches = 2\ncampus_to_dr_capacity = \"1600Gbps\"\ndci_capacity = \"800Gbps\"\n";

fn cfg(src: &str) -> MultiCampusCfg {
    toml::from_str(src).unwrap_or_else(|e| panic!("{e}\n{src}"))
}

fn graph(src: &str) -> TopoGraph {
    let g = build(&cfg(src)).unwrap_or_else(|e| panic!("{e}\n{src}"));
    g.validate().unwrap();
    g
}

/// `src` with `lines` (`key = value`, one per line) set: replacing the key's line if
/// it has one, else added.
fn with(src: &str, lines: &str) -> String {
    let mut out: Vec<String> = src.lines().map(str::to_string).collect();
    for line in lines.lines() {
        let key = line.split('=').next().unwrap().trim();
        match out
            .iter()
            .position(|l| l.split('=').next().unwrap().trim() == key)
        {
            Some(i) => out[i] = line.to_string(),
            None => out.push(line.to_string()),
        }
    }
    out.join("\n") + "\n"
}

fn err(src: &str) -> ParamError {
    match build(&cfg(src)) {
        Ok(_) => panic!("built:\n{src}"),
        Err(e) => e,
    }
}

fn named(g: &TopoGraph, name: &str) -> usize {
    g.nodes
        .iter()
        .position(|n| n.name == name)
        .unwrap_or_else(|| panic!("no node {name}"))
}

fn is_dr(g: &TopoGraph, n: usize) -> bool {
    matches!(g.nodes[n].role, NodeRole::Dr(_))
}

#[test]
fn small_graph_has_the_counts_names_and_roles() {
    let g = graph(SMALL);
    // Per campus: 4 hosts, 2 leaves, 2 spines, 2 DRs.
    assert_eq!(g.nodes.len(), 2 * 10);
    assert_eq!(g.hosts.len(), 8);
    // Per campus: 4 host links, 4 leaf-spine, 4 spine-DR; then 2 DCI links.
    assert_eq!(g.links.len(), 2 * 12 + 2);
    assert_eq!(g.dci_links(), vec![24, 25]);
    // Hosts run campus by campus; servers too.
    assert_eq!(g.nodes[g.hosts[0]].name, "c0-host0");
    assert_eq!(g.nodes[g.hosts[5]].name, "c1-host5");
    assert_eq!(g.nodes[g.hosts[5]].campus, Some(1));
    assert_eq!(g.server_of_host, [0, 1, 2, 3, 4, 5, 6, 7]);
    for name in ["c0-leaf1", "c1-spine0", "c0-dr0", "c1-dr1"] {
        named(&g, name);
    }
    let dr = named(&g, "c1-dr1");
    assert_eq!(
        g.nodes[dr].role,
        NodeRole::Dr(DrSpec {
            buffer: 4 << 30,
            dci_lossless: false
        })
    );
    assert_eq!(g.nodes[dr].campus, Some(1));
    let drs = (0..g.nodes.len()).filter(|&n| is_dr(&g, n)).count();
    assert_eq!(drs, 4);
    // DCI link i joins DR i of campus 0 to DR i of campus 1.
    for (i, &l) in g.dci_links().iter().enumerate() {
        assert_eq!(g.nodes[g.links[l].a].name, format!("c0-dr{i}"));
        assert_eq!(g.nodes[g.links[l].b].name, format!("c1-dr{i}"));
    }
    // Every DR links to every spine of its own campus and nothing else in it.
    for l in &g.links {
        if is_dr(&g, l.a) && !is_dr(&g, l.b) {
            unreachable!("DRs come after spines");
        }
        if is_dr(&g, l.b) && !is_dr(&g, l.a) {
            assert!(g.nodes[l.a].name.contains("-spine"));
            assert_eq!(g.nodes[l.a].campus, g.nodes[l.b].campus);
        }
    }
}

#[test]
fn testbed_capacities_and_delays() {
    let g = graph(TESTBED);
    let dci = g.dci_links();
    assert_eq!(dci.len(), 8);
    let dci_bps: u64 = dci.iter().map(|&l| g.links[l].rate.0).sum();
    assert_eq!(dci_bps, DEFAULT_DCI_CAPACITY.0);
    // 120 km at 5 us/km.
    for &l in &dci {
        assert_eq!(g.links[l].delay, 600 * US);
    }
    // Campus to DR: 12.8 Tbps per campus, one 400G link per (spine, DR) pair.
    for campus in 0..2 {
        let to_dr: Vec<&super::super::LinkSpec> = g
            .links
            .iter()
            .filter(|l| is_dr(&g, l.b) && !is_dr(&g, l.a) && g.nodes[l.b].campus == Some(campus))
            .collect();
        assert_eq!(to_dr.len(), 32);
        let bps: u64 = to_dr.iter().map(|l| l.rate.0).sum();
        assert_eq!(bps, 12_800_000_000_000);
        assert!(to_dr
            .iter()
            .all(|l| l.delay == super::super::DEFAULT_LINK_DELAY));
    }
    // NICs default to 400G; 2 campuses x 8 leaves x 4 servers.
    assert_eq!(g.hosts.len(), 64);
    assert!(g.links[..32].iter().all(|l| l.rate == Rate::gbps(400)));
    // Each DR: 8 campus links and 2 DCI links.
    let dr = named(&g, "c0-dr2");
    let degree = g.links.iter().filter(|l| l.a == dr || l.b == dr).count();
    assert_eq!(degree, 10);
}

#[test]
fn dci_delay_is_five_us_per_km() {
    for (km, ps) in [
        ("120", 600 * US),
        ("0", 0),
        ("10.5", 52_500_000),
        ("1000", 5_000 * US),
    ] {
        let g = graph(&format!("{SMALL}fiber_km = {km}\n"));
        for l in g.dci_links() {
            assert_eq!(g.links[l].delay, ps, "{km} km");
        }
    }
}

#[test]
fn three_campuses_are_a_full_mesh() {
    let g = graph(&format!(
        "{SMALL}campuses = 3\ndci_link_rate = \"200Gbps\"\n"
    ));
    // 800G per pair in 200G links: 4 per pair, 3 pairs.
    let dci = g.dci_links();
    assert_eq!(dci.len(), 12);
    let mut pairs = std::collections::BTreeMap::new();
    for &l in &dci {
        let (a, b) = (g.nodes[g.links[l].a].campus, g.nodes[g.links[l].b].campus);
        *pairs.entry((a.unwrap(), b.unwrap())).or_insert(0u64) += g.links[l].rate.0;
    }
    let want: Vec<((u32, u32), u64)> = [(0, 1), (0, 2), (1, 2)]
        .into_iter()
        .map(|p| (p, 800_000_000_000))
        .collect();
    assert_eq!(pairs.into_iter().collect::<Vec<_>>(), want);
    assert_eq!(g.hosts.len(), 12);
    assert_eq!(g.nodes[g.hosts[11]].name, "c2-host11");
}

#[test]
fn dr_settings_travel_on_the_graph() {
    let g = graph(&format!(
        "{SMALL}dr_buffer = \"64MiB\"\ndci_lossless = true\ndr_link_rate = \"200Gbps\"\n"
    ));
    // 1.6 Tbps of 200G links: 2 per (spine, DR) pair.
    let spine_dr = g.links.iter().filter(|l| l.rate == Rate::gbps(200)).count();
    assert_eq!(spine_dr, 2 * 8);
    let dr = named(&g, "c0-dr1");
    assert_eq!(
        g.nodes[dr].role,
        NodeRole::Dr(DrSpec {
            buffer: 64 << 20,
            dci_lossless: true
        })
    );
}

#[test]
fn other_kinds_have_no_roles_or_campuses() {
    let ls: LeafSpineCfg =
        toml::from_str("leaves = 2\nspines = 2\nservers_per_leaf = 2\nhost_rate = \"100Gbps\"\n")
            .unwrap();
    let g = leaf_spine::build(&ls).unwrap();
    assert!(g
        .nodes
        .iter()
        .all(|n| n.role == NodeRole::Fabric && n.campus.is_none()));
    assert!(g.dci_links().is_empty());
}

#[test]
fn bad_values_name_their_field() {
    for (extra, field, what) in [
        ("campuses = 0", "campuses", "at least 2 campuses"),
        ("campuses = 1", "campuses", "at least 2 campuses"),
        ("fiber_km = -1", "fiber_km", "non-negative"),
        ("fiber_km = nan", "fiber_km", "non-negative"),
        ("fiber_km = inf", "fiber_km", "non-negative"),
        ("fiber_km = 300000", "fiber_km", "at most 200000 km"),
        ("dci_capacity = \"0Gbps\"", "dci_capacity", "positive"),
        ("dci_link_rate = \"0Gbps\"", "dci_link_rate", "positive"),
        (
            "dci_capacity = \"1000Gbps\"",
            "dci_capacity",
            "whole number",
        ),
        (
            "dci_capacity = \"1200Gbps\"",
            "dci_capacity",
            "split evenly",
        ),
        (
            "dr_ports = 2",
            "dci_capacity",
            "more than the DR ports can carry",
        ),
        ("dr_ports = 1", "campus_to_dr_capacity", "dr_ports = 1"),
        (
            "campus_to_dr_capacity = \"1200Gbps\"",
            "campus_to_dr_capacity",
            "give a multiple of 1600Gbps",
        ),
        (
            "campus_to_dr_capacity = \"1700Gbps\"",
            "campus_to_dr_capacity",
            "whole number",
        ),
        ("dr_link_rate = \"0Gbps\"", "dr_link_rate", "positive"),
        ("dr_switches = 0", "dr_switches", "at least 1"),
        ("dr_buffer = 0", "dr_buffer", "positive"),
        (
            "link_delay = \"1us\"\nlink_length = \"2m\"",
            "link_delay",
            "not both",
        ),
    ] {
        let e = err(&with(SMALL, extra));
        assert_eq!(e.field, field, "{extra}: {e}");
        assert!(e.message.contains(what), "{extra}: {e}");
    }
    // Fields of the campus fabric are the leaf-spine generator's, by the same names.
    for (from, to, field) in [
        ("leaves = 2", "leaves = 0", "leaves"),
        ("spines = 2", "spines = 0", "spines"),
        (
            "servers_per_leaf = 2",
            "servers_per_leaf = 0",
            "servers_per_leaf",
        ),
    ] {
        let e = err(&SMALL.replace(from, to));
        assert_eq!(e.field, field, "{to}: {e}");
    }
    // Far too large is refused before anything is allocated.
    let e = err(&SMALL.replace("servers_per_leaf = 2", "servers_per_leaf = 100000000"));
    assert!(e.message.contains("too large"), "{e}");
}

#[test]
fn campus_kinds_are_named_as_scenarios_write_them() {
    let names: Vec<String> = [CampusKind::LeafSpine, CampusKind::ThreeTier]
        .iter()
        .map(|k| k.name().into())
        .collect();
    assert_eq!(names, crate::base::param::serde_variants::<CampusKind>());
    assert_eq!(CampusKind::default(), CampusKind::LeafSpine);
    // Saying leaf_spine is the same as saying nothing.
    let (a, b) = (
        graph(SMALL),
        graph(&format!("{SMALL}campus = \"leaf_spine\"\n")),
    );
    let ends = |g: &TopoGraph| -> Vec<(usize, usize, Rate, Time)> {
        g.links
            .iter()
            .map(|l| (l.a, l.b, l.rate, l.delay))
            .collect()
    };
    assert_eq!(ends(&a), ends(&b));
    assert!(toml::from_str::<MultiCampusCfg>(&format!("{SMALL}campus = \"fat_tree\"\n")).is_err());
}

#[test]
fn three_tier_campuses_have_the_counts_names_and_roles() {
    let g = graph(TIERED);
    // Per campus: 8 hosts, 4 ToRs, 4 aggregation switches, 2 cores, 2 DRs.
    assert_eq!(g.nodes.len(), 2 * 20);
    assert_eq!(g.hosts.len(), 16);
    // Per campus: 8 host links, 2 pods x 2 ToRs x 2 aggs, 2 pods x 2 cores, 2 cores x
    // 2 DRs; then the 2 DCI links.
    assert_eq!(g.links.len(), 2 * (8 + 8 + 4 + 4) + 2);
    assert_eq!(g.dci_links(), vec![48, 49]);
    assert_eq!(g.nodes[g.hosts[0]].name, "c0-host0");
    assert_eq!(g.nodes[g.hosts[9]].name, "c1-host9");
    assert_eq!(g.nodes[g.hosts[9]].campus, Some(1));
    // One NIC per server, servers numbered campus by campus.
    assert_eq!(g.server_of_host, (0..16).collect::<Vec<u32>>());
    for name in ["c0-tor1_1", "c1-agg0_1", "c0-core1", "c1-dr0"] {
        named(&g, name);
    }
    assert!(!g.nodes.iter().any(|n| n.name.contains("spine")));
    let drs = (0..g.nodes.len()).filter(|&n| is_dr(&g, n)).count();
    assert_eq!(drs, 4);
    // Every DR links to every core of its own campus, once, and to no other node of it.
    for campus in 0..2u32 {
        for d in 0..2 {
            let dr = named(&g, &format!("c{campus}-dr{d}"));
            let mut below: Vec<&str> = g
                .links
                .iter()
                .filter(|l| l.b == dr && !is_dr(&g, l.a))
                .map(|l| g.nodes[l.a].name.as_str())
                .collect();
            below.sort_unstable();
            let want: Vec<String> = (0..2).map(|c| format!("c{campus}-core{c}")).collect();
            assert_eq!(below, want);
        }
    }
    // DCI link i joins DR i of campus 0 to DR i of campus 1, over 120 km.
    for (i, &l) in g.dci_links().iter().enumerate() {
        assert_eq!(g.nodes[g.links[l].a].name, format!("c0-dr{i}"));
        assert_eq!(g.nodes[g.links[l].b].name, format!("c1-dr{i}"));
        assert_eq!(g.links[l].delay, 600 * US);
    }
}

/// Each campus is the three-tier generator's own graph, node for node and link for link,
/// shifted by the nodes of the campuses before it.
#[test]
fn a_three_tier_campus_is_the_three_tier_generators_graph() {
    let src = format!(
        "{}tor_agg_rate = \"800Gbps\"\nagg_core_rate = \"1600Gbps\"\nlink_delay = \"2us\"\n",
        TIERED
    );
    let g = graph(&src);
    let alone = three_tier::build(&ThreeTierCfg {
        pods: 2,
        tors_per_pod: 2,
        servers_per_tor: 2,
        aggs_per_pod: 2,
        cores: 2,
        host_rate: Rate::gbps(400),
        tor_agg_rate: Some(Rate::gbps(800)),
        agg_core_rate: Some(Rate::gbps(1600)),
        link_delay: Some(2 * US),
        link_length: None,
    })
    .unwrap();
    let (nodes, links) = (alone.nodes.len(), alone.links.len());
    for campus in 0..2 {
        let base = campus * nodes;
        for (i, n) in alone.nodes.iter().enumerate() {
            let here = &g.nodes[base + i];
            assert_eq!(here.is_switch, n.is_switch);
            if n.is_switch {
                assert_eq!(here.name, format!("c{campus}-{}", n.name));
            }
        }
        for (i, l) in alone.links.iter().enumerate() {
            let here = &g.links[campus * links + i];
            assert_eq!(
                (here.a, here.b, here.rate, here.delay),
                (base + l.a, base + l.b, l.rate, l.delay)
            );
        }
    }
    // The DR links have the campus delay and the DR link rate (dci_link_rate).
    for l in g.links.iter().filter(|l| is_dr(&g, l.b) && !is_dr(&g, l.a)) {
        assert_eq!((l.rate, l.delay), (Rate::gbps(400), 2 * US));
    }
}

#[test]
fn campus_to_dr_capacity_splits_over_the_cores() {
    // 3.2 Tbps of 400G links: 8 per campus, 2 per (core, DR) pair.
    let g = graph(&with(TIERED, "campus_to_dr_capacity = \"3200Gbps\""));
    let dr = named(&g, "c1-dr1");
    for c in 0..2 {
        let core = named(&g, &format!("c1-core{c}"));
        let n = g.links.iter().filter(|l| l.a == core && l.b == dr).count();
        assert_eq!(n, 2, "c1-core{c} to c1-dr1");
    }
    // 4 cores (2 per aggregation switch): 8 links are one per (core, DR) pair.
    let g = graph(&with(
        TIERED,
        "cores = 4\ncampus_to_dr_capacity = \"3200Gbps\"",
    ));
    let to_dr = g
        .links
        .iter()
        .filter(|l| is_dr(&g, l.b) && !is_dr(&g, l.a))
        .count();
    assert_eq!(to_dr, 2 * 4 * 2);
}

#[test]
fn fields_of_the_other_fabric_are_refused_by_name() {
    // Leaf-spine campuses (the default) refuse every three-tier field.
    for extra in [
        "pods = 2",
        "tors_per_pod = 2",
        "servers_per_tor = 2",
        "aggs_per_pod = 2",
        "cores = 2",
        "tor_agg_rate = \"400Gbps\"",
        "agg_core_rate = \"400Gbps\"",
    ] {
        let field = extra.split(' ').next().unwrap();
        let e = err(&with(SMALL, extra));
        assert_eq!(e.field, field, "{extra}: {e}");
        assert!(
            e.message.contains("campus = \"three_tier\""),
            "{extra}: {e}"
        );
    }
    // Three-tier campuses refuse every leaf-spine field, defaults included when given.
    for extra in [
        "leaves = 2",
        "spines = 2",
        "servers_per_leaf = 2",
        "nics_per_server = 1",
        "uplink_rate = \"400Gbps\"",
        "uplinks_per_pair = 1",
    ] {
        let field = extra.split(' ').next().unwrap();
        let e = err(&with(TIERED, extra));
        assert_eq!(e.field, field, "{extra}: {e}");
        assert!(
            e.message.contains("campus = \"leaf_spine\""),
            "{extra}: {e}"
        );
    }
    // Each fabric's own required fields are required.
    for field in [
        "pods",
        "tors_per_pod",
        "servers_per_tor",
        "aggs_per_pod",
        "cores",
    ] {
        let src: String = TIERED
            .lines()
            .filter(|l| !l.starts_with(&format!("{field} ")))
            .map(|l| format!("{l}\n"))
            .collect();
        let e = err(&src);
        assert_eq!(e.field, field, "{e}");
        assert!(e.message.contains("missing"), "{e}");
    }
    for field in ["leaves", "spines", "servers_per_leaf"] {
        let src: String = SMALL
            .lines()
            .filter(|l| !l.starts_with(&format!("{field} ")))
            .map(|l| format!("{l}\n"))
            .collect();
        let e = err(&src);
        assert_eq!(e.field, field, "{e}");
        assert!(e.message.contains("campus = \"leaf_spine\""), "{e}");
    }
}

#[test]
fn bad_three_tier_values_name_their_field() {
    for (extra, field, what) in [
        ("cores = 0", "cores", "at least 1 core"),
        // 4 links over 4 cores x 2 DRs.
        (
            "cores = 4",
            "campus_to_dr_capacity",
            "the 4 cores x 2 DR switches",
        ),
        (
            "campus_to_dr_capacity = \"2400Gbps\"",
            "campus_to_dr_capacity",
            "give a multiple of 1600Gbps",
        ),
        // The generator's own checks, by the same names.
        ("pods = 0", "pods", "at least 1 pod"),
        ("servers_per_tor = 0", "servers_per_tor", "at least 1"),
        (
            "aggs_per_pod = 4\ncores = 2",
            "cores",
            "not a multiple of aggs_per_pod",
        ),
        ("agg_core_rate = \"0Gbps\"", "agg_core_rate", "positive"),
        ("dr_ports = 1", "campus_to_dr_capacity", "dr_ports = 1"),
    ] {
        let e = err(&with(TIERED, extra));
        assert_eq!(e.field, field, "{extra}: {e}");
        assert!(e.message.contains(what), "{extra}: {e}");
    }
    // Far too large is refused before anything is allocated.
    let e = err(&with(TIERED, "servers_per_tor = 100000000"));
    assert!(e.message.contains("too large"), "{e}");
}
