//! `jobs.csv`: one row per job iteration of the collective workloads.

use super::cells::{CsvOut, Ns};
use super::{RunData, Scope, Table};
use serde::Serialize;

/// The table's entry in [`super::TABLES`].
pub const TABLE: Table = Table {
    file: "jobs.csv",
    about: "one row per job iteration (collective workloads): collective, ranks, size, \
            start, finish, JCT and its analytic lower bound",
    scope: Scope::Run {
        present: |r| !r.sim.nics.jobs.is_empty(),
        write,
    },
};

#[derive(Default, Serialize)]
struct JobRow {
    job_id: usize,
    collective: &'static str,
    /// Host ids in rank order, separated by spaces.
    ranks: String,
    size_bytes: u64,
    start_ns: Option<Ns>,
    finish_ns: Option<Ns>,
    jct_ns: Option<Ns>,
    lower_bound_ns: Ns,
}

fn write(r: &RunData, out: &mut CsvOut) -> csv::Result<()> {
    let sim = r.sim;
    out.table(sim.nics.jobs.iter().enumerate().map(|(j, job)| {
        let ranks: Vec<String> = job.spec.ranks.iter().map(|r| r.to_string()).collect();
        // A finish without a start cannot happen; the row then shows neither.
        let (start, finish) = match (job.started, job.finish) {
            (Some(a), b) => (Some(a), b),
            _ => (None, None),
        };
        JobRow {
            job_id: j,
            collective: job.spec.collective.name(),
            ranks: ranks.join(" "),
            size_bytes: job.spec.size,
            start_ns: start.map(Ns),
            finish_ns: finish.map(Ns),
            jct_ns: start.zip(finish).map(|(a, b)| Ns(b - a)),
            lower_bound_ns: Ns(sim.job_lower_bound(j)),
        }
    }))
}
