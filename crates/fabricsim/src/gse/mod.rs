//! GSE, Global Scheduled Ethernet (document 000), modelled at the edge switches acting as
//! GSPs (global scheduling processors) in front of plain NICs:
//! - [`pktc`]: packet containers, the source GSP's load balancer;
//! - [`reorder`]: the destination GSP's reorder buffer;
//! - [`dgsq`]: virtual output queues and the request/grant scheduler.
//!
//! The state machines here are pure; [`crate::sim`] calls them where a packet enters or
//! leaves a GSP. Spine (GSF) switches forward packets by ECMP on a hash of the container,
//! so a container keeps to one path end to end.

pub mod dgsq;
mod gsp;
pub mod pktc;
pub mod reorder;

use crate::scenario::config::GseCfg;
use crate::units::{Rate, Time};

/// GSE state of a run.
#[derive(Clone, Debug, Default)]
pub struct Gse {
    /// Settings.
    pub cfg: GseCfg,
    /// DGSQ on.
    pub dgsq: bool,
    /// GSP index of each switch (`None`: not a GSP).
    pub gsp_of_switch: Vec<Option<u32>>,
    /// GSP of each host (its edge switch; `None` for a host behind no switch).
    pub gsp_of_host: Vec<Option<u32>>,
    /// Switch of each GSP.
    pub switch_of_gsp: Vec<u32>,
    /// Hosts.
    pub n_hosts: usize,
    /// Source container state per (GSP, destination host).
    pub tx: Vec<pktc::TxStream>,
    /// Reorder state per (source GSP, destination host).
    pub rx: Vec<reorder::RxStream>,
    /// VOQs per (GSP, destination host) (DGSQ only).
    pub voq: Vec<dgsq::Voq>,
    /// Grant schedulers per destination host (DGSQ only).
    pub sched: Vec<dgsq::Scheduler>,
    /// Round-robin cursor of each GSP's uplink choice.
    pub rr: Vec<u32>,
    /// Reorder-buffer bytes held per GSP now.
    pub held_bytes: Vec<u64>,
    /// DGSQ: per fabric-facing port of a destination GSP, payload bytes granted to come in
    /// through it and not yet arrived (grants name the least-loaded one, so that grants
    /// respect the spine links' capacity, not only the destination port's).
    pub via_out: Vec<u64>,
    /// Statistics.
    pub stats: GseStats,
}

/// What GSE did during a run.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct GseStats {
    /// Containers opened.
    pub containers: u64,
    /// Packets that waited in a reorder buffer.
    pub reordered_packets: u64,
    /// Total time packets waited in reorder buffers (ps).
    pub reorder_wait_ps: u64,
    /// Longest wait in a reorder buffer (ps).
    pub reorder_wait_max_ps: u64,
    /// Most bytes held in one GSP's reorder buffers at once.
    pub reorder_max_bytes: u64,
    /// Packets that arrived after a later packet of their own container (a container
    /// split over paths; never happens when PKTC works).
    pub intra_container_gaps: u64,
    /// Times a stream skipped a missing packet after the timeout.
    pub reorder_skips: u64,
    /// REQUEST packets sent.
    pub requests: u64,
    /// GRANT packets sent.
    pub grants: u64,
    /// Most payload bytes waiting in one VOQ.
    pub voq_max_bytes: u64,
}

impl Gse {
    /// Index of the (gsp, host) stream.
    #[inline]
    pub fn stream(&self, gsp: u32, host: u32) -> usize {
        gsp as usize * self.n_hosts + host as usize
    }

    /// Time to send `payload` bytes of containers at (1 - eps) of `rate`, counting the
    /// per-packet RoCE and GSE headers of full packets of `mtu` payload.
    pub fn grant_time(&self, payload: u64, rate: Rate, mtu: u64, header: u64) -> Time {
        let wire = payload as f64 * (mtu + header + self.cfg.header) as f64 / mtu as f64;
        let r = rate.0 as f64 * (1.0 - self.cfg.eps);
        (wire * 8.0 / r * 1e12).ceil() as Time
    }
}
