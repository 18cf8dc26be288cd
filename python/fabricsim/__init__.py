"""fabricsim from Python: load, patch, check and run scenarios; tables as pandas
DataFrames (built from Arrow); sweeps on local threads or Ray.

    import fabricsim
    sc = fabricsim.Scenario.load("scenarios/quickstart.toml")
    r = sc.set("cc.algorithm", "hpcc").run(seed=1)
    r.flows  # flows.csv as a DataFrame

See docs/python.md.
"""

from ._errors import ScenarioError
from ._native import __version__, set_max_memory
from ._scenario import Result, Run, Scenario
from ._sweep import SweepRun, sweep, sweep_iter
from ._tables import to_arrow

__all__ = [
    "Result",
    "Run",
    "Scenario",
    "ScenarioError",
    "SweepRun",
    "__version__",
    "set_max_memory",
    "sweep",
    "sweep_iter",
    "to_arrow",
]
