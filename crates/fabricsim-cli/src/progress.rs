//! What the progress bars of `fabricsim run` show: per run, the simulated time reached,
//! the flows finished, its events per second and an ETA; across the runs, the runs done,
//! the events per second of every run together and an ETA over the sweep.
//!
//! The simulator reports a run's [`Progress`] from the event loop's periodic check (every
//! 2^20 events, and once when the run ends), never per event, and the runner once as the
//! run starts; everything here works on those samples.
//!
//! # The estimate
//!
//! A run's fraction done is the larger of two: the simulated time reached over
//! `max_time`, and the flows finished over the flows. The wall time a run takes follows
//! its events, and under a steady load the events per simulated second are steady, so
//! the simulated-time fraction extrapolates soundly; a run cannot go past `max_time`, so
//! the ETA it gives is an upper bound, exact for runs that end at `max_time` (a Poisson
//! load, a training run). Most runs end when their flows finish, well before `max_time`
//! (1 s unless set); for them the flows-finished fraction tightens the bound as flows
//! finish. The larger fraction is the smaller of the two ETAs, each an extrapolation of
//! the run's own pace so far: `elapsed x (1 - f) / f`. With no flow finished and little
//! simulated time behind it, a run has no estimate yet (shown as `?`), rather than a
//! made-up one.
//!
//! A sweep's fraction done is the runs finished plus the fractions of those in flight,
//! over all runs; its ETA extrapolates the sweep's pace the same way, which counts the
//! runs running side by side.

use fabricsim::sim::Progress;
use std::time::{Duration, Instant};

/// The fraction of a run done, 0..=1 (see the module documentation).
pub fn run_fraction(p: &Progress) -> f64 {
    if p.finished {
        return 1.0;
    }
    let by_time = p.now as f64 / p.max_time.max(1) as f64;
    let by_flows = if p.flows_total == 0 {
        0.0
    } else {
        p.flows_done as f64 / p.flows_total as f64
    };
    by_time.max(by_flows).clamp(0.0, 1.0)
}

/// Wall time left for work that took `elapsed` to do a fraction `f` of, at the same pace;
/// `None` until `f` says anything (below one part in ten thousand).
pub fn eta(elapsed: Duration, f: f64) -> Option<Duration> {
    if f >= 1.0 {
        return Some(Duration::ZERO);
    }
    if f.is_nan() || f < 1e-4 {
        return None;
    }
    Some(elapsed.mul_f64((1.0 - f) / f))
}

/// A duration as the bars show it: `45s`, `3m05s`, `2h07m`, `?` when unknown.
pub fn fmt_eta(d: Option<Duration>) -> String {
    let Some(d) = d else { return "?".into() };
    if d > Duration::ZERO && d < Duration::from_secs(1) {
        return "<1s".into();
    }
    let s = d.as_secs_f64().round() as u64;
    if s < 60 {
        format!("{s}s")
    } else if s < 3600 {
        format!("{}m{:02}s", s / 60, s % 60)
    } else {
        format!("{}h{:02}m", s / 3600, s % 3600 / 60)
    }
}

/// Events per second as the bars show them: `12.3 M events/s`.
pub fn fmt_rate(r: Option<f64>) -> String {
    match r {
        Some(r) => format!("{:.1} M events/s", r / 1e6),
        None => "- events/s".into(),
    }
}

/// One run's samples.
#[derive(Clone, Copy, Debug, Default)]
struct Run {
    /// Its first report (the runner's, as it starts).
    started: Option<Instant>,
    /// (wall time, events) at its last report.
    last: Option<(Instant, u64)>,
    /// Events per second between its last two reports.
    rate: Option<f64>,
    /// Fraction done.
    frac: f64,
    finished: bool,
}

/// The shortest window the events per second of the whole sweep are measured over:
/// long enough to span several reports of every run in flight (one per 2^20 events).
const WINDOW: Duration = Duration::from_secs(1);

/// The shortest span a first estimate of the sweep's events per second is made over,
/// before a full window has passed (a sweep of short runs may take less than one).
const FIRST: Duration = Duration::from_millis(250);

/// The state of every run of a sweep, from their reports.
#[derive(Debug)]
pub struct Tracker {
    /// The first report of any run: the sweep's work starts there (the runs are all
    /// built and checked before any starts, which is not the pace of the runs).
    start: Option<Instant>,
    runs: Vec<Run>,
    /// Events reported by every run together.
    events: u64,
    /// (wall time, `events`) where the current window began.
    window: Option<(Instant, u64)>,
    /// Events per second of every run together over the last full window (or, before
    /// one has passed, over the first quarter second or more).
    rate: Option<f64>,
    full: bool,
}

impl Tracker {
    /// A sweep of `n` runs.
    pub fn new(n: usize) -> Tracker {
        Tracker {
            start: None,
            runs: vec![Run::default(); n],
            events: 0,
            window: None,
            rate: None,
            full: false,
        }
    }

    /// Run `i` reported `p` at wall time `now`.
    pub fn report(&mut self, i: usize, p: &Progress, now: Instant) {
        self.start.get_or_insert(now);
        let (w0, e0) = *self.window.get_or_insert((now, self.events));
        let r = &mut self.runs[i];
        let started = *r.started.get_or_insert(now);
        let (t0, ev0) = r.last.unwrap_or((started, 0));
        let dt = now.saturating_duration_since(t0).as_secs_f64();
        // A report with no new event (the runner's `finished` after the loop's last)
        // keeps the rate the run had.
        if dt > 0.0 && p.events > ev0 {
            r.rate = Some((p.events - ev0) as f64 / dt);
        }
        self.events += p.events.saturating_sub(ev0);
        r.last = Some((now, p.events));
        r.frac = run_fraction(p);
        r.finished |= p.finished;
        let dt = now.saturating_duration_since(w0);
        if dt >= WINDOW || (!self.full && dt >= FIRST) {
            self.rate = Some((self.events - e0) as f64 / dt.as_secs_f64());
        }
        if dt >= WINDOW {
            self.window = Some((now, self.events));
            self.full = true;
        }
    }

    /// Runs finished.
    pub fn done(&self) -> usize {
        self.runs.iter().filter(|r| r.finished).count()
    }

    /// Runs that reported and have not finished.
    pub fn in_flight(&self) -> usize {
        (self.runs.iter())
            .filter(|r| r.started.is_some() && !r.finished)
            .count()
    }

    /// Events per second of every run together, over the last window of a second or
    /// more: the runs in flight, and those that ended within it (a run of fewer than
    /// 2^20 events reports only when it ends, so a sum of the runs' own rates would miss
    /// a sweep of short runs altogether).
    pub fn events_per_sec(&self) -> Option<f64> {
        self.rate
    }

    /// Run `i`'s events per second.
    pub fn run_rate(&self, i: usize) -> Option<f64> {
        self.runs[i].rate
    }

    /// Run `i`'s fraction done.
    pub fn run_frac(&self, i: usize) -> f64 {
        self.runs[i].frac
    }

    /// Run `i`'s ETA at `now`.
    pub fn run_eta(&self, i: usize, now: Instant) -> Option<Duration> {
        let r = &self.runs[i];
        eta(now.saturating_duration_since(r.started?), r.frac)
    }

    /// The sweep's fraction done: runs finished and the fractions of those in flight.
    pub fn sweep_frac(&self) -> f64 {
        let sum: f64 = self
            .runs
            .iter()
            .map(|r| if r.finished { 1.0 } else { r.frac })
            .sum();
        sum / self.runs.len().max(1) as f64
    }

    /// The sweep's ETA at `now`.
    pub fn sweep_eta(&self, now: Instant) -> Option<Duration> {
        eta(
            now.saturating_duration_since(self.start?),
            self.sweep_frac(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fabricsim::base::units::MS;

    fn p(now_ms: u64, events: u64, done: usize, total: usize) -> Progress {
        Progress {
            now: now_ms * MS,
            events,
            flows_done: done,
            flows_total: total,
            max_time: 100 * MS,
            finished: false,
        }
    }

    #[test]
    fn fraction_is_the_larger_of_time_and_flows() {
        assert_eq!(run_fraction(&p(25, 0, 0, 10)), 0.25);
        assert_eq!(run_fraction(&p(10, 0, 5, 10)), 0.5);
        assert_eq!(run_fraction(&p(0, 0, 0, 0)), 0.0);
        let end = Progress {
            finished: true,
            ..p(30, 0, 3, 10)
        };
        // A run that ended (a stall, say) is done, whatever it reached.
        assert_eq!(run_fraction(&end), 1.0);
    }

    #[test]
    fn eta_extrapolates_the_pace_so_far() {
        let s = Duration::from_secs;
        assert_eq!(eta(s(10), 0.25), Some(s(30)));
        assert_eq!(eta(s(10), 0.5), Some(s(10)));
        assert_eq!(eta(s(10), 1.0), Some(Duration::ZERO));
        assert_eq!(eta(s(10), 0.0), None);
        assert_eq!(eta(s(10), f64::NAN), None);
        assert_eq!(fmt_eta(Some(s(45))), "45s");
        assert_eq!(fmt_eta(Some(s(185))), "3m05s");
        assert_eq!(fmt_eta(Some(s(7620))), "2h07m");
        assert_eq!(fmt_eta(None), "?");
        assert_eq!(fmt_eta(Some(Duration::from_millis(300))), "<1s");
        assert_eq!(fmt_eta(Some(Duration::ZERO)), "0s");
    }

    #[test]
    fn events_per_second_add_up_over_the_runs() {
        let t0 = Instant::now();
        let at = |ms: u64| t0 + Duration::from_millis(ms);
        let mut t = Tracker::new(3);
        t.report(0, &p(1, 0, 0, 10), at(0));
        t.report(1, &p(1, 0, 0, 10), at(0));
        t.report(1, &p(1, 100_000, 0, 10), at(100));
        assert_eq!(t.events_per_sec(), None);
        // Run 1: 1 M events in 0.5 s; no full window yet: a first estimate. The run's
        // own rate is between its last two reports: 0.9 M in 0.4 s.
        t.report(1, &p(10, 1_000_000, 0, 10), at(500));
        assert_eq!(t.run_rate(1), Some(2.25e6));
        assert_eq!(t.events_per_sec(), Some(2e6));
        // Run 0: 2 M events in 1 s. Together: 3 M in the first second.
        t.report(0, &p(10, 2_000_000, 0, 10), at(1000));
        assert_eq!(t.run_rate(0), Some(2e6));
        assert_eq!(t.events_per_sec(), Some(3e6));
        assert_eq!((t.done(), t.in_flight()), (0, 2));
        // Run 1 ends with 0.5 M more; run 0 makes 1.5 M more: 2 M in the next second.
        let end = Progress {
            finished: true,
            ..p(10, 1_500_000, 10, 10)
        };
        t.report(1, &end, at(1000));
        let rate1 = t.run_rate(1);
        t.report(1, &end, at(1200));
        assert_eq!(t.run_rate(1), rate1);
        t.report(0, &p(10, 3_500_000, 0, 10), at(2000));
        assert_eq!(t.events_per_sec(), Some(2e6));
        // A run short enough to report only its end counts all the same.
        t.report(
            2,
            &Progress {
                finished: true,
                ..p(1, 1_000_000, 1, 1)
            },
            at(2500),
        );
        t.report(0, &p(10, 3_500_000, 0, 10), at(3000));
        assert_eq!(t.events_per_sec(), Some(1e6));
        assert_eq!((t.done(), t.in_flight()), (2, 1));
    }

    #[test]
    fn etas_of_the_runs_and_the_sweep() {
        let t0 = Instant::now();
        let at = |ms: u64| t0 + Duration::from_millis(ms);
        let mut t = Tracker::new(3);
        t.report(0, &p(0, 0, 0, 10), at(0));
        t.report(1, &p(0, 0, 0, 10), at(0));
        t.report(0, &p(10, 1_000, 0, 10), at(1000));
        let end = Progress {
            finished: true,
            ..p(10, 1_000, 10, 10)
        };
        t.report(1, &end, at(1000));
        // One run done, one a tenth done, one not started: 1.1 of 3.
        assert!((t.sweep_frac() - 1.1 / 3.0).abs() < 1e-12);
        // 1.1 of 3 runs in 1 s: 1.9 / 1.1 s to go.
        let e = t.sweep_eta(at(1000)).unwrap().as_secs_f64();
        assert!((e - 1.9 / 1.1).abs() < 1e-6, "{e}");
        // Run 0 is a tenth done after 1 s: 9 s to go.
        let e = t.run_eta(0, at(1000)).unwrap().as_secs_f64();
        assert!((e - 9.0).abs() < 1e-6, "{e}");
        // Run 2 has not started: no estimate of its own.
        assert_eq!(t.run_eta(2, at(1000)), None);
    }
}
