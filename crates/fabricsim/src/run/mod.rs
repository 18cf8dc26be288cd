//! Running scenarios: the runner (sweeps, resume, threads, results folders) and the
//! fixed benchmarks.

pub mod bench;
pub mod runner;
