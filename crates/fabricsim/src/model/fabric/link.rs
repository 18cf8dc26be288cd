//! A unidirectional link: a propagation delay and a ring of packets in flight.
//!
//! The link keeps at most one pending event (the arrival of its head packet), as htsim
//! does: packets enter the ring in transmission order and, since every packet on one link
//! has the same delay, they leave it in the same order.

use super::NodeKind;
use crate::base::ids::{LinkId, PortId};
use crate::base::ring::Ring;
use crate::base::trusted::Trusted;
use crate::base::units::Time;
use crate::kernel::ctx::*;
use crate::kernel::events::Event;
use crate::kernel::packet::Desc;
use crate::kernel::packet::{PacketKind, Payload};
use crate::model::fabric::roles::RoleStates;
use crate::model::fabric::Fabric;

/// A frame's arrival time on a link's ring, in two 32-bit halves so that a ring entry,
/// time and [`Desc`], is 28 bytes rather than 32 (memory per host).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ArrivalTime([u32; 2]);

impl ArrivalTime {
    /// The time.
    #[inline(always)]
    pub fn get(self) -> Time {
        self.0[0] as Time | (self.0[1] as Time) << 32
    }
}

impl From<Time> for ArrivalTime {
    #[inline(always)]
    fn from(t: Time) -> Self {
        ArrivalTime([t as u32, (t >> 32) as u32])
    }
}

/// One direction of a cable: exactly one cache line.
#[derive(Clone, Debug)]
#[repr(C, align(64))]
pub struct Link {
    /// Propagation delay plus the receiving node's processing latency.
    pub delay: Time,
    /// The port packets arrive on (the far end's port on this cable).
    pub to_port: PortId,
    /// The node at the far end.
    pub to: NodeKind,
    /// Arrivals go through the faults model (the link has bit errors, or a fault may take
    /// it down): it may lose or corrupt frames. In the padding after `to`.
    pub watched: bool,
    /// In a run cut into shards, the far end is in another shard: 0 when not, else that
    /// shard's index plus one. The sender then hands its frames over
    /// ([`crate::sim::shards`]) instead of putting them in `ring`, which belongs to the
    /// far end. In the padding after `watched`.
    pub cut_to: u16,
    /// Packets delivered.
    pub delivered: u64,
    /// Packets in flight with their arrival times, oldest first.
    pub ring: Ring<(ArrivalTime, Desc)>,
}

crate::base::ids::indexed_by!(crate::base::ids::LinkId => Link);

impl Link {
    /// A link with the given total delay.
    pub fn new(delay: Time, to_port: PortId, to: NodeKind) -> Link {
        Link {
            delay,
            to_port,
            to,
            watched: false,
            cut_to: 0,
            delivered: 0,
            ring: Ring::new(),
        }
    }

    /// Puts `pkt` on the link to arrive at `arrival`; true if the link was empty (the
    /// caller then schedules the arrival: a link keeps one pending event, its head's).
    #[inline(always)]
    pub fn put(&mut self, arrival: Time, pkt: Desc) -> bool {
        let was_empty = self.ring.is_empty();
        self.ring.push_back_with(
            ring_growth,
            || (arrival.into(), pkt),
            |e| {
                e.0 = arrival.into();
                pkt.write_to(&mut e.1);
            },
        );
        was_empty
    }

    /// Takes the head packet, which has arrived, and returns it with the arrival time of
    /// the next one, if any (the link's next event).
    #[inline]
    pub fn take_head(&mut self) -> (Desc, Option<Time>) {
        let (_, pkt) = self.ring.pop_front().expect("arrival on an empty link");
        self.delivered += 1;
        (pkt, self.ring.front().map(|&(t, _)| t.get()))
    }
}

/// A full ring grows by a quarter (four entries at first). A link holds at most what
/// its delay and rate let fly at once, so its ring stops growing near that peak, where
/// doubling would leave it at up to twice as much (the k = 32 benchmark's rings hold
/// 914 bytes a host against 1,196). Growing by one entry would save little more (906)
/// at several times the reallocations.
fn ring_growth(cap: usize) -> usize {
    if cap == 0 {
        4
    } else {
        cap / 4
    }
}

impl Fabric {
    /// A frame lost on link `l` (faults) never reaches the buffer whose credits it took:
    /// under credit flow control the credits go back to the sender as if that buffer had
    /// passed it on (link-level credit resynchronization, modelled as one return).
    #[cold]
    #[inline(never)]
    pub(crate) fn refund_lost(&mut self, ctx: &mut Ctx, l: LinkId, pkt: Desc) {
        let Some(c) = self.credit() else {
            return;
        };
        if !c.port(l.idx()).tracked() {
            return;
        }
        let sig = crate::model::fabric::flow_control::credit::CreditSignal {
            vc: pkt.prio(),
            blocks: c.blocks(pkt.wire() as u64),
        };
        let to_port = self.links.at(l).to_port;
        self.send_credit(ctx, to_port, sig);
    }

    /// The head packet of link `l` reaches the far end: it enters the receiving switch or
    /// NIC (a PFC frame acts on the receiving port itself). Returns the packet and the
    /// NIC port it reached: the caller hands it to [`Nics::host_receive`]. A switch that
    /// plays a role hands the packet to the role with its state from `roles`.
    // Always inlined: the serial loop's dispatch and a shard's (`sim/shards/`) both
    // call it, and with two call sites the compiler would otherwise keep it out of line
    // (+4 % instructions at k = 8, cachegrind).
    #[inline(always)]
    pub(crate) fn on_link_arrive<const EXTRAS: bool>(
        &mut self,
        ctx: &mut Ctx,
        roles: &mut RoleStates,
        l: LinkId,
    ) -> Option<(PortId, Desc)> {
        let link = self.links.at_mut(l);
        // A watched link's head may have been lost or corrupted on the way (faults);
        // one that gets through goes on as on any link.
        debug_assert!(EXTRAS || !link.watched, "a watched link in a plain run");
        if EXTRAS && link.watched {
            let (held, head) = (link.ring.len(), link.ring.front().map(|&(_, d)| d));
            if !crate::model::fabric::faults::head_gets_through(
                &mut self.faults,
                &self.ports,
                ctx,
                l,
                link,
            ) {
                if link.ring.len() < held {
                    self.refund_lost(ctx, l, head.expect("a lost frame was the head"));
                }
                return None;
            }
        }
        let (pkt, next) = link.take_head();
        let (in_port, to) = (link.to_port, link.to);
        if let Some(t) = next {
            ctx.queue.push(t, Event::LinkArrive(l));
        }
        if pkt.kind() == PacketKind::Pause {
            let Payload::Pause(sig) = ctx.arena.get(pkt.id, pkt.kind(), ctx.now).payload else {
                unreachable!("a pause descriptor holds a pause frame")
            };
            ctx.arena.release(pkt.id);
            self.on_pfc_frame(ctx, in_port, sig.prio as usize, sig.quanta);
            return None;
        }
        match to {
            NodeKind::Switch(s) => {
                self.switch_receive::<EXTRAS>(ctx, roles, s, in_port, pkt);
                None
            }
            NodeKind::Host(_) => Some((in_port, pkt)),
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_link_is_one_cache_line() {
        assert_eq!(std::mem::size_of::<super::Link>(), 64);
    }

    #[test]
    fn a_frame_in_flight_is_28_bytes_and_keeps_its_time() {
        use super::{ArrivalTime, Desc};
        assert_eq!(std::mem::size_of::<(ArrivalTime, Desc)>(), 28);
        for t in [0, 1, u32::MAX as u64, 1 << 32, (1 << 63) + 12_345, u64::MAX] {
            assert_eq!(ArrivalTime::from(t).get(), t);
        }
    }
}
