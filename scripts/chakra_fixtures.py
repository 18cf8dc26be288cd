#!/usr/bin/env python3
"""Writes the Chakra execution-trace fixtures of the trace reader's tests into
crates/fabricsim-cli/tests/fixtures/traces/ (one `<prefix>.<rank>.et` file per rank).

The files are made with Chakra's own protobuf bindings and encoder, so that the reader is
tested against what the reference implementation writes, not against our reading of the
format. Dev dependency only (the simulator does not need it):

    python3 -m venv /tmp/chk && . /tmp/chk/bin/activate && pip install mlc-chakra
    python3 scripts/chakra_fixtures.py

Rerunning it rewrites the same bytes.
"""

import os
import sys
import tempfile

from chakra.schema.protobuf import et_def_pb2 as et
from chakra.src.generator import generator
from chakra.src.third_party.utils.protolib import encodeMessage

OUT = os.path.join(
    os.path.dirname(os.path.abspath(__file__)),
    "..",
    "crates",
    "fabricsim-cli",
    "tests",
    "fixtures",
    "traces",
)

KIB = 1 << 10
MIB = 1 << 20


def attr(name, **value):
    return et.AttributeProto(name=name, **value)


def node(id, name, type, data_deps=(), ctrl_deps=(), duration=0, attrs=()):
    n = et.Node(id=id, name=name, type=type, duration_micros=duration)
    n.data_deps.extend(data_deps)
    n.ctrl_deps.extend(ctrl_deps)
    n.attr.extend(attrs)
    return n


def comp(id, name, micros, deps=()):
    return node(id, name, et.COMP_NODE, data_deps=deps, duration=micros)


def coll(id, name, comm_type, size, deps=(), size_attr=None):
    size_attr = size_attr or attr("comm_size", int64_val=size)
    return node(
        id,
        name,
        et.COMM_COLL_NODE,
        data_deps=deps,
        attrs=[attr("comm_type", int64_val=comm_type), size_attr],
    )


def send(id, name, dst, tag, size, deps=()):
    return node(
        id,
        name,
        et.COMM_SEND_NODE,
        data_deps=deps,
        attrs=[
            attr("comm_dst", int64_val=dst),
            attr("comm_tag", int64_val=tag),
            attr("comm_size", int64_val=size),
        ],
    )


def recv(id, name, src, tag, size, deps=()):
    return node(
        id,
        name,
        et.COMM_RECV_NODE,
        data_deps=deps,
        attrs=[
            attr("comm_src", int64_val=src),
            attr("comm_tag", int64_val=tag),
            attr("comm_size", int64_val=size),
        ],
    )


def write(prefix, rank, nodes):
    with open(os.path.join(OUT, f"{prefix}.{rank}.et"), "wb") as f:
        encodeMessage(f, et.GlobalMetadata(version="1.0.0"))
        for n in nodes:
            encodeMessage(f, n)


def generated():
    """Chakra's generator's own traces for 2 ranks. Its send and receive traces carry no
    peer rank (they cannot run), so only `one_comm_send_node` is kept, for the error a
    missing `comm_dst` gives. The generator writes into the working directory and numbers
    nodes from a module-level counter: reset before each trace so ids start at 0."""
    here = os.getcwd()
    with tempfile.TemporaryDirectory() as tmp:
        os.chdir(tmp)
        try:
            # (function, its arguments after the rank count, the prefix it writes): the
            # collective ones are named by their node's name; the fixtures take the
            # function's name.
            for make, args, written in [
                (generator.one_comp_node, [5], "one_comp_node"),
                (generator.two_comp_nodes_dependent, [5], "two_comp_nodes_dependent"),
                (generator.one_comm_coll_node_allreduce, [65536], "ALL_REDUCE"),
                (generator.one_comm_coll_node_allgather, [65536], "ALL_GATHER"),
                (generator.one_comm_coll_node_barrier, [], "BARRIER"),
                (generator.one_comm_send_node, [1024], "one_comm_send_node"),
            ]:
                generator.NODE_ID = 0
                make(2, *args)
                for r in range(2):
                    with open(f"{written}.{r}.et", "rb") as src:
                        data = src.read()
                    with open(os.path.join(OUT, f"{make.__name__}.{r}.et"), "wb") as dst:
                        dst.write(data)
        finally:
            os.chdir(here)


def closed_form():
    """4 ranks; on an idle fabric the iteration is 10 us + AllReduce(1 MiB) + 20 us, then
    rank 0 -> rank 1's 256 KiB transfer. Node graph (every arrow a data dependency):

        every rank r:  1 fwd (COMP 10 us) -> 2 grad_sync (ALL_REDUCE 1 MiB, comm_size int64)
                       -> 3 bwd (COMP 20 us)
        rank 0:        3 bwd -> 4 send_act (SEND 256 KiB to rank 1, tag 7)
        rank 1:        3 bwd -> 4 recv_act (RECV 256 KiB from rank 0, tag 7)
    """
    for r in range(4):
        nodes = [
            comp(1, "fwd", 10),
            coll(2, "grad_sync", et.ALL_REDUCE, MIB, deps=[1]),
            comp(3, "bwd", 20, deps=[2]),
        ]
        if r == 0:
            nodes.append(send(4, "send_act", 1, 7, 256 * KIB, deps=[3]))
        if r == 1:
            nodes.append(recv(4, "recv_act", 0, 7, 256 * KIB, deps=[3]))
        write("closed_form", r, nodes)


def pair():
    """2 ranks: 5 us + the 1 MiB transfer + 5 us.

        rank 0:  1 work (COMP 5 us) -> 2 send (SEND 1 MiB to rank 1, tag 1)
        rank 1:  1 recv (RECV 1 MiB from rank 0, tag 1) -> 2 work (COMP 5 us)
    """
    write("pair", 0, [comp(1, "work", 5), send(2, "send", 1, 1, MIB, deps=[1])])
    write("pair", 1, [recv(1, "recv", 0, 1, MIB), comp(2, "work", 5, deps=[1])])


def flops():
    """One compute node per rank given in FLOPs (num_ops), no duration: it needs the
    workload's gpu_flops."""
    for r in range(2):
        n = node(1, "matmul", et.COMP_NODE)
        n.attr.append(attr("num_ops", int64_val=4 * 10**12))
        write("flops", r, [n])


def deadlock():
    """Each rank receives from the other before it sends: every file is acyclic, the
    two together wait for each other."""
    for r in range(2):
        write("deadlock", r, [recv(1, "recv", 1 - r, 0, MIB), send(2, "send", 1 - r, 0, MIB, deps=[1])])


def malformed():
    """One fault each, on the rank named; the other rank's file is good."""
    good = [comp(1, "work", 5)]

    def two(prefix, bad, other=good):
        write(prefix, 0, bad)
        write(prefix, 1, other)

    # An unknown node type.
    two("bad_node_type", [comp(1, "work", 5), node(2, "mystery", 99, data_deps=[1])])
    # A data dependency on node 42, which rank 0 does not have.
    two("bad_dangling", [comp(1, "work", 5), comp(2, "late", 5, deps=[42])])
    # Nodes 1 and 2 wait for each other.
    two("bad_cycle", [comp(1, "a", 5, deps=[2]), comp(2, "b", 5, deps=[1])])
    # A negative size (a signed field written from an unsigned one or the reverse).
    two("bad_size", [coll(1, "ar", et.ALL_REDUCE, -1)])
    # 2^50 bytes: above the 1 TiB a node may move.
    two(
        "bad_huge",
        [coll(1, "ar", et.ALL_REDUCE, 0, size_attr=attr("comm_size", uint64_val=1 << 50))],
    )
    # Rank 1's file cut in the middle of its second message.
    write("bad_truncated", 0, good)
    write("bad_truncated", 1, [comp(1, "work", 5), comp(2, "more", 5, deps=[1])])
    path = os.path.join(OUT, "bad_truncated.1.et")
    with open(path, "rb") as f:
        data = f.read()
    with open(path, "wb") as f:
        f.write(data[:-4])
    # Only rank 0's file: the caller asks for 2 ranks.
    write("bad_missing_rank", 0, good)
    # A remote memory load, which is not modelled.
    two(
        "bad_mem_node",
        [node(1, "load", et.MEM_LOAD_NODE, attrs=[attr("tensor_size", uint64_val=1024)])],
    )
    # Each file reads, but the ranks disagree on the AllReduce's size.
    two(
        "bad_coll_mismatch",
        [coll(1, "ar", et.ALL_REDUCE, MIB)],
        [coll(1, "ar", et.ALL_REDUCE, 2 * MIB)],
    )
    # Rank 0 sends to rank 1, which never receives.
    two("bad_unmatched_send", [send(1, "send", 1, 0, MIB)])


def main():
    os.makedirs(OUT, exist_ok=True)
    for name in os.listdir(OUT):
        if name.endswith(".et"):
            os.remove(os.path.join(OUT, name))
    generated()
    closed_form()
    pair()
    flops()
    deadlock()
    malformed()
    total = sum(os.path.getsize(os.path.join(OUT, n)) for n in os.listdir(OUT))
    print(f"{len(os.listdir(OUT))} files, {total} bytes in {os.path.normpath(OUT)}")


if __name__ == "__main__":
    sys.exit(main())
