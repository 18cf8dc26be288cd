//! ACC, ACK-driven congestion control for lossless Ethernet (Zhang et al., "Revisiting
//! Congestion Control for Lossless Ethernet", NSDI 2024; digest in SEEDS.md 004).
//!
//! A lossless network conserves packets: everything sent is eventually acknowledged, and
//! what is not yet acknowledged is either on the wire or queued in some switch. So the
//! ACK series alone tells a congested sender the bottleneck's rate (the ACK arrival rate)
//! and how many of its bytes sit in queues (bytes in flight minus what the pipe holds).
//! Switches mark packets with TCD ([`crate::model::fabric::telemetry::tcd`]): CE for a congested port, UE for
//! a port that is only paused; the receiver echoes the mark in the ACK.
//!
//! Once per period T (default the base RTT; 50 us on the paper's testbed) the sender
//! classifies the period's ACKs with priority CE > UE > NO:
//!
//! - *Congested*: at least 90% of the ACKs carry CE. R_ack = bytes acked in the period / T;
//!   pipe = R_ack x base RTT; excess = max(0, inflight - pipe). The source halts for
//!   excess / R_ack, long enough for the bottleneck to drain the excess but not to idle,
//!   then sends at R_ack (the paper's "source halt" and "rate matching").
//!
//! How long the halt lasts is the ACK series' answer (the paper: the halt drains the
//! queued excess without idling the link, and a long halt of the congested flows is the
//! first means against head-of-line blocking, because it empties the branch buffers that
//! PFC would otherwise pause). An R_ack measured in a bad period (a burst of PFC pauses)
//! can be tiny and make excess / R_ack huge, so the planned end is not the only one:
//! - the ACK stream ends it: the network conserves packets, so once the bytes in flight
//!   fit the pipe (the cumulative ACK passed the halt point minus the pipe) the excess has
//!   drained and staying silent would idle the bottleneck; the NIC resumes the flow at once.
//!   A halt with excess has bytes in flight, so its ACKs keep coming as they drain;
//! - a later congested period refines it (new pipe, new end);
//! - [`AccParams::max_halt`] can cap it (unset by default: a cap ends the halt while the
//!   flow's excess is still queued, and where that excess sits behind a deep congestion
//!   tree it keeps the shared branch paused).
//!
//! The digest says "record the ACK arrival rate; after the halt send at that rate". Which
//! ACKs is not said: after a halt of at least a period the flow sends at the rate its ACKs
//! arrived during the halt, the freshest measure of what the bottleneck gives it; after a
//! shorter one, at R_ack of the period before \[recon\]. R_ack spans the whole stretch since
//! the previous period's end when the flow had bytes in flight but got no ACK for more than
//! a period: the bottleneck gave it nothing then, and a period measured only from the next
//! ACK would overstate its rate \[recon\].
//! - *Victim*: UE seen and no CE. The rate holds; when UE persists for more than Pthresh
//!   consecutive periods the congestion tree is not going away quickly and the rate halves
//!   (then the count starts again).
//! - *Uncongested*: neither. The rate increases; the step is R_AI for the first S
//!   consecutive uncongested periods and s x R_AI after, both scaled by
//!   1 + w (1 - R/C) so that slow flows grow faster (the paper: "smaller rates increase
//!   more; start gradually, then more aggressively"), capped at line rate.
//! - Some CE, but under 90%: hold the rate (neither a stable congestion nor a victim), and
//!   both streaks restart \[recon\].
//!
//! "ACC without halt" ([`AccParams::halt`] = false), which the paper uses to show that the
//! halt matters, skips the halt and only matches the rate.
//!
//! Periods are laid on a grid that starts at the first ACK. A period closes at the first
//! ACK at or after its end (ACK-driven: a flow without ACKs has nothing to decide); if a
//! whole period passed without ACKs the grid restarts at the next ACK, and periods without
//! ACKs make no decision and do not break a streak. The first CE-marked ACK after a period
//! without CE restarts the period at that ACK, discarding the partial period
//! ([`AccParams::onset_restart`], \[recon\]): the decision on a new congestion then comes
//! one full period after its onset, on a period that saw only the congestion, which is
//! how the paper's testbed reaches the right rate "within one period".
//!
//! What the simulator provides: ACKs at a higher priority than data, each carrying the
//! echoed [`TcdMark`]; on each ACK the sender calls [`Acc::on_ack_marked`] with the bytes
//! it newly acknowledges and the bytes still in flight after it; the NIC paces at
//! [`Acc::rate`] and sends nothing before [`Acc::halted_until`].

mod halt;
mod params;
#[cfg(test)]
mod tests;

pub use params::{AccCfg, AccParams, ENTRY, NO_HALT_ENTRY};

use super::{AckInfo, CongestionControl};
use crate::base::units::{Rate, Time};
use crate::model::fabric::telemetry::tcd::TcdMark;
use halt::Halt;

/// How ACC classified a period.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AccVerdict {
    /// No CE, no UE: increase.
    Uncongested,
    /// UE and no CE: hold, halve after Pthresh.
    Victim,
    /// CE on at least the threshold fraction: halt and match the ACK rate.
    Congested,
    /// Some CE below the threshold: hold.
    Mixed,
}

/// ACC sender state of one flow.
#[derive(Clone, Debug)]
pub struct Acc {
    p: AccParams,
    line: f64,
    /// Sending rate after any halt, bit/s.
    pub rate: f64,
    halted_until: Option<Time>,
    /// The running halt: when it began, the pipe (R_ack x base RTT, bytes) whose
    /// crossing by the bytes in flight ends it, and the bytes acked since it began.
    halting: Option<Halt>,
    period_start: Option<Time>,
    /// Start of the span over which the open period's R_ack is measured: the period's
    /// start, or earlier when the period follows a stretch without ACKs in which the flow
    /// had bytes in flight (the bottleneck gave it nothing then).
    measured_from: Time,
    acked: u64,
    acks: u32,
    ce: u32,
    ue: u32,
    inflight: u64,
    ue_streak: u32,
    calm_streak: u32,
    /// The last period's verdict.
    pub last_verdict: Option<AccVerdict>,
    /// Periods decided.
    pub periods: u64,
    /// Source halts entered.
    pub halts: u64,
    /// Total halt time, picoseconds.
    pub halt_time: Time,
    /// Victim halvings.
    pub halvings: u64,
    /// Periods restarted at a congestion onset.
    pub onset_restarts: u64,
}

impl Acc {
    /// A flow starting at line rate.
    pub fn new(p: AccParams, line: Rate) -> Acc {
        let c = line.0 as f64;
        Acc {
            p,
            line: c,
            rate: c,
            halted_until: None,
            halting: None,
            period_start: None,
            measured_from: 0,
            acked: 0,
            acks: 0,
            ce: 0,
            ue: 0,
            inflight: 0,
            ue_streak: 0,
            calm_streak: 0,
            last_verdict: None,
            periods: 0,
            halts: 0,
            halt_time: 0,
            halvings: 0,
            onset_restarts: 0,
        }
    }

    /// The parameters in use.
    pub fn params(&self) -> &AccParams {
        &self.p
    }

    /// End of the latest source halt (it may lie in the past): the NIC sends nothing of
    /// this flow before it. `None` if the flow never halted or the last congested period
    /// found no excess.
    pub fn halted_until(&self) -> Option<Time> {
        self.halted_until
    }

    /// Whether the flow is halted at `now`.
    pub fn is_halted(&self, now: Time) -> bool {
        self.halted_until.is_some_and(|t| now < t)
    }

    /// An ACK arrived at `now` acknowledging `newly_acked_bytes` with the echoed TCD
    /// `mark`; `inflight_bytes` are still unacknowledged after it.
    pub fn on_ack_marked(
        &mut self,
        now: Time,
        newly_acked_bytes: u64,
        mark: TcdMark,
        inflight_bytes: u64,
    ) {
        let had_inflight = self.inflight > 0;
        self.inflight = inflight_bytes;
        if let Some(h) = self.halting.as_mut() {
            let end = self.halted_until.unwrap_or(now);
            if now >= end {
                // The planned end passed before this ACK: its bytes belong after the halt.
                self.take_halt_rate(end);
            } else {
                h.acked += newly_acked_bytes;
                let pipe = h.pipe;
                if inflight_bytes <= pipe {
                    // The network conserves packets: once what is in flight fits the pipe,
                    // the queued excess has drained and the bottleneck would idle if the
                    // source stayed silent.
                    self.end_halt(now);
                }
            }
        }
        let t = self.p.period.max(1);
        match self.period_start {
            None => {
                self.period_start = Some(now);
                self.measured_from = now;
            }
            Some(s) if now >= s + t => {
                self.decide(now);
                if now < s + 2 * t {
                    self.period_start = Some(s + t);
                    self.measured_from = s + t;
                } else {
                    // A whole period without ACKs: the grid restarts here. If bytes were
                    // in flight all along, the stretch is part of the next rate estimate.
                    self.period_start = Some(now);
                    self.measured_from = if had_inflight { s + t } else { now };
                }
            }
            Some(_)
                if self.p.onset_restart
                    && mark == TcdMark::Ce
                    && self.ce == 0
                    && !matches!(
                        self.last_verdict,
                        Some(AccVerdict::Congested | AccVerdict::Mixed)
                    ) =>
            {
                // Onset of congestion: the partial period decides nothing and the next
                // decision comes one full period from here.
                self.acks = 0;
                self.ue = 0;
                self.acked = 0;
                self.period_start = Some(now);
                self.measured_from = now;
                self.onset_restarts += 1;
            }
            Some(_) => {}
        }
        self.acked += newly_acked_bytes;
        self.acks += 1;
        match mark {
            TcdMark::Ce => self.ce += 1,
            TcdMark::Ue => self.ue += 1,
            TcdMark::None => {}
        }
    }

    /// Closes the current period at `now`.
    fn decide(&mut self, now: Time) {
        let (acks, ce, ue, acked) = (self.acks, self.ce, self.ue, self.acked);
        // The span closes at the end of the period on the grid (the ACK that closes it
        // may come later and belongs to the next period).
        let t = self.p.period.max(1);
        let end = self.period_start.map_or(now, |s| (s + t).min(now));
        let span = end.saturating_sub(self.measured_from).max(t);
        self.acks = 0;
        self.ce = 0;
        self.ue = 0;
        self.acked = 0;
        if acks == 0 {
            return;
        }
        self.periods += 1;
        let verdict = if ce as f64 >= self.p.ce_threshold * acks as f64 {
            AccVerdict::Congested
        } else if ce > 0 {
            AccVerdict::Mixed
        } else if ue > 0 {
            AccVerdict::Victim
        } else {
            AccVerdict::Uncongested
        };
        self.last_verdict = Some(verdict);
        match verdict {
            AccVerdict::Congested => {
                self.ue_streak = 0;
                self.calm_streak = 0;
                self.congested(now, acked, span);
            }
            AccVerdict::Mixed => {
                self.ue_streak = 0;
                self.calm_streak = 0;
            }
            AccVerdict::Victim => {
                self.calm_streak = 0;
                self.ue_streak += 1;
                if self.ue_streak > self.p.p_thresh {
                    self.rate = (self.rate / 2.0).max(self.p.min_rate);
                    self.halvings += 1;
                    self.ue_streak = 0;
                }
            }
            AccVerdict::Uncongested => {
                self.ue_streak = 0;
                self.calm_streak += 1;
                let mut step =
                    self.p.r_ai * (1.0 + self.p.rate_weight * (1.0 - self.rate / self.line));
                if self.calm_streak > self.p.fast_after {
                    step *= self.p.fast_factor;
                }
                self.rate = (self.rate + step).min(self.line);
            }
        }
    }
}

impl CongestionControl for Acc {
    fn rate_bps(&self) -> f64 {
        self.rate
    }
    fn on_ack(&mut self, now: Time, ack: &AckInfo) {
        self.on_ack_marked(now, ack.newly_acked_wire, ack.mark, ack.inflight_wire);
    }
    fn wants_tcd(&self) -> bool {
        true
    }
    fn hold_until(&self) -> Option<Time> {
        self.halted_until
    }
}
