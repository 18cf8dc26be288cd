//! Tick labels. Plotters places the ticks (its own "nice" key points); these formatters
//! only write them: one number of decimals for a whole linear axis, chosen from the
//! range so that neighbouring ticks never read the same, with an SI suffix (k, M, G, T)
//! for large values; up to three significant digits on log axes.

use std::ops::Range;

const SI: [&str; 5] = ["", "k", "M", "G", "T"];

/// Formats the ticks of a linear axis over `range`.
pub(super) fn linear(range: &Range<f64>) -> impl Fn(&f64) -> String {
    let span = (range.end - range.start).abs();
    let maxabs = range.start.abs().max(range.end.abs());
    // Plotters puts at most ~10 ticks on an axis: a tenth of the span is the finest step.
    let step = if span > 0.0 && span.is_finite() {
        span / 10.0
    } else {
        1.0
    };
    let k = if (1e4..1e15).contains(&maxabs) && step >= 1.0 {
        ((maxabs.log10().floor() as i32) / 3).clamp(0, 4)
    } else {
        0
    };
    let unit = 10f64.powi(3 * k);
    let decimals = (-(step / unit).log10().floor()).clamp(0.0, 9.0) as usize;
    let sci = !(1e-4..1e15).contains(&maxabs) && maxabs != 0.0;
    move |v: &f64| {
        if *v == 0.0 || v.abs() < step * 1e-6 {
            "0".to_string()
        } else if sci {
            format!("{v:.2e}")
        } else {
            format!("{:.*}{}", decimals, v / unit, SI[k as usize])
        }
    }
}

/// Formats the ticks of a log axis: up to three significant digits, SI suffixes from 1e3
/// ("2k", "1.5M"), scientific notation outside 1e-3..1e15.
pub(super) fn log(v: &f64) -> String {
    let v = *v;
    if v == 0.0 || !v.is_finite() {
        return "0".to_string();
    }
    let a = v.abs();
    if !(1e-3..1e15).contains(&a) {
        let s = format!("{v:.2e}");
        return match s.split_once('e') {
            Some((mant, exp)) => format!("{}e{exp}", trim_zeros(mant)),
            None => s,
        };
    }
    let k = if a >= 1000.0 {
        ((a.log10().floor() as i32) / 3).clamp(1, 4)
    } else {
        0
    };
    let scaled = v / 10f64.powi(3 * k);
    let decimals = (2 - scaled.abs().log10().floor() as i32).clamp(0, 6) as usize;
    format!(
        "{}{}",
        trim_zeros(&format!("{scaled:.decimals$}")),
        SI[k as usize]
    )
}

fn trim_zeros(s: &str) -> String {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn linear_labels() {
        let f = linear(&(0.0..1.0));
        assert_eq!([f(&0.0), f(&0.2), f(&1.0)], ["0", "0.2", "1.0"]);
        let f = linear(&(0.0..4.2e6));
        assert_eq!([f(&1e6), f(&4e6)], ["1.0M", "4.0M"]);
        let f = linear(&(0.0..392.1));
        assert_eq!([f(&100.0), f(&350.0)], ["100", "350"]);
        // Narrow ranges far from zero keep their ticks apart.
        let f = linear(&(1000.0..1010.0));
        assert_eq!([f(&1002.0), f(&1004.0)], ["1002", "1004"]);
        let f = linear(&(1e6..1.003e6));
        assert_ne!(f(&1.001e6), f(&1.002e6));
    }

    #[test]
    fn log_labels() {
        assert_eq!(log(&1e3), "1k");
        assert_eq!(log(&1.5e6), "1.5M");
        assert_eq!(log(&0.25), "0.25");
        assert_eq!(log(&2.5e-5), "2.5e-5");
        assert_eq!(log(&3e18), "3e18");
        assert_eq!(log(&-2000.0), "-2k");
    }
}
