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
//!   [`open_stream`](Connection::open_stream), [`subscribe`](Connection::subscribe),
//!   [`unsubscribe`](Connection::unsubscribe), [`close`](Connection::close), and on one
//!   stream through the borrowed view [`stream(id)`](Connection::stream) (as quinn's
//!   `send_stream(id)`): [`send`](StreamMut::send), [`send_hole`](StreamMut::send_hole),
//!   [`finish`](StreamMut::finish), [`abort`](StreamMut::abort), [`recv`](StreamMut::recv),
//!   [`take_end`](StreamMut::take_end), [`forget`](StreamMut::forget).
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

pub mod admission;
pub(crate) mod error;
pub mod handshake;
mod keepalive;
pub mod reconnect;
pub mod sasl;
pub(crate) mod serials;
mod stream;
pub mod subscriptions;
pub mod transmit;

use std::collections::{BTreeSet, VecDeque};
use std::num::NonZeroUsize;
use std::os::fd::OwnedFd;
use std::sync::Arc;
use std::time::Instant;

use bytes::{Buf, Bytes, BytesMut};

use admission::Admission;
pub use admission::{DAEMON_MAX_CLIENT_REQUESTS, DEFAULT_MAX_IN_FLIGHT};
pub use error::{
    CallError, ConnectionError, ErrorPredicates, ProtocolViolation, StreamError, StreamMisuse,
};
pub use keepalive::KeepaliveConfig;
use keepalive::{Keepalive, KeepaliveAction};
use serials::{SerialMap, SerialSet};
use stream::{Phase, Stream};
pub use stream::{StreamItem, StreamMut};
pub use subscriptions::SubscriberId;
use subscriptions::{Call, CallKind, Subscriptions};
pub use transmit::{BATCH_MAX, CALLER_WRITE_MAX, Transmit, WriteTurn, Writer};
use transmit::{Queued, SendQueue};

use crate::proto::error::WireError;
use crate::proto::events::{self, EventKind};
use crate::proto::limits::MESSAGE_NUM_FDS_MAX;
use crate::proto::procs::common::{CallbackIdArgs, CallbackIdRet};
use crate::proto::{
    self, KEEPALIVE_PING, KEEPALIVE_PONG, KEEPALIVE_PROGRAM, Procedure, RemoteError, header,
};
use crate::wire::frame::{
    self, Frame, FrameError, Header, MessageStatus, MessageType, UPLOAD_CHUNK_DEFAULT,
};
use crate::wire::packet::{encode_packet, encode_packet_fds};
use crate::wire::xdr::{self, Decode, Encode, EncodeError, Preencoded};

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
    /// At most this many calls on the wire unanswered (default [`DEFAULT_MAX_IN_FLIGHT`],
    /// one under libvirtd's default `max_client_requests`); calls beyond it wait in the core,
    /// in order, and go out as replies come in ([`admission`]). Set it under the daemon's
    /// `max_client_requests` when that was lowered; `None`: no cap (a daemon whose limit is
    /// reached stops reading, keepalive answers included, and drops the connection).
    pub max_in_flight: Option<NonZeroUsize>,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            keepalive: Some(KeepaliveConfig::default()),
            stream_window: 4 << 20,
            stream_chunk: UPLOAD_CHUNK_DEFAULT,
            max_in_flight: Some(DEFAULT_MAX_IN_FLIGHT),
        }
    }
}

/// Identifies a stream: the serial of the call that opened it.
pub type StreamId = u32;

/// What the connection tells its driver.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
#[allow(
    clippy::large_enum_variant,
    reason = "an output is moved once, from the core's queue to the driver; the event is the \
              payload of most outputs on a watched connection, and boxing it would cost an \
              allocation per event (the variant only stands out since errors got boxed)"
)]
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
    /// Download items are queued: see [`StreamMut::recv`].
    StreamReadable(StreamId),
    /// The stream reached a terminal state: see [`StreamMut::take_end`].
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
    /// Events that decoded but that no subscription receives: those of a registration made
    /// by hand (a raw or typed register call, not `subscribe*`), and late ones of a
    /// subscription already gone. (The close notice is not counted.)
    pub unrouted_events: u64,
    /// Stream packets for streams that had already ended (dropped).
    pub stragglers: u64,
    /// Replies that arrived after their call was forgotten (dropped).
    pub late_replies: u64,
    /// Calls that waited in the core because [`Config::max_in_flight`] calls were on the
    /// wire unanswered.
    pub calls_held: u64,
}

#[derive(Debug)]
struct PendingCall {
    program: u32,
    procedure: i32,
    deadline: Option<Instant>,
    /// Made on the descriptor path: its reply may carry descriptors, to be kept.
    fds_reply: bool,
}

/// A `REPLY_WITH_FDS` packet waiting for the bytes that carry its descriptors.
#[derive(Debug)]
struct FdReply {
    header: Header,
    /// The payload after the count word.
    payload: Bytes,
    /// Descriptor bytes still to come.
    left: usize,
    fds: Vec<OwnedFd>,
    /// The call asked for descriptors: missing ones are a violation (for any other reply
    /// they are dropped anyway).
    wanted: bool,
}

/// The libvirt client-side protocol state machine. See the [module docs](self).
#[derive(Debug)]
pub struct Connection {
    config: Config,
    error: Option<ConnectionError>,
    closed_reported: bool,
    next_serial: u32,
    calls: SerialMap<u32, PendingCall>,
    abandoned: SerialSet<u32>,
    deadlines: BTreeSet<(Instant, u32)>,
    streams: SerialMap<u32, Stream>,
    /// What is queued to send, and who writes it next.
    sendq: SendQueue,
    /// Calls on the wire unanswered, and those held back by the cap.
    admission: Admission,
    outputs: VecDeque<Output>,
    keepalive: Keepalive,
    stats: Stats,
    /// `CONNECT_CLOSE` was sent: the daemon's EOF that follows is our own doing.
    closing: bool,
    subscriptions: Subscriptions,
    /// The transport carries descriptors ([`set_fd_passing`](Self::set_fd_passing)).
    fd_passing: bool,
    /// Pending calls made on the descriptor path.
    fd_calls: usize,
    /// Descriptors received and not yet matched to a descriptor byte, in arrival order.
    rx_fds: VecDeque<OwnedFd>,
    /// A `REPLY_WITH_FDS` whose descriptor bytes have not all arrived.
    fd_reply: Option<FdReply>,
    /// Descriptors of completed replies, until [`take_reply_fds`](Self::take_reply_fds).
    reply_fds: SerialMap<u32, Vec<OwnedFd>>,
    /// Where packets are encoded, then split off (`encode_packet_fds`). Empty between
    /// encodes.
    wbuf: BytesMut,
}

impl Connection {
    /// A fresh connection; `now` starts the keepalive clock.
    pub fn new(config: Config, now: Instant) -> Self {
        let keepalive = Keepalive::new(config.keepalive, now);
        let admission = Admission::new(config.max_in_flight);
        Self {
            config,
            error: None,
            closed_reported: false,
            next_serial: 0,
            calls: SerialMap::default(),
            abandoned: SerialSet::default(),
            deadlines: BTreeSet::new(),
            streams: SerialMap::default(),
            sendq: SendQueue::default(),
            admission,
            outputs: VecDeque::new(),
            keepalive,
            stats: Stats::default(),
            closing: false,
            subscriptions: Subscriptions::default(),
            fd_passing: false,
            fd_calls: 0,
            rx_fds: VecDeque::new(),
            fd_reply: None,
            reply_fds: SerialMap::default(),
            wbuf: BytesMut::new(),
        }
    }

    // ---- getters ------------------------------------------------------------------------

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
                .all(|s| s.is_detached() || s.rx_bytes < self.config.stream_window.max(1))
    }

    /// Bytes queued for sending and not yet taken by [`poll_transmit`](Self::poll_transmit).
    pub fn transmit_queued(&self) -> usize {
        self.sendq.bytes()
    }

    /// Calls waiting for a reply (the connection's own event registration calls included),
    /// held ones too.
    pub fn pending_calls(&self) -> usize {
        self.calls.len()
    }

    /// Calls (and stream opening calls) sent, or queued to send, whose REPLY has not come:
    /// at most [`Config::max_in_flight`]. Forgotten calls count until their late reply.
    pub fn calls_in_flight(&self) -> usize {
        self.admission.in_flight()
    }

    /// Calls waiting in the core for one of the [`Config::max_in_flight`] slots.
    pub fn calls_held(&self) -> usize {
        self.admission.held()
    }

    /// True while call (or stream opening call) `serial` waits in the core for a slot.
    pub fn call_held(&self, serial: u32) -> bool {
        self.admission.is_held(serial)
    }

    /// Streams not yet collected (live, or ended and not yet reported via
    /// [`take_end`](StreamMut::take_end)).
    pub fn stream_count(&self) -> usize {
        self.streams.len()
    }

    /// True when the transport carries descriptors ([`set_fd_passing`](Self::set_fd_passing)).
    pub fn fd_passing(&self) -> bool {
        self.fd_passing
    }

    /// True while a reply may bring descriptors (a call made with
    /// [`call_raw_with_fds`](Self::call_raw_with_fds) is pending, or a `REPLY_WITH_FDS`
    /// waits for its descriptor bytes): the driver must read with `recvmsg` and hand what
    /// arrives to [`handle_fds`](Self::handle_fds). Otherwise a plain read will do (the
    /// kernel closes descriptors nobody asked for).
    pub fn wants_fds(&self) -> bool {
        self.fd_calls > 0 || self.fd_reply.is_some()
    }

    /// Counters.
    pub fn stats(&self) -> Stats {
        Stats {
            packets_out: self.sendq.packets_out,
            calls_held: self.admission.held_total,
            ..self.stats
        }
    }

    /// The keepalive settings in force.
    pub fn keepalive(&self) -> Option<KeepaliveConfig> {
        self.keepalive.config()
    }

    // ---- outputs ------------------------------------------------------------------------

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
        let o = self.outputs.pop_front()?;
        if matches!(o, Output::CallDone { .. }) {
            self.caller_woken();
        }
        Some(o)
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
        let mut starved = false;
        while self.wants_read() {
            if self.fd_reply.is_some() {
                match self.take_fd_bytes(buf) {
                    Ok(true) => {}
                    Ok(false) => {
                        starved = true;
                        break;
                    }
                    Err(v) => self.fail(v.into()),
                }
                self.check()?;
                continue;
            }
            match frame::decode(buf) {
                Ok(Some(f)) => {
                    self.stats.packets_in += 1;
                    self.keepalive.on_receive(now);
                    if let Err(v) = self.handle_frame(f) {
                        self.fail(v.into());
                    }
                    self.check()?;
                }
                Ok(None) => {
                    starved = true;
                    break;
                }
                Err(e) => {
                    self.fail(ProtocolViolation::Frame(e).into());
                    return self.check();
                }
            }
        }
        // Every byte that can be read was: a descriptor left over came with no descriptor
        // byte of a `*_WITH_FDS` message.
        if starved && self.fd_reply.is_none() && !self.rx_fds.is_empty() {
            let count = self.rx_fds.len();
            self.fail(ProtocolViolation::StrayFds { count }.into());
            return self.check();
        }
        Ok(())
    }

    /// Descriptors the transport received (`SCM_RIGHTS`), in arrival order. Hand them over
    /// before the bytes they arrived with go to [`handle_input`](Self::handle_input): each
    /// belongs to one descriptor byte after a `REPLY_WITH_FDS` packet. Dropped (closed) once
    /// the connection is dead.
    pub fn handle_fds(&mut self, fds: impl IntoIterator<Item = OwnedFd>) {
        if self.error.is_none() {
            self.rx_fds.extend(fds);
        }
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
            if self.remove_call(serial).is_some() {
                self.abandon(serial);
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
        let (serial, packet) = self.encode_call::<CallError>(program, procedure, args)?;
        self.queue_call(serial, Queued::packet(packet));
        self.insert_call(serial, program, procedure, deadline, false);
        Ok(serial)
    }

    /// [`call_raw`](Self::call_raw) on the descriptor path: `fds` travel with the call
    /// (`CALL_WITH_FDS`; a plain `CALL` when empty), and the descriptors of its reply
    /// (`REPLY_WITH_FDS`) are kept for [`take_reply_fds`](Self::take_reply_fds). Refused
    /// before anything is queued when the transport cannot carry descriptors
    /// ([`CallError::FdPassingUnavailable`]) or there are more than
    /// [`MESSAGE_NUM_FDS_MAX`] ([`CallError::TooManyFds`]); the descriptors are then
    /// closed.
    pub fn call_raw_with_fds(
        &mut self,
        program: u32,
        procedure: i32,
        args: &(impl Encode + ?Sized),
        fds: Vec<OwnedFd>,
        deadline: Option<Instant>,
    ) -> Result<u32, CallError> {
        self.check()?;
        if !self.fd_passing {
            let procedure = proto::procs::lookup(program, procedure).map_or("raw", |p| p.name);
            return Err(CallError::FdPassingUnavailable { procedure });
        }
        if fds.len() > MESSAGE_NUM_FDS_MAX {
            return Err(CallError::TooManyFds {
                count: fds.len(),
                max: MESSAGE_NUM_FDS_MAX,
            });
        }
        let serial = self.alloc_serial();
        let kind = if fds.is_empty() {
            MessageType::Call
        } else {
            MessageType::CallWithFds
        };
        let h = header(program, procedure, serial, kind, MessageStatus::Ok);
        let nfds = (!fds.is_empty()).then_some(fds.len() as u32);
        let head = encode_packet_fds::<CallError>(&mut self.wbuf, &h, nfds, args)?;
        self.queue_call(serial, Queued::with_fds(head, fds));
        self.insert_call(serial, program, procedure, deadline, true);
        Ok(serial)
    }

    /// [`call_raw_with_fds`](Self::call_raw_with_fds) of a typed procedure whose row has the
    /// `fds` column (a compile-time check).
    pub fn call_with_fds<P: Procedure>(
        &mut self,
        args: &P::Args,
        fds: Vec<OwnedFd>,
        deadline: Option<Instant>,
    ) -> Result<u32, CallError> {
        const {
            assert!(
                P::FDS.is_some(),
                "call_with_fds: the procedure passes no descriptors"
            );
        };
        self.call_raw_with_fds(P::PROGRAM, P::NUMBER, args, fds, deadline)
    }

    /// The descriptors that came with call `serial`'s reply, once [`Output::CallDone`] said
    /// it completed (empty for a call that got none). Only calls made on the descriptor
    /// path keep theirs, until taken (even after the connection died: the call had
    /// succeeded) or the connection is dropped; they are closed when dropped.
    pub fn take_reply_fds(&mut self, serial: u32) -> Vec<OwnedFd> {
        self.reply_fds.remove(&serial).unwrap_or_default()
    }

    /// The transport can carry descriptors (a unix socket): calls on the descriptor path
    /// are allowed. Off by default; the client turns it on for unix sockets.
    pub fn set_fd_passing(&mut self, on: bool) {
        self.fd_passing = on;
    }

    /// Queue a call of a typed procedure ([`call_raw`](Self::call_raw) with its numbers).
    /// A procedure that passes file descriptors is refused with
    /// [`CallError::NeedsFdPassing`] before anything is queued: use
    /// [`call_with_fds`](Self::call_with_fds).
    pub fn call<P: Procedure>(
        &mut self,
        args: &P::Args,
        deadline: Option<Instant>,
    ) -> Result<u32, CallError> {
        P::refuse_fds()?;
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
        self.reply_fds.remove(&serial);
        if let Some(c) = self.remove_call(serial) {
            if let Some(d) = c.deadline {
                self.deadlines.remove(&(d, serial));
            }
            self.abandon(serial);
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
        self.subscribe_with(K::KIND, &K::register_args(event_id, object))
    }

    /// Subscribe to the QEMU program's monitor events
    /// ([`QemuConnectDomainMonitorEventRegister`](crate::proto::procs::qemu::QemuConnectDomainMonitorEventRegister)):
    /// one domain or all, one QMP event name (or all; a pattern with
    /// [`QemuMonitorEventRegisterFlags`](crate::proto::procs::qemu::QemuMonitorEventRegisterFlags) bits). Delivered
    /// as [`Output::Event`]s of [`Event::QemuMonitor`](events::Event::QemuMonitor), shared
    /// like [`subscribe`](Self::subscribe)'s.
    ///
    /// Every event (`event` `None`) is registered as the pattern `""` with
    /// [`REGEX`](crate::proto::procs::qemu::QemuMonitorEventRegisterFlags::REGEX), which
    /// matches every name: libvirtd checks an *unfiltered* registration for duplicates
    /// against every registration of the same domain (or of all domains) on the connection,
    /// filtered ones included, so "every event of `dom`" next to "STOP of `dom`" — or
    /// right after its deregistration, before the daemon processed it — would be refused
    /// with "event callback already tracked". A filtered registration is never checked.
    pub fn subscribe_qemu_monitor(
        &mut self,
        dom: Option<proto::types::NonnullDomain>,
        event: Option<&str>,
        flags: u32,
    ) -> Result<SubscriberId, CallError> {
        use proto::procs::qemu::QemuMonitorEventRegisterFlags as F;
        let (event, flags) = match event {
            Some(e) => (e, F::from_bits_retain(flags)),
            None => ("", F::from_bits_retain(flags) | F::REGEX),
        };
        let args = proto::procs::qemu::QemuConnectDomainMonitorEventRegisterArgs {
            dom,
            event: Some(event.into()),
            flags,
        };
        self.subscribe_with(events::Kind::QemuMonitor, &args)
    }

    /// Subscribe through the legacy domain event registration
    /// ([`ConnectDomainEventRegister`](crate::proto::procs::connect::ConnectDomainEventRegister)):
    /// lifecycle events of every domain, as [`Event::DomainLegacy`](events::Event::DomainLegacy)
    /// (no callback id). One daemon registration per connection, shared by every such
    /// subscriber; the last one out deregisters it.
    pub fn subscribe_domain_legacy(&mut self) -> Result<SubscriberId, CallError> {
        self.subscribe_with(events::Kind::DomainLegacy, &())
    }

    /// Subscribe through the legacy any-registration
    /// ([`ConnectDomainEventRegisterAny`](crate::proto::procs::connect::ConnectDomainEventRegisterAny))
    /// of event id `event_id`: that event of every domain, as
    /// [`Event::DomainLegacy`](events::Event::DomainLegacy). Only ids 0 to 15 have legacy
    /// messages (libvirtd refuses later ones). One daemon registration per event id,
    /// shared; the subscription's "callback id" is the event id (the void reply names none).
    pub fn subscribe_domain_legacy_any(
        &mut self,
        event_id: i32,
    ) -> Result<SubscriberId, CallError> {
        self.subscribe_with(
            events::Kind::DomainLegacyAny,
            &proto::procs::connect::ConnectDomainEventRegisterAnyArgs { event_id },
        )
    }

    fn subscribe_with(
        &mut self,
        kind: events::Kind,
        args: &(impl Encode + ?Sized),
    ) -> Result<SubscriberId, CallError> {
        let key = xdr::to_bytes(args)?;
        self.check()?;
        let sub = self.subscriptions.subscribe(kind, key, &mut self.outputs);
        self.send_subscription_calls();
        Ok(sub)
    }

    /// A subscriber left: it gets no more events, and the daemon registration ends with its
    /// last subscriber. Unknown (or already failed) subscribers are ignored.
    pub fn unsubscribe(&mut self, subscriber: SubscriberId) {
        if self.error.is_some() {
            self.subscriptions.forget_lost(subscriber);
            return;
        }
        self.subscriptions.unsubscribe(subscriber);
        self.send_subscription_calls();
    }

    // ---- the next generation (reconnect) -------------------------------------------------

    /// A fresh connection to replace this one once it is dead (a reconnecting client dials a
    /// new transport and runs its handshake on the successor). It continues this one's
    /// serials, so a late command of a caller of the dead generation (a dropped call's
    /// `forget_call`, a stream handle's `forget`) can never name a call of the new one; it
    /// takes over the streams that ended with this one and whose handles have not read their
    /// end yet (they read the same typed error there); and it holds the event registrations
    /// this one had active, with their subscribers, until [`resubscribe`](Self::resubscribe).
    /// Returns `None` while this connection is alive.
    pub fn successor(&mut self, now: Instant) -> Option<Connection> {
        self.error.as_ref()?;
        let mut next = Connection::new(self.config.clone(), now);
        next.next_serial = self.next_serial;
        next.subscriptions = self.subscriptions.successor();
        for (id, s) in self.streams.drain() {
            if s.is_done() {
                next.streams.insert(id, s);
            }
        }
        Some(next)
    }

    /// Register again, on this successor, the event registrations its predecessor had active
    /// ([`successor`](Self::successor)); call it once the handshake is done. Each subscriber
    /// then gets one [`Output::SubscriptionDone`] (the new callback id, or the daemon's
    /// refusal), and its events follow.
    pub fn resubscribe(&mut self) {
        if self.error.is_some() {
            return;
        }
        self.subscriptions.restore();
        self.send_subscription_calls();
    }

    /// Registrations held for [`resubscribe`](Self::resubscribe).
    pub fn lost_registrations(&self) -> usize {
        self.subscriptions.lost_count()
    }

    // ---- internals ----------------------------------------------------------------------

    fn check(&self) -> Result<(), ConnectionError> {
        self.error.clone().map_or(Ok(()), Err)
    }

    fn insert_call(
        &mut self,
        serial: u32,
        program: u32,
        procedure: i32,
        deadline: Option<Instant>,
        fds_reply: bool,
    ) {
        self.fd_calls += usize::from(fds_reply);
        self.calls.insert(
            serial,
            PendingCall {
                program,
                procedure,
                deadline,
                fds_reply,
            },
        );
        if let Some(d) = deadline {
            self.deadlines.insert((d, serial));
        }
    }

    fn remove_call(&mut self, serial: u32) -> Option<PendingCall> {
        let c = self.calls.remove(&serial)?;
        self.fd_calls -= usize::from(c.fds_reply);
        Some(c)
    }

    /// Consume the descriptor bytes of the pending `REPLY_WITH_FDS`, one descriptor each;
    /// once all came, handle the reply. `Ok(false)`: more bytes are needed.
    fn take_fd_bytes(&mut self, buf: &mut BytesMut) -> Result<bool, ProtocolViolation> {
        let p = self
            .fd_reply
            .as_mut()
            .expect("a reply waits for descriptors");
        while p.left > 0 {
            if buf.is_empty() {
                return Ok(false);
            }
            buf.advance(1);
            p.left -= 1;
            match self.rx_fds.pop_front() {
                Some(fd) => p.fds.push(fd),
                None if p.wanted => {
                    return Err(ProtocolViolation::MissingFds {
                        serial: p.header.serial,
                    });
                }
                // Nobody asked for them: a plain read let the kernel close them.
                None => {}
            }
        }
        let p = self.fd_reply.take().expect("checked");
        self.handle_reply(p.header, p.payload, p.fds)?;
        Ok(true)
    }

    /// A `REPLY_WITH_FDS` packet: its count word, then (unless zero) wait for the bytes
    /// that carry the descriptors.
    fn begin_fd_reply(&mut self, h: Header, mut payload: Bytes) -> Result<(), ProtocolViolation> {
        let bad = |count| ProtocolViolation::BadFdCount {
            kind: h.kind,
            serial: h.serial,
            count,
            max: MESSAGE_NUM_FDS_MAX,
        };
        if payload.len() < 4 {
            return Err(bad(None));
        }
        let count = payload.get_u32();
        if count as usize > MESSAGE_NUM_FDS_MAX {
            return Err(bad(Some(count)));
        }
        let wanted = self.calls.get(&h.serial).is_some_and(|c| c.fds_reply);
        if count == 0 {
            return self.handle_reply(h, payload, Vec::new());
        }
        if wanted && !self.fd_passing {
            return Err(ProtocolViolation::MissingFds { serial: h.serial });
        }
        self.fd_reply = Some(FdReply {
            header: h,
            payload,
            left: count as usize,
            fds: Vec::with_capacity(count as usize),
            wanted,
        });
        Ok(())
    }

    /// A fresh serial and the CALL packet for it (not queued yet).
    fn encode_call<E: From<EncodeError> + From<FrameError>>(
        &mut self,
        program: u32,
        procedure: i32,
        args: &(impl Encode + ?Sized),
    ) -> Result<(u32, Bytes), E> {
        let serial = self.alloc_serial();
        let call = header(
            program,
            procedure,
            serial,
            MessageType::Call,
            MessageStatus::Ok,
        );
        Ok((serial, encode_packet::<E>(&mut self.wbuf, &call, args)?))
    }

    /// Make the calls the subscription table queued.
    fn send_subscription_calls(&mut self) {
        while let Some((reg, call)) = self.subscriptions.poll_call() {
            let queued = match &call {
                Call::Register { kind, key } => {
                    self.call_raw(kind.program(), kind.register_proc(), &Preencoded(key), None)
                }
                // The legacy deregistration takes no arguments.
                Call::Deregister {
                    kind: kind @ events::Kind::DomainLegacy,
                    ..
                } => self.call_raw(kind.program(), kind.deregister_proc(), &(), None),
                // The legacy any-registration is known by its event id.
                Call::Deregister {
                    kind: kind @ events::Kind::DomainLegacyAny,
                    callback_id,
                } => self.call_raw(
                    kind.program(),
                    kind.deregister_proc(),
                    &proto::procs::connect::ConnectDomainEventRegisterAnyArgs {
                        event_id: *callback_id,
                    },
                    None,
                ),
                Call::Deregister { kind, callback_id } => self.call_raw(
                    kind.program(),
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
                && !self.admission.knows(s)
            {
                return s;
            }
        }
    }

    /// Queue call `serial`'s packet, or hold it while [`Config::max_in_flight`] calls are
    /// unanswered ([`admission`]).
    fn queue_call(&mut self, serial: u32, q: Queued) {
        if let Some(q) = self.admission.admit(serial, q) {
            self.sendq.push(q);
        }
    }

    /// A REPLY for `serial` came: if it freed a slot, send the held calls that fit now. A
    /// REPLY to a call still held (a daemon cannot have read it, but the core cannot tell
    /// it from one queued and not yet written) is taken like one to a call queued and not
    /// yet written: the call completes, and its packet goes to the send queue now, uncounted
    /// (no slot waits for a second REPLY), ahead of anything sent on a stream it opened.
    fn call_answered(&mut self, serial: u32) {
        if self.admission.answered(serial) {
            while let Some(q) = self.admission.release() {
                self.sendq.push(q);
            }
        } else {
            self.release_named(serial);
        }
    }

    /// The daemon named `serial` (a REPLY, or a stream packet before the open REPLY): if that
    /// call is still held (a daemon cannot know it; the core cannot tell it from a call
    /// queued and not yet written), its packet goes to the send queue now, uncounted, so that
    /// it stays ahead of anything sent in answer (a stream's abort).
    fn release_named(&mut self, serial: u32) {
        if let Some(q) = self.admission.take_held(serial) {
            self.sendq.push(q);
        }
    }

    /// Nobody waits for call `serial` any more: a held call is dropped unsent; one on the
    /// wire has its late reply discarded.
    fn abandon(&mut self, serial: u32) {
        if !self.admission.unhold(serial) {
            self.abandoned.insert(serial);
        }
    }

    fn queue_keepalive(&mut self, procedure: i32) {
        let h = header(
            KEEPALIVE_PROGRAM,
            procedure,
            0,
            MessageType::Message,
            MessageStatus::Ok,
        );
        let head = frame::encode_head(&h, 0).expect("tiny packet");
        // Keepalive jumps the queue (between whole packets) so a long upload cannot delay it.
        self.sendq.push_urgent(head, procedure == KEEPALIVE_PONG);
    }

    /// Mark dead, complete everything pending with the error, and say so once.
    fn fail(&mut self, e: ConnectionError) {
        if self.error.is_some() {
            return;
        }
        self.error = Some(e.clone());
        self.sendq.clear();
        self.admission.clear();
        self.deadlines.clear();
        // Every descriptor of an unfinished reply is closed with the connection. Those of
        // replies already completed (`CallDone` emitted) stay for `take_reply_fds`: the call
        // succeeded, and its result is the reply with its descriptors.
        self.rx_fds.clear();
        self.fd_reply = None;
        self.fd_calls = 0;
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
            if s.is_detached() {
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
        let Some(version) = proto::program_version(h.program) else {
            return Err(ProtocolViolation::UnknownProgram {
                program: h.program,
                kind: h.kind,
            });
        };
        if h.version != version {
            return Err(ProtocolViolation::BadVersion {
                program: h.program,
                version: h.version,
            });
        }
        match h.kind {
            MessageType::Reply | MessageType::ReplyWithFds => self.call_answered(h.serial),
            MessageType::Stream | MessageType::StreamHole => self.release_named(h.serial),
            MessageType::Call | MessageType::CallWithFds | MessageType::Message => {}
        }
        match h.kind {
            MessageType::Reply => self.handle_reply(h, f.payload, Vec::new()),
            MessageType::ReplyWithFds => self.begin_fd_reply(h, f.payload),
            MessageType::Message => {
                self.handle_message(h, f.payload);
                Ok(())
            }
            MessageType::Stream | MessageType::StreamHole => {
                self.handle_stream_packet(h, f.payload)
            }
            MessageType::Call | MessageType::CallWithFds => {
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

    /// A reply, with the descriptors that came with it (if it was a `REPLY_WITH_FDS`): kept
    /// for a successful call on the descriptor path, dropped (closed) otherwise.
    fn handle_reply(
        &mut self,
        h: Header,
        payload: Bytes,
        fds: Vec<OwnedFd>,
    ) -> Result<(), ProtocolViolation> {
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
                MessageStatus::Error => Err(CallError::from(Self::decode_error(&h, payload)?)),
                _ => Ok(payload),
            };
            let call = self.remove_call(h.serial).expect("present");
            if let Some(d) = call.deadline {
                self.deadlines.remove(&(d, h.serial));
            }
            if call.fds_reply && result.is_ok() && !fds.is_empty() {
                self.reply_fds.insert(h.serial, fds);
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
                // The legacy any-registration's reply is void: it stands for its event id.
                let legacy_any =
                    match self.subscriptions.register_call(h.serial) {
                        Some((events::Kind::DomainLegacyAny, key)) => Some(
                            xdr::from_bytes::<
                                proto::procs::connect::ConnectDomainEventRegisterAnyArgs,
                            >(key.clone())
                            .expect("a key we encoded")
                            .event_id,
                        ),
                        _ => None,
                    };
                // The legacy registration's reply counts callbacks; it stands for
                // LIFECYCLE, like the any-registration of that id it also serves.
                let legacy = matches!(
                    self.subscriptions.register_call(h.serial),
                    Some((events::Kind::DomainLegacy, _))
                );
                let result = match (result, legacy_any) {
                    (Ok(payload), Some(event_id)) => {
                        parse_ret::<()>(h.procedure, h.serial, payload)?;
                        Ok(event_id)
                    }
                    (Ok(payload), None) if legacy => {
                        parse_ret::<CallbackIdRet>(h.procedure, h.serial, payload)?;
                        Ok(events::event_id::LIFECYCLE)
                    }
                    (Ok(payload), None) => {
                        Ok(parse_ret::<CallbackIdRet>(h.procedure, h.serial, payload)?.callback_id)
                    }
                    (Err(e), _) => Err(e),
                };
                self.subscriptions
                    .registered(h.serial, result, &mut self.outputs);
            }
            CallKind::Deregister => self.subscriptions.deregistered(h.serial),
        }
        self.send_subscription_calls();
        Ok(())
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
        match events::decode_message(h.program, h.procedure, payload) {
            Ok(Some(event)) => {
                let subscribers = self.subscriptions.route(&event);
                if subscribers.is_empty()
                    && !matches!(event, events::Event::ConnectionClosed { .. })
                {
                    self.stats.unrouted_events += 1;
                }
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

#[cfg(test)]
mod encode_buffer_tests {
    use super::*;
    use crate::proto::procs::common::NameArgs;
    use crate::proto::procs::connect::ConnectGetLibVersion;
    use crate::proto::procs::domain::DomainLookupByName;

    /// Packets are encoded in one shared buffer: a call whose arguments fail to encode
    /// must leave nothing there for the next call's packet to carry.
    #[test]
    fn a_call_that_fails_to_encode_leaves_nothing_for_the_next_packet() {
        let mut c = Connection::new(Config::default(), Instant::now());
        let too_long = NameArgs {
            name: "x".repeat(xdr::STRING_MAX + 1).into(),
        };
        let r = c.call::<DomainLookupByName>(&too_long, None);
        assert!(matches!(r, Err(CallError::Encode(_))), "{r:?}");
        assert!(
            c.poll_transmit().is_none(),
            "nothing queued for the failed call"
        );
        let serial = c.call::<ConnectGetLibVersion>(&(), None).unwrap();
        let t = c.poll_transmit().expect("the call's packet");
        assert_eq!(
            t.head.len(),
            frame::MIN_FRAME_LEN,
            "header only, no leftovers"
        );
        let mut buf = BytesMut::from(&t.head[..]);
        let f = frame::decode(&mut buf).unwrap().expect("one whole packet");
        assert_eq!(f.header.procedure, ConnectGetLibVersion::NUMBER);
        assert_eq!(f.header.serial, serial);
        assert!(buf.is_empty());
    }

    /// No cap on calls in flight: every call is queued at once.
    fn uncapped() -> Connection {
        let config = Config {
            max_in_flight: None,
            ..Config::default()
        };
        Connection::new(config, Instant::now())
    }

    /// Calls queued while earlier packets are still unsent (calls in flight) are encoded
    /// one after the other in the same allocation, not each in a new buffer.
    #[test]
    fn queued_calls_share_one_encode_buffer() {
        let mut c = uncapped();
        for _ in 0..100 {
            c.call::<ConnectGetLibVersion>(&(), None).unwrap();
        }
        let heads: Vec<Bytes> = std::iter::from_fn(|| c.poll_transmit().map(|t| t.head)).collect();
        assert_eq!(heads.len(), 100);
        let adjacent = heads
            .windows(2)
            .filter(|w| w[0].as_ptr() as usize + w[0].len() == w[1].as_ptr() as usize)
            .count();
        assert!(
            adjacent >= 98,
            "only {adjacent} of 99 queued packets follow the one before in the encode buffer: \
             the buffer was reallocated for the others"
        );
    }

    /// Consecutive packets split off the shared buffer each keep their own bytes.
    #[test]
    fn packets_split_off_the_encode_buffer_stay_intact() {
        let mut c = uncapped();
        let names: Vec<String> = (0..200).map(|i| format!("domain-{i}")).collect();
        for n in &names {
            c.call::<DomainLookupByName>(
                &NameArgs {
                    name: n.clone().into(),
                },
                None,
            )
            .unwrap();
        }
        let mut seen = 0;
        while let Some(t) = c.poll_transmit() {
            let mut buf = BytesMut::from(&t.head[..]);
            let f = frame::decode(&mut buf).unwrap().expect("one whole packet");
            let args: NameArgs = xdr::from_bytes(f.payload).unwrap();
            assert_eq!(args.name.as_bytes(), names[seen].as_bytes());
            seen += 1;
        }
        assert_eq!(seen, names.len());
    }
}
