//! The source halt: how long a congested flow stays silent, what ends it, and the rate
//! it resumes at.

use super::Acc;
use crate::base::units::{Time, SEC};

/// A running source halt.
#[derive(Clone, Copy, Debug)]
pub(super) struct Halt {
    /// When it began.
    pub(super) start: Time,
    /// R_ack x base RTT at the latest estimate, bytes: the halt ends once the bytes in
    /// flight fit it.
    pub(super) pipe: u64,
    /// Bytes acknowledged since it began.
    pub(super) acked: u64,
}

impl Acc {
    /// Ends the running halt at `now` (before its planned end).
    pub(super) fn end_halt(&mut self, now: Time) {
        if let Some(t) = self.halted_until.filter(|&t| t > now) {
            self.halt_time -= t - now;
            self.halted_until = Some(now);
        }
        self.take_halt_rate(now);
    }

    /// The halt that began at `h.start` ended at `end`: the flow resumes at the rate its
    /// ACKs arrived during the halt ("record the ACK arrival rate; after the halt send at
    /// that rate", SEEDS.md 004). A halt without ACKs, or shorter than the period T,
    /// keeps the rate set when it began (R_ack over the period before it): like R_ack, the
    /// estimate spans at least a period, because a few ACKs in a short halt say little about
    /// the bottleneck's rate (they come in bursts) \[recon\].
    pub(super) fn take_halt_rate(&mut self, end: Time) {
        let Some(h) = self.halting.take() else { return };
        let span = end.saturating_sub(h.start);
        if span >= self.p.period.max(1) && h.acked > 0 {
            let r = h.acked as f64 * 8.0 * SEC as f64 / span as f64;
            self.rate = r.clamp(self.p.min_rate, self.line);
        }
    }

    /// A congested period acked `acked` bytes over `span`: match the ACK rate and halt
    /// for the queued excess.
    pub(super) fn congested(&mut self, now: Time, acked: u64, span: Time) {
        let sec = SEC as f64;
        let r_ack = acked as f64 * 8.0 * sec / span.max(1) as f64;
        self.rate = r_ack.clamp(self.p.min_rate, self.line);
        if !self.p.halt || r_ack <= 0.0 {
            return;
        }
        let pipe = r_ack * self.p.base_rtt as f64 / sec / 8.0;
        let excess = self.inflight as f64 - pipe;
        if excess <= 0.0 {
            // The excess is already gone: a halt still running from an earlier estimate
            // ends now.
            if self.halting.is_some() {
                self.end_halt(now);
            }
            return;
        }
        // (A float beyond the range of Time converts to Time::MAX.)
        let want = (excess * 8.0 * sec / r_ack).round() as Time;
        let cap = self.p.max_halt.unwrap_or(Time::MAX);
        if let Some(h) = self.halting.as_mut() {
            // A newer estimate of the same backlog refines the running halt; a cap
            // counts from its start.
            h.pipe = pipe as u64;
            let end = now
                .saturating_add(want)
                .min(h.start.saturating_add(cap))
                .max(now);
            let old = self.halted_until.unwrap_or(now);
            if end >= old {
                self.halt_time = self.halt_time.saturating_add(end - old);
            } else {
                self.halt_time -= old - end;
            }
            self.halted_until = Some(end);
            return;
        }
        let halt = want.min(cap);
        self.halts += 1;
        self.halting = Some(Halt {
            start: now,
            pipe: pipe as u64,
            acked: 0,
        });
        self.halted_until = Some(now.saturating_add(halt));
        self.halt_time = self.halt_time.saturating_add(halt);
    }
}
