//! An egress port: eight priority queues served in strict priority, a slot for PFC
//! frames that goes before everything, the pause state set by the peer's PFC frames, and
//! the counters that end up in `ports.csv`.

use super::NodeKind;
use crate::packet::Desc;
use crate::units::{Rate, Time};
use std::collections::VecDeque;

/// Number of 802.1p priorities.
pub const N_PRIO: usize = 8;

/// Per-port counters.
#[derive(Clone, Debug, Default)]
pub struct PortStats {
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
    /// Packets marked CE here.
    pub ecn_marked: u64,
}

/// A priority queue of an egress port and its byte count, in one cache line.
#[derive(Clone, Debug, Default)]
#[repr(C, align(64))]
pub struct PrioQueue {
    /// Bytes queued.
    pub bytes: u64,
    /// Packets, oldest first.
    pub q: VecDeque<Desc>,
}

impl PrioQueue {
    /// Packets queued.
    pub fn len(&self) -> usize {
        self.q.len()
    }
    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.q.is_empty()
    }
    /// The queued packets, oldest first.
    pub fn iter(&self) -> impl Iterator<Item = &Desc> {
        self.q.iter()
    }
}

/// An egress port. Fields the per-packet path touches come first (`repr(C)` keeps the
/// order), so that a transmission touches as few cache lines as possible.
#[derive(Clone, Debug)]
#[repr(C, align(64))]
pub struct Port {
    // First cache line: what every enqueue and transmission touches.
    /// When the transmitter finishes the current frame.
    pub busy_until: Time,
    /// Time of the pending wakeup (`Time::MAX` when none).
    pub wake_at: Time,
    /// Owner: host or switch index (saves a node lookup per packet).
    pub owner: NodeKind,
    /// Bytes queued, all priorities.
    pub total_bytes: u64,
    /// Bytes transmitted.
    pub tx_bytes: u64,
    /// Frames transmitted.
    pub tx_packets: u64,
    /// Longest egress queue seen (all priorities).
    pub max_queue_bytes: u64,
    /// Bit p set while queue p holds packets (so the scheduler touches only those).
    pub nonempty: u8,
    /// Link-security bytes added to every frame but PFC frames (MACsec, IPsec).
    pub sec_extra: u32,
    /// One queue per priority, each with its byte count in its own cache line.
    pub queues: [PrioQueue; N_PRIO],
    /// Owning node.
    pub node: u32,
    /// Index among the node's ports.
    pub local: u32,
    /// The port at the other end of the cable.
    pub peer: u32,
    /// Line rate.
    pub rate: Rate,
    /// Rate at which frames serialize: the line rate less any PHY-level overhead
    /// (PHYSec segment framing).
    pub ser_rate: Rate,
    /// Serialization time per byte when the rate divides 8e12 evenly (all the usual
    /// rates do), which replaces a 128-bit division per frame by a multiplication.
    ps_per_byte: Option<u64>,
    /// PFC frames waiting to go out (served first, never paused).
    pub mac_ctrl: VecDeque<Desc>,
    /// Per priority, the time until which the peer paused us.
    pub paused_until: [Time; N_PRIO],
    /// Start of the current paused interval of the data priority (for paused time).
    pub pause_started: Option<Time>,
    /// Counters.
    pub stats: PortStats,
}

impl Port {
    /// A new idle port.
    pub fn new(node: u32, owner: NodeKind, local: u32, peer: u32, rate: Rate) -> Port {
        Port {
            owner,
            total_bytes: 0,
            sec_extra: 0,
            ser_rate: rate,
            tx_bytes: 0,
            tx_packets: 0,
            max_queue_bytes: 0,
            node,
            local,
            peer,
            rate,
            queues: Default::default(),
            nonempty: 0,
            ps_per_byte: (8 * crate::units::SEC)
                .checked_rem(rate.0)
                .filter(|&r| r == 0)
                .map(|_| 8 * crate::units::SEC / rate.0),
            mac_ctrl: VecDeque::new(),
            paused_until: [0; N_PRIO],
            busy_until: 0,
            wake_at: Time::MAX,
            pause_started: None,
            stats: PortStats::default(),
        }
    }

    /// Time to serialize `bytes` on this port.
    #[inline]
    pub fn tx_time(&self, bytes: u64) -> Time {
        match self.ps_per_byte {
            Some(k) => bytes * k,
            None => self.ser_rate.tx_time(bytes),
        }
    }

    /// Applies link security: `extra` bytes per frame and a serialization rate below the
    /// line rate.
    pub fn set_security(&mut self, extra: u32, ser_rate: Rate) {
        self.sec_extra = extra;
        self.ser_rate = ser_rate;
        self.ps_per_byte = (8 * crate::units::SEC)
            .checked_rem(ser_rate.0)
            .filter(|&r| r == 0)
            .map(|_| 8 * crate::units::SEC / ser_rate.0);
    }

    /// Appends a packet to queue `prio`.
    #[inline]
    pub fn enqueue(&mut self, prio: usize, d: Desc) {
        let q = &mut self.queues[prio];
        q.q.push_back(d);
        q.bytes += d.wire as u64;
        self.total_bytes += d.wire as u64;
        if self.total_bytes > self.max_queue_bytes {
            self.max_queue_bytes = self.total_bytes;
        }
        self.nonempty |= 1 << prio;
    }

    /// Removes the head of queue `prio`, which must be non-empty.
    #[inline]
    pub fn dequeue_head(&mut self, prio: usize) -> Desc {
        let q = &mut self.queues[prio];
        let d = q.q.pop_front().expect("dequeue from an empty queue");
        q.bytes -= d.wire as u64;
        if q.q.is_empty() {
            self.nonempty &= !(1 << prio);
        }
        self.total_bytes -= d.wire as u64;
        d
    }

    /// True if any priority queue holds a packet.
    #[inline]
    pub fn has_queued(&self) -> bool {
        self.nonempty != 0
    }

    /// Total bytes queued across priorities.
    #[inline]
    pub fn queued_bytes(&self) -> u64 {
        self.total_bytes
    }

    /// True if priority `p` is paused at `now`.
    #[inline]
    pub fn is_paused(&self, p: usize, now: Time) -> bool {
        self.paused_until[p] > now
    }

    /// Highest non-paused priority with a queued packet.
    #[inline]
    pub fn next_queue(&self, now: Time) -> Option<usize> {
        let mut m = self.nonempty;
        while m != 0 {
            let p = 7 - m.leading_zeros() as usize;
            if !self.is_paused(p, now) {
                return Some(p);
            }
            m &= !(1 << p);
        }
        None
    }

    /// Earliest time a paused priority with queued packets resumes by timeout.
    pub fn earliest_unpause(&self, now: Time) -> Option<Time> {
        (0..N_PRIO)
            .filter(|&p| !self.queues[p].q.is_empty() && self.is_paused(p, now))
            .map(|p| self.paused_until[p])
            .min()
    }
}
