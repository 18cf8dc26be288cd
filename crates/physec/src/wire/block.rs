//! The 64B/66B block, IEEE 802.3 clause 49.2.4 (10GBASE-R) and clause 82.2.3
//! (40GBASE-R/100GBASE-R, reused by the 200G/400G PCS of clause 119 before 256B/257B
//! transcoding).
//!
//! A block is 66 bits: a 2-bit *sync header* followed by a 64-bit payload. Bits are
//! transmitted least significant first. The sync header is `01` (first bit 0, then 1) for
//! a block of eight data octets and `10` for a block that contains control characters;
//! `00` and `11` never occur on a healthy link and let the receiver find block lock
//! (clause 49.2.9). In this crate a sync header is held as a 2-bit number whose bit 0 is
//! the first bit on the wire, so data is `0b10` and control is `0b01`.
//!
//! In a control block the first payload octet is the *block type field* (Figure 49-7),
//! which says which of the eight XGMII lanes hold data, control characters (7-bit codes),
//! an ordered set (4-bit O code), a Start (/S/) or a Terminate (/T/). Clause 82 allows only
//! the subset with /S/ in lane 0 (types 0x1e, 0x78, 0x4b, 0x87..0xff); clause 49 also defines
//! 0x2d, 0x33, 0x66 and 0x55 for a start or ordered set in lane 4. [`BlockRepr`] parses all
//! fifteen, and the PHYSec transmitter emits only the clause 82 subset.
//!
//! Two forms exist:
//! * [`Block66`], a small `Copy` value (sync header + payload word) used for block streams;
//! * [`Block`], a checked view over the 9-octet serialisation used at API boundaries:
//!   octet 0 holds the sync header in its two low bits (the other six must be zero), octets
//!   1..9 the payload in little-endian order, so octet 1 bit 0 is the first payload bit.

use super::WireError;

/// Sync header of a data block (`01` on the wire; first bit 0).
pub const SYNC_DATA: u8 = 0b10;
/// Sync header of a control block (`10` on the wire; first bit 1).
pub const SYNC_CONTROL: u8 = 0b01;

/// Block type fields of Figure 49-7.
pub mod block_type {
    /// C0..C7: eight control characters (idle, error, LPI).
    pub const CONTROL: u8 = 0x1e;
    /// C0..C3, O4 D5 D6 D7 (clause 49 only).
    pub const CONTROL_ORDERED_SET: u8 = 0x2d;
    /// C0..C3, S4 D5 D6 D7 (clause 49 only).
    pub const CONTROL_START: u8 = 0x33;
    /// O0 D1 D2 D3, S4 D5 D6 D7 (clause 49 only).
    pub const ORDERED_SET_START: u8 = 0x66;
    /// O0 D1 D2 D3, O4 D5 D6 D7 (clause 49 only).
    pub const ORDERED_SET_ORDERED_SET: u8 = 0x55;
    /// S0 D1..D7.
    pub const START: u8 = 0x78;
    /// O0 D1 D2 D3, Z4..Z7.
    pub const ORDERED_SET: u8 = 0x4b;
    /// T0 C1..C7, D0 T1 C2..C7, ... D0..D6 T7: index by the number of data octets.
    pub const TERMINATE: [u8; 8] = [0x87, 0x99, 0xaa, 0xb4, 0xcc, 0xd2, 0xe1, 0xff];
}

/// A 7-bit control code of a 64B/66B control block (Table 49-1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ControlCode(u8);

impl ControlCode {
    /// /I/ idle.
    pub const IDLE: ControlCode = ControlCode(0x00);
    /// Low-power idle.
    pub const LPI: ControlCode = ControlCode(0x06);
    /// /E/ error.
    pub const ERROR: ControlCode = ControlCode(0x1e);

    /// A code from its 7-bit value; `None` if the value has bit 7 set.
    pub const fn new(code: u8) -> Option<ControlCode> {
        if code < 0x80 {
            Some(ControlCode(code))
        } else {
            None
        }
    }

    /// The 7-bit value.
    pub const fn value(self) -> u8 {
        self.0
    }
}

/// One 66-bit block as a value: a 2-bit sync header and a 64-bit payload, both with bit 0
/// first on the wire. The sync header is kept raw (possibly invalid) because a receiver
/// must be able to hold what the line delivered.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct Block66 {
    /// Sync header, 2 bits, bit 0 first on the wire. Only the two low bits are used.
    pub sync: u8,
    /// Payload, bit 0 first on the wire.
    pub payload: u64,
}

impl Block66 {
    /// A data block carrying `payload`.
    pub const fn data(payload: u64) -> Block66 {
        Block66 {
            sync: SYNC_DATA,
            payload,
        }
    }

    /// A control block carrying `payload` (whose low octet is the block type field).
    pub const fn control(payload: u64) -> Block66 {
        Block66 {
            sync: SYNC_CONTROL,
            payload,
        }
    }

    /// The idle block: type 0x1e with eight /I/ codes.
    pub const IDLE: Block66 = Block66::control(block_type::CONTROL as u64);

    /// The error block: type 0x1e with eight /E/ codes (what a receiver substitutes for a
    /// block it cannot decode, clause 49.2.13.2.3).
    pub const ERROR: Block66 = {
        let mut p = block_type::CONTROL as u64;
        let mut i = 0;
        while i < 8 {
            p |= (ControlCode::ERROR.0 as u64) << (8 + 7 * i);
            i += 1;
        }
        Block66::control(p)
    };

    /// True for sync header `01` (data).
    pub const fn is_data(&self) -> bool {
        self.sync & 0b11 == SYNC_DATA
    }

    /// True for sync header `10` (control).
    pub const fn is_control(&self) -> bool {
        self.sync & 0b11 == SYNC_CONTROL
    }

    /// The block type field of a control block, `None` for data or invalid blocks.
    pub const fn block_type(&self) -> Option<u8> {
        if self.is_control() {
            Some(self.payload as u8)
        } else {
            None
        }
    }

    /// Serialise into the 9-octet form read by [`Block`].
    pub fn to_bytes(&self) -> [u8; 9] {
        let mut out = [0u8; 9];
        out[0] = self.sync & 0b11;
        out[1..].copy_from_slice(&self.payload.to_le_bytes());
        out
    }
}

/// A read/write view of a block in its 9-octet serialisation.
#[derive(Debug, Clone)]
pub struct Block<T: AsRef<[u8]>> {
    buffer: T,
}

/// Length of the serialised form of one block.
pub const BLOCK_BYTES: usize = 9;

impl<T: AsRef<[u8]>> Block<T> {
    /// Wrap a buffer without checking it. Accessors may return nonsense but never panic
    /// once [`Block::check_len`] has passed; prefer [`Block::new_checked`].
    pub const fn new_unchecked(buffer: T) -> Block<T> {
        Block { buffer }
    }

    /// Wrap a buffer, checking its length and the reserved bits of octet 0.
    pub fn new_checked(buffer: T) -> Result<Block<T>, WireError> {
        let b = Block::new_unchecked(buffer);
        b.check_len()?;
        if b.buffer.as_ref()[0] & !0b11 != 0 {
            return Err(WireError::Field);
        }
        Ok(b)
    }

    /// Check that the buffer is exactly [`BLOCK_BYTES`] long.
    pub fn check_len(&self) -> Result<(), WireError> {
        if self.buffer.as_ref().len() == BLOCK_BYTES {
            Ok(())
        } else {
            Err(WireError::Length)
        }
    }

    /// The raw 2-bit sync header.
    pub fn sync_header(&self) -> u8 {
        self.buffer.as_ref()[0] & 0b11
    }

    /// The 64-bit payload.
    pub fn payload(&self) -> u64 {
        let mut w = [0u8; 8];
        w.copy_from_slice(&self.buffer.as_ref()[1..9]);
        u64::from_le_bytes(w)
    }

    /// The block as a value.
    pub fn to_block66(&self) -> Block66 {
        Block66 {
            sync: self.sync_header(),
            payload: self.payload(),
        }
    }

    /// Consume the view, returning the buffer.
    pub fn into_inner(self) -> T {
        self.buffer
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Block<T> {
    /// Set the sync header (two low bits of `sync`).
    pub fn set_sync_header(&mut self, sync: u8) {
        self.buffer.as_mut()[0] = sync & 0b11;
    }

    /// Set the payload.
    pub fn set_payload(&mut self, payload: u64) {
        self.buffer.as_mut()[1..9].copy_from_slice(&payload.to_le_bytes());
    }
}

/// Little bit cursor over a payload word, LSB first, as the fields of Figure 49-7 are laid
/// out.
struct Bits {
    word: u64,
    pos: u32,
}

impl Bits {
    fn new(word: u64) -> Bits {
        Bits { word, pos: 0 }
    }
    fn take(&mut self, n: u32) -> u8 {
        if n == 0 {
            return 0;
        }
        let v = (self.word >> self.pos) & ((1u64 << n) - 1);
        self.pos += n;
        v as u8
    }
    fn put(&mut self, n: u32, v: u8) {
        if n == 0 {
            return;
        }
        self.word |= (u64::from(v) & ((1u64 << n) - 1)) << self.pos;
        self.pos += n;
    }
    fn octets<const N: usize>(&mut self) -> [u8; N] {
        let mut out = [0u8; N];
        for o in out.iter_mut() {
            *o = self.take(8);
        }
        out
    }
    fn codes<const N: usize>(&mut self) -> [ControlCode; N] {
        let mut out = [ControlCode::IDLE; N];
        for c in out.iter_mut() {
            *c = ControlCode(self.take(7));
        }
        out
    }
}

/// The meaning of a 64B/66B block (Figure 49-7), with `parse` and `emit`.
///
/// `O` fields are the 4-bit ordered-set codes (0x0 for a sequence ordered set /Q/, 0xf for
/// a signal ordered set /Fsig/); `data` fields are the data octets in lane order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BlockRepr {
    /// Eight data octets, D0..D7.
    Data([u8; 8]),
    /// Type 0x1e: eight control characters.
    Control([ControlCode; 8]),
    /// Type 0x2d: four control characters, then an ordered set in lanes 4..7.
    ControlOrderedSet {
        /// Lanes 0..3.
        codes: [ControlCode; 4],
        /// O code of the ordered set in lane 4.
        o4: u8,
        /// Lanes 5..7.
        data: [u8; 3],
    },
    /// Type 0x33: four control characters, then /S/ in lane 4 and data in lanes 5..7.
    ControlStart {
        /// Lanes 0..3.
        codes: [ControlCode; 4],
        /// Lanes 5..7.
        data: [u8; 3],
    },
    /// Type 0x66: ordered set in lanes 0..3, /S/ in lane 4.
    OrderedSetStart {
        /// O code in lane 0.
        o0: u8,
        /// Lanes 1..3.
        data0: [u8; 3],
        /// Lanes 5..7.
        data4: [u8; 3],
    },
    /// Type 0x55: two ordered sets.
    OrderedSetOrderedSet {
        /// O code in lane 0.
        o0: u8,
        /// Lanes 1..3.
        data0: [u8; 3],
        /// O code in lane 4.
        o4: u8,
        /// Lanes 5..7.
        data4: [u8; 3],
    },
    /// Type 0x78: /S/ in lane 0, data in lanes 1..7.
    Start([u8; 7]),
    /// Type 0x4b: ordered set in lanes 0..3, idles in lanes 4..7.
    OrderedSet {
        /// O code in lane 0.
        o0: u8,
        /// Lanes 1..3.
        data: [u8; 3],
    },
    /// Types 0x87..0xff: `len` data octets (0..=7), /T/ in lane `len`, then `7 - len`
    /// control characters (stored in `codes[..7 - len]`).
    Terminate {
        /// Number of data octets before /T/.
        len: u8,
        /// Data octets, only `data[..len]` meaningful.
        data: [u8; 7],
        /// Control characters after /T/, only `codes[..7 - len]` meaningful.
        codes: [ControlCode; 7],
    },
}

impl BlockRepr {
    /// Parse a block. Fails on an invalid sync header or an undefined block type field.
    pub fn parse(block: &Block66) -> Result<BlockRepr, WireError> {
        if block.is_data() {
            return Ok(BlockRepr::Data(block.payload.to_le_bytes()));
        }
        if !block.is_control() {
            return Err(WireError::SyncHeader(block.sync & 0b11));
        }
        let mut b = Bits::new(block.payload);
        let ty = b.take(8);
        use block_type::*;
        let repr = match ty {
            CONTROL => BlockRepr::Control(b.codes()),
            CONTROL_ORDERED_SET => {
                let codes = b.codes();
                let o4 = b.take(4);
                BlockRepr::ControlOrderedSet {
                    codes,
                    o4,
                    data: b.octets(),
                }
            }
            CONTROL_START => {
                let codes = b.codes();
                b.take(4);
                BlockRepr::ControlStart {
                    codes,
                    data: b.octets(),
                }
            }
            ORDERED_SET_START => {
                let data0 = b.octets();
                let o0 = b.take(4);
                b.take(4);
                BlockRepr::OrderedSetStart {
                    o0,
                    data0,
                    data4: b.octets(),
                }
            }
            ORDERED_SET_ORDERED_SET => {
                let data0 = b.octets();
                let o0 = b.take(4);
                let o4 = b.take(4);
                BlockRepr::OrderedSetOrderedSet {
                    o0,
                    data0,
                    o4,
                    data4: b.octets(),
                }
            }
            START => BlockRepr::Start(b.octets()),
            ORDERED_SET => {
                let data = b.octets();
                let o0 = b.take(4);
                BlockRepr::OrderedSet { o0, data }
            }
            t => {
                let len = TERMINATE
                    .iter()
                    .position(|&x| x == t)
                    .ok_or(WireError::BlockType(t))?;
                let mut data = [0u8; 7];
                for d in data.iter_mut().take(len) {
                    *d = b.take(8);
                }
                // The bits of the /T/ position itself are ignored on receive.
                b.take(7 - len as u32);
                let mut codes = [ControlCode::IDLE; 7];
                for c in codes.iter_mut().take(7 - len) {
                    *c = ControlCode(b.take(7));
                }
                BlockRepr::Terminate {
                    len: len as u8,
                    data,
                    codes,
                }
            }
        };
        Ok(repr)
    }

    /// Emit the block. Unused bits (the /T/ position, Z lanes, padding) are zero and
    /// out-of-range fields are masked, so emitting never fails.
    pub fn emit(&self) -> Block66 {
        use block_type::*;
        let control = |ty: u8| Bits {
            word: u64::from(ty),
            pos: 8,
        };
        let put_octets = |b: &mut Bits, d: &[u8]| d.iter().for_each(|&x| b.put(8, x));
        let put_codes = |b: &mut Bits, c: &[ControlCode]| c.iter().for_each(|&x| b.put(7, x.0));
        let b = match *self {
            BlockRepr::Data(d) => return Block66::data(u64::from_le_bytes(d)),
            BlockRepr::Control(codes) => {
                let mut b = control(CONTROL);
                put_codes(&mut b, &codes);
                b
            }
            BlockRepr::ControlOrderedSet { codes, o4, data } => {
                let mut b = control(CONTROL_ORDERED_SET);
                put_codes(&mut b, &codes);
                b.put(4, o4);
                put_octets(&mut b, &data);
                b
            }
            BlockRepr::ControlStart { codes, data } => {
                let mut b = control(CONTROL_START);
                put_codes(&mut b, &codes);
                b.put(4, 0);
                put_octets(&mut b, &data);
                b
            }
            BlockRepr::OrderedSetStart { o0, data0, data4 } => {
                let mut b = control(ORDERED_SET_START);
                put_octets(&mut b, &data0);
                b.put(4, o0);
                b.put(4, 0);
                put_octets(&mut b, &data4);
                b
            }
            BlockRepr::OrderedSetOrderedSet {
                o0,
                data0,
                o4,
                data4,
            } => {
                let mut b = control(ORDERED_SET_ORDERED_SET);
                put_octets(&mut b, &data0);
                b.put(4, o0);
                b.put(4, o4);
                put_octets(&mut b, &data4);
                b
            }
            BlockRepr::Start(d) => {
                let mut b = control(START);
                put_octets(&mut b, &d);
                b
            }
            BlockRepr::OrderedSet { o0, data } => {
                let mut b = control(ORDERED_SET);
                put_octets(&mut b, &data);
                b.put(4, o0);
                b
            }
            BlockRepr::Terminate { len, data, codes } => {
                let len = usize::from(len.min(7));
                let mut b = control(TERMINATE[len]);
                put_octets(&mut b, &data[..len]);
                b.put((7 - len) as u32, 0);
                put_codes(&mut b, &codes[..7 - len]);
                b
            }
        };
        Block66::control(b.word)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn idle_block_literal() {
        // 0x1e followed by eight 7-bit zero codes.
        assert_eq!(Block66::IDLE.payload, 0x0000_0000_0000_001e);
        assert_eq!(Block66::IDLE.to_bytes(), [1, 0x1e, 0, 0, 0, 0, 0, 0, 0]);
        assert_eq!(
            BlockRepr::parse(&Block66::IDLE),
            Ok(BlockRepr::Control([ControlCode::IDLE; 8]))
        );
    }

    #[test]
    fn error_block_literal() {
        // Eight /E/ (0x1e) codes packed 7 bits apart after the type octet.
        let mut want = 0x1eu64;
        for i in 0..8 {
            want |= 0x1e << (8 + 7 * i);
        }
        assert_eq!(Block66::ERROR.payload, want);
        assert_eq!(
            BlockRepr::parse(&Block66::ERROR),
            Ok(BlockRepr::Control([ControlCode::ERROR; 8]))
        );
    }

    #[test]
    fn start_block_carries_preamble() {
        let repr = BlockRepr::Start([0x55, 0x55, 0x55, 0x55, 0x55, 0x55, 0xd5]);
        let b = repr.emit();
        assert!(b.is_control());
        assert_eq!(b.payload, 0xd555_5555_5555_5578);
        assert_eq!(BlockRepr::parse(&b), Ok(repr));
    }

    #[test]
    fn terminate_layouts() {
        // D0 D1 T2 C3..C7: type 0xaa, two octets, 5 pad bits, five idle codes.
        let repr = BlockRepr::Terminate {
            len: 2,
            data: [0x11, 0x22, 0, 0, 0, 0, 0],
            codes: [ControlCode::IDLE; 7],
        };
        let b = repr.emit();
        assert_eq!(b.payload, 0x0000_0000_0022_11aa);
        assert_eq!(BlockRepr::parse(&b), Ok(repr));
        // T7 carries seven data octets and nothing else.
        let repr = BlockRepr::Terminate {
            len: 7,
            data: [1, 2, 3, 4, 5, 6, 7],
            codes: [ControlCode::IDLE; 7],
        };
        assert_eq!(repr.emit().payload, 0x0706_0504_0302_01ff);
    }

    #[test]
    fn ordered_set_layout() {
        // Local fault sequence ordered set: /Q/ 0x00 0x00 0x01, O code 0.
        let repr = BlockRepr::OrderedSet {
            o0: 0,
            data: [0, 0, 1],
        };
        assert_eq!(repr.emit().payload, 0x0000_0000_0100_004b);
        assert_eq!(BlockRepr::parse(&repr.emit()), Ok(repr));
    }

    #[test]
    fn invalid_inputs_are_errors() {
        let bad_sync = Block66 {
            sync: 0b11,
            payload: 0,
        };
        assert_eq!(BlockRepr::parse(&bad_sync), Err(WireError::SyncHeader(3)));
        assert_eq!(
            BlockRepr::parse(&Block66::control(0x12)),
            Err(WireError::BlockType(0x12))
        );
        assert_eq!(
            Block::new_checked(&[0u8; 8][..]).err(),
            Some(WireError::Length)
        );
        assert_eq!(
            Block::new_checked(&[4u8, 0, 0, 0, 0, 0, 0, 0, 0][..]).err(),
            Some(WireError::Field)
        );
    }

    #[test]
    fn view_round_trip() {
        let b = Block66::data(0x0123_4567_89ab_cdef);
        let bytes = b.to_bytes();
        let view = Block::new_checked(&bytes[..]).expect("valid");
        assert_eq!(view.sync_header(), SYNC_DATA);
        assert_eq!(view.to_block66(), b);
        let mut buf = [0u8; 9];
        let mut w = Block::new_unchecked(&mut buf[..]);
        w.set_sync_header(SYNC_CONTROL);
        w.set_payload(0x1e);
        assert_eq!(w.to_block66(), Block66::IDLE);
    }
}
