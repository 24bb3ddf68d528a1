//! Reaching a daemon: the URI grammar, the transports (unix, TCP, TLS, SSH) and the
//! credentials for SASL.

pub mod auth;
mod default_uri;
mod redial;
#[cfg(feature = "ssh")]
pub(crate) mod ssh;
#[cfg(feature = "tls")]
pub mod tls;
pub(crate) mod transport;
pub mod uri;

use std::any::Any;
use std::os::fd::{AsFd, OwnedFd};
use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite};

#[cfg(any(feature = "ssh", feature = "tls"))]
use crate::client::KillFn;
use crate::client::shared::Inner;
use crate::client::spin::SpinGate;
use crate::client::{Client, ConnectError, ConnectOptions};
use crate::conn::handshake::Handshake;
use crate::proto::{self, Procedure};
use transport::{Io, Plain, UnixFds};
#[cfg(not(feature = "ssh"))]
use uri::SshTarget;
#[cfg(feature = "ssh")]
use uri::SshTarget;
#[cfg(not(feature = "tls"))]
use uri::TlsTarget;
#[cfg(feature = "tls")]
use uri::TlsTarget;
use uri::{LibvirtUri, Transport, default_uri};

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

/// What [`Client::connect`] is doing, for its timeout's message (dialling at first).
pub(crate) struct Stage(std::sync::atomic::AtomicU8);

impl Default for Stage {
    fn default() -> Self {
        Self(std::sync::atomic::AtomicU8::new(Self::DIAL))
    }
}

impl Stage {
    pub(crate) const DIAL: u8 = 0;
    pub(crate) const TLS: u8 = 1;
    pub(crate) const SSH: u8 = 2;
    pub(crate) const HANDSHAKE: u8 = 3;
    const NAMES: [&'static str; 4] = [
        "dial",
        "TLS handshake",
        "SSH connection",
        "libvirt handshake",
    ];

    pub(crate) fn set(&self, stage: u8) {
        self.0.store(stage, std::sync::atomic::Ordering::Relaxed);
    }

    fn name(&self) -> &'static str {
        Self::NAMES[usize::from(self.0.load(std::sync::atomic::Ordering::Relaxed)).min(3)]
    }
}

/// `work` within `limit` (none: unbounded); on expiry it is dropped (its transport closes)
/// and the error names what `stage` says was in progress.
async fn bounded<T>(
    limit: Option<Duration>,
    stage: &Stage,
    work: impl Future<Output = Result<T, ConnectError>>,
) -> Result<T, ConnectError> {
    let Some(after) = limit else {
        return work.await;
    };
    tokio::time::timeout(after, work).await.unwrap_or_else(|_| {
        Err(ConnectError::Timeout {
            after,
            stage: stage.name(),
        })
    })
}

/// What the client can reach under the driver's transport, besides the transport itself.
#[derive(Default)]
pub(crate) struct Access {
    /// A duplicate of a plain socket's descriptor: callers write their calls through it, the
    /// driver busy-polls it.
    pub(crate) fd: Option<Arc<OwnedFd>>,
    /// Over TLS, the busy-poll gate of the TCP stream under rustls.
    pub(crate) gate: Option<Arc<SpinGate>>,
    /// The transport returns at most one record per read (TLS).
    pub(crate) records: bool,
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
    ///
    /// The whole of it is bounded by [`ConnectOptions::connect_timeout`] (by default
    /// [`DEFAULT_CONNECT_TIMEOUT`](crate::client::DEFAULT_CONNECT_TIMEOUT)): past it the
    /// attempt is dropped and the error is [`ConnectError::Timeout`], naming the stage it was
    /// in.
    ///
    /// With [`ConnectOptions::reconnect`] set, a connection that dies by itself is redialled
    /// to the same URI with the same options (see [`ReconnectPolicy`](crate::conn::reconnect::ReconnectPolicy)).
    pub async fn connect(uri: &str, opts: ConnectOptions) -> Result<Self, ConnectError> {
        let client = Self::dial(uri, opts.clone(), None).await?;
        if opts.reconnect.is_some() {
            redial::spawn(&client.inner, uri.to_string(), opts);
        }
        Ok(client)
    }

    /// Dial `uri` and run the handshake, bounded by the connect timeout: a new connection,
    /// or (`target`) the next generation of a reconnecting one.
    async fn dial(
        uri: &str,
        opts: ConnectOptions,
        target: Option<Arc<Inner>>,
    ) -> Result<Self, ConnectError> {
        let stage = Stage::default();
        let limit = opts.connect_timeout;
        // Boxed: the setup's state (TLS, SSH, the handshake) stays out of the caller's future.
        let work = Box::pin(Self::connect_in(uri, opts, &stage, target));
        bounded(limit, &stage, work).await
    }

    async fn connect_in(
        uri: &str,
        mut opts: ConnectOptions,
        stage: &Stage,
        target: Option<Arc<Inner>>,
    ) -> Result<Self, ConnectError> {
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
        sasl.unverified_peer = match &parsed.transport {
            Transport::Tls(t) => t.no_verify,
            Transport::Ssh(t) => t.no_verify || t.known_hosts_verify.as_deref() == Some("ignore"),
            _ => false,
        };
        match &parsed.transport {
            Transport::Unix { path } => {
                let s = tokio::net::UnixStream::connect(path)
                    .await
                    .map_err(|error| ConnectError::Dial {
                        target: path.display().to_string(),
                        error,
                    })?;
                let access = Access::socket(&s);
                stage.set(Stage::HANDSHAKE);
                Self::handshake_with(UnixFds::new(s), opts, access, target).await
            }
            Transport::Tcp { host, port } => {
                let addr = format!("{host}:{port}");
                let s = tokio::net::TcpStream::connect(&addr)
                    .await
                    .map_err(|error| ConnectError::Dial {
                        target: addr.clone(),
                        error,
                    })?;
                let _ = s.set_nodelay(true);
                stage.set(Stage::HANDSHAKE);
                let access = Access::socket(&s);
                Self::handshake_with(Plain(s), opts, access, target).await
            }
            Transport::Ssh(ssh) => {
                stage.set(Stage::SSH);
                Self::connect_ssh(ssh, opts, stage, target).await
            }
            Transport::Tls(tls) => Self::connect_tls(tls, opts, stage, target).await,
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
        stage: &Stage,
        inner: Option<Arc<Inner>>,
    ) -> Result<Self, ConnectError> {
        let (stream, kill, gate) = tls::dial(target, stage).await?;
        stage.set(Stage::HANDSHAKE);
        opts.kill = Some(chain_kill(kill, opts.kill.take()));
        let access = Access {
            fd: None,
            gate: Some(gate),
            records: true,
        };
        Self::handshake_with(Plain(stream), opts, access, inner).await
    }

    #[cfg(not(feature = "tls"))]
    #[allow(clippy::unused_async)]
    async fn connect_tls(
        _: &TlsTarget,
        _: ConnectOptions,
        _: &Stage,
        _: Option<Arc<Inner>>,
    ) -> Result<Self, ConnectError> {
        Err(ConnectError::Unsupported(
            "qemu+tls:// needs the `tls` feature of libvirt-remote".into(),
        ))
    }

    #[cfg(feature = "ssh")]
    async fn connect_ssh(
        target: &SshTarget,
        mut opts: ConnectOptions,
        stage: &Stage,
        inner: Option<Arc<Inner>>,
    ) -> Result<Self, ConnectError> {
        let (stream, close) = ssh::dial(target, &opts.ssh, opts.handshake.read_only).await?;
        stage.set(Stage::HANDSHAKE);
        // Killing the TCP socket directly is what bounds teardown under a stalled write.
        let kill: KillFn = Arc::new(move || close.close());
        opts.kill = Some(chain_kill(kill, opts.kill.take()));
        Self::handshake_with(Plain(stream), opts, Access::default(), inner).await
    }

    #[cfg(not(feature = "ssh"))]
    #[allow(clippy::unused_async)]
    async fn connect_ssh(
        _: &SshTarget,
        _: ConnectOptions,
        _: &Stage,
        _: Option<Arc<Inner>>,
    ) -> Result<Self, ConnectError> {
        Err(ConnectError::Unsupported(
            "qemu+ssh:// needs the `ssh` feature of libvirt-remote (or dial with ssh-socket and call Client::handshake)".into(),
        ))
    }

    /// Run the libvirt handshake over an already-connected byte stream and start the driver
    /// (spawned on the current tokio runtime).
    pub async fn handshake<T>(io: T, opts: ConnectOptions) -> Result<Self, ConnectError>
    where
        T: AsyncRead + AsyncWrite + Unpin + Send + 'static,
    {
        Self::handshake_with(Plain(io), opts, Access::default(), None).await
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
            Ok(unix) => Self::handshake_with(unix, opts, access, None).await,
            Err(io) => Self::handshake_with(Plain(io), opts, access, None).await,
        }
    }

    /// The libvirt handshake on a started driver, bounded by
    /// [`ConnectOptions::connect_timeout`] (inside [`connect`](Self::connect) the whole
    /// connect's bound, which started earlier, ends first). On a new connection, or
    /// (`target`) on the next generation of a reconnecting one, whose failure the reconnector
    /// handles.
    async fn handshake_with(
        io: impl Io,
        opts: ConnectOptions,
        access: Access,
        target: Option<Arc<Inner>>,
    ) -> Result<Self, ConnectError> {
        let stage = Stage::default();
        stage.set(Stage::HANDSHAKE);
        let limit = opts.connect_timeout;
        bounded(
            limit,
            &stage,
            Box::pin(async move {
                let fresh = target.is_none();
                let client = match target {
                    None => Self::start_with(io, &opts, access),
                    Some(inner) => Self::restart_with(&inner, io, &opts, access)?.0,
                };
                let mut hs = Handshake::new(opts.handshake.clone());
                loop {
                    // Calls the step machine allows together go out together (written in
                    // order); their replies are handled in the same order.
                    let calls = hs.next_calls();
                    if calls.is_empty() {
                        break;
                    }
                    let replies = futures::future::join_all(calls.iter().map(|c| {
                        client.call_raw_ungated(proto::REMOTE_PROGRAM, c.procedure, &c.args)
                    }))
                    .await;
                    for (call, r) in calls.iter().zip(replies) {
                        let sasl = call.procedure == proto::procs::connect::AuthSaslStart::NUMBER
                            || call.procedure == proto::procs::connect::AuthSaslStep::NUMBER;
                        let handled = if sasl {
                            // A SASL step may run a SCRAM key derivation (PBKDF2, up to
                            // `sasl::MAX_SCRAM_ITERATIONS` rounds): on the blocking pool, not
                            // on the runtime's worker.
                            let (back, handled) = tokio::task::spawn_blocking(move || {
                                let handled = hs.handle_reply(r);
                                (hs, handled)
                            })
                            .await
                            .unwrap_or_else(|e| std::panic::resume_unwind(e.into_panic()));
                            hs = back;
                            handled
                        } else {
                            hs.handle_reply(r)
                        };
                        if let Err(e) = handled {
                            if fresh {
                                client.close();
                            }
                            return Err(e.into());
                        }
                    }
                }
                Ok(Self {
                    outcome: Arc::new(hs.outcome().clone()),
                    ..client
                })
            }),
        )
        .await
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
}

/// `io` as a descriptor-passing unix socket, if it is a tokio `UnixStream`.
fn as_unix<T: Any>(io: T) -> Result<UnixFds, T> {
    let any: Box<dyn Any> = Box::new(io);
    match any.downcast::<tokio::net::UnixStream>() {
        Ok(unix) => Ok(UnixFds::new(*unix)),
        Err(any) => Err(*any.downcast::<T>().expect("the type it was boxed as")),
    }
}
