//! The modelled parts, each owning its configuration, validation, state and handlers,
//! in order (a part imports only parts listed before it, `tests/layers.rs`): topology,
//! routing, GSE, collectives, capture hooks, the fabric, congestion control, workloads,
//! transport (the NICs), long haul, recording.

pub mod capture;
pub mod cc;
pub mod fabric;
pub mod gse;
pub mod hw_collective;
pub mod longhaul;
pub mod record;
pub mod routing;
pub mod topology;
pub mod transport;
pub mod workload;
