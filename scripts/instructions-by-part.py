#!/usr/bin/env python3
"""Where the instructions of an event go, by part of the model, before and after.

Reads cachegrind outputs of `fabricsim bench --child --k K` (one per build) and prints a
markdown table: instructions per event, grouped by the source file the code comes from
(inlined code counts where it is written, not where it is inlined), the standard
library's share grouped by what it is (bounds-checked indexing, vectors, deques, sorting).

    valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=OLD.out OLD bench --child --k 16
    valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=NEW.out NEW bench --child --k 16
    scripts/instructions-by-part.py --events 8708326 old=OLD.out new=NEW.out

Needs `cg_annotate` (valgrind's).
"""

import argparse
import json
import re
import subprocess
import sys
from collections import Counter

# Source path fragment -> part, first match wins (the fragments match the crate's layout
# before and after it was layered: `engine/` and `packet.rs` were the calendar and the
# arena's files).
PARTS = [
    ("kernel/events/", "event calendar"),
    ("src/engine/", "event calendar"),
    ("sim/lookahead.rs", "look-ahead prefetch"),
    ("sim/event_loop.rs", "event loop and dispatch"),
    ("fabric/link.rs", "links"),
    ("fabric/switch.rs", "switch forwarding and ECN"),
    ("fabric/ecn.rs", "switch forwarding and ECN"),
    ("fabric/egress.rs", "egress and transmit"),
    ("fabric/port.rs", "ports and queues"),
    ("fabric/buffer.rs", "shared buffer"),
    ("fabric/flow_control/", "flow control (PFC, credits)"),
    ("routing/", "routing and ECMP"),
    ("transport/", "NICs and transport"),
    ("/cc/", "NICs and transport"),
    ("kernel/packet/", "packet arena"),
    ("src/packet.rs", "packet arena"),
    ("block_pool.rs", "block pool (queues, spills)"),
    ("ids.rs", "typed ids"),
    ("core/src/slice/index.rs", "std: indexing (bounds checks)"),
    ("core/src/slice/sort/", "std: sorting"),
    ("alloc/src/collections/vec_deque/", "link rings (VecDeque, then base/ring.rs)"),
    ("base/ring.rs", "link rings (VecDeque, then base/ring.rs)"),
    ("alloc/src/vec/", "std: vectors"),
    ("alloc/src/raw_vec/", "std: vectors"),
    ("core/src/ptr/", "std: pointers and copies"),
    ("memmove", "std: pointers and copies"),
    ("core/src/num/", "std: integer arithmetic"),
    ("core/src/cmp.rs", "std: integer arithmetic"),
]


def by_part(path):
    out = subprocess.run(
        ["cg_annotate", "--auto=no", "--threshold=0", "--show-percs=no", path],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    parts, total, started = Counter(), 0, False
    for line in out.splitlines():
        if "file:function" in line:
            started = True
            continue
        m = re.match(r"^\s*([\d,]+)\s+(\S+?):", line)
        if not started or not m:
            if "PROGRAM TOTALS" in line:
                total = int(line.split()[0].replace(",", ""))
            continue
        n, src = int(m.group(1).replace(",", "")), m.group(2)
        part = next((p for key, p in PARTS if key in src), "other")
        parts[part] += n
    return total, parts


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--events", type=int, required=True, help="events of the run (bench's `events`)")
    ap.add_argument("--json", action="store_true", help="print the counts as JSON, not a table")
    ap.add_argument("builds", nargs="+", metavar="NAME=CACHEGRIND.OUT")
    a = ap.parse_args()
    cols = []
    for b in a.builds:
        name, _, path = b.partition("=")
        if not path:
            sys.exit(f"instructions-by-part: '{b}' is not NAME=FILE")
        cols.append((name, *by_part(path)))
    order = [p for _, p in PARTS] + ["other"]
    seen = []
    for p in order:
        if p not in seen and any(c[2][p] for c in cols):
            seen.append(p)
    seen.sort(key=lambda p: -cols[-1][2][p])
    if a.json:
        # Instructions (not per event) by part, per build, in the table's order.
        print(json.dumps({"events": a.events, "parts": seen, "builds": [
            {"name": n, "total": t, "by_part": {p: c[p] for p in seen}} for n, t, c in cols]}))
        return
    print("| part | " + " | ".join(f"{n} (per event)" for n, _, _ in cols) + " |")
    print("|---|" + "---|" * len(cols))
    for p in seen:
        print(f"| {p} | " + " | ".join(f"{c[2][p] / a.events:.1f}" for c in cols) + " |")
    print("| **all** (program total) | " + " | ".join(f"**{t / a.events:.1f}**" for _, t, _ in cols) + " |")


if __name__ == "__main__":
    main()
