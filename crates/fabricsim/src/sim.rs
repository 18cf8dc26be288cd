//! The simulation: a scenario built into typed tables, and the event loop that runs it.
//!
//! Build once, then run: [`Simulation::build`] validates the scenario and turns it into
//! nodes, ports, links, switches, hosts, flows and routing tables; the loop never
//! re-validates. Components refer to each other by index. An event names the component it
//! wakes ([`Event`]); the handlers below are the only code that moves packets.
//!
//! Per packet and hop the work is: the link's arrival event, routing (a table slice and a
//! hash), buffer admission, a queue push, and, when the egress port is idle, the
//! transmission, which pushes the packet on the next link. A busy port schedules a single
//! wakeup for the end of its current frame. Nothing here allocates per packet: packets
//! live in the arena, queues and link rings reuse their capacity.

use crate::cc::hpcc::{IntHop, INT_BYTES_PER_HOP, MAX_INT_HOPS};
use crate::cc::{acc, dcqcn, hpcc, line_rate, timely, AckInfo, AnyCc, CongestionControl};
use crate::engine::{Event, EventQueue, MAX_INDEX};
use crate::fabric::buffer::{Admission, SharedBuffer};
use crate::fabric::ecn::RedMarker;
use crate::fabric::pfc::{pause_duration, PFC_FRAME_BYTES};
use crate::fabric::port::N_PRIO;
use crate::fabric::switch::Switch;
use crate::fabric::tcd::{TcdDetector, TcdMark, TcdParams};
use crate::fabric::{Link, Node, NodeKind, Port};
use crate::gse::reorder::Held;
use crate::gse::Gse;
use crate::packet::{
    Desc, Packet, PacketArena, PacketKind, ECN_CE, ECN_ECT, FLAG_INT, FLAG_ROUTED,
};
use crate::routing::{ecmp, spray, RoutingTable};
use crate::scenario::config::{CcAlgorithm, LbAlgorithm, Scenario, SecurityMode};
use crate::scenario::ScenarioError;
use crate::seed::{component_rng, component_seed};
use crate::stall::StallReport;
use crate::topology::{self, TopoGraph};
use crate::transport::rdma::{ideal_fct, Hop};
use crate::transport::{Flow, Host};
use crate::units::{ser_time_f, Rate, Time};
use crate::workload::{JobSpec, Workload};
use rand::Rng;
use std::path::Path;

/// Models with at least this many ports prefetch ahead of the event loop (their state
/// outgrows the L2 cache); smaller ones do not (measured on the fat-tree benchmarks: a
/// 12 % gain at k = 16, 6144 ports; a 15 % instruction overhead and no gain at k = 8).
const PREFETCH_MIN_PORTS: usize = 4096;

/// No port (a grant without a spine to come in by).
const NO_VIA: u32 = u32::MAX;

/// `Desc::in_port` of a packet a switch generated itself (charged to no ingress).
const LOCAL_PORT: u16 = u16::MAX;

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
    /// Lossless fabric.
    pub pfc: bool,
    /// PFC only on switch ports facing hosts.
    pub pfc_edge_only: bool,
    /// XOFF pause time in quanta.
    pub pause_quanta: u16,
    /// Load balancer.
    pub lb: LbAlgorithm,
    /// Stop time.
    pub max_time: Time,
    /// Stall timeout.
    pub stall_timeout: Time,
    /// Queue sampling interval.
    pub queue_interval: Option<Time>,
    /// Rate sampling interval.
    pub rate_interval: Option<Time>,
}

/// How a run ended.
#[derive(Clone, Debug, PartialEq)]
pub enum Outcome {
    /// Every flow finished.
    Completed,
    /// `max_time` came first.
    MaxTime,
    /// No progress for `stall_timeout` with flows unfinished.
    Stalled(StallReport),
    /// Nothing left to do but some flows never finished.
    Starved,
}

impl Outcome {
    /// Short name for tables.
    pub fn name(&self) -> &'static str {
        match self {
            Outcome::Completed => "completed",
            Outcome::MaxTime => "max_time",
            Outcome::Stalled(_) => "stalled",
            Outcome::Starved => "starved",
        }
    }
}

/// Progress of a running simulation, for progress bars.
#[derive(Clone, Copy, Debug)]
pub struct Progress {
    /// Simulated time.
    pub now: Time,
    /// Events processed.
    pub events: u64,
    /// Flows finished.
    pub flows_done: usize,
    /// Flows in total.
    pub flows_total: usize,
    /// The run's `max_time`.
    pub max_time: Time,
}

/// Global counters.
#[derive(Clone, Debug, Default)]
pub struct Counters {
    /// Packets that crossed a link (one per hop).
    pub packet_hops: u64,
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
}

/// One row of a queue-length time series.
#[derive(Clone, Copy, Debug)]
pub struct QueueSample {
    /// Time.
    pub t: Time,
    /// Port id.
    pub port: u32,
    /// Bytes queued.
    pub bytes: u64,
}

/// One row of a flow-rate time series.
#[derive(Clone, Copy, Debug)]
pub struct RateSample {
    /// Time.
    pub t: Time,
    /// Flow id.
    pub flow: u32,
    /// Congestion controller's rate (bps).
    pub rate_bps: f64,
    /// Bytes delivered in order per second over the last interval.
    pub goodput_bps: f64,
}

/// A job iteration as it runs.
#[derive(Clone, Debug)]
pub struct JobState {
    /// What it runs.
    pub spec: JobSpec,
    /// When it started (`None` until the iteration it waits for has finished).
    pub started: Option<Time>,
    /// When its last flow was fully received.
    pub finish: Option<Time>,
    /// Flows not yet finished.
    pub left: u32,
}

/// Flow dependencies in compressed form: the flows that wait for flow `i` are
/// `after[off[i]..off[i+1]]`; `pending[i]` counts what flow `i` still waits for (its
/// unfinished predecessors, plus one while its job iteration has not started).
#[derive(Clone, Debug, Default)]
struct Deps {
    off: Vec<u32>,
    after: Vec<u32>,
    pending: Vec<u32>,
    /// Job of each flow (`u32::MAX`: none).
    job: Vec<u32>,
    /// Jobs waiting for job `j`: `next_jobs[noff[j]..noff[j+1]]`.
    noff: Vec<u32>,
    next_jobs: Vec<u32>,
    /// Flows a job iteration's start releases (those with no predecessor inside it).
    root: Vec<bool>,
    /// The previous flow of each flow's queue pair (`u32::MAX`: none): a flow continues
    /// its queue pair's congestion-control state.
    prev_on_conn: Vec<u32>,
}

impl Deps {
    fn build(n: usize, edges: &[(u32, u32)], jobs: &[JobSpec], conn: &[Option<u64>]) -> Deps {
        let mut count = vec![0u32; n + 1];
        let mut pending = vec![0u32; n];
        for &(b, a) in edges {
            count[b as usize] += 1;
            pending[a as usize] += 1;
        }
        let mut off = vec![0u32; n + 1];
        for i in 0..n {
            off[i + 1] = off[i] + count[i];
        }
        let mut fill = off.clone();
        let mut after = vec![0u32; edges.len()];
        for &(b, a) in edges {
            after[fill[b as usize] as usize] = a;
            fill[b as usize] += 1;
        }
        let root: Vec<bool> = pending.iter().map(|&p| p == 0).collect();
        let mut job = vec![u32::MAX; n];
        let mut ncount = vec![0u32; jobs.len() + 1];
        for (j, js) in jobs.iter().enumerate() {
            for f in js.first_flow..js.first_flow + js.n_flows {
                job[f as usize] = j as u32;
                if js.after.is_some() && root[f as usize] {
                    pending[f as usize] += 1;
                }
            }
            if let Some(p) = js.after {
                ncount[p as usize] += 1;
            }
        }
        let mut noff = vec![0u32; jobs.len() + 1];
        for j in 0..jobs.len() {
            noff[j + 1] = noff[j] + ncount[j];
        }
        let mut nfill = noff.clone();
        let mut next_jobs = vec![0u32; noff[jobs.len()] as usize];
        for (j, js) in jobs.iter().enumerate() {
            if let Some(p) = js.after {
                next_jobs[nfill[p as usize] as usize] = j as u32;
                nfill[p as usize] += 1;
            }
        }
        let mut last: std::collections::HashMap<u64, u32> = Default::default();
        let mut prev_on_conn = vec![u32::MAX; n];
        for (i, k) in conn.iter().enumerate() {
            if let Some(k) = k {
                if let Some(p) = last.insert(*k, i as u32) {
                    prev_on_conn[i] = p;
                }
            }
        }
        Deps {
            off,
            after,
            pending,
            job,
            noff,
            next_jobs,
            root,
            prev_on_conn,
        }
    }
}

/// A built scenario, ready to run (and, after running, holding its results).
pub struct Simulation {
    /// Current simulated time.
    pub now: Time,
    queue: EventQueue,
    /// Packets.
    pub arena: PacketArena,
    /// All nodes.
    pub nodes: Vec<Node>,
    /// All ports (port i transmits on link i).
    pub ports: Vec<Port>,
    /// All links.
    pub links: Vec<Link>,
    /// Switches.
    pub switches: Vec<Switch>,
    /// Hosts (NICs).
    pub hosts: Vec<Host>,
    /// Flows.
    pub flows: Vec<Flow>,
    /// Ideal FCT of each flow.
    pub ideal: Vec<Time>,
    /// Routing tables.
    pub routing: RoutingTable,
    /// Resolved parameters.
    pub params: RunParams,
    /// Server of each host.
    pub server_of_host: Vec<u32>,
    /// Global counters.
    pub counters: Counters,
    /// Queue samples.
    pub queue_samples: Vec<QueueSample>,
    /// Rate samples.
    pub rate_samples: Vec<RateSample>,
    arrival_order: Vec<u32>,
    /// Start-after dependencies between flows.
    deps: Deps,
    /// Jobs (collective workloads).
    pub jobs: Vec<JobState>,
    next_arrival: usize,
    flows_done: usize,
    flows_started: usize,
    last_progress: Time,
    pfc_refresh_pending: Vec<bool>,
    node_is_switch: Vec<bool>,
    /// Switch ports whose peer is a host.
    edge_port: Vec<bool>,
    /// GSE state (PKTC load balancing; DGSQ).
    pub gse: Option<Box<Gse>>,
    started: bool,
    /// Look ahead in the event queue and prefetch (large models only: when everything
    /// fits in the cache the prefetches are pure overhead).
    prefetch: bool,
    /// Choose a packet's ECMP egress at the next switch when it is put on the link
    /// (plain ECMP only: the choice is a pure function of switch, destination and hash;
    /// large models only).
    route_ahead: bool,
    /// Scenario name.
    pub name: String,
    /// Seed of the run.
    pub seed: u64,
    /// INT records of packets that carry them, by arena slot (empty unless a flow asks
    /// for INT; grows with the arena, never per packet).
    int_tab: Vec<IntStack>,
    /// INT records of the packet being received (its slot is freed before the handlers).
    int_rx: IntStack,
    /// TCD detector per (port, priority), index `port * 8 + prio` (empty when TCD is off).
    pub tcd: Vec<TcdDetector>,
    /// Convergence analysis asked for in `[record.convergence]`.
    pub convergence: Option<crate::convergence::ConvergenceSpec>,
    /// Window analysis asked for in `[record.window]`.
    pub window: Option<crate::window::WindowSpec>,
}

/// The INT records a packet collected (data) or carries back (ACK).
#[derive(Clone, Copy, Debug, Default)]
pub struct IntStack {
    /// Records used.
    pub n: u8,
    /// One record per switch egress passed, in path order.
    pub hops: [IntHop; MAX_INT_HOPS],
}

/// (node, local index, peer port, rate, delay) of a port being built.
type PortInit = (u32, u32, u32, Rate, Time, SecurityMode);

/// PFC headroom of an ingress port fed at `rate` over a link of `delay`: 3 C delay / 8
/// (the bytes in flight on the cable while XOFF travels and takes effect), plus two
/// maximum frames being serialized and the pause frame itself.
fn default_headroom(rate: Rate, delay: Time, params: &RunParams) -> u64 {
    let bdp = (3.0 * rate.0 as f64 * delay as f64 / 8e12) as u64;
    bdp + 2 * (params.mtu + params.header) + PFC_FRAME_BYTES as u64
}

fn err(file: &str, field: &str, m: impl Into<String>) -> ScenarioError {
    ScenarioError::field(file, field, m)
}

impl Simulation {
    /// Validates `sc` and builds the runtime model. `file` names the scenario in errors and
    /// `base_dir` resolves workload files.
    pub fn build(sc: &Scenario, file: &str, base_dir: &Path) -> Result<Simulation, ScenarioError> {
        let g = topology::build(&sc.topology, file, base_dir)?;
        let t = &sc.transport;
        if t.mtu == 0 {
            return Err(err(file, "transport.mtu", "must be at least 1 byte"));
        }
        if t.mtu > 65_536 {
            return Err(err(
                file,
                "transport.mtu",
                format!("{} bytes: at most 64 KiB is allowed", t.mtu),
            ));
        }
        if t.ack_every == 0 {
            return Err(err(file, "transport.ack_every", "must be at least 1"));
        }
        if t.rto == 0 {
            return Err(err(file, "transport.rto", "must be positive"));
        }
        if t.ack_size < 1 {
            return Err(err(file, "transport.ack_size", "must be positive"));
        }
        if t.data_priority as usize >= N_PRIO || t.control_priority as usize >= N_PRIO {
            return Err(err(file, "transport.data_priority", "priorities are 0..7"));
        }
        if t.control_priority <= t.data_priority {
            return Err(err(
                file,
                "transport.control_priority",
                format!(
                    "must be above data_priority ({}): ACKs and CNPs are served strictly first",
                    t.data_priority
                ),
            ));
        }
        let f = &sc.fabric;
        let pkt_max = t.mtu + t.header;
        if f.buffer < 4 * pkt_max {
            return Err(err(
                file,
                "fabric.buffer",
                format!(
                    "{} bytes cannot hold even 4 packets of {} bytes (mtu + header)",
                    f.buffer, pkt_max
                ),
            ));
        }
        if !(f.pfc.alpha > 0.0 && f.pfc.alpha < 256.0) {
            return Err(err(
                file,
                "fabric.pfc.alpha",
                "must be a positive number below 256 (1/8 is usual)",
            ));
        }
        if f.pfc.threshold == crate::scenario::config::PfcThreshold::Static && f.pfc.xoff < pkt_max
        {
            return Err(err(
                file,
                "fabric.pfc.xoff",
                "the static XOFF threshold must hold at least one packet",
            ));
        }
        if let Some(p) = f.ecn.pmax {
            if !(0.0..=1.0).contains(&p) {
                return Err(err(
                    file,
                    "fabric.ecn.pmax",
                    "a probability between 0 and 1",
                ));
            }
        }
        if let (Some(a), Some(b)) = (f.ecn.kmin, f.ecn.kmax) {
            if a > b {
                return Err(err(file, "fabric.ecn.kmin", "must not exceed kmax"));
            }
        }
        let d = &sc.cc.dcqcn;
        if let Some(g) = d.g {
            if !(g > 0.0 && g <= 1.0) {
                return Err(err(
                    file,
                    "cc.dcqcn.g",
                    "a gain between 0 (exclusive) and 1",
                ));
            }
        }
        if d.timer == Some(0) {
            return Err(err(file, "cc.dcqcn.timer", "must be positive"));
        }
        if d.byte_counter == Some(0) {
            return Err(err(file, "cc.dcqcn.byte_counter", "must be positive"));
        }
        for (field, r) in [
            ("cc.dcqcn.rai", d.rai),
            ("cc.dcqcn.rhai", d.rhai),
            ("cc.dcqcn.rmin", d.rmin),
        ] {
            if r == Some(Rate(0)) {
                return Err(err(file, field, "must be positive"));
            }
        }
        for (fld, v) in [
            ("fabric.security.macsec_bytes", f.security.macsec_bytes),
            ("fabric.security.ipsec_bytes", f.security.ipsec_bytes),
        ] {
            if v > 4096 {
                return Err(err(
                    file,
                    fld,
                    format!("{v} bytes per frame: at most 4096 are allowed"),
                ));
            }
        }
        let gc = &f.gse;
        if gc.scheduling == crate::scenario::config::GseScheduling::Dgsq
            && f.load_balance.algorithm != LbAlgorithm::Pktc
        {
            return Err(err(
                file,
                "fabric.gse.scheduling",
                "dgsq schedules PKTC containers: set fabric.load_balance.algorithm = \"pktc\"",
            ));
        }
        if gc.container == 0 {
            return Err(err(file, "fabric.gse.container", "must be at least 1 byte"));
        }
        if !(gc.eps >= 0.0 && gc.eps < 1.0) {
            return Err(err(file, "fabric.gse.eps", "a fraction in [0, 1)"));
        }
        if gc.reorder_timeout == 0 {
            return Err(err(file, "fabric.gse.reorder_timeout", "must be positive"));
        }
        if gc.control_bytes == 0 || gc.control_bytes > 9000 {
            return Err(err(
                file,
                "fabric.gse.control_bytes",
                "between 1 and 9000 bytes",
            ));
        }
        if gc.header > 1024 {
            return Err(err(file, "fabric.gse.header", "at most 1024 bytes"));
        }
        if sc.stall_timeout == 0 {
            return Err(err(file, "stall_timeout", "must be positive"));
        }
        if sc.max_time == 0 {
            return Err(err(file, "max_time", "must be positive"));
        }
        for (fld, v) in [
            ("record.queue_interval", sc.record.queue_interval),
            ("record.rate_interval", sc.record.rate_interval),
        ] {
            if v == Some(0) {
                return Err(err(file, fld, "must be positive"));
            }
        }
        crate::cc::validate(&sc.cc, sc.workload.len(), file)?;
        if let Some(tq) = f.tcd.q_th {
            if tq == 0 {
                return Err(err(file, "fabric.tcd.q_th", "must be positive"));
            }
        }
        if f.tcd.t_on_max == Some(0) {
            return Err(err(file, "fabric.tcd.t_on_max", "must be positive"));
        }
        let wl = crate::workload::generate(&sc.workload, &g, sc.seed, base_dir, file)?;
        if wl.flows.len() > MAX_INDEX as usize {
            return Err(err(
                file,
                "workload",
                format!("{} flows: at most {} per run", wl.flows.len(), MAX_INDEX),
            ));
        }
        let params = RunParams {
            mtu: t.mtu,
            header: t.header,
            ack_size: t.ack_size as u32,
            ack_every: t.ack_every,
            rto: t.rto,
            data_prio: t.data_priority,
            ctrl_prio: t.control_priority,
            pfc: f.pfc.enabled,
            pfc_edge_only: f.pfc.scope == crate::scenario::config::PfcScope::Edge,
            pause_quanta: f.pfc.pause_quanta.max(1),
            lb: f.load_balance.algorithm,
            max_time: sc.max_time,
            stall_timeout: sc.stall_timeout,
            queue_interval: sc.record.queue_interval,
            rate_interval: sc.record.rate_interval.or(sc
                .record
                .convergence
                .as_ref()
                .map(|_| 10 * crate::units::US)),
        };
        let mut sim = Self::assemble(sc, &g, wl, params, file)?;
        if let Some(c) = &sc.record.convergence {
            let spec = crate::convergence::ConvergenceSpec::resolve(c, &sim).map_err(|m| {
                let (f, rest) = m.split_once(": ").unwrap_or(("", m.as_str()));
                err(file, &format!("record.convergence.{f}"), rest)
            })?;
            sim.convergence = Some(spec);
        }
        if let Some(w) = &sc.record.window {
            let fail = |m: String| {
                let (f, rest) = m.split_once(": ").unwrap_or(("", m.as_str()));
                err(file, &format!("record.window.{f}"), rest)
            };
            if !w.flows.is_empty() && sc.record.rate_interval.is_none() {
                return Err(fail(
                    "flows: goodput comes from the rate samples: set record.rate_interval".into(),
                ));
            }
            if !w.ports.is_empty() && sc.record.queue_interval.is_none() {
                return Err(fail(
                    "ports: queues come from the queue samples: set record.queue_interval".into(),
                ));
            }
            sim.window = Some(crate::window::WindowSpec::resolve(w, &sim).map_err(fail)?);
        }
        Ok(sim)
    }

    fn assemble(
        sc: &Scenario,
        g: &TopoGraph,
        wl: Workload,
        params: RunParams,
        file: &str,
    ) -> Result<Simulation, ScenarioError> {
        let Workload {
            flows: specs,
            deps,
            jobs: job_specs,
            conn,
            origin,
        } = wl;
        let n = g.nodes.len();
        // Ports: node by node, in link order.
        let mut node_links: Vec<Vec<(usize, bool)>> = vec![Vec::new(); n];
        for (i, l) in g.links.iter().enumerate() {
            node_links[l.a].push((i, true));
            node_links[l.b].push((i, false));
        }
        let mut port_of: Vec<[u32; 2]> = vec![[0, 0]; g.links.len()];
        let mut nodes = Vec::with_capacity(n);
        let mut next_port = 0u32;
        let mut n_sw = 0u32;
        let mut switch_nodes = Vec::new();
        for (i, ns) in g.nodes.iter().enumerate() {
            let kind = if ns.is_switch {
                n_sw += 1;
                switch_nodes.push(i as u32);
                NodeKind::Switch(n_sw - 1)
            } else {
                NodeKind::Host(g.hosts.iter().position(|&h| h == i).unwrap_or(0) as u32)
            };
            nodes.push(Node {
                name: ns.name.clone(),
                kind,
                first_port: next_port,
                n_ports: node_links[i].len() as u32,
            });
            for &(li, is_a) in &node_links[i] {
                port_of[li][if is_a { 0 } else { 1 }] = next_port;
                next_port += 1;
            }
        }
        if next_port > MAX_INDEX {
            return Err(err(
                file,
                "topology",
                format!("{next_port} ports: at most {MAX_INDEX} are supported"),
            ));
        }
        let mut ports: Vec<Port> = Vec::with_capacity(next_port as usize);
        let mut links: Vec<Link> = Vec::with_capacity(next_port as usize);
        // Fill ports in id order.
        let mut by_id: Vec<Option<PortInit>> = vec![None; next_port as usize];
        for (li, l) in g.links.iter().enumerate() {
            let [pa, pb] = port_of[li];
            let la = pa - nodes[l.a].first_port;
            let lb = pb - nodes[l.b].first_port;
            let sec = l.security.unwrap_or(sc.fabric.security.mode);
            by_id[pa as usize] = Some((l.a as u32, la, pb, l.rate, l.delay, sec));
            by_id[pb as usize] = Some((l.b as u32, lb, pa, l.rate, l.delay, sec));
        }
        let node_is_switch: Vec<bool> = g.nodes.iter().map(|x| x.is_switch).collect();
        let sw_lat = sc.fabric.switch_latency;
        let by_id: Vec<PortInit> = by_id
            .into_iter()
            .map(|e| e.expect("every port belongs to a link"))
            .collect();
        let secc = &sc.fabric.security;
        for &(node, local, peer, rate, delay, sec) in &by_id {
            let peer_node = by_id[peer as usize].0;
            let mut port = Port::new(node, nodes[node as usize].kind, local, peer, rate);
            let mut delay = delay;
            match sec {
                SecurityMode::None => {}
                SecurityMode::Macsec => port.set_security(secc.macsec_bytes as u16, rate),
                SecurityMode::Ipsec => port.set_security(secc.ipsec_bytes as u16, rate),
                SecurityMode::Physec => {
                    let f =
                        physec::overhead::ChannelOverhead::for_segment(secc.physec_segment_blocks)
                            .overhead_fraction();
                    let eff = ((rate.0 as f64) * (1.0 - f)).floor().max(1.0) as u64;
                    port.set_security(0, Rate(eff));
                    delay += secc.physec_latency;
                }
            }
            ports.push(port);
            links.push(Link::new(delay, peer, nodes[peer_node as usize].kind));
        }
        // The receiving node's forwarding latency is added to the link's delay (packets
        // reach the egress queue that much after their last bit arrives).
        for p in 0..ports.len() {
            let peer_node = ports[ports[p].peer as usize].node as usize;
            if node_is_switch[peer_node] {
                links[p].delay += sw_lat;
            }
        }
        // Switches.
        let mut switches = Vec::with_capacity(n_sw as usize);
        for &sn in &switch_nodes {
            let node = &nodes[sn as usize];
            let mut headroom = Vec::new();
            let mut ecn = Vec::new();
            for p in node.first_port..node.first_port + node.n_ports {
                let port = &ports[p as usize];
                // Bytes arrive on this port over the peer's link.
                let delay = links[port.peer as usize].delay;
                let h = sc
                    .fabric
                    .pfc
                    .headroom
                    .unwrap_or_else(|| default_headroom(port.rate, delay, &params));
                headroom.push(h);
                ecn.push(RedMarker::from_cfg(&sc.fabric.ecn, port.rate));
            }
            let buffer = SharedBuffer::new(sc.fabric.buffer, &sc.fabric.pfc, headroom);
            if params.pfc && buffer.set_aside() >= sc.fabric.buffer {
                return Err(err(
                    file,
                    "fabric.buffer",
                    format!(
                        "{} bytes at switch {} is less than its PFC headroom and reserve ({} bytes); raise the buffer or lower fabric.pfc.headroom/reserve",
                        sc.fabric.buffer,
                        node.name,
                        buffer.set_aside()
                    ),
                ));
            }
            switches.push(Switch {
                node: sn,
                first_port: node.first_port,
                n_ports: node.n_ports,
                buffer,
                ecn,
                rng: component_rng(sc.seed, &node.name),
                salt: component_seed(sc.seed, &format!("{}/ecmp", node.name)) as u32,
                rr: 0,
                drops: 0,
                generated: 0,
                consumed: 0,
                held: 0,
                voq_wire: 0,
            });
        }
        let host_nodes: Vec<u32> = g.hosts.iter().map(|&h| h as u32).collect();
        let statics: Vec<(u32, u32, Vec<u32>)> = g
            .routes
            .iter()
            .map(|r| {
                let sw = match nodes[r.at].kind {
                    NodeKind::Switch(s) => s,
                    NodeKind::Host(_) => 0,
                };
                let node = &nodes[r.at];
                let ps = r
                    .via
                    .iter()
                    .filter_map(|&v| {
                        (node.first_port..node.first_port + node.n_ports)
                            .find(|&p| ports[ports[p as usize].peer as usize].node as usize == v)
                    })
                    .collect();
                (sw, r.to_host as u32, ps)
            })
            .collect();
        let routing = RoutingTable::build(&nodes, &ports, &switch_nodes, &host_nodes, &statics)
            .map_err(|e| err(file, "topology", e.0))?;
        let hosts: Vec<Host> = host_nodes
            .iter()
            .map(|&hn| Host {
                node: hn,
                port: nodes[hn as usize].first_port,
                active: Vec::new(),
                rr: 0,
            })
            .collect();
        // Flows.
        let mut flows = Vec::with_capacity(specs.len());
        for (i, s) in specs.into_iter().enumerate() {
            let line = ports[hosts[s.src as usize].port as usize].rate;
            // The real controller is made once the flow's path (and base RTT) is known.
            let cc = AnyCc::LineRate(line_rate::LineRate { bps: line.0 as f64 });
            // RoCE NICs derive the UDP source port from the queue pair; here it is drawn
            // from the seed so that a different seed gives different ECMP paths.
            // Flows of one queue pair (steps of a collective) share its source port.
            let key = match conn[i] {
                Some(k) => k,
                None => component_seed(sc.seed, &format!("flow{i}")),
            };
            let sport = (key & 0xffff) as u16 | 0xc000;
            let hash = ecmp::five_tuple_hash(s.src, s.dst, sport);
            flows.push(Flow::new(s, hash, sport, cc));
        }
        let deps = Deps::build(flows.len(), &deps, &job_specs, &conn);
        let mut order: Vec<u32> = (0..flows.len() as u32)
            .filter(|&i| deps.pending[i as usize] == 0)
            .collect();
        order.sort_by_key(|&i| (flows[i as usize].spec.start, i));
        let jobs: Vec<JobState> = job_specs
            .into_iter()
            .map(|spec| JobState {
                left: spec.n_flows,
                started: if spec.after.is_none() {
                    Some(spec.start)
                } else {
                    None
                },
                finish: None,
                spec,
            })
            .collect();
        let n_ports = ports.len();
        let edge_port: Vec<bool> = ports
            .iter()
            .map(|p| {
                matches!(p.owner(), NodeKind::Switch(_))
                    && matches!(ports[p.peer as usize].owner(), NodeKind::Host(_))
            })
            .collect();
        let gse = if params.lb == LbAlgorithm::Pktc {
            Some(Box::new(Self::build_gse(
                sc, &nodes, &ports, &hosts, &switches,
            )))
        } else {
            None
        };
        let mut sim = Simulation {
            now: 0,
            queue: EventQueue::with_capacity(4 * n_ports + 1024),
            arena: PacketArena::default(),
            nodes,
            ports,
            links,
            switches,
            hosts,
            flows,
            ideal: Vec::new(),
            routing,
            params,
            server_of_host: g.server_of_host.clone(),
            counters: Counters::default(),
            queue_samples: Vec::new(),
            rate_samples: Vec::new(),
            arrival_order: order,
            deps,
            jobs,
            next_arrival: 0,
            flows_done: 0,
            flows_started: 0,
            last_progress: 0,
            pfc_refresh_pending: vec![false; n_ports],
            node_is_switch,
            edge_port,
            gse,
            started: false,
            prefetch: n_ports >= PREFETCH_MIN_PORTS,
            route_ahead: false,
            name: sc.name.clone().unwrap_or_else(|| "run".into()),
            seed: sc.seed,
            convergence: None,
            window: None,
            int_tab: Vec::new(),
            int_rx: IntStack::default(),
            tcd: Vec::new(),
        };
        let algs: Vec<CcAlgorithm> = (0..sim.flows.len())
            .map(|i| {
                let s = &sim.flows[i].spec;
                let w = origin.get(i).copied().unwrap_or(0) as usize;
                sc.cc
                    .class
                    .iter()
                    .find(|c| c.matches(w, s.size))
                    .map_or(sc.cc.algorithm, |c| c.algorithm)
            })
            .collect();
        // Base RTTs: per flow for TIMELY and ACC; HPCC's T is one value for the whole
        // network, the longest flow's, as in the paper and the ns-3 module.
        let rtts: Vec<Time> = (0..sim.flows.len())
            .map(|i| {
                if algs[i] == CcAlgorithm::None || algs[i] == CcAlgorithm::Dcqcn {
                    0
                } else {
                    sim.base_rtt_of(i)
                }
            })
            .collect();
        let hpcc_rtt = rtts
            .iter()
            .zip(&algs)
            .filter(|(_, &a)| a == CcAlgorithm::Hpcc)
            .map(|(&r, _)| r)
            .max()
            .unwrap_or(1);
        for i in 0..sim.flows.len() {
            let rtt = if algs[i] == CcAlgorithm::Hpcc {
                hpcc_rtt
            } else {
                rtts[i]
            };
            sim.flows[i].cc = sim.make_cc(sc, algs[i], i, rtt);
        }
        let tcd_on = sc
            .fabric
            .tcd
            .enabled
            .unwrap_or_else(|| sim.flows.iter().any(|f| f.cc.wants_tcd()));
        if tcd_on {
            // A pause can hold back what the downstream ingress admits before XOFF plus
            // its headroom (on this port's own link).
            sim.tcd = (0..sim.ports.len())
                .flat_map(|i| {
                    let p = &sim.ports[i];
                    let headroom = sc.fabric.pfc.headroom.unwrap_or_else(|| {
                        default_headroom(p.rate, sim.links[i].delay, &sim.params)
                    });
                    let tp =
                        TcdParams::resolve(&sc.fabric.tcd, p.rate, sc.fabric.pfc.xoff, headroom);
                    std::iter::repeat_n(TcdDetector::new(tp), N_PRIO)
                })
                .collect();
        }
        sim.ideal = (0..sim.flows.len()).map(|i| sim.ideal_fct_of(i)).collect();
        for (i, &ideal) in sim.ideal.iter().enumerate() {
            if ideal == 0 {
                let s = &sim.flows[i].spec;
                return Err(err(
                    file,
                    "workload",
                    format!("flow {i} ({} -> {}) has no route", s.src, s.dst),
                ));
            }
        }
        Ok(sim)
    }

    fn build_gse(
        sc: &Scenario,
        nodes: &[Node],
        ports: &[Port],
        hosts: &[Host],
        switches: &[Switch],
    ) -> Gse {
        let n_hosts = hosts.len();
        let mut gsp_of_switch = vec![u32::MAX; switches.len()];
        let mut switch_of_gsp = Vec::new();
        let mut gsp_of_host = vec![u32::MAX; n_hosts];
        for (h, host) in hosts.iter().enumerate() {
            let peer = ports[host.port as usize].peer;
            if let NodeKind::Switch(s) = nodes[ports[peer as usize].node as usize].kind {
                if gsp_of_switch[s as usize] == u32::MAX {
                    gsp_of_switch[s as usize] = switch_of_gsp.len() as u32;
                    switch_of_gsp.push(s);
                }
                gsp_of_host[h] = gsp_of_switch[s as usize];
            }
        }
        let n_gsp = switch_of_gsp.len();
        let dgsq = sc.fabric.gse.scheduling == crate::scenario::config::GseScheduling::Dgsq;
        Gse {
            cfg: sc.fabric.gse.clone(),
            dgsq,
            gsp_of_switch,
            gsp_of_host,
            switch_of_gsp,
            n_hosts,
            tx: vec![Default::default(); n_gsp * n_hosts],
            rx: vec![Default::default(); n_gsp * n_hosts],
            voq: if dgsq {
                vec![Default::default(); n_gsp * n_hosts]
            } else {
                Vec::new()
            },
            sched: if dgsq {
                (0..n_hosts)
                    .map(|_| crate::gse::dgsq::Scheduler::new(n_gsp))
                    .collect()
            } else {
                Vec::new()
            },
            rr: vec![0; n_gsp],
            held_bytes: vec![0; n_gsp],
            via_out: if dgsq {
                vec![0; ports.len()]
            } else {
                Vec::new()
            },
            stats: Default::default(),
        }
    }

    /// Hops (rate, delay after) of the path flow `i` takes, following the routing the
    /// switches apply (ECMP with the flow's hash; the first candidate under spraying).
    pub fn path_of(&self, i: usize) -> Vec<Hop> {
        let f = &self.flows[i];
        let mut hops = Vec::new();
        let mut port = self.hosts[f.spec.src as usize].port;
        for _ in 0..64 {
            let p = &self.ports[port as usize];
            hops.push(Hop {
                bps: p.ser_rate.0,
                delay: self.links[port as usize].delay,
                extra: p.sec_extra as u64,
            });
            let next_node = self.ports[self.ports[port as usize].peer as usize].node;
            match self.nodes[next_node as usize].kind {
                NodeKind::Host(h) => {
                    return if h == f.spec.dst { hops } else { Vec::new() };
                }
                NodeKind::Switch(s) => {
                    let c = self.routing.candidates(s, f.spec.dst);
                    if c.is_empty() {
                        return Vec::new();
                    }
                    let k = match self.params.lb {
                        LbAlgorithm::Ecmp => {
                            ecmp::pick(f.hash, self.switches[s as usize].salt, c.len())
                        }
                        _ => 0,
                    };
                    port = c[k];
                }
            }
        }
        Vec::new()
    }

    /// Round trip of one full-size packet and its ACK on flow `i`'s idle path.
    pub fn base_rtt_of(&self, i: usize) -> Time {
        let hops = self.path_of(i);
        if hops.is_empty() {
            return 1;
        }
        let mtu = self.params.mtu;
        let fwd = ideal_fct(mtu, mtu, self.params.header, &hops);
        let ack = self.params.ack_size as u64;
        let back: Time = hops
            .iter()
            .map(|h| Rate(h.bps).tx_time(ack + h.extra) + h.delay)
            .sum();
        (fwd + back).max(1)
    }

    /// The congestion controller of flow `i` running `alg` with base RTT `rtt`.
    fn make_cc(&self, sc: &Scenario, alg: CcAlgorithm, i: usize, rtt: Time) -> AnyCc {
        let s = &self.flows[i].spec;
        let line = self.ports[self.hosts[s.src as usize].port as usize].rate;
        match alg {
            CcAlgorithm::None => AnyCc::LineRate(line_rate::LineRate { bps: line.0 as f64 }),
            CcAlgorithm::Dcqcn => AnyCc::Dcqcn(dcqcn::Dcqcn::new(
                dcqcn::DcqcnParams::resolve(&sc.cc.dcqcn, line),
                line,
                s.start,
            )),
            CcAlgorithm::Timely => AnyCc::Timely(timely::Timely::new(
                timely::TimelyParams::resolve(&sc.cc.timely, line, rtt),
                line,
            )),
            CcAlgorithm::Hpcc => AnyCc::Hpcc(hpcc::Hpcc::new(hpcc::HpccParams::resolve(
                &sc.cc.hpcc,
                line,
                rtt,
            ))),
            CcAlgorithm::Acc | CcAlgorithm::AccNoHalt => {
                let mut p = acc::AccParams::resolve(&sc.cc.acc, line, rtt);
                if alg == CcAlgorithm::AccNoHalt {
                    p.halt = false;
                }
                AnyCc::Acc(acc::Acc::new(p, line))
            }
        }
    }

    fn ideal_fct_of(&self, i: usize) -> Time {
        let mut hops = self.path_of(i);
        if self.flows[i].cc.wants_int() {
            // Every switch egress adds one INT record to the frame.
            for (j, h) in hops.iter_mut().enumerate().skip(1) {
                h.extra += INT_BYTES_PER_HOP as u64 * j.min(MAX_INT_HOPS) as u64;
            }
        }
        ideal_fct(
            self.flows[i].spec.size,
            self.params.mtu,
            self.params.header,
            &hops,
        )
    }

    /// Job completion time of job iteration `j`, if it finished.
    pub fn jct(&self, j: usize) -> Option<Time> {
        let job = &self.jobs[j];
        Some(job.finish? - job.started?)
    }

    /// Analytic lower bound on job iteration `j`'s completion time on an idle fabric:
    /// the bytes each rank must send (`2(n-1)/n * S` for AllReduce, `(n-1)/n * S` for
    /// AlltoAll) at the slowest rank NIC's goodput rate (line rate x MTU / (MTU +
    /// headers)). Latency is left out, so the bound is reached only by large messages.
    pub fn job_lower_bound(&self, j: usize) -> Time {
        let spec = &self.jobs[j].spec;
        let (num, den) =
            crate::workload::collective::lower_bound_factor(spec.collective, spec.ranks.len());
        let rate = spec
            .ranks
            .iter()
            .map(|&h| self.ports[self.hosts[h as usize].port as usize].ser_rate.0)
            .min()
            .unwrap_or(1) as f64;
        let goodput = rate * self.params.mtu as f64 / (self.params.mtu + self.params.header) as f64;
        let bytes = spec.size as f64 * num as f64 / den as f64;
        (bytes * 8.0 / goodput * 1e12).floor() as Time
    }

    /// Flows finished so far.
    pub fn flows_done(&self) -> usize {
        self.flows_done
    }

    /// Events processed so far.
    pub fn events(&self) -> u64 {
        self.queue.popped()
    }

    /// Runs to completion, `max_time`, or a stall. `progress` is called every ~2^20 events.
    pub fn run(&mut self, progress: &mut dyn FnMut(&Progress)) -> Outcome {
        self.run_until(Time::MAX, progress)
            .expect("a run without a pause time ends with an outcome")
    }

    /// Runs until simulated time `until` (inclusive) or the end of the run, whichever is
    /// first. Returns `None` when paused at `until` (call again to continue), or the
    /// outcome when the run ended. Pausing does not change the result.
    pub fn run_until(
        &mut self,
        until: Time,
        progress: &mut dyn FnMut(&Progress),
    ) -> Option<Outcome> {
        if !self.started {
            self.started = true;
            // The event calendar's window should span a frame's serialization plus a
            // link delay (with some margin): nearly every event is scheduled that far
            // ahead at most.
            let frame = self.params.mtu + self.params.header;
            let delay = self.links.iter().map(|l| l.delay).max().unwrap_or(0);
            let ser = (self.ports.iter())
                .map(|p| p.tx_time(frame + p.sec_extra as u64))
                .max()
                .unwrap_or(0);
            self.queue.set_horizon((delay + ser) / 8 * 9);
            // Worth it only where the routing tables miss the cache (large models).
            self.route_ahead =
                self.prefetch && self.params.lb == LbAlgorithm::Ecmp && self.gse.is_none();
            self.queue.set_lookahead(self.prefetch);
            if !self.arrival_order.is_empty() {
                let t0 = self.flows[self.arrival_order[0] as usize].spec.start;
                self.queue.push(t0, Event::FlowArrivals);
            }
            if self.params.queue_interval.is_some() || self.params.rate_interval.is_some() {
                self.queue.push(0, Event::Sample);
            }
        }
        let total = self.flows.len();
        let stop = self.params.max_time.min(until);
        let mut tick = 0u32;
        let outcome = loop {
            if self.flows_done == total {
                break Outcome::Completed;
            }
            let Some((t, ev)) = self.queue.pop() else {
                break Outcome::Starved;
            };
            if t > stop {
                if t > self.params.max_time {
                    self.now = self.params.max_time;
                    break Outcome::MaxTime;
                }
                self.queue.unpop();
                self.now = until;
                return None;
            }
            if t.saturating_sub(self.last_progress) > self.params.stall_timeout
                && self.flows_started > self.flows_done
            {
                self.now = self.last_progress + self.params.stall_timeout;
                break Outcome::Stalled(crate::stall::diagnose(self));
            }
            self.now = t;
            if self.prefetch {
                self.prefetch_ahead();
            }
            match ev {
                Event::LinkArrive(l) => self.on_link_arrive(l),
                Event::PortWake(p) => {
                    if self.ports[p as usize].wake_at == t {
                        self.ports[p as usize].wake_at = Time::MAX;
                    }
                    self.try_transmit(p);
                }
                Event::FlowArrivals => self.on_flow_arrivals(),
                Event::Rto(f) => self.on_rto(f),
                Event::CnpTimer(f) => self.on_cnp_timer(f),
                Event::PfcRefresh(p) => self.on_pfc_refresh(p),
                Event::Sample => self.on_sample(),
                Event::CcTimer(_) => {}
                Event::Reorder(i) => self.on_reorder_timer(i),
                Event::Grant(h) => self.on_grant_timer(h),
            }
            tick = tick.wrapping_add(1);
            if tick & 0xf_ffff == 0 {
                progress(&self.progress());
            }
        };
        self.finish_accounting();
        progress(&self.progress());
        Some(outcome)
    }

    /// Starts loading what the next four events' handlers will read, one dependent step
    /// per event of look-ahead, so that each step reads only lines the previous step
    /// (one event earlier) started loading:
    /// - 3 ahead: the link, or the port;
    /// - 2 ahead: the link's first packets, or the port's queue and its link;
    /// - 1 ahead: for an arrival at a switch, the egress port, its queue and the ingress
    ///   counter (the egress was chosen upstream, see `route_ahead`), at a host the packet's
    ///   slot; for a port, its head packet, its link's tail and its switch's buffer;
    /// - next: for a port, the head packet's ingress counter and the port's ECN marker.
    #[inline(always)]
    fn prefetch_ahead(&self) {
        use crate::engine::peek_code;
        use crate::prefetch::prefetch;
        const LINK: u32 = 0;
        const PORT: u32 = 1;
        let ahead = self.queue.peek_codes();
        match peek_code(ahead[3]) {
            (LINK, l) => prefetch(&self.links[l as usize]),
            (PORT, p) => prefetch(&self.ports[p as usize]),
            _ => {}
        }
        match peek_code(ahead[2]) {
            (LINK, l) => {
                let ring = &self.links[l as usize].ring;
                if let Some(head) = ring.front() {
                    prefetch(head);
                }
                if let Some(next) = ring.get(1) {
                    prefetch(next);
                }
            }
            (PORT, p) => {
                let port = &self.ports[p as usize];
                if port.nonempty != 0 {
                    let prio = 7 - port.nonempty.leading_zeros() as usize;
                    prefetch(&port.queues[prio]);
                }
                prefetch(&self.links[p as usize]);
            }
            _ => {}
        }
        match peek_code(ahead[1]) {
            (LINK, l) => {
                let link = &self.links[l as usize];
                if let Some((_, d)) = link.ring.front() {
                    match link.to {
                        NodeKind::Host(_) => prefetch(self.arena.get(d.id)),
                        NodeKind::Switch(s) => {
                            // (Under spraying the ECMP choice is only a guess.)
                            let egress = if d.flags & FLAG_ROUTED != 0 {
                                Some(link.to_port.wrapping_add(d.in_port as i16 as u32))
                            } else {
                                self.ecmp_egress(s, d.dst, d.hash)
                            };
                            if let Some(e) = egress.and_then(|e| self.ports.get(e as usize)) {
                                prefetch(e);
                                prefetch(&e.queues[d.prio as usize & 7]);
                                let sw = &self.switches[s as usize];
                                sw.buffer.prefetch_counter(
                                    (link.to_port - sw.first_port) as usize,
                                    d.prio as usize,
                                );
                            }
                        }
                    }
                }
            }
            (PORT, p) => {
                let port = &self.ports[p as usize];
                if port.nonempty != 0 {
                    let prio = 7 - port.nonempty.leading_zeros() as usize;
                    if let Some(d) = port.queues[prio].q.front() {
                        prefetch(d);
                    }
                }
                if let Some(t) = self.links[p as usize].ring.back() {
                    prefetch(t);
                }
                if let NodeKind::Switch(s) = port.owner() {
                    prefetch(&self.switches[s as usize].buffer);
                }
            }
            _ => {}
        }
        if let (PORT, p) = peek_code(ahead[0]) {
            let port = &self.ports[p as usize];
            if let (NodeKind::Switch(s), true) = (port.owner(), port.nonempty != 0) {
                let prio = 7 - port.nonempty.leading_zeros() as usize;
                if let Some(d) = port.queues[prio].q.front() {
                    let sw = &self.switches[s as usize];
                    sw.buffer
                        .prefetch_counter(d.in_port as usize, d.prio as usize);
                    if let Some(m) = sw.ecn.get((p - sw.first_port) as usize) {
                        prefetch(m);
                    }
                }
            }
        }
    }

    /// Current progress.
    pub fn progress(&self) -> Progress {
        Progress {
            now: self.now,
            events: self.queue.popped(),
            flows_done: self.flows_done,
            flows_total: self.flows.len(),
            max_time: self.params.max_time,
        }
    }

    fn finish_accounting(&mut self) {
        let now = self.now;
        for p in &mut self.ports {
            if let Some(s) = p.pause_started.take() {
                let end = p.last_pause_end().min(now);
                p.stats.paused_ps += end.saturating_sub(s);
            }
        }
    }

    // ---- flows -------------------------------------------------------------------

    fn on_flow_arrivals(&mut self) {
        while self.next_arrival < self.arrival_order.len() {
            let fid = self.arrival_order[self.next_arrival];
            let f = &mut self.flows[fid as usize];
            if f.spec.start > self.now {
                self.queue.push(f.spec.start, Event::FlowArrivals);
                return;
            }
            self.next_arrival += 1;
            self.start_flow(fid);
        }
    }

    /// Starts flow `fid` now: its NIC begins sending it.
    fn start_flow(&mut self, fid: u32) {
        let now = self.now;
        let prev = self.deps.prev_on_conn[fid as usize];
        if prev != u32::MAX && self.flows[prev as usize].started {
            // The same queue pair: its congestion state carries over.
            let cc = self.flows[prev as usize].cc.clone();
            self.flows[fid as usize].cc = cc;
        }
        let f = &mut self.flows[fid as usize];
        f.spec.start = now;
        f.started = true;
        f.next_send = now;
        f.cc.on_start(now);
        self.flows_started += 1;
        self.last_progress = now;
        let h = f.spec.src as usize;
        self.hosts[h].active.push(fid);
        let port = self.hosts[h].port;
        self.schedule_wake(port, now);
    }

    /// Flow `fid` was fully received: release what waited for it and account its job.
    fn on_flow_finished(&mut self, fid: u32) {
        let now = self.now;
        let (a, b) = (
            self.deps.off[fid as usize] as usize,
            self.deps.off[fid as usize + 1] as usize,
        );
        for k in a..b {
            let nxt = self.deps.after[k];
            self.release(nxt);
        }
        let j = self.deps.job[fid as usize];
        if j == u32::MAX {
            return;
        }
        let job = &mut self.jobs[j as usize];
        job.left -= 1;
        if job.left > 0 {
            return;
        }
        job.finish = Some(now);
        let (a, b) = (
            self.deps.noff[j as usize] as usize,
            self.deps.noff[j as usize + 1] as usize,
        );
        for k in a..b {
            let nj = self.deps.next_jobs[k] as usize;
            self.jobs[nj].started = Some(now);
            let (f0, n) = (self.jobs[nj].spec.first_flow, self.jobs[nj].spec.n_flows);
            for f in f0..f0 + n {
                if self.deps.root[f as usize] {
                    self.release(f);
                }
            }
        }
    }

    /// One thing flow `f` waited for is done; start it if nothing else remains.
    fn release(&mut self, f: u32) {
        let p = &mut self.deps.pending[f as usize];
        debug_assert!(*p > 0);
        *p -= 1;
        if *p == 0 {
            self.start_flow(f);
        }
    }

    fn on_rto(&mut self, fid: u32) {
        let now = self.now;
        let rto = self.params.rto;
        let f = &mut self.flows[fid as usize];
        if f.sender_done.is_some() {
            f.rto_pending = false;
            return;
        }
        if now < f.rto_deadline {
            self.queue.push(f.rto_deadline, Event::Rto(fid));
            return;
        }
        if f.snd_una < f.snd_nxt || f.snd_una < f.spec.size {
            f.snd_nxt = f.snd_una;
            f.timeouts += 1;
            f.rto_deadline = now + rto;
            self.queue.push(f.rto_deadline, Event::Rto(fid));
            let port = self.hosts[f.spec.src as usize].port;
            self.schedule_wake(port, now);
        } else {
            f.rto_pending = false;
        }
    }

    // ---- ports and links -------------------------------------------------------

    #[inline]
    fn schedule_wake(&mut self, port: u32, t: Time) {
        let p = &mut self.ports[port as usize];
        if p.wake_at <= t && p.wake_at >= self.now {
            return;
        }
        p.wake_at = t;
        self.queue.push(t, Event::PortWake(port));
    }

    fn try_transmit(&mut self, port: u32) {
        let now = self.now;
        let pi = port as usize;
        if self.ports[pi].busy_until > now {
            let b = self.ports[pi].busy_until;
            self.schedule_wake(port, b);
            return;
        }
        let pkt = if let Some(p) = self.ports[pi].pop_ctrl() {
            p
        } else if let Some(prio) = self.ports[pi].next_queue(now) {
            let mut d = self.ports[pi].dequeue_head(prio, now);
            if matches!(self.ports[pi].owner(), NodeKind::Switch(_)) {
                self.on_switch_dequeue(port, &mut d);
            }
            d
        } else if let NodeKind::Host(h) = self.ports[pi].owner() {
            match self.pull_data(h) {
                Some(p) => p,
                None => {
                    if let Some(t) = self.ports[pi].earliest_unpause(now) {
                        self.schedule_wake(port, t);
                    }
                    return;
                }
            }
        } else {
            if let Some(t) = self.ports[pi].earliest_unpause(now) {
                self.schedule_wake(port, t);
            }
            return;
        };
        self.transmit(port, pkt);
    }

    #[inline]
    fn transmit(&mut self, port: u32, pkt: Desc) {
        let now = self.now;
        let pi = port as usize;
        let wire = pkt.wire as u64;
        let port_ref = &mut self.ports[pi];
        let extra = if pkt.kind == PacketKind::Pause {
            0
        } else {
            port_ref.sec_extra as u64
        };
        let d = port_ref.tx_time(wire + extra);
        port_ref.busy_until = now + d;
        port_ref.tx_bytes += wire + extra;
        port_ref.tx_packets += 1;
        let (to, to_port) = (self.links[pi].to, self.links[pi].to_port);
        let mut pkt = pkt;
        if self.route_ahead && pkt.kind != PacketKind::Pause {
            if let NodeKind::Switch(s) = to {
                // The receiving switch's ECMP choice, made now: the same port it would
                // pick on arrival, but off the arrival's chain of dependent loads.
                if let Some(egress) = self.ecmp_egress(s, pkt.dst, pkt.hash) {
                    let off = egress.wrapping_sub(to_port) as i32;
                    if off as i16 as i32 == off {
                        pkt.in_port = off as u16;
                        pkt.flags |= FLAG_ROUTED;
                    }
                }
            }
        }
        let link = &mut self.links[pi];
        let arrival = now + d + link.delay;
        let was_empty = link.ring.is_empty();
        link.ring.push_back((arrival, pkt));
        if was_empty {
            self.queue.push(arrival, Event::LinkArrive(port));
        }
        let p = &self.ports[pi];
        let more = p.ctrl_len() != 0
            || p.has_queued()
            || matches!(p.owner(), NodeKind::Host(h) if !self.hosts[h as usize].active.is_empty());
        if more {
            let b = p.busy_until;
            self.schedule_wake(port, b);
        }
    }

    fn on_link_arrive(&mut self, l: u32) {
        let li = l as usize;
        let (_, pkt) = self.links[li]
            .ring
            .pop_front()
            .expect("arrival on an empty link");
        if let Some(&(t2, _)) = self.links[li].ring.front() {
            self.queue.push(t2, Event::LinkArrive(l));
        }
        self.counters.packet_hops += 1;
        let link = &mut self.links[li];
        link.delivered += 1;
        let (in_port, to) = (link.to_port, link.to);
        if pkt.kind == PacketKind::Pause {
            self.apply_pause(in_port, pkt);
            return;
        }
        match to {
            NodeKind::Switch(s) => self.switch_receive(s, in_port, pkt),
            NodeKind::Host(h) => self.host_receive(h, pkt),
        }
    }

    // ---- PFC -------------------------------------------------------------------

    fn apply_pause(&mut self, port: u32, pkt: Desc) {
        let (prio, quanta) = {
            let p = self.arena.get(pkt.id);
            (p.flow as usize, p.seq as u16)
        };
        self.arena.release(pkt.id);
        let now = self.now;
        if !self.tcd.is_empty() && prio < N_PRIO {
            let t = &mut self.tcd[port as usize * N_PRIO + prio];
            if quanta == 0 {
                t.on_resume(now);
            } else {
                t.on_pause_for(
                    now,
                    now + pause_duration(quanta, self.ports[port as usize].rate),
                );
            }
        }
        let p = &mut self.ports[port as usize];
        if quanta == 0 {
            p.stats.resume_frames_received += 1;
            if let Some(s) = p.pause_started.take() {
                p.stats.paused_ps += now.saturating_sub(s);
            }
            p.resume(prio);
            self.schedule_wake(port, now);
        } else {
            p.stats.pause_frames_received += 1;
            match p.pause_started {
                Some(s) if p.paused_until(prio) <= now => {
                    // The previous pause expired without a resume frame.
                    p.stats.paused_ps += p.paused_until(prio).saturating_sub(s);
                    p.pause_started = Some(now);
                }
                None => p.pause_started = Some(now),
                _ => {}
            }
            let until = now + pause_duration(quanta, p.rate);
            p.pause(prio, until);
        }
    }

    fn send_pfc(&mut self, port: u32, prio: u8, quanta: u16) {
        let mut p = Packet::new(PacketKind::Pause);
        p.flow = prio as u32;
        p.seq = quanta as u64;
        p.wire = PFC_FRAME_BYTES;
        p.prio = 7;
        let d = self.arena.alloc_desc(p);
        let port_ref = &mut self.ports[port as usize];
        port_ref.push_ctrl(d);
        if quanta > 0 {
            port_ref.stats.pause_frames_sent += 1;
        } else {
            port_ref.stats.resume_frames_sent += 1;
        }
        self.counters.pfc_frames += 1;
        if quanta > 0 && !self.pfc_refresh_pending[port as usize] {
            self.pfc_refresh_pending[port as usize] = true;
            let half = pause_duration(quanta, port_ref.rate) / 2;
            self.queue
                .push(self.now + half.max(1), Event::PfcRefresh(port));
        }
        self.try_transmit(port);
    }

    fn on_pfc_refresh(&mut self, port: u32) {
        self.pfc_refresh_pending[port as usize] = false;
        let node = self.ports[port as usize].node;
        let NodeKind::Switch(s) = self.nodes[node as usize].kind else {
            return;
        };
        let local = (port - self.switches[s as usize].first_port) as usize;
        for prio in 0..N_PRIO {
            if self.switches[s as usize].buffer.is_pausing(local, prio) {
                self.send_pfc(port, prio as u8, self.params.pause_quanta);
            }
        }
    }

    // ---- switches --------------------------------------------------------------

    /// Switch `s`'s ECMP egress towards host `dst` for flow hash `hash`; `None` when `s`
    /// has no route there.
    #[inline(always)]
    fn ecmp_egress(&self, s: u32, dst: u32, hash: u32) -> Option<u32> {
        let c = self.routing.lookup(s, dst);
        let k = match c.len {
            0 => return None,
            1 => 0,
            n => ecmp::pick(hash, self.switches[s as usize].salt, n as usize),
        };
        Some(self.routing.port_of(c, k))
    }

    fn switch_receive(&mut self, s: u32, in_port: u32, mut pkt: Desc) {
        if pkt.flags & FLAG_ROUTED != 0 {
            pkt.flags &= !FLAG_ROUTED;
            let egress = in_port.wrapping_add(pkt.in_port as i16 as u32);
            self.forward(s, in_port, pkt, egress);
            return;
        }
        if self.gse.is_some() && self.gsp_receive(s, in_port, pkt) {
            return;
        }
        let (dst, hash) = (pkt.dst, pkt.hash);
        let sw = &mut self.switches[s as usize];
        let cands = self.routing.lookup(s, dst);
        let n = cands.len as usize;
        if n == 0 {
            self.drop_packet(pkt, in_port, s);
            return;
        }
        let k = if n == 1 {
            0
        } else {
            match self.params.lb {
                LbAlgorithm::Ecmp | LbAlgorithm::Pktc => ecmp::pick(hash, sw.salt, n),
                LbAlgorithm::SprayRandom => spray::pick_random(&mut sw.rng, n),
                LbAlgorithm::SprayRr => spray::pick_rr(&mut sw.rr, n),
            }
        };
        let egress = self.routing.port_of(cands, k);
        self.forward(s, in_port, pkt, egress);
    }

    /// Admits `pkt` (arrived on `in_port`) to switch `s`'s buffer and queues it on
    /// `egress`; pauses the ingress if the buffer says so.
    #[inline]
    fn forward(&mut self, s: u32, in_port: u32, mut pkt: Desc, egress: u32) {
        let (prio, wire) = (pkt.prio as usize, pkt.wire as u64);
        let sw = &mut self.switches[s as usize];
        let local_in = (in_port - sw.first_port) as usize;
        if sw.buffer.admit(local_in, prio, wire) == Admission::Dropped {
            self.ports[egress as usize].stats.drops += 1;
            self.drop_packet(pkt, in_port, s);
            return;
        }
        pkt.in_port = local_in as u16;
        let now = self.now;
        let e = &mut self.ports[egress as usize];
        if in_port != egress && e.can_pass_through(prio, now) {
            // The packet would be queued and dequeued at once: skip the queue (whose
            // enqueue and dequeue cancel out) and leave straight from here.
            e.pass_through(wire);
            self.maybe_pause(s, in_port, local_in, prio);
            self.on_switch_dequeue(egress, &mut pkt);
            self.transmit(egress, pkt);
            return;
        }
        e.enqueue(prio, pkt, now);
        self.maybe_pause(s, in_port, local_in, prio);
        self.try_transmit(egress);
    }

    /// Sends PFC XOFF on `in_port` if its (ingress, priority) counter passed the threshold.
    #[inline]
    fn maybe_pause(&mut self, s: u32, in_port: u32, local_in: usize, prio: usize) {
        if self.params.pfc
            && prio as u8 != self.params.ctrl_prio
            && (!self.params.pfc_edge_only || self.edge_port[in_port as usize])
            && self.switches[s as usize]
                .buffer
                .should_pause(local_in, prio)
        {
            self.send_pfc(in_port, prio as u8, self.params.pause_quanta);
        }
    }

    // ---- GSE at the GSPs -----------------------------------------------------------

    /// GSE handling of a packet arriving at switch `s`; returns true if it took the
    /// packet (the caller then does nothing more).
    fn gsp_receive(&mut self, s: u32, in_port: u32, mut pkt: Desc) -> bool {
        let g = self.gse.as_ref().expect("GSE mode");
        let gsp = g.gsp_of_switch[s as usize];
        if gsp == u32::MAX {
            return false;
        }
        match pkt.kind {
            PacketKind::Request | PacketKind::Grant => {
                if g.gsp_of_host[pkt.dst as usize] != gsp {
                    return false;
                }
                let p = *self.arena.get(pkt.id);
                self.arena.release(pkt.id);
                self.switches[s as usize].consumed += 1;
                if p.kind == PacketKind::Request {
                    self.on_request(p.src, p.flow, p.seq);
                } else {
                    self.on_grant(s, gsp, p.flow, p.seq, p.payload);
                }
                true
            }
            PacketKind::Data if pkt.prio == self.params.data_prio => {
                let from_host = self.edge_port[in_port as usize];
                let dst_gsp = g.gsp_of_host[pkt.dst as usize];
                let header = g.cfg.header as u32;
                let local = dst_gsp == gsp;
                if from_host && (!local || g.dgsq) {
                    // Source GSP: add the GSE header (not for a port of its own), then
                    // containers, or DGSQ (which schedules local ports too).
                    if !local {
                        pkt.wire += header;
                    }
                    let (prio, wire) = (pkt.prio as usize, pkt.wire as u64);
                    let sw = &mut self.switches[s as usize];
                    let local_in = (in_port - sw.first_port) as usize;
                    if sw.buffer.admit(local_in, prio, wire) == Admission::Dropped {
                        self.drop_packet(pkt, in_port, s);
                        return true;
                    }
                    pkt.in_port = local_in as u16;
                    let payload = self.payload_of(&pkt, !local);
                    let stream = g.stream(gsp, pkt.dst);
                    if g.dgsq {
                        let container = g.cfg.container;
                        let NodeKind::Host(src_host) =
                            self.ports[self.ports[in_port as usize].peer as usize].owner()
                        else {
                            unreachable!("edge ports face hosts")
                        };
                        let sw = &mut self.switches[s as usize];
                        sw.held += 1;
                        sw.voq_wire += wire;
                        let dst = pkt.dst;
                        let g = self.gse.as_mut().expect("GSE mode");
                        let v = &mut g.voq[stream];
                        v.grant_to = src_host;
                        let req = v.push(pkt, payload, container);
                        g.stats.voq_max_bytes = g.stats.voq_max_bytes.max(v.max_bytes);
                        if req > 0 {
                            self.send_gse_ctrl(s, PacketKind::Request, gsp, dst, dst, req, NO_VIA);
                        }
                    } else {
                        self.gsp_emit(s, gsp, stream, pkt, payload, false, NO_VIA);
                    }
                    self.maybe_pause(s, in_port, pkt.in_port as usize, prio);
                    return true;
                }
                if !from_host && dst_gsp == gsp {
                    // Destination GSP: strip the header, restore container order.
                    pkt.wire -= header;
                    if g.dgsq {
                        let payload = self.payload_of(&pkt, false);
                        let g = self.gse.as_mut().expect("GSE mode");
                        let v = &mut g.via_out[in_port as usize];
                        *v = v.saturating_sub(payload);
                    }
                    pkt.in_port = (in_port - self.switches[s as usize].first_port) as u16;
                    self.gsp_reorder(s, gsp, pkt);
                    return true;
                }
                false
            }
            _ => false,
        }
    }

    /// Payload bytes of a data packet as it sits in a GSP (wire less RoCE headers, and
    /// the GSE header if it carries one).
    fn payload_of(&self, d: &Desc, gse_header: bool) -> u64 {
        let h = match (&self.gse, gse_header) {
            (Some(g), true) => g.cfg.header,
            _ => 0,
        };
        (d.wire as u64).saturating_sub(self.params.header + h)
    }

    /// Places an admitted packet in its container and queues it on the container's uplink.
    /// `via`: with DGSQ, the destination GSP's port the grant asked the container to come
    /// in on (the source takes its uplink toward that spine), or `NO_VIA`.
    #[allow(clippy::too_many_arguments)]
    fn gsp_emit(
        &mut self,
        s: u32,
        gsp: u32,
        stream: usize,
        mut pkt: Desc,
        payload: u64,
        force: bool,
        via: u32,
    ) {
        let g = self.gse.as_mut().expect("GSE mode");
        if g.gsp_of_host[pkt.dst as usize] == gsp {
            // A port of this GSP (DGSQ-scheduled): no container, no header, one path.
            let cands = self.routing.lookup(s, pkt.dst);
            let port = self.routing.port_of(cands, 0);
            self.ports[port as usize].enqueue(pkt.prio as usize, pkt, self.now);
            self.try_transmit(port);
            return;
        }
        let (tag, open) = g.tx[stream].assign(payload, g.cfg.container, force);
        if open {
            g.stats.containers += 1;
            let cands = self.routing.lookup(s, pkt.dst);
            let n = cands.len as usize;
            let ports = &self.ports;
            let routing = &self.routing;
            // The spine the grant named, if this GSP has uplinks to it: those uplinks
            // only; otherwise all of them.
            let spine = if via == NO_VIA {
                u32::MAX
            } else {
                ports[ports[via as usize].peer as usize].node
            };
            let to_spine = |k: usize| {
                let p = routing.port_of(cands, k) as usize;
                ports[ports[p].peer as usize].node == spine
            };
            let restrict = spine != u32::MAX && (0..n).any(to_spine);
            let k = crate::gse::pktc::best_uplink(n, &mut g.rr[gsp as usize], |k| {
                if restrict && !to_spine(k) {
                    u64::MAX
                } else {
                    ports[routing.port_of(cands, k) as usize].total_bytes
                }
            });
            g.tx[stream].uplink = self.routing.port_of(cands, k);
        }
        let uplink = g.tx[stream].uplink;
        self.arena.get_mut(pkt.id).tag = tag;
        // Later switches hash the container, so it keeps to one path.
        pkt.hash = ecmp::mix32((stream as u32).wrapping_mul(0x9e37_79b9) ^ tag.cont);
        self.ports[uplink as usize].enqueue(pkt.prio as usize, pkt, self.now);
        self.try_transmit(uplink);
    }

    /// Destination GSP: deliver in container order or hold.
    fn gsp_reorder(&mut self, s: u32, gsp: u32, pkt: Desc) {
        let now = self.now;
        let (tag, src) = {
            let p = self.arena.get(pkt.id);
            (p.tag, p.src)
        };
        let g = self.gse.as_mut().expect("GSE mode");
        let stream = g.stream(g.gsp_of_host[src as usize], pkt.dst);
        let rx = &mut g.rx[stream];
        if tag.cont == rx.exp_cont && tag.idx > rx.exp_idx {
            g.stats.intra_container_gaps += 1;
        }
        if rx.is_next(tag) {
            rx.advance(tag);
        } else if !rx.is_stale(tag) {
            rx.hold(Held {
                tag,
                desc: pkt,
                since: now,
            });
            g.held_bytes[gsp as usize] += pkt.wire as u64;
            g.stats.reorder_max_bytes = g.stats.reorder_max_bytes.max(g.held_bytes[gsp as usize]);
            self.switches[s as usize].held += 1;
            if !rx.timer {
                rx.timer = true;
                let t = now + g.cfg.reorder_timeout;
                self.queue.push(t, Event::Reorder(stream as u32));
            }
            return;
        }
        self.gsp_deliver(s, pkt);
        self.gsp_drain(s, gsp, stream);
    }

    /// Delivers every held packet of `stream` that is now in order.
    fn gsp_drain(&mut self, s: u32, gsp: u32, stream: usize) {
        let now = self.now;
        loop {
            let g = self.gse.as_mut().expect("GSE mode");
            let Some(h) = g.rx[stream].take_next() else {
                break;
            };
            self.note_released(s, gsp, &h, now);
            self.gsp_deliver(s, h.desc);
        }
    }

    fn note_released(&mut self, s: u32, gsp: u32, h: &Held, now: Time) {
        let g = self.gse.as_mut().expect("GSE mode");
        g.held_bytes[gsp as usize] -= h.desc.wire as u64;
        let w = now - h.since;
        g.stats.reordered_packets += 1;
        g.stats.reorder_wait_ps += w;
        g.stats.reorder_wait_max_ps = g.stats.reorder_wait_max_ps.max(w);
        self.switches[s as usize].held -= 1;
    }

    /// Forwards an in-order packet from the destination GSP to its NIC.
    fn gsp_deliver(&mut self, s: u32, pkt: Desc) {
        let cands = self.routing.lookup(s, pkt.dst);
        let in_port = self.switches[s as usize].first_port + pkt.in_port as u32;
        if cands.len == 0 {
            self.drop_packet(pkt, in_port, s);
            return;
        }
        let egress = self.routing.port_of(cands, 0);
        self.forward(s, in_port, pkt, egress);
    }

    fn on_reorder_timer(&mut self, stream: u32) {
        let now = self.now;
        let g = self.gse.as_mut().expect("GSE mode");
        let stream = stream as usize;
        let dst = (stream % g.n_hosts) as u32;
        let gsp = g.gsp_of_host[dst as usize];
        let s = g.switch_of_gsp[gsp as usize];
        let timeout = g.cfg.reorder_timeout;
        let rx = &mut g.rx[stream];
        rx.timer = false;
        if rx.held.is_empty() {
            return;
        }
        if now >= rx.blocked_since + timeout {
            let h = rx.skip().expect("held is not empty");
            g.stats.reorder_skips += 1;
            self.note_released(s, gsp, &h, now);
            self.gsp_deliver(s, h.desc);
            self.gsp_drain(s, gsp, stream);
        }
        let g = self.gse.as_mut().expect("GSE mode");
        let rx = &mut g.rx[stream];
        if !rx.held.is_empty() && !rx.timer {
            rx.timer = true;
            let t = (rx.blocked_since + timeout).max(now + 1);
            self.queue.push(t, Event::Reorder(stream as u32));
        }
    }

    /// Sends a REQUEST or GRANT from switch `s` toward host `to` (whose GSP takes it).
    #[allow(clippy::too_many_arguments)]
    fn send_gse_ctrl(
        &mut self,
        s: u32,
        kind: PacketKind,
        gsp: u32,
        to: u32,
        port_host: u32,
        bytes: u64,
        via: u32,
    ) {
        let g = self.gse.as_mut().expect("GSE mode");
        if g.gsp_of_host[to as usize] == g.gsp_of_switch[s as usize] {
            // Addressed to this GSP itself (a port of its own): no packet on the wire.
            match kind {
                PacketKind::Request => self.on_request(gsp, port_host, bytes),
                _ => {
                    let me = g.gsp_of_switch[s as usize];
                    self.on_grant(s, me, port_host, bytes, via);
                }
            }
            return;
        }
        if kind == PacketKind::Request {
            g.stats.requests += 1;
        } else {
            g.stats.grants += 1;
        }
        let mut p = Packet::new(kind);
        p.prio = self.params.ctrl_prio;
        p.wire = g.cfg.control_bytes as u32;
        p.src = gsp;
        p.dst = to;
        p.flow = port_host;
        p.seq = bytes;
        p.payload = via;
        p.hash = ecmp::mix32(gsp.wrapping_mul(0x85eb_ca6b) ^ port_host);
        let mut d = self.arena.alloc_desc(p);
        d.in_port = LOCAL_PORT;
        self.switches[s as usize].generated += 1;
        let cands = self.routing.lookup(s, to);
        let n = cands.len as usize;
        let k = if n > 1 {
            ecmp::pick(p.hash, self.switches[s as usize].salt, n)
        } else {
            0
        };
        let egress = self.routing.port_of(cands, k);
        self.ports[egress as usize].enqueue(p.prio as usize, d, self.now);
        self.try_transmit(egress);
    }

    /// A REQUEST for `bytes` toward host `dst` from GSP `src_gsp` reached `dst`'s GSP.
    fn on_request(&mut self, src_gsp: u32, dst: u32, bytes: u64) {
        let now = self.now;
        let g = self.gse.as_mut().expect("GSE mode");
        let sc = &mut g.sched[dst as usize];
        if sc.request(src_gsp as usize, bytes) {
            let t = sc.next_grant.max(now);
            self.queue.push(t, Event::Grant(dst));
        }
    }

    /// The scheduler of destination host `dst` issues its next grant.
    fn on_grant_timer(&mut self, dst: u32) {
        let now = self.now;
        let (mtu, header) = (self.params.mtu, self.params.header);
        let rate = self.ports[self.hosts[dst as usize].port as usize].rate;
        let g = self.gse.as_mut().expect("GSE mode");
        let container = g.cfg.container;
        let gt = |b: u64| {
            let wire = b as f64 * (mtu + header + g.cfg.header) as f64 / mtu as f64;
            (wire * 8.0 / (rate.0 as f64 * (1.0 - g.cfg.eps)) * 1e12).ceil() as Time
        };
        let (grant, more) = g.sched[dst as usize].grant(now, container, gt);
        let next = g.sched[dst as usize].next_grant;
        let dst_gsp = g.gsp_of_host[dst as usize];
        let s = g.switch_of_gsp[dst_gsp as usize];
        if let Some((src_gsp, bytes)) = grant {
            let to = g.voq[g.stream(src_gsp as u32, dst)].grant_to;
            // Spine-link capacity: the container is to come in over the fabric link into
            // this GSP with the fewest granted bytes still to arrive.
            let via = if src_gsp as u32 == dst_gsp {
                NO_VIA
            } else {
                let node = &self.nodes[self.switches[s as usize].node as usize];
                let mut best = NO_VIA;
                for p in node.first_port..node.first_port + node.n_ports {
                    if !self.edge_port[p as usize]
                        && (best == NO_VIA || g.via_out[p as usize] < g.via_out[best as usize])
                    {
                        best = p;
                    }
                }
                if best != NO_VIA {
                    g.via_out[best as usize] += bytes;
                }
                best
            };
            self.send_gse_ctrl(s, PacketKind::Grant, src_gsp as u32, to, dst, bytes, via);
        }
        if more {
            self.queue.push(next.max(now), Event::Grant(dst));
        }
    }

    /// A GRANT of `bytes` toward host `dst` reached its source GSP `gsp` (switch `s`).
    fn on_grant(&mut self, s: u32, gsp: u32, dst: u32, bytes: u64, via: u32) {
        let g = self.gse.as_mut().expect("GSE mode");
        let stream = g.stream(gsp, dst);
        g.voq[stream].grant(bytes);
        let mut first = true;
        let remote = g.gsp_of_host[dst as usize] != gsp;
        loop {
            let gh = if remote {
                self.gse.as_ref().expect("GSE").cfg.header
            } else {
                0
            };
            let hdr = self.params.header + gh;
            let g = self.gse.as_mut().expect("GSE mode");
            let Some(d) = g.voq[stream].release(|d| (d.wire as u64).saturating_sub(hdr)) else {
                break;
            };
            let sw = &mut self.switches[s as usize];
            sw.held -= 1;
            sw.voq_wire -= d.wire as u64;
            let payload = (d.wire as u64).saturating_sub(hdr);
            self.gsp_emit(s, gsp, stream, d, payload, first, via);
            first = false;
        }
        let g = self.gse.as_mut().expect("GSE mode");
        let container = g.cfg.container;
        let req = g.voq[stream].request_due(container);
        if req > 0 {
            self.send_gse_ctrl(s, PacketKind::Request, gsp, dst, dst, req, NO_VIA);
        }
    }

    fn drop_packet(&mut self, pkt: Desc, _in_port: u32, s: u32) {
        if pkt.kind == PacketKind::Data {
            let flow = self.arena.get(pkt.id).flow;
            self.flows[flow as usize].data_pkts_dropped += 1;
        }
        self.switches[s as usize].drops += 1;
        self.counters.drops += 1;
        self.arena.release(pkt.id);
    }

    fn on_switch_dequeue(&mut self, port: u32, pkt: &mut Desc) {
        let NodeKind::Switch(s) = self.ports[port as usize].owner() else {
            return;
        };
        let (local_in, prio, wire, ecn, kind) = (
            pkt.in_port as usize,
            pkt.prio as usize,
            pkt.wire as u64,
            pkt.ecn,
            pkt.kind,
        );
        if pkt.in_port == LOCAL_PORT {
            return;
        }
        let sw = &mut self.switches[s as usize];
        sw.buffer.release(local_in, prio, wire);
        if kind == PacketKind::Data && ecn == ECN_ECT {
            let local_out = (port - sw.first_port) as usize;
            let q = self.ports[port as usize].queues[prio].bytes;
            let prob = sw.ecn[local_out].probability(q);
            if prob > 0.0 && (prob >= 1.0 || sw.rng.gen::<f64>() < prob) {
                pkt.ecn = ECN_CE;
                self.ports[port as usize].stats.ecn_marked += 1;
                self.counters.ecn_marks += 1;
            }
        }
        if kind == PacketKind::Data {
            if !self.tcd.is_empty() {
                let q = self.ports[port as usize].queues[prio].bytes;
                let m = self.tcd[port as usize * N_PRIO + prio].on_dequeue(self.now, q);
                match m {
                    TcdMark::Ce => self.ports[port as usize].stats.tcd_ce += 1,
                    TcdMark::Ue => self.ports[port as usize].stats.tcd_ue += 1,
                    TcdMark::None => {}
                }
                pkt.mark = TcdMark::from_bits(pkt.mark).merge(m).to_bits();
            }
            if pkt.flags & FLAG_INT != 0 {
                let now = self.now;
                let pr = &self.ports[port as usize];
                let hop = IntHop {
                    rate_bps: pr.rate.0,
                    ts: now,
                    tx_bytes: pr.tx_bytes + wire + INT_BYTES_PER_HOP as u64,
                    qlen: pr.queued_bytes(),
                };
                let st = &mut self.int_tab[pkt.id.0 as usize];
                if (st.n as usize) < MAX_INT_HOPS {
                    st.hops[st.n as usize] = hop;
                    st.n += 1;
                    pkt.wire += INT_BYTES_PER_HOP;
                }
            }
        }
        if self.params.pfc
            && self.switches[s as usize]
                .buffer
                .should_resume(local_in, prio)
        {
            let in_port = self.switches[s as usize].first_port + local_in as u32;
            self.send_pfc(in_port, prio as u8, 0);
        }
    }

    // ---- hosts: sending ----------------------------------------------------------

    /// The NIC picks the next data packet, round robin over flows whose pacer allows.
    fn pull_data(&mut self, h: u32) -> Option<Desc> {
        let now = self.now;
        let host = &self.hosts[h as usize];
        let port = host.port;
        let dp = self.params.data_prio as usize;
        if self.ports[port as usize].is_paused(dp, now) {
            let t = self.ports[port as usize].paused_until(dp);
            if !host.active.is_empty() {
                self.schedule_wake(port, t);
            }
            return None;
        }
        let n = host.active.len();
        let mut earliest = Time::MAX;
        for k in 0..n {
            let i = (self.hosts[h as usize].rr + k) % n;
            let fid = self.hosts[h as usize].active[i];
            let f = &self.flows[fid as usize];
            if f.snd_nxt >= f.spec.size {
                continue;
            }
            if let Some(w) = f.cc.window() {
                if f.snd_nxt - f.snd_una >= w {
                    continue;
                }
            }
            if f.next_send > now {
                earliest = earliest.min(f.next_send);
                continue;
            }
            self.hosts[h as usize].rr = i + 1;
            return Some(self.make_data(fid, port));
        }
        if earliest != Time::MAX {
            self.schedule_wake(port, earliest);
        }
        None
    }

    fn make_data(&mut self, fid: u32, port: u32) -> Desc {
        let now = self.now;
        let rp = &self.params;
        let line = self.ports[port as usize].rate;
        let f = &mut self.flows[fid as usize];
        let payload = rp.mtu.min(f.spec.size - f.snd_nxt);
        let wire = payload + rp.header;
        let pkt = Packet {
            kind: PacketKind::Data,
            prio: rp.data_prio,
            ecn: ECN_ECT,
            echo: 0,
            src: f.spec.src,
            dst: f.spec.dst,
            flow: fid,
            seq: f.snd_nxt,
            payload: payload as u32,
            wire: wire as u32,
            hash: f.hash,
            sent_at: now,
            tag: Default::default(),
            mark: 0,
            flags: if f.cc.wants_int() { FLAG_INT } else { 0 },
        };
        if f.snd_nxt < f.high_sent {
            f.retx_bytes += payload;
        }
        f.snd_nxt += payload;
        f.high_sent = f.high_sent.max(f.snd_nxt);
        f.data_pkts_sent += 1;
        f.cc.on_send(now, wire);
        let rate = f.cc.rate_bps();
        f.next_send = if rate >= line.0 as f64 {
            now + line.tx_time(wire)
        } else {
            now + ser_time_f(wire, rate)
        };
        if !f.rto_pending {
            f.rto_pending = true;
            f.rto_deadline = now + rp.rto;
            self.queue.push(f.rto_deadline, Event::Rto(fid));
        }
        self.counters.data_sent += 1;
        let d = self.arena.alloc_desc(pkt);
        if pkt.flags & FLAG_INT != 0 {
            self.int_slot(d.id.0).n = 0;
        }
        d
    }

    /// The INT records of arena slot `id` (the table grows with the arena).
    #[inline]
    fn int_slot(&mut self, id: u32) -> &mut IntStack {
        let i = id as usize;
        if i >= self.int_tab.len() {
            self.int_tab
                .resize((i + 1).max(2 * self.int_tab.len()), IntStack::default());
        }
        &mut self.int_tab[i]
    }

    fn send_feedback(&mut self, from_host: u32, kind: PacketKind, data: &Packet, seq: u64) {
        let mut p = Packet::new(kind);
        p.prio = self.params.ctrl_prio;
        p.src = data.dst;
        p.dst = data.src;
        p.flow = data.flow;
        p.seq = seq;
        p.wire = self.params.ack_size;
        p.hash = ecmp::mix32(data.hash ^ 0x5bd1_e995);
        p.echo = (data.ecn == ECN_CE) as u8;
        p.mark = data.mark;
        p.sent_at = data.sent_at;
        let int = kind == PacketKind::Ack && data.flags & FLAG_INT != 0;
        if int {
            p.flags = FLAG_INT;
            p.wire += INT_BYTES_PER_HOP * self.int_rx.n as u32;
        }
        let d = self.arena.alloc_desc(p);
        if int {
            let rx = self.int_rx;
            *self.int_slot(d.id.0) = rx;
        }
        let port = self.hosts[from_host as usize].port;
        let pr = &mut self.ports[port as usize];
        let prio = self.params.ctrl_prio as usize;
        pr.enqueue(prio, d, self.now);
        match kind {
            PacketKind::Ack => self.counters.acks += 1,
            PacketKind::Nack => self.counters.nacks += 1,
            PacketKind::Cnp => self.counters.cnps += 1,
            _ => {}
        }
        self.try_transmit(port);
    }

    // ---- hosts: receiving --------------------------------------------------------

    fn host_receive(&mut self, h: u32, pkt: Desc) {
        let mut p = *self.arena.get(pkt.id);
        p.ecn = pkt.ecn;
        if p.kind == PacketKind::Data {
            p.mark = pkt.mark;
        }
        if p.flags & FLAG_INT != 0 {
            self.int_rx = self.int_tab[pkt.id.0 as usize];
        }
        self.arena.release(pkt.id);
        match p.kind {
            PacketKind::Data => self.on_data(h, &p),
            PacketKind::Ack | PacketKind::Nack => self.on_ack(&p),
            PacketKind::Cnp => {
                let f = &mut self.flows[p.flow as usize];
                f.cc.on_cnp(self.now);
            }
            PacketKind::Pause | PacketKind::Request | PacketKind::Grant => {}
        }
    }

    fn on_data(&mut self, h: u32, p: &Packet) {
        let now = self.now;
        self.counters.data_arrived += 1;
        let fid = p.flow;
        let ack_every = self.params.ack_every;
        let f = &mut self.flows[fid as usize];
        f.data_pkts_arrived += 1;
        if p.ecn == ECN_CE && f.cc.wants_cnp() {
            let interval = f.cc.cnp_interval();
            if now >= f.next_cnp {
                f.next_cnp = now + interval;
                f.cnps_sent += 1;
                self.send_feedback(h, PacketKind::Cnp, p, 0);
            } else if !f.cnp_pending {
                f.cnp_pending = true;
                let t = f.next_cnp;
                self.queue.push(t, Event::CnpTimer(fid));
            }
        }
        let f = &mut self.flows[fid as usize];
        if p.seq == f.rcv_nxt {
            f.rcv_nxt += p.payload as u64;
            f.nacked_at = u64::MAX;
            f.unacked_pkts += 1;
            self.last_progress = now;
            let done = f.rcv_nxt >= f.spec.size;
            if f.unacked_pkts >= ack_every || done {
                f.unacked_pkts = 0;
                let seq = f.rcv_nxt;
                self.send_feedback(h, PacketKind::Ack, p, seq);
            }
            let f = &mut self.flows[fid as usize];
            if done && f.finish.is_none() {
                f.finish = Some(now);
                self.flows_done += 1;
                self.on_flow_finished(fid);
            }
        } else if p.seq > f.rcv_nxt {
            if f.nacked_at != f.rcv_nxt {
                f.nacked_at = f.rcv_nxt;
                let seq = f.rcv_nxt;
                self.send_feedback(h, PacketKind::Nack, p, seq);
            }
        } else {
            let seq = f.rcv_nxt;
            self.send_feedback(h, PacketKind::Ack, p, seq);
        }
    }

    fn on_cnp_timer(&mut self, fid: u32) {
        let now = self.now;
        let f = &mut self.flows[fid as usize];
        let interval = f.cc.cnp_interval();
        if !f.cnp_pending {
            return;
        }
        f.cnp_pending = false;
        f.next_cnp = now + interval;
        f.cnps_sent += 1;
        // A CNP carries only the flow; build it from a template of the flow's data.
        let mut tmpl = Packet::new(PacketKind::Data);
        tmpl.src = f.spec.src;
        tmpl.dst = f.spec.dst;
        tmpl.flow = fid;
        tmpl.hash = f.hash;
        let h = f.spec.dst;
        self.send_feedback(h, PacketKind::Cnp, &tmpl, 0);
    }

    fn on_ack(&mut self, p: &Packet) {
        let now = self.now;
        let rto = self.params.rto;
        let fid = p.flow;
        let f = &mut self.flows[fid as usize];
        let mut wake = false;
        if p.seq > f.snd_una {
            let newly = p.seq - f.snd_una;
            f.snd_una = p.seq;
            if f.snd_nxt < f.snd_una {
                f.snd_nxt = f.snd_una;
            }
            let (mtu, hdr) = (self.params.mtu, self.params.header);
            let wire = |b: u64| b + b.div_ceil(mtu) * hdr;
            let info = AckInfo {
                newly_acked: newly,
                ack_seq: p.seq,
                ecn_echo: p.echo,
                rtt: now.saturating_sub(p.sent_at),
                mark: TcdMark::from_bits(p.mark),
                newly_acked_wire: wire(newly),
                inflight_wire: wire(f.snd_nxt - f.snd_una),
                snd_nxt: f.snd_nxt,
            };
            match info.mark {
                TcdMark::Ce => f.ce_acks += 1,
                TcdMark::Ue => f.ue_acks += 1,
                TcdMark::None => {}
            }
            f.cc.on_ack(now, &info);
            if p.flags & FLAG_INT != 0 {
                let n = self.int_rx.n as usize;
                f.cc.on_ack_int(now, &info, &self.int_rx.hops[..n]);
            }
            if let Some(t) = f.cc.hold_until() {
                if t > f.next_send {
                    f.next_send = t;
                }
            }
            f.rto_deadline = now + rto;
            wake = f.cc.window().is_some();
        }
        if p.kind == PacketKind::Nack {
            f.nacks += 1;
            if p.seq < f.snd_nxt {
                f.snd_nxt = p.seq.max(f.snd_una);
                wake = true;
            }
        }
        if f.snd_una >= f.spec.size && f.sender_done.is_none() {
            f.sender_done = Some(now);
            let h = f.spec.src as usize;
            self.hosts[h].active.retain(|&x| x != fid);
        }
        if wake {
            let port = self.hosts[self.flows[fid as usize].spec.src as usize].port;
            self.schedule_wake(port, now);
        }
    }

    // ---- time series -------------------------------------------------------------

    fn on_sample(&mut self) {
        let now = self.now;
        if let Some(iv) = self.params.queue_interval {
            if now.is_multiple_of(iv) {
                for (i, p) in self.ports.iter().enumerate() {
                    if self.node_is_switch[p.node as usize] {
                        let b = p.queued_bytes();
                        if b > 0 {
                            self.queue_samples.push(QueueSample {
                                t: now,
                                port: i as u32,
                                bytes: b,
                            });
                        }
                    }
                }
            }
        }
        if let Some(iv) = self.params.rate_interval {
            if now.is_multiple_of(iv) {
                for (i, f) in self.flows.iter_mut().enumerate() {
                    if f.started && f.finish.is_none() || f.finish == Some(now) {
                        let delivered = f.rcv_nxt - f.delivered_at_last_sample;
                        f.delivered_at_last_sample = f.rcv_nxt;
                        self.rate_samples.push(RateSample {
                            t: now,
                            flow: i as u32,
                            rate_bps: f.cc.rate_bps(),
                            goodput_bps: delivered as f64 * 8.0 * 1e12 / iv as f64,
                        });
                    } else if f.finish.is_some() {
                        f.delivered_at_last_sample = f.rcv_nxt;
                    }
                }
            }
        }
        let q = self.params.queue_interval.unwrap_or(Time::MAX);
        let r = self.params.rate_interval.unwrap_or(Time::MAX);
        let next_q = if q == Time::MAX {
            Time::MAX
        } else {
            (now / q + 1) * q
        };
        let next_r = if r == Time::MAX {
            Time::MAX
        } else {
            (now / r + 1) * r
        };
        let next = next_q.min(next_r);
        if next != Time::MAX && self.flows_done < self.flows.len() {
            self.queue.push(next, Event::Sample);
        }
    }

    /// Node name of a port's owner.
    pub fn port_node_name(&self, port: u32) -> &str {
        &self.nodes[self.ports[port as usize].node as usize].name
    }

    /// True if node `n` is a switch.
    pub fn is_switch(&self, n: u32) -> bool {
        self.node_is_switch[n as usize]
    }
}
