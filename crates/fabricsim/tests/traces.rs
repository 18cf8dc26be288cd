//! Trace-driven training jobs: iteration times against closed forms on an idle
//! fabric, stragglers and failures by their exact effect, several jobs sharing a
//! fabric, and the timeline's spans (they nest; a rank's compute never overlaps).

mod common;

use fabricsim::analysis::invariants;
use fabricsim::base::units::{ser_time, Time, NS, US};
use fabricsim::output::fct;
use fabricsim::sim::{Outcome, Simulation};
use std::path::{Path, PathBuf};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../fabricsim-cli/tests/fixtures/traces")
}

fn build(src: &str) -> Simulation {
    let l = fabricsim::load_str(src, "test.toml", &fixtures(), &[]).expect("loads");
    Simulation::build(&l.scenario, "test.toml", &fixtures()).unwrap_or_else(|e| panic!("{e}"))
}

fn run(src: &str) -> Simulation {
    let mut sim = build(src);
    let o = sim.run(&mut |_| {});
    assert_eq!(o, Outcome::Completed);
    let bad = invariants::check(&sim);
    assert!(bad.is_empty(), "invariants violated: {bad:#?}");
    sim
}

/// Two leaves of two hosts, no congestion control, and one trace workload (`job`).
fn scenario(job: &str, extra: &str) -> String {
    common::two_leaf(
        &format!("[cc]\nalgorithm = \"none\"\n{extra}"),
        &format!("kind = \"trace\"\nformat = \"chakra\"\n{job}"),
    )
}

fn iterations(sim: &Simulation, job: usize) -> Vec<Option<Time>> {
    sim.traces[job].iteration_times(|p| sim.phase_times(p).1)
}

/// The store-and-forward time of one lone flow of `size` bytes over `h` hops at 100G
/// (4 KiB packets, 58 B of headers, 1 us links, 300 ns switches).
fn lone_fct(size: u64, h: u64) -> Time {
    let mtu = 4096u64;
    let n = size.div_ceil(mtu);
    let last = size - (n - 1) * mtu + 58;
    let full = ser_time(mtu + 58, 100_000_000_000);
    let ser = if n == 1 {
        h * ser_time(last, 100_000_000_000)
    } else {
        (n + h - 2) * full + ser_time(last, 100_000_000_000)
    };
    ser + h * US + (h - 1) * 300 * NS
}

/// `pair`: rank 0 computes 5 us and sends 1 MiB to rank 1, which receives it and then
/// computes 5 us: the iteration is 5 us + the transfer + 5 us, to the picosecond.
#[test]
fn a_send_between_computes_takes_its_closed_form() {
    // Ranks on hosts 0 and 2: leaf, spine, leaf (4 hops).
    let sim = run(&scenario("path = \"pair\"\nplacement = [0, 2]", ""));
    let f = sim.traces[0].flows.0 as usize;
    let transfer = lone_fct(1 << 20, 4);
    assert_eq!(fct(&sim, f), Some(transfer));
    assert_eq!(iterations(&sim, 0), vec![Some(10 * US + transfer)]);
    // Two iterations: the second starts on each rank when its part of the first is
    // done: rank 0's compute overlaps rank 1's, so the second ends one transfer and
    // two computes after the first's send arrived... exactly a second iteration later.
    let sim = run(&scenario(
        "path = \"pair\"\nplacement = [0, 2]\niterations = 2",
        "",
    ));
    let it = iterations(&sim, 0);
    assert_eq!(it[0], Some(10 * US + transfer));
    // Rank 0 starts its second compute when its send was received (its done point),
    // so the second send leaves 5 us after the first arrived; rank 1 starts its second
    // receive after its first compute (5 us after the arrival): the second transfer
    // ends `transfer` after the second send starts.
    assert_eq!(it[1], Some(5 * US + transfer));
}

/// Compute nodes of one rank run one at a time, in the file's order, even when the
/// trace lets them run together (mlc-chakra's `two_comp_nodes_independent`).
#[test]
fn a_gpu_runs_its_compute_nodes_one_at_a_time() {
    for name in ["two_comp_nodes_dependent", "one_comp_node"] {
        let sim = run(&scenario(&format!("path = \"{name}\""), ""));
        let per = match name {
            "one_comp_node" => 5 * US,
            _ => 10 * US,
        };
        assert_eq!(iterations(&sim, 0), vec![Some(per)], "{name}");
        assert_eq!(sim.traces[0].compute, vec![per; 2], "{name}");
    }
}

/// A straggler's compute takes `slowdown` times as long; the job waits for it.
#[test]
fn a_straggler_slows_the_iteration_by_its_extra_compute() {
    let transfer = lone_fct(1 << 20, 4);
    let sim = run(&scenario(
        "path = \"pair\"\nplacement = [0, 2]\nstragglers = { ranks = [0], slowdown = 3.0 }",
        "",
    ));
    assert_eq!(iterations(&sim, 0), vec![Some(20 * US + transfer)]);
    assert_eq!(sim.traces[0].stragglers, vec![(0, 3.0)]);
}

/// A rank down from 2 us for 20 us, mid-compute: its compute ends 20 us later, and so
/// does the iteration. With `stop`, nothing of the job begins after 2 us: the send
/// never starts and the iteration has no end; the run still completes.
#[test]
fn a_failure_delays_or_stops_the_job() {
    let transfer = lone_fct(1 << 20, 4);
    let sim = run(&scenario(
        "path = \"pair\"\nplacement = [0, 2]\nfailure = { rank = 0, at = \"2us\", action = \"wait\", downtime = \"20us\" }",
        "",
    ));
    assert_eq!(iterations(&sim, 0), vec![Some(30 * US + transfer)]);
    let mut sim = build(&scenario(
        "path = \"pair\"\nplacement = [0, 2]\nfailure = { rank = 0, at = \"2us\", action = \"stop\" }",
        "",
    ));
    assert_eq!(sim.run(&mut |_| {}), Outcome::Completed);
    assert_eq!(iterations(&sim, 0), vec![None]);
    let f = sim.traces[0].flows.0 as usize;
    assert_eq!(fct(&sim, f), None, "the stopped job's send never ran");
}

/// Two jobs on one fabric, placed contiguously: the first on hosts 0-3, the second on
/// the rest; each is also run alone on its GPUs, so its slowdown is at least 1.
#[test]
fn jobs_share_the_fabric_and_each_has_its_alone_time() {
    let text = format!(
        "{}\n[[workload]]\nkind = \"trace\"\nformat = \"chakra\"\npath = \"closed_form\"\nname = \"b\"\n",
        common::two_leaf(
            "[cc]\nalgorithm = \"none\"",
            "kind = \"trace\"\nformat = \"chakra\"\npath = \"pair\"\nname = \"a\"\nplacement = \"by_rail\""
        )
        .replace("servers_per_leaf = 2", "servers_per_leaf = 4")
    );
    let sim = run(&text);
    assert_eq!(sim.traces.len(), 2);
    let a: Vec<u32> = sim.traces[0].hosts.clone();
    let b: Vec<u32> = sim.traces[1].hosts.clone();
    assert_eq!(a.len(), 2);
    assert_eq!(b.len(), 4);
    assert!(
        a.iter().all(|h| !b.contains(h)),
        "{a:?} and {b:?} share a GPU"
    );
    for j in 0..2 {
        let t = iterations(&sim, j)[0].expect("the iteration ends");
        // A job alone is not slower than with company (no CC: FIFO queues).
        assert!(t >= sim.traces[j].compute.iter().copied().max().unwrap());
    }
}

/// A writer into a shared buffer, for reading the timeline back.
#[derive(Clone, Default)]
struct Shared(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);

impl std::io::Write for Shared {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// `closed_form` with a timeline of at most `limit` spans on `shards` threads: the
/// timeline's bytes.
fn timeline_of(limit: u64, shards: usize) -> String {
    let mut sim = build(&scenario(
        "path = \"closed_form\"",
        // A notification latency of a cable's delay lets the run be cut into shards
        // (a dependency between shards must not act sooner than the crossing grid).
        &format!("[transport]\nnotify_latency = \"1us\"\n[record.timeline]\nlimit = {limit}"),
    ));
    let buf = Shared::default();
    sim.timeline
        .as_deref_mut()
        .expect("a timeline")
        .attach(Box::new(buf.clone()));
    let notes = sim.set_shards(shards, shards);
    assert!(notes.is_empty(), "{notes:?}");
    assert_eq!(sim.run(&mut |_| {}), Outcome::Completed);
    sim.finish_timeline().expect("written");
    let text = String::from_utf8(buf.0.lock().unwrap().clone()).unwrap();
    text
}

/// The timeline holds the first `limit` spans by end time and counts the rest; it is
/// the same bytes on one thread and on two.
#[test]
fn the_timeline_is_bounded_and_the_same_on_any_number_of_threads() {
    let all = timeline_of(1000, 1);
    let spans = |t: &str| t.matches("\"ph\":\"X\"").count();
    let n = spans(&all);
    assert!(n > 5, "{n} spans");
    let five = timeline_of(5, 1);
    assert_eq!(spans(&five), 5);
    let v: serde_json::Value = serde_json::from_str(&five).expect("valid JSON");
    let last = &v.as_array().unwrap().last().unwrap()["args"];
    assert_eq!(last["spans"], 5);
    assert_eq!(last["left_out"].as_u64().unwrap() as usize, n - 5);
    assert_eq!(
        timeline_of(1000, 2),
        all,
        "two threads write the same bytes"
    );
}

/// Stragglers drawn with the seed: the same rank for the same seed, and the job's
/// compute grows on that rank only.
#[test]
fn stragglers_drawn_with_the_seed_are_reproducible() {
    let job = "path = \"closed_form\"\nstragglers = { count = 1, slowdown = 2.0 }";
    let a = run(&scenario(job, ""));
    let b = run(&scenario(job, ""));
    assert_eq!(a.traces[0].stragglers, b.traces[0].stragglers);
    let (r, f) = a.traces[0].stragglers[0];
    assert_eq!(f, 2.0);
    for (i, &c) in a.traces[0].compute.iter().enumerate() {
        let want = if i as u32 == r { 60 * US } else { 30 * US };
        assert_eq!(c, want, "rank {i}");
    }
    assert!(iterations(&a, 0)[0].unwrap() >= 60 * US);
}

/// The timeline: valid JSON once the run ends; on every rank's compute track the
/// spans never overlap and take the compute nodes' durations; every track's spans
/// are disjoint; one span per collective.
#[test]
fn the_timeline_nests_and_a_rank_never_computes_twice_at_once() {
    let mut sim = build(&scenario(
        "path = \"closed_form\"",
        "[record.timeline]\nlimit = 1000",
    ));
    let buf = Shared::default();
    sim.timeline
        .as_deref_mut()
        .expect("a timeline")
        .attach(Box::new(buf.clone()));
    assert_eq!(sim.run(&mut |_| {}), Outcome::Completed);
    sim.finish_timeline().expect("written");
    let text = String::from_utf8(buf.0.lock().unwrap().clone()).unwrap();
    let v: serde_json::Value = serde_json::from_str(&text).expect("valid JSON");
    let events = v.as_array().expect("an array");
    type Spans = Vec<(f64, f64, String)>;
    let mut tracks: std::collections::BTreeMap<(u64, u64), Spans> = Default::default();
    let mut collectives = 0;
    for e in events.iter().filter(|e| e["ph"] == "X") {
        let key = (e["pid"].as_u64().unwrap(), e["tid"].as_u64().unwrap());
        let ts = e["ts"].as_f64().unwrap();
        let dur = e["dur"].as_f64().unwrap();
        assert!(dur >= 0.0);
        let cat = e["cat"].as_str().unwrap().to_string();
        collectives += usize::from(cat == "collective");
        tracks.entry(key).or_default().push((ts, ts + dur, cat));
    }
    assert_eq!(collectives, sim.traces[0].collectives as usize);
    let mut computes = 0;
    for ((_, tid), mut spans) in tracks {
        spans.sort_by(|a, b| a.partial_cmp(b).unwrap());
        for w in spans.windows(2) {
            assert!(
                w[0].1 <= w[1].0 + 1e-9,
                "track {tid}: {:?} overlaps {:?}",
                w[0],
                w[1]
            );
        }
        for s in spans.iter().filter(|s| s.2 == "compute") {
            computes += 1;
            // closed_form's compute nodes take 10 us and 20 us.
            let d = s.1 - s.0;
            assert!((d - 10.0).abs() < 1e-6 || (d - 20.0).abs() < 1e-6, "{d}");
        }
    }
    assert_eq!(computes, 8, "two compute nodes on each of four ranks");
}

/// A SimAI/AICB workload file (`DATA`: three layers, each with its weight-gradient
/// AllReduce over every rank) runs on the same executor: one collective per layer, the
/// iteration at least the busiest rank's compute, and every rank's compute the file's
/// times summed.
#[test]
fn an_aicb_file_runs_on_the_same_executor() {
    let sim = run(&common::two_leaf(
        "[cc]\nalgorithm = \"none\"",
        "kind = \"trace\"\nformat = \"aicb\"\npath = \"aicb/data_parallel.txt\"\nranks = 4",
    ));
    let job = &sim.traces[0];
    assert_eq!(job.collectives, 3);
    let t = iterations(&sim, 0)[0].expect("the iteration ends");
    let compute = *job.compute.iter().max().unwrap();
    assert!(t > compute, "{t} <= {compute}");
    // The forward, input-gradient and weight-gradient times of the three lines (ns).
    let file: Time = [
        200_000, 300_000, 50_000, 150_000, 250_000, 40_000, 180_000, 280_000, 45_000,
    ]
    .iter()
    .sum::<Time>()
        * NS;
    assert!(
        job.compute
            .iter()
            .all(|&c| c >= file - 150_000 * NS && c <= file + 1_000 * NS),
        "{:?} against {file}",
        job.compute
    );
}
