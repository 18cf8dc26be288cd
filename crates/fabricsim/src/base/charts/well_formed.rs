//! A well-formedness checker for rendered pages: a tag stack over the HTML, with XML's
//! stricter rules inside `<svg>`.

use super::escape::is_forbidden_char;

/// Checks that `html` is well formed: every non-void element is closed in order (a tag
/// stack; `meta`, `br`, `img` and the other HTML void elements take no end tag), raw text
/// elements (`style`, `script`, `title`, `textarea`) are closed, attributes are quoted
/// or simple and not repeated, `&` always starts a character reference, and no stray `<`
/// or `>` appears in text. Inside `<svg>` the rules are XML's: tag names are case
/// sensitive, every element is closed or self-closed (`/>`), attribute values are quoted,
/// and only the five XML named entities are allowed.
///
/// This is stricter than HTML5 parsing (which allows omitting some end tags) and is meant
/// for checking pages made by [`render_html`](super::render_html).
pub fn check_well_formed(html: &str) -> Result<(), String> {
    Checker::new(html).run()
}

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
}
