//! Packets and the arena that recycles them.
//!
//! A packet is a small plain struct; the simulator never allocates one per hop. Packets
//! live in a [`PacketArena`] (a `Vec` plus a free list) and are referred to by [`PktId`].
//! A packet's bytes on the wire are its payload plus the RoCEv2 headers (14 B Ethernet,
//! 20 B IPv4, 8 B UDP, 12 B BTH, 4 B ICRC/FCS = 58 B, document 002), or a fixed size for
//! control frames.

use crate::base::ids::{FlowId, GspId, HostId, PortId};
use crate::base::units::Time;

mod payloads;
mod slot;
pub use payloads::*;
pub use slot::{Slot, MAX_SEQ};

/// Index of a packet in the arena.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct PktId(pub u32);

/// What a frame is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum PacketKind {
    /// RDMA payload.
    Data,
    /// Cumulative acknowledgement.
    Ack,
    /// Negative acknowledgement: go back.
    Nack,
    /// DCQCN congestion notification packet.
    Cnp,
    /// IEEE 802.1Qbb priority flow control frame (MAC control, EtherType 0x8808).
    Pause,
    /// GSE DGSQ request.
    Request,
    /// GSE DGSQ grant.
    Grant,
    /// A hardware collective's message (document 003).
    Collective,
}

/// What a frame carries, by kind: the fields each kind has and no others.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Payload {
    /// RDMA data of `flow` starting at byte offset `seq`; how many bytes follows from the
    /// flow ([`crate::model::transport::rdma::Flow::payload_at`]).
    Data {
        /// The flow (queue pair).
        flow: FlowId,
        /// Byte offset of the payload in the message (at most [`MAX_SEQ`]).
        seq: u64,
    },
    /// Cumulative acknowledgement of `flow`: every byte before `seq` arrived.
    Ack {
        /// The flow.
        flow: FlowId,
        /// Next byte expected.
        seq: u64,
    },
    /// Negative acknowledgement of `flow`: a gap at `seq`; go back to it.
    Nack {
        /// The flow.
        flow: FlowId,
        /// Next byte expected.
        seq: u64,
    },
    /// DCQCN congestion notification for `flow`.
    Cnp {
        /// The flow.
        flow: FlowId,
        /// Sent by a DR switch (long haul) rather than by the flow's receiver.
        by_dr: bool,
    },
    /// IEEE 802.1Qbb PFC: pause (or resume) one priority.
    Pause(PfcSignal),
    /// GSE DGSQ request: source GSP `from` asks for `bytes` toward host `host`.
    Request {
        /// The requesting (source) GSP.
        from: GspId,
        /// Destination NIC the bytes wait for.
        host: HostId,
        /// Bytes asked for.
        bytes: u64,
    },
    /// GSE DGSQ grant: `bytes` toward host `host`, for the source GSP the packet goes to,
    /// to come in over the destination GSP's port `via`.
    Grant {
        /// Destination NIC.
        host: HostId,
        /// Bytes granted.
        bytes: u64,
        /// The destination GSP's fabric port the container is to arrive on (spine-link
        /// capacity), if any.
        via: Option<PortId>,
    },
    /// A hardware collective's message: rank `rank`'s contribution to iteration `iter`
    /// (up), or the result (down).
    Collective {
        /// The collective (also its multicast group).
        coll: u32,
        /// The iteration.
        iter: u32,
        /// The sending rank.
        rank: u32,
        /// Up or down.
        msg: CollMsg,
        /// The sending host.
        src: u32,
    },
}

impl Payload {
    /// The kind of frame this payload makes.
    #[inline]
    pub fn kind(&self) -> PacketKind {
        match self {
            Payload::Data { .. } => PacketKind::Data,
            Payload::Ack { .. } => PacketKind::Ack,
            Payload::Nack { .. } => PacketKind::Nack,
            Payload::Cnp { .. } => PacketKind::Cnp,
            Payload::Pause(_) => PacketKind::Pause,
            Payload::Request { .. } => PacketKind::Request,
            Payload::Grant { .. } => PacketKind::Grant,
            Payload::Collective { .. } => PacketKind::Collective,
        }
    }

    /// The flow of a transport frame (data, ACK, NACK, CNP).
    #[inline]
    pub fn flow(&self) -> Option<FlowId> {
        match *self {
            Payload::Data { flow, .. }
            | Payload::Ack { flow, .. }
            | Payload::Nack { flow, .. }
            | Payload::Cnp { flow, .. } => Some(flow),
            _ => None,
        }
    }
}

impl PacketKind {
    /// True for frames the transport generates as feedback (ACK, NACK, CNP).
    pub fn is_feedback(self) -> bool {
        matches!(self, PacketKind::Ack | PacketKind::Nack | PacketKind::Cnp)
    }
}

/// ECN codepoint: not ECN-capable, capable, congestion experienced.
pub const ECN_CE: u8 = 0b11;
/// ECN-capable transport.
pub const ECN_ECT: u8 = 0b10;

/// What only the NICs at both ends read of a frame, kept in its arena slot (a [`Slot`]
/// of 16 bytes, so that a queued packet, slot and descriptor, is 36: at
/// most 64 by design).
///
/// The header fields switches read (destination, hash, size, priority, ECN, marks,
/// flags) travel in the frame's [`Desc`] instead, and exist only there. What a slot
/// need not hold is not there: the source host of a transport frame is its flow's
/// (the sender for data, the receiver for ACK, NACK and CNP: [`Packet::src`]); the GSE
/// container tag, which only GSPs read, is kept beside the slots by runs that have GSPs
/// ([`PacketArena::gse_tag`]); the ECN echo of an ACK is a bit of the send time; the
/// kind, which the descriptor holds, is not stored again (the slot is read with it); nor
/// is a data frame's size, which its flow gives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Packet {
    /// What it is and what it carries.
    pub payload: Payload,
    /// When the sender put the packet on the wire (echoed in ACKs for RTT samples), with
    /// the ECN echo in the top bit ([`ECHO_BIT`]): times stay below 2^63 ps (106 days).
    sent: Time,
}

/// The bit of [`Packet`]'s send time that holds an ACK's ECN echo.
const ECHO_BIT: Time = 1 << 63;

/// The header a frame is sent with: what switches read. It becomes the frame's [`Desc`].
#[derive(Clone, Copy, Debug, Default)]
pub struct Header {
    /// Destination host.
    pub dst: u32,
    /// ECMP hash of the flow's 5-tuple.
    pub hash: u32,
    /// Bytes on the wire.
    pub wire: u32,
    /// 802.1p priority (0..8) used for queueing and PFC.
    pub prio: u8,
    /// ECN bits of the IP header.
    pub ecn: u8,
    /// Data: the TCD mark collected on the way ([`crate::model::fabric::telemetry::tcd::TcdMark::to_bits`]);
    /// ACK: the acked packet's mark, echoed.
    pub mark: u8,
    /// [`FLAG_INT`] and friends.
    pub flags: u8,
}

/// Packet flag: the packet collects (data) or carries (ACK) INT records, kept in the
/// simulator's INT side table under the packet's arena slot.
pub const FLAG_INT: u8 = 1;

/// Descriptor flag (never set by a sender): on a link toward a switch, `in_port`
/// holds the egress port the receiving switch will use, as an offset from the port the
/// packet arrives on (ECMP chosen when the packet was put on the link).
pub const FLAG_ROUTED: u8 = 2;

/// Packet flag: a multicast packet ([`crate::model::fabric::multicast`]); its group is in
/// the hash, and switches replicate it by their multicast tables.
pub const FLAG_MCAST: u8 = 64;

impl Packet {
    /// A frame carrying `payload`, sent at `sent_at`.
    pub const fn new(payload: Payload, sent_at: Time) -> Packet {
        Packet {
            payload,
            sent: sent_at & !ECHO_BIT,
        }
    }

    /// When the sender put it on the wire.
    #[inline]
    pub fn sent_at(&self) -> Time {
        self.sent & !ECHO_BIT
    }

    /// For ACKs (and NACKs): the ECN echo of the acknowledged data packet, 1 when it
    /// arrived marked CE.
    #[inline]
    pub fn echo(&self) -> u8 {
        (self.sent >> 63) as u8
    }

    /// Sets the ECN echo.
    #[inline]
    pub fn set_echo(&mut self, ce: bool) {
        self.sent = self.sent_at() | if ce { ECHO_BIT } else { 0 };
    }

    /// The host that sent it: a transport frame's from its flow (`flow_ends(flow)` is the
    /// flow's (source, destination)); a collective message names its sender; switches
    /// send PFC frames and GSE requests and grants (none).
    pub fn src(&self, flow_ends: impl Fn(FlowId) -> (u32, u32)) -> Option<u32> {
        match self.payload {
            Payload::Data { flow, .. } => Some(flow_ends(flow).0),
            Payload::Ack { flow, .. } | Payload::Nack { flow, .. } | Payload::Cnp { flow, .. } => {
                Some(flow_ends(flow).1)
            }
            Payload::Collective { src, .. } => Some(src),
            Payload::Pause(_) | Payload::Request { .. } | Payload::Grant { .. } => None,
        }
    }

    /// A PFC frame: XOFF (or XON when `quanta` is 0) for one priority. It travels ahead
    /// of every queue (priority 7) and takes a minimum frame's wire time.
    pub fn pfc(sig: PfcSignal) -> (Packet, Header) {
        let h = Header {
            wire: PFC_FRAME_BYTES,
            prio: 7,
            ..Header::default()
        };
        (Packet::new(Payload::Pause(sig), 0), h)
    }

    /// What it is.
    #[inline]
    pub fn kind(&self) -> PacketKind {
        self.payload.kind()
    }
}

/// `Desc::in_port` of a packet no switch ingress holds (a switch generated it, or it is
/// not in a switch): charged to no ingress counter.
pub const LOCAL_PORT: u16 = u16::MAX;

/// What switches need of a packet, carried by value through queues and link rings:
/// 20 bytes.
///
/// A switch reads only these fields, so a packet's arena slot is touched at the sending
/// and the receiving NIC and nowhere in between. Deep queues then stream through memory
/// in order (the queues' ring buffers) instead of jumping to a slot per packet, which is
/// where the time went in large fabrics with long queues.
///
/// The destination and the size share a word each with the small fields (a
/// queued packet is its descriptor and its slot, at most 64 bytes with the rings' slack):
/// hosts are numbered below 2^24 ([`crate::base::ids::MAX_INDEX`], checked when a topology
/// is built) and a frame is under 16 MiB (the MTU is at most 64 KiB, a hardware
/// collective's message too), so each fits 24 bits.
#[derive(Clone, Copy)]
#[repr(C)]
pub struct Desc {
    /// The packet's arena slot.
    pub id: PktId,
    /// ECMP hash.
    pub hash: u32,
    /// Destination host (low 24 bits) and TCD mark bits (high 8).
    dst_mark: u32,
    /// Bytes on the wire (low 24 bits), then priority (3 bits), ECN (2) and kind (3).
    wire_bits: u32,
    /// Ingress port (local index) at the switch holding the packet; on a link, with
    /// [`FLAG_ROUTED`], the next switch's egress port relative to the arrival port.
    pub in_port: u16,
    /// Packet flags ([`FLAG_INT`], [`FLAG_ROUTED`]).
    pub flags: u8,
    /// The VC (priority) the packet arrived on at the switch holding it, whose buffer
    /// counter and credits it holds there: its priority, unless a detour at this switch
    /// raised it (credit flow control, [`crate::model::fabric::flow_control::credit`]).
    /// A byte of its own, read as it is: testing a flag for it cost every hop.
    vc_in: u8,
}

/// Largest destination host and frame size a [`Desc`] holds (24 bits each).
pub const DESC_MAX_24: u32 = (1 << 24) - 1;
// Hosts are numbered up to the engine's largest index: every one is a destination.
const _: () = assert!(DESC_MAX_24 >= crate::base::ids::MAX_INDEX);
const PRIO_SHIFT: u32 = 24;
const ECN_SHIFT: u32 = 27;
const KIND_SHIFT: u32 = 29;
// The kind is the word's top bits and the ECN field lies just below (`is_ect_data`).
const _: () = assert!(KIND_SHIFT + 3 == 32 && ECN_SHIFT + 2 == KIND_SHIFT);
const KINDS: [PacketKind; 8] = [
    PacketKind::Data,
    PacketKind::Ack,
    PacketKind::Nack,
    PacketKind::Cnp,
    PacketKind::Pause,
    PacketKind::Request,
    PacketKind::Grant,
    PacketKind::Collective,
];

impl std::fmt::Debug for Desc {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Desc")
            .field("id", &self.id)
            .field("dst", &self.dst())
            .field("hash", &self.hash)
            .field("wire", &self.wire())
            .field("kind", &self.kind())
            .field("prio", &self.prio())
            .field("ecn", &self.ecn())
            .field("in_port", &self.in_port)
            .field("mark", &self.mark())
            .field("flags", &self.flags)
            .finish()
    }
}

impl Desc {
    /// A copy to hand to code out of line (a cold path), built from the fields packed
    /// into words so that the compiler cannot take it for the same value. Given the
    /// value itself, it passes the address of the original, which then has to live in
    /// memory on the path every packet takes: written there field by field, and read
    /// back whole (16 bytes) where it is copied, a read the CPU cannot forward from the
    /// narrower writes (at k = 16, a tenth of the event loop's samples of `perf record`
    /// waited on one such read as a switch forwarded).
    #[inline(always)]
    pub fn detached(&self) -> Desc {
        let w = [
            self.id.0 as u64 | (self.hash as u64) << 32,
            self.dst_mark as u64 | (self.wire_bits as u64) << 32,
        ];
        let tail = self.in_port as u32 | (self.flags as u32) << 16 | (self.vc_in as u32) << 24;
        Desc {
            id: PktId(w[0] as u32),
            hash: (w[0] >> 32) as u32,
            dst_mark: w[1] as u32,
            wire_bits: (w[1] >> 32) as u32,
            in_port: tail as u16,
            flags: (tail >> 16) as u8,
            vc_in: (tail >> 24) as u8,
        }
    }

    /// Copies this descriptor into `to` field by field. A whole-value copy is a 16- and
    /// a 4-byte move, and where the descriptor was last written field by field on the
    /// stack (a flag, the ingress port), the 16-byte read cannot be forwarded from those
    /// writes and waits for them to reach the cache; each field read here matches the
    /// write before it.
    #[inline(always)]
    pub fn write_to(&self, to: &mut Desc) {
        to.id = self.id;
        to.hash = self.hash;
        to.dst_mark = self.dst_mark;
        to.wire_bits = self.wire_bits;
        to.in_port = self.in_port;
        to.flags = self.flags;
        to.vc_in = self.vc_in;
    }

    /// A descriptor of nothing (packet 0, a data frame of 0 bytes, every header field
    /// zero), to fill storage before it is written.
    pub const BLANK: Desc = Desc::new(
        PktId(0),
        PacketKind::Data,
        Header {
            dst: 0,
            hash: 0,
            wire: 0,
            prio: 0,
            ecn: 0,
            mark: 0,
            flags: 0,
        },
    );

    /// A descriptor of packet `id`, a `kind` frame with header `h`, held by no switch
    /// ingress.
    #[inline]
    pub const fn new(id: PktId, kind: PacketKind, h: Header) -> Desc {
        debug_assert!(h.dst <= DESC_MAX_24 && h.wire <= DESC_MAX_24 && h.prio < 8);
        Desc {
            id,
            hash: h.hash,
            dst_mark: (h.dst & DESC_MAX_24) | (h.mark as u32) << 24,
            wire_bits: (h.wire & DESC_MAX_24)
                | (h.prio as u32 & 7) << PRIO_SHIFT
                | (h.ecn as u32 & 3) << ECN_SHIFT
                | (kind as u32) << KIND_SHIFT,
            in_port: LOCAL_PORT,
            flags: h.flags,
            vc_in: h.prio & 7,
        }
    }

    /// The same descriptor held at ingress port `in_port`.
    #[inline]
    pub const fn at_in_port(mut self, in_port: u16) -> Desc {
        self.in_port = in_port;
        self
    }

    /// A descriptor for unit tests: packet `id`, a `kind` frame of `wire` bytes at
    /// priority `prio`, every other field zero.
    #[cfg(test)]
    pub(crate) fn for_test(id: u32, kind: PacketKind, prio: u8, wire: u32) -> Desc {
        let h = Header {
            wire,
            prio,
            ..Header::default()
        };
        Desc::new(PktId(id), kind, h).at_in_port(0)
    }

    /// The descriptor of packet `p`, sent with header `h`, stored at `id`.
    #[inline]
    pub fn of(id: PktId, p: &Packet, h: Header) -> Desc {
        Desc::new(id, p.kind(), h)
    }

    /// The header this descriptor carries (as switches left it).
    #[inline]
    pub fn header(&self) -> Header {
        Header {
            dst: self.dst(),
            hash: self.hash,
            wire: self.wire(),
            prio: self.prio(),
            ecn: self.ecn(),
            mark: self.mark(),
            flags: self.flags,
        }
    }

    /// Destination host.
    #[inline(always)]
    pub fn dst(&self) -> u32 {
        self.dst_mark & DESC_MAX_24
    }
    /// TCD mark bits (switches merge here; the receiver reads them from here).
    #[inline(always)]
    pub fn mark(&self) -> u8 {
        (self.dst_mark >> 24) as u8
    }
    /// Sets the TCD mark bits.
    #[inline(always)]
    pub fn set_mark(&mut self, m: u8) {
        self.dst_mark = (self.dst_mark & DESC_MAX_24) | (m as u32) << 24;
    }
    /// Bytes on the wire.
    #[inline(always)]
    pub fn wire(&self) -> u32 {
        self.wire_bits & DESC_MAX_24
    }
    /// Sets the bytes on the wire (below 2^24).
    #[inline(always)]
    pub fn set_wire(&mut self, w: u32) {
        debug_assert!(w <= DESC_MAX_24, "a frame of {w} bytes");
        self.wire_bits = (self.wire_bits & !DESC_MAX_24) | (w & DESC_MAX_24);
    }
    /// Priority (0..8).
    #[inline(always)]
    pub fn prio(&self) -> u8 {
        (self.wire_bits >> PRIO_SHIFT) as u8 & 7
    }
    /// Sets the priority (0..8). The VC it arrived on ([`Self::arrival_vc`]) stays.
    #[inline(always)]
    pub fn set_prio(&mut self, p: u8) {
        debug_assert!(p < 8);
        self.wire_bits = (self.wire_bits & !(7 << PRIO_SHIFT)) | (p as u32 & 7) << PRIO_SHIFT;
    }
    /// ECN bits (switches mark here; the receiver reads them from here).
    #[inline(always)]
    pub fn ecn(&self) -> u8 {
        (self.wire_bits >> ECN_SHIFT) as u8 & 3
    }
    /// Sets the ECN bits.
    #[inline(always)]
    pub fn set_ecn(&mut self, e: u8) {
        self.wire_bits = (self.wire_bits & !(3 << ECN_SHIFT)) | (e as u32 & 3) << ECN_SHIFT;
    }
    /// What it is.
    #[inline(always)]
    pub fn kind(&self) -> PacketKind {
        KINDS[(self.wire_bits >> KIND_SHIFT) as usize & 7]
    }
    /// A data frame whose ECN field is ECT: the kind and the ECN field are the word's
    /// top five bits, so one comparison (on every dequeue: two tests cost more).
    #[inline(always)]
    pub fn is_ect_data(&self) -> bool {
        self.wire_bits >> ECN_SHIFT
            == (PacketKind::Data as u32) << (KIND_SHIFT - ECN_SHIFT) | ECN_ECT as u32
    }
    /// The VC (priority) the packet arrived on at the switch holding it: its priority
    /// unless a detour there raised it.
    #[inline(always)]
    pub fn arrival_vc(&self) -> u8 {
        // Always below 8; the mask tells the compiler so (tables by priority then need
        // no bounds check).
        self.vc_in & 7
    }
    /// The packet leaves for the next hop: it arrives there on the VC it has now.
    #[inline(always)]
    pub fn arrive_on_prio(&mut self) {
        self.vc_in = self.prio();
    }
}

/// Slots per arena chunk: 4096 slots of 16 bytes, 64 KiB.
const CHUNK: usize = 4096;
/// End of the free list.
const NO_SLOT: u32 = u32::MAX;

/// A recycling store of packets: allocation takes the most recently released slot,
/// release gives it back.
///
/// The slots live in chunks of [`CHUNK`] that are never moved or reallocated, so the
/// arena holds the most packets ever alive at once rounded up to a chunk, not the up to
/// twice as many of a vector grown by doubling (nor its copy while it grows). The free
/// list threads through the free slots themselves (a free slot's send time holds the
/// next free index), so it costs no memory of its own. Slot order (last released, first
/// reused) is that of a stack, as before: the ids a run hands out do not depend on how
/// the arena stores them.
pub struct PacketArena {
    slots: crate::base::block_pool::Chunks<Slot, CHUNK>,
    /// Head of the free list ([`NO_SLOT`]: empty).
    free: u32,
    live: usize,
    peak: usize,
    /// GSE container tag and source GSP by slot; empty unless [`Self::keep_tags`] was
    /// called.
    tags: Vec<(Tag, u32)>,
    tagged: bool,
}

const NO_TAG: (Tag, u32) = (
    Tag {
        cont: 0,
        idx: 0,
        prev: 0,
    },
    u32::MAX,
);

impl Default for PacketArena {
    fn default() -> Self {
        PacketArena {
            slots: crate::base::block_pool::Chunks::new(),
            free: NO_SLOT,
            live: 0,
            peak: 0,
            tags: Vec::new(),
            tagged: false,
        }
    }
}

impl PacketArena {
    /// An empty arena.
    pub fn new() -> PacketArena {
        PacketArena::default()
    }
    /// Keeps a GSE container tag per slot (runs with GSPs): every packet starts with
    /// the zero tag.
    pub fn keep_tags(&mut self) {
        self.tagged = true;
    }
    /// True when the arena keeps GSE container tags ([`Self::keep_tags`]).
    #[inline]
    pub fn keeps_tags(&self) -> bool {
        self.tagged
    }
    /// Stores `p`, sent with header `h`, and returns its descriptor.
    #[inline(always)]
    pub fn alloc_desc(&mut self, p: Packet, h: Header) -> Desc {
        let id = self.alloc(p);
        Desc::of(id, &p, h)
    }
    /// Puts `p` in a slot and returns its id.
    #[inline]
    pub fn alloc(&mut self, p: Packet) -> PktId {
        self.alloc_slot(Slot::encode(&p))
    }
    /// Puts a slot copied from another arena (a frame handed over by another shard) in a
    /// slot here and returns its id.
    #[inline]
    pub fn alloc_stored(&mut self, slot: Slot) -> PktId {
        self.alloc_slot(slot)
    }
    /// Puts a stored packet in a slot and returns its id. Always inlined: with `#[inline]`
    /// the compiler kept a copy out of line for the ACKs (a call per data packet).
    #[inline(always)]
    fn alloc_slot(&mut self, slot: Slot) -> PktId {
        self.live += 1;
        if self.live > self.peak {
            self.peak = self.live;
        }
        let i = if self.free != NO_SLOT {
            let i = self.free;
            self.free = self.slot(i).next_free();
            i
        } else {
            self.grow()
        };
        *self.slot_mut(i) = slot;
        if self.tagged {
            self.reset_tag(i);
        }
        PktId(i)
    }
    /// A never-used slot (its index is below [`NO_SLOT`]).
    #[inline]
    fn grow(&mut self) -> u32 {
        let empty = Slot::free(NO_SLOT);
        self.slots.grow(empty)
    }
    #[cold]
    #[inline(never)]
    fn reset_tag(&mut self, i: u32) {
        if i as usize >= self.tags.len() {
            self.tags.resize(i as usize + 1, NO_TAG);
        }
        self.tags[i as usize] = NO_TAG;
    }
    #[inline(always)]
    fn slot(&self, i: u32) -> &Slot {
        self.slots.get(i)
    }
    #[inline(always)]
    fn slot_mut(&mut self, i: u32) -> &mut Slot {
        self.slots.get_mut(i)
    }
    /// Returns the slot to the free list.
    #[inline]
    pub fn release(&mut self, id: PktId) {
        self.live -= 1;
        let next = self.free;
        *self.slot_mut(id.0) = Slot::free(next);
        self.free = id.0;
    }
    /// The packet behind `id`, a frame of `kind` (its descriptor's), read at time `now`
    /// (at or after it was sent: [`Slot`] keeps the low bits of the send time).
    #[inline(always)]
    pub fn get(&self, id: PktId, kind: PacketKind, now: Time) -> Packet {
        self.slot(id.0).decode(kind, now)
    }
    /// The slot behind `id`, as stored (to prefetch it).
    #[inline]
    pub fn slot_of(&self, id: PktId) -> &Slot {
        self.slot(id.0)
    }
    /// The GSE container tag of packet `id` (zero unless a GSP set one).
    #[inline]
    pub fn tag(&self, id: PktId) -> Tag {
        self.gse_tag(id).0
    }
    /// The GSE container tag of packet `id` and the index of the source GSP that set it
    /// (`u32::MAX` when none did).
    #[inline]
    pub fn gse_tag(&self, id: PktId) -> (Tag, u32) {
        self.tags.get(id.0 as usize).copied().unwrap_or(NO_TAG)
    }
    /// Sets the GSE container tag of packet `id`, put in its container by source GSP
    /// `gsp` (the arena must keep tags).
    #[inline]
    pub fn set_tag(&mut self, id: PktId, tag: Tag, gsp: u32) {
        debug_assert!(self.tagged, "set_tag on an arena that keeps no tags");
        self.tags[id.0 as usize] = (tag, gsp);
    }
    /// Moves packet `id` (and its GSE tag) into arena `to`, as a sharded run hands
    /// packets between its shards' arenas outside a window; returns its id there.
    pub fn move_into(&mut self, id: PktId, to: &mut PacketArena) -> PktId {
        let slot = *self.slot(id.0);
        let (tag, gsp) = self.gse_tag(id);
        self.release(id);
        let moved = to.alloc_slot(slot);
        if to.keeps_tags() {
            to.set_tag(moved, tag, gsp);
        }
        moved
    }

    /// Packets currently allocated.
    pub fn live(&self) -> usize {
        self.live
    }
    /// Most packets ever allocated at once.
    pub fn peak(&self) -> usize {
        self.peak
    }
    /// Raises the peak to `peak` (the shards' arenas of a parallel run, gathered).
    pub fn raise_peak(&mut self, peak: usize) {
        self.peak = self.peak.max(peak);
    }
    /// Bytes the arena holds: its chunks of slots, the chunk table and the tags, by
    /// capacity.
    pub fn heap_bytes(&self) -> u64 {
        use crate::base::memory::vec_bytes;
        self.slots.heap_bytes() + vec_bytes(&self.tags)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Switches stream descriptors through queues and rings, NICs touch arena slots: both
    /// are sized on purpose (a larger descriptor or slot costs cache misses per hop).
    #[test]
    fn descriptors_and_slots_keep_their_size() {
        assert_eq!(std::mem::size_of::<Desc>(), 20);
        assert_eq!(std::mem::size_of::<Slot>(), 16);
        // A queued packet (its descriptor where it waits, its slot) <= 64 B.
        assert!(crate::sim::memory::queued_packet_bytes() <= 64);
    }

    proptest::proptest! {
        /// Every field a descriptor packs comes back as it was put in, and each setter
        /// changes its own field only.
        #[test]
        fn a_descriptor_gives_back_what_it_packs(
            id in proptest::prelude::any::<u32>(),
            hash in proptest::prelude::any::<u32>(),
            dst in 0..=DESC_MAX_24,
            wire in 0..=DESC_MAX_24,
            kind in 0usize..8,
            prio in 0u8..8,
            ecn in 0u8..4,
            mark in proptest::prelude::any::<u8>(),
            flags in proptest::prelude::any::<u8>(),
            in_port in proptest::prelude::any::<u16>(),
            (wire2, prio2, ecn2, mark2) in (0..=DESC_MAX_24, 0u8..8, 0u8..4, proptest::prelude::any::<u8>()),
        ) {
            let h = Header { dst, hash, wire, prio, ecn, mark, flags };
            let mut d = Desc::new(PktId(id), KINDS[kind], h).at_in_port(in_port);
            let check = |d: &Desc, wire: u32, prio: u8, ecn: u8, mark: u8| {
                assert_eq!((d.id, d.hash, d.dst(), d.kind()), (PktId(id), hash, dst, KINDS[kind]));
                assert_eq!((d.wire(), d.prio(), d.ecn(), d.mark()), (wire, prio, ecn, mark));
                assert_eq!((d.flags, d.in_port), (flags, in_port));
                assert_eq!(d.is_ect_data(), d.kind() == PacketKind::Data && d.ecn() == ECN_ECT);
            };
            check(&d, wire, prio, ecn, mark);
            d.set_wire(wire2);
            check(&d, wire2, prio, ecn, mark);
            assert_eq!(d.arrival_vc(), prio);
            d.set_prio(prio2);
            check(&d, wire2, prio2, ecn, mark);
            // A raised packet keeps the VC it arrived on until it leaves for the next hop.
            assert_eq!(d.arrival_vc(), prio);
            d.arrive_on_prio();
            assert_eq!(d.arrival_vc(), prio2);
            d.set_ecn(ecn2);
            check(&d, wire2, prio2, ecn2, mark);
            d.set_mark(mark2);
            check(&d, wire2, prio2, ecn2, mark2);
            let back = d.header();
            assert_eq!((back.dst, back.wire, back.prio, back.ecn, back.mark), (dst, wire2, prio2, ecn2, mark2));
            // The copies made for out-of-line code and for a ring's slot are the same
            // descriptor, the VC it arrived on included.
            let mut slot = Desc::new(PktId(!id), KINDS[(kind + 1) % 8], Header::default());
            d.write_to(&mut slot);
            for c in [d.detached(), slot] {
                check(&c, wire2, prio2, ecn2, mark2);
                assert_eq!(c.arrival_vc(), d.arrival_vc());
            }
        }
    }

    #[test]
    fn the_kind_table_follows_the_enum() {
        for (i, k) in KINDS.iter().enumerate() {
            assert_eq!(*k as usize, i, "{k:?}");
        }
    }

    #[test]
    fn a_payload_knows_its_kind_and_flow() {
        let d = Payload::Data {
            flow: FlowId(7),
            seq: 0,
        };
        assert_eq!(d.kind(), PacketKind::Data);
        assert_eq!(d.flow(), Some(FlowId(7)));
        let p = Payload::Pause(PfcSignal { prio: 3, quanta: 0 });
        assert_eq!(p.kind(), PacketKind::Pause);
        assert_eq!(p.flow(), None);
        let (pkt, h) = Packet::pfc(PfcSignal {
            prio: 3,
            quanta: 65535,
        });
        let desc = Desc::of(PktId(1), &pkt, h);
        assert_eq!(desc.kind(), PacketKind::Pause);
        assert_eq!(desc.wire(), PFC_FRAME_BYTES);
        assert_eq!(desc.in_port, LOCAL_PORT);
    }
}
