"""Sweeps from Python: every run of a scenario (its own variants, sweep axes and seeds,
as the command line expands them), times a grid of overrides x seeds, run on local
threads or as Ray tasks, streamed as runs finish, gathered into one DataFrame."""

from __future__ import annotations

import itertools
import os
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Iterator, List, Mapping, Optional, Sequence

from . import _native
from ._scenario import Scenario

SEED = "seed"


@dataclass
class SweepRun:
    """One finished run of a sweep.

    ``coords``: its grid coordinates (each grid key with its value, then ``seed``);
    ``run``: the name of the scenario's own run it is (:attr:`Scenario.runs`: the
    variant, then ``label=value`` per axis of the file's ``[[sweep]]``), ``variant``
    that run's variant (``None`` without ``[[variants]]``) and ``point`` its
    coordinates (axis label -> value text, then ``replicate`` when ``seeds`` > 1);
    ``summary``: its headline figures, one row (the run's ``comparison.csv`` row);
    ``flows``: its ``flows.csv`` as a DataFrame when the sweep kept flows
    (``flows=True``), else ``None``; ``index``: its position in the sweep's order.
    """

    index: int
    coords: Dict[str, Any]
    summary: Any
    flows: Any = None
    outcome: str = ""
    invariant_violations: List[str] = field(default_factory=list)
    run: str = ""
    variant: Optional[str] = None
    point: Dict[str, str] = field(default_factory=dict)

    def keys(self) -> Dict[str, Any]:
        """What tells this run from the others: the grid coordinates and ``seed``,
        then the scenario's own labels: ``variant`` (the run's name, as the first
        column of ``comparison.csv``), ``variant_name`` (with ``[[variants]]``) and
        each axis label."""
        k = dict(self.coords)
        k["variant"] = self.run
        if self.variant is not None:
            k["variant_name"] = self.variant
        k.update(self.point)
        return k

    def row(self):
        """The sweep DataFrame's row: the grid coordinates and ``seed``, then the
        summary's columns (the run's name as ``variant``, each axis of the file's
        sweep, the figures), with ``variant_name`` after ``variant`` when the scenario
        has ``[[variants]]``."""
        s = self.summary.copy()
        for i, (k, v) in enumerate(self.coords.items()):
            s.insert(i, k, [v])
        if self.variant is not None and "variant_name" not in s.columns:
            s.insert(list(s.columns).index("variant") + 1, "variant_name", [self.variant])
        return s


def _points(grid: Optional[Mapping[str, Sequence[Any]]], seeds) -> List[Dict[str, Any]]:
    grid = dict(grid or {})
    if SEED in grid:
        raise ValueError("`seed` is a sweep coordinate of its own: pass seeds=[...]")
    keys = list(grid)
    for k in keys:
        if isinstance(grid[k], (str, bytes)) or not hasattr(grid[k], "__iter__"):
            raise TypeError(f"grid[{k!r}] must be a list of values")
    out = []
    for values in itertools.product(*(list(grid[k]) for k in keys)):
        for s in seeds:
            c = dict(zip(keys, values))
            c[SEED] = int(s)
            out.append(c)
    return out


def _patched(scenario: Scenario, coords: Mapping[str, Any]) -> Scenario:
    sc = scenario.copy()
    for k, v in coords.items():
        if k != SEED:
            sc.set(k, v)
    return sc


@dataclass
class _Task:
    """One run of a sweep, before it runs: its place, grid coordinates, and which of
    the patched scenario's own runs it is."""

    index: int
    coords: Dict[str, Any]
    run: Optional[str]
    variant: Optional[str]
    point: Dict[str, str]


def _run_point(scenario: Scenario, task: _Task, flows: bool, threads_per_run: int = 1) -> SweepRun:
    sc = _patched(scenario, task.coords)
    r = sc._run_named(
        task.run,
        task.coords[SEED],
        None,
        ["flows.csv"] if flows else [],
        False,
        threads_per_run,
    )
    return SweepRun(
        index=task.index,
        coords=dict(task.coords),
        summary=r.summary,
        flows=r.flows if flows else None,
        outcome=r.outcome,
        invariant_violations=r.invariant_violations,
        run=r.summary["variant"][0],
        variant=task.variant,
        point=dict(task.point),
    )


def _ray_task(state, task: _Task, flows: bool, threads_per_run: int) -> SweepRun:
    # Runs in a Ray worker: the scenario travels as TOML text (see
    # `Scenario.__reduce__`), the result as a small picklable SweepRun.
    return _run_point(Scenario._from_state(state), task, flows, threads_per_run)


def sweep_iter(
    scenario: Scenario,
    grid: Optional[Mapping[str, Sequence[Any]]] = None,
    seeds: Optional[Sequence[int]] = None,
    *,
    backend: str = "local",
    threads: Optional[int] = None,
    flows: bool = False,
    threads_per_run: int = 1,
) -> Iterator[SweepRun]:
    """Runs every run of the scenario (:attr:`Scenario.runs`: its own
    ``[[variants]]``, ``[[sweep]]`` axes and ``seeds`` replicates, as ``fabricsim
    run`` does) at every point of ``grid`` (a dict of field path -> list of values, as
    for :meth:`Scenario.set`, applied on top of the file's settings) x ``seeds`` (each
    as ``--seed``: replicates derive from it), and yields a :class:`SweepRun` as each
    run finishes (in completion order; ``SweepRun.index`` is its place in the order
    grid point, then the scenario's run, then seed).

    Every point is patched and checked (as ``fabricsim check``) before any runs, so a
    bad value raises :class:`ScenarioError` at once. ``backend="local"``: ``threads``
    Python threads (default: one per core, fewer when the runs would not fit the
    memory budget together, as on the command line) each running one simulation at a
    time with the GIL released. ``backend="ray"``: one Ray task per run; Ray is started
    locally (``ray.init()``) unless already initialised, so connect to a cluster first
    with ``ray.init(address=...)``. ``flows=True`` keeps each run's ``flows.csv``.
    ``threads_per_run``: each run cut into that many shards (:meth:`Scenario.run`);
    the local backend then runs fewer at once, as the command line shares the cores.
    """
    if seeds is None:
        seeds = [scenario.seed]
    grid_points = _points(grid, [0])
    # Input errors before any simulated time passes, as the command line does: every
    # grid point's scenario is checked with all its runs.
    largest = 0
    tasks: List[_Task] = []
    for g in grid_points:
        g.pop(SEED)
        sc = _patched(scenario, g)
        for run in sc.check():
            largest = max(largest, run["memory_estimate_bytes"])
        runs = sc.runs
        for r in runs:
            for s in seeds:
                c = dict(g)
                c[SEED] = int(s)
                tasks.append(
                    _Task(len(tasks), c, r.name if len(runs) > 1 else None, r.variant, r.coords)
                )
    points = tasks
    if backend == "local":
        threads = threads or os.cpu_count() or 1
        # As the command line: only as many runs at once as fit the memory budget
        # together (each was checked alone when it was built).
        limit, _source = _native.memory_limit()
        threads = max(1, min(threads, limit // max(largest, 1)))
        if threads_per_run > 1:
            threads = max(1, threads // threads_per_run)
        yield from _local(scenario, points, threads, flows, threads_per_run)
    elif backend == "ray":
        yield from _ray(scenario, points, flows, threads_per_run)
    else:
        raise ValueError(f"backend={backend!r}: allowed: 'local', 'ray'")


def _local(scenario, points, threads, flows, threads_per_run) -> Iterator[SweepRun]:
    with ThreadPoolExecutor(max_workers=max(1, min(threads, len(points) or 1))) as pool:
        pending = {pool.submit(_run_point, scenario, t, flows, threads_per_run) for t in points}
        try:
            while pending:
                done, pending = wait(pending, return_when=FIRST_COMPLETED)
                for f in done:
                    yield f.result()
        finally:
            # A consumer that stops early (or an error) cancels the runs not started.
            for f in pending:
                f.cancel()


def _ray(scenario, points, flows, threads_per_run) -> Iterator[SweepRun]:
    try:
        import ray
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise ImportError(
            "backend='ray' needs Ray: pip install 'ray>=2.9' (or fabricsim[ray])"
        ) from e
    if not ray.is_initialized():
        ray.init()
    task = ray.remote(_ray_task)
    state = scenario.__reduce__()[1][0]
    state_ref = ray.put(state)
    pending = [task.remote(state_ref, t, flows, threads_per_run) for t in points]
    try:
        while pending:
            done, pending = ray.wait(pending, num_returns=1)
            for ref in done:
                yield ray.get(ref)
    finally:
        for ref in pending:
            ray.cancel(ref)


def sweep(
    scenario: Scenario,
    grid: Optional[Mapping[str, Sequence[Any]]] = None,
    seeds: Optional[Sequence[int]] = None,
    *,
    backend: str = "local",
    threads: Optional[int] = None,
    on_result: Optional[Callable[[SweepRun], None]] = None,
    flows: bool = False,
    threads_per_run: int = 1,
):
    """:func:`sweep_iter`, gathered: one DataFrame with one row per run, in the
    sweep's order (grid point, then the scenario's own runs in the command line's
    order, then seed): the grid coordinates (grid keys, then ``seed``) then the run's
    summary (the columns of ``comparison.csv``: the run's name as ``variant``, one
    column per axis of the file's ``[[sweep]]`` and ``replicate`` with ``seeds`` > 1,
    then the figures; ``variant_name`` after ``variant`` when the file has
    ``[[variants]]``). ``fabricsim.sweep(Scenario.load(f))`` runs what ``fabricsim run
    f`` runs. ``on_result(run)`` is called with each :class:`SweepRun` as it
    finishes. With ``flows=True`` the DataFrame has a ``.attrs["flows"]``: every run's
    flows with its keys (:meth:`SweepRun.keys`) as the first columns."""
    import pandas as pd

    runs: List[SweepRun] = []
    for r in sweep_iter(
        scenario,
        grid,
        seeds,
        backend=backend,
        threads=threads,
        flows=flows,
        threads_per_run=threads_per_run,
    ):
        if on_result is not None:
            on_result(r)
        runs.append(r)
    runs.sort(key=lambda r: r.index)
    if not runs:
        return pd.DataFrame()
    df = pd.concat([r.row() for r in runs], ignore_index=True)
    if flows:
        parts = []
        for r in runs:
            f = r.flows.copy()
            for i, (k, v) in enumerate(r.keys().items()):
                f.insert(i, k, v)
            parts.append(f)
        df.attrs["flows"] = pd.concat(parts, ignore_index=True)
    return df
