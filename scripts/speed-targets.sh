#!/usr/bin/env bash
# The speed targets for the cost of an event, measured in one go, each figure beside its
# target: instructions an event at k = 16 (cachegrind), the wall time on one core against
# a base build (interleaved pairs at k = 8, 16 and 32), two threads against one at
# k = 32, and, given an htsim build, the htsim kit's side by side at 128 and 1,024 hosts.
#
#   scripts/speed-targets.sh [--quick] [--base COMMIT] [--htsim DIR] OUT
#
#   --base COMMIT  the build the wall ratios are taken against (default f467973, the one
#                  the targets were set against); built in a worktree under OUT, or
#                  taken from $FABRICSIM_BASE_BIN when that is set
#   --htsim DIR    the kit's build folder (`build_htsim.sh GIT_DIR DIR`: DIR/htsim and
#                  DIR/htsim_count); without it the htsim rows are left out
#   --quick        a look, not a measurement: fewer pairs, three kit pairs, k = 16 for
#                  the threads, no k = 32 and no cachegrind at k = 16 (a few minutes
#                  after the builds; the full run takes about 12 on the 2-core VM)
#
# Writes OUT/targets.md (the table) and every raw output beside it (scripts/bench-doc.sh
# makes docs/results/bench.md from them); an earlier run's
# outputs in OUT are removed first (the base build, OUT/base-fabricsim, is kept for
# reuse). Wall times need an otherwise idle machine: run nothing else meanwhile (not
# even a build).
set -euo pipefail
cd "$(dirname "$0")/.."
REPO=$(pwd)
usage="usage: scripts/speed-targets.sh [--quick] [--base COMMIT] [--htsim DIR] OUT"
quick=0 base=f467973 htsim="" out=""
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) quick=1 ;;
    --base) base=${2:?$usage}; shift ;;
    --htsim) htsim=${2:?$usage}; shift ;;
    -*) echo "speed-targets.sh: unknown option '$1' ($usage)" >&2; exit 2 ;;
    *) [ -z "$out" ] || { echo "$usage" >&2; exit 2; }; out=$1 ;;
  esac
  shift
done
[ -n "$out" ] || { echo "$usage" >&2; exit 2; }
command -v valgrind >/dev/null 2>&1 || { echo "speed-targets.sh: valgrind is not installed (cachegrind counts the instructions)" >&2; exit 2; }
KIT=$REPO/../shared/bench/htsim-kit
if [ -n "$htsim" ]; then
  for b in "$htsim/htsim/sim/datacenter/htsim_roce" "$htsim/htsim_count/sim/datacenter/htsim_roce"; do
    [ -x "$b" ] || { echo "speed-targets.sh: --htsim $htsim: no $b (build it with the kit's build_htsim.sh)" >&2; exit 2; }
  done
  [ -f "$KIT/run_htsim_vs_fabricsim.sh" ] || { echo "speed-targets.sh: --htsim needs the kit at $KIT" >&2; exit 2; }
fi
mkdir -p "$out"
out=$(cd "$out" && pwd)
# The table reads whatever outputs are there: none may be left from an earlier run.
rm -rf "$out"/cg-*.json "$out"/cg-*.err "$out"/cg-*.out "$out"/wall-k*.json "$out"/wall-k*.txt \
  "$out"/threads "$out"/kit "$out"/kit.txt "$out"/targets.md "$out"/meta.json

echo "== building this tree's release binary"
cargo build --release -q -p fabricsim-cli
BIN=${CARGO_TARGET_DIR:-$REPO/target}/release/fabricsim
cp "$BIN" "$out/fabricsim"
BIN=$out/fabricsim
if [ -n "${FABRICSIM_BASE_BIN:-}" ]; then
  BASE_BIN=$FABRICSIM_BASE_BIN
else
  BASE_BIN=$out/base-fabricsim
  if [ ! -x "$BASE_BIN" ]; then
    echo "== building $base in a worktree (a few minutes)"
    src=$out/base-src
    git worktree remove --force "$src" >/dev/null 2>&1 || rm -rf "$src"
    git worktree add -q --detach "$src" "$base"
    (cd "$src" && CARGO_TARGET_DIR=$out/base-target cargo build --release -q -p fabricsim-cli)
    cp "$out/base-target/release/fabricsim" "$BASE_BIN"
    git worktree remove --force "$src"
  fi
fi
started=$(date -u '+%Y-%m-%d %H:%M UTC')
head=$(git rev-parse --short HEAD)
[ -z "$(git status --porcelain --untracked-files=no)" ] || head="$head+changes"

echo "== instructions (cachegrind)"
cases="8"
[ $quick = 1 ] || cases="8 16"
for k in $cases; do
  for who in new base; do
    b=$BIN; [ $who = base ] && b=$BASE_BIN
    valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file="$out/cg-$who-k$k.out" \
      "$b" bench --child --k "$k" >"$out/cg-$who-k$k.json" 2>"$out/cg-$who-k$k.err"
  done
done

echo "== wall on one core against $base (interleaved pairs)"
if [ $quick = 1 ]; then walls="8:10 16:6"; else walls="8:40 16:20 32:4"; fi
for kp in $walls; do
  k=${kp%%:*} n=${kp##*:}
  python3 scripts/wall-pairs.py --k "$k" --pairs "$n" --json "$out/wall-k$k.json" \
    "$BASE_BIN" "$BIN" | tee "$out/wall-k$k.txt"
done

echo "== two threads against one"
tk=32; [ $quick = 1 ] && tk=16
# What `bench --k K --repeat 3 --threads-per-run 2` runs (one thread, then two, three
# times over), each run's JSON kept: scripts/bench-doc.sh adds the other sizes here.
mkdir -p "$out/threads"
for i in 1 2 3; do
  for t in 1 2; do
    "$BIN" bench --child --k $tk --threads-per-run $t >"$out/threads/k$tk-t$t-$i.json"
  done
done

if [ -n "$htsim" ]; then
  echo "== the htsim kit"
  reps=5; [ $quick = 1 ] && reps=3
  FS=$BIN HTSIM=$htsim/htsim/sim/datacenter HTSIM_COUNT=$htsim/htsim_count/sim/datacenter \
    REPS=$reps WITH_EQDS=0 bash "$KIT/run_htsim_vs_fabricsim.sh" "$out/kit" | tee "$out/kit.txt"
fi

# What the run was, for the table (and for scripts/bench-doc.py collect).
printf '{"commit": "%s", "base": "%s", "date": "%s", "quick": %s, "threads_k": %s}\n' \
  "$head" "$base" "$started" "$([ $quick = 1 ] && echo true || echo false)" "$tk" \
  >"$out/meta.json"
python3 scripts/bench-doc.py targets "$out"
