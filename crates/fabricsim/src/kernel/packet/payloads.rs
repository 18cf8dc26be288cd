//! Payload types a packet carries for the models above (PFC signals, collective
//! messages, PKTC container tags, credit returns, INT records): defined in the kernel so
//! that a packet names no model; the models re-export them.

/// Bytes of a PFC frame on the wire (minimum Ethernet frame).
pub const PFC_FRAME_BYTES: u32 = 64;

/// XOFF or XON (quanta 0) for one priority, to be sent upstream on an ingress port.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PfcSignal {
    /// Priority paused or resumed.
    pub prio: u8,
    /// Pause time in quanta; 0 resumes.
    pub quanta: u16,
}

/// What a collective message is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum CollMsg {
    /// A rank's contribution (its request, with its partial reduction), to its parent.
    Up,
    /// The result, down (multicast, or unicast to one rank).
    Result,
}

/// The container tag a packet carries in its GSE header.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Tag {
    /// Container sequence number within the (source GSP, destination) stream.
    pub cont: u32,
    /// Position of the packet in its container.
    pub idx: u16,
    /// Packets in the previous container (lets the destination know it is complete).
    pub prev: u16,
}

/// A credit return on its way upstream: `blocks` credits of `vc`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CreditSignal {
    /// The VC the credits belong to.
    pub vc: u8,
    /// Credits (blocks).
    pub blocks: u32,
}

/// Most INT records a packet carries (the HPCC ns-3 module's `IntHeader::maxHop`); a path
/// with more switch hops keeps the first five.
pub const MAX_INT_HOPS: usize = 5;

/// One switch egress's INT record.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct IntHop {
    /// The egress port's line rate in bit/s.
    pub rate_bps: u64,
    /// Dequeue time of the packet, picoseconds.
    pub ts: u64,
    /// Bytes the port has transmitted since the start, including this packet.
    pub tx_bytes: u64,
    /// Bytes queued at the egress (port, priority) when the packet was dequeued.
    pub qlen: u64,
}

/// The INT records a packet collected (data) or carries back (ACK).
#[derive(Clone, Copy, Debug, Default)]
pub struct IntStack {
    /// Records used.
    pub n: u8,
    /// One record per switch egress passed, in path order.
    pub hops: [IntHop; MAX_INT_HOPS],
}
