//! Every error formats its cause or returns it as its source, never both: walking any
//! error's `source()` chain shows each message once. And the predicates a caller needs
//! answer for the errors they name.

use std::error::Error as StdError;
use std::io;

use libvirt_remote::client::TransferError;
use libvirt_remote::client::tls::TlsError;
use libvirt_remote::client::uri::UriError;
use libvirt_remote::conn::handshake::HandshakeError;
use libvirt_remote::conn::sasl::SaslError;
use libvirt_remote::conn::{
    CallError, ConnectionError, ErrorPredicates, ProtocolViolation, StreamError, StreamMisuse,
};
use libvirt_remote::proto::{ErrorCode, ErrorDomain, RemoteError};
use libvirt_remote::wire::frame::FrameError;
use libvirt_remote::wire::xdr::{DecodeError, EncodeError};
use libvirt_remote::{ConnectError, Error};

fn not_found() -> RemoteError {
    RemoteError::new(
        ErrorCode::NO_DOMAIN,
        ErrorDomain::QEMU,
        "Domain not found: no domain with matching name 'x'",
    )
}

fn violation() -> ProtocolViolation {
    ProtocolViolation::Frame(FrameError::TooLong(1 << 30))
}

fn dead() -> ConnectionError {
    ConnectionError::Protocol(violation())
}

fn decode() -> DecodeError {
    DecodeError::InvalidEnum {
        what: "typed parameter type",
        value: 99,
    }
}

fn encode() -> EncodeError {
    EncodeError::TooLong { len: 9, max: 8 }
}

fn handshake_errors() -> Vec<HandshakeError> {
    vec![
        HandshakeError::Call {
            step: "CONNECT_OPEN",
            error: CallError::Remote(Box::new(not_found())),
        },
        HandshakeError::Call {
            step: "AUTH_LIST",
            error: CallError::Connection(dead()),
        },
        HandshakeError::Decode {
            step: "AUTH_LIST",
            error: decode(),
        },
        HandshakeError::Sasl(SaslError::NoCredentials {
            mechanism: "SCRAM-SHA-256".into(),
        }),
        HandshakeError::AuthRejected {
            mechanism: "PLAIN".into(),
            error: Box::new(RemoteError::new(
                ErrorCode::AUTH_FAILED,
                ErrorDomain::RPC,
                "bad password",
            )),
        },
    ]
}

fn call_errors() -> Vec<CallError> {
    vec![
        CallError::Remote(Box::new(not_found())),
        CallError::Connection(dead()),
        CallError::Connection(ConnectionError::transport(&io::Error::new(
            io::ErrorKind::BrokenPipe,
            "broken pipe",
        ))),
        CallError::Encode(encode()),
        CallError::Frame(FrameError::EncodeTooLong(1 << 30)),
        CallError::TimedOut,
    ]
}

fn stream_errors() -> Vec<StreamError> {
    vec![
        StreamError::Remote(Box::new(not_found())),
        StreamError::Connection(dead()),
        StreamError::Misuse(StreamMisuse::NotSparse),
        StreamError::Encode(encode()),
        StreamError::Frame(FrameError::EncodeTooLong(1 << 30)),
        StreamError::Aborted {
            reason: "the source failed".into(),
            server: Some(Box::new(not_found())),
        },
    ]
}

fn connect_errors() -> Vec<ConnectError> {
    let mut v = vec![
        ConnectError::Uri(UriError::Missing("add ?socket=PATH".into())),
        ConnectError::Dial {
            target: "/run/libvirt/libvirt-sock".into(),
            error: io::Error::new(io::ErrorKind::NotFound, "No such file or directory"),
        },
        ConnectError::Tls(TlsError::UnknownCa {
            host: "h".into(),
            reason: "UnknownIssuer".into(),
        }),
    ];
    v.extend(handshake_errors().into_iter().map(ConnectError::Handshake));
    #[cfg(feature = "ssh")]
    v.extend(
        ssh_errors()
            .into_iter()
            .map(|e| ConnectError::Ssh(Box::new(e))),
    );
    v
}

#[cfg(feature = "ssh")]
fn ssh_errors() -> Vec<ssh_socket::SshError> {
    use libvirt_remote::ssh_socket::{CloseReason, KeyFileError, SshError};
    vec![
        SshError::Connect {
            addr: "127.0.0.1:22".into(),
            error: io::Error::new(io::ErrorKind::ConnectionRefused, "Connection refused"),
        },
        SshError::HostKeyUnknown {
            host: "h".into(),
            key_type: "ssh-ed25519".into(),
            fingerprint: "SHA256:x".into(),
            known_hosts: vec!["/k".into()],
        },
        SshError::KeyFile {
            path: "/id".into(),
            reason: KeyFileError::EncryptedKeyNoPassphrase,
        },
        SshError::Closed {
            reason: CloseReason::KeepaliveTimeout,
        },
    ]
}

fn transfer_errors() -> Vec<TransferError> {
    let mut v: Vec<_> = stream_errors()
        .into_iter()
        .map(TransferError::Stream)
        .collect();
    v.push(TransferError::Local(io::Error::new(
        io::ErrorKind::UnexpectedEof,
        "short read",
    )));
    v
}

/// Every error value the client can hand out, as the unified [`Error`] and as itself.
fn all() -> Vec<Box<dyn StdError + Send + Sync>> {
    let mut v: Vec<Box<dyn StdError + Send + Sync>> = Vec::new();
    for e in call_errors() {
        v.push(Box::new(e.clone()));
        v.push(Box::new(Error::from(e)));
    }
    for e in stream_errors() {
        v.push(Box::new(e.clone()));
        v.push(Box::new(Error::from(e)));
    }
    for e in handshake_errors() {
        v.push(Box::new(e));
    }
    for e in connect_errors() {
        v.push(Box::new(e));
    }
    for e in connect_errors() {
        v.push(Box::new(Error::from(e)));
    }
    for e in transfer_errors() {
        v.push(Box::new(e));
    }
    for e in transfer_errors() {
        v.push(Box::new(Error::from(e)));
    }
    v.push(Box::new(dead()));
    v.push(Box::new(ConnectionError::locally_closed("budget ran out")));
    v.push(Box::new(violation()));
    v
}

#[test]
fn no_message_repeats_along_a_source_chain() {
    let mut problems = Vec::new();
    let mut chains = 0;
    for top in all() {
        chains += 1;
        let mut seen: Vec<String> = Vec::new();
        let mut next: Option<&(dyn StdError + 'static)> = Some(top.as_ref());
        while let Some(e) = next {
            let msg = e.to_string();
            assert!(!msg.is_empty(), "{e:?} has an empty message");
            if let Some(outer) = seen.iter().find(|o| o.contains(&msg)) {
                problems.push(format!(
                    "{top:?}:\n  {outer:?}\n  repeats its source's message {msg:?}"
                ));
            }
            seen.push(msg);
            next = e.source();
        }
    }
    assert!(chains >= 40, "only {chains} errors checked");
    assert!(
        problems.is_empty(),
        "{} errors print a cause twice:\n{}",
        problems.len(),
        problems.join("\n")
    );
}

#[test]
fn a_daemon_error_reads_once_and_keeps_its_code() {
    let e = Error::from(CallError::Remote(Box::new(not_found())));
    assert_eq!(e.to_string(), not_found().to_string());
    assert!(
        e.source().is_none(),
        "the daemon's error is the whole message"
    );
    assert_eq!(e.remote().map(|r| r.code), Some(ErrorCode::NO_DOMAIN));
    assert!(e.is_not_found());
    assert!(!e.is_connection_dead() && !e.is_auth() && !e.is_unreachable());
}

#[test]
fn predicates_name_what_failed() {
    let dial = ConnectError::Dial {
        target: "/s".into(),
        error: io::Error::from(io::ErrorKind::ConnectionRefused),
    };
    assert!(dial.is_unreachable() && !dial.is_auth() && !dial.is_host_key());
    assert!(dial.to_string().contains("refused"), "{dial}");

    let rejected = ConnectError::Handshake(HandshakeError::AuthRejected {
        mechanism: "PLAIN".into(),
        error: Box::new(RemoteError::new(
            ErrorCode::AUTH_FAILED,
            ErrorDomain::RPC,
            "bad password",
        )),
    });
    assert!(rejected.is_auth() && !rejected.is_unreachable());
    assert_eq!(
        rejected.remote().map(|r| r.code),
        Some(ErrorCode::AUTH_FAILED)
    );

    let died = ConnectError::Handshake(HandshakeError::Call {
        step: "CONNECT_OPEN",
        error: CallError::Connection(ConnectionError::PeerClosed),
    });
    assert!(died.is_connection_dead() && !died.is_auth());

    let wrong_driver = ConnectError::Handshake(HandshakeError::Call {
        step: "CONNECT_OPEN",
        error: CallError::Remote(Box::new(not_found())),
    });
    assert!(wrong_driver.is_not_found() && !wrong_driver.is_connection_dead());

    let tls = ConnectError::Tls(TlsError::UnknownCa {
        host: "h".into(),
        reason: "UnknownIssuer".into(),
    });
    assert!(tls.tls().is_some_and(TlsError::is_server_untrusted));
    assert!(
        !tls.is_host_key(),
        "is_host_key is SSH's; TLS has is_server_untrusted"
    );

    let call = CallError::Connection(dead());
    assert!(call.is_connection_dead() && call.connection() == Some(&dead()));
    let denied = CallError::from(RemoteError::new(
        ErrorCode::ACCESS_DENIED,
        ErrorDomain::NONE,
        "access denied",
    ));
    assert!(denied.is_auth() && Error::from(denied).is_auth());

    let aborted = StreamError::Aborted {
        reason: "source failed".into(),
        server: Some(Box::new(not_found())),
    };
    assert!(
        aborted.is_not_found(),
        "the daemon's answer to the abort is its remote()"
    );
    assert!(StreamError::Connection(dead()).is_connection_dead());

    let local = TransferError::Local(io::Error::other("disk full"));
    assert!(local.is_local() && local.remote().is_none() && !local.is_connection_dead());
    let t = TransferError::Stream(StreamError::Connection(dead()));
    assert!(t.is_connection_dead() && Error::from(t).is_connection_dead());
}

#[cfg(feature = "ssh")]
#[test]
fn ssh_predicates_need_no_ssh_socket_dependency() {
    use libvirt_remote::ssh_socket::SshError;
    let [connect, host_key, key_file, closed] = ssh_errors().try_into().unwrap();
    let c = |e: SshError| ConnectError::Ssh(Box::new(e));
    assert!(c(connect).is_unreachable());
    let hk = c(host_key);
    assert!(hk.is_host_key() && !hk.is_auth() && Error::from(hk).is_host_key());
    assert!(c(key_file).is_auth());
    let closed = c(closed);
    assert!(closed.ssh().and_then(SshError::close_reason).is_some());
    assert!(!closed.is_host_key() && !closed.is_unreachable());
}

/// What [`ErrorPredicates`] answers for `e`: the daemon's code, not found, auth, dead.
fn ask<E: ErrorPredicates>(e: &E) -> (Option<ErrorCode>, bool, bool, bool) {
    (
        e.remote().map(|r| r.code),
        e.is_not_found(),
        e.is_auth(),
        e.is_connection_dead(),
    )
}

/// The common questions have one answer per error, whichever type carries it: asked the one
/// way ([`ErrorPredicates`], as generic code asks) of every error type, and through
/// [`Error`], which wraps the client's.
#[test]
fn every_error_type_answers_the_common_questions_alike() {
    let denied = || RemoteError::new(ErrorCode::ACCESS_DENIED, ErrorDomain::NONE, "denied");
    let not_found_ = (Some(ErrorCode::NO_DOMAIN), true, false, false);
    let denied_ = (Some(ErrorCode::ACCESS_DENIED), false, true, false);
    let dead_ = (None, false, false, true);
    let nothing = (None, false, false, false);

    let calls = [
        (CallError::Remote(Box::new(not_found())), not_found_),
        (CallError::Remote(Box::new(denied())), denied_),
        (CallError::Connection(dead()), dead_),
        (CallError::TimedOut, nothing),
    ];
    for (e, want) in calls {
        assert_eq!(ask(&e), want, "{e:?}");
        let step = "CONNECT_OPEN";
        let hs = HandshakeError::Call {
            step,
            error: e.clone(),
        };
        assert_eq!(ask(&hs), want, "{hs:?}");
        let connect = ConnectError::Handshake(hs);
        assert_eq!(ask(&connect), want, "{connect:?}");
        assert_eq!(ask(&Error::from(connect)), want);
        assert_eq!(ask(&Error::from(e)), want);
    }

    let streams = [
        (StreamError::Remote(Box::new(not_found())), not_found_),
        (
            StreamError::Aborted {
                reason: "source failed".into(),
                server: Some(Box::new(denied())),
            },
            denied_,
        ),
        (StreamError::Connection(dead()), dead_),
        (StreamError::UnexpectedHole, nothing),
    ];
    for (e, want) in streams {
        assert_eq!(ask(&e), want, "{e:?}");
        let t = TransferError::Stream(e.clone());
        assert_eq!(ask(&t), want, "{t:?}");
        assert_eq!(ask(&Error::from(t)), want);
        assert_eq!(ask(&Error::from(e)), want);
    }
    let local = TransferError::Local(io::Error::other("disk full"));
    assert_eq!(ask(&local), nothing);

    // Refusals on this side of the link: auth, without a daemon error to read.
    let no_credentials = HandshakeError::TlsRefused {
        detail: "EOF".into(),
    };
    assert_eq!(ask(&no_credentials), (None, false, true, false));
    let connect = ConnectError::Handshake(no_credentials);
    assert_eq!(ask(&connect), (None, false, true, false));
    assert_eq!(ask(&Error::from(connect)), (None, false, true, false));
    let rejected = HandshakeError::AuthRejected {
        mechanism: "PLAIN".into(),
        error: Box::new(RemoteError::new(
            ErrorCode::AUTH_FAILED,
            ErrorDomain::RPC,
            "bad password",
        )),
    };
    assert_eq!(
        ask(&rejected),
        (Some(ErrorCode::AUTH_FAILED), false, true, false)
    );

    // The inherent methods are the same answers (asking needs no import).
    let e = Error::from(CallError::Remote(Box::new(not_found())));
    assert_eq!(
        (
            e.remote().map(|r| r.code),
            e.is_not_found(),
            e.is_auth(),
            e.is_connection_dead()
        ),
        ask(&e)
    );
}
