//! Flow-size distributions given as a piecewise-linear CDF, in the format of the HPCC ns-3
//! traffic generator (`traffic_gen/` of the HPCC repository): one point per line,
//! `<flow size in bytes> <cumulative percent>`, the first percent 0 and the last 100.
//!
//! Sampling is the reference generator's: draw `u` uniform in [0, 100), find the segment
//! whose cumulative percents bracket `u`, and interpolate the size linearly within it;
//! fabricsim then rounds to a whole number of bytes, at least 1. The mean is that of the
//! piecewise-linear distribution: the sum over segments of the segment's mid size times its
//! probability.
//!
//! Four distributions are built in (copies of the public data files under
//! `crates/fabricsim/data/cdf/`, see the README there): `websearch` (DCTCP web search),
//! `fbhdp` (Facebook Hadoop), `alistorage2019` (Alibaba storage) and `googlerpc2008`.

use crate::base::param::ParamError;
use rand::Rng;
use std::path::Path;

/// Built-in CDFs: (name used in scenarios, data file name, contents).
pub const BUILTIN: &[(&str, &str, &str)] = &[
    (
        "websearch",
        "WebSearch_distribution.txt",
        include_str!("../../../data/cdf/WebSearch_distribution.txt"),
    ),
    (
        "fbhdp",
        "FbHdp_distribution.txt",
        include_str!("../../../data/cdf/FbHdp_distribution.txt"),
    ),
    (
        "alistorage2019",
        "AliStorage2019.txt",
        include_str!("../../../data/cdf/AliStorage2019.txt"),
    ),
    (
        "googlerpc2008",
        "GoogleRPC2008.txt",
        include_str!("../../../data/cdf/GoogleRPC2008.txt"),
    ),
];

/// Largest flow size a CDF may give: 1 PB.
pub const MAX_SIZE: f64 = 1e15;

/// A piecewise-linear CDF of flow sizes.
#[derive(Clone, Debug, PartialEq)]
pub struct Cdf {
    /// Sizes in bytes, non-decreasing.
    sizes: Vec<f64>,
    /// Cumulative percents, non-decreasing, from 0 to 100.
    pcts: Vec<f64>,
}

/// A problem with a CDF file: the (1-based) line and what is wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CdfError {
    /// Line of the file.
    pub line: usize,
    /// What is wrong.
    pub message: String,
}

impl Cdf {
    /// Parses the text of a CDF file. Blank lines and lines starting with `#` are skipped.
    pub fn parse(text: &str) -> Result<Cdf, CdfError> {
        let mut sizes: Vec<f64> = Vec::new();
        let mut pcts: Vec<f64> = Vec::new();
        let mut last_line = 0;
        let mut prev_line = 0;
        for (i, raw) in text.lines().enumerate() {
            let line = i + 1;
            let l = raw.trim();
            if l.is_empty() || l.starts_with('#') {
                continue;
            }
            let err = |m: String| CdfError { line, message: m };
            let f: Vec<&str> = l.split_whitespace().collect();
            if f.len() != 2 {
                return Err(err(format!(
                    "expected `<size in bytes> <cumulative percent>`, found {} field(s)",
                    f.len()
                )));
            }
            let size: f64 = f[0]
                .parse()
                .ok()
                .filter(|v: &f64| v.is_finite())
                .ok_or_else(|| err(format!("size `{}` is not a number of bytes", f[0])))?;
            let pct: f64 = f[1]
                .parse()
                .ok()
                .filter(|v: &f64| v.is_finite())
                .ok_or_else(|| err(format!("percent `{}` is not a number", f[1])))?;
            if !(0.0..=MAX_SIZE).contains(&size) {
                return Err(err(format!(
                    "size {} is not allowed: sizes are between 0 and 1e15 bytes",
                    f[0]
                )));
            }
            if !(0.0..=100.0).contains(&pct) {
                return Err(err(format!(
                    "percent {} is not allowed: cumulative percents are between 0 and 100",
                    f[1]
                )));
            }
            match (sizes.last(), pcts.last()) {
                (None, _) | (_, None) => {
                    if pct != 0.0 {
                        return Err(err(format!(
                            "the first point must have percent 0 (e.g. `0 0`), this one has {}",
                            f[1]
                        )));
                    }
                }
                (Some(&ps), Some(&pp)) => {
                    if size < ps {
                        return Err(err(format!(
                            "sizes must not decrease: {} after {ps} on line {prev_line}",
                            f[0]
                        )));
                    }
                    if pct < pp {
                        return Err(err(format!(
                            "cumulative percents must not decrease: {} after {pp} on line {prev_line}",
                            f[1]
                        )));
                    }
                }
            }
            sizes.push(size);
            pcts.push(pct);
            prev_line = line;
            last_line = line;
        }
        if sizes.len() < 2 {
            return Err(CdfError {
                line: last_line.max(1),
                message: format!(
                    "a CDF needs at least 2 points (`<size> <percent>` lines from percent 0 to 100), found {}",
                    sizes.len()
                ),
            });
        }
        let end = *pcts.last().unwrap_or(&0.0);
        if end != 100.0 {
            return Err(CdfError {
                line: last_line,
                message: format!("the CDF must end at percent 100; it ends at {end}"),
            });
        }
        Ok(Cdf { sizes, pcts })
    }

    /// A built-in CDF by name (`websearch`, `fbhdp`, `alistorage2019`, `googlerpc2008`;
    /// case does not matter).
    pub fn builtin(name: &str) -> Option<Cdf> {
        BUILTIN
            .iter()
            .find(|(n, _, _)| n.eq_ignore_ascii_case(name))
            .map(|(n, _, text)| {
                Cdf::parse(text).unwrap_or_else(|e| panic!("built-in CDF {n}: {e:?}"))
            })
    }

    /// The points `(size, cumulative percent)`.
    pub fn points(&self) -> impl Iterator<Item = (f64, f64)> + '_ {
        self.sizes.iter().copied().zip(self.pcts.iter().copied())
    }

    /// Mean flow size in bytes of the piecewise-linear distribution.
    pub fn mean(&self) -> f64 {
        let mut s = 0.0;
        for i in 1..self.sizes.len() {
            s += (self.sizes[i] + self.sizes[i - 1]) / 2.0 * (self.pcts[i] - self.pcts[i - 1]);
        }
        s / 100.0
    }

    /// The size at cumulative percent `u` (in [0, 100)): linear interpolation within the
    /// segment whose percents bracket `u`.
    pub fn size_at(&self, u: f64) -> f64 {
        let n = self.pcts.len();
        // First point with a percent above u; the first percent is 0 <= u and the last
        // is 100 > u, so 1 <= i <= n - 1 and pcts[i - 1] <= u < pcts[i].
        let i = self.pcts.partition_point(|&p| p <= u).clamp(1, n - 1);
        let (x0, y0, x1, y1) = (
            self.sizes[i - 1],
            self.pcts[i - 1],
            self.sizes[i],
            self.pcts[i],
        );
        if y1 <= y0 {
            return x1;
        }
        x0 + (x1 - x0) / (y1 - y0) * (u - y0)
    }

    /// Cumulative percent of flows of at most `size` bytes (the CDF itself).
    pub fn percent_at(&self, size: f64) -> f64 {
        if size < self.sizes[0] {
            return 0.0;
        }
        // Last point at or below `size`.
        let i = self.sizes.partition_point(|&s| s <= size);
        if i >= self.sizes.len() {
            return 100.0;
        }
        let (x0, y0, x1, y1) = (
            self.sizes[i - 1],
            self.pcts[i - 1],
            self.sizes[i],
            self.pcts[i],
        );
        y0 + (y1 - y0) * (size - x0) / (x1 - x0)
    }

    /// Draws one flow size in whole bytes (at least 1).
    pub fn sample<R: Rng>(&self, rng: &mut R) -> u64 {
        let u: f64 = rng.gen::<f64>() * 100.0;
        self.size_at(u).round().max(1.0) as u64
    }
}

/// The CDF a scenario names in `field`: a built-in name, or else a file relative to
/// `base_dir`. Errors name `field`, and for a file its line.
pub fn resolve(spec: &str, base_dir: &Path, field: &str) -> Result<Cdf, ParamError> {
    if let Some(c) = Cdf::builtin(spec) {
        return Ok(c);
    }
    let names = BUILTIN
        .iter()
        .map(|(n, _, _)| format!("\"{n}\""))
        .collect::<Vec<_>>()
        .join(", ");
    let path = base_dir.join(spec);
    let text =
        crate::base::input_file::read_text(&path, crate::base::input_file::MAX_DATA_FILE_BYTES)
            .map_err(|e| {
                ParamError::new(
                    field,
                    format!(
                "unknown cdf `{spec}`: neither a built-in CDF ({names}) nor a readable file ({}){}",
                e.in_file(&path),
                crate::base::suggest::did_you_mean(spec, BUILTIN.iter().map(|(n, _, _)| *n))
            ),
                )
            })?;
    Cdf::parse(&text).map_err(|e| {
        ParamError::new(
            field,
            format!("{}:{}:1: {}", path.display(), e.line, e.message),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtins_parse_and_have_the_expected_means() {
        for (n, _, _) in BUILTIN {
            let c = Cdf::builtin(n).unwrap();
            assert!(c.mean() > 1.0, "{n}");
        }
        // WebSearch by hand: sum of mid size x percent over the 11 segments / 100.
        let ws = Cdf::builtin("websearch").unwrap();
        assert!((ws.mean() - 1_711_250.0).abs() < 1e-6, "{}", ws.mean());
        assert!(Cdf::builtin("WebSearch").is_some());
        assert!(Cdf::builtin("nope").is_none());
    }

    #[test]
    fn interpolation_inside_segments() {
        let c = Cdf::parse("0 0\n100 50\n300 100\n").unwrap();
        assert_eq!(c.size_at(0.0), 0.0);
        assert_eq!(c.size_at(25.0), 50.0);
        assert_eq!(c.size_at(50.0), 100.0);
        assert_eq!(c.size_at(75.0), 200.0);
        assert_eq!(c.percent_at(200.0), 75.0);
        assert_eq!(c.percent_at(1000.0), 100.0);
        assert_eq!(c.mean(), (50.0 * 50.0 + 200.0 * 50.0) / 100.0);
        // A step (two points at one size) and a flat stretch (two at one percent).
        let s = Cdf::parse("0 0\n10 0\n10 40\n20 40\n30 100").unwrap();
        assert_eq!(s.size_at(0.0), 10.0);
        assert_eq!(s.size_at(39.9), 10.0);
        assert_eq!(s.size_at(40.0), 20.0);
    }

    #[test]
    fn bad_files_name_the_line() {
        let cases: &[(&str, usize, &str)] = &[
            ("0 0\n10 5\n5 100\n", 3, "sizes must not decrease"),
            (
                "0 0\n10 50\n20 40\n30 100\n",
                3,
                "percents must not decrease",
            ),
            ("0 0\n10 50\n20 90\n", 3, "must end at percent 100"),
            ("5 3\n10 100\n", 1, "first point must have percent 0"),
            ("0 0\n\n10 x\n", 3, "percent `x`"),
            ("0 0\n10 50 7\n", 2, "found 3 field"),
            ("0 0\n10 150\n", 2, "between 0 and 100"),
            ("0 0\n-1 100\n", 2, "between 0 and 1e15"),
            ("0 0\n", 1, "at least 2 points"),
        ];
        for (text, line, what) in cases {
            let e = Cdf::parse(text).unwrap_err();
            assert_eq!(e.line, *line, "{text:?}: {e:?}");
            assert!(e.message.contains(what), "{text:?}: {e:?}");
        }
    }
}
