//! The parallel engine (`sim/shards/`): a run cut into shards gives the
//! serial engine's bytes whatever the thread count (1, 2, and 3, which divides nothing),
//! finds a PFC deadlock whose cycle crosses shards, conserves packets, pauses and
//! resumes without a trace, and falls back to fewer shards or to one thread, saying
//! why, where it cannot cut the model so finely.

use fabricsim::run::runner::{self, RunOptions};
use fabricsim::sim::{Outcome, Simulation};
use std::path::{Path, PathBuf};

/// The shipped scenarios as the golden test runs them (long ones shortened).
#[path = "../../fabricsim-cli/tests/common/cases.rs"]
mod cases;

fn load(src: &str) -> fabricsim::scenario::LoadedScenario {
    fabricsim::load_str(src, "sharded.toml", Path::new("."), &[]).unwrap_or_else(|e| panic!("{e}"))
}

fn build(src: &str) -> Simulation {
    let l = load(src);
    Simulation::build(&l.scenario, &l.file, &l.base_dir).unwrap_or_else(|e| panic!("{e}"))
}

/// A fat tree of radix `k` (k pods: up to k shards) at 100G with 1 us links, and `rest`.
fn fat_tree(k: u32, rest: &str) -> String {
    format!(
        "name = \"sharded\"\nseed = 7\nmax_time = \"50ms\"\n[topology]\nkind = \"fat_tree\"\n\
         k = {k}\nrate = \"100Gbps\"\nlink_delay = \"1us\"\n{rest}"
    )
}

/// Every file a run wrote under `dir`, by path relative to it; `summary.json` without
/// its `speed` section (wall time, and the events and arena peak, which count each
/// shard's own).
fn files(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
                continue;
            }
            let mut bytes = std::fs::read(&p).unwrap();
            if p.file_name().is_some_and(|n| n == "summary.json") {
                let mut v: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
                v.as_object_mut().unwrap().remove("speed");
                bytes = serde_json::to_vec_pretty(&v).unwrap();
            }
            out.push((p.strip_prefix(dir).unwrap().to_path_buf(), bytes));
        }
    }
    out.sort();
    out
}

/// Runs `loaded` on 1, 2 and 3 threads per run and asserts every output is the same
/// bytes; returns the notes of the 3-thread run and its outcomes.
fn same_bytes(
    name: &str,
    loaded: &fabricsim::scenario::LoadedScenario,
) -> (Vec<String>, Vec<String>) {
    let (notes, summaries) = same_bytes_summaries(name, loaded);
    (notes, summaries.into_iter().map(|s| s.outcome).collect())
}

/// [`same_bytes`], returning the 3-thread run's summaries.
fn same_bytes_summaries(
    name: &str,
    loaded: &fabricsim::scenario::LoadedScenario,
) -> (Vec<String>, Vec<fabricsim::output::summary::Summary>) {
    let tmp = std::env::temp_dir().join(format!("fabricsim-sharded-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    let mut first: Option<Vec<(PathBuf, Vec<u8>)>> = None;
    let mut last = (Vec::new(), Vec::new());
    for threads in [1usize, 2, 3] {
        let out = tmp.join(threads.to_string());
        let opts = RunOptions {
            out: Some(out.clone()),
            seed: None,
            // One run at a time, so that each run's shards get real threads (runs at
            // once share the machine's threads: `runner::threads_for_each_run`).
            threads: 1,
            threads_per_run: threads,
        };
        let runs = runner::run(loaded, &opts, &|_, _| {}).unwrap_or_else(|e| panic!("{name}: {e}"));
        let got = files(&out);
        assert!(!got.is_empty(), "{name}: nothing written");
        match &first {
            None => first = Some(got),
            Some(want) => {
                assert_eq!(want.len(), got.len(), "{name}: files on {threads} threads");
                for ((pa, a), (pb, b)) in want.iter().zip(&got) {
                    assert_eq!(pa, pb, "{name}");
                    assert!(
                        a == b,
                        "{name}: {} differs on {threads} threads per run",
                        pa.display()
                    );
                }
            }
        }
        last = (
            runs.iter().flat_map(|r| r.notes.clone()).collect(),
            runs.iter().map(|r| r.summary.clone()).collect(),
        );
    }
    let _ = std::fs::remove_dir_all(&tmp);
    last
}

#[test]
fn fabrics_the_engine_cuts_give_the_same_bytes_on_1_2_and_3_threads() {
    let cases = [
        // The benchmark's kind: a permutation at line rate under PFC.
        ("permutation-pfc", fat_tree(4, "[cc]\nalgorithm = \"none\"\n[[workload]]\nkind = \"permutation\"\nsize = \"200KB\"\n")),
        // DCQCN with ECN marks and CNPs, an incast that pauses, spraying.
        (
            "incast-dcqcn-spray",
            fat_tree(
                4,
                "[fabric.load_balance]\nalgorithm = \"spray_random\"\n[cc]\nalgorithm = \"dcqcn\"\n\
                 [[workload]]\nkind = \"incast\"\nsenders = 12\nreceiver = 0\nsize = \"100KB\"\n\
                 [[workload]]\nkind = \"permutation\"\nsize = \"50KB\"\n",
            ),
        ),
        // HPCC: INT records travel with the frames handed over, and back on the ACKs.
        (
            "incast-hpcc",
            fat_tree(
                4,
                "[cc]\nalgorithm = \"hpcc\"\n[[workload]]\nkind = \"incast\"\nsenders = 12\n\
                 receiver = 0\nsize = \"100KB\"\n[[workload]]\nkind = \"permutation\"\nsize = \"50KB\"\n",
            ),
        ),
        // GSE: PKTC containers sprayed over the cut, DGSQ requests and grants between
        // the source and destination GSPs, reordering at the destination.
        (
            "gse-dgsq",
            fat_tree(
                4,
                "[fabric.load_balance]\nalgorithm = \"pktc\"\n[fabric.gse]\nscheduling = \"dgsq\"\n\
                 [cc]\nalgorithm = \"none\"\n[[workload]]\nkind = \"incast\"\nsenders = 12\n\
                 receiver = 0\nsize = \"200KB\"\n[[workload]]\nkind = \"permutation\"\nsize = \"100KB\"\n",
            ),
        ),
        // Flows starting over time, of sizes drawn from a distribution; queue and rate
        // samples (taken between windows), at intervals that are not the grid's.
        (
            "poisson-timely",
            fat_tree(
                6,
                "[cc]\nalgorithm = \"timely\"\n[[workload]]\nkind = \"poisson\"\n\
                 cdf = \"websearch\"\nload = 0.3\nduration = \"200us\"\n\
                 [record]\nqueue_interval = \"3us\"\nrate_interval = \"2500ns\"\n",
            ),
        ),
    ];
    for (name, src) in &cases {
        let l = load(src);
        let (notes, outcomes) = same_bytes(name, &l);
        assert!(notes.is_empty(), "{name} did not run sharded: {notes:?}");
        assert!(
            outcomes.iter().all(|o| o == "completed"),
            "{name}: {outcomes:?}"
        );
    }
}

#[test]
fn credits_and_lossy_fabrics_give_the_same_bytes_on_1_2_and_3_threads() {
    // Credit flow control with adaptive routing by credits: an incast makes the cut
    // ports wait for credits that come back over the cut.
    let credit = fat_tree(
        4,
        "[fabric.pfc]\nenabled = false\n[fabric.credit]\nenabled = true\n\
         [fabric.load_balance]\nalgorithm = \"adaptive\"\n[cc]\nalgorithm = \"none\"\n\
         [[workload]]\nkind = \"incast\"\nsenders = 12\nreceiver = 0\nsize = \"100KB\"\n\
         [[workload]]\nkind = \"permutation\"\nsize = \"50KB\"\n",
    );
    let (notes, sums) = same_bytes_summaries("credit-adaptive", &load(&credit));
    assert!(notes.is_empty(), "{notes:?}");
    assert_eq!(sums[0].outcome, "completed");
    assert_eq!(sums[0].drops, 0, "credits are lossless");
    let mut sim = build(&credit);
    sim.set_threads_per_run(2);
    assert_eq!(sim.run(&mut |_| {}), Outcome::Completed);
    let (c, f) = (sim.fabric.credit().unwrap(), &sim.fabric);
    let cut_waits: u64 = (0..f.ports.len())
        .filter(|&p| f.links[p].cut_to != 0)
        .map(|p| c.port(p).stats.stalls)
        .sum();
    assert!(cut_waits > 0, "no port on the cut waited for credits");
    assert!(fabricsim::analysis::invariants::check(&sim).is_empty());
    // A lossy fabric with a small buffer: an incast drops, and go-back-N recovers.
    let lossy = fat_tree(
        4,
        "[fabric]\nbuffer = \"300KB\"\n[fabric.pfc]\nenabled = false\n[cc]\nalgorithm = \"dcqcn\"\n\
         [[workload]]\nkind = \"incast\"\nsenders = 12\nreceiver = 0\nsize = \"200KB\"\n",
    );
    let (notes, sums) = same_bytes_summaries("lossy-incast", &load(&lossy));
    assert!(notes.is_empty(), "{notes:?}");
    assert_eq!(sums[0].outcome, "completed");
    assert!(sums[0].drops > 0 && sums[0].retx_bytes > 0, "{sums:?}");
}

#[test]
fn faults_and_bit_errors_across_the_cut_give_the_same_bytes_on_1_2_and_3_threads() {
    // Faults act between windows, on the whole model, at the start of their instant:
    // a cable the cut crosses goes down and comes back, a core switch goes down and comes
    // back, a cable loses lanes, routing re-converges; every link corrupts frames (no
    // LLR: the receiver drops them, go-back-N recovers; with LLR: the links replay them,
    // the cut's too). Under PFC and under credits.
    let faults = "[fabric.reliability]\nber = 2e-7\nreconvergence_delay = \"5us\"\n\
        [[fault]]\nkind = \"lane_degrade\"\nat = \"7us\"\nlink = [\"agg1.1\", \"core3\"]\nlanes = 1\n\
        [[fault]]\nkind = \"link_down\"\nat = \"20us\"\nlink = [\"agg0.0\", \"core0\"]\n\
        [[fault]]\nkind = \"switch_down\"\nat = \"30us\"\nswitch = \"core2\"\n\
        [[fault]]\nkind = \"link_up\"\nat = \"60us\"\nlink = [\"agg0.0\", \"core0\"]\n\
        [[fault]]\nkind = \"switch_up\"\nat = \"80500ns\"\nswitch = \"core2\"\n\
        [transport]\nrto = \"200us\"\n\
        [[workload]]\nkind = \"permutation\"\nsize = \"300KB\"\n";
    let llr = faults.replace("ber = 2e-7\n", "ber = 2e-6\nllr = true\n");
    let cases = [
        (
            "faults-pfc",
            fat_tree(4, &format!("[cc]\nalgorithm = \"dcqcn\"\n{faults}")),
        ),
        (
            "faults-credit",
            fat_tree(
                4,
                &format!(
                    "[fabric.pfc]\nenabled = false\n[fabric.credit]\nenabled = true\n\
                     [cc]\nalgorithm = \"none\"\n{faults}"
                ),
            ),
        ),
        (
            "faults-llr-pfc",
            fat_tree(4, &format!("[cc]\nalgorithm = \"dcqcn\"\n{llr}")),
        ),
        (
            "faults-llr-credit",
            fat_tree(
                4,
                &format!(
                    "[fabric.pfc]\nenabled = false\n[fabric.credit]\nenabled = true\n\
                     [cc]\nalgorithm = \"none\"\n{llr}"
                ),
            ),
        ),
    ];
    for (name, src) in &cases {
        let (notes, sums) = same_bytes_summaries(name, &load(src));
        assert!(notes.is_empty(), "{name} did not run sharded: {notes:?}");
        let s = &sums[0];
        assert_eq!(s.outcome, "completed", "{name}");
        assert!(
            s.invariant_violations.is_empty(),
            "{name}: {:?}",
            s.invariant_violations
        );
        let f = s.faults.as_ref().expect("a faults section");
        assert_eq!(f.applied, 5, "{name}: {f:?}");
        assert!(f.reconvergences >= 2, "{name}: {f:?}");
        assert!(f.frames_corrupted > 0, "{name}: nothing corrupted: {f:?}");
        if name.contains("llr") {
            assert!(f.frames_replayed > f.frames_corrupted, "{name}: {f:?}");
        }
        assert!(
            f.frames_lost_link_down + f.packets_dropped > 0,
            "{name}: the faults cost nothing: {f:?}"
        );
        assert!(f.data_packets_lost > 0 && s.retx_bytes > 0, "{name}: {f:?}");
        // Cut into shards indeed, with the faulted cable on the cut.
        let mut sim = build(src);
        assert!(sim.set_threads_per_run(2).is_empty());
        let f = &sim.fabric;
        assert!(
            (0..f.ports.len()).any(|p| f.links[p].cut_to != 0 && f.links[p].watched),
            "{name}: no watched link on the cut"
        );
        if name.contains("llr") {
            assert!(
                (0..f.ports.len()).any(|p| f.links[p].cut_to != 0 && f.ports[p].replays()),
                "{name}: no replaying link on the cut"
            );
        }
    }
}

#[test]
fn training_jobs_across_campuses_give_the_same_bytes_on_1_2_and_3_threads() {
    // Document 001's training over two campuses, pipeline and data parallel: compute
    // phases on their hosts, join points (run by one shard, or by every shard when they
    // wait for nothing), transfers across the DCI. With a notification latency every
    // dependency between shards waits for it (the serial engine applies it alike);
    // without one (the default), a join hears of a transfer in no time and the compute
    // phases after it hear of the join in no time: those releases are taken late,
    // between windows, as of their times, since what they set off acts a phase's
    // duration later at the earliest.
    let src = |notify: &str| {
        format!(
            "name = \"training\"\nseed = 1\nmax_time = \"2s\"\n[topology]\nkind = \"multi_campus\"\n\
             leaves = 1\nspines = 1\nservers_per_leaf = 4\nuplinks_per_pair = 4\ndr_switches = 1\n\
             campus_to_dr_capacity = \"3200Gbps\"\ndci_capacity = \"1600Gbps\"\nfiber_km = 120\n\
             link_delay = \"1us\"\n[fabric.dr]\ncnp = \"dr\"\n[transport]\nrto = \"40ms\"\n{notify}\
             [cc]\nalgorithm = \"dcqcn\"\n[[workload]]\nkind = \"training\"\nparallelism = \"pp\"\n\
             iterations = 2\nmicrobatches = 4\nactivation = \"1MB\"\nforward = \"300us\"\n\
             backward = \"600us\"\ncompute = \"30ms\"\ngradient = \"8MB\"\nparameters = \"8MB\"\n\
             [[variants]]\nname = \"pp\"\n[[variants]]\nname = \"dp\"\n\
             set = {{ \"workload[0].parallelism\" = \"dp\" }}\n[[variants]]\nname = \"dp_zero3\"\n\
             set = {{ \"workload[0].parallelism\" = \"dp_zero3\" }}\n"
        )
    };
    for notify in ["notify_latency = \"2us\"\n", ""] {
        let l = load(&src(notify));
        let (notes, sums) = same_bytes_summaries("training", &l);
        assert!(
            notes.iter().all(|n| n.contains("running on 2")),
            "{notify}: {notes:?}"
        );
        assert!(sums.iter().all(|s| s.outcome == "completed"), "{sums:?}");
        for v in ["pp", "dp", "dp_zero3"] {
            let mut sim = build(
                &src(notify).replace("parallelism = \"pp\"", &format!("parallelism = \"{v}\"")),
            );
            assert!(sim.set_threads_per_run(2).is_empty(), "{v} {notify}");
            assert_eq!(sim.shard_count(), 2, "{v} {notify}");
            assert_eq!(sim.run(&mut |_| {}), Outcome::Completed, "{v}");
            let t = &sim.trainings[0];
            let ends = t.iteration_ends(|p| sim.phase_times(p).1);
            assert_eq!(ends.len(), 2, "{v}");
            assert!(ends.iter().all(|e| e.is_some()), "{v}: {ends:?}");
            assert!(
                fabricsim::analysis::invariants::check(&sim).is_empty(),
                "{v}"
            );
        }
    }
    // Data parallel with ZeRO-3 on a fat tree cut by pods, no latency: the joins of its
    // gathers hear of transfers from every pod in no time, and a join's releases taken
    // late may come after later ones of its own shard (it begins at the latest).
    let fat = "name = \"dp\"\nseed = 35\nmax_time = \"1s\"\n[topology]\nkind = \"fat_tree\"\n\
               k = 4\nrate = \"100Gbps\"\nlink_delay = \"1us\"\n[cc]\nalgorithm = \"dcqcn\"\n\
               [[workload]]\nkind = \"training\"\nparallelism = \"dp_zero3\"\niterations = 2\n\
               microbatches = 4\nactivation = \"64KB\"\nforward = \"20us\"\nbackward = \"3us\"\n\
               compute = \"300us\"\ngradient = \"1MB\"\nparameters = \"256KB\"\n";
    let (notes, sums) = same_bytes_summaries("training-fat-tree", &load(fat));
    assert!(notes.is_empty(), "{notes:?}");
    assert!(sums.iter().all(|s| s.outcome == "completed"), "{sums:?}");
    let mut sim = build(fat);
    assert!(sim.set_threads_per_run(3).is_empty());
    assert_eq!(sim.shard_count(), 3);
    // A pipeline whose forward phases last 300 ns, less than the 1 us grid: a phase
    // that waits for one on another host would end inside the window that told it,
    // so the cut refuses, and says how soon it acts.
    let short = fat
        .replace("\"dp_zero3\"", "\"pp\"")
        .replace("forward = \"20us\"", "forward = \"300ns\"");
    let mut sim = build(&short);
    let notes = sim.set_threads_per_run(2);
    assert_eq!(sim.shard_count(), 1, "{notes:?}");
    assert!(
        notes.iter().any(|n| n.contains("acts 300.000ns after it")),
        "{notes:?}"
    );
    // A flow that starts when another host's flow is received, in no time (AlltoAll in
    // rounds): a start cannot be taken late, so one thread, and why.
    let rounds = src("").replace(
        "kind = \"training\"\nparallelism = \"pp\"\n",
        "kind = \"collective\"\ncollective = \"alltoall\"\nrounds = true\nsize = \"64KB\"\n",
    );
    let rounds = rounds[..rounds.find("iterations").unwrap()].to_string();
    let mut sim = build(&rounds);
    let notes = sim.set_threads_per_run(2);
    assert_eq!(sim.shard_count(), 1);
    assert!(
        notes.iter().any(|n| n.contains("notify_latency")),
        "{notes:?}"
    );
}

#[test]
fn a_quiet_stretch_longer_than_the_stall_timeout_does_not_hold_a_sharded_run() {
    // Nothing in flight between 100 us and 5 ms, with a stall timeout of 1 ms: nothing
    // can stall then, and the windows must go on to the next flow (they once stopped
    // at the stall time and never reached it).
    let flows = "[[workload]]\nkind = \"flows\"\nflows = [\n\
                 { src = 0, dst = 15, size = \"64KB\" },\n\
                 { src = 15, dst = 0, size = \"64KB\", start = \"5ms\" },\n]\n";
    let src = fat_tree(4, flows).replacen("[topology]", "stall_timeout = \"1ms\"\n[topology]", 1);
    let (notes, sums) = same_bytes_summaries("quiet", &load(&src));
    assert!(notes.is_empty(), "{notes:?}");
    assert_eq!(sums[0].outcome, "completed");
}

#[test]
fn two_campuses_cut_at_the_long_haul_give_the_same_bytes_with_dr_notifications() {
    // Document 001's two campuses, 120 km apart: the cut is the DCI (600 us of
    // lookahead), and the DRs' own CNPs (threshold trigger) go back inside each campus.
    let mut flows = String::new();
    for h in 0..8 {
        flows += &format!(
            "{{ src = {h}, dst = {}, size = \"2MB\" }},\n",
            8 + (h + 3) % 8
        );
        flows += &format!("{{ src = {}, dst = {h}, size = \"2MB\" }},\n", 8 + h);
    }
    let src = format!(
        "name = \"campuses\"\nseed = 3\nmax_time = \"20ms\"\n[topology]\nkind = \"multi_campus\"\n\
         leaves = 2\nspines = 2\nservers_per_leaf = 4\nuplinks_per_pair = 2\ndr_switches = 1\n\
         campus_to_dr_capacity = \"3200Gbps\"\ndci_capacity = \"400Gbps\"\nfiber_km = 120\n\
         dr_buffer = \"32MB\"\nlink_delay = \"1us\"\n[fabric.dr]\ncnp = \"dr\"\n\
         cnp_threshold = \"256KB\"\n[transport]\nrto = \"20ms\"\n[cc]\nalgorithm = \"dcqcn\"\n\
         [[workload]]\nkind = \"flows\"\nflows = [\n{flows}]\n"
    );
    let mut sim = build(&src);
    sim.set_threads_per_run(2);
    assert_eq!(sim.shard_count(), 2);
    // Windows reach across most of the lookahead (600 us, a whole number of 1 us
    // cells), not one cell each: far fewer windows than cells, but for the cells
    // where the run could complete, so the run ends where the serial one does.
    assert_eq!(sim.run(&mut |_| {}), Outcome::Completed);
    let (windows, span) = sim.windows();
    assert_eq!(span, 600 * fabricsim::base::units::US);
    let work = sim.parallel_work().unwrap();
    assert_eq!((work.shards, work.windows), (2, windows));
    assert!(work.handoffs > 0 && work.lookahead_ns >= 600_000.0);
    let cells = sim.ctx.now / fabricsim::base::units::US;
    assert!(windows * 8 < cells, "{windows} windows for {cells} cells");
    let (notes, sums) = same_bytes_summaries("campuses", &load(&src));
    // (Three threads asked for: two campuses make two shards.)
    assert!(
        notes.iter().all(|n| n.contains("running on 2")),
        "{notes:?}"
    );
    assert_eq!(sums[0].outcome, "completed");
    let lh = sums[0].long_haul.as_ref().expect("long-haul figures");
    assert!(lh.dr_cnps > 0, "no DR notification: {lh:?}");
    // The RED trigger: each DR draws from its own generator, in its campus's shard.
    let red = src.replace("cnp_threshold = \"256KB\"\n", "trigger = \"red\"\n");
    assert_ne!(red, src);
    let (notes, sums) = same_bytes_summaries("campuses-red", &load(&red));
    assert!(
        notes.iter().all(|n| n.contains("running on 2")),
        "{notes:?}"
    );
    assert_eq!(sums[0].outcome, "completed");
    let lh = sums[0].long_haul.as_ref().expect("long-haul figures");
    assert!(lh.dr_cnps > 0, "no DR notification drawn by RED: {lh:?}");
}

/// A sample of the shipped scenarios, cut as the golden test cuts them, on 1, 2 and 3
/// threads: the default suite's share of the exhaustive test below (a fabric with PFC,
/// one with PFC and DCQCN under incast, hardware collectives).
#[test]
fn a_sample_of_shipped_scenarios_give_the_same_bytes_on_1_2_and_3_threads() {
    let sample = ["quickstart", "incast-pfc", "sunway-collectives"];
    let sharded = shipped_on_1_2_and_3_threads(&|name| sample.contains(&name));
    assert_eq!(sharded, sample, "each of the sample runs sharded");
}

#[test]
#[ignore = "exhaustive: cargo test --workspace --release -- --ignored exhaustive"]
fn exhaustive_shipped_scenarios_give_the_same_bytes_on_1_2_and_3_threads() {
    let sharded = shipped_on_1_2_and_3_threads(&|_| true);
    // The ones that cut today (and must keep cutting: a feature check that grows too
    // wide would make this test vacuous).
    for want in [
        "ecmp-polarization",
        "pfc-deadlock",
        "quickstart",
        "acc-victim",
        "sunway-bandwidth",
        "gse-vs-roce",
        "incast-pfc",
        "asymmetry",
        "longhaul-cnp",
        "sunway-collectives",
        "gse-ber",
        "sunway-faults",
    ] {
        assert!(
            sharded.iter().any(|s| s == want),
            "{want} no longer runs sharded: {sharded:?}"
        );
    }
}

/// Runs the shipped scenarios whose case name `keep` takes on 1, 2 and 3 threads and
/// returns the names of those the parallel engine cut (the others fall back to one
/// thread before anything runs, which is checked).
fn shipped_on_1_2_and_3_threads(keep: &dyn Fn(&str) -> bool) -> Vec<String> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios");
    // Every shipped scenario is a case.
    let mut shipped: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .map(|p| p.file_name().unwrap().to_string_lossy().to_string())
        .collect();
    // The golden test leaves these two out; shortened here so that they complete.
    const MORE: &[(&str, &str, &[&str])] = &[
        (
            "sunway-adaptive",
            "sunway-adaptive.toml",
            &["workload[0].size=\"128KiB\""],
        ),
        (
            "sunway-faults",
            "sunway-faults.toml",
            &["workload[0].size=\"128KiB\""],
        ),
    ];
    let all = || cases::CASES.iter().chain(MORE);
    shipped.retain(|f| !all().any(|c| c.1 == f));
    assert!(shipped.is_empty(), "not in the cases: {shipped:?}");
    let mut sharded = Vec::new();
    for (name, file, sets) in all().filter(|c| keep(c.0)) {
        let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
        let l = fabricsim::load_file(&dir.join(file), &sets).unwrap_or_else(|e| panic!("{e}"));
        // Runs the parallel engine does not cover fall back before anything runs, so
        // their bytes are the serial engine's by construction: check that they say so.
        let t0 = std::time::Instant::now();
        let plan = runner::plan(&l, None).unwrap();
        let falls_back = plan.iter().all(|p| {
            let mut sim = p.build(&l).unwrap();
            let notes = sim.set_threads_per_run(3);
            sim.shard_count() == 1 && !notes.is_empty()
        });
        if falls_back {
            eprintln!(
                "{name}: falls back ({:.1} s to build)",
                t0.elapsed().as_secs_f64()
            );
            continue;
        }
        let t0 = std::time::Instant::now();
        same_bytes(name, &l);
        eprintln!(
            "{name}: 1, 2, 3 threads in {:.1} s",
            t0.elapsed().as_secs_f64()
        );
        sharded.push(name.to_string());
    }
    sharded
}

#[test]
fn a_capture_of_ports_in_every_shard_gives_the_same_file_on_1_2_and_3_threads() {
    // Four NICs, one per pod, start their first frames at the same instant, and an
    // incast under PFC sends pause frames back over the cut: the capture keeps the
    // first frames by (time, interface, frame), whichever shard noted them. With room
    // for three frames, the three NICs named first are kept.
    let capture = |limit: u32| {
        fat_tree(
            4,
            &format!(
                "[fabric]\nbuffer = \"600KB\"\n[cc]\nalgorithm = \"none\"\n\
                 [[workload]]\nkind = \"incast\"\nsenders = 12\nreceiver = 0\nsize = \"300KB\"\n\
                 [[workload]]\nkind = \"permutation\"\nsize = \"50KB\"\n\
                 [record.pcap]\nports = [\"host15\", \"host10\", \"host5\", \"host0\", \
                 \"edge0.0:2\", \"agg0.0:2\", \"core0:1\", \"agg3.1:2\", \"edge0.0:0\"]\nlimit = {limit}\n"
            ),
        )
    };
    let mut all = 0;
    for limit in [1_000_000, 3] {
        let (notes, outcomes) = same_bytes(&format!("capture-{limit}"), &load(&capture(limit)));
        assert!(notes.is_empty(), "{notes:?}");
        assert_eq!(outcomes, ["completed"]);
        let mut sim = build(&capture(limit));
        sim.set_threads_per_run(3);
        assert_eq!(sim.run(&mut |_| {}), Outcome::Completed);
        let cap = sim.fabric.capture.as_deref().unwrap();
        let ifaces: Vec<u32> = cap.records().iter().map(|r| r.iface).collect();
        if limit == 3 {
            assert_eq!(ifaces, [0, 1, 2]);
            assert!(cap.records().iter().all(|r| r.t == 0));
            assert_eq!(cap.missed(), all - 3);
            continue;
        }
        assert_eq!(cap.missed(), 0);
        all = ifaces.len() as u64;
        // Every captured port sent something, pause frames among them.
        for i in 0..9 {
            assert!(ifaces.contains(&i), "nothing captured on interface {i}");
        }
        let pauses = (cap.records().iter())
            .filter(|r| r.desc.kind() == fabricsim::kernel::packet::PacketKind::Pause)
            .count();
        assert!(pauses > 0, "no PFC frame captured");
        let keys: Vec<_> = cap.records().iter().map(|r| r.key()).collect();
        assert!(keys.windows(2).all(|w| w[0] < w[1]), "not in key order");
    }
}

#[test]
fn hardware_collectives_across_shards_give_the_same_bytes_on_1_2_and_3_threads() {
    // Document 003's NIC engines over trees spanning every pod, with traffic beside
    // them: an allreduce with two ranks a NIC and compute between iterations, the
    // result down by multicast; a barrier down by unicast; and a barrier whose
    // multicast tree loses a core link, so that ranks time out and ask again.
    let hw = |rest: &str| {
        fat_tree(
            4,
            &format!(
                "[cc]\nalgorithm = \"none\"\n[[workload]]\nkind = \"permutation\"\nsize = \"30KB\"\n\
                 [[workload]]\nkind = \"hw_collective\"\n{rest}\n"
            ),
        )
    };
    let cases = [
        (
            "hw-allreduce",
            hw(
                "collective = \"allreduce\"\ntype = \"int64\"\nop = \"sum\"\nsize = \"512B\"\n\
                fan_in = 3\nranks_per_host = 2\nrepeat = 3\ncompute = \"2us\"",
            ),
        ),
        (
            "hw-barrier-unicast",
            hw("collective = \"barrier\"\nfan_in = 2\nmulticast = false\nrepeat = 2"),
        ),
        (
            "hw-barrier-lost",
            hw(
                "collective = \"barrier\"\nfan_in = 2\ntimeout = \"20us\"\nstart = \"5us\"\n\
                [[fault]]\nkind = \"link_down\"\nlink = [\"core0\", \"agg1.0\"]\nat = \"1ns\"\n\
                [fabric.reliability]\nreconvergence_delay = \"1us\"",
            ),
        ),
    ];
    for (name, src) in &cases {
        let (notes, outcomes) = same_bytes(name, &load(src));
        assert!(notes.is_empty(), "{name} did not run sharded: {notes:?}");
        assert!(
            outcomes.iter().all(|o| o == "completed"),
            "{name}: {outcomes:?}"
        );
        let mut sim = build(src);
        sim.set_threads_per_run(3);
        assert_eq!(sim.shard_count(), 3);
        assert_eq!(sim.run(&mut |_| {}), Outcome::Completed);
        assert!(
            fabricsim::analysis::invariants::check(&sim).is_empty(),
            "{name}"
        );
        let h = sim.nics.hw.as_deref().unwrap();
        let c = &h.colls[0];
        let n = c.spec.ranks.len() as u32;
        assert!(n >= 16, "{name}: {n} ranks");
        for (i, r) in c.iters.iter().enumerate() {
            assert_eq!((r.done, r.failed), (n, 0), "{name} iteration {i}");
            assert_ne!(r.verified, Some(false), "{name} iteration {i}");
            assert!(r.finish >= r.last_entry && r.last_entry >= r.first_entry);
        }
        assert!(h.sent > 0 && h.received > 0);
        assert!(
            sim.ctx.counters.handoffs > 0,
            "{name}: nothing crossed the cut"
        );
        let copies = sim.fabric.multicast.as_ref().map_or(0, |m| m.replicas);
        assert_eq!(copies > 0, *name != "hw-barrier-unicast", "{name}");
        let timeouts: u32 = c.iters.iter().map(|r| r.timeouts).sum();
        assert_eq!(
            timeouts > 0,
            *name == "hw-barrier-lost",
            "{name}: {timeouts}"
        );
    }
}

#[test]
fn switches_sending_cnps_give_the_same_bytes_on_1_2_and_3_threads() {
    // DCQCN's forward notification (document 002): every switch notifies senders
    // itself, each drawing from its own generator and pacing in its own table, in its
    // shard; with `both` the receivers notify too.
    for from in ["switch", "both"] {
        let src = fat_tree(
            4,
            &format!(
                "[cc]\nalgorithm = \"dcqcn\"\n[cc.dcqcn]\ncnp_from = \"{from}\"\n\
                 [[workload]]\nkind = \"incast\"\nsenders = 12\nreceiver = 0\nsize = \"300KB\"\n\
                 [[workload]]\nkind = \"permutation\"\nsize = \"100KB\"\n"
            ),
        );
        let name = format!("cnp-from-{from}");
        let (notes, outcomes) = same_bytes(&name, &load(&src));
        assert!(notes.is_empty(), "{name}: {notes:?}");
        assert!(outcomes.iter().all(|o| o == "completed"), "{outcomes:?}");
        let mut sim = build(&src);
        sim.set_threads_per_run(3);
        assert_eq!(sim.shard_count(), 3);
        assert_eq!(sim.run(&mut |_| {}), Outcome::Completed);
        let from_switches: u32 = sim.nics.flows.iter().map(|f| f.dr_cnps_received).sum();
        assert!(from_switches > 0, "{name}: no switch CNP reached a sender");
        assert!(sim.ctx.counters.handoffs > 0);
    }
}

#[test]
fn a_pfc_deadlock_whose_cycle_crosses_shards_is_found_alike() {
    let src = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/pfc-deadlock.toml"),
    )
    .unwrap();
    let mut reports = Vec::new();
    for threads in [1, 3] {
        let mut sim = build(&src);
        sim.set_threads_per_run(threads);
        assert_eq!(sim.shard_count(), threads, "the ring of 4 switches cuts");
        match sim.run(&mut |_| {}) {
            Outcome::Stalled(r) => reports.push(r),
            o => panic!("{threads} threads: {o:?}"),
        }
    }
    assert!(!reports[0].deadlock_cycle.is_empty(), "{:?}", reports[0]);
    assert_eq!(reports[0], reports[1]);
}

#[test]
fn packets_are_conserved_and_every_invariant_holds_sharded() {
    let src = fat_tree(
        4,
        "[fabric]\nbuffer = \"1MB\"\n[cc]\nalgorithm = \"dcqcn\"\n[[workload]]\nkind = \"incast\"\nsenders = 15\nreceiver = 0\nsize = \"300KB\"\n",
    );
    let mut sim = build(&src);
    assert!(sim.set_threads_per_run(3).is_empty());
    assert_eq!(sim.run(&mut |_| {}), Outcome::Completed);
    let bad = fabricsim::analysis::invariants::check(&sim);
    assert!(bad.is_empty(), "{bad:?}");
    assert!(
        sim.ctx.counters.handoffs > 0,
        "frames crossed between shards"
    );
    assert!(
        sim.ctx.counters.pfc_frames > 0,
        "the incast paused across shards"
    );
}

#[test]
fn pausing_a_sharded_run_changes_nothing() {
    // With a capture whose limit is reached mid-run: merged at each pause, the logs go
    // on keeping the first frames by key.
    let src = fat_tree(
        4,
        "[[workload]]\nkind = \"permutation\"\nsize = \"100KB\"\n\
         [record.pcap]\nports = [\"host0\", \"host15\", \"core0:0\", \"agg1.0:3\"]\nlimit = 40\n",
    );
    let digest = |sim: &Simulation| {
        let f: Vec<_> = sim
            .nics
            .flows
            .iter()
            .map(|f| (f.finish, f.sender_done))
            .collect();
        let cap = sim.fabric.capture.as_deref().unwrap();
        let frames: Vec<_> = cap.records().iter().map(|r| r.key()).collect();
        assert_eq!(frames.len(), 40);
        assert!(cap.missed() > 0);
        let caught = (frames, cap.missed());
        (f, sim.packet_hops(), sim.ctx.now, caught)
    };
    let mut whole = build(&src);
    whole.set_threads_per_run(2);
    assert_eq!(whole.run(&mut |_| {}), Outcome::Completed);
    let mut paused = build(&src);
    paused.set_threads_per_run(2);
    let mut t = 0;
    let outcome = loop {
        t += 3_333_333; // 3.3 us: not a multiple of the 1 us windows
        if let Some(o) = paused.run_until(t, &mut |_| {}) {
            break o;
        }
        assert_eq!(paused.ctx.now, t);
    };
    assert_eq!(outcome, Outcome::Completed);
    assert_eq!(digest(&whole), digest(&paused));
    // Training without a notification latency: releases taken late at the barriers
    // before each pause, and the pauses themselves, change nothing either (the serial
    // run is the reference).
    let src = "name = \"dp\"\nseed = 35\nmax_time = \"1s\"\n[topology]\nkind = \"fat_tree\"\n\
               k = 4\nrate = \"100Gbps\"\nlink_delay = \"1us\"\n[cc]\nalgorithm = \"dcqcn\"\n\
               [[workload]]\nkind = \"training\"\nparallelism = \"dp_zero3\"\niterations = 2\n\
               microbatches = 4\nactivation = \"64KB\"\nforward = \"20us\"\nbackward = \"3us\"\n\
               compute = \"300us\"\ngradient = \"1MB\"\nparameters = \"256KB\"\n";
    let digest = |sim: &Simulation| {
        let f: Vec<_> = (sim.nics.flows.iter())
            .map(|f| (f.spec.start, f.finish, f.sender_done))
            .collect();
        let phases: Vec<_> = (0..sim.phase_count()).map(|p| sim.phase_times(p)).collect();
        (f, phases, sim.packet_hops(), sim.ctx.now)
    };
    let mut serial = build(src);
    assert_eq!(serial.run(&mut |_| {}), Outcome::Completed);
    let mut paused = build(src);
    assert!(paused.set_threads_per_run(3).is_empty());
    let mut t = 0;
    let outcome = loop {
        t += 7_777_777; // 7.8 us
        if let Some(o) = paused.run_until(t, &mut |_| {}) {
            break o;
        }
    };
    assert_eq!(outcome, Outcome::Completed);
    assert_eq!(digest(&serial), digest(&paused));
}

#[test]
fn what_cannot_be_cut_runs_on_one_thread_and_says_why() {
    // More threads than pods: the pods split into their edge switches (with their
    // hosts), and no further: as many shards as edge switches.
    let mut sim = build(&fat_tree(
        4,
        "[[workload]]\nkind = \"permutation\"\nsize = \"10KB\"\n",
    ));
    let notes = sim.set_threads_per_run(16);
    assert_eq!(sim.shard_count(), 8);
    assert!(notes.iter().any(|n| n.contains("8 groups")), "{notes:?}");
    // A run already started stays as it is, serial or cut.
    let src = fat_tree(
        4,
        "[[workload]]\nkind = \"permutation\"\nsize = \"100KB\"\n",
    );
    for threads in [1, 2] {
        let mut sim = build(&src);
        sim.set_threads_per_run(threads);
        assert_eq!(sim.run_until(5_000_000, &mut |_| {}), None);
        assert!(sim.set_threads_per_run(threads).is_empty());
        let notes = sim.set_threads_per_run(3 - threads);
        assert_eq!(sim.shard_count(), threads);
        assert!(
            notes.iter().any(|n| n.contains("already started")),
            "{notes:?}"
        );
        assert_eq!(sim.run(&mut |_| {}), Outcome::Completed);
    }
    // A cable without delay: no lookahead.
    let mut sim = build(
        "name = \"z\"\n[topology]\nkind = \"fat_tree\"\nk = 4\nrate = \"100Gbps\"\nlink_delay = \"0ns\"\n\
         [fabric]\nswitch_latency = \"0ns\"\n[[workload]]\nkind = \"permutation\"\nsize = \"10KB\"\n",
    );
    let notes = sim.set_threads_per_run(2);
    assert_eq!(sim.shard_count(), 1);
    assert!(notes.iter().any(|n| n.contains("no delay")), "{notes:?}");
    assert_eq!(sim.run(&mut |_| {}), Outcome::Completed);
    // Cut, then asked for one thread before the run: the serial run, flow for flow.
    let src = fat_tree(
        4,
        "[[workload]]\nkind = \"poisson\"\ncdf = \"websearch\"\nload = 0.3\nduration = \"100us\"\n",
    );
    let finish = |sim: &Simulation| -> Vec<Option<u64>> {
        sim.nics.flows.iter().map(|f| f.finish).collect()
    };
    let mut serial = build(&src);
    assert_eq!(serial.run(&mut |_| {}), Outcome::Completed);
    let mut recut = build(&src);
    assert!(recut.set_threads_per_run(3).is_empty());
    assert_eq!(recut.shard_count(), 3);
    assert!(recut.set_threads_per_run(1).is_empty());
    assert_eq!(recut.shard_count(), 1);
    assert_eq!(recut.run(&mut |_| {}), Outcome::Completed);
    assert_eq!(finish(&serial), finish(&recut));
    assert_eq!(serial.packet_hops(), recut.packet_hops());
}

#[test]
fn a_dependency_across_shards_fires_after_exactly_its_notification_latency() {
    // Flow 1 (host 15, pod 3) waits for flow 0 (host 0 -> 1, pod 0) to reach its
    // receiver, and hears of it 5 us later: in the serial engine and cut into shards.
    let flows = "[[workload]]\nkind = \"flows\"\nflows = [\n\
                 { src = 0, dst = 1, size = \"64KB\" },\n\
                 { src = 15, dst = 14, size = \"64KB\", after = 0 },\n]\n";
    let src = fat_tree(
        4,
        &format!("[transport]\nnotify_latency = \"5us\"\n{flows}"),
    );
    for threads in [1, 2, 3] {
        let mut sim = build(&src);
        let notes = sim.set_threads_per_run(threads);
        assert!(notes.is_empty(), "{notes:?}");
        assert_eq!(sim.shard_count(), threads);
        assert_eq!(sim.run(&mut |_| {}), Outcome::Completed);
        let (a, b) = (&sim.nics.flows[0], &sim.nics.flows[1]);
        assert_eq!(
            b.spec.start,
            a.finish.unwrap() + 5_000_000,
            "on {threads} threads"
        );
    }
    // Chained iterations of a collective: each starts when the previous has ended
    // (accounted between windows), plus the latency; the same bytes on 1, 2, 3 threads.
    let ring = fat_tree(
        4,
        "[transport]\nnotify_latency = \"2us\"\n[[workload]]\nkind = \"collective\"\n\
         collective = \"ring_allreduce\"\nsize = \"64KB\"\nrepeat = 3\n",
    );
    let (notes, sums) = same_bytes_summaries("ring-repeat", &load(&ring));
    assert!(notes.is_empty(), "{notes:?}");
    assert_eq!(sums[0].outcome, "completed");
    assert_eq!((sums[0].jobs, sums[0].jobs_completed), (3, 3));
    assert!(sums[0].jct_mean_ns >= sums[0].jct_lower_bound_ns);
    // Without a latency a shard could not hear of the other's flow in time: the run
    // stays on one thread and says what to set (asked for three, it tries two first,
    // and says so too).
    for threads in [2, 3] {
        let mut sim = build(&fat_tree(4, flows));
        let notes = sim.set_threads_per_run(threads);
        assert_eq!(sim.shard_count(), 1);
        assert!(
            notes
                .iter()
                .any(|n| n.contains("notify_latency") && n.contains("running on one thread")),
            "{notes:?}"
        );
        assert_eq!(
            notes.iter().any(|n| n.contains("even cut into 2 shards")),
            threads == 3,
            "{notes:?}"
        );
    }
    let mut sim = build(&fat_tree(4, flows));
    sim.set_threads_per_run(3);
    assert_eq!(sim.run(&mut |_| {}), Outcome::Completed);
    let (a, b) = (&sim.nics.flows[0], &sim.nics.flows[1]);
    assert_eq!(b.spec.start, a.finish.unwrap());
    // Both flows in pod 0, on its two edge switches: cut into eight shards (an edge
    // switch each) the dependency would cross, cut into four (a pod each) it does not,
    // so the run takes four, says why, and gives the serial run's flows.
    let pod = fat_tree(
        4,
        "[[workload]]\nkind = \"flows\"\nflows = [\n\
         { src = 0, dst = 1, size = \"64KB\" },\n\
         { src = 2, dst = 3, size = \"64KB\", after = 0 },\n\
         { src = 12, dst = 8, size = \"64KB\" },\n]\n",
    );
    let mut serial = build(&pod);
    assert_eq!(serial.run(&mut |_| {}), Outcome::Completed);
    let mut sim = build(&pod);
    let notes = sim.set_threads_per_run(8);
    assert_eq!(sim.shard_count(), 4, "{notes:?}");
    assert!(
        notes
            .iter()
            .any(|n| n.contains("cut into 8 shards") && n.contains("running on 4 shards")),
        "{notes:?}"
    );
    assert_eq!(sim.run(&mut |_| {}), Outcome::Completed);
    let (a, b) = (&sim.nics.flows[0], &sim.nics.flows[1]);
    assert_eq!(b.spec.start, a.finish.unwrap());
    assert_eq!(
        fabricsim::output::flows_csv(&sim),
        fabricsim::output::flows_csv(&serial)
    );
}

#[test]
fn a_livelock_is_stopped_and_named_in_a_sharded_run_too() {
    // Two leaves, one host each: two shards. A 1 ps retransmission timer (set through
    // the library, past the validator's floor) reschedules itself at one instant, so a
    // shard's window would never end; a 1 ps sampling interval keeps the caller's thread
    // sampling. Both are stopped and named, within a wall-time budget.
    let src = "name = \"t\"\nmax_time = \"1ms\"\n[topology]\nkind = \"leaf_spine\"\nleaves = 2\n\
               spines = 1\nservers_per_leaf = 1\nhost_rate = \"100Gbps\"\nlink_delay = \"1us\"\n\
               [record]\nqueue_interval = \"10us\"\n[[workload]]\nkind = \"flows\"\n\
               flows = [{ src = 0, dst = 1, size = \"1MB\" }]\n";
    for (what, suspect, kind) in [
        ("rto", "transport.rto", "Rto"),
        ("sampling", "record.queue_interval", "Sample"),
    ] {
        let mut sim = build(src);
        if what == "rto" {
            sim.ctx.params.rto = 1;
        } else {
            sim.ctx.params.queue_interval = Some(1);
        }
        let notes = sim.set_threads_per_run(2);
        assert!(notes.is_empty(), "{notes:?}");
        assert_eq!(sim.shard_count(), 2);
        let t = std::time::Instant::now();
        let o = sim.run(&mut |_| {});
        assert!(
            t.elapsed().as_secs_f64() < 60.0,
            "{what}: {:?}",
            t.elapsed()
        );
        let Outcome::Livelock(r) = o else {
            panic!("{what}: expected a livelock, got {o:?}");
        };
        assert!(r.suspect.contains(suspect), "{what}: {r}");
        assert!(r.kinds.iter().any(|k| k.0 == kind), "{what}: {r}");
        assert!(r.sampled > 0 && r.at_ps < 1_000_000_000, "{what}: {r}");
    }
}

#[test]
fn the_critical_path_counts_each_windows_busiest_shard() {
    // Traffic inside pod 0 only: one shard runs every event, the other three none, so
    // the critical path is every event and a core per shard could gain nothing.
    let local = fat_tree(
        4,
        "[[workload]]\nkind = \"flows\"\nflows = [\n\
         { src = 0, dst = 1, size = \"256KB\" },\n{ src = 1, dst = 2, size = \"256KB\" },\n\
         { src = 2, dst = 3, size = \"256KB\" },\n{ src = 3, dst = 0, size = \"256KB\" },\n]\n",
    );
    let mut sim = build(&local);
    assert!(sim.set_threads_per_run(4).is_empty());
    assert_eq!(sim.run(&mut |_| {}), Outcome::Completed);
    let w = sim.parallel_work().unwrap();
    assert_eq!(w.shards, 4);
    assert_eq!(w.critical_path_events, sim.events());
    assert_eq!(w.parallelism, 1.0);
    // The threads of the idle shards wait at every barrier for the busy one's; on one
    // thread nothing waits.
    if w.threads > 1 {
        assert!(w.barrier_wait_seconds_max > 0.0, "{w:?}");
        assert!(
            w.barrier_wait_seconds_max >= w.barrier_wait_seconds,
            "{w:?}"
        );
        // Every thread meets at each of a window's three barriers, and each meeting is
        // counted where it happened (which of them takes longest depends on the
        // machine's other work: not tested).
        let [start, events, handover] = w.barrier_wait_by_barrier;
        assert!(start > 0.0 && events > 0.0 && handover > 0.0, "{w:?}");
    } else {
        assert_eq!(
            (w.barrier_wait_seconds, w.barrier_wait_seconds_max),
            (0.0, 0.0)
        );
        assert_eq!(w.barrier_wait_by_barrier, [0.0; 3]);
    }
    // A permutation over every pod: each window's busiest shard runs well under all the
    // window's events (summing the shards instead of taking the busiest would give 1;
    // counts not reset between windows, less than 1), and no cut into 4 gains more
    // than 4.
    let spread = fat_tree(
        4,
        "[[workload]]\nkind = \"permutation\"\nsize = \"256KB\"\n",
    );
    let mut sim = build(&spread);
    assert!(sim.set_threads_per_run(4).is_empty());
    assert_eq!(sim.run(&mut |_| {}), Outcome::Completed);
    let w = sim.parallel_work().unwrap();
    assert!(
        w.critical_path_events * 4 >= sim.events() && w.critical_path_events < sim.events(),
        "{w:?}, {} events",
        sim.events()
    );
    assert!(w.parallelism > 2.0 && w.parallelism <= 4.0, "{w:?}");
}

/// The indices the per-event path reads without a bounds check (`base/trusted.rs`) are
/// checked once a model is built and once it is cut into shards: a model cut in two
/// passes, and one whose port names a queue pool, or whose link names a far-end port,
/// outside its table is refused.
#[test]
fn a_model_whose_index_leaves_its_table_is_refused() {
    let src = fat_tree(
        4,
        "[cc]\nalgorithm = \"none\"\n[[workload]]\nkind = \"permutation\"\nsize = \"200KB\"\n",
    );
    let mut sim = build(&src);
    sim.check_indices();
    sim.set_shards(2, 2);
    assert_eq!(sim.fabric.queue_pools.len(), 2, "the model was cut in two");
    sim.check_indices();
    let refused = |corrupt: &dyn Fn(&mut Simulation)| {
        let mut sim = build(&src);
        corrupt(&mut sim);
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| sim.check_indices()));
        let msg = r.expect_err("refused");
        msg.downcast_ref::<String>().cloned().unwrap_or_default()
    };
    let pools = refused(&|s| s.fabric.ports[3].pool = 1);
    assert!(pools.contains("a queue pool outside its table"), "{pools}");
    let n = build(&src).fabric.ports.len() as u32;
    let far = refused(&|s| s.fabric.links[5].to_port = fabricsim::base::ids::PortId(n));
    assert!(far.contains("a link's far end outside its table"), "{far}");
}
