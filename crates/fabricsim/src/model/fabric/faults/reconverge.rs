//! Ethernet route re-convergence: the ECMP tables learn of a link or switch going down
//! or coming back `reconvergence_delay` after it happens, all switches at once, and are
//! then rebuilt whole from the links routing knows to be up
//! ([`crate::model::routing::RoutingTable::build_over`], the same shortest-path build as at the
//! start, over the graph without those links).
//!
//! Until then the old tables stand: a switch keeps hashing flows onto a down link's port,
//! where they are dropped ([`super::link_state`]), and does not use a link that came
//! back. A destination that no path reaches any more has no candidates: its packets are
//! dropped where they find no route and counted as the faults' drops. Static routes of a
//! custom topology stay as written, and steering (PXN) is applied again.

use crate::base::ids::PortId;
use crate::model::fabric::Fabric;
use crate::model::routing::RoutingTable;

impl Fabric {
    /// Routing learns of faults `learned` (indices in time order) and rebuilds its tables.
    pub(crate) fn reconverge(&mut self, learned: &[u32]) {
        let fs = self.faults.as_mut().expect("faults model");
        for &f in learned {
            let action = fs.faults[f as usize].action;
            fs.routed.apply(action, &fs.cables);
        }
        fs.reconvergences += 1;
        let fs = self.faults.as_ref().expect("faults model");
        let up: Vec<bool> = (fs.cables.of_port.iter())
            .map(|&c| fs.routed.up(c as usize, &fs.cables))
            .collect();
        let inputs = &fs.routing_inputs;
        let ends = self.port_ends();
        self.routing = if inputs.tiers.is_empty() {
            RoutingTable::build_steered(
                &self.nodes,
                &ends,
                &inputs.switch_nodes,
                &inputs.host_nodes,
                &inputs.statics,
                &inputs.steering,
                |p: PortId| up[p.idx()],
            )
        } else {
            RoutingTable::build_tiered_over(
                &self.nodes,
                &ends,
                &inputs.switch_nodes,
                &inputs.host_nodes,
                &inputs.tiers,
                |p: PortId| up[p.idx()],
            )
        }
        .expect("the tables were built from this fabric at the start");
        // Frames on the wire may carry the next switch's ECMP choice, made when they were
        // sent (`route_ahead`, large models): made under the old tables, it is dropped so
        // that they are routed on arrival by the new ones, as every other frame is.
        if self.route_ahead {
            for link in &mut self.links {
                for (_, d) in link.ring.iter_mut() {
                    d.flags &= !crate::kernel::packet::FLAG_ROUTED;
                }
            }
        }
    }
}
