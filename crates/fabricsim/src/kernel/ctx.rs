//! The narrow context every handler shares: the clock, the event queue, the packet
//! arena, the run's counters and its resolved parameters, and what a shard hands the
//! others. Every model's handlers take `&mut Ctx` beside their own state.

use crate::base::ids::{LinkId, PortId};
use crate::base::units::Time;
use crate::kernel::events::{Event, EventQueue};
use crate::kernel::packet::{CreditSignal, Desc, IntStack, PacketArena, Slot, Tag};

/// Transport and fabric settings resolved for the run.
#[derive(Clone, Debug)]
pub struct RunParams {
    /// Payload per packet.
    pub mtu: u64,
    /// Header bytes per data packet.
    pub header: u64,
    /// Wire size of ACK/NACK/CNP.
    pub ack_size: u32,
    /// ACK coalescing.
    pub ack_every: u32,
    /// Retransmission timeout.
    pub rto: Time,
    /// Data priority.
    pub data_prio: u8,
    /// Control priority.
    pub ctrl_prio: u8,
    /// Priority of ACK, NACK and CNP frames (`ctrl_prio`, or `data_prio` with
    /// `transport.feedback_queue = "data"`), at the NIC and in switches.
    pub feedback_prio: u8,
    /// CNPs ride on ACKs as a flag (`transport.cnp = "ack_flag"`).
    pub cnp_on_ack: bool,
    /// INT bytes a NIC puts on an INT data packet or ACK (`[fabric.int] framing =
    /// "fixed"`; 0: switches add a record's bytes per hop).
    pub int_nic_bytes: u32,
    /// Lossless fabric.
    pub pfc: bool,
    /// PFC only on switch ports facing hosts.
    pub pfc_edge_only: bool,
    /// XOFF pause time in quanta.
    pub pause_quanta: u16,
    /// Stop time.
    pub max_time: Time,
    /// Stall timeout.
    pub stall_timeout: Time,
    /// Queue sampling interval.
    pub queue_interval: Option<Time>,
    /// Rate sampling interval.
    pub rate_interval: Option<Time>,
}

/// Global counters.
#[derive(Clone, Debug, Default)]
pub struct Counters {
    /// Packets dropped anywhere.
    pub drops: u64,
    /// PFC frames sent (XOFF and XON).
    pub pfc_frames: u64,
    /// CE marks.
    pub ecn_marks: u64,
    /// CNPs sent.
    pub cnps: u64,
    /// ACKs sent.
    pub acks: u64,
    /// NACKs sent.
    pub nacks: u64,
    /// Data packets sent by NICs.
    pub data_sent: u64,
    /// Data packets delivered to receiving NICs.
    pub data_arrived: u64,
    /// Frames handed from one shard to another (a run cut into shards).
    pub handoffs: u64,
}

/// What the run's end and stall checks count. It lives in the [`Ctx`] of whoever runs
/// the events (in a run cut into shards, one per shard, summed at each barrier), so no
/// handler reads another shard's count.
#[derive(Clone, Debug, Default)]
pub struct Tally {
    /// Flows whose receiver has every byte.
    pub flows_done: usize,
    /// Flows whose sender has had its last ACK. A sender is done only after its
    /// receiver (the last cumulative ACK answers the last byte), so
    /// `flows_done - senders_done` ACKs are still on their way.
    pub senders_done: usize,
    /// Flows started.
    pub flows_started: usize,
    /// The last time anything made progress (a flow started, in-order data, a
    /// collective step), for the stall check.
    pub last_progress: Time,
    /// When the last receiver got its last byte.
    pub last_flow_done: Time,
    /// Compute phases ended (a run cut into shards counts them here; a run on one
    /// thread in `FlowLauncher::phases_left` at once).
    pub phases_ended: usize,
    /// When the last of them ended.
    pub last_phase_end: Time,
}

impl Counters {
    /// Adds another shard's counts.
    pub fn add(&mut self, o: &Counters) {
        self.drops += o.drops;
        self.pfc_frames += o.pfc_frames;
        self.ecn_marks += o.ecn_marks;
        self.cnps += o.cnps;
        self.acks += o.acks;
        self.nacks += o.nacks;
        self.data_sent += o.data_sent;
        self.data_arrived += o.data_arrived;
        self.handoffs += o.handoffs;
    }
}

impl Tally {
    /// Adds another shard's counts (times: the latest).
    pub fn merge(&mut self, o: &Tally) {
        self.flows_done += o.flows_done;
        self.senders_done += o.senders_done;
        self.flows_started += o.flows_started;
        self.last_progress = self.last_progress.max(o.last_progress);
        self.last_flow_done = self.last_flow_done.max(o.last_flow_done);
        self.phases_ended += o.phases_ended;
        self.last_phase_end = self.last_phase_end.max(o.last_phase_end);
    }

    /// ACKs of finished flows still on their way to their senders.
    pub fn acks_awaited(&self) -> usize {
        self.flows_done - self.senders_done
    }
}

/// The narrow context every handler shares: the clock, the event queue, the packet
/// arena, the run's global counters and its constants. Components take `&mut Ctx` beside
/// their own state and nothing else of the simulation's.
pub struct Ctx {
    /// Current simulated time.
    pub now: Time,
    pub(crate) queue: EventQueue,
    /// Packets.
    pub arena: PacketArena,
    /// Global counters.
    pub counters: Counters,
    /// Progress counts for the run's end and stall checks.
    pub tally: Tally,
    /// Resolved parameters (read only during the run).
    pub params: RunParams,
    /// The shard whose events this context runs (0 in a run on one thread).
    pub(crate) shard: u32,
    /// What this shard hands to each other shard in this window: frames, credit
    /// returns (the parallel engine, `sim/shards/`); empty in a run on one thread.
    pub(crate) outbox: Vec<Outbox>,
    /// Flows of the data packets this shard dropped (a run on one thread counts them in
    /// [`Fabric::flow_drops`] at once).
    pub(crate) flow_drops: Vec<u32>,
    /// Flows of the data packets this shard lost to faults (a run on one thread counts
    /// them in `FaultState::flow_lost` at once).
    pub(crate) flow_lost: Vec<u32>,
    /// Nodes of job iterations this shard saw done, with when (a run on one thread
    /// accounts them at once): accounted between windows.
    pub(crate) jobs_done: Vec<(Time, u32)>,
    /// A shard's livelock guard (`sim/shards/`): the most events it may run in this
    /// window, and the events it ran past that, for the diagnosis.
    pub(crate) event_budget: u64,
    pub(crate) past_budget: Vec<Event>,
    /// The end of the window this shard last ran (0 in a run on one thread). A release
    /// handed over for a time before it is taken late, between windows
    /// (`FlowLauncher::take_release`): only what cannot act before this time may be.
    pub(crate) window_end: Time,
    /// True while such a late release is taken: the clock (`now`) is set back to the
    /// release's time, and timers due before `window_end` act at once.
    pub(crate) late: bool,
    /// Releases for other shards that a late release made, `(shard, time, node)`:
    /// handed over between windows, by the caller's thread.
    pub(crate) late_releases: Vec<(u32, Time, u32)>,
    /// Phases on the timeline that ended, with when (`[record.timeline]`): the
    /// timeline takes them as the run goes ([`crate::model::record::timeline`]).
    pub(crate) spans_ended: Vec<(Time, u32)>,
}

impl Ctx {
    /// The context of a run on one thread, at time 0: its parameters, an event queue and
    /// a packet arena.
    pub fn new(params: RunParams, queue: EventQueue, arena: PacketArena) -> Ctx {
        Ctx {
            now: 0,
            queue,
            arena,
            counters: Counters::default(),
            tally: Tally::default(),
            params,
            shard: 0,
            outbox: Vec::new(),
            flow_drops: Vec::new(),
            flow_lost: Vec::new(),
            jobs_done: Vec::new(),
            event_budget: u64::MAX,
            past_budget: Vec::new(),
            window_end: 0,
            late: false,
            late_releases: Vec::new(),
            spans_ended: Vec::new(),
        }
    }
}

/// A frame put on a cut link, on its way to the shard at the far end.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Handoff {
    pub(crate) link: LinkId,
    pub(crate) arrival: Time,
    /// The frame's descriptor; its id is the sender's slot until the outbox is sealed.
    pub(crate) desc: Desc,
    /// The frame's slot as the sender's arena stored it, copied when the outbox is sealed
    /// ([`Outbox::sealed`]).
    pub(crate) slot: Slot,
}

/// A credit return sent back over a cut link: it reaches egress `port` (in the shard
/// at the far end) at `arrival`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct CreditHandoff {
    pub(crate) port: PortId,
    pub(crate) arrival: Time,
    pub(crate) signal: CreditSignal,
}

/// What one shard hands another in a window, delivered at the barrier.
#[derive(Clone, Debug, Default)]
pub(crate) struct Outbox {
    pub(crate) frames: Vec<Handoff>,
    pub(crate) credits: Vec<CreditHandoff>,
    /// Releases of dependency-graph nodes the receiver starts: `(time, node)`.
    pub(crate) releases: Vec<(Time, u32)>,
    /// The INT records of the frames that carry them (`FLAG_INT`), in frame order.
    pub(crate) ints: Vec<IntStack>,
    /// The GSE container tag of every frame, in frame order (runs with GSPs).
    pub(crate) tags: Vec<(Tag, u32)>,
    /// Frames before this one carry their slots, and the sender's arena has let those
    /// slots go; the rest still hold them (`Ctx::seal_handoffs`).
    pub(crate) sealed: usize,
}

impl Outbox {
    pub(crate) fn heap_bytes(&self) -> u64 {
        (self.frames.capacity() * std::mem::size_of::<Handoff>()
            + self.credits.capacity() * std::mem::size_of::<CreditHandoff>()
            + self.releases.capacity() * std::mem::size_of::<(Time, u32)>()
            + self.ints.capacity() * std::mem::size_of::<IntStack>()
            + self.tags.capacity() * std::mem::size_of::<(Tag, u32)>()) as u64
    }

    pub(crate) fn clear(&mut self) {
        self.frames.clear();
        self.credits.clear();
        self.releases.clear();
        self.ints.clear();
        self.tags.clear();
        self.sealed = 0;
    }
}
