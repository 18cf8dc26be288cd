//! Switch roles: what a switch does beyond forwarding, each role a file that owns its
//! configuration, state and handlers, and one line in [`switch_roles!`]'s list below,
//! which makes the [`SwitchRole`] variant and its dispatch. The role is read once per
//! arriving packet (`switch_receive`), before routing; a role that takes the packet
//! handles it with its own state, the network ([`Fabric`]: nodes, ports, queues, links,
//! switches and routing, which holds no role's state) and the [`Ctx`]. Its state is a
//! field of [`RoleStates`], which the simulation keeps beside the fabric
//! (`Simulation::roles`), made by its registry line and built with the other roles' in
//! `sim/assemble/fabric.rs` (`build_roles`).
//! - [`gsp`]: GSE's edge processing node (PKTC spraying, DGSQ request/grant, reordering);
//! - [`dr`]: long haul's deep-buffer DR switch, which answers congestion with CNPs;
//! - [`switch_cnp`]: forward notification: any switch sends CNPs for the CE marks it makes.

use crate::base::ids::PortId;
use crate::kernel::ctx::Ctx;
use crate::kernel::packet::Desc;
use crate::model::fabric::Fabric;

pub mod dr;
pub(crate) mod gsp;
pub mod switch_cnp;

/// The behaviour a switch role adds to forwarding. [`SwitchRole::take`] dispatches to the
/// implementations statically (it runs once per packet and hop).
pub(crate) trait RoleHandlers {
    /// The state of every switch in the role (its field of [`RoleStates`]).
    type State;
    /// Packet `pkt` arrived at switch `s` on `in_port`: true if the role took it (the
    /// switch then does nothing more with it), false to route it as a plain switch does.
    fn take(
        self,
        state: &mut Self::State,
        net: &mut Fabric,
        ctx: &mut Ctx,
        s: u32,
        in_port: PortId,
        pkt: Desc,
    ) -> bool;
}

/// The role registry: `Variant(role type) => state_field: State,` per role, whose role
/// type implements [`RoleHandlers`]. Makes [`SwitchRole`] (with `Plain`, the switch that
/// only forwards), its static dispatch, and [`RoleStates`], where each role's state
/// lives (`None` when no switch plays it).
macro_rules! switch_roles {
    ($( $(#[$doc:meta])* $Variant:ident($Role:ty) => $field:ident: $State:ty, )*) => {
        /// What a switch does besides forwarding (see the module documentation).
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub enum SwitchRole {
            /// Routes and forwards.
            Plain,
            $( $(#[$doc])* $Variant($Role), )*
        }

        impl SwitchRole {
            /// The role's handling of an arriving packet (see [`RoleHandlers::take`]).
            #[inline(always)]
            pub(crate) fn take(
                self,
                roles: &mut RoleStates,
                net: &mut Fabric,
                ctx: &mut Ctx,
                s: u32,
                in_port: PortId,
                pkt: Desc,
            ) -> bool {
                match self {
                    SwitchRole::Plain => false,
                    $( SwitchRole::$Variant(r) => {
                        let state = roles.$field.as_deref_mut().expect(concat!(
                            "a switch in the `", stringify!($Variant), "` role has its state"
                        ));
                        r.take(state, net, ctx, s, in_port, pkt)
                    } )*
                }
            }
        }

        /// Each role's state, `None` when no switch plays the role (the run then pays
        /// nothing for it).
        #[derive(Default)]
        pub struct RoleStates {
            $(
                #[doc = concat!("State of the switches in the `", stringify!($Variant), "` role.")]
                pub $field: Option<Box<$State>>,
            )*
        }
    };
}

switch_roles! {
    /// A GSE GSP (document 000): an edge switch that puts its NICs' data into containers
    /// (and DGSQ VOQs) and restores container order toward them.
    Gsp(gsp::GspRole) => gse: crate::model::gse::Gse,
    /// A long-haul DR switch (document 001): a deep buffer between a campus and the DCI
    /// fibre, which may send CNPs itself.
    Dr(dr::DrRole) => dr: dr::DrState,
    /// A switch that sends DCQCN's CNPs itself, forward to the source, where its queue
    /// would mark (`cc.dcqcn.cnp_from`).
    SwitchCnp(switch_cnp::SwitchCnpRole) => switch_cnp: switch_cnp::SwitchCnpState,
}
