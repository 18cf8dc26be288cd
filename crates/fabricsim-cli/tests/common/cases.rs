//! The shipped scenarios as the tests run them: long ones cut with `--set` overrides.
//! Shared by the golden-output test and the parallel engine's byte-identity test
//! (`crates/fabricsim/tests/sharded.rs`, which includes this file by path).

/// (case, scenario file, overrides). Every scenario appears at least once.
pub const CASES: &[(&str, &str, &[&str])] = &[
    ("quickstart", "quickstart.toml", &[]),
    ("pfc-deadlock", "pfc-deadlock.toml", &[]),
    ("security-overhead", "security-overhead.toml", &[]),
    (
        "dcqcn-fairness",
        "dcqcn-fairness.toml",
        &["max_time=\"10ms\""],
    ),
    (
        "acc-convergence",
        "acc-convergence.toml",
        &["max_time=\"10ms\""],
    ),
    ("acc-victim", "acc-victim.toml", &["max_time=\"5ms\""]),
    ("incast-pfc", "incast-pfc.toml", &["max_time=\"10ms\""]),
    ("gse-ablation", "gse-ablation.toml", &["max_time=\"2ms\""]),
    (
        "gse-vs-roce-quick",
        "gse-vs-roce-quick.toml",
        &["sweep[3].values=[\"1MiB\"]"],
    ),
    (
        "gse-vs-roce-readings",
        "gse-vs-roce-readings.toml",
        &[
            "seeds=2",
            "sweep[0].names=[\"alltoall_pairwise\", \"halving_doubling\"]",
            "sweep[0].values=[{ \"workload[0].collective\" = \"alltoall\", \"workload[0].rounds\" = true }, { \"workload[0].collective\" = \"halving_doubling\" }]",
            "sweep[1].names=[\"4x100G\"]",
            "sweep[1].values=[{ \"topology.uplink_rate\" = \"100Gbps\", \"topology.uplinks_per_pair\" = 4 }]",
            "sweep[2].values=[\"1MiB\"]",
        ],
    ),
    (
        "gse-vs-roce",
        "gse-vs-roce.toml",
        &["sweep[1].values=[1.5]", "sweep[3].values=[\"2MiB\"]"],
    ),
    ("trace-jobs", "trace-jobs.toml", &[]),
    (
        "gse-vs-roce-nic",
        "gse-vs-roce-nic.toml",
        &[
            "seeds=2",
            "workload[0].size=\"1MiB\"",
            "sweep[0].values=[0, \"64KiB\"]",
        ],
    ),
    ("longhaul-cnp", "longhaul-cnp.toml", &["max_time=\"3ms\""]),
    (
        "longhaul-nccl",
        "longhaul-nccl.toml",
        &["sweep[1].values=[\"16MiB\"]"],
    ),
    (
        "longhaul-training",
        "longhaul-training.toml",
        &["sweep[0].values=[120]", "sweep[1].values=[\"1600Gbps\"]"],
    ),
    ("longhaul-pp-tuning", "longhaul-pp-tuning.toml", &[]),
    (
        "sunway-bandwidth",
        "sunway-bandwidth.toml",
        &["workload[0].size=\"1MiB\"", "sweep[0].values=[1, 256]"],
    ),
    (
        "sunway-collectives",
        "sunway-collectives.toml",
        &["sweep[0].values=[128]"],
    ),
    (
        "longhaul-dp-scale",
        "longhaul-dp-scale.toml",
        &["topology.leaves=2", "workload[0].gradient=\"32MB\""],
    ),
    (
        "websearch-fattree",
        "websearch-fattree.toml",
        &["workload[0].duration=\"300us\"", "max_time=\"2ms\""],
    ),
    // The same under the ns3 fabric profile (every ns-3 parity option at once).
    (
        "websearch-fattree-ns3",
        "websearch-fattree.toml",
        &[
            "workload[0].duration=\"300us\"",
            "max_time=\"2ms\"",
            "profile=\"ns3\"",
        ],
    ),
    (
        "gse-ber",
        "gse-ber.toml",
        &[
            "workload[0].size=\"1MiB\"",
            "sweep[0].values=[\"alltoall\"]",
            "sweep[1].values=[\"none\"]",
            "sweep[3].values=[1e-6]",
        ],
    ),
    (
        "ecmp-lag",
        "ecmp-lag.toml",
        &[
            "workload[0].size=\"256KiB\"",
            "workload[1].size=\"256KiB\"",
            "workload[2].size=\"256KiB\"",
            "workload[3].size=\"256KiB\"",
        ],
    ),
    (
        "ecmp-polarization",
        "ecmp-polarization.toml",
        &[
            "workload[0].size=\"256KiB\"",
            "workload[1].size=\"256KiB\"",
            "workload[2].size=\"256KiB\"",
            "workload[3].size=\"256KiB\"",
        ],
    ),
    (
        "asymmetry",
        "asymmetry.toml",
        &["workload[0].size=\"1MiB\""],
    ),
    ("roce-vs-ib-latency", "roce-vs-ib-latency.toml", &[]),
    ("pfc-vs-credit-buffer", "pfc-vs-credit-buffer.toml", &[]),
    (
        "pfc-vs-credit-min-buffer",
        "pfc-vs-credit-min-buffer.toml",
        &[
            "sweep[1].names=[\"pfc\", \"credits-32KiB\"]",
            "sweep[1].values=[{}, { \"fabric.pfc.enabled\" = false, \"fabric.credit.enabled\" = true, \"fabric.credit.shared\" = \"32KiB\" }]",
        ],
    ),
    ("ecn-unfairness", "ecn-unfairness.toml", &["max_time=\"8ms\""]),
    ("forward-cnp", "forward-cnp.toml", &[]),
    ("rail-optimized", "rail-optimized.toml", &[]),
    (
        "nccl-fidelity",
        "nccl-fidelity.toml",
        &[
            "workload[0].sizes={ min = \"1MiB\", max = \"1MiB\" }",
            "variants[2].set={ \"topology.servers\" = 2, \"workload[0].sizes\" = { min = \"1MiB\", max = \"1MiB\" } }",
            "variants[3].set={ \"topology.gpus_per_server\" = 2, \"workload[0].algorithm\" = \"nvls\", \"workload[0].sizes\" = { min = \"128B\", max = \"8KiB\", factor = 64 } }",
            "variants[4].set={ \"topology.servers\" = 2, \"workload[0].algorithm\" = \"auto\", \"workload[0].sizes\" = { min = \"8B\", max = \"8MiB\", factor = 16 }, \"workload[0].segment\" = \"auto\" }",
        ],
    ),
    (
        "nvlink-granularity",
        "nvlink-granularity.toml",
        &[
            "sweep[0].values=[\"1MiB\"]",
            "sweep[1].values=[4096, 65536]",
        ],
    ),
    (
        "nccl-tests",
        "nccl-tests.toml",
        &[
            "workload[0].sizes={ min = \"64B\", max = \"4MiB\", factor = 16 }",
            "workload[0].chunks=1",
        ],
    ),    (
        "nccl-segments",
        "nccl-segments.toml",
        &[
            "topology.servers=2",
            "sweep[0].names=[\"1MiB\"]",
            "sweep[0].values=[{ min = \"1MiB\", max = \"1MiB\" }]",
            "sweep[1].names=[\"4KiB\", \"64KiB\"]",
            "sweep[1].values=[4096, 65536]",
        ],
    ),
];
