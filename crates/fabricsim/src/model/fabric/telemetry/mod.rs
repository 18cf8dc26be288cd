//! Telemetry that switches add to packets for the end hosts' congestion control: INT
//! records (HPCC, [`int`]) and TCD marks (ACC, [`tcd`]).
//!
//! Both are switch features, not part of any one algorithm: a flow's controller asks for
//! them (`wants_int`, `wants_tcd`) and the switches provide them at egress dequeue. The
//! [`Telemetry`] component owns their state; its handlers take only the port they act on
//! and the packet's descriptor.

pub mod int;
pub mod tcd;

use crate::base::ids::PortId;
use crate::base::units::Time;
use crate::kernel::packet::{Desc, FLAG_INT};
use crate::model::fabric::port::N_PRIO;
use crate::model::fabric::Port;
use int::IntTable;
use tcd::{TcdDetector, TcdMark};

/// Telemetry state of a run.
#[derive(Clone, Debug, Default)]
pub struct Telemetry {
    /// TCD detector per (port, priority), index `port * 8 + prio` (empty when TCD is off).
    pub tcd: Vec<TcdDetector>,
    /// INT records of packets that carry them (empty unless a flow asks for INT), by
    /// arena slot: one table per shard, as each shard has its own packet arena
    /// ([`crate::sim::shards`]); one in a run on one thread.
    pub int: Vec<IntTable>,
}

impl Telemetry {
    /// Heap bytes of the TCD detectors and INT records (by capacity).
    pub fn heap_bytes(&self) -> u64 {
        crate::base::memory::vec_bytes(&self.tcd)
            + self.int.iter().map(IntTable::heap_bytes).sum::<u64>()
    }

    /// A PFC frame for `prio` reached egress `port` at `now`: a pause until `until`, or a
    /// resume when `until` is `None`. TCD reads the port's ON/OFF periods from these.
    #[inline]
    pub fn on_pfc_frame(&mut self, port: PortId, prio: usize, now: Time, until: Option<Time>) {
        if self.tcd.is_empty() || prio >= N_PRIO {
            return;
        }
        let t = &mut self.tcd[port.idx() * N_PRIO + prio];
        match until {
            None => t.on_resume(now),
            Some(u) => t.on_pause_for(now, u),
        }
    }

    /// True if a dequeued data packet gets telemetry (TCD runs, or it collects INT).
    #[inline(always)]
    pub fn applies_to(&self, pkt: &Desc) -> bool {
        !self.tcd.is_empty() || pkt.flags & FLAG_INT != 0
    }

    /// Data packet `pkt` of `wire` bytes leaves the queue of priority `prio` at switch
    /// egress `port` (`port_ref`) of shard `shard`: TCD merges its mark, INT appends a
    /// record.
    #[inline]
    #[allow(clippy::too_many_arguments)]
    pub fn on_data_dequeue(
        &mut self,
        shard: u32,
        now: Time,
        port: PortId,
        port_ref: &mut Port,
        prio: usize,
        wire: u64,
        pkt: &mut Desc,
    ) {
        if !self.tcd.is_empty() {
            let q = port_ref.queues[prio].bytes;
            let m = self.tcd[port.idx() * N_PRIO + prio].on_dequeue(now, q);
            match m {
                TcdMark::Ce => port_ref.stats.tcd_ce += 1,
                TcdMark::Ue => port_ref.stats.tcd_ue += 1,
                TcdMark::None => {}
            }
            pkt.set_mark(TcdMark::from_bits(pkt.mark()).merge(m).to_bits());
        }
        if pkt.flags & FLAG_INT != 0 {
            self.int[shard as usize].stamp(now, port_ref, wire, pkt);
        }
    }
}
