//! fabricsim: a fast, deterministic, packet-level simulator of AI and HPC datacenter
//! networks.
//!
//! A run is a pure function of (scenario, seed). The layers, top to bottom:
//! - [`scenario`]: the TOML schema (composing the models' own configs), overrides,
//!   variants and input errors;
//! - [`topology`]: graphs of hosts, switches and links;
//! - [`sim`]: the built model (build, then run) and its event loop over [`engine`];
//! - models, each owning its state and handlers: [`fabric`] (links, ports, switches,
//!   shared buffers, ECN, link-level flow control), [`routing`] (tables, ECMP, spraying),
//!   [`gse`] (PKTC, DGSQ, reordering, the GSP handlers), [`transport`] (the NIC, RDMA RC
//!   with go-back-N, the flow launcher), [`cc`] (DCQCN, TIMELY, HPCC, ACC, line rate),
//!   [`telemetry`] (INT, TCD), [`record`] (time series), [`workload`] (flow lists,
//!   generators, collectives); [`packet`] and [`ids`] are what they exchange;
//! - [`faults`]: links and switches going down, lane degrade, bit errors, FEC and
//!   link-level retransmission, route re-convergence, for every fabric;
//! - [`longhaul`]: long haul (document 001): the DR switch role and its CNPs, the compute-loss model;
//! - [`output`] (also as `results`), [`metrics`], [`convergence`], [`window`], [`report`]:
//!   tables, summaries and reports written after a run; [`capture`] and [`wire`]: the
//!   packet capture (`[record.pcap]` -> `capture.pcapng`) and the wire formats it writes;
//!   [`bench`](mod@bench): fixed benchmarks.
//!
//! See `docs/ARCHITECTURE.md` for the design and its invariants.

#![warn(missing_docs)]
// The exceptions: `prefetch` (a cache hint that cannot fault), and the threads of a
// sharded run sharing the model's tables (`sim/shards/threads.rs`, `SharedModel`).
#![deny(unsafe_code)]

pub mod bench;
pub mod block_pool;
pub mod capture;
pub mod cc;
pub mod collective;
pub mod convergence;
pub mod ctx;
pub mod engine;
pub mod fabric;
pub mod floors;
pub mod gse;
pub mod ids;
pub mod input_file;
pub mod invariants;
pub mod longhaul;
pub mod memory;
pub mod metrics;
pub mod output;
pub mod packet;
pub mod param;
pub mod prefetch;
pub mod presets;
pub mod record;
pub mod report;
pub mod routing;
pub mod runner;
pub mod scenario;
pub mod seed;
pub mod sim;
pub mod suggest;
pub mod topology;
pub mod transport;
pub mod units;
pub mod window;
pub mod wire;
pub mod workload;

/// The output layer under its first name: `results::Summary`, `results::flows_csv`, ...
pub use output as results;

pub use scenario::{load_file, load_str, ScenarioError};
pub use sim::{Outcome, Simulation};
