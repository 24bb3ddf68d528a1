//! What a caller asks of a failure: the predicates on the client's error types, and
//! [`Error`], one type for all of them (so `?` works across connect, call and transfer).
//!
//! Every error here formats its cause or returns it as its [`source`](std::error::Error::source),
//! never both: a variant that only wraps is `#[error(transparent)]`; one that adds words
//! formats the cause in its message and returns no source. Printing the chain (`anyhow`'s
//! `{:#}`, `ProviderError::chain`) therefore shows each message once.

#[cfg(feature = "tls")]
use crate::client::tls::TlsError;
use crate::client::{ConnectError, TransferError};
use crate::conn::error::error_predicates;
use crate::conn::handshake::HandshakeError;
use crate::conn::{CallError, ErrorPredicates, StreamError};
use crate::proto::RemoteError;

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

error_predicates!(ConnectError, TransferError, Error);

impl ErrorPredicates for TransferError {
    fn remote(&self) -> Option<&RemoteError> {
        match self {
            Self::Stream(e) => e.remote(),
            Self::Local(_) => None,
        }
    }

    fn is_connection_dead(&self) -> bool {
        matches!(self, Self::Stream(e) if e.is_connection_dead())
    }
}

impl TransferError {
    /// Our local source or sink failed (the stream was aborted on the wire first).
    pub fn is_local(&self) -> bool {
        matches!(self, Self::Local(_))
    }
}

impl ErrorPredicates for ConnectError {
    /// The daemon's error, if the handshake failed with one (e.g. the URI names a driver the
    /// daemon does not have).
    fn remote(&self) -> Option<&RemoteError> {
        match self {
            Self::Handshake(h) => h.remote(),
            _ => None,
        }
    }

    /// The link died during the handshake (the daemon closed it, or the transport failed).
    fn is_connection_dead(&self) -> bool {
        matches!(self, Self::Handshake(h) if h.is_connection_dead())
    }

    /// SSH credentials refused or unusable (key file, agent), SASL credentials rejected or
    /// missing, polkit refused, the client certificate refused.
    fn is_auth_failed_here(&self) -> bool {
        match self {
            Self::Handshake(h) => h.is_auth_failed_here(),
            _ => self.ssh().is_some_and(ssh_is_auth),
        }
    }
}

impl ConnectError {
    /// SSH host key verification failed: the server's key is unknown, changed or revoked
    /// (`ssh()`, with feature `ssh`, says which; a TLS server certificate that fails verification
    /// is [`TlsError::is_server_untrusted`] instead).
    pub fn is_host_key(&self) -> bool {
        self.ssh().is_some_and(ssh_is_host_key)
    }

    /// The daemon could not be reached: the socket or host refused or did not answer, the
    /// SSH connection could not be made in time, or the remote socket was not there.
    pub fn is_unreachable(&self) -> bool {
        match self {
            Self::Dial { .. } => true,
            _ => self.ssh().is_some_and(ssh_is_unreachable),
        }
    }

    /// Setting the connection up outlived [`ConnectOptions::connect_timeout`]
    /// (`ConnectError::Timeout`), or the SSH transport's own bound.
    ///
    /// [`ConnectOptions::connect_timeout`]: crate::client::ConnectOptions::connect_timeout
    pub fn is_timeout(&self) -> bool {
        #[cfg(feature = "ssh")]
        if let Some(ssh_socket::SshError::ConnectTimeout { .. }) =
            self.ssh().map(ssh_socket::SshError::innermost)
        {
            return true;
        }
        matches!(self, Self::Timeout { .. })
    }

    /// The SSH transport's error, if that is what failed (feature `ssh`).
    #[cfg(feature = "ssh")]
    pub fn ssh(&self) -> Option<&ssh_socket::SshError> {
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
fn ssh_is_host_key(e: &ssh_socket::SshError) -> bool {
    e.is_host_key()
}

#[cfg(feature = "ssh")]
fn ssh_is_auth(e: &ssh_socket::SshError) -> bool {
    use ssh_socket::SshError as S;
    matches!(e, S::Auth { .. } | S::Agent { .. } | S::KeyFile { .. })
}

#[cfg(feature = "ssh")]
fn ssh_is_unreachable(e: &ssh_socket::SshError) -> bool {
    use ssh_socket::SshError as S;
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
/// # async fn demo() -> Result<(), libvirt_remote::Error> {
/// use libvirt_remote::{Client, ConnectOptions};
/// use libvirt_remote::proto::procs::connect::ConnectGetHostname;
///
/// let client = Client::connect("qemu:///session", ConnectOptions::default()).await?;
/// match client.call::<ConnectGetHostname>(&()).await {
///     Ok(r) => println!("{}", r.hostname),
///     Err(e) if e.is_connection_dead() => eprintln!("reconnect: {e}"),
///     Err(e) => return Err(e.into()),
/// }
/// # Ok(()) }
/// ```
///
/// # Size, and matching what is boxed
///
/// An `Error` is two words (16 bytes; a test holds it to at most 32): each variant boxes its
/// error, so a `Result<T, Error>` costs no more than the `T` it carries and no program needs
/// clippy's `result_large_err` allowance. Likewise [`CallError::Remote`],
/// [`StreamError::Remote`], [`StreamError::Aborted`]'s `server` and
/// [`HandshakeError::AuthRejected`] box libvirt's [`RemoteError`] (code, domain, message and
/// the extra strings, 150 bytes). Most programs ask the predicates (`is_not_found()`,
/// `remote()`); to match, deref the box — field access needs nothing, a nested pattern
/// matches `&**e`, or take the accessors (`as_call()`, …):
///
/// ```
/// use libvirt_remote::Error;
/// use libvirt_remote::conn::CallError;
/// use libvirt_remote::proto::{ErrorCode, RemoteError};
///
/// fn describe(e: &Error) -> &'static str {
///     match e {
///         Error::Call(c) => match &**c {
///             CallError::Remote(r) if r.code == ErrorCode::NO_DOMAIN => "no such domain",
///             CallError::TimedOut => "timed out",
///             _ => "call failed",
///         },
///         Error::Connect(_) => "cannot connect",
///         _ => "other",
///     }
/// }
/// let e = Error::from(CallError::from(RemoteError::new(
///     ErrorCode::NO_DOMAIN,
///     libvirt_remote::proto::ErrorDomain::QEMU,
///     "Domain not found",
/// )));
/// assert_eq!(describe(&e), "no such domain");
/// assert_eq!(e.as_call().and_then(CallError::remote).map(|r| r.code), Some(ErrorCode::NO_DOMAIN));
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The connection could not be set up.
    #[error(transparent)]
    Connect(Box<ConnectError>),
    /// A call failed.
    #[error(transparent)]
    Call(Box<CallError>),
    /// A stream failed.
    #[error(transparent)]
    Stream(Box<StreamError>),
    /// A transfer failed (stream or local I/O).
    #[error(transparent)]
    Transfer(Box<TransferError>),
}

/// `From` each wrapped error (so `?` converts it) and an accessor for it.
macro_rules! error_variants {
    ($($variant:ident($T:ty), $get:ident;)*) => {
        $(
            impl From<$T> for Error {
                fn from(e: $T) -> Self {
                    Self::$variant(Box::new(e))
                }
            }
        )*
        impl Error {
            $(
                #[doc = concat!("The [`", stringify!($T), "`], if that is what failed.")]
                pub fn $get(&self) -> Option<&$T> {
                    match self {
                        Self::$variant(e) => Some(e),
                        _ => None,
                    }
                }
            )*
        }
    };
}

error_variants! {
    Connect(ConnectError), as_connect;
    Call(CallError), as_call;
    Stream(StreamError), as_stream;
    Transfer(TransferError), as_transfer;
}

impl ErrorPredicates for Error {
    fn remote(&self) -> Option<&RemoteError> {
        match self {
            Self::Connect(e) => e.remote(),
            Self::Call(e) => e.remote(),
            Self::Stream(e) => e.remote(),
            Self::Transfer(e) => e.remote(),
        }
    }

    fn is_connection_dead(&self) -> bool {
        match self {
            Self::Connect(e) => e.is_connection_dead(),
            Self::Call(e) => e.is_connection_dead(),
            Self::Stream(e) => e.is_connection_dead(),
            Self::Transfer(e) => e.is_connection_dead(),
        }
    }

    fn is_auth_failed_here(&self) -> bool {
        matches!(self, Self::Connect(e) if e.is_auth_failed_here())
    }
}

impl Error {
    /// SSH host key verification failed ([`ConnectError::is_host_key`]).
    pub fn is_host_key(&self) -> bool {
        matches!(self, Self::Connect(e) if e.is_host_key())
    }

    /// The daemon could not be reached ([`ConnectError::is_unreachable`]).
    pub fn is_unreachable(&self) -> bool {
        matches!(self, Self::Connect(e) if e.is_unreachable())
    }
}
