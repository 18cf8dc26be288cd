//! A rail-optimized GPU cluster (`kind = "rail_optimized"`): servers of `gpus_per_server`
//! GPUs, each GPU with its own NIC, NIC `r` of every server cabled to the leaf switch of
//! rail `r`.
//!
//! This is the back-end network of NVIDIA's DGX SuperPOD reference architectures (the
//! DGX H100 SuperPOD's "rail-optimized" compute fabric: each of a DGX's eight ConnectX-7
//! ports goes to a different leaf, so GPU `r` of every server in a scalable unit shares
//! leaf `r`) and of Meta's and Alibaba's training clusters (Gangidi et al., "RDMA over
//! Ethernet for Distributed AI Training at Meta Scale", SIGCOMM 2024; Qian et al.,
//! "Alibaba HPN: A Data Center Network for Large Language Model Training", SIGCOMM 2024,
//! whose NICs have two ports on two independent planes). NCCL places GPU `r` of every
//! server on the same ring or tree channel, so most collective traffic stays on one
//! rail: it crosses two links and one leaf. Traffic between rails climbs to a spine.
//!
//! Shape: `servers` servers split evenly over `leaves_per_rail` leaves per rail (a
//! rail's leaf `i` takes servers `i * servers / leaves_per_rail ..`); every leaf of a
//! plane joins every spine of that plane by `uplinks_per_pair` links. With `planes` > 1
//! each NIC has one port per plane, `nic_rate / planes` each, and each plane is an
//! independent copy of the rail fabric (no link joins two planes; the NIC spreads or
//! pins its packets as `transport.rail` says). The spine count is given (`spines`) or
//! derived from the leaves' `oversubscription` (downlink : uplink capacity, 1 for a
//! non-blocking fabric): spines = servers per leaf x port rate / (oversubscription x
//! uplinks_per_pair x uplink_rate), which must be whole. `switch_radix`, when given,
//! bounds the ports of every leaf and spine.
//!
//! Host ids run server by server: host = server x gpus_per_server + gpu; its port `p`
//! is its link in plane `p`. Names: `s<server>-gpu<g>`, `rail<r>-leaf<i>`, `spine<j>`,
//! prefixed `p<plane>-` when there are several planes. Rates, delays, buffers, flow
//! control and load balancing are the fabric's, as for every kind.
//!
//! **The scale-up domain** (`scale_up = "nvlink"` or `"pcie"`). The GPUs of a server are
//! joined by NVLink through an NVSwitch (or by PCIe through a PCIe switch), modelled as
//! links and a switch node in the same engine. A GPU then reaches the network through
//! its own crossbar (`s<server>-gpu<g>-xbar`, a switch with no forwarding latency): one
//! link from the host (the GPU's memory, at the fastest of its ports so that it never
//! bottlenecks, no delay), one to the server's `s<server>-nvswitch` (`s<server>-pcie`)
//! at the GPU's scale-up bandwidth with half the scale-up latency (the switch itself
//! adds none), and its NIC ports to the rail leaves. The routes are shortest paths, so:
//! GPUs of one server talk over NVLink (4 links: GPU, crossbar, NVSwitch, crossbar, GPU;
//! the rails are 6 or more) and never touch a rail; GPU `g` of one server reaches GPU
//! `g` of another over rail `g` (4 links: a crossbar, the leaf, a crossbar); GPU `a` to
//! GPU `b != a` of another server has three paths of 6 links, among which ECMP picks per
//! flow: rail `a` and a spine, NVLink then rail `b` (what NCCL's PXN does: the data move
//! to the GPU on the destination's rail, whose NIC sends them), or rail `a` then NVLink
//! at the far end. With `spines = 0` (a rail-only network) only the last two remain.
//!
//! **PXN** (`pxn`, with NVLink). NCCL's PXN ("PCI x NVLink", NCCL 2.12: NVIDIA's
//! technical blog "Doubling all2all Performance with NVIDIA Collective Communication
//! Library 2.12", 2022; `NCCL_PXN_DISABLE` in NCCL's documentation of environment
//! variables) moves data bound for another server over NVLink to the GPU that shares
//! the destination's rail, whose NIC sends it, so that it crosses one leaf and no spine.
//! `pxn = true` makes that the only path a GPU's crossbar offers toward a GPU of another
//! server and rail; `pxn = false` the GPU's own NIC, and the leaves then send such
//! traffic to a spine rather than down to a server whose NVLink would relay it (with
//! `spines = 0` that relay is the only way and stays). Unset, the switches choose by
//! ECMP among all three paths. The rule is steering of the routing tables
//! ([`crate::model::routing::Steering`]): nothing on the per-packet path knows of it.

use super::{delay_params, link_delay, GraphGenerator, SteerSpec, TopoGraph, TopoSize};
use crate::base::ids::MAX_INDEX;
use crate::base::param::{size_knobs, Described, Param, ParamError, SizeKnob};
use crate::base::units::serde_units as su;
use crate::base::units::{Rate, Time};
use serde::Deserialize;

/// Most GPUs in one server. The largest NVLink domain NVIDIA ships in one enclosure is
/// the GB200 NVL72 rack's 72 GPUs, but its GPUs sit in 18 compute trays of 4; an
/// eight-GPU HGX baseboard is the usual server. 64 keeps a server's rails (one leaf each)
/// within what a leaf's radix could serve and refuses typing mistakes early.
pub const MAX_GPUS_PER_SERVER: u32 = 64;

fn d_oversubscription() -> f64 {
    1.0
}

/// How the GPUs of a server are joined.
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum ScaleUp {
    /// Not at all: GPUs of a server talk over their NICs and the rails.
    #[default]
    None,
    /// NVLink through an NVSwitch.
    Nvlink,
    /// PCIe through a PCIe switch.
    Pcie,
}

/// An NVLink generation: links per GPU and the rate of one link.
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum NvlinkPreset {
    /// H100 SXM, fourth-generation NVLink: 18 links, 900 GB/s per GPU both directions
    /// together (NVIDIA H100 Tensor Core GPU datasheet; NVIDIA H100 Tensor Core GPU
    /// Architecture whitepaper, "18 NVLink links ... 900 GB/sec total bandwidth"), so
    /// 25 GB/s per link and direction, 450 GB/s per direction per GPU.
    #[default]
    H100,
    /// B200, fifth-generation NVLink: 18 links, 1.8 TB/s per GPU both directions together
    /// (NVIDIA DGX B200 datasheet; NVIDIA Blackwell architecture technical brief), so
    /// 50 GB/s per link and direction, 900 GB/s per direction per GPU.
    B200,
}

impl NvlinkPreset {
    /// (links per GPU, rate of a link per direction).
    pub fn links(self) -> (u32, Rate) {
        match self {
            // 25 GB/s = 200 Gbit/s per link and direction.
            NvlinkPreset::H100 => (18, Rate(200_000_000_000)),
            // 50 GB/s = 400 Gbit/s per link and direction.
            NvlinkPreset::B200 => (18, Rate(400_000_000_000)),
        }
    }
}

/// A GPU's PCIe link when `pcie_rate` is not given: Gen5 x16, 32 GT/s per lane with
/// 128b/130b coding (PCI Express Base Specification 5.0): 16 x 32e9 x 128 / 130 =
/// 504.1 Gbit/s (63 GB/s) per direction.
pub const DEFAULT_PCIE_RATE: Rate = Rate(16 * 32_000_000_000 / 130 * 128);

/// One-way GPU-to-GPU latency through the NVSwitch when `scale_up_latency` is not given
/// \[recon\]: NVIDIA's datasheets give bandwidths, not latencies; 500 ns is an assumption
/// of the order of one switch hop and two SerDes links. Set it from a measurement.
pub const DEFAULT_NVLINK_LATENCY: Time = 500 * crate::base::units::NS;

/// One-way GPU-to-GPU latency through a PCIe switch when `scale_up_latency` is not given
/// \[recon\]: an assumption (a PCIe switch hop and two links, about 1 us), as for NVLink.
pub const DEFAULT_PCIE_LATENCY: Time = crate::base::units::US;

/// A rail-optimized GPU cluster.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RailOptimizedCfg {
    /// Servers.
    pub servers: u32,
    /// GPUs per server, each with its own NIC (its rail).
    pub gpus_per_server: u32,
    /// Rails per plane; when given it must equal `gpus_per_server` (one NIC per GPU).
    #[serde(default)]
    pub rails: Option<u32>,
    /// Leaf switches per rail (per plane); the servers are split evenly over them.
    #[serde(default = "super::one")]
    pub leaves_per_rail: u32,
    /// Planes: each NIC has one port per plane, each plane an independent rail fabric.
    #[serde(default = "super::one")]
    pub planes: u32,
    /// Rate of a GPU's NIC, split evenly over its ports (one per plane).
    #[serde(deserialize_with = "su::rate")]
    pub nic_rate: Rate,
    /// Rate of each leaf-spine link (unset: a NIC port's rate).
    #[serde(default, deserialize_with = "su::opt_rate")]
    pub uplink_rate: Option<Rate>,
    /// Parallel links between each leaf and each spine of a plane.
    #[serde(default = "super::one")]
    pub uplinks_per_pair: u32,
    /// Spine switches per plane; omit to derive them from `oversubscription`.
    #[serde(default)]
    pub spines: Option<u32>,
    /// A leaf's downlink : uplink capacity (1: non-blocking); sets the spine count when
    /// `spines` is not given.
    #[serde(default)]
    pub oversubscription: Option<f64>,
    /// Ports of a switch; when given every leaf and spine must fit in it.
    #[serde(default)]
    pub switch_radix: Option<u32>,
    /// Delay of every link (or give `link_length`).
    #[serde(default, deserialize_with = "su::opt_time")]
    pub link_delay: Option<Time>,
    /// Cable length of every link, at 5 ns per metre.
    #[serde(default, deserialize_with = "su::opt_length")]
    pub link_length: Option<f64>,
    /// How the GPUs of a server are joined: `"none"`, `"nvlink"`, `"pcie"` (unset:
    /// `"nvlink"` when an `nvlink*` field is given, else `"none"`).
    #[serde(default)]
    pub scale_up: Option<ScaleUp>,
    /// NVLink generation (`"h100"`, `"b200"`): links per GPU and their rate.
    #[serde(default)]
    pub nvlink: Option<NvlinkPreset>,
    /// NVLink links per GPU (unset: the preset's).
    #[serde(default)]
    pub nvlink_links: Option<u32>,
    /// Rate of one NVLink link per direction (unset: the preset's).
    #[serde(default, deserialize_with = "su::opt_rate")]
    pub nvlink_link_rate: Option<Rate>,
    /// A GPU's PCIe link per direction, with `scale_up = "pcie"` (unset: Gen5 x16).
    #[serde(default, deserialize_with = "su::opt_rate")]
    pub pcie_rate: Option<Rate>,
    /// One-way GPU-to-GPU latency through the scale-up switch.
    #[serde(default, deserialize_with = "su::opt_time")]
    pub scale_up_latency: Option<Time>,
    /// PXN: `true`, a GPU sends to a GPU of another server and rail over NVLink to the
    /// GPU on the destination's rail, whose NIC sends it; `false`, through its own NIC
    /// and a spine; unset, ECMP among every shortest path. Needs `scale_up = "nvlink"`.
    #[serde(default)]
    pub pxn: Option<bool>,
}

/// A server's scale-up domain as built: the bandwidth of a GPU's port into it and the
/// one-way latency between two GPUs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ScaleUpLink {
    /// NVLink or PCIe.
    pub kind: ScaleUp,
    /// A GPU's bandwidth into the scale-up switch, per direction (all its links).
    pub rate: Rate,
    /// GPU to GPU, one way, through the switch.
    pub latency: Time,
}

impl RailOptimizedCfg {
    /// The scale-up domain the settings describe (`None`: none); errors name the field.
    pub fn scale_up_link(&self) -> Result<Option<ScaleUpLink>, ParamError> {
        let fe = |field: &str, m: String| Err(ParamError::new(field, m));
        let nvlink_set =
            self.nvlink.is_some() || self.nvlink_links.is_some() || self.nvlink_link_rate.is_some();
        let kind = self.scale_up.unwrap_or(if nvlink_set {
            ScaleUp::Nvlink
        } else {
            ScaleUp::None
        });
        if kind != ScaleUp::Nvlink && nvlink_set {
            return fe(
                "scale_up",
                format!(
                    "{kind:?} with NVLink settings (nvlink, nvlink_links, nvlink_link_rate): \
                     they need scale_up = \"nvlink\""
                )
                .to_lowercase(),
            );
        }
        if kind != ScaleUp::Pcie && self.pcie_rate.is_some() {
            return fe("pcie_rate", "is only read with scale_up = \"pcie\"".into());
        }
        if kind == ScaleUp::None && self.scale_up_latency.is_some() {
            return fe(
                "scale_up_latency",
                "is only read with scale_up = \"nvlink\" or \"pcie\"".into(),
            );
        }
        let (rate, latency) = match kind {
            ScaleUp::None => return Ok(None),
            ScaleUp::Nvlink => {
                let (links, per) = self.nvlink.unwrap_or_default().links();
                let links = self.nvlink_links.unwrap_or(links);
                let per = self.nvlink_link_rate.unwrap_or(per);
                if links == 0 || links > 64 {
                    return fe(
                        "nvlink_links",
                        format!("{links}: a GPU has 1 to 64 NVLink links"),
                    );
                }
                if per.0 == 0 {
                    return fe("nvlink_link_rate", "must be positive".into());
                }
                let Some(rate) = per.0.checked_mul(links as u64) else {
                    return fe(
                        "nvlink_link_rate",
                        format!("{per} x {links} links is too fast"),
                    );
                };
                (
                    Rate(rate),
                    self.scale_up_latency.unwrap_or(DEFAULT_NVLINK_LATENCY),
                )
            }
            ScaleUp::Pcie => {
                let r = self.pcie_rate.unwrap_or(DEFAULT_PCIE_RATE);
                if r.0 == 0 {
                    return fe("pcie_rate", "must be positive".into());
                }
                (r, self.scale_up_latency.unwrap_or(DEFAULT_PCIE_LATENCY))
            }
        };
        if latency > super::MAX_LINK_DELAY {
            return fe("scale_up_latency", "at most 1 s is allowed".into());
        }
        Ok(Some(ScaleUpLink {
            kind,
            rate,
            latency,
        }))
    }
}

impl Described for RailOptimizedCfg {
    const ABOUT: &'static str =
        "GPU servers whose NIC r goes to the leaf of rail r; leaves joined by spines; planes";
    fn params() -> Vec<Param> {
        let mut v = vec![
            Param::required("servers", "servers"),
            Param::required(
                "gpus_per_server",
                format!("GPUs per server (1 to {MAX_GPUS_PER_SERVER}), each with its own NIC"),
            ),
            Param::unset(
                "rails",
                "rails per plane; if given, must equal gpus_per_server",
            ),
            Param::plain(
                "leaves_per_rail",
                super::one(),
                "leaves per rail and plane; servers split evenly over them",
            ),
            Param::plain(
                "planes",
                super::one(),
                "planes: one NIC port each, independent copies of the rail fabric",
            ),
            Param::required(
                "nic_rate",
                "rate of a GPU's NIC, split evenly over its planes",
            ),
            Param::unset(
                "uplink_rate",
                "rate of each leaf-spine link (unset: a NIC port's rate)",
            ),
            Param::plain(
                "uplinks_per_pair",
                super::one(),
                "parallel links between each leaf and each spine",
            ),
            Param::unset(
                "spines",
                "spines per plane; omit to derive them from oversubscription",
            ),
            Param::plain(
                "oversubscription",
                d_oversubscription(),
                "leaf downlink:uplink capacity when spines is not given (1: non-blocking)",
            ),
            Param::unset("switch_radix", "ports of a switch; every switch must fit"),
            Param::unset(
                "scale_up",
                "none, nvlink (NVSwitch) or pcie (PCIe switch); unset: nvlink if an nvlink field is given",
            ),
            Param::unset(
                "nvlink",
                "NVLink preset, implies scale_up = \"nvlink\": \"h100\" (18 x 25 GB/s per direction; the default) or \"b200\" (18 x 50 GB/s)",
            ),
            Param::unset("nvlink_links", "NVLink links per GPU (unset: the preset's)"),
            Param::unset(
                "nvlink_link_rate",
                "rate of one NVLink link per direction (unset: the preset's)",
            ),
            Param::rate(
                "pcie_rate",
                DEFAULT_PCIE_RATE.0 as f64,
                "a GPU's PCIe link per direction (Gen5 x16)",
            ),
            Param::unset(
                "pxn",
                "true: traffic to another server and rail crosses NVLink to the GPU on the destination's rail and leaves by its NIC (NCCL's PXN); false: by the GPU's own NIC and a spine; unset: ECMP among all shortest paths. Needs scale_up = \"nvlink\"",
            ),
            Param::unset(
                "scale_up_latency",
                "one-way GPU-to-GPU latency through the scale-up switch (nvlink 500 ns, pcie 1 us) [recon]",
            ),
        ];
        v.extend(delay_params());
        v
    }
}

impl GraphGenerator for RailOptimizedCfg {
    fn generate(&self, _base_dir: &std::path::Path) -> Result<TopoGraph, ParamError> {
        build(self)
    }

    fn size(&self, _base_dir: &std::path::Path) -> Result<Option<TopoSize>, ParamError> {
        Ok(Some(counts(self)?.size))
    }

    fn size_drivers(&self) -> &'static str {
        "servers x gpus_per_server (hosts), planes x (hosts + gpus_per_server x \
         leaves_per_rail x spines x uplinks_per_pair) (links)"
    }

    fn size_knobs(&self, _base_dir: &std::path::Path) -> Vec<SizeKnob<TopoSize>> {
        size_knobs(
            self,
            &[
                ("servers", |c| c.servers = c.leaves_per_rail.max(1)),
                ("gpus_per_server", |c| {
                    c.gpus_per_server = 1;
                    c.rails = None;
                }),
                ("planes", |c| c.planes = 1),
                ("leaves_per_rail", |c| c.leaves_per_rail = 1),
                ("spines", |c| c.spines = c.spines.map(|s| s.min(1))),
                ("uplinks_per_pair", |c| c.uplinks_per_pair = 1),
            ],
            |c| counts(c).ok().map(|s| s.size),
        )
    }
}

/// What the settings make, checked as far as counting needs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RailCounts {
    /// The graph's counts.
    pub size: TopoSize,
    /// Spines per plane.
    pub spines: u32,
    /// Servers on each leaf.
    pub servers_per_leaf: u32,
    /// Rate of one NIC port (one plane's share of the NIC).
    pub port_rate: Rate,
    /// The scale-up domain, if any.
    pub scale_up: Option<ScaleUpLink>,
}

/// The graph's counts and shape from the settings alone: what [`build`] checks against
/// the size limit before it allocates. Errors name the field at fault.
pub fn counts(c: &RailOptimizedCfg) -> Result<RailCounts, ParamError> {
    let fe = |field: &str, m: String| Err(ParamError::new(field, m));
    for (field, v) in [
        ("servers", c.servers),
        ("leaves_per_rail", c.leaves_per_rail),
        ("planes", c.planes),
        ("uplinks_per_pair", c.uplinks_per_pair),
    ] {
        if v == 0 {
            return fe(field, "must be at least 1".into());
        }
    }
    if c.gpus_per_server == 0 || c.gpus_per_server > MAX_GPUS_PER_SERVER {
        return fe(
            "gpus_per_server",
            format!(
                "{}: a server has 1 to {MAX_GPUS_PER_SERVER} GPUs",
                c.gpus_per_server
            ),
        );
    }
    if c.pxn.is_some() && c.scale_up_link()?.map(|s| s.kind) != Some(ScaleUp::Nvlink) {
        return fe(
            "pxn",
            "PXN sends over NVLink to another GPU's NIC: it needs scale_up = \"nvlink\" (or an nvlink preset); remove pxn or add NVLink".into(),
        );
    }
    if let Some(r) = c.rails {
        if r != c.gpus_per_server {
            return fe(
                "rails",
                format!(
                    "{r} rails with {} GPUs per server: each GPU has its own NIC, its rail, so \
                     rails must equal gpus_per_server (one NIC per GPU; use planes for more \
                     ports per NIC)",
                    c.gpus_per_server
                ),
            );
        }
    }
    if c.planes > 255 {
        return fe("planes", format!("{}: at most 255 planes", c.planes));
    }
    if c.nic_rate.0 == 0 {
        return fe("nic_rate", "must be positive".into());
    }
    if !c.nic_rate.0.is_multiple_of(c.planes as u64) {
        return fe(
            "planes",
            format!(
                "{} planes do not divide nic_rate {} into equal ports: choose planes that divide it",
                c.planes, c.nic_rate
            ),
        );
    }
    let port_rate = Rate(c.nic_rate.0 / c.planes as u64);
    let scale_up = c.scale_up_link()?;
    if !c.servers.is_multiple_of(c.leaves_per_rail) {
        return fe(
            "leaves_per_rail",
            format!(
                "{} servers do not split evenly over {} leaves per rail",
                c.servers, c.leaves_per_rail
            ),
        );
    }
    let servers_per_leaf = c.servers / c.leaves_per_rail;
    let up = c.uplink_rate.unwrap_or(port_rate);
    if up.0 == 0 {
        return fe("uplink_rate", "must be positive".into());
    }
    let leaves = (c.gpus_per_server as u64).saturating_mul(c.leaves_per_rail as u64);
    let spines = match (c.spines, c.oversubscription) {
        (Some(_), Some(_)) => {
            return fe(
                "oversubscription",
                "give either spines or oversubscription, not both".into(),
            )
        }
        (Some(s), None) => s,
        // One leaf in the plane: nothing to join.
        (None, None) if leaves == 1 => 0,
        (None, o) => {
            let o = o.unwrap_or_else(d_oversubscription);
            if !(o.is_finite() && o >= 1.0) {
                return fe(
                    "oversubscription",
                    format!("{o} is not a ratio of at least 1 (downlink : uplink capacity)"),
                );
            }
            let down = servers_per_leaf as f64 * port_rate.0 as f64;
            let n = down / (o * c.uplinks_per_pair as f64 * up.0 as f64);
            if n > MAX_INDEX as f64 {
                return fe(
                    "oversubscription",
                    format!("{o} needs {n:.0} spines: far more than can be simulated"),
                );
            }
            if (n - n.round()).abs() > 1e-9 || n.round() < 1.0 {
                return fe(
                    "oversubscription",
                    format!(
                        "{o}:1 needs {n:.3} spines ({servers_per_leaf} servers of {port_rate} \
                         below a leaf, {} uplinks of {up} per spine): impossible with these \
                         port counts; choose a ratio that gives a whole number, or give spines",
                        c.uplinks_per_pair
                    ),
                );
            }
            n.round() as u32
        }
    };
    // A scale-up domain joins the rails of a server (a rail-only network); without one
    // only spines join the leaves.
    let joined = scale_up.is_some() && c.leaves_per_rail == 1;
    if spines == 0 && leaves > 1 && !joined {
        return fe(
            "spines",
            if scale_up.is_some() {
                "more than one leaf per rail needs at least one spine to join them".into()
            } else {
                "more than one leaf per plane needs at least one spine (or a scale_up \
                 domain to join the rails)"
                    .into()
            },
        );
    }
    if let Some(radix) = c.switch_radix {
        let leaf_ports = (servers_per_leaf as u64)
            .saturating_add((spines as u64).saturating_mul(c.uplinks_per_pair as u64));
        if leaf_ports > radix as u64 {
            return fe(
                "switch_radix",
                format!(
                    "a leaf needs {leaf_ports} ports ({servers_per_leaf} servers, {spines} spines x {} uplinks) but a switch has {radix}",
                    c.uplinks_per_pair
                ),
            );
        }
        let spine_ports = leaves.saturating_mul(c.uplinks_per_pair as u64);
        if spines > 0 && spine_ports > radix as u64 {
            return fe(
                "switch_radix",
                format!(
                    "a spine needs {spine_ports} ports ({leaves} leaves x {} uplinks) but a switch has {radix}",
                    c.uplinks_per_pair
                ),
            );
        }
    }
    let planes = c.planes as u64;
    let hosts = (c.servers as u64).saturating_mul(c.gpus_per_server as u64);
    let uplinks = leaves
        .saturating_mul(spines as u64)
        .saturating_mul(c.uplinks_per_pair as u64);
    let fabric_switches = planes.saturating_mul(leaves.saturating_add(spines as u64));
    let nic_links = planes.saturating_mul(hosts.saturating_add(uplinks));
    let size = match scale_up {
        None => TopoSize {
            hosts,
            switches: fabric_switches,
            edge_switches: planes.saturating_mul(leaves),
            links: nic_links,
            host_rate_bps: c.nic_rate.0,
        },
        // A crossbar per GPU (the hosts' edge switches) and a switch per server; per GPU
        // a link from its memory and one to the scale-up switch.
        Some(su) => TopoSize {
            hosts,
            switches: fabric_switches
                .saturating_add(hosts)
                .saturating_add(c.servers as u64),
            edge_switches: hosts,
            links: nic_links.saturating_add(hosts.saturating_mul(2)),
            host_rate_bps: su.rate.0.max(c.nic_rate.0),
        },
    };
    Ok(RailCounts {
        size,
        spines,
        servers_per_leaf,
        port_rate,
        scale_up,
    })
}

/// Builds the rail fabric.
pub fn build(c: &RailOptimizedCfg) -> Result<TopoGraph, ParamError> {
    let k = counts(c)?;
    super::check_size(k.size.hosts, k.size.links)?;
    let delay = link_delay(c.link_delay, c.link_length, "link_delay", "link_length")?;
    let up = c.uplink_rate.unwrap_or(k.port_rate);
    let gpus = c.gpus_per_server;
    let mut g = TopoGraph {
        // With a scale-up domain the NIC ports belong to the GPU's crossbar: the host
        // has one port, to it.
        rails: if k.scale_up.is_some() { 1 } else { c.planes },
        ..Default::default()
    };
    for s in 0..c.servers {
        for r in 0..gpus {
            g.add_host(format!("s{s}-gpu{r}"), s);
        }
    }
    // What the NIC ports hang off: the GPU itself, or its crossbar.
    let mut nic_node: Vec<usize> = g.hosts.clone();
    let mut nvswitch_of: Vec<usize> = vec![0; g.hosts.len()];
    // Each GPU's links to its rail leaves, for PXN's steering.
    let mut rail_links: Vec<Vec<usize>> = vec![Vec::new(); g.hosts.len()];
    if let Some(su) = k.scale_up {
        let switch = match su.kind {
            ScaleUp::Pcie => "pcie",
            _ => "nvswitch",
        };
        let to_gpu = su.latency / 2;
        // The GPU's memory feeds its crossbar at the fastest of its ports: never the
        // bottleneck.
        let inner = Rate(su.rate.0.max(k.port_rate.0));
        for s in 0..c.servers {
            let sw = g.add_node(format!("s{s}-{switch}"), true);
            g.nodes[sw].forwarding = Some(0);
            for r in 0..gpus {
                let h = (s * gpus + r) as usize;
                let x = g.add_node(format!("s{s}-gpu{r}-xbar"), true);
                g.nodes[x].forwarding = Some(0);
                g.link(g.hosts[h], x, inner, 0);
                // Half the GPU-to-GPU latency on each side of the switch, which adds
                // none of its own.
                g.link(x, sw, su.rate, to_gpu);
                nic_node[h] = x;
                nvswitch_of[h] = sw;
            }
        }
    }
    let prefix = |p: u32| {
        if c.planes > 1 {
            format!("p{p}-")
        } else {
            String::new()
        }
    };
    // Plane by plane, so that a NIC's links, and hence its ports, are in plane order.
    for p in 0..c.planes {
        let pre = prefix(p);
        // leaves[r * leaves_per_rail + i]: rail r's leaf i.
        let leaves: Vec<usize> = (0..gpus)
            .flat_map(|r| (0..c.leaves_per_rail).map(move |i| (r, i)))
            .map(|(r, i)| g.add_node(format!("{pre}rail{r}-leaf{i}"), true))
            .collect();
        let spines: Vec<usize> = (0..k.spines)
            .map(|j| g.add_node(format!("{pre}spine{j}"), true))
            .collect();
        for s in 0..c.servers {
            for r in 0..gpus {
                let h = nic_node[(s * gpus + r) as usize];
                let leaf = leaves[(r * c.leaves_per_rail + s / k.servers_per_leaf) as usize];
                g.link(h, leaf, k.port_rate, delay);
                rail_links[(s * gpus + r) as usize].push(leaf);
            }
        }
        for &l in &leaves {
            for &sp in &spines {
                for _ in 0..c.uplinks_per_pair {
                    g.link(l, sp, up, delay);
                }
            }
            // Without PXN a leaf sends traffic for another rail up to a spine, not down
            // to a server whose GPU would relay it over NVLink.
            if c.pxn == Some(false) && !spines.is_empty() {
                g.steer.push(SteerSpec {
                    at: l,
                    server: None,
                    via: spines.clone(),
                });
            }
        }
    }
    // PXN is a choice at the GPU's crossbar, for traffic leaving the server: NVLink (to
    // the GPU on the destination's rail) or the GPU's own NIC.
    if let (Some(pxn), Some(_)) = (c.pxn, k.scale_up) {
        for (h, &x) in nic_node.iter().enumerate() {
            g.steer.push(SteerSpec {
                at: x,
                server: Some(g.server_of_host[h]),
                via: if pxn {
                    vec![nvswitch_of[h]]
                } else {
                    rail_links[h].clone()
                },
            });
        }
    }
    Ok(g)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(src: &str) -> RailOptimizedCfg {
        toml::from_str(src).unwrap()
    }

    const BASE: &str = "servers = 4\ngpus_per_server = 8\nnic_rate = \"400Gbps\"\n";

    fn name_of(g: &TopoGraph, n: usize) -> &str {
        &g.nodes[n].name
    }

    /// Names of the nodes joined to node `n`, in link order.
    fn neighbours(g: &TopoGraph, n: usize) -> Vec<String> {
        g.links
            .iter()
            .filter_map(|l| {
                (l.a == n)
                    .then_some(l.b)
                    .or((l.b == n).then_some(l.a))
                    .map(|m| name_of(g, m).to_string())
            })
            .collect()
    }

    #[test]
    fn counts_match_the_built_graph() {
        for extra in [
            "",
            "planes = 2",
            "leaves_per_rail = 2\nuplinks_per_pair = 2",
            "oversubscription = 2.0",
            "spines = 3\nplanes = 4",
        ] {
            let c = cfg(&format!("{BASE}{extra}"));
            let k = counts(&c).unwrap();
            let g = build(&c).unwrap();
            g.validate().unwrap();
            assert_eq!(g.hosts.len() as u64, k.size.hosts, "{extra}");
            let sw = g.nodes.iter().filter(|n| n.is_switch).count() as u64;
            assert_eq!(sw, k.size.switches, "{extra}");
            assert_eq!(g.links.len() as u64, k.size.links, "{extra}");
        }
    }

    #[test]
    fn nic_r_of_every_server_reaches_the_leaf_of_rail_r() {
        let c = cfg(&format!("{BASE}leaves_per_rail = 2\nplanes = 2"));
        let g = build(&c).unwrap();
        for s in 0..4u32 {
            for r in 0..8u32 {
                let h = g.hosts[(s * 8 + r) as usize];
                assert_eq!(name_of(&g, h), format!("s{s}-gpu{r}"));
                assert_eq!(g.server_of_host[(s * 8 + r) as usize], s);
                // Port p in plane p; servers 0-1 under leaf 0, 2-3 under leaf 1.
                let i = s / 2;
                assert_eq!(
                    neighbours(&g, h),
                    vec![format!("p0-rail{r}-leaf{i}"), format!("p1-rail{r}-leaf{i}")]
                );
            }
        }
    }

    #[test]
    fn a_non_blocking_leaf_has_as_much_capacity_up_as_down() {
        // 4 servers of 400G below each leaf: 1600G down, so 4 spines of 400G at 1:1,
        // 2 at 2:1, and 2 spines of 2 x 400G links at 1:1.
        let spines = |extra: &str| counts(&cfg(&format!("{BASE}{extra}"))).unwrap().spines;
        assert_eq!(spines(""), 4);
        assert_eq!(spines("oversubscription = 2.0"), 2);
        assert_eq!(spines("uplinks_per_pair = 2"), 2);
        assert_eq!(spines("uplink_rate = \"800Gbps\""), 2);
        // Two planes of 200G ports: 800G down per leaf, 4 spines of 200G per plane.
        let k = counts(&cfg(&format!("{BASE}planes = 2"))).unwrap();
        assert_eq!((k.spines, k.port_rate), (4, Rate(200_000_000_000)));
        let g = build(&cfg(BASE)).unwrap();
        let leaf = g
            .nodes
            .iter()
            .position(|n| n.name == "rail5-leaf0")
            .unwrap();
        let (mut down, mut upc) = (0u64, 0u64);
        for l in g.links.iter().filter(|l| l.a == leaf || l.b == leaf) {
            let other = if l.a == leaf { l.b } else { l.a };
            if g.nodes[other].is_switch {
                upc += l.rate.0;
            } else {
                down += l.rate.0;
            }
        }
        assert_eq!((down, upc), (1_600_000_000_000, 1_600_000_000_000));
    }

    #[test]
    fn bad_shapes_name_the_field() {
        let with = |f: &dyn Fn(&mut RailOptimizedCfg)| {
            let mut c = cfg(BASE);
            f(&mut c);
            build(&c)
        };
        let bad = |f: &dyn Fn(&mut RailOptimizedCfg)| with(f).unwrap_err();
        assert_eq!(bad(&|c| c.gpus_per_server = 0).field, "gpus_per_server");
        assert_eq!(bad(&|c| c.gpus_per_server = 65).field, "gpus_per_server");
        assert!(with(&|c| c.gpus_per_server = 64).is_ok());
        assert_eq!(bad(&|c| c.rails = Some(4)).field, "rails");
        assert!(with(&|c| c.rails = Some(8)).is_ok());
        assert_eq!(bad(&|c| c.planes = 3).field, "planes");
        assert_eq!(bad(&|c| c.leaves_per_rail = 3).field, "leaves_per_rail");
        let e = bad(&|c| c.oversubscription = Some(3.0));
        assert_eq!(e.field, "oversubscription");
        assert!(e.message.contains("1.333"), "{}", e.message);
        assert_eq!(
            bad(&|c| c.oversubscription = Some(0.5)).field,
            "oversubscription"
        );
        let both = bad(&|c| {
            c.spines = Some(2);
            c.oversubscription = Some(2.0);
        });
        assert_eq!(both.field, "oversubscription");
        assert_eq!(bad(&|c| c.spines = Some(0)).field, "spines");
        // A leaf needs 4 + 4 ports, a spine 8 leaves.
        assert_eq!(bad(&|c| c.switch_radix = Some(7)).field, "switch_radix");
        assert!(with(&|c| c.switch_radix = Some(8)).is_ok());
        assert_eq!(bad(&|c| c.nic_rate = Rate(0)).field, "nic_rate");
        assert_eq!(bad(&|c| c.servers = 0).field, "servers");
    }

    #[test]
    fn the_scale_up_domain_is_a_crossbar_per_gpu_and_a_switch_per_server() {
        let c = cfg(&format!("{BASE}nvlink = \"b200\""));
        let k = counts(&c).unwrap();
        let su = k.scale_up.unwrap();
        // 18 links of 50 GB/s per direction: 900 GB/s = 7.2 Tbit/s.
        assert_eq!(su.rate, Rate(7_200_000_000_000));
        assert_eq!(su.kind, ScaleUp::Nvlink);
        let g = build(&c).unwrap();
        g.validate().unwrap();
        assert_eq!(g.hosts.len() as u64, k.size.hosts);
        let sw = g.nodes.iter().filter(|n| n.is_switch).count() as u64;
        assert_eq!(sw, k.size.switches);
        // 8 rails + 4 spines, 32 crossbars, 4 NVSwitches.
        assert_eq!(sw, 8 + 4 + 32 + 4);
        assert_eq!(g.links.len() as u64, k.size.links);
        let h = g.hosts[13];
        assert_eq!(neighbours(&g, h), vec!["s1-gpu5-xbar"]);
        let x = g
            .nodes
            .iter()
            .position(|n| n.name == "s1-gpu5-xbar")
            .unwrap();
        assert_eq!(
            neighbours(&g, x),
            vec!["s1-gpu5", "s1-nvswitch", "rail5-leaf0"]
        );
        assert_eq!(g.nodes[x].forwarding, Some(0));
        // H100 by default; PCIe Gen5 x16.
        let h100 = counts(&cfg(&format!("{BASE}scale_up = \"nvlink\""))).unwrap();
        assert_eq!(h100.scale_up.unwrap().rate, Rate(3_600_000_000_000));
        let pcie = counts(&cfg(&format!("{BASE}scale_up = \"pcie\""))).unwrap();
        // 16 lanes x 32 GT/s x 128/130: 504.12 Gbit/s.
        let want = 16.0 * 32e9 * 128.0 / 130.0;
        assert!((pcie.scale_up.unwrap().rate.0 as f64 - want).abs() < 1e3);
        assert_eq!(counts(&cfg(BASE)).unwrap().scale_up, None);
    }

    #[test]
    fn scale_up_settings_that_do_not_fit_name_the_field() {
        let bad = |extra: &str| build(&cfg(&format!("{BASE}{extra}"))).unwrap_err().field;
        assert_eq!(bad("scale_up = \"none\"\nnvlink_links = 4"), "scale_up");
        assert_eq!(bad("scale_up = \"pcie\"\nnvlink = \"h100\""), "scale_up");
        assert_eq!(bad("nvlink_links = 0"), "nvlink_links");
        assert_eq!(bad("nvlink_link_rate = \"0bps\""), "nvlink_link_rate");
        assert_eq!(bad("pcie_rate = \"64Gbps\""), "pcie_rate");
        assert_eq!(bad("scale_up_latency = \"1us\""), "scale_up_latency");
        // Two leaves per rail are joined by spines only, scale-up or not.
        assert_eq!(
            bad("nvlink = \"h100\"\nleaves_per_rail = 2\nspines = 0"),
            "spines"
        );
        assert!(build(&cfg(&format!("{BASE}nvlink = \"h100\"\nspines = 0"))).is_ok());
    }

    #[test]
    fn one_leaf_needs_no_spine() {
        let g = build(&cfg(
            "servers = 3\ngpus_per_server = 1\nnic_rate = \"100Gbps\"",
        ))
        .unwrap();
        g.validate().unwrap();
        assert_eq!(g.nodes.iter().filter(|n| n.is_switch).count(), 1);
    }
}
