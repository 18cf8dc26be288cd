//! The NICs' collective engine: per rank, its iteration, the children's messages in,
//! its partial reduction and its timers; the handlers of its timers and messages. The
//! protocol is in the module docs of [`super`].

use crate::base::ids::PortId;
use crate::base::units::Time;
use crate::kernel::ctx::*;
use crate::kernel::packet::{Header, Packet, Payload, FLAG_MCAST};
use crate::model::fabric::Fabric;
use crate::model::hw_collective::{reduce, CollMsg, HwKind, HwSpec, IterRecord};
use crate::model::transport::*;

#[derive(Clone, Debug, Default)]
struct RankState {
    /// The iteration it is in.
    iter: u32,
    /// It has entered `iter` (its input is in `acc`).
    entered: bool,
    /// It has combined its children's contributions into `acc` for `iter`.
    combined: bool,
    /// Its contribution to `iter` is on its way up (or it is the root).
    sent: bool,
    /// It holds the result of `iter`.
    has_result: bool,
    /// It gave up.
    failed: bool,
    /// Timeouts in `iter`.
    retries: u32,
    /// When its armed timeout fires (a timeout event at another time is stale: it was
    /// armed again since, or for an earlier iteration).
    timeout_at: Time,
    /// Per child (in order): iterations received from it (iteration i received: > i).
    got: Vec<u32>,
    /// Its partial reduction of `iter`.
    acc: Vec<u64>,
    /// When its NIC is done with the children's messages received so far (each takes
    /// `message_latency`, one after another).
    busy_until: Time,
}

/// One collective's state.
#[derive(Clone, Debug)]
pub struct HwColl {
    /// What it is.
    pub spec: HwSpec,
    ranks: Vec<RankState>,
    /// (host, rank), sorted: a multicast copy names only the collective.
    rank_of_host: Vec<(u32, u32)>,
    /// Per iteration.
    pub iters: Vec<IterRecord>,
}

/// A rank's timers. Each is an event keyed by the rank and the kind
/// ([`HwCollectives::timer_key`]), never by an allocation order, so events of one
/// instant run in the same order however the run is cut into shards.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum TimerKind {
    /// The rank enters the collective (its compute step is over).
    Enter = 0,
    /// The rank's NIC has processed its level.
    LevelDone = 1,
    /// The rank's request timed out.
    Timeout = 2,
}

/// Timer kinds a rank has room for (the low bits of its timers' keys).
const TIMER_KINDS: u32 = 4;
const KIND_BITS: u32 = TIMER_KINDS.trailing_zeros();

/// Every hardware collective of a run.
#[derive(Clone, Debug, Default)]
pub struct HwCollectives {
    /// The collectives.
    pub colls: Vec<HwColl>,
    /// Per collective, the number of its first rank among all collectives' ranks (and
    /// last, their count): a rank's timers are keyed by that number.
    rank_base: Vec<u32>,
    /// Collective packets the NICs sent.
    pub sent: u64,
    /// Collective packets the NICs received.
    pub received: u64,
    /// In a run cut into shards, what each shard's ranks account (empty otherwise).
    lanes: Vec<HwLane>,
}

/// What the ranks of one shard account in a run cut into shards: its own copy of every
/// iteration's record and its packet counts, added into the collectives' when the run
/// pauses or ends ([`HwCollectives::merge_lanes`]). Every field of a record is a least,
/// a greatest, a sum, or written by the root alone, so the sum is the serial run's.
/// (A rank's state is its host's shard's; a parent reads its children's partial
/// reductions, which a child leaves alone from sending them until it has the result,
/// at least two hops after its parent read them, so in a later window.)
#[derive(Clone, Debug, Default)]
#[repr(align(64))]
struct HwLane {
    /// Per collective, per iteration.
    iters: Vec<Vec<IterRecord>>,
    sent: u64,
    received: u64,
}

/// The record of iteration `iter` of collective `c` that a rank of shard `shard` writes
/// to: the collective's own (`iters`), or in a run cut into shards its shard's.
fn record<'a>(
    iters: &'a mut [IterRecord],
    lanes: &'a mut [HwLane],
    shard: u32,
    c: u32,
    iter: u32,
) -> &'a mut IterRecord {
    match lanes.get_mut(shard as usize) {
        Some(l) => &mut l.iters[c as usize][iter as usize],
        None => &mut iters[iter as usize],
    }
}

/// A rank's iteration is over (it has the result or gave up): counted where the run's
/// completion test looks (see `FlowLauncher::phases_left`).
fn rank_iteration_over(
    launcher: &mut crate::model::transport::launcher::FlowLauncher,
    ctx: &mut Ctx,
) {
    if launcher.host_shard.is_empty() {
        launcher.phases_left -= 1;
    } else {
        ctx.tally.phases_ended += 1;
        ctx.tally.last_phase_end = ctx.now;
    }
}

impl IterRecord {
    /// Adds what another shard's ranks recorded.
    fn add(&mut self, o: &IterRecord) {
        let least = |a: Option<Time>, b: Option<Time>| a.into_iter().chain(b).min();
        let most = |a: Option<Time>, b: Option<Time>| a.into_iter().chain(b).max();
        self.first_entry = least(self.first_entry, o.first_entry);
        self.last_entry = most(self.last_entry, o.last_entry);
        self.finish = most(self.finish, o.finish);
        self.done += o.done;
        self.failed += o.failed;
        self.timeouts += o.timeouts;
        self.verified = self.verified.or(o.verified);
    }
}

impl HwCollectives {
    /// The engine for `specs`.
    pub fn new(specs: Vec<HwSpec>) -> HwCollectives {
        let colls: Vec<HwColl> = specs
            .into_iter()
            .map(|spec| {
                let n = spec.ranks.len();
                let mut rank_of_host: Vec<(u32, u32)> = (spec.ranks.iter())
                    .enumerate()
                    .map(|(r, &h)| (h, r as u32))
                    .collect();
                rank_of_host.sort_unstable();
                let ranks = (0..n)
                    .map(|r| RankState {
                        got: vec![0; spec.tree.children[r].len()],
                        acc: Vec::with_capacity(spec.count as usize),
                        ..Default::default()
                    })
                    .collect();
                HwColl {
                    iters: vec![IterRecord::default(); spec.repeat as usize],
                    spec,
                    ranks,
                    rank_of_host,
                }
            })
            .collect();
        let mut rank_base = vec![0u32];
        for c in &colls {
            let n = c.spec.ranks.len() as u32;
            rank_base.push(rank_base.last().copied().unwrap_or(0) + n);
        }
        HwCollectives {
            colls,
            rank_base,
            ..Default::default()
        }
    }

    /// Ranks of all collectives together, at most: their timers' keys must fit an event
    /// ([`crate::base::ids::MAX_INDEX`]).
    pub const MAX_RANKS: u32 = (crate::base::ids::MAX_INDEX + 1) / TIMER_KINDS;

    /// One lane per shard of a run cut into `shards` (none for one). Call before the
    /// run starts.
    pub(crate) fn set_shards(&mut self, shards: usize) {
        let lane = || HwLane {
            iters: (self.colls.iter()).map(|c| c.iters.clone()).collect(),
            sent: 0,
            received: 0,
        };
        self.lanes = if shards > 1 {
            (0..shards).map(|_| lane()).collect()
        } else {
            Vec::new()
        };
    }

    /// The shards' records and counts added into the collectives' (the lanes start
    /// again from nothing).
    pub(crate) fn merge_lanes(&mut self) {
        for l in &mut self.lanes {
            for (c, iters) in self.colls.iter_mut().zip(&mut l.iters) {
                for (a, b) in c.iters.iter_mut().zip(iters.iter_mut()) {
                    a.add(b);
                    *b = IterRecord::default();
                }
            }
            self.sent += std::mem::take(&mut l.sent);
            self.received += std::mem::take(&mut l.received);
        }
    }

    /// The key of rank `r` of collective `c`'s timer of `kind`.
    fn timer_key(&self, c: u32, r: u32, kind: TimerKind) -> u32 {
        ((self.rank_base[c as usize] + r) << KIND_BITS) | kind as u32
    }

    /// The collective, rank and kind of a timer's key.
    fn of_key(&self, key: u32) -> (u32, u32, TimerKind) {
        let g = key >> KIND_BITS;
        let c = self.rank_base.partition_point(|&b| b <= g) - 1;
        let kind = match key & (TIMER_KINDS - 1) {
            0 => TimerKind::Enter,
            1 => TimerKind::LevelDone,
            _ => TimerKind::Timeout,
        };
        (c as u32, g - self.rank_base[c], kind)
    }

    /// Rank-iterations in all: each ends when the rank has the result or gives up.
    pub fn rank_iterations(&self) -> usize {
        (self.colls.iter())
            .map(|c| c.spec.ranks.len() * c.spec.repeat as usize)
            .sum()
    }

    fn timer(&self, ctx: &mut Ctx, at: Time, c: u32, r: u32, kind: TimerKind) {
        let key = self.timer_key(c, r, kind);
        ctx.queue
            .push(at, crate::kernel::events::Event::Collective(key));
    }
}

impl Nics {
    /// Schedules every rank's first entry (at the run's start), in its host's shard's
    /// queue (`ctxs`: one context, or one per shard).
    #[cold]
    #[inline(never)]
    pub(crate) fn schedule_collectives(&mut self, ctxs: &mut [Ctx]) {
        let Some(hw) = self.hw.as_mut() else { return };
        let shard_of = &self.launcher.host_shard;
        for c in 0..hw.colls.len() {
            let s = &hw.colls[c].spec;
            let (at, n) = (s.start + s.compute + s.host_overhead, s.ranks.len() as u32);
            for rank in 0..n {
                let host = s.ranks[rank as usize] as usize;
                let shard = shard_of.get(host).map_or(0, |&x| x as usize);
                hw.timer(&mut ctxs[shard], at, c as u32, rank, TimerKind::Enter);
            }
        }
    }

    /// A collective timer fired. (Out of line: the event loop of runs without
    /// collectives keeps its code.)
    #[cold]
    #[inline(never)]
    pub(crate) fn on_collective_timer(&mut self, ctx: &mut Ctx, fabric: &mut Fabric, i: u32) {
        let hw = self
            .hw
            .as_mut()
            .expect("collective timers need collectives");
        let (c, r, kind) = hw.of_key(i);
        let st = &hw.colls[c as usize].ranks[r as usize];
        // A rank has one timer of each kind pending at a time but timeouts (armed again
        // before the last fired): only the one armed last counts. An entry and a level
        // are only ever pending for the rank's current iteration.
        if st.failed || (kind == TimerKind::Timeout && st.timeout_at != ctx.now) {
            return;
        }
        match kind {
            TimerKind::Enter => self.coll_enter(ctx, fabric, c, r),
            TimerKind::LevelDone => self.coll_level_done(ctx, fabric, c, r),
            TimerKind::Timeout => self.coll_timeout(ctx, fabric, c, r),
        }
    }

    fn coll_enter(&mut self, ctx: &mut Ctx, fabric: &mut Fabric, c: u32, r: u32) {
        let hw = self.hw.as_mut().expect("collectives");
        let coll = &mut hw.colls[c as usize];
        let iter = coll.ranks[r as usize].iter;
        let input = coll.spec.input(r, iter);
        let st = &mut coll.ranks[r as usize];
        st.entered = true;
        st.acc.clear();
        st.acc.extend_from_slice(&input);
        // Children's messages that came in before this iteration began are processed now.
        let early = st.got.iter().filter(|&&g| g > iter).count() as u64;
        st.busy_until = ctx.now + early * coll.spec.message_latency;
        // The call began a host overhead before the NIC has the request.
        let call = ctx.now - coll.spec.host_overhead;
        let rec = record(&mut coll.iters, &mut hw.lanes, ctx.shard, c, iter);
        rec.first_entry.get_or_insert(call);
        rec.last_entry = Some(call);
        ctx.tally.last_progress = ctx.now;
        // Waiting for children counts too: a child that gave up must not hold its
        // parent forever.
        if coll.spec.tree.parent[r as usize].is_some()
            || !coll.spec.tree.children[r as usize].is_empty()
        {
            self.coll_arm_timeout(ctx, c, r);
        }
        self.coll_try_combine(ctx, fabric, c, r);
    }

    /// Combines once the rank has entered and every child's contribution is in.
    fn coll_try_combine(&mut self, ctx: &mut Ctx, fabric: &mut Fabric, c: u32, r: u32) {
        let hw = self.hw.as_mut().expect("collectives");
        let coll = &mut hw.colls[c as usize];
        let st = &coll.ranks[r as usize];
        let iter = st.iter;
        if !st.entered || st.combined || st.got.iter().any(|&g| g <= iter) {
            return;
        }
        let (op, t) = (coll.spec.op, coll.spec.dtype);
        if coll.spec.kind == HwKind::Allreduce {
            // In child order, whatever order they came in (a fixed order of additions).
            let mut acc = std::mem::take(&mut coll.ranks[r as usize].acc);
            for &ch in &coll.spec.tree.children[r as usize] {
                op.combine(t, &mut acc, &coll.ranks[ch as usize].acc);
            }
            coll.ranks[r as usize].acc = acc;
        }
        coll.ranks[r as usize].combined = true;
        let leaf = coll.spec.tree.children[r as usize].is_empty();
        if leaf {
            self.coll_level_done(ctx, fabric, c, r);
        } else {
            let ready = ctx.now.max(coll.ranks[r as usize].busy_until);
            let at = ready + coll.spec.level_latency;
            hw.timer(ctx, at, c, r, TimerKind::LevelDone);
        }
    }

    /// The rank's level is processed: up to the parent, or at the root the result.
    fn coll_level_done(&mut self, ctx: &mut Ctx, fabric: &mut Fabric, c: u32, r: u32) {
        let hw = self.hw.as_mut().expect("collectives");
        let coll = &mut hw.colls[c as usize];
        let st = &mut coll.ranks[r as usize];
        st.sent = true;
        let iter = st.iter;
        match coll.spec.tree.parent[r as usize] {
            Some(p) => {
                self.coll_send(ctx, fabric, c, r, Some(p), CollMsg::Up, iter);
                self.coll_arm_timeout(ctx, c, r);
            }
            None => {
                // The result the root sends down: what every rank receives.
                let res: &[u64] = match coll.spec.kind {
                    HwKind::Barrier => &[],
                    HwKind::Allreduce | HwKind::Bcast => &coll.ranks[r as usize].acc,
                };
                let want = coll.spec.expected(iter);
                let ok = match coll.spec.kind {
                    HwKind::Allreduce => {
                        let n = coll.spec.ranks.len() as u32;
                        let input = |q: u32| coll.spec.input(q, iter);
                        let direct =
                            reduce::sequential_fold(coll.spec.op, coll.spec.dtype, n, &input);
                        let mag = reduce::magnitudes(coll.spec.dtype, n, res.len(), &input);
                        res == want
                            && reduce::agrees(coll.spec.op, coll.spec.dtype, res, &direct, &mag, n)
                    }
                    _ => res == want,
                };
                record(&mut coll.iters, &mut hw.lanes, ctx.shard, c, iter).verified = Some(ok);
                let multicast = coll.spec.multicast;
                let host = coll.spec.ranks[r as usize];
                let local: Vec<u32> = (coll.rank_of_host.iter())
                    .filter(|&&(h, q)| h == host && q != r)
                    .map(|&(_, q)| q)
                    .collect();
                if multicast {
                    self.coll_send(ctx, fabric, c, r, None, CollMsg::Result, iter);
                    // The other ranks of the root's NIC have it at once.
                    for q in local {
                        self.coll_deliver(ctx, fabric, c, r, q, CollMsg::Result, iter);
                    }
                }
                self.coll_got_result(ctx, fabric, c, r, iter);
            }
        }
    }

    fn coll_arm_timeout(&mut self, ctx: &mut Ctx, c: u32, r: u32) {
        let hw = self.hw.as_mut().expect("collectives");
        let at = ctx.now + hw.colls[c as usize].spec.timeout;
        hw.colls[c as usize].ranks[r as usize].timeout_at = at;
        hw.timer(ctx, at, c, r, TimerKind::Timeout);
    }

    fn coll_timeout(&mut self, ctx: &mut Ctx, fabric: &mut Fabric, c: u32, r: u32) {
        let hw = self.hw.as_mut().expect("collectives");
        let coll = &mut hw.colls[c as usize];
        let st = &mut coll.ranks[r as usize];
        if st.has_result {
            return;
        }
        let iter = st.iter;
        let rec = record(&mut coll.iters, &mut hw.lanes, ctx.shard, c, iter);
        rec.timeouts += 1;
        if st.retries >= coll.spec.retries {
            st.failed = true;
            rec.failed += 1;
            rank_iteration_over(&mut self.launcher, ctx);
            return;
        }
        st.retries += 1;
        // Sent: ask again (the request or the result got lost). Not sent yet: a child is
        // late; wait again.
        if st.sent {
            let p =
                coll.spec.tree.parent[r as usize].expect("the root has the result once it sent");
            self.coll_send(ctx, fabric, c, r, Some(p), CollMsg::Up, iter);
        }
        self.coll_arm_timeout(ctx, c, r);
    }

    /// Rank `r` has the result of `iter`: record it, pass it down (unicast mode), and go
    /// on to the next iteration.
    fn coll_got_result(&mut self, ctx: &mut Ctx, fabric: &mut Fabric, c: u32, r: u32, iter: u32) {
        let hw = self.hw.as_mut().expect("collectives");
        let coll = &mut hw.colls[c as usize];
        let st = &mut coll.ranks[r as usize];
        st.has_result = true;
        // The call returns a host overhead after the NIC has the result.
        let ret = ctx.now + coll.spec.host_overhead;
        let rec = record(&mut coll.iters, &mut hw.lanes, ctx.shard, c, iter);
        rec.done += 1;
        rec.finish = Some(rec.finish.map_or(ret, |f| f.max(ret)));
        ctx.tally.last_progress = ctx.now;
        rank_iteration_over(&mut self.launcher, ctx);
        if !coll.spec.multicast {
            let children = coll.spec.tree.children[r as usize].clone();
            for ch in children {
                self.coll_send(ctx, fabric, c, r, Some(ch), CollMsg::Result, iter);
            }
        }
        let hw = self.hw.as_mut().expect("collectives");
        let coll = &mut hw.colls[c as usize];
        if iter + 1 < coll.spec.repeat {
            let st = &mut coll.ranks[r as usize];
            *st = RankState {
                iter: iter + 1,
                got: std::mem::take(&mut st.got),
                acc: std::mem::take(&mut st.acc),
                ..Default::default()
            };
            let at = ctx.now + 2 * coll.spec.host_overhead + coll.spec.compute;
            hw.timer(ctx, at, c, r, TimerKind::Enter);
        }
    }

    /// Sends a collective message from rank `r` to rank `to`, or (`None`) the result by
    /// multicast to every member NIC. A message between two ranks of one NIC never
    /// leaves it: it is delivered at once.
    #[allow(clippy::too_many_arguments)]
    fn coll_send(
        &mut self,
        ctx: &mut Ctx,
        fabric: &mut Fabric,
        c: u32,
        r: u32,
        to: Option<u32>,
        msg: CollMsg,
        iter: u32,
    ) {
        let hw = self.hw.as_mut().expect("collectives");
        let spec = &hw.colls[c as usize].spec;
        let src = spec.ranks[r as usize];
        if let Some(q) = to {
            if spec.ranks[q as usize] == src {
                return self.coll_deliver(ctx, fabric, c, r, q, msg, iter);
            }
        }
        match hw.lanes.get_mut(ctx.shard as usize) {
            Some(l) => l.sent += 1,
            None => hw.sent += 1,
        }
        let bytes = match msg {
            CollMsg::Up => spec.up_bytes(),
            CollMsg::Result => spec.down_bytes(),
        };
        let port = PortId(self.hosts[src as usize].port.0 + spec.plane);
        // The payload names the rank the message is for: up, the sender (its parent
        // takes it); down by unicast, the receiver; by multicast, every rank of the NIC.
        let (dst, hash, flags, rank) = match to {
            Some(q) => (
                spec.ranks[q as usize],
                crate::model::routing::ecmp::mix32(c.wrapping_mul(0x9e37_79b9) ^ r),
                0,
                if msg == CollMsg::Up { r } else { q },
            ),
            // The group is the collective; the destination stays a real host (the root).
            None => (src, c, FLAG_MCAST, EVERY_RANK),
        };
        let p = Packet::new(
            Payload::Collective {
                coll: c,
                iter,
                rank,
                msg,
                src,
            },
            ctx.now,
        );
        let h = Header {
            dst,
            hash,
            wire: (ctx.params.header + bytes) as u32,
            prio: ctx.params.ctrl_prio,
            ecn: 0,
            mark: 0,
            flags,
        };
        let d = ctx.arena.alloc_desc(p, h);
        let prio = ctx.params.ctrl_prio as usize;
        let (port_ref, pool) = fabric.port_and_pool(port.idx());
        port_ref.enqueue(pool, prio, d, ctx.now);
        self.try_transmit::<true>(ctx, fabric, src, port);
    }

    /// A collective packet reached NIC `host`.
    #[cold]
    #[inline(never)]
    pub(crate) fn on_collective_packet(
        &mut self,
        ctx: &mut Ctx,
        fabric: &mut Fabric,
        host: u32,
        p: &Packet,
    ) {
        let Payload::Collective {
            coll: c,
            iter,
            rank,
            msg,
            ..
        } = p.payload
        else {
            unreachable!("a collective payload")
        };
        let hw = self
            .hw
            .as_mut()
            .expect("collective packets need collectives");
        match hw.lanes.get_mut(ctx.shard as usize) {
            Some(l) => l.received += 1,
            None => hw.received += 1,
        }
        let coll = &hw.colls[c as usize];
        match (msg, rank) {
            (CollMsg::Up, from) => {
                let me = coll.spec.tree.parent[from as usize].expect("an up message has a parent");
                self.coll_deliver(ctx, fabric, c, from, me, msg, iter);
            }
            (CollMsg::Result, EVERY_RANK) => {
                let (a, b) = (
                    coll.rank_of_host.partition_point(|&(h, _)| h < host),
                    coll.rank_of_host.partition_point(|&(h, _)| h <= host),
                );
                for i in a..b {
                    let me =
                        self.hw.as_ref().expect("collectives").colls[c as usize].rank_of_host[i].1;
                    self.coll_deliver(ctx, fabric, c, EVERY_RANK, me, msg, iter);
                }
            }
            (CollMsg::Result, me) => self.coll_deliver(ctx, fabric, c, EVERY_RANK, me, msg, iter),
        }
    }

    /// Message `msg` of iteration `iter` from rank `from` reached rank `me`'s engine.
    #[allow(clippy::too_many_arguments)]
    fn coll_deliver(
        &mut self,
        ctx: &mut Ctx,
        fabric: &mut Fabric,
        c: u32,
        from: u32,
        me: u32,
        msg: CollMsg,
        iter: u32,
    ) {
        let hw = self.hw.as_mut().expect("collectives");
        let coll = &mut hw.colls[c as usize];
        let st = &mut coll.ranks[me as usize];
        if st.failed {
            return;
        }
        match msg {
            CollMsg::Up => {
                let k = coll.spec.tree.children[me as usize]
                    .binary_search(&from)
                    .expect("the sender is a child");
                if st.got[k] <= iter {
                    st.got[k] = iter + 1;
                    if st.iter == iter {
                        st.busy_until = ctx.now.max(st.busy_until) + coll.spec.message_latency;
                    }
                    if st.iter == iter {
                        self.coll_try_combine(ctx, fabric, c, me);
                    }
                } else if st.iter > iter || st.has_result {
                    // A repeated request for a result this rank has: answer it.
                    self.coll_send(ctx, fabric, c, me, Some(from), CollMsg::Result, iter);
                }
            }
            CollMsg::Result => {
                if st.iter == iter && !st.has_result && me != coll.spec.tree.root {
                    self.coll_got_result(ctx, fabric, c, me, iter);
                }
            }
        }
    }
}

/// The rank field of a multicast result: for every rank of the receiving NIC.
const EVERY_RANK: u32 = u32::MAX;
