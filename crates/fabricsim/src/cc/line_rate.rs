//! No congestion control: the sender always paces at its NIC's line rate and relies on
//! PFC (or loss and go-back-N) alone.

use super::CongestionControl;

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
