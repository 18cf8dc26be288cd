//! Running scenarios: the runner (sweeps, resume, threads, results folders), the fixed
//! benchmarks and the estimate of a run's cost before it runs.

pub mod bench;
pub mod estimate;
pub mod plan;
pub mod runner;
