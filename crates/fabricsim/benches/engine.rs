//! Criterion benchmarks of the hot path: the event queue alone, and a small fat-tree
//! permutation end to end (the same kind of work as `fabricsim bench`, small enough for
//! criterion's repetitions), serially and cut into shards (the cross-shard hand-off). Run with `cargo bench -p fabricsim --features bench --bench engine`.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use fabricsim::kernel::events::{Event, EventQueue};
use fabricsim::sim::Simulation;
use std::hint::black_box;
use std::path::Path;

fn event_queue(c: &mut Criterion) {
    // A steady state of ~10k pending events, each pop followed by a push 0.3-1.3 us ahead,
    // as links and ports do.
    let mut g = c.benchmark_group("event_queue");
    g.throughput(Throughput::Elements(100_000));
    g.bench_function("pop_push_10k_pending", |b| {
        b.iter(|| {
            let mut q = EventQueue::with_capacity(10_000);
            let mut x = 12345u64;
            for i in 0..10_000u32 {
                q.push(
                    i as u64 * 100,
                    Event::LinkArrive(fabricsim::base::ids::LinkId(i)),
                );
            }
            for _ in 0..100_000 {
                let (t, ev) = q.pop().expect("non-empty");
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                q.push(t + 300_000 + (x >> 44), ev);
            }
            black_box(q.len())
        })
    });
    g.finish();
}

fn small_fat_tree(c: &mut Criterion) {
    let src = fabricsim::run::bench::scenario_toml(4).replace("2MB", "256KB");
    let l = fabricsim::load_str(&src, "bench", Path::new("."), &[]).expect("valid");
    let mut probe = Simulation::build(&l.scenario, "bench", Path::new(".")).expect("builds");
    probe.run(&mut |_| {});
    let hops = probe.packet_hops();
    let mut g = c.benchmark_group("simulation");
    g.throughput(Throughput::Elements(hops));
    g.sample_size(20);
    g.bench_function("fat_tree_k4_permutation_256KB", |b| {
        b.iter(|| {
            let mut sim = Simulation::build(&l.scenario, "bench", Path::new(".")).expect("builds");
            sim.run(&mut |_| {});
            black_box(sim.packet_hops())
        })
    });
    g.finish();
}

/// The cross-shard hand-off: the same small permutation cut into 4 shards run
/// in turn on one thread, beside the serial run above. Every inter-pod frame crosses one
/// or two cut links, so the difference per hop is what windows and hand-overs cost
/// without any parallelism to pay for them.
fn sharded_fat_tree(c: &mut Criterion) {
    let src = fabricsim::run::bench::scenario_toml(4).replace("2MB", "256KB");
    let l = fabricsim::load_str(&src, "bench", Path::new("."), &[]).expect("valid");
    let mut probe = Simulation::build(&l.scenario, "bench", Path::new(".")).expect("builds");
    probe.set_shards(4, 1);
    probe.run(&mut |_| {});
    let mut g = c.benchmark_group("simulation");
    g.throughput(Throughput::Elements(probe.packet_hops()));
    g.sample_size(20);
    g.bench_function("fat_tree_k4_permutation_256KB_4_shards_1_thread", |b| {
        b.iter(|| {
            let mut sim = Simulation::build(&l.scenario, "bench", Path::new(".")).expect("builds");
            sim.set_shards(4, 1);
            sim.run(&mut |_| {});
            black_box(sim.ctx.counters.handoffs)
        })
    });
    g.finish();
}

criterion_group!(
    benches,
    event_queue,
    binary_heap_reference,
    delay_lines,
    small_fat_tree,
    sharded_fat_tree
);
criterion_main!(benches);

fn binary_heap_reference(c: &mut Criterion) {
    // The same workload on std's binary heap, as the reference the calendar queue must beat.
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;
    let mut g = c.benchmark_group("event_queue");
    g.throughput(Throughput::Elements(100_000));
    g.bench_function("binary_heap_reference_10k_pending", |b| {
        b.iter(|| {
            let mut q: BinaryHeap<Reverse<u128>> = BinaryHeap::with_capacity(10_000);
            let mut x = 12345u64;
            let mut seq = 0u128;
            for i in 0..10_000u64 {
                q.push(Reverse(((i as u128 * 100) << 64) | seq));
                seq += 1;
            }
            for _ in 0..100_000 {
                let Reverse(k) = q.pop().expect("non-empty");
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                let t = (k >> 64) as u64 + 300_000 + (x >> 44);
                q.push(Reverse(((t as u128) << 64) | seq));
                seq += 1;
            }
            black_box(q.len())
        })
    });
    g.finish();
}

/// Links as delay lines (one pending event per link, its head packet's arrival), each fed
/// back to back every 82 ns with an occasional idle gap, as `fabric::link` does: 16 links
/// of 1 us, or the same with every fourth link 600 us long (120 km) and the calendar's
/// horizon set for it, as a long-haul run does (1 M events: about 2.5 ms simulated).
fn delay_lines(c: &mut Criterion) {
    use fabricsim::base::ids::{LinkId, PortId};
    use std::collections::VecDeque;
    const LINKS: usize = 16;
    const EVENTS: u64 = 1_000_000;
    let mut g = c.benchmark_group("event_queue");
    g.throughput(Throughput::Elements(EVENTS));
    g.sample_size(20);
    for (name, long) in [
        ("delay_lines_1us", 1_000_000),
        ("delay_lines_600us", 600_000_000),
    ] {
        let delay = |l: usize| if l.is_multiple_of(4) { long } else { 1_000_000 };
        let mut rings: Vec<VecDeque<u64>> = (0..LINKS).map(|_| VecDeque::new()).collect();
        g.bench_function(name, |b| {
            b.iter(|| {
                let mut q = EventQueue::with_capacity(LINKS * 2);
                q.set_horizon((long + 330_000) / 8 * 9);
                rings.iter_mut().for_each(VecDeque::clear);
                for l in 0..LINKS {
                    q.push(l as u64 * 300, Event::PortWake(PortId(l as u32)));
                }
                let mut x = 12345u64;
                for _ in 0..EVENTS {
                    let (t, ev) = q.pop().expect("non-empty");
                    match ev {
                        Event::PortWake(PortId(l)) => {
                            let l = l as usize;
                            x = x
                                .wrapping_mul(6364136223846793005)
                                .wrapping_add(1442695040888963407);
                            let arrival = t + delay(l);
                            rings[l].push_back(arrival);
                            if rings[l].len() == 1 {
                                q.push(arrival, Event::LinkArrive(LinkId(l as u32)));
                            }
                            let gap = if x >> 59 == 0 { x >> 38 } else { 0 };
                            q.push(t + 82_000 + gap, ev);
                        }
                        Event::LinkArrive(LinkId(l)) => {
                            let ring = &mut rings[l as usize];
                            ring.pop_front();
                            if let Some(&next) = ring.front() {
                                q.push(next, ev);
                            }
                        }
                        _ => unreachable!(),
                    }
                }
                black_box(q.len())
            })
        });
    }
    g.finish();
}
