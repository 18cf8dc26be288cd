//! The slowdown part of a sweep's report: FCT / ideal FCT per size bucket, as a table of
//! every run and as charts with the variants overlaid, and the runs' slowdown CDFs.

use super::*;

pub(super) fn cell(v: f64) -> String {
    if v.is_finite() {
        format!("{v:.2}")
    } else {
        "-".into()
    }
}

/// Bucket labels of the runs (all runs use the default buckets) that hold a finished flow
/// in some run, then `all`.
pub(super) fn bucket_labels(rows: &[Summary]) -> Vec<String> {
    let mut v: Vec<String> = rows
        .iter()
        .max_by_key(|r| r.slowdown_buckets.len())
        .map(|r| {
            r.slowdown_buckets
                .iter()
                .map(|b| b.bucket.clone())
                .collect()
        })
        .unwrap_or_default();
    if v.is_empty() {
        v = crate::analysis::metrics::SizeBuckets::default().labels();
    }
    // A bucket no run has a finished flow in would be an empty slot on every chart.
    let held = |l: &String| {
        rows.iter().any(|r| {
            r.slowdown_buckets
                .iter()
                .any(|b| &b.bucket == l && b.flows > 0)
        })
    };
    if v.iter().any(held) {
        v.retain(held);
    }
    v.push(crate::analysis::metrics::ALL.to_string());
    v
}

/// (p50, p99) of a run in bucket `label` (`all`: every finished flow).
pub(super) fn bucket_quantiles(r: &Summary, label: &str) -> (f64, f64) {
    if label == crate::analysis::metrics::ALL {
        return (r.slowdown_p50, r.slowdown_p99);
    }
    r.slowdown_buckets
        .iter()
        .find(|b| b.bucket == label)
        .map_or((f64::NAN, f64::NAN), |b| (b.slowdown_p50, b.slowdown_p99))
}

/// Name of a run in legends: its folder name (variant and sweep point).
pub(super) fn run_label(r: &Summary) -> String {
    if r.variant.is_empty() {
        "run".to_string()
    } else {
        r.variant.clone()
    }
}

/// Slowdown per size bucket across runs (`axes`: the sweep axes without the replicate
/// coordinate): a table (p50 and p99 per bucket and overall), and with `charts` two
/// grouped bar charts (p50, p99: buckets on x, one bar per run) when the runs fit one
/// panel, else the p50 per bucket with the variants overlaid per sweep point; then an
/// overlay of the runs' slowdown CDFs.
pub fn slowdown_sections(rows: &[Summary], axes: &[String], charts: bool) -> Vec<Section> {
    let mut out = Vec::new();
    if rows.is_empty() {
        return out;
    }
    let labels = bucket_labels(rows);
    out.push(Section::Heading("Slowdown per flow size".into()));
    out.push(Section::Text(
        "Slowdown = FCT / ideal FCT of finished flows, by flow size (decimal units).".into(),
    ));
    let mut header = vec!["run".to_string()];
    for l in &labels {
        header.push(format!("{l} p50 (×)"));
        header.push(format!("{l} p99 (×)"));
    }
    let table_rows = rows
        .iter()
        .map(|r| {
            let mut row = vec![run_label(r)];
            for l in &labels {
                let (p50, p99) = bucket_quantiles(r, l);
                row.push(cell(p50));
                row.push(cell(p99));
            }
            row
        })
        .collect();
    out.push(Section::Table(Table {
        title: "Slowdown p50 / p99 per flow size and run".into(),
        header,
        rows: table_rows,
    }));
    if !charts {
        return out;
    }
    if rows.len() > crate::base::charts::MAX_SERIES_PER_PANEL {
        // Too many runs for one panel of bars: the medians as lines, variants overlaid
        // per sweep point, as the headline shows the p99.
        if let Some(c) = crate::output::headline::slowdown_chart(
            rows,
            axes,
            crate::output::headline::Quantile::P50,
        ) {
            out.push(Section::Line(c));
        }
    } else if rows.len() <= MAX_BUCKET_CHART_RUNS {
        for (name, second) in [("p50", false), ("p99", true)] {
            let pick = |q: (f64, f64)| if second { q.1 } else { q.0 };
            let series: Vec<(String, Vec<Option<f64>>)> = rows
                .iter()
                .map(|r| {
                    let vals = labels
                        .iter()
                        .map(|l| Some(pick(bucket_quantiles(r, l))).filter(|v| v.is_finite()))
                        .collect();
                    (run_label(r), vals)
                })
                .collect();
            out.push(Section::Bar(BarChart {
                title: format!("Slowdown {name} per flow size"),
                x_label: crate::analysis::metrics::FLOW_SIZE_AXIS.into(),
                y_label: format!("slowdown {name} (FCT / ideal FCT, ×)"),
                categories: labels.clone(),
                series,
                bound: None,
                refs: vec![crate::analysis::metrics::ideal_slowdown()],
                note: format!(
                    "Bars: the {name} of the slowdown of the run's finished flows in each \
                     size bucket. {PERCENTILE_NOTE}"
                ),
            }));
        }
    } else {
        out.push(Section::Text(format!(
            "{} runs: too many for the per-bucket charts (at most {MAX_BUCKET_CHART_RUNS}); see the table.",
            rows.len()
        )));
    }
    if rows.len() <= MAX_CDF_RUNS {
        let series: Vec<(String, Vec<(f64, f64)>)> = rows
            .iter()
            .map(|r| (run_label(r), r.slowdown_cdf.clone()))
            .collect();
        out.push(Section::Line(crate::analysis::metrics::cdf_chart(
            "CDF of slowdown per run",
            series,
        )));
    } else {
        out.push(Section::Text(format!(
            "{} runs: too many to overlay their slowdown CDFs (at most {MAX_CDF_RUNS}); each \
             run's own report.html has its CDF.",
            rows.len()
        )));
    }
    out
}
