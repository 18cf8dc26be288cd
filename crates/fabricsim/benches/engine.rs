//! Criterion benchmarks of the hot path: the event queue alone, and a small fat-tree
//! permutation end to end (the same kind of work as `fabricsim bench`, small enough for
//! criterion's repetitions). Run with `cargo bench -p fabricsim --bench engine`.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use fabricsim::engine::{Event, EventQueue};
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
                q.push(i as u64 * 100, Event::LinkArrive(fabricsim::ids::LinkId(i)));
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
    let src = fabricsim::bench::scenario_toml(4).replace("2MB", "256KB");
    let l = fabricsim::load_str(&src, "bench", Path::new("."), &[]).expect("valid");
    let mut probe = Simulation::build(&l.scenario, "bench", Path::new(".")).expect("builds");
    probe.run(&mut |_| {});
    let hops = probe.ctx.counters.packet_hops;
    let mut g = c.benchmark_group("simulation");
    g.throughput(Throughput::Elements(hops));
    g.sample_size(20);
    g.bench_function("fat_tree_k4_permutation_256KB", |b| {
        b.iter(|| {
            let mut sim = Simulation::build(&l.scenario, "bench", Path::new(".")).expect("builds");
            sim.run(&mut |_| {});
            black_box(sim.ctx.counters.packet_hops)
        })
    });
    g.finish();
}

criterion_group!(benches, event_queue, binary_heap_reference, small_fat_tree);
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
