//! The rail-optimized GPU cluster (`kind = "rail_optimized"`) through the whole
//! simulator: traffic between GPUs of the same index stays on its rail (two links, one
//! leaf), traffic between rails climbs leaf-spine-leaf, a permutation over every GPU
//! completes without a drop under PFC, planes are independent copies of the fabric, and
//! runs are deterministic.

use fabricsim::base::units::Time;
use fabricsim::model::fabric::NodeKind;
use fabricsim::output::fct;
use fabricsim::{analysis::invariants, load_str, Outcome, Simulation};
use std::path::Path;

/// 4 servers of 4 GPUs, 100G NICs, 1 us links, 100 ns switches, 4 KiB packets, no
/// congestion control; `topo` adds to `[topology]`, `workload` is the workload's table.
fn scenario(topo: &str, workload: &str) -> String {
    format!(
        r#"name = "rails"
seed = 3
max_time = "50ms"

[topology]
kind = "rail_optimized"
servers = 4
gpus_per_server = 4
nic_rate = "100Gbps"
link_delay = "1us"
{topo}

[fabric]
switch_latency = "100ns"

[cc]
algorithm = "none"

[[workload]]
{workload}
"#
    )
}

fn one_flow(src: u32, dst: u32, size: &str) -> String {
    format!("kind = \"flows\"\nflows = [{{ src = {src}, dst = {dst}, size = \"{size}\" }}]")
}

fn build(src: &str) -> Simulation {
    let l = load_str(src, "t.toml", Path::new("."), &[]).unwrap_or_else(|e| panic!("{e}\n{src}"));
    Simulation::build(&l.scenario, &l.file, &l.base_dir).unwrap_or_else(|e| panic!("{e}"))
}

fn run(src: &str) -> Simulation {
    let mut s = build(src);
    assert_eq!(s.run(&mut |_| {}), Outcome::Completed);
    let bad = invariants::check(&s);
    assert!(bad.is_empty(), "invariants violated: {bad:#?}");
    for i in 0..s.nics.flows.len() {
        let f = &s.nics.flows[i];
        assert_eq!(f.rcv_nxt, f.spec.size, "flow {i} delivered every byte once");
        assert!(fct(&s, i).unwrap() >= s.ideal[i], "flow {i} beat its ideal");
    }
    s
}

fn node_name(s: &Simulation, port: usize) -> String {
    s.fabric.nodes[s.fabric.ports[port].node.idx()].name.clone()
}

/// The nodes that sent at least `bytes` (the forward path of a lone flow of that size:
/// its ACKs carry far less), in port order: one per link the data crossed.
fn data_path(s: &Simulation, bytes: u64) -> Vec<String> {
    (0..s.fabric.ports.len())
        .filter(|&p| s.fabric.ports[p].tx_bytes >= bytes)
        .map(|p| node_name(s, p))
        .collect()
}

fn tx_of(s: &Simulation, prefix: &str) -> u64 {
    (0..s.fabric.ports.len())
        .filter(|&p| node_name(s, p).starts_with(prefix))
        .map(|p| s.fabric.ports[p].tx_bytes)
        .sum()
}

const SIZE: u64 = 1 << 20;

#[test]
fn same_rail_traffic_crosses_two_links_through_one_leaf() {
    // GPU 2 of server 0 (host 2) to GPU 2 of server 3 (host 14).
    let s = run(&scenario("", &one_flow(2, 14, "1MiB")));
    let mut path = data_path(&s, SIZE);
    path.sort();
    assert_eq!(path, vec!["rail2-leaf0", "s0-gpu2"]);
    assert_eq!(tx_of(&s, "spine"), 0, "no spine sees same-rail traffic");
    // Two links and one switch: the store-and-forward pipeline of 256 packets of 4 KiB
    // (+ 58 B headers) at 100 Gbit/s, the last packet's second serialization, two link
    // delays and one switch latency. The NIC sends back to back, so the FCT is its ideal.
    let wire = 4096 + 58;
    let ser = |b: u64| b * 8 * 10; // ps at 100 Gbit/s
    let expect: Time = 256 * ser(wire) + ser(wire) + 2 * 1_000_000 + 100_000;
    assert_eq!(s.ideal[0], expect);
    assert_eq!(fct(&s, 0).unwrap(), expect);
}

#[test]
fn cross_rail_traffic_goes_leaf_spine_leaf() {
    // GPU 1 of server 0 (host 1) to GPU 3 of server 2 (host 11).
    let s = run(&scenario("", &one_flow(1, 11, "1MiB")));
    let path = data_path(&s, SIZE);
    assert_eq!(path.len(), 4, "{path:?}");
    assert_eq!(path.iter().filter(|n| *n == "s0-gpu1").count(), 1);
    assert_eq!(path.iter().filter(|n| *n == "rail1-leaf0").count(), 1);
    assert_eq!(path.iter().filter(|n| *n == "rail3-leaf0").count(), 1);
    assert_eq!(path.iter().filter(|n| n.starts_with("spine")).count(), 1);
    // No other rail's leaf carried anything.
    for r in [0, 2] {
        assert_eq!(tx_of(&s, &format!("rail{r}-")), 0);
    }
    // Four links and three switches.
    let wire = 4096 + 58;
    let ser = |b: u64| b * 8 * 10;
    let expect: Time = 256 * ser(wire) + 3 * ser(wire) + 4 * 1_000_000 + 3 * 100_000;
    assert_eq!(fct(&s, 0).unwrap(), expect);
}

#[test]
fn ports_and_links_are_as_counted() {
    // 16 GPUs; 4 rails x 2 leaves; 2 servers of 100G below a leaf, 2:1 oversubscribed:
    // one spine of 100G. Per plane 16 NIC links + 8 x 1 uplinks; two planes of 50G.
    let s = build(&scenario(
        "leaves_per_rail = 2\noversubscription = 2.0\nplanes = 2",
        &one_flow(0, 1, "4KiB"),
    ));
    let links = 2 * (16 + 8);
    assert_eq!(s.fabric.ports.len(), 2 * links);
    let switches = s
        .fabric
        .nodes
        .iter()
        .filter(|n| matches!(n.kind, NodeKind::Switch(_)))
        .count();
    assert_eq!(switches, 2 * (8 + 1));
    for h in 0..16 {
        let n = &s.fabric.nodes[s
            .fabric
            .nodes
            .iter()
            .position(|n| n.kind == NodeKind::Host(h))
            .unwrap()];
        assert_eq!(n.ports.len, 2, "one port per plane");
        for (p, port) in n.ports.iter().enumerate() {
            assert_eq!(s.fabric.ports[port.idx()].rate.0, 50_000_000_000);
            let leaf = node_name(&s, s.fabric.ports[port.idx()].peer.idx());
            let (srv, gpu) = (h / 4, h % 4);
            assert_eq!(leaf, format!("p{p}-rail{gpu}-leaf{}", srv / 2));
        }
    }
}

#[test]
fn a_permutation_completes_without_a_drop_under_pfc_and_repeats_exactly() {
    let perm = "kind = \"permutation\"\nsize = \"256KiB\"";
    for topo in [
        "",
        "oversubscription = 2.0",
        "planes = 2",
        "leaves_per_rail = 2",
    ] {
        let src = scenario(topo, perm);
        let a = run(&src);
        assert_eq!(a.nics.flows.len(), 16, "{topo}");
        assert_eq!(a.ctx.counters.drops, 0, "{topo}: PFC is on");
        let b = run(&src);
        let fcts = |s: &Simulation| (0..16).map(|i| fct(s, i)).collect::<Vec<_>>();
        let tx = |s: &Simulation| {
            s.fabric
                .ports
                .iter()
                .map(|p| p.tx_bytes)
                .collect::<Vec<_>>()
        };
        assert_eq!(fcts(&a), fcts(&b), "{topo}");
        assert_eq!(tx(&a), tx(&b), "{topo}");
    }
}

#[test]
fn planes_are_independent_and_share_a_flow() {
    // Two planes, the NIC spreads each flow's packets over both ports (adaptive rails).
    let s = run(&scenario("planes = 2", &one_flow(2, 14, "1MiB")));
    let (p0, p1) = (tx_of(&s, "p0-"), tx_of(&s, "p1-"));
    assert!(p0 > 0 && p1 > 0, "both planes carry the flow: {p0} {p1}");
    assert!(p0.abs_diff(p1) < p0 / 10, "about evenly: {p0} {p1}");
    // Pinned to port 1, plane 0 stays idle.
    let pinned = scenario("planes = 2", &one_flow(2, 14, "1MiB"))
        .replace("[cc]", "[transport]\nrail = 1\n\n[cc]");
    let s = run(&pinned);
    assert_eq!(tx_of(&s, "p0-"), 0);
    assert!(tx_of(&s, "p1-") >= SIZE);
}

// The scale-up domain: NVLink through an NVSwitch (or PCIe), a crossbar per GPU.

use fabricsim::base::units::Rate;

/// The same cluster with H100 NVLink (18 x 200 Gbit/s = 3.6 Tbit/s per direction per
/// GPU) and 400G NICs.
fn nvlink(extra: &str, workload: &str) -> String {
    scenario(&format!("nvlink = \"h100\"\n{extra}"), workload).replace("100Gbps", "400Gbps")
}

#[test]
fn an_intra_server_transfer_takes_size_over_nvlink_bandwidth_plus_latency() {
    for (preset, per_link) in [("h100", 200_000_000_000u64), ("b200", 400_000_000_000)] {
        let src =
            nvlink("", &one_flow(0, 3, "16MiB")).replace("\"h100\"", &format!("\"{preset}\""));
        let s = run(&src);
        let b = Rate(18 * per_link);
        // 4096 packets of 4 KiB + 58 B through GPU, crossbar, NVSwitch, crossbar, GPU:
        // all four links at the NVLink rate, the last packet serialized three more times,
        // and the 500 ns NVLink latency; the crossbars and the NVSwitch add no forwarding
        // latency, the GPU-crossbar links no delay.
        let (n, wire, latency) = (4096u64, 4096 + 58, 500_000);
        let expect = n * b.tx_time(wire) + 3 * b.tx_time(wire) + latency;
        let got = fct(&s, 0).unwrap();
        assert_eq!(got, expect, "{preset}");
        // To the packet: size / bandwidth (headers included) + latency, within the three
        // extra serializations of one packet.
        let closed = b.tx_time(n * wire) + latency;
        assert!(
            got.abs_diff(closed) <= 4 * b.tx_time(wire),
            "{preset}: {got} vs {closed}"
        );
        assert_eq!(tx_of(&s, "rail"), 0, "{preset}: no rail carried it");
    }
}

#[test]
fn intra_server_traffic_never_touches_a_rail() {
    // Every ordered pair of GPUs within servers 0 and 2, all at once.
    let mut flows = Vec::new();
    for server in [0u32, 2] {
        for a in 0..4 {
            for b in 0..4 {
                if a != b {
                    let (src, dst) = (server * 4 + a, server * 4 + b);
                    flows.push(format!("{{ src = {src}, dst = {dst}, size = \"256KiB\" }}"));
                }
            }
        }
    }
    let wl = format!("kind = \"flows\"\nflows = [{}]", flows.join(", "));
    let s = run(&nvlink("", &wl));
    assert_eq!(s.ctx.counters.drops, 0);
    assert_eq!(tx_of(&s, "rail"), 0);
    assert_eq!(tx_of(&s, "spine"), 0);
    // Nor did any crossbar send toward a leaf: its ports are GPU, NVSwitch, then NIC.
    for p in 0..s.fabric.ports.len() {
        let peer = node_name(&s, s.fabric.ports[p].peer.idx());
        if peer.starts_with("rail") {
            assert_eq!(
                s.fabric.ports[p].tx_bytes,
                0,
                "{} -> {peer}",
                node_name(&s, p)
            );
        }
    }
    // The NVSwitches of servers 0 and 2 carried it all, the others nothing.
    assert!(tx_of(&s, "s0-nvswitch") >= 12 * 256 * 1024);
    assert!(tx_of(&s, "s2-nvswitch") >= 12 * 256 * 1024);
    assert_eq!(tx_of(&s, "s1-nvswitch") + tx_of(&s, "s3-nvswitch"), 0);
}

#[test]
fn inter_server_traffic_takes_the_rails() {
    // Same GPU index: rail 2, through one leaf, no NVSwitch.
    let s = run(&nvlink("", &one_flow(2, 14, "1MiB")));
    let mut path = data_path(&s, SIZE);
    path.sort();
    assert_eq!(
        path,
        vec!["rail2-leaf0", "s0-gpu2", "s0-gpu2-xbar", "s3-gpu2-xbar"]
    );
    assert_eq!(tx_of(&s, "spine"), 0);
    assert_eq!(tx_of(&s, "s0-nvswitch") + tx_of(&s, "s3-nvswitch"), 0);
    // Another GPU index: six links, by a spine or by NVLink at one end and one rail.
    let s = run(&nvlink("", &one_flow(1, 11, "1MiB")));
    let path = data_path(&s, SIZE);
    assert_eq!(path.len(), 6, "{path:?}");
    let spine = path.iter().any(|n| n.starts_with("spine"));
    let nvl = path.iter().filter(|n| n.ends_with("nvswitch")).count();
    assert!(
        spine as usize + nvl == 1,
        "one spine or one NVSwitch: {path:?}"
    );
}

/// Flows from every GPU of server 0 to the next GPU index on server 1 and back: every
/// one between two servers and two rails.
fn cross_rail_flows() -> String {
    let mut flows = Vec::new();
    for a in 0..4u32 {
        let b = 4 + (a + 1) % 4;
        flows.push(format!("{{ src = {a}, dst = {b}, size = \"256KiB\" }}"));
        flows.push(format!("{{ src = {b}, dst = {a}, size = \"256KiB\" }}"));
    }
    format!("kind = \"flows\"\nflows = [{}]", flows.join(", "))
}

/// Bytes the crossbars sent into their NVSwitch.
fn into_nvswitch(s: &Simulation) -> u64 {
    (0..s.fabric.ports.len())
        .filter(|&p| node_name(s, s.fabric.ports[p].peer.idx()).ends_with("nvswitch"))
        .map(|p| s.fabric.ports[p].tx_bytes)
        .sum()
}

#[test]
fn pxn_decides_whether_traffic_for_another_rail_crosses_nvlink() {
    let total = 8 * 256 * 1024;
    // PXN off: every packet leaves by its own GPU's NIC and crosses a spine; no NVLink
    // carries anything, at either end (the leaves do not hand it to a relaying server).
    let off = run(&nvlink("pxn = false", &cross_rail_flows()));
    assert_eq!(into_nvswitch(&off), 0);
    assert_eq!(tx_of(&off, "s0-nvswitch") + tx_of(&off, "s1-nvswitch"), 0);
    assert!(tx_of(&off, "spine") >= total, "every byte crossed a spine");
    // PXN on: every packet crosses its own server's NVLink to the GPU on the
    // destination's rail, whose NIC sends it through one leaf; no spine.
    let on = run(&nvlink("pxn = true", &cross_rail_flows()));
    assert_eq!(tx_of(&on, "spine"), 0);
    for s in ["s0-nvswitch", "s1-nvswitch"] {
        assert!(tx_of(&on, s) >= total / 2, "{s} relayed its server's half");
    }
    // The NIC that sent each flow is the destination rail's: the data left server 0 by
    // the crossbar of GPU (a + 1) % 4 for a flow from GPU a.
    for a in 0..4 {
        let relay = format!("s0-gpu{}-xbar", (a + 1) % 4);
        let to_leaf: u64 = (0..on.fabric.ports.len())
            .filter(|&p| node_name(&on, p) == relay)
            .filter(|&p| node_name(&on, on.fabric.ports[p].peer.idx()).starts_with("rail"))
            .map(|p| on.fabric.ports[p].tx_bytes)
            .sum();
        assert!(to_leaf >= 256 * 1024, "{relay} sent GPU {a}'s flow");
    }
}

#[test]
fn pxn_needs_nvlink() {
    for topo in ["pxn = true", "pxn = false\nscale_up = \"pcie\""] {
        let src = scenario(topo, &one_flow(1, 11, "1MiB"));
        let e = match load_str(&src, "t.toml", Path::new("."), &[]) {
            Ok(l) => Simulation::build(&l.scenario, &l.file, &l.base_dir)
                .err()
                .expect("refused")
                .to_string(),
            Err(e) => e.to_string(),
        };
        assert!(e.contains("topology.pxn") && e.contains("nvlink"), "{e}");
    }
}

#[test]
fn a_rail_only_network_joins_its_rails_by_nvlink() {
    // No spines: GPU 1 of server 0 reaches GPU 3 of server 2 only through an NVSwitch.
    let s = run(&nvlink("spines = 0", &one_flow(1, 11, "1MiB")));
    let path = data_path(&s, SIZE);
    assert_eq!(path.len(), 6, "{path:?}");
    assert_eq!(path.iter().filter(|n| n.ends_with("nvswitch")).count(), 1);
    // Without a scale-up domain the rails would not be joined at all.
    let l = load_str(
        &scenario("spines = 0", &one_flow(1, 11, "1MiB")),
        "t.toml",
        Path::new("."),
        &[],
    );
    let e = match l {
        Ok(l) => Simulation::build(&l.scenario, &l.file, &l.base_dir)
            .err()
            .expect("refused")
            .to_string(),
        Err(e) => e.to_string(),
    };
    assert!(e.contains("topology.spines"), "{e}");
}

#[test]
fn a_permutation_with_nvlink_is_lossless_and_repeats_exactly() {
    let perm = "kind = \"permutation\"\nsize = \"256KiB\"";
    for extra in ["", "planes = 2", "scale_up = \"pcie\""] {
        let src = nvlink(extra, perm);
        let src = if extra.contains("pcie") {
            src.replace("nvlink = \"h100\"\n", "")
        } else {
            src
        };
        let a = run(&src);
        assert_eq!(a.ctx.counters.drops, 0, "{extra}");
        let b = run(&src);
        let fcts = |s: &Simulation| (0..16).map(|i| fct(s, i)).collect::<Vec<_>>();
        assert_eq!(fcts(&a), fcts(&b), "{extra}");
    }
}

// Collectives over the rails.

fn jct(s: &Simulation, j: usize) -> Time {
    let job = &s.nics.jobs[j];
    job.finish.unwrap() - job.started.unwrap()
}

#[test]
fn a_ring_allreduce_along_each_rail_takes_its_closed_form() {
    // One job per rail (jobs = "nic_index"): GPU r of the 4 servers in a ring on rail r's
    // leaf, the 4 rings on disjoint leaves. S = 256 KiB: steps of S/4 = 16 packets.
    let wl = "kind = \"collective\"\ncollective = \"ring_allreduce\"\njobs = \"nic_index\"\nsize = \"256KiB\"";
    // One ACK per transfer (at its last packet): the receiver's ACK leaves just before
    // the first packet of its next step, one 64 B frame later.
    let s = run(&scenario("", wl).replace("[cc]", "[transport]\nack_every = 64\n\n[cc]"));
    assert_eq!(s.nics.jobs.len(), 4);
    let (m, n_pk, wire) = (4u64, 16u64, 4096 + 58u64);
    let b = Rate(100_000_000_000);
    let (d, sw) = (1_000_000, 100_000);
    // 2(n-1)/n x S/B (headers included) plus, per step, the last packet's second
    // serialization, two link delays and the leaf.
    let s_wire = 4 * n_pk * wire;
    let expect = b.tx_time(2 * (m - 1) * s_wire / m)
        + 2 * (m - 1) * (b.tx_time(wire) + 2 * d + sw)
        + (2 * (m - 1) - 1) * b.tx_time(64);
    for j in 0..4 {
        assert_eq!(jct(&s, j), expect, "rail {j}");
    }
    assert_eq!(
        tx_of(&s, "spine"),
        0,
        "rings along rails stay on their leaves"
    );
}

#[test]
fn a_hierarchical_allreduce_is_nvlink_rings_inside_and_rail_rings_across() {
    // 4 servers of 4 GPUs, H100 NVLink, 400G NICs; S = 1 MiB: reduce-scatter and
    // all-gather steps of S/4 = 64 packets over NVLink, rail steps of S/16 = 16 packets.
    let wl = "kind = \"collective\"\ncollective = \"hierarchical_allreduce\"\nsize = \"1MiB\"";
    let s = run(&nvlink("", wl).replace("[cc]", "[transport]\nack_every = 64\n\n[cc]"));
    let (g, m, wire) = (4u64, 4u64, 4096 + 58u64);
    let (nvl, nic) = (Rate(3_600_000_000_000), Rate(400_000_000_000));
    // NVLink step: 4 links at NVLink rate, 500 ns (see the intra-server test).
    let t1 = 64 * nvl.tx_time(wire) + 3 * nvl.tx_time(wire) + 500_000;
    // Rail step: GPU, crossbar (NVLink rate), leaf, crossbar, GPU: the NIC links bound
    // it; two 1 us cables and the leaf (100 ns).
    let t2 = 17 * nic.tx_time(wire) + 2 * nvl.tx_time(wire) + 2 * 1_000_000 + 100_000;
    // Each of the 11 steps after the first may start up to one ACK frame late (the
    // receiver's ACK of the step before leaves first; at most 64 B at the NIC's rate).
    let closed = 2 * (g - 1) * t1 + 2 * (m - 1) * t2;
    let got = jct(&s, 0);
    assert!(
        got >= closed && got <= closed + 11 * nic.tx_time(64),
        "{got} against {closed}"
    );
    // Each rank sent 2(n-1)/n S, the flat ring's bytes; the job's lower bound held.
    assert!(jct(&s, 0) >= s.job_lower_bound(0));
    assert_eq!(tx_of(&s, "spine"), 0);
    // nccl-tests' bus bandwidth of the run: algbw x 2(n-1)/n.
    let (algbw, busbw) = fabricsim::model::workload::collective::nccl_bandwidths(
        fabricsim::model::workload::collective::CollectiveKind::HierarchicalAllreduce,
        16,
        1 << 20,
        jct(&s, 0),
    );
    assert_eq!(busbw, algbw * 30.0 / 16.0);
    // Servers of unequal size are refused, naming the field.
    let l = load_str(
        &nvlink("", &format!("{wl}\nhosts = [0, 1, 4]")),
        "t.toml",
        Path::new("."),
        &[],
    )
    .unwrap();
    let e = Simulation::build(&l.scenario, &l.file, &l.base_dir)
        .err()
        .expect("refused")
        .to_string();
    assert!(
        e.contains("workload[0].hosts") && e.contains("as many ranks"),
        "{e}"
    );
}
