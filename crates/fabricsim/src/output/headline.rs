//! The first figure of a sweep's `report.html`: the result the scenario was written to
//! show, chosen from its structure.
//!
//! - Runs with collective jobs and several variants: the mean JCT of each variant over
//!   the baseline's (the scenario's `baseline`, else its first variant) against the last
//!   sweep axis, one line per combination of the other axes, a panel per value of the
//!   first of them when there are two or more; with `seeds` the ratios are paired by
//!   seed and drawn with their 95 % t intervals (as `jct.csv`). A dashed line marks the
//!   ratio 1 (as fast as the baseline).
//! - Runs of flows: the p99 slowdown per flow-size bucket with every variant overlaid,
//!   one panel per sweep point (e.g. per load), so algorithms compare at one load; the
//!   ideal (slowdown 1) is a dashed line. Buckets no run has a finished flow in are left
//!   out.
//!
//! A sweep axis whose values are all sizes with a unit ("1MiB") is drawn on a log axis
//! in bytes, one whose values are numbers on a linear axis (a log axis when they span a
//! factor of 10 or more), any other as named categories.

use std::collections::BTreeMap;

use crate::analysis::metrics::interval::mean_interval;
use crate::analysis::metrics::{ideal_slowdown, FLOW_SIZE_AXIS};
use crate::base::charts::{BarChart, LineChart, RefLine, Section, PERCENTILE_NOTE};
use crate::output::jct;
use crate::output::Summary;

/// How the values of a sweep axis sit on a chart's x axis.
#[derive(Debug, Clone, PartialEq)]
pub struct XAxis {
    /// The axis label, with its unit.
    pub label: String,
    /// Each value's position (NaN: not drawable), in the values' order.
    pub positions: Vec<f64>,
    /// Logarithmic.
    pub log: bool,
    /// Named categories (positions are their indices).
    pub categories: Vec<String>,
}

/// Where the values of sweep axis `name` go on x: sizes in bytes on a log axis, numbers
/// on a linear or log axis, else categories.
pub fn x_axis(name: &str, values: &[String]) -> XAxis {
    let has_unit = |v: &str| v.chars().any(|c| c.is_ascii_alphabetic());
    let sizes: Option<Vec<f64>> = values
        .iter()
        .map(|v| {
            has_unit(v)
                .then(|| crate::base::units::parse_bytes(v).ok())
                .flatten()
                .map(|b| b as f64)
        })
        .collect();
    if let Some(p) = sizes.filter(|p| p.iter().all(|&b| b > 0.0)) {
        return XAxis {
            label: format!("{name} (log scale)"),
            positions: p,
            log: true,
            categories: Vec::new(),
        };
    }
    let numbers: Option<Vec<f64>> = values.iter().map(|v| v.parse::<f64>().ok()).collect();
    if let Some(p) = numbers.filter(|p| p.iter().all(|x| x.is_finite())) {
        let (lo, hi) = p
            .iter()
            .fold((f64::INFINITY, 0f64), |(a, b), &x| (a.min(x), b.max(x)));
        let log = lo > 0.0 && hi / lo >= 10.0;
        return XAxis {
            label: if log {
                format!("{name} (log scale)")
            } else {
                format!("{name} (swept values)")
            },
            positions: p,
            log,
            categories: Vec::new(),
        };
    }
    XAxis {
        label: format!("{name} (swept values)"),
        positions: (0..values.len()).map(|i| i as f64).collect(),
        log: false,
        categories: values.to_vec(),
    }
}

/// `a = v, b = w` for the coordinates `key` on `axes`.
fn point_label(axes: &[String], key: &[&str]) -> String {
    axes.iter()
        .zip(key)
        .map(|(a, v)| format!("{a} = {v}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The headline of a sweep (see the module doc); `axes` are the sweep axes without the
/// replicate coordinate. None when the runs hold nothing to compare (one variant of a
/// job sweep, no ratio defined, or no finished flow).
pub fn headline(
    rows: &[Summary],
    axes: &[String],
    replicated: bool,
    baseline: Option<&str>,
) -> Option<Section> {
    if rows.iter().any(|r| r.jobs > 0) {
        return jct_ratio_chart(rows, axes, replicated, baseline).map(Section::Line);
    }
    match slowdown_chart(rows, axes, Quantile::P99).map(|mut c| {
        c.title = format!("Headline: {}", c.title);
        c
    }) {
        // One size of flows (an incast): a line has nowhere to go; bars per variant.
        Some(c) if c.x_categories.len() == 1 => Some(Section::Bar(one_size_chart(rows, &c))),
        c => c.map(Section::Line),
    }
}

/// The percentile a slowdown chart shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Quantile {
    /// The median.
    P50,
    /// The 99th percentile.
    P99,
}

impl Quantile {
    fn name(self) -> &'static str {
        match self {
            Quantile::P50 => "p50",
            Quantile::P99 => "p99",
        }
    }

    fn of(self, b: &crate::analysis::metrics::BucketSlowdown) -> f64 {
        match self {
            Quantile::P50 => b.slowdown_p50,
            Quantile::P99 => b.slowdown_p99,
        }
    }
}

/// Flows of one size bucket: p50 and p99 slowdown per run (its variant and point), as
/// bars from zero with the ideal as a dashed line.
fn one_size_chart(rows: &[Summary], c: &LineChart) -> BarChart {
    let bucket = &c.x_categories[0];
    let label = |r: &Summary| {
        if r.variant.is_empty() {
            "run".to_string()
        } else {
            r.variant.clone()
        }
    };
    let pick = |r: &Summary, q: Quantile| {
        r.slowdown_buckets
            .iter()
            .find(|b| &b.bucket == bucket && b.flows > 0)
            .map(|b| q.of(b))
            .filter(|v| v.is_finite())
    };
    BarChart {
        title: format!("Headline: slowdown of the {bucket} flows, every run"),
        x_label: "run".into(),
        y_label: "slowdown (FCT / ideal FCT, ×)".into(),
        categories: rows.iter().map(label).collect(),
        series: [Quantile::P50, Quantile::P99]
            .into_iter()
            .map(|q| {
                (
                    q.name().to_string(),
                    rows.iter().map(|r| pick(r, q)).collect(),
                )
            })
            .collect(),
        bound: None,
        refs: vec![ideal_slowdown()],
        note: format!(
            "Bars: the median and 99th percentile of the slowdown of each run's finished \
             flows (all in the {bucket} bucket). {PERCENTILE_NOTE}"
        ),
    }
}

/// Mean JCT of each variant over the baseline's against the last axis.
fn jct_ratio_chart(
    rows: &[Summary],
    axes: &[String],
    replicated: bool,
    baseline: Option<&str>,
) -> Option<LineChart> {
    let vars = jct::variants(rows);
    let base = baseline
        .and_then(|b| vars.iter().find(|v| **v == b))
        .or(vars.first())
        .copied()?;
    let others: Vec<&str> = vars.iter().copied().filter(|v| *v != base).collect();
    if others.is_empty() {
        return None;
    }
    let (x_name, rest) = match axes.split_last() {
        Some((x, rest)) => (Some(x.as_str()), rest),
        None => (None, &[][..]),
    };
    let x_values: Vec<String> = match x_name {
        Some(a) => {
            let mut v: Vec<String> = Vec::new();
            for r in rows {
                if let Some(x) = r.params.get(a) {
                    if !v.contains(x) {
                        v.push(x.clone());
                    }
                }
            }
            v
        }
        None => vec![String::new()],
    };
    let x = match x_name {
        Some(a) => x_axis(a, &x_values),
        None => XAxis {
            label: String::new(),
            positions: vec![0.0],
            log: false,
            categories: vec!["all runs".into()],
        },
    };
    // Lines: (variant, coordinates on the other axes); points: their ratio per x value.
    type Line = (Vec<f64>, Vec<f64>);
    let mut lines: BTreeMap<(usize, Vec<&str>), Line> = BTreeMap::new();
    let mut order: Vec<(usize, Vec<&str>)> = Vec::new();
    for (key, runs) in jct::points(rows, axes) {
        let (xv, other) = match x_name {
            Some(_) => key.split_last().map(|(a, b)| (*a, b.to_vec()))?,
            None => ("", key.clone()),
        };
        let xi = x_values.iter().position(|v| v == xv)?;
        let b = runs.get(base).map(Vec::as_slice).unwrap_or(&[]);
        for (vi, v) in others.iter().enumerate() {
            let a = runs.get(v).map(Vec::as_slice).unwrap_or(&[]);
            let ratios: Vec<f64> = if replicated {
                jct::paired_ratios(a, b, |r| r.jct_mean_ns)
            } else {
                a.iter()
                    .zip(b)
                    .map(|(x, y)| x.jct_mean_ns / y.jct_mean_ns)
                    .collect()
            };
            let m = mean_interval(&ratios);
            let id = (vi, other.clone());
            let line = lines.entry(id.clone()).or_insert_with(|| {
                order.push(id);
                (
                    vec![f64::NAN; x_values.len()],
                    vec![f64::NAN; x_values.len()],
                )
            });
            line.0[xi] = m.mean;
            line.1[xi] = if replicated { m.half_width } else { f64::NAN };
        }
    }
    // A panel per value of the first other axis when there are two or more of them.
    let panel_axes = if rest.len() >= 2 { 1 } else { 0 };
    let mut c = LineChart {
        title: format!(
            "Headline: mean JCT relative to {base}{}",
            x_name.map_or(String::new(), |a| format!(", against {a}"))
        ),
        x_label: x.label.clone(),
        y_label: format!("mean JCT / {base}'s (×)"),
        log_x: x.log,
        x_categories: x.categories.clone(),
        // The swept values label their own ticks ("4MiB", not plotters' "4M").
        x_ticks: if x.log {
            x.positions
                .iter()
                .copied()
                .zip(x_values.iter().cloned())
                .collect()
        } else {
            Vec::new()
        },
        refs: vec![RefLine {
            name: format!("{base} (ratio 1)"),
            y: 1.0,
        }],
        split_groups: panel_axes > 0,
        full_width: true,
        note: format!(
            "Each line: one variant's mean job completion time divided by {base}'s at the \
             same sweep point (below 1: faster than {base}).{} Values as in jct.csv.",
            if replicated {
                " Points are the mean over seeds of the ratios paired by seed; bars are \
                 their 95 % t intervals."
            } else {
                ""
            }
        ),
        ..LineChart::default()
    };
    for id in order {
        let (ys, hs) = &lines[&id];
        let (vi, other) = &id;
        let mut name: Vec<String> = Vec::new();
        if others.len() > 1 || other.len() == panel_axes {
            name.push(others[*vi].to_string());
        }
        let own = point_label(&rest[panel_axes..], &other[panel_axes..]);
        if !own.is_empty() {
            name.push(own);
        }
        c.series.push((
            name.join(": "),
            x.positions
                .iter()
                .copied()
                .zip(ys.iter().copied())
                .collect(),
        ));
        c.errors.push(hs.clone());
        c.groups
            .push(point_label(&rest[..panel_axes], &other[..panel_axes]));
    }
    if !replicated {
        c.errors.clear();
    }
    // Nothing to compare (no job of a variant or of the baseline finished): no headline.
    let drawn = c
        .series
        .iter()
        .any(|(_, p)| p.iter().any(|q| q.1.is_finite()));
    drawn.then_some(c)
}

/// Slowdown (percentile `q`) per size bucket, variants overlaid, a panel per sweep
/// point; None without a finished flow.
pub fn slowdown_chart(rows: &[Summary], axes: &[String], q: Quantile) -> Option<LineChart> {
    let qn = q.name();
    // Buckets with a finished flow in some run, in the runs' order.
    let mut buckets: Vec<String> = Vec::new();
    for r in rows {
        for b in &r.slowdown_buckets {
            if b.flows > 0 && !buckets.contains(&b.bucket) {
                buckets.push(b.bucket.clone());
            }
        }
    }
    if buckets.is_empty() {
        return None;
    }
    let mut c = LineChart {
        title: format!("Slowdown {qn} per flow size, every variant"),
        x_label: FLOW_SIZE_AXIS.into(),
        y_label: format!("slowdown {qn} (FCT / ideal FCT, ×)"),
        x_categories: buckets.clone(),
        refs: vec![ideal_slowdown()],
        split_groups: true,
        full_width: true,
        note: format!(
            "Each line: one variant's slowdown {qn} of the finished flows in \
             each size bucket (buckets without a finished flow in any run are left out); \
             one panel per sweep point.{} {PERCENTILE_NOTE}",
            if rows
                .iter()
                .any(|r| r.params.contains_key(crate::scenario::REPLICATE_AXIS))
            {
                " With seeds: the mean over the point's seeds, with 95 % t intervals."
            } else {
                ""
            }
        ),
        ..LineChart::default()
    };
    let mut any = false;
    let vars = jct::variants(rows);
    for (key, runs) in jct::points(rows, axes) {
        for v in &vars {
            let Some(rs) = runs.get(v) else { continue };
            let mut ys = Vec::new();
            let mut hs = Vec::new();
            for b in &buckets {
                let vals: Vec<f64> = rs
                    .iter()
                    .filter_map(|r| {
                        r.slowdown_buckets
                            .iter()
                            .find(|x| &x.bucket == b && x.flows > 0)
                            .map(|x| q.of(x))
                    })
                    .collect();
                let m = mean_interval(&vals);
                ys.push(m.mean);
                hs.push(m.half_width);
            }
            any |= ys.iter().any(|y| y.is_finite());
            c.series.push((
                if v.is_empty() {
                    "run".into()
                } else {
                    v.to_string()
                },
                ys.into_iter()
                    .enumerate()
                    .map(|(i, y)| (i as f64, y))
                    .collect(),
            ));
            c.errors.push(hs);
            c.groups.push(point_label(axes, &key));
        }
    }
    let (lo, hi) = c
        .series
        .iter()
        .flat_map(|(_, p)| p.iter().map(|q| q.1))
        .filter(|y| y.is_finite() && *y > 0.0)
        .fold((f64::INFINITY, 0f64), |(a, b), y| (a.min(y), b.max(y)));
    c.log_y = hi / lo >= 20.0;
    any.then_some(c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_go_on_a_log_axis_numbers_on_a_linear_one() {
        let v = |s: &[&str]| s.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        let a = x_axis("size", &v(&["1MiB", "4MiB", "16MiB"]));
        assert!(a.log && a.categories.is_empty());
        assert_eq!(a.positions, [1048576.0, 4194304.0, 16777216.0]);
        assert!(a.label.contains("log scale"));
        let a = x_axis("load", &v(&["0.3", "0.5"]));
        assert!(!a.log && a.categories.is_empty());
        assert_eq!(a.positions, [0.3, 0.5]);
        let a = x_axis("ranks", &v(&["8", "64", "512"]));
        assert!(a.log);
        let a = x_axis("collective", &v(&["alltoall", "ring"]));
        assert_eq!(a.categories, v(&["alltoall", "ring"]));
    }
}
