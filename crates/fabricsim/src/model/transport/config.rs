//! `[transport]`: the NIC transport's settings (the reliability protocol, packet and
//! header sizes, timers, priorities, and which ports of a multi-port NIC carry data).

use crate::base::param::{Checked, Described, Param, ParamError};
use crate::base::units::serde_units as su;
use crate::base::units::{Time, MS};
use crate::model::fabric::port::N_PRIO;
use serde::Deserialize;

/// The NIC transport (`[transport]`).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TransportCfg {
    /// Payload bytes per packet.
    #[serde(default = "d_mtu", deserialize_with = "su::bytes")]
    pub mtu: u64,
    /// Header bytes per packet (RoCEv2: 14 MAC + 20 IP + 8 UDP + 12 BTH + 4 CRC), or a
    /// header format of document 002 ([`crate::base::presets::HEADERS`]: `"rocev2"`, `"ib"`,
    /// `"mini_packet"`).
    #[serde(
        default = "d_header",
        deserialize_with = "crate::base::presets::serde_presets::header"
    )]
    pub header: u64,
    /// Wire size of ACK, NACK and CNP frames.
    #[serde(default = "d_ctrl", deserialize_with = "su::bytes")]
    pub ack_size: u64,
    /// Acknowledge every n-th in-order packet (1 = every packet).
    #[serde(default = "d_ack_every")]
    pub ack_every: u32,
    /// Retransmission timeout (go back to the last acknowledged byte).
    #[serde(default = "d_rto", deserialize_with = "su::time")]
    pub rto: Time,
    /// Priority of data packets.
    #[serde(default = "d_data_prio")]
    pub data_priority: u8,
    /// Priority of ACK, NACK and CNP (strictly above data).
    #[serde(default = "d_ctrl_prio")]
    pub control_priority: u8,
    /// The priority of ACK, NACK and CNP frames: `control` (served strictly first and
    /// never paused) or `data` (the data priority: in switches behind and paused with
    /// data, as the HPCC ns-3 module queues ACKs; the NIC still sends them before its
    /// data, but not while the data priority is paused, as the module's NIC does).
    #[serde(default)]
    pub feedback_queue: FeedbackQueue,
    /// How a receiver signals a CE-marked packet to a sender whose controller reads
    /// CNPs: a CNP `frame` of its own (paced by the controller's CNP interval), or an
    /// `ack_flag` on the ACK or NACK that answers the packet (the ns-3 module's way: no
    /// frame, no pacing, and no signal when no ACK answers it under `ack_every` > 1).
    #[serde(default)]
    pub cnp: CnpForm,
    /// NICs with several ports (dual-rail, one per plane): which ports data takes.
    #[serde(default)]
    pub rail: RailChoice,
    /// The reliability protocol: RDMA RC with go-back-N, or the Sunway NIC's messages
    /// (out of order, complete when every byte arrived).
    #[serde(default)]
    pub kind: TransportKind,
    /// The message engines (`kind = "message"`).
    #[serde(default)]
    pub message: super::message::MessageCfg,
    /// How long one host takes to learn that something it waits for happened on
    /// another host: a dependency of the workload's graph between two hosts (a transfer
    /// that waits for another host's transfer, a rank joining its job's barrier, the next
    /// job iteration) fires this much after what it waits for. A dependency on the same
    /// host (a ring step sends what it just received) fires at once. 0 (the default):
    /// every dependency fires at once, as a single global view of the run would.
    #[serde(default, deserialize_with = "su::time")]
    pub notify_latency: Time,
    /// Payload bytes a queue pair sends in one turn of the NIC's send scheduler before
    /// the next active queue pair is served (`qp_turn.rs`); 0 (the default): one packet
    /// each, round robin.
    #[serde(default, deserialize_with = "su::bytes")]
    pub qp_burst: u64,
}

/// The largest `qp_burst`: a turn longer than any message is one turn per message.
const MAX_QP_BURST: u64 = 1 << 30;

/// `[transport] feedback_queue`.
#[derive(Clone, Copy, Debug, Default, Deserialize, serde::Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum FeedbackQueue {
    /// The control priority everywhere.
    #[default]
    Control,
    /// The data priority in switches (the control queue at the NIC).
    Data,
}

/// `[transport] cnp`.
#[derive(Clone, Copy, Debug, Default, Deserialize, serde::Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum CnpForm {
    /// A CNP frame.
    #[default]
    Frame,
    /// A flag on the ACK or NACK answering the CE-marked packet.
    AckFlag,
}

/// `[transport] kind`.
#[derive(Clone, Copy, Debug, Default, Deserialize, serde::Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum TransportKind {
    /// RDMA reliable connection with go-back-N (RoCEv2).
    #[default]
    RdmaRc,
    /// The Sunway NIC's message transport ([`super::message`]).
    Message,
}

/// The ports of a multi-port NIC that data packets take (document 003: the Sunway NIC
/// either sends every packet of a message from the port its descriptor names, or picks
/// per packet the port that is free, spreading one message over both rails).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
#[serde(into = "RailWord")]
pub enum RailChoice {
    /// Every port: each packet leaves by the first port free to send it.
    #[default]
    Adaptive,
    /// Only this port (0-based).
    Fixed(u32),
}

/// How a [`RailChoice`] is written: `"adaptive"` or a port index.
#[derive(Clone, Debug, Deserialize, serde::Serialize)]
#[serde(untagged)]
enum RailWord {
    Word(String),
    Index(i64),
}

impl From<RailChoice> for RailWord {
    fn from(r: RailChoice) -> RailWord {
        match r {
            RailChoice::Adaptive => RailWord::Word("adaptive".into()),
            RailChoice::Fixed(i) => RailWord::Index(i as i64),
        }
    }
}

impl<'de> Deserialize<'de> for RailChoice {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match RailWord::deserialize(d)? {
            RailWord::Word(w) if w == "adaptive" => Ok(RailChoice::Adaptive),
            RailWord::Word(w) => Err(serde::de::Error::custom(format!(
                "`{w}` is not a rail: use \"adaptive\" or a port index (0, 1, ...)"
            ))),
            RailWord::Index(i) if (0..=u32::MAX as i64).contains(&i) => {
                Ok(RailChoice::Fixed(i as u32))
            }
            RailWord::Index(i) => Err(serde::de::Error::custom(format!(
                "{i} is not a port index: use \"adaptive\" or 0, 1, ..."
            ))),
        }
    }
}

impl RailChoice {
    /// The data ports (first, count) of a NIC of `rails` ports; an error names the
    /// index when the NICs have no such port.
    pub fn data_rails(self, rails: u32) -> Result<(u32, u32), String> {
        let rails = rails.max(1);
        match self {
            RailChoice::Adaptive => Ok((0, rails)),
            RailChoice::Fixed(i) if i < rails => Ok((i, 1)),
            RailChoice::Fixed(i) => Err(format!(
                "port {i} does not exist: the NICs have {rails} port(s), 0..{}",
                rails - 1
            )),
        }
    }
}

fn d_mtu() -> u64 {
    4096
}
fn d_header() -> u64 {
    58
}
fn d_ctrl() -> u64 {
    64
}
fn d_ack_every() -> u32 {
    1
}
fn d_rto() -> Time {
    4 * MS
}
fn d_data_prio() -> u8 {
    3
}
fn d_ctrl_prio() -> u8 {
    7
}

impl Default for TransportCfg {
    fn default() -> Self {
        TransportCfg {
            mtu: d_mtu(),
            header: d_header(),
            ack_size: d_ctrl(),
            ack_every: d_ack_every(),
            rto: d_rto(),
            data_priority: d_data_prio(),
            control_priority: d_ctrl_prio(),
            feedback_queue: FeedbackQueue::default(),
            cnp: CnpForm::default(),
            rail: RailChoice::default(),
            kind: TransportKind::default(),
            message: Default::default(),
            notify_latency: 0,
            qp_burst: 0,
        }
    }
}

impl Described for TransportCfg {
    const ABOUT: &'static str = "RDMA reliable connection (RoCEv2 RC) with go-back-N";
    fn params() -> Vec<Param> {
        let d = TransportCfg::default();
        vec![
            Param::bytes("mtu", d.mtu, "payload bytes per packet"),
            Param::plain(
                "header",
                d.header,
                format!(
                    "header bytes per packet (MAC, IP, UDP, BTH, CRC), or a format: {}",
                    crate::base::presets::header_names()
                ),
            ),
            Param::plain("ack_size", d.ack_size, "wire bytes of ACK, NACK and CNP"),
            Param::plain(
                "ack_every",
                d.ack_every,
                "acknowledge every n-th in-order packet",
            ),
            Param::time("rto", d.rto, "retransmission timeout (at least 1us)"),
            Param::plain("data_priority", d.data_priority, "priority of data packets"),
            Param::plain(
                "control_priority",
                d.control_priority,
                "priority of ACK, NACK and CNP (above data)",
            ),
            Param::choice(
                "feedback_queue",
                &d.feedback_queue,
                "switch queue of ACK/NACK/CNP: control priority, or data priority (ns-3)",
            ),
            Param::choice(
                "cnp",
                &d.cnp,
                "CNP as its own frame, or as a flag on the answering ACK/NACK (ns-3)",
            ),
            Param::section("message", "[transport.message]"),
            Param::word(
                "kind",
                "rdma_rc",
                "\"rdma_rc\" (go-back-N) | \"message\" (Sunway: out of order, complete when every byte arrived)",
            ),
            Param::word(
                "rail",
                "adaptive",
                "multi-port NICs: \"adaptive\" (each packet by the first free port) or a port index",
            ),
            Param::time(
                "notify_latency",
                d.notify_latency,
                "a dependency between two hosts (or a rank and its job's barrier) fires this much later",
            ),
            Param::bytes(
                "qp_burst",
                d.qp_burst,
                "payload bytes a queue pair sends per turn of the NIC's scheduler (0: one packet, round robin)",
            ),
        ]
    }
}

impl TransportCfg {
    /// Checks the settings; fields are named relative to `[transport]`.
    pub fn validate(&self) -> Checked {
        let e = |field: &str, m: String| Err(ParamError::new(field, m));
        if self.mtu == 0 {
            return e("mtu", "must be at least 1 byte".into());
        }
        if self.mtu > 65_536 {
            return e(
                "mtu",
                format!("{} bytes: at most 64 KiB is allowed", self.mtu),
            );
        }
        if self.qp_burst != 0 && !(self.mtu..=MAX_QP_BURST).contains(&self.qp_burst) {
            return e(
                "qp_burst",
                format!(
                    "{} B: 0 (one packet per turn) or from one packet's payload (mtu, {} B) \
                     to 1 GiB",
                    self.qp_burst, self.mtu
                ),
            );
        }
        if self.ack_every == 0 {
            return e("ack_every", "must be at least 1".into());
        }
        crate::base::floors::at_least(
            "rto",
            self.rto,
            crate::base::floors::RESEND,
            "RDMA NICs time out after 4.096us at the least, and a shorter timeout fires \
             before an ACK can come back",
        )?;
        if self.ack_size < 1 {
            return e("ack_size", "must be positive".into());
        }
        // Buffers, PFC thresholds and credit buffers are sized for the largest data
        // packet: a larger control frame could overrun a lossless fabric's headroom or
        // never get the credits to leave.
        if self.ack_size > self.max_packet() {
            return e(
                "ack_size",
                format!(
                    "{} B is larger than the largest data packet of {} B (mtu + header), \
                     which buffers, PFC thresholds and credits are sized for: at most {} B",
                    self.ack_size,
                    self.max_packet(),
                    self.max_packet()
                ),
            );
        }
        for (field, p) in [
            ("data_priority", self.data_priority),
            ("control_priority", self.control_priority),
        ] {
            if p as usize >= N_PRIO {
                return e(field, format!("{p}: priorities are 0..{}", N_PRIO - 1));
            }
        }
        self.message.validate().map_err(|e| e.within("message"))?;
        if self.control_priority <= self.data_priority {
            return e(
                "control_priority",
                format!(
                    "must be above data_priority ({}): ACKs and CNPs are served strictly first",
                    self.data_priority
                ),
            );
        }
        Ok(())
    }

    /// Largest frame of a data packet: MTU plus headers.
    pub fn max_packet(&self) -> u64 {
        self.mtu + self.header
    }
}
