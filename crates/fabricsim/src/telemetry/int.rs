//! In-band network telemetry (INT), as HPCC uses it (Li et al., SIGCOMM 2019, section 3.1).
//!
//! Every switch egress a data packet of an INT flow leaves appends one record: the port's
//! line rate, the dequeue time, the port's transmitted bytes and its queue. The records do
//! not live in the packet (that would make every arena slot large for the sake of a few
//! flows): they sit in a side table indexed by arena slot, grown with the arena and never
//! per packet; the packet carries only [`crate::packet::FLAG_INT`] and the records' bytes
//! on the wire. The receiver copies the records into its ACK, and the sender's controller
//! reads them.

use crate::fabric::Port;
use crate::packet::{Desc, PktId};
use crate::units::Time;

/// Most INT records a packet carries (the HPCC ns-3 module's `IntHeader::maxHop`); a path
/// with more switch hops keeps the first five.
pub const MAX_INT_HOPS: usize = 5;

/// Bytes each INT record adds to a data packet on the wire. The HPCC paper and the ns-3
/// module pack a hop into 8 bytes (a line-rate code, a 24-bit timestamp, 20 bits of
/// transmitted bytes in 128 B units, 17 bits of queue in 80 B units); the simulator keeps
/// the fields at full precision in [`IntHop`] but charges these 8 bytes per hop of
/// serialisation time (plus nothing for the hop count, which the paper folds into the
/// existing header).
pub const INT_BYTES_PER_HOP: u32 = 8;

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

/// INT records of the packets that carry them, by arena slot.
#[derive(Clone, Debug, Default)]
pub struct IntTable {
    by_slot: Vec<IntStack>,
    /// The records of the packet being received (its slot is freed before the handlers
    /// run).
    pub rx: IntStack,
}

impl IntTable {
    /// The records of arena slot `id` (the table grows with the arena).
    #[inline]
    pub fn slot(&mut self, id: PktId) -> &mut IntStack {
        let i = id.0 as usize;
        if i >= self.by_slot.len() {
            self.by_slot
                .resize((i + 1).max(2 * self.by_slot.len()), IntStack::default());
        }
        &mut self.by_slot[i]
    }

    /// Keeps the records of a packet that has just arrived at its NIC in [`IntTable::rx`].
    #[inline]
    pub fn receive(&mut self, id: PktId) {
        self.rx = self.by_slot[id.0 as usize];
    }

    /// Egress `port` dequeues data packet `pkt` of `wire` bytes at `now`: append a record
    /// (while there is room) and the record's bytes to the frame.
    #[inline]
    pub fn stamp(&mut self, now: Time, port: &Port, wire: u64, pkt: &mut Desc) {
        let hop = IntHop {
            rate_bps: port.rate.0,
            ts: now,
            tx_bytes: port.tx_bytes + wire + INT_BYTES_PER_HOP as u64,
            qlen: port.queued_bytes(),
        };
        let st = &mut self.by_slot[pkt.id.0 as usize];
        if (st.n as usize) < MAX_INT_HOPS {
            st.hops[st.n as usize] = hop;
            st.n += 1;
            pkt.wire += INT_BYTES_PER_HOP;
        }
    }
}
