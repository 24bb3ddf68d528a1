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
//! **Kinds**: callback registrations of domain and secret events (`SubOp::Subscribe`), the
//! legacy any-registration of domain event ids 0 to 2 (`SubOp::SubscribeLegacyAny`, its
//! "callback id" the event id, its REGISTER answered with a void reply) and the legacy
//! lifecycle registration (`SubOp::SubscribeLegacy`). Legacy events (`SubOp::LegacyEvent`, no
//! callback id) reach the active any-registration of their event id, and a lifecycle one also
//! the legacy lifecycle registration. The legacy lifecycle registration and the
//! any-registration of `LIFECYCLE` are one daemon callback (libvirtd refuses the second as
//! already tracked): the model keeps them as one registration under the legacy key
//! (`daemon_key`), whose calls are those of the kind that came first.
//!
//! **Input**: `Op::Sub` with a [`SubOp`], declared with the other input types in
//! [`input`](super::input).

use std::collections::{BTreeSet, HashMap};

use bytes::Bytes;
use libvirt_remote::conn::{CallError, ConnectionError, SubscriberId};
use libvirt_remote::proto::events::{
    CallbackMsg, DomainEvent, DomainOnly, Event, EventKind, Kind, Lifecycle, RtcChange,
    SecretEvent, SecretLifecycle, event_id, procs,
};
use libvirt_remote::proto::procs::common::{CallbackIdArgs, CallbackIdRet};
use libvirt_remote::proto::procs::connect::{
    ConnectDomainEventRegisterAnyArgs, ConnectDomainEventRegisterRet,
};
use libvirt_remote::proto::types::{NonnullSecret, Uuid};
use libvirt_remote::proto::{REMOTE_PROGRAM, RemoteError, WireError};
use libvirt_remote::wire::frame::{Frame, Header, MessageStatus};
use libvirt_remote::wire::xdr;

use super::input::SubOp;
use super::{Harness, domain};
use crate::peer::{self, call_header};
use libvirt_remote::proto::names::{DomainEventType, SecretEventType, SecretUsageType};

/// A registration key: (kind, event id); the object filter is `None`. The legacy lifecycle
/// registration has event id 0.
type Key = (Kind, i32);

/// The daemon callback `key` makes: the any-registration of `LIFECYCLE` is the legacy
/// lifecycle registration's.
fn daemon_key(key: Key) -> Key {
    match key {
        (Kind::DomainLegacyAny, id) if id == event_id::LIFECYCLE => (Kind::DomainLegacy, 0),
        k => k,
    }
}

/// The kinds the model registers.
const KINDS: [Kind; 4] = [
    Kind::Domain,
    Kind::Secret,
    Kind::DomainLegacyAny,
    Kind::DomainLegacy,
];

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
    /// The key of the subscription that created it: its calls' procedures and arguments.
    wire: Key,
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
    /// The registrations active with subscribers when the connection died (what a
    /// reconnect's successor registers again), with those still subscribed.
    lost: Vec<(Key, BTreeSet<SubscriberId>)>,
}

fn register_args(key: Key) -> Bytes {
    match key.0 {
        Kind::Secret => xdr::to_bytes(&SecretEvent::register_args(key.1, None)),
        Kind::Domain => xdr::to_bytes(&DomainEvent::register_args(key.1, None)),
        Kind::DomainLegacyAny => {
            xdr::to_bytes(&ConnectDomainEventRegisterAnyArgs { event_id: key.1 })
        }
        // The legacy lifecycle registration takes no arguments.
        _ => Ok(Bytes::new()),
    }
    .expect("args encode")
}

/// What the DEREGISTER of `key`'s registration under `callback_id` sends.
fn deregister_args(key: Key, callback_id: i32) -> Bytes {
    match key.0 {
        // Known by its event id (its "callback id", which the model sets to it).
        Kind::DomainLegacyAny => {
            xdr::to_bytes(&ConnectDomainEventRegisterAnyArgs { event_id: key.1 })
        }
        Kind::DomainLegacy => Ok(Bytes::new()),
        _ => xdr::to_bytes(&CallbackIdArgs { callback_id }),
    }
    .expect("args encode")
}

/// The procedure of `key`'s call in `phase`.
fn procedure(key: Key, phase: Phase) -> i32 {
    match phase {
        Phase::Deregistering(_) => key.0.deregister_proc(),
        _ => key.0.register_proc(),
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
        // Which registrations it reaches: (kind, callback id; `None`: any).
        let one;
        let targets: &[(Kind, Option<i32>)] = match event {
            Event::DomainLegacy { event } if event.event_id() == event_id::LIFECYCLE => &[
                (Kind::DomainLegacy, None),
                (Kind::DomainLegacyAny, Some(event_id::LIFECYCLE)),
            ],
            Event::DomainLegacy { event } => {
                one = [(Kind::DomainLegacyAny, Some(event.event_id()))];
                &one
            }
            _ => match (event.kind(), event.callback_id()) {
                (Some(k), Some(id)) => {
                    one = [(k, Some(id))];
                    &one
                }
                _ => return Vec::new(),
            },
        };
        let mut subs: Vec<SubscriberId> = self
            .regs
            .iter()
            .filter(|(key, r)| {
                targets.iter().any(|(k, id)| {
                    key.0 == *k
                        && matches!(r.phase, Phase::Registered(cb) if id.is_none_or(|id| id == cb))
                })
            })
            .flat_map(|(_, r)| r.subs.iter().copied())
            .collect();
        subs.sort_unstable();
        subs
    }

    /// The REGISTER calls (procedure, arguments) a successor must make: one per lost
    /// registration that still has subscribers.
    pub(super) fn lost_keys(&self) -> Vec<(i32, Bytes)> {
        self.lost
            .iter()
            .filter(|(_, subs)| !subs.is_empty())
            .map(|(key, _)| (procedure(*key, Phase::Registering), register_args(*key)))
            .collect()
    }

    /// The table made a call with `serial`.
    pub(super) fn used_serial(&self, serial: u32) -> bool {
        self.calls.contains_key(&serial)
    }

    /// `key`'s registration queues the call of `phase`.
    fn queue(&mut self, key: Key, phase: Phase) {
        let serial = self.next_serial;
        self.next_serial += 1;
        let r = self.regs.get_mut(&key).expect("known key");
        r.phase = phase;
        r.serial = serial;
        let wire = r.wire;
        let (what, args) = match phase {
            Phase::Deregistering(id) => ("DEREGISTER", deregister_args(wire, id)),
            _ => ("REGISTER", register_args(wire)),
        };
        self.calls.insert(
            serial,
            TableCall {
                key,
                procedure: procedure(wire, phase),
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
                let kind = if secret { Kind::Secret } else { Kind::Domain };
                self.subscribe((kind, i32::from(event_id % 3)), closed);
            }
            SubOp::SubscribeLegacyAny { event_id } => {
                self.subscribe((Kind::DomainLegacyAny, i32::from(event_id % 3)), closed);
            }
            SubOp::SubscribeLegacy => self.subscribe((Kind::DomainLegacy, 0), closed),
            SubOp::Unsubscribe { sub } => {
                let m = &mut self.subs;
                if sub == 255 || m.order.is_empty() {
                    return;
                }
                let sub = m.order[usize::from(sub) % m.order.len()];
                self.pair.conn.unsubscribe(sub);
                m.answered.insert(sub);
                for (_, subs) in &mut m.lost {
                    subs.remove(&sub);
                }
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
                // What libvirtd answers each procedure with.
                let legacy = Kind::DomainLegacy;
                let packet = if refuse {
                    peer::reply_error_to(&h, &peer::error(8, 0, "fuzz refusal"))
                } else if procedure == legacy.register_proc()
                    || procedure == legacy.deregister_proc()
                {
                    peer::reply_to(&h, &ConnectDomainEventRegisterRet { cb_registered: 0 })
                } else if procedure == Kind::DomainLegacyAny.register_proc()
                    || KINDS.iter().any(|k| procedure == k.deregister_proc())
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
                                secret: NonnullSecret {
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
            SubOp::LegacyEvent { event_id } => {
                let dom = domain();
                let packet = match event_id % 3 {
                    0 => peer::event(
                        procs::DOMAIN_LIFECYCLE_LEGACY,
                        &Lifecycle {
                            dom,
                            event: DomainEventType::STOPPED,
                            detail: DomainEventType::STOPPED.with_detail(0).detail,
                        },
                    ),
                    1 => peer::event(procs::DOMAIN_REBOOT_LEGACY, &DomainOnly { dom }),
                    _ => peer::event(
                        procs::DOMAIN_RTC_CHANGE_LEGACY,
                        &RtcChange { dom, offset: -3600 },
                    ),
                };
                self.pair.rx.extend_from_slice(&packet);
                self.pump();
            }
        }
    }

    /// `subscribe` to `key`'s registration, predicting what it queues.
    fn subscribe(&mut self, key: Key, closed: Option<&ConnectionError>) {
        let r = match key.0 {
            Kind::Secret => self.pair.conn.subscribe::<SecretEvent>(key.1, None),
            Kind::Domain => self.pair.conn.subscribe::<DomainEvent>(key.1, None),
            Kind::DomainLegacyAny => self.pair.conn.subscribe_domain_legacy_any(key.1),
            _ => self.pair.conn.subscribe_domain_legacy(),
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
        let wire = key;
        let key = daemon_key(key);
        if let Some(r) = m.regs.get_mut(&key) {
            r.subs.insert(sub);
            if let Phase::Registered(id) = r.phase {
                m.expected_done.push((sub, Ok(id)));
            }
        } else {
            m.regs.insert(
                key,
                Reg {
                    wire,
                    phase: Phase::Registered(0),
                    subs: BTreeSet::from([sub]),
                    serial: 0,
                },
            );
            m.queue(key, Phase::Registering);
        }
    }

    /// A client CALL that no `call`/`open_stream` returned: it must be a registration call
    /// the model predicted for that serial. False if it is none of the table's procedures.
    pub(super) fn sub_on_call(&mut self, f: &Frame) -> bool {
        let h = f.header;
        let known = KINDS
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
        let (phase, wire) = (m.regs[&key].phase, m.regs[&key].wire);
        if reply.program != REMOTE_PROGRAM || reply.procedure != procedure(wire, phase) {
            self.expect_fatal = true;
            return true;
        }
        let result = if reply.status == MessageStatus::Ok {
            Ok(payload.clone())
        } else if let Ok(w) = xdr::from_bytes::<WireError>(payload.clone()) {
            Err(CallError::from(RemoteError::from(w)))
        } else {
            self.expect_fatal = true;
            return true;
        };
        let result = match (phase, result) {
            (Phase::Deregistering(_), _) => None,
            // The any-registration's void reply stands for its event id.
            (_, Ok(p)) if wire.0 == Kind::DomainLegacyAny => {
                if p.is_empty() {
                    Some(Ok(wire.1))
                } else {
                    self.expect_fatal = true;
                    return true;
                }
            }
            // The legacy registration's reply counts callbacks; it stands for LIFECYCLE.
            (_, Ok(p)) if wire.0 == Kind::DomainLegacy => {
                if xdr::from_bytes::<ConnectDomainEventRegisterRet>(p).is_ok() {
                    Some(Ok(event_id::LIFECYCLE))
                } else {
                    self.expect_fatal = true;
                    return true;
                }
            }
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
            // Active ones with subscribers are held for a successor, under the key of the
            // subscription that made them (its calls' procedure and arguments).
            let lost: Vec<(Key, BTreeSet<SubscriberId>)> = m
                .regs
                .values()
                .filter(|r| matches!(r.phase, Phase::Registered(_)) && !r.subs.is_empty())
                .map(|r| (r.wire, r.subs.clone()))
                .collect();
            m.lost.extend(lost);
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
