//! GPU campuses joined over long-haul fibre (`kind = "multi_campus"`), the network of
//! document 001 (MegaScaleOut): two GPU campuses 120 km apart, each reaching the fibre
//! through deep-buffer DR switches with 400GE ports; 3.2 Tbps of DCI capacity between the
//! campuses and 12.8 Tbps from each campus to its DRs, so that congestion gathers at the DR
//! rather than inside the campuses.
//!
//! The `campuses` campuses are identical GPU fabrics of the kind `campus` names, each
//! built by that topology kind's own generator from the fields that share its names, with
//! NICs at 400 Gbps unless told otherwise:
//!
//! - `campus = "leaf_spine"` (the default): two tiers, by the leaf-spine generator
//!   ([`super::leaf_spine::build`]) from `leaves`, `spines`, `servers_per_leaf`,
//!   `nics_per_server`, `host_rate`, `uplink_rate`, `uplinks_per_pair`; the DRs sit
//!   above the spines.
//! - `campus = "three_tier"`: three tiers, by the three-tier Clos generator
//!   ([`super::three_tier::build`]) from `pods`, `tors_per_pod`, `servers_per_tor`,
//!   `aggs_per_pod`, `cores`, `host_rate`, `tor_agg_rate`, `agg_core_rate` (one NIC per
//!   server); the DRs sit above the cores, the top tier, so that traffic for another
//!   campus climbs the whole fabric as it does in a 3-tier GPU cluster.
//!
//! `link_delay` / `link_length` set every link inside a campus either way. The fields of
//! the other fabric are refused (naming the field), not ignored. Above its top tier
//! (spines or cores) each campus has `dr_switches` DR switches:
//!
//! - **campus to DR**: `campus_to_dr_capacity` in links of `dr_link_rate`, split evenly so
//!   that every top-tier switch has the same number of links to every DR (the link count
//!   must be a multiple of top-tier switches x DRs); these links have the campus's own
//!   delay.
//! - **DCI**: between every pair of campuses (a full mesh when there are more than two;
//!   each pair gets its own `dci_capacity`), `dci_capacity / dci_link_rate` links; link i
//!   joins DR (i mod dr_switches) of one campus to DR (i mod dr_switches) of the other, so
//!   the count must be a multiple of `dr_switches` and every DR carries an equal share. A
//!   DCI link's delay is `fiber_km` x 5 us (light in fibre: 5 ns per metre; ALGORITHMS.md,
//!   "Long haul").
//! - a DR uses one port per link; campus and DCI links together must fit in its `dr_ports`.
//!
//! Hosts are numbered campus by campus (campus c holds hosts c*H .. c*H+H-1, H the hosts
//! of one campus, in its generator's order within it). Node names carry the campus:
//! `c0-host3`, `c1-leaf2`, `c0-spine1`, `c1-dr3`; in three-tier campuses `c0-tor1_2`,
//! `c1-agg0_1`, `c0-core5`. Routing needs nothing special: the shared shortest-path
//! tables send traffic for another campus leaf -> spine -> DR -> DCI -> DR -> spine ->
//! leaf (ToR -> aggregation -> core -> DR -> DCI -> DR -> core -> aggregation -> ToR in
//! three tiers), with ECMP over every tier, the DRs and the parallel DCI links. A path
//! through a DR is never the shortest between two hosts of one campus (the DRs link only
//! to the top tier, and two top-tier switches meet below it in as few hops), so traffic
//! within a campus never reaches a DR.
//!
//! The DR's deep buffer (`dr_buffer`) and whether its DCI side is lossless (`dci_lossless`;
//! default lossy, with the campuses lossless) travel on the graph as each DR node's
//! [`NodeRole::Dr`]; the simulator gives those switches the DR role
//! ([`crate::model::fabric::roles::dr`]).

use super::{delay_params, link_delay, DrSpec, GraphGenerator, NodeRole, TopoGraph, TopoSize};
use crate::base::param::{size_knobs, Described, Param, ParamError, SizeKnob};
use crate::base::units::serde_units as su;
use crate::base::units::{Rate, Time, MAX_RATE_BPS, US};
use serde::Deserialize;

mod campus;

use campus::Campus;
pub use campus::CampusKind;

/// Campuses when not given: the testbed's two.
pub const DEFAULT_CAMPUSES: u32 = 2;
/// NIC rate when not given: 400 Gbps GPU NICs.
pub const DEFAULT_HOST_RATE: Rate = Rate::gbps(400);
/// DR switches per campus when not given \[recon\]: the document does not say how many;
/// four divides the testbed's 8 DCI links and 32 campus links evenly.
pub const DEFAULT_DR_SWITCHES: u32 = 4;
/// Ports of one DR switch \[recon\]: 36 x 400GE, a deep-buffer switch of 14.4 Tbps.
pub const DEFAULT_DR_PORTS: u32 = 36;
/// Campus-to-DR capacity of the testbed: 12.8 Tbps.
pub const DEFAULT_CAMPUS_TO_DR: Rate = Rate::gbps(12_800);
/// DCI capacity of the testbed: 3.2 Tbps.
pub const DEFAULT_DCI_CAPACITY: Rate = Rate::gbps(3_200);
/// DCI (and DR) port rate: 400GE.
pub const DEFAULT_DCI_LINK_RATE: Rate = Rate::gbps(400);
/// Fibre between the testbed's campuses: 120 km.
pub const DEFAULT_FIBER_KM: f64 = 120.0;
/// DR buffer \[recon\]: 4 GiB (deep-buffer DCI switches carry GBs).
pub const DEFAULT_DR_BUFFER: u64 = 4 << 30;
/// Propagation in fibre: 5 us per km.
pub const PS_PER_KM: Time = 5 * US;
/// Longest fibre: 200,000 km, whose delay is the 1 s every link is held to.
pub const MAX_FIBER_KM: f64 = (super::MAX_LINK_DELAY / PS_PER_KM) as f64;

fn default_campuses() -> u32 {
    DEFAULT_CAMPUSES
}
fn default_host_rate() -> Rate {
    DEFAULT_HOST_RATE
}
fn default_dr_switches() -> u32 {
    DEFAULT_DR_SWITCHES
}
fn default_dr_ports() -> u32 {
    DEFAULT_DR_PORTS
}
fn default_campus_to_dr() -> Rate {
    DEFAULT_CAMPUS_TO_DR
}
fn default_dci_capacity() -> Rate {
    DEFAULT_DCI_CAPACITY
}
fn default_dci_link_rate() -> Rate {
    DEFAULT_DCI_LINK_RATE
}
fn default_fiber_km() -> f64 {
    DEFAULT_FIBER_KM
}
fn default_dr_buffer() -> u64 {
    DEFAULT_DR_BUFFER
}

/// GPU campuses (each a leaf-spine or three-tier fabric) whose DR switches are joined by
/// DCI fibre.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MultiCampusCfg {
    /// Campuses (>= 2).
    #[serde(default = "default_campuses")]
    pub campuses: u32,
    /// How each campus is built: leaf-spine (the default) or three-tier.
    #[serde(default)]
    pub campus: CampusKind,
    /// Leaf switches per campus (leaf-spine; required there).
    #[serde(default)]
    pub leaves: Option<u32>,
    /// Spine switches per campus (leaf-spine; required there, >= 1: the DRs hang off
    /// them).
    #[serde(default)]
    pub spines: Option<u32>,
    /// Servers below each leaf (leaf-spine; required there).
    #[serde(default)]
    pub servers_per_leaf: Option<u32>,
    /// NICs per server, each a host of the simulation (leaf-spine; default 1).
    #[serde(default)]
    pub nics_per_server: Option<u32>,
    /// Rate of NIC-leaf (or server-ToR) links.
    #[serde(default = "default_host_rate", deserialize_with = "su::rate")]
    pub host_rate: Rate,
    /// Rate of each leaf-spine link (leaf-spine; default: `host_rate`).
    #[serde(default, deserialize_with = "su::opt_rate")]
    pub uplink_rate: Option<Rate>,
    /// Parallel links between each leaf and each spine (leaf-spine; default 1).
    #[serde(default)]
    pub uplinks_per_pair: Option<u32>,
    /// Pods per campus (three-tier; required there).
    #[serde(default)]
    pub pods: Option<u32>,
    /// ToR switches per pod (three-tier; required there).
    #[serde(default)]
    pub tors_per_pod: Option<u32>,
    /// Servers (one NIC each) below each ToR (three-tier; required there).
    #[serde(default)]
    pub servers_per_tor: Option<u32>,
    /// Aggregation switches per pod (three-tier; required there).
    #[serde(default)]
    pub aggs_per_pod: Option<u32>,
    /// Core switches per campus, a multiple of `aggs_per_pod` (three-tier; required
    /// there; the DRs hang off them).
    #[serde(default)]
    pub cores: Option<u32>,
    /// Rate of ToR-aggregation links (three-tier; default: `host_rate`).
    #[serde(default, deserialize_with = "su::opt_rate")]
    pub tor_agg_rate: Option<Rate>,
    /// Rate of aggregation-core links (three-tier; default: `tor_agg_rate`).
    #[serde(default, deserialize_with = "su::opt_rate")]
    pub agg_core_rate: Option<Rate>,
    /// DR switches per campus.
    #[serde(default = "default_dr_switches")]
    pub dr_switches: u32,
    /// Ports of each DR switch (campus links plus DCI links).
    #[serde(default = "default_dr_ports")]
    pub dr_ports: u32,
    /// Rate of each link between the top tier (spines or cores) and a DR (default:
    /// `dci_link_rate`).
    #[serde(default, deserialize_with = "su::opt_rate")]
    pub dr_link_rate: Option<Rate>,
    /// Total capacity from one campus's top tier (spines or cores) to its DRs.
    #[serde(default = "default_campus_to_dr", deserialize_with = "su::rate")]
    pub campus_to_dr_capacity: Rate,
    /// Total DCI capacity between each pair of campuses.
    #[serde(default = "default_dci_capacity", deserialize_with = "su::rate")]
    pub dci_capacity: Rate,
    /// Rate of each DCI link.
    #[serde(default = "default_dci_link_rate", deserialize_with = "su::rate")]
    pub dci_link_rate: Rate,
    /// Fibre length of the DCI links, km (5 us per km).
    #[serde(default = "default_fiber_km")]
    pub fiber_km: f64,
    /// Shared buffer of each DR switch.
    #[serde(default = "default_dr_buffer", deserialize_with = "su::bytes")]
    pub dr_buffer: u64,
    /// Lossless (PFC) on the DCI side of the DRs too; default lossy there.
    #[serde(default)]
    pub dci_lossless: bool,
    /// Delay of every link inside a campus (or give `link_length`).
    #[serde(default, deserialize_with = "su::opt_time")]
    pub link_delay: Option<Time>,
    /// Cable length of every link inside a campus, at 5 ns per metre.
    #[serde(default, deserialize_with = "su::opt_length")]
    pub link_length: Option<f64>,
}

impl Described for MultiCampusCfg {
    const ABOUT: &'static str =
        "leaf-spine or three-tier GPU campuses whose DR switches are joined by long-haul DCI fibre (document 001)";
    fn params() -> Vec<Param> {
        let mut v = vec![
            Param::plain(
                "campuses",
                DEFAULT_CAMPUSES,
                "campuses (>= 2), every pair joined by its own DCI links",
            ),
            Param::choice(
                "campus",
                &CampusKind::default(),
                "each campus built by the leaf-spine or the three-tier generator, the DRs above its spines or cores",
            ),
            Param::required("leaves", "leaf switches per campus (leaf_spine only)"),
            Param::required("spines", "spine switches per campus, >= 1 (leaf_spine only)"),
            Param::required("servers_per_leaf", "servers below each leaf (leaf_spine only)"),
            Param::plain(
                "nics_per_server",
                super::one(),
                "NICs per server, each a host of the simulation (leaf_spine only)",
            ),
            Param::rate(
                "host_rate",
                DEFAULT_HOST_RATE.0 as f64,
                "rate of NIC-leaf or server-ToR links (GPU NICs)",
            ),
            Param::unset(
                "uplink_rate",
                "rate of each leaf-spine link (unset: host_rate; leaf_spine only)",
            ),
            Param::plain(
                "uplinks_per_pair",
                super::one(),
                "parallel links between each leaf and each spine (leaf_spine only)",
            ),
            Param::required("pods", "pods per campus (three_tier only)"),
            Param::required("tors_per_pod", "ToR switches per pod (three_tier only)"),
            Param::required(
                "servers_per_tor",
                "servers (one NIC each) below each ToR (three_tier only)",
            ),
            Param::required(
                "aggs_per_pod",
                "aggregation switches per pod (three_tier only)",
            ),
            Param::required(
                "cores",
                "core switches per campus, a multiple of aggs_per_pod (three_tier only)",
            ),
            Param::unset(
                "tor_agg_rate",
                "rate of ToR-aggregation links (unset: host_rate; three_tier only)",
            ),
            Param::unset(
                "agg_core_rate",
                "rate of aggregation-core links (unset: tor_agg_rate; three_tier only)",
            ),
            Param::plain(
                "dr_switches",
                DEFAULT_DR_SWITCHES,
                "DR switches per campus [recon]",
            ),
            Param::plain(
                "dr_ports",
                DEFAULT_DR_PORTS,
                "ports of each DR, campus and DCI links together [recon]",
            ),
            Param::unset(
                "dr_link_rate",
                "rate of each spine-DR or core-DR link (unset: dci_link_rate)",
            ),
            Param::rate(
                "campus_to_dr_capacity",
                DEFAULT_CAMPUS_TO_DR.0 as f64,
                "spines- or cores-to-DRs capacity of one campus [paper: 12.8 Tbps]",
            ),
            Param::rate(
                "dci_capacity",
                DEFAULT_DCI_CAPACITY.0 as f64,
                "DCI capacity between each pair of campuses [paper: 3.2 Tbps]",
            ),
            Param::rate(
                "dci_link_rate",
                DEFAULT_DCI_LINK_RATE.0 as f64,
                "rate of each DCI link [paper: 400GE]",
            ),
            Param::plain(
                "fiber_km",
                DEFAULT_FIBER_KM,
                "DCI fibre length in km, 5 us per km [paper: 120 km]",
            ),
            Param::bytes(
                "dr_buffer",
                DEFAULT_DR_BUFFER,
                "shared buffer of each DR (deep) [recon]",
            ),
            Param::plain(
                "dci_lossless",
                false,
                "PFC on the DCI side too (default: DR lossy there, campuses lossless)",
            ),
        ];
        v.extend(delay_params());
        v
    }
}

impl GraphGenerator for MultiCampusCfg {
    fn generate(&self, _base_dir: &std::path::Path) -> Result<TopoGraph, ParamError> {
        build(self)
    }

    fn size(&self, _base_dir: &std::path::Path) -> Result<Option<TopoSize>, ParamError> {
        counts(self).map(|(s, _)| Some(s))
    }

    fn size_drivers(&self) -> &'static str {
        "campuses x the campus fabric's hosts and links (leaves x servers_per_leaf x \
         nics_per_server, or pods x tors_per_pod x servers_per_tor), \
         campuses^2 x dci_capacity / dci_link_rate (DCI links)"
    }

    fn size_knobs(&self, _base_dir: &std::path::Path) -> Vec<SizeKnob<TopoSize>> {
        // Campus fields not given stay as they are (setting one would make it foreign to
        // the campus kind): their knobs shrink nothing.
        size_knobs(
            self,
            &[
                ("campuses", |c| c.campuses = 2),
                ("leaves", |c| c.leaves = c.leaves.map(|_| 1)),
                ("servers_per_leaf", |c| {
                    c.servers_per_leaf = c.servers_per_leaf.map(|_| 1)
                }),
                ("nics_per_server", |c| {
                    c.nics_per_server = c.nics_per_server.map(|_| 1)
                }),
                ("spines", |c| c.spines = c.spines.map(|_| 1)),
                ("uplinks_per_pair", |c| {
                    c.uplinks_per_pair = c.uplinks_per_pair.map(|_| 1)
                }),
                ("pods", |c| c.pods = c.pods.map(|_| 1)),
                ("tors_per_pod", |c| {
                    c.tors_per_pod = c.tors_per_pod.map(|_| 1)
                }),
                ("servers_per_tor", |c| {
                    c.servers_per_tor = c.servers_per_tor.map(|_| 1)
                }),
                ("aggs_per_pod", |c| {
                    if let Some(a) = c.aggs_per_pod {
                        c.cores = c.cores.map(|k| k / a.max(1));
                        c.aggs_per_pod = Some(1);
                    }
                }),
                // Cores are a multiple of aggs_per_pod.
                ("cores", |c| c.cores = c.cores.and(c.aggs_per_pod)),
                ("dr_switches", |c| c.dr_switches = 1),
                // One DCI link per DR switch and campus pair.
                ("dci_capacity", |c| {
                    c.dci_capacity = Rate(c.dci_link_rate.0.saturating_mul(c.dr_switches as u64))
                }),
            ],
            |c| counts(c).ok().map(|(s, _)| s),
        )
    }
}

impl MultiCampusCfg {
    /// One-way delay of a DCI link: `fiber_km` x 5 us, checked.
    pub fn dci_delay(&self) -> Result<Time, ParamError> {
        let km = self.fiber_km;
        if !km.is_finite() || km < 0.0 {
            return Err(ParamError::new(
                "fiber_km",
                format!("{km} is not a length: give a non-negative number of km"),
            ));
        }
        if km > MAX_FIBER_KM {
            return Err(ParamError::new(
                "fiber_km",
                format!("{km} km is a delay above 1 s: at most {MAX_FIBER_KM} km is allowed"),
            ));
        }
        Ok((km * PS_PER_KM as f64).round() as Time)
    }
}

/// Link counts of the campus-to-DR and DCI layers, checked against the DR's ports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct DrLayer {
    /// Links between each (top-tier switch, DR) pair of a campus.
    per_top_dr: u64,
    /// DCI links between each pair of campuses.
    dci_links: u64,
}

/// How many links of `rate` make `cap`: a whole, positive number, or an error naming
/// `field`.
fn whole_links(cap: Rate, rate: Rate, field: &str, rate_field: &str) -> Result<u64, ParamError> {
    if cap.0 == 0 {
        return Err(ParamError::new(field, "must be positive"));
    }
    if rate.0 == 0 {
        return Err(ParamError::new(rate_field, "must be positive"));
    }
    if !cap.0.is_multiple_of(rate.0) {
        return Err(ParamError::new(
            field,
            format!(
                "{cap} is not a whole number of {rate} links ({rate_field}): give a multiple of {rate}"
            ),
        ));
    }
    Ok(cap.0 / rate.0)
}

/// The DR layer of `c`, whose campuses are `campus` (their top tier is what the DRs
/// link to).
fn dr_layer(c: &MultiCampusCfg, campus: &Campus) -> Result<DrLayer, ParamError> {
    let fe = |field: &str, m: String| ParamError::new(field, m);
    if c.campuses < 2 {
        return Err(fe(
            "campuses",
            format!(
                "campuses = {}: a multi-campus topology needs at least 2 campuses (a DCI joins two)",
                c.campuses
            ),
        ));
    }
    let (top, top_field, top_word) = campus.top();
    if top == 0 {
        return Err(fe(
            top_field,
            format!(
                "{top_field} = 0: each campus needs at least 1 {top_word}, the DR switches link to the {top_field}"
            ),
        ));
    }
    if c.dr_switches == 0 {
        return Err(fe(
            "dr_switches",
            "dr_switches = 0: each campus needs at least 1 DR switch".into(),
        ));
    }
    // Zero ports is this field written wrong, not the capacities that would fail to
    // fit in them below.
    if c.dr_ports == 0 {
        return Err(fe(
            "dr_ports",
            "dr_ports = 0: a DR needs ports for its campus and DCI links".into(),
        ));
    }
    if c.dr_buffer == 0 {
        return Err(fe("dr_buffer", "must be positive".into()));
    }
    let dr_rate = c.dr_link_rate.unwrap_or(c.dci_link_rate);
    let rate_field = if c.dr_link_rate.is_some() {
        "dr_link_rate"
    } else {
        "dci_link_rate"
    };
    let campus_links = whole_links(
        c.campus_to_dr_capacity,
        dr_rate,
        "campus_to_dr_capacity",
        rate_field,
    )?;
    let pairs = top as u64 * c.dr_switches as u64;
    if !campus_links.is_multiple_of(pairs) {
        let step = Rate(dr_rate.0.saturating_mul(pairs).min(MAX_RATE_BPS));
        return Err(fe(
            "campus_to_dr_capacity",
            format!(
                "{} is {campus_links} links of {dr_rate}, which do not split evenly over the {top} {top_field} x {} DR switches of a campus (every {top_word} has the same number of links to every DR): give a multiple of {step}",
                c.campus_to_dr_capacity, c.dr_switches
            ),
        ));
    }
    let dci_links = whole_links(
        c.dci_capacity,
        c.dci_link_rate,
        "dci_capacity",
        "dci_link_rate",
    )?;
    let d = c.dr_switches as u64;
    if !dci_links.is_multiple_of(d) {
        let step = Rate(c.dci_link_rate.0.saturating_mul(d).min(MAX_RATE_BPS));
        return Err(fe(
            "dci_capacity",
            format!(
                "{} is {dci_links} DCI links of {}, which do not split evenly over the {} DR switches of a campus: give a multiple of {step}",
                c.dci_capacity, c.dci_link_rate, c.dr_switches
            ),
        ));
    }
    // Ports of one DR: its share of the campus links, and its share of each other
    // campus's DCI links.
    let ports = c.dr_ports as u64;
    let to_campus = campus_links / d;
    if to_campus > ports {
        return Err(fe(
            "campus_to_dr_capacity",
            format!(
                "{} needs {to_campus} ports of {dr_rate} on each of the {} DR switches, which have dr_ports = {}: at most {} is allowed",
                c.campus_to_dr_capacity,
                c.dr_switches,
                c.dr_ports,
                Rate(dr_rate.0.saturating_mul(ports * d).min(MAX_RATE_BPS))
            ),
        ));
    }
    let peers = c.campuses as u64 - 1;
    let dci_per_dr = (dci_links / d).saturating_mul(peers);
    if to_campus.saturating_add(dci_per_dr) > ports {
        // The most DCI links per peer campus that still fit, as a whole share per DR.
        let free_per_peer = (ports - to_campus) / peers;
        return Err(fe(
            "dci_capacity",
            format!(
                "{} is more than the DR ports can carry: it needs {} DCI ports on each DR toward each of {peers} other campus(es), but a DR has dr_ports = {} of which {to_campus} link to its campus: at most {} per campus pair is allowed",
                c.dci_capacity,
                dci_links / d,
                c.dr_ports,
                Rate(
                    c.dci_link_rate
                        .0
                        .saturating_mul(free_per_peer * d)
                        .min(MAX_RATE_BPS)
                )
            ),
        ));
    }
    Ok(DrLayer {
        per_top_dr: campus_links / pairs,
        dci_links,
    })
}

/// The whole graph's counts, checked as far as counting needs, and one campus's server
/// count: what [`build`] checks against the size limit before it allocates.
fn counts(c: &MultiCampusCfg) -> Result<(TopoSize, u64), ParamError> {
    let campus = Campus::of(c)?;
    let layer = dr_layer(c, &campus)?;
    let n = c.campuses as u64;
    let (top, _, _) = campus.top();
    // Hosts and every link of every campus, DR layer and DCI.
    let one = campus.size()?;
    let campus_links = one.topo.links.saturating_add(
        layer
            .per_top_dr
            .saturating_mul(top as u64 * c.dr_switches as u64),
    );
    let dci = layer.dci_links.saturating_mul(n * (n - 1) / 2);
    let size = TopoSize {
        hosts: one.topo.hosts.saturating_mul(n),
        switches: one
            .topo
            .switches
            .saturating_add(c.dr_switches as u64)
            .saturating_mul(n),
        edge_switches: one.topo.edge_switches.saturating_mul(n),
        links: campus_links.saturating_mul(n).saturating_add(dci),
        host_rate_bps: one.topo.host_rate_bps,
    };
    Ok((size, one.servers))
}

/// Builds the multi-campus graph.
pub fn build(c: &MultiCampusCfg) -> Result<TopoGraph, ParamError> {
    let campus = Campus::of(c)?;
    let (size, servers) = counts(c)?;
    let layer = dr_layer(c, &campus)?;
    let dci_delay = c.dci_delay()?;
    let (top, _, top_word) = campus.top();
    super::check_size(size.hosts, size.links)?;
    let one = campus.build()?;
    let delay = link_delay(c.link_delay, c.link_length, "link_delay", "link_length")?;
    let dr_rate = c.dr_link_rate.unwrap_or(c.dci_link_rate);
    // Within the size checked above, so it fits.
    let servers = servers as u32;
    let role = NodeRole::Dr(DrSpec {
        buffer: c.dr_buffer,
        dci_lossless: c.dci_lossless,
    });
    let mut g = TopoGraph::default();
    // Top-tier and DR node indices of each campus.
    let mut tops: Vec<Vec<usize>> = Vec::new();
    let mut drs: Vec<Vec<usize>> = Vec::new();
    // Host id within a campus of each node of `one` that is a host.
    let mut host_in_campus: Vec<Option<usize>> = vec![None; one.nodes.len()];
    for (h, &node) in one.hosts.iter().enumerate() {
        host_in_campus[node] = Some(h);
    }
    // Both generators name their top tier by the word (`spine<i>`, `core<i>`).
    let one_tops: Vec<usize> = (0..one.nodes.len())
        .filter(|&i| one.nodes[i].is_switch && one.nodes[i].name.starts_with(top_word))
        .collect();
    debug_assert_eq!(one_tops.len(), top as usize);
    for campus in 0..c.campuses {
        let base = g.nodes.len();
        let host_base = g.hosts.len();
        // Node i of `one` is node base + i here.
        for (ns, h) in one.nodes.iter().zip(&host_in_campus) {
            let name = match h {
                Some(h) => format!("c{campus}-host{}", host_base + h),
                None => format!("c{campus}-{}", ns.name),
            };
            let n = g.add_node(name, ns.is_switch);
            g.nodes[n].campus = Some(campus);
        }
        for (&h, &s) in one.hosts.iter().zip(&one.server_of_host) {
            g.hosts.push(base + h);
            g.server_of_host.push(campus * servers + s);
        }
        for l in &one.links {
            g.link(base + l.a, base + l.b, l.rate, l.delay);
        }
        tops.push(one_tops.iter().map(|&i| base + i).collect());
    }
    for campus in 0..c.campuses {
        let ids: Vec<usize> = (0..c.dr_switches)
            .map(|d| {
                let n = g.add_node(format!("c{campus}-dr{d}"), true);
                g.nodes[n].role = role.clone();
                g.nodes[n].campus = Some(campus);
                n
            })
            .collect();
        for &sw in &tops[campus as usize] {
            for &dr in &ids {
                for _ in 0..layer.per_top_dr {
                    g.link(sw, dr, dr_rate, delay);
                }
            }
        }
        drs.push(ids);
    }
    for a in 0..drs.len() {
        for b in a + 1..drs.len() {
            for i in 0..layer.dci_links as usize {
                let d = i % drs[a].len();
                g.link(drs[a][d], drs[b][d], c.dci_link_rate, dci_delay);
            }
        }
    }
    Ok(g)
}

#[cfg(test)]
mod tests;
