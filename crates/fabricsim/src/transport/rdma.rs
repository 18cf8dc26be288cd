//! Queue-pair state of a flow and of a NIC (see the module docs of [`crate::transport`]).

use crate::cc::AnyCc;
use crate::units::Time;

/// A flow as the workload asks for it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FlowSpec {
    /// Sending host.
    pub src: u32,
    /// Receiving host.
    pub dst: u32,
    /// Bytes.
    pub size: u64,
    /// Start time.
    pub start: Time,
}

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
    /// `rcv_nxt` for which a NACK was already sent (u64::MAX: none).
    pub nacked_at: u64,
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
    /// Data packets dropped in the network.
    pub data_pkts_dropped: u64,
    /// Payload bytes sent again.
    pub retx_bytes: u64,
    /// Retransmission timeouts.
    pub timeouts: u32,
    /// NACKs received by the sender.
    pub nacks: u32,
    /// CNPs sent by the receiver.
    pub cnps_sent: u32,
    /// Bytes delivered in order (for rate samples).
    pub delivered_at_last_sample: u64,
}

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
            next_send: 0,
            rto_deadline: 0,
            rto_pending: false,
            rcv_nxt: 0,
            unacked_pkts: 0,
            nacked_at: u64::MAX,
            next_cnp: 0,
            cnp_pending: false,
            finish: None,
            sender_done: None,
            data_pkts_sent: 0,
            data_pkts_arrived: 0,
            data_pkts_dropped: 0,
            retx_bytes: 0,
            timeouts: 0,
            nacks: 0,
            cnps_sent: 0,
            delivered_at_last_sample: 0,
        }
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
    pub port: u32,
    /// Flows with bytes not yet acknowledged, served round robin.
    pub active: Vec<u32>,
    /// Round-robin cursor into `active`.
    pub rr: usize,
}

/// Ideal completion time of a flow alone on an idle path: packets leave the NIC back to
/// back and are stored and forwarded at each hop. `hops` lists (rate bps, delay after
/// the hop); the result is the time from the first bit sent to the last byte received.
/// It applies the simulator's own rounding (serialization rounded up to the picosecond),
/// so an idle-fabric run matches it exactly.
pub fn ideal_fct(size: u64, mtu: u64, header: u64, hops: &[(u64, Time)]) -> Time {
    if hops.is_empty() {
        return 0;
    }
    let n = size.div_ceil(mtu).max(1);
    let full = mtu + header;
    let last = (size - (n - 1) * mtu) + header;
    // finish[h]: when hop h finished serializing the previous packet. Paths have a
    // handful of hops, so a fixed array keeps this allocation-free.
    let mut small = [0u64; 16];
    let mut large = Vec::new();
    let finish: &mut [u64] = if hops.len() <= small.len() {
        &mut small[..hops.len()]
    } else {
        large.resize(hops.len(), 0);
        &mut large
    };
    let mut arrive_last = 0;
    for i in 0..n {
        let wire = if i + 1 == n { last } else { full };
        let mut arrive = 0u64;
        for (h, &(bps, delay)) in hops.iter().enumerate() {
            let start = if h == 0 {
                finish[0]
            } else {
                arrive.max(finish[h])
            };
            finish[h] = start + crate::units::ser_time(wire, bps);
            arrive = finish[h] + delay;
        }
        arrive_last = arrive;
    }
    arrive_last
}
