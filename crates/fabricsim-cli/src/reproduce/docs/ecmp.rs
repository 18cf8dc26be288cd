//! `docs/results/ecmp.md`: document 000's ECMP hash polarization, on a k = 8 fat-tree
//! (`scenarios/ecmp-polarization.toml`) and with LAG member choice
//! (`scenarios/ecmp-lag.toml`), seeds 1 to 3.

use crate::reproduce::claims::Claim;
use crate::reproduce::data::Run;
use crate::reproduce::table::{f, int, ms, Table};
use crate::reproduce::{Doc, Generated, Job, Made, Runs};

const POLAR: &str = "scenarios/ecmp-polarization.toml";
const LAG: &str = "scenarios/ecmp-lag.toml";

pub const DOC: Doc = Doc {
    name: "ecmp",
    file: "docs/results/ecmp.md",
    source: "000",
    made: Made::Reproduce {
        fast: true,
        jobs: &[
            Job::seeded("polarization-1", POLAR, 1),
            Job::seeded("polarization-2", POLAR, 2),
            Job::seeded("polarization-3", POLAR, 3),
            Job::seeded("lag-1", LAG, 1),
            Job::seeded("lag-2", LAG, 2),
            Job::seeded("lag-3", LAG, 3),
        ],
        generate,
    },
};

/// A link is idle when it carried less than this.
const IDLE_BYTES: f64 = 1e6;

/// (max / mean of `tx_bytes`, idle links, links) over the ports of `ports.csv` whose node
/// starts with `prefix` and whose port index is in `ports`.
fn tier(r: &Run, prefix: &str, ports: std::ops::RangeInclusive<u32>) -> Result<(f64, usize, usize), String> {
    let t = r.csv("ports.csv")?;
    let mut tx = Vec::new();
    for i in 0..t.rows.len() {
        let node = &t.rows[i][0];
        let port = t.num(i, "port")? as u32;
        if node.starts_with(prefix) && ports.contains(&port) {
            tx.push(t.num(i, "tx_bytes")?);
        }
    }
    if tx.is_empty() {
        return Err(format!("job `{}`, run `{}`: no `{prefix}` ports", r.job, r.name));
    }
    let mean = tx.iter().sum::<f64>() / tx.len() as f64;
    let max = tx.iter().copied().fold(0.0, f64::max);
    Ok((max / mean, tx.iter().filter(|&&x| x < IDLE_BYTES).count(), tx.len()))
}

/// Cores that sent at least [`IDLE_BYTES`] on some port, and how many cores there are.
fn cores_used(r: &Run) -> Result<(usize, usize), String> {
    let t = r.csv("ports.csv")?;
    let mut all = std::collections::BTreeSet::new();
    let mut used = std::collections::BTreeSet::new();
    for i in 0..t.rows.len() {
        let node = t.rows[i][0].clone();
        if node.starts_with("core") {
            if t.num(i, "tx_bytes")? >= IDLE_BYTES {
                used.insert(node.clone());
            }
            all.insert(node);
        }
    }
    Ok((used.len(), all.len()))
}

fn generate(runs: &Runs) -> Result<Generated, String> {
    let mut claims = Vec::new();
    let mut t1 = Table::new(&[
        "variant",
        ">FCT p50 (ms)",
        ">FCT p99 (ms)",
        ">slowdown p99",
        ">PFC pauses",
        ">edge up max/mean",
        ">agg up max/mean",
        ">agg uplinks idle",
        ">cores used",
    ]);
    let mut t2 = Table::new(&[
        ">seed",
        "variant",
        ">FCT p50 (ms)",
        ">FCT p99 (ms)",
        ">agg up max/mean",
        ">agg uplinks idle",
        ">cores used",
    ]);
    let mut p99_ordered = true;
    let mut polar_idle = Vec::new();
    for seed in 1..=3 {
        let j = runs.job(&format!("polarization-{seed}"))?;
        let mut p99 = Vec::new();
        for v in ["ideal", "crc32", "polarized"] {
            let r = j.run(v)?;
            let (agg, idle, n) = tier(r, "agg", 4..=7)?;
            let (used, cores) = cores_used(r)?;
            p99.push(r.num("flows.fct_p99_ns")?);
            if v == "polarized" {
                polar_idle.push((idle, n, used, cores));
            }
            if seed == 1 {
                let (edge, _, _) = tier(r, "edge", 4..=7)?;
                t1.row(vec![
                    v.into(),
                    ms(r.num("flows.fct_p50_ns")?, 3),
                    ms(r.num("flows.fct_p99_ns")?, 3),
                    f(r.num("flows.slowdown_p99")?, 2),
                    int(r.num("fabric.pause_frames")?),
                    f(edge, 2),
                    f(agg, 2),
                    format!("{idle} / {n}"),
                    format!("{used} / {cores}"),
                ]);
            } else {
                t2.row(vec![
                    seed.to_string(),
                    v.into(),
                    ms(r.num("flows.fct_p50_ns")?, 3),
                    ms(r.num("flows.fct_p99_ns")?, 3),
                    f(agg, 2),
                    format!("{idle} / {n}"),
                    format!("{used} / {cores}"),
                ]);
            }
        }
        p99_ordered &= p99[0] < p99[1] && p99[1] < p99[2];
    }
    claims.push(Claim::direction(
        "ECMP hash polarization leaves paths idle while flows collide on others, which slows the job",
        "polarization (qualitative)",
        format!(
            "polarized: {} cores used, {} aggregation uplinks idle (seeds 1-3); FCT p99 ideal < crc32 < polarized in {} seeds",
            polar_idle
                .iter()
                .map(|(_, _, u, c)| format!("{u}/{c}"))
                .collect::<Vec<_>>()
                .join(", "),
            polar_idle
                .iter()
                .map(|(i, n, _, _)| format!("{i}/{n}"))
                .collect::<Vec<_>>()
                .join(", "),
            if p99_ordered { "all 3" } else { "not all" }
        ),
        p99_ordered && polar_idle.iter().all(|(i, n, _, _)| 2 * i > *n),
    ));
    let mut t3 = Table::new(&[
        ">seed",
        "lag",
        ">FCT p50 (ms)",
        ">FCT p99 (ms)",
        ">PFC pauses",
        ">leaf up max/mean",
        ">leaf uplinks idle",
    ]);
    let mut correlated_worse = true;
    for seed in 1..=3 {
        let j = runs.job(&format!("lag-{seed}"))?;
        let mut p50 = Vec::new();
        for v in ["flat", "independent", "correlated"] {
            let r = j.run(v)?;
            // A leaf's ports: its NICs first, then its uplink members.
            let (imb, idle, n) = tier(r, "leaf", 8..=u32::MAX)?;
            p50.push(r.num("flows.fct_p50_ns")?);
            t3.row(vec![
                seed.to_string(),
                v.into(),
                ms(r.num("flows.fct_p50_ns")?, 3),
                ms(r.num("flows.fct_p99_ns")?, 3),
                int(r.num("fabric.pause_frames")?),
                f(imb, 2),
                format!("{idle} / {n}"),
            ]);
        }
        correlated_worse &= p50[2] > p50[0] && p50[2] > p50[1];
    }
    claims.push(Claim::direction(
        "a LAG member choice that reuses the next hop's hash bits polarizes the members",
        "polarization (qualitative)",
        format!(
            "correlated member choice: FCT p50 above flat and independent in {} seeds",
            if correlated_worse { "all 3" } else { "not all" }
        ),
        correlated_worse,
    ));
    Ok(Generated {
        blocks: vec![
            ("polarization".into(), t1.render()),
            ("polarization-seeds".into(), t2.render()),
            ("lag".into(), t3.render()),
        ],
        claims,
    })
}
