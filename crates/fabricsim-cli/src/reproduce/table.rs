//! Markdown tables and the number formats the results documents use.

/// A Markdown table: a header, an alignment per column and rows of cells.
pub struct Table {
    header: Vec<String>,
    right: Vec<bool>,
    rows: Vec<Vec<String>>,
}

impl Table {
    /// Columns named by `header`; a name starting with `>` is right-aligned (numbers).
    pub fn new(header: &[&str]) -> Table {
        Table {
            header: header
                .iter()
                .map(|h| h.trim_start_matches('>').to_string())
                .collect(),
            right: header.iter().map(|h| h.starts_with('>')).collect(),
            rows: Vec::new(),
        }
    }

    pub fn row(&mut self, cells: Vec<String>) {
        debug_assert_eq!(cells.len(), self.header.len(), "cells per row");
        self.rows.push(cells);
    }

    pub fn render(&self) -> String {
        let line = |cells: &[String]| format!("| {} |\n", cells.join(" | "));
        let mut s = line(&self.header);
        let rule: Vec<String> = self
            .right
            .iter()
            .map(|&r| if r { "---:".into() } else { "---".into() })
            .collect();
        s.push_str(&format!("|{}|\n", rule.join("|")));
        for r in &self.rows {
            // A `|` in a cell would end it.
            let cells: Vec<String> = r.iter().map(|c| c.replace('|', "\\|")).collect();
            s.push_str(&line(&cells));
        }
        s
    }
}

/// `x` with `d` decimals; `-` for a value that is not a number.
pub fn f(x: f64, d: usize) -> String {
    if x.is_finite() {
        let s = format!("{x:.d$}");
        // "-0.0" reads as a sign where there is none.
        if s.trim_start_matches('-')
            .chars()
            .all(|c| c == '0' || c == '.')
        {
            s.trim_start_matches('-').to_string()
        } else {
            s
        }
    } else {
        "-".into()
    }
}

/// An integer with thousands separators: 12,345.
pub fn int(x: f64) -> String {
    if !x.is_finite() {
        return "-".into();
    }
    let n = x.round() as i64;
    let digits = n.unsigned_abs().to_string();
    let mut s = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            s.push(',');
        }
        s.push(c);
    }
    if n < 0 {
        format!("-{s}")
    } else {
        s
    }
}

/// A fraction as a percentage with `d` decimals: 0.123 -> "12.3 %".
pub fn pct(x: f64, d: usize) -> String {
    if x.is_finite() {
        format!("{} %", f(x * 100.0, d))
    } else {
        "-".into()
    }
}

/// A relative difference as a signed percentage: +5 %, -12 %.
pub fn signed_pct(x: f64) -> String {
    if !x.is_finite() {
        return "-".into();
    }
    // `+ 0.0` turns a rounded -0 into 0, which reads "+0 %".
    let p = (x * 100.0).round() + 0.0;
    if p >= 0.0 {
        format!("+{p:.0} %")
    } else {
        format!("{p:.0} %")
    }
}

/// Nanoseconds in microseconds or milliseconds with `d` decimals.
pub fn us(ns: f64, d: usize) -> String {
    f(ns / 1e3, d)
}

pub fn ms(ns: f64, d: usize) -> String {
    f(ns / 1e6, d)
}

/// Bytes in MB (10^6) with `d` decimals.
pub fn mb(bytes: f64, d: usize) -> String {
    f(bytes / 1e6, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats() {
        assert_eq!(int(1234567.0), "1,234,567");
        assert_eq!(int(-999.0), "-999");
        assert_eq!(int(0.0), "0");
        assert_eq!(f(-0.01, 1), "0.0");
        assert_eq!(f(f64::NAN, 2), "-");
        assert_eq!(pct(0.0764, 1), "7.6 %");
        assert_eq!(signed_pct(-0.124), "-12 %");
        assert_eq!(signed_pct(0.004), "+0 %");
        assert_eq!(signed_pct(-0.004), "+0 %");
        let mut t = Table::new(&["a", ">b"]);
        t.row(vec!["x|y".into(), "1".into()]);
        assert_eq!(t.render(), "| a | b |\n|---|---:|\n| x\\|y | 1 |\n");
    }
}
