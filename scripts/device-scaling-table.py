#!/usr/bin/env python3
"""Prints the table of scripts/device-scaling.sh's results: per fat tree and thread count,
wall seconds, packet-hops per second, peak RSS, bytes per host, and the speedup over the
same k on one thread when that run is there, beside the bound the cut puts on it (all
events over those of each window's busiest shard: a count). Standard library only.

    python3 scripts/device-scaling-table.py out/device
"""
import glob
import json
import os
import re
import sys


def main(folder):
    runs = {}
    for path in glob.glob(os.path.join(folder, "k*-t*.json")):
        m = re.search(r"k(\d+)-t(\d+)\.json$", path)
        if not m:
            continue
        with open(path) as f:
            line = f.read().strip()
        if line:
            runs[(int(m.group(1)), int(m.group(2)))] = json.loads(line)
    if not runs:
        sys.exit(f"no k*-t*.json results in {folder}")
    machine = os.path.join(folder, "machine.txt")
    if os.path.exists(machine):
        with open(machine) as f:
            print("machine:", " / ".join(l.strip() for l in f if l.strip()))
    print("| k | hosts | threads | shards | wall s | packet-hops/s | peak RSS MB | RSS per host | speedup | bound |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for (k, t) in sorted(runs):
        r = runs[(k, t)]
        wall = r["wall_seconds"]
        base = runs.get((k, 1))
        speedup = f"{base['wall_seconds'] / wall:.2f}x" if base and t > 1 else ""
        bound = f"{r['parallelism']:.2f}x" if r.get("parallelism") else ""
        if r["packet_hops"] != (base or r)["packet_hops"]:
            speedup += " (hops differ from one thread: a bug)"
        print(
            f"| {k} | {r['hosts']:,} | {t} | {r['shards']} | {wall:.2f} | "
            f"{r['packet_hops'] / wall / 1e6:.2f} M | {r['peak_rss_mb']:.1f} | "
            f"{r['peak_rss_mb'] * 1048576 / r['hosts'] / 1024:.1f} KB | {speedup} | "
            f"{bound} |"
        )


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "out/device")
