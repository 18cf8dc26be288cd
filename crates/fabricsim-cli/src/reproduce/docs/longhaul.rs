//! `docs/results/longhaul.md`: document 001 (MegaScaleOut), NCCL windows, DR congestion,
//! training across campuses, the 7B PP job and the thousand-GPU DP test, beside
//! `scenarios/longhaul-*.toml`.

use crate::reproduce::claims::Claim;
use crate::reproduce::data::Run;
use crate::reproduce::table::{f, int, mb, ms, pct, Table};
use crate::reproduce::{Doc, Generated, Job, Made, Runs};

pub const DOC: Doc = Doc {
    name: "longhaul",
    file: "docs/results/longhaul.md",
    source: "001",
    made: Made::Reproduce {
        fast: true,
        jobs: &[
            Job::plain("nccl", "scenarios/longhaul-nccl.toml"),
            Job::plain("cnp", "scenarios/longhaul-cnp.toml"),
            Job::plain("training", "scenarios/longhaul-training.toml"),
            Job::plain("pp-tuning", "scenarios/longhaul-pp-tuning.toml"),
            Job {
                name: "pp-tuning-megatron",
                scenario: "scenarios/longhaul-pp-tuning.toml",
                set: &["workload[0].activation=4MiB"],
                seed: None,
            },
            Job {
                name: "pp-5tbps-megatron",
                scenario: "scenarios/longhaul-pp-tuning.toml",
                set: &PP_5TBPS_MEGATRON,
                seed: None,
            },
            Job {
                name: "pp-5tbps-full",
                scenario: "scenarios/longhaul-pp-tuning.toml",
                set: &PP_5TBPS_FULL,
                seed: None,
            },
            Job::plain("dp-scale", "scenarios/longhaul-dp-scale.toml"),
        ],
        generate,
    },
};

/// The 7B PP job at the document's bandwidth for a thousand GPUs (5 Tbps over about 500
/// GPU pairs: 10 Gbit/s a pair): its 4 pairs share one 40 Gbit/s DCI link each way.
macro_rules! at_5tbps {
    ($activation:literal) => {
        [
            "topology.dci_capacity=40Gbps",
            "topology.dci_link_rate=40Gbps",
            "topology.dr_link_rate=400Gbps",
            concat!("workload[0].activation=", $activation),
        ]
    };
}

/// Megatron-LM's message per pipeline boundary and microbatch, b x s x h x 2 bytes
/// (Narayanan et al., SC 2021), split over the stage's t tensor-parallel ranks, each of
/// which sends its share over its own NIC (the scatter/gather optimization of the same
/// paper; with sequence parallelism, Korthikanti et al. 2022, the tensor is split so
/// already): a 7B model of LLaMA-2-7B's shape (hidden 4096), 4096-token samples, b = 1,
/// t = 8 (the 8-GPU stage the scenario's compute time is for): 32 MiB / 8.
const PP_5TBPS_MEGATRON: [&str; 4] = at_5tbps!("4MiB");
/// The same with the whole b x s x h tensor per pair (the scenario's own reconstruction).
const PP_5TBPS_FULL: [&str; 4] = at_5tbps!("32MB");

/// A training run's first job's first iteration (`training.csv`): (time, one campus,
/// loss, model loss, alpha_LB, k).
fn iteration(r: &Run) -> Result<[f64; 6], String> {
    let t = r.csv("training.csv")?;
    Ok([
        t.num(0, "time_ns")?,
        t.num(0, "one_campus_ns")?,
        t.num(0, "loss")?,
        t.num(0, "model_loss")?,
        t.num(0, "alpha_lb")?,
        t.num(0, "k")?,
    ])
}

/// Ports dropping over DCI ports, per direction: "2 of 2 each way", "0 of 4".
fn ports_dropping(r: &Run) -> Result<String, String> {
    let mut drop = Vec::new();
    let mut ports = 0.0;
    for i in 0..2 {
        drop.push(r.num(&format!("long_haul.directions.{i}.ports_dropping"))?);
        ports = r.num(&format!("long_haul.directions.{i}.ports"))?;
    }
    Ok(if drop[0] == drop[1] && drop[0] > 0.0 {
        format!("{} of {} each way", drop[0], ports)
    } else {
        format!("{} of {}", drop[0] + drop[1], 2.0 * ports)
    })
}

fn generate(runs: &Runs) -> Result<Generated, String> {
    let mut claims = Vec::new();
    let mut blocks = Vec::new();

    // NCCL windows.
    let nccl = runs.job("nccl")?;
    let jct = |v: &str, c: &str, s: &str| -> Result<f64, String> {
        nccl.run(&format!("{v}-collective={c}-size={s}"))?
            .num("jobs.jct_max_ns")
    };
    // The round trip the extra time is counted in: a full frame out and its ACK back
    // over 120 km, read from the run (`training.csv` of pp-tuning holds the same path).
    let rtt = runs
        .job("pp-tuning")?
        .run("rdma")?
        .csv("training.csv")?
        .num(0, "rtt_ns")?;
    let mut t = Table::new(&[
        "collective",
        "size",
        ">no window (ms)",
        ">NCCL defaults (ms)",
        ">tuned (ms)",
        ">defaults: extra RTTs",
        ">defaults / tuned",
    ]);
    let sizes = ["1MiB", "4MiB", "16MiB", "64MiB", "256MiB", "512MiB", "1GiB"];
    let mut extra = std::collections::BTreeMap::new();
    for c in ["p2p", "ring_allreduce"] {
        for s in sizes {
            let (r, n, tu) = (jct("rdma", c, s)?, jct("nccl", c, s)?, jct("tuned", c, s)?);
            extra.insert((c, s), ((n - r) / rtt, n / tu));
            t.row(vec![
                c.into(),
                s.into(),
                ms(r, 2),
                ms(n, 2),
                ms(tu, 2),
                f((n - r) / rtt, 1),
                format!("{}x", f(n / tu, 1)),
            ]);
        }
    }
    blocks.push(("nccl".into(), t.render()));
    blocks.push((
        "rtt".into(),
        format!("The base round trip over 120 km (a full frame and its ACK): {} ms.\n", f(rtt / 1e6, 3)),
    ));
    let first = sizes
        .iter()
        .find(|s| extra[&("p2p", **s)].0 >= 0.5)
        .copied()
        .unwrap_or("none");
    claims.push(Claim::direction(
        "with NCCL's defaults any message over 1 MB costs at least one extra RTT",
        "> 1 MB",
        format!(
            "first extra RTT at {first} (p2p; {} at 4 MiB)",
            f(extra[&("p2p", "4MiB")].0, 1)
        ),
        extra[&("p2p", "4MiB")].0 >= 0.5,
    ));
    let e256 = extra[&("p2p", "256MiB")].0;
    claims.push(Claim::bound("with NCCL's defaults >= 256 MB costs over 100 extra RTTs", "> 100 RTTs", 100.0, false, (e256, format!("{} RTTs at 256 MiB (p2p)", f(e256, 0))), (20.0, "20 RTTs")));
    for (s, doc, x) in [("16MiB", "7x", 7.0), ("256MiB", "20x", 20.0)] {
        let g = extra[&("p2p", s)].1;
        claims.push(Claim::figure(&format!("tuning channels, chunk and buffer cuts {} latency by", s.replace("MiB", " MB")), doc, x, (g, format!("{}x (p2p, {s})", f(g, 1))), 0.10, 0.30));
    }

    // DR congestion and CNPs.
    let cnp = runs.job("cnp")?;
    let mut t = Table::new(&[
        "cnp",
        ">DR drops",
        "DCI ports dropping",
        "DR DCI queue max (MB)",
        ">DCI imbalance (max/mean)",
        ">goodput (Gbit/s)",
        ">FCT p99 (ms)",
        ">DR CNPs",
        ">CNPs in all",
    ]);
    for (v, label) in [
        ("none", "none"),
        ("e2e", "e2e"),
        ("dr", "dr (threshold)"),
        ("dr_red", "dr (RED)"),
        ("both", "both"),
    ] {
        let r = cnp.run(v)?;
        let q0 = r.num("long_haul.directions.0.max_queue_bytes")?;
        let q1 = r.num("long_haul.directions.1.max_queue_bytes")?;
        t.row(vec![
            label.into(),
            int(r.num("long_haul.dr_drops")?),
            ports_dropping(r)?,
            format!("{}-{}", mb(q0.min(q1), 1), mb(q0.max(q1), 1)),
            f(r.num("long_haul.dci_imbalance")?, 2),
            f(r.num("flows.goodput_gbps")?, 0),
            ms(r.num("flows.fct_p99_ns")?, 2),
            int(r.num("long_haul.dr_cnps")?),
            int(r.num("transport.cnps")?),
        ]);
    }
    blocks.push(("cnp".into(), t.render()));
    let (none, e2e, dr) = (cnp.run("none")?, cnp.run("e2e")?, cnp.run("dr")?);
    let (dn, de) = (none.num("long_haul.dr_drops")?, e2e.num("long_haul.dr_drops")?);
    claims.push(Claim::direction(
        "end-to-end CNPs over ~100 km do not reduce the DR's drops",
        "no reduction",
        format!("{} drops with e2e CNPs, {} without", int(de), int(dn)),
        de >= 0.9 * dn,
    ));
    claims.push(Claim::direction(
        "CNPs generated by the DR solve long-haul congestion",
        "only DR CNPs solve it",
        format!(
            "{} DR drops, goodput {}x e2e's",
            int(dr.num("long_haul.dr_drops")?),
            f(dr.num("flows.goodput_gbps")? / e2e.num("flows.goodput_gbps")?, 1)
        ),
        dr.num("long_haul.dr_drops")? == 0.0
            && dr.num("flows.goodput_gbps")? > e2e.num("flows.goodput_gbps")?,
    ));

    // Training across campuses.
    let tr = runs.job("training")?;
    let mut t = Table::new(&[
        "parallelism",
        ">km",
        "DCI",
        ">iteration ms",
        ">one campus ms",
        ">loss",
        ">model loss",
        ">alpha_LB",
        ">k",
    ]);
    let mut loss = std::collections::BTreeMap::new();
    for p in ["pp", "dp", "dp_zero3"] {
        for km in ["10", "120", "1000"] {
            for dci in ["400Gbps", "1600Gbps", "3200Gbps"] {
                let it = iteration(tr.run(&format!("{p}-km={km}-dci={dci}"))?)?;
                loss.insert((p, km, dci), it[2]);
                t.row(vec![
                    p.into(),
                    km.into(),
                    dci.into(),
                    ms(it[0], 1),
                    ms(it[1], 1),
                    pct(it[2], 1),
                    pct(it[3], 1),
                    f(it[4], 2),
                    f(it[5], 2),
                ]);
            }
        }
    }
    blocks.push(("training".into(), t.render()));
    let l = |p, km| loss[&(p, km, "3200Gbps")];
    claims.push(Claim::direction(
        "PP loss grows with distance",
        "grows",
        format!(
            "{} / {} / {} at 10 / 120 / 1000 km (3.2 Tbps)",
            pct(l("pp", "10"), 1),
            pct(l("pp", "120"), 1),
            pct(l("pp", "1000"), 1)
        ),
        l("pp", "10") < l("pp", "120") && l("pp", "120") < l("pp", "1000"),
    ));
    claims.push(Claim::direction(
        "DP is insensitive to distance and loses less than PP",
        "insensitive; under half PP's bandwidth",
        format!(
            "DP {} / {} / {}, PP {} at 1000 km (3.2 Tbps)",
            pct(l("dp", "10"), 1),
            pct(l("dp", "120"), 1),
            pct(l("dp", "1000"), 1),
            pct(l("pp", "1000"), 1)
        ),
        l("dp", "1000") < 2.0 * l("dp", "10") && l("dp", "1000") < l("pp", "1000"),
    ));
    let mut z: Vec<f64> = loss
        .iter()
        .filter(|(k, _)| k.0 == "dp_zero3")
        .map(|(_, v)| *v)
        .collect();
    z.sort_by(f64::total_cmp);
    let zmed = z[z.len() / 2];
    claims.push(Claim::bound("DP with ZeRO-3 loses over 10 %", "> 10 %", 0.10, false, (zmed, format!(
            "median {} ({}-{} over the 9 runs)",
            pct(zmed, 1),
            pct(z[0], 1),
            pct(z[z.len() - 1], 1)
        )), (0.05, "5 pts")));

    // PP before and after tuning.
    let pp = runs.job("pp-tuning")?;
    let mut t = Table::new(&["NCCL setting", ">iteration (ms)", ">one campus (ms)", ">loss", ">model loss"]);
    let mut pl = std::collections::BTreeMap::new();
    for (v, label) in [
        ("rdma", "no window (one RDMA write per message)"),
        ("nccl", "defaults (2 channels, 8 x 128 KiB)"),
        ("tuned", "tuned (4 channels, 64 MiB in 16 x 4 MiB)"),
    ] {
        let it = iteration(pp.run(v)?)?;
        pl.insert(v, it[2]);
        t.row(vec![label.into(), ms(it[0], 1), ms(it[1], 1), pct(it[2], 1), pct(it[3], 1)]);
    }
    blocks.push(("pp-tuning".into(), t.render()));
    claims.push(Claim::figure("7B PP job across campuses, NCCL defaults: compute loss", "9 %", 0.09, (pl["nccl"], pct(pl["nccl"], 1)), 0.10, 0.30));
    claims.push(Claim::bound("7B PP job across campuses, NCCL tuned: compute loss under 2 %", "< 2 %", 0.02, true, (pl["tuned"], pct(pl["tuned"], 1)), (0.01, "1 pt")));

    // The same job at the document's bandwidth per pair, two activation sizes.
    let mut t = Table::new(&[
        "activation per pair and microbatch",
        "DCI per pair",
        "NCCL setting",
        ">iteration (ms)",
        ">one campus (ms)",
        ">loss",
        ">model loss",
    ]);
    let mut at5 = std::collections::BTreeMap::new();
    for (job, label, share) in [
        ("pp-tuning-megatron", "4 MiB: the tensor over t = 8 ranks (Megatron)", "800 Gbit/s (3.2 Tbps)"),
        ("pp-5tbps-full", "32 MB: b x s x h x 2 B, the whole tensor", "10 Gbit/s (5 Tbps)"),
        ("pp-5tbps-megatron", "4 MiB: the tensor over t = 8 ranks (Megatron)", "10 Gbit/s (5 Tbps)"),
    ] {
        let j = runs.job(job)?;
        for v in ["rdma", "nccl", "tuned"] {
            let it = iteration(j.run(v)?)?;
            at5.insert((job, v), it[2]);
            t.row(vec![
                label.into(),
                share.into(),
                v.into(),
                ms(it[0], 1),
                ms(it[1], 1),
                pct(it[2], 1),
                pct(it[3], 1),
            ]);
        }
    }
    blocks.push(("pp-5tbps".into(), t.render()));
    let meg: Vec<f64> = ["rdma", "nccl", "tuned"].iter().map(|v| at5[&("pp-5tbps-megatron", *v)]).collect();
    let tuned5 = at5[&("pp-5tbps-megatron", "tuned")];
    claims.push(Claim::bound(
        "a 1k-GPU 7B PP job at 120 km loses <= 2 % with 5 Tbps (10 Gbit/s per GPU pair; Megatron's activation per tensor-parallel rank)",
        "<= 2 % at <= 5 Tbps",
        0.02,
        true,
        (
            tuned5,
            format!(
                "{} tuned ({}-{} over the three NCCL settings)",
                pct(tuned5, 1),
                pct(meg.iter().copied().fold(f64::MAX, f64::min), 1),
                pct(meg.iter().copied().fold(0.0, f64::max), 1)
            ),
        ),
        (0.01, "1 pt"),
    ));

    // Thousand-GPU DP at reduced scale.
    let dp = runs.job("dp-scale")?;
    let near = iteration(dp.run("near")?)?[0];
    let mut t = Table::new(&[
        "run",
        ">iteration (ms)",
        ">over `near`",
        ">model loss",
        ">k",
        "DCI imbalance",
        ">DR drops",
        "DCI ports dropping",
        ">DR CNPs",
    ]);
    let dp_runs = dp_run_names(&dp)?;
    let mut deep = None;
    let mut half_dropping = false;
    let mut shares = Vec::new();
    let mut imb_max: f64 = 0.0;
    for (name, label) in &dp_runs {
        let r = dp.run(name)?;
        let it = iteration(r)?;
        let over = it[0] / near - 1.0;
        let imb = if name == "near" {
            f(r.num("long_haul.dci_imbalance")?, 2)
        } else {
            let (a, b) = (
                r.num("long_haul.directions.0.imbalance")?,
                r.num("long_haul.directions.1.imbalance")?,
            );
            imb_max = imb_max.max(a).max(b);
            format!("{} / {}", f(a, 2), f(b, 2))
        };
        if name == "e2e" {
            deep = Some((over, it[3]));
        }
        if name != "near" {
            let mut dropping = 0.0;
            let mut ports = 0.0;
            for i in 0..2 {
                dropping += r.num(&format!("long_haul.directions.{i}.ports_dropping"))?;
                ports += r.num(&format!("long_haul.directions.{i}.ports"))?;
            }
            let share = dropping / ports.max(1.0);
            half_dropping |= (0.3..=0.7).contains(&share);
            shares.push(format!("{} {}", label, pct(share, 0)));
        }
        t.row(vec![
            label.clone(),
            ms(it[0], 2),
            if name == "near" { "-".into() } else { pct(over, 1) },
            pct(it[3], 1),
            f(it[5], 2),
            imb,
            int(r.num("long_haul.dr_drops")?),
            ports_dropping(r)?,
            int(r.num("long_haul.dr_cnps")?),
        ]);
    }
    blocks.push(("dp-scale".into(), t.render()));
    let (over, model) = deep.ok_or("dp-scale: no e2e run with a deep DR")?;
    claims.push(Claim::bound("thousand-GPU DP: theoretical loss (alpha_LB = 1, no drops) over 2 %", "> 2 %", 0.02, false, (model, format!("model {} with the measured alpha_LB", pct(model, 1))), (0.005, "0.5 pt")));
    claims.push(Claim::figure("thousand-GPU DP: imbalance and congestion drops add about 1 %", "~1 %", 0.01, (over, format!("{} over `near` (deep DR, e2e CNPs)", pct(over, 1))), 0.25, 1.0));
    claims.push(Claim::direction(
        "thousand-GPU DP: nearly half the DR ports dropped",
        "~half",
        format!("DCI ports dropping: {}", shares.join("; ")),
        half_dropping,
    ));
    claims.push(Claim::bound("DR port load imbalance up to 20 %", "<= 20 %", 0.20, true, (imb_max - 1.0, format!("up to {} (max/mean - 1, 64 queue pairs on 8 links)", pct(imb_max - 1.0, 0))), (0.10, "10 pts")));
    Ok(Generated { blocks, claims })
}

/// The dp-scale runs in the scenario's order, with a label naming the DR buffer each ran
/// with (from its effective scenario).
fn dp_run_names(job: &crate::reproduce::data::Job) -> Result<Vec<(String, String)>, String> {
    let mut out = vec![("near".to_string(), "near (200 m)".to_string())];
    for (name, cnp) in [("e2e", "e2e"), ("dr", "dr"), ("e2e-shallow", "e2e"), ("dr-shallow", "dr")] {
        let buf = job.run(name)?.setting("topology.dr_buffer")?;
        let depth = if name.ends_with("shallow") { "shallow" } else { "deep" };
        out.push((name.to_string(), format!("{cnp}, {depth} DR ({buf})")));
    }
    Ok(out)
}
