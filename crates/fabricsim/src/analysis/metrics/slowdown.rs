//! Slowdown (FCT / ideal FCT) and FCT statistics of the finished flows of a run, per size
//! bucket and for all flows, and `buckets.csv`.

use super::buckets::{SizeBuckets, ALL};
use crate::analysis::metrics::quantile;
use crate::base::units::Time;
use crate::sim::Simulation;
use serde::Serialize;

/// Header of `buckets.csv`.
pub const BUCKETS_CSV_HEADER: &str =
    "bucket,flows,slowdown_p50,slowdown_p95,slowdown_p99,fct_p50_ns,fct_p99_ns,slowdown_mean,fct_mean_ns";

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
    sim.nics
        .flows
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

/// Sorted slowdowns of finished flows.
pub fn sorted_slowdowns(flows: &[FlowOutcome]) -> Vec<f64> {
    let mut v: Vec<f64> = flows.iter().map(FlowOutcome::slowdown).collect();
    v.sort_by(f64::total_cmp);
    v
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
        let csv =
            crate::output::cells::render(|o| crate::output::buckets::write_stats(&s, o)).unwrap();
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
}
