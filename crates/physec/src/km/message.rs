//! The key-management messages on the wire: their kinds, fields and fixed layout,
//! signed and verified as a whole, and the errors of reading one.

use super::*;

/// Length of every key-management message on the wire.
pub const MESSAGE_LEN: usize = SIGNED_LEN + 64;
const SIGNED_LEN: usize = 1 + 1 + 1 + 8 + 8 + 8 + 8 + 4 + 1 + 4 + 32 + 32;
const MAGIC: u8 = 0x5c;
const VERSION: u8 = 2;

/// Key-management message kinds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MessageKind {
    /// Initiator's ephemeral key for a new epoch.
    Offer = 1,
    /// Responder's ephemeral key, echoing the initiator's.
    Answer = 2,
    /// Initiator has switched its transmitter to the new key.
    Confirm = 3,
    /// Liveness, session challenges and their echoes.
    KeepAlive = 4,
}

/// A key-management message, with `parse`/`emit` to its fixed-length signed wire form:
///
/// ```text
/// magic(1) version(1) kind(1) link(8) session(8) peer_session(8) seq(8) epoch(4)
/// key_id(1) tx_epoch(4) ephemeral(32) peer_ephemeral(32) sig(64)
/// ```
///
/// Integers are big-endian. Fields a kind does not use are zero. In a `KeepAlive`,
/// `ephemeral` carries the sender's session challenge (or zero) and `peer_ephemeral` the
/// echo of the last challenge it received. The Ed25519 signature covers everything
/// before it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MessageRepr {
    /// Kind.
    pub kind: MessageKind,
    /// Link the message belongs to.
    pub link: u64,
    /// Sender's session id.
    pub session: u64,
    /// The receiver's session id as the sender knows it (0: not known).
    pub peer_session: u64,
    /// Sender's sequence number, strictly increasing within its session.
    pub seq: u64,
    /// Key epoch of the exchange the message belongs to.
    pub epoch: u32,
    /// Key id of that epoch.
    pub key_id: KeyId,
    /// Epoch of the key the sender transmits under (0: none).
    pub tx_epoch: u32,
    /// Sender's X25519 ephemeral public key (Offer, Answer) or challenge (KeepAlive).
    pub ephemeral: [u8; 32],
    /// Echo of the peer's ephemeral public key (Answer) or challenge (KeepAlive).
    pub peer_ephemeral: [u8; 32],
}

/// Why a message or configuration was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KmError {
    /// Wrong length, magic, version or kind.
    Malformed,
    /// The signature did not verify (strictly) against the provisioned peer key.
    BadSignature,
    /// The message belongs to another link.
    WrongLink,
    /// The sequence number is not newer than one already accepted.
    Replay,
    /// The message comes from a peer session this end is not bound to; it had no effect
    /// but a challenge in reply.
    Unbound,
    /// The message is not addressed to this end's session (or is this end's own).
    Stale,
    /// The message does not fit the current exchange (stale epoch, wrong role).
    Unexpected,
    /// A peer public key (Ed25519 identity or X25519 ephemeral) is invalid or weak.
    BadPeerKey,
}

impl fmt::Display for KmError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = match self {
            KmError::Malformed => "malformed message",
            KmError::BadSignature => "signature does not verify",
            KmError::WrongLink => "message for another link",
            KmError::Replay => "replayed message",
            KmError::Unbound => "message from an unbound peer session",
            KmError::Stale => "message not addressed to this session",
            KmError::Unexpected => "message does not fit the exchange",
            KmError::BadPeerKey => "invalid or weak peer public key",
        };
        f.write_str(s)
    }
}

impl std::error::Error for KmError {}

fn be<const N: usize>(b: &[u8]) -> [u8; N] {
    let mut o = [0u8; N];
    o.copy_from_slice(&b[..N]);
    o
}

impl MessageRepr {
    fn signed_bytes(&self) -> [u8; SIGNED_LEN] {
        let mut b = [0u8; SIGNED_LEN];
        b[0] = MAGIC;
        b[1] = VERSION;
        b[2] = self.kind as u8;
        b[3..11].copy_from_slice(&self.link.to_be_bytes());
        b[11..19].copy_from_slice(&self.session.to_be_bytes());
        b[19..27].copy_from_slice(&self.peer_session.to_be_bytes());
        b[27..35].copy_from_slice(&self.seq.to_be_bytes());
        b[35..39].copy_from_slice(&self.epoch.to_be_bytes());
        b[39] = self.key_id.0;
        b[40..44].copy_from_slice(&self.tx_epoch.to_be_bytes());
        b[44..76].copy_from_slice(&self.ephemeral);
        b[76..108].copy_from_slice(&self.peer_ephemeral);
        b
    }

    /// Emit, signed with `key`.
    pub fn emit(&self, key: &SigningKey) -> Vec<u8> {
        let body = self.signed_bytes();
        let sig = key.sign(&body);
        let mut out = Vec::with_capacity(MESSAGE_LEN);
        out.extend_from_slice(&body);
        out.extend_from_slice(&sig.to_bytes());
        out
    }

    /// Parse and verify (strictly) against the peer's public key.
    pub fn parse(buf: &[u8], peer: &VerifyingKey) -> Result<MessageRepr, KmError> {
        if buf.len() != MESSAGE_LEN || buf[0] != MAGIC || buf[1] != VERSION {
            return Err(KmError::Malformed);
        }
        let kind = match buf[2] {
            1 => MessageKind::Offer,
            2 => MessageKind::Answer,
            3 => MessageKind::Confirm,
            4 => MessageKind::KeepAlive,
            _ => return Err(KmError::Malformed),
        };
        let sig = Signature::from_bytes(&be::<64>(&buf[SIGNED_LEN..]));
        peer.verify_strict(&buf[..SIGNED_LEN], &sig)
            .map_err(|_| KmError::BadSignature)?;
        Ok(MessageRepr {
            kind,
            link: u64::from_be_bytes(be(&buf[3..])),
            session: u64::from_be_bytes(be(&buf[11..])),
            peer_session: u64::from_be_bytes(be(&buf[19..])),
            seq: u64::from_be_bytes(be(&buf[27..])),
            epoch: u32::from_be_bytes(be(&buf[35..])),
            key_id: KeyId(buf[39]),
            tx_epoch: u32::from_be_bytes(be(&buf[40..])),
            ephemeral: be(&buf[44..]),
            peer_ephemeral: be(&buf[76..]),
        })
    }
}
