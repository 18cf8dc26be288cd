//! `comparison.csv`: one row per run of a multi-run scenario, one column per sweep axis.

use super::cells::{finite, header_of, CsvOut, Fixed};
use super::{Scope, SweepData, Table};
use crate::analysis::metrics::SizeBuckets;
use crate::output::Summary;
use serde::Serialize;

/// The table's entry in [`super::TABLES`].
pub const TABLE: Table = Table {
    file: "comparison.csv",
    about: "one row per run: its name, its sweep coordinates (one column per axis) and its \
            headline figures (FCT, slowdown overall and per size bucket, drops, PFC, \
            queues, JCT, convergence, retransmissions, reordering)",
    scope: Scope::Sweep {
        present: |_| true,
        write,
    },
};

/// First column: the run's name (variant and sweep point).
#[derive(Default, Serialize)]
struct Name<'a> {
    variant: &'a str,
}

/// The figures after the sweep columns, up to the per-bucket columns.
#[derive(Default, Serialize)]
struct Head<'a> {
    outcome: &'a str,
    flows: usize,
    flows_completed: usize,
    goodput_gbps: Fixed<4>,
    fct_p50_ns: Fixed<3>,
    fct_p99_ns: Fixed<3>,
    slowdown_p50: Fixed<6>,
    slowdown_p99: Fixed<6>,
    slowdown_max: Fixed<6>,
    drops: u64,
    pause_frames: u64,
    paused_ns: Fixed<3>,
    ecn_marks: u64,
    cnps: u64,
    timeouts: u64,
    max_queue_bytes: u64,
    sim_end_ns: Fixed<3>,
    jobs_completed: usize,
    jct_mean_ns: Fixed<3>,
    jct_max_ns: Fixed<3>,
    jct_lower_bound_ns: Fixed<3>,
    // Columns appended later print an undefined value (no finished flow) as empty.
    slowdown_p95: Option<Fixed<6>>,
}

/// The figures after the per-bucket columns.
#[derive(Default, Serialize)]
struct Tail {
    mean_queue_bytes: Fixed<1>,
    tcd_ce_marks: u64,
    tcd_ue_marks: u64,
    time_to_cut_ns: Option<Fixed<3>>,
    time_to_fair_ns: Option<Fixed<3>>,
    retx_bytes: u64,
    nacks: u64,
    out_of_order_packets: u64,
    /// Most bytes one GSP's reorder buffers held (empty without GSE).
    reorder_max_bytes: Option<u64>,
}

fn write(d: &SweepData, out: &mut CsvOut) -> csv::Result<()> {
    let rows = d.rows;
    // Axis columns in the order of the runs' coordinate maps, as the table always had.
    let axes: Vec<&str> = rows
        .first()
        .map(|r| r.params.keys().map(String::as_str).collect())
        .unwrap_or_default();
    let buckets = SizeBuckets::default();
    let mut header = header_of::<Name>()?;
    header.extend(axes.iter().map(|a| a.to_string()));
    header.extend(header_of::<Head>()?);
    header.extend((0..buckets.len()).map(|i| format!("slowdown_p99_{}", buckets.key(i))));
    header.extend(header_of::<Tail>()?);
    out.header(&header)?;
    for r in rows {
        let coords: Vec<&str> = axes
            .iter()
            .map(|a| r.params.get(*a).map(String::as_str).unwrap_or(""))
            .collect();
        let per_bucket: Vec<Option<Fixed<6>>> = (0..buckets.len())
            .map(|i| {
                finite(
                    r.slowdown_buckets
                        .get(i)
                        .map_or(f64::NAN, |b| b.slowdown_p99),
                )
            })
            .collect();
        let conv = |f: fn(&crate::analysis::convergence::Convergence) -> Option<f64>| {
            r.convergence.as_ref().and_then(f).map(Fixed)
        };
        out.row(&(
            Name {
                variant: &r.variant,
            },
            coords,
            head(r),
            per_bucket,
            Tail {
                mean_queue_bytes: Fixed(r.mean_queue_bytes),
                tcd_ce_marks: r.tcd_ce_marks,
                tcd_ue_marks: r.tcd_ue_marks,
                time_to_cut_ns: conv(|c| c.time_to_cut_ns),
                time_to_fair_ns: conv(|c| c.time_to_fair_ns),
                retx_bytes: r.retx_bytes,
                nacks: r.nacks,
                out_of_order_packets: r.out_of_order_packets,
                reorder_max_bytes: r.gse.as_ref().map(|g| g.reorder_max_bytes),
            },
        ))?;
    }
    Ok(())
}

fn head(r: &Summary) -> Head<'_> {
    Head {
        outcome: &r.outcome,
        flows: r.flows,
        flows_completed: r.flows_completed,
        goodput_gbps: Fixed(r.goodput_gbps),
        fct_p50_ns: Fixed(r.fct_p50_ns),
        fct_p99_ns: Fixed(r.fct_p99_ns),
        slowdown_p50: Fixed(r.slowdown_p50),
        slowdown_p99: Fixed(r.slowdown_p99),
        slowdown_max: Fixed(r.slowdown_max),
        drops: r.drops,
        pause_frames: r.pause_frames,
        paused_ns: Fixed(r.paused_ns),
        ecn_marks: r.ecn_marks,
        cnps: r.cnps,
        timeouts: r.timeouts,
        max_queue_bytes: r.max_queue_bytes,
        sim_end_ns: Fixed(r.sim_end_ns),
        jobs_completed: r.jobs_completed,
        jct_mean_ns: Fixed(r.jct_mean_ns),
        jct_max_ns: Fixed(r.jct_max_ns),
        jct_lower_bound_ns: Fixed(r.jct_lower_bound_ns),
        slowdown_p95: finite(r.slowdown_p95),
    }
}
