//! Generated scenarios, not mutated files: scenarios put together from random choices of
//! topology, fabric, congestion control, load balancing and workload, with some fields
//! given hostile values (0, u32::MAX, huge sizes, tiny intervals). For each:
//!
//! - loading and building never panic: the result is a run, or an input error that
//!   names a field (in process, through the library);
//! - a run that builds ends (whatever its outcome) within an event budget, and its peak
//!   resident memory stays under the estimate the memory budget made before building it
//!   (`fabricsim run` in a child process, so the peak is the run's own).

use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use std::path::Path;
use std::process::Command;

/// One generated scenario, as TOML text.
fn scenario() -> impl Strategy<Value = String> {
    let rate = prop::sample::select(vec!["25Gbps", "100Gbps", "400Gbps"]);
    let delay = prop::sample::select(vec!["100ns", "1us", "5us"]);
    let topology = prop_oneof![
        (1u32..5, 1u32..4, 1u32..6, rate.clone(), delay.clone()).prop_map(
            |(leaves, spines, spl, r, d)| format!(
                "[topology]\nkind = \"leaf_spine\"\nleaves = {leaves}\nspines = {spines}\n\
                 servers_per_leaf = {spl}\nhost_rate = \"{r}\"\nlink_delay = \"{d}\"\n"
            )
        ),
        (
            prop::sample::select(vec![4u32, 6]),
            rate.clone(),
            delay.clone()
        )
            .prop_map(|(k, r, d)| format!(
                "[topology]\nkind = \"fat_tree\"\nk = {k}\nrate = \"{r}\"\nlink_delay = \"{d}\"\n"
            )),
        // Hostile: a fabric far beyond any machine, refused by the budget. (From 1000
        // leaves of 1000 servers, 10^6 hosts, an estimate of a few GB fitted in a quiet
        // 24 GB machine's budget, and the test built and ran it for minutes.)
        (20_000u32..70_000).prop_map(|n| format!(
            "[topology]\nkind = \"leaf_spine\"\nleaves = {n}\nspines = {n}\n\
             servers_per_leaf = {n}\nhost_rate = \"100Gbps\"\n"
        )),
    ];
    let fabric = (
        prop::sample::select(vec!["2MB", "8MB", "32MB"]),
        any::<bool>(),
        prop::sample::select(vec!["ecmp", "spray_random", "spray_rr", "adaptive"]),
    )
        .prop_map(|(buf, pfc, lb)| {
            format!(
                "[fabric]\nbuffer = \"{buf}\"\n[fabric.pfc]\nenabled = {pfc}\n\
                 [fabric.load_balance]\nalgorithm = \"{lb}\"\n"
            )
        });
    let cc = prop::sample::select(vec!["none", "dcqcn", "timely", "hpcc", "acc"])
        .prop_map(|a| format!("[cc]\nalgorithm = \"{a}\"\n"));
    let size = prop::sample::select(vec!["1KB", "64KB", "1MB"]);
    let count = prop_oneof![4 => 1u32..4, 1 => Just(u32::MAX), 1 => Just(0u32)];
    let workload = prop_oneof![
        (size.clone(), count.clone()).prop_map(|(s, r)| format!(
            "[[workload]]\nkind = \"incast\"\nsenders = \"all\"\nreceiver = 0\nsize = \"{s}\"\n\
             interval = \"2us\"\nrepeat = {r}\n"
        )),
        size.clone()
            .prop_map(|s| format!("[[workload]]\nkind = \"permutation\"\nsize = \"{s}\"\n")),
        size.clone()
            .prop_map(|s| format!("[[workload]]\nkind = \"all_to_all\"\nsize = \"{s}\"\n")),
        (
            prop::sample::select(vec!["ring_allreduce", "alltoall", "p2p"]),
            size.clone(),
            count.clone(),
            count.clone(),
        )
            .prop_map(|(c, s, chunks, channels)| format!(
                "[[workload]]\nkind = \"collective\"\ncollective = \"{c}\"\nhosts = 4\n\
                 size = \"{s}\"\nchunks = {chunks}\nchannels = {channels}\n"
            )),
        prop::sample::select(vec!["0.3", "0.8"]).prop_map(|l| format!(
            "[[workload]]\nkind = \"poisson\"\ncdf = \"websearch\"\nload = {l}\nflows = 40\n"
        )),
    ];
    let record = prop_oneof![
        3 => Just(String::new()),
        1 => prop::sample::select(vec!["1us", "10us", "1ns"])
            .prop_map(|i| format!("[record]\nqueue_interval = \"{i}\"\n")),
    ];
    (topology, fabric, cc, workload, record, 1u64..1000).prop_map(|(t, f, c, w, r, seed)| {
        format!("name = \"generated\"\nseed = {seed}\nmax_time = \"2ms\"\n{t}{f}{c}{w}{r}")
    })
}

/// Events a run may take: a generous multiple of what its packets and timers need, so
/// only a run that does not end (or livelocks) exceeds it.
fn event_budget(summary: &serde_json::Value) -> u64 {
    let hops = summary["speed"]["packet_hops"].as_u64().unwrap_or(0);
    let flows = summary["flows"]["count"].as_u64().unwrap_or(0);
    let sim_ns = summary["run"]["sim_end_ns"].as_f64().unwrap_or(0.0) as u64;
    // Per hop: its arrival, departure and a few control events; per flow its timers;
    // per simulated microsecond a sampling event and periodic timers.
    16 * hops + 64 * flows + sim_ns / 10 + 100_000
}

#[test]
fn generated_scenarios_load_without_panic_and_runs_stay_within_budgets() {
    let exe = env!("CARGO_BIN_EXE_fabricsim");
    let dir = tempfile::tempdir().expect("tempdir");
    // A fixed stream of cases: the same 48 scenarios every run, so that a failure
    // repeats and the test's time does not depend on the draw.
    let mut runner = TestRunner::new_with_rng(
        Config {
            cases: 48,
            failure_persistence: None,
            ..Config::default()
        },
        proptest::test_runner::TestRng::deterministic_rng(
            proptest::test_runner::RngAlgorithm::ChaCha,
        ),
    );
    let (mut built, mut refused) = (0u32, 0u32);
    let counts = std::cell::RefCell::new((0u32, 0u32));
    runner
        .run(&scenario(), |text| {
            let loaded = match fabricsim::load_str(&text, "generated.toml", Path::new("."), &[]) {
                Ok(l) => l,
                Err(e) => {
                    prop_assert!(
                        e.field.is_some(),
                        "an input error names a field: {e}\n{text}"
                    );
                    counts.borrow_mut().1 += 1;
                    return Ok(());
                }
            };
            let built =
                std::panic::catch_unwind(|| fabricsim::run::runner::build_all(&loaded, None));
            let built = match built {
                Ok(b) => b,
                Err(_) => return Err(TestCaseError::fail(format!("build panicked:\n{text}"))),
            };
            if let Err(e) = built {
                prop_assert!(
                    !e.message.is_empty(),
                    "an input error says what is wrong:\n{text}"
                );
                counts.borrow_mut().1 += 1;
                return Ok(());
            }
            drop(built);
            counts.borrow_mut().0 += 1;
            // The run itself, alone in a child process.
            let file = dir.path().join("generated.toml");
            std::fs::write(&file, &text).expect("write scenario");
            let out = dir.path().join("out");
            let _ = std::fs::remove_dir_all(&out);
            let o = Command::new(exe)
                .arg("run")
                .arg(&file)
                .arg("--out")
                .arg(&out)
                .args(["--quiet", "--threads", "1"])
                .output()
                .expect("run fabricsim");
            let code = o.status.code();
            prop_assert!(
                matches!(code, Some(0) | Some(1)),
                "a run that builds ends with 0 or 1, got {code:?}:\n{}\n{text}",
                String::from_utf8_lossy(&o.stderr)
            );
            let s: serde_json::Value = serde_json::from_slice(
                &std::fs::read(out.join("summary.json")).expect("summary.json written"),
            )
            .expect("summary.json parses");
            let events = s["speed"]["events"].as_u64().unwrap_or(0);
            prop_assert!(
                events <= event_budget(&s),
                "{events} events, over the budget {}:\n{text}",
                event_budget(&s)
            );
            let est = s["speed"]["memory_estimate_bytes"].as_u64().unwrap_or(0);
            let rss = s["speed"]["peak_rss_bytes"].as_u64().unwrap_or(0);
            prop_assert!(est > 0, "the run was estimated");
            prop_assert!(
                rss <= est,
                "peak RSS {rss} B above the estimate {est} B:\n{text}"
            );
            Ok(())
        })
        .unwrap_or_else(|e| panic!("{e}"));
    let c = counts.borrow();
    built += c.0;
    refused += c.1;
    // The generator must exercise both sides, or the property says little.
    assert!(built >= 5, "only {built} generated scenarios built");
    assert!(
        refused >= 3,
        "only {refused} generated scenarios were refused"
    );
}
