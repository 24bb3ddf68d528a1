//! The one mapping from everything below the provider (libvirt calls, streams, transfers,
//! connects, SSH) to the contract's [`ErrorKind`].
//!
//! [`LvError`] is the single error type of the libvirt layer; [`kind`] decides its kind and
//! [`code_kind`] is the per-code table it uses for the daemon's own errors. Callers that know
//! better wrap explicitly instead of relying on the table: the address read (H3) turns every
//! failure into `Transient`, because an `ARGUMENT_UNSUPPORTED` from the agent source ("guest
//! agent is not configured") says nothing about whether the operator must act.
//!
//! The table (also in `docs/kvm2-provider.md`):
//!
//! | code(s) | kind | why |
//! | --- | --- | --- |
//! | `NO_DOMAIN`, `NO_STORAGE_VOL` | `NotFound` | the object is gone on a host that answered |
//! | `NO_STORAGE_POOL` | Permanent | the configured pool is missing or inactive: create/start it |
//! | `NO_NETWORK` | Permanent | the configured libvirt network is missing |
//! | `INVALID_ARG`, `XML_ERROR`, `XML_DETAIL`, `XML_INVALID_SCHEMA`, `CONFIG_UNSUPPORTED` | Permanent | what we sent cannot work on this host (config or a bug) |
//! | `NO_SUPPORT`, `ARGUMENT_UNSUPPORTED`, `OPERATION_UNSUPPORTED`, `CPU_INCOMPATIBLE` | Permanent | the host lacks a feature |
//! | `OPERATION_DENIED`, `ACCESS_DENIED`, `AUTH_FAILED`, `AUTH_CANCELLED`, `AUTH_UNAVAILABLE` | Permanent | credentials or permissions |
//! | `NO_DOMAIN_METADATA` | Permanent | a domain with our name that we did not make (callers handle it first) |
//! | `SYSTEM_ERROR` with errno `EPERM`, `EACCES`, `EROFS` | Permanent | file permissions on the host |
//! | every other code (`INTERNAL_ERROR`, `SYSTEM_ERROR` otherwise (incl. `ENOSPC`), `OPERATION_FAILED`, `OPERATION_INVALID`, `OPERATION_TIMEOUT`, `RPC`, `AGENT_*`, `RESOURCE_BUSY`, `STORAGE_VOL_EXIST`, `DOM_EXIST`, `INVALID_*`, unknown codes) | Transient | may succeed later unchanged; when unsure, Transient (contract rule 4) |
//!
//! Outside the daemon's codes: a dead or closed link, a call or transfer over its budget, an
//! SSH session that ended → Transient. A failed dial goes by the contract's
//! [`classify_io`]: refused, reset, unreachable or a missing socket (the daemon is down) →
//! Transient; permission denied or a path that cannot name a socket → Permanent. An unusable
//! URI, unsupported authentication, SSH host-key and credential failures, an argument over a
//! protocol limit → Permanent.

use std::io;
use std::sync::Arc;
use std::time::Duration;

use egress_provider::{ErrorKind, ProviderError, classify_io};
use libvirt_remote::client::tls::TlsError;
use libvirt_remote::client::{ConnectError, TransferError};
use libvirt_remote::conn::handshake::HandshakeError;
use libvirt_remote::conn::{CallError, StreamError};
use libvirt_remote::proto::{ErrorCode, RemoteError};

/// Why something below the provider failed. Cheap to clone (a dead link's reason is handed
/// to every caller that was waiting on it).
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum LvError {
    /// A call failed (the daemon's error, or an argument that cannot be sent).
    #[error("{0}")]
    Call(CallError),
    /// A stream (upload or download) failed.
    #[error("stream failed: {0}")]
    Stream(StreamError),
    /// The local side of a transfer failed (e.g. the HTTP body of an image).
    #[error("transfer source failed: {0}")]
    Local(Arc<io::Error>),
    /// A link could not be opened (dial, SSH transport or handshake).
    #[error("cannot connect to {uri}: {error}")]
    Connect {
        /// The URI dialled.
        uri: String,
        /// What failed (formatted in the message, so not also the source).
        error: Arc<ConnectError>,
    },
    /// The link is dead (marked dead by a budget overrun, a connection error or a close);
    /// `reason` is the first reason given.
    #[error("the libvirt link is dead: {reason}")]
    Dead {
        /// Why it was marked dead.
        reason: Arc<str>,
    },
    /// An operation ran out of its budget.
    #[error("{what} did not finish within its budget of {budget:?}")]
    Budget {
        /// What ran out of time.
        what: String,
        /// The budget.
        budget: Duration,
    },
}

impl LvError {
    /// The daemon's error, if this is one.
    pub fn remote(&self) -> Option<&RemoteError> {
        match self {
            Self::Call(CallError::Remote(e)) | Self::Stream(StreamError::Remote(e)) => Some(e),
            _ => None,
        }
    }

    /// The daemon's error code, if this is a daemon error.
    pub fn code(&self) -> Option<ErrorCode> {
        self.remote().map(|e| e.code)
    }

    /// The daemon said the named domain or volume does not exist.
    pub fn is_not_found(&self) -> bool {
        matches!(
            self.code(),
            Some(ErrorCode::NO_DOMAIN | ErrorCode::NO_STORAGE_VOL)
        )
    }

    /// The daemon said: no such domain.
    pub fn is_no_domain(&self) -> bool {
        self.code() == Some(ErrorCode::NO_DOMAIN)
    }

    /// The link carrying the call is gone (this call and every later one on it fail).
    pub fn is_dead_link(&self) -> bool {
        matches!(
            self,
            Self::Dead { .. }
                | Self::Call(CallError::Connection(_) | CallError::TimedOut)
                | Self::Stream(StreamError::Connection(_))
        )
    }
}

impl From<CallError> for LvError {
    fn from(e: CallError) -> Self {
        Self::Call(e)
    }
}

impl From<StreamError> for LvError {
    fn from(e: StreamError) -> Self {
        Self::Stream(e)
    }
}

impl From<TransferError> for LvError {
    fn from(e: TransferError) -> Self {
        match e {
            TransferError::Stream(s) => Self::Stream(s),
            TransferError::Local(io) => Self::Local(Arc::new(io)),
            // `TransferError` is non-exhaustive: keep whatever a newer version adds.
            other => Self::Local(Arc::new(io::Error::other(other.to_string()))),
        }
    }
}

/// The kind of a daemon error code. The table is in the module docs.
pub fn code_kind(code: ErrorCode) -> ErrorKind {
    match code {
        ErrorCode::NO_DOMAIN | ErrorCode::NO_STORAGE_VOL => ErrorKind::NotFound,
        ErrorCode::NO_STORAGE_POOL
        | ErrorCode::NO_NETWORK
        | ErrorCode::INVALID_ARG
        | ErrorCode::XML_ERROR
        | ErrorCode::XML_DETAIL
        | ErrorCode::XML_INVALID_SCHEMA
        | ErrorCode::CONFIG_UNSUPPORTED
        | ErrorCode::NO_SUPPORT
        | ErrorCode::ARGUMENT_UNSUPPORTED
        | ErrorCode::OPERATION_UNSUPPORTED
        | ErrorCode::CPU_INCOMPATIBLE
        | ErrorCode::OPERATION_DENIED
        | ErrorCode::ACCESS_DENIED
        | ErrorCode::AUTH_FAILED
        | ErrorCode::AUTH_CANCELLED
        | ErrorCode::AUTH_UNAVAILABLE
        | ErrorCode::NO_DOMAIN_METADATA => ErrorKind::Permanent,
        _ => ErrorKind::Transient,
    }
}

fn remote_kind(e: &RemoteError) -> ErrorKind {
    // EPERM, EACCES (permission denied) and EROFS (read-only file system), by the OS's own
    // errno table rather than numbers written here again.
    let file_permissions = e.errno().is_some_and(|n| {
        matches!(
            io::Error::from_raw_os_error(n).kind(),
            io::ErrorKind::PermissionDenied | io::ErrorKind::ReadOnlyFilesystem
        )
    });
    if e.code == ErrorCode::SYSTEM_ERROR && file_permissions {
        return ErrorKind::Permanent;
    }
    code_kind(e.code)
}

fn call_kind(e: &CallError) -> ErrorKind {
    match e {
        CallError::Remote(r) => remote_kind(r),
        // Nothing was sent: an argument over a protocol limit (a 4 MiB XML, say). The
        // spec or the configuration has to change.
        CallError::Encode(_) | CallError::Frame(_) => ErrorKind::Permanent,
        // Connection death, timeouts and anything newer.
        _ => ErrorKind::Transient,
    }
}

fn connect_kind(e: &ConnectError) -> ErrorKind {
    match e {
        ConnectError::Uri(_) | ConnectError::Unsupported(_) => ErrorKind::Permanent,
        // The contract's rule for I/O errors: a socket we may not open or a path that cannot
        // name one needs a human; refused, reset, missing (the daemon is down or restarting)
        // and unreachable may come back by themselves.
        ConnectError::Dial { error, .. } => classify_io(error.kind()),
        ConnectError::Ssh(e) => ssh_kind(e),
        ConnectError::Handshake(h) => match h {
            HandshakeError::Call { error, .. } => call_kind(error),
            // Credentials, certificates and mechanisms need a human.
            HandshakeError::UnsupportedAuth(_)
            | HandshakeError::PolkitIncomplete
            | HandshakeError::Sasl(_)
            | HandshakeError::AuthRejected { .. }
            | HandshakeError::TlsRefused { .. } => ErrorKind::Permanent,
            _ => ErrorKind::Transient,
        },
        // Missing PKI files and an untrusted server certificate need a human; a handshake
        // that failed otherwise may be a daemon restarting.
        ConnectError::Tls(t) => match t {
            TlsError::Handshake { .. } => ErrorKind::Transient,
            _ => ErrorKind::Permanent,
        },
        _ => ErrorKind::Transient,
    }
}

fn ssh_kind(e: &ssh_socket::SshError) -> ErrorKind {
    use ssh_socket::SshError as S;
    // A jump host's error classifies as the hop's own: a wrong bastion key is as permanent
    // as a wrong target key.
    let e = e.innermost();
    if e.is_host_key() {
        return ErrorKind::Permanent;
    }
    match e {
        S::Config { .. } | S::KeyFile { .. } | S::KnownHosts { .. } | S::Auth { .. } => {
            ErrorKind::Permanent
        }
        _ => ErrorKind::Transient,
    }
}

/// The kind of any error of the libvirt layer: the one mapping function.
pub fn kind(e: &LvError) -> ErrorKind {
    match e {
        LvError::Call(c) => call_kind(c),
        LvError::Stream(s) => match s {
            StreamError::Remote(r) => remote_kind(r),
            // Nothing was sent: the opening call's arguments are over a protocol limit.
            StreamError::Encode(_) | StreamError::Frame(_) => ErrorKind::Permanent,
            // Aborted, connection death, protocol oddities: retry.
            _ => ErrorKind::Transient,
        },
        LvError::Connect { error, .. } => connect_kind(error),
        LvError::Local(_) | LvError::Dead { .. } | LvError::Budget { .. } => ErrorKind::Transient,
    }
}

/// A [`ProviderError`] for `err` with the operator-facing `context` ("define domain x"),
/// kind from [`kind`], the error kept as the source. Adds the advice the operator needs
/// where the kind is `Permanent` for a reason they can fix.
pub fn provider_error(context: impl Into<String>, err: LvError) -> ProviderError {
    let mut message = context.into();
    if err.code() == Some(ErrorCode::NO_STORAGE_POOL) {
        message.push_str(
            ": the storage pool does not exist or is not active on this host; create and \
             start it (virsh pool-define-as NAME dir --target DIR; virsh pool-build NAME; \
             virsh pool-start NAME; virsh pool-autostart NAME) or fix `pool` in the entry",
        );
    }
    ProviderError::new(kind(&err), message).with_source(err)
}

/// The same error explicitly `Transient`, whatever its code: for callers whose failures
/// never mean "operator must act" (the address read).
pub fn transient(context: impl Into<String>, err: LvError) -> ProviderError {
    ProviderError::transient(context).with_source(err)
}

#[cfg(test)]
mod tests {
    use super::*;
    use libvirt_remote::conn::ConnectionError;
    use libvirt_remote::proto::ErrorDomain;

    fn remote(code: ErrorCode) -> RemoteError {
        RemoteError::new(code, ErrorDomain::NONE, "m")
    }

    fn call(code: ErrorCode) -> LvError {
        LvError::Call(CallError::from(remote(code)))
    }

    #[test]
    fn table_per_code() {
        use ErrorKind::{NotFound, Permanent, Transient};
        let table = [
            (ErrorCode::NO_DOMAIN, NotFound),
            (ErrorCode::NO_STORAGE_VOL, NotFound),
            (ErrorCode::NO_STORAGE_POOL, Permanent),
            (ErrorCode::NO_NETWORK, Permanent),
            (ErrorCode::INVALID_ARG, Permanent),
            (ErrorCode::XML_ERROR, Permanent),
            (ErrorCode::XML_DETAIL, Permanent),
            (ErrorCode::XML_INVALID_SCHEMA, Permanent),
            (ErrorCode::CONFIG_UNSUPPORTED, Permanent),
            (ErrorCode::NO_SUPPORT, Permanent),
            (ErrorCode::ARGUMENT_UNSUPPORTED, Permanent),
            (ErrorCode::OPERATION_UNSUPPORTED, Permanent),
            (ErrorCode::CPU_INCOMPATIBLE, Permanent),
            (ErrorCode::OPERATION_DENIED, Permanent),
            (ErrorCode::ACCESS_DENIED, Permanent),
            (ErrorCode::AUTH_FAILED, Permanent),
            (ErrorCode::AUTH_CANCELLED, Permanent),
            (ErrorCode::AUTH_UNAVAILABLE, Permanent),
            (ErrorCode::NO_DOMAIN_METADATA, Permanent),
            (ErrorCode::INTERNAL_ERROR, Transient),
            (ErrorCode::NO_MEMORY, Transient),
            (ErrorCode::SYSTEM_ERROR, Transient),
            (ErrorCode::OPERATION_FAILED, Transient),
            (ErrorCode::OPERATION_INVALID, Transient),
            (ErrorCode::OPERATION_TIMEOUT, Transient),
            (ErrorCode::OPERATION_ABORTED, Transient),
            (ErrorCode::RPC, Transient),
            (ErrorCode::AGENT_UNRESPONSIVE, Transient),
            (ErrorCode::AGENT_UNSYNCED, Transient),
            (ErrorCode::AGENT_COMMAND_TIMEOUT, Transient),
            (ErrorCode::AGENT_COMMAND_FAILED, Transient),
            (ErrorCode::RESOURCE_BUSY, Transient),
            (ErrorCode::STORAGE_VOL_EXIST, Transient),
            (ErrorCode::DOM_EXIST, Transient),
            (ErrorCode::INVALID_DOMAIN, Transient),
            (ErrorCode::INVALID_CONN, Transient),
            (ErrorCode::INVALID_STORAGE_VOL, Transient),
            (ErrorCode(9999), Transient),
        ];
        for (code, want) in table {
            assert_eq!(code_kind(code), want, "{code}");
            assert_eq!(kind(&call(code)), want, "{code} through a call");
            assert_eq!(
                kind(&LvError::Stream(StreamError::from(remote(code)))),
                want,
                "{code} through a stream"
            );
        }
    }

    #[test]
    fn system_errors_by_errno() {
        let mut e = remote(ErrorCode::SYSTEM_ERROR);
        for (errno, want) in [
            (13, ErrorKind::Permanent),
            (1, ErrorKind::Permanent),
            (30, ErrorKind::Permanent),
            (28, ErrorKind::Transient),
            (5, ErrorKind::Transient),
        ] {
            e.int1 = errno;
            assert_eq!(
                kind(&LvError::Call(CallError::from(e.clone()))),
                want,
                "errno {errno}"
            );
        }
    }

    #[test]
    fn dead_links_and_budgets_are_transient() {
        let dead = [
            LvError::Dead {
                reason: "budget".into(),
            },
            LvError::Call(CallError::Connection(ConnectionError::PeerClosed)),
            LvError::Call(CallError::TimedOut),
            LvError::Stream(StreamError::Connection(ConnectionError::locally_closed(
                "x",
            ))),
            LvError::Stream(StreamError::Aborted {
                reason: "x".into(),
                server: None,
            }),
            LvError::Budget {
                what: "upload".into(),
                budget: Duration::from_secs(1),
            },
            LvError::Local(Arc::new(io::Error::from(io::ErrorKind::TimedOut))),
        ];
        for e in dead {
            assert_eq!(kind(&e), ErrorKind::Transient, "{e}");
        }
        assert!(LvError::Call(CallError::TimedOut).is_dead_link());
        assert!(!call(ErrorCode::NO_DOMAIN).is_dead_link());
    }

    #[test]
    fn connect_errors() {
        let uri = String::from("qemu:///system");
        let refused = LvError::Connect {
            uri: uri.clone(),
            error: Arc::new(ConnectError::Dial {
                target: "/x".into(),
                error: io::Error::from(io::ErrorKind::ConnectionRefused),
            }),
        };
        assert_eq!(kind(&refused), ErrorKind::Transient);
        let missing = LvError::Connect {
            uri: uri.clone(),
            error: Arc::new(ConnectError::Dial {
                target: "/x".into(),
                error: io::Error::from(io::ErrorKind::NotFound),
            }),
        };
        assert_eq!(
            kind(&missing),
            ErrorKind::Transient,
            "daemon down is not permanent"
        );
        let denied = LvError::Connect {
            uri: uri.clone(),
            error: Arc::new(ConnectError::Dial {
                target: "/x".into(),
                error: io::Error::from(io::ErrorKind::PermissionDenied),
            }),
        };
        assert_eq!(kind(&denied), ErrorKind::Permanent);
        // The rule is the contract's, whole: the same kind for every io::ErrorKind.
        for k in [
            io::ErrorKind::NotFound,
            io::ErrorKind::ConnectionRefused,
            io::ErrorKind::PermissionDenied,
            io::ErrorKind::InvalidInput,
            io::ErrorKind::NotADirectory,
        ] {
            let e = LvError::Connect {
                uri: uri.clone(),
                error: Arc::new(ConnectError::Dial {
                    target: "/x".into(),
                    error: io::Error::from(k),
                }),
            };
            assert_eq!(kind(&e), classify_io(k), "{k:?}");
        }
        let host_key = LvError::Connect {
            uri: uri.clone(),
            error: Arc::new(ConnectError::Ssh(Box::new(ssh_socket::SshError::Config {
                reason: "no credentials".into(),
            }))),
        };
        assert_eq!(kind(&host_key), ErrorKind::Permanent);
        let jump = |error: ssh_socket::SshError| LvError::Connect {
            uri: uri.clone(),
            error: Arc::new(ConnectError::Ssh(Box::new(ssh_socket::SshError::Jump {
                host: "ops@bastion:22".into(),
                error: Box::new(error),
            }))),
        };
        let bastion_key = jump(ssh_socket::SshError::HostKeyChanged {
            host: "bastion".into(),
            key_type: "ssh-ed25519".into(),
            fingerprint: "SHA256:x".into(),
            known_hosts: "/kh".into(),
            line: 1,
        });
        assert_eq!(kind(&bastion_key), ErrorKind::Permanent, "bastion host key");
        let bastion_down = jump(ssh_socket::SshError::Connect {
            addr: "bastion:22".into(),
            error: io::Error::from(io::ErrorKind::ConnectionRefused),
        });
        assert_eq!(kind(&bastion_down), ErrorKind::Transient, "bastion down");
        let auth = LvError::Connect {
            uri: uri.clone(),
            error: Arc::new(ConnectError::Handshake(HandshakeError::UnsupportedAuth(
                vec![1],
            ))),
        };
        assert_eq!(kind(&auth), ErrorKind::Permanent);
        let auth_failed = LvError::Connect {
            uri: uri.clone(),
            error: Arc::new(ConnectError::Handshake(HandshakeError::Call {
                step: "open",
                error: CallError::from(remote(ErrorCode::AUTH_FAILED)),
            })),
        };
        assert_eq!(kind(&auth_failed), ErrorKind::Permanent);
        let connect = |e: ConnectError| LvError::Connect {
            uri: uri.clone(),
            error: Arc::new(e),
        };
        let untrusted = connect(ConnectError::Tls(TlsError::UnknownCa {
            host: "h".into(),
            reason: "UnknownIssuer".into(),
        }));
        assert_eq!(kind(&untrusted), ErrorKind::Permanent);
        let refused = connect(ConnectError::Handshake(HandshakeError::TlsRefused {
            detail: "eof".into(),
        }));
        assert_eq!(kind(&refused), ErrorKind::Permanent);
        let flaky = connect(ConnectError::Tls(TlsError::Handshake {
            host: "h".into(),
            reason: "reset".into(),
        }));
        assert_eq!(kind(&flaky), ErrorKind::Transient);
    }

    #[test]
    fn explicit_transient_wins_over_the_table() {
        let e = transient("address", call(ErrorCode::ARGUMENT_UNSUPPORTED));
        assert!(e.is_transient());
        let p = provider_error("lookup pool", call(ErrorCode::NO_STORAGE_POOL));
        assert!(p.is_permanent());
        assert!(p.message().contains("pool-start"), "{p}");
    }

    /// Each cause is printed once by the operator-facing chain (an error formats its cause
    /// or returns it as its source, never both).
    #[test]
    fn the_chain_prints_each_cause_once() {
        let dial = LvError::Connect {
            uri: "qemu:///system".into(),
            error: Arc::new(ConnectError::Dial {
                target: "/run/libvirt/libvirt-sock".into(),
                error: io::Error::new(io::ErrorKind::NotFound, "no such socket"),
            }),
        };
        let not_found = LvError::Call(CallError::from(RemoteError::new(
            ErrorCode::NO_DOMAIN,
            ErrorDomain::QEMU,
            "Domain not found",
        )));
        for e in [dial, not_found] {
            let chain = provider_error("get instance", e).chain().to_string();
            for needle in ["no such socket", "Domain not found"] {
                assert!(
                    chain.matches(needle).count() <= 1,
                    "{needle:?} twice in {chain}"
                );
            }
        }
    }
}
