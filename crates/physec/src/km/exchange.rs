//! The key agent's handling of what the peer sends: checks (signature, link, session,
//! replay), binding to a peer session after a challenge, and the Offer / Answer / Confirm
//! exchange that installs new keys.

use super::*;

impl KeyAgent {
    /// Handle a message from the peer at `now`. An error means the message changed no
    /// state (a bad signature also raises [`Alarm::PeerAuthFailed`]; a message from an
    /// unbound session is answered with a challenge).
    pub fn handle(
        &mut self,
        now: Instant,
        buf: &[u8],
        out: &mut Vec<Action>,
    ) -> Result<(), KmError> {
        let m = match MessageRepr::parse(buf, &self.peer) {
            Ok(m) => m,
            Err(KmError::BadSignature) => {
                out.push(Action::Alarm(Alarm::PeerAuthFailed));
                return Err(KmError::BadSignature);
            }
            Err(e) => return Err(e),
        };
        if m.link != self.link {
            return Err(KmError::WrongLink);
        }
        if m.session == self.session || m.session == 0 {
            return Err(KmError::Stale);
        }
        if self.peer_session != Some(m.session) {
            return self.on_unbound(now, &m, out);
        }
        if m.peer_session != self.session {
            return Err(KmError::Stale);
        }
        if m.seq <= self.peer_seq {
            return Err(KmError::Replay);
        }
        self.peer_seq = m.seq;
        self.heard(now);
        self.peer_switched(now, m.tx_epoch);
        match (self.role, m.kind) {
            (_, MessageKind::KeepAlive) => {
                if m.ephemeral != [0; 32] {
                    // The peer has not bound this session yet (its copy of the binding
                    // message was lost): echo its challenge.
                    self.echo = m.ephemeral;
                    self.echo_to = m.session;
                    self.keepalive(Some(m.session), out);
                }
                Ok(())
            }
            (Role::Responder, MessageKind::Offer) => self.on_offer(now, &m, out),
            (Role::Initiator, MessageKind::Answer) => self.on_answer(now, &m, out),
            (Role::Responder, MessageKind::Confirm) => self.on_confirm(now, &m, out),
            _ => Err(KmError::Unexpected),
        }
    }

    pub(super) fn heard(&mut self, now: Instant) {
        self.last_heard = now;
        self.peer_lost = false;
    }

    /// A message from a session this end is not bound to: bind if it echoes a challenge
    /// drawn for it, otherwise challenge it.
    pub(super) fn on_unbound(
        &mut self,
        now: Instant,
        m: &MessageRepr,
        out: &mut Vec<Action>,
    ) -> Result<(), KmError> {
        let echoed = self
            .challenge
            .as_ref()
            .is_some_and(|c| c.to.is_none_or(|t| t == m.session) && c.nonce == m.peer_ephemeral);
        if m.kind == MessageKind::KeepAlive && echoed && m.peer_session == self.session {
            self.bind(now, m, out);
            return Ok(());
        }
        if self.peer_session.is_some()
            && self
                .challenge
                .as_ref()
                .is_none_or(|c| c.to != Some(m.session))
        {
            // Bound to another session: a fresh challenge, drawn now, for this one.
            self.challenge = Some(Challenge {
                to: Some(m.session),
                nonce: self.rng.nonce(),
            });
        }
        if m.kind == MessageKind::KeepAlive {
            self.echo = m.ephemeral;
            self.echo_to = m.session;
        }
        self.keepalive(Some(m.session), out);
        Err(KmError::Unbound)
    }

    pub(super) fn bind(&mut self, now: Instant, m: &MessageRepr, out: &mut Vec<Action>) {
        if self.peer_session.is_some() {
            // The peer restarted: the old association's keys are useless to it.
            out.push(Action::Alarm(Alarm::PeerRestarted));
            for k in [self.current.take(), self.next.take()]
                .into_iter()
                .flatten()
            {
                out.push(Action::Retire(k.id));
            }
            self.retire_old(out);
            self.pending = None;
            self.done = None;
            self.peer_on_current = false;
            self.epoch = 0;
            self.state = LinkState::Establishing;
        }
        self.peer_session = Some(m.session);
        self.peer_seq = m.seq;
        self.challenge = None;
        self.echo = m.ephemeral;
        self.echo_to = m.session;
        self.heard(now);
        // Tell the peer its challenge was seen (it binds on this), then start keying.
        self.keepalive(Some(m.session), out);
        if self.may_rekey() {
            self.start_exchange(now, out);
        }
    }

    /// The initiator learns that the responder transmits under `tx_epoch`.
    pub(super) fn peer_switched(&mut self, now: Instant, tx_epoch: u32) {
        if self.role != Role::Initiator {
            return;
        }
        let Some(c) = self.current else {
            return;
        };
        if tx_epoch != c.epoch {
            return;
        }
        self.peer_on_current = true;
        if let Some(o) = &mut self.old {
            if o.at.is_none() {
                o.at = Some(now + self.cfg.retire_delay);
            }
        }
    }

    pub(super) fn on_offer(
        &mut self,
        now: Instant,
        m: &MessageRepr,
        out: &mut Vec<Action>,
    ) -> Result<(), KmError> {
        if m.key_id != key_id_for(m.epoch) {
            return Err(KmError::Unexpected);
        }
        if let Some(p) = &self.pending {
            if m.epoch == p.epoch {
                // The initiator retransmitted: resend the same answer.
                if p.peer_public != m.ephemeral {
                    return Err(KmError::Unexpected);
                }
                let (e, a, b) = (p.epoch, p.public, p.peer_public);
                self.send(MessageKind::Answer, e, a, b, out);
                return Ok(());
            }
        }
        if m.epoch <= self.epoch {
            return Err(KmError::Unexpected);
        }
        if self.current.is_some_and(|c| c.id == m.key_id) {
            return Err(KmError::Unexpected);
        }
        let secret = self.rng.ephemeral();
        let public = PublicKey::from(&secret).to_bytes();
        let shared = secret.diffie_hellman(&PublicKey::from(m.ephemeral));
        let peer_session = self.peer_session.unwrap_or(0);
        let key = self.derive(
            now,
            m.epoch,
            &shared,
            (m.ephemeral, peer_session),
            (public, self.session),
        )?;
        // Keys of an unconfirmed earlier exchange and a replaced key still in its retire
        // delay go first: a new offer means the initiator is past both.
        if let Some(n) = self.next.take() {
            out.push(Action::Retire(n.id));
        }
        self.retire_old(out);
        self.epoch = m.epoch;
        self.pending = Some(Pending {
            epoch: m.epoch,
            key_id: key.id(),
            secret: None,
            public,
            peer_public: m.ephemeral,
            started: now,
            last_sent: now,
        });
        self.next = Some(Live {
            id: key.id(),
            epoch: m.epoch,
            expires: key.expires(),
        });
        // Receive side first: the initiator may switch as soon as it sees the answer.
        out.push(Action::Install(key));
        self.send(MessageKind::Answer, m.epoch, public, m.ephemeral, out);
        Ok(())
    }

    pub(super) fn on_confirm(
        &mut self,
        now: Instant,
        m: &MessageRepr,
        out: &mut Vec<Action>,
    ) -> Result<(), KmError> {
        let fits = self.pending.as_ref().is_some_and(|p| p.epoch == m.epoch)
            && self.next.is_some_and(|n| n.id == m.key_id);
        if !fits {
            return Err(KmError::Unexpected);
        }
        let Some(next) = self.next.take() else {
            return Err(KmError::Unexpected);
        };
        self.pending = None;
        out.push(Action::ActivateTx(next.id));
        self.retire_old(out);
        // The initiator switched before it confirmed: the old key carries only segments
        // already in flight.
        self.old = self.current.replace(next).map(|key| Old {
            key,
            at: Some(now + self.cfg.retire_delay),
        });
        self.state = LinkState::Secured;
        // Say at once that this end switched, so the initiator can retire the old key.
        self.keepalive(None, out);
        Ok(())
    }

    pub(super) fn on_answer(
        &mut self,
        now: Instant,
        m: &MessageRepr,
        out: &mut Vec<Action>,
    ) -> Result<(), KmError> {
        let fits = self.pending.as_ref().is_some_and(|p| {
            m.epoch == p.epoch && m.key_id == p.key_id && m.peer_ephemeral == p.public
        });
        if !fits {
            let duplicate = self.done.as_ref().is_some_and(|d| {
                d.epoch == m.epoch && d.public == m.peer_ephemeral && d.peer_public == m.ephemeral
            });
            if duplicate {
                // The responder has not seen the Confirm: send it again.
                self.send(MessageKind::Confirm, m.epoch, [0; 32], [0; 32], out);
                return Ok(());
            }
            return Err(KmError::Unexpected);
        }
        let Some(mut p) = self.pending.take() else {
            return Err(KmError::Unexpected);
        };
        let Some(secret) = p.secret.take() else {
            return Err(KmError::Unexpected);
        };
        let shared = secret.diffie_hellman(&PublicKey::from(m.ephemeral));
        let peer_session = self.peer_session.unwrap_or(0);
        let key = match self.derive(
            now,
            p.epoch,
            &shared,
            (p.public, self.session),
            (m.ephemeral, peer_session),
        ) {
            Ok(k) => k,
            Err(e) => {
                // The ephemeral is spent; the next poll offers a fresh epoch.
                self.next_rekey = now;
                return Err(e);
            }
        };
        let id = key.id();
        let live = Live {
            id,
            epoch: p.epoch,
            expires: key.expires(),
        };
        out.push(Action::Install(key));
        out.push(Action::ActivateTx(id));
        self.retire_old(out);
        // The responder still sends under the old key until it sees the Confirm.
        self.old = self.current.replace(live).map(|key| Old { key, at: None });
        self.peer_on_current = false;
        self.state = LinkState::Secured;
        // Counted from the start of the exchange: the responder's copy of the key has been
        // ageing since the offer reached it, however long the exchange took.
        self.next_rekey = p.started + self.cfg.rekey_interval;
        self.done = Some(Done {
            epoch: p.epoch,
            public: p.public,
            peer_public: m.ephemeral,
        });
        self.send(MessageKind::Confirm, p.epoch, [0; 32], [0; 32], out);
        Ok(())
    }
}
