//! The packet capture written after the run (`capture.pcapng`): each captured record
//! ([`crate::model::capture`]) rebuilt as the frame it was on the wire, in pcapng blocks.

pub mod frame;
pub mod pcapng;
