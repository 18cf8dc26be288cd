//! Goodput of chosen flows and queues of chosen ports over a time window
//! (`[record.window]` -> `window.csv`).
//!
//! Experiments such as document 004's victim-flow study ask what happens *during* an
//! episode (a burst from 1 ms to 3 ms): how much a victim flow still delivers, how long
//! the congested port's queue grows. Whole-run figures (FCT, max queue) blur that, so the
//! window analysis averages the recorded time series over [from, to):
//!
//! - a flow's goodput is the mean of its `rates.csv` goodput samples whose interval lies
//!   in the window (samples at times t with from < t <= to: each covers (t - interval, t]);
//!   a flow that is not active at a sample contributes zero for it;
//! - a port's mean and max queue are taken over the `queues.csv` samples in the window
//!   (absent samples are empty queues).

use crate::base::units::Time;
pub use crate::model::record::window::{WindowCfg, WindowSpec};
use crate::sim::Simulation;
use serde::{Deserialize, Serialize};

/// One row of the result.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct WindowRow {
    /// `flow <id>` or the port's name.
    pub what: String,
    /// Mean goodput in the window, Gbit/s (flows).
    pub goodput_gbps: Option<f64>,
    /// Mean sampled queue, bytes (ports).
    pub mean_queue_bytes: Option<f64>,
    /// Largest sampled queue, bytes (ports).
    pub max_queue_bytes: Option<u64>,
}

/// The analysis' result.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Window {
    /// Window start, ns.
    pub from_ns: f64,
    /// Window end, ns.
    pub to_ns: f64,
    /// One row per flow, then per port.
    pub rows: Vec<WindowRow>,
    /// Why the window differs from the one asked for (its end clamped to `max_time`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// The number of sample times in (from, to] of a series with interval `iv`, counted
/// without walking them (a window may span many samples).
fn samples_in(from: Time, to: Time, iv: Time) -> u64 {
    (to / iv).saturating_sub(from / iv)
}

/// Sample times in (from, to] of a series with interval `iv`.
#[cfg(test)]
fn grid(from: Time, to: Time, iv: Time) -> impl Iterator<Item = Time> {
    let first = (from / iv + 1) * iv;
    (0..)
        .map(move |k| first + k * iv)
        .take_while(move |&t| t <= to)
}

/// Runs the analysis.
pub fn analyse(sim: &Simulation, spec: &WindowSpec) -> Window {
    let mut rows = Vec::new();
    if let Some(iv) = sim.ctx.params.rate_interval {
        let n = samples_in(spec.from, spec.to, iv).max(1) as f64;
        for &f in &spec.flows {
            let sum: f64 = sim
                .record
                .rate_samples
                .iter()
                .filter(|r| r.flow == f && r.t > spec.from && r.t <= spec.to)
                .map(|r| r.goodput_bps)
                .sum();
            rows.push(WindowRow {
                what: format!("flow {f}"),
                goodput_gbps: Some(sum / n / 1e9),
                mean_queue_bytes: None,
                max_queue_bytes: None,
            });
        }
    }
    if let Some(iv) = sim.ctx.params.queue_interval {
        let n = samples_in(spec.from, spec.to, iv).max(1) as f64;
        for (name, p) in &spec.ports {
            let v: Vec<u64> = sim
                .record
                .queue_samples
                .iter()
                .filter(|q| q.port == *p && q.t > spec.from && q.t <= spec.to)
                .map(|q| q.bytes)
                .collect();
            rows.push(WindowRow {
                what: name.clone(),
                goodput_gbps: None,
                mean_queue_bytes: Some(v.iter().sum::<u64>() as f64 / n),
                max_queue_bytes: Some(v.iter().copied().max().unwrap_or(0)),
            });
        }
    }
    Window {
        from_ns: spec.from as f64 / 1000.0,
        to_ns: spec.to as f64 / 1000.0,
        rows,
        note: spec.clamped_from.map(|asked| {
            format!(
                "window end {} is beyond max_time: clamped to {}{}",
                crate::base::units::fmt_time(asked),
                crate::base::units::fmt_time(spec.to),
                if spec.from >= spec.to {
                    " (the window starts there too: it is empty)"
                } else {
                    ""
                }
            )
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grid_is_the_sample_times_covering_the_window() {
        let g: Vec<Time> = grid(100, 300, 50).collect();
        assert_eq!(g, [150, 200, 250, 300]);
        let g: Vec<Time> = grid(90, 100, 50).collect();
        assert_eq!(g, [100]);
        for (from, to, iv) in [
            (100, 300, 50),
            (90, 100, 50),
            (0, 7, 3),
            (5, 5, 1),
            (1, 1000, 7),
        ] {
            assert_eq!(
                samples_in(from, to, iv),
                grid(from, to, iv).count() as u64,
                "({from}, {to}] every {iv}"
            );
        }
    }
}
