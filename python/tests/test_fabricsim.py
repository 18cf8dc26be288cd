"""The Python package against the command line's files, its errors, determinism, the
simulator's invariants, the GIL, and sweeps (local threads and Ray)."""

import json
import os
import shutil
import subprocess
import threading
import time

import numpy as np
import pandas as pd
import pytest

import fabricsim
from fabricsim import Scenario, ScenarioError


def read_csv(path):
    # Empty cells are missing values, as the DataFrames have them; nothing else is
    # taken for one ("NaN" in a fixed-decimal column is a float NaN either way).
    return pd.read_csv(path, keep_default_na=False, na_values=[""])


def assert_frame_matches_csv(df, path, exact=()):
    """`df` has exactly the CSV's columns, in order, and the same values: integers,
    text and the `exact` columns equal, other floats within half a unit of the last
    decimal the CSV prints."""
    csv = read_csv(path)
    text = pd.read_csv(path, dtype=str, keep_default_na=False)
    assert list(df.columns) == list(csv.columns)
    assert len(df) == len(csv)
    for c in csv.columns:
        a, b = df[c], csv[c]
        numeric = pd.api.types.is_numeric_dtype
        if not (numeric(a.dtype) and numeric(b.dtype)):
            assert a.fillna("").astype(str).tolist() == b.fillna("").astype(str).tolist(), c
            continue
        a = a.to_numpy(dtype=float)
        b = b.to_numpy(dtype=float)
        assert np.array_equal(np.isnan(a), np.isnan(b)), c
        ok = ~np.isnan(a)
        if c in exact or csv[c].dtype.kind in "iu":
            assert np.array_equal(a[ok], b[ok]), c
        else:
            decimals = max((len(v.split(".")[1]) for v in text[c] if "." in v), default=0)
            tol = 0.5 * 10.0 ** -decimals + 1e-12 * np.abs(b[ok])
            assert np.all(np.abs(a[ok] - b[ok]) <= tol), c


def test_quickstart_tables_equal_the_files_the_run_writes(quickstart, tmp_path):
    sc = Scenario.load(quickstart)
    r = sc.run(seed=1, out=tmp_path)
    assert r.outcome == "completed"
    # The folder the command line writes.
    for f in ["flows.csv", "ports.csv", "buckets.csv", "report.html", "summary.json",
              "scenario.resolved.toml"]:
        assert (tmp_path / f).is_file(), f
    # Times in flows.csv are exact picoseconds printed as ns with 3 decimals: ps / 1000
    # and the parsed "x.yyy" are the same double.
    ns = [c for c in r.flows.columns if c.endswith("_ns")]
    assert len(ns) == 7
    assert_frame_matches_csv(r.flows, tmp_path / "flows.csv", exact=ns)
    assert_frame_matches_csv(r.ports, tmp_path / "ports.csv")
    assert_frame_matches_csv(r.table("buckets"), tmp_path / "buckets.csv")
    # Every flow of the quickstart (8 incast + 16 permutation + 3 small).
    assert len(r.flows) == 27
    assert r.flows["flow_id"].tolist() == list(range(27))
    # Times are float64 nanoseconds, counters integers.
    assert r.flows["fct_ns"].dtype == np.float64
    assert r.flows["size_bytes"].dtype.kind in "iu"
    # The report is the file's.
    assert r.report_html == (tmp_path / "report.html").read_text()
    # The summary row carries the summary's numbers.
    s = r.summary.iloc[0]
    assert s["outcome"] == "completed"
    # summary.json is the same summary (wall-clock figures included).
    assert r.summary_json == json.loads((tmp_path / "summary.json").read_text())
    assert s["flows_completed"] == 27
    # No collective jobs: an empty table.
    assert r.jobs.empty


@pytest.mark.skipif(
    not os.environ.get("FABRICSIM_CLI") and shutil.which("fabricsim") is None,
    reason="the fabricsim command is not on PATH (set FABRICSIM_CLI to compare)",
)
def test_out_folder_equals_the_command_lines(quickstart, tmp_path):
    cli = os.environ.get("FABRICSIM_CLI") or shutil.which("fabricsim")
    subprocess.run(
        [cli, "run", str(quickstart), "--seed", "3", "--out", str(tmp_path / "cli"),
         "--quiet"],
        check=True,
        capture_output=True,
    )
    Scenario.load(quickstart).run(seed=3, out=tmp_path / "py")
    for f in ["flows.csv", "ports.csv", "buckets.csv", "queues.csv", "rates.csv",
              "report.html"]:
        assert (tmp_path / "py" / f).read_bytes() == (tmp_path / "cli" / f).read_bytes(), f

    # The same tree; the header comment names the commit each was built from.
    def body(d):
        text = (tmp_path / d / "scenario.resolved.toml").read_text()
        return [line for line in text.splitlines() if not line.startswith("#")]

    assert body("py") == body("cli")


def test_set_uses_the_command_lines_override(quickstart):
    sc = Scenario.load(quickstart)
    base = sc.run(seed=1, report=False).summary
    r = sc.copy().set("cc.algorithm", "hpcc").run(seed=1, report=False)
    assert r.summary["cnps"][0] == 0  # HPCC sends no CNPs; DCQCN does
    assert base["cnps"][0] > 0
    # A string is read as after --set path=: "none" and a number in a string.
    sc2 = Scenario.load(quickstart).set("cc.algorithm", "none").set("seed", "7")
    assert sc2.seed == 7
    assert 'algorithm = "none"' in sc2.to_toml()


def test_errors_name_the_file_and_field(quickstart, tmp_path):
    with pytest.raises(ScenarioError) as e:
        Scenario.from_toml("name = 'x'\n[topology]\nkind = 'leaf_spine'\nleavez = 2\n",
                           file="mine.toml")
    assert e.value.file == "mine.toml"
    assert e.value.field == "topology.leavez" or "leavez" in (e.value.field or "") + str(e.value)
    assert "mine.toml" in str(e.value)
    # TOML syntax: line and column.
    with pytest.raises(ScenarioError) as e:
        Scenario.from_toml("name = \n", file="bad.toml")
    assert e.value.line == 1 and e.value.field is None
    # A NUL byte: binary content, at its line and column.
    nul = tmp_path / "nul.toml"
    nul.write_bytes(b"name = 'x'\nseed = \0\n")
    with pytest.raises(ScenarioError) as e:
        Scenario.load(nul)
    assert (e.value.line, e.value.column) == (2, 8) and "NUL" in str(e.value)
    sc = Scenario.load(quickstart)
    # Unknown field through set.
    with pytest.raises(ScenarioError) as e:
        sc.set("cc.algorithmx", "hpcc")
    assert e.value.field == "cc.algorithmx"
    assert e.value.file.endswith("quickstart.toml")
    # A value out of the allowed set, with what is allowed.
    with pytest.raises(ScenarioError) as e:
        sc.set("cc.algorithm", "hpccc")
    assert e.value.field == "cc.algorithm" and "hpcc" in e.value.message
    # A value out of range: found when the scenario is built (check, run).
    bad = sc.copy().set("topology.leaves", 0)
    with pytest.raises(ScenarioError) as e:
        bad.check()
    assert e.value.field == "topology.leaves"
    with pytest.raises(ScenarioError):
        bad.run()
    # Bad set paths.
    with pytest.raises(ScenarioError) as e:
        sc.set("workload[9].size", "1MB")
    assert e.value.field == "workload[9].size" and "out of range" in e.value.message
    with pytest.raises(ScenarioError) as e:
        sc.set("cc..algorithm", "none")
    assert e.value.field == "cc..algorithm"
    with pytest.raises(ScenarioError) as e:
        sc.set("cc.algorithm", object())
    assert e.value.field == "cc.algorithm"
    # A refused set leaves the scenario as it was.
    assert 'algorithm = "dcqcn"' in sc.to_toml()
    # A missing file.
    with pytest.raises(FileNotFoundError) as e:
        Scenario.load("/nonexistent/x.toml")
    assert e.value.filename == "/nonexistent/x.toml"


def test_budget_refusal_raises(quickstart):
    sc = Scenario.load(quickstart)
    fabricsim.set_max_memory("16MiB")
    try:
        with pytest.raises(ScenarioError) as e:
            sc.check()
        assert "memory" in str(e.value).lower() or "budget" in str(e.value).lower()
    finally:
        fabricsim.set_max_memory(None)
    assert sc.check()[0]["flows"] == 27
    with pytest.raises(ScenarioError):
        fabricsim.set_max_memory("1KB")
    # Above the memory the process can have at all: only with force=True.
    with pytest.raises(ScenarioError) as e:
        fabricsim.set_max_memory("100000000GiB")
    assert "force" in str(e.value)
    try:
        fabricsim.set_max_memory("100000000GiB", force=True)
    finally:
        fabricsim.set_max_memory(None)


def test_runs_are_deterministic(small_toml):
    sc = Scenario.from_toml(small_toml)
    a, b = sc.run(seed=5), sc.run(seed=5)
    pd.testing.assert_frame_equal(a.flows, b.flows)
    pd.testing.assert_frame_equal(a.ports, b.ports)
    pd.testing.assert_frame_equal(a.summary, b.summary)
    # A pickled copy runs to the same flows (what Ray workers do).
    import pickle

    c = pickle.loads(pickle.dumps(sc)).run(seed=5)
    pd.testing.assert_frame_equal(a.flows, c.flows)
    # Another seed gives other Poisson arrivals.
    d = sc.run(seed=6)
    assert not a.flows.equals(d.flows)


def test_threads_per_run_gives_the_same_tables(quickstart, small_toml):
    # The parallel engine: the quickstart's fat tree cut into 2 and 3 shards gives the
    # serial run's tables; a leaf-spine of 2 leaves cannot be cut into 3, and says so.
    sc = Scenario.load(quickstart)
    one = sc.run(seed=3, report=False)
    assert one.notes == []
    for n in (2, 3):
        r = sc.run(seed=3, report=False, threads_per_run=n)
        assert r.notes == [], r.notes
        for t in ("flows", "ports"):
            pd.testing.assert_frame_equal(one.table(t), r.table(t))
        # How the cut went, and the most a core per shard could give (a count).
        par = r.summary_json["speed"]["parallel"]
        assert par["shards"] == n and par["windows"] > 0, par
        assert 1.0 <= par["parallelism"] <= n, par
        assert par["critical_path_events"] <= r.summary_json["speed"]["events"], par
    assert "parallel" not in one.summary_json["speed"]
    small = Scenario.from_toml(small_toml).run(report=False, threads_per_run=3)
    assert any("running on 2" in n for n in small.notes), small.notes
    # check() says the same before running: 2 shards, a cable's delay ahead.
    (c,) = Scenario.from_toml(small_toml).check(threads_per_run=3)
    assert c["shards"] == 2 and c["lookahead_ns"] >= 1000.0, c
    assert any("running on 2" in n for n in c["notes"]), c
    assert "shards" not in Scenario.from_toml(small_toml).check()[0]
    with pytest.raises(ValueError, match="threads_per_run"):
        sc.run(threads_per_run=0)


def test_invariants_hold(quickstart):
    r = Scenario.load(quickstart).run(seed=2, report=False)
    f = r.flows
    done = f["fct_ns"].notna()
    assert done.all()
    assert (f["fct_ns"] >= f["ideal_fct_ns"]).all()
    assert (f["slowdown"] >= 1.0 - 1e-9).all()
    assert np.allclose(f["finish_ns"] - f["start_ns"], f["fct_ns"], rtol=0, atol=1e-6)
    assert (f["sender_finish_ns"] >= f["finish_ns"]).all()
    assert r.invariant_violations == []
    # Lossless fabric: no drops anywhere.
    assert r.ports["drops"].sum() == 0


def test_the_gil_is_released_while_simulating(quickstart):
    # Longer permutation flows: a run of a few tenths of a second.
    sc = Scenario.load(quickstart).set("workload[1].size", "32MB").set("max_time", "500ms")
    done = threading.Event()
    box = {}

    def work():
        t = time.perf_counter()
        box["r"] = sc.run(seed=1, report=False)
        box["wall"] = time.perf_counter() - t
        done.set()

    th = threading.Thread(target=work)
    ticks = 0
    th.start()
    while not done.is_set():
        ticks += 1
        time.sleep(0.001)
    th.join()
    assert box["r"].outcome == "completed"
    # Holding the GIL for the whole run would leave this loop a tick or two.
    expected = box["wall"] / 0.001
    assert box["wall"] > 0.05, "the run is too short to tell"
    assert ticks >= max(20, expected * 0.1), (ticks, box["wall"])


def test_local_sweep_2x2(small_toml):
    sc = Scenario.from_toml(small_toml)
    seen = []
    df = fabricsim.sweep(
        sc,
        grid={"cc.algorithm": ["dcqcn", "hpcc"]},
        seeds=[1, 2],
        threads=2,
        on_result=lambda r: seen.append(r.index),
    )
    assert sorted(seen) == [0, 1, 2, 3]
    assert list(df.columns[:3]) == ["cc.algorithm", "seed", "variant"]
    assert df[["cc.algorithm", "seed"]].values.tolist() == [
        ["dcqcn", 1], ["dcqcn", 2], ["hpcc", 1], ["hpcc", 2]
    ]
    # Each row is that run's summary.
    direct = sc.copy().set("cc.algorithm", "hpcc").run(seed=2, report=False).summary
    row = df.iloc[[3]].drop(columns=["cc.algorithm", "seed"]).reset_index(drop=True)
    pd.testing.assert_frame_equal(row, direct)
    assert (df["cnps"][df["cc.algorithm"] == "hpcc"] == 0).all()
    # Each run cut into 2 shards: the same rows.
    cut = fabricsim.sweep(sc, grid={"cc.algorithm": ["dcqcn", "hpcc"]}, seeds=[1, 2],
                          threads=2, threads_per_run=2)
    pd.testing.assert_frame_equal(df, cut)
    # The streaming form yields every run, with flows when asked.
    runs = list(fabricsim.sweep_iter(sc, {"cc.algorithm": ["dcqcn", "hpcc"]}, [1, 2],
                                     flows=True))
    assert sorted(r.index for r in runs) == [0, 1, 2, 3]
    assert all(len(r.flows) > 0 for r in runs)
    # A bad grid value is refused before anything runs.
    with pytest.raises(ScenarioError) as e:
        fabricsim.sweep(sc, grid={"cc.algorithm": ["dcqcn", "nope"]}, seeds=[1])
    assert e.value.field == "cc.algorithm"


def test_ray_sweep_2x2(small_toml):
    ray = pytest.importorskip("ray", reason="ray is not installed: the Ray backend is not tested")
    sc = Scenario.from_toml(small_toml)
    started_here = not ray.is_initialized()
    if started_here:
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        got = fabricsim.sweep(sc, grid={"cc.algorithm": ["dcqcn", "hpcc"]}, seeds=[1, 2],
                              backend="ray")
    finally:
        if started_here:
            ray.shutdown()
    want = fabricsim.sweep(sc, grid={"cc.algorithm": ["dcqcn", "hpcc"]}, seeds=[1, 2])
    assert len(got) == 4
    pd.testing.assert_frame_equal(got, want)
