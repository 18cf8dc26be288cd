//! Flow files users bring: a CSV (`src,dst,size,start`) and the ns-3 HPCC module's flow
//! format (first line the count, then `src dst pg dport size start_seconds`).

use super::{Builder, Generator};
use crate::base::param::{Described, Param, ParamError, SizeKnob};
use crate::base::units::{parse_bytes, parse_time, NS, SEC};
use crate::model::workload::FlowSpec;
use serde::Deserialize;
use std::path::Path;

fn read(path: &Path) -> Result<String, ParamError> {
    crate::base::input_file::read_text(path, crate::base::input_file::MAX_DATA_FILE_BYTES)
        .map_err(|e| ParamError::new("file", e.in_file(path)))
}

/// A problem on a line of a flow file: reported at the field that names the file, with
/// the file and line in the message.
fn line_err(path: &Path, line: usize, m: String) -> ParamError {
    ParamError::new("file", format!("{}:{line}:1: {m}", path.display()))
}

fn check_hosts(path: &Path, line: usize, src: u32, dst: u32, n: u32) -> Result<(), ParamError> {
    for h in [src, dst] {
        if h >= n {
            return Err(line_err(
                path,
                line,
                format!("host {h} does not exist: hosts are numbered 0..{}", n - 1),
            ));
        }
    }
    if src == dst {
        return Err(line_err(
            path,
            line,
            "source and destination are the same host".into(),
        ));
    }
    Ok(())
}

/// Reads a CSV of flows. Columns `src,dst,size,start`; `size` is bytes or a size with a
/// unit, `start` nanoseconds or a time with a unit. Lines starting with `#` are comments.
pub fn read_csv(path: &Path, n_hosts: u32) -> Result<Vec<FlowSpec>, ParamError> {
    csv_flows(path, &read(path)?, n_hosts)
}

fn csv_flows(path: &Path, text: &str, n_hosts: u32) -> Result<Vec<FlowSpec>, ParamError> {
    let mut out = Vec::new();
    let mut header_seen = false;
    for (i, raw) in text.lines().enumerate() {
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let cols: Vec<&str> = line.split(',').map(str::trim).collect();
        if !header_seen {
            header_seen = true;
            if cols != ["src", "dst", "size", "start"] {
                return Err(line_err(
                    path,
                    i + 1,
                    format!("expected the header `src,dst,size,start`, found `{line}`"),
                ));
            }
            continue;
        }
        if cols.len() != 4 {
            return Err(line_err(
                path,
                i + 1,
                format!("expected 4 columns, found {}", cols.len()),
            ));
        }
        let src: u32 = cols[0].parse().map_err(|_| {
            line_err(
                path,
                i + 1,
                format!("src `{}` is not a host number", cols[0]),
            )
        })?;
        let dst: u32 = cols[1].parse().map_err(|_| {
            line_err(
                path,
                i + 1,
                format!("dst `{}` is not a host number", cols[1]),
            )
        })?;
        let size = parse_bytes(cols[2]).map_err(|e| line_err(path, i + 1, format!("size: {e}")))?;
        let start = match cols[3].parse::<u64>() {
            Ok(ns) => ns
                .checked_mul(NS)
                .ok_or_else(|| line_err(path, i + 1, format!("start: {ns} ns is too large")))?,
            Err(_) => {
                parse_time(cols[3]).map_err(|e| line_err(path, i + 1, format!("start: {e}")))?
            }
        };
        check_hosts(path, i + 1, src, dst, n_hosts)?;
        if size == 0 {
            return Err(line_err(path, i + 1, "size must be at least 1 byte".into()));
        }
        out.push(FlowSpec {
            src,
            dst,
            size,
            start,
        });
    }
    Ok(out)
}

/// Reads the ns-3 HPCC flow format. The priority group and destination port are read and
/// checked but not used: fabricsim assigns priorities from the transport section.
pub fn read_hpcc(path: &Path, n_hosts: u32) -> Result<Vec<FlowSpec>, ParamError> {
    hpcc_flows(path, &read(path)?, n_hosts)
}

fn hpcc_flows(path: &Path, text: &str, n_hosts: u32) -> Result<Vec<FlowSpec>, ParamError> {
    let mut lines = text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty());
    let (l0, first) = lines.next().ok_or_else(|| {
        line_err(
            path,
            1,
            "empty flow file: the first line must be the flow count".into(),
        )
    })?;
    let count: usize = first.trim().parse().map_err(|_| {
        line_err(
            path,
            l0 + 1,
            format!("first line `{}` must be the flow count", first.trim()),
        )
    })?;
    // The count is only announced: do not trust it for an allocation.
    let mut out = Vec::with_capacity(count.min(1 << 16));
    for (i, l) in lines {
        let f: Vec<&str> = l.split_whitespace().collect();
        if f.len() != 6 {
            return Err(line_err(
                path,
                i + 1,
                format!(
                    "expected `src dst pg dport size start_seconds`, found {} fields",
                    f.len()
                ),
            ));
        }
        let num = |k: usize, what: &str| -> Result<u64, ParamError> {
            f[k].parse::<u64>().map_err(|_| {
                line_err(
                    path,
                    i + 1,
                    format!("{what} `{}` is not a whole number", f[k]),
                )
            })
        };
        let host = |k: usize, what: &str| -> Result<u32, ParamError> {
            u32::try_from(num(k, what)?).map_err(|_| {
                line_err(
                    path,
                    i + 1,
                    format!(
                        "host {} does not exist: hosts are numbered 0..{}",
                        f[k],
                        n_hosts - 1
                    ),
                )
            })
        };
        let src = host(0, "src")?;
        let dst = host(1, "dst")?;
        num(2, "pg")?;
        num(3, "dport")?;
        let size = num(4, "size")?;
        let secs: f64 = f[5]
            .parse()
            .ok()
            .filter(|s: &f64| s.is_finite() && *s >= 0.0)
            .ok_or_else(|| {
                line_err(
                    path,
                    i + 1,
                    format!("start `{}` is not a non-negative number of seconds", f[5]),
                )
            })?;
        check_hosts(path, i + 1, src, dst, n_hosts)?;
        if size == 0 {
            return Err(line_err(path, i + 1, "size must be at least 1 byte".into()));
        }
        out.push(FlowSpec {
            src,
            dst,
            size,
            start: (secs * SEC as f64).round() as u64,
        });
    }
    if out.len() != count {
        return Err(line_err(
            path,
            l0 + 1,
            format!(
                "the header announces {count} flows, the file has {}",
                out.len()
            ),
        ));
    }
    Ok(out)
}

/// Flows from a CSV file with the header `src,dst,size,start`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CsvCfg {
    /// Path, relative to the scenario file.
    pub file: String,
}

impl Described for CsvCfg {
    const ABOUT: &'static str = "flows from a CSV file";
    fn params() -> Vec<Param> {
        vec![Param::required(
            "file",
            "header src,dst,size,start; start in ns or with a unit",
        )]
    }
}

impl Generator for CsvCfg {
    /// Exact for a file that reads: one flow per line after the header (blank lines and
    /// `#` comments aside).
    fn size(&self, ctx: &super::SizeCtx<'_>) -> Result<Option<super::WorkSize>, ParamError> {
        crate::base::param::check_file_name(&self.file, "file")?;
        let text = read(&ctx.base_dir.join(&self.file))?;
        let lines = text
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
            .count() as u64;
        Ok(Some(super::WorkSize {
            flows: lines.saturating_sub(1),
            ..Default::default()
        }))
    }

    fn size_drivers(&self) -> &'static str {
        "the lines of the file"
    }

    /// The file: every count is its.
    fn size_knobs(&self, _ctx: &super::SizeCtx<'_>) -> Vec<SizeKnob<super::WorkSize>> {
        vec![SizeKnob {
            field: "file",
            least: Some(super::WorkSize::default()),
        }]
    }

    fn generate(&self, b: &mut Builder<'_>) -> Result<(), ParamError> {
        crate::base::param::check_file_name(&self.file, "file")?;
        let flows = read_csv(&b.base_dir.join(&self.file), b.graph.hosts.len() as u32)?;
        b.work.flows.extend(flows);
        Ok(())
    }

    fn files(&self) -> Vec<(&'static str, String)> {
        vec![("file", self.file.clone())]
    }
}

/// The ns-3 HPCC flow file (`count`, then `src dst pg dport size start_seconds`).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HpccFlowFileCfg {
    /// Path, relative to the scenario file.
    pub file: String,
}

impl Described for HpccFlowFileCfg {
    const ABOUT: &'static str = "flows from an ns-3 HPCC flow file";
    fn params() -> Vec<Param> {
        vec![Param::required(
            "file",
            "the flow count, then `src dst pg dport size start_seconds` per line",
        )]
    }
}

impl Generator for HpccFlowFileCfg {
    /// Exact for a file that reads: one flow per non-blank line after the count (which
    /// must equal it).
    fn size(&self, ctx: &super::SizeCtx<'_>) -> Result<Option<super::WorkSize>, ParamError> {
        crate::base::param::check_file_name(&self.file, "file")?;
        let text = read(&ctx.base_dir.join(&self.file))?;
        let lines = text.lines().filter(|l| !l.trim().is_empty()).count() as u64;
        Ok(Some(super::WorkSize {
            flows: lines.saturating_sub(1),
            ..Default::default()
        }))
    }

    fn size_drivers(&self) -> &'static str {
        "the lines of the file"
    }

    /// The file: every count is its.
    fn size_knobs(&self, _ctx: &super::SizeCtx<'_>) -> Vec<SizeKnob<super::WorkSize>> {
        vec![SizeKnob {
            field: "file",
            least: Some(super::WorkSize::default()),
        }]
    }

    fn generate(&self, b: &mut Builder<'_>) -> Result<(), ParamError> {
        crate::base::param::check_file_name(&self.file, "file")?;
        let flows = read_hpcc(&b.base_dir.join(&self.file), b.graph.hosts.len() as u32)?;
        b.work.flows.extend(flows);
        Ok(())
    }

    fn files(&self) -> Vec<(&'static str, String)> {
        vec![("file", self.file.clone())]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hpcc_format_reads() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("flow.txt");
        std::fs::write(&p, "2\n0 1 3 100 4096 2.0\n1 0 3 100 10000 2.000001\n").unwrap();
        let f = read_hpcc(&p, 4).unwrap();
        assert_eq!(f.len(), 2);
        assert_eq!(f[1].start, 2_000_001_000_000);
        std::fs::write(&p, "3\n0 1 3 100 4096 2.0\n").unwrap();
        assert!(read_hpcc(&p, 4)
            .unwrap_err()
            .message
            .contains("announces 3"));
    }

    #[test]
    fn csv_reads_units() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f.csv");
        std::fs::write(&p, "src,dst,size,start\n0,1,1MB,10us\n2,3,4096,500\n").unwrap();
        let f = read_csv(&p, 4).unwrap();
        assert_eq!(f[0].size, 1_000_000);
        assert_eq!(f[1].start, 500 * NS);
        std::fs::write(&p, "src,dst,size,start\n0,9,1MB,10us\n").unwrap();
        let e = read_csv(&p, 4).unwrap_err();
        assert!(
            e.to_string().contains(":2:1") && e.message.contains("host 9"),
            "{e}"
        );
    }
}
