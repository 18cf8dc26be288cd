//! NCCL-like channel windows (document 001) against analytic results: with the window a
//! channel moves at most `buffer` bytes per round trip of a chunk and its slot credit.

use fabricsim::analysis::invariants;
use fabricsim::base::units::ser_time;
use fabricsim::model::workload::channel_window::CREDIT_BYTES;
use fabricsim::sim::{Outcome, Simulation};
use std::path::Path;

const RATE: u64 = 100_000_000_000;

/// Two leaves 50 us apart (a long link between leaf and spine), one p2p job 0 -> 2.
fn scenario(size: u64, window: &str) -> String {
    format!(
        r#"
max_time = "1s"
[topology]
kind = "leaf_spine"
leaves = 2
spines = 1
servers_per_leaf = 2
host_rate = "100Gbps"
link_delay = "50us"
[cc]
algorithm = "none"
[[workload]]
kind = "collective"
collective = "p2p"
size = {size}
hosts = [0, 2]
{window}
"#
    )
}

fn run(src: &str) -> Simulation {
    let l = fabricsim::load_str(src, "window.toml", Path::new("."), &[]).expect("loads");
    let mut sim = Simulation::build(&l.scenario, "window.toml", Path::new(".")).expect("builds");
    assert_eq!(sim.run(&mut |_| {}), Outcome::Completed);
    let bad = invariants::check(&sim);
    assert!(bad.is_empty(), "invariants violated: {bad:#?}");
    sim
}

/// One slot: chunk, credit, chunk, credit, ... strictly in turn. The job takes the ideal
/// FCT of every chunk and of every credit between them, plus, per credit, the
/// serialization of the ACK each end sends just before (the receiver ACKs the chunk's
/// last packet, then starts the credit; the sender ACKs the credit, then starts the next
/// chunk).
#[test]
fn one_slot_alternates_chunk_and_credit_exactly() {
    let chunk = 64 * 1024u64;
    let n = 6u64;
    let sim = run(&scenario(
        n * chunk,
        &format!("window = {{ buffer = {chunk}, chunk = {chunk}, slots = 1 }}"),
    ));
    let flows = &sim.nics.flows;
    assert_eq!(flows.len() as u64, n + (n - 1), "6 chunks and 5 credits");
    let credits: Vec<usize> = (0..flows.len())
        .filter(|&i| flows[i].spec.size == CREDIT_BYTES)
        .collect();
    assert_eq!(credits.len() as u64, n - 1);
    assert!(credits.iter().all(|&i| flows[i].spec.src == 2));
    let (piece, credit) = (sim.ideal[0], sim.ideal[credits[0]]);
    let ack = ser_time(sim.ctx.params.ack_size as u64, RATE);
    let expect = n * piece + (n - 1) * (credit + 2 * ack);
    assert_eq!(sim.jct(0), Some(expect));
}

/// Several slots: the channel never beats `buffer` per (chunk FCT + credit FCT), and
/// with the window far below the bandwidth-delay product it gets close to that bound.
#[test]
fn a_channel_moves_at_most_one_buffer_per_round_trip() {
    let chunk = 32 * 1024u64;
    let slots = 4u64;
    let buffer = chunk * slots;
    let size = 40 * buffer;
    let sim = run(&scenario(
        size,
        &format!("window = {{ buffer = {buffer}, chunk = {chunk}, slots = {slots} }}"),
    ));
    let credit = (0..sim.nics.flows.len())
        .find(|&i| sim.nics.flows[i].spec.size == CREDIT_BYTES)
        .expect("credits");
    let rtt = sim.ideal[0] + sim.ideal[credit];
    let jct = sim.jct(0).expect("finished");
    let rounds = size / buffer;
    // Every slot is refilled at most once per round trip: the last buffer's chunks
    // cannot start before (rounds - 1) round trips, and take one chunk FCT themselves.
    assert!(
        jct >= (rounds - 1) * rtt + sim.ideal[0],
        "{jct} vs rtt {rtt}"
    );
    // The window's four chunks share the NIC: a round is the round trip plus sending
    // the other three chunks; within 2 % of that.
    let wire = |b: u64| ser_time(b + b.div_ceil(4096) * 58, RATE);
    let round = rtt + (slots - 1) * wire(chunk);
    assert!(
        (jct as f64) < 1.02 * (rounds * round) as f64,
        "{jct} vs {} per round",
        round
    );
    // Without a window the same transfer is one flow at line rate: far faster.
    let free = run(&scenario(size, ""));
    assert!(free.jct(0).unwrap() * 5 < jct);
}

/// Bad windows are refused at load, naming the field.
#[test]
fn a_window_with_more_slots_than_fit_is_refused() {
    let l = fabricsim::load_str(
        &scenario(
            1 << 20,
            "window = { buffer = \"1MiB\", chunk = \"512KiB\", slots = 4 }",
        ),
        "window.toml",
        Path::new("."),
        &[],
    )
    .expect("loads");
    let e = match Simulation::build(&l.scenario, "window.toml", Path::new(".")) {
        Ok(_) => panic!("a window of 4 slots of 512 KiB in 1 MiB was accepted"),
        Err(e) => e.to_string(),
    };
    assert!(e.contains("window.slots"), "{e}");
    assert!(e.contains("at most buffer / chunk = 2"), "{e}");
}
