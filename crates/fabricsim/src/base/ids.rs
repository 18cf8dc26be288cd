//! Typed ids of the model's components.
//!
//! Components live in typed `Vec`s and refer to each other by index. A bare `u32` says
//! nothing about which table it indexes; these newtypes do, at no cost (each is a `u32`).
//! A missing reference is an `Option` of an id, never a magic value.

macro_rules! id {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
        #[repr(transparent)] // an event's field (`Event::decode`)
        pub struct $name(pub u32);

        impl $name {
            /// The index into its table.
            #[inline(always)]
            pub fn idx(self) -> usize {
                self.0 as usize
            }
        }

        impl From<$name> for usize {
            #[inline(always)]
            fn from(id: $name) -> usize {
                id.0 as usize
            }
        }
    };
}

/// Bits of a component index in an encoded event.
pub const IDX_BITS: u32 = 24;
/// Largest component index an event can address (ports, links, hosts, flows, faults):
/// the limit every generator and topology checks against.
pub const MAX_INDEX: u32 = (1 << IDX_BITS) - 1;

id!(
    /// A port: one end of a cable, with the egress queues that transmit on the link of
    /// the same id.
    PortId
);
id!(
    /// A link: one direction of a cable, fed by the port of the same id.
    LinkId
);
id!(
    /// A node: a host (NIC) or a switch.
    NodeId
);
id!(
    /// A flow: one message on one queue pair.
    FlowId
);
id!(
    /// A host (NIC), by its index among the hosts.
    HostId
);
id!(
    /// A GSE GSP: an edge switch that schedules and sprays for its NICs.
    GspId
);

impl PortId {
    /// The link this port transmits on.
    #[inline(always)]
    pub fn link(self) -> LinkId {
        LinkId(self.0)
    }
}

impl LinkId {
    /// The port that transmits on this link.
    #[inline(always)]
    pub fn port(self) -> PortId {
        PortId(self.0)
    }
}

/// A node's ports: the contiguous ids `first..first + len` (ports are numbered node by
/// node), and the local index `0..len` a switch's per-port tables use.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PortRange {
    /// The node's first port.
    pub first: PortId,
    /// How many ports it has.
    pub len: u32,
}

impl PortRange {
    /// The local index of port `p`, which must be one of these.
    #[inline(always)]
    pub fn local(self, p: PortId) -> usize {
        debug_assert!(self.contains(p), "{p:?} is not in {self:?}");
        (p.0 - self.first.0) as usize
    }

    /// The port of local index `i`.
    #[inline(always)]
    pub fn port(self, i: usize) -> PortId {
        debug_assert!(i < self.len as usize);
        PortId(self.first.0 + i as u32)
    }

    /// True if `p` is one of these ports.
    #[inline]
    pub fn contains(self, p: PortId) -> bool {
        p.0 >= self.first.0 && p.0 - self.first.0 < self.len
    }

    /// The ports, in id order.
    pub fn iter(self) -> impl Iterator<Item = PortId> {
        (self.first.0..self.first.0 + self.len).map(PortId)
    }
}

/// Tables indexed by their typed id (`ports[p.peer]`, or `ports.at(p.peer)` on the
/// per-event path: [`crate::base::trusted`]), so an id of one table cannot index
/// another. Each table's owner says so beside its item type.
macro_rules! indexed_by {
    ($id:ty => $item:ty) => {
        impl std::ops::Index<$id> for Vec<$item> {
            type Output = $item;
            #[inline(always)]
            fn index(&self, id: $id) -> &$item {
                &self[id.0 as usize]
            }
        }
        impl std::ops::IndexMut<$id> for Vec<$item> {
            #[inline(always)]
            fn index_mut(&mut self, id: $id) -> &mut $item {
                &mut self[id.0 as usize]
            }
        }
        impl $crate::base::trusted::Trusted<$id> for Vec<$item> {
            type Item = $item;
            #[inline(always)]
            fn at(&self, id: $id) -> &$item {
                $crate::base::trusted::Trusted::at(self.as_slice(), id.0 as usize)
            }
            #[inline(always)]
            fn at_mut(&mut self, id: $id) -> &mut $item {
                $crate::base::trusted::Trusted::at_mut(self.as_mut_slice(), id.0 as usize)
            }
        }
    };
}

pub(crate) use indexed_by;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_port_and_its_link_share_the_index() {
        assert_eq!(PortId(7).link(), LinkId(7));
        assert_eq!(LinkId(7).port(), PortId(7));
        assert_eq!(PortId(7).idx(), 7);
        assert_eq!(usize::from(FlowId(3)), 3);
    }

    #[test]
    fn a_port_range_maps_ids_to_local_indices_and_back() {
        let r = PortRange {
            first: PortId(10),
            len: 4,
        };
        assert_eq!(r.local(PortId(12)), 2);
        assert_eq!(r.port(3), PortId(13));
        assert!(r.contains(PortId(10)) && r.contains(PortId(13)));
        assert!(!r.contains(PortId(9)) && !r.contains(PortId(14)));
        let ids: Vec<u32> = r.iter().map(|p| p.0).collect();
        assert_eq!(ids, [10, 11, 12, 13]);
    }
}
