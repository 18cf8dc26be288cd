//! RED-style ECN marking as DCQCN switches do it (Zhu et al., SIGCOMM 2015, section 3.1;
//! RFC 3168 for the codepoints): at dequeue, with q bytes queued at the egress
//! (port, priority), mark with probability 0 below Kmin, rising linearly to Pmax at Kmax,
//! and 1 above Kmax.
//!
//! `ingress_bias` models the switch document 002 met ("one vendor's switch marked ECN with
//! unequal probability for equal-rate flows arriving on different ports"): a packet that
//! came in on a listed port is marked with the RED probability times that port's factor
//! (capped at 1), so an unfair switch is data, not code. Unset (the default) changes no
//! draw and no result.

use crate::base::param::{Checked, Described, Param, ParamError};
use crate::base::units::serde_units as su;
use crate::base::units::{fmt_bytes_exact, Rate};
use serde::Deserialize;

/// RED-style ECN marking at egress dequeue.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EcnCfg {
    /// Marking on or off.
    #[serde(default = "yes")]
    pub enabled: bool,
    /// Parameter profile: "ns3" (Kmin 400 KB, Kmax 1600 KB, Pmax 0.2 at 100G, scaled by
    /// rate) or "paper" (Kmin 5 KB, Kmax 200 KB, Pmax 0.01).
    #[serde(default = "d_ecn_profile")]
    pub profile: EcnProfile,
    /// Below this queue length nothing is marked (overrides the profile).
    #[serde(default, deserialize_with = "su::opt_bytes")]
    pub kmin: Option<u64>,
    /// Above this everything is marked (overrides the profile).
    #[serde(default, deserialize_with = "su::opt_bytes")]
    pub kmax: Option<u64>,
    /// Marking probability at Kmax (overrides the profile).
    #[serde(default)]
    pub pmax: Option<f64>,
    /// Per-ingress-port multiplier of the marking probability, by `"<switch>:<port>"`
    /// (local indices as in `ports.csv`): the unfair switch of document 002. Unlisted
    /// ports mark with factor 1.
    #[serde(default)]
    pub ingress_bias: std::collections::BTreeMap<String, f64>,
}

/// ECN parameter profile.
#[derive(Clone, Copy, Debug, Deserialize, serde::Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum EcnProfile {
    /// The HPCC ns-3 module's values, scaled with the port rate.
    Ns3,
    /// The DCQCN paper's values.
    Paper,
}

fn d_ecn_profile() -> EcnProfile {
    EcnProfile::Ns3
}

impl Default for EcnCfg {
    fn default() -> Self {
        EcnCfg {
            enabled: true,
            profile: d_ecn_profile(),
            kmin: None,
            kmax: None,
            pmax: None,
            ingress_bias: Default::default(),
        }
    }
}

fn yes() -> bool {
    true
}

impl Described for EcnCfg {
    const ABOUT: &'static str = "RED marking at egress dequeue (thresholds per 100Gbps port)";
    fn params() -> Vec<Param> {
        let d = EcnCfg::default();
        let at = |profile| {
            RedMarker::from_cfg(
                &EcnCfg {
                    profile,
                    ..EcnCfg::default()
                },
                Rate::gbps(100),
            )
        };
        let (ns3, paper) = (at(EcnProfile::Ns3), at(EcnProfile::Paper));
        let m = at(d.profile);
        vec![
            Param::plain("enabled", d.enabled, "marking on or off"),
            Param::choice(
                "profile",
                &d.profile,
                "the HPCC ns-3 module's, scaled with the port rate, or the DCQCN paper's",
            ),
            Param::bytes(
                "kmin",
                m.kmin,
                format!(
                    "no marking below; ns3 {}, paper {}",
                    fmt_bytes_exact(ns3.kmin),
                    fmt_bytes_exact(paper.kmin)
                ),
            ),
            Param::bytes(
                "kmax",
                m.kmax,
                format!(
                    "certain marking above; ns3 {}, paper {}",
                    fmt_bytes_exact(ns3.kmax),
                    fmt_bytes_exact(paper.kmax)
                ),
            ),
            Param::plain(
                "pmax",
                m.pmax,
                format!(
                    "probability at kmax; ns3 {}, paper {}",
                    ns3.pmax, paper.pmax
                ),
            ),
            Param::new(
                "ingress_bias",
                "{}",
                "{ \"<switch>:<port>\" = factor, ... }: marking probability x factor (>= 0) for \
                 packets that came in on that port (document 002's unfair switch)",
            ),
        ]
    }
}

impl EcnCfg {
    /// Checks the settings; fields are named relative to `[fabric.ecn]`.
    pub fn validate(&self) -> Checked {
        for (port, &b) in &self.ingress_bias {
            if !(b.is_finite() && b >= 0.0) {
                return Err(ParamError::new(
                    format!("ingress_bias.\"{port}\""),
                    format!(
                        "{b} is not a marking bias: a factor in [0, inf) (0 never marks packets from \
                         that port, 1 is unbiased, 2 doubles the probability)"
                    ),
                ));
            }
        }
        if let Some(p) = self.pmax {
            if !(0.0..=1.0).contains(&p) {
                return Err(ParamError::new("pmax", "a probability between 0 and 1"));
            }
        }
        // Compare the thresholds the profile resolves to (at the 100 Gbit/s they are given
        // for), so that a kmin set above the profile's kmax is caught too.
        let m = RedMarker::from_cfg(self, Rate::gbps(100));
        if m.kmin > m.kmax {
            let (field, set) = if self.kmin.is_some() {
                ("kmin", "kmax")
            } else {
                ("kmax", "kmin")
            };
            return Err(ParamError::new(
                field,
                format!(
                    "kmin {} B is above kmax {} B ({set} from the {} profile, at 100 Gbps, \
                     unless set): marking starts at kmin and is certain at kmax",
                    m.kmin,
                    m.kmax,
                    match self.profile {
                        EcnProfile::Ns3 => "ns3",
                        EcnProfile::Paper => "paper",
                    }
                ),
            ));
        }
        Ok(())
    }
}

/// Marking thresholds of one egress port.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RedMarker {
    /// No marking at or below this many bytes.
    pub kmin: u64,
    /// Certain marking above this many bytes.
    pub kmax: u64,
    /// Probability at Kmax.
    pub pmax: f64,
    /// Marking enabled.
    pub enabled: bool,
}

impl RedMarker {
    /// Thresholds for a port of rate `rate` under `cfg`. The ns-3 profile's thresholds are
    /// given for 100 Gbit/s and scale with the rate, so a 25G port marks at a quarter of the
    /// queue a 100G port does (same queueing delay).
    pub fn from_cfg(cfg: &EcnCfg, rate: Rate) -> RedMarker {
        let (kmin, kmax, pmax) = match cfg.profile {
            EcnProfile::Ns3 => {
                let s = rate.0 as f64 / 100e9;
                ((400_000.0 * s) as u64, (1_600_000.0 * s) as u64, 0.2)
            }
            EcnProfile::Paper => (5_000, 200_000, 0.01),
        };
        RedMarker {
            kmin: cfg.kmin.unwrap_or(kmin),
            kmax: cfg.kmax.unwrap_or(kmax),
            pmax: cfg.pmax.unwrap_or(pmax),
            enabled: cfg.enabled,
        }
    }

    /// Marking probability with `q` bytes queued.
    #[inline]
    pub fn probability(&self, q: u64) -> f64 {
        if !self.enabled || q <= self.kmin {
            0.0
        } else if q <= self.kmax {
            if self.kmax == self.kmin {
                1.0
            } else {
                self.pmax * (q - self.kmin) as f64 / (self.kmax - self.kmin) as f64
            }
        } else {
            1.0
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn probability_is_piecewise_linear() {
        let m = RedMarker {
            kmin: 100,
            kmax: 300,
            pmax: 0.2,
            enabled: true,
        };
        assert_eq!(m.probability(50), 0.0);
        assert_eq!(m.probability(100), 0.0);
        assert!((m.probability(200) - 0.1).abs() < 1e-12);
        assert!((m.probability(300) - 0.2).abs() < 1e-12);
        assert_eq!(m.probability(301), 1.0);
    }

    #[test]
    fn a_bias_outside_zero_to_infinity_names_its_port() {
        for b in [-0.5, f64::NAN, f64::INFINITY] {
            let mut cfg = EcnCfg::default();
            cfg.ingress_bias.insert("sw0:1".into(), 1.0);
            cfg.ingress_bias.insert("sw0:2".into(), b);
            let e = cfg.validate().unwrap_err();
            assert_eq!(e.field, "ingress_bias.\"sw0:2\"", "{e}");
            assert!(e.message.contains("[0, inf)"), "{e}");
        }
        let mut ok = EcnCfg::default();
        ok.ingress_bias.insert("sw0:1".into(), 0.0);
        ok.ingress_bias.insert("sw0:2".into(), 3.5);
        assert!(ok.validate().is_ok());
    }

    #[test]
    fn ns3_profile_scales_with_rate() {
        let cfg = EcnCfg::default();
        let m25 = RedMarker::from_cfg(&cfg, Rate::gbps(25));
        let m100 = RedMarker::from_cfg(&cfg, Rate::gbps(100));
        assert_eq!(m25.kmin * 4, m100.kmin);
        assert_eq!(m100.kmax, 1_600_000);
    }
}
