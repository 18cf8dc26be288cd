//! A columnar sink for the output tables: the same row structs that write the CSV files
//! ([`super::cells::CsvOut`]) fill typed columns instead, for callers that want data
//! rather than text (the Python package turns them into Arrow arrays and pandas
//! DataFrames).
//!
//! One source of truth: a table's `write` function does not know which sink it fills.
//! The header is the same list of names, a row the same serde value; this serializer
//! walks a row (a struct, or a tuple of structs and sequences, flattened left to right as
//! the `csv` crate does) and appends each cell to the next column.
//!
//! Cells are numbers here, not text: this serializer says it is not human-readable, and
//! [`super::cells::Fixed`] and [`super::cells::Ns`] then serialize as `f64` (times in
//! nanoseconds) instead of their fixed-decimal strings. `None` is a null.
//!
//! Column types come from the values (see [`ColumnData`]): integers stay integers
//! (signed or unsigned), anything with a float is `Float64`, strings are `Utf8`, and a
//! column with only nulls is `Float64` (every optional cell of the tables is a number).

use serde::ser::{self, Serialize, Serializer};
use std::fmt;

/// One cell as serialized.
#[derive(Clone, Debug, PartialEq)]
enum Cell {
    Null,
    I64(i64),
    U64(u64),
    F64(f64),
    Str(String),
    Bool(bool),
}

/// The values of one column, typed.
#[derive(Clone, Debug, PartialEq)]
pub enum ColumnData {
    /// Signed integers (and unsigned ones mixed with them, when they fit).
    Int64(Vec<Option<i64>>),
    /// Unsigned integers (counters, ids, sizes).
    UInt64(Vec<Option<u64>>),
    /// Floats: fixed-decimal figures, times in nanoseconds, all-null columns.
    Float64(Vec<Option<f64>>),
    /// Text.
    Utf8(Vec<Option<String>>),
    /// Booleans.
    Bool(Vec<Option<bool>>),
}

impl ColumnData {
    /// Number of rows.
    pub fn len(&self) -> usize {
        match self {
            ColumnData::Int64(v) => v.len(),
            ColumnData::UInt64(v) => v.len(),
            ColumnData::Float64(v) => v.len(),
            ColumnData::Utf8(v) => v.len(),
            ColumnData::Bool(v) => v.len(),
        }
    }

    /// No rows.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A named, typed column.
#[derive(Clone, Debug, PartialEq)]
pub struct Column {
    /// The column's name: the CSV header cell.
    pub name: String,
    /// Its values, one per row.
    pub data: ColumnData,
}

/// A row that does not fit the table (a bug in a table's `write`).
#[derive(Debug)]
pub struct ColumnsError(String);

impl fmt::Display for ColumnsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ColumnsError {}

impl ser::Error for ColumnsError {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        ColumnsError(msg.to_string())
    }
}

/// A table being collected as columns: a header, then rows of the same width.
#[derive(Debug, Default)]
pub struct Columns {
    names: Vec<String>,
    cells: Vec<Vec<Cell>>,
}

impl Columns {
    /// An empty table.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the column names (once, before the rows).
    pub fn header<I, S>(&mut self, names: I) -> Result<(), ColumnsError>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<[u8]>,
    {
        if !self.names.is_empty() {
            return Err(ColumnsError("a second header row".into()));
        }
        for n in names {
            let n = std::str::from_utf8(n.as_ref())
                .map_err(|e| ColumnsError(format!("column name is not UTF-8: {e}")))?;
            self.names.push(n.to_string());
            self.cells.push(Vec::new());
        }
        Ok(())
    }

    /// Appends one row; it must have one cell per column.
    pub fn row<R: Serialize + ?Sized>(&mut self, row: &R) -> Result<(), ColumnsError> {
        let rows = self.rows();
        let mut w = RowSer {
            cols: &mut self.cells,
            next: 0,
        };
        let res = row.serialize(&mut w).and_then(|()| {
            if w.next == w.cols.len() {
                Ok(())
            } else {
                Err(ColumnsError(format!(
                    "a row of {} cells in a table of {} columns",
                    w.next,
                    w.cols.len()
                )))
            }
        });
        if res.is_err() {
            // Keep every column the same length: drop the partial row.
            for c in &mut self.cells {
                c.truncate(rows);
            }
        }
        res
    }

    /// Rows so far.
    pub fn rows(&self) -> usize {
        self.cells.first().map_or(0, Vec::len)
    }

    /// The typed columns, in header order.
    pub fn finish(self) -> Vec<Column> {
        self.names
            .into_iter()
            .zip(self.cells)
            .map(|(name, cells)| Column {
                name,
                data: typed(cells),
            })
            .collect()
    }
}

/// The type a column's cells share (see the module documentation).
fn typed(cells: Vec<Cell>) -> ColumnData {
    let (mut f, mut i, mut u, mut s, mut b, mut big) = (false, false, false, false, false, false);
    for c in &cells {
        match c {
            Cell::Null => {}
            Cell::I64(_) => i = true,
            Cell::U64(v) => {
                u = true;
                big |= *v > i64::MAX as u64;
            }
            Cell::F64(_) => f = true,
            Cell::Str(_) => s = true,
            Cell::Bool(_) => b = true,
        }
    }
    let numbers = f || i || u;
    if s || (b && numbers) {
        // Mixed kinds cannot come from one row struct field; text keeps every value.
        return ColumnData::Utf8(
            cells
                .into_iter()
                .map(|c| match c {
                    Cell::Null => None,
                    Cell::I64(v) => Some(v.to_string()),
                    Cell::U64(v) => Some(v.to_string()),
                    Cell::F64(v) => Some(v.to_string()),
                    Cell::Str(v) => Some(v),
                    Cell::Bool(v) => Some(v.to_string()),
                })
                .collect(),
        );
    }
    if b {
        return ColumnData::Bool(
            cells
                .into_iter()
                .map(|c| match c {
                    Cell::Bool(v) => Some(v),
                    _ => None,
                })
                .collect(),
        );
    }
    let num = |c: &Cell| match *c {
        Cell::I64(v) => Some(v as f64),
        Cell::U64(v) => Some(v as f64),
        Cell::F64(v) => Some(v),
        _ => None,
    };
    if f || !numbers || (i && big) {
        return ColumnData::Float64(cells.iter().map(num).collect());
    }
    if i {
        return ColumnData::Int64(
            cells
                .iter()
                .map(|c| match *c {
                    Cell::I64(v) => Some(v),
                    // `big` is false: every unsigned value fits.
                    Cell::U64(v) => Some(v as i64),
                    _ => None,
                })
                .collect(),
        );
    }
    ColumnData::UInt64(
        cells
            .iter()
            .map(|c| match *c {
                Cell::U64(v) => Some(v),
                _ => None,
            })
            .collect(),
    )
}

/// Serializes one row: each scalar goes to the next column.
struct RowSer<'a> {
    cols: &'a mut Vec<Vec<Cell>>,
    next: usize,
}

impl RowSer<'_> {
    fn push(&mut self, c: Cell) -> Result<(), ColumnsError> {
        let n = self.cols.len();
        let col = self
            .cols
            .get_mut(self.next)
            .ok_or_else(|| ColumnsError(format!("a row wider than the table's {n} columns")))?;
        col.push(c);
        self.next += 1;
        Ok(())
    }
}

fn unsupported(what: &str) -> ColumnsError {
    ColumnsError(format!("a table cell cannot be {what}"))
}

impl<'a> Serializer for &mut RowSer<'a> {
    type Ok = ();
    type Error = ColumnsError;
    type SerializeSeq = Self;
    type SerializeTuple = Self;
    type SerializeTupleStruct = Self;
    type SerializeTupleVariant = ser::Impossible<(), ColumnsError>;
    type SerializeMap = ser::Impossible<(), ColumnsError>;
    type SerializeStruct = Self;
    type SerializeStructVariant = ser::Impossible<(), ColumnsError>;

    /// Numbers, not text: see the module documentation.
    fn is_human_readable(&self) -> bool {
        false
    }

    fn serialize_bool(self, v: bool) -> Result<(), ColumnsError> {
        self.push(Cell::Bool(v))
    }
    fn serialize_i8(self, v: i8) -> Result<(), ColumnsError> {
        self.push(Cell::I64(v.into()))
    }
    fn serialize_i16(self, v: i16) -> Result<(), ColumnsError> {
        self.push(Cell::I64(v.into()))
    }
    fn serialize_i32(self, v: i32) -> Result<(), ColumnsError> {
        self.push(Cell::I64(v.into()))
    }
    fn serialize_i64(self, v: i64) -> Result<(), ColumnsError> {
        self.push(Cell::I64(v))
    }
    fn serialize_u8(self, v: u8) -> Result<(), ColumnsError> {
        self.push(Cell::U64(v.into()))
    }
    fn serialize_u16(self, v: u16) -> Result<(), ColumnsError> {
        self.push(Cell::U64(v.into()))
    }
    fn serialize_u32(self, v: u32) -> Result<(), ColumnsError> {
        self.push(Cell::U64(v.into()))
    }
    fn serialize_u64(self, v: u64) -> Result<(), ColumnsError> {
        self.push(Cell::U64(v))
    }
    fn serialize_f32(self, v: f32) -> Result<(), ColumnsError> {
        self.push(Cell::F64(v.into()))
    }
    fn serialize_f64(self, v: f64) -> Result<(), ColumnsError> {
        self.push(Cell::F64(v))
    }
    fn serialize_char(self, v: char) -> Result<(), ColumnsError> {
        self.push(Cell::Str(v.to_string()))
    }
    fn serialize_str(self, v: &str) -> Result<(), ColumnsError> {
        self.push(Cell::Str(v.to_string()))
    }
    fn serialize_bytes(self, _: &[u8]) -> Result<(), ColumnsError> {
        Err(unsupported("bytes"))
    }
    fn serialize_none(self) -> Result<(), ColumnsError> {
        self.push(Cell::Null)
    }
    fn serialize_some<T: Serialize + ?Sized>(self, v: &T) -> Result<(), ColumnsError> {
        v.serialize(self)
    }
    // `csv` writes a unit as an empty cell.
    fn serialize_unit(self) -> Result<(), ColumnsError> {
        self.push(Cell::Null)
    }
    fn serialize_unit_struct(self, _: &'static str) -> Result<(), ColumnsError> {
        self.push(Cell::Null)
    }
    fn serialize_unit_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
    ) -> Result<(), ColumnsError> {
        self.push(Cell::Str(variant.to_string()))
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        v: &T,
    ) -> Result<(), ColumnsError> {
        v.serialize(self)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: &T,
    ) -> Result<(), ColumnsError> {
        Err(unsupported("an enum with data"))
    }
    fn serialize_seq(self, _: Option<usize>) -> Result<Self, ColumnsError> {
        Ok(self)
    }
    fn serialize_tuple(self, _: usize) -> Result<Self, ColumnsError> {
        Ok(self)
    }
    fn serialize_tuple_struct(self, _: &'static str, _: usize) -> Result<Self, ColumnsError> {
        Ok(self)
    }
    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleVariant, ColumnsError> {
        Err(unsupported("an enum with data"))
    }
    fn serialize_map(self, _: Option<usize>) -> Result<Self::SerializeMap, ColumnsError> {
        Err(unsupported("a map"))
    }
    fn serialize_struct(self, _: &'static str, _: usize) -> Result<Self, ColumnsError> {
        Ok(self)
    }
    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeStructVariant, ColumnsError> {
        Err(unsupported("an enum with data"))
    }
}

impl<'a> ser::SerializeSeq for &mut RowSer<'a> {
    type Ok = ();
    type Error = ColumnsError;
    fn serialize_element<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<(), ColumnsError> {
        v.serialize(&mut **self)
    }
    fn end(self) -> Result<(), ColumnsError> {
        Ok(())
    }
}

impl<'a> ser::SerializeTuple for &mut RowSer<'a> {
    type Ok = ();
    type Error = ColumnsError;
    fn serialize_element<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<(), ColumnsError> {
        v.serialize(&mut **self)
    }
    fn end(self) -> Result<(), ColumnsError> {
        Ok(())
    }
}

impl<'a> ser::SerializeTupleStruct for &mut RowSer<'a> {
    type Ok = ();
    type Error = ColumnsError;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<(), ColumnsError> {
        v.serialize(&mut **self)
    }
    fn end(self) -> Result<(), ColumnsError> {
        Ok(())
    }
}

impl<'a> ser::SerializeStruct for &mut RowSer<'a> {
    type Ok = ();
    type Error = ColumnsError;
    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        _: &'static str,
        v: &T,
    ) -> Result<(), ColumnsError> {
        v.serialize(&mut **self)
    }
    fn end(self) -> Result<(), ColumnsError> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::super::cells::{Fixed, Ns};
    use super::*;
    use serde::Serialize;

    #[derive(Default, Serialize)]
    struct Row {
        name: String,
        t_ns: Ns,
        x: Option<Fixed<3>>,
        n: u64,
        d: i32,
    }

    #[test]
    fn cells_become_typed_columns_with_nulls_and_numbers() {
        let mut c = Columns::new();
        c.header(["name", "t_ns", "x", "n", "d"]).unwrap();
        c.row(&Row {
            name: "a,b".into(),
            t_ns: Ns(1_500),
            x: Some(Fixed(0.5)),
            n: 7,
            d: -2,
        })
        .unwrap();
        c.row(&Row::default()).unwrap();
        let cols = c.finish();
        let names: Vec<&str> = cols.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["name", "t_ns", "x", "n", "d"]);
        assert_eq!(
            cols[0].data,
            ColumnData::Utf8(vec![Some("a,b".into()), Some(String::new())])
        );
        // Picoseconds become exact nanoseconds as floats, not "1.500".
        assert_eq!(
            cols[1].data,
            ColumnData::Float64(vec![Some(1.5), Some(0.0)])
        );
        assert_eq!(cols[2].data, ColumnData::Float64(vec![Some(0.5), None]));
        assert_eq!(cols[3].data, ColumnData::UInt64(vec![Some(7), Some(0)]));
        assert_eq!(cols[4].data, ColumnData::Int64(vec![Some(-2), Some(0)]));
    }

    #[test]
    fn tuples_flatten_and_a_row_of_another_width_is_refused() {
        let mut c = Columns::new();
        c.header(["a", "b", "c"]).unwrap();
        c.row(&(("x",), vec![1u32, 2])).unwrap();
        assert!(c.row(&("x", "y")).is_err());
        assert!(c.row(&("x", "y", "z", "w")).is_err());
        // The refused rows left nothing behind.
        assert_eq!(c.rows(), 1);
        let cols = c.finish();
        assert_eq!(cols[1].data, ColumnData::UInt64(vec![Some(1)]));
        assert_eq!(cols[2].data.len(), 1);
    }

    #[test]
    fn an_all_null_column_is_float_and_mixed_integers_are_signed() {
        let mut c = Columns::new();
        c.header(["none", "mixed"]).unwrap();
        c.row(&(None::<u64>, 3u64)).unwrap();
        c.row(&(None::<u64>, -1i64)).unwrap();
        let cols = c.finish();
        assert_eq!(cols[0].data, ColumnData::Float64(vec![None, None]));
        assert_eq!(cols[1].data, ColumnData::Int64(vec![Some(3), Some(-1)]));
    }
}
