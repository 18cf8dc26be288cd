//! What one shard hands another in a window (frames, credit returns, dependency
//! releases, with a frame its INT records and PKTC tag), and its delivery at the barrier.

use super::*;
use crate::kernel::ctx::{CreditHandoff, Handoff};
use crate::kernel::packet::Slot;

impl Ctx {
    /// Hands a frame sent on cut link `link` to shard `to - 1` (`Link::cut_to`). The
    /// frame keeps its slot here until the window ends ([`Self::seal_handoffs`]), where
    /// the slots of all the frames handed over are copied at once: read as each frame
    /// leaves, every slot (cold since the packet came in) would be a wait of its own.
    // (Only ports on cut links reach it, through the transmit's out-of-line path.)
    #[inline]
    pub(crate) fn hand_off(
        &mut self,
        to: u16,
        link: LinkId,
        arrival: Time,
        desc: Desc,
        int: Option<IntStack>,
    ) {
        let out = &mut self.outbox[to as usize - 1];
        if let Some(st) = int {
            out.ints.push(st);
        }
        if self.arena.keeps_tags() {
            out.tags.push(self.arena.gse_tag(desc.id));
        }
        out.frames.push(Handoff {
            link,
            arrival,
            desc,
            slot: Slot::UNSET,
        });
    }

    /// Copies the slot of every frame handed over since the last call into its hand-off
    /// and frees it here. Called by the shard's own thread when its window ends, before
    /// the barrier after which other shards read the outboxes. The slots are loaded a
    /// few frames ahead, so that their misses overlap.
    pub(crate) fn seal_handoffs(&mut self) {
        const AHEAD: usize = 8;
        let arena = &mut self.arena;
        for out in self.outbox.iter_mut() {
            let frames = &mut out.frames[out.sealed..];
            for i in 0..frames.len() {
                if let Some(h) = frames.get(i + AHEAD) {
                    crate::base::prefetch::prefetch(arena.slot_of(h.desc.id));
                }
                let h = &mut frames[i];
                h.slot = *arena.slot_of(h.desc.id);
                arena.release(h.desc.id);
            }
            out.sealed = out.frames.len();
        }
    }

    /// Hands shard `to` the release of dependency node `v` at `at` (at least a crossing
    /// grid from now: checked when the run was cut).
    #[cold]
    pub(crate) fn hand_off_release(&mut self, to: u32, at: Time, v: u32) {
        self.outbox[to as usize].releases.push((at, v));
    }

    /// Hands a credit return for egress `port` of shard `to - 1` over (it arrives at
    /// least a lookahead later: the grid counts return delays).
    #[cold]
    pub(crate) fn hand_off_credit(
        &mut self,
        to: u16,
        port: PortId,
        arrival: Time,
        signal: CreditSignal,
    ) {
        self.outbox[to as usize - 1].credits.push(CreditHandoff {
            port,
            arrival,
            signal,
        });
    }

    /// A shard's context: its own clock, queue, arena, counters and tallies.
    pub(super) fn for_shard(
        shard: u32,
        shards: usize,
        params: &RunParams,
        (horizon, gap): (Time, Time),
        lookahead: bool,
        tags: bool,
    ) -> Ctx {
        let mut arena = PacketArena::new();
        if tags {
            arena.keep_tags();
        }
        let mut queue = EventQueue::with_capacity(1024);
        // A shard holds about its share of the run's events, so they come as many times
        // further apart. With the serial width, most slots held one event, and moving to
        // the next slot cost more than the event. The order of events does not depend on
        // the width.
        queue.set_slots(horizon, gap.saturating_mul(shards as u64));
        queue.set_lookahead(lookahead);
        let mut ctx = Ctx::new(params.clone(), queue, arena);
        ctx.shard = shard;
        ctx.outbox = vec![Outbox::default(); shards];
        ctx
    }
}

/// Puts every frame handed over in the last window on its link's ring, in the shard at
/// the far end.
pub(super) fn deliver(ctxs: &mut [Ctx], fabric: &mut Fabric, nics: &mut Nics) {
    for c in ctxs.iter_mut() {
        c.seal_handoffs();
    }
    for to in 0..ctxs.len() {
        for from in 0..ctxs.len() {
            let mut msgs = std::mem::take(&mut ctxs[from].outbox[to]);
            receive(&mut ctxs[to], fabric, nics, &msgs);
            msgs.clear();
            ctxs[from].outbox[to] = msgs;
        }
    }
}

/// Shard `ctx` takes what another handed to it: frames go on their links' rings, credit
/// returns on their ports' rings of returns, releases among its timers, as the sender
/// would have put them itself.
pub(super) fn receive(ctx: &mut Ctx, fabric: &mut Fabric, nics: &mut Nics, msgs: &Outbox) {
    ctx.counters.handoffs += msgs.frames.len() as u64;
    let mut ints = msgs.ints.iter();
    let mut tags = msgs.tags.iter();
    for h in &msgs.frames {
        let mut d = h.desc;
        d.id = ctx.arena.alloc_stored(h.slot);
        if let Some(&(tag, gsp)) = tags.next() {
            ctx.arena.set_tag(d.id, tag, gsp);
        }
        if d.flags & crate::kernel::packet::FLAG_INT != 0 {
            let st = ints
                .next()
                .expect("an INT frame handed over with its records");
            *fabric.telemetry.int[ctx.shard as usize].slot(d.id) = *st;
        }
        if fabric.links[h.link].put(h.arrival, d) {
            ctx.queue.push(h.arrival, Event::LinkArrive(h.link));
        }
    }
    for c in &msgs.credits {
        fabric.credit_arrives(ctx, c.port, c.arrival, c.signal);
    }
    for &(at, v) in &msgs.releases {
        nics.take_release(ctx, fabric, at, v);
    }
}
