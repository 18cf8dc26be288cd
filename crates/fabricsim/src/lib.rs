//! fabricsim: a fast, deterministic, packet-level simulator of AI and HPC datacenter
//! networks.
//!
//! A run is a pure function of (scenario, seed). The layers, top to bottom:
//! - [`scenario`]: the TOML schema, overrides, variants and input errors;
//! - [`topology`]: graphs of hosts, switches and links;
//! - [`sim`]: the built model and its event loop over [`engine`];
//! - models: [`fabric`] (ports, links, shared buffers, PFC, ECN), [`routing`] (tables,
//!   ECMP, spraying), [`gse`] (PKTC, DGSQ, reordering), [`transport`] (RDMA RC with
//!   go-back-N), [`cc`] (DCQCN, TIMELY, HPCC, ACC, line rate), [`workload`] (flow lists,
//!   generators, collectives);
//! - [`results`], [`metrics`], [`convergence`], [`window`], [`report`]: tables, summaries and reports
//!   written after a run; [`bench`]: fixed benchmarks.
//!
//! See `docs/ARCHITECTURE.md` for the design and its invariants.

#![warn(missing_docs)]

pub mod bench;
pub mod cc;
pub mod compare;
pub mod convergence;
pub mod engine;
pub mod fabric;
pub mod gse;
pub mod invariants;
pub mod metrics;
pub mod packet;
pub mod param;
pub mod prefetch;
mod record;
pub mod report;
pub mod results;
pub mod routing;
pub mod runner;
pub mod scenario;
pub mod seed;
pub mod sim;
pub mod stall;
pub mod telemetry;
pub mod topology;
pub mod transport;
pub mod units;
pub mod window;
pub mod workload;

pub use scenario::{load_file, load_str, ScenarioError};
pub use sim::{Outcome, Simulation};
