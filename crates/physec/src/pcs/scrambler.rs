//! The self-synchronising scrambler of IEEE 802.3 clause 49.2.6 (Figure 49-8), polynomial
//! G(x) = 1 + x^39 + x^58, applied to the 64-bit payload of each block (never the sync
//! header).
//!
//! Each transmitted bit is `s[i] = d[i] ^ s[i-39] ^ s[i-58]`, where `s` is the scrambled
//! output stream. The descrambler computes `d[i] = s[i] ^ s[i-39] ^ s[i-58]` from the
//! received stream alone, so it needs no synchronisation: after 58 bits it agrees with the
//! transmitter whatever state either started in. A bit error on the line is multiplied by
//! three (at `i`, `i+39`, `i+58`), which is why 802.3 checks the FCS after descrambling.
//!
//! Both directions process a whole 64-bit word with shifts. The state is the last 58
//! scrambled bits; writing `x` for the 122-bit sequence `state ++ s`, bit `i` of the block
//! needs `x[i]` and `x[i + 19]`. Bits 0..39 depend only on the state; bits 39..64 depend on
//! bits already computed, so two passes suffice.

const STATE_MASK: u64 = (1u64 << 58) - 1;

/// Transmit scrambler.
#[derive(Clone, Debug)]
pub struct Scrambler {
    /// The last 58 scrambled bits; bit 0 is the oldest.
    state: u64,
}

/// Receive descrambler.
#[derive(Clone, Debug)]
pub struct Descrambler {
    /// The last 58 received (scrambled) bits; bit 0 is the oldest.
    state: u64,
}

impl Scrambler {
    /// A scrambler with the given initial state (only the low 58 bits are used). The
    /// standard leaves the initial state free; an all-zero state is legal too.
    pub fn new(seed: u64) -> Scrambler {
        Scrambler {
            state: seed & STATE_MASK,
        }
    }

    /// Scramble one payload word.
    pub fn scramble(&mut self, d: u64) -> u64 {
        let prev = u128::from(self.state);
        let low_mask = (1u64 << 39) - 1;
        let low = (d ^ (self.state >> 19) ^ self.state) & low_mask;
        let x = prev | (u128::from(low) << 58);
        let all = d ^ ((x >> 19) as u64) ^ (x as u64);
        let s = (all & !low_mask) | low;
        // Bits 39..64 in the second pass used x[i] for i >= 58, which are scrambled bits
        // 0..6 of this block: all below 39, so already final in `low`.
        self.state = s >> 6;
        s
    }

    /// Scramble a run of blocks in place (payloads only).
    pub fn scramble_blocks(&mut self, blocks: &mut [crate::wire::block::Block66]) {
        for b in blocks {
            b.payload = self.scramble(b.payload);
        }
    }
}

impl Descrambler {
    /// A descrambler with the given initial state; it self-synchronises after one block.
    pub fn new(seed: u64) -> Descrambler {
        Descrambler {
            state: seed & STATE_MASK,
        }
    }

    /// Descramble one payload word.
    pub fn descramble(&mut self, s: u64) -> u64 {
        let x = u128::from(self.state) | (u128::from(s) << 58);
        let d = s ^ ((x >> 19) as u64) ^ (x as u64);
        self.state = s >> 6;
        d
    }

    /// Descramble a run of blocks in place (payloads only).
    pub fn descramble_blocks(&mut self, blocks: &mut [crate::wire::block::Block66]) {
        for b in blocks {
            b.payload = self.descramble(b.payload);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Bit-serial reference straight from Figure 49-8.
    fn serial(state: &mut [bool; 58], d: u64) -> u64 {
        let mut out = 0u64;
        for i in 0..64 {
            let bit = ((d >> i) & 1 == 1) ^ state[57] ^ state[38];
            state.copy_within(0..57, 1);
            state[0] = bit;
            out |= u64::from(bit) << i;
        }
        out
    }

    #[test]
    fn matches_bit_serial_reference() {
        // state[k] holds s[i-1-k]; the word form keeps bit j = s[j-58], so bit j <-> k=57-j.
        let seed = 0x0123_4567_89ab_cdefu64 & STATE_MASK;
        let mut serial_state = [false; 58];
        for (k, s) in serial_state.iter_mut().enumerate() {
            *s = (seed >> (57 - k)) & 1 == 1;
        }
        let mut fast = Scrambler::new(seed);
        let mut w = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..200 {
            w = w
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            assert_eq!(fast.scramble(w), serial(&mut serial_state, w));
        }
    }

    #[test]
    fn all_zero_payload_with_zero_state_stays_zero() {
        // The known weakness of a self-synchronising scrambler: zeros in, zeros out.
        let mut s = Scrambler::new(0);
        assert_eq!(s.scramble(0), 0);
        // A single one bit reappears 39 and 58 bits later.
        let mut s = Scrambler::new(0);
        assert_eq!(s.scramble(1), 1 | (1 << 39) | (1 << 58));
    }

    #[test]
    fn descrambler_self_synchronises() {
        let mut tx = Scrambler::new(0x02aa_aaaa_aaaa_aaaa);
        let mut rx = Descrambler::new(0x1234);
        let words: Vec<u64> = (0..50u64)
            .map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15))
            .collect();
        let got: Vec<u64> = words
            .iter()
            .map(|&w| rx.descramble(tx.scramble(w)))
            .collect();
        // The first block may be wrong (wrong initial state), every later one is right.
        assert_eq!(&got[1..], &words[1..]);
    }
}
