//! Livelock guard: a run whose events outpace anything its fabric could produce stops
//! with a diagnosis instead of running on for ever.
//!
//! The validator's floors ([`crate::base::floors`]) refuse the settings known to do this (a
//! 1 ps RTO or sampling interval); the guard catches what they miss: a model bug that
//! reschedules a timer at the same instant, or a setting set through the library with
//! the floors bypassed. Unlike a stall (no progress for `stall_timeout`), a livelock
//! moves simulated time forward slowly or not at all, so `max_time` never comes.
//!
//! The bound is the fabric's own: every port can cause at most a few events per
//! minimum-frame serialization time ([`EVENTS_PER_FRAME`]: the frame's end waking its
//! port, its arrival at the far end, a credit return or a replay, a PFC refresh), every
//! flow and host a few timer events per microsecond (the floor of timers that re-send),
//! and the recorder one event per sampling interval (at least its floor); the guard allows [`MARGIN`] times
//! that. A run at full load stays two to three orders of magnitude below it (a data
//! frame is an MTU, not 64 bytes, and few ports send back to back). Bursts at one
//! instant (every flow of a workload starting together) are allowed on top: a stretch
//! must exceed the bound by more than [`MARGIN`] events per flow, port and host, and by at
//! least [`MIN_STRETCH`] events, before the guard trips.
//!
//! It costs nothing per event: the loop checks every 2^16 events ([`CHECK_EVERY`]), and
//! the check compares two counters. A stretch starts at the last check whose window of
//! 2^16 events stayed within the bound. When it trips, the loop runs [`SAMPLE`] more
//! events while counting them by kind and by component, which names the culprit.

use crate::base::units::{fmt_time, Time, US};
use crate::kernel::events::Event;
use crate::sim::Simulation;
use serde::Serialize;
use std::collections::HashMap;

/// Events a port can cause per minimum frame it sends.
pub const EVENTS_PER_FRAME: f64 = 4.0;
/// How far above the fabric's bound a run may go before it is a livelock.
pub const MARGIN: f64 = 16.0;
/// The smallest frame on any link, bytes.
pub const MIN_FRAME_BYTES: f64 = 64.0;
/// Events between two checks (a power of two: the loop checks at its multiples of the
/// events popped).
pub const CHECK_EVERY: u32 = 1 << 16;
/// Fewest excess events of a stretch that trips the guard.
pub const MIN_STRETCH: u64 = 1 << 22;
/// Events run and counted for the diagnosis once the guard trips.
pub const SAMPLE: u32 = 1 << 16;

/// The guard's state (part of the simulation; set up when the run starts).
#[derive(Clone, Debug, Default)]
pub struct Guard {
    /// Events per picosecond the fabric may cause, with the margin; 0: not set up.
    bound_per_ps: f64,
    /// Events a stretch may exceed the bound by (one-off bursts).
    allowance: u64,
    /// Start of the current stretch: (time, events).
    stretch: (Time, u64),
    /// The previous check: (time, events).
    last: (Time, u64),
}

impl Guard {
    /// The guard for `sim`'s fabric, flows and recorder.
    pub fn new(sim: &Simulation) -> Guard {
        let frames_per_ps: f64 = (sim.fabric.ports.iter())
            .map(|p| p.rate.0 as f64 / (MIN_FRAME_BYTES * 8.0) / 1e12)
            .sum();
        let actors = (sim.nics.flows.len() + sim.nics.hosts.len()) as f64;
        // Retry timers are at least 1 us apart ([`crate::base::floors::RESEND`]).
        let timers_per_ps = actors * EVENTS_PER_FRAME / US as f64;
        // The recorder: one event per sampling interval, which is at least the floor
        // ([`crate::base::floors::sampling_floor`]); a shorter one (set through the library)
        // is what the guard is for.
        let p = &sim.ctx.params;
        let fastest = sim.fabric.ports.iter().map(|p| p.rate.0).max().unwrap_or(1);
        let floor = crate::base::floors::sampling_floor(fastest);
        let samples_per_ps: f64 = [p.queue_interval, p.rate_interval]
            .iter()
            .flatten()
            .map(|&iv| 1.0 / iv.max(floor) as f64)
            .sum();
        let bound = EVENTS_PER_FRAME * frames_per_ps + timers_per_ps + samples_per_ps;
        let things = actors + sim.fabric.ports.len() as f64;
        Guard {
            bound_per_ps: MARGIN * bound,
            allowance: MIN_STRETCH + (MARGIN * things) as u64,
            stretch: (sim.ctx.now, sim.events()),
            last: (sim.ctx.now, sim.events()),
        }
    }

    /// Called every [`CHECK_EVERY`] events with the time and the events so far: true
    /// when the current stretch is a livelock.
    #[cold]
    #[inline(never)]
    pub fn check(&mut self, now: Time, events: u64) -> bool {
        if self.bound_per_ps == 0.0 {
            return false;
        }
        let (t0, e0) = self.stretch;
        let allowed = self.bound_per_ps * now.saturating_sub(t0) as f64 + self.allowance as f64;
        if (events - e0) as f64 > allowed {
            return true;
        }
        let (t1, e1) = self.last;
        let window_allowed = self.bound_per_ps * now.saturating_sub(t1) as f64;
        if (events - e1) as f64 <= window_allowed {
            self.stretch = (now, events);
        }
        self.last = (now, events);
        false
    }

    /// The most events a stretch of `span` ps from a check may hold before the guard
    /// trips: the bound over the span plus the allowance (no limit when unset). The
    /// parallel engine gives each shard this budget for each window.
    pub fn budget(&self, span: Time) -> u64 {
        if self.bound_per_ps == 0.0 {
            return u64::MAX;
        }
        let b = self.bound_per_ps * span as f64 + self.allowance as f64;
        if b >= u64::MAX as f64 {
            u64::MAX
        } else {
            b as u64
        }
    }

    /// The bound, in events per simulated nanosecond.
    pub fn bound_per_ns(&self) -> f64 {
        self.bound_per_ps * 1000.0
    }

    /// The current stretch's start: (time, events).
    pub fn stretch(&self) -> (Time, u64) {
        self.stretch
    }
}

/// What the guard found.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LivelockReport {
    /// Simulated time when the guard tripped.
    pub at_ps: u64,
    /// Simulated time the stretch of excess events began.
    pub since_ps: u64,
    /// Events in the stretch.
    pub events: u64,
    /// Events per simulated nanosecond over the stretch (infinite: no time passed).
    pub events_per_ns: f64,
    /// What the fabric can cause, with the margin, per simulated nanosecond.
    pub bound_per_ns: f64,
    /// Events run after the guard tripped, counted below.
    pub sampled: u64,
    /// Their kinds and counts, most frequent first.
    pub kinds: Vec<(String, u64)>,
    /// The components that most of them woke (`"Rto of flow 3"`), with counts.
    pub components: Vec<(String, u64)>,
    /// The setting that drives the dominating kind, where one does.
    pub suspect: String,
}

impl std::fmt::Display for LivelockReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let rate = if self.events_per_ns.is_finite() {
            format!("{:.1} events per simulated ns", self.events_per_ns)
        } else {
            "events without simulated time passing".to_string()
        };
        write!(
            f,
            "livelock at {}: {rate} since {} ({} events; this fabric causes at most {:.1})",
            fmt_time(self.at_ps),
            fmt_time(self.since_ps),
            self.events,
            self.bound_per_ns
        )?;
        let share = |n: u64| 100.0 * n as f64 / self.sampled.max(1) as f64;
        let top: Vec<String> = (self.kinds.iter().take(3))
            .map(|(k, n)| format!("{k} {:.1} %", share(*n)))
            .collect();
        write!(f, "; the next {} events: {}", self.sampled, top.join(", "))?;
        if let Some((c, n)) = self.components.first() {
            write!(f, "; most from {c} ({:.1} %)", share(*n))?;
        }
        if !self.suspect.is_empty() {
            write!(f, "; check {}", self.suspect)?;
        }
        Ok(())
    }
}

/// An event's kind, and the component it wakes where that tells something.
fn describe(sim: &Simulation, ev: Event) -> (&'static str, Option<String>) {
    let port = |p: u32| {
        format!(
            "port {}:{}",
            sim.port_node_name(crate::base::ids::PortId(p)),
            sim.fabric.ports[p as usize].local
        )
    };
    match ev {
        Event::LinkArrive(l) => ("LinkArrive", Some(format!("link of {}", port(l.0)))),
        Event::PortWake(p) => ("PortWake", Some(port(p.0))),
        Event::FlowArrivals => ("FlowArrivals", None),
        Event::Rto(f) => ("Rto", Some(format!("flow {}", f.0))),
        Event::CnpTimer(f) => ("CnpTimer", Some(format!("flow {}", f.0))),
        Event::PfcRefresh(p) => ("PfcRefresh", Some(port(p.0))),
        Event::Sample => ("Sample", None),
        Event::Reorder(s) => ("Reorder", Some(format!("GSE stream {s}"))),
        Event::Grant(h) => ("Grant", Some(format!("host {}", h.0))),
        Event::CreditReturn(p) => ("CreditReturn", Some(port(p.0))),
        Event::Fault(i) => ("Fault", Some(format!("fault step {i}"))),
        Event::Replay(l) => ("Replay", Some(format!("link of {}", port(l.0)))),
        Event::Collective(i) => ("Collective", Some(format!("collective timer {i}"))),
    }
}

/// The setting that paces events of `kind`.
fn suspect(kind: &str) -> &'static str {
    match kind {
        "Rto" => "transport.rto",
        "CnpTimer" => "the CNP interval (cc.dcqcn.cnp_interval)",
        "PfcRefresh" => "fabric.pfc.pause_quanta",
        "Sample" => "record.queue_interval and record.rate_interval",
        "Reorder" => "fabric.gse.reorder_timeout",
        "Collective" => "the hw_collective workload's timeout and latencies",
        "CreditReturn" => "[fabric.credit]",
        "Replay" => "[fabric.reliability]",
        _ => "",
    }
}

/// Counts of the events run after the guard tripped (the event loop counts them).
#[derive(Default)]
pub(crate) struct Tally {
    kinds: HashMap<&'static str, u64>,
    components: HashMap<String, u64>,
    n: u64,
}

impl Tally {
    /// Counts one event (out of line: the event loop calls it only once the guard has
    /// tripped, and its code must not crowd the loop's).
    #[cold]
    #[inline(never)]
    pub(crate) fn add(&mut self, sim: &Simulation, ev: Event) {
        let (kind, who) = describe(sim, ev);
        *self.kinds.entry(kind).or_default() += 1;
        if let Some(w) = who {
            *self.components.entry(format!("{kind} of {w}")).or_default() += 1;
        }
        self.n += 1;
    }

    /// Events counted.
    pub(crate) fn len(&self) -> u64 {
        self.n
    }
}

fn most_first<K: ToString>(m: HashMap<K, u64>) -> Vec<(String, u64)> {
    let mut v: Vec<(String, u64)> = m.into_iter().map(|(k, n)| (k.to_string(), n)).collect();
    v.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    v.truncate(8);
    v
}

/// The report, from the guard's stretch and the events counted after it tripped.
#[cold]
#[inline(never)]
pub(crate) fn report(sim: &Simulation, at: (Time, u64), tally: Tally) -> LivelockReport {
    let (t0, e0) = sim.livelock.stretch();
    let (now, events) = at;
    let span = now.saturating_sub(t0);
    let events = events - e0;
    let kinds = most_first(tally.kinds);
    let components = most_first(tally.components);
    LivelockReport {
        at_ps: now,
        since_ps: t0,
        events,
        events_per_ns: if span == 0 {
            f64::INFINITY
        } else {
            events as f64 * 1000.0 / span as f64
        },
        bound_per_ns: sim.livelock.bound_per_ns(),
        sampled: tally.n,
        // Packet events follow from whatever sends the packets: name the setting of the
        // most frequent timer kind among those making up a quarter or more.
        suspect: (kinds.iter())
            .filter(|(_, n)| 4 * n >= tally.n)
            .map(|(k, _)| suspect(k))
            .find(|s| !s.is_empty())
            .unwrap_or("")
            .to_string(),
        kinds,
        components,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn guard(bound_per_ps: f64, allowance: u64) -> Guard {
        Guard {
            bound_per_ps,
            allowance,
            ..Guard::default()
        }
    }

    #[test]
    fn a_run_within_its_bound_never_trips() {
        // 1 event per ns allowed; 2^16 events every 100 us is far below.
        let mut g = guard(1e-3, 1000);
        for k in 1..1000u64 {
            assert!(!g.check(k * 100 * US, k << 16));
        }
    }

    #[test]
    fn events_without_time_trip_once_past_the_allowance() {
        let mut g = guard(1e-3, 1 << 20);
        // A calm start, then events at one instant.
        assert!(!g.check(100 * US, 1 << 16));
        let mut tripped = None;
        for k in 2..100u64 {
            if g.check(100 * US, k << 16) {
                tripped = Some(k);
                break;
            }
        }
        // The stretch began at the calm check (2^16 events): it trips once it holds
        // more than the allowance, 2^20 events, i.e. at 2^16 * 18.
        assert_eq!(tripped, Some(18));
    }

    #[test]
    fn a_burst_within_the_allowance_is_forgiven() {
        let mut g = guard(1e-3, 1 << 20);
        // 2^19 events at t = 0 (a workload starting), then a calm run.
        for k in 1..=8u64 {
            assert!(!g.check(0, k << 16));
        }
        for k in 1..1000u64 {
            assert!(!g.check(k * 100 * US, (8 + k) << 16));
        }
    }

    #[test]
    fn a_guard_not_set_up_never_trips() {
        let mut g = Guard::default();
        assert!(!g.check(0, u64::MAX / 2));
    }
}
