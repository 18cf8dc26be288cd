//! The fields of an AICB file: numbers, times, comm types and the header line, each
//! checked and its error naming the file, the line and the field.

use super::*;

/// An error of line `line`, field `field` (`line 5: fwd_comm_size`).
pub(super) fn err(shown: &str, line: usize, field: &str, message: impl Into<String>) -> TraceError {
    let f = if field.is_empty() {
        format!("line {line}")
    } else {
        format!("line {line}: {field}")
    };
    TraceError::file(shown, &f, message)
}

/// A whole non-negative number.
pub(super) fn number(shown: &str, line: usize, field: &str, tok: &str) -> Result<u64, TraceError> {
    if let Some(rest) = tok.strip_prefix('-') {
        if !rest.is_empty() && rest.bytes().all(|b| b.is_ascii_digit()) {
            return Err(err(
                shown,
                line,
                field,
                format!("`{tok}` is negative: a whole number of at least 0 is expected"),
            ));
        }
    }
    if tok.is_empty() || !tok.bytes().all(|b| b.is_ascii_digit()) {
        return Err(err(
            shown,
            line,
            field,
            format!("`{tok}` is not a number: a whole number of at least 0 is expected"),
        ));
    }
    tok.parse::<u64>().map_err(|_| {
        err(
            shown,
            line,
            field,
            format!("`{tok}` is too large: at most {} is read", u64::MAX),
        )
    })
}

/// A group size or count of the header: 1 to `u32::MAX`.
pub(super) fn count(shown: &str, field: &str, tok: &str) -> Result<u32, TraceError> {
    let v = number(shown, 1, field, tok)?;
    if v == 0 || v > u32::MAX as u64 {
        return Err(err(
            shown,
            1,
            field,
            format!("{v} is out of range: 1 to {}", u32::MAX),
        ));
    }
    Ok(v as u32)
}

/// A time in nanoseconds, as picoseconds.
pub(super) fn time(shown: &str, line: usize, field: &str, tok: &str) -> Result<Time, TraceError> {
    let ns = number(shown, line, field, tok)?;
    match ns.checked_mul(NS) {
        Some(t) if t <= MAX_COMPUTE => Ok(t),
        _ => Err(err(
            shown,
            line,
            field,
            format!(
                "{ns} ns is too long: at most {} ns (1000 s)",
                MAX_COMPUTE / NS
            ),
        )),
    }
}

/// A comm type and size; `None` when they move nothing. `wg`: the weight-gradient
/// column, whose plain types run on the DP group (the others' on the TP group).
pub(super) fn comm(
    shown: &str,
    line: usize,
    fields: (&str, &str),
    toks: (&str, &str),
    wg: bool,
) -> Result<Option<Comm>, TraceError> {
    let size = number(shown, line, fields.1, toks.1)?;
    let t = toks.0;
    if t == "NONE" || t == "BROADCAST" {
        return Ok(None);
    }
    let (base, group) = if let Some(b) = t.strip_suffix("_DP_EP") {
        (b, GroupKind::DpEp)
    } else if let Some(b) = t.strip_suffix("_EP") {
        (b, GroupKind::Ep)
    } else if wg {
        (t, GroupKind::Dp)
    } else {
        (t, GroupKind::Tp)
    };
    let op = match base {
        "ALLREDUCE" => CollOp::AllReduce,
        "ALLGATHER" => CollOp::AllGather,
        "REDUCESCATTER" => CollOp::ReduceScatter,
        "ALLTOALL" => CollOp::AllToAll,
        _ => {
            return Err(err(
                shown,
                line,
                fields.0,
                format!("`{t}` is not a comm type: known are {COMM_TYPES}"),
            ))
        }
    };
    if size == 0 {
        return Ok(None);
    }
    check_comm_size(shown, 0, fields.1, size).map_err(|mut e| {
        e.node = None;
        e.field = format!("line {line}: {}", fields.1);
        e
    })?;
    Ok(Some(Comm { op, group, size }))
}

/// What line 1 says.
pub(super) struct Header {
    pub(super) policy: Policy,
    pub(super) tp: u32,
    pub(super) ep: u32,
    pub(super) pp: u32,
    pub(super) all_gpus: Option<u32>,
}

pub(super) fn header(shown: &str, line: &str) -> Result<Header, TraceError> {
    let toks: Vec<&str> = line.split_whitespace().collect();
    let Some(&word) = toks.first() else {
        return Err(err(
            shown,
            1,
            "parallelism",
            format!("the line is empty: it starts with the parallelism, one of {WORDS}"),
        ));
    };
    let policy = match word {
        "HYBRID_TRANSFORMER" => Policy::Transformer,
        "HYBRID_TRANSFORMER_FWD_IN_BCKWD" => Policy::TransformerFwdInBckwd,
        "MODEL" => Policy::Model,
        "DATA" => Policy::Data,
        "MICRO" => Policy::Micro,
        w if OTHER_WORDS.contains(&w) => {
            return Err(err(
                shown,
                1,
                "parallelism",
                format!("SimAI's `{w}` is not read (AICB does not write it): read are {WORDS}"),
            ))
        }
        w => {
            return Err(err(
                shown,
                1,
                "parallelism",
                format!("`{w}` is not a parallelism: known are {WORDS}"),
            ))
        }
    };
    let mut h = Header {
        policy,
        tp: 1,
        ep: 1,
        pp: 1,
        all_gpus: None,
    };
    let mut i = 1;
    while i < toks.len() {
        let tok = toks[i];
        // SimAI takes `pp_comm` with or without its colon (SimAI's own example has none).
        let key = match tok.strip_suffix(':') {
            Some(k) if !k.is_empty() => k,
            _ if tok == "pp_comm" => tok,
            _ => {
                return Err(err(
                    shown,
                    1,
                    "",
                    format!(
                        "`{tok}` is not a `key:`: the parallelism is followed by `key: value` \
                         pairs (model_parallel_NPU_group, ep, pp, vpp, ga, all_gpus, \
                         checkpoints, checkpoint_initiates, pp_comm)"
                    ),
                ))
            }
        };
        let Some(&v) = toks.get(i + 1) else {
            return Err(err(
                shown,
                1,
                key,
                "the key has no value: the line ends after it",
            ));
        };
        match key {
            "model_parallel_NPU_group" => h.tp = count(shown, key, v)?,
            "ep" => h.ep = count(shown, key, v)?,
            "pp" => h.pp = count(shown, key, v)?,
            // Unused by SimAI's packet-level run; AICB writes `ga: 0` when the global batch
            // is smaller than one micro-batch per replica, which SimAI only warns about.
            "vpp" | "ga" => {
                number(shown, 1, key, v)?;
            }
            "all_gpus" => h.all_gpus = Some(count(shown, key, v)?),
            "checkpoints" | "checkpoint_initiates" if number(shown, 1, key, v)? > 0 => {
                return Err(err(
                    shown,
                    1,
                    key,
                    format!(
                        "{v} layers: activation recomputation in the backward pass is not \
                         built, 0 is read (AICB writes 0)"
                    ),
                ));
            }
            "pp_comm" => {
                // AICB divides it by TP in Python and may write `4194304.0`; SimAI's stoi
                // takes the whole part. Only a zero fraction is taken here.
                let whole = match v.split_once('.') {
                    Some((w, f))
                        if !w.is_empty() && !f.is_empty() && f.bytes().all(|b| b == b'0') =>
                    {
                        w
                    }
                    _ => v,
                };
                number(shown, 1, key, whole)?;
            }
            // SimAI ignores keys it does not know (AICB's multi-allreduce test writes
            // `expert_parallel_npu_group:`, which SimAI never reads); so does this reader.
            _ => {}
        }
        i += 2;
    }
    Ok(h)
}
