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
//! the draw says so and the flow had no CNP from this switch within DCQCN's
//! `cnp_interval`, sends the CNP back to the sender itself ([`Fabric::cnp_to_sender`], as
//! the long-haul DR does). Each switch paces on its own, as a switch knows only what
//! it sent: a table of [`MAX_PACED`] flows at most (fewer when the run has fewer), a flow
//! at its id modulo the size, so exact for runs of up to that many flows; beyond, two
//! flows sharing an entry forget each other's last CNP, as in a hashed table of a real
//! switch. The trigger is the marking curve so that forward and
//! backward notification differ only in where the CNP comes from; the marking at
//! dequeue still happens, and with `cnp_from = "switch"` receivers ignore it.
//!
//! Each switch draws from a generator of its own (seeded from the run seed, its name and
//! `cc.dcqcn.cnp_from`), so the switches' ECN coin flips and spraying keep their streams,
//! and no switch's draws depend on what another did. So a switch's notifying is its own
//! state alone, and a run cut into shards runs it in the switch's shard. Runs without
//! the mode give no switch this role and build no state: nothing changes.

use crate::base::ids::PortId;
use crate::base::units::Time;
use crate::kernel::ctx::Ctx;
use crate::kernel::packet::Desc;
use crate::model::fabric::ecn::RedMarker;
use crate::model::fabric::roles::RoleHandlers;
use crate::model::fabric::Fabric;
use rand::Rng;
use rand_chacha::ChaCha8Rng;

/// The forward-notifying role of a switch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SwitchCnpRole;

/// Flows a switch's pacing table holds at most.
pub const MAX_PACED: usize = 1024;

/// An entry of a switch's pacing table: the flow that last got a CNP from it there,
/// and when that flow may get the next.
#[derive(Clone, Copy, Debug)]
struct Paced {
    flow: u32,
    next: Time,
}

/// The forward-notifying switches' state, each switch's its own: pacing tables and
/// generators.
#[derive(Clone, Debug)]
pub struct SwitchCnpState {
    /// At most one CNP from a switch per flow this often (DCQCN's `cnp_interval`; 0:
    /// one per packet that fires).
    pub interval: Time,
    /// Entries of a switch's pacing table (a power of two).
    slots: usize,
    /// The switches' pacing tables, `slots` entries each, one after another.
    paced: Vec<Paced>,
    /// Each switch's draws of the RED probability.
    rngs: Vec<ChaCha8Rng>,
}

impl SwitchCnpState {
    /// State for switches drawing from `rngs` (one each) in a run of `n_flows` flows,
    /// paced by `interval`.
    pub fn new(interval: Time, rngs: Vec<ChaCha8Rng>, n_flows: usize) -> SwitchCnpState {
        let slots = n_flows.clamp(1, MAX_PACED).next_power_of_two();
        let never = Paced {
            flow: u32::MAX,
            next: 0,
        };
        SwitchCnpState {
            interval,
            slots,
            paced: vec![never; slots * rngs.len()],
            rngs,
        }
    }

    /// Heap bytes (pacing tables and generators).
    pub fn heap_bytes(&self) -> u64 {
        (self.paced.len() * std::mem::size_of::<Paced>()
            + self.rngs.len() * std::mem::size_of::<ChaCha8Rng>()) as u64
    }

    /// True if a packet with marking probability `p` makes switch `s` notify (a draw
    /// only strictly between 0 and 1).
    #[inline]
    pub fn fires(&mut self, s: u32, p: f64) -> bool {
        p >= 1.0 || (p > 0.0 && self.rngs[s as usize].gen::<f64>() < p)
    }

    /// Switch `s`'s pacing entry for `flow`.
    #[inline]
    fn entry(&mut self, s: u32, flow: u32) -> &mut Paced {
        &mut self.paced[s as usize * self.slots + (flow as usize & (self.slots - 1))]
    }
}

impl RoleHandlers for SwitchCnpRole {
    type State = SwitchCnpState;

    #[inline]
    fn take(
        self,
        state: &mut SwitchCnpState,
        net: &mut Fabric,
        ctx: &mut Ctx,
        s: u32,
        in_port: PortId,
        pkt: Desc,
    ) -> bool {
        state.receive(net, ctx, s, in_port, pkt);
        true
    }
}

impl SwitchCnpState {
    /// A packet arrived at forward-notifying switch `s`: route it as a plain switch,
    /// notify its sender if its egress queue would mark it, forward it.
    fn receive(&mut self, net: &mut Fabric, ctx: &mut Ctx, s: u32, in_port: PortId, mut pkt: Desc) {
        let egress = if net.table_routing {
            net.route_table(ctx, s, in_port, &mut pkt)
        } else {
            net.route(s, &pkt)
        };
        let Some(egress) = egress else {
            net.drop_unroutable(ctx, pkt, in_port, s);
            return;
        };
        if pkt.is_ect_data() {
            let sw = &net.switches[s as usize];
            let marker: RedMarker = sw.ecn[sw.ports.local(egress)];
            let q = net.ports[egress].queues[pkt.prio() as usize].bytes;
            let mut p = marker.probability(q);
            if p > 0.0 {
                if !net.ecn_bias.is_empty() {
                    p *= net.ecn_bias[in_port.idx()];
                }
                self.notify(net, ctx, s, &pkt, p);
            }
        }
        net.forward::<true>(ctx, s, in_port, pkt, egress);
    }

    /// Sends a CNP for the flow of data packet `pkt` from switch `s` to its sender, with
    /// probability `p`, unless the flow had one less than the interval ago.
    fn notify(&mut self, net: &mut Fabric, ctx: &mut Ctx, s: u32, pkt: &Desc, p: f64) {
        let Some(flow) = ctx.arena.get(pkt.id, pkt.kind(), ctx.now).payload.flow() else {
            return;
        };
        let now = ctx.now;
        // Pacing first, so that the draw is per packet the flow could be told about.
        let e = *self.entry(s, flow.0);
        if (e.flow == flow.0 && now < e.next) || !self.fires(s, p) {
            return;
        }
        *self.entry(s, flow.0) = Paced {
            flow: flow.0,
            next: now + self.interval,
        };
        net.cnp_to_sender(ctx, s, pkt, flow);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn two_switches() -> SwitchCnpState {
        let rngs = ["a", "b"]
            .map(|n| crate::base::seed::component_rng(5, n))
            .to_vec();
        SwitchCnpState::new(0, rngs, 1)
    }

    #[test]
    fn fires_draws_only_strictly_between_zero_and_one() {
        let mut st = two_switches();
        let before = st.rngs[1].clone();
        assert!(st.fires(1, 1.0) && !st.fires(1, 0.0));
        assert_eq!(st.rngs[1].gen::<u64>(), before.clone().gen::<u64>());
        // Switch 0's draws are its own: switch 1's do not move them.
        let mut st = two_switches();
        let mut alone = two_switches();
        let n = 50_000;
        let share = (0..n)
            .filter(|_| {
                st.fires(1, 0.5);
                let f = st.fires(0, 0.3);
                assert_eq!(f, alone.fires(0, 0.3));
                f
            })
            .count() as f64
            / n as f64;
        assert!((share - 0.3).abs() < 0.01, "{share}");
    }

    #[test]
    fn pacing_tables_are_per_switch_and_exact_up_to_their_size() {
        let rngs = vec![crate::base::seed::component_rng(5, "a"); 3];
        let st = SwitchCnpState::new(0, rngs.clone(), 1000);
        assert_eq!(st.slots, 1024);
        let mut st = SwitchCnpState::new(0, rngs, 1_000_000);
        assert_eq!(st.slots, MAX_PACED);
        // Distinct entries for every flow below the size and every switch.
        let mut seen = std::collections::HashSet::new();
        for s in 0..3 {
            for f in 0..MAX_PACED as u32 {
                seen.insert(st.entry(s, f) as *const Paced as usize);
            }
        }
        assert_eq!(seen.len(), 3 * MAX_PACED);
        // Beyond it, flows share entries.
        let a = st.entry(0, 7) as *const Paced as usize;
        assert_eq!(
            a,
            st.entry(0, 7 + MAX_PACED as u32) as *const Paced as usize
        );
    }
}
