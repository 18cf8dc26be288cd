//! What a run will cost before it runs: its events and wall time, estimated from the
//! built model's size (`fabricsim check` prints them).
//!
//! Wall time follows events (the event loop does a bounded amount of work per event),
//! and events follow packets and hops: every packet crossing a link is a link arrival,
//! and a port that is busy when a packet reaches it wakes once more to send it. So:
//!
//! ```text
//! packets(flow)  = ceil(bytes(flow) / frame(flow))
//! packet-hops    = sum over flows of packets x hops + ceil(packets / acked) x hops
//! events         = EVENTS_PER_PACKET_HOP x packet-hops x resend + EVENTS_PER_FLOW x flows
//!                  + hardware collectives' messages x (hops + 1)
//! wall time      = events / EVENTS_PER_SEC (one thread)
//! ```
//!
//! `frame(flow)` is `mtu`, or the flow's segment (a collective's `segment`), and `acked`
//! the frames one ACK answers: `ack_every` packets' worth, at least one frame.
//! `hops` is the mean path length (links from the sending NIC to the receiving one, as
//! the routing tables send the flow) over up to [`PATH_SAMPLE`] flows spread over the
//! list. `bytes(flow)` is the flow's size, cut where `max_time` ends the run first:
//! no host can send or receive more than its line rate for `max_time`, so a host's flows
//! are scaled down together to that (the tighter of the sender's and the receiver's
//! cut). CNPs, PFC frames and timers are not counted: they are a fraction of the data's
//! events on the shipped scenarios, which the 2x the estimate is held to absorbs.
//! `resend` is 1, or [`RESEND_ALLOWANCE`] where go-back-N will resend much of the data:
//! bit errors on links without link-level retransmission, or packets sprayed one by one
//! (`spray_rr`, `spray_random`) over paths that differ in rate or delay, at build or by
//! faults during the run (every reordering is a NACK).
//! A run that stalls (a PFC deadlock, which `pfc-deadlock.toml` sets out to show) ends
//! long before its bytes are delivered: the estimate is of a run that delivers them.
//!
//! The constants were fitted on the shipped scenarios as the golden test cuts them
//! (`crates/fabricsim-cli/tests/golden.rs` holds every run that completes to within 2x):
//! [`EVENTS_PER_PACKET_HOP`] and [`EVENTS_PER_FLOW`] from their `summary.json`
//! (`events`, `packet_hops`: 1.1 to 1.9 events per packet-hop for nine runs in ten, 1.5
//! the median), [`RESEND_ALLOWANCE`] from the runs with bit errors or spraying (2.3x to
//! 5.5x the packet-hops of a lossless delivery). [`EVENTS_PER_SEC`] is the `fabricsim
//! bench` fat trees' events per second on one core of the 2-core reference machine
//! when it was fitted: 11.8 M at k = 8, whose model fits in the caches, 3.8 M at k = 16;
//! the estimate takes about their geometric mean, so the wall time is for that
//! machine, on one thread, within the events' 2x and a factor of two either way for the
//! model's size.

use crate::base::units::Time;
use crate::sim::Simulation;

/// Events per packet crossing a link: its arrival, and a port wakeup for the packets
/// that find their port busy.
pub const EVENTS_PER_PACKET_HOP: f64 = 1.55;
/// Events per flow besides its packets: its start, its timers, its completion.
pub const EVENTS_PER_FLOW: f64 = 6.0;
/// Events per second of one core (the reference machine, `fabricsim bench`).
pub const EVENTS_PER_SEC: f64 = 6.5e6;
/// Data sent per byte delivered where go-back-N resends much of it (bit errors without
/// link-level retransmission, per-packet spraying).
pub const RESEND_ALLOWANCE: f64 = 3.0;
/// Flows whose paths are walked for the mean hop count.
pub const PATH_SAMPLE: usize = 4096;

/// A run's estimated cost.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Estimate {
    /// Events.
    pub events: u64,
    /// Packets crossing links (data and ACKs).
    pub packet_hops: u64,
    /// Mean hops of a flow's path.
    pub hops: f64,
    /// Wall seconds on one thread of the reference machine.
    pub wall_seconds: f64,
}

/// The estimate for `sim`, built and not run (see the module documentation).
pub fn estimate(sim: &Simulation) -> Estimate {
    let flows = &sim.nics.flows;
    let p = &sim.ctx.params;
    let mtu = p.mtu.max(1);
    let hops = mean_hops(sim);
    let bytes = bytes_by_max_time(sim);
    let mut packet_hops = 0.0;
    for (b, f) in bytes.iter().zip(flows) {
        // A segment is one frame, and one ACK stands for `ack_every` packets' worth.
        let frame = f.frame_payload(mtu);
        let packets = (b / frame as f64).ceil();
        let per_ack = (u64::from(p.ack_every.max(1)) * mtu / frame).max(1);
        let acks = (packets / per_ack as f64).ceil();
        packet_hops += (packets + acks) * hops;
    }
    if resends(sim) {
        packet_hops *= RESEND_ALLOWANCE;
    }
    let mut events = EVENTS_PER_PACKET_HOP * packet_hops + EVENTS_PER_FLOW * flows.len() as f64;
    if let Some(hw) = &sim.nics.hw {
        // Each rank sends its contribution up and gets the result down, per iteration,
        // over about the hops of a flow.
        let messages: f64 = (hw.colls.iter())
            .map(|c| 2.0 * c.spec.ranks.len() as f64 * c.spec.repeat.max(1) as f64)
            .sum();
        packet_hops += messages * hops.max(2.0);
        events += messages * (hops.max(2.0) + 1.0);
    }
    Estimate {
        events: events as u64,
        packet_hops: packet_hops as u64,
        hops,
        wall_seconds: events / EVENTS_PER_SEC,
    }
}

/// Whether go-back-N will resend much of the data: links with bit errors and no
/// link-level retransmission, or packets sprayed one by one over paths that differ (a
/// stage of a sampled flow's paths whose links differ in rate or delay, or faults that
/// degrade or take down links as the run goes). Spraying over equal paths reorders
/// little.
fn resends(sim: &Simulation) -> bool {
    use crate::model::routing::LbAlgorithm;
    let lossy_links = sim
        .fabric
        .faults
        .as_ref()
        .is_some_and(|f| !f.llr && f.links.iter().any(|l| !l.errors.error_free()));
    let sprays = matches!(
        sim.fabric.lb,
        LbAlgorithm::SprayRandom | LbAlgorithm::SprayRr
    );
    let unequal = || {
        let faults = (sim.fabric.faults.as_ref()).is_some_and(|f| !f.faults.is_empty());
        let n = sim.nics.flows.len();
        let step = n.div_ceil(64).max(1);
        faults
            || (0..n).step_by(step).any(|i| {
                sim.stages_of(i).iter().any(|stage| {
                    (stage.windows(2)).any(|w| w[0].bps != w[1].bps || w[0].delay != w[1].delay)
                })
            })
    };
    lossy_links || (sprays && unequal())
}

/// The mean path length of up to [`PATH_SAMPLE`] flows spread evenly over the list (2,
/// NIC to switch to NIC, when no path is found).
fn mean_hops(sim: &Simulation) -> f64 {
    let n = sim.nics.flows.len();
    let step = n.div_ceil(PATH_SAMPLE).max(1);
    let (mut sum, mut count) = (0usize, 0usize);
    for i in (0..n).step_by(step) {
        let h = sim.path_of(i).len();
        if h > 0 {
            sum += h;
            count += 1;
        }
    }
    if count == 0 {
        // Hardware collectives have no flows: a NIC, a leaf, a spine, a leaf, a NIC.
        return if n == 0 { 4.0 } else { 2.0 };
    }
    sum as f64 / count as f64
}

/// Each flow's bytes, scaled down where its sender or receiver could not move its flows'
/// bytes by `max_time` at line rate (flows starting at or after `max_time` move none).
fn bytes_by_max_time(sim: &Simulation) -> Vec<f64> {
    let flows = &sim.nics.flows;
    let end: Time = sim.ctx.params.max_time;
    let hosts = sim.nics.hosts.len();
    let (mut out_bytes, mut in_bytes) = (vec![0.0f64; hosts], vec![0.0f64; hosts]);
    let live = |start: Time| start < end;
    for f in flows.iter().filter(|f| live(f.spec.start)) {
        out_bytes[f.spec.src as usize] += f.spec.size as f64;
        in_bytes[f.spec.dst as usize] += f.spec.size as f64;
    }
    let room = |h: usize| {
        let port = sim.nics.hosts[h].port.idx();
        // bytes per second x seconds; rates are bits per second, times picoseconds.
        sim.fabric.ports[port].ser_rate.0 as f64 / 8.0 * end as f64 / 1e12
    };
    let scale = |total: f64, h: usize| {
        if total > 0.0 {
            (room(h) / total).min(1.0)
        } else {
            1.0
        }
    };
    let out_scale: Vec<f64> = (0..hosts).map(|h| scale(out_bytes[h], h)).collect();
    let in_scale: Vec<f64> = (0..hosts).map(|h| scale(in_bytes[h], h)).collect();
    flows
        .iter()
        .map(|f| {
            if !live(f.spec.start) {
                return 0.0;
            }
            let s = out_scale[f.spec.src as usize].min(in_scale[f.spec.dst as usize]);
            f.spec.size as f64 * s
        })
        .collect()
}
