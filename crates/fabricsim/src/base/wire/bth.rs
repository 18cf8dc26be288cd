//! InfiniBand transport headers as RoCEv2 carries them in UDP (IBTA volume 1, 9.2
//! and annex A17): the Base Transport Header, the RDMA extended header (RETH) and the
//! ACK extended header (AETH), the RC opcodes fabricsim uses and the CNP.
//!
//! BTH (12 bytes): opcode (8) | SE (1) M (1) PadCnt (2) TVer (4) | P_Key (16) |
//! FECN (1) BECN (1) reserved (6) | DestQP (24) | AckReq (1) reserved (7) | PSN (24).
//! RETH (16): virtual address (64) | R_Key (32) | DMA length (32).
//! AETH (4): syndrome (8) | MSN (24); the syndrome's bits 6-5 say ACK (00), RNR NAK (01)
//! or NAK (11), its low 5 bits the credit count, timer or NAK code.
//! A CNP is a BTH with opcode 0x81 (BECN set, PSN 0) and 16 reserved bytes.
//!
//! The 4-byte ICRC after the payload is not part of these headers; fabricsim's frames
//! carry it as zeros (see [`crate::model::capture`]).

use super::WireError;
use super::{check_bits, check_len, get16, get24, get32, get64, put16, put24, put32, put64};

/// Opcodes (RC service: top three bits 000; CNP: 0x81).
pub mod opcode {
    /// RC SEND First.
    pub const RC_SEND_FIRST: u8 = 0x00;
    /// RC SEND Middle.
    pub const RC_SEND_MIDDLE: u8 = 0x01;
    /// RC SEND Last.
    pub const RC_SEND_LAST: u8 = 0x02;
    /// RC SEND Only.
    pub const RC_SEND_ONLY: u8 = 0x04;
    /// RC RDMA WRITE First (carries a RETH).
    pub const RC_WRITE_FIRST: u8 = 0x06;
    /// RC RDMA WRITE Middle.
    pub const RC_WRITE_MIDDLE: u8 = 0x07;
    /// RC RDMA WRITE Last.
    pub const RC_WRITE_LAST: u8 = 0x08;
    /// RC RDMA WRITE Only (carries a RETH).
    pub const RC_WRITE_ONLY: u8 = 0x0a;
    /// RC Acknowledge (carries an AETH): ACKs and NAKs.
    pub const RC_ACK: u8 = 0x11;
    /// RoCEv2 congestion notification packet.
    pub const CNP: u8 = 0x81;
}

/// The default partition key (full membership).
pub const DEFAULT_PKEY: u16 = 0xffff;

/// Bytes a CNP carries after its BTH (reserved, zero).
pub const CNP_RESERVED_LEN: usize = 16;

/// Bytes of the invariant CRC after the payload.
pub const ICRC_LEN: usize = 4;

/// The extension header an opcode brings after the BTH (among those fabricsim uses).
pub fn extension_len(op: u8) -> usize {
    match op {
        opcode::RC_WRITE_FIRST | opcode::RC_WRITE_ONLY => RethRepr::LEN,
        opcode::RC_ACK => AethRepr::LEN,
        opcode::CNP => CNP_RESERVED_LEN,
        _ => 0,
    }
}

/// A Base Transport Header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BthRepr {
    /// Opcode ([`opcode`]).
    pub opcode: u8,
    /// Solicited event.
    pub solicited: bool,
    /// Migration state.
    pub mig_req: bool,
    /// Pad bytes after the payload (2 bits).
    pub pad_count: u8,
    /// Transport header version (4 bits, 0).
    pub tver: u8,
    /// Partition key.
    pub pkey: u16,
    /// Forward ECN (RoCEv2: reserved, 0).
    pub fecn: bool,
    /// Backward ECN (set in CNPs).
    pub becn: bool,
    /// Destination queue pair (24 bits).
    pub dest_qp: u32,
    /// Acknowledge request.
    pub ack_req: bool,
    /// Packet sequence number (24 bits).
    pub psn: u32,
}

impl BthRepr {
    /// Header bytes.
    pub const LEN: usize = 12;

    /// Reads the header at the start of `buf`.
    pub fn parse(buf: &[u8]) -> Result<BthRepr, WireError> {
        check_len("bth", buf, Self::LEN)?;
        Ok(BthRepr {
            opcode: buf[0],
            solicited: buf[1] & 0x80 != 0,
            mig_req: buf[1] & 0x40 != 0,
            pad_count: (buf[1] >> 4) & 0b11,
            tver: buf[1] & 0x0f,
            pkey: get16(buf, 2),
            fecn: buf[4] & 0x80 != 0,
            becn: buf[4] & 0x40 != 0,
            dest_qp: get24(buf, 5),
            ack_req: buf[8] & 0x80 != 0,
            psn: get24(buf, 9),
        })
    }

    /// Checks the fields fit their bits.
    pub fn check(&self) -> Result<(), WireError> {
        check_bits("bth", "pad_count", self.pad_count as u64, 2)?;
        check_bits("bth", "tver", self.tver as u64, 4)?;
        check_bits("bth", "dest_qp", self.dest_qp as u64, 24)?;
        check_bits("bth", "psn", self.psn as u64, 24)
    }

    /// Writes the header into the first [`Self::LEN`] bytes of `buf` (fields cut to their
    /// bits; reserved bits zero).
    pub fn emit(&self, buf: &mut [u8]) {
        buf[0] = self.opcode;
        buf[1] = (self.solicited as u8) << 7
            | (self.mig_req as u8) << 6
            | (self.pad_count & 0b11) << 4
            | (self.tver & 0x0f);
        put16(buf, 2, self.pkey);
        buf[4] = (self.fecn as u8) << 7 | (self.becn as u8) << 6;
        put24(buf, 5, self.dest_qp);
        buf[8] = (self.ack_req as u8) << 7;
        put24(buf, 9, self.psn);
    }
}

/// An RDMA extended transport header (first or only packet of an RDMA WRITE).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RethRepr {
    /// Remote virtual address.
    pub va: u64,
    /// Remote key.
    pub rkey: u32,
    /// Bytes of the whole WRITE.
    pub dma_len: u32,
}

impl RethRepr {
    /// Header bytes.
    pub const LEN: usize = 16;

    /// Reads the header at the start of `buf`.
    pub fn parse(buf: &[u8]) -> Result<RethRepr, WireError> {
        check_len("reth", buf, Self::LEN)?;
        Ok(RethRepr {
            va: get64(buf, 0),
            rkey: get32(buf, 8),
            dma_len: get32(buf, 12),
        })
    }

    /// Writes the header into the first [`Self::LEN`] bytes of `buf`.
    pub fn emit(&self, buf: &mut [u8]) {
        put64(buf, 0, self.va);
        put32(buf, 8, self.rkey);
        put32(buf, 12, self.dma_len);
    }
}

/// What an AETH's syndrome says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Syndrome {
    /// Positive acknowledgement with a credit count (5 bits; 31: no credit limit).
    Ack {
        /// End-to-end credits.
        credits: u8,
    },
    /// Receiver not ready; retry after the encoded timer (5 bits).
    RnrNak {
        /// RNR timer code.
        timer: u8,
    },
    /// Negative acknowledgement (5 bits: 0 PSN sequence error, 1 invalid request,
    /// 2 remote access error, 3 remote operational error, 4 invalid RD request).
    Nak {
        /// NAK code.
        code: u8,
    },
}

/// NAK code of a PSN sequence error: the receiver expected another PSN (go back to it).
pub const NAK_PSN_SEQUENCE_ERROR: u8 = 0;
/// ACK credit count meaning "no end-to-end credit limit".
pub const ACK_UNLIMITED_CREDITS: u8 = 0x1f;

impl Syndrome {
    /// The syndrome byte.
    pub fn to_byte(self) -> u8 {
        match self {
            Syndrome::Ack { credits } => credits & 0x1f,
            Syndrome::RnrNak { timer } => 0x20 | (timer & 0x1f),
            Syndrome::Nak { code } => 0x60 | (code & 0x1f),
        }
    }

    /// Reads a syndrome byte (bit 7 and the code 10 are reserved).
    pub fn from_byte(b: u8) -> Result<Syndrome, WireError> {
        let low = b & 0x1f;
        match b >> 5 {
            0b000 => Ok(Syndrome::Ack { credits: low }),
            0b001 => Ok(Syndrome::RnrNak { timer: low }),
            0b011 => Ok(Syndrome::Nak { code: low }),
            _ => Err(WireError::Malformed {
                what: "aeth",
                field: "syndrome",
                value: b as u64,
            }),
        }
    }
}

/// An ACK extended transport header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AethRepr {
    /// ACK, RNR NAK or NAK.
    pub syndrome: Syndrome,
    /// Message sequence number (24 bits).
    pub msn: u32,
}

impl AethRepr {
    /// Header bytes.
    pub const LEN: usize = 4;

    /// Reads the header at the start of `buf`.
    pub fn parse(buf: &[u8]) -> Result<AethRepr, WireError> {
        check_len("aeth", buf, Self::LEN)?;
        Ok(AethRepr {
            syndrome: Syndrome::from_byte(buf[0])?,
            msn: get24(buf, 1),
        })
    }

    /// Writes the header into the first [`Self::LEN`] bytes of `buf` (MSN cut to 24 bits).
    pub fn emit(&self, buf: &mut [u8]) {
        buf[0] = self.syndrome.to_byte();
        put24(buf, 1, self.msn);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn bth() -> impl Strategy<Value = BthRepr> {
        (
            any::<u8>(),
            any::<[bool; 5]>(),
            0u8..4,
            0u8..16,
            any::<u16>(),
            0u32..(1 << 24),
            0u32..(1 << 24),
        )
            .prop_map(|(opcode, f, pad_count, tver, pkey, dest_qp, psn)| BthRepr {
                opcode,
                solicited: f[0],
                mig_req: f[1],
                pad_count,
                tver,
                pkey,
                fecn: f[2],
                becn: f[3],
                dest_qp,
                ack_req: f[4],
                psn,
            })
    }

    fn syndrome() -> impl Strategy<Value = Syndrome> {
        prop_oneof![
            (0u8..32).prop_map(|credits| Syndrome::Ack { credits }),
            (0u8..32).prop_map(|timer| Syndrome::RnrNak { timer }),
            (0u8..32).prop_map(|code| Syndrome::Nak { code }),
        ]
    }

    proptest! {
        #[test]
        fn bth_round_trip(r in bth()) {
            prop_assert!(r.check().is_ok());
            let mut b = [0u8; BthRepr::LEN];
            r.emit(&mut b);
            prop_assert_eq!(BthRepr::parse(&b), Ok(r));
        }

        #[test]
        fn reth_round_trip(va in any::<u64>(), rkey in any::<u32>(), dma_len in any::<u32>()) {
            let r = RethRepr { va, rkey, dma_len };
            let mut b = [0u8; RethRepr::LEN];
            r.emit(&mut b);
            prop_assert_eq!(RethRepr::parse(&b), Ok(r));
        }

        #[test]
        fn aeth_round_trip(syndrome in syndrome(), msn in 0u32..(1 << 24)) {
            let r = AethRepr { syndrome, msn };
            let mut b = [0u8; AethRepr::LEN];
            r.emit(&mut b);
            prop_assert_eq!(AethRepr::parse(&b), Ok(r));
        }
    }

    #[test]
    fn a_cnp_header_matches_the_annex_example() {
        // Annex A17's CNP: opcode 0x81, P_Key 0xffff, BECN set, PSN 0.
        let r = BthRepr {
            opcode: opcode::CNP,
            solicited: false,
            mig_req: false,
            pad_count: 0,
            tver: 0,
            pkey: DEFAULT_PKEY,
            fecn: false,
            becn: true,
            dest_qp: 0xd2,
            ack_req: false,
            psn: 0,
        };
        let mut b = [0u8; 12];
        r.emit(&mut b);
        assert_eq!(b, [0x81, 0, 0xff, 0xff, 0x40, 0, 0, 0xd2, 0, 0, 0, 0]);
        assert_eq!(extension_len(opcode::CNP), 16);
    }

    #[test]
    fn syndromes_encode_as_the_spec_says() {
        assert_eq!(Syndrome::Ack { credits: 31 }.to_byte(), 0x1f);
        assert_eq!(
            Syndrome::Nak {
                code: NAK_PSN_SEQUENCE_ERROR
            }
            .to_byte(),
            0x60
        );
        assert!(Syndrome::from_byte(0x40).is_err());
        assert!(Syndrome::from_byte(0x80).is_err());
        assert!(BthRepr {
            psn: 1 << 24,
            ..BthRepr::parse(&[0; 12]).unwrap()
        }
        .check()
        .is_err());
    }
}
