//! Results of a run: the summary and the tables written under `--out DIR`.
//!
//! - `summary.json`: scenario, seed, outcome, simulated end time, wall time, events,
//!   packet-hops and the headline metrics;
//! - `flows.csv`: `flow_id,src,dst,size_bytes,start_ns,finish_ns,fct_ns,ideal_fct_ns,slowdown`;
//! - `buckets.csv`: slowdown p50/p95/p99 and FCT p50/p99 per flow-size bucket and `all`
//!   (see [`crate::metrics`]);
//! - `ports.csv`: per port bytes, packets, drops, PFC frames, paused time, max queue, marks;
//! - `queues.csv`, `rates.csv`: time series when `[record]` asks for them;
//! - `report.html`: the run's charts (slowdown CDF and per bucket, rates, queues).
//!
//! Times in tables are nanoseconds written with three decimals, so the picosecond value
//! is exact. Everything but `wall_seconds` and the rates derived from it is a pure
//! function of (scenario, seed).

use crate::sim::{Outcome, Simulation};
use crate::stall::StallReport;
use crate::units::Time;
use serde::Serialize;
use std::fmt::Write as _;
use std::io::Write;
use std::path::Path;

/// Flows per run whose rate series the multi-run report overlays.
pub const SUMMARY_RATE_FLOWS: usize = 4;

/// Headline numbers of one run.
#[derive(Clone, Debug, Serialize)]
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
    /// Longest switch egress queue (bytes).
    pub max_queue_bytes: u64,
    /// Most packets alive at once.
    pub peak_packets: usize,
    /// Variant name alone (without sweep coordinates; empty when there are no variants).
    pub variant_name: String,
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
    pub gse: Option<crate::gse::GseStats>,
    /// 95th percentile slowdown.
    pub slowdown_p95: f64,
    /// Slowdown p50/p99 of finished flows per size bucket (`<10KB`, `10KB-100KB`,
    /// `100KB-1MB`, `>=1MB`; see [`crate::metrics`]).
    pub slowdown_buckets: Vec<crate::metrics::BucketSlowdown>,
    /// Time to cut and to fair share after a join (`[record.convergence]`).
    pub convergence: Option<crate::convergence::Convergence>,
    /// Goodput and queues over a time window (`[record.window]`).
    pub window: Option<crate::window::Window>,
    /// Time-averaged bytes queued at the switch egress port with the longest average
    /// queue (the bottleneck).
    pub mean_queue_bytes: f64,
    /// Data packets marked CE by TCD (sum over switch ports).
    pub tcd_ce_marks: u64,
    /// Data packets marked UE by TCD.
    pub tcd_ue_marks: u64,
    /// Rate vs time (us, Gbps) of the run's most sampled flows (at most
    /// [`SUMMARY_RATE_FLOWS`]), for the multi-run report; not written to `summary.json`.
    #[serde(skip)]
    pub rate_series: Vec<(String, Vec<(f64, f64)>)>,
    /// Queue vs time (us, bytes) of the run's longest sampled switch queue, for the
    /// multi-run report; not written to `summary.json`.
    #[serde(skip)]
    pub queue_series: Vec<(String, Vec<(f64, f64)>)>,
    /// Slowdown CDF (value, fraction of finished flows), thinned to at most
    /// [`crate::metrics::SUMMARY_CDF_POINTS`] points, for the multi-run report; not
    /// written to `summary.json`.
    #[serde(skip)]
    pub slowdown_cdf: Vec<(f64, f64)>,
}

fn ns(t: Time) -> f64 {
    t as f64 / 1000.0
}

fn fmt_ns(t: Time) -> String {
    format!("{}.{:03}", t / 1000, t % 1000)
}

/// Value at quantile q (0..=1) of sorted data, by nearest rank.
pub fn quantile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let rank = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
    sorted[rank - 1]
}

/// FCT of flow i, if it finished.
pub fn fct(sim: &Simulation, i: usize) -> Option<Time> {
    let f = &sim.flows[i];
    f.finish.map(|t| t - f.spec.start)
}

/// Builds the summary of a finished run.
pub fn summarize(sim: &Simulation, variant: &str, outcome: &Outcome, wall_seconds: f64) -> Summary {
    let mut fcts = Vec::new();
    let mut slow = Vec::new();
    for i in 0..sim.flows.len() {
        if let Some(t) = fct(sim, i) {
            fcts.push(t as f64);
            slow.push(t as f64 / sim.ideal[i] as f64);
        }
    }
    fcts.sort_by(f64::total_cmp);
    slow.sort_by(f64::total_cmp);
    let finished = crate::metrics::finished_flows(sim);
    let buckets = crate::metrics::bucket_stats(&crate::metrics::SizeBuckets::default(), &finished);
    let ports = &sim.ports;
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
        sim_end_ns: ns(sim.now),
        wall_seconds,
        events: sim.events(),
        packet_hops: sim.counters.packet_hops,
        packet_hops_per_sec: if wall_seconds > 0.0 {
            sim.counters.packet_hops as f64 / wall_seconds
        } else {
            0.0
        },
        flows: sim.flows.len(),
        flows_completed: sim.flows_done(),
        fct_mean_ns: crate::metrics::mean(&fcts) / 1000.0,
        slowdown_mean: crate::metrics::mean(&slow),
        fct_p50_ns: quantile(&fcts, 0.5) / 1000.0,
        fct_p99_ns: quantile(&fcts, 0.99) / 1000.0,
        slowdown_p50: quantile(&slow, 0.5),
        slowdown_p99: quantile(&slow, 0.99),
        slowdown_max: slow.last().copied().unwrap_or(f64::NAN),
        slowdown_min: slow.first().copied().unwrap_or(f64::NAN),
        goodput_gbps: {
            let done: Vec<_> = sim.flows.iter().filter(|f| f.finish.is_some()).collect();
            let bytes: u64 = done.iter().map(|f| f.spec.size).sum();
            let t0 = done.iter().map(|f| f.spec.start).min().unwrap_or(0);
            let t1 = done.iter().filter_map(|f| f.finish).max().unwrap_or(0);
            if t1 > t0 {
                bytes as f64 * 8.0 / ((t1 - t0) as f64 / 1e12) / 1e9
            } else {
                f64::NAN
            }
        },
        drops: sim.counters.drops,
        pause_frames: ports.iter().map(|p| p.stats.pause_frames_sent).sum(),
        paused_ns: ns(ports.iter().map(|p| p.stats.paused_ps).sum()),
        ecn_marks: sim.counters.ecn_marks,
        cnps: sim.counters.cnps,
        timeouts: sim.flows.iter().map(|f| f.timeouts as u64).sum(),
        retx_bytes: sim.flows.iter().map(|f| f.retx_bytes).sum(),
        max_queue_bytes: sw_ports.map(|p| p.max_queue_bytes).max().unwrap_or(0),
        peak_packets: sim.arena.peak(),
        variant_name: String::new(),
        jobs: sim.jobs.len(),
        jobs_completed: sim.jobs.iter().filter(|j| j.finish.is_some()).count(),
        jct_mean_ns: {
            let v: Vec<f64> = (0..sim.jobs.len())
                .filter_map(|j| sim.jct(j))
                .map(|t| t as f64)
                .collect();
            if v.is_empty() {
                f64::NAN
            } else {
                v.iter().sum::<f64>() / v.len() as f64 / 1000.0
            }
        },
        jct_max_ns: (0..sim.jobs.len())
            .filter_map(|j| sim.jct(j))
            .max()
            .map(ns)
            .unwrap_or(f64::NAN),
        gse: sim.gse.as_ref().map(|g| g.stats.clone()),
        jct_lower_bound_ns: if sim.jobs.is_empty() {
            f64::NAN
        } else {
            (0..sim.jobs.len())
                .map(|j| sim.job_lower_bound(j) as f64)
                .sum::<f64>()
                / sim.jobs.len() as f64
                / 1000.0
        },
        slowdown_p95: quantile(&slow, 0.95),
        slowdown_buckets: buckets
            .iter()
            .filter(|b| b.bucket != crate::metrics::ALL)
            .map(crate::metrics::BucketSlowdown::from)
            .collect(),
        slowdown_cdf: crate::metrics::cdf_points(&slow, crate::metrics::SUMMARY_CDF_POINTS),
        convergence: sim
            .convergence
            .as_ref()
            .map(|c| crate::convergence::analyse(sim, c)),
        window: sim.window.as_ref().map(|w| crate::window::analyse(sim, w)),
        mean_queue_bytes: ports
            .iter()
            .filter(|p| sim.is_switch(p.node))
            .map(|p| p.mean_queue_bytes(sim.now))
            .fold(0.0, f64::max),
        rate_series: crate::metrics::rate_series(sim, SUMMARY_RATE_FLOWS),
        queue_series: crate::metrics::queue_series(sim, 1),
        tcd_ce_marks: ports.iter().map(|p| p.stats.tcd_ce).sum(),
        tcd_ue_marks: ports.iter().map(|p| p.stats.tcd_ue).sum(),
    }
}

/// `jobs.csv`: one row per job iteration.
pub fn jobs_csv(sim: &Simulation) -> String {
    let mut s = String::from(
        "job_id,collective,ranks,size_bytes,start_ns,finish_ns,jct_ns,lower_bound_ns\n",
    );
    for (j, job) in sim.jobs.iter().enumerate() {
        let ranks: Vec<String> = job.spec.ranks.iter().map(|r| r.to_string()).collect();
        let (start, finish, jct) = match (job.started, job.finish) {
            (Some(a), Some(b)) => (fmt_ns(a), fmt_ns(b), fmt_ns(b - a)),
            (Some(a), None) => (fmt_ns(a), String::new(), String::new()),
            _ => (String::new(), String::new(), String::new()),
        };
        let _ = writeln!(
            s,
            "{j},{},{},{},{start},{finish},{jct},{}",
            job.spec.collective.name(),
            ranks.join(" "),
            job.spec.size,
            fmt_ns(sim.job_lower_bound(j))
        );
    }
    s
}

/// `flows.csv` as a string.
pub fn flows_csv(sim: &Simulation) -> String {
    let mut s = String::from(
        "flow_id,src,dst,size_bytes,start_ns,finish_ns,fct_ns,ideal_fct_ns,slowdown\n",
    );
    for (i, f) in sim.flows.iter().enumerate() {
        let ideal = sim.ideal[i];
        let (fin, fc, sl) = match f.finish {
            Some(t) => {
                let fct = t - f.spec.start;
                (
                    fmt_ns(t),
                    fmt_ns(fct),
                    format!("{:.6}", fct as f64 / ideal as f64),
                )
            }
            None => (String::new(), String::new(), String::new()),
        };
        let _ = writeln!(
            s,
            "{i},{},{},{},{},{fin},{fc},{},{sl}",
            f.spec.src,
            f.spec.dst,
            f.spec.size,
            fmt_ns(f.spec.start),
            fmt_ns(ideal)
        );
    }
    s
}

/// `ports.csv` as a string.
pub fn ports_csv(sim: &Simulation) -> String {
    let mut s = String::from("node,port,tx_bytes,tx_packets,drops,pause_frames_sent,paused_ns,max_queue_bytes,ecn_marked,pause_frames_received,resume_frames_sent,mean_queue_bytes,tcd_ce,tcd_ue\n");
    for (i, p) in sim.ports.iter().enumerate() {
        let st = &p.stats;
        let _ = writeln!(
            s,
            "{},{},{},{},{},{},{},{},{},{},{},{:.1},{},{}",
            sim.port_node_name(i as u32),
            p.local,
            p.tx_bytes,
            p.tx_packets,
            st.drops,
            st.pause_frames_sent,
            fmt_ns(st.paused_ps),
            p.max_queue_bytes,
            st.ecn_marked,
            st.pause_frames_received,
            st.resume_frames_sent,
            p.mean_queue_bytes(sim.now),
            st.tcd_ce,
            st.tcd_ue
        );
    }
    s
}

fn write_file(dir: &Path, name: &str, body: &str) -> std::io::Result<()> {
    // Write then rename, so a reader never sees half a file.
    let tmp = dir.join(format!(".{name}.tmp"));
    let mut f = std::fs::File::create(&tmp)?;
    f.write_all(body.as_bytes())?;
    f.sync_all().ok();
    std::fs::rename(tmp, dir.join(name))
}

/// `buckets.csv`: slowdown and FCT quantiles per flow-size bucket, then `all`.
pub fn buckets_csv(sim: &Simulation) -> String {
    let flows = crate::metrics::finished_flows(sim);
    crate::metrics::buckets_csv(&crate::metrics::bucket_stats(
        &crate::metrics::SizeBuckets::default(),
        &flows,
    ))
}

/// Writes every table of a run into `dir` (created if needed), and the run's
/// `report.html`.
pub fn write_all(sim: &Simulation, summary: &Summary, dir: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    write_file(dir, "flows.csv", &flows_csv(sim))?;
    write_file(dir, "buckets.csv", &buckets_csv(sim))?;
    write_file(dir, "ports.csv", &ports_csv(sim))?;
    if !sim.jobs.is_empty() {
        write_file(dir, "jobs.csv", &jobs_csv(sim))?;
    }
    if !sim.record.queue_samples.is_empty() || sim.params.queue_interval.is_some() {
        let mut s = String::from("time_ns,node,port,bytes\n");
        for q in &sim.record.queue_samples {
            let p = &sim.ports[q.port as usize];
            let _ = writeln!(
                s,
                "{},{},{},{}",
                fmt_ns(q.t),
                sim.port_node_name(q.port),
                p.local,
                q.bytes
            );
        }
        write_file(dir, "queues.csv", &s)?;
    }
    if sim.params.rate_interval.is_some() {
        let mut s = String::from("time_ns,flow_id,rate_gbps,goodput_gbps\n");
        for r in &sim.record.rate_samples {
            let _ = writeln!(
                s,
                "{},{},{:.4},{:.4}",
                fmt_ns(r.t),
                r.flow,
                r.rate_bps / 1e9,
                r.goodput_bps / 1e9
            );
        }
        write_file(dir, "rates.csv", &s)?;
    }
    if let Some(c) = &summary.convergence {
        write_file(dir, "convergence.csv", &crate::convergence::csv(c))?;
    }
    if let Some(w) = &summary.window {
        write_file(dir, "window.csv", &crate::window::csv(w))?;
    }
    let title = crate::metrics::run_report_title(summary);
    let sections = crate::metrics::run_report_sections(sim, summary);
    write_file(
        dir,
        "report.html",
        &crate::report::render_html(&title, &sections),
    )?;
    let json = serde_json::to_string_pretty(summary).map_err(std::io::Error::other)?;
    write_file(dir, "summary.json", &(json + "\n"))
}

fn opt_time(ns: f64) -> String {
    if ns.is_finite() {
        crate::units::fmt_time((ns * 1000.0) as Time)
    } else {
        "-".into()
    }
}

/// A fixed-width table of summaries, for the terminal.
pub fn table(rows: &[Summary]) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{:<24} {:>10} {:>11} {:>12} {:>12} {:>9} {:>9} {:>8} {:>8} {:>12}",
        "run",
        "outcome",
        "flows",
        "FCT p50",
        "FCT p99",
        "slow p50",
        "slow p99",
        "drops",
        "pauses",
        "sim time"
    );
    for r in rows {
        let _ = writeln!(
            s,
            "{:<24} {:>10} {:>11} {:>12} {:>12} {:>9.2} {:>9.2} {:>8} {:>8} {:>12}",
            r.variant,
            r.outcome,
            format!("{}/{}", r.flows_completed, r.flows),
            opt_time(r.fct_p50_ns),
            opt_time(r.fct_p99_ns),
            r.slowdown_p50,
            r.slowdown_p99,
            r.drops,
            r.pause_frames,
            crate::units::fmt_time((r.sim_end_ns * 1000.0) as Time),
        );
    }
    s
}

/// `comparison.csv` across variants.
pub fn comparison_csv(rows: &[Summary]) -> String {
    let axes: Vec<String> = rows
        .first()
        .map(|r| r.params.keys().cloned().collect())
        .unwrap_or_default();
    let mut s = String::from("variant,");
    for a in &axes {
        s.push_str(a);
        s.push(',');
    }
    s.push_str("outcome,flows,flows_completed,goodput_gbps,fct_p50_ns,fct_p99_ns,slowdown_p50,slowdown_p99,slowdown_max,drops,pause_frames,paused_ns,ecn_marks,cnps,timeouts,max_queue_bytes,sim_end_ns,jobs_completed,jct_mean_ns,jct_max_ns,jct_lower_bound_ns,slowdown_p95");
    let buckets = crate::metrics::SizeBuckets::default();
    for i in 0..buckets.len() {
        let _ = write!(s, ",slowdown_p99_{}", buckets.key(i));
    }
    s.push_str(",mean_queue_bytes,tcd_ce_marks,tcd_ue_marks,time_to_cut_ns,time_to_fair_ns\n");
    for r in rows {
        let _ = write!(s, "{},", r.variant);
        for a in &axes {
            let _ = write!(s, "{},", r.params.get(a).map(String::as_str).unwrap_or(""));
        }
        let _ = write!(
            s,
            "{},{},{},{:.4},{:.3},{:.3},{:.6},{:.6},{:.6},{},{},{:.3},{},{},{},{},{:.3},{},{:.3},{:.3},{:.3}",
            r.outcome,
            r.flows,
            r.flows_completed,
            r.goodput_gbps,
            r.fct_p50_ns,
            r.fct_p99_ns,
            r.slowdown_p50,
            r.slowdown_p99,
            r.slowdown_max,
            r.drops,
            r.pause_frames,
            r.paused_ns,
            r.ecn_marks,
            r.cnps,
            r.timeouts,
            r.max_queue_bytes,
            r.sim_end_ns,
            r.jobs_completed,
            r.jct_mean_ns,
            r.jct_max_ns,
            r.jct_lower_bound_ns
        );
        // Appended columns: empty when a value is undefined (no finished flow).
        let opt = |v: f64| {
            if v.is_finite() {
                format!("{v:.6}")
            } else {
                String::new()
            }
        };
        let _ = write!(s, ",{}", opt(r.slowdown_p95));
        for i in 0..buckets.len() {
            let v = r
                .slowdown_buckets
                .get(i)
                .map_or(f64::NAN, |b| b.slowdown_p99);
            let _ = write!(s, ",{}", opt(v));
        }
        let conv = |f: fn(&crate::convergence::Convergence) -> Option<f64>| {
            r.convergence
                .as_ref()
                .and_then(f)
                .map(|v| format!("{v:.3}"))
                .unwrap_or_default()
        };
        let _ = writeln!(
            s,
            ",{:.1},{},{},{},{}",
            r.mean_queue_bytes,
            r.tcd_ce_marks,
            r.tcd_ue_marks,
            conv(|c| c.time_to_cut_ns),
            conv(|c| c.time_to_fair_ns)
        );
    }
    s
}

/// Writes `comparison.csv` into `dir`.
pub fn write_comparison(rows: &[Summary], dir: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    write_file(dir, "comparison.csv", &comparison_csv(rows))
}
