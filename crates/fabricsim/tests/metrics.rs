//! Slowdown per flow-size bucket (`buckets.csv`, `summary.json`), the per-run
//! `report.html` and the slowdown part of the multi-run report, on the quickstart
//! scenario (27 flows from 4 KB to 2 MB, rates and queues recorded).

use fabricsim::analysis::metrics::quantile;
use fabricsim::analysis::metrics::{self, SizeBuckets, BUCKETS_CSV_HEADER};
use fabricsim::base::charts::{check_well_formed, Section};
use fabricsim::run::runner::{build_all, run, RunOptions};
use fabricsim::{load_file, load_str};
use std::path::{Path, PathBuf};

fn scenarios_dir() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../scenarios"))
}

fn run_quickstart(out: &Path) -> Vec<fabricsim::run::runner::RunResult> {
    let loaded = load_file(&scenarios_dir().join("quickstart.toml"), &[]).unwrap();
    let opts = RunOptions {
        out: Some(out.to_path_buf()),
        seed: None,
        threads: 1,
        threads_per_run: 1,
    };
    run(&loaded, &opts, &|_, _| {}).unwrap()
}

/// Quickstart with two variants (DCQCN and no congestion control).
fn run_two_variants(out: &Path) -> Vec<fabricsim::run::runner::RunResult> {
    let src = std::fs::read_to_string(scenarios_dir().join("quickstart.toml")).unwrap();
    let src = format!(
        "{src}\n[[variants]]\nname = \"dcqcn\"\n\n[[variants]]\nname = \"no_cc\"\nset = {{ \"cc.algorithm\" = \"none\" }}\n"
    );
    let loaded = load_str(&src, "quickstart-variants.toml", &scenarios_dir(), &[]).unwrap();
    let opts = RunOptions {
        out: Some(out.to_path_buf()),
        seed: None,
        threads: 2,
        threads_per_run: 1,
    };
    run(&loaded, &opts, &|_, _| {}).unwrap()
}

/// flows.csv as (size, slowdown) of finished flows.
fn flows_from_csv(dir: &Path) -> Vec<(u64, f64)> {
    let flows = std::fs::read_to_string(dir.join("flows.csv")).unwrap();
    flows
        .lines()
        .skip(1)
        .filter_map(|l| {
            let c: Vec<&str> = l.split(',').collect();
            let slow = c[8];
            (!slow.is_empty()).then(|| (c[3].parse().unwrap(), slow.parse().unwrap()))
        })
        .collect()
}

struct Row {
    bucket: String,
    flows: usize,
    q: Option<[f64; 5]>,
}

fn read_buckets(dir: &Path) -> Vec<Row> {
    let csv = std::fs::read_to_string(dir.join("buckets.csv")).unwrap();
    let mut lines = csv.lines();
    assert_eq!(lines.next(), Some(BUCKETS_CSV_HEADER));
    assert_eq!(
        BUCKETS_CSV_HEADER,
        "bucket,flows,slowdown_p50,slowdown_p95,slowdown_p99,fct_p50_ns,fct_p99_ns,slowdown_mean,fct_mean_ns"
    );
    lines
        .map(|l| {
            let c: Vec<&str> = l.split(',').collect();
            assert_eq!(c.len(), 9, "{l}");
            let flows: usize = c[1].parse().unwrap();
            let q = if flows == 0 {
                assert!(c[2..].iter().all(|x| x.is_empty()), "empty bucket: {l}");
                None
            } else {
                let v: Vec<f64> = c[2..].iter().map(|x| x.parse().unwrap()).collect();
                Some([v[0], v[1], v[2], v[3], v[4]])
            };
            Row {
                bucket: c[0].to_string(),
                flows,
                q,
            }
        })
        .collect()
}

#[test]
fn buckets_csv_partitions_the_finished_flows_with_ordered_quantiles() {
    let d = tempfile::tempdir().unwrap();
    let res = run_quickstart(d.path());
    assert_eq!(res.len(), 1);
    let s = &res[0].summary;
    assert_eq!(s.flows_completed, 27);
    let rows = read_buckets(d.path());
    let names: Vec<&str> = rows.iter().map(|r| r.bucket.as_str()).collect();
    assert_eq!(
        names,
        ["<10KB", "10KB-100KB", "100KB-1MB", ">=1MB", "all"],
        "one row per bucket, then all"
    );
    let per_bucket: usize = rows[..4].iter().map(|r| r.flows).sum();
    assert_eq!(per_bucket, s.flows_completed);
    assert_eq!(rows[4].flows, s.flows_completed);

    // Counts and quantiles agree with flows.csv, bucketed by hand.
    let flows = flows_from_csv(d.path());
    assert_eq!(flows.len(), 27);
    let edges = [10_000u64, 100_000, 1_000_000];
    for (i, row) in rows[..4].iter().enumerate() {
        let lo = if i == 0 { 0 } else { edges[i - 1] };
        let hi = edges.get(i).copied().unwrap_or(u64::MAX);
        let mut slow: Vec<f64> = flows
            .iter()
            .filter(|(sz, _)| (lo..hi).contains(sz))
            .map(|f| f.1)
            .collect();
        slow.sort_by(f64::total_cmp);
        assert_eq!(row.flows, slow.len(), "bucket {}", row.bucket);
        if let Some(q) = row.q {
            assert!((q[0] - quantile(&slow, 0.5)).abs() < 1e-5, "{}", row.bucket);
            assert!(
                (q[2] - quantile(&slow, 0.99)).abs() < 1e-5,
                "{}",
                row.bucket
            );
        }
    }
    // The workload has 4 KB, 64 KB and 256 KB flows and 24 flows of 1 MB or more.
    assert_eq!(
        rows.iter().map(|r| r.flows).collect::<Vec<_>>(),
        [1, 1, 1, 24, 27]
    );
    for r in &rows {
        let q = r.q.expect("every quickstart bucket has flows");
        assert!(q[0] <= q[1] && q[1] <= q[2], "{}: {q:?}", r.bucket);
        assert!(q[0] >= 1.0, "{}: slowdown below 1: {q:?}", r.bucket);
        assert!(q[3] <= q[4] && q[3] > 0.0, "{}: {q:?}", r.bucket);
    }
    // `all` matches the summary's headline numbers.
    let all = rows[4].q.unwrap();
    assert!((all[0] - s.slowdown_p50).abs() < 1e-5);
    assert!((all[1] - s.slowdown_p95).abs() < 1e-5);
    assert!((all[2] - s.slowdown_p99).abs() < 1e-5);
    assert!((all[3] - s.fct_p50_ns).abs() < 1e-2);
}

#[test]
fn summary_json_has_p95_and_per_bucket_quantiles() {
    let d = tempfile::tempdir().unwrap();
    run_quickstart(d.path());
    let text = std::fs::read_to_string(d.path().join("summary.json")).unwrap();
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    let f = &v["flows"];
    let (p50, p95, p99) = (
        f["slowdown_p50"].as_f64().unwrap(),
        f["slowdown_p95"].as_f64().unwrap(),
        f["slowdown_p99"].as_f64().unwrap(),
    );
    assert!(1.0 <= p50 && p50 <= p95 && p95 <= p99, "{p50} {p95} {p99}");
    // Fields keep their names inside their sections.
    for (section, k) in [
        ("flows", "fct_p50_ns"),
        ("flows", "fct_p99_ns"),
        ("flows", "slowdown_max"),
        ("fabric", "max_queue_bytes"),
        ("fabric", "paused_ns"),
    ] {
        assert!(v[section].get(k).is_some(), "{section}.{k}");
    }
    let b = f["buckets"].as_array().unwrap();
    assert_eq!(b.len(), 4);
    let labels: Vec<&str> = b.iter().map(|x| x["bucket"].as_str().unwrap()).collect();
    assert_eq!(labels, SizeBuckets::default().labels());
    let n: u64 = b.iter().map(|x| x["flows"].as_u64().unwrap()).sum();
    assert_eq!(n, f["completed"].as_u64().unwrap());
    for x in b {
        let (a, c) = (
            x["slowdown_p50"].as_f64().unwrap(),
            x["slowdown_p99"].as_f64().unwrap(),
        );
        assert!(1.0 <= a && a <= c, "{x}");
    }
    assert!(
        !text.contains("slowdown_cdf") && !text.contains("rate_series"),
        "the series stay out of the JSON"
    );
}

#[test]
fn the_run_report_is_well_formed_with_one_figure_per_chart() {
    let d = tempfile::tempdir().unwrap();
    run_quickstart(d.path());
    for f in ["rates.csv", "queues.csv"] {
        let n = std::fs::read_to_string(d.path().join(f))
            .unwrap()
            .lines()
            .count();
        assert!(n > 10, "{f} has data");
    }
    let html = std::fs::read_to_string(d.path().join("report.html")).unwrap();
    assert!(html.starts_with("<!DOCTYPE html>"));
    check_well_formed(&html).expect("well-formed HTML");
    assert!(!html.contains("<script"));
    // Slowdown per bucket, CDF, rate vs time, queue vs time, PFC pause timeline (each a
    // figure; more than six flows or ports are drawn as panels, one <svg> each).
    assert_eq!(html.matches("<figure").count(), 5);
    assert!(html.matches("<svg").count() >= 4);
    assert_eq!(html.matches("<svg").count(), html.matches("</svg>").count());
    for t in [
        "CDF of slowdown",
        "Slowdown per flow size",
        "Sending rate per flow",
        "Switch egress queue",
        "&lt;10KB",
        "&gt;=1MB",
    ] {
        assert!(html.contains(t), "{t}");
    }
    assert!(html.len() < 3_000_000, "report is {} bytes", html.len());
}

#[test]
fn chart_series_are_capped_chosen_by_rule_and_deterministic() {
    let loaded = load_file(&scenarios_dir().join("quickstart.toml"), &[]).unwrap();
    let (_, mut sim) = build_all(&loaded, None).unwrap().pop().unwrap();
    sim.run(&mut |_| {});
    let rates = metrics::rate_series(&sim, 16);
    assert!(!rates.is_empty() && rates.len() <= 16);
    assert_eq!(rates, metrics::rate_series(&sim, 16));
    // The chosen flows have the most samples: none left out has more than any chosen.
    let mut count = std::collections::BTreeMap::<u32, usize>::new();
    for r in &sim.record.rate_samples {
        *count.entry(r.flow).or_default() += 1;
    }
    let chosen: Vec<u32> = rates
        .iter()
        .map(|(n, _)| n.split(' ').nth(1).unwrap().parse().unwrap())
        .collect();
    assert!(chosen.windows(2).all(|w| w[0] < w[1]), "flow-id order");
    let min_chosen = chosen.iter().map(|f| count[f]).min().unwrap();
    let max_left = count
        .iter()
        .filter(|(f, _)| !chosen.contains(f))
        .map(|(_, &n)| n)
        .max()
        .unwrap_or(0);
    assert!(max_left <= min_chosen);
    for (_, pts) in &rates {
        assert!(pts.len() <= metrics::MAX_SERIES_POINTS);
        assert!(pts.windows(2).all(|w| w[0].0 < w[1].0));
    }
    let queues = metrics::queue_series(&sim, 8);
    assert!(!queues.is_empty() && queues.len() <= 8);
    let maxes: Vec<f64> = queues
        .iter()
        .map(|(_, p)| p.iter().map(|q| q.1).fold(0.0, f64::max))
        .collect();
    assert!(maxes.windows(2).all(|w| w[0] >= w[1]), "{maxes:?}");
    // The largest sampled queue anywhere is the first series' peak.
    let top = sim
        .record
        .queue_samples
        .iter()
        .map(|q| q.bytes)
        .max()
        .unwrap();
    assert_eq!(maxes[0], top as f64);
    for (_, pts) in &queues {
        assert!(pts.len() <= metrics::MAX_SERIES_POINTS);
        assert!(pts.windows(2).all(|w| w[0].0 < w[1].0));
    }
}

#[test]
fn variants_get_per_run_reports_and_slowdown_comparison() {
    let d = tempfile::tempdir().unwrap();
    let res = run_two_variants(d.path());
    assert_eq!(res.len(), 2);
    for v in ["dcqcn", "no_cc"] {
        let dir = d.path().join(v);
        let rows = read_buckets(&dir);
        assert_eq!(rows.len(), 5);
        let html = std::fs::read_to_string(dir.join("report.html")).unwrap();
        check_well_formed(&html).unwrap();
        assert_eq!(html.matches("<figure").count(), 5, "{v}");
    }
    let html = std::fs::read_to_string(d.path().join("report.html")).unwrap();
    check_well_formed(&html).expect("well-formed HTML");
    // The headline (slowdown p99 per size, the variants overlaid), FCT p99 and goodput,
    // slowdown p50 and p99 per bucket, CDF overlay, and the overlays of the runs' rates
    // and longest queues (quickstart samples both).
    assert_eq!(html.matches("<figure").count(), 8);
    assert_eq!(html.matches("<svg").count(), html.matches("</svg>").count());
    for t in [
        "Slowdown p50 per flow size",
        "Slowdown p99 per flow size",
        "CDF of slowdown per run",
        "PFC and switch queues per run",
        "Longest switch queue of each run",
        "Sending rate per flow, every run",
        "&lt;10KB p99",
    ] {
        assert!(html.contains(t), "{t}");
    }
    let cmp = std::fs::read_to_string(d.path().join("comparison.csv")).unwrap();
    let mut lines = cmp.lines();
    let header = lines.next().unwrap();
    assert!(header.starts_with("variant,outcome,flows,"), "{header}");
    assert!(
        header.ends_with(",jct_lower_bound_ns,slowdown_p95,slowdown_p99_lt10KB,slowdown_p99_10KB_100KB,slowdown_p99_100KB_1MB,slowdown_p99_ge1MB,mean_queue_bytes,tcd_ce_marks,tcd_ue_marks,time_to_cut_ns,time_to_fair_ns,retx_bytes,nacks,out_of_order_packets,reorder_max_bytes"),
        "{header}"
    );
    let ncols = header.split(',').count();
    let ge1mb = header
        .split(',')
        .position(|h| h == "slowdown_p99_ge1MB")
        .unwrap();
    for (l, r) in lines.zip(&res) {
        let c: Vec<&str> = l.split(',').collect();
        assert_eq!(c.len(), ncols, "{l}");
        let p99_ge1mb: f64 = c[ge1mb].parse().unwrap();
        let expect = r.summary.slowdown_buckets[3].slowdown_p99;
        assert!((p99_ge1mb - expect).abs() < 1e-5);
    }
}

#[test]
fn the_cdf_overlay_is_skipped_above_twelve_runs() {
    let d = tempfile::tempdir().unwrap();
    let base = run_quickstart(d.path()).pop().unwrap().summary;
    let runs = |n: usize| -> Vec<fabricsim::output::Summary> {
        (0..n)
            .map(|i| {
                let mut s = base.clone();
                s.variant = format!("run{i}");
                s
            })
            .collect()
    };
    let lines = |secs: &[Section]| -> Vec<usize> {
        secs.iter()
            .filter_map(|s| match s {
                Section::Line(c) => Some(c.series.len()),
                _ => None,
            })
            .collect()
    };
    let bars = |secs: &[Section]| secs.iter().filter(|s| matches!(s, Section::Bar(_))).count();
    use fabricsim::output::sweep_report::slowdown_sections;
    // More runs than a panel holds: no per-run bars; the p50 per size as a line per
    // variant (one here, the runs its replicates), then the CDF overlay up to twelve.
    let twelve = slowdown_sections(&runs(12), &[], true);
    assert_eq!(lines(&twelve), [1, 12]);
    assert_eq!(bars(&twelve), 0);
    let thirteen = slowdown_sections(&runs(13), &[], true);
    assert_eq!(lines(&thirteen), [1]);
    assert_eq!(bars(&thirteen), 0);
    // Runs that fit a panel: the p50 and p99 bars and the CDF overlay.
    let three = slowdown_sections(&runs(3), &[], true);
    assert_eq!((lines(&three), bars(&three)), (vec![3], 2));
    // Without charts (collective jobs): the table only.
    let table_only = slowdown_sections(&runs(3), &[], false);
    assert!(table_only
        .iter()
        .all(|s| !matches!(s, Section::Bar(_) | Section::Line(_))));
    assert!(table_only.iter().any(|s| matches!(s, Section::Table(_))));
}

#[test]
fn the_run_outputs_are_byte_identical_across_runs() {
    let a = tempfile::tempdir().unwrap();
    let b = tempfile::tempdir().unwrap();
    run_quickstart(a.path());
    run_quickstart(b.path());
    for f in ["buckets.csv", "report.html"] {
        let x = std::fs::read(a.path().join(f)).unwrap();
        let y = std::fs::read(b.path().join(f)).unwrap();
        assert!(x == y, "{f} differs between two runs");
    }
}

/// A label that names its unit: "JCT (ms)", "fraction of flows (0–1)".
fn has_unit(label: &str) -> bool {
    label.contains(" (") && label.ends_with(')')
}

/// Columns that name things rather than measure them (no unit to give).
const NAME_COLUMNS: &[&str] = &["run", "variant", "port", "ratio"];

/// Checks every chart and table of a report: value axes (and both axes of line charts)
/// with units, a note under every chart, bar charts from zero, the nearest-rank note
/// under every chart of percentiles, and units in every table header that measures
/// something. Returns the number of charts.
fn check_report(secs: &[Section], sweep_axes: &[String]) -> usize {
    use fabricsim::base::charts::{bar_plan, PERCENTILE_NOTE};
    let percentiles = |s: &str| ["p50", "p95", "p99"].iter().any(|p| s.contains(p));
    let mut charts = 0;
    for s in secs {
        match s {
            Section::Bar(c) => {
                charts += 1;
                assert!(has_unit(&c.y_label), "{}: {}", c.title, c.y_label);
                assert!(!c.note.is_empty(), "{}", c.title);
                assert_eq!(bar_plan(c).y.start, 0.0, "{}", c.title);
                if percentiles(&c.title) || percentiles(&c.y_label) {
                    assert!(c.note.contains(PERCENTILE_NOTE), "{}", c.title);
                }
            }
            Section::Line(c) => {
                charts += 1;
                assert!(has_unit(&c.x_label), "{}: {}", c.title, c.x_label);
                assert!(has_unit(&c.y_label), "{}: {}", c.title, c.y_label);
                assert!(!c.note.is_empty(), "{}", c.title);
                if c.title.contains("CDF") {
                    assert!(c.note.contains(metrics::CDF_NOTE), "{}", c.title);
                }
            }
            Section::Table(t) => {
                for h in &t.header {
                    assert!(
                        has_unit(h) || NAME_COLUMNS.contains(&h.as_str()) || sweep_axes.contains(h),
                        "{}: column {h:?} has no unit",
                        t.title
                    );
                }
            }
            _ => {}
        }
    }
    charts
}

#[test]
fn every_chart_and_table_of_the_reports_has_units_and_notes() {
    let loaded = load_file(&scenarios_dir().join("quickstart.toml"), &[]).unwrap();
    let (_, mut sim) = build_all(&loaded, None).unwrap().pop().unwrap();
    sim.run(&mut |_| {});
    let d = tempfile::tempdir().unwrap();
    let res = run_two_variants(d.path());
    let summary = &res[0].summary;
    assert_eq!(
        check_report(
            &fabricsim::output::run_report::run_report_sections(&sim, summary),
            &[]
        ),
        5
    );
    let rows: Vec<_> = res.iter().map(|r| r.summary.clone()).collect();
    let secs =
        fabricsim::output::sweep_report::report_sections("quickstart", &rows, &[], false, None);
    assert_eq!(check_report(&secs, &[]), 8);
}

#[test]
fn jct_charts_draw_each_runs_lower_bound_under_its_bars() {
    use fabricsim::base::charts::Bound;
    let sweep = ["sweep[3].values=[\"1MiB\"]".to_string()];
    let loaded = load_file(&scenarios_dir().join("gse-vs-roce-quick.toml"), &sweep).unwrap();
    let opts = RunOptions {
        out: None,
        seed: None,
        threads: 2,
        threads_per_run: 1,
    };
    let rows: Vec<_> = run(&loaded, &opts, &|_, _| {})
        .unwrap()
        .into_iter()
        .map(|r| r.summary)
        .collect();
    assert!(rows.iter().all(|r| r.jobs > 0));
    let axes: Vec<String> = rows[0].params.keys().cloned().collect();
    let secs = fabricsim::output::sweep_report::report_sections(
        "gse-vs-roce-quick",
        &rows,
        &[],
        false,
        None,
    );
    assert!(check_report(&secs, &axes) > 0);
    // The per-point charts of several points are folded under one line.
    let unfolded: Vec<&Section> = secs
        .iter()
        .flat_map(|s| match s {
            Section::Details(_, inner) => inner.iter().collect(),
            s => vec![s],
        })
        .collect();
    let jct: Vec<_> = unfolded
        .into_iter()
        .filter_map(|s| match s {
            Section::Bar(c) if c.y_label.contains("JCT") => Some(c),
            _ => None,
        })
        .collect();
    assert!(!jct.is_empty());
    let bounds: Vec<f64> = rows.iter().map(|r| r.jct_lower_bound_ns / 1e6).collect();
    for c in jct {
        let Some(Bound { values, .. }) = &c.bound else {
            panic!("{}: no bound", c.title);
        };
        assert_eq!(values.len(), c.series.len());
        for (vals, (_, bars)) in values.iter().zip(&c.series) {
            for (b, v) in vals.iter().zip(bars) {
                let (Some(b), Some(v)) = (b, v) else { continue };
                // The bound is some run's bound, and no job beats its bound.
                assert!(bounds.iter().any(|x| (x - b).abs() < 1e-12), "{b}");
                assert!(
                    *b > 0.0 && *v >= *b,
                    "{}: JCT {v} ms under its bound {b} ms",
                    c.title
                );
            }
        }
    }
    // A run's own report: one bar per job, each with its job's bound.
    let (_, mut sim) = build_all(&loaded, None).unwrap().pop().unwrap();
    let outcome = sim.run(&mut |_| {});
    let summary = fabricsim::output::summarize(&sim, "v", &outcome, 0.0);
    let secs = fabricsim::output::run_report::run_report_sections(&sim, &summary);
    check_report(&secs, &[]);
    let c = secs
        .iter()
        .find_map(|s| match s {
            Section::Bar(c) if c.y_label == "JCT (ms)" => Some(c),
            _ => None,
        })
        .expect("JCT chart in a run with jobs");
    let b = &c.bound.as_ref().expect("bound").values[0];
    assert_eq!(
        b.len(),
        sim.nics
            .jobs
            .len()
            .min(fabricsim::output::run_report::MAX_JCT_JOBS)
    );
    for (j, v) in b.iter().enumerate() {
        assert_eq!(*v, Some(sim.job_lower_bound(j) as f64 / 1e9));
    }
}
