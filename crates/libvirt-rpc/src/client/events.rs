//! Event subscriptions (domain, network, storage pool, node device, secret) as
//! `futures::Stream`s with bounded queues.
//!
//! The registration protocol (one daemon registration per kind, event id and object; undo,
//! deregister before registering again; callback ids per kind) lives in the core
//! ([`crate::conn::subscriptions`]). This module keeps only what the core cannot: for each
//! [`SubscriberId`] it hands out, the subscriber's queue and the task waiting for its outcome.

use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll};

use tokio::sync::{mpsc, oneshot};
use tracing::Instrument;

use super::Client;
use super::shared::Inner;
use crate::conn::{CallError, ConnectionError, SubscriberId};
use crate::proto::Procedure;
use crate::proto::events::{
    DomainEvent, Event, EventKind, NetworkEvent, NodeDeviceEvent, SecretEvent, StoragePoolEvent,
};
use crate::proto::types::{Domain, Network, NodeDevice, Secret, StoragePool};

/// The sending half of one subscriber's queue, whatever its family.
trait Sink: Send {
    /// Queue `event` (of this subscriber's family, as the core routes them). Never blocks;
    /// false when the queue was full or its reader went away: the event is lost for it.
    fn offer(&self, event: &Event) -> bool;
}

impl<E: EventKind> Sink for mpsc::Sender<E> {
    fn offer(&self, event: &Event) -> bool {
        E::of(event).is_none_or(|e| self.try_send(e.clone()).is_ok())
    }
}

/// One local subscriber, keyed by the core's [`SubscriberId`].
pub(crate) struct Subscriber {
    sink: Box<dyn Sink>,
    missed: Arc<AtomicU64>,
    /// Answered with the registration's outcome (taken when it arrives).
    done: Option<oneshot::Sender<Result<i32, CallError>>>,
}

impl Subscriber {
    /// The core answered this subscriber's registration.
    pub(crate) fn complete(&mut self, result: Result<i32, CallError>) {
        if let Some(done) = self.done.take() {
            // The waiting future may be gone: its stream's drop unsubscribes.
            let _ = done.send(result);
        }
    }

    /// Hand over one event; a full queue loses it and counts it.
    pub(crate) fn deliver(&self, event: &Event) {
        if !self.sink.offer(event) {
            self.missed.fetch_add(1, Ordering::Relaxed);
        }
    }
}

/// A subscription to one event id of one family: [`DomainEvent`]s by default, or
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
    sub: SubscriberId,
    inner: Arc<Inner>,
}

impl<E: EventKind> std::fmt::Debug for EventStream<E> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EventStream")
            .field("kind", &E::KIND)
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
        self.inner.lock().unsubscribe(self.sub);
    }
}

impl Client {
    /// Subscribe to event id `event_id` of family `K` ([`DomainEvent`], [`NetworkEvent`],
    /// [`StoragePoolEvent`], [`NodeDeviceEvent`], [`SecretEvent`]) for one object or all.
    ///
    /// The subscriber is attached before the register call goes out, so an event right behind
    /// the reply is not lost. Cancel safe: dropping the future detaches it (and a
    /// registration nobody wants any more is undone when its reply arrives).
    pub async fn subscribe<K: EventKind>(
        &self,
        event_id: i32,
        object: Option<K::Object>,
    ) -> Result<EventStream<K>, CallError> {
        let (tx, rx) = mpsc::channel::<K>(self.event_queue);
        let (done, outcome) = oneshot::channel();
        let missed = Arc::new(AtomicU64::new(0));
        let sub = {
            let mut st = self.inner.lock();
            let sub = st.conn.subscribe::<K>(event_id, object)?;
            st.subscribers.insert(
                sub,
                Subscriber {
                    sink: Box::new(tx),
                    missed: missed.clone(),
                    done: Some(done),
                },
            );
            st.wake_driver();
            sub
        };
        // Built now, so that its drop detaches the subscriber if this future is dropped
        // while the registration is in flight (or the registration fails).
        let mut stream = EventStream {
            rx,
            missed,
            callback_id: 0,
            sub,
            inner: self.inner.clone(),
        };
        let name = <K::Register as Procedure>::NAME;
        let span = tracing::debug_span!("libvirt.subscribe", proc = name, event_id);
        stream.callback_id = match outcome.instrument(span).await {
            Ok(Ok(id)) => id,
            Ok(Err(e)) => return Err(e),
            // The subscriber was dropped unanswered: the connection died.
            Err(_) => {
                // The lock is released before `stream` drops (its drop takes it too).
                let e = self.inner.lock().conn.error().cloned();
                return Err(CallError::Connection(e.unwrap_or_else(|| {
                    ConnectionError::locally_closed("subscription dropped")
                })));
            }
        };
        Ok(stream)
    }

    /// [`subscribe`](Self::subscribe) to a domain event id
    /// ([`crate::proto::events::event_id`]) for one domain or all.
    pub async fn subscribe_domain_events(
        &self,
        event_id: i32,
        dom: Option<Domain>,
    ) -> Result<EventStream<DomainEvent>, CallError> {
        self.subscribe::<DomainEvent>(event_id, dom).await
    }

    /// [`subscribe`](Self::subscribe) to a network event id
    /// ([`network_event_id`](crate::proto::events::network_event_id)) for one network or all.
    pub async fn subscribe_network_events(
        &self,
        event_id: i32,
        net: Option<Network>,
    ) -> Result<EventStream<NetworkEvent>, CallError> {
        self.subscribe::<NetworkEvent>(event_id, net).await
    }

    /// [`subscribe`](Self::subscribe) to a storage pool event id
    /// ([`pool_event_id`](crate::proto::events::pool_event_id)) for one pool or all.
    pub async fn subscribe_storage_pool_events(
        &self,
        event_id: i32,
        pool: Option<StoragePool>,
    ) -> Result<EventStream<StoragePoolEvent>, CallError> {
        self.subscribe::<StoragePoolEvent>(event_id, pool).await
    }

    /// [`subscribe`](Self::subscribe) to a node device event id
    /// ([`node_device_event_id`](crate::proto::events::node_device_event_id)) for one device
    /// or all.
    pub async fn subscribe_node_device_events(
        &self,
        event_id: i32,
        dev: Option<NodeDevice>,
    ) -> Result<EventStream<NodeDeviceEvent>, CallError> {
        self.subscribe::<NodeDeviceEvent>(event_id, dev).await
    }

    /// [`subscribe`](Self::subscribe) to a secret event id
    /// ([`secret_event_id`](crate::proto::events::secret_event_id)) for one secret or all.
    pub async fn subscribe_secret_events(
        &self,
        event_id: i32,
        secret: Option<Secret>,
    ) -> Result<EventStream<SecretEvent>, CallError> {
        self.subscribe::<SecretEvent>(event_id, secret).await
    }
}
