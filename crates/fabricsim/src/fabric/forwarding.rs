//! Switch forwarding.

use crate::fabric::buffer::Admission;
use crate::fabric::NodeKind;
use crate::packet::{Desc, PacketKind, ECN_CE, ECN_ECT, FLAG_ROUTED};
use crate::routing::LbAlgorithm;
use crate::routing::{ecmp, spray};
use rand::Rng;

use crate::sim::*;

impl Simulation {
    /// Switch `s`'s ECMP egress towards host `dst` for flow hash `hash`; `None` when `s`
    /// has no route there.
    #[inline(always)]
    pub(crate) fn ecmp_egress(&self, s: u32, dst: u32, hash: u32) -> Option<u32> {
        let c = self.routing.lookup(s, dst);
        let k = match c.len {
            0 => return None,
            1 => 0,
            n => ecmp::pick(hash, self.switches[s as usize].salt, n as usize),
        };
        Some(self.routing.port_of(c, k))
    }

    pub(crate) fn switch_receive(&mut self, s: u32, in_port: u32, mut pkt: Desc) {
        if pkt.flags & FLAG_ROUTED != 0 {
            pkt.flags &= !FLAG_ROUTED;
            let egress = in_port.wrapping_add(pkt.in_port as i16 as u32);
            self.forward(s, in_port, pkt, egress);
            return;
        }
        if self.gse.is_some() && self.gsp_receive(s, in_port, pkt) {
            return;
        }
        let (dst, hash) = (pkt.dst, pkt.hash);
        let sw = &mut self.switches[s as usize];
        let cands = self.routing.lookup(s, dst);
        let n = cands.len as usize;
        if n == 0 {
            self.drop_packet(pkt, in_port, s);
            return;
        }
        let k = if n == 1 {
            0
        } else {
            match self.params.lb {
                LbAlgorithm::Ecmp | LbAlgorithm::Pktc => ecmp::pick(hash, sw.salt, n),
                LbAlgorithm::SprayRandom => spray::pick_random(&mut sw.rng, n),
                LbAlgorithm::SprayRr => spray::pick_rr(&mut sw.rr, n),
            }
        };
        let egress = self.routing.port_of(cands, k);
        self.forward(s, in_port, pkt, egress);
    }

    /// Admits `pkt` (arrived on `in_port`) to switch `s`'s buffer and queues it on
    /// `egress`; pauses the ingress if the buffer says so.
    #[inline]
    pub(crate) fn forward(&mut self, s: u32, in_port: u32, mut pkt: Desc, egress: u32) {
        let (prio, wire) = (pkt.prio as usize, pkt.wire as u64);
        let sw = &mut self.switches[s as usize];
        let local_in = (in_port - sw.first_port) as usize;
        if sw.buffer.admit(local_in, prio, wire) == Admission::Dropped {
            self.ports[egress as usize].stats.drops += 1;
            self.drop_packet(pkt, in_port, s);
            return;
        }
        pkt.in_port = local_in as u16;
        let now = self.now;
        let e = &mut self.ports[egress as usize];
        if in_port != egress && e.can_pass_through(prio, now) {
            // The packet would be queued and dequeued at once: skip the queue (whose
            // enqueue and dequeue cancel out) and leave straight from here.
            e.pass_through(wire);
            self.after_admit(s, in_port, local_in, prio);
            self.on_switch_dequeue(egress, &mut pkt);
            self.transmit(egress, pkt);
            return;
        }
        e.enqueue(prio, pkt, now);
        self.after_admit(s, in_port, local_in, prio);
        self.try_transmit(egress);
    }

    pub(crate) fn drop_packet(&mut self, pkt: Desc, _in_port: u32, s: u32) {
        if pkt.kind == PacketKind::Data {
            let flow = self.arena.get(pkt.id).flow;
            self.flows[flow as usize].data_pkts_dropped += 1;
        }
        self.switches[s as usize].drops += 1;
        self.counters.drops += 1;
        self.arena.release(pkt.id);
    }

    pub(crate) fn on_switch_dequeue(&mut self, port: u32, pkt: &mut Desc) {
        let NodeKind::Switch(s) = self.ports[port as usize].owner() else {
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
            let local_out = (port - sw.first_port) as usize;
            let q = self.ports[port as usize].queues[prio].bytes;
            let prob = sw.ecn[local_out].probability(q);
            if prob > 0.0 && (prob >= 1.0 || sw.rng.gen::<f64>() < prob) {
                pkt.ecn = ECN_CE;
                self.ports[port as usize].stats.ecn_marked += 1;
                self.counters.ecn_marks += 1;
            }
        }
        if kind == PacketKind::Data {
            let now = self.now;
            self.telemetry.on_data_dequeue(
                now,
                port,
                &mut self.ports[port as usize],
                prio,
                wire,
                pkt,
            );
        }
        self.after_release(s, local_in, prio);
    }
}
