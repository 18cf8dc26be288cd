//! The PHYSec channel-level encryption segment, as a sequence of 66-bit blocks.
//!
//! Source document 000 (section 2.2.3, figure 9) describes the segment: the 64B/66B
//! stream is compressed to 65B blocks, encrypted, carried in the 64-bit area of data
//! blocks, one extra D block carries the decryption parameters, and S and T blocks are
//! added at the ends. This module fixes the exact layout this crate uses:
//!
//! ```text
//! block 0        S   control 0x78, lanes 1..7 = 55 55 55 55 55 55 D5 (a normal start)
//! block 1        D   parameter block: version, key id, 48-bit packet number
//! blocks 2..2+W  D   ciphertext of the K compressed blocks, W = ceil(65 K / 64) words
//! blocks +2      D   the 128-bit GCM tag, low half then high half
//! last           T   control 0x87 (/T/ in lane 0, seven idles)
//! ```
//!
//! To any IEEE 802.3 PHY or retimer on the way this is an ordinary frame of
//! `8 (W + 3)` octets, so it crosses plain 64B/66B equipment unchanged. A segment is
//! always `W + 5` blocks whatever it carries.

use super::block::{Block66, BlockRepr, ControlCode};
use super::WireError;
use crate::keys::{KeyId, MAX_PN};

/// Version number in the parameter block.
pub const PARAM_VERSION: u8 = 1;

/// The data lanes of the S block: a standard preamble and SFD.
pub const START_LANES: [u8; 7] = [0x55, 0x55, 0x55, 0x55, 0x55, 0x55, 0xd5];

/// The S block that opens every segment.
pub fn start_block() -> Block66 {
    BlockRepr::Start(START_LANES).emit()
}

/// The T block that closes every segment.
pub fn terminate_block() -> Block66 {
    BlockRepr::Terminate {
        len: 0,
        data: [0; 7],
        codes: [ControlCode::IDLE; 7],
    }
    .emit()
}

/// Blocks in a segment carrying `payload_words` ciphertext words.
pub const fn segment_len(payload_words: usize) -> usize {
    payload_words + 5
}

/// The decryption parameters of one segment (the first D block).
///
/// Octets in lane order: `[version, key id, pn47..40, ..., pn7..0]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ParamRepr {
    /// Key the segment is encrypted under.
    pub key_id: KeyId,
    /// Packet number (48 bits), unique per key; forms the GCM nonce with the salt.
    pub pn: u64,
}

impl ParamRepr {
    /// Parse a parameter block.
    pub fn parse(block: &Block66) -> Result<ParamRepr, WireError> {
        let BlockRepr::Data(d) = BlockRepr::parse(block)? else {
            return Err(WireError::Field);
        };
        if d[0] != PARAM_VERSION {
            return Err(WireError::Field);
        }
        let mut pn = [0u8; 8];
        pn[2..].copy_from_slice(&d[2..]);
        Ok(ParamRepr {
            key_id: KeyId(d[1]),
            pn: u64::from_be_bytes(pn),
        })
    }

    /// Emit the parameter block (the packet number is truncated to 48 bits).
    pub fn emit(&self) -> Block66 {
        let pn = (self.pn & MAX_PN).to_be_bytes();
        let mut d = [0u8; 8];
        d[0] = PARAM_VERSION;
        d[1] = self.key_id.0;
        d[2..].copy_from_slice(&pn[2..]);
        BlockRepr::Data(d).emit()
    }
}

/// A checked view of one segment over a slice of blocks.
#[derive(Debug, Clone, Copy)]
pub struct Segment<'a> {
    blocks: &'a [Block66],
}

impl<'a> Segment<'a> {
    /// Check the framing of a segment carrying `payload_words` ciphertext words: length,
    /// S and T blocks, and data sync headers on everything between.
    pub fn new_checked(blocks: &'a [Block66], payload_words: usize) -> Result<Self, WireError> {
        if blocks.len() != segment_len(payload_words) {
            return Err(WireError::Length);
        }
        let last = blocks.len() - 1;
        if blocks[0] != start_block() || blocks[last] != terminate_block() {
            return Err(WireError::Field);
        }
        if let Some(b) = blocks[1..last].iter().find(|b| !b.is_data()) {
            return Err(if b.is_control() {
                WireError::Field
            } else {
                WireError::SyncHeader(b.sync & 0b11)
            });
        }
        Ok(Segment { blocks })
    }

    /// The parameter block.
    pub fn param_block(&self) -> &'a Block66 {
        &self.blocks[1]
    }

    /// The ciphertext-carrying blocks.
    pub fn payload(&self) -> &'a [Block66] {
        &self.blocks[2..self.blocks.len() - 3]
    }

    /// The 16-octet tag.
    pub fn tag(&self) -> [u8; 16] {
        let n = self.blocks.len();
        let mut t = [0u8; 16];
        t[..8].copy_from_slice(&self.blocks[n - 3].payload.to_le_bytes());
        t[8..].copy_from_slice(&self.blocks[n - 2].payload.to_le_bytes());
        t
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn param_block_literal() {
        let p = ParamRepr {
            key_id: KeyId(2),
            pn: 0x0000_0102_0304_0506,
        };
        let b = p.emit();
        assert!(b.is_data());
        assert_eq!(b.payload.to_le_bytes(), [1, 2, 1, 2, 3, 4, 5, 6]);
        assert_eq!(ParamRepr::parse(&b), Ok(p));
        assert_eq!(
            ParamRepr::parse(&Block66::data(0)),
            Err(WireError::Field),
            "version 0 is rejected"
        );
        assert_eq!(ParamRepr::parse(&Block66::IDLE), Err(WireError::Field));
    }

    #[test]
    fn framing_is_checked() {
        let mut seg = vec![start_block()];
        seg.extend(std::iter::repeat_n(Block66::data(0), 4));
        seg.push(terminate_block());
        assert!(Segment::new_checked(&seg, 1).is_ok());
        assert_eq!(Segment::new_checked(&seg, 2).err(), Some(WireError::Length));
        seg[2] = Block66::IDLE;
        assert_eq!(Segment::new_checked(&seg, 1).err(), Some(WireError::Field));
        seg[2].sync = 0;
        assert_eq!(
            Segment::new_checked(&seg, 1).err(),
            Some(WireError::SyncHeader(0))
        );
    }
}
