//! The ns-3 parity options in the simulator: ACKs in the switches' data
//! queue, CNPs as a flag on ACKs, INT as a fixed-size header from the NIC, and the `ns3`
//! fabric profile that bundles them. Each test runs the option and its default side by
//! side, so it fails if the option does nothing or the default changed.

use fabricsim::base::units::{MS, US};
use fabricsim::kernel::packet::PacketKind;
use fabricsim::model::cc::AnyCc;
use fabricsim::sim::{Outcome, Simulation};
use std::path::Path;

mod common;

fn build(src: &str) -> Simulation {
    let l = fabricsim::load_str(src, "test.toml", Path::new("."), &[]).expect("loads");
    Simulation::build(&l.scenario, "test.toml", Path::new(".")).expect("builds")
}

fn port_between(sim: &Simulation, node: &str, peer: &str) -> usize {
    let id = |name: &str| {
        sim.fabric
            .nodes
            .iter()
            .position(|x| x.name == name)
            .unwrap() as u32
    };
    let (n, p) = (id(node), id(peer));
    (0..sim.fabric.ports.len())
        .find(|&i| {
            sim.fabric.ports[i].node.0 == n
                && sim.fabric.ports[sim.fabric.links[i].to_port].node.0 == p
        })
        .unwrap_or_else(|| panic!("no port {node} -> {peer}"))
}

/// Hosts a, b, r on one 100G switch; `flows` in the flows workload's syntax.
fn star(alg: &str, extra: &str, flows: &str) -> String {
    common::star_of_three(alg, "50ms", extra, flows)
}

/// Runs in 10 us steps, and reports which priority queues of switch port `s -> a` ever
/// held an ACK: (data priority, control priority).
fn where_acks_wait(extra: &str) -> (bool, bool) {
    // a -> r is acknowledged through s -> a, which r -> a and b -> a congest; so s
    // pauses r's data priority while r keeps acknowledging a -> r (16 MB: longer than
    // the pause), which must not overrun s's headroom.
    let flows = r#"{ src = "a", dst = "r", size = "16MB" },
        { src = "r", dst = "a", size = "4MB" }, { src = "b", dst = "a", size = "4MB" }"#;
    let mut sim = build(&star("none", extra, flows));
    let port = port_between(&sim, "s", "a");
    let (data, ctrl) = (
        sim.ctx.params.data_prio as usize,
        sim.ctx.params.ctrl_prio as usize,
    );
    let (mut in_data, mut in_ctrl) = (false, false);
    let mut t = 0;
    loop {
        t += 10 * US;
        let done = sim.run_until(t, &mut |_| {});
        let q = &sim.fabric.ports[port].queues;
        let pool = sim.fabric.queue_pool(port);
        let has_ack = |p: usize| q[p].iter(pool).any(|d| d.kind() == PacketKind::Ack);
        in_data |= has_ack(data);
        in_ctrl |= has_ack(ctrl);
        if let Some(o) = done {
            assert_eq!(o, Outcome::Completed);
            assert_eq!(sim.ctx.counters.drops, 0, "lossless either way");
            return (in_data, in_ctrl);
        }
        assert!(t < 50 * MS);
    }
}

#[test]
fn acks_wait_in_the_data_queue_of_switches_only_when_asked() {
    let (data, _) = where_acks_wait("");
    assert!(!data, "by default ACKs never sit in a switch's data queue");
    let (data, ctrl) = where_acks_wait("[transport]\nfeedback_queue = \"data\"");
    assert!(
        data,
        "feedback_queue = \"data\": ACKs queue behind the data"
    );
    assert!(!ctrl, "and never in the control queue");
}

/// Two DCQCN flows into r: (frames leaving r, ACKs + NACKs sent, CNPs counted, cuts).
fn dcqcn_feedback(extra: &str) -> (u64, u64, u64, u64) {
    let flows = r#"{ src = "a", dst = "r", size = "4MB" }, { src = "b", dst = "r", size = "4MB" }"#;
    let mut sim = build(&star("dcqcn", extra, flows));
    assert_eq!(sim.run(&mut |_| {}), Outcome::Completed);
    let out_of_r = port_between(&sim, "r", "s");
    let cuts = sim
        .nics
        .flows
        .iter()
        .map(|f| match &f.cc {
            AnyCc::Dcqcn(d) => d.cuts,
            _ => panic!("not DCQCN"),
        })
        .sum();
    let c = &sim.ctx.counters;
    (
        sim.fabric.ports[out_of_r].tx_packets,
        c.acks + c.nacks,
        c.cnps,
        cuts,
    )
}

#[test]
fn a_cnp_flag_on_the_ack_replaces_the_cnp_frame() {
    let (frames, acks, cnps, cuts) = dcqcn_feedback("");
    assert!(
        cnps > 0 && cuts > 0,
        "the incast marks and cuts: {cnps} {cuts}"
    );
    assert_eq!(frames, acks + cnps, "CNP frames of their own");
    let (frames, acks, cnps, cuts) = dcqcn_feedback("[transport]\ncnp = \"ack_flag\"");
    assert!(cnps > 0 && cuts > 0, "flags read as CNPs: {cnps} {cuts}");
    assert_eq!(
        frames, acks,
        "no frame but ACKs and NACKs leaves the receiver"
    );
}

/// One HPCC flow of 1 MB a -> r: (INT bytes per data frame on s -> r, bytes per ACK
/// on s -> a, its ideal FCT).
fn int_bytes(extra: &str) -> (u64, u64, u64) {
    let flows = r#"{ src = "a", dst = "r", size = "1MB" }"#;
    let mut sim = build(&star("hpcc", extra, flows));
    assert_eq!(sim.run(&mut |_| {}), Outcome::Completed);
    let (to_r, to_a) = (port_between(&sim, "s", "r"), port_between(&sim, "s", "a"));
    let (to_r, to_a) = (&sim.fabric.ports[to_r], &sim.fabric.ports[to_a]);
    // 1 MB = 244 packets of 4096 B and one of 576 B, each with 58 B of headers.
    assert_eq!(to_r.tx_packets, 245);
    let extra = to_r.tx_bytes - 1_000_000 - 245 * 58;
    assert_eq!(extra % 245, 0, "the same INT bytes on every data frame");
    (extra / 245, to_a.tx_bytes / to_a.tx_packets, sim.ideal[0])
}

#[test]
fn fixed_int_framing_carries_the_whole_header_from_the_nic() {
    let (d, ack, ideal) = int_bytes("");
    // One switch: one 8 B record on the data and on its ACK.
    assert_eq!((d, ack), (8, 64 + 8));
    let (df, ackf, idealf) = int_bytes("[fabric.int]\nframing = \"fixed\"");
    assert_eq!((df, ackf), (42, 64 + 42));
    // The ideal pays the header on both hops now: 34 B more per packet at the
    // bottleneck and a full header on the first hop.
    assert!(idealf > ideal);
}

#[test]
fn the_ns3_profile_sets_every_option_and_the_file_wins() {
    let flows = r#"{ src = "a", dst = "r", size = "2MB" }, { src = "b", dst = "r", size = "2MB" }"#;
    let mut sim = build(&star("dcqcn", "profile = \"ns3\"", flows));
    let p = &sim.ctx.params;
    assert_eq!(p.feedback_prio, p.data_prio);
    assert!(p.cnp_on_ack);
    assert_eq!(p.int_nic_bytes, 42);
    let AnyCc::Dcqcn(d) = &sim.nics.flows[0].cc else {
        panic!("not DCQCN")
    };
    assert_eq!(d.params().cut_on, fabricsim::model::cc::dcqcn::CutOn::Timer);
    assert_eq!(d.params().rmin, 1e9);
    assert_eq!(sim.run(&mut |_| {}), Outcome::Completed);
    // A field the scenario sets itself keeps its value.
    let own = build(&star(
        "dcqcn",
        "profile = \"ns3\"\n[transport]\ncnp = \"frame\"",
        flows,
    ));
    assert!(!own.ctx.params.cnp_on_ack);
    assert_eq!(own.ctx.params.feedback_prio, own.ctx.params.data_prio);
    // Without the profile nothing changes.
    let plain = build(&star("dcqcn", "", flows));
    let p = &plain.ctx.params;
    assert_eq!(
        (p.feedback_prio, p.cnp_on_ack, p.int_nic_bytes),
        (p.ctrl_prio, false, 0)
    );
    // A variant may switch the profile on.
    let src = star("dcqcn", "", flows)
        + "\n[[variants]]\nname = \"ours\"\n[[variants]]\nname = \"ns3\"\nset = { profile = \"ns3\" }\n";
    let l = fabricsim::load_str(&src, "test.toml", Path::new("."), &[]).unwrap();
    let runs = l.expand_variants().unwrap();
    let cnp = |i: usize| runs[i].1.transport.cnp;
    use fabricsim::model::transport::config::CnpForm;
    assert_eq!((cnp(0), cnp(1)), (CnpForm::Frame, CnpForm::AckFlag));
}
