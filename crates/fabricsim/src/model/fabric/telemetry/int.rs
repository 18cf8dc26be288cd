//! In-band network telemetry (INT), as HPCC uses it (Li et al., SIGCOMM 2019, section 3.1).
//!
//! Every switch egress a data packet of an INT flow leaves appends one record: the port's
//! line rate, the dequeue time, the port's transmitted bytes and its queue. The records do
//! not live in the packet (that would make every arena slot large for the sake of a few
//! flows): they sit in a side table indexed by arena slot, grown with the arena and never
//! per packet; the packet carries only [`crate::kernel::packet::FLAG_INT`] and the records' bytes
//! on the wire. The receiver copies the records into its ACK, and the sender's controller
//! reads them.

use crate::base::param::{Checked, Described, Param};
use crate::base::units::{Time, NS};
use crate::kernel::packet::{Desc, PktId};
pub use crate::kernel::packet::{IntHop, IntStack, MAX_INT_HOPS};
use crate::model::fabric::Port;
use serde::Deserialize;

/// Bytes of the HPCC ns-3 module's INT header (`IntHeader::GetStaticSize()` in its HPCC
/// mode): five 8-byte hop records and a 2-byte hop count, present from the NIC on.
pub const INT_FIXED_BYTES: u32 = MAX_INT_HOPS as u32 * INT_BYTES_PER_HOP + 2;

/// How INT records travel (`[fabric.int]`).
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IntCfg {
    /// `per_hop`: each switch egress adds its 8-byte record to the frame; `fixed`: the
    /// NIC sends the whole header (five records and a hop count, 42 B) on every data
    /// packet and its ACK, and switches fill it in, as the ns-3 module does.
    #[serde(default)]
    pub framing: IntFraming,
    /// Keep each field at the precision of its wire format (the ns-3 module's
    /// `IntHop`): timestamps in whole nanoseconds, transmitted bytes in 128 B units,
    /// queue lengths in 80 B units up to 2^17 - 1 of them. Off: full precision.
    #[serde(default)]
    pub quantize: bool,
}

/// `[fabric.int] framing`.
#[derive(Clone, Copy, Debug, Default, Deserialize, serde::Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum IntFraming {
    /// 8 bytes added per switch hop.
    #[default]
    PerHop,
    /// A fixed-size header from the NIC on.
    Fixed,
}

impl Described for IntCfg {
    const ABOUT: &'static str = "INT records for HPCC: their framing and precision";
    fn params() -> Vec<Param> {
        let d = IntCfg::default();
        vec![
            Param::choice(
                "framing",
                &d.framing,
                "8 B per switch hop, or a fixed 42 B header from the NIC on (ns-3)",
            ),
            Param::plain(
                "quantize",
                d.quantize,
                "fields at their wire precision: 1 ns, 128 B, 80 B (ns-3)",
            ),
        ]
    }
}

impl IntCfg {
    /// Nothing to check: both fields take any of their values.
    pub fn validate(&self) -> Checked {
        Ok(())
    }

    /// Bytes an INT data packet or ACK carries from its NIC on (0 with `per_hop`).
    pub fn nic_bytes(&self) -> u32 {
        match self.framing {
            IntFraming::PerHop => 0,
            IntFraming::Fixed => INT_FIXED_BYTES,
        }
    }
}

/// Unit of the transmitted-bytes field at wire precision.
const TX_UNIT: u64 = 128;
/// Unit of the queue-length field at wire precision, and the field's largest count.
const QLEN_UNIT: u64 = 80;
const QLEN_MAX: u64 = (1 << 17) - 1;

/// Bytes each INT record adds to a data packet on the wire. The HPCC paper and the ns-3
/// module pack a hop into 8 bytes (a line-rate code, a 24-bit timestamp, 20 bits of
/// transmitted bytes in 128 B units, 17 bits of queue in 80 B units); the simulator keeps
/// the fields at full precision in [`IntHop`] but charges these 8 bytes per hop of
/// serialisation time (plus nothing for the hop count, which the paper folds into the
/// existing header).
pub const INT_BYTES_PER_HOP: u32 = 8;

impl IntHop {
    /// The record at the precision of the ns-3 module's wire format: each field
    /// truncated to its unit (1 ns, 128 B, 80 B; the queue saturating at 2^17 - 1
    /// units). The ns-3 fields also wrap (24-bit ns, 20-bit byte counts), which its HPCC
    /// undoes with modular differences, so within one RTT the truncation is the whole
    /// effect; the line rate travels as a code that names the standard rates exactly.
    pub fn quantized(self) -> IntHop {
        IntHop {
            rate_bps: self.rate_bps,
            ts: self.ts - self.ts % NS,
            tx_bytes: self.tx_bytes - self.tx_bytes % TX_UNIT,
            qlen: (self.qlen / QLEN_UNIT).min(QLEN_MAX) * QLEN_UNIT,
        }
    }
}

/// INT records of the packets that carry them, by arena slot.
#[derive(Clone, Debug)]
pub struct IntTable {
    by_slot: Vec<IntStack>,
    /// Bytes a switch adds per record (0 when the NIC sent a fixed-size header).
    pub per_hop: u32,
    /// Fields at wire precision.
    pub quantize: bool,
    /// The records of the packet being received (its slot is freed before the handlers
    /// run).
    pub rx: IntStack,
}

impl Default for IntTable {
    fn default() -> Self {
        IntTable {
            by_slot: Vec::new(),
            per_hop: INT_BYTES_PER_HOP,
            quantize: false,
            rx: IntStack::default(),
        }
    }
}

impl IntTable {
    /// Heap bytes of the records table (by capacity).
    pub fn heap_bytes(&self) -> u64 {
        crate::base::memory::vec_bytes(&self.by_slot)
    }

    /// A table for `[fabric.int]` settings `cfg`.
    pub fn new(cfg: &IntCfg) -> IntTable {
        IntTable {
            per_hop: match cfg.framing {
                IntFraming::PerHop => INT_BYTES_PER_HOP,
                IntFraming::Fixed => 0,
            },
            quantize: cfg.quantize,
            ..IntTable::default()
        }
    }

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
        let mut hop = IntHop {
            rate_bps: port.rate.0,
            ts: now,
            tx_bytes: port.tx_bytes + wire + self.per_hop as u64,
            qlen: port.queued_bytes(),
        };
        if self.quantize {
            hop = hop.quantized();
        }
        let st = &mut self.by_slot[pkt.id.0 as usize];
        if (st.n as usize) < MAX_INT_HOPS {
            st.hops[st.n as usize] = hop;
            st.n += 1;
            pkt.set_wire(pkt.wire() + self.per_hop);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantized_fields_keep_their_wire_units() {
        let h = IntHop {
            rate_bps: 100_000_000_000,
            ts: 12_345_678,
            tx_bytes: 1_000_000,
            qlen: 12_345,
        };
        let q = h.quantized();
        assert_eq!(q.rate_bps, h.rate_bps);
        assert_eq!(q.ts, 12_345_000, "whole ns");
        assert_eq!(q.tx_bytes, 999_936, "7812 units of 128 B");
        assert_eq!(q.qlen, 12_320, "154 units of 80 B");
        let deep = IntHop {
            qlen: 20_000_000,
            ..h
        }
        .quantized();
        assert_eq!(deep.qlen, ((1 << 17) - 1) * 80, "the queue field saturates");
        assert_eq!(q.quantized(), q, "idempotent");
        assert_eq!(INT_FIXED_BYTES, 42);
    }
}
