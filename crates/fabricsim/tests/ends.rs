//! Every run ends: a window reaching beyond `max_time` is clamped,
//! and the livelock guard stops a run whose events outpace anything its fabric can cause
//! (here a 1 ps RTO and a 1 ps sampling interval set through the library, past the
//! validator's floors, which refuse them in a scenario file).

use fabricsim::base::units::{MS, US};
use fabricsim::run::runner::build_all;
use fabricsim::sim::{Outcome, Simulation};
use std::path::Path;
use std::time::Instant;

fn build(toml: &str) -> Simulation {
    let l = fabricsim::load_str(toml, "<test>", Path::new("."), &[]).expect("valid scenario");
    build_all(&l, None)
        .expect("builds")
        .pop()
        .expect("one run")
        .1
}

/// Two hosts under two leaves and a spine, one 1 MB flow; `extra` is appended.
fn two_hosts(extra: &str) -> String {
    format!(
        r#"
name = "t"
max_time = "1ms"
[topology]
kind = "leaf_spine"
leaves = 2
spines = 1
servers_per_leaf = 1
host_rate = "100Gbps"
link_delay = "1us"
[[workload]]
kind = "flows"
flows = [{{ src = 0, dst = 1, size = "1MB" }}]
{extra}
"#
    )
}

#[test]
fn a_window_beyond_max_time_is_clamped_and_the_analysis_is_quick() {
    let mut sim = build(&two_hosts(
        "[record]\nrate_interval = \"10us\"\n[record.window]\nfrom = \"0us\"\nto = \"1000000s\"\nflows = [0]",
    ));
    let spec = sim.window.clone().expect("a window");
    assert_eq!(spec.to, MS, "clamped to max_time");
    assert_eq!(
        spec.clamped_from,
        Some(1_000_000 * fabricsim::base::units::SEC)
    );
    let t = Instant::now();
    assert_eq!(sim.run(&mut |_| {}), Outcome::Completed);
    let w = fabricsim::analysis::window::analyse(&sim, &spec);
    // Walking every 10 us sample time up to 10^6 s would take minutes.
    assert!(t.elapsed().as_secs_f64() < 20.0, "{:?}", t.elapsed());
    assert_eq!(w.to_ns, 1e6);
    let note = w.note.expect("the clamp is noted");
    assert!(note.contains("clamped to 1.000ms"), "{note}");
    // The same figures as a window asked up to max_time: the means are over the 100
    // sample times that exist, not over 10^11 that were never taken.
    let mut same = build(&two_hosts(
        "[record]\nrate_interval = \"10us\"\n[record.window]\nfrom = \"0us\"\nto = \"1ms\"\nflows = [0]",
    ));
    same.run(&mut |_| {});
    let w1 = fabricsim::analysis::window::analyse(&same, same.window.as_ref().unwrap());
    assert_eq!(w1.note, None);
    assert_eq!(w.rows, w1.rows);
    let g = w.rows[0].goodput_gbps.unwrap();
    assert!(g > 6.0 && g <= 8.0, "1 MB over 1 ms: {g} Gbit/s");
    // A window inside max_time is untouched.
    let sim = build(&two_hosts(
        "[record]\nrate_interval = \"10us\"\n[record.window]\nfrom = \"0us\"\nto = \"500us\"\nflows = [0]",
    ));
    let spec = sim.window.clone().unwrap();
    assert_eq!((spec.to, spec.clamped_from), (500 * US, None));
}

/// The guard's verdict on `sim`, within a wall-time budget; `summary.json` records it.
fn livelock(mut sim: Simulation) -> fabricsim::sim::livelock::LivelockReport {
    let t = Instant::now();
    let o = sim.run(&mut |_| {});
    assert!(t.elapsed().as_secs_f64() < 60.0, "{:?}", t.elapsed());
    let s = fabricsim::output::summarize(&sim, "v", &o, 1.0);
    let json: serde_json::Value = serde_json::to_value(&s).unwrap();
    assert_eq!(json["run"]["outcome"], "livelock");
    let Outcome::Livelock(r) = o else {
        panic!("expected a livelock, got {o:?}");
    };
    assert_eq!(json["run"]["livelock"]["at_ps"], r.at_ps);
    assert_eq!(json["run"]["livelock"]["suspect"], r.suspect.as_str());
    r
}

#[test]
fn a_one_picosecond_rto_is_stopped_as_a_livelock() {
    let mut sim = build(&two_hosts(""));
    sim.ctx.params.rto = 1;
    let r = livelock(sim);
    // Each RTO wakes the NIC's port again: half the events are RTOs.
    let share =
        |k: &str| r.kinds.iter().find(|x| x.0 == k).map_or(0, |x| x.1) as f64 / r.sampled as f64;
    assert!(share("Rto") >= 0.4, "{r}");
    assert!(r.components.iter().any(|c| c.0 == "Rto of flow 0"), "{r}");
    assert_eq!(r.suspect, "transport.rto");
    assert!(r.events_per_ns > r.bound_per_ns, "{r}");
    // Far from max_time: the run would have needed 10^9 RTO events to get there.
    assert!(r.at_ps < MS / 10, "{r}");
    let text = r.to_string();
    assert!(text.starts_with("livelock at "), "{text}");
    assert!(text.contains("check transport.rto"), "{text}");
}

#[test]
fn a_one_picosecond_sampling_interval_is_stopped_as_a_livelock() {
    let mut sim = build(&two_hosts("[record]\nqueue_interval = \"10us\""));
    sim.ctx.params.queue_interval = Some(1);
    let r = livelock(sim);
    assert_eq!(r.kinds[0].0, "Sample", "{r}");
    assert!(r.suspect.contains("record.queue_interval"), "{r}");
}

#[test]
fn a_sound_run_is_not_a_livelock() {
    // The same fabric at full load with the RTO and queue sampling at their floors
    // (1 us; one 64 B frame at 100 Gbit/s): 64 flows both ways.
    let flows: Vec<String> = (0..64)
        .map(|i| {
            format!(
                "{{ src = {}, dst = {}, size = \"256KB\" }}",
                i % 2,
                1 - i % 2
            )
        })
        .collect();
    let toml = format!(
        r#"
name = "t"
max_time = "1ms"
[transport]
rto = "1us"
[topology]
kind = "leaf_spine"
leaves = 2
spines = 1
servers_per_leaf = 1
host_rate = "100Gbps"
link_delay = "1us"
[record]
queue_interval = "5.12ns"
[[workload]]
kind = "flows"
flows = [{}]
"#,
        flows.join(", ")
    );
    let mut sim = build(&toml);
    let o = sim.run(&mut |_| {});
    assert!(!matches!(o, Outcome::Livelock(_)), "{o:?}");
    let s = fabricsim::output::summarize(&sim, "v", &o, 1.0);
    let json: serde_json::Value = serde_json::to_value(&s).unwrap();
    assert!(
        json["run"].get("livelock").is_none(),
        "absent unless it tripped"
    );
    let checks = sim.events() / fabricsim::sim::livelock::CHECK_EVERY as u64;
    assert!(checks >= 4, "{checks} checks");
}

/// The invariants' cost on the k = 16 fat-tree benchmark: under 2 %
/// of the run. Seconds of work, so run on demand: `cargo test --test ends -- --ignored`.
#[test]
#[ignore]
fn the_invariant_check_is_cheap_at_k16() {
    let mut sim = build(&fabricsim::run::bench::scenario_toml(16));
    let t = Instant::now();
    let o = sim.run(&mut |_| {});
    let run = t.elapsed();
    let t = Instant::now();
    let bad = fabricsim::analysis::invariants::check(&sim);
    let check = t.elapsed();
    assert_eq!(o, Outcome::Completed);
    assert!(bad.is_empty(), "{bad:#?}");
    eprintln!(
        "k=16: run {:.3} s, invariants::check {:.3} ms ({:.3} %)",
        run.as_secs_f64(),
        check.as_secs_f64() * 1e3,
        100.0 * check.as_secs_f64() / run.as_secs_f64()
    );
    assert!(check * 50 < run, "check {check:?} vs run {run:?}");
}
