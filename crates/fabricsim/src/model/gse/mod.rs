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

pub use crate::model::routing::pktc;
pub mod reorder;

use crate::base::param::{Checked, Described, Param, ParamError};
use crate::base::units::serde_units as su;
use crate::base::units::{Rate, Time, US};
use serde::Deserialize;

/// GSE scheduling modes.
#[derive(Clone, Copy, Debug, Default, Deserialize, serde::Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum GseScheduling {
    /// Containers leave as soon as they are formed.
    #[default]
    None,
    /// DGSQ: a container leaves only with a grant from the destination port's scheduler.
    Dgsq,
}

/// GSE: PKTC containers, reordering at the destination GSP, DGSQ request/grant.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GseCfg {
    /// Container length in payload bytes (16 KiB holds four 4 KiB packets).
    #[serde(default = "d_container", deserialize_with = "su::bytes")]
    pub container: u64,
    /// GSE header bytes added to every data packet between GSPs.
    #[serde(default = "d_gse_header", deserialize_with = "su::bytes")]
    pub header: u64,
    /// `none` or `dgsq`.
    #[serde(default)]
    pub scheduling: GseScheduling,
    /// Grants are paced at (1 - eps) of the destination port's rate.
    #[serde(default = "d_eps")]
    pub eps: f64,
    /// A destination GSP waits this long for a missing packet before skipping it.
    #[serde(default = "d_reorder_timeout", deserialize_with = "su::time")]
    pub reorder_timeout: Time,
    /// Wire bytes of a REQUEST or GRANT.
    #[serde(default = "d_ctrl_bytes", deserialize_with = "su::bytes")]
    pub control_bytes: u64,
}

fn d_container() -> u64 {
    16 * 1024
}
fn d_gse_header() -> u64 {
    16
}
fn d_eps() -> f64 {
    0.02
}
fn d_reorder_timeout() -> Time {
    50 * US
}
fn d_ctrl_bytes() -> u64 {
    64
}

impl Default for GseCfg {
    fn default() -> Self {
        GseCfg {
            container: d_container(),
            header: d_gse_header(),
            scheduling: GseScheduling::None,
            eps: d_eps(),
            reorder_timeout: d_reorder_timeout(),
            control_bytes: d_ctrl_bytes(),
        }
    }
}

impl Described for GseCfg {
    const ABOUT: &'static str =
        "GSE with load_balance.algorithm = \"pktc\": containers, reordering, DGSQ";
    fn params() -> Vec<Param> {
        let d = GseCfg::default();
        vec![
            Param::bytes("container", d.container, "container payload bytes"),
            Param::plain(
                "header",
                d.header,
                "GSE header bytes on data packets between GSPs",
            ),
            Param::choice(
                "scheduling",
                &d.scheduling,
                "containers leave at once, or on a grant",
            ),
            Param::plain(
                "eps",
                d.eps,
                "grants are paced at (1 - eps) of the port rate",
            ),
            Param::time(
                "reorder_timeout",
                d.reorder_timeout,
                "wait for a missing packet before skipping it (at least 1ns)",
            ),
            Param::plain(
                "control_bytes",
                d.control_bytes,
                "wire bytes of a REQUEST or GRANT",
            ),
        ]
    }
}

impl GseCfg {
    /// Checks the settings; fields are named relative to `[fabric.gse]`.
    pub fn validate(&self) -> Checked {
        if self.container == 0 {
            return Err(ParamError::new("container", "must be at least 1 byte"));
        }
        if !(self.eps >= 0.0 && self.eps < 1.0) {
            return Err(ParamError::new("eps", "a fraction in [0, 1)"));
        }
        crate::base::floors::at_least(
            "reorder_timeout",
            self.reorder_timeout,
            crate::base::floors::TIMER,
            "the wait for a missing packet",
        )?;
        if self.control_bytes == 0 || self.control_bytes > 9000 {
            return Err(ParamError::new("control_bytes", "between 1 and 9000 bytes"));
        }
        if self.header > 1024 {
            return Err(ParamError::new("header", "at most 1024 bytes"));
        }
        Ok(())
    }
}

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
    /// Each host's NIC port (a grant is paced at its rate).
    pub nic_port: Vec<crate::base::ids::PortId>,
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
    /// A host of each GSP, to which the GSP's grants are addressed (any host behind it
    /// would do: the GSP takes the grant itself).
    pub host_of_gsp: Vec<u32>,
    /// Statistics, one set per shard of a parallel run (each GSP counts in its
    /// shard's; [`Gse::stats_total`] sums them).
    pub stats: Vec<GseStats>,
}

/// What GSE did during a run.
#[derive(Clone, Debug, Default, serde::Serialize, Deserialize)]
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

impl GseStats {
    /// `self` and `o` together: counts summed, maxima the larger.
    pub fn merged(&self, o: &GseStats) -> GseStats {
        GseStats {
            containers: self.containers + o.containers,
            reordered_packets: self.reordered_packets + o.reordered_packets,
            reorder_wait_ps: self.reorder_wait_ps + o.reorder_wait_ps,
            reorder_wait_max_ps: self.reorder_wait_max_ps.max(o.reorder_wait_max_ps),
            reorder_max_bytes: self.reorder_max_bytes.max(o.reorder_max_bytes),
            intra_container_gaps: self.intra_container_gaps + o.intra_container_gaps,
            reorder_skips: self.reorder_skips + o.reorder_skips,
            requests: self.requests + o.requests,
            grants: self.grants + o.grants,
            voq_max_bytes: self.voq_max_bytes.max(o.voq_max_bytes),
        }
    }
}

impl Gse {
    /// The run's statistics: every shard's together.
    pub fn stats_total(&self) -> GseStats {
        (self.stats.iter()).fold(GseStats::default(), |a, s| a.merged(s))
    }

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
