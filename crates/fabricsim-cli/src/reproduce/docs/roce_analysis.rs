//! `docs/results/roce-analysis.md`: document 002 (RoCE for HPC), its latency and ECN
//! fairness claims, beside `scenarios/roce-vs-ib-latency.toml` and
//! `scenarios/ecn-unfairness.toml`. The buffer and forward-notification sections are not
//! generated yet.

use crate::reproduce::claims::Claim;
use crate::reproduce::table::{f, pct, Table};
use crate::reproduce::{Doc, Generated, Job, Made, Runs};

pub const DOC: Doc = Doc {
    name: "roce-analysis",
    file: "docs/results/roce-analysis.md",
    source: "002",
    made: Made::Reproduce {
        fast: true,
        jobs: &[
            Job {
                name: "latency",
                scenario: "scenarios/roce-vs-ib-latency.toml",
                set: &[],
                seed: None,
            },
            Job {
                name: "ecn",
                scenario: "scenarios/ecn-unfairness.toml",
                set: &[],
                seed: None,
            },
        ],
        generate,
    },
};

/// (variant, link, switch, header) in the table's order.
const FABRICS: [(&str, &str, &str, &str); 7] = [
    ("roce-25g-sn2410", "25G", "SN2410 300 ns", "58 B"),
    ("roce-sn2410", "100G", "SN2410 300 ns", "58 B"),
    ("roce-sn3000", "100G", "SN3000 425 ns", "58 B"),
    ("rosetta", "100G", "Rosetta 350 ns", "58 B"),
    ("ib-sb7800", "100G", "SB7800 90 ns", "26 B"),
    ("ib-qm8700", "100G", "QM8700 130 ns", "26 B"),
    ("aries-mini", "100G", "Aries 100 ns", "8 B"),
];

/// The pongs (`flows.csv` flow ids) of the ping-pong: 1 B and 4 KiB over 1 switch, then
/// over 3.
const PONGS: [&str; 4] = ["1", "9", "11", "19"];

fn generate(runs: &Runs) -> Result<Generated, String> {
    let mut claims = Vec::new();
    let lat = runs.job("latency")?;
    let mut t = Table::new(&[
        "variant",
        "link",
        "switch",
        "header",
        ">1 B, 1 switch (ns)",
        ">1 B, 3 switches (ns)",
        ">4 KiB, 1 switch (ns)",
        ">4 KiB, 3 switches (ns)",
    ]);
    let mut one_byte = std::collections::BTreeMap::new();
    for (v, link, switch, header) in FABRICS {
        let fl = lat.run(v)?.csv("flows.csv")?;
        let mut cells = vec![v.to_string(), link.into(), switch.into(), header.into()];
        // The columns are 1 B / 1 switch, 1 B / 3, 4 KiB / 1, 4 KiB / 3.
        for id in [PONGS[0], PONGS[2], PONGS[1], PONGS[3]] {
            let ns = fl.num(fl.find("flow_id", id)?, "fct_ns")?;
            if id == PONGS[0] {
                one_byte.insert(v, ns);
            }
            cells.push(f(ns, 1));
        }
        t.row(cells);
    }
    let above = one_byte["roce-25g-sn2410"] / one_byte["ib-sb7800"] - 1.0;
    claims.push(Claim::range(
        "RoCE's small-message latency is 47-63 % above InfiniBand's (the fabric alone here: 1 B over one switch, the document's testbeds)",
        "47-63 % (end to end, osu_latency)",
        0.47,
        0.63,
        (above, format!("+{}", pct(above, 0))),
        (0.20, "20 pts"),
    ));
    let ordered = one_byte["ib-sb7800"] < one_byte["roce-sn2410"]
        && one_byte["ib-qm8700"] < one_byte["roce-sn2410"];
    claims.push(Claim::direction(
        "InfiniBand's switches make it faster than RoCE at equal link rate",
        "IB below RoCE",
        format!(
            "1 B over one switch at 100G: {} ns (SB7800), {} ns (SN2410)",
            f(one_byte["ib-sb7800"], 1),
            f(one_byte["roce-sn2410"], 1)
        ),
        ordered,
    ));

    let ecn = runs.job("ecn")?;
    let mut t2 = Table::new(&[
        "variant",
        ">flow 0 (leaf0:1), Gbps",
        ">flow 1 (leaf0:2), Gbps",
        ">flow 1's share",
    ]);
    let mut share = std::collections::BTreeMap::new();
    for (v, label) in [
        ("unbiased", "unbiased"),
        ("biased-2x", "leaf0:2 marked 2x"),
        ("biased-4x", "leaf0:2 marked 4x"),
        ("biased-other-port-2x", "leaf0:1 marked 2x"),
    ] {
        let w = ecn.run(v)?.csv("window.csv")?;
        let g0 = w.num(w.find("what", "flow 0")?, "goodput_gbps")?;
        let g1 = w.num(w.find("what", "flow 1")?, "goodput_gbps")?;
        share.insert(v, g1 / (g0 + g1));
        t2.row(vec![label.into(), f(g0, 1), f(g1, 1), pct(g1 / (g0 + g1), 0)]);
    }
    let holds = share["biased-2x"] < share["unbiased"]
        && share["biased-4x"] < share["biased-2x"]
        && share["biased-other-port-2x"] > share["unbiased"];
    claims.push(Claim::direction(
        "a switch marking ECN more on one ingress port makes equal-rate flows unfair",
        "unequal marking -> unfairness",
        format!(
            "the more-marked port's flow: {} / {} of the port (2x / 4x), {} unbiased",
            pct(share["biased-2x"], 0),
            pct(share["biased-4x"], 0),
            pct(share["unbiased"], 0)
        ),
        holds,
    ));
    Ok(Generated {
        blocks: vec![("latency".into(), t.render()), ("ecn".into(), t2.render())],
        claims,
    })
}
