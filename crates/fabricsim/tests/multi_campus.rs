//! Two GPU campuses joined by DCI fibre (`kind = "multi_campus"`, document 001) through the
//! whole simulator: the scenario loads and builds, the shared routing sends traffic for the
//! other campus through the DRs and spreads it over the DCI links, and a lone transfer
//! across the fibre takes no less than its serialization plus propagation. The same for
//! three-tier campuses (`campus = "three_tier"`), whose DRs hang off the cores, and which
//! stay lossless under congestion while only the lossy DR drops.

use fabricsim::base::ids::PortId;
use fabricsim::base::units::{ser_time, US};
use fabricsim::model::fabric::roles::SwitchRole;
use fabricsim::model::fabric::NodeKind;
use fabricsim::output::fct;
use fabricsim::{analysis::invariants, load_str, Outcome, Simulation};
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

/// Two three-tier campuses of 2 pods x 2 ToRs x 2 servers (400G NICs, 400G everywhere),
/// 2 aggregation switches per pod and 2 cores, 2 DRs each with one 400G link per
/// (core, DR) pair, 800 Gbps of DCI (one link per DR pair) over `km` of fibre. `extra`
/// goes at the end of `[topology]`, `tail` after it (other sections).
fn tiered(km: f64, extra: &str, tail: &str, flows: &str) -> String {
    format!(
        r#"name = "two-tiered-campuses"
seed = 1
max_time = "100ms"

[topology]
kind = "multi_campus"
campus = "three_tier"
pods = 2
tors_per_pod = 2
servers_per_tor = 2
aggs_per_pod = 2
cores = 2
dr_switches = 2
campus_to_dr_capacity = "1600Gbps"
dci_capacity = "800Gbps"
fiber_km = {km}
link_delay = "1us"
{extra}
{tail}

[[workload]]
kind = "flows"
flows = [{flows}]
"#
    )
}

fn is_dr_port(s: &Simulation, p: usize) -> bool {
    match s.fabric.nodes[s.fabric.ports[p].node].kind {
        NodeKind::Switch(k) => matches!(s.fabric.switches[k as usize].role, SwitchRole::Dr(_)),
        NodeKind::Host(_) => false,
    }
}

/// Names of the nodes a lone flow's data crossed, from its source to its destination,
/// read off the ports that sent at least `size` bytes (the data; ACKs are far fewer
/// bytes): from the source's port, each hop's next port is the one of the peer node
/// that sent the data on.
fn data_path(s: &Simulation, src: &str, size: u64) -> Vec<String> {
    let sent: Vec<usize> = (0..s.fabric.ports.len())
        .filter(|&p| s.fabric.ports[p].tx_bytes >= size)
        .collect();
    let mut at = *sent
        .iter()
        .find(|&&p| s.port_node_name(PortId(p as u32)) == src)
        .expect("the source sent");
    let mut names = vec![src.to_string()];
    for _ in 0..sent.len() {
        let next = s.fabric.ports[s.fabric.ports[at].peer.idx()].node;
        names.push(s.fabric.nodes[next].name.clone());
        let out: Vec<usize> = sent
            .iter()
            .copied()
            .filter(|&p| s.fabric.ports[p].node == next)
            .collect();
        match out[..] {
            [] => break,
            [p] => at = p,
            _ => panic!(
                "{} forwarded the data on {} ports",
                names.last().unwrap(),
                out.len()
            ),
        }
    }
    assert_eq!(
        names.len(),
        sent.len() + 1,
        "{names:?}: a port off the path sent data"
    );
    names
}

#[test]
fn three_tier_campuses_route_across_the_dci_through_the_drs() {
    // Host 0 is under c0-tor0_0; host 15, the last of campus 1, under c1-tor1_1.
    let size: u64 = 1 << 20;
    let mut s = sim(&tiered(
        120.0,
        "",
        "[cc]\nalgorithm = \"none\"",
        &format!("{{ src = 0, dst = 15, size = {size} }}"),
    ));
    assert_eq!(
        s.fabric.nodes[node(&s, "c1-host15")].kind,
        NodeKind::Host(15)
    );
    // host - ToR - agg - core - DR - DR - core - agg - ToR - host, all 400G; the DCI hop
    // (the fifth) is 120 km x 5 us, every other a 1 us link plus a switch.
    let path = s.path_of(0);
    assert_eq!(path.len(), 9, "{path:?}");
    assert!(path.iter().all(|h| h.bps == 400_000_000_000));
    let dci = 600 * US;
    assert!(path[4].delay >= dci && path[4].delay < dci + US, "{path:?}");
    assert!(path
        .iter()
        .enumerate()
        .all(|(i, h)| i == 4 || h.delay < 2 * US));
    // Within a campus a core's routes never climb to a DR: toward a host of its own
    // campus a core goes down to aggregation switches only.
    let core = switch_index(&s, "c0-core1");
    for dst in 0..8 {
        for p in s.fabric.routing.candidates(core, dst) {
            assert!(peer_name(&s, p).starts_with("c0-agg"), "c0-core1 to {dst}");
        }
    }
    assert_eq!(s.run(&mut |_| {}), Outcome::Completed);
    let bad = invariants::check(&s);
    assert!(bad.is_empty(), "{bad:?}");
    // The data went up campus 0, through a DR pair, and down campus 1.
    let names = data_path(&s, "c0-host0", size);
    let tiers = [
        "c0-host0",
        "c0-tor0_0",
        "c0-agg0_",
        "c0-core",
        "c0-dr",
        "c1-dr",
        "c1-core",
        "c1-agg1_",
        "c1-tor1_1",
        "c1-host15",
    ];
    assert_eq!(names.len(), tiers.len(), "{names:?}");
    for (n, t) in names.iter().zip(tiers) {
        assert!(n.starts_with(t), "{names:?}");
    }
    // DCI link i joins dr i to dr i.
    assert_eq!(names[4][3..], names[5][3..], "{names:?}");
    // Alone on an idle network it meets its ideal exactly, and the ideal is the payload
    // at 400G plus the fibre plus no more than 9 hops of 1 us links, switches and a
    // store-and-forward frame each.
    let got = fct(&s, 0).expect("finished");
    let floor = ser_time(size, 400_000_000_000) + dci;
    assert!(s.ideal[0] >= floor, "ideal {} < {floor}", s.ideal[0]);
    assert!(s.ideal[0] < floor + 9 * 2 * US, "ideal {}", s.ideal[0]);
    assert_eq!(got, s.ideal[0]);
}

/// Every host of campus 0 sends 2 MB across (3.2 Tbps of NICs, 1.6 Tbps to the DRs, into
/// 200 Gbps of DCI: two 100G links) while campus 1's other hosts incast 1 MB each into
/// host 8, with 2 MB switch buffers: queues build inside both campuses and PFC must hold
/// them, and the DRs' queues build far beyond their 4 MB.
fn congested(extra: &str) -> Simulation {
    let mut flows = Vec::new();
    for src in 0..8 {
        flows.push(format!(
            "{{ src = {src}, dst = {}, size = \"2MB\" }}",
            9 + src % 7
        ));
    }
    for src in 9..16 {
        flows.push(format!("{{ src = {src}, dst = 8, size = \"1MB\" }}"));
    }
    let src = tiered(
        120.0,
        &format!("dr_link_rate = \"400Gbps\"\n{extra}"),
        "[fabric]\nbuffer = \"2MB\"\n\n[cc]\nalgorithm = \"dcqcn\"",
        &flows.join(", "),
    )
    .replace(
        "dci_capacity = \"800Gbps\"",
        "dci_capacity = \"200Gbps\"\ndci_link_rate = \"100Gbps\"",
    );
    let mut s = sim(&src);
    assert_eq!(s.run(&mut |_| {}), Outcome::Completed);
    let bad = invariants::check(&s);
    assert!(bad.is_empty(), "{bad:?}");
    for i in 0..s.nics.flows.len() {
        assert!(fct(&s, i).is_some(), "flow {i} unfinished");
    }
    s
}

#[test]
fn three_tier_campuses_stay_lossless_and_only_the_dr_drops() {
    let lossy = congested("dr_buffer = \"4MB\"");
    let (mut at_dr, mut pauses) = (0, 0);
    for (i, p) in lossy.fabric.ports.iter().enumerate() {
        if is_dr_port(&lossy, i) {
            at_dr += p.stats.drops;
            // A lossy DR pauses nobody.
            assert_eq!(p.stats.pause_frames_sent, 0);
        } else {
            assert_eq!(
                p.stats.drops,
                0,
                "drop inside a campus at {}",
                lossy.port_node_name(PortId(i as u32))
            );
            pauses += p.stats.pause_frames_sent;
        }
    }
    // The campuses were pushed into PFC, and the 4 MB DR overflowed.
    assert!(
        pauses > 0,
        "no PFC inside the campuses: the test is not congested"
    );
    assert!(at_dr > 0, "the DR never dropped: the DCI is not congested");
    // With the DCI side lossless too, nothing drops anywhere: a 32 MB DR holds the
    // headroom of its 100G x 120 km DCI port (3 x rate x delay / 8 = 22.5 MB) and
    // pauses its cores before the rest fills.
    let lossless = congested("dr_buffer = \"32MB\"\ndci_lossless = true");
    let drops: u64 = lossless.fabric.ports.iter().map(|p| p.stats.drops).sum();
    assert_eq!(drops, 0);
    // ... because the DRs paused the cores instead of dropping.
    let dr_pauses: u64 = (0..lossless.fabric.ports.len())
        .filter(|&p| is_dr_port(&lossless, p))
        .map(|p| lossless.fabric.ports[p].stats.pause_frames_sent)
        .sum();
    assert!(dr_pauses > 0, "the lossless DR never paused");
}
