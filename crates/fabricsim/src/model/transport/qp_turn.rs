//! The NIC's send scheduler quantum (`[transport] qp_burst`): how many bytes a NIC sends
//! from one queue pair before it moves on to the next.
//!
//! By default the NIC serves its active queue pairs one packet each, round robin
//! (`round_robin.rs`), so `n` queue pairs of one NIC each send at `1/n` of its rate at
//! every instant. RDMA NICs schedule work per queue pair in larger units (a work request,
//! or a burst of packets of it) and their quantum is not published, so it is a field:
//! with `qp_burst = B` a queue pair, once served, keeps the port for `B` payload bytes
//! unless its pacer or window stops it first, and the next one then takes its turn. Its
//! effect is on the fabric: each queue pair leaves the NIC in bursts at the full line
//! rate rather than as a steady share of it, so two queue pairs of different NICs that
//! ECMP hashes onto one link collide at twice that link's rate rather than at a share.

use super::Nics;

/// The queue pair whose turn it is on a NIC, and where in its bytes the turn began.
#[derive(Clone, Copy, Debug)]
pub(crate) struct QpTurn {
    fid: u32,
    /// The flow's `snd_nxt` when the turn began.
    from: u64,
}

/// No queue pair holds the turn.
const NONE: u32 = u32::MAX;

/// Per NIC, the current turn (empty when `qp_burst` is 0: one packet per turn).
pub(crate) fn turns(hosts: usize, qp_burst: u64) -> Vec<QpTurn> {
    if qp_burst == 0 {
        return Vec::new();
    }
    vec![QpTurn { fid: NONE, from: 0 }; hosts]
}

impl Nics {
    /// Flow `fid`, in round-robin slot `slot` of NIC `h`, just sent a packet: it keeps
    /// the turn while it has bytes to send and has sent less than the quantum. The turn
    /// counts payload from where it began in the flow; a go-back-N rewind within a turn
    /// begins a new one at the byte it went back to.
    #[inline(never)]
    pub(crate) fn continue_turn(
        &mut self,
        h: u32,
        slot: super::round_robin::Slot,
        fid: u32,
        sendable: bool,
        mtu: u64,
    ) {
        let snd_nxt = self.flows[fid as usize].snd_nxt;
        let t = &mut self.qp_turns[h as usize];
        if t.fid != fid || snd_nxt <= t.from {
            // The turn began with the packet just sent, which ends at `snd_nxt`: count
            // from its first byte (a full frame unless it was the flow's last, which
            // ends the turn anyway).
            let payload = self.flows[fid as usize].frame_payload(mtu);
            *t = QpTurn {
                fid,
                from: snd_nxt.saturating_sub(payload),
            };
        }
        let sent = snd_nxt.saturating_sub(t.from);
        if sendable && sent < self.qp_burst {
            self.hosts[h as usize].active.serve_again(slot);
        } else {
            t.fid = NONE;
        }
    }
}
