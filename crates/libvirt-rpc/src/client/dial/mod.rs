//! Reaching a daemon: the URI grammar, the transports (unix, TCP, TLS, SSH) and the
//! credentials for SASL.

pub mod auth;
mod default_uri;
#[cfg(feature = "ssh")]
pub(crate) mod ssh;
#[cfg(feature = "tls")]
pub mod tls;
pub(crate) mod transport;
pub mod uri;

use std::any::Any;
use std::os::fd::{AsFd, OwnedFd};
use std::sync::Arc;

use tokio::io::{AsyncRead, AsyncWrite};

#[cfg(any(feature = "ssh", feature = "tls"))]
use crate::client::KillFn;
use crate::client::spin::SpinGate;
use crate::client::{Client, ConnectError, ConnectOptions};
use crate::conn::handshake::Handshake;
use crate::proto;
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
}

/// `io` as a descriptor-passing unix socket, if it is a tokio `UnixStream`.
fn as_unix<T: Any>(io: T) -> Result<UnixFds, T> {
    let any: Box<dyn Any> = Box::new(io);
    match any.downcast::<tokio::net::UnixStream>() {
        Ok(unix) => Ok(UnixFds::new(*unix)),
        Err(any) => Err(*any.downcast::<T>().expect("the type it was boxed as")),
    }
}
