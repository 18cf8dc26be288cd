//! Switch roles: what a switch in a role does beyond forwarding, each role a file that
//! owns its configuration, state and handlers ([`super::switch::RoleHandlers`]).
//! - [`gsp`]: GSE's edge processing node (PKTC spraying, DGSQ request/grant, reordering);
//! - [`dr`]: long haul's deep-buffer DR switch, which answers congestion with CNPs;
//! - [`switch_cnp`]: forward notification: any switch sends CNPs for the CE marks it makes.

pub mod dr;
pub(crate) mod gsp;
pub mod switch_cnp;
