#!/usr/bin/env bash
# Scaling figures on a many-core machine: the k = 74 fat tree (101,306 hosts)
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
# most important first (RUNS, k:threads): k = 74 on 16 threads, k = 48 on 16 and on one
# thread, k = 74 on one thread (about 6 minutes on a 2-core VM), the side-by-side
# baselines, then the curves at k = 32 and k = 48. `RUNS="74:16 74:1"` in one call takes
# about 546 s of the 600 (docs/results/bench.md, "Several threads on 16 cores"). To
# measure huge pages (the CLI asks for them unless FABRICSIM_HUGE_PAGES=0): RUNS="48:1"
# with and without that variable in one call, then k = 74 likewise in a call each.
# The device returns at most 8 files: wrap the call so that $OUT gets one archive, e.g.
#   O=$OUT; OUT=/tmp/dev timeout -s KILL 560 bash scripts/device-scaling.sh;
#   tar czf $O/device.tgz -C /tmp/dev .
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
# Most important first: the target run, then the side-by-side baselines, then the curves.
for run in ${RUNS:-74:16 48:16 48:1 74:1 32:1 32:16 32:8 32:4 32:2 48:8 48:4 48:2}; do
    child "${run%%:*}" "${run##*:}"
done
