//! Derived metrics of a run: FCT slowdown (FCT / ideal FCT) per flow-size bucket, the
//! slowdown CDF, and the per-run `report.html` (slowdown CDF, slowdown per size bucket,
//! rate vs time per flow, queue vs time per port).
//!
//! Size buckets are half-open byte ranges cut at increasing edges; the default edges
//! 10 KB, 100 KB and 1 MB (decimal) give `<10KB`, `10KB-100KB`, `100KB-1MB` and `>=1MB`.
//! A flow of exactly 10_000 bytes is in `10KB-100KB`. Only finished flows count.
//!
//! Quantiles are [`crate::analysis::metrics::quantile`] (nearest rank). Everything here is a pure
//! function of the simulation's state: series are chosen and ordered by ids, never by
//! hash-map order, and long series are thinned deterministically.
//!
//! The parts: `buckets.rs` (the size buckets), `slowdown.rs` (finished flows, their
//! slowdown and FCT statistics per bucket, `buckets.csv`), `series.rs` (CDF points and
//! the rate and queue series over time), `slowdown_charts.rs` (the slowdown table and
//! charts), `run_report.rs` (the sections of the per-run page) and `interval.rs` (mean
//! and 95 % t interval of replicated runs, for the tables across seeds).

mod buckets;
pub mod interval;
mod series;
mod slowdown;
mod slowdown_charts;

pub use buckets::{SizeBuckets, ALL, DEFAULT_EDGES};
pub use series::{
    cdf_points, downsample, queue_series, rate_series, MAX_CHART_POINTS, MAX_SERIES_POINTS,
    SUMMARY_CDF_POINTS,
};
pub use slowdown::{
    bucket_stats, finished_flows, mean, sorted_slowdowns, BucketSlowdown, BucketStats, FlowOutcome,
    BUCKETS_CSV_HEADER,
};
pub use slowdown_charts::{
    buckets_chart, buckets_table, cdf_chart, ideal_slowdown, CDF_NOTE, FLOW_SIZE_AXIS,
};

/// Value at quantile q (0..=1) of sorted data, by nearest rank.
pub fn quantile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let rank = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
    sorted[rank - 1]
}
