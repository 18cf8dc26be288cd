//! Every kind of `[topology]`, each named once.
//!
//! Adding a kind: a file in `topology/` whose settings type implements
//! [`super::GraphGenerator`] (`generate`, and `size` / `size_drivers` / `size_knobs`
//! counting the graph from the settings alone for the memory budget, and naming the
//! fields that multiply it) and [`crate::base::param::Described`], its
//! `mod` line in `topology/mod.rs`, and one line here. The checks every graph must pass are shared
//! ([`super::TopoGraph::validate`]).

use super::{
    custom, fat_tree, leaf_spine, multi_campus, ns3, rail_optimized, sunway, three_tier,
    GraphGenerator,
};
use crate::base::param::kind_registry;

kind_registry! {
    /// The network's shape (a table tagged by `kind`).
    pub enum TopologyCfg: dyn GraphGenerator, registry KINDS;
    /// Two-tier leaf-spine.
    "leaf_spine" => LeafSpine(leaf_spine::LeafSpineCfg),
    /// Three-tier k-ary fat-tree.
    "fat_tree" => FatTree(fat_tree::FatTreeCfg),
    /// General three-tier Clos: pods of ToR and aggregation switches, and cores.
    "three_tier" => ThreeTier(three_tier::ThreeTierCfg),
    /// Nodes, links and optional static routes listed by hand.
    "custom" => Custom(custom::CustomTopoCfg),
    /// A topology file in the ns-3 HPCC format (`nodes switches links`, the switch ids,
    /// then `a b rate delay error_rate` per link); see [`crate::model::topology::ns3`].
    "ns3_file" => Ns3File(ns3::Ns3FileCfg),
    /// Leaf-spine or three-tier GPU campuses whose DR switches are joined by long-haul DCI fibre
    /// (document 001); see [`crate::model::topology::multi_campus`].
    "multi_campus" => MultiCampus(multi_campus::MultiCampusCfg),
    /// Dual-rail NICs on planes of generalized fat trees with sibling links (document
    /// 003); see [`crate::model::topology::sunway`].
    "sunway" => Sunway(sunway::SunwayCfg),
    /// GPU servers whose NIC r is cabled to the leaf of rail r, leaves joined by spines,
    /// optional planes; see [`crate::model::topology::rail_optimized`].
    "rail_optimized" => RailOptimized(rail_optimized::RailOptimizedCfg),
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
}
