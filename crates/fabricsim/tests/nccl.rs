//! NCCL-like collectives through the whole simulator, on rail-optimized GPU clusters: a
//! protocol's per-step latency and wire bytes, the volume the tree and NVLS AllReduce
//! move on the NICs and NVLink, the choices of `auto`, and `nccl_tests.csv`.

use fabricsim::base::units::{Rate, Time};
use fabricsim::model::workload::collective::protocol::Protocol;
use fabricsim::output::run_table_text;
use fabricsim::{analysis::invariants, load_str, Outcome, Simulation};
use std::path::Path;

/// 4 servers of 4 GPUs, 100G NICs (`nvlink`: 400G and H100 NVLink), 1 us links, 100 ns
/// switches, no congestion control, one ACK per 64 packets; `workload` is the
/// collective's settings.
fn scenario(nvlink: bool, workload: &str) -> String {
    let (rate, scale_up) = if nvlink {
        ("400Gbps", "nvlink = \"h100\"")
    } else {
        ("100Gbps", "")
    };
    format!(
        r#"name = "nccl"
seed = 3
max_time = "50ms"

[topology]
kind = "rail_optimized"
servers = 4
gpus_per_server = 4
nic_rate = "{rate}"
link_delay = "1us"
{scale_up}

[fabric]
switch_latency = "100ns"

[transport]
ack_every = 64

[cc]
algorithm = "none"

[[workload]]
kind = "collective"
{workload}
"#
    )
}

fn run(src: &str) -> Simulation {
    let l = load_str(src, "t.toml", Path::new("."), &[]).unwrap_or_else(|e| panic!("{e}\n{src}"));
    let mut s =
        Simulation::build(&l.scenario, &l.file, &l.base_dir).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(s.run(&mut |_| {}), Outcome::Completed);
    let bad = invariants::check(&s);
    assert!(bad.is_empty(), "invariants violated: {bad:#?}");
    for j in 0..s.nics.jobs.len() {
        assert!(jct(&s, j) >= s.job_lower_bound(j), "job {j} beat its bound");
    }
    s
}

fn jct(s: &Simulation, j: usize) -> Time {
    let job = &s.nics.jobs[j];
    job.finish.unwrap() - job.started.unwrap()
}

fn node_name(s: &Simulation, port: usize) -> String {
    s.fabric.nodes[s.fabric.ports[port].node.idx()].name.clone()
}

/// Bytes sent by the GPUs (their links to their NICs' leaves without NVLink).
fn tx_gpus(s: &Simulation) -> u64 {
    (0..s.fabric.ports.len())
        .filter(|&p| node_name(s, p).contains("-gpu") && !node_name(s, p).ends_with("xbar"))
        .map(|p| s.fabric.ports[p].tx_bytes)
        .sum()
}

fn tx_of(s: &Simulation, prefix: &str) -> u64 {
    (0..s.fabric.ports.len())
        .filter(|&p| node_name(s, p).starts_with(prefix))
        .map(|p| s.fabric.ports[p].tx_bytes)
        .sum()
}

/// Bytes the flows delivered.
fn delivered(s: &Simulation) -> u64 {
    s.nics.flows.iter().map(|f| f.rcv_nxt).sum()
}

const WIRE: u64 = 4096 + 58;

#[test]
fn a_ring_allreduce_with_simple_takes_its_closed_form_plus_the_step_latency() {
    // One ring per rail (jobs = "nic_index"): GPU r of the 4 servers on rail r's leaf.
    // S = 256 KiB: steps of S/4 = 16 packets.
    let wl = "collective = \"allreduce\"\nalgorithm = \"ring\"\nprotocol = \"simple\"\njobs = \"nic_index\"\nsize = \"256KiB\"";
    let s = run(&scenario(false, wl));
    assert_eq!(s.nics.jobs.len(), 4);
    let (m, n_pk) = (4u64, 16u64);
    let b = Rate(100_000_000_000);
    let (d, sw) = (1_000_000, 100_000);
    // 2(n-1)/n x S/B (headers included) plus, per step, the last packet's second
    // serialization, two link delays, the leaf, and Simple's latency.
    let steps = 2 * (m - 1);
    let expect = b.tx_time(steps * n_pk * WIRE)
        + steps * (b.tx_time(WIRE) + 2 * d + sw)
        + steps * Protocol::Simple.step_latency();
    for j in 0..4 {
        let got = jct(&s, j);
        assert!(
            got.abs_diff(expect) <= b.tx_time(WIRE),
            "rail {j}: {got} against {expect}"
        );
    }
    assert_eq!(tx_of(&s, "spine"), 0);
}

#[test]
fn each_protocol_puts_its_stated_wire_bytes_per_data_byte() {
    // A ring AllReduce over rail 0 (4 ranks) of 480 KiB: transfers of 120 KiB, which
    // LL128's 120 B lines divide.
    let data = 2 * 3 * 4 * (120 << 10);
    let mut jcts = Vec::new();
    for (name, proto) in [
        ("simple", Protocol::Simple),
        ("ll", Protocol::Ll),
        ("ll128", Protocol::Ll128),
    ] {
        let wl = format!(
            "collective = \"allreduce\"\nalgorithm = \"ring\"\nprotocol = \"{name}\"\nhosts = [0, 4, 8, 12]\nsize = \"480KiB\""
        );
        let s = run(&scenario(false, &wl));
        let (d, w) = proto.efficiency();
        assert_eq!(delivered(&s) * d, data * w, "{name}: wire / data = {w}/{d}");
        // The GPUs' NIC links carried it (with headers and ACKs).
        let nic = tx_gpus(&s);
        assert!(
            nic >= data * w / d && nic < data * w / d * 103 / 100,
            "{name}: {nic}"
        );
        assert_eq!(s.nics.jobs[0].spec.protocol, Some(proto));
        jcts.push(jct(&s, 0));
    }
    // LL's doubled bytes cost more than its lower latency saves at this size.
    assert!(jcts[1] > jcts[2], "{jcts:?}");
}

#[test]
fn a_tree_allreduce_moves_what_two_trees_do_on_the_nics() {
    // 16 GPUs without NVLink: every transfer crosses the NICs. Two trees of 15 edges,
    // each carrying S/2 up and S/2 down: 2 (n-1) S in all, as a ring.
    let (n, size) = (16u64, 1u64 << 20);
    let wl = "collective = \"allreduce\"\nalgorithm = \"tree\"\nprotocol = \"none\"\nsize = \"1MiB\"\nchunks = 4";
    let s = run(&scenario(false, wl));
    assert_eq!(s.nics.jobs[0].spec.collective.name(), "tree_allreduce");
    assert_eq!(delivered(&s), 2 * (n - 1) * size);
    assert_eq!(s.nics.flows.len() as u64, 2 * 2 * (n - 1) * 4);
    let nic = tx_gpus(&s);
    assert!(nic >= 2 * (n - 1) * size && nic < 2 * (n - 1) * size * 103 / 100);
}

#[test]
fn nvls_moves_s_g_plus_one_over_g_on_each_nvlink_and_rings_the_rails() {
    let size = 1u64 << 20;
    // One server of 4 GPUs: each GPU's NVLink carries S (g+1)/g each way, against a
    // ring's 2 (g-1)/g S; nothing touches a rail.
    let g = 4u64;
    let one = |algo: &str| {
        let wl = format!(
            "collective = \"allreduce\"\nalgorithm = \"{algo}\"\nprotocol = \"none\"\nhosts = [0, 1, 2, 3]\nsize = \"1MiB\""
        );
        run(&scenario(true, &wl))
    };
    let nvls = one("nvls");
    let down = tx_of(&nvls, "s0-nvswitch");
    let expect = size * (g + 1);
    assert!(down >= expect && down < expect * 103 / 100, "{down}");
    assert_eq!(tx_of(&nvls, "rail"), 0);
    let ring = one("ring");
    let ring_down = tx_of(&ring, "s0-nvswitch");
    assert!(ring_down >= 2 * (g - 1) * size, "{ring_down}");
    // Across 4 servers: the NVSwitches carry the same per server, the rails each GPU's
    // ring of its reduced shard, 2 (m-1)/m x S/g per GPU.
    let m = 4u64;
    let wl =
        "collective = \"allreduce\"\nalgorithm = \"nvls\"\nprotocol = \"none\"\nsize = \"1MiB\"";
    let s = run(&scenario(true, wl));
    assert_eq!(s.nics.jobs[0].spec.collective.name(), "nvls_allreduce");
    let down = tx_of(&s, "s2-nvswitch");
    assert!(down >= expect && down < expect * 103 / 100, "{down}");
    let rails = tx_of(&s, "rail");
    let rail_data = g * m * 2 * (m - 1) * size / (m * g);
    assert!(
        rails >= rail_data && rails < rail_data * 103 / 100,
        "{rails}"
    );
    assert_eq!(tx_of(&s, "spine"), 0);
}

#[test]
fn auto_picks_by_the_table_and_the_run_records_it() {
    // One server with an NVSwitch, 1 MiB: NVLS with Simple.
    let wl = "collective = \"allreduce\"\nhosts = [0, 1, 2, 3]\nsize = \"1MiB\"";
    let s = run(&scenario(true, wl));
    let job = &s.nics.jobs[0].spec;
    assert_eq!(
        (job.collective.name(), job.protocol),
        ("nvls_allreduce", Some(Protocol::Simple))
    );
    // 16 GPUs over 4 servers without NVLink, a sweep from 8 B to 1 MiB: a tree below
    // 16 x 64 KiB (LL up to 64 KiB, then LL128), then a ring.
    let wl = "collective = \"allreduce\"\nsizes = { min = \"8B\", max = \"1MiB\", factor = 8 }";
    let s = run(&scenario(false, wl));
    let picks: Vec<(u64, &str, &str)> = s
        .nics
        .jobs
        .iter()
        .map(|j| {
            (
                j.spec.size,
                j.spec.collective.name(),
                j.spec.protocol.unwrap().name(),
            )
        })
        .collect();
    assert_eq!(
        picks,
        [
            (8, "tree_allreduce", "ll"),
            (64, "tree_allreduce", "ll"),
            (512, "tree_allreduce", "ll"),
            (4096, "tree_allreduce", "ll"),
            (32768, "tree_allreduce", "ll"),
            (262144, "tree_allreduce", "ll128"),
        ]
    );
    // Naming them overrides the table.
    let wl =
        "collective = \"allreduce\"\nalgorithm = \"ring\"\nprotocol = \"ll128\"\nsize = \"8B\"";
    let s = run(&scenario(false, wl));
    let job = &s.nics.jobs[0].spec;
    assert_eq!(
        (job.collective.name(), job.protocol),
        ("ring_allreduce", Some(Protocol::Ll128))
    );
}

#[test]
fn nccl_tests_csv_has_nccl_tests_columns_and_bus_bandwidth() {
    let wl = "collective = \"allgather\"\nprotocol = \"simple\"\nsizes = { min = \"64KiB\", max = \"256KiB\", factor = 4 }\nrepeat = 2";
    let s = run(&scenario(false, wl));
    let csv = run_table_text("nccl_tests.csv", &s, &Default::default()).unwrap();
    let mut lines = csv.lines();
    assert_eq!(
        lines.next().unwrap(),
        "job_id,ranks,size,count,type,collective,algorithm,protocol,iterations,time_us,algbw,busbw"
    );
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    assert_eq!(rows.len(), 2);
    for (row, (job, size)) in rows.iter().zip([(0usize, 65536u64), (2, 262144)]) {
        assert_eq!(
            row[..9],
            [
                &job.to_string()[..],
                "16",
                &size.to_string(),
                &(size / 4).to_string(),
                "float",
                "all_gather",
                "ring_allgather",
                "simple",
                "2"
            ]
        );
        let t = (jct(&s, job) + jct(&s, job + 1)) / 2;
        let algbw = size as f64 / (t as f64 * 1e-12) / 1e9;
        assert_eq!(row[9], format!("{:.3}", t as f64 / 1e6));
        assert_eq!(row[10], format!("{algbw:.3}"));
        // AllGather's bus factor: (n-1)/n.
        assert_eq!(row[11], format!("{:.3}", algbw * 15.0 / 16.0));
    }
    // The algorithm-named collectives of old report nothing there unless asked.
    let wl = "collective = \"ring_allreduce\"\nsize = \"64KiB\"";
    let s = run(&scenario(false, wl));
    assert!(run_table_text("nccl_tests.csv", &s, &Default::default()).is_none());
}

#[test]
fn reduce_scatter_and_broadcast_send_what_nccl_tests_counts() {
    let (n, size) = (16u64, 1u64 << 20);
    let wl = "collective = \"reduce_scatter\"\nprotocol = \"simple\"\nsize = \"1MiB\"";
    let s = run(&scenario(false, wl));
    assert_eq!(s.nics.jobs[0].spec.collective.name(), "ring_reduce_scatter");
    // Each rank sends (n-1)/n S: n (n-1) transfers of S/n.
    assert_eq!(delivered(&s), (n - 1) * size);
    let wl = "collective = \"broadcast\"\nprotocol = \"none\"\nsize = \"1MiB\"\nchunks = 8";
    let s = run(&scenario(false, wl));
    assert_eq!(s.nics.jobs[0].spec.collective.name(), "ring_broadcast");
    // Every rank but the last forwards S.
    assert_eq!(delivered(&s), (n - 1) * size);
}

#[test]
fn pat_gathers_in_log_steps_with_one_gpu_per_server() {
    // GPU 0 of each of the 4 servers (one rail): `auto` picks PAT for 64 KiB, two steps
    // where a ring takes three; each rank sends (n-1)/n S either way.
    let (n, size) = (4u64, 64u64 << 10);
    let one = |algo: &str| {
        let wl = format!(
            "collective = \"allgather\"\nalgorithm = \"{algo}\"\nprotocol = \"simple\"\nhosts = [0, 4, 8, 12]\nsize = \"64KiB\""
        );
        run(&scenario(false, &wl))
    };
    let pat = one("auto");
    assert_eq!(pat.nics.jobs[0].spec.collective.name(), "pat_allgather");
    assert_eq!(pat.nics.flows.len(), 4 * 2);
    assert_eq!(delivered(&pat), (n - 1) * size);
    let ring = one("ring");
    assert_eq!(ring.nics.flows.len(), 4 * 3);
    assert_eq!(delivered(&ring), (n - 1) * size);
    // Latency-bound at this size: fewer steps finish first.
    assert!(jct(&pat, 0) < jct(&ring, 0));
}
