//! A check tests run on rendered pages: every chart label is whole and inside its panel.
//! A label that did not fit its room was shortened with an ellipsis (`svg::fit`), and a
//! text anchored outside the panel's `viewBox` is cut by the browser; either fails.

/// Checks every `<text>` of every inline `<svg>` in `html`: no text was shortened
/// (contains `…`), and its anchor point (`x`, `y`) lies inside the panel's width and
/// height. The error names the panel (its `aria-label`) and the text.
pub fn labels_fit(html: &str) -> Result<(), String> {
    let mut rest = html;
    while let Some(start) = rest.find("<svg ") {
        let svg_rest = &rest[start..];
        let end = svg_rest.find("</svg>").ok_or("an <svg> is not closed")?;
        let svg = &svg_rest[..end];
        let open = &svg[..svg.find('>').ok_or("an <svg> tag is not closed")?];
        let panel = attr(open, "aria-label").unwrap_or("(unnamed panel)");
        let w = attr(open, "width").and_then(|v| v.parse::<f64>().ok());
        let h = attr(open, "height").and_then(|v| v.parse::<f64>().ok());
        let (Some(w), Some(h)) = (w, h) else {
            return Err(format!("{panel}: no width and height"));
        };
        let mut texts = svg;
        while let Some(t) = texts.find("<text") {
            let tag_end = texts[t..].find('>').ok_or("a <text> tag is not closed")? + t;
            let tag = &texts[t..tag_end];
            let close = texts[tag_end..]
                .find("</text>")
                .ok_or("a <text> is not closed")?
                + tag_end;
            let content = &texts[tag_end + 1..close];
            if content.contains('…') {
                return Err(format!("{panel}: label shortened to fit: {content:?}"));
            }
            let x = attr(tag, "x").and_then(|v| v.parse::<f64>().ok());
            let y = attr(tag, "y").and_then(|v| v.parse::<f64>().ok());
            if let (Some(x), Some(y)) = (x, y) {
                if !(0.0..=w).contains(&x) || !(0.0..=h).contains(&y) {
                    return Err(format!(
                        "{panel}: label {content:?} at ({x}, {y}) outside {w} x {h}"
                    ));
                }
            }
            texts = &texts[close..];
        }
        rest = &svg_rest[end..];
    }
    Ok(())
}

/// The value of attribute `name` in a start tag (double-quoted, as plotters writes).
fn attr<'a>(tag: &'a str, name: &str) -> Option<&'a str> {
    let key = format!(" {name}=\"");
    let i = tag.find(&key)? + key.len();
    let len = tag[i..].find('"')?;
    Some(&tag[i..i + len])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shortened_or_outside_labels_fail() {
        let ok = "<svg role=\"img\" aria-label=\"p\" width=\"100\" height=\"50\" viewBox=\"0 0 100 50\"><text x=\"10\" y=\"20\">whole</text></svg>";
        assert_eq!(labels_fit(ok), Ok(()));
        let cut = ok.replace("whole", "who…");
        assert!(labels_fit(&cut).unwrap_err().contains("shortened"));
        let out = ok.replace("x=\"10\"", "x=\"120\"");
        assert!(labels_fit(&out).unwrap_err().contains("outside"));
    }
}
