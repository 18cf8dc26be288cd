#!/usr/bin/env python3
"""Where the CPU waits on 16-byte reads of the stack: a value written there in narrower
pieces (a packet descriptor's fields) and read back whole cannot be forwarded from the
store buffer, and the read waits until those writes reach the cache. Instruction counts
do not show it; samples of `perf record` pile up on the instruction after such a read.

For each function with more than 1 % of the samples, it lists the 16-byte loads from
`(%rsp)` whose samples (theirs and the next instruction's) pass `--min` percent of the
function's, and sums them over the run.

    perf record -e cpu-clock -F 20000 -o PERF.data target/release/fabricsim bench --child --k 16
    scripts/stack-reloads.py PERF.data

Needs `perf` (the `cpu-clock` event serves on machines without hardware counters).
"""

import argparse
import re
import subprocess

LOAD = re.compile(r"v?mov(dq[au]|up[sd]|ap[sd])$")
FROM_STACK = re.compile(r"\(%rsp\),%[xy]mm")
INSN = re.compile(r"^\s+([0-9.]+)\s+:\s+([0-9a-f]+):\s+(\S+)\s+(.*)$")
SYMBOL = re.compile(r"\s+([0-9.]+)%\s+\[\.\]\s+(.*?)(\s{2,}|$)")


def perf(*args):
    return subprocess.run(["perf", *args], capture_output=True, text=True, check=True).stdout


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("data", help="perf.data of a run")
    ap.add_argument("--min", type=float, default=0.3, help="list reads above this share")
    a = ap.parse_args()
    report = perf("report", "-i", a.data, "--no-children", "--sort", "symbol", "--stdio")
    functions = []
    for line in report.splitlines():
        m = SYMBOL.match(line)
        if m and float(m.group(1)) > 1.0:
            functions.append((float(m.group(1)), m.group(2)))
    total = 0.0
    for share, name in functions:
        listing = perf("annotate", "-i", a.data, "--stdio", "-s", name)
        insns = [m for m in map(INSN.match, listing.splitlines()) if m]
        waited = 0.0
        for i, m in enumerate(insns[:-1]):
            if LOAD.match(m.group(3)) and FROM_STACK.search(m.group(4)):
                p = float(m.group(1)) + float(insns[i + 1].group(1))
                if p > a.min:
                    print(f"  {m.group(2)} {m.group(3)} {m.group(4)[:28]:28} {p:6.2f} % of the function")
                waited += p
        print(f"{share:6.2f} % {name[:90]}: {waited:.2f} % of it on stack reloads")
        total += waited * share / 100
    print(f"stack reloads: {total:.2f} % of all samples")


if __name__ == "__main__":
    main()
