//! The NIC transport: RDMA reliable connection (RoCEv2 RC) with go-back-N.
//!
//! A flow is one queue pair sending `size` bytes. The sender cuts the message into packets
//! of at most MTU payload bytes, paced at the congestion controller's rate (and within its
//! window, if it has one). The receiver accepts only the next expected byte: an in-order
//! packet advances `rcv_nxt` and is acknowledged (every `ack_every` packets and at the
//! end); an out-of-order packet is dropped and answered with one NACK carrying `rcv_nxt`,
//! and the sender goes back to it (go-back-N, as RoCE NICs do; document 002). A
//! retransmission timer covers lost ACKs and NACKs. ACKs, NACKs and CNPs travel at the
//! control priority, above data.
//!
//! The NIC serves its active flows round robin: when its port is free it takes the next
//! flow whose pacing time has come. Packets are generated when the port can send them, so
//! a NIC never holds a queue of data packets, and a go-back-N rewind costs nothing but
//! resetting `snd_nxt`.

pub mod collective_engine;
pub mod config;
mod deps;
pub(crate) mod launcher;
pub mod message;
pub mod multipath;
mod nic;
pub(crate) mod notify;
mod qp_turn;
pub mod rdma;
pub mod round_robin;
mod stop;

pub(crate) use qp_turn::turns as qp_turn_table;
pub use rdma::{Flow, FlowSpec, Host};

use crate::base::units::Time;
use crate::model::workload::JobSpec;
use launcher::FlowLauncher;

/// What a receiving NIC sends back for a data packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RxReply {
    /// Nothing (a coalesced ACK, or a gap already NACKed).
    Nothing,
    /// A cumulative ACK up to this byte.
    Ack(u64),
    /// A NACK: a gap at this byte.
    Nack(u64),
}

/// A data packet's effect at the receiver.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RxOutcome {
    /// What to send back.
    pub reply: RxReply,
    /// The packet advanced the in-order point (progress, for stall detection).
    pub in_order: bool,
    /// The flow's last byte has now arrived in order.
    pub completed: bool,
}

/// One NIC transport: the reliability state machine of a flow at both ends. The NIC
/// around it paces and builds packets, runs the timers and feeds the congestion
/// controller; the transport decides what a data packet, an ACK, a NACK and a timeout do
/// to the flow's sequence state. RDMA RC with go-back-N ([`rdma::RdmaRc`]) is the one
/// today; a transport with selective repeat, or the Sunway NIC's, is one more file and
/// one more [`AnyTransport`] variant.
pub trait NicTransport {
    /// Receiver: data of `bytes` at byte offset `seq` arrived for `f`.
    fn on_data(&self, f: &mut Flow, seq: u64, bytes: u32) -> RxOutcome;
    /// Sender: a cumulative ACK (or NACK) says every byte before `seq` arrived. Returns the
    /// bytes newly acknowledged.
    fn on_cumulative_ack(&self, f: &mut Flow, seq: u64) -> u64;
    /// Sender: a NACK reports a gap at `seq`. Returns true if the sender goes back (and
    /// must be woken).
    fn on_nack(&self, f: &mut Flow, seq: u64) -> bool;
    /// Sender: the retransmission timer expired with data unacknowledged. Returns true if
    /// the sender goes back (and must be woken).
    fn on_timeout(&self, f: &mut Flow) -> bool;
}

/// The transport a run's NICs use (enum dispatch: the hooks run per packet).
#[derive(Clone, Debug)]
pub enum AnyTransport {
    /// RDMA reliable connection with go-back-N.
    RdmaRc(rdma::RdmaRc),
    /// The Sunway NIC's out-of-order message transport.
    Message(message::MessageTransport),
}

impl AnyTransport {
    /// See [`NicTransport::on_data`].
    #[inline(always)]
    pub fn on_data(&self, f: &mut Flow, seq: u64, bytes: u32) -> RxOutcome {
        match self {
            AnyTransport::RdmaRc(t) => t.on_data(f, seq, bytes),
            AnyTransport::Message(t) => t.on_data(f, seq, bytes),
        }
    }
    /// See [`NicTransport::on_cumulative_ack`].
    #[inline(always)]
    pub fn on_cumulative_ack(&self, f: &mut Flow, seq: u64) -> u64 {
        match self {
            AnyTransport::RdmaRc(t) => t.on_cumulative_ack(f, seq),
            AnyTransport::Message(t) => t.on_cumulative_ack(f, seq),
        }
    }
    /// See [`NicTransport::on_nack`].
    #[inline(always)]
    pub fn on_nack(&self, f: &mut Flow, seq: u64) -> bool {
        match self {
            AnyTransport::RdmaRc(t) => t.on_nack(f, seq),
            AnyTransport::Message(t) => t.on_nack(f, seq),
        }
    }
    /// See [`NicTransport::on_timeout`].
    #[inline(always)]
    pub fn on_timeout(&self, f: &mut Flow) -> bool {
        match self {
            AnyTransport::RdmaRc(t) => t.on_timeout(f),
            AnyTransport::Message(t) => t.on_timeout(f),
        }
    }
}

/// A job iteration as it runs.
#[derive(Clone, Debug)]
pub struct JobState {
    /// What it runs.
    pub spec: JobSpec,
    /// When it started (`None` until the iteration it waits for has finished).
    pub started: Option<Time>,
    /// When its last flow was fully received or its last phase ended.
    pub finish: Option<Time>,
    /// Flows and phases not yet done.
    pub left: u32,
    /// When the latest of its done nodes was done (its finish once none is left; a run
    /// cut into shards may account a node taken late after a later one).
    pub(crate) last_done: Time,
}

/// The end hosts: NICs, the flows they send and receive, their transport, and the
/// launcher that starts flows and job iterations. Handlers in `transport/`.
pub struct Nics {
    /// Hosts (NICs).
    pub hosts: Vec<Host>,
    /// Flows.
    pub flows: Vec<Flow>,
    /// Jobs (collective workloads).
    pub jobs: Vec<JobState>,
    pub(crate) launcher: FlowLauncher,
    /// The NICs' transport (reliability state machine).
    pub(crate) transport: crate::model::transport::AnyTransport,
    /// When the last receiver got its last byte and the last phase ended (set by the
    /// loop when it sees both).
    pub(crate) receivers_done_at: Option<Time>,
    /// Receivers answer CE marks with CNPs (`fabric.dr.cnp` is `e2e` or `both`, and
    /// `cc.dcqcn.cnp_from` is `receiver` or `both`).
    pub(crate) receiver_cnp: bool,
    /// The message engines (`[transport] kind = "message"`).
    pub(crate) engines: Option<Box<crate::model::transport::message::Engines>>,
    /// The ports of a NIC that carry data, as (first, count) relative to its first port:
    /// (0, 1) for a single-port NIC; on dual-rail NICs all rails (adaptive) or one.
    pub(crate) data_rails: (u32, u32),
    /// Payload bytes a queue pair sends in one turn of the NIC's scheduler
    /// (`[transport] qp_burst`; 0: one packet).
    pub(crate) qp_burst: u64,
    /// Per NIC, the queue pair holding the turn (empty when `qp_burst` is 0).
    pub(crate) qp_turns: Vec<qp_turn::QpTurn>,
    /// Hardware collectives (document 003), when a workload runs any.
    pub hw: Option<Box<crate::model::transport::collective_engine::HwCollectives>>,
}

#[cfg(test)]
mod tests {
    use super::rdma::RdmaRc;
    use super::*;
    use crate::model::cc::line_rate::LineRate;
    use crate::model::cc::AnyCc;

    fn flow(size: u64) -> Flow {
        let spec = FlowSpec {
            src: 0,
            dst: 1,
            size,
            start: 0,
        };
        Flow::new(spec, 0, 0, AnyCc::LineRate(LineRate { bps: 1e11 }))
    }

    fn rx(reply: RxReply, in_order: bool, completed: bool) -> RxOutcome {
        RxOutcome {
            reply,
            in_order,
            completed,
        }
    }

    #[test]
    fn the_receiver_acks_every_nth_in_order_packet_and_the_last() {
        let t = RdmaRc {
            ack_every: 2,
            mtu: 4096,
        };
        let mut f = flow(5000);
        assert_eq!(
            t.on_data(&mut f, 0, 1000),
            rx(RxReply::Nothing, true, false)
        );
        assert_eq!(
            t.on_data(&mut f, 1000, 1000),
            rx(RxReply::Ack(2000), true, false)
        );
        assert_eq!(
            t.on_data(&mut f, 2000, 1000),
            rx(RxReply::Nothing, true, false)
        );
        assert_eq!(
            t.on_data(&mut f, 3000, 1000),
            rx(RxReply::Ack(4000), true, false)
        );
        // The last byte is acknowledged at once and completes the flow.
        assert_eq!(
            t.on_data(&mut f, 4000, 1000),
            rx(RxReply::Ack(5000), true, true)
        );
        assert_eq!(f.rcv_nxt, 5000);
    }

    #[test]
    fn a_gap_gets_one_nack_and_a_duplicate_gets_an_ack() {
        let t = RdmaRc {
            ack_every: 1,
            mtu: 4096,
        };
        let mut f = flow(10_000);
        assert_eq!(
            t.on_data(&mut f, 0, 1000),
            rx(RxReply::Ack(1000), true, false)
        );
        // 1000..2000 lost: the first packet past the gap is NACKed, the next ones are not.
        assert_eq!(
            t.on_data(&mut f, 2000, 1000),
            rx(RxReply::Nack(1000), false, false)
        );
        assert_eq!(
            t.on_data(&mut f, 3000, 1000),
            rx(RxReply::Nothing, false, false)
        );
        // A duplicate of delivered data re-acknowledges.
        assert_eq!(
            t.on_data(&mut f, 0, 1000),
            rx(RxReply::Ack(1000), false, false)
        );
        // The retransmission fills the gap; a later gap is NACKed again.
        assert_eq!(
            t.on_data(&mut f, 1000, 1000),
            rx(RxReply::Ack(2000), true, false)
        );
        assert_eq!(
            t.on_data(&mut f, 3000, 1000),
            rx(RxReply::Nack(2000), false, false)
        );
    }

    #[test]
    fn the_sender_goes_back_on_a_nack_and_on_a_timeout() {
        let t = RdmaRc {
            ack_every: 1,
            mtu: 4096,
        };
        let mut f = flow(10_000);
        f.snd_nxt = 6000;
        assert_eq!(t.on_cumulative_ack(&mut f, 2000), 2000);
        assert_eq!(
            t.on_cumulative_ack(&mut f, 1000),
            0,
            "an old ACK acks nothing"
        );
        assert_eq!(f.snd_una, 2000);
        // Go-back-N: resend from the NACKed byte.
        assert!(t.on_nack(&mut f, 3000));
        assert_eq!(f.snd_nxt, 3000);
        // A NACK at or past what was sent moves nothing.
        assert!(!t.on_nack(&mut f, 3000));
        assert_eq!(f.nacks, 2);
        // A timeout resends from the first unacknowledged byte.
        assert!(t.on_timeout(&mut f));
        assert_eq!((f.snd_nxt, f.timeouts), (2000, 1));
        // With everything acknowledged there is nothing to resend.
        assert_eq!(t.on_cumulative_ack(&mut f, 10_000), 8000);
        assert!(!t.on_timeout(&mut f));
    }
}
