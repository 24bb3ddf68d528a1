//! One-shot conversion of the `connection` corpus from the `derive(Arbitrary)` layout (the
//! harness before the testkit) to the tagged encoding of `fuzz::connection::input`. Valid only
//! for the `Op` set of the commit that adds it: the legacy types below are that commit's
//! parent's, with `derive(Arbitrary)`, and every converted input must mean exactly what it
//! meant before (same setup, same operations).
//!
//! `cargo test -p libvirt-rpc-testkit --test migrate_corpus -- --ignored --nocapture`

#![allow(missing_docs, clippy::needless_pass_by_value)]

use std::path::{Path, PathBuf};

use libvirt_rpc_testkit::fuzz::connection::{self as new, encode};

mod legacy {
    use arbitrary::{Arbitrary, Unstructured};

    pub const MAX_OPS: usize = 256;

    /// Connection settings.
    #[derive(Debug, Clone, PartialEq, Eq, Arbitrary)]
    pub struct Setup {
        /// Keepalive: (interval in seconds % 16, count % 8).
        pub keepalive: Option<(u8, u8)>,
        /// Download window: 1 + bytes % 1 MiB (a window of 0 stops all reading once any stream
        /// exists, uploads included).
        pub window: u32,
        /// Upload chunk size.
        pub chunk: Chunk,
    }

    /// Upload chunk sizes.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Arbitrary)]
    pub enum Chunk {
        /// 64 bytes.
        Tiny,
        /// 1000 bytes (not a multiple of 4).
        Odd,
        /// 4 KiB.
        Page,
        /// virsh's 262,120 bytes.
        Virsh,
    }

    /// Raw bytes (a little-endian `u16` length % 2048, then that many bytes or what is left).
    #[derive(Clone, PartialEq, Eq)]
    pub struct RawBytes(pub Vec<u8>);

    impl std::fmt::Debug for RawBytes {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            write!(f, "RawBytes({} bytes)", self.0.len())
        }
    }

    impl<'a> Arbitrary<'a> for RawBytes {
        fn arbitrary(u: &mut Unstructured<'a>) -> arbitrary::Result<Self> {
            let len = usize::from(u16::arbitrary(u)? % 2048).min(u.len());
            Ok(Self(u.bytes(len)?.to_vec()))
        }
    }

    /// One thing that happens to the connection. `u8` picks select a call or stream of the
    /// model by index (255: an id nobody opened).
    #[derive(Debug, Clone, PartialEq, Eq, Arbitrary)]
    pub enum Op {
        /// `call` with `args_len` bytes of arguments and an optional deadline in ms.
        Call {
            /// Index into [`CALL_PROCS`].
            procedure: u8,
            /// Argument bytes.
            args_len: u8,
            /// Deadline, ms from now.
            deadline_ms: Option<u16>,
        },
        /// `open_stream_raw` for an upload (208) or download (209).
        OpenStream {
            /// Upload or download.
            upload: bool,
            /// Opened sparse.
            sparse: bool,
        },
        /// `stream_send` of `len` patterned bytes.
        Send {
            /// Stream pick.
            stream: u8,
            /// Bytes.
            len: u16,
        },
        /// `stream_send_hole`.
        Hole {
            /// Stream pick.
            stream: u8,
            /// Hole length (may exceed `i64::MAX`).
            len: u64,
        },
        /// `stream_finish`.
        Finish {
            /// Stream pick.
            stream: u8,
        },
        /// `stream_abort`.
        Abort {
            /// Stream pick.
            stream: u8,
        },
        /// `forget_stream`.
        Forget {
            /// Stream pick.
            stream: u8,
        },
        /// `stream_recv` up to `max` items (255: all streams, everything), then read on.
        Recv {
            /// Stream pick.
            stream: u8,
            /// Items.
            max: u8,
        },
        /// `take_stream_end`.
        End {
            /// Stream pick.
            stream: u8,
        },
        /// `forget_call`.
        ForgetCall {
            /// Call pick.
            call: u8,
        },
        /// `decode_reply::<ConnectGetLibVersion>` on a call's reply payload.
        DecodeReply {
            /// Call pick.
            call: u8,
        },
        /// `set_keepalive`.
        SetKeepalive(Option<(u8, u8)>),
        /// `close`.
        Close,
        /// Take up to `max` packets from `poll_transmit` (255: all) and give them to the peer.
        Transmit {
            /// Packets.
            max: u8,
        },
        /// Advance the virtual clock by `ms`; fire timers if due (or anyway when `spurious`).
        Advance {
            /// Milliseconds.
            ms: u32,
            /// Call `handle_timeout` even when nothing is due.
            spurious: bool,
        },
        /// `handle_eof`.
        Eof,
        /// `handle_transport_error`.
        TransportError,
        /// Raw bytes from the daemon.
        Raw(RawBytes),
        /// A well-formed daemon packet, delivered in two parts when `split` falls inside it.
        Server {
            /// The packet.
            packet: ServerPacket,
            /// Where to split delivery (0: whole).
            split: u16,
        },
    }

    /// A daemon packet built with [`peer`], possibly with one header field changed.
    #[derive(Debug, Clone, PartialEq, Eq, Arbitrary)]
    pub enum ServerPacket {
        /// REPLY to a call or stream open.
        Reply {
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
        Data {
            /// Stream pick.
            stream: u8,
            /// Bytes.
            len: u16,
            /// Header change.
            tweak: Tweak,
        },
        /// `STREAM_HOLE` CONTINUE.
        Hole {
            /// Stream pick.
            stream: u8,
            /// Hole length.
            len: i64,
            /// Header change.
            tweak: Tweak,
        },
        /// STREAM OK (finish or abort confirmation).
        StreamOk {
            /// Stream pick.
            stream: u8,
            /// Header change.
            tweak: Tweak,
        },
        /// STREAM ERROR with a `remote_error`.
        StreamError {
            /// Stream pick.
            stream: u8,
            /// Error code.
            code: i8,
            /// Header change.
            tweak: Tweak,
        },
        /// A remote-program MESSAGE.
        Event(EventBody),
        /// Keepalive PING.
        Ping,
        /// Keepalive PONG.
        Pong,
    }

    /// A REPLY's status and payload.
    #[derive(Debug, Clone, PartialEq, Eq, Arbitrary)]
    pub enum ReplyBody {
        /// OK with `len` patterned bytes.
        Ok(u8),
        /// ERROR with a well-formed `remote_error`.
        Error(i8),
        /// ERROR whose payload does not decode.
        BadError,
    }

    /// One header field changed from what the protocol wants.
    #[derive(Debug, Clone, PartialEq, Eq, Arbitrary)]
    pub enum Tweak {
        /// As the protocol wants.
        None,
        /// Serial `XORed` with this.
        Serial(u32),
        /// Another procedure.
        Procedure(i32),
        /// Another program (index into known programs plus one unknown).
        Program(u8),
        /// Another version.
        Version(u32),
        /// Another status (index % 3).
        Status(u8),
        /// Another message type (index % 7).
        Kind(u8),
    }

    /// An event message.
    #[derive(Debug, Clone, PartialEq, Eq, Arbitrary)]
    pub enum EventBody {
        /// `DOMAIN_EVENT_CALLBACK_LIFECYCLE`.
        Lifecycle {
            /// Callback id.
            callback_id: i32,
            /// Event.
            event: i32,
            /// Detail.
            detail: i32,
        },
        /// `DOMAIN_EVENT_CALLBACK_REBOOT`.
        Reboot(i32),
        /// `CONNECT_EVENT_CONNECTION_CLOSED`.
        Closed(i32),
        /// A procedure the client does not decode, with `len` bytes.
        Unknown(i32, u8),
        /// A lifecycle event cut short.
        Truncated,
    }

    /// Decode an input into its setup and operations.
    pub fn decode_legacy(data: &[u8]) -> (Setup, Vec<Op>) {
        let mut u = Unstructured::new(data);
        let setup = Setup::arbitrary(&mut u).unwrap_or(Setup {
            keepalive: None,
            window: 0,
            chunk: Chunk::Tiny,
        });
        let mut ops = Vec::new();
        while !u.is_empty() && ops.len() < MAX_OPS {
            match Op::arbitrary(&mut u) {
                Ok(op) => ops.push(op),
                Err(_) => break,
            }
        }
        (setup, ops)
    }
}

fn convert_tweak(t: legacy::Tweak) -> new::Tweak {
    use legacy::Tweak as T;
    match t {
        T::None => new::Tweak::None,
        T::Serial(xor) => new::Tweak::Serial { xor },
        T::Procedure(procedure) => new::Tweak::Procedure { procedure },
        T::Program(index) => new::Tweak::Program { index },
        T::Version(version) => new::Tweak::Version { version },
        T::Status(index) => new::Tweak::Status { index },
        T::Kind(index) => new::Tweak::Kind { index },
    }
}

fn convert_packet(p: legacy::ServerPacket) -> new::ServerPacket {
    use legacy::ServerPacket as P;
    match p {
        P::Reply {
            target,
            stream,
            body,
            tweak,
        } => new::ServerPacket::Reply {
            target,
            stream,
            body: match body {
                legacy::ReplyBody::Ok(len) => new::ReplyBody::Ok { len },
                legacy::ReplyBody::Error(code) => new::ReplyBody::Error { code },
                legacy::ReplyBody::BadError => new::ReplyBody::BadError,
            },
            tweak: convert_tweak(tweak),
        },
        P::Data { stream, len, tweak } => new::ServerPacket::Data {
            stream,
            len,
            tweak: convert_tweak(tweak),
        },
        P::Hole { stream, len, tweak } => new::ServerPacket::Hole {
            stream,
            len,
            tweak: convert_tweak(tweak),
        },
        P::StreamOk { stream, tweak } => new::ServerPacket::StreamOk {
            stream,
            tweak: convert_tweak(tweak),
        },
        P::StreamError {
            stream,
            code,
            tweak,
        } => new::ServerPacket::StreamError {
            stream,
            code,
            tweak: convert_tweak(tweak),
        },
        P::Event(e) => new::ServerPacket::Event {
            body: match e {
                legacy::EventBody::Lifecycle {
                    callback_id,
                    event,
                    detail,
                } => new::EventBody::Lifecycle {
                    callback_id,
                    event,
                    detail,
                },
                legacy::EventBody::Reboot(callback_id) => new::EventBody::Reboot { callback_id },
                legacy::EventBody::Closed(reason) => new::EventBody::Closed { reason },
                legacy::EventBody::Unknown(procedure, len) => {
                    new::EventBody::Unknown { procedure, len }
                }
                legacy::EventBody::Truncated => new::EventBody::Truncated,
            },
        },
        P::Ping => new::ServerPacket::Ping,
        P::Pong => new::ServerPacket::Pong,
    }
}

fn convert_op(op: legacy::Op) -> new::Op {
    use legacy::Op as O;
    match op {
        O::Call {
            procedure,
            args_len,
            deadline_ms,
        } => new::Op::Call {
            procedure,
            args_len,
            deadline_ms,
        },
        O::OpenStream { upload, sparse } => new::Op::OpenStream { upload, sparse },
        O::Send { stream, len } => new::Op::Send { stream, len },
        O::Hole { stream, len } => new::Op::Hole { stream, len },
        O::Finish { stream } => new::Op::Finish { stream },
        O::Abort { stream } => new::Op::Abort { stream },
        O::Forget { stream } => new::Op::Forget { stream },
        O::Recv { stream, max } => new::Op::Recv { stream, max },
        O::End { stream } => new::Op::End { stream },
        O::ForgetCall { call } => new::Op::ForgetCall { call },
        O::DecodeReply { call } => new::Op::DecodeReply { call },
        O::SetKeepalive(keepalive) => new::Op::SetKeepalive { keepalive },
        O::Close => new::Op::Close,
        O::Transmit { max } => new::Op::Transmit { max },
        O::Advance { ms, spurious } => new::Op::Advance { ms, spurious },
        O::Eof => new::Op::Eof,
        O::TransportError => new::Op::TransportError,
        O::Raw(legacy::RawBytes(b)) => new::Op::Raw {
            bytes: new::RawBytes(b),
        },
        O::Server { packet, split } => new::Op::Server {
            packet: convert_packet(packet),
            split,
        },
    }
}

fn convert_setup(s: legacy::Setup) -> new::Setup {
    new::Setup {
        keepalive: s.keepalive,
        window: s.window,
        chunk: match s.chunk {
            legacy::Chunk::Tiny => new::Chunk::Tiny,
            legacy::Chunk::Odd => new::Chunk::Odd,
            legacy::Chunk::Page => new::Chunk::Page,
            legacy::Chunk::Virsh => new::Chunk::Virsh,
        },
    }
}

fn fuzz_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz")
}

/// Rewrite every `fuzz/{corpus,regressions}/connection/*` in the new encoding. Files whose
/// content is a SHA-1 name (libFuzzer's) are renamed after their new content.
#[test]
#[ignore = "one-shot: rewrites fuzz/{corpus,regressions}/connection"]
fn migrate_connection_corpus() {
    let seeds = new::seeds::seeds();
    let mut converted = 0;
    for dir in ["corpus/connection", "regressions/connection"] {
        let dir = fuzz_dir().join(dir);
        let mut paths: Vec<PathBuf> = std::fs::read_dir(&dir)
            .expect("dir")
            .map(|e| e.expect("entry").path())
            .collect();
        paths.sort();
        for path in paths {
            let old = std::fs::read(&path).expect("read");
            let (setup, ops) = legacy::decode_legacy(&old);
            let setup = convert_setup(setup);
            let ops: Vec<new::Op> = ops.into_iter().map(convert_op).collect();
            let bytes = encode(&setup, &ops);
            assert_eq!(
                new::decode(&bytes),
                (setup.clone(), ops.clone()),
                "{}: the new encoding means the same",
                path.display()
            );
            let name = path.file_name().unwrap().to_str().unwrap().to_owned();
            if let Some(seed) = name.strip_prefix("seed-") {
                let s = seeds.iter().find(|s| s.name == seed).expect("known seed");
                assert_eq!((&s.setup, &s.ops), (&setup, &ops), "seed {seed} translated");
            }
            converted += 1;
            std::fs::write(&path, &bytes).expect("write");
        }
    }
    println!("converted {converted} inputs");
}
