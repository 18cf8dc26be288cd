//! `docs/results/gse-vs-roce.md`: document 000 (GSE), Figures 11 and 12, JCT of
//! collectives on RoCE and on GSE, beside `scenarios/gse-vs-roce.toml` and
//! `scenarios/gse-ablation.toml`, and over the document's other readings (hashing,
//! DCQCN profile, collective algorithm, uplinks; 5 seeds a point) beside
//! `scenarios/gse-vs-roce-readings.toml` (600 runs).

use crate::reproduce::claims::Claim;
use crate::reproduce::data::Csv;
use crate::reproduce::table::{f, ms, Table};
use crate::reproduce::{Doc, Generated, Job, Made, Runs};

pub const DOC: Doc = Doc {
    name: "gse-vs-roce",
    file: "docs/results/gse-vs-roce.md",
    source: "000",
    made: Made::Reproduce {
        fast: false,
        jobs: &[
            Job {
                name: "jct",
                scenario: "scenarios/gse-vs-roce.toml",
                set: &[],
                seed: None,
            },
            Job {
                name: "ablation",
                scenario: "scenarios/gse-ablation.toml",
                set: &[],
                seed: None,
            },
            Job {
                name: "readings",
                scenario: "scenarios/gse-vs-roce-readings.toml",
                set: &[],
                seed: None,
            },
            Job {
                name: "nic",
                scenario: "scenarios/gse-vs-roce-nic.toml",
                set: &[],
                seed: None,
            },
        ],
        generate,
    },
};

const SIZES: [&str; 10] = [
    "1MiB", "2MiB", "4MiB", "8MiB", "16MiB", "32MiB", "64MiB", "128MiB", "256MiB", "512MiB",
];

fn uplinks(u: &str) -> &'static str {
    if u == "400Gbps" {
        "1 x 400G per spine"
    } else {
        "4 x 100G per spine"
    }
}

fn generate(runs: &Runs) -> Result<Generated, String> {
    let mut claims = Vec::new();
    let mut blocks = Vec::new();
    let jct = runs.job("jct")?.csv("jct.csv")?;
    let row = |c: &str, s: &str, u: &str, size: &str| {
        jct.find_all(&[("collective", c), ("speedup", s), ("uplink", u), ("size", size)])
    };
    let mut head = Table::new(&[
        "collective",
        "speedup",
        "uplinks",
        ">RoCE mean JCT (ms)",
        ">GSE mean JCT (ms)",
        ">RoCE/GSE mean",
        ">RoCE/GSE max",
        "document",
    ]);
    let mut full = String::new();
    let mut best = std::collections::BTreeMap::new();
    for c in ["alltoall", "ring_allreduce"] {
        for u in ["400Gbps", "100Gbps"] {
            for s in ["1.5", "2.0"] {
                let r = row(c, s, u, "512MiB")?;
                let doc = if c == "alltoall" { "~3.5x" } else { "~2.6x" };
                let (rm, gm) = (jct.num(r, "roce_jct_mean_ns")?, jct.num(r, "gse_jct_mean_ns")?);
                let ratio = jct.num(r, "ratio_mean_roce_over_gse")?;
                let e = best.entry(c).or_insert((0.0f64, String::new()));
                if ratio > e.0 {
                    *e = (ratio, format!("{s}:1, {}", uplinks(u)));
                }
                head.row(vec![
                    c.into(),
                    format!("{s}:1"),
                    uplinks(u).into(),
                    ms(rm, 1),
                    ms(gm, 1),
                    f(ratio, 2),
                    f(jct.num(r, "ratio_max_roce_over_gse")?, 2),
                    doc.into(),
                ]);
                let mut t = Table::new(&[
                    "size",
                    ">RoCE mean",
                    ">RoCE max",
                    ">GSE mean",
                    ">GSE max",
                    ">lower bound",
                    ">RoCE/GSE mean",
                    ">RoCE/GSE max",
                ]);
                for size in SIZES {
                    let Ok(r) = row(c, s, u, size) else { continue };
                    let lb = jct.num(r, "lower_bound_ns")?;
                    let gmax = jct.num(r, "gse_jct_max_ns")?;
                    t.row(vec![
                        size.into(),
                        ms(jct.num(r, "roce_jct_mean_ns")?, 3),
                        ms(jct.num(r, "roce_jct_max_ns")?, 3),
                        ms(jct.num(r, "gse_jct_mean_ns")?, 3),
                        ms(gmax, 3),
                        ms(lb, 3),
                        f(jct.num(r, "ratio_mean_roce_over_gse")?, 2),
                        f(jct.num(r, "ratio_max_roce_over_gse")?, 2),
                    ]);
                }
                full.push_str(&format!("**{c}, speedup {s}:1, {}**\n\n", uplinks(u)));
                full.push_str(&t.render());
                full.push('\n');
            }
        }
    }
    blocks.push(("headline".into(), head.render()));
    blocks.push(("full".into(), full.trim_end().to_string() + "\n"));
    let readings = runs.job("readings")?.csv("jct.csv")?;
    let (r_blocks, mut r_best) = readings_tables(&readings)?;
    blocks.extend(r_blocks);
    let (nic_block, nic_best) = nic_table(&runs.job("nic")?.csv("jct.csv")?)?;
    blocks.push(nic_block);
    r_best.push(nic_best);
    for (c, doc, x) in [("alltoall", "~3.5x", 3.5), ("ring_allreduce", "~2.6x", 2.6)] {
        let (mut ratio, mut at) = best[c].clone();
        // The readings: AlltoAll at once or pairwise; ring or halving-doubling.
        for (k, (r, w)) in &r_best {
            let family = if k.starts_with("alltoall") { "alltoall" } else { "ring_allreduce" };
            if family == c && *r > ratio {
                ratio = *r;
                at = w.clone();
            }
        }
        claims.push(Claim::figure(
            &format!(
                "GSE speeds up {c} at 512 MB (RoCE/GSE mean JCT, the best of our readings)"
            ),
            doc,
            x,
            (ratio, format!("{}x ({at})", f(ratio, 2))),
            0.10,
            0.30,
        ));
    }
    // Does the gap widen with the message size where ECMP has thin paths?
    let mut widens = true;
    let mut seen = Vec::new();
    for c in ["alltoall", "ring_allreduce"] {
        for sp in ["1.5", "2.0"] {
            let small = jct.num(row(c, sp, "100Gbps", "1MiB")?, "ratio_mean_roce_over_gse")?;
            let big = jct.num(row(c, sp, "100Gbps", "512MiB")?, "ratio_mean_roce_over_gse")?;
            widens &= big > small;
            seen.push(format!("{} -> {}", f(small, 2), f(big, 2)));
        }
    }
    claims.push(Claim::direction(
        "JCT grows with the message size for both, faster for RoCE",
        "RoCE's grows faster",
        format!(
            "RoCE/GSE mean from 1 MiB to 512 MiB over 100G members: {}",
            seen.join(", ")
        ),
        widens,
    ));

    // Ablation.
    let ab = runs.job("ablation")?;
    let mut t = Table::new(&[
        "load balancing",
        ">AlltoAll, 3 x 400G",
        ">AlltoAll, 12 x 100G",
        ">AllReduce, 3 x 400G",
        ">AllReduce, 12 x 100G",
    ]);
    for (v, label) in [
        ("ecmp", "ECMP + PFC + DCQCN"),
        ("spray", "per-packet spray (round robin) + PFC + DCQCN"),
        ("pktc", "PKTC, no scheduling"),
        ("pktc_dgsq", "PKTC + DGSQ"),
    ] {
        let mut cells = vec![label.to_string()];
        for c in ["alltoall", "ring_allreduce"] {
            for u in ["400Gbps", "100Gbps"] {
                let r = ab.run(&format!("{v}-collective={c}-uplink={u}"))?;
                cells.push(format!(
                    "{} / {}",
                    ms(r.num("jobs.jct_mean_ns")?, 2),
                    ms(r.num("jobs.jct_max_ns")?, 2)
                ));
            }
        }
        t.row(cells);
    }
    blocks.push(("ablation".into(), t.render()));
    Ok(Generated { blocks, claims })
}

/// `gse-vs-roce-nic.toml`: AlltoAll at 512 MiB over 4 x 100G members, RoCE/GSE mean and
/// max JCT ratios per NIC scheduler quantum and DCQCN defaults, and the best mean ratio.
fn nic_table(j: &Csv) -> Result<((String, String), BestOf), String> {
    let pm = |m: f64, ci: f64| format!("{} ± {}", f(m, 2), f(ci, 2));
    let mut t = Table::new(&[
        "qp_burst",
        ">DCQCN ns-3: mean (max)",
        ">DCQCN NIC defaults: mean (max)",
        ">GSE mean JCT (ms)",
        "document",
    ]);
    let mut top = (0.0f64, String::new());
    for (burst, label) in [
        ("0", "one packet"),
        ("64KiB", "64 KiB"),
        ("1MiB", "1 MiB"),
        ("16MiB", "16 MiB"),
    ] {
        let r = j.find_all(&[("qp_burst", burst)])?;
        let mut cells = vec![label.to_string()];
        for (v, what) in [("roce", "DCQCN ns-3"), ("roce-nic", "DCQCN NIC defaults")] {
            let m = j.num(r, &format!("ratio_mean_{v}_over_gse"))?;
            if m > top.0 {
                top = (
                    m,
                    format!("alltoall, 4x100G, qp_burst {label}, {what}, mean of 5 seeds"),
                );
            }
            cells.push(format!(
                "{} ({})",
                pm(m, j.num(r, &format!("ratio_mean_ci95_{v}_over_gse"))?),
                pm(
                    j.num(r, &format!("ratio_max_{v}_over_gse"))?,
                    j.num(r, &format!("ratio_max_ci95_{v}_over_gse"))?
                )
            ));
        }
        cells.push(ms(j.num(r, "gse_jct_mean_ns")?, 2));
        cells.push("~3.5x".into());
        t.row(cells);
    }
    Ok((("nic".to_string(), t.render()), ("alltoall".to_string(), top)))
}

/// The RoCE readings of `gse-vs-roce-readings.toml`, as its variants name them.
const READINGS: [(&str, &str); 4] = [
    ("roce", "ideal hash, DCQCN ns-3"),
    ("roce-polar", "polarised hash, DCQCN ns-3"),
    ("roce-paper", "ideal hash, DCQCN paper"),
    ("roce-polar-paper", "polarised hash, DCQCN paper"),
];

const COLLECTIVES: [(&str, &str); 4] = [
    ("alltoall", "~3.5x"),
    ("alltoall_pairwise", "~3.5x"),
    ("ring", "~2.6x"),
    ("halving_doubling", "~2.6x"),
];

/// The readings' tables from their `jct.csv` (means and 95 % half-widths over the seeds),
/// and per collective the best 512 MiB mean ratio with where it was reached.
type Best = Vec<BestOf>;
/// A collective and its best 512 MiB mean ratio with where it was reached.
type BestOf = (String, (f64, String));

fn readings_tables(j: &Csv) -> Result<(Vec<(String, String)>, Best), String> {
    let pm = |m: f64, ci: f64, d: usize| format!("{} ± {}", f(m, d), f(ci, d));
    let row = |c: &str, u: &str, size: &str| {
        j.find_all(&[("collective", c), ("uplinks", u), ("size", size)])
    };
    let ratio = |r: usize, v: &str, what: &str| -> Result<(f64, f64), String> {
        Ok((
            j.num(r, &format!("ratio_{what}_{v}_over_gse"))?,
            j.num(r, &format!("ratio_{what}_ci95_{v}_over_gse"))?,
        ))
    };
    let mut blocks = Vec::new();
    let mut best: Best = Vec::new();
    let mut t = Table::new(&[
        "collective",
        "uplinks",
        ">ideal hash, DCQCN ns-3",
        ">polarised hash, DCQCN ns-3",
        ">ideal hash, DCQCN paper",
        ">polarised hash, DCQCN paper",
        "document",
    ]);
    for (c, doc) in COLLECTIVES {
        let mut top = (0.0f64, String::new());
        for u in ["1x400G", "4x100G"] {
            let r = row(c, u, "512MiB")?;
            let mut cells = vec![c.to_string(), u.to_string()];
            for (v, label) in READINGS {
                let (m, ci) = ratio(r, v, "mean")?;
                let (x, xci) = ratio(r, v, "max")?;
                if m > top.0 {
                    top = (m, format!("{c}, {u}, {label}, mean of 5 seeds"));
                }
                cells.push(format!("{} ({})", pm(m, ci, 2), pm(x, xci, 2)));
            }
            cells.push(doc.into());
            t.row(cells);
        }
        best.push((c.to_string(), top));
    }
    blocks.push(("readings-512".to_string(), t.render()));
    for (c, _) in COLLECTIVES {
        let mut t = Table::new(&["uplinks", "RoCE reading", ">2MiB", ">32MiB", ">512MiB"]);
        for u in ["1x400G", "4x100G"] {
            for (v, label) in READINGS {
                let mut cells = vec![u.to_string(), label.to_string()];
                for size in ["2MiB", "32MiB", "512MiB"] {
                    let (m, ci) = ratio(row(c, u, size)?, v, "mean")?;
                    cells.push(pm(m, ci, 2));
                }
                t.row(cells);
            }
        }
        blocks.push((format!("readings-{}", c.replace('_', "-")), t.render()));
    }
    let mut t = Table::new(&[
        "collective",
        "uplinks",
        ">roce",
        ">roce-polar",
        ">roce-paper",
        ">roce-polar-paper",
        ">gse",
        ">lower bound",
    ]);
    for (c, _) in COLLECTIVES {
        for u in ["1x400G", "4x100G"] {
            let r = row(c, u, "512MiB")?;
            let mut cells = vec![c.to_string(), u.to_string()];
            for v in ["roce", "roce-polar", "roce-paper", "roce-polar-paper", "gse"] {
                cells.push(pm(
                    j.num(r, &format!("{v}_jct_mean_ns"))? / 1e6,
                    j.num(r, &format!("{v}_jct_mean_ci95_ns"))? / 1e6,
                    2,
                ));
            }
            cells.push(ms(j.num(r, "lower_bound_ns")?, 2));
            t.row(cells);
        }
    }
    blocks.push(("readings-jct".to_string(), t.render()));
    Ok((blocks, best))
}
