#!/usr/bin/env bash
# The cost of an event, guarded: cachegrind's instruction count of
# `fabricsim bench --child --k 8` (a 128-host fat tree, 1.06 M events) against the
# baseline committed in `bench/instructions.toml`. Instruction counts do not drift as
# wall time does on a shared VM, so a rise is a change in the code, not in the machine.
#
#   scripts/instructions.sh                 check: exit 1 if the count rose more than the
#                                           baseline's tolerance (CI runs this)
#   scripts/instructions.sh --update "why"  measure and write the baseline, with the reason
#                                           (a commit that raises it says why there)
#
# Uses target/release/fabricsim (built if absent) and valgrind (exit 2 naming it if absent).
set -euo pipefail
cd "$(dirname "$0")/.."
BASE=bench/instructions.toml
BIN=${FABRICSIM_BIN:-target/release/fabricsim}
mode=check why=""
if [ "${1:-}" = "--update" ]; then
  mode=update why=${2:-}
  [ -n "$why" ] || { echo "instructions.sh --update needs the reason: --update \"why\"" >&2; exit 2; }
elif [ -n "${1:-}" ]; then
  echo "instructions.sh: unknown argument '$1' (allowed: none, or --update \"why\")" >&2
  exit 2
fi
command -v valgrind >/dev/null 2>&1 || { echo "instructions.sh: valgrind is not installed (cachegrind counts the instructions)" >&2; exit 2; }
[ -x "$BIN" ] || cargo build --release -p fabricsim-cli
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=/dev/null \
  "$BIN" bench --child --k 8 >"$tmp/out" 2>"$tmp/err"
count=$(sed -n 's/.*I *refs: *\([0-9,]*\).*/\1/p' "$tmp/err" | tr -d ,)
[ -n "$count" ] || { echo "instructions.sh: no count in valgrind's output:" >&2; cat "$tmp/err" >&2; exit 1; }
field() { sed -n "s/.*\"$1\":\([0-9]*\).*/\1/p" "$tmp/out"; }
events=$(field events) hops=$(field packet_hops)
if [ "$mode" = update ]; then
  commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
  cat >"$BASE" <<EOF
# The instruction count of \`fabricsim bench --child --k 8\` under
# \`valgrind --tool=cachegrind --cache-sim=no\`, written by \`scripts/instructions.sh --update\`.
# CI (\`scripts/instructions.sh\`) fails when a commit raises it by more than \`tolerance\`;
# a commit that means to raise it rewrites this file and says why.
instructions = $count
events = $events
packet_hops = $hops
tolerance = 0.02
measured_at = "$commit"
why = "$(printf '%s' "$why" | sed 's/\\/\\\\/g; s/"/\\"/g')"
EOF
  echo "baseline: $count instructions, $events events, $hops packet-hops (written to $BASE)"
  exit 0
fi
[ -f "$BASE" ] || { echo "instructions.sh: no baseline ($BASE); write one with --update \"why\"" >&2; exit 2; }
get() { sed -n "s/^$1 *= *\"\{0,1\}\([^\"]*\)\"\{0,1\}$/\1/p" "$BASE"; }
base=$(get instructions) tol=$(get tolerance) bevents=$(get events) bhops=$(get packet_hops)
[ -n "$(get why)" ] || { echo "instructions.sh: $BASE says no why" >&2; exit 2; }
python3 - "$count" "$base" "$tol" "$events" "$bevents" "$hops" "$bhops" <<'EOF'
import sys
count, base, tol = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
events, bevents, hops, bhops = sys.argv[4:8]
rise = count / base - 1
print(f"k=8: {count:,} instructions against the baseline's {base:,} ({rise:+.2%}); "
      f"{int(events):,} events ({int(events) / 1e6:.2f} M, {count / int(events):.0f} per event), "
      f"{int(hops):,} packet-hops")
if (events, hops) != (bevents, bhops):
    print(f"note: the baseline ran {bevents} events and {bhops} packet-hops: the bench's "
          "results moved, so compare per event, and rewrite the baseline in the commit that moved them")
if rise > tol:
    print(f"FAIL: more than {tol:.0%} above the baseline. Find the cost (cg_annotate), or, "
          "if it is meant, raise the baseline with scripts/instructions.sh --update \"why\"")
    sys.exit(1)
if rise < -tol:
    print("note: well below the baseline; lower it with scripts/instructions.sh --update \"why\"")
EOF
