//! `docs/results/roce-baseline.md`: the RoCEv2 foundation as document 002 describes it
//! deployed (lossless by PFC, ECN then PFC as two-stage control, go-back-N), on an
//! incast (`scenarios/incast-pfc.toml`), two DCQCN flows sharing a port
//! (`scenarios/dcqcn-fairness.toml`) and the quickstart (`scenarios/quickstart.toml`).

use crate::reproduce::claims::Claim;
use crate::reproduce::data::Run;
use crate::reproduce::table::{f, int, mb, ms, pct, Table};
use crate::reproduce::{Doc, Generated, Job, Made, Runs};

pub const DOC: Doc = Doc {
    name: "roce-baseline",
    file: "docs/results/roce-baseline.md",
    source: "002",
    made: Made::Reproduce {
        fast: true,
        jobs: &[
            Job::plain("incast", "scenarios/incast-pfc.toml"),
            Job::plain("dcqcn", "scenarios/dcqcn-fairness.toml"),
            Job::plain("quickstart", "scenarios/quickstart.toml"),
        ],
        generate,
    },
};

/// The incast's variants in the table's order, with what each is.
const INCAST: [(&str, &str); 3] = [
    ("pfc_dcqcn", "PFC and DCQCN"),
    ("pfc_only", "PFC, no congestion control"),
    ("lossy", "DCQCN, no PFC"),
];

/// The DCQCN profiles in the table's order, with what each is.
const DCQCN: [(&str, &str); 3] = [
    ("ns3", "HPCC ns-3 module's Mellanox-style DCQCN, 400/1600 KB marking"),
    ("paper", "SIGCOMM 2015 state machine, 5/200 KB, Pmax 1 %"),
    (
        "paper-scaled",
        "the same, R_AI 100 Mbps and byte counter 25 MB: the 40G values x 2.5",
    ),
];

/// The window over which the DCQCN flows' goodput is averaged, [from, to) in ns: both
/// flows are running and the rates have had 7 ms to settle.
const WINDOW: (f64, f64) = (8e6, 10e6);

/// The last flow's finish time (ns) in `flows.csv`.
fn last_finish(r: &Run) -> Result<f64, String> {
    let t = r.csv("flows.csv")?;
    (0..t.rows.len()).try_fold(0.0f64, |m, i| Ok(m.max(t.num(i, "finish_ns")?)))
}

/// Per flow id, the mean of its goodput samples in [`WINDOW`] (`rates.csv`).
fn window_goodput(r: &Run) -> Result<Vec<f64>, String> {
    let t = r.csv("rates.csv")?;
    let mut sums: Vec<(f64, u32)> = Vec::new();
    for i in 0..t.rows.len() {
        let time = t.num(i, "time_ns")?;
        if !(WINDOW.0..WINDOW.1).contains(&time) {
            continue;
        }
        let id = t.num(i, "flow_id")? as usize;
        if sums.len() <= id {
            sums.resize(id + 1, (0.0, 0));
        }
        sums[id].0 += t.num(i, "goodput_gbps")?;
        sums[id].1 += 1;
    }
    if sums.is_empty() || sums.iter().any(|&(_, n)| n == 0) {
        return Err(format!(
            "job `{}`, run `{}`: no goodput samples of every flow in 8-10 ms",
            r.job, r.name
        ));
    }
    Ok(sums.iter().map(|&(s, n)| s / n as f64).collect())
}

fn generate(runs: &Runs) -> Result<Generated, String> {
    let mut claims = Vec::new();
    let incast = runs.job("incast")?;
    let mut t1 = Table::new(&[
        "variant",
        ">completed",
        ">goodput into host 0 (Gbit/s)",
        ">drops",
        ">PFC XOFF frames",
        ">paused, all ports (ms)",
        ">timeouts",
        ">retransmitted (MB)",
        ">last flow done (ms)",
    ]);
    let mut done = Vec::new();
    for (v, what) in INCAST {
        let r = incast.run(v)?;
        done.push(last_finish(r)?);
        t1.row(vec![
            format!("{v} ({what})"),
            format!(
                "{}/{}",
                int(r.num("flows.completed")?),
                int(r.num("flows.count")?)
            ),
            f(r.num("flows.goodput_gbps")?, 2),
            int(r.num("fabric.drops")?),
            int(r.num("fabric.pause_frames")?),
            ms(r.num("fabric.paused_ns")?, 1),
            int(r.num("transport.timeouts")?),
            mb(r.num("transport.retx_bytes")?, 1),
            ms(done[done.len() - 1], 2),
        ]);
    }
    let (with_dcqcn, pfc_only, lossy) = (
        incast.run("pfc_dcqcn")?,
        incast.run("pfc_only")?,
        incast.run("lossy")?,
    );
    let lossless = with_dcqcn.num("fabric.drops")? == 0.0 && pfc_only.num("fabric.drops")? == 0.0;
    let lossy_retx = lossy.num("transport.retx_bytes")?;
    claims.push(Claim::direction(
        "RoCE needs a lossless fabric: go-back-N resends everything after a loss",
        "lossless required (qualitative)",
        format!(
            "16-to-1 incast: 0 drops with PFC; without it {} drops, {} MB resent, the last flow done {} later",
            int(lossy.num("fabric.drops")?),
            mb(lossy_retx, 1),
            pct(done[2] / done[0] - 1.0, 0)
        ),
        lossless && lossy_retx > 0.0 && done[2] > done[0] && done[2] > done[1],
    ));
    let (p_dcqcn, p_only) = (
        with_dcqcn.num("fabric.pause_frames")?,
        pfc_only.num("fabric.pause_frames")?,
    );
    let (t_dcqcn, t_only) = (
        with_dcqcn.num("fabric.paused_ns")?,
        pfc_only.num("fabric.paused_ns")?,
    );
    claims.push(Claim::direction(
        "two-stage control: ECN makes the senders slow down first, PFC pauses only if the queue still grows",
        "ECN before PFC (qualitative)",
        format!(
            "paused time {} ms with DCQCN against {} ms with PFC alone ({} against {} XOFF frames)",
            ms(t_dcqcn, 1),
            ms(t_only, 1),
            int(p_dcqcn),
            int(p_only)
        ),
        t_dcqcn < t_only,
    ));
    let dcqcn = runs.job("dcqcn")?;
    let mut t2 = Table::new(&[
        "variant",
        ">flow 0 share, 8-10 ms",
        ">total goodput, 8-10 ms (Gbit/s)",
        ">both finished (ms)",
    ]);
    for (v, what) in DCQCN {
        let r = dcqcn.run(v)?;
        let g = window_goodput(r)?;
        let total: f64 = g.iter().sum();
        t2.row(vec![
            format!("{v} ({what})"),
            pct(g[0] / total, 1),
            f(total, 1),
            ms(last_finish(r)?, 1),
        ]);
    }
    let q = runs.job("quickstart")?;
    let q = q.run("quickstart")?;
    let mut t3 = Table::new(&[
        ">flows completed",
        ">simulated (ms)",
        ">drops",
        ">PFC XOFF frames",
        ">FCT p50 (us)",
        ">slowdown p50",
        ">slowdown p99",
        ">packet-hops",
    ]);
    t3.row(vec![
        format!(
            "{}/{}",
            int(q.num("flows.completed")?),
            int(q.num("flows.count")?)
        ),
        ms(q.num("run.sim_end_ns")?, 2),
        int(q.num("fabric.drops")?),
        int(q.num("fabric.pause_frames")?),
        f(q.num("flows.fct_p50_ns")? / 1e3, 0),
        f(q.num("flows.slowdown_p50")?, 2),
        f(q.num("flows.slowdown_p99")?, 2),
        int(q.num("speed.packet_hops")?),
    ]);
    Ok(Generated {
        blocks: vec![
            ("incast".into(), t1.render()),
            ("dcqcn".into(), t2.render()),
            ("quickstart".into(), t3.render()),
        ],
        claims,
    })
}
