//! Grouped bar charts on plotters' mesh: the categories are a nested coordinate (each
//! category a slot, the bars of its group placed inside it), the value axis is linear
//! from zero, bars are `Rectangle`s, the bound is a black `PathElement` across each bar,
//! reference lines are dashed across the plot, and the legend is plotters' series labels.

use plotters::coord::combinators::{BuildNestedCoord, NestedValue};
use plotters::prelude::*;

use super::plan::{bar_plan, usable, Panel, Plan};
use super::refs::draw_refs;
use super::style::{font, series_color, AXIS_COLOR, BOUND_COLOR, DESC_PX, GRID_COLOR, TICK_PX};
use super::svg::{draw_legend, draw_no_data, fit, render_svg, Area, DrawResult, Frame, Swatch};
use super::{ticks, BarChart};

/// The chart's panels as standalone SVG documents (each starts with `<svg`): one when it
/// has at most [`super::MAX_SERIES_PER_PANEL`] series, else one per series.
pub fn bar_chart_panels(c: &BarChart) -> Vec<String> {
    let plan = bar_plan(c);
    let draw = |size: (u32, u32)| -> Vec<String> {
        plan.panels
            .iter()
            .map(|p| {
                let label = super::panel_label(&c.title, &p.title);
                render_svg(size, &label, |root| draw_panel(root, size, c, &plan, p))
            })
            .collect()
    };
    super::uncut(plan.panels.len(), false, draw)
}

fn draw_panel(
    root: &Area<'_>,
    size: (u32, u32),
    c: &BarChart,
    plan: &Plan,
    p: &Panel,
) -> DrawResult {
    // Values past the categories are not drawn (as `bar_plan` leaves them out); a chart
    // without categories still gets one empty slot, so it has axes.
    let ncat = c.categories.len();
    let slots = ncat.max(1);
    let yfmt = ticks::linear(&plan.y);
    let y_ticks = [
        yfmt(&plan.y.start),
        yfmt(&plan.y.end),
        yfmt(&((plan.y.start + plan.y.end) / 2.0)),
    ];
    // A legend when bars of several series share the panel, or a bound is drawn.
    let mut legend: Vec<String> = Vec::new();
    if p.series.len() > 1 || c.bound.is_some() || !c.refs.is_empty() {
        legend.extend(p.series.iter().map(|&s| c.series[s].0.clone()));
        legend.extend(c.bound.iter().map(|b| b.name.clone()));
        legend.extend(c.refs.iter().map(|r| r.name.clone()));
    }
    let frame = Frame::new(
        root, size, &p.title, &c.x_label, &c.y_label, &y_ticks, &legend,
    );

    // Category names: shortened to their slot; when slots are narrower than about four
    // characters, plotters labels every k-th category (it picks k from the count asked).
    let plot_w = size
        .0
        .saturating_sub(frame.y_area + frame.legend_w + 2 * super::svg::MARGIN);
    let slot = plot_w / slots as u32;
    let min_label = root
        .estimate_text_size("0000", &font(TICK_PX))
        .map_or(30, |(w, _)| w + 6);
    let labels = if slot >= min_label {
        slots
    } else {
        (plot_w / min_label).max(1) as usize
    };
    let label_w = (plot_w / labels as u32).saturating_sub(6);
    let width = |t: &str| {
        root.estimate_text_size(t, &font(TICK_PX))
            .map_or(0, |(w, _)| w)
    };
    let widest = c.categories.iter().map(|n| width(n)).max().unwrap_or(0);
    // Names wider than their slot are written smaller (down to 7 px) rather than cut;
    // only what does not fit at 7 px is shortened.
    let tick_px = if widest > label_w && labels == slots && widest > 0 {
        (TICK_PX * label_w as f64 / widest as f64).clamp(7.0, TICK_PX)
    } else {
        TICK_PX
    };
    let names: Vec<String> = (0..slots)
        .map(|i| {
            let name = c.categories.get(i).map_or("", String::as_str);
            fit(root, name, &font(tick_px), label_w)
        })
        .collect();
    let tick_style = font(tick_px);

    let x = (0..slots as i32 - 1).nested_coord(|_| 0.0..1.0);
    let (plot, legend_area) = frame.split(root)?;
    let mut chart = frame.builder(&plot).build_cartesian_2d(x, plan.y.clone())?;
    let xfmt = |v: &NestedValue<i32, f64>| match v {
        NestedValue::Category(i) => names.get(*i as usize).cloned().unwrap_or_default(),
        NestedValue::Value(..) => String::new(),
    };
    chart
        .configure_mesh()
        .disable_x_mesh()
        .light_line_style(TRANSPARENT)
        .bold_line_style(GRID_COLOR)
        .axis_style(AXIS_COLOR)
        .x_labels(labels)
        .y_labels(8)
        .x_label_formatter(&xfmt)
        .y_label_formatter(&yfmt)
        .label_style(font(TICK_PX))
        .x_label_style(tick_style)
        .axis_desc_style(font(DESC_PX))
        .x_desc(frame.x_desc.clone())
        .y_desc(frame.y_desc.clone())
        .draw()?;

    // Bars of a group side by side in the middle 80 % of the slot, a small gap between.
    let nser = p.series.len().max(1) as f64;
    let bar_w = 0.8 / nser;
    let gap = bar_w * 0.1;
    let span = |k: usize| {
        let x0 = 0.1 + k as f64 * bar_w + gap / 2.0;
        (x0, x0 + bar_w - gap)
    };
    let at = |i: usize, x: f64| NestedValue::Value(i as i32, x);
    let mut drawn = 0usize;
    let mut entries = Vec::new();
    for (k, &s) in p.series.iter().enumerate() {
        let color = series_color(k);
        let (x0, x1) = span(k);
        let bars: Vec<_> = c.series[s]
            .1
            .iter()
            .take(ncat)
            .enumerate()
            .filter_map(|(i, v)| v.filter(|&v| usable(v, false)).map(|v| (i, v)))
            .map(|(i, v)| Rectangle::new([(at(i, x0), v), (at(i, x1), 0.0)], color.filled()))
            .collect();
        drawn += bars.len();
        chart.draw_series(bars)?;
        entries.push(Swatch::Bar(color));
    }
    if let Some(b) = &c.bound {
        let style = BOUND_COLOR.stroke_width(2);
        let mut marks = Vec::new();
        for (k, &s) in p.series.iter().enumerate() {
            let (x0, x1) = span(k);
            let vals = b.values.get(s).map(Vec::as_slice).unwrap_or(&[]);
            for (i, v) in vals.iter().take(ncat).enumerate() {
                if let Some(v) = v.filter(|&v| usable(v, false)) {
                    marks.push(PathElement::new(
                        vec![(at(i, x0), v), (at(i, x1), v)],
                        style,
                    ));
                }
            }
        }
        chart.draw_series(marks)?;
        entries.push(Swatch::Line(BOUND_COLOR));
    }
    let ends = (at(0, 0.0), at(slots - 1, 1.0));
    entries.extend(draw_refs(&mut chart, ends, &c.refs, false)?);
    if let Some(area) = legend_area {
        let named: Vec<(String, Swatch)> = frame.legend.iter().cloned().zip(entries).collect();
        draw_legend(&area, &named)?;
    }
    if drawn == 0 {
        draw_no_data(root, &chart)?;
    }
    Ok(())
}
