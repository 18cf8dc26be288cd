//! The sections of a run's `report.html`: an overview, the result (JCT per job, or the
//! slowdown per flow size), the slowdown table and CDF, the busiest switch ports, the
//! sending rate and queue over time, and the PFC pause timeline.

use crate::analysis::metrics::{
    bucket_stats, buckets_chart, buckets_table, cdf_chart, cdf_points, finished_flows,
    queue_series, rate_series, sorted_slowdowns, SizeBuckets, MAX_SERIES_POINTS,
};
use crate::base::charts::{BarChart, Bound, LineChart, Section, Table};
use crate::output::Summary;
use crate::sim::Simulation;

/// Most flows in the rate-vs-time chart.
pub const MAX_RATE_FLOWS: usize = 16;
/// Most ports in the queue-vs-time chart (one panel).
pub const MAX_QUEUE_PORTS: usize = crate::base::charts::MAX_SERIES_PER_PANEL;

/// Top switch ports by largest queue (then paused time): queue, PFC and drop counters.
fn ports_table(sim: &Simulation, max_rows: usize) -> Option<Table> {
    let mut ids: Vec<usize> = (0..sim.fabric.ports.len())
        .filter(|&i| {
            let p = &sim.fabric.ports[i];
            p.max_queue_bytes > 0 || p.stats.pause_frames_sent > 0 || p.stats.paused_ps > 0
        })
        .collect();
    if ids.is_empty() {
        return None;
    }
    ids.sort_by_key(|&i| {
        let p = &sim.fabric.ports[i];
        (
            std::cmp::Reverse(p.max_queue_bytes),
            std::cmp::Reverse(p.stats.paused_ps),
            i,
        )
    });
    let total = ids.len();
    ids.truncate(max_rows);
    Some(Table {
        title: format!(
            "Ports by largest queue ({} of {total} with queueing or PFC)",
            ids.len()
        ),
        header: [
            "port",
            "max queue (bytes)",
            "PFC pauses sent (frames)",
            "PFC pauses received (frames)",
            "paused time (µs)",
            "drops (packets)",
            "ECN marks (packets)",
        ]
        .map(String::from)
        .to_vec(),
        rows: ids
            .into_iter()
            .map(|i| {
                let p = &sim.fabric.ports[i];
                vec![
                    format!(
                        "{}:{}",
                        sim.port_node_name(crate::base::ids::PortId(i as u32)),
                        p.local
                    ),
                    p.max_queue_bytes.to_string(),
                    p.stats.pause_frames_sent.to_string(),
                    p.stats.pause_frames_received.to_string(),
                    format!("{:.1}", p.stats.paused_ps as f64 / 1e6),
                    p.stats.drops.to_string(),
                    p.stats.ecn_marked.to_string(),
                ]
            })
            .collect(),
    })
}

/// Most jobs in the JCT chart of a run.
pub const MAX_JCT_JOBS: usize = 40;

/// JCT of each job (the first [`MAX_JCT_JOBS`]) with its analytic lower bound as a mark,
/// when the run has collective jobs.
fn jct_chart(sim: &Simulation) -> Option<BarChart> {
    let n = sim.nics.jobs.len();
    if n == 0 {
        return None;
    }
    let shown = n.min(MAX_JCT_JOBS);
    let ms = |t: crate::base::units::Time| t as f64 / 1e9;
    Some(BarChart {
        title: if shown < n {
            format!("Job completion time (first {shown} of {n} jobs)")
        } else {
            "Job completion time per job".into()
        },
        x_label: "job (index, as in jobs.csv)".into(),
        y_label: "JCT (ms)".into(),
        categories: (0..shown).map(|j| j.to_string()).collect(),
        series: vec![(
            "JCT".into(),
            (0..shown).map(|j| sim.jct(j).map(ms)).collect(),
        )],
        bound: Some(Bound {
            name: "JCT lower bound".into(),
            values: vec![(0..shown)
                .map(|j| Some(ms(sim.job_lower_bound(j))))
                .collect()],
        }),
        refs: Vec::new(),
        note: "Bars: each job's completion time (a job that did not finish has no bar). \
               Black marks: its analytic lower bound (the collective with every message at \
               its ideal FCT on an idle fabric), as lower_bound_ns in jobs.csv."
            .into(),
    })
}

/// Title of a run's `report.html`.
pub fn run_report_title(summary: &Summary) -> String {
    if summary.variant.is_empty() || summary.variant == summary.scenario {
        summary.scenario.clone()
    } else {
        format!("{}: {}", summary.scenario, summary.variant)
    }
}

/// Sections of a run's `report.html`: an overview, the JCT per job (when the run has
/// jobs), the slowdown per size bucket (the headline of a run of flows), the bucket
/// table and a slowdown CDF (when flows finished), the busiest ports, then rate vs
/// time per flow with the line rate (when rates were recorded), queue vs time per port
/// (when queues were recorded and non-empty) and the PFC pause timeline (when a port was
/// found paused at a queue sampling instant).
pub fn run_report_sections(sim: &Simulation, summary: &Summary) -> Vec<Section> {
    let flows = finished_flows(sim);
    let stats = bucket_stats(&SizeBuckets::default(), &flows);
    let mut out = vec![Section::Text(format!(
        "Run {} of scenario {}: outcome {}, {} of {} flows finished, simulated time {}. \
         Slowdown is FCT / ideal FCT of finished flows; size buckets are by flow payload \
         (decimal units).",
        summary.variant,
        summary.scenario,
        summary.outcome,
        summary.flows_completed,
        summary.flows,
        crate::base::units::fmt_time(sim.ctx.now),
    ))];
    // The result first: the jobs' completion times, else the flows' slowdown by size.
    let jct = jct_chart(sim);
    let has_jct = jct.is_some();
    if let Some(c) = jct {
        out.push(Section::Bar(c));
    }
    if flows.is_empty() {
        out.push(Section::Text(
            "No flow finished: no slowdown charts.".into(),
        ));
    } else {
        let mut by_size = buckets_chart(&stats);
        if !has_jct {
            by_size.title = format!("Headline: {}", by_size.title);
        }
        out.push(Section::Bar(by_size));
        out.push(Section::Table(buckets_table(&stats)));
        let cdf = cdf_points(&sorted_slowdowns(&flows), MAX_SERIES_POINTS);
        out.push(Section::Line(cdf_chart(
            "CDF of slowdown",
            vec![("all flows".into(), cdf)],
        )));
    }
    if let Some(t) = ports_table(sim, 16) {
        out.push(Section::Table(t));
    }
    if !sim.record.rate_samples.is_empty() {
        let series = rate_series(sim, MAX_RATE_FLOWS);
        let n = sim
            .record
            .rate_samples
            .iter()
            .map(|r| r.flow)
            .collect::<std::collections::BTreeSet<_>>()
            .len();
        let mut c = LineChart::over_time(
            format!(
                "Sending rate per flow ({} of {n} flows, most samples)",
                series.len()
            ),
            "rate (Gbps)",
            series,
        );
        c.note = crate::output::sweep_report::RATE_NOTE.into();
        let line = crate::output::summary::host_rate_gbps(sim);
        if line.is_finite() {
            c.refs.push(crate::output::sweep_report::line_rate(line));
        }
        out.push(Section::Line(c));
    }
    if !sim.record.queue_samples.is_empty() {
        let series: Vec<_> = queue_series(sim, MAX_QUEUE_PORTS)
            .into_iter()
            .map(|(port, pts)| (port, pts.into_iter().map(|(t, b)| (t, b / 1e3)).collect()))
            .collect();
        let mut c = LineChart::over_time(
            format!(
                "Switch egress queue per port ({} ports with the largest queues)",
                series.len()
            ),
            "queue (KB)",
            series,
        );
        c.note = format!(
            "{} Each line is one port, named node:port. 1 KB = 1000 bytes.",
            crate::output::sweep_report::QUEUE_NOTE
        );
        out.push(Section::Line(c));
    }
    if let Some(c) = crate::output::pause_timeline::pause_timeline(sim) {
        out.push(Section::Line(c));
    }
    out
}
