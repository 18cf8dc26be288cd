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

fn opt_us(ns: Option<f64>) -> String {
    ns.map_or("-".into(), |v| format!("{:.1}", v / 1000.0))
}

/// PFC and queues per run; convergence and window tables; rate and queue overlays.
pub fn dynamics_sections(rows: &[Summary]) -> Vec<Section> {
    let mut out = Vec::new();
    if rows.is_empty() {
        return out;
    }
    out.push(Section::Heading("PFC, queues and dynamics".into()));
    let tcd = rows.iter().any(|r| r.tcd_ce_marks + r.tcd_ue_marks > 0);
    let mut header: Vec<String> = [
        "run",
        "PFC pauses (frames)",
        "paused (µs, all ports)",
        "max queue (KB)",
        "mean queue, busiest port (KB)",
    ]
    .map(String::from)
    .to_vec();
    if tcd {
        header.extend(["TCD CE marks (packets)", "TCD UE marks (packets)"].map(String::from));
    }
    out.push(Section::Table(Table {
        title: "PFC and switch queues per run".into(),
        header,
        rows: rows
            .iter()
            .map(|r| {
                let mut row = vec![
                    run_label(r),
                    r.pause_frames.to_string(),
                    format!("{:.1}", r.paused_ns / 1000.0),
                    format!("{:.1}", r.max_queue_bytes as f64 / 1000.0),
                    format!("{:.1}", r.mean_queue_bytes / 1000.0),
                ];
                if tcd {
                    row.push(r.tcd_ce_marks.to_string());
                    row.push(r.tcd_ue_marks.to_string());
                }
                row
            })
            .collect(),
    }));
    if rows.iter().any(|r| r.convergence.is_some()) {
        out.push(Section::Table(Table {
            title: "Convergence after the join (controller rates, from rates.csv)".into(),
            header: [
                "run",
                "fair share (Gbps)",
                "tolerance (fraction of fair share)",
                "time to cut (µs)",
                "time to fair share (µs)",
            ]
            .map(String::from)
            .to_vec(),
            rows: rows
                .iter()
                .filter_map(|r| {
                    let c = r.convergence.as_ref()?;
                    Some(vec![
                        run_label(r),
                        format!("{:.3}", c.fair_share_gbps),
                        format!("{:.2}", c.tolerance),
                        opt_us(c.time_to_cut_ns),
                        opt_us(c.time_to_fair_ns),
                    ])
                })
                .collect(),
        }));
    }
    if let Some(first) = rows.iter().find_map(|r| r.window.as_ref()) {
        let mut header = vec!["run".to_string()];
        for w in &first.rows {
            if w.goodput_gbps.is_some() {
                header.push(format!("{} goodput (Gbps)", w.what));
            } else {
                header.push(format!("{} mean queue (KB)", w.what));
                header.push(format!("{} max queue (KB)", w.what));
            }
        }
        out.push(Section::Table(Table {
            title: format!(
                "Window {:.3} ms to {:.3} ms",
                first.from_ns / 1e6,
                first.to_ns / 1e6
            ),
            header,
            rows: rows
                .iter()
                .filter_map(|r| {
                    let w = r.window.as_ref()?;
                    let mut row = vec![run_label(r)];
                    for x in &w.rows {
                        if let Some(g) = x.goodput_gbps {
                            row.push(format!("{g:.2}"));
                        } else {
                            row.push(format!("{:.1}", x.mean_queue_bytes.unwrap_or(0.0) / 1e3));
                            row.push(format!(
                                "{:.1}",
                                x.max_queue_bytes.unwrap_or(0) as f64 / 1e3
                            ));
                        }
                    }
                    Some(row)
                })
                .collect(),
        }));
    }
    // Each run's series, named "<run>: <series>", in one chart; with more series than a
    // panel holds, one panel per run, named by the run (the series by their own name).
    let overlay = |title: &str, y_label: &str, pick: fn(&Summary) -> &[Series], note: &str| {
        let total: usize = rows.iter().map(|r| pick(r).len()).sum();
        let per_run = total > crate::base::charts::MAX_SERIES_PER_PANEL;
        let mut c = LineChart::over_time(
            title,
            y_label,
            rows.iter()
                .flat_map(|r| {
                    pick(r).iter().map(move |(name, pts)| {
                        let name = if per_run {
                            name.clone()
                        } else {
                            format!("{}: {name}", run_label(r))
                        };
                        (name, pts.clone())
                    })
                })
                .collect(),
        );
        c.groups = rows
            .iter()
            .flat_map(|r| std::iter::repeat_n(run_label(r), pick(r).len()))
            .collect();
        c.note = note.to_string();
        c
    };
    let with_rates = rows.iter().filter(|r| !r.rate_series.is_empty()).count();
    let with_queues = rows.iter().filter(|r| !r.queue_series.is_empty()).count();
    if rows.len() <= MAX_SERIES_RUNS {
        if with_rates > 0 {
            let mut c = overlay(
                "Sending rate per flow, every run",
                "rate (Gbps)",
                |r| r.rate_series.as_slice(),
                RATE_NOTE,
            );
            let line = rows
                .iter()
                .map(|r| r.host_rate_gbps)
                .filter(|g| g.is_finite())
                .fold(f64::NAN, f64::max);
            if line.is_finite() {
                c.refs.push(line_rate(line));
            }
            out.push(Section::Line(c));
        }
        if with_queues > 0 {
            out.push(Section::Line(queues_per_port(rows)));
        }
    }
    if (with_rates > 0 || with_queues > 0) && rows.len() > MAX_SERIES_RUNS {
        out.push(Section::Text(format!(
            "{} runs: too many to overlay their rate and queue series (at most \
             {MAX_SERIES_RUNS}); each run's own report.html has them.",
            rows.len()
        )));
    }
    out
}

/// The line rate of a host port as a reference for goodput, when some run has a goodput
/// and none exceeds it (the runs' traffic meets at one host link, as in an incast); else none,
/// as a fabric-wide goodput is not bounded by one link.
fn one_link_goodput(rows: &[Summary]) -> Vec<RefLine> {
    let line = rows
        .iter()
        .map(|r| r.host_rate_gbps)
        .filter(|g| g.is_finite())
        .fold(f64::NAN, f64::max);
    // A NaN goodput (no finished flow) does not exceed the line.
    let under = rows
        .iter()
        .all(|r| r.goodput_gbps.is_nan() || r.goodput_gbps <= line);
    let any = rows.iter().any(|r| r.goodput_gbps.is_finite());
    if line.is_finite() && under && any {
        vec![RefLine {
            name: format!("a host's line rate ({line} Gbps)"),
            y: line,
        }]
    } else {
        Vec::new()
    }
}

/// The reference line of rate charts: a host port's line rate.
pub fn line_rate(gbps: f64) -> RefLine {
    RefLine {
        name: format!("line rate {gbps} Gbps"),
        y: gbps,
    }
}

/// Each run's longest switch queue, in KB, one panel per port (named `node:port`), the
/// runs whose longest queue is at that port overlaid in it.
fn queues_per_port(rows: &[Summary]) -> LineChart {
    let mut c = LineChart::over_time(
        "Longest switch queue of each run, per port",
        "queue (KB)",
        Vec::new(),
    );
    for r in rows {
        for (port, pts) in &r.queue_series {
            c.series.push((
                run_label(r),
                pts.iter().map(|&(t, b)| (t, b / 1e3)).collect(),
            ));
            c.groups.push(format!("port {port}"));
        }
    }
    // Panels in port order, whatever the runs' order.
    let mut idx: Vec<usize> = (0..c.series.len()).collect();
    idx.sort_by(|&a, &b| c.groups[a].cmp(&c.groups[b]).then(a.cmp(&b)));
    c.series = idx.iter().map(|&i| c.series[i].clone()).collect();
    c.groups = idx.iter().map(|&i| c.groups[i].clone()).collect();
    c.split_groups = true;
    c.note = format!(
        "{QUEUE_NOTE} Each run's port with the largest sampled queue; one panel per \
         port, so that only queues of one port share an axis. 1 KB = 1000 bytes."
    );
    c
}

fn cell(v: f64) -> String {
    if v.is_finite() {
        format!("{v:.2}")
    } else {
        "-".into()
    }
}

/// Bucket labels of the runs (all runs use the default buckets) that hold a finished flow
/// in some run, then `all`.
fn bucket_labels(rows: &[Summary]) -> Vec<String> {
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
fn bucket_quantiles(r: &Summary, label: &str) -> (f64, f64) {
    if label == crate::analysis::metrics::ALL {
        return (r.slowdown_p50, r.slowdown_p99);
    }
    r.slowdown_buckets
        .iter()
        .find(|b| b.bucket == label)
        .map_or((f64::NAN, f64::NAN), |b| (b.slowdown_p50, b.slowdown_p99))
}

/// Name of a run in legends: its folder name (variant and sweep point).
fn run_label(r: &Summary) -> String {
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
