//! `buckets.csv`: slowdown and FCT quantiles of the finished flows per flow-size bucket
//! (see [`crate::analysis::metrics`]), then `all`.

use super::cells::{finite, CsvOut, Fixed};
use super::{always, RunData, Scope, Table};
use crate::analysis::metrics::{self, BucketStats, SizeBuckets};
use serde::Serialize;

/// The table's entry in [`super::TABLES`].
pub const TABLE: Table = Table {
    file: "buckets.csv",
    about: "slowdown p50/p95/p99/mean and FCT p50/p99/mean of finished flows per flow-size \
            bucket, then `all` (empty cells for an empty bucket)",
    scope: Scope::Run {
        present: always,
        write,
    },
};

#[derive(Default, Serialize)]
struct BucketRow<'a> {
    bucket: &'a str,
    flows: usize,
    slowdown_p50: Option<Fixed<6>>,
    slowdown_p95: Option<Fixed<6>>,
    slowdown_p99: Option<Fixed<6>>,
    fct_p50_ns: Option<Fixed<3>>,
    fct_p99_ns: Option<Fixed<3>>,
    slowdown_mean: Option<Fixed<6>>,
    fct_mean_ns: Option<Fixed<3>>,
}

impl<'a> From<&'a BucketStats> for BucketRow<'a> {
    fn from(b: &'a BucketStats) -> Self {
        BucketRow {
            bucket: &b.bucket,
            flows: b.flows,
            slowdown_p50: finite(b.slowdown_p50),
            slowdown_p95: finite(b.slowdown_p95),
            slowdown_p99: finite(b.slowdown_p99),
            fct_p50_ns: finite(b.fct_p50_ns),
            fct_p99_ns: finite(b.fct_p99_ns),
            slowdown_mean: finite(b.slowdown_mean),
            fct_mean_ns: finite(b.fct_mean_ns),
        }
    }
}

/// Writes the rows of `stats` (one per bucket, then `all`).
pub fn write_stats(stats: &[BucketStats], out: &mut CsvOut) -> csv::Result<()> {
    out.table(stats.iter().map(BucketRow::from))
}

fn write(r: &RunData, out: &mut CsvOut) -> csv::Result<()> {
    let flows = metrics::finished_flows(r.sim);
    write_stats(&metrics::bucket_stats(&SizeBuckets::default(), &flows), out)
}
