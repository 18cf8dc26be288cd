//! `training.csv`: one row per iteration of each training job.
//!
//! Jobs split across campuses (document 001): the iteration's time, the time of the
//! same job inside one campus (computed: transfers at the NIC's goodput, no fibre), the
//! time the split adds, the compute loss, and the analytic compute-loss model evaluated
//! on the same inputs, with `k` and `alpha_LB` as measured in the run.
//!
//! Trace jobs (`kind = "trace"`), after them: the iteration's time (from the job's
//! start, or the end of its previous iteration, to the last rank's end), the compute of
//! its busiest rank (stragglers included), the exposed communication (the time less
//! that compute: what communication and waiting add), the same iteration with the job
//! alone on the fabric, on the same GPUs (run, see `alone`), and the slowdown, time
//! over alone.

use super::cells::{CsvOut, Fixed, Ns};
use super::{RunData, Scope, Table};
use crate::base::units::Rate;
use crate::model::fabric::roles::dr::LongHaulStats;
use crate::model::longhaul::CrossDciInputs;
use crate::model::workload::training::TrainingSpec;
use crate::sim::Simulation;
use serde::Serialize;

/// The table's entry in [`super::TABLES`].
pub const TABLE: Table = Table {
    file: "training.csv",
    about: "one row per training iteration: time, the same job inside one campus \
            (computed), the time the split adds, compute loss, and the compute-loss model's prediction \
            with k and alpha_LB measured",
    scope: Scope::Run {
        present: |r| !r.sim.trainings.is_empty() || !r.sim.traces.is_empty(),
        write,
    },
};

#[derive(Default, Serialize)]
struct TrainingRow {
    job: usize,
    parallelism: &'static str,
    iteration: usize,
    start_ns: Ns,
    end_ns: Option<Ns>,
    time_ns: Option<Ns>,
    one_campus_ns: Option<Ns>,
    added_ns: Option<Ns>,
    loss: Option<Fixed<4>>,
    model_loss: Option<Fixed<4>>,
    model_t_cross_ns: Option<Ns>,
    pairs: u32,
    crossings: u32,
    cross_bytes: u64,
    rtt_ns: Option<Ns>,
    k: Option<Fixed<4>>,
    alpha_lb: Option<Fixed<4>>,
    name: String,
    ranks: Option<usize>,
    placement: String,
    compute_ns: Option<Ns>,
    exposed_comm_ns: Option<Ns>,
    alone_ns: Option<Ns>,
    slowdown: Option<Fixed<4>>,
}

/// Transmissions per byte of the job's cross-DCI transfers: (bytes sent, retransmissions
/// included) / bytes.
fn transmissions_per_byte(sim: &Simulation, t: &TrainingSpec) -> f64 {
    let (mut sent, mut useful) = (0u64, 0u64);
    for &f in &t.cross_flows {
        let fl = &sim.nics.flows[f as usize];
        useful += fl.spec.size;
        sent += fl.spec.size + fl.retx_bytes;
    }
    sent as f64 / useful.max(1) as f64
}

/// DCI capacity of one direction: the busiest direction's ports' line rate.
fn dci_capacity(sim: &Simulation) -> Option<Rate> {
    let st = sim.roles.dr.as_ref()?;
    let mut by_campus: std::collections::BTreeMap<u32, u64> = Default::default();
    for &(p, c) in &st.dci_ports {
        *by_campus.entry(c).or_default() += sim.fabric.ports[p].rate.0;
    }
    by_campus.values().max().map(|&b| Rate(b))
}

fn write(r: &RunData, out: &mut CsvOut) -> csv::Result<()> {
    let sim = r.sim;
    let lh = LongHaulStats::of(sim);
    let mut rows = Vec::new();
    for (j, t) in sim.trainings.iter().enumerate() {
        let flows = &sim.nics.flows;
        let ends = t.iteration_ends(|p| sim.phase_times(p).1);
        // The NIC goodput of the job's first cross transfer's sender.
        let nic_bps = t.cross_flows.first().map_or(1.0, |&f| {
            let src = flows[f as usize].spec.src;
            let rate = sim.fabric.ports[sim.nics.hosts[src as usize].port]
                .ser_rate
                .0 as f64;
            let (mtu, hdr) = (sim.ctx.params.mtu as f64, sim.ctx.params.header as f64);
            rate * mtu / (mtu + hdr)
        });
        let compute = t.reference_iteration(nic_bps);
        let k = transmissions_per_byte(sim, t);
        let alpha = lh.as_ref().map(|l| 1.0 / l.dci_imbalance.max(1.0));
        let rtt = t.cross_flows.first().map(|&f| sim.base_rtt_of(f as usize));
        let model = match (dci_capacity(sim), alpha, rtt) {
            (Some(bw), Some(alpha), Some(rtt)) => CrossDciInputs {
                msg_size: t.cross_bytes,
                pairs_cross_dci: t.pairs,
                rtt,
                bw_dr: bw,
                k: k.max(1.0),
                alpha_lb: alpha,
                crossings: t.crossings,
            }
            .evaluate(compute)
            .ok(),
            _ => None,
        };
        let mut start = t.start;
        for (i, end) in ends.iter().enumerate() {
            let time = end.map(|e| e.saturating_sub(start));
            rows.push(TrainingRow {
                job: j,
                parallelism: t.parallelism.name(),
                iteration: i,
                start_ns: Ns(start),
                end_ns: end.map(Ns),
                time_ns: time.map(Ns),
                one_campus_ns: Some(Ns(compute)),
                added_ns: time.map(|x| Ns(x.saturating_sub(compute))),
                loss: time.map(|x| Fixed(x.saturating_sub(compute) as f64 / compute.max(1) as f64)),
                model_loss: model.as_ref().map(|m| Fixed(m.loss)),
                model_t_cross_ns: model.as_ref().map(|m| Ns(m.t_cross)),
                pairs: t.pairs,
                crossings: t.crossings,
                cross_bytes: t.cross_bytes,
                rtt_ns: rtt.map(Ns),
                k: Some(Fixed(k)),
                alpha_lb: alpha.map(Fixed),
                ..Default::default()
            });
            match end {
                Some(e) => start = *e,
                None => break,
            }
        }
    }
    let j0 = sim.trainings.len();
    for (j, t) in sim.traces.iter().enumerate() {
        let ends = t.iteration_ends(|p| sim.phase_times(p).1);
        let times = t.iteration_times(|p| sim.phase_times(p).1);
        let compute = t.compute.iter().copied().max().unwrap_or(0);
        let mut start = t.start;
        for (i, (end, time)) in ends.iter().zip(&times).enumerate() {
            let alone = (t.alone_times.as_ref()).and_then(|a| a.get(i).copied().flatten());
            rows.push(TrainingRow {
                job: j0 + j,
                parallelism: "trace",
                iteration: i,
                start_ns: Ns(start),
                end_ns: end.map(Ns),
                time_ns: time.map(Ns),
                name: t.name.clone(),
                ranks: Some(t.hosts.len()),
                placement: t.placement.clone(),
                compute_ns: Some(Ns(compute)),
                exposed_comm_ns: time.map(|x| Ns(x.saturating_sub(compute))),
                alone_ns: alone.map(Ns),
                slowdown: time
                    .zip(alone)
                    .map(|(x, a)| Fixed(x as f64 / a.max(1) as f64)),
                ..Default::default()
            });
            match end {
                Some(e) => start = *e,
                None => break,
            }
        }
    }
    out.table(rows)
}
