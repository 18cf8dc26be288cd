//! Convergence of flows to their fair share, from the rate time series (`[record.convergence]`).
//!
//! Congestion-control papers judge an algorithm by how fast it reacts when a flow joins a
//! busy bottleneck: how long the incumbents take to *cut* their rate, and how long until
//! every flow sends at its *fair share* and stays there (document 004: DCQCN needs ~0.5 ms
//! to cut and 18 ms to reach the fair share; ACC reaches the right rate within one period).
//! Both times are measured from the join on the sampled controller rates (`rates.csv`):
//!
//! - *time to cut* of an incumbent (a flow already sending at the join): the first sample
//!   after the join at which its rate is below (1 - tolerance) times its rate at the join;
//!   the run's time to cut is the latest over the incumbents (all have reacted);
//! - *time to fair share* of a flow: the first sample time t after the join such that every
//!   sample of the flow in [t, t + hold] lies within the tolerance band around the fair
//!   share; the run's value is the first t at which this holds for all flows at once.
//!   A band that would need samples past the end of the series does not count.
//!
//! The rate is the controller's (for ACC, the rate it sends at after a source halt; the
//! halt itself shows in the goodput column of `rates.csv`).

use crate::base::units::Time;
pub use crate::model::record::convergence::{
    ConvergenceCfg, ConvergenceSpec, DEFAULT_HOLD, DEFAULT_TOLERANCE,
};
use crate::sim::{RateSample, Simulation};
use serde::{Deserialize, Serialize};

/// Per-flow result.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FlowConvergence {
    /// Flow id.
    pub flow: u32,
    /// Rate at the join (last sample at or before it), Gbit/s; `None` for a flow that was
    /// not sending yet (a joiner).
    pub rate_at_join_gbps: Option<f64>,
    /// Time from the join to the cut (incumbents only), ns.
    pub time_to_cut_ns: Option<f64>,
    /// Time from the join until the flow's rate stays in the band for the hold time, ns.
    pub time_to_fair_ns: Option<f64>,
}

/// The analysis' result (in `summary.json` and `convergence.csv`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Convergence {
    /// Join time, ns.
    pub join_ns: f64,
    /// Fair share per flow, Gbit/s.
    pub fair_share_gbps: f64,
    /// Tolerance.
    pub tolerance: f64,
    /// Hold time, ns.
    pub hold_ns: f64,
    /// Latest cut among the incumbents, ns after the join (`None` if one never cut).
    pub time_to_cut_ns: Option<f64>,
    /// First time all flows are in the band and stay there for the hold time, ns after
    /// the join.
    pub time_to_fair_ns: Option<f64>,
    /// Per flow.
    pub per_flow: Vec<FlowConvergence>,
}

fn ns(t: Time) -> f64 {
    t as f64 / 1000.0
}

/// The samples of `flow`, in time order.
fn series(samples: &[RateSample], flow: u32) -> Vec<(Time, f64)> {
    samples
        .iter()
        .filter(|s| s.flow == flow)
        .map(|s| (s.t, s.rate_bps))
        .collect()
}

/// Whether a rate is within the band.
fn in_band(r: f64, spec: &ConvergenceSpec) -> bool {
    (r - spec.fair_bps).abs() <= spec.tolerance * spec.fair_bps
}

/// First sample time t >= join from which the series stays in the band through
/// t + hold (needs a sample at or after t + hold).
fn first_stable(
    s: &[(Time, f64)],
    spec: &ConvergenceSpec,
    ok: &dyn Fn(Time) -> bool,
) -> Option<Time> {
    let mut start: Option<Time> = None;
    for &(t, r) in s.iter().filter(|(t, _)| *t >= spec.join) {
        if in_band(r, spec) && ok(t) {
            let st = *start.get_or_insert(t);
            if t >= st + spec.hold {
                return Some(st);
            }
        } else {
            start = None;
        }
    }
    None
}

/// Runs the analysis on the simulation's rate samples.
pub fn analyse(sim: &Simulation, spec: &ConvergenceSpec) -> Convergence {
    let all: Vec<Vec<(Time, f64)>> = spec
        .flows
        .iter()
        .map(|&f| series(&sim.record.rate_samples, f))
        .collect();
    let mut per_flow = Vec::new();
    let mut cut_max: Option<Option<Time>> = None;
    for (k, &f) in spec.flows.iter().enumerate() {
        let s = &all[k];
        let at_join = s
            .iter()
            .take_while(|(t, _)| *t <= spec.join)
            .last()
            .filter(|_| sim.nics.flows[f as usize].spec.start < spec.join)
            .map(|&(_, r)| r);
        let cut = at_join.map(|r0| {
            s.iter()
                .find(|&&(t, r)| t > spec.join && r < (1.0 - spec.tolerance) * r0)
                .map(|&(t, _)| t - spec.join)
        });
        if let Some(c) = cut {
            cut_max = Some(match (cut_max, c) {
                (None, c) => c,
                (Some(Some(a)), Some(b)) => Some(a.max(b)),
                _ => None,
            });
        }
        let fair = first_stable(s, spec, &|_| true).map(|t| t - spec.join);
        per_flow.push(FlowConvergence {
            flow: f,
            rate_at_join_gbps: at_join.map(|r| r / 1e9),
            time_to_cut_ns: cut.flatten().map(ns),
            time_to_fair_ns: fair.map(ns),
        });
    }
    // All flows at once: walk the time grid of the first flow's samples and require every
    // flow's sample at the same time to be in the band.
    let in_band_at = |t: Time| {
        all.iter()
            .all(|s| match s.binary_search_by_key(&t, |&(u, _)| u) {
                Ok(i) => in_band(s[i].1, spec),
                Err(_) => false,
            })
    };
    let fair_all = first_stable(&all[0], spec, &in_band_at).map(|t| t - spec.join);
    Convergence {
        join_ns: ns(spec.join),
        fair_share_gbps: spec.fair_bps / 1e9,
        tolerance: spec.tolerance,
        hold_ns: ns(spec.hold),
        time_to_cut_ns: cut_max.flatten().map(ns),
        time_to_fair_ns: fair_all.map(ns),
        per_flow,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::units::US;

    fn spec() -> ConvergenceSpec {
        ConvergenceSpec {
            flows: vec![0, 1],
            join: 100 * US,
            fair_bps: 5e9,
            tolerance: 0.1,
            hold: 50 * US,
        }
    }

    #[test]
    fn first_stable_needs_the_whole_hold_window() {
        let sp = spec();
        // In band from 120 us to 250 us: stable from 120 (a sample at 170 closes the hold).
        let s: Vec<(Time, f64)> = (0..=25)
            .map(|k| {
                let t = k * 10 * US;
                (t, if t >= 120 * US { 5.2e9 } else { 10e9 })
            })
            .collect();
        assert_eq!(first_stable(&s, &sp, &|_| true), Some(120 * US));
        // A dip out of the band at 150 us restarts the window at 160 us.
        let mut d = s.clone();
        d[15].1 = 4.0e9;
        assert_eq!(first_stable(&d, &sp, &|_| true), Some(160 * US));
        // Too short a tail: the band from 160 us needs a sample at 210 us.
        d.truncate(21);
        assert_eq!(first_stable(&d, &sp, &|_| true), None);
    }
}
