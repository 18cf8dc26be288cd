"""Scenario and Result: a scenario file loaded, patched, checked and run from Python."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import Any, Dict, List, Mapping, Optional, Sequence, Union

from . import _native
from ._errors import ScenarioError
from ._tables import to_pandas

PathLike = Union[str, "os.PathLike[str]"]


@dataclass(frozen=True)
class Run:
    """One run a scenario stands for, as the command line expands it (``fabricsim run``
    runs every one): a variant of the file's ``[[variants]]``, a point of its
    ``[[sweep]]`` axes, a replicate of its ``seeds``.

    ``name``: the run's name in the command line's tables and messages (the variant,
    then ``label=value`` per axis); ``folder``: its results folder under ``--out``
    (``None`` for a scenario of one run, which writes into ``--out`` itself);
    ``variant``: its variant's name (``None`` without ``[[variants]]``); ``coords``:
    each axis label with the value's text as in the name, then ``replicate`` (1, 2, ...)
    when ``seeds`` > 1; ``seed``: the seed it runs with.
    """

    name: str
    folder: Optional[str]
    variant: Optional[str]
    coords: Dict[str, str]
    seed: int


class Scenario:
    """A scenario (the TOML file the command line runs), with overrides applied.

    Make one with :meth:`load` or :meth:`from_toml`; :meth:`set` patches a field as
    ``fabricsim run --set path=value`` does; :meth:`check` is ``fabricsim check``;
    :meth:`run` runs it. Every bad input raises :class:`fabricsim.ScenarioError`.
    """

    __slots__ = ("_native",)

    def __init__(self, native: "_native.NativeScenario"):
        self._native = native

    @classmethod
    def load(cls, path: PathLike) -> "Scenario":
        """Loads a scenario file; relative data files (flow lists, CDFs) resolve
        against its folder."""
        return cls(_native.NativeScenario.load(os.fspath(path)))

    @classmethod
    def from_toml(
        cls, text: str, *, file: str = "<string>", base_dir: PathLike = "."
    ) -> "Scenario":
        """A scenario from TOML text. ``file`` names it in error messages;
        ``base_dir`` is where relative data files resolve."""
        return cls(_native.NativeScenario.from_toml(text, file, os.fspath(base_dir)))

    def set(self, path: str, value: Any) -> "Scenario":
        """Sets a field, as ``--set path=value``: ``path`` is dotted with ``[i]`` for
        array elements (``cc.algorithm``, ``workload[0].size``). A ``str`` value is
        read as after ``--set path=`` (TOML if it parses: ``"4"`` is the integer 4,
        ``"100Gbps"`` a string); ``int``, ``float``, ``bool``, ``list`` and ``dict``
        are taken as they are. The whole scenario is checked again; a refused value
        raises :class:`ScenarioError` and leaves the scenario unchanged. Returns
        ``self``, so calls chain."""
        self._native.set(path, value)
        return self

    def copy(self) -> "Scenario":
        """An independent copy (for sweeps: each point patches its own)."""
        return Scenario._from_state(self.__reduce__()[1][0])

    def to_toml(self) -> str:
        """The scenario as TOML with the overrides applied."""
        return self._native.to_toml()

    @property
    def name(self) -> Optional[str]:
        return self._native.name

    @property
    def file(self) -> str:
        """The file it came from (or the name given to :meth:`from_toml`)."""
        return self._native.file

    @property
    def base_dir(self) -> str:
        return self._native.base_dir

    @property
    def seed(self) -> int:
        """The scenario's own seed (``run(seed=...)`` overrides it)."""
        return self._native.seed

    @property
    def runs(self) -> List[Run]:
        """Every run the scenario stands for (its ``[[variants]]`` x ``[[sweep]]``
        points x ``seeds`` replicates; one run for a plain scenario), in the command
        line's order, expanded by the simulator's own code (the same names, folders
        and seeds as ``fabricsim run``)."""
        return [
            Run(d["name"], d["folder"], d["variant"], dict(d["coords"]), d["seed"])
            for d in self._native.runs()
        ]

    def _error(self, field: str, message: str) -> ScenarioError:
        return ScenarioError(f"{self.file}: field `{field}`: {message}", self.file, field, message)

    def select(self, variant: Optional[str] = None, point: Optional[Mapping[str, Any]] = None) -> Run:
        """The run that ``variant`` (a name of the file's ``[[variants]]``) and
        ``point`` (sweep axis label -> value, and ``replicate`` when ``seeds`` > 1)
        pick out of :attr:`runs`. Values match as after ``--set path=`` (``4``,
        ``"4"`` and ``"1MiB"`` all match as the run name writes them). Raises
        :class:`ScenarioError` naming what is allowed when nothing matches, or when
        several runs do (naming the axes left to give)."""
        runs = self.runs
        cands = runs
        if variant is not None:
            names = list(dict.fromkeys(r.variant for r in runs if r.variant is not None))
            if not names:
                raise self._error(
                    "variant", f"`{variant}`: the scenario has no [[variants]]"
                )
            if variant not in names:
                raise self._error(
                    "variant",
                    f"no variant `{variant}`: allowed: " + ", ".join(f"`{n}`" for n in names),
                )
            cands = [r for r in cands if r.variant == variant]
        axes = list(runs[0].coords) if runs else []
        for label, value in dict(point or {}).items():
            if label not in axes:
                raise self._error(
                    f"point.{label}",
                    f"no sweep axis `{label}`: "
                    + (
                        "the axes are " + ", ".join(f"`{a}`" for a in axes)
                        if axes
                        else "the scenario has no [[sweep]] axes nor seeds > 1"
                    ),
                )
            texts = {_native.coordinate_text(value)}
            if isinstance(value, str):
                texts.add(value)
            allowed = list(dict.fromkeys(r.coords[label] for r in runs))
            if not texts.intersection(allowed):
                raise self._error(
                    f"point.{label}",
                    f"{value!r} is not a value of the axis: allowed: "
                    + ", ".join(f"`{v}`" for v in allowed),
                )
            cands = [r for r in cands if r.coords[label] in texts]
        if len(cands) == 1:
            return cands[0]
        left = [a for a in axes if a not in (point or {})]
        if variant is None and any(r.variant is not None for r in runs):
            left.insert(0, "variant")
        raise self._error(
            "point" if variant is not None or point else "variant",
            f"{len(cands)} of the scenario's {len(runs)} runs match: give "
            + ", ".join(f"`{a}`" for a in left)
            + " to pick one (Scenario.runs lists them; fabricsim.sweep runs them all)",
        )

    def check(self, threads_per_run: Optional[int] = None) -> List[Dict[str, Any]]:
        """What ``fabricsim check`` does: plans every run and builds each (semantic
        checks and the memory budget), raising :class:`ScenarioError` on the first
        problem. Returns one dict per run: ``run``, ``hosts``, ``switches``,
        ``links``, ``flows``, ``memory_estimate_bytes``; with ``threads_per_run``, also
        how the run would be cut for it (``check --threads-per-run``): ``shards``,
        ``threads``, ``lookahead_ns`` and ``window_span_ns`` (``None`` on one shard),
        ``notes`` (why fewer shards than asked for)."""
        if threads_per_run is not None and threads_per_run < 1:
            raise ValueError(f"threads_per_run={threads_per_run}: allowed: 1 or more")
        return self._native.check(threads_per_run)

    def run(
        self,
        seed: Optional[int] = None,
        out: Optional[PathLike] = None,
        *,
        variant: Optional[str] = None,
        point: Optional[Mapping[str, Any]] = None,
        tables: Optional[Sequence[str]] = None,
        report: bool = True,
        threads_per_run: int = 1,
    ) -> "Result":
        """Runs one run of the scenario and returns its :class:`Result`: the
        scenario itself, or for a scenario of several runs (``[[variants]]``,
        ``[[sweep]]``, ``seeds`` > 1) the one ``variant`` and ``point`` pick
        (:meth:`select`; :func:`fabricsim.sweep` runs them all).

        ``seed`` overrides the scenario's seed, as ``--seed`` (a replicate's seed
        derives from it). With ``out``, the results folder is written exactly as
        ``fabricsim run --out`` writes it (for a run of several, as the command line
        writes that run's folder). ``tables`` limits the
        tables kept in memory (file names such as ``"flows.csv"``; default: all),
        ``report=False`` skips rendering ``report.html``. ``threads_per_run`` cuts the
        run into that many shards of the parallel engine, run on at most the machine's
        cores (``--threads-per-run``): the results are the same whatever it is, and
        :attr:`Result.notes` says where a run could not be cut as asked. The GIL is
        released while the simulation runs; Ctrl-C stops it (``KeyboardInterrupt``)."""
        if threads_per_run < 1:
            raise ValueError(f"threads_per_run={threads_per_run}: allowed: 1 or more")
        name = None
        if variant is not None or point or len(self._native.runs()) > 1:
            name = self.select(variant, point).name
        return self._run_named(name, seed, out, tables, report, threads_per_run)

    def _run_named(self, name, seed, out, tables, report, threads_per_run) -> "Result":
        native = self._native.run(
            seed,
            None if out is None else os.fspath(out),
            None if tables is None else [_table_file(t) for t in tables],
            report,
            threads_per_run,
            name,
        )
        return Result(native, native.seed)

    def __reduce__(self):
        # Picklable (Ray ships scenarios to workers): the TOML text with the overrides
        # applied, the file name for messages and the folder data files resolve
        # against (which must exist where it is unpickled).
        return (Scenario._from_state, ((self.to_toml(), self.file, self.base_dir),))

    @staticmethod
    def _from_state(state) -> "Scenario":
        text, file, base_dir = state
        return Scenario.from_toml(text, file=file, base_dir=base_dir)

    def __repr__(self) -> str:
        return f"Scenario(name={self.name!r}, file={self.file!r})"


def _table_file(name: str) -> str:
    return name if name.endswith(".csv") else name + ".csv"


class Result:
    """A finished run. Tables are pandas DataFrames built from Arrow (columns exactly
    the CSV headers; times ``*_ns`` as float64 nanoseconds; empty cells as NaN/None).
    """

    def __init__(self, native: "_native.NativeResult", seed: int):
        self._native = native
        self._cache: Dict[str, Any] = {}
        self.seed = seed

    def table(self, name: str):
        """Any per-run table by name (``"flows"``, ``"buckets.csv"``, ...) as a
        DataFrame; an empty DataFrame when the run does not have it (``jobs`` without
        collective jobs) or it was not kept (``run(tables=...)``)."""
        file = _table_file(name)
        if file not in self._cache:
            t = self._native.table(file)
            self._cache[file] = to_pandas(t) if t is not None else _empty()
        return self._cache[file]

    @property
    def table_names(self) -> List[str]:
        """The per-run tables this result holds (the CSV files a run folder has)."""
        return self._native.table_names()

    @property
    def flows(self):
        """``flows.csv``: one row per flow."""
        return self.table("flows.csv")

    @property
    def ports(self):
        """``ports.csv``: one row per egress port."""
        return self.table("ports.csv")

    @property
    def jobs(self):
        """``jobs.csv``: one row per collective job iteration (empty without jobs)."""
        return self.table("jobs.csv")

    @property
    def summary(self):
        """The run's headline figures as one row: the run's row of
        ``comparison.csv``."""
        if "summary" not in self._cache:
            self._cache["summary"] = to_pandas(self._native.summary())
        return self._cache["summary"]

    @property
    def summary_json(self) -> Dict[str, Any]:
        """``summary.json`` (every summary section, wall-clock figures included)."""
        return json.loads(self._native.summary_json)

    @property
    def report_html(self) -> Optional[str]:
        """``report.html`` as text (``None`` with ``run(report=False)``)."""
        return self._native.report_html

    @property
    def outcome(self) -> str:
        """How the run ended: ``completed``, ``stalled``, ``max_time``, ..."""
        return self._native.outcome

    @property
    def invariant_violations(self) -> List[str]:
        """The simulator's broken invariants (conservation, FCT >= ideal, ...); not
        empty only on a bug, which the command line reports with exit status 3."""
        return self._native.invariant_violations

    @property
    def notes(self) -> List[str]:
        """What the run said about how it ran, as the command line prints after its
        table: fewer shards than ``threads_per_run`` asked for, and why."""
        return self._native.notes

    def __repr__(self) -> str:
        return f"Result(outcome={self.outcome!r}, seed={self.seed}, tables={self.table_names})"


def _empty():
    import pandas as pd

    return pd.DataFrame()
