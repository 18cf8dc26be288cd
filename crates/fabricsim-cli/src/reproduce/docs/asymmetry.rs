//! `docs/results/asymmetry.md`: document 000's load-balancing argument under asymmetry
//! (ECMP, spraying, PKTC, PKTC + DGSQ with one degraded uplink), beside
//! `scenarios/asymmetry.toml` at seeds 1 to 5.

use crate::reproduce::claims::Claim;
use crate::reproduce::table::{f, int, mb, ms, us, Table};
use crate::reproduce::{Doc, Generated, Job, Made, Runs};

const fn seed(name: &'static str, seed: u64) -> Job {
    Job {
        name,
        scenario: "scenarios/asymmetry.toml",
        set: &[],
        seed: Some(seed),
    }
}

pub const DOC: Doc = Doc {
    name: "asymmetry",
    file: "docs/results/asymmetry.md",
    source: "000",
    made: Made::Reproduce {
        fast: true,
        jobs: &[
            seed("seed-1", 1),
            seed("seed-2", 2),
            seed("seed-3", 3),
            seed("seed-4", 4),
            seed("seed-5", 5),
        ],
        generate,
    },
};

const VARIANTS: [&str; 6] = ["ecmp", "spray_rr", "spray_random", "pktc", "pktc_2ms", "pktc_dgsq"];
const SEEDS: [&str; 5] = ["seed-1", "seed-2", "seed-3", "seed-4", "seed-5"];

fn is_gse(v: &str) -> bool {
    v.starts_with("pktc")
}

fn generate(runs: &Runs) -> Result<Generated, String> {
    let s1 = runs.job("seed-1")?;
    let mut t = Table::new(&[
        "variant",
        ">JCT mean (ms)",
        ">JCT max (ms)",
        ">retx bytes (MB)",
        ">out of order pkts",
        ">reorder buffer max (MB)",
        ">reorder skips",
        ">drops",
    ]);
    for v in VARIANTS {
        let r = s1.run(v)?;
        let gse = |path: &str, fmt: &dyn Fn(f64) -> String| -> Result<String, String> {
            Ok(if is_gse(v) { fmt(r.num(path)?) } else { "-".into() })
        };
        t.row(vec![
            v.into(),
            ms(r.num("jobs.jct_mean_ns")?, 3),
            ms(r.num("jobs.jct_max_ns")?, 3),
            mb(r.num("transport.retx_bytes")?, 1),
            int(r.num("transport.out_of_order_packets")?),
            gse("gse.reorder_max_bytes", &|x| mb(x, 2))?,
            gse("gse.reorder_skips", &int)?,
            int(r.num("fabric.drops")?),
        ]);
    }
    let bound = s1.run("ecmp")?.num("jobs.jct_lower_bound_ns")?;
    let mut t2 = Table::new(&[
        "variant",
        ">s1",
        ">s2",
        ">s3",
        ">s4",
        ">s5",
        ">mean",
        ">x the bound",
        "retx bytes (range, MB)",
    ]);
    let jobs = SEEDS
        .iter()
        .map(|s| runs.job(s))
        .collect::<Result<Vec<_>, _>>()?;
    let mut mean_of = std::collections::BTreeMap::new();
    let mut clean_2ms = true;
    let mut spray_retx = f64::MAX;
    for v in VARIANTS {
        let mut cells = vec![v.to_string()];
        let (mut sum, mut lo, mut hi) = (0.0, f64::MAX, 0.0f64);
        for j in &jobs {
            let r = j.run(v)?;
            let jct = r.num("jobs.jct_mean_ns")?;
            let retx = r.num("transport.retx_bytes")?;
            sum += jct;
            lo = lo.min(retx);
            hi = hi.max(retx);
            if v == "pktc_2ms" {
                clean_2ms &= retx == 0.0 && r.num("transport.out_of_order_packets")? == 0.0;
            }
            if v.starts_with("spray") {
                spray_retx = spray_retx.min(retx);
            }
            cells.push(int(jct / 1e3));
        }
        let mean = sum / jobs.len() as f64;
        mean_of.insert(v, mean);
        cells.push(int(mean / 1e3));
        cells.push(f(mean / bound, 1));
        cells.push(if hi == 0.0 {
            "0".into()
        } else {
            format!("{}-{}", mb(lo, 0), mb(hi, 0))
        });
        t2.row(cells);
    }
    let spray = mean_of["spray_rr"].min(mean_of["spray_random"]);
    let claims = vec![
        Claim::direction(
            "per-packet spraying reorders packets and go-back-N RDMA collapses under it (one degraded uplink)",
            "spraying + go-back-N collapses",
            format!(
                "spraying {}x the bound (5 seeds), ECMP {}x; at least {} MB retransmitted in every spraying run",
                f(spray / bound, 1),
                f(mean_of["ecmp"] / bound, 1),
                mb(spray_retx, 0)
            ),
            spray > 3.0 * mean_of["ecmp"] && spray_retx > 0.0,
        ),
        Claim::direction(
            "PKTC containers keep packets in order (reordering between containers only, at the destination GSP)",
            "in order, no retransmission",
            format!(
                "with a reorder timeout covering the slow path: {} in all 5 seeds",
                if clean_2ms {
                    "no out-of-order packet and nothing retransmitted"
                } else {
                    "out-of-order packets or retransmissions"
                }
            ),
            clean_2ms,
        ),
        Claim::direction(
            "GSE (PKTC + DGSQ) beats per-flow ECMP's load balancing",
            "better JCT",
            format!(
                "mean JCT over 5 seeds: PKTC + DGSQ {} us, ECMP {} us",
                us(mean_of["pktc_dgsq"], 0),
                us(mean_of["ecmp"], 0)
            ),
            mean_of["pktc_dgsq"] < mean_of["ecmp"],
        ),
    ];
    Ok(Generated {
        blocks: vec![
            ("bound".into(), format!("Lower bound (NIC cut): {} us.\n", us(bound, 1))),
            ("seed-1".into(), t.render()),
            ("seeds".into(), t2.render()),
        ],
        claims,
    })
}
