//! The registry of results documents: one module per document that `reproduce`
//! regenerates (its jobs and its generator), one line each in `registry!` below.
//! Documents made another way are listed in [`OTHER`].

use super::{Doc, Made};

macro_rules! registry {
    ($($m:ident),* $(,)?) => {
        $(mod $m;)*
        /// Every document `reproduce` regenerates, in the order they are run and listed.
        pub const GENERATED: &[Doc] = &[$($m::DOC),*];
    };
}

registry!(
    sunway_collectives,
    sunway,
    longhaul,
    roce_analysis,
    roce_baseline,
    acc,
    gse_vs_roce,
    asymmetry,
    ecmp,
    ber,
    physec,
    nccl_fidelity,
    nccl_segments,
    traces,
);

/// Results documents that `reproduce` does not regenerate, and how they are made.
pub const OTHER: &[Doc] = &[Doc::other(
    "bench",
    "docs/results/bench.md",
    "-",
    Made::Bench,
)];
