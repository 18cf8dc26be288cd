//! Congestion pre-sensing (document 003: "拥塞预感知装置依据下游信用释放的速率回馈上游,
//! 从而使上游能更早感受到下游的拥塞情况"): the router watches how fast the next router
//! gives its credits back, so that it sees a congested downstream before its own credits
//! run out. A downstream input that drains quickly returns credits often; one held up by
//! its own congestion returns them slowly even while some are still free.
//!
//! Each egress port keeps the credits returned to it in the last while: a count that
//! decays exponentially with time constant `presense_window` [recon] and grows by every
//! return. Adaptive routing ranks a candidate by its free credits plus that count: of two
//! ports with the same free credits, the one whose downstream drains faster wins.

use crate::base::units::Time;

/// The recent credit returns of one egress port.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ReleaseRate {
    /// Credits returned, decayed to `at`.
    recent: f64,
    /// When `recent` was last brought up to date.
    at: Time,
}

impl ReleaseRate {
    /// `blocks` credits came back at `now`; `tau` is the time constant.
    pub fn returned(&mut self, blocks: u32, now: Time, tau: Time) {
        self.recent = self.value(now, tau) + blocks as f64;
        self.at = now;
    }

    /// Credits returned recently, as of `now`.
    pub fn value(&self, now: Time, tau: Time) -> f64 {
        if tau == 0 {
            return 0.0;
        }
        self.recent * (-(now.saturating_sub(self.at) as f64) / tau as f64).exp()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn returns_count_then_fade_with_the_time_constant() {
        let tau = 1_000_000; // 1 us
        let mut r = ReleaseRate::default();
        r.returned(10, 0, tau);
        assert_eq!(r.value(0, tau), 10.0);
        assert!((r.value(tau, tau) - 10.0 / std::f64::consts::E).abs() < 1e-9);
        r.returned(5, tau, tau);
        assert!((r.value(tau, tau) - (10.0 / std::f64::consts::E + 5.0)).abs() < 1e-9);
        // A port whose downstream returned more, sooner, ranks higher later on.
        let mut slow = ReleaseRate::default();
        slow.returned(2, 0, tau);
        assert!(r.value(3 * tau, tau) > slow.value(3 * tau, tau));
        assert_eq!(ReleaseRate::default().value(5, 0), 0.0);
    }
}
