//! Ideal FCT of a flow that may spread over several paths (per-packet spraying, GSE
//! packet containers, adaptive routing): a lower bound on its FCT whatever path each
//! packet takes, on an idle fabric.
//!
//! The flow's usable paths all have the same number of hops (routing tables hold shortest
//! paths), so they cross the fabric in *stages*: stage k is the set of links any usable
//! path takes at hop k (the host NIC; the uplinks to every spine; the spines' downlinks;
//! the destination's access link). Each stage is a cut between source and destination,
//! and its capacity is the sum of its links' rates. The single-path formula
//! ([`super::rdma::ideal_fct`]) charges the flow's bytes to one link per hop; here they
//! are charged to the aggregate capacity of each cut, so a path set whose every cut is
//! wider than the host NIC is bounded by the NIC, and one whose spine tier is narrower
//! (slow members, a degraded uplink) by that tier's total, never by one member alone.
//!
//! The bound, for a flow of N packets (N - 1 full ones and a last one, possibly
//! shorter): the NIC sends them in order, packet i no sooner than i x s0 (s0: a full
//! packet's serialization at the NIC); packet i reaches stage k no sooner than that plus
//! A_k(its size), the sum over earlier stages of the fastest link's time to pass a packet
//! on (serialization, or its first block under cut-through, plus the delay). For any set
//! of packets, stage k cannot finish them before the earliest of them can arrive plus
//! their bytes at the stage's capacity (their serializations, one after another, on a
//! stage of one link), and the one it finishes last still has to travel from there to
//! the destination. The result is the largest such bound over the stages and the sets
//! "packets i.. N-1" and "full packets i.. N-2" (the sets an arrival-time threshold
//! picks), each at the few i where its bound can peak.
//!
//! On a path set of one path, it is that path's exact ideal FCT (the single-path formula
//! is used). On symmetric paths of equal links it equals the single-path result too: the
//! binding cut is the destination's access link, one link in either case. It allows for
//! what one path cannot do: a short last packet overtaking full ones on another path.

use super::rdma::{ideal_fct, Hop};
use crate::base::units::Time;

/// Picoseconds per second, for serialization at an aggregate rate.
const PS_PER_S: u128 = 1_000_000_000_000;

/// Lower bound on the FCT of `size` bytes over the stages `stages` (stage k: the links
/// any usable path takes at hop k; each non-empty). With one link per stage it is
/// [`ideal_fct`] of that path. 0 when there is no stage or a stage is empty (no route).
pub fn ideal_fct_multipath(size: u64, mtu: u64, header: u64, stages: &[Vec<Hop>]) -> Time {
    if stages.is_empty() || stages.iter().any(|s| s.is_empty()) {
        return 0;
    }
    if stages.iter().all(|s| s.len() == 1) {
        let hops: Vec<Hop> = stages.iter().map(|s| s[0]).collect();
        return ideal_fct(size, mtu, header, &hops);
    }
    let n = size.div_ceil(mtu).max(1);
    let full = mtu + header;
    let last = (size - (n - 1) * mtu) + header;
    let h = stages.len();
    let min_of = |k: usize, f: &dyn Fn(&Hop) -> i128| -> i128 {
        stages[k].iter().map(f).min().expect("stages are not empty")
    };
    // Fastest time to pass a packet of `p` bytes on at stage k.
    let pass = |k: usize, p: u64| min_of(k, &|l| (l.ahead(p) + l.delay) as i128);
    // A_k(p): earliest start of a packet of `p` bytes at stage k, from its start at the NIC.
    let arrive = |k: usize, p: u64| (0..k).map(|j| pass(j, p)).sum::<i128>();
    // From the moment a packet of `p` bytes ends its serialization at stage k to its
    // last byte at the destination.
    let tail = |k: usize, p: u64| -> i128 {
        if k == h - 1 {
            return min_of(k, &|l| l.delay as i128);
        }
        min_of(k, &|l| {
            l.ahead(p) as i128 - l.ser(p) as i128 + l.delay as i128
        }) + (k + 1..h - 1).map(|j| pass(j, p)).sum::<i128>()
            + min_of(h - 1, &|l| (l.ser(p) + l.delay) as i128)
    };
    // Time stage k needs for `nf` full packets and, if `with_last`, the last one.
    let work = |k: usize, nf: u64, with_last: bool| -> i128 {
        let st = &stages[k];
        let biggest = if nf > 0 { full } else { last };
        if st.len() == 1 {
            let l = &st[0];
            return (nf * l.ser(full) + if with_last { l.ser(last) } else { 0 }) as i128;
        }
        // Fluid: the bytes at the sum of the rates (rounded down, so it stays a bound),
        // and never less than one packet on the fastest link.
        let extra = st.iter().map(|l| l.extra).min().unwrap_or(0) as u128;
        let pkts = nf as u128 + with_last as u128;
        let bytes =
            nf as u128 * full as u128 + if with_last { last as u128 } else { 0 } + pkts * extra;
        let cap: u128 = st.iter().map(|l| l.bps as u128).sum();
        let fluid = (bytes * 8 * PS_PER_S / cap) as i128;
        fluid.max(min_of(k, &|l| l.ser(biggest) as i128))
    };
    let s0 = min_of(0, &|l| l.ser(full) as i128);
    let last_start = (n - 1) as i128 * s0;
    let mut best: i128 = 0;
    for k in 0..h {
        let (a_full, a_last) = (arrive(k, full), arrive(k, last));
        let last_arrives = last_start + a_last;
        // Packets i..N-1 (the last among them): they arrive no sooner than the earliest
        // of full packet i and the last packet. The bound is piecewise linear in i and
        // peaks at an end or where the two arrival times cross.
        let mut is = vec![0, n - 1];
        if n >= 2 {
            is.push(n - 2);
            let cross = (last_arrives - a_full).max(0) / s0.max(1);
            for i in [cross, cross + 1] {
                is.push((i as u64).min(n - 1));
            }
        }
        for &i in &is {
            let first = if i == n - 1 {
                last_arrives
            } else {
                (i as i128 * s0 + a_full).min(last_arrives)
            };
            let mut t = tail(k, last);
            if i < n - 1 {
                t = t.min(tail(k, full));
            }
            best = best.max(first + work(k, n - 1 - i, true) + t);
        }
        // Full packets i..N-2 only, the last packet left out: linear in i, so its ends.
        if n >= 2 {
            for i in [0, n - 2] {
                let first = i as i128 * s0 + a_full;
                best = best.max(first + work(k, n - 1 - i, false) + tail(k, full));
            }
        }
    }
    best.max(1) as Time
}

/// Lower bound on the FCT of `size` bytes sent over `rails` equal rails (a NIC of several
/// ports spreading one flow's packets), each rail crossing `stages` as
/// [`ideal_fct_multipath`] takes them. The rails run in parallel, so the flow ends when
/// its busiest rail has delivered its share, and whatever rail each packet takes: of the
/// N - 1 full packets some rail carries at least ceil((N - 1) / rails), and the rail
/// with the most packets, ceil(N / rails), carries at least all but one full and the
/// short last one (or more). The bound is the larger of the two shares' FCTs; it is
/// exact when packets alternate over the rails on an idle fabric, whose busiest rail is
/// one of the two. One rail: [`ideal_fct_multipath`] of `size`.
pub fn ideal_fct_rails(size: u64, mtu: u64, header: u64, stages: &[Vec<Hop>], rails: u64) -> Time {
    let n = size.div_ceil(mtu).max(1);
    if rails <= 1 || n == 1 {
        return ideal_fct_multipath(size, mtu, header, stages);
    }
    let last = size - (n - 1) * mtu;
    // The rail with the short last packet: floor((N - 1) / r) full ones before it.
    let with_last = (n - 1) / rails * mtu + last;
    // The rail with the most full packets.
    let most_full = (n - 1).div_ceil(rails) * mtu;
    ideal_fct_multipath(with_last, mtu, header, stages)
        .max(ideal_fct_multipath(most_full, mtu, header, stages))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use rand::{Rng, SeedableRng};

    const G: u64 = 1_000_000_000;

    fn link(gbps: u64, delay: Time) -> Hop {
        Hop {
            bps: gbps * G,
            delay,
            extra: 0,
            cut: None,
        }
    }

    /// Host -> leaf, `n` parallel uplinks of `up` Gbps to the spines, the spines' `n`
    /// downlinks at `up`, leaf -> host: the stages of a sprayed flow across a two-tier
    /// fabric.
    fn two_tier(host: u64, up: u64, n: usize, delay: Time) -> Vec<Vec<Hop>> {
        vec![
            vec![link(host, delay)],
            vec![link(up, delay); n],
            vec![link(up, delay); n],
            vec![link(host, delay)],
        ]
    }

    /// How a packet-level run of the stage model picks a link.
    #[derive(Clone, Copy, Debug)]
    enum Policy {
        RoundRobin,
        Random,
        EarliestFree,
    }

    /// Packet-level run on the stages: the NIC sends the packets back to back, each
    /// stage's link is picked by `policy`, each link sends its packets in arrival order
    /// (store and forward or cut-through as its hop says). Returns the last arrival.
    fn simulate(
        size: u64,
        mtu: u64,
        header: u64,
        stages: &[Vec<Hop>],
        policy: Policy,
        seed: u64,
    ) -> Time {
        let n = size.div_ceil(mtu).max(1);
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        // Each packet's (ready time at the current stage, wire bytes).
        let mut pkts: Vec<(Time, u64)> = (0..n)
            .map(|i| {
                (
                    0,
                    if i + 1 == n {
                        size - (n - 1) * mtu
                    } else {
                        mtu
                    } + header,
                )
            })
            .collect();
        let mut done = 0;
        for (k, st) in stages.iter().enumerate() {
            let mut free = vec![0 as Time; st.len()];
            let mut order: Vec<usize> = (0..pkts.len()).collect();
            order.sort_by_key(|&i| (pkts[i].0, i));
            for (m, &i) in order.iter().enumerate() {
                let (ready, bytes) = pkts[i];
                let j = match policy {
                    Policy::RoundRobin => m % st.len(),
                    Policy::Random => rng.gen_range(0..st.len()),
                    Policy::EarliestFree => (0..st.len())
                        .min_by_key(|&j| free[j].max(ready) + st[j].ser(bytes))
                        .unwrap(),
                };
                let l = &st[j];
                let start = ready.max(free[j]);
                free[j] = start + l.ser(bytes);
                if k + 1 == stages.len() {
                    done = done.max(free[j] + l.delay);
                } else {
                    pkts[i].0 = start + l.ahead(bytes) + l.delay;
                }
            }
        }
        done
    }

    #[test]
    fn one_link_per_stage_is_the_single_path_formula() {
        let hops = [
            link(100, 1_000_000),
            link(400, 500_000),
            link(25, 2_000_000),
        ];
        let stages: Vec<Vec<Hop>> = hops.iter().map(|h| vec![*h]).collect();
        for size in [1, 4096, 100_000, 1_000_000] {
            assert_eq!(
                ideal_fct_multipath(size, 4096, 58, &stages),
                ideal_fct(size, 4096, 58, &hops)
            );
        }
    }

    /// Spraying over N = 4 uplinks of 100G: with a 400G host NIC the spine tier (4 x
    /// 100G) is as wide as the NIC, so the bound is the NIC's: the bytes at 400G plus one
    /// packet's latency on the other hops, four times faster than one 100G path; with a
    /// 100G NIC the NIC binds and spraying buys nothing over the single path.
    #[test]
    fn spraying_over_n_uplinks_is_bounded_by_the_narrowest_cut() {
        let (mtu, header, d) = (4096u64, 0u64, 1_000_000);
        let n_pkts = 256u64;
        let size = n_pkts * mtu;
        let ser = |gbps: u64| mtu * 8 * 1000 / gbps; // ps of one packet
                                                     // Fast NIC: the NIC sends all packets, (n_pkts) x ser(400); the last one then
                                                     // crosses an uplink, a downlink (100G each) and the 400G access link.
        let fast = ideal_fct_multipath(size, mtu, header, &two_tier(400, 100, 4, d));
        let by_cuts = n_pkts * ser(400) + 2 * ser(100) + ser(400) + 4 * d;
        assert_eq!(fast, by_cuts);
        // One 100G path would take n_pkts x ser(100): the sprayed ideal is about 4x less.
        let one_path = ideal_fct(
            size,
            mtu,
            header,
            &[link(400, d), link(100, d), link(100, d), link(400, d)],
        );
        assert!(
            one_path > 3 * fast && one_path < 4 * fast,
            "{one_path} vs {fast}"
        );
        // Slow NIC: 100G NIC, four 100G uplinks: the NIC binds, as on one path.
        let slow = ideal_fct_multipath(size, mtu, header, &two_tier(100, 100, 4, d));
        assert_eq!(slow, n_pkts * ser(100) + 3 * ser(100) + 4 * d);
        assert_eq!(slow, ideal_fct(size, mtu, header, &[link(100, d); 4]));
        // A spine tier narrower than the NIC binds instead: 2 x 100G under a 400G NIC.
        let narrow = ideal_fct_multipath(size, mtu, header, &two_tier(400, 100, 2, d));
        assert_eq!(
            narrow,
            ser(400) + d + n_pkts * ser(100) / 2 + d + ser(100) + d + ser(400) + d
        );
    }

    #[test]
    fn equal_links_keep_the_single_path_result() {
        // Symmetric fabric, every link alike: the access link binds on every path.
        for size in [4096 * 10, 4096 * 300, 1_000_000] {
            let stages = two_tier(100, 100, 4, 1_000_000);
            let path: Vec<Hop> = stages.iter().map(|s| s[0]).collect();
            assert_eq!(
                ideal_fct_multipath(size, 4096, 58, &stages),
                ideal_fct(size, 4096, 58, &path),
                "{size}"
            );
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]
        /// The bound holds for every link choice: no packet-level run on the stages
        /// (round robin, random, earliest-free), nor any single path through them,
        /// finishes sooner.
        #[test]
        fn no_run_on_the_stages_beats_the_bound(
            size in 1u64..400_000,
            mtu in prop::sample::select(vec![256u64, 1024, 4096]),
            stages in prop::collection::vec(
                prop::collection::vec(
                    (
                        prop::sample::select(vec![25u64, 50, 100, 200, 400]),
                        0u64..2_000_000,
                        prop::sample::select(vec![0u64, 32]),
                        prop::sample::select(vec![None, Some((128u64, 0)), Some((64, 3_000))]),
                    ),
                    1..5,
                ),
                2..6,
            ),
            seed in 0u64..1000,
        ) {
            let mut stages: Vec<Vec<Hop>> = stages
                .into_iter()
                .map(|st| st.into_iter().map(|(g, d, e, cut)| Hop { bps: g * G, delay: d, extra: e, cut }).collect())
                .collect();
            // The NIC and the destination's access link are single links.
            stages[0].truncate(1);
            let last = stages.len() - 1;
            stages[last].truncate(1);
            let bound = ideal_fct_multipath(size, mtu, 58, &stages);
            for p in [Policy::RoundRobin, Policy::Random, Policy::EarliestFree] {
                let t = simulate(size, mtu, 58, &stages, p, seed);
                prop_assert!(t >= bound, "{p:?}: {t} < bound {bound}");
            }
            let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
            let path: Vec<Hop> = stages.iter().map(|s| s[rng.gen_range(0..s.len())]).collect();
            prop_assert!(ideal_fct(size, mtu, 58, &path) >= bound);
        }

        /// Over `rails` equal rails of one path each, the bound is exactly the busiest
        /// rail's FCT when the packets alternate over the rails (as the NIC's free ports
        /// take them on an idle fabric), the short last packet charged as what it is;
        /// no other spreading of the packets over the rails beats it.
        #[test]
        fn the_rails_bound_is_the_busiest_rail_with_a_short_last_packet(
            size in 1u64..3_000_000,
            mtu in prop::sample::select(vec![256u64, 1000, 1024, 2048, 4096, 9000]),
            rails in 1u64..5,
            hops in prop::collection::vec(
                (
                    prop::sample::select(vec![25u64, 100, 200, 400]),
                    0u64..2_000_000,
                    prop::sample::select(vec![None, Some((128u64, 0))]),
                ),
                1..5,
            ),
            seed in 0u64..1000,
        ) {
            let path: Vec<Hop> = hops
                .into_iter()
                .map(|(g, d, cut)| Hop { bps: g * G, delay: d, extra: 0, cut })
                .collect();
            let stages: Vec<Vec<Hop>> = path.iter().map(|h| vec![*h]).collect();
            let header = 48;
            let n = size.div_ceil(mtu);
            let wire = |i: u64| if i + 1 == n { size - (n - 1) * mtu } else { mtu };
            // Each rail's FCT: its packets back to back on its own path; they are
            // full ones, the short last one (if the rail has it) at the end.
            let rail_fct = |pkts: &[u64]| -> Time {
                if pkts.is_empty() {
                    return 0;
                }
                let short = pkts.iter().copied().find(|&i| i + 1 == n);
                let full = pkts.len() as u64 - short.is_some() as u64;
                let bytes = full * mtu + short.map_or(0, wire);
                super::super::rdma::ideal_fct_by_packets(bytes, mtu, header, &path)
            };
            let by_rail = |pick: &dyn Fn(u64) -> u64| -> Time {
                let mut on: Vec<Vec<u64>> = vec![Vec::new(); rails as usize];
                for i in 0..n {
                    on[pick(i) as usize].push(i);
                }
                on.iter().map(|p| rail_fct(p)).max().unwrap_or(0)
            };
            let bound = ideal_fct_rails(size, mtu, header, &stages, rails);
            let alternating = by_rail(&|i| i % rails);
            prop_assert_eq!(bound, alternating, "n = {}, rails = {}", n, rails);
            // Any other spreading of the packets is no faster.
            let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
            let picks: Vec<u64> = (0..n).map(|_| rng.gen_range(0..rails)).collect();
            let random = by_rail(&|i| picks[i as usize]);
            prop_assert!(random >= bound, "random spreading {} < bound {}", random, bound);
        }
    }

    #[test]
    fn a_short_last_packet_on_two_rails_is_charged_as_what_it_is() {
        // 1,422,533 B in 2 KiB packets: 694 full ones and one of 1221 B; two rails carry
        // 347 full ones each, one of them the short one too. Charging that one as a full
        // packet put the bound 827 B of serialization above what the run achieves.
        let stages = vec![vec![link(100, 1_000)], vec![link(100, 1_000)]];
        let (size, mtu) = (1_422_533, 2048);
        let got = ideal_fct_rails(size, mtu, 48, &stages, 2);
        let path: Vec<Hop> = stages.iter().map(|s| s[0]).collect();
        let want = ideal_fct(347 * mtu + 1221, mtu, 48, &path);
        assert_eq!(got, want);
        assert!(got < ideal_fct(348 * mtu, mtu, 48, &path));
    }
}
