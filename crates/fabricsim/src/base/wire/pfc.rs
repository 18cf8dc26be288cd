//! IEEE 802.1Qbb priority flow control: a MAC control frame (EtherType 0x8808) with
//! opcode 0x0101, a class-enable vector (2 bytes: the high byte zero, bit n of the low
//! byte for priority n) and eight 16-bit pause times in quanta of 512 bit times,
//! priority 0 first. It goes to the reserved multicast address 01-80-C2-00-00-01 and is
//! padded to the 60-byte minimum frame (64 with the FCS).
//!
//! A time of 0 for an enabled priority resumes it (XON).

use super::{check_len, get16, put16, WireError};

/// MAC control opcode of PFC.
pub const OPCODE_PFC: u16 = 0x0101;
/// Destination MAC of MAC control frames.
pub const DST_MAC: [u8; 6] = [0x01, 0x80, 0xc2, 0x00, 0x00, 0x01];

/// The MAC control payload of a PFC frame (after the EtherType).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PfcRepr {
    /// Bit n: the time for priority n applies.
    pub class_enable: u8,
    /// Pause time per priority, in quanta (512 bit times).
    pub time: [u16; 8],
}

impl PfcRepr {
    /// Bytes: opcode, class-enable vector, eight times.
    pub const LEN: usize = 20;

    /// A frame pausing (or, with 0, resuming) one priority.
    pub fn one(prio: u8, quanta: u16) -> PfcRepr {
        let mut time = [0u16; 8];
        time[(prio & 7) as usize] = quanta;
        PfcRepr {
            class_enable: 1 << (prio & 7),
            time,
        }
    }

    /// Reads the payload at the start of `buf` (after the EtherType).
    pub fn parse(buf: &[u8]) -> Result<PfcRepr, WireError> {
        check_len("pfc", buf, Self::LEN)?;
        let op = get16(buf, 0);
        if op != OPCODE_PFC {
            return Err(WireError::Malformed {
                what: "pfc",
                field: "opcode",
                value: op as u64,
            });
        }
        if buf[2] != 0 {
            return Err(WireError::Malformed {
                what: "pfc",
                field: "class_enable",
                value: get16(buf, 2) as u64,
            });
        }
        let mut time = [0u16; 8];
        for (i, t) in time.iter_mut().enumerate() {
            *t = get16(buf, 4 + 2 * i);
        }
        Ok(PfcRepr {
            class_enable: buf[3],
            time,
        })
    }

    /// Writes the payload into the first [`Self::LEN`] bytes of `buf`.
    pub fn emit(&self, buf: &mut [u8]) {
        put16(buf, 0, OPCODE_PFC);
        buf[2] = 0;
        buf[3] = self.class_enable;
        for (i, t) in self.time.iter().enumerate() {
            put16(buf, 4 + 2 * i, *t);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn round_trip(class_enable in any::<u8>(), time in any::<[u16; 8]>()) {
            let r = PfcRepr { class_enable, time };
            let mut b = [0u8; PfcRepr::LEN];
            r.emit(&mut b);
            prop_assert_eq!(PfcRepr::parse(&b), Ok(r));
        }
    }

    #[test]
    fn one_priority_sets_its_bit_and_time() {
        let r = PfcRepr::one(3, 65535);
        let mut b = [0u8; PfcRepr::LEN];
        r.emit(&mut b);
        assert_eq!(&b[..4], &[0x01, 0x01, 0x00, 0x08]);
        assert_eq!(&b[4 + 6..4 + 8], &[0xff, 0xff]);
        assert_eq!(
            b.iter().map(|&x| x as u32).sum::<u32>(),
            1 + 1 + 8 + 255 + 255
        );
        b[1] = 0x00; // 0x0100: not PFC (PAUSE is 0x0001)
        assert!(PfcRepr::parse(&b).is_err());
    }
}
