//! A switch and its forwarding: a packet arriving on an ingress port is routed (a table
//! slice and, among equal-cost candidates, the load balancer's choice), admitted to the
//! shared buffer (or dropped when a lossy buffer is full), and queued on its egress port
//! (or sent at once when that port is idle, empty and unpaused). At dequeue the switch
//! releases the buffer, marks ECN (RED), adds telemetry and lets flow control resume the
//! ingress. The switch's forwarding latency is folded into the delay of the links that
//! reach it.
//!
//! A switch plays a role: a plain switch forwards; a GSE GSP ([`crate::model::gse`]) also takes
//! the data its NICs send into containers and VOQs and restores order for them.

use super::buffer::SharedBuffer;
use super::ecn::RedMarker;
use crate::base::ids::PortId;
use crate::base::trusted::Trusted;
use crate::kernel::ctx::*;
use crate::kernel::packet::{
    Desc, Header, Packet, PacketKind, Payload, ECN_CE, FLAG_MCAST, FLAG_ROUTED, LOCAL_PORT,
};
use crate::model::fabric::buffer::Admission;
use crate::model::fabric::port::DOWN;
use crate::model::fabric::Fabric;
use crate::model::fabric::NodeKind;
use crate::model::routing::ecmp;
use crate::model::routing::registry::LbState;
use rand::Rng;
use rand_chacha::ChaCha8Rng;

use super::roles::{RoleStates, SwitchRole};

/// One switch. `repr(C)` pins the field order rustc chose before the port range became
/// a type of its own: the k = 16 benchmark showed 2-4 % more D1 misses with the hot
/// fields (role, buffer, port range, salt) arranged any other way we tried, including
/// all of them first. The random stream (about 300 bytes, read only by spraying and ECN
/// coin flips) leads, the counters follow it, the per-packet fields end the struct.
#[repr(C)]
pub struct Switch {
    /// Seeded from (run seed, switch name): ECN coin flips and random spraying.
    pub rng: ChaCha8Rng,
    /// Packets dropped at this switch.
    pub drops: u64,
    /// Control packets this switch generated (GSE REQUEST/GRANT).
    pub generated: u64,
    /// Control packets addressed to this switch and consumed here.
    pub consumed: u64,
    /// Packets held outside the egress queues (GSE VOQs and reorder buffers).
    pub held: u64,
    /// Wire bytes admitted to the buffer but waiting in GSE VOQs.
    pub voq_wire: u64,
    /// What it does besides forwarding.
    pub role: SwitchRole,
    /// Shared buffer.
    pub buffer: SharedBuffer,
    /// ECN thresholds per local port.
    pub ecn: Vec<RedMarker>,
    /// Its node.
    pub node: crate::base::ids::NodeId,
    /// Its ports (contiguous ids; the per-port tables below use local indices).
    pub ports: crate::base::ids::PortRange,
    /// ECMP hash salt, so that different switches split flows differently.
    pub salt: u32,
    /// Parallel links per next hop that ECMP treats as a LAG (a next hop, then a member);
    /// 1: every link is a next hop of its own (`fabric.load_balance.hash.lag = "flat"`, or
    /// no parallel links here).
    pub lag: u32,
    /// Seed of the LAG member choice: [`Switch::salt`] when correlated with the next hop.
    pub lag_salt: u32,
    /// Round-robin cursor for per-packet spraying.
    pub rr: u32,
}

impl Fabric {
    /// Switch `s`'s ECMP egress towards host `dst` for flow hash `hash`; `None` when `s`
    /// has no route there.
    #[inline(always)]
    pub(crate) fn ecmp_egress(&self, s: u32, dst: u32, hash: u32) -> Option<PortId> {
        ecmp_egress(&self.routing, &self.switches, s, dst, hash)
    }
}

/// [`Fabric::ecmp_egress`] from the two tables it reads, for a caller that holds other
/// parts of the fabric (a port and its link, to transmit).
#[inline(always)]
pub(crate) fn ecmp_egress(
    routing: &crate::model::routing::RoutingTable,
    switches: &[Switch],
    s: u32,
    dst: u32,
    hash: u32,
) -> Option<PortId> {
    let c = routing.lookup(s, dst);
    let sw = &switches[s as usize];
    let k = match c.len {
        0 => return None,
        1 => 0,
        n if sw.lag > 1 && n.is_multiple_of(sw.lag) => ecmp::pick_lag(
            false,
            hash,
            sw.salt,
            sw.lag_salt,
            n as usize,
            sw.lag as usize,
        ),
        n => ecmp::pick(hash, sw.salt, n as usize),
    };
    Some(routing.port_of(c, k))
}

impl Fabric {
    #[inline(always)] // two dispatchers call it (see `Fabric::on_link_arrive`)
    pub(crate) fn switch_receive<const EXTRAS: bool>(
        &mut self,
        ctx: &mut Ctx,
        roles: &mut RoleStates,
        s: u32,
        in_port: PortId,
        mut pkt: Desc,
    ) {
        if pkt.flags & (FLAG_ROUTED | FLAG_MCAST) != 0 {
            if EXTRAS && pkt.flags & FLAG_MCAST != 0 {
                return self.multicast_receive(ctx, s, in_port, pkt.detached());
            }
            pkt.flags &= !FLAG_ROUTED;
            let egress = PortId(in_port.0.wrapping_add(pkt.in_port as i16 as u32));
            self.forward::<EXTRAS>(ctx, s, in_port, pkt, egress);
            return;
        }
        debug_assert!(
            EXTRAS || pkt.flags & FLAG_MCAST == 0,
            "multicast in a plain run"
        );
        debug_assert!(
            EXTRAS || matches!(self.switches[s as usize].role, SwitchRole::Plain),
            "a switch role in a plain run"
        );
        if EXTRAS {
            let role = self.switches.at(s as usize).role;
            if role.take(roles, self, ctx, s, in_port, pkt.detached()) {
                return;
            }
        }
        debug_assert!(
            EXTRAS || !self.table_routing,
            "table routing in a plain run"
        );
        let egress = if EXTRAS && self.table_routing {
            let mut routed = pkt.detached();
            let egress = self.route_table(ctx, s, in_port, &mut routed);
            pkt = routed.detached();
            egress
        } else {
            self.route(s, &pkt)
        };
        match egress {
            Some(egress) => self.forward::<EXTRAS>(ctx, s, in_port, pkt, egress),
            None => self.drop_unroutable(ctx, pkt.detached(), in_port, s),
        }
    }

    /// Switch `s`'s egress for `pkt` (arrived on `in_port`) under table routing: up/down
    /// tables with fallbacks ([`crate::model::routing::updown`]) and choices by port state
    /// ([`crate::model::routing::adaptive`]). Hash and spraying balancers choose among the
    /// primary entries alone. Under credit flow control a lateral hop (a sibling detour)
    /// moves the packet one VC level up, and a packet at the top level cannot take one.
    #[inline(never)]
    pub(crate) fn route_table(
        &mut self,
        ctx: &Ctx,
        s: u32,
        in_port: PortId,
        pkt: &mut Desc,
    ) -> Option<PortId> {
        let dst = pkt.dst();
        let (cands, primary) = if self.routing.tiered() {
            self.routing
                .lookup_phase(s, dst, self.routing.going_down(in_port))
        } else {
            let c = self.routing.lookup(s, dst);
            (c, c.len)
        };
        let n = cands.len as usize;
        if n == 0 {
            return None;
        }
        let lb = self.lb;
        // Under credits, a detour needs a VC level to go up to.
        let layout = self.credit().map(|c| c.layout);
        let vc = pkt.prio() as usize;
        let detour_ok = layout.is_none_or(|l| l.can_raise(pkt.prio()));
        let k = if lb.by_port_state() {
            let start = dst as usize % (primary as usize).max(1);
            let routing = &self.routing;
            crate::model::routing::adaptive::choose(
                n,
                primary as usize,
                start,
                lb == crate::model::routing::LbAlgorithm::Adaptive,
                |k| {
                    let p = routing.port_of(cands, k);
                    self.port_usable(p) && (detour_ok || !routing.is_lateral(p))
                },
                |k| self.egress_room(routing.port_of(cands, k), vc, ctx.now),
            )?
        } else {
            let m = if primary > 0 { primary as usize } else { n };
            let sw = self.switches.at(s as usize);
            if m == 1 {
                0
            } else if sw.lag > 1 && m % sw.lag as usize == 0 && lb.hashes_flows() {
                ecmp::pick_lag(
                    lb == crate::model::routing::LbAlgorithm::EcmpModulo,
                    pkt.hash,
                    sw.salt,
                    sw.lag_salt,
                    m,
                    sw.lag as usize,
                )
            } else {
                let sw = self.switches.at_mut(s as usize);
                lb.pick(
                    pkt.hash,
                    m,
                    LbState {
                        salt: sw.salt,
                        rng: &mut sw.rng,
                        rr: &mut sw.rr,
                    },
                )
            }
        };
        let egress = self.routing.port_of(cands, k);
        if let Some(layout) = layout {
            if self.routing.is_lateral(egress)
                && !crate::model::fabric::flow_control::credit::raise_vc(layout, pkt)
            {
                return None;
            }
        }
        Some(egress)
    }

    /// Whether egress `p` may be routed to: its link is up (table routing skips a failed
    /// link at once, before any table is rewritten).
    #[inline(always)]
    pub(crate) fn port_usable(&self, p: PortId) -> bool {
        self.port_up(p)
    }

    /// Room downstream of egress `p` for a packet on `vc` at `now`, larger is better:
    /// under credit flow control the next input buffer's free credits (and with
    /// pre-sensing its recent returns) less the blocks queued here, else the fewer bytes
    /// queued the more.
    #[inline(always)]
    pub(crate) fn egress_room(&self, p: PortId, vc: usize, now: crate::base::units::Time) -> f64 {
        let queued = self.ports[p].total_bytes as f64;
        match self.credit() {
            Some(c) => c.room(p.idx(), vc, now) - queued / c.block as f64,
            None => -queued,
        }
    }

    /// Switch `s`'s egress for `pkt`: its routing table's candidates toward the
    /// destination and, among several, the load balancer's choice; `None` without a route.
    #[inline(always)]
    pub(crate) fn route(&mut self, s: u32, pkt: &Desc) -> Option<PortId> {
        let (dst, hash) = (pkt.dst(), pkt.hash);
        let sw = self.switches.at_mut(s as usize);
        let cands = self.routing.lookup(s, dst);
        let n = cands.len as usize;
        if n == 0 {
            return None;
        }
        let k = if n == 1 {
            0
        } else if sw.lag > 1 && n.is_multiple_of(sw.lag as usize) && self.lb.hashes_flows() {
            ecmp::pick_lag(
                self.lb == crate::model::routing::LbAlgorithm::EcmpModulo,
                hash,
                sw.salt,
                sw.lag_salt,
                n,
                sw.lag as usize,
            )
        } else {
            self.lb.pick(
                hash,
                n,
                LbState {
                    salt: sw.salt,
                    rng: &mut sw.rng,
                    rr: &mut sw.rr,
                },
            )
        };
        Some(self.routing.port_of(cands, k))
    }

    /// Admits `pkt` (arrived on `in_port`) to switch `s`'s buffer and queues it on
    /// `egress`; pauses the ingress if the buffer says so. Always inlined (once per
    /// packet and hop), as are the buffer's, flow control's and the egress's parts it
    /// calls: a call's register saves cost as much as their common paths.
    #[inline(always)]
    pub(crate) fn forward<const EXTRAS: bool>(
        &mut self,
        ctx: &mut Ctx,
        s: u32,
        in_port: PortId,
        mut pkt: Desc,
        egress: PortId,
    ) {
        let (prio, wire) = (pkt.prio() as usize, pkt.wire() as u64);
        // The ingress buffer holds a packet under the VC it came in on, though a detour
        // (credit flow control) may have raised it for the egress queue and the next link.
        let prio_in = pkt.arrival_vc() as usize;
        let sw = self.switches.at_mut(s as usize);
        let local_in = sw.ports.local(in_port);
        let admission = sw.buffer.admit(local_in, prio_in, wire);
        if admission == Admission::Dropped {
            self.ports[egress].stats.drops += 1;
            self.drop_packet(ctx, pkt.detached(), in_port, s);
            return;
        }
        pkt.in_port = local_in as u16;
        let now = ctx.now;
        // The egress, its pool and the switch (whose buffer flow control reads after
        // the admission) are other fields: none is indexed again.
        let e = self.ports.at_mut(egress.idx());
        let pool = self.queue_pools.at_mut(e.pool as usize);
        if in_port != egress && e.can_pass_through(prio, now) {
            // The packet would be queued and dequeued at once: skip the queue (whose
            // enqueue and dequeue cancel out) and leave straight from here.
            e.pass_through(wire);
            if admission == Admission::AdmittedOver {
                self.after_admit(ctx, s, in_port, local_in, prio_in);
            }
            self.on_switch_dequeue::<EXTRAS>(ctx, s, egress, &mut pkt);
            self.transmit::<EXTRAS>(ctx, egress, pkt, false);
            return;
        }
        if EXTRAS && e.busy_until == DOWN {
            // Routing still sends here: the link went down since it last re-converged.
            return self.drop_admitted(ctx, s, egress, pkt.detached());
        }
        e.enqueue(pool, prio, pkt, now);
        // Only a counter over its threshold can pause its upstream (nearly never).
        if admission == Admission::AdmittedOver {
            self.after_admit(ctx, s, in_port, local_in, prio_in);
        }
        // Most packets queue behind a frame on the wire: what `try_transmit` would find
        // (`next_frame`: a wakeup for the frame's end, most often set already), without
        // its call.
        let e = self.ports.at(egress);
        if e.busy_until > now {
            let b = e.busy_until;
            self.schedule_wake(ctx, egress, b);
            return;
        }
        self.try_transmit::<EXTRAS>(ctx, egress);
    }

    pub(crate) fn drop_packet(&mut self, ctx: &mut Ctx, pkt: Desc, in_port: PortId, s: u32) {
        self.credits_of_dropped(ctx, &pkt, in_port);
        if pkt.kind() == PacketKind::Data {
            if let Some(flow) = ctx.arena.get(pkt.id, pkt.kind(), ctx.now).payload.flow() {
                if ctx.outbox.is_empty() {
                    self.flow_drops[flow.idx()] += 1;
                } else {
                    // A shard of a parallel run: another may drop the same flow's
                    // packets in this window; the counts are summed after the run.
                    ctx.flow_drops.push(flow.0);
                }
            }
        }
        self.switches[s as usize].drops += 1;
        ctx.counters.drops += 1;
        ctx.arena.release(pkt.id);
    }

    /// Under credit flow control, a packet dropped before it was admitted (no route)
    /// leaves the input buffer whose credits it holds: they go back upstream.
    pub(crate) fn credits_of_dropped(&mut self, ctx: &mut Ctx, pkt: &Desc, in_port: PortId) {
        if let Some(c) = self.credit() {
            let sig = crate::model::fabric::flow_control::credit::CreditSignal {
                vc: pkt.arrival_vc(),
                blocks: c.blocks(pkt.wire() as u64),
            };
            self.send_credit(ctx, in_port, sig);
        }
    }

    /// Packet `pkt` leaves switch port `port` for the wire: its buffer space is released
    /// (flow control may resume upstream), ECN marks, INT and TCD stamp. Always inlined
    /// into its two callers (the egress and the cut-through pass), once per packet and hop.
    #[inline(always)]
    pub(crate) fn on_switch_dequeue<const EXTRAS: bool>(
        &mut self,
        ctx: &mut Ctx,
        s: u32,
        port: PortId,
        pkt: &mut Desc,
    ) {
        let (local_in, prio, wire, kind) = (
            pkt.in_port as usize,
            pkt.prio() as usize,
            pkt.wire() as u64,
            pkt.kind(),
        );
        // Only switches with roles and multicast make packets of their own.
        if EXTRAS && pkt.in_port == LOCAL_PORT {
            return;
        }
        debug_assert_ne!(
            pkt.in_port, LOCAL_PORT,
            "a switch's own packet in a plain run"
        );
        let sw = self.switches.at_mut(s as usize);
        // The buffer holds it under the VC it came in on (a detour raised it since).
        let prio_in = pkt.arrival_vc();
        let holding = sw.buffer.release(local_in, prio_in as usize, wire);
        if pkt.is_ect_data() {
            let local_out = sw.ports.local(port);
            let q = self.ports.at(port).queues[prio].bytes;
            let mut prob = sw.ecn.at(local_out).probability(q);
            if EXTRAS && prob > 0.0 && !self.ecn_bias.is_empty() {
                // Document 002's unfair switch: the probability depends on the port
                // the packet came in on (`fabric.ecn.ingress_bias`).
                prob *= self.ecn_bias[sw.ports.port(local_in).idx()];
            }
            if prob > 0.0 && (prob >= 1.0 || sw.rng.gen::<f64>() < prob) {
                pkt.set_ecn(ECN_CE);
                self.ports[port].stats.ecn_marked += 1;
                ctx.counters.ecn_marks += 1;
            }
        }
        if EXTRAS && kind == PacketKind::Data && self.telemetry.applies_to(pkt) {
            let (shard, now) = (ctx.shard, ctx.now);
            // On a copy (out of line: see `Desc::detached`).
            let mut stamped = pkt.detached();
            self.telemetry.on_data_dequeue(
                shard,
                now,
                port,
                self.ports.at_mut(port),
                prio,
                wire,
                &mut stamped,
            );
            *pkt = stamped.detached();
        }
        // Under PFC only a counter that holds its upstream paused may resume it; credits
        // go back on every release.
        if holding || (EXTRAS && self.flow_control.acts_on_every_release()) {
            self.after_release(ctx, s, local_in, pkt, wire);
        }
    }

    /// Switch `s` sends a CNP for `flow`, whose data packet `pkt` it is forwarding,
    /// straight back to the flow's sender (`flow_src`): a control-priority frame the
    /// switch generates (routed by ECMP on a hash of the packet's, counted in
    /// `generated`), which the sender's controller takes as any CNP. The DR's
    /// notification and DCQCN's forward notification (`cc.dcqcn.cnp_from = "switch"`,
    /// [`crate::model::fabric::roles::switch_cnp`]) both send theirs here.
    pub(crate) fn cnp_to_sender(
        &mut self,
        ctx: &mut Ctx,
        s: u32,
        pkt: &Desc,
        flow: crate::base::ids::FlowId,
    ) {
        let now = ctx.now;
        let p = Packet::new(Payload::Cnp { flow, by_dr: true }, now);
        let hdr = Header {
            dst: self.flow_src[flow.idx()],
            hash: ecmp::mix32(pkt.hash ^ 0x5bd1_e995),
            wire: ctx.params.ack_size,
            prio: ctx.params.ctrl_prio,
            ..Header::default()
        };
        let cands = self.routing.lookup(s, hdr.dst);
        if cands.len == 0 {
            return;
        }
        let k = ecmp::pick(hdr.hash, self.switches[s as usize].salt, cands.len as usize);
        let egress = self.routing.port_of(cands, k);
        let mut d = ctx.arena.alloc_desc(p, hdr);
        d.in_port = LOCAL_PORT;
        self.switches[s as usize].generated += 1;
        ctx.counters.cnps += 1;
        let (port_ref, pool) = self.port_and_pool(egress.idx());
        port_ref.enqueue(pool, hdr.prio as usize, d, now);
        self.try_transmit::<true>(ctx, egress);
    }
}

/// Groups each switch's parallel links to one next hop into a LAG for ECMP
/// (`fabric.load_balance.hash.lag` other than `flat`).
pub(crate) fn form_lags(
    switches: &mut [Switch],
    routing: &crate::model::routing::RoutingTable,
    ports: &[crate::model::fabric::Port],
    nodes: &[crate::model::fabric::Node],
    lag: ecmp::LagChoice,
    faults: &crate::model::fabric::faults::config::FaultPlan,
) -> Result<(), String> {
    if !faults.faults.is_empty() {
        // Routes rebuilt after a fault need not keep a LAG's members together.
        return Err(
            "a LAG member choice is not modelled with link faults; use lag = \"flat\"".into(),
        );
    }
    // One destination per edge switch: tables are per (switch, edge switch).
    let mut seen = std::collections::HashSet::new();
    let hosts = nodes
        .iter()
        .filter_map(|n| match n.kind {
            NodeKind::Host(h) => Some(h),
            NodeKind::Switch(_) => None,
        })
        .filter(|&h| seen.insert(routing.edge_switch_of(h)))
        .collect::<Vec<u32>>();
    let peer_of = |p: u32| ports[ports[p as usize].peer.idx()].node.0 as usize;
    for (s, sw) in switches.iter_mut().enumerate() {
        sw.lag = ecmp::lag_members(routing, s as u32, &hosts, peer_of);
        if lag == ecmp::LagChoice::Correlated {
            sw.lag_salt = sw.salt;
        } else if sw.lag_salt == sw.salt {
            // Equal seeds are how `pick_lag` knows a correlated choice.
            sw.lag_salt ^= 1;
        }
    }
    Ok(())
}
