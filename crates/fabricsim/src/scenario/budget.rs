//! The memory budget: what a run will hold, estimated from the scenario alone and checked
//! before anything large is allocated.
//!
//! A scenario the validator accepts can still ask for more memory than the machine has: a
//! leaf-spine just under the port limit, an incast repeated four billion times, a
//! collective cut into a billion chunks, a queue sampled every nanosecond for a second.
//! Left alone, such a run aborts with "memory allocation failed", or the OS kills it,
//! after minutes of generation. So [`crate::sim::Simulation::build`] first counts what
//! the run will hold from the settings ([`crate::model::topology::size`],
//! [`crate::model::workload::size`]: no graph is built and no flow made), prices each part in
//! bytes ([`estimate`]), and refuses with the parts, their bytes and the settings that
//! drive them when the total exceeds the process's limit ([`limit`]). A sweep prices its
//! runs alive at once the same way ([`crate::run::runner`]).
//!
//! # The field a refusal names
//! Each part names the setting that drives it, not its section: each kind lists the
//! fields that multiply what it makes with its size were each at its least value
//! ([`crate::base::param::SizeKnob`]), and the part names the one that shrinks it most
//! (`topology.planes` for a thousand planes, `topology.campuses`, `workload[0].chunks`),
//! or the section or entry when none does (the hosts of an all-to-all are the
//! topology's). A refusal names the largest part's.
//!
//! # The prices
//! Bytes per item were measured (peak RSS of `fabricsim run --out`, `summary.json`'s
//! `peak_rss_bytes`, on fat trees k = 8..40, leaf-spines of 1k-16k hosts, incasts of
//! 7k-700k flows, collectives of 48k-480k pieces) and rounded up: the
//! runtime structures (a port was 832 bytes when measured, 640 later; a flow
//! 496), the temporaries of assembly, the output rows and the slack of growing vectors. The estimate is meant to be an upper
//! bound of the run's peak resident memory; the property test
//! (`crates/fabricsim-cli/tests/generated.rs`) checks that generated scenarios stay
//! under it, and `crates/fabricsim-cli/tests/budget.rs` that a shipped one does.
//!
//! Packets in flight are priced at their worst case, every switch buffer full and every
//! link carrying its bandwidth-delay product: most runs hold far fewer, and the refusal
//! says so (with `--max-memory` to allow more).
//!
//! # The limit
//! By default 80 % of the memory the process may use: the least of the memory available
//! to the machine (`MemAvailable`), the cgroup's limit (`memory.max`) less what it uses,
//! and the address-space and data rlimits (`ulimit -v`, `-d`) less the address space that
//! threads and allocator arenas reserve without using. `fabricsim run --max-memory`
//! replaces it ([`set_limit`]).

use crate::base::param::{driving_knob, ParamError, SizeKnob};
use crate::model::topology::{TopoSize, TopologyCfg};
use crate::model::workload::WorkSize;
use crate::scenario::config::Scenario;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

/// The process and what every run holds whatever its size (code, the allocator's pools,
/// the scenario, the output writers).
pub const BASE_BYTES: u64 = 12 << 20;
/// Per host: its NIC state, node, name, flow slots and output rows (its link's two ports
/// are priced per port).
pub const HOST_BYTES: u64 = 2304;
/// Per port (a full-duplex link is two): the port, its link, queues, buffer and ECN
/// state, per-port tables and its `ports.csv` row.
pub const PORT_BYTES: u64 = 1024;
/// Per switch: the switch, its shared buffer's books, RNG and names.
pub const SWITCH_BYTES: u64 = 2048;
/// Per routing-table entry (one per switch and edge switch), at the build's peak: the
/// dense table before it is compacted (4 bytes), the up/down tables of tiered fabrics
/// (12 more), and the candidate lists of entries that are not runs of ports. A
/// 16,384-GPU rail-optimized cluster (307 M entries) peaks at 1.4 GB in all, about 4.6
/// bytes an entry.
pub const ROUTE_ENTRY_BYTES: u64 = 16;
/// Per flow: its spec, state, controller, launcher slot, ideal FCT, drop counter and its
/// `flows.csv` row.
pub const FLOW_BYTES: u64 = 896;
/// Per dependency edge (start-after edges, timed dependencies, windows).
pub const DEP_BYTES: u64 = 64;
/// Per compute phase.
pub const PHASE_BYTES: u64 = 96;
/// Per job: its spec, state and `jobs.csv` row.
pub const JOB_BYTES: u64 = 1024;
/// Per hardware-collective operation.
pub const HW_OP_BYTES: u64 = 1024;
/// Bytes per hardware-collective iteration: its record
/// ([`crate::model::hw_collective::IterRecord`]), once in the engine and once more in a
/// shard's lane.
pub const HW_ITER_BYTES: u64 =
    2 * std::mem::size_of::<crate::model::hw_collective::IterRecord>() as u64;
/// Per packet alive (queued or on a wire): its 16-byte arena slot and its 20-byte
/// descriptor in a queue block or 28-byte entry on a link ring, grown by a quarter:
/// under 64 bytes with the rings' slack (39 measured at the peak of the fat-tree
/// benchmarks; a queue's part-used block is priced per port), so 96 bounds it. It was
/// 160 while a slot was 48 bytes, a descriptor 24 and rings grew by doubling.
pub const PACKET_BYTES: u64 = 96;
/// Per recorded sample (queue or rate): the sample and its CSV row.
pub const SAMPLE_BYTES: u64 = 64;
/// Per element of a hardware collective's message, per rank: the rank's partial
/// reduction (a `u64` an element, reserved to the message's length when the engine is
/// built and filled when the rank enters), and a quarter more for the allocator's
/// rounding and an iteration's temporaries (its inputs, the root's check). Measured: 8192
/// ranks of a 64 KiB fp32 allreduce peaked at 1040 MiB, 1024 of them these elements.
pub const HW_ELEM_BYTES: u64 = 10;
/// Per message-engine slot (`transport.message.engines` per NIC): when it is next free.
pub const ENGINE_SLOT_BYTES: u64 = 8;
/// Per multicast table entry or output port: an entry's key and output range in the
/// switches' map with the map's slack (a hash map of 16-byte entries grown by doubling),
/// or a 4-byte output port, and the build's per-switch scratch of each collective's tree.
pub const MULTICAST_TABLE_BYTES: u64 = 48;
/// Flows per host assumed for a workload kind that cannot bound its size.
const UNKNOWN_FLOWS_PER_HOST: u64 = 4;

/// One part of a run's memory.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Part {
    /// What it is ("ports and links", "flows").
    pub what: &'static str,
    /// How many items.
    pub items: u64,
    /// Bytes.
    pub bytes: u64,
    /// The scenario field whose value drives it, as a refusal names it:
    /// `topology.planes`, `workload[0].chunks`, `fabric.buffer`,
    /// `record.queue_interval`; the section or entry (`topology`, `workload[0]`) when no
    /// one field does (the hosts of an all-to-all).
    pub field: String,
    /// What builds it: `topology` (the graph and its tables, checked before the graph is
    /// built: [`Footprint::of_section`]), `workload`, `fabric` (packets in its buffers),
    /// `transport`, `record`.
    pub section: &'static str,
    /// How the settings drive it, as the user wrote them.
    pub driven_by: String,
}

/// What one run will hold, part by part.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Footprint {
    /// The parts, largest first.
    pub parts: Vec<Part>,
}

impl Footprint {
    /// Total bytes (saturating).
    pub fn total(&self) -> u64 {
        self.parts
            .iter()
            .fold(BASE_BYTES, |a, p| a.saturating_add(p.bytes))
    }

    fn add(
        &mut self,
        what: &'static str,
        items: u64,
        each: u64,
        (section, field): (&'static str, impl Into<String>),
        driven_by: impl Into<String>,
    ) {
        if items > 0 {
            self.parts.push(Part {
                what,
                items,
                bytes: items.saturating_mul(each),
                field: field.into(),
                section,
                driven_by: driven_by.into(),
            });
        }
    }

    /// The parts of one section (`"topology"`: what building the graph and its tables
    /// will take), whichever of its fields drives each.
    pub fn of_section(&self, section: &str) -> Footprint {
        Footprint {
            parts: self
                .parts
                .iter()
                .filter(|p| p.section == section)
                .cloned()
                .collect(),
        }
    }

    /// The largest part.
    pub fn largest(&self) -> Option<&Part> {
        self.parts.iter().max_by_key(|p| p.bytes)
    }

    /// One line per part, largest first, for messages and `fabricsim check`.
    pub fn describe(&self) -> String {
        let mut parts = self.parts.clone();
        parts.sort_by_key(|p| std::cmp::Reverse(p.bytes));
        parts
            .iter()
            .map(|p| {
                let by = if p.driven_by.is_empty() {
                    format!(" (from {})", p.field)
                } else {
                    format!(" (from {}: {})", p.field, p.driven_by)
                };
                format!(
                    "{}: {} {}{by}",
                    approx_bytes(p.bytes),
                    approx_count(p.items),
                    p.what
                )
            })
            .collect::<Vec<_>>()
            .join("; ")
    }
}

/// `1.3 GiB`, `512 MiB`, `42 KiB`: a size to read, not to parse.
pub fn approx_bytes(b: u64) -> String {
    let units = ["B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
    let mut v = b as f64;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < units.len() {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 || v >= 100.0 {
        format!("{v:.0} {}", units[u])
    } else {
        format!("{v:.1} {}", units[u])
    }
}

fn approx_count(n: u64) -> String {
    if n >= 10_000_000_000 {
        format!("{:.1e}", n as f64)
    } else if n >= 10_000_000 {
        format!("{}M", n / 1_000_000)
    } else if n >= 10_000 {
        format!("{}k", n / 1000)
    } else {
        n.to_string()
    }
}

/// Upper bound on switch buffer bytes: every switch's shared buffer (or its credit
/// buffers), DR switches at their own (deep) size.
fn buffer_bytes(sc: &Scenario, topo: &TopoSize) -> (u64, (&'static str, &'static str)) {
    let f = &sc.fabric;
    let ports_per_switch = if topo.switches == 0 {
        0
    } else {
        topo.links
            .saturating_mul(2)
            .saturating_sub(topo.hosts)
            .div_ceil(topo.switches)
    };
    let per_switch = if f.credit.enabled {
        (f.credit.private.saturating_mul(f.credit.vcs as u64))
            .saturating_add(f.credit.shared)
            .saturating_mul(ports_per_switch)
    } else {
        f.buffer
    };
    let mut total = per_switch.saturating_mul(topo.switches);
    let mut by = if f.credit.enabled {
        ("fabric.credit", "private x vcs + shared, per switch port")
    } else {
        ("fabric.buffer", "per switch")
    };
    if let TopologyCfg::MultiCampus(m) = &sc.topology {
        let drs = (m.campuses as u64).saturating_mul(m.dr_switches as u64);
        let dr = drs.saturating_mul(m.dr_buffer);
        if dr > total {
            by = ("topology.dr_buffer", "per DR switch");
        }
        total = total.saturating_add(dr);
    }
    (total, by)
}

/// Estimates what one run of `sc` will hold, from its settings alone. Files the topology
/// and workload name are read (within the input size limit), nothing else is built.
/// Errors are the settings' own (a field the size count cannot make sense of), named
/// relative to the scenario. Each part names the field that drives it: of the fields
/// that multiply a count ([`crate::base::param::SizeKnob`]), the one whose least value
/// shrinks it most.
pub fn estimate(sc: &Scenario, base_dir: &Path) -> Result<Footprint, ParamError> {
    let mut fp = Footprint::default();
    let topo =
        crate::model::topology::size(&sc.topology, base_dir).map_err(|e| e.within("topology"))?;
    let Some(topo) = topo else {
        return Ok(fp);
    };
    let drivers = sc.topology.model().size_drivers();
    let knobs = crate::model::topology::size_knobs(&sc.topology, base_dir);
    let tf = |count: fn(&TopoSize) -> u64| -> (&'static str, String) {
        let field = driving_knob(&knobs, count(&topo), count)
            .map_or("topology".to_string(), |f| format!("topology.{f}"));
        ("topology", field)
    };
    let hosts_of: fn(&TopoSize) -> u64 = |t| t.hosts;
    let ports_of: fn(&TopoSize) -> u64 = |t| t.links.saturating_mul(2);
    // The simulator's hard limit on ports comes first, naming the field that drives the
    // count over it.
    crate::model::topology::check_size(topo.hosts, topo.links).map_err(|e| {
        let over = if topo.hosts > crate::base::ids::MAX_INDEX as u64 {
            hosts_of
        } else {
            ports_of
        };
        e.within(&tf(over).1)
    })?;
    let ports = ports_of(&topo);
    fp.add("hosts", topo.hosts, HOST_BYTES, tf(hosts_of), drivers);
    fp.add("ports", ports, PORT_BYTES, tf(ports_of), drivers);
    fp.add(
        "switches",
        topo.switches,
        SWITCH_BYTES,
        tf(|t| t.switches),
        "",
    );
    fp.add(
        "routing entries",
        topo.switches.saturating_mul(topo.edge_switches),
        ROUTE_ENTRY_BYTES,
        tf(|t| t.switches.saturating_mul(t.edge_switches)),
        "switches x edge switches",
    );
    // Nothing yet, and a known byte count of zero (an entry that cannot bound its bytes
    // makes the sum unknown).
    let mut work = WorkSize {
        bytes: Some(0),
        ..WorkSize::default()
    };
    let mut drivers: Vec<String> = Vec::new();
    let ctx = crate::model::workload::SizeCtx {
        hosts: topo.hosts,
        host_rate_bps: topo.host_rate_bps,
        base_dir,
    };
    let sizes =
        crate::model::workload::size_in(&sc.workload, &ctx).map_err(|e| e.within("workload"))?;
    let mut entries = Vec::with_capacity(sizes.len());
    for (i, (s, d)) in sizes.into_iter().enumerate() {
        let known = s.is_some();
        let s = s.unwrap_or(WorkSize {
            flows: topo.hosts.saturating_mul(UNKNOWN_FLOWS_PER_HOST),
            ..Default::default()
        });
        if s.flows > 0 && !d.is_empty() {
            drivers.push(format!("workload[{i}] ({}): {d}", sc.workload[i].kind()));
        }
        work = work.plus(s);
        entries.push((s, known));
    }
    let mut wf = WorkFields {
        sc,
        ctx: &ctx,
        entries,
        knobs: Vec::new(),
    };
    let by = drivers.join(", ");
    // One entry: the field names it, the drivers say how; several: each with its own.
    let by = match drivers.as_slice() {
        [one] => one
            .split_once(": ")
            .map_or(String::new(), |(_, d)| d.to_string()),
        _ => by,
    };
    let flows_field = wf.field(|s| s.flows);
    fp.add("flows", work.flows, FLOW_BYTES, flows_field, by.clone());
    let f = wf.field(|s| s.deps);
    fp.add("dependency edges", work.deps, DEP_BYTES, f, by.clone());
    let f = wf.field(|s| s.phases);
    fp.add("compute phases", work.phases, PHASE_BYTES, f, by.clone());
    let f = wf.field(|s| s.jobs);
    fp.add("jobs", work.jobs, JOB_BYTES, f, by.clone());
    let f = wf.field(|s| s.hw_ops);
    fp.add(
        "hardware-collective operations",
        work.hw_ops,
        HW_OP_BYTES,
        f,
        "hosts x ranks_per_host per hardware collective",
    );
    // Every iteration's record is allocated when the engine is built (and copied into
    // each shard's lane of a cut run).
    let f = wf.field(|s| s.hw_iters);
    fp.add(
        "hardware-collective iteration records",
        work.hw_iters,
        HW_ITER_BYTES,
        f,
        "repeat per hardware collective",
    );
    // Every rank holds a partial reduction of the whole message.
    let f = wf.field(|s| s.hw_elems);
    fp.add(
        "hardware-collective elements in partial reductions",
        work.hw_elems,
        HW_ELEM_BYTES,
        f,
        "hosts x ranks_per_host x size / type's bytes per hardware collective",
    );
    let switch_ports = ports.saturating_sub(topo.hosts);
    multicast_tables(&mut fp, sc, &topo);
    // A slot per message engine of every NIC.
    if sc.transport.kind == crate::model::transport::rdma::TransportKind::Message {
        fp.add(
            "message-engine slots",
            topo.hosts
                .saturating_mul(u64::from(sc.transport.message.engines)),
            ENGINE_SLOT_BYTES,
            ("transport", "transport.message.engines"),
            "hosts x transport.message.engines",
        );
    }
    // Packets alive: no more than the switch buffers and long links hold (in frames of
    // the MTU: smaller frames are fewer bytes), and no more than the workload sends (a
    // packet per MTU of payload, one more per flow, as many ACKs again).
    let frame = sc.transport.max_packet().max(64);
    let (buf, buf_by) = buffer_bytes(sc, &topo);
    let held = buf.saturating_add(link_bdp_bytes(sc, &topo)) / frame;
    let mtu = sc.transport.mtu.max(1);
    let sent_of = move |w: &WorkSize| {
        w.bytes
            .map(|b| (b / mtu).saturating_add(w.flows).saturating_mul(2))
    };
    match sent_of(&work) {
        Some(s) if s < held => {
            let f = wf.field(move |w| sent_of(w).unwrap_or(u64::MAX));
            fp.add(
                "packets alive at most (all the workload's)",
                s,
                PACKET_BYTES,
                f,
                by.clone(),
            )
        }
        _ => fp.add(
            "packets alive at most (every switch buffer full)",
            held,
            PACKET_BYTES,
            ("fabric", buf_by.0),
            buf_by.1,
        ),
    }
    // Recorded samples: a sample per switch port per queue interval, one per paused port
    // (switch or NIC) per queue interval, a sample per flow per rate interval, up to `max_time` (fewer when the run ends earlier).
    let grid = |iv: Option<u64>| iv.map_or(0, |iv| sc.max_time / iv.max(1));
    fp.add(
        "queue samples at most",
        grid(sc.record.queue_interval).saturating_mul(switch_ports),
        SAMPLE_BYTES,
        ("record", "record.queue_interval"),
        "max_time / record.queue_interval x switch ports",
    );
    fp.add(
        "PFC pause samples at most",
        grid(sc.record.queue_interval).saturating_mul(ports),
        SAMPLE_BYTES,
        ("record", "record.queue_interval"),
        "max_time / record.queue_interval x ports",
    );
    let rate_iv = sc.record.rate_interval.or(sc
        .record
        .convergence
        .as_ref()
        .map(|_| 10 * crate::base::units::US));
    fp.add(
        "rate samples at most",
        grid(rate_iv).saturating_mul(work.flows),
        SAMPLE_BYTES,
        ("record", "record.rate_interval"),
        "max_time / record.rate_interval x flows",
    );
    // A capture reserves its records up to the limit at build (a cut run, one log a
    // shard, fills at most the limit in each: a cut takes only the shards whose logs
    // fit beside this estimate, `Simulation::set_shards`); writing the file orders them
    // through one reference each.
    if let Some(p) = &sc.record.pcap {
        fp.add(
            "captured frames at most",
            p.limit.min(crate::model::capture::MAX_LIMIT),
            crate::model::capture::RECORD_BYTES + 8,
            ("record", "record.pcap.limit"),
            "record.pcap.limit",
        );
    }
    Ok(fp)
}

/// The workload entries' sizes, and the field a part of the workload names: the entry
/// with the largest count (the first of equals), and its field that drives it.
struct WorkFields<'a> {
    sc: &'a Scenario,
    ctx: &'a crate::model::workload::SizeCtx<'a>,
    /// Per entry: its size, and whether the kind could count it.
    entries: Vec<(WorkSize, bool)>,
    /// Per entry, its knobs once asked for (they size the entry once a knob, so only the
    /// entries a part names are asked).
    knobs: Vec<Option<Vec<SizeKnob<WorkSize>>>>,
}

impl WorkFields<'_> {
    fn field(&mut self, count: impl Fn(&WorkSize) -> u64) -> (&'static str, String) {
        let Some((i, n)) = self
            .entries
            .iter()
            .map(|(s, _)| count(s))
            .enumerate()
            .filter(|&(_, n)| n > 0)
            .max_by_key(|&(i, n)| (n, std::cmp::Reverse(i)))
        else {
            return ("workload", "workload".to_string());
        };
        self.knobs.resize(self.entries.len(), None);
        let (sc, ctx, known) = (self.sc, self.ctx, self.entries[i].1);
        let knobs = self.knobs[i].get_or_insert_with(|| {
            if known {
                crate::model::workload::size_knobs(&sc.workload[i], ctx)
            } else {
                Vec::new()
            }
        });
        let field = match driving_knob(knobs, n, count) {
            Some(f) => format!("workload[{i}].{f}"),
            None => format!("workload[{i}]"),
        };
        ("workload", field)
    }
}

/// The switches' multicast tables ([`crate::model::fabric::multicast`]): a hardware
/// collective that multicasts sets one table on each switch of its tree (keyed by the
/// port the tree enters it by), so at most one a switch, and its output ports are the
/// tree's links, one into each switch and one to each member host: per collective, at
/// most switches + its hosts entries and ports.
fn multicast_tables(fp: &mut Footprint, sc: &Scenario, topo: &TopoSize) {
    let mut groups = 0u64;
    let mut items = 0u64;
    let mut last = 0;
    for (i, w) in sc.workload.iter().enumerate() {
        if let crate::model::workload::WorkloadCfg::HwCollective(h) = w {
            if h.multicast {
                let members = crate::model::workload::set_size(&h.hosts, topo.hosts, false);
                items = items.saturating_add(topo.switches.saturating_add(members));
                groups += 1;
                last = i;
            }
        }
    }
    fp.add(
        "multicast table entries and output ports at most",
        items,
        MULTICAST_TABLE_BYTES,
        ("workload", format!("workload[{last}].multicast")),
        format!("switches + hosts, per hardware collective that multicasts ({groups})"),
    );
}

/// Bytes on the wire at once beyond what buffers hold: only long-haul fibre matters (a
/// datacenter link of a microsecond holds a few tens of KB, far below a switch buffer's
/// share per port), so this counts the DCI of a multi-campus fabric at its capacity times
/// its fibre delay, both ways.
fn link_bdp_bytes(sc: &Scenario, _topo: &TopoSize) -> u64 {
    match &sc.topology {
        TopologyCfg::MultiCampus(m) => {
            let delay_ps = (m.fiber_km.clamp(0.0, 1e9)
                * 1000.0
                * crate::base::units::PS_PER_METRE as f64) as u64;
            // bytes = capacity [bit/s] / 8 x delay [ps] / 1e12, both directions.
            ((m.dci_capacity.0 / 8) as u128 * delay_ps as u128 * 2 / 1_000_000_000_000)
                .min(u64::MAX as u128) as u64
        }
        _ => 0,
    }
}

/// Memory one run's description takes before it runs (`scenario::RunSpec`: its TOML
/// tree, its deserialized scenario, its name and folder), from the size of the scenario's
/// tree: about 20 bytes of tree and structs per byte of TOML text (measured on the shipped
/// scenarios: ~28 KB per run of a 1.4 KB scenario), plus the fixed part of a `Scenario`.
pub fn run_description_bytes(table: &toml::Table) -> u64 {
    let text = toml::to_string(table).map_or(4096, |t| t.len() as u64);
    text.saturating_mul(24).saturating_add(16 << 10)
}

static LIMIT: AtomicU64 = AtomicU64::new(0);

/// Sets the process's memory limit (bytes) for every run built from now on: what
/// `--max-memory` gives. 0 restores the machine's default.
pub fn set_limit(bytes: u64) {
    LIMIT.store(bytes, Ordering::Relaxed);
}

/// The limit runs are checked against, and where it comes from.
pub fn limit() -> (u64, String) {
    match LIMIT.load(Ordering::Relaxed) {
        0 => default_limit(),
        b => (b, "--max-memory".to_string()),
    }
}

/// Address space that threads (stacks) and the allocator's per-thread arenas reserve
/// without using: a ulimit on address space must leave room for it.
const RESERVED_ADDRESS_SPACE: u64 = 1 << 30;

/// 80 % of what the process may use (see the module comment); when nothing can be read
/// (not Linux), 8 GiB.
pub fn default_limit() -> (u64, String) {
    let mut best: Option<(u64, String)> = None;
    let mut consider = |bytes: Option<u64>, what: &str| {
        if let Some(b) = bytes {
            if best.as_ref().is_none_or(|(x, _)| b < *x) {
                best = Some((b, what.to_string()));
            }
        }
    };
    consider(meminfo_available(), "MemAvailable");
    consider(cgroup_room(), "the cgroup's memory.max less its use");
    for (name, what) in [
        ("Max address space", "ulimit -v"),
        ("Max data size", "ulimit -d"),
    ] {
        consider(
            rlimit(name).map(|b| b.saturating_sub(RESERVED_ADDRESS_SPACE)),
            what,
        );
    }
    match best {
        Some((b, what)) => (b / 5 * 4, format!("80% of {} ({what})", approx_bytes(b))),
        None => (8 << 30, "the default of 8 GiB (memory size unknown)".into()),
    }
}

/// The most memory this process can have at all, and what says so: the machine's memory
/// (`MemTotal`), the cgroup's room, the address-space ulimits, whichever is least. None
/// when nothing can be read (not Linux). A `--max-memory` above it lets a run allocate
/// what the machine does not have, so the command line asks for `--force` then.
pub fn machine_memory() -> Option<(u64, String)> {
    let mut best: Option<(u64, String)> = None;
    let mut consider = |bytes: Option<u64>, what: &str| {
        if let Some(b) = bytes {
            if best.as_ref().is_none_or(|(x, _)| b < *x) {
                best = Some((b, what.to_string()));
            }
        }
    };
    consider(meminfo("MemTotal:"), "the machine's memory (MemTotal)");
    consider(cgroup_room(), "the cgroup's memory.max less its use");
    for (name, what) in [
        ("Max address space", "ulimit -v"),
        ("Max data size", "ulimit -d"),
    ] {
        consider(
            rlimit(name).map(|b| b.saturating_sub(RESERVED_ADDRESS_SPACE)),
            what,
        );
    }
    best
}

fn meminfo_available() -> Option<u64> {
    meminfo("MemAvailable:")
}

/// A `/proc/meminfo` line's value (`key` with its colon), in bytes.
fn meminfo(key: &str) -> Option<u64> {
    let s = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = s.lines().find(|l| l.starts_with(key))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb.saturating_mul(1024))
}

fn cgroup_room() -> Option<u64> {
    // cgroup v2: the process's own group, then v1's memory controller.
    let cg = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    for line in cg.lines() {
        if let Some(path) = line.strip_prefix("0::") {
            let dir = Path::new("/sys/fs/cgroup").join(path.trim_start_matches('/'));
            let max = std::fs::read_to_string(dir.join("memory.max")).ok()?;
            let max: u64 = max.trim().parse().ok()?;
            let cur: u64 = std::fs::read_to_string(dir.join("memory.current"))
                .ok()
                .and_then(|s| s.trim().parse().ok())
                .unwrap_or(0);
            return Some(max.saturating_sub(cur));
        }
    }
    let max: u64 = std::fs::read_to_string("/sys/fs/cgroup/memory/memory.limit_in_bytes")
        .ok()?
        .trim()
        .parse()
        .ok()?;
    // v1 reports "no limit" as a huge number.
    (max < 1 << 60).then_some(max)
}

/// A soft rlimit from `/proc/self/limits` ("Max address space  unlimited  unlimited
/// bytes"); none when unlimited.
fn rlimit(name: &str) -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/limits").ok()?;
    let line = s.lines().find(|l| l.starts_with(name))?;
    line[name.len()..].split_whitespace().next()?.parse().ok()
}

/// Checks `fp` against the limit: the refusal names the largest parts, their bytes and
/// the settings that drive them. `runs` > 1 prices that many runs alive at once.
pub fn check(fp: &Footprint, runs_at_once: u64) -> Result<(), ParamError> {
    let (limit, source) = limit();
    let total = fp.total().saturating_mul(runs_at_once.max(1));
    if total <= limit {
        return Ok(());
    }
    let times = if runs_at_once > 1 {
        format!(" x {runs_at_once} runs at once")
    } else {
        String::new()
    };
    let largest = fp.largest();
    let worst_case = largest.is_some_and(|p| p.what.contains("buffer full"));
    Err(ParamError::new(
        largest.map_or("", |p| p.field.as_str()),
        format!(
            "this run would need about {} of memory{times}, more than the {} allowed ({source}): {}. \
             Make it smaller, or allow more with --max-memory{}",
            approx_bytes(total),
            approx_bytes(limit),
            fp.describe(),
            if worst_case {
                " (packets alive are priced at their worst case, every switch buffer full)"
            } else {
                ""
            }
        ),
    ))
}

/// Parses `--max-memory` (`8GiB`, `500MB`, `0.5TB`): a byte count as scenario files
/// write sizes.
pub fn parse_limit(s: &str) -> Result<u64, String> {
    let b = crate::base::units::parse_bytes(s)?;
    if b < 16 << 20 {
        return Err(format!(
            "{s}: at least 16MiB is needed (the process alone takes about {})",
            approx_bytes(BASE_BYTES)
        ));
    }
    Ok(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_like_people_write_them() {
        assert_eq!(approx_bytes(512), "512 B");
        assert_eq!(approx_bytes(3 << 30), "3.0 GiB");
        assert_eq!(approx_bytes(u64::MAX), "16.0 EiB");
        assert_eq!(approx_count(4_294_967_295), "4294M");
    }

    #[test]
    fn the_default_limit_is_positive_and_below_the_machine() {
        let (b, why) = default_limit();
        assert!(b > 0, "{why}");
        if let Some(avail) = meminfo_available() {
            assert!(b <= avail, "{b} > {avail}: {why}");
        }
    }

    fn footprint(src: &str) -> Result<Footprint, ParamError> {
        let l = crate::scenario::load_str(src, "t.toml", Path::new("."), &[]).unwrap();
        estimate(&l.scenario, Path::new("."))
    }

    /// The field the part `what` names.
    fn field(fp: &Footprint, what: &str) -> String {
        let p = fp.parts.iter().find(|p| p.what == what);
        p.unwrap_or_else(|| panic!("no part `{what}`: {}", fp.describe()))
            .field
            .clone()
    }

    const SUNWAY: &str = "[topology]\nkind = \"sunway\"\nleaves = 4\nspines = 2\n\
                          nodes_per_leaf = 2\nnodes = 8\nsibling_links = 0\n";
    const LEAF_SPINE: &str = "[topology]\nkind = \"leaf_spine\"\nleaves = 2\nspines = 1\n\
                              servers_per_leaf = 4\nhost_rate = \"100Gbps\"\n";

    #[test]
    fn parts_name_the_field_that_drives_them() {
        // Planes multiply the switches, ports and tables; the hosts are the nodes.
        let fp = footprint(&format!(
            "{SUNWAY}planes = 1000\n[[workload]]\nkind = \"permutation\"\nsize = 4096\n"
        ))
        .unwrap();
        for what in ["ports", "switches", "routing entries"] {
            assert_eq!(field(&fp, what), "topology.planes", "{what}");
        }
        assert_eq!(field(&fp, "hosts"), "topology.nodes");
        // Campuses multiply every campus and the DCI between them.
        let fp = footprint(
            "[topology]\nkind = \"multi_campus\"\ncampuses = 500\nleaves = 2\nspines = 1\n\
             servers_per_leaf = 2\ndr_switches = 1\ndr_ports = 100000\n\
             campus_to_dr_capacity = \"800Gbps\"\ndci_capacity = \"800Gbps\"\n\
             [[workload]]\nkind = \"permutation\"\nsize = 4096\n",
        )
        .unwrap();
        for what in ["hosts", "ports", "routing entries"] {
            assert_eq!(field(&fp, what), "topology.campuses", "{what}");
        }
        // A collective: the setting that multiplies its pieces, each part its own.
        let coll = |extra: &str| {
            footprint(&format!(
                "{LEAF_SPINE}[[workload]]\nkind = \"permutation\"\nsize = 4096\n\
                 [[workload]]\nkind = \"collective\"\ncollective = \"ring_allreduce\"\n\
                 size = \"1MiB\"\n{extra}"
            ))
            .unwrap()
        };
        let fp = coll("chunks = 100000\nrepeat = 1000\n");
        assert_eq!(field(&fp, "flows"), "workload[1].chunks");
        assert_eq!(field(&fp, "jobs"), "workload[1].repeat");
        let fp = coll("window = { buffer = \"8B\", chunk = \"1B\" }\n");
        assert_eq!(field(&fp, "flows"), "workload[1].window.chunk");
        // Nothing but the topology's hosts drives an all-to-all: the entry is named.
        let fp = footprint(&format!(
            "{LEAF_SPINE}[[workload]]\nkind = \"all_to_all\"\nsize = 4096\n"
        ))
        .unwrap();
        assert_eq!(field(&fp, "flows"), "workload[0]");
        // Ranks of a hardware collective.
        let fp = footprint(&format!(
            "{SUNWAY}[[workload]]\nkind = \"hw_collective\"\ncollective = \"barrier\"\n\
             ranks_per_host = 100000\n"
        ))
        .unwrap();
        assert_eq!(
            field(&fp, "hardware-collective operations"),
            "workload[0].ranks_per_host"
        );
        // A refusal names the largest part's field.
        assert_eq!(fp.largest().unwrap().field, "workload[0].ranks_per_host");
    }

    /// What the NICs' collective engine, the message engines and the switches' multicast
    /// tables hold, priced from the settings that drive them.
    #[test]
    fn engines_and_tables_are_priced_by_what_drives_them() {
        let hw = |extra: &str| {
            footprint(&format!(
                "{SUNWAY}[transport]\nkind = \"message\"\nmtu = \"64KiB\"\n\
                 [transport.message]\nengines = 1024\n\
                 [[workload]]\nkind = \"hw_collective\"\ncollective = \"allreduce\"\n\
                 type = \"fp32\"\n{extra}"
            ))
            .unwrap()
        };
        let part = |fp: &Footprint, what: &str| {
            fp.parts
                .iter()
                .find(|p| p.what == what)
                .cloned()
                .unwrap_or_else(|| panic!("no part `{what}`: {}", fp.describe()))
        };
        // 8 hosts x 2 ranks, each a partial reduction of 16384 fp32 elements.
        let fp = hw("size = \"64KiB\"\nranks_per_host = 2\n");
        let p = part(&fp, "hardware-collective elements in partial reductions");
        assert_eq!((p.items, p.bytes), (16 * 16384, 16 * 16384 * HW_ELEM_BYTES));
        assert_eq!(p.field, "workload[0].size");
        // A size past the largest message (refused when generated) is priced at it.
        let fp = hw("size = \"1GiB\"\n");
        assert_eq!(
            part(&fp, "hardware-collective elements in partial reductions").items,
            8 * 16384
        );
        // A slot per engine and NIC.
        let p = part(&fp, "message-engine slots");
        assert_eq!(
            (p.items, p.field.as_str()),
            (8 * 1024, "transport.message.engines")
        );
        // Per multicasting collective, a table a switch and an output port a switch and
        // a host at most.
        let barriers = "[[workload]]\nkind = \"hw_collective\"\ncollective = \"barrier\"\n";
        let fp = footprint(&format!("{SUNWAY}{}", barriers.repeat(3))).unwrap();
        let p = part(&fp, "multicast table entries and output ports at most");
        let switches = part(&fp, "switches").items;
        assert_eq!(
            (p.items, p.field.as_str()),
            (3 * (switches + 8), "workload[2].multicast")
        );
        let fp = footprint(&format!("{SUNWAY}{barriers}multicast = false\n")).unwrap();
        assert!(
            fp.parts.iter().all(|p| !p.what.contains("multicast")),
            "{}",
            fp.describe()
        );
    }

    #[test]
    fn the_port_limit_names_the_field_that_passes_it() {
        let e = footprint(&format!("{SUNWAY}planes = 1000000000\n")).unwrap_err();
        assert_eq!(e.field, "topology.planes", "{e}");
        assert!(e.message.contains("too large"), "{e}");
        let e = footprint(
            "[topology]\nkind = \"leaf_spine\"\nleaves = 2\nspines = 1\n\
             servers_per_leaf = 2\nnics_per_server = 4294967295\nhost_rate = \"100Gbps\"\n",
        )
        .unwrap_err();
        assert_eq!(e.field, "topology.nics_per_server", "{e}");
    }

    /// What building the graph takes is checked before the graph is built, whichever
    /// field of the topology drives each part; packets priced at the DR switches' buffers
    /// wait for the check of the whole.
    #[test]
    fn the_graph_parts_are_the_topology_section() {
        let fp = footprint(
            "[topology]\nkind = \"multi_campus\"\nleaves = 2\nspines = 1\n\
             servers_per_leaf = 2\ndr_switches = 1\ndr_buffer = \"64GiB\"\n\
             campus_to_dr_capacity = \"800Gbps\"\ndci_capacity = \"800Gbps\"\n\
             [[workload]]\nkind = \"all_to_all\"\nsize = \"16GiB\"\n",
        )
        .unwrap();
        let graph: Vec<&str> = fp
            .of_section("topology")
            .parts
            .iter()
            .map(|p| p.what)
            .collect();
        assert_eq!(graph, ["hosts", "ports", "switches", "routing entries"]);
        assert_eq!(
            field(&fp, "packets alive at most (every switch buffer full)"),
            "topology.dr_buffer"
        );
    }

    #[test]
    fn a_limit_must_leave_room_for_the_process() {
        assert!(parse_limit("1MB").is_err());
        assert_eq!(parse_limit("1GiB").unwrap(), 1 << 30);
        assert!(parse_limit("lots").is_err());
    }
}
