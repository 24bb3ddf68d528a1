//! The event-subscription part of the connection model (`Op::Sub`): subscribe and unsubscribe
//! commands, the daemon's answers to the connection's own REGISTER/DEREGISTER calls, and
//! events for the callback ids it handed out.
//!
//! **Invariants** (on top of those in `connection.rs`):
//! * the wire: at most one REGISTER in flight per key (kind, event id, object); a DEREGISTER
//!   is answered before the next REGISTER of the same key, and only follows an answered
//!   REGISTER; every such call has exactly the key's arguments or the callback id the daemon
//!   gave; nothing else (no CALL of these procedures the model did not predict);
//! * outputs: each subscriber gets one `SubscriptionDone`, exactly as a reference model of
//!   the rules predicts (shared registration, undo, deregister before registering again,
//!   refusal, connection death), and none after it left; every `Output::Event` names exactly
//!   the subscribers of the active registrations of its kind and callback id.
//!
//! **Input**: `Op::Sub` with a [`SubOp`], declared with the other input types in
//! [`input`](super::input).

use std::collections::{BTreeSet, HashMap};

use bytes::Bytes;
use libvirt_rpc::conn::{CallError, ConnectionError, SubscriberId};
use libvirt_rpc::proto::REMOTE_PROGRAM;
use libvirt_rpc::proto::error::{RemoteError, WireError};
use libvirt_rpc::proto::events::{
    CallbackMsg, DomainEvent, Event, EventKind, Kind, Lifecycle, SecretEvent, SecretLifecycle,
    procs,
};
use libvirt_rpc::proto::procs::common::{CallbackIdArgs, CallbackIdRet};
use libvirt_rpc::proto::types::{Secret, Uuid};
use libvirt_rpc::wire::frame::{Frame, Header, MessageStatus};
use libvirt_rpc::wire::xdr;

use super::input::SubOp;
use super::{Harness, domain};
use crate::peer::{self, call_header};
use libvirt_rpc::proto::DomainEventType;
use libvirt_rpc::proto::SecretEventType;
use libvirt_rpc::proto::SecretUsageType;

/// A registration key: (secret rather than domain, event id); the object filter is `None`.
type Key = (bool, i32);

/// What the model expects of a key, from the daemon's point of view.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// Asked to register: events wait for the answer.
    Registering,
    /// Registered under this callback id.
    Registered(i32),
    /// Asked to drop this callback id.
    Deregistering(i32),
}

#[derive(Debug)]
struct Reg {
    phase: Phase,
    subs: BTreeSet<SubscriberId>,
    /// The serial of the phase's call (REGISTER or DEREGISTER), predicted when queued.
    serial: u32,
}

/// One call the table queued, by serial (kept after its answer: a reply may come before the
/// peer received the call, which then still goes out).
#[derive(Debug)]
struct TableCall {
    key: Key,
    procedure: i32,
    what: &'static str,
    args: Bytes,
    /// The peer received it.
    sent: bool,
    /// Its reply was processed.
    answered: bool,
}

/// The reference model.
#[derive(Debug, Default)]
pub(super) struct Model {
    regs: HashMap<Key, Reg>,
    /// Every call the table queued, by serial.
    calls: HashMap<u32, TableCall>,
    /// Every subscriber ever made, for picks.
    order: Vec<SubscriberId>,
    /// The next serial the connection allocates (serials are sequential until they wrap,
    /// which no input reaches).
    next_serial: u32,
    /// The wire's view: registration calls the peer received and that are unanswered.
    on_wire: HashMap<Key, (u32, &'static str)>,
    /// `SubscriptionDone`s the current operation must produce.
    expected_done: Vec<(SubscriberId, Result<i32, CallError>)>,
    /// Subscribers that got their `SubscriptionDone`, or left.
    answered: BTreeSet<SubscriberId>,
}

fn kind(secret: bool) -> Kind {
    if secret { Kind::Secret } else { Kind::Domain }
}

fn register_args(key: Key) -> Bytes {
    if key.0 {
        xdr::to_bytes(&SecretEvent::register_args(key.1, None))
    } else {
        xdr::to_bytes(&DomainEvent::register_args(key.1, None))
    }
    .expect("args encode")
}

/// The procedure of `key`'s call in `phase`.
fn procedure(key: Key, phase: Phase) -> i32 {
    match phase {
        Phase::Deregistering(_) => kind(key.0).deregister_proc(),
        _ => kind(key.0).register_proc(),
    }
}

impl Model {
    /// A `call`/`open_stream` took `serial`.
    pub(super) fn note_serial(&mut self, serial: u32) {
        self.next_serial = self.next_serial.max(serial.wrapping_add(1));
    }

    /// Calls of the table the connection counts as pending: one per registration whose
    /// REGISTER or DEREGISTER is queued or in flight.
    pub(super) fn pending(&self) -> usize {
        self.regs
            .values()
            .filter(|r| !matches!(r.phase, Phase::Registered(_)))
            .count()
    }

    /// The subscribers a processed event must reach.
    pub(super) fn route(&self, event: &Event) -> Vec<SubscriberId> {
        let (Some(k), Some(callback_id)) = (event.kind(), event.callback_id()) else {
            return Vec::new();
        };
        let mut subs: Vec<SubscriberId> = self
            .regs
            .iter()
            .filter(|(key, r)| kind(key.0) == k && r.phase == Phase::Registered(callback_id))
            .flat_map(|(_, r)| r.subs.iter().copied())
            .collect();
        subs.sort_unstable();
        subs
    }

    /// `key`'s registration queues the call of `phase`.
    fn queue(&mut self, key: Key, phase: Phase) {
        let serial = self.next_serial;
        self.next_serial += 1;
        let r = self.regs.get_mut(&key).expect("known key");
        r.phase = phase;
        r.serial = serial;
        let (what, args) = match phase {
            Phase::Deregistering(id) => (
                "DEREGISTER",
                xdr::to_bytes(&CallbackIdArgs { callback_id: id }).expect("encodes"),
            ),
            _ => ("REGISTER", register_args(key)),
        };
        self.calls.insert(
            serial,
            TableCall {
                key,
                procedure: procedure(key, phase),
                what,
                args,
                sent: false,
                answered: false,
            },
        );
    }

    fn finish(&mut self, subs: impl IntoIterator<Item = SubscriberId>, r: &Result<i32, CallError>) {
        for s in subs {
            self.expected_done.push((s, r.clone()));
        }
    }

    /// The registration whose queued or sent call is `serial`.
    fn key_of(&self, serial: u32) -> Option<Key> {
        self.regs
            .iter()
            .find(|(_, r)| !matches!(r.phase, Phase::Registered(_)) && r.serial == serial)
            .map(|(k, _)| *k)
    }
}

impl Harness {
    pub(super) fn apply_sub(&mut self, op: &SubOp, closed: Option<&ConnectionError>) {
        match *op {
            SubOp::Subscribe { secret, event_id } => {
                let key = (secret, i32::from(event_id % 3));
                let r = if secret {
                    self.pair.conn.subscribe::<SecretEvent>(key.1, None)
                } else {
                    self.pair.conn.subscribe::<DomainEvent>(key.1, None)
                };
                let sub = match (r, closed) {
                    (Err(CallError::Connection(e)), Some(c)) => {
                        assert_eq!(&e, c, "subscribe fails with the connection's error");
                        return;
                    }
                    (Ok(sub), None) => sub,
                    (r, _) => panic!("subscribe returned {r:?} (closed: {closed:?})"),
                };
                let m = &mut self.subs;
                assert!(
                    m.order.last().is_none_or(|last| *last < sub),
                    "subscriber ids are fresh"
                );
                m.order.push(sub);
                if let Some(r) = m.regs.get_mut(&key) {
                    r.subs.insert(sub);
                    if let Phase::Registered(id) = r.phase {
                        m.expected_done.push((sub, Ok(id)));
                    }
                } else {
                    m.regs.insert(
                        key,
                        Reg {
                            phase: Phase::Registered(0),
                            subs: BTreeSet::from([sub]),
                            serial: 0,
                        },
                    );
                    m.queue(key, Phase::Registering);
                }
            }
            SubOp::Unsubscribe { sub } => {
                let m = &mut self.subs;
                if sub == 255 || m.order.is_empty() {
                    return;
                }
                let sub = m.order[usize::from(sub) % m.order.len()];
                self.pair.conn.unsubscribe(sub);
                m.answered.insert(sub);
                let Some((&key, r)) = m.regs.iter_mut().find(|(_, r)| r.subs.contains(&sub)) else {
                    return;
                };
                r.subs.remove(&sub);
                if let (Phase::Registered(id), true) = (r.phase, r.subs.is_empty()) {
                    m.queue(key, Phase::Deregistering(id));
                }
            }
            SubOp::Answer {
                call,
                callback_id,
                refuse,
            } => {
                let mut sent: Vec<(u32, i32)> = self
                    .subs
                    .calls
                    .iter()
                    .filter(|(_, c)| c.sent && !c.answered)
                    .map(|(serial, c)| (*serial, c.procedure))
                    .collect();
                sent.sort_unstable();
                let (serial, procedure) = sent
                    .get(usize::from(call) % sent.len().max(1))
                    .copied()
                    .unwrap_or((0xdead_beef, Kind::Domain.register_proc()));
                let h = call_header(REMOTE_PROGRAM, procedure, serial);
                let packet = if refuse {
                    peer::reply_error_to(&h, &peer::error(8, 0, "fuzz refusal"))
                } else if procedure == Kind::Domain.deregister_proc()
                    || procedure == Kind::Secret.deregister_proc()
                {
                    peer::reply_to(&h, &())
                } else {
                    peer::reply_to(
                        &h,
                        &CallbackIdRet {
                            callback_id: i32::from(callback_id % 4),
                        },
                    )
                };
                self.pair.rx.extend_from_slice(&packet);
                self.pump();
            }
            SubOp::Event {
                secret,
                callback_id,
            } => {
                let callback_id = i32::from(callback_id % 4);
                let packet = if secret {
                    peer::event(
                        procs::SECRET_LIFECYCLE,
                        &CallbackMsg {
                            callback_id,
                            body: SecretLifecycle {
                                secret: Secret {
                                    uuid: Uuid([3; 16]),
                                    usage_type: SecretUsageType::VOLUME,
                                    usage_id: "/fuzz".into(),
                                },
                                event: SecretEventType::DEFINED,
                                detail: 0,
                            },
                        },
                    )
                } else {
                    peer::event(
                        procs::DOMAIN_LIFECYCLE,
                        &CallbackMsg {
                            callback_id,
                            body: Lifecycle {
                                dom: domain(),
                                event: DomainEventType::STARTED,
                                detail: DomainEventType::STARTED.with_detail(0).detail,
                            },
                        },
                    )
                };
                self.pair.rx.extend_from_slice(&packet);
                self.pump();
            }
        }
    }

    /// A client CALL that no `call`/`open_stream` returned: it must be a registration call
    /// the model predicted for that serial. False if it is none of the table's procedures.
    pub(super) fn sub_on_call(&mut self, f: &Frame) -> bool {
        let h = f.header;
        let known = [Kind::Domain, Kind::Secret]
            .iter()
            .any(|k| h.procedure == k.register_proc() || h.procedure == k.deregister_proc());
        if !known {
            return false;
        }
        let m = &mut self.subs;
        let c = m.calls.get_mut(&h.serial).unwrap_or_else(|| {
            panic!(
                "registration call {} nobody needs (serial {})",
                h.procedure, h.serial
            )
        });
        let (key, what) = (c.key, c.what);
        assert_eq!(
            (h.program, h.procedure),
            (REMOTE_PROGRAM, c.procedure),
            "{key:?}: {what}"
        );
        assert_eq!(f.payload, c.args, "{key:?}: {what} arguments");
        assert!(!c.sent, "{key:?}: {what} sent twice");
        c.sent = true;
        if c.answered {
            // Answered before it went out (raw bytes can do that): not in flight.
            return true;
        }
        // The protocol rules, on the wire: one call per key at a time, so at most one
        // REGISTER in flight and a DEREGISTER answered before the next REGISTER.
        if let Some((serial, prev)) = m.on_wire.insert(key, (h.serial, what)) {
            panic!("{what} for {key:?} while {prev} (serial {serial}) is unanswered");
        }
        true
    }

    /// A processed REPLY: true if it is for one of the table's calls (and handled).
    pub(super) fn sub_on_reply(&mut self, reply: Header, payload: &Bytes) -> bool {
        let m = &mut self.subs;
        let Some(key) = m.key_of(reply.serial) else {
            return false;
        };
        let phase = m.regs[&key].phase;
        if reply.program != REMOTE_PROGRAM || reply.procedure != procedure(key, phase) {
            self.expect_fatal = true;
            return true;
        }
        let result = if reply.status == MessageStatus::Ok {
            Ok(payload.clone())
        } else if let Ok(w) = xdr::from_bytes::<WireError>(payload.clone()) {
            Err(CallError::Remote(RemoteError::from(w)))
        } else {
            self.expect_fatal = true;
            return true;
        };
        let result = match (phase, result) {
            (Phase::Deregistering(_), _) => None,
            (_, Ok(p)) => {
                if let Ok(r) = xdr::from_bytes::<CallbackIdRet>(p) {
                    Some(Ok(r.callback_id))
                } else {
                    // Not a callback id: the peer is not speaking the protocol.
                    self.expect_fatal = true;
                    return true;
                }
            }
            (_, Err(e)) => Some(Err(e)),
        };
        let call = m.calls.get_mut(&reply.serial).expect("queued");
        call.answered = true;
        // What libvirtd sends, once it received the call.
        self.benign = call.sent;
        if m.on_wire.get(&key).is_some_and(|(s, _)| *s == reply.serial) {
            m.on_wire.remove(&key);
        }
        let r = m.regs.get_mut(&key).expect("in flight");
        match result {
            // DEREGISTER answered: gone, or register again for those who arrived meanwhile.
            None if r.subs.is_empty() => {
                m.regs.remove(&key);
            }
            None => m.queue(key, Phase::Registering),
            // REGISTER answered with everybody gone: undo it.
            Some(Ok(id)) if r.subs.is_empty() => m.queue(key, Phase::Deregistering(id)),
            Some(Ok(id)) => {
                r.phase = Phase::Registered(id);
                let subs: Vec<_> = r.subs.iter().copied().collect();
                m.finish(subs, &Ok(id));
            }
            Some(Err(e)) => {
                let r = m.regs.remove(&key).expect("in flight");
                m.finish(r.subs, &Err(e));
            }
        }
        true
    }

    /// After an operation: the `SubscriptionDone`s it produced, against the model.
    pub(super) fn sub_after_op(&mut self, mut done: Vec<(SubscriberId, Result<i32, CallError>)>) {
        let m = &mut self.subs;
        if let Some(e) = self.pair.conn.error() {
            // Death: every waiting subscriber fails, active ones end with `Closed`.
            let waiting: Vec<SubscriberId> = m
                .regs
                .values()
                .filter(|r| !matches!(r.phase, Phase::Registered(_)))
                .flat_map(|r| r.subs.iter().copied())
                .collect();
            m.finish(waiting, &Err(CallError::Connection(e.clone())));
            m.regs.clear();
            m.on_wire.clear();
        }
        let mut want = std::mem::take(&mut m.expected_done);
        want.sort_by_key(|(s, _)| *s);
        done.sort_by_key(|(s, _)| *s);
        assert_eq!(done, want, "SubscriptionDone outputs differ from the model");
        for (s, _) in done {
            assert!(
                m.answered.insert(s),
                "{s:?} answered twice, or after it left"
            );
        }
    }
}
