//! Faults, for every fabric: bit errors with and without link-level retransmission, links
//! and switches going down, lane degrade. Each test checks the accounting
//! (`invariants::check`: every frame delivered, corrupted, discarded, lost or on the
//! wire; every data packet arrived, dropped, lost or in flight) besides its own claim.

use fabricsim::analysis::invariants;
use fabricsim::base::units::{Time, US};
use fabricsim::model::fabric::faults::FaultSummary;
use fabricsim::model::transport::rdma::ideal_fct;
use fabricsim::output::fct;
use fabricsim::sim::{Outcome, Simulation};
use std::path::Path;

fn build(src: &str) -> Simulation {
    let l = fabricsim::load_str(src, "test.toml", Path::new("."), &[]).expect("loads");
    Simulation::build(&l.scenario, "test.toml", Path::new(".")).expect("builds")
}

fn check(sim: &Simulation) {
    let bad = invariants::check(sim);
    assert!(bad.is_empty(), "invariants violated: {bad:#?}");
}

fn run(src: &str) -> Simulation {
    let mut sim = build(src);
    assert_eq!(sim.run(&mut |_| {}), Outcome::Completed);
    check(&sim);
    sim
}

fn summary(sim: &Simulation) -> FaultSummary {
    sim.fabric
        .faults
        .as_ref()
        .expect("a run with faults")
        .summary(sim.ctx.now)
}

/// Two leaves of two hosts, two spines, 100G everywhere, 1 us links.
fn two_leaf(flows: &str, extra: &str) -> String {
    format!(
        r#"
max_time = "200ms"
[topology]
kind = "leaf_spine"
leaves = 2
spines = 2
servers_per_leaf = 2
host_rate = "100Gbps"
uplink_rate = "100Gbps"
link_delay = "1us"
[cc]
algorithm = "none"
{extra}
[[workload]]
kind = "flows"
flows = [{flows}]
"#
    )
}

const CROSS: &str = "{src = 0, dst = 2, size = \"256KB\"}, {src = 1, dst = 3, size = \
                     \"256KB\"}, {src = 2, dst = 1, size = \"128KB\", start = \"3us\"}, \
                     {src = 3, dst = 0, size = \"64KB\", start = \"5us\"}";

/// Every data packet of every flow reached its receiver exactly once, in order, and the
/// transport never had to send anything again.
fn assert_exactly_once(sim: &Simulation) {
    let mtu = sim.ctx.params.mtu;
    for (i, f) in sim.nics.flows.iter().enumerate() {
        let packets = f.spec.size.div_ceil(mtu);
        assert!(f.is_complete(), "flow {i} finished");
        assert_eq!(f.rcv_nxt, f.spec.size, "flow {i}: bytes delivered");
        assert_eq!(f.data_pkts_sent, packets, "flow {i}: packets sent once");
        assert_eq!(
            f.data_pkts_arrived, packets,
            "flow {i}: packets arrived once"
        );
        assert_eq!(
            (f.retx_bytes, f.timeouts, f.nacks),
            (0, 0, 0),
            "flow {i}: no transport retransmission"
        );
    }
}

#[test]
fn llr_delivers_every_byte_exactly_once_at_ber_1e4() {
    // No FEC: a full frame is corrupted with probability 0.96 on every hop, an ACK with
    // 0.05; link-level replays carry all of it.
    let sim = run(&two_leaf(
        CROSS,
        "[fabric.reliability]\nber = 1e-4\nllr = true",
    ));
    assert_exactly_once(&sim);
    let s = summary(&sim);
    assert!(s.frames_corrupted > 100, "{s:?}");
    assert!(s.frames_replayed >= s.frames_corrupted, "{s:?}");
    assert_eq!((s.data_packets_lost, s.packets_dropped), (0, 0));
    for (i, f) in sim.nics.flows.iter().enumerate() {
        let t = fct(&sim, i).unwrap();
        assert!(t > sim.ideal[i], "flow {i}: replays cost time");
        assert!(f.finish.is_some());
    }
}

#[test]
fn without_llr_go_back_n_recovers_what_the_fcs_drops() {
    // FER 3.3 % per full frame and hop: the receivers' FCS drops them, NACKs and RTOs
    // make the senders go back.
    let sim = run(&two_leaf(CROSS, "[fabric.reliability]\nber = 1e-6"));
    let s = summary(&sim);
    assert!(s.frames_corrupted > 0 && s.data_packets_lost > 0, "{s:?}");
    assert_eq!((s.frames_replayed, s.frames_discarded), (0, 0));
    let retx: u64 = sim.nics.flows.iter().map(|f| f.retx_bytes).sum();
    assert!(retx > 0, "the transport sent lost bytes again");
    for f in &sim.nics.flows {
        assert_eq!(f.rcv_nxt, f.spec.size);
    }
}

#[test]
fn fec_hides_ber_1e5_and_adds_its_latency_per_hop() {
    // RS(528,514) leaves 9.5e-15 per full frame at BER 1e-5: nothing is corrupted, and
    // the ideal FCT grows by the FEC latency on each of the 4 hops; a lone flow meets it.
    let fec = "[fabric.reliability]\nber = 1e-5\nfec = \"rs528\"\nfec_latency = \"100ns\"";
    let sim = run(&two_leaf(CROSS, fec));
    assert_eq!(summary(&sim).frames_corrupted, 0);
    assert_exactly_once(&sim);
    let lone = "{src = 0, dst = 2, size = \"1MB\"}";
    let (plain, sim) = (run(&two_leaf(lone, "")), run(&two_leaf(lone, fec)));
    assert_eq!(sim.ideal[0], plain.ideal[0] + 4 * 100_000);
    assert_eq!(fct(&sim, 0), Some(sim.ideal[0]));
}

#[test]
fn bit_errors_are_a_function_of_the_seed() {
    let src = two_leaf(CROSS, "[fabric.reliability]\nber = 1e-6");
    let flows = |seed: u64| {
        let mut l = fabricsim::load_str(&src, "t.toml", Path::new("."), &[]).unwrap();
        l.scenario.seed = seed;
        let mut sim = Simulation::build(&l.scenario, "t.toml", Path::new(".")).unwrap();
        sim.run(&mut |_| {});
        (
            fabricsim::output::flows_csv(&sim),
            summary(&sim).frames_corrupted,
        )
    };
    assert_eq!(flows(1), flows(1));
    assert_ne!(flows(1), flows(2));
}

/// The port of `node`'s link to `peer`.
fn port_between(sim: &Simulation, node: &str, peer: &str) -> usize {
    (0..sim.fabric.ports.len())
        .find(|&p| {
            let port = &sim.fabric.ports[p];
            sim.fabric.nodes[port.node.idx()].name == node && sim.port_node_name(port.peer) == peer
        })
        .expect("such a link")
}

/// The spine a lone flow from host 0 to host 2 takes (its ECMP choice at leaf0).
fn spine_of_flow(flow: &str) -> String {
    let sim = run(&two_leaf(flow, ""));
    let up = (0..2)
        .find(|s| {
            sim.fabric.ports[port_between(&sim, "leaf0", &format!("spine{s}"))].tx_packets > 0
        })
        .expect("the flow crossed a spine");
    format!("spine{up}")
}

#[test]
fn a_link_going_down_mid_flow_loses_its_frames_and_routing_moves_the_flow() {
    let flow = "{src = 0, dst = 2, size = \"4MB\"}";
    let spine = spine_of_flow(flow);
    let faults = format!(
        "[fabric.reliability]\nreconvergence_delay = \"50us\"\n\
         [[fault]]\nkind = \"link_down\"\nat = \"100us\"\nlink = [\"leaf0\", \"{spine}\"]"
    );
    let mut sim = build(&two_leaf(flow, &faults));
    let down = port_between(&sim, "leaf0", &spine);
    let other = port_between(
        &sim,
        "leaf0",
        if spine == "spine0" {
            "spine1"
        } else {
            "spine0"
        },
    );
    // Just before routing re-converges: the port is down, the flow's packets die there.
    assert!(sim.run_until(150 * US - 1, &mut |_| {}).is_none());
    check(&sim);
    assert!(!sim
        .fabric
        .port_up(fabricsim::base::ids::PortId(down as u32)));
    let fs = sim.fabric.faults.as_ref().unwrap();
    assert!(fs.links[down].lost > 0, "frames on the wire were lost");
    let dropped = fs.links[down].dropped;
    assert!(
        dropped > 0,
        "packets routed to the down port are dropped and counted"
    );
    assert_eq!(sim.fabric.ports[other].tx_packets, 0, "no other path yet");
    // After it: the other spine carries the flow, nothing more dies at the down port.
    assert_eq!(sim.run(&mut |_| {}), Outcome::Completed);
    check(&sim);
    let fs = sim.fabric.faults.as_ref().unwrap();
    assert_eq!(fs.links[down].dropped, dropped);
    assert!(sim.fabric.ports[other].tx_packets > 0);
    let s = summary(&sim);
    assert_eq!(
        (s.applied, s.reconvergences, s.links_down_at_end),
        (1, 1, 1)
    );
    assert!(s.data_packets_lost > 0);
    let f = &sim.nics.flows[0];
    assert_eq!(f.rcv_nxt, f.spec.size);
    assert!(f.retx_bytes > 0, "go-back-N sent the lost packets again");
    assert!(fct(&sim, 0).unwrap() > sim.ideal[0] + 50 * US);
}

#[test]
fn a_switch_going_down_takes_its_links_and_comes_back() {
    let faults = "[fabric.reliability]\nreconvergence_delay = \"20us\"\n\
                  [[fault]]\nkind = \"switch_down\"\nat = \"30us\"\nswitch = \"spine0\"\n\
                  [[fault]]\nkind = \"switch_up\"\nat = \"300us\"\nswitch = \"spine0\"";
    let flows = "{src = 0, dst = 2, size = \"2MB\"}, {src = 1, dst = 3, size = \"2MB\"}, \
                 {src = 2, dst = 0, size = \"2MB\"}, {src = 3, dst = 1, size = \"2MB\"}, \
                 {src = 0, dst = 3, size = \"1MB\", start = \"400us\"}, \
                 {src = 1, dst = 2, size = \"1MB\", start = \"400us\"}";
    let mut sim = build(&two_leaf(flows, faults));
    assert!(sim.run_until(100 * US, &mut |_| {}).is_none());
    check(&sim);
    let spine_ports = |sim: &Simulation| -> Vec<usize> {
        (0..sim.fabric.ports.len())
            .filter(|&p| {
                let port = &sim.fabric.ports[p];
                sim.fabric.nodes[port.node.idx()].name == "spine0"
                    || sim.port_node_name(port.peer) == "spine0"
            })
            .collect()
    };
    let ports = spine_ports(&sim);
    assert_eq!(ports.len(), 4);
    for &p in &ports {
        assert!(!sim.fabric.port_up(fabricsim::base::ids::PortId(p as u32)));
    }
    let tx_down: Vec<u64> = ports
        .iter()
        .map(|&p| sim.fabric.ports[p].tx_packets)
        .collect();
    assert!(sim.run_until(300 * US, &mut |_| {}).is_none());
    let tx_still: Vec<u64> = ports
        .iter()
        .map(|&p| sim.fabric.ports[p].tx_packets)
        .collect();
    assert_eq!(tx_down, tx_still, "a down switch sends nothing");
    assert_eq!(sim.run(&mut |_| {}), Outcome::Completed);
    check(&sim);
    for &p in &ports {
        assert!(sim.fabric.port_up(fabricsim::base::ids::PortId(p as u32)));
        let lf = &sim.fabric.faults.as_ref().unwrap().links[p];
        assert_eq!(lf.down_until(sim.ctx.now), 270 * US);
    }
    let s = summary(&sim);
    assert_eq!(
        (s.applied, s.reconvergences, s.links_down_at_end),
        (2, 2, 0)
    );
    assert_eq!(s.link_down_ns, 2.0 * 270_000.0);
    for f in &sim.nics.flows {
        assert_eq!(f.rcv_nxt, f.spec.size);
    }
}

/// The FCT of a lone flow whose first hop (host0 -> leaf0) runs on `lanes` of 4.
fn fct_on_lanes(lanes: u8, at: Time, start: &str) -> (Time, Time) {
    let flow = format!("{{src = 0, dst = 2, size = \"1MB\", start = \"{start}\"}}");
    let faults = format!(
        "[[fault]]\nkind = \"lane_degrade\"\nat = \"{}ns\"\nlink = [\"host0\", \"leaf0\"]\nlanes = {lanes}",
        at / 1000
    );
    let mut sim = build(&two_leaf(&flow, &faults));
    // The path as built, on 4 lanes (path_of reads the ports' current rates).
    let mut hops = sim.path_of(0);
    let (mtu, header) = (sim.ctx.params.mtu, sim.ctx.params.header);
    assert_eq!(sim.ideal[0], ideal_fct(1_000_000, mtu, header, &hops));
    hops[0].bps = hops[0].bps * lanes as u64 / 4;
    let analytic = ideal_fct(1_000_000, mtu, header, &hops);
    assert_eq!(sim.run(&mut |_| {}), Outcome::Completed);
    check(&sim);
    (fct(&sim, 0).unwrap(), analytic)
}

#[test]
fn lane_degrade_halves_the_rate_in_steps() {
    // Degraded before the flow starts: the FCT is the analytic pipeline with the first
    // hop at half (2 lanes) or a quarter (1 lane) of 100G.
    for lanes in [4u8, 2, 1] {
        let (got, want) = fct_on_lanes(lanes, 0, "1us");
        assert_eq!(got, want, "{lanes} lanes");
    }
    let (half, _) = fct_on_lanes(2, 0, "1us");
    let (full, _) = fct_on_lanes(4, 0, "1us");
    assert!(half > full * 19 / 10, "{half} vs {full}");
    // Back to 4 lanes before the flow starts: the ideal FCT again.
    let faults = "[[fault]]\nkind = \"lane_degrade\"\nat = \"0ns\"\nlink = [\"host0\", \"leaf0\"]\nlanes = 1\n\
                  [[fault]]\nkind = \"lane_degrade\"\nat = \"1us\"\nlink = [\"host0\", \"leaf0\"]\nlanes = 4";
    let sim = run(&two_leaf(
        "{src = 0, dst = 2, size = \"1MB\", start = \"2us\"}",
        faults,
    ));
    assert_eq!(fct(&sim, 0), Some(sim.ideal[0]));
    let lf = &sim.fabric.faults.as_ref().unwrap().links[port_between(&sim, "leaf0", "host0")];
    assert_eq!(lf.lanes, 4);
}

#[test]
fn no_faults_means_no_fault_state() {
    let sim = run(&two_leaf(
        CROSS,
        "[fabric.reliability]\nllr = true\nfec = \"none\"",
    ));
    assert!(sim.fabric.faults.is_none());
    assert!(sim.fabric.links.iter().all(|l| !l.watched));
}

#[test]
fn pfc_frames_are_not_held_behind_replays_so_the_fabric_stays_lossless() {
    // gse-ber's RoCE AlltoAll at BER 1e-5 without FEC (28 % of full frames corrupted per
    // hop) with LLR: PFC pauses the busy links, and its XOFF frames share those links
    // with replayed data. Held behind a replay (a round trip, then the whole replayed
    // burst) they arrived too late for the headroom: 12 drops in a lossless fabric.
    // With 16 MB of buffer (half the scenario's) PFC pauses hundreds of times; with the
    // scenario's 32 MB it may not pause at all. (Known gap, not what this test checks: at
    // 12 MB and less some dozens of frames drop, because at 28 % corruption a replay is
    // itself corrupted and replayed again, and the headroom allows for one replay.)
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/gse-ber.toml");
    let sets = [
        "variants=[{name=\"roce\"}]",
        "sweep[0].values=[\"alltoall\"]",
        "sweep[1].values=[\"none\"]",
        "sweep[2].values=[true]",
        "sweep[3].values=[1e-5]",
        "fabric.buffer=\"16MB\"",
    ]
    .map(String::from);
    let loaded = fabricsim::load_file(&path, &sets).unwrap();
    let mut runs = fabricsim::run::runner::build_all(&loaded, None).unwrap();
    assert_eq!(runs.len(), 1);
    let sim = &mut runs[0].1;
    assert_eq!(sim.run(&mut |_| {}), Outcome::Completed);
    check(sim);
    let pauses: u64 = sim
        .fabric
        .ports
        .iter()
        .map(|p| p.stats.pause_frames_sent)
        .sum();
    assert!(pauses > 0, "PFC paused some link");
    assert_eq!(sim.ctx.counters.drops, 0);
    assert!(summary(sim).frames_replayed > 0);
    assert_exactly_once(sim);
}
