//! Layer 4: a tokio client over any `AsyncRead + AsyncWrite` (feature `client`).
//!
//! [`Client`] is a cheap clone of one connection; calls from many tasks are multiplexed by
//! serial. One spawned driver task moves bytes between the socket and the sans-io
//! [`Connection`].
//!
//! # Cancel safety
//! * Dropping a call future forgets the call: no waiter remains, and the daemon's late reply
//!   is discarded when it arrives. The connection stays usable.
//! * Dropping an [`Upload`] or [`Download`] before it ended aborts the stream on the wire; its
//!   late packets are discarded and the connection stays usable.
//! * [`Client::call_timeout`] bounds one call; the connection survives a timed-out call.
//!
//! # Connection death
//! EOF, a transport error, a protocol violation, a keepalive timeout or [`Client::close`]
//! fail every pending call and stream at once with a [`ConnectionError`] carrying the reason,
//! and every later call fails with the same error. [`Client::close`] is synchronous,
//! idempotent and never waits behind a stalled write: it marks the connection dead, then
//! kills the transport. Dropping the last `Client` clone closes it too.
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

mod api;
mod dial;
mod driver;

pub use api::handles;
#[cfg(feature = "tls")]
pub use dial::tls;
pub use dial::{auth, uri};

use api::{errors, events, migrate, stream};
#[cfg(feature = "ssh")]
use dial::ssh;
use dial::transport;
use driver::{direct, shared, spin};

use std::any::Any;
use std::collections::HashMap;
use std::future::Future;
use std::num::NonZeroUsize;
use std::os::fd::{AsFd, OwnedFd};
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use bytes::Bytes;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::watch;
use tracing::Instrument;

pub use errors::Error;
pub use events::{EventStream, Subscription};
pub use handles::Connect;
pub use migrate::{
    MigrateError, MigrateOptions, MigrateProtocol, MigrateRefusal, MigrateStep, Migrated,
};
pub use shared::KillFn;
use shared::{CallSlot, Inner, State};
use spin::{SpinGate, SpinPolicy};
#[cfg(feature = "ssh")]
pub use ssh::SshOptions;
pub use stream::{
    Download, DownloadOptions, DownloadReader, Duplex, Progress, TransferError, Upload,
    UploadOptions, UploadWriter, stream_error,
};
#[cfg(feature = "tls")]
pub use tls::TlsError;
pub use uri::{
    LibvirtUri, RemoteMode, SshProxy, SshTarget, TlsTarget, Transport, UriError, default_uri,
};

use crate::conn::handshake::{Handshake, HandshakeError, HandshakeOptions, HandshakeOutcome};
use crate::conn::{CallError, Config, Connection, ConnectionError, WriteTurn};
use crate::proto::{self, Procedure};
use crate::wire::xdr::{Encode, Preencoded};
use transport::{Io, Plain, UnixFds};

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
    /// While a lone call awaits its reply, how long the driver keeps reading the socket
    /// without sleeping after the last byte moved, before it parks in epoll (default
    /// [`DEFAULT_BUSY_POLL`]; zero turns it off). Unix, TCP and TLS sockets only
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
    /// pending. With several calls in flight the driver never spins: there spinning won only
    /// with the daemon pinned (1.14–1.19× at 8 in flight) and lost with it unpinned (0.82×).
    /// See docs/decisions.md.
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
}

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
            .field("caller_write", &self.caller_write);
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
}

/// The transport's kill switch first, then the caller's.
#[cfg(any(feature = "ssh", feature = "tls"))]
fn chain_kill(kill: KillFn, user: Option<KillFn>) -> KillFn {
    match user {
        Some(user_kill) => Arc::new(move || {
            kill();
            user_kill();
        }),
        None => kill,
    }
}

/// Drops the connection when the last [`Client`] clone goes away.
struct CloseOnDrop(Arc<Inner>);

impl Drop for CloseOnDrop {
    fn drop(&mut self) {
        self.0.close("client dropped".into());
    }
}

/// A libvirt connection. Clones share it; the last clone to drop closes it.
#[derive(Clone)]
pub struct Client {
    inner: Arc<Inner>,
    outcome: Arc<HandshakeOutcome>,
    event_queue: usize,
    _guard: Arc<CloseOnDrop>,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("closed", &self.is_closed())
            .finish()
    }
}

/// What the client can reach under the driver's transport, besides the transport itself.
#[derive(Default)]
struct Access {
    /// A duplicate of a plain socket's descriptor: callers write their calls through it, the
    /// driver busy-polls it.
    fd: Option<Arc<OwnedFd>>,
    /// Over TLS, the busy-poll gate of the TCP stream under rustls.
    gate: Option<Arc<SpinGate>>,
    /// The transport returns at most one record per read (TLS).
    records: bool,
}

impl Access {
    /// A duplicate of `io`'s descriptor. Without one we simply neither write from callers nor
    /// busy-poll: not worth failing the connection for.
    fn socket(io: &impl AsFd) -> Self {
        Self {
            fd: io.as_fd().try_clone_to_owned().ok().map(Arc::new),
            gate: None,
            records: false,
        }
    }
}

impl Client {
    /// Connect to a libvirt URI (`qemu:///system`, `qemu+unix:///session?socket=…`,
    /// `test+unix:///default?socket=…`, `qemu+tcp://host:16509/system`,
    /// `qemu+tls://host/system`, `qemu+ssh://…`) and run the handshake.
    ///
    /// If the daemon demands SASL, credentials come from libvirt's auth.conf chain
    /// ([`auth`]) for the URI's host, then from
    /// [`HandshakeOptions::sasl`](crate::conn::handshake::HandshakeOptions::sasl)'s callback;
    /// `?auth=sasl.MECH` picks the mechanism.
    pub async fn connect(uri: &str, mut opts: ConnectOptions) -> Result<Self, ConnectError> {
        let parsed = LibvirtUri::parse(uri)?;
        if opts.handshake.name.is_none() {
            opts.handshake.name = Some(parsed.remote_name.clone());
        }
        let host = match &parsed.transport {
            Transport::Unix { .. } => "localhost",
            Transport::Tcp { host, .. } => host,
            Transport::Ssh(t) => &t.host,
            Transport::Tls(t) => &t.host,
        };
        let sasl = &mut opts.handshake.sasl;
        if sasl.mechanism.is_none() {
            sasl.mechanism.clone_from(&parsed.sasl_mechanism);
        }
        sasl.credentials = Some(auth::credential_chain(
            host.to_string(),
            parsed.authfile.clone(),
            sasl.credentials.take(),
        ));
        sasl.insecure_transport = matches!(parsed.transport, Transport::Tcp { .. });
        match &parsed.transport {
            Transport::Unix { path } => {
                let s = tokio::net::UnixStream::connect(path)
                    .await
                    .map_err(|error| ConnectError::Dial {
                        target: path.display().to_string(),
                        error,
                    })?;
                let access = Access::socket(&s);
                Self::handshake_with(UnixFds::new(s), opts, access).await
            }
            Transport::Tcp { host, port } => {
                let target = format!("{host}:{port}");
                let s = tokio::net::TcpStream::connect(&target)
                    .await
                    .map_err(|error| ConnectError::Dial {
                        target: target.clone(),
                        error,
                    })?;
                let _ = s.set_nodelay(true);
                Self::handshake_socket(s, opts).await
            }
            Transport::Ssh(target) => Self::connect_ssh(target, opts).await,
            Transport::Tls(target) => Self::connect_tls(target, opts).await,
        }
    }

    /// [`connect`](Self::connect) to the URI libvirt would pick when none is given
    /// ([`uri::default_uri`]: `$LIBVIRT_DEFAULT_URI`, then libvirt.conf's `uri_default`,
    /// then `qemu:///system` as root or `qemu:///session` otherwise).
    pub async fn connect_default(opts: ConnectOptions) -> Result<Self, ConnectError> {
        Self::connect(&default_uri(), opts).await
    }

    #[cfg(feature = "tls")]
    async fn connect_tls(
        target: &TlsTarget,
        mut opts: ConnectOptions,
    ) -> Result<Self, ConnectError> {
        let (stream, kill, gate) = tls::dial(target).await?;
        opts.kill = Some(chain_kill(kill, opts.kill.take()));
        let access = Access {
            fd: None,
            gate: Some(gate),
            records: true,
        };
        Self::handshake_with(Plain(stream), opts, access).await
    }

    #[cfg(not(feature = "tls"))]
    #[allow(clippy::unused_async)]
    async fn connect_tls(_: &TlsTarget, _: ConnectOptions) -> Result<Self, ConnectError> {
        Err(ConnectError::Unsupported(
            "qemu+tls:// needs the `tls` feature of libvirt-rpc".into(),
        ))
    }

    #[cfg(feature = "ssh")]
    async fn connect_ssh(
        target: &SshTarget,
        mut opts: ConnectOptions,
    ) -> Result<Self, ConnectError> {
        let (stream, close) = ssh::dial(target, &opts.ssh, opts.handshake.read_only).await?;
        // Killing the TCP socket directly is what bounds teardown under a stalled write.
        let kill: KillFn = Arc::new(move || close.close());
        opts.kill = Some(chain_kill(kill, opts.kill.take()));
        Self::handshake(stream, opts).await
    }

    #[cfg(not(feature = "ssh"))]
    #[allow(clippy::unused_async)]
    async fn connect_ssh(_: &SshTarget, _: ConnectOptions) -> Result<Self, ConnectError> {
        Err(ConnectError::Unsupported(
            "qemu+ssh:// needs the `ssh` feature of libvirt-rpc (or dial with ssh-socket and call Client::handshake)".into(),
        ))
    }

    /// Run the libvirt handshake over an already-connected byte stream and start the driver
    /// (spawned on the current tokio runtime).
    pub async fn handshake<T>(io: T, opts: ConnectOptions) -> Result<Self, ConnectError>
    where
        T: AsyncRead + AsyncWrite + Unpin + Send + 'static,
    {
        Self::handshake_with(Plain(io), opts, Access::default()).await
    }

    /// [`handshake`](Self::handshake) over a socket the caller dialled (a tokio `UnixStream`
    /// or `TcpStream`). Unlike `handshake`, it keeps a duplicate of the descriptor (closed
    /// together with `io`): a call made while nothing is queued is written by the calling
    /// task itself, without a hand-off to the driver task, and the driver can busy-poll the
    /// socket ([`ConnectOptions::busy_poll`]). A `tokio::net::UnixStream` also passes file
    /// descriptors ([`call_with_fds`](Self::call_with_fds)).
    pub async fn handshake_socket<T>(io: T, opts: ConnectOptions) -> Result<Self, ConnectError>
    where
        T: AsyncRead + AsyncWrite + AsFd + Unpin + Send + 'static,
    {
        let access = Access::socket(&io);
        match as_unix(io) {
            Ok(unix) => Self::handshake_with(unix, opts, access).await,
            Err(io) => Self::handshake_with(Plain(io), opts, access).await,
        }
    }

    async fn handshake_with(
        io: impl Io,
        opts: ConnectOptions,
        access: Access,
    ) -> Result<Self, ConnectError> {
        let client = Self::start_with(io, &opts, access);
        let mut hs = Handshake::new(opts.handshake.clone());
        while let Some(call) = hs.next_call() {
            let r = client
                .call_raw(proto::REMOTE_PROGRAM, call.procedure, &call.args)
                .await;
            if let Err(e) = hs.handle_reply(r) {
                client.close();
                return Err(e.into());
            }
        }
        Ok(Self {
            outcome: Arc::new(hs.outcome().clone()),
            ..client
        })
    }

    /// Start the driver on `io` without any handshake (for scripted peers and custom opens).
    pub fn start<T>(io: T, opts: &ConnectOptions) -> Self
    where
        T: AsyncRead + AsyncWrite + Unpin + Send + 'static,
    {
        Self::start_with(Plain(io), opts, Access::default())
    }

    /// [`start`](Self::start) on a unix or TCP socket, able to busy-poll it
    /// ([`ConnectOptions::busy_poll`]) like [`handshake_socket`](Self::handshake_socket)
    /// (and, on a `tokio::net::UnixStream`, to pass file descriptors).
    pub fn start_socket<T>(io: T, opts: &ConnectOptions) -> Self
    where
        T: AsyncRead + AsyncWrite + AsFd + Unpin + Send + 'static,
    {
        let access = Access::socket(&io);
        match as_unix(io) {
            Ok(unix) => Self::start_with(unix, opts, access),
            Err(io) => Self::start_with(Plain(io), opts, access),
        }
    }

    fn start_with(io: impl Io, opts: &ConnectOptions, access: Access) -> Self {
        let (closed_tx, closed_rx) = watch::channel(None);
        let mut conn = Connection::new(opts.config.clone(), Instant::now());
        conn.set_fd_passing(io.passes_fds());
        conn.set_caller_writes(access.fd.is_some() && opts.caller_write);
        let state = State {
            conn,
            calls: crate::conn::serials::SerialMap::default(),
            streams: crate::conn::serials::SerialMap::default(),
            subscribers: HashMap::new(),
            writable: Vec::new(),
            driver: None,
            read_blocked: false,
            close_notice: None,
            closed_tx,
            direct: access.fd.clone().filter(|_| opts.caller_write),
            spin: (!opts.busy_poll.is_zero() && (access.fd.is_some() || access.gate.is_some()))
                .then(SpinPolicy::default),
        };
        let inner = Arc::new(Inner {
            state: Mutex::new(state),
            kill: opts.kill.clone(),
            killed: std::sync::atomic::AtomicBool::new(false),
            closed_rx,
        });
        let gate = access
            .gate
            .filter(|_| !opts.busy_poll.is_zero())
            .map(|g| (g, opts.busy_poll));
        tokio::spawn(
            driver::Driver::new(
                io,
                inner.clone(),
                driver::BusyPoll::new(access.fd, opts.busy_poll),
                gate,
                access.records,
            )
            .instrument(tracing::debug_span!("libvirt.driver")),
        );
        Self {
            _guard: Arc::new(CloseOnDrop(inner.clone())),
            inner,
            outcome: Arc::new(HandshakeOutcome::default()),
            event_queue: opts.event_queue.get(),
        }
    }

    /// What the handshake learned (auth types, keepalive, event callbacks).
    pub fn handshake_outcome(&self) -> &HandshakeOutcome {
        &self.outcome
    }

    /// Make a typed call.
    pub async fn call<P: Procedure>(&self, args: &P::Args) -> Result<P::Ret, CallError> {
        self.call_inner::<P>(args, None).await
    }

    /// Make a typed call that fails with [`CallError::TimedOut`] after `timeout` (the
    /// connection stays usable; a late reply is discarded).
    pub async fn call_timeout<P: Procedure>(
        &self,
        args: &P::Args,
        timeout: Duration,
    ) -> Result<P::Ret, CallError> {
        self.call_inner::<P>(args, Some(Instant::now() + timeout))
            .await
    }

    /// Call a typed-parameter getter with the flags libvirt's C library sends: `args`'
    /// flags plus `VIR_TYPED_PARAM_STRING_OKAY`, without which the daemon leaves string
    /// parameters out of the answer ([`proto::typed_params`]).
    ///
    /// ```no_run
    /// # async fn demo(client: libvirt_rpc::Client, dom: libvirt_rpc::proto::types::Domain)
    /// # -> Result<(), libvirt_rpc::CallError> {
    /// use libvirt_rpc::proto::procs::domain::{DomainGetBlkioParameters, DomainGetParamsArgs};
    ///
    /// let args = DomainGetParamsArgs { dom, nparams: 0, flags: Default::default() };
    /// let n = client.call_typed_params::<DomainGetBlkioParameters>(&args).await?.nparams;
    /// let all = client
    ///     .call_typed_params::<DomainGetBlkioParameters>(&DomainGetParamsArgs { nparams: n, ..args })
    ///     .await?;
    /// for p in &all.params {
    ///     println!("{} = {:?}", p.field, p.value);
    /// }
    /// # Ok(()) }
    /// ```
    pub async fn call_typed_params<P: proto::typed_params::TypedParamsGetter>(
        &self,
        args: &P::Args,
    ) -> Result<P::Ret, CallError>
    where
        P::Args: Clone,
    {
        let args = proto::typed_params::as_libvirt_sends::<P>(args.clone());
        self.call_inner::<P>(&args, None).await
    }

    async fn call_inner<P: Procedure>(
        &self,
        args: &P::Args,
        deadline: Option<Instant>,
    ) -> Result<P::Ret, CallError> {
        P::refuse_fds()?;
        let serial = self.start_call(P::PROGRAM, P::NUMBER, args, deadline)?;
        let span = tracing::debug_span!("libvirt.call", proc = P::NAME, serial);
        let payload = CallFuture {
            inner: &self.inner,
            serial,
            done: false,
        }
        .instrument(span)
        .await?;
        self.parse_reply::<P>(serial, payload)
    }

    /// Decode a reply outside the lock; the lock is taken only when it does not decode.
    fn parse_reply<P: Procedure>(&self, serial: u32, payload: Bytes) -> Result<P::Ret, CallError> {
        Connection::parse_reply::<P>(serial, payload).map_err(|v| {
            let mut st = self.inner.lock();
            let err = st.conn.handle_violation(v);
            st.dispatch();
            st.wake_driver();
            err
        })
    }

    /// Make a typed call of a procedure that passes file descriptors (its row has the `fds`
    /// column; a compile-time check): `fds` go with the call, and the reply's descriptors
    /// come back with its value (empty when it carried none).
    ///
    /// Only a unix socket carries descriptors; over TCP, TLS or SSH the call fails with
    /// [`CallError::FdPassingUnavailable`] before anything is sent. Descriptors are never
    /// leaked: those of a refused call are closed at once, and those of a reply whose future
    /// was dropped are closed when the reply arrives.
    ///
    /// ```no_run
    /// # async fn demo(client: libvirt_rpc::Client, dom: libvirt_rpc::proto::types::Domain)
    /// # -> Result<(), libvirt_rpc::CallError> {
    /// use libvirt_rpc::proto::procs::domain::{DomainOpenGraphicsArgs, DomainOpenGraphicsFd};
    ///
    /// let args = DomainOpenGraphicsArgs { dom, idx: 0, flags: Default::default() };
    /// let ((), fds) = client.call_with_fds::<DomainOpenGraphicsFd>(&args, Vec::new()).await?;
    /// // fds[0]: a socket connected to the domain's first graphics device (VNC: "RFB 003.008")
    /// # Ok(()) }
    /// ```
    pub async fn call_with_fds<P: Procedure>(
        &self,
        args: &P::Args,
        fds: Vec<OwnedFd>,
    ) -> Result<(P::Ret, Vec<OwnedFd>), CallError> {
        const {
            assert!(
                P::FDS.is_some(),
                "call_with_fds: the procedure passes no descriptors"
            );
        };
        let (serial, result, fds) = self
            .fd_call(P::PROGRAM, P::NUMBER, P::NAME, args, fds)
            .await?;
        Ok((self.parse_reply::<P>(serial, result?)?, fds))
    }

    /// [`call_raw`](Self::call_raw) passing file descriptors: `fds` go with the call
    /// (`CALL_WITH_FDS`), the reply's descriptors (`REPLY_WITH_FDS`) come back with its
    /// payload. Unix sockets only, as [`call_with_fds`](Self::call_with_fds).
    pub async fn call_raw_with_fds(
        &self,
        program: u32,
        procedure: i32,
        args: &[u8],
        fds: Vec<OwnedFd>,
    ) -> Result<(Bytes, Vec<OwnedFd>), CallError> {
        let name = proto::procs::lookup(program, procedure).map_or("raw", |p| p.name);
        let (_, result, fds) = self
            .fd_call(program, procedure, name, &Preencoded(args), fds)
            .await?;
        Ok((result?, fds))
    }

    /// A call on the descriptor path: its serial, its result and the reply's descriptors.
    async fn fd_call(
        &self,
        program: u32,
        procedure: i32,
        name: &'static str,
        args: &(impl Encode + ?Sized),
        fds: Vec<OwnedFd>,
    ) -> Result<(u32, Result<Bytes, CallError>, Vec<OwnedFd>), CallError> {
        let serial = {
            let mut st = self.inner.lock();
            let serial = st
                .conn
                .call_raw_with_fds(program, procedure, args, fds, None)?;
            st.calls.insert(serial, CallSlot::default());
            st.wake_driver();
            serial
        };
        let span = tracing::debug_span!("libvirt.call", proc = name, procedure, serial);
        let (result, fds) = WithFds(CallFuture {
            inner: &self.inner,
            serial,
            done: false,
        })
        .instrument(span)
        .await;
        Ok((serial, result, fds))
    }

    /// Call any procedure of any program with pre-encoded arguments; returns the raw reply
    /// payload. For the procedures the typed table does not cover.
    pub async fn call_raw(
        &self,
        program: u32,
        procedure: i32,
        args: &[u8],
    ) -> Result<Bytes, CallError> {
        let serial = self.start_call(program, procedure, &Preencoded(args), None)?;
        let name = proto::procs::lookup(program, procedure).map_or("raw", |p| p.name);
        let span = tracing::debug_span!("libvirt.call", proc = name, procedure, serial);
        CallFuture {
            inner: &self.inner,
            serial,
            done: false,
        }
        .instrument(span)
        .await
    }

    fn start_call(
        &self,
        program: u32,
        procedure: i32,
        args: &(impl Encode + ?Sized),
        deadline: Option<Instant>,
    ) -> Result<u32, CallError> {
        let mut st = self.inner.lock();
        // Only a call's own deadline can move the core's next timeout.
        let timer = deadline.map(|_| st.conn.poll_timeout());
        let serial = st.conn.call_raw(program, procedure, args, deadline)?;
        st.calls.insert(serial, CallSlot::default());
        // Alone on the connection, a call goes out from here (`direct`); with others in flight
        // the driver batches the calls their just-completed callers send (the core's write
        // rule: `conn::Writer`).
        let wrote = st.conn.write_turn() == WriteTurn::Caller && direct::write(&mut st);
        let spin = match &mut st.spin {
            Some(policy) if wrote => {
                policy.sent(Instant::now());
                // A caller writes only a lone call (`pending_calls() == 1` above).
                policy.spin(1)
            }
            _ => false,
        };
        // The driver is needed to write what we could not, to re-arm its timer for a new
        // deadline, or to busy-poll for the reply; otherwise it sleeps until the reply.
        if !wrote || spin || timer.is_some_and(|t| st.conn.poll_timeout() != t) {
            st.wake_driver();
        }
        Ok(serial)
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

    /// True when `self` and `other` are clones of one connection.
    pub fn same_connection(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
    }

    /// True once the connection is dead.
    pub fn is_closed(&self) -> bool {
        self.inner.lock().conn.is_closed()
    }

    /// Why the connection died, if it did.
    pub fn error(&self) -> Option<ConnectionError> {
        self.inner.lock().conn.error().cloned()
    }

    /// Resolves when the connection dies, with the reason.
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

/// Waits for one call's completion; forgets the call when dropped early.
pub(crate) struct CallFuture<'a> {
    pub(crate) inner: &'a Arc<Inner>,
    pub(crate) serial: u32,
    pub(crate) done: bool,
}

impl CallFuture<'_> {
    /// The reply and the descriptors that came with it.
    fn poll_reply(
        &mut self,
        cx: &mut Context<'_>,
    ) -> Poll<(Result<Bytes, CallError>, Vec<OwnedFd>)> {
        let mut st = self.inner.lock();
        let slot = st
            .calls
            .get_mut(&self.serial)
            .expect("slot lives until the future ends");
        if let Some(r) = slot.result.take() {
            let fds = st
                .calls
                .remove(&self.serial)
                .map(|s| s.fds)
                .unwrap_or_default();
            drop(st);
            self.done = true;
            return Poll::Ready((r.map_err(|e| *e), fds));
        }
        slot.waker = Some(cx.waker().clone());
        Poll::Pending
    }
}

impl Future for CallFuture<'_> {
    type Output = Result<Bytes, CallError>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        self.poll_reply(cx).map(|(r, _)| r)
    }
}

/// A [`CallFuture`] that also yields the reply's descriptors (dropping it early closes
/// them, with the slot they wait in).
struct WithFds<'a>(CallFuture<'a>);

impl Future for WithFds<'_> {
    type Output = (Result<Bytes, CallError>, Vec<OwnedFd>);

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        self.0.poll_reply(cx)
    }
}

/// `io` as a descriptor-passing unix socket, if it is a tokio `UnixStream`.
fn as_unix<T: Any>(io: T) -> Result<UnixFds, T> {
    let any: Box<dyn Any> = Box::new(io);
    match any.downcast::<tokio::net::UnixStream>() {
        Ok(unix) => Ok(UnixFds::new(*unix)),
        Err(any) => Err(*any.downcast::<T>().expect("the type it was boxed as")),
    }
}

impl Drop for CallFuture<'_> {
    fn drop(&mut self) {
        if !self.done {
            let mut st = self.inner.lock();
            st.calls.remove(&self.serial);
            st.conn.forget_call(self.serial);
        }
    }
}
