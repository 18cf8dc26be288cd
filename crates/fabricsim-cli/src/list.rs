//! `fabricsim list`: every section of a scenario file with its parameters and defaults.
//!
//! Nothing here is a default value or a model's name: each section describes itself
//! ([`Described`]), and the registries name the topology kinds, load balancers,
//! congestion controls and workload kinds. So this list cannot drift from the code.

use fabricsim::base::param::{Described, KindEntry, Param};
use fabricsim::model::cc::{BaseRtt, CcCfg, CcClassCfg, FlowContext, ALGORITHMS};
use fabricsim::model::fabric::ecn::EcnCfg;
use fabricsim::model::fabric::flow_control::credit::CreditCfg;
use fabricsim::model::fabric::pfc::PfcCfg;
use fabricsim::model::fabric::security::SecurityCfg;
use fabricsim::model::fabric::telemetry::int::{INT_BYTES_PER_HOP, MAX_INT_HOPS};
use fabricsim::model::fabric::telemetry::tcd::TcdCfg;
use fabricsim::model::gse::GseCfg;
use fabricsim::model::record::convergence::ConvergenceCfg;
use fabricsim::model::record::window::WindowCfg;
use fabricsim::model::routing::{LoadBalanceCfg, BALANCERS};
use fabricsim::model::transport::rdma::TransportCfg;
use fabricsim::scenario::config::{FabricCfg, RecordCfg, Scenario, SweepAxisCfg, VariantCfg};
use fabricsim::{model::topology, model::workload};
use std::fmt::Write;

/// The listing's text, and every parameter row it prints with the heading it is under
/// (tests read the values back).
#[derive(Default)]
pub struct Listing {
    /// What `fabricsim list` prints.
    pub text: String,
    /// (heading, row) for every parameter row.
    pub rows: Vec<(String, Param)>,
    heading: String,
}

impl Write for Listing {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        self.text.write_str(s)
    }
}

/// The whole listing's text.
pub fn text() -> String {
    listing().text
}

/// The whole listing.
pub fn listing() -> Listing {
    let mut s = Listing::default();
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
    described::<fabricsim::model::routing::ecmp::EcmpHashCfg>(w, "[fabric.load_balance.hash]");
    let names: Vec<&str> = BALANCERS.iter().map(|e| e.name).collect();
    let width = names.iter().map(|n| n.len()).max().unwrap_or(0);
    for e in BALANCERS {
        let _ = writeln!(w, "    {:<width$}  {}", e.name, e.about);
    }
    described::<GseCfg>(w, "[fabric.gse]");
    described::<SecurityCfg>(w, "[fabric.security]");
    described::<TcdCfg>(w, "[fabric.tcd]");
    described::<fabricsim::model::fabric::telemetry::int::IntCfg>(w, "[fabric.int]");
    described::<fabricsim::model::fabric::roles::dr::DrCfg>(w, "[fabric.dr]");
    described::<fabricsim::model::fabric::faults::config::ReliabilityCfg>(
        w,
        "[fabric.reliability]",
    );
    described::<TransportCfg>(w, "[transport]");
    described::<fabricsim::model::transport::message::MessageCfg>(w, "[transport.message]");
    described::<CcCfg>(w, "[cc]");
    described::<CcClassCfg>(w, "[[cc.class]]");
    congestion_controls(w);
    kinds(w, "[[workload]]", workload::KINDS);
    described::<fabricsim::model::workload::channel_window::WindowCfg>(
        w,
        "window = { ... } of a collective [[workload]]",
    );
    described::<RecordCfg>(w, "[record]");
    described::<ConvergenceCfg>(w, "[record.convergence]");
    described::<WindowCfg>(w, "[record.window]");
    described::<fabricsim::model::capture::PcapCfg>(w, "[record.pcap]");
    described::<VariantCfg>(w, "[[variants]]");
    described::<SweepAxisCfg>(w, "[[sweep]]");
    described::<fabricsim::model::fabric::faults::config::FaultCfg>(w, "[[fault]]");
    s
}

/// The fabric profiles and the fields each sets.
fn profiles(w: &mut Listing) {
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
fn described<T: Described>(w: &mut Listing, heading: &str) {
    let _ = writeln!(w, "\n{heading}  {}", T::ABOUT);
    w.heading = heading.to_string();
    rows(w, "  ", &T::params());
}

/// A section tagged by `kind`: each kind with its parameters.
fn kinds(w: &mut Listing, heading: &str, kinds: &[KindEntry]) {
    let names: Vec<String> = kinds.iter().map(|k| format!("\"{}\"", k.name)).collect();
    let _ = writeln!(w, "\n{heading}  kind = {}", names.join(" | "));
    for k in kinds {
        let _ = writeln!(w, "  kind = \"{}\": {}", k.name, k.about);
        w.heading = format!("{heading} kind = \"{}\"", k.name);
        rows(w, "    ", &(k.params)());
    }
}

/// Every congestion control with the parameters it resolves to for an example flow.
fn congestion_controls(w: &mut Listing) {
    let ctx = FlowContext::LISTING;
    let _ = writeln!(
        w,
        "\n[cc] algorithms, with the values they resolve to for a {} NIC and a {} base RTT",
        ctx.line,
        fabricsim::base::units::fmt_time_exact(ctx.base_rtt)
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
            w.heading = format!("[cc.{section}]");
            rows(w, "      ", &(e.params)(&cc, &ctx));
        }
    }
}

/// Parameter rows in aligned columns.
fn rows(w: &mut Listing, indent: &str, params: &[Param]) {
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
        w.rows.push((w.heading.clone(), p.clone()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fabricsim::base::param::Quantity;
    use fabricsim::base::units::{parse_bytes, parse_rate, parse_time};

    /// Every default `list` prints is written as a scenario file would write it, and a
    /// duration, size or rate reads back, through the loader's own unit parser, to the
    /// value the code holds.
    #[test]
    fn every_listed_default_parses_back_to_its_value() {
        let l = listing();
        let mut quantities = 0;
        for (heading, p) in &l.rows {
            let what = format!("{heading} {}: {}", p.name, p.value);
            if ["required", "unset", "table"].contains(&p.value.as_str()) {
                assert!(p.quantity.is_none(), "{what}");
                continue;
            }
            let v = toml::from_str::<toml::Table>(&format!("v = {}", p.value))
                .unwrap_or_else(|e| panic!("{what}: not a TOML value: {e}"))
                .remove("v")
                .expect("the key just written");
            let Some(q) = p.quantity else { continue };
            quantities += 1;
            let s = v
                .as_str()
                .unwrap_or_else(|| panic!("{what}: a quantity is a string with a unit"));
            let back = match q {
                Quantity::Time(t) => parse_time(s).map(|x| x == t),
                Quantity::Bytes(b) => parse_bytes(s).map(|x| x == b),
                Quantity::Rate(r) => parse_rate(s).map(|x| x.0 == r),
            };
            assert_eq!(back, Ok(true), "{what} is {q:?}");
        }
        // The listing has dozens of durations, sizes and rates; none was skipped.
        assert!(quantities >= 40, "only {quantities} quantities listed");
    }

    /// The units are the ones scenario files use: no raw picoseconds, no run of zeros.
    #[test]
    fn quantities_are_in_readable_units() {
        for (heading, p) in listing().rows {
            let Some(q) = p.quantity else { continue };
            let v = p.value.trim_matches('"');
            let digits = v.chars().take_while(|c| c.is_ascii_digit()).count();
            assert!(
                digits <= 4 && !v.contains("000"),
                "{heading} {}: {v} ({q:?})",
                p.name
            );
        }
    }
}
