//! Mean and 95 % confidence interval of a handful of replicates (runs of one sweep point
//! with different seeds): Student's t interval `mean +- t_{0.975, n-1} * s / sqrt(n)`,
//! with `s` the sample standard deviation (n - 1 in the denominator). Replicates of a
//! simulation are independent draws of its random choices (ECMP salts, source ports,
//! arrival times), so the t interval is the textbook one; with 5 seeds it is wide
//! (t = 2.776), which is the honest statement of what 5 seeds can tell.

/// Two-sided 95 % quantiles `t_{0.975, df}` for df = 1..=30 (standard tables, e.g.
/// NIST/SEMATECH e-Handbook, table 1.3.6.7.2), rounded to 3 decimals.
const T975: [f64; 30] = [
    12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
    2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
    2.052, 2.048, 2.045, 2.042,
];

/// `t_{0.975, df}`, the Student t quantile of a two-sided 95 % interval. Above 30 degrees
/// of freedom, the Cornish-Fisher expansion of t around the normal quantile (Abramowitz
/// and Stegun 26.7.5, three terms), within 1e-4 of the exact value there. `df = 0`: NaN
/// (one sample has no spread).
pub fn t975(df: u32) -> f64 {
    match df {
        0 => f64::NAN,
        1..=30 => T975[df as usize - 1],
        _ => {
            let z: f64 = 1.959_963_984_540_054;
            let n = df as f64;
            let (z3, z5) = (z.powi(3), z.powi(5));
            z + (z3 + z) / (4.0 * n)
                + (5.0 * z5 + 16.0 * z3 + 3.0 * z) / (96.0 * n * n)
                + (3.0 * z.powi(7) + 19.0 * z5 + 17.0 * z3 - 15.0 * z) / (384.0 * n.powi(3))
        }
    }
}

/// Mean of replicates with its spread.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MeanInterval {
    /// Replicates (finite values only).
    pub n: usize,
    /// Their mean (NaN without any).
    pub mean: f64,
    /// Sample standard deviation (NaN below two).
    pub std: f64,
    /// Half-width of the 95 % t interval (NaN below two).
    pub half_width: f64,
}

/// Mean, sample standard deviation and 95 % t half-width of the finite values of `xs`
/// (a run that did not finish has a NaN JCT: it is left out, and `n` says so).
pub fn mean_interval(xs: &[f64]) -> MeanInterval {
    let v: Vec<f64> = xs.iter().copied().filter(|x| x.is_finite()).collect();
    let n = v.len();
    if n == 0 {
        return MeanInterval {
            n,
            mean: f64::NAN,
            std: f64::NAN,
            half_width: f64::NAN,
        };
    }
    let mean = v.iter().sum::<f64>() / n as f64;
    if n == 1 {
        return MeanInterval {
            n,
            mean,
            std: f64::NAN,
            half_width: f64::NAN,
        };
    }
    let var = v.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / (n - 1) as f64;
    let std = var.sqrt();
    MeanInterval {
        n,
        mean,
        std,
        half_width: t975(n as u32 - 1) * std / (n as f64).sqrt(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn t_quantiles_match_the_tables() {
        assert_eq!(t975(4), 2.776);
        assert_eq!(t975(1), 12.706);
        assert_eq!(t975(30), 2.042);
        assert!(t975(0).is_nan());
        // Beyond the table: t_{0.975,40} = 2.0211, 60: 2.0003, 120: 1.9799 (exact values).
        for (df, exact) in [(40, 2.021_075), (60, 2.000_298), (120, 1.979_930)] {
            assert!((t975(df) - exact).abs() < 1e-4, "df {df}: {}", t975(df));
        }
        // Decreasing in df, towards the normal quantile.
        for df in 1..200 {
            assert!(t975(df + 1) < t975(df), "df {df}");
            assert!(t975(df) > 1.959_96);
        }
    }

    #[test]
    fn interval_of_known_samples() {
        // 1..5: mean 3, s = sqrt(2.5), half-width 2.776 * sqrt(2.5) / sqrt(5) = 1.9629.
        let m = mean_interval(&[1.0, 2.0, 3.0, 4.0, 5.0]);
        assert_eq!(m.n, 5);
        assert!((m.mean - 3.0).abs() < 1e-12);
        assert!((m.std - 2.5f64.sqrt()).abs() < 1e-12);
        assert!((m.half_width - 2.776 * 0.5f64.sqrt()).abs() < 1e-12);
        // Identical replicates: no spread.
        let c = mean_interval(&[7.0; 5]);
        assert_eq!((c.mean, c.std, c.half_width), (7.0, 0.0, 0.0));
        // NaN (an unfinished run) is left out; one value has no interval.
        let one = mean_interval(&[f64::NAN, 4.0]);
        assert_eq!((one.n, one.mean), (1, 4.0));
        assert!(one.std.is_nan() && one.half_width.is_nan());
        assert_eq!(mean_interval(&[]).n, 0);
        assert!(mean_interval(&[]).mean.is_nan());
    }
}
