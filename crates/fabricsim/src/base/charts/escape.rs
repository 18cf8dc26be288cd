//! Escaping text for HTML and SVG: `&`, `<`, `>`, `"` and `'` become character
//! references, and characters that XML forbids become spaces.

/// Escapes `&`, `<`, `>`, `"` and `'` for HTML/XML text and attribute values; control
/// characters (which XML forbids) become spaces.
pub fn escape_html(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 8);
    push_escaped(&mut out, s);
    out
}

pub(super) fn push_escaped(out: &mut String, s: &str) {
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
pub(super) fn is_forbidden_char(c: char) -> bool {
    (c.is_control() && c != '\n' && c != '\t') || c == '\u{FFFE}' || c == '\u{FFFF}'
}
