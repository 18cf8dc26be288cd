//! Training workloads from traces: Chakra execution traces and SimAI/AICB workload files.
pub mod aicb;
pub mod chakra;
pub mod ir;
