//! Every kind of `[[workload]]`, each named once.
//!
//! Adding a kind: a file in `workload/` whose settings type implements [`super::Generator`]
//! (`generate`; `size` / `size_drivers` / `size_knobs` bounding what it generates from the
//! settings and the host count alone, for the memory budget, and naming the fields that
//! multiply it; `files`, the files it reads) and
//! [`crate::base::param::Described`], its `mod` line in `workload/mod.rs`, and one line
//! here. The `kind` names accepted in scenario files, the names listed in error messages
//! and `fabricsim list` all come from this list.

use super::{
    all_to_all, collective, files, flows, hw_collective, incast, permutation, poisson,
    sw_collective, Generator,
};
use crate::base::param::kind_registry;

kind_registry! {
    /// One traffic generator (a table tagged by `kind`).
    pub enum WorkloadCfg: dyn Generator, registry KINDS;
    /// Flows listed in the scenario.
    "flows" => Flows(flows::FlowsCfg),
    /// Flows from a CSV file with the header `src,dst,size,start`.
    "csv" => Csv(files::CsvCfg),
    /// The ns-3 HPCC flow file (`count`, then `src dst pg dport size start_seconds`).
    "hpcc_flow_file" => HpccFlowFile(files::HpccFlowFileCfg),
    /// N senders to one receiver.
    "incast" => Incast(incast::IncastCfg),
    /// Every host sends one flow to a distinct host (a random derangement).
    "permutation" => Permutation(permutation::PermutationCfg),
    /// Every host sends a flow to every other host.
    "all_to_all" => AllToAll(all_to_all::AllToAllCfg),
    /// Jobs running a collective (ring AllReduce, AlltoAll, halving-doubling AllReduce).
    "collective" => Collective(collective::CollectiveCfg),
    /// MPI-style software collectives (barrier, AllReduce, bcast) over small messages.
    "sw_collective" => SwCollective(sw_collective::SwCollectiveCfg),
    /// A training job split across two campuses: PP, DP or DP with ZeRO-3.
    "training" => Training(super::training::TrainingCfg),
    /// Poisson flow arrivals at a target load, sizes drawn from a flow-size CDF.
    "poisson" => Poisson(poisson::PoissonCfg),
    /// A hardware collective (barrier, allreduce, bcast) by the NICs and switch multicast.
    "hw_collective" => HwCollective(hw_collective::HwCollectiveCfg),
    /// A training job from a trace (Chakra ET or SimAI/AICB), placed on GPUs.
    "trace" => Trace(super::trace::TraceCfg),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_lists_exactly_its_fields() {
        for k in KINDS {
            (k.check_fields)();
        }
    }

    #[test]
    fn names_are_unique() {
        let mut n: Vec<&str> = KINDS.iter().map(|k| k.name).collect();
        n.sort_unstable();
        n.dedup();
        assert_eq!(n.len(), KINDS.len());
    }
}
