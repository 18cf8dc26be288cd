//! Hardware collectives (document 003) through the whole simulator: the NICs' engines
//! over a logical tree, the switches' multicast, the results checked, the timing against
//! the analytic latency, and recovery from lost packets.

use fabricsim::base::units::{Time, NS};
use fabricsim::model::transport::collective_engine::HwCollectives;
use fabricsim::{analysis::invariants, load_str, Outcome, Simulation};
use std::path::Path;

/// One plane of 8 leaves x 2 spines, 2 nodes per leaf, credits with cut-through, router
/// latency 100 ns, 1 m cables (5 ns), 2 KiB packets with 48 B of header.
fn scenario(extra: &str, workload: &str) -> String {
    format!(
        r#"name = "hw"
seed = 3
max_time = "20ms"

[topology]
kind = "sunway"
planes = 1
leaves = 8
spines = 2
nodes_per_leaf = 2
nodes = 16
sibling_links = 0
link_delay = "5ns"

[fabric]
switch_latency = "100ns"

[fabric.pfc]
enabled = false

[fabric.credit]
enabled = true

[transport]
mtu = "2KiB"
header = 48
ack_size = 48
kind = "message"

[cc]
algorithm = "none"

{extra}

[[workload]]
kind = "hw_collective"
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
    s
}

fn hw(s: &Simulation) -> &HwCollectives {
    s.nics.hw.as_deref().expect("collectives")
}

/// The first `n` hosts of the fabric rearranged as 16 leaves of one NIC each (every
/// message between two of them crosses leaf, spine, leaf), in one hw_collective entry.
fn one_per_leaf(n: u32, fields: &str) -> String {
    let hosts: Vec<String> = (0..n).map(|h| h.to_string()).collect();
    scenario("", &format!("{fields}\nhosts = [{}]", hosts.join(", ")))
        .replace("leaves = 8", "leaves = 16")
        .replace("nodes_per_leaf = 2", "nodes_per_leaf = 1")
}

/// The serialization of a header-only message (48 B) on the Sunway port (4 lanes x
/// 28 Gbps with 64b/66b).
fn header_ser(s: &Simulation) -> Time {
    let rate = s.fabric.ports[s.nics.hosts[0].port.idx()].rate.0;
    fabricsim::base::units::ser_time(48, rate)
}

/// One packet from NIC to NIC across `h` cut-through routers at 100 ns each (pin to
/// pin): h x router latency + one serialization `ser` + h + 1 cables of 5 ns.
fn hop(h: u64, ser: Time) -> Time {
    h * 100 * NS + ser + (h + 1) * 5 * NS
}

/// A barrier over one NIC per leaf (every message crosses leaf, spine, leaf: 3
/// routers), all ranks entering at 0, over full trees of fan-in k and height d: the last
/// rank has the result d x (level latency + hop + (k - 1) serializations) + the
/// multicast down (one more hop), exactly. The k - 1 serializations are the k children's
/// messages reaching their parent at once over one link (k = 1 is a chain: none).
#[test]
fn a_barrier_on_an_idle_fabric_takes_the_analytic_time() {
    for (fan_in, n, level) in [
        (2u32, 7u32, 500u64),
        (3, 13, 250),
        (7, 8, 1000),
        (1, 6, 300),
    ] {
        let s = run(&one_per_leaf(
            n,
            &format!("collective = \"barrier\"\nfan_in = {fan_in}\nlevel_latency = \"{level}ns\""),
        ));
        let c = &hw(&s).colls[0];
        let d = c.spec.tree.height() as u64;
        let ser = header_ser(&s);
        let hop = hop(3, ser);
        let want = d * (level * NS + hop + (fan_in as u64 - 1) * ser) + hop;
        let r = &c.iters[0];
        assert_eq!(r.first_entry, Some(0));
        assert_eq!(r.finish, Some(want), "fan-in {fan_in}, height {d}");
        assert_eq!(r.done, n);
        assert_eq!(r.verified, Some(true));
        assert_eq!(r.timeouts, 0);
    }
}

/// Multicast delivers exactly one copy to every member and none to anyone else: the
/// NICs receive n - 1 results and n - 1 requests; every non-member NIC none. The
/// switches made the copies the tree needs (one per leaf beyond the first branch).
#[test]
fn multicast_delivers_one_copy_to_each_member_and_none_to_others() {
    let members = [0u32, 1, 3, 6, 9, 13];
    let list: Vec<String> = members.iter().map(|m| m.to_string()).collect();
    let s = run(&scenario(
        "",
        &format!(
            "collective = \"allreduce\"\nhosts = [{}]\nfan_in = 2\nsize = \"64B\"",
            list.join(", ")
        ),
    ));
    let h = hw(&s);
    let n = members.len() as u64;
    assert_eq!(h.sent, (n - 1) + 1, "n - 1 requests up, one multicast");
    assert_eq!(h.received, 2 * (n - 1), "n - 1 requests and n - 1 copies");
    // Every NIC port: frames received. Non-members receive nothing.
    for host in 0..16u32 {
        let p = s.nics.hosts[host as usize].port;
        let peer = s.fabric.ports[p.idx()].peer;
        let got = s.fabric.links[peer.idx()].delivered;
        if !members.contains(&host) {
            assert_eq!(got, 0, "host {host} is no member");
        }
    }
    let mc = s.fabric.multicast.as_deref().unwrap();
    // Members on 5 leaves besides the root's: the root's leaf sends up to one spine and
    // down to its own member (host 1), the spine down to 4 other leaves: 1 + 3 copies
    // beyond the packet itself at those two switches.
    assert_eq!(mc.replicas, 1 + 3);
    let r = &h.colls[0].iters[0];
    assert_eq!(r.done, n as u32);
    assert_eq!(r.verified, Some(true));
}

/// Every op and type through the network: the result the root produced equals the
/// direct computation, and the run is deterministic.
#[test]
fn allreduce_results_are_checked_for_every_op_and_type() {
    for (t, ops) in [
        ("fp32", &["sum", "max", "min"][..]),
        ("fp64", &["sum", "max", "min"][..]),
        ("int32", &["sum", "max", "min", "and", "or", "xor"][..]),
        ("int64", &["sum", "max", "min", "and", "or", "xor"][..]),
    ] {
        for op in ops {
            let src = scenario(
                "",
                &format!("collective = \"allreduce\"\nfan_in = 3\nsize = \"256B\"\ntype = \"{t}\"\nop = \"{op}\"\nrepeat = 3"),
            );
            let s = run(&src);
            let c = &hw(&s).colls[0];
            for (i, r) in c.iters.iter().enumerate() {
                assert_eq!(r.verified, Some(true), "{t} {op} iteration {i}");
                assert_eq!(r.done, 16);
            }
        }
    }
}

/// Compute, then a hardware allreduce, repeated: each iteration starts `compute` after
/// the previous result, so iterations are at least compute + the collective apart, and
/// the unicast fallback (no multicast) is slower than multicast.
#[test]
fn compute_steps_between_collectives_and_the_unicast_fallback() {
    let mk = |mc: bool| {
        scenario(
            "",
            &format!("collective = \"allreduce\"\nfan_in = 4\nrepeat = 4\ncompute = \"3us\"\nmulticast = {mc}"),
        )
    };
    let s = run(&mk(true));
    let c = &hw(&s).colls[0];
    let lat0 = c.iters[0].finish.unwrap() - c.iters[0].first_entry.unwrap();
    assert_eq!(c.iters[0].first_entry, Some(3_000 * NS));
    for w in c.iters.windows(2) {
        let gap = w[1].first_entry.unwrap() - w[0].first_entry.unwrap();
        assert!(gap >= 3_000 * NS + lat0 / 2, "{gap}");
        assert!(w[1].first_entry.unwrap() >= w[0].first_entry.unwrap() + 3_000 * NS);
    }
    let u = run(&mk(false));
    let cu = &hw(&u).colls[0];
    let latu = cu.iters[0].finish.unwrap() - cu.iters[0].first_entry.unwrap();
    assert!(latu > lat0, "unicast down {latu} vs multicast {lat0}");
    assert!(cu
        .iters
        .iter()
        .all(|r| r.verified == Some(true) && r.done == 16));
    assert!(u.fabric.multicast.is_none());
}

/// A link of the multicast tree fails before the collective: the members below it miss
/// the result, time out, ask their parent again, and get it by unicast; every rank
/// completes with the right result.
#[test]
fn lost_multicast_copies_are_recovered_by_timeouts() {
    let s = run(&scenario(
        "[[fault]]\nkind = \"link_down\"\nlink = [\"p0-spine0\", \"p0-leaf5\"]\nat = \"1ns\"\n[fabric.reliability]\nreconvergence_delay = \"1us\"",
        "collective = \"barrier\"\nfan_in = 2\ntimeout = \"20us\"\nstart = \"5us\"",
    ));
    let r = &hw(&s).colls[0].iters[0];
    assert_eq!(r.done, 16);
    assert_eq!(r.failed, 0);
    assert!(
        r.timeouts >= 2,
        "the two NICs of leaf 5 timed out: {}",
        r.timeouts
    );
    assert!(r.finish.unwrap() >= 5_000 * NS + 20_000 * NS);
}

/// A rank that can never reach its parent gives up after its retries; the run still
/// ends, and the iteration reports the failures.
#[test]
fn an_unreachable_rank_gives_up_after_its_retries() {
    let mut s = build(&scenario(
        "[[fault]]\nkind = \"link_down\"\nlink = [\"node15\", \"p0-leaf7\"]\nat = \"1ns\"",
        "collective = \"barrier\"\nfan_in = 2\ntimeout = \"10us\"\nretries = 2",
    ));
    let o = s.run(&mut |_| {});
    assert_eq!(o, Outcome::Completed);
    let r = &hw(&s).colls[0].iters[0];
    assert!(r.failed >= 1);
    assert!(
        r.done + r.failed == 16,
        "{} done {} failed",
        r.done,
        r.failed
    );
}

#[test]
fn the_same_seed_gives_the_same_times() {
    let src = scenario(
        "",
        "collective = \"allreduce\"\nfan_in = 3\nrepeat = 2\ncompute = \"1us\"",
    );
    let a = run(&src);
    let b = run(&src);
    let t = |s: &Simulation| {
        hw(s).colls[0]
            .iters
            .iter()
            .map(|r| (r.first_entry, r.finish))
            .collect::<Vec<_>>()
    };
    assert_eq!(t(&a), t(&b));
}

/// Two ranks per NIC (document 003's two CPUs per node): the 16 ranks on 8 NICs all get
/// the result, from one multicast copy per NIC; a message between the two ranks of one
/// NIC never reaches the network; the host overhead adds itself twice to the latency.
#[test]
fn ranks_sharing_a_nic_and_the_host_overhead() {
    let hosts = "hosts = [0, 2, 4, 6, 8, 10, 12, 14]\nranks_per_host = 2\n";
    let base = run(&scenario(
        "",
        &format!("collective = \"allreduce\"\n{hosts}fan_in = 2\ntype = \"int32\"\nsize = \"16B\""),
    ));
    let h = hw(&base);
    let c = &h.colls[0];
    assert_eq!(c.spec.ranks.len(), 16);
    let r = &c.iters[0];
    assert_eq!((r.done, r.verified), (16, Some(true)));
    // Up: ranks 2i and 2i+1 share NIC i; rank 1's parent is rank 0 (same NIC), so of the
    // 15 tree edges, those inside a NIC (1 -> 0) send nothing. Down: 7 multicast copies.
    let inside = (1..16u32)
        .filter(|&q| {
            c.spec.ranks[q as usize]
                == c.spec.ranks[c.spec.tree.parent[q as usize].unwrap() as usize]
        })
        .count() as u64;
    assert!(inside >= 1);
    assert_eq!(h.sent, (15 - inside) + 1);
    assert_eq!(h.received, (15 - inside) + 7);
    let lat = |s: &Simulation| {
        let r = &hw(s).colls[0].iters[0];
        r.finish.unwrap() - r.last_entry.unwrap()
    };
    let slow = run(&scenario(
        "",
        &format!("collective = \"allreduce\"\n{hosts}fan_in = 2\ntype = \"int32\"\nsize = \"16B\"\nhost_overhead = \"700ns\""),
    ));
    assert_eq!(lat(&slow), lat(&base) + 2 * 700 * NS);
    assert_eq!(hw(&slow).colls[0].iters[0].first_entry, Some(0));
}

/// With a NIC processing time per child message longer than a message's serialization,
/// the k children of a full tree cost k message latencies per level (the arrivals' own
/// spacing hides behind them): d x (level + hop + k x message) + the multicast down.
#[test]
fn message_latency_is_paid_per_child_one_after_another() {
    for (fan_in, n) in [(3u32, 13u32), (1, 5)] {
        let s = run(&one_per_leaf(
            n,
            &format!("collective = \"barrier\"\nfan_in = {fan_in}\nlevel_latency = \"400ns\"\nmessage_latency = \"200ns\""),
        ));
        let c = &hw(&s).colls[0];
        let d = c.spec.tree.height() as u64;
        let hop = hop(3, header_ser(&s));
        let want = d * (400 * NS + hop + fan_in as u64 * 200 * NS) + hop;
        assert_eq!(c.iters[0].finish, Some(want), "fan-in {fan_in}");
    }
}

/// Hardware collectives and multicast on an Ethernet leaf-spine with PFC (every fabric
/// has switches that can replicate): every rank gets the checked result, lossless.
#[test]
fn hardware_collectives_run_on_an_ethernet_fabric_with_pfc() {
    let src = r#"name = "eth"
seed = 1
max_time = "5ms"
[topology]
kind = "leaf_spine"
leaves = 4
spines = 2
servers_per_leaf = 4
host_rate = "100Gbps"
[cc]
algorithm = "none"
[[workload]]
kind = "hw_collective"
collective = "allreduce"
type = "int64"
op = "xor"
size = "512B"
fan_in = 3
repeat = 3
"#;
    let s = run(src);
    let h = hw(&s);
    assert!(h.colls[0]
        .iters
        .iter()
        .all(|r| r.done == 16 && r.verified == Some(true)));
    assert_eq!(s.ctx.counters.drops, 0);
    assert!(s.fabric.multicast.as_ref().unwrap().replicas > 0);
}
