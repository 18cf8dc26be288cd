//! The dynamics part of a sweep's report: PFC and queue figures per run, the
//! convergence and window tables, and overlays of a few runs' rates and queues.

use super::*;

pub(super) fn opt_us(ns: Option<f64>) -> String {
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
pub(super) fn one_link_goodput(rows: &[Summary]) -> Vec<RefLine> {
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
pub(super) fn queues_per_port(rows: &[Summary]) -> LineChart {
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
