//! Series for charts: the points of an empirical CDF, thinning that keeps peaks and dips,
//! and the sending rate per flow and the egress queue per port over time.

use crate::base::units::Time;
use crate::sim::Simulation;
use std::collections::BTreeMap;

/// Most points of one series in a chart.
pub const MAX_SERIES_POINTS: usize = 2000;
/// Most points of all series of one chart together.
pub const MAX_CHART_POINTS: usize = 8000;
/// Points of the slowdown CDF kept in a [`Summary`](crate::output::Summary) (for the
/// multi-run overlay).
pub const SUMMARY_CDF_POINTS: usize = 400;

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
            let spec = &sim.nics.flows[f as usize].spec;
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
    let iv = sim.ctx.params.queue_interval.unwrap_or(0);
    let end = sim.ctx.now;
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
            let port = &sim.fabric.ports[p as usize];
            (
                format!(
                    "{}:{}",
                    sim.port_node_name(crate::base::ids::PortId(p)),
                    port.local
                ),
                downsample(&xy, budget),
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

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
