//! The sections of a run's `report.html`: an overview, the slowdown table and charts, the
//! busiest switch ports, and the sending rate and queue over time.

use super::buckets::SizeBuckets;
use super::series::{cdf_points, queue_series, rate_series, MAX_SERIES_POINTS};
use super::slowdown::{bucket_stats, finished_flows, sorted_slowdowns};
use super::slowdown_charts::{buckets_chart, buckets_table, cdf_chart};
use crate::report::{LineChart, Section, Table};
use crate::results::Summary;
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
            "max queue (B)",
            "PFC pauses sent",
            "PFC pauses received",
            "paused time",
            "drops",
            "ECN marks",
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
                        sim.port_node_name(crate::ids::PortId(i as u32)),
                        p.local
                    ),
                    p.max_queue_bytes.to_string(),
                    p.stats.pause_frames_sent.to_string(),
                    p.stats.pause_frames_received.to_string(),
                    crate::units::fmt_time(p.stats.paused_ps),
                    p.stats.drops.to_string(),
                    p.stats.ecn_marked.to_string(),
                ]
            })
            .collect(),
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
        crate::units::fmt_time(sim.ctx.now),
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
        out.push(Section::Line(LineChart::over_time(
            format!(
                "Sending rate per flow ({} of {n} flows, most samples)",
                series.len()
            ),
            "rate (Gbps)",
            series,
        )));
    }
    if !sim.record.queue_samples.is_empty() {
        let series = queue_series(sim, MAX_QUEUE_PORTS);
        out.push(Section::Line(LineChart::over_time(
            format!(
                "Switch egress queue ({} ports with the largest queues)",
                series.len()
            ),
            "queue (bytes)",
            series,
        )));
    }
    out
}
