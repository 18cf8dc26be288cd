//! XGMII characters and the column <-> block mapping of IEEE 802.3 clause 49.2.4.
//!
//! Table 49-1 maps the XGMII control characters to the 7-bit codes carried in control
//! blocks; /S/, /T/ and the ordered-set characters are not carried as codes but implied by
//! the block type field.

use crate::wire::block::{Block66, BlockRepr, ControlCode};

/// One XGMII lane: a data octet or a control character (its 8-bit XGMII value).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Xgmii {
    /// A data octet (TXC = 0).
    Data(u8),
    /// A control character (TXC = 1).
    Control(u8),
}

/// Eight lanes, lane 0 first.
pub type Column = [Xgmii; 8];

/// XGMII control characters (Table 46-3 / 49-1).
pub mod ctrl {
    /// /I/ idle.
    pub const IDLE: u8 = 0x07;
    /// Low-power idle.
    pub const LPI: u8 = 0x06;
    /// /S/ start.
    pub const START: u8 = 0xfb;
    /// /T/ terminate.
    pub const TERMINATE: u8 = 0xfd;
    /// /E/ error.
    pub const ERROR: u8 = 0xfe;
    /// /Q/ sequence ordered set.
    pub const SEQUENCE: u8 = 0x9c;
    /// /Fsig/ signal ordered set.
    pub const SIGNAL: u8 = 0x5c;
}

/// (XGMII character, 7-bit block code) pairs of Table 49-1.
const CODE_TABLE: [(u8, u8); 9] = [
    (ctrl::IDLE, 0x00),
    (ctrl::LPI, 0x06),
    (ctrl::ERROR, 0x1e),
    (0x1c, 0x2d),
    (0x3c, 0x33),
    (0x7c, 0x4b),
    (0xbc, 0x55),
    (0xdc, 0x66),
    (0xf7, 0x78),
];

fn to_code(c: Xgmii) -> Option<ControlCode> {
    match c {
        Xgmii::Control(x) => CODE_TABLE
            .iter()
            .find(|(ch, _)| *ch == x)
            .and_then(|(_, code)| ControlCode::new(*code)),
        Xgmii::Data(_) => None,
    }
}

fn from_code(code: ControlCode) -> Xgmii {
    let ch = CODE_TABLE
        .iter()
        .find(|(_, c)| *c == code.value())
        .map_or(ctrl::ERROR, |(ch, _)| *ch);
    Xgmii::Control(ch)
}

fn to_o_code(c: Xgmii) -> Option<u8> {
    match c {
        Xgmii::Control(ctrl::SEQUENCE) => Some(0x0),
        Xgmii::Control(ctrl::SIGNAL) => Some(0xf),
        _ => None,
    }
}

fn from_o_code(o: u8) -> Xgmii {
    match o {
        0x0 => Xgmii::Control(ctrl::SEQUENCE),
        0xf => Xgmii::Control(ctrl::SIGNAL),
        _ => Xgmii::Control(ctrl::ERROR),
    }
}

fn data<const N: usize>(lanes: &[Xgmii]) -> Option<[u8; N]> {
    let mut out = [0u8; N];
    if lanes.len() != N {
        return None;
    }
    for (o, l) in out.iter_mut().zip(lanes) {
        match l {
            Xgmii::Data(d) => *o = *d,
            Xgmii::Control(_) => return None,
        }
    }
    Some(out)
}

fn codes<const N: usize>(lanes: &[Xgmii]) -> Option<[ControlCode; N]> {
    let mut out = [ControlCode::IDLE; N];
    if lanes.len() != N {
        return None;
    }
    for (o, l) in out.iter_mut().zip(lanes) {
        *o = to_code(*l)?;
    }
    Some(out)
}

/// Encode one column into a block (the transmit encoder of clause 49.2.13.2.3). A column
/// that no block type can carry becomes the error block, as the standard requires.
pub fn encode_column(col: &Column) -> Block66 {
    encode_repr(col).map_or(Block66::ERROR, |r| r.emit())
}

fn encode_repr(col: &Column) -> Option<BlockRepr> {
    if let Some(d) = data::<8>(col) {
        return Some(BlockRepr::Data(d));
    }
    let is = |c: Xgmii, x: u8| c == Xgmii::Control(x);
    if is(col[0], ctrl::START) {
        return data::<7>(&col[1..]).map(BlockRepr::Start);
    }
    if let Some(o0) = to_o_code(col[0]) {
        let data0 = data::<3>(&col[1..4])?;
        if col[4..].iter().all(|&c| is(c, ctrl::IDLE)) {
            return Some(BlockRepr::OrderedSet { o0, data: data0 });
        }
        let data4 = data::<3>(&col[5..])?;
        if is(col[4], ctrl::START) {
            return Some(BlockRepr::OrderedSetStart { o0, data0, data4 });
        }
        let o4 = to_o_code(col[4])?;
        return Some(BlockRepr::OrderedSetOrderedSet {
            o0,
            data0,
            o4,
            data4,
        });
    }
    if let Some(t) = col.iter().position(|&c| is(c, ctrl::TERMINATE)) {
        let mut d = [0u8; 7];
        for (o, l) in d.iter_mut().zip(&col[..t]) {
            match l {
                Xgmii::Data(x) => *o = *x,
                Xgmii::Control(_) => return None,
            }
        }
        let mut c = [ControlCode::IDLE; 7];
        for (o, l) in c.iter_mut().zip(&col[t + 1..]) {
            *o = to_code(*l)?;
        }
        return Some(BlockRepr::Terminate {
            len: t as u8,
            data: d,
            codes: c,
        });
    }
    let first = codes::<4>(&col[..4])?;
    if let Some(rest) = codes::<4>(&col[4..]) {
        let mut all = [ControlCode::IDLE; 8];
        all[..4].copy_from_slice(&first);
        all[4..].copy_from_slice(&rest);
        return Some(BlockRepr::Control(all));
    }
    let d = data::<3>(&col[5..])?;
    if is(col[4], ctrl::START) {
        return Some(BlockRepr::ControlStart {
            codes: first,
            data: d,
        });
    }
    to_o_code(col[4]).map(|o4| BlockRepr::ControlOrderedSet {
        codes: first,
        o4,
        data: d,
    })
}

/// Decode one block into a column (the receive decoder of clause 49.2.13.2.3). A block
/// with an invalid sync header or block type becomes a column of /E/.
pub fn decode_block(block: &Block66) -> Column {
    let mut col = [Xgmii::Control(ctrl::ERROR); 8];
    let Ok(repr) = BlockRepr::parse(block) else {
        return col;
    };
    let put_data = |col: &mut Column, at: usize, d: &[u8]| {
        for (i, &x) in d.iter().enumerate() {
            col[at + i] = Xgmii::Data(x);
        }
    };
    let put_codes = |col: &mut Column, at: usize, c: &[ControlCode]| {
        for (i, &x) in c.iter().enumerate() {
            col[at + i] = from_code(x);
        }
    };
    match repr {
        BlockRepr::Data(d) => put_data(&mut col, 0, &d),
        BlockRepr::Control(c) => put_codes(&mut col, 0, &c),
        BlockRepr::ControlOrderedSet { codes, o4, data } => {
            put_codes(&mut col, 0, &codes);
            col[4] = from_o_code(o4);
            put_data(&mut col, 5, &data);
        }
        BlockRepr::ControlStart { codes, data } => {
            put_codes(&mut col, 0, &codes);
            col[4] = Xgmii::Control(ctrl::START);
            put_data(&mut col, 5, &data);
        }
        BlockRepr::OrderedSetStart { o0, data0, data4 } => {
            col[0] = from_o_code(o0);
            put_data(&mut col, 1, &data0);
            col[4] = Xgmii::Control(ctrl::START);
            put_data(&mut col, 5, &data4);
        }
        BlockRepr::OrderedSetOrderedSet {
            o0,
            data0,
            o4,
            data4,
        } => {
            col[0] = from_o_code(o0);
            put_data(&mut col, 1, &data0);
            col[4] = from_o_code(o4);
            put_data(&mut col, 5, &data4);
        }
        BlockRepr::Start(d) => {
            col[0] = Xgmii::Control(ctrl::START);
            put_data(&mut col, 1, &d);
        }
        BlockRepr::OrderedSet { o0, data } => {
            col[0] = from_o_code(o0);
            put_data(&mut col, 1, &data);
            put_codes(&mut col, 4, &[ControlCode::IDLE; 4]);
        }
        BlockRepr::Terminate { len, data, codes } => {
            let len = usize::from(len);
            put_data(&mut col, 0, &data[..len]);
            col[len] = Xgmii::Control(ctrl::TERMINATE);
            put_codes(&mut col, len + 1, &codes[..7 - len]);
        }
    }
    col
}

#[cfg(test)]
mod tests {
    use super::*;
    use Xgmii::{Control as C, Data as D};

    #[test]
    fn every_block_type_round_trips_through_columns() {
        let i = C(ctrl::IDLE);
        let cols: [Column; 9] = [
            [D(1), D(2), D(3), D(4), D(5), D(6), D(7), D(8)],
            [i; 8],
            [i, i, i, i, C(ctrl::SEQUENCE), D(0), D(0), D(1)],
            [i, i, i, i, C(ctrl::START), D(0x55), D(0x55), D(0x55)],
            [
                C(ctrl::SEQUENCE),
                D(0),
                D(0),
                D(2),
                C(ctrl::START),
                D(0x55),
                D(0x55),
                D(0x55),
            ],
            [
                C(ctrl::SEQUENCE),
                D(0),
                D(0),
                D(1),
                C(ctrl::SIGNAL),
                D(9),
                D(8),
                D(7),
            ],
            [
                C(ctrl::START),
                D(0x55),
                D(0x55),
                D(0x55),
                D(0x55),
                D(0x55),
                D(0x55),
                D(0xd5),
            ],
            [C(ctrl::SEQUENCE), D(0), D(0), D(1), i, i, i, i],
            [D(0xaa), D(0xbb), D(0xcc), C(ctrl::TERMINATE), i, i, i, i],
        ];
        let types = [
            None,
            Some(0x1e),
            Some(0x2d),
            Some(0x33),
            Some(0x66),
            Some(0x55),
            Some(0x78),
            Some(0x4b),
            Some(0xb4),
        ];
        for (col, ty) in cols.iter().zip(types) {
            let b = encode_column(col);
            assert_eq!(b.block_type(), ty, "{col:?}");
            assert_eq!(&decode_block(&b), col);
        }
    }

    #[test]
    fn unencodable_column_is_error_block() {
        let col = [
            C(ctrl::IDLE),
            D(1),
            C(ctrl::IDLE),
            D(2),
            D(3),
            D(4),
            D(5),
            D(6),
        ];
        assert_eq!(encode_column(&col), Block66::ERROR);
        assert_eq!(decode_block(&Block66::control(0x00)), [C(ctrl::ERROR); 8]);
    }
}
