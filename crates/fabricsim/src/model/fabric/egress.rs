//! Egress: starting transmissions on ports.
//!
//! A port sends PFC frames first, then the highest non-empty unpaused priority queue
//! (under credit flow control: the highest VC whose head packet has its credits), and a
//! NIC port with nothing queued pulls a data packet from its flows. A transmission
//! occupies the port for the frame's serialization time and puts the packet on the link
//! with its arrival time (its tail's, or its head's toward a cut-through switch); a busy
//! port keeps one wakeup for the end of its frame.

use crate::base::ids::PortId;
use crate::base::trusted::Trusted;
use crate::base::units::Time;
use crate::kernel::events::Event;
use crate::kernel::packet::{Desc, PacketKind, FLAG_ROUTED};
use crate::model::fabric::flow_control::AnyFlowControl;
use crate::model::fabric::NodeKind;

use crate::kernel::ctx::*;
use crate::model::fabric::Fabric;

/// What an egress port can do next.
pub(crate) enum NextFrame {
    /// Send this frame.
    Frame(Desc),
    /// Still serializing a frame (a wakeup is set for its end).
    Busy,
    /// Nothing queued may go now.
    Empty,
}

impl Fabric {
    /// Port `port` is to try sending at `t`: one pending wakeup per port, kept if it
    /// is due no later. Always inlined: the queue's push is most of it.
    #[inline(always)]
    pub(crate) fn schedule_wake(&mut self, ctx: &mut Ctx, port: PortId, t: Time) {
        wake(self.ports.at_mut(port), ctx, port, t);
    }

    /// Starts the next transmission on switch port `port` if it is free and has a frame
    /// to send (NIC ports start theirs in [`Nics::try_transmit`], which also pulls data).
    pub(crate) fn try_transmit<const EXTRAS: bool>(&mut self, ctx: &mut Ctx, port: PortId) {
        debug_assert!(matches!(self.ports[port].owner(), NodeKind::Switch(_)));
        match self.next_frame::<true, EXTRAS>(ctx, port) {
            NextFrame::Frame(pkt) => self.transmit::<EXTRAS>(ctx, port, pkt, false),
            NextFrame::Busy => {}
            NextFrame::Empty => self.wake_at_unpause(ctx, port),
        }
    }

    /// The frame port `port` sends next: PFC frames first, then the highest non-empty
    /// unpaused priority (on a switch's port, `SWITCH`, the switch's dequeue handlers run
    /// on it). A busy port gets a wakeup for the end of its frame instead.
    #[inline(always)]
    pub(crate) fn next_frame<const SWITCH: bool, const EXTRAS: bool>(
        &mut self,
        ctx: &mut Ctx,
        port: PortId,
    ) -> NextFrame {
        let now = ctx.now;
        let pi = port.idx();
        // The port and its pool, indexed once on the path without credits.
        let port_ref = self.ports.at_mut(pi);
        if port_ref.busy_until > now {
            let b = port_ref.busy_until;
            self.schedule_wake(ctx, port, b);
            return NextFrame::Busy;
        }
        let pool = self.queue_pools.at_mut(port_ref.pool as usize);
        if let Some(p) = port_ref.pop_ctrl(pool) {
            return NextFrame::Frame(p);
        }
        // The highest non-empty unpaused priority, or on a port fed by credits the
        // highest VC whose head packet has its credits.
        debug_assert!(EXTRAS || !port_ref.credit_gated(), "credits in a plain run");
        let (port_ref, pool, prio) = if EXTRAS && port_ref.credit_gated() {
            let Some(prio) = self.credit_next_queue(pi, now) else {
                return NextFrame::Empty;
            };
            let (port_ref, pool) = self.port_and_pool(pi);
            (port_ref, pool, prio)
        } else {
            let Some(prio) = port_ref.next_queue(now) else {
                return NextFrame::Empty;
            };
            (port_ref, pool, prio)
        };
        let mut d = port_ref.dequeue_head(pool, prio, now);
        if SWITCH {
            let s = port_ref.owner_index();
            self.on_switch_dequeue::<EXTRAS>(ctx, s, port, &mut d);
        }
        NextFrame::Frame(d)
    }

    // Out of line: only credit runs take it.
    #[inline(never)]
    fn credit_next_queue(&mut self, pi: usize, now: Time) -> Option<usize> {
        match &mut self.flow_control {
            AnyFlowControl::Credit(c) => {
                let pool = &self.queue_pools[self.ports[pi].pool as usize];
                c.next_queue(self.ports.at(pi), pool, pi, now)
            }
            _ => unreachable!("a port fed by credits runs credit flow control"),
        }
    }

    /// Port `port` has nothing it may send now: wake it when its earliest pause ends (a
    /// port waiting for credits is woken by their return instead).
    #[inline(always)]
    pub(crate) fn wake_at_unpause(&mut self, ctx: &mut Ctx, port: PortId) {
        if let Some(t) = self.ports.at(port).earliest_unpause(ctx.now) {
            self.schedule_wake(ctx, port, t);
        }
    }

    /// Starts sending `pkt` on `port`: the port is busy for its serialization, the
    /// packet goes on the link with its arrival time.
    ///
    /// `nic_has_flows`: the port is a NIC's with flows still to send (it then wakes at the
    /// end of this frame to pull more). Always inlined into its three callers (a switch's
    /// egress, the cut-through pass, a NIC's port): once per packet and hop.
    #[inline(always)]
    pub(crate) fn transmit<const EXTRAS: bool>(
        &mut self,
        ctx: &mut Ctx,
        port: PortId,
        pkt: Desc,
        nic_has_flows: bool,
    ) {
        if self.ports.at(port).slow_transmit() {
            self.transmit_slow(ctx, port, pkt.detached(), nic_has_flows);
        } else {
            self.transmit_as::<false, false, EXTRAS>(ctx, port, pkt, nic_has_flows);
        }
    }

    // Out of line: only ports fed by credits, captured, or on a link into another shard
    // take it, and the others' path
    // keeps its registers. (A capture test on the common path cost +1.4 % instructions
    // at k = 8 with nothing captured; the port bit that already sent credit ports here
    // costs nothing more.)
    #[inline(never)]
    fn transmit_slow(&mut self, ctx: &mut Ctx, port: PortId, pkt: Desc, nic_has_flows: bool) {
        let p = self.ports.at(port.idx());
        // Noted first: on a cut port the frame leaves the shard's arena as it is sent.
        if let Some(c) = self.capture.as_deref_mut() {
            c.note(
                ctx.shard,
                ctx.now,
                port.idx(),
                p.tx_packets,
                pkt,
                &ctx.arena,
            );
        }
        // A link that may replay frames puts them in the sender's replay ring (`CUT`'s
        // path: what leaves that ring may be handed to another shard).
        let off_link = p.cut() || p.replays();
        if p.credit_gated() && off_link {
            self.transmit_as::<true, true, true>(ctx, port, pkt, nic_has_flows);
        } else if p.credit_gated() {
            self.transmit_as::<true, false, true>(ctx, port, pkt, nic_has_flows);
        } else if off_link {
            self.transmit_as::<false, true, true>(ctx, port, pkt, nic_has_flows);
        } else {
            self.transmit_as::<false, false, true>(ctx, port, pkt, nic_has_flows);
        }
    }

    /// [`Self::transmit`] on a port fed by credits (`CREDIT`) or not, whose link leads
    /// into another shard or may replay frames (`CUT`) or not, in a run that may use the
    /// fabric's extras (`EXTRAS`, here PHYSec's overhead) or not.
    #[inline(always)]
    fn transmit_as<const CREDIT: bool, const CUT: bool, const EXTRAS: bool>(
        &mut self,
        ctx: &mut Ctx,
        port: PortId,
        pkt: Desc,
        nic_has_flows: bool,
    ) {
        let now = ctx.now;
        let pi = port.idx();
        let wire = pkt.wire() as u64;
        // The port and its link, each indexed once (the tables the ECMP choice below
        // reads are other fields).
        let (port_ref, link) = (self.ports.at_mut(pi), self.links.at_mut(pi));
        debug_assert!(EXTRAS || port_ref.sec_extra == 0, "PHYSec in a plain run");
        let extra = if !EXTRAS || pkt.kind() == PacketKind::Pause {
            0
        } else {
            port_ref.sec_extra as u64
        };
        let d = port_ref.tx_time(wire + extra);
        port_ref.busy_until = now + d;
        port_ref.tx_bytes += wire + extra;
        port_ref.tx_packets += 1;
        let mut pkt = pkt;
        // How long after its start the packet is at the far end, before the link's delay:
        // all of it, or toward a cut-through switch its head block.
        let ahead = if CREDIT {
            let AnyFlowControl::Credit(c) = &mut self.flow_control else {
                unreachable!("a port fed by credits runs credit flow control")
            };
            // The next switch sees a raised packet arrive on its raised VC.
            pkt.arrive_on_prio();
            c.on_transmit(pi, port_ref, pkt.prio(), pkt.wire(), now, d)
        } else {
            d
        };
        if self.route_ahead && pkt.kind() != PacketKind::Pause {
            let (to, to_port) = (link.to, link.to_port.0);
            if let NodeKind::Switch(s) = to {
                // The receiving switch's ECMP choice, made now: the same port it would
                // pick on arrival, but off the arrival's chain of dependent loads.
                let e = super::switch::ecmp_egress(
                    &self.routing,
                    &self.switches,
                    s,
                    pkt.dst(),
                    pkt.hash,
                );
                if let Some(egress) = e {
                    let off = egress.0.wrapping_sub(to_port) as i32;
                    if off as i16 as i32 == off {
                        pkt.in_port = off as u16;
                        pkt.flags |= FLAG_ROUTED;
                    }
                }
            }
        }
        let arrival = now + ahead + link.delay;
        if CUT && port_ref.replays() {
            // Through the sender's replay ring, which draws its fate on the wire.
            let more = port_ref.ctrl_len() != 0 || port_ref.has_queued() || nic_has_flows;
            let b = port_ref.busy_until;
            self.llr_send(ctx, port.link(), arrival, pkt);
            if more {
                self.schedule_wake(ctx, port, b);
            }
            return;
        } else if CUT {
            // The far end is another shard's: the frame goes to it at the next barrier
            // (the arrival is at least a lookahead away).
            // INT records travel with the frame (each shard keeps its own by arena slot).
            let int = (pkt.flags & crate::kernel::packet::FLAG_INT != 0)
                .then(|| *self.telemetry.int[ctx.shard as usize].slot(pkt.id));
            ctx.hand_off(link.cut_to, port.link(), arrival, pkt, int);
        } else if link.put(arrival, pkt) {
            ctx.queue.push(arrival, Event::LinkArrive(port.link()));
        }
        let more = port_ref.ctrl_len() != 0 || port_ref.has_queued() || nic_has_flows;
        if more {
            // The port at hand, not indexed again.
            let b = port_ref.busy_until;
            wake(port_ref, ctx, port, b);
        }
    }
}

/// [`Fabric::schedule_wake`] on the port `p` (whose id is `port`).
#[inline(always)]
fn wake(p: &mut crate::model::fabric::Port, ctx: &mut Ctx, port: PortId, t: Time) {
    if p.wakes_by(t, ctx.now) {
        return;
    }
    p.wake_at = t;
    ctx.queue.push(t, Event::PortWake(port));
}
