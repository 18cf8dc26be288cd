//! Topology files in the format of the HPCC ns-3 simulator (`kind = "ns3_file"`):
//!
//! ```text
//! <nodes> <switches> <links>
//! <switch id> <switch id> ...              (the ids of the switch nodes)
//! <a> <b> <rate> <delay> <error rate>      (one line per full-duplex link)
//! ```
//!
//! Node ids run from 0 to nodes - 1. Rates are ns-3 data rates, read with the rate grammar
//! of scenario files ([`crate::base::units::rate_unit_bps`]), which is ns-3's: `100Gbps`,
//! `400Gb/s`, `12.5GBps` in bytes (100 Gbit/s in either file), and, as ns-3 allows here
//! only, a bare number in bits per second; delays ns-3 times (`1000ns`,
//! `0.001ms`, `1us`, a bare number in seconds). The error rate must be 0: fabricsim does
//! not model random bit errors. The switch ids may span several lines; blank lines and
//! lines starting with `#` are skipped. Every problem is reported with the file and line.
//!
//! Nodes not listed as switches are hosts. Host ids (the numbers workloads use) follow the
//! node ids: the host with the smallest node id is host 0, and so on, so when the hosts are
//! nodes 0..H-1 (as in the HPCC files) a host's id is its ns-3 node id and HPCC flow files
//! (`kind = "hpcc_flow_file"`) refer to the same hosts. Hosts are named `host<host id>`,
//! switches `switch<node id>`; each host is a server of its own.
//!
//! The 320-server fat-tree of document 004 (ACC, NSDI 2024): the HPCC repository's
//! `ns3-fat-320.txt`, copied to `crates/fabricsim/data/topo/`, is that network. It has 376
//! nodes: 320 hosts (nodes 0-319) and 56 switches: 20 top-of-rack switches (320-339) with
//! 16 hosts each, 20 aggregation switches (340-359) in 5 pods of 4, every ToR linked to the
//! 4 aggregation switches of its pod, and 16 cores (360-375), each linked to one
//! aggregation switch of every pod. Its 480 links are 320 host links at 100 Gbps and 160
//! switch links (ToR-aggregation and aggregation-core) at 400 Gbps, all with a 1000 ns
//! delay: the document's 100 Gbps host links, 400 Gbps core-aggregation links and 1 us
//! link delay. The `fat_tree` kind cannot express it (a k-ary fat-tree has k pods of k/2
//! edge switches with k/2 hosts each per unit of oversubscription; this one has 5 pods of
//! 4 ToRs with 16 hosts); the `three_tier` kind generates the same graph, node for node
//! and link for link (see [`super::three_tier`]).

use super::{check_size, GraphGenerator, TopoGraph, TopoSize, MAX_LINK_DELAY};
use crate::base::ids::MAX_INDEX;
use crate::base::param::{Described, Param, ParamError, SizeKnob};
use crate::base::units::{fmt_time, parse_time, Rate, Time, MAX_RATE_BPS, SEC};
use serde::Deserialize;
use std::path::Path;

/// A problem on a line of the file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ns3Error {
    /// 1-based line (the last line for problems found at the end).
    pub line: usize,
    /// What is wrong.
    pub message: String,
}

/// A topology file in the ns-3 HPCC format.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Ns3FileCfg {
    /// Path, relative to the scenario file.
    pub file: String,
}

impl Described for Ns3FileCfg {
    const ABOUT: &'static str =
        "an ns-3 HPCC topology file; non-switch nodes are hosts 0.. in node-id order";
    fn params() -> Vec<Param> {
        vec![Param::required(
            "file",
            "`nodes switches links`, the switch ids, then `a b rate delay error_rate` per link",
        )]
    }
}

impl GraphGenerator for Ns3FileCfg {
    fn generate(&self, base_dir: &Path) -> Result<TopoGraph, ParamError> {
        build(&self.file, base_dir)
    }

    fn size(&self, base_dir: &Path) -> Result<Option<TopoSize>, ParamError> {
        size(&self.file, base_dir).map(Some)
    }

    fn size_drivers(&self) -> &'static str {
        "the node and link counts on the file's first line"
    }

    /// The file: every count is its.
    fn size_knobs(&self, _base_dir: &Path) -> Vec<SizeKnob<TopoSize>> {
        vec![SizeKnob {
            field: "file",
            least: Some(TopoSize::default()),
        }]
    }
}

/// The counts of the topology file `path` (what [`parse`] checks against the size limit
/// before it allocates), exact, from a read of every line that builds nothing; errors as
/// [`build`]'s, so a malformed file gets its line error, never a memory refusal priced
/// from what its first line announces.
pub fn size(path: &str, base_dir: &Path) -> Result<TopoSize, ParamError> {
    crate::base::param::check_file_name(path, "file")?;
    let p = base_dir.join(path);
    let text = crate::base::input_file::read_text(&p, crate::base::input_file::MAX_DATA_FILE_BYTES)
        .map_err(|e| ParamError::new("file", e.in_file(&p)))?;
    let at_line = |e: Ns3Error| {
        ParamError::new(
            "file",
            format!("{}:{}:1: {}", p.display(), e.line, e.message),
        )
    };
    let h = header(&text).map_err(at_line)?;
    // A file too short for what its first line announces (a link a line, the switch ids
    // on at least one) is a line error, found here before the counts are priced: else
    // a first line announcing a huge network would get a memory refusal instead.
    let rest = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .count()
        .saturating_sub(1) as u64;
    let need = h.links.saturating_add((h.switches > 0) as u64);
    if rest < need {
        let ids = if h.switches > 0 {
            "a line of switch ids and "
        } else {
            ""
        };
        return Err(ParamError::new(
            "file",
            format!(
                "{}:{}:1: the file ends after {rest} line(s) below the first, which announces \
                 {ids}{} link(s), one a line",
                p.display(),
                text.lines().count().max(1),
                h.links
            ),
        ));
    }
    // Every other line error, at its line, as the build reports it.
    let s = scan(&text, &h, |_, _, _, _| {}).map_err(at_line)?;
    Ok(TopoSize {
        hosts: h.nodes - h.switches,
        switches: h.switches,
        edge_switches: s.edge_switches,
        links: h.links,
        host_rate_bps: s.host_rate_bps,
    })
}

/// The counts of a topology file's first line, and that line's number.
struct Header {
    line: usize,
    nodes: u64,
    switches: u64,
    links: u64,
}

/// Reads and checks the first line of a topology file.
fn header(text: &str) -> Result<Header, Ns3Error> {
    let err = |line: usize, m: String| Ns3Error { line, message: m };
    let (hl, header) = text
        .lines()
        .enumerate()
        .map(|(i, l)| (i + 1, l.trim()))
        .find(|(_, l)| !l.is_empty() && !l.starts_with('#'))
        .ok_or_else(|| {
            err(
                1,
                "empty topology file: the first line must be `<nodes> <switches> <links>`".into(),
            )
        })?;
    let h: Vec<&str> = header.split_whitespace().collect();
    if h.len() != 3 {
        return Err(err(
            hl,
            format!(
                "the first line must be `<nodes> <switches> <links>`, found {} field(s)",
                h.len()
            ),
        ));
    }
    let count = |k: usize, what: &str| -> Result<u64, Ns3Error> {
        h[k].parse::<u64>()
            .map_err(|_| err(hl, format!("{what} `{}` is not a whole number", h[k])))
    };
    let (nodes, switches, links) = (
        count(0, "node count")?,
        count(1, "switch count")?,
        count(2, "link count")?,
    );
    if switches > nodes {
        return Err(err(
            hl,
            format!("{switches} switches among {nodes} nodes: at most as many switches as nodes"),
        ));
    }
    if nodes > MAX_INDEX as u64 {
        return Err(err(
            hl,
            format!("{nodes} nodes is too many: at most {MAX_INDEX}"),
        ));
    }
    Ok(Header {
        line: hl,
        nodes,
        switches,
        links,
    })
}

/// Reads the topology file `path` (relative to `base_dir`); errors name the field `file`
/// (of `[topology]`) and the topology file with its line.
pub fn build(path: &str, base_dir: &Path) -> Result<TopoGraph, ParamError> {
    crate::base::param::check_file_name(path, "file")?;
    let p = base_dir.join(path);
    let text = crate::base::input_file::read_text(&p, crate::base::input_file::MAX_DATA_FILE_BYTES)
        .map_err(|e| ParamError::new("file", e.in_file(&p)))?;
    parse(&text, check_size).map_err(|e| match e {
        Ns3OrSize::Size(e) => e,
        Ns3OrSize::Line(e) => ParamError::new(
            "file",
            format!("{}:{}:1: {}", p.display(), e.line, e.message),
        ),
    })
}

/// A line error, or the simulator's size limit reported by the caller's check.
#[derive(Debug)]
pub enum Ns3OrSize {
    /// A problem on a line.
    Line(Ns3Error),
    /// The network is too large (from the size check).
    Size(ParamError),
}

impl From<Ns3Error> for Ns3OrSize {
    fn from(e: Ns3Error) -> Self {
        Ns3OrSize::Line(e)
    }
}

/// Parses the text of a topology file. `size_ok(hosts, links)` is called with the counts
/// the header announces before anything is allocated.
pub fn parse(
    text: &str,
    size_ok: impl Fn(u64, u64) -> Result<(), ParamError>,
) -> Result<TopoGraph, Ns3OrSize> {
    let h = header(text)?;
    size_ok(h.nodes - h.switches, h.links).map_err(Ns3OrSize::Size)?;
    let mut links = Vec::new();
    let s = scan(text, &h, |a, b, rate, delay| {
        links.push((a, b, rate, delay))
    })?;
    // Graph nodes: hosts first in node-id order (so host id = graph node index), then the
    // switches in node-id order.
    let mut g = TopoGraph::default();
    let mut node = vec![0usize; s.is_switch.len()];
    for (id, &sw) in s.is_switch.iter().enumerate() {
        if !sw {
            let host = g.hosts.len();
            node[id] = g.add_host(format!("host{host}"), host as u32);
        }
    }
    for (id, &sw) in s.is_switch.iter().enumerate() {
        if sw {
            node[id] = g.add_node(format!("switch{id}"), true);
        }
    }
    for (a, b, rate, delay) in links {
        g.link(node[a], node[b], rate, delay);
    }
    Ok(g)
}

/// What reading every line of a topology file found.
struct Scan {
    /// Per node id, whether it is a switch.
    is_switch: Vec<bool>,
    /// Switches with a host linked to them.
    edge_switches: u64,
    /// The fastest host link, bit/s.
    host_rate_bps: u64,
}

/// Reads every line below the header `h` and checks it, calling `link(a, b, rate,
/// delay)` for each link in file order: every line error [`parse`] reports, in the same
/// order, found without building the graph (it holds a few bytes per node, and the
/// header's node count is bounded by [`MAX_INDEX`]), so that [`size`] reports a
/// malformed file at its line before the budget prices what its first line announces.
fn scan(
    text: &str,
    h: &Header,
    mut link: impl FnMut(usize, usize, Rate, Time),
) -> Result<Scan, Ns3Error> {
    let mut lines = text
        .lines()
        .enumerate()
        .map(|(i, l)| (i + 1, l.trim()))
        .filter(|(_, l)| !l.is_empty() && !l.starts_with('#'));
    let last_line = text.lines().count().max(1);
    let err = |line: usize, m: String| Ns3Error { line, message: m };
    let (n_nodes, n_switches, n_links) = (h.nodes as usize, h.switches, h.links);
    // The header is the first line that counts.
    lines.next();

    // Switch ids: the next `n_switches` numbers, on one line or several.
    let mut is_switch = vec![false; n_nodes];
    let mut n_seen = 0u64;
    let mut switch_line = h.line;
    while n_seen < n_switches {
        let (l, text) = lines.next().ok_or_else(|| {
            err(
                last_line,
                format!("the file ends after {n_seen} of the {n_switches} switch ids the first line announces"),
            )
        })?;
        switch_line = l;
        for tok in text.split_whitespace() {
            if n_seen == n_switches {
                return Err(err(
                    l,
                    format!("more switch ids than the {n_switches} the first line announces"),
                ));
            }
            let id: usize = tok
                .parse()
                .map_err(|_| err(l, format!("switch id `{tok}` is not a whole number")))?;
            if id >= n_nodes {
                return Err(err(
                    l,
                    format!(
                        "switch id {id} does not exist: nodes are numbered 0..{}",
                        n_nodes - 1
                    ),
                ));
            }
            if std::mem::replace(&mut is_switch[id], true) {
                return Err(err(l, format!("switch id {id} is listed twice")));
            }
            n_seen += 1;
        }
    }

    // Links. A host's link line (0: none yet), for the message of a second one; a
    // switch's entry says whether a host hangs off it (an edge switch).
    let mut host_link_line = vec![0u32; n_nodes];
    let (mut edge_switches, mut host_rate_bps) = (0u64, 0u64);
    let mut n_read = 0u64;
    for (l, text) in lines {
        let f: Vec<&str> = text.split_whitespace().collect();
        if f.len() != 5 {
            return Err(err(
                l,
                format!(
                    "expected a link `<a> <b> <rate> <delay> <error rate>`, found {} field(s)",
                    f.len()
                ),
            ));
        }
        if n_read == n_links {
            return Err(err(
                l,
                format!("more links than the {n_links} the first line announces"),
            ));
        }
        let end = |k: usize| -> Result<usize, Ns3Error> {
            let id: usize = f[k]
                .parse()
                .map_err(|_| err(l, format!("node id `{}` is not a whole number", f[k])))?;
            if id >= n_nodes {
                return Err(err(
                    l,
                    format!(
                        "node {id} does not exist: nodes are numbered 0..{}",
                        n_nodes - 1
                    ),
                ));
            }
            Ok(id)
        };
        let (a, b) = (end(0)?, end(1)?);
        if a == b {
            return Err(err(l, format!("link from node {a} to itself")));
        }
        if !is_switch[a] && !is_switch[b] {
            return Err(err(
                l,
                format!("link {a} - {b} joins two hosts (neither is in the switch list); hosts attach to switches"),
            ));
        }
        let mut to_host = false;
        for h in [a, b] {
            if !is_switch[h] {
                if host_link_line[h] != 0 {
                    return Err(err(
                        l,
                        format!(
                            "host node {h} already has a link (line {}); each host (NIC) has exactly one: list multi-homed nodes as switches",
                            host_link_line[h]
                        ),
                    ));
                }
                // A file of at most `MAX_DATA_FILE_BYTES` has fewer lines than u32 counts.
                host_link_line[h] = l as u32;
                to_host = true;
            }
        }
        let rate = parse_ns3_rate(f[2]).map_err(|m| err(l, format!("rate: {m}")))?;
        let delay = parse_ns3_time(f[3]).map_err(|m| err(l, format!("delay: {m}")))?;
        if delay > MAX_LINK_DELAY {
            return Err(err(
                l,
                format!("delay {}: at most 1 s is allowed", fmt_time(delay)),
            ));
        }
        let er: f64 = f[4]
            .parse()
            .map_err(|_| err(l, format!("error rate `{}` is not a number", f[4])))?;
        if er != 0.0 {
            return Err(err(
                l,
                format!(
                    "error rate {}: fabricsim does not model random link errors, the error rate must be 0",
                    f[4]
                ),
            ));
        }
        if to_host {
            // A switch's entry is otherwise unused: non-zero marks an edge switch, counted
            // once.
            let sw = if is_switch[a] { a } else { b };
            if host_link_line[sw] == 0 {
                host_link_line[sw] = 1;
                edge_switches += 1;
            }
            host_rate_bps = host_rate_bps.max(rate.0);
        }
        link(a, b, rate, delay);
        n_read += 1;
    }
    if n_read != n_links {
        return Err(err(
            h.line,
            format!("the first line announces {n_links} links, the file has {n_read}"),
        ));
    }
    if let Some(h) = (0..n_nodes).find(|&h| !is_switch[h] && host_link_line[h] == 0) {
        return Err(err(
            switch_line,
            format!(
                "node {h} is a host (not in the switch list) but has no link; each host has exactly one"
            ),
        ));
    }
    Ok(Scan {
        is_switch,
        edge_switches,
        host_rate_bps,
    })
}

/// Parses an ns-3 data rate: a number with a unit of fabricsim's one rate grammar
/// ([`crate::base::units::rate_unit_bps`]: `bps`/`b/s` bits, `Bps`/`B/s` bytes, prefixes `K`,
/// `M`, `G`, `T` and `Ki`...`Ti`), which is ns-3's `DataRate` grammar; as in ns-3, a bare
/// number is bits per second.
pub fn parse_ns3_rate(s: &str) -> Result<Rate, String> {
    const ALLOWED: &str = crate::base::units::RATE_UNITS;
    let (v, unit) =
        split_number(s).ok_or_else(|| format!("`{s}` is not a rate: expected {ALLOWED}"))?;
    let mult = if unit.is_empty() {
        1.0
    } else {
        crate::base::units::rate_unit_bps(unit).ok_or_else(|| {
            format!("`{s}` has unknown rate unit `{unit}`: expected {ALLOWED} (or a bare number of bits per second)")
        })?
    };
    let bps = v * mult;
    if !bps.is_finite() || bps <= 0.0 {
        return Err(format!("`{s}`: a rate must be positive"));
    }
    if bps > MAX_RATE_BPS as f64 {
        return Err(format!("`{s}` is above 1 Pbps, the largest rate supported"));
    }
    let r = bps.round();
    if (bps - r).abs() > 1e-6 * bps.max(1.0) || r < 1.0 {
        return Err(format!("`{s}` is not a whole number of bits per second"));
    }
    Ok(Rate(r as u64))
}

/// Parses an ns-3 time: a number with `ps`, `ns`, `us`, `ms` or `s`, or a bare number of
/// seconds.
pub fn parse_ns3_time(s: &str) -> Result<Time, String> {
    match split_number(s) {
        Some((v, "")) => {
            if !v.is_finite() || v < 0.0 {
                return Err(format!("`{s}`: a delay must be a non-negative number"));
            }
            let ps = v * SEC as f64;
            if ps > (2 * MAX_LINK_DELAY) as f64 {
                return Err(format!("`{s}` seconds: at most 1 s is allowed"));
            }
            Ok(ps.round() as Time)
        }
        _ => parse_time(s),
    }
}

/// Splits `"100Gbps"` into `(100.0, "Gbps")`: the longest prefix that parses as a number.
fn split_number(s: &str) -> Option<(f64, &str)> {
    let s = s.trim();
    let mut end = s
        .char_indices()
        .find(|(_, c)| !(c.is_ascii_digit() || matches!(c, '.' | 'e' | 'E' | '-' | '+')))
        .map(|(i, _)| i)
        .unwrap_or(s.len());
    while end > 0 {
        if let Ok(v) = s[..end].parse::<f64>() {
            return Some((v, s[end..].trim()));
        }
        end -= 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(_: u64, _: u64) -> Result<(), ParamError> {
        Ok(())
    }

    #[test]
    fn rates_and_times() {
        assert_eq!(parse_ns3_rate("100Gbps").unwrap(), Rate::gbps(100));
        assert_eq!(parse_ns3_rate("400Gb/s").unwrap(), Rate::gbps(400));
        assert_eq!(parse_ns3_rate("12.5GBps").unwrap(), Rate::gbps(100));
        // One grammar: every unit means in a topology file what it means in a scenario.
        for s in [
            "100Gbps", "100GBps", "100gbps", "400Gb/s", "12.5GB/s", "40Mbps", "40MBps", "1KBps",
            "1kbps", "2Tbps", "1Kibps", "25G", "100GBPS", "100Gbit",
        ] {
            assert_eq!(
                parse_ns3_rate(s).ok(),
                crate::base::units::parse_rate(s).ok(),
                "{s}"
            );
        }
        assert_eq!(parse_ns3_rate("25000000000").unwrap(), Rate::gbps(25));
        assert!(parse_ns3_rate("100Gbit").is_err());
        assert!(parse_ns3_rate("0Gbps").is_err());
        assert_eq!(parse_ns3_time("1000ns").unwrap(), 1_000_000);
        assert_eq!(parse_ns3_time("0.001ms").unwrap(), 1_000_000);
        assert_eq!(parse_ns3_time("0.000001").unwrap(), 1_000_000);
        assert!(parse_ns3_time("1fortnight").is_err());
    }

    #[test]
    fn small_file_reads_with_switches_anywhere() {
        // Node 1 is the switch: hosts 0 and 2 become host ids 0 and 1.
        let g = parse(
            "3 1 2\n1\n0 1 100Gbps 0.001ms 0\n2 1 40Gbps 2us 0.000000\n",
            ok,
        )
        .unwrap();
        assert_eq!(g.hosts.len(), 2);
        assert_eq!(g.nodes[g.hosts[1]].name, "host1");
        assert_eq!(g.links[1].rate, Rate::gbps(40));
        assert_eq!(g.links[1].delay, 2_000_000);
        assert!(g.nodes[g.links[0].b].is_switch);
    }

    #[test]
    fn errors_name_the_line() {
        let cases: &[(&str, usize, &str)] = &[
            ("3 1\n", 1, "found 2 field"),
            ("3 1 2\n7\n", 2, "switch id 7 does not exist"),
            (
                "3 1 2\n1\n0 1 100Gbps 1us 0\n2 1 100Gbps 1us\n",
                4,
                "found 4 field",
            ),
            (
                "3 1 2\n1\n0 1 100Gbps 1us 0\n2 9 100Gbps 1us 0\n",
                4,
                "node 9",
            ),
            ("3 1 2\n1\n0 1 100Gbps 1us 0\n2 1 fast 1us 0\n", 4, "rate"),
            (
                "3 1 2\n1\n0 1 100Gbps 1us 0\n2 1 1Gbps 1parsec 0\n",
                4,
                "delay",
            ),
            (
                "3 1 2\n1\n0 1 100Gbps 1us 0\n2 1 1Gbps 1us 0.01\n",
                4,
                "error rate",
            ),
            ("3 1 2\n1\n0 1 100Gbps 1us 0\n", 1, "announces 2 links"),
            ("3 1 2\n1\n0 2 100Gbps 1us 0\n", 3, "joins two hosts"),
            (
                "3 1 2\n1\n0 1 1Gbps 1us 0\n0 1 1Gbps 1us 0\n",
                4,
                "already has a link",
            ),
            (
                "4 1 2\n1\n0 1 1Gbps 1us 0\n2 1 1Gbps 1us 0\n",
                2,
                "node 3 is a host",
            ),
            ("3 2 2\n1\n", 2, "ends after 1 of the 2 switch ids"),
        ];
        for (text, line, what) in cases {
            match parse(text, ok) {
                Err(Ns3OrSize::Line(e)) => {
                    assert_eq!(e.line, *line, "{text:?}: {e:?}");
                    assert!(e.message.contains(what), "{text:?}: {e:?}");
                }
                other => panic!("{text:?}: {other:?}"),
            }
        }
    }

    /// `size` reads the file as the build does: the same line error, even when the first
    /// line announces a network the budget would refuse; and counts equal to the graph's.
    #[test]
    fn size_reports_the_line_error_the_build_reports_and_counts_exactly() {
        let d = tempfile::tempdir().unwrap();
        let write = |name: &str, text: &str| {
            std::fs::write(d.path().join(name), text).unwrap();
            name.to_string()
        };
        // 16 million nodes announced, three links, the second one malformed.
        let bad = write(
            "bad.txt",
            "16000000 1 3\n0\n0 1 100Gbps 1us 0\n0 2 100Gbps 1us\n0 3 100Gbps 1us 0\n",
        );
        let e = size(&bad, d.path()).unwrap_err();
        assert_eq!(e.field, "file", "{e}");
        assert!(e.message.contains("bad.txt:4:1: expected a link"), "{e}");
        // Well formed but for the hosts left without a link: the build's error too.
        let lonely = write(
            "lonely.txt",
            "16000000 1 3\n0\n0 1 100Gbps 1us 0\n0 2 100Gbps 1us 0\n0 3 100Gbps 1us 0\n",
        );
        let e = size(&lonely, d.path()).unwrap_err();
        assert!(
            e.message.contains("lonely.txt:2:1: node 4 is a host"),
            "{e}"
        );
        let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("data/topo");
        let s = size("ns3-fat-320.txt", &data).unwrap();
        let g = build("ns3-fat-320.txt", &data).unwrap();
        assert_eq!((s.hosts, s.switches, s.links), (320, 56, 480));
        assert_eq!(s.links as usize, g.links.len());
        // The 20 ToRs have hosts; every host link is 100 Gbit/s.
        assert_eq!((s.edge_switches, s.host_rate_bps), (20, 100_000_000_000));
    }
}
