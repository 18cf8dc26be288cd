//! `docs/results/traces.md`: two GPT-like jobs from Chakra execution traces on one
//! 32-GPU cluster (`scenarios/trace-jobs.toml`): each job's iteration, its compute, the
//! exposed communication and the slowdown against the job alone, per placement.

use crate::reproduce::table::{f, Table};
use crate::reproduce::{Doc, Generated, Job, Made, Runs};

pub const DOC: Doc = Doc {
    name: "traces",
    file: "docs/results/traces.md",
    source: "-",
    made: Made::Reproduce {
        fast: true,
        jobs: &[Job::plain("jobs", "scenarios/trace-jobs.toml")],
        generate,
    },
};

/// The scenario's variants, in its order.
const VARIANTS: [&str; 4] = ["contiguous", "by_rail", "random", "straggler"];

fn generate(runs: &Runs) -> Result<Generated, String> {
    let job = runs.job("jobs")?;
    let mut t = Table::new(&[
        "variant",
        "job",
        "placement",
        ">iteration (us)",
        ">compute (us)",
        ">exposed communication (us)",
        ">alone (us)",
        ">slowdown",
        ">against contiguous",
    ]);
    let base = job.run(VARIANTS[0])?.csv("training.csv")?;
    for v in VARIANTS {
        let csv = job.run(v)?.csv("training.csv")?;
        for row in 0..csv.rows.len() {
            let name = &csv.rows[row][csv.header.iter().position(|h| h == "name").unwrap_or(0)];
            let placement =
                &csv.rows[row][csv.header.iter().position(|h| h == "placement").unwrap_or(0)];
            let us = |c: &str| csv.num(row, c).map(|x| x / 1e3);
            let time = us("time_ns")?;
            t.row(vec![
                v.to_string(),
                name.clone(),
                placement.clone(),
                f(time, 1),
                f(us("compute_ns")?, 1),
                f(us("exposed_comm_ns")?, 1),
                f(us("alone_ns")?, 1),
                f(csv.num(row, "slowdown")?, 3),
                f(time / (base.num(row, "time_ns")? / 1e3), 2),
            ]);
        }
    }
    Ok(Generated {
        blocks: vec![("jobs".into(), t.render())],
        claims: Vec::new(),
    })
}
