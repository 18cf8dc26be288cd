//! Egress: starting transmissions on ports.
//!
//! A port sends PFC frames first, then the highest non-empty unpaused priority queue,
//! and a NIC port with nothing queued pulls a data packet from its flows. A transmission
//! occupies the port for the frame's serialization time and puts the packet on the link
//! with its arrival time; a busy port keeps one wakeup for the end of its frame.

use crate::engine::Event;
use crate::fabric::NodeKind;
use crate::ids::PortId;
use crate::packet::{Desc, PacketKind, FLAG_ROUTED};
use crate::units::Time;

use crate::sim::*;

impl Simulation {
    #[inline]
    pub(crate) fn schedule_wake(&mut self, port: u32, t: Time) {
        let p = &mut self.fabric.ports[port as usize];
        if p.wake_at <= t && p.wake_at >= self.ctx.now {
            return;
        }
        p.wake_at = t;
        self.ctx.queue.push(t, Event::PortWake(PortId(port)));
    }

    pub(crate) fn try_transmit(&mut self, port: u32) {
        let now = self.ctx.now;
        let pi = port as usize;
        if self.fabric.ports[pi].busy_until > now {
            let b = self.fabric.ports[pi].busy_until;
            self.schedule_wake(port, b);
            return;
        }
        let pkt = if let Some(p) = self.fabric.ports[pi].pop_ctrl() {
            p
        } else if let Some(prio) = self.fabric.ports[pi].next_queue(now) {
            let mut d = self.fabric.ports[pi].dequeue_head(prio, now);
            if matches!(self.fabric.ports[pi].owner(), NodeKind::Switch(_)) {
                self.on_switch_dequeue(port, &mut d);
            }
            d
        } else if let NodeKind::Host(h) = self.fabric.ports[pi].owner() {
            match self.pull_data(h) {
                Some(p) => p,
                None => {
                    if let Some(t) = self.fabric.ports[pi].earliest_unpause(now) {
                        self.schedule_wake(port, t);
                    }
                    return;
                }
            }
        } else {
            if let Some(t) = self.fabric.ports[pi].earliest_unpause(now) {
                self.schedule_wake(port, t);
            }
            return;
        };
        self.transmit(port, pkt);
    }

    #[inline]
    pub(crate) fn transmit(&mut self, port: u32, pkt: Desc) {
        let now = self.ctx.now;
        let pi = port as usize;
        let wire = pkt.wire as u64;
        let port_ref = &mut self.fabric.ports[pi];
        let extra = if pkt.kind == PacketKind::Pause {
            0
        } else {
            port_ref.sec_extra as u64
        };
        let d = port_ref.tx_time(wire + extra);
        port_ref.busy_until = now + d;
        port_ref.tx_bytes += wire + extra;
        port_ref.tx_packets += 1;
        let (to, to_port) = (self.fabric.links[pi].to, self.fabric.links[pi].to_port.0);
        let mut pkt = pkt;
        if self.fabric.route_ahead && pkt.kind != PacketKind::Pause {
            if let NodeKind::Switch(s) = to {
                // The receiving switch's ECMP choice, made now: the same port it would
                // pick on arrival, but off the arrival's chain of dependent loads.
                if let Some(egress) = self.ecmp_egress(s, pkt.dst, pkt.hash) {
                    let off = egress.wrapping_sub(to_port) as i32;
                    if off as i16 as i32 == off {
                        pkt.in_port = off as u16;
                        pkt.flags |= FLAG_ROUTED;
                    }
                }
            }
        }
        let link = &mut self.fabric.links[pi];
        let arrival = now + d + link.delay;
        if link.put(arrival, pkt) {
            self.ctx
                .queue
                .push(arrival, Event::LinkArrive(PortId(port).link()));
        }
        let p = &self.fabric.ports[pi];
        let more = p.ctrl_len() != 0
            || p.has_queued()
            || matches!(p.owner(), NodeKind::Host(h) if !self.nics.hosts[h as usize].active.is_empty());
        if more {
            let b = p.busy_until;
            self.schedule_wake(port, b);
        }
    }
}
