//! The 64B/66B physical coding sublayer, IEEE 802.3 clause 49 (10GBASE-R) and clause 82
//! (40GBASE-R/100GBASE-R).
//!
//! Between the MAC and the PMA, Ethernet moves data as XGMII/CGMII *columns*: eight lanes,
//! each carrying either a data octet or a control character (/I/ idle, /S/ start, /T/
//! terminate, /E/ error, /Q/ sequence ordered set). The reconciliation sublayer (clause
//! 46/81) turns a MAC frame into a column stream: /S/ replaces the first of the seven
//! preamble octets (0x55), the start-of-frame delimiter 0xD5 follows, then the frame from
//! destination address to FCS, then /T/ and at least the inter-packet gap of idles. Clause
//! 82 requires /S/ in lane 0, so the RS pads the gap to a column boundary.
//!
//! The PCS transmit path (clause 49.2.4, 49.2.6) encodes each column into one 66-bit block
//! ([`crate::wire::block`]) and scrambles the 64-bit payload with the self-synchronising
//! scrambler x^58 + x^39 + 1; the sync header is not scrambled, which is what lets the
//! receiver find block lock. The receive path descrambles, decodes blocks back to columns
//! (an undecodable block becomes a column of /E/) and the RS rebuilds frames, discarding a
//! frame in which an error appears.
//!
//! PHYSec's channel-level encryption sits between [`encoder`] and [`scrambler`]: it works on
//! the unscrambled 64B/66B block stream and hands ordinary blocks on to the scrambler, so
//! the rest of the PHY (scrambling, AM insertion, FEC) is unchanged.
//!
//! What is simplified: the transmitter never shortens the gap below the configured minimum
//! (no deficit idle count, clause 46.3.1.4), which is always legal but makes the average
//! gap a few octets longer than a DIC transmitter's.

pub mod decoder;
pub mod encoder;
pub mod scrambler;
pub mod xgmii;

pub use decoder::{PcsDecoder, RxEvent, RxStats};
pub use encoder::{PcsEncoder, TxItem};
pub use scrambler::{Descrambler, Scrambler};
pub use xgmii::{decode_block, encode_column, Column, Xgmii};

/// The seven preamble octets of a MAC frame (the first is replaced by /S/ on XGMII).
pub const PREAMBLE: u8 = 0x55;
/// The start-of-frame delimiter.
pub const SFD: u8 = 0xd5;
