//! Errors of the connection state machine, typed per layer and cheap to clone (a fatal error
//! is handed to every pending call and stream, and returned again by every later use).

use std::io;
use std::sync::Arc;
use std::time::Duration;

use crate::proto::RemoteError;
use crate::proto::procedure::{FdPassing, NeedsFds};
use crate::wire::frame::{FrameError, MessageStatus, MessageType};
use crate::wire::xdr::{DecodeError, EncodeError};

/// The peer broke the protocol. Always fatal: the byte stream cannot be trusted afterwards.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ProtocolViolation {
    /// Framing failed (bad length, unknown type or status).
    #[error(transparent)]
    Frame(#[from] FrameError),
    /// A packet for a program we do not speak (libvirt's client closes the link too).
    #[error("packet for unknown program {program:#x} (type {kind:?})")]
    UnknownProgram {
        /// Program number.
        program: u32,
        /// Message type.
        kind: MessageType,
    },
    /// A program version other than the one we speak ([`program_version`](crate::proto::program_version)).
    #[error("program {program:#x} version {version} is not supported")]
    BadVersion {
        /// Program number.
        program: u32,
        /// Version found.
        version: u32,
    },
    /// A message type a server never sends to a client (CALL, `CALL_WITH_FDS`).
    #[error("unexpected {kind:?} packet from the server (proc {procedure}, serial {serial})")]
    UnexpectedType {
        /// Message type.
        kind: MessageType,
        /// Procedure.
        procedure: i32,
        /// Serial.
        serial: u32,
    },
    /// A status that makes no sense for the message type.
    #[error("unexpected status {status:?} on a {kind:?} packet (serial {serial})")]
    UnexpectedStatus {
        /// Message type.
        kind: MessageType,
        /// Status.
        status: MessageStatus,
        /// Serial.
        serial: u32,
    },
    /// A `*_WITH_FDS` message whose descriptor count word is missing or over
    /// [`MESSAGE_NUM_FDS_MAX`](crate::proto::limits::MESSAGE_NUM_FDS_MAX).
    #[error("{kind:?} packet (serial {serial}) announces {count:?} descriptors (limit {max})")]
    BadFdCount {
        /// Message type.
        kind: MessageType,
        /// Serial.
        serial: u32,
        /// The count word (`None`: the payload is shorter than one).
        count: Option<u32>,
        /// The limit.
        max: usize,
    },
    /// A reply's descriptors did not arrive with it: the transport cannot carry any (TCP,
    /// TLS, SSH), or they were lost.
    #[error("the descriptors of the reply to serial {serial} did not arrive with it")]
    MissingFds {
        /// Serial.
        serial: u32,
    },
    /// Descriptors arrived outside any `*_WITH_FDS` message (they were closed).
    #[error("{count} file descriptors arrived outside any message that carries them")]
    StrayFds {
        /// How many.
        count: usize,
    },
    /// A REPLY no call is waiting for (libvirt's client treats it as fatal as well).
    #[error("reply for serial {serial} (proc {procedure}) that no call is waiting for")]
    UnexpectedReply {
        /// Serial.
        serial: u32,
        /// Procedure.
        procedure: i32,
    },
    /// A REPLY whose procedure or program differs from the call's.
    #[error("reply for serial {serial} names proc {got}, the call was proc {want}")]
    MismatchedReply {
        /// Serial.
        serial: u32,
        /// Procedure of the call.
        want: i32,
        /// Procedure in the reply.
        got: i32,
    },
    /// A payload (reply, error, hole) that does not decode as its declared type.
    #[error("undecodable {what} for proc {procedure} serial {serial}: {error}")]
    BadPayload {
        /// What was being decoded.
        what: &'static str,
        /// Procedure.
        procedure: i32,
        /// Serial.
        serial: u32,
        /// The decode failure.
        error: DecodeError,
    },
    /// A stream finish confirmation nobody asked for.
    #[error("unexpected stream finish confirmation for serial {serial}")]
    UnexpectedStreamFinish {
        /// Serial of the stream.
        serial: u32,
    },
}

/// Why a connection is dead. Sticky: once set, every call and stream on the connection fails
/// with a clone of it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ConnectionError {
    /// The peer broke the protocol.
    #[error("protocol violation by the peer: {0}")]
    Protocol(ProtocolViolation),
    /// Nothing arrived from the peer for `interval × count` although we pinged it.
    #[error(
        "keepalive timeout: nothing from the peer for {silent:?} (interval {interval:?} × {count})"
    )]
    KeepaliveTimeout {
        /// How long the peer was silent.
        silent: Duration,
        /// Configured ping interval.
        interval: Duration,
        /// Configured count.
        count: u32,
    },
    /// Closed by this side (`close()`, a dropped client, a budget that ran out).
    #[error("connection closed locally: {reason}")]
    LocallyClosed {
        /// Who closed it and why.
        reason: Arc<str>,
    },
    /// The peer closed the byte stream.
    #[error("the peer closed the connection")]
    PeerClosed,
    /// The transport failed (socket error, SSH session ended, …).
    #[error("transport error ({kind:?}): {message}")]
    Transport {
        /// `io::ErrorKind` of the failure.
        kind: io::ErrorKind,
        /// The transport's message.
        message: Arc<str>,
    },
    /// The connection was lost and is being redialled (a reconnecting client whose policy
    /// fails new calls at once, [`NewCalls::FailFast`](super::reconnect::NewCalls::FailFast)).
    /// Nothing was sent.
    #[error("connection lost ({lost}); reconnecting (attempt {attempt})")]
    Reconnecting {
        /// Why the last live connection died.
        lost: Box<ConnectionError>,
        /// The dial being made or waited for (from 1).
        attempt: u32,
    },
}

// By hand, not `#[from]`: the message formats the cause, so it is not also the source
// (an error formats its cause or returns it, never both).
impl From<ProtocolViolation> for ConnectionError {
    fn from(v: ProtocolViolation) -> Self {
        Self::Protocol(v)
    }
}

impl ConnectionError {
    /// A local close with `reason`.
    pub fn locally_closed(reason: impl Into<Arc<str>>) -> Self {
        Self::LocallyClosed {
            reason: reason.into(),
        }
    }

    /// A transport failure from an `io::Error`.
    pub fn transport(e: &io::Error) -> Self {
        Self::Transport {
            kind: e.kind(),
            message: e.to_string().into(),
        }
    }

    /// The closest `io::ErrorKind`, for async adapters.
    pub fn io_kind(&self) -> io::ErrorKind {
        match self {
            Self::Protocol(_) => io::ErrorKind::InvalidData,
            Self::KeepaliveTimeout { .. } => io::ErrorKind::TimedOut,
            Self::LocallyClosed { .. } => io::ErrorKind::ConnectionAborted,
            Self::PeerClosed => io::ErrorKind::ConnectionReset,
            Self::Transport { kind, .. } => *kind,
            Self::Reconnecting { .. } => io::ErrorKind::NotConnected,
        }
    }
}

/// Why one call failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum CallError {
    /// The daemon answered with an error (boxed: libvirt's error is large and rare; match it
    /// as `CallError::Remote(e) if e.code == ErrorCode::NO_DOMAIN`, or ask
    /// [`remote`](Self::remote)).
    #[error(transparent)]
    Remote(Box<RemoteError>),
    /// The connection died before the answer arrived (or was already dead).
    #[error(transparent)]
    Connection(#[from] ConnectionError),
    /// The call's own deadline passed; the connection is still usable and a late answer is
    /// discarded.
    #[error("call timed out")]
    TimedOut,
    /// The arguments could not be encoded (a field over its protocol limit, or a packet over
    /// 32 MiB). Nothing was sent.
    #[error("cannot encode the call: {0}")]
    Encode(EncodeError),
    /// The packet would exceed the protocol limit. Nothing was sent.
    #[error("cannot send the call: {0}")]
    Frame(FrameError),
    /// The procedure passes file descriptors (`CALL_WITH_FDS` / `REPLY_WITH_FDS`) and was
    /// called through a path that carries none (`call`): use `call_with_fds`. Refused
    /// locally; nothing was sent.
    #[error("{procedure} passes file descriptors ({fds:?}): call it with call_with_fds")]
    NeedsFdPassing {
        /// The procedure's name.
        procedure: &'static str,
        /// Which side carries descriptors.
        fds: FdPassing,
    },
    /// A call that passes file descriptors on a transport that cannot carry them: only a
    /// unix socket can (not TCP, TLS or SSH). Refused locally; nothing was sent.
    #[error(
        "{procedure} passes file descriptors, which this transport cannot carry (only a unix socket can)"
    )]
    FdPassingUnavailable {
        /// The procedure's name (`"raw"` for an undeclared one).
        procedure: &'static str,
    },
    /// More descriptors than one message may carry
    /// ([`MESSAGE_NUM_FDS_MAX`](crate::proto::limits::MESSAGE_NUM_FDS_MAX)). Refused
    /// locally; nothing was sent.
    #[error("{count} file descriptors in one call: the limit is {max}")]
    TooManyFds {
        /// Descriptors given.
        count: usize,
        /// The limit.
        max: usize,
    },
}

impl From<RemoteError> for CallError {
    fn from(e: RemoteError) -> Self {
        Self::Remote(Box::new(e))
    }
}

// By hand, not `#[from]`: the message formats the cause, so it is not also the source.
impl From<EncodeError> for CallError {
    fn from(e: EncodeError) -> Self {
        Self::Encode(e)
    }
}

impl From<FrameError> for CallError {
    fn from(e: FrameError) -> Self {
        Self::Frame(e)
    }
}

impl From<NeedsFds> for CallError {
    fn from(e: NeedsFds) -> Self {
        Self::NeedsFdPassing {
            procedure: e.procedure,
            fds: e.fds,
        }
    }
}

/// The questions a program asks of a failure, the same for every error of this library
/// ([`CallError`], [`StreamError`], [`HandshakeError`](super::handshake::HandshakeError) and,
/// with the client, `ConnectError`, `TransferError` and `Error`). Each type says what it holds
/// ([`remote`](Self::remote), [`is_connection_dead`](Self::is_connection_dead), and its own
/// authentication failures if it has any); [`is_not_found`](Self::is_not_found) and
/// [`is_auth`](Self::is_auth) follow from those, the same way for all. Every such type also
/// has these four as inherent methods, so asking needs no import.
pub trait ErrorPredicates {
    /// The daemon's error, if the failure is one or carries one.
    fn remote(&self) -> Option<&RemoteError>;

    /// The connection is dead (or died while it was being set up): this failed because of it,
    /// and everything later on it fails too. Reconnect.
    fn is_connection_dead(&self) -> bool;

    /// Authentication failed on this side of the link: credentials refused or missing, a
    /// client certificate refused, SSH authentication. (The daemon's own refusals are read
    /// from [`remote`](Self::remote).) False for types that authenticate nothing.
    fn is_auth_failed_here(&self) -> bool {
        false
    }

    /// The daemon said the object does not exist ([`RemoteError::is_not_found`]).
    fn is_not_found(&self) -> bool {
        self.remote().is_some_and(RemoteError::is_not_found)
    }

    /// Authentication or permission failed: here, or the daemon refused
    /// ([`RemoteError::is_auth`]).
    fn is_auth(&self) -> bool {
        self.is_auth_failed_here() || self.remote().is_some_and(RemoteError::is_auth)
    }
}

/// The [`ErrorPredicates`] of each listed type as inherent methods (no import needed to ask).
macro_rules! error_predicates {
    ($($T:ty),* $(,)?) => {$(
        impl $T {
            /// The daemon's error, if there is one ([`ErrorPredicates::remote`]).
            ///
            /// [`ErrorPredicates::remote`]: crate::conn::ErrorPredicates::remote
            pub fn remote(&self) -> Option<&$crate::proto::RemoteError> {
                $crate::conn::ErrorPredicates::remote(self)
            }

            /// The connection is dead: reconnect
            /// ([`ErrorPredicates::is_connection_dead`]).
            ///
            /// [`ErrorPredicates::is_connection_dead`]: crate::conn::ErrorPredicates::is_connection_dead
            pub fn is_connection_dead(&self) -> bool {
                $crate::conn::ErrorPredicates::is_connection_dead(self)
            }

            /// The daemon said the object does not exist
            /// ([`ErrorPredicates::is_not_found`]).
            ///
            /// [`ErrorPredicates::is_not_found`]: crate::conn::ErrorPredicates::is_not_found
            pub fn is_not_found(&self) -> bool {
                $crate::conn::ErrorPredicates::is_not_found(self)
            }

            /// Authentication or permission failed ([`ErrorPredicates::is_auth`]).
            ///
            /// [`ErrorPredicates::is_auth`]: crate::conn::ErrorPredicates::is_auth
            pub fn is_auth(&self) -> bool {
                $crate::conn::ErrorPredicates::is_auth(self)
            }
        }
    )*};
}
#[allow(unused_imports)] // the client's errors use it too, when it is built
pub(crate) use error_predicates;

error_predicates!(CallError, StreamError, super::handshake::HandshakeError);

impl ErrorPredicates for CallError {
    fn remote(&self) -> Option<&RemoteError> {
        match self {
            Self::Remote(e) => Some(e),
            _ => None,
        }
    }

    fn is_connection_dead(&self) -> bool {
        matches!(self, Self::Connection(_))
    }
}

impl ErrorPredicates for StreamError {
    /// The daemon's error: it refused to open the stream, failed mid-transfer, or answered
    /// our abort with an error.
    fn remote(&self) -> Option<&RemoteError> {
        match self {
            Self::Remote(e) => Some(e),
            Self::Aborted { server, .. } => server.as_deref(),
            _ => None,
        }
    }

    /// The connection is dead (this stream and everything else on it failed).
    fn is_connection_dead(&self) -> bool {
        matches!(self, Self::Connection(_))
    }
}

impl CallError {
    /// The connection is dead (this call and every later one fail): the same as
    /// [`is_connection_dead`](Self::is_connection_dead).
    pub fn is_connection(&self) -> bool {
        self.is_connection_dead()
    }

    /// Why the connection died, if that is why this call failed.
    pub fn connection(&self) -> Option<&ConnectionError> {
        match self {
            Self::Connection(e) => Some(e),
            _ => None,
        }
    }
}

/// Why a stream ended badly, or why a stream command was refused.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum StreamError {
    /// The daemon refused to open the stream, or reported an error mid-stream (e.g. ENOSPC).
    /// Boxed, as in [`CallError::Remote`].
    #[error(transparent)]
    Remote(Box<RemoteError>),
    /// We aborted the stream; `server` is the daemon's answer to the abort if it was an error.
    #[error("stream aborted: {reason}")]
    Aborted {
        /// Why we aborted (e.g. the source's error).
        reason: Arc<str>,
        /// The daemon's error answer to the abort, if any (boxed, as in
        /// [`CallError::Remote`]).
        server: Option<Box<RemoteError>>,
    },
    /// The connection died.
    #[error(transparent)]
    Connection(#[from] ConnectionError),
    /// The daemon sent a hole on a stream that was not opened sparse.
    #[error("the daemon sent a hole on a non-sparse stream")]
    UnexpectedHole,
    /// The daemon sent more than the stream can carry, data and holes counted: past the
    /// length the opening call asked for, or the limit set with
    /// [`StreamMut::limit_receive`](super::StreamMut::limit_receive) (the volume's capacity),
    /// or past 2^64 - 1 bytes in all. The stream was aborted; the connection is fine.
    #[error("the daemon sent more than {limit} bytes (data and holes) on this stream")]
    Overrun {
        /// The most the stream could carry.
        limit: u64,
    },
    /// The command does not fit the stream's direction or state; nothing was sent.
    #[error(transparent)]
    Misuse(#[from] StreamMisuse),
    /// No such stream (already ended and collected, or never opened).
    #[error("unknown stream")]
    Unknown,
    /// The opening call's arguments could not be encoded (a field over its protocol limit).
    /// Nothing was sent.
    #[error("cannot encode the stream's opening call: {0}")]
    Encode(EncodeError),
    /// The opening call's packet would exceed the protocol limit. Nothing was sent.
    #[error("cannot send the stream's opening call: {0}")]
    Frame(FrameError),
}

impl From<RemoteError> for StreamError {
    fn from(e: RemoteError) -> Self {
        Self::Remote(Box::new(e))
    }
}

// By hand, not `#[from]`: the message formats the cause, so it is not also the source.
impl From<EncodeError> for StreamError {
    fn from(e: EncodeError) -> Self {
        Self::Encode(e)
    }
}

impl From<FrameError> for StreamError {
    fn from(e: FrameError) -> Self {
        Self::Frame(e)
    }
}

/// A stream command that does not fit the stream (as h2's `UserError`, rustls's
/// `ApiMisuse`): a mistake of the caller, refused before anything reaches the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum StreamMisuse {
    /// The procedure does not open a stream.
    #[error("procedure {procedure} does not open a stream")]
    NotAStream {
        /// The procedure's name.
        procedure: &'static str,
    },
    /// Data sent on a download stream.
    #[error("send on a download stream")]
    SendOnDownload,
    /// A hole sent on a download stream.
    #[error("hole on a download stream")]
    HoleOnDownload,
    /// A hole offered on a stream not opened sparse (the daemon would kill the whole
    /// connection).
    #[error("stream was not opened sparse: refusing to send a hole")]
    NotSparse,
    /// A hole longer than the protocol's signed 64-bit length.
    #[error("hole of {len} bytes is longer than i64::MAX")]
    HoleTooLong {
        /// The length given.
        len: u64,
    },
    /// The daemon has not accepted the stream yet.
    #[error("stream is not open yet")]
    NotOpenYet,
    /// The stream is finishing: nothing more can be sent.
    #[error("stream is finishing: nothing more can be sent")]
    AfterFinish,
    /// The stream is being aborted.
    #[error("stream is aborting")]
    AfterAbort,
    /// A download was told to finish: it finishes by itself at EOF.
    #[error("a download finishes at EOF; abort to stop early")]
    FinishDownload,
    /// The stream has already finished successfully.
    #[error("stream has finished")]
    Finished,
}
