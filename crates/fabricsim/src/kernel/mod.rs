//! The simulation kernel: the event queue, packets and every payload type they carry,
//! and the context ([`ctx::Ctx`]) every handler shares. Imports only [`crate::base`].

pub mod ctx;
pub mod events;
pub mod packet;
