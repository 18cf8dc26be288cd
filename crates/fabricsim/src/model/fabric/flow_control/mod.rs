//! Link-level flow control: how a receiving switch keeps its upstream sender from
//! overrunning its buffer.
//!
//! The seam between the switch and the mechanism is narrow: after the switch's buffer
//! admits a packet at an ingress (port, priority), and after a packet that entered there
//! leaves the buffer, the mechanism may ask for a signal to go upstream on that ingress
//! port. Two mechanisms plug in:
//! - PFC ([`pfc`], IEEE 802.1Qbb): XOFF when the ingress counter passes its threshold,
//!   XON when it drains; the signal is a PFC frame.
//! - Credits ([`credit`], document 003): the upstream port sends only with credits for
//!   the downstream input buffer; the signal is a credit return sent on release. Credits
//!   also decide, at the upstream egress, which queue may send ([`credit::Credit`]), and
//!   the link toward a cut-through switch delivers a packet at its head.
//!
//! A lossy fabric has neither (drop-tail).
//!
//! Dispatch is an enum, not a trait object: the hooks run once per packet per hop.

pub mod credit;
pub mod pfc;

use crate::base::ids::PortId;
use crate::kernel::ctx::Ctx;
use crate::kernel::packet::Desc;
use crate::model::fabric::Fabric;
pub use credit::Credit;
pub use pfc::Pfc;

use super::buffer::SharedBuffer;

/// One link-level flow-control mechanism.
pub trait LinkFlowControl {
    /// What the mechanism sends upstream (a PFC frame, a credit return).
    type Signal;

    /// Switch ingress port `in_port` (`local_in` on its switch) admitted a packet of
    /// priority `prio` to `buffer`. Returns the signal to send upstream, if any.
    fn after_admit(
        &self,
        buffer: &mut SharedBuffer,
        in_port: PortId,
        local_in: usize,
        prio: usize,
    ) -> Option<Self::Signal>;

    /// A packet of `wire` bytes that entered by ingress `local_in` at priority `prio`
    /// (for credits: its arrival VC) left `buffer`. Returns the signal to send upstream,
    /// if any.
    fn after_release(
        &self,
        buffer: &mut SharedBuffer,
        local_in: usize,
        prio: usize,
        wire: u64,
    ) -> Option<Self::Signal>;
}

/// The flow control a run uses.
#[derive(Clone, Debug)]
pub enum AnyFlowControl {
    /// None: a full buffer drops (lossy Ethernet).
    Lossy,
    /// IEEE 802.1Qbb priority flow control.
    Pfc(Pfc),
    /// Credit-based flow control with virtual channels and cut-through (document 003).
    Credit(Box<Credit>),
}

impl AnyFlowControl {
    /// The pause to send upstream (on `in_port`) after a packet that entered by ingress
    /// `local_in` at `prio` was admitted to `buffer`, if any: [`Fabric::after_admit`]
    /// for a caller that holds the switch. Credits were taken upstream when the packet
    /// was sent: nothing to do for them.
    #[inline(always)]
    pub(crate) fn admitted(
        &self,
        buffer: &mut SharedBuffer,
        in_port: PortId,
        local_in: usize,
        prio: usize,
    ) -> Option<crate::kernel::packet::PfcSignal> {
        match self {
            AnyFlowControl::Pfc(p) => p.after_admit(buffer, in_port, local_in, prio),
            _ => None,
        }
    }

    /// True when the mechanism acts on every release from the buffer (credits go back
    /// upstream for each packet). PFC acts only when the released counter pauses its
    /// upstream ([`super::buffer::SharedBuffer::release`] says so), and lossy Ethernet
    /// never: the switch skips `after_release` then.
    #[inline(always)]
    pub fn acts_on_every_release(&self) -> bool {
        match self {
            AnyFlowControl::Lossy | AnyFlowControl::Pfc(_) => false,
            AnyFlowControl::Credit(_) => true,
        }
    }

    /// Heap bytes of the flow control's state: PFC's per-port tables; for credits the
    /// boxed state itself (its per-port tables are not itemized).
    pub fn heap_bytes(&self) -> u64 {
        match self {
            AnyFlowControl::Lossy => 0,
            AnyFlowControl::Pfc(p) => p.heap_bytes(),
            AnyFlowControl::Credit(_) => std::mem::size_of::<Credit>() as u64,
        }
    }

    /// The PFC state, when PFC runs.
    pub fn pfc(&self) -> Option<&Pfc> {
        match self {
            AnyFlowControl::Pfc(p) => Some(p),
            _ => None,
        }
    }

    /// The PFC state, when PFC runs.
    pub fn pfc_mut(&mut self) -> Option<&mut Pfc> {
        match self {
            AnyFlowControl::Pfc(p) => Some(p),
            _ => None,
        }
    }
}

impl Fabric {
    /// Switch `s` admitted `pkt` (priority `prio`) on `in_port` (`local_in`): flow
    /// control may signal upstream. A GSP asks after every packet it admits, plain
    /// forwarding only when admission said the counter is over its pause threshold
    /// ([`super::buffer::Admission::AdmittedOver`]).
    #[inline(always)]
    pub(crate) fn after_admit(
        &mut self,
        ctx: &mut Ctx,
        s: u32,
        in_port: PortId,
        local_in: usize,
        prio: usize,
    ) {
        let buffer = &mut self.switches[s as usize].buffer;
        if let Some(sig) = self.flow_control.admitted(buffer, in_port, local_in, prio) {
            self.send_pfc(ctx, in_port, sig);
        }
    }

    /// Packet `pkt` (`wire` bytes), which entered switch `s` by `local_in` at `prio`,
    /// left its buffer. Always inlined: once per packet and hop.
    #[inline(always)]
    pub(crate) fn after_release(
        &mut self,
        ctx: &mut Ctx,
        s: u32,
        local_in: usize,
        pkt: &Desc,
        wire: u64,
    ) {
        let sw = &mut self.switches[s as usize];
        if let AnyFlowControl::Pfc(p) = &self.flow_control {
            if let Some(sig) = p.after_release(&mut sw.buffer, local_in, pkt.prio() as usize, wire)
            {
                let in_port = sw.ports.port(local_in);
                self.send_pfc(ctx, in_port, sig);
            }
        } else if let AnyFlowControl::Credit(c) = &self.flow_control {
            let vc = pkt.arrival_vc() as usize;
            if let Some(sig) = c.after_release(&mut sw.buffer, local_in, vc, wire) {
                let in_port = sw.ports.port(local_in);
                self.send_credit(ctx, in_port, sig);
            }
        }
    }
}
