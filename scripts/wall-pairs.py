#!/usr/bin/env python3
"""Wall time of two fabricsim builds side by side: interleaved pairs of
`bench --child --k K` on one core, the order alternating within each pair.

    scripts/wall-pairs.py --k 16 --pairs 20 OLD_BINARY NEW_BINARY [-- bench args]

Prints each build's median wall time (`wall_seconds`, the event loop alone) and the
median of the per-pair ratios NEW / OLD with its quartiles. A shared VM's speed drifts
by well over 20 % from minute to minute, but the two runs of a pair see nearly the same
machine, so the ratios scatter far less than the times (two copies of one binary: a
median of about 1.00, quartiles within a few per cent at k = 8 over 30 pairs). One
warm-up pair is run first and not counted. Both builds must simulate the same thing:
the packet-hops and simulated time of every run are compared, and so are a build's
events from run to run, and a mismatch stops the script (exit 1); the two builds' events
may differ (one may skip events that do nothing), and the script says so. A change
meant to move results (a different event model) is compared with `--different-runs`:
the two builds may then simulate different runs, each build still the same run every
time. Runs are pinned to one CPU (`--cpu`, default 0) with `taskset` where it exists.
`--json FILE` also writes the figures (medians, quartiles, events) for a script to read.
"""

import argparse
import json
import shutil
import statistics
import subprocess
import sys


def run(binary, k, cpu, extra):
    cmd = [binary, "bench", "--child", "--k", str(k)] + extra
    if cpu is not None and shutil.which("taskset"):
        cmd = ["taskset", "-c", str(cpu)] + cmd
    try:
        out = subprocess.run(cmd, capture_output=True, text=True)
    except OSError as e:
        sys.exit(f"wall-pairs: cannot run {binary}: {e}")
    if out.returncode != 0:
        sys.exit(f"wall-pairs: {' '.join(cmd)} exited {out.returncode}: {out.stderr.strip()}")
    try:
        d = json.loads(out.stdout)
        return d["wall_seconds"], (d["events"], d["packet_hops"], d["sim_ps"])
    except (ValueError, KeyError) as e:
        sys.exit(f"wall-pairs: {binary} did not print bench's JSON line ({e})")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--k", type=int, default=8, help="fat-tree size (bench --k), default 8")
    ap.add_argument("--pairs", type=int, default=20, help="pairs counted, default 20")
    ap.add_argument("--cpu", type=int, default=0, help="CPU to pin to, default 0; -1: none")
    ap.add_argument(
        "--different-runs",
        action="store_true",
        help="allow builds whose runs differ (packet-hops, simulated time): a change that moves results",
    )
    ap.add_argument("--json", metavar="FILE", help="also write the figures to FILE as JSON")
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("extra", nargs="*", help="more `bench` arguments, after --")
    a = ap.parse_args()
    if a.pairs < 1:
        sys.exit("wall-pairs: --pairs must be at least 1")
    cpu = None if a.cpu < 0 else a.cpu
    _, work = run(a.old, a.k, cpu, a.extra)
    _, work_new = run(a.new, a.k, cpu, a.extra)
    if work[1:] != work_new[1:]:
        if not a.different_runs:
            sys.exit(
                f"wall-pairs: the builds simulate different runs (packet-hops, ps): "
                f"{work[1:]} against {work_new[1:]}"
            )
        print(
            f"wall-pairs: different runs (events, packet-hops, ps): {work} (old) "
            f"against {work_new} (new)"
        )
    elif work[0] != work_new[0]:
        print(f"wall-pairs: the same run in {work[0]} events (old) and {work_new[0]} (new)")
    olds, news, ratios = [], [], []
    for i in range(a.pairs):
        order = [(a.old, olds, work), (a.new, news, work_new)]
        if i % 2:
            order.reverse()
        for binary, into, want in order:
            wall, w = run(binary, a.k, cpu, a.extra)
            if w != want:
                sys.exit(f"wall-pairs: {binary} simulated {w}, not {want}")
            into.append(wall)
        ratios.append(news[-1] / olds[-1])
    q = statistics.quantiles(ratios, n=4) if len(ratios) > 1 else [ratios[0]] * 3
    print(
        f"k = {a.k}, {a.pairs} pairs: old {statistics.median(olds):.4f} s, "
        f"new {statistics.median(news):.4f} s (medians); new / old median "
        f"{statistics.median(ratios):.3f}, quartiles {q[0]:.3f} to {q[2]:.3f}"
    )
    if a.json:
        figures = {
            "k": a.k,
            "pairs": a.pairs,
            "old_median_s": statistics.median(olds),
            "new_median_s": statistics.median(news),
            "ratio_median": statistics.median(ratios),
            "ratio_quartiles": [q[0], q[2]],
            "events_old": work[0],
            "events_new": work_new[0],
        }
        with open(a.json, "w") as f:
            json.dump(figures, f, indent=1)
            f.write("\n")


if __name__ == "__main__":
    main()
