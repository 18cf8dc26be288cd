//! The fabric: ports, links, switches and their shared buffers.
//!
//! A full-duplex cable is two [`Link`]s; each link is fed by exactly one egress [`Port`],
//! so a link's id equals the id of the port that transmits on it, and the port at the
//! other end of the cable (its `peer`) is where the packets arrive (their ingress port).
//! Switches ([`switch::Switch`]) own a [`buffer::SharedBuffer`] and route packets among
//! their ports; hosts (NICs) are the transport's business.
//!
//! **The extras.** The handlers a packet passes at every hop take a `const EXTRAS: bool`.
//! With `false` they leave out the tests for the mechanisms most runs do not use (faults
//! on links and ports, switch roles and the packets switches make, multicast, table
//! routing, credit flow control, INT and TCD telemetry, ECN ingress bias, PHYSec
//! overhead; at the NICs, several ports a NIC and QP bursts). A run picks one build of
//! its loop, once: `false` when [`Fabric::uses_extras`] and the NICs
//! ([`crate::model::transport::Nics::uses_extras`]) say it uses none of them. Handlers
//! called off that path (timers, roles, faults) use `true`, which tests everything.
//! Leaving the tests out of a plain run saved 8.5 % of the instructions at k = 8
//! (`docs/design/performance.md`).

pub mod buffer;
pub mod ecn;
pub(crate) mod egress;
pub mod flow_control;
pub mod link;
pub use flow_control::pfc;

pub mod faults;
pub mod multicast;
pub mod port;
pub mod roles;
pub mod security;
pub mod switch;
pub mod telemetry;

pub use link::Link;
pub use port::Port;

pub use crate::base::ids::{NodeId, PortId};
use crate::base::trusted::Trusted;
use crate::model::fabric::telemetry::Telemetry;
use crate::model::routing::{LbAlgorithm, RoutingTable};
pub use crate::model::topology::{Node, NodeKind};

/// The network: nodes, ports, links, switches and what they do to packets, routing,
/// link-level flow control and the telemetry switches add. Its handlers (`fabric/`) take
/// `&mut self` and the [`Ctx`]. The switch roles' state is not here but beside it
/// ([`roles::RoleStates`]): a role's handlers take their own state and this network, so
/// no role reaches another's state; the NICs (`transport::Nics`) take it where a packet
/// crosses into or out of a host.
pub struct Fabric {
    /// Switches route by table ([`Fabric::route_table`]): up/down tables, or a balancer
    /// that reads the ports' state.
    pub(crate) table_routing: bool,
    /// How switches choose among equal-cost next hops.
    pub lb: LbAlgorithm,
    /// All nodes.
    pub nodes: Vec<Node>,
    /// All ports (port i transmits on link i).
    pub ports: Vec<Port>,
    /// All links.
    pub links: Vec<Link>,
    /// Switches.
    pub switches: Vec<switch::Switch>,
    /// Routing tables.
    pub routing: RoutingTable,
    /// Link-level flow control (PFC, or none).
    pub(crate) flow_control: crate::model::fabric::flow_control::AnyFlowControl,
    pub(crate) node_is_switch: Vec<bool>,
    /// Switch ports whose peer is a host.
    pub(crate) edge_port: Vec<bool>,
    /// INT records and TCD detectors.
    pub telemetry: Telemetry,
    /// Data packets the switches dropped, by flow.
    pub flow_drops: Vec<u64>,
    /// Source host of each flow, for the frames a switch sends back to a flow's sender
    /// (CNPs of long-haul DR switches): packets do not carry their source
    /// ([`crate::kernel::packet::Packet`]). Four bytes a flow, kept in every run so that any
    /// switch that answers a flow's sender can.
    pub(crate) flow_src: Vec<u32>,
    /// ECN marking bias by ingress port id (`fabric.ecn.ingress_bias`); empty, the
    /// marking path's one test, when the scenario sets none.
    pub ecn_bias: Vec<f64>,
    /// Faults, bit errors and link-level retransmission (`None` when the scenario has
    /// none of them).
    pub faults: Option<Box<crate::model::fabric::faults::FaultState>>,
    /// Choose a packet's ECMP egress at the next switch when it is put on the link
    /// (plain ECMP only: the choice is a pure function of switch, destination and hash;
    /// large models only).
    pub(crate) route_ahead: bool,
    /// Switch multicast tables (hardware collectives).
    pub multicast: Option<Box<crate::model::fabric::multicast::MulticastTables>>,
    /// The packet capture (`[record.pcap]`); `None`, the transmit path's one test, when
    /// the scenario asks for none.
    pub capture: Option<Box<crate::model::capture::Capture>>,
    /// Where the ports' queues keep their descriptors: one pool per shard (one in a run
    /// on one thread), port `p`'s being `queue_pools[ports[p].pool]`.
    pub queue_pools: Vec<crate::model::fabric::port::QueuePool>,
}

impl Fabric {
    /// Whether the run uses any of the fabric's extras (see the module documentation):
    /// a loop built with `EXTRAS = false` must not run a fabric for which this is true.
    pub(crate) fn uses_extras(&self) -> bool {
        self.faults.is_some()
            || self.multicast.is_some()
            || self.table_routing
            || !matches!(
                self.flow_control,
                crate::model::fabric::flow_control::AnyFlowControl::Lossy
                    | crate::model::fabric::flow_control::AnyFlowControl::Pfc(_)
            )
            || !self.telemetry.tcd.is_empty()
            || !self.ecn_bias.is_empty()
            || (self.switches.iter()).any(|s| !matches!(s.role, roles::SwitchRole::Plain))
            || (self.ports.iter()).any(|p| p.sec_extra != 0)
    }

    /// Port `p` and the pool its queues keep their descriptors in, to queue or dequeue.
    #[inline(always)]
    pub(crate) fn port_and_pool(
        &mut self,
        p: usize,
    ) -> (
        &mut crate::model::fabric::port::Port,
        &mut crate::model::fabric::port::QueuePool,
    ) {
        let port = self.ports.at_mut(p);
        let pool = self.queue_pools.at_mut(port.pool as usize);
        (port, pool)
    }

    /// Each port's node and peer, as routing reads the wiring.
    pub fn port_ends(&self) -> Vec<crate::model::topology::PortEnds> {
        crate::model::fabric::port::ends(&self.ports)
    }

    /// The pool port `p`'s queues keep their descriptors in, to read them.
    #[inline(always)]
    pub fn queue_pool(&self, p: usize) -> &crate::model::fabric::port::QueuePool {
        self.queue_pools.at(self.ports.at(p).pool as usize)
    }

    /// Checks that every index the per-event path reads from this model without a
    /// bounds check ([`crate::base::trusted`]) lies inside its table, for a run of
    /// `n_hosts` hosts: a port's queue pool, switch and peer; a link's far end; a
    /// switch's ports and the per-port tables indexed by their local index; the routing
    /// table's switches and hosts (its entries are checked as it is built). Panics (a
    /// model built wrong is a bug, never an input). Cheap: one pass over the model.
    pub(crate) fn check_indices(&self, n_hosts: usize) {
        let (n_ports, n_sw) = (self.ports.len(), self.switches.len());
        let ends_at = |owner: NodeKind, p: PortId| match owner {
            NodeKind::Switch(s) => self
                .switches
                .get(s as usize)
                .is_some_and(|sw| sw.ports.contains(p)),
            NodeKind::Host(h) => (h as usize) < n_hosts,
        };
        let check =
            |what: &str, ok: bool| assert!(ok, "model built wrong: {what} outside its table");
        check("a link", self.links.len() == n_ports);
        for (i, p) in self.ports.iter().enumerate() {
            check("a queue pool", (p.pool as usize) < self.queue_pools.len());
            check("a port's peer", p.peer.idx() < n_ports);
            check("a port's owner", ends_at(p.owner(), PortId(i as u32)));
        }
        for l in &self.links {
            check(
                "a link's far end",
                l.to_port.idx() < n_ports && ends_at(l.to, l.to_port),
            );
        }
        for sw in &self.switches {
            let n = sw.ports.len as usize;
            check("a switch's ports", sw.ports.first.idx() + n <= n_ports);
            check("a switch's markers", sw.ecn.len() >= n);
            check("a switch's buffer", sw.buffer.n_ports() >= n);
        }
        check("a routed switch", self.routing.n_switches() >= n_sw);
        check("a routed host", self.routing.n_hosts() >= n_hosts);
    }
}
