//! Tests of the AICB reader: node graphs of small files, SimAI's groups, every refusal,
//! and truncations that never panic.

use super::*;
use std::path::PathBuf;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../fabricsim-cli/tests/fixtures/traces/aicb")
        .join(name)
}

/// Reads `text` as a file named `name`.
fn read_str(
    name: &str,
    text: &str,
    ranks: Option<u32>,
) -> Result<(Trace, HashMap<String, Vec<u32>>), TraceError> {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join(name);
    std::fs::write(&p, text).unwrap();
    read(&p, name, ranks)
}

fn comp(id: u64, name: &str, ns: u64, deps: &[u64]) -> TraceNode {
    TraceNode {
        id,
        name: name.into(),
        kind: NodeKind::Comp(Compute::Duration(ns * NS)),
        deps: deps.to_vec(),
    }
}

fn coll(id: u64, name: &str, op: CollOp, size: u64, g: &str, deps: &[u64]) -> TraceNode {
    TraceNode {
        id,
        name: name.into(),
        kind: NodeKind::Coll {
            op,
            size,
            group: Some(g.into()),
        },
        deps: deps.to_vec(),
    }
}

fn end(id: u64, deps: &[u64]) -> TraceNode {
    TraceNode {
        id,
        name: "iteration.end".into(),
        kind: NodeKind::Point,
        deps: deps.to_vec(),
    }
}

const TINY: &str = "HYBRID_TRANSFORMER_FWD_IN_BCKWD model_parallel_NPU_group: 2 ep: 1 pp: 1 \
    vpp: 1 ga: 1 all_gpus: 4 checkpoints: 0 checkpoint_initiates: 0 pp_comm: 0\n\
    2\n\
    emb\t-1\t10\tALLREDUCE\t1000\t20\tNONE\t0\t30\tNONE\t0\t5\n\
    attn\t-1\t100\tALLGATHER\t8192\t200\tREDUCESCATTER\t4096\t300\tALLREDUCE\t65536\t0\n";

#[test]
fn tiny_transformer_graph_is_exact() {
    let (t, groups) = read_str("tiny.txt", TINY, None).unwrap();
    assert_eq!(t.ranks.len(), 4);
    for (r, tp, dp) in [
        (0, "tp0", "dp0"),
        (1, "tp0", "dp1"),
        (2, "tp1", "dp0"),
        (3, "tp1", "dp1"),
    ] {
        use CollOp::*;
        let want = vec![
            comp(0, "L0.fwd", 10, &[]),
            // 1000 B raised to SimAI's 4096 B floor for forward collectives.
            coll(1, "L0.fwd.allreduce", AllReduce, 4096, tp, &[0]),
            comp(2, "L0.fwd.update", 5, &[1]),
            comp(3, "L1.fwd", 100, &[2]),
            coll(4, "L1.fwd.allgather", AllGather, 8192, tp, &[3]),
            comp(5, "L1.ig", 200, &[4]),
            coll(6, "L1.ig.reduce_scatter", ReduceScatter, 4096, tp, &[5]),
            comp(7, "L1.wg", 300, &[6]),
            // Not waited for by the backward pass, only by the end.
            coll(8, "L1.wg.allreduce", AllReduce, 65536, dp, &[7]),
            comp(9, "L0.ig", 20, &[7]),
            comp(10, "L0.wg", 30, &[9]),
            end(11, &[10, 8]),
        ];
        assert_eq!(t.ranks[r].nodes, want, "rank {r}");
        assert_eq!(t.ranks[r].file, "tiny.txt");
    }
    let mut names: Vec<_> = groups.keys().cloned().collect();
    names.sort();
    assert_eq!(names, ["dp0", "dp1", "tp0", "tp1"]);
    assert_eq!(groups["tp1"], [2, 3]);
    assert_eq!(groups["dp1"], [1, 3]);
    t.validate(&groups).unwrap();
}

#[test]
fn plain_transformer_keeps_small_forward_sizes() {
    let text = TINY.replace("HYBRID_TRANSFORMER_FWD_IN_BCKWD", "HYBRID_TRANSFORMER");
    let (t, _) = read_str("tiny.txt", &text, None).unwrap();
    assert!(matches!(
        t.ranks[0].nodes[1].kind,
        NodeKind::Coll { size: 1000, .. }
    ));
}

#[test]
fn data_parallel_graph_is_exact() {
    let (t, groups) = read(&fixture("data_parallel.txt"), "data_parallel.txt", Some(4)).unwrap();
    use CollOp::AllReduce;
    let want = vec![
        comp(0, "L0.fwd", 200_000, &[]),
        comp(1, "L1.fwd", 300_000, &[0]),
        comp(2, "L2.fwd", 50_000, &[1]),
        comp(3, "L2.wg", 45_000, &[2]),
        coll(4, "L2.wg.allreduce", AllReduce, 8_200_192, "dp0", &[3]),
        comp(5, "L2.wg.update", 100, &[4]),
        comp(6, "L2.ig", 40_000, &[3]),
        comp(7, "L1.wg", 280_000, &[6]),
        coll(8, "L1.wg.allreduce", AllReduce, 18_874_368, "dp0", &[7]),
        comp(9, "L1.wg.update", 100, &[8]),
        comp(10, "L1.ig", 250_000, &[7]),
        comp(11, "L0.wg", 180_000, &[10]),
        coll(12, "L0.wg.allreduce", AllReduce, 9_437_184, "dp0", &[11]),
        comp(13, "L0.wg.update", 100, &[12]),
        end(14, &[11, 5, 9, 13]),
    ];
    for r in 0..4 {
        assert_eq!(t.ranks[r].nodes, want, "rank {r}");
    }
    assert_eq!(groups.len(), 1);
    assert_eq!(groups["dp0"], [0, 1, 2, 3]);
    t.validate(&groups).unwrap();
}

#[test]
fn model_parallel_overlaps_input_gradient_collectives() {
    let text = "MODEL all_gpus: 2\n2\n\
        a\t-1\t10\tALLREDUCE\t8192\t20\tALLREDUCE\t8192\t30\tALLREDUCE\t8192\t0\n\
        b\t-1\t10\tNONE\t0\t20\tALLREDUCE\t4096\t30\tNONE\t0\t0\n";
    let (t, groups) = read_str("model.txt", text, None).unwrap();
    use CollOp::AllReduce;
    let want = vec![
        comp(0, "L0.fwd", 10, &[]),
        coll(1, "L0.fwd.allreduce", AllReduce, 8192, "tp0", &[0]),
        comp(2, "L1.fwd", 10, &[1]),
        comp(3, "L1.ig", 20, &[2]),
        coll(4, "L1.ig.allreduce", AllReduce, 4096, "tp0", &[3]),
        comp(5, "L1.wg", 30, &[3]),
        // Layer 0's input gradient has no collective; no weight-gradient collective.
        comp(6, "L0.ig", 20, &[5, 4]),
        comp(7, "L0.wg", 30, &[6]),
        end(8, &[7]),
    ];
    assert_eq!(t.ranks[1].nodes, want);
    assert_eq!(groups["tp0"], [0, 1]);
    t.validate(&groups).unwrap();
}

#[test]
fn micro_runs_each_line_in_turn() {
    let (t, groups) = read(
        &fixture("micro_allreduce.txt"),
        "micro_allreduce.txt",
        Some(8),
    )
    .unwrap();
    let n = &t.ranks[5].nodes;
    // Four collectives, each with its 1 ns update, then the end.
    assert_eq!(n.len(), 9);
    for (i, size) in [4096u64, 8192, 16384, 32768].into_iter().enumerate() {
        let c = &n[2 * i];
        assert_eq!(c.name, format!("L{i}.wg.allreduce"));
        assert_eq!(
            c.kind,
            NodeKind::Coll {
                op: CollOp::AllReduce,
                size,
                group: Some("dp0".into())
            }
        );
        assert_eq!(
            c.deps,
            if i == 0 {
                vec![]
            } else {
                vec![2 * i as u64 - 1]
            }
        );
    }
    assert_eq!(groups["dp0"], (0..8).collect::<Vec<u32>>());
    t.validate(&groups).unwrap();
}

#[test]
fn good_files_validate() {
    for (f, ranks) in [
        ("megatron_tp2_dp4.txt", None),
        ("megatron_tp2_dp4.txt", Some(8)),
        ("micro_allreduce.txt", Some(3)),
        ("data_parallel.txt", Some(16)),
    ] {
        let (t, g) = read(&fixture(f), f, ranks).unwrap();
        t.validate(&g).unwrap_or_else(|e| panic!("{f}: {e}"));
    }
    let (t, g) = read(&fixture("megatron_tp2_dp4.txt"), "m", None).unwrap();
    assert_eq!(t.ranks.len(), 8);
    let mut names: Vec<_> = g.keys().cloned().collect();
    names.sort();
    assert_eq!(names, ["dp0", "dp1", "tp0", "tp1", "tp2", "tp3"]);
    assert_eq!(g["dp1"], [1, 3, 5, 7]);
}

fn moe(tp: u32, ep: u32, all: u32) -> String {
    format!(
        "HYBRID_TRANSFORMER_FWD_IN_BCKWD model_parallel_NPU_group: {tp} ep: {ep} pp: 1 vpp: 1 \
         ga: 1 all_gpus: {all} checkpoints: 0 checkpoint_initiates: 0 pp_comm: 0\n4\n\
         moe_grad_norm1\t-1\t1\tNONE\t0\t1\tNONE\t0\t1\tALLGATHER_DP_EP\t1048576\t100\n\
         attention_layer\t-1\t1000\tALLREDUCE\t65536\t1000\tALLREDUCE\t65536\t1000\tALLREDUCE\t65536\t100\n\
         mlp_moelayer\t-1\t1\tALLTOALL_EP\t262144\t1\tALLTOALL_EP\t262144\t1\tNONE\t0\t100\n\
         mlp_moelayer\t-1\t1\tALLGATHER\t65536\t1\tREDUCESCATTER\t65536\t1\tALLREDUCE_EP\t4096\t100\n"
    )
}

#[test]
fn groups_partition_the_ranks_as_simai_forms_them() {
    let (t, g) = read_str("moe.txt", &moe(2, 2, 16), None).unwrap();
    t.validate(&g).unwrap();
    let of = |p: &str| -> Vec<Vec<u32>> {
        let mut v: Vec<(u32, Vec<u32>)> = g
            .iter()
            .filter_map(|(k, m)| {
                let i = k.strip_prefix(p)?.parse().ok()?;
                Some((i, m.clone()))
            })
            .collect();
        v.sort();
        v.into_iter().map(|x| x.1).collect()
    };
    let (tp, dp, ep, dp_ep) = (of("tp"), of("dp"), of("ep"), of("dp_ep"));
    assert_eq!(tp.len(), 8);
    assert_eq!(tp[3], [6, 7]);
    assert_eq!(
        dp,
        [
            vec![0, 2, 4, 6, 8, 10, 12, 14],
            vec![1, 3, 5, 7, 9, 11, 13, 15]
        ]
    );
    assert_eq!(&ep[..4], [vec![0, 2], vec![1, 3], vec![4, 6], vec![5, 7]]);
    assert_eq!(ep.len(), 8);
    assert_eq!(
        dp_ep,
        [
            vec![0, 4, 8, 12],
            vec![1, 5, 9, 13],
            vec![2, 6, 10, 14],
            vec![3, 7, 11, 15]
        ]
    );
    for kind in [&tp, &dp, &ep, &dp_ep] {
        let mut all: Vec<u32> = kind.iter().flatten().copied().collect();
        all.sort();
        assert_eq!(all, (0..16).collect::<Vec<u32>>());
        for m in kind.iter() {
            assert!(m.windows(2).all(|w| w[0] < w[1]), "rank order: {m:?}");
        }
    }
    // An expert group lies in one DP group and meets each of its DP_EP groups once.
    for e in &ep {
        assert!(dp.iter().any(|d| e.iter().all(|r| d.contains(r))));
        for de in &dp_ep {
            assert!(e.iter().filter(|r| de.contains(r)).count() <= 1);
        }
    }
    // Each rank's collectives name its own groups.
    for (r, rt) in t.ranks.iter().enumerate() {
        for n in &rt.nodes {
            if let NodeKind::Coll {
                group: Some(gn), ..
            } = &n.kind
            {
                assert!(g[gn].contains(&(r as u32)), "rank {r} {gn}");
            }
        }
    }
    // The `_EP` alltoall of rank 5 runs on ep3 = [5, 7].
    let a2a = t.ranks[5]
        .nodes
        .iter()
        .find(|n| n.name == "L2.fwd.alltoall")
        .unwrap();
    assert_eq!(
        a2a.kind,
        NodeKind::Coll {
            op: CollOp::AllToAll,
            size: 262144,
            group: Some("ep3".into())
        }
    );
}

#[test]
fn groups_of_one_rank_have_no_collective() {
    // TP 1 and EP 1: only the weight-gradient collectives (DP and DP_EP, both every
    // rank here) communicate.
    let (t, g) = read_str("moe.txt", &moe(1, 1, 4), None).unwrap();
    let mut names: Vec<_> = g.keys().cloned().collect();
    names.sort();
    assert_eq!(names, ["dp0", "dp_ep0"]);
    assert_eq!(g["dp_ep0"], [0, 1, 2, 3]);
    let colls: Vec<&str> = t.ranks[0]
        .nodes
        .iter()
        .filter(|n| matches!(n.kind, NodeKind::Coll { .. }))
        .map(|n| n.name.as_str())
        .collect();
    assert_eq!(colls, ["L1.wg.allreduce", "L0.wg.allgather"]);
    t.validate(&g).unwrap();
    // One rank: no collective at all.
    let (t, g) = read_str("moe.txt", &moe(1, 1, 1), None).unwrap();
    assert!(g.is_empty());
    assert!(t.ranks[0]
        .nodes
        .iter()
        .all(|n| !matches!(n.kind, NodeKind::Coll { .. })));
    t.validate(&g).unwrap();
}

fn error_of(file: &str, ranks: Option<u32>) -> String {
    read(&fixture(file), file, ranks).unwrap_err().to_string()
}

#[test]
fn bad_files_name_file_line_and_field() {
    for (f, has) in [
        (
            "bad_header.txt",
            &["line 1: parallelism", "HYBRID_TRANSFORMR", "MICRO"][..],
        ),
        (
            "bad_comm_type.txt",
            &["line 4: fwd_comm_type", "ALLREDUCE_TP", "REDUCESCATTER"],
        ),
        (
            "bad_layer_count.txt",
            &["line 2: layer count", "3 layers", "2 layer lines"],
        ),
        (
            "bad_number.txt",
            &["line 4: fwd_comm_size", "-16777216", "negative"],
        ),
    ] {
        let e = error_of(f, None);
        assert!(e.starts_with(f), "{e}");
        for h in has {
            assert!(e.contains(h), "{f}: `{e}` lacks `{h}`");
        }
    }
}

#[test]
fn other_refusals() {
    let cases: Vec<(String, Option<u32>, &[&str])> = vec![
        (TINY.into(), Some(8), &["field `ranks`", "all_gpus is 4"]),
        (
            "MICRO\n1\nm\t-1\t1\tNONE\t0\t1\tNONE\t0\t1\tALLREDUCE\t4096\t1\n".into(),
            None,
            &["line 1: all_gpus", "`ranks`"],
        ),
        (
            TINY.replace("all_gpus: 4", "all_gpus: 5"),
            None,
            &["line 1: all_gpus", "divide"],
        ),
        (
            TINY.replace("pp: 1", "pp: 4"),
            None,
            &["line 1: all_gpus", "pp (4)"],
        ),
        (
            TINY.replace("ep: 1", "ep: 4"),
            None,
            &["line 1: ep", "data-parallel size 2"],
        ),
        (
            TINY.replace("checkpoints: 0", "checkpoints: 1 3"),
            None,
            &["line 1: checkpoints", "recomputation"],
        ),
        (
            TINY.replace("HYBRID_TRANSFORMER_FWD_IN_BCKWD", "HYBRID_DLRM"),
            None,
            &["line 1: parallelism", "not read"],
        ),
        (
            TINY.replace("pp_comm: 0", "pp_comm:"),
            None,
            &["line 1: pp_comm", "no value"],
        ),
        (TINY.replace("ga: 1", "ga 1"), None, &["line 1", "`ga`"]),
        (
            TINY.replace("all_gpus: 4", "all_gpus: 4x"),
            None,
            &["line 1: all_gpus", "not a number"],
        ),
        (
            TINY.replace("\t10\t", "\t99999999999999999999999\t"),
            None,
            &["line 3: fwd_compute_time", "too large"],
        ),
        (
            TINY.replace("\t10\t", "\t1000000000001\t"),
            None,
            &["line 3: fwd_compute_time", "too long"],
        ),
        (
            TINY.replace("\t65536\t0", "\t2199023255553\t0"),
            None,
            &["line 4: wg_comm_size", "1 TiB"],
        ),
        (
            TINY.replace("\t65536\t0", "\t65536"),
            None,
            &["line 4: wg_update_time", "ends before"],
        ),
        (
            TINY.replace("\t65536\t0", "\t65536\t0\t0"),
            None,
            &["line 4", "13 fields"],
        ),
        (
            TINY.replace("emb\t-1", "emb\tx"),
            None,
            &["line 3: dependency"],
        ),
        (
            TINY.replace("\n2\n", "\nmany\n"),
            None,
            &["line 2: layer count", "not a number"],
        ),
        (
            TINY.replace("\n2\n", "\n0\n"),
            None,
            &["line 2: layer count", "0 layers"],
        ),
        (
            TINY.replace("\n2\n", "\n1\n"),
            None,
            &["line 4", "beyond the 1"],
        ),
        (
            TINY.lines().next().unwrap().into(),
            None,
            &["line 2: layer count", "ends after the header"],
        ),
        (String::new(), None, &["line 1: parallelism", "empty"]),
    ];
    for (text, ranks, has) in cases {
        let e = read_str("f.txt", &text, ranks).unwrap_err().to_string();
        assert!(e.starts_with("f.txt"), "{e}");
        for h in has {
            assert!(e.contains(h), "`{e}` lacks `{h}`");
        }
    }
}

#[test]
fn header_forms_simai_takes() {
    // SimAI's own example writes `pp_comm` without its colon; AICB may write a float;
    // AICB's multi-allreduce test writes a key SimAI ignores; old files have only the
    // TP size (the rank count then comes from `ranks`).
    for h in [
        "HYBRID_TRANSFORMER_FWD_IN_BCKWD model_parallel_NPU_group: 2 ep: 1 pp: 2 vpp: 8 ga: 1 all_gpus: 8 checkpoints: 0 checkpoint_initiates: 0 pp_comm 50331648",
        "HYBRID_TRANSFORMER_FWD_IN_BCKWD\tmodel_parallel_NPU_group: 2 expert_parallel_npu_group: 1 pp: 2 ga: 0 all_gpus: 8 pp_comm: 4194304.0",
        "HYBRID_TRANSFORMER_FWD_IN_BCKWD\tmodel_parallel_NPU_group: 2 checkpoints: 0 checkpoint_initiates: 0",
    ] {
        let text = format!("{h}\n1\r\n\nl\t-1\t1\tALLREDUCE\t4096\t1\tNONE\t0\t1\tALLREDUCE\t4096\t100");
        let (t, g) = read_str("h.txt", &text, Some(8)).unwrap_or_else(|e| panic!("{h}: {e}"));
        assert_eq!(t.ranks.len(), 8);
        // PP is not modelled: DP = all_gpus / TP.
        assert_eq!(g["dp0"], [0, 2, 4, 6]);
        t.validate(&g).unwrap();
    }
    let e = read_str("h.txt", "DATA all_gpus: 2 pp_comm: 1.5\n1\n", None).unwrap_err();
    assert!(e.to_string().contains("line 1: pp_comm"), "{e}");
}

#[test]
fn too_many_nodes_are_refused() {
    let e = read_str("big.txt", &moe(1, 1, 4_000_000), None)
        .unwrap_err()
        .to_string();
    assert!(e.contains("at most"), "{e}");
}

#[test]
fn truncations_and_edits_never_panic() {
    let text = std::fs::read_to_string(fixture("megatron_tp2_dp4.txt")).unwrap();
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("t.txt");
    for cut in 0..=text.len() {
        std::fs::write(&p, &text[..cut]).unwrap();
        if let Ok((t, g)) = read(&p, "t.txt", None) {
            t.validate(&g).unwrap();
        }
    }
    // Each token replaced by values that are out of range or of the wrong kind.
    let lines: Vec<Vec<&str>> = text
        .lines()
        .map(|l| l.split_whitespace().collect())
        .collect();
    for (li, l) in lines.iter().enumerate() {
        for ti in 0..l.len() {
            for bad in [
                "",
                "-1",
                "0",
                "1",
                "18446744073709551616",
                "NONE",
                "x:",
                "4.5",
            ] {
                let mut edited = lines.clone();
                edited[li][ti] = bad;
                let out: Vec<String> = edited.iter().map(|l| l.join("\t")).collect();
                std::fs::write(&p, out.join("\n")).unwrap();
                if let Ok((t, g)) = read(&p, "t.txt", Some(8)) {
                    t.validate(&g).unwrap();
                }
            }
        }
    }
}
