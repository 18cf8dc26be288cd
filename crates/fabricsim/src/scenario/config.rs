//! The scenario file's schema.
//!
//! Every struct denies unknown fields, so a misspelt key is an error that names it rather
//! than a silently ignored setting. Quantities are strings with units (see
//! [`crate::units`]). Defaults are the values of ALGORITHMS.md; `fabricsim list` prints them.

use crate::units::serde_units as su;
use crate::units::{Rate, Time, MS, NS, US};
use serde::de::Error as _;
use serde::{Deserialize, Deserializer};

/// A whole scenario file.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// Short name used in result folders and tables.
    #[serde(default)]
    pub name: Option<String>,
    /// Free text: which document and experiment this reproduces.
    #[serde(default)]
    pub description: Option<String>,
    /// Seed of every random choice of the run.
    #[serde(default = "d_seed")]
    pub seed: u64,
    /// Simulated time after which the run stops, finished or not.
    #[serde(default = "d_max_time", deserialize_with = "su::time")]
    pub max_time: Time,
    /// A run with unfinished flows and no delivered byte for this long is a stall.
    #[serde(default = "d_stall", deserialize_with = "su::time")]
    pub stall_timeout: Time,
    /// The network.
    pub topology: TopologyCfg,
    /// Switch and link behaviour.
    #[serde(default)]
    pub fabric: FabricCfg,
    /// NIC transport.
    #[serde(default)]
    pub transport: TransportCfg,
    /// Congestion control.
    #[serde(default)]
    pub cc: CcCfg,
    /// Traffic: one or more generators whose flows are merged.
    #[serde(default)]
    pub workload: Vec<WorkloadCfg>,
    /// What to record beyond the standard tables.
    #[serde(default)]
    pub record: RecordCfg,
    /// Named variants: each is the base scenario with some fields overridden.
    #[serde(default)]
    pub variants: Vec<VariantCfg>,
    /// Sweep axes: every combination of their values runs, for every variant.
    #[serde(default)]
    pub sweep: Vec<SweepAxisCfg>,
}

/// One sweep axis: a field and the values it takes.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SweepAxisCfg {
    /// Dotted field path, as for `--set`.
    pub path: String,
    /// Values, in order.
    pub values: Vec<toml::Value>,
    /// Short name used in run names and table columns (default: the path's last part).
    #[serde(default)]
    pub label: Option<String>,
}

fn d_seed() -> u64 {
    1
}
fn d_max_time() -> Time {
    1_000 * MS
}
fn d_stall() -> Time {
    20 * MS
}

/// One variant of a scenario.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VariantCfg {
    /// Name used for its result folder.
    pub name: String,
    /// Overrides: dotted field path -> value, applied like `--set`.
    #[serde(default)]
    pub set: toml::Table,
}

/// The network's shape (a table tagged by `kind`).
#[derive(Clone, Debug, Deserialize)]
#[serde(remote = "Self", rename_all = "snake_case", deny_unknown_fields)]
pub enum TopologyCfg {
    /// Two-tier leaf-spine.
    LeafSpine(LeafSpineCfg),
    /// Three-tier k-ary fat-tree.
    FatTree(FatTreeCfg),
    /// General three-tier Clos: pods of ToR and aggregation switches, and cores.
    ThreeTier(ThreeTierCfg),
    /// Nodes, links and optional static routes listed by hand.
    Custom(CustomTopoCfg),
    /// A topology file in the ns-3 HPCC format (`nodes switches links`, the switch ids,
    /// then `a b rate delay error_rate` per link); see [`crate::topology::ns3`].
    Ns3File {
        /// Path, relative to the scenario file.
        file: String,
    },
}

/// Two-tier leaf-spine (a Clos of leaves and spines).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LeafSpineCfg {
    /// Leaf switches.
    pub leaves: u32,
    /// Spine switches; omit and give `speedup` to derive it.
    #[serde(default)]
    pub spines: Option<u32>,
    /// Servers below each leaf.
    pub servers_per_leaf: u32,
    /// NICs per server (all on the server's leaf); each NIC is a host of the simulation.
    #[serde(default = "one")]
    pub nics_per_server: u32,
    /// Rate of NIC-leaf links.
    #[serde(deserialize_with = "su::rate")]
    pub host_rate: Rate,
    /// Rate of each leaf-spine link.
    #[serde(default, deserialize_with = "su::opt_rate")]
    pub uplink_rate: Option<Rate>,
    /// Parallel links between each leaf and each spine.
    #[serde(default = "one")]
    pub uplinks_per_pair: u32,
    /// Uplink:downlink capacity ratio of a leaf (e.g. 1.5 or 2.0); sets the spine count.
    #[serde(default)]
    pub speedup: Option<f64>,
    /// Delay of every link (or give `link_length`).
    #[serde(default, deserialize_with = "su::opt_time")]
    pub link_delay: Option<Time>,
    /// Cable length of every link, at 5 ns per metre.
    #[serde(default, deserialize_with = "su::opt_length")]
    pub link_length: Option<f64>,
}

fn one() -> u32 {
    1
}

/// Three-tier k-ary fat-tree (k pods of k/2 edge and k/2 aggregation switches,
/// (k/2)^2 cores).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FatTreeCfg {
    /// Switch radix (even, >= 2).
    pub k: u32,
    /// Rate of every link (unless the tier rates below are given).
    #[serde(deserialize_with = "su::rate")]
    pub rate: Rate,
    /// Rate of aggregation-core links (default: `rate`).
    #[serde(default, deserialize_with = "su::opt_rate")]
    pub core_rate: Option<Rate>,
    /// Rate of edge-aggregation links (default: `rate`).
    #[serde(default, deserialize_with = "su::opt_rate")]
    pub agg_rate: Option<Rate>,
    /// Hosts per edge switch divided by k/2: 1 is non-blocking, 2 is 2:1 oversubscribed.
    #[serde(default = "one")]
    pub oversubscription: u32,
    /// Delay of every link.
    #[serde(default, deserialize_with = "su::opt_time")]
    pub link_delay: Option<Time>,
    /// Cable length of every link, at 5 ns per metre.
    #[serde(default, deserialize_with = "su::opt_length")]
    pub link_length: Option<f64>,
}

/// General three-tier Clos: `pods` pods, each of `tors_per_pod` ToR switches with
/// `servers_per_tor` servers (one NIC each) and `aggs_per_pod` aggregation switches, and
/// `cores` core switches. Every ToR links to every aggregation switch of its pod;
/// aggregation switch j of every pod links to the j-th group of `cores / aggs_per_pod`
/// cores. The 320-server fat-tree of document 004 is pods = 5, tors_per_pod = 4,
/// servers_per_tor = 16, aggs_per_pod = 4, cores = 16.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ThreeTierCfg {
    /// Pods (>= 1).
    pub pods: u32,
    /// ToR (edge) switches per pod (>= 1).
    pub tors_per_pod: u32,
    /// Servers below each ToR (>= 1); each is one host.
    pub servers_per_tor: u32,
    /// Aggregation switches per pod (>= 1).
    pub aggs_per_pod: u32,
    /// Core switches (a positive multiple of `aggs_per_pod`).
    pub cores: u32,
    /// Rate of server-ToR links.
    #[serde(deserialize_with = "su::rate")]
    pub host_rate: Rate,
    /// Rate of ToR-aggregation links (default: `host_rate`).
    #[serde(default, deserialize_with = "su::opt_rate")]
    pub tor_agg_rate: Option<Rate>,
    /// Rate of aggregation-core links (default: `tor_agg_rate`).
    #[serde(default, deserialize_with = "su::opt_rate")]
    pub agg_core_rate: Option<Rate>,
    /// Delay of every link.
    #[serde(default, deserialize_with = "su::opt_time")]
    pub link_delay: Option<Time>,
    /// Cable length of every link, at 5 ns per metre.
    #[serde(default, deserialize_with = "su::opt_length")]
    pub link_length: Option<f64>,
}

/// A topology listed by hand.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CustomTopoCfg {
    /// Host names; a host's id is its index here.
    pub hosts: Vec<String>,
    /// Switch names.
    pub switches: Vec<String>,
    /// Full-duplex links.
    pub links: Vec<CustomLinkCfg>,
    /// Static routes that replace the shortest-path next hops.
    #[serde(default)]
    pub routes: Vec<CustomRouteCfg>,
}

/// One full-duplex link of a custom topology.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CustomLinkCfg {
    /// One end (host or switch name).
    pub a: String,
    /// Other end.
    pub b: String,
    /// Rate.
    #[serde(deserialize_with = "su::rate")]
    pub rate: Rate,
    /// Propagation delay.
    #[serde(default, deserialize_with = "su::opt_time")]
    pub delay: Option<Time>,
    /// Cable length, at 5 ns per metre.
    #[serde(default, deserialize_with = "su::opt_length")]
    pub length: Option<f64>,
    /// Security mode of this link (default: `fabric.security.mode`).
    #[serde(default)]
    pub security: Option<SecurityMode>,
}

/// A static route: at switch `at`, packets for host `to` go to the neighbour(s) `via`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CustomRouteCfg {
    /// Switch name.
    pub at: String,
    /// Destination host name.
    pub to: String,
    /// Next-hop neighbour names (ECMP among them).
    pub via: Vec<String>,
}

/// Switch and link behaviour.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FabricCfg {
    /// Shared packet buffer per switch.
    #[serde(default = "d_buffer", deserialize_with = "su::bytes")]
    pub buffer: u64,
    /// Ingress-to-egress forwarding latency of a switch.
    #[serde(default = "d_sw_lat", deserialize_with = "su::time")]
    pub switch_latency: Time,
    /// Priority flow control; off makes the fabric lossy (drop-tail).
    #[serde(default)]
    pub pfc: PfcCfg,
    /// ECN marking.
    #[serde(default)]
    pub ecn: EcnCfg,
    /// Load balancing of switches among equal-cost next hops.
    #[serde(default)]
    pub load_balance: LoadBalanceCfg,
    /// Link-layer security on every link (custom links may override it).
    #[serde(default)]
    pub security: SecurityCfg,
    /// GSE (Global Scheduled Ethernet) settings, used with `load_balance.algorithm =
    /// "pktc"`.
    #[serde(default)]
    pub gse: GseCfg,
    /// TCD ternary congestion detection at switch egress queues (marks CE / UE for ACC).
    #[serde(default)]
    pub tcd: crate::telemetry::tcd::TcdCfg,
}

/// GSE scheduling modes.
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum GseScheduling {
    /// Containers leave as soon as they are formed.
    #[default]
    None,
    /// DGSQ: a container leaves only with a grant from the destination port's scheduler.
    Dgsq,
}

/// GSE: PKTC containers, reordering at the destination GSP, DGSQ request/grant.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GseCfg {
    /// Container length in payload bytes (16 KiB holds four 4 KiB packets).
    #[serde(default = "d_container", deserialize_with = "su::bytes")]
    pub container: u64,
    /// GSE header bytes added to every data packet between GSPs.
    #[serde(default = "d_gse_header", deserialize_with = "su::bytes")]
    pub header: u64,
    /// `none` or `dgsq`.
    #[serde(default)]
    pub scheduling: GseScheduling,
    /// Grants are paced at (1 - eps) of the destination port's rate.
    #[serde(default = "d_eps")]
    pub eps: f64,
    /// A destination GSP waits this long for a missing packet before skipping it.
    #[serde(default = "d_reorder_timeout", deserialize_with = "su::time")]
    pub reorder_timeout: Time,
    /// Wire bytes of a REQUEST or GRANT.
    #[serde(default = "d_ctrl_bytes", deserialize_with = "su::bytes")]
    pub control_bytes: u64,
}

fn d_container() -> u64 {
    16 * 1024
}
fn d_gse_header() -> u64 {
    16
}
fn d_eps() -> f64 {
    0.02
}
fn d_reorder_timeout() -> Time {
    50 * US
}
fn d_ctrl_bytes() -> u64 {
    64
}

impl Default for GseCfg {
    fn default() -> Self {
        GseCfg {
            container: d_container(),
            header: d_gse_header(),
            scheduling: GseScheduling::None,
            eps: d_eps(),
            reorder_timeout: d_reorder_timeout(),
            control_bytes: d_ctrl_bytes(),
        }
    }
}

/// Link security modes.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum SecurityMode {
    /// No encryption.
    None,
    /// IEEE 802.1AE MACsec: SecTAG + ICV bytes on every frame (not PFC frames).
    Macsec,
    /// IPsec ESP tunnel: bytes on every IP packet.
    Ipsec,
    /// PHYSec channel-level encryption (document 000): no per-frame bytes; the segment
    /// framing (S, D, T blocks) takes a fraction of the line rate, plus a latency per hop.
    Physec,
}

/// Security settings.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SecurityCfg {
    /// Mode on every link.
    #[serde(default = "d_sec_mode")]
    pub mode: SecurityMode,
    /// MACsec bytes per frame (SecTAG 16 + ICV 16).
    #[serde(default = "d_macsec", deserialize_with = "su::bytes")]
    pub macsec_bytes: u64,
    /// IPsec ESP tunnel bytes per packet.
    #[serde(default = "d_ipsec", deserialize_with = "su::bytes")]
    pub ipsec_bytes: u64,
    /// PHYSec encryption segment length in 66-bit blocks.
    #[serde(default = "d_physec_seg")]
    pub physec_segment_blocks: u64,
    /// PHYSec latency added per hop (the document claims ~100 ns).
    #[serde(default = "d_physec_lat", deserialize_with = "su::time")]
    pub physec_latency: Time,
}

fn d_sec_mode() -> SecurityMode {
    SecurityMode::None
}
fn d_macsec() -> u64 {
    physec::overhead::MACSEC_BYTES_PER_FRAME as u64
}
fn d_ipsec() -> u64 {
    physec::overhead::IPSEC_ESP_TUNNEL_BYTES_PER_PACKET as u64
}
fn d_physec_seg() -> u64 {
    1024
}
fn d_physec_lat() -> Time {
    physec::overhead::MODELLED_LATENCY_NS * NS
}

impl Default for SecurityCfg {
    fn default() -> Self {
        SecurityCfg {
            mode: d_sec_mode(),
            macsec_bytes: d_macsec(),
            ipsec_bytes: d_ipsec(),
            physec_segment_blocks: d_physec_seg(),
            physec_latency: d_physec_lat(),
        }
    }
}

fn d_buffer() -> u64 {
    32_000_000
}
fn d_sw_lat() -> Time {
    300 * NS
}

impl Default for FabricCfg {
    fn default() -> Self {
        FabricCfg {
            buffer: d_buffer(),
            switch_latency: d_sw_lat(),
            pfc: PfcCfg::default(),
            ecn: EcnCfg::default(),
            load_balance: LoadBalanceCfg::default(),
            security: SecurityCfg::default(),
            gse: GseCfg::default(),
            tcd: crate::telemetry::tcd::TcdCfg::default(),
        }
    }
}

/// How the PFC pause threshold is computed.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum PfcThreshold {
    /// Dynamic threshold on the free shared buffer (alpha).
    Dynamic,
    /// A fixed XOFF threshold per (ingress port, priority).
    Static,
}

/// Ports on which PFC runs.
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum PfcScope {
    /// Every switch port.
    #[default]
    All,
    /// Only switch ports facing hosts.
    Edge,
}

/// Priority flow control (IEEE 802.1Qbb) and buffer admission.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PfcCfg {
    /// Lossless (PFC) when true, lossy drop-tail when false.
    #[serde(default = "yes")]
    pub enabled: bool,
    /// Where PFC runs: `all` ports, or only `edge` ports (switch ports facing hosts,
    /// pausing the NICs), the fabric between switches then dropping what overflows.
    #[serde(default)]
    pub scope: PfcScope,
    /// Dynamic or static XOFF threshold.
    #[serde(default = "d_pfc_thr")]
    pub threshold: PfcThreshold,
    /// Dynamic-threshold factor alpha.
    #[serde(default = "d_alpha")]
    pub alpha: f64,
    /// Static XOFF threshold per (ingress port, priority).
    #[serde(default = "d_xoff", deserialize_with = "su::bytes")]
    pub xoff: u64,
    /// XON hysteresis below the threshold.
    #[serde(default = "d_xon_delta", deserialize_with = "su::bytes")]
    pub xon_delta: u64,
    /// Guaranteed buffer per (ingress port, priority).
    #[serde(default = "d_reserve", deserialize_with = "su::bytes")]
    pub reserve: u64,
    /// Headroom per ingress port; default 3 * rate * link delay / 8 plus two MTUs.
    #[serde(default, deserialize_with = "su::opt_bytes")]
    pub headroom: Option<u64>,
    /// Pause time carried by XOFF frames, in quanta of 512 bit times.
    #[serde(default = "d_quanta")]
    pub pause_quanta: u16,
}

fn yes() -> bool {
    true
}
fn d_pfc_thr() -> PfcThreshold {
    PfcThreshold::Dynamic
}
fn d_alpha() -> f64 {
    0.125
}
fn d_xoff() -> u64 {
    512_000
}
fn d_xon_delta() -> u64 {
    3_000
}
fn d_reserve() -> u64 {
    4_000
}
fn d_quanta() -> u16 {
    0xffff
}

impl Default for PfcCfg {
    fn default() -> Self {
        PfcCfg {
            enabled: true,
            scope: PfcScope::All,
            threshold: d_pfc_thr(),
            alpha: d_alpha(),
            xoff: d_xoff(),
            xon_delta: d_xon_delta(),
            reserve: d_reserve(),
            headroom: None,
            pause_quanta: d_quanta(),
        }
    }
}

/// RED-style ECN marking at egress dequeue.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EcnCfg {
    /// Marking on or off.
    #[serde(default = "yes")]
    pub enabled: bool,
    /// Parameter profile: "ns3" (Kmin 400 KB, Kmax 1600 KB, Pmax 0.2 at 100G, scaled by
    /// rate) or "paper" (Kmin 5 KB, Kmax 200 KB, Pmax 0.01).
    #[serde(default = "d_ecn_profile")]
    pub profile: EcnProfile,
    /// Below this queue length nothing is marked (overrides the profile).
    #[serde(default, deserialize_with = "su::opt_bytes")]
    pub kmin: Option<u64>,
    /// Above this everything is marked (overrides the profile).
    #[serde(default, deserialize_with = "su::opt_bytes")]
    pub kmax: Option<u64>,
    /// Marking probability at Kmax (overrides the profile).
    #[serde(default)]
    pub pmax: Option<f64>,
}

/// ECN parameter profile.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum EcnProfile {
    /// The HPCC ns-3 module's values, scaled with the port rate.
    Ns3,
    /// The DCQCN paper's values.
    Paper,
}

fn d_ecn_profile() -> EcnProfile {
    EcnProfile::Ns3
}

impl Default for EcnCfg {
    fn default() -> Self {
        EcnCfg {
            enabled: true,
            profile: d_ecn_profile(),
            kmin: None,
            kmax: None,
            pmax: None,
        }
    }
}

/// Load balancing among equal-cost next hops.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LoadBalanceCfg {
    /// `ecmp`, `spray_random` or `spray_rr`.
    #[serde(default = "d_lb")]
    pub algorithm: LbAlgorithm,
}

/// Load-balancing algorithm names.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum LbAlgorithm {
    /// Per-flow 5-tuple hash with a per-switch salt.
    Ecmp,
    /// Per-packet uniformly random next hop.
    SprayRandom,
    /// Per-packet round robin among next hops.
    SprayRr,
    /// GSE packet containers: at the source edge switch (GSP) all packets of a container
    /// take one uplink, successive containers the least-loaded one; the destination GSP
    /// restores order.
    Pktc,
}

fn d_lb() -> LbAlgorithm {
    LbAlgorithm::Ecmp
}

impl Default for LoadBalanceCfg {
    fn default() -> Self {
        LoadBalanceCfg { algorithm: d_lb() }
    }
}

/// RDMA reliable-connection transport at the NIC.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TransportCfg {
    /// Payload bytes per packet.
    #[serde(default = "d_mtu", deserialize_with = "su::bytes")]
    pub mtu: u64,
    /// Header bytes per packet (RoCEv2: 14 MAC + 20 IP + 8 UDP + 12 BTH + 4 CRC).
    #[serde(default = "d_header", deserialize_with = "su::bytes")]
    pub header: u64,
    /// Wire size of ACK, NACK and CNP frames.
    #[serde(default = "d_ctrl", deserialize_with = "su::bytes")]
    pub ack_size: u64,
    /// Acknowledge every n-th in-order packet (1 = every packet).
    #[serde(default = "d_ack_every")]
    pub ack_every: u32,
    /// Retransmission timeout (go back to the last acknowledged byte).
    #[serde(default = "d_rto", deserialize_with = "su::time")]
    pub rto: Time,
    /// Priority of data packets.
    #[serde(default = "d_data_prio")]
    pub data_priority: u8,
    /// Priority of ACK, NACK and CNP (strictly above data).
    #[serde(default = "d_ctrl_prio")]
    pub control_priority: u8,
}

fn d_mtu() -> u64 {
    4096
}
fn d_header() -> u64 {
    58
}
fn d_ctrl() -> u64 {
    64
}
fn d_ack_every() -> u32 {
    1
}
fn d_rto() -> Time {
    4 * MS
}
fn d_data_prio() -> u8 {
    3
}
fn d_ctrl_prio() -> u8 {
    7
}

impl Default for TransportCfg {
    fn default() -> Self {
        TransportCfg {
            mtu: d_mtu(),
            header: d_header(),
            ack_size: d_ctrl(),
            ack_every: d_ack_every(),
            rto: d_rto(),
            data_priority: d_data_prio(),
            control_priority: d_ctrl_prio(),
        }
    }
}

/// Congestion control selection and parameters.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CcCfg {
    /// The algorithm of every flow not in a class below.
    #[serde(default = "d_cc")]
    pub algorithm: CcAlgorithm,
    /// DCQCN parameters.
    #[serde(default)]
    pub dcqcn: DcqcnCfg,
    /// TIMELY parameters.
    #[serde(default)]
    pub timely: crate::cc::timely::TimelyCfg,
    /// HPCC parameters.
    #[serde(default)]
    pub hpcc: crate::cc::hpcc::HpccCfg,
    /// ACC parameters (also used by `acc_no_halt`).
    #[serde(default)]
    pub acc: crate::cc::acc::AccCfg,
    /// Flow classes with an algorithm of their own (`[[cc.class]]`); the first class a
    /// flow matches decides.
    #[serde(default)]
    pub class: Vec<CcClassCfg>,
}

/// A class of flows that runs its own congestion control.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CcClassCfg {
    /// The algorithm of the class's flows.
    pub algorithm: CcAlgorithm,
    /// Flows of this `[[workload]]` entry (0-based index) only.
    #[serde(default)]
    pub workload: Option<usize>,
    /// Flows of at least this many bytes only.
    #[serde(default, deserialize_with = "su::opt_bytes")]
    pub min_size: Option<u64>,
    /// Flows of fewer than this many bytes only.
    #[serde(default, deserialize_with = "su::opt_bytes")]
    pub max_size: Option<u64>,
}

impl CcClassCfg {
    /// True if a flow of `size` bytes from workload entry `workload` is in the class.
    pub fn matches(&self, workload: usize, size: u64) -> bool {
        self.workload.is_none_or(|w| w == workload)
            && self.min_size.is_none_or(|m| size >= m)
            && self.max_size.is_none_or(|m| size < m)
    }
}

/// Congestion-control algorithm names.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum CcAlgorithm {
    /// Send at line rate.
    None,
    /// DCQCN (Zhu et al., SIGCOMM 2015).
    Dcqcn,
    /// TIMELY (Mittal et al., SIGCOMM 2015): RTT gradient.
    Timely,
    /// HPCC (Li et al., SIGCOMM 2019): INT-based window.
    Hpcc,
    /// ACC (document 004): ACK-driven, TCD marks, source halt.
    Acc,
    /// ACC without the source halt (rate matching only).
    AccNoHalt,
}

impl CcAlgorithm {
    /// The name used in scenario files.
    pub fn name(self) -> &'static str {
        match self {
            CcAlgorithm::None => "none",
            CcAlgorithm::Dcqcn => "dcqcn",
            CcAlgorithm::Timely => "timely",
            CcAlgorithm::Hpcc => "hpcc",
            CcAlgorithm::Acc => "acc",
            CcAlgorithm::AccNoHalt => "acc_no_halt",
        }
    }
}

fn d_cc() -> CcAlgorithm {
    CcAlgorithm::Dcqcn
}

impl Default for CcCfg {
    fn default() -> Self {
        CcCfg {
            algorithm: d_cc(),
            dcqcn: DcqcnCfg::default(),
            timely: Default::default(),
            hpcc: Default::default(),
            acc: Default::default(),
            class: Vec::new(),
        }
    }
}

/// DCQCN parameter profile.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum DcqcnProfile {
    /// The HPCC ns-3 module's defaults (R_AI 40 Mbps... scaled; see ALGORITHMS.md).
    Ns3,
    /// The DCQCN paper's values.
    Paper,
}

/// DCQCN sender (RP) and receiver (NP) parameters. Unset fields take the profile's value.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DcqcnCfg {
    /// Parameter profile.
    #[serde(default = "d_dcqcn_profile")]
    pub profile: DcqcnProfile,
    /// EWMA gain of alpha.
    #[serde(default)]
    pub g: Option<f64>,
    /// Initial alpha.
    #[serde(default)]
    pub alpha0: Option<f64>,
    /// Additive increase step.
    #[serde(default, deserialize_with = "su::opt_rate")]
    pub rai: Option<Rate>,
    /// Hyper increase step.
    #[serde(default, deserialize_with = "su::opt_rate")]
    pub rhai: Option<Rate>,
    /// Minimum rate.
    #[serde(default, deserialize_with = "su::opt_rate")]
    pub rmin: Option<Rate>,
    /// Rate-increase and alpha-decay timer period.
    #[serde(default, deserialize_with = "su::opt_time")]
    pub timer: Option<Time>,
    /// Byte counter threshold.
    #[serde(default, deserialize_with = "su::opt_bytes")]
    pub byte_counter: Option<u64>,
    /// Fast-recovery stage count F.
    #[serde(default)]
    pub f: Option<u32>,
    /// Minimum interval between CNPs of one flow at the receiver.
    #[serde(default, deserialize_with = "su::opt_time")]
    pub cnp_interval: Option<Time>,
}

fn d_dcqcn_profile() -> DcqcnProfile {
    DcqcnProfile::Ns3
}

impl Default for DcqcnCfg {
    fn default() -> Self {
        DcqcnCfg {
            profile: d_dcqcn_profile(),
            g: None,
            alpha0: None,
            rai: None,
            rhai: None,
            rmin: None,
            timer: None,
            byte_counter: None,
            f: None,
            cnp_interval: None,
        }
    }
}

/// A host reference: an index, or a name of a custom topology.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(untagged)]
pub enum HostRef {
    /// Host id.
    Index(i64),
    /// Host name.
    Name(String),
}

/// A list of hosts: `"all"`, a count (the first n hosts), or explicit references.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(untagged)]
pub enum HostSet {
    /// `"all"`.
    Word(String),
    /// The first n hosts (skipping an incast's receiver).
    Count(i64),
    /// Explicit hosts.
    List(Vec<HostRef>),
}

/// One traffic generator (a table tagged by `kind`).
#[derive(Clone, Debug, Deserialize)]
#[serde(remote = "Self", rename_all = "snake_case", deny_unknown_fields)]
pub enum WorkloadCfg {
    /// Flows listed in the scenario.
    Flows {
        /// The flows.
        flows: Vec<FlowCfg>,
    },
    /// Flows from a CSV file with the header `src,dst,size,start`.
    Csv {
        /// Path, relative to the scenario file.
        file: String,
    },
    /// The ns-3 HPCC flow file (`count`, then `src dst pg dport size start_seconds`).
    HpccFlowFile {
        /// Path, relative to the scenario file.
        file: String,
    },
    /// N senders to one receiver.
    Incast {
        /// Sending hosts.
        senders: HostSet,
        /// Receiving host.
        receiver: HostRef,
        /// Bytes per sender.
        #[serde(deserialize_with = "su::bytes")]
        size: u64,
        /// Start time.
        #[serde(default, deserialize_with = "su::opt_time")]
        start: Option<Time>,
        /// Bursts per sender (default 1): each sender starts a new flow of `size` every
        /// `interval`.
        #[serde(default)]
        repeat: Option<u32>,
        /// Time between a sender's bursts (required when `repeat` > 1).
        #[serde(default, deserialize_with = "su::opt_time")]
        interval: Option<Time>,
    },
    /// Every host sends one flow to a distinct host (a random derangement).
    Permutation {
        /// Hosts taking part.
        #[serde(default = "all_hosts")]
        hosts: HostSet,
        /// Bytes per flow.
        #[serde(deserialize_with = "su::bytes")]
        size: u64,
        /// Start time.
        #[serde(default, deserialize_with = "su::opt_time")]
        start: Option<Time>,
    },
    /// Every host sends a flow to every other host.
    AllToAll {
        /// Hosts taking part.
        #[serde(default = "all_hosts")]
        hosts: HostSet,
        /// Bytes per (source, destination) pair.
        #[serde(deserialize_with = "su::bytes")]
        size: u64,
        /// Start time.
        #[serde(default, deserialize_with = "su::opt_time")]
        start: Option<Time>,
    },
    /// Jobs running a collective (ring AllReduce, AlltoAll, halving-doubling AllReduce).
    Collective(CollectiveCfg),
    /// Poisson flow arrivals at a target load, sizes drawn from a flow-size CDF.
    Poisson(PoissonCfg),
}

/// Poisson arrivals of flows whose sizes follow a flow-size CDF (the HPCC traffic
/// generator's model): every source host starts flows at exponentially distributed
/// intervals of mean `mean size * 8 / (load * host link rate)`, each to a uniformly random
/// other host. See [`crate::workload::poisson`].
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PoissonCfg {
    /// A built-in CDF (`websearch`, `fbhdp`, `alistorage2019`, `googlerpc2008`) or the
    /// path of a CDF file (`<size bytes> <cumulative percent>` per line), relative to the
    /// scenario file.
    pub cdf: String,
    /// Offered load as a fraction of each source's host link capacity (0 < load <= 1).
    pub load: f64,
    /// Arrivals from `start` for this long (give `duration` or `flows`).
    #[serde(default, deserialize_with = "su::opt_time")]
    pub duration: Option<Time>,
    /// Number of flows: the first `flows` arrivals of all hosts together.
    #[serde(default)]
    pub flows: Option<u64>,
    /// Time from which arrivals are counted.
    #[serde(default, deserialize_with = "su::opt_time")]
    pub start: Option<Time>,
    /// Hosts taking part, as sources and destinations.
    #[serde(default = "all_hosts")]
    pub hosts: HostSet,
    /// Destinations only under another edge switch than the source. Default: true when
    /// the hosts attach to at least two switches.
    #[serde(default)]
    pub cross_rack_only: Option<bool>,
}

/// Collective algorithms.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum CollectiveKind {
    /// Ring AllReduce: 2(n-1) steps of S/n to the ring neighbour.
    RingAllreduce,
    /// AlltoAll: S/n to every other rank.
    Alltoall,
    /// Halving-doubling (Rabenseifner) AllReduce; power-of-two ranks.
    HalvingDoubling,
}

impl CollectiveKind {
    /// The name used in scenarios and `jobs.csv`.
    pub fn name(self) -> &'static str {
        match self {
            CollectiveKind::RingAllreduce => "ring_allreduce",
            CollectiveKind::Alltoall => "alltoall",
            CollectiveKind::HalvingDoubling => "halving_doubling",
        }
    }
}

/// How a collective workload forms its jobs.
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum JobGrouping {
    /// One job over all the given hosts.
    #[default]
    One,
    /// One job per NIC index: job j is the j-th NIC of every server among the hosts (so
    /// all traffic crosses servers).
    NicIndex,
}

/// Jobs running a collective.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CollectiveCfg {
    /// `ring_allreduce`, `alltoall` or `halving_doubling`.
    pub collective: CollectiveKind,
    /// Message bytes per rank (S).
    #[serde(deserialize_with = "su::bytes")]
    pub size: u64,
    /// Hosts taking part.
    #[serde(default = "all_hosts")]
    pub hosts: HostSet,
    /// `one` job over all hosts, or one job per `nic_index`.
    #[serde(default)]
    pub jobs: JobGrouping,
    /// Start of the first iteration.
    #[serde(default, deserialize_with = "su::opt_time")]
    pub start: Option<Time>,
    /// Iterations per job, each starting when the previous one completes.
    #[serde(default = "d_one")]
    pub repeat: u32,
    /// Pipelined pieces per step.
    #[serde(default = "d_one")]
    pub chunks: u32,
    /// Independent channels (queue pairs), each carrying 1/channels of the message.
    #[serde(default = "d_one")]
    pub channels: u32,
    /// AlltoAll in n-1 shifted rounds instead of all at once.
    #[serde(default)]
    pub rounds: bool,
}

fn d_one() -> u32 {
    1
}

fn all_hosts() -> HostSet {
    HostSet::Word("all".into())
}

/// One explicit flow.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FlowCfg {
    /// Source host.
    pub src: HostRef,
    /// Destination host.
    pub dst: HostRef,
    /// Bytes to send.
    #[serde(deserialize_with = "su::bytes")]
    pub size: u64,
    /// Start time.
    #[serde(default, deserialize_with = "su::opt_time")]
    pub start: Option<Time>,
}

/// Optional time series.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RecordCfg {
    /// Sample every switch egress queue this often (`queues.csv`, non-empty queues only).
    #[serde(default, deserialize_with = "su::opt_time")]
    pub queue_interval: Option<Time>,
    /// Sample every active flow's sending rate and goodput this often (`rates.csv`).
    #[serde(default, deserialize_with = "su::opt_time")]
    pub rate_interval: Option<Time>,
    /// Time to cut and time to fair share after a flow joins (`convergence.csv`); samples
    /// rates every 10 us unless `rate_interval` says otherwise.
    #[serde(default)]
    pub convergence: Option<crate::convergence::ConvergenceCfg>,
    /// Goodput of chosen flows and queues of chosen ports over a time window
    /// (`window.csv`); needs `rate_interval` for flows and `queue_interval` for ports.
    #[serde(default)]
    pub window: Option<crate::window::WindowCfg>,
}

/// Default time for `start` fields.
pub const DEFAULT_START: Time = 0;
/// Default link delay when neither delay nor length is given.
pub const DEFAULT_LINK_DELAY: Time = US;

/// An enum written as a table with a `kind` key naming the variant.
///
/// serde's own `#[serde(tag = "kind")]` buffers the table before choosing the variant,
/// which loses the path of a failing field inside it: a bad `topology.host_rate` would be
/// reported at `topology`. Instead the table is reshaped into serde's external tagging
/// (`{ leaf_spine = { ... } }`) and deserialized with the path tracked; the inner path is
/// carried in the message as "field `host_rate`: ...", which
/// [`crate::scenario::from_table`] folds into the field path.
trait TaggedByKind: Sized {
    /// The `kind` names, in declaration order.
    const KINDS: &'static [&'static str];
    /// The externally tagged deserializer derived with `remote = "Self"`.
    fn de_external<'de, D: Deserializer<'de>>(d: D) -> Result<Self, D::Error>;
}

impl TaggedByKind for TopologyCfg {
    const KINDS: &'static [&'static str] =
        &["leaf_spine", "fat_tree", "three_tier", "custom", "ns3_file"];
    fn de_external<'de, D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        TopologyCfg::deserialize(d)
    }
}

impl TaggedByKind for WorkloadCfg {
    const KINDS: &'static [&'static str] = &[
        "flows",
        "csv",
        "hpcc_flow_file",
        "incast",
        "permutation",
        "all_to_all",
        "collective",
        "poisson",
    ];
    fn de_external<'de, D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        WorkloadCfg::deserialize(d)
    }
}

impl<'de> Deserialize<'de> for TopologyCfg {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        de_kind_tagged(d)
    }
}

impl<'de> Deserialize<'de> for WorkloadCfg {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        de_kind_tagged(d)
    }
}

fn de_kind_tagged<'de, D: Deserializer<'de>, T: TaggedByKind>(d: D) -> Result<T, D::Error> {
    let kinds = || {
        T::KINDS
            .iter()
            .map(|k| format!("`{k}`"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut table = toml::Table::deserialize(d)?;
    let kind = match table.remove("kind") {
        Some(toml::Value::String(k)) => k,
        Some(v) => {
            return Err(D::Error::custom(format!(
                "field `kind`: expected a string, one of {}; found {}",
                kinds(),
                v.type_str()
            )))
        }
        None => {
            return Err(D::Error::custom(format!(
                "missing field `kind`: one of {}",
                kinds()
            )))
        }
    };
    if !T::KINDS.contains(&kind.as_str()) {
        return Err(D::Error::custom(format!(
            "field `kind`: unknown variant `{kind}`, expected one of {}",
            kinds()
        )));
    }
    let mut outer = toml::Table::new();
    outer.insert(kind, toml::Value::Table(table));
    let mut track = serde_path_to_error::Track::new();
    let de = serde_path_to_error::Deserializer::new(toml::Value::Table(outer), &mut track);
    T::de_external(de).map_err(|e| {
        // The path starts with the variant name; what follows is the field inside it.
        let path = track.path().to_string();
        let inner = match path.split_once('.') {
            Some((_, rest)) => rest.to_string(),
            None => path
                .find('[')
                .map(|i| path[i..].to_string())
                .unwrap_or_default(),
        };
        let msg = e.message().trim().to_string();
        if inner.is_empty() {
            D::Error::custom(msg)
        } else {
            D::Error::custom(format!("field `{inner}`: {msg}"))
        }
    })
}
