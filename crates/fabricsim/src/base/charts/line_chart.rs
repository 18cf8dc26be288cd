//! Line charts on plotters' mesh: `LineSeries` per run of drawable points (a point that
//! cannot be drawn breaks its line), CDFs as steps, markers on short series, linear or
//! logarithmic axes (plotters' `log_scale`) or named categories on x, error bars for
//! intervals, dashed reference lines, and plotters' legend.

use std::ops::Range;

use plotters::coord::combinators::BindKeyPoints;
use plotters::coord::ranged1d::{Ranged, ValueFormatter};
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;

use super::plan::{line_plan, usable, Panel, Plan};
use super::refs::draw_refs;
use super::style::{font, series_color, AXIS_COLOR, DESC_PX, GRID_COLOR, TICK_PX};
use super::svg::{draw_legend, draw_no_data, render_svg, Area, DrawResult, Frame, Swatch};
use super::{ticks, LineChart, CHART_SIZE};

/// The chart's panels as standalone SVG documents (each starts with `<svg`): one when it
/// has at most [`super::MAX_SERIES_PER_PANEL`] series, else small multiples by
/// [`LineChart::groups`] sharing their axis ranges.
pub fn line_chart_panels(c: &LineChart) -> Vec<String> {
    let plan = line_plan(c);
    let draw = |size: (u32, u32)| -> Vec<String> {
        plan.panels
            .iter()
            .map(|p| {
                let label = super::panel_label(&c.title, &p.title);
                render_svg(size, &label, |root| {
                    let x = plan.x.clone();
                    let lin = |r: Range<f64>| RangedCoordf64::from(r);
                    let log = |r: Range<f64>| LogCoord::from(r.log_scale());
                    let ticks: Vec<f64> = c.x_ticks.iter().map(|t| t.0).collect();
                    match (c.log_x, ticks.is_empty()) {
                        (false, _) => draw_with(root, size, c, &plan, p, lin(x)),
                        (true, true) => draw_with(root, size, c, &plan, p, log(x)),
                        (true, false) => {
                            draw_with(root, size, c, &plan, p, log(x).with_key_points(ticks))
                        }
                    }
                })
            })
            .collect()
    };
    super::uncut(plan.panels.len(), c.full_width, draw)
}

/// Draws a panel on x coordinate `x`, with y linear or logarithmic.
fn draw_with<X>(
    root: &Area<'_>,
    size: (u32, u32),
    c: &LineChart,
    plan: &Plan,
    p: &Panel,
    x: X,
) -> DrawResult
where
    X: Ranged<ValueType = f64> + ValueFormatter<f64>,
{
    let y = plan.y.clone();
    if c.log_y {
        draw_panel(root, size, c, plan, p, x, LogCoord::from(y.log_scale()))
    } else {
        draw_panel(root, size, c, plan, p, x, RangedCoordf64::from(y))
    }
}

/// Splits a series into runs of drawable points (a skipped point breaks the line).
fn segments(points: &[(f64, f64)], log_x: bool, log_y: bool) -> Vec<Vec<(f64, f64)>> {
    let mut out = Vec::new();
    let mut cur: Vec<(f64, f64)> = Vec::new();
    for &(px, py) in points {
        if usable(px, log_x) && usable(py, log_y) {
            cur.push((px, py));
        } else if !cur.is_empty() {
            out.push(std::mem::take(&mut cur));
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// Turns a run of points into a post step function: each value holds until the next x.
fn to_steps(seg: &[(f64, f64)]) -> Vec<(f64, f64)> {
    let mut out = Vec::with_capacity(seg.len() * 2);
    for (i, &(px, py)) in seg.iter().enumerate() {
        if i > 0 {
            out.push((px, seg[i - 1].1));
        }
        out.push((px, py));
    }
    out
}

/// Tick labels: the categories' names at their indices (plotters' other key points stay
/// blank), else numbers.
fn axis_formatter(
    range: &Range<f64>,
    log: bool,
    categories: &[String],
) -> Box<dyn Fn(&f64) -> String> {
    if categories.is_empty() {
        return formatter(range, log);
    }
    let names = categories.to_vec();
    Box::new(move |v: &f64| {
        let i = v.round();
        if (v - i).abs() < 1e-6 && i >= 0.0 {
            names.get(i as usize).cloned().unwrap_or_default()
        } else {
            String::new()
        }
    })
}

fn formatter(range: &Range<f64>, log: bool) -> Box<dyn Fn(&f64) -> String> {
    if log {
        Box::new(ticks::log)
    } else {
        Box::new(ticks::linear(range))
    }
}

fn draw_panel<X, Y>(
    root: &Area<'_>,
    size: (u32, u32),
    c: &LineChart,
    plan: &Plan,
    p: &Panel,
    x: X,
    y: Y,
) -> DrawResult
where
    X: Ranged<ValueType = f64> + ValueFormatter<f64>,
    Y: Ranged<ValueType = f64> + ValueFormatter<f64>,
{
    let xfmt: Box<dyn Fn(&f64) -> String> = if c.x_ticks.is_empty() || !c.log_x {
        axis_formatter(&plan.x, c.log_x, &c.x_categories)
    } else {
        // The key points are the ticks' own positions: each gets its label.
        let ticks = c.x_ticks.clone();
        Box::new(move |v: &f64| {
            ticks
                .iter()
                .find(|t| (t.0 - v).abs() <= t.0.abs() * 1e-9)
                .map_or(String::new(), |t| t.1.clone())
        })
    };
    let yfmt = axis_formatter(&plan.y, c.log_y, &c.y_categories);
    let y_ticks: Vec<String> = if c.y_categories.is_empty() {
        vec![yfmt(&plan.y.start), yfmt(&plan.y.end)]
    } else {
        c.y_categories.clone()
    };
    let named_rows = !c.y_categories.is_empty();
    let mut legend: Vec<String> = if (p.series.len() > 1 || !c.refs.is_empty()) && !named_rows {
        p.series.iter().map(|&s| c.series[s].0.clone()).collect()
    } else {
        Vec::new()
    };
    legend.extend(c.refs.iter().map(|r| r.name.clone()));
    let frame = Frame::new(
        root, size, &p.title, &c.x_label, &c.y_label, &y_ticks, &legend,
    );
    let (plot, legend_area) = frame.split(root)?;
    let mut chart = frame.builder(&plot).build_cartesian_2d(x, y)?;
    chart
        .configure_mesh()
        .light_line_style(TRANSPARENT)
        .bold_line_style(GRID_COLOR)
        .axis_style(AXIS_COLOR)
        .x_labels(if !c.x_categories.is_empty() {
            // Enough key points that every index is one.
            c.x_categories.len() + 1
        } else if size.0 == CHART_SIZE.0 {
            10
        } else {
            6
        })
        .y_labels(if c.y_categories.is_empty() {
            8
        } else {
            c.y_categories.len() + 1
        })
        .x_label_formatter(&xfmt)
        .y_label_formatter(&yfmt)
        .label_style(font(TICK_PX))
        .axis_desc_style(font(DESC_PX))
        .x_desc(frame.x_desc.clone())
        .y_desc(frame.y_desc.clone())
        .draw()?;

    let mut drawn = 0usize;
    let mut entries = Vec::new();
    for (k, &s) in p.series.iter().enumerate() {
        let color = series_color(k);
        let style = color.stroke_width(if named_rows { 10 } else { 2 });
        let segs = segments(&c.series[s].1, c.log_x, c.log_y);
        let npoints: usize = segs.iter().map(Vec::len).sum();
        drawn += npoints;
        // Markers where the points are few enough to be told apart (and where a point
        // stands alone, as it draws no line).
        let markers = !c.step && !named_rows && npoints <= 25;
        let mut elements = Vec::new();
        for seg in &segs {
            let path = if c.step { to_steps(seg) } else { seg.clone() };
            let size = if markers || seg.len() == 1 { 3 } else { 0 };
            elements.extend(LineSeries::new(path, style).point_size(size));
        }
        chart.draw_series(elements)?;
        if let Some(errs) = c.errors.get(s) {
            chart.draw_series(error_bars(&c.series[s].1, errs, c, &plan.x, color))?;
        }
        entries.push(Swatch::Line(color));
    }
    entries.extend(draw_refs(
        &mut chart,
        (plan.x.start, plan.x.end),
        &c.refs,
        c.log_y,
    )?);
    if let Some(area) = legend_area {
        let named: Vec<(String, Swatch)> = frame.legend.iter().cloned().zip(entries).collect();
        draw_legend(&area, &named)?;
    }
    if drawn == 0 {
        draw_no_data(root, &chart)?;
    }
    Ok(())
}

/// Vertical bars from y - h to y + h at each drawable point with a finite half-width,
/// with a short cap at both ends (1 % of the x range wide, or a factor of 1.03 on a log
/// axis).
fn error_bars(
    points: &[(f64, f64)],
    half_widths: &[f64],
    c: &LineChart,
    x_range: &Range<f64>,
    color: RGBColor,
) -> Vec<PathElement<(f64, f64)>> {
    let style = color.stroke_width(2);
    let cap = |x: f64, y: f64| {
        let (a, b) = if c.log_x {
            (x / 1.03, x * 1.03)
        } else {
            let d = (x_range.end - x_range.start) * 0.01;
            (x - d, x + d)
        };
        PathElement::new(vec![(a, y), (b, y)], style)
    };
    let mut out = Vec::new();
    for (&(x, y), &h) in points.iter().zip(half_widths) {
        let (lo, hi) = (y - h.abs(), y + h.abs());
        if !(h.is_finite() && h != 0.0 && usable(x, c.log_x) && usable(y, c.log_y)) {
            continue;
        }
        if !(usable(lo, c.log_y) && usable(hi, c.log_y)) {
            continue;
        }
        out.push(PathElement::new(vec![(x, lo), (x, hi)], style));
        out.push(cap(x, lo));
        out.push(cap(x, hi));
    }
    out
}
