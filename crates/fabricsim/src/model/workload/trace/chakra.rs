//! Chakra execution traces (MLCommons `et_def.proto`): one file per rank.
use super::ir::{Trace, TraceError};
use std::path::Path;

/// Reads ranks `0..ranks` of the trace whose files are `<prefix>.<rank>.et`; `shown` is
/// the prefix as the scenario wrote it (messages name files by it).
pub fn read(prefix: &Path, shown: &str, ranks: u32) -> Result<Trace, TraceError> {
    let _ = (prefix, ranks);
    Err(TraceError::file(shown, "", "Chakra traces are not read yet"))
}

/// How many rank files `<prefix>.0.et`, `<prefix>.1.et`, ... exist without a gap.
pub fn rank_count(prefix: &Path) -> u32 {
    let _ = prefix;
    0
}
