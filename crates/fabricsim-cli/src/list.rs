//! `fabricsim list`: every model with its parameters and defaults. Defaults are read from
//! the schema's own `Default` values so this list cannot drift from the code.

use fabricsim::cc::acc::AccParams;
use fabricsim::cc::dcqcn::DcqcnParams;
use fabricsim::cc::hpcc::HpccParams;
use fabricsim::cc::timely::TimelyParams;
use fabricsim::scenario::config::{
    DcqcnCfg, DcqcnProfile, EcnCfg, FabricCfg, PfcCfg, TransportCfg,
};
use fabricsim::telemetry::int::{INT_BYTES_PER_HOP, MAX_INT_HOPS};
use fabricsim::telemetry::tcd::TcdParams;
use fabricsim::units::{fmt_bytes, fmt_time, Rate};
use std::fmt::Write;

pub fn text() -> String {
    let f = FabricCfg::default();
    let p = PfcCfg::default();
    let e = EcnCfg::default();
    let t = TransportCfg::default();
    let ns3 = DcqcnParams::resolve(&DcqcnCfg::default(), Rate::gbps(100));
    let paper = DcqcnParams::resolve(
        &DcqcnCfg {
            profile: DcqcnProfile::Paper,
            ..DcqcnCfg::default()
        },
        Rate::gbps(100),
    );
    let mut s = String::new();
    let w = &mut s;
    let _ = writeln!(w, "Scenario top level");
    let _ = writeln!(
        w,
        "  seed = 1, max_time = \"1000ms\", stall_timeout = \"20ms\", name, description"
    );
    let _ = writeln!(w, "\n[topology] kind = ...");
    let _ = writeln!(
        w,
        "  leaf_spine  leaves, spines | speedup, servers_per_leaf, nics_per_server = 1, host_rate,"
    );
    let _ = writeln!(w, "              uplink_rate = host_rate, uplinks_per_pair = 1, link_delay = \"1us\" | link_length");
    let _ = writeln!(
        w,
        "  fat_tree    k (even), rate, agg_rate = rate, core_rate = rate, oversubscription = 1,"
    );
    let _ = writeln!(
        w,
        "              link_delay = \"1us\" | link_length (5 ns per metre)"
    );
    let _ = writeln!(w, "  custom      hosts = [names], switches = [names], links = [{{a, b, rate, delay | length}}],");
    let _ = writeln!(
        w,
        "              routes = [{{at, to, via = [names]}}] (static next hops)"
    );
    let _ = writeln!(
        w,
        "  three_tier  pods, tors_per_pod, servers_per_tor, aggs_per_pod, cores (multiple of aggs_per_pod),"
    );
    let _ = writeln!(
        w,
        "              host_rate, tor_agg_rate = host_rate, agg_core_rate = tor_agg_rate, link_delay | link_length"
    );
    let _ = writeln!(
        w,
        "  ns3_file    file (ns-3 HPCC topology: `nodes switches links`, switch ids, then"
    );
    let _ = writeln!(
        w,
        "              `a b rate delay error_rate` per link; non-switch nodes are hosts 0.. in node-id order)"
    );
    let _ = writeln!(w, "\n[fabric]");
    let _ = writeln!(
        w,
        "  buffer = \"{}\" (shared, per switch), switch_latency = \"{}\"",
        fmt_bytes(f.buffer),
        fmt_time(f.switch_latency)
    );
    let _ = writeln!(w, "  [fabric.pfc]  enabled = {} (false: lossy drop-tail), threshold = \"dynamic\" | \"static\",", p.enabled);
    let _ = writeln!(
        w,
        "                scope = \"all\" | \"edge\" (only switch ports facing hosts),"
    );
    let _ = writeln!(
        w,
        "                alpha = {}, xoff = \"{}\" (static), xon_delta = \"{}\", reserve = \"{}\",",
        p.alpha,
        fmt_bytes(p.xoff),
        fmt_bytes(p.xon_delta),
        fmt_bytes(p.reserve)
    );
    let _ = writeln!(
        w,
        "                headroom = 3*rate*delay/8 + 2 MTU (per port), pause_quanta = {}",
        p.pause_quanta
    );
    let _ = writeln!(w, "  [fabric.ecn]  enabled = {}, profile = \"ns3\" (Kmin 400KB, Kmax 1600KB, Pmax 0.2 at 100G, scaled by rate)", e.enabled);
    let _ = writeln!(
        w,
        "                | \"paper\" (Kmin 5KB, Kmax 200KB, Pmax 0.01); kmin, kmax, pmax override"
    );
    let _ = writeln!(
        w,
        "  [fabric.load_balance] algorithm = \"ecmp\" | \"spray_random\" | \"spray_rr\" | \"pktc\" (GSE containers)"
    );
    let gse = fabricsim::scenario::config::GseCfg::default();
    let _ = writeln!(
        w,
        "  [fabric.gse]  (with pktc) container = \"{}\" (payload), header = {} B, scheduling = \"none\" | \"dgsq\",",
        fmt_bytes(gse.container),
        gse.header
    );
    let _ = writeln!(
        w,
        "                eps = {} (grants at (1-eps) x port rate), reorder_timeout = \"{}\", control_bytes = {} B",
        gse.eps,
        fmt_time(gse.reorder_timeout),
        gse.control_bytes
    );
    let sec = fabricsim::scenario::config::SecurityCfg::default();
    let _ = writeln!(
        w,
        "  [fabric.security] mode = \"none\" | \"macsec\" | \"ipsec\" | \"physec\" (custom links: security = ...),"
    );
    let _ = writeln!(
        w,
        "                macsec_bytes = {}, ipsec_bytes = {}, physec_segment_blocks = {}, physec_latency = \"{}\"",
        sec.macsec_bytes,
        sec.ipsec_bytes,
        sec.physec_segment_blocks,
        fmt_time(sec.physec_latency)
    );
    let _ = writeln!(w, "\n[transport]  (RDMA RC, go-back-N)");
    let _ = writeln!(
        w,
        "  mtu = \"{}\", header = {} B, ack_size = {} B, ack_every = {}, rto = \"{}\",",
        fmt_bytes(t.mtu),
        t.header,
        t.ack_size,
        t.ack_every,
        fmt_time(t.rto)
    );
    let _ = writeln!(
        w,
        "  data_priority = {}, control_priority = {}",
        t.data_priority, t.control_priority
    );
    let _ = writeln!(
        w,
        "\n[cc] algorithm = \"dcqcn\" (default) | \"none\" | \"timely\" | \"hpcc\" | \"acc\" | \"acc_no_halt\""
    );
    let _ = writeln!(
        w,
        "  [[cc.class]] algorithm, workload (index), min_size, max_size: flows matching the first class run its algorithm"
    );
    for (name, d) in [("ns3", ns3), ("paper", paper)] {
        let _ = writeln!(
            w,
            "  [cc.dcqcn] profile = \"{name}\": g = {:.6}, alpha0 = {}, rai = {:.0} Mbps, rhai = {:.0} Mbps, rmin = {:.0} Mbps (at 100G),",
            d.g, d.alpha0, d.rai / 1e6, d.rhai / 1e6, d.rmin / 1e6
        );
        let _ = writeln!(
            w,
            "             timer = \"{}\", byte_counter = \"{}\", f = {}, cnp_interval = \"{}\"",
            fmt_time(d.timer),
            fmt_bytes(d.byte_counter),
            d.f,
            fmt_time(d.cnp_interval)
        );
    }
    let line = Rate::gbps(100);
    let rtt = 10 * fabricsim::units::US;
    let tm = TimelyParams::new(line);
    let _ = writeln!(
        w,
        "  [cc.timely] alpha = {}, beta = {}, t_low = \"{}\", t_high = \"{}\", min_rtt = \"{}\",",
        tm.alpha,
        tm.beta,
        fmt_time(tm.t_low),
        fmt_time(tm.t_high),
        fmt_time(tm.min_rtt)
    );
    let _ = writeln!(
        w,
        "             delta = C/1000 ({:.0} Mbps at 100G), hai = 5 delta, hai_after = {}, min_rate = C/1000 [recon],",
        tm.delta / 1e6,
        tm.hai_after
    );
    let _ = writeln!(
        w,
        "             per_rtt = {} (update once per RTT: on an ACK of data sent after the last update)",
        tm.per_rtt
    );
    let hp = HpccParams::new(line, rtt);
    let _ = writeln!(
        w,
        "  [cc.hpcc] form = \"window\" | \"rate\" (ns-3 profile, R_AI = C/2500), eta = {}, max_stage = {},",
        hp.eta, hp.max_stage
    );
    let _ = writeln!(
        w,
        "            base_rtt = longest base RTT of the HPCC flows, expected_flows = 100 (W_AI = (1-eta) C T / N),"
    );
    let _ = writeln!(
        w,
        "            w_ai | r_ai override W_AI, min_rate = C/1000, fast_react = {}; INT {} B per hop, at most {} hops",
        hp.fast_react, INT_BYTES_PER_HOP, MAX_INT_HOPS
    );
    let ac = AccParams::new(line, rtt);
    let _ = writeln!(
        w,
        "  [cc.acc]  period = base RTT of the flow, base_rtt = the flow's, ce_threshold = {}, p_thresh = {},",
        ac.ce_threshold, ac.p_thresh
    );
    let _ = writeln!(
        w,
        "            r_ai = C/100 [recon], fast_after = {}, fast_factor = {} [recon], rate_weight = {} [recon],",
        ac.fast_after, ac.fast_factor, ac.rate_weight
    );
    let _ = writeln!(
        w,
        "            min_rate = C/1000 [recon], halt = {} (acc_no_halt: false), onset_restart = {} [recon]",
        ac.halt, ac.onset_restart
    );
    let td = TcdParams::new(line, 512_000, 0);
    let _ = writeln!(
        w,
        "  [fabric.tcd] enabled = on when a flow runs ACC, q_th = {} per 100G [recon], t_on_max = (xoff + headroom)/C [recon]",
        fmt_bytes(td.q_th)
    );
    let _ = writeln!(w, "\n[[workload]] kind = ...");
    let _ = writeln!(
        w,
        "  flows           flows = [{{src, dst, size, start = \"0us\"}}]"
    );
    let _ = writeln!(
        w,
        "  csv             file (header src,dst,size,start; start in ns or with a unit)"
    );
    let _ = writeln!(
        w,
        "  hpcc_flow_file  file (ns-3 HPCC format: count, then `src dst pg dport size start_s`)"
    );
    let _ = writeln!(
        w,
        "  incast          senders (\"all\" | count | list), receiver, size, start"
    );
    let _ = writeln!(
        w,
        "  permutation     hosts = \"all\", size, start (random derangement, seeded)"
    );
    let _ = writeln!(w, "  all_to_all      hosts = \"all\", size, start");
    let _ = writeln!(
        w,
        "  collective      collective = \"ring_allreduce\" | \"alltoall\" | \"halving_doubling\", size (per rank),"
    );
    let _ = writeln!(
        w,
        "                  hosts = \"all\", jobs = \"one\" | \"nic_index\", start, repeat = 1, chunks = 1, channels = 1, rounds = false"
    );
    let cdfs: Vec<String> = fabricsim::workload::cdf::BUILTIN
        .iter()
        .map(|(n, _, _)| format!("\"{n}\""))
        .collect();
    let _ = writeln!(
        w,
        "  poisson         cdf = {} | \"path/to/cdf\" (`size percent` lines),",
        cdfs.join(" | ")
    );
    let _ = writeln!(
        w,
        "                  load (0 < load <= 1 of the host link), duration | flows (count), start = \"0us\","
    );
    let _ = writeln!(
        w,
        "                  hosts = \"all\", cross_rack_only = true when the hosts span 2+ switches (seeded)"
    );
    let _ = writeln!(
        w,
        "\n[record]  queue_interval (queues.csv), rate_interval (rates.csv)"
    );
    let _ = writeln!(
        w,
        "  [record.convergence] flows = all, join = latest start, fair_share = receiver NIC / flows,"
    );
    let _ = writeln!(
        w,
        "                       tolerance = {}, hold = \"{}\" (convergence.csv: time to cut, time to fair share)",
        fabricsim::convergence::DEFAULT_TOLERANCE,
        fmt_time(fabricsim::convergence::DEFAULT_HOLD)
    );
    let _ = writeln!(
        w,
        "  [record.window]      from, to, flows = [ids], ports = [\"switch:port\"] (window.csv: goodput, queues)"
    );
    let _ = writeln!(w, "\n[[variants]] name, set = {{ \"dotted.path\" = value, ... }}  (one run each, in parallel)");
    let _ = writeln!(
        w,
        "[[sweep]]    path, values = [...], label  (every combination, for every variant)"
    );
    s
}
