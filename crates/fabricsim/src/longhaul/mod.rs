//! Long haul (document 001, MegaScaleOut): GPU campuses joined over long fibre.
//!
//! The topology is `topology/multi_campus.rs`; this module holds what runs on it: the DR
//! switch role and its CNPs ([`dr`]).

pub mod dr;
