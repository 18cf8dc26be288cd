//! The slowdown of finished flows drawn for reports: a table and a bar chart per size
//! bucket, and a CDF chart (also used by the multi-run comparison).

use super::slowdown::BucketStats;
use crate::report::{BarChart, LineChart, Table};
use crate::units::Time;

/// True when data spanning `lo..=hi` (positive) reads better on a log axis.
fn wide(lo: f64, hi: f64) -> bool {
    lo > 0.0 && hi.is_finite() && hi / lo >= 20.0
}

fn fmt_opt_ns(ns: f64) -> String {
    if ns.is_finite() {
        crate::units::fmt_time((ns * 1000.0).round() as Time)
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
            "bucket",
            "flows",
            "slowdown p50",
            "slowdown p95",
            "slowdown p99",
            "FCT p50",
            "FCT p99",
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
                    fmt_opt_ns(b.fct_p50_ns),
                    fmt_opt_ns(b.fct_p99_ns),
                ]
            })
            .collect(),
    }
}

/// Slowdown p50/p95/p99 per bucket (categories: the buckets, then `all`).
pub fn buckets_chart(stats: &[BucketStats]) -> BarChart {
    let vals = |f: fn(&BucketStats) -> f64| -> Vec<Option<f64>> {
        stats
            .iter()
            .map(|b| Some(f(b)).filter(|v| v.is_finite()))
            .collect()
    };
    let all: Vec<f64> = stats
        .iter()
        .flat_map(|b| [b.slowdown_p50, b.slowdown_p99])
        .filter(|v| v.is_finite())
        .collect();
    let lo = all.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = all.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    BarChart {
        title: "Slowdown per flow size".into(),
        x_label: "flow size".into(),
        y_label: "slowdown (FCT / ideal)".into(),
        categories: stats.iter().map(|b| b.bucket.clone()).collect(),
        series: vec![
            ("p50".into(), vals(|b| b.slowdown_p50)),
            ("p95".into(), vals(|b| b.slowdown_p95)),
            ("p99".into(), vals(|b| b.slowdown_p99)),
        ],
        log_y: wide(lo, hi),
    }
}

/// A CDF of slowdown with one series per `(name, points)`.
pub fn cdf_chart(title: &str, series: Vec<(String, Vec<(f64, f64)>)>) -> LineChart {
    let xs = series.iter().flat_map(|(_, p)| p.iter().map(|q| q.0));
    let (lo, hi) = xs.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), x| {
        (a.min(x), b.max(x))
    });
    LineChart {
        title: title.to_string(),
        x_label: "slowdown (FCT / ideal)".into(),
        y_label: "fraction of flows".into(),
        series,
        log_x: wide(lo, hi),
        log_y: false,
        step: true,
    }
}
