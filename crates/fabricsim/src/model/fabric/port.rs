//! An egress port: eight priority queues served in strict priority, a slot for PFC
//! frames that goes before everything, the pause state set by the peer's PFC frames, and
//! the counters that end up in `ports.csv`.

use super::NodeKind;
use crate::base::block_pool::{BlockFifo, BlockPool};
use crate::base::ids::{NodeId, PortId};
use crate::base::units::{Rate, Time};
use crate::kernel::packet::Desc;

/// Set in `owner_code` for a host's port.
const HOST_BIT: u32 = 1 << 31;
/// Set in `owner_code` while `mac_ctrl` is not empty (read without touching the cold
/// part of the port).
const CTRL_BIT: u32 = 1 << 30;
/// Set in `owner_code` when the port's transmissions need credits (credit flow control,
/// the far end a switch): the egress then takes the credit paths, and a packet never
/// skips the queue (the queue's scheduler checks its credits).
const CREDIT_BIT: u32 = 1 << 29;
/// Set in `owner_code` when `[record.pcap]` captures the port's transmissions: they
/// take the out-of-line path that credit ports take, so the test that sends those there
/// is the only one other runs pay.
const CAPTURE_BIT: u32 = 1 << 28;
/// Set in `owner_code` when the port's link leads into another shard of a sharded run
/// (`Link::cut_to`): its frames are handed over, on the same out-of-line path.
const CUT_BIT: u32 = 1 << 27;
/// Set in `owner_code` when the port's link may replay frames (link-level
/// retransmission on a link with bit errors): its frames wait in the sender's replay
/// ring until their fate on the wire is decided ([`crate::model::fabric::faults::llr`]), on the same
/// out-of-line path.
const LLR_BIT: u32 = 1 << 26;
const INDEX_MASK: u32 = (1 << 24) - 1;

fn ps_per_byte(rate: Rate) -> u32 {
    (8 * crate::base::units::SEC)
        .checked_rem(rate.0)
        .filter(|&r| r == 0)
        .and_then(|_| u32::try_from(8 * crate::base::units::SEC / rate.0).ok())
        .unwrap_or(0)
}

/// `busy_until` of a port whose link is down: its transmitter is busy until the end of
/// time, so it starts no frame and no packet passes straight through it, without a test
/// of its own on those paths ([`crate::model::fabric::faults::link_state`]).
pub const DOWN: Time = Time::MAX;

/// A port's pause state: until when its peer paused each priority, and when the data
/// priority's current paused interval began. Kept apart from the port, made when the
/// peer first pauses it: few ports are ever paused (77 of 49,152 in the k = 32 benchmark
/// run), and the 72 bytes on every port were 432 bytes a host.
#[derive(Clone, Debug)]
pub struct PauseTimes {
    /// Per priority, the time until which the peer paused us (0 or past: not paused).
    until: [Time; N_PRIO],
    /// Start of the current paused interval of the data priority, if one is open.
    started_at: Option<Time>,
}

impl PauseTimes {
    /// Nothing paused.
    const NONE: PauseTimes = PauseTimes {
        until: [0; N_PRIO],
        started_at: None,
    };
}

/// Number of 802.1p priorities.
pub const N_PRIO: usize = 8;

/// Descriptors per block of a [`QueuePool`]: 8 (164 bytes). A queue holds at most one
/// part-used block at each end, and blocks go back to the pool the moment they empty.
/// (k = 16: 6.30 MB of blocks at the peak with 8, 6.55 with 16, 7.09 with 32, for the
/// same instruction count.)
pub const QUEUE_BLOCK: usize = 8;

/// Where the egress queues of a shard's ports keep their descriptors
/// ([`crate::base::block_pool`]): one pool per shard ([`Port::pool`]), so that threads never
/// share one.
pub type QueuePool = BlockPool<Desc, QUEUE_BLOCK>;

/// An empty [`QueuePool`].
pub fn queue_pool() -> QueuePool {
    QueuePool::new(Desc::BLANK)
}

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
    /// Data packets this port's TCD detector found Congested (marked CE).
    pub tcd_ce: u64,
    /// Data packets this port's TCD detector found Undetermined (marked UE).
    pub tcd_ue: u64,
}

/// A priority queue of an egress port and its byte count: 22 bytes, eight of them in
/// less than three cache lines (a port was 832 bytes, six per host of a fat
/// tree). Its descriptors are in blocks of the port's [`QueuePool`]. Packed to 2 bytes:
/// the byte count is read and written by value, never borrowed.
#[derive(Clone, Copy, Debug, Default)]
#[repr(C, packed(2))]
pub struct PrioQueue {
    /// Bytes queued.
    pub bytes: u64,
    /// Packets, oldest first.
    pub q: BlockFifo,
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
    /// The queued packets, oldest first (`pool`: the port's, [`Port::pool`]).
    pub fn iter<'a>(&self, pool: &'a QueuePool) -> impl Iterator<Item = &'a Desc> + 'a {
        self.q.iter(pool)
    }
    /// The oldest packet.
    #[inline]
    pub fn front<'a>(&self, pool: &'a QueuePool) -> Option<&'a Desc> {
        self.q.front(pool)
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
    /// Bytes queued, all priorities.
    pub total_bytes: u64,
    /// Bytes transmitted.
    pub tx_bytes: u64,
    /// Frames transmitted.
    pub tx_packets: u64,
    /// Longest egress queue seen (all priorities).
    pub max_queue_bytes: u64,
    /// Serialization time per byte when the rate divides 8e12 evenly (all the usual
    /// rates do), which replaces a 128-bit division per frame by a multiplication; 0
    /// when it does not, or when the time is beyond 32 bits (rates under 2 bit/s).
    ps_per_byte: u32,
    /// Owner: host or switch index in the low 24 bits, `HOST_BIT` set for a host,
    /// `CTRL_BIT` set while MAC control frames wait.
    owner_code: u32,
    /// Link-security bytes added to every frame but PFC frames (MACsec, IPsec).
    pub sec_extra: u16,
    /// The pool the queues' descriptors are in: the shard's that owns the port
    /// ([`crate::sim::Fabric::queue_pools`]; 0 in a run on one thread). In the first
    /// line, which the look-ahead loads: every enqueue reads it, and in the fifth line
    /// the event loop waited on it for 5 % of its samples at k = 16 (`perf record`).
    pub pool: u16,
    /// Bit p set while queue p holds packets (so the scheduler touches only those).
    pub nonempty: u8,
    /// Bit p set once priority p has been paused and not resumed by a frame (the pause
    /// may have expired since: `paused_until` decides). Lets the scheduler skip reading
    /// the pause times of a port that was never paused.
    pause_mask: u8,
    /// Fills the first line: the queues start on the second.
    _line_end: u16,
    /// One queue per priority, each with its byte count.
    pub queues: [PrioQueue; N_PRIO],
    /// Queue-length integral bookkeeping of all priorities together, in bytes x
    /// picoseconds modulo 2^128: every enqueue subtracts `wire * now`, every dequeue adds
    /// it back, so that the integral of `total_bytes` over [0, t] is `total_bytes * t +
    /// area_base` for any t at or after the last change (each byte counts from its
    /// enqueue to its dequeue, or to t). Two integer operations per change, exact (no
    /// rounding, no overflow below 2^128). One per port, not per queue: only the port's
    /// mean is reported, and the sum of the queues' integrals is this one.
    area_base: u128,
    /// Owning node.
    pub node: NodeId,
    /// Index among the node's ports.
    pub local: u32,
    /// The port at the other end of the cable.
    pub peer: PortId,
    /// PFC frames waiting to go out (served first, never paused), in the port's pool.
    mac_ctrl: BlockFifo,
    /// Line rate.
    pub rate: Rate,
    /// Rate at which frames serialize: the line rate less any PHY-level overhead
    /// (PHYSec segment framing).
    pub ser_rate: Rate,
    /// Pause times, from the peer's first pause on ([`Port::pause`], [`Port::resume`],
    /// [`Self::pause_started`]); `None` while it has never paused this port.
    pause: Option<Box<PauseTimes>>,
    /// Counters.
    pub stats: PortStats,
}

crate::base::ids::indexed_by!(crate::base::ids::PortId => Port);

/// Where in a port its queue-length books lie (`area_base`, which every enqueue and
/// dequeue updates, in the line after the queues): for the look-ahead.
pub(crate) const BOOKS_OFFSET: usize = std::mem::offset_of!(Port, area_base);

/// Each port's node and peer, as routing reads the wiring.
pub fn ends(ports: &[Port]) -> Vec<crate::model::topology::PortEnds> {
    ports
        .iter()
        .map(|p| crate::model::topology::PortEnds {
            node: p.node,
            peer: p.peer,
        })
        .collect()
}

impl Port {
    /// A new idle port.
    pub fn new(node: u32, owner: NodeKind, local: u32, peer: u32, rate: Rate) -> Port {
        Port {
            owner_code: match owner {
                NodeKind::Host(h) => HOST_BIT | h,
                NodeKind::Switch(s) => s,
            },
            pause_mask: 0,
            _line_end: 0,
            total_bytes: 0,
            sec_extra: 0,
            ser_rate: rate,
            tx_bytes: 0,
            tx_packets: 0,
            max_queue_bytes: 0,
            node: NodeId(node),
            local,
            peer: PortId(peer),
            pool: 0,
            rate,
            queues: Default::default(),
            area_base: 0,
            nonempty: 0,
            ps_per_byte: ps_per_byte(rate),
            mac_ctrl: BlockFifo::new(),
            busy_until: 0,
            wake_at: Time::MAX,
            pause: None,
            stats: PortStats::default(),
        }
    }

    /// Start of the current paused interval of the data priority, if one is open.
    pub fn pause_started(&self) -> Option<Time> {
        self.pause.as_ref().and_then(|x| x.started_at)
    }

    /// Opens (`Some`) or closes (`None`) the current paused interval.
    pub fn set_pause_started(&mut self, at: Option<Time>) {
        // Closing an interval on a port never paused needs no pause times.
        if at.is_some() || self.pause.is_some() {
            self.pause_times().started_at = at;
        }
    }

    /// The pause times, made on first use (once per port at most). Called on PFC
    /// frames and paused intervals only, never per packet.
    fn pause_times(&mut self) -> &mut PauseTimes {
        self.pause.get_or_insert_with(|| Box::new(PauseTimes::NONE))
    }

    /// Time to serialize `bytes` on this port.
    #[inline]
    pub fn tx_time(&self, bytes: u64) -> Time {
        match self.ps_per_byte {
            0 => self.ser_rate.tx_time(bytes),
            k => bytes * k as u64,
        }
    }

    /// Applies link security: `extra` bytes per frame and a serialization rate below the
    /// line rate.
    pub fn set_security(&mut self, extra: u16, ser_rate: Rate) {
        self.sec_extra = extra;
        self.ser_rate = ser_rate;
        self.ps_per_byte = ps_per_byte(ser_rate);
    }

    /// Changes the line and serialization rates (lane degrade); the frame being
    /// serialized keeps its time.
    pub fn set_rates(&mut self, rate: Rate, ser_rate: Rate) {
        self.rate = rate;
        self.ser_rate = ser_rate;
        self.ps_per_byte = ps_per_byte(ser_rate);
    }

    /// The port's pending wakeup (one at most) is due at `now` or later and no later
    /// than `t`: a wakeup asked for at `t` is already covered.
    #[inline(always)]
    pub fn wakes_by(&self, t: Time, now: Time) -> bool {
        self.wake_at <= t && self.wake_at >= now
    }

    /// Busy with a frame whose end already has the port's wakeup: a try to transmit now
    /// would find just that (`Fabric::next_frame`, its `schedule_wake`) and do nothing,
    /// so a caller that queued a frame skips the call.
    #[inline(always)]
    pub fn wakes_at_frame_end(&self, now: Time) -> bool {
        self.busy_until > now && self.wakes_by(self.busy_until, now)
    }

    /// True unless the port's link is down ([`DOWN`]).
    #[inline(always)]
    pub fn is_up(&self) -> bool {
        self.busy_until != DOWN
    }

    /// The owner's index (host or switch, see [`Self::owner`]).
    #[inline(always)]
    pub fn owner_index(&self) -> u32 {
        self.owner_code & INDEX_MASK
    }

    /// The node that owns this port.
    #[inline(always)]
    pub fn owner(&self) -> NodeKind {
        if self.owner_code & HOST_BIT != 0 {
            NodeKind::Host(self.owner_code & INDEX_MASK)
        } else {
            NodeKind::Switch(self.owner_code & INDEX_MASK)
        }
    }

    /// Marks the port as fed by credits (see `CREDIT_BIT`).
    pub fn set_credit_gated(&mut self) {
        self.owner_code |= CREDIT_BIT;
    }

    /// True when the port's transmissions need credits.
    #[inline(always)]
    pub fn credit_gated(&self) -> bool {
        self.owner_code & CREDIT_BIT != 0
    }

    /// Marks the port as captured (see `CAPTURE_BIT`).
    pub fn set_captured(&mut self) {
        self.owner_code |= CAPTURE_BIT;
    }

    /// Marks the port's link as cut (or not) by a sharded run (see `CUT_BIT`).
    pub(crate) fn set_cut(&mut self, cut: bool) {
        if cut {
            self.owner_code |= CUT_BIT;
        } else {
            self.owner_code &= !CUT_BIT;
        }
    }

    /// True when the port's link leads into another shard.
    #[inline(always)]
    pub(crate) fn cut(&self) -> bool {
        self.owner_code & CUT_BIT != 0
    }

    /// Marks the port's link as one that may replay frames (see `LLR_BIT`).
    pub(crate) fn set_replays(&mut self) {
        self.owner_code |= LLR_BIT;
    }

    /// True when the port's link may replay frames (its frames go through the replay
    /// ring, [`crate::model::fabric::faults::llr`]).
    #[inline(always)]
    pub fn replays(&self) -> bool {
        self.owner_code & LLR_BIT != 0
    }

    /// True when the port's transmissions take the out-of-line path: credits, a capture,
    /// a link into another shard, or one that may replay frames.
    #[inline(always)]
    pub fn slow_transmit(&self) -> bool {
        self.owner_code & (CREDIT_BIT | CAPTURE_BIT | CUT_BIT | LLR_BIT) != 0
    }

    /// Calls `f` on every frame queued on the port (priority queues, then MAC control).
    pub(crate) fn for_each_queued_mut(
        &mut self,
        pool: &mut QueuePool,
        mut f: impl FnMut(&mut Desc),
    ) {
        for q in &mut self.queues {
            q.q.for_each_mut(pool, &mut f);
        }
        self.mac_ctrl.for_each_mut(pool, f);
    }

    /// Queues a MAC control (PFC) frame; it goes before every priority queue.
    pub fn push_ctrl(&mut self, pool: &mut QueuePool, d: Desc) {
        self.mac_ctrl.push_back(pool, d);
        self.owner_code |= CTRL_BIT;
    }

    /// Takes the next MAC control frame, if any.
    #[inline]
    pub fn pop_ctrl(&mut self, pool: &mut QueuePool) -> Option<Desc> {
        if self.owner_code & CTRL_BIT == 0 {
            return None;
        }
        let d = self.mac_ctrl.pop_front(pool);
        if self.mac_ctrl.is_empty() {
            self.owner_code &= !CTRL_BIT;
        }
        d
    }

    /// MAC control frames waiting.
    #[inline]
    pub fn ctrl_len(&self) -> usize {
        if self.owner_code & CTRL_BIT == 0 {
            0
        } else {
            self.mac_ctrl.len()
        }
    }

    /// The peer paused priority `p` until `until`.
    pub fn pause(&mut self, p: usize, until: Time) {
        self.pause_times().until[p] = until;
        self.pause_mask |= 1 << p;
    }

    /// The peer resumed priority `p`.
    pub fn resume(&mut self, p: usize) {
        if let Some(x) = &mut self.pause {
            x.until[p] = 0;
        }
        self.pause_mask &= !(1 << p);
    }

    /// Time until which priority `p` is paused (0 or in the past when it is not).
    pub fn paused_until(&self, p: usize) -> Time {
        self.pause.as_ref().map_or(0, |x| x.until[p])
    }

    /// Latest pause end over all priorities.
    pub fn last_pause_end(&self) -> Time {
        (self.pause.as_ref()).map_or(0, |x| x.until.iter().copied().max().unwrap_or(0))
    }

    /// Appends a packet to queue `prio` at `now` (`pool`: the port's, [`Self::pool`]).
    #[inline(always)]
    pub fn enqueue(&mut self, pool: &mut QueuePool, prio: usize, d: Desc, now: Time) {
        self.area_base = (self.area_base).wrapping_sub(d.wire() as u128 * now as u128);
        let q = &mut self.queues[prio];
        q.q.push_back(pool, d);
        q.bytes += d.wire() as u64;
        self.total_bytes += d.wire() as u64;
        if self.total_bytes > self.max_queue_bytes {
            self.max_queue_bytes = self.total_bytes;
        }
        self.nonempty |= 1 << prio;
    }

    /// True when a packet of priority `prio` offered now would be the next to leave at
    /// once: the transmitter is idle, nothing is queued or waiting (no MAC control frame),
    /// `prio` is not paused and the port needs no credits.
    #[inline(always)]
    pub fn can_pass_through(&self, prio: usize, now: Time) -> bool {
        self.busy_until <= now
            && self.nonempty == 0
            && self.owner_code & (CTRL_BIT | CREDIT_BIT) == 0
            && !self.is_paused(prio, now)
    }

    /// Accounts a packet of `wire` bytes that goes straight to the transmitter (see
    /// [`Self::can_pass_through`]) exactly as its enqueue and immediate dequeue would:
    /// they cancel out but for the longest queue seen.
    #[inline]
    pub fn pass_through(&mut self, wire: u64) {
        let t = self.total_bytes + wire;
        if t > self.max_queue_bytes {
            self.max_queue_bytes = t;
        }
    }

    /// Removes the head of queue `prio`, which must be non-empty, at `now`.
    #[inline(always)]
    pub fn dequeue_head(&mut self, pool: &mut QueuePool, prio: usize, now: Time) -> Desc {
        let q = &mut self.queues[prio];
        let d = q.q.pop_front(pool).expect("dequeue from an empty queue");
        q.bytes -= d.wire() as u64;
        self.area_base = (self.area_base).wrapping_add(d.wire() as u128 * now as u128);
        if q.q.is_empty() {
            self.nonempty &= !(1 << prio);
        }
        self.total_bytes -= d.wire() as u64;
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

    /// Integral of the queued bytes (all priorities) over [0, now] (bytes x
    /// picoseconds), exact; `now` must not be earlier than the last enqueue or dequeue.
    pub fn area_exact(&self, now: Time) -> u128 {
        (self.total_bytes as u128 * now as u128).wrapping_add(self.area_base)
    }

    /// Time-weighted mean of the queued bytes (all priorities) over [0, now].
    pub fn mean_queue_bytes(&self, now: Time) -> f64 {
        if now == 0 {
            return 0.0;
        }
        self.area_exact(now) as f64 / now as f64
    }

    /// True if priority `p` is paused at `now`.
    #[inline]
    pub fn is_paused(&self, p: usize, now: Time) -> bool {
        // The mask is set only once the pause times exist.
        self.pause_mask & (1 << p) != 0 && self.paused_until(p) > now
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
            .map(|p| self.paused_until(p))
            .min()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::packet::PacketKind;

    /// A descriptor of `wire` bytes of `kind` at `prio`.
    fn desc(kind: PacketKind, prio: u8, wire: u32) -> Desc {
        Desc::for_test(0, kind, prio, wire)
    }

    #[test]
    fn hot_fields_fill_exactly_the_first_cache_line() {
        assert_eq!(std::mem::offset_of!(Port, queues), 64);
        assert_eq!(std::mem::size_of::<PrioQueue>(), 22);
        // Six ports per host of a fat tree; a port was 832 bytes, then 640
        // with rings for queues, then 448 with pooled queues.
        assert_eq!(std::mem::size_of::<Port>(), 384);
    }

    #[test]
    fn queue_area_is_the_exact_integral_of_the_queue_length() {
        let mut pool = queue_pool();
        let mut p = Port::new(0, NodeKind::Switch(0), 0, 1, Rate(100_000_000_000));
        let d = |wire| desc(PacketKind::Data, 3, wire);
        assert_eq!(p.mean_queue_bytes(1000), 0.0);
        p.enqueue(&mut pool, 3, d(100), 10);
        p.enqueue(&mut pool, 3, d(50), 30);
        assert_eq!(p.area_exact(30), 2000);
        p.enqueue(&mut pool, 1, d(7), 40);
        assert_eq!(p.area_exact(40), 100 * 30 + 50 * 10);
        p.dequeue_head(&mut pool, 1, 41);
        p.dequeue_head(&mut pool, 3, 60);
        assert_eq!(p.area_exact(60), 100 * 50 + 50 * 30 + 7);
        assert_eq!(p.area_exact(100), 100 * 50 + 50 * 70 + 7);
        p.dequeue_head(&mut pool, 3, 100);
        assert_eq!(p.area_exact(1000), 100 * 50 + 50 * 70 + 7);
        assert_eq!(p.mean_queue_bytes(1000), 8507.0 / 1000.0);
        // Large times and sizes stay exact.
        let t = 1u64 << 62;
        const LARGEST_FRAME: u32 = crate::kernel::packet::DESC_MAX_24;
        p.enqueue(&mut pool, 0, d(LARGEST_FRAME), t);
        let want = LARGEST_FRAME as u128 * (1u128 << 62) + 8507;
        assert_eq!(p.area_exact(2 * t), want);
    }

    #[test]
    fn passing_through_an_idle_port_equals_enqueue_then_dequeue() {
        let mut pool = queue_pool();
        let d = desc(PacketKind::Data, 3, 1000);
        let mut a = Port::new(0, NodeKind::Switch(0), 0, 1, Rate(100_000_000_000));
        let mut b = a.clone();
        assert!(a.can_pass_through(3, 50));
        a.pass_through(1000);
        b.enqueue(&mut pool, 3, d, 50);
        b.dequeue_head(&mut pool, 3, 50);
        assert_eq!(a.max_queue_bytes, b.max_queue_bytes);
        assert_eq!(a.queued_bytes(), b.queued_bytes());
        assert_eq!(a.area_exact(99), b.area_exact(99));
        assert_eq!(a.nonempty, b.nonempty);
        // Not when busy, queued, paused or holding a PFC frame.
        a.busy_until = 60;
        assert!(!a.can_pass_through(3, 50) && a.can_pass_through(3, 60));
        a.enqueue(&mut pool, 1, d, 60);
        assert!(!a.can_pass_through(3, 60));
        a.dequeue_head(&mut pool, 1, 60);
        a.pause(3, 100);
        assert!(!a.can_pass_through(3, 60) && a.can_pass_through(2, 60));
        a.push_ctrl(&mut pool, d);
        assert!(!a.can_pass_through(2, 60));
    }

    #[test]
    fn owner_round_trips_and_pause_mask_gates_pause_times() {
        let mut pool = queue_pool();
        let mut p = Port::new(3, NodeKind::Host(7), 0, 1, Rate(100_000_000_000));
        assert_eq!(p.owner(), NodeKind::Host(7));
        let q = Port::new(3, NodeKind::Switch(5), 0, 1, Rate(100_000_000_000));
        assert_eq!(q.owner(), NodeKind::Switch(5));
        assert!(!p.is_paused(3, 0));
        p.pause(3, 1_000);
        assert!(p.is_paused(3, 999));
        assert!(!p.is_paused(3, 1_000));
        p.resume(3);
        assert!(!p.is_paused(3, 0));
        // The pause times, made by the first pause, keep the paused interval.
        let mut q = q;
        assert_eq!((q.pause_started(), q.last_pause_end()), (None, 0));
        q.set_pause_started(None);
        assert!(q.pause.is_none());
        q.set_pause_started(Some(5));
        q.pause(2, 700);
        q.pause(6, 900);
        assert_eq!((q.pause_started(), q.last_pause_end()), (Some(5), 900));
        assert_eq!(q.earliest_unpause(10), None);
        q.resume(6);
        assert_eq!((q.paused_until(2), q.paused_until(6)), (700, 0));
        q.set_pause_started(None);
        assert_eq!(q.pause_started(), None);
        assert_eq!(p.tx_time(1), 80);
        let d = desc(PacketKind::Pause, 7, 64);
        assert_eq!(p.ctrl_len(), 0);
        p.push_ctrl(&mut pool, d);
        p.push_ctrl(&mut pool, d);
        assert_eq!(p.owner(), NodeKind::Host(7));
        assert_eq!(p.ctrl_len(), 2);
        assert!(p.pop_ctrl(&mut pool).is_some());
        assert!(p.pop_ctrl(&mut pool).is_some());
        assert!(p.pop_ctrl(&mut pool).is_none());
        assert_eq!(p.ctrl_len(), 0);
    }
}
