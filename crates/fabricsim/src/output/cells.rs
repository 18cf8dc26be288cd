//! CSV writing shared by every table: a writer that quotes what needs quoting (the `csv`
//! crate, RFC 4180 quoting with `\n` line ends), headers taken from a row struct's field
//! names, and cell types that print numbers exactly as the tables always have.
//!
//! Why cell types: serde hands an `f64` to the `csv` crate, which prints the shortest
//! round-trip form (`1.0`, `0.1`), while the tables print a fixed number of decimals
//! (`{:.3}`) and times as exact picoseconds-in-nanoseconds (`1.500`). [`Fixed`] and [`Ns`]
//! carry that format in the row struct's type, so a row is data, not a format string.

use super::columns::Columns;
use crate::base::units::Time;
use serde::{Serialize, Serializer};
use std::fmt;
use std::io::Write;

/// A number printed with exactly `D` decimals (`format!("{:.D}")`; NaN prints `NaN`).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Fixed<const D: usize>(pub f64);

impl<const D: usize> fmt::Display for Fixed<D> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:.*}", D, self.0)
    }
}

impl<const D: usize> Serialize for Fixed<D> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        // Text for the CSV files; the number itself for a sink of data
        // ([`super::columns`]).
        if s.is_human_readable() {
            s.collect_str(self)
        } else {
            s.serialize_f64(self.0)
        }
    }
}

/// `Some(Fixed(v))` when `v` is finite: an undefined value (no finished flow) is an
/// empty cell rather than `NaN`.
pub fn finite<const D: usize>(v: f64) -> Option<Fixed<D>> {
    v.is_finite().then_some(Fixed(v))
}

/// A simulated time in picoseconds, printed in nanoseconds with three decimals, exactly
/// (`1500` ps is `1.500`): no float rounding.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Ns(pub Time);

impl fmt::Display for Ns {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{:03}", self.0 / 1000, self.0 % 1000)
    }
}

impl Serialize for Ns {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        // As for `Fixed`: a sink of data gets nanoseconds as a float (exact to the
        // picosecond up to about 100 days of simulated time).
        if s.is_human_readable() {
            s.collect_str(self)
        } else {
            s.serialize_f64(self.0 as f64 / 1000.0)
        }
    }
}

/// The header of row struct `R`: its field names (after `#[serde(rename)]`), in order.
///
/// Taken by letting the `csv` crate write `R::default()` with headers and reading the
/// header line back, so it is exactly the header `csv` itself would derive. `R` must be a
/// flat struct of cells (no nested structs or sequences).
pub fn header_of<R: Serialize + Default>() -> csv::Result<Vec<String>> {
    let mut w = csv::WriterBuilder::new()
        .has_headers(true)
        .from_writer(Vec::new());
    w.serialize(R::default())?;
    let bytes = w.into_inner().map_err(|e| e.into_error())?;
    let mut r = csv::ReaderBuilder::new()
        .has_headers(false)
        .from_reader(bytes.as_slice());
    let mut rec = csv::StringRecord::new();
    r.read_record(&mut rec)?;
    Ok(rec.iter().map(str::to_string).collect())
}

/// A table being written: a header, then rows of the same width (the `csv` writer and
/// [`Columns`] refuse a row of another width, so a header and its rows cannot drift
/// apart). As CSV text (`new`), or as typed columns (`columns`): a table's `write`
/// function fills either, so the files and the data a program gets cannot differ.
pub struct CsvOut<'a> {
    sink: Sink<'a>,
}

// One `Sink` per table written, on the stack: its size does not matter.
#[allow(clippy::large_enum_variant)]
enum Sink<'a> {
    Csv(csv::Writer<&'a mut dyn Write>),
    Columns(&'a mut Columns),
}

/// A column sink's error as the table writers' error type (it means a bug in a table).
fn columns_error(e: super::columns::ColumnsError) -> csv::Error {
    csv::Error::from(std::io::Error::other(e))
}

impl<'a> CsvOut<'a> {
    /// A table written to `w` as CSV.
    pub fn new(w: &'a mut dyn Write) -> Self {
        CsvOut {
            sink: Sink::Csv(csv::WriterBuilder::new().has_headers(false).from_writer(w)),
        }
    }

    /// A table collected into `cols` as typed columns.
    pub fn columns(cols: &'a mut Columns) -> Self {
        CsvOut {
            sink: Sink::Columns(cols),
        }
    }

    /// Writes a header row of the given names (tables whose columns depend on the run,
    /// such as one column per sweep axis).
    pub fn header<I, S>(&mut self, names: I) -> csv::Result<()>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<[u8]>,
    {
        match &mut self.sink {
            Sink::Csv(w) => w.write_record(names),
            Sink::Columns(c) => c.header(names).map_err(columns_error),
        }
    }

    /// Writes one row: a struct's fields in order, or a tuple of structs and sequences
    /// flattened left to right.
    pub fn row<R: Serialize>(&mut self, row: &R) -> csv::Result<()> {
        match &mut self.sink {
            Sink::Csv(w) => w.serialize(row),
            Sink::Columns(c) => c.row(row).map_err(columns_error),
        }
    }

    /// Writes a whole table of row struct `R`: the header from `R`'s field names, then
    /// the rows.
    pub fn table<R, I>(&mut self, rows: I) -> csv::Result<()>
    where
        R: Serialize + Default,
        I: IntoIterator<Item = R>,
    {
        self.header(header_of::<R>()?)?;
        for r in rows {
            self.row(&r)?;
        }
        Ok(())
    }

    /// Flushes the rows to the underlying writer (the `csv` writer buffers, and an error
    /// while flushing on drop would be lost).
    pub fn finish(mut self) -> csv::Result<()> {
        if let Sink::Csv(w) = &mut self.sink {
            w.flush()?;
        }
        Ok(())
    }
}

/// Renders a table into a string (for tests and callers that compare tables in memory).
pub fn render(write: impl FnOnce(&mut CsvOut) -> csv::Result<()>) -> csv::Result<String> {
    let mut buf: Vec<u8> = Vec::new();
    {
        let mut out = CsvOut::new(&mut buf);
        write(&mut out)?;
        out.finish()?;
    }
    // Every cell came from a `str` or a number, so the bytes are UTF-8.
    String::from_utf8(buf)
        .map_err(|e| csv::Error::from(std::io::Error::new(std::io::ErrorKind::InvalidData, e)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Default, Serialize)]
    struct Row {
        name: String,
        #[serde(rename = "t_ns")]
        t: Ns,
        x: Option<Fixed<3>>,
        n: u64,
    }

    #[test]
    fn cells_print_as_the_tables_always_did() {
        assert_eq!(Ns(1_500).to_string(), "1.500");
        assert_eq!(Ns(12_345_678).to_string(), "12345.678");
        assert_eq!(Fixed::<3>(1.0).to_string(), format!("{:.3}", 1.0));
        assert_eq!(Fixed::<1>(f64::NAN).to_string(), "NaN");
        assert_eq!(finite::<6>(f64::INFINITY), None);
    }

    #[test]
    fn header_comes_from_the_field_names_and_cells_are_quoted() {
        assert_eq!(header_of::<Row>().unwrap(), ["name", "t_ns", "x", "n"]);
        let s = render(|o| {
            o.table([
                Row {
                    name: "a,\"b\"".into(),
                    t: Ns(2_000),
                    x: Some(Fixed(0.5)),
                    n: 7,
                },
                Row::default(),
            ])
        })
        .unwrap();
        assert_eq!(
            s,
            "name,t_ns,x,n\n\"a,\"\"b\"\"\",2.000,0.500,7\n,0.000,,0\n"
        );
    }

    #[test]
    fn a_row_of_another_width_is_refused() {
        let e = render(|o| {
            o.header(["a", "b"])?;
            o.row(&("x", "y", "z"))
        });
        assert!(e.is_err());
    }
}
