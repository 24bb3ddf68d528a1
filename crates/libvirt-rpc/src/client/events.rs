//! Event subscriptions (domain, network, storage pool, node device, secret) as
//! `futures::Stream`s with bounded queues.
//!
//! Callback ids are only unique per kind: the daemon takes them from the counter of the
//! driver that owns the objects (the qemu driver for domains, the storage driver for pools,
//! …), so a domain callback and a pool callback can both be 1. Subscribers are therefore
//! keyed by kind and id, never by id alone.

use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll};

use tokio::sync::mpsc;
use tokio::sync::mpsc::error::TrySendError;

use tracing::Instrument;

use super::shared::{CallSlot, Inner};
use super::{CallFuture, Client};
use crate::conn::{CallError, Connection};
use crate::proto::Procedure;
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
    /// Queue the matching deregistration. Its reply is forgotten: nobody waits for it.
    fn deregister(self, conn: &mut Connection, callback_id: i32) -> Result<u32, CallError> {
        let args = CallbackIdArgs { callback_id };
        match self {
            Kind::Domain => conn.call_typed::<ConnectDomainEventCallbackDeregisterAny>(&args, None),
            Kind::Network => conn.call_typed::<ConnectNetworkEventDeregisterAny>(&args, None),
            Kind::StoragePool => {
                conn.call_typed::<ConnectStoragePoolEventDeregisterAny>(&args, None)
            }
            Kind::NodeDevice => conn.call_typed::<ConnectNodeDeviceEventDeregisterAny>(&args, None),
            Kind::Secret => conn.call_typed::<ConnectSecretEventDeregisterAny>(&args, None),
        }
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
    /// Another kind or another callback id.
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

    pub(crate) fn is_closed(&self) -> bool {
        match self {
            EventSender::Domain(t) => t.is_closed(),
            EventSender::Network(t) => t.is_closed(),
            EventSender::StoragePool(t) => t.is_closed(),
            EventSender::NodeDevice(t) => t.is_closed(),
            EventSender::Secret(t) => t.is_closed(),
        }
    }

    /// Queue `ev` if it is of this subscriber's kind and for its callback id. Never blocks.
    pub(crate) fn offer(&self, id: i32, ev: &Event) -> Offer {
        fn send<T: Clone>(tx: &mpsc::Sender<T>, ev: &T) -> Offer {
            match tx.try_send(ev.clone()) {
                Ok(()) => Offer::Queued,
                Err(TrySendError::Full(_) | TrySendError::Closed(_)) => Offer::Full,
            }
        }
        match (self, ev) {
            (EventSender::Domain(tx), Event::Domain { callback_id, event })
                if *callback_id == id =>
            {
                send(tx, event)
            }
            (EventSender::Network(tx), Event::Network { callback_id, event })
                if *callback_id == id =>
            {
                send(tx, event)
            }
            (EventSender::StoragePool(tx), Event::StoragePool { callback_id, event })
                if *callback_id == id =>
            {
                send(tx, event)
            }
            (EventSender::NodeDevice(tx), Event::NodeDevice { callback_id, event })
                if *callback_id == id =>
            {
                send(tx, event)
            }
            (EventSender::Secret(tx), Event::Secret { callback_id, event })
                if *callback_id == id =>
            {
                send(tx, event)
            }
            _ => Offer::NotMine,
        }
    }
}

/// A subscription to one event id of one kind: [`DomainEvent`]s by default, or
/// [`NetworkEvent`], [`StoragePoolEvent`], [`NodeDeviceEvent`], [`SecretEvent`]. Ends
/// (`None`) when the connection dies; dropping it deregisters the callback with the daemon.
pub struct EventStream<E = DomainEvent> {
    rx: mpsc::Receiver<E>,
    missed: Arc<AtomicU64>,
    callback_id: i32,
    kind: Kind,
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

    /// The daemon's callback id (unique per event kind, not across kinds).
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
        // Fire and forget: the reply is discarded when it arrives.
        let mut st = self.inner.lock();
        let (kind, id) = (self.kind, self.callback_id);
        st.subscribers
            .retain(|s| !(s.tx.kind() == kind && s.callback_id == id));
        if let Ok(serial) = kind.deregister(&mut st.conn, id) {
            st.conn.forget_call(serial);
            st.wake_driver();
        }
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

    /// Register with `P` and return the stream. The subscriber is installed by the dispatch
    /// pass that completes the registration, so an event right behind the reply is not lost.
    async fn subscribe<P, E>(
        &self,
        args: &P::Args,
        wrap: fn(mpsc::Sender<E>) -> EventSender,
    ) -> Result<EventStream<E>, CallError>
    where
        P: Procedure<Ret = RegisterRet>,
    {
        let (tx, rx) = mpsc::channel(self.event_queue);
        let tx = wrap(tx);
        let kind = tx.kind();
        let missed = Arc::new(AtomicU64::new(0));
        let serial = {
            let mut st = self.inner.lock();
            let serial = st.conn.call_typed::<P>(args, None)?;
            st.calls.insert(
                serial,
                CallSlot {
                    subscribe: Some((tx, missed.clone())),
                    ..CallSlot::default()
                },
            );
            st.wake_driver();
            serial
        };
        let span = tracing::debug_span!("libvirt.call", proc = P::NAME, serial);
        let payload = CallFuture {
            inner: &self.inner,
            serial,
            done: false,
        }
        .instrument(span)
        .await?;
        let callback_id = match xdr::from_bytes::<RegisterRet>(payload) {
            Ok(r) => r.callback_id,
            Err(e) => {
                let mut st = self.inner.lock();
                let err = st.conn.report_bad_reply(P::NUMBER, serial, e);
                st.dispatch();
                return Err(CallError::Connection(err));
            }
        };
        Ok(EventStream {
            rx,
            missed,
            callback_id,
            kind,
            inner: self.inner.clone(),
        })
    }
}
