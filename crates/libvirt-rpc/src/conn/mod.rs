//! Layer 3: the connection state machine — calls, streams, keepalive, event subscriptions.
//!
//! [`Connection`] is fully deterministic: no sockets, no clock, no runtime. Bytes and time go
//! in, packets and notices come out, in the style of quinn-proto:
//!
//! * **getters** (`&self`): [`is_closed`](Connection::is_closed), [`error`](Connection::error),
//!   [`wants_read`](Connection::wants_read), [`stats`](Connection::stats), …
//! * **inputs** (`handle_*`): [`handle_input`](Connection::handle_input) (received bytes),
//!   [`handle_timeout`](Connection::handle_timeout), [`handle_eof`](Connection::handle_eof),
//!   [`handle_transport_error`](Connection::handle_transport_error).
//! * **commands**: [`call`](Connection::call), [`forget_call`](Connection::forget_call),
//!   [`open_stream`](Connection::open_stream), `stream_*`,
//!   [`subscribe`](Connection::subscribe), [`unsubscribe`](Connection::unsubscribe),
//!   [`close`](Connection::close).
//! * **outputs** (`poll_*`): [`poll_transmit`](Connection::poll_transmit),
//!   [`poll_timeout`](Connection::poll_timeout), [`poll_output`](Connection::poll_output).
//!
//! Polling order after any input or command: drain `poll_transmit` (write what it returns, in
//! order), then re-arm the timer from `poll_timeout`, then drain `poll_output`. Time must be
//! monotonic; spurious or late `handle_timeout` calls are harmless.
//!
//! Errors are sticky (as in rustls): once the connection is dead every command returns the
//! same [`ConnectionError`], every pending call and stream has been completed with it, and
//! `poll_output` has yielded [`Output::Closed`] exactly once.
//!
//! Event subscriptions are part of the state machine too ([`subscriptions`]): the connection
//! makes the daemon registrations itself (one per kind, event id and object, shared by every
//! subscriber) and tells the driver which subscribers each event is for.

pub mod error;
pub mod handshake;
mod keepalive;
pub mod sasl;
mod stream;
pub mod subscriptions;

use std::collections::{BTreeSet, HashMap, HashSet, VecDeque};
use std::sync::Arc;
use std::time::Instant;

use bytes::{BufMut, Bytes, BytesMut};

pub use error::{CallError, ConnectionError, ProtocolViolation, StreamError};
pub use keepalive::KeepaliveConfig;
use keepalive::{Keepalive, KeepaliveAction};
pub use stream::StreamItem;
use stream::{Phase, Stream};
pub use subscriptions::SubscriberId;
use subscriptions::{Call, CallKind, Subscriptions};

use crate::proto::error::WireError;
use crate::proto::events::{self, EventKind};
use crate::proto::procs::common::{CallbackIdArgs, CallbackIdRet};
use crate::proto::{
    self, KEEPALIVE_PING, KEEPALIVE_PONG, KEEPALIVE_PROGRAM, KEEPALIVE_VERSION, Procedure,
    REMOTE_PROGRAM, RemoteError, StreamDirection,
};
use crate::wire::frame::{self, Frame, Header, MessageStatus, MessageType, UPLOAD_CHUNK_DEFAULT};
use crate::wire::xdr::{self, Decode, Decoder, Encode, Encoder, Preencoded};

/// Connection settings.
#[derive(Debug, Clone)]
pub struct Config {
    /// Our own pings; `None` turns them off (the daemon's pings are answered regardless).
    pub keepalive: Option<KeepaliveConfig>,
    /// Download bytes buffered per stream before [`Connection::wants_read`] turns false.
    pub stream_window: usize,
    /// Upload chunk size (payload bytes per STREAM packet); default
    /// [`UPLOAD_CHUNK_DEFAULT`], at most
    /// [`PAYLOAD_MAX`](frame::PAYLOAD_MAX).
    pub stream_chunk: usize,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            keepalive: Some(KeepaliveConfig::default()),
            stream_window: 4 << 20,
            stream_chunk: UPLOAD_CHUNK_DEFAULT,
        }
    }
}

/// One packet to write: `head` then `body` (either may be empty). Stream data travels in
/// `body` without being copied.
#[derive(Clone, PartialEq, Eq)]
pub struct Transmit {
    /// Length word, header and (for calls) the payload.
    pub head: Bytes,
    /// Raw stream data, sent after `head`.
    pub body: Bytes,
}

impl Transmit {
    /// Total bytes.
    pub fn len(&self) -> usize {
        self.head.len() + self.body.len()
    }

    /// True when there is nothing to send.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl std::fmt::Debug for Transmit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Transmit")
            .field("len", &self.len())
            .finish()
    }
}

/// Identifies a stream: the serial of the call that opened it.
pub type StreamId = u32;

/// What the connection tells its driver.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Output {
    /// A call completed: its reply payload (decode with the procedure's `Ret`) or its error.
    CallDone {
        /// The call's serial.
        serial: u32,
        /// Reply payload or error.
        result: Result<Bytes, CallError>,
    },
    /// The daemon accepted a stream's opening call; uploads may send now.
    StreamOpened(StreamId),
    /// Download items are queued: see [`Connection::stream_recv`].
    StreamReadable(StreamId),
    /// The stream reached a terminal state: see [`Connection::take_stream_end`].
    StreamEnded(StreamId),
    /// A [`subscribe`](Connection::subscribe) was answered: the daemon's callback id
    /// (shared by every subscriber of the same event and object), or why it failed. Once per
    /// subscriber, unless it unsubscribed first; a failed subscriber is gone.
    SubscriptionDone {
        /// The subscriber.
        subscriber: SubscriberId,
        /// The callback id, or the error.
        result: Result<i32, CallError>,
    },
    /// An asynchronous message from the daemon (an event, the close notice), with the
    /// subscribers it is for: those of the registration it was sent for (none for the close
    /// notice or a callback nobody holds).
    Event {
        /// The decoded message.
        event: events::Event,
        /// The subscribers to hand it to.
        subscribers: Vec<SubscriberId>,
    },
    /// The connection died; emitted once.
    Closed(ConnectionError),
}

/// Counters, for tests and diagnostics.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Stats {
    /// Packets received.
    pub packets_in: u64,
    /// Packets queued for sending.
    pub packets_out: u64,
    /// Daemon pings answered.
    pub pings_answered: u64,
    /// Our pings sent.
    pub pings_sent: u64,
    /// Messages of a known program with a procedure we do not decode (skipped).
    pub unknown_messages: u64,
    /// Known events that failed to decode (skipped).
    pub malformed_events: u64,
    /// Stream packets for streams that had already ended (dropped).
    pub stragglers: u64,
    /// Replies that arrived after their call was forgotten (dropped).
    pub late_replies: u64,
}

#[derive(Debug)]
struct PendingCall {
    program: u32,
    procedure: i32,
    deadline: Option<Instant>,
}

/// The libvirt client-side protocol state machine. See the [module docs](self).
#[derive(Debug)]
pub struct Connection {
    config: Config,
    error: Option<ConnectionError>,
    closed_reported: bool,
    next_serial: u32,
    calls: HashMap<u32, PendingCall>,
    abandoned: HashSet<u32>,
    deadlines: BTreeSet<(Instant, u32)>,
    streams: HashMap<u32, Stream>,
    transmit: VecDeque<Transmit>,
    transmit_bytes: usize,
    outputs: VecDeque<Output>,
    keepalive: Keepalive,
    stats: Stats,
    /// `CONNECT_CLOSE` was sent: the daemon's EOF that follows is our own doing.
    closing: bool,
    subscriptions: Subscriptions,
}

impl Connection {
    /// A fresh connection; `now` starts the keepalive clock.
    pub fn new(config: Config, now: Instant) -> Self {
        let keepalive = Keepalive::new(config.keepalive, now);
        Self {
            config,
            error: None,
            closed_reported: false,
            next_serial: 0,
            calls: HashMap::new(),
            abandoned: HashSet::new(),
            deadlines: BTreeSet::new(),
            streams: HashMap::new(),
            transmit: VecDeque::new(),
            transmit_bytes: 0,
            outputs: VecDeque::new(),
            keepalive,
            stats: Stats::default(),
            closing: false,
            subscriptions: Subscriptions::default(),
        }
    }

    // ---- getters ------------------------------------------------------------------------

    /// Payload bytes per upload packet: `Config::stream_chunk`, kept within the protocol's
    /// limits.
    pub fn upload_chunk(&self) -> usize {
        self.config.stream_chunk.clamp(1, frame::PAYLOAD_MAX)
    }

    /// True once the connection is dead.
    pub fn is_closed(&self) -> bool {
        self.error.is_some()
    }

    /// Why the connection died, if it did.
    pub fn error(&self) -> Option<&ConnectionError> {
        self.error.as_ref()
    }

    /// False while some download holds a full window of unread data (or the connection is
    /// dead): the driver should stop reading the socket until the consumer catches up.
    /// libvirt has no per-stream flow control, so this is the only way to bound memory.
    pub fn wants_read(&self) -> bool {
        self.error.is_none()
            && self
                .streams
                .values()
                .all(|s| s.detached || s.rx_bytes < self.config.stream_window.max(1))
    }

    /// Bytes queued for sending and not yet taken by [`poll_transmit`](Self::poll_transmit).
    pub fn transmit_queued(&self) -> usize {
        self.transmit_bytes
    }

    /// Calls waiting for a reply (the connection's own event registration calls included).
    pub fn pending_calls(&self) -> usize {
        self.calls.len()
    }

    /// Streams not yet collected (live, or ended and not yet reported via `take_stream_end`).
    pub fn stream_count(&self) -> usize {
        self.streams.len()
    }

    /// Counters.
    pub fn stats(&self) -> Stats {
        self.stats
    }

    /// The keepalive settings in force.
    pub fn keepalive(&self) -> Option<KeepaliveConfig> {
        self.keepalive.config()
    }

    // ---- outputs ------------------------------------------------------------------------

    /// The next packet to write, in order.
    #[must_use]
    pub fn poll_transmit(&mut self) -> Option<Transmit> {
        let t = self.transmit.pop_front()?;
        self.transmit_bytes -= t.len();
        Some(t)
    }

    /// When [`handle_timeout`](Self::handle_timeout) should next be called.
    #[must_use]
    pub fn poll_timeout(&self) -> Option<Instant> {
        if self.error.is_some() {
            return None;
        }
        let call = self.deadlines.first().map(|(t, _)| *t);
        match (call, self.keepalive.next_timeout()) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// The next notice for the driver.
    #[must_use]
    pub fn poll_output(&mut self) -> Option<Output> {
        self.outputs.pop_front()
    }

    // ---- inputs -------------------------------------------------------------------------

    /// Consume complete packets from the front of `buf` (partial ones stay for next time).
    /// Stops early while [`wants_read`](Self::wants_read) is false; call again once the
    /// consumer has drained some stream data.
    pub fn handle_input(
        &mut self,
        buf: &mut BytesMut,
        now: Instant,
    ) -> Result<(), ConnectionError> {
        self.check()?;
        while self.wants_read() {
            match frame::decode(buf) {
                Ok(Some(f)) => {
                    self.stats.packets_in += 1;
                    self.keepalive.on_receive(now);
                    if let Err(v) = self.handle_frame(f) {
                        self.fail(v.into());
                    }
                    self.check()?;
                }
                Ok(None) => break,
                Err(e) => {
                    self.fail(ProtocolViolation::Frame(e).into());
                    return self.check();
                }
            }
        }
        Ok(())
    }

    /// Bytes the packet at the front of `buf` still needs (0 when one is complete). Lets a
    /// driver reserve exactly, after the length word was validated.
    pub fn bytes_needed(buf: &[u8]) -> usize {
        frame::bytes_needed(buf).unwrap_or(0)
    }

    /// Fire timers due at `now`: call deadlines and keepalive.
    pub fn handle_timeout(&mut self, now: Instant) {
        if self.error.is_some() {
            return;
        }
        while let Some(&(t, serial)) = self.deadlines.first() {
            if t > now {
                break;
            }
            self.deadlines.pop_first();
            if self.calls.remove(&serial).is_some() {
                self.abandoned.insert(serial);
                self.outputs.push_back(Output::CallDone {
                    serial,
                    result: Err(CallError::TimedOut),
                });
            }
        }
        if !self.wants_read() {
            // We stopped reading on purpose (a slow download consumer): the peer is not the
            // one that is silent.
            self.keepalive.on_receive(now);
        }
        match self.keepalive.on_timeout(now) {
            KeepaliveAction::Nothing => {}
            KeepaliveAction::Ping => {
                self.stats.pings_sent += 1;
                self.queue_keepalive(KEEPALIVE_PING);
            }
            KeepaliveAction::Dead { silent } => {
                let c = self.keepalive.config().unwrap_or_default();
                self.fail(ConnectionError::KeepaliveTimeout {
                    silent,
                    interval: c.interval,
                    count: c.count,
                });
            }
        }
    }

    /// The peer closed the byte stream. After [`expect_close`](Self::expect_close) that is
    /// the end of a polite teardown and is reported as a local close.
    pub fn handle_eof(&mut self) {
        if self.closing {
            self.fail(ConnectionError::locally_closed("disconnected"));
        } else {
            self.fail(ConnectionError::PeerClosed);
        }
    }

    /// A polite teardown (`CONNECT_CLOSE`) is under way: the daemon will close the stream.
    pub fn expect_close(&mut self) {
        self.closing = true;
    }

    /// The transport failed.
    pub fn handle_transport_error(&mut self, error: &std::io::Error) {
        self.fail(ConnectionError::transport(error));
    }

    // ---- commands -----------------------------------------------------------------------

    /// Close locally: everything pending fails with [`ConnectionError::LocallyClosed`].
    /// Idempotent; the first reason wins. Nothing is queued for sending (a polite
    /// `CONNECT_CLOSE` is the caller's business, before this).
    pub fn close(&mut self, reason: impl Into<Arc<str>>) {
        self.fail(ConnectionError::locally_closed(reason));
    }

    /// Turn our pings on or off (the daemon's pings are always answered).
    pub fn set_keepalive(&mut self, config: Option<KeepaliveConfig>, now: Instant) {
        self.keepalive.set_config(config, now);
    }

    /// Queue a call with already-chosen program and procedure; returns its serial. The
    /// result arrives as [`Output::CallDone`]. `deadline` makes it fail with
    /// [`CallError::TimedOut`] (the connection stays usable).
    pub fn call_raw(
        &mut self,
        program: u32,
        procedure: i32,
        args: &(impl Encode + ?Sized),
        deadline: Option<Instant>,
    ) -> Result<u32, CallError> {
        self.check()?;
        let serial = self.alloc_serial();
        let packet = encode_call(program, procedure, serial, args)?;
        self.push_transmit(
            Transmit {
                head: packet,
                body: Bytes::new(),
            },
            false,
        );
        self.calls.insert(
            serial,
            PendingCall {
                program,
                procedure,
                deadline,
            },
        );
        if let Some(d) = deadline {
            self.deadlines.insert((d, serial));
        }
        Ok(serial)
    }

    /// Queue a call of a typed procedure ([`call_raw`](Self::call_raw) with its numbers).
    pub fn call<P: Procedure>(
        &mut self,
        args: &P::Args,
        deadline: Option<Instant>,
    ) -> Result<u32, CallError> {
        self.call_raw(P::PROGRAM, P::NUMBER, args, deadline)
    }

    /// Decode a typed reply payload from [`Output::CallDone`]; a payload that does not decode
    /// kills the connection (the peer is not speaking our protocol):
    /// [`parse_reply`](Self::parse_reply), then [`handle_violation`](Self::handle_violation)
    /// on failure.
    pub fn decode_reply<P: Procedure>(
        &mut self,
        serial: u32,
        payload: Bytes,
    ) -> Result<P::Ret, CallError> {
        Self::parse_reply::<P>(serial, payload).map_err(|v| self.handle_violation(v))
    }

    /// The decoding half of [`decode_reply`](Self::decode_reply): pure, so a driver can decode
    /// outside its lock and take it only to report a failure.
    pub fn parse_reply<P: Procedure>(
        serial: u32,
        payload: Bytes,
    ) -> Result<P::Ret, ProtocolViolation> {
        parse_ret(P::NUMBER, serial, payload)
    }

    /// The peer broke the protocol in a way only the driver could see (a reply that does not
    /// decode, from [`parse_reply`](Self::parse_reply)): the connection dies. Returns the
    /// error every call now gets (the first error wins).
    pub fn handle_violation(&mut self, violation: ProtocolViolation) -> CallError {
        self.fail(violation.into());
        CallError::Connection(self.error.clone().expect("just failed"))
    }

    /// Stop waiting for a call (its future was dropped): no `CallDone` will be emitted and a
    /// late reply is discarded. The connection's own registration calls are not forgotten.
    pub fn forget_call(&mut self, serial: u32) {
        if self.subscriptions.call_kind(serial).is_some() {
            return;
        }
        if let Some(c) = self.calls.remove(&serial) {
            if let Some(d) = c.deadline {
                self.deadlines.remove(&(d, serial));
            }
            self.abandoned.insert(serial);
        }
    }

    /// Subscribe to the events of family `K` with id `event_id`, for one object or (`None`)
    /// all. Returns the subscriber's id at once; the outcome arrives as
    /// [`Output::SubscriptionDone`], then its events as [`Output::Event`]s naming it.
    ///
    /// Subscribers of the same event and object share one daemon registration: the first one
    /// queues the REGISTER call, the last one to [`unsubscribe`](Self::unsubscribe) queues the
    /// DEREGISTER (see [`subscriptions`] for the rules).
    pub fn subscribe<K: EventKind>(
        &mut self,
        event_id: i32,
        object: Option<K::Object>,
    ) -> Result<SubscriberId, CallError> {
        let key = xdr::to_bytes(&K::register_args(event_id, object))?;
        self.check()?;
        let sub = self
            .subscriptions
            .subscribe(K::KIND, key, &mut self.outputs);
        self.send_subscription_calls();
        Ok(sub)
    }

    /// A subscriber left: it gets no more events, and the daemon registration ends with its
    /// last subscriber. Unknown (or already failed) subscribers are ignored.
    pub fn unsubscribe(&mut self, subscriber: SubscriberId) {
        if self.error.is_some() {
            return;
        }
        self.subscriptions.unsubscribe(subscriber);
        self.send_subscription_calls();
    }

    /// Open a stream with a raw call. `sparse` must match the sparse flag inside `args`.
    pub fn open_stream_raw(
        &mut self,
        program: u32,
        procedure: i32,
        direction: StreamDirection,
        sparse: bool,
        args: &(impl Encode + ?Sized),
    ) -> Result<StreamId, StreamError> {
        self.check().map_err(StreamError::Connection)?;
        let serial = self.alloc_serial();
        let packet = encode_call(program, procedure, serial, args)?;
        // Registered before the call goes out: data may arrive before the REPLY.
        self.streams
            .insert(serial, Stream::new(program, procedure, direction, sparse));
        self.push_transmit(
            Transmit {
                head: packet,
                body: Bytes::new(),
            },
            false,
        );
        Ok(serial)
    }

    /// Open a stream with a typed stream procedure (e.g. `StorageVolUpload`).
    pub fn open_stream<P: Procedure>(
        &mut self,
        args: &P::Args,
        sparse: bool,
    ) -> Result<StreamId, StreamError> {
        let dir = P::STREAM.ok_or(StreamError::InvalidState(
            "procedure does not open a stream",
        ))?;
        let id = self.open_stream_raw(P::PROGRAM, P::NUMBER, dir, sparse, args)?;
        if let Some(s) = self.streams.get_mut(&id) {
            s.reply_check = Some(|b| xdr::from_bytes::<P::Ret>(b).map(drop));
        }
        Ok(id)
    }

    /// The payload of the REPLY that opened a stream (empty for most stream procedures;
    /// decode it with the procedure's `Ret`). `None` before the REPLY or for an unknown
    /// stream.
    pub fn stream_open_reply(&self, id: StreamId) -> Option<Bytes> {
        self.streams
            .get(&id)
            .filter(|s| s.replied)
            .map(|s| s.reply.clone())
    }

    fn live_stream(&mut self, id: StreamId) -> Result<&mut Stream, StreamError> {
        if let Some(e) = &self.error {
            return Err(StreamError::Connection(e.clone()));
        }
        let s = self.streams.get_mut(&id).ok_or(StreamError::Unknown)?;
        if let Phase::Done(r) = &s.phase {
            // Sticky per stream: a server error mid-upload surfaces at the next send.
            return Err(r
                .clone()
                .err()
                .unwrap_or(StreamError::InvalidState("stream has finished")));
        }
        Ok(s)
    }

    /// Queue upload data (split into packets of at most `stream_chunk` bytes, no copy).
    /// Watch [`transmit_queued`](Self::transmit_queued) for backpressure.
    pub fn stream_send(&mut self, id: StreamId, mut data: Bytes) -> Result<(), StreamError> {
        let chunk = self.upload_chunk();
        let s = self.live_stream(id)?;
        if s.direction != StreamDirection::Upload {
            return Err(StreamError::InvalidState("send on a download stream"));
        }
        match s.phase {
            Phase::Open => {}
            Phase::Opening => return Err(StreamError::InvalidState("stream is not open yet")),
            _ => return Err(StreamError::InvalidState("send after finish or abort")),
        }
        let header = stream_header(
            s.program,
            s.procedure,
            id,
            MessageType::Stream,
            MessageStatus::Continue,
        );
        while !data.is_empty() {
            let body = data.split_to(chunk.min(data.len()));
            let head = frame::encode_head(&header, body.len()).expect("chunk is under the limit");
            self.push_transmit(Transmit { head, body }, false);
        }
        Ok(())
    }

    /// Queue a hole of `len` bytes on a sparse upload. Refused (nothing sent) on a stream
    /// that was not opened sparse: the daemon would drop the whole connection.
    pub fn stream_send_hole(&mut self, id: StreamId, len: u64) -> Result<(), StreamError> {
        let s = self.live_stream(id)?;
        if s.direction != StreamDirection::Upload {
            return Err(StreamError::InvalidState("hole on a download stream"));
        }
        if !s.sparse {
            return Err(StreamError::NotSparse);
        }
        if !matches!(s.phase, Phase::Open) {
            return Err(StreamError::InvalidState("stream is not open"));
        }
        let Ok(len) = i64::try_from(len) else {
            return Err(StreamError::InvalidState("hole longer than i64::MAX"));
        };
        let header = stream_header(
            s.program,
            s.procedure,
            id,
            MessageType::StreamHole,
            MessageStatus::Continue,
        );
        let mut buf = BytesMut::with_capacity(40);
        frame::encode_with(&mut buf, &header, |b| {
            b.put_i64(len);
            b.put_u32(0);
        })
        .expect("tiny packet");
        self.push_transmit(
            Transmit {
                head: buf.freeze(),
                body: Bytes::new(),
            },
            false,
        );
        Ok(())
    }

    /// Finish an upload: the daemon's verdict arrives as [`Output::StreamEnded`].
    /// Idempotent while finishing. Downloads finish by themselves at EOF.
    pub fn stream_finish(&mut self, id: StreamId) -> Result<(), StreamError> {
        let s = self.live_stream(id)?;
        match (&s.phase, s.direction) {
            (Phase::Finishing, _) => Ok(()),
            (Phase::Open, StreamDirection::Upload) => {
                s.phase = Phase::Finishing;
                self.push_control(id, MessageStatus::Ok);
                Ok(())
            }
            (Phase::Open, StreamDirection::Download) => Err(StreamError::InvalidState(
                "a download finishes at EOF; abort to stop early",
            )),
            (Phase::Opening, _) => Err(StreamError::InvalidState("stream is not open yet")),
            _ => Err(StreamError::InvalidState("stream is aborting")),
        }
    }

    /// Abort a stream (empty STREAM ERROR on the wire) and wait for the daemon's answer, which
    /// ends the stream with [`StreamError::Aborted`] carrying `reason`. A no-op on an ended
    /// stream. Safe in every phase: the daemon answers a finish or an abort, so a terminal
    /// packet always comes.
    pub fn stream_abort(
        &mut self,
        id: StreamId,
        reason: impl Into<Arc<str>>,
    ) -> Result<(), StreamError> {
        let s = match self.live_stream(id) {
            Ok(s) => s,
            Err(StreamError::Unknown) => return Err(StreamError::Unknown),
            Err(_) => return Ok(()),
        };
        if s.abort_reason.is_none() {
            s.abort_reason = Some(reason.into());
        }
        match s.phase {
            Phase::Opening => {
                s.abort_on_open = true;
                Ok(())
            }
            Phase::Open | Phase::Finishing => {
                s.phase = Phase::Aborting;
                self.push_control(id, MessageStatus::Error);
                Ok(())
            }
            Phase::Aborting | Phase::Done(_) => Ok(()),
        }
    }

    /// The next queued download item.
    pub fn stream_recv(&mut self, id: StreamId) -> Option<StreamItem> {
        self.streams.get_mut(&id)?.pop()
    }

    /// The terminal result, once the stream has ended and every queued item was received.
    /// Collects the stream: later calls return `None`.
    pub fn take_stream_end(&mut self, id: StreamId) -> Option<Result<(), StreamError>> {
        let s = self.streams.get(&id)?;
        if !s.rx.is_empty() {
            return None;
        }
        let Phase::Done(r) = &s.phase else {
            return None;
        };
        let r = r.clone();
        self.streams.remove(&id);
        Some(r)
    }

    /// The user let go of a stream (its handle was dropped): abort it if it is live, discard
    /// its data, and forget it once it ends. The connection stays usable.
    pub fn forget_stream(&mut self, id: StreamId) {
        let _ = self.stream_abort(id, "stream handle dropped");
        if let Some(s) = self.streams.get_mut(&id) {
            s.detached = true;
            s.rx.clear();
            s.rx_bytes = 0;
            if s.is_done() {
                self.streams.remove(&id);
            }
        }
    }

    // ---- internals ----------------------------------------------------------------------

    fn check(&self) -> Result<(), ConnectionError> {
        self.error.clone().map_or(Ok(()), Err)
    }

    /// Make the calls the subscription table queued.
    fn send_subscription_calls(&mut self) {
        while let Some((reg, call)) = self.subscriptions.poll_call() {
            let queued = match &call {
                Call::Register { kind, key } => {
                    self.call_raw(REMOTE_PROGRAM, kind.register_proc(), &Preencoded(key), None)
                }
                Call::Deregister { kind, callback_id } => self.call_raw(
                    REMOTE_PROGRAM,
                    kind.deregister_proc(),
                    &CallbackIdArgs {
                        callback_id: *callback_id,
                    },
                    None,
                ),
            };
            match queued {
                Ok(serial) => self.subscriptions.sent(reg, serial, &call),
                Err(e) => self.subscriptions.send_failed(reg, &e, &mut self.outputs),
            }
        }
    }

    fn alloc_serial(&mut self) -> u32 {
        loop {
            let s = self.next_serial;
            self.next_serial = self.next_serial.wrapping_add(1);
            if !self.calls.contains_key(&s)
                && !self.streams.contains_key(&s)
                && !self.abandoned.contains(&s)
            {
                return s;
            }
        }
    }

    fn push_transmit(&mut self, t: Transmit, urgent: bool) {
        self.stats.packets_out += 1;
        self.transmit_bytes += t.len();
        if urgent {
            self.transmit.push_front(t);
        } else {
            self.transmit.push_back(t);
        }
    }

    /// An empty-payload stream control packet (finish or abort). Goes to the front: it must
    /// not wait behind megabytes of queued data we no longer want to send.
    fn push_control(&mut self, id: StreamId, status: MessageStatus) {
        let Some(s) = self.streams.get(&id) else {
            return;
        };
        let h = stream_header(s.program, s.procedure, id, MessageType::Stream, status);
        if status == MessageStatus::Error {
            // Data queued for this stream is pointless once we abort; drop it.
            self.drop_queued_data(id);
        }
        let head = frame::encode_head(&h, 0).expect("tiny packet");
        self.push_transmit(
            Transmit {
                head,
                body: Bytes::new(),
            },
            false,
        );
    }

    /// Forget queued (not yet taken) data and hole packets of stream `id`.
    fn drop_queued_data(&mut self, id: StreamId) {
        let before = self.transmit.len();
        self.transmit.retain(|t| !is_stream_data_for(t, id));
        if self.transmit.len() != before {
            self.transmit_bytes = self.transmit.iter().map(Transmit::len).sum();
        }
    }

    fn queue_keepalive(&mut self, procedure: i32) {
        let h = Header {
            program: KEEPALIVE_PROGRAM,
            version: KEEPALIVE_VERSION,
            procedure,
            kind: MessageType::Message,
            serial: 0,
            status: MessageStatus::Ok,
        };
        let head = frame::encode_head(&h, 0).expect("tiny packet");
        // Keepalive jumps the queue (between whole packets) so a long upload cannot delay it.
        self.push_transmit(
            Transmit {
                head,
                body: Bytes::new(),
            },
            true,
        );
    }

    /// Mark dead, complete everything pending with the error, and say so once.
    fn fail(&mut self, e: ConnectionError) {
        if self.error.is_some() {
            return;
        }
        self.error = Some(e.clone());
        self.transmit.clear();
        self.transmit_bytes = 0;
        self.deadlines.clear();
        let mut serials: Vec<u32> = self
            .calls
            .drain()
            .map(|(s, _)| s)
            .filter(|s| self.subscriptions.call_kind(*s).is_none())
            .collect();
        serials.sort_unstable();
        for serial in serials {
            self.outputs.push_back(Output::CallDone {
                serial,
                result: Err(CallError::Connection(e.clone())),
            });
        }
        let mut ids: Vec<u32> = self.streams.keys().copied().collect();
        ids.sort_unstable();
        for id in ids {
            let s = self.streams.get_mut(&id).expect("listed");
            if s.detached {
                self.streams.remove(&id);
                continue;
            }
            if !s.is_done() {
                s.drop_unread_if_unopened();
                s.phase = Phase::Done(Err(StreamError::Connection(e.clone())));
                self.outputs.push_back(Output::StreamEnded(id));
            }
        }
        self.subscriptions.fail(&e, &mut self.outputs);
        if !self.closed_reported {
            self.closed_reported = true;
            self.outputs.push_back(Output::Closed(e));
        }
    }

    fn handle_frame(&mut self, f: Frame) -> Result<(), ProtocolViolation> {
        let h = f.header;
        match h.program {
            KEEPALIVE_PROGRAM | REMOTE_PROGRAM | proto::QEMU_PROGRAM | proto::LXC_PROGRAM => {}
            program => {
                return Err(ProtocolViolation::UnknownProgram {
                    program,
                    kind: h.kind,
                });
            }
        }
        if h.version != 1 {
            return Err(ProtocolViolation::BadVersion {
                program: h.program,
                version: h.version,
            });
        }
        match h.kind {
            MessageType::Reply => self.handle_reply(h, f.payload),
            MessageType::Message => {
                self.handle_message(h, f.payload);
                Ok(())
            }
            MessageType::Stream | MessageType::StreamHole => {
                self.handle_stream_packet(h, f.payload)
            }
            MessageType::Call | MessageType::CallWithFds | MessageType::ReplyWithFds => {
                Err(ProtocolViolation::UnexpectedType {
                    kind: h.kind,
                    procedure: h.procedure,
                    serial: h.serial,
                })
            }
        }
    }

    fn decode_error(h: &Header, payload: Bytes) -> Result<RemoteError, ProtocolViolation> {
        xdr::from_bytes::<WireError>(payload)
            .map(RemoteError::from)
            .map_err(|error| ProtocolViolation::BadPayload {
                what: "error",
                procedure: h.procedure,
                serial: h.serial,
                error,
            })
    }

    fn handle_reply(&mut self, h: Header, payload: Bytes) -> Result<(), ProtocolViolation> {
        if h.status == MessageStatus::Continue {
            return Err(ProtocolViolation::UnexpectedStatus {
                kind: h.kind,
                status: h.status,
                serial: h.serial,
            });
        }
        if let Some(call) = self.calls.get(&h.serial) {
            if call.program != h.program || call.procedure != h.procedure {
                return Err(ProtocolViolation::MismatchedReply {
                    serial: h.serial,
                    want: call.procedure,
                    got: h.procedure,
                });
            }
            let result = match h.status {
                MessageStatus::Error => Err(CallError::Remote(Self::decode_error(&h, payload)?)),
                _ => Ok(payload),
            };
            let call = self.calls.remove(&h.serial).expect("present");
            if let Some(d) = call.deadline {
                self.deadlines.remove(&(d, h.serial));
            }
            if let Some(kind) = self.subscriptions.call_kind(h.serial) {
                return self.handle_subscription_reply(h, kind, result);
            }
            self.outputs.push_back(Output::CallDone {
                serial: h.serial,
                result,
            });
            return Ok(());
        }
        if self.streams.contains_key(&h.serial) {
            return self.handle_stream_reply(h, payload);
        }
        if self.abandoned.remove(&h.serial) {
            self.stats.late_replies += 1;
            return Ok(());
        }
        Err(ProtocolViolation::UnexpectedReply {
            serial: h.serial,
            procedure: h.procedure,
        })
    }

    /// The reply to one of the subscription table's own calls.
    fn handle_subscription_reply(
        &mut self,
        h: Header,
        kind: CallKind,
        result: Result<Bytes, CallError>,
    ) -> Result<(), ProtocolViolation> {
        match kind {
            CallKind::Register => {
                let result = match result {
                    Ok(payload) => {
                        Ok(parse_ret::<CallbackIdRet>(h.procedure, h.serial, payload)?.callback_id)
                    }
                    Err(e) => Err(e),
                };
                self.subscriptions
                    .registered(h.serial, result, &mut self.outputs);
            }
            CallKind::Deregister => self.subscriptions.deregistered(h.serial),
        }
        self.send_subscription_calls();
        Ok(())
    }

    fn handle_stream_reply(&mut self, h: Header, payload: Bytes) -> Result<(), ProtocolViolation> {
        let id = h.serial;
        let s = self.streams.get(&id).expect("caller checked");
        if s.program != h.program || s.procedure != h.procedure {
            return Err(ProtocolViolation::MismatchedReply {
                serial: id,
                want: s.procedure,
                got: h.procedure,
            });
        }
        match (&s.phase, h.status) {
            (Phase::Done(_), _) => {
                self.stats.stragglers += 1;
                Ok(())
            }
            // The open call's REPLY. It may come after stream packets (the daemon registers
            // the stream before replying), even after a download's EOF and our finish.
            (_, MessageStatus::Ok) if !s.replied => {
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
                let s = self.streams.get_mut(&id).expect("present");
                s.replied = true;
                s.reply = payload;
                if matches!(s.phase, Phase::Opening) {
                    s.phase = Phase::Open;
                    if s.abort_on_open {
                        s.phase = Phase::Aborting;
                        self.push_control(id, MessageStatus::Error);
                        return Ok(());
                    }
                }
                if !s.detached && !s.abort_on_open {
                    self.outputs.push_back(Output::StreamOpened(id));
                }
                Ok(())
            }
            (_, MessageStatus::Error) => {
                // Opening: the daemon refused. Later: libvirt's quirk of answering a failed
                // hole with a REPLY error on the stream's serial. Either way, terminal.
                let e = Self::decode_error(&h, payload)?;
                self.end_stream_with_server_error(id, e);
                Ok(())
            }
            _ => Err(ProtocolViolation::UnexpectedReply {
                serial: id,
                procedure: h.procedure,
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
        s.phase = Phase::Done(result);
        if s.detached {
            self.streams.remove(&id);
        } else {
            self.outputs.push_back(Output::StreamEnded(id));
        }
    }

    fn end_stream_with_server_error(&mut self, id: StreamId, e: RemoteError) {
        let s = self.streams.get(&id).expect("caller checked");
        let r = if matches!(s.phase, Phase::Aborting) || s.abort_on_open {
            Err(s.aborted(Some(e)))
        } else {
            Err(StreamError::Remote(e))
        };
        self.end_stream(id, r);
    }

    fn handle_stream_packet(&mut self, h: Header, payload: Bytes) -> Result<(), ProtocolViolation> {
        let id = h.serial;
        let Some(s) = self.streams.get_mut(&id) else {
            // Packets for streams we no longer track are normal after an abort or error.
            self.stats.stragglers += 1;
            return Ok(());
        };
        if s.program != h.program || s.procedure != h.procedure {
            self.stats.stragglers += 1;
            return Ok(());
        }
        if s.is_done() {
            self.stats.stragglers += 1;
            return Ok(());
        }
        match (h.kind, h.status) {
            (MessageType::Stream, MessageStatus::Continue) => {
                let receiving = s.direction == StreamDirection::Download
                    && matches!(s.phase, Phase::Opening | Phase::Open)
                    && !s.eof;
                if !receiving {
                    self.stats.stragglers += 1;
                    return Ok(());
                }
                if payload.is_empty() {
                    // EOF: finish the handshake like virsh does, then await the confirmation.
                    s.eof = true;
                    s.phase = Phase::Finishing;
                    self.push_control(id, MessageStatus::Ok);
                } else if !s.detached {
                    s.push(StreamItem::Data(payload));
                    self.outputs.push_back(Output::StreamReadable(id));
                }
                Ok(())
            }
            (MessageType::StreamHole, MessageStatus::Continue) => {
                let receiving = s.direction == StreamDirection::Download
                    && matches!(s.phase, Phase::Opening | Phase::Open)
                    && !s.eof;
                if !receiving {
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
                if !s.detached {
                    s.push(StreamItem::Hole(len));
                    self.outputs.push_back(Output::StreamReadable(id));
                }
                Ok(())
            }
            (MessageType::Stream, MessageStatus::Ok) => match s.phase {
                Phase::Finishing => {
                    // An abort asked for while the open call was in flight ends as aborted,
                    // even when the daemon had already sent everything.
                    let r = if s.abort_on_open {
                        Err(s.aborted(None))
                    } else {
                        Ok(())
                    };
                    self.end_stream(id, r);
                    Ok(())
                }
                Phase::Aborting => {
                    let r = Err(s.aborted(None));
                    self.end_stream(id, r);
                    Ok(())
                }
                _ => Err(ProtocolViolation::UnexpectedStreamFinish { serial: id }),
            },
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

    fn handle_message(&mut self, h: Header, payload: Bytes) {
        if h.program == KEEPALIVE_PROGRAM {
            match h.procedure {
                KEEPALIVE_PING => {
                    self.stats.pings_answered += 1;
                    self.queue_keepalive(KEEPALIVE_PONG);
                }
                KEEPALIVE_PONG => {}
                _ => self.stats.unknown_messages += 1,
            }
            return;
        }
        if h.program != REMOTE_PROGRAM {
            self.stats.unknown_messages += 1;
            return;
        }
        match events::decode(h.procedure, payload) {
            Ok(Some(event)) => {
                let subscribers = self.subscriptions.route(&event);
                self.outputs.push_back(Output::Event { event, subscribers });
            }
            Ok(None) => self.stats.unknown_messages += 1,
            Err(_) => self.stats.malformed_events += 1,
        }
    }
}

/// The one typed decode of a reply payload: a payload that does not decode as the
/// procedure's return type means the peer is not speaking the protocol we think.
fn parse_ret<R: Decode>(
    procedure: i32,
    serial: u32,
    payload: Bytes,
) -> Result<R, ProtocolViolation> {
    xdr::from_bytes(payload).map_err(|error| ProtocolViolation::BadPayload {
        what: "reply",
        procedure,
        serial,
        error,
    })
}

fn stream_header(
    program: u32,
    procedure: i32,
    serial: u32,
    kind: MessageType,
    status: MessageStatus,
) -> Header {
    Header {
        program,
        version: 1,
        procedure,
        kind,
        serial,
        status,
    }
}

fn encode_call(
    program: u32,
    procedure: i32,
    serial: u32,
    args: &(impl Encode + ?Sized),
) -> Result<Bytes, CallError> {
    let header = Header {
        program,
        version: 1,
        procedure,
        kind: MessageType::Call,
        serial,
        status: MessageStatus::Ok,
    };
    let mut buf = BytesMut::with_capacity(64);
    let mut enc_err = Ok(());
    frame::encode_with(&mut buf, &header, |b| {
        let mut enc = Encoder::new(b);
        args.encode(&mut enc);
        enc_err = enc.finish();
    })?;
    enc_err?;
    Ok(buf.freeze())
}

fn decode_hole(h: &Header, payload: Bytes) -> Result<u64, ProtocolViolation> {
    let bad = |error| ProtocolViolation::BadPayload {
        what: "stream hole",
        procedure: h.procedure,
        serial: h.serial,
        error,
    };
    let mut d = Decoder::new(payload);
    let len = d.i64().map_err(bad)?;
    let _flags = d.u32().map_err(bad)?;
    d.finish("virNetStreamHole").map_err(bad)?;
    u64::try_from(len).map_err(|_| {
        bad(xdr::DecodeError::InvalidEnum {
            what: "hole length",
            value: len,
        })
    })
}

/// True for a queued data or hole packet of stream `serial` (not control packets).
fn is_stream_data_for(t: &Transmit, serial: u32) -> bool {
    let h = &t.head;
    if h.len() < frame::MIN_FRAME_LEN {
        return false;
    }
    let word = |i: usize| u32::from_be_bytes(h[i..i + 4].try_into().expect("4 bytes"));
    let kind = word(16);
    let status = word(24);
    word(20) == serial
        && status == MessageStatus::Continue.to_u32()
        && (kind == MessageType::Stream.to_u32() || kind == MessageType::StreamHole.to_u32())
}
