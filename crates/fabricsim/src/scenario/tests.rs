//! Tests of scenario loading, overrides, variants and sweeps.

use super::*;

const MIN: &str = r#"
[topology]
kind = "leaf_spine"
leaves = 2
spines = 2
servers_per_leaf = 2
host_rate = "100Gbps"

[[workload]]
kind = "flows"
flows = [{ src = 0, dst = 3, size = "1MB" }]
"#;

#[test]
fn minimal_loads_with_defaults() {
    let l = load_str(MIN, "t.toml", Path::new("."), &[]).unwrap();
    assert_eq!(l.scenario.transport.mtu, 4096);
    assert!(l.scenario.fabric.pfc.enabled);
}

#[test]
fn syntax_error_has_line_and_col() {
    let e = load_str("a = 1\nb = = 2\n", "bad.toml", Path::new("."), &[]).unwrap_err();
    assert_eq!(e.pos.map(|p| p.0), Some(2));
    assert!(e.to_string().starts_with("bad.toml:2:"), "{e}");
}

#[test]
fn unknown_field_is_named() {
    let src = MIN.replace("leaves = 2", "leaves = 2\nleafs = 3");
    let e = load_str(&src, "t.toml", Path::new("."), &[]).unwrap_err();
    assert!(e.to_string().contains("leafs"), "{e}");
    assert_eq!(e.field.as_deref(), Some("topology.leafs"));
}

#[test]
fn overrides_apply() {
    let l = load_str(
        MIN,
        "t.toml",
        Path::new("."),
        &[
            "cc.algorithm=none".into(),
            "workload[0].flows[0].size=\"2MB\"".into(),
        ],
    )
    .unwrap();
    assert_eq!(l.scenario.cc.algorithm.name(), "none");
    match &l.scenario.workload[0] {
        config::WorkloadCfg::Flows(c) => assert_eq!(c.flows[0].size, 2_000_000),
        _ => panic!("wrong workload"),
    }
    let e = load_str(
        MIN,
        "t.toml",
        Path::new("."),
        &["cc.algorithm=cubic".into()],
    )
    .unwrap_err();
    assert!(
        e.to_string().contains("cubic") && e.to_string().contains("dcqcn"),
        "{e}"
    );
}

#[test]
fn sweeps_multiply_variants() {
    let src = format!(
        "{MIN}\n[[variants]]\nname = \"a\"\n[[variants]]\nname = \"b\"\nset = {{ \"cc.algorithm\" = \"none\" }}\n[[sweep]]\npath = \"transport.mtu\"\nvalues = [1024, 4096]\n[[sweep]]\npath = \"workload[0].flows[0].size\"\nlabel = \"size\"\nvalues = [\"1MB\", \"2MB\", \"4MB\"]\n"
    );
    let l = load_str(&src, "t.toml", Path::new("."), &[]).unwrap();
    let runs = l.expand_runs().unwrap();
    assert_eq!(runs.len(), 2 * 2 * 3);
    assert_eq!(runs[0].name, "a-mtu=1024-size=1MB");
    assert_eq!(runs[11].name, "b-mtu=4096-size=4MB");
    assert_eq!(runs[11].scenario.transport.mtu, 4096);
    assert_eq!(runs[11].scenario.cc.algorithm.name(), "none");
    assert_eq!(
        runs[4].coords,
        vec![
            ("mtu".to_string(), "4096".to_string()),
            ("size".to_string(), "2MB".to_string())
        ]
    );
}

#[test]
fn variants_expand() {
    let src = format!(
        "{MIN}\n[[variants]]\nname = \"a\"\nset = {{ \"cc.algorithm\" = \"none\" }}\n[[variants]]\nname = \"b\"\n"
    );
    let l = load_str(&src, "t.toml", Path::new("."), &[]).unwrap();
    let v = l.expand_variants().unwrap();
    assert_eq!(v.len(), 2);
    assert_eq!(v[0].1.cc.algorithm.name(), "none");
    assert_eq!(v[1].1.cc.algorithm.name(), "dcqcn");
}

#[test]
fn folder_names_keep_todays_names_and_stay_one_component() {
    for keep in [
        "gse-collective=alltoall-speedup=1.5-uplink=100Gbps-size=128MiB",
        "physec-payload=64",
        "acc_no_halt",
        "incast-pfc",
    ] {
        assert_eq!(folder_name(keep), keep);
    }
    for (name, want) in [
        ("../../x-mtu=1024", "_.__._x-mtu=1024"),
        ("/tmp/x-mtu=1024", "_tmp_x-mtu=1024"),
        ("..", "_."),
        (".", "_"),
        ("", "_"),
        ("-rf", "_rf"),
        ("a\\b\nc", "a_b_c"),
        ("a,\"b\"", "a__b_"),
        ("é", "_"),
        ("C:\\x", "C__x"),
    ] {
        let got = folder_name(name);
        assert_eq!(got, want, "{name:?}");
    }
    for name in ["../../x", "/tmp/x", "a/../../b", "...", "x/..", "\0"] {
        let f = folder_name(name);
        let p = Path::new(&f);
        assert_eq!(p.components().count(), 1, "{name:?} -> {f}");
        assert!(
            matches!(p.components().next(), Some(std::path::Component::Normal(_))),
            "{name:?} -> {f}"
        );
        assert!(!f.contains("..") && !f.contains('/'), "{name:?} -> {f}");
    }
}

#[test]
fn long_folder_names_are_cut_with_a_hash_of_the_whole_name() {
    let a = "v".repeat(300) + "a";
    let b = "v".repeat(300) + "b";
    let (fa, fb) = (folder_name(&a), folder_name(&b));
    assert_eq!(fa.len(), MAX_FOLDER_BYTES);
    assert_eq!(fb.len(), MAX_FOLDER_BYTES);
    assert_ne!(fa, fb);
    assert_eq!(fa, folder_name(&a), "stable");
    let exactly = "w".repeat(MAX_FOLDER_BYTES);
    assert_eq!(folder_name(&exactly), exactly);
}

/// The error of expanding MIN with `extra` appended (tables) and `name` set.
fn expand_err(extra: &str) -> ScenarioError {
    let src = format!("name = \"s\"\n{MIN}\n{extra}");
    let l = load_str(&src, "t.toml", Path::new("."), &[]).unwrap();
    l.expand_runs().unwrap_err()
}

#[test]
fn two_runs_never_share_a_folder() {
    let e = expand_err("[[sweep]]\npath = \"transport.mtu\"\nvalues = [1024, 2048, 1024]\n");
    assert_eq!(e.field.as_deref(), Some("sweep[0].values"), "{e}");
    assert!(e.message.contains("values[0] and values[2]"), "{e}");
    // Values that differ only in characters a folder cannot hold.
    let e = expand_err(
        "[[sweep]]\npath = \"workload[0].flows[0].size\"\nlabel = \"size\"\nvalues = [\"1 MB\", \"1/MB\"]\n",
    );
    assert_eq!(e.field.as_deref(), Some("sweep[0].values"), "{e}");
    assert!(
        e.message.contains("share the results folder `s-size=1_MB`"),
        "{e}"
    );
    // Variant names that differ only in case or in unsafe characters.
    let e = expand_err("[[variants]]\nname = \"a/b\"\n[[variants]]\nname = \"A_b\"\n");
    assert_eq!(e.field.as_deref(), Some("variants[1].name"), "{e}");
    // Two axes with one label.
    let e = expand_err(
        "[[sweep]]\npath = \"transport.mtu\"\nvalues = [1024, 2048]\n[[sweep]]\npath = \"fabric.mtu\"\nlabel = \"mtu\"\nvalues = [1]\n",
    );
    assert_eq!(e.field.as_deref(), Some("sweep[1].label"), "{e}");
    // A run folder named like a file written beside the run folders.
    let e = expand_err("[[variants]]\nname = \"comparison.csv\"\n[[variants]]\nname = \"b\"\n");
    assert_eq!(e.field.as_deref(), Some("variants[0].name"), "{e}");
    assert!(e.message.contains("comparison.csv"), "{e}");
    // A control character in a variant name.
    let e = expand_err("[[variants]]\nname = \"a\\u001b[2J\"\n");
    assert_eq!(e.field.as_deref(), Some("variants[0].name"), "{e}");
}

#[test]
fn any_printable_variant_name_is_allowed_and_keeps_its_text() {
    let src = format!(
        "name = \"../../x\"\n{MIN}\n[[variants]]\nname = 'a,\"b\" c'\n[[variants]]\nname = \"d\"\n[[sweep]]\npath = \"transport.mtu\"\nvalues = [1024]\n"
    );
    let l = load_str(&src, "t.toml", Path::new("."), &[]).unwrap();
    let runs = l.expand_runs().unwrap();
    assert_eq!(runs[0].name, "a,\"b\" c-mtu=1024");
    assert_eq!(runs[0].folder, "a__b__c-mtu=1024");
    assert_eq!(runs[0].variant, "a,\"b\" c");
    // The tree of a run has the sweep point and no variants or sweep.
    assert_eq!(runs[1].table["transport"]["mtu"].as_integer(), Some(1024));
    assert!(!runs[1].table.contains_key("variants") && !runs[1].table.contains_key("sweep"));
}

/// MIN with two variants and `extra` appended (top-level keys must come before tables,
/// so `top` goes first).
fn with_sweep(top: &str, extra: &str) -> String {
    format!(
        "{top}\n{MIN}\n[[variants]]\nname = \"a\"\n\n[[variants]]\nname = \"b\"\nset = {{ \
         \"cc.algorithm\" = \"none\" }}\n{extra}"
    )
}

#[test]
fn seeds_replicate_every_point_with_distinct_derived_seeds() {
    let src = with_sweep(
        "seed = 7\nseeds = 3",
        "[[sweep]]\npath = \"transport.mtu\"\nvalues = [1024, 4096]\n",
    );
    let l = load_str(&src, "t.toml", Path::new("."), &[]).unwrap();
    let runs = l.expand_runs().unwrap();
    assert_eq!(runs.len(), 2 * 2 * 3);
    // Replicates of a point are adjacent and numbered from 1; the first keeps the seed.
    assert_eq!(runs[0].name, "a-mtu=1024-replicate=1");
    assert_eq!(runs[2].name, "a-mtu=1024-replicate=3");
    assert_eq!(runs[3].name, "a-mtu=4096-replicate=1");
    assert_eq!(
        runs.iter().map(|r| r.replicate).collect::<Vec<_>>()[..4],
        [0, 1, 2, 0]
    );
    assert_eq!(
        runs[0].coords.last().unwrap(),
        &(REPLICATE_AXIS.into(), "1".into())
    );
    // A run's own tree reruns that replicate alone.
    assert!(!runs[0].table.contains_key("seeds"));
    assert_eq!(runs[0].scenario.seeds, 1);
    let seeds: Vec<u64> = runs[..3]
        .iter()
        .map(|r| crate::base::seed::replicate_seed(r.scenario.seed, r.replicate))
        .collect();
    assert_eq!(seeds[0], 7);
    assert!(seeds[0] != seeds[1] && seeds[1] != seeds[2] && seeds[0] != seeds[2]);
    // One seed: no replicate coordinate, names as before.
    let one = with_sweep("", "[[sweep]]\npath = \"transport.mtu\"\nvalues = [1024]\n");
    let runs = load_str(&one, "t.toml", Path::new("."), &[])
        .unwrap()
        .expand_runs()
        .unwrap();
    assert_eq!(runs[0].name, "a-mtu=1024");
    assert_eq!(runs[0].replicate, 0);
}

#[test]
fn bad_seeds_and_baseline_are_named() {
    let err = |top: &str, extra: &str| {
        let src = with_sweep(top, extra);
        load_str(&src, "t.toml", Path::new("."), &[])
            .and_then(|l| l.expand_runs())
            .unwrap_err()
    };
    let e = err("seeds = 0", "");
    assert_eq!(e.field.as_deref(), Some("seeds"));
    let e = err("baseline = \"c\"", "");
    assert_eq!(e.field.as_deref(), Some("baseline"));
    assert!(e.message.contains("`a`, `b`"), "{e}");
    let e = err(
        "seeds = 2",
        "[[sweep]]\npath = \"transport.mtu\"\nlabel = \"replicate\"\nvalues = [1024]\n",
    );
    assert_eq!(e.field.as_deref(), Some("sweep[0].label"));
}

#[test]
fn pathless_axes_apply_override_tables_under_their_names() {
    let src = with_sweep(
        "",
        "[[sweep]]\nlabel = \"net\"\nnames = [\"small\", \"big\"]\nvalues = [{ \
         \"transport.mtu\" = 1024 }, { \"transport.mtu\" = 9000, \"fabric.buffer\" = \"64MB\" }]\n",
    );
    let runs = load_str(&src, "t.toml", Path::new("."), &[])
        .unwrap()
        .expand_runs()
        .unwrap();
    assert_eq!(runs.len(), 4);
    assert_eq!(runs[1].name, "a-net=big");
    assert_eq!(runs[1].scenario.transport.mtu, 9000);
    assert_eq!(runs[1].scenario.fabric.buffer, 64_000_000);
    assert_eq!(runs[0].scenario.transport.mtu, 1024);
    assert_eq!(
        runs[0].coords,
        vec![("net".to_string(), "small".to_string())]
    );
    // Names on a path axis replace the values' text.
    let named = with_sweep(
        "",
        "[[sweep]]\npath = \"transport.mtu\"\nnames = [\"jumbo\"]\nvalues = [9000]\n",
    );
    let runs = load_str(&named, "t.toml", Path::new("."), &[])
        .unwrap()
        .expand_runs()
        .unwrap();
    assert_eq!(runs[0].name, "a-mtu=jumbo");
    let err = |extra: &str| {
        load_str(&with_sweep("", extra), "t.toml", Path::new("."), &[])
            .and_then(|l| l.expand_runs())
            .unwrap_err()
    };
    // No path: a label, names and tables are required.
    let e = err("[[sweep]]\nnames = [\"x\"]\nvalues = [{ \"transport.mtu\" = 1024 }]\n");
    assert_eq!(e.field.as_deref(), Some("sweep[0].label"));
    let e = err("[[sweep]]\nlabel = \"x\"\nvalues = [{ \"transport.mtu\" = 1024 }]\n");
    assert_eq!(e.field.as_deref(), Some("sweep[0].names"));
    let e = err("[[sweep]]\nlabel = \"x\"\nnames = [\"y\"]\nvalues = [3]\n");
    assert_eq!(e.field.as_deref(), Some("sweep[0].values"));
    let e = err("[[sweep]]\nlabel = \"x\"\nnames = [\"y\", \"z\"]\nvalues = [{}]\n");
    assert_eq!(e.field.as_deref(), Some("sweep[0].names"));
    let e = err("[[sweep]]\nlabel = \"x\"\nnames = [\"y\", \"y\"]\nvalues = [{}, {}]\n");
    assert_eq!(e.field.as_deref(), Some("sweep[0].names"));
    // A bad override inside a value names the value and its path.
    let e =
        err("[[sweep]]\nlabel = \"x\"\nnames = [\"y\"]\nvalues = [{ \"workload[9].size\" = 1 }]\n");
    assert_eq!(
        e.field.as_deref(),
        Some("sweep[0].values[0].\"workload[9].size\"")
    );
}
