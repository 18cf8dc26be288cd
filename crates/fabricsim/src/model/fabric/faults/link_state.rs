//! Links going down and coming back, for one link or every link of a switch.
//!
//! A link that goes down takes both directions with it:
//! - the frames on its wire are lost. They stay in the link's ring, marked by a count
//!   (`LinkFaults::lose_next`), and each is dropped when it would have arrived, so the
//!   link's one pending arrival event stays valid and no event needs cancelling;
//! - its ports start nothing: their transmitter is busy until the end of time
//!   ([`DOWN`]), so `next_frame` finds them busy and a packet cannot pass straight
//!   through them, with no test of its own on either path;
//! - the egress queues of a switch port that fed it are flushed: a switch drops what it
//!   can no longer send rather than hold buffer (and, under PFC, pause its neighbours)
//!   for a link that may not come back. Frames the switch generated itself (GSE
//!   REQUEST/GRANT, a DR's CNPs) wait for the link; a NIC keeps its queued feedback;
//! - packets the routing tables still send to a down port are dropped at it and counted
//!   (`Fabric::forward`), until routing re-converges ([`super::reconverge`]) and sends
//!   them elsewhere.
//!
//! A link that comes back starts sending at once (queued frames, a NIC's flows); routing
//! uses it again once it has re-converged. A switch that goes down takes all its links
//! down; one that comes back brings back those no `link_down` holds.

use crate::base::ids::PortId;
use crate::kernel::ctx::Ctx;
use crate::kernel::packet::{Desc, LOCAL_PORT};
use crate::model::fabric::port::{DOWN, N_PRIO};
use crate::model::fabric::Fabric;
use crate::model::fabric::NodeKind;

use super::config::FaultAction;

/// Two distinct elements of `v`, mutably.
fn two_mut<T>(v: &mut [T], a: usize, b: usize) -> (&mut T, &mut T) {
    assert_ne!(a, b);
    if a < b {
        let (x, y) = v.split_at_mut(b);
        (&mut x[a], &mut y[0])
    } else {
        let (x, y) = v.split_at_mut(a);
        (&mut y[0], &mut x[b])
    }
}

impl Fabric {
    /// A link or switch fault acts: the links whose state it changes go down or come up,
    /// each port in the context of its shard (see [`Fabric::on_fault_step`]).
    pub(crate) fn apply_link_fault(
        &mut self,
        ctxs: &mut [Ctx],
        shard_of_node: &[u32],
        action: FaultAction,
    ) {
        let fs = self.faults.as_mut().expect("faults model");
        let changed = fs.phys.apply(action, &fs.cables);
        for c in changed {
            let fs = self.faults.as_ref().expect("faults model");
            let want = fs.phys.up(c, &fs.cables);
            let ports = fs.cables.ports[c];
            if self.ports[ports[0]].is_up() == want {
                continue;
            }
            for p in ports {
                let shard_of = |v: usize| shard_of_node.get(v).map_or(0, |&s| s as usize);
                let own = shard_of(self.ports[p].node.idx());
                if want {
                    self.port_comes_up(&mut ctxs[own], p);
                } else {
                    let far = shard_of(self.ports[self.ports[p].peer.idx()].node.idx());
                    self.wire_goes_down(ctxs, (own, far), p);
                    self.port_goes_down(&mut ctxs[own], p);
                }
            }
        }
    }

    /// LLR: the frames of port `p`'s replay ring were on the wire too: they go on the
    /// link, to be lost when they would have arrived like the others there (moved from
    /// the sender's shard `own` to the receiver's `far` when those differ; a fault acts
    /// between windows); a corrupted frame awaiting its replay is lost now.
    fn wire_goes_down(&mut self, ctxs: &mut [Ctx], (own, far): (usize, usize), p: PortId) {
        let fs = self.faults.as_mut().expect("faults model");
        let lf = &mut fs.links[p.idx()];
        if lf.wire.is_empty() {
            return;
        }
        if std::mem::take(&mut lf.awaiting_replay) {
            // Its replay will not come: lost (counted as corrupted already), its credits
            // back to the sender as for any frame lost on the way.
            let (_, head) = lf.wire.pop_front().expect("the corrupted head");
            let refund = head;
            super::lose_packet(&mut fs.flow_lost, &mut ctxs[own], head);
            self.refund_lost(&mut ctxs[far], p.link(), refund);
        }
        let fs = self.faults.as_mut().expect("faults model");
        let lf = &mut fs.links[p.idx()];
        let link = &mut self.links[p.idx()];
        for (a, mut d) in lf.wire.drain(..) {
            let a = a.max(lf.last_out).max(ctxs[own].now);
            if own != far {
                let (from, to) = two_mut(ctxs, own, far);
                d.id = from.arena.move_into(d.id, &mut to.arena);
            }
            lf.last_out = a;
            if link.put(a, d) {
                ctxs[far]
                    .queue
                    .push(a, crate::kernel::events::Event::LinkArrive(p.link()));
            }
        }
    }

    fn port_goes_down(&mut self, ctx: &mut Ctx, p: PortId) {
        let fs = self.faults.as_mut().expect("faults model");
        let lf = &mut fs.links[p.idx()];
        let on_wire = self.links[p.idx()].ring.len() as u64;
        lf.lost += on_wire - lf.dead_in_ring();
        lf.lose_next = on_wire as u32;
        lf.down_since = Some(ctx.now);
        self.ports[p].busy_until = DOWN;
        self.flush_port(ctx, p);
    }

    fn port_comes_up(&mut self, ctx: &mut Ctx, p: PortId) {
        let now = ctx.now;
        let fs = self.faults.as_mut().expect("faults model");
        let lf = &mut fs.links[p.idx()];
        if let Some(s) = lf.down_since.take() {
            lf.down_ps += now - s;
        }
        self.ports[p].busy_until = now;
        self.schedule_wake(ctx, p, now);
    }

    /// Drops the packets queued on switch port `p`, whose link went down; frames the
    /// switch generated itself stay, in order.
    fn flush_port(&mut self, ctx: &mut Ctx, p: PortId) {
        let NodeKind::Switch(s) = self.ports[p].owner() else {
            return;
        };
        let now = ctx.now;
        for prio in 0..N_PRIO {
            for _ in 0..self.ports[p].queues[prio].len() {
                let (port_ref, pool) = self.port_and_pool(p.idx());
                let d = port_ref.dequeue_head(pool, prio, now);
                if d.in_port == LOCAL_PORT {
                    port_ref.enqueue(pool, prio, d, now);
                } else {
                    self.drop_admitted(ctx, s, p, d);
                }
            }
        }
    }

    /// Switch `s` drops `pkt`, admitted to its buffer (its `in_port` is the local ingress
    /// index) and meant for `egress`, whose link is down: the buffer is released (flow
    /// control may resume the ingress) and the drop counted as a fault's.
    #[cold]
    #[inline(never)]
    pub(crate) fn drop_admitted(&mut self, ctx: &mut Ctx, s: u32, egress: PortId, pkt: Desc) {
        let (local_in, wire) = (pkt.in_port as usize, pkt.wire() as u64);
        // The buffer holds it under the VC it came in on (a detour may have raised it).
        let prio = pkt.arrival_vc();
        let _ = (self.switches[s as usize].buffer).release(local_in, prio as usize, wire);
        self.after_release(ctx, s, local_in, &pkt, wire);
        self.count_fault_drop(ctx, s, Some(egress), pkt);
    }
}
