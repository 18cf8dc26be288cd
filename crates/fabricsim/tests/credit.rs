//! Credit-based flow control with virtual channels and virtual cut-through (document 003):
//! losslessness, the credit accounting, cut-through timing against its analytic value,
//! credit returns waking a starved sender, and the diagnosis of a credit deadlock.

use fabricsim::analysis::invariants;
use fabricsim::base::units::{Time, NS, US};
use fabricsim::sim::{Outcome, Simulation};
use proptest::prelude::*;
use std::path::Path;

fn build(src: &str) -> Simulation {
    let l = fabricsim::load_str(src, "test.toml", Path::new("."), &[]).expect("loads");
    Simulation::build(&l.scenario, "test.toml", Path::new(".")).expect("builds")
}

fn run(src: &str) -> (Simulation, Outcome) {
    let mut sim = build(src);
    let o = sim.run(&mut |_| {});
    let bad = invariants::check(&sim);
    assert!(bad.is_empty(), "invariants violated: {bad:#?}");
    (sim, o)
}

/// `[fabric.pfc]` off and `[fabric.credit]` on with `extra` lines.
fn credit(extra: &str) -> String {
    format!("[fabric.pfc]\nenabled = false\n[fabric.credit]\nenabled = true\n{extra}\n")
}

/// A chain host - s0 - ... - s(h-1) - host of 100G links of `delay`, one flow of `size`.
fn chain(h: usize, delay: &str, size: u64, fabric: &str) -> String {
    let switches: Vec<String> = (0..h).map(|i| format!("\"s{i}\"")).collect();
    let mut links = vec![format!(
        "{{ a = \"a\", b = \"s0\", rate = \"100Gbps\", delay = \"{delay}\" }}"
    )];
    for i in 1..h {
        links.push(format!(
            "{{ a = \"s{}\", b = \"s{i}\", rate = \"100Gbps\", delay = \"{delay}\" }}",
            i - 1
        ));
    }
    links.push(format!(
        "{{ a = \"s{}\", b = \"b\", rate = \"100Gbps\", delay = \"{delay}\" }}",
        h - 1
    ));
    format!(
        r#"
max_time = "10ms"
[topology]
kind = "custom"
hosts = ["a", "b"]
switches = [{}]
links = [{}]
[fabric]
switch_latency = "300ns"
{fabric}
[cc]
algorithm = "none"
[[workload]]
kind = "flows"
flows = [{{ src = "a", dst = "b", size = {size} }}]
"#,
        switches.join(", "),
        links.join(", ")
    )
}

/// One packet across h switches: with cut-through each switch forwards it a router
/// latency (pin to pin) after its head arrived, so the flow takes h x router latency +
/// one full serialization + the propagation of h + 1 links; store-and-forward takes
/// h x router latency + h + 1 full serializations instead. Exact to the picosecond, and
/// equal to the ideal FCT the run computes.
#[test]
fn cut_through_latency_of_one_packet_is_analytic() {
    let (lat, prop) = (300 * NS, 1_000 * NS);
    let ps_per_byte = 80; // 100 Gbps
    let wire = 1000 + 58;
    let ser = wire * ps_per_byte;
    for h in 1..=4u64 {
        for cut in [true, false] {
            let src = chain(
                h as usize,
                "1us",
                1000,
                &credit(&format!("cut_through = {cut}")),
            );
            let (sim, o) = run(&src);
            assert_eq!(o, Outcome::Completed);
            let fct = sim.nics.flows[0].finish.unwrap() - sim.nics.flows[0].spec.start;
            let forward = if cut { 0 } else { ser };
            let want = h * (lat + forward) + ser + (h + 1) * prop;
            assert_eq!(fct, want, "h = {h}, cut-through {cut}");
            assert_eq!(sim.ideal[0], want, "ideal FCT, h = {h}, cut-through {cut}");
        }
    }
    // Cut-through saves h full serializations.
    let saf = chain(3, "1us", 1000, &credit("cut_through = false"));
    let vct = chain(3, "1us", 1000, &credit(""));
    let (a, b) = (run(&saf).0, run(&vct).0);
    assert_eq!(
        a.nics.flows[0].finish.unwrap() - b.nics.flows[0].finish.unwrap(),
        3 * ser
    );
}

/// A multi-packet flow alone on a path of mixed rates meets its ideal FCT exactly: the
/// host links are slower than the uplinks, so the leaves store and forward what the hosts
/// send (a faster output could run out of bytes) and cut through what comes down from
/// the spines; the spines cut everything through.
#[test]
fn store_and_forward_where_the_input_is_slower_than_an_output() {
    let src = format!(
        r#"
max_time = "10ms"
[topology]
kind = "leaf_spine"
leaves = 2
spines = 2
servers_per_leaf = 2
host_rate = "100Gbps"
uplink_rate = "400Gbps"
link_delay = "100ns"
[fabric]
switch_latency = "200ns"
{}
[cc]
algorithm = "none"
[[workload]]
kind = "flows"
flows = [{{ src = 0, dst = 2, size = 100000 }}]
"#,
        credit("shared = \"256KiB\"")
    );
    let (sim, o) = run(&src);
    assert_eq!(o, Outcome::Completed);
    let c = sim.fabric.credit().unwrap();
    for (i, p) in sim.fabric.ports.iter().enumerate() {
        let from = sim.port_node_name(fabricsim::base::ids::PortId(i as u32));
        let to = sim.port_node_name(p.peer);
        let want = match (&from[..4], &to[..4]) {
            ("host", _) => false, // 100G into a leaf with 400G uplinks
            (_, "host") => false, // toward a NIC: it receives at the tail
            _ => true,            // 400G into a switch whose fastest port is 400G
        };
        assert_eq!(c.port(i).cut_through(), want, "{from} -> {to}");
    }
    let f = &sim.nics.flows[0];
    assert_eq!(f.finish.unwrap() - f.spec.start, sim.ideal[0]);
    // The same path stored and forwarded everywhere is slower.
    let saf = src.replace(
        "shared = \"256KiB\"",
        "shared = \"256KiB\"\ncut_through = false",
    );
    let (slow, _) = run(&saf);
    assert!(slow.nics.flows[0].finish.unwrap() > f.finish.unwrap());
    assert_eq!(slow.nics.flows[0].finish.unwrap(), slow.ideal[0]);
}

/// A congested incast (seven senders at line rate into one 100G NIC, through a spine)
/// with credits and no congestion control: nothing is dropped, every flow completes,
/// the senders spent time waiting for credits, and the credit accounting holds.
#[test]
fn congested_incast_with_credits_drops_nothing() {
    for extra in [
        "",
        "vcs = 1",
        "vcs = 8\nshared = \"0B\"",
        "cut_through = false",
    ] {
        let src = format!(
            r#"
max_time = "20ms"
[topology]
kind = "leaf_spine"
leaves = 2
spines = 2
servers_per_leaf = 4
host_rate = "100Gbps"
link_delay = "1us"
{}
[cc]
algorithm = "none"
[[workload]]
kind = "incast"
senders = [1, 2, 3, 4, 5, 6, 7]
receiver = 0
size = "1MB"
"#,
            credit(extra)
        );
        let (sim, o) = run(&src);
        assert_eq!(o, Outcome::Completed, "{extra}");
        assert_eq!(sim.ctx.counters.drops, 0, "{extra}");
        assert!(sim.nics.flows.iter().all(|f| f.retx_bytes == 0), "{extra}");
        let c = sim.fabric.credit().unwrap();
        let waited: u64 = (0..sim.fabric.ports.len())
            .map(|i| c.port(i).stats.wait_ps)
            .sum();
        assert!(
            waited > 100 * US,
            "{extra}: senders waited {waited} ps for credits"
        );
        // The senders' credits all came back (the receiver's last ACKs may still be on
        // their way when the run ends).
        for h in 1..8 {
            let p = sim.nics.hosts[h].port.idx();
            assert!(
                (0..8).all(|vc| c.port(p).used(vc) == 0),
                "{extra}: host {h}"
            );
        }
    }
}

/// A sender with credits for one packet only sends it, waits, and sends the next one the
/// moment its credits come back: the first packet leaves the switch toward the idle NIC
/// one router latency (pin to pin, longer here than a block's serialization) and one
/// propagation delay after it started, and its credits cross the cable back in one more
/// propagation delay.
#[test]
fn a_credit_starved_sender_resumes_when_credits_return() {
    // 66 credits: one maximal packet (4154 B, 65 blocks) and one block more.
    let src = chain(
        1,
        "1us",
        8192,
        &credit("vcs = 2\nprivate = \"4224B\"\nshared = \"0B\""),
    );
    let mut sim = build(&src);
    let port = sim.nics.hosts[0].port;
    let (prop, lat) = (1_000 * NS, 300 * NS);
    let ser = 4154 * 80;
    let back = lat.max(64 * 80) + prop + prop;
    assert!(sim.run_until(back - 1, &mut |_| {}).is_none());
    assert_eq!(
        sim.fabric.ports[port.idx()].tx_packets,
        1,
        "the second packet waits"
    );
    assert!(sim.fabric.credit().unwrap().is_waiting(port.idx()));
    assert!(sim.run_until(back, &mut |_| {}).is_none());
    assert_eq!(
        sim.fabric.ports[port.idx()].tx_packets,
        2,
        "it leaves as the credits come back"
    );
    let o = sim.run(&mut |_| {});
    assert_eq!(o, Outcome::Completed);
    assert!(invariants::check(&sim).is_empty());
    let st = &sim.fabric.credit().unwrap().port(port.idx()).stats;
    assert_eq!(st.wait_ps, back - ser, "waited from the end of packet 1");
    assert_eq!(st.stalls, 1);
    // One credit left on the data VC, the control VC's 66 untouched.
    assert_eq!(st.min_free, 1 + 66);
    // credits.csv: one row per port feeding a switch (the two NIC ports), the wait in ns.
    let summary = fabricsim::output::summarize(&sim, "t", &o, 0.0);
    let csv = fabricsim::output::run_table_text("credits.csv", &sim, &summary).unwrap();
    let rows: Vec<&str> = csv.lines().collect();
    assert_eq!(
        rows[0],
        "node,port,peer,cut_through,credit_wait_ns,credit_stalls,blocks_sent,min_free_blocks"
    );
    assert_eq!(rows.len(), 3, "{csv}");
    let wait_ns = format!("{:.3}", (back - ser) as f64 / 1e3);
    assert!(
        rows[1].starts_with(&format!("a,0,s0,1,{wait_ns},1,130,67")),
        "{csv}"
    );
    // Runs without credits have no such table.
    let pfc = build(&chain(1, "1us", 8192, ""));
    let s = fabricsim::output::summarize(&pfc, "t", &Outcome::Completed, 0.0);
    assert!(fabricsim::output::run_table_text("credits.csv", &pfc, &s).is_none());
}

/// The ring of scenarios/pfc-deadlock.toml (each flow routed two hops clockwise, so the
/// routes are not up/down) under credits instead of PFC: the input buffers fill in a
/// cycle and the run stops with the cycle of ports waiting for credits.
#[test]
fn credit_deadlock_on_a_ring_is_detected() {
    let ring = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../scenarios/pfc-deadlock.toml"
    ))
    .unwrap();
    let (head, _) = ring.split_once("[fabric.pfc]").unwrap();
    let (_, tail) = ring.split_once("[cc]").unwrap();
    let src = format!("{head}{}[cc]{tail}", credit(""));
    let (_, o) = run(&src);
    match o {
        Outcome::Stalled(r) => {
            assert!(r.paused_ports.is_empty(), "{r:?}");
            assert_eq!(r.deadlock_cycle.len(), 5, "{r:?}");
            assert_eq!(r.deadlock_cycle.first(), r.deadlock_cycle.last());
            assert!(
                r.deadlock_cycle.iter().all(|p| p.starts_with('s')),
                "a cycle of switch ports: {r:?}"
            );
            for p in &r.deadlock_cycle {
                assert!(r.credit_blocked_ports.contains(p), "{r:?}");
            }
            assert!(r.to_string().starts_with("credit deadlock"), "{r}");
            assert!(r.unfinished_flows > 0);
        }
        o => panic!("expected a stall, got {o:?}"),
    }
}

/// Random traffic on random credit settings: at every step of the run the credits of
/// every egress port and VC stay within the buffer and equal what is on the link, in the
/// far input and on the way back (the credit audit of `invariants::check`), and nothing
/// is ever dropped.
fn random_run(
    vcs: u32,
    fpb: u64,
    private_extra: u64,
    shared_blocks: u64,
    cut: bool,
    flows: &[(u32, u32, u64, u64)],
) -> Result<(), TestCaseError> {
    let block = 16 * fpb;
    // A maximal packet (4096 + 58 B of headers + 40 B of INT) must fit a VC's private part.
    let private = (4194u64.div_ceil(block) + private_extra) * block;
    let list: Vec<String> = flows
        .iter()
        .map(|(s, d, size, start)| {
            format!("{{ src = {s}, dst = {d}, size = {size}, start = \"{start}ns\" }}")
        })
        .collect();
    let src = format!(
        r#"
max_time = "5ms"
[topology]
kind = "leaf_spine"
leaves = 2
spines = 2
servers_per_leaf = 3
host_rate = "100Gbps"
link_delay = "500ns"
{}
[cc]
algorithm = "none"
[[workload]]
kind = "flows"
flows = [{}]
"#,
        credit(&format!(
            "vcs = {vcs}\nflits_per_block = {fpb}\nprivate = \"{private}B\"\nshared = \"{}B\"\ncut_through = {cut}",
            shared_blocks * block
        )),
        list.join(", ")
    );
    let mut sim = build(&src);
    let mut t: Time = 0;
    let outcome = loop {
        t += 300 * NS;
        if let Some(o) = sim.run_until(t, &mut |_| {}) {
            break o;
        }
        let bad = invariants::check(&sim);
        prop_assert!(bad.is_empty(), "at {t} ps: {bad:#?}");
    };
    prop_assert_eq!(outcome, Outcome::Completed);
    let bad = invariants::check(&sim);
    prop_assert!(bad.is_empty(), "{bad:#?}");
    prop_assert_eq!(sim.ctx.counters.drops, 0);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]
    #[test]
    fn credits_stay_within_the_buffer_and_add_up(
        vcs in prop::sample::select(vec![1u32, 2, 4, 6, 8]),
        fpb in prop::sample::select(vec![1u64, 2, 4, 8]),
        private_extra in 0u64..40,
        shared_blocks in 0u64..200,
        cut in any::<bool>(),
        flows in prop::collection::vec((0u32..6, 0u32..6, 1u64..300_000, 0u64..20_000), 1..12),
    ) {
        let flows: Vec<_> = flows.into_iter().filter(|(s, d, _, _)| s != d).collect();
        prop_assume!(!flows.is_empty());
        random_run(vcs, fpb, private_extra, shared_blocks, cut, &flows)?;
    }
}
