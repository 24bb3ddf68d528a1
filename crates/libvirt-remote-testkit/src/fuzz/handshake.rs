//! The opening handshake, SASL included, against an arbitrary daemon, plus libvirt's TLS
//! accept byte: the `handshake` fuzz target, and the replay of its corpus under `cargo test`
//! (needs the testkit's default `sasl` feature).
//!
//! **Input**: an [`Input`]: the accept byte, handshake options (SASL credentials or not, a
//! wanted mechanism, plain TCP or not) and the daemon's replies, one per call the handshake
//! asks for: raw payloads, errors, a dead connection, or well-formed answers (auth types,
//! mechanism lists, SASL challenges, SCRAM server-first messages built on the client's own
//! nonce). A small byte format ([`parse`] / [`encode`]) so seeds can be written by hand.
//!
//! **Invariants**:
//! * the accept byte: accepted exactly when it is `0x01`;
//! * the handshake ends (call, error or done) within a bounded number of calls, and SASL
//!   within `MAX_STEPS` START/STEP round trips;
//! * no SASL call over plain TCP; `CONNECT_OPEN` only after authentication: when the daemon
//!   listed only SASL, only once an exchange finished;
//! * PLAIN only when asked for, and never to a daemon whose identity is not verified;
//! * SCRAM never succeeds: these daemons cannot sign (a valid server signature needs the
//!   password), so a reported SCRAM success would be a skipped verification;
//! * the password appears in no `Debug` or `Display` of a call, an error or the outcome, and
//!   in no call's arguments except a PLAIN response.

use bytes::Bytes;
use libvirt_remote::conn::handshake::{Handshake, HandshakeOptions, tls_accept_status};
use libvirt_remote::conn::sasl::{CredentialCallback, Credentials, MAX_STEPS, SaslOptions};
use libvirt_remote::conn::{CallError, ConnectionError};
use libvirt_remote::proto::procs::connect::{
    AuthList, AuthListRet, AuthSaslInit, AuthSaslInitRet, AuthSaslStart, AuthSaslStartArgs,
    AuthSaslStep, AuthSaslStepRet, ConnectOpen, ConnectSupportsFeatureRet, auth_type,
};
use libvirt_remote::proto::types::SaslData;
use libvirt_remote::proto::{Procedure, RemoteError, WireError};
use libvirt_remote::wire::xdr::{self, LvString};

/// The password the harness's credentials carry.
pub const PASSWORD: &str = "fuzz-Pa55word!";
/// Most replies one input supplies.
pub const MAX_REPLIES: usize = 64;

/// The SASL mechanism names an input picks from (the first three are the ones we support).
pub const MECHS: [&str; 5] = [
    "SCRAM-SHA-256",
    "SCRAM-SHA-1",
    "PLAIN",
    "GSSAPI",
    "DIGEST-MD5",
];

/// Handshake options.
#[derive(Debug, Clone, PartialEq)]
pub struct Opts {
    /// Ask for the keepalive program.
    pub keepalive: bool,
    /// Ask for event callbacks.
    pub events: bool,
    /// Register the close callback.
    pub close_callback: bool,
    /// Plain TCP: no SASL may be attempted.
    pub insecure: bool,
    /// The daemon's identity is not verified (`no_verify`): no PLAIN.
    pub unverified: bool,
    /// SASL credentials (user `fuzz`, [`PASSWORD`]) are available.
    pub credentials: bool,
    /// Index into [`MECHS`] (`?auth=sasl.MECH`).
    pub wanted: Option<u8>,
}

/// One daemon reply.
#[derive(Debug, Clone, PartialEq)]
pub enum Reply {
    /// These bytes as the reply payload.
    Raw(Vec<u8>),
    /// A `remote_error` with this code.
    Remote(i32),
    /// The connection died.
    Dead,
    /// `AUTH_LIST` with these auth types (each % 4).
    AuthList(Vec<u8>),
    /// Bit `i` offers `MECHS[i]`.
    Mechs(u8),
    /// A SASL START/STEP reply.
    Sasl {
        /// The server says the exchange is complete.
        complete: bool,
        /// No data (rather than empty data).
        nil: bool,
        /// The server's data.
        data: Vec<u8>,
    },
    /// A SCRAM server-first message on the client's nonce (or not), then `complete`.
    ScramFirst {
        /// Extend the client's nonce (else send someone else's).
        extend_nonce: bool,
        /// The salt.
        salt: Vec<u8>,
        /// Iteration count: 1 + this % 64, or 4,000,000,000 for 255.
        iterations: u16,
        /// The server says the exchange is complete.
        complete: bool,
    },
    /// `v=<garbage>` as a final message.
    ScramFinal {
        /// The (forged) server signature.
        signature: Vec<u8>,
        /// The server says the exchange is complete.
        complete: bool,
    },
    /// `CONNECT_SUPPORTS_FEATURE`'s answer.
    Feature(bool),
    /// An empty reply.
    Void,
}

/// One fuzz input.
#[derive(Debug, Clone, PartialEq)]
pub struct Input {
    /// The TLS accept byte (`None`: the connection closed instead).
    pub accept: Option<u8>,
    /// Handshake options.
    pub opts: Opts,
    /// One reply per call the handshake makes, in order.
    pub replies: Vec<Reply>,
}

fn b64(data: &[u8]) -> String {
    const T: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut s = String::new();
    for c in data.chunks(3) {
        let n = (u32::from(c[0]) << 16)
            | (u32::from(*c.get(1).unwrap_or(&0)) << 8)
            | u32::from(*c.get(2).unwrap_or(&0));
        for i in 0..4 {
            if i <= c.len() {
                s.push(T[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                s.push('=');
            }
        }
    }
    s
}

fn step_ret(complete: bool, data: Option<Vec<u8>>) -> Bytes {
    xdr::to_bytes(&AuthSaslStepRet {
        complete: i32::from(complete),
        nil: i32::from(data.is_none()),
        data: SaslData(data.unwrap_or_default()),
    })
    .unwrap()
}

/// The client nonce in the START arguments `args`, if it is a SCRAM client-first message.
fn client_nonce(args: &Bytes) -> Option<String> {
    let start: AuthSaslStartArgs = xdr::from_bytes(args.clone()).ok()?;
    let text = String::from_utf8(start.data.0).ok()?;
    text.split(',')
        .find_map(|kv| kv.strip_prefix("r="))
        .map(str::to_string)
}

fn payload(r: &Reply, last_start: Option<&Bytes>) -> Result<Bytes, CallError> {
    Ok(match r {
        Reply::Raw(b) => Bytes::from(b.clone()),
        Reply::Remote(code) => {
            let w = WireError {
                code: *code,
                domain: 7,
                message: Some(LvString::from("authentication failed")),
                level: 2,
                dom: None,
                str1: None,
                str2: None,
                str3: None,
                int1: -1,
                int2: -1,
                net: None,
            };
            return Err(CallError::from(RemoteError::from(w)));
        }
        Reply::Dead => return Err(CallError::Connection(ConnectionError::PeerClosed)),
        Reply::AuthList(t) => xdr::to_bytes(&AuthListRet {
            types: t.iter().take(20).map(|b| i32::from(*b % 4)).collect(),
        })
        .unwrap(),
        Reply::Mechs(bits) => {
            let list: Vec<&str> = (0..MECHS.len())
                .filter(|i| bits & (1 << i) != 0)
                .map(|i| MECHS[i])
                .collect();
            xdr::to_bytes(&AuthSaslInitRet {
                mechlist: LvString::from(list.join(" ").as_str()),
            })
            .unwrap()
        }
        Reply::Sasl {
            complete,
            nil,
            data,
        } => step_ret(*complete, (!nil).then(|| data.clone())),
        Reply::ScramFirst {
            extend_nonce,
            salt,
            iterations,
            complete,
        } => {
            let nonce = last_start.and_then(client_nonce).unwrap_or_default();
            let nonce = if *extend_nonce {
                format!("{nonce}srv")
            } else {
                "someone-else".into()
            };
            // 255: a count no client should compute (past `MAX_SCRAM_ITERATIONS`, refused
            // before any hashing; without the cap this input would run for hours).
            let i = if *iterations == 255 {
                4_000_000_000
            } else {
                1 + u32::from(*iterations % 64)
            };
            let msg = format!("r={nonce},s={},i={i}", b64(salt));
            step_ret(*complete, Some(msg.into_bytes()))
        }
        Reply::ScramFinal {
            signature,
            complete,
        } => step_ret(
            *complete,
            Some(format!("v={}", b64(signature)).into_bytes()),
        ),
        Reply::Feature(on) => xdr::to_bytes(&ConnectSupportsFeatureRet {
            supported: i32::from(*on),
        })
        .unwrap(),
        Reply::Void => Bytes::new(),
    })
}

fn no_password(what: &str, text: &str) {
    assert!(!text.contains(PASSWORD), "password in {what}: {text}");
}

/// Run one input; panics when an invariant breaks.
pub fn run(input: &Input) {
    assert_eq!(
        tls_accept_status(input.accept).is_ok(),
        input.accept == Some(1),
        "accept byte {:?}",
        input.accept
    );

    let o = &input.opts;
    let mut hs = Handshake::new(HandshakeOptions {
        name: Some("qemu:///system".into()),
        read_only: false,
        keepalive: o.keepalive,
        events: o.events,
        close_callback: o.close_callback,
        sasl: SaslOptions {
            mechanism: o
                .wanted
                .map(|i| MECHS[usize::from(i) % MECHS.len()].to_string()),
            credentials: o
                .credentials
                .then(|| CredentialCallback::fixed(Credentials::new("fuzz", PASSWORD))),
            insecure_transport: o.insecure,
            unverified_peer: o.unverified,
        },
    });
    let mut only_sasl = false;
    let mut sasl_calls = 0;
    let mut last_start: Option<Bytes> = None;
    let mut plain = false;
    let mut calls = 0;
    for r in input.replies.iter().take(MAX_REPLIES) {
        let Some(call) = hs.next_call() else { break };
        calls += 1;
        no_password("a call's Debug", &format!("{call:?}"));
        let is_sasl_step =
            call.procedure == AuthSaslStart::NUMBER || call.procedure == AuthSaslStep::NUMBER;
        if call.procedure == AuthSaslInit::NUMBER || is_sasl_step {
            assert!(!o.insecure, "SASL over plain TCP");
        }
        if is_sasl_step {
            sasl_calls += 1;
            assert!(sasl_calls <= MAX_STEPS + 1, "{sasl_calls} SASL steps");
            if call.procedure == AuthSaslStart::NUMBER {
                plain = xdr::from_bytes::<AuthSaslStartArgs>(call.args.clone())
                    .is_ok_and(|s| s.mech.as_bytes() == b"PLAIN");
                if plain {
                    let asked = o.wanted.map(|i| MECHS[usize::from(i) % MECHS.len()]);
                    assert_eq!(
                        asked,
                        Some("PLAIN"),
                        "PLAIN started without being asked for"
                    );
                    assert!(
                        !o.unverified,
                        "PLAIN to a daemon whose identity is not verified"
                    );
                }
            }
            // A PLAIN response carries the password by design; nothing else may.
            if !plain {
                no_password(
                    "SASL arguments",
                    &String::from_utf8_lossy(&call.args).replace('\0', ""),
                );
            }
        }
        if call.procedure == AuthSaslStart::NUMBER {
            last_start = Some(call.args.clone());
        }
        if call.procedure == ConnectOpen::NUMBER && only_sasl {
            let m = hs.outcome().sasl_mechanism.clone();
            assert!(m.is_some(), "CONNECT_OPEN before SASL finished");
        }
        let reply = payload(r, last_start.as_ref());
        if call.procedure == AuthList::NUMBER {
            if let Ok(p) = &reply {
                if let Ok(l) = xdr::from_bytes::<AuthListRet>(p.clone()) {
                    only_sasl = l.types.contains(&auth_type::SASL)
                        && !l.types.contains(&auth_type::NONE)
                        && !l.types.contains(&auth_type::POLKIT)
                        && !l.types.is_empty();
                }
            }
        }
        let result = hs.handle_reply(reply);
        no_password("the outcome", &format!("{:?}", hs.outcome()));
        if let Some(m) = &hs.outcome().sasl_mechanism {
            assert!(
                !m.starts_with("SCRAM"),
                "SCRAM succeeded without a signature"
            );
        }
        if let Err(e) = result {
            no_password("an error", &format!("{e} {e:?}"));
            return;
        }
    }
    assert!(calls <= MAX_REPLIES);
}

/// Reads the byte format: `accept` (`0xff` = none), option bits, wanted mechanism (`0xff` =
/// none), then replies as a tag byte and fields (byte strings as a length byte and bytes).
/// Short input ends the reply list; it never fails.
pub fn parse(data: &[u8]) -> Input {
    let mut r = Reader(data);
    let accept = match r.u8() {
        0xff => None,
        b => Some(b),
    };
    let bits = r.u8();
    let wanted = match r.u8() {
        0xff => None,
        b => Some(b),
    };
    let opts = Opts {
        keepalive: bits & 1 != 0,
        events: bits & 2 != 0,
        close_callback: bits & 4 != 0,
        insecure: bits & 8 != 0,
        credentials: bits & 16 != 0,
        unverified: bits & 32 != 0,
        wanted,
    };
    let mut replies = Vec::new();
    while !r.0.is_empty() && replies.len() < MAX_REPLIES {
        let reply = match r.u8() % 11 {
            0 => Reply::Raw(r.bytes()),
            1 => Reply::Remote(i32::from(r.u8())),
            2 => Reply::Dead,
            3 => Reply::AuthList(r.bytes()),
            4 => Reply::Mechs(r.u8()),
            5 => {
                let f = r.u8();
                Reply::Sasl {
                    complete: f & 1 != 0,
                    nil: f & 2 != 0,
                    data: r.bytes(),
                }
            }
            6 => {
                let f = r.u8();
                let iterations = u16::from(r.u8());
                Reply::ScramFirst {
                    extend_nonce: f & 1 != 0,
                    complete: f & 2 != 0,
                    iterations,
                    salt: r.bytes(),
                }
            }
            7 => {
                let f = r.u8();
                Reply::ScramFinal {
                    complete: f & 1 != 0,
                    signature: r.bytes(),
                }
            }
            8 => Reply::Feature(r.u8() & 1 != 0),
            _ => Reply::Void,
        };
        replies.push(reply);
    }
    Input {
        accept,
        opts,
        replies,
    }
}

struct Reader<'a>(&'a [u8]);

impl Reader<'_> {
    fn u8(&mut self) -> u8 {
        let Some((&b, rest)) = self.0.split_first() else {
            return 0;
        };
        self.0 = rest;
        b
    }
    fn bytes(&mut self) -> Vec<u8> {
        let n = usize::from(self.u8()).min(self.0.len());
        let (b, rest) = self.0.split_at(n);
        self.0 = rest;
        b.to_vec()
    }
}

/// Writes `input` in the format [`parse`] reads (byte strings are cut at 255).
pub fn encode(input: &Input) -> Vec<u8> {
    let mut w = Vec::new();
    let bytes = |w: &mut Vec<u8>, b: &[u8]| {
        let b = &b[..b.len().min(255)];
        w.push(b.len() as u8);
        w.extend_from_slice(b);
    };
    let o = &input.opts;
    w.push(input.accept.unwrap_or(0xff));
    w.push(
        u8::from(o.keepalive)
            | u8::from(o.events) << 1
            | u8::from(o.close_callback) << 2
            | u8::from(o.insecure) << 3
            | u8::from(o.credentials) << 4
            | u8::from(o.unverified) << 5,
    );
    w.push(o.wanted.unwrap_or(0xff));
    for r in &input.replies {
        match r {
            Reply::Raw(b) => {
                w.push(0);
                bytes(&mut w, b);
            }
            Reply::Remote(c) => w.extend([1, *c as u8]),
            Reply::Dead => w.push(2),
            Reply::AuthList(t) => {
                w.push(3);
                bytes(&mut w, t);
            }
            Reply::Mechs(m) => w.extend([4, *m]),
            Reply::Sasl {
                complete,
                nil,
                data,
            } => {
                w.extend([5, u8::from(*complete) | u8::from(*nil) << 1]);
                bytes(&mut w, data);
            }
            // The fields in the order they are written.
            Reply::ScramFirst {
                extend_nonce,
                complete,
                iterations,
                salt,
            } => {
                w.extend([
                    6,
                    u8::from(*extend_nonce) | u8::from(*complete) << 1,
                    *iterations as u8,
                ]);
                bytes(&mut w, salt);
            }
            Reply::ScramFinal {
                signature,
                complete,
            } => {
                w.extend([7, u8::from(*complete)]);
                bytes(&mut w, signature);
            }
            Reply::Feature(on) => w.extend([8, u8::from(*on)]),
            Reply::Void => w.push(9),
        }
    }
    w
}

/// Decode and run raw fuzz bytes.
pub fn check(data: &[u8]) {
    run(&parse(data));
}

/// Hand-built inputs: the paths a real daemon takes, and the ones a hostile one could, by
/// name (`fuzz/corpus/handshake/seed-<name>`; the testkit's `fuzz_corpus` test checks the
/// files match, and `write_handshake_seeds` rewrites them).
pub fn seeds() -> Vec<(&'static str, Input)> {
    let opts = |credentials, insecure| Opts {
        keepalive: true,
        events: true,
        close_callback: true,
        insecure,
        unverified: false,
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
    // With credentials: the auth list, the mechanisms the daemon offers (bits of `MECHS`),
    // then `then`.
    let sasl = |mechs: u8, then: Vec<Reply>| Input {
        accept: Some(1),
        opts: opts(true, false),
        replies: [sasl_list.clone(), Reply::Mechs(mechs)]
            .into_iter()
            .chain(then)
            .collect(),
    };
    // PLAIN is used only when asked for (`MECHS[2]`).
    let plain = |unverified, then: Vec<Reply>| {
        let mut i = sasl(4, then);
        i.opts.wanted = Some(2);
        i.opts.unverified = unverified;
        i
    };
    let plain_done = Reply::Sasl {
        complete: true,
        nil: true,
        data: vec![],
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
        ("sasl-gssapi-only", sasl(8, vec![])),
        (
            "scram-bad-signature",
            sasl(
                1,
                with_tail(vec![
                    first(true),
                    Reply::ScramFinal {
                        signature: b"forged".to_vec(),
                        complete: true,
                    },
                ]),
            ),
        ),
        ("scram-foreign-nonce", sasl(3, vec![first(false)])),
        (
            "scram-early-success",
            sasl(
                1,
                with_tail(vec![Reply::Sasl {
                    complete: true,
                    nil: true,
                    data: vec![],
                }]),
            ),
        ),
        (
            "scram-rejected",
            sasl(1, vec![first(true), Reply::Remote(45)]),
        ),
        (
            "plain-ok",
            plain(false, with_tail(vec![plain_done.clone()])),
        ),
        (
            "plain-not-asked",
            sasl(4, with_tail(vec![plain_done.clone()])),
        ),
        ("plain-unverified", plain(true, with_tail(vec![plain_done]))),
        (
            "plain-endless",
            plain(
                false,
                std::iter::repeat_n(
                    Reply::Sasl {
                        complete: false,
                        nil: false,
                        data: vec![],
                    },
                    40,
                )
                .collect(),
            ),
        ),
    ]
}
