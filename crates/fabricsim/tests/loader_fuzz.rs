//! The loader and the builder never panic on user input.
//!
//! Two properties: `load_str` on arbitrary text returns (an error or a scenario) without
//! panicking; and mutations of valid scenarios (a value replaced by random text, numbers,
//! negative or huge numbers; a line deleted, duplicated or added) never panic in
//! `load_str` nor when every variant is built (`runner::build_all`, which runs
//! `Simulation::build`). A panic inside a case fails the property (proptest catches it and
//! shrinks the input).
//!
//! Mutated numbers can describe networks too large to build within a test; such scenarios
//! are still loaded but only built when they are small (see [`small_enough`]); the tests at
//! the end check that absurd sizes are rejected with a message instead.

use fabricsim::scenario::config::{HostSet, Scenario, TopologyCfg, WorkloadCfg};
use fabricsim::scenario::LoadedScenario;
use fabricsim::{load_str, run::runner};
use proptest::prelude::*;
use proptest::sample::Index;
use std::path::Path;

/// A leaf-spine scenario that spells out nearly every field, with variants.
const FULL: &str = r#"name = "fuzz"
description = "every field"
seed = 7
max_time = "5ms"
stall_timeout = "1ms"

[topology]
kind = "leaf_spine"
leaves = 2
servers_per_leaf = 2
nics_per_server = 1
host_rate = "100Gbps"
uplink_rate = "100Gbps"
uplinks_per_pair = 1
speedup = 1.0
link_length = "2m"

[fabric]
buffer = "4MB"
switch_latency = "300ns"

[fabric.pfc]
enabled = true
threshold = "dynamic"
alpha = 0.125
xoff = "512KB"
xon_delta = "3KB"
reserve = "4KB"
headroom = "64KB"
pause_quanta = 65535

[fabric.ecn]
enabled = true
profile = "ns3"
kmin = "5KB"
kmax = "200KB"
pmax = 0.01

[fabric.load_balance]
algorithm = "ecmp"

[transport]
mtu = 1024
header = 58
ack_size = 64
ack_every = 1
rto = "4ms"
data_priority = 3
control_priority = 7

[cc]
algorithm = "dcqcn"

[cc.dcqcn]
profile = "ns3"
g = 0.00390625
alpha0 = 1.0
rai = "40Mbps"
rhai = "200Mbps"
rmin = "100Mbps"
timer = "55us"
byte_counter = "10MB"
f = 5
cnp_interval = "50us"

[[workload]]
kind = "flows"
flows = [{ src = 0, dst = 3, size = "64KB", start = "1us" }, { src = "host1", dst = 2, size = 4096 }]

[[workload]]
kind = "incast"
senders = [1, 2]
receiver = 0
size = "16KB"
start = "2us"

[[workload]]
kind = "permutation"
hosts = "all"
size = "8KB"

[[workload]]
kind = "all_to_all"
hosts = 3
size = "4KB"

[record]
queue_interval = "10us"
rate_interval = "10us"

[[variants]]
name = "a"
set = { "cc.algorithm" = "none", "fabric.load_balance.algorithm" = "spray_rr" }

[[variants]]
name = "b"
set = { "fabric.pfc.enabled" = false, "workload[0].flows[0].size" = "1KB" }
"#;

/// A small fat-tree.
const FAT_TREE: &str = r#"seed = 3
[topology]
kind = "fat_tree"
k = 4
rate = "100Gbps"
core_rate = "100Gbps"
agg_rate = "100Gbps"
oversubscription = 1
link_delay = "1us"

[fabric.pfc]
threshold = "static"
xoff = "100KB"

[fabric.ecn]
profile = "paper"

[cc.dcqcn]
profile = "paper"

[[workload]]
kind = "all_to_all"
hosts = "all"
size = "4KB"
start = "0us"

[[workload]]
kind = "incast"
senders = 4
receiver = 15
size = "8KB"
"#;

/// A custom topology with static routes.
const CUSTOM: &str = r#"[topology]
kind = "custom"
hosts = ["a", "b", "c"]
switches = ["s1", "s2", "s3"]
links = [
  { a = "a", b = "s1", rate = "100Gbps" },
  { a = "c", b = "s1", rate = "40Gbps", delay = "2us" },
  { a = "s1", b = "s2", rate = "100Gbps", length = "10m" },
  { a = "s2", b = "s3", rate = "100Gbps" },
  { a = "b", b = "s3", rate = "100Gbps" },
]
routes = [{ at = "s1", to = "b", via = ["s2"] }, { at = "s3", to = "a", via = ["s2"] }]

[[workload]]
kind = "flows"
flows = [
  { src = "a", dst = "b", size = "64KB" },
  { src = "c", dst = "b", size = "32KB", start = "3us" },
]
"#;

/// Poisson arrivals with sizes from a built-in flow-size CDF.
const POISSON: &str = r#"seed = 5
[topology]
kind = "leaf_spine"
leaves = 2
spines = 1
servers_per_leaf = 2
host_rate = "100Gbps"

[[workload]]
kind = "poisson"
cdf = "fbhdp"
load = 0.3
flows = 20
start = "1us"
hosts = "all"
cross_rack_only = true
"#;

/// Every congestion-control block of document 004 spelled out, flow classes, TCD and the
/// convergence and window analyses.
const CONGESTION: &str = r#"seed = 9
max_time = "2ms"
[topology]
kind = "leaf_spine"
leaves = 2
spines = 1
servers_per_leaf = 2
host_rate = "100Gbps"

[fabric.tcd]
enabled = true
q_th = "100KB"
t_on_max = "40us"

[cc]
algorithm = "acc"

[cc.timely]
alpha = 0.875
beta = 0.8
t_low = "50us"
t_high = "500us"
min_rtt = "20us"
delta = "10Mbps"
hai = "50Mbps"
hai_after = 5
min_rate = "100Mbps"
per_rtt = true

[cc.hpcc]
form = "window"
eta = 0.95
max_stage = 5
base_rtt = "9us"
expected_flows = 100
r_ai = "50Mbps"
min_rate = "100Mbps"
fast_react = true

[cc.acc]
period = "20us"
base_rtt = "10us"
ce_threshold = 0.9
p_thresh = 3
r_ai = "1Gbps"
fast_after = 5
fast_factor = 4.0
rate_weight = 1.0
min_rate = "100Mbps"
halt = true
onset_restart = true

[[cc.class]]
algorithm = "hpcc"
max_size = "10KB"

[[cc.class]]
algorithm = "timely"
workload = 1
min_size = "10KB"
max_size = "1MB"

[[workload]]
kind = "flows"
flows = [{ src = 0, dst = 2, size = "2MB" }, { src = 1, dst = 2, size = "2MB", start = "100us" }]

[[workload]]
kind = "flows"
flows = [{ src = 3, dst = 0, size = "4KB" }, { src = 2, dst = 1, size = "64KB" }]

[record]
rate_interval = "10us"
queue_interval = "10us"

[record.convergence]
flows = [0, 1]
join = "100us"
fair_share = "50Gbps"
tolerance = 0.1
hold = "200us"

[record.window]
from = "100us"
to = "500us"
flows = [0, 1]
ports = ["leaf1:0"]

[[variants]]
name = "acc"

[[variants]]
name = "dcqcn"
set = { "cc.algorithm" = "dcqcn" }
"#;

const BASES: &[&str] = &[FULL, FAT_TREE, CUSTOM, POISSON, CONGESTION];

/// Keys that may be added on a new line (anywhere: most places make them unknown fields).
const KEYS: &[&str] = &[
    "leaves",
    "spines",
    "k",
    "mtu",
    "header",
    "ack_size",
    "buffer",
    "switch_latency",
    "headroom",
    "reserve",
    "xoff",
    "alpha",
    "pmax",
    "kmin",
    "rate",
    "host_rate",
    "link_delay",
    "link_length",
    "size",
    "start",
    "seed",
    "max_time",
    "kind",
    "algorithm",
    "name",
    "file",
    "set",
];

/// Numbers: small, zero, negative, huge, non-finite.
fn number() -> impl Strategy<Value = String> {
    prop_oneof![
        12 => (0i64..40).prop_map(|n| n.to_string()),
        1 => (-3i64..0).prop_map(|n| n.to_string()),
        1 => Just("4294967295".to_string()),
        1 => Just("4294967296".to_string()),
        1 => Just("9223372036854775807".to_string()),
        1 => Just("-9223372036854775808".to_string()),
        1 => Just("65536".to_string()),
        1 => Just("1e300".to_string()),
        1 => Just("-2.5".to_string()),
        1 => Just("0.5".to_string()),
        1 => Just("nan".to_string()),
        1 => Just("inf".to_string()),
        1 => Just("-inf".to_string()),
    ]
}

/// The number of a quantity string (`"<number><unit>"`).
fn quantity_number() -> impl Strategy<Value = String> {
    prop_oneof![
        12 => (0i64..40).prop_map(|n| n.to_string()),
        1 => (-3i64..0).prop_map(|n| n.to_string()),
        1 => Just("1e30".to_string()),
        1 => Just("18446744073709551615".to_string()),
        1 => Just("9.3e18".to_string()),
        1 => Just("-100".to_string()),
        1 => Just("0.5".to_string()),
        1 => Just("nan".to_string()),
        1 => Just("1e-30".to_string()),
        1 => Just("".to_string()),
    ]
}

fn unit() -> impl Strategy<Value = &'static str> {
    prop::sample::select(
        &[
            "",
            "Gbps",
            "bps",
            "Tbps",
            "us",
            "ps",
            "s",
            "B",
            "KB",
            "GiB",
            "TB",
            "m",
            "km",
            "fortnights",
        ][..],
    )
}

/// Anything: words, wrong TOML types, and text that is not TOML at all.
fn anything() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("\"all\"".to_string()),
        Just("\"none\"".to_string()),
        Just("\"custom\"".to_string()),
        Just("\"fat_tree\"".to_string()),
        Just("\"host0\"".to_string()),
        Just("\"s2\"".to_string()),
        Just("\"\"".to_string()),
        "\"[a-z_0-9. ]{0,12}\"",
        Just("true".to_string()),
        Just("[]".to_string()),
        Just("[1, 2]".to_string()),
        Just("[\"a\", -1]".to_string()),
        Just("{}".to_string()),
        Just("{ src = 0 }".to_string()),
        Just("1979-05-27".to_string()),
        "[ -~]{0,8}",
    ]
}

/// A replacement value, chosen by the shape of the value it replaces: a number for a
/// number, a quantity (keeping the unit most of the time) for a quantity, and anything at
/// all some of the time.
#[derive(Clone, Debug)]
struct Replacement {
    number: String,
    quantity: String,
    unit: Option<&'static str>,
    any: String,
    use_any: bool,
}

impl Replacement {
    /// The value to put in place of `old`; `None` when `old` is not a number or quantity
    /// and this replacement is not meant for anything.
    fn for_token(&self, old: &str) -> Option<String> {
        if self.use_any {
            return Some(self.any.clone());
        }
        let inner = old.trim().trim_matches('"');
        let quoted = old.trim_start().starts_with('"');
        let numeric = |c: char| c.is_ascii_digit() || ".-+e".contains(c);
        if quoted && inner.starts_with(|c: char| c.is_ascii_digit()) {
            let old_unit = inner.trim_start_matches(numeric).trim();
            Some(format!(
                "\"{}{}\"",
                self.quantity,
                self.unit.unwrap_or(old_unit)
            ))
        } else if !quoted && inner.starts_with(|c: char| c.is_ascii_digit() || c == '-') {
            Some(self.number.clone())
        } else {
            None
        }
    }
}

fn replacement() -> impl Strategy<Value = Replacement> {
    (
        number(),
        quantity_number(),
        prop::option::weighted(0.3, unit()),
        anything(),
        prop::bool::weighted(0.1),
    )
        .prop_map(|(number, quantity, unit, any, use_any)| Replacement {
            number,
            quantity,
            unit,
            any,
            use_any,
        })
}

#[derive(Clone, Debug)]
enum Mutation {
    /// Replace the value after the chosen `= `.
    Replace(Index, Replacement),
    /// Delete a line.
    Delete(Index),
    /// Duplicate a line.
    Duplicate(Index),
    /// Add `key = value` before a line.
    Insert(Index, &'static str, String),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        12 => (any::<Index>(), replacement()).prop_map(|(i, r)| Mutation::Replace(i, r)),
        1 => any::<Index>().prop_map(Mutation::Delete),
        1 => any::<Index>().prop_map(Mutation::Duplicate),
        1 => (any::<Index>(), prop::sample::select(KEYS), prop_oneof![number(), anything()])
            .prop_map(|(i, k, v)| Mutation::Insert(i, k, v)),
    ]
}

/// Where the TOML value starting at `start` ends: after its closing quote or bracket, or
/// at the next separator of an inline table or array, or at the end of the line.
fn value_end(src: &str, start: usize) -> usize {
    let rest = &src[start..];
    let end = match rest.chars().next() {
        Some('"') => rest[1..].find('"').map(|e| e + 2),
        Some('[') => rest.find(']').map(|e| e + 1),
        Some('{') => rest.find('}').map(|e| e + 1),
        _ => rest.find([',', '}', ']', '\n']),
    };
    start + end.unwrap_or(rest.len())
}

fn apply(src: &str, m: &Mutation) -> String {
    match m {
        Mutation::Replace(i, r) => {
            // The values this replacement applies to (numbers and quantities, unless it is
            // meant for anything).
            let spots: Vec<(usize, usize, String)> = src
                .match_indices("= ")
                .filter_map(|(p, _)| {
                    let (start, end) = (p + 2, value_end(src, p + 2));
                    r.for_token(&src[start..end]).map(|v| (start, end, v))
                })
                .collect();
            if spots.is_empty() {
                return src.to_string();
            }
            let (start, end, v) = &spots[i.index(spots.len())];
            format!("{}{}{}", &src[..*start], v, &src[*end..])
        }
        Mutation::Delete(i) | Mutation::Duplicate(i) => {
            let mut lines: Vec<&str> = src.lines().collect();
            if lines.is_empty() {
                return src.to_string();
            }
            let k = i.index(lines.len());
            if matches!(m, Mutation::Delete(_)) {
                lines.remove(k);
            } else {
                lines.insert(k, lines[k]);
            }
            lines.join("\n")
        }
        Mutation::Insert(i, key, v) => {
            let mut lines: Vec<String> = src.lines().map(str::to_string).collect();
            let k = i.index(lines.len() + 1);
            lines.insert(k, format!("{key} = {v}"));
            lines.join("\n")
        }
    }
}

/// Whether a scenario is small enough to build in a test: at most a few thousand ports and
/// a few million packets in all. Larger ones are valid input, just slow.
fn small_enough(sc: &Scenario) -> bool {
    // Host link rate (bits per second), for workloads that offer a fraction of it.
    let host_rate: f64 = match &sc.topology {
        TopologyCfg::LeafSpine(c) => c.host_rate.0 as f64,
        TopologyCfg::FatTree(c) => c.rate.0 as f64,
        TopologyCfg::ThreeTier(c) => c.host_rate.0 as f64,
        TopologyCfg::MultiCampus(c) => c.host_rate.0 as f64,
        // Both rails of a NIC.
        TopologyCfg::Sunway(c) => c.link_rate().0 as f64 * c.planes as f64,
        TopologyCfg::Custom(c) => c.links.iter().map(|l| l.rate.0 as f64).fold(0.0, f64::max),
        // Every port of a GPU's NIC.
        TopologyCfg::RailOptimized(c) => c.nic_rate.0 as f64,
        // Not read here: assume the fastest rate there is.
        TopologyCfg::Ns3File(_) => fabricsim::base::units::MAX_RATE_BPS as f64,
    };
    let hosts: f64 = match &sc.topology {
        TopologyCfg::LeafSpine(c) => {
            let hosts = c.leaves as f64 * c.servers_per_leaf as f64 * c.nics_per_server as f64;
            let spines = match (c.spines, c.speedup) {
                (Some(s), _) => s as f64,
                (None, Some(sp)) => {
                    let up = c.uplink_rate.unwrap_or(c.host_rate).0.max(1) as f64;
                    sp * c.servers_per_leaf as f64 * c.nics_per_server as f64 * c.host_rate.0 as f64
                        / (c.uplinks_per_pair.max(1) as f64 * up)
                }
                (None, None) => 0.0,
            };
            let uplinks = c.leaves as f64 * spines * c.uplinks_per_pair as f64;
            if !(uplinks.is_finite() && uplinks <= 5_000.0) {
                return false;
            }
            hosts
        }
        TopologyCfg::FatTree(c) => {
            if c.k > 16 || c.oversubscription > 4 {
                return false;
            }
            (c.k as f64).powi(3) / 4.0 * c.oversubscription as f64
        }
        TopologyCfg::ThreeTier(c) => {
            let pods = c.pods as f64;
            let switch_links =
                pods * (c.tors_per_pod as f64 * c.aggs_per_pod as f64 + c.cores as f64);
            if switch_links > 5_000.0 {
                return false;
            }
            c.pods as f64 * c.tors_per_pod as f64 * c.servers_per_tor as f64
        }
        TopologyCfg::MultiCampus(c) => {
            let campuses = c.campuses as f64;
            let n = |v: Option<u32>, unset: u32| v.unwrap_or(unset) as f64;
            // A campus is built from the leaf-spine fields or from the three-tier ones
            // (the others refused); summing both sizes bounds either.
            let inner = n(c.leaves, 0) * n(c.spines, 0) * n(c.uplinks_per_pair, 1)
                + n(c.pods, 0) * (n(c.tors_per_pod, 0) * n(c.aggs_per_pod, 0) + n(c.cores, 0));
            let campus_hosts = n(c.leaves, 0) * n(c.servers_per_leaf, 0) * n(c.nics_per_server, 1)
                + n(c.pods, 0) * n(c.tors_per_pod, 0) * n(c.servers_per_tor, 0);
            let switch_links = campuses
                * (inner
                    + c.campus_to_dr_capacity.0 as f64
                        / c.dr_link_rate.unwrap_or(c.dci_link_rate).0.max(1) as f64)
                + campuses * (campuses - 1.0) / 2.0 * c.dci_capacity.0 as f64
                    / c.dci_link_rate.0.max(1) as f64;
            if !(switch_links.is_finite() && switch_links <= 5_000.0) {
                return false;
            }
            campuses * campus_hosts
        }
        TopologyCfg::Sunway(c) => {
            let switch_links = c.planes as f64
                * c.leaves as f64
                * (c.spines as f64 * c.uplinks_per_pair as f64 + c.sibling_links as f64);
            if !(switch_links.is_finite() && switch_links <= 5_000.0) {
                return false;
            }
            c.nodes as f64
        }
        TopologyCfg::Custom(c) => c.hosts.len() as f64,
        TopologyCfg::RailOptimized(c) => {
            match fabricsim::model::topology::rail_optimized::counts(c) {
                Ok(k) if k.size.links.saturating_sub(k.size.hosts) > 5_000 => return false,
                Ok(k) => k.size.hosts as f64,
                // Refused at build, before anything large.
                Err(_) => 0.0,
            }
        }
        TopologyCfg::Ns3File(c) => {
            // The header `nodes switches links`, when the file is there.
            let header = std::fs::read_to_string(Path::new(".").join(&c.file))
                .ok()
                .and_then(|t| {
                    let v: Vec<f64> = t
                        .lines()
                        .next()?
                        .split_whitespace()
                        .map(|x| x.parse().ok())
                        .collect::<Option<_>>()?;
                    (v.len() == 3).then(|| (v[0] - v[1], v[2]))
                });
            match header {
                Some((hosts, links)) if links <= 5_000.0 => hosts,
                Some(_) => return false,
                None => 0.0,
            }
        }
    };
    if hosts > 2_000.0 {
        return false;
    }
    let mtu = sc.transport.mtu.max(1) as f64;
    let set_len = |s: &HostSet| match s {
        HostSet::Word(_) => hosts,
        HostSet::Count(n) => (*n as f64).clamp(0.0, hosts),
        HostSet::List(l) => l.len() as f64,
    };
    let mut packets = 0.0;
    for w in &sc.workload {
        packets += match w {
            WorkloadCfg::Flows(c) => c
                .flows
                .iter()
                .map(|f| (f.size as f64 / mtu).ceil())
                .sum::<f64>(),
            WorkloadCfg::Csv(_) | WorkloadCfg::HpccFlowFile(_) | WorkloadCfg::Trace(_) => 0.0,
            WorkloadCfg::Incast(c) => set_len(&c.senders) * (c.size as f64 / mtu).ceil(),
            WorkloadCfg::Permutation(c) => set_len(&c.hosts) * (c.size as f64 / mtu).ceil(),
            WorkloadCfg::AllToAll(c) => set_len(&c.hosts).powi(2) * (c.size as f64 / mtu).ceil(),
            WorkloadCfg::Collective(c) => {
                // Every rank sends at most 2 S per iteration, split into pieces of at
                // least one packet each.
                let n = set_len(&c.hosts);
                let pieces = n * n * c.chunks.max(1) as f64 * c.channels.max(1) as f64;
                c.repeat.max(1) as f64 * (n * 2.0 * (c.size as f64 / mtu).ceil() + pieces)
            }
            WorkloadCfg::SwCollective(c) => {
                // At most n (log2 n + 2) messages per iteration.
                let n = set_len(&c.hosts);
                let messages = n * (n.max(1.0).log2().ceil() + 2.0);
                c.repeat.max(1) as f64 * messages * (c.size as f64 / mtu).ceil()
            }
            WorkloadCfg::HwCollective(c) => {
                // One packet up and one down per rank and iteration.
                let n = set_len(&c.hosts) * c.ranks_per_host.max(1) as f64;
                c.repeat.max(1) as f64 * 2.0 * n
            }
            WorkloadCfg::Training(c) => {
                // PP: 2 M transfers per pair; DP: each rank moves its gradient (and with
                // ZeRO-3 the parameters) about three times, per iteration.
                let n = set_len(&c.hosts);
                let it = c.iterations.max(1) as f64;
                let pp = c.microbatches as f64 * (c.activation.unwrap_or(0) as f64 / mtu).ceil();
                let dp = 3.0
                    * ((c.gradient.unwrap_or(0) + c.parameters.unwrap_or(0)) as f64 / mtu).ceil();
                it * n * (2.0 * pp + dp + n)
            }
            WorkloadCfg::Poisson(c) => {
                // Each host offers `load` of its link; with `flows` the count bounds it.
                let mean = fabricsim::model::workload::cdf::resolve(&c.cdf, Path::new("."), "cdf")
                    .map(|d| d.mean())
                    .unwrap_or(0.0);
                let (flows, bytes) = match (c.flows, c.duration) {
                    (Some(n), _) => (n as f64, n as f64 * mean),
                    (None, Some(d)) => {
                        let bytes = set_len(&c.hosts) * c.load.clamp(0.0, 1.0) * host_rate / 8.0
                            * (d as f64 / 1e12);
                        (bytes / mean.max(1.0), bytes)
                    }
                    (None, None) => (0.0, 0.0),
                };
                flows + bytes / mtu
            }
        };
    }
    packets <= 2_000_000.0
}

/// Loads `src` and, when it loads and is small, builds every variant. Returns whether it
/// was built (`Some(ok)`) or skipped as too large (`None`).
fn load_and_build(src: &str) -> Option<bool> {
    let Ok(loaded) = load_str(src, "fuzz.toml", Path::new("."), &[]) else {
        return Some(false);
    };
    build_if_small(&loaded)
}

fn build_if_small(loaded: &LoadedScenario) -> Option<bool> {
    let Ok(variants) = loaded.expand_variants() else {
        return Some(false);
    };
    if !variants.iter().all(|(_, sc)| small_enough(sc)) {
        return None;
    }
    Some(runner::build_all(loaded, None).is_ok())
}

#[test]
fn bases_are_valid() {
    // The mutations start from scenarios that load and build.
    for (i, b) in BASES.iter().enumerate() {
        let loaded = load_str(b, "base.toml", Path::new("."), &[])
            .unwrap_or_else(|e| panic!("base {i}: {e}"));
        let sims = runner::build_all(&loaded, None).unwrap_or_else(|e| panic!("base {i}: {e}"));
        assert!(!sims.is_empty());
        assert!(small_enough(&loaded.scenario), "base {i} is not small");
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn load_str_never_panics_on_arbitrary_text(src in any::<String>()) {
        let _ = load_str(&src, "any.toml", Path::new("."), &[]);
    }

    #[test]
    fn load_str_never_panics_on_toml_like_text(
        src in "([a-z_]{1,8}( ?= ?)?(\"[a-zA-Z0-9 ]{0,6}\"|-?[0-9]{1,12}|\\[|\\]|\\{|\\}|,|\\.|\\[\\[|\\]\\])?\n?){0,24}"
    ) {
        let _ = load_str(&src, "toml_like.toml", Path::new("."), &[]);
    }

    #[test]
    fn mutated_scenarios_never_panic(
        base in prop::sample::select(BASES),
        muts in prop::collection::vec(mutation(), 1..3),
    ) {
        let mut src = base.to_string();
        for m in &muts {
            src = apply(&src, m);
        }
        let _ = load_and_build(&src);
    }

    #[test]
    fn overrides_never_panic(
        base in prop::sample::select(BASES),
        path in prop_oneof![
            prop::sample::select(&[
                "topology.leaves", "topology.k", "topology.host_rate", "topology.rate",
                "topology.links[0].rate", "topology.routes[0].via", "transport.mtu",
                "transport.header", "fabric.buffer", "fabric.pfc.headroom", "cc.algorithm",
                "workload[0].size", "workload[0].flows[0].dst", "workload[1].senders",
                "workload[9].size", "variants[0].set", "max_time", "seed",
            ][..]).prop_map(str::to_string),
            "[a-z_\\[\\]0-9.]{0,16}",
        ],
        v in prop_oneof![number(), quantity_number().prop_map(|n| format!("{n}Gbps")), anything()],
    ) {
        let set = vec![format!("{path}={v}")];
        if let Ok(loaded) = load_str(base, "set.toml", Path::new("."), &set) {
            let _ = build_if_small(&loaded);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// Parameters that load and build also run: mutants of the congestion-control base
    /// (odd gains, thresholds, periods, classes, windows) simulate 300 us without a
    /// panic, keep the invariants, and the results and analyses can be summarised.
    #[test]
    fn mutated_congestion_scenarios_run_without_panicking(
        muts in prop::collection::vec(mutation(), 1..3),
    ) {
        let mut src = CONGESTION.to_string();
        for m in &muts {
            src = apply(&src, m);
        }
        let set = vec!["max_time=\"300us\"".to_string()];
        let Ok(loaded) = load_str(&src, "fuzz.toml", Path::new("."), &set) else {
            return Ok(());
        };
        let Ok(variants) = loaded.expand_variants() else {
            return Ok(());
        };
        if !variants.iter().all(|(_, sc)| small_enough(sc)) {
            return Ok(());
        }
        let Ok(sims) = runner::build_all(&loaded, None) else {
            return Ok(());
        };
        for (name, mut sim) in sims {
            let o = sim.run(&mut |_| {});
            let bad = fabricsim::analysis::invariants::check(&sim);
            prop_assert!(bad.is_empty(), "{name}: {bad:?}");
            let _ = fabricsim::output::summarize(&sim, &name, &o, 0.0);
        }
    }
}

/// The mutation property is only worth something if many mutants load and reach the
/// builder: this checks that most mutants are not syntax errors, and that the guard
/// against huge networks skips few of them.
#[test]
fn most_mutants_reach_the_builder() {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;
    let mut runner = TestRunner::deterministic();
    let strat = (
        prop::sample::select(BASES),
        prop::collection::vec(mutation(), 1..3),
    );
    let (mut loaded, mut built_ok, mut build_err, mut skipped) = (0, 0, 0, 0);
    let n = 300;
    for _ in 0..n {
        let (base, muts) = strat.new_tree(&mut runner).unwrap().current();
        let mut src = base.to_string();
        for m in &muts {
            src = apply(&src, m);
        }
        let Ok(l) = load_str(&src, "fuzz.toml", Path::new("."), &[]) else {
            continue;
        };
        loaded += 1;
        match build_if_small(&l) {
            Some(true) => built_ok += 1,
            Some(false) => build_err += 1,
            None => skipped += 1,
        }
    }
    let stats = format!(
        "{n} mutants: {loaded} loaded; {built_ok} built, {build_err} rejected by the builder, {skipped} skipped as too large"
    );
    assert!(loaded * 3 >= n, "{stats}");
    assert!(built_ok * 5 >= n && build_err * 20 >= n, "{stats}");
    assert!(skipped * 10 <= loaded, "{stats}");
    eprintln!("{stats}");
}

/// Networks far too large to simulate are rejected with a message naming the field, not
/// built until memory runs out (or an index overflows).
#[test]
fn absurd_sizes_are_rejected() {
    let cases: &[(&str, &str)] = &[
        (
            "[topology]\nkind = \"leaf_spine\"\nleaves = 4294967295\nspines = 2\nservers_per_leaf = 4294967295\nhost_rate = \"100Gbps\"\n",
            "topology",
        ),
        (
            "[topology]\nkind = \"leaf_spine\"\nleaves = 100000\nspines = 100000\nservers_per_leaf = 1\nhost_rate = \"100Gbps\"\n",
            "topology",
        ),
        (
            "[topology]\nkind = \"leaf_spine\"\nleaves = 2\nservers_per_leaf = 2\nnics_per_server = 4294967295\nhost_rate = \"100Gbps\"\nspines = 1\n",
            "topology",
        ),
        (
            "[topology]\nkind = \"fat_tree\"\nk = 128\noversubscription = 64\nrate = \"100Gbps\"\n",
            "topology",
        ),
        (
            "[topology]\nkind = \"leaf_spine\"\nleaves = 2\nservers_per_leaf = 2\nspeedup = 1e15\nhost_rate = \"100Gbps\"\n",
            "topology.speedup",
        ),
    ];
    for (topo, field) in cases {
        let src = format!(
            "{topo}\n[[workload]]\nkind = \"flows\"\nflows = [{{ src = 0, dst = 1, size = 4096 }}]\n"
        );
        let loaded = load_str(&src, "big.toml", Path::new("."), &[]).expect("loads");
        let t0 = std::time::Instant::now();
        let e = match runner::build_all(&loaded, None) {
            Ok(_) => panic!("built:\n{src}"),
            Err(e) => e,
        };
        assert!(
            e.field.as_deref().is_some_and(|f| f.starts_with(field)),
            "{e}\n{src}"
        );
        assert!(
            t0.elapsed().as_secs_f64() < 2.0,
            "took {:?} to reject:\n{src}",
            t0.elapsed()
        );
    }
}

/// Values the fuzzer found (or could find) overflowing the model's arithmetic: each is
/// rejected with a message naming the field.
#[test]
fn overflowing_values_are_rejected() {
    let cases: &[(&str, &str)] = &[
        ("transport.header=9223372036854775807", "transport.header"),
        ("transport.ack_size=\"1TB\"", "transport.ack_size"),
        (
            "fabric.pfc.headroom=9223372036854775807",
            "fabric.pfc.headroom",
        ),
        ("fabric.pfc.reserve=\"1TB\"", "fabric.pfc.reserve"),
        ("fabric.buffer=\"1000TB\"", "fabric.buffer"),
        ("fabric.switch_latency=\"1000s\"", "fabric.switch_latency"),
        ("topology.link_length=\"1e30m\"", "topology.link_length"),
        ("topology.link_length=\"1e300km\"", "topology.link_length"),
        ("topology.host_rate=\"1e18Gbps\"", "topology.host_rate"),
        ("topology.uplink_rate=\"9.3e18bps\"", "topology.uplink_rate"),
    ];
    for (set, field) in cases {
        let e = load_str(FULL, "full.toml", Path::new("."), &[set.to_string()])
            .and_then(|l| runner::build_all(&l, None).map(|_| ()))
            .expect_err(set);
        assert_eq!(e.field.as_deref(), Some(*field), "--set {set}: {e}");
    }
}
