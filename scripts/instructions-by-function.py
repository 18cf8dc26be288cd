#!/usr/bin/env python3
"""Where the instructions of an event go, by function, counting what each one inlines.

`instructions-by-part.py` groups instructions by the file their code is written in, so an
accessor inlined into the look-ahead (a bounds-checked index, a ring's front) counts as
indexing or as the ring, not as the look-ahead. This script groups each instruction
under the innermost function of the crate it was inlined into (the standard library's
code counts for the crate's function that called it), which says what an operation costs
whole: an admission, a calendar push. `--inclusive` adds, for the functions named, all
the code inlined into them, the crate's included (the look-ahead with the accessors it
calls).

    valgrind --tool=callgrind --dump-instr=yes --callgrind-out-file=CG.out \\
        target/release/fabricsim bench --child --k 16
    scripts/instructions-by-function.py --events 8708326 CG.out target/release/fabricsim \\
        --inclusive prefetch_ahead,EventQueue::pop,EventQueue::push

`--lines` groups by source line instead (the crate's innermost line an instruction was
inlined from), and `--within NAME` counts only the code inlined into the functions so
named: `--lines --within egress::try_transmit` is where a switch's transmission spends.

Needs `llvm-symbolizer` (for the inlined frames) and a build with line tables (the
release profile's `debug = 1`).
"""

import argparse
import json
import re
import subprocess
import sys
from collections import Counter


def counts_by_address(path, binary_name):
    """Instructions per address of the fabricsim object, from a callgrind output written
    with `--dump-instr=yes` (addresses absolute, `+n`/`-n` relative, `*` the same)."""
    cnt = Counter()
    names = {}
    obj = None
    last = 0
    skip = False
    with open(path) as f:
        for line in f:
            line = line.rstrip("\n")
            m = re.match(r"c?ob=\((\d+)\)\s*(.*)", line)
            if m:
                if m.group(2):
                    names[m.group(1)] = m.group(2)
                if line.startswith("ob="):
                    obj = names.get(m.group(1))
                continue
            if line.startswith("calls="):
                skip = True  # the next line is the call's cost, inclusive: not ours
                continue
            if not line or line[0] not in "0123456789+-*":
                continue
            parts = line.split()
            a = parts[0]
            if a.startswith("0x"):
                addr = int(a, 16)
            elif a.startswith("+"):
                addr = last + int(a[1:])
            elif a.startswith("-"):
                addr = last - int(a[1:])
            elif a == "*":
                addr = last
            else:
                continue
            last = addr
            if skip:
                skip = False
                continue
            if obj and binary_name in obj and len(parts) >= 3:
                cnt[addr] += int(parts[2])
    return cnt


def symbolize(binary, addrs):
    """Inlined frames per address, innermost first: [(file, line, function)]."""
    out = subprocess.run(
        ["llvm-symbolizer", "--obj=" + binary, "--inlining", "--output-style=JSON"],
        input="\n".join(hex(a) for a in addrs),
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    frames = {}
    for line in out.splitlines():
        j = json.loads(line)
        frames[int(j["Address"], 16)] = [
            (s["FileName"], s["Line"], s["FunctionName"]) for s in j["Symbol"]
        ]
    return frames


def short(name):
    """A function's path without the hash and the generic noise of impl blocks."""
    name = re.sub(r"::h[0-9a-f]{16}$", "", name)
    name = re.sub(r"_\$LT\$impl\$u20\$[^$]*(\$[^$]*)*?\$GT\$::", "", name)
    name = name.replace("$LT$", "<").replace("$GT$", ">").replace("$C$", ",")
    name = name.replace("$u20$", " ").replace("..", "::")
    return name.removeprefix("fabricsim::")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--events", type=int, required=True, help="events of the run")
    ap.add_argument("--top", type=int, default=40, help="rows to print")
    ap.add_argument(
        "--inclusive",
        default="",
        help="comma-separated function names (ends of their paths): each one's total "
        "with everything inlined into it",
    )
    ap.add_argument(
        "--lines",
        action="store_true",
        help="group by the crate's innermost source line, not by function",
    )
    ap.add_argument(
        "--within",
        default="",
        help="count only instructions inlined into a function whose path ends so",
    )
    ap.add_argument("--json", action="store_true", help="print the counts as JSON, not tables")
    ap.add_argument("callgrind_out")
    ap.add_argument("binary")
    a = ap.parse_args()
    cnt = counts_by_address(a.callgrind_out, a.binary.split("/")[-1])
    if not cnt:
        sys.exit(f"no instructions of {a.binary} in {a.callgrind_out} (--dump-instr=yes?)")
    frames = symbolize(a.binary, sorted(cnt))
    by_fn = Counter()
    wanted = [w for w in a.inclusive.split(",") if w]
    inclusive = Counter()
    total = 0
    for addr, n in cnt.items():
        chain = frames.get(addr) or [("?", 0, "?")]
        names = {short(fn) for _, _, fn in chain}
        if a.within and not any(x.endswith(a.within) for x in names):
            continue
        total += n
        for w in wanted:
            if any(x.endswith(w) for x in names):
                inclusive[w] += n
        if a.lines:
            # An unchecked index counts for the line that indexes.
            ours = [(f, ln) for f, ln, _ in chain
                    if "/crates/" in f and not f.endswith("base/trusted.rs")]
            f, ln = ours[0] if ours else chain[0][:2]
            f = f.split("/crates/")[-1] if ours else "(outside the crate) " + f.split("/")[-1]
            by_fn[f"{f}:{ln}"] += n
            continue
        crate = [fn for _, _, fn in chain if fn.startswith(("fabricsim::", "<fabricsim"))]
        by_fn[short(crate[0]) if crate else "(outside the crate) " + short(chain[-1][2])] += n
    if total == 0:
        sys.exit(f"no instructions inlined into a function ending with {a.within!r}")
    if a.json:
        # Instructions (not per event): the top rows, the rest, the total, and each
        # --inclusive name's total.
        top = by_fn.most_common(a.top)
        print(json.dumps({"events": a.events, "total": total, "top": top,
                          "rest": total - sum(n for _, n in top),
                          "inclusive": [[w, inclusive[w]] for w in wanted]}))
        return
    what = "source line (line 0: the compiler's own, as spills)" if a.lines else (
        "function (with the standard library's code it inlines)"
    )
    print(f"| {what} | per event | share |")
    print("|---|---|---|")
    for name, n in by_fn.most_common(a.top):
        print(f"| `{name}` | {n / a.events:.1f} | {100 * n / total:.1f} % |")
    rest = total - sum(n for _, n in by_fn.most_common(a.top))
    print(f"| the rest | {rest / a.events:.1f} | {100 * rest / total:.1f} % |")
    whole = f"**all** (inlined into `{a.within}`)" if a.within else "**all** (the binary's own code)"
    print(f"| {whole} | **{total / a.events:.1f}** | |")
    if wanted:
        print()
        print("| function, with all it inlines | per event | share |")
        print("|---|---|---|")
        for w in wanted:
            print(f"| `{w}` | {inclusive[w] / a.events:.1f} | {100 * inclusive[w] / total:.1f} % |")


if __name__ == "__main__":
    main()
