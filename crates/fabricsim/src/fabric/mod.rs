//! The fabric: ports, links, switches and their shared buffers.
//!
//! A full-duplex cable is two [`Link`]s; each link is fed by exactly one egress [`Port`],
//! so a link's id equals the id of the port that transmits on it, and the port at the
//! other end of the cable (its `peer`) is where the packets arrive (their ingress port).
//! Switches ([`switch::Switch`]) own a [`buffer::SharedBuffer`] and route packets among
//! their ports; hosts (NICs) are the transport's business.

pub mod buffer;
pub mod ecn;
pub(crate) mod egress;
pub mod flow_control;
pub mod link;
pub use flow_control::pfc;

pub mod port;
pub mod security;
pub mod switch;

pub use link::Link;
pub use port::Port;

pub use crate::ids::{NodeId, PortId};

/// What a node is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NodeKind {
    /// A NIC, with its host id.
    Host(u32),
    /// A switch, with its index in the switch table.
    Switch(u32),
}

/// A node: its name, kind and its ports (contiguous ids).
#[derive(Clone, Debug)]
pub struct Node {
    /// Name from the topology (`leaf0`, `host3`).
    pub name: String,
    /// Host or switch.
    pub kind: NodeKind,
    /// Its ports.
    pub ports: crate::ids::PortRange,
}
