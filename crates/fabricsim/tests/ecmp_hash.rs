//! The ECMP hash model (`[fabric.load_balance.hash]`): a shared seed polarizes the tiers
//! of a fat-tree, sequential source ports number each NIC's queue pairs.

use fabricsim::load_str;
use fabricsim::model::fabric::NodeKind;
use fabricsim::model::routing::ecmp;
use fabricsim::model::routing::LbAlgorithm;
use fabricsim::run::runner::build_all;
use fabricsim::sim::Simulation;
use std::path::Path;

/// A k = 8 fat-tree (128 hosts); host 0..15 each send one flow to a host of another pod
/// (`dst = 16 * (1 + i % 7) + i`), plus the `extra` TOML.
fn build(extra: &str) -> Simulation {
    let flows: Vec<String> = (0..16u32)
        .flat_map(|i| {
            (1..8u32).map(move |p| {
                format!(
                    "{{ src = {i}, dst = {}, size = \"64KiB\" }}",
                    16 * p + (i + p) % 16
                )
            })
        })
        .collect();
    let toml = format!(
        "name = \"t\"\nseed = 3\n[topology]\nkind = \"fat_tree\"\nk = 8\nrate = \"100Gbps\"\n{extra}\n[[workload]]\nkind = \"flows\"\nflows = [{}]\n",
        flows.join(", ")
    );
    let l = load_str(&toml, "<test>", Path::new("."), &[]).expect("valid scenario");
    build_all(&l, None)
        .expect("builds")
        .pop()
        .expect("one run")
        .1
}

/// The index a switch picks among `n` next hops for flow hash `hash`.
fn index(sim: &Simulation, s: u32, hash: u32, n: usize) -> usize {
    let salt = sim.fabric.switches[s as usize].salt;
    match sim.fabric.lb {
        LbAlgorithm::Ecmp => ecmp::pick(hash, salt, n),
        LbAlgorithm::EcmpModulo => ecmp::pick_modulo(hash, salt, n),
        other => panic!("not ECMP: {other}"),
    }
}

/// Per flow: the uplink index it takes at its edge switch and at the aggregation switch.
fn up_indices(sim: &Simulation) -> Vec<(usize, usize)> {
    let switch_of = |port: fabricsim::base::ids::PortId| {
        let node = sim.fabric.ports[port].node;
        match sim.fabric.nodes[node].kind {
            NodeKind::Switch(s) => s,
            NodeKind::Host(_) => panic!("a host"),
        }
    };
    sim.nics
        .flows
        .iter()
        .map(|f| {
            let host_port = sim.nics.hosts[f.spec.src as usize].port;
            let edge = switch_of(sim.fabric.ports[host_port.idx()].peer);
            let c = sim.fabric.routing.candidates(edge, f.spec.dst);
            assert_eq!(c.len(), 4, "k/2 uplinks at the edge");
            let ke = index(sim, edge, f.hash, c.len());
            let agg = switch_of(sim.fabric.ports[c[ke] as usize].peer);
            let c2 = sim.fabric.routing.candidates(agg, f.spec.dst);
            assert_eq!(c2.len(), 4, "k/2 uplinks at the aggregation layer");
            (ke, index(sim, agg, f.hash, c2.len()))
        })
        .collect()
}

#[test]
fn a_shared_seed_makes_every_tier_choose_alike() {
    for function in ["murmur", "crc16", "crc32", "xor_fold"] {
        let sim = build(&format!(
            "[fabric.load_balance.hash]\nfunction = \"{function}\"\nseed = \"shared\""
        ));
        let ups = up_indices(&sim);
        assert_eq!(ups.len(), 112);
        assert!(ups.iter().all(|(e, a)| e == a), "{function}: {ups:?}");
        // Not trivially one index for all flows.
        assert!(ups.iter().any(|u| u.0 != ups[0].0), "{function}: {ups:?}");
    }
}

#[test]
fn per_switch_seeds_choose_independently() {
    for function in ["murmur", "crc32"] {
        let sim = build(&format!(
            "[fabric.load_balance.hash]\nfunction = \"{function}\""
        ));
        let ups = up_indices(&sim);
        let same = ups.iter().filter(|(e, a)| e == a).count();
        assert!(same < ups.len(), "{function}: {ups:?}");
    }
    // The default is the ideal model, on today's balancer.
    let sim = build("");
    assert_eq!(sim.fabric.lb, LbAlgorithm::Ecmp);
    let ups = up_indices(&sim);
    let same = ups.iter().filter(|(e, a)| e == a).count();
    // Independent choices among 4: about a quarter agree.
    assert!((10..50).contains(&same), "{same} of {}", ups.len());
}

#[test]
fn sequential_source_ports_are_consecutive_per_nic() {
    let sim = build("[fabric.load_balance.hash]\nsource_port = \"sequential\"");
    for src in 0..16u32 {
        let ports: Vec<u16> = sim
            .nics
            .flows
            .iter()
            .filter(|f| f.spec.src == src)
            .map(|f| f.sport)
            .collect();
        let want: Vec<u16> = (0..7).map(|q| ecmp::SPORT_BASE + q).collect();
        assert_eq!(ports, want, "NIC {src}");
    }
    // Random ports by default: not consecutive.
    let sim = build("");
    let ports: Vec<u16> = sim.nics.flows.iter().take(7).map(|f| f.sport).collect();
    assert!(ports.windows(2).any(|w| w[1] != w[0] + 1), "{ports:?}");
    // The hash follows the function.
    let sim = build("[fabric.load_balance.hash]\nfunction = \"crc32\"");
    let f = &sim.nics.flows[0];
    assert_eq!(
        f.hash,
        ecmp::crc32_ieee(&ecmp::tuple_bytes(f.spec.src, f.spec.dst, f.sport))
    );
}

/// Per run of `scenarios/ecmp-lag.toml` (flows cut to 512 KiB): the leaf uplinks'
/// (max / mean) bytes sent, how many carried no data, and the LAG width ECMP used.
fn lag_runs() -> Vec<(String, f64, usize, u32)> {
    let dir = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../../scenarios"));
    let sizes: Vec<String> = (0..4)
        .map(|i| format!("workload[{i}].size=\"512KiB\""))
        .collect();
    let l = fabricsim::load_file(&dir.join("ecmp-lag.toml"), &sizes).unwrap();
    build_all(&l, None)
        .unwrap()
        .into_iter()
        .map(|(name, mut sim)| {
            assert_eq!(
                sim.run(&mut |_| {}),
                fabricsim::sim::Outcome::Completed,
                "{name}"
            );
            assert!(
                fabricsim::analysis::invariants::check(&sim).is_empty(),
                "{name}"
            );
            // Leaf ports after the 8 host links go up to the spines.
            let mut up = Vec::new();
            let mut lag = 0;
            for node in &sim.fabric.nodes {
                if let NodeKind::Switch(s) = node.kind {
                    if node.name.starts_with("leaf") {
                        lag = sim.fabric.switches[s as usize].lag;
                        up.extend(
                            node.ports
                                .iter()
                                .skip(8)
                                .map(|p| sim.fabric.ports[p].tx_bytes),
                        );
                    }
                }
            }
            assert_eq!(up.len(), 8 * 16);
            let mean = up.iter().sum::<u64>() as f64 / up.len() as f64;
            let max = *up.iter().max().unwrap() as f64;
            // Idle: no data, at most some ACKs and pause frames.
            let idle = up.iter().filter(|&&b| (b as f64) < mean / 10.0).count();
            (name, max / mean, idle, lag)
        })
        .collect()
}

#[test]
fn a_lag_whose_member_choice_reuses_the_next_hops_hash_idles_most_members() {
    let runs = lag_runs();
    let get = |n: &str| runs.iter().find(|r| r.0 == n).unwrap();
    let (flat, ind, cor) = (get("flat"), get("independent"), get("correlated"));
    // Flat: every member a next hop; the LAGs: 4 members per spine.
    assert_eq!((flat.3, ind.3, cor.3), (1, 4, 4));
    // Correlated: a flow on spine i takes member i, so exactly 3 of every 4 members of a
    // leaf carry nothing; independent choices use (nearly) all of them.
    assert_eq!(cor.2, 96, "idle uplinks {runs:?}");
    assert!(ind.2 < 32 && flat.2 < 32, "{runs:?}");
    assert!(cor.1 > 1.5 * ind.1 && cor.1 > 1.5 * flat.1, "{runs:?}");
}
