//! Wire formats: the headers a fabricsim packet stands for, as typed views.
//!
//! The simulator moves descriptors, never bytes (`packet.rs`); these modules are what
//! turns a packet into the bytes a real fabric would carry, for the packet capture
//! (`[record.pcap]`, [`crate::model::capture`]) and for anyone who wants to check a frame
//! layout. Each header has a `Repr` (the fields, typed) with `Repr::parse(&[u8])`, which
//! checks what it reads, and `Repr::emit(&self, &mut [u8])`, which writes exactly
//! `Repr::LEN` (or `buffer_len()`) bytes; `parse(emit(x)) == x` for every `x` (the
//! tests check it by property).
//!
//! - [`ethernet`]: Ethernet II (no VLAN tag: priority travels in the IP DSCP);
//! - [`ipv4`]: IPv4 without options, with its header checksum, DSCP and ECN;
//! - [`udp`]: UDP (RoCEv2 uses destination port 4791 and a zero checksum);
//! - [`bth`]: the InfiniBand Base Transport Header and the extension headers RoCEv2 RC
//!   uses here (RETH, AETH), the opcodes, the CNP;
//! - [`pfc`]: IEEE 802.1Qbb priority flow control (MAC control, EtherType 0x8808);
//! - [`gse`]: GSE's REQUEST, GRANT and PKTC container headers (and hardware collective
//!   messages) under the IEEE 802 local experimental EtherType 0x88B5, a layout this
//!   project defines (the source documents give the fields, not their bytes).
//!
//! [`addr`] derives the hosts' and switch ports' MAC and IPv4 addresses from their ids.

pub mod addr;
pub mod bth;
pub mod ethernet;
pub mod gse;
pub mod ipv4;
pub mod pfc;
pub mod udp;

/// Why bytes did not parse as a header.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WireError {
    /// Fewer bytes than the header needs.
    Truncated {
        /// The header.
        what: &'static str,
        /// Bytes it needs.
        need: usize,
        /// Bytes there were.
        have: usize,
    },
    /// A field holds a value this header cannot have (or that fabricsim does not use).
    Malformed {
        /// The header.
        what: &'static str,
        /// The field.
        field: &'static str,
        /// Its value.
        value: u64,
    },
    /// The IPv4 header checksum does not match.
    Checksum {
        /// The checksum in the header.
        found: u16,
        /// The checksum of the header's bytes.
        computed: u16,
    },
}

impl std::fmt::Display for WireError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            WireError::Truncated { what, need, have } => {
                write!(f, "{what}: needs {need} bytes, has {have}")
            }
            WireError::Malformed { what, field, value } => {
                write!(f, "{what}: field {field} cannot be {value:#x}")
            }
            WireError::Checksum { found, computed } => write!(
                f,
                "ipv4: header checksum {found:#06x}, the header's is {computed:#06x}"
            ),
        }
    }
}

impl std::error::Error for WireError {}

/// `buf` holds at least `need` bytes of header `what`.
pub(crate) fn check_len(what: &'static str, buf: &[u8], need: usize) -> Result<(), WireError> {
    if buf.len() < need {
        Err(WireError::Truncated {
            what,
            need,
            have: buf.len(),
        })
    } else {
        Ok(())
    }
}

/// Big-endian 16-bit field at `at`.
#[inline]
pub(crate) fn get16(buf: &[u8], at: usize) -> u16 {
    u16::from_be_bytes([buf[at], buf[at + 1]])
}

/// Big-endian 24-bit field at `at`.
#[inline]
pub(crate) fn get24(buf: &[u8], at: usize) -> u32 {
    u32::from_be_bytes([0, buf[at], buf[at + 1], buf[at + 2]])
}

/// Big-endian 32-bit field at `at`.
#[inline]
pub(crate) fn get32(buf: &[u8], at: usize) -> u32 {
    u32::from_be_bytes([buf[at], buf[at + 1], buf[at + 2], buf[at + 3]])
}

/// Big-endian 64-bit field at `at`.
#[inline]
pub(crate) fn get64(buf: &[u8], at: usize) -> u64 {
    let mut b = [0u8; 8];
    b.copy_from_slice(&buf[at..at + 8]);
    u64::from_be_bytes(b)
}

#[inline]
pub(crate) fn put16(buf: &mut [u8], at: usize, v: u16) {
    buf[at..at + 2].copy_from_slice(&v.to_be_bytes());
}

/// Writes the low 24 bits of `v`.
#[inline]
pub(crate) fn put24(buf: &mut [u8], at: usize, v: u32) {
    buf[at..at + 3].copy_from_slice(&v.to_be_bytes()[1..]);
}

#[inline]
pub(crate) fn put32(buf: &mut [u8], at: usize, v: u32) {
    buf[at..at + 4].copy_from_slice(&v.to_be_bytes());
}

#[inline]
pub(crate) fn put64(buf: &mut [u8], at: usize, v: u64) {
    buf[at..at + 8].copy_from_slice(&v.to_be_bytes());
}

/// A field that must fit in `bits` bits.
pub(crate) fn check_bits(
    what: &'static str,
    field: &'static str,
    value: u64,
    bits: u32,
) -> Result<(), WireError> {
    if value >> bits != 0 {
        Err(WireError::Malformed { what, field, value })
    } else {
        Ok(())
    }
}
