//! Per-stream state: the part of the connection that decides what every inbound stream
//! packet means in every phase, so that a stream can always finish.
//!
//! ```text
//!            REPLY OK              local finish / download EOF
//!  Opening ───────────▶ Open ─────────────────────────────▶ Finishing ──STREAM OK──▶ Done(Ok)
//!     │                  │ local abort                          │
//!     │ REPLY ERROR      ▼                                      │ STREAM ERROR
//!     │              Aborting ──STREAM OK / ERROR──▶ Done(Aborted)
//!     ▼                                                          ▼
//!  Done(Remote)   any live phase ──STREAM ERROR / REPLY ERROR──▶ Done(Remote)
//! ```
//!
//! A `Done` stream drops every later packet for its serial (the daemon may still send a
//! trailing confirmation after an error; that must never wedge anything).

use std::collections::VecDeque;
use std::sync::Arc;

use bytes::Bytes;

use super::error::StreamError;
use crate::proto::StreamDirection;

/// One item of a download, in order.
#[derive(Clone, PartialEq, Eq)]
pub enum StreamItem {
    /// Bytes (a slice of the receive buffer: no copy).
    Data(Bytes),
    /// A hole of this many bytes (sparse streams only).
    Hole(u64),
}

impl std::fmt::Debug for StreamItem {
    // Never print data bytes.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Data(b) => write!(f, "Data({} bytes)", b.len()),
            Self::Hole(n) => write!(f, "Hole({n})"),
        }
    }
}

impl StreamItem {
    /// Bytes this item accounts for in the receive window (holes are free).
    pub fn buffered_len(&self) -> usize {
        match self {
            Self::Data(b) => b.len(),
            Self::Hole(_) => 0,
        }
    }
}

#[derive(Debug, Clone)]
pub(crate) enum Phase {
    /// Opening call sent; no REPLY yet.
    Opening,
    /// REPLY OK seen.
    Open,
    /// We sent STREAM OK (upload finish, or download finish after EOF); awaiting the answer.
    Finishing,
    /// We sent STREAM ERROR (abort); awaiting the answer.
    Aborting,
    /// Terminal.
    Done(Result<(), StreamError>),
}

#[derive(Debug)]
pub(crate) struct Stream {
    pub(crate) program: u32,
    pub(crate) procedure: i32,
    pub(crate) direction: StreamDirection,
    pub(crate) sparse: bool,
    pub(crate) phase: Phase,
    pub(crate) rx: VecDeque<StreamItem>,
    pub(crate) rx_bytes: usize,
    /// Why we abort (set when an abort was requested).
    pub(crate) abort_reason: Option<Arc<str>>,
    /// Abort requested while Opening: send it once the REPLY says the stream exists.
    pub(crate) abort_on_open: bool,
    /// The user has let go: discard data, remove on termination, report nothing.
    pub(crate) detached: bool,
    /// Download saw EOF (empty CONTINUE).
    pub(crate) eof: bool,
    /// The open call's REPLY arrived (it may trail the first stream packets).
    pub(crate) replied: bool,
    /// Checks the open call's REPLY payload against the procedure's return type (a stream
    /// procedure may return data with its stream: `DOMAIN_SCREENSHOT` the image's MIME
    /// type, the tunnelled migration prepares a cookie). `None`: it must be empty.
    pub(crate) reply_check: Option<ReplyCheck>,
    /// The open call's REPLY payload, once it arrived.
    pub(crate) reply: Bytes,
}

/// Decodes a stream procedure's REPLY payload as its return type, discarding the value.
pub(crate) type ReplyCheck = fn(Bytes) -> Result<(), crate::wire::xdr::DecodeError>;

impl Stream {
    pub(crate) fn new(
        program: u32,
        procedure: i32,
        direction: StreamDirection,
        sparse: bool,
    ) -> Self {
        Self {
            program,
            procedure,
            direction,
            sparse,
            phase: Phase::Opening,
            rx: VecDeque::new(),
            rx_bytes: 0,
            abort_reason: None,
            abort_on_open: false,
            detached: false,
            eof: false,
            replied: false,
            reply_check: None,
            reply: Bytes::new(),
        }
    }

    pub(crate) fn is_done(&self) -> bool {
        matches!(self.phase, Phase::Done(_))
    }

    pub(crate) fn push(&mut self, item: StreamItem) {
        if self.detached {
            return;
        }
        self.rx_bytes += item.buffered_len();
        self.rx.push_back(item);
    }

    /// A stream that fails before its REPLY never opened for the user, so nobody will read
    /// what it buffered: drop it, or the end would wait behind it forever.
    pub(crate) fn drop_unread_if_unopened(&mut self) {
        if !self.replied {
            self.rx.clear();
            self.rx_bytes = 0;
        }
    }

    pub(crate) fn pop(&mut self) -> Option<StreamItem> {
        let item = self.rx.pop_front()?;
        self.rx_bytes -= item.buffered_len();
        Some(item)
    }

    /// The terminal result of an abort, given the daemon's answer.
    pub(crate) fn aborted(&self, server: Option<crate::proto::RemoteError>) -> StreamError {
        StreamError::Aborted {
            reason: self
                .abort_reason
                .clone()
                .unwrap_or_else(|| "aborted".into()),
            server,
        }
    }
}
