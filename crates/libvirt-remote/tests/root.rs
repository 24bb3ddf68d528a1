//! The crate root stays small (issue 34 item 2; docs/decisions.md, "One name per concept"): it
//! holds what a first program names, and the names that moved to their layer stay there. A
//! compile test: the first `use` fails if a root name goes away; `moved_names_are_not_at_the_root`
//! fails to compile (an ambiguous glob) if one of the moved names comes back to the root.
#![cfg(feature = "client")]
#![allow(unused_imports, dead_code)]
#![deny(ambiguous_glob_imports)]

// Everything the root holds (with feature `blocking` also `blocking`; `xml`: `xml`; `ssh`:
// `ssh_socket`). The table macros are documented in their modules (a hidden `__name` stays at
// the root, where `#[macro_export]` puts it).
use libvirt_remote::{
    Client, Connect, ConnectError, ConnectOptions, Domain, DomainCheckpoint, DomainSnapshot, Error,
    Interface, Network, NetworkPort, NodeDevice, NwFilter, NwFilterBinding, Secret, StoragePool,
    StorageVol, client, conn, prelude, proto, wire,
};

/// The names that moved off the root, once: stand-ins named as each (`mod moved`) and a use
/// of each in type position. If the root re-exported one again, the two globs would make it
/// ambiguous there.
macro_rules! moved_names {
    ($($name:ident),* $(,)?) => {
        mod moved {
            $(pub struct $name;)*
        }

        #[test]
        fn moved_names_are_not_at_the_root() {
            use libvirt_remote::*;
            use moved::*;
            // Type position: the stand-ins and the real types share the type namespace.
            $(
                let none: Option<$name> = None;
                assert!(none.is_none());
            )*
        }
    };
}

moved_names!(
    CallError,
    CloseReason,
    Connection,
    ConnectionError,
    ErrorCode,
    ErrorDomain,
    ErrorPredicates,
    HandshakeError,
    KeyFileError,
    LvString,
    Pool,
    PoolOptions,
    Procedure,
    ProtocolViolation,
    RemoteError,
    SaslError,
    SshError,
    StreamError,
    StreamMisuse,
    TlsError,
    TransferError,
);

/// The one path of each moved name (a moved name that also left its module fails here).
#[test]
fn moved_names_have_one_home() {
    #[cfg(feature = "tls")]
    use libvirt_remote::client::tls::TlsError;
    use libvirt_remote::client::{Pool, PoolOptions, TransferError};
    use libvirt_remote::conn::handshake::HandshakeError;
    use libvirt_remote::conn::sasl::SaslError;
    use libvirt_remote::conn::{
        CallError, Connection, ConnectionError, ErrorPredicates, ProtocolViolation, StreamError,
        StreamMisuse,
    };
    use libvirt_remote::proto::flags::flag_set;
    use libvirt_remote::proto::{ErrorCode, ErrorDomain, Procedure, RemoteError, procedures};
    #[cfg(feature = "ssh")]
    use libvirt_remote::ssh_socket::{CloseReason, KeyFileError, SshError};
    use libvirt_remote::wire::xdr::{LvString, xdr_struct};
}
