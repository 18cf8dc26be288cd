//! Typed wire formats, in the smoltcp style: a checked view over bytes plus a `Repr`
//! with `parse`/`emit`.
//!
//! * [`block`]: one 64B/66B block (IEEE 802.3 clause 49.2.4 / 82.2.3), its sync header and
//!   its block type field.
//! * [`segment`]: a PHYSec channel-level encryption segment, framed by S and T blocks.

pub mod block;
pub mod segment;

use core::fmt;

/// Why a wire view or representation could not be built.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WireError {
    /// The buffer is shorter or longer than the format requires.
    Length,
    /// A 66-bit block carries the invalid sync header `00` or `11`.
    SyncHeader(u8),
    /// A control block carries a block type field not defined by clause 49 or 82.
    BlockType(u8),
    /// A field holds a value the format does not allow (reserved bits set, bad marker).
    Field,
}

impl fmt::Display for WireError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WireError::Length => write!(f, "buffer length does not match the format"),
            WireError::SyncHeader(s) => write!(f, "invalid sync header {s:#04b}"),
            WireError::BlockType(t) => write!(f, "undefined block type field {t:#04x}"),
            WireError::Field => write!(f, "field holds a value the format forbids"),
        }
    }
}

impl std::error::Error for WireError {}
