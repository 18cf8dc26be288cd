//! The NIC: it pulls data from its active flows round robin when its port is free
//! (paced by each flow's congestion controller, within its window), answers data with
//! ACKs, NACKs and CNPs, and feeds what comes back to the transport state machine
//! ([`crate::transport::NicTransport`]) and the flow's controller. Timers (RTO, CNP
//! pacing) are lazy: a deadline moves freely and one pending event re-arms itself.

use crate::cc::{AckInfo, CongestionControl};
use crate::engine::Event;
use crate::packet::{Desc, Packet, PacketKind, ECN_CE, ECN_ECT, FLAG_INT};
use crate::routing::ecmp;
use crate::telemetry::int::INT_BYTES_PER_HOP;
use crate::telemetry::tcd::TcdMark;
use crate::units::{ser_time_f, Time};

use crate::ids::FlowId;
use crate::packet::{Header, Payload};
use crate::sim::*;
use crate::transport::RxReply;

impl Simulation {
    /// The retransmission timer of flow `fid` fired (it may have been pushed back since).
    pub(crate) fn on_rto(&mut self, fid: FlowId) {
        let fid = fid.0;
        let now = self.ctx.now;
        let rto = self.ctx.params.rto;
        let f = &mut self.nics.flows[fid as usize];
        if f.sender_done.is_some() {
            f.rto_pending = false;
            return;
        }
        if now < f.rto_deadline {
            self.ctx.queue.push(f.rto_deadline, Event::Rto(FlowId(fid)));
            return;
        }
        if self.nics.transport.on_timeout(f) {
            f.rto_deadline = now + rto;
            self.ctx.queue.push(f.rto_deadline, Event::Rto(FlowId(fid)));
            let port = self.nics.hosts[f.spec.src as usize].port.0;
            self.schedule_wake(port, now);
        } else {
            f.rto_pending = false;
        }
    }

    /// The NIC picks the next data packet, round robin over flows whose pacer allows.
    pub(crate) fn pull_data(&mut self, h: u32) -> Option<Desc> {
        let now = self.ctx.now;
        let host = &self.nics.hosts[h as usize];
        let port = host.port.0;
        let dp = self.ctx.params.data_prio as usize;
        if self.fabric.ports[port as usize].is_paused(dp, now) {
            let t = self.fabric.ports[port as usize].paused_until(dp);
            if !host.active.is_empty() {
                self.schedule_wake(port, t);
            }
            return None;
        }
        let n = host.active.len();
        let mut earliest = Time::MAX;
        for k in 0..n {
            let i = (self.nics.hosts[h as usize].rr + k) % n;
            let fid = self.nics.hosts[h as usize].active[i];
            let f = &self.nics.flows[fid as usize];
            if f.snd_nxt >= f.spec.size {
                continue;
            }
            if let Some(w) = f.cc.window() {
                if f.snd_nxt - f.snd_una >= w {
                    continue;
                }
            }
            if f.next_send > now {
                earliest = earliest.min(f.next_send);
                continue;
            }
            self.nics.hosts[h as usize].rr = i + 1;
            return Some(self.make_data(fid, port));
        }
        if earliest != Time::MAX {
            self.schedule_wake(port, earliest);
        }
        None
    }

    pub(crate) fn make_data(&mut self, fid: u32, port: u32) -> Desc {
        let now = self.ctx.now;
        let rp = &self.ctx.params;
        let line = self.fabric.ports[port as usize].rate;
        let f = &mut self.nics.flows[fid as usize];
        let payload = rp.mtu.min(f.spec.size - f.snd_nxt);
        let wire = payload + rp.header;
        let pkt = Packet::new(
            Payload::Data {
                flow: FlowId(fid),
                seq: f.snd_nxt,
                bytes: payload as u32,
            },
            f.spec.src,
            now,
        );
        let hdr = Header {
            dst: f.spec.dst,
            hash: f.hash,
            wire: wire as u32,
            prio: rp.data_prio,
            ecn: ECN_ECT,
            mark: 0,
            flags: if f.cc.wants_int() { FLAG_INT } else { 0 },
        };
        if f.snd_nxt < f.high_sent {
            f.retx_bytes += payload;
        }
        f.snd_nxt += payload;
        f.high_sent = f.high_sent.max(f.snd_nxt);
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
            self.ctx.queue.push(f.rto_deadline, Event::Rto(FlowId(fid)));
        }
        self.ctx.counters.data_sent += 1;
        let d = self.ctx.arena.alloc_desc(pkt, hdr);
        if hdr.flags & FLAG_INT != 0 {
            self.fabric.telemetry.int.slot(d.id).n = 0;
        }
        d
    }

    /// Sends `payload` (ACK, NACK or CNP) back to the sender of data packet `data`, which
    /// arrived with header `hdr`.
    pub(crate) fn send_feedback(
        &mut self,
        from_host: u32,
        payload: Payload,
        data: &Packet,
        hdr: Header,
    ) {
        let kind = payload.kind();
        // The flow's own hash, not the arriving header's: a GSP rewrites that to spray
        // containers, while the reverse path keeps to the flow's.
        let flow = payload.flow().expect("feedback belongs to a flow");
        let hash = self.nics.flows[flow].hash;
        let mut p = Packet::new(payload, hdr.dst, data.sent_at);
        p.echo = (hdr.ecn == ECN_CE) as u8;
        let mut h = Header {
            dst: data.src,
            hash: ecmp::mix32(hash ^ 0x5bd1_e995),
            wire: self.ctx.params.ack_size,
            prio: self.ctx.params.ctrl_prio,
            ecn: 0,
            mark: hdr.mark,
            flags: 0,
        };
        let int = kind == PacketKind::Ack && hdr.flags & FLAG_INT != 0;
        if int {
            h.flags = FLAG_INT;
            h.wire += INT_BYTES_PER_HOP * self.fabric.telemetry.int.rx.n as u32;
        }
        let d = self.ctx.arena.alloc_desc(p, h);
        if int {
            let rx = self.fabric.telemetry.int.rx;
            *self.fabric.telemetry.int.slot(d.id) = rx;
        }
        let port = self.nics.hosts[from_host as usize].port.0;
        let pr = &mut self.fabric.ports[port as usize];
        let prio = self.ctx.params.ctrl_prio as usize;
        pr.enqueue(prio, d, self.ctx.now);
        match kind {
            PacketKind::Ack => self.ctx.counters.acks += 1,
            PacketKind::Nack => self.ctx.counters.nacks += 1,
            PacketKind::Cnp => self.ctx.counters.cnps += 1,
            _ => {}
        }
        self.try_transmit(port);
    }

    pub(crate) fn host_receive(&mut self, h: u32, pkt: Desc) {
        let p = *self.ctx.arena.get(pkt.id);
        let hdr = pkt.header();
        if hdr.flags & FLAG_INT != 0 {
            self.fabric.telemetry.int.receive(pkt.id);
        }
        self.ctx.arena.release(pkt.id);
        match p.payload {
            Payload::Data { flow, seq, bytes } => self.on_data(h, &p, hdr, flow, seq, bytes),
            Payload::Ack { flow, seq } => self.on_ack(&p, hdr, flow, seq, false),
            Payload::Nack { flow, seq } => self.on_ack(&p, hdr, flow, seq, true),
            Payload::Cnp { flow } => {
                let f = &mut self.nics.flows[flow];
                f.cc.on_cnp(self.ctx.now);
            }
            Payload::Pause(_) | Payload::Request { .. } | Payload::Grant { .. } => {}
        }
    }

    /// Data packet `p` (header `hdr`) of `flow`: `bytes` at `seq` reached its NIC `h`.
    pub(crate) fn on_data(
        &mut self,
        h: u32,
        p: &Packet,
        hdr: Header,
        flow: FlowId,
        seq: u64,
        bytes: u32,
    ) {
        let now = self.ctx.now;
        self.ctx.counters.data_arrived += 1;
        let fid = flow.0;
        let f = &mut self.nics.flows[fid as usize];
        f.data_pkts_arrived += 1;
        if hdr.ecn == ECN_CE && f.cc.wants_cnp() {
            let interval = f.cc.cnp_interval();
            if now >= f.next_cnp {
                f.next_cnp = now + interval;
                f.cnps_sent += 1;
                self.send_feedback(h, Payload::Cnp { flow }, p, hdr);
            } else if !f.cnp_pending {
                f.cnp_pending = true;
                let t = f.next_cnp;
                self.ctx.queue.push(t, Event::CnpTimer(FlowId(fid)));
            }
        }
        let f = &mut self.nics.flows[fid as usize];
        let rx = self.nics.transport.on_data(f, seq, bytes);
        if rx.in_order {
            self.nics.last_progress = now;
        }
        match rx.reply {
            RxReply::Nothing => {}
            RxReply::Ack(seq) => self.send_feedback(h, Payload::Ack { flow, seq }, p, hdr),
            RxReply::Nack(seq) => self.send_feedback(h, Payload::Nack { flow, seq }, p, hdr),
        }
        if rx.completed {
            self.nics.flows[fid as usize].finish = Some(now);
            self.nics.flows_done += 1;
            self.on_flow_finished(fid);
        }
    }

    /// The receiver's CNP pacing timer of flow `fid`: send the CNP it held back.
    pub(crate) fn on_cnp_timer(&mut self, fid: FlowId) {
        let fid = fid.0;
        let now = self.ctx.now;
        let f = &mut self.nics.flows[fid as usize];
        let interval = f.cc.cnp_interval();
        if !f.cnp_pending {
            return;
        }
        f.cnp_pending = false;
        f.next_cnp = now + interval;
        f.cnps_sent += 1;
        // A CNP carries only the flow; build it from a template of the flow's data.
        let flow = FlowId(fid);
        let tmpl = Packet::new(
            Payload::Data {
                flow,
                seq: 0,
                bytes: 0,
            },
            f.spec.src,
            0,
        );
        let hdr = Header {
            dst: f.spec.dst,
            ..Header::default()
        };
        let h = f.spec.dst;
        self.send_feedback(h, Payload::Cnp { flow }, &tmpl, hdr);
    }

    /// A cumulative ACK (or, with `nack`, a NACK) `p` with header `hdr`.
    pub(crate) fn on_ack(&mut self, p: &Packet, hdr: Header, flow: FlowId, seq: u64, nack: bool) {
        let now = self.ctx.now;
        let rto = self.ctx.params.rto;
        let fid = flow.0;
        let f = &mut self.nics.flows[fid as usize];
        let mut wake = false;
        let newly = self.nics.transport.on_cumulative_ack(f, seq);
        if newly > 0 {
            let (mtu, overhead) = (self.ctx.params.mtu, self.ctx.params.header);
            let wire = |b: u64| b + b.div_ceil(mtu) * overhead;
            let info = AckInfo {
                newly_acked: newly,
                ack_seq: seq,
                ecn_echo: p.echo,
                rtt: now.saturating_sub(p.sent_at),
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
            f.cc.on_ack(now, &info);
            if hdr.flags & FLAG_INT != 0 {
                let n = self.fabric.telemetry.int.rx.n as usize;
                f.cc.on_ack_int(now, &info, &self.fabric.telemetry.int.rx.hops[..n]);
            }
            if let Some(t) = f.cc.hold_until() {
                if t > f.next_send {
                    f.next_send = t;
                }
            }
            f.rto_deadline = now + rto;
            wake = f.cc.window().is_some();
        }
        if nack && self.nics.transport.on_nack(f, seq) {
            wake = true;
        }
        if f.snd_una >= f.spec.size && f.sender_done.is_none() {
            f.sender_done = Some(now);
            let h = f.spec.src as usize;
            self.nics.hosts[h].active.retain(|&x| x != fid);
        }
        if wake {
            let port = self.nics.hosts[self.nics.flows[fid as usize].spec.src as usize]
                .port
                .0;
            self.schedule_wake(port, now);
        }
    }
}
