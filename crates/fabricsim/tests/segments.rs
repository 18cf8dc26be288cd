//! A collective's transfers in segments larger than `transport.mtu`
//! (`model::workload::collective::segment`): the store-and-forward pipeline of a
//! segment is exact, a segment carries the headers of the packets it stands for, and
//! a lossless fabric stays lossless with frames of 64 KiB.

mod common;

use fabricsim::analysis::invariants;
use fabricsim::base::units::{ser_time, NS, US};
use fabricsim::output::fct;
use fabricsim::sim::{Outcome, Simulation};
use std::path::Path;

fn run(src: &str) -> Simulation {
    let l = fabricsim::load_str(src, "test.toml", Path::new("."), &[]).expect("loads");
    let mut sim = Simulation::build(&l.scenario, "test.toml", Path::new(".")).expect("builds");
    assert_eq!(sim.run(&mut |_| {}), Outcome::Completed);
    let bad = invariants::check(&sim);
    assert!(bad.is_empty(), "invariants violated: {bad:#?}");
    sim
}

/// `common::two_leaf` without congestion control; `workload` is a collective's settings.
fn two_leaf(workload: &str, extra: &str) -> String {
    common::two_leaf(
        &format!("{extra}\n[cc]\nalgorithm = \"none\""),
        &format!("kind = \"collective\"\n{workload}"),
    )
}

/// One transfer across leaf, spine, leaf (host 0 to host 2): the pipeline of
/// `physics.rs`'s exact FCT with frames of a segment, each carrying one header per 4 KiB
/// packet it stands for.
#[test]
fn a_segmented_transfer_pipelines_exactly_with_the_headers_of_its_packets() {
    let (mtu, hdr, rate, h) = (4096u64, 58u64, 100_000_000_000u64, 4u64);
    for (seg, size) in [(16384u64, 1_000_000u64), (65536, 1_000_000), (16384, 5000)] {
        let sim = run(&two_leaf(
            &format!("collective = \"p2p\"\nhosts = [0, 2]\nsize = {size}\nsegment = {seg}"),
            "",
        ));
        let n = size.div_ceil(seg);
        let last_payload = size - (n - 1) * seg;
        let full = ser_time(seg + seg / mtu * hdr, rate);
        let last = ser_time(last_payload + last_payload.div_ceil(mtu) * hdr, rate);
        let expect = if n == 1 {
            h * last
        } else {
            (n + h - 2) * full + last
        } + h * US
            + (h - 1) * 300 * NS;
        assert_eq!(fct(&sim, 0), Some(expect), "segment {seg}, size {size}");
        assert_eq!(sim.nics.flows[0].data_pkts_sent, n);
        // The host's port carried the packets' bytes: payload plus a header per packet.
        let port = sim.nics.hosts[0].port.idx();
        let data = size + size.div_ceil(mtu) * hdr;
        assert_eq!(
            sim.fabric.ports[port].tx_bytes, data,
            "segment {seg}, size {size}"
        );
    }
}

/// `auto` below its message threshold is packets: the same flows, byte for byte.
#[test]
fn auto_below_its_threshold_is_packets() {
    let w = "collective = \"allreduce\"\nalgorithm = \"ring\"\nsizes = { min = \"1KiB\", max = \"4MiB\", factor = 64 }\nchunks = 2";
    let packets = run(&two_leaf(w, ""));
    let auto = run(&two_leaf(&format!("{w}\nsegment = \"auto\""), ""));
    assert_eq!(
        fabricsim::output::flows_csv(&packets),
        fabricsim::output::flows_csv(&auto)
    );
}

/// Frames of 64 KiB and their headers through PFC: an all-to-all of 4 hosts (three into
/// each receiver) pauses and drops nothing, the headroom being sized for the largest
/// segment.
#[test]
fn pfc_stays_lossless_with_64_kib_segments() {
    let sim = run(&two_leaf(
        "collective = \"alltoall\"\nsize = \"3MiB\"\nsegment = \"64KiB\"",
        "buffer = \"2MiB\"",
    ));
    let c = &sim.ctx.counters;
    assert_eq!(c.drops, 0, "PFC must hold every frame");
    assert!(c.pfc_frames > 0, "the incasts should have paused");
    for f in &sim.nics.flows {
        assert_eq!(f.data_pkts_sent, f.spec.size.div_ceil(65536), "no resend");
    }
}
