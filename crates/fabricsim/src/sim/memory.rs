//! Where a built (or finished) run's memory is, part by part, counted from the
//! structures themselves: every vector and ring at its capacity (what it holds, used or
//! not), every struct at its size. `fabricsim bench` prints it per host beside the peak
//! RSS, so that a change in any part shows in every benchmark run.
//!
//! This is the measurement; [`crate::scenario::budget`] is the estimate made before anything is
//! built (from the settings alone, rounded up to bound the peak RSS).
//!
//! What is not itemized: the code and the allocator's own books, the event queue (a
//! calendar of fixed size, about 1.1 MB, plus the blocks its slots spill into, which
//! hold the most events spilled at once: its layout is the engine's own), the scenario
//! and the output rows. `fabricsim bench` shows them as the
//! difference between the peak RSS and the itemized total.
//!
//! # A queued packet
//! A packet waiting in an egress queue costs its [`crate::kernel::packet::Desc`] in a block of
//! its shard's queue pool (20 bytes, [`crate::model::fabric::port::QueuePool`]) and its
//! [`crate::kernel::packet::Slot`] in the arena (16 bytes): 36 bytes ([`queued_packet_bytes`]).
//! The free lists of both live in the free blocks and slots and cost nothing more; what
//! the pools hold beyond their packets (part-used blocks at the ends of queues, and the
//! most held at once rounded up to a chunk) is counted here at capacity, so
//! [`Breakdown::bytes_per_peak_packet`] is the 36 bytes plus that slack. On a wire a
//! packet costs its [`crate::model::fabric::link`] ring entry (arrival time and descriptor, 28
//! bytes) instead of the queue's.

use crate::base::memory::{ring_bytes, vec_bytes};
use crate::sim::Simulation;

/// The parts, in the order they are reported.
pub const PARTS: [&str; 9] = [
    "routing",
    "ports",
    "queues",
    "links",
    "link rings",
    "switches",
    "nodes",
    "hosts+flows",
    "arena",
];

/// A run's memory by part (bytes), in the order of [`PARTS`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Breakdown {
    /// Bytes per part, in the order of [`PARTS`].
    pub bytes: [u64; PARTS.len()],
    /// Hosts of the run (what "per host" divides by).
    pub hosts: usize,
    /// Most packets alive at once (arena slots in use at the peak).
    pub peak_packets: usize,
}

impl Breakdown {
    /// Sum of the parts.
    pub fn total(&self) -> u64 {
        self.bytes.iter().sum()
    }

    /// Bytes of part `name` (a name of [`PARTS`]).
    pub fn part(&self, name: &str) -> u64 {
        PARTS
            .iter()
            .position(|&p| p == name)
            .map_or(0, |i| self.bytes[i])
    }

    /// (part, bytes per host) in the order of [`PARTS`].
    pub fn per_host(&self) -> Vec<(&'static str, f64)> {
        let h = self.hosts.max(1) as f64;
        PARTS
            .iter()
            .zip(self.bytes)
            .map(|(&n, b)| (n, b as f64 / h))
            .collect()
    }

    /// Bytes held per packet alive at the peak: the arena, port queues and link rings
    /// over the peak number of packets (slack of grown rings included).
    pub fn bytes_per_peak_packet(&self) -> f64 {
        let b = self.part("arena") + self.part("queues") + self.part("link rings");
        b as f64 / self.peak_packets.max(1) as f64
    }
}

/// The size of a queued packet by construction: its descriptor in a queue and its slot in
/// the arena (see the module comment).
pub const fn queued_packet_bytes() -> usize {
    std::mem::size_of::<crate::kernel::packet::Desc>()
        + std::mem::size_of::<crate::kernel::packet::Slot>()
}

impl Simulation {
    /// What the run holds now, by part (after a run: at the capacities its peak left).
    pub fn memory_breakdown(&self) -> Breakdown {
        use std::mem::size_of;
        let f = &self.fabric;
        let n = &self.nics;
        let routing = f.routing.memory_bytes();
        let ports = vec_bytes(&f.ports);
        let queues: u64 =
            f.queue_pools.iter().map(|p| p.heap_bytes()).sum::<u64>() + vec_bytes(&f.queue_pools);
        let links = vec_bytes(&f.links);
        let rings: u64 = f.links.iter().map(|l| ring_bytes(&l.ring)).sum();
        let switches = vec_bytes(&f.switches)
            + (f.switches.iter())
                .map(|s| s.buffer.heap_bytes() + vec_bytes(&s.ecn))
                .sum::<u64>()
            + f.flow_control.heap_bytes()
            + f.telemetry.heap_bytes()
            + vec_bytes(&f.edge_port)
            + vec_bytes(&f.node_is_switch)
            + (self.roles.switch_cnp.as_ref()).map_or(0, |c| c.heap_bytes());
        let nodes = vec_bytes(&f.nodes)
            + f.nodes
                .iter()
                .map(|x| x.name.capacity() as u64)
                .sum::<u64>();
        let hosts = vec_bytes(&n.hosts)
            + n.hosts.iter().map(|h| h.active.heap_bytes()).sum::<u64>()
            + vec_bytes(&n.flows)
            + (n.flows.iter())
                .filter_map(|x| x.rx_early.as_ref())
                .map(|v| (size_of::<Vec<(u64, u64)>>() as u64) + vec_bytes(v))
                .sum::<u64>()
            + n.launcher.heap_bytes()
            + vec_bytes(&f.flow_drops)
            + vec_bytes(&f.flow_src)
            + vec_bytes(&self.ideal)
            + vec_bytes(&self.ideal_rtt)
            + vec_bytes(&self.server_of_host);
        // A sharded run's packets were in its shards' arenas (and their queues).
        let arena =
            self.ctx.arena.heap_bytes() + self.shards.as_ref().map_or(0, |s| s.heap_bytes());
        Breakdown {
            bytes: [
                routing, ports, queues, links, rings, switches, nodes, hosts, arena,
            ],
            hosts: n.hosts.len(),
            peak_packets: self.ctx.arena.peak(),
        }
    }
}
