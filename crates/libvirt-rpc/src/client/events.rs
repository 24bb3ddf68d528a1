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
use crate::proto::Procedure;
use crate::proto::events::DomainEvent;
use crate::proto::procs::common::{CallbackIdArgs, CallbackIdRet};
use crate::proto::procs::connect::{
    ConnectDomainEventCallbackDeregisterAny, ConnectDomainEventCallbackRegisterAny,
    ConnectDomainEventCallbackRegisterAnyArgs,
};
use crate::proto::types::Domain;
use crate::wire::xdr;

/// `remote_connect_domain_event_callback_register_any_ret`: the callback id.
pub(crate) type RegisterRet = CallbackIdRet;

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
        let args = CallbackIdArgs {
            callback_id: self.callback_id,
        };
        if let Ok(serial) = st
            .conn
            .call_typed::<ConnectDomainEventCallbackDeregisterAny>(&args, None)
        {
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
            let serial = st
                .conn
                .call_typed::<ConnectDomainEventCallbackRegisterAny>(
                    &ConnectDomainEventCallbackRegisterAnyArgs { event_id, dom },
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
            proc = ConnectDomainEventCallbackRegisterAny::NAME,
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
                let err = st.conn.report_bad_reply(
                    ConnectDomainEventCallbackRegisterAny::NUMBER,
                    serial,
                    e,
                );
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
