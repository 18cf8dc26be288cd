//! CRC32 link-level retransmission (LLR): the receiver of a corrupted frame asks its
//! neighbour to send it again from its replay buffer, so the transport never sees the
//! loss (document 003's "CRC32 link-level retransmission"; Ethernet's 802.3dj LLR is the
//! same idea).
//!
//! The model, go-back-N at the link level as those schemes run it:
//! - the receiver checks a frame's CRC when the frame reaches the head of the link (in
//!   order, at its arrival time); a corrupted head is not delivered, and nothing behind it
//!   is (the receiver keeps the link's order);
//! - the replay request leaves the receiving MAC at the frame's arrival (before the
//!   receiving switch's forwarding latency, which link delays include) and reaches the
//!   sender one wire delay later (the reverse link's delay less its own forwarding
//!   latency; FEC and PHYSec latency stay in);
//! - the sender replays from the corrupted frame on: that frame and every frame it sent
//!   after it (the receiver threw their first copies away), back to back, at the front of
//!   its egress: right after the frame it is serializing, ahead of anything queued (the
//!   replay buffer sits below the MAC's queues, and PFC does not pause it). The replays
//!   take the port's real wire time, so queues behind them grow as on a slower link and
//!   congestion control and PFC see it;
//! - a replayed frame may be corrupted again, and is replayed again;
//! - PFC frames are MAC control frames, outside the replayed stream: one behind a
//!   corrupted frame is not held or sent again but arrives at its own time (a pause held
//!   for a replay round trip would overrun the receiver's PFC headroom). Those on the
//!   wire when the corruption is seen wait in `LinkFaults::bypass` for their arrival;
//!   those sent while the request travels arrive when the sender replays (up to the
//!   receiver's forwarding latency late).
//!
//! A replay thus costs the corrupted frame a link round trip plus the wire time of
//! itself and the frames replayed with it, and costs the link that wire time. Every frame
//! is delivered once, in order. \[recon\] The replay buffer is unbounded (real ones hold
//! a round trip of frames and stop the link when full, which a go-back-N replay never
//! needs more than).

use super::LinkFaults;
use crate::engine::Event;
use crate::fabric::Link;
use crate::ids::{LinkId, PortId};
use crate::packet::{Desc, PacketKind, Payload};
use crate::sim::{Ctx, Fabric};
use crate::units::Time;

/// PFC frame `d` arrives on link `l` at `t` outside the replayed stream (kept in time
/// order: an `Event::Replay` at `t` delivers it).
fn bypass(lf: &mut LinkFaults, ctx: &mut Ctx, l: LinkId, t: Time, d: Desc) {
    let at = lf.bypass.partition_point(|&(u, _)| u <= t);
    lf.bypass.insert(at, (t, d));
    ctx.queue.push(t, Event::Replay(l));
}

/// Takes the PFC frames behind the corrupted head of `link` out of the replayed stream:
/// each waits in `lf.bypass` for its arrival time (an `Event::Replay` then delivers it).
pub(crate) fn divert_pauses(lf: &mut LinkFaults, link: &mut Link, ctx: &mut Ctx, l: LinkId) {
    let mut i = 1;
    while i < link.ring.len() {
        if link.ring[i].1.kind == PacketKind::Pause {
            let (t, d) = link.ring.remove(i).expect("in range");
            bypass(lf, ctx, l, t.max(ctx.now), d);
        } else {
            i += 1;
        }
    }
}

impl Fabric {
    /// A PFC frame that bypassed a replay arrives on `in_port` (as `on_link_arrive`
    /// delivers one).
    #[cold]
    #[inline(never)]
    fn pause_arrives(&mut self, ctx: &mut Ctx, in_port: PortId, d: Desc) {
        let Payload::Pause(sig) = ctx.arena.get(d.id).payload else {
            unreachable!("only PFC frames bypass a replay")
        };
        ctx.arena.release(d.id);
        ctx.counters.packet_hops += 1;
        self.on_pfc_frame(ctx, in_port, sig.prio as usize, sig.quanta);
    }

    /// A PFC frame waits on `port`. Link-level retransmission must not hold it back:
    /// - while the link's receiver waits for a replay, the frames behind the corrupted
    ///   one are held, but not a MAC control frame: it arrives on its own
    ///   (`LinkFaults::bypass`);
    /// - while the port sends a replay burst (a run of replayed frames, one busy period
    ///   here), the MAC puts a control frame between two replayed frames, not after the
    ///   whole burst: it goes at the next frame boundary and the rest of the burst moves
    ///   back by its wire time.
    ///
    /// Returns false when neither holds (the usual path serves the frame).
    #[cold]
    #[inline(never)]
    pub(crate) fn pfc_into_replay(&mut self, ctx: &mut Ctx, port: PortId) -> bool {
        let now = ctx.now;
        let p = &mut self.ports[port];
        let link = &mut self.links[port.idx()];
        let lf = &mut self.faults.as_mut().expect("faults model").links[port.idx()];
        if !p.is_up() {
            return false;
        }
        // A frame put on a link starts when it is put, except a replayed one, which starts
        // at its turn: the first (after the head, whose arrival is already scheduled) that
        // starts now or later is the next boundary in a burst.
        let start = |arrival: Time, d: &Desc| {
            let extra = if d.kind == PacketKind::Pause {
                0
            } else {
                p.sec_extra as u64
            };
            arrival - link.delay - p.tx_time(d.wire as u64 + extra)
        };
        let next = (1..link.ring.len()).find(|&i| {
            let (t, d) = &link.ring[i];
            start(*t, d) >= now
        });
        if next.is_none() && !lf.awaiting_replay {
            return false;
        }
        let boundary = match next {
            Some(i) => start(link.ring[i].0, &link.ring[i].1),
            None => p.busy_until.max(now),
        };
        let d = p.pop_ctrl().expect("the frame just queued");
        if let Some(c) = self.capture.as_deref_mut() {
            c.on_transmit(
                ctx.shard,
                boundary,
                port.idx(),
                p.tx_packets,
                &d,
                &ctx.arena,
            );
        }
        let ser = p.tx_time(d.wire as u64);
        p.busy_until = p.busy_until.max(boundary) + ser;
        p.tx_bytes += d.wire as u64;
        p.tx_packets += 1;
        let arrival = boundary + ser + link.delay;
        if let Some(i) = next {
            for e in link.ring.iter_mut().skip(i) {
                e.0 += ser;
            }
        }
        match next {
            Some(i) if !lf.awaiting_replay => link.ring.insert(i, (arrival, d)),
            _ => bypass(lf, ctx, port.link(), arrival, d),
        }
        let b = p.busy_until;
        if p.ctrl_len() != 0 || p.has_queued() {
            self.schedule_wake(ctx, port, b);
        }
        true
    }

    /// On link `l`, a PFC frame that bypassed a replay arrives, or the sender hears the
    /// replay request: it sends the frames of the link again, from the corrupted head on
    /// (or, if the link went down meanwhile, the head is lost like every frame that was on
    /// it).
    #[cold]
    #[inline(never)]
    pub(crate) fn on_replay(&mut self, ctx: &mut Ctx, l: LinkId) {
        let now = ctx.now;
        loop {
            let lf = &mut self.faults.as_mut().expect("faults model").links[l.idx()];
            match lf.bypass.front() {
                Some(&(t, d)) if t <= now => {
                    lf.bypass.pop_front();
                    let link = &mut self.links[l];
                    link.delivered += 1;
                    let in_port = link.to_port;
                    self.pause_arrives(ctx, in_port, d);
                }
                _ => break,
            }
        }
        let fs = self.faults.as_mut().expect("faults model");
        let lf = &mut fs.links[l.idx()];
        if !lf.awaiting_replay || now < lf.replay_at {
            return;
        }
        lf.awaiting_replay = false;
        let link = &mut self.links[l];
        if lf.lose_next > 0 {
            lf.lose_next -= 1;
            let (_, pkt) = link.ring.pop_front().expect("a replay of an empty link");
            super::schedule_head(ctx, l, link);
            super::lose_packet(&mut fs.flow_lost, ctx, pkt);
            return;
        }
        divert_pauses(lf, link, ctx, l);
        let port = &mut self.ports[l.idx()];
        debug_assert!(port.is_up(), "a down link's frames are all lost");
        let mut t = port.busy_until.max(ctx.now);
        let n = link.ring.len() as u64;
        let mut capture = self.capture.as_deref_mut();
        for (arrival, d) in link.ring.iter_mut() {
            // A replayed frame is sent again: a capture sees it again.
            if let Some(c) = capture.as_mut() {
                c.on_transmit(ctx.shard, t, l.idx(), port.tx_packets, d, &ctx.arena);
            }
            let extra = if d.kind == PacketKind::Pause {
                0
            } else {
                port.sec_extra as u64
            };
            let bytes = d.wire as u64 + extra;
            t += port.tx_time(bytes);
            *arrival = t + link.delay;
            port.tx_bytes += bytes;
            port.tx_packets += 1;
        }
        port.busy_until = t;
        lf.replayed += n;
        lf.discarded += n - 1;
        let head = link.ring.front().expect("a replay of an empty link").0;
        ctx.queue.push(head, Event::LinkArrive(l));
    }
}
