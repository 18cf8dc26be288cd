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

mod launcher;
mod nic;
pub mod rdma;

pub use rdma::{Flow, FlowSpec, Host};
