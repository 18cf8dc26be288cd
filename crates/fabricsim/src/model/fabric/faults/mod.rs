//! Faults, for every fabric: links and switches going down and coming back, links losing
//! lanes, bit errors with optional FEC, and link-level retransmission (documents 000 and
//! 003).
//!
//! Document 003 layers the Sunway interconnect's reliability: a bit error rate below
//! 1e-12, RS(528,514) FEC correcting 7 ten-bit symbols per codeword, CRC32 link-level
//! retransmission, lanes degrading 4 -> 2 -> 1, rerouting, and transport retransmission
//! last. Document 000 names bit error rates up to 1e-4 at 800G/1.6T PAM4 as an open
//! problem for Ethernet fabrics. This module gives every fabric those layers, each in
//! its own file:
//!
//! - [`config`]: the `[[fault]]` entries and `[fabric.reliability]`, their checks, and
//!   their resolution against the topology's names ([`config::FaultPlan`]);
//! - [`link_state`]: a link going down loses the frames on its wire (counted when each
//!   would have arrived) and flushes the switch egress queues that fed it; its ports start
//!   nothing until it comes back; packets routed to a down port are dropped and counted;
//!   a switch going down takes all its links down. [`Fabric::port_up`] is the cheap
//!   query routing schemes use to skip a down port at once;
//! - [`reconverge`]: Ethernet's ECMP tables are rebuilt from the links routing knows to be
//!   up, `reconvergence_delay` after each change; until then the old tables stand;
//! - [`ber`]: the frame error rate of a frame from the pre-FEC bit error rate, without
//!   FEC or with RS(528,514) (the formulas are in that module);
//! - [`llr`]: CRC32 link-level retransmission, go-back-N from the sender's replay buffer;
//! - [`lanes`]: lane degrade, the rate x lanes / 4 in both directions.
//!
//! Without LLR a corrupted frame fails the receiver's FCS check and is dropped; the
//! transport (go-back-N RDMA RC and its RTO) recovers every loss. Bit errors strike the
//! frames that carry a flow's bytes or its feedback (data, ACK, NACK, CNP). \[recon\]
//! MAC control (PFC) frames and GSE's REQUEST/GRANT messages are spared: fabricsim models
//! none of the recovery real hardware has for them (a lost XON holds a priority for a
//! whole pause time; GSE's scheduler has no request retry here), so corrupting them would
//! measure gaps of the model rather than of the fabric. The same holds for a link going
//! down: GSE scheduler messages on its wire are lost like any frame, and a GSP's own
//! messages queued toward it wait for it to come back.
//!
//! Cost: a run with no `[[fault]]` and no bit errors builds no fault state
//! ([`config::FaultPlan::active`]) and its packets take the old path; what the faults
//! add there is a byte test on the link line every arrival reads (`Link::watched`) and
//! a comparison on the port line every enqueue reads (a down port is one whose
//! transmitter is busy until the end of time, [`crate::model::fabric::port::DOWN`], so that
//! starting a frame and passing a packet straight through need no test of their own).
//!
//! Accounting: every frame a port sends (replays included) is delivered, corrupted,
//! discarded by a replay, lost on a link going down, or still on the wire; every data
//! packet a NIC sends arrives, is dropped by a switch (congestion, or a fault: a down
//! port, no route, a flushed queue), is lost (corrupted without LLR, or on a link going
//! down), or is still in flight. `crate::analysis::invariants` checks both.

pub mod ber;
pub mod config;
pub mod lanes;
pub mod link_state;
pub mod llr;
pub mod reconverge;

use crate::base::ids::{LinkId, PortId};
use crate::base::units::{Rate, Time};
use crate::kernel::ctx::Ctx;
use crate::kernel::events::Event;
use crate::kernel::packet::{Desc, PacketKind};
use crate::model::fabric::Fabric;
use crate::model::fabric::{Link, Node, Port};
use config::{FaultAction, FaultPlan, FecMode, PlannedFault};
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use serde::Serialize;
use std::collections::VecDeque;

/// The faults state of one direction of a link (indexed like the link: by the port that
/// feeds it).
#[derive(Clone, Debug)]
pub struct LinkFaults {
    /// Pre-FEC bit error rate.
    pub ber: f64,
    /// Frame error rates (after FEC, if any).
    pub errors: ber::FrameErrors,
    /// Draws of the corruption coin, seeded from (run seed, link); only on links with
    /// errors.
    rng: Option<Box<ChaCha8Rng>>,
    /// The next `lose_next` frames of the ring were on the wire when the link went down:
    /// lost when they would have arrived.
    pub(crate) lose_next: u32,
    /// LLR, the sender's replay ring: frames sent whose fate on the wire is not drawn
    /// yet, with the arrival they will have if they get through, oldest first (see
    /// `llr`). Empty on links that cannot replay.
    pub(crate) wire: VecDeque<(Time, Desc)>,
    /// LLR: the head of `wire` was corrupted and waits for its replay, which the sender
    /// starts at `replay_at`.
    pub(crate) awaiting_replay: bool,
    pub(crate) replay_at: Time,
    /// LLR: the arrival of the last frame that left `wire` (frames held behind a replay
    /// arrive no earlier).
    pub(crate) last_out: Time,
    /// The receiving node's forwarding latency, which the link's delay includes: the
    /// receiving MAC sees a frame's CRC that much before its arrival.
    rx_latency: Time,
    /// From the receiving MAC back to the sender: the reverse link's delay less its own
    /// receiver's forwarding latency (an LLR replay request's way back).
    request_delay: Time,
    /// The port's line and serialization rates on 4 lanes.
    base_rate: Rate,
    base_ser_rate: Rate,
    /// Lanes in service (4, 2 or 1).
    pub lanes: u8,
    /// Down since then, if down now.
    pub down_since: Option<Time>,
    /// Time down before the current down period.
    pub down_ps: Time,
    /// Frames that arrived corrupted.
    pub corrupted: u64,
    /// Frames sent again from the replay buffer (LLR).
    pub replayed: u64,
    /// Frames whose copy on the wire was thrown away because a replay resent them
    /// (go-back-N: the frames behind a corrupted one).
    pub discarded: u64,
    /// Frames on the wire when the link went down.
    pub lost: u64,
    /// Packets dropped at the egress port of this link because the link was down (queued
    /// when it went down, or routed to it afterwards).
    pub dropped: u64,
}

impl LinkFaults {
    /// True when this link may replay frames: link-level retransmission (`llr`) on a link
    /// that corrupts frames. Nothing else of LLR's ever acts on another link.
    #[inline]
    pub fn can_replay(&self, llr: bool) -> bool {
        llr && self.rng.is_some()
    }

    /// Frames on the wire besides the link's ring: those of the sender's replay ring
    /// (LLR) whose fate is not drawn yet (a corrupted head awaiting its replay was
    /// counted as corrupted).
    pub fn undecided(&self) -> u64 {
        self.wire.len() as u64 - self.awaiting_replay as u64
    }

    /// Frames of the ring that will not be delivered: those lost on a link going down.
    pub(crate) fn dead_in_ring(&self) -> u64 {
        self.lose_next as u64
    }

    /// Time down up to `now`.
    pub fn down_until(&self, now: Time) -> Time {
        self.down_ps + self.down_since.map_or(0, |s| now.saturating_sub(s))
    }
}

/// One step of the fault timeline: a fault acting on the fabric, or routing catching up
/// with the faults that acted `reconvergence_delay` earlier.
#[derive(Clone, Debug)]
pub(crate) enum Step {
    /// Fault `i` (in time order) acts.
    Apply(u32),
    /// The routing tables learn of these faults and are rebuilt.
    Reconverge(Vec<u32>),
}

/// Which links are up, as the fabric has them or as routing knows them: a link is up
/// when no `link_down` holds it and neither end is a switch that is down.
#[derive(Clone, Debug)]
pub(crate) struct LinkView {
    /// Per graph link: held down by a `link_down`.
    cut: Vec<bool>,
    /// Per node: a switch that is down.
    switch_down: Vec<bool>,
}

impl LinkView {
    fn new(links: usize, nodes: usize) -> LinkView {
        LinkView {
            cut: vec![false; links],
            switch_down: vec![false; nodes],
        }
    }

    /// Applies `action`; returns the graph links whose state may have changed.
    fn apply(&mut self, action: FaultAction, cables: &Cables) -> Vec<usize> {
        match action {
            FaultAction::Link { link, up } => {
                self.cut[link] = !up;
                vec![link]
            }
            FaultAction::Switch { node, up } => {
                self.switch_down[node] = !up;
                cables.of_node[node].clone()
            }
            FaultAction::Lanes { .. } => Vec::new(),
        }
    }

    fn up(&self, c: usize, cables: &Cables) -> bool {
        let [a, b] = cables.nodes[c];
        !self.cut[c] && !self.switch_down[a] && !self.switch_down[b]
    }
}

/// The cables (graph links) of the fabric: their ports and end nodes.
#[derive(Clone, Debug)]
pub(crate) struct Cables {
    /// Per graph link: its two ports (one per direction).
    pub(crate) ports: Vec<[PortId; 2]>,
    /// Per graph link: its end nodes.
    nodes: Vec<[usize; 2]>,
    /// Per port: its graph link.
    pub(crate) of_port: Vec<u32>,
    /// Per node: its graph links.
    of_node: Vec<Vec<usize>>,
}

/// What a routing rebuild needs besides the fabric itself.
#[derive(Clone, Debug)]
pub(crate) struct RoutingInputs {
    pub(crate) switch_nodes: Vec<u32>,
    pub(crate) host_nodes: Vec<u32>,
    pub(crate) statics: Vec<(u32, u32, Vec<u32>)>,
    /// Steering rules (PXN), re-applied to every rebuilt table.
    pub(crate) steering: crate::model::routing::Steering,
    /// Switch tiers of a generalized fat tree (empty otherwise): its tables are up/down.
    pub(crate) tiers: Vec<u8>,
}

/// The faults model of a run: the timeline, the state of every link direction, and the
/// counts the invariants and the outputs read.
#[derive(Clone, Debug)]
pub struct FaultState {
    /// Per link direction (port id).
    pub links: Vec<LinkFaults>,
    /// The faults, in time order.
    pub faults: Vec<PlannedFault>,
    /// The timeline: (time, step), in the order its events are scheduled.
    pub(crate) steps: Vec<(Time, Step)>,
    pub(crate) cables: Cables,
    /// Links as the fabric has them, and as routing knows them.
    phys: LinkView,
    routed: LinkView,
    pub(crate) routing_inputs: RoutingInputs,
    /// Link-level retransmission on every link.
    pub llr: bool,
    /// FEC on every link.
    pub fec: FecMode,
    /// Data packets lost to faults, per flow (corrupted without LLR, lost on a link going
    /// down, dropped at a down port, without a route or flushed).
    pub flow_lost: Vec<u64>,
    /// Packets each switch dropped because of a fault (a down port, no route left, a
    /// queue flushed when its link went down); not in `Switch::drops`, which counts
    /// buffer drops.
    pub switch_drops: Vec<u64>,
    /// Faults that acted.
    pub applied: u64,
    /// Routing rebuilds.
    pub reconvergences: u64,
}

/// The `faults` section of `summary.json`.
#[derive(Clone, Debug, Default, Serialize)]
pub struct FaultSummary {
    /// `[[fault]]` entries.
    pub faults: usize,
    /// Faults that acted before the run ended.
    pub applied: u64,
    /// Routing rebuilds.
    pub reconvergences: u64,
    /// Links (cables) down at the end.
    pub links_down_at_end: usize,
    /// Time links were down, summed over cables (ns).
    pub link_down_ns: f64,
    /// FEC mode.
    pub fec: String,
    /// Link-level retransmission.
    pub llr: bool,
    /// Largest pre-FEC bit error rate of any link.
    pub ber_max: f64,
    /// Frames that arrived corrupted.
    pub frames_corrupted: u64,
    /// Frames sent again by LLR.
    pub frames_replayed: u64,
    /// Frames on the wire thrown away because a replay resent them.
    pub frames_discarded: u64,
    /// Frames on a link's wire when it went down.
    pub frames_lost_link_down: u64,
    /// Packets switches dropped because of a fault.
    pub packets_dropped: u64,
    /// Data packets lost to faults (the transport sent them again).
    pub data_packets_lost: u64,
}

impl FaultState {
    /// The faults state of a fabric whose ports and links are built, or `None` when the
    /// plan has nothing to do at run time. `port_of[i]` are the two ports of graph link
    /// `i`; `seed` seeds the links' corruption draws.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn build(
        plan: &FaultPlan,
        port_of: &[[u32; 2]],
        ports: &[Port],
        links: &mut [Link],
        nodes: &[Node],
        routing_inputs: RoutingInputs,
        flows: usize,
        switches: usize,
        forwarding: &[Time],
        seed: u64,
    ) -> Option<Box<FaultState>> {
        if !plan.active() {
            return None;
        }
        let n_nodes = nodes.len();
        let mut cables = Cables {
            ports: port_of
                .iter()
                .map(|&[a, b]| [PortId(a), PortId(b)])
                .collect(),
            nodes: port_of
                .iter()
                .map(|&[a, b]| [ports[a as usize].node.idx(), ports[b as usize].node.idx()])
                .collect(),
            of_port: vec![0; ports.len()],
            of_node: vec![Vec::new(); n_nodes],
        };
        for (c, &[a, b]) in port_of.iter().enumerate() {
            cables.of_port[a as usize] = c as u32;
            cables.of_port[b as usize] = c as u32;
            let [na, nb] = cables.nodes[c];
            cables.of_node[na].push(c);
            cables.of_node[nb].push(c);
        }
        // The forwarding latency folded into the delay of the link port `p` sends on.
        let fwd = |p: usize| forwarding[ports[ports[p].peer.idx()].node.idx()];
        let link_faults = (0..ports.len())
            .map(|p| {
                let back = &links[ports[p].peer.idx()];
                let c = cables.of_port[p] as usize;
                let ber = plan.ber[c];
                let errors = ber::FrameErrors::new(ber, plan.fec);
                let port = &ports[p];
                let name = format!("{}:{}/ber", nodes[port.node.idx()].name, port.local);
                LinkFaults {
                    ber,
                    errors,
                    rng: (!errors.error_free())
                        .then(|| Box::new(crate::base::seed::component_rng(seed, &name))),
                    lose_next: 0,
                    wire: VecDeque::new(),
                    awaiting_replay: false,
                    replay_at: 0,
                    last_out: 0,
                    rx_latency: fwd(p),
                    request_delay: back.delay.saturating_sub(fwd(ports[p].peer.idx())),
                    base_rate: port.rate,
                    base_ser_rate: port.ser_rate,
                    lanes: 4,
                    down_since: None,
                    down_ps: 0,
                    corrupted: 0,
                    replayed: 0,
                    discarded: 0,
                    lost: 0,
                    dropped: 0,
                }
            })
            .collect::<Vec<_>>();
        // Arrivals on links that may lose or corrupt frames take the checked path (with
        // LLR the sender draws the corruption, `llr`: only a link going down is left).
        let mut watched: Vec<bool> = (link_faults.iter())
            .map(|l| !l.errors.error_free() && !plan.llr)
            .collect();
        for f in &plan.faults {
            let cs = match f.action {
                FaultAction::Link { link, .. } => vec![link],
                FaultAction::Switch { node, .. } => cables.of_node[node].clone(),
                FaultAction::Lanes { .. } => Vec::new(),
            };
            for c in cs {
                for p in cables.ports[c] {
                    watched[p.idx()] = true;
                }
            }
        }
        for (l, w) in links.iter_mut().zip(watched) {
            l.watched = w;
        }
        Some(Box::new(FaultState {
            steps: timeline(&plan.faults, plan.reconvergence_delay),
            links: link_faults,
            faults: plan.faults.clone(),
            phys: LinkView::new(port_of.len(), n_nodes),
            routed: LinkView::new(port_of.len(), n_nodes),
            cables,
            routing_inputs,
            llr: plan.llr,
            fec: plan.fec,
            flow_lost: vec![0; flows],
            switch_drops: vec![0; switches],
            applied: 0,
            reconvergences: 0,
        }))
    }

    /// The `faults` section of `summary.json` at time `now`.
    pub fn summary(&self, now: Time) -> FaultSummary {
        let sum = |f: fn(&LinkFaults) -> u64| self.links.iter().map(f).sum::<u64>();
        let cable_ports = &self.cables.ports;
        FaultSummary {
            faults: self.faults.len(),
            applied: self.applied,
            reconvergences: self.reconvergences,
            links_down_at_end: (0..cable_ports.len())
                .filter(|&c| !self.phys.up(c, &self.cables))
                .count(),
            link_down_ns: cable_ports
                .iter()
                .map(|[a, _]| self.links[a.idx()].down_until(now))
                .sum::<Time>() as f64
                / 1000.0,
            fec: match self.fec {
                FecMode::None => "none".into(),
                FecMode::Rs528 => "rs528".into(),
            },
            llr: self.llr,
            ber_max: self.links.iter().map(|l| l.ber).fold(0.0, f64::max),
            frames_corrupted: sum(|l| l.corrupted),
            frames_replayed: sum(|l| l.replayed),
            frames_discarded: sum(|l| l.discarded),
            frames_lost_link_down: sum(|l| l.lost),
            packets_dropped: self.switch_drops.iter().sum(),
            data_packets_lost: self.flow_lost.iter().sum(),
        }
    }
}

/// The steps of the faults (sorted by time): each fault acts at its time; link and
/// switch faults reach routing `delay` later, those reaching it at one time in one
/// rebuild. Steps at one time keep this order: faults acting, then routing.
fn timeline(faults: &[PlannedFault], delay: Time) -> Vec<(Time, Step)> {
    let mut steps: Vec<(Time, u8, Step)> = Vec::new();
    let mut reconverge: Vec<(Time, Vec<u32>)> = Vec::new();
    for (i, f) in faults.iter().enumerate() {
        steps.push((f.at, 0, Step::Apply(i as u32)));
        if !matches!(f.action, FaultAction::Lanes { .. }) {
            let t = f.at.saturating_add(delay);
            match reconverge.last_mut() {
                Some((last, v)) if *last == t => v.push(i as u32),
                _ => reconverge.push((t, vec![i as u32])),
            }
        }
    }
    steps.extend(
        reconverge
            .into_iter()
            .map(|(t, v)| (t, 1, Step::Reconverge(v))),
    );
    // Stable: faults in their order, then the rebuilds.
    steps.sort_by_key(|&(t, k, _)| (t, k));
    steps.into_iter().map(|(t, _, s)| (t, s)).collect()
}

/// Frames bit errors strike: those carrying a flow's bytes or its feedback (see the
/// module docs for why the others are spared).
#[inline]
fn error_prone(kind: PacketKind) -> bool {
    matches!(
        kind,
        PacketKind::Data | PacketKind::Ack | PacketKind::Nack | PacketKind::Cnp
    )
}

/// The head of watched link `l` (`link`) arrives: it may have been on the wire when the
/// link went down (lost), or arrive corrupted (dropped; with LLR the sender drew it);
/// returns true when it gets through, and the caller delivers it as on any link. A free
/// function of the parts it needs, so that the arrival keeps its borrow of the link.
#[cold]
#[inline(never)]
pub(crate) fn head_gets_through(
    faults: &mut Option<Box<FaultState>>,
    ports: &[Port],
    ctx: &mut Ctx,
    l: LinkId,
    link: &mut Link,
) -> bool {
    let fs = faults
        .as_deref_mut()
        .expect("watched links belong to the faults model");
    let lf = &mut fs.links[l.idx()];
    if lf.lose_next > 0 {
        lf.lose_next -= 1;
        let (_, pkt) = link.ring.pop_front().expect("arrival on an empty link");
        schedule_head(ctx, l, link);
        lose_packet(&mut fs.flow_lost, ctx, pkt);
        return false;
    }
    let &(_, pkt) = link.ring.front().expect("arrival on an empty link");
    // With LLR the sender drew the frame's fate before it put it on the link (`llr`).
    if error_prone(pkt.kind()) && !fs.llr {
        if let Some(rng) = lf.rng.as_mut() {
            let bytes = pkt.wire() as u64 + ports[l.idx()].sec_extra as u64;
            if rng.gen::<f64>() < lf.errors.frame_error_rate(bytes) {
                // The receiver's FCS check fails: the frame is gone.
                lf.corrupted += 1;
                link.ring.pop_front();
                schedule_head(ctx, l, link);
                lose_packet(&mut fs.flow_lost, ctx, pkt);
                return false;
            }
        }
    }
    // Frames held behind a replay may carry arrival times already past.
    if let Some(next) = link.ring.get_mut(1) {
        next.0 = next.0.get().max(ctx.now).into();
    }
    true
}

/// Schedules the arrival of `link`'s new head, if any (no earlier than now: frames held
/// behind a replay have arrival times in the past).
fn schedule_head(ctx: &mut Ctx, l: LinkId, link: &Link) {
    if let Some(&(t, _)) = link.ring.front() {
        ctx.queue.push(t.get().max(ctx.now), Event::LinkArrive(l));
    }
}

/// A packet lost to a fault (corrupted without LLR, on the wire when its link went down,
/// dropped at a down port or without a route): counted against its flow, its slot
/// freed. A shard of a parallel run, which another may count the same flow in within the
/// same window, logs the flow instead; the logs are summed between windows.
fn lose_packet(flow_lost: &mut [u64], ctx: &mut Ctx, pkt: Desc) {
    if pkt.kind() == PacketKind::Data {
        if let Some(flow) = ctx.arena.get(pkt.id, pkt.kind(), ctx.now).payload.flow() {
            if ctx.outbox.is_empty() {
                flow_lost[flow.idx()] += 1;
            } else {
                ctx.flow_lost.push(flow.0);
            }
        }
    }
    ctx.arena.release(pkt.id);
}

impl Fabric {
    /// True while the link port `p` sends on is up. Cheap (one field of the port's first
    /// cache line): routing may ask it per packet.
    #[inline]
    pub fn port_up(&self, p: PortId) -> bool {
        self.ports[p].is_up()
    }

    /// Step `i` of the fault timeline. A port's work (what it flushes, sends or wakes)
    /// goes to the context of the shard owning its node, `ctxs[shard_of_node[node]]`: a
    /// parallel run takes the step between windows, on the whole model
    /// (`sim/shards/`); a run on one thread passes its one context and no shards.
    #[cold]
    #[inline(never)]
    pub(crate) fn on_fault_step(&mut self, ctxs: &mut [Ctx], shard_of_node: &[u32], i: u32) {
        let fs = self
            .faults
            .as_mut()
            .expect("fault events come from the faults model");
        match fs.steps[i as usize].1.clone() {
            Step::Apply(f) => {
                fs.applied += 1;
                let action = fs.faults[f as usize].action;
                match action {
                    FaultAction::Lanes { link, lanes } => self.set_lanes(link, lanes),
                    _ => self.apply_link_fault(ctxs, shard_of_node, action),
                }
            }
            Step::Reconverge(fs_idx) => self.reconverge(&fs_idx),
        }
    }

    /// Switch `s` has no route for `pkt` (arrived on `in_port`): with faults, its
    /// destination was cut off by them; without, an ordinary drop.
    #[cold]
    #[inline(never)]
    pub(crate) fn drop_unroutable(&mut self, ctx: &mut Ctx, pkt: Desc, in_port: PortId, s: u32) {
        if self.faults.is_none() {
            return self.drop_packet(ctx, pkt, in_port, s);
        }
        self.credits_of_dropped(ctx, &pkt, in_port);
        self.count_fault_drop(ctx, s, None, pkt);
    }

    /// A packet switch `s` dropped because of a fault (at the egress port of a down link,
    /// when there is one): counted against the switch, the link and the flow; its slot
    /// freed. The buffer is the caller's business.
    pub(crate) fn count_fault_drop(
        &mut self,
        ctx: &mut Ctx,
        s: u32,
        egress: Option<PortId>,
        pkt: Desc,
    ) {
        let fs = self.faults.as_mut().expect("faults model");
        fs.switch_drops[s as usize] += 1;
        if let Some(e) = egress {
            fs.links[e.idx()].dropped += 1;
        }
        lose_packet(&mut fs.flow_lost, ctx, pkt);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::units::US;

    #[test]
    fn the_timeline_acts_then_reconverges_once_per_instant() {
        let link = |link, up| FaultAction::Link { link, up };
        let faults = [
            PlannedFault {
                at: 10 * US,
                action: link(0, false),
            },
            PlannedFault {
                at: 10 * US,
                action: link(1, false),
            },
            PlannedFault {
                at: 12 * US,
                action: FaultAction::Lanes { link: 2, lanes: 2 },
            },
            PlannedFault {
                at: 15 * US,
                action: link(0, true),
            },
        ];
        let steps: Vec<(Time, String)> = timeline(&faults, 5 * US)
            .into_iter()
            .map(|(t, s)| (t / US, format!("{s:?}")))
            .collect();
        assert_eq!(
            steps,
            [
                (10, "Apply(0)".into()),
                (10, "Apply(1)".into()),
                (12, "Apply(2)".into()),
                (15, "Apply(3)".into()),
                (15, "Reconverge([0, 1])".into()),
                (20, "Reconverge([3])".into()),
            ]
        );
        // No delay: routing learns right after the fault acts.
        let steps = timeline(&faults[..1], 0);
        assert!(matches!(steps[1], (t, Step::Reconverge(_)) if t == 10 * US));
    }
}
