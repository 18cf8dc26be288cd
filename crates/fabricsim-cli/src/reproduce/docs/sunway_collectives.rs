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

fn generate(runs: &Runs) -> Result<Generated, String> {
    let job = runs.job("collectives")?;
    let mut t = Table::new(&[
        "collective",
        "nodes (NICs)",
        ">software: ours",
        ">document",
        ">error",
        ">hardware: ours",
        ">document",
        ">error",
        ">speedup ours / document",
    ]);
    let (mut hw_sq, mut sw_sq, mut hw_max, mut sw_max) = (0.0f64, 0.0f64, 0.0f64, 0.0f64);
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
            let (eh, es) = (hw - hw_doc[i], sw - sw_doc[i]);
            hw_sq += eh * eh;
            sw_sq += es * es;
            hw_max = hw_max.max(eh.abs());
            sw_max = sw_max.max(es.abs());
            n += 1;
            hw_faster &= hw < sw;
            let (sp, dsp) = (sw / hw, sw_doc[i] / hw_doc[i]);
            sp_lo = sp_lo.min(sp);
            sp_hi = sp_hi.max(sp);
            sp_ratio += sp / dsp;
            t.row(vec![
                name.into(),
                format!("{} ({nics})", nics * 2),
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
    let (hw_rms, sw_rms) = ((hw_sq / n as f64).sqrt(), (sw_sq / n as f64).sqrt());
    let mut fit = Table::new(&["kind", ">rms error (us)", ">largest error (us)"]);
    fit.row(vec!["hardware".into(), f(hw_rms, 2), f(hw_max, 2)]);
    fit.row(vec!["software".into(), f(sw_rms, 1), f(sw_max, 1)]);
    // The fit's scale: an rms error against the document's mean latency of each kind.
    let mean = |k: usize| {
        DOCUMENT
            .iter()
            .flat_map(|d| if k == 0 { d.3 } else { d.2 })
            .sum::<f64>()
            / 15.0
    };
    let sp_ratio = sp_ratio / n as f64;
    let claims = vec![
        Claim::direction(
            "hardware collectives are faster than software ones at every size and scale",
            "faster in every cell of tables 2-4",
            format!("{}-{}x faster, every cell", f(sp_lo, 1), f(sp_hi, 1)),
            hw_faster,
        ),
        Claim::figure("hardware speedup over software, cell by cell (ours over the document's, mean of the 15 cells)", "1 (the document's speedups)", 1.0, (sp_ratio, f(sp_ratio, 2)), 0.10, 0.25),
        Claim::bound("hardware latencies fit by one set of costs (rms error over the 15 cells, against the mean latency)", &format!("mean {} us", f(mean(0), 2)), 0.1 * mean(0), true, (hw_rms, format!("rms {} us", f(hw_rms, 2))), (0.1 * mean(0), "10 % of the mean")),
        Claim::bound("software latencies fit by one set of costs (rms error over the 15 cells, against the mean latency)", &format!("mean {} us", f(mean(1), 1)), 0.1 * mean(1), true, (sw_rms, format!("rms {} us", f(sw_rms, 1))), (0.1 * mean(1), "10 % of the mean")),
    ];
    Ok(Generated {
        blocks: vec![("latency".into(), t.render()), ("fit".into(), fit.render())],
        claims,
    })
}
