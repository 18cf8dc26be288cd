//! Grouped bar charts: one group per category along x, one bar per series in each group,
//! from the bottom of the axis (zero, or below the smallest value on a log axis). Series
//! past the first round of the palette are drawn as outlined light bars.

use plotters::prelude::*;

use super::axis::{usable, Axis, Zero};
use super::chart::{
    axis_texts, clean_label, draw_header, draw_no_data, render_svg, Area, DrawResult, Swatch,
};
use super::style::{
    font, lighten, second_round, series_color, AXIS_COLOR, CHAR_EM, DESC_PX, GRID_COLOR, TICK_PX,
};
use super::{BarChart, CHART_WIDTH};

/// Renders one chart to a standalone SVG document string (starts with `<svg`).
pub fn bar_chart_svg(c: &BarChart) -> String {
    render_svg(&c.title, |root| draw_bar_chart(root, c))
}

fn draw_bar_chart(root: &Area<'_>, c: &BarChart) -> DrawResult {
    let legend: Vec<(String, RGBColor, bool)> = c
        .series
        .iter()
        .enumerate()
        .map(|(i, (name, _))| (name.clone(), series_color(i), second_round(i)))
        .collect();
    let area = draw_header(root, &c.title, &legend, Swatch::Bar)?;
    let top = root.dim_in_pixel().1 as i32 - area.dim_in_pixel().1 as i32;

    let ncat = c.categories.len();
    let values = c
        .series
        .iter()
        .flat_map(|(_, vals)| vals.iter().take(ncat).flatten().copied());
    let y = Axis::for_values(values, c.log_y, Zero::Bars);
    let (x_desc, y_desc, x_area, y_area) = axis_texts(&c.x_label, &c.y_label, &y, top);

    // Category names under their groups: shortened to the group's width, and only every
    // `every`-th named when even six characters do not fit.
    let n = ncat.max(1) as f64;
    let plot_w = f64::from(CHART_WIDTH) - f64::from(y_area) - 10.0 - 20.0;
    let slot = plot_w / n;
    let char_w = TICK_PX * CHAR_EM;
    let longest = c
        .categories
        .iter()
        .map(|s| clean_label(s, 64).chars().count())
        .max()
        .unwrap_or(1);
    let want = longest.clamp(1, 6) as f64 * char_w + 8.0;
    let every = (want / slot).ceil().clamp(1.0, n) as usize;
    let max_cat = ((slot * every as f64 - 8.0) / char_w).floor().max(1.0) as usize;
    let x = Axis {
        lo: 0.0,
        hi: n,
        ticks: (0..ncat)
            .filter(|i| i % every == 0)
            .map(|i| i as f64 + 0.5)
            .collect(),
        labels: c
            .categories
            .iter()
            .step_by(every)
            .map(|s| clean_label(s, max_cat))
            .collect(),
        log: false,
    };

    let mut chart = ChartBuilder::on(&area)
        .margin_left(10)
        .margin_right(20)
        .margin_top(4)
        .margin_bottom(6)
        .x_label_area_size(x_area)
        .y_label_area_size(y_area)
        .build_cartesian_2d(x, y.clone())?;
    let mut mesh = chart.configure_mesh();
    mesh.disable_x_mesh()
        .bold_line_style(GRID_COLOR)
        .axis_style(AXIS_COLOR)
        .x_labels(ncat.max(1))
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

    let nser = c.series.len().max(1) as f64;
    let group_w = 0.8;
    let bar_w = group_w / nser;
    let gap = if bar_w > 0.04 { bar_w * 0.08 } else { 0.0 };
    let base = if y.log { y.lo } else { 0.0 };
    let mut drawn = 0usize;
    for (j, (_, vals)) in c.series.iter().enumerate() {
        let color = series_color(j);
        let second = second_round(j);
        let mut bars = Vec::new();
        let mut outlines = Vec::new();
        for (i, v) in vals.iter().take(ncat).enumerate() {
            let Some(v) = v.filter(|&v| usable(v, y.log)) else {
                continue;
            };
            let x0 = i as f64 + (1.0 - group_w) / 2.0 + j as f64 * bar_w + gap / 2.0;
            let x1 = x0 + bar_w - gap;
            let top = y.map(v);
            let fill = if second { lighten(color) } else { color };
            bars.push(Rectangle::new([(x0, top), (x1, base)], fill.filled()));
            if second {
                outlines.push(Rectangle::new(
                    [(x0, top), (x1, base)],
                    color.stroke_width(1),
                ));
            }
        }
        drawn += bars.len();
        chart.draw_series(bars)?;
        chart.draw_series(outlines)?;
    }
    if drawn == 0 {
        draw_no_data(root, top)?;
    }
    Ok(())
}
