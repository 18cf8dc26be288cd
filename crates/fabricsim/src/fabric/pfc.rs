//! IEEE 802.1Qbb priority flow control frames.
//!
//! A PFC frame is a MAC control frame (EtherType 0x8808) with opcode 0x0101, a
//! priority-enable vector (one bit per priority) and eight 16-bit pause times in quanta of
//! 512 bit times (so one quantum is 5.12 ns at 100 Gbit/s). A time of zero resumes the
//! priority at once. The frame is padded to the 64-byte Ethernet minimum and, like any
//! frame, takes wire time: 64 B + 20 B preamble and gap is not modelled (RoCE header
//! accounting in fabricsim counts frame bytes only).
//!
//! As in smoltcp, [`PfcFrame`] is a checked view over bytes and [`PfcRepr`] the parsed form.

use crate::units::{Rate, Time, SEC};

/// EtherType of MAC control frames.
pub const ETHERTYPE_MAC_CONTROL: u16 = 0x8808;
/// Opcode of priority-based flow control.
pub const OPCODE_PFC: u16 = 0x0101;
/// Bytes of a PFC frame on the wire (minimum Ethernet frame).
pub const PFC_FRAME_BYTES: u32 = 64;
/// Bytes of the MAC control payload: opcode, enable vector, 8 times.
pub const PFC_PAYLOAD_LEN: usize = 2 + 2 + 16;

/// Why a PFC payload could not be read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PfcError {
    /// Fewer bytes than a PFC payload.
    Truncated,
    /// The opcode is not 0x0101.
    NotPfc,
}

/// A checked view of a MAC-control payload carrying PFC.
#[derive(Clone, Copy, Debug)]
pub struct PfcFrame<T: AsRef<[u8]>> {
    buf: T,
}

impl<T: AsRef<[u8]>> PfcFrame<T> {
    /// Wraps `buf` after checking it is long enough and has the PFC opcode.
    pub fn new_checked(buf: T) -> Result<Self, PfcError> {
        let b = buf.as_ref();
        if b.len() < PFC_PAYLOAD_LEN {
            return Err(PfcError::Truncated);
        }
        if u16::from_be_bytes([b[0], b[1]]) != OPCODE_PFC {
            return Err(PfcError::NotPfc);
        }
        Ok(PfcFrame { buf })
    }
    /// The priority-enable vector.
    pub fn enable_vector(&self) -> u8 {
        self.buf.as_ref()[3]
    }
    /// Pause time of priority `p` (0..8) in quanta.
    pub fn quanta(&self, p: usize) -> u16 {
        let b = self.buf.as_ref();
        u16::from_be_bytes([b[4 + 2 * p], b[5 + 2 * p]])
    }
}

/// Parsed PFC frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct PfcRepr {
    /// Bit p set: the time for priority p is valid.
    pub enable: u8,
    /// Pause time per priority in quanta.
    pub quanta: [u16; 8],
}

impl PfcRepr {
    /// Reads a checked frame.
    pub fn parse<T: AsRef<[u8]>>(f: &PfcFrame<T>) -> PfcRepr {
        let mut quanta = [0; 8];
        for (p, q) in quanta.iter_mut().enumerate() {
            *q = f.quanta(p);
        }
        PfcRepr {
            enable: f.enable_vector(),
            quanta,
        }
    }
    /// Writes the payload into `buf` (at least [`PFC_PAYLOAD_LEN`] bytes).
    pub fn emit(&self, buf: &mut [u8]) -> Result<(), PfcError> {
        if buf.len() < PFC_PAYLOAD_LEN {
            return Err(PfcError::Truncated);
        }
        buf[0..2].copy_from_slice(&OPCODE_PFC.to_be_bytes());
        buf[2] = 0;
        buf[3] = self.enable;
        for p in 0..8 {
            buf[4 + 2 * p..6 + 2 * p].copy_from_slice(&self.quanta[p].to_be_bytes());
        }
        Ok(())
    }
}

/// How long `quanta` pause quanta last on a link of `rate`.
pub fn pause_duration(quanta: u16, rate: Rate) -> Time {
    (quanta as u128 * 512 * SEC as u128 / rate.0 as u128) as Time
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repr_round_trips() {
        let r = PfcRepr {
            enable: 0b0000_1000,
            quanta: [0, 0, 0, 0xffff, 0, 0, 0, 0],
        };
        let mut buf = [0u8; PFC_PAYLOAD_LEN];
        r.emit(&mut buf).unwrap();
        let f = PfcFrame::new_checked(&buf[..]).unwrap();
        assert_eq!(PfcRepr::parse(&f), r);
        assert_eq!(
            PfcFrame::new_checked(&buf[..10]).unwrap_err(),
            PfcError::Truncated
        );
        buf[0] = 0; // opcode 0x0001 is 802.3x PAUSE, not PFC
        assert_eq!(
            PfcFrame::new_checked(&buf[..]).unwrap_err(),
            PfcError::NotPfc
        );
    }

    #[test]
    fn quantum_is_512_bit_times() {
        assert_eq!(pause_duration(1, Rate::gbps(100)), 5_120);
        assert_eq!(pause_duration(0xffff, Rate::gbps(100)), 65_535 * 5_120);
    }
}
