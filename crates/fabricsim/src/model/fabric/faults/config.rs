//! The scenario sections of the faults model: `[[fault]]` entries (what breaks, and
//! when) and `[fabric.reliability]` (bit errors, FEC, link-level retransmission, the
//! routing re-convergence delay), their defaults, their checks, and their resolution
//! against the topology's names into a [`FaultPlan`].
//!
//! ```toml
//! [fabric.reliability]
//! ber = 1e-6                 # pre-FEC bit error rate of every link
//! fec = "rs528"              # RS(528,514) on every link
//! llr = true                 # CRC32 link-level retransmission
//! [[fabric.reliability.per_link]]
//! link = ["leaf0", "spine1"]
//! ber = 1e-4
//!
//! [[fault]]
//! kind = "link_down"
//! at = "200us"
//! link = ["leaf0", "spine1"] # index = 1 for the second of parallel links
//! [[fault]]
//! kind = "lane_degrade"
//! at = "300us"
//! link = ["leaf1", "spine0"]
//! lanes = 2
//! ```
//!
//! Checks name fields relative to the section (`[0].link` within `fault`,
//! `per_link[0].ber` within `fabric.reliability`).

use crate::base::param::{Checked, Described, Param, ParamError};
use crate::base::units::serde_units as su;
use crate::base::units::{fmt_time, Time, MS, NS};
use crate::model::topology::TopoGraph;
use serde::Deserialize;
use std::collections::HashMap;

/// What a `[[fault]]` entry does.
#[derive(Clone, Copy, Debug, Deserialize, serde::Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum FaultKind {
    /// The link (both directions) goes down: frames on it are lost, its ports stop.
    LinkDown,
    /// The link comes back.
    LinkUp,
    /// Every link of the switch goes down.
    SwitchDown,
    /// The switch comes back (its links that no `link_down` holds down come up).
    SwitchUp,
    /// The link runs on `lanes` of its 4 lanes: rate x lanes / 4, both directions.
    LaneDegrade,
}

impl FaultKind {
    fn name(self) -> &'static str {
        match self {
            FaultKind::LinkDown => "link_down",
            FaultKind::LinkUp => "link_up",
            FaultKind::SwitchDown => "switch_down",
            FaultKind::SwitchUp => "switch_up",
            FaultKind::LaneDegrade => "lane_degrade",
        }
    }
    fn on_link(self) -> bool {
        !matches!(self, FaultKind::SwitchDown | FaultKind::SwitchUp)
    }
}

/// One `[[fault]]` entry.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FaultCfg {
    /// What happens.
    pub kind: FaultKind,
    /// When.
    #[serde(deserialize_with = "su::time")]
    pub at: Time,
    /// The link, by the names of its two end nodes (link faults).
    #[serde(default)]
    pub link: Option<Vec<String>>,
    /// Which of several parallel links between the two nodes, in topology order
    /// (default 0).
    #[serde(default)]
    pub index: Option<u32>,
    /// The switch, by name (switch faults).
    #[serde(default)]
    pub switch: Option<String>,
    /// Lanes left in service, 4, 2 or 1 (`lane_degrade`).
    #[serde(default)]
    pub lanes: Option<u32>,
}

impl Described for FaultCfg {
    const ABOUT: &'static str =
        "a fault at a given time: a link or switch going down or up, or a link losing lanes";
    fn params() -> Vec<Param> {
        vec![
            Param::choice("kind", &FaultKind::LinkDown, "what happens"),
            Param::required("at", "when (a time such as \"200us\"), before max_time"),
            Param::unset(
                "link",
                "link faults: [\"node_a\", \"node_b\"], the names of its two ends",
            ),
            Param::unset(
                "index",
                "which of several parallel links joining the two nodes (0, 1, ...); unset: 0",
            ),
            Param::unset("switch", "switch faults: the switch's name"),
            Param::unset(
                "lanes",
                "lane_degrade: lanes left of 4 (4, 2 or 1): the rate x lanes / 4",
            ),
        ]
    }
}

/// Forward error correction on every link.
#[derive(Clone, Copy, Debug, Default, Deserialize, serde::Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum FecMode {
    /// No FEC: a frame is lost when any of its bits is wrong.
    #[default]
    None,
    /// RS(528,514) over 10-bit symbols, correcting 7 symbols per codeword (IEEE 802.3
    /// clause 91, document 003).
    Rs528,
}

/// One per-link bit error rate.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinkBerCfg {
    /// The link, by the names of its two end nodes.
    pub link: Vec<String>,
    /// Which of several parallel links (default 0).
    #[serde(default)]
    pub index: Option<u32>,
    /// Its pre-FEC bit error rate (both directions).
    pub ber: f64,
}

/// Bit errors, FEC, link-level retransmission and route re-convergence.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReliabilityCfg {
    /// Pre-FEC bit error rate of every link (0: error free).
    #[serde(default)]
    pub ber: f64,
    /// FEC on every link.
    #[serde(default)]
    pub fec: FecMode,
    /// Latency FEC adds per hop (decoding a codeword) when `fec` is on.
    #[serde(default = "d_fec_latency", deserialize_with = "su::time")]
    pub fec_latency: Time,
    /// CRC32 link-level retransmission on every link.
    #[serde(default)]
    pub llr: bool,
    /// Ethernet routing: the ECMP tables are recomputed this long after a link or switch
    /// goes down or comes up.
    #[serde(default = "d_reconvergence", deserialize_with = "su::time")]
    pub reconvergence_delay: Time,
    /// Bit error rates of single links, over `ber`.
    #[serde(default)]
    pub per_link: Vec<LinkBerCfg>,
}

/// \[recon\] An RS(528,514) decoder's latency at 25-100 Gbit/s lane rates is on the order
/// of 100 ns (IEEE 802.3bj budgets its FEC sublayer about that).
fn d_fec_latency() -> Time {
    100 * NS
}

/// \[recon\] Loss of signal is seen within microseconds, but ECMP groups are pruned
/// network wide only after the routing protocol has converged; 1 ms stands for a fast
/// data-centre fabric (BFD + BGP with hardware ECMP updates: 1 ms to tens of ms).
fn d_reconvergence() -> Time {
    MS
}

impl Default for ReliabilityCfg {
    fn default() -> Self {
        ReliabilityCfg {
            ber: 0.0,
            fec: FecMode::None,
            fec_latency: d_fec_latency(),
            llr: false,
            reconvergence_delay: d_reconvergence(),
            per_link: Vec::new(),
        }
    }
}

impl Described for ReliabilityCfg {
    const ABOUT: &'static str =
        "bit errors, FEC and link-level retransmission on every link; route re-convergence";
    fn params() -> Vec<Param> {
        let d = ReliabilityCfg::default();
        vec![
            Param::plain(
                "ber",
                d.ber,
                "pre-FEC bit error rate of every link (0: error free)",
            ),
            Param::choice(
                "fec",
                &d.fec,
                "rs528: RS(528,514), 10-bit symbols, corrects 7 per codeword",
            ),
            Param::time(
                "fec_latency",
                d.fec_latency,
                "[recon] added to every hop when fec is on",
            ),
            Param::plain(
                "llr",
                d.llr,
                "CRC32 link-level retransmission: a corrupted frame is replayed by its sender",
            ),
            Param::time(
                "reconvergence_delay",
                d.reconvergence_delay,
                "[recon] ECMP tables recomputed this long after a link goes down or up",
            ),
            Param::new(
                "per_link",
                "[]",
                "[{ link = [\"a\", \"b\"], index = 0, ber = 1e-6 }, ...]: single links' BER",
            ),
        ]
    }
}

fn check_ber(field: &str, ber: f64) -> Checked {
    if !(0.0..=1.0).contains(&ber) {
        return Err(ParamError::new(
            field,
            format!("{ber} is not a bit error rate: it must be a probability in [0, 1]"),
        ));
    }
    Ok(())
}

impl ReliabilityCfg {
    /// Checks the settings; fields are named relative to `[fabric.reliability]`.
    pub fn validate(&self) -> Checked {
        check_ber("ber", self.ber)?;
        for (i, l) in self.per_link.iter().enumerate() {
            check_ber(&format!("per_link[{i}].ber"), l.ber)?;
        }
        Ok(())
    }
}

/// Checks the `[[fault]]` entries on their own (the fields each kind takes, lanes,
/// times); names are checked against the topology by [`FaultPlan::resolve`]. Fields are
/// named relative to `fault` (`[2].lanes`).
pub fn validate_faults(faults: &[FaultCfg], max_time: Time) -> Checked {
    // Each fault is at most two steps of the timeline, and a step is an event index.
    if faults.len() > crate::base::ids::MAX_INDEX as usize / 2 {
        return Err(ParamError::new(
            "",
            format!(
                "{} entries: at most {} are supported",
                faults.len(),
                crate::base::ids::MAX_INDEX / 2
            ),
        ));
    }
    for (i, f) in faults.iter().enumerate() {
        let e = |field: &str, m: String| Err(ParamError::new(format!("[{i}].{field}"), m));
        let kind = f.kind.name();
        if f.at >= max_time {
            return e(
                "at",
                format!(
                    "{} is not before max_time ({}): the fault would never happen",
                    fmt_time(f.at),
                    fmt_time(max_time)
                ),
            );
        }
        if f.kind.on_link() {
            match &f.link {
                None => return e("link", format!("{kind} needs link = [\"a\", \"b\"]")),
                Some(l) if l.len() != 2 => {
                    return e(
                        "link",
                        format!("names {} nodes: a link has two ends", l.len()),
                    )
                }
                _ => {}
            }
            if f.switch.is_some() {
                return e("switch", format!("{kind} takes `link`, not `switch`"));
            }
        } else {
            if f.switch.is_none() {
                return e("switch", format!("{kind} needs switch = \"name\""));
            }
            if f.link.is_some() || f.index.is_some() {
                let field = if f.link.is_some() { "link" } else { "index" };
                return e(field, format!("{kind} takes `switch`, not `{field}`"));
            }
        }
        match (f.kind, f.lanes) {
            (FaultKind::LaneDegrade, None) => {
                return e("lanes", "lane_degrade needs lanes = 4, 2 or 1".into())
            }
            (FaultKind::LaneDegrade, Some(n)) if ![1, 2, 4].contains(&n) => {
                return e(
                    "lanes",
                    format!("{n} lanes: a link runs on 4, 2 or 1 of its 4 lanes"),
                )
            }
            (FaultKind::LaneDegrade, _) | (_, None) => {}
            (_, Some(_)) => return e("lanes", format!("{kind} takes no `lanes`")),
        }
    }
    Ok(())
}

/// What a fault does, on the topology's graph.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FaultAction {
    /// Graph link `link` goes down (`up` false) or comes up.
    Link {
        /// Index in [`TopoGraph::links`].
        link: usize,
        /// Comes up.
        up: bool,
    },
    /// Switch node `node` goes down or comes up.
    Switch {
        /// Index in [`TopoGraph::nodes`].
        node: usize,
        /// Comes up.
        up: bool,
    },
    /// Graph link `link` runs on `lanes` lanes.
    Lanes {
        /// Index in [`TopoGraph::links`].
        link: usize,
        /// 4, 2 or 1.
        lanes: u8,
    },
}

/// A fault resolved against the topology.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PlannedFault {
    /// When.
    pub at: Time,
    /// What.
    pub action: FaultAction,
}

/// The faults model of one run, resolved against its topology: the faults in time order
/// and the bit error rate of every graph link.
#[derive(Clone, Debug, Default)]
pub struct FaultPlan {
    /// Faults sorted by time (file order among equal times).
    pub faults: Vec<PlannedFault>,
    /// Pre-FEC bit error rate per graph link (empty when every link is error free and
    /// nothing is to be resolved).
    pub ber: Vec<f64>,
    /// FEC on every link.
    pub fec: FecMode,
    /// Latency FEC adds per hop.
    pub fec_latency: Time,
    /// Link-level retransmission.
    pub llr: bool,
    /// Route re-convergence delay.
    pub reconvergence_delay: Time,
}

impl FaultPlan {
    /// True when the run has anything for the faults model to do at run time (faults or
    /// bit errors); otherwise no fault state is built and every packet takes the plain path.
    pub fn active(&self) -> bool {
        !self.faults.is_empty() || self.ber.iter().any(|&b| b > 0.0)
    }

    /// Resolves node names and parallel-link indices. Errors name fields relative to
    /// the scenario's top level (`fault[1].link`, `fabric.reliability.per_link[0].index`).
    pub fn resolve(
        faults: &[FaultCfg],
        rel: &ReliabilityCfg,
        g: &TopoGraph,
    ) -> Result<FaultPlan, ParamError> {
        let settings = FaultPlan {
            faults: Vec::new(),
            ber: Vec::new(),
            fec: rel.fec,
            fec_latency: rel.fec_latency,
            llr: rel.llr,
            reconvergence_delay: rel.reconvergence_delay,
        };
        if faults.is_empty() && rel.per_link.is_empty() && rel.ber == 0.0 {
            // Nothing to resolve: allocate nothing either, so that a run without faults
            // builds exactly the heap it always did.
            return Ok(settings);
        }
        let by_name: HashMap<&str, usize> = (g.nodes.iter().enumerate())
            .map(|(i, n)| (n.name.as_str(), i))
            .collect();
        let find_link = |at: &str, names: &[String], index: Option<u32>| {
            let node = |n: &String| {
                by_name.get(n.as_str()).copied().ok_or_else(|| {
                    let names = g.nodes.iter().map(|x| x.name.as_str());
                    let hint = crate::base::suggest::did_you_mean(n, names);
                    ParamError::new(format!("{at}.link"), format!("no node named `{n}`{hint}"))
                })
            };
            let (a, b) = (node(&names[0])?, node(&names[1])?);
            let joining: Vec<usize> = (g.links.iter().enumerate())
                .filter(|(_, l)| (l.a, l.b) == (a, b) || (l.a, l.b) == (b, a))
                .map(|(i, _)| i)
                .collect();
            if joining.is_empty() {
                return Err(ParamError::new(
                    format!("{at}.link"),
                    format!("no link joins `{}` and `{}`", names[0], names[1]),
                ));
            }
            let k = index.unwrap_or(0) as usize;
            joining.get(k).copied().ok_or_else(|| {
                ParamError::new(
                    format!("{at}.index"),
                    format!(
                        "{k}: {} link(s) join `{}` and `{}` (index 0..{})",
                        joining.len(),
                        names[0],
                        names[1],
                        joining.len() - 1
                    ),
                )
            })
        };
        let mut ber = vec![rel.ber; g.links.len()];
        // Which entry set each link's BER: a second entry for one link would silently
        // override the first.
        let mut set_by: HashMap<usize, usize> = HashMap::new();
        for (i, l) in rel.per_link.iter().enumerate() {
            let at = format!("fabric.reliability.per_link[{i}]");
            if l.link.len() != 2 {
                return Err(ParamError::new(
                    format!("{at}.link"),
                    format!("names {} nodes: a link has two ends", l.link.len()),
                ));
            }
            let link = find_link(&at, &l.link, l.index)?;
            if let Some(j) = set_by.insert(link, i) {
                return Err(ParamError::new(
                    format!("{at}.link"),
                    format!(
                        "per_link[{j}] already sets this link's BER: give each link (and \
                         index) once"
                    ),
                ));
            }
            ber[link] = l.ber;
        }
        let mut planned = Vec::with_capacity(faults.len());
        for (i, f) in faults.iter().enumerate() {
            let at = format!("fault[{i}]");
            let action = match f.kind {
                FaultKind::SwitchDown | FaultKind::SwitchUp => {
                    let name = f.switch.as_deref().unwrap_or_default();
                    let node = *by_name.get(name).ok_or_else(|| {
                        ParamError::new(format!("{at}.switch"), format!("no switch named `{name}`"))
                    })?;
                    if !g.nodes[node].is_switch {
                        return Err(ParamError::new(
                            format!("{at}.switch"),
                            format!("`{name}` is a host, not a switch"),
                        ));
                    }
                    FaultAction::Switch {
                        node,
                        up: f.kind == FaultKind::SwitchUp,
                    }
                }
                kind => {
                    let names = f.link.as_deref().unwrap_or_default();
                    let link = find_link(&at, names, f.index)?;
                    match kind {
                        FaultKind::LaneDegrade => FaultAction::Lanes {
                            link,
                            lanes: f.lanes.unwrap_or(4) as u8,
                        },
                        _ => FaultAction::Link {
                            link,
                            up: kind == FaultKind::LinkUp,
                        },
                    }
                }
            };
            planned.push(PlannedFault { at: f.at, action });
        }
        // Stable: faults at the same time act in file order.
        planned.sort_by_key(|f| f.at);
        Ok(FaultPlan {
            faults: planned,
            ber,
            ..settings
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::param::assert_describes_fields;
    use crate::base::units::{Rate, US};

    fn fault(kind: FaultKind) -> FaultCfg {
        FaultCfg {
            kind,
            at: 10 * US,
            link: Some(vec!["a".into(), "s".into()]),
            index: None,
            switch: None,
            lanes: None,
        }
    }

    fn graph() -> TopoGraph {
        let mut g = TopoGraph::default();
        let a = g.add_host("a".into(), 0);
        let s = g.add_node("s".into(), true);
        let t = g.add_node("t".into(), true);
        g.link(a, s, Rate(100_000_000_000), US);
        g.link(s, t, Rate(100_000_000_000), US);
        g.link(t, s, Rate(100_000_000_000), US);
        g
    }

    #[test]
    fn listings_name_every_field() {
        assert_describes_fields::<FaultCfg>();
        assert_describes_fields::<ReliabilityCfg>();
    }

    #[test]
    fn bad_entries_name_the_field() {
        let msg = |f: FaultCfg| validate_faults(&[f], MS).unwrap_err().to_string();
        let mut f = fault(FaultKind::LaneDegrade);
        assert!(msg(f.clone()).contains("field `[0].lanes`"));
        f.lanes = Some(3);
        assert!(msg(f.clone()).contains("4, 2 or 1"));
        f.lanes = Some(2);
        assert!(validate_faults(&[f.clone()], MS).is_ok());
        f.at = MS;
        assert!(msg(f).contains("field `[0].at`"));
        let mut f = fault(FaultKind::SwitchDown);
        assert!(msg(f.clone()).contains("field `[0].switch`"));
        f.link = None;
        f.switch = Some("s".into());
        assert!(validate_faults(&[f], MS).is_ok());
        let mut f = fault(FaultKind::LinkDown);
        f.lanes = Some(2);
        assert!(msg(f).contains("takes no `lanes`"));
        let mut f = fault(FaultKind::LinkUp);
        f.link = Some(vec!["a".into()]);
        assert!(msg(f).contains("two ends"));
        let bad = |ber| {
            let c = ReliabilityCfg {
                ber,
                ..Default::default()
            };
            c.validate().unwrap_err().to_string()
        };
        assert!(bad(-1e-9).contains("field `ber`"));
        assert!(bad(1.5).contains("[0, 1]"));
        assert!(bad(f64::NAN).contains("field `ber`"));
    }

    #[test]
    fn names_resolve_to_graph_links_and_switches() {
        let g = graph();
        let rel = ReliabilityCfg::default();
        let mut f = fault(FaultKind::LinkDown);
        f.link = Some(vec!["t".into(), "s".into()]);
        f.index = Some(1);
        let mut sw = fault(FaultKind::SwitchUp);
        sw.at = US;
        sw.link = None;
        sw.switch = Some("t".into());
        let p = FaultPlan::resolve(&[f.clone(), sw.clone()], &rel, &g).unwrap();
        // Sorted by time; the second parallel link between s and t is graph link 2.
        assert_eq!(
            p.faults,
            [
                PlannedFault {
                    at: US,
                    action: FaultAction::Switch { node: 2, up: true }
                },
                PlannedFault {
                    at: 10 * US,
                    action: FaultAction::Link { link: 2, up: false }
                }
            ]
        );
        assert!(p.active() && p.ber == [0.0; 3]);
        let err = |f: FaultCfg| FaultPlan::resolve(&[f], &rel, &g).unwrap_err().to_string();
        f.index = Some(2);
        assert!(err(f.clone()).contains("field `fault[0].index`"));
        f.link = Some(vec!["a".into(), "t".into()]);
        assert!(err(f.clone()).contains("no link joins `a` and `t`"));
        f.link = Some(vec!["a".into(), "x".into()]);
        assert!(err(f).contains("field `fault[0].link`: no node named `x`"));
        sw.switch = Some("a".into());
        assert!(err(sw).contains("`a` is a host"));
        let rel = ReliabilityCfg {
            per_link: vec![LinkBerCfg {
                link: vec!["s".into(), "a".into()],
                index: None,
                ber: 1e-6,
            }],
            ..Default::default()
        };
        let p = FaultPlan::resolve(&[], &rel, &g).unwrap();
        assert_eq!(p.ber, [1e-6, 0.0, 0.0]);
        assert!(p.active());
        let clean = FaultPlan::resolve(&[], &ReliabilityCfg::default(), &g).unwrap();
        assert!(!clean.active() && clean.ber.is_empty());
    }
}
