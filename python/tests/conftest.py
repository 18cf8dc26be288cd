import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]


@pytest.fixture
def root():
    return ROOT


@pytest.fixture
def quickstart():
    return ROOT / "scenarios" / "quickstart.toml"


# A small scenario (a fraction of a second a run): 2 leaves x 2 servers, an incast and a
# few flows, so sweeps of several runs stay short.
SMALL = """
name = "small"
seed = 1
max_time = "20ms"

[topology]
kind = "leaf_spine"
leaves = 2
spines = 2
servers_per_leaf = 2
host_rate = "100Gbps"
uplink_rate = "100Gbps"
link_delay = "1us"

[cc]
algorithm = "dcqcn"

[[workload]]
kind = "incast"
senders = [1, 2, 3]
receiver = 0
size = "256KB"

[[workload]]
kind = "poisson"
load = 0.3
cdf = "websearch"
duration = "500us"
"""


@pytest.fixture
def small_toml():
    return SMALL
