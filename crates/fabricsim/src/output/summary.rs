//! The headline numbers of one run ([`Summary`]) and their `summary.json`.
//!
//! The Rust struct stays flat, so code that reads a run's figures (the reports, the
//! comparison tables) names a field directly. The JSON groups the same fields into
//! sections, through a borrowed view ([`Summary`]'s `Serialize`):
//!
//! - `run`: scenario, run name, variant, sweep coordinates, results folder, seed,
//!   outcome, stall diagnosis, livelock diagnosis (only when the guard stopped the run), invariants broken, simulated end, fabricsim version and git commit;
//! - `speed`: wall seconds, events, packet-hops, packet-hops per second, peak packets
//!   alive, the memory estimated before the run ([`crate::scenario::budget`]) and the process's
//!   peak resident memory (only `wall_seconds`, `packet_hops_per_sec` and
//!   `peak_rss_bytes` depend on the machine), and for a run cut into shards, `parallel`:
//!   shards, threads, windows, window span, lookahead, frames handed over, and the
//!   critical path with the speedup it bounds ([`crate::sim::ParallelWork`]);
//! - `flows`: count, finished, goodput, FCT and slowdown statistics, per size bucket
//!   (FCT at the receiver over fabricsim's ideal), the same at the sender over the ns-3
//!   ideal (`sender_*`), and `definitions`: which FCT and ideal each figure uses;
//! - `transport`: CNPs, timeouts, retransmitted bytes, NACKs, packets that arrived out
//!   of order;
//! - `fabric`: drops, PFC pauses and paused time, ECN marks, queues, TCD marks;
//! - `jobs`: job iterations, finished, JCT and its lower bound;
//! - `long_haul`: the DCI ports' load, imbalance and drops, the DRs' CNPs, per campus;
//! - `faults`: faults applied, routing rebuilds, frames corrupted, replayed, discarded
//!   and lost, packets dropped, data packets lost (see [`crate::model::fabric::faults::FaultSummary`]);
//! - `collectives`: hardware collectives' iterations, completions, failures, timeouts,
//!   latency, the results' check, packets and multicast copies
//!   ([`crate::model::hw_collective::HwSummary`]);
//! - `gse`, `long_haul`, `collectives`, `faults`, `convergence`, `window`: `null` for runs
//!   without GSE, DR switches, hardware collectives, faults or bit errors,
//!   `[record.convergence]` or `[record.window]`; every
//!   key is always there, so a reader can rely on the shape.

pub use crate::analysis::metrics::quantile;
use crate::base::units::Time;
use crate::sim::stall::StallReport;
use crate::sim::{Outcome, Simulation};

pub use super::summary_json::from_json;
pub use super::summary_table::table;

/// The fabricsim version that wrote the results (`run.fabricsim_version`).
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// The git commit the library was built from (12 hex digits), or `unknown` outside a
/// git checkout; see `build.rs`.
pub const GIT_COMMIT: &str = env!("FABRICSIM_GIT_COMMIT");

/// The process's peak resident memory (`VmHWM`), where the OS tells it.
pub fn peak_rss_bytes() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = s.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// Flows per run whose rate series the multi-run report overlays.
pub const SUMMARY_RATE_FLOWS: usize = 4;

/// Headline numbers of one run.
#[derive(Clone, Debug, Default)]
pub struct Summary {
    /// Scenario name.
    pub scenario: String,
    /// Run name: variant and sweep point (the scenario name when it has neither).
    pub variant: String,
    /// Sweep coordinates of this run (axis label -> value).
    pub params: std::collections::BTreeMap<String, String>,
    /// Seed.
    pub seed: u64,
    /// How the run ended.
    pub outcome: String,
    /// Stall diagnosis, when it stalled.
    pub stall: Option<StallReport>,
    /// Livelock diagnosis, when the guard stopped the run ([`crate::sim::livelock`]).
    pub livelock: Option<crate::sim::livelock::LivelockReport>,
    /// Simulated time at the end (ns).
    pub sim_end_ns: f64,
    /// Wall-clock seconds.
    pub wall_seconds: f64,
    /// Events processed.
    pub events: u64,
    /// Packets that crossed a link.
    pub packet_hops: u64,
    /// Packet-hops per wall second.
    pub packet_hops_per_sec: f64,
    /// Flows in the workload.
    pub flows: usize,
    /// Flows finished.
    pub flows_completed: usize,
    /// Mean FCT (ns) of finished flows.
    pub fct_mean_ns: f64,
    /// Mean slowdown of finished flows.
    pub slowdown_mean: f64,
    /// Median FCT (ns) of finished flows.
    pub fct_p50_ns: f64,
    /// 99th percentile FCT (ns).
    pub fct_p99_ns: f64,
    /// Median slowdown (FCT / ideal FCT).
    pub slowdown_p50: f64,
    /// 99th percentile slowdown.
    pub slowdown_p99: f64,
    /// Largest slowdown.
    pub slowdown_max: f64,
    /// Smallest slowdown (never below 1 in a correct model).
    pub slowdown_min: f64,
    /// Payload bytes of finished flows x 8 / (last finish - first start), in Gbps.
    pub goodput_gbps: f64,
    /// Packets dropped.
    pub drops: u64,
    /// PFC XOFF frames sent.
    pub pause_frames: u64,
    /// Total time ports spent paused (ns, summed over ports).
    pub paused_ns: f64,
    /// CE marks.
    pub ecn_marks: u64,
    /// CNPs sent.
    pub cnps: u64,
    /// Retransmission timeouts.
    pub timeouts: u64,
    /// Payload bytes retransmitted.
    pub retx_bytes: u64,
    /// NACKs the senders received.
    pub nacks: u64,
    /// Data packets that reached their receiver ahead of a gap (reordered or after a
    /// loss; see [`crate::model::transport::Flow::out_of_order_pkts`]).
    pub out_of_order_packets: u64,
    /// Invariants the run broke ([`crate::analysis::invariants::check`]); empty for a sound run.
    pub invariant_violations: Vec<String>,
    /// Longest switch egress queue (bytes).
    pub max_queue_bytes: u64,
    /// Most packets alive at once.
    pub peak_packets: usize,
    /// Memory the run was estimated to hold before it was built ([`crate::scenario::budget`]).
    pub memory_estimate_bytes: u64,
    /// The parallel engine's work, when the run was cut into shards (`None` on one
    /// thread; not read back from a summary).
    pub parallel: Option<crate::sim::ParallelWork>,
    /// Peak resident memory of the process when the run ended (its own peak when it ran
    /// alone; with several runs at once, theirs together); 0 where unknown.
    pub peak_rss_bytes: u64,
    /// Variant name alone (without sweep coordinates; empty when there are no variants).
    pub variant_name: String,
    /// Results folder of the run, relative to `--out` (empty when the run writes into
    /// `--out` itself: a scenario of one run).
    pub folder: String,
    /// Job iterations (collective workloads).
    pub jobs: usize,
    /// Job iterations finished.
    pub jobs_completed: usize,
    /// Mean JCT over finished job iterations (ns).
    pub jct_mean_ns: f64,
    /// Largest JCT (ns).
    pub jct_max_ns: f64,
    /// Mean analytic lower bound of the job iterations (ns).
    pub jct_lower_bound_ns: f64,
    /// GSE counters (PKTC / DGSQ runs).
    pub gse: Option<crate::model::gse::GseStats>,
    /// DCI and DR figures (topology `multi_campus`).
    pub long_haul: Option<crate::model::fabric::roles::dr::LongHaulStats>,
    /// Hardware collectives (document 003).
    pub collectives: Option<crate::model::hw_collective::HwSummary>,
    /// 95th percentile slowdown.
    pub slowdown_p95: f64,
    /// Slowdown p50/p99 of finished flows per size bucket (`<10KB`, `10KB-100KB`,
    /// `100KB-1MB`, `>=1MB`; see [`crate::analysis::metrics`]).
    pub slowdown_buckets: Vec<crate::analysis::metrics::BucketSlowdown>,
    /// Time to cut and to fair share after a join (`[record.convergence]`).
    pub convergence: Option<crate::analysis::convergence::Convergence>,
    /// Goodput and queues over a time window (`[record.window]`).
    pub window: Option<crate::analysis::window::Window>,
    /// Time-averaged bytes queued at the switch egress port with the longest average
    /// queue (the bottleneck).
    pub mean_queue_bytes: f64,
    /// Data packets marked CE by TCD (sum over switch ports).
    pub tcd_ce_marks: u64,
    /// Data packets marked UE by TCD.
    pub tcd_ue_marks: u64,
    /// Rate vs time (us, Gbps) of the run's most sampled flows (at most
    /// [`SUMMARY_RATE_FLOWS`]), for the multi-run report; not written to `summary.json`.
    pub rate_series: Vec<(String, Vec<(f64, f64)>)>,
    /// Queue vs time (us, bytes) of the run's longest sampled switch queue, for the
    /// multi-run report; not written to `summary.json`.
    pub queue_series: Vec<(String, Vec<(f64, f64)>)>,
    /// The fastest host port's line rate (Gbps), the reference line of rate charts; not
    /// written to `summary.json` (NaN when read back from it).
    pub host_rate_gbps: f64,
    /// What faults and bit errors did (runs with `[[fault]]` entries or bit errors).
    pub faults: Option<crate::model::fabric::faults::FaultSummary>,
    /// What `[record.pcap]` kept in `capture.pcapng` and what its limit left out (runs
    /// with a capture).
    pub capture: Option<crate::model::capture::CaptureStats>,
    /// Mean FCT (ns) at the sender (start to the last ACK) of flows whose last ACK came.
    pub sender_fct_mean_ns: f64,
    /// Median sender FCT (ns).
    pub sender_fct_p50_ns: f64,
    /// 99th percentile sender FCT (ns).
    pub sender_fct_p99_ns: f64,
    /// Mean of sender FCT / ns-3 ideal FCT (`ideal_fct_rtt_ns`).
    pub sender_slowdown_mean: f64,
    /// Median of sender FCT / ns-3 ideal FCT.
    pub sender_slowdown_p50: f64,
    /// 99th percentile of sender FCT / ns-3 ideal FCT.
    pub sender_slowdown_p99: f64,
    /// Slowdown CDF (value, fraction of finished flows), thinned to at most
    /// [`crate::analysis::metrics::SUMMARY_CDF_POINTS`] points, for the multi-run report; not
    /// written to `summary.json`.
    pub slowdown_cdf: Vec<(f64, f64)>,
}

fn ns(t: Time) -> f64 {
    t as f64 / 1000.0
}

/// FCT of flow i, if it finished.
pub fn fct(sim: &Simulation, i: usize) -> Option<Time> {
    let f = &sim.nics.flows[i];
    f.finish.map(|t| t - f.spec.start)
}

/// Builds the summary of a finished run.
pub fn summarize(sim: &Simulation, variant: &str, outcome: &Outcome, wall_seconds: f64) -> Summary {
    let mut fcts = Vec::new();
    let mut slow = Vec::new();
    // A sum over the links: taken once.
    let packet_hops = sim.packet_hops();
    for i in 0..sim.nics.flows.len() {
        if let Some(t) = fct(sim, i) {
            fcts.push(t as f64);
            slow.push(t as f64 / sim.ideal[i] as f64);
        }
    }
    fcts.sort_by(f64::total_cmp);
    slow.sort_by(f64::total_cmp);
    let (mut s_fcts, mut s_slow) = (Vec::new(), Vec::new());
    for (i, f) in sim.nics.flows.iter().enumerate() {
        if let Some(t) = f.sender_done {
            let fct = (t - f.spec.start) as f64;
            s_fcts.push(fct);
            s_slow.push(fct / sim.ideal_rtt[i] as f64);
        }
    }
    s_fcts.sort_by(f64::total_cmp);
    s_slow.sort_by(f64::total_cmp);
    let finished = crate::analysis::metrics::finished_flows(sim);
    let buckets = crate::analysis::metrics::bucket_stats(
        &crate::analysis::metrics::SizeBuckets::default(),
        &finished,
    );
    let ports = &sim.fabric.ports;
    let sw_ports = ports.iter().filter(|p| sim.is_switch(p.node));
    Summary {
        scenario: sim.name.clone(),
        variant: variant.to_string(),
        params: Default::default(),
        seed: sim.seed,
        outcome: outcome.name().to_string(),
        stall: match outcome {
            Outcome::Stalled(r) => Some(r.clone()),
            _ => None,
        },
        livelock: match outcome {
            Outcome::Livelock(r) => Some(r.clone()),
            _ => None,
        },
        sim_end_ns: ns(sim.ctx.now),
        wall_seconds,
        events: sim.events(),
        packet_hops,
        packet_hops_per_sec: if wall_seconds > 0.0 {
            packet_hops as f64 / wall_seconds
        } else {
            0.0
        },
        flows: sim.nics.flows.len(),
        flows_completed: sim.flows_done(),
        fct_mean_ns: crate::analysis::metrics::mean(&fcts) / 1000.0,
        slowdown_mean: crate::analysis::metrics::mean(&slow),
        fct_p50_ns: quantile(&fcts, 0.5) / 1000.0,
        fct_p99_ns: quantile(&fcts, 0.99) / 1000.0,
        slowdown_p50: quantile(&slow, 0.5),
        slowdown_p99: quantile(&slow, 0.99),
        slowdown_max: slow.last().copied().unwrap_or(f64::NAN),
        slowdown_min: slow.first().copied().unwrap_or(f64::NAN),
        goodput_gbps: {
            let done: Vec<_> = sim
                .nics
                .flows
                .iter()
                .filter(|f| f.finish.is_some())
                .collect();
            let bytes: u64 = done.iter().map(|f| f.spec.size).sum();
            let t0 = done.iter().map(|f| f.spec.start).min().unwrap_or(0);
            let t1 = done.iter().filter_map(|f| f.finish).max().unwrap_or(0);
            if t1 > t0 {
                bytes as f64 * 8.0 / ((t1 - t0) as f64 / 1e12) / 1e9
            } else {
                f64::NAN
            }
        },
        drops: sim.ctx.counters.drops,
        pause_frames: ports.iter().map(|p| p.stats.pause_frames_sent).sum(),
        paused_ns: ns(ports.iter().map(|p| p.stats.paused_ps).sum()),
        ecn_marks: sim.ctx.counters.ecn_marks,
        cnps: sim.ctx.counters.cnps,
        timeouts: sim.nics.flows.iter().map(|f| f.timeouts as u64).sum(),
        retx_bytes: sim.nics.flows.iter().map(|f| f.retx_bytes).sum(),
        nacks: sim.nics.flows.iter().map(|f| f.nacks as u64).sum(),
        out_of_order_packets: sim.nics.flows.iter().map(|f| f.out_of_order_pkts).sum(),
        invariant_violations: crate::analysis::invariants::check(sim),
        max_queue_bytes: sw_ports.map(|p| p.max_queue_bytes).max().unwrap_or(0),
        peak_packets: sim.ctx.arena.peak(),
        memory_estimate_bytes: sim.memory_estimate,
        parallel: sim.parallel_work(),
        peak_rss_bytes: peak_rss_bytes().unwrap_or(0),
        variant_name: String::new(),
        folder: String::new(),
        jobs: sim.nics.jobs.len(),
        jobs_completed: sim.nics.jobs.iter().filter(|j| j.finish.is_some()).count(),
        jct_mean_ns: {
            let v: Vec<f64> = (0..sim.nics.jobs.len())
                .filter_map(|j| sim.jct(j))
                .map(|t| t as f64)
                .collect();
            if v.is_empty() {
                f64::NAN
            } else {
                v.iter().sum::<f64>() / v.len() as f64 / 1000.0
            }
        },
        jct_max_ns: (0..sim.nics.jobs.len())
            .filter_map(|j| sim.jct(j))
            .max()
            .map(ns)
            .unwrap_or(f64::NAN),
        gse: sim.roles.gse.as_ref().map(|g| g.stats_total()),
        long_haul: crate::model::fabric::roles::dr::LongHaulStats::of(sim),
        collectives: crate::model::hw_collective::HwSummary::of(sim),
        faults: sim.fabric.faults.as_ref().map(|f| f.summary(sim.ctx.now)),
        capture: sim.fabric.capture.as_deref().map(|c| c.stats()),
        jct_lower_bound_ns: if sim.nics.jobs.is_empty() {
            f64::NAN
        } else {
            (0..sim.nics.jobs.len())
                .map(|j| sim.job_lower_bound(j) as f64)
                .sum::<f64>()
                / sim.nics.jobs.len() as f64
                / 1000.0
        },
        slowdown_p95: quantile(&slow, 0.95),
        slowdown_buckets: buckets
            .iter()
            .filter(|b| b.bucket != crate::analysis::metrics::ALL)
            .map(crate::analysis::metrics::BucketSlowdown::from)
            .collect(),
        slowdown_cdf: crate::analysis::metrics::cdf_points(
            &slow,
            crate::analysis::metrics::SUMMARY_CDF_POINTS,
        ),
        convergence: sim
            .convergence
            .as_ref()
            .map(|c| crate::analysis::convergence::analyse(sim, c)),
        window: sim
            .window
            .as_ref()
            .map(|w| crate::analysis::window::analyse(sim, w)),
        mean_queue_bytes: ports
            .iter()
            .filter(|p| sim.is_switch(p.node))
            .map(|p| p.mean_queue_bytes(sim.ctx.now))
            .fold(0.0, f64::max),
        rate_series: crate::analysis::metrics::rate_series(sim, SUMMARY_RATE_FLOWS),
        queue_series: crate::analysis::metrics::queue_series(sim, 1),
        host_rate_gbps: host_rate_gbps(sim),
        tcd_ce_marks: ports.iter().map(|p| p.stats.tcd_ce).sum(),
        tcd_ue_marks: ports.iter().map(|p| p.stats.tcd_ue).sum(),
        sender_fct_mean_ns: crate::analysis::metrics::mean(&s_fcts) / 1000.0,
        sender_fct_p50_ns: quantile(&s_fcts, 0.5) / 1000.0,
        sender_fct_p99_ns: quantile(&s_fcts, 0.99) / 1000.0,
        sender_slowdown_mean: crate::analysis::metrics::mean(&s_slow),
        sender_slowdown_p50: quantile(&s_slow, 0.5),
        sender_slowdown_p99: quantile(&s_slow, 0.99),
    }
}

// The summary's sections of parts that keep their own figures, read off the finished run.
use crate::model::fabric::roles::dr::{DciDirection, LongHaulStats};
use crate::model::hw_collective::HwSummary;

impl HwSummary {
    /// The run's figures, when it has hardware collectives.
    pub fn of(sim: &Simulation) -> Option<HwSummary> {
        let hw = sim.nics.hw.as_deref()?;
        let mut lat = Vec::new();
        let (mut iterations, mut failed, mut timeouts, mut verified) = (0, 0, 0, true);
        for c in &hw.colls {
            for it in &c.iters {
                iterations += 1;
                failed += it.failed as u64;
                timeouts += it.timeouts as u64;
                verified &= it.verified != Some(false);
                if it.done as usize == c.spec.ranks.len() {
                    if let (Some(a), Some(b)) = (it.last_entry, it.finish) {
                        lat.push((b - a) as f64 / 1000.0);
                    }
                }
            }
        }
        Some(HwSummary {
            collectives: hw.colls.len(),
            iterations,
            completed: lat.len(),
            failed,
            timeouts,
            latency_mean_ns: (!lat.is_empty()).then(|| lat.iter().sum::<f64>() / lat.len() as f64),
            latency_max_ns: lat.iter().copied().reduce(f64::max),
            verified,
            packets_sent: hw.sent,
            packets_received: hw.received,
            multicast_copies: sim.fabric.multicast.as_ref().map_or(0, |m| m.replicas),
        })
    }
}

impl LongHaulStats {
    /// The figures of `sim`, if it has DR switches.
    pub fn of(sim: &Simulation) -> Option<LongHaulStats> {
        let st = sim.roles.dr.as_ref()?;
        let ports = &sim.fabric.ports;
        let mut campuses: Vec<u32> = st.dci_ports.iter().map(|&(_, c)| c).collect();
        campuses.sort_unstable();
        campuses.dedup();
        let directions: Vec<DciDirection> = campuses
            .iter()
            .map(|&c| {
                let mine: Vec<&crate::model::fabric::Port> = (st.dci_ports.iter())
                    .filter(|&&(_, pc)| pc == c)
                    .map(|&(p, _)| &ports[p])
                    .collect();
                let tx: u64 = mine.iter().map(|p| p.tx_bytes).sum();
                let max = mine.iter().map(|p| p.tx_bytes).max().unwrap_or(0);
                let mean = tx as f64 / mine.len().max(1) as f64;
                DciDirection {
                    campus: c,
                    ports: mine.len(),
                    tx_bytes: tx,
                    imbalance: if mean > 0.0 { max as f64 / mean } else { 1.0 },
                    drops: mine.iter().map(|p| p.stats.drops).sum(),
                    ports_dropping: mine.iter().filter(|p| p.stats.drops > 0).count(),
                    max_queue_bytes: mine.iter().map(|p| p.max_queue_bytes).max().unwrap_or(0),
                }
            })
            .collect();
        let busiest = directions.iter().max_by_key(|d| d.tx_bytes);
        Some(LongHaulStats {
            dci_imbalance: busiest.map_or(1.0, |d| d.imbalance),
            dci_drops: directions.iter().map(|d| d.drops).sum(),
            dr_drops: (sim.fabric.switches.iter())
                .filter(|s| matches!(s.role, crate::model::fabric::roles::SwitchRole::Dr(_)))
                .map(|s| s.drops)
                .sum(),
            dr_cnps: st.cnps.iter().sum(),
            directions,
        })
    }
}

/// The fastest line rate of a port on a host (Gbps; NaN without hosts).
pub fn host_rate_gbps(sim: &Simulation) -> f64 {
    sim.fabric
        .ports
        .iter()
        .filter(|p| !sim.is_switch(p.node))
        .map(|p| p.rate.0 as f64 / 1e9)
        .fold(f64::NAN, f64::max)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(name: &str, fct_p50_ns: f64, jobs: usize) -> Summary {
        Summary {
            variant: name.into(),
            outcome: "completed".into(),
            flows: 16,
            flows_completed: 16,
            fct_p50_ns,
            fct_p99_ns: fct_p50_ns * 3.0,
            slowdown_p50: 1.5,
            slowdown_p99: 4.25,
            sim_end_ns: 5_210_000.0,
            jobs,
            jobs_completed: jobs,
            jct_mean_ns: if jobs > 0 { 2_000_000.0 } else { f64::NAN },
            jct_max_ns: if jobs > 0 { 2_500_000.0 } else { f64::NAN },
            jct_lower_bound_ns: if jobs > 0 { 1_600_000.0 } else { f64::NAN },
            ..Default::default()
        }
    }

    #[test]
    fn columns_fit_their_content_and_one_unit_serves_the_table() {
        let long = "a-rather-long-run-name-without-coordinates";
        let t = table(&[row(long, 12_346.0, 0), row("x", f64::NAN, 0)]);
        let lines: Vec<&str> = t.lines().collect();
        assert_eq!(lines.len(), 3, "{t}");
        // No name is cut, and the first column is as wide as the longest one; all
        // completed: no outcome column.
        assert!(lines[1].starts_with(&format!("{long}  16/16")), "{t}");
        assert!(lines[0].starts_with(&format!("{:<w$}  flows", "run", w = long.len())));
        assert!(!t.contains("completed"), "{t}");
        // One time unit for the whole table, the one in which the smallest figure
        // (12.346 us) is at least 1: us, although the sim time (5.21 ms) would read
        // in ms alone.
        for h in ["FCT p50/p99 (us)", "sim (us)", "drops", "pauses"] {
            assert!(lines[0].contains(h), "{h}: {t}");
        }
        assert!(!t.contains("(ms)"), "{t}");
        assert!(lines[1].contains(" 12.35/37.04 "), "{t}");
        assert!(lines[1].ends_with(" 5210"), "{t}");
        // Every column right-aligned after the names: every line ends at one place.
        assert!(lines.iter().all(|l| l.len() == lines[0].len()), "{t}");
        // Undefined figures are a dash, not NaN.
        assert!(lines[2].contains(" - ") && !t.contains("NaN"), "{t}");
        // No JCT columns without jobs.
        assert!(!t.contains("JCT"), "{t}");
    }

    #[test]
    fn a_sweep_is_named_by_its_variant_and_axes_not_by_long_names() {
        let mut rows = Vec::new();
        for (v, size, seed) in [("gse", "1MiB", "1"), ("roce", "16MiB", "2")] {
            let mut r = row(&format!("{v}-size={size}-replicate={seed}"), 2e6, 0);
            r.variant_name = v.into();
            r.params = [("size", size), ("replicate", seed)]
                .into_iter()
                .map(|(k, x)| (k.to_string(), x.to_string()))
                .collect();
            rows.push(r);
        }
        rows[1].outcome = "max_time".into();
        let t = table(&rows);
        let lines: Vec<&str> = t.lines().collect();
        // The axes in the order the names give them, not alphabetical.
        let words: Vec<&str> = lines[0].split_whitespace().collect();
        assert_eq!(
            &words[..4],
            ["variant", "size", "replicate", "outcome"],
            "{t}"
        );
        assert!(
            !t.contains("size=") && lines[2].starts_with("roce     16MiB"),
            "{t}"
        );
        // All times in ms (the smallest, 2 ms, is at least 1 ms).
        assert!(lines[0].contains("FCT p50/p99 (ms)") && lines[0].contains("sim (ms)"));
        assert!(
            lines[1].contains(" 2.000/6.000 ") && lines[1].ends_with(" 5.210"),
            "{t}"
        );
        assert!(lines[2].contains("max_time"), "{t}");
    }

    #[test]
    fn collective_runs_get_jct_columns() {
        let t = table(&[row("ring", 5_000.0, 4), row("flows", 5_000.0, 0)]);
        let lines: Vec<&str> = t.lines().collect();
        for h in ["jobs", "JCT mean/max (us)", "JCT/LB"] {
            assert!(lines[0].contains(h), "{h}: {t}");
        }
        // 2 ms mean over a 1.6 ms bound: 1.25.
        assert!(
            lines[1].contains("4/4") && lines[1].contains("2000/2500"),
            "{t}"
        );
        assert!(lines[1].contains("1.25"), "{t}");
        assert!(lines[2].contains("0/0"), "{t}");
        assert!(lines.iter().all(|l| l.len() == lines[0].len()), "{t}");
    }
}
