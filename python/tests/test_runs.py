"""A scenario's own runs from Python: its [[variants]], [[sweep]] axes and seeds as the
command line expands them (Scenario.runs), one of them run by name (Scenario.run with
variant= and point=), all of them swept (fabricsim.sweep), against the command line's
run folders and tables; and where errors in a scenario's text are (line, column)."""

import os
import shutil
import subprocess

import pandas as pd
import pytest

import fabricsim
from fabricsim import Scenario, ScenarioError

from conftest import ROOT, SMALL

# The small scenario as a study: two variants x two incast sizes x two seeds (8 runs).
MULTI = SMALL.replace("seed = 1\n", "seed = 1\nseeds = 2\n", 1) + """
[[variants]]
name = "a"

[[variants]]
name = "b"
set = { "cc.algorithm" = "none" }

[[sweep]]
path = "workload[0].size"
label = "size"
values = ["256KB", "1MB"]
"""

NAMES = [
    f"{v}-size={s}-replicate={r}" for v in "ab" for s in ["256KB", "1MB"] for r in (1, 2)
]


def cli():
    return os.environ.get("FABRICSIM_CLI") or shutil.which("fabricsim")


needs_cli = pytest.mark.skipif(
    cli() is None,
    reason="the fabricsim command is not on PATH (set FABRICSIM_CLI to compare)",
)


def write(tmp_path, text, name="multi.toml"):
    p = tmp_path / name
    p.write_text(text)
    return p


def test_runs_are_the_command_lines_expansion():
    sc = Scenario.from_toml(MULTI)
    runs = sc.runs
    assert [r.name for r in runs] == NAMES
    assert [r.folder for r in runs] == NAMES  # nothing in these names to make safe
    assert [r.variant for r in runs] == ["a"] * 4 + ["b"] * 4
    assert runs[5].coords == {"size": "256KB", "replicate": "2"}
    # Replicates run with seeds of their own, derived from the scenario's; a point's
    # two variants share them.
    assert runs[0].seed != runs[1].seed
    assert [r.seed for r in runs[:4]] == [r.seed for r in runs[4:]]
    # A plain scenario is one run, named after it, written into --out itself.
    (one,) = Scenario.from_toml(SMALL).runs
    assert (one.name, one.folder, one.variant, one.coords) == ("small", None, None, {})
    assert one.seed == 1


def test_every_shipped_scenario_expands():
    files = sorted((ROOT / "scenarios").glob("*.toml"))
    assert len(files) >= 30
    several = 0
    for f in files:
        runs = Scenario.load(f).runs
        names = [r.name for r in runs]
        assert names and len(set(names)) == len(names), f
        several += len(runs) > 1
    assert several >= 28


def test_run_of_a_variant_is_that_run(tmp_path):
    sc = Scenario.from_toml(MULTI)
    run = sc.select(variant="b", point={"size": "1MB", "replicate": 2})
    assert run.name == "b-size=1MB-replicate=2"
    r = sc.run(variant="b", point={"size": "1MB", "replicate": 2}, report=False)
    assert r.seed == run.seed
    # The same run written out by hand: the variant's and the point's settings on the
    # plain scenario, with the replicate's seed.
    plain = Scenario.from_toml(SMALL).set("cc.algorithm", "none").set("workload[0].size", "1MB")
    p = plain.run(seed=run.seed, report=False)
    pd.testing.assert_frame_equal(r.flows, p.flows)
    assert r.summary["cnps"][0] == 0  # cc none
    # Another replicate is another run.
    r1 = sc.run(variant="b", point={"size": "1MB", "replicate": 1}, report=False)
    assert not r1.flows.equals(r.flows)
    # The summary row carries the run's name and coordinates, as comparison.csv does.
    s = r.summary.iloc[0]
    assert s["variant"] == run.name and s["size"] == "1MB" and str(s["replicate"]) == "2"


@needs_cli
def test_run_of_a_variant_equals_the_command_lines(tmp_path):
    f = write(tmp_path, MULTI)
    subprocess.run([cli(), "run", str(f), "--out", str(tmp_path / "cli"), "--quiet"],
                   check=True, capture_output=True)
    # Run folders are named as Scenario.runs says.
    dirs = sorted(p.name for p in (tmp_path / "cli").iterdir() if p.is_dir())
    assert dirs == sorted(r.folder for r in Scenario.load(f).runs)
    sc = Scenario.load(f)
    for variant, point in [("b", {"size": "1MB", "replicate": 2}),
                           ("a", {"size": "256KB", "replicate": 1})]:
        run = sc.select(variant, point)
        out = tmp_path / "py" / run.folder
        r = sc.run(variant=variant, point=point, out=out)
        for t in ["flows.csv", "ports.csv", "buckets.csv", "report.html"]:
            assert (out / t).read_bytes() == (tmp_path / "cli" / run.folder / t).read_bytes(), t
        cli_flows = pd.read_csv(tmp_path / "cli" / run.folder / "flows.csv")
        assert r.flows["flow_id"].tolist() == cli_flows["flow_id"].tolist()
        assert r.flows["fct_ns"].tolist() == pytest.approx(cli_flows["fct_ns"].tolist())
    # The sweep's labels are the command line's: comparison.csv's run names and axis
    # columns, row for row.
    df = fabricsim.sweep(sc, threads=2)
    comp = pd.read_csv(tmp_path / "cli" / "comparison.csv", dtype=str)
    assert df["variant"].tolist() == comp["variant"].tolist() == NAMES
    for label in ["size", "replicate"]:
        assert df[label].astype(str).tolist() == comp[label].tolist(), label
    assert df["flows_completed"].tolist() == comp["flows_completed"].astype(int).tolist()


def test_picking_a_run_names_what_is_allowed():
    sc = Scenario.from_toml(MULTI, file="multi.toml")
    with pytest.raises(ScenarioError) as e:
        sc.run(variant="c")
    assert e.value.field == "variant"
    assert "no variant `c`" in str(e.value) and "`a`, `b`" in str(e.value)
    assert str(e.value).startswith("multi.toml: field `variant`: ")
    with pytest.raises(ScenarioError) as e:
        sc.run(variant="a", point={"sizes": "1MB"})
    assert e.value.field == "point.sizes" and "`size`, `replicate`" in str(e.value)
    with pytest.raises(ScenarioError) as e:
        sc.run(variant="a", point={"size": "2MB", "replicate": 1})
    assert e.value.field == "point.size" and "`256KB`, `1MB`" in str(e.value)
    # Several runs left: what to give.
    with pytest.raises(ScenarioError) as e:
        sc.run()
    assert "8 of the scenario's 8 runs" in str(e.value)
    assert "`variant`, `size`, `replicate`" in str(e.value)
    with pytest.raises(ScenarioError) as e:
        sc.run(variant="a", point={"size": "1MB"})
    assert e.value.field == "point" and "`replicate`" in str(e.value)
    # A plain scenario has no variants to pick.
    with pytest.raises(ScenarioError) as e:
        Scenario.from_toml(SMALL).run(variant="a")
    assert "no [[variants]]" in str(e.value)
    # The library's own refusal of a name it does not have lists the runs.
    with pytest.raises(ScenarioError) as e:
        sc._run_named("a-size=2MB", None, None, [], False, 1)
    assert "no run named `a-size=2MB`" in str(e.value) and NAMES[0] in str(e.value)


def test_sweep_runs_the_files_own_runs_and_the_grid_on_top():
    sc = Scenario.from_toml(MULTI.replace("seeds = 2\n", ""))
    names = [r.name for r in sc.runs]
    assert names == ["a-size=256KB", "a-size=1MB", "b-size=256KB", "b-size=1MB"]
    df = fabricsim.sweep(sc, threads=2)
    assert len(df) == 4
    assert list(df.columns[:4]) == ["seed", "variant", "variant_name", "size"]
    assert df["variant"].tolist() == names
    assert df["variant_name"].tolist() == ["a", "a", "b", "b"]
    assert df["size"].tolist() == ["256KB", "1MB", "256KB", "1MB"]
    # Each row is that run's summary.
    one = sc.run(variant="b", point={"size": "256KB"}, report=False).summary
    row = df.iloc[[2]].drop(columns=["seed", "variant_name"]).reset_index(drop=True)
    pd.testing.assert_frame_equal(row, one)
    # A grid adds axes on top of the file's: 2 x 4 runs; flows keyed the same way.
    g = fabricsim.sweep(sc, grid={"topology.link_delay": ["1us", "2us"]}, threads=2,
                        flows=True)
    assert len(g) == 8
    assert list(g.columns[:5]) == ["topology.link_delay", "seed", "variant", "variant_name",
                                   "size"]
    assert g["topology.link_delay"].tolist() == ["1us"] * 4 + ["2us"] * 4
    assert g["variant"].tolist() == names * 2
    pd.testing.assert_frame_equal(g.iloc[:4].drop(columns=["topology.link_delay"])
                                  .reset_index(drop=True), df)
    fl = g.attrs["flows"]
    assert list(fl.columns[:5]) == ["topology.link_delay", "seed", "variant", "variant_name",
                                    "size"]
    assert set(fl["variant"]) == set(names)
    # Seeds given to the sweep stand for --seed.
    s = fabricsim.sweep(sc, seeds=[1, 2], threads=2)
    assert s[["variant", "seed"]].values.tolist()[:2] == [["a-size=256KB", 1],
                                                          ["a-size=256KB", 2]]


def test_errors_in_the_text_have_line_and_column(tmp_path):
    text = SMALL.replace("leaves = 2\n", "leaves = 2\nleavez = 3\n")
    line = text.splitlines().index("leavez = 3") + 1
    with pytest.raises(ScenarioError) as e:
        Scenario.from_toml(text, file="mine.toml")
    assert (e.value.line, e.value.column) == (line, 1)
    assert str(e.value).startswith(f"mine.toml:{line}:1: ")
    assert "leavez" in str(e.value)
    # A value of the wrong type in the second [[workload]]: at its key.
    text = SMALL.replace("load = 0.3", "load = 'high'")
    line = text.splitlines().index("load = 'high'") + 1
    p = write(tmp_path, text, "typed.toml")
    with pytest.raises(ScenarioError) as e:
        Scenario.load(p)
    assert e.value.field == "workload[1].load"
    assert (e.value.line, e.value.column) == (line, 1)
    assert f"typed.toml:{line}:1: field `workload[1].load`" in str(e.value)
    # Inside an inline table, at the column of its key.
    text = MULTI.replace('set = { "cc.algorithm" = "none" }', 'set = 3')
    line = text.splitlines().index("set = 3") + 1
    with pytest.raises(ScenarioError) as e:
        Scenario.from_toml(text)
    assert e.value.line == line
    # A missing file is a FileNotFoundError, not a scenario error.
    with pytest.raises(FileNotFoundError) as e:
        Scenario.load(tmp_path / "nope.toml")
    assert e.value.filename == str(tmp_path / "nope.toml")


def test_ray_sweep_of_the_files_runs():
    ray = pytest.importorskip("ray", reason="ray is not installed: the Ray backend is not tested")
    sc = Scenario.from_toml(MULTI.replace("seeds = 2\n", ""))
    started_here = not ray.is_initialized()
    if started_here:
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        got = fabricsim.sweep(sc, backend="ray", flows=True)
    finally:
        if started_here:
            ray.shutdown()
    want = fabricsim.sweep(sc, threads=2, flows=True)
    assert got["variant"].tolist() == [r.name for r in sc.runs]
    pd.testing.assert_frame_equal(got, want)
    pd.testing.assert_frame_equal(got.attrs["flows"], want.attrs["flows"])
