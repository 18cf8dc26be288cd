//! Physical quantities and their textual units.
//!
//! Simulated time is an integer count of picoseconds ([`Time`]). Picoseconds are fine
//! enough that a byte at 400 Gbit/s (20 ps) and at 1.6 Tbit/s (5 ps) is a whole number,
//! and a `u64` of them still covers 213 days of simulated time. Rates are integer bits per
//! second ([`Rate`]), sizes integer bytes. Serialization time is rounded up to the next
//! picosecond so that a link can never carry more than its rate.
//!
//! Scenario files write quantities as strings with units (`"100Gbps"`, `"2us"`, `"16KiB"`,
//! `"120km"`); the parsers here accept a number, optional spaces and a unit, and reject
//! anything else with a message that lists the units allowed.
//!
//! Rates have one grammar for scenario files and imported files alike
//! ([`rate_unit_bps`]): `b` is a bit and `B` a byte, as in ns-3, so `"100GBps"` is
//! 800 Gbit/s whether a scenario or an ns-3 topology file says it.

use std::fmt;

/// Simulated time in picoseconds.
pub type Time = u64;

/// Picoseconds per nanosecond.
pub const NS: Time = 1_000;
/// Picoseconds per microsecond.
pub const US: Time = 1_000_000;
/// Picoseconds per millisecond.
pub const MS: Time = 1_000_000_000;
/// Picoseconds per second.
pub const SEC: Time = 1_000_000_000_000;

/// Propagation delay of light in fibre: 5 ns per metre.
pub const PS_PER_METRE: Time = 5_000;

/// A link or sending rate in bits per second.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Rate(pub u64);

impl Rate {
    /// Gigabits per second.
    pub const fn gbps(g: u64) -> Rate {
        Rate(g * 1_000_000_000)
    }
    /// Bits per second.
    pub fn bps(self) -> u64 {
        self.0
    }
    /// Time to serialize `bytes` at this rate, rounded up to the picosecond.
    #[inline]
    pub fn tx_time(self, bytes: u64) -> Time {
        ser_time(bytes, self.0)
    }
}

/// Time to put `bytes` on a wire of `bps` bits per second, rounded up to the picosecond.
#[inline]
pub fn ser_time(bytes: u64, bps: u64) -> Time {
    // Up to about 2.3 MB (every frame) the product fits 64 bits: one division
    // instruction, where a 128-bit division is a library call (a NIC paces each data
    // packet by this).
    if bytes <= u64::MAX / (8 * SEC) {
        return (bytes * 8 * SEC).div_ceil(bps);
    }
    let num = bytes as u128 * 8 * SEC as u128;
    num.div_ceil(bps as u128) as Time
}

/// Time to send `bytes` at a fractional rate `bps` (used for paced senders whose rate
/// is a real number), rounded up to the picosecond.
#[inline]
pub fn ser_time_f(bytes: u64, bps: f64) -> Time {
    ((bytes as f64 * 8.0 * SEC as f64) / bps).ceil() as Time
}

impl fmt::Display for Rate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let b = self.0;
        if b.is_multiple_of(1_000_000_000) {
            write!(f, "{}Gbps", b / 1_000_000_000)
        } else if b.is_multiple_of(1_000_000) {
            write!(f, "{}Mbps", b / 1_000_000)
        } else {
            write!(f, "{}bps", b)
        }
    }
}

/// Formats a time in the largest unit that keeps it readable.
pub fn fmt_time(t: Time) -> String {
    if t >= SEC {
        format!("{:.3}s", t as f64 / SEC as f64)
    } else if t >= MS {
        format!("{:.3}ms", t as f64 / MS as f64)
    } else if t >= US {
        format!("{:.3}us", t as f64 / US as f64)
    } else {
        format!("{:.3}ns", t as f64 / NS as f64)
    }
}

/// Formats a byte count with binary prefixes.
pub fn fmt_bytes(b: u64) -> String {
    const K: u64 = 1024;
    if b >= K * K * K && b.is_multiple_of(K * K * K) {
        format!("{}GiB", b / (K * K * K))
    } else if b >= K * K && b.is_multiple_of(K * K) {
        format!("{}MiB", b / (K * K))
    } else if b >= K && b.is_multiple_of(K) {
        format!("{}KiB", b / K)
    } else {
        format!("{}B", b)
    }
}

/// `v / unit` as a decimal with no trailing zeros (`1.5`, `50`): exact, because `unit`
/// is a power of ten.
fn decimal(v: u64, unit: u64) -> String {
    let (whole, frac) = (v / unit, v % unit);
    if frac == 0 {
        return whole.to_string();
    }
    let digits = unit.ilog10() as usize;
    let f = format!("{frac:0digits$}");
    format!("{whole}.{}", f.trim_end_matches('0'))
}

/// A duration as a scenario file writes it, exactly: the largest of s, ms, us, ns, ps
/// that is not above it, with as many decimals as the value needs (`"1us"`, `"50us"`,
/// `"1.5ms"`, `"0ns"`); [`parse_time`] reads it back to the same picoseconds.
/// [`fmt_time`] rounds to three decimals for tables instead.
pub fn fmt_time_exact(t: Time) -> String {
    let (unit, name) = [(SEC, "s"), (MS, "ms"), (US, "us"), (NS, "ns"), (1, "ps")]
        .into_iter()
        .find(|&(u, _)| t >= u)
        .unwrap_or((NS, "ns"));
    format!("{}{name}", decimal(t, unit))
}

/// A size as a scenario file writes it, exactly: the shorter of the decimal form (B,
/// KB, MB, GB, TB: powers of 1000, with decimals where needed: `"32MB"`, `"1.5KB"`) and
/// a whole number of KiB, MiB or GiB (`"16KiB"`); the decimal one on a tie.
/// [`parse_bytes`] reads it back to the same bytes.
pub fn fmt_bytes_exact(b: u64) -> String {
    const DEC: [(u64, &str); 5] = [
        (1_000_000_000_000, "TB"),
        (1_000_000_000, "GB"),
        (1_000_000, "MB"),
        (1_000, "KB"),
        (1, "B"),
    ];
    let (unit, name) = DEC.into_iter().find(|&(u, _)| b >= u).unwrap_or((1, "B"));
    let dec = format!("{}{name}", decimal(b, unit));
    const K: u64 = 1024;
    let bin = [(K * K * K, "GiB"), (K * K, "MiB"), (K, "KiB")]
        .into_iter()
        .find(|&(u, _)| b >= u && b.is_multiple_of(u))
        .map(|(u, n)| format!("{}{n}", b / u));
    match bin {
        Some(bin) if bin.len() < dec.len() => bin,
        _ => dec,
    }
}

/// A rate as a scenario file writes it, exactly: the largest of Tbps, Gbps, Mbps, Kbps,
/// bps that is not above it, with decimals where needed (`"100Gbps"`, `"2.5Gbps"`);
/// [`parse_rate`] reads it back to the same bits per second.
pub fn fmt_rate_exact(r: Rate) -> String {
    let (unit, name) = [
        (1_000_000_000_000, "Tbps"),
        (1_000_000_000, "Gbps"),
        (1_000_000, "Mbps"),
        (1_000, "Kbps"),
        (1, "bps"),
    ]
    .into_iter()
    .find(|&(u, _)| r.0 >= u)
    .unwrap_or((1_000_000_000, "Gbps"));
    format!("{}{name}", decimal(r.0, unit))
}

fn split_number(s: &str) -> Option<(f64, &str)> {
    let s = s.trim();
    let end = s
        .char_indices()
        .find(|(_, c)| {
            !(c.is_ascii_digit() || *c == '.' || *c == 'e' || *c == 'E' || *c == '-' || *c == '+')
        })
        .map(|(i, _)| i)
        .unwrap_or(s.len());
    // "1e3" is a number but "1Gbps" must not eat the 'e' of a unit: back off while the
    // numeric prefix does not parse.
    let mut end = end;
    while end > 0 {
        if let Ok(v) = s[..end].parse::<f64>() {
            return Some((v, s[end..].trim()));
        }
        end -= 1;
    }
    None
}

fn scaled(v: f64, mult: f64, what: &str, s: &str, allowed: &str) -> Result<u64, String> {
    if !v.is_finite() {
        return Err(format!("`{s}` is not a finite {what}"));
    }
    if v < 0.0 {
        return Err(format!("`{s}`: a {what} cannot be negative"));
    }
    let x = v * mult;
    if x > u64::MAX as f64 / 2.0 {
        return Err(format!("`{s}` is too large a {what}"));
    }
    let r = x.round();
    if (x - r).abs() > 1e-6 * x.max(1.0) {
        return Err(format!(
            "`{s}` is not a whole number of the {what}'s base unit ({allowed})"
        ));
    }
    Ok(r as u64)
}

/// The units a rate may be written in, for messages.
pub const RATE_UNITS: &str = "a number with bps, Kbps, Mbps, Gbps or Tbps (bits per second; \
     also Kb/s ... and the shorthand K, M, G, T) or Bps, KBps, MBps, GBps, TBps (bytes per \
     second, x8), e.g. \"100Gbps\"";

/// The multiplier to bits per second of a rate unit, or `None` for no such unit.
///
/// This is the one rate grammar of fabricsim: scenario files and imported ns-3 topology
/// files both read rates through it, so `"100GBps"` is 800 Gbit/s everywhere (as ns-3's
/// `DataRate` reads it). A unit is a prefix and a suffix:
/// - prefix: none, `K`/`k`, `M`/`m`, `G`/`g`, `T`/`t` (x1000 each; a lowercase `m` is
///   mega too: a rate of milli-bits per second means nothing) or `Ki`, `Mi`, `Gi`, `Ti`
///   (x1024 each, as ns-3 allows);
/// - suffix: `bps` or `b/s` for bits per second, `Bps` or `B/s` for bytes per second
///   (x8): the case of the `b` decides, the only case that matters; or no suffix after a
///   prefix (`"25G"`: bits).
///
/// A unit whose `bps` is in capitals (`"GBPS"`) could be either and is rejected.
pub fn rate_unit_bps(unit: &str) -> Option<f64> {
    let (prefix, bytes) = if let Some(p) = unit.strip_suffix("bps").or(unit.strip_suffix("b/s")) {
        (p, false)
    } else if let Some(p) = unit.strip_suffix("Bps").or(unit.strip_suffix("B/s")) {
        (p, true)
    } else if !unit.is_empty() && unit.len() <= 2 {
        (unit, false)
    } else {
        return None;
    };
    let p = match prefix {
        "" if !unit.is_empty() => 1.0,
        "k" | "K" => 1e3,
        "m" | "M" => 1e6,
        "g" | "G" => 1e9,
        "t" | "T" => 1e12,
        "Ki" => 1024.0,
        "Mi" => 1024.0 * 1024.0,
        "Gi" => 1024.0 * 1024.0 * 1024.0,
        "Ti" => 1024.0 * 1024.0 * 1024.0 * 1024.0,
        _ => return None,
    };
    Some(if bytes { p * 8.0 } else { p })
}

/// Parses a rate such as `"100Gbps"`, `"400 Gbps"`, `"25G"`, `"40Mbps"`, `"12.5GBps"`
/// (bytes per second: 100 Gbit/s); the grammar is [`rate_unit_bps`]'s.
pub fn parse_rate(s: &str) -> Result<Rate, String> {
    const ALLOWED: &str = RATE_UNITS;
    let (v, unit) =
        split_number(s).ok_or_else(|| format!("`{s}` is not a rate: expected {ALLOWED}"))?;
    let mult = match rate_unit_bps(unit) {
        Some(m) => m,
        None if unit.to_ascii_lowercase().ends_with("bps") => {
            return Err(format!(
                "`{s}` has unknown rate unit `{unit}`: write bps (bits) or Bps (bytes, x8) \
                 after the prefix, e.g. \"100Gbps\""
            ))
        }
        None => {
            return Err(format!(
                "`{s}` has unknown rate unit `{unit}`: expected {ALLOWED}"
            ))
        }
    };
    if v.is_finite() && v * mult > MAX_RATE_BPS as f64 {
        return Err(format!("`{s}` is above 1 Pbps, the largest rate supported"));
    }
    scaled(v, mult, "rate", s, "bits per second").map(Rate)
}

/// Largest rate a scenario may give: 1 Pbps, far above any link, and small enough that
/// rate-times-delay products stay within 64 bits.
pub const MAX_RATE_BPS: u64 = 1_000_000_000_000_000;

/// Parses a duration such as `"2us"`, `"1.5 ms"`, `"300ns"`, `"10ps"`, `"1s"`.
pub fn parse_time(s: &str) -> Result<Time, String> {
    const ALLOWED: &str = "a number with ps, ns, us, ms or s, e.g. \"2us\"";
    let (v, unit) =
        split_number(s).ok_or_else(|| format!("`{s}` is not a duration: expected {ALLOWED}"))?;
    let mult = match unit {
        "ps" => 1.0,
        "ns" => NS as f64,
        "us" | "µs" => US as f64,
        "ms" => MS as f64,
        "s" => SEC as f64,
        _ => {
            return Err(format!(
                "`{s}` has unknown time unit `{unit}`: expected {ALLOWED}"
            ))
        }
    };
    scaled(v, mult, "duration", s, "picoseconds")
}

/// Parses a size such as `"16KiB"`, `"4096B"`, `"32MB"`, `"1.5 MiB"`. Decimal prefixes
/// (KB, MB, GB) are powers of ten, binary ones (KiB, MiB, GiB) powers of two.
pub fn parse_bytes(s: &str) -> Result<u64, String> {
    const ALLOWED: &str =
        "a number with B, KB, MB, GB (x1000) or KiB, MiB, GiB (x1024), e.g. \"16KiB\"";
    let (v, unit) =
        split_number(s).ok_or_else(|| format!("`{s}` is not a size: expected {ALLOWED}"))?;
    let mult = match unit {
        "" | "B" => 1.0,
        "KB" | "kB" => 1e3,
        "MB" => 1e6,
        "GB" => 1e9,
        "TB" => 1e12,
        "KiB" => 1024.0,
        "MiB" => 1024.0 * 1024.0,
        "GiB" => 1024.0 * 1024.0 * 1024.0,
        _ => {
            return Err(format!(
                "`{s}` has unknown size unit `{unit}`: expected {ALLOWED}"
            ))
        }
    };
    scaled(v, mult, "size", s, "bytes")
}

/// Parses a length such as `"120km"`, `"3m"`, `"50 cm"`, returning metres (fractional).
pub fn parse_length_m(s: &str) -> Result<f64, String> {
    const ALLOWED: &str = "a number with m, km or cm, e.g. \"120km\"";
    let (v, unit) =
        split_number(s).ok_or_else(|| format!("`{s}` is not a length: expected {ALLOWED}"))?;
    let mult = match unit {
        "m" => 1.0,
        "km" => 1000.0,
        "cm" => 0.01,
        _ => {
            return Err(format!(
                "`{s}` has unknown length unit `{unit}`: expected {ALLOWED}"
            ))
        }
    };
    if !v.is_finite() || v < 0.0 {
        return Err(format!("`{s}`: a length must be a non-negative number"));
    }
    Ok(v * mult)
}

/// Serde helpers: fields of scenario structs are written with units.
pub mod serde_units {
    use super::*;
    use serde::de::{self, Deserializer, Visitor};

    struct StrOrNum<F>(F, &'static str);

    impl<'de, T, F: Fn(&str) -> Result<T, String>> Visitor<'de> for StrOrNum<F> {
        type Value = T;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str(self.1)
        }
        fn visit_str<E: de::Error>(self, v: &str) -> Result<T, E> {
            (self.0)(v).map_err(E::custom)
        }
        fn visit_i64<E: de::Error>(self, v: i64) -> Result<T, E> {
            if v < 0 {
                return Err(E::custom(format!("{v} is negative; expected {}", self.1)));
            }
            Err(E::custom(format!(
                "{v} has no unit; expected {} (write it as a string with a unit)",
                self.1
            )))
        }
        fn visit_u64<E: de::Error>(self, v: u64) -> Result<T, E> {
            self.visit_i64(v as i64)
        }
        fn visit_f64<E: de::Error>(self, v: f64) -> Result<T, E> {
            Err(E::custom(format!(
                "{v} has no unit; expected {} (write it as a string with a unit)",
                self.1
            )))
        }
    }

    /// A rate string.
    pub fn rate<'de, D: Deserializer<'de>>(d: D) -> Result<Rate, D::Error> {
        d.deserialize_any(StrOrNum(parse_rate, "a rate such as \"100Gbps\""))
    }
    /// A string read by `parse` (a quantity with a unit, or a name a model resolves);
    /// bare numbers are refused as the unit parsers refuse them.
    pub fn str_with<'de, D: Deserializer<'de>, T>(
        d: D,
        parse: impl Fn(&str) -> Result<T, String>,
        expecting: &'static str,
    ) -> Result<T, D::Error> {
        d.deserialize_any(StrOrNum(parse, expecting))
    }
    /// A duration string.
    pub fn time<'de, D: Deserializer<'de>>(d: D) -> Result<Time, D::Error> {
        d.deserialize_any(StrOrNum(parse_time, "a duration such as \"2us\""))
    }
    /// A size string; bare integers are bytes.
    pub fn bytes<'de, D: Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = u64;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a size such as \"16KiB\" or a whole number of bytes")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<u64, E> {
                parse_bytes(v).map_err(E::custom)
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<u64, E> {
                u64::try_from(v).map_err(|_| E::custom(format!("{v} bytes is negative")))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<u64, E> {
                Ok(v)
            }
        }
        d.deserialize_any(V)
    }

    /// Optional variants of the above.
    pub fn opt_time<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Time>, D::Error> {
        time(d).map(Some)
    }
    /// Optional rate.
    pub fn opt_rate<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Rate>, D::Error> {
        rate(d).map(Some)
    }
    /// Optional size.
    pub fn opt_bytes<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
        bytes(d).map(Some)
    }
    /// Optional length (metres).
    pub fn opt_length<'de, D: Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
        d.deserialize_any(StrOrNum(parse_length_m, "a length such as \"120km\""))
            .map(Some)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_parse() {
        assert_eq!(parse_rate("100Gbps").unwrap(), Rate::gbps(100));
        assert_eq!(parse_rate("400 Gbps").unwrap(), Rate::gbps(400));
        assert_eq!(parse_rate("40Mbps").unwrap(), Rate(40_000_000));
        assert_eq!(parse_rate("2.5Gbps").unwrap(), Rate(2_500_000_000));
        assert!(parse_rate("-1Gbps").is_err());
        assert!(parse_rate("fast").is_err());
        assert!(parse_rate("10Gbit")
            .unwrap_err()
            .contains("unknown rate unit"));
        assert_eq!(parse_rate("1000Tbps").unwrap(), Rate(MAX_RATE_BPS));
        assert!(parse_rate("1001Tbps").unwrap_err().contains("1 Pbps"));
        assert!(parse_rate("1e30Gbps").unwrap_err().contains("1 Pbps"));
    }

    #[test]
    fn rate_units_bits_and_bytes() {
        // The case of the `b` decides: bits, or bytes (x8); the prefix's case does not.
        assert_eq!(parse_rate("100GBps").unwrap(), Rate::gbps(800));
        assert_eq!(parse_rate("12.5GB/s").unwrap(), Rate::gbps(100));
        assert_eq!(parse_rate("100MBps").unwrap(), Rate(800_000_000));
        assert_eq!(parse_rate("1KBps").unwrap(), Rate(8_000));
        assert_eq!(parse_rate("100gbps").unwrap(), Rate::gbps(100));
        assert_eq!(parse_rate("100Gb/s").unwrap(), Rate::gbps(100));
        assert_eq!(parse_rate("25G").unwrap(), Rate::gbps(25));
        assert_eq!(parse_rate("1Kbps").unwrap(), Rate(1_000));
        assert_eq!(parse_rate("1Kibps").unwrap(), Rate(1_024));
        assert_eq!(parse_rate("1GiBps").unwrap(), Rate(8 << 30));
        // Capital BPS could be bits or bytes: rejected with a hint.
        let e = parse_rate("100GBPS").unwrap_err();
        assert!(e.contains("bps (bits) or Bps (bytes"), "{e}");
        assert!(parse_rate("100").is_err());
        assert!(parse_rate("100 B").is_err());
    }

    #[test]
    fn times_parse() {
        assert_eq!(parse_time("2us").unwrap(), 2 * US);
        assert_eq!(parse_time("1.5ms").unwrap(), 1_500 * US);
        assert_eq!(parse_time("300 ns").unwrap(), 300 * NS);
        assert_eq!(parse_time("5ps").unwrap(), 5);
        assert!(parse_time("0.5ps").is_err());
        assert!(parse_time("3 fortnights").is_err());
    }

    #[test]
    fn sizes_parse() {
        assert_eq!(parse_bytes("16KiB").unwrap(), 16384);
        assert_eq!(parse_bytes("32MB").unwrap(), 32_000_000);
        assert_eq!(parse_bytes("4096").unwrap(), 4096);
        assert_eq!(parse_bytes("512 MiB").unwrap(), 512 << 20);
        assert!(parse_bytes("1.5B").is_err());
    }

    #[test]
    fn exact_forms_are_the_units_scenarios_use() {
        assert_eq!(fmt_time_exact(US), "1us");
        assert_eq!(fmt_time_exact(50 * US), "50us");
        assert_eq!(fmt_time_exact(1_500 * US), "1.5ms");
        assert_eq!(fmt_time_exact(1_000 * MS), "1s");
        assert_eq!(fmt_time_exact(1_234_567), "1.234567us");
        assert_eq!(fmt_time_exact(5), "5ps");
        assert_eq!(fmt_time_exact(0), "0ns");
        assert_eq!(fmt_bytes_exact(32_000_000), "32MB");
        assert_eq!(fmt_bytes_exact(512_000), "512KB");
        assert_eq!(fmt_bytes_exact(512 << 10), "512KiB");
        assert_eq!(fmt_bytes_exact(16 << 20), "16MiB");
        assert_eq!(fmt_bytes_exact(1500), "1.5KB");
        assert_eq!(fmt_bytes_exact(1000), "1KB");
        assert_eq!(fmt_bytes_exact(48), "48B");
        assert_eq!(fmt_bytes_exact(0), "0B");
        assert_eq!(fmt_rate_exact(Rate::gbps(100)), "100Gbps");
        assert_eq!(fmt_rate_exact(Rate(2_500_000_000)), "2.5Gbps");
        assert_eq!(fmt_rate_exact(Rate(1_600_000_000_000)), "1.6Tbps");
        assert_eq!(fmt_rate_exact(Rate(40_000_000)), "40Mbps");
        assert_eq!(fmt_rate_exact(Rate(0)), "0Gbps");
    }

    #[test]
    fn exact_forms_parse_back_to_the_same_value() {
        // Edge values and a spread of awkward ones (odd digits at every scale).
        let mut vals: Vec<u64> = vec![0, 1, 7, 999, 1000, 1001, 1023, 1024, 1025];
        let mut x: u64 = 1;
        while x < 1 << 50 {
            vals.extend([x, x + 1, x * 3 + 7, x * 1000, x * 1024]);
            x = x * 7 + 3;
        }
        // Up to 2^50 (1126 s, 1 PB): the parsers read through an f64, exact to about
        // 2^53, far beyond any default.
        for v in vals.into_iter().filter(|&v| v <= 1 << 50) {
            assert_eq!(parse_time(&fmt_time_exact(v)), Ok(v), "{v} ps");
            assert_eq!(parse_bytes(&fmt_bytes_exact(v)), Ok(v), "{v} B");
            if v <= MAX_RATE_BPS {
                assert_eq!(parse_rate(&fmt_rate_exact(Rate(v))), Ok(Rate(v)), "{v} bps");
            }
        }
    }

    #[test]
    fn serialization_time_is_exact_or_rounded_up() {
        // 1000 B at 100 Gbps = 80 ns exactly.
        assert_eq!(ser_time(1000, 100_000_000_000), 80 * NS);
        // 1 B at 3 bps = 2.666.. s, rounded up.
        assert_eq!(ser_time(1, 3), 2_666_666_666_667);
        assert_eq!(parse_length_m("120km").unwrap(), 120_000.0);
    }

    #[test]
    fn serialization_time_is_the_same_on_both_sides_of_the_64_bit_path() {
        let exact =
            |bytes: u64, bps: u64| (bytes as u128 * 8 * SEC as u128).div_ceil(bps as u128) as Time;
        let edge = u64::MAX / (8 * SEC);
        for bytes in [0, 1, 64, 4154, 65_535, edge - 1, edge, edge + 1, 1 << 40] {
            for bps in [1, 3, 999_999_937, 25_000_000_000, 100_000_000_000, 1 << 62] {
                assert_eq!(
                    ser_time(bytes, bps),
                    exact(bytes, bps),
                    "{bytes} B at {bps}"
                );
            }
        }
    }
}
