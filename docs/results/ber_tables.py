#!/usr/bin/env python3
"""Prints the 16 MiB tables of docs/results/ber.md from a results folder of
`fabricsim run scenarios/gse-ber.toml --out DIR` (each run's summary.json). Standard
library only.

    python3 docs/results/ber_tables.py results/gse-ber
"""
import json
import os
import sys


def short(n):
    """A count as the page writes it: 120, 14k, 1.5M."""
    if n >= 1e6:
        return f"{n / 1e6:.1f}M"
    if n >= 1e4:
        return f"{n / 1e3:.0f}k"
    if n >= 1e3:
        return f"{n / 1e3:.1f}k"
    return str(n)


def ber_name(b):
    return {"0.0": "0", "0.00000001": "1e-08", "0.000001": "1e-06", "0.00001": "1e-05",
            "0.0001": "0.0001"}.get(b, b)


def main(folder):
    runs = {}
    for name in os.listdir(folder):
        path = os.path.join(folder, name, "summary.json")
        if not os.path.exists(path):
            continue
        with open(path) as f:
            s = json.load(f)
        p = s["run"]["params"]
        runs[(s["run"]["variant"], p["collective"], p["fec"], p["llr"], p["ber"])] = s
    bers = sorted({k[4] for k in runs}, key=float)

    def jct(s):
        j = s["jobs"]
        if j["completed"] == j["count"] and j["jct_mean_ns"] is not None:
            return j["jct_mean_ns"] / 1e6
        return None

    def cell(s, clean):
        v = jct(s)
        if v is None:
            r = s["run"]
            at = "stalled" if r["outcome"] == "stalled" else "max time"
            return f"not done ({s['jobs']['completed']}/{s['jobs']['count']} jobs, {at} at " \
                   f"{r['sim_end_ns'] / 1e6:.0f} ms)"
        c = jct(clean) if clean else None
        return f"{v:.2f} ({v / c:.2f}x)" if c else f"{v:.2f}"

    for coll, title in (("alltoall", "AlltoAll"), ("ring_allreduce", "Ring AllReduce")):
        print(f"### {title}\n")
        print("| FEC | LLR | BER | RoCE JCT ms (x clean) | GSE JCT ms (x clean) | RoCE/GSE | "
              "corrupted RoCE / GSE | replayed RoCE / GSE | data pkts lost RoCE / GSE | "
              "RoCE timeouts | GSE reorder skips / drops |")
        print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        for fec in ("none", "rs528"):
            for llr in ("false", "true"):
                for b in bers:
                    r = runs.get(("roce", coll, fec, llr, b))
                    g = runs.get(("gse", coll, fec, llr, b))
                    if not r or not g:
                        continue
                    rc = runs.get(("roce", coll, fec, llr, bers[0]))
                    gc = runs.get(("gse", coll, fec, llr, bers[0]))
                    jr, jg = jct(r), jct(g)
                    ratio = f"{jr / jg:.2f}" if jr and jg else "-"
                    f = lambda s, k: short(s["faults"][k]) if s.get("faults") else "0"
                    print(
                        f"| {fec} | {'on' if llr == 'true' else 'off'} | {ber_name(b)} | "
                        f"{cell(r, rc)} | {cell(g, gc)} | {ratio} | "
                        f"{f(r, 'frames_corrupted')} / {f(g, 'frames_corrupted')} | "
                        f"{f(r, 'frames_replayed')} / {f(g, 'frames_replayed')} | "
                        f"{f(r, 'data_packets_lost')} / {f(g, 'data_packets_lost')} | "
                        f"{r['transport']['timeouts']} | "
                        f"{g['gse']['reorder_skips']} / {g['fabric']['drops']} |"
                    )
        print()


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "results/gse-ber")
