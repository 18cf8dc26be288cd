//! Self-contained HTML reports with charts embedded as inline SVG.
//!
//! A report is a title and a list of [`Section`]s (headings, text, tables, bar charts and
//! line charts). [`render_html`] turns it into one HTML5 page that needs nothing else: the
//! style sheet is inline, every chart is an inline `<svg>` element drawn with `plotters`'
//! SVG backend, and there are no scripts, images, fonts or network references. The output
//! is a pure function of the input (byte-identical on every run).
//!
//! Charts are about 800x420 px, with a title, a legend naming every series, axis labels,
//! a colour-blind friendly palette (Okabe-Ito) and "nice" ticks: 1-2-5 steps on linear
//! axes, powers of ten (or 1-2-5 steps over narrow ranges) on logarithmic axes. Values that
//! cannot be drawn (NaN, infinities, and zero or negative values on a log axis) are
//! skipped, never a panic.
//!
//! [`check_well_formed`] is a small checker (a tag stack over the HTML, strict XML inside
//! `<svg>`) that tests elsewhere can run on a rendered page.
//!
//! The code is split by what it draws: `page.rs` assembles the HTML page and
//! `table.rs` its tables; `bar_chart.rs` and `line_chart.rs` draw the two kinds of chart
//! on what `chart.rs` gives every chart (SVG rendering, title, legend, axis
//! descriptions), with the axes from `axis.rs`, their tick labels from
//! `number_format.rs` and the colours and fonts from `style.rs`; `escape.rs` escapes
//! text and `well_formed.rs` is the checker.

mod axis;
mod bar_chart;
mod chart;
mod escape;
mod line_chart;
mod number_format;
mod page;
mod style;
mod table;
mod well_formed;

pub use bar_chart::bar_chart_svg;
pub use escape::escape_html;
pub use line_chart::line_chart_svg;
pub use page::render_html;
pub use well_formed::check_well_formed;

/// A chart of bars grouped by category (e.g. message sizes on x), one bar per series
/// (e.g. variants RoCE / GSE) in each group.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct BarChart {
    /// Chart title, drawn at the top of the chart.
    pub title: String,
    /// Label of the x axis (the categories).
    pub x_label: String,
    /// Label of the y axis (the values).
    pub y_label: String,
    /// Category names, one group of bars each, left to right.
    pub categories: Vec<String>,
    /// (series name, one value per category; None = missing bar)
    pub series: Vec<(String, Vec<Option<f64>>)>,
    /// Logarithmic y axis (values span decades, e.g. JCT from 1 MiB to 512 MiB messages)
    pub log_y: bool,
}

/// Lines over a numeric x axis (rate vs time, queue vs time, CDFs).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LineChart {
    /// Chart title, drawn at the top of the chart.
    pub title: String,
    /// Label of the x axis.
    pub x_label: String,
    /// Label of the y axis.
    pub y_label: String,
    /// (series name, points (x, y) in x order)
    pub series: Vec<(String, Vec<(f64, f64)>)>,
    /// Logarithmic x axis.
    pub log_x: bool,
    /// Logarithmic y axis.
    pub log_y: bool,
    /// Draw as a step function (for CDFs)
    pub step: bool,
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
            x_label: "time (us)".into(),
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
    /// Column names.
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
}

/// Width of every chart, in pixels.
pub const CHART_WIDTH: u32 = 800;
/// Height of every chart, in pixels.
pub const CHART_HEIGHT: u32 = 420;

#[cfg(test)]
mod tests;
