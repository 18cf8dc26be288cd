//! Two GPU campuses joined by DCI fibre (`kind = "multi_campus"`, document 001) through the
//! whole simulator: the scenario loads and builds, the shared routing sends traffic for the
//! other campus through the DRs and spreads it over the DCI links, and a lone transfer
//! across the fibre takes no less than its serialization plus propagation.

use fabricsim::fabric::NodeKind;
use fabricsim::ids::PortId;
use fabricsim::results::fct;
use fabricsim::units::{ser_time, US};
use fabricsim::{invariants, load_str, Outcome, Simulation};
use std::path::Path;

/// Two campuses of 2 leaves x 2 servers (400G NICs by default) and 2 spines, 2 DRs each
/// with one 400G link per (spine, DR) pair, 1.6 Tbps of DCI (2 links per DR pair) over
/// `km` of fibre.
fn scenario(km: f64, flows: &str) -> String {
    format!(
        r#"name = "two-campuses"
seed = 1
max_time = "100ms"

[topology]
kind = "multi_campus"
leaves = 2
spines = 2
servers_per_leaf = 2
dr_switches = 2
campus_to_dr_capacity = "1600Gbps"
dci_capacity = "1600Gbps"
fiber_km = {km}
link_delay = "1us"

[cc]
algorithm = "none"

[[workload]]
kind = "flows"
flows = [{flows}]
"#
    )
}

fn sim(src: &str) -> Simulation {
    let l = load_str(src, "t.toml", Path::new("."), &[]).unwrap_or_else(|e| panic!("{e}\n{src}"));
    Simulation::build(&l.scenario, &l.file, &l.base_dir).unwrap_or_else(|e| panic!("{e}"))
}

fn node(s: &Simulation, name: &str) -> usize {
    s.fabric
        .nodes
        .iter()
        .position(|n| n.name == name)
        .unwrap_or_else(|| panic!("no node {name}"))
}

fn switch_index(s: &Simulation, name: &str) -> u32 {
    match s.fabric.nodes[node(s, name)].kind {
        NodeKind::Switch(i) => i,
        NodeKind::Host(_) => panic!("{name} is a host"),
    }
}

/// Name of the node at the far end of port `p`.
fn peer_name(s: &Simulation, p: u32) -> &str {
    s.port_node_name(s.fabric.ports[p as usize].peer)
}

#[test]
fn lone_flow_across_the_dci_takes_at_least_serialization_plus_propagation() {
    // Host 0 is in campus 0, host 4 the first of campus 1.
    let size: u64 = 1 << 20;
    let mut s = sim(&scenario(
        120.0,
        &format!("{{ src = 0, dst = 4, size = {size} }}"),
    ));
    assert_eq!(s.fabric.nodes[node(&s, "c0-host0")].kind, NodeKind::Host(0));
    assert_eq!(s.fabric.nodes[node(&s, "c1-host4")].kind, NodeKind::Host(4));
    // host - leaf - spine - DR - DR - spine - leaf - host, all at 400G; the DCI hop is
    // 120 km x 5 us.
    let path = s.path_of(0);
    assert_eq!(path.len(), 7, "{path:?}");
    assert!(path.iter().all(|h| h.bps == 400_000_000_000));
    let dci = 600 * US;
    assert!(path[3].delay >= dci && path[3].delay < dci + US, "{path:?}");
    assert!(path
        .iter()
        .enumerate()
        .all(|(i, h)| i == 3 || h.delay < 2 * US));
    assert_eq!(s.run(&mut |_| {}), Outcome::Completed);
    let bad = invariants::check(&s);
    assert!(bad.is_empty(), "{bad:?}");
    let got = fct(&s, 0).expect("finished");
    // The payload alone at 400G, plus the fibre: a floor no run can beat.
    let floor = ser_time(size, 400_000_000_000) + dci;
    assert!(s.ideal[0] >= floor, "ideal {} < {floor}", s.ideal[0]);
    assert!(got >= s.ideal[0], "fct {got} < ideal {}", s.ideal[0]);
    // Alone on an idle network it meets its ideal exactly.
    assert_eq!(got, s.ideal[0]);
}

#[test]
fn traffic_for_the_other_campus_goes_through_the_drs_and_spreads_over_the_dci() {
    // Every host of campus 0 sends 8 flows to hosts of campus 1, and back.
    let mut flows = Vec::new();
    for src in 0..4 {
        for k in 0..8 {
            let dst = 4 + (src + k) % 4;
            flows.push(format!("{{ src = {src}, dst = {dst}, size = 65536 }}"));
            flows.push(format!("{{ src = {dst}, dst = {src}, size = 65536 }}"));
        }
    }
    let mut s = sim(&scenario(10.0, &flows.join(", ")));
    // Routing: a campus-0 spine's next hops toward campus 1 are its links to both DRs; a
    // DR's are its two DCI links into campus 1.
    let spine = switch_index(&s, "c0-spine1");
    let hops: Vec<&str> = s
        .fabric
        .routing
        .candidates(spine, 5)
        .into_iter()
        .map(|p| peer_name(&s, p))
        .collect();
    assert_eq!(hops, ["c0-dr0", "c0-dr1"]);
    for d in 0..2 {
        let dr = switch_index(&s, &format!("c0-dr{d}"));
        let far = format!("c1-dr{d}");
        for dst in 4..8 {
            let hops: Vec<&str> = s
                .fabric
                .routing
                .candidates(dr, dst)
                .into_iter()
                .map(|p| peer_name(&s, p))
                .collect();
            assert_eq!(hops, [far.as_str(), far.as_str()], "c0-dr{d} to host {dst}");
        }
        // Toward its own campus a DR goes back down through the spines.
        let hops: Vec<&str> = s
            .fabric
            .routing
            .candidates(dr, 0)
            .into_iter()
            .map(|p| peer_name(&s, p))
            .collect();
        assert_eq!(hops, ["c0-spine0", "c0-spine1"]);
    }
    // Within a campus nothing goes near a DR: leaf -> spine -> leaf.
    let leaf = switch_index(&s, "c0-leaf0");
    for p in s.fabric.routing.candidates(leaf, 2) {
        assert!(peer_name(&s, p).starts_with("c0-spine"));
    }
    assert_eq!(s.run(&mut |_| {}), Outcome::Completed);
    assert!(invariants::check(&s).is_empty());
    // Every flow crossed the fibre, so no flow beats 10 km of propagation (50 us).
    for i in 0..s.nics.flows.len() {
        assert!(fct(&s, i).unwrap() >= s.ideal[i]);
        assert!(s.ideal[i] > 50 * US);
    }
    // ECMP used every DCI link, in both directions.
    let mut dci_ports = 0;
    for p in 0..s.fabric.ports.len() as u32 {
        let (here, there) = (s.port_node_name(PortId(p)), peer_name(&s, p));
        if here.contains("-dr") && there.contains("-dr") {
            dci_ports += 1;
            assert!(
                s.fabric.ports[p as usize].tx_packets > 0,
                "{here} -> {there} idle"
            );
        }
    }
    assert_eq!(dci_ports, 8);
}

#[test]
fn bad_multi_campus_settings_name_their_field() {
    let flows = "{ src = 0, dst = 4, size = 4096 }";
    for (from, to, field) in [
        (
            "dr_switches = 2",
            "dr_switches = 2\ncampuses = 1",
            "topology.campuses",
        ),
        ("fiber_km = 120", "fiber_km = -5", "topology.fiber_km"),
        (
            "dci_capacity = \"1600Gbps\"",
            "dci_capacity = \"1600Gbps\"\ndr_ports = 3",
            "topology.dci_capacity",
        ),
    ] {
        let src = scenario(120.0, flows).replace(from, to);
        let l = load_str(&src, "t.toml", Path::new("."), &[]).unwrap();
        let e = match Simulation::build(&l.scenario, &l.file, &l.base_dir) {
            Ok(_) => panic!("built:\n{src}"),
            Err(e) => e,
        };
        assert_eq!(e.field.as_deref(), Some(field), "{e}");
    }
}
