//! The Sunway network (`kind = "sunway"`, document 003) through the whole simulator:
//! dual-rail NICs whose packets take either plane, the out-of-order message transport,
//! up/down tables with sibling fallbacks, and deterministic vs adaptive table routing.

use fabricsim::base::ids::PortId;
use fabricsim::base::units::Time;
use fabricsim::model::fabric::NodeKind;
use fabricsim::output::fct;
use fabricsim::{analysis::invariants, load_str, Outcome, Simulation};
use std::path::Path;

/// Two planes of 4 leaves (siblings 0-1 and 2-3) x 3 spines, 4 nodes per leaf, 2 KiB
/// packets with 48 B of header, the message transport, no congestion control.
fn scenario(extra: &str, workload: &str) -> String {
    format!(
        r#"name = "sunway"
seed = 1
max_time = "50ms"

[topology]
kind = "sunway"
leaves = 4
spines = 3
nodes_per_leaf = 4
nodes = 16
sibling_links = 2

[fabric]
switch_latency = "100ns"

[transport]
mtu = "2KiB"
header = 48
ack_size = 48
kind = "message"

[cc]
algorithm = "none"

{extra}

[[workload]]
{workload}
"#
    )
}

fn build(src: &str) -> Simulation {
    let l = load_str(src, "t.toml", Path::new("."), &[]).unwrap_or_else(|e| panic!("{e}\n{src}"));
    Simulation::build(&l.scenario, &l.file, &l.base_dir).unwrap_or_else(|e| panic!("{e}"))
}

fn run(src: &str) -> Simulation {
    let mut s = build(src);
    assert_eq!(s.run(&mut |_| {}), Outcome::Completed);
    let bad = invariants::check(&s);
    assert!(bad.is_empty(), "invariants violated: {bad:#?}");
    for i in 0..s.nics.flows.len() {
        let f = &s.nics.flows[i];
        assert_eq!(f.rcv_nxt, f.spec.size, "flow {i} delivered every byte once");
        assert!(fct(&s, i).unwrap() >= s.ideal[i], "flow {i} beat its ideal");
    }
    s
}

fn switch(s: &Simulation, name: &str) -> u32 {
    let n = s.fabric.nodes.iter().position(|n| n.name == name).unwrap();
    match s.fabric.nodes[n].kind {
        NodeKind::Switch(i) => i,
        NodeKind::Host(_) => panic!("{name} is a host"),
    }
}

/// The name of the node at the far end of port `p`.
fn peer(s: &Simulation, p: u32) -> String {
    let q = s.fabric.ports[p as usize].peer;
    s.fabric.nodes[s.fabric.ports[q].node.idx()].name.clone()
}

/// Bytes every switch port named `prefix...` sent.
fn sent_by(s: &Simulation, prefix: &str) -> u64 {
    s.fabric
        .ports
        .iter()
        .filter(|p| {
            let n = &s.fabric.nodes[p.node.idx()];
            n.name.starts_with(prefix) && matches!(n.kind, NodeKind::Switch(_))
        })
        .map(|p| p.tx_bytes)
        .sum()
}

const ONE_MESSAGE: &str = r#"kind = "flows"
flows = [{ src = 0, dst = 5, size = "1MiB" }]"#;

#[test]
fn one_message_on_both_rails_takes_half_the_time_of_one() {
    let fixed =
        run(&scenario("", ONE_MESSAGE)
            .replace("kind = \"message\"", "kind = \"message\"\nrail = 0"));
    let both = run(&scenario("", ONE_MESSAGE));
    let (f1, f2) = (fct(&fixed, 0).unwrap(), fct(&both, 0).unwrap());
    let ratio = f1 as f64 / f2 as f64;
    assert!(
        ratio > 1.9 && ratio < 2.05,
        "one rail {f1} ps, both {f2} ps: {ratio}"
    );
    // Every packet of the fixed run stayed on plane 0; the other run used both planes
    // about equally.
    assert_eq!(sent_by(&fixed, "p1-"), 0);
    let (p0, p1) = (sent_by(&both, "p0-"), sent_by(&both, "p1-"));
    assert!(p0.abs_diff(p1) < p0 / 20, "plane 0 {p0} B, plane 1 {p1} B");
    // Out of order on arrival (two rails) and still no retransmission.
    assert_eq!(both.nics.flows[0].retx_bytes, 0);
    // The ideal of a message over two rails is that of half of it over one.
    assert!(both.ideal[0] * 19 / 10 < fixed.ideal[0]);
}

#[test]
fn a_message_with_a_short_last_packet_on_both_rails_does_not_beat_its_ideal() {
    // 694 full 2 KiB packets and one of 1221 B over the two planes, on credits: the
    // bound charges the rail carrying the short packet 347 full ones and 1221 B (the
    // unit tests of `multipath` check it packet by packet); the run stays above it and
    // close to it.
    let one = r#"kind = "flows"
flows = [{ src = 0, dst = 5, size = 1422533 }]"#;
    let s = run(&scenario(
        "[fabric.pfc]\nenabled = false\n[fabric.credit]\nenabled = true\n",
        one,
    ));
    let (f, ideal) = (fct(&s, 0).unwrap(), s.ideal[0]);
    assert!(f >= ideal, "{f} ps beat the ideal {ideal} ps");
    assert!(f < ideal * 101 / 100, "{f} ps against the ideal {ideal} ps");
}

#[test]
fn up_down_tables_keep_the_sibling_links_for_faults() {
    let s = build(&scenario("", ONE_MESSAGE));
    let r = &s.fabric.routing;
    assert!(r.tiered());
    // Node 5 hangs off leaf 1 (whose sibling is leaf 0) in each plane.
    let names = |c: fabricsim::model::routing::Candidates, from: usize, to: usize| -> Vec<String> {
        (from..to).map(|k| peer(&s, r.port_of(c, k).0)).collect()
    };
    for p in 0..2 {
        // A spine going down: leaf 1 first, its sibling leaf 0 as the fallback.
        let spine = switch(&s, &format!("p{p}-spine2"));
        let (c, primary) = r.lookup_phase(spine, 5, true);
        assert_eq!(names(c, 0, primary as usize), vec![format!("p{p}-leaf1")]);
        assert_eq!(
            names(c, primary as usize, c.len as usize),
            vec![format!("p{p}-leaf0")]
        );
        // The sibling, reached from above: across to leaf 1, both sibling links.
        let sib = switch(&s, &format!("p{p}-leaf0"));
        let (c, primary) = r.lookup_phase(sib, 5, true);
        assert_eq!(primary, 2);
        assert_eq!(names(c, 0, 2), vec![format!("p{p}-leaf1"); 2]);
        // A leaf going up: the three spines, then across to its sibling.
        let leaf = switch(&s, &format!("p{p}-leaf2"));
        let (c, primary) = r.lookup_phase(leaf, 5, false);
        assert_eq!(primary, 3);
        assert_eq!(
            names(c, 0, 3),
            (0..3).map(|j| format!("p{p}-spine{j}")).collect::<Vec<_>>()
        );
        assert_eq!(names(c, 3, c.len as usize), vec![format!("p{p}-leaf3"); 2]);
        // From a NIC, the sibling leaf 0 goes up too, not across.
        let (_, primary) = r.lookup_phase(sib, 5, false);
        assert_eq!(primary, 3);
    }
    // Each plane's switches route only toward that plane's NIC ports: plane 1's leaf
    // reaches node 5 by its port 1.
    let leaf1 = switch(&s, "p1-leaf1");
    let to_host: Vec<PortId> = r
        .candidates(leaf1, 5)
        .into_iter()
        .map(|p| s.fabric.ports[p as usize].peer)
        .collect();
    assert_eq!(to_host, vec![PortId(s.nics.hosts[5].port.0 + 1)]);
}

/// Two messages from leaf 0 on one rail, to node 5 (leaf 1) and node 8 (leaf 2), whose
/// destinations map to the same uplink under destination-mod-k (both are 2 mod 3).
const COLLIDING: &str = r#"kind = "flows"
flows = [{ src = 0, dst = 5, size = "1MiB" }, { src = 1, dst = 8, size = "1MiB" }]"#;

fn two_leaves_apart(lb: &str) -> (Time, Time) {
    let src = scenario(
        &format!("[fabric.load_balance]\nalgorithm = \"{lb}\""),
        &COLLIDING.replace("dst = 8", "dst = 6"),
    )
    .replace("kind = \"message\"", "kind = \"message\"\nrail = 0");
    let s = run(&src);
    (fct(&s, 0).unwrap(), s.ideal[0])
}

#[test]
fn adaptive_routing_avoids_the_collision_deterministic_routing_makes() {
    // Destinations 5 and 6 (both on leaf 1): the deterministic scan from leaf 0 starts at
    // spine 5 mod 3 and spine 6 mod 3, different ones: no collision.
    let (spread, ideal) = two_leaves_apart("first_available");
    assert!(spread < ideal * 11 / 10, "{spread} vs {ideal}");
    // 5 and 8: both messages on leaf 0's uplink to spine 2.
    let det = run(&scenario(
        "[fabric.load_balance]\nalgorithm = \"first_available\"",
        COLLIDING,
    )
    .replace("kind = \"message\"", "kind = \"message\"\nrail = 0"));
    let ada = run(
        &scenario("[fabric.load_balance]\nalgorithm = \"adaptive\"", COLLIDING)
            .replace("kind = \"message\"", "kind = \"message\"\nrail = 0"),
    );
    let slow = |s: &Simulation| (0..2).map(|i| fct(s, i).unwrap()).max().unwrap();
    let ideal = det.ideal[0];
    assert!(
        slow(&det) > ideal * 17 / 10,
        "deterministic {} vs ideal {ideal}",
        slow(&det)
    );
    assert!(
        slow(&ada) < ideal * 13 / 10,
        "adaptive {} vs ideal {ideal}",
        slow(&ada)
    );
}

#[test]
fn message_engines_set_messages_up_and_bound_those_in_flight() {
    // A lone message waits for its engine's setup before its first packet.
    let quick = run(&scenario(
        "[transport.message]\nsetup = \"0ns\"",
        ONE_MESSAGE,
    ));
    let slow = run(&scenario(
        "[transport.message]\nsetup = \"2us\"",
        ONE_MESSAGE,
    ));
    assert_eq!(fct(&slow, 0).unwrap() - fct(&quick, 0).unwrap(), 2_000_000);
    // One engine with one message in flight: four messages posted at once go one after
    // another, each after the previous one's last ACK and its own setup.
    let four = r#"kind = "flows"
flows = [{ src = 0, dst = 5, size = "64KiB" }, { src = 0, dst = 6, size = "64KiB" },
         { src = 0, dst = 9, size = "64KiB" }, { src = 0, dst = 13, size = "64KiB" }]"#;
    let serial = run(&scenario(
        "[transport.message]\nengines = 1\nin_flight = 1\nsetup = \"1us\"",
        four,
    ));
    let mut f: Vec<Time> = (0..4).map(|i| fct(&serial, i).unwrap()).collect();
    f.sort_unstable();
    for k in 1..4 {
        // Each waits at least the previous one's whole time (its FCT counts from the post).
        assert!(f[k] >= f[k - 1] + f[0] - 1_000, "{f:?}");
    }
    let parallel = run(&scenario("[transport.message]\nsetup = \"1us\"", four));
    let last = (0..4).map(|i| fct(&parallel, i).unwrap()).max().unwrap();
    assert!(
        last < f[3] * 3 / 4,
        "in flight together: {last} vs one by one {}",
        f[3]
    );
}

#[test]
fn the_full_prototype_routes_between_siblings_without_loops() {
    // 2 x (512 + 576 + 64) links: large enough for the loop's look-ahead, which must not
    // pre-route packets under table routing (the hop before cannot know a packet's phase).
    let src = scenario(
        "",
        r#"kind = "flows"
flows = [{ src = 0, dst = 20, size = "1MiB" }, { src = 20, dst = 0, size = "1MiB" }]"#,
    )
    .replace(
        "leaves = 4\nspines = 3\nnodes_per_leaf = 4\nnodes = 16\nsibling_links = 2\n",
        "",
    );
    let s = run(&src);
    assert!(s.fabric.ports.len() >= 4096);
    for i in 0..2 {
        assert!(fct(&s, i).unwrap() < s.ideal[i] * 21 / 20, "flow {i}");
    }
}

#[test]
fn a_read_is_a_request_then_a_write_back_and_a_notification_follows_its_write() {
    let s = run(&scenario(
        "",
        r#"kind = "flows"
flows = [{ src = 0, dst = 5, size = "256KiB", verb = "read" },
         { src = 1, dst = 9, size = "256KiB", verb = "write_notify" }]"#,
    )
    .replace("kind = \"message\"", "kind = \"message\"\nrail = 0"));
    let f = &s.nics.flows;
    assert_eq!(f.len(), 4);
    // The read: node 0's request to node 5, then node 5's write of the data to node 0,
    // which starts when the request has arrived.
    assert_eq!((f[0].spec.src, f[0].spec.dst, f[0].spec.size), (0, 5, 32));
    assert_eq!(
        (f[1].spec.src, f[1].spec.dst, f[1].spec.size),
        (5, 0, 256 << 10)
    );
    assert_eq!(f[1].spec.start, f[0].finish.unwrap());
    // The write with notification: the notification arrives after the data.
    assert_eq!((f[3].spec.src, f[3].spec.dst, f[3].spec.size), (1, 9, 32));
    assert!(f[3].finish.unwrap() > f[2].finish.unwrap());
    assert!(
        f[3].spec.start > f[2].spec.start,
        "it leaves after the data's last byte"
    );
}

#[test]
fn adaptive_routing_by_credits_avoids_the_collision_too() {
    let credits = "[fabric.pfc]\nenabled = false\n\n[fabric.credit]\nenabled = true\n\n[fabric.load_balance]\nalgorithm = ";
    let run_lb = |lb: &str| {
        run(&scenario(&format!("{credits}\"{lb}\""), COLLIDING)
            .replace("kind = \"message\"", "kind = \"message\"\nrail = 0"))
    };
    let (det, ada) = (run_lb("first_available"), run_lb("adaptive"));
    let slow = |s: &Simulation| (0..2).map(|i| fct(s, i).unwrap()).max().unwrap();
    let ideal = det.ideal[0];
    assert!(
        slow(&det) > ideal * 17 / 10,
        "deterministic {} vs {ideal}",
        slow(&det)
    );
    assert!(
        slow(&ada) < ideal * 12 / 10,
        "adaptive {} vs {ideal}",
        slow(&ada)
    );
    assert_eq!(
        ada.fabric.ports.iter().map(|p| p.stats.drops).sum::<u64>(),
        0
    );
}

/// Credit flow control with cut-through, as the Sunway routers run.
const CREDITS: &str = "[fabric.pfc]\nenabled = false\n\n[fabric.credit]\nenabled = true\n";

/// Bytes that the switch ports from `from` to `to` sent (all parallel links).
fn sent_on(s: &Simulation, from: &str, to: &str) -> u64 {
    let n = s.fabric.nodes.iter().position(|n| n.name == from).unwrap();
    s.fabric.nodes[n]
        .ports
        .iter()
        .filter(|&p| peer(s, p.0) == to)
        .map(|p| s.fabric.ports[p].tx_bytes)
        .sum()
}

#[test]
fn deterministic_routing_takes_the_next_port_in_entry_order_after_a_failure() {
    // Node 5 is 2 mod 3: from leaf 0 the scan starts at spine 2, whose link is down.
    let src = scenario(
        &format!(
            "{CREDITS}\n[fabric.load_balance]\nalgorithm = \"first_available\"\n\n[[fault]]\nkind = \"link_down\"\nat = \"1ns\"\nlink = [\"p0-leaf0\", \"p0-spine2\"]"
        ),
        r#"kind = "flows"
flows = [{ src = 0, dst = 5, size = "256KiB", start = "1us" }]"#,
    )
    .replace("kind = \"message\"", "kind = \"message\"\nrail = 0");
    let s = run(&src);
    assert_eq!(sent_on(&s, "p0-leaf0", "p0-spine2"), 0);
    assert!(
        sent_on(&s, "p0-leaf0", "p0-spine0") > 256 << 10,
        "the next entry: spine 0"
    );
    assert_eq!(sent_on(&s, "p0-leaf0", "p0-spine1"), 0);
    assert!(fct(&s, 0).unwrap() < s.ideal[0] * 11 / 10);
}

/// All of leaf 1's uplinks (plane 0) down, then one message each way between node 9
/// (leaf 2) and node 5 (leaf 1), on plane 0, starting at `start`.
fn leaf1_cut_off(siblings: u32, start: &str) -> Simulation {
    let faults: String = (0..3)
        .map(|j| {
            format!("\n[[fault]]\nkind = \"link_down\"\nat = \"1ns\"\nlink = [\"p0-leaf1\", \"p0-spine{j}\"]\n")
        })
        .collect();
    let src = scenario(
        &format!("{CREDITS}\n[fabric.load_balance]\nalgorithm = \"first_available\"\n{faults}"),
        &format!(
            r#"kind = "flows"
flows = [{{ src = 9, dst = 5, size = "256KiB", start = "{start}" }},
         {{ src = 5, dst = 9, size = "256KiB", start = "{start}" }}]"#
        ),
    )
    .replace("kind = \"message\"", "kind = \"message\"\nrail = 0")
    .replace("sibling_links = 2", &format!("sibling_links = {siblings}"))
    .replace("max_time = \"50ms\"", "max_time = \"3ms\"");
    let mut s = build(&src);
    s.run(&mut |_| {});
    s
}

#[test]
fn a_leaf_without_uplinks_is_reached_through_its_sibling() {
    let s = leaf1_cut_off(2, "1us");
    let bad = invariants::check(&s);
    assert!(bad.is_empty(), "{bad:#?}");
    for i in 0..2 {
        assert!(fct(&s, i).is_some(), "message {i} arrived");
    }
    // In through the sibling (spine -> leaf 0 -> across), out across then up.
    assert!(sent_on(&s, "p0-leaf0", "p0-leaf1") >= 256 << 10);
    assert!(sent_on(&s, "p0-leaf1", "p0-leaf0") >= 256 << 10);
    assert_eq!(
        s.ctx.counters.drops, 0,
        "lossless: the detours took VC levels up"
    );
    // A plain fat tree cannot reach it: neither message arrives; the packets the spines
    // and the leaf cannot route are dropped and give their credits back.
    let plain = leaf1_cut_off(0, "1us");
    assert!((0..2).all(|i| fct(&plain, i).is_none()));
    let bad = invariants::check(&plain);
    assert!(bad.is_empty(), "{bad:#?}");
}

#[test]
fn go_back_n_over_unequal_rails_retransmits_what_the_message_transport_does_not() {
    // Node 0's plane-1 link runs on one lane: packets on rail 1 arrive late, out of order.
    let degraded = "[[fault]]\nkind = \"lane_degrade\"\nat = \"1ns\"\nlink = [\"node0\", \"p1-leaf0\"]\nlanes = 1";
    let one = r#"kind = "flows"
flows = [{ src = 0, dst = 5, size = "1MiB", start = "1us" }]"#;
    let gbn = run(&scenario(degraded, one).replace("kind = \"message\"", "kind = \"rdma_rc\""));
    let msg = run(&scenario(degraded, one));
    assert!(
        gbn.nics.flows[0].retx_bytes > 0,
        "the rails reorder: go-back-N resends"
    );
    assert_eq!(msg.nics.flows[0].retx_bytes, 0);
    assert!(fct(&gbn, 0).unwrap() > fct(&msg, 0).unwrap());
}

#[test]
fn tables_rebuilt_after_the_failure_lead_through_the_sibling() {
    // Routing re-converges 1 ms after the uplinks fail; messages sent after that find
    // the way through the sibling in the tables themselves: nothing is dropped.
    let s = leaf1_cut_off(2, "1.5ms");
    let f = s.fabric.faults.as_ref().expect("faults");
    assert_eq!(f.summary(s.ctx.now).reconvergences, 1);
    assert_eq!(f.summary(s.ctx.now).packets_dropped, 0);
    for i in 0..2 {
        assert!(fct(&s, i).is_some(), "message {i} arrived");
    }
    assert!(sent_on(&s, "p0-leaf0", "p0-leaf1") >= 256 << 10);
    let bad = invariants::check(&s);
    assert!(bad.is_empty(), "{bad:#?}");
}

#[test]
fn a_source_route_is_blind_to_a_failed_link_that_table_routing_avoids() {
    // Leaf 0 (plane 0) keeps only its uplink to spine 0; four messages leave it.
    let fails = "\n[[fault]]\nkind = \"link_down\"\nat = \"1ns\"\nlink = [\"p0-leaf0\", \"p0-spine1\"]\n\n[[fault]]\nkind = \"link_down\"\nat = \"1ns\"\nlink = [\"p0-leaf0\", \"p0-spine2\"]\n";
    let four = r#"kind = "flows"
flows = [{ src = 0, dst = 8, size = "64KiB", start = "1us" }, { src = 1, dst = 9, size = "64KiB", start = "1us" },
         { src = 2, dst = 10, size = "64KiB", start = "1us" }, { src = 3, dst = 11, size = "64KiB", start = "1us" }]"#;
    let dropped = |lb: &str| {
        let s = run(&scenario(
            &format!("{CREDITS}\n[fabric.load_balance]\nalgorithm = \"{lb}\"\n{fails}"),
            four,
        )
        .replace("kind = \"message\"", "kind = \"message\"\nrail = 0"));
        let f = s.fabric.faults.as_ref().expect("faults");
        f.summary(s.ctx.now).packets_dropped
    };
    assert_eq!(dropped("first_available"), 0);
    assert!(dropped("source") > 0, "some routes named a failed uplink");
}

#[test]
fn congestion_pre_sensing_steers_adaptive_routing_and_stays_lossless() {
    let perm = "kind = \"permutation\"\nsize = \"256KiB\"";
    let go = |presense: bool| {
        run(&scenario(
            &format!(
                "{CREDITS}presense = {presense}\n\n[fabric.load_balance]\nalgorithm = \"adaptive\""
            ),
            perm,
        ))
    };
    let (plain, sensed) = (go(false), go(true));
    let p99 = |s: &Simulation| {
        let mut f: Vec<Time> = (0..s.nics.flows.len())
            .map(|i| fct(s, i).unwrap())
            .collect();
        f.sort_unstable();
        f[f.len() * 99 / 100]
    };
    // Both lossless and complete (run() checks); the recent returns change choices, and
    // with them the packets' paths, without costing more than a little tail.
    assert_ne!(
        plain
            .fabric
            .ports
            .iter()
            .map(|p| p.tx_bytes)
            .collect::<Vec<_>>(),
        sensed
            .fabric
            .ports
            .iter()
            .map(|p| p.tx_bytes)
            .collect::<Vec<_>>()
    );
    assert!(
        p99(&sensed) < p99(&plain) * 3 / 2,
        "{} vs {}",
        p99(&sensed),
        p99(&plain)
    );
}
