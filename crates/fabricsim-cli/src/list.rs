//! `fabricsim list`: every model with its parameters and defaults. Defaults are read from
//! the schema's own `Default` values so this list cannot drift from the code.

use fabricsim::cc::dcqcn::DcqcnParams;
use fabricsim::scenario::config::{
    DcqcnCfg, DcqcnProfile, EcnCfg, FabricCfg, PfcCfg, TransportCfg,
};
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
    let _ = writeln!(w, "\n[cc] algorithm = \"dcqcn\" (default) | \"none\"");
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
    let _ = writeln!(w, "\n[[variants]] name, set = {{ \"dotted.path\" = value, ... }}  (one run each, in parallel)");
    let _ = writeln!(
        w,
        "[[sweep]]    path, values = [...], label  (every combination, for every variant)"
    );
    s
}
