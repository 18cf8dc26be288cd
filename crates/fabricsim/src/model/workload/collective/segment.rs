//! How finely a collective's transfers are cut into frames: packets of `transport.mtu`
//! (the default), or segments that stand for several such packets.
//!
//! A segment of `s` payload bytes is one frame on the wire carrying the headers of the
//! `ceil(s / mtu)` packets it stands for, and its ACK carries the bytes of the ACKs those
//! packets would have drawn (one per `transport.ack_every`), so the bytes each link
//! carries, both ways, and hence every bandwidth, stay those of packets. What a segment
//! changes is the granularity of store and forward: every switch (the NVSwitch, a GPU's
//! crossbar, the leaves and spines) receives a whole segment before it forwards it, so a
//! transfer's last segment reaches its receiver up to `(hops - 1) x s / rate` later than
//! its last packet would; buffers, PFC thresholds and pauses act on segments, and the
//! PFC headroom is sized for the largest segment (`sim::largest_frame`). A capture shows
//! a segment as one frame.
//!
//! `segment = "auto"` uses segments only where they are needed and measured to cost
//! little: messages of at least [`AUTO_MIN_MESSAGE`] per rank, where each transfer moves
//! in the largest power-of-two multiple of `mtu` that still cuts it into at least
//! [`AUTO_FRAMES`] segments, at most [`SEGMENT_MAX`]. `scenarios/nccl-segments.toml`
//! measures the choice on the 128-GPU cluster of `scenarios/nccl-tests.toml`
//! (`docs/results/nccl-segments.md`): from 512 MiB its smallest transfers, the rails' ring
//! steps, are 1 MiB, 16 segments of 64 KiB, and the AllReduce completes within a fraction
//! of a percent of packets. Below that message size a collective runs in packets: the
//! events are few there, and short steps are where segments cost most (a ring of 128 KiB
//! steps in 64 KiB segments is 55 % off: `docs/results/nccl-fidelity.md`, "NVLink
//! granularity"). `segment = "16KiB"` (a multiple of `mtu`, at most [`SEGMENT_MAX`]) cuts
//! every transfer of the workload in segments of that size.
//!
//! [`SEGMENT_MAX`] is 64 KiB, the most `transport.mtu` allows (IPv4's 16-bit total length
//! bounds one datagram): a frame larger than any a fabric carries would also hold a link,
//! and the ACKs queued behind it, longer than any real frame does.

use serde::de::{self, Deserializer, Visitor};
use std::fmt;

/// The largest segment payload: 64 KiB, as `transport.mtu`.
pub const SEGMENT_MAX: u64 = 64 << 10;
/// Least message per rank for which `segment = "auto"` uses segments.
pub const AUTO_MIN_MESSAGE: u64 = 512 << 20;
/// Fewest segments `segment = "auto"` cuts a transfer into.
pub const AUTO_FRAMES: u64 = 16;

/// The `segment` setting of a collective workload.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SegmentCfg {
    /// Segments where the message is large enough ([`AUTO_MIN_MESSAGE`]).
    Auto,
    /// Segments of this many payload bytes for every transfer.
    Size(u64),
}

impl<'de> serde::Deserialize<'de> for SegmentCfg {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = SegmentCfg;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("\"auto\", or a segment size such as \"16KiB\"")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<SegmentCfg, E> {
                if v == "auto" {
                    return Ok(SegmentCfg::Auto);
                }
                crate::base::units::parse_bytes(v)
                    .map(SegmentCfg::Size)
                    .map_err(|e| E::custom(format!("{e}; expected \"auto\" or a size")))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<SegmentCfg, E> {
                u64::try_from(v)
                    .map(SegmentCfg::Size)
                    .map_err(|_| E::custom(format!("{v} bytes is negative")))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<SegmentCfg, E> {
                Ok(SegmentCfg::Size(v))
            }
        }
        d.deserialize_any(V)
    }
}

impl SegmentCfg {
    /// Checks a fixed size against the run's packet payload `mtu`.
    pub fn validate(self, mtu: u64) -> Result<(), String> {
        match self {
            SegmentCfg::Auto => Ok(()),
            SegmentCfg::Size(s) if s < mtu || s > SEGMENT_MAX || s % mtu != 0 => Err(format!(
                "{s} bytes: a segment stands for whole packets of transport.mtu ({mtu} B): \
                 a multiple of it, at most {SEGMENT_MAX} B (or \"auto\")"
            )),
            SegmentCfg::Size(_) => Ok(()),
        }
    }

    /// How the transfers of a message of `message` bytes per rank are cut.
    pub fn frames(self, message: u64) -> FrameSize {
        match self {
            SegmentCfg::Auto if message >= AUTO_MIN_MESSAGE => FrameSize::Auto,
            SegmentCfg::Auto => FrameSize::Mtu,
            SegmentCfg::Size(s) => FrameSize::Fixed(s),
        }
    }

    /// The largest payload one frame may carry under this setting, for messages of at
    /// most `largest` bytes per rank (what buffers and PFC headroom are sized for).
    pub fn max_payload(self, largest: u64, mtu: u64) -> u64 {
        match self.frames(largest) {
            FrameSize::Mtu => mtu,
            FrameSize::Auto => SEGMENT_MAX.max(mtu),
            FrameSize::Fixed(s) => s,
        }
    }
}

/// How one flow's bytes are cut into frames.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum FrameSize {
    /// Packets of `transport.mtu`.
    #[default]
    Mtu,
    /// [`auto_segment`] of the flow's size.
    Auto,
    /// Segments of this many payload bytes.
    Fixed(u64),
}

impl FrameSize {
    /// Payload bytes per frame of a flow of `size` bytes, with packets of `mtu`.
    pub fn payload(self, size: u64, mtu: u64) -> u64 {
        match self {
            FrameSize::Mtu => mtu,
            FrameSize::Auto => auto_segment(size, mtu),
            FrameSize::Fixed(s) => s,
        }
    }
}

/// The segment `auto` gives a transfer of `size` bytes: the largest `mtu x 2^i` that is
/// at most [`SEGMENT_MAX`] and cuts the transfer into at least [`AUTO_FRAMES`] segments;
/// `mtu` when none does.
pub fn auto_segment(size: u64, mtu: u64) -> u64 {
    let mut s = mtu.max(1);
    while s * 2 <= SEGMENT_MAX && (s * 2).saturating_mul(AUTO_FRAMES) <= size {
        s *= 2;
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn auto_keeps_at_least_the_stated_segments_per_transfer() {
        assert_eq!(AUTO_FRAMES, 16, "the cases below are worked for 16");
        // 64 KiB / 16 = 4 KiB: packets.
        assert_eq!(auto_segment(64 << 10, 4096), 4096);
        assert_eq!(auto_segment((128 << 10) - 1, 4096), 4096);
        assert_eq!(auto_segment(128 << 10, 4096), 8192);
        assert_eq!(auto_segment(512 << 10, 4096), 32 << 10);
        // Capped at 64 KiB however large the transfer.
        assert_eq!(auto_segment(1 << 20, 4096), SEGMENT_MAX);
        assert_eq!(auto_segment(1 << 40, 4096), SEGMENT_MAX);
        // Powers of two of an MTU that is not one.
        assert_eq!(auto_segment(100 << 20, 1000), 64_000);
        for size in [1u64, 4096, 3 << 20, 77 << 20, 1 << 33] {
            let s = auto_segment(size, 4096);
            assert!(s == 4096 || size / s >= AUTO_FRAMES, "{size}: {s}");
            assert!(s <= SEGMENT_MAX && s.is_multiple_of(4096));
        }
    }

    #[test]
    fn auto_applies_from_the_threshold_only() {
        let a = SegmentCfg::Auto;
        assert_eq!(a.frames(AUTO_MIN_MESSAGE - 1), FrameSize::Mtu);
        assert_eq!(a.frames(AUTO_MIN_MESSAGE), FrameSize::Auto);
        assert_eq!(a.max_payload(256 << 20, 4096), 4096);
        assert_eq!(a.max_payload(8 << 30, 4096), SEGMENT_MAX);
        assert_eq!(SegmentCfg::Size(16384).frames(8), FrameSize::Fixed(16384));
        assert_eq!(FrameSize::Mtu.payload(1 << 30, 4096), 4096);
    }

    #[test]
    fn fixed_sizes_are_whole_packets_within_the_cap() {
        assert!(SegmentCfg::Size(16384).validate(4096).is_ok());
        assert!(SegmentCfg::Size(SEGMENT_MAX).validate(4096).is_ok());
        for bad in [0, 2048, 6000, SEGMENT_MAX * 2] {
            let e = SegmentCfg::Size(bad).validate(4096).unwrap_err();
            assert!(e.contains("transport.mtu"), "{e}");
        }
    }
}
