#!/usr/bin/env bash
# Issue 19's scaling figures on a many-core machine: the k = 74 fat tree (101,306 hosts)
# on 16 threads against the 60 s target, and the speedup against threads at k = 32 and
# k = 48, each child run its own process (its peak RSS its own), all on the same machine.
#
# Prepared so that a session lent the `device` tool (16 cores, no network, 10 minutes a
# command, 15 minutes of device time in all) measures it in one call:
#   here:   cargo build --release -p fabricsim-cli
#           mkdir -p target/device && strip -o target/device/fabricsim target/release/fabricsim
#   there:  run(command = "bash scripts/device-scaling.sh", carry = ["target/device"],
#               timeout_s = 590)
# Every child's JSON line goes to $OUT as soon as it finishes (a timeout keeps what ran),
# most important first: k = 74 on 16 threads, then k = 48 and k = 32 on 1..16 threads,
# then, with time left, k = 74 on one thread (about 6 minutes on a 2-core VM; the issue's
# 343 s was a quiet 16-core Xeon), which is the side-by-side baseline of the first line.
# Read the results with: python3 scripts/device-scaling-table.py $OUT
set -u
BIN=${BIN:-target/device/fabricsim}
OUT=${OUT:-out/device}
mkdir -p "$OUT"
if [ ! -x "$BIN" ]; then
    echo "error: $BIN missing: build and strip it first (see the top of $0)" >&2
    exit 2
fi
{ nproc; lscpu 2>/dev/null | grep -E "Model name|^CPU\(s\)|Thread|MHz"; } >"$OUT/machine.txt"
child() {
    local k=$1 t=$2
    local f="$OUT/k$k-t$t.json"
    echo "k=$k threads=$t ..." >&2
    if "$BIN" bench --child --k "$k" --threads-per-run "$t" >"$f.tmp" 2>"$OUT/k$k-t$t.err"; then
        mv "$f.tmp" "$f"
        cat "$f"
    else
        echo "k=$k threads=$t failed (see $OUT/k$k-t$t.err)" >&2
    fi
}
child ${K_BIG:-74} 16
for t in 1 16 8; do child ${K_MID:-48} "$t"; done
for t in 1 2 4 8 16; do child ${K_SMALL:-32} "$t"; done
child ${K_BIG:-74} 1
