//! Hand-built `connection` inputs: the protocol's sequences (see `tests/sequences.rs` of
//! libvirt-remote) as Rust values. They run as a test, and are written to
//! `fuzz/corpus/connection/seed-<name>` with [`encode`](super::encode) so fuzzing starts from
//! them (the testkit's `fuzz_corpus` test checks the files match).

use super::input::{Chunk, EventBody, Op, RawBytes, ReplyBody, ServerPacket, Setup, SubOp, Tweak};

/// One hand-built input.
#[derive(Debug, Clone)]
pub struct Seed {
    /// File name suffix: `seed-<name>`.
    pub name: &'static str,
    /// Connection settings.
    pub setup: Setup,
    /// What happens.
    pub ops: Vec<Op>,
}

fn setup(keepalive: Option<(u8, u8)>, window: u32, chunk: Chunk) -> Setup {
    Setup {
        keepalive,
        window,
        chunk,
    }
}

/// No keepalive, a 512 KiB window, 4 KiB upload chunks.
fn quiet() -> Setup {
    setup(None, 1 << 19, Chunk::Page)
}

/// Transmit everything queued.
const ALL: Op = Op::Transmit { max: 255 };

fn call(procedure: u8, deadline_ms: Option<u16>) -> Op {
    Op::Call {
        procedure,
        args_len: 12,
        deadline_ms,
    }
}

fn open(upload: bool, sparse: bool) -> Op {
    Op::OpenStream { upload, sparse }
}

fn advance(ms: u32) -> Op {
    Op::Advance {
        ms,
        spurious: false,
    }
}

fn server(packet: ServerPacket) -> Op {
    Op::Server { packet, split: 0 }
}

fn reply_to(target: u8, stream: bool, body: ReplyBody, tweak: Tweak) -> Op {
    server(ServerPacket::Reply {
        target,
        stream,
        body,
        tweak,
    })
}

/// A REPLY OK with `len` bytes to call `target`.
fn reply_ok(target: u8, len: u8) -> Op {
    reply_to(target, false, ReplyBody::Ok { len }, Tweak::None)
}

/// The empty REPLY OK that opens `stream`.
fn open_reply(stream: u8) -> Op {
    reply_to(stream, true, ReplyBody::Ok { len: 0 }, Tweak::None)
}

fn data(stream: u8, len: u16) -> Op {
    server(ServerPacket::Data {
        stream,
        len,
        tweak: Tweak::None,
    })
}

fn stream_ok(stream: u8) -> Op {
    server(ServerPacket::StreamOk {
        stream,
        tweak: Tweak::None,
    })
}

fn event(body: EventBody) -> Op {
    server(ServerPacket::Event { body })
}

fn subscribe(secret: bool, event_id: u8) -> Op {
    Op::Sub {
        op: SubOp::Subscribe { secret, event_id },
    }
}

fn unsubscribe(sub: u8) -> Op {
    Op::Sub {
        op: SubOp::Unsubscribe { sub },
    }
}

/// The daemon answers the first registration call in flight.
fn answer(callback_id: u8, refuse: bool) -> Op {
    Op::Sub {
        op: SubOp::Answer {
            call: 0,
            callback_id,
            refuse,
        },
    }
}

fn sub_event(secret: bool, callback_id: u8) -> Op {
    Op::Sub {
        op: SubOp::Event {
            secret,
            callback_id,
        },
    }
}

fn sub(op: SubOp) -> Op {
    Op::Sub { op }
}

fn subscribe_legacy_any(event_id: u8) -> Op {
    sub(SubOp::SubscribeLegacyAny { event_id })
}

fn legacy_event(event_id: u8) -> Op {
    sub(SubOp::LegacyEvent { event_id })
}

/// Every hand-built input.
pub fn seeds() -> Vec<Seed> {
    let seed = |name, setup, ops| Seed { name, setup, ops };
    vec![
        seed(
            "calls",
            quiet(),
            vec![
                call(0, None),
                call(1, Some(2000)),
                call(3, None),
                ALL,
                reply_ok(0, 8),
                Op::DecodeReply { call: 0 },
                reply_to(2, false, ReplyBody::Error { code: 42 }, Tweak::None),
                advance(2500),
                reply_ok(1, 4),
                call(2, None),
                Op::ForgetCall { call: 3 },
                ALL,
                reply_ok(3, 16),
                call(4, Some(10)),
                ALL,
                Op::Server {
                    packet: ServerPacket::Reply {
                        target: 4,
                        stream: false,
                        body: ReplyBody::Ok { len: 8 },
                        tweak: Tweak::None,
                    },
                    split: 13,
                },
            ],
        ),
        seed(
            "fd_call_and_reply",
            quiet(),
            vec![
                Op::FdPassing { on: true },
                Op::FdCall {
                    procedure: 0,
                    nfds: 2,
                },
                Op::FdCall {
                    procedure: 1,
                    nfds: 0,
                },
                ALL,
                Op::Server {
                    packet: ServerPacket::ReplyFds {
                        target: 0,
                        nfds: 1,
                        give: 1,
                    },
                    split: 0,
                },
                // Split between the packet and its descriptor bytes.
                Op::Server {
                    packet: ServerPacket::ReplyFds {
                        target: 1,
                        nfds: 2,
                        give: 2,
                    },
                    split: 32,
                },
                Op::FdPassing { on: false },
                Op::FdCall {
                    procedure: 0,
                    nfds: 1,
                },
            ],
        ),
        seed(
            "fd_reply_for_plain_and_forgotten_calls",
            quiet(),
            vec![
                call(0, None),
                call(1, None),
                ALL,
                Op::ForgetCall { call: 1 },
                Op::Server {
                    packet: ServerPacket::ReplyFds {
                        target: 0,
                        nfds: 3,
                        give: 0,
                    },
                    split: 0,
                },
                Op::Server {
                    packet: ServerPacket::ReplyFds {
                        target: 1,
                        nfds: 1,
                        give: 1,
                    },
                    split: 0,
                },
            ],
        ),
        seed(
            "fd_missing_is_fatal",
            quiet(),
            vec![
                Op::FdPassing { on: true },
                Op::FdCall {
                    procedure: 0,
                    nfds: 1,
                },
                ALL,
                Op::Server {
                    packet: ServerPacket::ReplyFds {
                        target: 0,
                        nfds: 1,
                        give: 0,
                    },
                    split: 0,
                },
            ],
        ),
        seed(
            "fd_stray_and_over_limit",
            quiet(),
            vec![
                Op::FdPassing { on: true },
                Op::FdCall {
                    procedure: 0,
                    nfds: 0,
                },
                ALL,
                Op::Server {
                    packet: ServerPacket::ReplyFds {
                        target: 0,
                        nfds: 33,
                        give: 0,
                    },
                    split: 0,
                },
            ],
        ),
        seed(
            "fd_stray",
            quiet(),
            vec![Op::FdPassing { on: true }, Op::Fds { n: 2 }],
        ),
        seed(
            "upload_sparse",
            setup(None, 1 << 16, Chunk::Odd),
            vec![
                open(true, true),
                Op::Send { stream: 0, len: 10 },
                ALL,
                open_reply(0),
                Op::Send {
                    stream: 0,
                    len: 5000,
                },
                Op::Hole {
                    stream: 0,
                    len: 1 << 20,
                },
                Op::Send { stream: 0, len: 3 },
                Op::Transmit { max: 2 },
                Op::Hole {
                    stream: 0,
                    len: u64::MAX,
                },
                Op::Finish { stream: 0 },
                Op::Send { stream: 0, len: 3 },
                ALL,
                stream_ok(0),
                Op::End { stream: 0 },
                Op::End { stream: 0 },
            ],
        ),
        seed(
            "upload_hole_refused_on_non_sparse",
            quiet(),
            vec![
                open(true, false),
                ALL,
                open_reply(0),
                Op::Hole {
                    stream: 0,
                    len: 4096,
                },
                Op::Send {
                    stream: 0,
                    len: 9000,
                },
                Op::Abort { stream: 0 },
                ALL,
                stream_ok(0),
                Op::End { stream: 0 },
            ],
        ),
        seed(
            "download_sparse",
            setup(None, 3000, Chunk::Virsh),
            vec![
                open(false, true),
                ALL,
                open_reply(0),
                data(0, 2000),
                server(ServerPacket::Hole {
                    stream: 0,
                    len: 8192,
                    tweak: Tweak::None,
                }),
                data(0, 2000),
                data(0, 0),
                Op::Recv { stream: 0, max: 1 },
                Op::Recv {
                    stream: 0,
                    max: 255,
                },
                ALL,
                stream_ok(0),
                Op::Recv {
                    stream: 0,
                    max: 255,
                },
                Op::End { stream: 0 },
            ],
        ),
        seed(
            "download_hole_on_non_sparse",
            quiet(),
            vec![
                open(false, false),
                ALL,
                open_reply(0),
                data(0, 100),
                server(ServerPacket::Hole {
                    stream: 0,
                    len: 4096,
                    tweak: Tweak::None,
                }),
                ALL,
                stream_ok(0),
                Op::End { stream: 0 },
            ],
        ),
        seed(
            "stream_errors",
            quiet(),
            vec![
                open(true, false),
                open(false, false),
                ALL,
                open_reply(0),
                Op::Send {
                    stream: 0,
                    len: 20_000,
                },
                server(ServerPacket::StreamError {
                    stream: 0,
                    code: 38,
                    tweak: Tweak::None,
                }),
                Op::Send { stream: 0, len: 1 },
                ALL,
                reply_to(1, true, ReplyBody::Error { code: 55 }, Tweak::None),
                Op::End { stream: 0 },
                Op::End { stream: 1 },
            ],
        ),
        seed(
            "abort_while_opening_and_forget",
            quiet(),
            vec![
                open(true, true),
                open(false, true),
                Op::Abort { stream: 0 },
                ALL,
                open_reply(0),
                open_reply(1),
                data(1, 64),
                Op::Forget { stream: 1 },
                ALL,
                stream_ok(0),
                data(1, 64),
                stream_ok(1),
                Op::End { stream: 0 },
                Op::End { stream: 1 },
            ],
        ),
        seed(
            "keepalive",
            setup(Some((5, 3)), 1 << 20, Chunk::Page),
            vec![
                server(ServerPacket::Ping),
                ALL,
                advance(5000),
                ALL,
                server(ServerPacket::Pong),
                Op::Advance {
                    ms: 4000,
                    spurious: true,
                },
                advance(6000),
                Op::SetKeepalive {
                    keepalive: Some((1, 2)),
                },
                advance(1000),
                advance(1000),
                ALL,
            ],
        ),
        seed(
            "events",
            quiet(),
            vec![
                event(EventBody::Lifecycle {
                    callback_id: 1,
                    event: 5,
                    detail: 1,
                }),
                event(EventBody::Reboot { callback_id: 2 }),
                event(EventBody::Closed { reason: 1 }),
                event(EventBody::Unknown {
                    procedure: 400,
                    len: 12,
                }),
                event(EventBody::Truncated),
                server(ServerPacket::Pong),
            ],
        ),
        seed(
            "fatal_reply_then_closed",
            quiet(),
            vec![
                call(0, None),
                call(1, Some(100)),
                open(false, false),
                ALL,
                reply_to(
                    0,
                    false,
                    ReplyBody::Ok { len: 4 },
                    Tweak::Procedure { procedure: 999 },
                ),
                call(0, None),
                Op::Send { stream: 0, len: 1 },
                Op::End { stream: 0 },
                Op::Close,
            ],
        ),
        seed(
            "raw_bytes_and_eof",
            setup(Some((1, 1)), 10, Chunk::Tiny),
            vec![
                call(5, None),
                open(true, true),
                Op::Raw {
                    bytes: RawBytes(vec![
                        0, 0, 0, 28, 0x6b, 0x65, 0x65, 0x70, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 2,
                    ]),
                },
                Op::Raw {
                    bytes: RawBytes(vec![0; 8]),
                },
                ALL,
                Op::Eof,
                Op::End { stream: 0 },
            ],
        ),
        seed(
            "window_backpressure",
            setup(Some((2, 4)), 1000, Chunk::Page),
            vec![
                open(false, false),
                call(0, None),
                ALL,
                open_reply(0),
                data(0, 1500),
                reply_ok(0, 8),
                advance(30_000),
                Op::Recv {
                    stream: 0,
                    max: 255,
                },
                data(0, 0),
                ALL,
                stream_ok(0),
                Op::End { stream: 0 },
                Op::TransportError,
            ],
        ),
        seed(
            // Two subscribers share one REGISTER; a secret registration gets the same
            // callback id; the last one out deregisters; one arriving meanwhile waits, then
            // registers anew.
            "subscriptions_shared_per_kind",
            quiet(),
            vec![
                subscribe(false, 0),
                subscribe(false, 0),
                ALL,
                answer(1, false),
                sub_event(false, 1),
                subscribe(true, 0),
                ALL,
                answer(1, false),
                sub_event(true, 1),
                sub_event(false, 1),
                event(EventBody::Lifecycle {
                    callback_id: 1,
                    event: 0,
                    detail: 0,
                }),
                unsubscribe(0),
                unsubscribe(1),
                subscribe(false, 0),
                ALL,
                answer(0, false),
                ALL,
                answer(2, false),
                sub_event(false, 2),
                sub_event(false, 1),
                Op::Eof,
            ],
        ),
        seed(
            // Dropped while registering: undone at the reply; refused; death while waiting.
            "subscriptions_undo_refuse_death",
            quiet(),
            vec![
                subscribe(false, 1),
                ALL,
                unsubscribe(0),
                answer(3, false),
                ALL,
                sub_event(false, 3),
                answer(0, false),
                subscribe(true, 2),
                ALL,
                answer(0, true),
                unsubscribe(1),
                subscribe(false, 1),
                subscribe(true, 1),
                ALL,
                call(0, None),
                Op::Close,
                subscribe(false, 1),
                unsubscribe(2),
            ],
        ),
        seed(
            // A registration answered before it went out (raw bytes: REPLY 316, serial 0,
            // callback id 1), and an undecodable registration reply (8 bytes for serial 1),
            // which is fatal.
            "subscriptions_raw_replies",
            quiet(),
            vec![
                subscribe(false, 0),
                Op::Raw {
                    bytes: RawBytes(vec![
                        0, 0, 0, 32, 0x20, 0x00, 0x80, 0x86, 0, 0, 0, 1, 0, 0, 1, 0x3c, 0, 0, 0, 1,
                        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1,
                    ]),
                },
                sub_event(false, 1),
                ALL,
                subscribe(false, 2),
                ALL,
                Op::Raw {
                    bytes: RawBytes(vec![
                        0, 0, 0, 36, 0x20, 0x00, 0x80, 0x86, 0, 0, 0, 1, 0, 0, 1, 0x3c, 0, 0, 0, 1,
                        0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 9,
                    ]),
                },
            ],
        ),
        seed(
            // The legacy registrations: the any-registration per event id (void reply, its
            // "callback id" the event id) shared by its subscribers, beside the legacy
            // lifecycle registration and a callback registration of the same id; legacy
            // events routed by event id (a lifecycle one to both legacy registrations); the
            // last one out deregisters by event id, a subscriber arriving meanwhile waits for
            // a fresh REGISTER (refused here); an any-registration undone at its reply.
            "subscriptions_legacy_any",
            quiet(),
            vec![
                subscribe_legacy_any(0),
                subscribe_legacy_any(3),
                subscribe_legacy_any(1),
                sub(SubOp::SubscribeLegacy),
                subscribe(false, 0),
                ALL,
                answer(0, false),
                answer(0, false),
                answer(0, false),
                answer(0, false),
                legacy_event(0),
                legacy_event(1),
                legacy_event(2),
                sub_event(false, 0),
                unsubscribe(0),
                unsubscribe(1),
                ALL,
                subscribe_legacy_any(0),
                legacy_event(0),
                answer(0, false),
                ALL,
                answer(0, true),
                subscribe_legacy_any(2),
                ALL,
                unsubscribe(6),
                answer(0, false),
                ALL,
                answer(0, false),
                unsubscribe(2),
                unsubscribe(3),
                ALL,
                answer(0, false),
                answer(0, false),
                ALL,
                Op::Eof,
            ],
        ),
        seed(
            "write_rule",
            setup(Some((1, 6)), 1 << 19, Chunk::Page),
            vec![
                Op::CallerWrites { on: true },
                // A lone call written by its caller, half of it: a keepalive of ours and the
                // answer to the daemon's ping queue behind the rest.
                call(0, None),
                Op::CallerWrite { max: 10 },
                advance(1000),
                server(ServerPacket::Ping),
                ALL,
                Op::Written,
                reply_ok(0, 8),
                // The one woken caller's next call: written by itself, whole.
                Op::BatchWait {
                    any: true,
                    held: 28,
                },
                call(1, None),
                Op::CallerWrite { max: 65_535 },
                reply_ok(1, 8),
                // Two in flight: the driver's.
                call(2, None),
                call(3, None),
                Op::CallerWrite { max: 65_535 },
                ALL,
                reply_ok(2, 8),
                reply_ok(3, 8),
                call(4, None),
                Op::Transmit { max: 1 },
                Op::BatchWait {
                    any: true,
                    held: 40,
                },
                Op::BatchWait {
                    any: true,
                    held: 40,
                },
                // The driver holds what it took: a lone call is left to it until it says
                // all is written.
                reply_ok(4, 8),
                call(0, None),
                Op::CallerWrite { max: 65_535 },
                Op::Written,
                Op::CallerWrite { max: 65_535 },
                reply_ok(5, 8),
                // A caller begins an upload's data packet; the abort keeps its rest.
                open(true, false),
                ALL,
                Op::Written,
                open_reply(0),
                Op::Send {
                    stream: 0,
                    len: 100,
                },
                Op::Send {
                    stream: 0,
                    len: 100,
                },
                call(0, None),
                Op::CallerWrite { max: 50 },
                Op::Abort { stream: 0 },
                ALL,
                Op::Written,
                stream_ok(0),
                Op::CallerWrites { on: false },
                call(1, None),
                Op::CallerWrite { max: 65_535 },
                ALL,
                Op::Eof,
            ],
        ),
        seed(
            "reconnect_successor",
            setup(None, 1 << 19, Chunk::Page),
            vec![
                // A live connection has no successor.
                Op::Successor,
                // Two active registrations (one shared by two subscribers, one left by its
                // only subscriber during the outage), one still registering at the death.
                subscribe(false, 0),
                subscribe(false, 0),
                subscribe(true, 1),
                ALL,
                answer(5, false),
                answer(6, false),
                subscribe(false, 2),
                ALL,
                call(0, None),
                ALL,
                Op::Eof,
                unsubscribe(2),
                Op::Successor,
            ],
        ),
        seed(
            // The cap on calls in flight at 2: calls and a stream open beyond it wait, in
            // order; a held call forgotten, another past its deadline, never go out;
            // keepalive and an open stream's packets pass the held calls.
            "cap_on_calls_in_flight",
            setup(Some((5, 3)), (2 << 20) | (1 << 19), Chunk::Page),
            vec![
                open(true, false),
                ALL,
                open_reply(0),
                call(0, None),
                call(1, None),
                call(2, None),
                call(3, Some(1000)),
                open(false, false),
                call(4, None),
                ALL,
                Op::Send {
                    stream: 0,
                    len: 100,
                },
                server(ServerPacket::Ping),
                ALL,
                Op::ForgetCall { call: 2 },
                advance(1500),
                reply_ok(1, 8),
                ALL,
                reply_ok(0, 8),
                ALL,
                open_reply(1),
                Op::ForgetCall { call: 0 },
                ALL,
                reply_ok(4, 8),
                Op::Finish { stream: 0 },
                ALL,
                advance(6000),
                ALL,
                Op::Eof,
            ],
        ),
    ]
}
