//! Cutting the fabric into shards for a parallel run (the engine that runs them is
//! `sim/shards/`): which shard each node belongs to, and the lookahead the cut allows, the least time anything takes to cross from one
//! shard to another.
//!
//! The cut follows the fabric's structure: the switches farthest from any host (a fat
//! tree's cores, a leaf-spine's spines, the DR switches above two campuses) form the top
//! layer; without it the fabric falls apart into groups (pods, leaves with their hosts,
//! campuses), which are never cut. With fewer groups than shards asked for, the heaviest
//! group that falls apart below its own top layer is split (a campus into its leaves,
//! its spines joining the top layer; a pod into its edge switches), until there are
//! enough or none can be. Groups go to shards largest first, each to the shard with the
//! fewest ports so far; a top switch joins the shard more than half of its cables lead
//! to (a DR switch stays with its campus, so only the long DCI is cut while campuses are
//! whole), or, when they lead everywhere (a fat tree's core, a spine), the shard with
//! the fewest ports; a campus's DR switches share one shard. With enough groups but an
//! uneven spread of them (20 pods over 16 shards), the heaviest groups are split too,
//! while that evens the shards out and costs no lookahead. Everything is a pure function of the
//! built fabric: the same model gives the same cut on any machine.
//!
//! The lookahead is the least, over cut cables, of the frame latency (the link's delay)
//! and, under credit flow control, the credit return's (a link that replays frames,
//! link-level retransmission, hands over only frames whose fate is drawn, a link delay
//! ahead: `faults/llr.rs`). A cut that would need a zero lookahead is refused: the run
//! falls back to one shard and says why.

use crate::base::units::Time;
use crate::model::fabric::roles::RoleStates;
use crate::model::fabric::NodeKind;
use crate::sim::Fabric;

/// A fabric cut into shards.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Partition {
    /// Shards (1: the whole fabric in one).
    pub shards: u32,
    /// The shard of each node (hosts with the switch their first port attaches to).
    pub shard_of_node: Vec<u32>,
    /// The least time from an event in one shard to its effect in another; `Time::MAX`
    /// with one shard.
    pub lookahead: Time,
    /// Cables (both directions count once) between two shards.
    pub cut_cables: usize,
    /// Ports per shard (the measure of work the cut balances).
    pub ports: Vec<u64>,
    /// Why fewer shards than asked for, if so.
    pub notes: Vec<String>,
}

impl Partition {
    fn single(n_nodes: usize, ports: u64, notes: Vec<String>) -> Partition {
        Partition {
            shards: 1,
            shard_of_node: vec![0; n_nodes],
            lookahead: Time::MAX,
            cut_cables: 0,
            ports: vec![ports],
            notes,
        }
    }
}

/// The fabric as the cut reads it: nodes, their ports, and where each cable leads.
struct Graph<'a> {
    fabric: &'a Fabric,
    n: usize,
}

impl Graph<'_> {
    fn peer_node(&self, p: usize) -> usize {
        let ports = &self.fabric.ports;
        ports[ports[p].peer.idx()].node.idx()
    }

    fn is_switch(&self, v: usize) -> bool {
        matches!(self.fabric.nodes[v].kind, NodeKind::Switch(_))
    }

    fn ports_of(&self, v: usize) -> Vec<usize> {
        let r = self.fabric.nodes[v].ports;
        (r.first.idx()..r.first.idx() + r.len as usize).collect()
    }

    /// The switch a node goes with: itself, or for a host the switch of its first port.
    fn anchor(&self, v: usize) -> Option<usize> {
        if self.is_switch(v) {
            return Some(v);
        }
        let r = self.fabric.nodes[v].ports;
        (r.len > 0).then(|| self.peer_node(r.first.idx()))
    }

    /// Ports of each node's switches and of the hosts anchored to them (what the cut
    /// balances), by anchor.
    fn anchored_ports(&self) -> Vec<u64> {
        let mut anchored = vec![0u64; self.n];
        for (v, node) in self.fabric.nodes.iter().enumerate() {
            if let Some(a) = self.anchor(v) {
                anchored[a] += node.ports.len as u64;
            }
        }
        anchored
    }

    /// Hops from each switch to the nearest host (`u32::MAX`: none), and the largest.
    fn host_distances(&self) -> (Vec<u32>, u32) {
        let n = self.n;
        let mut dist = vec![u32::MAX; n];
        let mut frontier: Vec<usize> = (0..n).filter(|&v| !self.is_switch(v)).collect();
        for &v in &frontier {
            dist[v] = 0;
        }
        let mut d = 0;
        while !frontier.is_empty() {
            d += 1;
            let mut next = Vec::new();
            for &v in &frontier {
                for p in self.ports_of(v) {
                    let w = self.peer_node(p);
                    if self.is_switch(w) && dist[w] == u32::MAX {
                        dist[w] = d;
                        next.push(w);
                    }
                }
            }
            frontier = next;
        }
        let top = (0..n)
            .filter(|&v| self.is_switch(v) && dist[v] != u32::MAX)
            .map(|v| dist[v])
            .max()
            .unwrap_or(0);
        (dist, top)
    }

    /// The groups: the switches below the top layer, joined by their cables (a
    /// union-find over switch-to-switch cables; with a single tier, each switch is a
    /// group), each in node order, by first switch.
    fn groups_below(&self, dist: &[u32], top: u32) -> Vec<Vec<usize>> {
        let n = self.n;
        let below = |v: usize| self.is_switch(v) && (dist[v] < top || top <= 1);
        let mut parent: Vec<usize> = (0..n).collect();
        if top > 1 {
            for v in (0..n).filter(|&v| below(v)) {
                for p in self.ports_of(v) {
                    let w = self.peer_node(p);
                    if below(w) {
                        let (a, b) = (root(&mut parent, v), root(&mut parent, w));
                        if a != b {
                            parent[a.max(b)] = a.min(b);
                        }
                    }
                }
            }
        }
        let mut units: Vec<Vec<usize>> = Vec::new();
        let mut index_of_root = vec![usize::MAX; n];
        for v in (0..n).filter(|&v| below(v)) {
            let r = root(&mut parent, v);
            if index_of_root[r] == usize::MAX {
                index_of_root[r] = units.len();
                units.push(Vec::new());
            }
            units[index_of_root[r]].push(v);
        }
        units
    }

    /// `unit` split below its own top layer ([`split_unit`]).
    fn split(&self, unit: &[usize], dist: &[u32]) -> Option<Vec<Vec<usize>>> {
        split_unit(unit, dist, &|v| self.ports_of(v), &|p| self.peer_node(p))
    }
}

/// Root of `v` in a union-find, halving the path.
fn root(parent: &mut [usize], mut v: usize) -> usize {
    while parent[v] != v {
        parent[v] = parent[parent[v]];
        v = parent[v];
    }
    v
}

/// Cuts `fabric` into at most `requested` shards (see the module documentation).
pub fn partition(fabric: &Fabric, roles: &RoleStates, requested: u32) -> Partition {
    let n = fabric.nodes.len();
    let total_ports = fabric.ports.len() as u64;
    if requested <= 1 {
        return Partition::single(n, total_ports, Vec::new());
    }
    let g = Graph { fabric, n };
    let (dist, top) = g.host_distances();
    let mut units = g.groups_below(&dist, top);
    let mut notes = Vec::new();
    if units.len() < 2 {
        notes.push(format!(
            "{requested} shards asked for, but the fabric does not fall apart below its top \
             layer of switches: running on one shard"
        ));
        return Partition::single(n, total_ports, notes);
    }
    let anchored_ports = g.anchored_ports();
    split_to_count(&g, &mut units, &dist, &anchored_ports, requested);
    if units.len() >= requested as usize {
        units = split_to_balance(&g, units, &dist, &anchored_ports, requested);
    }
    let groups = units.len();
    let shards = (requested as usize).min(groups);
    if shards < requested as usize {
        notes.push(format!(
            "{requested} shards asked for, but the fabric falls apart into only {groups} \
             groups (pods, leaves with their hosts, campuses, and within them what falls \
             apart below their own top switches), which are never cut: running on {shards}"
        ));
    }
    let (mut shard_of_node, mut load) = place_groups(&g, &units, &anchored_ports, shards);
    place_top_layer(&g, &mut shard_of_node, &mut load, shards);
    keep_campuses_together(fabric, roles, &mut shard_of_node, &mut load);
    for v in 0..n {
        if shard_of_node[v] == u32::MAX {
            let s = g
                .anchor(v)
                .map(|a| shard_of_node[a])
                .filter(|&s| s != u32::MAX)
                .unwrap_or(lightest(&load) as u32);
            shard_of_node[v] = s;
            load[s as usize] += fabric.nodes[v].ports.len as u64;
        }
    }
    // The lookahead over the cut.
    let (mut lookahead, mut cut_ports) = (Time::MAX, 0usize);
    for p in 0..fabric.ports.len() {
        let (a, b) = (fabric.ports[p].node.idx(), g.peer_node(p));
        if shard_of_node[a] == shard_of_node[b] {
            continue;
        }
        cut_ports += 1;
        lookahead = lookahead.min(crossing_time(fabric, p));
    }
    if lookahead == 0 {
        notes.push(
            "a cable between two shards has no delay, so no shard could run ahead of another \
             (zero lookahead): running on one shard"
                .into(),
        );
        return Partition::single(n, total_ports, notes);
    }
    Partition {
        shards: shards as u32,
        shard_of_node,
        lookahead,
        cut_cables: cut_ports / 2,
        ports: load,
        notes,
    }
}

/// The shard with the fewest ports (ties: the lower index).
fn lightest(load: &[u64]) -> usize {
    (0..load.len()).min_by_key(|&s| (load[s], s)).unwrap_or(0)
}

/// Fewer groups than shards asked for: the heaviest group that falls apart below its
/// own top layer (a campus into its leaves, a pod into its edge switches) is split, its
/// top switches joining the top layer, until there are enough or none can be.
fn split_to_count(
    g: &Graph<'_>,
    units: &mut Vec<Vec<usize>>,
    dist: &[u32],
    anchored_ports: &[u64],
    requested: u32,
) {
    let weight_of = |unit: &[usize]| -> u64 { unit.iter().map(|&v| anchored_ports[v]).sum() };
    while units.len() < requested as usize {
        let mut best: Option<(u64, usize, Vec<Vec<usize>>)> = None;
        for (i, unit) in units.iter().enumerate() {
            let w = weight_of(unit);
            if best.as_ref().is_some_and(|b| b.0 >= w) {
                continue;
            }
            if let Some(parts) = g.split(unit, dist) {
                best = Some((w, i, parts));
            }
        }
        let Some((_, i, parts)) = best else {
            break;
        };
        units.splice(i..i + 1, parts);
    }
}

/// Enough groups, but whole groups may still balance badly: 20 pods on 16 shards put
/// two on some (1.6x the mean), 74 on 16 five on some (1.08x). The heaviest groups are
/// then split too, one after another, while the shards' largest-first loads would come
/// within 1/20 of the mean, keeping the number of splits with the lightest heaviest
/// shard; but only a group whose inner cables are no faster than those already cut, so
/// that balance never costs lookahead (a campus stays whole under a cut at its long-haul
/// links, a pod is split as freely as its pods' cores are cut).
fn split_to_balance(
    g: &Graph<'_>,
    units: Vec<Vec<usize>>,
    dist: &[u32],
    anchored_ports: &[u64],
    requested: u32,
) -> Vec<Vec<usize>> {
    let (fabric, n) = (g.fabric, g.n);
    let weight_of = |unit: &[usize]| -> u64 { unit.iter().map(|&v| anchored_ports[v]).sum() };
    let mut in_unit = vec![false; n];
    for &v in units.iter().flatten() {
        in_unit[v] = true;
    }
    let mut cut_delay = Time::MAX;
    for &v in units.iter().flatten() {
        for p in g.ports_of(v) {
            let w = g.peer_node(p);
            if g.is_switch(w) && !in_unit[w] {
                cut_delay = cut_delay.min(crossing_time(fabric, p));
            }
        }
    }
    let inner_delay = |unit: &[usize]| {
        let mut d = Time::MAX;
        for &v in unit {
            for p in g.ports_of(v) {
                if unit.binary_search(&g.peer_node(p)).is_ok() {
                    d = d.min(crossing_time(fabric, p));
                }
            }
        }
        d
    };
    let top_weight = |units: &[Vec<usize>]| -> Vec<u64> {
        let mut grouped = vec![false; n];
        for &v in units.iter().flatten() {
            grouped[v] = true;
        }
        (0..n)
            .filter(|&v| g.is_switch(v) && !grouped[v])
            .map(|v| anchored_ports[v])
            .collect()
    };
    let total: u64 = anchored_ports.iter().sum();
    let heaviest_shard = |units: &[Vec<usize>]| {
        let mut w: Vec<u64> = units.iter().map(|u| weight_of(u)).collect();
        w.extend(top_weight(units));
        largest_first_max(w, requested as usize)
    };
    let mut best = (heaviest_shard(&units), units.clone());
    let mut trial = units;
    let mut refused = Vec::new();
    while best.0.saturating_mul(20) > total.div_ceil(requested as u64).saturating_mul(21) {
        refused.resize(trial.len(), false);
        let mut pick: Option<(u64, usize, Vec<Vec<usize>>)> = None;
        for (i, unit) in trial.iter().enumerate() {
            let w = weight_of(unit);
            if refused[i] || pick.as_ref().is_some_and(|b| b.0 >= w) {
                continue;
            }
            match g.split(unit, dist) {
                Some(parts) if inner_delay(unit) >= cut_delay => pick = Some((w, i, parts)),
                _ => refused[i] = true,
            }
        }
        let Some((_, i, parts)) = pick else {
            break;
        };
        let added = parts.len();
        trial.splice(i..i + 1, parts);
        refused.splice(i..i + 1, std::iter::repeat_n(false, added));
        let m = heaviest_shard(&trial);
        if m < best.0 {
            best = (m, trial.clone());
        }
    }
    best.1
}

/// The groups (and the hosts anchored to them) on `shards` shards, largest group first,
/// each to the lightest shard (ties: the lower index). Returns each node's shard
/// (`u32::MAX`: not placed yet) and the shards' ports.
fn place_groups(
    g: &Graph<'_>,
    units: &[Vec<usize>],
    anchored_ports: &[u64],
    shards: usize,
) -> (Vec<u32>, Vec<u64>) {
    let n = g.n;
    let groups = units.len();
    let mut group_of = vec![usize::MAX; n];
    let mut weight: Vec<(u64, usize)> = Vec::new();
    for (gi, unit) in units.iter().enumerate() {
        for &v in unit {
            group_of[v] = gi;
        }
        weight.push((unit.iter().map(|&v| anchored_ports[v]).sum(), unit[0]));
    }
    for v in 0..n {
        if let Some(a) = g.anchor(v).filter(|&a| group_of[a] != usize::MAX) {
            group_of[v] = group_of[a];
        }
    }
    let mut order: Vec<usize> = (0..groups).collect();
    order.sort_by_key(|&gi| (std::cmp::Reverse(weight[gi].0), weight[gi].1));
    let mut load = vec![0u64; shards];
    let mut shard_of_group = vec![0u32; groups];
    for gi in order {
        let s = lightest(&load);
        shard_of_group[gi] = s as u32;
        load[s] += weight[gi].0;
    }
    let mut shard_of_node = vec![u32::MAX; n];
    for v in 0..n {
        if group_of[v] != usize::MAX {
            shard_of_node[v] = shard_of_group[group_of[v]];
        }
    }
    (shard_of_node, load)
}

/// The top layer (and anything unplaced: hosts of top switches, isolated nodes), in node
/// order: to the shard more than half of its cables lead to, else the lightest.
fn place_top_layer(g: &Graph<'_>, shard_of_node: &mut [u32], load: &mut [u64], shards: usize) {
    for v in 0..g.n {
        if shard_of_node[v] != u32::MAX || !g.is_switch(v) {
            continue;
        }
        let mut toward = vec![0u32; shards];
        for p in g.ports_of(v) {
            let s = shard_of_node[g.peer_node(p)];
            if s != u32::MAX {
                toward[s as usize] += 1;
            }
        }
        // Only where most of its cables lead: a fat tree's core (or a spine) has its
        // cables spread over every shard, a few more toward those given more pods, and
        // sending every core there would load them most (the k = 74 fat tree cut into 16
        // shards: its heaviest shard 1.17x the mean, 1.001x when they go to the lightest).
        let most = *toward.iter().max().unwrap_or(&0);
        let placed: u32 = toward.iter().sum();
        let candidates: Vec<usize> = if most * 2 > placed {
            (0..shards).filter(|&s| toward[s] == most).collect()
        } else {
            (0..shards).collect()
        };
        let s = if candidates.len() == 1 {
            candidates[0]
        } else {
            *candidates
                .iter()
                .min_by_key(|&&s| (load[s], s))
                .expect("a shard")
        };
        shard_of_node[v] = s as u32;
        load[s] += g.fabric.nodes[v].ports.len as u64;
    }
}

/// A campus's DR switches pace a flow's notifications together (`DrState::next_cnp`):
/// they share the shard of the first, also when their campus was split.
fn keep_campuses_together(
    fabric: &Fabric,
    roles: &RoleStates,
    shard_of_node: &mut [u32],
    load: &mut [u64],
) {
    let Some(dr) = roles.dr.as_ref() else {
        return;
    };
    let nodes = &fabric.nodes;
    let mut shard_of_campus: Vec<Option<u32>> = Vec::new();
    for &(port, campus) in &dr.dci_ports {
        let v = fabric.ports[port].node.idx();
        let c = campus as usize;
        if shard_of_campus.len() <= c {
            shard_of_campus.resize(c + 1, None);
        }
        let s = *shard_of_campus[c].get_or_insert(shard_of_node[v]);
        if shard_of_node[v] != s && shard_of_node[v] != u32::MAX {
            load[shard_of_node[v] as usize] -= nodes[v].ports.len as u64;
            load[s as usize] += nodes[v].ports.len as u64;
            shard_of_node[v] = s;
        }
    }
}

/// The heaviest of `shards` loads when `weights` go largest first, each to the lightest.
fn largest_first_max(mut weights: Vec<u64>, shards: usize) -> u64 {
    weights.sort_unstable_by(|a, b| b.cmp(a));
    let mut load = vec![0u64; shards.max(1)];
    for w in weights {
        let s = (0..load.len()).min_by_key(|&s| load[s]).unwrap_or(0);
        load[s] += w;
    }
    load.into_iter().max().unwrap_or(0)
}

/// The parts group `unit` (its switches, in node order) falls apart into below its own
/// top layer (its switches farthest from any host, `dist`), joined by their cables, each
/// in node order; with a single tier, each switch alone. `None` when there are fewer
/// than two.
fn split_unit(
    unit: &[usize],
    dist: &[u32],
    ports_of: &impl Fn(usize) -> Vec<usize>,
    peer_node: &impl Fn(usize) -> usize,
) -> Option<Vec<Vec<usize>>> {
    let top = unit.iter().map(|&v| dist[v]).max()?;
    let lower: Vec<usize> = if top <= 1 {
        unit.to_vec()
    } else {
        unit.iter().copied().filter(|&v| dist[v] < top).collect()
    };
    let mut parent: Vec<usize> = (0..lower.len()).collect();
    if top > 1 {
        for (i, &v) in lower.iter().enumerate() {
            for p in ports_of(v) {
                if let Ok(j) = lower.binary_search(&peer_node(p)) {
                    let (a, b) = (root(&mut parent, i), root(&mut parent, j));
                    if a != b {
                        parent[a.max(b)] = a.min(b);
                    }
                }
            }
        }
    }
    let mut parts: Vec<Vec<usize>> = Vec::new();
    let mut part_of_root = vec![usize::MAX; lower.len()];
    for (i, &v) in lower.iter().enumerate() {
        let r = root(&mut parent, i);
        if part_of_root[r] == usize::MAX {
            part_of_root[r] = parts.len();
            parts.push(Vec::new());
        }
        parts[part_of_root[r]].push(v);
    }
    (parts.len() >= 2).then_some(parts)
}

/// The least time anything takes to cross the cable out of port `p`: its frames' link
/// delay, or under credit flow control its credit returns' delay when shorter.
fn crossing_time(fabric: &Fabric, p: usize) -> Time {
    let d = fabric.links[p].delay;
    fabric
        .credit()
        .filter(|c| c.port(p).tracked())
        .map_or(d, |c| d.min(c.return_delay(p)))
}

/// The least time anything takes to cross any cable that has a delay (a frame's link
/// delay, a credit return's delay): no partition can have a smaller lookahead, and it
/// depends on the fabric alone, not on how it is cut. A cable with no delay (a GPU to
/// its crossbar in a scale-up domain) never lies between two shards ([`partition`]
/// refuses such a cut), so it does not bound the grid. A run ends at the end of the
/// `grid`-long cell of simulated time in which it completes (`sim/event_loop.rs`), which
/// a run cut into shards can see at its barriers: so where it ends does not depend on
/// the thread count. 0 when no cable has a delay.
pub fn crossing_grid(fabric: &Fabric) -> Time {
    let grid = (0..fabric.ports.len())
        .map(|p| crossing_time(fabric, p))
        .filter(|&t| t > 0)
        .min()
        .unwrap_or(Time::MAX);
    if grid == Time::MAX {
        0
    } else {
        grid
    }
}

/// The end of the cell of a `grid` (see [`crossing_grid`]) that holds `t`: the first
/// time that is not part of `t`'s cell (with no grid, the instant after `t`).
#[inline]
pub fn cell_end(grid: Time, t: Time) -> Time {
    match t.checked_div(grid) {
        None => t.saturating_add(1),
        Some(cell) => cell.saturating_add(1).saturating_mul(grid),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::units::US;
    use crate::sim::Simulation;

    fn build(topology: &str) -> Simulation {
        let src = format!(
            "name = \"p\"\n[topology]\n{topology}\n[[workload]]\nkind = \"permutation\"\nsize = \"1KB\"\n"
        );
        let l = crate::load_str(&src, "p.toml", std::path::Path::new("."), &[])
            .unwrap_or_else(|e| panic!("{e}"));
        Simulation::build(&l.scenario, &l.file, &l.base_dir).unwrap_or_else(|e| panic!("{e}"))
    }

    fn name_of(sim: &Simulation, v: usize) -> &str {
        &sim.fabric.nodes[v].name
    }

    /// Every cable between two shards, as (node, node) names.
    fn cut(sim: &Simulation, p: &Partition) -> Vec<(String, String)> {
        let f = &sim.fabric;
        (0..f.ports.len())
            .filter_map(|i| {
                let a = f.ports[i].node.idx();
                let b = f.ports[f.ports[i].peer.idx()].node.idx();
                (p.shard_of_node[a] != p.shard_of_node[b])
                    .then(|| (name_of(sim, a).to_string(), name_of(sim, b).to_string()))
            })
            .collect()
    }

    #[test]
    fn a_fat_tree_is_cut_between_pods_and_cores_only() {
        let sim = build("kind = \"fat_tree\"\nk = 4\nrate = \"100Gbps\"\nlink_delay = \"1us\"");
        for threads in [2u32, 3, 4] {
            let p = partition(&sim.fabric, &sim.roles, threads);
            assert_eq!(p.shards, threads, "{:?}", p.notes);
            assert!(p.notes.is_empty());
            // A pod's edges, aggregations and hosts share a shard.
            for v in 0..sim.fabric.nodes.len() {
                let name = name_of(&sim, v);
                if let Some(pod) = name.strip_prefix("edge").or(name.strip_prefix("agg")) {
                    let pod = pod.split('.').next().unwrap();
                    let first_edge = (0..sim.fabric.nodes.len())
                        .find(|&w| name_of(&sim, w) == format!("edge{pod}.0"))
                        .unwrap();
                    assert_eq!(p.shard_of_node[v], p.shard_of_node[first_edge], "{name}");
                }
            }
            let c = cut(&sim, &p);
            assert!(!c.is_empty());
            assert!(
                c.iter()
                    .all(|(a, b)| a.starts_with("core") || b.starts_with("core")),
                "{c:?}"
            );
            assert_eq!(p.cut_cables * 2, c.len());
            // The switch latency (default 0 here) is in the delay; links are 1 us.
            assert_eq!(p.lookahead, sim.fabric.links[0].delay);
            assert!(p.lookahead >= US);
            // Every shard has work, and the 4 pods are spread evenly over 2 and 4.
            assert!(p.ports.iter().all(|&w| w > 0));
            if threads != 3 {
                assert!(p.ports.windows(2).all(|w| w[0] == w[1]), "{:?}", p.ports);
            }
            assert_eq!(p.ports.iter().sum::<u64>(), sim.fabric.ports.len() as u64);
        }
    }

    #[test]
    fn more_shards_than_groups_runs_on_as_many_as_there_are() {
        let sim = build("kind = \"leaf_spine\"\nleaves = 2\nspines = 2\nservers_per_leaf = 2\nhost_rate = \"100Gbps\"");
        let p = partition(&sim.fabric, &sim.roles, 5);
        assert_eq!(p.shards, 2);
        assert_eq!(p.notes.len(), 1);
        assert!(p.notes[0].contains("2 groups"), "{}", p.notes[0]);
        // Hosts are with their leaf.
        let c = cut(&sim, &p);
        assert!(c
            .iter()
            .all(|(a, b)| !a.starts_with("host") && !b.starts_with("host")));
        assert_eq!(
            partition(&sim.fabric, &sim.roles, 1),
            partition(&sim.fabric, &sim.roles, 0)
        );
        assert_eq!(partition(&sim.fabric, &sim.roles, 1).shards, 1);
    }

    #[test]
    fn a_zero_delay_cut_falls_back_to_one_shard() {
        let sim = build(
            "kind = \"leaf_spine\"\nleaves = 2\nspines = 2\nservers_per_leaf = 2\nhost_rate = \"100Gbps\"\nlink_delay = \"0ns\"\n[fabric]\nswitch_latency = \"0ns\"",
        );
        let p = partition(&sim.fabric, &sim.roles, 2);
        assert_eq!(p.shards, 1);
        assert_eq!(p.lookahead, Time::MAX);
        assert!(p.notes[0].contains("zero lookahead"), "{:?}", p.notes);
        assert!(p.shard_of_node.iter().all(|&s| s == 0));
    }

    #[test]
    fn two_campuses_are_cut_at_the_dci_only() {
        // Leaves and spines make a campus; the DR switches are the top layer and each
        // stays with the campus more than half its cables lead to: only the 120 km DCI is
        // cut, so the lookahead is its delay (about 600 us), not a campus link's.
        let sim = build(
            "kind = \"multi_campus\"\nleaves = 2\nspines = 2\nservers_per_leaf = 2\ndr_switches = 2\ncampus_to_dr_capacity = \"1600Gbps\"\ndci_capacity = \"800Gbps\"",
        );
        let p = partition(&sim.fabric, &sim.roles, 2);
        assert_eq!(p.shards, 2, "{:?}", p.notes);
        let c = cut(&sim, &p);
        assert!(!c.is_empty());
        assert!(
            c.iter().all(|(a, b)| a.contains("dr") && b.contains("dr")),
            "{c:?}"
        );
        assert!(p.lookahead > 500 * US, "{}", p.lookahead);
        let dci = (0..sim.fabric.ports.len())
            .filter(|&i| {
                let f = &sim.fabric;
                let (a, b) = (
                    f.ports[i].node.idx(),
                    f.ports[f.ports[i].peer.idx()].node.idx(),
                );
                name_of(&sim, a).contains("dr") && name_of(&sim, b).contains("dr")
            })
            .map(|i| sim.fabric.links[i].delay)
            .min()
            .unwrap();
        assert_eq!(p.lookahead, dci);
    }

    #[test]
    fn more_shards_than_campuses_split_the_campuses_into_leaves() {
        // Two campuses of 4 leaves: 4 or 8 shards asked for split them (the heaviest
        // first) into leaves with their hosts; spines join the shard most of their
        // cables lead to, and a campus's DR switches stay together. The lookahead is
        // then a campus cable's delay. 16 asked for: 8 leaves are all there are.
        let sim = build(
            "kind = \"multi_campus\"\nleaves = 4\nspines = 2\nservers_per_leaf = 2\ndr_switches = 2\ncampus_to_dr_capacity = \"1600Gbps\"\ndci_capacity = \"800Gbps\"",
        );
        let f = &sim.fabric;
        // (Between two switches: a cable toward a switch carries its forwarding latency.)
        let campus_cable = (0..f.ports.len())
            .filter(|&i| {
                let (a, b) = (
                    f.ports[i].node.idx(),
                    f.ports[f.ports[i].peer.idx()].node.idx(),
                );
                [a, b]
                    .iter()
                    .all(|&v| f.node_is_switch[v] && !name_of(&sim, v).contains("dr"))
            })
            .map(|i| f.links[i].delay)
            .min()
            .unwrap();
        for (asked, got) in [(3u32, 3u32), (4, 4), (8, 8), (16, 8)] {
            let p = partition(f, &sim.roles, asked);
            assert_eq!(p.shards, got, "{asked}: {:?}", p.notes);
            assert_eq!(p.notes.len(), usize::from(asked != got), "{:?}", p.notes);
            assert!(p.ports.iter().all(|&w| w > 0), "{:?}", p.ports);
            assert_eq!(p.lookahead, campus_cable, "{asked}");
            for (port, campus) in &sim.roles.dr.as_ref().unwrap().dci_ports {
                let first = (sim.roles.dr.as_ref().unwrap().dci_ports.iter())
                    .find(|(_, c)| c == campus)
                    .unwrap()
                    .0;
                let s = |q: crate::base::ids::PortId| p.shard_of_node[f.ports[q].node.idx()];
                assert_eq!(s(*port), s(first), "{asked}: a campus's DRs apart");
            }
            let c = cut(&sim, &p);
            assert!(
                c.iter()
                    .all(|(a, b)| !a.starts_with("host") && !b.starts_with("host")),
                "{c:?}"
            );
        }
        // A fat tree with fewer pods than shards: its pods split into edge switches.
        let ft = build("kind = \"fat_tree\"\nk = 4\nrate = \"100Gbps\"\nlink_delay = \"1us\"");
        let p = partition(&ft.fabric, &ft.roles, 8);
        assert_eq!(p.shards, 8, "{:?}", p.notes);
        assert!(p.notes.is_empty());
        assert!(cut(&ft, &p)
            .iter()
            .all(|(a, b)| !a.starts_with("host") && !b.starts_with("host")));
    }

    #[test]
    fn pods_that_do_not_spread_evenly_are_split_and_cores_go_to_the_lightest() {
        // 8 pods over 3, 5, 6 or 7 shards, whole, give some shard a pod more than others
        // (and the cores, whose cables lead to every shard, went where most led: to
        // those). Now the cores spread over the lightest, and where that is not enough
        // the heaviest pods are split into their edge switches, until every shard is
        // within 5 % of the mean; nothing is lost: still 1 us of lookahead, no host
        // cable cut, every port counted once.
        let sim = build("kind = \"fat_tree\"\nk = 8\nrate = \"100Gbps\"\nlink_delay = \"1us\"");
        for threads in [3u32, 5, 6, 7] {
            let p = partition(&sim.fabric, &sim.roles, threads);
            assert_eq!(p.shards, threads, "{:?}", p.notes);
            let total: u64 = p.ports.iter().sum();
            assert_eq!(total, sim.fabric.ports.len() as u64);
            let max = *p.ports.iter().max().unwrap();
            assert!(
                max * 20 <= total.div_ceil(threads as u64) * 21,
                "{threads}: {:?}",
                p.ports
            );
            assert_eq!(p.lookahead, sim.fabric.links[0].delay);
            assert!(cut(&sim, &p)
                .iter()
                .all(|(a, b)| !a.starts_with("host") && !b.starts_with("host")));
            // Over 3 and 5 shards, the cores spread over the lightest even the whole pods
            // out; over 6 and 7, two pods share some shard and some pod must be split:
            // its edge switches are not all in one shard.
            if threads < 6 {
                continue;
            }
            let shard = |name: &str| {
                let v = (0..sim.fabric.nodes.len())
                    .find(|&v| name_of(&sim, v) == name)
                    .unwrap();
                p.shard_of_node[v]
            };
            assert!(
                (0..8).any(|pod| (1..4)
                    .any(|e| shard(&format!("edge{pod}.{e}")) != shard(&format!("edge{pod}.0")))),
                "{threads}: no pod split"
            );
        }
        // 8 pods over 2 or 4 shards spread evenly: none is split.
        for threads in [2u32, 4] {
            let p = partition(&sim.fabric, &sim.roles, threads);
            for v in 0..sim.fabric.nodes.len() {
                let name = name_of(&sim, v);
                if let Some(rest) = name.strip_prefix("edge") {
                    let pod = rest.split('.').next().unwrap();
                    let first = (0..sim.fabric.nodes.len())
                        .find(|&w| name_of(&sim, w) == format!("edge{pod}.0"))
                        .unwrap();
                    assert_eq!(
                        p.shard_of_node[v], p.shard_of_node[first],
                        "{threads}: {name}"
                    );
                }
            }
        }
    }

    #[test]
    fn the_same_fabric_is_cut_the_same_way() {
        let sim = build("kind = \"fat_tree\"\nk = 6\nrate = \"100Gbps\"");
        assert_eq!(
            partition(&sim.fabric, &sim.roles, 4),
            partition(&sim.fabric, &sim.roles, 4)
        );
        let other = build("kind = \"fat_tree\"\nk = 6\nrate = \"100Gbps\"");
        assert_eq!(
            partition(&sim.fabric, &sim.roles, 4),
            partition(&other.fabric, &other.roles, 4)
        );
    }
}
