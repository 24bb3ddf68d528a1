//! The `connection` target's input: a [`Setup`], then [`Op`]s until the bytes run out (at
//! most [`MAX_OPS`]).
//!
//! **Encoding.** Each type is declared once, in an `input!` block, and that one row gives
//! both its parser ([`Field::read`]) and its writer ([`Field::write`]): adding a field or a
//! variant is one edit, and hand-built inputs are written by the code that reads them.
//! * An enum value is a tag byte naming its variant (the number in its row), then the
//!   variant's fields in order. A tag that names no variant turns the operation it sits in
//!   into nothing: the bytes read so far are skipped and the next operation starts after
//!   them. Tags are never reused, so adding a variant leaves every existing input's meaning
//!   as it was.
//! * A struct is its fields in order.
//! * Integers are little-endian, at their own width; `bool` is one byte (odd is true);
//!   `Option<T>` is a `bool`, then a `T` when true; a pair is its two items; [`RawBytes`] is
//!   a `u16` length (% 2048), then that many bytes or as many as are left.
//! * An operation cut short by the end of the input is dropped; so is everything after
//!   [`MAX_OPS`] operations. A setup that does not read is [`Setup::default`].

/// Most operations decoded from one input.
pub const MAX_OPS: usize = 256;

/// The bytes of an input being parsed.
#[derive(Debug)]
pub struct Reader<'a> {
    rest: &'a [u8],
}

impl<'a> Reader<'a> {
    /// Parse `data`.
    pub fn new(data: &'a [u8]) -> Self {
        Self { rest: data }
    }

    /// Nothing left.
    pub fn is_empty(&self) -> bool {
        self.rest.is_empty()
    }

    /// The next `n` bytes; `None` (and nothing left) when fewer remain.
    pub fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        if self.rest.len() < n {
            self.rest = &[];
            return None;
        }
        let (head, tail) = self.rest.split_at(n);
        self.rest = tail;
        Some(head)
    }

    /// The next `n` bytes, or all that is left when fewer remain.
    pub fn take_up_to(&mut self, n: usize) -> &'a [u8] {
        let n = n.min(self.rest.len());
        let (head, tail) = self.rest.split_at(n);
        self.rest = tail;
        head
    }

    fn array<const N: usize>(&mut self) -> Option<[u8; N]> {
        self.take(N).map(|b| b.try_into().expect("N bytes"))
    }
}

/// A value of the input: parsed and written by the same declaration.
pub trait Field: Sized {
    /// Parse one value; `None` at the end of the input or on a tag that names no variant.
    fn read(r: &mut Reader<'_>) -> Option<Self>;
    /// Append the bytes [`read`](Self::read) turns into exactly `self`.
    fn write(&self, out: &mut Vec<u8>);
}

macro_rules! int_fields {
    ($($t:ty),*) => {$(
        impl Field for $t {
            fn read(r: &mut Reader<'_>) -> Option<Self> {
                r.array().map(<$t>::from_le_bytes)
            }
            fn write(&self, out: &mut Vec<u8>) {
                out.extend_from_slice(&self.to_le_bytes());
            }
        }
    )*};
}

int_fields!(u8, u16, u32, u64, i8, i32, i64);

impl Field for bool {
    fn read(r: &mut Reader<'_>) -> Option<Self> {
        u8::read(r).map(|b| b & 1 == 1)
    }
    fn write(&self, out: &mut Vec<u8>) {
        out.push(u8::from(*self));
    }
}

impl<T: Field> Field for Option<T> {
    fn read(r: &mut Reader<'_>) -> Option<Self> {
        if bool::read(r)? {
            T::read(r).map(Some)
        } else {
            Some(None)
        }
    }
    fn write(&self, out: &mut Vec<u8>) {
        self.is_some().write(out);
        if let Some(v) = self {
            v.write(out);
        }
    }
}

impl<A: Field, B: Field> Field for (A, B) {
    fn read(r: &mut Reader<'_>) -> Option<Self> {
        Some((A::read(r)?, B::read(r)?))
    }
    fn write(&self, out: &mut Vec<u8>) {
        self.0.write(out);
        self.1.write(out);
    }
}

/// Raw bytes from the daemon (at most 2047).
#[derive(Clone, PartialEq, Eq)]
pub struct RawBytes(pub Vec<u8>);

impl std::fmt::Debug for RawBytes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "RawBytes({} bytes)", self.0.len())
    }
}

impl Field for RawBytes {
    fn read(r: &mut Reader<'_>) -> Option<Self> {
        let len = u16::read(r)? % 2048;
        Some(Self(r.take_up_to(usize::from(len)).to_vec()))
    }
    fn write(&self, out: &mut Vec<u8>) {
        let len = u16::try_from(self.0.len())
            .ok()
            .filter(|n| *n < 2048)
            .expect("raw bytes are shorter than 2048");
        len.write(out);
        out.extend_from_slice(&self.0);
    }
}

/// Declares input types: the Rust type, and its [`Field`] impl from the same rows.
///
/// ```text
/// input! {
///     /// doc
///     pub struct Name { /// doc
///                       pub field: Type, ... }
/// }
/// input! {
///     /// doc
///     pub enum Name { /// doc
///                     Variant = 0 { /// doc
///                                   field: Type, ... },
///                     Unit = 1, ... }
/// }
/// ```
macro_rules! input {
    (
        $(#[$m:meta])*
        pub struct $name:ident {
            $( $(#[$fm:meta])* pub $f:ident : $t:ty ),* $(,)?
        }
    ) => {
        $(#[$m])*
        #[derive(Debug, Clone, PartialEq, Eq)]
        pub struct $name {
            $( $(#[$fm])* pub $f: $t, )*
        }

        impl Field for $name {
            fn read(r: &mut Reader<'_>) -> Option<Self> {
                Some(Self { $( $f: Field::read(r)?, )* })
            }
            fn write(&self, out: &mut Vec<u8>) {
                $( self.$f.write(out); )*
            }
        }
    };
    (
        $(#[$m:meta])*
        pub enum $name:ident {
            $(
                $(#[$vm:meta])*
                $var:ident = $tag:literal $({ $( $(#[$fm:meta])* $f:ident : $t:ty ),* $(,)? })?
            ),* $(,)?
        }
    ) => {
        $(#[$m])*
        #[derive(Debug, Clone, PartialEq, Eq)]
        pub enum $name {
            $( $(#[$vm])* $var $({ $( $(#[$fm])* $f: $t, )* })?, )*
        }

        impl Field for $name {
            fn read(r: &mut Reader<'_>) -> Option<Self> {
                match u8::read(r)? {
                    $( $tag => Some(Self::$var $({ $( $f: Field::read(r)?, )* })?), )*
                    _ => None,
                }
            }
            fn write(&self, out: &mut Vec<u8>) {
                match self {
                    $(
                        Self::$var $({ $( $f, )* })? => {
                            out.push($tag);
                            $($( $f.write(out); )*)?
                        }
                    )*
                }
            }
        }
    };
}

input! {
    /// Connection settings.
    pub struct Setup {
        /// Keepalive: (interval in seconds % 16, count % 8).
        pub keepalive: Option<(u8, u8)>,
        /// Download window: 1 + bytes % 1 MiB (a window of 0 stops all reading once any
        /// stream exists, uploads included). Bits 20–22: the cap on calls in flight
        /// (`Config::max_in_flight`; 0: none).
        pub window: u32,
        /// Upload chunk size.
        pub chunk: Chunk,
    }
}

impl Default for Setup {
    fn default() -> Self {
        Self {
            keepalive: None,
            window: 0,
            chunk: Chunk::Tiny,
        }
    }
}

input! {
    /// Upload chunk sizes.
    pub enum Chunk {
        /// 64 bytes.
        Tiny = 0,
        /// 1000 bytes (not a multiple of 4).
        Odd = 1,
        /// 4 KiB.
        Page = 2,
        /// virsh's 262,120 bytes.
        Virsh = 3,
    }
}

input! {
    /// One thing that happens to the connection. `u8` picks select a call or stream of the
    /// model by index (255: an id nobody opened).
    pub enum Op {
        /// `call_raw` with `args_len` bytes of arguments and an optional deadline in ms.
        Call = 0 {
            /// Index into [`CALL_PROCS`](super::CALL_PROCS).
            procedure: u8,
            /// Argument bytes.
            args_len: u8,
            /// Deadline, ms from now.
            deadline_ms: Option<u16>,
        },
        /// `open_stream_raw` for an upload (208) or download (209).
        OpenStream = 1 {
            /// Upload or download.
            upload: bool,
            /// Opened sparse.
            sparse: bool,
        },
        /// `stream(id).send` of `len` patterned bytes.
        Send = 2 {
            /// Stream pick.
            stream: u8,
            /// Bytes.
            len: u16,
        },
        /// `stream(id).send_hole`.
        Hole = 3 {
            /// Stream pick.
            stream: u8,
            /// Hole length (may exceed `i64::MAX`).
            len: u64,
        },
        /// `stream(id).finish`.
        Finish = 4 {
            /// Stream pick.
            stream: u8,
        },
        /// `stream(id).abort`.
        Abort = 5 {
            /// Stream pick.
            stream: u8,
        },
        /// `stream(id).forget`.
        Forget = 6 {
            /// Stream pick.
            stream: u8,
        },
        /// `stream(id).recv` up to `max` items (255: all streams, everything), then read on.
        Recv = 7 {
            /// Stream pick.
            stream: u8,
            /// Items.
            max: u8,
        },
        /// `stream(id).take_end`.
        End = 8 {
            /// Stream pick.
            stream: u8,
        },
        /// `forget_call`.
        ForgetCall = 9 {
            /// Call pick.
            call: u8,
        },
        /// `decode_reply::<ConnectGetLibVersion>` on a call's reply payload.
        DecodeReply = 10 {
            /// Call pick.
            call: u8,
        },
        /// `set_keepalive`: (interval in seconds % 16, count % 8), or off.
        SetKeepalive = 11 {
            /// The new setting.
            keepalive: Option<(u8, u8)>,
        },
        /// `close`.
        Close = 12,
        /// Take up to `max` packets from `poll_transmit` (255: all) and give them to the peer.
        Transmit = 13 {
            /// Packets.
            max: u8,
        },
        /// Advance the virtual clock by `ms` (% 10 minutes); fire timers if due (or anyway
        /// when `spurious`).
        Advance = 14 {
            /// Milliseconds.
            ms: u32,
            /// Call `handle_timeout` even when nothing is due.
            spurious: bool,
        },
        /// `handle_eof`.
        Eof = 15,
        /// `handle_transport_error`.
        TransportError = 16,
        /// Raw bytes from the daemon.
        Raw = 17 {
            /// The bytes.
            bytes: RawBytes,
        },
        /// A well-formed daemon packet, delivered in two parts when `split` falls inside it.
        Server = 18 {
            /// The packet.
            packet: ServerPacket,
            /// Where to split delivery (0: whole).
            split: u16,
        },
        /// An event-subscription operation (see [`subscriptions`](super::subscriptions)).
        Sub = 19 {
            /// What happens.
            op: SubOp,
        },
        /// `set_fd_passing`: the transport carries descriptors, or not.
        FdPassing = 20 {
            /// On or off.
            on: bool,
        },
        /// `call_raw_with_fds` of a [`CALL_PROCS`](super::CALL_PROCS) pick, no arguments,
        /// with `nfds % 5` descriptors (socket pair ends; the harness keeps the peers).
        FdCall = 21 {
            /// Index into `CALL_PROCS`.
            procedure: u8,
            /// Descriptors.
            nfds: u8,
        },
        /// `handle_fds` with `n % 5` descriptors, as if the transport received them.
        Fds = 22 {
            /// Descriptors.
            n: u8,
        },
        /// `set_caller_writes`: the transport has a caller-side write path, or not.
        CallerWrites = 23 {
            /// On or off.
            on: bool,
        },
        /// A caller-side write of at most `max` bytes (`Pair::caller_write`: what a socket
        /// took), made only when the write rule says it is the caller's turn.
        CallerWrite = 24 {
            /// Bytes the socket takes.
            max: u16,
        },
        /// `handle_written`: the driver wrote everything it took.
        Written = 25,
        /// `batch_wait` before writing `held` bytes (`any`: anything at all is held).
        BatchWait = 26 {
            /// Anything held.
            any: bool,
            /// Bytes held.
            held: u16,
        },
        /// A reconnect: on a dead connection, its `successor` (checked, then `resubscribe`d;
        /// the input ends there, the model covers one generation); on a live one, `successor`
        /// must refuse.
        Successor = 27,
    }
}

input! {
    /// One subscription operation.
    pub enum SubOp {
        /// `subscribe` to event id `event_id % 3` of domains (`secret` false) or secrets, all
        /// objects.
        Subscribe = 0 {
            /// Secret events rather than domain events.
            secret: bool,
            /// Event id (mod 3: few keys, so subscribers share).
            event_id: u8,
        },
        /// `unsubscribe` a subscriber pick (255: one nobody made).
        Unsubscribe = 1 {
            /// Subscriber pick.
            sub: u8,
        },
        /// The daemon answers one of the connection's registration calls in flight (pick; a
        /// made-up serial when none): a REGISTER with callback id `callback_id % 4`, a
        /// DEREGISTER with nothing, either with an error when `refuse`.
        Answer = 2 {
            /// Call pick.
            call: u8,
            /// Callback id (mod 4: ids collide across keys and kinds).
            callback_id: u8,
            /// Answer with a `remote_error`.
            refuse: bool,
        },
        /// A lifecycle event of domains (`secret` false) or secrets for callback id
        /// `callback_id % 4`.
        Event = 3 {
            /// A secret event rather than a domain event.
            secret: bool,
            /// Callback id.
            callback_id: u8,
        },
        /// `subscribe_domain_legacy_any` of event id `event_id % 3` (lifecycle, reboot, RTC
        /// change): the legacy any-registration, answered with a void reply.
        SubscribeLegacyAny = 4 {
            /// Event id (mod 3).
            event_id: u8,
        },
        /// `subscribe_domain_legacy`: the legacy lifecycle registration.
        SubscribeLegacy = 5,
        /// A legacy domain event (no callback id) of event id `event_id % 3`: lifecycle,
        /// reboot or RTC change.
        LegacyEvent = 6 {
            /// Event id (mod 3).
            event_id: u8,
        },
    }
}

input! {
    /// A daemon packet built with the [`peer`](crate::peer), possibly with one header field
    /// changed.
    pub enum ServerPacket {
        /// REPLY to a call or stream open.
        Reply = 0 {
            /// Pick among calls (`stream` false) or streams.
            target: u8,
            /// Target a stream rather than a call.
            stream: bool,
            /// What the reply says.
            body: ReplyBody,
            /// Header change.
            tweak: Tweak,
        },
        /// STREAM CONTINUE with `len` patterned bytes (0: EOF).
        Data = 1 {
            /// Stream pick.
            stream: u8,
            /// Bytes.
            len: u16,
            /// Header change.
            tweak: Tweak,
        },
        /// `STREAM_HOLE` CONTINUE.
        Hole = 2 {
            /// Stream pick.
            stream: u8,
            /// Hole length.
            len: i64,
            /// Header change.
            tweak: Tweak,
        },
        /// STREAM OK (finish or abort confirmation).
        StreamOk = 3 {
            /// Stream pick.
            stream: u8,
            /// Header change.
            tweak: Tweak,
        },
        /// STREAM ERROR with a `remote_error`.
        StreamError = 4 {
            /// Stream pick.
            stream: u8,
            /// Error code.
            code: i8,
            /// Header change.
            tweak: Tweak,
        },
        /// A remote-program MESSAGE.
        Event = 5 {
            /// What it carries.
            body: EventBody,
        },
        /// Keepalive PING.
        Ping = 6,
        /// Keepalive PONG.
        Pong = 7,
        /// `REPLY_WITH_FDS` OK to a call pick announcing `nfds` descriptors, followed by
        /// `min(nfds, 8)` descriptor bytes; `give % 5` descriptors reach `handle_fds` just
        /// before the bytes (as a transport hands them over).
        ReplyFds = 8 {
            /// Call pick.
            target: u8,
            /// The count word.
            nfds: u8,
            /// Descriptors that arrive with it.
            give: u8,
        },
    }
}

input! {
    /// A REPLY's status and payload.
    pub enum ReplyBody {
        /// OK with `len` patterned bytes.
        Ok = 0 {
            /// Payload bytes.
            len: u8,
        },
        /// ERROR with a well-formed `remote_error`.
        Error = 1 {
            /// Error code.
            code: i8,
        },
        /// ERROR whose payload does not decode.
        BadError = 2,
    }
}

input! {
    /// One header field changed from what the protocol wants.
    pub enum Tweak {
        /// As the protocol wants.
        None = 0,
        /// Serial `XORed` with `xor`.
        Serial = 1 {
            /// Bits to flip.
            xor: u32,
        },
        /// Another procedure.
        Procedure = 2 {
            /// The procedure number.
            procedure: i32,
        },
        /// Another program: index % 5 into the known programs plus one unknown.
        Program = 3 {
            /// Index.
            index: u8,
        },
        /// Another version.
        Version = 4 {
            /// The version.
            version: u32,
        },
        /// Another status: index % 3.
        Status = 5 {
            /// Index.
            index: u8,
        },
        /// Another message type: index % 7.
        Kind = 6 {
            /// Index.
            index: u8,
        },
    }
}

input! {
    /// An event message.
    pub enum EventBody {
        /// `DOMAIN_EVENT_CALLBACK_LIFECYCLE`.
        Lifecycle = 0 {
            /// Callback id.
            callback_id: i32,
            /// Event.
            event: i32,
            /// Detail.
            detail: i32,
        },
        /// `DOMAIN_EVENT_CALLBACK_REBOOT`.
        Reboot = 1 {
            /// Callback id.
            callback_id: i32,
        },
        /// `CONNECT_EVENT_CONNECTION_CLOSED`.
        Closed = 2 {
            /// Reason.
            reason: i32,
        },
        /// A procedure the client does not decode, with `len` patterned bytes.
        Unknown = 3 {
            /// Procedure number.
            procedure: i32,
            /// Payload bytes.
            len: u8,
        },
        /// A lifecycle event cut short.
        Truncated = 4,
    }
}

/// Decode an input into its setup and operations (see the [module docs](self)).
pub fn decode(data: &[u8]) -> (Setup, Vec<Op>) {
    let mut r = Reader::new(data);
    let setup = Setup::read(&mut r).unwrap_or_default();
    let mut ops = Vec::new();
    while !r.is_empty() && ops.len() < MAX_OPS {
        // `None`: a tag naming nothing (skipped) or the end of the input.
        if let Some(op) = Op::read(&mut r) {
            ops.push(op);
        }
    }
    (setup, ops)
}

/// The bytes [`decode`] turns into exactly `setup` and `ops`.
pub fn encode(setup: &Setup, ops: &[Op]) -> Vec<u8> {
    let mut out = Vec::new();
    setup.write(&mut out);
    for op in ops {
        op.write(&mut out);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_tags_skip_one_operation() {
        let mut data = encode(&Setup::default(), &[]);
        data.extend_from_slice(&[200, Op::Close.tag()]);
        // An unknown ServerPacket tag inside an Op::Server: that op only.
        data.extend_from_slice(&[18, 99, 15]);
        assert_eq!(decode(&data).1, vec![Op::Close, Op::Eof]);
    }

    #[test]
    fn a_cut_operation_is_dropped() {
        let mut data = encode(&Setup::default(), &[Op::Eof]);
        data.extend_from_slice(&[13]);
        assert_eq!(decode(&data).1, vec![Op::Eof]);
        assert_eq!(decode(&[1, 2]), (Setup::default(), vec![]));
    }

    impl Op {
        fn tag(&self) -> u8 {
            let mut b = Vec::new();
            self.write(&mut b);
            b[0]
        }
    }
}
