//! Forward congestion notification (document 002): the congested switch sends DCQCN's
//! CNP straight to the source (`cc.dcqcn.cnp_from = "switch"` or `"both"`).
//!
//! DCQCN as deployed notifies backward: a switch marks CE at dequeue, the mark rides to
//! the receiver, and the receiver's CNP comes all the way back, so the sender learns of
//! the queue a queueing delay plus the rest of the path plus the whole way back after
//! the packet joined it. Document 002 observes that notifying from the congestion point
//! straight to the source would be faster. Here every switch takes the role
//! [`SwitchCnpRole`]: it routes an arriving packet as a plain switch does, and when the
//! packet is ECN-capable data and joins an egress queue whose RED curve gives it a
//! marking probability (the port's own ECN marker, [`RedMarker::probability`], times
//! the ingress port's `fabric.ecn.ingress_bias`), it draws with that probability and, if
//! the draw says so and the flow had no switch CNP within DCQCN's `cnp_interval`, sends
//! the CNP back to the sender itself, with the long-haul DR's code
//! ([`Fabric::cnp_to_sender`]). The trigger is the marking curve so that forward and
//! backward notification differ only in where the CNP comes from; the marking at
//! dequeue still happens, and with `cnp_from = "switch"` receivers ignore it.
//!
//! The draws come from a generator of their own (seeded from the run seed and
//! `cc.dcqcn.cnp_from`), so the switches' ECN coin flips and spraying keep their streams.
//! Runs without the mode give no switch this role and build no state: nothing changes.

use crate::fabric::ecn::RedMarker;
use crate::fabric::switch::RoleHandlers;
use crate::ids::PortId;
use crate::packet::{Desc, PacketKind, ECN_ECT};
use crate::sim::{Ctx, Fabric};
use crate::units::Time;
use rand::Rng;
use rand_chacha::ChaCha8Rng;

/// The forward-notifying role of a switch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SwitchCnpRole;

/// What the forward-notifying switches share: per-flow pacing and the draws.
#[derive(Clone, Debug)]
pub struct SwitchCnpState {
    /// At most one switch CNP per flow this often (DCQCN's `cnp_interval`; 0: one per
    /// packet that fires).
    pub interval: Time,
    /// Earliest time each flow may get its next switch CNP.
    pub next_cnp: Vec<Time>,
    /// The draws of the RED probability.
    pub rng: ChaCha8Rng,
    /// CNPs the switches sent.
    pub cnps: u64,
}

impl SwitchCnpState {
    /// State for `n_flows` flows, paced by `interval`, drawing from `rng`.
    pub fn new(interval: Time, rng: ChaCha8Rng, n_flows: usize) -> SwitchCnpState {
        SwitchCnpState {
            interval,
            next_cnp: vec![0; n_flows],
            rng,
            cnps: 0,
        }
    }

    /// True if a packet with marking probability `p` makes the switch notify (a draw
    /// only strictly between 0 and 1).
    #[inline]
    pub fn fires(&mut self, p: f64) -> bool {
        p >= 1.0 || (p > 0.0 && self.rng.gen::<f64>() < p)
    }
}

impl RoleHandlers for SwitchCnpRole {
    #[inline]
    fn take(self, fabric: &mut Fabric, ctx: &mut Ctx, s: u32, in_port: PortId, pkt: Desc) -> bool {
        fabric.switch_cnp_receive(ctx, s, in_port, pkt);
        true
    }
}

impl Fabric {
    /// A packet arrived at forward-notifying switch `s`: route it as a plain switch,
    /// notify its sender if its egress queue would mark it, forward it.
    fn switch_cnp_receive(&mut self, ctx: &mut Ctx, s: u32, in_port: PortId, mut pkt: Desc) {
        let egress = if self.table_routing {
            self.route_table(ctx, s, in_port, &mut pkt)
        } else {
            self.route(ctx, s, &pkt)
        };
        let Some(egress) = egress else {
            self.drop_unroutable(ctx, pkt, in_port, s);
            return;
        };
        if pkt.kind == PacketKind::Data && pkt.ecn == ECN_ECT {
            let sw = &self.switches[s as usize];
            let marker: RedMarker = sw.ecn[sw.ports.local(egress)];
            let q = self.ports[egress].queues[pkt.prio as usize].bytes;
            let mut p = marker.probability(q);
            if p > 0.0 {
                if !self.ecn_bias.is_empty() {
                    p *= self.ecn_bias[in_port.idx()];
                }
                self.switch_notify(ctx, s, &pkt, p);
            }
        }
        self.forward(ctx, s, in_port, pkt, egress);
    }

    /// Sends a CNP for the flow of data packet `pkt` from switch `s` to its sender, with
    /// probability `p`, unless the flow had one less than the interval ago.
    fn switch_notify(&mut self, ctx: &mut Ctx, s: u32, pkt: &Desc, p: f64) {
        let Some(flow) = ctx.arena.get(pkt.id).payload.flow() else {
            return;
        };
        let st = self.switch_cnp.as_mut().expect("forward-notifying state");
        let now = ctx.now;
        // Pacing first, so that the draw is per packet the flow could be told about.
        if now < st.next_cnp[flow.idx()] || !st.fires(p) {
            return;
        }
        st.next_cnp[flow.idx()] = now + st.interval;
        st.cnps += 1;
        self.cnp_to_sender(ctx, s, pkt, flow);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fires_draws_only_strictly_between_zero_and_one() {
        let mut st = SwitchCnpState::new(0, crate::seed::component_rng(5, "x"), 1);
        let before = st.rng.clone();
        assert!(st.fires(1.0) && !st.fires(0.0));
        assert_eq!(st.rng.gen::<u64>(), before.clone().gen::<u64>());
        let mut st = SwitchCnpState::new(0, crate::seed::component_rng(5, "x"), 1);
        let n = 50_000;
        let share = (0..n).filter(|_| st.fires(0.3)).count() as f64 / n as f64;
        assert!((share - 0.3).abs() < 0.01, "{share}");
    }
}
