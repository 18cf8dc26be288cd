//! The HTML page, from the minijinja template `templates/report.html` with HTML
//! auto-escaping: every string from the report is escaped by the template engine; only
//! the charts' SVG (made by plotters, which escapes its text) and the style sheet go in
//! as they are.

use std::sync::OnceLock;

use minijinja::{AutoEscape, Environment, Value};
use serde::Serialize;

use super::escape::is_forbidden_char;
use super::{bar_chart_panels, line_chart_panels, Section, Table};

const TEMPLATE: &str = include_str!("templates/report.html");

const CSS: &str = "\
body{font-family:system-ui,-apple-system,\"Segoe UI\",Roboto,\"Helvetica Neue\",Arial,sans-serif;\
margin:0;color:#222;background:#fff;line-height:1.45}
main{max-width:980px;margin:0 auto;padding:12px 24px 48px}
h1{font-size:1.7em;margin:0.6em 0 0.4em;overflow-wrap:anywhere}
h2{font-size:1.25em;margin:1.8em 0 0.5em;padding-bottom:3px;border-bottom:1px solid #ddd;\
overflow-wrap:anywhere}
p{margin:0.5em 0;overflow-wrap:anywhere}
figure.chart{margin:18px 0}
details{margin:12px 0}
summary{cursor:pointer;font-weight:600}
figcaption.title{font-weight:600;margin:0 0 4px;overflow-wrap:anywhere}
figcaption.note{font-size:0.88em;color:#555;margin:4px 0 0;overflow-wrap:anywhere}
.panels{display:flex;flex-wrap:wrap;gap:8px 12px}
figure.chart svg{display:block;max-width:100%;height:auto}
.table-wrap{overflow-x:auto;margin:12px 0}
table{border-collapse:collapse;font-size:0.92em}
caption{caption-side:top;text-align:left;font-weight:600;padding:2px 0 6px}
th,td{border:1px solid #ccc;padding:3px 10px;text-align:left;vertical-align:top}
thead th{background:#eef1f5}
tbody tr:nth-child(even){background:#f8f9fb}
td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
";

/// One table cell for the template.
#[derive(Serialize)]
struct Cell {
    text: String,
    /// Right-aligned (reads as a number).
    num: bool,
}

/// One section for the template (`kind` picks its markup).
#[derive(Serialize, Default)]
struct Block {
    kind: &'static str,
    text: String,
    paragraphs: Vec<String>,
    title: String,
    header: Vec<String>,
    rows: Vec<Vec<Cell>>,
    /// `one` (a single chart) or `panels` (small multiples, wrapped in rows).
    layout: &'static str,
    /// A long table, folded under its caption.
    fold: bool,
    /// Rows of a table (said in a folded table's summary).
    nrows: usize,
    /// SVG documents, marked safe (plotters escaped their text).
    panels: Vec<Value>,
    note: String,
}

#[derive(Serialize)]
struct Page {
    title: String,
    css: Value,
    sections: Vec<Block>,
}

/// Characters XML forbids become spaces (the template escapes the rest).
fn clean(s: &str) -> String {
    s.chars()
        .map(|c| if is_forbidden_char(c) { ' ' } else { c })
        .collect()
}

fn environment() -> &'static Environment<'static> {
    static ENV: OnceLock<Environment<'static>> = OnceLock::new();
    ENV.get_or_init(|| {
        let mut env = Environment::new();
        env.set_auto_escape_callback(|_| AutoEscape::Html);
        env.set_keep_trailing_newline(true);
        // The template is part of the library; a syntax error is caught by every test
        // that renders a page.
        env.add_template("report.html", TEMPLATE)
            .expect("report template parses");
        env
    })
}

/// A complete self-contained HTML5 page: `<!DOCTYPE html>`, `<meta charset>`, a small
/// inline `<style>`, the title as `<h1>`, then every section in order; each chart is a
/// `<figure>` with its title, its panels as inline `<svg>` elements (no `<img>`, no
/// external files, no scripts, no network) and its note; tables are `<table>` with
/// `<thead>`/`<tbody>`. All text is HTML-escaped by the template engine.
pub fn render_html(title: &str, sections: &[Section]) -> String {
    let page = Page {
        title: clean(title),
        css: Value::from_safe_string(CSS.to_string()),
        sections: blocks(sections),
    };
    match environment()
        .get_template("report.html")
        .and_then(|t| t.render(&page))
    {
        Ok(html) => html,
        // Rendering plain data with a fixed template does not fail; if it ever did, the
        // page says so instead of the run failing.
        Err(e) => format!(
            "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
             <title>report</title>\n</head>\n<body>\n<p>{}</p>\n</body>\n</html>\n",
            super::escape_html(&format!("report could not be rendered: {e}"))
        ),
    }
}

/// The template's blocks: a [`Section::Details`] opens, its sections follow, it closes.
fn blocks(sections: &[Section]) -> Vec<Block> {
    let mut out = Vec::with_capacity(sections.len());
    for s in sections {
        if let Section::Details(summary, inner) = s {
            out.push(Block {
                kind: "details_open",
                text: clean(summary),
                ..Block::default()
            });
            out.extend(blocks(inner));
            out.push(Block {
                kind: "details_close",
                ..Block::default()
            });
        } else {
            out.push(block(s));
        }
    }
    out
}

fn block(s: &Section) -> Block {
    match s {
        Section::Details(..) => unreachable!("opened and closed by blocks()"),
        Section::Heading(h) => Block {
            kind: "heading",
            text: clean(h),
            ..Block::default()
        },
        Section::Text(t) => Block {
            kind: "text",
            paragraphs: paragraphs(t),
            ..Block::default()
        },
        Section::Table(t) => table(t),
        Section::Bar(c) => chart(&c.title, &c.note, bar_chart_panels(c)),
        Section::Line(c) => chart(&c.title, &c.note, line_chart_panels(c)),
    }
}

fn chart(title: &str, note: &str, panels: Vec<String>) -> Block {
    Block {
        kind: "chart",
        title: clean(title),
        note: clean(note),
        layout: if panels.len() > 1 { "panels" } else { "one" },
        panels: panels.into_iter().map(Value::from_safe_string).collect(),
        ..Block::default()
    }
}

/// Paragraphs: blank lines separate them.
fn paragraphs(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut para = String::new();
    for line in text.lines().chain(std::iter::once("")) {
        if line.trim().is_empty() {
            let t = para.trim();
            if !t.is_empty() {
                out.push(clean(t));
            }
            para.clear();
        } else {
            if !para.is_empty() {
                para.push('\n');
            }
            para.push_str(line);
        }
    }
    out
}

/// A table padded to its widest row; cells that read as numbers are right-aligned.
fn table(t: &Table) -> Block {
    let ncols = t
        .rows
        .iter()
        .map(Vec::len)
        .chain(std::iter::once(t.header.len()))
        .max()
        .unwrap_or(0);
    let cell = |row: &[String], i: usize| row.get(i).map_or(String::new(), |s| clean(s));
    Block {
        kind: "table",
        fold: t.rows.len() > super::FOLD_ROWS,
        nrows: t.rows.len(),
        title: clean(t.title.trim()),
        header: (0..ncols).map(|i| cell(&t.header, i)).collect(),
        rows: t
            .rows
            .iter()
            .map(|row| {
                (0..ncols)
                    .map(|i| {
                        let text = cell(row, i);
                        Cell {
                            num: looks_numeric(&text),
                            text,
                        }
                    })
                    .collect()
            })
            .collect(),
        ..Block::default()
    }
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
