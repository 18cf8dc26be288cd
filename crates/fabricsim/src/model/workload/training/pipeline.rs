//! Pipeline parallelism split across two campuses: 1F1B over `S` stages (Narayanan et
//! al., PipeDream-Flush; the schedule Megatron-LM runs), the first `S/2` stages on one
//! campus and the rest on the other, so that one stage boundary per pipeline crosses
//! the DCI.
//!
//! Stage `s` (0-based) of `S` runs, for `M` microbatches, `w = min(S - s - 1, M)`
//! warm-up forwards, then alternates one forward and one backward, then drains the
//! remaining backwards: `F0 .. F(w-1), F(w) B0, F(w+1) B1, .., B(M-w) .. B(M-1)`. A
//! forward of stage `s > 0` waits for its microbatch's activations from stage `s - 1`;
//! a backward of stage `s < S - 1` waits for the activation gradients from stage
//! `s + 1`; each phase waits for the previous phase of its stage. Activations (and their
//! gradients, the same size) are sent when the phase that produced them ends.
//!
//! 1F1B keeps every stage busy when messages are free, and so has no slack: a message
//! across the boundary that takes `d` (propagation, serialization, window round trips)
//! delays the steady state by about `d` per microbatch whatever the depth (tests: between
//! `(M - S/2) d` and `M d` per iteration). That is why document 001 finds PP's loss
//! growing with distance, and why NCCL's window tuning (which shortens `d`) cut it.
//!
//! An iteration ends when every stage has run its last backward (the pipeline flush
//! before the optimizer step); the next iteration begins after it.

use super::graph::{JobGraph, JobNode};
use crate::base::units::Time;

/// A compute phase of a stage.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pass {
    /// Forward of microbatch `m`.
    Forward(usize),
    /// Backward of microbatch `m`.
    Backward(usize),
}

/// Stage `s`'s phases in 1F1B order over `m` microbatches, of `stages` stages.
pub fn one_f_one_b(stages: usize, s: usize, m: usize) -> Vec<Pass> {
    let w = (stages - s - 1).min(m);
    let mut v: Vec<Pass> = (0..w).map(Pass::Forward).collect();
    for i in 0..m - w {
        v.push(Pass::Forward(w + i));
        v.push(Pass::Backward(i));
    }
    v.extend((m - w..m).map(Pass::Backward));
    v
}

/// The shape of one pipeline job.
#[derive(Clone, Copy, Debug)]
pub struct PipelineShape {
    /// Stages per pipeline (even: half on each campus).
    pub stages: usize,
    /// Microbatches per iteration.
    pub microbatches: usize,
    /// Forward compute per microbatch and stage.
    pub forward: Time,
    /// Backward compute per microbatch and stage.
    pub backward: Time,
    /// Activation bytes per microbatch (and gradient bytes back).
    pub activation: u64,
}

/// Adds `iterations` iterations of every pipeline to `g`: `pipelines[p][s]` is the host of
/// stage `s` of pipeline `p`. Returns each iteration's end phase (a zero-length phase
/// after every stage's last backward).
pub fn build(
    g: &mut JobGraph,
    pipelines: &[Vec<u32>],
    sh: &PipelineShape,
    iterations: u32,
    start: Time,
) -> Vec<JobNode> {
    let (st, m) = (sh.stages, sh.microbatches);
    let boundary = st / 2 - 1;
    let orders: Vec<Vec<Pass>> = (0..st).map(|s| one_f_one_b(st, s, m)).collect();
    let mut begin = g.phase(0, start);
    let mut ends = Vec::new();
    for _ in 0..iterations {
        let mut last = Vec::new();
        for ranks in pipelines {
            // fwd[s][k], bwd[s][k]: the phases; act[s][k]: stage s -> s+1 activations of
            // microbatch k; grad[s][k]: stage s -> s-1 gradients.
            let mut fwd = vec![vec![None; m]; st];
            let mut bwd = vec![vec![None; m]; st];
            for (s, order) in orders.iter().enumerate() {
                let mut prev = begin;
                for &pass in order {
                    let (d, slot) = match pass {
                        Pass::Forward(k) => (sh.forward, &mut fwd[s][k]),
                        Pass::Backward(k) => (sh.backward, &mut bwd[s][k]),
                    };
                    let ph = g.compute(ranks[s], d);
                    g.after(prev, ph);
                    *slot = Some(ph);
                    prev = ph;
                }
                last.push(prev);
            }
            let at = |v: &Vec<Vec<Option<JobNode>>>, s: usize, k: usize| {
                v[s][k].expect("every pass is scheduled")
            };
            // Messages in microbatch order per queue pair (stage pair and direction),
            // the order their phases produce them.
            for s in 0..st - 1 {
                for k in 0..m {
                    let x = g.message(ranks[s], ranks[s + 1], sh.activation, s == boundary);
                    g.after(at(&fwd, s, k), x);
                    g.after(x, at(&fwd, s + 1, k));
                }
                for k in 0..m {
                    let y = g.message(ranks[s + 1], ranks[s], sh.activation, s == boundary);
                    g.after(at(&bwd, s + 1, k), y);
                    g.after(y, at(&bwd, s, k));
                }
            }
        }
        let end = g.phase(0, 0);
        for p in last {
            g.after(p, end);
        }
        ends.push(end);
        begin = end;
    }
    ends
}

/// 1F1B on two stages with every transfer taking `d`, in closed form: the recurrences
/// of the two-stage schedule, kept as an independent check of [`build`] and
/// [`JobGraph::evaluate`]. `x[k]`: stage 1's send of microbatch k (end of F(k));
/// `g[k]`: stage 2's send of k (end of B(k)).
pub fn pp_with(m: usize, f: Time, b: Time, d: Time) -> Time {
    let mut x = vec![0; m];
    let mut g = vec![0; m];
    for k in 0..m {
        x[k] = match k {
            0 => f,
            1 => x[0] + f,
            _ => x[k - 1].max(g[k - 2] + d) + b + f,
        };
        g[k] = if k == 0 {
            x[0] + d
        } else {
            (x[k] + d).max(g[k - 1])
        } + f
            + b;
    }
    if m == 1 {
        return g[0] + d + b;
    }
    ((g[m - 2] + d).max(x[m - 1]) + b).max(g[m - 1] + d) + b
}

/// 1F1B on two stages with free transfers.
pub fn pp_free(m: usize, f: Time, b: Time) -> Time {
    pp_with(m, f, b, 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One iteration of one pipeline when a message across the campuses takes `d` and one
    /// inside a campus takes nothing.
    fn iteration(stages: usize, m: usize, f: Time, b: Time, d: Time) -> Time {
        let mut g = JobGraph::default();
        let ranks: Vec<u32> = (0..stages as u32).collect();
        let sh = PipelineShape {
            stages,
            microbatches: m,
            forward: f,
            backward: b,
            activation: 1,
        };
        let ends = build(&mut g, &[ranks], &sh, 1, 0);
        let t = g.evaluate(|i| if g.messages[i].cross { d } else { 0 });
        match ends[0] {
            JobNode::Phase(i) => t[i as usize],
            JobNode::Transfer(_) => unreachable!(),
        }
    }

    #[test]
    fn the_schedule_runs_each_pass_once_warm_up_first() {
        for st in [2, 4, 8] {
            for s in 0..st {
                for m in [1, 3, 16] {
                    let o = one_f_one_b(st, s, m);
                    assert_eq!(o.len(), 2 * m);
                    let w = (st - s - 1).min(m);
                    assert!(o[..w].iter().all(|p| matches!(p, Pass::Forward(_))));
                    // A backward never comes before its forward.
                    for (i, p) in o.iter().enumerate() {
                        if let Pass::Backward(k) = p {
                            assert!(o[..i].contains(&Pass::Forward(*k)));
                        }
                    }
                }
            }
        }
        assert_eq!(
            one_f_one_b(4, 1, 4),
            vec![
                Pass::Forward(0),
                Pass::Forward(1),
                Pass::Forward(2),
                Pass::Backward(0),
                Pass::Forward(3),
                Pass::Backward(1),
                Pass::Backward(2),
                Pass::Backward(3),
            ]
        );
    }

    #[test]
    fn two_stages_follow_the_closed_form_recurrences() {
        for m in 2..12 {
            for d in [0, 7, 150, 4000] {
                assert_eq!(
                    iteration(2, m, 100, 250, d),
                    pp_with(m, 100, 250, d),
                    "m {m} d {d}"
                );
            }
        }
    }

    #[test]
    fn a_free_pipeline_takes_m_plus_s_minus_one_slots() {
        // Without communication, 1F1B over S equal stages takes (M + S - 1)(f + b): the
        // steady state of M microbatches plus the fill and drain of S - 1 stages.
        for st in [2, 4, 6, 8] {
            for m in [st, 2 * st, 33] {
                assert_eq!(
                    iteration(st, m, 3, 5, 0),
                    (m + st - 1) as Time * 8,
                    "S {st} M {m}"
                );
            }
        }
    }

    #[test]
    fn the_boundary_costs_about_its_delay_per_microbatch_at_any_depth() {
        let m = 32;
        for st in [2, 4, 8] {
            let (f, b) = (800 / st as Time, 1600 / st as Time);
            let free = iteration(st, m, f, b, 0);
            let mut last = free;
            for d in [50, 100, 300, 1000] {
                let t = iteration(st, m, f, b, d);
                let lo = free + (m - st / 2) as Time * d;
                assert!(
                    t >= lo && t <= free + m as Time * d,
                    "S {st} d {d}: {t} vs {free}"
                );
                assert!(t > last);
                last = t;
            }
        }
    }
}
