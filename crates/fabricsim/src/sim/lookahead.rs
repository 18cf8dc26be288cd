//! Look-ahead prefetching for large models: while one event runs, start loading what the
//! next few events' handlers will read, so their cache misses overlap. It reads the event
//! codes the queue holds ([`crate::kernel::events::code`]) and never changes a result.

use crate::kernel::packet::FLAG_ROUTED;
use crate::model::fabric::NodeKind;

use crate::sim::*;

/// Starts loading what the next events' handlers will read, in dependent steps, so that
/// each step reads mostly lines an earlier step started loading:
/// - 3 ahead: the link, or the port;
/// - 1 ahead: for an arrival at a switch, the egress port, its queue and the ingress
///   counter (the egress was chosen upstream, see `route_ahead`), at a host the packet's
///   slot; for a port, its head packet, its link's tail and its switch's buffer.
///
/// Two more steps, 2 ahead (the link's first packets, the port's queue) and for the next
/// event (a port's ingress counter and ECN marker), cost 25 and 11 instructions an event
/// at k = 16 and bought no time measurably (`docs/results/bench.md`): the step 1 ahead
/// reads those lines itself, one event before the handler does.
#[inline(always)]
pub(crate) fn prefetch_ahead(ctx: &Ctx, fabric: &Fabric) {
    use crate::base::prefetch::{prefetch, prefetch_item};
    use crate::kernel::events::code::{LINK_ARRIVE as LINK, PORT_WAKE as PORT};
    use crate::kernel::events::peek_code;
    let ahead = ctx.queue.peek_codes();
    match peek_code(ahead[3]) {
        (LINK, l) => prefetch_item(&fabric.links, l as usize),
        (PORT, p) => prefetch_item(&fabric.ports, p as usize),
        _ => {}
    }
    match peek_code(ahead[1]) {
        (LINK, l) => {
            let link = &fabric.links[l as usize];
            if let Some((_, d)) = link.ring.front() {
                match link.to {
                    NodeKind::Host(_) => prefetch(ctx.arena.slot_of(d.id)),
                    NodeKind::Switch(s) => {
                        // (Under spraying the ECMP choice is only a guess.)
                        let egress = if d.flags & FLAG_ROUTED != 0 {
                            Some(link.to_port.0.wrapping_add(d.in_port as i16 as u32))
                        } else {
                            fabric.ecmp_egress(s, d.dst(), d.hash).map(|p| p.0)
                        };
                        if let Some(e) = egress.and_then(|e| fabric.ports.get(e as usize)) {
                            prefetch(e);
                            prefetch(&e.queues[d.prio() as usize & 7]);
                            let sw = &fabric.switches[s as usize];
                            sw.buffer
                                .prefetch_counter(sw.ports.local(link.to_port), d.prio() as usize);
                        }
                    }
                }
            }
        }
        (PORT, p) => {
            let port = &fabric.ports[p as usize];
            if port.nonempty != 0 {
                let prio = 7 - port.nonempty.leading_zeros() as usize;
                if let Some(d) = port.queues[prio].front(fabric.queue_pool(p as usize)) {
                    prefetch(d);
                }
            }
            // (A cut link's ring belongs to the shard at its far end.)
            let link = &fabric.links[p as usize];
            if link.cut_to == 0 {
                if let Some(t) = link.ring.back() {
                    prefetch(t);
                }
            }
            if let NodeKind::Switch(s) = port.owner() {
                prefetch(&fabric.switches[s as usize].buffer);
            }
        }
        _ => {}
    }
}
