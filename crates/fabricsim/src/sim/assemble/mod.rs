//! Assembly: a validated scenario built into the typed tables of a [`Simulation`], by
//! the parts' builders in turn: the wiring (nodes, ports, links: `wiring.rs`), the
//! switches (`fabric.rs`), the workload, routing and the fault model (`routing.rs`), the
//! NICs and flows (`nics.rs`), the switch roles and flow control (`fabric.rs`); then the
//! flows' congestion controllers (which need their paths), TCD, hardware collectives
//! (`collectives.rs`) and the ideal FCTs. Each builder checks what it builds and names
//! the field of an error; the expensive workload is generated only once every fabric
//! check has passed.

mod collectives;
mod fabric;
mod nics;
mod routing;
mod switch_features;
mod wiring;

use crate::base::units::{Rate, Time};
use crate::kernel::events::EventQueue;
use crate::kernel::packet::PacketArena;
use crate::model::cc::{AnyCc, BaseRtt, CcAlgorithm, CongestionControl, FlowContext};
use crate::model::fabric::faults::config::FaultPlan;
use crate::model::fabric::port::N_PRIO;
use crate::model::fabric::telemetry::int::{INT_BYTES_PER_HOP, MAX_INT_HOPS};
use crate::model::fabric::telemetry::tcd::{TcdDetector, TcdParams};
use crate::model::topology::TopoGraph;
use crate::model::transport::multipath::ideal_fct_rails;
use crate::model::transport::rdma::{ideal_fct_ns3, Hop};
use crate::model::workload::Workload;
use crate::scenario::config::{LbAlgorithm, Scenario};
use crate::scenario::ScenarioError;
use crate::sim::*;

impl Simulation {
    /// Builds the model of `sc` over graph `g`; `workload` generates the flows when the
    /// fabric has passed its checks.
    pub(crate) fn assemble(
        sc: &Scenario,
        g: &TopoGraph,
        workload: impl FnOnce() -> Result<Workload, ScenarioError>,
        params: RunParams,
        faults: &FaultPlan,
        file: &str,
    ) -> Result<Simulation, ScenarioError> {
        let lb = sc.fabric.load_balance.resolved();
        let data_rails = sc
            .transport
            .rail
            .data_rails(g.rails)
            .map_err(|m| err(file, "transport.rail", m))?;
        if g.rails > 1 && lb == LbAlgorithm::Pktc {
            return Err(err(
                file,
                "fabric.load_balance.algorithm",
                "GSE's packet containers (pktc) need NICs of one port: this topology's NICs have one per plane",
            ));
        }
        let mut w = wiring::wire(sc, g, faults, file)?;
        let mut sw = fabric::build_switches(sc, g, &w, file)?;
        let ecn_bias = switch_features::ecn_bias(&sc.fabric.ecn, &w.nodes, &w.ports, file)?;
        // The workload is generated only now, once every check of the fabric (switch
        // buffers against their PFC headroom above all) has passed: generating a large
        // workload takes long, and a fabric error must not wait for it.
        let wl = workload()?;
        let routing = routing::build_routing(sc, g, &w, &mut sw.switches, lb, faults, file)?;
        let n_flows = wl.flows.len();
        let fault_state = routing::build_faults(
            sc,
            faults,
            &mut w,
            routing.inputs,
            n_flows,
            sw.switches.len(),
        );
        let hosts = nics::hosts(&w);
        let flows = nics::flows(sc, &w, &hosts, wl.flows, &wl.conn, &wl.frames, data_rails);
        let schedule = nics::Schedule {
            deps: wl.deps,
            phases: wl.phases,
            timed: wl.timed,
            jobs: wl.jobs,
        };
        let (mut launcher, jobs) = nics::launcher(sc, &flows, schedule, &wl.conn);
        launcher.outages = wl.outages;
        launcher.stops = (wl.stops.iter())
            .map(|s| {
                let t = &wl.traces[s.job as usize];
                (t.flows, t.phases, s.at)
            })
            .collect();
        let timeline = match &sc.record.timeline {
            Some(cfg) if !wl.trace_spans.is_empty() => {
                let mut on = vec![false; launcher.phases.len()];
                for &(p, _) in &wl.trace_spans {
                    on[p as usize] = true;
                }
                launcher.on_timeline = on;
                Some(Box::new(crate::model::record::timeline::Timeline::new(
                    cfg,
                    &wl.trace_spans,
                )))
            }
            _ => None,
        };
        let edge_port = fabric::edge_ports(&w);
        let roles = fabric::build_roles(sc, g, &w, &mut sw, lb, n_flows, file)?;
        let flow_control = fabric::build_flow_control(sc, &params, &mut w, &edge_port, &sw);
        let n_ports = w.ports.len();
        let mut arena = PacketArena::new();
        // GSPs tag the packets they put in containers.
        if roles.gse.is_some() {
            arena.keep_tags();
        }
        let transport = nics::transport(sc, &params);
        let ctx = Ctx::new(params, EventQueue::with_capacity(4 * n_ports + 1024), arena);
        let fabric = Fabric {
            table_routing: routing.table_routing,
            lb,
            nodes: w.nodes,
            ports: w.ports,
            links: w.links,
            switches: sw.switches,
            routing: routing.table,
            flow_control,
            node_is_switch: w.node_is_switch,
            edge_port,
            telemetry: crate::model::fabric::telemetry::Telemetry {
                int: vec![crate::model::fabric::telemetry::int::IntTable::new(
                    &sc.fabric.int,
                )],
                ..Default::default()
            },
            flow_drops: vec![0; n_flows],
            flow_src: flows.iter().map(|f| f.spec.src).collect(),
            ecn_bias,
            faults: fault_state,
            route_ahead: false,
            multicast: None,
            capture: None,
            queue_pools: vec![crate::model::fabric::port::queue_pool()],
        };
        let nics = Nics {
            qp_burst: sc.transport.qp_burst,
            qp_turns: crate::model::transport::qp_turn_table(hosts.len(), sc.transport.qp_burst),
            engines: (sc.transport.kind == crate::model::transport::rdma::TransportKind::Message)
                .then(|| {
                    Box::new(crate::model::transport::message::Engines::new(
                        sc.transport.message.clone(),
                        hosts.len(),
                    ))
                }),
            hosts,
            flows,
            jobs,
            launcher,
            transport,
            receivers_done_at: None,
            receiver_cnp: sc.fabric.dr.cnp.receivers() && sc.cc.dcqcn.cnp_from.receiver(),
            data_rails,
            hw: None,
        };
        let mut sim = Simulation {
            ctx,
            fabric,
            roles,
            nics,
            ideal: Vec::new(),
            ideal_rtt: Vec::new(),
            server_of_host: g.server_of_host.clone(),
            record: Recorder {
                buffers: sc.record.buffers,
                ..Recorder::default()
            },
            started: false,
            prefetch: n_ports >= PREFETCH_MIN_PORTS,
            extras: None,
            name: sc.name.clone().unwrap_or_else(|| "run".into()),
            seed: sc.seed,
            convergence: None,
            window: None,
            trainings: wl.trainings,
            traces: wl.traces,
            timeline,
            memory_estimate: 0,
            livelock: Default::default(),
            end_grid: 0,
            shards: None,
        };
        sim.attach_cc(sc, &wl.origin);
        sim.attach_tcd(sc);
        if !wl.hw.is_empty() {
            sim.assemble_collectives(wl.hw, g.rails, file)?;
        }
        sim.attach_ideals(&wl.origin, file)?;
        sim.check_indices();
        Ok(sim)
    }

    /// Checks the model's indices that the per-event path trusts
    /// ([`Fabric::check_indices`]), and that every flow's hosts are hosts of the run.
    pub fn check_indices(&self) {
        let n_hosts = self.nics.hosts.len();
        self.fabric.check_indices(n_hosts);
        let hosts_ok = (self.nics.flows.iter())
            .all(|f| (f.spec.src as usize) < n_hosts && (f.spec.dst as usize) < n_hosts);
        assert!(
            hosts_ok,
            "model built wrong: a flow's host outside its table"
        );
    }

    /// Each flow's congestion controller, now that its path is known: its class's
    /// algorithm, with the base RTT that algorithm asks for (none, the flow's own, or one
    /// value for the whole network, the longest among the algorithm's flows: HPCC's T).
    fn attach_cc(&mut self, sc: &Scenario, origin: &[u32]) {
        let algs: Vec<CcAlgorithm> = (0..self.nics.flows.len())
            .map(|i| {
                let s = &self.nics.flows[i].spec;
                let w = origin.get(i).copied().unwrap_or(0) as usize;
                sc.cc
                    .class
                    .iter()
                    .find(|c| c.matches(w, s.size))
                    .map_or(sc.cc.algorithm, |c| c.algorithm)
            })
            .collect();
        let rtts: Vec<Time> = (0..self.nics.flows.len())
            .map(|i| match algs[i].entry().base_rtt {
                BaseRtt::Unused => 0,
                BaseRtt::PerFlow | BaseRtt::Longest => self.base_rtt_of(i),
            })
            .collect();
        let mut longest: Vec<(CcAlgorithm, Time)> = Vec::new();
        for (&a, &r) in algs.iter().zip(&rtts) {
            if a.entry().base_rtt == BaseRtt::Longest {
                match longest.iter_mut().find(|(b, _)| *b == a) {
                    Some((_, t)) => *t = (*t).max(r),
                    None => longest.push((a, r)),
                }
            }
        }
        for i in 0..self.nics.flows.len() {
            let rtt = match algs[i].entry().base_rtt {
                BaseRtt::Longest => longest
                    .iter()
                    .find(|(b, _)| *b == algs[i])
                    .map_or(rtts[i], |&(_, t)| t),
                BaseRtt::Unused | BaseRtt::PerFlow => rtts[i],
            };
            self.nics.flows[i].cc = self.make_cc(sc, algs[i], i, rtt);
        }
    }

    /// TCD's detectors on every port and priority, when the scenario or a flow's
    /// controller asks for them. A pause can hold back what the downstream ingress admits
    /// before XOFF plus its headroom (on this port's own link).
    fn attach_tcd(&mut self, sc: &Scenario) {
        let tcd_on = sc
            .fabric
            .tcd
            .enabled
            .unwrap_or_else(|| self.nics.flows.iter().any(|f| f.cc.wants_tcd()));
        if !tcd_on {
            return;
        }
        let frame = crate::sim::largest_frame(sc);
        self.fabric.telemetry.tcd = (0..self.fabric.ports.len())
            .flat_map(|i| {
                let p = &self.fabric.ports[i];
                let headroom = sc.fabric.pfc.headroom.unwrap_or_else(|| {
                    default_headroom(
                        p.rate,
                        self.fabric.links[i].delay,
                        frame,
                        sc.fabric.reliability.llr,
                    )
                });
                let tp = TcdParams::resolve(&sc.fabric.tcd, p.rate, sc.fabric.pfc.xoff, headroom);
                std::iter::repeat_n(TcdDetector::new(tp), N_PRIO)
            })
            .collect();
    }

    /// Each flow's ideal FCT (on its path or paths) and its ns-3 form; a flow with no
    /// route is an error naming its workload entry.
    fn attach_ideals(&mut self, origin: &[u32], file: &str) -> Result<(), ScenarioError> {
        self.ideal = (0..self.nics.flows.len())
            .map(|i| self.ideal_fct_of(i))
            .collect();
        self.ideal_rtt = (0..self.nics.flows.len())
            .map(|i| {
                ideal_fct_ns3(
                    self.nics.flows[i].spec.size,
                    self.ctx.params.mtu,
                    &self.path_of(i),
                )
            })
            .collect();
        for (i, &ideal) in self.ideal.iter().enumerate() {
            if ideal == 0 {
                let s = &self.nics.flows[i].spec;
                let w = origin.get(i).copied().unwrap_or(0);
                return Err(err(
                    file,
                    &format!("workload[{w}]"),
                    format!("flow {i} ({} -> {}) has no route", s.src, s.dst),
                ));
            }
        }
        Ok(())
    }

    /// The congestion controller of flow `i` running `alg` with base RTT `rtt`.
    pub(crate) fn make_cc(&self, sc: &Scenario, alg: CcAlgorithm, i: usize, rtt: Time) -> AnyCc {
        let s = &self.nics.flows[i].spec;
        let ctx = FlowContext {
            line: Rate(
                self.fabric.ports[self.nics.hosts[s.src as usize].port.idx()]
                    .rate
                    .0
                    * self.nics.data_rails.1 as u64,
            ),
            base_rtt: rtt,
            start: s.start,
        };
        (alg.entry().build)(&sc.cc, &ctx)
    }

    /// Ideal FCT of flow `i`: on its one path, or, when the load balancer spreads a
    /// flow's packets over paths, over the stages of all of them (their aggregate
    /// capacity per cut, [`crate::model::transport::multipath`]), so that no flow can beat it.
    pub(crate) fn ideal_fct_of(&self, i: usize) -> Time {
        let spread = if self.fabric.lb.spreads_flow() {
            self.stages_of(i)
        } else {
            Vec::new()
        };
        // Without spreading, or where the paths are not of one length (then no stage is
        // a cut), the path the tables give the flow.
        let mut stages: Vec<Vec<Hop>> = if spread.is_empty() {
            self.path_of(i).into_iter().map(|h| vec![h]).collect()
        } else {
            spread
        };
        if self.nics.flows[i].cc.wants_int() {
            let fixed = self.ctx.params.int_nic_bytes as u64;
            for (j, st) in stages.iter_mut().enumerate() {
                let extra = if fixed > 0 {
                    // The NIC's fixed-size header, on every hop.
                    fixed
                } else {
                    // Every switch egress adds one INT record to the frame.
                    INT_BYTES_PER_HOP as u64 * j.min(MAX_INT_HOPS) as u64
                };
                for h in st {
                    h.extra += extra;
                }
            }
        }
        let (mtu, size) = (self.ctx.params.mtu, self.nics.flows[i].spec.size);
        // Spread over r rails of equal paths, a message finishes at best when its busiest
        // rail has delivered its share.
        let rails = self.nics.data_rails.1 as u64;
        ideal_fct_rails(size, mtu, self.ctx.params.header, &stages, rails)
    }
}
