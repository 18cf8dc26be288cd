//! A packet's arena slot: what only the end NICs read of a frame, in 128 bits.

use super::*;

/// A packet as its arena slot stores it: 128 bits, read back with the kind its
/// descriptor holds and the time it is read at ([`Slot::decode`]).
///
/// Every payload fits once its kind is known, low bits first:
///
/// | kind | fields |
/// |---|---|
/// | data | flow (32), seq (48), send time (48) |
/// | ACK, NACK | flow (32), seq (48), send time (47), ECN echo (1) |
/// | CNP | flow (32), by a DR switch (1), then the send time in the top 48 bits |
/// | PFC | priority (8), quanta (16) |
/// | request | from (32), host (32), bytes (64) |
/// | grant | host (32), port or `u32::MAX` for none (32), bytes (64) |
/// | collective | collective (32), iteration (32), rank (32), sender (31), direction (1) |
///
/// A data frame's payload bytes are not stored: its flow gives them
/// ([`crate::model::transport::rdma::Flow::payload_at`]). A sequence number is a byte
/// offset below 2^48 (256 TiB, [`MAX_SEQ`]), and a send time is kept modulo 2^48 ps
/// (2^47 for an ACK or NACK, whose top bit is the echo) and read back as the latest time
/// at or before the reading with those low bits: exact while a packet is younger than
/// 140 s of simulated time, orders of magnitude longer than any frame stays in a
/// network (a PFC watchdog acts after milliseconds). Kinds whose send time no one reads (PFC,
/// GSE requests and grants, collective messages) do not keep it and read back 0. A free
/// slot's low 32 bits hold the next free slot.
#[derive(Clone, Copy, Debug)]
pub struct Slot {
    v: u128,
}

const NO_VIA: u32 = u32::MAX;
/// Largest byte offset a data frame, ACK or NACK carries: flows are at most 256 TiB.
pub const MAX_SEQ: u64 = (1 << 48) - 1;
/// Bits of the send time a data frame or CNP keeps, and an ACK or NACK.
const SENT_BITS: u32 = 48;
const SENT_BITS_ACK: u32 = 47;
const SEQ_SHIFT: u32 = 32;
const SENT_SHIFT: u32 = 80;

/// The time at or before `now` whose low `bits` bits are `low` (see [`Slot`]).
#[inline(always)]
fn time_before(now: Time, low: u64, bits: u32) -> Time {
    let mask = (1u64 << bits) - 1;
    now.wrapping_sub(now.wrapping_sub(low) & mask)
}

impl Slot {
    /// A slot that stores nothing yet: a frame's hand-off to another shard before its
    /// slot is copied in.
    pub const UNSET: Slot = Slot { v: 0 };

    /// A free slot whose successor in the free list is `next`.
    #[inline(always)]
    pub(super) const fn free(next: u32) -> Slot {
        Slot { v: next as u128 }
    }

    /// The next free slot after this free one.
    #[inline(always)]
    pub(super) fn next_free(&self) -> u32 {
        self.v as u32
    }

    /// The slot that stores `p`. Always inlined, as are [`Self::decode`] and the arena's
    /// `get` and `alloc_desc`: on 128 bits the compiler had left them out of line, which
    /// cost 1.3 % of the instructions at k = 8.
    #[inline(always)]
    pub fn encode(p: &Packet) -> Slot {
        // The send time's low `bits` bits, in place.
        let sent = |bits: u32| (p.sent_at() as u128 & ((1 << bits) - 1)) << SENT_SHIFT;
        let seq = |seq: u64| {
            debug_assert!(seq <= MAX_SEQ, "a byte offset of 2^48 or more");
            ((seq & MAX_SEQ) as u128) << SEQ_SHIFT
        };
        let v = match p.payload {
            Payload::Data { flow, seq: q } => flow.0 as u128 | seq(q) | sent(SENT_BITS),
            Payload::Ack { flow, seq: q } | Payload::Nack { flow, seq: q } => {
                flow.0 as u128 | seq(q) | sent(SENT_BITS_ACK) | (p.echo() as u128) << 127
            }
            Payload::Cnp { flow, by_dr } => {
                flow.0 as u128 | (by_dr as u128) << 32 | sent(SENT_BITS)
            }
            Payload::Pause(sig) => sig.prio as u128 | (sig.quanta as u128) << 8,
            Payload::Request { from, host, bytes } => {
                from.0 as u128 | (host.0 as u128) << 32 | (bytes as u128) << 64
            }
            Payload::Grant { host, bytes, via } => {
                host.0 as u128 | (via.map_or(NO_VIA, |v| v.0) as u128) << 32 | (bytes as u128) << 64
            }
            Payload::Collective {
                coll,
                iter,
                rank,
                msg,
                src,
            } => {
                debug_assert!(src < 1 << 31, "a collective's sender is a host");
                coll as u128
                    | (iter as u128) << 32
                    | (rank as u128) << 64
                    | ((src & 0x7fff_ffff) as u128) << 96
                    | ((msg == CollMsg::Result) as u128) << 127
            }
        };
        Slot { v }
    }

    /// The packet this slot stores, a frame of `kind`, read at time `now` (at or after it
    /// was sent).
    #[inline(always)]
    pub fn decode(&self, kind: PacketKind, now: Time) -> Packet {
        let v = self.v;
        let (lo, hi) = (v as u32, (v >> 32) as u32);
        let seq = (v >> SEQ_SHIFT) as u64 & MAX_SEQ;
        let high = (v >> SENT_SHIFT) as u64;
        let (payload, sent) = match kind {
            PacketKind::Data => (
                Payload::Data {
                    flow: FlowId(lo),
                    seq,
                },
                time_before(now, high, SENT_BITS),
            ),
            PacketKind::Ack | PacketKind::Nack => {
                let flow = FlowId(lo);
                let payload = if kind == PacketKind::Ack {
                    Payload::Ack { flow, seq }
                } else {
                    Payload::Nack { flow, seq }
                };
                let sent = time_before(now, high, SENT_BITS_ACK);
                (payload, sent | ((v >> 127) as Time) << 63)
            }
            PacketKind::Cnp => (
                Payload::Cnp {
                    flow: FlowId(lo),
                    by_dr: hi & 1 != 0,
                },
                time_before(now, high, SENT_BITS),
            ),
            PacketKind::Pause => (
                Payload::Pause(PfcSignal {
                    prio: lo as u8,
                    quanta: (lo >> 8) as u16,
                }),
                0,
            ),
            PacketKind::Request => (
                Payload::Request {
                    from: GspId(lo),
                    host: HostId(hi),
                    bytes: (v >> 64) as u64,
                },
                0,
            ),
            PacketKind::Grant => (
                Payload::Grant {
                    host: HostId(lo),
                    bytes: (v >> 64) as u64,
                    via: (hi != NO_VIA).then_some(PortId(hi)),
                },
                0,
            ),
            PacketKind::Collective => (
                Payload::Collective {
                    coll: lo,
                    iter: hi,
                    rank: (v >> 64) as u32,
                    msg: if v >> 127 != 0 {
                        CollMsg::Result
                    } else {
                        CollMsg::Up
                    },
                    src: (v >> 96) as u32 & 0x7fff_ffff,
                },
                0,
            ),
        };
        Packet { payload, sent }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn any_payload() -> impl proptest::strategy::Strategy<Value = Payload> {
        use super::CollMsg;
        use proptest::prelude::*;
        let flow = any::<u32>().prop_map(FlowId);
        prop_oneof![
            (flow.clone(), 0..=MAX_SEQ).prop_map(|(flow, seq)| Payload::Data { flow, seq }),
            (flow.clone(), 0..=MAX_SEQ).prop_map(|(flow, seq)| Payload::Ack { flow, seq }),
            (flow.clone(), 0..=MAX_SEQ).prop_map(|(flow, seq)| Payload::Nack { flow, seq }),
            (flow, any::<bool>()).prop_map(|(flow, by_dr)| Payload::Cnp { flow, by_dr }),
            (0u8..8, any::<u16>())
                .prop_map(|(prio, quanta)| Payload::Pause(PfcSignal { prio, quanta })),
            (any::<u32>(), any::<u32>(), any::<u64>()).prop_map(|(f, h, bytes)| Payload::Request {
                from: GspId(f),
                host: HostId(h),
                bytes
            }),
            (
                any::<u32>(),
                any::<u64>(),
                proptest::option::of(0..=crate::base::ids::MAX_INDEX)
            )
                .prop_map(|(h, bytes, via)| Payload::Grant {
                    host: HostId(h),
                    bytes,
                    via: via.map(PortId)
                }),
            (
                any::<u32>(),
                any::<u32>(),
                any::<u32>(),
                any::<bool>(),
                0..=crate::base::ids::MAX_INDEX
            )
                .prop_map(|(coll, iter, rank, up, src)| Payload::Collective {
                    coll,
                    iter,
                    rank,
                    msg: if up { CollMsg::Up } else { CollMsg::Result },
                    src
                }),
        ]
    }

    proptest::proptest! {
        /// A slot gives back the packet stored in it, read with the packet's kind at any
        /// time less than 2^47 ps after it was sent: echo and send time included where the
        /// kind keeps them (data, ACK, NACK, CNP), 0 for a send time where it does not. The
        /// ids the arena hands out are a stack's.
        #[test]
        fn a_slot_gives_back_the_packet_it_stores(
            payloads in proptest::collection::vec(any_payload(), 1..40),
            sent in 0..(1u64 << 62),
            age in 0..(1u64 << 47),
            echo in proptest::prelude::any::<bool>(),
        ) {
            let expect = |p: Packet| match p.kind() {
                PacketKind::Data | PacketKind::Ack | PacketKind::Nack | PacketKind::Cnp => p,
                _ => Packet { sent: 0, ..p },
            };
            let mut arena = PacketArena::new();
            let mut stored = Vec::new();
            for (i, &payload) in payloads.iter().enumerate() {
                let mut p = Packet::new(payload, sent ^ i as u64);
                if matches!(payload, Payload::Ack { .. } | Payload::Nack { .. }) {
                    p.set_echo(echo);
                }
                let id = arena.alloc(p);
                assert_eq!(arena.get(id, p.kind(), p.sent_at()), expect(p));
                assert_eq!(arena.get(id, p.kind(), p.sent_at() + age), expect(p));
                stored.push((id, p));
                if i % 3 == 2 {
                    // Release one: the next allocation takes its slot.
                    let (id, _) = stored.remove(i % stored.len());
                    arena.release(id);
                    let again = arena.alloc(p);
                    assert_eq!(again, id);
                    stored.push((again, p));
                }
            }
            for (id, p) in stored {
                assert_eq!(arena.get(id, p.kind(), p.sent_at() + age / 2), expect(p));
            }
        }
    }
}
