//! Recording: the time series `[record]` asks for, sampled on a fixed grid.
//!
//! Every `queue_interval` the recorder notes each switch port's queued bytes (non-zero
//! only), and every `rate_interval` each running flow's controller rate and its in-order
//! goodput over the interval. Sampling is one event on the grid, never per packet; the
//! samples feed `queues.csv`, `rates.csv` and the convergence and window analyses.

use crate::cc::CongestionControl;
use crate::engine::Event;
use crate::fabric::Port;
use crate::transport::Flow;
use crate::units::Time;

use crate::sim::Simulation;

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

/// The samples of a run.
#[derive(Clone, Debug, Default)]
pub struct Recorder {
    /// Queue samples.
    pub queue_samples: Vec<QueueSample>,
    /// Rate samples.
    pub rate_samples: Vec<RateSample>,
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
                    if node_is_switch[p.node as usize] {
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

impl Simulation {
    /// The sampling event: sample, and keep sampling while flows remain.
    pub(crate) fn on_sample(&mut self) {
        let intervals = (self.params.queue_interval, self.params.rate_interval);
        let next = self.record.sample(
            self.now,
            intervals,
            &self.ports,
            &self.node_is_switch,
            &mut self.flows,
        );
        if let Some(t) = next {
            if self.flows_done < self.flows.len() {
                self.queue.push(t, Event::Sample);
            }
        }
    }
}
