//! DCQCN (Zhu et al., "Congestion Control for Large-Scale RDMA Deployments", SIGCOMM 2015).
//!
//! Three parts: switches mark ECN with RED ([`crate::model::fabric::ecn`]); the receiver (NP)
//! turns CE marks into at most one CNP per flow per 50 us (in the simulator's transport);
//! the sender (RP), here, keeps a current rate Rc, a target rate Rt and a congestion
//! estimate alpha:
//! - on a CNP: Rt = Rc, Rc = max(Rmin, Rc (1 - alpha/2)), alpha = (1-g) alpha + g, and the
//!   timer, byte counter and their stages restart;
//! - every timer period without a CNP: alpha = (1-g) alpha, the rate increases, and the
//!   timer stage T advances; every B bytes sent the rate increases and the byte stage BC
//!   advances (each increase chooses its mode from the stages before it advances them);
//! - increase: fast recovery (Rc = (Rt+Rc)/2) while max(T, BC) < F; hyper increase
//!   (Rt += (min(T,BC)-F) R_HAI) once both exceed F; additive (Rt += R_AI) otherwise;
//!   all capped at line rate.
//!
//! Who notifies (`cnp_from`): DCQCN as deployed is *backward* notification, the
//! receiver (NP) answering CE marks, so the signal travels to the receiver and back.
//! Document 002 notes that *forward* notification, from the congestion point straight
//! to the source, would react sooner. `cnp_from = "switch"` has every switch send the
//! CNP itself where its egress queue would mark the packet, reusing the long-haul DR's
//! switch-generated CNP ([`crate::model::fabric::roles::switch_cnp`]); `"both"` keeps the receiver's
//! too. The default, `"receiver"`, changes nothing.
//!
//! The timer is evaluated lazily: periods that elapsed since the last event are applied
//! when the sender next sends or hears a CNP, in order, so no event is scheduled per
//! period. The sender's pacing uses Rc.

use super::{AnyCc, BaseRtt, CcEntry, CongestionControl};
use crate::base::param::{Checked, Param, ParamError};
use crate::base::units::serde_units as su;
use crate::base::units::{Rate, Time, NS, US};
use serde::Deserialize;

/// The timer stage counter saturates here (any stage past F behaves alike).
const STAGE_MAX: u32 = u32::MAX;

/// DCQCN parameter profile.
#[derive(Clone, Copy, Debug, Deserialize, serde::Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum DcqcnProfile {
    /// The HPCC ns-3 module's defaults (R_AI 40 Mbps... scaled; see ALGORITHMS.md).
    Ns3,
    /// The DCQCN paper's values.
    Paper,
}

/// When a sender applies the rate cut a CNP asks for.
#[derive(Clone, Copy, Debug, Deserialize, serde::Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum CutOn {
    /// At the CNP; a CNP within `decrease_interval` of the last cut is held until that
    /// interval ends (fabricsim's reading of the Mellanox rate-decrease interval).
    Cnp,
    /// On a periodic decrease timer, as the HPCC ns-3 module does: the flow's first CNP
    /// starts a timer of period `decrease_interval` (first tick one period and 1 ns
    /// later, after that instant's alpha update), and each tick cuts once if a CNP
    /// arrived since the previous tick. So the first cut comes one period after the
    /// first CNP.
    Timer,
}

/// Who sends DCQCN's congestion notifications (`cnp_from`).
#[derive(Clone, Copy, Debug, Default, Deserialize, serde::Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum CnpFrom {
    /// The receiver, on CE-marked data (backward notification, as deployed).
    #[default]
    Receiver,
    /// The switch whose queue congests, straight to the sender (forward notification).
    Switch,
    /// Both.
    Both,
}

impl CnpFrom {
    /// True if receivers answer CE marks with CNPs.
    pub fn receiver(self) -> bool {
        matches!(self, CnpFrom::Receiver | CnpFrom::Both)
    }
    /// True if switches notify senders themselves.
    pub fn switch(self) -> bool {
        matches!(self, CnpFrom::Switch | CnpFrom::Both)
    }
}

/// DCQCN sender (RP) and receiver (NP) parameters. Unset fields take the profile's value.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DcqcnCfg {
    /// Parameter profile.
    #[serde(default = "d_dcqcn_profile")]
    pub profile: DcqcnProfile,
    /// EWMA gain of alpha.
    #[serde(default)]
    pub g: Option<f64>,
    /// Initial alpha.
    #[serde(default)]
    pub alpha0: Option<f64>,
    /// Additive increase step.
    #[serde(default, deserialize_with = "su::opt_rate")]
    pub rai: Option<Rate>,
    /// Hyper increase step.
    #[serde(default, deserialize_with = "su::opt_rate")]
    pub rhai: Option<Rate>,
    /// Minimum rate.
    #[serde(default, deserialize_with = "su::opt_rate")]
    pub rmin: Option<Rate>,
    /// Rate-increase and alpha-decay timer period.
    #[serde(default, deserialize_with = "su::opt_time")]
    pub timer: Option<Time>,
    /// Byte counter threshold.
    #[serde(default, deserialize_with = "su::opt_bytes")]
    pub byte_counter: Option<u64>,
    /// Fast-recovery stage count F.
    #[serde(default)]
    pub f: Option<u32>,
    /// Minimum interval between CNPs of one flow at the receiver.
    #[serde(default, deserialize_with = "su::opt_time")]
    pub cnp_interval: Option<Time>,
    /// Set the target rate to the current rate on every cut (`paper`), or only when the
    /// rate increased since the last cut (`ns3`, Mellanox's `clamp_tgt_rate = 0`).
    #[serde(default)]
    pub clamp_target: Option<bool>,
    /// Scale the `paper` profile's additive step (40 Mbps) and byte counter (10 MB), the
    /// SIGCOMM 2015 values for 40G NICs, by line rate / 40 Gbps.
    #[serde(default)]
    pub scale_to_line_rate: bool,
    /// Least time between two rate cuts (`cut_on = "cnp"`), or the decrease timer's
    /// period (`cut_on = "timer"`).
    #[serde(default, deserialize_with = "su::opt_time")]
    pub decrease_interval: Option<Time>,
    /// When a CNP's cut is applied (`cnp`, the default, or `timer`: ns-3's periodic
    /// decrease timer).
    #[serde(default = "d_cut_on")]
    pub cut_on: CutOn,
    /// Who notifies: the `receiver` (backward, the default), the congested `switch`
    /// (forward, [`crate::model::fabric::roles::switch_cnp`]), or `both`.
    #[serde(default)]
    pub cnp_from: CnpFrom,
}

fn d_cut_on() -> CutOn {
    CutOn::Cnp
}

fn d_dcqcn_profile() -> DcqcnProfile {
    DcqcnProfile::Ns3
}

impl Default for DcqcnCfg {
    fn default() -> Self {
        DcqcnCfg {
            profile: d_dcqcn_profile(),
            g: None,
            alpha0: None,
            rai: None,
            rhai: None,
            rmin: None,
            timer: None,
            byte_counter: None,
            f: None,
            cnp_interval: None,
            clamp_target: None,
            scale_to_line_rate: false,
            decrease_interval: None,
            cut_on: d_cut_on(),
            cnp_from: CnpFrom::default(),
        }
    }
}

impl DcqcnProfile {
    /// The name used in scenario files.
    pub fn name(self) -> &'static str {
        match self {
            DcqcnProfile::Ns3 => "ns3",
            DcqcnProfile::Paper => "paper",
        }
    }
}

/// `dcqcn`.
pub static ENTRY: CcEntry = CcEntry {
    name: "dcqcn",
    about: "DCQCN (Zhu et al., SIGCOMM 2015): ECN marks, CNPs, rate cuts and timed recovery",
    section: Some("dcqcn"),
    reads_cnp: true,
    reads_int: false,
    reads_tcd: false,
    base_rtt: BaseRtt::Unused,
    params: |cc, ctx| params(&cc.dcqcn, ctx.line),
    build: |cc, ctx| {
        AnyCc::Dcqcn(Dcqcn::new(
            DcqcnParams::resolve(&cc.dcqcn, ctx.line),
            ctx.line,
            ctx.start,
        ))
    },
    validate: |cc| cc.dcqcn.validate(),
    #[cfg(test)]
    check_fields: || {
        crate::base::param::assert_lists_fields::<DcqcnCfg>(&params(
            &DcqcnCfg::default(),
            Rate::gbps(100),
        ))
    },
};

/// The parameters `cfg` resolves to for a NIC of rate `line`, each noting the other
/// profile's value where it differs.
fn params(cfg: &DcqcnCfg, line: Rate) -> Vec<Param> {
    let rows = |p: &DcqcnParams| {
        vec![
            Param::plain("g", p.g, "alpha EWMA gain"),
            Param::plain("alpha0", p.alpha0, "initial alpha"),
            Param::rate("rai", p.rai, "additive increase R_AI"),
            Param::rate("rhai", p.rhai, "hyper increase R_HAI"),
            Param::rate("rmin", p.rmin, "minimum rate"),
            Param::time("timer", p.timer, "rate-increase timer period (at least 1us)"),
            Param::bytes("byte_counter", p.byte_counter, "byte counter (0: off)"),
            Param::plain("f", p.f, "fast-recovery stages F"),
            Param::time(
                "cnp_interval",
                p.cnp_interval,
                "receiver: least gap between CNPs of a flow (0: one per CE packet; else at least 1us)",
            ),
            Param::time(
                "decrease_interval",
                p.decrease_interval,
                "least time between cuts; the decrease timer's period with cut_on = \"timer\" (0 or at least 1us)",
            ),
            Param::plain(
                "clamp_target",
                p.clamp_target,
                "target rate := current rate on every cut (false: only after an increase)",
            ),
        ]
    };
    let other = match cfg.profile {
        DcqcnProfile::Ns3 => DcqcnProfile::Paper,
        DcqcnProfile::Paper => DcqcnProfile::Ns3,
    };
    let theirs = rows(&DcqcnParams::resolve(
        &DcqcnCfg {
            profile: other,
            ..DcqcnCfg::default()
        },
        line,
    ));
    let mut v = vec![
        Param::choice(
            "profile",
            &cfg.profile,
            "the HPCC ns-3 module (Mellanox mode), or SIGCOMM 2015",
        ),
        Param::plain(
            "scale_to_line_rate",
            cfg.scale_to_line_rate,
            "paper: R_AI and byte counter (40G values) times line rate / 40 Gbps",
        ),
        Param::choice(
            "cut_on",
            &cfg.cut_on,
            "cnp: cut at the CNP (held within the decrease interval); timer: ns-3's \
             periodic decrease timer from the first CNP",
        ),
        Param::choice(
            "cnp_from",
            &cfg.cnp_from,
            "who sends CNPs: receiver (backward, on CE marks), switch (forward: the \
             congested switch, where it would mark, straight to the sender; paced per flow \
             by cnp_interval) or both",
        ),
    ];
    v.extend(
        rows(&DcqcnParams::resolve(cfg, line))
            .into_iter()
            .zip(theirs)
            .map(|(mut a, b)| {
                if a.value != b.value {
                    a.note = format!("{}; {}: {}", a.note, other.name(), b.value);
                }
                a
            }),
    );
    v
}

impl DcqcnCfg {
    /// Checks the settings; fields are named relative to `[cc.dcqcn]`.
    pub fn validate(&self) -> Checked {
        if let Some(g) = self.g {
            if !(g > 0.0 && g <= 1.0) {
                return Err(ParamError::new("g", "a gain between 0 (exclusive) and 1"));
            }
        }
        use crate::base::floors::{opt_at_least, zero_or_at_least, NIC_TIMER};
        let firmware = "NIC firmware counts DCQCN's timers in microseconds";
        opt_at_least("timer", self.timer, NIC_TIMER, firmware)?;
        for (field, t) in [
            ("decrease_interval", self.decrease_interval),
            ("cnp_interval", self.cnp_interval),
        ] {
            if let Some(t) = t {
                zero_or_at_least(field, t, NIC_TIMER, firmware)?;
            }
        }
        if let Some(a) = self.alpha0 {
            // alpha is the EWMA of the marked fraction: a cut multiplies the rate by
            // 1 - alpha / 2, which a negative or above-1 alpha turns into a raise or a
            // rate below half.
            if !(0.0..=1.0).contains(&a) {
                return Err(ParamError::new(
                    "alpha0",
                    format!("{a}: the initial alpha is a fraction in [0, 1]"),
                ));
            }
        }
        // byte_counter = 0 is the off switch (`fabricsim list` shows it as the ns3
        // profile's default), so it is accepted like any other size.
        if self.cut_on == CutOn::Timer {
            let interval = DcqcnParams::resolve(self, Rate::gbps(100)).decrease_interval;
            if interval == 0 {
                return Err(ParamError::new(
                    "cut_on",
                    "\"timer\" needs a positive decrease_interval (the timer's period; the \
                     paper profile has none: set decrease_interval, e.g. \"4us\")",
                ));
            }
        }
        for (field, r) in [("rai", self.rai), ("rhai", self.rhai), ("rmin", self.rmin)] {
            if r == Some(Rate(0)) {
                return Err(ParamError::new(field, "must be positive"));
            }
        }
        Ok(())
    }
}

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
    /// Rate-increase timer period.
    pub timer: Time,
    /// Alpha update period.
    pub alpha_interval: Time,
    /// Minimum time between two rate cuts (0: cut on every CNP).
    pub decrease_interval: Time,
    /// Byte counter (0: disabled).
    pub byte_counter: u64,
    /// Fast-recovery stages.
    pub f: u32,
    /// NP: minimum gap between CNPs of one flow (0: one per CE-marked packet).
    pub cnp_interval: Time,
    /// Set Rt = Rc on every cut (paper); otherwise only when a rate increase happened
    /// since the last cut (Mellanox NICs' `clamp_tgt_rate = 0`).
    pub clamp_target: bool,
    /// Mellanox-style state machine (ns-3 HPCC module, `CC_MODE 1`): timer-only
    /// increase where stage < F is fast recovery, stage == F additive, above hyper; alpha
    /// updated on its own timer from whether a CNP arrived in the interval.
    pub mlx: bool,
    /// When cuts are applied.
    pub cut_on: CutOn,
}

impl DcqcnParams {
    /// Parameters for a NIC of rate `line` from the scenario's settings.
    ///
    /// - `paper`: SIGCOMM 2015 and ALGORITHMS.md: g 1/256, alpha and rate timers 55 us,
    ///   byte counter 10 MB, F 5, R_AI 40 Mbps, R_HAI C/10, Rmin C/1000, CNPs at most one
    ///   per 50 us per flow, Rt clamped on every cut. R_AI and the byte counter are the
    ///   paper's values for its 40G NICs; `scale_to_line_rate` multiplies them by C / 40G
    ///   (at 100G: 100 Mbps and 25 MB).
    /// - `ns3`: the HPCC ns-3 module's `mix/config.txt` (ALPHA_RESUME_INTERVAL 1 us,
    ///   RATE_DECREASE_INTERVAL 4 us, CLAMP_TARGET_RATE 0, RP_TIMER 300 us,
    ///   FAST_RECOVERY_TIMES 1, RATE_AI 20 Mb/s and RATE_HAI 200 Mb/s at 100G, scaled with
    ///   C), MIN_RATE 1000 Mb/s as the module's run scripts set it (its `config.txt`
    ///   says 100 Mb/s), CNP feedback for every CE-marked packet.
    pub fn resolve(cfg: &DcqcnCfg, line: Rate) -> DcqcnParams {
        let c = line.0 as f64;
        // The paper's NICs ran at 40G.
        let scale = if cfg.scale_to_line_rate && cfg.profile == DcqcnProfile::Paper {
            c / 40e9
        } else {
            1.0
        };
        let base = match cfg.profile {
            DcqcnProfile::Paper => DcqcnParams {
                g: 1.0 / 256.0,
                alpha0: 1.0,
                rai: 40e6 * scale,
                rhai: c / 10.0,
                rmin: c / 1000.0,
                timer: 55 * US,
                alpha_interval: 55 * US,
                decrease_interval: 0,
                byte_counter: (10_000_000.0 * scale).round() as u64,
                f: 5,
                cnp_interval: 50 * US,
                clamp_target: true,
                mlx: false,
                cut_on: CutOn::Cnp,
            },
            DcqcnProfile::Ns3 => DcqcnParams {
                g: 1.0 / 256.0,
                alpha0: 1.0,
                rai: c / 5000.0,
                rhai: c / 500.0,
                rmin: 1e9_f64.min(c),
                timer: 300 * US,
                alpha_interval: US,
                decrease_interval: 4 * US,
                byte_counter: 0,
                f: 1,
                cnp_interval: 0,
                clamp_target: false,
                mlx: true,
                cut_on: CutOn::Cnp,
            },
        };
        DcqcnParams {
            g: cfg.g.unwrap_or(base.g),
            alpha0: cfg.alpha0.unwrap_or(base.alpha0),
            rai: cfg.rai.map(|r| r.0 as f64).unwrap_or(base.rai),
            rhai: cfg.rhai.map(|r| r.0 as f64).unwrap_or(base.rhai),
            rmin: cfg.rmin.map(|r| r.0 as f64).unwrap_or(base.rmin),
            timer: cfg.timer.unwrap_or(base.timer),
            byte_counter: cfg.byte_counter.unwrap_or(base.byte_counter),
            f: cfg.f.unwrap_or(base.f),
            cnp_interval: cfg.cnp_interval.unwrap_or(base.cnp_interval),
            clamp_target: cfg.clamp_target.unwrap_or(base.clamp_target),
            cut_on: cfg.cut_on,
            decrease_interval: cfg.decrease_interval.unwrap_or(base.decrease_interval),
            ..base
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
    next_alpha: Time,
    cnp_in_alpha_interval: bool,
    last_cut: Option<Time>,
    cut_pending: bool,
    /// `cut_on = "timer"`: the decrease timer's next tick (never before the first CNP).
    next_decrease: Time,
    /// `cut_on = "timer"`: a CNP arrived since the last tick.
    decrease_cnp: bool,
    /// CNPs received.
    pub cnps: u64,
    /// Rate cuts applied.
    pub cuts: u64,
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
            next_alpha: now + p.alpha_interval,
            cnp_in_alpha_interval: false,
            last_cut: None,
            cut_pending: false,
            next_decrease: Time::MAX,
            decrease_cnp: false,
            cnps: 0,
            cuts: 0,
        }
    }

    fn increase(&mut self) {
        let f = self.p.f;
        if self.p.mlx {
            let t = self.t_stage;
            if t < f {
                // fast recovery toward the target
            } else if t == f {
                self.rt += self.p.rai;
            } else {
                self.rt += self.p.rhai;
            }
        } else {
            let (t, bc) = (self.t_stage, self.bc_stage);
            if t.max(bc) < f {
                // fast recovery toward the target
            } else if t.min(bc) > f {
                self.rt += (t.min(bc) - f) as f64 * self.p.rhai;
            } else {
                self.rt += self.p.rai;
            }
        }
        self.rt = self.rt.min(self.line);
        self.rc = ((self.rt + self.rc) / 2.0).min(self.line);
    }

    fn cut(&mut self, now: Time) {
        if self.p.clamp_target || self.t_stage > 0 || self.last_cut.is_none() {
            self.rt = self.rc;
        }
        self.rc = (self.rc * (1.0 - self.alpha / 2.0)).max(self.p.rmin);
        if !self.p.mlx {
            self.alpha = (1.0 - self.p.g) * self.alpha + self.p.g;
        }
        self.t_stage = 0;
        self.bc_stage = 0;
        self.bytes = 0;
        self.next_timer = now + self.p.timer;
        self.last_cut = Some(now);
        self.cuts += 1;
    }

    /// Applies alpha periods that ended at or before `now` (Mellanox style only; the
    /// paper's alpha decays with the rate timer).
    fn catch_up_alpha(&mut self, now: Time) {
        if !self.p.mlx || now < self.next_alpha {
            return;
        }
        let g = self.p.g;
        self.alpha = if self.cnp_in_alpha_interval {
            (1.0 - g) * self.alpha + g
        } else {
            (1.0 - g) * self.alpha
        };
        self.cnp_in_alpha_interval = false;
        let k = (now - self.next_alpha) / self.p.alpha_interval;
        if k > 0 {
            self.alpha *= (1.0 - g).powi(k.min(100_000) as i32);
        }
        self.next_alpha += (k + 1) * self.p.alpha_interval;
    }

    /// Applies the timer periods that ended at or before `now`, and a rate cut that was
    /// held back by the decrease interval or waits for the decrease timer's tick.
    fn catch_up(&mut self, now: Time) {
        match self.p.cut_on {
            CutOn::Cnp => {
                if self.cut_pending {
                    let due = self.last_cut.map_or(now, |t| t + self.p.decrease_interval);
                    if due <= now {
                        self.catch_up_alpha(due);
                        self.cut_pending = false;
                        self.cut(due);
                    }
                }
            }
            CutOn::Timer => {
                if self.next_decrease <= now {
                    if self.decrease_cnp {
                        // Everything due before the tick happens first, in time order.
                        let due = self.next_decrease;
                        self.rate_timers(due);
                        self.catch_up_alpha(due);
                        self.decrease_cnp = false;
                        self.cut(due);
                    }
                    // Ticks without a CNP since the previous one change nothing.
                    let i = self.p.decrease_interval;
                    self.next_decrease += ((now - self.next_decrease) / i + 1) * i;
                }
            }
        }
        self.catch_up_alpha(now);
        self.rate_timers(now);
    }

    /// Applies the rate timer's periods that ended at or before `now`.
    fn rate_timers(&mut self, now: Time) {
        while self.next_timer <= now {
            if self.rc >= self.line && self.rt >= self.line {
                // At line rate only alpha keeps decaying: apply all remaining periods at
                // once instead of one by one.
                let n = (now - self.next_timer) / self.p.timer + 1;
                if !self.p.mlx {
                    self.alpha *= (1.0 - self.p.g).powi(n.min(i32::MAX as u64) as i32);
                }
                // Stages past u32 are all "beyond F": saturate rather than wrap.
                self.t_stage = self
                    .t_stage
                    .saturating_add(u32::try_from(n).unwrap_or(STAGE_MAX));
                self.next_timer += n * self.p.timer;
                break;
            }
            if !self.p.mlx {
                self.alpha *= 1.0 - self.p.g;
            }
            // The increase this period makes follows the stages completed before it,
            // then the stage advances: after a cut (stage 0) the first period is fast
            // recovery, and F periods of it come before additive increase (the ns-3
            // module's RateIncEventTimerMlx; the paper's F iterations of fast recovery).
            self.increase();
            self.t_stage = self.t_stage.saturating_add(1);
            self.next_timer += self.p.timer;
        }
    }

    /// The parameters in use.
    pub fn params(&self) -> &DcqcnParams {
        &self.p
    }
}

impl CongestionControl for Dcqcn {
    fn on_start(&mut self, now: Time) {
        // Timers run from the first packet; a continued queue pair keeps its rates.
        self.next_timer = self.next_timer.max(now + self.p.timer);
        self.next_alpha = self.next_alpha.max(now + self.p.alpha_interval);
    }

    fn rate_bps(&self) -> f64 {
        self.rc
    }
    fn on_send(&mut self, now: Time, bytes: u64) {
        self.catch_up(now);
        if self.p.byte_counter == 0 {
            return;
        }
        self.bytes += bytes;
        while self.bytes >= self.p.byte_counter {
            self.bytes -= self.p.byte_counter;
            // As for the timer: the mode from the stages before this event.
            self.increase();
            self.bc_stage = self.bc_stage.saturating_add(1);
        }
    }
    fn on_cnp(&mut self, now: Time) {
        self.catch_up(now);
        if self.p.mlx && self.cnps == 0 {
            // Mellanox NICs (and the ns-3 module) start alpha at 1 on a flow's first CNP,
            // whatever it decayed to before.
            self.alpha = 1.0;
        }
        self.cnps += 1;
        if self.p.cut_on == CutOn::Timer {
            if self.cnps == 1 {
                // ns-3 starts the alpha and decrease timers at the first CNP; the
                // decrease tick comes 1 ns after that instant's alpha update.
                self.next_alpha = now + self.p.alpha_interval;
                self.next_decrease = now + self.p.decrease_interval + NS;
            } else {
                self.cnp_in_alpha_interval = true;
            }
            self.decrease_cnp = true;
            return;
        }
        self.cnp_in_alpha_interval = true;
        match self.last_cut {
            Some(t) if now < t + self.p.decrease_interval => self.cut_pending = true,
            _ => self.cut(now),
        }
    }
    fn wants_cnp(&self) -> bool {
        true
    }
    fn cnp_interval(&self) -> Time {
        self.p.cnp_interval
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn validate_takes_what_list_prints_and_rejects_alpha0_outside_zero_one() {
        // `fabricsim list` prints byte_counter = "0B" (off): writing it back is fine.
        let off = DcqcnCfg {
            byte_counter: Some(0),
            ..DcqcnCfg::default()
        };
        assert_eq!(off.validate(), Ok(()));
        for a in [0.0, 0.5, 1.0] {
            let c = DcqcnCfg {
                alpha0: Some(a),
                ..DcqcnCfg::default()
            };
            assert_eq!(c.validate(), Ok(()), "{a}");
        }
        for a in [-0.5, 1.5, f64::NAN, f64::INFINITY] {
            let c = DcqcnCfg {
                alpha0: Some(a),
                ..DcqcnCfg::default()
            };
            assert_eq!(
                c.validate().map_err(|e| e.field),
                Err("alpha0".into()),
                "{a}"
            );
        }
    }

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

    #[test]
    fn ns3_profile_limits_cuts_to_one_per_interval_and_keeps_target() {
        let p = DcqcnParams::resolve(&DcqcnCfg::default(), Rate::gbps(100));
        assert!(p.mlx && !p.clamp_target);
        let mut d = Dcqcn::new(p, Rate::gbps(100), 0);
        d.on_cnp(10 * US);
        assert!((d.rc - 50e9).abs() < 1.0);
        // A second CNP 1 us later is held until the 4 us decrease interval ends.
        d.on_cnp(11 * US);
        assert!((d.rc - 50e9).abs() < 1.0);
        d.on_send(14 * US, 1000);
        assert!(
            d.rc < 50e9,
            "held cut applied at the interval's end: {}",
            d.rc
        );
        // The target was not clamped down by the back-to-back cut (no increase between).
        assert!((d.rt - 100e9).abs() < 1.0, "rt = {}", d.rt);
        assert_eq!(d.cuts, 2);
        // Alpha decays on its 1 us timer when no CNP arrives.
        let a = d.alpha;
        d.on_send(200 * US, 1000);
        assert!(d.alpha < a * 0.6, "{} -> {}", a, d.alpha);
    }

    #[test]
    fn the_paper_profile_scales_with_line_rate_on_request() {
        let cfg = |scale: bool, profile: DcqcnProfile| DcqcnCfg {
            profile,
            scale_to_line_rate: scale,
            ..DcqcnCfg::default()
        };
        let p = DcqcnParams::resolve(&cfg(false, DcqcnProfile::Paper), Rate::gbps(100));
        assert_eq!((p.rai, p.byte_counter), (40e6, 10_000_000));
        let s = DcqcnParams::resolve(&cfg(true, DcqcnProfile::Paper), Rate::gbps(100));
        assert_eq!((s.rai, s.byte_counter), (100e6, 25_000_000));
        assert_eq!(s.rhai, p.rhai, "the rest is the paper's");
        let s400 = DcqcnParams::resolve(&cfg(true, DcqcnProfile::Paper), Rate::gbps(400));
        assert_eq!((s400.rai, s400.byte_counter), (400e6, 100_000_000));
        // At 40G scaling changes nothing; ns3 already scales its own steps.
        let s40 = DcqcnParams::resolve(&cfg(true, DcqcnProfile::Paper), Rate::gbps(40));
        assert_eq!((s40.rai, s40.byte_counter), (40e6, 10_000_000));
        let n = DcqcnParams::resolve(&cfg(true, DcqcnProfile::Ns3), Rate::gbps(100));
        let n0 = DcqcnParams::resolve(&cfg(false, DcqcnProfile::Ns3), Rate::gbps(100));
        assert_eq!((n.rai, n.byte_counter), (n0.rai, n0.byte_counter));
        // A value set in the scenario wins over the scaled one; clamp_target is exposed.
        let c = DcqcnCfg {
            rai: Some(Rate(5_000_000)),
            clamp_target: Some(false),
            ..cfg(true, DcqcnProfile::Paper)
        };
        let r = DcqcnParams::resolve(&c, Rate::gbps(100));
        assert_eq!(r.rai, 5e6);
        assert!(!r.clamp_target && p.clamp_target);
    }

    #[test]
    fn timer_cuts_one_period_after_the_first_cnp_and_once_per_tick() {
        let cfg = DcqcnCfg {
            cut_on: CutOn::Timer,
            ..DcqcnCfg::default()
        };
        let p = DcqcnParams::resolve(&cfg, Rate::gbps(100));
        assert_eq!(p.decrease_interval, 4 * US);
        let mut d = Dcqcn::new(p, Rate::gbps(100), 0);
        d.on_cnp(10 * US);
        // No cut at the CNP, nor before the tick at 14 us + 1 ns.
        assert_eq!(d.cuts, 0);
        d.on_send(14 * US, 1000);
        assert!((d.rc - 100e9).abs() < 1.0, "{}", d.rc);
        d.on_send(14 * US + NS, 1000);
        assert_eq!(d.cuts, 1);
        // Alpha was reset to 1 on the first CNP and decayed over 4 alpha periods
        // without a CNP: the cut is by alpha / 2 of that.
        let a = (1.0 - p.g).powi(4);
        assert!((d.rc - 100e9 * (1.0 - a / 2.0)).abs() < 1.0, "{}", d.rc);
        // Three CNPs within one period make one cut, at the next tick (ticks run every
        // 4 us from the first: 18 us + 1 ns).
        let rc = d.rc;
        for t in [15, 16, 17] {
            d.on_cnp(t * US);
        }
        d.on_send(18 * US, 1000);
        assert_eq!(d.cuts, 1);
        d.on_send(18 * US + NS, 1000);
        assert_eq!(d.cuts, 2);
        assert!(d.rc < rc);
        // Quiet periods cut nothing.
        d.on_send(40 * US, 1000);
        assert_eq!(d.cuts, 2);
        // The default still cuts at the CNP itself.
        let mut c = Dcqcn::new(
            DcqcnParams::resolve(&DcqcnCfg::default(), Rate::gbps(100)),
            Rate::gbps(100),
            0,
        );
        c.on_cnp(10 * US);
        assert_eq!(c.cuts, 1);
    }

    #[test]
    fn timer_cuts_need_a_decrease_interval() {
        let paper = DcqcnCfg {
            profile: DcqcnProfile::Paper,
            cut_on: CutOn::Timer,
            ..DcqcnCfg::default()
        };
        let e = paper.validate().unwrap_err();
        assert!(format!("{e:?}").contains("cut_on"), "{e:?}");
        let ok = DcqcnCfg {
            decrease_interval: Some(50 * US),
            ..paper
        };
        assert!(ok.validate().is_ok());
    }

    #[test]
    fn the_first_timer_after_a_cut_is_fast_recovery_and_f_of_them_come_first() {
        // ns3 profile, F = 1: one period of fast recovery (target kept), then additive.
        let p = DcqcnParams::resolve(&DcqcnCfg::default(), Rate::gbps(100));
        assert_eq!(p.f, 1);
        let mut d = Dcqcn::new(p, Rate::gbps(100), 0);
        d.on_cnp(0);
        d.on_send(p.timer, 1000);
        // A cut after an increase sets the target to the rate, below line rate.
        let t1 = p.timer + 10 * US;
        d.on_cnp(t1);
        let (rc, rt) = (d.rc, d.rt);
        assert!(rt < 100e9 - p.rai, "{rt}");
        d.on_send(t1 + p.timer, 1000);
        assert_eq!(
            d.rt, rt,
            "first period after the cut: fast recovery keeps the target"
        );
        assert!((d.rc - (rc + rt) / 2.0).abs() < 1.0, "{}", d.rc);
        d.on_send(t1 + 2 * p.timer, 1000);
        assert!((d.rt - (rt + p.rai)).abs() < 1.0, "then additive: {}", d.rt);
        // paper profile, F = 5: five periods of fast recovery before the first R_AI.
        let pp = params();
        let mut d = Dcqcn::new(pp, Rate::gbps(100), 0);
        d.on_cnp(0);
        d.on_cnp(1);
        let rt = d.rt;
        assert!(rt < 100e9 - pp.rai, "room for an additive step");
        for k in 1..=5 {
            d.on_send(1 + k * pp.timer, 1000);
            assert_eq!(d.rt, rt, "period {k}: fast recovery");
        }
        d.on_send(1 + 6 * pp.timer, 1000);
        assert!(
            (d.rt - (rt + pp.rai)).abs() < 1.0,
            "period 6: additive, {}",
            d.rt
        );
        // The ns3 floor is the scripts' 1 Gbps.
        assert_eq!(p.rmin, 1e9);
    }
}
