//! The errors a program holds are small: `Error` is at most 32 bytes, and no public error
//! reaches clippy's `result_large_err` threshold (128 bytes), so neither this workspace nor a
//! user's program needs that allowance. What is large and rare (libvirt's `RemoteError`, each
//! layer's error inside `Error`) is boxed.

use std::mem::size_of;

use libvirt_remote::client::uri::UriError;
use libvirt_remote::client::{MigrateError, TransferError};
use libvirt_remote::conn::handshake::HandshakeError;
use libvirt_remote::conn::sasl::SaslError;
use libvirt_remote::conn::{CallError, ConnectionError, ProtocolViolation, StreamError};
use libvirt_remote::{ConnectError, Error};

/// clippy's default `large-error-threshold`.
const CLIPPY_LARGE_ERROR: usize = 128;

#[test]
fn error_is_at_most_32_bytes() {
    let size = size_of::<Error>();
    assert!(
        size <= 32,
        "size_of::<libvirt_remote::Error>() = {size} bytes, over 32"
    );
    // `Result<(), Error>` stays as small: the box's niche holds `Ok`.
    assert_eq!(size_of::<Result<(), Error>>(), size);
}

#[test]
fn every_public_error_is_under_clippys_threshold() {
    let mut sizes = vec![
        ("CallError", size_of::<CallError>()),
        ("StreamError", size_of::<StreamError>()),
        ("TransferError", size_of::<TransferError>()),
        ("ConnectError", size_of::<ConnectError>()),
        ("ConnectionError", size_of::<ConnectionError>()),
        ("ProtocolViolation", size_of::<ProtocolViolation>()),
        ("HandshakeError", size_of::<HandshakeError>()),
        ("SaslError", size_of::<SaslError>()),
        ("MigrateError", size_of::<MigrateError>()),
        ("UriError", size_of::<UriError>()),
    ];
    #[cfg(feature = "tls")]
    sizes.push((
        "TlsError",
        size_of::<libvirt_remote::client::tls::TlsError>(),
    ));
    #[cfg(feature = "ssh")]
    sizes.push(("SshError", size_of::<ssh_socket::SshError>()));
    let large: Vec<_> = sizes
        .iter()
        .filter(|(_, s)| *s >= CLIPPY_LARGE_ERROR)
        .collect();
    assert!(
        large.is_empty(),
        "errors at or over {CLIPPY_LARGE_ERROR} bytes: {large:?}"
    );
}
