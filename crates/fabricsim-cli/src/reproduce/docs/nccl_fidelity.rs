//! `docs/results/nccl-fidelity.md`: nccl-tests' AllReduce bus bandwidth and latency on
//! H100 servers as published, beside `scenarios/nccl-fidelity.toml`'s runs of the same
//! systems.
//!
//! The published figures are constants here, each with where it was published; ours are
//! read from the runs' `nccl_tests.csv`. A whole published size sweep of two H100
//! servers is compared size by size, with the error summarised per band of sizes
//! (latency-bound, mid, large). A further table measures the granularity of NVLink
//! traffic (`scenarios/nvlink-granularity.toml`): completion against the closed form, and
//! events, by packet size. Bands: the fidelity targets, 10 % for large messages and 25 %
//! for latency-bound (and mid) sizes, as "reproduced"; 25 % and 50 % as "within
//! tolerance".

use crate::reproduce::claims::Claim;
use crate::reproduce::table::{f, signed_pct, Table};
use crate::reproduce::{Doc, Generated, Job, Made, Runs};
use fabricsim::model::workload::collective::select::{LL128_MAX, LL_MAX};

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
        let size = |r: usize| -> Result<String, String> { Ok(size_text(csv.num(r, "size")?)) };
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
    let (per_size, bands) = sweep(runs, &mut claims)?;
    Ok(Generated {
        blocks: vec![
            ("comparison".into(), t.render()),
            ("sweep".into(), per_size),
            ("bands".into(), bands),
            ("granularity".into(), granularity(runs)?),
        ],
        claims,
    })
}

/// A size in bytes as nccl-tests' sizes read: B, KiB, MiB, GiB.
fn size_text(b: f64) -> String {
    if b >= (1u64 << 30) as f64 {
        format!("{} GiB", f(b / (1u64 << 30) as f64, 0))
    } else if b >= (1u64 << 20) as f64 {
        format!("{} MiB", f(b / (1u64 << 20) as f64, 0))
    } else if b >= 1024.0 {
        format!("{} KiB", f(b / 1024.0, 0))
    } else {
        format!("{} B", f(b, 0))
    }
}

/// The system of the published sweep, and the sweep itself.
const SWEEP_SYSTEM: &str = "2 servers x 8 H100 SXM, one 400G InfiniBand NIC per GPU (Nebius gpu-h100-sxm), NCCL's own algorithm and protocol, 8 B-8 GiB";
const SWEEP_SOURCE: &str = "[dstack, examples/clusters/nebius/README.md](https://github.com/dstackai/dstack/blob/107fefef52821c544abe1755d9379fe9ed54a96c/examples/clusters/nebius/README.md) (nccl-tests' `all_reduce_perf -b 8 -e 8G -f 2 -g 1`, 2 nodes of 8 GPUs, out-of-place columns)";
const SWEEP_SYSTEM_SOURCE: &str = "[SkyPilot, examples/nebius_infiniband/README.md](https://github.com/skypilot-org/skypilot/blob/179881e1cfc2418c3947a77611256c04a10f51db/examples/nebius_infiniband/README.md) (gpu-h100-sxm: 8 InfiniBand HCAs `mlx5_0`-`mlx5_7` a VM; `ib_send_bw` over one runs faster than a 200G HCA can)";

/// nccl-tests' AllReduce on the system above, as published (`SWEEP_SOURCE`): size (B),
/// time (us) and bus bandwidth (GB/s) of the out-of-place columns, every row.
const SWEEP: [(u64, f64, f64); 31] = [
    (8, 45.72, 0.00),
    (16, 29.92, 0.00),
    (32, 30.10, 0.00),
    (64, 34.48, 0.00),
    (128, 30.38, 0.01),
    (256, 30.48, 0.02),
    (512, 30.45, 0.03),
    (1024, 31.36, 0.06),
    (2048, 32.27, 0.12),
    (4096, 36.04, 0.21),
    (8192, 37.24, 0.41),
    (16384, 37.22, 0.83),
    (32768, 43.82, 1.40),
    (65536, 37.85, 3.25),
    (131072, 43.10, 5.70),
    (262144, 58.59, 8.39),
    (524288, 97.88, 10.04),
    (1048576, 87.08, 22.58),
    (2097152, 99.06, 39.69),
    (4194304, 110.14, 71.40),
    (8388608, 154.48, 101.82),
    (16777216, 210.33, 149.56),
    (33554432, 274.23, 229.43),
    (67108864, 472.43, 266.35),
    (134217728, 759.58, 331.31),
    (268435456, 1305.66, 385.49),
    (536870912, 2379.38, 423.06),
    (1073741824, 4511.97, 446.21),
    (2147483648, 8776.26, 458.80),
    (4294967296, 17407.8, 462.61),
    (8589934592, 34448.4, 467.54),
];

/// A band of sizes: its name, its largest size (bytes), what its error compares and the
/// fidelity target on the median |error| (with the slack past it still "within
/// tolerance"). Latency-bound: up to our table's LL sizes, where time is what matters;
/// mid: up to its LL128 sizes, where NCCL switches algorithm and protocol; large: beyond.
struct Band {
    name: &'static str,
    max: u64,
    time: bool,
    target: f64,
    slack: f64,
}

const BANDS: [Band; 3] = [
    Band {
        name: "latency",
        max: LL_MAX,
        time: true,
        target: 0.25,
        slack: 0.25,
    },
    Band {
        name: "mid",
        max: LL128_MAX,
        time: false,
        target: 0.25,
        slack: 0.25,
    },
    Band {
        name: "large",
        max: u64::MAX,
        time: false,
        target: 0.10,
        slack: 0.15,
    },
];

/// The median of `xs` (not empty).
fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(|a, b| a.total_cmp(b));
    let n = xs.len();
    if n % 2 == 1 {
        xs[n / 2]
    } else {
        (xs[n / 2 - 1] + xs[n / 2]) / 2.0
    }
}

/// The published sweep beside the `sweep16` run, size by size, and the error per band
/// (time for latency-bound sizes, bus bandwidth beyond), with a claim per band.
fn sweep(runs: &Runs, claims: &mut Vec<Claim>) -> Result<(String, String), String> {
    let csv = runs.job("fidelity")?.run("sweep16")?.csv("nccl_tests.csv")?;
    let cell = |r: usize, c: &str| -> Result<String, String> {
        let i = csv
            .header
            .iter()
            .position(|h| h == c)
            .ok_or(format!("nccl_tests.csv: no column `{c}`"))?;
        Ok(csv.rows[r][i].clone())
    };
    let mut t = Table::new(&[
        "size",
        "band",
        "algorithm / protocol (ours)",
        ">time published (us)",
        ">time ours (us)",
        ">busbw published (GB/s)",
        ">busbw ours (GB/s)",
        ">error",
    ]);
    // Per band: (size, error) of each size.
    let mut errors: Vec<Vec<(u64, f64)>> = vec![Vec::new(); BANDS.len()];
    for &(size, time, busbw) in &SWEEP {
        let r = csv.find("size", &size.to_string())?;
        let (our_time, our_busbw) = (csv.num(r, "time_us")?, csv.num(r, "busbw")?);
        let b = BANDS
            .iter()
            .position(|b| size <= b.max)
            .unwrap_or(BANDS.len() - 1);
        // Time where published busbw rounds to nothing; bus bandwidth (the same ratio
        // inverted) beyond.
        let err = if BANDS[b].time {
            our_time / time - 1.0
        } else {
            our_busbw / busbw - 1.0
        };
        errors[b].push((size, err));
        t.row(vec![
            size_text(size as f64),
            BANDS[b].name.into(),
            format!("{} / {}", cell(r, "algorithm")?, cell(r, "protocol")?),
            f(time, 1),
            f(our_time, 1),
            f(busbw, 2),
            f(our_busbw, 2),
            signed_pct(err),
        ]);
    }
    let mut s = Table::new(&[
        "band",
        "sizes",
        "error of",
        ">sizes compared",
        ">median error",
        ">median abs. error",
        ">largest abs. error",
        ">target",
    ]);
    for (band, errs) in BANDS.iter().zip(&errors) {
        let (lo, hi) = (errs[0].0, errs[errs.len() - 1].0);
        let sizes = format!("{}-{}", size_text(lo as f64), size_text(hi as f64));
        let med = median(errs.iter().map(|e| e.1).collect());
        let med_abs = median(errs.iter().map(|e| e.1.abs()).collect());
        let worst = errs
            .iter()
            .copied()
            .max_by(|a, b| a.1.abs().total_cmp(&b.1.abs()))
            .ok_or("a band without sizes")?;
        let what = if band.time { "time" } else { "bus bandwidth" };
        s.row(vec![
            band.name.into(),
            sizes.clone(),
            what.into(),
            errs.len().to_string(),
            signed_pct(med),
            format!("{:.0} %", med_abs * 100.0),
            format!(
                "{} ({})",
                signed_pct(worst.1),
                size_text(worst.0 as f64)
            ),
            format!("{:.0} %", band.target * 100.0),
        ]);
        claims.push(Claim::bound(
            &format!(
                "AllReduce {what} per size on {SWEEP_SYSTEM}: {} band ({sizes})",
                band.name
            ),
            &format!(
                "the published table; median abs. error at most {:.0} %",
                band.target * 100.0
            ),
            band.target,
            true,
            (
                med_abs,
                format!(
                    "median abs. error {:.0} % (largest {} at {})",
                    med_abs * 100.0,
                    signed_pct(worst.1),
                    size_text(worst.0 as f64)
                ),
            ),
            (band.slack, &format!("{:.0} %", band.slack * 100.0)),
        ));
    }
    let head = format!(
        "{SWEEP_SYSTEM}. Published: {SWEEP_SOURCE}; the system: {SWEEP_SYSTEM_SOURCE}.\n\n"
    );
    Ok((head + &t.render(), s.render()))
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
