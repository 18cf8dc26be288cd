//! The DR switch (document 001): the deep-buffer switch that joins a campus to the
//! long-haul fibre, and the congestion notifications it sends itself.
//!
//! Over 120 km a receiver's CNP reaches the sender more than a millisecond after the DR's
//! queue built up, by when a 400G sender has put tens of megabytes more on the way:
//! end-to-end ECN cannot keep the DR from dropping. Document 001's remedy is the DR
//! sending the CNP itself, from inside the sender's campus, so that it arrives within
//! tens of microseconds. Here a DR switch is a [`SwitchRole`](crate::model::fabric::switch)
//! whose arriving data packets are routed as a plain switch routes them; when the chosen
//! egress faces the DCI, the length q of its queue (the packet's priority) decides
//! whether the DR sends a CNP for the packet's flow straight back to the flow's sender,
//! at most one per flow every `cnp_interval` (default 10 us). The sender's congestion
//! control treats it as any CNP. `trigger` says how q decides (the document names both):
//!
//! - `"threshold"` (the default): notify when q >= `cnp_threshold` (default 1 MiB).
//! - `"red"`: notify with RED's probability, 0 for q <= `red_kmin`, `red_pmax` x (q -
//!   `red_kmin`) / (`red_kmax` - `red_kmin`) up to `red_kmax`, and 1 above it (the same
//!   curve as ECN marking, [`RedMarker::probability`]). The draw is made only for a
//!   packet whose flow may have a CNP (its pacing interval has passed), from a generator
//!   the DR state owns, seeded from the run seed and the name `fabric.dr.red`
//!   ([`crate::base::seed`]), so runs repeat exactly and no other component's random choices
//!   move. \[recon\] The document gives no RED parameters: `red_kmax` defaults to the
//!   threshold's 1 MiB, so that above it RED notifies whenever the threshold would,
//!   `red_kmin` to a quarter of that (256 KiB), and `red_pmax` to 0.2, the HPCC ns-3
//!   DCQCN profile's. Because a flow gets at most one CNP per interval and its packets
//!   arrive many times per interval, what RED changes is mostly how soon within the
//!   interval a flow below `red_kmax` is told, not whether.
//!
//! The fields of the trigger not chosen are refused, naming the field.
//!
//! `cnp` chooses who notifies: `e2e` (receivers, on CE marks: RoCEv2 as deployed),
//! `dr` (only the DRs), `both`, or `none` (no CNPs at all; marks are ignored).
//! A DR's buffer (`dr_buffer` of the topology) replaces the fabric's; unless the topology
//! asks for `dci_lossless`, the DR is lossy: it never pauses its neighbours and drops a
//! packet its buffer cannot hold (counted on the egress port, `ports.csv`), while the
//! campus switches stay lossless.

use crate::base::ids::PortId;
use crate::base::ids::MAX_INDEX;
use crate::base::param::{Described, Param, ParamError};
use crate::base::units::serde_units as su;
use crate::base::units::{fmt_bytes, Time, US};
use crate::kernel::ctx::Ctx;
use crate::kernel::packet::{Desc, PacketKind};
use crate::model::fabric::ecn::RedMarker;
use crate::model::fabric::roles::RoleHandlers;
use crate::model::fabric::Fabric;
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

/// Who sends congestion notifications.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum CnpMode {
    /// Receivers, on CE-marked data (RoCEv2 DCQCN as deployed).
    #[default]
    E2e,
    /// Only the DR switches, on their DCI-facing queues.
    Dr,
    /// Receivers and DRs.
    Both,
    /// Nobody: the senders never slow down.
    None,
}

impl CnpMode {
    /// Every mode, in declaration order.
    pub const ALL: [CnpMode; 4] = [CnpMode::E2e, CnpMode::Dr, CnpMode::Both, CnpMode::None];

    /// The name in scenario files.
    pub fn name(self) -> &'static str {
        match self {
            CnpMode::E2e => "e2e",
            CnpMode::Dr => "dr",
            CnpMode::Both => "both",
            CnpMode::None => "none",
        }
    }

    /// True if receivers answer CE marks with CNPs.
    pub fn receivers(self) -> bool {
        matches!(self, CnpMode::E2e | CnpMode::Both)
    }

    /// True if DR switches send CNPs.
    pub fn dr(self) -> bool {
        matches!(self, CnpMode::Dr | CnpMode::Both)
    }
}

/// What makes a DR notify, given the length of the DCI-facing queue a packet joins.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum CnpTrigger {
    /// The queue holds at least `cnp_threshold` bytes.
    #[default]
    Threshold,
    /// RED on the queue (`red_kmin`, `red_kmax`, `red_pmax`).
    Red,
}

impl CnpTrigger {
    /// The name in scenario files.
    pub fn name(self) -> &'static str {
        match self {
            CnpTrigger::Threshold => "threshold",
            CnpTrigger::Red => "red",
        }
    }
}

/// `[fabric.dr]`: what DR switches (topology `multi_campus`) do besides forwarding.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct DrCfg {
    /// Who sends CNPs.
    #[serde(default)]
    pub cnp: CnpMode,
    /// What makes a DR notify.
    #[serde(default)]
    pub trigger: CnpTrigger,
    /// A DCI-facing egress queue at least this long makes the DR notify (trigger
    /// `threshold`; default 1 MiB).
    #[serde(default, deserialize_with = "su::opt_bytes")]
    pub cnp_threshold: Option<u64>,
    /// RED: no notification at or below this queue length (trigger `red`).
    #[serde(default, deserialize_with = "su::opt_bytes")]
    pub red_kmin: Option<u64>,
    /// RED: queue length at which the probability reaches `red_pmax`; certain above
    /// (trigger `red`).
    #[serde(default, deserialize_with = "su::opt_bytes")]
    pub red_kmax: Option<u64>,
    /// RED: notification probability at `red_kmax` (trigger `red`).
    #[serde(default)]
    pub red_pmax: Option<f64>,
    /// At most one DR CNP per flow this often.
    #[serde(default = "d_interval", deserialize_with = "su::time")]
    pub cnp_interval: Time,
}

fn d_threshold() -> u64 {
    1 << 20
}

/// \[recon\] RED's top at the threshold's length: above it RED always notifies, as the
/// threshold does.
fn d_red_kmax() -> u64 {
    d_threshold()
}

/// \[recon\] A quarter of `red_kmax`, so the probability rises over the last 768 KiB.
fn d_red_kmin() -> u64 {
    d_red_kmax() / 4
}

/// \[recon\] The HPCC ns-3 DCQCN profile's Pmax.
fn d_red_pmax() -> f64 {
    0.2
}

/// \[recon\] The document gives the DR's feedback latency (within ~50 us), not its pacing.
/// At DCQCN's usual 50 us per flow the DR's CNPs could not hold an overloaded DCI once
/// DCQCN's rate recovery started (`tests/longhaul_dr.rs`: half the drops of e2e); at
/// 10 us they held it without a drop.
fn d_interval() -> Time {
    10 * US
}

impl Default for DrCfg {
    fn default() -> Self {
        DrCfg {
            cnp: CnpMode::default(),
            trigger: CnpTrigger::default(),
            cnp_threshold: None,
            red_kmin: None,
            red_kmax: None,
            red_pmax: None,
            cnp_interval: d_interval(),
        }
    }
}

impl DrCfg {
    /// The queue length at which the threshold trigger notifies.
    pub fn threshold(&self) -> u64 {
        self.cnp_threshold.unwrap_or_else(d_threshold)
    }

    /// The RED curve of the red trigger.
    pub fn red(&self) -> RedMarker {
        RedMarker {
            kmin: self.red_kmin.unwrap_or_else(d_red_kmin),
            kmax: self.red_kmax.unwrap_or_else(d_red_kmax),
            pmax: self.red_pmax.unwrap_or_else(d_red_pmax),
            enabled: true,
        }
    }

    /// The trigger, resolved.
    pub fn resolved_trigger(&self) -> Trigger {
        match self.trigger {
            CnpTrigger::Threshold => Trigger::Threshold(self.threshold()),
            CnpTrigger::Red => Trigger::Red(self.red()),
        }
    }

    /// Checks the fields (names relative to `[fabric.dr]`).
    pub fn validate(&self) -> Result<(), ParamError> {
        // A field of the trigger not chosen would be silently ignored: refuse it.
        let (foreign, other): (&[(&str, bool)], CnpTrigger) = match self.trigger {
            CnpTrigger::Threshold => (
                &[
                    ("red_kmin", self.red_kmin.is_some()),
                    ("red_kmax", self.red_kmax.is_some()),
                    ("red_pmax", self.red_pmax.is_some()),
                ],
                CnpTrigger::Red,
            ),
            CnpTrigger::Red => (
                &[("cnp_threshold", self.cnp_threshold.is_some())],
                CnpTrigger::Threshold,
            ),
        };
        if let Some(&(f, _)) = foreign.iter().find(|(_, given)| *given) {
            return Err(ParamError::new(
                f,
                format!(
                    "{f} applies to trigger = \"{}\", and this trigger is \"{}\": remove it, or set trigger = \"{}\"",
                    other.name(),
                    self.trigger.name(),
                    other.name()
                ),
            ));
        }
        if self.cnp_threshold == Some(0) {
            return Err(ParamError::new(
                "cnp_threshold",
                "must be at least 1 byte (a DR notifies when its DCI queue holds this much)",
            ));
        }
        let red = self.red();
        if red.kmin >= red.kmax {
            // Name the field the scenario gave (both given: the lower bound).
            let field = if self.red_kmax.is_some() && self.red_kmin.is_none() {
                "red_kmax"
            } else {
                "red_kmin"
            };
            return Err(ParamError::new(
                field,
                format!(
                    "red_kmin = {} must be below red_kmax = {} (the probability rises between them)",
                    fmt_bytes(red.kmin),
                    fmt_bytes(red.kmax)
                ),
            ));
        }
        if !(red.pmax > 0.0 && red.pmax <= 1.0) {
            return Err(ParamError::new(
                "red_pmax",
                format!(
                    "{} is not a probability above 0 and at most 1 (the notification probability at red_kmax)",
                    red.pmax
                ),
            ));
        }
        crate::base::floors::at_least(
            "cnp_interval",
            self.cnp_interval,
            crate::base::floors::TIMER,
            "at most one DR CNP per flow this often (at least 1ns)",
        )?;
        Ok(())
    }
}

impl Described for DrCfg {
    const ABOUT: &'static str =
        "DR switches of a multi_campus topology: who sends CNPs, and on what queue";
    fn params() -> Vec<Param> {
        let modes: Vec<String> = CnpMode::ALL
            .iter()
            .map(|m| format!("\"{}\"", m.name()))
            .collect();
        vec![
            Param::new(
                "cnp",
                "\"e2e\"",
                format!("who sends CNPs: {}", modes.join(" | ")),
            ),
            Param::choice(
                "trigger",
                &CnpTrigger::default(),
                "a DCI-facing queue of cnp_threshold bytes, or RED on it",
            ),
            Param::bytes(
                "cnp_threshold",
                d_threshold(),
                "DCI-facing queue length at which a DR notifies (trigger threshold)",
            ),
            Param::bytes(
                "red_kmin",
                d_red_kmin(),
                "RED: no notification at or below this queue (trigger red) [recon]",
            ),
            Param::bytes(
                "red_kmax",
                d_red_kmax(),
                "RED: probability red_pmax here, 1 above (trigger red) [recon]",
            ),
            Param::plain(
                "red_pmax",
                d_red_pmax(),
                "RED: notification probability at red_kmax (trigger red) [recon: ns-3 DCQCN]",
            ),
            Param::time(
                "cnp_interval",
                d_interval(),
                "at most one DR CNP per flow this often (at least 1ns)",
            ),
        ]
    }
}

/// The DR role of a switch (its index among the DRs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DrRole(pub u32);

/// When a DR notifies, resolved from [`DrCfg`] once so that the per-packet check reads
/// no options.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Trigger {
    /// A queue of at least this many bytes.
    Threshold(u64),
    /// RED on the queue.
    Red(RedMarker),
}

impl Trigger {
    /// True if a queue of `q` bytes may make the DR notify at all (no draw made).
    #[inline]
    pub fn armed(&self, q: u64) -> bool {
        match self {
            Trigger::Threshold(t) => q >= *t,
            Trigger::Red(m) => q > m.kmin,
        }
    }
}

/// What the DR switches share: their settings, which ports face the DCI, and the
/// per-flow CNP pacing.
#[derive(Clone, Debug)]
pub struct DrState {
    /// Settings.
    pub cfg: DrCfg,
    /// The trigger the settings resolve to.
    pub trigger: Trigger,
    /// RED's draws, one generator per DR switch (seeded from the run seed, the
    /// switch's name and `fabric.dr.red`; unused by the threshold trigger): each DR
    /// draws its own, so that DRs in different shards of a parallel run never share one.
    pub rngs: Vec<ChaCha8Rng>,
    /// Ports whose link is a DCI link, by port id.
    pub dci_port: Vec<bool>,
    /// The DCI ports and the campus each sends from, in port order.
    pub dci_ports: Vec<(PortId, u32)>,
    /// Earliest time each flow may get its next DR CNP.
    pub next_cnp: Vec<Time>,
    /// CNPs each DR sent.
    pub cnps: Vec<u64>,
}

impl DrState {
    /// State for `n_dr` DR switches, `n_flows` flows, and the DCI ports `dci_ports`
    /// (with the campus each sends from) among `n_ports` ports; DR `i` draws RED's coin
    /// from `rngs[i]`.
    pub fn new(
        cfg: DrCfg,
        rngs: Vec<ChaCha8Rng>,
        dci_ports: Vec<(PortId, u32)>,
        n_ports: usize,
        n_dr: usize,
        n_flows: usize,
    ) -> DrState {
        debug_assert!(n_flows <= MAX_INDEX as usize);
        let mut dci_port = vec![false; n_ports];
        for &(p, _) in &dci_ports {
            dci_port[p.idx()] = true;
        }
        DrState {
            trigger: cfg.resolved_trigger(),
            cfg,
            rngs,
            dci_port,
            dci_ports,
            next_cnp: vec![0; n_flows],
            cnps: vec![0; n_dr],
        }
    }

    /// True if a flow that may have a CNP gets one from DR `dr`, its packet joining a
    /// DCI queue of `q` bytes: always under the threshold trigger (which armed it), with
    /// RED's probability under RED.
    #[inline]
    pub fn fires(&mut self, dr: DrRole, q: u64) -> bool {
        match self.trigger {
            Trigger::Threshold(t) => q >= t,
            Trigger::Red(m) => {
                let p = m.probability(q);
                p >= 1.0 || (p > 0.0 && self.rngs[dr.0 as usize].gen::<f64>() < p)
            }
        }
    }
}

/// The DCI ports of one campus (the direction leaving it): `summary.json`'s `long_haul`.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct DciDirection {
    /// The campus the ports send from.
    pub campus: u32,
    /// DCI ports leaving it.
    pub ports: usize,
    /// Bytes they sent, in total.
    pub tx_bytes: u64,
    /// Load imbalance: the busiest port's bytes over the mean (1 = even).
    pub imbalance: f64,
    /// Packets dropped on them.
    pub drops: u64,
    /// How many of them dropped at least one packet.
    pub ports_dropping: usize,
    /// Longest queue on any of them, bytes.
    pub max_queue_bytes: u64,
}

/// DCI and DR figures of a run.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct LongHaulStats {
    /// Imbalance of the direction that carried the most bytes.
    pub dci_imbalance: f64,
    /// Packets dropped on DCI ports.
    pub dci_drops: u64,
    /// Packets dropped anywhere in DR switches.
    pub dr_drops: u64,
    /// CNPs the DRs sent.
    pub dr_cnps: u64,
    /// One entry per campus with DCI ports.
    pub directions: Vec<DciDirection>,
}

impl RoleHandlers for DrRole {
    type State = DrState;

    #[inline]
    fn take(
        self,
        state: &mut DrState,
        net: &mut Fabric,
        ctx: &mut Ctx,
        s: u32,
        in_port: PortId,
        pkt: Desc,
    ) -> bool {
        state.receive(net, ctx, s, self, in_port, pkt);
        true
    }
}

impl DrState {
    /// A packet arrived at DR switch `s`: route it, notify its sender if it joins a long
    /// DCI queue, and forward it.
    fn receive(
        &mut self,
        net: &mut Fabric,
        ctx: &mut Ctx,
        s: u32,
        dr: DrRole,
        in_port: PortId,
        pkt: Desc,
    ) {
        let Some(egress) = net.route(s, &pkt) else {
            net.drop_packet(ctx, pkt, in_port, s);
            return;
        };
        if pkt.kind() == PacketKind::Data && self.cfg.cnp.dr() && self.dci_port[egress.idx()] {
            let q = net.ports[egress].queues[pkt.prio() as usize].bytes;
            if self.trigger.armed(q) {
                self.notify(net, ctx, s, dr, &pkt, q);
            }
        }
        net.forward::<true>(ctx, s, in_port, pkt, egress);
    }

    /// Sends a CNP for the flow of data packet `pkt`, which joins a DCI queue of `q`
    /// bytes, from DR `s` back to the flow's sender, unless that flow had one less than
    /// `cnp_interval` ago or RED's draw says no.
    fn notify(&mut self, net: &mut Fabric, ctx: &mut Ctx, s: u32, dr: DrRole, pkt: &Desc, q: u64) {
        let Some(flow) = ctx.arena.get(pkt.id, pkt.kind(), ctx.now).payload.flow() else {
            return;
        };
        let now = ctx.now;
        // Pacing first, so that RED draws only for flows it may notify: a flow's
        // probability is per packet it could be told about, not per packet it sends.
        if now < self.next_cnp[flow.idx()] || !self.fires(dr, q) {
            return;
        }
        self.next_cnp[flow.idx()] = now + self.cfg.cnp_interval;
        self.cnps[dr.0 as usize] += 1;
        net.cnp_to_sender(ctx, s, pkt, flow);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modes_say_who_notifies() {
        let who: Vec<(bool, bool)> = CnpMode::ALL
            .iter()
            .map(|m| (m.receivers(), m.dr()))
            .collect();
        assert_eq!(
            who,
            [(true, false), (false, true), (true, true), (false, false)]
        );
        let names: Vec<String> = CnpMode::ALL.iter().map(|m| m.name().into()).collect();
        assert_eq!(names, crate::base::param::serde_variants::<CnpMode>());
    }

    #[test]
    fn bad_settings_name_the_field() {
        let mut c = DrCfg {
            cnp_threshold: Some(0),
            ..DrCfg::default()
        };
        assert!(c
            .validate()
            .unwrap_err()
            .to_string()
            .contains("cnp_threshold"));
        c.cnp_threshold = Some(1);
        c.cnp_interval = 0;
        assert!(c
            .validate()
            .unwrap_err()
            .to_string()
            .contains("cnp_interval"));
    }

    fn red(kmin: Option<u64>, kmax: Option<u64>, pmax: Option<f64>) -> DrCfg {
        DrCfg {
            cnp: CnpMode::Dr,
            trigger: CnpTrigger::Red,
            red_kmin: kmin,
            red_kmax: kmax,
            red_pmax: pmax,
            ..DrCfg::default()
        }
    }

    #[test]
    fn triggers_are_named_as_scenarios_write_them() {
        let names: Vec<String> = [CnpTrigger::Threshold, CnpTrigger::Red]
            .iter()
            .map(|t| t.name().into())
            .collect();
        assert_eq!(names, crate::base::param::serde_variants::<CnpTrigger>());
        // The default stays the threshold of 1 MiB, so existing results do not move.
        assert_eq!(
            DrCfg::default().resolved_trigger(),
            Trigger::Threshold(1 << 20)
        );
    }

    #[test]
    fn red_probability_matches_hand_computed_values() {
        // kmin 100 kB, kmax 500 kB, pmax 0.4: 0.4 x (q - 100k) / 400k between them.
        let m = red(Some(100_000), Some(500_000), Some(0.4)).red();
        for (q, want) in [
            (0, 0.0),
            (50_000, 0.0),
            (100_000, 0.0),
            (100_001, 0.4 / 400_000.0),
            (200_000, 0.1),
            (300_000, 0.2),
            (450_000, 0.35),
            (500_000, 0.4),
            (500_001, 1.0),
            (u64::MAX, 1.0),
        ] {
            let p = m.probability(q);
            assert!((p - want).abs() < 1e-12, "q = {q}: {p}, want {want}");
        }
        // The defaults: kmin 256 KiB, kmax 1 MiB, pmax 0.2; halfway (640 KiB) is 0.1.
        let d = red(None, None, None).red();
        assert_eq!((d.kmin, d.kmax, d.pmax), (256 << 10, 1 << 20, 0.2));
        assert!((d.probability(640 << 10) - 0.1).abs() < 1e-12);
    }

    fn state(cfg: DrCfg, seed: u64) -> DrState {
        DrState::new(
            cfg,
            vec![crate::base::seed::component_rng(seed, "dr0/fabric.dr.red")],
            Vec::new(),
            0,
            1,
            1,
        )
    }

    #[test]
    fn red_fires_with_its_probability_and_draws_only_between_kmin_and_kmax() {
        let cfg = red(Some(100_000), Some(500_000), Some(0.4));
        let mut st = state(cfg.clone(), 7);
        assert!(!st.trigger.armed(100_000) && st.trigger.armed(100_001));
        // At 300 kB the probability is 0.2: over 100,000 draws the share fired is
        // within 0.01 of it (eight standard deviations).
        let n = 100_000;
        let fired = (0..n).filter(|_| st.fires(DrRole(0), 300_000)).count();
        let share = fired as f64 / n as f64;
        assert!((share - 0.2).abs() < 0.01, "{share}");
        // Certain above kmax and never at kmin, without a draw: the stream is where
        // it was.
        let before = st.rngs[0].clone();
        assert!(
            st.fires(DrRole(0), 500_001)
                && !st.fires(DrRole(0), 100_000)
                && !st.fires(DrRole(0), 0)
        );
        assert_eq!(st.rngs[0].gen::<u64>(), before.clone().gen::<u64>());
        // Same seed, same choices; another seed, other choices.
        let seq = |seed| -> Vec<bool> {
            let mut st = state(cfg.clone(), seed);
            (0..256).map(|_| st.fires(DrRole(0), 300_000)).collect()
        };
        assert_eq!(seq(7), seq(7));
        assert_ne!(seq(7), seq(8));
        // The threshold trigger fires exactly at and above its threshold.
        let mut th = state(DrCfg::default(), 7);
        assert!(!th.trigger.armed((1 << 20) - 1) && th.trigger.armed(1 << 20));
        assert!(!th.fires(DrRole(0), (1 << 20) - 1) && th.fires(DrRole(0), 1 << 20));
    }

    #[test]
    fn bad_red_settings_name_the_field() {
        assert!(red(None, None, None).validate().is_ok());
        assert!(red(Some(0), Some(1), Some(1.0)).validate().is_ok());
        for (cfg, field, what) in [
            (
                red(Some(500_000), Some(500_000), None),
                "red_kmin",
                "below red_kmax",
            ),
            (
                red(Some(600_000), Some(500_000), None),
                "red_kmin",
                "below red_kmax",
            ),
            // Only kmax given, below the default kmin: kmax is the one to fix.
            (red(None, Some(1000), None), "red_kmax", "below red_kmax"),
            (red(Some(2 << 20), None, None), "red_kmin", "below red_kmax"),
            (red(None, None, Some(0.0)), "red_pmax", "above 0"),
            (red(None, None, Some(-0.5)), "red_pmax", "above 0"),
            (red(None, None, Some(1.5)), "red_pmax", "at most 1"),
            (red(None, None, Some(f64::NAN)), "red_pmax", "probability"),
            (
                DrCfg {
                    cnp_threshold: Some(1 << 20),
                    ..red(None, None, None)
                },
                "cnp_threshold",
                "trigger = \"threshold\"",
            ),
            (
                DrCfg {
                    red_pmax: Some(0.5),
                    ..DrCfg::default()
                },
                "red_pmax",
                "trigger = \"red\"",
            ),
            (
                DrCfg {
                    red_kmin: Some(1),
                    ..DrCfg::default()
                },
                "red_kmin",
                "trigger = \"red\"",
            ),
        ] {
            let e = cfg.validate().unwrap_err();
            assert_eq!(e.field, field, "{e}");
            assert!(e.message.contains(what), "{e}");
        }
    }
}
