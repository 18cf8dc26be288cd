//! The simulation: a scenario built into typed tables, and the event loop that runs it.
//!
//! Build once, then run: [`Simulation::build`] (`build.rs`) validates the scenario and
//! `assemble.rs` turns it into nodes, ports, links, switches, hosts, flows and routing
//! tables; the loop never re-validates. Components refer to each other by index (see
//! [`crate::base::ids`]). An event names the component it wakes ([`crate::kernel::events::Event`]);
//! `event_loop.rs` pops events and dispatches each to its component's handler, which lives
//! beside the component's state. The state is in three parts: [`Ctx`] (the clock, the
//! event queue, the packet arena, counters and constants: the narrow context every
//! handler takes), [`Fabric`] (switches, ports, links; handlers in [`crate::model::fabric`],
//! [`crate::model::gse`]) and [`Nics`] (hosts and flows; handlers in [`crate::model::transport`]).
//! Fabric handlers never touch a NIC; NIC handlers reach the fabric only through their
//! own port (and the INT records a packet carries). Recording is [`crate::model::record`]; telemetry [`crate::model::fabric::telemetry`].
//!
//! Per packet and hop the work is: the link's arrival event, routing (a table slice and a
//! hash), buffer admission, a queue push, and, when the egress port is idle, the
//! transmission, which pushes the packet on the next link. A busy port schedules a single
//! wakeup for the end of its current frame. Nothing here allocates per packet: packets
//! live in the arena, queues and link rings reuse their capacity.

use crate::base::units::{Rate, Time};
use crate::kernel::events::EventQueue;
use crate::model::fabric::pfc::PFC_FRAME_BYTES;
use crate::model::fabric::NodeKind;
use crate::model::routing::ecmp;
use crate::model::transport::rdma::{ideal_fct, Hop};
use crate::model::workload::JobKind;
use crate::scenario::config::Scenario;
use crate::scenario::config::{LbAlgorithm, SecurityMode};
use crate::scenario::ScenarioError;
use crate::sim::stall::StallReport;

mod assemble;
mod build;
mod event_loop;
pub mod livelock;
mod lookahead;
pub mod memory;
pub mod partition;
mod resolve;
pub(crate) mod shards;
pub mod stall;
pub use shards::{machine_threads, ParallelWork};

pub use crate::kernel::ctx::{Counters, Ctx, RunParams, Tally};
pub use crate::model::fabric::Fabric;
pub use crate::model::record::{QueueSample, RateSample, Recorder};
pub(crate) use crate::model::transport::launcher::{Deps, FlowLauncher};
pub use crate::model::transport::{JobState, Nics};

/// Models with at least this many ports prefetch ahead of the event loop (their state
/// outgrows the L2 cache); smaller ones do not (measured on the fat-tree benchmarks: a
/// 12 % gain at k = 16, 6144 ports; a 15 % instruction overhead and no gain at k = 8).
pub(crate) const PREFETCH_MIN_PORTS: usize = 4096;

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
    /// Events far outpaced anything the fabric can cause, for long
    /// ([`crate::sim::livelock`]).
    Livelock(crate::sim::livelock::LivelockReport),
}

impl Outcome {
    /// Every outcome's [`Outcome::name`].
    pub const NAMES: [&'static str; 5] =
        ["completed", "max_time", "stalled", "starved", "livelock"];

    /// Short name for tables.
    pub fn name(&self) -> &'static str {
        match self {
            Outcome::Completed => "completed",
            Outcome::MaxTime => "max_time",
            Outcome::Stalled(_) => "stalled",
            Outcome::Starved => "starved",
            Outcome::Livelock(_) => "livelock",
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
    /// The run has ended, whatever its outcome: set on the runner's report after the
    /// run (`runner`); the event loop's own reports leave it unset.
    pub finished: bool,
}

/// A built scenario, ready to run (and, after running, holding its results).
pub struct Simulation {
    /// Clock, events, packets, counters, constants.
    pub ctx: Ctx,
    /// Switches, ports and links.
    pub fabric: Fabric,
    /// The switch roles' state (GSPs, DR switches, switches that send CNPs), beside the
    /// fabric: each role's handlers take their own part and the fabric.
    pub roles: crate::model::fabric::roles::RoleStates,
    /// NICs and flows.
    pub nics: Nics,
    /// Ideal FCT of each flow.
    pub ideal: Vec<Time>,
    /// Ideal FCT of each flow as the HPCC ns-3 module defines it
    /// ([`crate::model::transport::rdma::ideal_fct_ns3`]), for FCTs measured at the sender.
    pub ideal_rtt: Vec<Time>,
    /// Server of each host.
    pub server_of_host: Vec<u32>,
    /// Time series asked for in `[record]`.
    pub record: Recorder,
    pub(crate) started: bool,
    /// Look ahead in the event queue and prefetch (large models only: when everything
    /// fits in the cache the prefetches are pure overhead).
    pub(crate) prefetch: bool,
    /// Whether the run's loop is the one built to test for the fabric's extras (see
    /// [`crate::model::fabric`]): `None` until the run starts, which decides it
    /// ([`Simulation::uses_extras`]) unless [`Simulation::always_test_extras`] did.
    pub(crate) extras: Option<bool>,
    /// Scenario name.
    pub name: String,
    /// Seed of the run.
    pub seed: u64,
    /// Convergence analysis asked for in `[record.convergence]`.
    pub convergence: Option<crate::model::record::convergence::ConvergenceSpec>,
    /// Window analysis asked for in `[record.window]`.
    pub window: Option<crate::model::record::window::WindowSpec>,
    /// Training jobs (`training.csv`).
    pub trainings: Vec<crate::model::workload::training::TrainingSpec>,
    /// Trace-driven training jobs (`training.csv`, `timeline.json`).
    pub traces: Vec<crate::model::workload::trace::compile::TraceJob>,
    /// `timeline.json` as it is written (`[record.timeline]` with trace jobs).
    pub timeline: Option<Box<crate::model::record::timeline::Timeline>>,
    /// What the run was estimated to hold before it was built ([`crate::scenario::budget`]), in
    /// bytes; 0 when built without the estimate.
    pub memory_estimate: u64,
    /// The run ends at the end of the cell of this grid in which it completes
    /// ([`partition::crossing_grid`]; set when the run starts).
    pub(crate) end_grid: Time,
    /// The run cut into shards on several threads ([`Simulation::set_threads_per_run`]);
    /// `None` on one.
    pub(crate) shards: Option<Box<shards::Shards>>,
    /// The livelock guard (set up when the run starts).
    pub(crate) livelock: crate::sim::livelock::Guard,
}

/// (node, local index, peer port, rate, delay, link security) of a port being built.
pub(crate) type PortInit = (u32, u32, u32, Rate, Time, SecurityMode);

/// PFC headroom of an ingress port fed at `rate` over a link of `delay`: 3 C delay / 8
/// (the bytes in flight on the cable while XOFF travels and takes effect), plus three
/// maximum frames and the pause frame itself. The three frames: the one whose arrival
/// triggers XOFF (with a dynamic threshold it lands in headroom, because the threshold
/// fell while other ports filled the buffer and no arrival on this port re-tested it),
/// the frame the reverse egress is serializing when XOFF is queued, and the frame the
/// upstream is serializing when XOFF arrives. With two, a k = 6 fat tree at 25 Gbps
/// with 100 ns links dropped 17 packets with PFC on (found by tests/generated.rs).
///
/// With link-level retransmission (`llr`) a pause does not stop a replay: the frames sent
/// during the replay request's round trip (2 C delay and the corrupted frame) arrive
/// again after XOFF, so they are added.
///
/// `frame` is the run's largest data frame ([`largest_frame`]).
pub(crate) fn default_headroom(rate: Rate, delay: Time, frame: u64, llr: bool) -> u64 {
    let bdp = (3.0 * rate.0 as f64 * delay as f64 / 8e12) as u64;
    let replay = if llr {
        (2.0 * rate.0 as f64 * delay as f64 / 8e12) as u64 + frame
    } else {
        0
    };
    bdp + 3 * frame + PFC_FRAME_BYTES as u64 + replay
}

/// The run's largest data frame: a packet (`mtu + header`), or the largest segment a
/// collective workload may send with the headers of the packets it stands for
/// (`model::workload::collective::segment`). Buffers, PFC headroom and pauses are
/// sized for it.
pub(crate) fn largest_frame(sc: &Scenario) -> u64 {
    use crate::model::workload::WorkloadCfg;
    let (mtu, header) = (sc.transport.mtu.max(1), sc.transport.header);
    let payload = (sc.workload.iter())
        .filter_map(|w| match w {
            WorkloadCfg::Collective(c) => c.segment.map(|sg| {
                let largest = c.sizes.map_or(c.size, |s| s.max.max(s.min));
                sg.max_payload(largest, mtu)
            }),
            // A trace's sizes are in its files: its segments are counted at their
            // largest.
            WorkloadCfg::Trace(c) => c
                .segment
                .map(|sg| sg.max_payload(crate::model::workload::trace::ir::MAX_COMM_BYTES, mtu)),
            _ => None,
        })
        .fold(mtu, u64::max);
    payload + payload.div_ceil(mtu) * header
}

pub(crate) fn err(file: &str, field: &str, m: impl Into<String>) -> ScenarioError {
    ScenarioError::field(file, field, m)
}

impl Simulation {
    /// Hops (rate, delay after) of the path flow `i` takes, following the routing the
    /// switches apply (ECMP with the flow's hash; the first candidate under spraying).
    pub fn path_of(&self, i: usize) -> Vec<Hop> {
        let f = &self.nics.flows[i];
        let mut hops = Vec::new();
        // The first port that carries data (rails are alike).
        let mut port = self.nics.hosts[f.spec.src as usize].port.0 + self.nics.data_rails.0;
        for _ in 0..64 {
            hops.push(self.hop_of(port));
            let next_node = self.fabric.ports[self.fabric.ports[port as usize].peer.idx()].node;
            match self.fabric.nodes[next_node].kind {
                NodeKind::Host(h) => {
                    return if h == f.spec.dst { hops } else { Vec::new() };
                }
                NodeKind::Switch(s) => {
                    let c = self.fabric.routing.candidates(s, f.spec.dst);
                    if c.is_empty() {
                        return Vec::new();
                    }
                    let sw = &self.fabric.switches[s as usize];
                    let lb = self.fabric.lb;
                    let k = match lb {
                        _ if sw.lag > 1
                            && c.len().is_multiple_of(sw.lag as usize)
                            && lb.hashes_flows() =>
                        {
                            ecmp::pick_lag(
                                lb == LbAlgorithm::EcmpModulo,
                                f.hash,
                                sw.salt,
                                sw.lag_salt,
                                c.len(),
                                sw.lag as usize,
                            )
                        }
                        LbAlgorithm::Ecmp => {
                            ecmp::pick(f.hash, self.fabric.switches[s as usize].salt, c.len())
                        }
                        LbAlgorithm::EcmpModulo => ecmp::pick_modulo(
                            f.hash,
                            self.fabric.switches[s as usize].salt,
                            c.len(),
                        ),
                        _ => 0,
                    };
                    port = c[k];
                }
            }
        }
        Vec::new()
    }

    /// The hop of a path leaving by `port`, as the ideal-FCT formulas see it.
    fn hop_of(&self, port: u32) -> Hop {
        let p = &self.fabric.ports[port as usize];
        Hop {
            bps: p.ser_rate.0,
            delay: self.fabric.links[port as usize].delay,
            extra: p.sec_extra as u64,
            cut: self
                .fabric
                .credit()
                .filter(|c| c.port(port as usize).cut_through())
                .map(|c| (c.block as u64, c.router_latency())),
        }
    }

    /// The stages of the paths flow `i` may take when its packets may each take any
    /// next hop the tables offer: stage k holds every link some such path takes at hop
    /// k (see [`crate::model::transport::multipath`]). Empty when a path loses its way (no
    /// entry, or it ends at another host), or the paths do not all reach the
    /// destination in the same number of hops.
    pub fn stages_of(&self, i: usize) -> Vec<Vec<Hop>> {
        let f = &self.nics.flows[i];
        let mut stages = Vec::new();
        let mut layer = vec![self.nics.hosts[f.spec.src as usize].port.0 + self.nics.data_rails.0];
        for _ in 0..64 {
            stages.push(layer.iter().map(|&p| self.hop_of(p)).collect());
            let (mut next, mut arrived) = (Vec::new(), 0);
            for &port in &layer {
                let node = self.fabric.ports[self.fabric.ports[port as usize].peer.idx()].node;
                match self.fabric.nodes[node].kind {
                    NodeKind::Host(h) if h == f.spec.dst => arrived += 1,
                    NodeKind::Host(_) => return Vec::new(),
                    NodeKind::Switch(s) => {
                        let c = self.fabric.routing.candidates(s, f.spec.dst);
                        if c.is_empty() {
                            return Vec::new();
                        }
                        next.extend(c);
                    }
                }
            }
            if arrived == layer.len() {
                return stages;
            }
            if arrived > 0 {
                return Vec::new();
            }
            next.sort_unstable();
            next.dedup();
            layer = next;
        }
        Vec::new()
    }

    /// Round trip of one full-size packet and its ACK on flow `i`'s idle path.
    pub fn base_rtt_of(&self, i: usize) -> Time {
        let hops = self.path_of(i);
        if hops.is_empty() {
            return 1;
        }
        let mtu = self.ctx.params.mtu;
        let fwd = ideal_fct(mtu, mtu, self.ctx.params.header, &hops);
        let ack = self.ctx.params.ack_size as u64;
        let back: Time = hops
            .iter()
            .map(|h| Rate(h.bps).tx_time(ack + h.extra) + h.delay)
            .sum();
        (fwd + back).max(1)
    }

    /// Job completion time of job iteration `j`, if it finished.
    pub fn jct(&self, j: usize) -> Option<Time> {
        let job = &self.nics.jobs[j];
        Some(job.finish? - job.started?)
    }

    /// Analytic lower bound on job iteration `j`'s completion time on an idle fabric.
    /// Collectives of bulk transfers: the bytes each rank must send (`2(n-1)/n * S` for
    /// AllReduce, `(n-1)/n * S` for AlltoAll) at the slowest rank NIC's goodput rate
    /// (line rate x MTU / (MTU + headers)); latency is left out, so the bound is reached
    /// only by large messages. The NIC's rate is that of all its data ports together (on
    /// dual-rail NICs both rails): the host is the one cut every path of its flows
    /// crosses, whatever the load balancer spreads them over, so the bound holds under
    /// spraying and PKTC as under ECMP. Software collectives (latency-bound): the longest path
    /// through the iteration's graph with every message at its ideal FCT and the CPU
    /// overheads on the edges, e.g. `rounds x (L + send + receive overhead)` for a
    /// barrier.
    pub fn job_lower_bound(&self, j: usize) -> Time {
        let spec = &self.nics.jobs[j].spec;
        let kind = match spec.collective {
            JobKind::Collective(kind) => kind,
            JobKind::Software(_) => {
                let l = &self.nics.launcher;
                return l.deps.critical_path(
                    self.nics.flows.len(),
                    spec,
                    |f| self.ideal[f as usize],
                    |i| l.phases[i as usize].duration,
                );
            }
        };
        let (num, den) =
            crate::model::workload::collective::lower_bound_factor(kind, spec.ranks.len());
        let rate = spec
            .ranks
            .iter()
            .map(|&h| {
                self.fabric.ports[self.nics.hosts[h as usize].port.idx()]
                    .ser_rate
                    .0
            })
            .min()
            .unwrap_or(1) as f64
            * self.nics.data_rails.1.max(1) as f64;
        let goodput = rate * self.ctx.params.mtu as f64
            / (self.ctx.params.mtu + self.ctx.params.header) as f64;
        let bytes = spec.size as f64 * num as f64 / den as f64;
        (bytes * 8.0 / goodput * 1e12).floor() as Time
    }

    /// When compute phase `i` (a global phase id, [`crate::model::workload::Phase`]) began and
    /// ended, if it did.
    pub fn phase_times(&self, i: u32) -> (Option<Time>, Option<Time>) {
        self.nics.launcher.phase_times[i as usize]
    }

    /// Compute phases and join points of the run (what [`Self::phase_times`] takes).
    pub fn phase_count(&self) -> u32 {
        self.nics.launcher.phases.len() as u32
    }

    /// Flows finished so far.
    pub fn flows_done(&self) -> usize {
        self.ctx.tally.flows_done
    }

    /// Events processed so far.
    pub fn events(&self) -> u64 {
        self.ctx.queue.popped()
    }

    /// Packets that crossed a link so far, one per hop. Every crossing is a delivery of
    /// its link (`Link::take_head`; a frame lost on the way is not), whichever shard made
    /// it, so the links' counts are the whole count and the hop path keeps no second one.
    pub fn packet_hops(&self) -> u64 {
        self.fabric.links.iter().map(|l| l.delivered).sum()
    }

    /// Current progress.
    pub fn progress(&self) -> Progress {
        Progress {
            now: self.ctx.now,
            events: self.ctx.queue.popped(),
            flows_done: self.ctx.tally.flows_done,
            flows_total: self.nics.flows.len(),
            max_time: self.ctx.params.max_time,
            finished: false,
        }
    }

    /// Node name of a port's owner.
    pub fn port_node_name(&self, port: crate::base::ids::PortId) -> &str {
        &self.fabric.nodes[self.fabric.ports[port].node].name
    }

    /// True if node `n` is a switch.
    pub fn is_switch(&self, n: crate::base::ids::NodeId) -> bool {
        self.fabric.node_is_switch[n.idx()]
    }
}
