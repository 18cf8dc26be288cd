//! A switch and its forwarding: a packet arriving on an ingress port is routed (a table
//! slice and, among equal-cost candidates, the load balancer's choice), admitted to the
//! shared buffer (or dropped when a lossy buffer is full), and queued on its egress port
//! (or sent at once when that port is idle, empty and unpaused). At dequeue the switch
//! releases the buffer, marks ECN (RED), adds telemetry and lets flow control resume the
//! ingress. The switch's forwarding latency is folded into the delay of the links that
//! reach it.
//!
//! A switch plays a role: a plain switch forwards; a GSE GSP ([`crate::gse`]) also takes
//! the data its NICs send into containers and VOQs and restores order for them.

use super::buffer::SharedBuffer;
use super::ecn::RedMarker;
use crate::fabric::buffer::Admission;
use crate::fabric::port::DOWN;
use crate::fabric::NodeKind;
use crate::ids::PortId;
use crate::packet::{Desc, PacketKind, ECN_CE, ECN_ECT, FLAG_ROUTED, LOCAL_PORT};
use crate::routing::ecmp;
use crate::routing::registry::LbState;
use crate::sim::*;
use rand::Rng;
use rand_chacha::ChaCha8Rng;

/// What a switch does besides forwarding: the seam where switch kinds plug in. The role
/// is read once per arriving packet (`switch_receive`), before routing; a role that takes
/// the packet handles it with its own state and the fabric's ports and queues. A
/// long-haul DR switch (deep buffer, CNPs of its own) is one more variant, one more
/// [`RoleHandlers`] implementation and one more file of handlers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SwitchRole {
    /// Routes and forwards.
    Plain,
    /// A GSE GSP (document 000): an edge switch that puts its NICs' data into containers
    /// (and DGSQ VOQs) and restores container order toward them.
    Gsp(crate::gse::GspRole),
    /// A long-haul DR switch (document 001): a deep buffer between a campus and the DCI
    /// fibre, which may send CNPs itself ([`crate::longhaul::dr`]).
    Dr(crate::longhaul::dr::DrRole),
}

/// The behaviour a switch role adds to forwarding. [`SwitchRole::take`] dispatches to the
/// implementations statically (it runs once per packet and hop).
pub(crate) trait RoleHandlers {
    /// Packet `pkt` arrived at switch `s` on `in_port`: true if the role took it (the
    /// switch then does nothing more with it), false to route it as a plain switch does.
    fn take(self, fabric: &mut Fabric, ctx: &mut Ctx, s: u32, in_port: PortId, pkt: Desc) -> bool;
}

impl SwitchRole {
    /// The role's handling of an arriving packet (see [`RoleHandlers::take`]).
    #[inline(always)]
    pub(crate) fn take(
        self,
        fabric: &mut Fabric,
        ctx: &mut Ctx,
        s: u32,
        in_port: PortId,
        pkt: Desc,
    ) -> bool {
        match self {
            SwitchRole::Plain => false,
            SwitchRole::Gsp(g) => g.take(fabric, ctx, s, in_port, pkt),
            SwitchRole::Dr(d) => d.take(fabric, ctx, s, in_port, pkt),
        }
    }
}

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
    pub node: crate::ids::NodeId,
    /// Its ports (contiguous ids; the per-port tables below use local indices).
    pub ports: crate::ids::PortRange,
    /// ECMP hash salt, so that different switches split flows differently.
    pub salt: u32,
    /// Round-robin cursor for per-packet spraying.
    pub rr: u32,
}

impl Fabric {
    /// Switch `s`'s ECMP egress towards host `dst` for flow hash `hash`; `None` when `s`
    /// has no route there.
    #[inline(always)]
    pub(crate) fn ecmp_egress(&self, s: u32, dst: u32, hash: u32) -> Option<PortId> {
        let c = self.routing.lookup(s, dst);
        let k = match c.len {
            0 => return None,
            1 => 0,
            n => ecmp::pick(hash, self.switches[s as usize].salt, n as usize),
        };
        Some(self.routing.port_of(c, k))
    }

    pub(crate) fn switch_receive(&mut self, ctx: &mut Ctx, s: u32, in_port: PortId, mut pkt: Desc) {
        if pkt.flags & FLAG_ROUTED != 0 {
            pkt.flags &= !FLAG_ROUTED;
            let egress = PortId(in_port.0.wrapping_add(pkt.in_port as i16 as u32));
            self.forward(ctx, s, in_port, pkt, egress);
            return;
        }
        let role = self.switches[s as usize].role;
        if role.take(self, ctx, s, in_port, pkt) {
            return;
        }
        match self.route(ctx, s, &pkt) {
            Some(egress) => self.forward(ctx, s, in_port, pkt, egress),
            None => self.drop_unroutable(ctx, pkt, in_port, s),
        }
    }

    /// Switch `s`'s egress for `pkt`: its routing table's candidates toward the
    /// destination and, among several, the load balancer's choice; `None` without a route.
    #[inline(always)]
    pub(crate) fn route(&mut self, ctx: &Ctx, s: u32, pkt: &Desc) -> Option<PortId> {
        let (dst, hash) = (pkt.dst, pkt.hash);
        let sw = &mut self.switches[s as usize];
        let cands = self.routing.lookup(s, dst);
        let n = cands.len as usize;
        if n == 0 {
            return None;
        }
        let k = if n == 1 {
            0
        } else {
            ctx.params.lb.pick(
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
    /// `egress`; pauses the ingress if the buffer says so.
    #[inline]
    pub(crate) fn forward(
        &mut self,
        ctx: &mut Ctx,
        s: u32,
        in_port: PortId,
        mut pkt: Desc,
        egress: PortId,
    ) {
        let (prio, wire) = (pkt.prio as usize, pkt.wire as u64);
        let sw = &mut self.switches[s as usize];
        let local_in = sw.ports.local(in_port);
        if sw.buffer.admit(local_in, prio, wire) == Admission::Dropped {
            self.ports[egress].stats.drops += 1;
            self.drop_packet(ctx, pkt, in_port, s);
            return;
        }
        pkt.in_port = local_in as u16;
        let now = ctx.now;
        let e = &mut self.ports[egress];
        if in_port != egress && e.can_pass_through(prio, now) {
            // The packet would be queued and dequeued at once: skip the queue (whose
            // enqueue and dequeue cancel out) and leave straight from here.
            e.pass_through(wire);
            self.after_admit(ctx, s, in_port, local_in, prio);
            self.on_switch_dequeue(ctx, egress, &mut pkt);
            self.transmit(ctx, egress, pkt, false);
            return;
        }
        if e.busy_until == DOWN {
            // Routing still sends here: the link went down since it last re-converged.
            return self.drop_admitted(ctx, s, egress, pkt);
        }
        e.enqueue(prio, pkt, now);
        self.after_admit(ctx, s, in_port, local_in, prio);
        self.try_transmit(ctx, egress);
    }

    pub(crate) fn drop_packet(&mut self, ctx: &mut Ctx, pkt: Desc, _in_port: PortId, s: u32) {
        if pkt.kind == PacketKind::Data {
            if let Some(flow) = ctx.arena.get(pkt.id).payload.flow() {
                self.flow_drops[flow.idx()] += 1;
            }
        }
        self.switches[s as usize].drops += 1;
        ctx.counters.drops += 1;
        ctx.arena.release(pkt.id);
    }

    pub(crate) fn on_switch_dequeue(&mut self, ctx: &mut Ctx, port: PortId, pkt: &mut Desc) {
        let NodeKind::Switch(s) = self.ports[port].owner() else {
            return;
        };
        let (local_in, prio, wire, ecn, kind) = (
            pkt.in_port as usize,
            pkt.prio as usize,
            pkt.wire as u64,
            pkt.ecn,
            pkt.kind,
        );
        if pkt.in_port == LOCAL_PORT {
            return;
        }
        let sw = &mut self.switches[s as usize];
        sw.buffer.release(local_in, prio, wire);
        if kind == PacketKind::Data && ecn == ECN_ECT {
            let local_out = sw.ports.local(port);
            let q = self.ports[port].queues[prio].bytes;
            let prob = sw.ecn[local_out].probability(q);
            if prob > 0.0 && (prob >= 1.0 || sw.rng.gen::<f64>() < prob) {
                pkt.ecn = ECN_CE;
                self.ports[port].stats.ecn_marked += 1;
                ctx.counters.ecn_marks += 1;
            }
        }
        if kind == PacketKind::Data && self.telemetry.applies_to(pkt) {
            let now = ctx.now;
            self.telemetry
                .on_data_dequeue(now, port, &mut self.ports[port], prio, wire, pkt);
        }
        self.after_release(ctx, s, local_in, prio);
    }
}
