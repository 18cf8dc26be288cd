//! Credit-based link-level flow control with virtual channels and virtual cut-through,
//! as document 003 describes the Sunway exascale prototype's router (SWHRC): "4 virtual
//! channels per port; input buffers with private + shared credits; virtual cut-through
//! with dynamic switch to store-and-forward; credit-based flow control (credit unit:
//! block of 4 x 16 B flits)". What the document does not say is reconstructed and marked
//! \[recon\]; every such constant is a field of `[fabric.credit]` ([`CreditCfg`]).
//!
//! # Credits
//! Every switch input port has a buffer per virtual channel (VC): `private` bytes for each
//! VC and `shared` bytes per port that any of its VCs may use. The buffer is counted in
//! credits of one block (`flit_bytes x flits_per_block`, 64 B by default); a packet of
//! `w` wire bytes takes `ceil(w / block)` credits. The egress port upstream of that input
//! (a switch port or a NIC port) keeps the count of free credits per VC and:
//! - starts a packet of VC v only when the free credits of v cover the whole packet
//!   (virtual cut-through forwards whole packets, so the downstream must be able to
//!   store all of it), and takes them when the transmission starts;
//! - gets them back when the packet leaves the downstream buffer (the seam's
//!   `after_release` hook, at the start of its transmission out of that switch, when the
//!   buffer model frees a packet), one link propagation delay later: a credit return is
//!   an [`Event::CreditReturn`] naming the upstream port, whose returns in flight wait in
//!   a ring like a link's packets. \[recon\] Credits ride in link-level control symbols and
//!   take no data bandwidth, and a packet's credits return as one batch, not block by
//!   block as its blocks leave.
//!
//! **Shared credits** \[recon\]. A VC spends its private credits first and takes what it
//! still needs from the port's shared pool, first come first served; a return refills the
//! VC's private credits first and gives the rest back to the pool. Both ends apply the
//! same rule to the same count of blocks outstanding per VC, so neither needs to tag a
//! packet with where its credits came from: with `u` blocks of a VC outstanding, the VC
//! holds `min(u, private)` private credits and `max(0, u - private)` shared ones. The
//! private part must hold one maximal packet, so that a VC can always move a packet on
//! its own credits however the others use the pool: otherwise one VC holding the shared
//! pool could block another, and the VCs would no longer be independent (checked).
//!
//! **Ports facing a NIC** need no credits: the NIC is a sink that drains at line rate.
//! NIC ports obey the credits of the switch input they feed. A switch's buffer is its
//! input buffers (`fabric.buffer` does not apply), so it never drops; a packet it drops
//! anyway (no route) gives its credits back.
//!
//! **Arbitration** \[recon\]. Among the VCs whose head packet has its credits, an egress
//! serves the highest VC index first (strict priority): the control VCs (ACKs, NACKs,
//! CNPs) come above the data VCs, and within a class the escape levels above the normal
//! one, so that what frees resources drains first. The document gives no arbiter; strict
//! priority is what the existing egress does for priorities, and a round robin among data
//! VCs matters only once several data levels are busy at once.
//!
//! # Virtual channels and deadlock freedom
//! A packet's VC travels in its priority field (`Desc::prio`), so the egress queues, the
//! buffer counters and the credits are all per VC. `vcs` VCs form two classes (data, and
//! control: the transport's ACKs, NACKs and CNPs) of `vcs / 2` levels each (one class of
//! one level when `vcs = 1`); VC = class x levels + level ([`VcLayout`]). With the default
//! 4: VC 0 data, VC 1 data after a detour, VC 2 control, VC 3 control after a detour.
//! The transport's data and control priorities are replaced by the level-0 VCs of the
//! two classes. \[recon\]
//!
//! Up/down routing in a fat tree is deadlock-free on one VC: a packet climbs, then
//! descends, so the channel dependency graph orders links by (direction, level) and has
//! no cycle. The control class on VCs of its own keeps the ACK stream independent of the
//! data it acknowledges (no message-dependent deadlock). A route that breaks up/down (the
//! generalized fat tree's detour spine -> sibling leaf -> leaf when a down link failed)
//! must move the packet one level up at the switch that takes the detour, with
//! [`raise_vc`]: channels are then ordered by (level, direction), still without a cycle.
//! The rule is one raise per non-up/down turn; a packet at its class's top level cannot
//! take another detour ([`raise_vc`] returns false). The credits the packet holds in the
//! switch's input stay those of its arrival VC ([`Desc::arrival_vc`], kept in the
//! descriptor until it leaves); the next link's credits are those of the raised VC.
//!
//! # Virtual cut-through
//! With `cut_through` a switch may start forwarding a packet before it has fully arrived,
//! if its output is free and credits allow: the router latency (`fabric.switch_latency`,
//! reused) is pin to pin, from the packet's first bit in to its first bit out, the way
//! router latencies are quoted (taking in and decoding the head block is part of it), so
//! the packet may leave a router latency after its head arrived, and no sooner than its
//! first block is in (when the latency is shorter than a block's serialization). One
//! packet crossing h switches thus takes h x router latency + one full serialization +
//! the propagation of every link, where store-and-forward takes h x router latency + h + 1
//! full serializations. The link toward a cut-through switch delivers the packet at
//! transmission start + max(router latency, first block) + propagation; a NIC receives a
//! packet at its tail. A packet never finishes leaving before its tail has arrived: that
//! holds because of the switch rule.
//!
//! **Switch to store-and-forward** \[recon\]. The document says the router switches
//! between VCT and store-and-forward dynamically, adapting to link bandwidth changes and
//! not wasting bandwidth on bad packets. The rule here is per input link: a switch cuts
//! the packets of an input through only when that input is at least as fast as every port
//! of the switch (serialization rate no lower, link-security bytes no more); otherwise a
//! packet could reach a faster output and run out of bytes to send, so it is stored and
//! forwarded. The choice is made when the upstream starts sending (a router decides at
//! the head, knowing its output; this rule needs only the switch's fastest port, so it
//! agrees whenever a switch's ports share a rate, the Sunway case, and is conservative
//! otherwise). [`Fabric::refresh_cut_through`] re-applies it after a rate change (lane
//! degrade); a link error model may force store-and-forward on a link the same way.

pub mod config;
pub mod presense;

pub use config::CreditCfg;

use crate::base::ids::PortId;
use crate::base::units::Time;
use crate::kernel::ctx::Ctx;
use crate::kernel::events::Event;
pub use crate::kernel::packet::CreditSignal;
use crate::kernel::packet::Desc;
use crate::model::fabric::buffer::SharedBuffer;
use crate::model::fabric::port::{Port, QueuePool, N_PRIO};
use crate::model::fabric::Fabric;
use crate::model::fabric::NodeKind;
use std::collections::VecDeque;

/// The virtual channels: two classes (data, control) of `levels` levels each, or one VC.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VcLayout {
    /// VCs per port.
    pub vcs: u8,
    /// Levels per class.
    pub levels: u8,
}

impl VcLayout {
    /// The layout of `vcs` VCs (1, or even).
    pub fn new(vcs: u8) -> VcLayout {
        let classes = if vcs >= 2 { 2 } else { 1 };
        VcLayout {
            vcs,
            levels: (vcs / classes).max(1),
        }
    }
    /// The VC of data packets leaving a NIC (level 0 of the data class).
    pub fn data(self) -> u8 {
        0
    }
    /// The VC of ACKs, NACKs and CNPs leaving a NIC (level 0 of the control class).
    pub fn control(self) -> u8 {
        if self.vcs >= 2 {
            self.levels
        } else {
            0
        }
    }
    /// True when a packet on `vc` may still move one level up.
    pub fn can_raise(self, vc: u8) -> bool {
        vc % self.levels + 1 < self.levels
    }
}

/// Moves `pkt`, held by a switch, one level up in its class (a route that breaks up/down
/// order, see the module docs), remembering the VC it arrived on: the credits it holds
/// in this switch's input are that VC's. Returns false, and changes nothing, when the
/// packet is at its class's top level: the router must not take such a route then.
pub fn raise_vc(layout: VcLayout, pkt: &mut Desc) -> bool {
    if !layout.can_raise(pkt.prio()) {
        return false;
    }
    // `set_prio` keeps the arrival VC (`Desc::arrival_vc`).
    pkt.set_prio(pkt.prio() + 1);
    true
}

/// Per-port counters of credit flow control (`credits.csv`).
#[derive(Clone, Debug, Default)]
pub struct CreditStats {
    /// Time the port had packets to send and no credits for any of them.
    pub wait_ps: Time,
    /// Times it started such a wait.
    pub stalls: u64,
    /// Credits taken (blocks sent).
    pub blocks_sent: u64,
    /// Fewest free credits (private and shared) the port was left with.
    pub min_free: u32,
}

/// The credit state of one egress port: what it knows of the input buffer it feeds.
#[derive(Clone, Debug)]
pub struct CreditPort {
    /// Blocks outstanding per VC: sent and not yet returned.
    used: [u32; N_PRIO],
    /// Of these, blocks taken from the shared pool (all VCs).
    shared_used: u32,
    /// The far end is a switch: transmissions need its credits.
    tracked: bool,
    /// The far end cuts this port's packets through.
    cut: bool,
    /// Propagation delay of a credit return from the far end.
    ret_delay: Time,
    /// Credit returns on their way: (arrival, VC, blocks), oldest first.
    ring: VecDeque<(Time, u8, u32)>,
    /// Since when the port has waited for credits (`Time::MAX`: it does not).
    waiting_since: Time,
    /// Credits returned recently (congestion pre-sensing).
    released: presense::ReleaseRate,
    /// Counters.
    pub stats: CreditStats,
}

/// Credit flow control as the run uses it: the layout, the buffer sizes in credits and
/// every egress port's credit state.
#[derive(Clone, Debug)]
pub struct Credit {
    /// The VCs.
    pub layout: VcLayout,
    /// Bytes per credit.
    pub block: u32,
    /// Credits of each (input port, VC)'s private buffer.
    pub private: u32,
    /// Credits of each input port's shared buffer.
    pub shared: u32,
    cut_through: bool,
    /// Router latency, pin to pin (`fabric.switch_latency`).
    router_latency: Time,
    /// Congestion pre-sensing's time constant, when it runs.
    presense: Option<Time>,
    ports: Vec<CreditPort>,
}

impl Credit {
    /// Credit state for `ports`: a port is tracked when its peer is a switch, whose input
    /// it feeds over a cable of `prop[p]` propagation delay.
    pub fn new(cfg: &CreditCfg, ports: &[Port], prop: &[Time], router_latency: Time) -> Credit {
        let block = cfg.block();
        let (private, shared) = ((cfg.private / block) as u32, (cfg.shared / block) as u32);
        let layout = VcLayout::new(cfg.vcs as u8);
        let free = private * layout.vcs as u32 + shared;
        let mut c = Credit {
            layout,
            block: block as u32,
            private,
            shared,
            cut_through: cfg.cut_through,
            router_latency,
            presense: cfg.presense.then_some(cfg.presense_window),
            ports: (ports.iter().zip(prop))
                .map(|(p, &d)| CreditPort {
                    used: [0; N_PRIO],
                    shared_used: 0,
                    tracked: matches!(ports[p.peer.idx()].owner(), NodeKind::Switch(_)),
                    cut: false,
                    ret_delay: d,
                    ring: VecDeque::new(),
                    waiting_since: Time::MAX,
                    released: Default::default(),
                    stats: CreditStats {
                        min_free: free,
                        ..Default::default()
                    },
                })
                .collect(),
        };
        c.refresh_cut_through(ports);
        c
    }

    /// Applies the cut-through rule (module docs) to every port, for the ports' current
    /// rates.
    pub fn refresh_cut_through(&mut self, ports: &[Port]) {
        for (i, p) in ports.iter().enumerate() {
            let peer = &ports[p.peer.idx()];
            let cut = self.cut_through
                && self.ports[i].tracked
                && (peer_switch_ports(ports, p.peer.idx()))
                    .all(|q| q.ser_rate.0 <= p.ser_rate.0 && q.sec_extra >= p.sec_extra);
            debug_assert!(!cut || matches!(peer.owner(), NodeKind::Switch(_)));
            self.ports[i].cut = cut;
        }
    }

    /// Credits of a packet of `wire` bytes.
    #[inline(always)]
    pub fn blocks(&self, wire: u64) -> u32 {
        wire.div_ceil(self.block as u64) as u32
    }

    /// Free credits of `vc` at port `p`: its private ones and the shared pool's.
    #[inline(always)]
    fn free(&self, c: &CreditPort, vc: usize) -> u32 {
        self.private.saturating_sub(c.used[vc]) + (self.shared - c.shared_used)
    }

    /// True when port `p` may start a packet of `wire` bytes on `vc` now.
    #[inline(always)]
    pub fn fits(&self, p: usize, vc: usize, wire: u64) -> bool {
        let c = &self.ports[p];
        !c.tracked || self.free(c, vc) >= self.blocks(wire)
    }

    /// The queue port `p` (state `port`) serves next: the highest VC whose head packet
    /// has its credits. Starts a credit wait when packets are queued and none may go.
    #[inline]
    pub fn next_queue(
        &mut self,
        port: &Port,
        pool: &QueuePool,
        p: usize,
        now: Time,
    ) -> Option<usize> {
        let mut m = port.nonempty;
        while m != 0 {
            let vc = 7 - m.leading_zeros() as usize;
            let head = port.queues[vc].front(pool).expect("a non-empty queue");
            if self.fits(p, vc, head.wire() as u64) {
                return Some(vc);
            }
            m &= !(1 << vc);
        }
        if port.nonempty != 0 {
            self.start_wait(p, now);
        }
        None
    }

    /// Port `p` has something to send and no credits for it.
    #[inline]
    pub fn start_wait(&mut self, p: usize, now: Time) {
        let c = &mut self.ports[p];
        if c.waiting_since == Time::MAX {
            c.waiting_since = now;
            c.stats.stalls += 1;
        }
    }

    /// Port `p` (state `port`) starts sending a packet of `wire` bytes on `vc` at `now`:
    /// the packet takes its credits (the caller clears a raised VC's arrival bits: the
    /// next switch sees it arrive on the raised VC). Returns the time from the start of
    /// the transmission to the packet's being at the far end before the link's delay:
    /// its head block under cut-through, else all of it (`ser`).
    // Out of line: only credit runs call it, and the transmit path of the others keeps
    // its registers.
    #[inline(never)]
    pub fn on_transmit(
        &mut self,
        p: usize,
        port: &Port,
        vc: u8,
        wire: u32,
        now: Time,
        ser: Time,
    ) -> Time {
        let (block, private, shared) = (self.block as u64, self.private, self.shared);
        let vcs = self.layout.vcs as usize;
        let blocks = self.blocks(wire as u64);
        let c = &mut self.ports[p];
        if c.waiting_since != Time::MAX {
            c.stats.wait_ps += now - c.waiting_since;
            c.waiting_since = Time::MAX;
        }
        if !c.tracked {
            return ser;
        }
        let vc = vc as usize;
        let private_free = private.saturating_sub(c.used[vc]);
        debug_assert!(
            private_free + (shared - c.shared_used) >= blocks,
            "port {p} VC {vc}: {blocks} credits asked, {} free",
            private_free + (shared - c.shared_used)
        );
        c.shared_used += blocks.saturating_sub(private_free);
        c.used[vc] += blocks;
        c.stats.blocks_sent += blocks as u64;
        let free = (c.used[..vcs].iter())
            .map(|&u| private.saturating_sub(u))
            .sum::<u32>()
            + (shared - c.shared_used);
        c.stats.min_free = c.stats.min_free.min(free);
        if c.cut {
            // The link's delay holds the router latency; the packet may not leave before
            // its first block is in.
            let head = port.tx_time((wire as u64 + port.sec_extra as u64).min(block));
            head.saturating_sub(self.router_latency)
        } else {
            ser
        }
    }

    /// Credits of `sig` come back to port `p`.
    #[inline]
    fn give_back(&mut self, p: usize, sig: CreditSignal) {
        let private = self.private;
        let c = &mut self.ports[p];
        let vc = sig.vc as usize;
        debug_assert!(
            c.used[vc] >= sig.blocks,
            "port {p} VC {vc}: more credits back than out"
        );
        let before = c.used[vc].saturating_sub(private);
        c.used[vc] -= sig.blocks;
        c.shared_used -= before - c.used[vc].saturating_sub(private);
    }

    /// Router latency, pin to pin.
    pub fn router_latency(&self) -> Time {
        self.router_latency
    }

    /// How long a credit return takes from the far end of port `p` back to it (the
    /// cable's propagation, without the receiving switch's latency).
    pub fn return_delay(&self, p: usize) -> Time {
        self.ports[p].ret_delay
    }

    /// Room downstream of port `p` for a packet on `vc` at `now`, as adaptive routing
    /// ranks it: its free credits, plus with congestion pre-sensing the credits returned
    /// to it recently ([`presense`]).
    pub fn room(&self, p: usize, vc: usize, now: Time) -> f64 {
        let c = &self.ports[p];
        let free = self.free(c, vc) as f64;
        match self.presense {
            Some(tau) => free + c.released.value(now, tau),
            None => free,
        }
    }

    /// True when port `p` is fed by credits and waits for them now.
    pub fn is_waiting(&self, p: usize) -> bool {
        self.ports[p].waiting_since != Time::MAX
    }

    /// The credit state of port `p`.
    pub fn port(&self, p: usize) -> &CreditPort {
        &self.ports[p]
    }

    /// Closes the credit waits still open at the end of the run.
    pub fn finish(&mut self, now: Time) {
        for c in &mut self.ports {
            if c.waiting_since != Time::MAX {
                c.stats.wait_ps += now.saturating_sub(c.waiting_since);
                c.waiting_since = now;
            }
        }
    }
}

impl CreditPort {
    /// True when the far end is a switch whose credits this port needs.
    pub fn tracked(&self) -> bool {
        self.tracked
    }
    /// True when the far end cuts this port's packets through.
    pub fn cut_through(&self) -> bool {
        self.cut
    }
    /// Blocks outstanding on `vc`.
    pub fn used(&self, vc: usize) -> u32 {
        self.used[vc]
    }
    /// Blocks of the shared pool outstanding.
    pub fn shared_used(&self) -> u32 {
        self.shared_used
    }
    /// Credit returns on their way: (arrival, VC, blocks).
    pub fn returning(&self) -> impl Iterator<Item = &(Time, u8, u32)> {
        self.ring.iter()
    }
}

/// The ports of the switch that owns port `at` (all of the node's ports).
fn peer_switch_ports(ports: &[Port], at: usize) -> impl Iterator<Item = &Port> {
    let node = ports[at].node;
    // A node's ports are contiguous: walk both ways from `at`.
    let mut lo = at;
    while lo > 0 && ports[lo - 1].node == node {
        lo -= 1;
    }
    let mut hi = at + 1;
    while hi < ports.len() && ports[hi].node == node {
        hi += 1;
    }
    ports[lo..hi].iter()
}

impl super::LinkFlowControl for Credit {
    type Signal = CreditSignal;

    /// Credits were taken upstream when the packet was sent: nothing to signal.
    #[inline(always)]
    fn after_admit(
        &self,
        _: &mut SharedBuffer,
        _: PortId,
        _: usize,
        _: usize,
    ) -> Option<CreditSignal> {
        None
    }

    /// The packet's credits go back upstream (`vc` is the VC it arrived on).
    #[inline(always)]
    fn after_release(
        &self,
        _: &mut SharedBuffer,
        _: usize,
        vc: usize,
        wire: u64,
    ) -> Option<CreditSignal> {
        Some(CreditSignal {
            vc: vc as u8,
            blocks: self.blocks(wire),
        })
    }
}

// ---- the switches' and NICs' side ------------------------------------------------

impl Fabric {
    /// The credit state, when credit flow control runs.
    #[inline(always)]
    pub fn credit(&self) -> Option<&Credit> {
        match &self.flow_control {
            super::AnyFlowControl::Credit(c) => Some(c),
            _ => None,
        }
    }

    #[inline(always)]
    pub(crate) fn credit_mut(&mut self) -> Option<&mut Credit> {
        match &mut self.flow_control {
            super::AnyFlowControl::Credit(c) => Some(c),
            _ => None,
        }
    }

    /// Sends `sig` upstream from switch ingress `in_port`: it reaches the port that feeds
    /// `in_port` one propagation delay later.
    // Kept out of line: only credit runs call it.
    #[inline(never)]
    pub(crate) fn send_credit(&mut self, ctx: &mut Ctx, in_port: PortId, sig: CreditSignal) {
        let up = self.ports[in_port].peer;
        let cut_to = self.links[in_port.link()].cut_to;
        let c = self
            .credit_mut()
            .expect("credit returns need credit flow control");
        debug_assert!(c.ports[up.idx()].tracked);
        let t = ctx.now + c.ports[up.idx()].ret_delay;
        if cut_to != 0 {
            // The upstream port is another shard's: the return goes to it at the next
            // barrier (`sim/shards/`), before `t`.
            ctx.hand_off_credit(cut_to, up, t, sig);
            return;
        }
        self.credit_arrives(ctx, up, t, sig);
    }

    /// Credit return `sig` is on its way to egress `up`, which it reaches at `t`.
    #[inline]
    pub(crate) fn credit_arrives(&mut self, ctx: &mut Ctx, up: PortId, t: Time, sig: CreditSignal) {
        let c = self
            .credit_mut()
            .expect("credit returns need credit flow control");
        let cp = &mut c.ports[up.idx()];
        cp.ring.push_back((t, sig.vc, sig.blocks));
        if cp.ring.len() == 1 {
            ctx.queue.push(t, Event::CreditReturn(up));
        }
    }

    /// The credit returns due at port `p` arrive. Returns true when the port has packets
    /// waiting for them (the caller then tries to transmit).
    pub(crate) fn on_credit_return(&mut self, ctx: &mut Ctx, p: PortId) -> bool {
        let now = ctx.now;
        let c = self
            .credit_mut()
            .expect("credit returns need credit flow control");
        while let Some(&(t, vc, blocks)) = c.ports[p.idx()].ring.front() {
            if t > now {
                ctx.queue.push(t, Event::CreditReturn(p));
                break;
            }
            c.ports[p.idx()].ring.pop_front();
            c.give_back(p.idx(), CreditSignal { vc, blocks });
            if let Some(tau) = c.presense {
                c.ports[p.idx()].released.returned(blocks, now, tau);
            }
        }
        c.is_waiting(p.idx())
    }

    /// True when port `p` may start a packet of `wire` bytes on `vc` now; else the port
    /// starts waiting for credits (their return wakes it).
    #[inline(never)]
    pub(crate) fn take_credit_turn(&mut self, p: PortId, vc: usize, wire: u64, now: Time) -> bool {
        let c = self
            .credit_mut()
            .expect("a port fed by credits runs credit flow control");
        let fits = c.fits(p.idx(), vc, wire);
        if !fits {
            c.start_wait(p.idx(), now);
        }
        fits
    }

    /// Re-applies the cut-through rule after a link's rate changed.
    pub fn refresh_cut_through(&mut self) {
        if let super::AnyFlowControl::Credit(c) = &mut self.flow_control {
            c.refresh_cut_through(&self.ports);
        }
    }
}

/// Every way the credit state of `fabric` disagrees with the packets it accounts for:
/// per egress port and VC, the credits outstanding equal the blocks on the link (and in
/// its sender's replay ring, LLR), in the far switch's queues (charged to the VC they arrived on) and in the returns on their
/// way back; no count is above its buffer.
pub fn audit(fabric: &Fabric) -> Vec<String> {
    let Some(c) = fabric.credit() else {
        return Vec::new();
    };
    let mut bad = Vec::new();
    for (i, cp) in c.ports.iter().enumerate() {
        let mut out = [0u64; N_PRIO];
        if !cp.tracked {
            if cp.used.iter().any(|&u| u != 0) || !cp.ring.is_empty() {
                bad.push(format!("port {i}: credits used toward a NIC"));
            }
            continue;
        }
        for (_, d) in &fabric.links[i].ring {
            out[d.prio() as usize] += c.blocks(d.wire() as u64) as u64;
        }
        // Sent on a link that may replay, fate not drawn yet (or awaiting its replay).
        if let Some(fs) = fabric.faults.as_deref() {
            for (_, d) in &fs.links[i].wire {
                out[d.prio() as usize] += c.blocks(d.wire() as u64) as u64;
            }
        }
        let peer = fabric.ports[i].peer;
        let NodeKind::Switch(s) = fabric.ports[peer].owner() else {
            continue;
        };
        let sw = &fabric.switches[s as usize];
        let local_in = sw.ports.local(peer) as u16;
        for q in sw.ports.iter() {
            for queue in &fabric.ports[q].queues {
                for d in queue
                    .iter(fabric.queue_pool(q.idx()))
                    .filter(|d| d.in_port == local_in)
                {
                    out[d.arrival_vc() as usize] += c.blocks(d.wire() as u64) as u64;
                }
            }
        }
        for &(_, vc, blocks) in &cp.ring {
            out[vc as usize] += blocks as u64;
        }
        let mut shared = 0u64;
        for (vc, (&used, &want)) in cp.used.iter().zip(&out).enumerate() {
            if used as u64 != want {
                bad.push(format!(
                    "port {i} VC {vc}: {used} credits outstanding but {want} blocks on the link, in the far buffer and coming back",
                ));
            }
            if vc >= c.layout.vcs as usize && used != 0 {
                bad.push(format!(
                    "port {i}: credits used on VC {vc}, beyond the layout"
                ));
            }
            shared += used.saturating_sub(c.private) as u64;
        }
        if cp.shared_used as u64 != shared || cp.shared_used > c.shared {
            bad.push(format!(
                "port {i}: {} shared credits outstanding, expected {shared} of at most {}",
                cp.shared_used, c.shared
            ));
        }
    }
    bad
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::units::Rate;
    use crate::kernel::packet::PacketKind;
    use crate::model::fabric::flow_control::LinkFlowControl;

    fn desc(prio: u8, wire: u32) -> Desc {
        Desc::for_test(0, PacketKind::Data, prio, wire)
    }

    #[test]
    fn layouts_put_control_above_data_and_escape_levels_above_normal() {
        let l = VcLayout::new(4);
        assert_eq!((l.data(), l.control(), l.levels), (0, 2, 2));
        assert!(l.can_raise(0) && !l.can_raise(1) && l.can_raise(2) && !l.can_raise(3));
        let one = VcLayout::new(1);
        assert_eq!((one.data(), one.control()), (0, 0));
        assert!(!one.can_raise(0));
        let eight = VcLayout::new(8);
        assert_eq!((eight.control(), eight.levels), (4, 4));
        assert!(eight.can_raise(2) && !eight.can_raise(3) && eight.can_raise(6));
    }

    #[test]
    fn a_raised_packet_keeps_its_arrival_vc_until_it_leaves() {
        let l = VcLayout::new(6);
        let mut d = desc(3, 100);
        d.flags = crate::kernel::packet::FLAG_INT;
        assert_eq!(d.arrival_vc(), 3);
        assert!(raise_vc(l, &mut d));
        assert!(raise_vc(l, &mut d));
        assert_eq!((d.prio(), d.arrival_vc()), (5, 3));
        assert!(!raise_vc(l, &mut d), "level 2 is the top of 3");
        assert_eq!(d.prio(), 5);
        assert_eq!(
            d.flags & crate::kernel::packet::FLAG_INT,
            crate::kernel::packet::FLAG_INT
        );
    }

    /// Ports: a NIC (0) and switch A (1, 2), and switch B (3): NIC -> A, A -> B.
    fn fabric_ports(rates: [u64; 4]) -> Vec<Port> {
        let g = |r: u64| Rate(r * 1_000_000_000);
        vec![
            Port::new(0, NodeKind::Host(0), 0, 1, g(rates[0])),
            Port::new(1, NodeKind::Switch(0), 0, 0, g(rates[1])),
            Port::new(1, NodeKind::Switch(0), 1, 3, g(rates[2])),
            Port::new(2, NodeKind::Switch(1), 0, 2, g(rates[3])),
        ]
    }

    #[test]
    fn private_credits_go_first_both_ways_and_raised_packets_take_the_raised_vc() {
        let cfg = CreditCfg {
            enabled: true,
            private: 10 * 64,
            shared: 8 * 64,
            ..CreditCfg::default()
        };
        let ports = fabric_ports([100, 100, 100, 100]);
        let mut c = Credit::new(&cfg, &ports, &[5; 4], 0);
        assert!(c.port(0).tracked() && c.port(2).tracked() && !c.port(1).tracked());
        // 15 blocks on VC 0: 10 private, 5 shared; 4 more fit VC 0 only with the pool.
        let d = desc(0, 15 * 64 - 3);
        assert!(c.fits(2, 0, d.wire() as u64));
        c.on_transmit(2, &ports[2], d.prio(), d.wire(), 0, 1);
        assert_eq!((c.port(2).used(0), c.port(2).shared_used()), (15, 5));
        assert!(c.fits(2, 0, 3 * 64) && !c.fits(2, 0, 4 * 64));
        assert!(c.fits(2, 1, 13 * 64) && !c.fits(2, 1, 14 * 64));
        // A packet raised from VC 0 to 1 at A takes VC 1's credits toward B...
        let mut r = desc(0, 64);
        assert!(raise_vc(c.layout, &mut r));
        c.on_transmit(2, &ports[2], r.prio(), r.wire(), 0, 1);
        assert_eq!(c.port(2).used(1), 1);
        // ... while A gives VC 0's back to the NIC (the seam's release hook).
        let vc = r.arrival_vc() as usize;
        assert_eq!(vc, 0);
        let sig = c.after_release(
            &mut SharedBuffer::new(0, &Default::default(), vec![]),
            0,
            vc,
            64,
        );
        assert_eq!(sig, Some(CreditSignal { vc: 0, blocks: 1 }));
        // Returns refill the private credits first.
        c.give_back(2, CreditSignal { vc: 0, blocks: 4 });
        assert_eq!((c.port(2).used(0), c.port(2).shared_used()), (11, 1));
        c.give_back(2, CreditSignal { vc: 0, blocks: 11 });
        assert_eq!((c.port(2).used(0), c.port(2).shared_used()), (0, 0));
        // Toward a NIC nothing is counted.
        let n = desc(0, 9000);
        assert!(c.fits(1, 0, 9000));
        c.on_transmit(1, &ports[1], n.prio(), n.wire(), 0, 1);
        assert_eq!(c.port(1).used(0), 0);
    }

    #[test]
    fn cut_through_only_into_a_switch_none_of_whose_ports_is_faster() {
        let cfg = CreditCfg {
            enabled: true,
            ..CreditCfg::default()
        };
        // NIC at 100G into A, whose port toward B runs at 400G: stored and forwarded.
        let ports = fabric_ports([100, 100, 400, 400]);
        let c = Credit::new(&cfg, &ports, &[5; 4], 0);
        assert!(!c.port(0).cut_through());
        assert!(c.port(2).cut_through() && c.port(3).cut_through());
        assert!(!c.port(1).cut_through(), "a NIC receives at the tail");
        // The head block only, toward a cut-through switch.
        let d = desc(0, 1000);
        let ahead = Credit::new(&cfg, &ports, &[5; 4], 0).on_transmit(
            2,
            &ports[2],
            d.prio(),
            d.wire(),
            0,
            77,
        );
        assert_eq!(ahead, ports[2].tx_time(64));
        let mut off = Credit::new(
            &CreditCfg {
                cut_through: false,
                ..cfg
            },
            &ports,
            &[5; 4],
            0,
        );
        assert_eq!(off.on_transmit(2, &ports[2], d.prio(), d.wire(), 0, 77), 77);
        // The router latency is pin to pin: the link's delay holds it, so the head block's
        // time ahead of the delay shrinks by it, down to nothing.
        let block = ports[2].tx_time(64);
        let at = |lat| {
            Credit::new(&cfg, &ports, &[5; 4], lat).on_transmit(
                2,
                &ports[2],
                d.prio(),
                d.wire(),
                0,
                77,
            )
        };
        assert_eq!(at(block / 4), block - block / 4);
        assert_eq!(at(block * 3), 0);
    }

    #[test]
    fn bad_settings_name_their_field() {
        let ok = CreditCfg::default();
        assert_eq!(ok.validate(4154), Ok(()));
        let field = |c: CreditCfg| c.validate(4154).unwrap_err().field;
        assert_eq!(
            field(CreditCfg {
                vcs: 0,
                ..ok.clone()
            }),
            "vcs"
        );
        assert_eq!(
            field(CreditCfg {
                vcs: 5,
                ..ok.clone()
            }),
            "vcs"
        );
        assert_eq!(
            field(CreditCfg {
                vcs: 10,
                ..ok.clone()
            }),
            "vcs"
        );
        assert_eq!(
            field(CreditCfg {
                flit_bytes: 0,
                ..ok.clone()
            }),
            "flit_bytes"
        );
        assert_eq!(
            field(CreditCfg {
                flits_per_block: 0,
                ..ok.clone()
            }),
            "flits_per_block"
        );
        assert_eq!(
            field(CreditCfg {
                flits_per_block: 512,
                ..ok.clone()
            }),
            "flits_per_block"
        );
        assert_eq!(
            field(CreditCfg {
                shared: 100,
                ..ok.clone()
            }),
            "shared"
        );
        assert_eq!(
            field(CreditCfg {
                private: 4096,
                ..ok.clone()
            }),
            "private"
        );
        assert_eq!(
            CreditCfg {
                vcs: 1,
                shared: 0,
                ..ok
            }
            .validate(4154),
            Ok(())
        );
    }
}
