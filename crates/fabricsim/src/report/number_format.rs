//! Numbers as tick labels: exact powers of ten and decades, one unit suffix and one
//! number of decimals for a whole linear axis, and up to three significant digits with
//! SI suffixes ("2k", "1.5M") or scientific notation outside them.

pub(super) fn pow10(k: i32) -> f64 {
    if k >= 0 {
        10f64.powi(k)
    } else {
        1.0 / 10f64.powi(-k)
    }
}

/// floor(log10(v)) for v > 0, corrected for rounding in log10.
pub(super) fn decade_of(v: f64) -> i32 {
    let mut k = v.log10().floor() as i32;
    while k < 310 && pow10(k + 1) <= v {
        k += 1;
    }
    while k > -330 && pow10(k) > v {
        k -= 1;
    }
    k
}

const SI: [&str; 5] = ["", "k", "M", "G", "T"];

/// Labels for linear ticks `i * step` where step = m * 10^e: one unit suffix and one
/// number of decimals for the whole axis.
pub(super) fn linear_labels(ticks: &[f64], e: i32) -> Vec<String> {
    let maxabs = ticks.iter().fold(0.0f64, |a, t| a.max(t.abs()));
    if !(1e-3..1e15).contains(&maxabs) {
        return ticks.iter().map(|&t| fmt_sig(t)).collect();
    }
    // The largest unit not above the largest tick that needs at most one decimal.
    let k = if maxabs >= 1000.0 {
        (decade_of(maxabs) / 3)
            .min((e + 1).div_euclid(3))
            .clamp(0, 4)
    } else {
        0
    };
    let unit = pow10(3 * k);
    let decimals = (3 * k - e).clamp(0, 12) as usize;
    ticks
        .iter()
        .map(|&t| {
            if t == 0.0 || t.abs() < unit * 1e-12 {
                // "0.0" among "0.2", "0.4"...; a bare "0" among "0.5G", "1.0G"...
                if k == 0 {
                    format!("{:.*}", decimals, 0.0)
                } else {
                    "0".to_string()
                }
            } else {
                format!("{:.*}{}", decimals, t / unit, SI[k as usize])
            }
        })
        .collect()
}

/// Formats `v` with up to three significant digits: SI suffixes from 1e3 to below 1e15
/// ("2k", "1.5M", "10G"), plain decimals from 1e-3 ("0.25") and scientific notation
/// outside ("1e-6", "2.5e18").
pub(super) fn fmt_sig(v: f64) -> String {
    if v == 0.0 || !v.is_finite() {
        return "0".to_string();
    }
    let a = v.abs();
    if !(1e-3..1e15).contains(&a) {
        let s = format!("{v:.2e}");
        return match s.split_once('e') {
            Some((mant, exp)) => format!("{}e{}", trim_zeros(mant), exp),
            None => s,
        };
    }
    let k = if a >= 1000.0 {
        (decade_of(a) / 3).clamp(1, 4)
    } else {
        0
    };
    let scaled = v / pow10(3 * k);
    let decimals = (2 - decade_of(scaled.abs())).clamp(0, 6) as usize;
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
