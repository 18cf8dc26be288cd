//! Recording: the time series `[record]` asks for, sampled on a fixed grid.
//!
//! Every `queue_interval` the recorder notes each switch port's queued bytes (non-zero
//! only), and every `rate_interval` each running flow's controller rate and its in-order
//! goodput over the interval. Sampling is one event on the grid, never per packet; the
//! samples feed `queues.csv`, `rates.csv` and the convergence and window analyses.

pub mod convergence;
pub mod timeline;
pub mod window;

use crate::base::units::Time;
use crate::kernel::events::Event;
use crate::model::cc::CongestionControl;
use crate::model::fabric::Port;
use crate::model::transport::Flow;

use crate::kernel::ctx::Ctx;
use crate::model::fabric::Fabric;
use crate::model::transport::Nics;

/// One row of a queue-length time series.
#[derive(Clone, Copy, Debug)]
pub struct QueueSample {
    /// Time.
    pub t: Time,
    /// Port id.
    pub port: u32,
    /// Bytes queued.
    pub bytes: u64,
}

/// One row of a flow-rate time series.
#[derive(Clone, Copy, Debug)]
pub struct RateSample {
    /// Time.
    pub t: Time,
    /// Flow id.
    pub flow: u32,
    /// Congestion controller's rate (bps).
    pub rate_bps: f64,
    /// Bytes delivered in order per second over the last interval.
    pub goodput_bps: f64,
}

/// A port found paused by its peer (PFC) at a queue sampling instant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PauseSample {
    /// Time.
    pub t: Time,
    /// Port id (a switch's or a NIC's).
    pub port: u32,
}

/// The samples of a run.
#[derive(Clone, Debug, Default)]
pub struct Recorder {
    /// Queue samples.
    pub queue_samples: Vec<QueueSample>,
    /// Rate samples.
    pub rate_samples: Vec<RateSample>,
    /// Ports paused at each queue sampling instant (the PFC pause timeline).
    pub pause_samples: Vec<PauseSample>,
    /// Write `buffers.csv` (`[record] buffers`).
    pub buffers: bool,
}

impl Recorder {
    /// Takes the samples due at `now` and returns the next sampling time, if any.
    pub fn sample(
        &mut self,
        now: Time,
        intervals: (Option<Time>, Option<Time>),
        ports: &[Port],
        node_is_switch: &[bool],
        flows: &mut [Flow],
    ) -> Option<Time> {
        let (queue_interval, rate_interval) = intervals;
        if let Some(iv) = queue_interval {
            if now.is_multiple_of(iv) {
                for (i, p) in ports.iter().enumerate() {
                    if p.last_pause_end() > now {
                        self.pause_samples.push(PauseSample {
                            t: now,
                            port: i as u32,
                        });
                    }
                    if node_is_switch[p.node.idx()] {
                        let b = p.queued_bytes();
                        if b > 0 {
                            self.queue_samples.push(QueueSample {
                                t: now,
                                port: i as u32,
                                bytes: b,
                            });
                        }
                    }
                }
            }
        }
        if let Some(iv) = rate_interval {
            if now.is_multiple_of(iv) {
                for (i, f) in flows.iter_mut().enumerate() {
                    if f.started && f.finish.is_none() || f.finish == Some(now) {
                        let delivered = f.rcv_nxt - f.delivered_at_last_sample;
                        f.delivered_at_last_sample = f.rcv_nxt;
                        self.rate_samples.push(RateSample {
                            t: now,
                            flow: i as u32,
                            rate_bps: f.cc.rate_bps(),
                            goodput_bps: delivered as f64 * 8.0 * 1e12 / iv as f64,
                        });
                    } else if f.finish.is_some() {
                        f.delivered_at_last_sample = f.rcv_nxt;
                    }
                }
            }
        }
        let next = |iv: Option<Time>| iv.map_or(Time::MAX, |q| (now / q + 1) * q);
        let t = next(queue_interval).min(next(rate_interval));
        (t != Time::MAX).then_some(t)
    }
}

impl Recorder {
    /// The sampling event: sample, and keep sampling while flows remain.
    pub(crate) fn on_sample(&mut self, ctx: &mut Ctx, fabric: &Fabric, nics: &mut Nics) {
        let intervals = (ctx.params.queue_interval, ctx.params.rate_interval);
        let next = self.sample(
            ctx.now,
            intervals,
            &fabric.ports,
            &fabric.node_is_switch,
            &mut nics.flows,
        );
        if let Some(t) = next {
            if ctx.tally.flows_done < nics.flows.len() {
                ctx.queue.push(t, Event::Sample);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::units::US;
    use crate::model::cc::line_rate::LineRate;
    use crate::model::cc::AnyCc;
    use crate::model::workload::FlowSpec;

    fn flows() -> Vec<Flow> {
        let spec = FlowSpec {
            src: 0,
            dst: 1,
            size: 1_000_000,
            start: 0,
        };
        let mut f = Flow::new(spec, 0, 0, AnyCc::LineRate(LineRate { bps: 1e11 }));
        f.started = true;
        vec![f]
    }

    #[test]
    fn samples_fall_on_the_grid_of_each_interval() {
        let mut r = Recorder::default();
        let mut fl = flows();
        let iv = (Some(3 * US), Some(2 * US));
        // At 0 both are due; the next point is the nearer grid line.
        assert_eq!(r.sample(0, iv, &[], &[], &mut fl), Some(2 * US));
        fl[0].rcv_nxt = 25_000;
        assert_eq!(r.sample(2 * US, iv, &[], &[], &mut fl), Some(3 * US));
        // Goodput over the interval: 25 kB in 2 us = 100 Gbit/s.
        let last = r.rate_samples.last().unwrap();
        assert_eq!((last.t, last.flow), (2 * US, 0));
        assert!(
            (last.goodput_bps - 1e11).abs() < 1.0,
            "{}",
            last.goodput_bps
        );
        // 3 us is on the queue grid only: no rate sample is taken there.
        assert_eq!(r.sample(3 * US, iv, &[], &[], &mut fl), Some(4 * US));
        assert_eq!(r.rate_samples.len(), 2);
        assert_eq!(r.sample(0, (None, None), &[], &[], &mut fl), None);
    }
}
