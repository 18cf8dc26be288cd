//! Build: validate a scenario and resolve its run parameters ([`Simulation::build`]).
//!
//! Every semantic check happens here (or in the models' own `validate`), before any
//! simulated time passes, so that bad input fails fast with the file and field named;
//! the event loop never re-validates.

use crate::base::ids::MAX_INDEX;
use crate::base::param::ParamError;
use crate::kernel::packet::MAX_SEQ;
use crate::model::fabric::flow_control::credit::VcLayout;
use crate::model::fabric::pfc::PfcScope;
use crate::model::fabric::telemetry::int::{INT_BYTES_PER_HOP, MAX_INT_HOPS};
use crate::model::gse::GseScheduling;
use crate::model::routing::LbAlgorithm;
use crate::model::topology;
use crate::model::topology::NodeRole;
use crate::model::transport::config::{CnpForm, FeedbackQueue};
use crate::scenario::config::Scenario;
use crate::scenario::ScenarioError;
use std::path::Path;

use crate::sim::*;

impl Simulation {
    /// Validates `sc` and builds the runtime model. `file` names the scenario in errors and
    /// `base_dir` resolves workload files.
    pub fn build(sc: &Scenario, file: &str, base_dir: &Path) -> Result<Simulation, ScenarioError> {
        let at = |section: &'static str| {
            move |e: ParamError| ScenarioError::param(file, e.within(section))
        };
        // The memory the run will hold, from the settings alone, before anything large
        // is allocated: a run that cannot fit is refused here, not aborted later. The
        // graph's own part is checked before the graph is built; the whole once the
        // settings it prices (intervals, buffers) passed their own checks.
        let footprint = crate::scenario::budget::estimate(sc, base_dir)
            .map_err(|e| ScenarioError::param(file, e))?;
        crate::scenario::budget::check(&footprint.of_section("topology"), 1)
            .map_err(|e| ScenarioError::param(file, e))?;
        let g = topology::build(&sc.topology, base_dir).map_err(at("topology"))?;
        let credit = validate_fabric(sc, &g, file)?;
        let f = &sc.fabric;
        crate::model::fabric::faults::config::validate_faults(&sc.fault, sc.max_time)
            .map_err(at("fault"))?;
        let faults =
            crate::model::fabric::faults::config::FaultPlan::resolve(&sc.fault, &f.reliability, &g)
                .map_err(at(""))?;
        check_time_floors(sc, &g).map_err(|e| ScenarioError::param(file, e))?;
        if let Some(p) = &sc.record.pcap {
            p.validate().map_err(at("record.pcap"))?;
        }
        if let Some(t) = &sc.record.timeline {
            t.validate().map_err(at("record.timeline"))?;
        }
        crate::scenario::budget::check(&footprint, 1).map_err(|e| ScenarioError::param(file, e))?;
        sc.cc.validate(sc.workload.len()).map_err(at("cc"))?;
        let workload = || {
            let wl = crate::model::workload::generate(&sc.workload, &g, sc.seed, base_dir)
                .map_err(at("workload"))?;
            if wl.flows.len() > MAX_INDEX as usize {
                return Err(err(
                    file,
                    "workload",
                    format!("{} flows: at most {} per run", wl.flows.len(), MAX_INDEX),
                ));
            }
            // A frame's byte offset is kept in 48 bits (`kernel::packet::Slot`).
            if let Some(f) = wl.flows.iter().find(|f| f.size > MAX_SEQ) {
                return Err(err(
                    file,
                    "workload",
                    format!(
                        "a flow of {} bytes from host {} to host {}: a flow carries at most \
                         {MAX_SEQ} bytes (256 TiB)",
                        f.size, f.src, f.dst
                    ),
                ));
            }
            Ok(wl)
        };
        let params = run_params(sc, credit);
        let mut sim = Self::assemble(sc, &g, workload, params, &faults, file)?;
        sim.memory_estimate = footprint.total();
        sim.resolve_records(sc, file)?;
        Ok(sim)
    }
}

/// The transport and fabric sections checked, each by its own `validate` and against
/// each other; the credit layout when credits are on. Errors name the field.
fn validate_fabric(
    sc: &Scenario,
    g: &topology::TopoGraph,
    file: &str,
) -> Result<Option<VcLayout>, ScenarioError> {
    let at =
        |section: &'static str| move |e: ParamError| ScenarioError::param(file, e.within(section));
    let t = &sc.transport;
    t.validate().map_err(at("transport"))?;
    for (i, w) in sc.workload.iter().enumerate() {
        use crate::model::workload::WorkloadCfg;
        let segment = match w {
            WorkloadCfg::Collective(c) => c.segment,
            WorkloadCfg::Trace(c) => c.segment,
            _ => None,
        };
        if let Some(sg) = segment {
            sg.validate(t.mtu)
                .map_err(|m| err(file, &format!("workload[{i}].segment"), m))?;
        }
    }
    let f = &sc.fabric;
    let pkt_max = super::largest_frame(sc);
    if f.buffer < 4 * pkt_max {
        return Err(err(
            file,
            "fabric.buffer",
            format!(
                "{} bytes cannot hold even 4 frames of {} bytes (mtu + header, or a collective's largest segment)",
                f.buffer, pkt_max
            ),
        ));
    }
    f.pfc.validate(pkt_max).map_err(at("fabric.pfc"))?;
    f.load_balance
        .validate()
        .map_err(at("fabric.load_balance"))?;
    f.credit.validate_fields().map_err(at("fabric.credit"))?;
    let credit = f.credit.enabled.then(|| VcLayout::new(f.credit.vcs as u8));
    if credit.is_some() {
        // A packet grows by its INT records on the way (HPCC).
        let most =
            pkt_max + ((MAX_INT_HOPS as u32 * INT_BYTES_PER_HOP).max(f.int.nic_bytes())) as u64;
        f.credit.validate(most).map_err(at("fabric.credit"))?;
        // A control frame (ACK, NACK, CNP) is no larger than a data packet
        // (`TransportCfg::validate`), so it fits a VC's private credits too.
        let refuse = |what: &str| {
            Err(err(
                file,
                "fabric.credit.enabled",
                format!("credit-based flow control {what}"),
            ))
        };
        if f.pfc.enabled {
            return refuse("replaces PFC: the two are exclusive, set fabric.pfc.enabled = false");
        }
        if f.load_balance.algorithm == LbAlgorithm::Pktc {
            return refuse("does not run with GSE (fabric.load_balance.algorithm = \"pktc\")");
        }
        if t.feedback_queue == FeedbackQueue::Data {
            // Under credits a frame's priority is its virtual channel.
            return Err(err(
                file,
                "transport.feedback_queue",
                "\"data\" puts ACKs in the data priority's queue, a PFC notion; with \
                 credit-based flow control they take the control VC (use \"control\")",
            ));
        }
        if g.nodes.iter().any(|n| matches!(n.role, NodeRole::Dr(_))) {
            return refuse("does not run with DR switches (their DCI side drops)");
        }
    }
    f.ecn.validate().map_err(at("fabric.ecn"))?;
    f.security.validate().map_err(at("fabric.security"))?;
    if f.gse.scheduling == GseScheduling::Dgsq && f.load_balance.algorithm != LbAlgorithm::Pktc {
        return Err(err(
            file,
            "fabric.gse.scheduling",
            "dgsq schedules PKTC containers: set fabric.load_balance.algorithm = \"pktc\"",
        ));
    }
    f.gse.validate().map_err(at("fabric.gse"))?;
    f.tcd.validate().map_err(at("fabric.tcd"))?;
    f.int.validate().map_err(at("fabric.int"))?;
    f.dr.validate().map_err(at("fabric.dr"))?;
    f.reliability.validate().map_err(at("fabric.reliability"))?;
    f.gse.validate().map_err(at("fabric.gse"))?;
    f.tcd.validate().map_err(at("fabric.tcd"))?;
    f.int.validate().map_err(at("fabric.int"))?;
    f.dr.validate().map_err(at("fabric.dr"))?;
    f.reliability.validate().map_err(at("fabric.reliability"))?;
    Ok(credit)
}

/// The run's parameters, resolved from the transport, fabric and record sections
/// (under credits a packet's priority is its VC).
fn run_params(sc: &Scenario, credit: Option<VcLayout>) -> RunParams {
    let (t, f) = (&sc.transport, &sc.fabric);
    RunParams {
        mtu: t.mtu,
        header: t.header,
        ack_size: t.ack_size as u32,
        ack_every: t.ack_every,
        rto: t.rto,
        // Under credits a packet's priority is its VC.
        data_prio: credit.map_or(t.data_priority, |l| l.data()),
        ctrl_prio: credit.map_or(t.control_priority, |l| l.control()),
        feedback_prio: match t.feedback_queue {
            FeedbackQueue::Control => credit.map_or(t.control_priority, |l| l.control()),
            FeedbackQueue::Data => t.data_priority,
        },
        cnp_on_ack: t.cnp == CnpForm::AckFlag,
        int_nic_bytes: f.int.nic_bytes(),
        pfc: f.pfc.enabled,
        pfc_edge_only: f.pfc.scope == PfcScope::Edge,
        pause_quanta: f.pfc.pause_quanta.max(1),
        max_time: sc.max_time,
        stall_timeout: sc.stall_timeout,
        queue_interval: sc.record.queue_interval,
        rate_interval: sc.record.rate_interval.or(sc
            .record
            .convergence
            .as_ref()
            .map(|_| 10 * crate::base::units::US)),
    }
}

impl Simulation {
    /// The `[record]` analyses and capture resolved against the built model
    /// (`resolve.rs`); errors name the field within `[record]`.
    fn resolve_records(&mut self, sc: &Scenario, file: &str) -> Result<(), ScenarioError> {
        let sim = self;
        if let Some(c) = &sc.record.convergence {
            let spec = crate::model::record::convergence::ConvergenceSpec::resolve(c, sim)
                .map_err(|m| {
                    let (f, rest) = m.split_once(": ").unwrap_or(("", m.as_str()));
                    err(file, &format!("record.convergence.{f}"), rest)
                })?;
            sim.convergence = Some(spec);
        }
        if let Some(w) = &sc.record.window {
            let fail = |m: String| {
                let (f, rest) = m.split_once(": ").unwrap_or(("", m.as_str()));
                err(file, &format!("record.window.{f}"), rest)
            };
            if !w.flows.is_empty() && sc.record.rate_interval.is_none() {
                return Err(fail(
                    "flows: goodput comes from the rate samples: set record.rate_interval".into(),
                ));
            }
            if !w.ports.is_empty() && sc.record.queue_interval.is_none() {
                return Err(fail(
                    "ports: queues come from the queue samples: set record.queue_interval".into(),
                ));
            }
            sim.window =
                Some(crate::model::record::window::WindowSpec::resolve(w, sim).map_err(fail)?);
        }
        if let Some(p) = &sc.record.pcap {
            let cap = crate::model::capture::Capture::resolve(p, sim).map_err(|m| {
                let (f, rest) = m.split_once(": ").unwrap_or(("", m.as_str()));
                err(file, &format!("record.pcap.{f}"), rest)
            })?;
            for i in &cap.interfaces {
                sim.fabric.ports[i.port.idx()].set_captured();
            }
            sim.fabric.capture = Some(Box::new(cap));
        }
        Ok(())
    }
}

/// The floors of the scenario's top-level timers and of its sampling intervals
/// ([`crate::base::floors`]); the models check their own sections' timers.
fn check_time_floors(sc: &Scenario, g: &topology::TopoGraph) -> Result<(), ParamError> {
    use crate::base::floors;
    floors::at_least(
        "stall_timeout",
        sc.stall_timeout,
        floors::STALL,
        "no delivery for less than a round trip is no stall",
    )?;
    floors::at_least(
        "max_time",
        sc.max_time,
        floors::TIMER,
        "nothing in a fabric happens in less",
    )?;
    let fastest = g.links.iter().map(|l| l.rate.0).max().unwrap_or(1);
    let floor = floors::sampling_floor(fastest);
    for (fld, v) in [
        ("record.queue_interval", sc.record.queue_interval),
        ("record.rate_interval", sc.record.rate_interval),
    ] {
        floors::opt_at_least(
            fld,
            v,
            floor,
            &format!(
                "one {}-byte frame's time at the fastest link, {}: queues and rates cannot \
                 change faster",
                floors::MIN_FRAME_BYTES,
                Rate(fastest)
            ),
        )?;
    }
    Ok(())
}
