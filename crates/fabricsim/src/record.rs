//! Recording.

use crate::cc::CongestionControl;
use crate::engine::Event;
use crate::units::Time;

use crate::sim::*;

impl Simulation {
    pub(crate) fn on_sample(&mut self) {
        let now = self.now;
        if let Some(iv) = self.params.queue_interval {
            if now.is_multiple_of(iv) {
                for (i, p) in self.ports.iter().enumerate() {
                    if self.node_is_switch[p.node as usize] {
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
        if let Some(iv) = self.params.rate_interval {
            if now.is_multiple_of(iv) {
                for (i, f) in self.flows.iter_mut().enumerate() {
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
        let q = self.params.queue_interval.unwrap_or(Time::MAX);
        let r = self.params.rate_interval.unwrap_or(Time::MAX);
        let next_q = if q == Time::MAX {
            Time::MAX
        } else {
            (now / q + 1) * q
        };
        let next_r = if r == Time::MAX {
            Time::MAX
        } else {
            (now / r + 1) * r
        };
        let next = next_q.min(next_r);
        if next != Time::MAX && self.flows_done < self.flows.len() {
            self.queue.push(next, Event::Sample);
        }
    }
}
