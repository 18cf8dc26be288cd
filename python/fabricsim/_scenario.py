"""Scenario and Result: a scenario file loaded, patched, checked and run from Python."""

from __future__ import annotations

import json
import os
from typing import Any, Dict, List, Optional, Sequence, Union

from . import _native
from ._tables import to_pandas

PathLike = Union[str, "os.PathLike[str]"]


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
        tables: Optional[Sequence[str]] = None,
        report: bool = True,
        threads_per_run: int = 1,
    ) -> "Result":
        """Runs the scenario (one run: a scenario with variants, sweeps or ``seeds``
        > 1 goes through :func:`fabricsim.sweep` or the command line) and returns its
        :class:`Result`.

        ``seed`` overrides the scenario's seed. With ``out``, the results folder is
        written exactly as ``fabricsim run --out`` writes it. ``tables`` limits the
        tables kept in memory (file names such as ``"flows.csv"``; default: all),
        ``report=False`` skips rendering ``report.html``. ``threads_per_run`` cuts the
        run into that many shards of the parallel engine, run on at most the machine's
        cores (``--threads-per-run``): the results are the same whatever it is, and
        :attr:`Result.notes` says where a run could not be cut as asked. The GIL is
        released while the simulation runs; Ctrl-C stops it (``KeyboardInterrupt``)."""
        if threads_per_run < 1:
            raise ValueError(f"threads_per_run={threads_per_run}: allowed: 1 or more")
        native = self._native.run(
            seed,
            None if out is None else os.fspath(out),
            None if tables is None else [_table_file(t) for t in tables],
            report,
            threads_per_run,
        )
        return Result(native, seed if seed is not None else self.seed)

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
