//! Table routing by port state (document 003, the Sunway router's distributed table
//! lookup): each table entry lists output ports in order, and the router takes
//! - **deterministic** (`first_available`): the first port in entry order whose link is
//!   up. With the topology's fallback entries last, a failed link is routed around at
//!   once, before any table is rewritten. To spread destinations over the uplinks the
//!   primary entries are scanned from `destination mod n` ("destination-mod-k", the
//!   usual order of fat-tree tables) [recon: the document does not give the order].
//! - **adaptive** (`adaptive`): among the primary ports whose link is up, the one with the
//!   most room downstream: credits under credit-based flow control, otherwise the fewest
//!   bytes queued on the port; ties go to the earliest in the same rotated order. The
//!   fallback entries only when no primary port is up.
//!
//! Both apply to any topology's tables (every entry of a plain table is primary).

use super::registry::{LbAlgorithm, LbEntry};

/// `first_available` in `fabric.load_balance.algorithm`.
pub static FIRST_AVAILABLE_ENTRY: LbEntry = LbEntry {
    name: "first_available",
    about: "deterministic table routing: the first next hop in table order whose link is up (fallbacks last)",
    algorithm: LbAlgorithm::FirstAvailable,
};

/// `adaptive` in `fabric.load_balance.algorithm`.
pub static ADAPTIVE_ENTRY: LbEntry = LbEntry {
    name: "adaptive",
    about: "adaptive table routing: the next hop with most downstream credits (least queued bytes without credits)",
    algorithm: LbAlgorithm::Adaptive,
};

/// The entry to take among `n` entries of which the first `primary` are primary, given
/// whether each is usable (`up`) and its room downstream (`room`, larger is better):
/// `first_available` (`adaptive` false) or `adaptive`. `start` rotates the scan of the
/// primary entries. `None` when no entry is usable.
#[inline]
pub fn choose(
    n: usize,
    primary: usize,
    start: usize,
    adaptive: bool,
    up: impl Fn(usize) -> bool,
    room: impl Fn(usize) -> f64,
) -> Option<usize> {
    let primary = primary.min(n);
    let mut best: Option<(usize, f64)> = None;
    for j in 0..primary {
        let k = if primary > 0 {
            (start + j) % primary
        } else {
            0
        };
        if !up(k) {
            continue;
        }
        if !adaptive {
            return Some(k);
        }
        let r = room(k);
        if best.is_none_or(|(_, b)| r > b) {
            best = Some((k, r));
        }
    }
    if let Some((k, _)) = best {
        return Some(k);
    }
    let mut best: Option<(usize, f64)> = None;
    for k in primary..n {
        if !up(k) {
            continue;
        }
        if !adaptive {
            return Some(k);
        }
        let r = room(k);
        if best.is_none_or(|(_, b)| r > b) {
            best = Some((k, r));
        }
    }
    best.map(|(k, _)| k)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deterministic_takes_the_first_usable_entry_from_the_rotation() {
        let up = |k: usize| k != 1 && k != 2;
        // Primary 0..4 scanned from 1: 1 and 2 are down, so 3.
        assert_eq!(choose(6, 4, 1, false, up, |_| 0.0), Some(3));
        assert_eq!(choose(6, 4, 0, false, up, |_| 0.0), Some(0));
        // Every primary down: the first usable fallback.
        assert_eq!(choose(6, 4, 0, false, |k| k >= 5, |_| 0.0), Some(5));
        assert_eq!(choose(6, 4, 0, false, |_| false, |_| 0.0), None);
    }

    #[test]
    fn adaptive_takes_the_most_room_among_primaries_first() {
        let room = |k: usize| [5.0, 9.0, 9.0, 1.0, 100.0, 0.0][k];
        // 1 and 2 tie at 9: the first in the rotated order from 2 is 2.
        assert_eq!(choose(6, 4, 2, true, |_| true, room), Some(2));
        assert_eq!(choose(6, 4, 0, true, |_| true, room), Some(1));
        // The fallback's 100 does not count while a primary is up.
        assert_eq!(choose(6, 4, 0, true, |k| k == 3 || k == 4, room), Some(3));
        assert_eq!(choose(6, 4, 0, true, |k| k >= 4, room), Some(4));
    }
}
