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
use crate::client::events::{Gap, Subscriber};
use crate::conn::reconnect::{Admission, LinkState, Reconnect};
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
    /// Runs (outside any lock) to kill this generation's transport.
    pub(crate) kill: Option<KillFn>,
    /// The connection generation `conn` is (one more per reconnect); a driver of an older
    /// one touches nothing.
    pub(crate) generation: u64,
    /// The reconnect lifecycle (the core's), when the client reconnects.
    pub(crate) link: Option<Reconnect>,
    /// What [`Client::watch_link`](crate::Client::watch_link) reads.
    pub(crate) link_tx: watch::Sender<LinkState>,
    /// When the last live generation was lost and why (the subscribers' gap items).
    pub(crate) lost: Option<(std::time::SystemTime, ConnectionError)>,
    /// The task that redials (aborted when the link closes for good).
    pub(crate) reconnector: Option<tokio::task::AbortHandle>,
    /// The link ended for good: subscribers and watchers were told.
    pub(crate) finished: bool,
}

impl State {
    /// Remove one event subscriber (the core deregisters with the daemon if it was the last).
    pub(crate) fn unsubscribe(&mut self, sub: SubscriberId) {
        self.subscribers.remove(&sub);
        self.conn.unsubscribe(sub);
        self.wake_driver();
    }

    /// What a new call may do now: go, wait for the redial, or fail.
    pub(crate) fn admit(&self) -> Admission {
        self.link.as_ref().map_or(Admission::Go, Reconnect::admit)
    }

    /// Dead for good: the connection is dead and no redial will follow.
    pub(crate) fn is_dead(&self) -> bool {
        self.conn.is_closed() && self.link.as_ref().is_none_or(Reconnect::is_closed)
    }

    /// Tell the link's watchers its state.
    pub(crate) fn publish_link(&self) {
        if let Some(link) = &self.link {
            self.link_tx.send_replace(link.state());
        }
    }

    /// The link ended for good (`e`): waiters of [`closed`](crate::Client::closed) wake,
    /// subscription streams end, upload waiters wake, the reconnector stops. Once.
    pub(crate) fn finish(&mut self, e: ConnectionError) {
        if self.finished {
            return;
        }
        self.finished = true;
        self.closed_tx.send_replace(Some(e));
        // Dropping the senders ends every subscription stream.
        self.subscribers.clear();
        for w in self.writable.drain(..) {
            w.wake();
        }
        self.publish_link();
        if let Some(task) = self.reconnector.take() {
            task.abort();
        }
    }

    /// A generation died by itself with `e`: with reconnect on, the link starts redialling
    /// (calls and streams of the dead generation have ended with `e` already; subscribers
    /// stay, to be registered again); otherwise, or when the link is closed, it is the end.
    fn lost(&mut self, e: ConnectionError) {
        if let Some(link) = &mut self.link {
            let was_connected = !link.is_reconnecting() && !link.is_closed();
            link.handle_lost(std::time::Instant::now(), e.clone(), random());
            if was_connected && link.is_reconnecting() {
                self.lost = Some((std::time::SystemTime::now(), e));
                for w in self.writable.drain(..) {
                    w.wake();
                }
                self.publish_link();
                return;
            }
            if !link.is_closed() {
                // A generation that died in its own handshake: the reconnector's failed dial.
                return;
            }
        }
        self.finish(e);
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
                    let gap = self.lost.as_ref().map(|(at, cause)| (*at, cause));
                    let keep = self
                        .subscribers
                        .get_mut(&subscriber)
                        .is_none_or(|s| s.complete(result, gap.map(|(at, c)| Gap::new(at, c))));
                    if !keep {
                        self.subscribers.remove(&subscriber);
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
                Output::Closed(e) => self.lost(e),
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

/// A random `u64` (the reconnect jitter's draw): std's per-instance hash keys, no
/// dependency.
pub(crate) fn random() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    std::collections::hash_map::RandomState::new()
        .build_hasher()
        .finish()
}

pub(crate) struct Inner {
    pub(crate) state: Mutex<State>,
    /// Set (under the state lock) by the close that runs the kill; later closes (another
    /// handle, the last clone's drop) only find the core dead. A flag, not a once-cell:
    /// nobody waits for the first kill.
    pub(crate) killed: AtomicBool,
    pub(crate) closed_rx: watch::Receiver<Option<ConnectionError>>,
    /// The link's state ([`State::link_tx`]).
    pub(crate) link_rx: watch::Receiver<LinkState>,
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
            let error = ConnectionError::locally_closed(reason.clone());
            // The link first: the generation's death below is then the end, not a loss.
            let link_closed = st.link.as_mut().is_some_and(|l| l.close(error.clone()));
            let first = !st.conn.is_closed() || link_closed;
            st.conn.close(reason);
            st.dispatch();
            // Dead already (reconnecting): no `Closed` came out of the core for this close.
            st.finish(error);
            st.wake_driver();
            let kill = st
                .kill
                .clone()
                .filter(|_| !self.killed.swap(true, Ordering::AcqRel));
            (first, kill)
        };
        if let Some(kill) = kill {
            kill();
        }
        first
    }

    /// Kill the current generation's transport once (outside the lock), if not yet: the
    /// reconnector's first step after a loss, before it dials (H1: a stalled SSH or TLS
    /// session of the dead generation is shut down, never waited for).
    pub(crate) fn kill_generation(&self) {
        let kill = {
            let st = self.lock();
            st.kill
                .clone()
                .filter(|_| !self.killed.swap(true, Ordering::AcqRel))
        };
        if let Some(kill) = kill {
            kill();
        }
    }

    /// A redial's generation failed before it went live (handshake refused, timed out or
    /// dropped): mark it dead and kill its transport, leaving the link reconnecting.
    pub(crate) fn abandon_generation(&self, generation: u64, why: &str) {
        {
            let mut st = self.lock();
            if st.generation != generation {
                return;
            }
            st.conn.close(format!("reconnect attempt failed: {why}"));
            st.dispatch();
            st.wake_driver();
        }
        self.kill_generation();
    }
}
