#!/usr/bin/env python3
"""Calibrates the costs of scenarios/sunway-collectives.toml on part of document 003's
tables 2-4 and prints the values to write into the scenario; the cells left out are then
predictions, whose error docs/results/sunway-collectives.md reports (hold-out).

    python3 scripts/sunway-collectives-calibrate.py [--fabricsim target/release/fabricsim]
        [--nics 128,256]

Calibration cells: the five collectives at the NIC counts given (default 128 and 256
NICs: the document's 256 and 512 nodes); the 1024-node column is never run here. On an
idle fabric a collective's latency is piecewise affine in the costs (a sum of costs along
its critical path), so each fit linearises the runs around the current costs (one run
per cost, that cost moved by a step), solves non-negative least squares over the
absolute error in us, and repeats from the solution until it stops moving. Discrete
choices are made the same way, on the calibration cells only: the hardware tree's fan-in
(FAN_INS) and the software algorithm of barrier and allreduce (`tree` or `default`).
`local_latency` (0.5 us between the two CPUs of a node) stays as the scenario sets it.
Standard library only; runs fabricsim on copies of the scenario in a temporary folder.
"""
import argparse
import itertools
import json
import os
import re
import subprocess
import sys
import tempfile

SCENARIO = "scenarios/sunway-collectives.toml"
# Document 003, tables 2-4 (us) at 256, 512 and 1024 nodes = 128, 256, 512 NICs.
DOC = {
    "barrier": ([59.19, 78.51, 98.05], [7.70, 10.30, 13.48]),
    "allreduce-8B": ([63.15, 81.47, 108.56], [7.71, 10.30, 13.49]),
    "bcast-8B": ([28.43, 32.73, 46.65], [7.76, 8.37, 11.00]),
    "bcast-128B": ([35.04, 41.12, 56.76], [8.05, 8.67, 11.23]),
    "bcast-1KiB": ([38.21, 44.40, 61.54], [9.29, 9.66, 11.67]),
}
NICS = [128, 256, 512]
FAN_INS = [2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64]
# Costs (name, unit of the step, step): hardware, then software (send = recv overhead).
HW = [("message_latency", "ps", 100_000), ("level_latency", "ps", 100_000),
      ("host_overhead", "ps", 100_000)]
SW = [("overhead", "ps", 1_000_000), ("byte_overhead", "ps", 1_000)]


def patch(text, kind, values, choice):
    """The scenario with `kind`'s costs (ps) and discrete choice written in."""
    lines = []
    for line in text.splitlines():
        if kind == "hw" and 'kind = "hw_collective", collective' in line:
            line = re.sub(r"fan_in = \d+", f"fan_in = {choice}", line)
            for name, _, _ in HW:
                line = re.sub(rf'{name} = "[^"]*"', f'{name} = "{round(values[name])}ps"', line)
        if kind == "sw" and 'kind = "sw_collective"' in line:
            o = round(values["overhead"])
            line = re.sub(r'send_overhead = "[^"]*"', f'send_overhead = "{o}ps"', line)
            line = re.sub(r'recv_overhead = "[^"]*"', f'recv_overhead = "{o}ps"', line)
            line = re.sub(r'byte_overhead = "[^"]*"',
                          f'byte_overhead = "{round(values["byte_overhead"])}ps"', line)
            if "collective = \"barrier\"" in line or "collective = \"allreduce\"" in line:
                line = re.sub(r'algorithm = "[^"]*"', f'algorithm = "{choice}"', line)
        lines.append(line)
    return "\n".join(lines) + "\n"


def run(fabricsim, text, nics, tmp):
    """Latency (us) of every cell at `nics`: {(kind, collective, nics): us}."""
    path = os.path.join(tmp, "s.toml")
    out = os.path.join(tmp, "out")
    with open(path, "w") as f:
        f.write(text)
    subprocess.run([fabricsim, "run", path, "--out", out, "--quiet", "--set",
                    f"sweep[0].values={json.dumps(nics)}"], check=True,
                   stdout=subprocess.DEVNULL)
    res = {}
    for coll in DOC:
        for n in nics:
            with open(os.path.join(out, f"hw-{coll}-nics={n}", "collectives.csv")) as f:
                rows = f.read().splitlines()
            head, first = rows[0].split(","), rows[1].split(",")
            res[("hw", coll, n)] = float(first[head.index("latency_ns")]) / 1e3
            with open(os.path.join(out, f"sw-{coll}-nics={n}", "summary.json")) as f:
                res[("sw", coll, n)] = json.load(f)["jobs"]["jct_mean_ns"] / 1e3
    return res


def lstsq(cols, y):
    """Least squares with the columns given (normal equations); None if singular."""
    k = len(cols)
    a = [[sum(ci * cj for ci, cj in zip(cols[i], cols[j])) for j in range(k)] for i in range(k)]
    b = [sum(ci * yi for ci, yi in zip(cols[i], y)) for i in range(k)]
    for i in range(k):
        p = max(range(i, k), key=lambda r: abs(a[r][i]))
        if abs(a[p][i]) < 1e-12:
            return None
        a[i], a[p], b[i], b[p] = a[p], a[i], b[p], b[i]
        for r in range(k):
            if r != i:
                m = a[r][i] / a[i][i]
                a[r] = [x - m * z for x, z in zip(a[r], a[i])]
                b[r] -= m * b[i]
    return [b[i] / a[i][i] for i in range(k)]


def nnls(jac, y):
    """Non-negative least squares over few unknowns: every active set, the best feasible."""
    k = len(jac[0])
    best = ([0.0] * k, sum(v * v for v in y))
    for r in range(1, k + 1):
        for free in itertools.combinations(range(k), r):
            sol = lstsq([[row[j] for row in jac] for j in free], y)
            if sol is None or min(sol) < 0:
                continue
            x = [0.0] * k
            for j, v in zip(free, sol):
                x[j] = v
            sse = sum((sum(row[j] * x[j] for j in range(k)) - yi) ** 2 for row, yi in zip(jac, y))
            if sse < best[1]:
                best = (x, sse)
    return best[0]


def calibrate(fabricsim, text, kind, choice, start, nics, tmp):
    """Costs (ps) of `kind` for `choice` fitted to the calibration cells, and the rms (us)."""
    costs = SW if kind == "sw" else HW
    cells = [(kind, c, n) for c in DOC for n in nics]
    target = [DOC[c][0 if kind == "sw" else 1][NICS.index(n)] for _, c, n in cells]
    x = dict(start)
    for _ in range(6):
        base = run(fabricsim, patch(text, kind, x, choice), nics, tmp)
        cols = []
        for name, _, step in costs:
            moved = dict(x)
            moved[name] += step
            r = run(fabricsim, patch(text, kind, moved, choice), nics, tmp)
            cols.append([(r[c] - base[c]) / step for c in cells])
        # base + J (x' - x) = target  =>  J x' = target - base + J x
        jac = [[cols[j][i] for j in range(len(costs))] for i in range(len(cells))]
        y = [t - base[c] + sum(jac[i][j] * x[costs[j][0]] for j in range(len(costs)))
             for i, (c, t) in enumerate(zip(cells, target))]
        sol = nnls(jac, y)
        new = {name: v for (name, _, _), v in zip(costs, sol)}
        moved = max(abs(new[n] - x[n]) for n in new)
        x = new
        if moved < 1.0:  # below a picosecond
            break
    fit = run(fabricsim, patch(text, kind, x, choice), nics, tmp)
    rms = (sum((fit[c] - t) ** 2 for c, t in zip(cells, target)) / len(cells)) ** 0.5
    return x, rms


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--fabricsim", default="target/release/fabricsim")
    ap.add_argument("--nics", default="128,256", help="NIC counts calibrated on")
    args = ap.parse_args()
    nics = [int(v) for v in args.nics.split(",")]
    if not set(nics) <= set(NICS):
        sys.exit(f"--nics: choose among {NICS}")
    with open(SCENARIO) as f:
        text = f.read()
    with tempfile.TemporaryDirectory() as tmp:
        hw = []
        for k in FAN_INS:
            start = {"message_latency": 100_000.0, "level_latency": 0.0, "host_overhead": 300_000.0}
            x, rms = calibrate(args.fabricsim, text, "hw", k, start, nics, tmp)
            print(f"hw fan_in {k}: rms {rms:.3f} us, " +
                  ", ".join(f"{n} {v / 1e3:.1f} ns" for n, v in x.items()))
            hw.append((rms, k, x))
        sw = []
        for alg in ["tree", "default"]:
            start = {"overhead": 2_000_000.0, "byte_overhead": 500.0}
            x, rms = calibrate(args.fabricsim, text, "sw", alg, start, nics, tmp)
            print(f"sw {alg}: rms {rms:.3f} us, " +
                  ", ".join(f"{n} {v / 1e3:.3f} ns" for n, v in x.items()))
            sw.append((rms, alg, x))
    rms, k, x = min(hw, key=lambda t: t[0])
    print(f"\nhardware: fan_in = {k}, " + ", ".join(f'{n} = "{round(v / 1e3)}ns"'
                                                  for n, v in x.items()) + f" (rms {rms:.3f} us)")
    rms, alg, x = min(sw, key=lambda t: t[0])
    print(f"software: algorithm = \"{alg}\", send_overhead = recv_overhead = "
          f"\"{round(x['overhead'] / 1e3)}ns\", byte_overhead = \"{round(x['byte_overhead'])}ps\""
          f" (rms {rms:.3f} us)")


if __name__ == "__main__":
    main()
