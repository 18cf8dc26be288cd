//! Software collectives (`kind = "sw_collective"`, document 003's IMB rows): barrier,
//! AllReduce and bcast as rounds of small messages with CPU overheads, run through the
//! whole simulator on an Ethernet leaf-spine and on the Sunway credit fabric. On an idle
//! fabric their latency is analytic: a barrier takes `rounds x (L + send_overhead +
//! recv_overhead)`, `L` the ideal one-way latency of one small message.

use fabricsim::base::units::{Time, NS, US};
use fabricsim::output::{fct, jobs_csv};
use fabricsim::{analysis::invariants, load_str, Outcome, Simulation};
use std::path::Path;

/// A leaf-spine of 2 leaves x 8 hosts (100G, 1 us links) with PFC and no congestion
/// control, and one `sw_collective` entry with `fields`.
fn leaf_spine(fields: &str) -> String {
    format!(
        r#"name = "sw"
seed = 3
max_time = "20ms"
[topology]
kind = "leaf_spine"
leaves = 2
spines = 2
servers_per_leaf = 8
host_rate = "100Gbps"
link_delay = "1us"
[cc]
algorithm = "none"
[[workload]]
kind = "sw_collective"
{fields}
"#
    )
}

/// The Sunway planes (document 003) with credit flow control, the message transport and
/// the short-message fast path set up in `SETUP`.
fn sunway(fields: &str) -> String {
    format!(
        r#"name = "sw-sunway"
seed = 1
max_time = "20ms"
[topology]
kind = "sunway"
leaves = 4
spines = 3
nodes_per_leaf = 4
nodes = 16
sibling_links = 2
[fabric]
switch_latency = "100ns"
[fabric.pfc]
enabled = false
[fabric.credit]
enabled = true
[transport]
mtu = "2KiB"
header = 48
ack_size = 48
kind = "message"
[transport.message]
short_setup = "150ns"
[cc]
algorithm = "none"
[[workload]]
kind = "sw_collective"
{fields}
"#
    )
}

/// The fast-path set-up time in [`sunway`].
const SETUP: Time = 150 * NS;

fn run(src: &str) -> Simulation {
    let l = load_str(src, "t.toml", Path::new("."), &[]).unwrap_or_else(|e| panic!("{e}\n{src}"));
    let mut s =
        Simulation::build(&l.scenario, &l.file, &l.base_dir).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(s.run(&mut |_| {}), Outcome::Completed);
    let bad = invariants::check(&s);
    assert!(bad.is_empty(), "invariants violated: {bad:#?}");
    s
}

fn ceil_log2(n: u64) -> u64 {
    n.next_power_of_two().trailing_zeros() as u64
}

/// The one-way latency every message of the run has on the idle fabric (all paths have
/// the same length); fails if they differ.
fn one_latency(s: &Simulation) -> Time {
    let l = s.ideal[0];
    assert!(s.ideal.iter().all(|&x| x == l), "paths of different length");
    l
}

/// Every message met its ideal FCT: nothing queued behind anything.
fn all_ideal(s: &Simulation, extra: Time) {
    for i in 0..s.nics.flows.len() {
        assert_eq!(fct(s, i), Some(s.ideal[i] + extra), "flow {i}");
    }
}

#[test]
fn barrier_on_an_idle_leaf_is_rounds_times_latency_and_overheads() {
    let (os, or) = (US, 1500 * NS);
    for n in [2u64, 3, 5, 7, 8] {
        // The first n hosts sit below leaf 0: every message crosses one switch.
        let s = run(&leaf_spine(&format!(
            "collective = \"barrier\"\nhosts = {n}\nsend_overhead = \"1us\"\nrecv_overhead = \"1.5us\"\nstart = \"3us\""
        )));
        let rounds = ceil_log2(n);
        assert_eq!(s.nics.flows.len() as u64, n * rounds, "n = {n}");
        let l = one_latency(&s);
        all_ideal(&s, 0);
        let job = &s.nics.jobs[0];
        assert_eq!(job.started, Some(3 * US));
        let want = rounds * (l + os + or);
        assert_eq!(s.jct(0), Some(want), "n = {n}");
        assert_eq!(s.job_lower_bound(0), want, "n = {n}");
    }
}

#[test]
fn overheads_add_once_per_round() {
    let base = run(&leaf_spine("collective = \"barrier\"\nhosts = 8"));
    let slow = run(&leaf_spine(
        "collective = \"barrier\"\nhosts = 8\nsend_overhead = \"3us\"\nrecv_overhead = \"250ns\"",
    ));
    // Defaults 1 us and 1 us: +2 us and -0.75 us per round, 3 rounds.
    let d = slow.jct(0).unwrap() as i64 - base.jct(0).unwrap() as i64;
    assert_eq!(d, 3 * (2_000_000 - 750_000));
    // Zero overheads: the bound is the network alone, and the run misses it: a rank's
    // next message leaves just as the acknowledgement of the one it received, on the same
    // NIC port, so some messages wait an ACK's serialization.
    let bare = run(&leaf_spine(
        "collective = \"barrier\"\nhosts = 8\nsend_overhead = \"0us\"\nrecv_overhead = \"0us\"",
    ));
    let l = one_latency(&bare);
    assert_eq!(bare.job_lower_bound(0), 3 * l);
    assert!(bare.jct(0).unwrap() > 3 * l);
    assert!(bare.jct(0).unwrap() < 3 * l + 3 * 20 * NS);
}

#[test]
fn allreduce_and_bcast_on_an_idle_leaf_meet_their_analytic_latency() {
    let (os, or) = (US, 2 * US);
    let o = "send_overhead = \"1us\"\nrecv_overhead = \"2us\"";
    let case = |fields: &str| {
        let s = run(&leaf_spine(&format!("{fields}\n{o}")));
        let l = one_latency(&s);
        assert_eq!(s.jct(0), Some(s.job_lower_bound(0)), "{fields}");
        (s, l)
    };
    // Recursive doubling over 8: 3 rounds.
    let (s, l) = case("collective = \"allreduce\"\nhosts = 8");
    all_ideal(&s, 0);
    assert_eq!(s.nics.flows.len(), 8 * 3);
    assert_eq!(s.jct(0), Some(3 * (l + os + or)));
    // Over 6: pairs (0,1), (2,3) fold; 2 doubling rounds between 0, 2, 4, 5 plus the
    // data in and the result out. Ranks 4 and 5 sit out the fold and run a round ahead:
    // in the last doubling round rank 0's message from rank 4 (rank 2's from rank 5) is
    // already there when rank 0 gets to it, so that round costs only the overheads.
    let (s, l) = case("collective = \"allreduce\"\nhosts = 6");
    assert_eq!(s.nics.flows.len(), 4 * 2 + 2 * 2);
    assert_eq!(s.jct(0), Some(3 * (l + os + or) + os + or));
    // Rank 4's early message reaches rank 0 together with rank 2's first and waits
    // behind it (off the critical path); likewise rank 5's into rank 2.
    let late: Vec<(u32, u32)> = (0..s.nics.flows.len())
        .filter(|&i| fct(&s, i) != Some(s.ideal[i]))
        .map(|i| (s.nics.flows[i].spec.src, s.nics.flows[i].spec.dst))
        .collect();
    assert!(late.iter().all(|&(_, d)| d == 0 || d == 2), "{late:?}");
    assert!(!late.is_empty());
    // Bcast over 8 from host 5: n - 1 messages, the deepest rank 3 hops from the root.
    let (s, l) = case("collective = \"bcast\"\nhosts = 8\nroot = 5");
    all_ideal(&s, 0);
    assert_eq!(s.nics.flows.len(), 7);
    assert_eq!(s.nics.flows.iter().filter(|f| f.spec.src == 5).count(), 3);
    assert_eq!(s.jct(0), Some(3 * (l + os + or)));
    // Over 5: the root's third send (after three posts) reaches rank 4, while rank 3
    // hears after two full rounds: the later of the two.
    let (s, l) = case("collective = \"bcast\"\nhosts = 5");
    assert_eq!(s.jct(0), Some((3 * os + l + or).max(2 * (l + os + or))));
}

#[test]
fn iterations_run_back_to_back() {
    let s = run(&leaf_spine(
        "collective = \"barrier\"\nhosts = 4\nrepeat = 3\nstart = \"10us\"",
    ));
    let l = one_latency(&s);
    assert_eq!(s.nics.jobs.len(), 3);
    assert_eq!(s.nics.jobs[0].started, Some(10 * US));
    for j in 0..3 {
        assert_eq!(s.jct(j), Some(2 * (l + 2 * US)), "iteration {j}");
        if j > 0 {
            assert_eq!(s.nics.jobs[j].started, s.nics.jobs[j - 1].finish);
        }
        // An iteration's first messages leave one send overhead after it starts.
        let first = (0..s.nics.flows.len())
            .filter(|&i| s.nics.flows[i].spec.start >= s.nics.jobs[j].started.unwrap())
            .map(|i| s.nics.flows[i].spec.start)
            .min();
        assert_eq!(first, Some(s.nics.jobs[j].started.unwrap() + US));
    }
}

#[test]
fn barrier_on_the_sunway_credit_fabric() {
    // Four nodes of one leaf, on both planes: every message crosses one router of
    // either plane; the fast path's set-up comes before each message's first packet.
    let s = run(&sunway(
        "collective = \"barrier\"\nhosts = 4\nsend_overhead = \"500ns\"\nrecv_overhead = \"700ns\"",
    ));
    let l = one_latency(&s);
    all_ideal(&s, SETUP);
    let want = 2 * (l + SETUP + 500 * NS + 700 * NS);
    assert_eq!(s.jct(0), Some(want));
    // The bound knows the network's ideal, not the NIC's set-up.
    assert_eq!(s.job_lower_bound(0), want - 2 * SETUP);
    // Across leaves: contention-free or not, never below the bound.
    let s = run(&sunway("collective = \"allreduce\"\nrepeat = 2"));
    for j in 0..2 {
        assert!(s.jct(j).unwrap() >= s.job_lower_bound(j));
        assert!(s.job_lower_bound(j) >= 4 * (2 * US));
    }
}

#[test]
fn contention_only_slows_a_collective_down() {
    // All 16 hosts of the leaf-spine, large messages: the cross-leaf rounds share two
    // spines, so the AllReduce takes longer than its bound.
    let s = run(&leaf_spine("collective = \"allreduce\"\nsize = \"256KiB\""));
    assert!(s.jct(0).unwrap() > s.job_lower_bound(0));
}

#[test]
fn runs_are_deterministic_and_jobs_csv_names_the_software_collectives() {
    let src = leaf_spine("collective = \"allreduce\"\nhosts = 12\nrepeat = 2\nsize = \"4KiB\"");
    let (a, b) = (run(&src), run(&src));
    let (ja, jb) = (jobs_csv(&a), jobs_csv(&b));
    assert_eq!(ja, jb);
    let rows: Vec<&str> = ja.lines().skip(1).collect();
    assert_eq!(rows.len(), 2);
    for (j, row) in rows.iter().enumerate() {
        let cells: Vec<&str> = row.split(',').collect();
        assert_eq!(cells[0], j.to_string());
        assert_eq!(cells[1], "sw_allreduce");
        assert_eq!(cells[3], "4096");
    }
    let bar = run(&leaf_spine("collective = \"barrier\"\nhosts = 3"));
    assert!(jobs_csv(&bar)
        .lines()
        .nth(1)
        .unwrap()
        .starts_with("0,sw_barrier,0 1 2,8,"));
}

/// Two ranks per node (document 003's two CPUs per NIC): a message between the two
/// ranks of one node is no flow but `local_latency` of shared memory. A dissemination
/// barrier over 8 ranks on 4 hosts: round 0 (distance 1) has 4 local and 4 network
/// messages, rounds 1 and 2 only network ones; with a local latency below the network's,
/// the barrier takes 3 x (L + o_s + o_r) and the network carries 4 + 8 + 8 messages.
#[test]
fn ranks_sharing_a_node_exchange_through_memory() {
    let s = run(&leaf_spine(
        "collective = \"barrier\"\nhosts = 4\nranks_per_host = 2\nsend_overhead = \"1us\"\nrecv_overhead = \"1us\"\nlocal_latency = \"300ns\"",
    ));
    assert_eq!(s.nics.flows.len(), 4 + 8 + 8);
    assert!(s.nics.flows.iter().all(|f| f.spec.src != f.spec.dst));
    let l = one_latency(&s);
    assert!(l > 300 * NS);
    assert_eq!(s.jct(0), Some(3 * (l + 2 * US)));
    // A local latency above the network's makes round 0 cost it instead.
    let slow = run(&leaf_spine(
        "collective = \"barrier\"\nhosts = 4\nranks_per_host = 2\nsend_overhead = \"1us\"\nrecv_overhead = \"1us\"\nlocal_latency = \"20us\"",
    ));
    assert_eq!(slow.jct(0), Some(20 * US + 2 * US + 2 * (l + 2 * US)));
}

/// The per-byte CPU cost adds size x byte_overhead at each end of every message: a
/// barrier of 64 B messages on an idle leaf takes rounds x (L + o_s + o_r + 2 x 64 x G).
#[test]
fn byte_overhead_is_paid_at_both_ends_of_every_round() {
    let s = run(&leaf_spine(
        "collective = \"barrier\"\nhosts = 8\nsize = \"64B\"\nsend_overhead = \"1us\"\nrecv_overhead = \"1us\"\nbyte_overhead = \"2ns\"",
    ));
    let l = one_latency(&s);
    assert_eq!(s.jct(0), Some(3 * (l + 2 * US + 2 * 64 * 2 * NS)));
}

#[test]
fn a_notification_between_hosts_takes_exactly_notify_latency() {
    // Inside a barrier iteration every dependency is on one host (a rank sends once it
    // has received), so the first iteration is unchanged. The second starts when the
    // first has finished: a join point that waited for the iteration before, which tells
    // each rank, one notification later. Every message of it moves by exactly that.
    let f = "collective = \"barrier\"\nhosts = 8\nrepeat = 2";
    let base = run(&leaf_spine(f));
    let late = run(&leaf_spine(&format!(
        "{f}\n[transport]\nnotify_latency = \"5us\""
    )));
    assert_eq!(late.jct(0), base.jct(0));
    assert_eq!(late.nics.jobs[1].started, base.nics.jobs[1].started);
    assert_eq!(late.jct(1), Some(base.jct(1).unwrap() + 5 * US));
    let first_of_1 = late.nics.jobs[1].spec.first_flow as usize;
    for i in 0..late.nics.flows.len() {
        let shift = if i >= first_of_1 { 5 * US } else { 0 };
        let (b, l) = (&base.nics.flows[i], &late.nics.flows[i]);
        assert_eq!(l.spec.start, b.spec.start + shift, "flow {i} start");
        assert_eq!(fct(&late, i), fct(&base, i), "flow {i} fct");
    }
}
