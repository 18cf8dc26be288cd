//! Scenario text shared by integration tests.

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
