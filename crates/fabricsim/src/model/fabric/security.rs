//! Link-layer security: what encrypting every link costs the fabric.
//!
//! Three modes, per link (a custom topology's link may override the fabric's mode):
//! - IEEE 802.1AE MACsec adds a SecTAG and an ICV (16 + 16 bytes) to every frame;
//! - an IPsec ESP tunnel adds its header, trailer and ICV to every IP packet;
//! - PHYSec (document 000) encrypts at the PCS: no bytes per frame, but the segment framing
//!   (S, D and T blocks among the 66-bit blocks) takes a fraction of the line rate, and
//!   each hop adds a latency. The fractions come from the `physec` crate's overhead model.
//!
//! PFC frames are link-local MAC control frames and carry no security bytes.

use crate::base::param::{Checked, Described, Param, ParamError};
use crate::base::units::serde_units as su;
use crate::base::units::{Time, NS};
use serde::Deserialize;

pub use crate::model::topology::SecurityMode;

/// Security settings.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SecurityCfg {
    /// Mode on every link.
    #[serde(default = "d_sec_mode")]
    pub mode: SecurityMode,
    /// MACsec bytes per frame (SecTAG 16 + ICV 16).
    #[serde(default = "d_macsec", deserialize_with = "su::bytes")]
    pub macsec_bytes: u64,
    /// IPsec ESP tunnel bytes per packet.
    #[serde(default = "d_ipsec", deserialize_with = "su::bytes")]
    pub ipsec_bytes: u64,
    /// PHYSec encryption segment length in 66-bit blocks.
    #[serde(default = "d_physec_seg")]
    pub physec_segment_blocks: u64,
    /// PHYSec latency added per hop (the document claims ~100 ns).
    #[serde(default = "d_physec_lat", deserialize_with = "su::time")]
    pub physec_latency: Time,
}

fn d_sec_mode() -> SecurityMode {
    SecurityMode::None
}
fn d_macsec() -> u64 {
    physec::overhead::MACSEC_BYTES_PER_FRAME as u64
}
fn d_ipsec() -> u64 {
    physec::overhead::IPSEC_ESP_TUNNEL_BYTES_PER_PACKET as u64
}
fn d_physec_seg() -> u64 {
    1024
}
fn d_physec_lat() -> Time {
    physec::overhead::MODELLED_LATENCY_NS * NS
}

impl Default for SecurityCfg {
    fn default() -> Self {
        SecurityCfg {
            mode: d_sec_mode(),
            macsec_bytes: d_macsec(),
            ipsec_bytes: d_ipsec(),
            physec_segment_blocks: d_physec_seg(),
            physec_latency: d_physec_lat(),
        }
    }
}

impl Described for SecurityCfg {
    const ABOUT: &'static str = "link-layer security on every link (custom links: security = ...)";
    fn params() -> Vec<Param> {
        let d = SecurityCfg::default();
        vec![
            Param::choice("mode", &d.mode, ""),
            Param::plain("macsec_bytes", d.macsec_bytes, "SecTAG + ICV per frame"),
            Param::plain("ipsec_bytes", d.ipsec_bytes, "ESP tunnel bytes per packet"),
            Param::plain(
                "physec_segment_blocks",
                d.physec_segment_blocks,
                "PHYSec segment length in 66-bit blocks",
            ),
            Param::time("physec_latency", d.physec_latency, "PHYSec latency per hop"),
        ]
    }
}

impl SecurityCfg {
    /// Checks the settings; fields are named relative to `[fabric.security]`.
    pub fn validate(&self) -> Checked {
        for (field, v) in [
            ("macsec_bytes", self.macsec_bytes),
            ("ipsec_bytes", self.ipsec_bytes),
        ] {
            if v > 4096 {
                return Err(ParamError::new(
                    field,
                    format!("{v} bytes per frame: at most 4096 are allowed"),
                ));
            }
        }
        // One segment is the unit PHYSec encrypts and authenticates: zero blocks carries
        // nothing, and the overhead arithmetic (65 bits per block) must stay in 64 bits.
        if !(1..=MAX_PHYSEC_SEGMENT_BLOCKS).contains(&self.physec_segment_blocks) {
            return Err(ParamError::new(
                "physec_segment_blocks",
                format!(
                    "{} blocks: a PHYSec segment holds 1 to {MAX_PHYSEC_SEGMENT_BLOCKS} \
                     66-bit blocks (the document uses 1024)",
                    self.physec_segment_blocks
                ),
            ));
        }
        Ok(())
    }
}

/// Longest PHYSec segment a scenario may give, in 66-bit blocks (2^20: far above the
/// document's 1024).
pub const MAX_PHYSEC_SEGMENT_BLOCKS: u64 = 1 << 20;
