//! What a caller asks of a failure: the predicates on the client's error types, and
//! [`Error`], one type for all of them (so `?` works across connect, call and transfer).
//!
//! Every error here formats its cause or returns it as its [`source`](std::error::Error::source),
//! never both: a variant that only wraps is `#[error(transparent)]`; one that adds words
//! formats the cause in its message and returns no source. Printing the chain (`anyhow`'s
//! `{:#}`, `ProviderError::chain`) therefore shows each message once.

#[cfg(feature = "tls")]
use crate::client::TlsError;
use crate::client::{ConnectError, TransferError};
use crate::conn::handshake::HandshakeError;
use crate::conn::{CallError, ConnectionError, StreamError};
use crate::proto::{ErrorCode, RemoteError};

// By hand, not `#[from]`: these variants format their cause, so it is not also the source.
impl From<HandshakeError> for ConnectError {
    fn from(e: HandshakeError) -> Self {
        Self::Handshake(e)
    }
}

#[cfg(feature = "tls")]
impl From<TlsError> for ConnectError {
    fn from(e: TlsError) -> Self {
        Self::Tls(e)
    }
}

/// The daemon's authentication and access-control refusals.
fn remote_is_auth(e: &RemoteError) -> bool {
    matches!(
        e.code,
        ErrorCode::AUTH_FAILED
            | ErrorCode::AUTH_CANCELLED
            | ErrorCode::AUTH_UNAVAILABLE
            | ErrorCode::ACCESS_DENIED
    )
}

impl CallError {
    /// The daemon refused for lack of authentication or permission (`AUTH_FAILED`,
    /// `AUTH_CANCELLED`, `AUTH_UNAVAILABLE`, `ACCESS_DENIED`).
    pub fn is_auth(&self) -> bool {
        self.remote().is_some_and(remote_is_auth)
    }

    /// The connection is dead: this call failed because of it, and every later call on the
    /// same connection fails too. Reconnect. (The same as [`is_connection`](Self::is_connection).)
    pub fn is_connection_dead(&self) -> bool {
        self.is_connection()
    }

    /// Why the connection died, if that is why this call failed.
    pub fn connection(&self) -> Option<&ConnectionError> {
        match self {
            Self::Connection(e) => Some(e),
            _ => None,
        }
    }
}

impl StreamError {
    /// The daemon's error: it refused to open the stream, failed mid-transfer, or answered
    /// our abort with an error.
    pub fn remote(&self) -> Option<&RemoteError> {
        match self {
            Self::Remote(e) => Some(e),
            Self::Aborted { server, .. } => server.as_ref(),
            _ => None,
        }
    }

    /// The daemon said the object (volume, domain) does not exist.
    pub fn is_not_found(&self) -> bool {
        self.remote().is_some_and(RemoteError::is_not_found)
    }

    /// The daemon refused for lack of authentication or permission.
    pub fn is_auth(&self) -> bool {
        self.remote().is_some_and(remote_is_auth)
    }

    /// The connection is dead (this stream and everything else on it failed).
    pub fn is_connection_dead(&self) -> bool {
        matches!(self, Self::Connection(_))
    }
}

impl TransferError {
    /// The daemon's error, if the stream failed on the libvirt side with one.
    pub fn remote(&self) -> Option<&RemoteError> {
        match self {
            Self::Stream(e) => e.remote(),
            Self::Local(_) => None,
        }
    }

    /// The daemon said the volume does not exist.
    pub fn is_not_found(&self) -> bool {
        self.remote().is_some_and(RemoteError::is_not_found)
    }

    /// The daemon refused for lack of authentication or permission.
    pub fn is_auth(&self) -> bool {
        self.remote().is_some_and(remote_is_auth)
    }

    /// The connection is dead.
    pub fn is_connection_dead(&self) -> bool {
        matches!(self, Self::Stream(e) if e.is_connection_dead())
    }

    /// Our local source or sink failed (the stream was aborted on the wire first).
    pub fn is_local(&self) -> bool {
        matches!(self, Self::Local(_))
    }
}

impl HandshakeError {
    /// The daemon's error, if a handshake step failed with one.
    pub fn remote(&self) -> Option<&RemoteError> {
        match self {
            Self::Call { error, .. } => error.remote(),
            Self::AuthRejected { error, .. } => Some(error),
            _ => None,
        }
    }

    /// The connection died during the handshake.
    pub fn is_connection_dead(&self) -> bool {
        matches!(self, Self::Call { error, .. } if error.is_connection_dead())
    }
}

impl ConnectError {
    /// The daemon's error, if the handshake failed with one (e.g. the URI names a driver the
    /// daemon does not have).
    pub fn remote(&self) -> Option<&RemoteError> {
        match self {
            Self::Handshake(h) => h.remote(),
            _ => None,
        }
    }

    /// The daemon said what was asked for does not exist.
    pub fn is_not_found(&self) -> bool {
        self.remote().is_some_and(RemoteError::is_not_found)
    }

    /// SSH host key verification failed: the server's key is unknown, changed or revoked
    /// (`ssh()`, with feature `ssh`, says which; a TLS server certificate that fails verification
    /// is [`TlsError::is_server_untrusted`] instead).
    pub fn is_host_key(&self) -> bool {
        self.ssh().is_some_and(ssh_is_host_key)
    }

    /// Authentication failed: SSH credentials refused or unusable (key file, agent), SASL
    /// credentials rejected or missing, polkit refused, the client certificate refused, or
    /// the daemon's access control said no.
    pub fn is_auth(&self) -> bool {
        match self {
            Self::Handshake(h) => h.is_auth_failed() || h.remote().is_some_and(remote_is_auth),
            _ => self.ssh().is_some_and(ssh_is_auth),
        }
    }

    /// The daemon could not be reached: the socket or host refused or did not answer, the
    /// SSH connection could not be made in time, or the remote socket was not there.
    pub fn is_unreachable(&self) -> bool {
        match self {
            Self::Dial { .. } => true,
            _ => self.ssh().is_some_and(ssh_is_unreachable),
        }
    }

    /// The link died during the handshake (the daemon closed it, or the transport failed).
    pub fn is_connection_dead(&self) -> bool {
        matches!(self, Self::Handshake(h) if h.is_connection_dead())
    }

    /// The SSH transport's error, if that is what failed (feature `ssh`).
    #[cfg(feature = "ssh")]
    pub fn ssh(&self) -> Option<&crate::SshError> {
        match self {
            Self::Ssh(e) => Some(e),
            _ => None,
        }
    }

    #[cfg(not(feature = "ssh"))]
    #[allow(clippy::unused_self)]
    fn ssh(&self) -> Option<&NoSsh> {
        None
    }

    /// The TLS transport's error, if that is what failed (feature `tls`).
    #[cfg(feature = "tls")]
    pub fn tls(&self) -> Option<&TlsError> {
        match self {
            Self::Tls(e) => Some(e),
            _ => None,
        }
    }
}

/// Stands in for `SshError` without the `ssh` feature: never constructed.
#[cfg(not(feature = "ssh"))]
enum NoSsh {}

#[cfg(feature = "ssh")]
fn ssh_is_host_key(e: &crate::SshError) -> bool {
    e.is_host_key()
}

#[cfg(feature = "ssh")]
fn ssh_is_auth(e: &crate::SshError) -> bool {
    use crate::SshError as S;
    matches!(e, S::Auth { .. } | S::Agent { .. } | S::KeyFile { .. })
}

#[cfg(feature = "ssh")]
fn ssh_is_unreachable(e: &crate::SshError) -> bool {
    use crate::SshError as S;
    matches!(
        e,
        S::Connect { .. } | S::ConnectTimeout { .. } | S::ChannelOpen { .. }
    )
}

#[cfg(not(feature = "ssh"))]
fn ssh_is_host_key(e: &NoSsh) -> bool {
    match *e {}
}

#[cfg(not(feature = "ssh"))]
fn ssh_is_auth(e: &NoSsh) -> bool {
    match *e {}
}

#[cfg(not(feature = "ssh"))]
fn ssh_is_unreachable(e: &NoSsh) -> bool {
    match *e {}
}

/// Any failure of the client: connecting, a call, a stream or a transfer. Each variant is
/// transparent (its message and source are the wrapped error's), and the predicates ask the
/// wrapped error, so a program can use `?` on everything and still tell failures apart.
///
/// ```no_run
/// # async fn demo() -> Result<(), libvirt_rpc::Error> {
/// use libvirt_rpc::{Client, ConnectOptions};
/// use libvirt_rpc::proto::procs::connect::ConnectGetHostname;
///
/// let client = Client::connect("qemu:///session", ConnectOptions::default()).await?;
/// match client.call::<ConnectGetHostname>(&()).await {
///     Ok(r) => println!("{}", r.hostname),
///     Err(e) if e.is_connection_dead() => eprintln!("reconnect: {e}"),
///     Err(e) => return Err(e.into()),
/// }
/// # Ok(()) }
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The connection could not be set up.
    #[error(transparent)]
    Connect(#[from] ConnectError),
    /// A call failed.
    #[error(transparent)]
    Call(#[from] CallError),
    /// A stream failed.
    #[error(transparent)]
    Stream(#[from] StreamError),
    /// A transfer failed (stream or local I/O).
    #[error(transparent)]
    Transfer(#[from] TransferError),
}

impl Error {
    /// The daemon's error, if there is one.
    pub fn remote(&self) -> Option<&RemoteError> {
        match self {
            Self::Connect(e) => e.remote(),
            Self::Call(e) => e.remote(),
            Self::Stream(e) => e.remote(),
            Self::Transfer(e) => e.remote(),
        }
    }

    /// The daemon said the object does not exist.
    pub fn is_not_found(&self) -> bool {
        self.remote().is_some_and(RemoteError::is_not_found)
    }

    /// SSH host key verification failed ([`ConnectError::is_host_key`]).
    pub fn is_host_key(&self) -> bool {
        matches!(self, Self::Connect(e) if e.is_host_key())
    }

    /// Authentication or permission failed ([`ConnectError::is_auth`], or the daemon refused
    /// a call with an authentication or access-control error).
    pub fn is_auth(&self) -> bool {
        match self {
            Self::Connect(e) => e.is_auth(),
            Self::Call(e) => e.is_auth(),
            Self::Stream(e) => e.is_auth(),
            Self::Transfer(e) => e.is_auth(),
        }
    }

    /// The daemon could not be reached ([`ConnectError::is_unreachable`]).
    pub fn is_unreachable(&self) -> bool {
        matches!(self, Self::Connect(e) if e.is_unreachable())
    }

    /// The connection is dead (or died while it was being set up): reconnect.
    pub fn is_connection_dead(&self) -> bool {
        match self {
            Self::Connect(e) => e.is_connection_dead(),
            Self::Call(e) => e.is_connection_dead(),
            Self::Stream(e) => e.is_connection_dead(),
            Self::Transfer(e) => e.is_connection_dead(),
        }
    }
}
