//! Flow-size CDF workloads (`kind = "poisson"`) and ns-3 HPCC topology files
//! (`kind = "ns3_file"`), the setup of document 004 (ACC): the CDFs sample as their files
//! say, the offered load is the one asked for, generation is deterministic and respects
//! cross-rack placement, bad files are reported with their line, and the 320-server
//! fat-tree imports and routes.

use fabricsim::base::param::ParamError;
use fabricsim::base::seed::component_rng;
use fabricsim::model::workload::cdf::Cdf;
use fabricsim::model::workload::poisson::host_attachments;
use fabricsim::model::workload::FlowSpec;
use fabricsim::scenario::LoadedScenario;
use fabricsim::{
    load_str, model::topology, model::workload, run::runner, ScenarioError, Simulation,
};
use std::path::{Path, PathBuf};

fn data_dir() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/data"))
}

/// A leaf-spine of `leaves` leaves with 4 hosts each at 100 Gbps, and `workload` (the
/// lines of a `[[workload]]` table).
fn leaf_spine(leaves: u32, workload: &str) -> String {
    format!(
        "seed = 1\n[topology]\nkind = \"leaf_spine\"\nleaves = {leaves}\nspines = 2\nservers_per_leaf = 4\nhost_rate = \"100Gbps\"\nuplink_rate = \"400Gbps\"\n\n[[workload]]\n{workload}\n"
    )
}

fn load(src: &str, base: &Path) -> LoadedScenario {
    load_str(src, "t.toml", base, &[]).unwrap_or_else(|e| panic!("{e}\n{src}"))
}

/// The flows of a scenario (with `seed`), generated without building the simulation.
fn flows_of(src: &str, base: &Path, seed: u64) -> Result<Vec<FlowSpec>, ParamError> {
    let l = load(src, base);
    let g = topology::build(&l.scenario.topology, &l.base_dir)?;
    Ok(workload::generate(&l.scenario.workload, &g, seed, &l.base_dir)?.flows)
}

fn build_err(src: &str, base: &Path) -> ScenarioError {
    let l = load(src, base);
    match runner::build_all(&l, None) {
        Ok(_) => panic!("built:\n{src}"),
        Err(e) => e,
    }
}

/// The points of a CDF data file, read here independently of the library's parser.
fn file_points(name: &str) -> Vec<(f64, f64)> {
    std::fs::read_to_string(data_dir().join("cdf").join(name))
        .unwrap()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let mut f = l.split_whitespace().map(|x| x.parse::<f64>().unwrap());
            (f.next().unwrap(), f.next().unwrap())
        })
        .collect()
}

/// Percent of flows of at most `x` bytes, by linear interpolation between the points.
fn file_percent(pts: &[(f64, f64)], x: f64) -> f64 {
    for w in pts.windows(2) {
        let ((x0, y0), (x1, y1)) = (w[0], w[1]);
        if x < x1 {
            return if x < x0 {
                y0
            } else {
                y0 + (y1 - y0) * (x - x0) / (x1 - x0)
            };
        }
    }
    100.0
}

#[test]
fn cdf_sampling_matches_the_files() {
    for (name, file) in [
        ("websearch", "WebSearch_distribution.txt"),
        ("fbhdp", "FbHdp_distribution.txt"),
        ("alistorage2019", "AliStorage2019.txt"),
        ("googlerpc2008", "GoogleRPC2008.txt"),
    ] {
        let cdf = Cdf::builtin(name).unwrap();
        let pts = file_points(file);
        let mut rng = component_rng(42, name);
        let n = 200_000;
        let mut s: Vec<u64> = (0..n).map(|_| cdf.sample(&mut rng)).collect();
        s.sort_unstable();
        assert!(s[0] >= 1, "{name}: a size below 1 byte");
        assert!(
            s[n - 1] as f64 <= pts.last().unwrap().0,
            "{name}: above the largest size"
        );
        // At breakpoints and in the middle of segments (where a sampler that does not
        // interpolate would be off), among the points with a percent clear of 0 and 100.
        let mut probes = Vec::new();
        for w in pts.windows(2) {
            probes.push(w[0].0);
            probes.push((w[0].0 + w[1].0) / 2.0);
        }
        let mut checked = 0;
        for x in probes {
            // Sizes are rounded to whole bytes: a sample is at most k bytes when the
            // interpolated size is below k + 0.5.
            let k = x.floor();
            let want = file_percent(&pts, k + 0.5);
            if k < 1.0 || !(2.0..=98.0).contains(&want) {
                continue;
            }
            let below = s.partition_point(|&v| v as f64 <= k) as f64 / n as f64 * 100.0;
            assert!(
                (below - want).abs() <= 1.0,
                "{name}: {below:.2}% of samples <= {x} bytes, the file says {want:.2}%"
            );
            checked += 1;
        }
        assert!(checked >= 4, "{name}: only {checked} probes");
        // The sample mean is the CDF's mean (heavy tails: within 5%).
        let m = s.iter().sum::<u64>() as f64 / n as f64;
        assert!(
            (m / cdf.mean() - 1.0).abs() < 0.05,
            "{name}: sample mean {m}, CDF mean {}",
            cdf.mean()
        );
    }
}

#[test]
fn offered_load_is_the_target() {
    // 16 hosts at 100 Gbps for 3 s of arrivals: about 200k WebSearch flows at load 0.6.
    for (cdf, load, dur_s) in [("websearch", 0.6, 3.0), ("fbhdp", 0.3, 0.5)] {
        let src = leaf_spine(
            4,
            &format!(
                "kind = \"poisson\"\ncdf = \"{cdf}\"\nload = {load}\nduration = \"{dur_s}s\"\nstart = \"1ms\""
            ),
        );
        let f = flows_of(&src, Path::new("."), 1).unwrap();
        assert!(f.len() > 50_000, "{cdf}: {} flows", f.len());
        let (t0, t1) = (1_000_000_000u64, 1_000_000_000 + (dur_s * 1e12) as u64);
        assert!(f.iter().all(|x| x.start >= t0 && x.start < t1));
        assert!(f.windows(2).all(|w| w[0].start <= w[1].start), "not sorted");
        let bytes: u64 = f.iter().map(|x| x.size).sum();
        let offered = bytes as f64 * 8.0 / (16.0 * 100e9 * dur_s);
        assert!(
            (offered / load - 1.0).abs() < 0.03,
            "{cdf}: offered {offered:.4} of capacity, asked for {load}"
        );
        // Every host sends its share.
        for h in 0..16 {
            let b: u64 = f.iter().filter(|x| x.src == h).map(|x| x.size).sum();
            let l = b as f64 * 8.0 / (100e9 * dur_s);
            assert!(
                (l / load - 1.0).abs() < 0.25,
                "{cdf}: host {h} offers {l:.3}"
            );
        }
    }
}

#[test]
fn generation_is_deterministic() {
    let src = leaf_spine(
        4,
        "kind = \"poisson\"\ncdf = \"websearch\"\nload = 0.5\nduration = \"20ms\"",
    );
    let a = flows_of(&src, Path::new("."), 7).unwrap();
    let b = flows_of(&src, Path::new("."), 7).unwrap();
    let c = flows_of(&src, Path::new("."), 8).unwrap();
    assert!(a.len() > 100);
    assert_eq!(a, b);
    assert_ne!(a, c);
    // `flows = n` takes the first n arrivals of the same processes.
    let n = flows_of(
        &leaf_spine(
            4,
            "kind = \"poisson\"\ncdf = \"websearch\"\nload = 0.5\nflows = 100",
        ),
        Path::new("."),
        7,
    )
    .unwrap();
    assert_eq!(n.len(), 100);
    assert_eq!(n[..], a[..100]);
    // The workload's position names its generator: a second one draws other flows.
    let two = leaf_spine(
        4,
        "kind = \"poisson\"\ncdf = \"websearch\"\nload = 0.5\nflows = 100\n\n[[workload]]\nkind = \"poisson\"\ncdf = \"websearch\"\nload = 0.5\nflows = 100",
    );
    let t = flows_of(&two, Path::new("."), 7).unwrap();
    assert_eq!(t[..100], n[..]);
    assert_ne!(t[100..], n[..]);
}

#[test]
fn cross_rack_only_is_respected() {
    let base = "kind = \"poisson\"\ncdf = \"fbhdp\"\nload = 0.5\nflows = 5000";
    let rack = |src: &str| {
        let l = load(src, Path::new("."));
        let g = topology::build(&l.scenario.topology, &l.base_dir).unwrap();
        host_attachments(&g)
            .into_iter()
            .map(|a| a.unwrap().0)
            .collect::<Vec<_>>()
    };
    // Default on a topology with racks: every flow leaves its rack.
    let src = leaf_spine(4, base);
    let r = rack(&src);
    let f = flows_of(&src, Path::new("."), 3).unwrap();
    assert!(f.iter().all(|x| r[x.src as usize] != r[x.dst as usize]));
    // Every destination rack and every other host is reached.
    let mut dsts: Vec<u32> = f.iter().map(|x| x.dst).collect();
    dsts.sort_unstable();
    dsts.dedup();
    assert_eq!(dsts.len(), 16);
    // Off: some flows stay in the rack (3 of 15 other hosts share it), none to itself.
    let f = flows_of(
        &leaf_spine(4, &format!("{base}\ncross_rack_only = false")),
        Path::new("."),
        3,
    )
    .unwrap();
    let same = f
        .iter()
        .filter(|x| r[x.src as usize] == r[x.dst as usize])
        .count();
    assert!(f.iter().all(|x| x.src != x.dst));
    assert!(
        (same as f64 / f.len() as f64 - 0.2).abs() < 0.03,
        "{same} of {} in the rack",
        f.len()
    );
    // Hosts of one rack: the default falls back to any other host; asking for cross-rack
    // is an error naming the field.
    let one_rack = format!("{base}\nhosts = [0, 1, 2, 3]");
    let f = flows_of(&leaf_spine(4, &one_rack), Path::new("."), 3).unwrap();
    assert!(f.iter().all(|x| x.src < 4 && x.dst < 4 && x.src != x.dst));
    let e = build_err(
        &leaf_spine(4, &format!("{one_rack}\ncross_rack_only = true")),
        Path::new("."),
    );
    assert_eq!(
        e.field.as_deref(),
        Some("workload[0].cross_rack_only"),
        "{e}"
    );
}

#[test]
fn bad_poisson_settings_name_the_field() {
    let cases: &[(&str, &str, &str)] = &[
        (
            "cdf = \"websearch\"\nload = 1.5\nflows = 10",
            "workload[0].load",
            "0 < load <= 1",
        ),
        (
            "cdf = \"websearch\"\nload = 0.0\nflows = 10",
            "workload[0].load",
            "0 < load <= 1",
        ),
        (
            "cdf = \"websurch\"\nload = 0.5\nflows = 10",
            "workload[0].cdf",
            "unknown cdf `websurch`",
        ),
        (
            "cdf = \"websearch\"\nload = 0.5",
            "workload[0].duration",
            "`flows`",
        ),
        (
            "cdf = \"websearch\"\nload = 0.5\nflows = 10\nduration = \"1ms\"",
            "workload[0].flows",
            "not both",
        ),
        (
            "cdf = \"websearch\"\nload = 0.5\nflows = 20000000",
            "workload[0].flows",
            "at most",
        ),
        (
            "cdf = \"fbhdp\"\nload = 1.0\nduration = \"100s\"",
            "workload[0].duration",
            "at most",
        ),
        (
            "cdf = \"websearch\"\nload = 0.5\nflows = 10\nhosts = [1, 1]",
            "workload[0].hosts[1]",
            "twice",
        ),
    ];
    for (w, field, what) in cases {
        let src = leaf_spine(4, &format!("kind = \"poisson\"\n{w}"));
        let t0 = std::time::Instant::now();
        let e = build_err(&src, Path::new("."));
        assert_eq!(e.field.as_deref(), Some(*field), "{e}\n{src}");
        assert!(e.message.contains(what), "{e}\n{src}");
        assert!(t0.elapsed().as_secs_f64() < 2.0, "slow to reject:\n{src}");
    }
}

#[test]
fn bad_cdf_files_name_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let cases: &[(&str, &str, &str)] = &[
        ("0 0\n1000 40\n500 100\n", ":3:", "sizes must not decrease"),
        (
            "0 0\n1000 40\n2000 30\n3000 100\n",
            ":3:",
            "percents must not decrease",
        ),
        ("0 0\n1000 40\n2000 90\n", ":3:", "must end at percent 100"),
        ("0 0\n1000 forty\n", ":2:", "not a number"),
    ];
    for (i, (text, line, what)) in cases.iter().enumerate() {
        let name = format!("bad{i}.cdf");
        std::fs::write(dir.path().join(&name), text).unwrap();
        let src = leaf_spine(
            4,
            &format!("kind = \"poisson\"\ncdf = \"{name}\"\nload = 0.5\nflows = 10"),
        );
        let e = build_err(&src, dir.path());
        let s = e.to_string();
        assert_eq!(e.field.as_deref(), Some("workload[0].cdf"), "{s}");
        assert!(s.contains(&format!("{name}{line}")), "{s}");
        assert!(s.contains(what), "{s}");
    }
    // A good user file is used as given: every flow is 1000 or 2000 bytes.
    std::fs::write(
        dir.path().join("two.cdf"),
        "# two sizes\n1000 0\n1000 50\n2000 50\n2000 100\n",
    )
    .unwrap();
    let f = flows_of(
        &leaf_spine(
            4,
            "kind = \"poisson\"\ncdf = \"two.cdf\"\nload = 0.5\nflows = 1000",
        ),
        dir.path(),
        1,
    )
    .unwrap();
    assert!(f.iter().all(|x| x.size == 1000 || x.size == 2000));
    let small = f.iter().filter(|x| x.size == 1000).count();
    assert!((400..600).contains(&small), "{small}");
}

fn ns3_scenario(file: &str, workload: &str) -> String {
    format!("[topology]\nkind = \"ns3_file\"\nfile = \"{file}\"\n\n[[workload]]\n{workload}\n")
}

#[test]
fn bad_ns3_files_name_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let cases: &[(&str, &str, &str)] = &[
        (
            "3 1 2\n1\n0 1 100Gbps 1us 0\n2 1 100Gbps\n",
            ":4:",
            "found 3 field",
        ),
        (
            "3 1 2\n1\n0 1 100Gbps 1us 0\n2 1 100Gbit 1us 0\n",
            ":4:",
            "rate unit",
        ),
        (
            "3 1 2\n1\n0 1 100Gbps 1us 0\n2 5 100Gbps 1us 0\n",
            ":4:",
            "node 5 does not exist",
        ),
        (
            "3 1 3\n1\n0 1 100Gbps 1us 0\n2 1 100Gbps 1us 0\n",
            ":4:",
            "which announces a line of switch ids and 3 link(s)",
        ),
        ("3 x 2\n", ":1:", "switch count `x`"),
    ];
    for (i, (text, line, what)) in cases.iter().enumerate() {
        let name = format!("bad{i}.txt");
        std::fs::write(dir.path().join(&name), text).unwrap();
        let src = ns3_scenario(
            &name,
            "kind = \"flows\"\nflows = [{ src = 0, dst = 1, size = 1000 }]",
        );
        let e = build_err(&src, dir.path());
        let s = e.to_string();
        assert_eq!(e.field.as_deref(), Some("topology.file"), "{s}");
        assert!(s.contains(&format!("{name}{line}")), "{s}");
        assert!(s.contains(what), "{s}");
    }
    let e = build_err(
        &ns3_scenario(
            "missing.txt",
            "kind = \"flows\"\nflows = [{ src = 0, dst = 1, size = 1000 }]",
        ),
        dir.path(),
    );
    assert!(e.to_string().contains("cannot read"), "{e}");
}

#[test]
fn ns3_fat_320_is_the_document_004_fat_tree() {
    let topo_dir = data_dir().join("topo");
    let src = ns3_scenario(
        "ns3-fat-320.txt",
        "kind = \"flows\"\nflows = [{ src = 0, dst = 319, size = \"1MB\" }, { src = 0, dst = 1, size = 4096 }]",
    );
    let l = load(&src, &topo_dir);
    let g = topology::build(&l.scenario.topology, &l.base_dir).unwrap();
    let switches = g.nodes.iter().filter(|n| n.is_switch).count();
    assert_eq!((g.hosts.len(), switches, g.links.len()), (320, 56, 480));
    let is_host_link = |a: usize, b: usize| !g.nodes[a].is_switch || !g.nodes[b].is_switch;
    let gbps = |r: u64| r / 1_000_000_000;
    for lk in &g.links {
        let want = if is_host_link(lk.a, lk.b) { 100 } else { 400 };
        assert_eq!(
            gbps(lk.rate.0),
            want,
            "{} - {}",
            g.nodes[lk.a].name,
            g.nodes[lk.b].name
        );
        assert_eq!(lk.delay, 1_000_000, "1 us per link");
    }
    // 20 ToRs with 16 hosts each; host ids are the ns-3 node ids 0..319.
    let att = host_attachments(&g);
    let mut per_tor = std::collections::BTreeMap::new();
    for a in &att {
        *per_tor.entry(a.unwrap().0).or_insert(0) += 1;
    }
    assert_eq!(per_tor.len(), 20);
    assert!(per_tor.values().all(|&n| n == 16));
    assert_eq!(g.nodes[g.hosts[319]].name, "host319");
    assert_eq!(g.nodes[att[0].unwrap().0].name, "switch320");

    // Host 0 to host 319 crosses pods: host - ToR - agg - core - agg - ToR - host.
    let sim = Simulation::build(&l.scenario, &l.file, &l.base_dir).unwrap();
    let p = sim.path_of(0);
    assert_eq!(p.len(), 6, "{p:?}");
    let rates: Vec<u64> = p.iter().map(|h| gbps(h.bps)).collect();
    assert_eq!(rates, [100, 400, 400, 400, 400, 100]);
    assert_eq!(sim.path_of(1).len(), 2);
}

#[test]
fn poisson_on_the_320_fat_tree_runs() {
    // The large-scale setup of document 004 in miniature: WebSearch at load 0.3 for 50 us.
    let src = format!(
        "seed = 4\nmax_time = \"3ms\"\n{}",
        ns3_scenario(
            "ns3-fat-320.txt",
            "kind = \"poisson\"\ncdf = \"websearch\"\nload = 0.3\nduration = \"50us\"",
        )
    );
    let l = load(&src, &data_dir().join("topo"));
    let mut sim = Simulation::build(&l.scenario, &l.file, &l.base_dir).unwrap();
    let n = sim.nics.flows.len();
    assert!(n > 10, "{n} flows");
    for i in 0..n {
        let s = &sim.nics.flows[i].spec;
        assert_ne!(s.src / 16, s.dst / 16, "flow {i} stays in its rack");
        assert!(!sim.path_of(i).is_empty(), "flow {i} has no route");
    }
    sim.run(&mut |_| {});
    let bad = fabricsim::analysis::invariants::check(&sim);
    assert!(bad.is_empty(), "{bad:?}");
}
