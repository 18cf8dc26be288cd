#!/usr/bin/env python3
"""A GPT-like training iteration as Chakra execution traces, one file per rank.

Megatron-style 3D parallelism: tensor parallel (TP) groups of consecutive ranks,
pipeline parallel (PP) stages, data parallel (DP) replicas; rank = (dp * PP + pp) * TP
+ tp. Per rank and iteration, 1F1B over the microbatches:
  forward of a microbatch:  receive the activation from the previous stage, then per
    layer two compute nodes (attention, MLP), each followed by a TP AllReduce of the
    activation, then send the activation to the next stage;
  backward: receive the gradient from the next stage, per layer (in reverse) two compute
    nodes of twice the forward's FLOPs, each followed by a TP AllReduce, then send the
    gradient back;
  then a DP AllReduce of the stage's gradients (this rank's shard of them) and the
  optimizer step.
Compute nodes carry FLOPs (`num_ops`; the scenario's gpu_flops turns them into time).
Every node waits for the one before it on its rank, but sends: a send waits only for
the compute that produced its tensor and nothing waits for it (Megatron's isend), so
1F1B's sends and receives cannot deadlock. Communicators by `pg_name` (tp<i>, dp<i>),
listed in <out>.groups.json for the workload's comm_groups.

Dev dependency: pip install mlc-chakra (its et_def_pb2 and protolib write the files).
Usage: scripts/gpt_trace.py --out DIR/gpt [--tp 8 --pp 8 --dp 16 --layers 32
       --microbatches 8 --hidden 4096 --seq 2048]
"""

import argparse
import json
import os

from chakra.schema.protobuf.et_def_pb2 import (
    ALL_REDUCE,
    COMM_COLL_NODE,
    COMM_RECV_NODE,
    COMM_SEND_NODE,
    COMP_NODE,
    GlobalMetadata,
    Node,
)
from chakra.schema.protobuf.et_def_pb2 import AttributeProto as Attr
from chakra.src.third_party.utils.protolib import encodeMessage as encode


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--tp", type=int, default=8)
    ap.add_argument("--pp", type=int, default=8)
    ap.add_argument("--dp", type=int, default=16)
    ap.add_argument("--layers", type=int, default=32)
    ap.add_argument("--microbatches", type=int, default=8)
    ap.add_argument("--hidden", type=int, default=4096)
    ap.add_argument("--seq", type=int, default=2048)
    a = ap.parse_args()
    tp, pp, dp = a.tp, a.pp, a.dp
    assert a.layers % pp == 0, "layers must divide into the stages"
    per_stage = a.layers // pp
    ranks = tp * pp * dp
    act = a.seq * a.hidden * 2  # one microbatch's activation, bf16
    # Forward FLOPs of one layer and microbatch on one TP rank: 24 s h^2 (attention
    # and MLP matmuls, 2 FLOPs a multiply-add), split evenly between the two nodes.
    fwd_half = 24 * a.seq * a.hidden * a.hidden // tp // 2
    grad_bytes = per_stage * 12 * a.hidden * a.hidden * 2 // tp
    groups = {}
    for d in range(dp):
        for p in range(pp):
            groups[f"tp{d * pp + p}"] = [(d * pp + p) * tp + t for t in range(tp)]
    for p in range(pp):
        for t in range(tp):
            groups[f"dp{p * tp + t}"] = [(d * pp + p) * tp + t for d in range(dp)]
    os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
    with open(a.out + ".groups.json", "w") as f:
        json.dump(groups, f)

    for rank in range(ranks):
        t = rank % tp
        p = (rank // tp) % pp
        d = rank // (tp * pp)
        tpg = f"tp{d * pp + p}"
        dpg = f"dp{p * tp + t}"
        prev_rank = rank - tp if p > 0 else None
        next_rank = rank + tp if p < pp - 1 else None
        nodes = []
        last = [None]

        def node(name, ty, deps, chain=True):
            n = Node(id=len(nodes), name=name, type=ty)
            n.data_deps.extend(x for x in deps if x is not None)
            nodes.append(n)
            if chain:
                last[0] = n.id
            return n

        def comp(name, flops):
            n = node(name, COMP_NODE, [last[0]])
            n.attr.append(Attr(name="num_ops", int64_val=flops))
            return n

        def allreduce(name, size, group):
            n = node(name, COMM_COLL_NODE, [last[0]])
            n.attr.extend([
                Attr(name="comm_type", int64_val=ALL_REDUCE),
                Attr(name="comm_size", int64_val=size),
                Attr(name="pg_name", string_val=group),
            ])
            return n

        def send(name, peer, tag, size):
            n = node(name, COMM_SEND_NODE, [last[0]], chain=False)
            n.attr.extend([
                Attr(name="comm_dst", int64_val=peer),
                Attr(name="comm_tag", int64_val=tag),
                Attr(name="comm_size", int64_val=size),
            ])

        def recv(name, peer, tag, size):
            n = node(name, COMM_RECV_NODE, [last[0]])
            n.attr.extend([
                Attr(name="comm_src", int64_val=peer),
                Attr(name="comm_tag", int64_val=tag),
                Attr(name="comm_size", int64_val=size),
            ])

        def forward(mb):
            if prev_rank is not None:
                recv(f"mb{mb}.fwd.recv", prev_rank, 2 * mb, act)
            for layer in range(per_stage):
                for part in ("attn", "mlp"):
                    comp(f"mb{mb}.L{layer}.{part}.fwd", fwd_half)
                    if tp > 1:
                        allreduce(f"mb{mb}.L{layer}.{part}.fwd.allreduce", act, tpg)
            if next_rank is not None:
                send(f"mb{mb}.fwd.send", next_rank, 2 * mb, act)

        def backward(mb):
            if next_rank is not None:
                recv(f"mb{mb}.bwd.recv", next_rank, 2 * mb + 1, act)
            for layer in reversed(range(per_stage)):
                for part in ("mlp", "attn"):
                    comp(f"mb{mb}.L{layer}.{part}.bwd", 2 * fwd_half)
                    if tp > 1:
                        allreduce(f"mb{mb}.L{layer}.{part}.bwd.allreduce", act, tpg)
            if prev_rank is not None:
                send(f"mb{mb}.bwd.send", prev_rank, 2 * mb + 1, act)

        # 1F1B: warm-up forwards, steady one forward one backward, cool-down backwards.
        m = a.microbatches
        warm = min(pp - p - 1, m)
        for mb in range(warm):
            forward(mb)
        for i in range(m - warm):
            forward(warm + i)
            backward(i)
        for mb in range(m - warm, m):
            backward(mb)
        if dp > 1:
            allreduce("grad.allreduce", grad_bytes, dpg)
        comp("optimizer", 2 * grad_bytes)

        with open(f"{a.out}.{rank}.et", "wb") as f:
            encode(f, GlobalMetadata(version="0.0.4"))
            for n in nodes:
                encode(f, n)
    print(f"{ranks} ranks, {len(nodes)} nodes on the last, groups in {a.out}.groups.json")


if __name__ == "__main__":
    main()
