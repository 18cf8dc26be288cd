//! `docs/results/sunway.md`: document 003's point-to-point bandwidth, table routing and
//! faults, beside `scenarios/sunway-{bandwidth,adaptive,faults}.toml`.

use crate::reproduce::claims::Claim;
use crate::reproduce::data::Run;
use crate::reproduce::table::{f, int, ms, us, Table};
use crate::reproduce::{Doc, Generated, Job, Made, Runs};

pub const DOC: Doc = Doc {
    name: "sunway",
    file: "docs/results/sunway.md",
    source: "003",
    made: Made::Reproduce {
        fast: true,
        jobs: &[
            Job {
                name: "bandwidth",
                scenario: "scenarios/sunway-bandwidth.toml",
                set: &[],
                seed: None,
            },
            Job {
                name: "bandwidth-no-pcie",
                scenario: "scenarios/sunway-bandwidth.toml",
                set: &["transport.message.pcie_round_trip=0ns"],
                seed: None,
            },
            Job {
                name: "bandwidth-pcie-533ns",
                scenario: "scenarios/sunway-bandwidth.toml",
                set: &["transport.message.pcie_round_trip=533ns"],
                seed: None,
            },
            Job {
                name: "bandwidth-pcie-666ns",
                scenario: "scenarios/sunway-bandwidth.toml",
                set: &["transport.message.pcie_round_trip=666ns"],
                seed: None,
            },
            Job {
                name: "adaptive",
                scenario: "scenarios/sunway-adaptive.toml",
                set: &[],
                seed: None,
            },
            Job {
                name: "adaptive-presense",
                scenario: "scenarios/sunway-adaptive.toml",
                set: &["fabric.credit.presense=true"],
                seed: None,
            },
            Job {
                name: "faults",
                scenario: "scenarios/sunway-faults.toml",
                set: &[],
                seed: None,
            },
        ],
        generate,
    },
};

/// Bytes each bandwidth run writes (64 MiB): the rate is this over the job's time.
const WRITTEN: f64 = 64.0 * 1024.0 * 1024.0;

/// GB/s of a bandwidth run (bytes per ns).
fn gbps(r: &Run) -> Result<f64, String> {
    Ok(WRITTEN / r.num("jobs.jct_max_ns")?)
}

fn generate(runs: &Runs) -> Result<Generated, String> {
    let mut claims = Vec::new();
    // Bandwidth.
    let mut t = Table::new(&["messages", ">one port (GB/s)", ">both ports (GB/s)", "document"]);
    let rate_of = |job: &str, n: &str| -> Result<(f64, f64), String> {
        let bw = runs.job(job)?;
        Ok((
            gbps(bw.run(&format!("one-port-messages={n}"))?)?,
            gbps(bw.run(&format!("two-ports-messages={n}"))?)?,
        ))
    };
    let rate = |n: &str| rate_of("bandwidth", n);
    let (big1, big2) = rate("64")?;
    let (small1, small2) = rate("16384")?;
    t.row(vec![
        "64 x 1 MiB".into(),
        f(big1, 2),
        f(big2, 2),
        "13.269 GB/s per port (97.3 % of 13.63, 99.6 % of 13.324); node 28 GB/s, MPI 26 GB/s".into(),
    ]);
    t.row(vec!["16,384 x 4 KiB".into(), f(small1, 2), f(small2, 2), "7.08 GB/s".into()]);
    claims.push(Claim::figure("1 MB RDMA write bandwidth on one port", "13.269 GB/s", 13.269, (big1, format!("{} GB/s", f(big1, 2))), 0.01, 0.05));
    claims.push(Claim::figure("MPI bandwidth of a node (both ports)", "26 GB/s", 26.0, (big2, format!("{} GB/s (1 MiB messages)", f(big2, 2))), 0.05, 0.10));
    // The DMA setup's derivation: the engine time per 4 KiB message and what it gives,
    // for the round trip the scenario takes and either side of it, and without it.
    let mut setup = Table::new(&[
        "DMA setup per message (engine time)",
        ">4 KiB, one port (GB/s)",
        ">4 KiB, both ports (GB/s)",
    ]);
    let (lo, hi) = (rate_of("bandwidth-pcie-666ns", "16384")?, rate_of("bandwidth-pcie-533ns", "16384")?);
    let off = rate_of("bandwidth-no-pcie", "16384")?;
    for (label, (one, two)) in [
        ("0.5 us fixed, no PCIe round trips (the engines' plain `setup`)", off),
        ("fast path 150 ns + 2 x 533 ns (the fastest Xeon E5 measured)", hi),
        ("fast path 150 ns + 2 x 546 ns (the scenario)", (small1, small2)),
        ("fast path 150 ns + 2 x 666 ns (the slowest, from the far socket)", lo),
    ] {
        setup.row(vec![label.into(), f(one, 2), f(two, 2)]);
    }
    claims.push(Claim::figure(
        "4 KB message bandwidth (one port)",
        "7.08 GB/s",
        7.08,
        (
            small1,
            format!(
                "{} GB/s predicted ({}-{} for PCIe round trips of 666-533 ns)",
                f(small1, 2),
                f(lo.0, 2),
                f(hi.0, 2)
            ),
        ),
        0.05,
        0.25,
    ));
    // Routing.
    let ad = runs.job("adaptive")?;
    let pre = runs.job("adaptive-presense")?;
    let mut t2 = Table::new(&[
        "pattern",
        "routing",
        "rails",
        ">FCT p50 (us)",
        ">FCT p99 (us)",
        ">slowdown p50",
        ">slowdown p99",
    ]);
    let mut t3 = Table::new(&[
        "pattern",
        "rails",
        ">FCT p50 / p99 (us), credits",
        ">with pre-sensing",
    ]);
    let mut slow = std::collections::BTreeMap::new();
    for pattern in ["perm", "transpose"] {
        for rails in ["one-rail", "two-rails"] {
            for routing in ["deterministic", "adaptive"] {
                let name = format!("{pattern}-{routing}-{rails}");
                let r = ad.run(&name)?;
                slow.insert(name.clone(), r.num("flows.slowdown_p99")?);
                t2.row(vec![
                    if pattern == "perm" { "permutation" } else { "transpose" }.into(),
                    routing.into(),
                    rails.trim_end_matches("-rail").trim_end_matches("-rails").into(),
                    us(r.num("flows.fct_p50_ns")?, 1),
                    us(r.num("flows.fct_p99_ns")?, 1),
                    f(r.num("flows.slowdown_p50")?, 2),
                    f(r.num("flows.slowdown_p99")?, 2),
                ]);
                if routing == "adaptive" {
                    let p = pre.run(&name)?;
                    let pair = |r: &Run| -> Result<String, String> {
                        Ok(format!(
                            "{} / {}",
                            us(r.num("flows.fct_p50_ns")?, 1),
                            us(r.num("flows.fct_p99_ns")?, 1)
                        ))
                    };
                    t3.row(vec![
                        if pattern == "perm" { "permutation" } else { "transpose" }.into(),
                        rails.trim_end_matches("-rail").trim_end_matches("-rails").into(),
                        pair(r)?,
                        pair(p)?,
                    ]);
                }
            }
        }
    }
    let adaptive_max = slow
        .iter()
        .filter(|(k, _)| k.contains("adaptive"))
        .map(|(_, v)| *v)
        .fold(0.0, f64::max);
    let det_transpose = slow["transpose-deterministic-one-rail"];
    claims.push(Claim::direction(
        "adaptive routing (the output with most downstream credits) avoids the collisions of deterministic table routing",
        "mechanism described, no figure",
        format!(
            "slowdown p99 at most {} adaptive, {} deterministic on the transpose",
            f(adaptive_max, 2),
            f(det_transpose, 1)
        ),
        adaptive_max < det_transpose,
    ));
    // Faults.
    let fl = runs.job("faults")?;
    let mut t4 = Table::new(&[
        "run",
        ">completed",
        ">FCT p50 (us)",
        ">FCT p99 (us)",
        ">end (ms)",
        ">timeouts",
        ">dropped",
        ">corrupted",
        ">replayed",
        "outcome",
    ]);
    let names = [
        "uplinks-0-siblings",
        "uplinks-0-plain",
        "uplinks-1-siblings",
        "uplinks-1-plain",
        "uplinks-9-siblings",
        "uplinks-9-plain",
        "uplinks-18-siblings",
        "uplinks-18-plain",
        "ber-1e-12-llr",
        "ber-1e-12-nollr",
        "ber-1e-8-llr",
        "ber-1e-8-nollr",
        "ber-1e-6-llr",
        "ber-1e-6-nollr",
        "ber-1e-5-llr",
        "ber-1e-5-nollr",
        "ber-1e-4-llr",
        "ber-1e-4-nollr",
        "ber-1e-4-fec",
    ];
    let all_done = |r: &Run| -> Result<bool, String> {
        Ok(r.num("flows.completed")? == r.num("flows.count")?)
    };
    for n in names {
        let r = fl.run(n)?;
        t4.row(vec![
            n.into(),
            format!("{}/{}", r.num("flows.completed")?, r.num("flows.count")?),
            us(r.num("flows.fct_p50_ns")?, 1),
            us(r.num("flows.fct_p99_ns")?, 1),
            ms(r.num("run.sim_end_ns")?, 2),
            int(r.num("transport.timeouts")?),
            int(r.count("faults.packets_dropped")?),
            int(r.count("faults.frames_corrupted")?),
            int(r.count("faults.frames_replayed")?),
            r.text("run.outcome")?,
        ]);
    }
    let (sib, plain) = (fl.run("uplinks-18-siblings")?, fl.run("uplinks-18-plain")?);
    claims.push(Claim::direction(
        "even if all 18 uplinks of a leaf fail, its nodes stay reachable through the sibling",
        "yes",
        format!(
            "{}/{} messages with siblings (none dropped: {}), {}/{} without",
            sib.num("flows.completed")?,
            sib.num("flows.count")?,
            int(sib.count("faults.packets_dropped")?),
            plain.num("flows.completed")?,
            plain.num("flows.count")?
        ),
        all_done(sib)? && sib.count("faults.packets_dropped")? == 0.0 && !all_done(plain)?,
    ));
    let (base, ber12) = (fl.run("uplinks-0-plain")?, fl.run("ber-1e-12-nollr")?);
    claims.push(Claim::direction(
        "a bit error rate below 1e-12 costs nothing",
        "BER < 1e-12",
        format!(
            "FCT p99 {} us at 1e-12 without LLR, {} us without errors",
            us(ber12.num("flows.fct_p99_ns")?, 1),
            us(base.num("flows.fct_p99_ns")?, 1)
        ),
        ber12.num("flows.fct_p99_ns")? <= base.num("flows.fct_p99_ns")? * 1.001,
    ));
    let (llr, nollr) = (fl.run("ber-1e-5-llr")?, fl.run("ber-1e-5-nollr")?);
    claims.push(Claim::direction(
        "CRC32 link-level retransmission keeps a lossy link usable",
        "LLR in the reliability hierarchy",
        format!(
            "at 1e-5: {}/{} messages with LLR, {}/{} without",
            llr.num("flows.completed")?,
            llr.num("flows.count")?,
            nollr.num("flows.completed")?,
            nollr.num("flows.count")?
        ),
        all_done(llr)? && !all_done(nollr)?,
    ));
    let fec = fl.run("ber-1e-4-fec")?;
    claims.push(Claim::direction(
        "RS(528,514) FEC corrects the errors of a degraded link",
        "FEC first in the hierarchy",
        format!(
            "at 1e-4: {} corrupted frames left, {}/{} messages",
            int(fec.count("faults.frames_corrupted")?),
            fec.num("flows.completed")?,
            fec.num("flows.count")?
        ),
        all_done(fec)? && fec.count("faults.frames_corrupted")? < 10.0,
    ));
    Ok(Generated {
        blocks: vec![
            ("bandwidth".into(), t.render()),
            ("setup".into(), setup.render()),
            ("adaptive".into(), t2.render()),
            ("presense".into(), t3.render()),
            ("faults".into(), t4.render()),
        ],
        claims,
    })
}
