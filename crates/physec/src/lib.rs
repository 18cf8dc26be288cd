//! PHYSec: encryption in the Ethernet physical layer, as a bit-accurate reference.
//!
//! Source document 000 (China Mobile's Global Scheduled Ethernet, section 2.2.3) proposes
//! PHYSec for AI data centres instead of MACsec (IEEE 802.1AE) or IPsec (RFC 4303): encrypt
//! below the MAC, in the 64B/66B physical coding sublayer (IEEE 802.3 clause 49 and 82) or
//! in the optical module after alignment-marker lock, so that no frame grows, frame lengths
//! and timing are hidden, and PFC/pause frames (IEEE 802.1Qbb, 802.3 Annex 31B), which
//! MACsec cannot protect, are encrypted like any other. It claims about 100 ns of latency.
//! The document gives the architecture, not the bits; this crate fixes every bit so
//! engineers can read it, test against it and measure it:
//!
//! * [`pcs`]: the 64B/66B PCS, MAC frames to XGMII columns to 66-bit blocks, the
//!   x^58 + x^39 + 1 scrambler, and back ([`wire::block`] holds the block formats).
//! * [`channel`]: channel-level encryption, 66B->65B compression ([`compress`]), AES-256-GCM
//!   segments framed by S and T blocks with a parameter D block ([`wire::segment`]).
//! * [`link`]: link-level encryption of multi-frames of alignment-marker periods,
//!   AES-256-CTR keystream plus a GMAC tag, AMs in clear.
//! * [`keys`]: traffic keys, derived per direction so the two directions of a link never
//!   share a key or nonce, held in a two-slot ring per engine.
//! * [`km`]: authentication channel and key management (Ed25519, X25519, HKDF-SHA256,
//!   messages bound to link and session, rejoin after a restart, hitless rekey with two
//!   live key ids that survives lost messages, keep-alive, expiry, replay protection),
//!   driven by explicit [`time`].
//! * [`overhead`]: a pure overhead/latency model for the simulator.
//! * [`mac`]: FCS, PAUSE and PFC frames, for generating traffic.
//!
//! Parse paths never panic on malformed input: they return errors, and the receivers
//! count what they reject.

#![warn(missing_docs)]

pub mod channel;
pub mod compress;
pub mod keys;
pub mod km;
pub mod link;
pub mod mac;
pub mod overhead;
pub mod pcs;
pub mod time;
pub mod wire;
