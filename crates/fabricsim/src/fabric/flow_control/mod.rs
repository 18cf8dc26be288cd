//! Link-level flow control: how a receiving switch keeps its upstream sender from
//! overrunning its buffer.
//!
//! The seam between the switch and the mechanism is narrow: after the switch's buffer
//! admits a packet at an ingress (port, priority), and after a packet that entered there
//! leaves the buffer, the mechanism may ask for a frame to go upstream on that ingress
//! port. PFC ([`pfc`], IEEE 802.1Qbb) is the mechanism today: XOFF when the ingress
//! counter passes its threshold, XON when it drains. A lossy fabric has none (drop-tail).
//! Credit-based flow control plugs in as one more file and one more [`AnyFlowControl`]
//! variant: its "frame" is a credit return sent on release.
//!
//! Dispatch is an enum, not a trait object: the hooks run once per packet per hop.

pub mod pfc;

use super::buffer::SharedBuffer;
use crate::ids::PortId;
pub use pfc::Pfc;
use pfc::PfcSignal;

/// One link-level flow-control mechanism.
pub trait LinkFlowControl {
    /// Switch ingress port `in_port` (`local_in` on its switch) admitted a packet of
    /// priority `prio` to `buffer`. Returns the frame to send upstream, if any.
    fn after_admit(
        &self,
        buffer: &mut SharedBuffer,
        in_port: PortId,
        local_in: usize,
        prio: usize,
    ) -> Option<PfcSignal>;

    /// A packet that entered by ingress `local_in` at priority `prio` left `buffer`.
    /// Returns the frame to send upstream, if any.
    fn after_release(
        &self,
        buffer: &mut SharedBuffer,
        local_in: usize,
        prio: usize,
    ) -> Option<PfcSignal>;
}

/// The flow control a run uses.
#[derive(Clone, Debug)]
pub enum AnyFlowControl {
    /// None: a full buffer drops (lossy Ethernet).
    Lossy,
    /// IEEE 802.1Qbb priority flow control.
    Pfc(Pfc),
}

impl AnyFlowControl {
    /// See [`LinkFlowControl::after_admit`].
    #[inline(always)]
    pub fn after_admit(
        &self,
        buffer: &mut SharedBuffer,
        in_port: PortId,
        local_in: usize,
        prio: usize,
    ) -> Option<PfcSignal> {
        match self {
            AnyFlowControl::Lossy => None,
            AnyFlowControl::Pfc(p) => p.after_admit(buffer, in_port, local_in, prio),
        }
    }

    /// See [`LinkFlowControl::after_release`].
    #[inline(always)]
    pub fn after_release(
        &self,
        buffer: &mut SharedBuffer,
        local_in: usize,
        prio: usize,
    ) -> Option<PfcSignal> {
        match self {
            AnyFlowControl::Lossy => None,
            AnyFlowControl::Pfc(p) => p.after_release(buffer, local_in, prio),
        }
    }

    /// The PFC state, when PFC runs.
    pub fn pfc(&self) -> Option<&Pfc> {
        match self {
            AnyFlowControl::Pfc(p) => Some(p),
            AnyFlowControl::Lossy => None,
        }
    }

    /// The PFC state, when PFC runs.
    pub fn pfc_mut(&mut self) -> Option<&mut Pfc> {
        match self {
            AnyFlowControl::Pfc(p) => Some(p),
            AnyFlowControl::Lossy => None,
        }
    }
}
