//! Frames from captured records: the bytes a real fabric would carry for each packet
//! kind, headers only.
//!
//! | kind | frame |
//! |---|---|
//! | data | Ethernet, IPv4, UDP 4791, BTH (RC SEND or WRITE by position in the flow's message; RETH on a WRITE's first packet), payload not captured (headers only: its first 16 bytes, then the ICRC) |
//! | ACK / NACK | Ethernet, IPv4, UDP 4791, BTH (RC Acknowledge 0x11), AETH (ACK, or NAK "PSN sequence error"), ICRC |
//! | CNP | Ethernet, IPv4, UDP 4791, BTH (0x81, BECN), 16 reserved bytes, ICRC |
//! | PFC | MAC control (0x8808) PFC, one priority enabled, padded to 60 bytes |
//! | GSE REQUEST / GRANT, collective | EtherType 0x88B5, [`crate::base::wire::gse`], padded to 60 bytes |
//!
//! A data packet between two GSPs (on a switch port that does not face a host, in a GSE
//! run) carries its PKTC tag between the Ethernet and IPv4 headers
//! (EtherType 0x88B5, next type 0x0800).
//!
//! Fields: addresses from ids ([`crate::base::wire::addr`]); DSCP = 8 x priority (class
//! selector CSn) and ECN = the packet's ECN bits as the switches left them when it
//! started on this port; UDP source port = the flow's (the one ECMP hashes); destination
//! QP = [`qpn`] of the flow at both ends; PSN = sequence / MTU (an ACK's: the last packet
//! it acknowledges, a NAK's: the one expected) mod 2^24; ICRC zero (not computed).
//! The original length is the simulator's wire bytes (or the frame's own length when
//! that is larger: RETH bytes, which the simulator does not count). With `payload =
//! true` data frames are captured whole, their payload and ICRC as zeros. Headers only
//! (the default), a data frame is captured as if its payload were cut to its first
//! [`PAYLOAD_SLICE`] bytes: headers, those bytes, then the ICRC, with the IPv4 total
//! length and UDP length counting what is captured, so Wireshark decodes it whole (no
//! "Invalid Packet Length", no malformed frame) while the frame's length (`frame.len`,
//! the record's original length) is the wire's.

use crate::base::wire::addr;
use crate::base::wire::bth::{self, opcode, AethRepr, BthRepr, RethRepr, Syndrome};
use crate::base::wire::ethernet::{self, EthernetRepr};
use crate::base::wire::gse::GseRepr;
use crate::base::wire::ipv4::{Ipv4Repr, PROTO_UDP};
use crate::base::wire::pfc::{self, PfcRepr};
use crate::base::wire::udp::{UdpRepr, ROCEV2_PORT};
use crate::kernel::packet::Payload;
use crate::model::capture::{Capture, CaptureRecord, Verb};
use crate::sim::Simulation;

/// Room for the longest captured frame (GSE tag + IPv4 + UDP + BTH + RETH is 86 bytes,
/// then a headers-only frame's payload slice and ICRC).
pub const MAX_FRAME: usize = 128;
/// Payload bytes a headers-only data frame keeps (zeros): the fewest Wireshark's
/// RPC-over-RDMA heuristic reads from a SEND payload (its header) without an exception.
pub const PAYLOAD_SLICE: usize = 16;
/// The shortest Ethernet frame without FCS: short frames are padded to it.
pub const MIN_FRAME: usize = 60;
/// TTL of every IPv4 header (the capture does not model routers decrementing it).
pub const TTL: u8 = 64;

/// Destination QP number of flow `f` (at both ends: one RC connection per flow). QPs 0
/// and 1 are special in InfiniBand, so flows start at 0x100.
pub fn qpn(f: u32) -> u32 {
    f.wrapping_add(0x100) & 0x00ff_ffff
}

/// PSN of the packet starting at byte `seq`.
pub fn psn(seq: u64, mtu: u64) -> u32 {
    ((seq / mtu.max(1)) & 0x00ff_ffff) as u32
}

/// PSN an ACK of every byte before `seq` carries: its last packet's.
pub fn ack_psn(seq: u64, mtu: u64) -> u32 {
    (seq.div_ceil(mtu.max(1)).saturating_sub(1) & 0x00ff_ffff) as u32
}

/// What building needs of the run, gathered once.
pub struct FrameCtx<'a> {
    sim: &'a Simulation,
    cap: &'a Capture,
    mtu: u64,
    gse: bool,
}

impl<'a> FrameCtx<'a> {
    /// The context of `cap`, captured in `sim`.
    pub fn new(sim: &'a Simulation, cap: &'a Capture) -> FrameCtx<'a> {
        FrameCtx {
            sim,
            cap,
            mtu: sim.ctx.params.mtu,
            gse: sim.roles.gse.is_some(),
        }
    }

    /// Writes `rec`'s frame's headers into `buf`.
    pub fn build(&self, rec: &CaptureRecord, buf: &mut [u8; MAX_FRAME]) -> Built {
        buf.fill(0);
        let port = self.cap.interfaces[rec.iface as usize].port;
        let wire = rec.desc.wire();
        let len = match rec.pkt.payload {
            Payload::Data { flow, seq } => {
                let fabric = &self.sim.fabric;
                let tagged = self.gse
                    && fabric.node_is_switch[fabric.ports[port.idx()].node.idx()]
                    && !fabric.edge_port[port.idx()];
                self.roce(rec, flow.0, buf, tagged, |fr| {
                    let f = &self.sim.nics.flows[flow.idx()];
                    let bytes = f.payload_at(seq, self.mtu);
                    let (first, last) = (seq == 0, seq + bytes >= f.spec.size);
                    let op = match (self.cap.verb, first, last) {
                        (Verb::Send, true, true) => opcode::RC_SEND_ONLY,
                        (Verb::Send, true, false) => opcode::RC_SEND_FIRST,
                        (Verb::Send, false, false) => opcode::RC_SEND_MIDDLE,
                        (Verb::Send, false, true) => opcode::RC_SEND_LAST,
                        (Verb::Write, true, true) => opcode::RC_WRITE_ONLY,
                        (Verb::Write, true, false) => opcode::RC_WRITE_FIRST,
                        (Verb::Write, false, false) => opcode::RC_WRITE_MIDDLE,
                        (Verb::Write, false, true) => opcode::RC_WRITE_LAST,
                    };
                    fr.bth(op, psn(seq, self.mtu), last, false);
                    if bth::extension_len(op) == RethRepr::LEN {
                        fr.put(RethRepr::LEN, |b| {
                            RethRepr {
                                va: 0,
                                rkey: flow.0,
                                dma_len: f.spec.size.min(u32::MAX as u64) as u32,
                            }
                            .emit(b)
                        });
                    }
                    // The payload is counted, not captured.
                    (bytes as usize, false)
                })
            }
            Payload::Ack { flow, seq } | Payload::Nack { flow, seq } => {
                let nak = matches!(rec.pkt.payload, Payload::Nack { .. });
                self.roce(rec, flow.0, buf, false, |fr| {
                    let (psn, syndrome) = if nak {
                        (
                            psn(seq, self.mtu),
                            Syndrome::Nak {
                                code: bth::NAK_PSN_SEQUENCE_ERROR,
                            },
                        )
                    } else {
                        // The last packet acknowledged: the one before `seq`.
                        (
                            ack_psn(seq, self.mtu),
                            Syndrome::Ack {
                                credits: bth::ACK_UNLIMITED_CREDITS,
                            },
                        )
                    };
                    fr.bth(opcode::RC_ACK, psn, false, false);
                    let msn = (seq >= self.sim.nics.flows[flow.idx()].spec.size) as u32;
                    fr.put(AethRepr::LEN, |b| AethRepr { syndrome, msn }.emit(b));
                    (0, true)
                })
            }
            Payload::Cnp { flow, .. } => self.roce(rec, flow.0, buf, false, |fr| {
                fr.bth(opcode::CNP, 0, false, true);
                fr.put(bth::CNP_RESERVED_LEN, |_| {});
                (0, true)
            }),
            Payload::Pause(sig) => {
                EthernetRepr {
                    dst: pfc::DST_MAC,
                    src: addr::port_mac(port.0),
                    ethertype: ethernet::ETHERTYPE_MAC_CONTROL,
                }
                .emit(buf);
                PfcRepr::one(sig.prio, sig.quanta).emit(&mut buf[EthernetRepr::LEN..]);
                MIN_FRAME.into()
            }
            Payload::Request { from, host, bytes } => self.gse(
                rec,
                port.0,
                GseRepr::Request {
                    from_gsp: from.0,
                    host: host.0,
                    bytes,
                },
                buf,
            ),
            Payload::Grant { host, bytes, via } => self.gse(
                rec,
                port.0,
                GseRepr::Grant {
                    host: host.0,
                    bytes,
                    via: via.map(|p| p.0),
                },
                buf,
            ),
            Payload::Collective {
                coll,
                iter,
                rank,
                msg,
                ..
            } => self.gse(
                rec,
                port.0,
                GseRepr::Collective {
                    coll,
                    iter,
                    rank,
                    result: msg == crate::model::hw_collective::CollMsg::Result,
                },
                buf,
            ),
        };
        let mut head = len.captured;
        let zeros = if self.cap.payload { len.zeros } else { 0 };
        // Short frames are padded to the Ethernet minimum (the buffer is zeroed).
        if head + zeros < MIN_FRAME {
            head = MIN_FRAME - zeros;
        }
        Built {
            head,
            zeros,
            orig_len: ((head + len.zeros).max(len.full) as u32).max(wire),
        }
    }

    /// A RoCEv2 frame of flow `flow`: `transport` writes the BTH and what follows through
    /// the [`Cursor`] and returns (payload bytes not captured, whether the ICRC is
    /// captured).
    fn roce(
        &self,
        rec: &CaptureRecord,
        flow: u32,
        buf: &mut [u8; MAX_FRAME],
        tagged: bool,
        transport: impl FnOnce(&mut Cursor) -> (usize, bool),
    ) -> Lens {
        let f = &self.sim.nics.flows[flow as usize];
        let flows = &self.sim.nics.flows;
        let src = (rec.pkt)
            .src(|fl| (flows[fl.idx()].spec.src, flows[fl.idx()].spec.dst))
            .unwrap_or(0);
        let dst = rec.desc.dst();
        // Leave room for the network headers, write the transport first: its length
        // goes into theirs.
        let eth = EthernetRepr::LEN;
        let tag = if tagged { 16 } else { 0 };
        let l4 = eth + tag + Ipv4Repr::LEN + UdpRepr::LEN;
        let mut c = Cursor {
            buf: &mut buf[..],
            at: l4,
            flow,
        };
        let (payload, icrc_captured) = transport(&mut c);
        let transport_len = c.at - l4;
        let after_headers = c.at;
        // Headers only: the packet is written as if its payload had been cut to its
        // first [`PAYLOAD_SLICE`] bytes (IPv4 and UDP lengths count what is captured:
        // headers, that slice, the ICRC), so a reader finds every length it is told of;
        // the record's original length keeps the frame's wire length. A dissector that
        // reads lengths off the headers (Wireshark's InfiniBand one takes the payload's
        // from UDP's) would otherwise look for payload bytes that are not in the file
        // and call the frame malformed. The slice is not empty because Wireshark's
        // RPC-over-RDMA heuristic reads a 16-byte header from a SEND's payload (a SEND
        // Last's own when it cannot reassemble the message) before checking its length.
        let sliced = payload > 0 && !self.cap.payload;
        let carried = if sliced {
            payload.min(PAYLOAD_SLICE)
        } else {
            payload
        };
        let udp_payload = transport_len + carried + bth::ICRC_LEN;
        EthernetRepr {
            dst: addr::host_mac(dst),
            src: addr::host_mac(src),
            ethertype: if tagged {
                ethernet::ETHERTYPE_GSE
            } else {
                ethernet::ETHERTYPE_IPV4
            },
        }
        .emit(buf);
        if tagged {
            GseRepr::Pktc {
                next: ethernet::ETHERTYPE_IPV4,
                container: rec.tag.cont,
                index: rec.tag.idx,
                prev: rec.tag.prev,
            }
            .emit(&mut buf[eth..]);
        }
        let clamp = |n: usize| n.min(u16::MAX as usize) as u16;
        Ipv4Repr {
            src: addr::host_ipv4(src),
            dst: addr::host_ipv4(dst),
            dscp: (rec.desc.prio() & 7) << 3,
            ecn: rec.desc.ecn() & 0b11,
            ident: 0,
            dont_frag: true,
            ttl: TTL,
            protocol: PROTO_UDP,
            payload_len: clamp(UdpRepr::LEN + udp_payload),
        }
        .emit(&mut buf[eth + tag..]);
        UdpRepr {
            src_port: f.sport,
            dst_port: ROCEV2_PORT,
            payload_len: clamp(udp_payload),
        }
        .emit(&mut buf[eth + tag + Ipv4Repr::LEN..]);
        // The ICRC (zero) is in the buffer already when it is captured; otherwise it
        // follows the payload, both zeros that only `payload = true` writes.
        if icrc_captured {
            Lens::from(after_headers + bth::ICRC_LEN)
        } else if sliced {
            Lens {
                captured: after_headers + carried + bth::ICRC_LEN,
                zeros: 0,
                full: after_headers + payload + bth::ICRC_LEN,
            }
        } else {
            Lens {
                captured: after_headers,
                zeros: payload + bth::ICRC_LEN,
                full: after_headers + payload + bth::ICRC_LEN,
            }
        }
    }

    /// A GSE-framed control message from port `port`.
    fn gse(&self, rec: &CaptureRecord, port: u32, g: GseRepr, buf: &mut [u8; MAX_FRAME]) -> Lens {
        // Switches send GSE control; collective messages come from NICs.
        let src = if matches!(g, GseRepr::Collective { .. }) {
            addr::host_mac(rec.pkt.src(|_| (0, 0)).unwrap_or(0))
        } else {
            addr::port_mac(port)
        };
        EthernetRepr {
            dst: addr::host_mac(rec.desc.dst()),
            src,
            ethertype: ethernet::ETHERTYPE_GSE,
        }
        .emit(buf);
        g.emit(&mut buf[EthernetRepr::LEN..]);
        Lens::from(EthernetRepr::LEN + g.buffer_len())
    }
}

impl From<usize> for Lens {
    fn from(n: usize) -> Lens {
        Lens {
            captured: n,
            zeros: 0,
            full: n,
        }
    }
}

/// A frame's lengths before padding: headers built, zero bytes after them (payload and
/// ICRC), the whole frame.
struct Lens {
    captured: usize,
    zeros: usize,
    full: usize,
}

/// A built frame: `head` bytes of the buffer, then `zeros` zero bytes (the payload and
/// ICRC, with `payload = true`), and its original length.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Built {
    /// Bytes of the buffer captured.
    pub head: usize,
    /// Zero bytes captured after them.
    pub zeros: usize,
    /// Original length.
    pub orig_len: u32,
}

/// Where the transport headers of a RoCEv2 frame go.
struct Cursor<'b> {
    buf: &'b mut [u8],
    at: usize,
    flow: u32,
}

impl Cursor<'_> {
    fn put(&mut self, n: usize, f: impl FnOnce(&mut [u8])) {
        f(&mut self.buf[self.at..self.at + n]);
        self.at += n;
    }

    fn bth(&mut self, op: u8, psn: u32, ack_req: bool, becn: bool) {
        let r = BthRepr {
            opcode: op,
            solicited: false,
            mig_req: false,
            pad_count: 0,
            tver: 0,
            pkey: bth::DEFAULT_PKEY,
            fecn: false,
            becn,
            dest_qp: qpn(self.flow),
            ack_req,
            psn,
        };
        self.put(BthRepr::LEN, |b| r.emit(b));
    }
}
