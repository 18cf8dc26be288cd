//! `docs/results/nccl-segments.md`: the 128-GPU AllReduce of `scenarios/nccl-tests.toml`
//! at 256 MiB to 1 GiB per rank, its transfers cut in packets of 4 KiB or in segments of
//! 16 and 64 KiB (`scenarios/nccl-segments.toml`): completion, bus bandwidth and events,
//! each against the packets'. The measurement behind `segment = "auto"`
//! (`model/workload/collective/segment.rs`).

use crate::reproduce::table::{f, int, Table};
use crate::reproduce::{Doc, Generated, Job, Made, Runs};

pub const DOC: Doc = Doc {
    name: "nccl-segments",
    file: "docs/results/nccl-segments.md",
    source: "-",
    made: Made::Reproduce {
        fast: false,
        jobs: &[Job::plain("segments", "scenarios/nccl-segments.toml")],
        generate,
    },
};

/// The sweep's sizes (name, bytes) and segments (name, payload bytes), as the scenario
/// names them; the first segment is the packets themselves.
const SIZES: [(&str, f64); 3] = [
    ("256MiB", 268_435_456.0),
    ("512MiB", 536_870_912.0),
    ("1GiB", 1_073_741_824.0),
];
const SEGMENTS: [(&str, f64); 3] = [("4KiB", 4096.0), ("16KiB", 16384.0), ("64KiB", 65536.0)];
/// The scenario's `chunks` (its servers and GPUs are read from each run's settings).
const CHUNKS: f64 = 4.0;

fn generate(runs: &Runs) -> Result<Generated, String> {
    let job = runs.job("segments")?;
    let mut t = Table::new(&[
        ">size per rank",
        ">frame payload",
        "algorithm / protocol",
        ">smallest transfer / frame",
        ">time (us)",
        ">bus bandwidth (GB/s)",
        ">time against 4 KiB packets",
        ">events",
        ">events / 4 KiB's",
    ]);
    for (size, bytes) in SIZES {
        let name = |seg: &str| format!("nccl-segments-size={size}-segment={seg}");
        let base = job.run(&name(SEGMENTS[0].0))?;
        let base_csv = base.csv("nccl_tests.csv")?;
        let base_time = base_csv.num(0, "time_us")?;
        let base_events = base.num("speed.events")?;
        for (seg, payload) in SEGMENTS {
            let r = job.run(&name(seg))?;
            let csv = r.csv("nccl_tests.csv")?;
            let col = |c: &str| -> Result<String, String> {
                let i = (csv.header.iter().position(|h| h == c))
                    .ok_or_else(|| format!("nccl_tests.csv has no `{c}`"))?;
                Ok(csv.rows[0][i].clone())
            };
            // The smallest transfers of NVLS across servers are the rails' ring steps:
            // each chunk's shard (1/g of it) in m pieces.
            let setting = |p: &str| -> Result<f64, String> {
                let v = r.setting(p)?;
                v.parse::<f64>().map_err(|e| format!("{p} = {v}: {e}"))
            };
            let step = bytes / CHUNKS
                / setting("topology.gpus_per_server")?
                / setting("topology.servers")?;
            let time = csv.num(0, "time_us")?;
            let events = r.num("speed.events")?;
            t.row(vec![
                size.replace("MiB", " MiB").replace("GiB", " GiB"),
                format!("{} KiB", payload / 1024.0),
                format!("{} / {}", col("algorithm")?, col("protocol")?),
                f(step / payload, 0),
                f(time, 1),
                f(csv.num(0, "busbw")?, 1),
                // Rounded first, and `+ 0.0`, so that a difference that rounds to
                // nothing reads "+0.00 %", not "-0.00 %".
                format!(
                    "{:+.2} %",
                    ((time / base_time - 1.0) * 1e4).round() / 100.0 + 0.0
                ),
                int(events),
                f(events / base_events, 2),
            ]);
        }
    }
    Ok(Generated {
        blocks: vec![("segments".into(), t.render())],
        claims: Vec::new(),
    })
}
