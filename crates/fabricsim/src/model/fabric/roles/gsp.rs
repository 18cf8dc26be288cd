//! GSE at the edge switches (GSPs, document 000): the handlers.
//!
//! A source GSP puts the data its NICs send into PKTC containers on the least-loaded
//! uplink (or, with DGSQ, into per-destination VOQs that send REQUESTs and release one
//! container per GRANT); a destination GSP strips the GSE header and restores container
//! order before its NIC; each destination NIC's scheduler grants round robin, paced at
//! the port's rate, and names the spine link the container should come in on. The
//! state machines live beside this file (`pktc`, `dgsq`, `reorder`).

use crate::base::units::Time;
use crate::kernel::events::Event;
use crate::kernel::packet::{Desc, Packet, PacketKind};
use crate::model::fabric::buffer::Admission;
use crate::model::fabric::switch::Switch;
use crate::model::fabric::{Node, NodeKind, Port};
use crate::model::gse::reorder::Held;
use crate::model::gse::Gse;
use crate::model::gse::{GseCfg, GseScheduling};
use crate::model::routing::ecmp;

use crate::base::ids::{GspId, HostId, PortId};
use crate::kernel::ctx::*;
use crate::kernel::packet::Header;
use crate::kernel::packet::Payload;
use crate::kernel::packet::LOCAL_PORT;
use crate::model::fabric::roles::{RoleHandlers, SwitchRole};
use crate::model::fabric::Fabric;

/// The GSP role of an edge switch: its GSP index.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GspRole(pub u32);

impl RoleHandlers for GspRole {
    type State = Gse;

    #[inline]
    fn take(
        self,
        state: &mut Gse,
        net: &mut Fabric,
        ctx: &mut Ctx,
        s: u32,
        in_port: PortId,
        pkt: Desc,
    ) -> bool {
        state.gsp_receive(net, ctx, s, self.0, in_port, pkt)
    }
}

impl Gse {
    pub(crate) fn build(
        cfg: &GseCfg,
        nodes: &[Node],
        ports: &[Port],
        host_ports: &[PortId],
        switches: &mut [Switch],
    ) -> Gse {
        let n_hosts = host_ports.len();
        let mut gsp_of_switch: Vec<Option<u32>> = vec![None; switches.len()];
        let mut switch_of_gsp = Vec::new();
        let mut gsp_of_host = vec![None; n_hosts];
        for (h, port) in host_ports.iter().enumerate() {
            let peer = ports[port.idx()].peer.0;
            if let NodeKind::Switch(s) = nodes[ports[peer as usize].node.idx()].kind {
                if gsp_of_switch[s as usize].is_none() {
                    gsp_of_switch[s as usize] = Some(switch_of_gsp.len() as u32);
                    switch_of_gsp.push(s);
                }
                gsp_of_host[h] = gsp_of_switch[s as usize];
            }
        }
        let n_gsp = switch_of_gsp.len();
        for (g, &s) in switch_of_gsp.iter().enumerate() {
            switches[s as usize].role = SwitchRole::Gsp(GspRole(g as u32));
        }
        let dgsq = cfg.scheduling == GseScheduling::Dgsq;
        let host_of_gsp: Vec<u32> = (0..n_gsp as u32)
            .map(|g| {
                (gsp_of_host.iter())
                    .position(|&x| x == Some(g))
                    .expect("a GSP has a host") as u32
            })
            .collect();
        Gse {
            cfg: cfg.clone(),
            dgsq,
            gsp_of_switch,
            gsp_of_host,
            switch_of_gsp,
            n_hosts,
            nic_port: host_ports.to_vec(),
            tx: vec![Default::default(); n_gsp * n_hosts],
            rx: vec![Default::default(); n_gsp * n_hosts],
            voq: if dgsq {
                vec![Default::default(); n_gsp * n_hosts]
            } else {
                Vec::new()
            },
            sched: if dgsq {
                (0..n_hosts)
                    .map(|_| crate::model::gse::dgsq::Scheduler::new(n_gsp))
                    .collect()
            } else {
                Vec::new()
            },
            rr: vec![0; n_gsp],
            held_bytes: vec![0; n_gsp],
            via_out: if dgsq {
                vec![0; ports.len()]
            } else {
                Vec::new()
            },
            host_of_gsp,
            stats: vec![Default::default()],
        }
    }

    /// GSE handling of a packet arriving at switch `s`; returns true if it took the
    /// packet (the caller then does nothing more).
    pub(crate) fn gsp_receive(
        &mut self,
        net: &mut Fabric,
        ctx: &mut Ctx,
        s: u32,
        gsp: u32,
        in_port: PortId,
        mut pkt: Desc,
    ) -> bool {
        match pkt.kind() {
            PacketKind::Request | PacketKind::Grant => {
                if self.gsp_of_host[pkt.dst() as usize] != Some(gsp) {
                    return false;
                }
                let p = ctx.arena.get(pkt.id, pkt.kind(), ctx.now);
                ctx.arena.release(pkt.id);
                net.switches[s as usize].consumed += 1;
                match p.payload {
                    Payload::Request { from, host, bytes } => {
                        self.on_request(ctx, from.0, host.0, bytes)
                    }
                    Payload::Grant { host, bytes, via } => {
                        self.on_grant(net, ctx, gsp, host.0, bytes, via)
                    }
                    _ => unreachable!("a request or grant descriptor"),
                }
                true
            }
            PacketKind::Data if pkt.prio() == ctx.params.data_prio => {
                let from_host = net.edge_port[in_port.idx()];
                let dst_gsp = self.gsp_of_host[pkt.dst() as usize];
                let header = self.cfg.header as u32;
                let local = dst_gsp == Some(gsp);
                if from_host && (!local || self.dgsq) {
                    // Source GSP: add the GSE header (not for a port of its own), then
                    // containers, or DGSQ (which schedules local ports too).
                    if !local {
                        pkt.set_wire(pkt.wire() + header);
                    }
                    let (prio, wire) = (pkt.prio() as usize, pkt.wire() as u64);
                    let sw = &mut net.switches[s as usize];
                    let local_in = sw.ports.local(in_port);
                    if sw.buffer.admit(local_in, prio, wire) == Admission::Dropped {
                        net.drop_packet(ctx, pkt, in_port, s);
                        return true;
                    }
                    pkt.in_port = local_in as u16;
                    let payload = self.payload_of(ctx, &pkt, !local);
                    let stream = self.stream(gsp, pkt.dst());
                    if self.dgsq {
                        let container = self.cfg.container;
                        let sw = &mut net.switches[s as usize];
                        sw.held += 1;
                        sw.voq_wire += wire;
                        let dst = pkt.dst();
                        let v = &mut self.voq[stream];
                        let req = v.push(pkt, payload, container);
                        self.stats[ctx.shard as usize].voq_max_bytes = self.stats
                            [ctx.shard as usize]
                            .voq_max_bytes
                            .max(v.max_bytes);
                        if req > 0 {
                            self.send_gse_ctrl(
                                net,
                                ctx,
                                s,
                                PacketKind::Request,
                                gsp,
                                dst,
                                dst,
                                req,
                                None,
                            );
                        }
                    } else {
                        self.gsp_emit(net, ctx, s, gsp, stream, pkt, payload, false, None);
                    }
                    net.after_admit(ctx, s, in_port, pkt.in_port as usize, prio);
                    return true;
                }
                if !from_host && dst_gsp == Some(gsp) {
                    // Destination GSP: strip the header, restore container order.
                    pkt.set_wire(pkt.wire() - header);
                    if self.dgsq {
                        let payload = self.payload_of(ctx, &pkt, false);
                        let v = &mut self.via_out[in_port.idx()];
                        *v = v.saturating_sub(payload);
                    }
                    pkt.in_port = net.switches[s as usize].ports.local(in_port) as u16;
                    self.gsp_reorder(net, ctx, s, gsp, pkt);
                    return true;
                }
                false
            }
            _ => false,
        }
    }

    /// Payload bytes of a data packet as it sits in a GSP (wire less RoCE headers, and
    /// the GSE header if it carries one).
    pub(crate) fn payload_of(&self, ctx: &Ctx, d: &Desc, gse_header: bool) -> u64 {
        let h = if gse_header { self.cfg.header } else { 0 };
        (d.wire() as u64).saturating_sub(ctx.params.header + h)
    }

    /// Places an admitted packet in its container and queues it on the container's uplink.
    /// `via`: with DGSQ, the destination GSP's port the grant asked the container to come
    /// in on (the source takes its uplink toward that spine), if any.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn gsp_emit(
        &mut self,
        net: &mut Fabric,
        ctx: &mut Ctx,
        s: u32,
        gsp: u32,
        stream: usize,
        mut pkt: Desc,
        payload: u64,
        force: bool,
        via: Option<PortId>,
    ) {
        if self.gsp_of_host[pkt.dst() as usize] == Some(gsp) {
            // A port of this GSP (DGSQ-scheduled): no container, no header, one path.
            let cands = net.routing.lookup(s, pkt.dst());
            let port = net.routing.port_of(cands, 0);
            if !net.ports[port].is_up() {
                return net.drop_admitted(ctx, s, port, pkt);
            }
            let (port_ref, pool) = net.port_and_pool(port.idx());
            port_ref.enqueue(pool, pkt.prio() as usize, pkt, ctx.now);
            net.try_transmit::<true>(ctx, port);
            return;
        }
        let (tag, open) = self.tx[stream].assign(payload, self.cfg.container, force);
        if open {
            self.stats[ctx.shard as usize].containers += 1;
            let cands = net.routing.lookup(s, pkt.dst());
            let n = cands.len as usize;
            let ports = &net.ports;
            let routing = &net.routing;
            // The spine the grant named, if this GSP has uplinks to it: those uplinks
            // only; otherwise all of them.
            let spine = via.map(|v| ports[ports[v].peer].node);
            let to_spine = |k: usize| {
                let p = routing.port_of(cands, k).idx();
                Some(ports[ports[p].peer.idx()].node) == spine
            };
            let restrict = spine.is_some() && (0..n).any(to_spine);
            let k = crate::model::routing::pktc::best_uplink(n, &mut self.rr[gsp as usize], |k| {
                if restrict && !to_spine(k) {
                    u64::MAX
                } else {
                    ports[routing.port_of(cands, k)].total_bytes
                }
            });
            self.tx[stream].uplink = Some(net.routing.port_of(cands, k));
        }
        let uplink = self.tx[stream]
            .uplink
            .expect("the first packet opens a container");
        ctx.arena.set_tag(pkt.id, tag, gsp);
        // Later switches hash the container, so it keeps to one path.
        pkt.hash = ecmp::mix32((stream as u32).wrapping_mul(0x9e37_79b9) ^ tag.cont);
        if !net.ports[uplink].is_up() {
            // The container's uplink went down: routing has not re-converged yet.
            return net.drop_admitted(ctx, s, uplink, pkt);
        }
        let (port_ref, pool) = net.port_and_pool(uplink.idx());
        port_ref.enqueue(pool, pkt.prio() as usize, pkt, ctx.now);
        net.try_transmit::<true>(ctx, uplink);
    }

    /// Destination GSP: deliver in container order or hold.
    pub(crate) fn gsp_reorder(
        &mut self,
        net: &mut Fabric,
        ctx: &mut Ctx,
        s: u32,
        gsp: u32,
        pkt: Desc,
    ) {
        let now = ctx.now;
        // The source GSP (that of the packet's sender) tagged it.
        let (tag, src_gsp) = ctx.arena.gse_tag(pkt.id);
        assert!(src_gsp != u32::MAX, "GSE sources sit behind GSPs");
        let stream = self.stream(src_gsp, pkt.dst());
        let rx = &mut self.rx[stream];
        if tag.cont == rx.exp_cont && tag.idx > rx.exp_idx {
            self.stats[ctx.shard as usize].intra_container_gaps += 1;
        }
        if rx.is_next(tag) {
            rx.advance(tag);
        } else if !rx.is_stale(tag) {
            rx.hold(Held {
                tag,
                desc: pkt,
                since: now,
            });
            self.held_bytes[gsp as usize] += pkt.wire() as u64;
            self.stats[ctx.shard as usize].reorder_max_bytes = self.stats[ctx.shard as usize]
                .reorder_max_bytes
                .max(self.held_bytes[gsp as usize]);
            net.switches[s as usize].held += 1;
            if !rx.timer {
                rx.timer = true;
                let t = now + self.cfg.reorder_timeout;
                ctx.queue.push(t, Event::Reorder(stream as u32));
            }
            return;
        }
        self.gsp_deliver(net, ctx, s, pkt);
        self.gsp_drain(net, ctx, s, gsp, stream);
    }

    /// Delivers every held packet of `stream` that is now in order.
    pub(crate) fn gsp_drain(
        &mut self,
        net: &mut Fabric,
        ctx: &mut Ctx,
        s: u32,
        gsp: u32,
        stream: usize,
    ) {
        let now = ctx.now;
        while let Some(h) = self.rx[stream].take_next() {
            self.note_released(net, ctx.shard, s, gsp, &h, now);
            self.gsp_deliver(net, ctx, s, h.desc);
        }
    }

    pub(crate) fn note_released(
        &mut self,
        net: &mut Fabric,
        shard: u32,
        s: u32,
        gsp: u32,
        h: &Held,
        now: Time,
    ) {
        self.held_bytes[gsp as usize] -= h.desc.wire() as u64;
        let w = now - h.since;
        self.stats[shard as usize].reordered_packets += 1;
        self.stats[shard as usize].reorder_wait_ps += w;
        self.stats[shard as usize].reorder_wait_max_ps =
            self.stats[shard as usize].reorder_wait_max_ps.max(w);
        net.switches[s as usize].held -= 1;
    }

    /// Forwards an in-order packet from the destination GSP to its NIC.
    pub(crate) fn gsp_deliver(&mut self, net: &mut Fabric, ctx: &mut Ctx, s: u32, pkt: Desc) {
        let cands = net.routing.lookup(s, pkt.dst());
        let in_port = net.switches[s as usize].ports.port(pkt.in_port as usize);
        if cands.len == 0 {
            net.drop_unroutable(ctx, pkt, in_port, s);
            return;
        }
        let egress = net.routing.port_of(cands, 0);
        net.forward::<true>(ctx, s, in_port, pkt, egress);
    }

    pub(crate) fn on_reorder_timer(&mut self, net: &mut Fabric, ctx: &mut Ctx, stream: u32) {
        let now = ctx.now;
        let stream = stream as usize;
        let dst = (stream % self.n_hosts) as u32;
        let gsp = self.gsp_of_host[dst as usize].expect("reorder streams end at GSPs");
        let s = self.switch_of_gsp[gsp as usize];
        let timeout = self.cfg.reorder_timeout;
        let rx = &mut self.rx[stream];
        rx.timer = false;
        if rx.held.is_empty() {
            return;
        }
        if now >= rx.blocked_since + timeout {
            let h = rx.skip().expect("held is not empty");
            self.stats[ctx.shard as usize].reorder_skips += 1;
            self.note_released(net, ctx.shard, s, gsp, &h, now);
            self.gsp_deliver(net, ctx, s, h.desc);
            self.gsp_drain(net, ctx, s, gsp, stream);
        }
        let rx = &mut self.rx[stream];
        if !rx.held.is_empty() && !rx.timer {
            rx.timer = true;
            let t = (rx.blocked_since + timeout).max(now + 1);
            ctx.queue.push(t, Event::Reorder(stream as u32));
        }
    }

    /// Sends a REQUEST or GRANT from switch `s` toward host `to` (whose GSP takes it).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn send_gse_ctrl(
        &mut self,
        net: &mut Fabric,
        ctx: &mut Ctx,
        s: u32,
        kind: PacketKind,
        gsp: u32,
        to: u32,
        port_host: u32,
        bytes: u64,
        via: Option<PortId>,
    ) {
        if self.gsp_of_host[to as usize] == self.gsp_of_switch[s as usize] {
            // Addressed to this GSP itself (a port of its own): no packet on the wire.
            match kind {
                PacketKind::Request => self.on_request(ctx, gsp, port_host, bytes),
                _ => {
                    let me = self.gsp_of_switch[s as usize].expect("GSE control leaves GSPs");
                    self.on_grant(net, ctx, me, port_host, bytes, via);
                }
            }
            return;
        }
        let host = HostId(port_host);
        let payload = if kind == PacketKind::Request {
            self.stats[ctx.shard as usize].requests += 1;
            Payload::Request {
                from: GspId(gsp),
                host,
                bytes,
            }
        } else {
            self.stats[ctx.shard as usize].grants += 1;
            Payload::Grant { host, bytes, via }
        };
        // A GSP's control packet comes from no host.
        let p = Packet::new(payload, ctx.now);
        let hdr = Header {
            dst: to,
            hash: ecmp::mix32(gsp.wrapping_mul(0x85eb_ca6b) ^ port_host),
            wire: self.cfg.control_bytes as u32,
            prio: ctx.params.ctrl_prio,
            ..Header::default()
        };
        let mut d = ctx.arena.alloc_desc(p, hdr);
        d.in_port = LOCAL_PORT;
        net.switches[s as usize].generated += 1;
        let cands = net.routing.lookup(s, to);
        let n = cands.len as usize;
        let k = if n > 1 {
            ecmp::pick(hdr.hash, net.switches[s as usize].salt, n)
        } else {
            0
        };
        let egress = net.routing.port_of(cands, k);
        let (port_ref, pool) = net.port_and_pool(egress.idx());
        port_ref.enqueue(pool, hdr.prio as usize, d, ctx.now);
        net.try_transmit::<true>(ctx, egress);
    }

    /// A REQUEST for `bytes` toward host `dst` from GSP `src_gsp` reached `dst`'s GSP.
    pub(crate) fn on_request(&mut self, ctx: &mut Ctx, src_gsp: u32, dst: u32, bytes: u64) {
        let now = ctx.now;
        let sc = &mut self.sched[dst as usize];
        if sc.request(src_gsp as usize, bytes) {
            let t = sc.next_grant.max(now);
            ctx.queue.push(t, Event::Grant(HostId(dst)));
        }
    }

    /// The scheduler of destination host `dst` issues its next grant.
    pub(crate) fn on_grant_timer(&mut self, net: &mut Fabric, ctx: &mut Ctx, dst: HostId) {
        let dst = dst.0;
        let now = ctx.now;
        let (mtu, header) = (ctx.params.mtu, ctx.params.header);
        let rate = net.ports[self.nic_port[dst as usize]].rate;
        let container = self.cfg.container;
        let gt = |b: u64| {
            let wire = b as f64 * (mtu + header + self.cfg.header) as f64 / mtu as f64;
            (wire * 8.0 / (rate.0 as f64 * (1.0 - self.cfg.eps)) * 1e12).ceil() as Time
        };
        let (grant, more) = self.sched[dst as usize].grant(now, container, gt);
        let next = self.sched[dst as usize].next_grant;
        let dst_gsp = self.gsp_of_host[dst as usize].expect("grants come from GSPs");
        let s = self.switch_of_gsp[dst_gsp as usize];
        if let Some((src_gsp, bytes)) = grant {
            // Addressed to a host of the source GSP, which takes the grant itself.
            let to = self.host_of_gsp[src_gsp];
            // Spine-link capacity: the container is to come in over the fabric link into
            // this GSP with the fewest granted bytes still to arrive.
            let via = if src_gsp as u32 == dst_gsp {
                None
            } else {
                let node = &net.nodes[net.switches[s as usize].node];
                let mut best: Option<PortId> = None;
                for p in node.ports.iter() {
                    if !net.edge_port[p.idx()]
                        && best.is_none_or(|b| self.via_out[p.idx()] < self.via_out[b.idx()])
                    {
                        best = Some(p);
                    }
                }
                if let Some(b) = best {
                    self.via_out[b.idx()] += bytes;
                }
                best
            };
            self.send_gse_ctrl(
                net,
                ctx,
                s,
                PacketKind::Grant,
                src_gsp as u32,
                to,
                dst,
                bytes,
                via,
            );
        }
        if more {
            ctx.queue.push(next.max(now), Event::Grant(HostId(dst)));
        }
    }

    /// A GRANT of `bytes` toward host `dst` reached its source GSP `gsp`.
    pub(crate) fn on_grant(
        &mut self,
        net: &mut Fabric,
        ctx: &mut Ctx,
        gsp: u32,
        dst: u32,
        bytes: u64,
        via: Option<PortId>,
    ) {
        let s = self.switch_of_gsp[gsp as usize];
        let stream = self.stream(gsp, dst);
        self.voq[stream].grant(bytes);
        let mut first = true;
        let remote = self.gsp_of_host[dst as usize] != Some(gsp);
        loop {
            let gh = if remote { self.cfg.header } else { 0 };
            let hdr = ctx.params.header + gh;
            let Some(d) = self.voq[stream].release(|d| (d.wire() as u64).saturating_sub(hdr))
            else {
                break;
            };
            let sw = &mut net.switches[s as usize];
            sw.held -= 1;
            sw.voq_wire -= d.wire() as u64;
            let payload = (d.wire() as u64).saturating_sub(hdr);
            self.gsp_emit(net, ctx, s, gsp, stream, d, payload, first, via);
            first = false;
        }
        let container = self.cfg.container;
        let req = self.voq[stream].request_due(container);
        if req > 0 {
            self.send_gse_ctrl(net, ctx, s, PacketKind::Request, gsp, dst, dst, req, None);
        }
    }
}
