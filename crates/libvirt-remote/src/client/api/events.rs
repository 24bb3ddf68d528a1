//! Event subscriptions (domain, network, storage pool, node device, secret, the QEMU
//! monitor's events, the legacy domain registration) as `futures::Stream`s with bounded
//! queues.
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

use crate::client::handles::{Connect, Domain, Network, NodeDevice, Secret, StoragePool};
use crate::client::shared::Inner;
use crate::client::{Client, Error};
use crate::conn::{CallError, ConnectionError, SubscriberId};
use crate::proto::Procedure;
use crate::proto::events::{DomainEvent, Event, EventKind, Kind, QemuMonitorEvent, TypedEvent};
use crate::proto::types::{self, NonnullDomain};

/// The gap a reconnect leaves in a subscription: events between `lost_at` and
/// `resubscribed_at` were not seen. The first item of the subscription after a reconnect
/// ([`EventItem::Gap`]): re-list what the subscription watches to catch up.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Gap {
    /// When the old connection was lost (as the client noticed it).
    pub lost_at: std::time::SystemTime,
    /// When the registration on the new connection was answered: events from here on are
    /// delivered.
    pub resubscribed_at: std::time::SystemTime,
    /// Why the old connection died.
    pub cause: ConnectionError,
    /// The daemon's callback id on the new connection.
    pub callback_id: i32,
}

impl Gap {
    pub(crate) fn new(lost_at: std::time::SystemTime, cause: &ConnectionError) -> Self {
        Self {
            lost_at,
            resubscribed_at: std::time::SystemTime::now(),
            cause: cause.clone(),
            callback_id: 0,
        }
    }
}

/// One item of a subscription: an event, or the [`Gap`] a reconnect left.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum EventItem<E> {
    /// An event.
    Event(E),
    /// The connection was lost and the subscription registered again on the new one; the
    /// events in between are not known.
    Gap(Gap),
}

/// The sending half of one subscriber's queue, whatever its family.
trait Sink: Send {
    /// Queue `event` (of this subscriber's family, as the core routes them). Never blocks;
    /// false when the queue was full or its reader went away: the event is lost for it.
    fn offer(&self, event: &Event) -> bool;

    /// Queue a gap (same rules).
    fn gap(&self, gap: Gap) -> bool;
}

impl<E: EventKind> Sink for mpsc::Sender<EventItem<E>> {
    fn offer(&self, event: &Event) -> bool {
        E::of(event).is_none_or(|e| self.try_send(EventItem::Event(e.clone())).is_ok())
    }

    fn gap(&self, gap: Gap) -> bool {
        self.try_send(EventItem::Gap(gap)).is_ok()
    }
}

/// A QEMU monitor subscriber's queue.
struct QemuSink(mpsc::Sender<EventItem<QemuMonitorEvent>>);

impl Sink for QemuSink {
    fn offer(&self, event: &Event) -> bool {
        match event {
            Event::QemuMonitor { event, .. } => {
                self.0.try_send(EventItem::Event(event.clone())).is_ok()
            }
            _ => true,
        }
    }

    fn gap(&self, gap: Gap) -> bool {
        self.0.try_send(EventItem::Gap(gap)).is_ok()
    }
}

/// A legacy domain subscriber's queue.
struct LegacySink(mpsc::Sender<EventItem<DomainEvent>>);

impl Sink for LegacySink {
    fn offer(&self, event: &Event) -> bool {
        match event {
            Event::DomainLegacy { event } => {
                self.0.try_send(EventItem::Event(event.clone())).is_ok()
            }
            _ => true,
        }
    }

    fn gap(&self, gap: Gap) -> bool {
        self.0.try_send(EventItem::Gap(gap)).is_ok()
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
    /// The core answered this subscriber's registration. A later answer is the registration
    /// made again on a reconnected link (`gap`: when and why the old one was lost): the
    /// subscriber's queue gets the gap, or, if the daemon refused the registration, the
    /// subscriber ends (returns false: drop it, which ends its stream).
    pub(crate) fn complete(&mut self, result: Result<i32, CallError>, gap: Option<Gap>) -> bool {
        if let Some(done) = self.done.take() {
            // The waiting future may be gone: its stream's drop unsubscribes.
            let _ = done.send(result);
            return true;
        }
        match (result, gap) {
            (Ok(callback_id), Some(gap)) => {
                if !self.sink.gap(Gap { callback_id, ..gap }) {
                    self.missed.fetch_add(1, Ordering::Relaxed);
                }
                true
            }
            (Ok(_), None) => true,
            (Err(_), _) => false,
        }
    }

    /// Hand over one event; a full queue loses it and counts it.
    pub(crate) fn deliver(&self, event: &Event) {
        if !self.sink.offer(event) {
            self.missed.fetch_add(1, Ordering::Relaxed);
        }
    }
}

/// A subscription to one event id of one family ([`Client::subscribe`]): [`DomainEvent`]s by
/// default, or [`NetworkEvent`](crate::proto::events::NetworkEvent),
/// [`StoragePoolEvent`](crate::proto::events::StoragePoolEvent),
/// [`NodeDeviceEvent`](crate::proto::events::NodeDeviceEvent), [`SecretEvent`](crate::proto::events::SecretEvent). Ends
/// (`None`) when the connection dies.
///
/// Subscriptions to the same event id and object on one connection share one daemon
/// registration (libvirtd refuses a duplicate); each gets every event in its own bounded
/// queue. Dropping the last one deregisters the callback with the daemon.
pub struct EventStream<E = DomainEvent> {
    kind: Kind,
    rx: mpsc::Receiver<EventItem<E>>,
    /// Gaps skipped by [`next`](Self::next) (read by [`gaps`](Self::gaps)).
    gaps: u64,
    missed: Arc<AtomicU64>,
    callback_id: i32,
    sub: SubscriberId,
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

impl<E> EventStream<E> {
    /// The next event; `None` once the connection is dead (for a reconnecting client: closed
    /// for good). Cancel safe (no event is lost when the future is dropped). The same as
    /// `futures::StreamExt::next`, without the import.
    ///
    /// A [`Gap`] left by a reconnect is skipped here and only counted ([`gaps`](Self::gaps)):
    /// a consumer of a reconnecting client that must re-list after a gap reads
    /// [`next_item`](Self::next_item) instead.
    pub async fn next(&mut self) -> Option<E> {
        std::future::poll_fn(|cx| self.poll_event(cx)).await
    }

    /// The next item: an event, or the [`Gap`] a reconnect left (first, before the events of
    /// the new connection). `None` once the connection is closed for good. Cancel safe.
    pub async fn next_item(&mut self) -> Option<EventItem<E>> {
        self.rx.recv().await
    }

    /// Reconnect gaps [`next`](Self::next) skipped.
    pub fn gaps(&self) -> u64 {
        self.gaps
    }

    fn poll_event(&mut self, cx: &mut Context<'_>) -> Poll<Option<E>> {
        loop {
            match self.rx.poll_recv(cx) {
                Poll::Ready(Some(EventItem::Event(e))) => return Poll::Ready(Some(e)),
                Poll::Ready(Some(EventItem::Gap(_))) => self.gaps += 1,
                Poll::Ready(None) => return Poll::Ready(None),
                Poll::Pending => return Poll::Pending,
            }
        }
    }
}

impl<E> futures::Stream for EventStream<E> {
    type Item = E;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<E>> {
        self.poll_event(cx)
    }
}

/// A subscription to one event ([`TypedEvent`]: `event_id::Lifecycle`,
/// `network_event_id::Lifecycle`, `event_id::Reboot`, …), made by [`Connect::subscribe`] or a
/// handle's `subscribe` ([`Domain::subscribe`], …), that yields that event's body
/// only (a [`Lifecycle`](crate::proto::events::Lifecycle) for domain lifecycle events). Ends (`None`) when the connection
/// dies; dropping it deregisters like an [`EventStream`], which it wraps.
pub struct Subscription<T: TypedEvent> {
    events: EventStream<T::Family>,
}

impl<T: TypedEvent> std::fmt::Debug for Subscription<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Subscription")
            .field("event_id", &T::ID)
            .field("events", &self.events)
            .finish()
    }
}

impl<T: TypedEvent> Subscription<T> {
    /// The next event; `None` once the connection is dead. Cancel safe.
    pub async fn next(&mut self) -> Option<T::Body> {
        loop {
            // The core routes only this event id here; `take` just unwraps it.
            if let Some(body) = T::take(self.events.next().await?) {
                return Some(body);
            }
        }
    }

    /// The next item: this event's body, or the [`Gap`] a reconnect left
    /// ([`EventStream::next_item`]). Cancel safe.
    pub async fn next_item(&mut self) -> Option<EventItem<T::Body>> {
        loop {
            match self.events.next_item().await? {
                EventItem::Event(e) => {
                    if let Some(body) = T::take(e) {
                        return Some(EventItem::Event(body));
                    }
                }
                EventItem::Gap(g) => return Some(EventItem::Gap(g)),
            }
        }
    }

    /// Events dropped because this subscriber's queue was full.
    pub fn missed(&self) -> u64 {
        self.events.missed()
    }

    /// The daemon's callback id ([`EventStream::callback_id`]).
    pub fn callback_id(&self) -> i32 {
        self.events.callback_id()
    }

    /// The untyped stream underneath (yields the family's enum).
    pub fn into_inner(self) -> EventStream<T::Family> {
        self.events
    }
}

impl<T: TypedEvent> futures::Stream for Subscription<T>
where
    EventStream<T::Family>: Unpin,
{
    type Item = T::Body;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<T::Body>> {
        loop {
            match Pin::new(&mut self.events).poll_next(cx) {
                Poll::Ready(Some(e)) => {
                    if let Some(body) = T::take(e) {
                        return Poll::Ready(Some(body));
                    }
                }
                Poll::Ready(None) => return Poll::Ready(None),
                Poll::Pending => return Poll::Pending,
            }
        }
    }
}

impl<E> Drop for EventStream<E> {
    fn drop(&mut self) {
        // Never waits: a deregistration, if this was the last subscriber, is only queued.
        self.inner.lock().unsubscribe(self.sub);
    }
}

impl Client {
    /// Subscribe to event id `event_id` of family `K` ([`DomainEvent`],
    /// [`NetworkEvent`](crate::proto::events::NetworkEvent), [`StoragePoolEvent`](crate::proto::events::StoragePoolEvent),
    /// [`NodeDeviceEvent`](crate::proto::events::NodeDeviceEvent), [`SecretEvent`](crate::proto::events::SecretEvent)) for one
    /// object or (`None`) all; the stream yields the family's enum.
    ///
    /// The untyped form, for an event id chosen at run time (`lv event --event NAME`) or for
    /// code that drives the raw procedure table. A program that knows its event uses
    /// [`Connect::subscribe`] or a handle's `subscribe` ([`Domain::subscribe`], …), which
    /// yield that event's body.
    ///
    /// The subscriber is attached before the register call goes out, so an event right behind
    /// the reply is not lost. Cancel safe: dropping the future detaches it (and a
    /// registration nobody wants any more is undone when its reply arrives).
    pub async fn subscribe<K: EventKind>(
        &self,
        event_id: i32,
        object: Option<K::Object>,
    ) -> Result<EventStream<K>, CallError> {
        let (tx, rx) = mpsc::channel::<EventItem<K>>(self.event_queue);
        let name = <K::Register as Procedure>::NAME;
        self.subscribe_with(K::KIND, rx, Box::new(tx), name, event_id, |conn| {
            conn.subscribe::<K>(event_id, object)
        })
        .await
    }

    /// Subscribe to the QEMU monitor's events (QMP events such as `STOP`, `RESUME`,
    /// `SHUTDOWN`) of one domain or (`None`) all, of one event name or (`None`) all;
    /// `flags` ([`QemuMonitorEventRegisterFlags`](crate::proto::procs::qemu::QemuMonitorEventRegisterFlags) bits)
    /// make `event` a (case-insensitive) regular expression. The QEMU driver only (another
    /// daemon refuses the registration). Shared, bounded and deregistered on drop like
    /// [`subscribe`](Self::subscribe).
    ///
    /// ```no_run
    /// # async fn demo(client: libvirt_remote::Client) -> Result<(), libvirt_remote::conn::CallError> {
    /// let mut qmp = client.subscribe_qemu_monitor_events(None, Some("STOP"), 0).await?;
    /// while let Some(ev) = qmp.next().await {
    ///     println!("{}: {} at {}", ev.dom.name, ev.event, ev.seconds);
    /// }
    /// # Ok(()) }
    /// ```
    pub async fn subscribe_qemu_monitor_events(
        &self,
        dom: Option<NonnullDomain>,
        event: Option<&str>,
        flags: u32,
    ) -> Result<EventStream<QemuMonitorEvent>, CallError> {
        let (tx, rx) = mpsc::channel(self.event_queue);
        let name =
            <crate::proto::procs::qemu::QemuConnectDomainMonitorEventRegister as Procedure>::NAME;
        self.subscribe_with(
            Kind::QemuMonitor,
            rx,
            Box::new(QemuSink(tx)),
            name,
            0,
            |conn| conn.subscribe_qemu_monitor(dom, event, flags),
        )
        .await
    }

    /// Subscribe through the legacy registration
    /// ([`ConnectDomainEventRegister`](crate::proto::procs::connect::ConnectDomainEventRegister)):
    /// lifecycle events ([`DomainEvent::Lifecycle`]) of every domain, as libvirt's oldest
    /// clients receive them. Prefer [`Connect::subscribe`] (`conn.subscribe::<event_id::Lifecycle>()`); this
    /// is for code that must see what a legacy registration sees. The stream's
    /// [`callback_id`](EventStream::callback_id) is `LIFECYCLE`'s event id (0): libvirtd
    /// holds this registration and the any-registration of `LIFECYCLE` as one callback, so
    /// one daemon registration serves the subscribers of both, each getting an event once.
    pub async fn subscribe_domain_events_legacy(
        &self,
    ) -> Result<EventStream<DomainEvent>, CallError> {
        let (tx, rx) = mpsc::channel(self.event_queue);
        let name = <crate::proto::procs::connect::ConnectDomainEventRegister as Procedure>::NAME;
        self.subscribe_with(
            Kind::DomainLegacy,
            rx,
            Box::new(LegacySink(tx)),
            name,
            0,
            crate::conn::Connection::subscribe_domain_legacy,
        )
        .await
    }

    /// Subscribe through the legacy any-registration
    /// ([`ConnectDomainEventRegisterAny`](crate::proto::procs::connect::ConnectDomainEventRegisterAny))
    /// of `event_id` (0 to 15, [`crate::proto::events::event_id`]): that event of
    /// every domain, as the legacy `DOMAIN_EVENT_*` messages carry it (no callback id; the
    /// stream's [`callback_id`](EventStream::callback_id) is the event id). libvirtd refuses
    /// ids from 16 on (they have no legacy message). Prefer [`Connect::subscribe`];
    /// this is for code that must see what a pre-callback client sees.
    pub async fn subscribe_domain_events_legacy_any(
        &self,
        event_id: i32,
    ) -> Result<EventStream<DomainEvent>, CallError> {
        let (tx, rx) = mpsc::channel(self.event_queue);
        let name = <crate::proto::procs::connect::ConnectDomainEventRegisterAny as Procedure>::NAME;
        self.subscribe_with(
            Kind::DomainLegacyAny,
            rx,
            Box::new(LegacySink(tx)),
            name,
            event_id,
            |conn| conn.subscribe_domain_legacy_any(event_id),
        )
        .await
    }

    /// Attach a subscriber (`register` makes the core's subscription) and wait for its
    /// registration's outcome.
    async fn subscribe_with<E>(
        &self,
        kind: Kind,
        rx: mpsc::Receiver<EventItem<E>>,
        sink: Box<dyn Sink>,
        name: &'static str,
        event_id: i32,
        register: impl FnOnce(&mut crate::conn::Connection) -> Result<SubscriberId, CallError>,
    ) -> Result<EventStream<E>, CallError> {
        let (done, outcome) = oneshot::channel();
        let missed = Arc::new(AtomicU64::new(0));
        // While the link is down, wait for it (or fail) as a call does.
        self.admitted(None).await?;
        let sub = {
            let mut st = self.inner.lock();
            let sub = register(&mut st.conn)?;
            st.subscribers.insert(
                sub,
                Subscriber {
                    sink,
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
            kind,
            rx,
            gaps: 0,
            missed,
            callback_id: 0,
            sub,
            inner: self.inner.clone(),
        };
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

    /// A typed subscription ([`Connect::subscribe`] and the handles' `subscribe`) for one
    /// object or (`None`) all.
    pub(crate) async fn subscribe_to<T: TypedEvent>(
        &self,
        object: Option<<T::Family as EventKind>::Object>,
    ) -> Result<Subscription<T>, CallError> {
        let events = self.subscribe::<T::Family>(T::ID, object).await?;
        Ok(Subscription { events })
    }
}

impl Connect {
    /// Subscribe to one event of every object: `T` names it (`event_id::Lifecycle`,
    /// `event_id::Reboot`, `network_event_id::Lifecycle`, `pool_event_id::Refresh`, … in
    /// [`crate::proto::events`]) and the [`Subscription`] yields its bodies, each naming its
    /// object (`ev.dom`, `ev.net`, …). For one object's events, call `subscribe` on its handle
    /// ([`Domain::subscribe`], [`Network::subscribe`], …). libvirt's
    /// `virConnectDomainEventRegisterAny` and its siblings (`virt`'s
    /// `domain_event_register_any`), as a stream instead of a callback.
    ///
    /// Subscriptions to the same event and object on one connection share one daemon
    /// registration; each has its own bounded queue (a subscriber that falls behind loses
    /// events, counted by [`Subscription::missed`], and never slows the connection); dropping
    /// the last deregisters. Cancel safe. The [`Client`] underneath has the untyped form by
    /// event id ([`Client::subscribe`]), the QEMU monitor's events and the legacy
    /// registrations.
    ///
    /// ```no_run
    /// # async fn demo(conn: libvirt_remote::Connect) -> Result<(), libvirt_remote::Error> {
    /// use libvirt_remote::proto::events::pool_event_id;
    ///
    /// let mut pools = conn.subscribe::<pool_event_id::Lifecycle>().await?;
    /// while let Some(ev) = pools.next().await {
    ///     println!("{}: event {} detail {}", ev.pool.name, ev.event, ev.detail);
    /// }
    /// # Ok(()) }
    /// ```
    #[doc(alias = "domain_event_register_any")]
    #[doc(alias = "network_event_register_any")]
    #[doc(alias = "storage_pool_event_register_any")]
    #[doc(alias = "node_device_event_register_any")]
    #[doc(alias = "secret_event_register_any")]
    pub async fn subscribe<T: TypedEvent>(&self) -> Result<Subscription<T>, Error> {
        Ok(self.client().subscribe_to::<T>(None).await?)
    }
}

impl Domain {
    /// Subscribe to this domain's QEMU monitor events (QMP events such as `STOP`, `RESUME`,
    /// `SHUTDOWN`): of one event name or (`None`) all; `flags`
    /// ([`QemuMonitorEventRegisterFlags`](crate::proto::procs::qemu::QemuMonitorEventRegisterFlags)
    /// bits) make `event` a (case-insensitive) regular expression. The QEMU driver only.
    /// libvirt's `virConnectDomainQemuMonitorEventRegister` with this domain as the filter;
    /// every domain's: [`Client::subscribe_qemu_monitor_events`] with `None`.
    ///
    /// ```no_run
    /// # async fn demo(dom: libvirt_remote::Domain) -> Result<(), libvirt_remote::Error> {
    /// let mut qmp = dom.subscribe_qemu_monitor_events(Some("STOP"), 0).await?;
    /// while let Some(ev) = qmp.next().await {
    ///     println!("{} at {}", ev.event, ev.seconds);
    /// }
    /// # Ok(()) }
    /// ```
    #[doc(alias = "qemu_monitor_event_register")]
    pub async fn subscribe_qemu_monitor_events(
        &self,
        event: Option<&str>,
        flags: u32,
    ) -> Result<EventStream<QemuMonitorEvent>, Error> {
        let dom = Some(self.wire().clone());
        Ok(self
            .connect()
            .client()
            .subscribe_qemu_monitor_events(dom, event, flags)
            .await?)
    }
}

/// `subscribe` on the handles whose event families take an object filter: one row per
/// handle, with the `virt`/libvirt name it answers to.
macro_rules! subscribe_on_handles {
    ($($handle:ident($wire:ident) $alias:literal $family:literal $example:literal;)*) => {$(
        impl $handle {
            #[doc = concat!(
                "Subscribe to one event of this ", $family, " only: `T` names it (`",
                $example, "`, … in [`crate::proto::events`]). As [`Connect::subscribe`] \
                (which watches every object), with this object as the registration's filter."
            )]
            #[doc(alias = $alias)]
            pub async fn subscribe<T>(&self) -> Result<Subscription<T>, Error>
            where
                T: TypedEvent,
                T::Family: EventKind<Object = types::$wire>,
            {
                let object = Some(self.wire().clone());
                Ok(self.connect().client().subscribe_to::<T>(object).await?)
            }
        }
    )*};
}

/// The handles whose event families take an object filter, one row each: the handle, its
/// wire identity, the `virt`/libvirt name its `subscribe` answers to, what the docs call it
/// and an event to name. The async handles' `subscribe` here and the blocking handles' expand
/// the same rows (`$then`).
macro_rules! filtered_event_handles {
    ($then:ident) => {
        $then! {
            Domain(NonnullDomain) "domain_event_register_any" "domain" "event_id::Lifecycle";
            Network(NonnullNetwork) "network_event_register_any" "network"
                "network_event_id::Lifecycle";
            StoragePool(NonnullStoragePool) "storage_pool_event_register_any" "pool"
                "pool_event_id::Refresh";
            NodeDevice(NonnullNodeDevice) "node_device_event_register_any" "device"
                "node_device_event_id::Update";
            Secret(NonnullSecret) "secret_event_register_any" "secret"
                "secret_event_id::ValueChanged";
        }
    };
}
pub(crate) use filtered_event_handles;

filtered_event_handles!(subscribe_on_handles);
