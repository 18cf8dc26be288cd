//! No congestion control: the sender always paces at its NIC's line rate and relies on
//! PFC (or loss and go-back-N) alone.

use super::{AnyCc, BaseRtt, CcEntry, CongestionControl};

/// Constant rate.
#[derive(Clone, Debug)]
pub struct LineRate {
    /// The NIC's line rate in bits per second.
    pub bps: f64,
}

impl CongestionControl for LineRate {
    fn rate_bps(&self) -> f64 {
        self.bps
    }
}

/// `none`: every flow sends at its NIC's line rate.
pub static ENTRY: CcEntry = CcEntry {
    name: "none",
    about: "no congestion control: send at line rate, rely on PFC (or loss and go-back-N)",
    section: None,
    reads_cnp: false,
    reads_int: false,
    reads_tcd: false,
    base_rtt: BaseRtt::Unused,
    params: |_, _| Vec::new(),
    build: |_, ctx| {
        AnyCc::LineRate(LineRate {
            bps: ctx.line.0 as f64,
        })
    },
    validate: |_| Ok(()),
    #[cfg(test)]
    check_fields: || {},
};
