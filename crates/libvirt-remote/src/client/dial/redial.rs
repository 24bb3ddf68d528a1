//! The reconnector: one task per reconnecting client that dials the next generation when
//! the core's lifecycle ([`Reconnect`](crate::conn::reconnect::Reconnect)) says so. It only
//! sleeps, dials and reports; when to dial, what calls do meanwhile and what the link's
//! state is are the core's.
//!
//! ```text
//!  lost (driver) ─▶ Backoff ─sleep─▶ Dialing: kill the dead transport (H1), dial, handshake
//!     ├─ ok: Connected, subscriptions registered again (each stream: a Gap first)
//!     └─ failed: that generation abandoned (marked dead, killed) ─▶ Backoff (or Closed)
//! ```
//!
//! It holds the connection weakly, and `close` aborts it: a close never waits for a dial.

use std::sync::{Arc, Weak};
use std::time::Instant;

use tracing::Instrument;

use crate::client::shared::Inner;
use crate::client::shared::random;
use crate::client::{Client, ConnectOptions};
use crate::conn::ConnectionError;
use crate::conn::reconnect::{LinkState, Reconnect};

/// Start the reconnector of `inner`, dialling `uri` with `opts`.
pub(super) fn spawn(inner: &Arc<Inner>, uri: String, opts: ConnectOptions) {
    let task = tokio::spawn(
        run(Arc::downgrade(inner), uri, opts).instrument(tracing::debug_span!("libvirt.redial")),
    );
    let mut st = inner.lock();
    if st.finished {
        task.abort();
    } else {
        st.reconnector = Some(task.abort_handle());
    }
}

/// What the reconnector does next.
enum Next {
    /// Nothing due: wait for the link's state to change.
    Watch,
    /// Dial at this time.
    At(Instant),
    /// The link is closed for good.
    Stop,
}

async fn run(weak: Weak<Inner>, uri: String, opts: ConnectOptions) {
    let Some(mut rx) = weak.upgrade().map(|i| i.link_rx.clone()) else {
        return;
    };
    loop {
        rx.borrow_and_update();
        let next = {
            let Some(inner) = weak.upgrade() else {
                return;
            };
            let st = inner.lock();
            match &st.link {
                Some(link) if !link.is_closed() => {
                    link.poll_timeout().map_or(Next::Watch, Next::At)
                }
                _ => Next::Stop,
            }
        };
        match next {
            Next::Stop => return,
            Next::Watch => {
                if rx.changed().await.is_err() {
                    return;
                }
                continue;
            }
            Next::At(at) => tokio::time::sleep_until(at.into()).await,
        }
        let Some(inner) = weak.upgrade() else {
            return;
        };
        let (attempt, generation) = {
            let mut st = inner.lock();
            let attempt = st
                .link
                .as_mut()
                .and_then(|l| l.handle_timeout(Instant::now()));
            st.publish_link();
            (attempt, st.generation)
        };
        let Some(attempt) = attempt else {
            continue;
        };
        // The dead generation's transport goes first, outside any lock (H1).
        inner.kill_generation();
        tracing::debug!(attempt, "redialling");
        let outcome = match Client::dial(&uri, opts.clone(), Some(inner.clone())).await {
            Ok(_) => {
                let mut st = inner.lock();
                if st.generation == generation + 1 && !st.conn.is_closed() {
                    if let Some(link) = &mut st.link {
                        link.handle_connected();
                    }
                    st.conn.resubscribe();
                    st.dispatch();
                    st.wake_driver();
                    st.publish_link();
                    tracing::debug!(attempt, "reconnected");
                    Ok(())
                } else {
                    // Died between its handshake and now: a failed dial like any other.
                    Err(st
                        .conn
                        .error()
                        .map_or_else(|| "lost during the handshake".into(), ToString::to_string))
                }
            }
            Err(e) => Err(e.to_string()),
        };
        if let Err(why) = outcome {
            tracing::debug!(attempt, error = %why, "redial failed");
            inner.abandon_generation(generation + 1, &why);
            let mut st = inner.lock();
            let closed = st.link.as_mut().is_some_and(|l| {
                l.handle_dial_failed(Instant::now(), why.as_str(), random());
                l.is_closed()
            });
            if closed {
                let e = match st.link.as_ref().map(Reconnect::state) {
                    Some(LinkState::Closed(e)) => e,
                    _ => ConnectionError::locally_closed("reconnect ended"),
                };
                st.finish(e);
                return;
            }
            st.publish_link();
        }
    }
}
