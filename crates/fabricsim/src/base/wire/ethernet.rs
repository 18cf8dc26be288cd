//! Ethernet II header (IEEE 802.3 with a type field), without VLAN tag or FCS.

use super::{check_len, get16, put16, WireError};

/// EtherType of IPv4.
pub const ETHERTYPE_IPV4: u16 = 0x0800;
/// EtherType of MAC control frames (PAUSE, PFC).
pub const ETHERTYPE_MAC_CONTROL: u16 = 0x8808;
/// IEEE 802 local experimental EtherType 1, which fabricsim's GSE frames use
/// ([`super::gse`]).
pub const ETHERTYPE_GSE: u16 = 0x88b5;

/// An Ethernet II header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EthernetRepr {
    /// Destination MAC.
    pub dst: [u8; 6],
    /// Source MAC.
    pub src: [u8; 6],
    /// EtherType (at least 0x0600: a type, not an 802.3 length).
    pub ethertype: u16,
}

impl EthernetRepr {
    /// Header bytes.
    pub const LEN: usize = 14;

    /// Reads the header at the start of `buf`.
    pub fn parse(buf: &[u8]) -> Result<EthernetRepr, WireError> {
        check_len("ethernet", buf, Self::LEN)?;
        let ethertype = get16(buf, 12);
        if ethertype < 0x0600 {
            // An 802.3 length field: LLC framing, which fabricsim never sends.
            return Err(WireError::Malformed {
                what: "ethernet",
                field: "ethertype",
                value: ethertype as u64,
            });
        }
        let mut dst = [0u8; 6];
        let mut src = [0u8; 6];
        dst.copy_from_slice(&buf[0..6]);
        src.copy_from_slice(&buf[6..12]);
        Ok(EthernetRepr {
            dst,
            src,
            ethertype,
        })
    }

    /// Writes the header into the first [`Self::LEN`] bytes of `buf`.
    pub fn emit(&self, buf: &mut [u8]) {
        buf[0..6].copy_from_slice(&self.dst);
        buf[6..12].copy_from_slice(&self.src);
        put16(buf, 12, self.ethertype);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn round_trip(dst in any::<[u8; 6]>(), src in any::<[u8; 6]>(), ethertype in 0x0600u16..) {
            let r = EthernetRepr { dst, src, ethertype };
            let mut b = [0u8; EthernetRepr::LEN];
            r.emit(&mut b);
            prop_assert_eq!(EthernetRepr::parse(&b), Ok(r));
        }
    }

    #[test]
    fn short_buffers_and_length_fields_are_refused() {
        assert!(matches!(
            EthernetRepr::parse(&[0; 13]),
            Err(WireError::Truncated {
                need: 14,
                have: 13,
                ..
            })
        ));
        let mut b = [0u8; 14];
        b[12] = 0x05;
        b[13] = 0xdc; // 1500: a length
        assert!(matches!(
            EthernetRepr::parse(&b),
            Err(WireError::Malformed {
                field: "ethertype",
                ..
            })
        ));
    }
}
