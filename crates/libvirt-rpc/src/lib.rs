//! The libvirt remote protocol, in Rust, without libvirt.
//!
//! **Scope.** Everything needed to talk to `libvirtd` (or `virtqemud`/`virtproxyd`) over a
//! byte stream: packet framing, bounded XDR, a typed procedure table, the connection state
//! machine (calls multiplexed by serial, upload/download streams including sparse holes,
//! keepalive, events), the opening handshake, and — behind the default `client` feature — a
//! thin tokio driver over any `AsyncRead + AsyncWrite`.
//!
//! **Non-scope.** Dialling SSH (see the `ssh-socket` crate), SASL and TLS authentication,
//! file-descriptor passing (it cannot cross an SSH forward), and domain XML.
//!
//! ```text
//!   your code ──▶ client (tokio, feature "client") ──▶ conn::Connection (sans-io) ──▶ proto ──▶ wire
//!                  one driver task: socket ⇄ bytes        calls, streams, keepalive,     types,   framing,
//!                  timers ⇄ handle_timeout               events; time is an input      procs    bounded XDR
//! ```
//!
//! The layers below `client` never touch a socket, a clock or a runtime: the same core runs
//! the client, the tests' scripted peer and the fuzz targets (both in the unpublished
//! `libvirt-rpc-testkit` crate).
#![forbid(unsafe_code)]
// Errors carry libvirt's complete `remote_error` by design; they are rare and not worth a box.
#![allow(clippy::result_large_err)]

#[cfg(feature = "client")]
pub mod client;
pub mod conn;
pub mod proto;
pub mod wire;

#[cfg(feature = "tls")]
pub use client::TlsError;
#[cfg(feature = "client")]
pub use client::{Client, ConnectError, ConnectOptions, Error, TransferError};
pub use conn::handshake::HandshakeError;
pub use conn::sasl::SaslError;
pub use conn::{
    CallError, Connection, ConnectionError, ProtocolViolation, StreamError, StreamMisuse,
};
pub use proto::{ErrorCode, ErrorDomain, Procedure, RemoteError};
/// The SSH transport (feature `ssh`), for [`client::SshOptions`]: config file, credentials.
#[cfg(feature = "ssh")]
pub use ssh_socket;
/// The SSH transport's errors (feature `ssh`), re-exported so that matching on
/// [`ConnectError::Ssh`] needs no direct dependency on `ssh-socket`.
#[cfg(feature = "ssh")]
pub use ssh_socket::{CloseReason, KeyFileError, SshError};
pub use wire::xdr::LvString;

/// The README's examples, compiled and run as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
