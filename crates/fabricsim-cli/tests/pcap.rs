//! Packet capture (`[record.pcap]`): a capture of `scenarios/incast-pfc.toml` decodes in
//! Debian's `tshark` as RoCEv2 (the infiniband dissector on UDP 4791) and PFC (MAC
//! control opcode 0x0101), with the counts the simulator says it sent on those ports
//! (`ports.csv`) and the counts of each kind the file itself holds; the file is the same
//! byte for byte across runs; the limit and the time window are honoured.
//!
//! Without `tshark` on the machine the decoding checks print a skip message and pass;
//! the checks against `ports.csv` run anyway.

mod common;

use fabricsim::base::wire::bth::{opcode, AethRepr, BthRepr, Syndrome};
use fabricsim::base::wire::ethernet::{self, EthernetRepr};
use fabricsim::base::wire::ipv4::{Ipv4Repr, ECN_CE};
use fabricsim::base::wire::pfc::PfcRepr;
use fabricsim::base::wire::udp::{UdpRepr, ROCEV2_PORT};
use fabricsim::output::pcap::pcapng::{self, ReadBack};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
}

/// Runs incast-pfc with `sets` into `out` and returns the exit code.
fn run(out: &Path, sets: &[&str]) -> i32 {
    run_file(&root().join("scenarios/incast-pfc.toml"), out, sets).0
}

/// Runs `file` with `sets` into `out` and returns the exit code and stderr.
fn run_file(file: &Path, out: &Path, sets: &[&str]) -> (i32, String) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_fabricsim"));
    cmd.arg("run")
        .arg(file)
        .arg("--out")
        .arg(out)
        .args(["--quiet", "--threads", "2"]);
    for s in sets {
        cmd.args(["--set", s]);
    }
    let o = cmd.output().unwrap();
    assert!(
        matches!(o.status.code(), Some(0) | Some(1)),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    (
        o.status.code().unwrap(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// `summary.json`'s `capture` section of the run in `dir`: (frames, frames_not_kept,
/// limit).
fn capture_stats(dir: &Path) -> (u64, u64, u64) {
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("summary.json")).unwrap()).unwrap();
    let c = &v["capture"];
    let n = |k: &str| c[k].as_u64().unwrap_or_else(|| panic!("capture.{k}: {c}"));
    (n("frames"), n("frames_not_kept"), n("limit"))
}

/// tshark's expert items of severity error (malformed frames among them) in `file`,
/// one line each, read with `extra` arguments first.
fn expert_errors(tshark: &str, file: &Path, extra: &[&str]) -> Vec<String> {
    let o = Command::new(tshark)
        .args(extra)
        .arg("-r")
        .arg(file)
        .args(["-q", "-z", "expert,error"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8_lossy(&o.stdout).into_owned();
    // The report lists each group under a heading "Errors (N)"; nothing when none.
    text.lines()
        .skip_while(|l| !l.starts_with("Errors"))
        .filter(|l| !l.trim().is_empty() && !l.starts_with('='))
        .map(str::to_string)
        .collect()
}

/// Smaller messages (a run of a second or two) that still fill the buffers: PFC and CNPs
/// happen.
const SMALL: &str = "workload[0].size=\"512KB\"";
const VARIANTS: [&str; 3] = ["pfc_dcqcn", "pfc_only", "lossy"];

/// `tshark` if it runs here.
fn tshark() -> Option<&'static str> {
    let ok = Command::new("tshark")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        eprintln!("SKIP: tshark is not installed (apt install tshark): decoding not checked");
    }
    ok.then_some("tshark")
}

/// Frames of `file` matching the display filter `filter`, as tshark counts them.
fn tshark_count(tshark: &str, file: &Path, filter: &str) -> usize {
    let o = Command::new(tshark)
        .arg("-r")
        .arg(file)
        .args(["-o", "ip.check_checksum:TRUE"])
        .args(["-Y", filter, "-T", "fields", "-e", "frame.number"])
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "tshark -Y {filter}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).lines().count()
}

/// ports.csv: (node, port) -> (tx_packets, pause_frames_sent, resume_frames_sent).
fn ports_csv(dir: &Path) -> BTreeMap<(String, u32), (u64, u64, u64)> {
    let mut r = csv::Reader::from_path(dir.join("ports.csv")).unwrap();
    let h = r.headers().unwrap().clone();
    let col = |n: &str| h.iter().position(|c| c == n).unwrap();
    let (node, port, tx, ps, rs) = (
        col("node"),
        col("port"),
        col("tx_packets"),
        col("pause_frames_sent"),
        col("resume_frames_sent"),
    );
    r.records()
        .map(|rec| {
            let rec = rec.unwrap();
            let n = |i: usize| rec[i].parse::<u64>().unwrap();
            (
                (rec[node].to_string(), n(port) as u32),
                (n(tx), n(ps), n(rs)),
            )
        })
        .collect()
}

/// What the file holds, by kind, counted by parsing every frame with `fabricsim::base::wire`.
#[derive(Debug, Default, PartialEq)]
struct Kinds {
    roce: usize,
    data: usize,
    ack: usize,
    nak: usize,
    cnp: usize,
    ce: usize,
    pfc: usize,
    xoff: usize,
    /// Data frames captured without their payload.
    data_cut: usize,
}

fn kinds(frames: &[&pcapng::ReadFrame]) -> Kinds {
    let mut k = Kinds::default();
    for f in frames {
        let eth = EthernetRepr::parse(&f.data).unwrap();
        let rest = &f.data[EthernetRepr::LEN..];
        match eth.ethertype {
            ethernet::ETHERTYPE_IPV4 => {
                let ip = Ipv4Repr::parse(rest).unwrap();
                let udp = UdpRepr::parse(&rest[Ipv4Repr::LEN..]).unwrap();
                assert_eq!(udp.dst_port, ROCEV2_PORT);
                let l4 = &rest[Ipv4Repr::LEN + UdpRepr::LEN..];
                let bth = BthRepr::parse(l4).unwrap();
                k.roce += 1;
                k.ce += (ip.ecn == ECN_CE) as usize;
                match bth.opcode {
                    opcode::RC_ACK => {
                        match AethRepr::parse(&l4[BthRepr::LEN..]).unwrap().syndrome {
                            Syndrome::Nak { .. } => k.nak += 1,
                            _ => k.ack += 1,
                        }
                    }
                    opcode::CNP => k.cnp += 1,
                    op => {
                        assert!(op <= opcode::RC_WRITE_ONLY, "opcode {op:#x}");
                        k.data += 1;
                        k.data_cut += (f.data.len() < f.orig_len as usize) as usize;
                    }
                }
            }
            ethernet::ETHERTYPE_MAC_CONTROL => {
                let p = PfcRepr::parse(rest).unwrap();
                k.pfc += 1;
                k.xoff += p.time.iter().any(|&t| t > 0) as usize;
            }
            t => panic!("unexpected EtherType {t:#06x}"),
        }
    }
    k
}

fn frames_of(cap: &ReadBack, iface: usize) -> Vec<&pcapng::ReadFrame> {
    cap.frames
        .iter()
        .filter(|f| f.iface as usize == iface)
        .collect()
}

#[test]
fn a_capture_of_incast_pfc_decodes_as_roce_and_pfc_with_the_counts_the_simulator_sent() {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("cap");
    // The scenario's own capture (a sender's NIC, the leaf port toward it) and the leaf
    // port toward the receiver, where DCQCN's CE marks arrive.
    let code = run(
        &out,
        &[
            SMALL,
            "record.pcap.ports=[\"host16\", \"leaf1:0\", \"leaf0:0\"]",
        ],
    );
    assert_eq!(code, 0, "every flow completes: no frame is left queued");
    common::assert_no_tmp(&out);
    let tshark = tshark();
    let mut seen = BTreeMap::new();
    for v in VARIANTS {
        let dir = out.join(v);
        let file = dir.join("capture.pcapng");
        let cap = pcapng::read(&std::fs::read(&file).unwrap()).unwrap();
        assert_eq!(cap.interfaces, ["host16", "leaf1:0", "leaf0:0"]);
        assert_eq!(cap.tsresol, [9, 9, 9], "nanosecond timestamps");
        assert!(
            cap.frames.windows(2).all(|w| w[0].ts <= w[1].ts),
            "{v}: frames in time order"
        );
        let ports = ports_csv(&dir);
        let mut total = Kinds::default();
        for (i, (node, port)) in [("host16", 0), ("leaf1", 0), ("leaf0", 0)]
            .into_iter()
            .enumerate()
        {
            let (tx, pause, resume) = ports[&(node.to_string(), port)];
            let fr = frames_of(&cap, i);
            assert!(fr.iter().all(|f| f.data.len() <= f.orig_len as usize));
            // Every frame the port sent, and nothing else.
            assert_eq!(fr.len() as u64, tx, "{v}: {node}:{port}");
            let k = kinds(&fr);
            assert_eq!(
                k.pfc as u64,
                pause + resume,
                "{v}: {node}:{port} PFC frames"
            );
            assert_eq!(k.xoff as u64, pause, "{v}: {node}:{port} XOFF frames");
            total.roce += k.roce;
            total.data += k.data;
            total.ack += k.ack;
            total.nak += k.nak;
            total.cnp += k.cnp;
            total.ce += k.ce;
            total.pfc += k.pfc;
            total.xoff += k.xoff;
            total.data_cut += k.data_cut;
        }
        // The scenario writes data frames whole (`payload = true`), and the file's own
        // comment says so.
        assert_eq!(total.data_cut, 0, "{v}");
        let bytes = std::fs::read(&file).unwrap();
        assert!(
            String::from_utf8_lossy(&bytes).contains("; data frames whole, payloads as zeros"),
            "{v}: the section comment"
        );
        // The simulation behaved as the scenario says: pauses only with PFC, CNPs only
        // with DCQCN, data and ACKs always.
        assert!(total.data > 0 && total.ack > 0, "{v}: {total:?}");
        assert_eq!(total.pfc > 0, v != "lossy", "{v}: {total:?}");
        assert_eq!(total.cnp > 0, v != "pfc_only", "{v}: {total:?}");
        if let Some(t) = tshark {
            let n = |f: &str| tshark_count(t, &file, f);
            assert_eq!(n("frame"), cap.frames.len(), "{v}");
            assert_eq!(n("infiniband"), total.roce, "{v}: RoCEv2");
            assert_eq!(n("infiniband.bth.opcode <= 10"), total.data, "{v}: data");
            assert_eq!(
                n("infiniband.bth.opcode == 17 && infiniband.aeth.syndrome.opcode == 0"),
                total.ack,
                "{v}: ACKs"
            );
            assert_eq!(
                n("infiniband.aeth.syndrome.opcode == 3"),
                total.nak,
                "{v}: NAKs"
            );
            assert_eq!(n("infiniband.bth.opcode == 129"), total.cnp, "{v}: CNPs");
            assert_eq!(n("ip.dsfield.ecn == 3"), total.ce, "{v}: CE marks");
            assert_eq!(n("macc.opcode == 0x0101"), total.pfc, "{v}: PFC");
            assert_eq!(n("_ws.malformed"), 0, "{v}: malformed frames");
            assert_eq!(n("ip.checksum.status == \"Bad\""), 0, "{v}: IP checksums");
            assert_eq!(
                n("ip.checksum.status == \"Good\""),
                total.roce,
                "{v}: IP checksums"
            );
            // Whole frames: the dissector finds every length it expects.
            let o = Command::new(t).arg("-r").arg(&file).output().unwrap();
            let text = String::from_utf8_lossy(&o.stdout);
            assert_eq!(text.matches("Malformed").count(), 0, "{v}:\n{text}");
            seen.insert(v, (n("infiniband"), n("macc.opcode == 0x0101")));
        }
        seen.entry(v).or_insert((total.roce, total.pfc));
        eprintln!("{v}: {total:?}");
    }
    eprintln!("(RoCEv2 frames, PFC frames) per variant: {seen:?}");
}

#[test]
fn a_capture_is_byte_identical_across_runs() {
    let d = tempfile::tempdir().unwrap();
    let sets = [SMALL, "record.pcap.ports=[\"host16\", \"leaf1:0\"]"];
    run(&d.path().join("a"), &sets);
    run(&d.path().join("b"), &sets);
    for v in VARIANTS {
        let a = std::fs::read(d.path().join("a").join(v).join("capture.pcapng")).unwrap();
        let b = std::fs::read(d.path().join("b").join(v).join("capture.pcapng")).unwrap();
        assert!(a.len() > 1000, "{v}: {} bytes", a.len());
        assert!(a == b, "{v}: the captures differ");
    }
}

#[test]
fn the_limit_and_the_window_are_honoured() {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("lim");
    let (_, err) = run_file(
        &root().join("scenarios/incast-pfc.toml"),
        &out,
        &[
            SMALL,
            "record.pcap.ports=[\"host16\", \"leaf1:0\"]",
            "record.pcap.limit=50",
            "record.pcap.from=\"10us\"",
            "record.pcap.to=\"300us\"",
            "record.pcap.payload=false",
        ],
    );
    let tshark = tshark();
    for v in VARIANTS {
        assert!(
            err.contains(&format!(
                "{v}: warning: capture.pcapng holds the first 50 frames"
            )),
            "{v}: no warning on stderr:\n{err}"
        );
        let dir = out.join(v);
        let ports = ports_csv(&dir);
        let sent = ports[&("host16".to_string(), 0)].0 + ports[&("leaf1".to_string(), 0)].0;
        assert!(
            sent > 50,
            "{v}: the ports sent more than the limit ({sent})"
        );
        let file = dir.join("capture.pcapng");
        let bytes = std::fs::read(&file).unwrap();
        let cap = pcapng::read(&bytes).unwrap();
        assert_eq!(cap.frames.len(), 50, "{v}");
        // The file's own comment says what it holds.
        assert!(
            String::from_utf8_lossy(&bytes).contains("; headers only (docs/pcap.md)"),
            "{v}: the section comment"
        );
        // summary.json says the limit dropped frames: as many as the ports sent in the
        // window beyond the 50 kept (at least one, since they sent more in all).
        let (frames, not_kept, limit) = capture_stats(&dir);
        assert_eq!((frames, limit), (50, 50), "{v}");
        assert!(not_kept > 0 && frames + not_kept <= sent, "{v}: {not_kept}");
        // Headers only: data frames are cut after their transport headers.
        let data: Vec<_> = cap.frames.iter().filter(|f| f.orig_len > 1000).collect();
        assert!(!data.is_empty(), "{v}");
        assert!(data.iter().all(|f| f.data.len() < 100), "{v}");
        for f in &cap.frames {
            assert!(
                (10_000..300_000).contains(&f.ts),
                "{v}: frame at {} ns",
                f.ts
            );
        }
        if let Some(t) = tshark {
            assert_eq!(tshark_count(t, &file, "frame"), 50, "{v}");
        }
    }
    // A window with no frame writes an empty capture, not none.
    let late = d.path().join("late");
    run(
        &late,
        &[
            SMALL,
            "record.pcap.from=\"190ms\"",
            "record.pcap.to=\"200ms\"",
        ],
    );
    let cap = pcapng::read(&std::fs::read(late.join("lossy/capture.pcapng")).unwrap()).unwrap();
    assert_eq!(cap.interfaces.len(), 2);
    assert!(cap.frames.is_empty());
    assert_eq!(capture_stats(&late.join("lossy")), (0, 0, 20_000));
}

/// Headers only (the default): every data frame is cut short of its payload, yet tshark
/// finds no malformed frame and no expert error, and the IPv4 and UDP lengths it reads
/// are those of the bytes captured while the frame's length is the wire's; the same
/// with RDMA WRITE frames (a RETH on the first). Without a limit reached, summary.json
/// says no frame was left out.
#[test]
fn a_headers_only_capture_decodes_without_malformed_frames() {
    let d = tempfile::tempdir().unwrap();
    for verb in ["send", "write"] {
        let out = d.path().join(verb);
        let verb_set = format!("record.pcap.verb=\"{verb}\"");
        let (code, err) = run_file(
            &root().join("scenarios/incast-pfc.toml"),
            &out,
            &[
                SMALL,
                "record.pcap.ports=[\"host16\", \"leaf1:0\", \"leaf0:0\"]",
                "record.pcap.payload=false",
                &verb_set,
            ],
        );
        assert_eq!(code, 0);
        assert!(!err.contains("warning"), "{err}");
        // A sweep's one speed line, for its three runs together.
        assert_eq!(err.matches("packet-hops/s").count(), 1, "{err}");
        assert!(err.contains("3 runs: "), "{err}");
        let tshark = tshark();
        for v in VARIANTS {
            let dir = out.join(v);
            let file = dir.join("capture.pcapng");
            let cap = pcapng::read(&std::fs::read(&file).unwrap()).unwrap();
            assert_eq!(capture_stats(&dir), (cap.frames.len() as u64, 0, 20_000));
            let data: Vec<_> = cap.frames.iter().filter(|f| f.orig_len > 1000).collect();
            assert!(!data.is_empty(), "{verb} {v}");
            for f in &data {
                // What the headers say is what the file holds: IPv4's total length
                // ends where the captured bytes end (no Ethernet padding: 74 bytes or
                // more), UDP's inside it.
                let ip = Ipv4Repr::parse(&f.data[EthernetRepr::LEN..]).unwrap();
                let ip_len = Ipv4Repr::LEN + ip.payload_len as usize;
                assert_eq!(EthernetRepr::LEN + ip_len, f.data.len(), "{verb} {v}");
                let udp = UdpRepr::parse(&f.data[EthernetRepr::LEN + Ipv4Repr::LEN..]).unwrap();
                assert_eq!(
                    UdpRepr::LEN + udp.payload_len as usize,
                    ip.payload_len as usize
                );
                assert!(f.data.len() < 100 && (f.orig_len as usize) > f.data.len() + 900);
            }
            let Some(t) = tshark else { continue };
            let errors = expert_errors(t, &file, &[]);
            assert!(errors.is_empty(), "{verb} {v}: {errors:#?}");
            assert_eq!(tshark_count(t, &file, "_ws.malformed"), 0, "{verb} {v}");
            assert_eq!(
                tshark_count(t, &file, "infiniband.bth.opcode <= 10"),
                data.len()
            );
            // tshark's own lengths: the frame's is the wire's, the capture's the bytes.
            let o = Command::new(t)
                .arg("-r")
                .arg(&file)
                .args(["-Y", "infiniband.bth.opcode <= 10", "-T", "fields"])
                .args(["-e", "frame.len", "-e", "frame.cap_len", "-e", "ip.len"])
                .output()
                .unwrap();
            let text = String::from_utf8_lossy(&o.stdout);
            let rows: Vec<Vec<usize>> = text
                .lines()
                .map(|l| l.split('\t').map(|x| x.parse().unwrap()).collect())
                .collect();
            assert_eq!(rows.len(), data.len());
            for (r, f) in rows.iter().zip(&data) {
                assert_eq!(r[0], f.orig_len as usize);
                assert_eq!(r[1], f.data.len());
                assert_eq!(r[2] + EthernetRepr::LEN, r[1]);
            }
        }
    }
}

/// A GSE run (PKTC containers between GSPs, DGSQ REQUESTs and GRANTs): tshark decodes
/// its capture through the repository's Lua dissector, `scripts/wireshark/gse.lua`,
/// with every GSE field, the same count of each message type and the same container
/// numbers as the file parsed with `fabricsim::base::wire::gse`, and hands what follows
/// a PKTC tag to the IPv4 and InfiniBand dissectors, with no expert error.
#[test]
fn a_gse_capture_decodes_through_the_lua_dissector() {
    use fabricsim::base::wire::gse::GseRepr;
    let d = tempfile::tempdir().unwrap();
    let scenario = d.path().join("gse.toml");
    std::fs::write(
        &scenario,
        r#"
name = "gse-capture"
max_time = "10ms"
[topology]
kind = "leaf_spine"
leaves = 2
spines = 2
servers_per_leaf = 2
host_rate = "100Gbps"
uplink_rate = "100Gbps"
[fabric.load_balance]
algorithm = "pktc"
[fabric.gse]
scheduling = "dgsq"
[fabric.pfc]
scope = "edge"
[cc]
algorithm = "none"
[[workload]]
kind = "flows"
flows = [{ src = 0, dst = 2, size = "256KB" }, { src = 1, dst = 3, size = "256KB" }]
[record.pcap]
ports = ["leaf0:2", "leaf0:3", "leaf1:2", "leaf1:3", "host0"]
"#,
    )
    .unwrap();
    let out = d.path().join("out");
    assert_eq!(run_file(&scenario, &out, &[]).0, 0);
    let file = out.join("capture.pcapng");
    let cap = pcapng::read(&std::fs::read(&file).unwrap()).unwrap();
    // The file's GSE messages, parsed here: type -> count, and the containers.
    let mut types = BTreeMap::new();
    let mut containers = std::collections::BTreeSet::new();
    let mut roce = 0;
    for f in &cap.frames {
        let eth = EthernetRepr::parse(&f.data).unwrap();
        match eth.ethertype {
            ethernet::ETHERTYPE_GSE => {
                let g = GseRepr::parse(&f.data[EthernetRepr::LEN..]).unwrap();
                let t = match g {
                    GseRepr::Request { .. } => 1,
                    GseRepr::Grant { .. } => 2,
                    GseRepr::Pktc { container, .. } => {
                        containers.insert(container);
                        roce += 1;
                        3
                    }
                    GseRepr::Collective { .. } => 4,
                };
                *types.entry(t).or_insert(0usize) += 1;
            }
            ethernet::ETHERTYPE_IPV4 => roce += 1,
            _ => {}
        }
    }
    assert!(types.get(&1).is_some_and(|&n| n > 0), "{types:?}");
    assert!(types.get(&2).is_some_and(|&n| n > 0), "{types:?}");
    assert!(types.get(&3).is_some_and(|&n| n > 0), "{types:?}");
    let Some(t) = tshark() else { return };
    let lua = root().join("scripts/wireshark/gse.lua");
    let lua_arg = format!("lua_script:{}", lua.display());
    let x = ["-X", lua_arg.as_str()];
    let fields = |filter: &str, field: &str| -> Vec<String> {
        let o = Command::new(t)
            .args(x)
            .arg("-r")
            .arg(&file)
            .args(["-Y", filter, "-T", "fields", "-e", field])
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8_lossy(&o.stdout)
            .lines()
            .map(str::to_string)
            .collect()
    };
    for (ty, n) in &types {
        let got = fields(&format!("gse.type == {ty}"), "gse.type");
        assert_eq!(got.len(), *n, "GSE type {ty}");
    }
    let seen: std::collections::BTreeSet<u32> = fields("gse.type == 3", "gse.container")
        .iter()
        .map(|c| c.parse().unwrap())
        .collect();
    assert_eq!(seen, containers);
    assert!(fields("gse.type == 1", "gse.bytes")
        .iter()
        .all(|b| b.parse::<u64>().unwrap() > 0));
    // What a tag carries decodes as RoCEv2.
    assert_eq!(fields("infiniband", "frame.number").len(), roce);
    assert_eq!(
        fields("gse.type == 3 && infiniband", "frame.number").len(),
        types[&3]
    );
    // The verbose tree names the fields.
    let o = Command::new(t)
        .args(x)
        .arg("-r")
        .arg(&file)
        .arg("-V")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&o.stdout);
    for word in [
        "fabricsim GSE",
        "DGSQ REQUEST",
        "DGSQ GRANT",
        "PKTC container tag",
        "Container: ",
        "Next EtherType: 0x0800",
    ] {
        assert!(text.contains(word), "tshark -V lacks {word}");
    }
    let errors = expert_errors(t, &file, &x);
    assert!(errors.is_empty(), "{errors:#?}");
}
