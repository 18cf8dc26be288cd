//! Document 002 (RoCE analysis for HPC) as checks: a small message's latency through h
//! switches for every switch preset and both fabrics, credits never over-committing a
//! buffer, a port marked more often losing its share, and a switch's own CNP beating the
//! receiver's by at least the analytic margin.

use fabricsim::analysis::invariants;
use fabricsim::base::presets::{self, SWITCHES};
use fabricsim::base::units::{Time, NS, US};
use fabricsim::sim::{Outcome, Simulation};
use std::path::Path;

fn run(src: &str) -> Simulation {
    let l = fabricsim::load_str(src, "test.toml", Path::new("."), &[])
        .unwrap_or_else(|e| panic!("{e}"));
    let mut sim = Simulation::build(&l.scenario, "test.toml", Path::new("."))
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(sim.run(&mut |_| {}), Outcome::Completed);
    let bad = invariants::check(&sim);
    assert!(bad.is_empty(), "invariants violated: {bad:#?}");
    sim
}

/// host a - s0 - ... - s(h-1) - host b over 100G links of `delay`; a 1 B ping from a to
/// b and its pong, which leaves b once the ping has arrived (`after`).
fn chain(h: usize, delay: &str, head: &str) -> String {
    let names: Vec<String> = std::iter::once("a".to_string())
        .chain((0..h).map(|i| format!("s{i}")))
        .chain(std::iter::once("b".to_string()))
        .collect();
    let links: Vec<String> = names
        .windows(2)
        .map(|w| {
            format!(
                "{{ a = \"{}\", b = \"{}\", rate = \"100Gbps\", delay = \"{delay}\" }}",
                w[0], w[1]
            )
        })
        .collect();
    let switches: Vec<String> = (0..h).map(|i| format!("\"s{i}\"")).collect();
    format!(
        r#"max_time = "1ms"
{head}
[topology]
kind = "custom"
hosts = ["a", "b"]
switches = [{}]
links = [{}]
[cc]
algorithm = "none"
[[workload]]
kind = "flows"
flows = [{{ src = "a", dst = "b", size = 1 }}, {{ src = "b", dst = "a", size = 1, after = 0 }}]
"#,
        switches.join(", "),
        links.join(", ")
    )
}

/// Picoseconds to serialize `bytes` at 100 Gbit/s (80 ps per byte, exact).
fn ser100(bytes: u64) -> Time {
    bytes * 80
}

/// A 1-byte message through h switches takes, for every preset of document 002:
/// - on the `roce` fabric (58 B headers, store-and-forward): h x latency + (h + 1) x
///   (serialization of 59 B + propagation);
/// - on the `ib_like` fabric (26 B headers, credits with cut-through, the latency pin to
///   pin): h x latency + one serialization of 27 B + (h + 1) x propagation (the frame is
///   smaller than a credit block, and every preset's latency is longer than its
///   serialization, so each switch forwards it a latency after its head arrived);
/// - with the 8 B mini-packet header on the `ib_like` fabric: the same with 9 B.
///
/// The pong, osu_latency's other half, leaves the instant the ping has arrived and takes
/// the same time plus one ACK frame: the NIC that just received the ping sends its ACK
/// first, and a store-and-forward switch holds a pong smaller than that ACK until the
/// ACK has left (`max(0, ACK - frame)` per switch).
///
/// Exact to the picosecond.
#[test]
fn a_1b_message_through_h_switches_takes_the_analytic_time_for_every_preset() {
    let d = 10 * NS;
    for p in SWITCHES {
        for h in [1usize, 2, 3, 5] {
            for (fabric, header, cut) in [
                ("roce", "", false),
                ("ib_like", "", true),
                ("ib_like", "[transport]\nheader = \"mini_packet\"\n", true),
            ] {
                let head = format!(
                    "profile = \"{fabric}\"\n{header}[fabric]\nswitch_latency = \"{}\"\n",
                    p.name
                );
                let sim = run(&chain(h, "10ns", &head));
                let hdr = sim.ctx.params.header;
                let want_hdr = match (fabric, header.is_empty()) {
                    ("roce", _) => presets::header("rocev2").unwrap().bytes,
                    (_, true) => presets::header("ib").unwrap().bytes,
                    _ => presets::header("mini_packet").unwrap().bytes,
                };
                assert_eq!(hdr, want_hdr, "{fabric} {header}");
                let frame = 1 + hdr;
                let hh = h as u64;
                let want = if cut {
                    assert!(
                        ser100(frame) < p.latency,
                        "cut-through forwards after the latency"
                    );
                    hh * p.latency + ser100(frame) + (hh + 1) * d
                } else {
                    hh * p.latency + (hh + 1) * (ser100(frame) + d)
                };
                let (ping, pong) = (&sim.nics.flows[0], &sim.nics.flows[1]);
                let fct = ping.finish.expect("finished") - ping.spec.start;
                assert_eq!(
                    fct, want,
                    "{} ({} ps), {fabric} {header:?}, {h} switches",
                    p.name, p.latency
                );
                let ack = ser100(sim.ctx.params.ack_size as u64);
                let behind_ack = if cut {
                    0
                } else {
                    hh * ack.saturating_sub(ser100(frame))
                };
                assert_eq!(
                    pong.spec.start,
                    ping.finish.unwrap(),
                    "the pong waits for the ping"
                );
                assert_eq!(
                    pong.finish.unwrap() - pong.spec.start,
                    want + ack + behind_ack,
                    "pong: {} {fabric} {header:?}, {h} switches",
                    p.name
                );
            }
        }
    }
}

/// One switch, hosts 1..7 sending 2 MB each to host 0 at 100G, no congestion control:
/// under credits the switch stores at most its buffer (the input buffers together) and
/// drops nothing, at every input-buffer size, even one that holds barely a packet per
/// VC beside the shared part.
#[test]
fn credits_never_store_more_than_the_buffer_and_never_drop() {
    for (delay, shared) in [("1us", "4KiB"), ("1us", "64KiB"), ("10us", "8KiB")] {
        let src = format!(
            r#"max_time = "50ms"
[topology]
kind = "leaf_spine"
leaves = 1
spines = 0
servers_per_leaf = 8
host_rate = "100Gbps"
link_delay = "{delay}"
[fabric.pfc]
enabled = false
[fabric.credit]
enabled = true
vcs = 2
private = "5KiB"
shared = "{shared}"
[cc]
algorithm = "none"
[[workload]]
kind = "incast"
senders = [1, 2, 3, 4, 5, 6, 7]
receiver = 0
size = "2MB"
"#
        );
        let sim = run(&src);
        let sw = &sim.fabric.switches[0];
        let per_port = 2 * 5 * 1024 + fabricsim::base::units::parse_bytes(shared).unwrap();
        assert_eq!(sw.buffer.size, 8 * per_port);
        assert!(sw.buffer.peak > 0, "{delay} {shared}: the incast queues");
        assert!(
            sw.buffer.peak <= sw.buffer.size,
            "{delay} {shared}: peak {} over the buffer {}",
            sw.buffer.peak,
            sw.buffer.size
        );
        // Seven inputs filling toward one output: at most seven input buffers' worth.
        assert!(sw.buffer.peak <= 7 * per_port, "{delay} {shared}");
        assert_eq!(sim.ctx.counters.drops, 0, "{delay} {shared}");
        assert!(sim.nics.flows.iter().all(|f| f.retx_bytes == 0));
        let pauses: u64 = sim
            .fabric
            .ports
            .iter()
            .map(|p| p.stats.pause_frames_sent)
            .sum();
        assert_eq!(pauses, 0, "credits send no PFC frame");
    }
}

/// Two equal flows into one 100G port (DCQCN, ns3 profile), from leaf0:1 (flow 0) and
/// leaf0:2 (flow 1): whichever port `fabric.ecn.ingress_bias` marks four times as often
/// carries the flow that finishes last, at well under the other's mean rate; the
/// direction follows the port, not the host.
#[test]
fn the_flow_of_the_port_marked_more_gets_the_lower_share() {
    let scenario = |bias: &str| {
        format!(
            r#"max_time = "50ms"
[topology]
kind = "leaf_spine"
leaves = 1
spines = 0
servers_per_leaf = 3
host_rate = "100Gbps"
link_delay = "1us"
[fabric.ecn]
ingress_bias = {{ {bias} }}
[cc]
algorithm = "dcqcn"
[[workload]]
kind = "flows"
flows = [{{ src = 1, dst = 0, size = "20MB" }}, {{ src = 2, dst = 0, size = "20MB" }}]
"#
        )
    };
    // Mean rate of each flow (bytes / FCT).
    let rates = |sim: &Simulation| -> [f64; 2] {
        [0, 1].map(|i| {
            let f = &sim.nics.flows[i];
            f.spec.size as f64 / (f.finish.unwrap() - f.spec.start) as f64
        })
    };
    for (bias, low) in [("\"leaf0:2\" = 4.0", 1usize), ("\"leaf0:1\" = 4.0", 0)] {
        let sim = run(&scenario(bias));
        let r = rates(&sim);
        let high = 1 - low;
        assert!(
            r[low] < 0.9 * r[high],
            "{bias}: flow {low} should get the lower share: {r:?}"
        );
        assert_eq!(sim.ctx.counters.drops, 0);
    }
    // A zero bias never marks that port's packets, so its flow never slows: the other
    // takes every cut.
    let sim = run(&scenario("\"leaf0:1\" = 0.0"));
    let r = rates(&sim);
    assert!(r[0] > r[1], "{r:?}");
}

/// Hosts 1..8 send 2 MB each to host 0 at once through one switch (100G, 1 us links,
/// 300 ns switch). ECN marks with certainty above 100 KB (kmin = kmax), so the first
/// packet to find more than that queued decides both runs: with `cnp_from = "switch"` its
/// CNP leaves the switch at once and reaches its sender one 64 B frame and one link
/// later; with the receiver's CNP the first CE-marked packet (dequeued no earlier) must
/// still cross to the receiver (its frame and a link), and the CNP come back (a frame, a
/// link and the switch latency to the switch, a frame and a link to the sender). Until
/// the first CNP arrives the two runs move the same data, so the receiver's first CNP
/// comes at least (frame + 64 B + 2 links + switch latency) after the switch's, less the
/// ACKs the switch's CNP may wait behind (one per sender at most).
#[test]
fn a_switch_cnp_reaches_the_source_before_a_receiver_cnp_would() {
    let scenario = |from: &str| {
        format!(
            r#"max_time = "50ms"
[topology]
kind = "leaf_spine"
leaves = 1
spines = 0
servers_per_leaf = 9
host_rate = "100Gbps"
link_delay = "1us"
[fabric.ecn]
kmin = "100KB"
kmax = "100KB"
[cc]
algorithm = "dcqcn"
[cc.dcqcn]
cnp_from = "{from}"
[[workload]]
kind = "incast"
senders = [1, 2, 3, 4, 5, 6, 7, 8]
receiver = 0
size = "2MB"
"#
        )
    };
    let first = |sim: &Simulation| {
        (sim.nics.flows.iter())
            .map(|f| f.first_cnp_at)
            .min()
            .unwrap()
    };
    let sw = run(&scenario("switch"));
    let rx = run(&scenario("receiver"));
    let (t_sw, t_rx) = (first(&sw), first(&rx));
    assert!(t_sw < Time::MAX && t_rx < Time::MAX, "both runs notify");
    // Every CNP of the switch run came from the switch, none of the receiver run did.
    let switch_cnps: u32 = sw.nics.flows.iter().map(|f| f.dr_cnps_received).sum();
    assert!(switch_cnps > 0);
    assert!(sw.nics.flows.iter().all(|f| f.cnps_sent == 0));
    assert!(rx.nics.flows.iter().all(|f| f.dr_cnps_received == 0));
    let mtu_frame = ser100(rx.ctx.params.mtu + rx.ctx.params.header);
    let cnp = ser100(rx.ctx.params.ack_size as u64);
    let (d, lat) = (US, 300 * NS);
    let margin = mtu_frame + cnp + 2 * d + lat - 8 * cnp;
    assert!(
        t_rx >= t_sw + margin,
        "receiver CNP at {t_rx} ps, switch CNP at {t_sw} ps: less than {margin} ps apart"
    );
    // And forward notification helped: the queue peaked lower.
    let peak = |s: &Simulation| {
        s.fabric
            .ports
            .iter()
            .map(|p| p.max_queue_bytes)
            .max()
            .unwrap()
    };
    assert!(peak(&sw) < peak(&rx), "{} vs {}", peak(&sw), peak(&rx));
}
