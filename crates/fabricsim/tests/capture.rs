//! The capture of a GSE run (PKTC containers, DGSQ scheduling): data between GSPs carries
//! its container tag under EtherType 0x88B5 with the RoCEv2 frame after it, and the
//! scheduler's REQUEST and GRANT frames parse as the layout `wire::gse` documents.

use fabricsim::base::wire::bth::BthRepr;
use fabricsim::base::wire::ethernet::{self, EthernetRepr};
use fabricsim::base::wire::gse::GseRepr;
use fabricsim::base::wire::ipv4::Ipv4Repr;
use fabricsim::base::wire::udp::{UdpRepr, ROCEV2_PORT};
use fabricsim::output::pcap::pcapng;
use fabricsim::sim::Simulation;
use std::path::Path;

const GSE: &str = r#"
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
flows = [{ src = 0, dst = 2, size = "1MB" }, { src = 1, dst = 3, size = "1MB" }]
[record.pcap]
ports = ["leaf0:2", "leaf0:3", "leaf1:2", "leaf1:3", "host0"]
"#;

#[test]
fn a_gse_capture_holds_tagged_data_requests_and_grants() {
    let l = fabricsim::load_str(GSE, "t.toml", Path::new("."), &[]).unwrap();
    let mut sim = Simulation::build(&l.scenario, "t.toml", Path::new(".")).unwrap();
    sim.run(&mut |_| {});
    let cap = sim.fabric.capture.as_deref().unwrap();
    let mut bytes = Vec::new();
    pcapng::write(&sim, cap, &mut bytes).unwrap();
    let back = pcapng::read(&bytes).unwrap();
    assert_eq!(back.frames.len(), cap.records().len());
    let (mut tagged, mut requests, mut grants, mut plain) = (0, 0, 0, 0);
    let mut containers = std::collections::BTreeSet::new();
    for f in &back.frames {
        let eth = EthernetRepr::parse(&f.data).unwrap();
        let rest = &f.data[EthernetRepr::LEN..];
        match eth.ethertype {
            ethernet::ETHERTYPE_GSE => match GseRepr::parse(rest).unwrap() {
                g @ GseRepr::Pktc {
                    next, container, ..
                } => {
                    assert_eq!(next, ethernet::ETHERTYPE_IPV4);
                    // The RoCEv2 frame follows the tag.
                    let ip = &rest[g.buffer_len()..];
                    Ipv4Repr::parse(ip).unwrap();
                    let udp = UdpRepr::parse(&ip[Ipv4Repr::LEN..]).unwrap();
                    assert_eq!(udp.dst_port, ROCEV2_PORT);
                    BthRepr::parse(&ip[Ipv4Repr::LEN + UdpRepr::LEN..]).unwrap();
                    containers.insert(container);
                    tagged += 1;
                }
                GseRepr::Request { bytes, .. } => {
                    assert!(bytes > 0);
                    requests += 1;
                }
                GseRepr::Grant { bytes, .. } => {
                    assert!(bytes > 0);
                    grants += 1;
                }
                GseRepr::Collective { .. } => panic!("no collective runs here"),
            },
            ethernet::ETHERTYPE_IPV4 => {
                // Host 0's own frames (no tag between a NIC and its GSP), and feedback,
                // which travels outside containers.
                let bth = BthRepr::parse(&rest[Ipv4Repr::LEN + UdpRepr::LEN..]).unwrap();
                let data = bth.opcode <= fabricsim::base::wire::bth::opcode::RC_WRITE_ONLY;
                assert!(f.iface == 4 || !data, "untagged data between GSPs");
                plain += data as usize;
            }
            ethernet::ETHERTYPE_MAC_CONTROL => {}
            t => panic!("EtherType {t:#06x}"),
        }
    }
    // 1 MB per flow between two GSPs: every data packet crosses an uplink tagged, in
    // containers of 16 KiB.
    assert!(tagged > 0 && requests > 0 && grants > 0 && plain > 0);
    assert!(containers.len() > 1, "{containers:?}");
}
