//! GSE control headers on the wire, as fabricsim writes them.
//!
//! Document 000 (GSE) names the messages (PKTC container tags, DGSQ REQUEST and GRANT)
//! and their fields but not their bytes; this is fabricsim's layout. The frames use the
//! IEEE 802 local experimental EtherType 0x88B5 (for private protocols; Wireshark shows
//! them as "Local Experimental Ethertype 1"). All fields are big-endian.
//!
//! Common header (4 bytes): version (8) = 1 | type (8) | header length in bytes (16),
//! then by type:
//!
//! | type | message | body |
//! |---|---|---|
//! | 1 | DGSQ REQUEST | source GSP (32) \| destination host (32) \| bytes (64) |
//! | 2 | DGSQ GRANT | destination host (32) \| bytes (64) \| via port (32, 0xFFFFFFFF: any) |
//! | 3 | PKTC container tag | next EtherType (16) \| index in container (16) \| container (32) \| packets in previous container (16) \| zero (16) |
//! | 4 | hardware collective message | collective (32) \| iteration (32) \| rank (32) \| direction (8: 0 up, 1 result) \| zero (24) |
//!
//! A PKTC tag (16 bytes, the default `fabric.gse.header`) sits between the Ethernet
//! header and the packet it carries (IPv4, as the next EtherType says): a data packet
//! between GSPs. Type 4 is not GSE: fabricsim's hardware-collective messages (document
//! 003) have no published format either and share this framing.

use super::{check_len, get16, get32, get64, put16, put32, put64, WireError};

/// Version written in the common header.
pub const VERSION: u8 = 1;

/// Message types.
pub mod kind {
    /// DGSQ REQUEST.
    pub const REQUEST: u8 = 1;
    /// DGSQ GRANT.
    pub const GRANT: u8 = 2;
    /// PKTC container tag before a data packet.
    pub const PKTC: u8 = 3;
    /// Hardware collective message.
    pub const COLLECTIVE: u8 = 4;
}

/// A GSE header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GseRepr {
    /// A source GSP asks the destination's scheduler for `bytes` toward `host`.
    Request {
        /// Source GSP.
        from_gsp: u32,
        /// Destination host.
        host: u32,
        /// Bytes asked for.
        bytes: u64,
    },
    /// The scheduler grants `bytes` toward `host`, to arrive over port `via`.
    Grant {
        /// Destination host.
        host: u32,
        /// Bytes granted.
        bytes: u64,
        /// The destination GSP's port the container is to come in on.
        via: Option<u32>,
    },
    /// A data packet's container tag.
    Pktc {
        /// EtherType of what follows.
        next: u16,
        /// Container number in its (source GSP, destination) stream.
        container: u32,
        /// Position in the container.
        index: u16,
        /// Packets in the previous container.
        prev: u16,
    },
    /// A hardware collective's message.
    Collective {
        /// Collective id.
        coll: u32,
        /// Iteration.
        iter: u32,
        /// Sending rank.
        rank: u32,
        /// A result going down (else a contribution going up).
        result: bool,
    },
}

const NO_PORT: u32 = u32::MAX;

impl GseRepr {
    /// Bytes of the header, common part included.
    pub fn buffer_len(&self) -> usize {
        4 + match self {
            GseRepr::Request { .. } | GseRepr::Grant { .. } => 16,
            GseRepr::Pktc { .. } => 12,
            GseRepr::Collective { .. } => 16,
        }
    }

    fn kind(&self) -> u8 {
        match self {
            GseRepr::Request { .. } => kind::REQUEST,
            GseRepr::Grant { .. } => kind::GRANT,
            GseRepr::Pktc { .. } => kind::PKTC,
            GseRepr::Collective { .. } => kind::COLLECTIVE,
        }
    }

    /// Reads a header at the start of `buf` (after the EtherType).
    pub fn parse(buf: &[u8]) -> Result<GseRepr, WireError> {
        const W: &str = "gse";
        check_len(W, buf, 4)?;
        let bad = |field, value: u64| WireError::Malformed {
            what: W,
            field,
            value,
        };
        if buf[0] != VERSION {
            return Err(bad("version", buf[0] as u64));
        }
        let len = get16(buf, 2) as usize;
        check_len(W, buf, len)?;
        let r = match buf[1] {
            kind::REQUEST if len == 20 => GseRepr::Request {
                from_gsp: get32(buf, 4),
                host: get32(buf, 8),
                bytes: get64(buf, 12),
            },
            kind::GRANT if len == 20 => {
                let via = get32(buf, 16);
                GseRepr::Grant {
                    host: get32(buf, 4),
                    bytes: get64(buf, 8),
                    via: (via != NO_PORT).then_some(via),
                }
            }
            kind::PKTC if len == 16 => GseRepr::Pktc {
                next: get16(buf, 4),
                index: get16(buf, 6),
                container: get32(buf, 8),
                prev: get16(buf, 12),
            },
            kind::COLLECTIVE if len == 20 => {
                if buf[16] > 1 {
                    return Err(bad("direction", buf[16] as u64));
                }
                GseRepr::Collective {
                    coll: get32(buf, 4),
                    iter: get32(buf, 8),
                    rank: get32(buf, 12),
                    result: buf[16] == 1,
                }
            }
            kind::REQUEST | kind::GRANT | kind::PKTC | kind::COLLECTIVE => {
                return Err(bad("length", len as u64))
            }
            t => return Err(bad("type", t as u64)),
        };
        Ok(r)
    }

    /// Writes the header into the first [`Self::buffer_len`] bytes of `buf` (a grant's
    /// `via` of `Some(u32::MAX)` reads back as `None`).
    pub fn emit(&self, buf: &mut [u8]) {
        let len = self.buffer_len();
        buf[..len].fill(0);
        buf[0] = VERSION;
        buf[1] = self.kind();
        put16(buf, 2, len as u16);
        match *self {
            GseRepr::Request {
                from_gsp,
                host,
                bytes,
            } => {
                put32(buf, 4, from_gsp);
                put32(buf, 8, host);
                put64(buf, 12, bytes);
            }
            GseRepr::Grant { host, bytes, via } => {
                put32(buf, 4, host);
                put64(buf, 8, bytes);
                put32(buf, 16, via.unwrap_or(NO_PORT));
            }
            GseRepr::Pktc {
                next,
                container,
                index,
                prev,
            } => {
                put16(buf, 4, next);
                put16(buf, 6, index);
                put32(buf, 8, container);
                put16(buf, 12, prev);
            }
            GseRepr::Collective {
                coll,
                iter,
                rank,
                result,
            } => {
                put32(buf, 4, coll);
                put32(buf, 8, iter);
                put32(buf, 12, rank);
                buf[16] = result as u8;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn repr() -> impl Strategy<Value = GseRepr> {
        prop_oneof![
            (any::<u32>(), any::<u32>(), any::<u64>()).prop_map(|(from_gsp, host, bytes)| {
                GseRepr::Request {
                    from_gsp,
                    host,
                    bytes,
                }
            }),
            (
                any::<u32>(),
                any::<u64>(),
                proptest::option::of(0..u32::MAX)
            )
                .prop_map(|(host, bytes, via)| GseRepr::Grant { host, bytes, via }),
            (any::<u16>(), any::<u32>(), any::<u16>(), any::<u16>()).prop_map(
                |(next, container, index, prev)| GseRepr::Pktc {
                    next,
                    container,
                    index,
                    prev
                }
            ),
            (any::<u32>(), any::<u32>(), any::<u32>(), any::<bool>()).prop_map(
                |(coll, iter, rank, result)| GseRepr::Collective {
                    coll,
                    iter,
                    rank,
                    result
                }
            ),
        ]
    }

    proptest! {
        #[test]
        fn round_trip(r in repr()) {
            let mut b = [0xaau8; 32];
            r.emit(&mut b);
            prop_assert_eq!(GseRepr::parse(&b[..r.buffer_len()]), Ok(r));
            prop_assert!(GseRepr::parse(&b[..r.buffer_len() - 1]).is_err());
        }
    }

    #[test]
    fn the_pktc_tag_is_the_default_gse_header_size() {
        let t = GseRepr::Pktc {
            next: super::super::ethernet::ETHERTYPE_IPV4,
            container: 9,
            index: 2,
            prev: 4,
        };
        assert_eq!(t.buffer_len(), 16);
        let mut b = [0u8; 16];
        t.emit(&mut b);
        assert_eq!(&b[..6], &[1, 3, 0, 16, 0x08, 0x00]);
        b[1] = 9;
        assert!(matches!(
            GseRepr::parse(&b),
            Err(WireError::Malformed {
                field: "type",
                value: 9,
                ..
            })
        ));
    }
}
