//! Long haul: GPU campuses joined over tens to thousands of km of fibre (document 001,
//! MegaScaleOut; ALGORITHMS.md, "Long haul").
//!
//! The network itself is a topology kind ([`crate::model::topology::multi_campus`]). This module
//! holds what runs on it: the DR switch role and the CNPs it sends ([`dr`]), and the
//! analytic compute-loss model the document uses to reason about cross-campus training
//! ([`compute_loss`]), so that a run can report the model's prediction beside what it
//! simulated for the same inputs.

pub mod compute_loss;

pub use compute_loss::{fiber_rtt, ComputeLoss, CrossDciInputs};
