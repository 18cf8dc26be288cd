#!/usr/bin/env bash
# A 16,384-GPU rail-optimized cluster with an AllReduce: it builds, runs, says its peak
# memory per GPU, and writes the same bytes on 1, 2 and 3 threads per run.
# The cluster is scenarios/nccl-tests.toml grown to 2,048 servers of 8 H100 GPUs (400G
# NICs on 8 rails, 32 leaves a rail of 64 servers each, non-blocking spines, NVLink in
# every server, 64 MB switch buffers), running one AllReduce of SIZE (1 MiB) per GPU
# with NCCL's double binary tree (a ring over 16,384 ranks would be 32,766 steps).
# The spines have 256 ports, so the buffer is raised to hold their PFC headroom.
# `fabricsim check` with the same --set flags prints the memory estimate and the cut.
# Usage: scripts/ai-cluster-scale.sh [fabricsim binary] [out folder]
set -eu
BIN=${1:-target/release/fabricsim}
OUT=${2:-out/ai-cluster-scale}
SIZE=${SIZE:-1MiB}
mkdir -p "$OUT"
SETS=(--set topology.servers=2048 --set topology.leaves_per_rail=32
      --set 'fabric.buffer="64MB"' --set 'workload[0].algorithm="tree"'
      --set "workload[0].sizes={ min = \"$SIZE\", max = \"$SIZE\" }")
for t in 1 2 3; do
    /usr/bin/time -f "%e %M" -o "$OUT/time-$t" "$BIN" run scenarios/nccl-tests.toml \
        "${SETS[@]}" --threads-per-run "$t" --quiet --out "$OUT/t$t" > "$OUT/log-$t" 2>&1
    read -r wall kb < "$OUT/time-$t"
    echo "threads $t: $wall s wall, peak RSS $((kb / 1024)) MB, $((kb * 1024 / 16384)) B a GPU"
done
for f in flows.csv ports.csv jobs.csv nccl_tests.csv; do
    for t in 2 3; do
        cmp "$OUT/t1/$f" "$OUT/t$t/$f" || { echo "differs: $f on $t threads" >&2; exit 1; }
    done
done
echo "flows.csv, ports.csv, jobs.csv and nccl_tests.csv: the same bytes on 1, 2 and 3 threads"
grep -h "events" "$OUT/log-1" | head -1 || true
