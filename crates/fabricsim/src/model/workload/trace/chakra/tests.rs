//! Tests of the Chakra reader: the fixtures decoded node by node, every refusal, and
//! hostile bytes that never panic.

use super::proto::{AttributeProto, GlobalMetadata, Node};
use super::*;
use std::collections::HashMap;

const KIB: u64 = 1 << 10;
const MIB: u64 = 1 << 20;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../fabricsim-cli/tests/fixtures/traces")
}

fn read_fixture(prefix: &str, ranks: u32) -> Result<Trace, TraceError> {
    read(&fixtures().join(prefix), prefix, ranks)
}

fn tn(id: u64, name: &str, kind: NodeKind, deps: &[u64]) -> TraceNode {
    TraceNode {
        id,
        name: name.into(),
        kind,
        deps: deps.to_vec(),
    }
}

fn comp_us(us: u64) -> NodeKind {
    NodeKind::Comp(Compute::Duration(us * US))
}

fn coll(op: CollOp, size: u64) -> NodeKind {
    NodeKind::Coll {
        op,
        size,
        group: None,
    }
}

fn rank(file: &str, nodes: Vec<TraceNode>) -> RankTrace {
    RankTrace {
        file: file.into(),
        nodes,
    }
}

/// The error of a trace that reads but does not validate.
fn invalid(prefix: &str) -> TraceError {
    let t = read_fixture(prefix, 2).unwrap_or_else(|e| panic!("{prefix}: {e}"));
    t.validate(&HashMap::new()).unwrap_err()
}

fn assert_mentions(e: &TraceError, parts: &[&str]) {
    let s = e.to_string();
    for p in parts {
        assert!(s.contains(p), "`{p}` not in: {s}");
    }
}

#[test]
fn reads_chakras_generator_traces() {
    let t = read_fixture("one_comp_node", 2).unwrap();
    assert_eq!(
        t.ranks,
        vec![
            rank(
                "one_comp_node.0.et",
                vec![tn(0, "COMP_NODE", comp_us(5), &[])]
            ),
            rank(
                "one_comp_node.1.et",
                vec![tn(1, "COMP_NODE", comp_us(5), &[])]
            ),
        ]
    );
    t.validate(&HashMap::new()).unwrap();

    let t = read_fixture("two_comp_nodes_dependent", 2).unwrap();
    let f = |r: u64| format!("two_comp_nodes_dependent.{r}.et");
    assert_eq!(
        t.ranks,
        vec![
            rank(
                &f(0),
                vec![
                    tn(0, "COMP_NODE", comp_us(5), &[]),
                    tn(1, "COMP_NODE", comp_us(5), &[0])
                ]
            ),
            rank(
                &f(1),
                vec![
                    tn(2, "COMP_NODE", comp_us(5), &[]),
                    tn(3, "COMP_NODE", comp_us(5), &[2])
                ]
            ),
        ]
    );
    t.validate(&HashMap::new()).unwrap();

    for (prefix, name, op, size) in [
        (
            "one_comm_coll_node_allreduce",
            "ALL_REDUCE",
            CollOp::AllReduce,
            65536,
        ),
        (
            "one_comm_coll_node_allgather",
            "ALL_GATHER",
            CollOp::AllGather,
            65536,
        ),
        // The generator writes comm_size 0 for its barrier.
        ("one_comm_coll_node_barrier", "BARRIER", CollOp::Barrier, 4),
    ] {
        let t = read_fixture(prefix, 2).unwrap();
        assert_eq!(
            t.ranks,
            vec![
                rank(
                    &format!("{prefix}.0.et"),
                    vec![tn(0, name, coll(op, size), &[])]
                ),
                rank(
                    &format!("{prefix}.1.et"),
                    vec![tn(1, name, coll(op, size), &[])]
                ),
            ],
            "{prefix}"
        );
        t.validate(&HashMap::new()).unwrap();
    }

    // The generator's sends name no receiving rank.
    let e = read_fixture("one_comm_send_node", 2).unwrap_err();
    assert_eq!((e.node, e.field.as_str()), (Some(0), "comm_dst"), "{e}");
    assert_mentions(
        &e,
        &["one_comm_send_node.0.et", "node 0", "`comm_dst`", "missing"],
    );
}

#[test]
fn reads_the_closed_form_trace() {
    let t = read_fixture("closed_form", 4).unwrap();
    let body = || {
        vec![
            tn(1, "fwd", comp_us(10), &[]),
            tn(2, "grad_sync", coll(CollOp::AllReduce, MIB), &[1]),
            tn(3, "bwd", comp_us(20), &[2]),
        ]
    };
    let mut expected: Vec<RankTrace> = (0..4)
        .map(|r| rank(&format!("closed_form.{r}.et"), body()))
        .collect();
    let p2p = 256 * KIB;
    expected[0].nodes.push(tn(
        4,
        "send_act",
        NodeKind::Send {
            peer: 1,
            tag: 7,
            size: p2p,
        },
        &[3],
    ));
    expected[1].nodes.push(tn(
        4,
        "recv_act",
        NodeKind::Recv {
            peer: 0,
            tag: 7,
            size: p2p,
        },
        &[3],
    ));
    assert_eq!(t.ranks, expected);
    t.validate(&HashMap::new()).unwrap();
    assert_eq!(rank_count(&fixtures().join("closed_form")), 4);
}

#[test]
fn reads_the_pair_trace() {
    let t = read_fixture("pair", 2).unwrap();
    let (send, recv) = (
        NodeKind::Send {
            peer: 1,
            tag: 1,
            size: MIB,
        },
        NodeKind::Recv {
            peer: 0,
            tag: 1,
            size: MIB,
        },
    );
    assert_eq!(
        t.ranks,
        vec![
            rank(
                "pair.0.et",
                vec![tn(1, "work", comp_us(5), &[]), tn(2, "send", send, &[1])]
            ),
            rank(
                "pair.1.et",
                vec![tn(1, "recv", recv, &[]), tn(2, "work", comp_us(5), &[1])]
            ),
        ]
    );
    t.validate(&HashMap::new()).unwrap();
}

#[test]
fn malformed_files_name_the_file_the_node_and_the_field() {
    let e = read_fixture("bad_node_type", 2).unwrap_err();
    assert_mentions(
        &e,
        &[
            "bad_node_type.0.et",
            "node 2",
            "`type`",
            "unknown node type 99",
            "COMP_NODE (4)",
        ],
    );
    let e = read_fixture("bad_size", 2).unwrap_err();
    assert_mentions(
        &e,
        &[
            "bad_size.0.et",
            "node 1",
            "`comm_size`",
            "-1 is out of range",
        ],
    );
    let e = read_fixture("bad_huge", 2).unwrap_err();
    assert_mentions(
        &e,
        &[
            "bad_huge.0.et",
            "node 1",
            "`comm_size`",
            &format!("{} bytes", 1u64 << 50),
        ],
    );
    let e = read_fixture("bad_mem_node", 2).unwrap_err();
    assert_mentions(
        &e,
        &[
            "bad_mem_node.0.et",
            "node 1",
            "`type`",
            "MEM_LOAD_NODE",
            "not modelled",
        ],
    );
    // The cut is in rank 1's third message, which starts after the 8-byte
    // GlobalMetadata and a 13-byte node.
    let e = read_fixture("bad_truncated", 2).unwrap_err();
    assert_eq!(e.node, None);
    assert_mentions(&e, &["bad_truncated.1.et", "byte 21", "truncated"]);
    let e = read_fixture("bad_missing_rank", 2).unwrap_err();
    assert_mentions(
        &e,
        &["bad_missing_rank.1.et", "rank 1", "missing", "2 ranks"],
    );
    assert_eq!(rank_count(&fixtures().join("bad_missing_rank")), 1);
    assert_eq!(rank_count(&fixtures().join("no_such_trace")), 0);
}

#[test]
fn traces_that_read_but_do_not_validate() {
    let e = invalid("bad_dangling");
    assert_eq!((e.node, e.field.as_str()), (Some(2), "data_deps"), "{e}");
    assert_mentions(&e, &["bad_dangling.0.et", "node 42"]);
    let e = invalid("bad_cycle");
    assert_eq!(e.field, "data_deps", "{e}");
    assert_mentions(&e, &["bad_cycle.0.et", "cycle"]);
    let e = invalid("bad_coll_mismatch");
    assert_eq!((e.node, e.field.as_str()), (Some(1), "comm_size"), "{e}");
    assert_mentions(&e, &["bad_coll_mismatch.1.et", "2097152", "1048576"]);
    let e = invalid("bad_unmatched_send");
    assert_eq!((e.node, e.field.as_str()), (Some(1), "comm_dst"), "{e}");
    assert_mentions(&e, &["bad_unmatched_send.0.et", "no matching receive"]);
}

// Traces made here, for what the fixtures do not cover.

fn metadata() -> Vec<u8> {
    GlobalMetadata {
        version: "1.0.0".into(),
        attr: vec![],
    }
    .encode_length_delimited_to_vec()
}

fn attr(name: &str, value: Value) -> AttributeProto {
    AttributeProto {
        name: name.into(),
        value: Some(value),
    }
}

fn pnode(id: u64, ty: i32, attr: Vec<AttributeProto>) -> Node {
    Node {
        id,
        name: format!("n{id}"),
        r#type: ty,
        attr,
        ..Node::default()
    }
}

fn parse(nodes: &[Node]) -> Result<RankTrace, TraceError> {
    let mut bytes = metadata();
    for n in nodes {
        bytes.extend(n.encode_length_delimited_to_vec());
    }
    parse_rank("t.0.et", &bytes)
}

fn allreduce(size: Value) -> Node {
    pnode(
        3,
        COMM_COLL_NODE,
        vec![
            attr("comm_type", Value::Int32Val(0)),
            attr("comm_size", size),
        ],
    )
}

#[test]
fn integers_come_in_any_integer_variant() {
    for v in [
        Value::Int32Val(4096),
        Value::Int64Val(4096),
        Value::Uint32Val(4096),
        Value::Uint64Val(4096),
        Value::Sint32Val(4096),
        Value::Sint64Val(4096),
        Value::Fixed32Val(4096),
        Value::Fixed64Val(4096),
        Value::Sfixed32Val(4096),
        Value::Sfixed64Val(4096),
    ] {
        let what = variant(Some(&v));
        let t = parse(&[allreduce(v)]).unwrap_or_else(|e| panic!("{what}: {e}"));
        assert_eq!(t.nodes[0].kind, coll(CollOp::AllReduce, 4096), "{what}");
    }
    for v in [
        Value::Sint64Val(-5),
        Value::Int32Val(-5),
        Value::Sfixed64Val(-5),
    ] {
        let e = parse(&[allreduce(v)]).unwrap_err();
        assert_mentions(
            &e,
            &["t.0.et", "node 3", "`comm_size`", "-5 is out of range"],
        );
    }
    let e = parse(&[allreduce(Value::StringVal("4096".into()))]).unwrap_err();
    assert_mentions(&e, &["node 3", "`comm_size`", "string_val", "integer"]);
    let e = parse(&[allreduce(Value::Int64List(proto::Int64List {
        values: vec![4096],
    }))])
    .unwrap_err();
    assert_mentions(&e, &["`comm_size`", "int64_list"]);
    let mut n = allreduce(Value::Int64Val(4096));
    n.attr.push(attr("pg_name", Value::Int64Val(1)));
    let e = parse(&[n]).unwrap_err();
    assert_mentions(&e, &["`pg_name`", "int64_val", "string"]);
}

#[test]
fn collectives_sends_and_receives() {
    let mut n = allreduce(Value::Uint64Val(MIB));
    n.attr[0] = attr("comm_type", Value::Int64Val(8));
    n.attr
        .push(attr("pg_name", Value::StringVal("dp_0".into())));
    assert_eq!(
        parse(&[n]).unwrap().nodes[0].kind,
        NodeKind::Coll {
            op: CollOp::ReduceScatter,
            size: MIB,
            group: Some("dp_0".into())
        }
    );
    for (t, name) in [(1, "REDUCE"), (3, "GATHER"), (4, "SCATTER")] {
        let mut n = allreduce(Value::Uint64Val(MIB));
        n.attr[0] = attr("comm_type", Value::Int64Val(t));
        let e = parse(&[n]).unwrap_err();
        assert_mentions(
            &e,
            &[
                "node 3",
                "`comm_type`",
                name,
                "not supported",
                "ALL_REDUCE (0)",
                "BARRIER (9)",
            ],
        );
    }
    let n = pnode(
        3,
        COMM_COLL_NODE,
        vec![attr("comm_type", Value::Int64Val(0))],
    );
    assert_mentions(&parse(&[n]).unwrap_err(), &["`comm_size`", "missing"]);
    // A receive without comm_size takes tensor_size; its tag defaults to 0.
    let n = pnode(
        3,
        COMM_RECV_NODE,
        vec![
            attr("comm_src", Value::Uint32Val(5)),
            attr("tensor_size", Value::Uint64Val(1024)),
        ],
    );
    assert_eq!(
        parse(&[n]).unwrap().nodes[0].kind,
        NodeKind::Recv {
            peer: 5,
            tag: 0,
            size: 1024
        }
    );
    let n = pnode(
        3,
        COMM_SEND_NODE,
        vec![
            attr("comm_dst", Value::Uint64Val(1 << 33)),
            attr("comm_size", Value::Uint64Val(1024)),
        ],
    );
    assert_mentions(&parse(&[n]).unwrap_err(), &["`comm_dst`", "out of range"]);
    let n = pnode(
        3,
        COMM_SEND_NODE,
        vec![attr("comm_dst", Value::Uint64Val(1))],
    );
    assert_mentions(&parse(&[n]).unwrap_err(), &["`comm_size`", "tensor_size"]);
    let n = pnode(
        3,
        COMM_SEND_NODE,
        vec![
            attr("comm_dst", Value::Uint64Val(1)),
            attr("tensor_size", Value::Uint64Val(0)),
        ],
    );
    assert_mentions(&parse(&[n]).unwrap_err(), &["`tensor_size`", "0 bytes"]);
}

#[test]
fn compute_points_and_dependencies() {
    let mut n = pnode(
        1,
        COMP_NODE,
        vec![attr("num_ops", Value::Int64Val(1_000_000))],
    );
    n.data_deps = vec![7, 5, 7];
    n.ctrl_deps = vec![5, 6];
    let mut long = pnode(2, COMP_NODE, vec![attr("num_ops", Value::Int64Val(9))]);
    long.duration_micros = MAX_COMPUTE / US;
    let point = pnode(3, METADATA_NODE, vec![]);
    let many = Node {
        data_deps: (0..100).chain(0..50).collect(),
        ctrl_deps: (90..120).collect(),
        ..pnode(4, COMP_NODE, vec![])
    };
    let t = parse(&[n, long, point, many]).unwrap();
    assert_eq!(t.nodes[0].kind, NodeKind::Comp(Compute::Flops(1_000_000)));
    assert_eq!(t.nodes[0].deps, vec![7, 5, 6]);
    assert_eq!(
        t.nodes[1].kind,
        NodeKind::Comp(Compute::Duration(MAX_COMPUTE))
    );
    assert_eq!(t.nodes[2].kind, NodeKind::Point);
    assert_eq!(t.nodes[3].kind, comp_us(0));
    assert_eq!(t.nodes[3].deps, (0..120).collect::<Vec<u64>>());
    let mut over = pnode(2, COMP_NODE, vec![]);
    over.duration_micros = MAX_COMPUTE / US + 1;
    assert_mentions(
        &parse(&[over]).unwrap_err(),
        &["node 2", "`duration_micros`"],
    );
    let e = parse(&[pnode(6, 0, vec![])]).unwrap_err();
    assert_mentions(&e, &["node 6", "`type`", "unknown node type 0"]);
    let e = parse(&[pnode(6, MEM_STORE_NODE, vec![])]).unwrap_err();
    assert_mentions(&e, &["node 6", "MEM_STORE_NODE", "not modelled"]);
}

#[test]
fn refuses_files_that_are_not_traces() {
    let e = parse_rank("t.0.et", &[]).unwrap_err();
    assert_mentions(&e, &["t.0.et", "empty", "GlobalMetadata"]);
    // Nodes without the GlobalMetadata.
    let bytes = pnode(1, COMP_NODE, vec![]).encode_length_delimited_to_vec();
    let e = parse_rank("t.0.et", &bytes).unwrap_err();
    assert_mentions(&e, &["t.0.et", "GlobalMetadata", "byte 0", "is a Node"]);
    // A length of 2^40 with a few bytes after it: refused before anything is made.
    let mut bytes = metadata();
    let at = bytes.len();
    bytes.extend([0x80, 0x80, 0x80, 0x80, 0x80, 0x20, 1, 2, 3]);
    let e = parse_rank("t.0.et", &bytes).unwrap_err();
    assert_mentions(
        &e,
        &[&format!("byte {at}"), &format!("{} bytes long", 1u64 << 40)],
    );
    // A varint of more than 64 bits, and one cut by the end of the file.
    let mut bytes = metadata();
    bytes.extend([0xff; 10]);
    assert_mentions(&parse_rank("t.0.et", &bytes).unwrap_err(), &["varint"]);
    let mut bytes = metadata();
    bytes.extend([0xff; 3]);
    assert_mentions(&parse_rank("t.0.et", &bytes).unwrap_err(), &["truncated"]);
    // A body protobuf cannot parse (a field with wire type 7).
    let mut bytes = metadata();
    let at = bytes.len();
    bytes.extend([2, 0x0f, 0]);
    let e = parse_rank("t.0.et", &bytes).unwrap_err();
    assert_mentions(&e, &[&format!("byte {at}"), "not a valid Node"]);
    let e = read(Path::new("/nonexistent/x"), "x", 0).unwrap_err();
    assert_mentions(&e, &["no rank"]);
}

/// Cut or damaged files give an error or a trace, never a panic.
#[test]
fn damaged_files_never_panic() {
    let good = std::fs::read(fixtures().join("closed_form.0.et")).unwrap();
    assert!(parse_rank("c.0.et", &good).is_ok());
    for len in 0..good.len() {
        // Every cut of this file ends inside a message or drops nodes: only the cut
        // at a message boundary may read.
        let _ = parse_rank("c.0.et", &good[..len]);
    }
    assert!(parse_rank("c.0.et", &good[..good.len() - 1]).is_err());
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move || {
        // xorshift64*: a fixed sequence, no dependency.
        state ^= state >> 12;
        state ^= state << 25;
        state ^= state >> 27;
        state.wrapping_mul(0x2545_f491_4f6c_dd1d)
    };
    let (mut ok, mut err) = (0, 0);
    for _ in 0..500 {
        let mut bytes = good.clone();
        for _ in 0..1 + next() % 3 {
            let at = (next() % bytes.len() as u64) as usize;
            bytes[at] ^= 1 + (next() % 255) as u8;
        }
        match parse_rank("c.0.et", &bytes) {
            Ok(_) => ok += 1,
            Err(e) => {
                assert!(e.to_string().starts_with("c.0.et"), "{e}");
                err += 1;
            }
        }
    }
    for _ in 0..200 {
        let len = (next() % 64) as usize;
        let bytes: Vec<u8> = (0..len).map(|_| next() as u8).collect();
        let _ = parse_rank("r.0.et", &bytes);
    }
    assert!(ok > 0 && err > 0, "{ok} read, {err} refused");
}
