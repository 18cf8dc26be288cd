//! Transmit side: MAC frames and gaps to XGMII columns (the reconciliation sublayer,
//! clause 46.2 / 81.2) and columns to 64B/66B blocks (clause 49.2.4).

use super::xgmii::{ctrl, encode_column, Column, Xgmii};
use super::{PREAMBLE, SFD};
use crate::wire::block::Block66;

/// One thing for the MAC side to transmit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TxItem<'a> {
    /// A MAC frame, destination address to FCS inclusive (preamble and SFD are added).
    Frame(&'a [u8]),
    /// `n` idle characters of extra gap (beyond the minimum inter-packet gap).
    Idle(usize),
    /// A sequence ordered set (/Q/ with three data octets, e.g. `[0, 0, 1]` = local fault).
    OrderedSet([u8; 3]),
}

/// Builds a 64B/66B block stream (unscrambled) from frames, gaps and ordered sets.
///
/// A frame always starts in lane 0 (clause 82.2.3.3); the gap after a frame is the /T/
/// character plus `min_ipg - 1` idles, rounded up to the next column.
#[derive(Clone, Debug)]
pub struct PcsEncoder {
    col: Column,
    fill: usize,
    min_ipg: usize,
}

impl Default for PcsEncoder {
    fn default() -> Self {
        PcsEncoder::new(12)
    }
}

impl PcsEncoder {
    /// An encoder whose inter-packet gap (counting /T/) is at least `min_ipg` octets; 802.3
    /// specifies 12 (clause 4.4.2).
    pub fn new(min_ipg: usize) -> PcsEncoder {
        PcsEncoder {
            col: [Xgmii::Control(ctrl::IDLE); 8],
            fill: 0,
            min_ipg: min_ipg.max(1),
        }
    }

    fn push(&mut self, c: Xgmii, out: &mut Vec<Block66>) {
        self.col[self.fill] = c;
        self.fill += 1;
        if self.fill == 8 {
            out.push(encode_column(&self.col));
            self.fill = 0;
        }
    }

    fn align(&mut self, out: &mut Vec<Block66>) {
        while self.fill != 0 {
            self.push(Xgmii::Control(ctrl::IDLE), out);
        }
    }

    /// Encode one item, appending the completed blocks to `out`.
    pub fn encode(&mut self, item: TxItem<'_>, out: &mut Vec<Block66>) {
        match item {
            TxItem::Frame(frame) => {
                self.align(out);
                self.push(Xgmii::Control(ctrl::START), out);
                for _ in 0..6 {
                    self.push(Xgmii::Data(PREAMBLE), out);
                }
                self.push(Xgmii::Data(SFD), out);
                for &b in frame {
                    self.push(Xgmii::Data(b), out);
                }
                self.push(Xgmii::Control(ctrl::TERMINATE), out);
                for _ in 1..self.min_ipg {
                    self.push(Xgmii::Control(ctrl::IDLE), out);
                }
            }
            TxItem::Idle(n) => {
                for _ in 0..n {
                    self.push(Xgmii::Control(ctrl::IDLE), out);
                }
            }
            TxItem::OrderedSet(d) => {
                self.align(out);
                self.push(Xgmii::Control(ctrl::SEQUENCE), out);
                for x in d {
                    self.push(Xgmii::Data(x), out);
                }
                self.align(out);
            }
        }
    }

    /// Complete a partly filled column with idles.
    pub fn flush(&mut self, out: &mut Vec<Block66>) {
        self.align(out);
    }

    /// Encode a whole sequence of items and flush.
    pub fn encode_all(&mut self, items: &[TxItem<'_>]) -> Vec<Block66> {
        let mut out = Vec::new();
        for &it in items {
            self.encode(it, &mut out);
        }
        self.flush(&mut out);
        out
    }
}

/// Number of 66-bit blocks one frame of `len` octets occupies with an encoder using
/// `min_ipg`, from its /S/ to the start of the next column after the gap.
pub fn frame_blocks(len: usize, min_ipg: usize) -> usize {
    (8 + len + min_ipg.max(1)).div_ceil(8)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn minimum_frame_block_count() {
        // 8 preamble octets + 64-octet frame + 12 gap = 84 octets = 10.5 -> 11 blocks.
        let frame = [0xa5u8; 64];
        let blocks = PcsEncoder::default().encode_all(&[TxItem::Frame(&frame)]);
        assert_eq!(blocks.len(), 11);
        assert_eq!(frame_blocks(64, 12), 11);
        assert_eq!(blocks[0].block_type(), Some(0x78));
        // 72 octets of S+preamble+frame end exactly on a column: /T/ opens block 9.
        assert_eq!(blocks[9].block_type(), Some(0x87));
        assert_eq!(blocks[10], Block66::IDLE);
    }
}
