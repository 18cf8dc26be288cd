//! Tables in HTML: an optional caption, a header row, then the rows, all padded to the
//! widest row; cells that read as numbers are right-aligned.

use super::escape::push_escaped;
use super::Table;

pub(super) fn push_table(out: &mut String, t: &Table) {
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
