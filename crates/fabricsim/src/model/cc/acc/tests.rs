use super::*;
use crate::base::units::{NS, US};

const C: u64 = 100_000_000_000;
const G: f64 = 1e9;
const T: Time = 10 * US;

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * b.abs().max(1.0)
}

fn params() -> AccParams {
    AccParams::new(Rate(C), T)
}

/// Feeds one period [start, start + T) of `n` evenly spaced ACKs of `bytes` each with
/// `mark`; `inflight` reported on each.
fn period(a: &mut Acc, start: Time, n: u64, bytes: u64, mark: TcdMark, inflight: u64) {
    for i in 0..n {
        a.on_ack_marked(start + i * (T / n), bytes, mark, inflight);
    }
}

#[test]
fn defaults() {
    let p = params();
    assert_eq!(
        (p.period, p.base_rtt, p.p_thresh, p.fast_after),
        (T, T, 3, 5)
    );
    assert!(close(p.r_ai, 1.0 * G) && close(p.ce_threshold, 0.9) && p.halt);
    assert_eq!(p.max_halt, None, "the halt lasts until the excess drains");
    assert_eq!(AccParams::resolve(&AccCfg::default(), Rate(C), T), p);
    let cfg: AccCfg =
        toml::from_str("halt = false\nperiod = \"50us\"\nmax_halt = \"40us\"").unwrap();
    let r = AccParams::resolve(&cfg, Rate(C), T);
    assert!(!r.halt);
    assert_eq!(r.max_halt, Some(40 * US));
    assert_eq!((r.period, r.base_rtt), (50 * US, T));
    assert!(toml::from_str::<AccCfg>("hlt = false").is_err());
}

#[test]
fn congested_flow_halts_for_excess_then_sends_at_ack_rate() {
    let mut a = Acc::new(params(), Rate(C));
    // The flow sent at 100G into a bottleneck that gives it 25G: ACKs of 1250 B every
    // 400 ns (25 per 10 us period), all CE, 200 KB in flight.
    period(&mut a, 0, 25, 1250, TcdMark::Ce, 200_000);
    assert_eq!(a.periods, 0, "the period closes at the next ACK");
    assert!(close(a.rate, 100.0 * G));
    a.on_ack_marked(T, 1250, TcdMark::Ce, 200_000);
    // R_ack = 31_250 B * 8 / 10 us = 25 Gbit/s; pipe = 25G * 10 us / 8 = 31_250 B;
    // excess = 200_000 - 31_250 = 168_750 B; halt = 168_750 * 8 / 25G = 54 us.
    assert_eq!(a.last_verdict, Some(AccVerdict::Congested));
    assert!(close(a.rate, 25.0 * G), "{}", a.rate);
    assert_eq!(a.halted_until(), Some(T + 54 * US));
    assert!(a.is_halted(T + 54 * US - 1));
    assert!(!a.is_halted(T + 54 * US));
    assert_eq!((a.halts, a.halt_time), (1, 54 * US));
    // While halted the ACKs keep coming (the backlog drains at 25G) and inflight falls
    // by what they ack: the next estimate finds the same end of the halt.
    let mut inflight = 200_000;
    for i in 1..25u64 {
        inflight -= 1250;
        a.on_ack_marked(T + i * 400 * NS, 1250, TcdMark::Ce, inflight);
    }
    inflight -= 1250;
    a.on_ack_marked(2 * T, 1250, TcdMark::Ce, inflight);
    // inflight = 200_000 - 25 * 1250 = 168_750; R_ack again 25G; excess = 137_500 B,
    // 44 us at 25G: from 20 us the halt still ends at 64 us.
    assert_eq!(a.halted_until(), Some(T + 54 * US));
    assert!(close(a.rate, 25.0 * G));
    assert_eq!(a.halts, 1, "a refined estimate is the same halt");
    assert_eq!(a.halt_time, 54 * US);
}

#[test]
fn without_halt_it_never_halts() {
    let p = AccParams {
        halt: false,
        ..params()
    };
    let mut a = Acc::new(p, Rate(C));
    for k in 0..5 {
        period(&mut a, k * T, 25, 1250, TcdMark::Ce, 200_000);
    }
    a.on_ack_marked(5 * T, 1250, TcdMark::Ce, 200_000);
    assert_eq!(a.periods, 5);
    assert_eq!(a.halted_until(), None);
    assert!(!a.is_halted(5 * T));
    assert_eq!(a.halts, 0);
    // It still matches the ACK rate.
    assert!(close(a.rate, 25.0 * G));
}

#[test]
fn a_deep_backlog_halts_until_it_drains_however_many_rtts_that_takes() {
    let mut a = Acc::new(params(), Rate(C));
    // 25 Gbit/s of ACKs with 1 MB in flight: the flow's bytes queued behind a deep
    // congestion tree. Excess = 1_000_000 - 31_250 B, 310 us at 25G: 31 base RTTs.
    period(&mut a, 0, 25, 1250, TcdMark::Ce, 1_000_000);
    a.on_ack_marked(T, 1250, TcdMark::Ce, 1_000_000);
    assert_eq!(a.halted_until(), Some(T + 310 * US));
    // Its bytes drain at 25G; every period refines the halt to the same end, and the
    // ACK that finds the bytes in flight down to the pipe comes at that end.
    let mut inflight = 1_000_000;
    for i in 1..=800u64 {
        inflight -= 1250;
        a.on_ack_marked(T + i * 400 * NS, 1250, TcdMark::Ce, inflight);
        if i < 775 {
            assert!(a.is_halted(T + i * 400 * NS), "ACK {i}");
        }
    }
    assert_eq!(a.halted_until(), Some(T + 310 * US));
    assert_eq!((a.halts, a.halt_time), (1, 310 * US));
    // It resumes at the rate its ACKs came in during the halt (774 ACKs before its end).
    assert!((a.rate / G - 25.0).abs() < 0.05, "{}", a.rate);
}

#[test]
fn no_halt_when_inflight_fits_the_pipe() {
    let mut a = Acc::new(params(), Rate(C));
    period(&mut a, 0, 25, 1250, TcdMark::Ce, 20_000);
    a.on_ack_marked(T, 1250, TcdMark::Ce, 20_000);
    assert_eq!(a.last_verdict, Some(AccVerdict::Congested));
    assert_eq!(a.halted_until(), None);
    assert!(close(a.rate, 25.0 * G));
}

#[test]
fn halt_ends_early_when_the_excess_is_gone() {
    let mut a = Acc::new(params(), Rate(C));
    period(&mut a, 0, 25, 1250, TcdMark::Ce, 200_000);
    a.on_ack_marked(T, 1250, TcdMark::Ce, 200_000);
    assert_eq!(a.halted_until(), Some(T + 54 * US));
    // The next period still looks congested but the flow's bytes in flight already fit
    // the pipe (the bottleneck drained faster): the first ACK that shows it ends the
    // halt. The halt lasted less than a period: the rate stays R_ack of the period
    // before it (1250 B in these 400 ns would claim 25 Gbit/s as well, by chance).
    period(&mut a, T + 400 * NS, 24, 1250, TcdMark::Ce, 20_000);
    assert_eq!(a.halted_until(), Some(T + 400 * NS));
    assert!(!a.is_halted(T + 400 * NS));
    assert_eq!((a.halts, a.halt_time), (1, 400 * NS));
    assert!(close(a.rate, 25.0 * G), "{}", a.rate);
    a.on_ack_marked(2 * T, 1250, TcdMark::Ce, 20_000);
    assert_eq!(
        a.halted_until(),
        Some(T + 400 * NS),
        "no excess: no new halt"
    );
    assert_eq!(a.halts, 1);
}

#[test]
fn the_ack_stream_ends_a_refined_halt_and_sets_the_rate() {
    let mut a = Acc::new(params(), Rate(C));
    period(&mut a, 0, 25, 1250, TcdMark::Ce, 200_000);
    a.on_ack_marked(T, 1250, TcdMark::Ce, 200_000);
    // Halted until 64 us (see above). The bottleneck then drains the flow's backlog
    // faster: ACKs of 16_875 B every 2 us.
    let mut inflight = 200_000;
    for k in 1..=5u64 {
        inflight -= 16_875;
        a.on_ack_marked(T + 2 * k * US, 16_875, TcdMark::Ce, inflight);
    }
    // The period [10 us, 20 us) closed at 20 us: 1250 + 4 x 16_875 = 68_750 B, R_ack
    // 55 Gbit/s, pipe 68_750 B, inflight 115_625 B: 46_875 B of excess, 6.82 us: the
    // refined halt ends at 26.82 us.
    assert_eq!(a.periods, 2);
    assert_eq!(a.halted_until(), Some(20 * US + 6_818_182));
    for k in 6..=8u64 {
        inflight -= 16_875;
        a.on_ack_marked(T + 2 * k * US, 16_875, TcdMark::Ce, inflight);
    }
    // At 26 us inflight is 65_000 B <= the pipe: the halt ends there, before its
    // planned end, and the rate is what the ACKs of the halt delivered: 8 x 16_875 B
    // in 16 us = 67.5 Gbit/s.
    assert_eq!(a.halted_until(), Some(26 * US));
    assert_eq!((a.halts, a.halt_time), (1, 16 * US));
    assert!(close(a.rate, 67.5 * G), "{}", a.rate);
}

#[test]
fn a_halt_is_capped_and_one_without_acks_keeps_its_rate() {
    let p = AccParams {
        max_halt: Some(4 * T),
        ..params()
    };
    let mut a = Acc::new(p, Rate(C));
    period(&mut a, 0, 25, 1250, TcdMark::Ce, 200_000);
    a.on_ack_marked(T, 1250, TcdMark::Ce, 200_000);
    // The excess would take 54 us; the cap is 4 base RTTs.
    assert_eq!(a.halted_until(), Some(T + 40 * US));
    assert_eq!((a.halts, a.halt_time), (1, 40 * US));
    assert!(close(a.rate, 25.0 * G));
    // No ACK during the halt (the network paused the flow's packets); the next comes
    // at 60 us. The halt ended at 50 us without ACKs: the rate it set stays. That
    // ACK closes the period [10 us, 20 us), which saw one ACK: R_ack 1 Gbit/s, a new
    // halt, capped too.
    a.on_ack_marked(60 * US, 1250, TcdMark::Ce, 198_750);
    assert_eq!(a.halts, 2);
    assert_eq!(a.halted_until(), Some(100 * US));
    assert_eq!(a.halt_time, 80 * US);
    assert!(close(a.rate, 1.0 * G), "{}", a.rate);
}

#[test]
fn r_ack_counts_a_silent_stretch_only_with_bytes_in_flight() {
    // Without the halt, to see the rate estimate alone.
    let p = AccParams {
        halt: false,
        ..params()
    };
    for (inflight_before_gap, want) in [(50_000, 40.0), (0, 100.0)] {
        let mut a = Acc::new(p, Rate(C));
        period(&mut a, 0, 25, 1250, TcdMark::Ce, 50_000);
        a.on_ack_marked(T, 1250, TcdMark::Ce, inflight_before_gap);
        assert!(close(a.rate, 25.0 * G));
        // No ACK from 10 us to 35 us. The period [10 us, 20 us) closes at 35 us with one
        // ACK (1 Gbit/s) and the grid restarts at 35 us.
        for k in 0..10u64 {
            a.on_ack_marked(35 * US + k * US, 12_500, TcdMark::Ce, 50_000);
        }
        assert!(close(a.rate, 1.0 * G), "{}", a.rate);
        a.on_ack_marked(45 * US, 12_500, TcdMark::Ce, 50_000);
        // 125_000 B acked: over 25 us (from 20 us) if the flow had bytes in flight in
        // the silence, when the bottleneck gave it nothing; over 10 us if it had none.
        assert!(close(a.rate, want * G), "{inflight_before_gap}: {}", a.rate);
    }
}

#[test]
fn victim_holds_then_halves_after_p_thresh_periods() {
    let mut a = Acc::new(params(), Rate(C));
    a.rate = 40.0 * G;
    // Periods 0..3 are UE. Each is decided at the first ACK of the next period.
    for k in 0..4u64 {
        period(&mut a, k * T, 10, 1000, TcdMark::Ue, 50_000);
        if k >= 1 {
            assert_eq!(a.last_verdict, Some(AccVerdict::Victim));
            assert!(close(a.rate, 40.0 * G), "period {}: {}", k - 1, a.rate);
        }
    }
    // The fourth UE period in a row exceeds Pthresh = 3: halve.
    period(&mut a, 4 * T, 10, 1000, TcdMark::Ue, 50_000);
    assert!(close(a.rate, 20.0 * G), "{}", a.rate);
    assert_eq!(a.halvings, 1);
    // The count starts again: three more UE periods hold, the fourth halves.
    for k in 5..8u64 {
        period(&mut a, k * T, 10, 1000, TcdMark::Ue, 50_000);
        assert!(close(a.rate, 20.0 * G), "{}", a.rate);
    }
    period(&mut a, 8 * T, 10, 1000, TcdMark::Ue, 50_000);
    assert!(close(a.rate, 10.0 * G), "{}", a.rate);
    // An uncongested period in between breaks the streak.
    let mut b = Acc::new(params(), Rate(C));
    b.rate = 40.0 * G;
    for (k, m) in [
        TcdMark::Ue,
        TcdMark::Ue,
        TcdMark::Ue,
        TcdMark::None,
        TcdMark::Ue,
    ]
    .into_iter()
    .enumerate()
    {
        period(&mut b, k as Time * T, 10, 1000, m, 50_000);
    }
    b.on_ack_marked(5 * T, 1000, TcdMark::Ue, 50_000);
    assert_eq!(b.halvings, 0);
    assert!(b.rate > 40.0 * G);
}

#[test]
fn uncongested_increase_is_gentle_then_fast_and_capped() {
    let p = AccParams {
        rate_weight: 0.0,
        ..params()
    };
    let mut a = Acc::new(p, Rate(C));
    a.rate = 50.0 * G;
    period(&mut a, 0, 10, 1000, TcdMark::None, 10_000);
    let mut expected = 50.0 * G;
    // Periods 1..=5: +R_AI (1G); from the sixth: +s R_AI (4G).
    for k in 1..=8u64 {
        period(&mut a, k * T, 10, 1000, TcdMark::None, 10_000);
        expected += if k <= 5 { 1.0 * G } else { 4.0 * G };
        assert_eq!(a.last_verdict, Some(AccVerdict::Uncongested));
        assert!(
            close(a.rate, expected),
            "period {k}: {} vs {expected}",
            a.rate
        );
    }
    for k in 9..30u64 {
        period(&mut a, k * T, 10, 1000, TcdMark::None, 10_000);
    }
    assert!(close(a.rate, 100.0 * G));
}

#[test]
fn smaller_rates_increase_more() {
    let mut slow = Acc::new(params(), Rate(C));
    let mut fast = Acc::new(params(), Rate(C));
    slow.rate = 10.0 * G;
    fast.rate = 90.0 * G;
    for a in [&mut slow, &mut fast] {
        period(a, 0, 10, 1000, TcdMark::None, 10_000);
        a.on_ack_marked(T, 1000, TcdMark::None, 10_000);
    }
    // Step R_AI (1 + (1 - R/C)): 1.9G at 10G, 1.1G at 90G.
    assert!(close(slow.rate, 11.9 * G), "{}", slow.rate);
    assert!(close(fast.rate, 91.1 * G), "{}", fast.rate);
}

#[test]
fn mixed_periods_hold_and_quiet_periods_decide_nothing() {
    let mut a = Acc::new(params(), Rate(C));
    a.rate = 30.0 * G;
    // 5 of 10 ACKs CE: not a stable congestion.
    for i in 0..10u64 {
        let m = if i % 2 == 0 {
            TcdMark::Ce
        } else {
            TcdMark::None
        };
        a.on_ack_marked(i * US, 1000, m, 10_000);
    }
    // After 3 quiet periods the grid restarts at the next ACK.
    a.on_ack_marked(45 * US, 1000, TcdMark::None, 10_000);
    assert_eq!(a.last_verdict, Some(AccVerdict::Mixed));
    assert!(close(a.rate, 30.0 * G));
    assert_eq!(a.periods, 1);
    a.on_ack_marked(54 * US, 1000, TcdMark::None, 10_000);
    assert_eq!(a.periods, 1, "45 us + T not reached");
    a.on_ack_marked(55 * US, 1000, TcdMark::None, 10_000);
    assert_eq!(a.periods, 2);
    assert_eq!(a.last_verdict, Some(AccVerdict::Uncongested));
}
#[test]
fn congestion_onset_restarts_the_period() {
    let mut a = Acc::new(params(), Rate(C));
    // Grid from 0. Four quiet ACKs, then CE from 4 us on: the period restarts at 4 us,
    // so the ACKs of [4 us, 14 us) decide, all CE: congested at 14 us, not at 20 us.
    for i in 0..4u64 {
        a.on_ack_marked(i * US, 1250, TcdMark::None, 20_000);
    }
    for i in 4..14u64 {
        a.on_ack_marked(i * US, 1250, TcdMark::Ce, 20_000);
    }
    assert_eq!((a.periods, a.onset_restarts), (0, 1));
    a.on_ack_marked(14 * US, 1250, TcdMark::Ce, 20_000);
    assert_eq!(a.periods, 1);
    assert_eq!(a.last_verdict, Some(AccVerdict::Congested));
    // R_ack over the restarted period: 10 ACKs of 1250 B in 10 us = 10 Gbit/s.
    assert!(close(a.rate, 10.0 * G), "{}", a.rate);
    // Without the restart the grid period [0, 10 us) holds 4 quiet and 6 CE ACKs: a
    // mixed period at 10 us, the rate holds.
    let p = AccParams {
        onset_restart: false,
        ..params()
    };
    let mut b = Acc::new(p, Rate(C));
    for i in 0..14u64 {
        let m = if i < 4 { TcdMark::None } else { TcdMark::Ce };
        b.on_ack_marked(i * US, 1250, m, 20_000);
    }
    b.on_ack_marked(14 * US, 1250, TcdMark::Ce, 20_000);
    assert_eq!((b.onset_restarts, b.periods), (0, 1));
    assert_eq!(b.last_verdict, Some(AccVerdict::Mixed));
    assert!(close(b.rate, 100.0 * G));
}
