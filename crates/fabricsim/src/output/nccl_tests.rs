//! `nccl_tests.csv`: what nccl-tests prints, one row per job and message size of the
//! collective workloads, but those running one of the collectives of old (`ring_allreduce`,
//! ...) with neither a protocol nor a size sweep, whose outputs stay as they were.
//!
//! As nccl-tests' `doc/PERFORMANCE.md` defines them: `size` is the message `S` in bytes
//! (for AllGather the gathered buffer), `count` its elements of `type` (`float`, 4 B),
//! `time_us` the mean completion time of the job's iterations at that size, `algbw = S /
//! time` and `busbw = algbw x factor`, the factor `2(n-1)/n` for AllReduce, `(n-1)/n` for
//! AllGather, ReduceScatter and AlltoAll, 1 for Broadcast (both in GB/s, 1e9 B/s). Beside
//! them: the algorithm and protocol that ran, so a choice by `auto` can be read back.

use super::cells::{CsvOut, Fixed};
use super::{RunData, Scope, Table};
use crate::model::workload::JobKind;
use serde::Serialize;

/// The table's entry in [`super::TABLES`].
pub const TABLE: Table = Table {
    file: "nccl_tests.csv",
    about: "nccl-tests' columns per job and size (collective jobs but the bare ones of old): \
            size, count, type, algorithm, protocol, time_us, algbw, busbw",
    scope: Scope::Run {
        present: |r| r.sim.nics.jobs.iter().any(|j| j.spec.protocol.is_some()),
        write,
    },
};

/// Bytes of nccl-tests' default data type, `float`.
const FLOAT_BYTES: u64 = 4;

#[derive(Default, Serialize)]
struct NcclRow {
    /// First job iteration of the row.
    job_id: usize,
    /// Ranks.
    ranks: usize,
    size: u64,
    count: u64,
    #[serde(rename = "type")]
    data_type: &'static str,
    /// nccl-tests' operation (`all_reduce`, ...).
    collective: &'static str,
    algorithm: &'static str,
    protocol: &'static str,
    /// Iterations averaged (those that finished).
    iterations: u32,
    time_us: Option<Fixed<3>>,
    algbw: Option<Fixed<3>>,
    busbw: Option<Fixed<3>>,
}

fn write(r: &RunData, out: &mut CsvOut) -> csv::Result<()> {
    let jobs = &r.sim.nics.jobs;
    let mut rows: Vec<NcclRow> = Vec::new();
    // Iterations of one (job, size) follow each other: the first has iteration 0.
    let mut sums: Vec<(u128, u32)> = Vec::new();
    for (j, job) in jobs.iter().enumerate() {
        let (Some(proto), JobKind::Collective(kind)) = (job.spec.protocol, job.spec.collective)
        else {
            continue;
        };
        if job.spec.iteration == 0 || rows.is_empty() {
            rows.push(NcclRow {
                job_id: j,
                ranks: job.spec.ranks.len(),
                size: job.spec.size,
                count: job.spec.size / FLOAT_BYTES,
                data_type: "float",
                collective: kind.operation(),
                algorithm: kind.name(),
                protocol: proto.name(),
                ..Default::default()
            });
            sums.push((0, 0));
        }
        if let (Some(a), Some(b)) = (job.started, job.finish) {
            let s = sums.last_mut().expect("a row");
            s.0 += u128::from(b - a);
            s.1 += 1;
        }
    }
    for (row, &(sum, k)) in rows.iter_mut().zip(&sums) {
        row.iterations = k;
        if k == 0 {
            continue;
        }
        let t = (sum / u128::from(k)) as u64;
        let JobKind::Collective(kind) = jobs[row.job_id].spec.collective else {
            continue;
        };
        let (algbw, busbw) =
            crate::model::workload::collective::nccl_bandwidths(kind, row.ranks, row.size, t);
        row.time_us = Some(Fixed(t as f64 / 1e6));
        row.algbw = Some(Fixed(algbw / 1e9));
        row.busbw = Some(Fixed(busbw / 1e9));
    }
    out.table(rows)
}
