use super::*;

#[test]
fn all_names_every_collective() {
    let names: Vec<String> = CollectiveKind::ALL
        .iter()
        .map(|k| k.name().into())
        .collect();
    assert_eq!(
        names,
        crate::base::param::serde_variants::<CollectiveKind>()
    );
}

fn bytes_from(d: &Dag, src: u32) -> u64 {
    d.transfers
        .iter()
        .filter(|t| t.src == src)
        .map(|t| t.size)
        .sum()
}

/// Topological check: every edge goes forward and the graph is acyclic.
fn acyclic(d: &Dag) -> bool {
    let n = d.transfers.len();
    let mut indeg = vec![0usize; n];
    for &(_, a) in &d.edges {
        indeg[a as usize] += 1;
    }
    let mut ready: Vec<usize> = (0..n).filter(|&i| indeg[i] == 0).collect();
    let mut seen = 0;
    while let Some(i) = ready.pop() {
        seen += 1;
        for &(b, a) in &d.edges {
            if b as usize == i {
                indeg[a as usize] -= 1;
                if indeg[a as usize] == 0 {
                    ready.push(a as usize);
                }
            }
        }
    }
    seen == n
}

#[test]
fn hierarchical_allreduce_reduces_inside_servers_and_rings_along_rails() {
    // 3 servers of 4 GPUs: hosts 10s + i.
    let ranks: Vec<u32> = (0..3)
        .flat_map(|s| (0..4).map(move |i| 10 * s + i))
        .collect();
    let servers: Vec<Vec<usize>> = (0..3).map(|s| (4 * s..4 * s + 4).collect()).collect();
    let (n, g, m, size) = (12u64, 4u64, 3u64, 12 * 4096u64);
    let d = build_hierarchical(&ranks, &servers, size, 1, 1);
    assert!(acyclic(&d));
    // n(2(g-1) + 2(m-1)) transfers.
    assert_eq!(d.transfers.len() as u64, n * (2 * (g - 1) + 2 * (m - 1)));
    let (intra, inter): (Vec<&Transfer>, Vec<&Transfer>) =
        d.transfers.iter().partition(|t| t.src / 10 == t.dst / 10);
    assert_eq!(intra.len() as u64, n * 2 * (g - 1));
    assert!(intra.iter().all(|t| t.size == size / g));
    // Across servers only between GPUs of one local index, S/(gm) each.
    assert!(inter
        .iter()
        .all(|t| t.src % 10 == t.dst % 10 && t.size == size / (g * m)));
    // Every rank sends 2(n-1)/n S, as in a flat ring.
    for &r in &ranks {
        assert_eq!(bytes_from(&d, r), 2 * (n - 1) * size / n);
    }
    // A transfer waits for the last one into its sender: all but those of the very
    // first step (a phase's first step waits for the phase before).
    assert_eq!(d.edges.len(), d.transfers.len() - n as usize);
    for &(b, a) in &d.edges {
        assert_eq!(d.transfers[b as usize].dst, d.transfers[a as usize].src);
    }
    // The memory budget counts it as a ring of n ranks, an upper bound.
    let (flows, edges) = dag_count(
        CollectiveKind::HierarchicalAllreduce,
        n,
        n,
        size,
        1,
        false,
        None,
    );
    assert!(flows >= d.transfers.len() as u64 && edges >= d.edges.len() as u64);
    // One GPU per server is a flat ring.
    let flat = build(
        CollectiveKind::HierarchicalAllreduce,
        &ranks,
        size,
        1,
        1,
        false,
    );
    assert_eq!(
        flat,
        build(CollectiveKind::RingAllreduce, &ranks, size, 1, 1, false)
    );
}

#[test]
fn nccl_bus_bandwidth_follows_nccl_tests() {
    // 1 GB in 10 ms over 8 ranks: algbw 100 GB/s; AllReduce busbw x 2(8-1)/8 = 175,
    // AlltoAll x 7/8 = 87.5, p2p x 1.
    let t = 10 * crate::base::units::MS;
    let bw = |k| nccl_bandwidths(k, 8, 1_000_000_000, t);
    assert_eq!(bw(CollectiveKind::RingAllreduce), (1e11, 1.75e11));
    assert_eq!(bw(CollectiveKind::HierarchicalAllreduce), (1e11, 1.75e11));
    assert_eq!(bw(CollectiveKind::Alltoall), (1e11, 8.75e10));
    assert_eq!(bw(CollectiveKind::P2p), (1e11, 1e11));
}

#[test]
fn ring_has_2n_minus_2_steps_of_s_over_n() {
    let ranks = [10, 11, 12, 13];
    let d = build(CollectiveKind::RingAllreduce, &ranks, 4000, 1, 1, false);
    assert_eq!(d.transfers.len(), 4 * 6);
    for &r in &ranks {
        assert_eq!(bytes_from(&d, r), 6 * 1000);
    }
    // Every transfer goes to the ring neighbour.
    assert!(d
        .transfers
        .iter()
        .all(|t| t.dst - 10 == (t.src - 10 + 1) % 4));
    // Each non-first step waits for exactly one receive into its sender.
    assert_eq!(d.edges.len(), 4 * 5);
    for &(b, a) in &d.edges {
        assert_eq!(d.transfers[b as usize].dst, d.transfers[a as usize].src);
    }
    assert!(acyclic(&d));
}

#[test]
fn ring_chunks_and_channels_keep_totals() {
    let ranks = [0, 1, 2];
    let d = build(CollectiveKind::RingAllreduce, &ranks, 6000, 2, 4, false);
    for &r in &ranks {
        assert_eq!(bytes_from(&d, r), 4 * 2000);
    }
    assert_eq!(
        d.transfers.iter().filter(|t| t.channel == 1).count(),
        3 * 4 * 4
    );
    assert!(acyclic(&d));
}

#[test]
fn alltoall_sends_s_over_n_to_every_peer() {
    let ranks = [0, 1, 2, 3];
    for rounds in [false, true] {
        let d = build(CollectiveKind::Alltoall, &ranks, 4096, 1, 1, rounds);
        assert_eq!(d.transfers.len(), 12);
        for &r in &ranks {
            assert_eq!(bytes_from(&d, r), 3 * 1024);
            let mut peers: Vec<u32> = d
                .transfers
                .iter()
                .filter(|t| t.src == r)
                .map(|t| t.dst)
                .collect();
            peers.sort();
            peers.dedup();
            assert_eq!(peers.len(), 3);
        }
        assert_eq!(d.edges.is_empty(), !rounds);
        assert!(acyclic(&d));
    }
}

#[test]
fn halving_doubling_exchanges_with_xor_partners() {
    let ranks = [0, 1, 2, 3, 4, 5, 6, 7];
    let d = build(CollectiveKind::HalvingDoubling, &ranks, 8000, 1, 1, false);
    assert_eq!(d.transfers.len(), 8 * 6);
    for &r in &ranks {
        // 2 * (S/2 + S/4 + S/8) = 2 * 7/8 S = 2(n-1)/n S
        assert_eq!(bytes_from(&d, r), 14_000);
    }
    assert!(d
        .transfers
        .iter()
        .all(|t| (t.src ^ t.dst).is_power_of_two()));
    assert!(acyclic(&d));
}

#[test]
fn lower_bound_factors() {
    assert_eq!(lower_bound_factor(CollectiveKind::RingAllreduce, 4), (6, 4));
    assert_eq!(lower_bound_factor(CollectiveKind::Alltoall, 4), (3, 4));
}

#[test]
fn nccl_tests_bus_factors_per_collective() {
    // nccl-tests' doc/PERFORMANCE.md: 2(n-1)/n for AllReduce (whatever the algorithm),
    // (n-1)/n for AllGather, ReduceScatter and AlltoAll, 1 for Broadcast.
    use CollectiveKind as K;
    for k in [
        K::RingAllreduce,
        K::TreeAllreduce,
        K::NvlsAllreduce,
        K::Allreduce,
    ] {
        assert_eq!(bus_factor(k, 8), (14, 8), "{}", k.name());
    }
    for k in [
        K::RingAllgather,
        K::RingReduceScatter,
        K::Alltoall,
        K::Allgather,
    ] {
        assert_eq!(bus_factor(k, 8), (7, 8), "{}", k.name());
    }
    assert_eq!(bus_factor(K::RingBroadcast, 8), (1, 1));
    let t = 10 * crate::base::units::MS;
    assert_eq!(
        nccl_bandwidths(K::RingAllgather, 8, 1_000_000_000, t),
        (1e11, 8.75e10)
    );
    assert_eq!(
        nccl_bandwidths(K::RingBroadcast, 8, 1_000_000_000, t),
        (1e11, 1e11)
    );
}

#[test]
fn tree_nvls_and_ring_collectives_move_their_volumes() {
    let ranks: Vec<u32> = (0..8).collect();
    let s = 8 * 4096u64;
    let total = |d: &Dag| d.transfers.iter().map(|t| t.size).sum::<u64>();
    // Two trees of 7 edges, S/2 up and down each: 2(n-1) S, as a ring; chunks keep it.
    let tree = build(CollectiveKind::TreeAllreduce, &ranks, s, 1, 4, false);
    assert!(acyclic(&tree));
    assert_eq!(total(&tree), 2 * 7 * s);
    assert!(ranks.iter().all(|&r| bytes_from(&tree, r) <= 2 * s));
    // NVLS in one server of 8: each GPU sends S + S/8 and receives as much.
    let nvls = build(CollectiveKind::NvlsAllreduce, &ranks, s, 1, 2, false);
    assert!(acyclic(&nvls));
    for &r in &ranks {
        assert_eq!(bytes_from(&nvls, r), s + s / 8);
        let got: u64 = nvls
            .transfers
            .iter()
            .filter(|t| t.dst == r)
            .map(|t| t.size)
            .sum();
        assert_eq!(got, s + s / 8);
    }
    // AllGather and ReduceScatter: (n-1)/n S per rank; Broadcast: S from each but the
    // last.
    for k in [
        CollectiveKind::RingAllgather,
        CollectiveKind::RingReduceScatter,
    ] {
        let d = build(k, &ranks, s, 1, 2, false);
        assert!(acyclic(&d));
        assert!(ranks.iter().all(|&r| bytes_from(&d, r) == 7 * s / 8));
    }
    let b = build(CollectiveKind::RingBroadcast, &ranks, s, 1, 4, false);
    assert!(acyclic(&b));
    assert_eq!(bytes_from(&b, 0), s);
    assert_eq!(bytes_from(&b, 7), 0);
    assert_eq!(total(&b), 7 * s);
}

#[test]
fn pat_takes_log_steps_and_sends_n_minus_1_over_n() {
    for n in [2u32, 3, 5, 8, 12] {
        let ranks: Vec<u32> = (0..n).collect();
        let s = u64::from(n) * 4096;
        let steps = (u32::BITS - (n - 1).leading_zeros()) as usize;
        for k in [
            CollectiveKind::PatAllgather,
            CollectiveKind::PatReduceScatter,
        ] {
            let d = build(k, &ranks, s, 1, 1, false);
            assert!(acyclic(&d));
            assert_eq!(d.transfers.len(), n as usize * steps, "n = {n}");
            for &r in &ranks {
                assert_eq!(bytes_from(&d, r), u64::from(n - 1) * 4096, "n = {n}");
            }
            // AllGather reaches the farthest rank first, with one block.
            if n == 8 && k == CollectiveKind::PatAllgather {
                assert_eq!((d.transfers[0].dst, d.transfers[0].size), (4, 4096));
                let last = d.transfers.last().unwrap();
                assert_eq!((last.src - last.dst, last.size), (1, 4 * 4096));
            }
        }
    }
}
