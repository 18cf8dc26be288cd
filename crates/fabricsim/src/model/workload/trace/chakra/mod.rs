//! Chakra execution traces (MLCommons `et_def.proto`): one file per rank,
//! `<prefix>.<rank>.et`, each a sequence of protobuf messages, every one preceded by its
//! length as a varint: first a `GlobalMetadata`, then the rank's `Node`s.
//!
//! | Chakra node | becomes |
//! |---|---|
//! | `COMP_NODE` (4) | [`Compute::Duration`] of `duration_micros`; when that is 0 and the integer attribute `num_ops` is above 0, [`Compute::Flops`] of it |
//! | `COMM_COLL_NODE` (7) | [`NodeKind::Coll`]: `comm_type` ALL_REDUCE (0), ALL_GATHER (2), BROADCAST (5), ALL_TO_ALL (6), REDUCE_SCATTER (7) or REDUCE_SCATTER_BLOCK (8), of `comm_size` bytes; BARRIER (9) of 4 bytes; the communicator is the string `pg_name` (all ranks when absent or empty) |
//! | `COMM_SEND_NODE` (5) | [`NodeKind::Send`] to rank `comm_dst`, tag `comm_tag` (0 when absent), `comm_size` bytes (else `tensor_size`) |
//! | `COMM_RECV_NODE` (6) | [`NodeKind::Recv`] from rank `comm_src`, likewise |
//! | `METADATA_NODE` (1) | [`NodeKind::Point`] |
//!
//! A node waits for its `data_deps`, then its `ctrl_deps` (duplicates dropped): both
//! only order execution here.
//!
//! Refused, with the file, the node and the field named:
//! - `MEM_LOAD_NODE` and `MEM_STORE_NODE`: remote memory is not modelled, and running
//!   them as nothing would make the iteration look faster than it is;
//! - REDUCE, GATHER and SCATTER, which no collective of the model implements;
//! - `INVALID_NODE` and unknown node types;
//! - an integer attribute given as a non-integer (a string, a float, a list), or a
//!   negative one: traces write integers in any of the ten integer variants, and a
//!   reader that expected one and silently read 0 from another (ASTRA-sim's int64 and
//!   uint64 mix-up) ran every collective as empty;
//! - sizes outside 1 B to 1 TiB ([`check_comm_size`]) and compute nodes over
//!   [`MAX_COMPUTE`];
//! - bytes that do not decode: a bad length varint, a message that runs past the end of
//!   the file, a message protobuf cannot parse, an empty file or one that does not start
//!   with its `GlobalMetadata` (the message's byte offset is named).
//!
//! What spans nodes (dependencies on missing nodes, cycles, sends without receives,
//! collectives the ranks disagree on) is left to [`Trace::validate`], which needs the
//! workload's communicators.
//!
//! Each file is read whole, up to [`MAX_DATA_FILE_BYTES`], and every length prefix is
//! checked against the bytes that follow it before the message is decoded, so a hostile
//! file cannot make the reader allocate more than in proportion to its size (a node of a
//! few bytes becomes a [`TraceNode`] of some 100).

use super::ir::{
    check_comm_size, CollOp, Compute, NodeKind, RankTrace, Trace, TraceError, TraceNode,
    MAX_COMPUTE,
};
use crate::base::input_file::{read_bytes, MAX_DATA_FILE_BYTES};
use crate::base::units::US;
use prost::Message;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// The messages of `et_def.proto` this reader needs, by hand (no protoc at build time).
/// Fields left out are skipped when decoding.
mod proto {
    /// `AttributeProto`: a named value of any of the types a trace writes.
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct AttributeProto {
        #[prost(string, tag = "1")]
        pub name: String,
        #[prost(
            oneof = "Value",
            tags = "3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32"
        )]
        pub value: Option<Value>,
    }

    /// `AttributeProto.value`.
    #[derive(Clone, PartialEq, prost::Oneof)]
    pub enum Value {
        #[prost(double, tag = "3")]
        DoubleVal(f64),
        #[prost(message, tag = "4")]
        DoubleList(DoubleList),
        #[prost(float, tag = "5")]
        FloatVal(f32),
        #[prost(message, tag = "6")]
        FloatList(FloatList),
        #[prost(int32, tag = "7")]
        Int32Val(i32),
        #[prost(message, tag = "8")]
        Int32List(Int32List),
        #[prost(int64, tag = "9")]
        Int64Val(i64),
        #[prost(message, tag = "10")]
        Int64List(Int64List),
        #[prost(uint32, tag = "11")]
        Uint32Val(u32),
        #[prost(message, tag = "12")]
        Uint32List(Uint32List),
        #[prost(uint64, tag = "13")]
        Uint64Val(u64),
        #[prost(message, tag = "14")]
        Uint64List(Uint64List),
        #[prost(sint32, tag = "15")]
        Sint32Val(i32),
        #[prost(message, tag = "16")]
        Sint32List(Sint32List),
        #[prost(sint64, tag = "17")]
        Sint64Val(i64),
        #[prost(message, tag = "18")]
        Sint64List(Sint64List),
        #[prost(fixed32, tag = "19")]
        Fixed32Val(u32),
        #[prost(message, tag = "20")]
        Fixed32List(Fixed32List),
        #[prost(fixed64, tag = "21")]
        Fixed64Val(u64),
        #[prost(message, tag = "22")]
        Fixed64List(Fixed64List),
        #[prost(sfixed32, tag = "23")]
        Sfixed32Val(i32),
        #[prost(message, tag = "24")]
        Sfixed32List(Sfixed32List),
        #[prost(sfixed64, tag = "25")]
        Sfixed64Val(i64),
        #[prost(message, tag = "26")]
        Sfixed64List(Sfixed64List),
        #[prost(bool, tag = "27")]
        BoolVal(bool),
        #[prost(message, tag = "28")]
        BoolList(BoolList),
        #[prost(string, tag = "29")]
        StringVal(String),
        #[prost(message, tag = "30")]
        StringList(StringList),
        #[prost(bytes = "vec", tag = "31")]
        BytesVal(Vec<u8>),
        #[prost(message, tag = "32")]
        BytesList(BytesList),
    }

    macro_rules! list {
        ($name:ident, $kind:ident, $t:ty) => {
            #[derive(Clone, PartialEq, prost::Message)]
            pub struct $name {
                #[prost($kind, repeated, tag = "1")]
                pub values: Vec<$t>,
            }
        };
    }
    list!(DoubleList, double, f64);
    list!(FloatList, float, f32);
    list!(Int32List, int32, i32);
    list!(Int64List, int64, i64);
    list!(Uint32List, uint32, u32);
    list!(Uint64List, uint64, u64);
    list!(Sint32List, sint32, i32);
    list!(Sint64List, sint64, i64);
    list!(Fixed32List, fixed32, u32);
    list!(Fixed64List, fixed64, u64);
    list!(Sfixed32List, sfixed32, i32);
    list!(Sfixed64List, sfixed64, i64);
    list!(BoolList, bool, bool);
    list!(StringList, string, String);

    /// `BytesList` (outside the macro: `bytes` takes its representation).
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct BytesList {
        #[prost(bytes = "vec", repeated, tag = "1")]
        pub values: Vec<Vec<u8>>,
    }

    /// `GlobalMetadata`: the first message of every file.
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct GlobalMetadata {
        #[prost(string, tag = "1")]
        pub version: String,
        #[prost(message, repeated, tag = "2")]
        pub attr: Vec<AttributeProto>,
    }

    /// `Node`, without its `inputs` and `outputs` (tensor descriptions).
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct Node {
        #[prost(uint64, tag = "1")]
        pub id: u64,
        #[prost(string, tag = "2")]
        pub name: String,
        /// `NodeType`, kept as its number so that an unknown one can be named.
        #[prost(int32, tag = "3")]
        pub r#type: i32,
        #[prost(uint64, repeated, tag = "4")]
        pub ctrl_deps: Vec<u64>,
        #[prost(uint64, repeated, tag = "5")]
        pub data_deps: Vec<u64>,
        #[prost(uint64, tag = "6")]
        pub start_time_micros: u64,
        #[prost(uint64, tag = "7")]
        pub duration_micros: u64,
        #[prost(message, repeated, tag = "10")]
        pub attr: Vec<AttributeProto>,
    }
}

use proto::Value;

// `NodeType`.
const METADATA_NODE: i32 = 1;
const MEM_LOAD_NODE: i32 = 2;
const MEM_STORE_NODE: i32 = 3;
const COMP_NODE: i32 = 4;
const COMM_SEND_NODE: i32 = 5;
const COMM_RECV_NODE: i32 = 6;
const COMM_COLL_NODE: i32 = 7;

const KNOWN_TYPES: &str = "METADATA_NODE (1), COMP_NODE (4), COMM_SEND_NODE (5), \
     COMM_RECV_NODE (6) and COMM_COLL_NODE (7) are run; MEM_LOAD_NODE (2) and \
     MEM_STORE_NODE (3) are refused";

const SUPPORTED_COLLS: &str = "ALL_REDUCE (0), ALL_GATHER (2), BROADCAST (5), ALL_TO_ALL (6), \
     REDUCE_SCATTER (7), REDUCE_SCATTER_BLOCK (8) and BARRIER (9)";

/// Bytes a barrier moves (see [`CollOp::Barrier`]).
const BARRIER_BYTES: u64 = 4;

/// Most ranks a trace may have (beyond the largest fabric's GPUs).
pub const MAX_RANKS: u32 = 1 << 20;

/// Most bytes all the files of a trace may hold together (a 100,000-GPU GPT-like trace
/// of `scripts/gpt_trace.py` is about 2 GiB).
pub const MAX_TRACE_BYTES: u64 = 8 << 30;

/// Reads ranks `0..ranks` of the trace whose files are `<prefix>.<rank>.et`; `shown` is
/// the prefix as the scenario wrote it (messages name files by it).
pub fn read(prefix: &Path, shown: &str, ranks: u32) -> Result<Trace, TraceError> {
    if ranks == 0 {
        return Err(TraceError::file(
            shown,
            "ranks",
            format!("the workload has no rank: at least {shown}.0.et is read"),
        ));
    }
    if ranks > MAX_RANKS {
        return Err(TraceError::file(
            shown,
            "ranks",
            format!("{ranks} ranks: at most {MAX_RANKS}"),
        ));
    }
    let mut trace = Trace {
        ranks: Vec::with_capacity(ranks.min(1 << 16) as usize),
    };
    // All the files together are bounded too: each may hold up to the data-file limit,
    // and a trace of many ranks would otherwise be read whole before the memory budget
    // could price it.
    let mut total = 0u64;
    for r in 0..ranks {
        let file = format!("{shown}.{r}.et");
        let path = rank_path(prefix, r);
        if std::fs::metadata(&path).is_err_and(|e| e.kind() == std::io::ErrorKind::NotFound) {
            return Err(TraceError::file(
                &file,
                "",
                format!(
                    "rank {r}'s file is missing: the workload expects {ranks} ranks, \
                     files {shown}.0.et to {shown}.{}.et",
                    ranks - 1
                ),
            ));
        }
        let bytes = read_bytes(&path, MAX_DATA_FILE_BYTES)
            .map_err(|e| TraceError::file(&file, "", e.to_string()))?;
        total += bytes.len() as u64;
        if total > MAX_TRACE_BYTES {
            return Err(TraceError::file(
                &file,
                "",
                format!(
                    "the trace's files up to rank {r} hold more than {} MiB together: at most that is read",
                    MAX_TRACE_BYTES >> 20
                ),
            ));
        }
        trace.ranks.push(parse_rank(&file, &bytes)?);
    }
    Ok(trace)
}

/// How many rank files `<prefix>.0.et`, `<prefix>.1.et`, ... exist without a gap.
pub fn rank_count(prefix: &Path) -> u32 {
    let mut n = 0;
    while n < u32::MAX && rank_path(prefix, n).is_file() {
        n += 1;
    }
    n
}

/// `<prefix>.<rank>.et` (appended to the prefix: its last component may hold dots).
fn rank_path(prefix: &Path, rank: u32) -> PathBuf {
    let mut s = OsString::from(prefix.as_os_str());
    s.push(format!(".{rank}.et"));
    PathBuf::from(s)
}

/// One rank's file, already read; `file` names it in messages.
fn parse_rank(file: &str, bytes: &[u8]) -> Result<RankTrace, TraceError> {
    let mut msgs = Messages { file, bytes, at: 0 };
    let Some((at, first)) = msgs.next_message()? else {
        return Err(TraceError::file(
            file,
            "GlobalMetadata",
            "the file is empty: a Chakra trace starts with a GlobalMetadata message",
        ));
    };
    check_metadata(file, at, first)?;
    let mut nodes = Vec::new();
    while let Some((at, body)) = msgs.next_message()? {
        let n = proto::Node::decode(body).map_err(|e| {
            TraceError::file(
                file,
                "Node",
                format!("the message at byte {at} is not a valid Node: {e}"),
            )
        })?;
        nodes.push(node(file, n)?);
    }
    Ok(RankTrace {
        file: file.to_string(),
        nodes,
    })
}

/// Refuses a first message that is not a `GlobalMetadata`. A `GlobalMetadata` never
/// has a field 3, a `Node`'s type: a first message with one is a node, whatever else
/// it decodes as.
fn check_metadata(file: &str, at: usize, body: &[u8]) -> Result<(), TraceError> {
    if let Ok(n) = proto::Node::decode(body) {
        if n.r#type != 0 {
            return Err(TraceError::file(
                file,
                "GlobalMetadata",
                format!(
                    "the first message (byte {at}) is a Node (id {}, type {}): a Chakra trace \
                     starts with a GlobalMetadata message",
                    n.id, n.r#type
                ),
            ));
        }
    }
    proto::GlobalMetadata::decode(body).map_err(|e| {
        TraceError::file(
            file,
            "GlobalMetadata",
            format!("the first message (byte {at}) is not a valid GlobalMetadata: {e}"),
        )
    })?;
    Ok(())
}

/// The length-delimited messages of a file, each with its byte offset.
struct Messages<'a> {
    file: &'a str,
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Messages<'a> {
    /// The next message's offset and body, `None` at the end of the file.
    fn next_message(&mut self) -> Result<Option<(usize, &'a [u8])>, TraceError> {
        let at = self.at;
        if at == self.bytes.len() {
            return Ok(None);
        }
        let bad = |m: String| TraceError::file(self.file, "", format!("byte {at}: {m}"));
        let (len, width) = varint(&self.bytes[at..]).map_err(|m| bad(m.to_string()))?;
        let start = at + width;
        let left = self.bytes.len() - start;
        // Checked before anything is decoded: the length is the file's word, not a size
        // to allocate.
        if len > left as u64 {
            return Err(bad(format!(
                "the message is {len} bytes long but the file has {left} after its length: \
                 the file is truncated or corrupt"
            )));
        }
        self.at = start + len as usize;
        Ok(Some((at, &self.bytes[start..self.at])))
    }
}

/// A message length: a base-128 varint of at most 10 bytes (64 bits); its value and width.
fn varint(bytes: &[u8]) -> Result<(u64, usize), &'static str> {
    let mut v = 0u64;
    for (i, &b) in bytes.iter().enumerate().take(10) {
        if i == 9 && b > 1 {
            return Err("a message length that is not a valid varint (over 64 bits)");
        }
        v |= u64::from(b & 0x7f) << (7 * i);
        if b & 0x80 == 0 {
            return Ok((v, i + 1));
        }
    }
    Err("the file ends inside a message length: it is truncated")
}

/// One node, converted.
fn node(file: &str, n: proto::Node) -> Result<TraceNode, TraceError> {
    let attrs = Attrs {
        file,
        node: n.id,
        attrs: &n.attr,
    };
    let kind = match n.r#type {
        METADATA_NODE => NodeKind::Point,
        COMP_NODE => NodeKind::Comp(compute(&attrs, n.duration_micros)?),
        COMM_COLL_NODE => collective(&attrs)?,
        COMM_SEND_NODE | COMM_RECV_NODE => point_to_point(&attrs, n.r#type == COMM_SEND_NODE)?,
        MEM_LOAD_NODE | MEM_STORE_NODE => {
            let what = if n.r#type == MEM_LOAD_NODE {
                "MEM_LOAD_NODE"
            } else {
                "MEM_STORE_NODE"
            };
            return Err(TraceError::node(
                file,
                n.id,
                "type",
                format!(
                    "{what} ({}): remote memory nodes are not modelled (data moves only \
                     through sends, receives and collectives)",
                    n.r#type
                ),
            ));
        }
        t => {
            return Err(TraceError::node(
                file,
                n.id,
                "type",
                format!("unknown node type {t}: {KNOWN_TYPES}"),
            ))
        }
    };
    Ok(TraceNode {
        id: n.id,
        name: n.name,
        kind,
        deps: deps(&n.data_deps, &n.ctrl_deps),
    })
}

/// Data then control dependencies, each id once, in that order.
fn deps(data: &[u64], ctrl: &[u64]) -> Vec<u64> {
    let all = data.iter().chain(ctrl).copied();
    let mut out = Vec::with_capacity(data.len() + ctrl.len());
    // Nodes wait for a handful of others: a scan is cheaper than a set below some size.
    if data.len() + ctrl.len() <= 32 {
        for d in all {
            if !out.contains(&d) {
                out.push(d);
            }
        }
    } else {
        let mut seen = std::collections::HashSet::with_capacity(out.capacity());
        out.extend(all.filter(|d| seen.insert(*d)));
    }
    out
}

fn compute(attrs: &Attrs, micros: u64) -> Result<Compute, TraceError> {
    if micros == 0 {
        if let Some(ops) = attrs.int("num_ops")? {
            if ops > 0 {
                return Ok(Compute::Flops(ops));
            }
        }
    }
    if micros > MAX_COMPUTE / US {
        return Err(TraceError::node(
            attrs.file,
            attrs.node,
            "duration_micros",
            format!(
                "{micros} µs is out of range: compute nodes of at most {} µs (1000 s) are run",
                MAX_COMPUTE / US
            ),
        ));
    }
    Ok(Compute::Duration(micros * US))
}

fn collective(attrs: &Attrs) -> Result<NodeKind, TraceError> {
    let t = attrs.required("comm_type", "a COMM_COLL_NODE names its collective")?;
    let unsupported = |name: &str| {
        attrs.error(
            "comm_type",
            format!("{name} ({t}) is not supported: the supported ones are {SUPPORTED_COLLS}"),
        )
    };
    let op = match t {
        0 => CollOp::AllReduce,
        2 => CollOp::AllGather,
        5 => CollOp::Broadcast,
        6 => CollOp::AllToAll,
        7 | 8 => CollOp::ReduceScatter,
        9 => CollOp::Barrier,
        1 => return Err(unsupported("REDUCE")),
        3 => return Err(unsupported("GATHER")),
        4 => return Err(unsupported("SCATTER")),
        _ => {
            return Err(attrs.error(
                "comm_type",
                format!("unknown collective {t}: the supported ones are {SUPPORTED_COLLS}"),
            ))
        }
    };
    // A barrier's size is what PyTorch's barrier moves, whatever the trace says (Chakra's
    // own generator writes 0).
    let size = if op == CollOp::Barrier {
        BARRIER_BYTES
    } else {
        let s = attrs.required("comm_size", "a collective moves comm_size bytes")?;
        check_comm_size(attrs.file, attrs.node, "comm_size", s)?;
        s
    };
    // An empty name cannot be looked up among the workload's communicators: it is the
    // converter's way of saying there is none.
    let group = attrs
        .string("pg_name")?
        .filter(|g| !g.is_empty())
        .map(str::to_string);
    Ok(NodeKind::Coll { op, size, group })
}

fn point_to_point(attrs: &Attrs, send: bool) -> Result<NodeKind, TraceError> {
    let (field, why) = if send {
        ("comm_dst", "a COMM_SEND_NODE names the receiving rank")
    } else {
        ("comm_src", "a COMM_RECV_NODE names the sending rank")
    };
    let peer = attrs.required(field, why)?;
    let peer = u32::try_from(peer)
        .map_err(|_| attrs.error(field, format!("rank {peer} is out of range")))?;
    let tag = attrs.int("comm_tag")?.unwrap_or(0);
    let (field, size) = if let Some(s) = attrs.int("comm_size")? {
        ("comm_size", s)
    } else if let Some(s) = attrs.int("tensor_size")? {
        ("tensor_size", s)
    } else {
        return Err(attrs.error(
            "comm_size",
            "missing: the message's bytes are in comm_size (or tensor_size)",
        ));
    };
    check_comm_size(attrs.file, attrs.node, field, size)?;
    Ok(if send {
        NodeKind::Send { peer, tag, size }
    } else {
        NodeKind::Recv { peer, tag, size }
    })
}

/// A node's attributes, looked up by name (the first of that name counts).
struct Attrs<'a> {
    file: &'a str,
    node: u64,
    attrs: &'a [proto::AttributeProto],
}

impl Attrs<'_> {
    fn error(&self, field: &str, message: impl Into<String>) -> TraceError {
        TraceError::node(self.file, self.node, field, message)
    }

    fn get(&self, name: &str) -> Option<&proto::AttributeProto> {
        self.attrs.iter().find(|a| a.name == name)
    }

    /// A non-negative integer in any of the integer variants; `None` when absent.
    fn int(&self, name: &str) -> Result<Option<u64>, TraceError> {
        let Some(a) = self.get(name) else {
            return Ok(None);
        };
        let v: i128 = match &a.value {
            Some(Value::Int32Val(v) | Value::Sint32Val(v) | Value::Sfixed32Val(v)) => (*v).into(),
            Some(Value::Int64Val(v) | Value::Sint64Val(v) | Value::Sfixed64Val(v)) => (*v).into(),
            Some(Value::Uint32Val(v) | Value::Fixed32Val(v)) => (*v).into(),
            Some(Value::Uint64Val(v) | Value::Fixed64Val(v)) => (*v).into(),
            other => {
                return Err(self.error(
                    name,
                    format!(
                        "holds {}: an integer (int32_val to sfixed64_val) is expected",
                        variant(other.as_ref())
                    ),
                ))
            }
        };
        u64::try_from(v).map(Some).map_err(|_| {
            self.error(
                name,
                format!(
                    "{v} is out of range: the field is never negative (a negative value is \
                     usually an unsigned count written as a signed one)"
                ),
            )
        })
    }

    /// An integer that must be there.
    fn required(&self, name: &str, why: &str) -> Result<u64, TraceError> {
        self.int(name)?
            .ok_or_else(|| self.error(name, format!("missing: {why}")))
    }

    /// A string (`string_val`); `None` when absent.
    fn string(&self, name: &str) -> Result<Option<&str>, TraceError> {
        match self.get(name).map(|a| &a.value) {
            None => Ok(None),
            Some(Some(Value::StringVal(s))) => Ok(Some(s)),
            Some(other) => Err(self.error(
                name,
                format!(
                    "holds {}: a string (string_val) is expected",
                    variant(other.as_ref())
                ),
            )),
        }
    }
}

/// The name of a value's variant, as the proto spells it.
fn variant(v: Option<&Value>) -> &'static str {
    let Some(v) = v else {
        return "no value";
    };
    match v {
        Value::DoubleVal(_) => "double_val",
        Value::DoubleList(_) => "double_list",
        Value::FloatVal(_) => "float_val",
        Value::FloatList(_) => "float_list",
        Value::Int32Val(_) => "int32_val",
        Value::Int32List(_) => "int32_list",
        Value::Int64Val(_) => "int64_val",
        Value::Int64List(_) => "int64_list",
        Value::Uint32Val(_) => "uint32_val",
        Value::Uint32List(_) => "uint32_list",
        Value::Uint64Val(_) => "uint64_val",
        Value::Uint64List(_) => "uint64_list",
        Value::Sint32Val(_) => "sint32_val",
        Value::Sint32List(_) => "sint32_list",
        Value::Sint64Val(_) => "sint64_val",
        Value::Sint64List(_) => "sint64_list",
        Value::Fixed32Val(_) => "fixed32_val",
        Value::Fixed32List(_) => "fixed32_list",
        Value::Fixed64Val(_) => "fixed64_val",
        Value::Fixed64List(_) => "fixed64_list",
        Value::Sfixed32Val(_) => "sfixed32_val",
        Value::Sfixed32List(_) => "sfixed32_list",
        Value::Sfixed64Val(_) => "sfixed64_val",
        Value::Sfixed64List(_) => "sfixed64_list",
        Value::BoolVal(_) => "bool_val",
        Value::BoolList(_) => "bool_list",
        Value::StringVal(_) => "string_val",
        Value::StringList(_) => "string_list",
        Value::BytesVal(_) => "bytes_val",
        Value::BytesList(_) => "bytes_list",
    }
}

#[cfg(test)]
mod tests;
