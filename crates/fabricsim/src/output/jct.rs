//! `jct.csv`: one row per sweep point of a multi-run scenario with collective jobs: mean
//! and max JCT of every variant, the lower bound, and the ratio of the first variant to
//! each other one.

use super::cells::{header_of, CsvOut, Fixed};
use super::{Scope, SweepData, Table};
use crate::output::Summary;
use serde::Serialize;
use std::collections::BTreeMap;

/// The table's entry in [`super::TABLES`].
pub const TABLE: Table = Table {
    file: "jct.csv",
    about: "per sweep point (runs with collective jobs): mean and max JCT of every \
            variant, the analytic lower bound, and the first variant's JCT over each \
            other variant's",
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

#[derive(Default, Serialize)]
struct Bound {
    lower_bound_ns: Fixed<3>,
}

/// The first variant over another; the header suffixes them with `_<first>_over_<v>`.
#[derive(Default, Serialize)]
struct Ratio {
    ratio_mean: Option<Fixed<4>>,
    ratio_max: Option<Fixed<4>>,
}

/// Variant names in first-seen order.
fn variants(rows: &[Summary]) -> Vec<&str> {
    let mut v: Vec<&str> = Vec::new();
    for r in rows {
        if !v.contains(&r.variant_name.as_str()) {
            v.push(&r.variant_name);
        }
    }
    v
}

fn write(d: &SweepData, out: &mut CsvOut) -> csv::Result<()> {
    let rows = d.rows;
    let vars = variants(rows);
    // The scenario's axis order; without one, the first run's coordinates.
    let axes: Vec<String> = if d.axes.is_empty() {
        rows.first()
            .map(|r| r.params.keys().cloned().collect())
            .unwrap_or_default()
    } else {
        d.axes.to_vec()
    };
    let mut header = axes.clone();
    let jct_names = header_of::<Jct>()?;
    for v in &vars {
        header.extend(jct_names.iter().map(|n| format!("{v}_{n}")));
    }
    header.extend(header_of::<Bound>()?);
    let ratio_names = header_of::<Ratio>()?;
    for v in vars.iter().skip(1) {
        header.extend(
            ratio_names
                .iter()
                .map(|n| format!("{n}_{}_over_{v}", vars[0])),
        );
    }
    out.header(&header)?;
    // Sweep points in first-seen order, each with its run per variant.
    let mut points: BTreeMap<Vec<&str>, BTreeMap<&str, &Summary>> = BTreeMap::new();
    let mut order: Vec<Vec<&str>> = Vec::new();
    for r in rows {
        let k: Vec<&str> = axes
            .iter()
            .map(|a| r.params.get(a).map(String::as_str).unwrap_or(""))
            .collect();
        if !points.contains_key(&k) {
            order.push(k.clone());
        }
        points.entry(k).or_default().insert(&r.variant_name, r);
    }
    for k in order {
        let p = &points[&k];
        let jcts: Vec<Jct> = vars
            .iter()
            .map(|v| Jct {
                jct_mean_ns: p.get(v).map(|r| Fixed(r.jct_mean_ns)),
                jct_max_ns: p.get(v).map(|r| Fixed(r.jct_max_ns)),
            })
            .collect();
        let bound = Bound {
            lower_bound_ns: Fixed(
                p.values()
                    .next()
                    .map(|r| r.jct_lower_bound_ns)
                    .unwrap_or(f64::NAN),
            ),
        };
        let ratios: Vec<Ratio> = vars
            .iter()
            .skip(1)
            .map(|v| match (p.get(vars[0]), p.get(v)) {
                (Some(a), Some(b)) => Ratio {
                    ratio_mean: Some(Fixed(a.jct_mean_ns / b.jct_mean_ns)),
                    ratio_max: Some(Fixed(a.jct_max_ns / b.jct_max_ns)),
                },
                _ => Ratio::default(),
            })
            .collect();
        out.row(&(&k, jcts, bound, ratios))?;
    }
    Ok(())
}
