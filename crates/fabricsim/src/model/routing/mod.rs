//! Routing tables and load balancing.
//!
//! Tables are built once from the switch graph: for every switch and every *edge switch*
//! (a switch with hosts attached) the set of ports on shortest paths toward it. A packet
//! for host h at switch s uses the port to h if h hangs off s, else the next hops toward
//! h's edge switch. Memory grows with switches x edge switches, not hosts squared, and the
//! same code serves leaf-spine, fat-tree and hand-written topologies. Static routes of a
//! custom topology override single (switch, host) entries.
//!
//! Hosts with several ports (dual-rail NICs, document 003) attach port r to plane r, an
//! independent switch network: a switch belongs to one plane, and its entry for host h
//! leads to h's port in that plane. A single-plane table skips the plane lookup.
//!
//! Choosing among the candidates is the load balancer's job ([`ecmp`], [`spray`], and
//! GSE's [`crate::model::routing::pktc`] at the edge), one file each, named in [`registry`].

pub mod adaptive;
pub mod ecmp;
pub mod pktc;
pub mod registry;
mod shortest;
pub mod source;
pub mod spray;
pub mod updown;

pub use registry::{LbAlgorithm, LbEntry, LbState, LoadBalanceCfg, LoadBalancer, BALANCERS};

/// Flag in a range's start: the candidates are the consecutive ports start..start+len.
const CONTIGUOUS: u32 = 1 << 31;

/// Flag of a packed (switch, edge) entry: a run of consecutive ports, the first in the
/// low [`PACKED_PORT_BITS`] bits and the count above them. Without it the entry is an
/// index into `spans`. A fat tree's entries are all such runs (the up ports, or the one
/// port down), so its table is four bytes per (switch, edge switch), not eight.
const PACKED: u32 = 1 << 31;
const PACKED_PORT_BITS: u32 = 24;
const PACKED_PORT_MASK: u32 = (1 << PACKED_PORT_BITS) - 1;
/// Most ports a packed run holds.
const PACKED_MAX_LEN: u32 = (1 << (31 - PACKED_PORT_BITS)) - 1;

use crate::base::ids::PortId;
use crate::base::trusted::Trusted;
use crate::model::topology::{Node, NodeKind, PortEnds};
use std::collections::{HashMap, VecDeque};

/// A switch's row of (edge switch) entries, compacted: entries at edges `lo..lo + len`
/// are `ranges[off..off + len]`, every other is `default`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct EntryRow {
    default: u32,
    lo: u32,
    len: u32,
    off: u32,
}

/// Rows of `n` entries each (`dense`), compacted: per row its default and the window of
/// entries that differ from it, and the windows one after another. The default is the
/// value, of the row's most common one, its first and its last, that leaves the
/// shortest window.
fn compact_rows(dense: &[u32], n: usize) -> (Vec<EntryRow>, Vec<u32>) {
    let mut rows = Vec::with_capacity(dense.len().checked_div(n).unwrap_or(0));
    let mut kept = Vec::new();
    let mut sorted = Vec::with_capacity(n);
    for row in dense.chunks(n.max(1)) {
        sorted.clear();
        sorted.extend_from_slice(row);
        sorted.sort_unstable();
        let mode = (sorted.chunk_by(|a, b| a == b))
            .max_by_key(|run| run.len())
            .map_or(0, |run| run[0]);
        let window = |d: u32| {
            let lo = row.iter().position(|&v| v != d).unwrap_or(0);
            let hi = row.iter().rposition(|&v| v != d).map_or(0, |i| i + 1);
            (lo, hi.max(lo))
        };
        let (default, (lo, hi)) = [mode, row[0], row[row.len() - 1]]
            .into_iter()
            .map(|d| (d, window(d)))
            .min_by_key(|&(_, (lo, hi))| hi - lo)
            .expect("three candidates");
        let off = u32::try_from(kept.len()).expect("a routing table under 2^32 entries");
        rows.push(EntryRow {
            default,
            lo: lo as u32,
            len: (hi - lo) as u32,
            off,
        });
        kept.extend_from_slice(&row[lo..hi]);
    }
    kept.shrink_to_fit();
    (rows, kept)
}

/// BFS distance of a switch not reached (yet).
const UNREACHED: u32 = u32::MAX;

/// A looked-up candidate set: consecutive ports, or a run of the flat table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Candidates {
    start: u32,
    /// Number of candidates (0: unreachable).
    pub len: u32,
}

/// Where a host hangs off the switches: what every lookup toward it reads first, in one
/// entry (its edge switch beside the edge index and the port range, so that a lookup
/// makes one bounds check and one access where it made three of two tables).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct HostRoute {
    /// The switch index of the host's edge switch.
    switch: u32,
    /// Its edge index (the column of the switches' entries toward it).
    edge: u32,
    /// Range in `flat` of the port from the edge switch to the host.
    range: (u32, u32),
}

/// Next-hop candidates for every (switch, destination host).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RoutingTable {
    n_edges: usize,
    /// Hosts.
    n_hosts: usize,
    /// Planes (ports per host); 1 but for dual-rail fabrics.
    n_planes: usize,
    /// Plane of each switch (empty with one plane).
    plane_of: Vec<u8>,
    /// Each host's edge switch and the way to it from there, per (plane, host):
    /// `plane * n_hosts + host`.
    host_route: Vec<HostRoute>,
    /// Switch index of each edge index.
    pub edge_switch: Vec<u32>,
    /// Candidates per (switch * n_edges + edge) while the table is built: a packed run
    /// ([`PACKED`]) or an index into `spans` (see [`Self::range_at`]); once built
    /// ([`Self::compact`]), only each switch's window of entries that differ from its
    /// default (`rows`).
    ranges: Vec<u32>,
    /// Per switch, once built: its most common entry and the window of edges whose
    /// entries differ from it, kept in `ranges`.
    rows: Vec<EntryRow>,
    /// Candidate ranges (start in `flat` or `CONTIGUOUS`-flagged port, count) of the
    /// entries that do not pack.
    spans: Vec<(u32, u32)>,
    flat: Vec<u32>,
    overrides: HashMap<(u32, u32), (u32, u32)>,
    /// A lookup first tries `overrides` or finds the switch's plane: set once built if
    /// there are overrides or several planes. One test a lookup where two were (most
    /// fabrics have neither).
    general: bool,
    /// Up/down tables ([`updown`]): per (switch, edge), the entries of a packet going
    /// down (`ranges` then holds those going up); empty otherwise.
    down_ranges: Vec<(u32, u32)>,
    /// Up/down tables: per (switch, edge), primary entries going up (high 16 bits) and
    /// going down (low 16); the rest of each range are fallbacks.
    primary: Vec<u32>,
    /// Up/down tables: per port, set when a packet arriving on it comes from a higher
    /// tier (it is going down).
    from_above: Vec<bool>,
    /// Up/down tables: per port, set when it leads to a switch of its own tier (a
    /// lateral link: a detour that breaks up/down order).
    lateral: Vec<bool>,
}

/// What went wrong building tables.
#[derive(Debug)]
pub struct RoutingError(pub String);

/// Steering: at chosen switches, toward the hosts of the other groups, only some of the
/// shortest-path candidates are kept. `rail_optimized` uses it for PXN: a GPU's crossbar
/// sends what leaves the server either over NVLink (the GPU on the destination's rail
/// sends it) or through its own NIC ([`crate::model::topology::rail_optimized`]).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Steering {
    /// Group (server) of each host.
    pub group_of_host: Vec<u32>,
    /// The rules, one per steered switch.
    pub rules: Vec<Steer>,
}

/// One switch's steering rule.
#[derive(Clone, Debug, PartialEq)]
pub struct Steer {
    /// The switch.
    pub sw: u32,
    /// Its group: toward hosts of this group its entries stay as they are (`None`: the
    /// switch belongs to no group, every host is another group's).
    pub group: Option<u32>,
    /// Ports kept among the candidates toward every other group's hosts, where at least
    /// one of them is a candidate (otherwise the entry stays as it is).
    pub ports: Vec<u32>,
}

impl Steering {
    /// No rule at all: plain shortest paths.
    pub fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }
}

impl RoutingTable {
    /// Builds tables for `nodes`/`ports`; `switch_nodes[i]` is the node of switch i and
    /// `host_nodes[h]` the node of host h. `statics` are (switch index, host, ports).
    pub fn build(
        nodes: &[Node],
        ports: &[PortEnds],
        switch_nodes: &[u32],
        host_nodes: &[u32],
        statics: &[(u32, u32, Vec<u32>)],
    ) -> Result<RoutingTable, RoutingError> {
        Self::build_over(nodes, ports, switch_nodes, host_nodes, statics, |_| true)
    }

    /// [`Self::build`] over the links whose ports `usable` accepts: shortest paths and
    /// their candidates use no other link (a link is one port at each end, and both are
    /// refused together when it is down). Routing rebuilds its tables this way after
    /// faults ([`crate::model::fabric::faults::reconverge`]); the port from an edge switch to its host
    /// stays in the table whatever its state (there is no other way to the host).
    pub fn build_over(
        nodes: &[Node],
        ports: &[PortEnds],
        switch_nodes: &[u32],
        host_nodes: &[u32],
        statics: &[(u32, u32, Vec<u32>)],
        usable: impl Fn(PortId) -> bool,
    ) -> Result<RoutingTable, RoutingError> {
        let none = Steering::default();
        Self::build_steered(
            nodes,
            ports,
            switch_nodes,
            host_nodes,
            statics,
            &none,
            usable,
        )
    }

    /// [`Self::build_over`] with `steering` applied to the shortest-path entries.
    #[allow(clippy::too_many_arguments)]
    pub fn build_steered(
        nodes: &[Node],
        ports: &[PortEnds],
        switch_nodes: &[u32],
        host_nodes: &[u32],
        statics: &[(u32, u32, Vec<u32>)],
        steering: &Steering,
        usable: impl Fn(PortId) -> bool,
    ) -> Result<RoutingTable, RoutingError> {
        Self::build_on(
            nodes,
            ports,
            switch_nodes,
            host_nodes,
            statics,
            steering,
            usable,
            None,
        )
    }

    /// [`Self::build_over`] with the shortest-path walks on `threads` threads (`None`:
    /// as many as the table's size is worth, [`shortest::threads_for`]). The table is
    /// the same on any number.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn build_on(
        nodes: &[Node],
        ports: &[PortEnds],
        switch_nodes: &[u32],
        host_nodes: &[u32],
        statics: &[(u32, u32, Vec<u32>)],
        steering: &Steering,
        usable: impl Fn(PortId) -> bool,
        threads: Option<usize>,
    ) -> Result<RoutingTable, RoutingError> {
        let n_sw = switch_nodes.len();
        let mut t = RoutingTable::default();
        let mut edge_index: HashMap<u32, u32> = HashMap::new();
        t.n_hosts = host_nodes.len();
        t.n_planes = host_nodes
            .first()
            .map_or(1, |&hn| nodes[hn as usize].ports.len as usize)
            .max(1);
        let mut plane_seed: Vec<Option<u8>> = vec![None; n_sw];
        let mut host_route = vec![HostRoute::default(); t.n_hosts * t.n_planes];
        for (h, &hn) in host_nodes.iter().enumerate() {
            let node = &nodes[hn as usize];
            if node.ports.len as usize != t.n_planes {
                return Err(RoutingError(format!(
                    "host {h} has {} ports where host 0 has {}: every NIC needs one port per plane",
                    node.ports.len, t.n_planes
                )));
            }
            for r in 0..t.n_planes {
                let port = &ports[node.ports.port(r).idx()];
                let leaf_port = port.peer.0;
                let leaf_node = ports[leaf_port as usize].node;
                let sw = match nodes[leaf_node.idx()].kind {
                    NodeKind::Switch(s) => s,
                    NodeKind::Host(_) => {
                        return Err(RoutingError(format!(
                            "host {h} is not attached to a switch"
                        )))
                    }
                };
                match plane_seed[sw as usize] {
                    Some(p) if p as usize != r => {
                        return Err(RoutingError(format!(
                            "a switch joins port {p} of one NIC and port {r} of another: with NICs of several ports, each plane must be its own network"
                        )))
                    }
                    _ => plane_seed[sw as usize] = Some(r as u8),
                }
                let next = edge_index.len() as u32;
                let e = *edge_index.entry(sw).or_insert_with(|| {
                    t.edge_switch.push(sw);
                    next
                });
                host_route[r * t.n_hosts + h] = HostRoute {
                    switch: sw,
                    edge: e,
                    range: (t.flat.len() as u32, 1),
                };
                t.flat.push(leaf_port);
            }
        }
        t.host_route = host_route;
        t.n_edges = t.edge_switch.len();
        // Switch adjacency through ports whose peer is a switch.
        let sw_of_node = |n: u32| match nodes[n as usize].kind {
            NodeKind::Switch(s) => Some(s),
            NodeKind::Host(_) => None,
        };
        if t.n_planes > 1 {
            t.plane_of = planes(nodes, ports, switch_nodes, &plane_seed)?;
        }
        // Each switch's usable links to switches, (port, peer switch) in port order.
        let mut graph = shortest::SwitchGraph {
            adj_start: Vec::with_capacity(n_sw + 1),
            adj: Vec::new(),
        };
        for &sn in switch_nodes {
            graph.adj_start.push(graph.adj.len() as u32);
            for p in nodes[sn as usize].ports.iter().filter(|&p| usable(p)) {
                let peer_node = ports[ports[p.idx()].peer.idx()].node;
                if let Some(t2) = sw_of_node(peer_node.0) {
                    graph.adj.push((p.0, t2));
                }
            }
        }
        graph.adj_start.push(graph.adj.len() as u32);
        t.ranges = vec![PACKED; n_sw * t.n_edges];
        let threads = threads.unwrap_or_else(|| shortest::threads_for(t.ranges.len()));
        shortest::walk_all(
            &graph,
            &t.edge_switch,
            threads,
            &mut t.ranges,
            &mut t.spans,
            &mut t.flat,
        );
        if !steering.is_empty() {
            t.steer(steering);
        }
        for (sw, host, ps) in statics {
            let start = t.flat.len() as u32;
            t.flat.extend_from_slice(ps);
            t.overrides.insert((*sw, *host), (start, ps.len() as u32));
        }
        t.general = !t.overrides.is_empty() || t.n_planes > 1;
        t.compact(ports, switch_nodes);
        Ok(t)
    }

    /// Applies `steering` to the dense entries (before [`Self::compact`]). An edge switch
    /// whose hosts are of several groups is left alone.
    fn steer(&mut self, steering: &Steering) {
        const MIXED: u32 = u32::MAX;
        let mut edge_group: Vec<Option<u32>> = vec![None; self.n_edges];
        for (h, &g) in steering.group_of_host.iter().enumerate() {
            for r in 0..self.n_planes {
                let e = self.host_route[r * self.n_hosts + h].edge as usize;
                edge_group[e] = match edge_group[e] {
                    None => Some(g),
                    Some(x) if x == g => Some(g),
                    Some(_) => Some(MIXED),
                };
            }
        }
        for rule in &steering.rules {
            for (e, g) in edge_group.iter().enumerate() {
                if g.is_none_or(|g| g == MIXED || Some(g) == rule.group) {
                    continue;
                }
                let i = rule.sw as usize * self.n_edges + e;
                let (start, len) = self.unpack(self.ranges[i]);
                let c = Candidates { start, len };
                let kept: Vec<u32> = (0..len as usize)
                    .map(|k| self.port_of(c, k).0)
                    .filter(|p| rule.ports.contains(p))
                    .collect();
                if kept.is_empty() || kept.len() == len as usize {
                    continue;
                }
                let contiguous = kept.windows(2).all(|w| w[1] == w[0] + 1);
                let range = if contiguous {
                    (kept[0] | CONTIGUOUS, kept.len() as u32)
                } else {
                    let at = self.flat.len() as u32;
                    self.flat.extend_from_slice(&kept);
                    (at, kept.len() as u32)
                };
                self.set_range(i, range);
            }
        }
    }

    /// Keeps of each switch's entries only its default and the window of those that
    /// differ from it (a fat tree's agg and edge switches send every packet
    /// for another pod up the same run of ports, so at k = 48 the full table, 13.3 MB,
    /// was mostly the same entry over and over: core switches keep their whole row, an
    /// agg switch its pod's edges, an edge switch one entry).
    pub(crate) fn compact(&mut self, ports: &[PortEnds], switch_nodes: &[u32]) {
        let dense = std::mem::take(&mut self.ranges);
        (self.rows, self.ranges) = compact_rows(&dense, self.n_edges);
        self.check_indices(ports, switch_nodes);
    }

    /// Checks that every lookup of a built table stays inside its tables, whatever the
    /// edge index, and yields ports of the switch looked up (`ports[p].node` is
    /// `switch_nodes[sw]`): `range_at` and the host entries are read without bounds
    /// checks, and a switch indexes its per-port tables by the local index of the port
    /// a lookup gives ([`crate::base::trusted`]). Panics (a table built wrong is a bug,
    /// never an input).
    fn check_indices(&self, ports: &[PortEnds], switch_nodes: &[u32]) {
        let n_ports = ports.len();
        let in_tables = |what: &str, ok: bool| {
            assert!(ok, "routing table built wrong: {what} outside its tables");
        };
        // An entry unpacked, if its span is in the table.
        let entry =
            |v: u32| (v & PACKED != 0 || (v as usize) < self.spans.len()).then(|| self.unpack(v));
        // Every port of `range` (start, count) is inside the tables and a port of
        // switch `sw`.
        let of_switch = |sw: usize, range: Option<(u32, u32)>| {
            let (Some(&node), Some((start, n))) = (switch_nodes.get(sw), range) else {
                return false;
            };
            let owned = |p: u32| ports.get(p as usize).is_some_and(|e| e.node.0 == node);
            let s = start & !CONTIGUOUS;
            if start & CONTIGUOUS != 0 {
                s as usize + n as usize <= n_ports && (s..s + n).all(owned)
            } else {
                (self.flat.get(s as usize..s as usize + n as usize))
                    .is_some_and(|ps| ps.iter().all(|&p| owned(p)))
            }
        };
        in_tables("a switch", self.rows.len() == switch_nodes.len());
        for (sw, r) in self.rows.iter().enumerate() {
            let window = self.ranges.get(r.off as usize..(r.off + r.len) as usize);
            in_tables("a row", window.is_some());
            in_tables("a row's default", of_switch(sw, entry(r.default)));
            let entries = window.unwrap_or_default();
            in_tables("an entry", entries.iter().all(|&v| of_switch(sw, entry(v))));
        }
        for (k, &r) in self.down_ranges.iter().enumerate() {
            in_tables("a down entry", of_switch(k / self.n_edges.max(1), Some(r)));
        }
        in_tables(
            "a host's route",
            self.host_route.len() == self.n_planes * self.n_hosts
                && (self.host_route.iter()).all(|h| of_switch(h.switch as usize, Some(h.range))),
        );
        in_tables(
            "a plane",
            self.n_planes == 1 || self.plane_of.iter().all(|&p| (p as usize) < self.n_planes),
        );
        for (&(sw, _), &r) in &self.overrides {
            in_tables("an override", of_switch(sw as usize, Some(r)));
        }
    }

    /// Switches the table routes from (the `sw` of its lookups is below this).
    pub fn n_switches(&self) -> usize {
        self.rows.len()
    }

    /// Hosts the table routes to (the `dst` of its lookups is below this).
    pub fn n_hosts(&self) -> usize {
        self.n_hosts
    }

    /// The candidates of switch `sw` toward host `dst`, looked up once: pass it to
    /// [`Self::port_of`] with an index below its `len`.
    #[inline(always)]
    pub fn lookup(&self, sw: u32, dst: u32) -> Candidates {
        let (start, len) = self.range(sw, dst);
        Candidates { start, len }
    }

    /// The `k`-th port of `c`.
    #[inline(always)]
    pub fn port_of(&self, c: Candidates, k: usize) -> PortId {
        PortId(if c.start & CONTIGUOUS != 0 {
            (c.start & !CONTIGUOUS) + k as u32
        } else {
            self.flat[c.start as usize + k]
        })
    }

    /// The `k`-th of `n` candidates of switch `sw` toward host `dst`; `n` comes from
    /// [`Self::count`].
    #[inline]
    pub fn pick(&self, sw: u32, dst: u32, k: usize) -> u32 {
        let (s, _) = self.range(sw, dst);
        if s & CONTIGUOUS != 0 {
            (s & !CONTIGUOUS) + k as u32
        } else {
            self.flat[s as usize + k]
        }
    }

    /// Number of candidates of switch `sw` toward host `dst` (0: unreachable).
    #[inline]
    pub fn count(&self, sw: u32, dst: u32) -> usize {
        self.range(sw, dst).1 as usize
    }

    #[inline(always)]
    fn range(&self, sw: u32, dst: u32) -> (u32, u32) {
        let k = if self.general {
            if !self.overrides.is_empty() {
                if let Some(&r) = self.overrides.get(&(sw, dst)) {
                    return r;
                }
            }
            if self.n_planes > 1 {
                self.plane_of[sw as usize] as usize * self.n_hosts + dst as usize
            } else {
                dst as usize
            }
        } else {
            dst as usize
        };
        let h = self.host_route.at(k);
        if h.switch == sw {
            h.range
        } else {
            self.range_at(sw as usize, h.edge as usize)
        }
    }

    /// The (start, count) of switch `sw`'s entry toward edge `e`: a packed run unpacked,
    /// or its span.
    #[inline(always)]
    fn range_at(&self, sw: usize, e: usize) -> (u32, u32) {
        let r = *self.rows.at(sw);
        let j = (e as u32).wrapping_sub(r.lo);
        let v = if j < r.len {
            *self.ranges.at((r.off + j) as usize)
        } else {
            r.default
        };
        self.unpack(v)
    }

    /// The (start, count) of entry `v`: a packed run unpacked, or its span.
    #[inline(always)]
    fn unpack(&self, v: u32) -> (u32, u32) {
        if v & PACKED != 0 {
            (
                (v & PACKED_PORT_MASK) | CONTIGUOUS,
                (v & !PACKED) >> PACKED_PORT_BITS,
            )
        } else {
            self.spans[v as usize]
        }
    }

    /// Sets (switch, edge) entry `i` to candidates (start, count): packed when they are
    /// a short run of consecutive ports (or none), else kept in `spans`.
    fn set_range(&mut self, i: usize, candidates: (u32, u32)) {
        self.ranges[i] = shortest::pack(&mut self.spans, candidates);
    }

    /// Ports of switch `sw` that lead toward host `dst` (empty if unreachable); with
    /// up/down tables, the primary entries of a packet on its way from a NIC.
    pub fn candidates(&self, sw: u32, dst: u32) -> Vec<u32> {
        if self.tiered() {
            let (c, primary) = self.lookup_phase(sw, dst, false);
            return (0..primary as usize)
                .map(|k| self.port_of(c, k).0)
                .collect();
        }
        (0..self.count(sw, dst))
            .map(|k| self.pick(sw, dst, k))
            .collect()
    }

    /// Switch index that host `h` hangs off (its port 0's, with several planes).
    pub fn edge_switch_of(&self, h: u32) -> u32 {
        self.host_route[h as usize].switch
    }

    /// Planes: the ports of each host, each in its own switch network.
    pub fn planes(&self) -> usize {
        self.n_planes.max(1)
    }

    /// Plane of switch `sw`.
    pub fn plane_of(&self, sw: u32) -> usize {
        self.plane_of.get(sw as usize).map_or(0, |&p| p as usize)
    }

    /// Bytes of memory the tables take, by capacity (`fabricsim bench`'s breakdown,
    /// [`crate::base::memory`]); static routes count at the bytes of their entries.
    pub fn memory_bytes(&self) -> u64 {
        use crate::base::memory::vec_bytes;
        vec_bytes(&self.plane_of)
            + vec_bytes(&self.host_route)
            + vec_bytes(&self.edge_switch)
            + vec_bytes(&self.ranges)
            + vec_bytes(&self.rows)
            + vec_bytes(&self.spans)
            + vec_bytes(&self.flat)
            + (self.overrides.capacity() * std::mem::size_of::<((u32, u32), (u32, u32))>()) as u64
            + vec_bytes(&self.down_ranges)
            + vec_bytes(&self.primary)
            + vec_bytes(&self.from_above)
            + vec_bytes(&self.lateral)
    }
}

/// The plane of every switch: that of the NIC ports its network reaches (`seed`: the
/// plane of the switches NIC ports attach to). A switch reached from two planes, or from
/// none, is an error.
fn planes(
    nodes: &[Node],
    ports: &[PortEnds],
    switch_nodes: &[u32],
    seed: &[Option<u8>],
) -> Result<Vec<u8>, RoutingError> {
    let mut plane: Vec<Option<u8>> = seed.to_vec();
    let mut queue: VecDeque<u32> = (0..seed.len() as u32)
        .filter(|&s| seed[s as usize].is_some())
        .collect();
    while let Some(s) = queue.pop_front() {
        let p = plane[s as usize];
        for q in nodes[switch_nodes[s as usize] as usize].ports.iter() {
            let peer = ports[ports[q.idx()].peer.idx()].node;
            if let NodeKind::Switch(t) = nodes[peer.idx()].kind {
                match plane[t as usize] {
                    None => {
                        plane[t as usize] = p;
                        queue.push_back(t);
                    }
                    Some(o) if Some(o) != p => {
                        return Err(RoutingError(format!(
                            "planes {o} and {} are joined by a link: with NICs of several ports, each plane must be its own network",
                            p.unwrap_or(0)
                        )))
                    }
                    _ => {}
                }
            }
        }
    }
    plane
        .into_iter()
        .enumerate()
        .map(|(s, p)| p.ok_or_else(|| RoutingError(format!("switch {s} reaches no NIC"))))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        /// A compacted table gives every entry as built, and keeps no more of a row than
        /// the window between its first and last entry that differ from its default.
        #[test]
        fn compacted_rows_give_every_entry_back(
            n in 1usize..40,
            rows in 1usize..12,
            seed in proptest::collection::vec(0u32..4, 480),
        ) {
            let dense: Vec<u32> = (0..n * rows).map(|i| seed[i % seed.len()] * 7).collect();
            let (compact, kept) = compact_rows(&dense, n);
            proptest::prop_assert_eq!(compact.len(), rows);
            for (s, row) in dense.chunks(n).enumerate() {
                let r = compact[s];
                for (e, &want) in row.iter().enumerate() {
                    let j = (e as u32).wrapping_sub(r.lo);
                    let got = if j < r.len { kept[(r.off + j) as usize] } else { r.default };
                    proptest::prop_assert_eq!(got, want);
                }
                let differ: Vec<usize> = (0..n).filter(|&e| row[e] != r.default).collect();
                let span = differ.last().map_or(0, |&l| l + 1 - differ[0]);
                proptest::prop_assert_eq!(r.len as usize, span);
            }
        }
    }

    /// A table of two switches (nodes 10 and 11, owning ports 0-1 and 2-3), one edge
    /// each, whose entries are runs of (first port, count), as built before compacting.
    fn two_switches(entries: [(u32, u32); 2]) -> (RoutingTable, Vec<PortEnds>) {
        let mut t = RoutingTable {
            n_edges: 1,
            n_planes: 1,
            ..Default::default()
        };
        t.ranges = (entries.iter())
            .map(|&(p, n)| PACKED | (n << PACKED_PORT_BITS) | p)
            .collect();
        let ends = [10, 10, 11, 11].map(|n| PortEnds {
            node: crate::base::ids::NodeId(n),
            peer: PortId(0),
        });
        (t, ends.to_vec())
    }

    #[test]
    fn a_table_that_gives_each_switch_its_own_ports_is_kept() {
        let (mut t, ends) = two_switches([(0, 2), (2, 2)]);
        t.compact(&ends, &[10, 11]);
        assert_eq!(t.n_switches(), 2);
    }

    #[test]
    #[should_panic(expected = "routing table built wrong")]
    fn a_table_that_gives_a_switch_another_switchs_port_is_refused() {
        let (mut t, ends) = two_switches([(0, 2), (1, 2)]);
        t.compact(&ends, &[10, 11]);
    }

    #[test]
    #[should_panic(expected = "routing table built wrong")]
    fn a_table_that_gives_a_port_past_the_last_is_refused() {
        let (mut t, ends) = two_switches([(0, 2), (2, 3)]);
        t.compact(&ends, &[10, 11]);
    }

    #[test]
    fn a_row_of_one_entry_repeated_keeps_nothing_but_its_default() {
        let (rows, kept) = compact_rows(&[5, 5, 5, 9, 9, 9, 9, 1], 4);
        assert_eq!(
            rows[0],
            EntryRow {
                default: 5,
                lo: 3,
                len: 1,
                off: 0
            }
        );
        assert_eq!(
            rows[1],
            EntryRow {
                default: 9,
                lo: 3,
                len: 1,
                off: 1
            }
        );
        assert_eq!(kept, vec![9, 1]);
    }
}
