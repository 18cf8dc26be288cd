//! `jct.csv`: one row per sweep point of a multi-run scenario with collective jobs: mean
//! and max JCT of every variant, the lower bound, and JCT ratios between variants (the
//! first variant over each other one, or, with the scenario's `baseline`, each other
//! variant over the baseline).
//!
//! With `seeds` > 1 a point is the runs of its replicates: each JCT column is the mean over
//! them, followed by their sample standard deviation (`_std_ns`) and the half-width of the
//! 95 % Student t interval (`_ci95_ns`, see [`crate::analysis::metrics::interval`]); a ratio is
//! the mean of the per-replicate ratios, paired by replicate (replicate k of every
//! variant runs with the same seed), with its own interval (`_ci95`). A `replicates`
//! column after the axes counts them.

use super::cells::{finite, header_of, CsvOut, Fixed};
use super::{Scope, SweepData, Table};
use crate::analysis::metrics::interval::{mean_interval, MeanInterval};
use crate::output::Summary;
use crate::scenario::REPLICATE_AXIS;
use serde::Serialize;
use std::collections::BTreeMap;

/// The table's entry in [`super::TABLES`].
pub const TABLE: Table = Table {
    file: "jct.csv",
    about: "per sweep point (runs with collective jobs): mean and max JCT of every \
            variant, the analytic lower bound, and JCT ratios between variants (first over \
            each other, or each over `baseline`); with `seeds` > 1, means over the \
            replicates with standard deviations and 95 % t-interval half-widths",
    scope: Scope::Sweep {
        present: |d| d.rows.iter().any(|r| r.jobs > 0),
        write,
    },
};

/// One variant's cells; the header prefixes them with `<variant>_`.
#[derive(Default, Serialize)]
struct Jct {
    jct_mean_ns: Option<Fixed<3>>,
    jct_max_ns: Option<Fixed<3>>,
}

/// One variant's cells over replicates; the header prefixes them with `<variant>_`.
#[derive(Default, Serialize)]
struct JctReplicated {
    jct_mean_ns: Option<Fixed<3>>,
    jct_mean_std_ns: Option<Fixed<3>>,
    jct_mean_ci95_ns: Option<Fixed<3>>,
    jct_max_ns: Option<Fixed<3>>,
    jct_max_std_ns: Option<Fixed<3>>,
    jct_max_ci95_ns: Option<Fixed<3>>,
}

#[derive(Default, Serialize)]
struct Bound {
    lower_bound_ns: Fixed<3>,
}

#[derive(Default, Serialize)]
struct Count {
    replicates: usize,
}

/// One variant over another; the header suffixes them with `_<num>_over_<den>`.
#[derive(Default, Serialize)]
struct Ratio {
    ratio_mean: Option<Fixed<4>>,
    ratio_max: Option<Fixed<4>>,
}

/// One variant over another across replicates.
#[derive(Default, Serialize)]
struct RatioReplicated {
    ratio_mean: Option<Fixed<4>>,
    ratio_mean_ci95: Option<Fixed<4>>,
    ratio_max: Option<Fixed<4>>,
    ratio_max_ci95: Option<Fixed<4>>,
}

/// Variant names in first-seen order.
pub(crate) fn variants(rows: &[Summary]) -> Vec<&str> {
    let mut v: Vec<&str> = Vec::new();
    for r in rows {
        if !v.contains(&r.variant_name.as_str()) {
            v.push(&r.variant_name);
        }
    }
    v
}

/// The (numerator, denominator) variants of the ratio columns: each other variant over
/// `baseline`, or the first over each other one.
pub(crate) fn ratio_pairs<'a>(vars: &[&'a str], baseline: Option<&str>) -> Vec<(&'a str, &'a str)> {
    match baseline.and_then(|b| vars.iter().find(|v| **v == b)) {
        Some(&b) => vars.iter().filter(|v| **v != b).map(|&v| (v, b)).collect(),
        None => vars.iter().skip(1).map(|&v| (vars[0], v)).collect(),
    }
}

/// The sweep points: the coordinates on `axes` (the replicate coordinate left out by the
/// caller) in first-seen order, each with its runs per variant in the scenario's order.
pub(crate) type Points<'a> = Vec<(Vec<&'a str>, BTreeMap<&'a str, Vec<&'a Summary>>)>;

pub(crate) fn points<'a>(rows: &'a [Summary], axes: &[String]) -> Points<'a> {
    let mut out: Points<'a> = Vec::new();
    let mut index: BTreeMap<Vec<&str>, usize> = BTreeMap::new();
    for r in rows {
        let k: Vec<&str> = axes
            .iter()
            .map(|a| r.params.get(a).map(String::as_str).unwrap_or(""))
            .collect();
        let i = *index.entry(k.clone()).or_insert_with(|| {
            out.push((k, BTreeMap::new()));
            out.len() - 1
        });
        out[i].1.entry(r.variant_name.as_str()).or_default().push(r);
    }
    out
}

/// `f(a) / f(b)` for each replicate both runs lists have, paired by the replicate
/// coordinate (equal seeds).
pub(crate) fn paired_ratios(a: &[&Summary], b: &[&Summary], f: fn(&Summary) -> f64) -> Vec<f64> {
    a.iter()
        .filter_map(|x| {
            let rep = x.params.get(REPLICATE_AXIS);
            b.iter()
                .find(|y| y.params.get(REPLICATE_AXIS) == rep)
                .map(|y| f(x) / f(y))
        })
        .collect()
}

/// Mean and interval of `f` over runs.
pub(crate) fn over(runs: &[&Summary], f: fn(&Summary) -> f64) -> MeanInterval {
    let xs: Vec<f64> = runs.iter().map(|r| f(r)).collect();
    mean_interval(&xs)
}

fn jct_mean(r: &Summary) -> f64 {
    r.jct_mean_ns
}

fn jct_max(r: &Summary) -> f64 {
    r.jct_max_ns
}

fn write(d: &SweepData, out: &mut CsvOut) -> csv::Result<()> {
    let rows = d.rows;
    let vars = variants(rows);
    // The scenario's axis order; without one, the first run's coordinates.
    let all_axes: Vec<String> = if d.axes.is_empty() {
        rows.first()
            .map(|r| r.params.keys().cloned().collect())
            .unwrap_or_default()
    } else {
        d.axes.to_vec()
    };
    let axes: Vec<String> = all_axes
        .into_iter()
        .filter(|a| !(d.replicated && a == REPLICATE_AXIS))
        .collect();
    let pairs = ratio_pairs(&vars, d.baseline);
    let mut header = axes.clone();
    if d.replicated {
        header.extend(header_of::<Count>()?);
    }
    let jct_names = if d.replicated {
        header_of::<JctReplicated>()?
    } else {
        header_of::<Jct>()?
    };
    for v in &vars {
        header.extend(jct_names.iter().map(|n| format!("{v}_{n}")));
    }
    header.extend(header_of::<Bound>()?);
    let ratio_names = if d.replicated {
        header_of::<RatioReplicated>()?
    } else {
        header_of::<Ratio>()?
    };
    for (a, b) in &pairs {
        header.extend(ratio_names.iter().map(|n| format!("{n}_{a}_over_{b}")));
    }
    out.header(&header)?;
    for (k, p) in points(rows, &axes) {
        let bound = Bound {
            lower_bound_ns: Fixed(
                p.values()
                    .next()
                    .and_then(|runs| runs.first())
                    .map(|r| r.jct_lower_bound_ns)
                    .unwrap_or(f64::NAN),
            ),
        };
        let runs_of = |v: &str| p.get(v).map(Vec::as_slice).unwrap_or(&[]);
        if d.replicated {
            let count = Count {
                replicates: p.values().map(Vec::len).max().unwrap_or(0),
            };
            let jcts: Vec<JctReplicated> = vars
                .iter()
                .map(|v| {
                    let (m, x) = (over(runs_of(v), jct_mean), over(runs_of(v), jct_max));
                    JctReplicated {
                        jct_mean_ns: finite(m.mean),
                        jct_mean_std_ns: finite(m.std),
                        jct_mean_ci95_ns: finite(m.half_width),
                        jct_max_ns: finite(x.mean),
                        jct_max_std_ns: finite(x.std),
                        jct_max_ci95_ns: finite(x.half_width),
                    }
                })
                .collect();
            let ratios: Vec<RatioReplicated> = pairs
                .iter()
                .map(|(a, b)| {
                    let m = mean_interval(&paired_ratios(runs_of(a), runs_of(b), jct_mean));
                    let x = mean_interval(&paired_ratios(runs_of(a), runs_of(b), jct_max));
                    RatioReplicated {
                        ratio_mean: finite(m.mean),
                        ratio_mean_ci95: finite(m.half_width),
                        ratio_max: finite(x.mean),
                        ratio_max_ci95: finite(x.half_width),
                    }
                })
                .collect();
            out.row(&(&k, count, jcts, bound, ratios))?;
        } else {
            // One run per variant and point (the last, should a scenario repeat one).
            let one = |v: &str| runs_of(v).last().copied();
            let jcts: Vec<Jct> = vars
                .iter()
                .map(|v| Jct {
                    jct_mean_ns: one(v).map(|r| Fixed(r.jct_mean_ns)),
                    jct_max_ns: one(v).map(|r| Fixed(r.jct_max_ns)),
                })
                .collect();
            let ratios: Vec<Ratio> = pairs
                .iter()
                .map(|(a, b)| match (one(a), one(b)) {
                    (Some(a), Some(b)) => Ratio {
                        ratio_mean: Some(Fixed(a.jct_mean_ns / b.jct_mean_ns)),
                        ratio_max: Some(Fixed(a.jct_max_ns / b.jct_max_ns)),
                    },
                    _ => Ratio::default(),
                })
                .collect();
            out.row(&(&k, jcts, bound, ratios))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(variant: &str, size: &str, rep: Option<u32>, mean: f64, max: f64) -> Summary {
        let mut s = Summary {
            variant_name: variant.into(),
            jobs: 1,
            jct_mean_ns: mean,
            jct_max_ns: max,
            jct_lower_bound_ns: 10.0,
            ..Summary::default()
        };
        s.params.insert("size".into(), size.into());
        if let Some(r) = rep {
            s.params.insert(REPLICATE_AXIS.into(), r.to_string());
        }
        s
    }

    fn table(rows: &[Summary], replicated: bool, baseline: Option<&str>) -> Vec<Vec<String>> {
        let axes: Vec<String> = if replicated {
            vec!["size".into(), REPLICATE_AXIS.into()]
        } else {
            vec!["size".into()]
        };
        let text = super::super::jct_csv(rows, &axes, replicated, baseline);
        text.lines()
            .map(|l| l.split(',').map(String::from).collect())
            .collect()
    }

    #[test]
    fn one_seed_keeps_the_first_over_each_other() {
        let rows = [
            run("a", "1", None, 30.0, 40.0),
            run("b", "1", None, 10.0, 20.0),
        ];
        let t = table(&rows, false, None);
        assert_eq!(
            t[0].join(","),
            "size,a_jct_mean_ns,a_jct_max_ns,b_jct_mean_ns,b_jct_max_ns,lower_bound_ns,\
             ratio_mean_a_over_b,ratio_max_a_over_b"
        );
        assert_eq!(
            t[1].join(","),
            "1,30.000,40.000,10.000,20.000,10.000,3.0000,2.0000"
        );
        // A baseline turns the ratios round: each other variant over it.
        let t = table(&rows, false, Some("a"));
        assert_eq!(t[0][6], "ratio_mean_b_over_a");
        assert_eq!(t[1][6], "0.3333");
    }

    #[test]
    fn replicates_give_means_and_t_intervals_of_paired_ratios() {
        // Variant a: 1..5 ms; b: 1 ms everywhere except replicate 5 (paired by replicate).
        let mut rows = Vec::new();
        for r in 1..=5u32 {
            rows.push(run("a", "1", Some(r), r as f64, 2.0 * r as f64));
        }
        for r in 1..=5u32 {
            let b = if r == 5 { 5.0 } else { 1.0 };
            rows.push(run("b", "1", Some(r), b, b));
        }
        let t = table(&rows, true, Some("b"));
        let col = |name: &str| t[0].iter().position(|h| h == name).expect(name);
        assert_eq!(t[0][0], "size");
        assert_eq!(t[1][col("replicates")], "5");
        assert_eq!(t.len(), 2, "one row per point, not per replicate");
        // Mean 3, s = sqrt(2.5), half-width t_{0.975,4} s / sqrt 5 = 2.776 sqrt(0.5).
        assert_eq!(t[1][col("a_jct_mean_ns")], "3.000");
        assert_eq!(
            t[1][col("a_jct_mean_std_ns")],
            format!("{:.3}", 2.5f64.sqrt())
        );
        assert_eq!(
            t[1][col("a_jct_mean_ci95_ns")],
            format!("{:.3}", 2.776 * 0.5f64.sqrt())
        );
        assert_eq!(t[1][col("a_jct_max_ns")], "6.000");
        // Paired ratios a/b: 1, 2, 3, 4, 1 -> mean 2.2 (the ratio of the means would be 1.36).
        let ratios = [1.0, 2.0, 3.0, 4.0, 1.0];
        let m = mean_interval(&ratios);
        assert_eq!(t[1][col("ratio_mean_a_over_b")], "2.2000");
        assert_eq!(
            t[1][col("ratio_mean_ci95_a_over_b")],
            format!("{:.4}", m.half_width)
        );
        assert!(!t[0].iter().any(|h| h == REPLICATE_AXIS));
    }
}
