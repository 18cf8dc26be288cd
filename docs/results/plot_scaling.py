#!/usr/bin/env python3
"""Draws docs/results/bench-scaling.svg from docs/results/bench-scaling.csv (the figures
of `fabricsim bench --k K --threads-per-run N`, see bench.md). Standard library only.

Left: packet-hops per wall second against hosts, one line per thread count and machine
(log scale: 16 threads run 20 times as fast as one).
Middle: memory per host (peak RSS / hosts) against hosts, likewise.
Right: speedup over one thread against threads on the 16-core machine, from
docs/results/bench-threads.csv, beside the bound the cut puts on it (all events over
those of each window's busiest shard, `speed.parallel.parallelism`) and a core's worth.
Only the last machine in that file is drawn.

    python3 docs/results/plot_scaling.py
"""
import csv
import math
import os

HERE = os.path.dirname(os.path.abspath(__file__))
COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#7f7f7f"]


def panel(x0, y0, w, h, series, title, ylabel, xlabel="hosts (log scale)", logy=False,
          dashed=()):
    xs = [x for pts in series.values() for x, _ in pts]
    ys = [y for pts in series.values() for _, y in pts]
    lx0, lx1 = math.log10(min(xs)) - 0.1, math.log10(max(xs)) + 0.1
    y1 = max(ys) * 1.15
    sx = lambda x: x0 + (math.log10(x) - lx0) / (lx1 - lx0) * w
    if logy:
        ly0, ly1 = math.log10(min(ys)) - 0.1, math.log10(max(ys)) + 0.1
        sy = lambda y: y0 + h - (math.log10(y) - ly0) / (ly1 - ly0) * h
    else:
        sy = lambda y: y0 + h - y / y1 * h
    out = [f'<rect x="{x0}" y="{y0}" width="{w}" height="{h}" fill="none" stroke="#444"/>',
           f'<text x="{x0 + w / 2}" y="{y0 - 10}" text-anchor="middle" font-size="14">{title}</text>',
           f'<text x="{x0 - 45}" y="{y0 + h / 2}" text-anchor="middle" font-size="12" '
           f'transform="rotate(-90 {x0 - 45} {y0 + h / 2})">{ylabel}</text>',
           f'<text x="{x0 + w / 2}" y="{y0 + h + 35}" text-anchor="middle" font-size="12">{xlabel}</text>']
    for i in range(5):
        v = 10 ** (ly0 + (ly1 - ly0) * i / 4) if logy else y1 * i / 4
        out.append(f'<text x="{x0 - 6}" y="{sy(v) + 4}" text-anchor="end" font-size="10">{v:.3g}</text>')
        out.append(f'<line x1="{x0}" x2="{x0 + w}" y1="{sy(v)}" y2="{sy(v)}" stroke="#ddd"/>')
    for x in sorted(set(xs)):
        out.append(f'<text x="{sx(x)}" y="{y0 + h + 15}" text-anchor="middle" font-size="10">{x}</text>')
    for i, (name, pts) in enumerate(sorted(series.items())):
        c = COLORS[i % len(COLORS)]
        pts = sorted(pts)
        path = " ".join(f"{sx(x):.1f},{sy(y):.1f}" for x, y in pts)
        dash = ' stroke-dasharray="5,4"' if name in dashed else ""
        out.append(f'<polyline points="{path}" fill="none" stroke="{c}" stroke-width="2"{dash}/>')
        for x, y in pts:
            out.append(f'<circle cx="{sx(x):.1f}" cy="{sy(y):.1f}" r="3" fill="{c}"/>')
        out.append(f'<text x="{x0 + 10}" y="{y0 + 18 + 16 * i}" font-size="12" fill="{c}">{name}</text>')
    return out


def main():
    rows = list(csv.DictReader(open(os.path.join(HERE, "bench-scaling.csv"))))
    speed, mem = {}, {}
    for r in rows:
        name = f'{r["threads"]} thread{"s" if r["threads"] != "1" else ""} ({r["machine"]})'
        hosts = int(r["hosts"])
        speed.setdefault(name, []).append((hosts, float(r["hops_per_s"]) / 1e6))
        mem.setdefault(name, []).append((hosts, float(r["rss_mb"]) * 1e3 / hosts))
    threads, dashed = {}, set()
    speedups = list(csv.DictReader(open(os.path.join(HERE, "bench-threads.csv"))))
    latest = speedups[-1]["machine"]
    for r in speedups:
        if r["machine"] != latest:
            continue
        t = int(r["threads"])
        threads.setdefault(f'k = {r["k"]} ({int(r["hosts"]):,} hosts)', []).append(
            (t, float(r["speedup"])))
        bound = f'k = {r["k"]}: bound of the cut'
        threads.setdefault(bound, []).append((t, float(r["bound"])))
        dashed.add(bound)
    ts = sorted({t for pts in threads.values() for t, _ in pts})
    threads["one core's worth (ideal)"] = [(t, float(t)) for t in ts]
    dashed.add("one core's worth (ideal)")
    body = panel(80, 50, 380, 260, speed, "packet-hops per wall second", "M hops/s",
                 logy=True)
    body += panel(580, 50, 380, 260, mem, "peak RSS per host", "KB per host")
    body += panel(1080, 50, 380, 260, threads, f"speedup over one thread ({latest})",
                  "speedup (log scale)", xlabel="threads per run (log scale)", logy=True, dashed=dashed)
    svg = ('<svg xmlns="http://www.w3.org/2000/svg" width="1500" height="370" '
           'font-family="sans-serif">\n<rect width="1500" height="370" fill="white"/>\n'
           + "\n".join(body) + "\n</svg>\n")
    open(os.path.join(HERE, "bench-scaling.svg"), "w").write(svg)


if __name__ == "__main__":
    main()
