//! 66B to 65B compression, the first step of PHYSec channel-level encryption.
//!
//! A 64B/66B sync header spends two bits on one bit of information (data or control);
//! `00` and `11` exist only so the receiver can find block lock. Inside an encrypted
//! segment lock is provided by the carrier blocks, so each block is reduced to a one-bit
//! flag plus its 64-bit payload, the same idea IEEE 802.3 clause 91 uses when it
//! transcodes four 66-bit blocks to one 257-bit block. Here the flag is `1` for a data
//! block and `0` for a control block (as in the 257B header).
//!
//! 65-bit units are packed back to back, least significant bit first, into 64-bit words;
//! `K` blocks occupy `ceil(65 K / 64)` words and the unused tail bits are zero.
//! A block with an invalid sync header cannot be represented and is replaced by the error
//! block, exactly what a clause 49 receiver would have decoded it as.

use crate::wire::block::Block66;

/// Number of 64-bit words that `blocks` 65-bit units occupy.
pub const fn words_for(blocks: usize) -> usize {
    (blocks * 65).div_ceil(64)
}

/// Pack `blocks` into `out`, which must hold [`words_for`]`(blocks.len())` words. Returns
/// the number of blocks replaced by the error block because of an invalid sync header.
pub fn compress(blocks: &[Block66], out: &mut [u64]) -> usize {
    let mut acc: u128 = 0;
    let mut n = 0u32;
    let mut w = 0usize;
    let mut replaced = 0;
    for b in blocks {
        let b = if b.is_data() || b.is_control() {
            *b
        } else {
            replaced += 1;
            Block66::ERROR
        };
        acc |= u128::from(b.is_data()) << n;
        acc |= u128::from(b.payload) << (n + 1);
        n += 65;
        while n >= 64 {
            out[w] = acc as u64;
            w += 1;
            acc >>= 64;
            n -= 64;
        }
    }
    if n > 0 {
        out[w] = acc as u64;
        w += 1;
    }
    out[w..].fill(0);
    replaced
}

/// Unpack `out.len()` blocks from `words`. Returns `false` if `words` is too short or the
/// padding bits after the last unit are not zero.
pub fn decompress(words: &[u64], out: &mut [Block66]) -> bool {
    if words.len() < words_for(out.len()) {
        return false;
    }
    let mut acc: u128 = 0;
    let mut n = 0u32;
    let mut w = 0usize;
    for b in out.iter_mut() {
        // Keep at least 65 bits in the accumulator.
        while n < 65 {
            acc |= u128::from(words[w]) << n;
            w += 1;
            n += 64;
        }
        let flag = acc & 1 == 1;
        let payload = (acc >> 1) as u64;
        *b = if flag {
            Block66::data(payload)
        } else {
            Block66::control(payload)
        };
        acc >>= 65;
        n -= 65;
    }
    acc == 0 && words[w..].iter().all(|&x| x == 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        assert_eq!(words_for(1), 2);
        assert_eq!(words_for(64), 65);
        assert_eq!(words_for(1024), 1040);
    }

    #[test]
    fn literal_layout() {
        // One data block then one idle block: flag 1, payload, flag 0, payload 0x1e.
        let blocks = [Block66::data(0x8000_0000_0000_0001), Block66::IDLE];
        let mut words = [0u64; 3];
        compress(&blocks, &mut words);
        assert_eq!(words[0], 0b11); // flag + payload bit 0
                                    // Bit 63 of the payload lands on bit 64 (word 1 bit 0); flag 0 on bit 1; 0x1e at 2.
        assert_eq!(words[1], 1 | (0x1e << 2));
        assert_eq!(words[2], 0);
        let mut back = [Block66::default(); 2];
        assert!(decompress(&words, &mut back));
        assert_eq!(back, blocks);
    }

    #[test]
    fn invalid_sync_becomes_error_and_padding_is_checked() {
        let blocks = [Block66 {
            sync: 0b11,
            payload: 5,
        }];
        let mut words = [0u64; 2];
        assert_eq!(compress(&blocks, &mut words), 1);
        let mut back = [Block66::default()];
        assert!(decompress(&words, &mut back));
        assert_eq!(back[0], Block66::ERROR);
        words[1] |= 1 << 63;
        assert!(!decompress(&words, &mut back));
    }
}
