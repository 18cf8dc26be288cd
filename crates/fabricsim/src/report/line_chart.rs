//! Line charts over a numeric x axis (rates and queues over time, CDFs): a point that
//! cannot be drawn breaks its line, CDFs are drawn as steps, short series get markers,
//! and series past the first round of the palette are dashed.

use plotters::element::DashedPathElement;
use plotters::prelude::*;

use super::axis::{usable, Axis, Zero};
use super::chart::{axis_texts, draw_header, draw_no_data, render_svg, Area, DrawResult, Swatch};
use super::style::{font, second_round, series_color, AXIS_COLOR, DESC_PX, GRID_COLOR, TICK_PX};
use super::LineChart;

/// Renders one line chart to a standalone SVG document string (starts with `<svg`).
pub fn line_chart_svg(c: &LineChart) -> String {
    render_svg(&c.title, |root| draw_line_chart(root, c))
}

/// Splits a series into runs of drawable points (a skipped point breaks the line), in
/// plot space.
fn segments(points: &[(f64, f64)], x: &Axis, y: &Axis) -> Vec<Vec<(f64, f64)>> {
    let mut out = Vec::new();
    let mut cur: Vec<(f64, f64)> = Vec::new();
    for &(px, py) in points {
        if usable(px, x.log) && usable(py, y.log) {
            cur.push((x.map(px), y.map(py)));
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

fn draw_line_chart(root: &Area<'_>, c: &LineChart) -> DrawResult {
    let legend: Vec<(String, RGBColor, bool)> = c
        .series
        .iter()
        .enumerate()
        .map(|(i, (name, _))| (name.clone(), series_color(i), second_round(i)))
        .collect();
    let area = draw_header(root, &c.title, &legend, Swatch::Line)?;
    let top = root.dim_in_pixel().1 as i32 - area.dim_in_pixel().1 as i32;

    // Only points drawable on both axes decide the ranges.
    let ok = |&&(px, py): &&(f64, f64)| usable(px, c.log_x) && usable(py, c.log_y);
    let pts = || c.series.iter().flat_map(|(_, p)| p.iter().filter(ok));
    let x = Axis::for_values(pts().map(|p| p.0), c.log_x, Zero::No);
    let y = Axis::for_values(pts().map(|p| p.1), c.log_y, Zero::IfNear);
    let (x_desc, y_desc, x_area, y_area) = axis_texts(&c.x_label, &c.y_label, &y, top);

    let mut chart = ChartBuilder::on(&area)
        .margin_left(10)
        .margin_right(28)
        .margin_top(4)
        .margin_bottom(6)
        .x_label_area_size(x_area)
        .y_label_area_size(y_area)
        .build_cartesian_2d(x.clone(), y.clone())?;
    let mut mesh = chart.configure_mesh();
    mesh.bold_line_style(GRID_COLOR)
        .axis_style(AXIS_COLOR)
        .x_labels(x.ticks.len().max(1))
        .y_labels(y.ticks.len().max(1))
        .label_style(font(TICK_PX))
        .axis_desc_style(font(DESC_PX));
    if !x_desc.is_empty() {
        mesh.x_desc(x_desc.clone());
    }
    if !y_desc.is_empty() {
        mesh.y_desc(y_desc.clone());
    }
    mesh.draw()?;

    let mut drawn = 0usize;
    for (j, (_, points)) in c.series.iter().enumerate() {
        let color = series_color(j);
        let style = color.stroke_width(2);
        let segs = segments(points, &x, &y);
        let npoints: usize = segs.iter().map(Vec::len).sum();
        drawn += npoints;
        let markers = !c.step && npoints <= 25;
        for seg in &segs {
            let path = if c.step { to_steps(seg) } else { seg.clone() };
            if path.len() >= 2 {
                if second_round(j) {
                    chart
                        .draw_series(std::iter::once(DashedPathElement::new(path, 7, 4, style)))?;
                } else {
                    chart.draw_series(std::iter::once(PathElement::new(path, style)))?;
                }
            }
            if markers || seg.len() == 1 {
                chart.draw_series(seg.iter().map(|&p| Circle::new(p, 3, color.filled())))?;
            }
        }
    }
    if drawn == 0 {
        draw_no_data(root, top)?;
    }
    Ok(())
}
