//! `docs/results/nccl-fidelity.md`: nccl-tests' AllReduce bus bandwidth and latency on
//! H100 servers as published, beside `scenarios/nccl-fidelity.toml`'s runs of the same
//! systems.
//!
//! The published figures are constants here, each with where it was published; ours are
//! read from the runs' `nccl_tests.csv`. A second table measures the granularity of
//! NVLink traffic (`scenarios/nvlink-granularity.toml`): completion against the closed
//! form, and events, by packet size. Bands: the targets, 10 % for large
//! messages and 25 % for latency-bound sizes, as "reproduced"; 25 % and 50 % as "within
//! tolerance".

use crate::reproduce::claims::Claim;
use crate::reproduce::table::{f, signed_pct, Table};
use crate::reproduce::{Doc, Generated, Job, Made, Runs};

pub const DOC: Doc = Doc {
    name: "nccl-fidelity",
    file: "docs/results/nccl-fidelity.md",
    source: "pub",
    made: Made::Reproduce {
        fast: true,
        jobs: &[
            Job::plain("fidelity", "scenarios/nccl-fidelity.toml"),
            Job::plain("granularity", "scenarios/nvlink-granularity.toml"),
        ],
        generate,
    },
};

/// One published measurement and the run that models its system.
struct Published {
    /// The scenario's variant.
    run: &'static str,
    /// The system and the run, as published.
    system: &'static str,
    /// Where.
    source: &'static str,
    /// The published range: bus bandwidth (GB/s), or time (us) when `latency`.
    lo: f64,
    hi: f64,
    latency: bool,
}

const PUBLISHED: [Published; 4] = [
    Published {
        run: "ring8",
        system: "8 x H100 SXM, one server, NVLink 4, NCCL_ALGO=RING, 2-4 GiB",
        source: "[nccl#1455](https://github.com/NVIDIA/nccl/issues/1455) (measured, \"365-370 GBps when gpus from 2 to 8\"); [nccl-tests#212](https://github.com/NVIDIA/nccl-tests/issues/212) (maintainer: \"an effective NVLink bandwidth of 370GB/s\")",
        lo: 365.0,
        hi: 370.0,
        latency: false,
    },
    Published {
        run: "nvls8",
        system: "8 x H100 SXM, one server, NVLink SHARP (NVLS), 2-4 GiB",
        source: "[nccl#1455](https://github.com/NVIDIA/nccl/issues/1455) (measured, \"480 GBps\" at 8 GPUs); [nccl-tests#212](https://github.com/NVIDIA/nccl-tests/issues/212) (maintainer: \"a peak busBw of ~480GB/s\")",
        lo: 480.0,
        hi: 480.0,
        latency: false,
    },
    Published {
        run: "ring16",
        system: "2 servers x 8 H100, 400G NDR InfiniBand NIC per GPU, NCCL_ALGO=RING, large sizes",
        source: "[nccl-tests#290](https://github.com/NVIDIA/nccl-tests/issues/290) (maintainer: \"For NDR @ 400Gbps you should see 46-48GB/s per NIC\")",
        lo: 46.0,
        hi: 48.0,
        latency: false,
    },
    Published {
        run: "nvls2",
        system: "2 x H100 of one server, NVLS, 128 B-64 KiB, CUDA graphs",
        source: "[nccl#1259](https://github.com/NVIDIA/nccl/issues/1259) (measured: \"the latency is approximately 6us\")",
        lo: 6.0,
        hi: 6.0,
        latency: true,
    },
];

fn generate(runs: &Runs) -> Result<Generated, String> {
    let job = runs.job("fidelity")?;
    let mut t = Table::new(&[
        "run",
        "system (as published)",
        "band",
        "size",
        "algorithm / protocol (ours)",
        ">published",
        ">ours",
        ">error",
        "source",
    ]);
    let mut claims = Vec::new();
    for p in &PUBLISHED {
        let run = job.run(p.run)?;
        let csv = run.csv("nccl_tests.csv")?;
        // Bandwidth: the largest size's bus bandwidth. Latency: the mean time over the
        // published range of sizes, and each size's row.
        let rows: Vec<usize> = (0..csv.rows.len()).collect();
        let last = *rows.last().ok_or("nccl_tests.csv has no row")?;
        let column = if p.latency { "time_us" } else { "busbw" };
        let ours = if p.latency {
            let mut sum = 0.0;
            for &r in &rows {
                sum += csv.num(r, column)?;
            }
            sum / rows.len() as f64
        } else {
            csv.num(last, column)?
        };
        let mid = (p.lo + p.hi) / 2.0;
        let unit = if p.latency { "us" } else { "GB/s" };
        let published = if p.lo == p.hi {
            format!("~{} {unit}", f(p.lo, 0))
        } else {
            format!("{}-{} {unit}", f(p.lo, 0), f(p.hi, 0))
        };
        let size = |r: usize| -> Result<String, String> {
            let b = csv.num(r, "size")?;
            Ok(if b >= (1u64 << 30) as f64 {
                format!("{} GiB", f(b / (1u64 << 30) as f64, 0))
            } else if b >= (1u64 << 20) as f64 {
                format!("{} MiB", f(b / (1u64 << 20) as f64, 0))
            } else if b >= 1024.0 {
                format!("{} KiB", f(b / 1024.0, 0))
            } else {
                format!("{} B", f(b, 0))
            })
        };
        let proto = format!(
            "{} / {}",
            csv.rows[last][csv.header.iter().position(|h| h == "algorithm").unwrap_or(0)],
            csv.rows[last][csv.header.iter().position(|h| h == "protocol").unwrap_or(0)]
        );
        let band = if p.latency { "latency" } else { "large" };
        let shown: Vec<usize> = if p.latency { rows.clone() } else { vec![last] };
        for &r in &shown {
            let x = csv.num(r, column)?;
            t.row(vec![
                p.run.into(),
                p.system.into(),
                band.into(),
                size(r)?,
                proto.clone(),
                published.clone(),
                format!("{} {unit}", f(x, 1)),
                signed_pct(x / mid - 1.0),
                p.source.into(),
            ]);
        }
        let ours_text = if p.latency {
            format!(
                "{} us (mean over {} to {}, {})",
                f(ours, 1),
                size(0)?,
                size(last)?,
                proto
            )
        } else {
            format!("{} GB/s ({}, {})", f(ours, 1), size(last)?, proto)
        };
        let (close, tol) = if p.latency { (0.25, 0.5) } else { (0.10, 0.25) };
        let claim = format!(
            "AllReduce {} on {}",
            if p.latency { "time" } else { "bus bandwidth" },
            p.system
        );
        claims.push(if p.lo == p.hi {
            Claim::figure(&claim, &published, mid, (ours, ours_text), close, tol)
        } else {
            Claim::range(
                &claim,
                &published,
                p.lo,
                p.hi,
                (ours, ours_text),
                (mid * close, &format!("{:.0} %", close * 100.0)),
            )
        });
    }
    Ok(Generated {
        blocks: vec![
            ("comparison".into(), t.render()),
            ("granularity".into(), granularity(runs)?),
        ],
        claims,
    })
}

/// `scenarios/nvlink-granularity.toml`'s settings, for the closed forms: GPUs per server,
/// servers of the mixed variant, a GPU's NVLink bandwidth (18 x 25 GB/s per direction)
/// and GPU-to-GPU latency, a NIC's bandwidth, and a rail hop's one-way delay (GPU to
/// crossbar 0, two 1 us links, a 300 ns leaf). Sizes per rank as the sweep names them.
const G_GPUS: f64 = 8.0;
const G_SERVERS: f64 = 2.0;
const G_NVLINK: f64 = 450e9;
const G_NVLINK_NS: f64 = 500.0;
const G_NIC: f64 = 50e9;
const G_RAIL_NS: f64 = 2_300.0;
const G_SIZES: [(&str, &str, f64); 2] = [
    ("1MiB", "1 MiB", 1048576.0),
    ("64MiB", "64 MiB", 67108864.0),
];

/// Completion and events of the intra-server ring and the mixed hierarchical AllReduce
/// by packet size, against their closed forms: data over bandwidth (no headers) plus the
/// per-step latencies.
fn granularity(runs: &Runs) -> Result<String, String> {
    let job = runs.job("granularity")?;
    let (g, m) = (G_GPUS, G_SERVERS);
    // Ring over the server's g GPUs: 2(g-1) steps of S/g over NVLink.
    let ring_nv = |s: f64| 2.0 * (g - 1.0) / g * s / G_NVLINK * 1e9 + 2.0 * (g - 1.0) * G_NVLINK_NS;
    // Reduce-scatter and all-gather over NVLink, g-1 steps each, around a ring of each
    // GPU's shard S/g over m servers on its rail.
    let mixed = |s: f64| {
        ring_nv(s) + 2.0 * (m - 1.0) / m * (s / g) / G_NIC * 1e9 + 2.0 * (m - 1.0) * G_RAIL_NS
    };
    let mut t = Table::new(&[
        "variant",
        ">size per rank",
        ">packet payload",
        ">completion (us)",
        ">closed form (us)",
        ">error",
        ">events",
        ">events / 4 KiB's",
    ]);
    for variant in ["intra", "mixed"] {
        for (size, label, bytes) in G_SIZES {
            let closed = if variant == "intra" {
                ring_nv(bytes)
            } else {
                mixed(bytes)
            };
            let name = |mtu: u32| format!("{variant}-size={size}-mtu={mtu}");
            let base = job.run(&name(4096))?.num("speed.events")?;
            for mtu in [1024u32, 4096, 16384, 65536] {
                let r = job.run(&name(mtu))?;
                let jct = r.num("jobs.jct_max_ns")?;
                let events = r.num("speed.events")?;
                t.row(vec![
                    variant.into(),
                    label.into(),
                    format!("{} KiB", mtu / 1024),
                    f(jct / 1e3, 1),
                    f(closed / 1e3, 1),
                    format!("{:+.1} %", (jct / closed - 1.0) * 100.0),
                    crate::reproduce::table::int(events),
                    f(events / base, 2),
                ]);
            }
        }
    }
    Ok(t.render())
}
