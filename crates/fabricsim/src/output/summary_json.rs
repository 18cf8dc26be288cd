//! `summary.json`: the [`Summary`] as written (sections borrowed from it, figures at full
//! precision) and read back for `--resume` and the tables across runs.

use super::summary::*;
use crate::sim::stall::StallReport;
use serde::{Serialize, Serializer};

/// `summary.json`'s sections, borrowed from a [`Summary`].
#[derive(Serialize)]
struct SummaryJson<'a> {
    run: RunJson<'a>,
    speed: SpeedJson,
    flows: FlowsJson<'a>,
    transport: TransportJson,
    fabric: FabricJson,
    jobs: JobsJson,
    gse: Option<&'a crate::model::gse::GseStats>,
    long_haul: Option<&'a crate::model::fabric::roles::dr::LongHaulStats>,
    collectives: Option<&'a crate::model::hw_collective::HwSummary>,
    faults: Option<&'a crate::model::fabric::faults::FaultSummary>,
    convergence: Option<&'a crate::analysis::convergence::Convergence>,
    window: Option<&'a crate::analysis::window::Window>,
    /// `null` unless the run has `[record.pcap]`.
    capture: Option<&'a crate::model::capture::CaptureStats>,
}

/// What ran, and how it ended.
#[derive(Serialize)]
struct RunJson<'a> {
    scenario: &'a str,
    /// Run name: variant and sweep point.
    name: &'a str,
    /// Variant alone (empty without variants).
    variant: &'a str,
    params: &'a std::collections::BTreeMap<String, String>,
    folder: &'a str,
    seed: u64,
    outcome: &'a str,
    stall: Option<&'a StallReport>,
    /// Absent unless the livelock guard stopped the run.
    #[serde(skip_serializing_if = "Option::is_none")]
    livelock: Option<&'a crate::sim::livelock::LivelockReport>,
    /// Invariants the run broke (an empty list for a sound run).
    invariant_violations: &'a [String],
    sim_end_ns: f64,
    fabricsim_version: &'static str,
    git_commit: &'static str,
}

/// The simulator's work; the two per-second figures depend on the machine.
#[derive(Serialize)]
struct SpeedJson {
    wall_seconds: f64,
    events: u64,
    packet_hops: u64,
    packet_hops_per_sec: f64,
    peak_packets: usize,
    memory_estimate_bytes: u64,
    peak_rss_bytes: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    parallel: Option<crate::sim::ParallelWork>,
}

#[derive(Serialize)]
struct FlowsJson<'a> {
    count: usize,
    completed: usize,
    goodput_gbps: f64,
    fct_mean_ns: f64,
    fct_p50_ns: f64,
    fct_p99_ns: f64,
    slowdown_mean: f64,
    slowdown_min: f64,
    slowdown_p50: f64,
    slowdown_p95: f64,
    slowdown_p99: f64,
    slowdown_max: f64,
    buckets: &'a [crate::analysis::metrics::BucketSlowdown],
    sender_fct_mean_ns: f64,
    sender_fct_p50_ns: f64,
    sender_fct_p99_ns: f64,
    sender_slowdown_mean: f64,
    sender_slowdown_p50: f64,
    sender_slowdown_p99: f64,
    definitions: FctDefinitions,
}

/// Which FCT and which ideal each figure of the `flows` section uses, spelled out in
/// the file so a reader comparing with another simulator need not guess.
#[derive(Serialize)]
struct FctDefinitions {
    /// `fct_*`, `slowdown_*`, `buckets`.
    fct: &'static str,
    slowdown: &'static str,
    /// `sender_fct_*`, `sender_slowdown_*`.
    sender_fct: &'static str,
    sender_slowdown: &'static str,
}

const DEFINITIONS: FctDefinitions = FctDefinitions {
    fct: "receiver: last payload byte delivered in order at the receiver, minus the flow's start (flows.csv fct_ns)",
    slowdown: "fct / ideal_fct_ns: the flow alone on its path, pipelined packet by packet, to the receiver's last byte",
    sender_fct: "sender: last ACK received by the sender, minus the flow's start, as the HPCC ns-3 module measures (flows.csv sender_fct_ns)",
    sender_slowdown: "sender_fct / ideal_fct_rtt_ns: the ns-3 module's ideal, base RTT + (size + 48 B per packet) * 8 / bottleneck rate",
};

#[derive(Serialize)]
struct TransportJson {
    cnps: u64,
    timeouts: u64,
    retx_bytes: u64,
    nacks: u64,
    out_of_order_packets: u64,
}

#[derive(Serialize)]
struct FabricJson {
    drops: u64,
    pause_frames: u64,
    paused_ns: f64,
    ecn_marks: u64,
    max_queue_bytes: u64,
    mean_queue_bytes: f64,
    tcd_ce_marks: u64,
    tcd_ue_marks: u64,
}

#[derive(Serialize)]
struct JobsJson {
    count: usize,
    completed: usize,
    jct_mean_ns: f64,
    jct_max_ns: f64,
    jct_lower_bound_ns: f64,
}

impl<'a> From<&'a Summary> for SummaryJson<'a> {
    fn from(s: &'a Summary) -> Self {
        SummaryJson {
            run: RunJson {
                scenario: &s.scenario,
                name: &s.variant,
                variant: &s.variant_name,
                params: &s.params,
                folder: &s.folder,
                seed: s.seed,
                outcome: &s.outcome,
                stall: s.stall.as_ref(),
                livelock: s.livelock.as_ref(),
                invariant_violations: &s.invariant_violations,
                sim_end_ns: s.sim_end_ns,
                fabricsim_version: VERSION,
                git_commit: GIT_COMMIT,
            },
            speed: SpeedJson {
                wall_seconds: s.wall_seconds,
                events: s.events,
                packet_hops: s.packet_hops,
                packet_hops_per_sec: s.packet_hops_per_sec,
                peak_packets: s.peak_packets,
                memory_estimate_bytes: s.memory_estimate_bytes,
                peak_rss_bytes: s.peak_rss_bytes,
                parallel: s.parallel,
            },
            flows: FlowsJson {
                count: s.flows,
                completed: s.flows_completed,
                goodput_gbps: s.goodput_gbps,
                fct_mean_ns: s.fct_mean_ns,
                fct_p50_ns: s.fct_p50_ns,
                fct_p99_ns: s.fct_p99_ns,
                slowdown_mean: s.slowdown_mean,
                slowdown_min: s.slowdown_min,
                slowdown_p50: s.slowdown_p50,
                slowdown_p95: s.slowdown_p95,
                slowdown_p99: s.slowdown_p99,
                slowdown_max: s.slowdown_max,
                buckets: &s.slowdown_buckets,
                sender_fct_mean_ns: s.sender_fct_mean_ns,
                sender_fct_p50_ns: s.sender_fct_p50_ns,
                sender_fct_p99_ns: s.sender_fct_p99_ns,
                sender_slowdown_mean: s.sender_slowdown_mean,
                sender_slowdown_p50: s.sender_slowdown_p50,
                sender_slowdown_p99: s.sender_slowdown_p99,
                definitions: DEFINITIONS,
            },
            transport: TransportJson {
                cnps: s.cnps,
                timeouts: s.timeouts,
                retx_bytes: s.retx_bytes,
                nacks: s.nacks,
                out_of_order_packets: s.out_of_order_packets,
            },
            fabric: FabricJson {
                drops: s.drops,
                pause_frames: s.pause_frames,
                paused_ns: s.paused_ns,
                ecn_marks: s.ecn_marks,
                max_queue_bytes: s.max_queue_bytes,
                mean_queue_bytes: s.mean_queue_bytes,
                tcd_ce_marks: s.tcd_ce_marks,
                tcd_ue_marks: s.tcd_ue_marks,
            },
            jobs: JobsJson {
                count: s.jobs,
                completed: s.jobs_completed,
                jct_mean_ns: s.jct_mean_ns,
                jct_max_ns: s.jct_max_ns,
                jct_lower_bound_ns: s.jct_lower_bound_ns,
            },
            gse: s.gse.as_ref(),
            long_haul: s.long_haul.as_ref(),
            collectives: s.collectives.as_ref(),
            faults: s.faults.as_ref(),
            convergence: s.convergence.as_ref(),
            window: s.window.as_ref(),
            capture: s.capture.as_ref(),
        }
    }
}

/// `summary.json`: the sections of the module documentation. The series kept for the
/// multi-run report (`rate_series`, `queue_series`, `slowdown_cdf`) stay out of it.
impl Serialize for Summary {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        SummaryJson::from(self).serialize(s)
    }
}

/// Reads a `summary.json` back (`fabricsim run --resume` reuses a finished run's row).
/// It restores every figure the tables and the report across runs use, exactly: floats
/// were written as their shortest round-trip text and serde_json reads them back bit for
/// bit (`float_roundtrip`), and a `null` figure (an undefined value, `NaN`, which JSON
/// cannot hold) reads as `NaN`. Left empty: the series kept out of the file
/// (`rate_series`, `queue_series`, `slowdown_cdf`), the host line rate and the sections
/// no table across runs reads (`stall`, `livelock`, `long_haul`, `collectives`, `faults`,
/// `capture`). The error names the field.
pub fn from_json(text: &str) -> Result<Summary, String> {
    use serde_json::Value;
    let v: Value = serde_json::from_str(text).map_err(|e| e.to_string())?;
    let at =
        |p: &str| -> Result<&Value, String> { v.pointer(p).ok_or_else(|| format!("missing {p}")) };
    let s = |p: &str| -> Result<String, String> {
        at(p)?
            .as_str()
            .map(str::to_string)
            .ok_or_else(|| format!("{p} is not a string"))
    };
    let u = |p: &str| -> Result<u64, String> {
        at(p)?
            .as_u64()
            .ok_or_else(|| format!("{p} is not an unsigned integer"))
    };
    let f = |p: &str| -> Result<f64, String> {
        num(at(p)?).ok_or_else(|| format!("{p} is not a number"))
    };
    let opt = |p: &str| -> Result<Option<Value>, String> {
        Ok(Some(at(p)?.clone()).filter(|x| !x.is_null()))
    };
    let params = from("/run/params", at("/run/params")?.clone())?;
    let invariant_violations = from(
        "/run/invariant_violations",
        at("/run/invariant_violations")?.clone(),
    )?;
    let buckets = at("/flows/buckets")?
        .as_array()
        .ok_or("/flows/buckets is not a list")?;
    let mut slowdown_buckets = Vec::new();
    for (i, b) in buckets.iter().enumerate() {
        let g =
            |k: &str| num(&b[k]).ok_or_else(|| format!("/flows/buckets/{i}/{k} is not a number"));
        slowdown_buckets.push(crate::analysis::metrics::BucketSlowdown {
            bucket: b["bucket"]
                .as_str()
                .ok_or_else(|| format!("/flows/buckets/{i}/bucket is not a string"))?
                .to_string(),
            flows: b["flows"]
                .as_u64()
                .ok_or_else(|| format!("/flows/buckets/{i}/flows is not an integer"))?
                as usize,
            slowdown_p50: g("slowdown_p50")?,
            slowdown_p99: g("slowdown_p99")?,
            slowdown_mean: g("slowdown_mean")?,
            fct_mean_ns: g("fct_mean_ns")?,
        });
    }
    Ok(Summary {
        scenario: s("/run/scenario")?,
        variant: s("/run/name")?,
        params,
        seed: u("/run/seed")?,
        outcome: s("/run/outcome")?,
        stall: None,
        livelock: None,
        memory_estimate_bytes: u("/speed/memory_estimate_bytes").unwrap_or(0),
        peak_rss_bytes: u("/speed/peak_rss_bytes").unwrap_or(0),
        parallel: None,
        sim_end_ns: f("/run/sim_end_ns")?,
        wall_seconds: f("/speed/wall_seconds")?,
        events: u("/speed/events")?,
        packet_hops: u("/speed/packet_hops")?,
        packet_hops_per_sec: f("/speed/packet_hops_per_sec")?,
        flows: u("/flows/count")? as usize,
        flows_completed: u("/flows/completed")? as usize,
        fct_mean_ns: f("/flows/fct_mean_ns")?,
        slowdown_mean: f("/flows/slowdown_mean")?,
        fct_p50_ns: f("/flows/fct_p50_ns")?,
        fct_p99_ns: f("/flows/fct_p99_ns")?,
        slowdown_p50: f("/flows/slowdown_p50")?,
        slowdown_p99: f("/flows/slowdown_p99")?,
        slowdown_max: f("/flows/slowdown_max")?,
        slowdown_min: f("/flows/slowdown_min")?,
        goodput_gbps: f("/flows/goodput_gbps")?,
        drops: u("/fabric/drops")?,
        pause_frames: u("/fabric/pause_frames")?,
        paused_ns: f("/fabric/paused_ns")?,
        ecn_marks: u("/fabric/ecn_marks")?,
        cnps: u("/transport/cnps")?,
        timeouts: u("/transport/timeouts")?,
        retx_bytes: u("/transport/retx_bytes")?,
        nacks: u("/transport/nacks")?,
        out_of_order_packets: u("/transport/out_of_order_packets")?,
        invariant_violations,
        max_queue_bytes: u("/fabric/max_queue_bytes")?,
        peak_packets: u("/speed/peak_packets")? as usize,
        variant_name: s("/run/variant")?,
        folder: s("/run/folder")?,
        jobs: u("/jobs/count")? as usize,
        jobs_completed: u("/jobs/completed")? as usize,
        jct_mean_ns: f("/jobs/jct_mean_ns")?,
        jct_max_ns: f("/jobs/jct_max_ns")?,
        jct_lower_bound_ns: f("/jobs/jct_lower_bound_ns")?,
        gse: opt("/gse")?.map(|x| from("/gse", x)).transpose()?,
        long_haul: None,
        collectives: None,
        slowdown_p95: f("/flows/slowdown_p95")?,
        slowdown_buckets,
        convergence: opt("/convergence")?
            .map(|x| from("/convergence", x))
            .transpose()?,
        window: opt("/window")?.map(|x| from("/window", x)).transpose()?,
        mean_queue_bytes: f("/fabric/mean_queue_bytes")?,
        tcd_ce_marks: u("/fabric/tcd_ce_marks")?,
        tcd_ue_marks: u("/fabric/tcd_ue_marks")?,
        rate_series: Vec::new(),
        queue_series: Vec::new(),
        host_rate_gbps: f64::NAN,
        faults: None,
        capture: None,
        sender_fct_mean_ns: f("/flows/sender_fct_mean_ns")?,
        sender_fct_p50_ns: f("/flows/sender_fct_p50_ns")?,
        sender_fct_p99_ns: f("/flows/sender_fct_p99_ns")?,
        sender_slowdown_mean: f("/flows/sender_slowdown_mean")?,
        sender_slowdown_p50: f("/flows/sender_slowdown_p50")?,
        sender_slowdown_p99: f("/flows/sender_slowdown_p99")?,
        slowdown_cdf: Vec::new(),
    })
}

/// A section of `summary.json` read as `T`; the error names the section.
fn from<T: serde::de::DeserializeOwned>(p: &str, x: serde_json::Value) -> Result<T, String> {
    serde_json::from_value(x).map_err(|e| format!("{p}: {e}"))
}

/// A figure of `summary.json`: a number, or `null` for `NaN` (what serde_json writes for
/// a non-finite float).
fn num(v: &serde_json::Value) -> Option<f64> {
    if v.is_null() {
        Some(f64::NAN)
    } else {
        v.as_f64()
    }
}
