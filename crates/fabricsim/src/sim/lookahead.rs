//! Look-ahead prefetching for large models: while one event runs, start loading what the
//! next few events' handlers will read, so their cache misses overlap. It reads the event
//! codes the queue holds ([`crate::kernel::events::code`]) and never changes a result.

use crate::base::trusted::Trusted;
use crate::kernel::packet::FLAG_ROUTED;
use crate::model::fabric::NodeKind;

use crate::sim::*;

/// Starts loading what the next three events' handlers will read, one dependent step
/// per event of look-ahead, so that each step reads only lines the previous step
/// (one event earlier) started loading:
/// - 3 ahead: the link, or the port;
/// - 2 ahead: the link's first packets, or the port's queue, its queue-length books and
///   its link;
/// - 1 ahead: for an arrival at a switch, the egress port, its books, its queue, its link
///   and the ingress counter (the egress was chosen upstream, see `route_ahead`), at a
///   host the packet's slot; for a port, its head packet, its link's tail and its
///   switch's buffer.
///
/// Each step earns its instructions: on small pages, without the steps 2 ahead and a
/// step for the next event (36 instructions an event at k = 16) the count fell 8 % and
/// the wall time at k = 32 rose 14 %. That step for the next event alone (a port's head
/// packet's ingress counter and its ECN marker, 15 instructions) does not earn them on
/// huge pages: without it, wall ratios of 0.96 to 1.02 at k = 16 and 0.99 at k = 32
/// (medians of interleaved pairs, `docs/design/performance.md`).
#[inline(always)]
pub(crate) fn prefetch_ahead(ctx: &Ctx, fabric: &Fabric) {
    use crate::base::prefetch::{prefetch, prefetch_field, prefetch_item, prefetch_next};
    use crate::model::fabric::port::{Port, PrioQueue, BOOKS_OFFSET};
    use crate::model::fabric::switch::Switch;
    let ahead = ctx.queue.peek_codes();
    match kind(ahead[3]) {
        Ahead::Link(l) => prefetch_item(&fabric.links, l as usize),
        Ahead::Port(p) => prefetch_item(&fabric.ports, p as usize),
        Ahead::Other => {}
    }
    match kind(ahead[2]) {
        Ahead::Link(l) => {
            // The head and the entry after it (next in memory unless the ring wraps
            // there: then a line for nothing, cheaper than the ring's index arithmetic).
            if let Some(head) = fabric.links.at(l as usize).ring.front() {
                prefetch(head);
                prefetch_next(head);
            }
        }
        Ahead::Port(p) => {
            let port = fabric.ports.at(p as usize);
            if port.nonempty != 0 {
                let prio = 7 - port.nonempty.leading_zeros() as usize;
                prefetch(&port.queues[prio]);
                prefetch_field(&fabric.ports, p as usize, BOOKS_OFFSET);
            }
            prefetch_item(&fabric.links, p as usize);
        }
        Ahead::Other => {}
    }
    match kind(ahead[1]) {
        Ahead::Link(l) => {
            let link = fabric.links.at(l as usize);
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
                        if let Some(e) = egress {
                            // Addresses only: no bounds check (a wrong guess loads a line
                            // for nothing).
                            let (e, prio) = (e as usize, d.prio() as usize & 7);
                            prefetch_item(&fabric.ports, e);
                            prefetch_field(&fabric.ports, e, BOOKS_OFFSET);
                            // Its link, which the switch reads to send the packet on.
                            prefetch_item(&fabric.links, e);
                            prefetch_field(
                                &fabric.ports,
                                e,
                                std::mem::offset_of!(Port, queues)
                                    + prio * std::mem::size_of::<PrioQueue>(),
                            );
                            let sw = fabric.switches.at(s as usize);
                            sw.buffer
                                .prefetch_counter(sw.ports.local(link.to_port), d.prio() as usize);
                        }
                    }
                }
            }
        }
        Ahead::Port(p) => {
            let port = fabric.ports.at(p as usize);
            if port.nonempty != 0 {
                let prio = 7 - port.nonempty.leading_zeros() as usize;
                if let Some(d) = port.queues[prio].front(fabric.queue_pool(p as usize)) {
                    prefetch(d);
                }
            }
            // (A cut link's ring belongs to the shard at its far end.)
            let link = fabric.links.at(p as usize);
            if link.cut_to == 0 {
                if let Some(t) = link.ring.back() {
                    prefetch(t);
                }
            }
            if let NodeKind::Switch(s) = port.owner() {
                prefetch_field(
                    &fabric.switches,
                    s as usize,
                    std::mem::offset_of!(Switch, buffer),
                );
            }
        }
        Ahead::Other => {}
    }
}

/// What an event ahead is, for [`prefetch_ahead`]: a link's arrival or a port's wakeup
/// with its index, or another event.
enum Ahead {
    Link(u32),
    Port(u32),
    Other,
}

/// The [`Ahead`] of a code from `peek_codes`: a code of kind `k` is `k << IDX_BITS`
/// plus its index, so one subtraction and one comparison tell each kind and give the
/// index (a shift and a mask, then a second mask for the index, cost more).
#[inline(always)]
fn kind(code: u32) -> Ahead {
    use crate::base::ids::{IDX_BITS, MAX_INDEX};
    use crate::kernel::events::code::{LINK_ARRIVE, PORT_WAKE};
    let l = code.wrapping_sub(LINK_ARRIVE << IDX_BITS);
    if l <= MAX_INDEX {
        return Ahead::Link(l);
    }
    let p = l.wrapping_sub((PORT_WAKE - LINK_ARRIVE) << IDX_BITS);
    if p <= MAX_INDEX {
        Ahead::Port(p)
    } else {
        Ahead::Other
    }
}
