//! An egress port: eight priority queues served in strict priority, a slot for PFC
//! frames that goes before everything, the pause state set by the peer's PFC frames, and
//! the counters that end up in `ports.csv`.

use crate::packet::PktId;
use crate::units::{Rate, Time};
use std::collections::VecDeque;

/// Number of 802.1p priorities.
pub const N_PRIO: usize = 8;

/// Per-port counters.
#[derive(Clone, Debug, Default)]
pub struct PortStats {
    /// Bytes transmitted.
    pub tx_bytes: u64,
    /// Frames transmitted.
    pub tx_packets: u64,
    /// Data packets transmitted.
    pub tx_data_packets: u64,
    /// Packets dropped at admission to this port's queues.
    pub drops: u64,
    /// PFC XOFF frames this port sent (it asked its peer to pause).
    pub pause_frames_sent: u64,
    /// PFC resume (XON) frames sent.
    pub resume_frames_sent: u64,
    /// PFC XOFF frames this port received.
    pub pause_frames_received: u64,
    /// PFC resume (XON) frames this port received.
    pub resume_frames_received: u64,
    /// Time the port's data priorities spent paused by its peer.
    pub paused_ps: Time,
    /// Longest egress queue seen (all priorities).
    pub max_queue_bytes: u64,
    /// Packets marked CE here.
    pub ecn_marked: u64,
    /// Packets that arrived on this port (ingress).
    pub rx_packets: u64,
}

/// An egress port.
#[derive(Clone, Debug)]
pub struct Port {
    /// Owning node.
    pub node: u32,
    /// Index among the node's ports.
    pub local: u32,
    /// The port at the other end of the cable.
    pub peer: u32,
    /// Line rate.
    pub rate: Rate,
    /// Queues per priority.
    pub queues: [VecDeque<PktId>; N_PRIO],
    /// Bytes queued per priority.
    pub qbytes: [u64; N_PRIO],
    /// PFC frames waiting to go out (served first, never paused).
    pub mac_ctrl: VecDeque<PktId>,
    /// Per priority, the time until which the peer paused us.
    pub paused_until: [Time; N_PRIO],
    /// When the transmitter finishes the current frame.
    pub busy_until: Time,
    /// Time of the pending wakeup (`Time::MAX` when none).
    pub wake_at: Time,
    /// Start of the current paused interval of the data priority (for paused time).
    pub pause_started: Option<Time>,
    /// Counters.
    pub stats: PortStats,
}

impl Port {
    /// A new idle port.
    pub fn new(node: u32, local: u32, peer: u32, rate: Rate) -> Port {
        Port {
            node,
            local,
            peer,
            rate,
            queues: Default::default(),
            qbytes: [0; N_PRIO],
            mac_ctrl: VecDeque::new(),
            paused_until: [0; N_PRIO],
            busy_until: 0,
            wake_at: Time::MAX,
            pause_started: None,
            stats: PortStats::default(),
        }
    }

    /// Total bytes queued across priorities.
    #[inline]
    pub fn queued_bytes(&self) -> u64 {
        self.qbytes.iter().sum()
    }

    /// True if priority `p` is paused at `now`.
    #[inline]
    pub fn is_paused(&self, p: usize, now: Time) -> bool {
        self.paused_until[p] > now
    }

    /// Highest non-paused priority with a queued packet.
    #[inline]
    pub fn next_queue(&self, now: Time) -> Option<usize> {
        (0..N_PRIO)
            .rev()
            .find(|&p| !self.queues[p].is_empty() && !self.is_paused(p, now))
    }

    /// Earliest time a paused priority with queued packets resumes by timeout.
    pub fn earliest_unpause(&self, now: Time) -> Option<Time> {
        (0..N_PRIO)
            .filter(|&p| !self.queues[p].is_empty() && self.is_paused(p, now))
            .map(|p| self.paused_until[p])
            .min()
    }
}
