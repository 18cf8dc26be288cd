//! The NICs' builders: hosts, flows with their source ports and hashes (line-rate
//! controllers until their paths are known), the launcher with its dependency graph and
//! job records, and the transport.

use super::wiring::Wiring;
use crate::base::seed::component_seed;
use crate::base::units::Rate;
use crate::model::cc::{line_rate, AnyCc};
use crate::model::routing::ecmp::{self, SourcePort};
use crate::model::transport::message::MessageTransport;
use crate::model::transport::rdma::{RdmaRc, TransportKind};
use crate::model::transport::{AnyTransport, Flow, Host};
use crate::model::workload::collective::segment::FrameSize;
use crate::model::workload::{FlowSpec, JobSpec, Phase, TimedDep};
use crate::scenario::config::Scenario;
use crate::sim::{Deps, FlowLauncher, JobState, RunParams};
use std::collections::HashMap;

/// A NIC per host, on its node's first port.
pub(super) fn hosts(w: &Wiring) -> Vec<Host> {
    (w.host_nodes.iter())
        .map(|&hn| Host {
            node: hn,
            port: w.nodes[hn as usize].ports.first,
            active: Default::default(),
        })
        .collect()
}

/// The flows: each with its UDP source port (drawn from the seed, or numbered per NIC as
/// NICs do; flows of one queue pair share it), its ECMP hash, and a line-rate
/// controller until its path is known.
pub(super) fn flows(
    sc: &Scenario,
    w: &Wiring,
    hosts: &[Host],
    specs: Vec<FlowSpec>,
    conn: &[Option<u64>],
    frames: &[FrameSize],
    data_rails: (u32, u32),
) -> Vec<Flow> {
    let mtu = sc.transport.mtu;
    let lb_hash = &sc.fabric.load_balance.hash;
    let mut flows = Vec::with_capacity(specs.len());
    // Under sequential source ports: each NIC's next queue pair index, and the port
    // of each (NIC, connection or lone flow).
    let mut next_qp = vec![0u32; hosts.len()];
    let mut qp_port: HashMap<(u32, Result<u64, usize>), u16> = HashMap::new();
    for (i, s) in specs.into_iter().enumerate() {
        // The NIC's data rate: its port's, times the ports that carry data.
        let line = Rate(w.ports[hosts[s.src as usize].port.idx()].rate.0 * data_rails.1 as u64);
        // The real controller is made once the flow's path (and base RTT) is known.
        let cc = AnyCc::LineRate(line_rate::LineRate { bps: line.0 as f64 });
        // RoCE NICs derive the UDP source port from the queue pair; by default here it
        // is drawn from the seed so that a different seed gives different ECMP paths,
        // or (`source_port = "sequential"`) numbered per NIC as NICs do.
        // Flows of one queue pair (steps of a collective) share its source port.
        let key = match conn[i] {
            Some(k) => k,
            None => component_seed(sc.seed, &format!("flow{i}")),
        };
        let sport = match lb_hash.source_port {
            SourcePort::Random => (key & 0xffff) as u16 | 0xc000,
            SourcePort::Sequential => {
                let next = &mut next_qp[s.src as usize];
                *qp_port.entry((s.src, conn[i].ok_or(i))).or_insert_with(|| {
                    let p = ecmp::SPORT_BASE + (*next % 0x4000) as u16;
                    *next += 1;
                    p
                })
            }
        };
        let hash = lb_hash.function.flow_hash(s.src, s.dst, sport);
        let seg = frames.get(i).map_or(mtu, |fr| fr.payload(s.size, mtu));
        let mut f = Flow::new(s, hash, sport, cc);
        if seg != mtu {
            f.segment = seg;
        }
        flows.push(f);
    }
    flows
}

/// What the workload gives the launcher beside its flows.
pub(super) struct Schedule {
    pub deps: Vec<(u32, u32)>,
    pub phases: Vec<Phase>,
    pub timed: Vec<TimedDep>,
    pub jobs: Vec<JobSpec>,
}

/// The launcher (flows in start order, the dependency graph with its notifications,
/// compute phases) and the job records.
pub(super) fn launcher(
    sc: &Scenario,
    flows: &[Flow],
    s: Schedule,
    conn: &[Option<u64>],
) -> (FlowLauncher, Vec<JobState>) {
    let ends: Vec<(u32, u32)> = flows.iter().map(|f| (f.spec.src, f.spec.dst)).collect();
    let phase_hosts: Vec<Option<u32>> = s.phases.iter().map(|p| p.host).collect();
    let notify = crate::model::transport::notify::Notify::new(
        &ends,
        &phase_hosts,
        &s.timed,
        &s.jobs,
        sc.transport.notify_latency,
    );
    let deps = Deps::build(
        flows.len(),
        s.phases.len(),
        &s.deps,
        &s.timed,
        &s.jobs,
        conn,
        &notify,
    );
    let mut order: Vec<u32> = (0..flows.len() as u32)
        .filter(|&i| deps.pending[i as usize] == 0)
        .collect();
    order.sort_by_key(|&i| (flows[i as usize].spec.start, i));
    let jobs: Vec<JobState> = (s.jobs.into_iter())
        .map(|spec| JobState {
            left: spec.n_flows + spec.n_phases,
            started: if spec.after.is_none() {
                Some(spec.start)
            } else {
                None
            },
            finish: None,
            last_done: 0,
            spec,
        })
        .collect();
    let phases = s.phases;
    let launcher = FlowLauncher {
        lanes: vec![crate::model::transport::launcher::Lane {
            order,
            ..Default::default()
        }],
        deps,
        phase_times: vec![(None, None); phases.len()],
        phases_left: phases.len(),
        everywhere: Vec::new(),
        phases,
        ..Default::default()
    };
    (launcher, jobs)
}

/// The NICs' transport: RDMA RC (go-back-N) or the message transport.
pub(super) fn transport(sc: &Scenario, params: &RunParams) -> AnyTransport {
    match sc.transport.kind {
        TransportKind::RdmaRc => AnyTransport::RdmaRc(RdmaRc {
            ack_every: params.ack_every,
            mtu: params.mtu,
        }),
        TransportKind::Message => AnyTransport::Message(MessageTransport {
            ack_every: params.ack_every,
        }),
    }
}
