//! Queue-pair state of a flow and of a NIC (see the module docs of [`crate::model::transport`]).

use crate::base::ids::PortId;
use crate::base::units::Time;
use crate::model::cc::AnyCc;
pub use crate::model::workload::FlowSpec;

/// Sender and receiver state of one flow (the simulator sees both ends).
#[derive(Clone, Debug)]
pub struct Flow {
    /// What was asked.
    pub spec: FlowSpec,
    /// 5-tuple hash used by ECMP.
    pub hash: u32,
    /// UDP source port (part of the 5-tuple).
    pub sport: u16,
    /// Congestion controller.
    pub cc: AnyCc,
    /// Started (its start time has come).
    pub started: bool,
    /// Next byte to send.
    pub snd_nxt: u64,
    /// First unacknowledged byte.
    pub snd_una: u64,
    /// Highest byte ever sent (to count retransmissions).
    pub high_sent: u64,
    /// When the flow's last byte was first sent (`high_sent` reached its size): its
    /// receiver cannot finish before that byte crosses the fabric (the parallel
    /// engine's bound on when a run may complete). `Time::MAX` until then.
    pub all_sent_at: Time,
    /// Earliest time the pacer allows the next packet.
    pub next_send: Time,
    /// Retransmission deadline.
    pub rto_deadline: Time,
    /// A retransmission-timer event is pending.
    pub rto_pending: bool,
    /// Next byte expected by the receiver.
    pub rcv_nxt: u64,
    /// In-order packets since the last ACK.
    pub unacked_pkts: u32,
    /// A NACK was sent for the current `rcv_nxt` (one NACK per gap; cleared when
    /// `rcv_nxt` advances).
    pub nack_sent: bool,
    /// NP: earliest time the next CNP may be sent.
    pub next_cnp: Time,
    /// NP: a CE mark arrived inside the CNP interval; a CNP timer is pending.
    pub cnp_pending: bool,
    /// When the receiver got the last byte.
    pub finish: Option<Time>,
    /// When the sender got the last ACK.
    pub sender_done: Option<Time>,
    /// Data packets sent (including retransmissions).
    pub data_pkts_sent: u64,
    /// Data packets that reached the receiver (in order or not).
    pub data_pkts_arrived: u64,
    /// Payload bytes sent again.
    pub retx_bytes: u64,
    /// Data packets that reached the receiver ahead of a gap (`seq > rcv_nxt`): reordered
    /// by the fabric or sent after a loss. Go-back-N discards them; the message
    /// transport keeps them.
    pub out_of_order_pkts: u64,
    /// Retransmission timeouts.
    pub timeouts: u32,
    /// NACKs received by the sender.
    pub nacks: u32,
    /// CNPs sent by the receiver.
    pub cnps_sent: u32,
    /// Bytes delivered in order (for rate samples).
    pub delivered_at_last_sample: u64,
    /// CNPs that reached the sender from switches: DRs (long haul) or, with
    /// `cc.dcqcn.cnp_from` naming them, any congested switch.
    pub dr_cnps_received: u32,
    /// Longest time a switch CNP took from its switch to the sender.
    pub dr_cnp_delay_max: Time,
    /// When the first CNP frame reached the sender (from a receiver, a DR or a
    /// forward-notifying switch); `Time::MAX` if none did.
    pub first_cnp_at: Time,
    /// ACKs that echoed a TCD CE mark.
    pub ce_acks: u64,
    /// ACKs that echoed a TCD UE mark.
    pub ue_acks: u64,
    /// Message transport, receiver: byte ranges that arrived ahead of `rcv_nxt` (made on
    /// the flow's first packet out of order).
    pub rx_early: Option<Box<Vec<(u64, u64)>>>,
    /// Its entry in its NIC's round robin while active.
    pub rr_slot: super::round_robin::Slot,
    /// Payload bytes per frame when larger than the run's `transport.mtu` (a collective's
    /// segments, `model::workload::collective::segment`); 0: packets of `mtu`.
    pub segment: u64,
}

crate::base::ids::indexed_by!(crate::base::ids::FlowId => Flow);

impl Flow {
    /// A flow not yet started.
    pub fn new(spec: FlowSpec, hash: u32, sport: u16, cc: AnyCc) -> Flow {
        Flow {
            spec,
            hash,
            sport,
            cc,
            started: false,
            snd_nxt: 0,
            snd_una: 0,
            high_sent: 0,
            all_sent_at: Time::MAX,
            next_send: 0,
            rto_deadline: 0,
            rto_pending: false,
            rcv_nxt: 0,
            unacked_pkts: 0,
            nack_sent: false,
            next_cnp: 0,
            cnp_pending: false,
            finish: None,
            sender_done: None,
            data_pkts_sent: 0,
            data_pkts_arrived: 0,
            retx_bytes: 0,
            out_of_order_pkts: 0,
            timeouts: 0,
            nacks: 0,
            cnps_sent: 0,
            delivered_at_last_sample: 0,
            ce_acks: 0,
            ue_acks: 0,
            rx_early: None,
            rr_slot: 0,
            dr_cnps_received: 0,
            dr_cnp_delay_max: 0,
            first_cnp_at: Time::MAX,
            segment: 0,
        }
    }

    /// Payload bytes per frame: `mtu`, or the flow's segment.
    #[inline]
    pub fn frame_payload(&self, mtu: u64) -> u64 {
        if self.segment == 0 {
            mtu
        } else {
            self.segment
        }
    }

    /// Payload bytes of the flow's data frame at byte offset `seq`: a frame's worth, or
    /// what is left of the message. The sender sizes its frames so, and the receiver
    /// reads a frame's size so (a data frame's slot does not keep it).
    #[inline]
    pub fn payload_at(&self, seq: u64, mtu: u64) -> u64 {
        self.frame_payload(mtu).min(self.spec.size - seq)
    }

    /// True once every byte reached the receiver.
    pub fn is_complete(&self) -> bool {
        self.finish.is_some()
    }
}

/// A NIC: its port and the flows it is sending.
#[derive(Clone, Debug)]
pub struct Host {
    /// Node id.
    pub node: u32,
    /// Its (only) port.
    pub port: PortId,
    /// Flows with bytes not yet acknowledged, served round robin.
    pub active: super::round_robin::RoundRobin,
}

crate::base::ids::indexed_by!(crate::base::ids::HostId => Host);

/// One hop of a path, as the ideal-FCT computation sees it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Hop {
    /// Serialization rate (bps).
    pub bps: u64,
    /// Delay after the hop (propagation and the next node's latency).
    pub delay: Time,
    /// Bytes the link adds to every frame (link security).
    pub extra: u64,
    /// The node after the hop cuts packets through: (block bytes, router latency). It
    /// may forward a packet a router latency after its head arrived (the latency is in
    /// `delay`), and no sooner than its first block is in, rather than storing all of it
    /// (credit flow control).
    pub cut: Option<(u64, Time)>,
}

impl Hop {
    /// Serialization of a frame of `bytes` at this hop.
    pub(crate) fn ser(&self, bytes: u64) -> Time {
        crate::base::units::ser_time(bytes + self.extra, self.bps)
    }
    /// How long after a frame of `bytes` starts at this hop the next node may forward
    /// it (before the delay): all of it, or its first block under cut-through.
    pub(crate) fn ahead(&self, bytes: u64) -> Time {
        match self.cut {
            Some((block, latency)) => {
                crate::base::units::ser_time((bytes + self.extra).min(block), self.bps)
                    .saturating_sub(latency)
            }
            None => self.ser(bytes),
        }
    }
}

/// Ideal completion time of a flow alone on an idle path: packets leave the NIC back to
/// back and are stored and forwarded at each hop, or cut through where a hop says so.
/// `hops` lists (rate bps, delay after the hop, cut-through); the result is the time from
/// the first bit sent to the last byte received. It applies the simulator's own rounding
/// (serialization rounded up to the picosecond), so an idle-fabric run matches it
/// exactly.
///
/// Closed form, O(hops^2) whatever the size. Packet i may start hop k once it is ready
/// there (its start at hop k - 1 plus c_{k-1}, that packet's serialization there or its
/// first block's under cut-through, plus the delay d_{k-1}) and packet i - 1 has left
/// (its start plus its serialization s_k). The finish is the longest staircase path
/// through the (packet, hop) grid: a step to the next packet at hop k costs s_k, a step to
/// the next hop costs c_k + d_k. With N - 1 equal packets and a last one (primed), the
/// path enters the last packet's row at some hop k, after N - 2 more packet steps best
/// spent at the slowest hop up to k, so the answer (store-and-forward: c = s) is
///
/// ```text
/// max_k [ sum_{j<k} (c_j + d_j) + s_k + (N - 2) max_{j<=k} s_j
///         + sum_{k<=j<H-1} (c'_j + d_j) + s'_{H-1} ] + d_{H-1}
/// ```
pub fn ideal_fct(size: u64, mtu: u64, header: u64, hops: &[Hop]) -> Time {
    if hops.is_empty() {
        return 0;
    }
    let n = size.div_ceil(mtu).max(1);
    let last = (size - (n - 1) * mtu) + header;
    let hn = hops.len();
    let d_last = hops[hn - 1].delay;
    if n == 1 {
        return (hops[..hn - 1].iter())
            .map(|h| h.ahead(last) + h.delay)
            .sum::<u64>()
            + hops[hn - 1].ser(last)
            + d_last;
    }
    let full = mtu + header;
    let mut best = 0;
    let mut before = 0u64; // sum_{j<k} (c_j + d_j)
    let mut max_s = 0u64;
    for k in 0..hn {
        let s = hops[k].ser(full);
        max_s = max_s.max(s);
        let f = before + s + (n - 2) * max_s;
        let rest: u64 = (k..hn - 1)
            .map(|j| hops[j].ahead(last) + hops[j].delay)
            .sum::<u64>()
            + hops[hn - 1].ser(last);
        best = best.max(f + rest);
        before += hops[k].ahead(full) + hops[k].delay;
    }
    best + d_last
}

/// Bytes the HPCC ns-3 module charges per packet in its ideal FCT: its whole header
/// without INT (`CustomHeader::GetStaticWholeHeaderSize() - IntHeader::GetStaticSize()`).
pub const NS3_HEADER_BYTES: u64 = 48;

/// The ideal FCT as the HPCC ns-3 module defines it (`qp_finish` in its `third.cc`; its
/// fct analysis divides FCTs measured at the sender by it):
///
/// ```text
/// base_rtt = 2 * sum_hops delay + sum_hops ser(mtu, rate_hop)
/// bytes    = size + ceil(size / mtu) * 48
/// ideal    = base_rtt + bytes * 8 / min_hops rate
/// ```
///
/// `mtu` is the payload per packet (ns-3's `packet_payload_size`); the base RTT is the
/// propagation there and back plus one payload-only packet serialized at every hop one
/// way (how ns-3 fills `pairRtt`); the bytes are charged at the path's bottleneck as if
/// they streamed through it. Unlike [`ideal_fct`] nothing is pipelined packet by packet
/// and the ACK's way back counts, so it compares with an FCT that ends at the last ACK.
/// ns-3 truncates each term to whole nanoseconds; here every term is rounded up to the
/// picosecond, as the simulator's serialization is.
pub fn ideal_fct_ns3(size: u64, mtu: u64, hops: &[Hop]) -> Time {
    let Some(bottleneck) = hops.iter().map(|h| h.bps).min() else {
        return 0;
    };
    let prop: Time = hops.iter().map(|h| h.delay).sum();
    let tx: Time = hops
        .iter()
        .map(|h| crate::base::units::ser_time(mtu, h.bps))
        .sum();
    let bytes = size + size.div_ceil(mtu).max(1) * NS3_HEADER_BYTES;
    2 * prop + tx + crate::base::units::ser_time(bytes, bottleneck)
}

/// The same quantity computed packet by packet (the definition [`ideal_fct`] solves in
/// closed form); kept as the reference its tests compare against.
pub fn ideal_fct_by_packets(size: u64, mtu: u64, header: u64, hops: &[Hop]) -> Time {
    if hops.is_empty() {
        return 0;
    }
    let n = size.div_ceil(mtu).max(1);
    let full = mtu + header;
    let last = (size - (n - 1) * mtu) + header;
    let mut free = vec![0u64; hops.len()];
    let mut arrive_last = 0;
    for i in 0..n {
        let wire = if i + 1 == n { last } else { full };
        let mut ready = 0u64;
        for (h, hop) in hops.iter().enumerate() {
            let start = ready.max(free[h]);
            free[h] = start + hop.ser(wire);
            ready = start + hop.ahead(wire) + hop.delay;
            if h + 1 == hops.len() {
                arrive_last = free[h] + hop.delay;
            }
        }
    }
    arrive_last
}

/// RDMA RC (RoCEv2 reliable connection) with go-back-N, as RoCE NICs run it: the
/// receiver accepts only the next expected byte, ACKs every `ack_every` in-order packets
/// and the last, answers the first out-of-order packet of a gap with one NACK and
/// duplicates with an ACK; the sender goes back to the NACKed byte, or to the first
/// unacknowledged byte on a timeout.
#[derive(Clone, Copy, Debug)]
pub struct RdmaRc {
    /// In-order packets per ACK.
    pub ack_every: u32,
    /// Payload per packet (`transport.mtu`): a segment counts as the packets it stands
    /// for.
    pub mtu: u64,
}

impl super::NicTransport for RdmaRc {
    #[inline(always)]
    fn on_data(&self, f: &mut Flow, seq: u64, bytes: u32) -> super::RxOutcome {
        use super::{RxOutcome, RxReply};
        if seq == f.rcv_nxt {
            f.rcv_nxt += bytes as u64;
            f.nack_sent = false;
            f.unacked_pkts += if f.segment == 0 {
                1
            } else {
                u64::from(bytes).div_ceil(self.mtu) as u32
            };
            let done = f.rcv_nxt >= f.spec.size;
            let reply = if f.unacked_pkts >= self.ack_every || done {
                f.unacked_pkts = 0;
                RxReply::Ack(f.rcv_nxt)
            } else {
                RxReply::Nothing
            };
            RxOutcome {
                reply,
                in_order: true,
                completed: done && f.finish.is_none(),
            }
        } else {
            let reply = if seq < f.rcv_nxt {
                RxReply::Ack(f.rcv_nxt)
            } else if !f.nack_sent {
                f.out_of_order_pkts += 1;
                f.nack_sent = true;
                RxReply::Nack(f.rcv_nxt)
            } else {
                f.out_of_order_pkts += 1;
                RxReply::Nothing
            };
            RxOutcome {
                reply,
                in_order: false,
                completed: false,
            }
        }
    }

    #[inline(always)]
    fn on_cumulative_ack(&self, f: &mut Flow, seq: u64) -> u64 {
        if seq <= f.snd_una {
            return 0;
        }
        let newly = seq - f.snd_una;
        f.snd_una = seq;
        if f.snd_nxt < f.snd_una {
            f.snd_nxt = f.snd_una;
        }
        newly
    }

    #[inline(always)]
    fn on_nack(&self, f: &mut Flow, seq: u64) -> bool {
        f.nacks += 1;
        if seq < f.snd_nxt {
            f.snd_nxt = seq.max(f.snd_una);
            true
        } else {
            false
        }
    }

    #[inline(always)]
    fn on_timeout(&self, f: &mut Flow) -> bool {
        if f.snd_una < f.snd_nxt || f.snd_una < f.spec.size {
            f.snd_nxt = f.snd_una;
            f.timeouts += 1;
            true
        } else {
            false
        }
    }
}

pub use super::config::{RailChoice, TransportCfg, TransportKind};

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]
        #[test]
        fn closed_form_matches_packet_recursion(
            size in 1u64..200_000,
            mtu in prop::sample::select(vec![256u64, 1000, 1024, 4096]),
            hops in prop::collection::vec(
                (
                    prop::sample::select(vec![10u64, 25, 40, 100, 200, 400]),
                    0u64..3_000_000,
                    prop::sample::select(vec![0u64, 32, 73]),
                    prop::sample::select(vec![
                        None,
                        Some((64u64, 0)),
                        Some((128, 0)),
                        Some((64, 3_000)),
                        Some((128, 500_000)),
                    ]),
                ),
                1..7,
            ),
        ) {
            let hops: Vec<Hop> = hops
                .into_iter()
                .map(|(g, d, e, cut)| Hop { bps: g * 1_000_000_000 - e * 1_000_000, delay: d, extra: e, cut })
                .collect();
            prop_assert_eq!(ideal_fct(size, mtu, 58, &hops), ideal_fct_by_packets(size, mtu, 58, &hops));
        }
    }

    #[test]
    fn ns3_ideal_is_base_rtt_plus_bytes_with_headers_at_the_bottleneck() {
        let hop = |gbps: u64, us: u64| Hop {
            bps: gbps * 1_000_000_000,
            delay: us * 1_000_000,
            extra: 0,
            cut: None,
        };
        // Two 100G hops of 1 us: base RTT 4 us + 2 x 80 ns (1000 B at 100G); 10 packets
        // of 1000 B + 48 B each = 10 480 B = 838.4 ns at 100G.
        let two = [hop(100, 1), hop(100, 1)];
        assert_eq!(ideal_fct_ns3(10_000, 1000, &two), 4_998_400);
        // A 400G middle hop adds its delay twice and 20 ns of serialization; 100G stays
        // the bottleneck. A partial last packet still pays a whole header.
        let three = [hop(100, 1), hop(400, 1), hop(100, 1)];
        let bytes = 10_001 + 11 * NS3_HEADER_BYTES;
        assert_eq!(
            ideal_fct_ns3(10_001, 1000, &three),
            6_000_000 + 180_000 + bytes * 8 * 10
        );
        // No path, no ideal.
        assert_eq!(ideal_fct_ns3(10_000, 1000, &[]), 0);
    }
}
