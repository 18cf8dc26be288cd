//! Derived metrics of a run: FCT slowdown (FCT / ideal FCT) per flow-size bucket, the
//! slowdown CDF, and the per-run `report.html` (slowdown CDF, slowdown per size bucket,
//! rate vs time per flow, queue vs time per port).
//!
//! Size buckets are half-open byte ranges cut at increasing edges; the default edges
//! 10 KB, 100 KB and 1 MB (decimal) give `<10KB`, `10KB-100KB`, `100KB-1MB` and `>=1MB`.
//! A flow of exactly 10_000 bytes is in `10KB-100KB`. Only finished flows count.
//!
//! Quantiles are [`crate::results::quantile`] (nearest rank). Everything here is a pure
//! function of the simulation's state: series are chosen and ordered by ids, never by
//! hash-map order, and long series are thinned deterministically.

use crate::report::{BarChart, LineChart, Section, Table};
use crate::results::{quantile, Summary};
use crate::sim::Simulation;
use crate::units::Time;
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// Default bucket edges in bytes: 10 KB, 100 KB, 1 MB.
pub const DEFAULT_EDGES: [u64; 3] = [10_000, 100_000, 1_000_000];

/// Name of the bucket that holds every flow.
pub const ALL: &str = "all";

/// Header of `buckets.csv`.
pub const BUCKETS_CSV_HEADER: &str =
    "bucket,flows,slowdown_p50,slowdown_p95,slowdown_p99,fct_p50_ns,fct_p99_ns,slowdown_mean,fct_mean_ns";

/// Most points of one series in a chart.
pub const MAX_SERIES_POINTS: usize = 2000;
/// Most points of all series of one chart together.
pub const MAX_CHART_POINTS: usize = 8000;
/// Most flows in the rate-vs-time chart.
pub const MAX_RATE_FLOWS: usize = 16;
/// Most ports in the queue-vs-time chart.
pub const MAX_QUEUE_PORTS: usize = 8;
/// Points of the slowdown CDF kept in a [`Summary`] (for the multi-run overlay).
pub const SUMMARY_CDF_POINTS: usize = 400;

/// Flow-size buckets: `edges.len() + 1` half-open ranges `[edge[i-1], edge[i])`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SizeBuckets {
    edges: Vec<u64>,
}

impl Default for SizeBuckets {
    fn default() -> Self {
        SizeBuckets {
            edges: DEFAULT_EDGES.to_vec(),
        }
    }
}

/// Decimal size with the largest unit that divides it ("10KB", "1MB", "1500B").
fn fmt_decimal(b: u64) -> String {
    for (unit, div) in [("GB", 1_000_000_000), ("MB", 1_000_000), ("KB", 1_000)] {
        if b >= div && b.is_multiple_of(div) {
            return format!("{}{unit}", b / div);
        }
    }
    format!("{b}B")
}

impl SizeBuckets {
    /// Buckets cut at `edges` (bytes, strictly increasing, all > 0); `None` otherwise.
    pub fn new(edges: Vec<u64>) -> Option<Self> {
        if edges.first() == Some(&0) || edges.windows(2).any(|w| w[0] >= w[1]) {
            return None;
        }
        Some(SizeBuckets { edges })
    }

    /// The edges in bytes.
    pub fn edges(&self) -> &[u64] {
        &self.edges
    }

    /// Number of buckets (edges + 1).
    pub fn len(&self) -> usize {
        self.edges.len() + 1
    }

    /// Always false: there is at least one bucket.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// Bucket of a flow of `size` bytes.
    pub fn index(&self, size: u64) -> usize {
        self.edges.partition_point(|&e| e <= size)
    }

    /// Human label: `<10KB`, `10KB-100KB`, `>=1MB` (`all` for a single bucket).
    pub fn label(&self, i: usize) -> String {
        let n = self.edges.len();
        if n == 0 {
            ALL.to_string()
        } else if i == 0 {
            format!("<{}", fmt_decimal(self.edges[0]))
        } else if i >= n {
            format!(">={}", fmt_decimal(self.edges[n - 1]))
        } else {
            format!(
                "{}-{}",
                fmt_decimal(self.edges[i - 1]),
                fmt_decimal(self.edges[i])
            )
        }
    }

    /// Column-name friendly label: `lt10KB`, `10KB_100KB`, `ge1MB`.
    pub fn key(&self, i: usize) -> String {
        self.label(i)
            .replace(">=", "ge")
            .replace('<', "lt")
            .replace('-', "_")
    }

    /// Every label in order.
    pub fn labels(&self) -> Vec<String> {
        (0..self.len()).map(|i| self.label(i)).collect()
    }
}

/// A finished flow as the metrics see it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FlowOutcome {
    /// Flow id.
    pub id: u32,
    /// Payload bytes.
    pub size: u64,
    /// Flow completion time (ps).
    pub fct: Time,
    /// Ideal FCT (ps).
    pub ideal: Time,
}

impl FlowOutcome {
    /// FCT / ideal FCT.
    pub fn slowdown(&self) -> f64 {
        self.fct as f64 / self.ideal as f64
    }
}

/// Finished flows of a run, in flow-id order.
pub fn finished_flows(sim: &Simulation) -> Vec<FlowOutcome> {
    sim.flows
        .iter()
        .enumerate()
        .filter_map(|(i, f)| {
            f.finish.map(|t| FlowOutcome {
                id: i as u32,
                size: f.spec.size,
                fct: t - f.spec.start,
                ideal: sim.ideal[i],
            })
        })
        .collect()
}

/// Slowdown and FCT quantiles of the finished flows of one bucket (or of all).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct BucketStats {
    /// Bucket label, or `all`.
    pub bucket: String,
    /// Finished flows in the bucket.
    pub flows: usize,
    /// Median slowdown (NaN when the bucket is empty).
    pub slowdown_p50: f64,
    /// 95th percentile slowdown.
    pub slowdown_p95: f64,
    /// 99th percentile slowdown.
    pub slowdown_p99: f64,
    /// Median FCT (ns).
    pub fct_p50_ns: f64,
    /// 99th percentile FCT (ns).
    pub fct_p99_ns: f64,
    /// Mean slowdown.
    pub slowdown_mean: f64,
    /// Mean FCT (ns).
    pub fct_mean_ns: f64,
}

/// The per-bucket part of `summary.json`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct BucketSlowdown {
    /// Bucket label.
    pub bucket: String,
    /// Finished flows in the bucket.
    pub flows: usize,
    /// Median slowdown (null when the bucket is empty).
    pub slowdown_p50: f64,
    /// 99th percentile slowdown.
    pub slowdown_p99: f64,
    /// Mean slowdown.
    pub slowdown_mean: f64,
    /// Mean FCT (ns).
    pub fct_mean_ns: f64,
}

impl From<&BucketStats> for BucketSlowdown {
    fn from(b: &BucketStats) -> Self {
        BucketSlowdown {
            bucket: b.bucket.clone(),
            flows: b.flows,
            slowdown_p50: b.slowdown_p50,
            slowdown_p99: b.slowdown_p99,
            slowdown_mean: b.slowdown_mean,
            fct_mean_ns: b.fct_mean_ns,
        }
    }
}

/// Mean of `v` (NaN when empty).
pub fn mean(v: &[f64]) -> f64 {
    if v.is_empty() {
        f64::NAN
    } else {
        v.iter().sum::<f64>() / v.len() as f64
    }
}

fn stats_of(bucket: String, flows: &[&FlowOutcome]) -> BucketStats {
    let mut slow: Vec<f64> = flows.iter().map(|f| f.slowdown()).collect();
    let mut fct: Vec<f64> = flows.iter().map(|f| f.fct as f64).collect();
    slow.sort_by(f64::total_cmp);
    fct.sort_by(f64::total_cmp);
    BucketStats {
        bucket,
        flows: flows.len(),
        slowdown_p50: quantile(&slow, 0.5),
        slowdown_p95: quantile(&slow, 0.95),
        slowdown_p99: quantile(&slow, 0.99),
        fct_p50_ns: quantile(&fct, 0.5) / 1000.0,
        fct_p99_ns: quantile(&fct, 0.99) / 1000.0,
        slowdown_mean: mean(&slow),
        fct_mean_ns: mean(&fct) / 1000.0,
    }
}

/// One [`BucketStats`] per bucket in order, then one for all flows (`all`).
pub fn bucket_stats(buckets: &SizeBuckets, flows: &[FlowOutcome]) -> Vec<BucketStats> {
    let mut per: Vec<Vec<&FlowOutcome>> = vec![Vec::new(); buckets.len()];
    for f in flows {
        per[buckets.index(f.size)].push(f);
    }
    let mut out: Vec<BucketStats> = per
        .iter()
        .enumerate()
        .map(|(i, fs)| stats_of(buckets.label(i), fs))
        .collect();
    out.push(stats_of(ALL.to_string(), &flows.iter().collect::<Vec<_>>()));
    out
}

fn cell(v: f64, decimals: usize) -> String {
    if v.is_finite() {
        format!("{v:.decimals$}")
    } else {
        String::new()
    }
}

/// `buckets.csv`: [`BUCKETS_CSV_HEADER`], then one row per bucket and `all`. Empty
/// buckets have empty quantile cells.
pub fn buckets_csv(stats: &[BucketStats]) -> String {
    let mut s = String::from(BUCKETS_CSV_HEADER);
    s.push('\n');
    for b in stats {
        let _ = writeln!(
            s,
            "{},{},{},{},{},{},{},{},{}",
            b.bucket,
            b.flows,
            cell(b.slowdown_p50, 6),
            cell(b.slowdown_p95, 6),
            cell(b.slowdown_p99, 6),
            cell(b.fct_p50_ns, 3),
            cell(b.fct_p99_ns, 3),
            cell(b.slowdown_mean, 6),
            cell(b.fct_mean_ns, 3)
        );
    }
    s
}

/// Sorted slowdowns of finished flows.
pub fn sorted_slowdowns(flows: &[FlowOutcome]) -> Vec<f64> {
    let mut v: Vec<f64> = flows.iter().map(FlowOutcome::slowdown).collect();
    v.sort_by(f64::total_cmp);
    v
}

/// Empirical CDF of sorted data as points (value, fraction <= value), at most
/// `max_points` of them: every point when they fit, else the values at evenly spaced
/// ranks (always including the largest).
pub fn cdf_points(sorted: &[f64], max_points: usize) -> Vec<(f64, f64)> {
    let n = sorted.len();
    if n == 0 || max_points == 0 {
        return Vec::new();
    }
    let point = |idx: usize| (sorted[idx], (idx + 1) as f64 / n as f64);
    if n <= max_points {
        return (0..n).map(point).collect();
    }
    (1..=max_points)
        .map(|k| point((k * n).div_ceil(max_points) - 1))
        .collect()
}

/// Thins a series (in x order) to at most `max_points` (at least 4 are kept) by keeping,
/// in each run of consecutive points, its lowest and highest y (first on ties), plus the
/// first and last point, so peaks and dips survive.
pub fn downsample(points: &[(f64, f64)], max_points: usize) -> Vec<(f64, f64)> {
    let max_points = max_points.max(4);
    let n = points.len();
    if n <= max_points {
        return points.to_vec();
    }
    let chunks = (max_points - 2) / 2;
    let size = n.div_ceil(chunks);
    let mut keep: Vec<usize> = vec![0];
    for (c, chunk) in points.chunks(size).enumerate() {
        let base = c * size;
        let (mut lo, mut hi) = (0, 0);
        for (i, p) in chunk.iter().enumerate() {
            if p.1 < chunk[lo].1 {
                lo = i;
            }
            if p.1 > chunk[hi].1 {
                hi = i;
            }
        }
        let (a, b) = (lo.min(hi) + base, lo.max(hi) + base);
        for i in [a, b] {
            if keep.last() != Some(&i) {
                keep.push(i);
            }
        }
    }
    if keep.last() != Some(&(n - 1)) {
        keep.push(n - 1);
    }
    keep.into_iter().map(|i| points[i]).collect()
}

/// Per-series point budget when `nseries` share one chart.
fn series_budget(nseries: usize) -> usize {
    (MAX_CHART_POINTS / nseries.max(1)).clamp(4, MAX_SERIES_POINTS)
}

/// Congestion-control rate (Gbps) vs time (us) of at most `max_flows` flows: those with
/// the most samples (ties: lower flow id), in flow-id order. Series are named
/// `flow <id> (<src>-><dst>)`.
pub fn rate_series(sim: &Simulation, max_flows: usize) -> Vec<(String, Vec<(f64, f64)>)> {
    let mut by_flow: BTreeMap<u32, Vec<(f64, f64)>> = BTreeMap::new();
    for r in &sim.record.rate_samples {
        by_flow
            .entry(r.flow)
            .or_default()
            .push((r.t as f64 / 1e6, r.rate_bps / 1e9));
    }
    let mut ids: Vec<(u32, usize)> = by_flow.iter().map(|(&f, v)| (f, v.len())).collect();
    ids.sort_by_key(|&(f, n)| (std::cmp::Reverse(n), f));
    ids.truncate(max_flows);
    ids.sort_by_key(|&(f, _)| f);
    let budget = series_budget(ids.len());
    ids.into_iter()
        .map(|(f, _)| {
            let spec = &sim.flows[f as usize].spec;
            (
                format!("flow {f} ({}->{})", spec.src, spec.dst),
                downsample(&by_flow[&f], budget),
            )
        })
        .collect()
}

/// Queue length (bytes) vs time (us) of at most `max_ports` switch ports: those with the
/// highest sampled queue (ties: lower port id), highest first. Samples are taken only
/// when a queue is non-empty, so gaps longer than the sampling interval are drawn as
/// zero. Series are named `<node>:<port>`.
pub fn queue_series(sim: &Simulation, max_ports: usize) -> Vec<(String, Vec<(f64, f64)>)> {
    let mut by_port: BTreeMap<u32, Vec<(Time, u64)>> = BTreeMap::new();
    for q in &sim.record.queue_samples {
        by_port.entry(q.port).or_default().push((q.t, q.bytes));
    }
    let mut ids: Vec<(u32, u64)> = by_port
        .iter()
        .map(|(&p, v)| (p, v.iter().map(|s| s.1).max().unwrap_or(0)))
        .collect();
    ids.sort_by_key(|&(p, m)| (std::cmp::Reverse(m), p));
    ids.truncate(max_ports);
    let iv = sim.params.queue_interval.unwrap_or(0);
    let end = sim.now;
    let budget = series_budget(ids.len());
    ids.into_iter()
        .map(|(p, _)| {
            let samples = &by_port[&p];
            let mut pts: Vec<(Time, u64)> = Vec::with_capacity(samples.len() + 4);
            for &(t, b) in samples {
                if iv > 0 {
                    match pts.last().copied() {
                        None if t >= iv => pts.push((t - iv, 0)),
                        Some((t0, _)) if t - t0 > iv => {
                            pts.push((t0 + iv, 0));
                            if t - iv > t0 + iv {
                                pts.push((t - iv, 0));
                            }
                        }
                        _ => {}
                    }
                }
                pts.push((t, b));
            }
            if let Some(&(t, _)) = pts.last() {
                if iv > 0 && t + iv <= end {
                    pts.push((t + iv, 0));
                }
            }
            let xy: Vec<(f64, f64)> = pts
                .into_iter()
                .map(|(t, b)| (t as f64 / 1e6, b as f64))
                .collect();
            let port = &sim.ports[p as usize];
            (
                format!("{}:{}", sim.port_node_name(p), port.local),
                downsample(&xy, budget),
            )
        })
        .collect()
}

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

/// Top switch ports by largest queue (then paused time): queue, PFC and drop counters.
fn ports_table(sim: &Simulation, max_rows: usize) -> Option<Table> {
    let mut ids: Vec<usize> = (0..sim.ports.len())
        .filter(|&i| {
            let p = &sim.ports[i];
            p.max_queue_bytes > 0 || p.stats.pause_frames_sent > 0 || p.stats.paused_ps > 0
        })
        .collect();
    if ids.is_empty() {
        return None;
    }
    ids.sort_by_key(|&i| {
        let p = &sim.ports[i];
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
                let p = &sim.ports[i];
                vec![
                    format!("{}:{}", sim.port_node_name(i as u32), p.local),
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
        crate::units::fmt_time(sim.now),
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

#[cfg(test)]
mod tests {
    use super::*;

    fn flow(id: u32, size: u64, fct: Time, ideal: Time) -> FlowOutcome {
        FlowOutcome {
            id,
            size,
            fct,
            ideal,
        }
    }

    #[test]
    fn bucket_edges_and_labels() {
        let b = SizeBuckets::default();
        assert_eq!(b.len(), 4);
        assert_eq!(b.index(0), 0);
        assert_eq!(b.index(9_999), 0);
        assert_eq!(b.index(10_000), 1);
        assert_eq!(b.index(99_999), 1);
        assert_eq!(b.index(100_000), 2);
        assert_eq!(b.index(999_999), 2);
        assert_eq!(b.index(1_000_000), 3);
        assert_eq!(b.index(u64::MAX), 3);
        assert_eq!(b.labels(), ["<10KB", "10KB-100KB", "100KB-1MB", ">=1MB"]);
        assert_eq!(
            (0..4).map(|i| b.key(i)).collect::<Vec<_>>(),
            ["lt10KB", "10KB_100KB", "100KB_1MB", "ge1MB"]
        );
        let c = SizeBuckets::new(vec![1500, 2_000_000]).unwrap();
        assert_eq!(c.labels(), ["<1500B", "1500B-2MB", ">=2MB"]);
        assert!(SizeBuckets::new(vec![10, 10]).is_none());
        assert!(SizeBuckets::new(vec![0, 10]).is_none());
        assert_eq!(SizeBuckets::new(vec![]).unwrap().labels(), ["all"]);
    }

    #[test]
    fn bucket_quantiles_by_hand() {
        // <10KB: slowdowns 1, 2, 3, 4 (FCT 10, 20, 30, 40 ns, ideal 10 ns).
        // 10KB-100KB: empty. 100KB-1MB: one flow, slowdown 1.5. >=1MB: slowdowns 1.25, 5.
        let flows = vec![
            flow(0, 100, 30_000, 10_000),
            flow(1, 9_999, 10_000, 10_000),
            flow(2, 1, 40_000, 10_000),
            flow(3, 5_000, 20_000, 10_000),
            flow(4, 500_000, 300_000, 200_000),
            flow(5, 1_000_000, 1_250_000, 1_000_000),
            flow(6, 2_000_000, 10_000_000, 2_000_000),
        ];
        let s = bucket_stats(&SizeBuckets::default(), &flows);
        assert_eq!(s.len(), 5);
        let names: Vec<&str> = s.iter().map(|b| b.bucket.as_str()).collect();
        assert_eq!(names, ["<10KB", "10KB-100KB", "100KB-1MB", ">=1MB", "all"]);
        assert_eq!(
            s.iter().map(|b| b.flows).collect::<Vec<_>>(),
            [4, 0, 1, 2, 7]
        );
        // Nearest rank of 4 values: p50 -> rank 2, p95 and p99 -> rank 4.
        assert_eq!(
            (s[0].slowdown_p50, s[0].slowdown_p95, s[0].slowdown_p99),
            (2.0, 4.0, 4.0)
        );
        assert_eq!((s[0].fct_p50_ns, s[0].fct_p99_ns), (20.0, 40.0));
        assert!(s[1].slowdown_p50.is_nan() && s[1].fct_p99_ns.is_nan());
        assert_eq!((s[2].slowdown_p50, s[2].slowdown_p99), (1.5, 1.5));
        assert_eq!((s[3].slowdown_p50, s[3].slowdown_p99), (1.25, 5.0));
        assert_eq!((s[3].fct_p50_ns, s[3].fct_p99_ns), (1250.0, 10_000.0));
        // All 7 sorted: 1, 1.25, 1.5, 2, 3, 4, 5 -> p50 rank 4, p95 rank 7.
        assert_eq!(
            (s[4].slowdown_p50, s[4].slowdown_p95, s[4].slowdown_p99),
            (2.0, 5.0, 5.0)
        );
        let csv = buckets_csv(&s);
        let lines: Vec<&str> = csv.lines().collect();
        assert_eq!(lines[0], BUCKETS_CSV_HEADER);
        // Means: <10KB slowdown (1+2+3+4)/4, FCT (10+20+30+40)/4 ns; all: 17.75/7 and
        // 11650/7 ns.
        assert_eq!(
            lines[1],
            "<10KB,4,2.000000,4.000000,4.000000,20.000,40.000,2.500000,25.000"
        );
        assert_eq!(lines[2], "10KB-100KB,0,,,,,,,");
        assert_eq!(
            lines[5],
            "all,7,2.000000,5.000000,5.000000,40.000,10000.000,2.535714,1664.286"
        );
    }

    #[test]
    fn p95_differs_from_p99_with_enough_flows() {
        // 100 flows with slowdowns 1.00 .. 1.99: p50 = 1.49, p95 = 1.94, p99 = 1.98.
        let flows: Vec<FlowOutcome> = (0..100)
            .map(|i| flow(i, 50_000, 100 + i as Time, 100))
            .collect();
        let s = bucket_stats(&SizeBuckets::default(), &flows);
        let b = &s[1];
        assert_eq!(b.flows, 100);
        assert!((b.slowdown_p50 - 1.49).abs() < 1e-12);
        assert!((b.slowdown_p95 - 1.94).abs() < 1e-12);
        assert!((b.slowdown_p99 - 1.98).abs() < 1e-12);
        assert_eq!(
            s[4],
            BucketStats {
                bucket: "all".into(),
                ..b.clone()
            }
        );
    }

    #[test]
    fn cdf_points_all_or_evenly_spaced() {
        assert!(cdf_points(&[], 10).is_empty());
        assert_eq!(
            cdf_points(&[1.0, 2.0, 4.0, 8.0], 10),
            [(1.0, 0.25), (2.0, 0.5), (4.0, 0.75), (8.0, 1.0)]
        );
        let v: Vec<f64> = (1..=10).map(f64::from).collect();
        // Ranks ceil(k * 10 / 4) for k = 1..4: 3, 5, 8, 10.
        assert_eq!(
            cdf_points(&v, 4),
            [(3.0, 0.3), (5.0, 0.5), (8.0, 0.8), (10.0, 1.0)]
        );
    }

    #[test]
    fn downsample_keeps_extremes_and_ends() {
        let short = [(0.0, 1.0), (1.0, 2.0)];
        assert_eq!(downsample(&short, 10), short);
        let pts: Vec<(f64, f64)> = (0..1000)
            .map(|i| (i as f64, if i == 537 { 100.0 } else { (i % 7) as f64 }))
            .collect();
        let d = downsample(&pts, 50);
        assert!(d.len() <= 50, "{}", d.len());
        assert_eq!(d[0], pts[0]);
        assert_eq!(*d.last().unwrap(), pts[999]);
        assert!(d.contains(&(537.0, 100.0)), "the spike survives");
        assert!(d.windows(2).all(|w| w[0].0 < w[1].0), "x stays increasing");
    }
}
