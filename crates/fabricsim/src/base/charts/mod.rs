//! Self-contained HTML reports with charts embedded as inline SVG.
//!
//! A report is a title and a list of [`Section`]s (headings, text, tables, bar charts and
//! line charts). [`render_html`] turns it into one HTML5 page that needs nothing else: the
//! page comes from a minijinja template (`templates/report.html`, HTML auto-escaping on),
//! the style sheet is inline, every chart is inline `<svg>` drawn by plotters, and there
//! are no scripts, images, fonts or network references. The output is a pure function of
//! the input (byte-identical on every run).
//!
//! Charts are drawn entirely with plotters' own parts: `ChartBuilder` and its mesh give
//! the axes, ticks, tick labels and axis descriptions, series are plotters elements
//! (`LineSeries`, `Rectangle` bars, `PathElement` marks) and the legend is plotters'
//! series labels. Plotters measures text with DejaVu Sans embedded in the library
//! (`font.rs`), so the layout does not depend on the machine's fonts.
//!
//! What a chart promises its reader:
//! - bar charts have a linear value axis that starts at zero (bars compare lengths);
//! - a bar chart may carry a [`Bound`] (the JCT lower bound) drawn as a black mark on
//!   every bar and named in the legend;
//! - at most [`MAX_SERIES_PER_PANEL`] series share a panel, each in its own palette
//!   colour; a chart with more is drawn as small multiples (one panel per run, or per
//!   chunk of series) that share their axis ranges;
//! - a note under the chart says what is plotted and how its percentiles are computed
//!   (see [`PERCENTILE_NOTE`]);
//! - a [`RefLine`] (a ratio of 1, the ideal slowdown, the line rate) is a dashed black
//!   line across the plot, named in the legend;
//! - line charts may put named categories on x (size buckets) or y (the ports of a
//!   timeline), draw intervals as error bars, label a log x axis with the swept values,
//!   and put their panels one under the other at full width;
//! - no label is shortened and none is drawn outside its panel ([`labels_fit`]).
//!
//! A [`Section::Details`] folds sections under a one-line summary, and a table of more
//! than [`FOLD_ROWS`] rows is folded under its caption (`<details>`, no script).
//!
//! Values that cannot be drawn (NaN, infinities, and zero or negative values on a log
//! axis) are skipped, never a panic.
//!
//! The code: `plan.rs` decides ranges and panels (pure, what tests assert on),
//! `bar_chart.rs` and `line_chart.rs` draw a panel with plotters, `refs.rs` draws
//! reference lines on either, `svg.rs` renders a
//! panel to an SVG string, `ticks.rs` formats tick labels, `style.rs` holds colours and
//! sizes, `page.rs` fills the template, `escape.rs` escapes the few strings written
//! outside the template, and `well_formed.rs` and `labels.rs` are checkers tests run on
//! pages (well-formed markup; every label whole and inside its panel).

mod bar_chart;
mod escape;
mod font;
mod labels;
mod line_chart;
mod page;
mod plan;
mod refs;
mod style;
mod svg;
mod ticks;
mod well_formed;

pub use bar_chart::bar_chart_panels;
pub use escape::escape_html;
pub use labels::labels_fit;
pub use line_chart::line_chart_panels;
pub use page::render_html;
pub use plan::{bar_plan, line_plan, Panel, Plan};
pub use well_formed::check_well_formed;

/// How every percentile in fabricsim's outputs is computed (`results::quantile`), for the
/// notes under charts that show percentiles.
pub const PERCENTILE_NOTE: &str = "Percentiles are nearest-rank: of n sorted values, \
    pq is the value at rank ceil(q·n) (the smallest value with at least q of them at or \
    below it), without interpolation.";

/// Most series drawn in one panel; a chart with more is split into small multiples.
pub const MAX_SERIES_PER_PANEL: usize = 6;

/// A horizontal reference line across a chart (the ideal slowdown of 1, a ratio of 1,
/// the line rate), drawn dashed in black and named in the legend.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RefLine {
    /// Its name in the legend, with its value ("line rate 100 Gbps").
    pub name: String,
    /// Its value on the y axis.
    pub y: f64,
}

/// A reference value drawn on every bar of a bar chart (e.g. the JCT lower bound).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Bound {
    /// Its name in the legend.
    pub name: String,
    /// One value per series and category, shaped like [`BarChart::series`].
    pub values: Vec<Vec<Option<f64>>>,
}

/// A chart of bars grouped by category (e.g. message sizes on x), one bar per series
/// (e.g. variants RoCE / GSE) in each group, on a linear value axis from zero.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct BarChart {
    /// Chart title, shown above the chart.
    pub title: String,
    /// Label of the x axis (the categories).
    pub x_label: String,
    /// Label of the y axis (the values), with its unit.
    pub y_label: String,
    /// Category names, one group of bars each, left to right.
    pub categories: Vec<String>,
    /// (series name, one value per category; None = missing bar)
    pub series: Vec<(String, Vec<Option<f64>>)>,
    /// A reference drawn as a mark on every bar.
    pub bound: Option<Bound>,
    /// Horizontal reference lines across the chart.
    pub refs: Vec<RefLine>,
    /// Shown under the chart: what is plotted, and how percentiles are computed.
    pub note: String,
}

/// Lines over a numeric x axis (rate vs time, queue vs time, CDFs).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LineChart {
    /// Chart title, shown above the chart.
    pub title: String,
    /// Label of the x axis, with its unit.
    pub x_label: String,
    /// Label of the y axis, with its unit.
    pub y_label: String,
    /// (series name, points (x, y) in x order)
    pub series: Vec<(String, Vec<(f64, f64)>)>,
    /// The panel of each series (e.g. its run) when the chart has more series than a
    /// panel holds; missing or empty: panels of consecutive series.
    pub groups: Vec<String>,
    /// Logarithmic x axis.
    pub log_x: bool,
    /// Logarithmic y axis.
    pub log_y: bool,
    /// Draw as a step function (for CDFs)
    pub step: bool,
    /// Categories on x: when not empty, the points' x are the indices 0, 1, ... of these
    /// names, which label the ticks (flow-size buckets).
    pub x_categories: Vec<String>,
    /// Ticks on a log x axis at these positions with these labels (the values of a
    /// sweep axis) instead of plotters' own; empty, or a linear axis: plotters' ticks.
    pub x_ticks: Vec<(f64, String)>,
    /// Categories on y: when not empty, the points' y are the indices 0, 1, ... of these
    /// names, which label the ticks (the ports of a pause timeline); lines are drawn
    /// thick, as bars, and the names need no legend.
    pub y_categories: Vec<String>,
    /// Horizontal reference lines across every panel.
    pub refs: Vec<RefLine>,
    /// Half-widths of an interval around each point, shaped like the series' points
    /// (drawn as error bars); empty: no intervals. A missing or non-finite half-width
    /// draws none.
    pub errors: Vec<Vec<f64>>,
    /// One panel per group of [`LineChart::groups`] even when the series would fit in
    /// one (per load, per port).
    pub split_groups: bool,
    /// Panels the page's full width ([`WIDE_PANEL_SIZE`]), one under the other, instead
    /// of small multiples two to a row (for a headline, whose legend names are long).
    pub full_width: bool,
    /// Shown under the chart: what is plotted, and how percentiles are computed.
    pub note: String,
}

impl LineChart {
    /// Lines against time in microseconds on linear axes (rate or queue vs time).
    pub fn over_time(
        title: impl Into<String>,
        y_label: &str,
        series: Vec<(String, Vec<(f64, f64)>)>,
    ) -> LineChart {
        LineChart {
            title: title.into(),
            x_label: "time (µs)".into(),
            y_label: y_label.into(),
            series,
            ..LineChart::default()
        }
    }
}

/// A table: header and rows of already formatted cells.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Table {
    /// Caption shown above the table (omitted when empty).
    pub title: String,
    /// Column names, with units for quantities.
    pub header: Vec<String>,
    /// Rows of cells; short rows are padded with empty cells.
    pub rows: Vec<Vec<String>>,
}

/// One block of the report, in order.
#[derive(Debug, Clone, PartialEq)]
pub enum Section {
    /// A section heading (`<h2>`).
    Heading(String),
    /// A paragraph of text; blank lines separate paragraphs.
    Text(String),
    /// A table.
    Table(Table),
    /// A grouped bar chart.
    Bar(BarChart),
    /// A line chart.
    Line(LineChart),
    /// Sections folded under a one-line summary (`<details>`), closed until opened.
    Details(String, Vec<Section>),
}

/// Tables with more rows than this are folded under their caption (`<details>`).
pub const FOLD_ROWS: usize = 12;

/// Size of a chart drawn as one panel, in pixels (the page is at most 980 px wide).
pub const CHART_SIZE: (u32, u32) = (900, 400);
/// Size of each panel of small multiples (two to a row).
pub const PANEL_SIZE: (u32, u32) = (440, 290);

/// Size of each panel of a chart drawn [`LineChart::full_width`] in several panels.
pub const WIDE_PANEL_SIZE: (u32, u32) = (900, 340);

/// The size of each of a chart's `panels`: the full chart alone, small multiples beside
/// each other.
fn panel_size(panels: usize) -> (u32, u32) {
    if panels > 1 {
        PANEL_SIZE
    } else {
        CHART_SIZE
    }
}

/// Draws a chart's `panels` with `draw(size)`: small multiples two to a row, unless
/// `full_width` or a label would be shortened in them (a legend name, an axis
/// description, a category), in which case at the page's full width, one under the
/// other, where labels have twice the room.
fn uncut(panels: usize, full_width: bool, draw: impl Fn((u32, u32)) -> Vec<String>) -> Vec<String> {
    if panels > 1 && full_width {
        return draw(WIDE_PANEL_SIZE);
    }
    let out = draw(panel_size(panels));
    if panels > 1 && out.iter().any(|svg| svg.contains('…')) {
        return draw(WIDE_PANEL_SIZE);
    }
    out
}

/// A panel's label: the chart's title, then the panel's own when it has one.
fn panel_label(chart: &str, panel: &str) -> String {
    if panel.is_empty() {
        chart.to_string()
    } else {
        format!("{chart}: {panel}")
    }
}

#[cfg(test)]
mod tests;
