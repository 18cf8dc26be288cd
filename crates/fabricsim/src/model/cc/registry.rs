//! Every congestion control, each named once.
//!
//! An algorithm's file defines a `pub static ENTRY: CcEntry`: the name scenarios give in
//! `cc.algorithm` and `[[cc.class]].algorithm`, what the algorithm needs from the fabric,
//! and three functions: its parameters as `fabricsim list` shows them, the controller a
//! flow gets, and the check of its `[cc.<section>]`. The scenario's algorithm names, the
//! names an unknown one's error lists, `fabricsim list` and the validation of `[cc]` all
//! come from [`ALGORITHMS`]. Only building and checking go through here; on the hot path
//! the controller is an [`AnyCc`] matched per call.

use super::{acc, dcqcn, hpcc, line_rate, timely, AnyCc, CcCfg};
use crate::base::param::{Checked, Param};
use crate::base::units::{Rate, Time, US};
use std::fmt;
use std::sync::OnceLock;

/// Every congestion control, in the order `fabricsim list` and error messages give them.
pub static ALGORITHMS: &[&CcEntry] = &[
    &line_rate::ENTRY,
    &dcqcn::ENTRY,
    &timely::ENTRY,
    &hpcc::ENTRY,
    &acc::ENTRY,
    &acc::NO_HALT_ENTRY,
];

/// Which base RTT an algorithm's controllers are built with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BaseRtt {
    /// None (no RTT is computed for its flows; [`FlowContext::base_rtt`] is 0).
    Unused,
    /// The flow's own: one full packet and its ACK on the flow's idle path.
    PerFlow,
    /// One value for the network: the longest base RTT among the flows that run the
    /// algorithm (HPCC's T, as in the paper and the ns-3 module).
    Longest,
}

/// What a flow's controller is built for.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FlowContext {
    /// Line rate of the sending NIC.
    pub line: Rate,
    /// Base RTT as the algorithm asks for it ([`CcEntry::base_rtt`]).
    pub base_rtt: Time,
    /// The flow's start time.
    pub start: Time,
}

impl FlowContext {
    /// The flow `fabricsim list` resolves every algorithm's parameters for: a 100 Gbit/s
    /// NIC with a 10 us base RTT.
    pub const LISTING: FlowContext = FlowContext {
        line: Rate::gbps(100),
        base_rtt: 10 * US,
        start: 0,
    };
}

/// One congestion control.
pub struct CcEntry {
    /// The name in scenario files.
    pub name: &'static str,
    /// One line on what it is.
    pub about: &'static str,
    /// The `[cc.<section>]` its parameters are read from; `None` if it has none.
    pub section: Option<&'static str>,
    /// Its flows ask for CNPs: receivers answer CE-marked packets (ECN at the switches).
    pub reads_cnp: bool,
    /// Its flows collect INT records at every switch egress.
    pub reads_int: bool,
    /// Its flows read TCD marks (switches then run TCD).
    pub reads_tcd: bool,
    /// Which base RTT its controllers are built with.
    pub base_rtt: BaseRtt,
    /// Its parameters as resolved from `[cc]` for a flow in `ctx`.
    pub params: fn(&CcCfg, &FlowContext) -> Vec<Param>,
    /// The controller of a flow in `ctx`.
    pub build: fn(&CcCfg, &FlowContext) -> AnyCc,
    /// Checks its section of `[cc]`; fields are named relative to the section.
    pub validate: fn(&CcCfg) -> Checked,
    /// Test: panics unless `params` lists exactly the fields of its section.
    #[cfg(test)]
    pub(crate) check_fields: fn(),
}

impl fmt::Debug for CcEntry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name)
    }
}

/// A congestion control named in a scenario (an entry of [`ALGORITHMS`]).
#[derive(Clone, Copy)]
pub struct CcAlgorithm(&'static CcEntry);

impl CcAlgorithm {
    /// The algorithm called `name`, if there is one.
    pub fn named(name: &str) -> Option<CcAlgorithm> {
        ALGORITHMS
            .iter()
            .find(|e| e.name == name)
            .map(|&e| CcAlgorithm(e))
    }
    /// The name used in scenario files.
    pub fn name(self) -> &'static str {
        self.0.name
    }
    /// Its registry entry.
    pub fn entry(self) -> &'static CcEntry {
        self.0
    }
}

impl Default for CcAlgorithm {
    /// The algorithm of flows a scenario assigns none: DCQCN, RoCEv2's own.
    fn default() -> Self {
        CcAlgorithm(&dcqcn::ENTRY)
    }
}

impl PartialEq for CcAlgorithm {
    fn eq(&self, other: &Self) -> bool {
        self.0.name == other.0.name
    }
}
impl Eq for CcAlgorithm {}

impl fmt::Debug for CcAlgorithm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0.name)
    }
}

/// The names of [`ALGORITHMS`], in order.
pub fn names() -> &'static [&'static str] {
    static NAMES: OnceLock<Vec<&'static str>> = OnceLock::new();
    NAMES.get_or_init(|| ALGORITHMS.iter().map(|e| e.name).collect())
}

impl<'de> serde::Deserialize<'de> for CcAlgorithm {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let name = crate::base::param::de_registry_name(d, "CcAlgorithm", names())?;
        Ok(CcAlgorithm::named(name).expect("the name comes from the registry"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::cc::CongestionControl;

    #[test]
    fn every_algorithm_lists_exactly_its_fields() {
        for e in ALGORITHMS {
            (e.check_fields)();
        }
    }

    #[test]
    fn controllers_ask_for_what_their_entry_says() {
        let ctx = FlowContext::LISTING;
        let cc = CcCfg::default();
        for e in ALGORITHMS {
            let c = (e.build)(&cc, &ctx);
            assert_eq!(c.wants_cnp(), e.reads_cnp, "{}", e.name);
            assert_eq!(c.wants_int(), e.reads_int, "{}", e.name);
            assert_eq!(c.wants_tcd(), e.reads_tcd, "{}", e.name);
            assert!((e.validate)(&cc).is_ok(), "{}", e.name);
            assert!(!(e.params)(&cc, &ctx).is_empty() || e.section.is_none());
        }
    }

    #[test]
    fn names_are_unique_and_parse() {
        let mut n = names().to_vec();
        n.sort_unstable();
        n.dedup();
        assert_eq!(n.len(), ALGORITHMS.len());
        for name in names() {
            let v = toml::Value::String(name.to_string());
            assert_eq!(v.try_into::<CcAlgorithm>().unwrap().name(), *name);
        }
    }
}
