//! Assembly: turn a validated scenario into the typed tables of a [`Simulation`].
//!
//! Ports are numbered node by node in link order (a node's ports are contiguous), and
//! port `i` transmits on link `i`; switches get their shared buffers, ECN markers and
//! seeded random streams; flows get their hashes, paths, base RTTs, congestion
//! controllers and ideal FCTs.

use crate::base::ids::MAX_INDEX;
use crate::base::ids::{NodeId, PortId, PortRange};
use crate::base::seed::{component_rng, component_seed};
use crate::base::units::{Rate, Time};
use crate::kernel::engine::EventQueue;
use crate::kernel::packet::PacketArena;
use crate::model::cc::{line_rate, AnyCc, BaseRtt, CcAlgorithm, CongestionControl, FlowContext};
use crate::model::fabric::buffer::SharedBuffer;
use crate::model::fabric::ecn::RedMarker;
use crate::model::fabric::faults::config::{FaultPlan, FecMode};
use crate::model::fabric::faults::{FaultState, RoutingInputs};
use crate::model::fabric::port::N_PRIO;
use crate::model::fabric::roles::dr::{DrRole, DrState};
use crate::model::fabric::switch::Switch;
use crate::model::fabric::telemetry::int::{INT_BYTES_PER_HOP, MAX_INT_HOPS};
use crate::model::fabric::telemetry::tcd::{TcdDetector, TcdParams};
use crate::model::fabric::{Link, Node, NodeKind, Port};
use crate::model::routing::ecmp::{self, SourcePort};
use crate::model::routing::RoutingTable;
use crate::model::topology::NodeRole;
use crate::model::topology::TopoGraph;
use crate::model::transport::multipath::ideal_fct_rails;
use crate::model::transport::rdma::{ideal_fct_ns3, Hop};
use crate::model::transport::{Flow, Host};
use crate::model::workload::Workload;
use crate::scenario::config::{LbAlgorithm, Scenario, SecurityMode};
use crate::scenario::ScenarioError;
use std::collections::HashMap;

use super::assemble_switch_features::{assemble_switch_cnp, ecn_bias};
use crate::model::fabric::flow_control::{AnyFlowControl, Credit, Pfc};
use crate::model::fabric::switch::SwitchRole;
use crate::model::transport::message::MessageTransport;
use crate::model::transport::rdma::RdmaRc;
use crate::model::transport::rdma::TransportKind;
use crate::model::transport::AnyTransport;
use crate::sim::*;

impl Simulation {
    pub(crate) fn assemble(
        sc: &Scenario,
        g: &TopoGraph,
        workload: impl FnOnce() -> Result<Workload, ScenarioError>,
        params: RunParams,
        faults: &FaultPlan,
        file: &str,
    ) -> Result<Simulation, ScenarioError> {
        let n = g.nodes.len();
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
        // Host index of each node (the first, should a node be listed twice): looked up
        // per node, so a scan of the host list each time was quadratic (tens of seconds
        // at 100k hosts).
        let mut host_of_node = vec![u32::MAX; n];
        for (h, &node) in g.hosts.iter().enumerate() {
            if host_of_node[node] == u32::MAX {
                host_of_node[node] = h as u32;
            }
        }
        for (i, ns) in g.nodes.iter().enumerate() {
            let kind = if ns.is_switch {
                n_sw += 1;
                switch_nodes.push(i as u32);
                NodeKind::Switch(n_sw - 1)
            } else {
                NodeKind::Host(match host_of_node[i] {
                    u32::MAX => 0,
                    h => h,
                })
            };
            nodes.push(Node {
                name: ns.name.clone(),
                kind,
                ports: PortRange {
                    first: PortId(next_port),
                    len: node_links[i].len() as u32,
                },
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
            let la = nodes[l.a].ports.local(PortId(pa)) as u32;
            let lb = nodes[l.b].ports.local(PortId(pb)) as u32;
            let sec = l.security.unwrap_or(sc.fabric.security.mode);
            by_id[pa as usize] = Some((l.a as u32, la, pb, l.rate, l.delay, sec));
            by_id[pb as usize] = Some((l.b as u32, lb, pa, l.rate, l.delay, sec));
        }
        let node_is_switch: Vec<bool> = g.nodes.iter().map(|x| x.is_switch).collect();
        let sw_lat = sc.fabric.switch_latency;
        let lb_hash = &sc.fabric.load_balance.hash;
        let by_id: Vec<PortInit> = by_id
            .into_iter()
            .map(|e| e.expect("every port belongs to a link"))
            .collect();
        let secc = &sc.fabric.security;
        // FEC decodes every codeword at the receiving PHY: its latency is every hop's.
        let fec_latency = match faults.fec {
            FecMode::None => 0,
            FecMode::Rs528 => faults.fec_latency,
        };
        for &(node, local, peer, rate, delay, sec) in &by_id {
            let peer_node = by_id[peer as usize].0;
            let mut port = Port::new(node, nodes[node as usize].kind, local, peer, rate);
            let mut delay = delay + fec_latency;
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
            links.push(Link::new(
                delay,
                PortId(peer),
                nodes[peer_node as usize].kind,
            ));
        }
        // The receiving node's forwarding latency is added to the link's delay (packets
        // reach the egress queue that much after their last bit arrives).
        for p in 0..ports.len() {
            let peer_node = ports[ports[p].peer.idx()].node.idx();
            if node_is_switch[peer_node] {
                links[p].delay += sw_lat;
            }
        }
        // Switches.
        let mut switches = Vec::with_capacity(n_sw as usize);
        // Ports of lossy DR switches: no PFC from them (set below).
        let mut lossy_dr_port = vec![false; ports.len()];
        let mut n_dr = 0u32;
        // The DR switches' names, in DR order (each seeds its own RED draws).
        let mut dr_names: Vec<String> = Vec::new();
        for &sn in &switch_nodes {
            let node = &nodes[sn as usize];
            let dr = match g.nodes[sn as usize].role {
                NodeRole::Dr(spec) => Some(spec),
                NodeRole::Fabric => None,
            };
            let mut headroom = Vec::new();
            let mut ecn = Vec::new();
            for p in node.ports.iter() {
                let port = &ports[p];
                // Bytes arrive on this port over the peer's link.
                let delay = links[port.peer.idx()].delay;
                let h = sc.fabric.pfc.headroom.unwrap_or_else(|| {
                    default_headroom(port.rate, delay, &params, sc.fabric.reliability.llr)
                });
                headroom.push(h);
                ecn.push(RedMarker::from_cfg(&sc.fabric.ecn, port.rate));
            }
            // A DR has its own (deep) buffer; unless its DCI side is lossless it is a
            // drop-tail switch that pauses nobody.
            let (size, pfc_cfg, field) = match dr {
                Some(spec) => {
                    let mut c = sc.fabric.pfc.clone();
                    c.enabled &= spec.dci_lossless;
                    if !c.enabled {
                        for p in node.ports.iter() {
                            lossy_dr_port[p.idx()] = true;
                        }
                    }
                    (spec.buffer, c, "topology.dr_buffer")
                }
                None => (sc.fabric.buffer, sc.fabric.pfc.clone(), "fabric.buffer"),
            };
            // Under credits the input buffers are the limit, counted in credits upstream:
            // the switch's buffer holds all of them and never drops.
            let cc = &sc.fabric.credit;
            let (size, pfc_cfg) = if cc.enabled {
                let per_port = cc.private * cc.vcs as u64 + cc.shared;
                let mut off = pfc_cfg;
                off.enabled = false;
                (per_port * node.ports.len as u64, off)
            } else {
                (size, pfc_cfg)
            };
            let alpha = node.ports.iter().map(|p| pfc_cfg.alpha_for(ports[p].rate));
            let buffer = SharedBuffer::new(size, &pfc_cfg, headroom).with_port_alpha(alpha);
            if pfc_cfg.enabled && buffer.set_aside() >= size {
                return Err(err(
                    file,
                    field,
                    format!(
                        "{} bytes at switch {} is less than its PFC headroom and reserve ({} bytes; an unset fabric.pfc.headroom is 3 x rate x link delay / 8 plus three frames per port, and a round trip more with llr, so long links need more); raise the buffer or lower fabric.pfc.headroom/reserve or the link delay",
                        size,
                        node.name,
                        buffer.set_aside()
                    ),
                ));
            }
            let role = match dr {
                Some(_) => {
                    n_dr += 1;
                    dr_names.push(node.name.clone());
                    SwitchRole::Dr(DrRole(n_dr - 1))
                }
                None => SwitchRole::Plain,
            };
            switches.push(Switch {
                node: NodeId(sn),
                ports: node.ports,
                buffer,
                ecn,
                rng: component_rng(sc.seed, &node.name),
                salt: component_seed(sc.seed, &lb_hash.seed.salt_name(&node.name)) as u32
                    & lb_hash.function.mask(),
                lag: 1,
                lag_salt: component_seed(sc.seed, &(lb_hash.seed.salt_name(&node.name) + "/lag"))
                    as u32
                    & lb_hash.function.mask(),
                rr: 0,
                drops: 0,
                generated: 0,
                consumed: 0,
                held: 0,
                voq_wire: 0,
                role,
            });
        }
        let ecn_bias = ecn_bias(&sc.fabric.ecn, &nodes, &ports, file)?;
        // The workload is generated only now, once every check of the fabric (switch
        // buffers against their PFC headroom above all) has passed: generating a large
        // workload takes long, and a fabric error must not wait for it.
        let Workload {
            flows: specs,
            deps,
            phases,
            timed,
            trainings,
            jobs: job_specs,
            conn,
            origin,
            hw: hw_specs,
        } = workload()?;
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
                        (node.ports.iter())
                            .find(|&p| ports[ports[p].peer].node.idx() == v)
                            .map(|p| p.0)
                    })
                    .collect();
                (sw, r.to_host as u32, ps)
            })
            .collect();
        // A generalized fat tree (switch tiers given) gets up/down tables with lateral
        // fallbacks; every other graph shortest-path tables.
        let tiers: Vec<u8> = switch_nodes
            .iter()
            .map(|&n| g.nodes[n as usize].tier)
            .collect();
        let tiers = if tiers.iter().any(|&t| t > 0) {
            tiers
        } else {
            Vec::new()
        };
        let routing = if tiers.is_empty() {
            RoutingTable::build(
                &nodes,
                &crate::model::fabric::port::ends(&ports),
                &switch_nodes,
                &host_nodes,
                &statics,
            )
        } else {
            RoutingTable::build_tiered(
                &nodes,
                &crate::model::fabric::port::ends(&ports),
                &switch_nodes,
                &host_nodes,
                &tiers,
            )
        }
        .map_err(|e| err(file, "topology", e.0))?;
        let table_routing = routing.tiered() || lb.by_port_state();
        if lb_hash.lag != ecmp::LagChoice::Flat {
            crate::model::fabric::switch::form_lags(
                &mut switches,
                &routing,
                &ports,
                &nodes,
                lb_hash.lag,
                faults,
            )
            .map_err(|m| err(file, "fabric.load_balance.hash.lag", m))?;
        }
        let faults = FaultState::build(
            faults,
            &port_of,
            &ports,
            &mut links,
            &nodes,
            RoutingInputs {
                switch_nodes: switch_nodes.clone(),
                host_nodes: host_nodes.clone(),
                statics: statics.clone(),
                tiers,
            },
            specs.len(),
            switches.len(),
            sw_lat,
            sc.seed,
        );
        // Frames on links that may replay wait in the sender's replay ring (`faults::llr`).
        if let Some(fs) = faults.as_deref() {
            for (p, lf) in ports.iter_mut().zip(&fs.links) {
                if lf.can_replay(fs.llr) {
                    p.set_replays();
                }
            }
        }
        let hosts: Vec<Host> = host_nodes
            .iter()
            .map(|&hn| Host {
                node: hn,
                port: nodes[hn as usize].ports.first,
                active: Default::default(),
            })
            .collect();
        // Flows.
        let mut flows = Vec::with_capacity(specs.len());
        // Under sequential source ports: each NIC's next queue pair index, and the port
        // of each (NIC, connection or lone flow).
        let mut next_qp = vec![0u32; hosts.len()];
        let mut qp_port: HashMap<(u32, Result<u64, usize>), u16> = HashMap::new();
        for (i, s) in specs.into_iter().enumerate() {
            // The NIC's data rate: its port's, times the ports that carry data.
            let line = Rate(ports[hosts[s.src as usize].port.idx()].rate.0 * data_rails.1 as u64);
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
            flows.push(Flow::new(s, hash, sport, cc));
        }
        let ends: Vec<(u32, u32)> = flows.iter().map(|f| (f.spec.src, f.spec.dst)).collect();
        let phase_hosts: Vec<Option<u32>> = phases.iter().map(|p| p.host).collect();
        let notify = crate::model::transport::notify::Notify::new(
            &ends,
            &phase_hosts,
            &timed,
            &job_specs,
            sc.transport.notify_latency,
        );
        let deps = Deps::build(
            flows.len(),
            phases.len(),
            &deps,
            &timed,
            &job_specs,
            &conn,
            &notify,
        );
        let mut order: Vec<u32> = (0..flows.len() as u32)
            .filter(|&i| deps.pending[i as usize] == 0)
            .collect();
        order.sort_by_key(|&i| (flows[i as usize].spec.start, i));
        let jobs: Vec<JobState> = job_specs
            .into_iter()
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
        let n_ports = ports.len();
        let edge_port: Vec<bool> = ports
            .iter()
            .map(|p| {
                matches!(p.owner(), NodeKind::Switch(_))
                    && matches!(ports[p.peer.idx()].owner(), NodeKind::Host(_))
            })
            .collect();
        let gse = if lb == LbAlgorithm::Pktc {
            Some(Box::new(Fabric::build_gse(
                &sc.fabric.gse,
                &nodes,
                &ports,
                &hosts.iter().map(|h| h.port).collect::<Vec<_>>(),
                &mut switches,
            )))
        } else {
            None
        };
        let dr_cfg = &sc.fabric.dr;
        if n_dr == 0 && dr_cfg.cnp.dr() {
            return Err(err(
                file,
                "fabric.dr.cnp",
                format!(
                    "\"{}\" needs DR switches, and this topology has none (topology kind \"multi_campus\" has them)",
                    dr_cfg.cnp.name()
                ),
            ));
        }
        let node_names: Vec<&str> = g.nodes.iter().map(|n| n.name.as_str()).collect();
        let switch_cnp =
            assemble_switch_cnp(sc, &mut switches, &node_names, n_dr, flows.len(), file)?;
        let dr = (n_dr > 0).then(|| {
            // Each DCI link's two ports, with the campus of the DR that sends on each.
            let mut dci = Vec::new();
            for li in g.dci_links() {
                let l = &g.links[li];
                for (p, end) in port_of[li].into_iter().zip([l.a, l.b]) {
                    dci.push((PortId(p), g.nodes[end].campus.unwrap_or(0)));
                }
            }
            dci.sort_unstable();
            Box::new(DrState::new(
                dr_cfg.clone(),
                (dr_names.iter())
                    .map(|n| component_rng(sc.seed, &format!("{n}/fabric.dr.red")))
                    .collect(),
                dci,
                ports.len(),
                n_dr as usize,
                flows.len(),
            ))
        });
        // PFC runs where the scope says and never from a lossy DR.
        let pfc_on: Option<Vec<bool>> = if params.pfc_edge_only || n_dr > 0 {
            Some(
                (0..ports.len())
                    .map(|p| (!params.pfc_edge_only || edge_port[p]) && !lossy_dr_port[p])
                    .collect(),
            )
        } else {
            None
        };
        let flow_control = if sc.fabric.credit.enabled {
            // A credit return crosses the cable back: its propagation, without the
            // forwarding latency folded into the delay of links toward a switch.
            let prop: Vec<Time> = (0..ports.len())
                .map(|p| {
                    let to_switch = node_is_switch[ports[ports[p].peer.idx()].node.idx()];
                    links[p].delay - if to_switch { sw_lat } else { 0 }
                })
                .collect();
            let c = Credit::new(&sc.fabric.credit, &ports, &prop, sw_lat);
            for (i, p) in ports.iter_mut().enumerate() {
                if c.port(i).tracked() {
                    p.set_credit_gated();
                }
            }
            AnyFlowControl::Credit(Box::new(c))
        } else if params.pfc {
            AnyFlowControl::Pfc(Pfc::new(
                pfc_on,
                params.ctrl_prio,
                params.pause_quanta,
                n_ports,
            ))
        } else {
            AnyFlowControl::Lossy
        };
        let transport = match sc.transport.kind {
            TransportKind::RdmaRc => AnyTransport::RdmaRc(RdmaRc {
                ack_every: params.ack_every,
            }),
            TransportKind::Message => AnyTransport::Message(MessageTransport {
                ack_every: params.ack_every,
            }),
        };
        let mut sim = Simulation {
            ctx: Ctx {
                now: 0,
                queue: EventQueue::with_capacity(4 * n_ports + 1024),
                arena: {
                    // GSPs tag the packets they put in containers.
                    let mut a = PacketArena::new();
                    if gse.is_some() {
                        a.keep_tags();
                    }
                    a
                },
                counters: Counters::default(),
                tally: Default::default(),
                params,
                shard: 0,
                outbox: Vec::new(),
                flow_drops: Vec::new(),
                flow_lost: Vec::new(),
                jobs_done: Vec::new(),
                event_budget: u64::MAX,
                past_budget: Vec::new(),
                window_end: 0,
                late: false,
                late_releases: Vec::new(),
            },
            fabric: Fabric {
                table_routing,
                lb,
                nodes,
                ports,
                links,
                switches,
                routing,
                flow_control,
                node_is_switch,
                edge_port,
                telemetry: crate::model::fabric::telemetry::Telemetry {
                    int: vec![crate::model::fabric::telemetry::int::IntTable::new(
                        &sc.fabric.int,
                    )],
                    ..Default::default()
                },
                flow_drops: vec![0; flows.len()],
                flow_src: flows.iter().map(|f| f.spec.src).collect(),
                gse,
                dr,
                ecn_bias,
                switch_cnp,
                faults,
                route_ahead: false,
                multicast: None,
                capture: None,
                queue_pools: vec![crate::model::fabric::port::queue_pool()],
            },
            nics: Nics {
                hosts,
                flows,
                jobs,
                launcher: FlowLauncher {
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
                },
                transport,
                receivers_done_at: None,
                receiver_cnp: dr_cfg.cnp.receivers() && sc.cc.dcqcn.cnp_from.receiver(),
                data_rails,
                hw: None,
                engines: (sc.transport.kind == TransportKind::Message).then(|| {
                    Box::new(crate::model::transport::message::Engines::new(
                        sc.transport.message.clone(),
                        host_nodes.len(),
                    ))
                }),
            },
            ideal: Vec::new(),
            ideal_rtt: Vec::new(),
            server_of_host: g.server_of_host.clone(),
            record: Recorder {
                buffers: sc.record.buffers,
                ..Recorder::default()
            },
            started: false,
            prefetch: n_ports >= PREFETCH_MIN_PORTS,
            name: sc.name.clone().unwrap_or_else(|| "run".into()),
            seed: sc.seed,
            convergence: None,
            window: None,
            trainings,
            memory_estimate: 0,
            livelock: Default::default(),
            end_grid: 0,
            shards: None,
        };
        let algs: Vec<CcAlgorithm> = (0..sim.nics.flows.len())
            .map(|i| {
                let s = &sim.nics.flows[i].spec;
                let w = origin.get(i).copied().unwrap_or(0) as usize;
                sc.cc
                    .class
                    .iter()
                    .find(|c| c.matches(w, s.size))
                    .map_or(sc.cc.algorithm, |c| c.algorithm)
            })
            .collect();
        // Base RTTs as each algorithm asks: none, the flow's own, or one value for the
        // whole network, the longest among the algorithm's flows (HPCC's T).
        let rtts: Vec<Time> = (0..sim.nics.flows.len())
            .map(|i| match algs[i].entry().base_rtt {
                BaseRtt::Unused => 0,
                BaseRtt::PerFlow | BaseRtt::Longest => sim.base_rtt_of(i),
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
        for i in 0..sim.nics.flows.len() {
            let rtt = match algs[i].entry().base_rtt {
                BaseRtt::Longest => longest
                    .iter()
                    .find(|(b, _)| *b == algs[i])
                    .map_or(rtts[i], |&(_, t)| t),
                BaseRtt::Unused | BaseRtt::PerFlow => rtts[i],
            };
            sim.nics.flows[i].cc = sim.make_cc(sc, algs[i], i, rtt);
        }
        let tcd_on = sc
            .fabric
            .tcd
            .enabled
            .unwrap_or_else(|| sim.nics.flows.iter().any(|f| f.cc.wants_tcd()));
        if tcd_on {
            // A pause can hold back what the downstream ingress admits before XOFF plus
            // its headroom (on this port's own link).
            sim.fabric.telemetry.tcd = (0..sim.fabric.ports.len())
                .flat_map(|i| {
                    let p = &sim.fabric.ports[i];
                    let headroom = sc.fabric.pfc.headroom.unwrap_or_else(|| {
                        default_headroom(
                            p.rate,
                            sim.fabric.links[i].delay,
                            &sim.ctx.params,
                            sc.fabric.reliability.llr,
                        )
                    });
                    let tp =
                        TcdParams::resolve(&sc.fabric.tcd, p.rate, sc.fabric.pfc.xoff, headroom);
                    std::iter::repeat_n(TcdDetector::new(tp), N_PRIO)
                })
                .collect();
        }
        if !hw_specs.is_empty() {
            sim.assemble_collectives(hw_specs, g.rails, file)?;
        }
        sim.ideal = (0..sim.nics.flows.len())
            .map(|i| sim.ideal_fct_of(i))
            .collect();
        sim.ideal_rtt = (0..sim.nics.flows.len())
            .map(|i| {
                ideal_fct_ns3(
                    sim.nics.flows[i].spec.size,
                    sim.ctx.params.mtu,
                    &sim.path_of(i),
                )
            })
            .collect();
        for (i, &ideal) in sim.ideal.iter().enumerate() {
            if ideal == 0 {
                let s = &sim.nics.flows[i].spec;
                let w = origin.get(i).copied().unwrap_or(0);
                return Err(err(
                    file,
                    &format!("workload[{w}]"),
                    format!("flow {i} ({} -> {}) has no route", s.src, s.dst),
                ));
            }
        }
        Ok(sim)
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
