//! DCQCN (Zhu et al., "Congestion Control for Large-Scale RDMA Deployments", SIGCOMM 2015).
//!
//! Three parts: switches mark ECN with RED ([`crate::fabric::ecn`]); the receiver (NP)
//! turns CE marks into at most one CNP per flow per 50 us (in the simulator's transport);
//! the sender (RP), here, keeps a current rate Rc, a target rate Rt and a congestion
//! estimate alpha:
//! - on a CNP: Rt = Rc, Rc = max(Rmin, Rc (1 - alpha/2)), alpha = (1-g) alpha + g, and the
//!   timer, byte counter and their stages restart;
//! - every timer period without a CNP: alpha = (1-g) alpha, and the timer stage T advances
//!   and the rate increases; every B bytes sent the byte stage BC advances and the rate
//!   increases;
//! - increase: fast recovery (Rc = (Rt+Rc)/2) while max(T, BC) < F; hyper increase
//!   (Rt += (min(T,BC)-F) R_HAI) once both exceed F; additive (Rt += R_AI) otherwise;
//!   all capped at line rate.
//!
//! The timer is evaluated lazily: periods that elapsed since the last event are applied
//! when the sender next sends or hears a CNP, in order, so no event is scheduled per
//! period. The sender's pacing uses Rc.

use super::CongestionControl;
use crate::scenario::config::{DcqcnCfg, DcqcnProfile};
use crate::units::{Rate, Time, US};

/// Resolved DCQCN parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DcqcnParams {
    /// Alpha EWMA gain.
    pub g: f64,
    /// Initial alpha.
    pub alpha0: f64,
    /// Additive increase (bps).
    pub rai: f64,
    /// Hyper increase (bps).
    pub rhai: f64,
    /// Minimum rate (bps).
    pub rmin: f64,
    /// Timer period.
    pub timer: Time,
    /// Byte counter.
    pub byte_counter: u64,
    /// Fast-recovery stages.
    pub f: u32,
    /// NP: minimum gap between CNPs of one flow.
    pub cnp_interval: Time,
}

impl DcqcnParams {
    /// Parameters for a NIC of rate `line` from the scenario's settings. The `paper`
    /// profile uses the SIGCOMM 2015 values (R_AI 40 Mbps, timer 55 us, B 10 MB); the
    /// `ns3` profile scales the increase steps with the line rate as the HPCC ns-3
    /// module's scripts do (reconstructed: R_AI = C/2000, R_HAI = C/200).
    pub fn resolve(cfg: &DcqcnCfg, line: Rate) -> DcqcnParams {
        let c = line.0 as f64;
        let (rai, rhai) = match cfg.profile {
            DcqcnProfile::Paper => (40e6, c / 10.0),
            DcqcnProfile::Ns3 => (c / 2000.0, c / 200.0),
        };
        DcqcnParams {
            g: cfg.g.unwrap_or(1.0 / 256.0),
            alpha0: cfg.alpha0.unwrap_or(1.0),
            rai: cfg.rai.map(|r| r.0 as f64).unwrap_or(rai),
            rhai: cfg.rhai.map(|r| r.0 as f64).unwrap_or(rhai),
            rmin: cfg.rmin.map(|r| r.0 as f64).unwrap_or(c / 1000.0),
            timer: cfg.timer.unwrap_or(55 * US),
            byte_counter: cfg.byte_counter.unwrap_or(10_000_000),
            f: cfg.f.unwrap_or(5),
            cnp_interval: cfg.cnp_interval.unwrap_or(50 * US),
        }
    }
}

/// DCQCN sender state of one flow.
#[derive(Clone, Debug)]
pub struct Dcqcn {
    p: DcqcnParams,
    line: f64,
    /// Current rate.
    pub rc: f64,
    /// Target rate.
    pub rt: f64,
    /// Congestion estimate.
    pub alpha: f64,
    t_stage: u32,
    bc_stage: u32,
    bytes: u64,
    next_timer: Time,
    /// CNPs received.
    pub cnps: u64,
}

impl Dcqcn {
    /// A flow starting at `now` at line rate.
    pub fn new(p: DcqcnParams, line: Rate, now: Time) -> Dcqcn {
        let c = line.0 as f64;
        Dcqcn {
            p,
            line: c,
            rc: c,
            rt: c,
            alpha: p.alpha0,
            t_stage: 0,
            bc_stage: 0,
            bytes: 0,
            next_timer: now + p.timer,
            cnps: 0,
        }
    }

    fn increase(&mut self) {
        let (t, bc, f) = (self.t_stage, self.bc_stage, self.p.f);
        if t.max(bc) < f {
            // fast recovery toward the target
        } else if t.min(bc) > f {
            self.rt += (t.min(bc) - f) as f64 * self.p.rhai;
        } else {
            self.rt += self.p.rai;
        }
        self.rt = self.rt.min(self.line);
        self.rc = ((self.rt + self.rc) / 2.0).min(self.line);
    }

    /// Applies the timer periods that ended at or before `now`.
    fn catch_up(&mut self, now: Time) {
        while self.next_timer <= now {
            if self.rc >= self.line && self.rt >= self.line {
                // At line rate only alpha keeps decaying: apply all remaining periods at
                // once instead of one by one.
                let n = (now - self.next_timer) / self.p.timer + 1;
                self.alpha *= (1.0 - self.p.g).powi(n.min(i32::MAX as u64) as i32);
                self.t_stage = self.t_stage.saturating_add(n.min(u32::MAX as u64) as u32);
                self.next_timer += n * self.p.timer;
                break;
            }
            self.alpha *= 1.0 - self.p.g;
            self.t_stage = self.t_stage.saturating_add(1);
            self.increase();
            self.next_timer += self.p.timer;
        }
    }

    /// The parameters in use.
    pub fn params(&self) -> &DcqcnParams {
        &self.p
    }
}

impl CongestionControl for Dcqcn {
    fn rate_bps(&self) -> f64 {
        self.rc
    }
    fn on_send(&mut self, now: Time, bytes: u64) {
        self.catch_up(now);
        self.bytes += bytes;
        while self.bytes >= self.p.byte_counter {
            self.bytes -= self.p.byte_counter;
            self.bc_stage = self.bc_stage.saturating_add(1);
            self.increase();
        }
    }
    fn on_cnp(&mut self, now: Time) {
        self.catch_up(now);
        self.cnps += 1;
        self.rt = self.rc;
        self.rc = (self.rc * (1.0 - self.alpha / 2.0)).max(self.p.rmin);
        self.alpha = (1.0 - self.p.g) * self.alpha + self.p.g;
        self.t_stage = 0;
        self.bc_stage = 0;
        self.bytes = 0;
        self.next_timer = now + self.p.timer;
    }
    fn wants_cnp(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params() -> DcqcnParams {
        DcqcnParams::resolve(
            &DcqcnCfg {
                profile: DcqcnProfile::Paper,
                ..DcqcnCfg::default()
            },
            Rate::gbps(100),
        )
    }

    #[test]
    fn cnp_cuts_by_half_alpha() {
        let mut d = Dcqcn::new(params(), Rate::gbps(100), 0);
        d.on_cnp(1_000);
        // alpha0 = 1: Rc = C * (1 - 1/2).
        assert!((d.rc - 50e9).abs() < 1.0);
        assert!((d.rt - 100e9).abs() < 1.0);
        let a = d.alpha;
        assert!((a - 1.0).abs() < 1e-12, "alpha = (1-g)*1 + g = 1");
        d.on_cnp(2_000);
        assert!((d.rc - 25e9).abs() < 1.0);
    }

    #[test]
    fn recovers_toward_target_then_line_rate() {
        let p = params();
        let mut d = Dcqcn::new(p, Rate::gbps(100), 0);
        d.on_cnp(0);
        let after_cut = d.rc;
        // One timer period: fast recovery halves the gap to Rt.
        d.on_send(p.timer, 1000);
        assert!((d.rc - (after_cut + 100e9) / 2.0).abs() < 1.0, "{}", d.rc);
        assert!(d.alpha < 1.0);
        // Long enough without CNPs: back at line rate.
        d.on_send(500 * p.timer, 1000);
        assert!((d.rc - 100e9).abs() < 1.0, "{}", d.rc);
    }

    #[test]
    fn never_below_rmin() {
        let p = params();
        let mut d = Dcqcn::new(p, Rate::gbps(100), 0);
        for i in 0..100 {
            d.on_cnp(i);
        }
        assert!(d.rc >= p.rmin);
        assert!((d.rc - p.rmin).abs() < 1.0);
    }
}
