//! Poisson flow arrivals with sizes from a flow-size CDF (`kind = "poisson"`), the model of
//! the HPCC ns-3 traffic generator used by the HPCC and ACC papers (document 004).
//!
//! Every source host runs its own Poisson process: inter-arrival times are exponential
//! with mean `mean flow size * 8 / (load * rate of the host's link)` (the CDF's mean, see
//! [`super::cdf::Cdf::mean`]), so each host offers `load` of its link on average. Each
//! arrival draws a size from the CDF and a destination uniformly among the allowed hosts:
//! every other host of the set, or with `cross_rack_only` every host under another edge
//! switch (the switch the host's one link attaches to).
//!
//! The processes are merged in time order (a heap of the next arrival of every host; ties
//! go to the host listed first), and each arrival draws, in this order, its size, its
//! destination and the host's next inter-arrival time, all from one generator seeded by
//! `component_rng(seed, "workload[i].poisson")`. The flows therefore come out sorted by
//! start time; `duration` keeps the arrivals before `start + duration` and `flows = n` the
//! first n. A longer duration only adds flows after the others.

use super::{all_hosts, cdf, Builder, Generator, HostSet, DEFAULT_START};
use crate::base::ids::MAX_INDEX;
use crate::base::param::{size_knobs, Described, Param, ParamError, SizeKnob};
use crate::base::seed::component_rng;
use crate::base::units::serde_units as su;
use crate::base::units::{Time, SEC};
use crate::model::topology::TopoGraph;
use crate::model::workload::FlowSpec;
use rand::Rng;
use serde::Deserialize;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Poisson arrivals of flows whose sizes follow a flow-size CDF (the HPCC traffic
/// generator's model): every source host starts flows at exponentially distributed
/// intervals of mean `mean size * 8 / (load * host link rate)`, each to a uniformly random
/// other host. See [`crate::model::workload::poisson`].
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

/// For every host id, the node of the switch its link attaches to and the link's rate in
/// bits per second (`None` for a host without a link).
pub fn host_attachments(g: &TopoGraph) -> Vec<Option<(usize, u64)>> {
    let mut host_of_node = vec![None; g.nodes.len()];
    for (h, &n) in g.hosts.iter().enumerate() {
        if let Some(slot) = host_of_node.get_mut(n) {
            *slot = Some(h);
        }
    }
    let mut out = vec![None; g.hosts.len()];
    for l in &g.links {
        for (me, other) in [(l.a, l.b), (l.b, l.a)] {
            if let Some(Some(h)) = host_of_node.get(me) {
                if out[*h].is_none() {
                    out[*h] = Some((other, l.rate.0));
                }
            }
        }
    }
    out
}

impl Described for PoissonCfg {
    const ABOUT: &'static str =
        "Poisson flow arrivals at a target load, sizes drawn from a flow-size CDF (seeded)";
    fn params() -> Vec<Param> {
        let cdfs: Vec<String> = cdf::BUILTIN
            .iter()
            .map(|(n, _, _)| format!("\"{n}\""))
            .collect();
        vec![
            Param::required(
                "cdf",
                format!(
                    "{} | \"path/to/cdf\" (`size percent` lines)",
                    cdfs.join(" | ")
                ),
            ),
            Param::required("load", "fraction of each source's host link, 0 < load <= 1"),
            Param::unset("duration", "arrivals from `start` for this long (or give `flows`)"),
            Param::unset("flows", "the first `flows` arrivals of all hosts together"),
            Param::time("start", DEFAULT_START, "time from which arrivals are counted"),
            super::hosts_param(),
            Param::unset(
                "cross_rack_only",
                "destinations under another edge switch only; unset: true when the hosts span 2+ switches",
            ),
        ]
    }
}

impl Generator for PoissonCfg {
    /// With `flows = n`: exactly n. With `duration`: the count is random, about
    /// duration x load x (each host's link rate) / (8 x the CDF's mean size), and the
    /// host link rates are not known before the graph is built; generating refuses more
    /// than `MAX_INDEX` flows a run (both the expected count and the drawn one), so that
    /// bounds it.
    fn size(&self, ctx: &super::SizeCtx<'_>) -> Result<Option<super::WorkSize>, ParamError> {
        let cdf = cdf::resolve(&self.cdf, ctx.base_dir, "cdf")?;
        let mean_size = cdf.mean().max(1.0);
        let max_size = cdf.points().map(|(s, _)| s).fold(1.0, f64::max);
        let flows = match (self.flows, self.duration) {
            (Some(n), _) => n,
            (None, Some(d)) => {
                // Arrivals per host are Poisson with mean load x rate x duration / (8 x
                // mean size); all hosts together have mean mu, and mu + 8 sqrt(mu) + 16
                // is beyond any draw (the tail past 8 standard deviations is ~1e-15).
                // An unknown NIC rate is taken as 1.6 Tbps, above any NIC today.
                let rate = match ctx.host_rate_bps {
                    0 => 1.6e12,
                    r => r as f64,
                };
                let per_host =
                    self.load.clamp(0.0, 1.0) * rate * (d as f64 / 1e12) / (8.0 * mean_size);
                let mu = per_host * ctx.hosts as f64;
                (mu + 8.0 * mu.sqrt() + 16.0).min(MAX_INDEX as f64) as u64
            }
            (None, None) => 0,
        };
        let flows = flows.min(MAX_INDEX as u64);
        // N sizes drawn independently: their sum stays below N x mean + 8 standard
        // deviations, and a size's deviation is at most the largest size.
        let n = flows as f64;
        let bytes = n * mean_size + 8.0 * max_size * n.sqrt() + max_size;
        Ok(Some(super::WorkSize {
            flows,
            bytes: Some(bytes.min(u64::MAX as f64) as u64),
            ..Default::default()
        }))
    }

    fn size_drivers(&self) -> &'static str {
        "flows, or hosts x load x host rate x duration / mean flow size"
    }

    fn size_knobs(&self, ctx: &super::SizeCtx<'_>) -> Vec<SizeKnob<super::WorkSize>> {
        size_knobs(
            self,
            &[
                ("flows", |c| c.flows = c.flows.map(|_| 1)),
                // A picosecond: the least that is a duration.
                ("duration", |c| c.duration = c.duration.map(|_| 1)),
            ],
            |c| c.size(ctx).ok().flatten(),
        )
    }

    fn generate(&self, b: &mut Builder<'_>) -> Result<(), ParamError> {
        let flows = generate(
            self,
            b.graph,
            b.seed,
            b.base_dir,
            b.entry,
            b.work.flows.len(),
        )?;
        b.work.flows.extend(flows);
        Ok(())
    }

    fn files(&self) -> Vec<(&'static str, String)> {
        // A built-in name wins over a file of the same name (see `cdf::resolve`), so
        // only a CDF that is not built in is a path.
        if super::cdf::Cdf::builtin(&self.cdf).is_none() {
            vec![("cdf", self.cdf.clone())]
        } else {
            Vec::new()
        }
    }
}

/// Generates the flows of poisson workload entry `wi`; `first_flow` is the number of
/// flows the entries before it made (flow ids are bounded by [`MAX_INDEX`]). Errors name
/// fields relative to the entry.
pub fn generate(
    c: &PoissonCfg,
    g: &TopoGraph,
    seed: u64,
    base_dir: &std::path::Path,
    wi: usize,
    first_flow: usize,
) -> Result<Vec<FlowSpec>, ParamError> {
    let ferr = |s: &str, m: String| ParamError::new(s, m);

    if !(c.load > 0.0 && c.load <= 1.0) {
        return Err(ferr(
            "load",
            format!(
                "load {} is not allowed: it is a fraction of the host link capacity, 0 < load <= 1",
                c.load
            ),
        ));
    }
    let cdf = cdf::resolve(&c.cdf, base_dir, "cdf")?;
    let mean = cdf.mean();
    if mean.is_nan() || mean < 1.0 {
        return Err(ferr(
            "cdf",
            format!("the CDF's mean flow size is {mean} bytes: it must be at least 1 byte"),
        ));
    }
    let start = c.start.unwrap_or(DEFAULT_START);
    let room = (MAX_INDEX as u64).saturating_sub(first_flow as u64);
    enum Stop {
        At(f64),
        Count(u64),
    }
    let stop = match (c.duration, c.flows) {
        (Some(_), Some(_)) => {
            return Err(ferr(
                "flows",
                "give either `duration` or `flows`, not both".into(),
            ))
        }
        (None, None) => return Err(ferr(
            "duration",
            "missing: give `duration` (arrivals from `start` for this long) or `flows` (a count)"
                .into(),
        )),
        (Some(d), None) => {
            if d == 0 {
                return Err(ferr("duration", "must be positive".into()));
            }
            if start.checked_add(d).is_none() {
                return Err(ferr(
                    "duration",
                    "start + duration is beyond the largest time (213 days)".into(),
                ));
            }
            Stop::At(d as f64)
        }
        (None, Some(n)) => {
            if n == 0 {
                return Err(ferr("flows", "must be at least 1".into()));
            }
            if n > room {
                return Err(ferr(
                    "flows",
                    format!("{n} flows is too many: at most {MAX_INDEX} per run"),
                ));
            }
            Stop::Count(n)
        }
    };

    let hs = super::resolve_set(&c.hosts, g, "hosts", None, "a Poisson workload's hosts")?;
    if hs.len() < 2 {
        return Err(ferr(
            "hosts",
            "a poisson workload needs at least 2 hosts".into(),
        ));
    }
    let att = host_attachments(g);
    let mut sw = Vec::with_capacity(hs.len());
    let mut rate = Vec::with_capacity(hs.len());
    for &h in &hs {
        let (s, r) = att[h as usize].ok_or_else(|| {
            ferr(
                "hosts",
                format!("host {} has no link", g.nodes[g.hosts[h as usize]].name),
            )
        })?;
        sw.push(s);
        rate.push(r);
    }
    let racks = {
        let mut v = sw.clone();
        v.sort_unstable();
        v.dedup();
        v.len()
    };
    let cross = match c.cross_rack_only {
        Some(b) => b,
        None => racks >= 2,
    };
    if cross && racks < 2 {
        return Err(ferr(
            "cross_rack_only",
            format!(
                "all {} hosts attach to switch {}: cross-rack traffic needs hosts under at least 2 switches (or set cross_rack_only = false)",
                hs.len(),
                g.nodes[sw[0]].name
            ),
        ));
    }

    // Destinations: the hosts sorted by (group, id), where the group is the edge switch
    // (cross-rack) or the host itself. A source may send to every host outside its
    // group's block [block_start, block_start + block_len).
    let key = |i: usize| if cross { sw[i] } else { i };
    let mut order: Vec<usize> = (0..hs.len()).collect();
    order.sort_by_key(|&i| (key(i), hs[i]));
    let sorted: Vec<u32> = order.iter().map(|&i| hs[i]).collect();
    let mut block = vec![(0usize, 0usize); hs.len()];
    let mut b = 0;
    while b < order.len() {
        let mut e = b;
        while e < order.len() && key(order[e]) == key(order[b]) {
            e += 1;
        }
        for &i in &order[b..e] {
            block[i] = (b, e - b);
        }
        b = e;
    }

    // Mean inter-arrival time of each source, in picoseconds.
    let iat: Vec<f64> = rate
        .iter()
        .map(|&r| mean * 8.0 / (c.load * r as f64) * SEC as f64)
        .collect();
    if let Stop::At(d) = stop {
        let expected: f64 = iat.iter().map(|m| d / m).sum();
        if expected > room as f64 {
            return Err(ferr(
                "duration",
                format!(
                    "about {expected:.0} flows at this load and duration: at most {MAX_INDEX} per run"
                ),
            ));
        }
    }

    let mut rng = component_rng(seed, &format!("workload[{wi}].poisson"));
    let exp = |rng: &mut rand_chacha::ChaCha8Rng, m: f64| -> f64 {
        let u: f64 = rng.gen();
        // ln(1 - u) is in (-inf, 0]; abs keeps a zero positive (its bits must sort first).
        (m * (1.0 - u).ln()).abs()
    };
    // Next arrival of each source, as an offset from `start` in picoseconds. The keys are
    // the bits of non-negative finite doubles, which order like the doubles.
    let mut next: BinaryHeap<Reverse<(u64, usize)>> = BinaryHeap::with_capacity(hs.len());
    for (i, &m) in iat.iter().enumerate() {
        next.push(Reverse((exp(&mut rng, m).to_bits(), i)));
    }
    let mut out = Vec::new();
    while let Some(Reverse((bits, i))) = next.pop() {
        let t = f64::from_bits(bits);
        match stop {
            Stop::At(d) if t >= d => break,
            Stop::Count(n) if out.len() as u64 >= n => break,
            _ => {}
        }
        if out.len() as u64 >= room {
            return Err(ferr(
                "duration",
                format!("more than {MAX_INDEX} flows at this load and duration"),
            ));
        }
        let size = cdf.sample(&mut rng);
        let (bs, bl) = block[i];
        let k = rng.gen_range(0..sorted.len() - bl);
        let dst = sorted[if k < bs { k } else { k + bl }];
        out.push(FlowSpec {
            src: hs[i],
            dst,
            size,
            start: start.saturating_add(t.round() as u64),
        });
        let t2 = t + exp(&mut rng, iat[i]);
        if t2.is_finite() {
            next.push(Reverse((t2.to_bits(), i)));
        }
    }
    Ok(out)
}
