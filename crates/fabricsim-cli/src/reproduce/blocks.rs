//! Generated blocks in a Markdown document: the text between
//! `<!-- generated:NAME begin -->` and `<!-- generated:NAME end -->` belongs to the
//! generator; everything else is hand-written and left as it is.

/// The opening marker of block `name`.
pub fn begin(name: &str) -> String {
    format!("<!-- generated:{name} begin -->")
}

/// The closing marker of block `name`.
pub fn end(name: &str) -> String {
    format!("<!-- generated:{name} end -->")
}

/// One block found in a document: its name and its content (without the markers).
#[derive(Debug, Clone, PartialEq)]
pub struct Block {
    pub name: String,
    pub content: String,
}

/// The blocks of `text`, in order. An unclosed, nested, duplicated or mismatched marker is
/// an error naming its line.
pub fn parse(text: &str) -> Result<Vec<Block>, String> {
    let mut blocks: Vec<Block> = Vec::new();
    let mut open: Option<(String, usize, String)> = None;
    for (i, line) in text.split_inclusive('\n').enumerate() {
        let trimmed = line.trim();
        if let Some(rest) = trimmed.strip_prefix("<!-- generated:") {
            let Some(rest) = rest.strip_suffix("-->") else {
                return Err(format!(
                    "line {}: a generated marker must end with `-->`",
                    i + 1
                ));
            };
            let mut parts = rest.split_whitespace();
            let (name, what) = match (parts.next(), parts.next(), parts.next()) {
                (Some(n), Some(w), None) if w == "begin" || w == "end" => (n.to_string(), w),
                _ => {
                    return Err(format!(
                        "line {}: a generated marker is `<!-- generated:NAME begin -->` or \
                         `<!-- generated:NAME end -->`",
                        i + 1
                    ))
                }
            };
            match (what, open.take()) {
                ("begin", None) => {
                    if blocks.iter().any(|b| b.name == name) {
                        return Err(format!("line {}: block `{name}` appears twice", i + 1));
                    }
                    open = Some((name, i + 1, String::new()));
                }
                ("begin", Some((o, at, _))) => {
                    return Err(format!(
                        "line {}: block `{name}` begins inside block `{o}` (opened on line {at})",
                        i + 1
                    ))
                }
                (_, Some((o, at, content))) if o == name => {
                    let _ = at;
                    blocks.push(Block { name, content });
                }
                (_, Some((o, at, _))) => {
                    return Err(format!(
                        "line {}: `{name} end` closes block `{o}` (opened on line {at})",
                        i + 1
                    ))
                }
                (_, None) => return Err(format!("line {}: `{name} end` without its begin", i + 1)),
            }
        } else if let Some((_, _, content)) = &mut open {
            content.push_str(line);
        }
    }
    if let Some((o, at, _)) = open {
        return Err(format!("block `{o}` (line {at}) has no end marker"));
    }
    Ok(blocks)
}

/// `text` with each block's content replaced by `new(name)`. Every block of the text must
/// have new content and every new content a block: a missing or extra one is an error
/// naming it.
pub fn replace(text: &str, new: &[(String, String)]) -> Result<String, String> {
    let found = parse(text)?;
    for (n, _) in new {
        if !found.iter().any(|b| &b.name == n) {
            return Err(format!(
                "no block `{n}`: add `{}` and `{}` where its table goes",
                begin(n),
                end(n)
            ));
        }
    }
    for b in &found {
        if !new.iter().any(|(n, _)| n == &b.name) {
            let known: Vec<&str> = new.iter().map(|(n, _)| n.as_str()).collect();
            return Err(format!(
                "block `{}` is not generated (the generator makes: {})",
                b.name,
                known.join(", ")
            ));
        }
    }
    let mut out = String::with_capacity(text.len());
    let mut skipping = false;
    for line in text.split_inclusive('\n') {
        let trimmed = line.trim();
        if let Some((name, _)) = new.iter().find(|(n, _)| trimmed == begin(n)) {
            out.push_str(line);
            let content = &new.iter().find(|(n, _)| n == name).expect("found").1;
            out.push_str(content);
            if !content.is_empty() && !content.ends_with('\n') {
                out.push('\n');
            }
            skipping = true;
        } else if skipping && new.iter().any(|(n, _)| trimmed == end(n)) {
            out.push_str(line);
            skipping = false;
        } else if !skipping {
            out.push_str(line);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_are_replaced_and_the_rest_kept() {
        let doc = "intro 1\n<!-- generated:t begin -->\nold\n<!-- generated:t end -->\nprose\n";
        let new = replace(doc, &[("t".into(), "| a |\n".into())]).unwrap();
        assert_eq!(
            new,
            "intro 1\n<!-- generated:t begin -->\n| a |\n<!-- generated:t end -->\nprose\n"
        );
        assert_eq!(parse(&new).unwrap()[0].content, "| a |\n");
    }

    #[test]
    fn bad_markers_are_errors() {
        assert!(parse("<!-- generated:t begin -->\nx\n")
            .unwrap_err()
            .contains("no end"));
        assert!(parse("<!-- generated:t end -->\n")
            .unwrap_err()
            .contains("without"));
        let nested = "<!-- generated:a begin -->\n<!-- generated:b begin -->\n";
        assert!(parse(nested).unwrap_err().contains("inside"));
        let doc = "<!-- generated:t begin -->\n<!-- generated:t end -->\n";
        assert!(replace(doc, &[]).unwrap_err().contains("not generated"));
        assert!(replace(
            doc,
            &[("t".into(), String::new()), ("u".into(), String::new())]
        )
        .unwrap_err()
        .contains("no block `u`"));
    }
}
