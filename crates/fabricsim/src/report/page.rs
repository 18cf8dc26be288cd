//! The HTML page: a head with the inline style sheet, the title as `<h1>`, then every
//! [`Section`] in order (headings, paragraphs, tables, and charts as inline `<svg>`
//! figures).

use super::escape::push_escaped;
use super::table::push_table;
use super::{bar_chart_svg, line_chart_svg, Section};

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

fn push_figure(out: &mut String, svg: &str) {
    out.push_str("<figure class=\"chart\">\n");
    out.push_str(svg);
    if !svg.ends_with('\n') {
        out.push('\n');
    }
    out.push_str("</figure>\n");
}
