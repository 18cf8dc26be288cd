//! `docs/results/acc.md`: document 004 (ACC, NSDI 2024), convergence, victim flows and
//! WebSearch on the 320-server fat-tree, beside `scenarios/acc-convergence.toml`,
//! `acc-victim.toml` and `websearch-fattree.toml`.

use crate::reproduce::claims::Claim;
use crate::reproduce::data::Run;
use crate::reproduce::table::{f, int, ms, signed_pct, us, Table};
use crate::reproduce::{Doc, Generated, Job, Made, Runs};

pub const DOC: Doc = Doc {
    name: "acc",
    file: "docs/results/acc.md",
    source: "004",
    made: Made::Reproduce {
        fast: false,
        jobs: &[
            Job {
                name: "convergence",
                scenario: "scenarios/acc-convergence.toml",
                set: &[],
                seed: None,
            },
            Job {
                name: "victim",
                scenario: "scenarios/acc-victim.toml",
                set: &[],
                seed: None,
            },
            Job {
                name: "websearch",
                scenario: "scenarios/websearch-fattree.toml",
                set: &[],
                seed: None,
            },
            Job {
                name: "websearch-ns3",
                scenario: "scenarios/websearch-fattree.toml",
                set: &["profile=ns3"],
                seed: None,
            },
            Job {
                name: "dcqcn-ablation",
                scenario: "scenarios/websearch-fattree.toml",
                set: &[
                    r#"variants=[{name="default"},{name="feedback_data",set={"transport.feedback_queue"="data"}},{name="cnp_flag",set={"transport.cnp"="ack_flag"}},{name="cut_timer",set={"cc.dcqcn.cut_on"="timer"}},{name="ns3",set={profile="ns3"}}]"#,
                    "sweep=[]",
                ],
                seed: None,
            },
        ],
        generate,
    },
};

const ALGORITHMS: [(&str, &str); 5] = [
    ("dcqcn", "DCQCN"),
    ("timely", "TIMELY"),
    ("hpcc", "HPCC"),
    ("acc", "ACC"),
    ("acc_no_halt", "ACC without halt"),
];

/// The mean FCT of the flows under 10 KB.
fn small_mean(r: &Run) -> Result<f64, String> {
    let b = r.csv("buckets.csv")?;
    b.num(b.find("bucket", "<10KB")?, "fct_mean_ns")
}

/// The ToR-to-host ports of a three-tier run (a ToR's ports below `servers_per_tor` face
/// its hosts): the mean over them of their time-averaged queue, the mean of their
/// largest queues and the largest, bytes.
fn downlink_queues(r: &Run) -> Result<(f64, f64, f64), String> {
    let per_tor: f64 = r
        .setting("topology.servers_per_tor")?
        .parse()
        .map_err(|e| format!("topology.servers_per_tor: {e}"))?;
    let p = r.csv("ports.csv")?;
    let node = p
        .header
        .iter()
        .position(|h| h == "node")
        .ok_or("ports.csv: no column `node`")?;
    let (mut n, mut sum, mut sum_max, mut max) = (0.0, 0.0, 0.0, 0.0f64);
    for i in 0..p.rows.len() {
        if !p.rows[i][node].starts_with("tor") || p.num(i, "port")? >= per_tor {
            continue;
        }
        let m = p.num(i, "max_queue_bytes")?;
        n += 1.0;
        sum += p.num(i, "mean_queue_bytes")?;
        sum_max += m;
        max = max.max(m);
    }
    if n == 0.0 {
        return Err("ports.csv: no ToR-to-host port".into());
    }
    Ok((sum / n, sum_max / n, max))
}

fn generate(runs: &Runs) -> Result<Generated, String> {
    let mut claims = Vec::new();
    let mut blocks = Vec::new();

    // Convergence.
    let cv = runs.job("convergence")?;
    let mut t = Table::new(&[
        "variant",
        ">time to cut (us)",
        ">time to fair share (us)",
        ">each flow alone in the band (us)",
        ">FCT of the 20 MB joiner (ms)",
    ]);
    let period = 50_000.0;
    let mut conv = std::collections::BTreeMap::new();
    for (v, label) in [("dcqcn", "DCQCN (paper profile)"), ("acc", "ACC"), ("acc_no_halt", "ACC without halt")] {
        let r = cv.run(v)?;
        let c = r.csv("convergence.csv")?;
        let all = c.find("flow_id", "all")?;
        let (cut, fair) = (c.num(all, "time_to_cut_ns")?, c.num(all, "time_to_fair_ns")?);
        conv.insert(v, (cut, fair));
        let fl = r.csv("flows.csv")?;
        t.row(vec![
            label.into(),
            us(cut, 0),
            us(fair, 0),
            format!("{} / {}", us(c.num(0, "time_to_fair_ns")?, 0), us(c.num(1, "time_to_fair_ns")?, 0)),
            ms(fl.num(fl.find("flow_id", "1")?, "fct_ns")?, 1),
        ]);
    }
    blocks.push(("convergence".into(), t.render()));
    let (_, acc_fair) = conv["acc"];
    let (dcqcn_cut, dcqcn_fair) = conv["dcqcn"];
    claims.push(Claim::bound("ACC reaches the right rate within one period (T = 50 us)", "<= 1 T", period, true, (acc_fair, format!("{} T to the fair share", f(acc_fair / period, 1))), (period, "1 T")));
    claims.push(Claim::figure("DCQCN needs ~0.5 ms to cut its rate", "~0.5 ms", 500_000.0, (dcqcn_cut, format!("{} us", us(dcqcn_cut, 0))), 0.2, 0.5));
    claims.push(Claim::figure("DCQCN needs ~18 ms to reach the fair share", "~18 ms", 18e6, (dcqcn_fair, format!("{} ms", ms(dcqcn_fair, 1))), 0.2, 0.5));

    // Victim flows.
    let vi = runs.job("victim")?;
    let mut t = Table::new(&[
        "variant",
        ">N",
        ">victim F0 goodput (Gbps)",
        ">F1 goodput",
        ">P4 mean queue (KB)",
        ">P4 max (KB)",
        ">branch s1:2 mean (KB)",
        ">PFC pauses",
        ">TCD CE / UE marks",
    ]);
    let mut victim = std::collections::BTreeMap::new();
    for (v, label) in [("dcqcn", "DCQCN"), ("acc", "ACC"), ("acc_no_halt", "ACC without halt")] {
        for n in ["10", "20"] {
            let r = vi.run(&format!("{v}-N={n}"))?;
            let w = r.csv("window.csv")?;
            let row = |what: &str| w.find("what", what);
            let g0 = w.num(row("flow 0")?, "goodput_gbps")?;
            victim.insert((v, n), g0);
            let kb = |what: &str, c: &str| -> Result<String, String> {
                Ok(f(w.num(row(what)?, c)? / 1e3, 0))
            };
            t.row(vec![
                label.into(),
                n.into(),
                f(g0, 1),
                f(w.num(row("flow 1")?, "goodput_gbps")?, 1),
                kb("s2:2", "mean_queue_bytes")?,
                kb("s2:2", "max_queue_bytes")?,
                kb("s1:2", "mean_queue_bytes")?,
                int(r.num("fabric.pause_frames")?),
                if v == "dcqcn" {
                    "-".into()
                } else {
                    format!("{} / {}", int(r.num("fabric.tcd_ce_marks")?), int(r.num("fabric.tcd_ue_marks")?))
                },
            ]);
        }
    }
    blocks.push(("victim".into(), t.render()));
    for n in ["10", "20"] {
        let (a, d) = (victim[&("acc", n)], victim[&("dcqcn", n)]);
        claims.push(Claim::direction(
            &format!("N = {n}: ACC keeps the victim's throughput above DCQCN's"),
            "victim keeps its rate",
            format!("victim {} Gbps with ACC, {} with DCQCN", f(a, 1), f(d, 1)),
            a > d,
        ));
    }

    // WebSearch.
    let ws = runs.job("websearch")?;
    let mut t = Table::new(&[
        "algorithm",
        ">load",
        ">mean FCT (us)",
        ">mean slowdown",
        ">p50",
        ">p99",
        "><10KB p99",
        ">10-100KB p99",
        ">100KB-1MB p99",
        ">>=1MB p99",
        ">small flows' mean FCT (us)",
        ">PFC pauses",
        ">paused (ms, all ports)",
    ]);
    let mut m = std::collections::BTreeMap::new();
    for load in ["0.3", "0.5"] {
        for (a, label) in ALGORITHMS {
            let r = ws.run(&format!("{a}-load={load}"))?;
            let b = r.csv("buckets.csv")?;
            let p99 = |bucket: &str| -> Result<String, String> {
                Ok(f(b.num(b.find("bucket", bucket)?, "slowdown_p99")?, 2))
            };
            let small = small_mean(r)?;
            m.insert(
                (a, load),
                (
                    r.num("flows.fct_mean_ns")?,
                    r.num("flows.slowdown_p99")?,
                    small,
                    r.num("fabric.pause_frames")?,
                ),
            );
            t.row(vec![
                label.into(),
                load.into(),
                us(r.num("flows.fct_mean_ns")?, 1),
                f(r.num("flows.slowdown_mean")?, 2),
                f(r.num("flows.slowdown_p50")?, 2),
                f(r.num("flows.slowdown_p99")?, 2),
                p99("<10KB")?,
                p99("10KB-100KB")?,
                p99("100KB-1MB")?,
                p99(">=1MB")?,
                us(small, 2),
                int(r.num("fabric.pause_frames")?),
                ms(r.num("fabric.paused_ns")?, 2),
            ]);
        }
    }
    blocks.push(("websearch".into(), t.render()));

    // Where small flows wait: the queues of the receivers' downlinks, HPCC against ACC.
    let mut t = Table::new(&[
        "algorithm",
        ">load",
        ">ToR-to-host ports: mean queue (KB)",
        ">mean of their largest (KB)",
        ">largest (KB)",
        ">TCD CE marks",
        "><10KB mean slowdown",
        "><10KB p95",
        "><10KB p99",
    ]);
    for load in ["0.3", "0.5"] {
        for (a, label) in [("hpcc", "HPCC"), ("acc", "ACC")] {
            let r = ws.run(&format!("{a}-load={load}"))?;
            let (mean, mean_max, max) = downlink_queues(r)?;
            let b = r.csv("buckets.csv")?;
            let small = b.find("bucket", "<10KB")?;
            t.row(vec![
                label.into(),
                load.into(),
                f(mean / 1e3, 1),
                f(mean_max / 1e3, 0),
                f(max / 1e3, 0),
                int(r.num("fabric.tcd_ce_marks")?),
                f(b.num(small, "slowdown_mean")?, 2),
                f(b.num(small, "slowdown_p95")?, 2),
                f(b.num(small, "slowdown_p99")?, 2),
            ]);
        }
    }
    blocks.push(("downlinks".into(), t.render()));
    let beats = ["0.3", "0.5"].iter().all(|l| {
        let acc = m[&("acc", *l)];
        ["dcqcn", "timely"].iter().all(|o| acc.0 < m[&(*o, *l)].0 && acc.1 < m[&(*o, *l)].1)
    });
    claims.push(Claim::direction(
        "ACC beats DCQCN and TIMELY on mean and p99 FCT",
        "better on both",
        format!(
            "mean FCT {} / {} / {} us (ACC / DCQCN / TIMELY, 30 % load)",
            us(m[&("acc", "0.3")].0, 0),
            us(m[&("dcqcn", "0.3")].0, 0),
            us(m[&("timely", "0.3")].0, 0)
        ),
        beats,
    ));
    let gain = |l: &str| 1.0 - m[&("acc", l)].2 / m[&("hpcc", l)].2;
    let worst = gain("0.3").min(gain("0.5"));
    let ours = format!(
        "{} / {} (mean FCT < 10 KB, ACC against HPCC, 30 / 50 % load; + is longer)",
        signed_pct(-gain("0.3")),
        signed_pct(-gain("0.5"))
    );
    claims.push(Claim::range(
        "ACC's small-flow FCT is 29-40 % lower than HPCC's",
        "29-40 % lower",
        0.29,
        0.40,
        (worst, ours),
        (0.10, "10 pts"),
    ));
    let halt = ["0.3", "0.5"].iter().all(|l| m[&("acc", *l)].1 < m[&("acc_no_halt", *l)].1);
    claims.push(Claim::direction(
        "the halt is what makes ACC work: ACC without halt is worse",
        "worse without halt",
        format!(
            "p99 slowdown {} with halt, {} without (30 % load)",
            f(m[&("acc", "0.3")].1, 2),
            f(m[&("acc_no_halt", "0.3")].1, 2)
        ),
        halt,
    ));
    let fewer = ["0.3", "0.5"].iter().all(|l| {
        ["dcqcn", "timely", "acc_no_halt"].iter().all(|o| m[&("acc", *l)].3 < m[&(*o, *l)].3)
    });
    claims.push(Claim::direction(
        "ACC sends fewer PFC pauses",
        "fewer",
        format!(
            "{} pauses with ACC, {} with DCQCN (30 % load)",
            int(m[&("acc", "0.3")].3),
            int(m[&("dcqcn", "0.3")].3)
        ),
        fewer,
    ));
    let completed = |a: &str| {
        ["0.3", "0.5"].iter().all(|l| {
            ws.run(&format!("{a}-load={l}"))
                .and_then(|r| r.text("run.outcome"))
                .is_ok_and(|o| o == "completed")
        })
    };
    let (acc_ok, dcqcn_ok, timely_ok) = (completed("acc"), completed("dcqcn"), completed("timely"));
    let said = |ok: bool| if ok { "completed" } else { "stalled" };
    claims.push(Claim::direction(
        "no deadlock with ACC where DCQCN and TIMELY deadlocked",
        "DCQCN and TIMELY deadlocked",
        format!(
            "ACC {}, DCQCN {}, TIMELY {} (up-down routing on a fat-tree has no cyclic buffer dependency)",
            said(acc_ok),
            said(dcqcn_ok),
            said(timely_ok)
        ),
        acc_ok && !dcqcn_ok && !timely_ok,
    ));

    // The ns3 profile beside the default.
    let ns3 = runs.job("websearch-ns3")?;
    let mut t = Table::new(&[
        "load",
        "algorithm",
        "profile",
        ">done",
        ">mean FCT (rx, us)",
        ">mean slowdown",
        ">p99 slowdown",
        "><10KB p99",
        ">mean FCT (sender, us)",
        ">mean sender slowdown (ns-3 ideal)",
        ">p99 sender slowdown",
        ">PFC pauses",
        ">CNPs",
    ]);
    for load in ["0.3", "0.5"] {
        for (a, label) in ALGORITHMS {
            for (job, profile) in [(&ws, "default"), (&ns3, "ns3")] {
                let r = job.run(&format!("{a}-load={load}"))?;
                t.row(profile_row(r, vec![load.into(), label.into(), profile.into()])?);
            }
        }
    }
    blocks.push(("profiles".into(), t.render()));
    let ab = runs.job("dcqcn-ablation")?;
    let mut t = Table::new(&[
        "DCQCN, load 0.3",
        ">done",
        ">mean FCT (rx, us)",
        ">mean slowdown",
        ">p99 slowdown",
        "><10KB p99",
        ">mean FCT (sender, us)",
        ">mean sender slowdown (ns-3 ideal)",
        ">p99 sender slowdown",
        ">PFC pauses",
        ">CNPs",
    ]);
    for v in ["default", "feedback_data", "cnp_flag", "cut_timer", "ns3"] {
        t.row(profile_row(ab.run(v)?, vec![v.into()])?);
    }
    blocks.push(("ablation".into(), t.render()));
    Ok(Generated { blocks, claims })
}

/// The columns of the profile tables after the leading `cells`.
fn profile_row(r: &Run, mut cells: Vec<String>) -> Result<Vec<String>, String> {
    let b = r.csv("buckets.csv")?;
    cells.extend([
        format!("{}/{}", r.num("flows.completed")?, r.num("flows.count")?),
        us(r.num("flows.fct_mean_ns")?, 1),
        f(r.num("flows.slowdown_mean")?, 2),
        f(r.num("flows.slowdown_p99")?, 2),
        f(b.num(b.find("bucket", "<10KB")?, "slowdown_p99")?, 2),
        us(r.num("flows.sender_fct_mean_ns")?, 1),
        f(r.num("flows.sender_slowdown_mean")?, 2),
        f(r.num("flows.sender_slowdown_p99")?, 2),
        int(r.num("fabric.pause_frames")?),
        int(r.num("transport.cnps")?),
    ]);
    Ok(cells)
}
