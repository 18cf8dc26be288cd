//! Pure overhead and latency model of PHYSec, for the simulator's per-link security mode.
//!
//! Channel level: a segment of `K` plaintext 64B/66B blocks becomes `W + 5` line blocks,
//! `W = ceil(65 K / 64)` (65B compression carried in 64-bit payloads, plus S, parameter
//! D, two tag D and T blocks). The extra blocks take the place of idles the MAC must leave
//! (like AM insertion), so they are a fixed fraction of line rate, independent of frame
//! size: the document's "no user-bandwidth overhead" does not hold exactly. As `K` grows
//! the fraction falls towards `1/65` of line rate (about 1.54 %; it is `1/64` of the user
//! rate): each block costs 65 bits of ciphertext carried 64 to a 66-bit block, i.e.
//! `65 K / 64` line blocks for `K` plaintext blocks, and the five framing blocks vanish. A receiver
//! that authenticates before delivering must hold a whole segment, so the added latency
//! is about one segment time plus the crypto pipeline.
//!
//! For comparison, per-frame schemes: MACsec (IEEE 802.1AE) adds a 16-octet SecTAG and a
//! 16-octet ICV to every frame; IPsec ESP in tunnel mode adds about 50-73 octets per packet
//! (outer IPv4 header 20, ESP header 8, IV 8-16, padding, trailer 2, ICV 12-16).

use crate::compress::words_for;

/// Latency the source document claims for PHYSec (about 100 ns), to use as the
/// simulator's modelled per-hop latency when a measured figure is not wanted.
pub const MODELLED_LATENCY_NS: u64 = 100;

/// MACsec overhead per frame in octets (SecTAG 16 + ICV 16).
pub const MACSEC_BYTES_PER_FRAME: u32 = 32;

/// IPsec ESP tunnel-mode overhead per packet in octets (upper end of the usual range).
pub const IPSEC_ESP_TUNNEL_BYTES_PER_PACKET: u32 = 73;

/// Bits per 64B/66B block on the line.
pub const BLOCK_BITS: u64 = 66;

/// Channel-level overhead of one segment length.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ChannelOverhead {
    /// Plaintext blocks per segment (`K`).
    pub segment_blocks: u64,
    /// Extra line blocks per segment (`W + 5 - K`).
    pub overhead_blocks: u64,
}

impl ChannelOverhead {
    /// The overhead of segments of `segment_blocks` blocks (at least 1).
    pub const fn for_segment(segment_blocks: u64) -> ChannelOverhead {
        let k = if segment_blocks == 0 {
            1
        } else {
            segment_blocks
        };
        ChannelOverhead {
            segment_blocks: k,
            overhead_blocks: words_for(k as usize) as u64 + 5 - k,
        }
    }

    /// Line blocks per segment.
    pub const fn line_blocks(&self) -> u64 {
        self.segment_blocks + self.overhead_blocks
    }

    /// Fraction of line rate spent on overhead (0..1): the user rate is
    /// `line_rate * (1 - overhead_fraction())`. Always above `1/65`, its limit for long
    /// segments.
    pub fn overhead_fraction(&self) -> f64 {
        self.overhead_blocks as f64 / self.line_blocks() as f64
    }

    /// Duration of one segment on a link of `line_rate_gbps` (the MAC data rate, e.g. 100 or
    /// 400; a 66-bit block carries 64 data bits, so one block lasts `64 / rate` ns).
    pub fn segment_time_ns(&self, line_rate_gbps: f64) -> f64 {
        self.line_blocks() as f64 * 64.0 / line_rate_gbps
    }

    /// Latency added per hop by a store-and-verify receiver: one segment time plus
    /// `crypto_ns` of cipher pipeline.
    pub fn added_latency_ns(&self, line_rate_gbps: f64, crypto_ns: f64) -> f64 {
        self.segment_time_ns(line_rate_gbps) + crypto_ns
    }
}

/// Link-level overhead of one multi-frame geometry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LinkOverhead {
    /// Line blocks per multi-frame (AMs included).
    pub multiframe_blocks: u64,
    /// Security overhead blocks per multi-frame (parameter + tag).
    pub overhead_blocks: u64,
}

impl LinkOverhead {
    /// Overhead of `periods` AM periods of `am_period` blocks.
    pub const fn new(am_period: u64, periods: u64) -> LinkOverhead {
        LinkOverhead {
            multiframe_blocks: am_period * periods,
            overhead_blocks: crate::link::OVERHEAD_BLOCKS as u64,
        }
    }

    /// Fraction of line rate spent on security overhead.
    pub fn overhead_fraction(&self) -> f64 {
        self.overhead_blocks as f64 / self.multiframe_blocks.max(1) as f64
    }
}

/// Fraction of line rate a per-frame scheme costs for frames of `frame_bytes` (FCS
/// included), counting preamble, SFD and the 12-octet gap (20 octets) as line overhead
/// that exists anyway.
pub fn per_frame_overhead_fraction(frame_bytes: u32, extra_bytes: u32) -> f64 {
    f64::from(extra_bytes) / f64::from(frame_bytes + 20 + extra_bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literal_overheads() {
        let o = ChannelOverhead::for_segment(64);
        assert_eq!(o.overhead_blocks, 6); // 65 words + 5 - 64
        assert_eq!(o.line_blocks(), 70);
        assert!((o.overhead_fraction() - 6.0 / 70.0).abs() < 1e-12);
        let o = ChannelOverhead::for_segment(1024);
        assert_eq!(o.overhead_blocks, 21);
        // 1045 blocks of 0.64 ns at 100G.
        assert!((o.segment_time_ns(100.0) - 668.8).abs() < 1e-9);
        assert_eq!(ChannelOverhead::for_segment(0).segment_blocks, 1);
        let l = LinkOverhead::new(16384, 4);
        assert!((l.overhead_fraction() - 3.0 / 65536.0).abs() < 1e-15);
        assert!((per_frame_overhead_fraction(64, 32) - 32.0 / 116.0).abs() < 1e-12);
    }

    #[test]
    fn overhead_floor_is_one_sixty_fifth_of_line_rate() {
        let mut last = 1.0;
        for k in [64u64, 1024, 4096, 1 << 16, 1 << 20] {
            let f = ChannelOverhead::for_segment(k).overhead_fraction();
            assert!(f > 1.0 / 65.0 && f < last, "K = {k}: {f}");
            last = f;
        }
        // At K = 2^20 the five framing blocks are 5e-6 of the line: the limit shows.
        assert!(last - 1.0 / 65.0 < 1e-5, "{last}");
        assert!(last < 1.0 / 64.0 - 1e-4);
    }
}
