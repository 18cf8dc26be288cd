#!/usr/bin/env bash
# One training iteration of a GPT-like model on 1,024 GPUs from a generated Chakra trace:
# it builds, runs, and says its wall time, events and peak memory.
# The model: 32 layers, hidden 4096, sequence 2048, 8 microbatches in 1F1B; tensor
# parallel 8 (inside a server, over NVLink), pipeline parallel 8, data parallel 16
# (scripts/gpt_trace.py, which needs `pip install mlc-chakra`). The cluster: 128 servers
# of 8 H100 (NVLink through an NVSwitch), 400G NICs on 8 rails, non-blocking spines, 128 MB
# switch buffers (the leaves' PFC headroom), no congestion control, 400 TFLOP/s a GPU;
# transfers in 64 KiB segments (docs/results/nccl-segments.md: within 0.2 % of packets).
# Usage: scripts/trace-scale.sh [fabricsim binary] [out folder] [extra run flags...]
set -eu
BIN=${1:-target/release/fabricsim}
OUT=${2:-out/trace-scale}
shift 2 2>/dev/null || true
HERE=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$OUT"
python3 "$HERE/gpt_trace.py" --out "$OUT/gpt" --tp 8 --pp 8 --dp 16 --layers 32 \
    --microbatches 8 --hidden 4096 --seq 2048
cat > "$OUT/gpt-1024.toml" <<'TOML'
name = "gpt-1024"
seed = 1
max_time = "10s"

[topology]
kind = "rail_optimized"
servers = 128
gpus_per_server = 8
nic_rate = "400Gbps"
oversubscription = 1.0
link_delay = "1us"
nvlink = "h100"

[fabric]
switch_latency = "300ns"
buffer = "128MB"

[cc]
algorithm = "none"

[[workload]]
kind = "trace"
name = "gpt"
format = "chakra"
path = "gpt"
comm_groups = "gpt.groups.json"
gpu_flops = 400e12
segment = "64KiB"
TOML
"$BIN" check "$OUT/gpt-1024.toml"
/usr/bin/time -f "%e %U %M" -o "$OUT/time" "$BIN" run "$OUT/gpt-1024.toml" --quiet \
    --out "$OUT/run" "$@" > "$OUT/log" 2>&1
read -r wall user kb < "$OUT/time"
cat "$OUT/log"
echo "wall $wall s, user $user s, peak RSS $((kb / 1024)) MB"
grep -o '"events": [0-9]*' "$OUT/run/summary.json" | head -1 || true
cut -d, -f1-6,18- "$OUT/run/training.csv"
