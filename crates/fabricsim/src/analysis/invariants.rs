//! Invariants any run must satisfy, checked after (or during) a run. Tests assert that
//! [`check`] finds nothing for every scenario; users can call it on their own runs.
//!
//! - Packet conservation per flow: data packets sent = arrived + dropped + lost to faults
//!   + in flight.
//! - Packet conservation per port: frames sent (replays included) = delivered by its link
//!   + corrupted + discarded by a replay + lost on a link going down + on the wire.
//! - Packet conservation per switch: frames in = frames out + dropped (congestion and
//!   faults) + queued, counting PFC frames the switch consumed and generated.
//! - Lossless means lossless: with PFC on, no packet is dropped; with credits, none
//!   either, and every egress port's credits outstanding equal the blocks on its link,
//!   in the far switch's input and coming back ([`crate::model::fabric::flow_control::credit::audit`]).
//! - No finished flow is faster than its ideal FCT, and no finished job iteration than
//!   its lower bound: both are bounds over every path the load balancer may use
//!   ([`crate::model::transport::multipath`]), so a violation is a bug in the bound or the model.
//!
//! The runner checks every run ([`crate::run::runner::run`]) and reports what it finds.

use crate::sim::Simulation;

/// Data packets of each flow still queued in a port, travelling on a link or in a
/// sender's replay ring.
pub fn in_flight_data(sim: &Simulation) -> Vec<u64> {
    let mut v = vec![0u64; sim.nics.flows.len()];
    let mut count = |d: &crate::kernel::packet::Desc| {
        let p = sim.ctx.arena.get(d.id, d.kind(), sim.ctx.now);
        if let crate::kernel::packet::Payload::Data { flow, .. } = p.payload {
            v[flow.idx()] += 1;
        }
    };
    for l in &sim.fabric.links {
        for (_, d) in &l.ring {
            count(d);
        }
    }
    // Sent on links that may replay, fate not drawn yet (or awaiting the replay).
    if let Some(fs) = &sim.fabric.faults {
        for lf in &fs.links {
            for (_, d) in &lf.wire {
                count(d);
            }
        }
    }
    for p in &sim.fabric.ports {
        let pool = &sim.fabric.queue_pools[p.pool as usize];
        for q in &p.queues {
            for d in q.iter(pool) {
                count(d);
            }
        }
    }
    if let Some(g) = &sim.roles.gse {
        for v in &g.voq {
            for d in &v.q {
                count(d);
            }
        }
        for r in &g.rx {
            for h in &r.held {
                count(&h.desc);
            }
        }
    }
    v
}

/// Every violated invariant, as a sentence.
pub fn check(sim: &Simulation) -> Vec<String> {
    let mut bad = Vec::new();
    let inflight = in_flight_data(sim);
    let faults = sim.fabric.faults.as_deref();
    for (i, f) in sim.nics.flows.iter().enumerate() {
        let dropped = sim.fabric.flow_drops[i] + faults.map_or(0, |fs| fs.flow_lost[i]);
        let accounted = f.data_pkts_arrived + dropped + inflight[i];
        if f.data_pkts_sent != accounted {
            bad.push(format!(
                "flow {i}: {} data packets sent but {} arrived + {} dropped + {} in flight",
                f.data_pkts_sent, f.data_pkts_arrived, dropped, inflight[i]
            ));
        }
        if let Some(t) = f.finish {
            let fct = t - f.spec.start;
            if fct < sim.ideal[i] {
                bad.push(format!(
                    "flow {i}: FCT {fct} ps is below its ideal {} ps",
                    sim.ideal[i]
                ));
            }
            if f.rcv_nxt != f.spec.size {
                bad.push(format!(
                    "flow {i}: finished with {} of {} bytes",
                    f.rcv_nxt, f.spec.size
                ));
            }
        }
    }
    for j in 0..sim.nics.jobs.len() {
        if let Some(jct) = sim.jct(j) {
            let bound = sim.job_lower_bound(j);
            if jct < bound {
                bad.push(format!(
                    "job iteration {j}: JCT {jct} ps is below its lower bound {bound} ps"
                ));
            }
        }
    }
    // Per port (and its link): every frame the port transmitted was delivered at the far
    // end, lost to a fault or is still on the wire.
    for (i, p) in sim.fabric.ports.iter().enumerate() {
        let l = &sim.fabric.links[i];
        let (gone, dead, beside) = faults.map_or((0, 0, 0), |fs| {
            let lf = &fs.links[i];
            (
                lf.corrupted + lf.discarded + lf.lost,
                lf.dead_in_ring(),
                lf.undecided(),
            )
        });
        let on_wire = l.ring.len() as u64 - dead + beside;
        if p.tx_packets != l.delivered + gone + on_wire {
            bad.push(format!(
                "port {}:{}: {} frames sent but {} delivered + {gone} corrupted, discarded or lost + {} on the wire",
                sim.port_node_name(crate::base::ids::PortId(i as u32)),
                p.local,
                p.tx_packets,
                l.delivered,
                on_wire
            ));
        }
    }
    for (si, sw) in sim.fabric.switches.iter().enumerate() {
        let r = sw.ports;
        let ports = &sim.fabric.ports[r.first.idx()..r.first.idx() + r.len as usize];
        let sum = |f: &dyn Fn(&crate::model::fabric::Port) -> u64| ports.iter().map(f).sum::<u64>();
        let rx = sum(&|p| sim.fabric.links[p.peer.idx()].delivered);
        let pfc_rx = sum(&|p| p.stats.pause_frames_received + p.stats.resume_frames_received);
        // A frame replayed by link-level retransmission left the switch once.
        let replayed: u64 = faults.map_or(0, |fs| {
            (r.first.idx()..r.first.idx() + r.len as usize)
                .map(|i| fs.links[i].replayed)
                .sum()
        });
        let tx = sum(&|p| p.tx_packets) - replayed;
        let pfc_gen = sum(&|p| p.stats.pause_frames_sent + p.stats.resume_frames_sent);
        let pfc_pending = sum(&|p| p.ctrl_len() as u64);
        let queued = sum(&|p| p.queues.iter().map(|q| q.len() as u64).sum());
        let name = &sim.fabric.nodes[sw.node].name;
        let (gen, sink, held) = (sw.generated, sw.consumed, sw.held);
        let drops = sw.drops + faults.map_or(0, |fs| fs.switch_drops[si]);
        if rx - pfc_rx + gen != tx - (pfc_gen - pfc_pending) + drops + queued + held + sink {
            bad.push(format!(
                "switch {name}: {} frames in (less {pfc_rx} PFC) + {gen} generated != {} out (less {} PFC) + {drops} dropped + {queued} queued + {held} held + {sink} consumed",
                rx, tx, pfc_gen - pfc_pending
            ));
        }
        // A lossless switch never drops (a lossy DR switch between lossless campuses may).
        let credit = sim.fabric.credit().is_some();
        if (credit || sw.buffer.lossless) && !sim.ctx.params.pfc_edge_only && sw.drops > 0 {
            bad.push(format!(
                "switch {name}: {} drops in a lossless fabric",
                sw.drops
            ));
        }
        // Every queued packet was admitted, except those the switch generated itself.
        let pools = &sim.fabric.queue_pools;
        let local: u64 = ports
            .iter()
            .flat_map(|p| p.queues.iter().map(|q| (q, &pools[p.pool as usize])))
            .flat_map(|(q, pool)| q.iter(pool))
            .filter(|d| d.in_port == crate::kernel::packet::LOCAL_PORT)
            .map(|d| d.wire() as u64)
            .sum();
        if sw.buffer.used + local
            != ports
                .iter()
                .map(|p| p.queues.iter().map(|q| q.bytes).sum::<u64>())
                .sum::<u64>()
                + sw.voq_wire
        {
            bad.push(format!(
                "switch {name}: buffer accounting differs from queued bytes"
            ));
        }
    }
    bad.extend(crate::model::fabric::flow_control::credit::audit(
        &sim.fabric,
    ));
    bad
}
