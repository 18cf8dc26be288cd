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
//!   for a replay round trip would overrun the receiver's PFC headroom), and so does one
//!   sent while the replay is pending.
//!
//! A replay thus costs the corrupted frame a link round trip plus the wire time of
//! itself and the frames replayed with it, and costs the link that wire time. Every frame
//! is delivered once, in order. \[recon\] The replay buffer is unbounded (real ones hold
//! a round trip of frames and stop the link when full, which a go-back-N replay never
//! needs more than).
//!
//! Where it runs: every part of a replay is the sender's (its port's time, its replay
//! buffer) but the CRC check, whose outcome the sender hears a request's way later, no
//! later than the arrival. So the sender keeps the frames it sent in its replay ring
//! (`LinkFaults::wire`) and each frame's fate on the wire (the link's corruption draw, in
//! the order frames reach the receiver's head: each frame in send order, drawn until it
//! gets through; the first copies behind a corrupted one are not drawn, their replays
//! are) is drawn when it is sent if nothing is ahead of it in the ring (the common case,
//! which costs no event), else one link delay before its arrival, when its last bit
//! (toward a cut-through switch its head block) has left. A frame that gets through goes
//! on the link then, to arrive at its time; a corrupted one stays at the head of the
//! replay ring, the sender replays when the request would reach it, and its PFC frames
//! from the draw on go straight to the link (a PFC frame never waits behind a pending
//! replay). What leaves the sender is thus final and at least a
//! link delay ahead, so a link that replays can be cut between two shards of a parallel
//! run like any other (`sim/shards/`). One timer per link does all of it
//! (`Event::Replay`, [`Fabric::on_replay`]): draws that are due, and the replay once the
//! request is heard.

use super::{error_prone, LinkFaults};
use crate::base::ids::{LinkId, PortId};
use crate::base::units::Time;
use crate::kernel::ctx::Ctx;
use crate::kernel::events::Event;
use crate::kernel::packet::{Desc, PacketKind};
use crate::model::fabric::Fabric;
use rand::Rng;

impl Fabric {
    /// A frame sent on link `l`, which may replay frames, to arrive at `arrival` if it
    /// gets through: its fate is drawn now when nothing is ahead of it in the sender's
    /// replay ring (the common case: no event and no ring entry of its own), else it
    /// waits there and is drawn a link delay before its arrival. Called by the egress
    /// instead of putting the frame on the link.
    // Out of line but not cold: on a run with LLR every frame of every erring link
    // comes here.
    #[inline(never)]
    pub(crate) fn llr_send(&mut self, ctx: &mut Ctx, l: LinkId, arrival: Time, d: Desc) {
        let sec_extra = self.ports[l.idx()].sec_extra as u64;
        let lf = &mut self.faults.as_mut().expect("faults model").links[l.idx()];
        if !lf.wire.is_empty() {
            if d.kind() == PacketKind::Pause && lf.awaiting_replay {
                // Outside the replayed stream: not held behind the corrupted head.
                self.send_decided(ctx, l, arrival, d);
            } else {
                lf.wire.push_back((arrival, d));
            }
            return;
        }
        let a = arrival.max(lf.last_out);
        if lf.coin(&d, sec_extra) {
            lf.wire.push_back((arrival, d));
            self.corrupted_head(ctx, l, a);
        } else {
            lf.last_out = a;
            self.send_decided(ctx, l, a, d);
        }
    }

    /// A frame of link `l` whose fate is decided arrives at `arrival`: on the link, or,
    /// when the far end is another shard's, handed to it (at least a link delay ahead).
    fn send_decided(&mut self, ctx: &mut Ctx, l: LinkId, arrival: Time, d: Desc) {
        let link = &mut self.links[l];
        if link.cut_to != 0 {
            let int = (d.flags & crate::kernel::packet::FLAG_INT != 0)
                .then(|| *self.telemetry.int[ctx.shard as usize].slot(d.id));
            // At least a link delay ahead, so at least the lookahead (`sim/shards/`).
            assert!(
                arrival >= ctx.now + link.delay,
                "a replay ring handed a frame late"
            );
            ctx.hand_off(link.cut_to, l, arrival, d, int);
        } else if link.put(arrival, d) {
            ctx.queue.push(arrival, Event::LinkArrive(l));
        }
    }

    /// Takes the PFC frames behind the corrupted head of `l`'s replay ring out of the
    /// replayed stream: each goes to the link to arrive at its own time (no earlier than
    /// `not_before`).
    fn divert_pauses(&mut self, ctx: &mut Ctx, l: LinkId, not_before: Time) {
        let mut i = 1;
        loop {
            let lf = &mut self.faults.as_mut().expect("faults model").links[l.idx()];
            if i >= lf.wire.len() {
                break;
            }
            if lf.wire[i].1.kind() == PacketKind::Pause {
                let (t, d) = lf.wire.remove(i).expect("in range");
                self.send_decided(ctx, l, t.max(not_before), d);
            } else {
                i += 1;
            }
        }
    }

    /// A PFC frame waits on `port`. Link-level retransmission must not hold it back:
    /// - while the link waits for a replay, the frames behind the corrupted one are held,
    ///   but not a MAC control frame: it goes to the link at once;
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
        let pool = &mut self.queue_pools[p.pool as usize];
        let delay = self.links[port.idx()].delay;
        let lf = &mut self.faults.as_mut().expect("faults model").links[port.idx()];
        if !p.is_up() {
            return false;
        }
        // A frame sent starts when it is sent, except a replayed one, which starts at its
        // turn: the first (after the head, whose draw is already scheduled) that starts
        // now or later is the next boundary in a burst.
        let start = |arrival: Time, d: &Desc| {
            let extra = if d.kind() == PacketKind::Pause {
                0
            } else {
                p.sec_extra as u64
            };
            arrival - delay - p.tx_time(d.wire() as u64 + extra)
        };
        let next = (1..lf.wire.len()).find(|&i| {
            let (t, d) = &lf.wire[i];
            start(*t, d) >= now
        });
        let awaiting = lf.awaiting_replay;
        if next.is_none() && !awaiting {
            return false;
        }
        let boundary = match next {
            Some(i) => start(lf.wire[i].0, &lf.wire[i].1),
            None => p.busy_until.max(now),
        };
        let d = p.pop_ctrl(pool).expect("the frame just queued");
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
        let ser = p.tx_time(d.wire() as u64);
        p.busy_until = p.busy_until.max(boundary) + ser;
        p.tx_bytes += d.wire() as u64;
        p.tx_packets += 1;
        let arrival = boundary + ser + delay;
        if let Some(i) = next {
            for e in lf.wire.iter_mut().skip(i) {
                e.0 += ser;
            }
        }
        let (more, b) = (p.ctrl_len() != 0 || p.has_queued(), p.busy_until);
        match next {
            Some(i) if !awaiting => lf.wire.insert(i, (arrival, d)),
            _ => self.send_decided(ctx, port.link(), arrival, d),
        }
        if more {
            self.schedule_wake(ctx, port, b);
        }
        true
    }

    /// The timer of link `l`, which may replay frames: the sender hears the replay
    /// request that is due and replays, and the frames whose fate is due are drawn (see
    /// the module documentation). Does whatever is due, so it may fire more than once at
    /// an instant.
    #[cold]
    #[inline(never)]
    pub(crate) fn on_replay(&mut self, ctx: &mut Ctx, l: LinkId) {
        let now = ctx.now;
        let delay = self.links[l].delay;
        let fs = self.faults.as_mut().expect("faults model");
        let lf = &mut fs.links[l.idx()];
        if lf.awaiting_replay && now >= lf.replay_at {
            self.replay(ctx, l);
        }
        loop {
            let fs = self.faults.as_mut().expect("faults model");
            let lf = &mut fs.links[l.idx()];
            if lf.awaiting_replay {
                return;
            }
            let Some(&(a, _)) = lf.wire.front() else {
                return;
            };
            let due = a.saturating_sub(delay);
            if due > now {
                ctx.queue.push(due, Event::Replay(l));
                return;
            }
            if !self.draw_head(ctx, l) {
                return;
            }
        }
    }

    /// Draws the fate of the head of `l`'s replay ring (no replay pending): a frame that
    /// gets through goes to the link (true); a corrupted one stays for its replay (false).
    fn draw_head(&mut self, ctx: &mut Ctx, l: LinkId) -> bool {
        let sec_extra = self.ports[l.idx()].sec_extra as u64;
        let lf = &mut self.faults.as_mut().expect("faults model").links[l.idx()];
        let (a, d) = *lf.wire.front().expect("a frame to draw");
        // Held frames arrive no earlier than the one before them.
        let a = a.max(lf.last_out);
        if lf.coin(&d, sec_extra) {
            self.corrupted_head(ctx, l, a);
            return false;
        }
        lf.wire.pop_front();
        lf.last_out = a;
        self.send_decided(ctx, l, a, d);
        true
    }

    /// The head of `l`'s replay ring, arriving at `a`, was drawn corrupted: it stays
    /// there, and the sender hears the request one wire delay after the receiving MAC saw
    /// the bad CRC; the PFC frames behind it go on.
    fn corrupted_head(&mut self, ctx: &mut Ctx, l: LinkId, a: Time) {
        let lf = &mut self.faults.as_mut().expect("faults model").links[l.idx()];
        lf.corrupted += 1;
        lf.awaiting_replay = true;
        let heard = a.saturating_sub(lf.rx_latency) + lf.request_delay;
        lf.replay_at = heard.max(a);
        ctx.queue.push(lf.replay_at, Event::Replay(l));
        self.divert_pauses(ctx, l, a);
    }

    /// The sender of link `l` hears the replay request: it sends the frames of its
    /// replay ring again, from the corrupted head on, after the frame it is serializing.
    fn replay(&mut self, ctx: &mut Ctx, l: LinkId) {
        let now = ctx.now;
        self.faults.as_mut().expect("faults model").links[l.idx()].awaiting_replay = false;
        self.divert_pauses(ctx, l, now);
        let fs = self.faults.as_mut().expect("faults model");
        let lf = &mut fs.links[l.idx()];
        let delay = self.links[l].delay;
        let port = &mut self.ports[l.idx()];
        debug_assert!(port.is_up(), "a down link's frames are all lost");
        let mut t = port.busy_until.max(now);
        let n = lf.wire.len() as u64;
        let mut capture = self.capture.as_deref_mut();
        for (arrival, d) in lf.wire.iter_mut() {
            // A replayed frame is sent again: a capture sees it again.
            if let Some(c) = capture.as_mut() {
                c.on_transmit(ctx.shard, t, l.idx(), port.tx_packets, d, &ctx.arena);
            }
            let extra = if d.kind() == PacketKind::Pause {
                0
            } else {
                port.sec_extra as u64
            };
            let bytes = d.wire() as u64 + extra;
            t += port.tx_time(bytes);
            *arrival = t + delay;
            port.tx_bytes += bytes;
            port.tx_packets += 1;
        }
        port.busy_until = t;
        lf.replayed += n;
        lf.discarded += n.saturating_sub(1);
    }
}

impl LinkFaults {
    /// The link's corruption draw for frame `d` (`sec_extra`: the port's PHYSec bytes a
    /// data frame carries): true when it is corrupted. Frames bit errors spare draw
    /// nothing.
    #[inline]
    fn coin(&mut self, d: &Desc, sec_extra: u64) -> bool {
        if !error_prone(d.kind()) {
            return false;
        }
        let Some(rng) = self.rng.as_mut() else {
            return false;
        };
        let bytes = d.wire() as u64 + sec_extra;
        rng.gen::<f64>() < self.errors.frame_error_rate(bytes)
    }
}
