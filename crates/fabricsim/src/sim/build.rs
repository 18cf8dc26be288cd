//! Build: validate a scenario and resolve its run parameters ([`Simulation::build`]).
//!
//! Every semantic check happens here (or in the models' own `validate`), before any
//! simulated time passes, so that bad input fails fast with the file and field named;
//! the event loop never re-validates.

use crate::engine::MAX_INDEX;
use crate::fabric::port::N_PRIO;
use crate::scenario::config::{LbAlgorithm, Scenario};
use crate::scenario::ScenarioError;
use crate::topology::{self};
use crate::units::Rate;
use std::path::Path;

use crate::sim::*;

impl Simulation {
    /// Validates `sc` and builds the runtime model. `file` names the scenario in errors and
    /// `base_dir` resolves workload files.
    pub fn build(sc: &Scenario, file: &str, base_dir: &Path) -> Result<Simulation, ScenarioError> {
        let g = topology::build(&sc.topology, file, base_dir)?;
        let t = &sc.transport;
        if t.mtu == 0 {
            return Err(err(file, "transport.mtu", "must be at least 1 byte"));
        }
        if t.mtu > 65_536 {
            return Err(err(
                file,
                "transport.mtu",
                format!("{} bytes: at most 64 KiB is allowed", t.mtu),
            ));
        }
        if t.ack_every == 0 {
            return Err(err(file, "transport.ack_every", "must be at least 1"));
        }
        if t.rto == 0 {
            return Err(err(file, "transport.rto", "must be positive"));
        }
        if t.ack_size < 1 {
            return Err(err(file, "transport.ack_size", "must be positive"));
        }
        if t.data_priority as usize >= N_PRIO || t.control_priority as usize >= N_PRIO {
            return Err(err(file, "transport.data_priority", "priorities are 0..7"));
        }
        if t.control_priority <= t.data_priority {
            return Err(err(
                file,
                "transport.control_priority",
                format!(
                    "must be above data_priority ({}): ACKs and CNPs are served strictly first",
                    t.data_priority
                ),
            ));
        }
        let f = &sc.fabric;
        let pkt_max = t.mtu + t.header;
        if f.buffer < 4 * pkt_max {
            return Err(err(
                file,
                "fabric.buffer",
                format!(
                    "{} bytes cannot hold even 4 packets of {} bytes (mtu + header)",
                    f.buffer, pkt_max
                ),
            ));
        }
        if !(f.pfc.alpha > 0.0 && f.pfc.alpha < 256.0) {
            return Err(err(
                file,
                "fabric.pfc.alpha",
                "must be a positive number below 256 (1/8 is usual)",
            ));
        }
        if f.pfc.threshold == crate::scenario::config::PfcThreshold::Static && f.pfc.xoff < pkt_max
        {
            return Err(err(
                file,
                "fabric.pfc.xoff",
                "the static XOFF threshold must hold at least one packet",
            ));
        }
        if let Some(p) = f.ecn.pmax {
            if !(0.0..=1.0).contains(&p) {
                return Err(err(
                    file,
                    "fabric.ecn.pmax",
                    "a probability between 0 and 1",
                ));
            }
        }
        if let (Some(a), Some(b)) = (f.ecn.kmin, f.ecn.kmax) {
            if a > b {
                return Err(err(file, "fabric.ecn.kmin", "must not exceed kmax"));
            }
        }
        let d = &sc.cc.dcqcn;
        if let Some(g) = d.g {
            if !(g > 0.0 && g <= 1.0) {
                return Err(err(
                    file,
                    "cc.dcqcn.g",
                    "a gain between 0 (exclusive) and 1",
                ));
            }
        }
        if d.timer == Some(0) {
            return Err(err(file, "cc.dcqcn.timer", "must be positive"));
        }
        if d.byte_counter == Some(0) {
            return Err(err(file, "cc.dcqcn.byte_counter", "must be positive"));
        }
        for (field, r) in [
            ("cc.dcqcn.rai", d.rai),
            ("cc.dcqcn.rhai", d.rhai),
            ("cc.dcqcn.rmin", d.rmin),
        ] {
            if r == Some(Rate(0)) {
                return Err(err(file, field, "must be positive"));
            }
        }
        for (fld, v) in [
            ("fabric.security.macsec_bytes", f.security.macsec_bytes),
            ("fabric.security.ipsec_bytes", f.security.ipsec_bytes),
        ] {
            if v > 4096 {
                return Err(err(
                    file,
                    fld,
                    format!("{v} bytes per frame: at most 4096 are allowed"),
                ));
            }
        }
        let gc = &f.gse;
        if gc.scheduling == crate::scenario::config::GseScheduling::Dgsq
            && f.load_balance.algorithm != LbAlgorithm::Pktc
        {
            return Err(err(
                file,
                "fabric.gse.scheduling",
                "dgsq schedules PKTC containers: set fabric.load_balance.algorithm = \"pktc\"",
            ));
        }
        if gc.container == 0 {
            return Err(err(file, "fabric.gse.container", "must be at least 1 byte"));
        }
        if !(gc.eps >= 0.0 && gc.eps < 1.0) {
            return Err(err(file, "fabric.gse.eps", "a fraction in [0, 1)"));
        }
        if gc.reorder_timeout == 0 {
            return Err(err(file, "fabric.gse.reorder_timeout", "must be positive"));
        }
        if gc.control_bytes == 0 || gc.control_bytes > 9000 {
            return Err(err(
                file,
                "fabric.gse.control_bytes",
                "between 1 and 9000 bytes",
            ));
        }
        if gc.header > 1024 {
            return Err(err(file, "fabric.gse.header", "at most 1024 bytes"));
        }
        if sc.stall_timeout == 0 {
            return Err(err(file, "stall_timeout", "must be positive"));
        }
        if sc.max_time == 0 {
            return Err(err(file, "max_time", "must be positive"));
        }
        for (fld, v) in [
            ("record.queue_interval", sc.record.queue_interval),
            ("record.rate_interval", sc.record.rate_interval),
        ] {
            if v == Some(0) {
                return Err(err(file, fld, "must be positive"));
            }
        }
        crate::cc::validate(&sc.cc, sc.workload.len(), file)?;
        if let Some(tq) = f.tcd.q_th {
            if tq == 0 {
                return Err(err(file, "fabric.tcd.q_th", "must be positive"));
            }
        }
        if f.tcd.t_on_max == Some(0) {
            return Err(err(file, "fabric.tcd.t_on_max", "must be positive"));
        }
        let wl = crate::workload::generate(&sc.workload, &g, sc.seed, base_dir, file)?;
        if wl.flows.len() > MAX_INDEX as usize {
            return Err(err(
                file,
                "workload",
                format!("{} flows: at most {} per run", wl.flows.len(), MAX_INDEX),
            ));
        }
        let params = RunParams {
            mtu: t.mtu,
            header: t.header,
            ack_size: t.ack_size as u32,
            ack_every: t.ack_every,
            rto: t.rto,
            data_prio: t.data_priority,
            ctrl_prio: t.control_priority,
            pfc: f.pfc.enabled,
            pfc_edge_only: f.pfc.scope == crate::scenario::config::PfcScope::Edge,
            pause_quanta: f.pfc.pause_quanta.max(1),
            lb: f.load_balance.algorithm,
            max_time: sc.max_time,
            stall_timeout: sc.stall_timeout,
            queue_interval: sc.record.queue_interval,
            rate_interval: sc.record.rate_interval.or(sc
                .record
                .convergence
                .as_ref()
                .map(|_| 10 * crate::units::US)),
        };
        let mut sim = Self::assemble(sc, &g, wl, params, file)?;
        if let Some(c) = &sc.record.convergence {
            let spec = crate::convergence::ConvergenceSpec::resolve(c, &sim).map_err(|m| {
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
            sim.window = Some(crate::window::WindowSpec::resolve(w, &sim).map_err(fail)?);
        }
        Ok(sim)
    }
}
