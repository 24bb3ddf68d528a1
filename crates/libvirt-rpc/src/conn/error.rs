//! Errors of the connection state machine, typed per layer and cheap to clone (a fatal error
//! is handed to every pending call and stream, and returned again by every later use).

use std::io;
use std::sync::Arc;
use std::time::Duration;

use crate::proto::RemoteError;
use crate::proto::procedure::FdPassing;
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
    /// A program version other than 1.
    #[error("program {program:#x} version {version} is not supported")]
    BadVersion {
        /// Program number.
        program: u32,
        /// Version found.
        version: u32,
    },
    /// A message type a server never sends to a client (CALL, `*_WITH_FDS`).
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
    Protocol(#[from] ProtocolViolation),
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
        }
    }
}

/// Why one call failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum CallError {
    /// The daemon answered with an error.
    #[error("{0}")]
    Remote(#[from] RemoteError),
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
    Encode(#[from] EncodeError),
    /// The packet would exceed the protocol limit. Nothing was sent.
    #[error("cannot send the call: {0}")]
    Frame(#[from] FrameError),
    /// The procedure passes file descriptors (`CALL_WITH_FDS` / `REPLY_WITH_FDS`), which this
    /// crate cannot do yet on any transport. Refused locally; nothing was sent.
    #[error("{procedure} passes file descriptors ({fds:?}), which is not supported yet")]
    NeedsFdPassing {
        /// The procedure's name.
        procedure: &'static str,
        /// Which side carries descriptors.
        fds: FdPassing,
    },
}

impl CallError {
    /// The daemon's error, if that is what this is.
    pub fn remote(&self) -> Option<&RemoteError> {
        match self {
            Self::Remote(e) => Some(e),
            _ => None,
        }
    }

    /// The daemon said the object does not exist.
    pub fn is_not_found(&self) -> bool {
        self.remote().is_some_and(RemoteError::is_not_found)
    }

    /// The connection is dead (this call and every later one fail).
    pub fn is_connection(&self) -> bool {
        matches!(self, Self::Connection(_))
    }
}

/// Why a stream ended badly.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum StreamError {
    /// The daemon refused to open the stream, or reported an error mid-stream (e.g. ENOSPC).
    #[error("{0}")]
    Remote(#[from] RemoteError),
    /// We aborted the stream; `server` is the daemon's answer to the abort if it was an error.
    #[error("stream aborted: {reason}")]
    Aborted {
        /// Why we aborted (e.g. the source's error).
        reason: Arc<str>,
        /// The daemon's error answer to the abort, if any.
        server: Option<RemoteError>,
    },
    /// The connection died.
    #[error(transparent)]
    Connection(#[from] ConnectionError),
    /// The daemon sent a hole on a stream that was not opened sparse.
    #[error("the daemon sent a hole on a non-sparse stream")]
    UnexpectedHole,
    /// A hole was offered on a stream not opened sparse; nothing was sent (the daemon would
    /// kill the whole connection).
    #[error("stream was not opened sparse: refusing to send a hole")]
    NotSparse,
    /// The operation does not fit the stream's direction or state (e.g. send after finish).
    #[error("invalid stream operation: {0}")]
    InvalidState(&'static str),
    /// No such stream (already ended and collected, or never opened).
    #[error("unknown stream")]
    Unknown,
    /// The open call could not be sent.
    #[error(transparent)]
    Call(#[from] CallError),
}
