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
//! - a replayed frame may be corrupted again, and is replayed again.
//!
//! A replay thus costs the corrupted frame a link round trip plus the wire time of
//! itself and the frames replayed with it, and costs the link that wire time. Every frame
//! is delivered once, in order. \[recon\] The replay buffer is unbounded (real ones hold
//! a round trip of frames and stop the link when full, which a go-back-N replay never
//! needs more than).

use crate::engine::Event;
use crate::ids::LinkId;
use crate::packet::PacketKind;
use crate::sim::{Ctx, Fabric};

impl Fabric {
    /// The sender of link `l` hears the replay request: it sends the frames of the link
    /// again, from the corrupted head on (or, if the link went down meanwhile, the head is
    /// lost like every frame that was on it).
    #[cold]
    #[inline(never)]
    pub(crate) fn on_replay(&mut self, ctx: &mut Ctx, l: LinkId) {
        let fs = self.faults.as_mut().expect("faults model");
        let lf = &mut fs.links[l.idx()];
        lf.awaiting_replay = false;
        let link = &mut self.links[l];
        if lf.lose_next > 0 {
            lf.lose_next -= 1;
            let (_, pkt) = link.ring.pop_front().expect("a replay of an empty link");
            super::schedule_head(ctx, l, link);
            super::lose_packet(&mut fs.flow_lost, ctx, pkt);
            return;
        }
        let port = &mut self.ports[l.idx()];
        debug_assert!(port.is_up(), "a down link's frames are all lost");
        let mut t = port.busy_until.max(ctx.now);
        let n = link.ring.len() as u64;
        for (arrival, d) in link.ring.iter_mut() {
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
