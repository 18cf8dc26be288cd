//! UDP header (RFC 768). RoCEv2 sends to port 4791 with a zero checksum (allowed over
//! IPv4; the ICRC protects the transport), which is what [`UdpRepr::emit`] writes.

use super::{check_len, get16, put16, WireError};

/// UDP destination port of RoCEv2.
pub const ROCEV2_PORT: u16 = 4791;

/// A UDP header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UdpRepr {
    /// Source port (RoCEv2: the flow's entropy, which ECMP hashes).
    pub src_port: u16,
    /// Destination port.
    pub dst_port: u16,
    /// Bytes after the header (length field less 8).
    pub payload_len: u16,
}

impl UdpRepr {
    /// Header bytes.
    pub const LEN: usize = 8;

    /// Reads the header at the start of `buf` (the checksum is not checked: RoCEv2's is
    /// zero, and captures keep headers only).
    pub fn parse(buf: &[u8]) -> Result<UdpRepr, WireError> {
        check_len("udp", buf, Self::LEN)?;
        let len = get16(buf, 4);
        if (len as usize) < Self::LEN {
            return Err(WireError::Malformed {
                what: "udp",
                field: "length",
                value: len as u64,
            });
        }
        Ok(UdpRepr {
            src_port: get16(buf, 0),
            dst_port: get16(buf, 2),
            payload_len: len - Self::LEN as u16,
        })
    }

    /// Writes the header with a zero checksum into the first [`Self::LEN`] bytes of `buf`.
    pub fn emit(&self, buf: &mut [u8]) {
        put16(buf, 0, self.src_port);
        put16(buf, 2, self.dst_port);
        put16(buf, 4, self.payload_len.wrapping_add(Self::LEN as u16));
        put16(buf, 6, 0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn round_trip(src_port in any::<u16>(), dst_port in any::<u16>(), payload_len in 0u16..=(u16::MAX - 8)) {
            let r = UdpRepr { src_port, dst_port, payload_len };
            let mut b = [0xffu8; UdpRepr::LEN];
            r.emit(&mut b);
            prop_assert_eq!(&b[6..8], &[0, 0]);
            prop_assert_eq!(UdpRepr::parse(&b), Ok(r));
        }
    }

    #[test]
    fn a_length_below_the_header_is_refused() {
        let b = [0x12, 0xb7, 0x12, 0xb7, 0, 7, 0, 0];
        assert!(matches!(
            UdpRepr::parse(&b),
            Err(WireError::Malformed {
                field: "length",
                value: 7,
                ..
            })
        ));
        assert!(UdpRepr::parse(&b[..7]).is_err());
    }
}
