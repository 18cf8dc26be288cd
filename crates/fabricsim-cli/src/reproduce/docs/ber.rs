//! `docs/results/ber.md`: document 000's open question (reliability at the bit error
//! rates of PAM4 links) on its testbed, `scenarios/gse-ber.toml`: GSE and RoCE under
//! bit errors, with and without RS(528,514) FEC and link-level retransmission, at 16 MiB
//! per rank and, for the FEC cases, at the document's 512 MiB.

use crate::reproduce::table::{f, mb, ms, Table};
use crate::reproduce::data::Run;
use crate::reproduce::{Doc, Generated, Job, Made, Runs};
use fabricsim::model::fabric::faults::ber::FrameErrors;
use fabricsim::model::fabric::faults::config::FecMode;

pub const DOC: Doc = Doc {
    name: "ber",
    file: "docs/results/ber.md",
    source: "000",
    made: Made::Reproduce {
        fast: false,
        jobs: &[
            Job::plain("16mib", "scenarios/gse-ber.toml"),
            Job {
                name: "512mib",
                scenario: "scenarios/gse-ber.toml",
                set: &[
                    "workload[0].size=\"512MiB\"",
                    "sweep[1].values=[\"rs528\"]",
                    "sweep[3].values=[0.0, 1e-4]",
                ],
                seed: None,
            },
        ],
        generate,
    },
};

/// The bit error rates of the sweep, as the run names spell them.
const BERS: [(&str, f64); 5] = [
    ("0.0", 0.0),
    ("0.00000001", 1e-8),
    ("0.000001", 1e-6),
    ("0.00001", 1e-5),
    ("0.0001", 1e-4),
];

/// A full data frame on the wire (4,096 B of payload and 58 B of RoCE headers) and an ACK.
const FULL_FRAME: u64 = 4154;
const ACK_FRAME: u64 = 64;

fn name(v: &str, collective: &str, fec: &str, llr: bool, ber: &str) -> String {
    format!("{v}-collective={collective}-fec={fec}-llr={llr}-ber={ber}")
}

/// A count in a few characters: 119, 1.3k, 124k, 17.2M.
fn short(x: f64) -> String {
    if !x.is_finite() {
        "-".into()
    } else if x < 1e3 {
        f(x, 0)
    } else if x < 1e4 {
        format!("{}k", f(x / 1e3, 1))
    } else if x < 1e6 {
        format!("{}k", f(x / 1e3, 0))
    } else {
        format!("{}M", f(x / 1e6, 1))
    }
}

/// A probability: 3.3e-4 below 0.1, else two decimals.
fn prob(p: f64) -> String {
    if p < 0.1 {
        format!("{p:.1e}")
    } else {
        f(p, 2)
    }
}

/// Whether every job of the run completed.
fn done(r: &Run) -> Result<bool, String> {
    Ok(r.num("jobs.completed")? >= r.num("jobs.count")?)
}

/// Mean JCT, or why there is none.
fn jct(r: &Run, clean: Option<f64>) -> Result<String, String> {
    if !done(r)? {
        return Ok(format!(
            "not done ({}/{} jobs, {} at {} ms)",
            r.num("jobs.completed")?,
            r.num("jobs.count")?,
            r.text("run.outcome")?.replace('_', " "),
            ms(r.num("run.sim_end_ns")?, 0)
        ));
    }
    let m = r.num("jobs.jct_mean_ns")?;
    Ok(match clean {
        Some(c) => format!("{} ({}x)", ms(m, 2), f(m / c, 2)),
        None => ms(m, 2),
    })
}

/// A bit error rate as a table shows it: 0, 1e-8.
fn ber_text(ber: f64) -> String {
    if ber == 0.0 {
        "0".into()
    } else {
        format!("{ber:e}")
    }
}

fn pair(a: f64, b: f64) -> String {
    format!("{} / {}", short(a), short(b))
}

fn generate(runs: &Runs) -> Result<Generated, String> {
    let mut blocks = Vec::new();

    // Frame error rate per hop, from the model's own formulas.
    let mut t = Table::new(&[
        ">BER",
        ">full frame (4154 B), no FEC",
        ">64 B ACK, no FEC",
        ">full frame, RS(528,514)",
    ]);
    for &(_, ber) in &BERS[1..] {
        let none = FrameErrors::new(ber, FecMode::None);
        let rs = FrameErrors::new(ber, FecMode::Rs528);
        t.row(vec![
            ber_text(ber),
            prob(none.frame_error_rate(FULL_FRAME)),
            prob(none.frame_error_rate(ACK_FRAME)),
            prob(rs.frame_error_rate(FULL_FRAME)),
        ]);
    }
    blocks.push(("fer".into(), t.render()));

    // 16 MiB per rank: every case.
    let small = runs.job("16mib")?;
    for (collective, block) in [("alltoall", "alltoall-16"), ("ring_allreduce", "allreduce-16")] {
        let mut t = Table::new(&[
            "FEC",
            "LLR",
            ">BER",
            ">RoCE JCT ms (x clean)",
            ">GSE JCT ms (x clean)",
            ">RoCE/GSE",
            ">corrupted RoCE / GSE",
            ">replayed RoCE / GSE",
            ">data pkts lost RoCE / GSE",
            ">RoCE timeouts",
            ">GSE reorder skips / drops",
        ]);
        for fec in ["none", "rs528"] {
            for llr in [false, true] {
                let clean = |v: &str| -> Result<f64, String> {
                    small
                        .run(&name(v, collective, fec, llr, "0.0"))?
                        .num("jobs.jct_mean_ns")
                };
                let (rc, gc) = (clean("roce")?, clean("gse")?);
                for (b, ber) in BERS {
                    let r = small.run(&name("roce", collective, fec, llr, b))?;
                    let g = small.run(&name("gse", collective, fec, llr, b))?;
                    let ratio = if done(r)? && done(g)? {
                        f(r.num("jobs.jct_mean_ns")? / g.num("jobs.jct_mean_ns")?, 2)
                    } else {
                        "-".into()
                    };
                    let both = |path: &str| -> Result<String, String> {
                        Ok(pair(r.count(path)?, g.count(path)?))
                    };
                    t.row(vec![
                        fec.into(),
                        if llr { "on" } else { "off" }.into(),
                        ber_text(ber),
                        jct(r, Some(rc))?,
                        jct(g, Some(gc))?,
                        ratio,
                        both("faults.frames_corrupted")?,
                        both("faults.frames_replayed")?,
                        both("faults.data_packets_lost")?,
                        short(r.num("transport.timeouts")?),
                        pair(g.count("gse.reorder_skips")?, g.num("fabric.drops")?),
                    ]);
                }
            }
        }
        blocks.push((block.into(), t.render()));
    }

    // 512 MiB per rank, with FEC.
    let big = runs.job("512mib")?;
    let mut t = Table::new(&[
        "collective",
        "LLR",
        ">BER",
        ">RoCE JCT mean / max ms",
        ">GSE JCT mean / max ms",
        ">RoCE/GSE (mean)",
        ">corrupted RoCE / GSE",
        ">replayed RoCE / GSE",
        ">retransmitted MB RoCE / GSE",
    ]);
    for collective in ["alltoall", "ring_allreduce"] {
        for (llr, (b, ber)) in [(false, BERS[0]), (false, BERS[4]), (true, BERS[4])] {
            let r = big.run(&name("roce", collective, "rs528", llr, b))?;
            let g = big.run(&name("gse", collective, "rs528", llr, b))?;
            let mean_max = |x: &Run| -> Result<String, String> {
                Ok(format!(
                    "{} / {}",
                    ms(x.num("jobs.jct_mean_ns")?, 1),
                    ms(x.num("jobs.jct_max_ns")?, 1)
                ))
            };
            t.row(vec![
                collective.into(),
                if llr { "on" } else { "off" }.into(),
                ber_text(ber),
                mean_max(r)?,
                mean_max(g)?,
                f(r.num("jobs.jct_mean_ns")? / g.num("jobs.jct_mean_ns")?, 2),
                pair(
                    r.count("faults.frames_corrupted")?,
                    g.count("faults.frames_corrupted")?,
                ),
                pair(
                    r.count("faults.frames_replayed")?,
                    g.count("faults.frames_replayed")?,
                ),
                format!(
                    "{} / {}",
                    mb(r.num("transport.retx_bytes")?, 1),
                    mb(g.num("transport.retx_bytes")?, 1)
                ),
            ]);
        }
    }
    blocks.push(("scale-512".into(), t.render()));

    Ok(Generated {
        blocks,
        claims: Vec::new(),
    })
}
