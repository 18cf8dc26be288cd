//! The sections of a run's `report.html`: an overview, the slowdown table and charts, the
//! busiest switch ports, and the sending rate and queue over time.

use crate::analysis::metrics::{
    bucket_stats, buckets_chart, buckets_table, cdf_chart, cdf_points, finished_flows,
    queue_series, rate_series, sorted_slowdowns, SizeBuckets, MAX_SERIES_POINTS,
};
use crate::base::charts::{BarChart, Bound, LineChart, Section, Table};
use crate::output::Summary;
use crate::sim::Simulation;

/// Most flows in the rate-vs-time chart.
pub const MAX_RATE_FLOWS: usize = 16;
/// Most ports in the queue-vs-time chart.
pub const MAX_QUEUE_PORTS: usize = 8;

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

/// Sections of a run's `report.html`: an overview, the bucket table, a slowdown CDF and
/// a slowdown-per-bucket chart (when flows finished), the busiest ports, then rate vs
/// time per flow (when rates were recorded) and queue vs time per port (when queues
/// were recorded and non-empty).
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
    out.push(Section::Table(buckets_table(&stats)));
    if flows.is_empty() {
        out.push(Section::Text(
            "No flow finished: no slowdown charts.".into(),
        ));
    } else {
        let cdf = cdf_points(&sorted_slowdowns(&flows), MAX_SERIES_POINTS);
        out.push(Section::Line(cdf_chart(
            "CDF of slowdown",
            vec![("all flows".into(), cdf)],
        )));
        out.push(Section::Bar(buckets_chart(&stats)));
    }
    if let Some(c) = jct_chart(sim) {
        out.push(Section::Bar(c));
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
        out.push(Section::Line(c));
    }
    if !sim.record.queue_samples.is_empty() {
        let series = queue_series(sim, MAX_QUEUE_PORTS);
        let mut c = LineChart::over_time(
            format!(
                "Switch egress queue ({} ports with the largest queues)",
                series.len()
            ),
            "queue (bytes)",
            series,
        );
        c.note = crate::output::sweep_report::QUEUE_NOTE.into();
        out.push(Section::Line(c));
    }
    out
}
