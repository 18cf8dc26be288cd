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

use std::ops::Range;
use std::path::Path;

use plotters::coord::ranged1d::{KeyPointHint, NoDefaultFormatting, Ranged, ValueFormatter};
use plotters::coord::Shift;
use plotters::element::DashedPathElement;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

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

/// Renders one chart to a standalone SVG document string (starts with `<svg`).
pub fn bar_chart_svg(c: &BarChart) -> String {
    render_svg(&c.title, |root| draw_bar_chart(root, c))
}

/// Renders one line chart to a standalone SVG document string (starts with `<svg`).
pub fn line_chart_svg(c: &LineChart) -> String {
    render_svg(&c.title, |root| draw_line_chart(root, c))
}

/// A complete self-contained HTML5 page: `<!DOCTYPE html>`, `<meta charset>`, a small
/// inline `<style>`, the title as `<h1>`, then every section in order; each chart is
/// embedded inline as its `<svg>` element (no `<img>`, no external files, no scripts, no
/// network), tables as `<table>` with `<thead>`/`<tbody>`. All text is HTML-escaped.
pub fn render_html(title: &str, sections: &[Section]) -> String {
    let mut out = String::with_capacity(4096 + sections.len() * 24 * 1024);
    out.push_str("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    out.push_str(
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>",
    );
    push_escaped(&mut out, title);
    out.push_str("</title>\n<style>\n");
    out.push_str(CSS);
    out.push_str("</style>\n</head>\n<body>\n<main>\n<h1>");
    push_escaped(&mut out, title);
    out.push_str("</h1>\n");
    for section in sections {
        match section {
            Section::Heading(h) => {
                out.push_str("<h2>");
                push_escaped(&mut out, h);
                out.push_str("</h2>\n");
            }
            Section::Text(t) => push_paragraphs(&mut out, t),
            Section::Table(t) => push_table(&mut out, t),
            Section::Bar(c) => push_figure(&mut out, &bar_chart_svg(c)),
            Section::Line(c) => push_figure(&mut out, &line_chart_svg(c)),
        }
    }
    out.push_str("</main>\n</body>\n</html>\n");
    out
}

/// Writes render_html to `path` (creating nothing else).
pub fn write_html(path: &Path, title: &str, sections: &[Section]) -> std::io::Result<()> {
    std::fs::write(path, render_html(title, sections))
}

/// Escapes `&`, `<`, `>`, `"` and `'` for HTML/XML text and attribute values; control
/// characters (which XML forbids) become spaces.
pub fn escape_html(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 8);
    push_escaped(&mut out, s);
    out
}

/// Checks that `html` is well formed: every non-void element is closed in order (a tag
/// stack; `meta`, `br`, `img` and the other HTML void elements take no end tag), raw text
/// elements (`style`, `script`, `title`, `textarea`) are closed, attributes are quoted
/// or simple and not repeated, `&` always starts a character reference, and no stray `<`
/// or `>` appears in text. Inside `<svg>` the rules are XML's: tag names are case
/// sensitive, every element is closed or self-closed (`/>`), attribute values are quoted,
/// and only the five XML named entities are allowed.
///
/// This is stricter than HTML5 parsing (which allows omitting some end tags) and is meant
/// for checking pages made by [`render_html`].
pub fn check_well_formed(html: &str) -> Result<(), String> {
    Checker::new(html).run()
}

// ---------------------------------------------------------------------------------------
// HTML

const CSS: &str = "\
body{font-family:system-ui,-apple-system,\"Segoe UI\",Roboto,\"Helvetica Neue\",Arial,sans-serif;\
margin:0;color:#222;background:#fff;line-height:1.45}
main{max-width:980px;margin:0 auto;padding:12px 24px 48px}
h1{font-size:1.7em;margin:0.6em 0 0.4em;overflow-wrap:anywhere}
h2{font-size:1.25em;margin:1.8em 0 0.5em;padding-bottom:3px;border-bottom:1px solid #ddd;\
overflow-wrap:anywhere}
p{margin:0.5em 0;overflow-wrap:anywhere}
figure.chart{margin:14px 0}
figure.chart svg{display:block;max-width:100%;height:auto}
.table-wrap{overflow-x:auto;margin:12px 0}
table{border-collapse:collapse;font-size:0.92em}
caption{caption-side:top;text-align:left;font-weight:600;padding:2px 0 6px}
th,td{border:1px solid #ccc;padding:3px 10px;text-align:left;vertical-align:top}
thead th{background:#eef1f5}
tbody tr:nth-child(even){background:#f8f9fb}
td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
";

fn push_escaped(out: &mut String, s: &str) {
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c if is_forbidden_char(c) => out.push(' '),
            c => out.push(c),
        }
    }
}

/// Characters that XML 1.0 does not allow in a document (or that would break a line-based
/// reading of it): control characters other than tab/newline, and U+FFFE/U+FFFF.
fn is_forbidden_char(c: char) -> bool {
    (c.is_control() && c != '\n' && c != '\t') || c == '\u{FFFE}' || c == '\u{FFFF}'
}

fn push_paragraphs(out: &mut String, text: &str) {
    fn flush(para: &mut String, out: &mut String) {
        let t = para.trim();
        if !t.is_empty() {
            out.push_str("<p>");
            push_escaped(out, t);
            out.push_str("</p>\n");
        }
        para.clear();
    }
    let mut para = String::new();
    for line in text.lines() {
        if line.trim().is_empty() {
            flush(&mut para, out);
        } else {
            if !para.is_empty() {
                para.push('\n');
            }
            para.push_str(line);
        }
    }
    flush(&mut para, out);
}

fn push_table(out: &mut String, t: &Table) {
    let ncols = t
        .rows
        .iter()
        .map(Vec::len)
        .chain(std::iter::once(t.header.len()))
        .max()
        .unwrap_or(0);
    out.push_str("<div class=\"table-wrap\">\n<table>\n");
    if !t.title.trim().is_empty() {
        out.push_str("<caption>");
        push_escaped(out, &t.title);
        out.push_str("</caption>\n");
    }
    out.push_str("<thead>\n<tr>");
    for i in 0..ncols {
        out.push_str("<th>");
        push_escaped(out, t.header.get(i).map_or("", String::as_str));
        out.push_str("</th>");
    }
    out.push_str("</tr>\n</thead>\n<tbody>\n");
    for row in &t.rows {
        out.push_str("<tr>");
        for i in 0..ncols {
            let cell = row.get(i).map_or("", String::as_str);
            if looks_numeric(cell) {
                out.push_str("<td class=\"num\">");
            } else {
                out.push_str("<td>");
            }
            push_escaped(out, cell);
            out.push_str("</td>");
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</tbody>\n</table>\n</div>\n");
}

/// A cell is numeric (right-aligned) when its first word, less a trailing `%` or `x`,
/// parses as a number: "12.5", "-3", "1.2e6 pkts", "87.5%", "1.9x".
fn looks_numeric(cell: &str) -> bool {
    let Some(word) = cell.split_whitespace().next() else {
        return false;
    };
    let word = word
        .strip_suffix('%')
        .or_else(|| word.strip_suffix('x'))
        .or_else(|| word.strip_suffix('×'))
        .unwrap_or(word);
    let starts_ok = word
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_digit() || c == '-' || c == '+' || c == '.');
    starts_ok && word.parse::<f64>().is_ok_and(f64::is_finite)
}

fn push_figure(out: &mut String, svg: &str) {
    out.push_str("<figure class=\"chart\">\n");
    out.push_str(svg);
    if !svg.ends_with('\n') {
        out.push('\n');
    }
    out.push_str("</figure>\n");
}

// ---------------------------------------------------------------------------------------
// Charts: shared layout

type Area<'a> = DrawingArea<SVGBackend<'a>, Shift>;
type DrawResult = Result<(), DrawingAreaErrorKind<std::io::Error>>;

/// Okabe-Ito colour-blind friendly palette, ordered for contrast on white.
const PALETTE: [RGBColor; 8] = [
    RGBColor(0x00, 0x72, 0xB2), // blue
    RGBColor(0xE6, 0x9F, 0x00), // orange
    RGBColor(0x00, 0x9E, 0x73), // bluish green
    RGBColor(0xD5, 0x5E, 0x00), // vermillion
    RGBColor(0xCC, 0x79, 0xA7), // reddish purple
    RGBColor(0x56, 0xB4, 0xE9), // sky blue
    RGBColor(0x33, 0x33, 0x33), // near black
    RGBColor(0xC9, 0xB6, 0x00), // darkened yellow
];
const TEXT_COLOR: RGBColor = RGBColor(0x22, 0x22, 0x22);
const GRID_COLOR: RGBColor = RGBColor(0xDD, 0xDD, 0xDD);
const AXIS_COLOR: RGBColor = RGBColor(0x55, 0x55, 0x55);
const MUTED_COLOR: RGBColor = RGBColor(0x88, 0x88, 0x88);

/// Pixel sizes of the fonts as they appear in the SVG.
const TITLE_PX: f64 = 17.0;
const LEGEND_PX: f64 = 13.0;
const DESC_PX: f64 = 13.0;
const TICK_PX: f64 = 12.0;
/// Rough average advance of a sans-serif character, as a fraction of the font size.
const CHAR_EM: f64 = 0.58;
/// The same for bold text.
const BOLD_CHAR_EM: f64 = 0.62;

/// Colour of series `i`: the palette, repeated.
fn series_color(i: usize) -> RGBColor {
    PALETTE[i % PALETTE.len()]
}

/// Series past the first round of the palette are drawn differently (dashed lines,
/// outlined light bars) so that no two series look the same.
fn second_round(i: usize) -> bool {
    (i / PALETTE.len()) % 2 == 1
}

fn lighten(c: RGBColor) -> RGBColor {
    let mix = |v: u8| ((u16::from(v) + 255) / 2) as u8;
    RGBColor(mix(c.0), mix(c.1), mix(c.2))
}

/// A text style whose SVG `font-size` is `px` (plotters divides the size by 1.24).
fn font(px: f64) -> TextStyle<'static> {
    font_styled(px, FontStyle::Normal)
}

fn font_styled(px: f64, style: FontStyle) -> TextStyle<'static> {
    TextStyle::from(("sans-serif", px * 1.24, style).into_font()).color(&TEXT_COLOR)
}

fn text_width(s: &str, px: f64) -> f64 {
    s.chars().count() as f64 * px * CHAR_EM
}

/// Replaces control characters by spaces, collapses runs of white space and truncates
/// to `max_chars` characters (with an ellipsis).
fn clean_label(s: &str, max_chars: usize) -> String {
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
enum Swatch {
    Bar,
    Line,
}

/// Renders with the SVG backend into a string and adds accessibility attributes.
fn render_svg(title: &str, draw: impl FnOnce(&Area<'_>) -> DrawResult) -> String {
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
fn draw_header<'a>(
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

/// An axis in plot space (log10 of the value for a logarithmic axis): range, tick
/// positions and their labels.
#[derive(Debug, Clone, PartialEq)]
struct Axis {
    lo: f64,
    hi: f64,
    ticks: Vec<f64>,
    labels: Vec<String>,
    log: bool,
}

/// Largest magnitude accepted; keeps every span and product finite.
const MAX_ABS: f64 = 1e300;
const MIN_LOG: f64 = 1e-300;

fn usable(v: f64, log: bool) -> bool {
    v.is_finite() && v.abs() <= MAX_ABS && (!log || v >= MIN_LOG)
}

fn pow10(k: i32) -> f64 {
    if k >= 0 {
        10f64.powi(k)
    } else {
        1.0 / 10f64.powi(-k)
    }
}

/// floor(log10(v)) for v > 0, corrected for rounding in log10.
fn decade_of(v: f64) -> i32 {
    let mut k = v.log10().floor() as i32;
    while k < 310 && pow10(k + 1) <= v {
        k += 1;
    }
    while k > -330 && pow10(k) > v {
        k -= 1;
    }
    k
}

impl Axis {
    /// Plot-space coordinate of a data value (caller checked it is usable).
    fn map(&self, v: f64) -> f64 {
        if self.log {
            v.log10()
        } else {
            v
        }
    }

    fn label(&self, v: f64) -> String {
        let mut best: Option<(f64, &String)> = None;
        for (t, l) in self.ticks.iter().zip(&self.labels) {
            let d = (t - v).abs();
            if best.is_none_or(|(bd, _)| d < bd) {
                best = Some((d, l));
            }
        }
        best.map(|(_, l)| l.clone()).unwrap_or_default()
    }

    fn max_label_chars(&self) -> usize {
        self.labels
            .iter()
            .map(|l| l.chars().count())
            .max()
            .unwrap_or(1)
    }

    /// A linear axis covering [min, max] (both finite, min <= max) with 1-2-5 steps.
    fn linear(mut min: f64, mut max: f64, include_zero: bool) -> Axis {
        if include_zero {
            min = min.min(0.0);
            max = max.max(0.0);
        }
        let scale = min.abs().max(max.abs());
        if max - min <= scale * 1e-9 {
            if scale == 0.0 {
                max = 1.0;
            } else {
                let pad = scale * 0.1;
                if include_zero && min >= 0.0 {
                    max += pad;
                } else if include_zero && max <= 0.0 {
                    min -= pad;
                } else {
                    min -= pad;
                    max += pad;
                }
            }
        }
        let raw = (max - min) / 5.0;
        let mut e = decade_of(raw);
        let r = raw / pow10(e);
        let m = if r <= 1.0 + 1e-9 {
            1.0
        } else if r <= 2.0 + 1e-9 {
            2.0
        } else if r <= 5.0 + 1e-9 {
            5.0
        } else {
            e += 1;
            1.0
        };
        let step = m * pow10(e);
        let i0 = (min / step + 1e-9).floor();
        let i1 = (max / step - 1e-9).ceil().max(i0 + 1.0);
        let n = (i1 - i0) as i64;
        let ticks: Vec<f64> = if (1..=40).contains(&n) {
            (0..=n).map(|i| (i0 + i as f64) * step).collect()
        } else {
            vec![min, max]
        };
        let lo = ticks.first().copied().unwrap_or(min);
        let hi = ticks.last().copied().unwrap_or(max);
        let labels = linear_labels(&ticks, e);
        Axis {
            lo,
            hi,
            ticks,
            labels,
            log: false,
        }
    }

    /// A logarithmic axis covering [min, max] (0 < min <= max, both usable). With
    /// `strict_lo` the lower end is strictly below `min` (so that bars from the bottom
    /// of the axis have a visible height).
    fn log(min: f64, max: f64, strict_lo: bool) -> Axis {
        const M125: &[f64] = &[1.0, 2.0, 5.0];
        const M19: &[f64] = &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0];
        let kmin = decade_of(min);
        let kmax = decade_of(max);
        if kmax - kmin <= 3 {
            for mantissas in [M125, M19] {
                // Candidate tick values m * 10^k around the data, in increasing order.
                let seq: Vec<(f64, i32)> = (kmin - 1..=kmax + 1)
                    .flat_map(|k| mantissas.iter().map(move |&m| (m, k)))
                    .collect();
                let val = |&(m, k): &(f64, i32)| m * pow10(k);
                let lo_idx = seq.iter().rposition(|t| {
                    let v = val(t);
                    if strict_lo {
                        v < min * (1.0 - 1e-9)
                    } else {
                        v <= min * (1.0 + 1e-9)
                    }
                });
                let hi_idx = seq.iter().position(|t| val(t) >= max * (1.0 - 1e-9));
                let (Some(lo_idx), Some(hi_idx)) = (lo_idx, hi_idx) else {
                    continue;
                };
                let hi_idx = hi_idx.max(lo_idx + 1).min(seq.len() - 1);
                if hi_idx <= lo_idx {
                    continue;
                }
                let span = val(&seq[hi_idx]) / val(&seq[lo_idx]);
                let ticks = &seq[lo_idx..=hi_idx];
                if span > 120.0 || (ticks.len() < 4 && mantissas.len() == 3) {
                    continue;
                }
                return Axis::log_from(ticks);
            }
        }
        // Decades, every `stride`-th labelled.
        let mut dlo = kmin;
        if strict_lo && pow10(dlo) >= min * (1.0 - 1e-9) {
            dlo -= 1;
        }
        let mut dhi = kmax;
        if pow10(dhi) < max * (1.0 - 1e-9) {
            dhi += 1;
        }
        dhi = dhi.max(dlo + 1);
        let n = dhi - dlo;
        let stride = ((n + 7) / 8).max(1);
        let dhi = dlo + (n + stride - 1) / stride * stride;
        let ticks: Vec<(f64, i32)> = (0..=(dhi - dlo) / stride)
            .map(|i| (1.0, dlo + i * stride))
            .collect();
        Axis::log_from(&ticks)
    }

    fn log_from(ticks: &[(f64, i32)]) -> Axis {
        let pos: Vec<f64> = ticks
            .iter()
            .map(|&(m, k)| f64::from(k) + m.log10())
            .collect();
        let labels = ticks.iter().map(|&(m, k)| fmt_sig(m * pow10(k))).collect();
        Axis {
            lo: pos.first().copied().unwrap_or(0.0),
            hi: pos.last().copied().unwrap_or(1.0),
            ticks: pos,
            labels,
            log: true,
        }
    }

    /// An axis for the usable values in `values`, or a default one when there are none.
    /// `zero` says when a linear axis starts at zero: bars always start there; lines do
    /// when their values are not negative and zero is not far below them (the smallest
    /// value is at most half the largest).
    fn for_values(values: impl Iterator<Item = f64>, log: bool, zero: Zero) -> Axis {
        let mut range: Option<(f64, f64)> = None;
        for v in values.filter(|&v| usable(v, log)) {
            range = Some(match range {
                None => (v, v),
                Some((a, b)) => (a.min(v), b.max(v)),
            });
        }
        let bars = zero == Zero::Bars;
        match (range, log) {
            (Some((a, b)), true) => Axis::log(a, b, bars),
            (None, true) => Axis::log(1.0, 10.0, false),
            (Some((a, b)), false) => {
                let with_zero = match zero {
                    Zero::Bars => true,
                    Zero::IfNear => a >= 0.0 && a <= b * 0.5,
                    Zero::No => false,
                };
                Axis::linear(a, b, with_zero)
            }
            (None, false) => Axis::linear(0.0, 1.0, true),
        }
    }
}

/// The axis is its own plotters coordinate: ticks are exactly `ticks`, labelled with
/// `labels`, and no light grid lines.
impl Ranged for Axis {
    type FormatOption = NoDefaultFormatting;
    type ValueType = f64;

    fn map(&self, v: &f64, limit: (i32, i32)) -> i32 {
        let span = self.hi - self.lo;
        let len = limit.1 - limit.0;
        if span <= 0.0 || !span.is_finite() || len == 0 {
            return limit.0 + len / 2;
        }
        let frac = ((v - self.lo) / span).clamp(-1.0, 2.0);
        if !frac.is_finite() {
            return limit.0;
        }
        let px = f64::from(len) * frac;
        limit.0
            + if len > 0 {
                (px + 1e-3).floor()
            } else {
                (px - 1e-3).ceil()
            } as i32
    }

    fn key_points<H: KeyPointHint>(&self, hint: H) -> Vec<f64> {
        if hint.weight().allow_light_points() {
            Vec::new()
        } else {
            self.ticks.clone()
        }
    }

    fn range(&self) -> Range<f64> {
        self.lo..self.hi
    }
}

impl ValueFormatter<f64> for Axis {
    fn format_ext(&self, value: &f64) -> String {
        self.label(*value)
    }
}

/// Whether a linear axis is stretched to include zero.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Zero {
    /// Always, and a log axis ends strictly below the smallest value (bar charts).
    Bars,
    /// When the values are not negative and the smallest is at most half the largest.
    IfNear,
    /// Never.
    No,
}

const SI: [&str; 5] = ["", "k", "M", "G", "T"];

/// Labels for linear ticks `i * step` where step = m * 10^e: one unit suffix and one
/// number of decimals for the whole axis.
fn linear_labels(ticks: &[f64], e: i32) -> Vec<String> {
    let maxabs = ticks.iter().fold(0.0f64, |a, t| a.max(t.abs()));
    if !(1e-3..1e15).contains(&maxabs) {
        return ticks.iter().map(|&t| fmt_sig(t)).collect();
    }
    // The largest unit not above the largest tick that needs at most one decimal.
    let k = if maxabs >= 1000.0 {
        (decade_of(maxabs) / 3)
            .min((e + 1).div_euclid(3))
            .clamp(0, 4)
    } else {
        0
    };
    let unit = pow10(3 * k);
    let decimals = (3 * k - e).clamp(0, 12) as usize;
    ticks
        .iter()
        .map(|&t| {
            if t == 0.0 || t.abs() < unit * 1e-12 {
                // "0.0" among "0.2", "0.4"...; a bare "0" among "0.5G", "1.0G"...
                if k == 0 {
                    format!("{:.*}", decimals, 0.0)
                } else {
                    "0".to_string()
                }
            } else {
                format!("{:.*}{}", decimals, t / unit, SI[k as usize])
            }
        })
        .collect()
}

/// Formats `v` with up to three significant digits: SI suffixes from 1e3 to below 1e15
/// ("2k", "1.5M", "10G"), plain decimals from 1e-3 ("0.25") and scientific notation
/// outside ("1e-6", "2.5e18").
fn fmt_sig(v: f64) -> String {
    if v == 0.0 || !v.is_finite() {
        return "0".to_string();
    }
    let a = v.abs();
    if !(1e-3..1e15).contains(&a) {
        let s = format!("{v:.2e}");
        return match s.split_once('e') {
            Some((mant, exp)) => format!("{}e{}", trim_zeros(mant), exp),
            None => s,
        };
    }
    let k = if a >= 1000.0 {
        (decade_of(a) / 3).clamp(1, 4)
    } else {
        0
    };
    let scaled = v / pow10(3 * k);
    let decimals = (2 - decade_of(scaled.abs())).clamp(0, 6) as usize;
    format!(
        "{}{}",
        trim_zeros(&format!("{scaled:.decimals$}")),
        SI[k as usize]
    )
}

fn trim_zeros(s: &str) -> String {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s.to_string()
    }
}

/// Axis descriptions shortened to fit the plot (which starts `top` pixels down), and the
/// label area sizes: (x description, y description, x area height, y area width).
fn axis_texts(x_label: &str, y_label: &str, y: &Axis, top: i32) -> (String, String, u32, u32) {
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

fn draw_no_data(root: &Area<'_>, top: i32) -> DrawResult {
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

// ---------------------------------------------------------------------------------------
// Bar chart

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

// ---------------------------------------------------------------------------------------
// Line chart

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

// ---------------------------------------------------------------------------------------
// Well-formedness checker

const VOID_ELEMENTS: &[&str] = &[
    "area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track",
    "wbr",
];
const RAW_TEXT_ELEMENTS: &[&str] = &["script", "style"];
const ESCAPABLE_RAW_TEXT_ELEMENTS: &[&str] = &["textarea", "title"];
const XML_ENTITIES: &[&str] = &["amp", "lt", "gt", "quot", "apos"];

struct Checker<'a> {
    src: &'a str,
    pos: usize,
    /// Open elements: (name, in XML (SVG) mode).
    stack: Vec<(String, bool)>,
}

impl<'a> Checker<'a> {
    fn new(src: &'a str) -> Self {
        Checker {
            src,
            pos: 0,
            stack: Vec::new(),
        }
    }

    fn in_xml(&self) -> bool {
        self.stack.last().is_some_and(|(_, xml)| *xml)
    }

    fn err(&self, at: usize, msg: &str) -> String {
        let start = self.src.floor_char_boundary_compat(at.saturating_sub(40));
        let end = self
            .src
            .floor_char_boundary_compat((at + 40).min(self.src.len()));
        format!(
            "byte {at}: {msg} (near {:?}); open: {}",
            &self.src[start..end],
            self.stack
                .iter()
                .map(|(n, _)| n.as_str())
                .collect::<Vec<_>>()
                .join(" > ")
        )
    }

    fn rest(&self) -> &'a str {
        &self.src[self.pos..]
    }

    fn run(mut self) -> Result<(), String> {
        while self.pos < self.src.len() {
            let rest = self.rest();
            let Some(off) = rest.find(['<', '>', '&']) else {
                self.check_text_chars(rest, self.pos)?;
                break;
            };
            self.check_text_chars(&rest[..off], self.pos)?;
            self.pos += off;
            match self.src.as_bytes()[self.pos] {
                b'&' => self.entity()?,
                b'>' => return Err(self.err(self.pos, "unescaped '>' in text")),
                _ => self.markup()?,
            }
        }
        if let Some((name, _)) = self.stack.last() {
            return Err(self.err(self.src.len(), &format!("<{name}> is never closed")));
        }
        Ok(())
    }

    fn check_text_chars(&self, text: &str, at: usize) -> Result<(), String> {
        match text.char_indices().find(|&(_, c)| is_forbidden_char(c)) {
            Some((i, c)) => Err(self.err(at + i, &format!("forbidden character {c:?}"))),
            None => Ok(()),
        }
    }

    /// Checks a character reference at `self.pos` (which is '&') and moves past it.
    fn entity(&mut self) -> Result<(), String> {
        let at = self.pos;
        let len = entity_len(&self.src[at..], self.in_xml()).map_err(|m| self.err(at, &m))?;
        self.pos += len;
        Ok(())
    }

    fn markup(&mut self) -> Result<(), String> {
        let at = self.pos;
        let rest = self.rest();
        if let Some(body) = rest.strip_prefix("<!--") {
            let end = body
                .find("-->")
                .ok_or_else(|| self.err(at, "unterminated comment"))?;
            self.pos += 4 + end + 3;
            return Ok(());
        }
        if rest.starts_with("<!") || rest.starts_with("<?") {
            if self.in_xml() || !self.stack.is_empty() {
                return Err(self.err(at, "declaration inside the document"));
            }
            let end = rest
                .find('>')
                .ok_or_else(|| self.err(at, "unterminated declaration"))?;
            self.pos += end + 1;
            return Ok(());
        }
        if let Some(body) = rest.strip_prefix("</") {
            let end = body
                .find('>')
                .ok_or_else(|| self.err(at, "unterminated end tag"))?;
            let raw = body[..end].trim_end();
            if !is_name(raw) {
                return Err(self.err(at, &format!("bad end tag name {raw:?}")));
            }
            let Some((open, xml)) = self.stack.pop() else {
                return Err(self.err(at, &format!("</{raw}> closes nothing")));
            };
            let matches = if xml {
                open == raw
            } else {
                open == raw.to_ascii_lowercase()
            };
            if !matches {
                self.stack.push((open.clone(), xml));
                return Err(self.err(at, &format!("</{raw}> closes <{open}>")));
            }
            self.pos += 2 + end + 1;
            return Ok(());
        }
        self.start_tag()
    }

    fn start_tag(&mut self) -> Result<(), String> {
        let at = self.pos;
        let bytes = self.src.as_bytes();
        let mut i = at + 1;
        while i < bytes.len() && is_name_byte(bytes[i]) {
            i += 1;
        }
        let raw_name = &self.src[at + 1..i];
        if !is_name(raw_name) {
            return Err(self.err(at, "unescaped '<' in text"));
        }
        let xml = self.in_xml() || raw_name == "svg";
        let name = if xml {
            raw_name.to_string()
        } else {
            raw_name.to_ascii_lowercase()
        };
        // Attributes.
        let mut seen: Vec<String> = Vec::new();
        let self_closing;
        loop {
            let ws_start = i;
            while i < bytes.len() && bytes[i].is_ascii_whitespace() {
                i += 1;
            }
            match bytes.get(i) {
                None => return Err(self.err(at, "unterminated start tag")),
                Some(b'>') => {
                    self_closing = false;
                    i += 1;
                    break;
                }
                Some(b'/') if bytes.get(i + 1) == Some(&b'>') => {
                    self_closing = true;
                    i += 2;
                    break;
                }
                Some(_) => {}
            }
            if i == ws_start {
                return Err(self.err(i, "attributes must be separated by white space"));
            }
            let a0 = i;
            while i < bytes.len() && is_name_byte(bytes[i]) {
                i += 1;
            }
            let attr = &self.src[a0..i];
            if !is_name(attr) {
                return Err(self.err(a0, "bad attribute name"));
            }
            let key = if xml {
                attr.to_string()
            } else {
                attr.to_ascii_lowercase()
            };
            if seen.contains(&key) {
                return Err(self.err(a0, &format!("duplicate attribute {attr:?}")));
            }
            seen.push(key);
            if bytes.get(i) != Some(&b'=') {
                if xml {
                    return Err(self.err(a0, "attribute without a value in SVG"));
                }
                continue;
            }
            i += 1;
            match bytes.get(i) {
                Some(&q) if q == b'"' || q == b'\'' => {
                    let v0 = i + 1;
                    let len = self.src[v0..]
                        .find(q as char)
                        .ok_or_else(|| self.err(a0, "unterminated attribute value"))?;
                    self.check_attr_value(&self.src[v0..v0 + len], v0, xml)?;
                    i = v0 + len + 1;
                }
                _ if xml => return Err(self.err(a0, "unquoted attribute value in SVG")),
                _ => {
                    let v0 = i;
                    while i < bytes.len()
                        && !bytes[i].is_ascii_whitespace()
                        && !b"\"'=<>`".contains(&bytes[i])
                    {
                        i += 1;
                    }
                    if i == v0 {
                        return Err(self.err(a0, "empty unquoted attribute value"));
                    }
                    self.check_attr_value(&self.src[v0..i], v0, xml)?;
                }
            }
        }
        self.pos = i;
        if xml {
            if !self_closing {
                self.stack.push((name, true));
            }
            return Ok(());
        }
        if VOID_ELEMENTS.contains(&name.as_str()) {
            return Ok(());
        }
        if self_closing {
            return Err(self.err(at, &format!("<{name}/> is not a void element")));
        }
        let raw = RAW_TEXT_ELEMENTS.contains(&name.as_str());
        if raw || ESCAPABLE_RAW_TEXT_ELEMENTS.contains(&name.as_str()) {
            // Content runs to the matching end tag; only references are checked.
            let close = format!("</{name}");
            let lower = self.rest().to_ascii_lowercase();
            let end = lower
                .find(&close)
                .ok_or_else(|| self.err(at, &format!("<{name}> is never closed")))?;
            let content_at = self.pos;
            let content = &self.src[content_at..content_at + end];
            if !raw {
                self.check_attr_value(content, content_at, false)?;
            }
            self.pos = content_at + end;
        }
        self.stack.push((name, false));
        Ok(())
    }

    fn check_attr_value(&self, v: &str, at: usize, xml: bool) -> Result<(), String> {
        self.check_text_chars(v, at)?;
        let mut i = 0;
        while let Some(off) = v[i..].find(['&', '<']) {
            let p = i + off;
            if v.as_bytes()[p] == b'<' {
                if xml {
                    return Err(self.err(at + p, "'<' in an SVG attribute value"));
                }
                i = p + 1;
                continue;
            }
            let len = entity_len(&v[p..], xml).map_err(|m| self.err(at + p, &m))?;
            i = p + len;
        }
        Ok(())
    }
}

/// Length of the character reference at the start of `s` (which starts with '&').
fn entity_len(s: &str, xml: bool) -> Result<usize, String> {
    let b = s.as_bytes();
    let mut i = 1;
    if b.get(1) == Some(&b'#') {
        i = 2;
        let hex = matches!(b.get(2), Some(b'x' | b'X'));
        if hex {
            i = 3;
        }
        let d0 = i;
        while i < b.len()
            && (if hex {
                b[i].is_ascii_hexdigit()
            } else {
                b[i].is_ascii_digit()
            })
        {
            i += 1;
        }
        if i == d0 || b.get(i) != Some(&b';') {
            return Err("bad numeric character reference".to_string());
        }
        let digits = &s[d0..i];
        let code = u32::from_str_radix(digits, if hex { 16 } else { 10 }).ok();
        if code.and_then(char::from_u32).is_none_or(is_forbidden_char) {
            return Err(format!(
                "character reference to an invalid character {digits}"
            ));
        }
        return Ok(i + 1);
    }
    while i < b.len() && b[i].is_ascii_alphanumeric() {
        i += 1;
    }
    if i == 1 || b.get(i) != Some(&b';') {
        return Err("unescaped '&'".to_string());
    }
    let name = &s[1..i];
    if xml && !XML_ENTITIES.contains(&name) {
        return Err(format!("entity &{name}; is not defined in XML"));
    }
    Ok(i + 1)
}

fn is_name_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'-' || b == b':' || b == b'_' || b == b'.'
}

fn is_name(s: &str) -> bool {
    s.as_bytes().first().is_some_and(u8::is_ascii_alphabetic) && s.bytes().all(is_name_byte)
}

/// `str::floor_char_boundary` is unstable; this is the same for error messages.
trait FloorCharBoundary {
    fn floor_char_boundary_compat(&self, i: usize) -> usize;
}

impl FloorCharBoundary for str {
    fn floor_char_boundary_compat(&self, mut i: usize) -> usize {
        i = i.min(self.len());
        while !self.is_char_boundary(i) {
            i -= 1;
        }
        i
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const MIB: f64 = 1024.0 * 1024.0;

    fn sizes() -> Vec<String> {
        ["1 MiB", "4 MiB", "16 MiB", "64 MiB", "256 MiB", "512 MiB"]
            .iter()
            .map(|s| s.to_string())
            .collect()
    }

    fn jct_chart() -> BarChart {
        let cats = sizes();
        let mult = [1.0, 4.0, 16.0, 64.0, 256.0, 512.0];
        BarChart {
            title: "Job completion time, all-reduce".into(),
            x_label: "message size".into(),
            y_label: "JCT (µs)".into(),
            categories: cats,
            series: vec![
                (
                    "RoCE".into(),
                    mult.iter().map(|m| Some(m * MIB / 50.0 * 1.3)).collect(),
                ),
                (
                    "GSE".into(),
                    mult.iter().map(|m| Some(m * MIB / 50.0)).collect(),
                ),
                (
                    "GSE + spraying".into(),
                    mult.iter()
                        .enumerate()
                        .map(|(i, m)| (i != 2).then_some(m * MIB / 50.0 * 0.9))
                        .collect(),
                ),
            ],
            log_y: true,
        }
    }

    fn throughput_chart() -> BarChart {
        BarChart {
            title: "Goodput".into(),
            x_label: "variant".into(),
            y_label: "Gbit/s".into(),
            categories: vec![
                "incast 8:1".into(),
                "incast 16:1".into(),
                "all-to-all".into(),
            ],
            series: vec![
                ("RoCE".into(), vec![Some(310.5), Some(280.0), Some(350.2)]),
                ("GSE".into(), vec![Some(390.0), Some(385.0), Some(392.1)]),
            ],
            log_y: false,
        }
    }

    fn cdf_chart() -> LineChart {
        let cdf = |scale: f64| -> Vec<(f64, f64)> {
            let n = 200;
            (0..n)
                .map(|i| {
                    let p = (i + 1) as f64 / n as f64;
                    (scale * (1.0 + 1000.0 * p.powi(6)), p)
                })
                .collect()
        };
        LineChart {
            title: "FCT CDF".into(),
            x_label: "flow completion time (ns)".into(),
            y_label: "fraction of flows".into(),
            series: vec![("RoCE".into(), cdf(2000.0)), ("GSE".into(), cdf(1500.0))],
            log_x: true,
            log_y: true,
            step: true,
        }
    }

    fn table() -> Table {
        Table {
            title: "Summary".into(),
            header: vec!["variant".into(), "JCT (ms)".into(), "drops".into()],
            rows: vec![
                vec!["RoCE".into(), "12.5".into(), "0".into()],
                vec!["GSE".into(), "9.8".into(), "3".into()],
                vec!["short row".into()],
            ],
        }
    }

    fn sample_sections() -> Vec<Section> {
        vec![
            Section::Heading("Results".into()),
            Section::Text("First paragraph.\n\nSecond paragraph.".into()),
            Section::Bar(jct_chart()),
            Section::Bar(throughput_chart()),
            Section::Line(cdf_chart()),
            Section::Table(table()),
        ]
    }

    /// The text content of every `<text>` element of an SVG, trimmed and unescaped.
    fn svg_texts(svg: &str) -> Vec<String> {
        let mut out = Vec::new();
        let mut rest = svg;
        while let Some(i) = rest.find("<text") {
            rest = &rest[i..];
            let Some(gt) = rest.find('>') else { break };
            let Some(end) = rest.find("</text>") else {
                break;
            };
            out.push(
                rest[gt + 1..end]
                    .trim()
                    .replace("&lt;", "<")
                    .replace("&gt;", ">")
                    .replace("&quot;", "\"")
                    .replace("&apos;", "'")
                    .replace("&amp;", "&"),
            );
            rest = &rest[end..];
        }
        out
    }

    #[test]
    fn page_structure() {
        let html = render_html("fabricsim report", &sample_sections());
        assert!(html.starts_with("<!DOCTYPE html>"), "{}", &html[..40]);
        assert!(html.contains("<meta charset=\"utf-8\">"));
        assert!(html.contains("<style>"));
        assert!(html.contains("<h1>fabricsim report</h1>"));
        assert_eq!(html.matches("<svg").count(), 3, "one <svg per chart");
        assert_eq!(html.matches("</svg>").count(), 3);
        assert_eq!(html.matches("<table>").count(), 1);
        assert_eq!(html.matches("</table>").count(), 1);
        assert_eq!(html.matches("<tr>").count(), 4, "header + 3 rows");
        assert_eq!(html.matches("</tr>").count(), 4);
        assert_eq!(html.matches("<thead>").count(), 1);
        assert_eq!(html.matches("<tbody>").count(), 1);
        // short rows are padded
        assert_eq!(html.matches("<td").count(), 9);
        assert!(html.contains("<td class=\"num\">12.5</td>"));
        assert!(html.contains("<td>RoCE</td>"));
        assert_eq!(html.matches("<p>").count(), 2);
        // self-contained
        for banned in [
            "<img", "<script", "<link", "src=", "href=", "url(", "@import",
        ] {
            assert!(!html.contains(banned), "page contains {banned}");
        }
        let http: Vec<_> = html.match_indices("http").collect();
        assert!(
            html.matches("http").count() == html.matches("http://www.w3.org/2000/svg").count(),
            "only the SVG namespace may name a URL: {http:?}"
        );
        check_well_formed(&html).unwrap();
        // sections in order
        let order = [
            "<h2>Results",
            "<p>First",
            "Job completion time",
            "Goodput",
            "FCT CDF",
            "<table>",
        ];
        let pos: Vec<usize> = order.iter().map(|s| html.find(s).unwrap()).collect();
        assert!(pos.windows(2).all(|w| w[0] < w[1]), "{pos:?}");
    }

    #[test]
    fn checker_accepts_and_rejects() {
        let ok = [
            "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>a &amp; b</title></head>\
             <body><p>x<br>y</p><img src=\"a.png\" alt=a><hr/></body></html>",
            "<div class='a' hidden><!-- <b> --></div>",
            "<style>a > b { color: red }</style>",
            "<svg viewBox=\"0 0 1 1\"><rect x=\"0\"/><text>a &lt; b &#38; &#x26;</text></svg>",
            "<svg><linearGradient id=\"g\"></linearGradient></svg>",
            "<p>&nbsp;caf\u{e9}</p>",
        ];
        for s in ok {
            assert_eq!(check_well_formed(s), Ok(()), "{s}");
        }
        let bad = [
            ("<div><span></div></span>", "closes"),
            ("<div>", "never closed"),
            ("</div>", "closes nothing"),
            ("<p>a & b</p>", "&"),
            ("<p>a < b</p>", "<"),
            ("<p>a > b</p>", ">"),
            ("<div/>", "void"),
            ("<svg><rect></svg>", "closes"),
            ("<svg><rect x=1/></svg>", "unquoted"),
            ("<svg><text>&nbsp;</text></svg>", "XML"),
            ("<svg><linearGradient></lineargradient></svg>", "closes"),
            ("<p class=\"a\" class=\"b\"></p>", "duplicate"),
            ("<p title=\"a</p>", "unterminated"),
            ("<title>x", "never closed"),
            ("<p>\u{1}</p>", "forbidden"),
            ("<p>&#0;</p>", "invalid"),
        ];
        for (s, why) in bad {
            let e = check_well_formed(s).expect_err(s);
            assert!(e.contains(why), "{s}: {e}");
        }
        // a void element is not pushed: its "end" is an error
        assert!(check_well_formed("<br></br>").is_err());
    }

    #[test]
    fn well_formed_page_with_all_kinds() {
        let html = render_html("all kinds", &sample_sections());
        check_well_formed(&html).unwrap();
        for svg in [
            bar_chart_svg(&jct_chart()),
            bar_chart_svg(&throughput_chart()),
            line_chart_svg(&cdf_chart()),
        ] {
            assert!(svg.starts_with("<svg"));
            check_well_formed(&svg).unwrap();
        }
    }

    #[test]
    fn escaping() {
        let nasty = "<b>&\"";
        let mut chart = throughput_chart();
        chart.title = nasty.into();
        chart.categories[0] = nasty.into();
        chart.series[0].0 = nasty.into();
        chart.x_label = nasty.into();
        let mut t = table();
        t.title = nasty.into();
        t.header[0] = nasty.into();
        t.rows[0][0] = nasty.into();
        let sections = vec![
            Section::Heading(nasty.into()),
            Section::Text(nasty.into()),
            Section::Bar(chart.clone()),
            Section::Table(t),
        ];
        let html = render_html(nasty, &sections);
        assert!(!html.contains(nasty));
        assert!(!html.contains("<b>"));
        assert!(html.contains("<title>&lt;b&gt;&amp;&quot;</title>"));
        assert!(html.contains("<h1>&lt;b&gt;&amp;&quot;</h1>"));
        assert!(html.contains("<h2>&lt;b&gt;&amp;&quot;</h2>"));
        assert!(html.contains("<th>&lt;b&gt;&amp;&quot;</th>"));
        assert!(html.contains("aria-label=\"&lt;b&gt;&amp;&quot;\""));
        check_well_formed(&html).unwrap();
        let svg = bar_chart_svg(&chart);
        let texts = svg_texts(&svg);
        assert!(
            texts.iter().filter(|t| *t == nasty).count() >= 4,
            "{texts:?}"
        );
        assert_eq!(escape_html("a'b\u{7}"), "a&#39;b ");
    }

    #[test]
    fn deterministic() {
        let a = render_html("r", &sample_sections());
        let b = render_html("r", &sample_sections());
        assert_eq!(a, b);
        assert_eq!(bar_chart_svg(&jct_chart()), bar_chart_svg(&jct_chart()));
        assert_eq!(line_chart_svg(&cdf_chart()), line_chart_svg(&cdf_chart()));
    }

    #[test]
    fn bar_chart_names_every_category_and_series() {
        for chart in [jct_chart(), throughput_chart()] {
            let texts = svg_texts(&bar_chart_svg(&chart));
            for name in chart
                .categories
                .iter()
                .chain(chart.series.iter().map(|s| &s.0))
            {
                assert!(texts.contains(name), "{name} missing from {texts:?}");
            }
            assert!(texts.contains(&chart.title));
            assert!(texts.contains(&chart.x_label));
            assert!(texts.contains(&chart.y_label));
        }
    }

    #[test]
    fn bars_are_grouped_side_by_side() {
        let svg = bar_chart_svg(&throughput_chart());
        // 2 series x 3 categories = 6 bars + 2 legend swatches, all filled with a
        // palette colour.
        let blue = svg.matches("fill=\"#0072B2\"").count();
        let orange = svg.matches("fill=\"#E69F00\"").count();
        assert_eq!((blue, orange), (4, 4), "{svg}");
        // bars of one group are adjacent and do not overlap: collect x of the rects
        let rects: Vec<(i32, i32, String)> = svg
            .lines()
            .filter(|l| l.starts_with("<rect") && l.contains("fill=\"#"))
            .filter_map(|l| {
                let attr = |k: &str| {
                    let i = l.find(&format!(" {k}=\""))? + k.len() + 3;
                    let j = l[i..].find('"')?;
                    Some(l[i..i + j].to_string())
                };
                Some((
                    attr("x")?.parse().ok()?,
                    attr("width")?.parse().ok()?,
                    attr("fill")?,
                ))
            })
            .filter(|(_, w, _)| *w > 0)
            .collect();
        let mut bars: Vec<_> = rects.iter().filter(|r| r.2 != "#FFFFFF").skip(2).collect();
        assert_eq!(bars.len(), 6, "{rects:?}");
        bars.sort();
        for pair in bars.chunks(2) {
            assert_eq!(pair[0].2, "#0072B2");
            assert_eq!(pair[1].2, "#E69F00");
            assert!(pair[0].0 + pair[0].1 <= pair[1].0);
            assert!(
                pair[1].0 - (pair[0].0 + pair[0].1) < 10,
                "same group: {pair:?}"
            );
        }
        assert!(
            bars[2].0 - (bars[1].0 + bars[1].1) > 30,
            "groups are apart: {bars:?}"
        );
    }

    #[test]
    fn log_axis_ticks() {
        let a = Axis::log(1e3, 1e9, false);
        assert_eq!(a.labels, ["1k", "10k", "100k", "1M", "10M", "100M", "1G"]);
        assert_eq!(a.ticks, [3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0]);
        let a = Axis::log(1e3, 8e3, false);
        assert_eq!(a.labels, ["1k", "2k", "5k", "10k"]);
        let a = Axis::log(250.0, 450.0, false);
        assert_eq!(a.labels, ["200", "300", "400", "500"]);
        let a = Axis::log(1.5, 70.0, false);
        assert_eq!(a.labels, ["1", "2", "5", "10", "20", "50", "100"]);
        // bars need a bottom strictly below the smallest value
        let a = Axis::log(1e3, 1e9, true);
        assert_eq!(a.labels.first().unwrap(), "100");
        let a = Axis::log(1e-300, 1e300, false);
        assert!(a.ticks.len() <= 10, "{:?}", a.labels);
        assert_eq!(a.labels.first().unwrap(), "1e-300");
        let a = Axis::log(5.0, 5.0, false);
        assert!(a.lo < a.hi);
        let jct = Axis::for_values(
            [1.0 * MIB / 50.0, 512.0 * MIB / 50.0].into_iter(),
            true,
            Zero::Bars,
        );
        assert_eq!(jct.labels, ["10k", "100k", "1M", "10M", "100M"]);
    }

    #[test]
    fn linear_axis_ticks() {
        let a = Axis::linear(0.0, 1.0, true);
        assert_eq!(a.labels, ["0.0", "0.2", "0.4", "0.6", "0.8", "1.0"]);
        let a = Axis::for_values([90.0, 100.0].into_iter(), false, Zero::IfNear);
        assert_eq!(a.labels, ["90", "92", "94", "96", "98", "100"]);
        let a = Axis::for_values([40.0, 100.0].into_iter(), false, Zero::IfNear);
        assert_eq!(a.labels.first().unwrap(), "0");
        let a = Axis::for_values([1000.0, 1010.0].into_iter(), false, Zero::No);
        assert_eq!(a.labels, ["1000", "1002", "1004", "1006", "1008", "1010"]);
        let a = Axis::linear(0.0, 4.2e6, true);
        assert_eq!(a.labels, ["0", "1M", "2M", "3M", "4M", "5M"]);
        let a = Axis::linear(0.0, 42e3, true);
        assert_eq!(a.labels, ["0", "10k", "20k", "30k", "40k", "50k"]);
        let a = Axis::for_values([0.0, 0.0].into_iter(), false, Zero::Bars);
        assert_eq!((a.lo, a.hi), (0.0, 1.0));
        let a = Axis::linear(0.0, 392.1, true);
        assert_eq!(a.labels, ["0", "100", "200", "300", "400"]);
        let a = Axis::linear(0.0, 2.3e9, true);
        assert_eq!(a.labels, ["0", "0.5G", "1.0G", "1.5G", "2.0G", "2.5G"]);
        let a = Axis::linear(-3.0, 7.0, true);
        assert_eq!(a.labels, ["-4", "-2", "0", "2", "4", "6", "8"]);
        let a = Axis::linear(1e6, 1.003e6, false);
        assert!(a.labels.windows(2).all(|w| w[0] != w[1]), "{:?}", a.labels);
        let a = Axis::linear(7.0, 7.0, false);
        assert!(a.lo < 7.0 && a.hi > 7.0);
        let a = Axis::linear(0.0, 0.0, true);
        assert_eq!((a.lo, a.hi), (0.0, 1.0));
        let a = Axis::linear(-1e300, 1e300, false);
        assert!(a.ticks.len() >= 2 && a.ticks.iter().all(|t| t.is_finite()));
        assert_eq!(fmt_sig(1.5e6), "1.5M");
        assert_eq!(fmt_sig(0.25), "0.25");
        assert_eq!(fmt_sig(2.5e-5), "2.5e-5");
        assert_eq!(fmt_sig(3e18), "3e18");
        assert_eq!(fmt_sig(-2000.0), "-2k");
    }

    fn edge_bar_charts() -> Vec<BarChart> {
        let base = throughput_chart();
        let long = "a very long title ".repeat(40);
        vec![
            BarChart::default(),
            BarChart {
                series: vec![],
                ..base.clone()
            },
            BarChart {
                series: vec![("none".into(), vec![None, None, None])],
                ..base.clone()
            },
            BarChart {
                series: vec![("none".into(), vec![None, None, None])],
                log_y: true,
                ..base.clone()
            },
            BarChart {
                series: vec![("bad".into(), vec![Some(0.0), Some(-5.0), Some(f64::NAN)])],
                log_y: true,
                ..base.clone()
            },
            BarChart {
                series: vec![(
                    "mixed".into(),
                    vec![Some(f64::INFINITY), Some(-5.0), Some(f64::NEG_INFINITY)],
                )],
                ..base.clone()
            },
            BarChart {
                series: vec![
                    ("short".into(), vec![Some(1.0)]),
                    ("long".into(), vec![Some(2.0); 10]),
                ],
                ..base.clone()
            },
            BarChart {
                categories: vec!["only".into()],
                series: vec![("one".into(), vec![Some(42.0)])],
                log_y: true,
                ..base.clone()
            },
            BarChart {
                categories: (0..40).map(|i| format!("category number {i}")).collect(),
                series: (0..20)
                    .map(|j| {
                        (
                            format!("series {j} with a long name"),
                            (0..40).map(|i| Some((i * j) as f64)).collect(),
                        )
                    })
                    .collect(),
                ..base.clone()
            },
            BarChart {
                title: long.clone(),
                x_label: long.clone(),
                y_label: long.clone(),
                categories: vec![long.clone()],
                series: vec![(long.clone(), vec![Some(1e-300), Some(1e300)])],
                log_y: true,
            },
            BarChart {
                series: vec![(
                    "tiny".into(),
                    vec![Some(5e-324), Some(f64::MIN_POSITIVE), Some(1e-310)],
                )],
                log_y: true,
                ..base.clone()
            },
            BarChart {
                series: vec![(
                    "huge".into(),
                    vec![Some(f64::MAX), Some(-f64::MAX), Some(1.0)],
                )],
                ..base.clone()
            },
            BarChart {
                title: "ctrl\u{0}\u{1b}chars\n\ttab".into(),
                categories: vec!["\u{FFFF}".into(), "".into(), " ".into()],
                ..base
            },
        ]
    }

    fn edge_line_charts() -> Vec<LineChart> {
        let base = cdf_chart();
        vec![
            LineChart::default(),
            LineChart {
                series: vec![("empty".into(), vec![])],
                ..base.clone()
            },
            LineChart {
                series: vec![("single".into(), vec![(3.0, 4.0)])],
                ..base.clone()
            },
            LineChart {
                series: vec![("single".into(), vec![(3.0, 4.0)])],
                log_x: false,
                log_y: false,
                ..base.clone()
            },
            LineChart {
                series: vec![(
                    "nonpositive".into(),
                    vec![(0.0, 1.0), (-1.0, 2.0), (1.0, 0.0), (2.0, -3.0)],
                )],
                ..base.clone()
            },
            LineChart {
                series: vec![(
                    "nan".into(),
                    vec![
                        (f64::NAN, 1.0),
                        (1.0, f64::INFINITY),
                        (2.0, 2.0),
                        (f64::NEG_INFINITY, 3.0),
                        (3.0, 3.0),
                        (4.0, f64::NAN),
                    ],
                )],
                step: false,
                ..base.clone()
            },
            LineChart {
                series: vec![("unordered".into(), vec![(5.0, 1.0), (1.0, 2.0), (3.0, 0.5)])],
                ..base.clone()
            },
            LineChart {
                title: "x".repeat(5000),
                series: (0..30)
                    .map(|j| {
                        (
                            format!("s{j}"),
                            vec![(1.0, j as f64 + 1.0), (2.0, j as f64 + 2.0)],
                        )
                    })
                    .collect(),
                ..base.clone()
            },
            LineChart {
                series: vec![("span".into(), vec![(1e-300, 1e-300), (1e300, 1e300)])],
                ..base
            },
        ]
    }

    #[test]
    fn edge_cases_do_not_panic() {
        let mut sections = Vec::new();
        for c in edge_bar_charts() {
            let svg = bar_chart_svg(&c);
            assert!(svg.starts_with("<svg"), "{c:?}");
            assert_eq!(svg.matches("<svg").count(), 1);
            check_well_formed(&svg)
                .map_err(|e| format!("{c:?}: {e}"))
                .unwrap();
            sections.push(Section::Bar(c));
        }
        for c in edge_line_charts() {
            let svg = line_chart_svg(&c);
            assert!(svg.starts_with("<svg"), "{c:?}");
            assert_eq!(svg.matches("<svg").count(), 1);
            check_well_formed(&svg)
                .map_err(|e| format!("{c:?}: {e}"))
                .unwrap();
            sections.push(Section::Line(c));
        }
        sections.push(Section::Table(Table::default()));
        sections.push(Section::Text(String::new()));
        sections.push(Section::Heading(String::new()));
        let html = render_html("", &sections);
        let charts = sections
            .iter()
            .filter(|s| matches!(s, Section::Bar(_) | Section::Line(_)))
            .count();
        assert_eq!(html.matches("<svg").count(), charts);
        check_well_formed(&html).unwrap();
    }

    #[test]
    fn no_data_is_said() {
        let c = BarChart {
            series: vec![("none".into(), vec![None, None, None])],
            ..throughput_chart()
        };
        assert!(svg_texts(&bar_chart_svg(&c)).contains(&"no data".to_string()));
        assert!(!svg_texts(&bar_chart_svg(&throughput_chart())).contains(&"no data".to_string()));
        let l = LineChart {
            series: vec![("neg".into(), vec![(-1.0, -1.0)])],
            ..cdf_chart()
        };
        assert!(svg_texts(&line_chart_svg(&l)).contains(&"no data".to_string()));
    }

    #[test]
    fn long_titles_are_shortened_in_charts() {
        let c = LineChart {
            title: "y".repeat(500),
            ..cdf_chart()
        };
        let texts = svg_texts(&line_chart_svg(&c));
        let title = texts.iter().find(|t| t.starts_with("yyy")).unwrap();
        assert!(
            title.chars().count() < 100 && title.ends_with('…'),
            "{title}"
        );
    }

    #[test]
    fn write_html_writes_the_page() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("report.html");
        write_html(&path, "r", &sample_sections()).unwrap();
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            render_html("r", &sample_sections())
        );
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    fn value() -> impl Strategy<Value = f64> {
        prop_oneof![
            4 => -1e12f64..1e12,
            2 => 1e-9f64..1e12,
            1 => Just(0.0),
            1 => Just(f64::NAN),
            1 => Just(f64::INFINITY),
            1 => Just(f64::NEG_INFINITY),
            1 => any::<f64>(),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

        #[test]
        fn random_bar_charts_render(
            title in ".{0,80}",
            categories in prop::collection::vec(".{0,12}", 0..8),
            series in prop::collection::vec(
                (".{0,12}", prop::collection::vec(prop::option::of(value()), 0..10)), 0..5),
            log_y in any::<bool>(),
        ) {
            let c = BarChart { title, x_label: "x".into(), y_label: "y".into(), categories, series, log_y };
            let svg = bar_chart_svg(&c);
            prop_assert!(svg.starts_with("<svg"));
            prop_assert_eq!(svg.matches("<svg").count(), 1);
            prop_assert_eq!(check_well_formed(&svg), Ok(()));
        }

        #[test]
        fn random_line_charts_render(
            series in prop::collection::vec(
                (".{0,12}", prop::collection::vec((value(), value()), 0..30)), 0..5),
            log_x in any::<bool>(),
            log_y in any::<bool>(),
            step in any::<bool>(),
        ) {
            let c = LineChart { title: "t".into(), x_label: String::new(), y_label: String::new(), series, log_x, log_y, step };
            let svg = line_chart_svg(&c);
            prop_assert!(svg.starts_with("<svg"));
            prop_assert_eq!(svg.matches("<svg").count(), 1);
            prop_assert_eq!(check_well_formed(&svg), Ok(()));
        }

        #[test]
        fn escaped_text_round_trips_through_the_checker(s in any::<String>()) {
            let html = render_html(&s, &[Section::Text(s.clone()), Section::Heading(s.clone())]);
            prop_assert_eq!(check_well_formed(&html), Ok(()));
        }
    }
}
