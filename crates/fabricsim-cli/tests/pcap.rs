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
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_fabricsim"));
    cmd.arg("run")
        .arg(root().join("scenarios/incast-pfc.toml"))
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
    o.status.code().unwrap()
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
        // The scenario writes data frames whole (`payload = true`).
        assert_eq!(total.data_cut, 0, "{v}");
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
    run(
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
        let dir = out.join(v);
        let ports = ports_csv(&dir);
        let sent = ports[&("host16".to_string(), 0)].0 + ports[&("leaf1".to_string(), 0)].0;
        assert!(
            sent > 50,
            "{v}: the ports sent more than the limit ({sent})"
        );
        let file = dir.join("capture.pcapng");
        let cap = pcapng::read(&std::fs::read(&file).unwrap()).unwrap();
        assert_eq!(cap.frames.len(), 50, "{v}");
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
}
