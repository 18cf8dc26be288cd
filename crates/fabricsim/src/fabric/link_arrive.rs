//! Link arrivals.

use crate::engine::Event;
use crate::fabric::NodeKind;
use crate::packet::{PacketKind, Payload};

use crate::sim::*;

impl Simulation {
    pub(crate) fn on_link_arrive(&mut self, l: u32) {
        let li = l as usize;
        let (_, pkt) = self.links[li]
            .ring
            .pop_front()
            .expect("arrival on an empty link");
        if let Some(&(t2, _)) = self.links[li].ring.front() {
            self.queue.push(t2, Event::LinkArrive(l));
        }
        self.counters.packet_hops += 1;
        let link = &mut self.links[li];
        link.delivered += 1;
        let (in_port, to) = (link.to_port, link.to);
        if pkt.kind == PacketKind::Pause {
            let Payload::Pause(sig) = self.arena.get(pkt.id).payload else {
                unreachable!("a pause descriptor holds a pause frame")
            };
            self.arena.release(pkt.id);
            self.on_pfc_frame(in_port, sig.prio as usize, sig.quanta);
            return;
        }
        match to {
            NodeKind::Switch(s) => self.switch_receive(s, in_port, pkt),
            NodeKind::Host(h) => self.host_receive(h, pkt),
        }
    }
}
