//! The NIC: it pulls data from its active flows round robin when its port is free
//! (paced by each flow's congestion controller, within its window), answers data with
//! ACKs, NACKs and CNPs, and feeds what comes back to the transport state machine
//! ([`crate::model::transport::NicTransport`]) and the flow's controller. Timers (RTO, CNP
//! pacing) are lazy: a deadline moves freely and one pending event re-arms itself.

use crate::base::ids::PortId;
use crate::base::trusted::Trusted;
use crate::base::units::{ser_time_f, Rate, Time};
use crate::kernel::events::Event;
use crate::kernel::packet::{Desc, Packet, PacketKind, ECN_CE, ECN_ECT, FLAG_INT};
use crate::model::cc::{AckInfo, CongestionControl};
use crate::model::fabric::telemetry::int::INT_BYTES_PER_HOP;
use crate::model::fabric::telemetry::tcd::TcdMark;
use crate::model::fabric::NodeKind;
use crate::model::routing::ecmp;

use crate::base::ids::FlowId;
use crate::kernel::ctx::*;
use crate::kernel::packet::{Header, Payload};
use crate::model::fabric::egress::NextFrame;
use crate::model::fabric::Fabric;
use crate::model::transport::RxReply;
use crate::model::transport::*;

/// Header bytes of a frame of `payload` bytes: one packet's, or those of the
/// `ceil(payload / mtu)` packets a segment stands for.
#[inline]
fn frame_headers(payload: u64, mtu: u64, header: u64) -> u64 {
    if payload <= mtu {
        header
    } else {
        payload.div_ceil(mtu) * header
    }
}

impl Nics {
    /// Whether the NICs use any of the extras (see [`crate::model::fabric`]): packets
    /// that ask the fabric for its own (multicast for hardware collectives, INT records
    /// for a flow whose congestion control reads them), or the NICs' own: more than one
    /// port a NIC (rails, planes; one port carries the data, `data_rails` = (0, 1)), and
    /// turns of several packets (`qp_burst`).
    pub(crate) fn uses_extras(&self, fabric: &Fabric) -> bool {
        let nic_ports = (fabric.ports.iter())
            .filter(|p| matches!(p.owner(), NodeKind::Host(_)))
            .count();
        self.hw.is_some()
            || self.flows.iter().any(|f| f.cc.wants_int())
            || nic_ports != self.hosts.len()
            || self.qp_burst != 0
    }

    /// The retransmission timer of flow `fid` fired (it may have been pushed back since).
    pub(crate) fn on_rto(&mut self, ctx: &mut Ctx, fabric: &mut Fabric, fid: FlowId) {
        let fid = fid.0;
        let now = ctx.now;
        let rto = ctx.params.rto;
        let f = self.flows.at_mut(fid as usize);
        if f.sender_done.is_some() {
            f.rto_pending = false;
            return;
        }
        if now < f.rto_deadline {
            ctx.queue.push(f.rto_deadline, Event::Rto(FlowId(fid)));
            return;
        }
        if self.transport.on_timeout(f) {
            let (src, sendable) = (f.spec.src as usize, f.snd_nxt < f.spec.size);
            self.hosts[src].active.set_sendable(f.rr_slot, sendable);
            let f = self.flows.at_mut(fid as usize);
            f.rto_deadline = now + rto;
            ctx.queue.push(f.rto_deadline, Event::Rto(FlowId(fid)));
            let src = f.spec.src;
            self.wake_nic(ctx, fabric, src, now);
        } else {
            f.rto_pending = false;
        }
    }

    /// Wakes, at `t`, the ports of NIC `h` that carry data (one, but for a dual-rail NIC
    /// spreading its packets over both rails).
    #[inline]
    pub(crate) fn wake_nic(&self, ctx: &mut Ctx, fabric: &mut Fabric, h: u32, t: Time) {
        let first = self.hosts[h as usize].port.0 + self.data_rails.0;
        for p in first..first + self.data_rails.1 {
            fabric.schedule_wake(ctx, PortId(p), t);
        }
    }

    /// The NIC's port `port` is free: it picks the next data packet, round robin over
    /// flows whose pacer allows (none if the port carries no data).
    pub(crate) fn pull_data<const EXTRAS: bool>(
        &mut self,
        ctx: &mut Ctx,
        fabric: &mut Fabric,
        h: u32,
        port: PortId,
    ) -> Option<Desc> {
        let now = ctx.now;
        let host = self.hosts.at(h as usize);
        // (Without the extras a NIC has one port, which carries data.)
        debug_assert!(
            EXTRAS || port == host.port,
            "a NIC of several ports in a plain run"
        );
        if EXTRAS && port.0.wrapping_sub(host.port.0 + self.data_rails.0) >= self.data_rails.1 {
            return None;
        }
        let dp = ctx.params.data_prio as usize;
        if fabric.ports.at(port).is_paused(dp, now) {
            let t = fabric.ports.at(port).paused_until(dp);
            if !host.active.is_empty() {
                fabric.schedule_wake(ctx, port, t);
            }
            return None;
        }
        let mut earliest = Time::MAX;
        // Flows that have sent every byte are not visited at all (see round_robin.rs).
        let mut pick = None;
        for i in host.active.sendable_from_cursor() {
            let fid = host.active.fid(i);
            let f = self.flows.at(fid as usize);
            debug_assert!(f.snd_nxt < f.spec.size);
            if let Some(w) = f.cc.window() {
                if f.snd_nxt - f.snd_una >= w {
                    continue;
                }
            }
            if f.next_send > now {
                earliest = earliest.min(f.next_send);
                continue;
            }
            pick = Some((i, fid));
            break;
        }
        if let Some((i, fid)) = pick {
            if EXTRAS && fabric.ports[port].credit_gated() {
                // The packet leaves only with credits for all of it; their return wakes
                // the port.
                let f = self.flows.at(fid as usize);
                let payload = f.frame_payload(ctx.params.mtu).min(f.spec.size - f.snd_nxt);
                let wire = payload + frame_headers(payload, ctx.params.mtu, ctx.params.header);
                if !fabric.take_credit_turn(port, dp, wire, now) {
                    return None;
                }
            }
            self.hosts[h as usize].active.served(i);
            let d = self.make_data::<EXTRAS>(ctx, fabric, fid, port);
            let f = self.flows.at(fid as usize);
            let sendable = f.snd_nxt < f.spec.size;
            self.hosts[h as usize].active.set_sendable(i, sendable);
            debug_assert!(EXTRAS || self.qp_burst == 0, "QP bursts in a plain run");
            if EXTRAS && self.qp_burst != 0 {
                self.continue_turn(h, i, fid, sendable, ctx.params.mtu);
            }
            if !sendable {
                // After the round robin's own update: a flow started here may compact it.
                self.on_all_sent(ctx, fabric, fid);
            }
            return Some(d);
        }
        if earliest != Time::MAX {
            fabric.schedule_wake(ctx, port, earliest);
        }
        None
    }

    pub(crate) fn make_data<const EXTRAS: bool>(
        &mut self,
        ctx: &mut Ctx,
        fabric: &mut Fabric,
        fid: u32,
        port: PortId,
    ) -> Desc {
        let now = ctx.now;
        let rp = &ctx.params;
        // The pacer runs at the NIC's data rate: its ports' together on several rails.
        debug_assert!(EXTRAS || self.data_rails == (0, 1), "rails in a plain run");
        let rails = if EXTRAS { self.data_rails.1 } else { 1 };
        let line = Rate(fabric.ports[port].rate.0 * rails as u64);
        let f = self.flows.at_mut(fid as usize);
        let payload = f.payload_at(f.snd_nxt, rp.mtu);
        debug_assert!(EXTRAS || !f.cc.wants_int(), "INT in a plain run");
        let int = EXTRAS && f.cc.wants_int();
        let wire = payload
            + frame_headers(payload, rp.mtu, rp.header)
            + if int { rp.int_nic_bytes as u64 } else { 0 };
        let pkt = Packet::new(
            Payload::Data {
                flow: FlowId(fid),
                seq: f.snd_nxt,
            },
            now,
        );
        let hdr = Header {
            dst: f.spec.dst,
            hash: f.hash,
            wire: wire as u32,
            prio: rp.data_prio,
            ecn: ECN_ECT,
            mark: 0,
            flags: if int { FLAG_INT } else { 0 },
        };
        if f.snd_nxt < f.high_sent {
            f.retx_bytes += payload;
        }
        f.snd_nxt += payload;
        if f.snd_nxt > f.high_sent {
            f.high_sent = f.snd_nxt;
            if f.high_sent >= f.spec.size && f.all_sent_at == Time::MAX {
                f.all_sent_at = now;
            }
        }
        f.data_pkts_sent += 1;
        f.cc.on_send(now, wire);
        let rate = f.cc.rate_bps();
        f.next_send = if rate >= line.0 as f64 {
            now + line.tx_time(wire)
        } else {
            now + ser_time_f(wire, rate)
        };
        if !f.rto_pending {
            f.rto_pending = true;
            f.rto_deadline = now + rp.rto;
            ctx.queue.push(f.rto_deadline, Event::Rto(FlowId(fid)));
        }
        ctx.counters.data_sent += 1;
        let d = ctx.arena.alloc_desc(pkt, hdr);
        if int {
            fabric.telemetry.int[ctx.shard as usize].slot(d.id).n = 0;
        }
        d
    }

    /// Sends `payload` (ACK, NACK or CNP) back to the sender of data packet `data`, which
    /// arrived with header `hdr`; an ACK of a segment stands for `acks` ACKs.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    pub(crate) fn send_feedback<const EXTRAS: bool>(
        &mut self,
        ctx: &mut Ctx,
        fabric: &mut Fabric,
        port: PortId,
        payload: Payload,
        data: &Packet,
        hdr: Header,
        acks: u32,
    ) {
        // One match for both (once per data packet received).
        let (kind, flow) = match payload {
            Payload::Ack { flow, .. } => (PacketKind::Ack, flow),
            Payload::Nack { flow, .. } => (PacketKind::Nack, flow),
            Payload::Cnp { flow, .. } => (PacketKind::Cnp, flow),
            _ => unreachable!("feedback is an ACK, a NACK or a CNP"),
        };
        // The flow's own hash, not the arriving header's: a GSP rewrites that to spray
        // containers, while the reverse path keeps to the flow's.
        let hash = self.flows.at(flow).hash;
        let mut p = Packet::new(payload, data.sent_at());
        p.set_echo(hdr.ecn == ECN_CE);
        let mut h = Header {
            // Back to the flow's sender (`data` is the flow's data packet).
            dst: self.flows.at(flow).spec.src,
            hash: ecmp::mix32(hash ^ 0x5bd1_e995),
            // An ACK of a segment carries the bytes of the ACKs its packets would have
            // drawn (`acks`), so that the reverse path's load is that of packets.
            wire: ctx.params.ack_size * acks,
            prio: ctx.params.feedback_prio,
            ecn: 0,
            mark: hdr.mark,
            flags: 0,
        };
        let int = EXTRAS && kind == PacketKind::Ack && hdr.flags & FLAG_INT != 0;
        if int {
            h.flags = FLAG_INT;
            // The fixed-size header, or the records the data packet collected.
            h.wire += match ctx.params.int_nic_bytes {
                0 => INT_BYTES_PER_HOP * fabric.telemetry.int[ctx.shard as usize].rx.n as u32,
                fixed => fixed,
            };
        }
        let d = ctx.arena.alloc_desc(p, h);
        if int {
            let int = &mut fabric.telemetry.int[ctx.shard as usize];
            let rx = int.rx;
            *int.slot(d.id) = rx;
        }
        let (pr, pool) = fabric.port_and_pool(port.idx());
        // The NIC's queue of the frame's own priority: either way it leaves before the
        // data (which the NIC pulls from its flows only when no frame waits), and at the
        // data priority it also obeys that priority's pause, as the ns-3 module's NIC
        // ACK queue does; sending into a paused priority would overrun the headroom.
        let prio = ctx.params.feedback_prio as usize;
        pr.enqueue(pool, prio, d, ctx.now);
        match kind {
            PacketKind::Ack => ctx.counters.acks += 1,
            PacketKind::Nack => ctx.counters.nacks += 1,
            PacketKind::Cnp => ctx.counters.cnps += 1,
            _ => {}
        }
        // The port is mostly sending the host's own data, its wakeup set for the frame's
        // end: the frame waits for it, as `try_transmit` would find.
        let pr = fabric.ports.at(port);
        if pr.wakes_at_frame_end(ctx.now) {
            return;
        }
        let NodeKind::Host(from_host) = pr.owner() else {
            unreachable!("feedback leaves by a NIC port")
        };
        self.try_transmit::<EXTRAS>(ctx, fabric, from_host, port);
    }

    /// Starts the next transmission on port `port` of NIC `h` if it is free: frames queued
    /// there (feedback) first, then a data packet pulled from the NIC's flows.
    pub(crate) fn try_transmit<const EXTRAS: bool>(
        &mut self,
        ctx: &mut Ctx,
        fabric: &mut Fabric,
        h: u32,
        port: PortId,
    ) {
        let pkt = match fabric.next_frame::<false, EXTRAS>(ctx, port) {
            NextFrame::Frame(pkt) => pkt,
            NextFrame::Busy => return,
            NextFrame::Empty => match self.pull_data::<EXTRAS>(ctx, fabric, h, port) {
                Some(pkt) => pkt,
                None => return fabric.wake_at_unpause(ctx, port),
            },
        };
        // Wake at the frame's end to pull more only if a flow has bytes to send: one that
        // has sent them all becomes sendable again only by a rewind (a NACK, a timeout),
        // which wakes the NIC itself, and the wakeup would find nothing (at k = 16, 2.5 %
        // of the benchmark's events, each receiver's ACKs after its own flow sent its
        // last byte).
        let has_flows = self.hosts.at(h as usize).active.has_sendable();
        fabric.transmit::<EXTRAS>(ctx, port, pkt, has_flows);
    }

    /// Packet `pkt` reached a NIC on its port `port`. Always inlined, as
    /// `Fabric::on_link_arrive` is: two dispatchers call it.
    #[inline(always)]
    pub(crate) fn host_receive<const EXTRAS: bool>(
        &mut self,
        ctx: &mut Ctx,
        fabric: &mut Fabric,
        port: PortId,
        pkt: Desc,
    ) {
        let p = ctx.arena.get(pkt.id, pkt.kind(), ctx.now);
        let hdr = pkt.header();
        if EXTRAS && hdr.flags & FLAG_INT != 0 {
            fabric.telemetry.int[ctx.shard as usize].receive(pkt.id);
        }
        ctx.arena.release(pkt.id);
        match p.payload {
            Payload::Data { .. } => self.on_data::<EXTRAS>(ctx, fabric, port, &p, hdr),
            Payload::Ack { .. } | Payload::Nack { .. } => {
                self.on_ack::<EXTRAS>(ctx, fabric, &p, hdr)
            }
            Payload::Cnp { flow, by_dr } => {
                let f = &mut self.flows[flow];
                f.first_cnp_at = f.first_cnp_at.min(ctx.now);
                if by_dr {
                    f.dr_cnps_received += 1;
                    f.dr_cnp_delay_max = f.dr_cnp_delay_max.max(ctx.now - p.sent_at());
                }
                f.cc.on_cnp(ctx.now);
            }
            Payload::Collective { .. } => {
                let NodeKind::Host(h) = fabric.ports[port].owner() else {
                    unreachable!("a NIC port")
                };
                self.on_collective_packet(ctx, fabric, h, &p)
            }
            Payload::Pause(_) | Payload::Request { .. } | Payload::Grant { .. } => {}
        }
    }

    /// Data packet `p` (header `hdr`) reached its NIC on port `port` (feedback goes back
    /// by the same port: with several planes, the plane the data came through).
    #[inline(always)] // two dispatchers call it (see `Fabric::on_link_arrive`)
    pub(crate) fn on_data<const EXTRAS: bool>(
        &mut self,
        ctx: &mut Ctx,
        fabric: &mut Fabric,
        port: PortId,
        p: &Packet,
        hdr: Header,
    ) {
        let Payload::Data { flow, seq } = p.payload else {
            unreachable!("a data descriptor holds data")
        };
        let now = ctx.now;
        ctx.counters.data_arrived += 1;
        let fid = flow.0;
        let f = self.flows.at_mut(fid as usize);
        f.data_pkts_arrived += 1;
        let cnp_flag = hdr.ecn == ECN_CE && self.receiver_cnp && f.cc.wants_cnp();
        if cnp_flag && !ctx.params.cnp_on_ack {
            let interval = f.cc.cnp_interval();
            if now >= f.next_cnp {
                f.next_cnp = now + interval;
                f.cnps_sent += 1;
                self.send_feedback::<EXTRAS>(
                    ctx,
                    fabric,
                    port,
                    Payload::Cnp { flow, by_dr: false },
                    p,
                    hdr,
                    1,
                );
            } else if !f.cnp_pending {
                f.cnp_pending = true;
                let t = f.next_cnp;
                ctx.queue.push(t, Event::CnpTimer(FlowId(fid)));
            }
        }
        let f = self.flows.at_mut(fid as usize);
        let unacked = f.unacked_pkts;
        let bytes = f.payload_at(seq, ctx.params.mtu) as u32;
        let rx = self.transport.on_data(f, seq, bytes);
        // The ACKs the packets of an in-order segment would have drawn (one ACK per
        // `ack_every` packets, the last packet's at least).
        let acks = if f.segment == 0 || !rx.in_order {
            1
        } else {
            let pkts = u64::from(bytes).div_ceil(ctx.params.mtu) as u32;
            ((unacked + pkts) / ctx.params.ack_every.max(1)).max(1)
        };
        if rx.in_order {
            ctx.tally.last_progress = now;
        }
        if cnp_flag && ctx.params.cnp_on_ack && !matches!(rx.reply, RxReply::Nothing) {
            // The answering ACK or NACK echoes the CE mark (`Packet::echo`), which the
            // sender reads as the CNP.
            f.cnps_sent += 1;
            ctx.counters.cnps += 1;
        }
        let reply = match rx.reply {
            RxReply::Nothing => None,
            RxReply::Ack(seq) => Some((Payload::Ack { flow, seq }, acks)),
            RxReply::Nack(seq) => Some((Payload::Nack { flow, seq }, 1)),
        };
        if let Some((payload, n)) = reply {
            self.send_feedback::<EXTRAS>(ctx, fabric, port, payload, p, hdr, n);
        }
        if rx.completed {
            let f = self.flows.at_mut(fid as usize);
            // The receiver's last ACK is on its way: the run waits for it, so that every
            // flow has its sender-side FCT (`Tally::acks_awaited`; the sender's half is
            // not read here, it may run elsewhere).
            f.finish = Some(now);
            ctx.tally.flows_done += 1;
            ctx.tally.last_flow_done = now;
            self.on_flow_finished(ctx, fabric, fid);
        }
    }

    /// The receiver's CNP pacing timer of flow `fid`: send the CNP it held back.
    pub(crate) fn on_cnp_timer(&mut self, ctx: &mut Ctx, fabric: &mut Fabric, fid: FlowId) {
        let fid = fid.0;
        let now = ctx.now;
        let f = self.flows.at_mut(fid as usize);
        let interval = f.cc.cnp_interval();
        if !f.cnp_pending {
            return;
        }
        f.cnp_pending = false;
        f.next_cnp = now + interval;
        f.cnps_sent += 1;
        // A CNP carries only the flow; build it from a template of the flow's data.
        let flow = FlowId(fid);
        let tmpl = Packet::new(Payload::Data { flow, seq: 0 }, 0);
        let hdr = Header {
            dst: f.spec.dst,
            ..Header::default()
        };
        let h = f.spec.dst;
        let port = self.hosts[h as usize].port;
        self.send_feedback::<true>(
            ctx,
            fabric,
            port,
            Payload::Cnp { flow, by_dr: false },
            &tmpl,
            hdr,
            1,
        );
    }

    /// A cumulative ACK or a NACK `p` with header `hdr` reached the sending NIC.
    #[inline(always)] // two dispatchers call it (see `Fabric::on_link_arrive`)
    pub(crate) fn on_ack<const EXTRAS: bool>(
        &mut self,
        ctx: &mut Ctx,
        fabric: &mut Fabric,
        p: &Packet,
        hdr: Header,
    ) {
        let (flow, seq, nack) = match p.payload {
            Payload::Ack { flow, seq } => (flow, seq, false),
            Payload::Nack { flow, seq } => (flow, seq, true),
            _ => unreachable!("an ACK or NACK descriptor"),
        };
        let now = ctx.now;
        let rto = ctx.params.rto;
        let fid = flow.0;
        let f = self.flows.at_mut(fid as usize);
        if ctx.params.cnp_on_ack && p.echo() != 0 && f.cc.wants_cnp() {
            f.cc.on_cnp(now);
        }
        let mut wake = false;
        let was_all_sent = f.snd_nxt >= f.spec.size;
        let newly = self.transport.on_cumulative_ack(f, seq);
        if newly > 0 {
            let (mtu, overhead) = (ctx.params.mtu, ctx.params.header);
            let wire = |b: u64| b + b.div_ceil(mtu) * overhead;
            let info = AckInfo {
                newly_acked: newly,
                ack_seq: seq,
                ecn_echo: p.echo(),
                rtt: now.saturating_sub(p.sent_at()),
                mark: TcdMark::from_bits(hdr.mark),
                newly_acked_wire: wire(newly),
                inflight_wire: wire(f.snd_nxt - f.snd_una),
                snd_nxt: f.snd_nxt,
            };
            match info.mark {
                TcdMark::Ce => f.ce_acks += 1,
                TcdMark::Ue => f.ue_acks += 1,
                TcdMark::None => {}
            }
            let held = f.cc.hold_until().filter(|&t| t > now);
            f.cc.on_ack(now, &info);
            if EXTRAS && hdr.flags & FLAG_INT != 0 {
                let rx = &fabric.telemetry.int[ctx.shard as usize].rx;
                f.cc.on_ack_int(now, &info, &rx.hops[..rx.n as usize]);
            }
            let hold = f.cc.hold_until();
            if let Some(t) = hold {
                if t > f.next_send {
                    f.next_send = t;
                }
            }
            if let Some(h) = held {
                // The halt ended before its planned end (the ACK stream showed the excess
                // drained): the flow may send again from now, not from the old end.
                let until = hold.unwrap_or(now).max(now);
                if until < h && f.next_send == h {
                    f.next_send = until;
                    wake = true;
                }
            }
            f.rto_deadline = now + rto;
            wake |= f.cc.window().is_some();
        }
        if nack && self.transport.on_nack(f, seq) {
            wake = true;
        }
        // A rewind (NACK) or an ACK beyond what was sent changes the round robin's flag.
        let all_sent = f.snd_nxt >= f.spec.size;
        if all_sent != was_all_sent {
            let src = f.spec.src as usize;
            self.hosts[src].active.set_sendable(f.rr_slot, !all_sent);
        }
        let f = self.flows.at_mut(fid as usize);
        if f.snd_una >= f.spec.size && f.sender_done.is_none() {
            debug_assert!(f.finish.is_some(), "a sender finished before its receiver");
            f.sender_done = Some(now);
            ctx.tally.senders_done += 1;
            let h = f.spec.src as usize;
            self.hosts[h].active.remove(f.rr_slot);
            // A place in flight is free: the next message waiting for one goes.
            if let Some(next) = self.engines.as_mut().and_then(|e| e.waiting[h].pop_front()) {
                let posted = self.flows[next as usize].spec.start;
                self.begin_flow(ctx, fabric, next, posted);
            }
        }
        if wake {
            let src = self.flows[fid as usize].spec.src;
            self.wake_nic(ctx, fabric, src, now);
        }
    }
}
