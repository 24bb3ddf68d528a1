//! Layer 4: a tokio client over any `AsyncRead + AsyncWrite` (feature `client`).
//!
//! [`Client`] is a cheap clone of one connection; calls from many tasks are multiplexed by
//! serial. One spawned driver task moves bytes between the socket and the sans-io
//! [`Connection`](crate::conn::Connection), which owns every protocol rule, who writes next
//! included.
//!
//! Its modules, by job (private, but for the public paths re-exported here):
//! * `dial/`: reaching a daemon — the URI grammar ([`uri`]), the transports (unix, TCP,
//!   `tls`, SSH), SASL credentials ([`auth`]), and `Client::connect` / `handshake` / `start`;
//! * `driver/`: the driver task and what it shares with callers — the state behind the lock,
//!   the busy-poll policy, a caller's own write of its call;
//! * `api/`: what a program calls — typed and raw calls, the object API ([`handles`], whose
//!   methods are expanded from the procedure table's rows), events, stream handles, migration
//!   and the errors.
//!
//! # Cancel safety
//! * Dropping a call future forgets the call: no waiter remains, and the daemon's late reply
//!   is discarded when it arrives. The connection stays usable.
//! * Dropping an [`Upload`] or [`Download`] before it ended aborts the stream on the wire; its
//!   late packets are discarded and the connection stays usable.
//! * [`Client::call_timeout`] bounds one call; the connection survives a timed-out call.
//! * A call over the connection's cap on calls in flight
//!   ([`Config::max_in_flight`](crate::conn::Config::max_in_flight), default 4: one under
//!   libvirtd's `max_client_requests`) waits in the core; dropping its future drops it
//!   unsent.
//!
//! # Connection death
//! EOF, a transport error, a protocol violation, a keepalive timeout or [`Client::close`]
//! fail every pending call and stream at once with a [`ConnectionError`] carrying the reason,
//! and every later call fails with the same error. [`Client::close`] is synchronous,
//! idempotent and never waits behind a stalled write: it marks the connection dead, then
//! kills the transport. Dropping the last `Client` clone closes it too.
//!
//! # Reconnect (opt in)
//! With [`ConnectOptions::reconnect`], [`Client::connect`] redials a connection that died by
//! itself, with backoff, jitter and a ceiling
//! ([`ReconnectPolicy`](crate::conn::reconnect::ReconnectPolicy)); the `Client` and its
//! clones, handles and subscriptions stay valid. Calls and streams in flight at the death
//! still fail with its [`ConnectionError`] (nothing is replayed); calls made while the link
//! is down wait for it up to their own deadline or fail at once
//! ([`NewCalls`](crate::conn::reconnect::NewCalls)); each event subscription is registered
//! again and yields a [`Gap`] first ([`EventStream::next_item`]); [`Client::watch_link`]
//! shows connected / reconnecting / closed. [`Client::close`] ends it for good, at once.
//!
//! ```no_run
//! # async fn demo() -> Result<(), libvirt_remote::Error> {
//! use libvirt_remote::Connect;
//! use libvirt_remote::client::{ConnectOptions, EventItem};
//! use libvirt_remote::conn::reconnect::ReconnectPolicy;
//! use libvirt_remote::proto::events::event_id;
//!
//! let opts = ConnectOptions {
//!     reconnect: Some(ReconnectPolicy::default()),
//!     ..ConnectOptions::default()
//! };
//! let conn = Connect::open_with("qemu:///system", opts).await?;
//! let mut events = conn.subscribe::<event_id::Lifecycle>().await?;
//! while let Some(item) = events.next_item().await {
//!     match item {
//!         EventItem::Event(ev) => println!("{ev:?}"),
//!         EventItem::Gap(gap) => println!("lost {:?}: re-list the domains", gap.cause),
//!         _ => {}
//!     }
//! }
//! # Ok(()) }
//! ```
//!
//! # Backpressure
//! * Uploads wait while more than 512 KiB is queued for the socket: memory stays bounded
//!   whatever the source's speed.
//! * Downloads buffer at most `stream_window` bytes (default 4 MiB) per stream; beyond that
//!   the driver stops reading the socket until the consumer catches up. libvirt has no
//!   per-stream flow control, so while a download consumer is behind, replies to other calls
//!   on the same connection wait too: use a dedicated connection for bulk transfers.
//! * Event subscribers (domain, network, storage pool, node device and secret events, QEMU
//!   monitor events, the legacy domain registration, each a
//!   [`EventStream`]) have bounded queues; a subscriber whose queue is full loses events
//!   (counted by [`EventStream::missed`]); it never slows the connection.

pub(crate) mod api;
mod dial;
mod driver;

pub use api::handles;
#[cfg(feature = "tls")]
pub use dial::tls;
pub use dial::{auth, uri};

use api::{errors, events, migrate, pool, stream};
#[cfg(feature = "ssh")]
use dial::ssh;
use dial::transport;
use driver::{direct, shared, spin};
#[cfg(feature = "blocking")]
pub(crate) use stream::io_error;

use std::num::NonZeroUsize;
use std::sync::Arc;
use std::time::Duration;

pub use errors::Error;
pub use events::{EventItem, EventStream, Gap, Subscription};
pub use migrate::{
    MigrateError, MigrateOptions, MigrateProtocol, MigrateRefusal, MigrateStep, Migrated,
};
pub use pool::{DEFAULT_IDLE_TIMEOUT, OptionsFn, Pool, PoolOptions, PoolStats};
use shared::Inner;
pub use shared::KillFn;
#[cfg(feature = "ssh")]
pub use ssh::SshOptions;
pub use stream::{
    Download, DownloadOptions, DownloadReader, Duplex, Progress, TransferError, Upload,
    UploadOptions, UploadWriter, stream_error,
};
#[cfg(feature = "tls")]
use tls::TlsError;
use uri::UriError;

use crate::conn::handshake::{Handshake, HandshakeError, HandshakeOptions, HandshakeOutcome};
use crate::conn::reconnect::LinkState;
use crate::conn::{Config, ConnectionError};
use crate::proto::{self, Procedure};

/// How to open a connection.
#[derive(Clone)]
pub struct ConnectOptions {
    /// Core settings (keepalive, stream window, chunk size).
    pub config: Config,
    /// Handshake settings (daemon-side URI, read-only, …).
    pub handshake: HandshakeOptions,
    /// Runs (outside any lock) when the connection closes, to kill the transport directly —
    /// e.g. shut the SSH socket down so a stalled write cannot hold teardown.
    pub kill: Option<KillFn>,
    /// Queue length of each event subscription (default [`DEFAULT_EVENT_QUEUE`]). A
    /// subscriber that falls further behind loses events ([`EventStream::missed`]).
    pub event_queue: NonZeroUsize,
    /// While a reply is due, how long the driver keeps reading the socket without sleeping
    /// after the last byte moved, before it parks in epoll (default [`DEFAULT_BUSY_POLL`];
    /// zero turns it off). Unix, TCP and TLS sockets only
    /// ([`Client::connect`], [`Client::handshake_socket`]); over TLS the ciphertext socket is
    /// polled under rustls, for the budget after the last byte moved either way.
    ///
    /// A reply that finds the client parked costs a wake-up on both sides. The daemon pays
    /// for it inside its `write()`, and on a VM waking a halted vCPU is an IPI and a VM exit.
    /// Whether spinning pays is measured per connection (an adaptive policy probes spinning
    /// against parking). Measured on a 2-vCPU VM against libvirtd 9.0 (2026-12-07): sequential
    /// calls 27–28k per second spinning against 11–12k parked with the daemon pinned to the
    /// other CPU, 19–20k against 11–13k unpinned, at 34 µs of client CPU per call against
    /// 21–29 µs. The cost is at most this much spinning per wait, and nothing while no call is
    /// pending. With several calls in flight the driver always spins within the budget, and
    /// gives its CPU away between reads (`sched_yield`), so a daemon sharing that CPU is not
    /// held up: 8 calls in flight measured 1.13× (unpinned) and 1.21× (pinned) the parked
    /// driver's rate, at 15 and 28 µs of client CPU per call against 8 and 9 (over TLS a spin
    /// cannot yield, and only a lone call spins). See docs/decisions.md.
    ///
    /// The spin, the caller and the driver task are served by the runtime: on tokio's
    /// multi-thread runtime with several workers they are handed between worker threads (and
    /// an idle worker parked in `epoll_wait` is woken by each reply), which cost 15–38 % of
    /// the sequential rate with the daemon unpinned in the same measurement (two workers
    /// against one). For the lowest latency of sequential calls, run the connection's tasks
    /// on a runtime with one worker or a current-thread runtime (`lv` runs one worker).
    pub busy_poll: Duration,
    /// On a plain unix or TCP socket, a call made while nothing else is pending or queued is
    /// written by the calling task itself, without a hand-off to the driver task (default
    /// `true`; see docs/decisions.md). `false` leaves every write to the driver, as a
    /// baseline for measurements.
    pub caller_write: bool,
    /// SSH settings a `qemu+ssh://` URI cannot carry: the `~/.ssh/config` file to read and
    /// the credential callback.
    #[cfg(feature = "ssh")]
    pub ssh: SshOptions,
    /// The bound on setting the connection up: dial, the TLS or SSH handshake and the
    /// libvirt handshake (authentication included), all together
    /// ([`Client::connect`]; the libvirt handshake alone for [`Client::handshake`] and
    /// [`Client::handshake_socket`]). Past it the attempt is dropped, the transport closed,
    /// and the error is [`ConnectError::Timeout`]. Default [`DEFAULT_CONNECT_TIMEOUT`];
    /// `None` waits as long as the peer does (not recommended: a peer that accepts and never
    /// speaks then holds the caller forever).
    pub connect_timeout: Option<Duration>,
    /// Redial a connection that dies by itself (EOF, transport error, keepalive timeout,
    /// protocol violation), opt in (default `None`: a dead connection stays dead). Only
    /// [`Client::connect`] can redial (it knows the URI); the other constructors ignore it.
    ///
    /// After the death: calls in flight fail with the [`ConnectionError`] (never replayed);
    /// new calls wait for the redial up to their own deadline or fail at once
    /// ([`NewCalls`](crate::conn::reconnect::NewCalls)); streams end with the error; every
    /// event subscription is registered again on the new connection and yields a
    /// [`Gap`] first ([`EventStream::next_item`]). [`Client::watch_link`] shows the state.
    pub reconnect: Option<crate::conn::reconnect::ReconnectPolicy>,
}

/// Default [`ConnectOptions::connect_timeout`]: 20 s, room for a TLS or SSH handshake through
/// a bastion and a SCRAM exchange (≤ 1,000,000 PBKDF2 rounds) on a loaded host.
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(20);

/// Default [`ConnectOptions::event_queue`]: 256 events per subscription.
pub const DEFAULT_EVENT_QUEUE: NonZeroUsize = NonZeroUsize::new(256).expect("not zero");

/// Default [`ConnectOptions::busy_poll`]: covers a local call's round trip with its tail
/// (30–70 µs while spinning on a 2-vCPU VM, 45–80 µs over TLS), so short calls never park. 50 µs
/// ran out before the reply often enough that the spin policy judged spinning a miss with
/// the daemon unpinned and over TLS (docs/decisions.md, "Issue 17, 2026-12-07").
pub const DEFAULT_BUSY_POLL: Duration = Duration::from_micros(100);

impl Default for ConnectOptions {
    fn default() -> Self {
        Self {
            config: Config::default(),
            handshake: HandshakeOptions::default(),
            kill: None,
            event_queue: DEFAULT_EVENT_QUEUE,
            busy_poll: DEFAULT_BUSY_POLL,
            caller_write: true,
            #[cfg(feature = "ssh")]
            ssh: SshOptions::default(),
            connect_timeout: Some(DEFAULT_CONNECT_TIMEOUT),
            reconnect: None,
        }
    }
}

impl std::fmt::Debug for ConnectOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut d = f.debug_struct("ConnectOptions");
        d.field("config", &self.config)
            .field("handshake", &self.handshake)
            .field("kill", &self.kill.is_some())
            .field("event_queue", &self.event_queue)
            .field("busy_poll", &self.busy_poll)
            .field("caller_write", &self.caller_write)
            .field("connect_timeout", &self.connect_timeout)
            .field("reconnect", &self.reconnect);
        #[cfg(feature = "ssh")]
        d.field("ssh", &self.ssh);
        d.finish()
    }
}

/// Why a connection could not be set up.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConnectError {
    /// The URI is not one we can use.
    #[error(transparent)]
    Uri(#[from] UriError),
    /// Dialling the transport failed.
    #[error("cannot connect to {target}: {error}")]
    Dial {
        /// Socket path or address.
        target: String,
        /// The I/O error (formatted in the message, so not also the source).
        error: std::io::Error,
    },
    /// The opening handshake failed.
    #[error("libvirt handshake failed: {0}")]
    Handshake(HandshakeError),
    /// A transport this build cannot dial (e.g. SSH without the `ssh` feature).
    #[error("{0}")]
    Unsupported(String),
    /// The SSH transport failed (host key, authentication, channel open, …).
    #[cfg(feature = "ssh")]
    #[error("ssh: {0}")]
    Ssh(Box<ssh_socket::SshError>),
    /// The TLS transport failed (PKI files, server certificate, handshake).
    #[cfg(feature = "tls")]
    #[error("tls: {0}")]
    Tls(TlsError),
    /// Setting the connection up took longer than
    /// [`ConnectOptions::connect_timeout`]; the attempt was dropped and its transport closed.
    #[error("connecting timed out after {after:?}, during the {stage}")]
    Timeout {
        /// The bound.
        after: Duration,
        /// What was in progress: `dial`, `TLS handshake`, `SSH connection` or
        /// `libvirt handshake`.
        stage: &'static str,
    },
}

/// Drops the connection when the last [`Client`] clone goes away (unless disarmed: the
/// reconnector's handle on a redialled generation).
struct CloseOnDrop(Arc<Inner>, bool);

impl Drop for CloseOnDrop {
    fn drop(&mut self) {
        if self.1 {
            self.0.close("client dropped".into());
        }
    }
}

/// A libvirt connection. Clones share it; the last clone to drop closes it.
#[derive(Clone)]
pub struct Client {
    inner: Arc<Inner>,
    outcome: Arc<HandshakeOutcome>,
    event_queue: usize,
    /// Closes the connection when the last clone drops; its count is the clones alive.
    guard: Arc<CloseOnDrop>,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("closed", &self.is_closed())
            .finish()
    }
}

impl Client {
    /// What the handshake learned (auth types, keepalive, event callbacks).
    pub fn handshake_outcome(&self) -> &HandshakeOutcome {
        &self.outcome
    }

    /// Close now: every pending call and stream fails with
    /// [`ConnectionError::LocallyClosed`], then the transport is killed. Synchronous,
    /// idempotent, bounded: it never waits for the peer or for a pending write.
    pub fn close(&self) {
        self.close_with("closed by the application");
    }

    /// [`close`](Self::close), saying why: the reason is published first (every pending and
    /// later call, [`error`](Self::error) and [`closed`](Self::closed) read
    /// [`ConnectionError::LocallyClosed`] with it), then the transport is killed outside any
    /// lock (H1). Only the first close runs the kill; a later one returns at once, even while
    /// the first kill is still running. Returns `true` if this call closed the connection,
    /// `false` if it was dead already (the first reason stays).
    pub fn close_with(&self, reason: impl Into<Arc<str>>) -> bool {
        self.inner.close(reason.into())
    }

    /// Polite teardown: unregister the close callback and send `CONNECT_CLOSE` (each bounded
    /// by `budget`), then [`close`](Self::close) whatever happened.
    pub async fn disconnect(&self, budget: Duration) {
        for call in Handshake::close_calls(&self.outcome) {
            if call.procedure == proto::procs::connect::ConnectClose::NUMBER {
                self.inner.lock().conn.expect_close();
            }
            let fut = self.call_raw(proto::REMOTE_PROGRAM, call.procedure, &call.args);
            if tokio::time::timeout(budget, fut).await.is_err() {
                break;
            }
        }
        self.close();
    }

    /// How many `Client` clones of this connection exist (handles hold one each).
    pub(crate) fn clones(&self) -> usize {
        Arc::strong_count(&self.guard)
    }

    /// True when `self` and `other` are clones of one connection.
    pub fn same_connection(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
    }

    /// True once the connection is dead (a reconnecting client: closed for good, not while
    /// it redials).
    pub fn is_closed(&self) -> bool {
        self.inner.lock().is_dead()
    }

    /// Why the connection died, if it did (a reconnecting client: while it redials, why the
    /// last live connection died).
    pub fn error(&self) -> Option<ConnectionError> {
        self.inner.lock().conn.error().cloned()
    }

    /// The link's state: connected, reconnecting (why, which attempt) or closed (why).
    /// Without [`ConnectOptions::reconnect`]: connected, then closed.
    pub fn link_state(&self) -> LinkState {
        let st = self.inner.lock();
        match (&st.link, st.conn.error()) {
            (Some(link), _) => link.state(),
            (None, Some(e)) => LinkState::Closed(e.clone()),
            (None, None) => LinkState::Connected,
        }
    }

    /// Watch the link's state as it changes (a reconnecting client; without reconnect the
    /// value stays [`LinkState::Connected`]: use [`closed`](Self::closed)).
    pub fn watch_link(&self) -> tokio::sync::watch::Receiver<LinkState> {
        self.inner.link_rx.clone()
    }

    /// Resolves when the connection dies for good (a reconnecting client: when it is closed,
    /// or its policy gave up), with the reason.
    pub async fn closed(&self) -> ConnectionError {
        let mut rx = self.inner.closed_rx.clone();
        loop {
            if let Some(e) = rx.borrow_and_update().clone() {
                return e;
            }
            if rx.changed().await.is_err() {
                return ConnectionError::locally_closed("client dropped");
            }
        }
    }

    /// Counters of the core (late replies, stragglers, pings, …).
    pub fn stats(&self) -> crate::conn::Stats {
        self.inner.lock().conn.stats()
    }

    /// The reason the daemon gave in its close notice, if one arrived.
    pub fn close_notice(&self) -> Option<proto::names::ConnectCloseReason> {
        self.inner.lock().close_notice
    }
}
