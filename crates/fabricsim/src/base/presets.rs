//! Hardware presets quoted by document 002 ("RoCE analysis for HPC"): switch latencies
//! and per-packet header formats, as data a scenario names instead of numbers.
//!
//! `fabric.switch_latency` takes a duration or a switch's name (`"sn2410"`), and
//! `transport.header` a byte count or a header format's name (`"rocev2"`, `"ib"`,
//! `"mini_packet"`). The values are the document's figures, not measurements of ours:
//! vendor data sheets (Mellanox SN2410, SN3000, SB7800, QM8700) and published averages
//! (Cray Aries, Slingshot Rosetta) as the document quotes them. A name resolves when the
//! scenario is read, so everything downstream sees a plain duration or byte count, and
//! `scenario.resolved.toml` keeps the name. A new preset is one entry in [`SWITCHES`] or
//! [`HEADERS`].

use crate::base::units::{fmt_time_exact, parse_bytes, parse_time, Time, NS};

/// A switch whose forwarding latency the document quotes.
pub struct SwitchPreset {
    /// The name scenarios write (lower case).
    pub name: &'static str,
    /// Port-to-port latency.
    pub latency: Time,
    /// What it is, and where the figure comes from.
    pub about: &'static str,
}

/// Every switch preset, in the document's order.
pub static SWITCHES: &[SwitchPreset] = &[
    SwitchPreset {
        name: "sn2410",
        latency: 300 * NS,
        about: "Mellanox SN2410, 25/100G Ethernet (official figure; the RoCE switch of the \
                document's osu_latency test)",
    },
    SwitchPreset {
        name: "sn3000",
        latency: 425 * NS,
        about: "Mellanox SN3000 series, 200G Ethernet (official figure)",
    },
    SwitchPreset {
        name: "sb7800",
        latency: 90 * NS,
        about: "Mellanox SB7800, InfiniBand EDR (official figure; stands in for the CS7520 \
                of the document's test, whose latency is not published)",
    },
    SwitchPreset {
        name: "qm8700",
        latency: 130 * NS,
        about: "Mellanox QM8700, InfiniBand HDR (official figure)",
    },
    SwitchPreset {
        name: "aries",
        latency: 100 * NS,
        about: "Cray XC Aries (\"about 100 ns\"; the document gives Tianhe-2A's switch the \
                same)",
    },
    SwitchPreset {
        name: "rosetta",
        latency: 350 * NS,
        about: "HPE Slingshot Rosetta (average, \"about 350 ns\")",
    },
];

/// A per-packet header format: the bytes a packet carries besides its payload.
pub struct HeaderFormat {
    /// The name scenarios write.
    pub name: &'static str,
    /// Header and trailer bytes per packet.
    pub bytes: u64,
    /// Its parts, as the document counts them.
    pub about: &'static str,
}

/// Every header format the document counts for a 1-byte payload.
pub static HEADERS: &[HeaderFormat] = &[
    HeaderFormat {
        name: "rocev2",
        bytes: 58,
        about: "RoCEv2: 14 MAC + 4 CRC + 20 IPv4 + 8 UDP + 12 BTH",
    },
    HeaderFormat {
        name: "ib",
        bytes: 26,
        about: "InfiniBand, one subnet: 8 LRH + 6 CRC + 12 BTH (no GRH)",
    },
    HeaderFormat {
        name: "mini_packet",
        bytes: 8,
        about: "Tianhe-1A mini-packet header",
    },
];

/// The switch preset `name`.
pub fn switch(name: &str) -> Option<&'static SwitchPreset> {
    SWITCHES.iter().find(|p| p.name == name)
}

/// The header format `name`.
pub fn header(name: &str) -> Option<&'static HeaderFormat> {
    HEADERS.iter().find(|h| h.name == name)
}

/// `"a" (x), "b" (y)`: names with their values, for notes and error messages.
fn listed<T>(items: &[T], name: fn(&T) -> &'static str, value: fn(&T) -> String) -> String {
    items
        .iter()
        .map(|i| format!("\"{}\" ({})", name(i), value(i)))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The switch presets as `"sn2410" (300ns), ...`.
pub fn switch_names() -> String {
    listed(SWITCHES, |p| p.name, |p| fmt_time_exact(p.latency))
}

/// The header formats as `"rocev2" (58 B), ...`.
pub fn header_names() -> String {
    listed(HEADERS, |h| h.name, |h| format!("{} B", h.bytes))
}

/// A switch latency: a duration, or a preset's name.
pub fn parse_latency(s: &str) -> Result<Time, String> {
    if let Some(p) = switch(s) {
        return Ok(p.latency);
    }
    parse_time(s).map_err(|_| {
        format!(
            "`{s}` is neither a duration (\"300ns\") nor a switch preset: use one of {}{}",
            switch_names(),
            crate::base::suggest::did_you_mean(s, SWITCHES.iter().map(|p| p.name))
        )
    })
}

/// Header bytes: a size, or a header format's name.
pub fn parse_header(s: &str) -> Result<u64, String> {
    if let Some(h) = header(s) {
        return Ok(h.bytes);
    }
    parse_bytes(s).map_err(|_| {
        format!(
            "`{s}` is neither a size (\"58B\", or a number of bytes) nor a header format: use one of {}{}",
            header_names(),
            crate::base::suggest::did_you_mean(s, HEADERS.iter().map(|h| h.name))
        )
    })
}

/// Serde readers for the fields that take a preset.
pub mod serde_presets {
    use serde::de::{self, Deserializer, Visitor};
    use std::fmt;

    /// `fabric.switch_latency`: a duration string or a switch preset's name.
    pub fn latency<'de, D: Deserializer<'de>>(d: D) -> Result<crate::base::units::Time, D::Error> {
        crate::base::units::serde_units::str_with(
            d,
            super::parse_latency,
            "a duration such as \"300ns\" or a switch preset such as \"sn2410\"",
        )
    }

    /// `transport.header`: bytes (a whole number or a size string) or a header format's
    /// name.
    pub fn header<'de, D: Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = u64;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a number of bytes, a size such as \"58B\", or a header format such as \"rocev2\"")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<u64, E> {
                super::parse_header(v).map_err(E::custom)
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
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn presets_are_the_documents_figures() {
        // Document 002: SN2410 300 ns, SN3000 425 ns, SB7800 90 ns, QM8700 130 ns,
        // Aries ~100 ns, Rosetta ~350 ns; headers for 1 B: 58, 26 and 8 bytes.
        let lat: Vec<(&str, Time)> = SWITCHES.iter().map(|p| (p.name, p.latency)).collect();
        assert_eq!(
            lat,
            [
                ("sn2410", 300 * NS),
                ("sn3000", 425 * NS),
                ("sb7800", 90 * NS),
                ("qm8700", 130 * NS),
                ("aries", 100 * NS),
                ("rosetta", 350 * NS)
            ]
        );
        let hdr: Vec<(&str, u64)> = HEADERS.iter().map(|h| (h.name, h.bytes)).collect();
        assert_eq!(hdr, [("rocev2", 58), ("ib", 26), ("mini_packet", 8)]);
        // RoCEv2's 58 B is the simulator's default header.
        assert_eq!(
            crate::model::transport::config::TransportCfg::default().header,
            58
        );
    }

    #[test]
    fn names_and_quantities_both_parse_and_a_typo_lists_the_choices() {
        assert_eq!(parse_latency("qm8700"), Ok(130 * NS));
        assert_eq!(parse_latency("250ns"), Ok(250 * NS));
        let e = parse_latency("sm2410").unwrap_err();
        assert!(
            e.contains("\"sn2410\" (300ns)") && e.contains("did you mean"),
            "{e}"
        );
        assert_eq!(parse_header("mini_packet"), Ok(8));
        assert_eq!(parse_header("40B"), Ok(40));
        let e = parse_header("infiniband").unwrap_err();
        assert!(e.contains("\"ib\" (26 B)"), "{e}");
    }
}
