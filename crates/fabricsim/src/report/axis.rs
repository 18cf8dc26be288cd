//! Chart axes in plot space (log10 of the value on a logarithmic axis): the range, "nice"
//! ticks (1-2-5 steps on linear axes; powers of ten, or 1-2-5 steps over narrow ranges,
//! on logarithmic ones) and their labels. An axis is its own plotters coordinate, so
//! plotters draws exactly these ticks.

use std::ops::Range;

use plotters::coord::ranged1d::{KeyPointHint, NoDefaultFormatting, Ranged, ValueFormatter};

use super::number_format::{decade_of, fmt_sig, linear_labels, pow10};

/// An axis in plot space (log10 of the value for a logarithmic axis): range, tick
/// positions and their labels.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Axis {
    pub(super) lo: f64,
    pub(super) hi: f64,
    pub(super) ticks: Vec<f64>,
    pub(super) labels: Vec<String>,
    pub(super) log: bool,
}

/// Largest magnitude accepted; keeps every span and product finite.
const MAX_ABS: f64 = 1e300;
const MIN_LOG: f64 = 1e-300;

pub(super) fn usable(v: f64, log: bool) -> bool {
    v.is_finite() && v.abs() <= MAX_ABS && (!log || v >= MIN_LOG)
}

impl Axis {
    /// Plot-space coordinate of a data value (caller checked it is usable).
    pub(super) fn map(&self, v: f64) -> f64 {
        if self.log {
            v.log10()
        } else {
            v
        }
    }

    fn label(&self, v: f64) -> String {
        let mut best: Option<(f64, &String)> = None;
        for (t, l) in self.ticks.iter().zip(&self.labels) {
            let d = (t - v).abs();
            if best.is_none_or(|(bd, _)| d < bd) {
                best = Some((d, l));
            }
        }
        best.map(|(_, l)| l.clone()).unwrap_or_default()
    }

    pub(super) fn max_label_chars(&self) -> usize {
        self.labels
            .iter()
            .map(|l| l.chars().count())
            .max()
            .unwrap_or(1)
    }

    /// A linear axis covering [min, max] (both finite, min <= max) with 1-2-5 steps.
    fn linear(mut min: f64, mut max: f64, include_zero: bool) -> Axis {
        if include_zero {
            min = min.min(0.0);
            max = max.max(0.0);
        }
        let scale = min.abs().max(max.abs());
        if max - min <= scale * 1e-9 {
            if scale == 0.0 {
                max = 1.0;
            } else {
                let pad = scale * 0.1;
                if include_zero && min >= 0.0 {
                    max += pad;
                } else if include_zero && max <= 0.0 {
                    min -= pad;
                } else {
                    min -= pad;
                    max += pad;
                }
            }
        }
        let raw = (max - min) / 5.0;
        let mut e = decade_of(raw);
        let r = raw / pow10(e);
        let m = if r <= 1.0 + 1e-9 {
            1.0
        } else if r <= 2.0 + 1e-9 {
            2.0
        } else if r <= 5.0 + 1e-9 {
            5.0
        } else {
            e += 1;
            1.0
        };
        let step = m * pow10(e);
        let i0 = (min / step + 1e-9).floor();
        let i1 = (max / step - 1e-9).ceil().max(i0 + 1.0);
        let n = (i1 - i0) as i64;
        let ticks: Vec<f64> = if (1..=40).contains(&n) {
            (0..=n).map(|i| (i0 + i as f64) * step).collect()
        } else {
            vec![min, max]
        };
        let lo = ticks.first().copied().unwrap_or(min);
        let hi = ticks.last().copied().unwrap_or(max);
        let labels = linear_labels(&ticks, e);
        Axis {
            lo,
            hi,
            ticks,
            labels,
            log: false,
        }
    }

    /// A logarithmic axis covering [min, max] (0 < min <= max, both usable). With
    /// `strict_lo` the lower end is strictly below `min` (so that bars from the bottom
    /// of the axis have a visible height).
    fn log(min: f64, max: f64, strict_lo: bool) -> Axis {
        const M125: &[f64] = &[1.0, 2.0, 5.0];
        const M19: &[f64] = &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0];
        let kmin = decade_of(min);
        let kmax = decade_of(max);
        if kmax - kmin <= 3 {
            for mantissas in [M125, M19] {
                // Candidate tick values m * 10^k around the data, in increasing order.
                let seq: Vec<(f64, i32)> = (kmin - 1..=kmax + 1)
                    .flat_map(|k| mantissas.iter().map(move |&m| (m, k)))
                    .collect();
                let val = |&(m, k): &(f64, i32)| m * pow10(k);
                let lo_idx = seq.iter().rposition(|t| {
                    let v = val(t);
                    if strict_lo {
                        v < min * (1.0 - 1e-9)
                    } else {
                        v <= min * (1.0 + 1e-9)
                    }
                });
                let hi_idx = seq.iter().position(|t| val(t) >= max * (1.0 - 1e-9));
                let (Some(lo_idx), Some(hi_idx)) = (lo_idx, hi_idx) else {
                    continue;
                };
                let hi_idx = hi_idx.max(lo_idx + 1).min(seq.len() - 1);
                if hi_idx <= lo_idx {
                    continue;
                }
                let span = val(&seq[hi_idx]) / val(&seq[lo_idx]);
                let ticks = &seq[lo_idx..=hi_idx];
                if span > 120.0 || (ticks.len() < 4 && mantissas.len() == 3) {
                    continue;
                }
                return Axis::log_from(ticks);
            }
        }
        // Decades, every `stride`-th labelled.
        let mut dlo = kmin;
        if strict_lo && pow10(dlo) >= min * (1.0 - 1e-9) {
            dlo -= 1;
        }
        let mut dhi = kmax;
        if pow10(dhi) < max * (1.0 - 1e-9) {
            dhi += 1;
        }
        dhi = dhi.max(dlo + 1);
        let n = dhi - dlo;
        let stride = ((n + 7) / 8).max(1);
        let dhi = dlo + (n + stride - 1) / stride * stride;
        let ticks: Vec<(f64, i32)> = (0..=(dhi - dlo) / stride)
            .map(|i| (1.0, dlo + i * stride))
            .collect();
        Axis::log_from(&ticks)
    }

    fn log_from(ticks: &[(f64, i32)]) -> Axis {
        let pos: Vec<f64> = ticks
            .iter()
            .map(|&(m, k)| f64::from(k) + m.log10())
            .collect();
        let labels = ticks.iter().map(|&(m, k)| fmt_sig(m * pow10(k))).collect();
        Axis {
            lo: pos.first().copied().unwrap_or(0.0),
            hi: pos.last().copied().unwrap_or(1.0),
            ticks: pos,
            labels,
            log: true,
        }
    }

    /// An axis for the usable values in `values`, or a default one when there are none.
    /// `zero` says when a linear axis starts at zero: bars always start there; lines do
    /// when their values are not negative and zero is not far below them (the smallest
    /// value is at most half the largest).
    pub(super) fn for_values(values: impl Iterator<Item = f64>, log: bool, zero: Zero) -> Axis {
        let mut range: Option<(f64, f64)> = None;
        for v in values.filter(|&v| usable(v, log)) {
            range = Some(match range {
                None => (v, v),
                Some((a, b)) => (a.min(v), b.max(v)),
            });
        }
        let bars = zero == Zero::Bars;
        match (range, log) {
            (Some((a, b)), true) => Axis::log(a, b, bars),
            (None, true) => Axis::log(1.0, 10.0, false),
            (Some((a, b)), false) => {
                let with_zero = match zero {
                    Zero::Bars => true,
                    Zero::IfNear => a >= 0.0 && a <= b * 0.5,
                    Zero::No => false,
                };
                Axis::linear(a, b, with_zero)
            }
            (None, false) => Axis::linear(0.0, 1.0, true),
        }
    }
}

/// The axis is its own plotters coordinate: ticks are exactly `ticks`, labelled with
/// `labels`, and no light grid lines.
impl Ranged for Axis {
    type FormatOption = NoDefaultFormatting;
    type ValueType = f64;

    fn map(&self, v: &f64, limit: (i32, i32)) -> i32 {
        let span = self.hi - self.lo;
        let len = limit.1 - limit.0;
        if span <= 0.0 || !span.is_finite() || len == 0 {
            return limit.0 + len / 2;
        }
        let frac = ((v - self.lo) / span).clamp(-1.0, 2.0);
        if !frac.is_finite() {
            return limit.0;
        }
        let px = f64::from(len) * frac;
        limit.0
            + if len > 0 {
                (px + 1e-3).floor()
            } else {
                (px - 1e-3).ceil()
            } as i32
    }

    fn key_points<H: KeyPointHint>(&self, hint: H) -> Vec<f64> {
        if hint.weight().allow_light_points() {
            Vec::new()
        } else {
            self.ticks.clone()
        }
    }

    fn range(&self) -> Range<f64> {
        self.lo..self.hi
    }
}

impl ValueFormatter<f64> for Axis {
    fn format_ext(&self, value: &f64) -> String {
        self.label(*value)
    }
}

/// Whether a linear axis is stretched to include zero.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Zero {
    /// Always, and a log axis ends strictly below the smallest value (bar charts).
    Bars,
    /// When the values are not negative and the smallest is at most half the largest.
    IfNear,
    /// Never.
    No,
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIB: f64 = 1024.0 * 1024.0;

    #[test]
    fn log_axis_ticks() {
        let a = Axis::log(1e3, 1e9, false);
        assert_eq!(a.labels, ["1k", "10k", "100k", "1M", "10M", "100M", "1G"]);
        assert_eq!(a.ticks, [3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0]);
        let a = Axis::log(1e3, 8e3, false);
        assert_eq!(a.labels, ["1k", "2k", "5k", "10k"]);
        let a = Axis::log(250.0, 450.0, false);
        assert_eq!(a.labels, ["200", "300", "400", "500"]);
        let a = Axis::log(1.5, 70.0, false);
        assert_eq!(a.labels, ["1", "2", "5", "10", "20", "50", "100"]);
        // bars need a bottom strictly below the smallest value
        let a = Axis::log(1e3, 1e9, true);
        assert_eq!(a.labels.first().unwrap(), "100");
        let a = Axis::log(1e-300, 1e300, false);
        assert!(a.ticks.len() <= 10, "{:?}", a.labels);
        assert_eq!(a.labels.first().unwrap(), "1e-300");
        let a = Axis::log(5.0, 5.0, false);
        assert!(a.lo < a.hi);
        let jct = Axis::for_values(
            [1.0 * MIB / 50.0, 512.0 * MIB / 50.0].into_iter(),
            true,
            Zero::Bars,
        );
        assert_eq!(jct.labels, ["10k", "100k", "1M", "10M", "100M"]);
    }

    #[test]
    fn linear_axis_ticks() {
        let a = Axis::linear(0.0, 1.0, true);
        assert_eq!(a.labels, ["0.0", "0.2", "0.4", "0.6", "0.8", "1.0"]);
        let a = Axis::for_values([90.0, 100.0].into_iter(), false, Zero::IfNear);
        assert_eq!(a.labels, ["90", "92", "94", "96", "98", "100"]);
        let a = Axis::for_values([40.0, 100.0].into_iter(), false, Zero::IfNear);
        assert_eq!(a.labels.first().unwrap(), "0");
        let a = Axis::for_values([1000.0, 1010.0].into_iter(), false, Zero::No);
        assert_eq!(a.labels, ["1000", "1002", "1004", "1006", "1008", "1010"]);
        let a = Axis::linear(0.0, 4.2e6, true);
        assert_eq!(a.labels, ["0", "1M", "2M", "3M", "4M", "5M"]);
        let a = Axis::linear(0.0, 42e3, true);
        assert_eq!(a.labels, ["0", "10k", "20k", "30k", "40k", "50k"]);
        let a = Axis::for_values([0.0, 0.0].into_iter(), false, Zero::Bars);
        assert_eq!((a.lo, a.hi), (0.0, 1.0));
        let a = Axis::linear(0.0, 392.1, true);
        assert_eq!(a.labels, ["0", "100", "200", "300", "400"]);
        let a = Axis::linear(0.0, 2.3e9, true);
        assert_eq!(a.labels, ["0", "0.5G", "1.0G", "1.5G", "2.0G", "2.5G"]);
        let a = Axis::linear(-3.0, 7.0, true);
        assert_eq!(a.labels, ["-4", "-2", "0", "2", "4", "6", "8"]);
        let a = Axis::linear(1e6, 1.003e6, false);
        assert!(a.labels.windows(2).all(|w| w[0] != w[1]), "{:?}", a.labels);
        let a = Axis::linear(7.0, 7.0, false);
        assert!(a.lo < 7.0 && a.hi > 7.0);
        let a = Axis::linear(0.0, 0.0, true);
        assert_eq!((a.lo, a.hi), (0.0, 1.0));
        let a = Axis::linear(-1e300, 1e300, false);
        assert!(a.ticks.len() >= 2 && a.ticks.iter().all(|t| t.is_finite()));
        assert_eq!(fmt_sig(1.5e6), "1.5M");
        assert_eq!(fmt_sig(0.25), "0.25");
        assert_eq!(fmt_sig(2.5e-5), "2.5e-5");
        assert_eq!(fmt_sig(3e18), "3e18");
        assert_eq!(fmt_sig(-2000.0), "-2k");
    }
}
