//! Lower floors of time-typed fields: timers, periods, intervals and time constants.
//!
//! A timer shorter than anything the modelled hardware can do is not a setting but a
//! typo or a unit mixed up ("1ps" for "1us"), and the simulator pays for it in events: a
//! 1 ps sampling interval is one event per simulated picosecond (10^12 per simulated
//! second), a 1 ps RTO re-sends every flow's window as fast as the loop runs. Such runs
//! never end in practice, so the checks refuse them before anything runs, naming the
//! field, the value and the floor (exit status 2, like any bad input).
//!
//! The floors come from physics and from the hardware the models stand for:
//!
//! - [`TIMER`] (1 ns), any timer, period or time constant without a larger natural
//!   scale: no hardware timer ticks faster than its clock (~1 GHz), and a minimum frame
//!   (64 B) takes 0.64 ns even at 800 Gbit/s, so nothing a fabric does happens in less.
//! - [`RESEND`] (1 us), timers that re-send data (transport RTO, a hardware collective's
//!   retry timeout): the shortest retransmission timeout RDMA NICs offer is 4.096 us (the
//!   InfiniBand local ACK timeout, 4.096 us x 2^n), and a fabric round trip is about a
//!   microsecond or more, so a shorter timeout fires before any ACK can come back.
//! - [`NIC_TIMER`] (1 us), DCQCN's NIC timers (rate increase, rate decrease): NIC
//!   firmware counts them in microseconds (Mellanox's `rpg_time_reset`,
//!   `rate_reduce_monitor_period`).
//! - [`STALL`] (1 us), the stall timeout: no delivery within less than a round trip says
//!   nothing about a stall.
//! - Sampling intervals: one minimum frame's serialization at the fastest link of the
//!   fabric, and at least [`TIMER`]: a queue cannot change faster than one frame per
//!   frame time, so finer samples repeat themselves ([`sampling_floor`]).
//!
//! Latencies and delays (switch latency, link delay, setup and overhead times, start
//! times) have no floor: zero is a meaningful idealisation for them, and they schedule no
//! repeating events.

use crate::base::param::{Checked, ParamError};
use crate::base::units::{fmt_time, Time, NS, US};

/// Any timer, period or time constant.
pub const TIMER: Time = NS;
/// Timers that re-send data: transport RTO, a hardware collective's retry timeout.
pub const RESEND: Time = US;
/// DCQCN's NIC timers (rate increase, rate decrease).
pub const NIC_TIMER: Time = US;
/// The stall timeout.
pub const STALL: Time = US;
/// The smallest frame on any link (an Ethernet minimum frame), for the sampling floor.
pub const MIN_FRAME_BYTES: u64 = 64;

/// A time as error messages write it: whole picoseconds below a nanosecond (`1ps`, which
/// [`fmt_time`] would write as `0.001ns`).
pub fn show(t: Time) -> String {
    if t < NS {
        format!("{t}ps")
    } else {
        fmt_time(t)
    }
}

/// Checks `t` (the value of `field`) against `floor`; `why` says where the floor comes from.
pub fn at_least(field: &str, t: Time, floor: Time, why: &str) -> Checked {
    if t < floor {
        return Err(ParamError::new(
            field,
            format!("{}: at least {} is allowed ({why})", show(t), show(floor)),
        ));
    }
    Ok(())
}

/// [`at_least`] for an optional field (unset passes).
pub fn opt_at_least(field: &str, t: Option<Time>, floor: Time, why: &str) -> Checked {
    t.map_or(Ok(()), |t| at_least(field, t, floor, why))
}

/// [`at_least`] for a field where 0 means "off" (0 passes).
pub fn zero_or_at_least(field: &str, t: Time, floor: Time, why: &str) -> Checked {
    if t == 0 {
        return Ok(());
    }
    at_least(field, t, floor, &format!("or 0 for none; {why}"))
}

/// The floor of a sampling interval in a fabric whose fastest link runs at `fastest_bps`:
/// one minimum frame's serialization there, and at least [`TIMER`].
pub fn sampling_floor(fastest_bps: u64) -> Time {
    let frame = (MIN_FRAME_BYTES * 8) as u128 * 1_000_000_000_000 / fastest_bps.max(1) as u128;
    (frame as Time).max(TIMER)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_value_below_its_floor_is_named_with_the_floor() {
        let e = at_least("rto", 1, RESEND, "why").unwrap_err();
        assert_eq!(e.field, "rto");
        assert_eq!(e.message, "1ps: at least 1.000us is allowed (why)");
        assert!(at_least("rto", RESEND, RESEND, "").is_ok());
        assert!(opt_at_least("t", None, TIMER, "").is_ok());
        assert!(opt_at_least("t", Some(999), TIMER, "").is_err());
        assert!(zero_or_at_least("t", 0, TIMER, "").is_ok());
        assert!(zero_or_at_least("t", 5, TIMER, "").is_err());
    }

    #[test]
    fn the_sampling_floor_is_a_minimum_frame_at_the_fastest_link() {
        // 64 B at 100 Gbit/s: 5.12 ns; at 800 Gbit/s 0.64 ns, raised to 1 ns.
        assert_eq!(sampling_floor(100_000_000_000), 5_120);
        assert_eq!(sampling_floor(800_000_000_000), TIMER);
        assert_eq!(sampling_floor(25_000_000_000), 20_480);
    }
}
