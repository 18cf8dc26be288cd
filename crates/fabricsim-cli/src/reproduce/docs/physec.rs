//! `docs/results/physec.md`: document 000's PHYSec claims (about 100 ns of latency, no
//! user-bandwidth overhead) against the reference implementation's framing
//! (`crates/physec`'s overhead model) and against MACsec and IPsec in the simulator,
//! `scenarios/security-overhead.toml`.

use crate::reproduce::claims::Claim;
use crate::reproduce::table::{f, pct, Table};
use crate::reproduce::{Doc, Generated, Job, Made, Runs};
use physec::overhead::{
    per_frame_overhead_fraction, ChannelOverhead, IPSEC_ESP_TUNNEL_BYTES_PER_PACKET,
    MACSEC_BYTES_PER_FRAME, MODELLED_LATENCY_NS,
};

pub const DOC: Doc = Doc {
    name: "physec",
    file: "docs/results/physec.md",
    source: "000",
    made: Made::Reproduce {
        fast: true,
        jobs: &[Job::plain("security", "scenarios/security-overhead.toml")],
        generate,
    },
};

/// Segment lengths (plaintext blocks) of the overhead table; 1024 is the simulator's
/// default (`fabric.security.physec_segment_blocks`).
const SEGMENTS: [u64; 4] = [64, 256, 1024, 4096];
const SIM_SEGMENT: u64 = 1024;

/// Frame sizes of the per-frame comparison: minimum, classic MTU, a GSE NIC packet, jumbo.
const FRAMES: [(u32, &str); 4] = [
    (64, "64 B"),
    (1500, "1500 B"),
    (4096, "4096 B (GSE NIC packet)"),
    (9216, "9216 B"),
];

const MODES: [&str; 4] = ["none", "macsec", "ipsec", "physec"];
const PAYLOADS: [u32; 7] = [64, 128, 256, 512, 1024, 2048, 4096];

fn generate(runs: &Runs) -> Result<Generated, String> {
    let mut blocks = Vec::new();
    let mut claims = Vec::new();

    // Channel-level framing per segment, from the reference implementation's model.
    let mut t = Table::new(&[
        ">K",
        ">line blocks",
        ">overhead blocks",
        ">overhead % of line rate",
        ">segment time at 100G (ns)",
        ">at 400G (ns)",
    ]);
    for k in SEGMENTS {
        let o = ChannelOverhead::for_segment(k);
        t.row(vec![
            k.to_string(),
            o.line_blocks().to_string(),
            o.overhead_blocks.to_string(),
            pct(o.overhead_fraction(), 2),
            f(o.segment_time_ns(100.0), 1),
            f(o.segment_time_ns(400.0), 1),
        ]);
    }
    blocks.push(("overhead".into(), t.render()));

    // Fraction of line rate each scheme takes, frame by frame.
    let sim = ChannelOverhead::for_segment(SIM_SEGMENT);
    let mut t = Table::new(&[
        "frame size",
        ">PHYSec channel K=1024",
        ">MACsec +32 B/frame",
        ">IPsec ESP tunnel +73 B/packet",
    ]);
    for (bytes, label) in FRAMES {
        t.row(vec![
            label.into(),
            pct(sim.overhead_fraction(), 2),
            pct(per_frame_overhead_fraction(bytes, MACSEC_BYTES_PER_FRAME), 2),
            pct(
                per_frame_overhead_fraction(bytes, IPSEC_ESP_TUNNEL_BYTES_PER_PACKET),
                2,
            ),
        ]);
    }
    blocks.push(("per-frame".into(), t.render()));

    // The simulator: one 8 MB flow per mode and payload.
    let job = runs.job("security")?;
    let mut t = Table::new(&[
        ">payload B",
        ">none Gbps",
        ">MACsec Gbps",
        ">IPsec Gbps",
        ">PHYSec Gbps",
        ">none FCT us",
        ">MACsec FCT us",
        ">IPsec FCT us",
        ">PHYSec FCT us",
    ]);
    let mut goodput = std::collections::BTreeMap::new();
    for p in PAYLOADS {
        let mut g = Vec::new();
        let mut fct = Vec::new();
        for m in MODES {
            let r = job.run(&format!("{m}-payload={p}"))?;
            let v = r.num("flows.goodput_gbps")?;
            goodput.insert((m, p), v);
            g.push(f(v, 2));
            fct.push(f(r.num("flows.fct_mean_ns")? / 1e3, 1));
        }
        let mut row = vec![p.to_string()];
        row.extend(g);
        row.extend(fct);
        t.row(row);
    }
    blocks.push(("simulator".into(), t.render()));

    let cost = |m: &str, p: u32| 1.0 - goodput[&(m, p)] / goodput[&("none", p)];
    let big = *PAYLOADS.last().expect("payloads");
    claims.push(Claim::bound(
        "PHYSec costs no user bandwidth",
        "no overhead",
        0.0,
        true,
        (
            cost("physec", big),
            format!(
                "{} of goodput at {big} B payload ({} of line rate for the 1024-block segments' framing)",
                pct(cost("physec", big), 1),
                pct(sim.overhead_fraction(), 2)
            ),
        ),
        (0.005, "0.5 pt"),
    ));
    let small = PAYLOADS[0];
    claims.push(Claim::direction(
        "MACsec and IPsec cost per-frame tags; PHYSec, below the MAC, does not",
        "per-frame cost for MACsec / IPsec",
        format!(
            "goodput lost at {small} B payload: MACsec {}, IPsec {}, PHYSec {}",
            pct(cost("macsec", small), 1),
            pct(cost("ipsec", small), 1),
            pct(cost("physec", small), 1)
        ),
        cost("macsec", small) > cost("physec", small)
            && cost("ipsec", small) > cost("macsec", small),
    ));
    // A receiver that verifies before it delivers holds a whole segment.
    let held = sim.added_latency_ns(100.0, 0.0);
    claims.push(Claim::figure(
        "PHYSec adds about 100 ns of latency (a receiver that authenticates a 1024-block segment before delivering it, at 100G)",
        "~100 ns",
        MODELLED_LATENCY_NS as f64,
        (
            held,
            format!("{} ns (the segment's time on the line, crypto not counted)", f(held, 0)),
        ),
        0.25,
        0.5,
    ));

    Ok(Generated { blocks, claims })
}
