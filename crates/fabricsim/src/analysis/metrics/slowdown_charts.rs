//! The slowdown of finished flows drawn for reports: a table and a bar chart per size
//! bucket, and a CDF chart (also used by the multi-run comparison).

use super::slowdown::BucketStats;
use crate::base::charts::{BarChart, LineChart, RefLine, Table, PERCENTILE_NOTE};

/// The x axis of per-bucket charts: flow payload size buckets (decimal units).
pub const FLOW_SIZE_AXIS: &str = "flow size bucket (payload bytes, decimal units)";

/// Under slowdown CDFs: how the points are made.
pub const CDF_NOTE: &str = "Empirical CDF: at x, the fraction of finished flows whose \
    slowdown is at or below x (a step of 1/n per flow; above 2000 flows, the values at \
    evenly spaced ranks).";

/// True when data spanning `lo..=hi` (positive) reads better on a log axis.
fn wide(lo: f64, hi: f64) -> bool {
    lo > 0.0 && hi.is_finite() && hi / lo >= 20.0
}

/// Nanoseconds as microseconds with one decimal (`-` when undefined).
fn fmt_opt_us(ns: f64) -> String {
    if ns.is_finite() {
        format!("{:.1}", ns / 1000.0)
    } else {
        "-".into()
    }
}

fn fmt_opt(v: f64) -> String {
    if v.is_finite() {
        format!("{v:.2}")
    } else {
        "-".into()
    }
}

/// Table of the size buckets (as in `buckets.csv`, formatted).
pub fn buckets_table(stats: &[BucketStats]) -> Table {
    Table {
        title: "Slowdown (FCT / ideal FCT) per flow size".into(),
        header: [
            "flow size (payload bytes)",
            "flows (count)",
            "slowdown p50 (×)",
            "slowdown p95 (×)",
            "slowdown p99 (×)",
            "FCT p50 (µs)",
            "FCT p99 (µs)",
        ]
        .map(String::from)
        .to_vec(),
        rows: stats
            .iter()
            .map(|b| {
                vec![
                    b.bucket.clone(),
                    b.flows.to_string(),
                    fmt_opt(b.slowdown_p50),
                    fmt_opt(b.slowdown_p95),
                    fmt_opt(b.slowdown_p99),
                    fmt_opt_us(b.fct_p50_ns),
                    fmt_opt_us(b.fct_p99_ns),
                ]
            })
            .collect(),
    }
}

/// Slowdown p50/p95/p99 per bucket (categories: the buckets that hold finished flows,
/// then `all`), on a linear axis from zero like every bar chart, with the ideal
/// (slowdown 1) as a reference line.
pub fn buckets_chart(stats: &[BucketStats]) -> BarChart {
    let stats: Vec<&BucketStats> = stats.iter().filter(|b| b.flows > 0).collect();
    let vals = |f: fn(&BucketStats) -> f64| -> Vec<Option<f64>> {
        stats
            .iter()
            .map(|b| Some(f(b)).filter(|v| v.is_finite()))
            .collect()
    };
    BarChart {
        title: "Slowdown per flow size".into(),
        x_label: FLOW_SIZE_AXIS.into(),
        y_label: "slowdown (FCT / ideal FCT, ×)".into(),
        categories: stats.iter().map(|b| b.bucket.clone()).collect(),
        series: vec![
            ("p50".into(), vals(|b| b.slowdown_p50)),
            ("p95".into(), vals(|b| b.slowdown_p95)),
            ("p99".into(), vals(|b| b.slowdown_p99)),
        ],
        bound: None,
        refs: vec![ideal_slowdown()],
        note: format!(
            "Bars: percentiles of the slowdown of the finished flows in each size bucket \
             (buckets without a finished flow are left out). {PERCENTILE_NOTE}"
        ),
    }
}

/// A CDF of slowdown with one series per `(name, points)` (one panel per series when
/// there are more than a panel holds); log x when the slowdowns span 20x or more.
pub fn cdf_chart(title: &str, series: Vec<(String, Vec<(f64, f64)>)>) -> LineChart {
    let xs = series.iter().flat_map(|(_, p)| p.iter().map(|q| q.0));
    let (lo, hi) = xs.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), x| {
        (a.min(x), b.max(x))
    });
    LineChart {
        title: title.to_string(),
        x_label: "slowdown (FCT / ideal FCT, ×)".into(),
        y_label: "fraction of flows (0–1)".into(),
        groups: series.iter().map(|(n, _)| n.clone()).collect(),
        series,
        log_x: wide(lo, hi),
        log_y: false,
        step: true,
        note: CDF_NOTE.into(),
        ..LineChart::default()
    }
}

/// The reference line of slowdown charts: a flow as fast as on an idle fabric.
pub fn ideal_slowdown() -> RefLine {
    RefLine {
        name: "ideal (FCT = ideal FCT)".into(),
        y: 1.0,
    }
}
