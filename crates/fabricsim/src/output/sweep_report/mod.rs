//! Comparisons across the runs of one scenario: `report.html` (tables and bar charts like
//! the source documents' figures). The tables across runs (`comparison.csv`, `jct.csv`)
//! are written by [`crate::output`].
//!
//! The page opens with the headline figure ([`crate::output::headline`]), then the table
//! of runs (folded when long). Runs are grouped by their sweep coordinates. The last sweep axis becomes the x axis
//! of the charts (e.g. message size), the variants are the bars side by side, and every
//! combination of the other axes (e.g. collective and speedup) gets a chart of its own;
//! with more than one such combination the charts are folded under one line. Without a
//! sweep the variants are the bars.
//!
//! Then flow slowdown (FCT / ideal FCT) per size bucket: a table with p50 and p99 of
//! every run, and, for flow workloads (runs without collective jobs, whose charts are
//! about JCT), two bar charts (p50, p99; buckets with a finished flow on x, one bar per
//! run) when the runs fit one panel, else the p50 per bucket with the variants overlaid
//! per sweep point, and an overlay of the runs' slowdown CDFs (at most [`MAX_CDF_RUNS`]
//! runs).
//!
//! Last, the dynamics: PFC and queue figures per run (pauses, paused time, max and mean
//! queue, TCD marks), the convergence (`[record.convergence]`) and window
//! (`[record.window]`) tables when the runs have them, and for a handful of runs
//! overlays of their rate-vs-time series (with the line rate) and of their longest
//! queue, a panel per port.

use crate::analysis::metrics::interval::{mean_interval, MeanInterval};
use crate::base::charts::{BarChart, Bound, LineChart, RefLine, Section, Table, PERCENTILE_NOTE};
use crate::output::Summary;
use crate::scenario::REPLICATE_AXIS;

mod dynamics;
mod slowdown;
use dynamics::*;
pub use dynamics::{dynamics_sections, line_rate};
pub use slowdown::slowdown_sections;
use slowdown::*;

/// Most runs overlaid in the slowdown CDF chart; above this only the table and the bar
/// charts show slowdown.
pub const MAX_CDF_RUNS: usize = 12;

/// Most runs (bars per bucket) in the slowdown-per-bucket charts.
pub const MAX_BUCKET_CHART_RUNS: usize = 24;

/// Most runs whose rate and queue series are overlaid.
pub const MAX_SERIES_RUNS: usize = 6;

/// A named line: (name, points).
type Series = (String, Vec<(f64, f64)>);

/// Under rate charts: where the points come from.
pub const RATE_NOTE: &str = "Each flow's congestion-controller rate, sampled every \
    [record] rate_interval (rates.csv); long series thinned to keep their peaks and dips.";

/// Under queue charts: where the points come from.
pub const QUEUE_NOTE: &str = "Bytes queued at the switch egress port, sampled every \
    [record] queue_interval (queues.csv; an empty queue is not sampled and reads as \
    zero); long series thinned to keep their peaks and dips.";

/// A charted quantity: its axis label (with unit), how to read it from a run, the note
/// under its chart, and the lower bound drawn on its bars (JCT charts).
struct Metric {
    label: &'static str,
    value: fn(&Summary) -> f64,
    note: String,
    bound: Option<fn(&Summary) -> f64>,
    refs: Vec<RefLine>,
}

/// Name of the bound marks in JCT charts' legends.
const JCT_BOUND: &str = "JCT lower bound";

/// What the black marks on JCT bars are.
const JCT_BOUND_NOTE: &str = "Black marks: the JCT lower bound (each job's collective \
    with every message at its ideal FCT on an idle fabric, as in jobs.csv), averaged over \
    the run's jobs.";

/// Variant names in first-seen order.
fn variants(rows: &[Summary]) -> Vec<String> {
    let mut v: Vec<String> = Vec::new();
    for r in rows {
        if !v.contains(&r.variant_name) {
            v.push(r.variant_name.clone());
        }
    }
    v
}

/// Sweep axes in order (from the first run's coordinates, which keep the file's order).
fn axes(rows: &[Summary], order: &[String]) -> Vec<String> {
    if !order.is_empty() {
        return order.to_vec();
    }
    rows.first()
        .map(|r| r.params.keys().cloned().collect())
        .unwrap_or_default()
}

/// Values of `axis` in first-seen order.
fn values(rows: &[Summary], axis: &str) -> Vec<String> {
    let mut v: Vec<String> = Vec::new();
    for r in rows {
        if let Some(x) = r.params.get(axis) {
            if !v.contains(x) {
                v.push(x.clone());
            }
        }
    }
    v
}

fn coord_key(r: &Summary, axes: &[String]) -> Vec<String> {
    axes.iter()
        .map(|a| r.params.get(a).cloned().unwrap_or_default())
        .collect()
}

fn ms(ns: f64) -> String {
    if ns.is_finite() {
        format!("{:.3}", ns / 1e6)
    } else {
        "-".into()
    }
}

/// The report's sections: a JCT table and one bar chart per combination of the sweep
/// axes but the last (x axis: the last axis; bars: variants), for mean and max JCT. For
/// runs without jobs, the same charts show FCT p99 and goodput. With `replicated` runs
/// (`seeds` > 1) the charts leave the replicate coordinate out and show the mean over
/// the replicates, and two tables give the JCT and the JCT ratios (as `jct.csv`: first
/// over each other, or each over `baseline`) with their 95 % intervals.
pub fn report_sections(
    title: &str,
    rows: &[Summary],
    axis_order: &[String],
    replicated: bool,
    baseline: Option<&str>,
) -> Vec<Section> {
    let vars = variants(rows);
    let run_axes = axes(rows, axis_order);
    // The axes of a point: the replicate coordinate only tells runs of a point apart.
    let axes: Vec<String> = run_axes
        .iter()
        .filter(|a| !(replicated && a.as_str() == REPLICATE_AXIS))
        .cloned()
        .collect();
    let jobs = rows.iter().any(|r| r.jobs > 0);
    let mut out = vec![Section::Text(format!(
        "{} runs of scenario {title}: {} variant(s) ({}) over {}.",
        rows.len(),
        vars.len(),
        vars.join(", "),
        if axes.is_empty() {
            "no sweep".to_string()
        } else {
            axes.join(" x ")
        }
    ))];
    if let Some(h) = crate::output::headline::headline(rows, &axes, replicated, baseline) {
        out.push(h);
    }
    // Table.
    let mut header: Vec<String> = run_axes.clone();
    header.push("variant".into());
    if jobs {
        header.extend(
            [
                "JCT mean (ms)",
                "JCT max (ms)",
                "JCT lower bound (ms)",
                "drops (packets)",
                "PFC pauses (frames)",
            ]
            .map(String::from),
        );
    } else {
        header.extend(
            [
                "FCT p50 (ms)",
                "FCT p99 (ms)",
                "goodput (Gbps)",
                "drops (packets)",
                "PFC pauses (frames)",
            ]
            .map(String::from),
        );
    }
    let mut trs = Vec::new();
    for r in rows {
        let mut row = coord_key(r, &run_axes);
        row.push(r.variant_name.clone());
        if jobs {
            row.extend([
                ms(r.jct_mean_ns),
                ms(r.jct_max_ns),
                ms(r.jct_lower_bound_ns),
                r.drops.to_string(),
                r.pause_frames.to_string(),
            ]);
        } else {
            row.extend([
                ms(r.fct_p50_ns),
                ms(r.fct_p99_ns),
                format!("{:.2}", r.goodput_gbps),
                r.drops.to_string(),
                r.pause_frames.to_string(),
            ]);
        }
        trs.push(row);
    }
    out.push(Section::Table(Table {
        title: "Runs".into(),
        header,
        rows: trs,
    }));
    if replicated && jobs {
        out.extend(replicate_tables(rows, &axes, baseline));
    }
    // Charts.
    let (x_axis, group_axes) = match axes.split_last() {
        Some((x, g)) => (Some(x.clone()), g.to_vec()),
        None => (None, Vec::new()),
    };
    let xs: Vec<String> = match &x_axis {
        Some(x) => values(rows, x),
        None => vec!["run".into()],
    };
    let mut groups: Vec<Vec<String>> = Vec::new();
    for r in rows {
        let g = coord_key(r, &group_axes);
        if !groups.contains(&g) {
            groups.push(g);
        }
    }
    let over_seeds = if replicated {
        " Each bar is the mean over the point's seeds (intervals in the tables above)."
    } else {
        ""
    };
    let metrics: Vec<Metric> = if jobs {
        vec![
            Metric {
                label: "mean JCT (ms)",
                value: |r| r.jct_mean_ns / 1e6,
                note: format!(
                    "Bars: mean job completion time of the run's jobs.{over_seeds} \
                     {JCT_BOUND_NOTE}"
                ),
                bound: Some(|r| r.jct_lower_bound_ns / 1e6),
                refs: Vec::new(),
            },
            Metric {
                label: "max JCT (ms)",
                value: |r| r.jct_max_ns / 1e6,
                note: format!(
                    "Bars: the longest job completion time of the run.{over_seeds} \
                     {JCT_BOUND_NOTE} The slowest job's own bound can be higher."
                ),
                bound: Some(|r| r.jct_lower_bound_ns / 1e6),
                refs: Vec::new(),
            },
        ]
    } else {
        vec![
            Metric {
                label: "FCT p99 (ms)",
                value: |r| r.fct_p99_ns / 1e6,
                note: format!(
                    "Bars: 99th percentile of the flow completion times of the run's \
                     finished flows.{over_seeds} {PERCENTILE_NOTE}"
                ),
                bound: None,
                refs: Vec::new(),
            },
            Metric {
                label: "goodput (Gbps)",
                value: |r| r.goodput_gbps,
                note: format!(
                    "Bars: payload bytes of finished flows × 8 / (last finish − first \
                     start).{over_seeds}"
                ),
                bound: None,
                refs: one_link_goodput(rows),
            },
        ]
    };
    let mut charts = Vec::new();
    for g in &groups {
        let label: Vec<String> = group_axes
            .iter()
            .zip(g)
            .map(|(a, v)| format!("{a} = {v}"))
            .collect();
        if !label.is_empty() {
            charts.push(Section::Heading(label.join(", ")));
        }
        // The mean over a point's replicates (one run without) of `f`, per variant and x.
        let per_point = |f: fn(&Summary) -> f64| -> Vec<Vec<Option<f64>>> {
            vars.iter()
                .map(|v| {
                    xs.iter()
                        .map(|x| {
                            // The mean over the point's replicates (one run without).
                            let ys: Vec<f64> = rows
                                .iter()
                                .filter(|r| {
                                    &r.variant_name == v
                                        && coord_key(r, &group_axes) == *g
                                        && x_axis
                                            .as_ref()
                                            .map(|a| r.params.get(a) == Some(x))
                                            .unwrap_or(true)
                                })
                                .map(f)
                                .filter(|y| y.is_finite())
                                .collect();
                            (!ys.is_empty()).then(|| {
                                if ys.len() == 1 {
                                    ys[0]
                                } else {
                                    ys.iter().sum::<f64>() / ys.len() as f64
                                }
                            })
                        })
                        .collect()
                })
                .collect()
        };
        for m in &metrics {
            if x_axis.is_none() {
                // No sweep: one bar per variant, not one category "run".
                let first =
                    |f| -> Vec<Option<f64>> { per_point(f).into_iter().map(|v| v[0]).collect() };
                // Names too long to share the axis are numbered, the note says which is
                // which.
                let long = vars.iter().map(|v| v.chars().count()).sum::<usize>() > 80;
                let (x_label, categories, key) = if long {
                    let key: Vec<String> = vars
                        .iter()
                        .enumerate()
                        .map(|(i, v)| format!("{} = {v}", i + 1))
                        .collect();
                    (
                        "variant (numbered in the note)".to_string(),
                        (1..=vars.len()).map(|i| i.to_string()).collect(),
                        format!(" Variants: {}.", key.join(", ")),
                    )
                } else {
                    ("variant".to_string(), vars.clone(), String::new())
                };
                charts.push(Section::Bar(BarChart {
                    title: m.label.to_string(),
                    x_label,
                    y_label: m.label.to_string(),
                    categories,
                    series: vec![(m.label.to_string(), first(m.value))],
                    bound: m.bound.map(|b| Bound {
                        name: JCT_BOUND.into(),
                        values: vec![first(b)],
                    }),
                    refs: m.refs.clone(),
                    note: format!("{}{key}", m.note),
                }));
                continue;
            }
            let series = vars
                .iter()
                .map(|v| {
                    if v.is_empty() {
                        "run".to_string()
                    } else {
                        v.clone()
                    }
                })
                .zip(per_point(m.value))
                .collect();
            charts.push(Section::Bar(BarChart {
                title: format!(
                    "{}{}",
                    m.label,
                    if label.is_empty() {
                        String::new()
                    } else {
                        format!(" — {}", label.join(", "))
                    }
                ),
                x_label: x_axis.clone().unwrap_or_default(),
                y_label: m.label.to_string(),
                categories: xs.clone(),
                series,
                bound: m.bound.map(|b| Bound {
                    name: JCT_BOUND.into(),
                    values: per_point(b),
                }),
                refs: m.refs.clone(),
                note: m.note.clone(),
            }));
        }
    }
    // Many points: their charts fold under one line, the headline says the result.
    if groups.len() > 1 {
        out.push(Section::Details(
            format!(
                "{} per sweep point ({} charts)",
                metrics
                    .iter()
                    .map(|m| m.label)
                    .collect::<Vec<_>>()
                    .join(" and "),
                charts
                    .iter()
                    .filter(|c| !matches!(c, Section::Heading(_)))
                    .count()
            ),
            charts,
        ));
    } else {
        out.push(Section::Heading("Per variant".into()));
        out.extend(charts);
    }
    out.extend(slowdown_sections(rows, &axes, !jobs));
    out.extend(dynamics_sections(rows));
    out
}

/// Mean +- 95 % half-width as text (`-` when undefined).
fn pm(m: &MeanInterval, scale: f64, decimals: usize) -> [String; 2] {
    let cell = |v: f64| {
        if v.is_finite() {
            format!("{:.*}", decimals, v / scale)
        } else {
            "-".into()
        }
    };
    [cell(m.mean), cell(m.half_width)]
}

/// JCT per point and variant, and JCT ratios per point, over replicates.
fn replicate_tables(rows: &[Summary], axes: &[String], baseline: Option<&str>) -> Vec<Section> {
    use crate::output::jct;
    let vars = jct::variants(rows);
    let pairs = jct::ratio_pairs(&vars, baseline);
    let points = jct::points(rows, axes);
    let mut header: Vec<String> = axes.to_vec();
    header.extend(
        [
            "variant",
            "runs (count)",
            "JCT mean (ms)",
            "± 95 % (ms)",
            "JCT max (ms)",
            "± 95 % (ms)",
        ]
        .map(String::from),
    );
    let mut trs = Vec::new();
    for (k, p) in &points {
        for v in &vars {
            let runs = p.get(v).map(Vec::as_slice).unwrap_or(&[]);
            let mut row: Vec<String> = k.iter().map(|s| s.to_string()).collect();
            row.push(v.to_string());
            row.push(runs.len().to_string());
            row.extend(pm(&jct::over(runs, |r| r.jct_mean_ns), 1e6, 3));
            row.extend(pm(&jct::over(runs, |r| r.jct_max_ns), 1e6, 3));
            trs.push(row);
        }
    }
    let mut rheader: Vec<String> = axes.to_vec();
    rheader.extend(
        [
            "ratio",
            "mean-JCT ratio (×)",
            "± 95 % (×)",
            "max-JCT ratio (×)",
            "± 95 % (×)",
        ]
        .map(String::from),
    );
    let mut rrows = Vec::new();
    for (k, p) in &points {
        for (a, b) in &pairs {
            let ra = p.get(a).map(Vec::as_slice).unwrap_or(&[]);
            let rb = p.get(b).map(Vec::as_slice).unwrap_or(&[]);
            let mut row: Vec<String> = k.iter().map(|s| s.to_string()).collect();
            row.push(format!("{a} / {b}"));
            row.extend(pm(
                &mean_interval(&jct::paired_ratios(ra, rb, |r| r.jct_mean_ns)),
                1.0,
                3,
            ));
            row.extend(pm(
                &mean_interval(&jct::paired_ratios(ra, rb, |r| r.jct_max_ns)),
                1.0,
                3,
            ));
            rrows.push(row);
        }
    }
    vec![
        Section::Table(Table {
            title: "JCT over seeds: mean and 95 % t-interval half-width".into(),
            header,
            rows: trs,
        }),
        Section::Table(Table {
            title: "JCT ratios over seeds (paired by seed): mean and 95 % t-interval \
                    half-width"
                .into(),
            header: rheader,
            rows: rrows,
        }),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(variant: &str, size: &str, rep: u32, jct_ms: f64) -> Summary {
        let mut s = Summary {
            variant_name: variant.into(),
            jobs: 1,
            jct_mean_ns: jct_ms * 1e6,
            jct_max_ns: jct_ms * 1e6,
            jct_lower_bound_ns: 1e6,
            ..Summary::default()
        };
        s.params.insert("size".into(), size.into());
        s.params.insert(REPLICATE_AXIS.into(), rep.to_string());
        s
    }

    #[test]
    fn replicated_runs_chart_the_mean_and_tabulate_intervals() {
        // a: 1..5 ms over the replicates, b: 1 ms; one size.
        let mut rows: Vec<Summary> = (1..=5).map(|r| run("a", "1", r, r as f64)).collect();
        rows.extend((1..=5).map(|r| run("b", "1", r, 1.0)));
        let axes = vec!["size".to_string(), REPLICATE_AXIS.to_string()];
        let s = report_sections("t", &rows, &axes, true, Some("b"));
        // Bars: x is the size (not the replicate), the value the mean (3 ms).
        let bar = s
            .iter()
            .find_map(|x| match x {
                Section::Bar(b) => Some(b),
                _ => None,
            })
            .expect("a chart");
        assert_eq!(bar.x_label, "size");
        assert_eq!(bar.categories, vec!["1".to_string()]);
        assert_eq!(bar.series[0].1, vec![Some(3.0)]);
        let tables: Vec<&Table> = s
            .iter()
            .filter_map(|x| match x {
                Section::Table(t) => Some(t),
                _ => None,
            })
            .collect();
        let jct = tables
            .iter()
            .find(|t| t.title.starts_with("JCT over seeds"))
            .expect("JCT table");
        // size, variant, runs, mean, +-, max, +-: a's half-width 2.776 sqrt(0.5).
        assert_eq!(jct.rows[0][..4], ["1", "a", "5", "3.000"].map(String::from));
        assert_eq!(jct.rows[0][4], format!("{:.3}", 2.776 * 0.5f64.sqrt()));
        let ratios = tables
            .iter()
            .find(|t| t.title.starts_with("JCT ratios"))
            .expect("ratio table");
        assert_eq!(ratios.rows.len(), 1, "a over the baseline b only");
        assert_eq!(ratios.rows[0][1], "a / b");
        assert_eq!(ratios.rows[0][2], "3.000");
        // Without replicates neither table appears.
        let plain: Vec<Summary> = rows
            .iter()
            .filter(|r| r.params[REPLICATE_AXIS] == "1")
            .cloned()
            .collect();
        let s = report_sections("t", &plain, &axes[..1], false, None);
        assert!(!s
            .iter()
            .any(|x| matches!(x, Section::Table(t) if t.title.contains("over seeds"))));
    }
}
