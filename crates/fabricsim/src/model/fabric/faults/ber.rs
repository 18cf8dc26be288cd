//! Bit errors: the probability that a frame of a given size arrives corrupted, without
//! and with FEC.
//!
//! Bit errors are taken as independent, each bit wrong with probability `BER` (the
//! pre-FEC rate a PHY vendor quotes; real PAM4 links also see bursts from DFE error
//! propagation, which this leaves out).
//!
//! - **No FEC**: a frame of `b` bits is good only if every bit is, so its frame error rate
//!   is `FER = 1 - (1 - BER)^b`.
//! - **RS(528,514)** (IEEE 802.3 clause 91 "KR4 FEC", document 003): codewords of 528
//!   10-bit symbols, 514 of them message, correcting up to t = 7 wrong symbols. A symbol is
//!   wrong when any of its 10 bits is: `p_s = 1 - (1 - BER)^10`. A codeword fails when
//!   more than 7 of its 528 symbols are wrong:
//!   `P_cw = sum_{k=8}^{528} C(528, k) p_s^k (1 - p_s)^(528 - k)`.
//!   A frame of `b` bits spans `n = ceil(b / 5140)` codewords (5140 = 514 x 10 message
//!   bits; a frame is taken to fill codewords of its own), and it is lost when any of them
//!   fails: `FER = 1 - (1 - P_cw)^n`. The parity costs no line rate: 100GBASE-R pays for
//!   it by transcoding 64b/66b blocks to 256b/257b.
//!
//! Both forms are `1 - q^units` with `q` the probability that one unit (a bit, a
//! codeword) is good, so a link keeps `ln q` and the per-frame cost is one `expm1`:
//! `FER = -expm1(units * ln q)`, which keeps its precision for the tiny rates FEC leaves
//! (1e-22 and below) where `1 - q^n` would round to 0.
//!
//! The frame's bits are its wire bytes (with any MACsec/IPsec bytes) x 8; preamble and
//! inter-frame gap are not part of fabricsim's frames.

use super::config::FecMode;

/// Message bits of one RS(528,514) codeword: 514 symbols of 10 bits.
pub const RS528_MESSAGE_BITS: u64 = 514 * 10;
/// Symbols of one RS(528,514) codeword.
pub const RS528_SYMBOLS: u32 = 528;
/// Wrong symbols RS(528,514) corrects: (528 - 514) / 2.
pub const RS528_CORRECTS: u32 = 7;
/// Bits per RS symbol.
pub const RS_SYMBOL_BITS: i32 = 10;

/// The frame error model of one link direction: what one unit of a frame is, and the
/// log-probability that one unit is good.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FrameErrors {
    /// Bits per unit: 1 (no FEC: a unit is a bit) or [`RS528_MESSAGE_BITS`] (a codeword).
    unit_bits: u64,
    /// `ln(1 - p)` with `p` the probability that a unit is bad; 0 on an error-free link.
    ln_good: f64,
}

impl FrameErrors {
    /// The model of a link with pre-FEC bit error rate `ber` (in [0, 1]) and `fec`.
    pub fn new(ber: f64, fec: FecMode) -> FrameErrors {
        match fec {
            FecMode::None => FrameErrors {
                unit_bits: 1,
                ln_good: (-ber).ln_1p(),
            },
            FecMode::Rs528 => FrameErrors {
                unit_bits: RS528_MESSAGE_BITS,
                ln_good: (-rs528_codeword_error(ber)).ln_1p(),
            },
        }
    }

    /// True when no frame is ever corrupted.
    #[inline]
    pub fn error_free(&self) -> bool {
        self.ln_good == 0.0
    }

    /// Probability that a frame of `bytes` bytes is corrupted (after FEC, if any).
    #[inline]
    pub fn frame_error_rate(&self, bytes: u64) -> f64 {
        let units = (bytes * 8).div_ceil(self.unit_bits);
        if self.ln_good == f64::NEG_INFINITY {
            // Every unit is bad (BER 1 without FEC, or a codeword that always fails).
            return if units > 0 { 1.0 } else { 0.0 };
        }
        -(units as f64 * self.ln_good).exp_m1()
    }
}

/// Probability that an RS(528,514) codeword is uncorrectable at pre-FEC bit error rate
/// `ber`: more than [`RS528_CORRECTS`] of its [`RS528_SYMBOLS`] symbols wrong.
///
/// The binomial tail is summed directly (from k = 8 up, in log space for the binomial
/// coefficient), not as one minus the head, so that rates far below machine epsilon
/// keep their value.
pub fn rs528_codeword_error(ber: f64) -> f64 {
    let p = -((-ber).ln_1p() * RS_SYMBOL_BITS as f64).exp_m1();
    symbol_tail(p, RS528_SYMBOLS, RS528_CORRECTS)
}

/// P(X > t) for X ~ Binomial(n, p).
fn symbol_tail(p: f64, n: u32, t: u32) -> f64 {
    if p <= 0.0 {
        return 0.0;
    }
    if p >= 1.0 {
        return 1.0;
    }
    let (lp, lq) = (p.ln(), (-p).ln_1p());
    // ln C(n, k), built up from ln C(n, 0) = 0.
    let mut ln_c = 0.0;
    let mut sum = 0.0;
    for k in 1..=n {
        ln_c += ((n - k + 1) as f64).ln() - (k as f64).ln();
        if k > t {
            sum += (ln_c + k as f64 * lp + (n - k) as f64 * lq).exp();
        }
    }
    sum.min(1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Relative difference.
    fn close(got: f64, want: f64, rel: f64) -> bool {
        (got - want).abs() <= rel * want.abs()
    }

    // Reference values computed by hand with 60-digit decimal arithmetic (Python's
    // `decimal`): p_s = 1 - (1 - BER)^10, P_cw = sum_{k=8}^{528} C(528,k) p_s^k
    // (1-p_s)^(528-k), FER = 1 - (1 - P_cw)^ceil(8 bytes / 5140) and, without FEC,
    // FER = 1 - (1 - BER)^(8 bytes).

    #[test]
    fn rs528_codeword_error_matches_hand_values() {
        for (ber, want) in [
            (1e-3, 1.604723062233e-01),
            (1e-4, 8.926910513936e-08),
            (1e-5, 1.355768928260e-15),
            (1e-6, 1.413797735882e-23),
        ] {
            let got = rs528_codeword_error(ber);
            assert!(close(got, want, 1e-9), "BER {ber}: {got:e} vs {want:e}");
        }
        assert_eq!(rs528_codeword_error(0.0), 0.0);
        assert_eq!(rs528_codeword_error(1.0), 1.0);
    }

    #[test]
    fn frame_error_rates_match_hand_values() {
        // A full RoCE frame (4096 + 58 bytes: 33232 bits, 7 codewords) and a 64-byte ACK.
        for (ber, fec_full, raw_full, raw_ack) in [
            (
                1e-4,
                6.248835686271e-07,
                9.639686602664e-01,
                4.991379858332e-02,
            ),
            (
                1e-5,
                9.490382497823e-15,
                2.827434281599e-01,
                5.106940610450e-03,
            ),
            (
                1e-6,
                9.896584151177e-23,
                3.268589939331e-02,
                5.118692062359e-04,
            ),
        ] {
            let fec = FrameErrors::new(ber, FecMode::Rs528);
            let raw = FrameErrors::new(ber, FecMode::None);
            assert!(close(fec.frame_error_rate(4154), fec_full, 1e-9));
            assert!(close(raw.frame_error_rate(4154), raw_full, 1e-9));
            assert!(close(raw.frame_error_rate(64), raw_ack, 1e-9));
            // One codeword for an ACK: its FER is the codeword's.
            assert!(close(
                fec.frame_error_rate(64),
                rs528_codeword_error(ber),
                1e-12
            ));
        }
        let clean = FrameErrors::new(0.0, FecMode::Rs528);
        assert!(clean.error_free() && clean.frame_error_rate(9000) == 0.0);
        assert!(FrameErrors::new(0.0, FecMode::None).error_free());
        assert_eq!(
            FrameErrors::new(1.0, FecMode::None).frame_error_rate(64),
            1.0
        );
        assert_eq!(
            FrameErrors::new(1.0, FecMode::Rs528).frame_error_rate(64),
            1.0
        );
    }

    #[test]
    fn fec_never_makes_a_frame_worse_and_rates_grow_with_size() {
        for ber in [1e-8, 1e-6, 1e-5, 1e-4] {
            let (fec, raw) = (
                FrameErrors::new(ber, FecMode::Rs528),
                FrameErrors::new(ber, FecMode::None),
            );
            let mut last = 0.0;
            for bytes in [64, 642, 643, 1500, 4154, 9000] {
                let f = fec.frame_error_rate(bytes);
                assert!(f <= raw.frame_error_rate(bytes) && f >= last);
                last = f;
            }
        }
    }
}
