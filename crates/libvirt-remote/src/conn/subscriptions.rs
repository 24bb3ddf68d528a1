//! Event registrations: the daemon side of every local event subscription, owned by the
//! [`Connection`](super::Connection) (commands `subscribe` / `unsubscribe`, outputs
//! `SubscriptionDone` / `Event`).
//!
//! The rules, each a libvirtd fact:
//! * **One daemon registration per (kind, event id, object)**, shared by every local
//!   subscriber: libvirtd refuses a second identical registration on a connection ("event
//!   callback already tracked"), so, like the C library, we register once and fan out.
//!   The legacy registration (`CONNECT_DOMAIN_EVENT_REGISTER`) and the legacy
//!   any-registration of `LIFECYCLE` are the same daemon callback (libvirtd refuses the
//!   second one as already tracked): one registration, of whichever came first, serves the
//!   subscribers of both.
//! * **Callback ids are unique only per kind**: the daemon takes them from the counter of the
//!   driver that owns the objects, so a domain callback and a secret callback can both be 1.
//!   Events are routed by (kind, callback id), never by id alone.
//! * **Undo a registration nobody wants any more**: when every subscriber left while the
//!   REGISTER was in flight, its reply is answered with a DEREGISTER.
//! * **Deregister before registering again**: a subscriber arriving while a DEREGISTER is in
//!   flight waits for its reply, then a fresh REGISTER goes out. Sent at once, the REGISTER
//!   could reach another daemon worker first and be refused as a duplicate.
//!
//! ```text
//!  subscribe, no registration ──REGISTER──▶ Registering ──reply OK──▶ Active(id) ─┐
//!        reply ERROR: subscribers fail ◀──┘      └─ reply OK, nobody left ─┐        │ last one
//!                                                                          ▼        ▼ leaves
//!                  nobody waiting: gone ◀──reply── Deregistering ◀──DEREGISTER──────┘
//!           subscribers waiting: REGISTER ◀──┘
//! ```
//!
//! The table never sends anything itself: it queues calls, and the connection sends them in
//! the same command or input.

use std::collections::VecDeque;

use bytes::Bytes;

use super::{CallError, ConnectionError, Output};
use crate::proto::events::{Event, Kind, event_id};

/// A local subscriber, numbered by the connection (see `Connection::subscribe`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SubscriberId(u64);

/// Where one daemon registration stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// The REGISTER call is in flight; subscribers wait.
    Registering,
    /// Events flow under this callback id.
    Active(i32),
    /// The DEREGISTER call of this callback id is in flight; subscribers present arrived
    /// meanwhile and wait.
    Deregistering(i32),
}

/// One daemon-side registration.
#[derive(Debug)]
struct Registration {
    id: u64,
    kind: Kind,
    /// The encoded register arguments (event id and object filter): the key, and what every
    /// REGISTER of this registration sends.
    key: Bytes,
    phase: Phase,
    subs: Vec<SubscriberId>,
}

/// Which call of a registration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum CallKind {
    Register,
    Deregister,
}

/// A call the table wants made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Call {
    /// `kind`'s register procedure with these encoded arguments.
    Register { kind: Kind, key: Bytes },
    /// `kind`'s deregister procedure for this callback id.
    Deregister { kind: Kind, callback_id: i32 },
}

impl Call {
    fn kind(&self) -> CallKind {
        match self {
            Call::Register { .. } => CallKind::Register,
            Call::Deregister { .. } => CallKind::Deregister,
        }
    }
}

/// Every registration of one connection. See the [module docs](self).
#[derive(Debug, Default)]
pub(super) struct Subscriptions {
    regs: Vec<Registration>,
    /// Calls in flight: serial → (registration, which call).
    calls: super::serials::SerialMap<u32, (u64, CallKind)>,
    /// Calls to make, in order: (registration, call).
    outbox: VecDeque<(u64, Call)>,
    next_sub: u64,
    next_reg: u64,
    /// The active registrations of a dead connection, for its successor to make again
    /// (reconnect): kind, key, subscribers.
    lost: Vec<(Kind, Bytes, Vec<SubscriberId>)>,
}

/// The daemon callback a registration of (`kind`, `key`) makes: the legacy any-registration
/// of `LIFECYCLE` is the legacy registration's (see the [module docs](self)).
fn daemon_callback(kind: Kind, key: &[u8]) -> (Kind, &[u8]) {
    match kind {
        Kind::DomainLegacyAny if key == event_id::LIFECYCLE.to_be_bytes() => {
            (Kind::DomainLegacy, &[])
        }
        _ => (kind, key),
    }
}

impl Subscriptions {
    fn index(&self, reg: u64) -> Option<usize> {
        self.regs.iter().position(|r| r.id == reg)
    }

    /// Add a subscriber to the registration for (`kind`, `key`), creating it (and queueing
    /// its REGISTER) if there is none. An active registration answers at once.
    pub(super) fn subscribe(
        &mut self,
        kind: Kind,
        key: Bytes,
        out: &mut VecDeque<Output>,
    ) -> SubscriberId {
        self.next_sub += 1;
        let sub = SubscriberId(self.next_sub);
        let callback = daemon_callback(kind, &key);
        if let Some(r) = self
            .regs
            .iter_mut()
            .find(|r| daemon_callback(r.kind, &r.key) == callback)
        {
            r.subs.push(sub);
            if let Phase::Active(callback_id) = r.phase {
                out.push_back(Output::SubscriptionDone {
                    subscriber: sub,
                    result: Ok(callback_id),
                });
            }
            return sub;
        }
        self.register(kind, key, vec![sub]);
        sub
    }

    /// A new registration of (`kind`, `key`) for `subs`: its REGISTER is queued.
    fn register(&mut self, kind: Kind, key: Bytes, subs: Vec<SubscriberId>) {
        self.next_reg += 1;
        self.regs.push(Registration {
            id: self.next_reg,
            kind,
            key,
            phase: Phase::Registering,
            subs,
        });
        self.queue(self.regs.len() - 1, Phase::Registering);
    }

    /// Remove one subscriber; the last one out of an active registration deregisters it (a
    /// registering one is undone when its reply arrives). Unknown ids are ignored.
    pub(super) fn unsubscribe(&mut self, sub: SubscriberId) {
        let Some(i) = self.regs.iter().position(|r| r.subs.contains(&sub)) else {
            return;
        };
        let r = &mut self.regs[i];
        r.subs.retain(|s| *s != sub);
        if let (Phase::Active(callback_id), true) = (r.phase, r.subs.is_empty()) {
            self.queue(i, Phase::Deregistering(callback_id));
        }
    }

    /// Registration `i` enters `phase` (registering or deregistering): queue its call.
    fn queue(&mut self, i: usize, phase: Phase) {
        let r = &mut self.regs[i];
        r.phase = phase;
        let call = match phase {
            Phase::Deregistering(callback_id) => Call::Deregister {
                kind: r.kind,
                callback_id,
            },
            _ => Call::Register {
                kind: r.kind,
                key: r.key.clone(),
            },
        };
        self.outbox.push_back((r.id, call));
    }

    /// The next call to make; report its serial with [`sent`](Self::sent).
    pub(super) fn poll_call(&mut self) -> Option<(u64, Call)> {
        self.outbox.pop_front()
    }

    /// The call [`poll_call`](Self::poll_call) returned for `reg` went out as `serial`.
    pub(super) fn sent(&mut self, reg: u64, serial: u32, call: &Call) {
        self.calls.insert(serial, (reg, call.kind()));
    }

    /// The call for `reg` could not be queued: its waiting subscribers fail.
    pub(super) fn send_failed(&mut self, reg: u64, error: &CallError, out: &mut VecDeque<Output>) {
        if let Some(i) = self.index(reg) {
            let r = self.regs.swap_remove(i);
            for subscriber in r.subs {
                out.push_back(Output::SubscriptionDone {
                    subscriber,
                    result: Err(error.clone()),
                });
            }
        }
    }

    /// Which call `serial` is, if it is one of ours.
    pub(super) fn call_kind(&self, serial: u32) -> Option<CallKind> {
        self.calls.get(&serial).map(|(_, k)| *k)
    }

    /// The REGISTER `serial` was answered: the callback id, or the daemon's error.
    pub(super) fn registered(
        &mut self,
        serial: u32,
        result: Result<i32, CallError>,
        out: &mut VecDeque<Output>,
    ) {
        let Some((reg, _)) = self.calls.remove(&serial) else {
            return;
        };
        let Some(i) = self.index(reg) else {
            return;
        };
        match result {
            // Every subscriber went away while the call was in flight: undo it.
            Ok(callback_id) if self.regs[i].subs.is_empty() => {
                self.queue(i, Phase::Deregistering(callback_id));
            }
            Ok(callback_id) => {
                let r = &mut self.regs[i];
                r.phase = Phase::Active(callback_id);
                for subscriber in &r.subs {
                    out.push_back(Output::SubscriptionDone {
                        subscriber: *subscriber,
                        result: Ok(callback_id),
                    });
                }
            }
            Err(e) => self.send_failed(reg, &e, out),
        }
    }

    /// The DEREGISTER `serial` was answered (whatever the daemon said, the callback is gone
    /// or never was): the registration ends, unless subscribers arrived meanwhile, who get a
    /// fresh REGISTER.
    pub(super) fn deregistered(&mut self, serial: u32) {
        let Some((reg, _)) = self.calls.remove(&serial) else {
            return;
        };
        let Some(i) = self.index(reg) else {
            return;
        };
        if self.regs[i].subs.is_empty() {
            self.regs.swap_remove(i);
        } else {
            self.queue(i, Phase::Registering);
        }
    }

    /// The registration kind and key of the REGISTER call `serial`, if it is one of ours.
    pub(super) fn register_call(&self, serial: u32) -> Option<(Kind, &Bytes)> {
        let (reg, CallKind::Register) = self.calls.get(&serial)? else {
            return None;
        };
        let r = &self.regs[self.index(*reg)?];
        Some((r.kind, &r.key))
    }

    /// The subscribers an event reaches: those of the active registration of its kind and
    /// callback id (none for the close notice or an id nobody holds). A legacy domain event
    /// has no callback id: a lifecycle one reaches the connection's one legacy
    /// registration, every id (lifecycle included) the any-registration of that id, whose
    /// "callback id" is its event id (one registration serves both for lifecycle, so each
    /// subscriber gets the event once).
    pub(super) fn route(&self, event: &Event) -> Vec<SubscriberId> {
        let (kind, callback_id) = match event {
            Event::DomainLegacy { event } if event.event_id() == event_id::LIFECYCLE => {
                let mut subs = self.route_to(Kind::DomainLegacy, None);
                subs.extend(self.route_to(Kind::DomainLegacyAny, Some(event_id::LIFECYCLE)));
                return subs;
            }
            Event::DomainLegacy { event } => (Kind::DomainLegacyAny, Some(event.event_id())),
            Event::QemuMonitor { callback_id, .. } => (Kind::QemuMonitor, Some(*callback_id)),
            _ => match (event.kind(), event.callback_id()) {
                (Some(kind), Some(id)) => (kind, Some(id)),
                _ => return Vec::new(),
            },
        };
        self.route_to(kind, callback_id)
    }

    /// The subscribers of the active registrations of `kind` (and callback id, if given).
    fn route_to(&self, kind: Kind, callback_id: Option<i32>) -> Vec<SubscriberId> {
        self.regs
            .iter()
            .filter(|r| {
                r.kind == kind
                    && matches!(r.phase, Phase::Active(id) if callback_id.is_none_or(|c| c == id))
            })
            .flat_map(|r| r.subs.iter().copied())
            .collect()
    }

    /// The connection died: every waiting subscriber fails with `error`, in subscription
    /// order; active ones end with the connection (`Output::Closed`). The table is empty
    /// afterwards.
    /// The active ones with subscribers are kept for a successor ([`successor`](Self::successor)).
    pub(super) fn fail(&mut self, error: &ConnectionError, out: &mut VecDeque<Output>) {
        let mut waiting = Vec::new();
        for r in self.regs.drain(..) {
            match r.phase {
                Phase::Active(_) if !r.subs.is_empty() => self.lost.push((r.kind, r.key, r.subs)),
                Phase::Active(_) => {}
                _ => waiting.extend(r.subs),
            }
        }
        waiting.sort_unstable();
        for subscriber in waiting {
            out.push_back(Output::SubscriptionDone {
                subscriber,
                result: Err(CallError::Connection(error.clone())),
            });
        }
        self.calls.clear();
        self.outbox.clear();
    }

    /// A subscriber of a dead connection left: its registration is not made again.
    pub(super) fn forget_lost(&mut self, sub: SubscriberId) {
        for (_, _, subs) in &mut self.lost {
            subs.retain(|s| *s != sub);
        }
        self.lost.retain(|(_, _, subs)| !subs.is_empty());
    }

    /// The table of a successor connection: the registrations this dead one lost, held until
    /// [`restore`](Self::restore), and the subscriber numbering continued.
    pub(super) fn successor(&mut self) -> Self {
        Self {
            lost: std::mem::take(&mut self.lost),
            next_sub: self.next_sub,
            next_reg: self.next_reg,
            ..Self::default()
        }
    }

    /// Make the lost registrations again (the successor's handshake is done): each queues
    /// its REGISTER, and its subscribers (the same ids) get a `SubscriptionDone` with the new
    /// callback id or the daemon's refusal.
    pub(super) fn restore(&mut self) {
        for (kind, key, subs) in std::mem::take(&mut self.lost) {
            self.register(kind, key, subs);
        }
    }

    /// Registrations waiting for [`restore`](Self::restore).
    pub(super) fn lost_count(&self) -> usize {
        self.lost.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 105 and the any-registration of `LIFECYCLE` make one daemon registration (whichever
    /// came first), other any ids their own; the shared one deregisters when both left.
    #[test]
    fn legacy_and_any_lifecycle_share_one_registration() {
        let mut t = Subscriptions::default();
        let mut out = VecDeque::new();
        let lifecycle = Bytes::copy_from_slice(&event_id::LIFECYCLE.to_be_bytes());
        let legacy = t.subscribe(Kind::DomainLegacy, Bytes::new(), &mut out);
        let any = t.subscribe(Kind::DomainLegacyAny, lifecycle, &mut out);
        let reboot = t.subscribe(
            Kind::DomainLegacyAny,
            Bytes::copy_from_slice(&event_id::REBOOT.to_be_bytes()),
            &mut out,
        );
        let calls: Vec<Call> = std::iter::from_fn(|| t.poll_call())
            .map(|(_, c)| c)
            .collect();
        assert_eq!(
            calls,
            [
                Call::Register {
                    kind: Kind::DomainLegacy,
                    key: Bytes::new()
                },
                Call::Register {
                    kind: Kind::DomainLegacyAny,
                    key: Bytes::copy_from_slice(&event_id::REBOOT.to_be_bytes())
                },
            ]
        );
        assert_eq!(t.regs.len(), 2);
        assert_eq!(t.regs[0].subs, [legacy, any]);
        assert_eq!(t.regs[1].subs, [reboot]);
        t.regs[0].phase = Phase::Active(event_id::LIFECYCLE);
        t.unsubscribe(legacy);
        assert!(t.poll_call().is_none(), "the any subscriber still holds it");
        t.unsubscribe(any);
        assert_eq!(
            t.poll_call().map(|(_, c)| c),
            Some(Call::Deregister {
                kind: Kind::DomainLegacy,
                callback_id: event_id::LIFECYCLE
            })
        );
    }
}
