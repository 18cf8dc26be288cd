//! Receive side: 64B/66B blocks (already descrambled) to XGMII columns to MAC frames.
//!
//! The frame state machine follows the reconciliation sublayer (clause 46.3.3 / 81.3.3):
//! /S/ opens a frame, the preamble octets and SFD must follow, data octets accumulate
//! until /T/. A frame in which an error character (or any unexpected control character)
//! appears is dropped and counted, never delivered: this is how PHYSec's failed segments
//! (replaced by error blocks) reach the MAC.

use super::xgmii::{ctrl, decode_block, Xgmii};
use super::{PREAMBLE, SFD};
use crate::wire::block::{Block66, BlockRepr};

/// What the receive path delivers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RxEvent {
    /// A complete frame, destination address to FCS.
    Frame(Vec<u8>),
    /// A sequence ordered set received in lane 0 outside a frame: its three data octets.
    OrderedSet([u8; 3]),
}

/// Receive counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RxStats {
    /// Frames delivered.
    pub frames: u64,
    /// Frames dropped because of an error or framing violation.
    pub frames_dropped: u64,
    /// Blocks that could not be decoded (bad sync header or block type).
    pub invalid_blocks: u64,
}

#[derive(Clone, Debug)]
enum State {
    Idle,
    /// Octets of preamble seen so far, /S/ included.
    Preamble(u8),
    Frame,
    /// Inside a broken frame: skip to /T/ or the next /S/.
    Discard,
}

/// Streaming block-to-frame decoder.
#[derive(Clone, Debug)]
pub struct PcsDecoder {
    state: State,
    buf: Vec<u8>,
    stats: RxStats,
}

impl Default for PcsDecoder {
    fn default() -> Self {
        PcsDecoder::new()
    }
}

impl PcsDecoder {
    /// A decoder waiting for the first /S/.
    pub fn new() -> PcsDecoder {
        PcsDecoder {
            state: State::Idle,
            buf: Vec::new(),
            stats: RxStats::default(),
        }
    }

    /// Counters so far.
    pub fn stats(&self) -> RxStats {
        self.stats
    }

    fn drop_frame(&mut self) {
        if !matches!(self.state, State::Idle | State::Discard) {
            self.stats.frames_dropped += 1;
        }
        self.buf.clear();
    }

    /// Decode one block, appending delivered events to `out`.
    pub fn push(&mut self, block: &Block66, out: &mut Vec<RxEvent>) {
        let repr = BlockRepr::parse(block);
        if repr.is_err() {
            self.stats.invalid_blocks += 1;
        }
        if let (Ok(BlockRepr::OrderedSet { o0: 0, data }), State::Idle) = (repr, &self.state) {
            out.push(RxEvent::OrderedSet(data));
            return;
        }
        for c in decode_block(block) {
            self.push_char(c, out);
        }
    }

    /// Decode a run of blocks.
    pub fn push_all(&mut self, blocks: &[Block66], out: &mut Vec<RxEvent>) {
        for b in blocks {
            self.push(b, out);
        }
    }

    fn push_char(&mut self, c: Xgmii, out: &mut Vec<RxEvent>) {
        match (&self.state, c) {
            (_, Xgmii::Control(ctrl::START)) => {
                // A start inside a frame truncates it.
                self.drop_frame();
                self.state = State::Preamble(1);
            }
            (State::Idle, _) => {}
            (State::Preamble(n), Xgmii::Data(PREAMBLE)) if *n < 7 => {
                self.state = State::Preamble(n + 1);
            }
            (State::Preamble(7), Xgmii::Data(SFD)) => {
                self.buf.clear();
                self.state = State::Frame;
            }
            (State::Frame, Xgmii::Data(d)) => self.buf.push(d),
            (State::Frame, Xgmii::Control(ctrl::TERMINATE)) => {
                self.stats.frames += 1;
                out.push(RxEvent::Frame(core::mem::take(&mut self.buf)));
                self.state = State::Idle;
            }
            (State::Discard, Xgmii::Control(ctrl::TERMINATE)) => self.state = State::Idle,
            (State::Discard, _) => {}
            (State::Preamble(_) | State::Frame, _) => {
                self.drop_frame();
                self.state = State::Discard;
            }
        }
    }
}
