//! Up/down tables for a generalized fat tree (document 003, the Sunway "泛树").
//!
//! In a fat tree the down path from a spine to a node is unique once the up path is
//! chosen, so a failed down link cuts the node off from that spine. The Sunway network
//! joins the two leaves R[2m] and R[2m+1] ("siblings") by their spare ports; a packet
//! whose down path fails can go spine -> sibling leaf -> leaf, and a leaf that lost every
//! uplink still reaches and is reached through its sibling. Lateral links are for faults:
//! normal traffic keeps to up/down paths.
//!
//! The tables hold, per switch and destination leaf, entries in order, split in
//! *primary* entries and *fallback* entries:
//! - a packet going **down** (it arrived from a higher tier): primary, the down ports on
//!   a shortest down path; at the destination's sibling, the lateral links to it;
//!   fallback, the down ports to a sibling of the next switch on the way (then across).
//! - a packet going **up** (it came from a NIC, or across a lateral link on its way up):
//!   above the destination (a spine), the down entries; elsewhere primary, the up ports
//!   to switches that reach the destination going down; fallback, the lateral links.
//!
//! A packet never goes up again once it went down, and a lateral hop is taken only as a
//! fallback, so paths have no cycles; with credit flow control, a lateral hop raises the
//! packet's virtual channel (see `fabric::flow_control::credit`), which keeps the
//! channel dependency graph acyclic.
//!
//! Choosing among the entries is the load balancer's: deterministic table routing takes
//! the first available entry in order (document 003: "结合拓扑特性, 在部分链路故障时在修改
//! 路由表之前仍可以保证消息正确传输"), adaptive routing the primary entry with most
//! downstream credits; fallback entries only when no primary entry is available.

use super::{RoutingError, RoutingTable};
use crate::model::topology::{Node, NodeKind, PortEnds};
use std::collections::VecDeque;

/// Distance not reachable going down.
const FAR: u32 = u32::MAX;

impl RoutingTable {
    /// Builds up/down tables with lateral fallbacks for a tiered switch graph: `tiers[s]`
    /// is switch `s`'s tier (1 for leaves; higher above). The plain tables of
    /// [`RoutingTable::build`] are built first (planes, NIC ports), then the switch
    /// ranges are replaced.
    pub fn build_tiered(
        nodes: &[Node],
        ports: &[PortEnds],
        switch_nodes: &[u32],
        host_nodes: &[u32],
        tiers: &[u8],
    ) -> Result<RoutingTable, RoutingError> {
        Self::build_tiered_over(nodes, ports, switch_nodes, host_nodes, tiers, |_| true)
    }

    /// [`Self::build_tiered`] over the links whose ports `usable` accepts (a rebuild after
    /// faults: Sunway's route reconfiguration).
    pub fn build_tiered_over(
        nodes: &[Node],
        ports: &[PortEnds],
        switch_nodes: &[u32],
        host_nodes: &[u32],
        tiers: &[u8],
        usable: impl Fn(crate::base::ids::PortId) -> bool,
    ) -> Result<RoutingTable, RoutingError> {
        let mut t = RoutingTable::build_over(nodes, ports, switch_nodes, host_nodes, &[], &usable)?;
        let n_sw = switch_nodes.len();
        let tier_pair = |p: &PortEnds| {
            let (here, there) = (p.node, ports[p.peer.idx()].node);
            match (nodes[here.idx()].kind, nodes[there.idx()].kind) {
                (NodeKind::Switch(a), NodeKind::Switch(b)) => {
                    Some((tiers[a as usize], tiers[b as usize]))
                }
                _ => None,
            }
        };
        t.from_above = ports
            .iter()
            .map(|p| tier_pair(p).is_some_and(|(a, b)| b > a))
            .collect();
        t.lateral = ports
            .iter()
            .map(|p| tier_pair(p).is_some_and(|(a, b)| a == b))
            .collect();
        // Neighbours of each switch by kind of link: (port, peer switch).
        let mut up: Vec<Vec<(u32, u32)>> = vec![Vec::new(); n_sw];
        let mut down: Vec<Vec<(u32, u32)>> = vec![Vec::new(); n_sw];
        let mut lateral: Vec<Vec<(u32, u32)>> = vec![Vec::new(); n_sw];
        for s in 0..n_sw {
            for p in nodes[switch_nodes[s] as usize].ports.iter() {
                let peer = ports[ports[p.idx()].peer.idx()].node;
                if !usable(p) {
                    continue;
                }
                if let NodeKind::Switch(o) = nodes[peer.idx()].kind {
                    let list = match tiers[o as usize].cmp(&tiers[s]) {
                        std::cmp::Ordering::Greater => &mut up[s],
                        std::cmp::Ordering::Less => &mut down[s],
                        std::cmp::Ordering::Equal => &mut lateral[s],
                    };
                    list.push((p.0, o));
                }
            }
        }
        t.flat.truncate(
            t.host_route
                .iter()
                .map(|r| r.range.0 + r.range.1)
                .max()
                .unwrap_or(0) as usize,
        );
        t.ranges = vec![super::PACKED; n_sw * t.n_edges];
        t.spans.clear();
        t.down_ranges = vec![(0, 0); n_sw * t.n_edges];
        t.primary = vec![0; n_sw * t.n_edges];
        // Hops from each switch down to the edge switch: `dd` over down links only (a true
        // down path), `da` also allowing the last hop across from a sibling (the way in
        // when the edge switch's own links up are gone).
        let (mut dd, mut da) = (vec![FAR; n_sw], vec![FAR; n_sw]);
        let mut queue = VecDeque::new();
        for e in 0..t.n_edges {
            let root = t.edge_switch[e];
            let bfs = |d: &mut Vec<u32>, queue: &mut VecDeque<u32>, across: bool| {
                d.iter_mut().for_each(|x| *x = FAR);
                d[root as usize] = 0;
                queue.push_back(root);
                if across {
                    for &(_, o) in &lateral[root as usize] {
                        if d[o as usize] == FAR {
                            d[o as usize] = 1;
                            queue.push_back(o);
                        }
                    }
                }
                while let Some(s) = queue.pop_front() {
                    for &(_, o) in &up[s as usize] {
                        if d[o as usize] == FAR {
                            d[o as usize] = d[s as usize] + 1;
                            queue.push_back(o);
                        }
                    }
                }
            };
            bfs(&mut dd, &mut queue, false);
            bfs(&mut da, &mut queue, true);
            // Going down at s: primary and fallback ports.
            let down_entries = |s: usize| -> (Vec<u32>, Vec<u32>) {
                let mut primary = Vec::new();
                let mut fallback = Vec::new();
                if dd[s] != FAR && dd[s] > 0 {
                    for &(p, o) in &down[s] {
                        if dd[o as usize].saturating_add(1) == dd[s] {
                            primary.push(p);
                        } else if lateral[o as usize]
                            .iter()
                            .any(|&(_, z)| dd[z as usize].saturating_add(1) == dd[s])
                        {
                            fallback.push(p);
                        }
                    }
                } else if da[s] != FAR && da[s] > 1 {
                    // No true down path left: down to a sibling of the destination.
                    for &(p, o) in &down[s] {
                        if da[o as usize].saturating_add(1) == da[s] {
                            primary.push(p);
                        }
                    }
                }
                // At a sibling of the destination: across.
                for &(p, o) in &lateral[s] {
                    if o == root {
                        primary.push(p);
                    }
                }
                (primary, fallback)
            };
            for s in 0..n_sw {
                if s as u32 == root || t.plane_of(s as u32) != t.plane_of(root) {
                    continue;
                }
                let (dp, df) = down_entries(s);
                // Up to the switches above the destination; failing those, down by way
                // of its sibling when this switch can (a spine, or the sibling itself),
                // else up to switches that can; across to one's own sibling as a
                // fallback.
                let above = |d: &[u32]| -> Vec<u32> {
                    up[s]
                        .iter()
                        .filter(|&&(_, o)| d[o as usize] != FAR)
                        .map(|&(p, _)| p)
                        .collect()
                };
                let (upp, upf) = if dd[s] != FAR {
                    (dp.clone(), df.clone())
                } else {
                    let primary = above(&dd);
                    if primary.is_empty() && da[s] != FAR {
                        (dp.clone(), df.clone())
                    } else {
                        let primary = if primary.is_empty() {
                            above(&da)
                        } else {
                            primary
                        };
                        let fallback: Vec<u32> = lateral[s].iter().map(|&(p, _)| p).collect();
                        (primary, fallback)
                    }
                };
                let k = s * t.n_edges + e;
                let r = t.push_entries(&upp, &upf);
                t.set_range(k, r);
                t.down_ranges[k] = t.push_entries(&dp, &df);
                t.primary[k] = (upp.len() as u32) << 16 | dp.len() as u32;
            }
        }
        t.compact(ports, switch_nodes);
        Ok(t)
    }

    /// Appends `primary` then `fallback` to the flat table; their range.
    fn push_entries(&mut self, primary: &[u32], fallback: &[u32]) -> (u32, u32) {
        let start = self.flat.len() as u32;
        self.flat.extend_from_slice(primary);
        self.flat.extend_from_slice(fallback);
        (start, (primary.len() + fallback.len()) as u32)
    }

    /// True for up/down tables ([`RoutingTable::build_tiered`]).
    #[inline(always)]
    pub fn tiered(&self) -> bool {
        !self.primary.is_empty()
    }

    /// Up/down tables: switch `sw`'s entries toward host `dst` for a packet going down
    /// (`down`) or up, and how many of them are primary. At the destination's own leaf,
    /// the port to the host (primary).
    #[inline]
    pub fn lookup_phase(&self, sw: u32, dst: u32, down: bool) -> (super::Candidates, u32) {
        let k = if self.n_planes > 1 {
            self.plane_of[sw as usize] as usize * self.n_hosts + dst as usize
        } else {
            dst as usize
        };
        let h = &self.host_route[k];
        let e = h.edge;
        if h.switch == sw {
            let (start, len) = h.range;
            return (super::Candidates { start, len }, len);
        }
        let i = sw as usize * self.n_edges + e as usize;
        let (range, primary) = if down {
            (self.down_ranges[i], self.primary[i] & 0xffff)
        } else {
            (
                self.range_at(sw as usize, e as usize),
                self.primary[i] >> 16,
            )
        };
        (
            super::Candidates {
                start: range.0,
                len: range.1,
            },
            primary,
        )
    }

    /// Up/down tables: egress `p` is a lateral link (a detour).
    #[inline(always)]
    pub fn is_lateral(&self, p: crate::base::ids::PortId) -> bool {
        self.lateral.get(p.idx()).copied().unwrap_or(false)
    }

    /// Up/down tables: a packet arriving on switch port `in_port` is going down (it came
    /// from a higher tier).
    #[inline(always)]
    pub fn going_down(&self, in_port: crate::base::ids::PortId) -> bool {
        self.from_above[in_port.idx()]
    }
}
