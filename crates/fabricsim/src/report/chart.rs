//! What every chart shares: drawing into an SVG string (with accessibility attributes and
//! a fallback), the title and the legend at the top, cleaning up labels, the axis
//! descriptions, and the "no data" note.

use plotters::coord::Shift;
use plotters::element::DashedPathElement;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::axis::Axis;
use super::escape::{is_forbidden_char, push_escaped};
use super::style::{
    font, font_styled, lighten, text_width, BOLD_CHAR_EM, CHAR_EM, DESC_PX, LEGEND_PX, MUTED_COLOR,
    TICK_PX, TITLE_PX,
};
use super::{CHART_HEIGHT, CHART_WIDTH};

pub(super) type Area<'a> = DrawingArea<SVGBackend<'a>, Shift>;
pub(super) type DrawResult = Result<(), DrawingAreaErrorKind<std::io::Error>>;

/// Replaces control characters by spaces, collapses runs of white space and truncates
/// to `max_chars` characters (with an ellipsis).
pub(super) fn clean_label(s: &str, max_chars: usize) -> String {
    let mut out = String::with_capacity(s.len().min(4 * max_chars));
    let mut last_space = true;
    for c in s.chars() {
        let c = if c.is_whitespace() || is_forbidden_char(c) {
            ' '
        } else {
            c
        };
        if c == ' ' {
            if last_space {
                continue;
            }
            last_space = true;
        } else {
            last_space = false;
        }
        out.push(c);
    }
    let trimmed = out.trim_end();
    let max_chars = max_chars.max(1);
    if trimmed.chars().count() <= max_chars {
        trimmed.to_string()
    } else {
        let mut t: String = trimmed.chars().take(max_chars - 1).collect();
        t.truncate(t.trim_end().len());
        t.push('…');
        t
    }
}

/// Legend entry style.
#[derive(Clone, Copy)]
pub(super) enum Swatch {
    Bar,
    Line,
}

/// Renders with the SVG backend into a string and adds accessibility attributes.
pub(super) fn render_svg(title: &str, draw: impl FnOnce(&Area<'_>) -> DrawResult) -> String {
    let mut buf = String::with_capacity(16 * 1024);
    let ok = {
        let root =
            SVGBackend::with_string(&mut buf, (CHART_WIDTH, CHART_HEIGHT)).into_drawing_area();
        let drawn = draw(&root);
        let presented = root.present();
        drawn.is_ok() && presented.is_ok()
    };
    if !ok || !buf.starts_with("<svg ") {
        buf = fallback_svg();
    }
    let label = clean_label(title, 300);
    let mut attrs = String::from("<svg role=\"img\"");
    if !label.is_empty() {
        attrs.push_str(" aria-label=\"");
        push_escaped(&mut attrs, &label);
        attrs.push('"');
    }
    attrs.push(' ');
    buf.replacen("<svg ", &attrs, 1)
}

/// A minimal chart used only if plotters reports an error (it does not with a string
/// target, but a report must never fail because of one chart).
fn fallback_svg() -> String {
    format!(
        "<svg width=\"{w}\" height=\"{h}\" viewBox=\"0 0 {w} {h}\" \
         xmlns=\"http://www.w3.org/2000/svg\">\n<rect x=\"0\" y=\"0\" width=\"{w}\" \
         height=\"{h}\" fill=\"#FFFFFF\" stroke=\"#888888\"/>\n<text x=\"{x}\" y=\"{y}\" \
         text-anchor=\"middle\" font-family=\"sans-serif\" font-size=\"14\">chart could not \
         be drawn</text>\n</svg>\n",
        w = CHART_WIDTH,
        h = CHART_HEIGHT,
        x = CHART_WIDTH / 2,
        y = CHART_HEIGHT / 2
    )
}

/// Draws the title and the legend at the top of `root` and returns the area left for
/// the plot.
pub(super) fn draw_header<'a>(
    root: &Area<'a>,
    title: &str,
    legend: &[(String, RGBColor, bool)],
    swatch: Swatch,
) -> Result<Area<'a>, DrawingAreaErrorKind<std::io::Error>> {
    root.fill(&WHITE)?;
    let width = f64::from(CHART_WIDTH);
    let mut y = 8;
    // Bold glyphs are wider than the average.
    let max_title = ((width - 24.0) / (TITLE_PX * BOLD_CHAR_EM)) as usize;
    let title = clean_label(title, max_title);
    if !title.is_empty() {
        let style = font_styled(TITLE_PX, FontStyle::Bold).pos(Pos::new(HPos::Center, VPos::Top));
        root.draw(&Text::new(title, ((CHART_WIDTH / 2) as i32, y), style))?;
        y += 28;
    }

    // Lay the legend out in centred rows.
    const SWATCH_W: i32 = 18;
    const ROW_H: i32 = 19;
    const MAX_ROWS: usize = 4;
    let item_w = |name: &str| SWATCH_W + 6 + text_width(name, LEGEND_PX).ceil() as i32 + 20;
    let avail = CHART_WIDTH as i32 - 40;
    let mut rows: Vec<Vec<(String, RGBColor, bool)>> = Vec::new();
    let mut row_w = 0;
    let mut hidden = 0usize;
    for (i, (name, color, second)) in legend.iter().enumerate() {
        let name = clean_label(name, 40);
        let w = item_w(&name);
        if rows.is_empty() || row_w + w > avail {
            if rows.len() == MAX_ROWS {
                hidden = legend.len() - i;
                break;
            }
            rows.push(Vec::new());
            row_w = 0;
        }
        row_w += w;
        if let Some(row) = rows.last_mut() {
            row.push((name, *color, *second));
        }
    }
    if hidden > 0 {
        // Make room for the "+N more" note on the last row.
        let note = format!("+{hidden} more");
        if let Some(row) = rows.last_mut() {
            let mut w: i32 = row.iter().map(|(n, _, _)| item_w(n)).sum();
            while !row.is_empty() && w + item_w(&note) > avail {
                if let Some((n, _, _)) = row.pop() {
                    w -= item_w(&n);
                    hidden += 1;
                }
            }
            row.push((format!("+{hidden} more"), MUTED_COLOR, false));
        }
    }
    if !rows.is_empty() {
        y += 2;
    }
    let last_row = rows.len().saturating_sub(1);
    for (r, row) in rows.iter().enumerate() {
        let total: i32 = row.iter().map(|(n, _, _)| item_w(n)).sum::<i32>() - 20;
        let mut x = (CHART_WIDTH as i32 - total) / 2;
        let cy = y + ROW_H / 2;
        for (k, (name, color, second)) in row.iter().enumerate() {
            let is_note = hidden > 0 && r == last_row && k + 1 == row.len();
            if !is_note {
                match swatch {
                    Swatch::Bar => {
                        let fill = if *second { lighten(*color) } else { *color };
                        root.draw(&Rectangle::new(
                            [(x + 3, cy - 6), (x + SWATCH_W - 3, cy + 6)],
                            fill.filled(),
                        ))?;
                        if *second {
                            root.draw(&Rectangle::new(
                                [(x + 3, cy - 6), (x + SWATCH_W - 3, cy + 6)],
                                color.stroke_width(1),
                            ))?;
                        }
                    }
                    Swatch::Line => {
                        let style = color.stroke_width(3);
                        if *second {
                            root.draw(&DashedPathElement::new(
                                vec![(x, cy), (x + SWATCH_W, cy)],
                                5,
                                3,
                                style,
                            ))?;
                        } else {
                            root.draw(&PathElement::new(vec![(x, cy), (x + SWATCH_W, cy)], style))?;
                        }
                    }
                }
            }
            let style = font(LEGEND_PX).pos(Pos::new(HPos::Left, VPos::Center));
            let tx = if is_note { x } else { x + SWATCH_W + 6 };
            root.draw(&Text::new(name.clone(), (tx, cy), style))?;
            x += item_w(name);
        }
        y += ROW_H;
    }
    let top = (y + 4).min(CHART_HEIGHT as i32 / 2);
    let (_, rest) = root.split_vertically(top);
    Ok(rest)
}

/// Axis descriptions shortened to fit the plot (which starts `top` pixels down), and the
/// label area sizes: (x description, y description, x area height, y area width).
pub(super) fn axis_texts(
    x_label: &str,
    y_label: &str,
    y: &Axis,
    top: i32,
) -> (String, String, u32, u32) {
    let x_desc = clean_label(
        x_label,
        ((f64::from(CHART_WIDTH) - 120.0) / (DESC_PX * CHAR_EM)) as usize,
    );
    let x_area: u32 = if x_desc.is_empty() { 28 } else { 48 };
    let plot_h = (CHART_HEIGHT as i32 - top - x_area as i32 - 10).max(40);
    let y_desc = clean_label(y_label, (f64::from(plot_h) / (DESC_PX * CHAR_EM)) as usize);
    let tick_w = text_width(&"0".repeat(y.max_label_chars()), TICK_PX).ceil() as u32;
    let y_area = (tick_w + 16 + if y_desc.is_empty() { 0 } else { 24 }).max(40);
    (x_desc, y_desc, x_area, y_area)
}

pub(super) fn draw_no_data(root: &Area<'_>, top: i32) -> DrawResult {
    let style = font(14.0)
        .color(&MUTED_COLOR)
        .pos(Pos::new(HPos::Center, VPos::Center));
    root.draw(&Text::new(
        "no data",
        (
            (CHART_WIDTH / 2) as i32,
            (top + CHART_HEIGHT as i32) / 2 - 10,
        ),
        style,
    ))
}
