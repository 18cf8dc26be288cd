//! `fabricsim list`: every section of a scenario file with its parameters and defaults.
//!
//! Nothing here is a default value or a model's name: each section describes itself
//! ([`Described`]), and the registries name the topology kinds, load balancers,
//! congestion controls and workload kinds. So this list cannot drift from the code.

use fabricsim::cc::{BaseRtt, CcCfg, CcClassCfg, FlowContext, ALGORITHMS};
use fabricsim::convergence::ConvergenceCfg;
use fabricsim::fabric::ecn::EcnCfg;
use fabricsim::fabric::flow_control::credit::CreditCfg;
use fabricsim::fabric::pfc::PfcCfg;
use fabricsim::fabric::security::SecurityCfg;
use fabricsim::gse::GseCfg;
use fabricsim::param::{Described, KindEntry, Param};
use fabricsim::routing::{LoadBalanceCfg, BALANCERS};
use fabricsim::scenario::config::{FabricCfg, RecordCfg, Scenario, SweepAxisCfg, VariantCfg};
use fabricsim::telemetry::int::{INT_BYTES_PER_HOP, MAX_INT_HOPS};
use fabricsim::telemetry::tcd::TcdCfg;
use fabricsim::transport::rdma::TransportCfg;
use fabricsim::window::WindowCfg;
use fabricsim::{topology, workload};
use std::fmt::Write;

/// The whole listing.
pub fn text() -> String {
    let mut s = String::new();
    let w = &mut s;
    let _ = writeln!(
        w,
        "Every section of a scenario file, its parameters and their defaults.\n\
         Values are written as in a scenario file; `required` has no default, `unset` is\n\
         optional (the note says what leaving it out means)."
    );
    described::<Scenario>(w, "Scenario top level");
    profiles(w);
    kinds(w, "[topology]", topology::KINDS);
    described::<FabricCfg>(w, "[fabric]");
    described::<PfcCfg>(w, "[fabric.pfc]");
    described::<CreditCfg>(w, "[fabric.credit]");
    described::<EcnCfg>(w, "[fabric.ecn]");
    described::<LoadBalanceCfg>(w, "[fabric.load_balance]");
    described::<fabricsim::routing::ecmp::EcmpHashCfg>(w, "[fabric.load_balance.hash]");
    let names: Vec<&str> = BALANCERS.iter().map(|e| e.name).collect();
    let width = names.iter().map(|n| n.len()).max().unwrap_or(0);
    for e in BALANCERS {
        let _ = writeln!(w, "    {:<width$}  {}", e.name, e.about);
    }
    described::<GseCfg>(w, "[fabric.gse]");
    described::<SecurityCfg>(w, "[fabric.security]");
    described::<TcdCfg>(w, "[fabric.tcd]");
    described::<fabricsim::telemetry::int::IntCfg>(w, "[fabric.int]");
    described::<fabricsim::longhaul::dr::DrCfg>(w, "[fabric.dr]");
    described::<fabricsim::faults::config::ReliabilityCfg>(w, "[fabric.reliability]");
    described::<TransportCfg>(w, "[transport]");
    described::<fabricsim::transport::message::MessageCfg>(w, "[transport.message]");
    described::<CcCfg>(w, "[cc]");
    described::<CcClassCfg>(w, "[[cc.class]]");
    congestion_controls(w);
    kinds(w, "[[workload]]", workload::KINDS);
    described::<fabricsim::workload::window::WindowCfg>(
        w,
        "window = { ... } of a collective [[workload]]",
    );
    described::<RecordCfg>(w, "[record]");
    described::<ConvergenceCfg>(w, "[record.convergence]");
    described::<WindowCfg>(w, "[record.window]");
    described::<fabricsim::capture::PcapCfg>(w, "[record.pcap]");
    described::<VariantCfg>(w, "[[variants]]");
    described::<SweepAxisCfg>(w, "[[sweep]]");
    described::<fabricsim::faults::config::FaultCfg>(w, "[[fault]]");
    s
}

/// The fabric profiles and the fields each sets.
fn profiles(w: &mut String) {
    use fabricsim::scenario::profile::PROFILES;
    let names: Vec<String> = PROFILES.iter().map(|p| format!("\"{}\"", p.name)).collect();
    let _ = writeln!(w, "\nprofile = {}", names.join(" | "));
    for p in PROFILES {
        let _ = writeln!(w, "  profile = \"{}\": {}", p.name, p.about);
        for (path, value) in p.settings {
            let _ = writeln!(w, "    {path} = {value}");
        }
    }
}

/// A section that describes itself.
fn described<T: Described>(w: &mut String, heading: &str) {
    let _ = writeln!(w, "\n{heading}  {}", T::ABOUT);
    rows(w, "  ", &T::params());
}

/// A section tagged by `kind`: each kind with its parameters.
fn kinds(w: &mut String, heading: &str, kinds: &[KindEntry]) {
    let names: Vec<String> = kinds.iter().map(|k| format!("\"{}\"", k.name)).collect();
    let _ = writeln!(w, "\n{heading}  kind = {}", names.join(" | "));
    for k in kinds {
        let _ = writeln!(w, "  kind = \"{}\": {}", k.name, k.about);
        rows(w, "    ", &(k.params)());
    }
}

/// Every congestion control with the parameters it resolves to for an example flow.
fn congestion_controls(w: &mut String) {
    let ctx = FlowContext::LISTING;
    let _ = writeln!(
        w,
        "\n[cc] algorithms, with the values they resolve to for a {} NIC and a {} base RTT",
        ctx.line,
        fabricsim::units::fmt_time(ctx.base_rtt)
    );
    let cc = CcCfg::default();
    for e in ALGORITHMS {
        let mut needs = Vec::new();
        if e.reads_cnp {
            needs.push("CNPs for ECN-marked packets".to_string());
        }
        if e.reads_int {
            needs.push(format!(
                "INT records ({INT_BYTES_PER_HOP} B per hop, at most {MAX_INT_HOPS} hops)"
            ));
        }
        if e.reads_tcd {
            needs.push("TCD marks (switches run TCD)".to_string());
        }
        match e.base_rtt {
            BaseRtt::Unused => {}
            BaseRtt::PerFlow => needs.push("the flow's base RTT".to_string()),
            BaseRtt::Longest => needs.push("the longest base RTT of its flows".to_string()),
        }
        let _ = writeln!(w, "  algorithm = \"{}\": {}", e.name, e.about);
        if !needs.is_empty() {
            let _ = writeln!(w, "    reads {}", needs.join("; "));
        }
        if let Some(section) = e.section {
            let _ = writeln!(w, "    [cc.{section}]");
            rows(w, "      ", &(e.params)(&cc, &ctx));
        }
    }
}

/// Parameter rows in aligned columns.
fn rows(w: &mut String, indent: &str, params: &[Param]) {
    let nw = params.iter().map(|p| p.name.len()).max().unwrap_or(0);
    let vw = params
        .iter()
        .map(|p| p.value.len())
        .filter(|&l| l <= 16)
        .max()
        .unwrap_or(0);
    for p in params {
        let line = format!("{indent}{:<nw$}  {:<vw$}  {}", p.name, p.value, p.note);
        let _ = writeln!(w, "{}", line.trim_end());
    }
}
