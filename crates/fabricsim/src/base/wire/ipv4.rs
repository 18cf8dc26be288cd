//! IPv4 header (RFC 791) without options, with the DSCP and ECN field (RFC 2474, RFC 3168).

use super::{check_bits, check_len, get16, put16, WireError};

/// IP protocol number of UDP.
pub const PROTO_UDP: u8 = 17;

/// ECN codepoint: not ECN-capable transport.
pub const ECN_NOT_ECT: u8 = 0b00;
/// ECN codepoint ECT(0), which RoCEv2 senders set.
pub const ECN_ECT0: u8 = 0b10;
/// ECN codepoint CE: congestion experienced (a switch marked the packet).
pub const ECN_CE: u8 = 0b11;

/// An IPv4 header without options (IHL 5) and not fragmented.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ipv4Repr {
    /// Source address.
    pub src: [u8; 4],
    /// Destination address.
    pub dst: [u8; 4],
    /// Differentiated services code point (6 bits).
    pub dscp: u8,
    /// ECN codepoint (2 bits).
    pub ecn: u8,
    /// Identification.
    pub ident: u16,
    /// Don't-fragment flag.
    pub dont_frag: bool,
    /// Time to live.
    pub ttl: u8,
    /// Protocol of the payload.
    pub protocol: u8,
    /// Bytes after the header (total length less 20).
    pub payload_len: u16,
}

/// The Internet checksum (RFC 1071): the ones' complement of the ones' complement sum of
/// the 16-bit words of `data` (an odd last byte padded with zero).
pub fn checksum(data: &[u8]) -> u16 {
    let mut sum: u32 = 0;
    let mut chunks = data.chunks_exact(2);
    for c in &mut chunks {
        sum += u16::from_be_bytes([c[0], c[1]]) as u32;
    }
    if let [last] = chunks.remainder() {
        sum += (*last as u32) << 8;
    }
    while sum >> 16 != 0 {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

impl Ipv4Repr {
    /// Header bytes.
    pub const LEN: usize = 20;

    /// Reads the header at the start of `buf` and checks its checksum. The payload need
    /// not follow: captures keep headers only, so `payload_len` comes from the total
    /// length field, not from `buf`.
    pub fn parse(buf: &[u8]) -> Result<Ipv4Repr, WireError> {
        const W: &str = "ipv4";
        check_len(W, buf, Self::LEN)?;
        let bad = |field, value: u64| WireError::Malformed {
            what: W,
            field,
            value,
        };
        if buf[0] >> 4 != 4 {
            return Err(bad("version", (buf[0] >> 4) as u64));
        }
        if buf[0] & 0x0f != 5 {
            return Err(bad("ihl", (buf[0] & 0x0f) as u64));
        }
        let total = get16(buf, 2);
        if (total as usize) < Self::LEN {
            return Err(bad("total_length", total as u64));
        }
        let flags_frag = get16(buf, 6);
        // Reserved bit, more-fragments or an offset: a fragment, which fabricsim never
        // sends.
        if flags_frag & 0xbfff != 0 {
            return Err(bad("flags_fragment_offset", flags_frag as u64));
        }
        let computed = checksum(&buf[..Self::LEN]);
        if computed != 0 {
            let found = get16(buf, 10);
            let mut h = [0u8; Self::LEN];
            h.copy_from_slice(&buf[..Self::LEN]);
            h[10] = 0;
            h[11] = 0;
            return Err(WireError::Checksum {
                found,
                computed: checksum(&h),
            });
        }
        Ok(Ipv4Repr {
            src: [buf[12], buf[13], buf[14], buf[15]],
            dst: [buf[16], buf[17], buf[18], buf[19]],
            dscp: buf[1] >> 2,
            ecn: buf[1] & 0b11,
            ident: get16(buf, 4),
            dont_frag: flags_frag & 0x4000 != 0,
            ttl: buf[8],
            protocol: buf[9],
            payload_len: total - Self::LEN as u16,
        })
    }

    /// Checks the fields fit their bits and the total length fits 16 bits.
    pub fn check(&self) -> Result<(), WireError> {
        check_bits("ipv4", "dscp", self.dscp as u64, 6)?;
        check_bits("ipv4", "ecn", self.ecn as u64, 2)?;
        if self.payload_len as usize > u16::MAX as usize - Self::LEN {
            return Err(WireError::Malformed {
                what: "ipv4",
                field: "payload_len",
                value: self.payload_len as u64,
            });
        }
        Ok(())
    }

    /// Writes the header, checksum included, into the first [`Self::LEN`] bytes of `buf`.
    /// Fields wider than theirs on the wire are cut to it ([`Self::check`] says whether
    /// they fit).
    pub fn emit(&self, buf: &mut [u8]) {
        buf[0] = 0x45;
        buf[1] = (self.dscp << 2) | (self.ecn & 0b11);
        put16(buf, 2, self.payload_len.wrapping_add(Self::LEN as u16));
        put16(buf, 4, self.ident);
        put16(buf, 6, if self.dont_frag { 0x4000 } else { 0 });
        buf[8] = self.ttl;
        buf[9] = self.protocol;
        put16(buf, 10, 0);
        buf[12..16].copy_from_slice(&self.src);
        buf[16..20].copy_from_slice(&self.dst);
        let c = checksum(&buf[..Self::LEN]);
        put16(buf, 10, c);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn repr() -> impl Strategy<Value = Ipv4Repr> {
        (
            any::<[u8; 4]>(),
            any::<[u8; 4]>(),
            0u8..64,
            0u8..4,
            any::<u16>(),
            any::<bool>(),
            any::<u8>(),
            any::<u8>(),
            0u16..=(u16::MAX - 20),
        )
            .prop_map(
                |(src, dst, dscp, ecn, ident, dont_frag, ttl, protocol, payload_len)| Ipv4Repr {
                    src,
                    dst,
                    dscp,
                    ecn,
                    ident,
                    dont_frag,
                    ttl,
                    protocol,
                    payload_len,
                },
            )
    }

    proptest! {
        #[test]
        fn round_trip(r in repr()) {
            prop_assert!(r.check().is_ok());
            let mut b = [0u8; Ipv4Repr::LEN];
            r.emit(&mut b);
            // A header with its checksum sums to zero.
            prop_assert_eq!(checksum(&b), 0);
            prop_assert_eq!(Ipv4Repr::parse(&b), Ok(r));
        }

        #[test]
        fn any_flipped_bit_is_caught(r in repr(), bit in 0usize..160) {
            let mut b = [0u8; Ipv4Repr::LEN];
            r.emit(&mut b);
            b[bit / 8] ^= 1 << (bit % 8);
            prop_assert!(Ipv4Repr::parse(&b).is_err());
        }
    }

    #[test]
    fn checksum_of_a_known_header() {
        // A textbook header (192.168.0.1 -> 192.168.0.199, UDP, 115 bytes): 0xb861.
        let mut h = [
            0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11, 0x00, 0x00, 0xc0, 0xa8,
            0x00, 0x01, 0xc0, 0xa8, 0x00, 0xc7,
        ];
        assert_eq!(checksum(&h), 0xb861);
        h[10] = 0xb8;
        h[11] = 0x61;
        let r = Ipv4Repr::parse(&h).unwrap();
        assert_eq!((r.protocol, r.payload_len, r.ttl), (PROTO_UDP, 95, 64));
        assert!(r.dont_frag);
        h[11] = 0x62;
        assert_eq!(
            Ipv4Repr::parse(&h),
            Err(WireError::Checksum {
                found: 0xb862,
                computed: 0xb861
            })
        );
    }

    #[test]
    fn dscp_and_ecn_share_a_byte() {
        let r = Ipv4Repr {
            src: [10, 0, 0, 1],
            dst: [10, 0, 0, 2],
            dscp: 24,
            ecn: ECN_CE,
            ident: 0,
            dont_frag: true,
            ttl: 64,
            protocol: PROTO_UDP,
            payload_len: 8,
        };
        let mut b = [0u8; 20];
        r.emit(&mut b);
        assert_eq!(b[1], (24 << 2) | 0b11);
        assert!(Ipv4Repr { dscp: 64, ..r }.check().is_err());
    }
}
