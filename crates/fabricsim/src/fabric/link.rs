//! A unidirectional link: a propagation delay and a ring of packets in flight.
//!
//! The link keeps at most one pending event (the arrival of its head packet), as htsim
//! does: packets enter the ring in transmission order and, since every packet on one link
//! has the same delay, they leave it in the same order.

use super::NodeKind;
use crate::packet::Desc;
use crate::units::Time;
use std::collections::VecDeque;

/// One direction of a cable: exactly one cache line.
#[derive(Clone, Debug)]
#[repr(C, align(64))]
pub struct Link {
    /// Propagation delay plus the receiving node's processing latency.
    pub delay: Time,
    /// The port packets arrive on (the far end's port on this cable).
    pub to_port: u32,
    /// The node at the far end.
    pub to: NodeKind,
    /// Packets delivered.
    pub delivered: u64,
    /// Packets in flight with their arrival times, oldest first.
    pub ring: VecDeque<(Time, Desc)>,
}

impl Link {
    /// A link with the given total delay.
    pub fn new(delay: Time, to_port: u32, to: NodeKind) -> Link {
        Link {
            delay,
            to_port,
            to,
            delivered: 0,
            ring: VecDeque::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_link_is_one_cache_line() {
        assert_eq!(std::mem::size_of::<super::Link>(), 64);
    }
}
