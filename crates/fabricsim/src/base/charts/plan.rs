//! What a chart will show, decided before drawing: the axis ranges and the panels. Pure
//! functions of the chart, so tests assert on them (a bar chart's value axis starts at
//! zero; more than [`MAX_SERIES_PER_PANEL`] series become small multiples).

use std::ops::Range;

use super::{BarChart, LineChart, MAX_SERIES_PER_PANEL};

/// Largest magnitude drawn; keeps every span and product finite.
const MAX_ABS: f64 = 1e300;
/// Values drawn on a log axis: the ratio of its ends stays finite (plotters' log axis
/// divides them; an infinite ratio would make it look for ticks forever).
const LOG_RANGE: std::ops::RangeInclusive<f64> = 1e-150..=1e150;

/// Whether `v` can be drawn (on a log axis with `log`).
pub(super) fn usable(v: f64, log: bool) -> bool {
    v.is_finite() && v.abs() <= MAX_ABS && (!log || LOG_RANGE.contains(&v))
}

/// One panel: its caption (empty when the chart is one panel) and the indices of the
/// series it draws, in the chart's order.
#[derive(Debug, Clone, PartialEq)]
pub struct Panel {
    /// Caption drawn above the panel.
    pub title: String,
    /// Indices into the chart's series.
    pub series: Vec<usize>,
}

/// The ranges every panel of a chart shares, and the panels.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    /// x range (line charts; for bar charts the categories, `0..n`).
    pub x: Range<f64>,
    /// y range.
    pub y: Range<f64>,
    /// Panels, in order; one when the chart has at most [`MAX_SERIES_PER_PANEL`] series.
    pub panels: Vec<Panel>,
}

/// Splits series into panels: all in one when they fit; else one panel per group of
/// `groups` (first-seen order; series without a group name form one group), each group
/// cut into chunks of [`MAX_SERIES_PER_PANEL`]. With `split` (and several groups), one
/// panel per group whatever the count.
fn panels(n: usize, groups: &[String], split: bool) -> Vec<Panel> {
    let distinct = |g: &[String]| g.iter().any(|x| x != &g[0]);
    let split = split && groups.len() == n && n > 0 && distinct(groups);
    if n <= MAX_SERIES_PER_PANEL && !split {
        return vec![Panel {
            title: String::new(),
            series: (0..n).collect(),
        }];
    }
    let mut keys: Vec<&str> = Vec::new();
    let mut members: Vec<Vec<usize>> = Vec::new();
    for i in 0..n {
        let key = groups.get(i).map_or("", String::as_str);
        match keys.iter().position(|k| *k == key) {
            Some(p) => members[p].push(i),
            None => {
                keys.push(key);
                members.push(vec![i]);
            }
        }
    }
    let mut out = Vec::new();
    for (key, m) in keys.into_iter().zip(members) {
        let chunks = m.len().div_ceil(MAX_SERIES_PER_PANEL);
        for (c, chunk) in m.chunks(MAX_SERIES_PER_PANEL).enumerate() {
            let range = format!(
                "series {}–{} of {}",
                c * MAX_SERIES_PER_PANEL + 1,
                c * MAX_SERIES_PER_PANEL + chunk.len(),
                m.len()
            );
            let title = match (key.is_empty(), chunks > 1) {
                (true, _) => range,
                (false, false) => key.to_string(),
                (false, true) => format!("{key} ({range})"),
            };
            out.push(Panel {
                title,
                series: chunk.to_vec(),
            });
        }
    }
    out
}

/// Bar charts: the value axis is linear and starts at zero (or ends at zero when every
/// value is negative), and reaches 5 % past the largest bar or bound mark. More than
/// [`MAX_SERIES_PER_PANEL`] series: one panel per series.
pub fn bar_plan(c: &BarChart) -> Plan {
    let ncat = c.categories.len();
    let bound = c.bound.iter().flat_map(|b| b.values.iter());
    let values = c
        .series
        .iter()
        .map(|(_, v)| v)
        .chain(bound)
        .flat_map(|v| v.iter().take(ncat).flatten().copied())
        .chain(c.refs.iter().map(|r| r.y))
        .filter(|&v| usable(v, false));
    let (mut lo, mut hi) = (0.0f64, 0.0f64);
    for v in values {
        lo = lo.min(v);
        hi = hi.max(v);
    }
    if hi - lo <= 0.0 {
        hi = 1.0;
    }
    let pad = (hi - lo) * 0.05;
    let y = (if lo < 0.0 { lo - pad } else { 0.0 })..(if hi > 0.0 { hi + pad } else { 0.0 });
    let names: Vec<String> = c.series.iter().map(|(n, _)| n.clone()).collect();
    Plan {
        x: 0.0..ncat.max(1) as f64,
        y,
        panels: panels(c.series.len(), &names, false),
    }
}

/// A range covering `values` (usable on a log axis with `log`). Linear: padded by 3 %,
/// and from zero when the values are not negative and zero is near (the smallest is at
/// most half the largest) and `zero_if_near`. Log: 10 % either side (a factor of 2 for
/// narrow ranges, so the axis has ticks).
fn range_of(values: impl Iterator<Item = f64>, log: bool, zero_if_near: bool) -> Range<f64> {
    let mut r: Option<(f64, f64)> = None;
    for v in values.filter(|&v| usable(v, log)) {
        r = Some(r.map_or((v, v), |(a, b)| (a.min(v), b.max(v))));
    }
    match (r, log) {
        (None, true) => 1.0..10.0,
        (None, false) => 0.0..1.0,
        (Some((a, b)), true) => {
            if b / a < 1.5 {
                a / 2.0..b * 2.0
            } else {
                a / 1.1..b * 1.1
            }
        }
        (Some((a, b)), false) => {
            let from_zero = zero_if_near && a >= 0.0 && a <= b * 0.5;
            let span = b - a;
            if span <= a.abs().max(b.abs()) * 1e-9 {
                let half = if a == 0.0 { 1.0 } else { a.abs() * 0.1 };
                if from_zero || a == 0.0 {
                    return 0.0..(b + half).max(1e-300);
                }
                return a - half..b + half;
            }
            let pad = span * 0.03;
            (if from_zero { 0.0 } else { a - pad })..b + pad
        }
    }
}

/// Line charts: x covers the drawable points, y too (from zero when zero is near on a
/// linear axis). More than [`MAX_SERIES_PER_PANEL`] series: panels by
/// [`LineChart::groups`].
pub fn line_plan(c: &LineChart) -> Plan {
    let ok = |&&(px, py): &&(f64, f64)| usable(px, c.log_x) && usable(py, c.log_y);
    let pts = || c.series.iter().flat_map(|(_, p)| p.iter().filter(ok));
    // Interval ends and reference lines are inside the y range too.
    let ends = c.errors.iter().zip(&c.series).flat_map(|(e, (_, p))| {
        p.iter()
            .zip(e)
            .filter(|(q, _)| ok(q))
            .flat_map(|(&(_, y), &h)| {
                let h = if h.is_finite() { h.abs() } else { 0.0 };
                [y - h, y + h]
            })
    });
    let refs = c.refs.iter().map(|r| r.y);
    let x = if c.x_categories.is_empty() {
        range_of(pts().map(|p| p.0), c.log_x, false)
    } else {
        // Every category has its place, with half a slot either side.
        -0.5..c.x_categories.len().max(1) as f64 - 0.5
    };
    let y = if c.y_categories.is_empty() {
        range_of(pts().map(|p| p.1).chain(ends).chain(refs), c.log_y, true)
    } else {
        -0.5..c.y_categories.len().max(1) as f64 - 0.5
    };
    Plan {
        x,
        y,
        panels: panels(c.series.len(), &c.groups, c.split_groups),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn few_series_share_one_panel() {
        let p = panels(6, &[], false);
        assert_eq!(p.len(), 1);
        assert_eq!(p[0].series, (0..6).collect::<Vec<_>>());
        assert!(p[0].title.is_empty());
    }

    #[test]
    fn many_series_split_by_group_then_in_chunks() {
        let groups: Vec<String> = ["a", "b", "a", "b", "c", "a", "a", "a", "a", "a", "a"]
            .map(String::from)
            .to_vec();
        let p = panels(groups.len(), &groups, false);
        let titles: Vec<&str> = p.iter().map(|x| x.title.as_str()).collect();
        assert_eq!(
            titles,
            ["a (series 1–6 of 8)", "a (series 7–8 of 8)", "b", "c"]
        );
        assert_eq!(p[0].series, [0, 2, 5, 6, 7, 8]);
        assert_eq!(p[1].series, [9, 10]);
        assert_eq!(p[2].series, [1, 3]);
        // Every series in exactly one panel, none over the limit.
        let mut all: Vec<usize> = p.iter().flat_map(|x| x.series.clone()).collect();
        all.sort_unstable();
        assert_eq!(all, (0..groups.len()).collect::<Vec<_>>());
        assert!(p.iter().all(|x| x.series.len() <= MAX_SERIES_PER_PANEL));
        // No groups: consecutive chunks.
        let p = panels(13, &[], false);
        assert_eq!(p.len(), 3);
        assert_eq!(p[2].title, "series 13–13 of 13");
    }

    #[test]
    fn ranges() {
        assert_eq!(range_of([2.0, 4.0].into_iter(), false, false), 1.94..4.06);
        assert_eq!(range_of([1.0, 4.0].into_iter(), false, true).start, 0.0);
        assert!(range_of([3.0, 4.0].into_iter(), false, true).start > 2.9);
        let r = range_of([5.0, 5.0].into_iter(), false, false);
        assert!(r.start < 5.0 && r.end > 5.0);
        let r = range_of([0.0, 0.0].into_iter(), false, true);
        assert_eq!(r, 0.0..1.0);
        let r = range_of([1.0, 1000.0, -1.0, 0.0].into_iter(), true, true);
        assert!(r.start < 1.0 && r.start > 0.5 && r.end > 1000.0, "{r:?}");
        assert_eq!(range_of([f64::NAN].into_iter(), true, true), 1.0..10.0);
    }
}
