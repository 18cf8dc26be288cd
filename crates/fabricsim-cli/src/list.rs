//! `fabricsim list`: every section of a scenario file with its parameters and defaults;
//! `fabricsim list SECTION` only the sections at or under `SECTION` (`fabric`: every
//! `[fabric.*]`; `fabric.pfc`; `workload.poisson`: one kind of `[[workload]]`;
//! `cc.dcqcn`: one congestion control).
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
    /// The sections: (key, start, end) of each in `text`, in order; a kind or an
    /// algorithm within a section is its own entry (`workload.poisson`), inside its
    /// section's span.
    blocks: Vec<Block>,
}

/// A section of the listing: its key (`fabric.pfc`, `workload`, `workload.poisson`) and
/// its span in the text; `parent` is the index of the section a kind belongs to.
struct Block {
    key: String,
    start: usize,
    end: usize,
    parent: Option<usize>,
}

impl Listing {
    /// Starts a section keyed `key`, ending the one before.
    fn section(&mut self, key: &str) {
        self.end_blocks();
        self.blocks.push(Block {
            key: key.to_string(),
            start: self.text.len(),
            end: usize::MAX,
            parent: None,
        });
    }

    /// Starts a kind `name` within the current section (ending the kind before).
    fn kind(&mut self, name: &str) {
        let parent = self.blocks.iter().rposition(|b| b.parent.is_none());
        if let Some(last) = self.blocks.last_mut().filter(|b| b.parent.is_some()) {
            last.end = self.text.len();
        }
        let key = parent.map_or(name.to_string(), |p| {
            format!("{}.{name}", self.blocks[p].key)
        });
        self.blocks.push(Block {
            key,
            start: self.text.len(),
            end: usize::MAX,
            parent,
        });
    }

    fn end_blocks(&mut self) {
        let n = self.text.len();
        for b in self.blocks.iter_mut().filter(|b| b.end == usize::MAX) {
            b.end = n;
        }
    }

    /// The section keys `fabricsim list SECTION` takes at the top level, in order, each
    /// once.
    pub fn sections(&self) -> Vec<&str> {
        let mut out: Vec<&str> = Vec::new();
        for b in self.blocks.iter().filter(|b| b.parent.is_none()) {
            let top = b.key.split('.').next().unwrap_or(&b.key);
            if !out.contains(&top) {
                out.push(top);
            }
        }
        out
    }

    /// The text of the sections at or under `filter` (`fabric` takes `fabric.pfc`; the
    /// brackets of a heading are ignored: `[fabric.pfc]`, `[[workload]]`); a kind of a
    /// section comes with its section's first line. An error names the sections there
    /// are when none matches.
    pub fn filtered(&self, filter: &str) -> Result<String, String> {
        let f = filter.trim_matches(|c| c == '[' || c == ']').trim();
        let under = |key: &str| key == f || key.starts_with(&format!("{f}."));
        let mut out = String::new();
        let mut taken = vec![false; self.blocks.len()];
        for (i, b) in self.blocks.iter().enumerate() {
            if b.parent.is_some_and(|p| taken[p]) {
                taken[i] = true;
                continue;
            }
            if !under(&b.key) {
                continue;
            }
            taken[i] = true;
            if let Some(p) = b.parent {
                let head = &self.text[self.blocks[p].start..self.blocks[p].end];
                let first = head.trim_start_matches('\n').lines().next().unwrap_or("");
                out.push('\n');
                out.push_str(first);
                out.push('\n');
            }
            out.push_str(&self.text[b.start..b.end]);
        }
        if out.is_empty() {
            let keys: Vec<&str> = self.blocks.iter().map(|b| b.key.as_str()).collect();
            return Err(format!(
                "fabricsim list: no section `{filter}`{}; sections: {} (or one of their \
                 kinds, such as `workload.poisson`, `cc.dcqcn`, `topology.fat_tree`)",
                fabricsim::base::suggest::did_you_mean(f, keys),
                self.sections().join(", ")
            ));
        }
        Ok(out.trim_start_matches('\n').to_string())
    }
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
         optional (the note says what leaving it out means).\n\
         `fabricsim list SECTION` shows one section (fabric, fabric.pfc, cc, workload, ...)."
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
    w.kind("algorithms");
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
    s.end_blocks();
    s
}

/// A heading's section key: `[fabric.pfc]` -> `fabric.pfc`, `[[workload]]` ->
/// `workload`, a heading without brackets (`Scenario top level`) -> `top`, one with text
/// after the brackets -> the brackets' content (`window = { ... } of a collective
/// [[workload]]` is given its key by the caller).
fn key_of(heading: &str) -> String {
    match (heading.find('['), heading.find(']')) {
        (Some(a), Some(b)) if a < b => heading[a..b].trim_matches('[').to_string(),
        _ => "top".to_string(),
    }
}

/// The fabric profiles and the fields each sets.
fn profiles(w: &mut Listing) {
    use fabricsim::scenario::profile::PROFILES;
    let names: Vec<String> = PROFILES.iter().map(|p| format!("\"{}\"", p.name)).collect();
    w.section("profile");
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
    let key = if heading.starts_with("window = ") {
        "workload.window".to_string()
    } else {
        key_of(heading)
    };
    w.section(&key);
    let _ = writeln!(w, "\n{heading}  {}", T::ABOUT);
    w.heading = heading.to_string();
    rows(w, "  ", &T::params());
}

/// A section tagged by `kind`: each kind with its parameters.
fn kinds(w: &mut Listing, heading: &str, kinds: &[KindEntry]) {
    let names: Vec<String> = kinds.iter().map(|k| format!("\"{}\"", k.name)).collect();
    w.section(&key_of(heading));
    let _ = writeln!(w, "\n{heading}  kind = {}", names.join(" | "));
    for k in kinds {
        w.kind(k.name);
        let _ = writeln!(w, "  kind = \"{}\": {}", k.name, k.about);
        w.heading = format!("{heading} kind = \"{}\"", k.name);
        rows(w, "    ", &(k.params)());
    }
}

/// Every congestion control with the parameters it resolves to for an example flow.
fn congestion_controls(w: &mut Listing) {
    let ctx = FlowContext::LISTING;
    w.section("cc");
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
        w.kind(e.name);
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

    /// A section filter keeps its sections and only them: each parameter row of the
    /// whole listing under a heading of the section appears in the filtered text, and a
    /// row of another section does not (its heading's key is not under the filter).
    #[test]
    fn a_section_filter_keeps_its_sections_whole_and_nothing_else() {
        let l = listing();
        let all = l.text.lines().count();
        for f in [
            "fabric",
            "fabric.pfc",
            "[fabric.pfc]",
            "cc",
            "workload",
            "record",
        ] {
            let t = l.filtered(f).unwrap();
            let n = t.lines().count();
            assert!(n > 2 && n < all / 2, "{f}: {n} of {all} lines");
            let key = f.trim_matches(|c| c == '[' || c == ']');
            for (heading, p) in &l.rows {
                let hk = key_of(heading);
                let under = hk == key || hk.starts_with(&format!("{key}."));
                if under {
                    assert!(t.contains(&p.note), "{f}: {heading} {} missing", p.name);
                }
            }
        }
        // One kind of a section: its own rows under the section's first line.
        let t = l.filtered("workload.poisson").unwrap();
        assert!(t.starts_with("[[workload]]  kind = "), "{t}");
        assert!(t.contains("kind = \"poisson\"") && !t.contains("kind = \"collective\":"));
        let t = l.filtered("cc.dcqcn").unwrap();
        assert!(t.contains("algorithm = \"dcqcn\"") && !t.contains("algorithm = \"hpcc\""));
        // PFC's section is not under `fabric.p` (a prefix of a key is no section).
        let e = l.filtered("fabric.pf").unwrap_err();
        assert!(
            e.contains("`fabric.pfc`") && e.contains("sections: top"),
            "{e}"
        );
        assert!(l.filtered("nothing").is_err());
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
