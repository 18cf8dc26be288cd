//! Scenario text shared by integration tests.

// Each test binary compiles this module and uses only some of it.
#![allow(dead_code)]

/// Hosts `a`, `b` and `r` on one switch `s` over 100G, 1 us links, running `alg`, with
/// `extra` TOML (top-level keys first, then any sections) and the `flows` entries.
pub fn star_of_three(alg: &str, max_time: &str, extra: &str, flows: &str) -> String {
    format!(
        r#"
max_time = "{max_time}"
{extra}
[topology]
kind = "custom"
hosts = ["a", "b", "r"]
switches = ["s"]
links = [
  {{ a = "a", b = "s", rate = "100Gbps", delay = "1us" }},
  {{ a = "b", b = "s", rate = "100Gbps", delay = "1us" }},
  {{ a = "r", b = "s", rate = "100Gbps", delay = "1us" }},
]
[cc]
algorithm = "{alg}"
[[workload]]
kind = "flows"
flows = [{flows}]
"#
    )
}

/// Two leaves of two hosts and two spines at 100G, 1 us links, 300 ns switches, then
/// `extra` TOML (keys of `[fabric]` first, then any sections) and one workload whose
/// keys are `workload`.
pub fn two_leaf(extra: &str, workload: &str) -> String {
    format!(
        r#"
max_time = "200ms"
[topology]
kind = "leaf_spine"
leaves = 2
spines = 2
servers_per_leaf = 2
host_rate = "100Gbps"
link_delay = "1us"
[fabric]
switch_latency = "300ns"
{extra}
[[workload]]
{workload}
"#
    )
}
