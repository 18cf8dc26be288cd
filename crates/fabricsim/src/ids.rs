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
