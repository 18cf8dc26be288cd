//! Analyses of a finished run: metrics (FCT, slowdown, series), invariants,
//! convergence to fair share, windows.

pub mod convergence;
pub mod invariants;
pub mod metrics;
pub mod window;
