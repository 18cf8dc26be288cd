//! Line charts on plotters' mesh: `LineSeries` per run of drawable points (a point that
//! cannot be drawn breaks its line), CDFs as steps, markers on short series, linear or
//! logarithmic axes (plotters' `log_scale`), and plotters' legend.

use std::ops::Range;

use plotters::coord::ranged1d::{Ranged, ValueFormatter};
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;

use super::plan::{line_plan, usable, Panel, Plan};
use super::style::{font, series_color, AXIS_COLOR, DESC_PX, GRID_COLOR, TICK_PX};
use super::svg::{draw_legend, draw_no_data, render_svg, Area, DrawResult, Frame, Swatch};
use super::{ticks, LineChart, CHART_SIZE};

/// The chart's panels as standalone SVG documents (each starts with `<svg`): one when it
/// has at most [`super::MAX_SERIES_PER_PANEL`] series, else small multiples by
/// [`LineChart::groups`] sharing their axis ranges.
pub fn line_chart_panels(c: &LineChart) -> Vec<String> {
    let plan = line_plan(c);
    let size = super::panel_size(plan.panels.len());
    plan.panels
        .iter()
        .map(|p| {
            let label = super::panel_label(&c.title, &p.title);
            render_svg(size, &label, |root| {
                let (x, y) = (plan.x.clone(), plan.y.clone());
                let lin = |r: Range<f64>| RangedCoordf64::from(r);
                let log = |r: Range<f64>| LogCoord::from(r.log_scale());
                match (c.log_x, c.log_y) {
                    (false, false) => draw_panel(root, size, c, &plan, p, lin(x), lin(y)),
                    (true, false) => draw_panel(root, size, c, &plan, p, log(x), lin(y)),
                    (false, true) => draw_panel(root, size, c, &plan, p, lin(x), log(y)),
                    (true, true) => draw_panel(root, size, c, &plan, p, log(x), log(y)),
                }
            })
        })
        .collect()
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
    let xfmt = formatter(&plan.x, c.log_x);
    let yfmt = formatter(&plan.y, c.log_y);
    let y_ticks = [yfmt(&plan.y.start), yfmt(&plan.y.end)];
    let legend: Vec<String> = if p.series.len() > 1 {
        p.series.iter().map(|&s| c.series[s].0.clone()).collect()
    } else {
        Vec::new()
    };
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
        .x_labels(if size == CHART_SIZE { 10 } else { 6 })
        .y_labels(8)
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
        let style = color.stroke_width(2);
        let segs = segments(&c.series[s].1, c.log_x, c.log_y);
        let npoints: usize = segs.iter().map(Vec::len).sum();
        drawn += npoints;
        // Markers where the points are few enough to be told apart (and where a point
        // stands alone, as it draws no line).
        let markers = !c.step && npoints <= 25;
        let mut elements = Vec::new();
        for seg in &segs {
            let path = if c.step { to_steps(seg) } else { seg.clone() };
            let size = if markers || seg.len() == 1 { 3 } else { 0 };
            elements.extend(LineSeries::new(path, style).point_size(size));
        }
        chart.draw_series(elements)?;
        entries.push(Swatch::Line(color));
    }
    if let Some(area) = legend_area {
        let named: Vec<(String, Swatch)> = frame.legend.iter().cloned().zip(entries).collect();
        draw_legend(&area, &named)?;
    }
    if drawn == 0 {
        draw_no_data(root, &chart)?;
    }
    Ok(())
}
