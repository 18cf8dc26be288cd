//! Claims of the source documents beside our figures, with a verdict computed from the
//! runs, never typed.
//!
//! A numeric claim has two bands around the document's figure: inside the first the claim
//! is *reproduced*, inside the second *within tolerance*, outside both *not reproduced*.
//! A claim that names a direction or an ordering but no figure ("ACC beats DCQCN") is
//! *qualitative* when the runs show that direction and *not reproduced* when they do not.
//! The `tolerance` column states the bands.

use super::table::Table;

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Verdict {
    Reproduced,
    WithinTolerance,
    NotReproduced,
    Qualitative,
}

impl Verdict {
    pub fn name(self) -> &'static str {
        match self {
            Verdict::Reproduced => "reproduced",
            Verdict::WithinTolerance => "within tolerance",
            Verdict::NotReproduced => "not reproduced",
            Verdict::Qualitative => "qualitative",
        }
    }

    pub const ALL: [Verdict; 4] = [
        Verdict::Reproduced,
        Verdict::WithinTolerance,
        Verdict::NotReproduced,
        Verdict::Qualitative,
    ];
}

/// One row of a claims table.
pub struct Claim {
    pub claim: String,
    pub document: String,
    pub ours: String,
    pub tolerance: String,
    pub verdict: Verdict,
}

fn in_band(x: f64, lo: f64, hi: f64) -> bool {
    x.is_finite() && lo <= x && x <= hi
}

/// The verdict of `x` against an inner band (reproduced) inside an outer one (within
/// tolerance), each `(lo, hi)`.
fn banded(x: f64, inner: (f64, f64), outer: (f64, f64)) -> Verdict {
    if in_band(x, inner.0, inner.1) {
        Verdict::Reproduced
    } else if in_band(x, outer.0, outer.1) {
        Verdict::WithinTolerance
    } else {
        Verdict::NotReproduced
    }
}

impl Claim {
    /// A figure: reproduced within `close` of the document's `doc` (relative), within
    /// tolerance within `tol`.
    pub fn figure(
        claim: &str,
        document: &str,
        doc: f64,
        (ours, ours_text): (f64, String),
        close: f64,
        tol: f64,
    ) -> Claim {
        let band = |r: f64| (doc * (1.0 - r), doc * (1.0 + r));
        let verdict = banded(ours, band(close), band(tol));
        Claim {
            claim: claim.into(),
            document: document.into(),
            ours: ours_text,
            tolerance: format!("±{:.0} % / ±{:.0} %", close * 100.0, tol * 100.0),
            verdict,
        }
    }

    /// A range the document gives ("29-40 %"): reproduced inside `lo..=hi`, within
    /// tolerance inside it widened by `slack` on each side (`slack_text` says so).
    pub fn range(
        claim: &str,
        document: &str,
        lo: f64,
        hi: f64,
        (ours, ours_text): (f64, String),
        (slack, slack_text): (f64, &str),
    ) -> Claim {
        let verdict = banded(ours, (lo, hi), (lo - slack, hi + slack));
        Claim {
            claim: claim.into(),
            document: document.into(),
            ours: ours_text,
            tolerance: format!("in range / ±{slack_text}"),
            verdict,
        }
    }

    /// A bound ("under 2 %", "> 100 RTTs"): reproduced when `ours` is on the document's
    /// side of `bound`, within tolerance when at most `slack` past it.
    pub fn bound(
        claim: &str,
        document: &str,
        bound: f64,
        below: bool,
        ours: (f64, String),
        slack: (f64, &str),
    ) -> Claim {
        let (lo, hi) = if below {
            (f64::NEG_INFINITY, bound)
        } else {
            (bound, f64::INFINITY)
        };
        let text = slack.1;
        let mut c = Claim::range(claim, document, lo, hi, ours, slack);
        c.tolerance = format!(
            "{} bound / {text} past it",
            if below { "upper" } else { "lower" }
        );
        c
    }

    /// A direction or ordering: qualitative when it `holds`, not reproduced otherwise.
    pub fn direction(claim: &str, document: &str, ours_text: String, holds: bool) -> Claim {
        Claim {
            claim: claim.into(),
            document: document.into(),
            ours: ours_text,
            tolerance: "direction".into(),
            verdict: if holds {
                Verdict::Qualitative
            } else {
                Verdict::NotReproduced
            },
        }
    }
}

/// The header of every claims table.
pub const HEADER: [&str; 5] = ["claim", "document", "ours", "tolerance", "verdict"];

pub fn table(claims: &[Claim]) -> String {
    let mut t = Table::new(&HEADER);
    for c in claims {
        t.row(vec![
            c.claim.clone(),
            c.document.clone(),
            c.ours.clone(),
            c.tolerance.clone(),
            c.verdict.name().into(),
        ]);
    }
    t.render()
}

/// The rows of a claims table as rendered by [`table`] (the cells of each row after the
/// header and its rule), for the page that gathers them.
pub fn rows_of(table: &str) -> Vec<Vec<String>> {
    table
        .lines()
        .skip(2)
        .filter(|l| l.starts_with('|'))
        .map(|l| {
            let inner = l.trim().trim_start_matches('|').trim_end_matches('|');
            // Cells are split on `|` not escaped as `\|`.
            let mut cells = Vec::new();
            let mut cur = String::new();
            let mut chars = inner.chars().peekable();
            while let Some(c) = chars.next() {
                if c == '\\' && chars.peek() == Some(&'|') {
                    cur.push('|');
                    chars.next();
                } else if c == '|' {
                    cells.push(cur.trim().to_string());
                    cur.clear();
                } else {
                    cur.push(c);
                }
            }
            cells.push(cur.trim().to_string());
            cells
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verdicts_follow_the_bands() {
        let v =
            |ours: f64| Claim::figure("c", "10", 10.0, (ours, String::new()), 0.05, 0.25).verdict;
        assert_eq!(v(10.4), Verdict::Reproduced);
        assert_eq!(v(12.0), Verdict::WithinTolerance);
        assert_eq!(v(13.0), Verdict::NotReproduced);
        assert_eq!(v(f64::NAN), Verdict::NotReproduced);
        let b = |ours: f64| {
            Claim::bound(
                "c",
                "< 2 %",
                2.0,
                true,
                (ours, String::new()),
                (1.0, "1 pt"),
            )
            .verdict
        };
        assert_eq!(b(1.5), Verdict::Reproduced);
        assert_eq!(b(2.5), Verdict::WithinTolerance);
        assert_eq!(b(3.5), Verdict::NotReproduced);
        assert_eq!(
            Claim::direction("c", "d", String::new(), true).verdict,
            Verdict::Qualitative
        );
        assert_eq!(
            Claim::direction("c", "d", String::new(), false).verdict,
            Verdict::NotReproduced
        );
    }

    #[test]
    fn rows_read_back() {
        let c = Claim::direction("a | b", "d", "o".into(), true);
        let rows = rows_of(&table(&[c]));
        assert_eq!(
            rows,
            vec![vec!["a | b", "d", "o", "direction", "qualitative"]]
        );
    }
}
