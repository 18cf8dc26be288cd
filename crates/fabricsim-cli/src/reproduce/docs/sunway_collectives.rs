//! `docs/results/sunway-collectives.md`: document 003's tables 2-4, hardware against
//! software collectives, beside `scenarios/sunway-collectives.toml`.

use crate::reproduce::claims::Claim;
use crate::reproduce::table::{f, signed_pct, Table};
use crate::reproduce::{Doc, Generated, Job, Made, Runs};

pub const DOC: Doc = Doc {
    name: "sunway-collectives",
    file: "docs/results/sunway-collectives.md",
    source: "003",
    made: Made::Reproduce {
        fast: true,
        jobs: &[Job {
            name: "collectives",
            scenario: "scenarios/sunway-collectives.toml",
            set: &[],
            seed: None,
        }],
        generate,
    },
};

/// Document 003's tables 2-4 (us): (collective, run name part, [software; 3], [hardware; 3])
/// at 256, 512 and 1024 nodes.
const DOCUMENT: [(&str, &str, [f64; 3], [f64; 3]); 5] = [
    ("barrier", "barrier", [59.19, 78.51, 98.05], [7.70, 10.30, 13.48]),
    ("allreduce-8B", "allreduce-8B", [63.15, 81.47, 108.56], [7.71, 10.30, 13.49]),
    ("bcast-8B", "bcast-8B", [28.43, 32.73, 46.65], [7.76, 8.37, 11.00]),
    ("bcast-128B", "bcast-128B", [35.04, 41.12, 56.76], [8.05, 8.67, 11.23]),
    ("bcast-1KiB", "bcast-1KiB", [38.21, 44.40, 61.54], [9.29, 9.66, 11.67]),
];

const NICS: [u32; 3] = [128, 256, 512];

/// The NIC counts the scenario's costs were calibrated on
/// (`scripts/sunway-collectives-calibrate.py`); the other column is predicted.
const CALIBRATED: [u32; 2] = [128, 256];

/// Squared errors and the largest absolute one, over some cells.
#[derive(Default)]
struct Errors {
    sq: f64,
    max: f64,
    n: usize,
    /// Sum of ours over the document's, less one (the mean signed error).
    rel: f64,
}

impl Errors {
    fn add(&mut self, ours: f64, doc: f64) {
        let e = ours - doc;
        self.sq += e * e;
        self.max = self.max.max(e.abs());
        self.n += 1;
        self.rel += ours / doc - 1.0;
    }
    fn rms(&self) -> f64 {
        (self.sq / self.n as f64).sqrt()
    }
    fn mean_rel(&self) -> f64 {
        self.rel / self.n as f64
    }
}

fn generate(runs: &Runs) -> Result<Generated, String> {
    let job = runs.job("collectives")?;
    let mut t = Table::new(&[
        "collective",
        "nodes (NICs)",
        "cells",
        ">software: ours",
        ">document",
        ">error",
        ">hardware: ours",
        ">document",
        ">error",
        ">speedup ours / document",
    ]);
    // [kind][calibration, hold-out]; kind 0 hardware, 1 software.
    let mut errs: [[Errors; 2]; 2] = Default::default();
    let (mut n, mut hw_faster) = (0usize, true);
    let (mut sp_lo, mut sp_hi, mut sp_ratio) = (f64::MAX, 0.0f64, 0.0f64);
    for (name, part, sw_doc, hw_doc) in DOCUMENT {
        for (i, nics) in NICS.iter().enumerate() {
            let hw = job
                .run(&format!("hw-{part}-nics={nics}"))?
                .csv("collectives.csv")?
                .num(0, "latency_ns")?
                / 1e3;
            let sw = job
                .run(&format!("sw-{part}-nics={nics}"))?
                .num("jobs.jct_mean_ns")?
                / 1e3;
            let held = !CALIBRATED.contains(nics) as usize;
            errs[0][held].add(hw, hw_doc[i]);
            errs[1][held].add(sw, sw_doc[i]);
            n += 1;
            hw_faster &= hw < sw;
            let (sp, dsp) = (sw / hw, sw_doc[i] / hw_doc[i]);
            sp_lo = sp_lo.min(sp);
            sp_hi = sp_hi.max(sp);
            sp_ratio += sp / dsp;
            t.row(vec![
                name.into(),
                format!("{} ({nics})", nics * 2),
                if held == 1 { "predicted" } else { "calibration" }.into(),
                f(sw, 2),
                f(sw_doc[i], 2),
                signed_pct(sw / sw_doc[i] - 1.0),
                f(hw, 2),
                f(hw_doc[i], 2),
                signed_pct(hw / hw_doc[i] - 1.0),
                format!("{} / {}", f(sp, 1), f(dsp, 1)),
            ]);
        }
    }
    let mut fit = Table::new(&[
        "kind",
        ">calibration: rms (us)",
        ">hold-out: rms (us)",
        ">largest (us)",
        ">mean error",
    ]);
    for (k, name) in ["hardware", "software"].iter().enumerate() {
        let [cal, held] = &errs[k];
        fit.row(vec![
            (*name).into(),
            f(cal.rms(), 2),
            f(held.rms(), 2),
            f(held.max, 2),
            signed_pct(held.mean_rel()),
        ]);
    }
    // The scale of a prediction's error: the document's mean latency of each kind over
    // the predicted column.
    let held_mean = |k: usize| {
        let i = NICS.iter().position(|n| !CALIBRATED.contains(n)).expect("a held-out column");
        DOCUMENT.iter().map(|d| if k == 0 { d.3[i] } else { d.2[i] }).sum::<f64>()
            / DOCUMENT.len() as f64
    };
    let sp_ratio = sp_ratio / n as f64;
    let predicted = |k: usize, what: &str| {
        let (m, rms) = (held_mean(k), errs[k][1].rms());
        Claim::bound(
            &format!("{what} latencies at 1024 nodes predicted from costs calibrated at 256 and 512 (rms error of the 5 predicted cells, against their mean latency)"),
            &format!("mean {} us", f(m, 2)),
            0.1 * m,
            true,
            (rms, format!("rms {} us", f(rms, 2))),
            (0.1 * m, "10 % of the mean"),
        )
    };
    let claims = vec![
        Claim::direction(
            "hardware collectives are faster than software ones at every size and scale",
            "faster in every cell of tables 2-4",
            format!("{}-{}x faster, every cell", f(sp_lo, 1), f(sp_hi, 1)),
            hw_faster,
        ),
        Claim::figure("hardware speedup over software, cell by cell (ours over the document's, mean of the 15 cells)", "1 (the document's speedups)", 1.0, (sp_ratio, f(sp_ratio, 2)), 0.10, 0.25),
        predicted(0, "hardware"),
        predicted(1, "software"),
    ];
    Ok(Generated {
        blocks: vec![("latency".into(), t.render()), ("fit".into(), fit.render())],
        claims,
    })
}
