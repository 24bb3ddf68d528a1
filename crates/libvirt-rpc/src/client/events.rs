//! Domain event subscriptions as `futures::Stream`s with bounded queues.

use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll};

use tokio::sync::mpsc;

use tracing::Instrument;

use super::shared::{CallSlot, Inner};
use super::{CallFuture, Client};
use crate::conn::CallError;
use crate::proto::REMOTE_PROGRAM;
use crate::proto::events::DomainEvent;
use crate::proto::types::Domain;
use crate::wire::xdr;
use crate::xdr_struct;

/// `REMOTE_PROC_CONNECT_DOMAIN_EVENT_CALLBACK_REGISTER_ANY`.
const REGISTER_ANY: i32 = 316;
/// `REMOTE_PROC_CONNECT_DOMAIN_EVENT_CALLBACK_DEREGISTER_ANY`.
const DEREGISTER_ANY: i32 = 317;

xdr_struct! {
    /// `remote_connect_domain_event_callback_register_any_args`.
    pub struct RegisterArgs {
        /// `virDomainEventID`.
        pub event_id: i32,
        /// One domain, or `None` for all.
        pub dom: Option<Domain>,
    }
}

xdr_struct! {
    /// `remote_connect_domain_event_callback_register_any_ret`.
    pub struct RegisterRet {
        /// Id the daemon puts in each event.
        pub callback_id: i32,
    }
}

xdr_struct! {
    /// `remote_connect_domain_event_callback_deregister_any_args`.
    pub struct DeregisterArgs {
        /// Id from the registration.
        pub callback_id: i32,
    }
}

/// A subscription to one domain event id. Ends (`None`) when the connection dies; dropping it
/// deregisters the callback with the daemon.
pub struct EventStream {
    rx: mpsc::Receiver<DomainEvent>,
    missed: Arc<AtomicU64>,
    callback_id: i32,
    inner: Arc<Inner>,
}

impl std::fmt::Debug for EventStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EventStream")
            .field("callback_id", &self.callback_id)
            .finish_non_exhaustive()
    }
}

impl EventStream {
    /// Events dropped because this subscriber's queue was full.
    pub fn missed(&self) -> u64 {
        self.missed.load(Ordering::Relaxed)
    }

    /// The daemon's callback id.
    pub fn callback_id(&self) -> i32 {
        self.callback_id
    }
}

impl futures::Stream for EventStream {
    type Item = DomainEvent;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<DomainEvent>> {
        self.rx.poll_recv(cx)
    }
}

impl Drop for EventStream {
    fn drop(&mut self) {
        // Fire and forget: the reply is discarded when it arrives.
        let mut st = self.inner.lock();
        st.subscribers.retain(|s| s.callback_id != self.callback_id);
        let args = DeregisterArgs {
            callback_id: self.callback_id,
        };
        if let Ok(serial) = st.conn.call(REMOTE_PROGRAM, DEREGISTER_ANY, &args, None) {
            st.conn.forget_call(serial);
            st.wake_driver();
        }
    }
}

impl Client {
    /// Subscribe to a domain event id (see `proto::events::event_id`) for one domain or all.
    pub async fn subscribe_domain_events(
        &self,
        event_id: i32,
        dom: Option<Domain>,
    ) -> Result<EventStream, CallError> {
        let (tx, rx) = mpsc::channel(self.event_queue);
        let missed = Arc::new(AtomicU64::new(0));
        let serial = {
            let mut st = self.inner.lock();
            let serial = st.conn.call(
                REMOTE_PROGRAM,
                REGISTER_ANY,
                &RegisterArgs { event_id, dom },
                None,
            )?;
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
        let span = tracing::debug_span!(
            "libvirt.call",
            proc = "ConnectDomainEventCallbackRegisterAny",
            serial
        );
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
                let err = st.conn.report_bad_reply(REGISTER_ANY, serial, e);
                st.dispatch();
                return Err(CallError::Connection(err));
            }
        };
        Ok(EventStream {
            rx,
            missed,
            callback_id,
            inner: self.inner.clone(),
        })
    }
}
