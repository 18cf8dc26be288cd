//! Rendering one panel with plotters' SVG backend into a string, and the text helpers
//! every panel uses (cleaning labels, shortening them to a measured width).

use plotters::coord::Shift;
use plotters::prelude::*;

use super::escape::{is_forbidden_char, push_escaped};
use super::font::ensure_registered;

pub(super) type Area<'a> = DrawingArea<SVGBackend<'a>, Shift>;
pub(super) type DrawResult = Result<(), DrawingAreaErrorKind<std::io::Error>>;

/// Replaces control characters by spaces and collapses runs of white space.
pub(super) fn clean_label(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for word in s
        .split(|c: char| c.is_whitespace() || is_forbidden_char(c))
        .filter(|w| !w.is_empty())
    {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(word);
    }
    out
}

/// `s` shortened with an ellipsis until plotters measures it at most `max_px` wide in
/// `style` (at least one character and the ellipsis are kept).
pub(super) fn fit(area: &Area<'_>, s: &str, style: &TextStyle<'_>, max_px: u32) -> String {
    let s = clean_label(s);
    let width = |t: &str| area.estimate_text_size(t, style).map_or(0, |(w, _)| w);
    if width(&s) <= max_px {
        return s;
    }
    let chars: Vec<char> = s.chars().collect();
    // Binary search for the longest prefix that fits with the ellipsis.
    let (mut lo, mut hi) = (1usize, chars.len());
    while lo < hi {
        let mid = (lo + hi).div_ceil(2);
        let t: String = chars[..mid].iter().collect::<String>() + "…";
        if width(&t) <= max_px {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    let mut t: String = chars[..lo].iter().collect();
    t.truncate(t.trim_end().len());
    t + "…"
}

/// Renders with the SVG backend into a string, with `role="img"` and `label` as the
/// accessible name. A chart that plotters fails to draw becomes a frame that says so:
/// a report must never fail because of one chart.
pub(super) fn render_svg(
    size: (u32, u32),
    label: &str,
    draw: impl FnOnce(&Area<'_>) -> DrawResult,
) -> String {
    ensure_registered();
    let mut buf = String::with_capacity(32 * 1024);
    let ok = {
        let root = SVGBackend::with_string(&mut buf, size).into_drawing_area();
        let drawn = root.fill(&WHITE).and_then(|()| draw(&root));
        let presented = root.present();
        drawn.is_ok() && presented.is_ok()
    };
    if !ok || !buf.starts_with("<svg ") {
        buf = fallback_svg(size);
    }
    let label = clean_label(label);
    let mut attrs = String::from("<svg role=\"img\"");
    if !label.is_empty() {
        attrs.push_str(" aria-label=\"");
        push_escaped(&mut attrs, &label);
        attrs.push('"');
    }
    attrs.push(' ');
    buf.replacen("<svg ", &attrs, 1)
}

fn fallback_svg((w, h): (u32, u32)) -> String {
    format!(
        "<svg width=\"{w}\" height=\"{h}\" viewBox=\"0 0 {w} {h}\" \
         xmlns=\"http://www.w3.org/2000/svg\">\n<rect x=\"0\" y=\"0\" width=\"{w}\" \
         height=\"{h}\" fill=\"#FFFFFF\" stroke=\"#888888\"/>\n<text x=\"{x}\" y=\"{y}\" \
         text-anchor=\"middle\" font-family=\"sans-serif\" font-size=\"14\">chart could not \
         be drawn</text>\n</svg>\n",
        x = w / 2,
        y = h / 2
    )
}

/// The parts of a panel sized from measured text: label areas, the legend's width (on
/// the right of the plot) and the texts shortened to fit.
pub(super) struct Frame {
    pub(super) caption: String,
    pub(super) x_desc: String,
    pub(super) y_desc: String,
    /// Height of the area under the plot (tick labels and x description).
    pub(super) x_area: u32,
    /// Width of the area left of the plot (tick labels and y description).
    pub(super) y_area: u32,
    /// Legend names, shortened to fit; empty: no legend.
    pub(super) legend: Vec<String>,
    /// Room kept right of the plot for the legend.
    pub(super) legend_w: u32,
}

/// Margin around the plot, in pixels.
pub(super) const MARGIN: u32 = 10;

impl Frame {
    /// Sizes a panel of `size` whose y tick labels look like `y_ticks` (the widest
    /// decides) and whose legend names `legend` (none: no legend).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn new(
        root: &Area<'_>,
        size: (u32, u32),
        caption: &str,
        x_label: &str,
        y_label: &str,
        y_ticks: &[String],
        legend: &[String],
    ) -> Frame {
        use super::style::{font, CAPTION_PX, DESC_PX, LEGEND_PX, TICK_PX};
        let (w, h) = size;
        let measure = |t: &str, px: f64| {
            root.estimate_text_size(t, &font(px))
                .unwrap_or((0, px as u32))
        };
        let caption = fit(root, caption, &font(CAPTION_PX), w - 2 * MARGIN);
        let tick_w = y_ticks
            .iter()
            .map(|t| measure(t, TICK_PX).0)
            .max()
            .unwrap_or(0);
        let desc_h = measure("Ag", DESC_PX).1;
        let tick_h = measure("0", TICK_PX).1;
        // Legend: at most 40 % of the width; the swatch and margins take 22 + 2 * 6 px.
        let max_name = (w * 2 / 5).saturating_sub(22 + 12 + 2 * MARGIN);
        let legend: Vec<String> = legend
            .iter()
            .map(|n| fit(root, n, &font(LEGEND_PX), max_name))
            .collect();
        let legend_w = legend
            .iter()
            .map(|n| measure(n, LEGEND_PX).0)
            .max()
            .map_or(0, |lw| lw + 22 + 12 + MARGIN);
        let y_desc_present = !y_label.trim().is_empty();
        let x_desc_present = !x_label.trim().is_empty();
        let y_area = tick_w + 12 + if y_desc_present { desc_h + 10 } else { 0 };
        let x_area = tick_h + 12 + if x_desc_present { desc_h + 10 } else { 0 };
        let caption_h = if caption.is_empty() {
            0
        } else {
            measure("Ag", CAPTION_PX).1 + 10
        };
        let plot_w = w.saturating_sub(y_area + legend_w + 2 * MARGIN).max(40);
        let plot_h = h.saturating_sub(x_area + caption_h + 2 * MARGIN).max(40);
        Frame {
            x_desc: fit(root, x_label, &font(DESC_PX), plot_w),
            y_desc: fit(root, y_label, &font(DESC_PX), plot_h),
            caption,
            x_area,
            y_area,
            legend,
            legend_w,
        }
    }

    /// The panel's areas: under the caption (when there is one), the plot's on the
    /// left and the legend's on the right (when there is a legend).
    pub(super) fn split<'b>(
        &self,
        root: &Area<'b>,
    ) -> Result<(Area<'b>, Option<Area<'b>>), DrawingAreaErrorKind<std::io::Error>> {
        use super::style::{font, CAPTION_PX};
        let body = if self.caption.is_empty() {
            root.clone()
        } else {
            root.titled(&self.caption, font(CAPTION_PX))?
        };
        if self.legend.is_empty() {
            return Ok((body, None));
        }
        let w = body.dim_in_pixel().0;
        let (plot, legend) = body.split_horizontally(w.saturating_sub(self.legend_w));
        Ok((plot, Some(legend)))
    }

    /// A chart builder on the plot area with this frame's margins and label areas.
    pub(super) fn builder<'a, 'b>(
        &self,
        plot: &'a Area<'b>,
    ) -> ChartBuilder<'a, 'b, SVGBackend<'b>> {
        let mut b = ChartBuilder::on(plot);
        b.margin(MARGIN)
            .x_label_area_size(self.x_area)
            .y_label_area_size(self.y_area);
        b
    }
}

/// How a legend entry is drawn.
#[derive(Clone, Copy)]
pub(super) enum Swatch {
    /// A filled box (bars).
    Bar(RGBColor),
    /// A line (series of a line chart, bound marks).
    Line(RGBColor),
    /// A dashed line (reference lines).
    Dashed(RGBColor),
}

/// Draws plotters' legend (series labels) in `area`, right of the plot: a chart context
/// of its own on that area, whose series are the legend entries (they draw nothing).
pub(super) fn draw_legend(area: &Area<'_>, entries: &[(String, Swatch)]) -> DrawResult {
    use super::style::{font, GRID_COLOR, LEGEND_PX};
    let mut legend = ChartBuilder::on(area).build_cartesian_2d(0f64..1f64, 0f64..1f64)?;
    for (name, swatch) in entries {
        let swatch = *swatch;
        legend
            .draw_series(std::iter::empty::<Circle<(f64, f64), u32>>())?
            .label(name.clone())
            .legend(move |(x, y)| match swatch {
                Swatch::Bar(c) => {
                    Rectangle::new([(x + 2, y - 6), (x + 16, y + 6)], c.filled()).into_dyn()
                }
                Swatch::Line(c) => {
                    PathElement::new(vec![(x, y), (x + 18, y)], c.stroke_width(2)).into_dyn()
                }
                Swatch::Dashed(c) => plotters::element::DashedPathElement::new(
                    vec![(x, y), (x + 18, y)],
                    5,
                    3,
                    c.stroke_width(2),
                )
                .into_dyn(),
            });
    }
    legend
        .configure_series_labels()
        .position(SeriesLabelPosition::Coordinate(0, MARGIN as i32))
        .legend_area_size(22)
        .margin(6)
        .label_font(font(LEGEND_PX))
        .background_style(WHITE)
        .border_style(GRID_COLOR)
        .draw()
}

/// Says "no data" in the middle of the plot.
pub(super) fn draw_no_data<CT: plotters::coord::CoordTranslate>(
    root: &Area<'_>,
    chart: &ChartContext<'_, SVGBackend<'_>, CT>,
) -> DrawResult {
    use super::style::{font, MUTED_COLOR};
    use plotters::style::text_anchor::{HPos, Pos, VPos};
    let (xr, yr) = chart.plotting_area().get_pixel_range();
    let style = font(14.0)
        .color(&MUTED_COLOR)
        .pos(Pos::new(HPos::Center, VPos::Center));
    root.draw(&Text::new(
        "no data",
        ((xr.start + xr.end) / 2, (yr.start + yr.end) / 2),
        style,
    ))
}
