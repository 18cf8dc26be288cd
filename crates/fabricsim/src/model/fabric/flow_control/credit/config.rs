//! `[fabric.credit]`: the settings of credit-based flow control, with their defaults and
//! checks (the model in [`super`] reads them).

use crate::base::param::{Checked, Described, Param, ParamError};
use crate::base::units::serde_units as su;
use crate::base::units::{fmt_bytes, Time, US};
use crate::model::fabric::port::N_PRIO;
use serde::Deserialize;

/// Credit-based flow control with virtual channels (document 003).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CreditCfg {
    /// Credit-based flow control instead of PFC (set `fabric.pfc.enabled = false`).
    #[serde(default)]
    pub enabled: bool,
    /// Virtual channels per port (1, or an even count up to 8: data and control classes).
    #[serde(default = "d_vcs")]
    pub vcs: u32,
    /// Bytes per flit.
    #[serde(default = "d_flit", deserialize_with = "su::bytes")]
    pub flit_bytes: u64,
    /// Flits per block; a block is the credit unit.
    #[serde(default = "d_fpb")]
    pub flits_per_block: u64,
    /// Input buffer private to each (input port, VC).
    #[serde(default = "d_private", deserialize_with = "su::bytes")]
    pub private: u64,
    /// Input buffer per input port shared by its VCs.
    #[serde(default = "d_shared", deserialize_with = "su::bytes")]
    pub shared: u64,
    /// Virtual cut-through (with the switch to store-and-forward); false: always
    /// store-and-forward.
    #[serde(default = "yes")]
    pub cut_through: bool,
    /// Congestion pre-sensing: adaptive routing also weighs how fast each candidate's
    /// downstream has been returning credits.
    #[serde(default)]
    pub presense: bool,
    /// Time constant of the pre-sensing's count of recent credit returns [recon].
    #[serde(default = "d_presense_window", deserialize_with = "su::time")]
    pub presense_window: Time,
}

fn d_presense_window() -> Time {
    US
}

fn yes() -> bool {
    true
}
fn d_vcs() -> u32 {
    4
}
fn d_flit() -> u64 {
    16
}
fn d_fpb() -> u64 {
    4
}
fn d_private() -> u64 {
    5 * 1024
}
fn d_shared() -> u64 {
    32 * 1024
}

impl Default for CreditCfg {
    fn default() -> Self {
        CreditCfg {
            enabled: false,
            vcs: d_vcs(),
            flit_bytes: d_flit(),
            flits_per_block: d_fpb(),
            private: d_private(),
            shared: d_shared(),
            cut_through: true,
            presense: false,
            presense_window: d_presense_window(),
        }
    }
}

impl Described for CreditCfg {
    const ABOUT: &'static str =
        "credit-based flow control with virtual channels and virtual cut-through (document 003)";
    fn params() -> Vec<Param> {
        let d = CreditCfg::default();
        vec![
            Param::plain(
                "enabled",
                d.enabled,
                "credits instead of PFC (set fabric.pfc.enabled = false)",
            ),
            Param::plain(
                "vcs",
                d.vcs,
                "virtual channels: 1, or data and control classes of vcs / 2 levels",
            ),
            Param::bytes("flit_bytes", d.flit_bytes, "bytes per flit [paper]"),
            Param::plain(
                "flits_per_block",
                d.flits_per_block,
                "flits per block, the credit unit [paper]",
            ),
            Param::bytes(
                "private",
                d.private,
                "input buffer per (input port, VC); holds a maximal packet [recon]",
            ),
            Param::bytes(
                "shared",
                d.shared,
                "input buffer per input port shared by its VCs [recon]",
            ),
            Param::plain(
                "cut_through",
                d.cut_through,
                "VCT, store-and-forward where an input is slower than an output; false: SAF",
            ),
            Param::plain(
                "presense",
                d.presense,
                "congestion pre-sensing: adaptive routing weighs the downstream's credit return rate",
            ),
            Param::time(
                "presense_window",
                d.presense_window,
                "time constant of the recent credit returns pre-sensing counts (at least 1ns) [recon]",
            ),
        ]
    }
}

impl CreditCfg {
    /// Bytes per credit.
    pub fn block(&self) -> u64 {
        self.flit_bytes.saturating_mul(self.flits_per_block)
    }

    /// Checks the fields that need nothing else, whether credits are enabled or not (a
    /// value no credit model could run with is a mistake even while it is unused); fields
    /// are named relative to `[fabric.credit]`.
    pub fn validate_fields(&self) -> Checked {
        let e = |f: &str, m: String| Err(ParamError::new(f, m));
        if self.vcs == 0 || self.vcs as usize > N_PRIO || (self.vcs > 1 && self.vcs % 2 == 1) {
            return e(
                "vcs",
                format!(
                    "{} virtual channels: 1, or an even count up to {N_PRIO} (a data and a control class of vcs / 2 levels each)",
                    self.vcs
                ),
            );
        }
        if self.presense {
            crate::base::floors::at_least(
                "presense_window",
                self.presense_window,
                crate::base::floors::TIMER,
                "pre-sensing averages credit returns over it",
            )?;
        }
        if self.flit_bytes == 0 {
            return e("flit_bytes", "must be at least 1 byte".into());
        }
        if self.flits_per_block == 0 {
            return e("flits_per_block", "must be at least 1".into());
        }
        Ok(())
    }

    /// Checks the settings for packets of at most `max_packet` wire bytes; fields are
    /// named relative to `[fabric.credit]`.
    pub fn validate(&self, max_packet: u64) -> Checked {
        let e = |f: &str, m: String| Err(ParamError::new(f, m));
        self.validate_fields()?;
        if self.presense && self.presense_window == 0 {
            return e(
                "presense_window",
                "must be positive: pre-sensing averages credit returns over it".into(),
            );
        }
        let block = self.block();
        let buffer = self
            .private
            .saturating_mul(self.vcs as u64)
            .saturating_add(self.shared);
        if block > self.private {
            return e(
                "flits_per_block",
                format!(
                    "a credit unit of {} (flit_bytes x flits_per_block) is larger than the input buffer's private part of {} per VC ({} per input port in all)",
                    fmt_bytes(block),
                    fmt_bytes(self.private),
                    fmt_bytes(buffer)
                ),
            );
        }
        for (f, v) in [("private", self.private), ("shared", self.shared)] {
            if v % block != 0 {
                return e(
                    f,
                    format!(
                        "{} is not a whole number of credit units of {} (flit_bytes x flits_per_block)",
                        fmt_bytes(v),
                        fmt_bytes(block)
                    ),
                );
            }
            if v / block > u32::MAX as u64 / 2 {
                return e(f, format!("{} credit units: too many", v / block));
            }
        }
        let need = max_packet.div_ceil(block) * block;
        if self.private < need {
            return e(
                "private",
                format!(
                    "{} per (input port, VC) cannot hold one maximal packet of {max_packet} B (MTU, headers and INT records; {} in credit units): each VC must be able to move a packet on its own credits, or a VC holding the shared pool could block another",
                    fmt_bytes(self.private),
                    fmt_bytes(need)
                ),
            );
        }
        Ok(())
    }
}
