//! "Did you mean ...?": the closest valid name to a misspelt one.
//!
//! Scenario files name fields, kinds and registry entries by word; a typo should be an
//! error that points at the word meant (`algoritm` -> `algorithm`), not only a list of
//! thirty names. The distance is Damerau-Levenshtein in its optimal-string-alignment
//! form (insertions, deletions, substitutions and swaps of two neighbours, each costing
//! one), counted in characters and without regard to case; a name is suggested only when
//! it is within a third of the typed name's length (at least one edit), so a word that is
//! not a typo of anything (`cubic` among the congestion controls) gets no suggestion.
//! Nor does a name that differs from a candidate only in its digits (`spine7` among
//! `spine0`..`spine3`): another number names another thing, not the one meant.
//!
//! serde's messages for an unknown field or enum name list what is accepted (the names
//! come from the struct's or enum's declaration, or from a registry through
//! [`crate::base::param::de_registry_name`]), so [`annotate`] reads the typed name and the
//! candidates from the message itself: every struct and enum of the schema gets a
//! suggestion without one line of its own.

/// Edit distance between `a` and `b`: insertions, deletions, substitutions and
/// transpositions of adjacent characters (optimal string alignment), by character.
pub fn distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    // Three rows of the dynamic-programming table: two back for transpositions.
    let mut prev2: Vec<usize> = vec![0; b.len() + 1];
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    let mut cur: Vec<usize> = vec![0; b.len() + 1];
    for i in 1..=a.len() {
        cur[0] = i;
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut d = (prev[j] + 1).min(cur[j - 1] + 1).min(prev[j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                d = d.min(prev2[j - 2] + 1);
            }
            cur[j] = d;
        }
        std::mem::swap(&mut prev2, &mut prev);
        std::mem::swap(&mut prev, &mut cur);
    }
    prev[b.len()]
}

/// Most edits a suggestion may be away from a typed name of `len` characters: a third of
/// it, at least one. Short names allow one typo; `algoritm` (8) allows two.
pub fn threshold(len: usize) -> usize {
    (len / 3).max(1)
}

/// The candidate closest to `typed` (case ignored), if one is within [`threshold`]; the
/// first such in the candidates' order on a tie, so the answer is deterministic. An
/// exact match (the name is valid) suggests nothing.
pub fn closest<'a, I>(typed: &str, candidates: I) -> Option<&'a str>
where
    I: IntoIterator<Item = &'a str>,
{
    let t = typed.to_lowercase();
    let limit = threshold(typed.chars().count());
    let letters = |s: &str| {
        s.chars()
            .filter(|c| !c.is_ascii_digit())
            .collect::<String>()
    };
    let t_letters = letters(&t);
    let mut best: Option<(usize, &'a str)> = None;
    for c in candidates {
        if c == typed {
            return None;
        }
        let c_low = c.to_lowercase();
        if c_low != t && letters(&c_low) == t_letters {
            continue;
        }
        let d = distance(&t, &c_low);
        if d <= limit && best.is_none_or(|(bd, _)| d < bd) {
            best = Some((d, c));
        }
    }
    best.map(|(_, c)| c)
}

/// `"; did you mean `x`?"` for the closest candidate, or nothing.
pub fn did_you_mean<'a, I>(typed: &str, candidates: I) -> String
where
    I: IntoIterator<Item = &'a str>,
{
    closest(typed, candidates)
        .map(|c| format!("; did you mean `{c}`?"))
        .unwrap_or_default()
}

/// serde's message for an unknown field or enum name (`unknown field `x`, expected one
/// of `a`, `b``; `unknown variant ...`), with the closest accepted name appended; any
/// other message unchanged.
pub fn annotate(message: &str) -> String {
    for lead in ["unknown field `", "unknown variant `"] {
        let Some(at) = message.find(lead) else {
            continue;
        };
        let rest = &message[at + lead.len()..];
        let Some((typed, after)) = rest.split_once('`') else {
            continue;
        };
        let Some((_, expected)) = after.split_once("expected") else {
            continue;
        };
        // The names are the backquoted words of the list: every other piece.
        let names = expected.split('`').skip(1).step_by(2);
        return format!("{message}{}", did_you_mean(typed, names));
    }
    message.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distances() {
        for (a, b, d) in [
            ("", "", 0),
            ("abc", "", 3),
            ("", "abc", 3),
            ("same", "same", 0),
            ("algoritm", "algorithm", 1),
            ("xofff", "xoff", 1),
            ("hpcc", "hcpc", 1), // one swap, not two substitutions
            ("kitten", "sitting", 3),
            ("websurch", "websearch", 2),
            ("ca", "abc", 3), // optimal string alignment: no edit of a swapped pair
        ] {
            assert_eq!(distance(a, b), d, "{a} -> {b}");
            assert_eq!(distance(b, a), d, "{b} -> {a}");
        }
    }

    #[test]
    fn misspellings_and_their_suggestions() {
        let cc = ["none", "dcqcn", "hpcc", "timely", "swift", "dctcp", "acc"];
        let fields = ["algorithm", "dcqcn", "hpcc", "class", "timely"];
        let topo = ["leaf_spine", "fat_tree", "three_tier", "custom", "ns3"];
        let lb = ["ecmp", "spray_random", "spray_rr", "pktc", "adaptive"];
        for (typed, names, want) in [
            ("algoritm", &fields[..], Some("algorithm")),
            ("algortihm", &fields[..], Some("algorithm")),
            ("Algorithm", &fields[..], Some("algorithm")),
            ("dcqnc", &cc[..], Some("dcqcn")),
            ("DCQCN", &cc[..], Some("dcqcn")),
            ("hppc", &cc[..], Some("hpcc")),
            ("timley", &cc[..], Some("timely")),
            ("fattree", &topo[..], Some("fat_tree")),
            ("leaf-spine", &topo[..], Some("leaf_spine")),
            ("ns-3", &topo[..], Some("ns3")),
            ("spray_r", &lb[..], Some("spray_rr")),
            ("emcp", &lb[..], Some("ecmp")),
            // Far from every name: nothing.
            ("cubic", &cc[..], None),
            ("torus", &topo[..], None),
            ("flowlet", &lb[..], None),
            ("x", &cc[..], None),
            // Another number is another thing, not a typo.
            ("spine7", &["spine0", "spine1", "leaf0"][..], None),
            ("spnie1", &["spine0", "spine1", "leaf0"][..], Some("spine1")),
            // Valid already: nothing to suggest.
            ("hpcc", &cc[..], None),
        ] {
            assert_eq!(closest(typed, names.iter().copied()), want, "{typed}");
        }
    }

    #[test]
    fn ties_go_to_the_first_candidate() {
        assert_eq!(closest("ab", ["ac", "ad"]), Some("ac"));
        assert_eq!(closest("ab", ["ad", "ac"]), Some("ad"));
    }

    #[test]
    fn serde_messages_are_annotated() {
        assert_eq!(
            annotate("unknown field `algoritm`, expected one of `algorithm`, `dcqcn`"),
            "unknown field `algoritm`, expected one of `algorithm`, `dcqcn`; \
             did you mean `algorithm`?"
        );
        assert_eq!(
            annotate("unknown variant `hpc`, expected `hpcc` or `none`"),
            "unknown variant `hpc`, expected `hpcc` or `none`; did you mean `hpcc`?"
        );
        // Nothing close, or not serde's message: unchanged.
        let far = "unknown variant `cubic`, expected one of `dcqcn`, `hpcc`";
        assert_eq!(annotate(far), far);
        assert_eq!(annotate("missing field `kind`"), "missing field `kind`");
        assert_eq!(
            annotate("unknown field `x`, there are no fields"),
            "unknown field `x`, there are no fields"
        );
    }

    #[test]
    fn real_serde_errors_get_a_suggestion() {
        // The message serde gives for a misspelt key of a schema struct.
        let mut t = toml::Table::new();
        t.insert("xofff".into(), toml::Value::String("1KB".into()));
        let e = toml::Value::Table(t)
            .try_into::<crate::model::fabric::pfc::PfcCfg>()
            .unwrap_err()
            .to_string();
        assert!(
            annotate(&e).ends_with("; did you mean `xoff`?"),
            "{}",
            annotate(&e)
        );
        // And for a registry name.
        let e = toml::Value::String("dcqnc".into())
            .try_into::<crate::model::cc::CcAlgorithm>()
            .unwrap_err()
            .to_string();
        assert!(annotate(&e).ends_with("did you mean `dcqcn`?"), "{e}");
    }
}
