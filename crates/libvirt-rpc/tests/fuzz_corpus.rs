//! Replays every checked-in fuzz input (`fuzz/corpus/<target>/*` and
//! `fuzz/regressions/<target>/*`) through the same invariant checks as the cargo-fuzz targets,
//! so stable `cargo test` exercises the corpus and guards fixed bugs. The checks live in
//! `fuzz/harness/*.rs`, shared with the targets by `#[path]` (see `fuzz/README.md`).
//!
//! The hand-built `connection` seeds are defined here ([`seeds`]); `cargo test -p libvirt-rpc
//! --test fuzz_corpus -- --ignored write_connection_seeds` rewrites their files.

use std::path::{Path, PathBuf};

#[path = "../../../fuzz/harness/connection.rs"]
mod connection;
#[path = "../../../fuzz/harness/frame.rs"]
mod frame;
#[path = "../../../fuzz/harness/handshake.rs"]
mod handshake;
#[path = "../../../fuzz/harness/xdr.rs"]
mod xdr;

use connection::{Chunk, EventBody, Op, RawBytes, ReplyBody, ServerPacket, Setup, SubOp, Tweak};

fn fuzz_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz")
}

/// The files of `fuzz/<dir>/<target>/`, sorted by name.
fn files(dir: &str, target: &str) -> Vec<(PathBuf, Vec<u8>)> {
    let Ok(entries) = std::fs::read_dir(fuzz_dir().join(dir).join(target)) else {
        return Vec::new();
    };
    let mut paths: Vec<PathBuf> = entries.map(|e| e.expect("readable dir").path()).collect();
    paths.sort();
    paths
        .into_iter()
        .filter(|p| p.is_file())
        .map(|p| {
            let data = std::fs::read(&p).expect("readable input");
            (p, data)
        })
        .collect()
}

fn is_open_bug(path: &Path) -> bool {
    path.file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.starts_with("open-"))
}

/// Replay `fuzz/corpus/<target>/*` and the fixed `fuzz/regressions/<target>/*` through
/// `check`; `open-*` regressions are reported bugs that must still fail (rename one to
/// `fixed-*` once the core is fixed: it then has to pass like the rest).
fn replay(target: &str, min: usize, check: fn(&[u8]), strict: fn(bool)) {
    let corpus = files("corpus", target);
    assert!(
        corpus.len() >= min,
        "{target}: {} inputs, expected at least {min}",
        corpus.len()
    );
    for (path, data) in corpus.iter().chain(&files("regressions", target)) {
        // Printed before the run so a failure names its input.
        println!("{target}: {}", path.display());
        if is_open_bug(path) {
            strict(true);
            let r = std::panic::catch_unwind(|| check(data));
            strict(false);
            assert!(
                r.is_err(),
                "{} passes now: rename it to fixed-*",
                path.display()
            );
        } else {
            check(data);
        }
    }
}

fn no_strict(_: bool) {}

#[test]
fn frame_decode_corpus() {
    replay("frame_decode", 50, frame::check, no_strict);
}

#[test]
fn xdr_decode_corpus() {
    replay("xdr_decode", 50, xdr::check, no_strict);
}

#[test]
fn connection_corpus() {
    replay("connection", 10, connection::check, connection::set_strict);
}

#[test]
fn handshake_corpus() {
    replay("handshake", 8, handshake::check, no_strict);
}

/// Hand-built handshake inputs: the paths a real daemon takes, and the ones a hostile one
/// could. `cargo test -p libvirt-rpc --test fuzz_corpus -- --ignored write_handshake_seeds`
/// writes them to `fuzz/corpus/handshake/`.
fn handshake_seeds() -> Vec<(&'static str, handshake::Input)> {
    use handshake::{Input, Opts, Reply};
    let opts = |credentials, insecure| Opts {
        keepalive: true,
        events: true,
        close_callback: true,
        insecure,
        credentials,
        wanted: None,
    };
    let sasl_list = Reply::AuthList(vec![1]);
    let first = |extend_nonce| Reply::ScramFirst {
        extend_nonce,
        salt: b"saltsalt".to_vec(),
        iterations: 7,
        complete: false,
    };
    let tail = vec![
        Reply::Feature(true),
        Reply::Void,
        Reply::Feature(true),
        Reply::Feature(true),
        Reply::Void,
    ];
    let with_tail = |mut v: Vec<Reply>| {
        v.extend(tail.clone());
        v
    };
    vec![
        (
            "none",
            Input {
                accept: Some(1),
                opts: opts(false, false),
                replies: with_tail(vec![Reply::AuthList(vec![0])]),
            },
        ),
        (
            "refused-byte",
            Input {
                accept: Some(0),
                opts: opts(false, false),
                replies: vec![],
            },
        ),
        (
            "refused-eof",
            Input {
                accept: None,
                opts: opts(false, false),
                replies: vec![],
            },
        ),
        (
            "sasl-over-tcp",
            Input {
                accept: Some(1),
                opts: opts(true, true),
                replies: vec![sasl_list.clone()],
            },
        ),
        (
            "sasl-no-credentials",
            Input {
                accept: Some(1),
                opts: opts(false, false),
                replies: vec![sasl_list.clone(), Reply::Mechs(1)],
            },
        ),
        (
            "sasl-gssapi-only",
            Input {
                accept: Some(1),
                opts: opts(true, false),
                replies: vec![sasl_list.clone(), Reply::Mechs(8)],
            },
        ),
        (
            "scram-bad-signature",
            Input {
                accept: Some(1),
                opts: opts(true, false),
                replies: with_tail(vec![
                    sasl_list.clone(),
                    Reply::Mechs(1),
                    first(true),
                    Reply::ScramFinal {
                        signature: b"forged".to_vec(),
                        complete: true,
                    },
                ]),
            },
        ),
        (
            "scram-foreign-nonce",
            Input {
                accept: Some(1),
                opts: opts(true, false),
                replies: vec![sasl_list.clone(), Reply::Mechs(3), first(false)],
            },
        ),
        (
            "scram-early-success",
            Input {
                accept: Some(1),
                opts: opts(true, false),
                replies: with_tail(vec![
                    sasl_list.clone(),
                    Reply::Mechs(1),
                    Reply::Sasl {
                        complete: true,
                        nil: true,
                        data: vec![],
                    },
                ]),
            },
        ),
        (
            "scram-rejected",
            Input {
                accept: Some(1),
                opts: opts(true, false),
                replies: vec![
                    sasl_list.clone(),
                    Reply::Mechs(1),
                    first(true),
                    Reply::Remote(45),
                ],
            },
        ),
        (
            "plain-ok",
            Input {
                accept: Some(1),
                opts: opts(true, false),
                replies: with_tail(vec![
                    sasl_list.clone(),
                    Reply::Mechs(4),
                    Reply::Sasl {
                        complete: true,
                        nil: true,
                        data: vec![],
                    },
                ]),
            },
        ),
        (
            "plain-endless",
            Input {
                accept: Some(1),
                opts: opts(true, false),
                replies: std::iter::once(sasl_list)
                    .chain([Reply::Mechs(4)])
                    .chain(std::iter::repeat_n(
                        Reply::Sasl {
                            complete: false,
                            nil: false,
                            data: vec![],
                        },
                        40,
                    ))
                    .collect(),
            },
        ),
    ]
}

#[test]
fn handshake_seeds_pass_and_match_their_files() {
    let dir = fuzz_dir().join("corpus/handshake");
    for (name, input) in handshake_seeds() {
        handshake::run(&input);
        let bytes = handshake::encode(&input);
        assert_eq!(
            handshake::parse(&bytes),
            input,
            "{name}: encoding round trip"
        );
        let file = std::fs::read(dir.join(format!("seed-{name}"))).unwrap_or_default();
        assert!(
            file == bytes,
            "fuzz/corpus/handshake/seed-{name} is stale: run write_handshake_seeds"
        );
    }
}

#[test]
#[ignore = "rewrites fuzz/corpus/handshake/seed-*"]
fn write_handshake_seeds() {
    let dir = fuzz_dir().join("corpus/handshake");
    std::fs::create_dir_all(&dir).unwrap();
    for (name, input) in handshake_seeds() {
        std::fs::write(dir.join(format!("seed-{name}")), handshake::encode(&input)).unwrap();
    }
}

#[test]
fn listed_procedures_are_the_tables() {
    use libvirt_rpc::proto::{REMOTE_PROGRAM, procs};
    for (number, name) in xdr::LISTED {
        let info = procs::lookup(REMOTE_PROGRAM, *number)
            .unwrap_or_else(|| panic!("{name} ({number}) is not in proto::procs::TABLES"));
        assert_eq!(info.name, *name);
    }
    let missing: Vec<&str> = procs::TABLES
        .iter()
        .flat_map(|t| t.iter())
        .filter(|p| !xdr::LISTED.iter().any(|(n, _)| *n == p.number))
        .map(|p| p.name)
        .collect();
    if !missing.is_empty() {
        // Not fatal: the table may grow before the list is regenerated.
        println!(
            "xdr_decode does not cover {} procedures (rerun fuzz/scripts/gen_procs_list.py): {missing:?}",
            missing.len()
        );
    }
}

// ---- hand-built connection seeds -------------------------------------------------------

fn quiet() -> Setup {
    Setup {
        keepalive: None,
        window: 1 << 19,
        chunk: Chunk::Page,
    }
}

fn reply(target: u8, body: ReplyBody) -> Op {
    Op::Server {
        packet: ServerPacket::Reply {
            target,
            stream: false,
            body,
            tweak: Tweak::None,
        },
        split: 0,
    }
}

fn open_reply(stream: u8) -> Op {
    Op::Server {
        packet: ServerPacket::Reply {
            target: stream,
            stream: true,
            body: ReplyBody::Ok(0),
            tweak: Tweak::None,
        },
        split: 0,
    }
}

fn server(packet: ServerPacket) -> Op {
    Op::Server { packet, split: 0 }
}

const ALL: Op = Op::Transmit { max: 255 };

fn subscribe(secret: bool, event_id: u8) -> Op {
    Op::Sub(SubOp::Subscribe { secret, event_id })
}

fn unsubscribe(sub: u8) -> Op {
    Op::Sub(SubOp::Unsubscribe { sub })
}

/// The daemon answers the first registration call in flight.
fn answer(callback_id: u8) -> Op {
    Op::Sub(SubOp::Answer {
        call: 0,
        callback_id,
        refuse: false,
    })
}

fn event(secret: bool, callback_id: u8) -> Op {
    Op::Sub(SubOp::Event {
        secret,
        callback_id,
    })
}

/// Hand-built sequences covering the protocol's sequences (see tests/sequences.rs).
fn seeds() -> Vec<(&'static str, Setup, Vec<Op>)> {
    let call = |procedure, deadline_ms| Op::Call {
        procedure,
        args_len: 12,
        deadline_ms,
    };
    vec![
        (
            "calls",
            quiet(),
            vec![
                call(0, None),
                call(1, Some(2000)),
                call(3, None),
                ALL,
                reply(0, ReplyBody::Ok(8)),
                Op::DecodeReply { call: 0 },
                reply(2, ReplyBody::Error(42)),
                Op::Advance {
                    ms: 2500,
                    spurious: false,
                },
                reply(1, ReplyBody::Ok(4)),
                call(2, None),
                Op::ForgetCall { call: 3 },
                ALL,
                reply(3, ReplyBody::Ok(16)),
                call(4, Some(10)),
                ALL,
                Op::Server {
                    packet: ServerPacket::Reply {
                        target: 4,
                        stream: false,
                        body: ReplyBody::Ok(8),
                        tweak: Tweak::None,
                    },
                    split: 13,
                },
            ],
        ),
        (
            "upload_sparse",
            Setup {
                keepalive: None,
                window: 1 << 16,
                chunk: Chunk::Odd,
            },
            vec![
                Op::OpenStream {
                    upload: true,
                    sparse: true,
                },
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
                server(ServerPacket::StreamOk {
                    stream: 0,
                    tweak: Tweak::None,
                }),
                Op::End { stream: 0 },
                Op::End { stream: 0 },
            ],
        ),
        (
            "upload_hole_refused_on_non_sparse",
            quiet(),
            vec![
                Op::OpenStream {
                    upload: true,
                    sparse: false,
                },
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
                server(ServerPacket::StreamOk {
                    stream: 0,
                    tweak: Tweak::None,
                }),
                Op::End { stream: 0 },
            ],
        ),
        (
            "download_sparse",
            Setup {
                keepalive: None,
                window: 3000,
                chunk: Chunk::Virsh,
            },
            vec![
                Op::OpenStream {
                    upload: false,
                    sparse: true,
                },
                ALL,
                open_reply(0),
                server(ServerPacket::Data {
                    stream: 0,
                    len: 2000,
                    tweak: Tweak::None,
                }),
                server(ServerPacket::Hole {
                    stream: 0,
                    len: 8192,
                    tweak: Tweak::None,
                }),
                server(ServerPacket::Data {
                    stream: 0,
                    len: 2000,
                    tweak: Tweak::None,
                }),
                server(ServerPacket::Data {
                    stream: 0,
                    len: 0,
                    tweak: Tweak::None,
                }),
                Op::Recv { stream: 0, max: 1 },
                Op::Recv {
                    stream: 0,
                    max: 255,
                },
                ALL,
                server(ServerPacket::StreamOk {
                    stream: 0,
                    tweak: Tweak::None,
                }),
                Op::Recv {
                    stream: 0,
                    max: 255,
                },
                Op::End { stream: 0 },
            ],
        ),
        (
            "download_hole_on_non_sparse",
            quiet(),
            vec![
                Op::OpenStream {
                    upload: false,
                    sparse: false,
                },
                ALL,
                open_reply(0),
                server(ServerPacket::Data {
                    stream: 0,
                    len: 100,
                    tweak: Tweak::None,
                }),
                server(ServerPacket::Hole {
                    stream: 0,
                    len: 4096,
                    tweak: Tweak::None,
                }),
                ALL,
                server(ServerPacket::StreamOk {
                    stream: 0,
                    tweak: Tweak::None,
                }),
                Op::End { stream: 0 },
            ],
        ),
        (
            "stream_errors",
            quiet(),
            vec![
                Op::OpenStream {
                    upload: true,
                    sparse: false,
                },
                Op::OpenStream {
                    upload: false,
                    sparse: false,
                },
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
                Op::Server {
                    packet: ServerPacket::Reply {
                        target: 1,
                        stream: true,
                        body: ReplyBody::Error(55),
                        tweak: Tweak::None,
                    },
                    split: 0,
                },
                Op::End { stream: 0 },
                Op::End { stream: 1 },
            ],
        ),
        (
            "abort_while_opening_and_forget",
            quiet(),
            vec![
                Op::OpenStream {
                    upload: true,
                    sparse: true,
                },
                Op::OpenStream {
                    upload: false,
                    sparse: true,
                },
                Op::Abort { stream: 0 },
                ALL,
                open_reply(0),
                open_reply(1),
                server(ServerPacket::Data {
                    stream: 1,
                    len: 64,
                    tweak: Tweak::None,
                }),
                Op::Forget { stream: 1 },
                ALL,
                server(ServerPacket::StreamOk {
                    stream: 0,
                    tweak: Tweak::None,
                }),
                server(ServerPacket::Data {
                    stream: 1,
                    len: 64,
                    tweak: Tweak::None,
                }),
                server(ServerPacket::StreamOk {
                    stream: 1,
                    tweak: Tweak::None,
                }),
                Op::End { stream: 0 },
                Op::End { stream: 1 },
            ],
        ),
        (
            "keepalive",
            Setup {
                keepalive: Some((5, 3)),
                window: 1 << 20,
                chunk: Chunk::Page,
            },
            vec![
                server(ServerPacket::Ping),
                ALL,
                Op::Advance {
                    ms: 5000,
                    spurious: false,
                },
                ALL,
                server(ServerPacket::Pong),
                Op::Advance {
                    ms: 4000,
                    spurious: true,
                },
                Op::Advance {
                    ms: 6000,
                    spurious: false,
                },
                Op::SetKeepalive(Some((1, 2))),
                Op::Advance {
                    ms: 1000,
                    spurious: false,
                },
                Op::Advance {
                    ms: 1000,
                    spurious: false,
                },
                ALL,
            ],
        ),
        (
            "events",
            quiet(),
            vec![
                server(ServerPacket::Event(EventBody::Lifecycle {
                    callback_id: 1,
                    event: 5,
                    detail: 1,
                })),
                server(ServerPacket::Event(EventBody::Reboot(2))),
                server(ServerPacket::Event(EventBody::Closed(1))),
                server(ServerPacket::Event(EventBody::Unknown(400, 12))),
                server(ServerPacket::Event(EventBody::Truncated)),
                server(ServerPacket::Pong),
            ],
        ),
        (
            "fatal_reply_then_closed",
            quiet(),
            vec![
                call(0, None),
                call(1, Some(100)),
                Op::OpenStream {
                    upload: false,
                    sparse: false,
                },
                ALL,
                Op::Server {
                    packet: ServerPacket::Reply {
                        target: 0,
                        stream: false,
                        body: ReplyBody::Ok(4),
                        tweak: Tweak::Procedure(999),
                    },
                    split: 0,
                },
                call(0, None),
                Op::Send { stream: 0, len: 1 },
                Op::End { stream: 0 },
                Op::Close,
            ],
        ),
        (
            "raw_bytes_and_eof",
            Setup {
                keepalive: Some((1, 1)),
                window: 10,
                chunk: Chunk::Tiny,
            },
            vec![
                call(5, None),
                Op::OpenStream {
                    upload: true,
                    sparse: true,
                },
                Op::Raw(RawBytes(vec![
                    0, 0, 0, 28, 0x6b, 0x65, 0x65, 0x70, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 2,
                ])),
                Op::Raw(RawBytes(vec![0, 0, 0, 0, 0, 0, 0, 0])),
                ALL,
                Op::Eof,
                Op::End { stream: 0 },
            ],
        ),
        (
            "window_backpressure",
            Setup {
                keepalive: Some((2, 4)),
                window: 1000,
                chunk: Chunk::Page,
            },
            vec![
                Op::OpenStream {
                    upload: false,
                    sparse: false,
                },
                call(0, None),
                ALL,
                open_reply(0),
                server(ServerPacket::Data {
                    stream: 0,
                    len: 1500,
                    tweak: Tweak::None,
                }),
                reply(0, ReplyBody::Ok(8)),
                Op::Advance {
                    ms: 30_000,
                    spurious: false,
                },
                Op::Recv {
                    stream: 0,
                    max: 255,
                },
                server(ServerPacket::Data {
                    stream: 0,
                    len: 0,
                    tweak: Tweak::None,
                }),
                ALL,
                server(ServerPacket::StreamOk {
                    stream: 0,
                    tweak: Tweak::None,
                }),
                Op::End { stream: 0 },
                Op::TransportError,
            ],
        ),
        (
            // Two subscribers share one REGISTER; a secret registration gets the same
            // callback id; the last one out deregisters; one arriving meanwhile waits, then
            // registers anew.
            "subscriptions_shared_per_kind",
            quiet(),
            vec![
                subscribe(false, 0),
                subscribe(false, 0),
                ALL,
                answer(1),
                event(false, 1),
                subscribe(true, 0),
                ALL,
                answer(1),
                event(true, 1),
                event(false, 1),
                server(ServerPacket::Event(EventBody::Lifecycle {
                    callback_id: 1,
                    event: 0,
                    detail: 0,
                })),
                unsubscribe(0),
                unsubscribe(1),
                subscribe(false, 0),
                ALL,
                answer(0),
                ALL,
                answer(2),
                event(false, 2),
                event(false, 1),
                Op::Eof,
            ],
        ),
        (
            // Dropped while registering: undone at the reply; refused; death while waiting.
            "subscriptions_undo_refuse_death",
            quiet(),
            vec![
                subscribe(false, 1),
                ALL,
                unsubscribe(0),
                answer(3),
                ALL,
                event(false, 3),
                answer(0),
                subscribe(true, 2),
                ALL,
                Op::Sub(SubOp::Answer {
                    call: 0,
                    callback_id: 0,
                    refuse: true,
                }),
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
        (
            // A registration answered before it went out (raw bytes: REPLY 316, serial 0,
            // callback id 1), and an undecodable registration reply (8 bytes for serial 1),
            // which is fatal.
            "subscriptions_raw_replies",
            quiet(),
            vec![
                subscribe(false, 0),
                Op::Raw(RawBytes(vec![
                    0, 0, 0, 32, 0x20, 0x00, 0x80, 0x86, 0, 0, 0, 1, 0, 0, 1, 0x3c, 0, 0, 0, 1, 0,
                    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1,
                ])),
                event(false, 1),
                ALL,
                subscribe(false, 2),
                ALL,
                Op::Raw(RawBytes(vec![
                    0, 0, 0, 36, 0x20, 0x00, 0x80, 0x86, 0, 0, 0, 1, 0, 0, 1, 0x3c, 0, 0, 0, 1, 0,
                    0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 9,
                ])),
            ],
        ),
    ]
}

#[test]
fn connection_seeds_pass_and_match_their_files() {
    for (name, setup, ops) in seeds() {
        let bytes = connection::encode(&setup, &ops);
        assert_eq!(
            connection::decode(&bytes),
            (setup.clone(), ops.clone()),
            "{name}: encode/decode"
        );
        connection::run(&setup, &ops);
        let path = fuzz_dir()
            .join("corpus/connection")
            .join(format!("seed-{name}"));
        let file = std::fs::read(&path)
            .unwrap_or_else(|e| panic!("{}: {e} (run write_connection_seeds)", path.display()));
        assert_eq!(
            file, bytes,
            "{name}: file differs (run write_connection_seeds)"
        );
    }
}

#[test]
#[ignore = "rewrites fuzz/corpus/connection/seed-*"]
fn write_connection_seeds() {
    let dir = fuzz_dir().join("corpus/connection");
    std::fs::create_dir_all(&dir).expect("corpus dir");
    for (name, setup, ops) in seeds() {
        std::fs::write(
            dir.join(format!("seed-{name}")),
            connection::encode(&setup, &ops),
        )
        .expect("write seed");
    }
}
