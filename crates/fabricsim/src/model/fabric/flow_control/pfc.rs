//! IEEE 802.1Qbb priority flow control frames.
//!
//! A PFC frame is a MAC control frame (EtherType 0x8808) with opcode 0x0101, a
//! priority-enable vector (one bit per priority) and eight 16-bit pause times in quanta of
//! 512 bit times (so one quantum is 5.12 ns at 100 Gbit/s). A time of zero resumes the
//! priority at once. The frame is padded to the 64-byte Ethernet minimum and, like any
//! frame, takes wire time: 64 B + 20 B preamble and gap is not modelled (RoCE header
//! accounting in fabricsim counts frame bytes only).
//!
//! As in smoltcp, [`PfcFrame`] is a checked view over bytes and [`PfcRepr`] the parsed form.

use crate::base::ids::PortId;
use crate::base::param::{Checked, Described, Param, ParamError};
use crate::base::units::serde_units as su;
use crate::base::units::{Rate, Time, SEC};
use crate::kernel::ctx::Ctx;
use crate::kernel::events::Event;
use crate::kernel::packet::Packet;
use crate::model::fabric::buffer::SharedBuffer;
use crate::model::fabric::port::N_PRIO;
use crate::model::fabric::Fabric;
use crate::model::fabric::NodeKind;
use serde::Deserialize;

/// EtherType of MAC control frames.
pub const ETHERTYPE_MAC_CONTROL: u16 = 0x8808;
/// Opcode of priority-based flow control.
pub const OPCODE_PFC: u16 = 0x0101;
pub use crate::kernel::packet::{PfcSignal, PFC_FRAME_BYTES};
/// Bytes of the MAC control payload: opcode, enable vector, 8 times.
pub const PFC_PAYLOAD_LEN: usize = 2 + 2 + 16;

/// How the PFC pause threshold is computed.
#[derive(Clone, Copy, Debug, Deserialize, serde::Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum PfcThreshold {
    /// Dynamic threshold on the free shared buffer (alpha).
    Dynamic,
    /// A fixed XOFF threshold per (ingress port, priority).
    Static,
}

/// Ports on which PFC runs.
#[derive(Clone, Copy, Debug, Default, Deserialize, serde::Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum PfcScope {
    /// Every switch port.
    #[default]
    All,
    /// Only switch ports facing hosts.
    Edge,
}

/// Priority flow control (IEEE 802.1Qbb) and buffer admission.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PfcCfg {
    /// Lossless (PFC) when true, lossy drop-tail when false.
    #[serde(default = "yes")]
    pub enabled: bool,
    /// Where PFC runs: `all` ports, or only `edge` ports (switch ports facing hosts,
    /// pausing the NICs), the fabric between switches then dropping what overflows.
    #[serde(default)]
    pub scope: PfcScope,
    /// Dynamic or static XOFF threshold.
    #[serde(default = "d_pfc_thr")]
    pub threshold: PfcThreshold,
    /// Dynamic-threshold factor alpha.
    #[serde(default = "d_alpha")]
    pub alpha: f64,
    /// Dynamic-threshold alpha by ingress port rate (`"400Gbps" = 0.5`), as the HPCC
    /// ns-3 module sets it per port speed; ports at other rates use `alpha`.
    #[serde(default)]
    pub alpha_per_rate: std::collections::BTreeMap<String, f64>,
    /// Static XOFF threshold per (ingress port, priority).
    #[serde(default = "d_xoff", deserialize_with = "su::bytes")]
    pub xoff: u64,
    /// XON hysteresis below the threshold.
    #[serde(default = "d_xon_delta", deserialize_with = "su::bytes")]
    pub xon_delta: u64,
    /// Guaranteed buffer per (ingress port, priority).
    #[serde(default = "d_reserve", deserialize_with = "su::bytes")]
    pub reserve: u64,
    /// Headroom per ingress port; default 3 * rate * link delay / 8 plus two MTUs.
    #[serde(default, deserialize_with = "su::opt_bytes")]
    pub headroom: Option<u64>,
    /// Pause time carried by XOFF frames, in quanta of 512 bit times.
    #[serde(default = "d_quanta")]
    pub pause_quanta: u16,
}

fn yes() -> bool {
    true
}
fn d_pfc_thr() -> PfcThreshold {
    PfcThreshold::Dynamic
}
fn d_alpha() -> f64 {
    0.125
}
fn d_xoff() -> u64 {
    512_000
}
fn d_xon_delta() -> u64 {
    3_000
}
fn d_reserve() -> u64 {
    4_000
}
fn d_quanta() -> u16 {
    0xffff
}

impl Default for PfcCfg {
    fn default() -> Self {
        PfcCfg {
            enabled: true,
            scope: PfcScope::All,
            threshold: d_pfc_thr(),
            alpha: d_alpha(),
            alpha_per_rate: Default::default(),
            xoff: d_xoff(),
            xon_delta: d_xon_delta(),
            reserve: d_reserve(),
            headroom: None,
            pause_quanta: d_quanta(),
        }
    }
}

impl Described for PfcCfg {
    const ABOUT: &'static str = "priority flow control (IEEE 802.1Qbb) and buffer admission";
    fn params() -> Vec<Param> {
        let d = PfcCfg::default();
        vec![
            Param::plain("enabled", d.enabled, "lossless; false: lossy drop-tail"),
            Param::choice(
                "scope",
                &d.scope,
                "every switch port, or only those facing hosts",
            ),
            Param::choice(
                "threshold",
                &d.threshold,
                "alpha x free shared buffer, or xoff",
            ),
            Param::plain("alpha", d.alpha, "dynamic-threshold factor"),
            Param::new(
                "alpha_per_rate",
                "{}".to_string(),
                "alpha by ingress port rate, e.g. { \"400Gbps\" = 0.5, \"100Gbps\" = 0.125 }; \
                 other rates: alpha",
            ),
            Param::bytes(
                "xoff",
                d.xoff,
                "static XOFF threshold per (ingress port, priority)",
            ),
            Param::bytes(
                "xon_delta",
                d.xon_delta,
                "XON hysteresis below the threshold",
            ),
            Param::bytes(
                "reserve",
                d.reserve,
                "guaranteed buffer per (ingress port, priority)",
            ),
            Param::unset(
                "headroom",
                "per ingress port; unset: 3 x rate x link delay / 8 + 3 packets + a PFC frame (+ 2 x rate x delay / 8 + a packet with llr)",
            ),
            Param::plain(
                "pause_quanta",
                d.pause_quanta,
                "pause time of XOFF frames, in 512 bit times; at least one frame's \
                 (mtu + header) worth",
            ),
        ]
    }
}

impl PfcCfg {
    /// Checks the settings for packets of at most `max_packet` bytes (MTU plus headers);
    /// fields are named relative to `[fabric.pfc]`.
    pub fn validate(&self, max_packet: u64) -> Checked {
        if !(self.alpha > 0.0 && self.alpha < 256.0) {
            return Err(ParamError::new(
                "alpha",
                "must be a positive number below 256 (1/8 is usual)",
            ));
        }
        let mut seen: Vec<(Rate, &str)> = Vec::new();
        for (rate, &a) in &self.alpha_per_rate {
            let field = format!("alpha_per_rate.\"{rate}\"");
            let r = crate::base::units::parse_rate(rate).map_err(|e| ParamError::new(&field, e))?;
            // Two keys for one rate ("100Gbps" and "100gbps"): which alpha applies would
            // depend on the table's order.
            if let Some((_, other)) = seen.iter().find(|(x, _)| *x == r) {
                return Err(ParamError::new(
                    field,
                    format!("the same rate as \"{other}\" ({r}): give each rate once"),
                ));
            }
            seen.push((r, rate));
            if !(a > 0.0 && a < 256.0) {
                return Err(ParamError::new(
                    field,
                    "must be a positive number below 256 (1/8 is usual)",
                ));
            }
        }
        // A pause shorter than one largest frame cannot hold off even that frame, and the
        // pause is refreshed every half pause: below it PFC frames outnumber data frames.
        let floor = min_pause_quanta(max_packet);
        if self.pause_quanta < floor {
            return Err(ParamError::new(
                "pause_quanta",
                format!(
                    "{}: at least {floor} is allowed (512 bit times each: the pause must \
                     outlast one {max_packet}-byte frame, mtu + header)",
                    self.pause_quanta
                ),
            ));
        }
        if let Some(h) = self.headroom.filter(|&h| h < max_packet) {
            return Err(ParamError::new(
                "headroom",
                format!(
                    "{h} bytes cannot absorb even one packet of {max_packet} bytes in flight \
                     after an XOFF: give at least that, or leave it unset to derive it"
                ),
            ));
        }
        if self.threshold == PfcThreshold::Static && self.xoff < max_packet {
            return Err(ParamError::new(
                "xoff",
                "the static XOFF threshold must hold at least one packet",
            ));
        }
        // A paused ingress resumes once it is xon_delta below the threshold: at or above
        // the static threshold itself it never would, and the fabric would stay paused.
        if self.threshold == PfcThreshold::Static && self.xon_delta >= self.xoff {
            return Err(ParamError::new(
                "xon_delta",
                format!(
                    "{} bytes is not below xoff ({} bytes): XON is sent xon_delta below the \
                     static threshold, so a paused port would never resume",
                    self.xon_delta, self.xoff
                ),
            ));
        }
        Ok(())
    }
}

/// The fewest pause quanta (512 bit times each) that cover one frame of `max_packet`
/// bytes, at any rate.
pub fn min_pause_quanta(max_packet: u64) -> u16 {
    (max_packet * 8).div_ceil(512).min(u16::MAX as u64) as u16
}

impl PfcCfg {
    /// The dynamic-threshold alpha of an ingress port of rate `rate` (settings checked
    /// by [`PfcCfg::validate`]).
    pub fn alpha_for(&self, rate: Rate) -> f64 {
        self.alpha_per_rate
            .iter()
            .find(|(r, _)| crate::base::units::parse_rate(r).ok() == Some(rate))
            .map_or(self.alpha, |(_, &a)| a)
    }
}

/// Why a PFC payload could not be read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PfcError {
    /// Fewer bytes than a PFC payload.
    Truncated,
    /// The opcode is not 0x0101.
    NotPfc,
}

/// A checked view of a MAC-control payload carrying PFC.
#[derive(Clone, Copy, Debug)]
pub struct PfcFrame<T: AsRef<[u8]>> {
    buf: T,
}

impl<T: AsRef<[u8]>> PfcFrame<T> {
    /// Wraps `buf` after checking it is long enough and has the PFC opcode.
    pub fn new_checked(buf: T) -> Result<Self, PfcError> {
        let b = buf.as_ref();
        if b.len() < PFC_PAYLOAD_LEN {
            return Err(PfcError::Truncated);
        }
        if u16::from_be_bytes([b[0], b[1]]) != OPCODE_PFC {
            return Err(PfcError::NotPfc);
        }
        Ok(PfcFrame { buf })
    }
    /// The priority-enable vector.
    pub fn enable_vector(&self) -> u8 {
        self.buf.as_ref()[3]
    }
    /// Pause time of priority `p` (0..8) in quanta.
    pub fn quanta(&self, p: usize) -> u16 {
        let b = self.buf.as_ref();
        u16::from_be_bytes([b[4 + 2 * p], b[5 + 2 * p]])
    }
}

/// Parsed PFC frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct PfcRepr {
    /// Bit p set: the time for priority p is valid.
    pub enable: u8,
    /// Pause time per priority in quanta.
    pub quanta: [u16; 8],
}

impl PfcRepr {
    /// Reads a checked frame.
    pub fn parse<T: AsRef<[u8]>>(f: &PfcFrame<T>) -> PfcRepr {
        let mut quanta = [0; 8];
        for (p, q) in quanta.iter_mut().enumerate() {
            *q = f.quanta(p);
        }
        PfcRepr {
            enable: f.enable_vector(),
            quanta,
        }
    }
    /// Writes the payload into `buf` (at least [`PFC_PAYLOAD_LEN`] bytes).
    pub fn emit(&self, buf: &mut [u8]) -> Result<(), PfcError> {
        if buf.len() < PFC_PAYLOAD_LEN {
            return Err(PfcError::Truncated);
        }
        buf[0..2].copy_from_slice(&OPCODE_PFC.to_be_bytes());
        buf[2] = 0;
        buf[3] = self.enable;
        for p in 0..8 {
            buf[4 + 2 * p..6 + 2 * p].copy_from_slice(&self.quanta[p].to_be_bytes());
        }
        Ok(())
    }
}

/// How long `quanta` pause quanta last on a link of `rate`.
pub fn pause_duration(quanta: u16, rate: Rate) -> Time {
    (quanta as u128 * 512 * SEC as u128 / rate.0 as u128) as Time
}

/// PFC as the switches run it: which ingresses may pause, for how long, and which
/// pauses are waiting for their refresh.
#[derive(Clone, Debug)]
pub struct Pfc {
    /// The ingress ports PFC runs on, when not all of them (`fabric.pfc.scope = "edge"`:
    /// only switch ports facing hosts, as in GSE's testbed without PFC in the fabric).
    only_on: Option<Vec<bool>>,
    /// The control priority, never paused (ACKs and CNPs must get through).
    pub ctrl_prio: u8,
    /// XOFF pause time in quanta.
    pub pause_quanta: u16,
    /// Ports with a refresh timer pending.
    refresh_pending: Vec<bool>,
}

impl Pfc {
    /// Heap bytes of the per-port tables (by capacity).
    pub fn heap_bytes(&self) -> u64 {
        use crate::base::memory::vec_bytes;
        self.only_on.as_ref().map_or(0, vec_bytes) + vec_bytes(&self.refresh_pending)
    }

    /// PFC over `n_ports` ports, on every ingress or `only_on` those marked.
    pub fn new(
        only_on: Option<Vec<bool>>,
        ctrl_prio: u8,
        pause_quanta: u16,
        n_ports: usize,
    ) -> Pfc {
        Pfc {
            only_on,
            ctrl_prio,
            pause_quanta,
            refresh_pending: vec![false; n_ports],
        }
    }

    /// An XOFF was sent on `port`: true if its refresh timer must be armed (none is
    /// pending).
    #[inline]
    pub fn arm_refresh(&mut self, port: PortId) -> bool {
        !std::mem::replace(&mut self.refresh_pending[port.idx()], true)
    }

    /// True if PFC runs on some ingress ports only.
    pub fn is_partial(&self) -> bool {
        self.only_on.is_some()
    }

    /// The refresh timer of `port` fired.
    #[inline]
    pub fn refresh_fired(&mut self, port: PortId) {
        self.refresh_pending[port.idx()] = false;
    }
}

impl super::LinkFlowControl for Pfc {
    type Signal = PfcSignal;

    #[inline(always)]
    fn after_admit(
        &self,
        buffer: &mut SharedBuffer,
        in_port: PortId,
        local_in: usize,
        prio: usize,
    ) -> Option<PfcSignal> {
        (prio as u8 != self.ctrl_prio
            && self.only_on.as_ref().is_none_or(|on| on[in_port.idx()])
            && buffer.should_pause(local_in, prio))
        .then_some(PfcSignal {
            prio: prio as u8,
            quanta: self.pause_quanta,
        })
    }

    #[inline(always)]
    fn after_release(
        &self,
        buffer: &mut SharedBuffer,
        local_in: usize,
        prio: usize,
        _wire: u64,
    ) -> Option<PfcSignal> {
        buffer.should_resume(local_in, prio).then_some(PfcSignal {
            prio: prio as u8,
            quanta: 0,
        })
    }
}

// ---- the switches' and NICs' side: frames on the wire ----------------------------

impl Fabric {
    /// A PFC frame for `prio` (`quanta` 0: resume) arrived on `port` (it pauses the
    /// port's own transmissions, so the frame acts on the port it arrives at).
    pub(crate) fn on_pfc_frame(&mut self, ctx: &mut Ctx, port: PortId, prio: usize, quanta: u16) {
        let now = ctx.now;
        let p = &mut self.ports[port];
        let until = (quanta != 0).then(|| now + pause_duration(quanta, p.rate));
        self.telemetry.on_pfc_frame(port, prio, now, until);
        match until {
            None => {
                p.stats.resume_frames_received += 1;
                if let Some(s) = p.pause_started() {
                    p.stats.paused_ps += now.saturating_sub(s);
                    p.set_pause_started(None);
                }
                p.resume(prio);
                self.schedule_wake(ctx, port, now);
            }
            Some(until) => {
                p.stats.pause_frames_received += 1;
                match p.pause_started() {
                    Some(s) if p.paused_until(prio) <= now => {
                        // The previous pause expired without a resume frame.
                        p.stats.paused_ps += p.paused_until(prio).saturating_sub(s);
                        p.set_pause_started(Some(now));
                    }
                    None => p.set_pause_started(Some(now)),
                    _ => {}
                }
                p.pause(prio, until);
            }
        }
    }

    /// Sends `sig` upstream on ingress `port`, ahead of every queue; an XOFF arms the
    /// port's refresh timer.
    // Kept out of line: frames are rare next to the packets whose hooks call this.
    #[inline(never)]
    pub(crate) fn send_pfc(&mut self, ctx: &mut Ctx, port: PortId, sig: PfcSignal) {
        let (p, h) = Packet::pfc(sig);
        let d = ctx.arena.alloc_desc(p, h);
        let (port_ref, pool) = self.port_and_pool(port.idx());
        port_ref.push_ctrl(pool, d);
        if sig.quanta > 0 {
            port_ref.stats.pause_frames_sent += 1;
        } else {
            port_ref.stats.resume_frames_sent += 1;
        }
        let rate = port_ref.rate;
        ctx.counters.pfc_frames += 1;
        if sig.quanta > 0 {
            let pfc = self.flow_control.pfc_mut().expect("PFC frames need PFC");
            if pfc.arm_refresh(port) {
                let half = pause_duration(sig.quanta, rate) / 2;
                ctx.queue
                    .push(ctx.now + half.max(1), Event::PfcRefresh(port));
            }
        }
        // A link-level replay burst leaves room for the frame between two replayed frames.
        // Only on a link that can replay (link-level retransmission, bit errors): on any
        // other there are no replays, and a frame that starts at this instant goes first,
        // as it does in a run without faults. (It also keeps the sender off the link's
        // ring, which a cut link's receiver owns: `sim/shards/`.)
        if (self.faults.as_ref()).is_some_and(|f| f.links[port.idx()].can_replay(f.llr))
            && self.pfc_into_replay(ctx, port)
        {
            return;
        }
        self.try_transmit::<true>(ctx, port);
    }

    /// Re-sends XOFF on `port` for every priority still over its threshold, before the
    /// previous pause expires.
    pub(crate) fn on_pfc_refresh(&mut self, ctx: &mut Ctx, port: PortId) {
        let pfc = self.flow_control.pfc_mut().expect("PFC refresh needs PFC");
        pfc.refresh_fired(port);
        let quanta = pfc.pause_quanta;
        let node = self.ports[port].node;
        let NodeKind::Switch(s) = self.nodes[node].kind else {
            return;
        };
        let local = self.switches[s as usize].ports.local(port);
        for prio in 0..N_PRIO {
            if self.switches[s as usize].buffer.is_pausing(local, prio) {
                self.send_pfc(
                    ctx,
                    port,
                    PfcSignal {
                        prio: prio as u8,
                        quanta,
                    },
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repr_round_trips() {
        let r = PfcRepr {
            enable: 0b0000_1000,
            quanta: [0, 0, 0, 0xffff, 0, 0, 0, 0],
        };
        let mut buf = [0u8; PFC_PAYLOAD_LEN];
        r.emit(&mut buf).unwrap();
        let f = PfcFrame::new_checked(&buf[..]).unwrap();
        assert_eq!(PfcRepr::parse(&f), r);
        assert_eq!(
            PfcFrame::new_checked(&buf[..10]).unwrap_err(),
            PfcError::Truncated
        );
        buf[0] = 0; // opcode 0x0001 is 802.3x PAUSE, not PFC
        assert_eq!(
            PfcFrame::new_checked(&buf[..]).unwrap_err(),
            PfcError::NotPfc
        );
    }

    #[test]
    fn quantum_is_512_bit_times() {
        assert_eq!(pause_duration(1, Rate::gbps(100)), 5_120);
        assert_eq!(pause_duration(0xffff, Rate::gbps(100)), 65_535 * 5_120);
    }
}
