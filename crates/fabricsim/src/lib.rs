//! fabricsim: a fast, deterministic, packet-level simulator of AI and HPC datacenter
//! networks.
//!
//! A run is a pure function of (scenario, seed). The crate is in layers, bottom to top,
//! each importing only from below (`tests/layers.rs` enforces the order):
//! - [`base`]: units, typed ids, seeds, parameters, bounded input files, floors, presets,
//!   the block pool and memory accounting, wire formats, chart drawing;
//! - [`kernel`]: the event queue, packets with every payload type, and [`kernel::ctx::Ctx`],
//!   the context every handler shares;
//! - [`model`]: the modelled parts, each owning its config, state and handlers: topology,
//!   routing, GSE, collectives, capture, the fabric (links, ports, switches and their
//!   roles, flow control, faults, telemetry), congestion control, workloads, transport
//!   (the NICs), long haul, recording;
//! - [`scenario`]: the TOML schema composing the models' configs, variants and sweeps, and
//!   the memory budget;
//! - [`sim`]: the [`Simulation`], built by its parts' builders, its event loop, the
//!   parallel engine, stall and livelock detection;
//! - [`analysis`]: metrics, invariants, convergence and window analyses;
//! - [`output`]: tables, summaries, reports and the packet capture written after a run;
//! - [`run`]: the runner (sweeps, resume, threads) and fixed benchmarks.
//!
//! See `docs/ARCHITECTURE.md` for the design and its invariants.

#![warn(missing_docs)]
// The exceptions, each with its invariant beside it: `prefetch` (a cache hint that
// cannot fault), the indices the per-event path trusts (`base/trusted.rs`, checked in
// the `checked` profile, and the link rings' offsets, `base/ring.rs`), an event read
// from its two words (`kernel/events`, `Event::decode`), and the threads of a sharded
// run sharing the model's tables (`sim/shards/threads.rs`, `SharedModel`).
#![deny(unsafe_code)]

pub mod analysis;
pub mod base;
pub mod kernel;
pub mod model;
pub mod output;
pub mod run;
pub mod scenario;
pub mod sim;

pub use scenario::{load_file, load_str, ScenarioError};
pub use sim::{Outcome, Simulation};
