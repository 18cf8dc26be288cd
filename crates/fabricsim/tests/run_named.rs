//! One run of a scenario of several, by name (`runner::run_named`, what the Python
//! package's `Scenario.run(variant=..., point=...)` calls): the run the command line
//! would make, with its name, coordinates, seed and files; a name the scenario does not
//! have names the runs it has.

use fabricsim::output::flows_csv;
use fabricsim::run::runner::{plan, run_named, run_single, RunError};
use fabricsim::scenario::load_str;
use std::path::Path;

/// Two variants x two incast sizes x two seeds of a small leaf-spine with Poisson
/// background traffic (the seed changes the arrivals).
const MULTI: &str = r#"
name = "multi"
seed = 3
seeds = 2
max_time = "20ms"

[topology]
kind = "leaf_spine"
leaves = 2
spines = 2
servers_per_leaf = 2
host_rate = "100Gbps"

[[workload]]
kind = "incast"
senders = [1, 2, 3]
receiver = 0
size = "256KB"

[[workload]]
kind = "poisson"
load = 0.3
cdf = "websearch"
duration = "300us"

[[variants]]
name = "a"

[[variants]]
name = "b"
set = { "cc.algorithm" = "none" }

[[sweep]]
path = "workload[0].size"
label = "size"
values = ["256KB", "1MB"]
"#;

fn no_progress(_: &fabricsim::sim::Progress) {}

#[test]
fn a_named_run_is_that_run_of_the_scenario() {
    let loaded = load_str(MULTI, "<multi>", Path::new("."), &[]).unwrap();
    let names: Vec<String> = (plan(&loaded, None).unwrap().into_iter())
        .map(|p| p.meta.name)
        .collect();
    assert_eq!(names.len(), 8);
    assert_eq!(names[7], "b-size=1MB-replicate=2");
    let (sim, r) = run_named(&loaded, Some(&names[7]), None, None, 1, None, &no_progress)
        .unwrap()
        .unwrap();
    assert_eq!(r.variant, names[7]);
    assert_eq!(r.summary.variant_name, "b");
    let coords: Vec<(&str, &str)> = (r.summary.params.iter())
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    assert_eq!(coords, [("replicate", "2"), ("size", "1MB")]);
    // The same run written out by hand: the variant's and the point's settings on the
    // scenario without variants, sweep and seeds, at the replicate's seed.
    let plain = MULTI
        .split("[[variants]]")
        .next()
        .unwrap()
        .replace("seeds = 2\n", "");
    let by_hand = load_str(
        &plain,
        "<plain>",
        Path::new("."),
        &[
            "cc.algorithm=none".into(),
            "workload[0].size=\"1MB\"".into(),
        ],
    )
    .unwrap();
    let (hand, h) = run_single(&by_hand, Some(r.summary.seed), None, 1, None, &no_progress)
        .unwrap()
        .unwrap();
    assert_ne!(r.summary.seed, 3, "replicate 2 runs with a seed of its own");
    assert_eq!(flows_csv(&sim), flows_csv(&hand));
    assert_eq!(r.summary.flows, h.summary.flows);
    // Replicate 1 of the same point is another run (other arrivals).
    let (first, _) = run_named(&loaded, Some(&names[6]), None, None, 1, None, &no_progress)
        .unwrap()
        .unwrap();
    assert_ne!(flows_csv(&first), flows_csv(&sim));
}

#[test]
fn an_unknown_name_or_no_name_says_what_there_is() {
    let loaded = load_str(MULTI, "<multi>", Path::new("."), &[]).unwrap();
    let err = |name: Option<&str>| match run_named(&loaded, name, None, None, 1, None, &no_progress)
    {
        Err(RunError::Input(e)) => e.to_string(),
        Err(e) => panic!("not an input error: {e}"),
        Ok(_) => panic!("ran"),
    };
    let e = err(Some("c-size=1MB-replicate=1"));
    assert!(e.contains("no run named `c-size=1MB-replicate=1`"), "{e}");
    assert!(
        e.contains("`a-size=256KB-replicate=1`") && e.contains("`b-size=1MB-replicate=2`"),
        "{e}"
    );
    let e = err(None);
    assert!(e.contains("the scenario has 8 runs"), "{e}");
}
