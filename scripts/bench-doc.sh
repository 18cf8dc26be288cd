#!/usr/bin/env bash
# Measures everything docs/results/bench.md shows and writes it: the speed targets
# (scripts/speed-targets.sh: cachegrind at k = 8 and 16 against the base build, walls on
# one core in interleaved pairs, two threads at k = 32, the htsim kit), then two threads
# against one at k = 8, 16 and 24, the memory at k = 48, the long-haul pair, cachegrind
# of both builds at k = 32, callgrind of both at k = 16 (by function), the machine's
# description; then
#   scripts/bench-doc.py collect OUT > docs/results/bench-run.json
#   scripts/bench-doc.py render docs/results/bench-run.json > docs/results/bench.md
#
#   scripts/bench-doc.sh [--quick] --htsim DIR OUT
#
# --quick is a look at a change, not a measurement: speed-targets.sh --quick, then two
# threads at k = 8 only, nothing else; it writes OUT/bench-run.json and OUT/bench.md,
# never the committed ones.
#
# DIR is the htsim kit's build (`build_htsim.sh GIT_DIR DIR`); OUT must lie outside the
# repository (the base is built there, without this tree's .cargo/config.toml). About
# a quarter of an hour on the 2-core VM (a few minutes with --quick), which must be
# otherwise idle (no builds, no other runs).
# Measure a committed tree: the document names the commit.
set -euo pipefail
cd "$(dirname "$0")/.."
usage="usage: scripts/bench-doc.sh [--quick] --htsim DIR OUT"
quick=0 htsim="" out=""
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) quick=1 ;;
    --htsim) htsim=${2:?$usage}; shift ;;
    -*) echo "bench-doc.sh: unknown option '$1' ($usage)" >&2; exit 2 ;;
    *) [ -z "$out" ] || { echo "$usage" >&2; exit 2; }; out=$1 ;;
  esac
  shift
done
[ -n "$out" ] && [ -n "$htsim" ] || { echo "$usage" >&2; exit 2; }
command -v valgrind >/dev/null 2>&1 || { echo "bench-doc.sh: valgrind is not installed" >&2; exit 2; }
command -v llvm-symbolizer >/dev/null 2>&1 || { echo "bench-doc.sh: llvm-symbolizer is not installed (the by-function table)" >&2; exit 2; }
[ -z "$(git status --porcelain --untracked-files=no)" ] || echo "bench-doc.sh: the tree has uncommitted changes; the document will say so" >&2

if [ $quick = 1 ]; then
  bash scripts/speed-targets.sh --quick --htsim "$htsim" "$out"
else
  bash scripts/speed-targets.sh --htsim "$htsim" "$out"
fi
out=$(cd "$out" && pwd)
BIN=$out/fabricsim
BASE_BIN=${FABRICSIM_BASE_BIN:-$out/base-fabricsim}
[ "$BASE_BIN" = "$out/base-fabricsim" ] || cp "$BASE_BIN" "$out/base-fabricsim"
rm -rf "$out"/mem-k*.json "$out"/callgrind-* "$out"/cg-*-k32.* "$out/longhaul" \
  "$out"/bench-run.json "$out"/bench.md

# One thread against two at k = $1, alternating, three runs each (as speed-targets.sh).
threads() {
  for i in 1 2 3; do
    for t in 1 2; do
      "$BIN" bench --child --k "$1" --threads-per-run $t >"$out/threads/k$1-t$t-$i.json"
    done
  done
}

if [ $quick = 1 ]; then
  echo "== two threads against one, k = 8"
  threads 8
  lscpu >"$out/machine.txt" 2>/dev/null || true
  python3 scripts/bench-doc.py collect "$out" >"$out/bench-run.json"
  python3 scripts/bench-doc.py render "$out/bench-run.json" >"$out/bench.md"
  echo "== wrote $out/bench-run.json and $out/bench.md (a quick look: not for docs/results)"
  exit 0
fi

echo "== two threads against one, k = 8, 16, 24"
for k in 8 16 24; do threads $k; done

echo "== memory at k = 48 (one thread)"
"$BIN" bench --child --k 48 >"$out/mem-k48.json"

echo "== long links against short (what bench --long-haul runs)"
mkdir -p "$out/longhaul"
for i in 1 2 3; do
  for km in 120 0.2; do
    "$BIN" bench --child --km $km >"$out/longhaul/km$km-$i.json"
  done
done

echo "== cachegrind at k = 32, this build and the base"
for who in new base; do
  b=$BIN; [ $who = base ] && b=$out/base-fabricsim
  valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=/dev/null \
    "$b" bench --child --k 32 >"$out/cg-$who-k32.json" 2>"$out/cg-$who-k32.err"
done

echo "== callgrind at k = 16, this build and the base"
for who in new base; do
  b=$BIN; [ $who = base ] && b=$out/base-fabricsim
  valgrind --tool=callgrind --dump-instr=yes --callgrind-out-file="$out/callgrind-$who-k16.out" \
    "$b" bench --child --k 16 >"$out/callgrind-$who-k16.json" 2>"$out/callgrind-$who-k16.err"
done

lscpu >"$out/machine.txt" 2>/dev/null || true
python3 scripts/bench-doc.py collect "$out" >docs/results/bench-run.json
python3 scripts/bench-doc.py render docs/results/bench-run.json >docs/results/bench.md
echo "== wrote docs/results/bench-run.json and docs/results/bench.md"
