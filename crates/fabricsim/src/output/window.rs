//! `window.csv`: goodput of chosen flows and queues of chosen ports over a time window
//! (`[record.window]`; the analysis is [`crate::analysis::window`]).

use super::cells::{CsvOut, Fixed};
use super::{RunData, Scope, Table};
use serde::Serialize;

/// The table's entry in [`super::TABLES`].
pub const TABLE: Table = Table {
    file: "window.csv",
    about: "mean goodput of the chosen flows and mean and max queue of the chosen ports \
            over the window (`[record.window]`)",
    scope: Scope::Run {
        present: |r| r.summary.window.is_some(),
        write,
    },
};

#[derive(Default, Serialize)]
struct WindowRow<'a> {
    /// `flow <id>` or the port's name.
    what: &'a str,
    goodput_gbps: Option<Fixed<4>>,
    mean_queue_bytes: Option<Fixed<1>>,
    max_queue_bytes: Option<u64>,
    from_ns: Fixed<3>,
    to_ns: Fixed<3>,
}

fn write(r: &RunData, out: &mut CsvOut) -> csv::Result<()> {
    let Some(w) = &r.summary.window else {
        return Ok(());
    };
    out.table(w.rows.iter().map(|x| WindowRow {
        what: &x.what,
        goodput_gbps: x.goodput_gbps.map(Fixed),
        mean_queue_bytes: x.mean_queue_bytes.map(Fixed),
        max_queue_bytes: x.max_queue_bytes,
        from_ns: Fixed(w.from_ns),
        to_ns: Fixed(w.to_ns),
    }))
}
