//! Typed ids of the model's components.
//!
//! Components live in typed `Vec`s and refer to each other by index. A bare `u32` says
//! nothing about which table it indexes; these newtypes do, at no cost (each is a `u32`).
//! A missing reference is an `Option` of an id, never a magic value.

macro_rules! id {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
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

/// Tables indexed by their typed id (`ports[p.peer]`), so an id of one table cannot
/// index another.
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
    };
}

indexed_by!(PortId => crate::fabric::Port);
indexed_by!(LinkId => crate::fabric::Link);
indexed_by!(NodeId => crate::fabric::Node);
indexed_by!(FlowId => crate::transport::Flow);
indexed_by!(HostId => crate::transport::Host);

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
}
