//! The terminal table `fabricsim run` prints: one row per run, each column as wide as its
//! widest cell, one time unit per column named in its header, and JCT columns when any run
//! has collective jobs.

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

/// The unit a column of durations (in ns) is written in: the largest of s, ms, us and ns
/// that its largest finite value reaches, so the column reads in one unit and its
/// largest figure has four significant digits or more at three decimals.
fn time_unit(ns: &[f64]) -> (&'static str, f64) {
    let max = ns
        .iter()
        .copied()
        .filter(|v| v.is_finite())
        .fold(0.0, f64::max);
    [("s", 1e9), ("ms", 1e6), ("us", 1e3)]
        .into_iter()
        .find(|&(_, per)| max >= per)
        .unwrap_or(("ns", 1.0))
}

/// A column of durations (ns) in one unit, named in the header (`FCT p50 (us)`); `-`
/// where the figure is undefined (no flow finished).
fn time_column(head: &str, ns: Vec<f64>) -> Column {
    let (unit, per) = time_unit(&ns);
    let cells = ns
        .iter()
        .map(|&v| {
            if v.is_finite() {
                format!("{:.3}", v / per)
            } else {
                "-".into()
            }
        })
        .collect();
    Column::new(format!("{head} ({unit})"), false, cells)
}

fn opt_ratio(x: f64) -> String {
    if x.is_finite() {
        format!("{x:.2}")
    } else {
        "-".into()
    }
}

/// The table of summaries the CLI prints after a run: one row per run, every column as
/// wide as its widest cell or header (no fixed width cuts a long run name or pads a short
/// one), durations in the unit the header names. Runs with collective jobs add the
/// jobs finished, the mean and largest JCT and the mean JCT over the mean analytic lower
/// bound (`JCT/LB`, 1 at best).
pub fn table(rows: &[Summary]) -> String {
    let col = |head: &str, f: &dyn Fn(&Summary) -> String| {
        Column::new(head, false, rows.iter().map(f).collect())
    };
    let mut cols = vec![
        Column::new(
            "run",
            true,
            rows.iter().map(|r| r.variant.clone()).collect(),
        ),
        Column::new(
            "outcome",
            true,
            rows.iter().map(|r| r.outcome.clone()).collect(),
        ),
        col("flows done", &|r| {
            format!("{}/{}", r.flows_completed, r.flows)
        }),
        time_column("FCT p50", rows.iter().map(|r| r.fct_p50_ns).collect()),
        time_column("FCT p99", rows.iter().map(|r| r.fct_p99_ns).collect()),
        col("slowdown p50", &|r| opt_ratio(r.slowdown_p50)),
        col("slowdown p99", &|r| opt_ratio(r.slowdown_p99)),
        col("drops (pkts)", &|r| r.drops.to_string()),
        col("PFC pauses", &|r| r.pause_frames.to_string()),
    ];
    if rows.iter().any(|r| r.jobs > 0) {
        cols.push(col("jobs done", &|r| {
            format!("{}/{}", r.jobs_completed, r.jobs)
        }));
        cols.push(time_column(
            "JCT mean",
            rows.iter().map(|r| r.jct_mean_ns).collect(),
        ));
        cols.push(time_column(
            "JCT max",
            rows.iter().map(|r| r.jct_max_ns).collect(),
        ));
        cols.push(col("JCT/LB", &|r| {
            opt_ratio(r.jct_mean_ns / r.jct_lower_bound_ns)
        }));
    }
    cols.push(time_column(
        "sim time",
        rows.iter().map(|r| r.sim_end_ns).collect(),
    ));
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
