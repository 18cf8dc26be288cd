//! pcapng writing (the PCAP Next Generation format, IETF draft-ietf-opsawg-pcapng):
//! a section header, one interface description per captured port (its name,
//! description, speed, and `if_tsresol` = 9: timestamps in nanoseconds), then one
//! enhanced packet block per frame. Little-endian, as the byte-order magic says.
//!
//! Timestamps are simulated time since the run's start, in nanoseconds (picoseconds
//! truncated), counted from the Unix epoch: readers show 1970-01-01; `tshark -t r` or
//! Wireshark's "seconds since beginning of capture" show simulated time.

use super::frame::{FrameCtx, MAX_FRAME};
use crate::model::capture::Capture;
use crate::sim::Simulation;
use std::io::{self, Write};

const SHB: u32 = 0x0a0d_0d0a;
const IDB: u32 = 1;
const EPB: u32 = 6;
const BYTE_ORDER_MAGIC: u32 = 0x1a2b_3c4d;
/// LINKTYPE_ETHERNET.
const LINKTYPE_ETHERNET: u16 = 1;

const OPT_END: u16 = 0;
const SHB_COMMENT: u16 = 1;
const SHB_USERAPPL: u16 = 4;
const IF_NAME: u16 = 2;
const IF_DESCRIPTION: u16 = 3;
const IF_SPEED: u16 = 8;
const IF_TSRESOL: u16 = 9;

/// A block being put together: its body, then written with its type and lengths.
struct Block {
    body: Vec<u8>,
}

impl Block {
    fn new() -> Block {
        Block { body: Vec::new() }
    }
    fn u16(&mut self, v: u16) {
        self.body.extend_from_slice(&v.to_le_bytes());
    }
    fn u32(&mut self, v: u32) {
        self.body.extend_from_slice(&v.to_le_bytes());
    }
    fn u64(&mut self, v: u64) {
        self.body.extend_from_slice(&v.to_le_bytes());
    }
    /// `bytes`, then zeros until the body is a multiple of 4 bytes long (every field
    /// before is a multiple of 4 but the last).
    fn padded(&mut self, bytes: &[u8]) {
        self.body.extend_from_slice(bytes);
        let pad = (4 - self.body.len() % 4) % 4;
        self.body.extend_from_slice(&[0u8; 3][..pad]);
    }
    fn option(&mut self, code: u16, value: &[u8]) {
        self.u16(code);
        self.u16(value.len() as u16);
        self.padded(value);
    }
    fn end_options(&mut self) {
        self.u16(OPT_END);
        self.u16(0);
    }
    fn write(&self, kind: u32, w: &mut dyn Write) -> io::Result<()> {
        let total = (self.body.len() + 12) as u32;
        w.write_all(&kind.to_le_bytes())?;
        w.write_all(&total.to_le_bytes())?;
        w.write_all(&self.body)?;
        w.write_all(&total.to_le_bytes())
    }
}

/// Writes `cap` (captured in `sim`) as pcapng.
pub fn write(sim: &Simulation, cap: &Capture, w: &mut dyn Write) -> io::Result<()> {
    let mut shb = Block::new();
    shb.u32(BYTE_ORDER_MAGIC);
    shb.u16(1);
    shb.u16(0);
    // Section length unknown (the format allows -1).
    shb.u64(u64::MAX);
    shb.option(
        SHB_USERAPPL,
        format!("fabricsim {}", env!("CARGO_PKG_VERSION")).as_bytes(),
    );
    // What the file holds and what it lacks, for whoever opens it (Wireshark shows it
    // under Statistics > Capture File Properties).
    shb.option(
        SHB_COMMENT,
        format!(
            "fabricsim run `{}` seed {}: {} frames captured, {} more on the captured ports \
             beyond the limit not kept; {} (docs/pcap.md)",
            sim.name,
            sim.seed,
            cap.records().len(),
            cap.missed(),
            if cap.payload {
                "data frames whole, payloads as zeros"
            } else {
                "headers only"
            }
        )
        .as_bytes(),
    );
    shb.end_options();
    shb.write(SHB, w)?;
    for i in &cap.interfaces {
        let mut idb = Block::new();
        idb.u16(LINKTYPE_ETHERNET);
        idb.u16(0);
        // No snapshot length: frames are cut to their headers by construction.
        idb.u32(0);
        idb.option(IF_NAME, i.name.as_bytes());
        idb.option(IF_DESCRIPTION, i.description.as_bytes());
        idb.option(IF_SPEED, &i.speed_bps.to_le_bytes());
        idb.option(IF_TSRESOL, &[9]);
        idb.end_options();
        idb.write(IDB, w)?;
    }
    let cx = FrameCtx::new(sim, cap);
    let mut frame = [0u8; MAX_FRAME];
    let mut epb = Block::new();
    // In key order (time, interface, the port's count): frames of one instant are noted
    // in the order handlers ran, and a link-level replay notes frames when it schedules
    // them, possibly ahead of their start; the key orders them whatever the order, and
    // whatever the thread count.
    let mut order: Vec<&crate::model::capture::CaptureRecord> = cap.records().iter().collect();
    order.sort_unstable_by_key(|r| r.key());
    for r in order {
        let b = cx.build(r, &mut frame);
        let ns = r.t / 1000;
        epb.body.clear();
        epb.u32(r.iface);
        epb.u32((ns >> 32) as u32);
        epb.u32(ns as u32);
        epb.u32((b.head + b.zeros) as u32);
        epb.u32(b.orig_len);
        epb.body.extend_from_slice(&frame[..b.head]);
        epb.body.resize(epb.body.len() + b.zeros, 0);
        epb.padded(&[]);
        epb.write(EPB, w)?;
    }
    Ok(())
}

/// One frame of a pcapng file, as [`read`] returns it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReadFrame {
    /// Interface index.
    pub iface: u32,
    /// Timestamp in the interface's units (here: ns).
    pub ts: u64,
    /// Original length.
    pub orig_len: u32,
    /// Captured bytes.
    pub data: Vec<u8>,
}

/// What [`read`] finds in a pcapng file of one section.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ReadBack {
    /// Interface names (`if_name`), in order.
    pub interfaces: Vec<String>,
    /// Each interface's `if_tsresol` byte (6, microseconds, when absent).
    pub tsresol: Vec<u8>,
    /// The enhanced packet blocks.
    pub frames: Vec<ReadFrame>,
}

/// Reads back a little-endian pcapng file as [`write`] makes them (tests and tools):
/// the section header, interface descriptions and enhanced packet blocks; other blocks
/// are skipped. An error names what is wrong.
pub fn read(bytes: &[u8]) -> Result<ReadBack, String> {
    let u16_at = |at: usize| -> Result<u16, String> {
        bytes
            .get(at..at + 2)
            .map(|b| u16::from_le_bytes([b[0], b[1]]))
            .ok_or_else(|| format!("truncated at byte {at}"))
    };
    let u32_at = |at: usize| -> Result<u32, String> {
        bytes
            .get(at..at + 4)
            .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .ok_or_else(|| format!("truncated at byte {at}"))
    };
    if u32_at(0)? != SHB || u32_at(8)? != BYTE_ORDER_MAGIC {
        return Err("not a little-endian pcapng section header".into());
    }
    let mut out = ReadBack::default();
    let mut at = 0usize;
    while at < bytes.len() {
        let kind = u32_at(at)?;
        let len = u32_at(at + 4)? as usize;
        if len < 12
            || !len.is_multiple_of(4)
            || at + len > bytes.len()
            || u32_at(at + len - 4)? as usize != len
        {
            return Err(format!("block at byte {at}: bad length {len}"));
        }
        let body = at + 8;
        let end = at + len - 4;
        match kind {
            IDB => {
                let mut name = String::new();
                let mut res = 6u8;
                // The options, after link type, reserved and snapshot length.
                let mut o = body + 8;
                while o + 4 <= end {
                    let (code, n) = (u16_at(o)?, u16_at(o + 2)? as usize);
                    if code == OPT_END {
                        break;
                    }
                    let v = bytes.get(o + 4..o + 4 + n).ok_or("option past its block")?;
                    match code {
                        IF_NAME => name = String::from_utf8_lossy(v).into_owned(),
                        IF_TSRESOL if !v.is_empty() => res = v[0],
                        _ => {}
                    }
                    o += 4 + n.div_ceil(4) * 4;
                }
                out.interfaces.push(name);
                out.tsresol.push(res);
            }
            EPB => {
                let iface = u32_at(body)?;
                let ts = (u32_at(body + 4)? as u64) << 32 | u32_at(body + 8)? as u64;
                let caplen = u32_at(body + 12)? as usize;
                let orig_len = u32_at(body + 16)?;
                let data = bytes
                    .get(body + 20..body + 20 + caplen)
                    .filter(|_| body + 20 + caplen <= end)
                    .ok_or_else(|| format!("packet block at byte {at}: data past its block"))?
                    .to_vec();
                if iface as usize >= out.interfaces.len() {
                    return Err(format!("packet block at byte {at}: no interface {iface}"));
                }
                out.frames.push(ReadFrame {
                    iface,
                    ts,
                    orig_len,
                    data,
                });
            }
            _ => {}
        }
        at += len;
    }
    Ok(out)
}
