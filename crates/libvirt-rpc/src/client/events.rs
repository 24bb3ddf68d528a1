//! Event subscriptions (domain, network, storage pool, node device, secret) as
//! `futures::Stream`s with bounded queues.
//!
//! One daemon registration serves every local subscriber with the same kind, event id and
//! object filter ([`Registrations`]); events are routed by kind and callback id.
//!
//! Callback ids are only unique per kind: the daemon takes them from the counter of the
//! driver that owns the objects (the qemu driver for domains, the storage driver for pools,
//! …), so a domain callback and a pool callback can both be 1. Subscribers are therefore
//! keyed by kind and id, never by id alone.

use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll};

use bytes::Bytes;
use tokio::sync::mpsc::error::TrySendError;
use tokio::sync::{mpsc, watch};

use tracing::Instrument;

use super::Client;
use super::shared::Inner;
use crate::conn::{CallError, Connection};
use crate::proto::events::StoragePoolEvent;
use crate::proto::events::{DomainEvent, Event, NetworkEvent, NodeDeviceEvent, SecretEvent};
use crate::proto::procs::common::{CallbackIdArgs, CallbackIdRet};
use crate::proto::procs::connect::{
    ConnectDomainEventCallbackDeregisterAny, ConnectDomainEventCallbackRegisterAny,
    ConnectDomainEventCallbackRegisterAnyArgs,
};
use crate::proto::procs::network::{
    ConnectNetworkEventDeregisterAny, ConnectNetworkEventRegisterAny,
    ConnectNetworkEventRegisterAnyArgs,
};
use crate::proto::procs::nodedev::{
    ConnectNodeDeviceEventDeregisterAny, ConnectNodeDeviceEventRegisterAny,
    ConnectNodeDeviceEventRegisterAnyArgs,
};
use crate::proto::procs::secret::{
    ConnectSecretEventDeregisterAny, ConnectSecretEventRegisterAny,
    ConnectSecretEventRegisterAnyArgs,
};
use crate::proto::procs::storage::{
    ConnectStoragePoolEventDeregisterAny, ConnectStoragePoolEventRegisterAny,
    ConnectStoragePoolEventRegisterAnyArgs,
};
use crate::proto::types::{Domain, Network, NodeDevice, Secret, StoragePool};
use crate::proto::{Procedure, REMOTE_PROGRAM};
use crate::wire::xdr;

/// Every `*_EVENT_*REGISTER_ANY` reply: the callback id.
pub(crate) type RegisterRet = CallbackIdRet;

/// The object kind an event subscription is for; part of the subscriber's key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Domain,
    Network,
    StoragePool,
    NodeDevice,
    Secret,
}

impl Kind {
    /// The (register, deregister) procedures of this kind.
    fn procs(self) -> (i32, i32) {
        match self {
            Kind::Domain => (
                ConnectDomainEventCallbackRegisterAny::NUMBER,
                ConnectDomainEventCallbackDeregisterAny::NUMBER,
            ),
            Kind::Network => (
                ConnectNetworkEventRegisterAny::NUMBER,
                ConnectNetworkEventDeregisterAny::NUMBER,
            ),
            Kind::StoragePool => (
                ConnectStoragePoolEventRegisterAny::NUMBER,
                ConnectStoragePoolEventDeregisterAny::NUMBER,
            ),
            Kind::NodeDevice => (
                ConnectNodeDeviceEventRegisterAny::NUMBER,
                ConnectNodeDeviceEventDeregisterAny::NUMBER,
            ),
            Kind::Secret => (
                ConnectSecretEventRegisterAny::NUMBER,
                ConnectSecretEventDeregisterAny::NUMBER,
            ),
        }
    }

    /// Queue a register call with already-encoded arguments (the registration's key).
    fn register(self, conn: &mut Connection, key: &[u8]) -> Result<u32, CallError> {
        conn.call_raw(REMOTE_PROGRAM, self.procs().0, &super::Raw(key), None)
    }

    /// Queue the deregister call for `callback_id`.
    fn deregister(self, conn: &mut Connection, callback_id: i32) -> Result<u32, CallError> {
        conn.call_raw(
            REMOTE_PROGRAM,
            self.procs().1,
            &CallbackIdArgs { callback_id },
            None,
        )
    }
}

/// The sending half of one subscription, typed by kind.
pub(crate) enum EventSender {
    Domain(mpsc::Sender<DomainEvent>),
    Network(mpsc::Sender<NetworkEvent>),
    StoragePool(mpsc::Sender<StoragePoolEvent>),
    NodeDevice(mpsc::Sender<NodeDeviceEvent>),
    Secret(mpsc::Sender<SecretEvent>),
}

/// What happened when an event was offered to one subscriber.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Offer {
    /// Another kind.
    NotMine,
    Queued,
    /// The subscriber's queue was full (or it just went away): the event is lost for it.
    Full,
}

impl EventSender {
    pub(crate) fn kind(&self) -> Kind {
        match self {
            EventSender::Domain(_) => Kind::Domain,
            EventSender::Network(_) => Kind::Network,
            EventSender::StoragePool(_) => Kind::StoragePool,
            EventSender::NodeDevice(_) => Kind::NodeDevice,
            EventSender::Secret(_) => Kind::Secret,
        }
    }

    /// Queue `ev` if it is of this subscriber's kind. Never blocks.
    pub(crate) fn offer(&self, ev: &Event) -> Offer {
        fn send<T: Clone>(tx: &mpsc::Sender<T>, ev: &T) -> Offer {
            match tx.try_send(ev.clone()) {
                Ok(()) => Offer::Queued,
                Err(TrySendError::Full(_) | TrySendError::Closed(_)) => Offer::Full,
            }
        }
        match (self, ev) {
            (EventSender::Domain(tx), Event::Domain { event, .. }) => send(tx, event),
            (EventSender::Network(tx), Event::Network { event, .. }) => send(tx, event),
            (EventSender::StoragePool(tx), Event::StoragePool { event, .. }) => send(tx, event),
            (EventSender::NodeDevice(tx), Event::NodeDevice { event, .. }) => send(tx, event),
            (EventSender::Secret(tx), Event::Secret { event, .. }) => send(tx, event),
            _ => Offer::NotMine,
        }
    }
}

/// The kind and callback id an event was sent for.
fn route(ev: &Event) -> Option<(Kind, i32)> {
    Some(match ev {
        Event::Domain { callback_id, .. } => (Kind::Domain, *callback_id),
        Event::Network { callback_id, .. } => (Kind::Network, *callback_id),
        Event::StoragePool { callback_id, .. } => (Kind::StoragePool, *callback_id),
        Event::NodeDevice { callback_id, .. } => (Kind::NodeDevice, *callback_id),
        Event::Secret { callback_id, .. } => (Kind::Secret, *callback_id),
        _ => return None,
    })
}

/// Where one daemon registration stands, as its subscribers see it.
#[derive(Debug, Clone)]
pub(crate) enum RegState {
    /// Not (yet, or again) registered: wait.
    Pending,
    Active(i32),
    Failed(CallError),
}

/// One local subscriber of a registration.
struct Sub {
    id: u64,
    tx: EventSender,
    missed: Arc<AtomicU64>,
}

/// One daemon-side registration, shared by every local subscriber with the same kind, event
/// id and object filter: the daemon refuses a second identical registration on a connection
/// ("event callback already tracked"), so, like the C library, we register once and fan
/// out locally.
struct Registration {
    id: u64,
    kind: Kind,
    /// The encoded register arguments (event id and object filter): the key, and what the
    /// register call sends.
    key: Bytes,
    /// `Active` while events flow; `Pending` while a register or deregister call is in
    /// flight (the reply's slot says which).
    state: watch::Sender<RegState>,
    subs: Vec<Sub>,
}

impl Registration {
    fn callback_id(&self) -> Option<i32> {
        match *self.state.borrow() {
            RegState::Active(id) => Some(id),
            _ => None,
        }
    }
}

/// Every registration of one connection.
#[derive(Default)]
pub(crate) struct Registrations {
    regs: Vec<Registration>,
    next_id: u64,
}

/// What [`Registrations::attach`] did.
pub(crate) struct Attached {
    /// The subscriber's id, for [`Registrations::detach`].
    pub(crate) sub: u64,
    /// Becomes `Active` or `Failed` when the daemon answers.
    pub(crate) state: watch::Receiver<RegState>,
    /// The register call, when this subscriber created the registration.
    pub(crate) queued: Option<Queued>,
}

/// Which call of a registration a call slot stands for.
#[derive(Debug, Clone, Copy)]
pub(crate) enum RegCall {
    Register,
    Deregister,
}

/// A call the registration table queued; the caller records its slot so that the reply
/// comes back to [`Registrations::registered`] or [`Registrations::deregistered`].
#[derive(Debug, Clone, Copy)]
pub(crate) struct Queued {
    pub(crate) serial: u32,
    /// The registration's id.
    pub(crate) reg: u64,
    pub(crate) call: RegCall,
}

impl Registrations {
    fn index(&self, reg: u64) -> Option<usize> {
        self.regs.iter().position(|r| r.id == reg)
    }

    /// Add a subscriber to the registration for `key`, creating it (and queueing its
    /// register call) if there is none.
    pub(crate) fn attach(
        &mut self,
        kind: Kind,
        key: Bytes,
        tx: EventSender,
        missed: Arc<AtomicU64>,
        conn: &mut Connection,
    ) -> Result<Attached, CallError> {
        self.next_id += 1;
        let sub = Sub {
            id: self.next_id,
            tx,
            missed,
        };
        let sub_id = sub.id;
        if let Some(r) = self
            .regs
            .iter_mut()
            .find(|r| r.kind == kind && r.key == key)
        {
            r.subs.push(sub);
            return Ok(Attached {
                sub: sub_id,
                state: r.state.subscribe(),
                queued: None,
            });
        }
        let serial = kind.register(conn, &key)?;
        self.next_id += 1;
        let (state, rx) = watch::channel(RegState::Pending);
        self.regs.push(Registration {
            id: self.next_id,
            kind,
            key,
            state,
            subs: vec![sub],
        });
        Ok(Attached {
            sub: sub_id,
            state: rx,
            queued: Some(Queued {
                serial,
                reg: self.next_id,
                call: RegCall::Register,
            }),
        })
    }

    /// Drop registration `i`; its waiting subscribers get `error`.
    fn fail(&mut self, i: usize, error: CallError) {
        let r = self.regs.swap_remove(i);
        r.state.send_replace(RegState::Failed(error));
    }

    /// Start closing registration `i` (its last subscriber left). Until the deregister
    /// reply, it counts as pending: a subscriber that arrives meanwhile waits for it and then
    /// registers again, because a register call sent at once could be handled by another
    /// daemon worker before the deregistration and be refused as a duplicate.
    fn close(&mut self, i: usize, callback_id: i32, conn: &mut Connection) -> Option<Queued> {
        let r = &self.regs[i];
        match r.kind.deregister(conn, callback_id) {
            Ok(serial) => {
                r.state.send_replace(RegState::Pending);
                Some(Queued {
                    serial,
                    reg: r.id,
                    call: RegCall::Deregister,
                })
            }
            Err(e) => {
                self.fail(i, e);
                None
            }
        }
    }

    /// The daemon answered the register call of registration `reg`.
    pub(crate) fn registered(
        &mut self,
        reg: u64,
        serial: u32,
        result: Result<Bytes, CallError>,
        conn: &mut Connection,
    ) -> Option<Queued> {
        let i = self.index(reg)?;
        let kind = self.regs[i].kind;
        let outcome = result.and_then(|payload| {
            xdr::from_bytes::<RegisterRet>(payload)
                .map(|r| r.callback_id)
                .map_err(|e| {
                    CallError::Connection(conn.report_bad_reply(kind.procs().0, serial, e))
                })
        });
        match outcome {
            // Every subscriber went away while the call was in flight: undo it.
            Ok(callback_id) if self.regs[i].subs.is_empty() => self.close(i, callback_id, conn),
            Ok(callback_id) => {
                self.regs[i]
                    .state
                    .send_replace(RegState::Active(callback_id));
                None
            }
            Err(e) => {
                self.fail(i, e);
                None
            }
        }
    }

    /// The daemon answered the deregister call of registration `reg`: gone, unless
    /// subscribers arrived meanwhile, who get a fresh registration.
    pub(crate) fn deregistered(&mut self, reg: u64, conn: &mut Connection) -> Option<Queued> {
        let i = self.index(reg)?;
        if self.regs[i].subs.is_empty() {
            self.regs.swap_remove(i);
            return None;
        }
        let r = &self.regs[i];
        match r.kind.register(conn, &r.key) {
            Ok(serial) => Some(Queued {
                serial,
                reg,
                call: RegCall::Register,
            }),
            Err(e) => {
                self.fail(i, e);
                None
            }
        }
    }

    /// Remove one subscriber; the last one out of an active registration deregisters it
    /// (a registering one is undone when its reply arrives).
    pub(crate) fn detach(&mut self, kind: Kind, sub: u64, conn: &mut Connection) -> Option<Queued> {
        let i = self
            .regs
            .iter()
            .position(|r| r.kind == kind && r.subs.iter().any(|s| s.id == sub))?;
        self.regs[i].subs.retain(|s| s.id != sub);
        match self.regs[i].callback_id() {
            Some(callback_id) if self.regs[i].subs.is_empty() => self.close(i, callback_id, conn),
            _ => None,
        }
    }

    /// Hand `ev` to every subscriber of its registration. Never blocks: a full queue loses
    /// the event for that subscriber and counts it.
    pub(crate) fn deliver(&self, ev: &Event) {
        let Some((kind, callback_id)) = route(ev) else {
            return;
        };
        for r in self
            .regs
            .iter()
            .filter(|r| r.kind == kind && r.callback_id() == Some(callback_id))
        {
            for s in &r.subs {
                if s.tx.offer(ev) == Offer::Full {
                    s.missed.fetch_add(1, Ordering::Relaxed);
                }
            }
        }
    }

    /// The connection died: every subscription stream ends, every waiting subscriber wakes.
    pub(crate) fn clear(&mut self) {
        self.regs.clear();
    }
}

/// A subscription to one event id of one kind: [`DomainEvent`]s by default, or
/// [`NetworkEvent`], [`StoragePoolEvent`], [`NodeDeviceEvent`], [`SecretEvent`]. Ends
/// (`None`) when the connection dies.
///
/// Subscriptions to the same event id and object on one connection share one daemon
/// registration (libvirtd refuses a duplicate); each gets every event in its own bounded
/// queue. Dropping the last one deregisters the callback with the daemon.
pub struct EventStream<E = DomainEvent> {
    rx: mpsc::Receiver<E>,
    missed: Arc<AtomicU64>,
    callback_id: i32,
    kind: Kind,
    /// This subscriber within its registration.
    sub: u64,
    inner: Arc<Inner>,
}

impl<E> std::fmt::Debug for EventStream<E> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EventStream")
            .field("kind", &self.kind)
            .field("callback_id", &self.callback_id)
            .finish_non_exhaustive()
    }
}

impl<E> EventStream<E> {
    /// Events dropped because this subscriber's queue was full.
    pub fn missed(&self) -> u64 {
        self.missed.load(Ordering::Relaxed)
    }

    /// The daemon's callback id (unique per event kind, not across kinds). Subscriptions to
    /// the same event id and object share one daemon registration, hence one id.
    pub fn callback_id(&self) -> i32 {
        self.callback_id
    }
}

impl<E> futures::Stream for EventStream<E> {
    type Item = E;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<E>> {
        self.rx.poll_recv(cx)
    }
}

impl<E> Drop for EventStream<E> {
    fn drop(&mut self) {
        // Never waits: a deregistration, if this was the last subscriber, is only queued.
        self.inner.lock().detach_subscriber(self.kind, self.sub);
    }
}

impl Client {
    /// Subscribe to a domain event id ([`crate::proto::events::event_id`]) for one domain or
    /// all.
    pub async fn subscribe_domain_events(
        &self,
        event_id: i32,
        dom: Option<Domain>,
    ) -> Result<EventStream<DomainEvent>, CallError> {
        self.subscribe::<ConnectDomainEventCallbackRegisterAny, _>(
            &ConnectDomainEventCallbackRegisterAnyArgs { event_id, dom },
            EventSender::Domain,
        )
        .await
    }

    /// Subscribe to a network event id
    /// ([`network_event_id`](crate::proto::procs::network::network_event_id)) for one network
    /// or all.
    pub async fn subscribe_network_events(
        &self,
        event_id: i32,
        net: Option<Network>,
    ) -> Result<EventStream<NetworkEvent>, CallError> {
        self.subscribe::<ConnectNetworkEventRegisterAny, _>(
            &ConnectNetworkEventRegisterAnyArgs { event_id, net },
            EventSender::Network,
        )
        .await
    }

    /// Subscribe to a storage pool event id
    /// ([`pool_event_id`](crate::proto::procs::storage::pool_event_id)) for one pool or all.
    pub async fn subscribe_storage_pool_events(
        &self,
        event_id: i32,
        pool: Option<StoragePool>,
    ) -> Result<EventStream<StoragePoolEvent>, CallError> {
        self.subscribe::<ConnectStoragePoolEventRegisterAny, _>(
            &ConnectStoragePoolEventRegisterAnyArgs { event_id, pool },
            EventSender::StoragePool,
        )
        .await
    }

    /// Subscribe to a node device event id
    /// ([`node_device_event_id`](crate::proto::procs::nodedev::node_device_event_id)) for one
    /// device or all.
    pub async fn subscribe_node_device_events(
        &self,
        event_id: i32,
        dev: Option<NodeDevice>,
    ) -> Result<EventStream<NodeDeviceEvent>, CallError> {
        self.subscribe::<ConnectNodeDeviceEventRegisterAny, _>(
            &ConnectNodeDeviceEventRegisterAnyArgs { event_id, dev },
            EventSender::NodeDevice,
        )
        .await
    }

    /// Subscribe to a secret event id
    /// ([`secret_event_id`](crate::proto::procs::secret::secret_event_id)) for one secret or
    /// all.
    pub async fn subscribe_secret_events(
        &self,
        event_id: i32,
        secret: Option<Secret>,
    ) -> Result<EventStream<SecretEvent>, CallError> {
        self.subscribe::<ConnectSecretEventRegisterAny, _>(
            &ConnectSecretEventRegisterAnyArgs { event_id, secret },
            EventSender::Secret,
        )
        .await
    }

    /// Subscribe through the registration for these arguments, registering with `P` if
    /// there is none yet. The subscriber is attached before the call goes out, so an event
    /// right behind the reply is not lost. Cancel safe: dropping the future detaches it.
    async fn subscribe<P, E>(
        &self,
        args: &P::Args,
        wrap: fn(mpsc::Sender<E>) -> EventSender,
    ) -> Result<EventStream<E>, CallError>
    where
        P: Procedure<Ret = RegisterRet>,
    {
        let key = xdr::to_bytes(args)?;
        let (tx, rx) = mpsc::channel(self.event_queue);
        let tx = wrap(tx);
        let kind = tx.kind();
        let missed = Arc::new(AtomicU64::new(0));
        let (sub, mut state) = {
            let mut st = self.inner.lock();
            let st = &mut *st;
            let a = st
                .events
                .attach(kind, key, tx, missed.clone(), &mut st.conn)?;
            if let Some(q) = a.queued {
                tracing::debug!(proc = P::NAME, serial = q.serial, "event registration");
            }
            st.track(a.queued);
            (a.sub, a.state)
        };
        // Built now, so that its drop detaches the subscriber if this future is dropped
        // while the registration is in flight (or the registration fails).
        let mut stream = EventStream {
            rx,
            missed,
            callback_id: 0,
            kind,
            sub,
            inner: self.inner.clone(),
        };
        let span = tracing::debug_span!("libvirt.subscribe", proc = P::NAME);
        let outcome = async {
            state
                .wait_for(|s| !matches!(s, RegState::Pending))
                .await
                .map(|s| s.clone())
        }
        .instrument(span)
        .await;
        stream.callback_id = match outcome {
            Ok(RegState::Active(id)) => id,
            Ok(RegState::Failed(e)) => return Err(e),
            // The registration was dropped: the connection died.
            Ok(RegState::Pending) | Err(_) => {
                // The lock is released before `stream` drops (its drop takes it too).
                let e = self.inner.lock().conn.error().cloned();
                return Err(CallError::Connection(e.unwrap_or_else(|| {
                    crate::conn::ConnectionError::locally_closed("subscription dropped")
                })));
            }
        };
        Ok(stream)
    }
}
