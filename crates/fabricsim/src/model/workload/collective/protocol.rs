//! NCCL's three protocols: how a step's data travel between two GPUs, and what that
//! costs on the wire and in time.
//!
//! NCCL moves every step of a collective with one of three protocols (Hu et al.,
//! "Demystifying NCCL: An In-depth Analysis of GPU Communication Protocols and
//! Algorithms", arXiv 2507.04786, section III and its protocol comparison table; the
//! protocols are named in NCCL's documentation of `NCCL_PROTO`):
//!
//! | protocol | what crosses the wire | wire efficiency | per-hop latency |
//! |----------|-----------------------|-----------------|-----------------|
//! | Simple   | data chunks, then a flag after a memory fence | 1 (near peak) | about 6 us |
//! | LL       | 8-byte stores of 4 B data + 4 B flag | 4/8 = 50 % | about 1 us |
//! | LL128    | 128-byte lines of 120 B data + 8 B flag | 120/128 = 93.75 % | about 2 us |
//!
//! Simple synchronises a chunk with a fence and a flag: it reaches the link's bandwidth
//! but each hop pays the fence. LL and LL128 carry the flag inside the data, so the
//! receiver polls the data itself (no fence, lower latency) and the flag costs wire bytes.
//!
//! Here a protocol acts on the transfers of the collective's graph: a transfer of `S`
//! data bytes carries `ceil(S / efficiency)` bytes on the wire ([`Protocol::wire_bytes`]),
//! and each step starts its per-hop latency after the step it waits for was received
//! (the first step after the iteration starts). [`Protocol::Bare`] is no protocol at all:
//! transfers as bare RDMA messages, which is what the algorithm-named collectives
//! (`ring_allreduce`, ...) run when `protocol` is not set.

use crate::base::units::{Time, US};
use serde::Deserialize;

/// A protocol a collective's steps run with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Protocol {
    /// No protocol model: bare RDMA messages, no extra bytes, no per-step latency.
    Bare,
    /// NCCL's Simple protocol.
    Simple,
    /// NCCL's LL (low latency) protocol.
    Ll,
    /// NCCL's LL128 protocol.
    Ll128,
}

/// Simple's per-hop latency (arXiv 2507.04786, protocol comparison: about 6 us).
pub const SIMPLE_LATENCY: Time = 6 * US;
/// LL's per-hop latency (arXiv 2507.04786, protocol comparison: about 1 us).
pub const LL_LATENCY: Time = US;
/// LL128's per-hop latency (arXiv 2507.04786, protocol comparison: about 2 us).
pub const LL128_LATENCY: Time = 2 * US;
/// LL's wire efficiency as (data, wire) bytes: each 8-byte store carries 4 B of data and
/// a 4 B flag (arXiv 2507.04786, section III).
pub const LL_EFFICIENCY: (u64, u64) = (4, 8);
/// LL128's wire efficiency as (data, wire) bytes: each 128-byte line carries 120 B of
/// data and an 8 B flag (arXiv 2507.04786, section III).
pub const LL128_EFFICIENCY: (u64, u64) = (120, 128);

impl Protocol {
    /// The name in scenarios and outputs.
    pub fn name(self) -> &'static str {
        match self {
            Protocol::Bare => "none",
            Protocol::Simple => "simple",
            Protocol::Ll => "ll",
            Protocol::Ll128 => "ll128",
        }
    }

    /// Data bytes and wire bytes of a protocol unit: the wire efficiency as a fraction.
    pub fn efficiency(self) -> (u64, u64) {
        match self {
            Protocol::Bare | Protocol::Simple => (1, 1),
            Protocol::Ll => LL_EFFICIENCY,
            Protocol::Ll128 => LL128_EFFICIENCY,
        }
    }

    /// The latency each step adds.
    pub fn step_latency(self) -> Time {
        match self {
            Protocol::Bare => 0,
            Protocol::Simple => SIMPLE_LATENCY,
            Protocol::Ll => LL_LATENCY,
            Protocol::Ll128 => LL128_LATENCY,
        }
    }

    /// Bytes on the wire of a transfer of `data` bytes: `ceil(data * wire / data_unit)`.
    pub fn wire_bytes(self, data: u64) -> u64 {
        let (d, w) = self.efficiency();
        (u128::from(data) * u128::from(w)).div_ceil(u128::from(d)) as u64
    }
}

/// The `protocol` setting of a collective workload.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum ProtocolCfg {
    /// Chosen per message size ([`super::select`]).
    Auto,
    /// Simple.
    Simple,
    /// LL.
    Ll,
    /// LL128.
    Ll128,
    /// No protocol model.
    None,
}

impl ProtocolCfg {
    /// Every value, in declaration order.
    pub const ALL: [ProtocolCfg; 5] = [
        ProtocolCfg::Auto,
        ProtocolCfg::Simple,
        ProtocolCfg::Ll,
        ProtocolCfg::Ll128,
        ProtocolCfg::None,
    ];

    /// The protocol named, `None` for `auto`.
    pub fn fixed(self) -> Option<Protocol> {
        match self {
            ProtocolCfg::Auto => None,
            ProtocolCfg::Simple => Some(Protocol::Simple),
            ProtocolCfg::Ll => Some(Protocol::Ll),
            ProtocolCfg::Ll128 => Some(Protocol::Ll128),
            ProtocolCfg::None => Some(Protocol::Bare),
        }
    }

    /// The name in scenarios.
    pub fn name(self) -> &'static str {
        match self {
            ProtocolCfg::Auto => "auto",
            p => p.fixed().expect("fixed").name(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wire_bytes_follow_the_stated_efficiency() {
        assert_eq!(Protocol::Bare.wire_bytes(1000), 1000);
        assert_eq!(Protocol::Simple.wire_bytes(1000), 1000);
        assert_eq!(Protocol::Ll.wire_bytes(1000), 2000);
        assert_eq!(Protocol::Ll128.wire_bytes(1200), 1280);
        // Rounded up: 1 B of LL128 data still costs 2 B (ceil(128/120)).
        assert_eq!(Protocol::Ll128.wire_bytes(1), 2);
        assert!(Protocol::Ll.step_latency() < Protocol::Ll128.step_latency());
        assert!(Protocol::Ll128.step_latency() < Protocol::Simple.step_latency());
        assert_eq!(Protocol::Bare.step_latency(), 0);
    }

    #[test]
    fn all_names_every_protocol() {
        let names: Vec<String> = ProtocolCfg::ALL.iter().map(|p| p.name().into()).collect();
        assert_eq!(names, crate::base::param::serde_variants::<ProtocolCfg>());
    }
}
