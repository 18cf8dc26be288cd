//! The terminal table `fabricsim run` prints: one row per run, each column as wide as its
//! widest cell; a run named by its variant and sweep coordinates, one short column each
//! (not the run's long name); every duration in one unit, the same for the whole table
//! and named in the headers; percentiles paired in one column (`p50/p99`); JCT columns
//! when any run has collective jobs; the outcome only when a run did not complete.

use super::summary::Summary;
use std::fmt::Write as _;

/// One column of the terminal table.
struct Column {
    head: String,
    /// Left-aligned (names) rather than right-aligned (numbers).
    left: bool,
    cells: Vec<String>,
}

impl Column {
    fn new(head: impl Into<String>, left: bool, cells: Vec<String>) -> Column {
        Column {
            head: head.into(),
            left,
            cells,
        }
    }
}

/// The unit every duration of the table (in ns) is written in: the largest of s, ms, us
/// and ns in which the smallest positive finite one is at least 1, so no figure of the
/// table reads 0.00x.
fn time_unit(ns: impl Iterator<Item = f64>) -> (&'static str, f64) {
    let min = ns
        .filter(|v| v.is_finite() && *v > 0.0)
        .fold(f64::INFINITY, f64::min);
    [("s", 1e9), ("ms", 1e6), ("us", 1e3)]
        .into_iter()
        .find(|&(_, per)| min.is_finite() && min >= per)
        .unwrap_or(("ns", 1.0))
}

/// A figure with four significant digits (no exponent; at least the units digit), `-`
/// where undefined.
fn sig4(x: f64) -> String {
    if !x.is_finite() {
        return "-".into();
    }
    let a = x.abs();
    if a >= 1000.0 {
        format!("{x:.0}")
    } else if a >= 100.0 {
        format!("{x:.1}")
    } else if a >= 10.0 {
        format!("{x:.2}")
    } else {
        format!("{x:.3}")
    }
}

fn opt_ratio(x: f64) -> String {
    if x.is_finite() {
        format!("{x:.2}")
    } else {
        "-".into()
    }
}

/// The sweep axes of the runs, in the order their names give them (`variant-a=1-b=2`),
/// the others after in name order.
fn axes(rows: &[Summary]) -> Vec<String> {
    let mut keys: Vec<String> = Vec::new();
    for r in rows {
        for k in r.params.keys() {
            if !keys.contains(k) {
                keys.push(k.clone());
            }
        }
    }
    let at = |k: &str| {
        rows.iter()
            .find_map(|r| r.variant.find(&format!("{k}=")))
            .unwrap_or(usize::MAX)
    };
    keys.sort_by_key(|k| at(k));
    keys
}

/// The table of summaries the CLI prints after a run: one row per run, every column as
/// wide as its widest cell or header (no fixed width cuts a long run name or pads a short
/// one). A scenario of one run, or runs without sweep coordinates, is named by the run's
/// name; a sweep by a `variant` column (when it has variants) and one column per sweep
/// axis, headed by the axis label. Durations are in the one unit the headers name. Runs
/// with collective jobs add the jobs finished, the mean and largest JCT and the mean JCT
/// over the mean analytic lower bound (`JCT/LB`, 1 at best).
pub fn table(rows: &[Summary]) -> String {
    let col = |head: &str, f: &dyn Fn(&Summary) -> String| {
        Column::new(head, false, rows.iter().map(f).collect())
    };
    let keys = axes(rows);
    let mut cols = Vec::new();
    if keys.is_empty() {
        cols.push(Column::new(
            "run",
            true,
            rows.iter().map(|r| r.variant.clone()).collect(),
        ));
    } else {
        if rows.iter().any(|r| !r.variant_name.is_empty()) {
            cols.push(Column::new(
                "variant",
                true,
                rows.iter().map(|r| r.variant_name.clone()).collect(),
            ));
        }
        for k in &keys {
            cols.push(Column::new(
                k.as_str(),
                true,
                rows.iter()
                    .map(|r| r.params.get(k).cloned().unwrap_or_else(|| "-".into()))
                    .collect(),
            ));
        }
    }
    if rows.iter().any(|r| r.outcome != "completed") {
        cols.push(Column::new(
            "outcome",
            true,
            rows.iter().map(|r| r.outcome.clone()).collect(),
        ));
    }
    let jobs = rows.iter().any(|r| r.jobs > 0);
    let times = rows.iter().flat_map(|r| {
        let mut t = vec![r.fct_p50_ns, r.fct_p99_ns, r.sim_end_ns];
        if jobs {
            t.extend([r.jct_mean_ns, r.jct_max_ns]);
        }
        t
    });
    let (unit, per) = time_unit(times);
    let pair = |a: f64, b: f64| format!("{}/{}", sig4(a / per), sig4(b / per));
    cols.push(col("flows", &|r| {
        format!("{}/{}", r.flows_completed, r.flows)
    }));
    cols.push(col(&format!("FCT p50/p99 ({unit})"), &|r| {
        if r.fct_p50_ns.is_finite() {
            pair(r.fct_p50_ns, r.fct_p99_ns)
        } else {
            "-".into()
        }
    }));
    cols.push(col("slowdown p50/p99", &|r| {
        if r.slowdown_p50.is_finite() {
            format!(
                "{}/{}",
                opt_ratio(r.slowdown_p50),
                opt_ratio(r.slowdown_p99)
            )
        } else {
            "-".into()
        }
    }));
    cols.push(col("drops", &|r| r.drops.to_string()));
    cols.push(col("pauses", &|r| r.pause_frames.to_string()));
    if jobs {
        cols.push(col("jobs", &|r| format!("{}/{}", r.jobs_completed, r.jobs)));
        cols.push(col(&format!("JCT mean/max ({unit})"), &|r| {
            if r.jct_mean_ns.is_finite() {
                pair(r.jct_mean_ns, r.jct_max_ns)
            } else {
                "-".into()
            }
        }));
        cols.push(col("JCT/LB", &|r| {
            opt_ratio(r.jct_mean_ns / r.jct_lower_bound_ns)
        }));
    }
    cols.push(col(&format!("sim ({unit})"), &|r| sig4(r.sim_end_ns / per)));
    render(&cols)
}

/// Columns side by side, two spaces apart, each as wide as its widest cell or header;
/// no trailing spaces.
fn render(cols: &[Column]) -> String {
    let width = |c: &Column| {
        c.cells
            .iter()
            .map(|x| x.chars().count())
            .chain([c.head.chars().count()])
            .max()
            .unwrap_or(0)
    };
    let widths: Vec<usize> = cols.iter().map(width).collect();
    let n = cols.first().map_or(0, |c| c.cells.len());
    let mut s = String::new();
    for row in 0..=n {
        let mut line = String::new();
        for (c, &w) in cols.iter().zip(&widths) {
            let text = if row == 0 { &c.head } else { &c.cells[row - 1] };
            if !line.is_empty() {
                line.push_str("  ");
            }
            if c.left {
                let _ = write!(line, "{text:<w$}");
            } else {
                let _ = write!(line, "{text:>w$}");
            }
        }
        let _ = writeln!(s, "{}", line.trim_end());
    }
    s
}
