//! State shared by the client handles and the driver task, behind one short-held mutex.
//!
//! The lock is never held across I/O or an `.await`: the driver reads and writes without it,
//! so a writer stalled on a dead peer never blocks `close()` (H1).

use std::collections::HashMap;
use std::os::fd::OwnedFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::Waker;

use bytes::Bytes;
use tokio::sync::watch;

use super::spin::SpinPolicy;
use crate::client::events::Subscriber;
use crate::conn::serials::SerialMap;
use crate::conn::{CallError, Connection, ConnectionError, Output, SubscriberId};
use crate::proto::events::Event;

/// Upload backpressure: unsent bytes allowed on each side of the driver. Upload callers wait
/// while the core holds more than this, and the driver takes at most this much from the core
/// per round, so that the rest stays queued where that wait can see it. Four default packets:
/// enough to keep the socket full (it holds ~1.6), and with the read-ahead the upload's peak
/// RSS stays at 6.6–7.4 MiB (1 MiB here gave 8.2–8.5 MiB).
pub(crate) const TRANSMIT_HIGH: usize = 512 << 10;

#[derive(Default)]
pub(crate) struct CallSlot {
    /// The error boxed: a `CallError` is a few hundred bytes, and the slot is moved into
    /// the map and the result out of it on every call (copies a success need not pay).
    pub(crate) result: Option<Result<Bytes, Box<CallError>>>,
    /// The descriptors that came with the reply (closed with the slot if nobody takes them).
    pub(crate) fds: Vec<OwnedFd>,
    pub(crate) waker: Option<Waker>,
}

#[derive(Debug, Default)]
pub(crate) struct StreamSlot {
    pub(crate) opened: bool,
    /// The core reported the stream's end (it may still hold items to read).
    pub(crate) ended: bool,
    pub(crate) waker: Option<Waker>,
    /// A duplex stream's writer, when it is not the reader's task (split halves).
    pub(crate) write_waker: Option<Waker>,
}

pub(crate) struct State {
    pub(crate) conn: Connection,
    pub(crate) calls: SerialMap<u32, CallSlot>,
    pub(crate) streams: SerialMap<u32, StreamSlot>,
    /// Event subscribers, by the core's ids.
    pub(crate) subscribers: HashMap<SubscriberId, Subscriber>,
    pub(crate) writable: Vec<Waker>,
    pub(crate) driver: Option<Waker>,
    /// The driver stopped reading because a download window is full.
    pub(crate) read_blocked: bool,
    /// The daemon's close notice (event 362) arrived.
    pub(crate) close_notice: Option<crate::proto::names::ConnectCloseReason>,
    pub(crate) closed_tx: watch::Sender<Option<ConnectionError>>,
    /// A duplicate of a plain unix or TCP socket's descriptor, for callers to write their
    /// calls themselves ([`direct`](super::direct)) and the driver to busy-poll. Dropped
    /// with the driver.
    pub(crate) direct: Option<Arc<OwnedFd>>,
    /// Whether busy-polling pays now (`None`: busy-poll off, or a transport it cannot poll).
    pub(crate) spin: Option<SpinPolicy>,
}

impl State {
    /// Remove one event subscriber (the core deregisters with the daemon if it was the last).
    pub(crate) fn unsubscribe(&mut self, sub: SubscriberId) {
        self.subscribers.remove(&sub);
        self.conn.unsubscribe(sub);
        self.wake_driver();
    }

    pub(crate) fn wake_driver(&mut self) {
        if let Some(w) = self.driver.take() {
            w.wake();
        }
    }

    /// Route everything the core produced to whoever waits for it. Never blocks: events go
    /// to bounded queues and are counted as missed when a subscriber's queue is full.
    /// Returns how many waiting calls were completed.
    pub(crate) fn dispatch(&mut self) -> usize {
        let mut completed = 0;
        while let Some(o) = self.conn.poll_output() {
            match o {
                Output::CallDone { serial, result } => {
                    // Taken even without a waiter: dropping them here closes them.
                    let fds = self.conn.take_reply_fds(serial);
                    if let Some(slot) = self.calls.get_mut(&serial) {
                        slot.result = Some(result.map_err(Box::new));
                        slot.fds = fds;
                        completed += 1;
                        if let Some(w) = slot.waker.take() {
                            w.wake();
                        }
                    }
                }
                Output::StreamOpened(id) | Output::StreamReadable(id) | Output::StreamEnded(id) => {
                    if let Some(slot) = self.streams.get_mut(&id) {
                        slot.opened |= matches!(o, Output::StreamOpened(_));
                        slot.ended |= matches!(o, Output::StreamEnded(_));
                        if let Some(w) = slot.waker.take() {
                            w.wake();
                        }
                        if let Some(w) = slot.write_waker.take() {
                            w.wake();
                        }
                    }
                }
                Output::SubscriptionDone { subscriber, result } => {
                    if let Some(s) = self.subscribers.get_mut(&subscriber) {
                        s.complete(result);
                    }
                }
                Output::Event {
                    event: Event::ConnectionClosed { reason },
                    ..
                } => {
                    self.close_notice = Some(reason);
                }
                Output::Event { event, subscribers } => {
                    for s in subscribers.iter().filter_map(|id| self.subscribers.get(id)) {
                        s.deliver(&event);
                    }
                }
                Output::Closed(e) => {
                    self.closed_tx.send_replace(Some(e));
                    // Dropping the senders ends every subscription stream.
                    self.subscribers.clear();
                    for w in self.writable.drain(..) {
                        w.wake();
                    }
                }
            }
        }
        if self.conn.transmit_queued() < TRANSMIT_HIGH / 2 || self.conn.is_closed() {
            for w in self.writable.drain(..) {
                w.wake();
            }
        }
        completed
    }
}

/// Runs outside any lock to kill the transport (e.g. shut the SSH socket down).
pub type KillFn = Arc<dyn Fn() + Send + Sync>;

pub(crate) struct Inner {
    pub(crate) state: Mutex<State>,
    pub(crate) kill: Option<KillFn>,
    /// Set (under the state lock) by the close that runs the kill; later closes (another
    /// handle, the last clone's drop) only find the core dead. A flag, not a once-cell:
    /// nobody waits for the first kill.
    pub(crate) killed: AtomicBool,
    pub(crate) closed_rx: watch::Receiver<Option<ConnectionError>>,
}

impl Inner {
    pub(crate) fn lock(&self) -> MutexGuard<'_, State> {
        // A panic while holding the lock leaves the state consistent enough to fail calls.
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Mark dead (publishing why) first, then kill the transport outside the lock. Returns
    /// whether this call closed the connection (false: it was dead already).
    ///
    /// Who kills is decided under the lock, together with the publish: the first closer.
    /// Decided after the lock is released, a task that the publish woke (a caller whose call
    /// just failed, closing in turn) could win the kill and run a stalled kill inside that
    /// caller, which is exactly what the publish was to spare it. A connection that died by
    /// itself is killed by the first close after.
    pub(crate) fn close(&self, reason: Arc<str>) -> bool {
        let (first, kill) = {
            let mut st = self.lock();
            let first = !st.conn.is_closed();
            st.conn.close(reason);
            st.dispatch();
            st.wake_driver();
            let kill = self
                .kill
                .as_ref()
                .filter(|_| !self.killed.swap(true, Ordering::AcqRel));
            (first, kill)
        };
        if let Some(kill) = kill {
            kill();
        }
        first
    }
}
