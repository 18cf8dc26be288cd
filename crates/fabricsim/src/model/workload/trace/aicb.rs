//! SimAI/AICB workload files: a header with the parallelism, then one line per layer.
use super::ir::{Trace, TraceError};
use std::collections::HashMap;
use std::path::Path;

/// Reads an AICB workload file into a trace of its `all_gpus` ranks (or `ranks`, when
/// given, which must agree), with the communicators it implies (tensor, data, pipeline
/// and expert parallel groups) by name.
pub fn read(
    path: &Path,
    shown: &str,
    ranks: Option<u32>,
) -> Result<(Trace, HashMap<String, Vec<u32>>), TraceError> {
    let _ = (path, ranks);
    Err(TraceError::file(shown, "", "AICB files are not read yet"))
}
