//! Streams: the part of the connection that decides what every inbound stream packet means
//! in every phase, so that a stream can always finish; and [`StreamMut`], the borrowed view
//! through which the caller sends, finishes, aborts and receives.
//!
//! The phase is the whole state: each fact a packet's meaning depends on is carried by the
//! variants where it can matter, and nowhere else.
//!
//! ```text
//!                          REPLY OK          upload/duplex finish /
//!  Opening { abort: None } ────────▶ Open ───(duplex) download EOF───▶ Finishing { reply_due: false, abort: None }
//!     │ local abort                    │ local abort                 │ local abort
//!     ▼                                ▼                             ▼
//!  Opening { abort: Some } ─REPLY OK─▶ Aborting { abort, reply_due: false }
//!
//!  Opening { abort } ──download EOF (the REPLY still due)──▶ Finishing { reply_due: true, abort }
//!  Finishing { reply_due: true, abort } ──local abort──▶ Aborting { abort, reply_due: true }
//!  Finishing / Aborting { reply_due: true } ──REPLY OK──▶ the same phase, reply_due: false
//!
//!  Finishing ──STREAM OK──▶ Done(Ok), or Done(Aborted) if it carries an abort
//!  Aborting ──STREAM OK / STREAM ERROR──▶ Done(Aborted)
//!  any live phase ──REPLY ERROR / STREAM ERROR──▶ Done(Remote), or Done(Aborted) once aborted
//!  a non-sparse download ──STREAM_HOLE──▶ abort sent, Done(UnexpectedHole)
//!  a download past its length, its limit or 2^64 - 1 bytes ──▶ abort sent, Done(Overrun)
//!  any live phase ──the connection dies──▶ Done(Connection)
//! ```
//!
//! | phase | carries |
//! |---|---|
//! | `Opening { abort }` | an abort asked for before the REPLY: sent once the REPLY says the stream exists |
//! | `Open` | nothing: the REPLY came, no finish or abort yet |
//! | `Finishing { reply_due, abort }` | whether the REPLY is still due (a download's data and EOF may precede it); an abort asked for while opening, which still ends the stream as aborted |
//! | `Aborting { abort, reply_due }` | why, and whether the REPLY is still due |
//! | `Done(result)` | the terminal result, until collected |
//!
//! A duplex stream (console, channel: [`StreamDirection::Duplex`]) is a download and an
//! upload in one phase: it receives as a download does while `Opening` or `Open`, sends as an
//! upload does while `Open`, and either side ends it: the daemon's EOF moves it to
//! `Finishing` as a download's does (answered with our finish), our [`StreamMut::finish`]
//! moves it there as an upload's does (data the daemon sent meanwhile is dropped). An abort
//! from us, an error from the daemon or the connection's death end it as they end the
//! others. Backpressure is per direction: the receive window
//! ([`Config::stream_window`](super::Config::stream_window)) bounds what it holds unread,
//! the connection's send queue ([`Connection::transmit_queued`]) what it has sent.
//!
//! A REPLY OK while the REPLY is due completes the opening (and is reported as
//! [`Output::StreamOpened`] unless an abort was asked for first); any other REPLY OK on a
//! stream's serial is a protocol violation. A `Done` stream drops every later packet for its
//! serial (the daemon may still send a trailing confirmation after an error; that must never
//! wedge anything). The caller letting go of a stream (a dropped handle) is an abort whose
//! record says so: its data is discarded, nothing is reported, and it is forgotten once it
//! ends.

use std::collections::VecDeque;
use std::sync::Arc;

use bytes::Bytes;

use super::error::{ProtocolViolation, StreamError, StreamMisuse};
use super::{Connection, Output, Queued, StreamId};
use crate::proto::types::StreamHole;
use crate::proto::{Procedure, RemoteError, StreamArgs, StreamDirection, header};
use crate::wire::frame::{self, Header, MessageStatus, MessageType};
use crate::wire::packet::encode_packet;
use crate::wire::xdr::{self, Encode};

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
    /// Bytes this item accounts for in the receive window: its data, or for a hole the
    /// memory its queue slot takes, so a flood of holes fills the window as data does.
    pub fn buffered_len(&self) -> usize {
        match self {
            Self::Data(b) => b.len(),
            Self::Hole(_) => size_of::<Self>(),
        }
    }
}

/// An abort the caller asked for.
#[derive(Debug, Clone)]
pub(crate) struct Abort {
    /// Why (the first reason given wins).
    reason: Arc<str>,
    /// The caller let go: discard data, report nothing, forget the stream once it ends.
    detached: bool,
}

impl Abort {
    fn new(reason: Arc<str>) -> Self {
        Self {
            reason,
            detached: false,
        }
    }

    /// The terminal result of the abort, given the daemon's answer.
    fn ended(&self, server: Option<RemoteError>) -> StreamError {
        StreamError::Aborted {
            reason: self.reason.clone(),
            server: server.map(Box::new),
        }
    }
}

/// Where a stream is; see the [module docs](self) for what each variant carries.
#[derive(Debug, Clone)]
pub(crate) enum Phase {
    /// Opening call sent; no REPLY yet.
    Opening { abort: Option<Abort> },
    /// REPLY OK seen.
    Open,
    /// We sent STREAM OK (upload finish, or download finish after EOF); awaiting the answer.
    Finishing {
        reply_due: bool,
        abort: Option<Abort>,
    },
    /// We sent STREAM ERROR (abort); awaiting the answer.
    Aborting { abort: Abort, reply_due: bool },
    /// Terminal.
    Done(Result<(), StreamError>),
}

impl Phase {
    fn reply_due(&self) -> bool {
        match self {
            Self::Opening { .. } => true,
            Self::Finishing { reply_due, .. } | Self::Aborting { reply_due, .. } => *reply_due,
            Self::Open | Self::Done(_) => false,
        }
    }

    fn abort(&self) -> Option<&Abort> {
        match self {
            Self::Opening { abort } | Self::Finishing { abort, .. } => abort.as_ref(),
            Self::Aborting { abort, .. } => Some(abort),
            Self::Open | Self::Done(_) => None,
        }
    }

    fn abort_mut(&mut self) -> Option<&mut Abort> {
        match self {
            Self::Opening { abort } | Self::Finishing { abort, .. } => abort.as_mut(),
            Self::Aborting { abort, .. } => Some(abort),
            Self::Open | Self::Done(_) => None,
        }
    }

    /// Why nothing more can be sent in this phase (data, holes or a finish), if so.
    fn refuse_sending(&self) -> Result<(), StreamMisuse> {
        match self {
            Self::Open => Ok(()),
            Self::Opening { .. } => Err(StreamMisuse::NotOpenYet),
            Self::Finishing { .. } => Err(StreamMisuse::AfterFinish),
            Self::Aborting { .. } => Err(StreamMisuse::AfterAbort),
            Self::Done(_) => Err(StreamMisuse::Finished),
        }
    }
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
    /// Logical bytes received so far, data and holes.
    rx_total: u64,
    /// The most the stream may carry ([`StreamError::Overrun`] past it).
    rx_limit: u64,
    /// Checks the open call's REPLY payload against the procedure's return type (a stream
    /// procedure may return data with its stream: `DOMAIN_SCREENSHOT` the image's MIME
    /// type, the tunnelled migration prepares a cookie). `None`: it must be empty.
    pub(crate) reply_check: Option<ReplyCheck>,
    /// What the open call's REPLY carried, for the caller, once it came. Data only: whether
    /// the REPLY is still due is the phase's to say.
    pub(crate) open_reply: Option<Bytes>,
}

/// Decodes a stream procedure's REPLY payload as its return type, discarding the value.
pub(crate) type ReplyCheck = fn(Bytes) -> Result<(), xdr::DecodeError>;

impl Stream {
    fn new(program: u32, procedure: i32, direction: StreamDirection, sparse: bool) -> Self {
        Self {
            program,
            procedure,
            direction,
            sparse,
            phase: Phase::Opening { abort: None },
            rx: VecDeque::new(),
            rx_bytes: 0,
            rx_total: 0,
            rx_limit: u64::MAX,
            reply_check: None,
            open_reply: None,
        }
    }

    pub(crate) fn is_done(&self) -> bool {
        matches!(self.phase, Phase::Done(_))
    }

    /// The caller has let go of the stream.
    pub(crate) fn is_detached(&self) -> bool {
        self.phase.abort().is_some_and(|a| a.detached)
    }

    /// A download or duplex stream that still takes data and holes: the daemon may send
    /// them before the REPLY, and until its EOF. A duplex stream we finished or aborted
    /// takes nothing more: what the daemon sent meanwhile is dropped as stragglers.
    fn receiving(&self) -> bool {
        self.direction != StreamDirection::Upload
            && matches!(self.phase, Phase::Opening { .. } | Phase::Open)
    }

    fn packet_header(&self, id: StreamId, kind: MessageType, status: MessageStatus) -> Header {
        header(self.program, self.procedure, id, kind, status)
    }

    /// Counts `len` more logical bytes received; `Err(limit)` when that passes the stream's
    /// limit or 2^64 - 1.
    fn count(&mut self, len: u64) -> Result<(), u64> {
        match self.rx_total.checked_add(len) {
            Some(total) if total <= self.rx_limit => {
                self.rx_total = total;
                Ok(())
            }
            _ => Err(self.rx_limit),
        }
    }

    fn push(&mut self, item: StreamItem) {
        if self.is_detached() {
            return;
        }
        self.rx_bytes += item.buffered_len();
        self.rx.push_back(item);
    }

    /// A stream that fails before its REPLY never opened for the user, so nobody will read
    /// what it buffered: drop it, or the end would wait behind it forever.
    pub(super) fn drop_unread_if_unopened(&mut self) {
        if self.phase.reply_due() {
            self.rx.clear();
            self.rx_bytes = 0;
        }
    }

    fn pop(&mut self) -> Option<StreamItem> {
        let item = self.rx.pop_front()?;
        self.rx_bytes -= item.buffered_len();
        Some(item)
    }
}

impl Connection {
    /// Payload bytes per upload packet: `Config::stream_chunk`, kept within the protocol's
    /// limits.
    pub fn upload_chunk(&self) -> usize {
        self.config.stream_chunk.clamp(1, frame::PAYLOAD_MAX)
    }

    /// Open a stream with a raw call. The core cannot read raw arguments: `sparse` says
    /// whether `args` ask for a sparse stream (typed procedures derive it from their
    /// arguments, see [`open_stream`](Self::open_stream)).
    pub fn open_stream_raw(
        &mut self,
        program: u32,
        procedure: i32,
        direction: StreamDirection,
        sparse: bool,
        args: &(impl Encode + ?Sized),
    ) -> Result<StreamId, StreamError> {
        self.check().map_err(StreamError::Connection)?;
        let (serial, packet) = self.encode_call::<StreamError>(program, procedure, args)?;
        // Registered before the call goes out: data may arrive before the REPLY.
        self.streams
            .insert(serial, Stream::new(program, procedure, direction, sparse));
        // Its opening call counts against the cap until its REPLY, like any call.
        self.queue_call(serial, Queued::packet(packet));
        Ok(serial)
    }

    /// Open a stream with a typed stream procedure (e.g. `StorageVolUpload`); the
    /// arguments say whether it is sparse.
    pub fn open_stream<P: Procedure>(&mut self, args: &P::Args) -> Result<StreamId, StreamError>
    where
        P::Args: StreamArgs,
    {
        let dir = P::STREAM.ok_or(StreamMisuse::NotAStream { procedure: P::NAME })?;
        let id = self.open_stream_raw(P::PROGRAM, P::NUMBER, dir, args.sparse(), args)?;
        if let Some(s) = self.streams.get_mut(&id) {
            s.reply_check = Some(|b| xdr::from_bytes::<P::Ret>(b).map(drop));
            s.rx_limit = args.receive_limit().unwrap_or(u64::MAX);
        }
        Ok(id)
    }

    /// The stream `id`, to send, finish, abort or receive on (as quinn's
    /// `Connection::send_stream`). Any id gives a view: its commands on a stream the
    /// connection does not know fail with [`StreamError::Unknown`].
    pub fn stream(&mut self, id: StreamId) -> StreamMut<'_> {
        StreamMut { conn: self, id }
    }

    /// A REPLY on a stream's serial.
    pub(super) fn handle_stream_reply(
        &mut self,
        h: Header,
        payload: Bytes,
    ) -> Result<(), ProtocolViolation> {
        let id = h.serial;
        let s = self.streams.get_mut(&id).expect("caller checked");
        if s.program != h.program || s.procedure != h.procedure {
            return Err(ProtocolViolation::MismatchedReply {
                serial: id,
                want: s.procedure,
                got: h.procedure,
            });
        }
        match h.status {
            _ if s.is_done() => {
                // The REPLY of a stream that ended before it (recorded in `end_stream`).
                self.abandoned.remove(&id);
                self.stats.stragglers += 1;
                Ok(())
            }
            // The open call's REPLY. It may come after stream packets (the daemon registers
            // the stream before replying), even after a download's EOF and our finish.
            MessageStatus::Ok if s.phase.reply_due() => {
                let checked = match s.reply_check {
                    Some(check) => check(payload.clone()),
                    None if payload.is_empty() => Ok(()),
                    None => Err(xdr::DecodeError::TrailingBytes {
                        what: "()",
                        remaining: payload.len(),
                    }),
                };
                if let Err(error) = checked {
                    return Err(ProtocolViolation::BadPayload {
                        what: "stream open reply",
                        procedure: h.procedure,
                        serial: id,
                        error,
                    });
                }
                s.open_reply = Some(payload);
                match &mut s.phase {
                    Phase::Opening { abort: None } => {
                        s.phase = Phase::Open;
                        self.outputs.push_back(Output::StreamOpened(id));
                    }
                    Phase::Opening { abort } => {
                        let abort = abort.take().expect("matched above");
                        s.phase = Phase::Aborting {
                            abort,
                            reply_due: false,
                        };
                        self.push_control(id, MessageStatus::Error);
                    }
                    Phase::Finishing { reply_due, abort } => {
                        *reply_due = false;
                        if abort.is_none() {
                            self.outputs.push_back(Output::StreamOpened(id));
                        }
                    }
                    Phase::Aborting { reply_due, .. } => *reply_due = false,
                    Phase::Open | Phase::Done(_) => unreachable!("the REPLY is due"),
                }
                Ok(())
            }
            MessageStatus::Error => {
                // Opening: the daemon refused. Later: libvirt's quirk of answering a failed
                // hole with a REPLY error on the stream's serial. Either way, terminal.
                let e = Self::decode_error(&h, payload)?;
                self.end_stream_with_server_error(id, e);
                // This was the REPLY `end_stream` saw due: none is left to accept as late.
                self.abandoned.remove(&id);
                Ok(())
            }
            _ => Err(ProtocolViolation::UnexpectedReply {
                serial: id,
                procedure: h.procedure,
            }),
        }
    }

    /// A `STREAM` or `STREAM_HOLE` packet.
    pub(super) fn handle_stream_packet(
        &mut self,
        h: Header,
        payload: Bytes,
    ) -> Result<(), ProtocolViolation> {
        let id = h.serial;
        let Some(s) = self.streams.get_mut(&id) else {
            // Packets for streams we no longer track are normal after an abort or error.
            self.stats.stragglers += 1;
            return Ok(());
        };
        if s.program != h.program || s.procedure != h.procedure || s.is_done() {
            self.stats.stragglers += 1;
            return Ok(());
        }
        match (h.kind, h.status) {
            (MessageType::Stream, MessageStatus::Continue) => {
                if !s.receiving() {
                    self.stats.stragglers += 1;
                    return Ok(());
                }
                if payload.is_empty() {
                    // EOF: finish the handshake like virsh does, then await the confirmation.
                    s.phase = match std::mem::replace(&mut s.phase, Phase::Open) {
                        Phase::Opening { abort } => Phase::Finishing {
                            reply_due: true,
                            abort,
                        },
                        _ => Phase::Finishing {
                            reply_due: false,
                            abort: None,
                        },
                    };
                    self.push_control(id, MessageStatus::Ok);
                } else if let Err(limit) = s.count(payload.len() as u64) {
                    self.overrun(id, limit);
                } else if !s.is_detached() {
                    s.push(StreamItem::Data(payload));
                    self.outputs.push_back(Output::StreamReadable(id));
                }
                Ok(())
            }
            (MessageType::StreamHole, MessageStatus::Continue) => {
                if !s.receiving() {
                    self.stats.stragglers += 1;
                    return Ok(());
                }
                let len = decode_hole(&h, payload)?;
                if !s.sparse {
                    // Stop the daemon and fail this stream only; no answer is awaited.
                    self.push_control(id, MessageStatus::Error);
                    self.end_stream(id, Err(StreamError::UnexpectedHole));
                    return Ok(());
                }
                if let Err(limit) = s.count(len) {
                    self.overrun(id, limit);
                } else if !s.is_detached() {
                    s.push(StreamItem::Hole(len));
                    self.outputs.push_back(Output::StreamReadable(id));
                }
                Ok(())
            }
            (MessageType::Stream, MessageStatus::Ok) => {
                let r = match &s.phase {
                    // An abort asked for while the open call was in flight ends as aborted,
                    // even when the daemon had already sent everything.
                    Phase::Finishing { abort, .. } => {
                        abort.as_ref().map_or(Ok(()), |a| Err(a.ended(None)))
                    }
                    Phase::Aborting { abort, .. } => Err(abort.ended(None)),
                    _ => return Err(ProtocolViolation::UnexpectedStreamFinish { serial: id }),
                };
                self.end_stream(id, r);
                Ok(())
            }
            (MessageType::Stream, MessageStatus::Error) => {
                // Server error mid-stream: stop sending for this stream; no confirmation comes.
                let e = Self::decode_error(&h, payload)?;
                self.drop_queued_data(id);
                self.end_stream_with_server_error(id, e);
                Ok(())
            }
            (kind, status) => Err(ProtocolViolation::UnexpectedStatus {
                kind,
                status,
                serial: id,
            }),
        }
    }

    fn end_stream(&mut self, id: StreamId, result: Result<(), StreamError>) {
        let Some(s) = self.streams.get_mut(&id) else {
            return;
        };
        if result.is_err() {
            s.drop_unread_if_unopened();
        }
        // libvirtd's event loop can send a short download's data, EOF and the answer to our
        // finish before its worker sends the open call's REPLY: once the stream is collected
        // that REPLY is a late reply, not a violation (the record goes with the REPLY).
        if s.phase.reply_due() {
            self.abandoned.insert(id);
        }
        let detached = s.is_detached();
        s.phase = Phase::Done(result);
        if detached {
            self.streams.remove(&id);
        } else {
            self.outputs.push_back(Output::StreamEnded(id));
        }
    }

    /// The daemon sent more than the stream may carry: stop it and fail this stream only;
    /// no answer is awaited (what it sends meanwhile is dropped as stragglers).
    fn overrun(&mut self, id: StreamId, limit: u64) {
        self.push_control(id, MessageStatus::Error);
        self.end_stream(id, Err(StreamError::Overrun { limit }));
    }

    fn end_stream_with_server_error(&mut self, id: StreamId, e: RemoteError) {
        let s = self.streams.get(&id).expect("caller checked");
        let r = match s.phase.abort() {
            Some(a) => a.ended(Some(e)),
            None => StreamError::from(e),
        };
        self.end_stream(id, Err(r));
    }

    /// An empty-payload stream control packet: STREAM OK (finish) or STREAM ERROR (abort),
    /// queued at the back like every other packet. An abort first drops the data and holes
    /// still queued for its stream, so it does not wait behind megabytes we no longer want
    /// to send; a finish must follow its stream's data.
    fn push_control(&mut self, id: StreamId, status: MessageStatus) {
        let Some(s) = self.streams.get(&id) else {
            return;
        };
        let h = s.packet_header(id, MessageType::Stream, status);
        if status == MessageStatus::Error {
            self.drop_queued_data(id);
        }
        let head = frame::encode_head(&h, 0).expect("tiny packet");
        self.sendq.push(Queued::packet(head));
    }

    /// Forget queued (not yet taken) data and hole packets of stream `id`.
    fn drop_queued_data(&mut self, id: StreamId) {
        self.sendq.drop_stream_data(id);
    }
}

fn decode_hole(h: &Header, payload: Bytes) -> Result<u64, ProtocolViolation> {
    let bad = |error| ProtocolViolation::BadPayload {
        what: "stream hole",
        procedure: h.procedure,
        serial: h.serial,
        error,
    };
    let hole: StreamHole = xdr::from_bytes(payload).map_err(bad)?;
    u64::try_from(hole.length).map_err(|_| {
        bad(xdr::DecodeError::InvalidEnum {
            what: "hole length",
            value: hole.length,
        })
    })
}

/// One stream of a [`Connection`], borrowed: see [`Connection::stream`].
#[derive(Debug)]
pub struct StreamMut<'a> {
    conn: &'a mut Connection,
    id: StreamId,
}

impl StreamMut<'_> {
    /// The stream's id (the serial of the call that opened it).
    pub fn id(&self) -> StreamId {
        self.id
    }

    /// The stream, if the connection is alive and knows it.
    fn get(&mut self) -> Result<&mut Stream, StreamError> {
        if let Some(e) = &self.conn.error {
            return Err(StreamError::Connection(e.clone()));
        }
        self.conn
            .streams
            .get_mut(&self.id)
            .ok_or(StreamError::Unknown)
    }

    /// The stream, if it has not ended.
    fn live(&mut self) -> Result<&mut Stream, StreamError> {
        let s = self.get()?;
        if let Phase::Done(r) = &s.phase {
            // Sticky per stream: a server error mid-upload surfaces at the next command.
            return Err(r.clone().err().unwrap_or(StreamMisuse::Finished.into()));
        }
        Ok(s)
    }

    /// Queue upload data (split into packets of at most `stream_chunk` bytes, no copy).
    /// Watch [`Connection::transmit_queued`] for backpressure.
    pub fn send(&mut self, mut data: Bytes) -> Result<(), StreamError> {
        let (id, chunk) = (self.id, self.conn.upload_chunk());
        let s = self.live()?;
        if s.direction == StreamDirection::Download {
            return Err(StreamMisuse::SendOnDownload.into());
        }
        s.phase.refuse_sending()?;
        let h = s.packet_header(id, MessageType::Stream, MessageStatus::Continue);
        while !data.is_empty() {
            let body = data.split_to(chunk.min(data.len()));
            let head = frame::encode_head(&h, body.len()).expect("chunk is under the limit");
            self.conn.sendq.push(Queued::data(id, head, body));
        }
        Ok(())
    }

    /// Queue a hole of `len` bytes on a sparse upload. Refused (nothing sent) on a stream
    /// that was not opened sparse: the daemon would drop the whole connection.
    pub fn send_hole(&mut self, len: u64) -> Result<(), StreamError> {
        let id = self.id;
        let s = self.live()?;
        if s.direction == StreamDirection::Download {
            return Err(StreamMisuse::HoleOnDownload.into());
        }
        if !s.sparse {
            return Err(StreamMisuse::NotSparse.into());
        }
        s.phase.refuse_sending()?;
        let Ok(length) = i64::try_from(len) else {
            return Err(StreamMisuse::HoleTooLong { len }.into());
        };
        let h = s.packet_header(id, MessageType::StreamHole, MessageStatus::Continue);
        let packet: Bytes =
            encode_packet::<StreamError>(&mut self.conn.wbuf, &h, &StreamHole { length, flags: 0 })
                .expect("tiny packet");
        self.conn.sendq.push(Queued::data(id, packet, Bytes::new()));
        Ok(())
    }

    /// Finish an upload or a duplex stream: the daemon's verdict arrives as
    /// [`Output::StreamEnded`]. Idempotent while finishing. Downloads finish by themselves at
    /// EOF; a duplex stream finishes either way, whichever side is first (after our finish,
    /// data the daemon sent meanwhile is dropped).
    pub fn finish(&mut self) -> Result<(), StreamError> {
        let s = self.live()?;
        match (&s.phase, s.direction) {
            (Phase::Finishing { .. }, _) => Ok(()),
            (Phase::Open, StreamDirection::Upload | StreamDirection::Duplex) => {
                s.phase = Phase::Finishing {
                    reply_due: false,
                    abort: None,
                };
                self.conn.push_control(self.id, MessageStatus::Ok);
                Ok(())
            }
            (Phase::Open, StreamDirection::Download) => Err(StreamMisuse::FinishDownload.into()),
            // Opening or aborting.
            (phase, _) => Ok(phase.refuse_sending()?),
        }
    }

    /// Abort the stream (empty STREAM ERROR on the wire) and wait for the daemon's answer,
    /// which ends the stream with [`StreamError::Aborted`] carrying `reason`. A no-op on an
    /// ended stream or a dead connection. Safe in every phase: the daemon answers a finish or
    /// an abort, so a terminal packet always comes.
    pub fn abort(&mut self, reason: impl Into<Arc<str>>) -> Result<(), StreamError> {
        let s = match self.get() {
            Ok(s) => s,
            Err(StreamError::Unknown) => return Err(StreamError::Unknown),
            Err(_) => return Ok(()),
        };
        let phase = std::mem::replace(&mut s.phase, Phase::Open);
        s.phase = match phase {
            Phase::Opening { abort: None } => Phase::Opening {
                abort: Some(Abort::new(reason.into())),
            },
            Phase::Open => Phase::Aborting {
                abort: Abort::new(reason.into()),
                reply_due: false,
            },
            Phase::Finishing { reply_due, abort } => Phase::Aborting {
                abort: abort.unwrap_or_else(|| Abort::new(reason.into())),
                reply_due,
            },
            unchanged @ (Phase::Opening { abort: Some(_) }
            | Phase::Aborting { .. }
            | Phase::Done(_)) => {
                s.phase = unchanged;
                return Ok(());
            }
        };
        if matches!(s.phase, Phase::Aborting { .. }) {
            self.conn.push_control(self.id, MessageStatus::Error);
        }
        Ok(())
    }

    /// What the call that opened the stream returned (empty for most stream procedures;
    /// decode it with the procedure's `Ret`). `None` before the REPLY or for an unknown
    /// stream.
    pub fn open_reply(&self) -> Option<Bytes> {
        self.conn.streams.get(&self.id)?.open_reply.clone()
    }

    /// Bound what the daemon may send on this download, data and holes counted, to `limit`
    /// bytes (the volume's capacity past the offset, when the caller knows it); more ends the
    /// stream with [`StreamError::Overrun`] and an abort. Only ever lowers the bound (a
    /// volume download's `length` sets one when the stream opens).
    pub fn limit_receive(&mut self, limit: u64) {
        if let Some(s) = self.conn.streams.get_mut(&self.id) {
            s.rx_limit = s.rx_limit.min(limit);
        }
    }

    /// The next queued download item.
    pub fn recv(&mut self) -> Option<StreamItem> {
        self.conn.streams.get_mut(&self.id)?.pop()
    }

    /// The terminal result, once the stream has ended and every queued item was received.
    /// Collects the stream: later calls return `None`.
    pub fn take_end(&mut self) -> Option<Result<(), StreamError>> {
        let s = self.conn.streams.get(&self.id)?;
        if !s.rx.is_empty() {
            return None;
        }
        let Phase::Done(r) = &s.phase else {
            return None;
        };
        let r = r.clone();
        self.conn.streams.remove(&self.id);
        Some(r)
    }

    /// The caller lets go of the stream (its handle was dropped): abort it if it is live,
    /// discard its data, and forget it once it ends. The connection stays usable.
    pub fn forget(&mut self) {
        let _ = self.abort("stream handle dropped");
        let Some(s) = self.conn.streams.get_mut(&self.id) else {
            return;
        };
        s.rx.clear();
        s.rx_bytes = 0;
        if let Some(a) = s.phase.abort_mut() {
            a.detached = true;
        } else {
            // Ended (a dead connection has ended every stream).
            debug_assert!(s.is_done(), "a live stream has an abort once aborted");
            self.conn.streams.remove(&self.id);
        }
    }
}
