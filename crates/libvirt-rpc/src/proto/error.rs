//! `remote_error`: libvirt's error, decoded completely and kept lossless.

use std::fmt;

use crate::proto::types::{Domain, Network};
use crate::wire::xdr::LvString;
use crate::xdr_struct;

/// `virErrorNumber`: an open set, so a newtype with named constants rather than an enum
/// (a newer daemon's code stays representable).
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ErrorCode(pub i32);

/// `virErrorDomain`: which libvirt subsystem raised the error.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ErrorDomain(pub i32);

macro_rules! named {
    ($ty:ident { $($(#[$m:meta])* $name:ident = $v:expr,)* }) => {
        impl $ty {
            $( $(#[$m])* pub const $name: Self = Self($v); )*
            /// libvirt's name for this value, if it is one we know.
            pub fn name(self) -> Option<&'static str> {
                match self.0 { $( $v => Some(stringify!($name)), )* _ => None }
            }
        }
        impl fmt::Debug for $ty {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                match self.name() {
                    Some(n) => write!(f, "{n}({})", self.0),
                    None => write!(f, "{}({})", stringify!($ty), self.0),
                }
            }
        }
        impl fmt::Display for $ty {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                fmt::Debug::fmt(self, f)
            }
        }
    };
}

named!(ErrorCode {
    /// No error.
    OK = 0,
    /// Internal error (e.g. the ARP address source's "wrong nlmsg len").
    INTERNAL_ERROR = 1,
    /// Out of memory.
    NO_MEMORY = 2,
    /// Not supported by this driver or daemon (also "unknown procedure", see [`RemoteError::normalized`]).
    NO_SUPPORT = 3,
    /// Invalid connection object.
    INVALID_CONN = 6,
    /// Invalid domain object.
    INVALID_DOMAIN = 7,
    /// Invalid argument.
    INVALID_ARG = 8,
    /// The operation failed (e.g. define with a duplicate name).
    OPERATION_FAILED = 9,
    /// XML is malformed.
    XML_ERROR = 27,
    /// The domain already exists.
    DOM_EXIST = 28,
    /// Operation forbidden on a read-only connection.
    OPERATION_DENIED = 29,
    /// Detail of an XML error.
    XML_DETAIL = 35,
    /// A system call failed; `int1` holds errno.
    SYSTEM_ERROR = 38,
    /// RPC-level error.
    RPC = 39,
    /// No such domain.
    NO_DOMAIN = 42,
    /// No such network.
    NO_NETWORK = 43,
    /// Authentication failed.
    AUTH_FAILED = 45,
    /// Invalid storage pool object.
    INVALID_STORAGE_POOL = 46,
    /// Invalid storage volume object.
    INVALID_STORAGE_VOL = 47,
    /// No such storage pool.
    NO_STORAGE_POOL = 49,
    /// No such storage volume.
    NO_STORAGE_VOL = 50,
    /// No such node device.
    NO_NODE_DEVICE = 53,
    /// Operation not valid in the object's current state (e.g. "domain is not running").
    OPERATION_INVALID = 55,
    /// No such interface.
    NO_INTERFACE = 57,
    /// No such network filter.
    NO_NWFILTER = 62,
    /// No such secret.
    NO_SECRET = 66,
    /// The configuration is not supported.
    CONFIG_UNSUPPORTED = 67,
    /// The operation timed out.
    OPERATION_TIMEOUT = 68,
    /// No such snapshot.
    NO_DOMAIN_SNAPSHOT = 72,
    /// Invalid stream.
    INVALID_STREAM = 73,
    /// An argument value is not supported (e.g. "QEMU guest agent is not configured").
    ARGUMENT_UNSUPPORTED = 74,
    /// The operation was aborted.
    OPERATION_ABORTED = 78,
    /// Authentication was cancelled.
    AUTH_CANCELLED = 79,
    /// The requested metadata element is not present.
    NO_DOMAIN_METADATA = 80,
    /// The operation is not supported.
    OPERATION_UNSUPPORTED = 84,
    /// The guest agent does not answer.
    AGENT_UNRESPONSIVE = 86,
    /// A resource is busy.
    RESOURCE_BUSY = 87,
    /// Access denied by the access-control driver.
    ACCESS_DENIED = 88,
    /// The storage volume already exists.
    STORAGE_VOL_EXIST = 90,
    /// Host CPU incompatible.
    CPU_INCOMPATIBLE = 91,
    /// XML does not validate against the schema.
    XML_INVALID_SCHEMA = 92,
    /// Authentication is unavailable.
    AUTH_UNAVAILABLE = 94,
    /// The guest agent is not synced.
    AGENT_UNSYNCED = 97,
    /// A device is missing.
    DEVICE_MISSING = 99,
    /// No such checkpoint.
    NO_DOMAIN_CHECKPOINT = 103,
    /// No such network port.
    NO_NETWORK_PORT = 107,
    /// No hostname available.
    NO_HOSTNAME = 108,
    /// More than one domain matched.
    MULTIPLE_DOMAINS = 110,
    /// The requested network metadata is not present.
    NO_NETWORK_METADATA = 111,
    /// A guest agent command timed out (libvirt 11.2+).
    AGENT_COMMAND_TIMEOUT = 112,
    /// A guest agent command failed (libvirt 11.2+).
    AGENT_COMMAND_FAILED = 113,
});

named!(ErrorDomain {
    /// No particular subsystem.
    NONE = 0,
    /// Domain object handling.
    DOM = 6,
    /// The RPC layer.
    RPC = 7,
    /// The QEMU driver.
    QEMU = 10,
    /// The test driver.
    TEST = 12,
    /// The remote driver.
    REMOTE = 13,
    /// The storage driver.
    STORAGE = 18,
    /// The network driver.
    NETWORK = 19,
    /// Domain configuration.
    DOMAIN = 20,
    /// Node devices.
    NODEDEV = 22,
    /// Secrets.
    SECRET = 30,
    /// Streams.
    STREAMS = 38,
    /// Authentication.
    AUTH = 46,
    /// Access control.
    ACCESS = 55,
    /// polkit.
    POLKIT = 60,
});

/// `virErrorLevel`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ErrorLevel(pub i32);

impl ErrorLevel {
    /// No level.
    pub const NONE: Self = Self(0);
    /// A warning.
    pub const WARNING: Self = Self(1);
    /// An error.
    pub const ERROR: Self = Self(2);
}

xdr_struct! {
    /// `remote_error` (= `virNetMessageError`) exactly as sent. Use [`RemoteError`] instead.
    pub struct WireError {
        /// `virErrorNumber`.
        pub code: i32,
        /// `virErrorDomain`.
        pub domain: i32,
        /// Human-readable message.
        pub message: Option<LvString>,
        /// `virErrorLevel`.
        pub level: i32,
        /// Unused by the daemon (always NULL).
        pub dom: Option<Domain>,
        /// Extra information (often a format string).
        pub str1: Option<LvString>,
        /// Extra information.
        pub str2: Option<LvString>,
        /// Extra information.
        pub str3: Option<LvString>,
        /// Extra number (errno for system errors, else -1).
        pub int1: i32,
        /// Extra number.
        pub int2: i32,
        /// Unused by the daemon (always NULL).
        pub net: Option<Network>,
    }
}

/// An error reported by the daemon, with every field libvirt sends.
#[derive(Clone, PartialEq)]
pub struct RemoteError {
    /// What went wrong.
    pub code: ErrorCode,
    /// Which subsystem said so.
    pub domain: ErrorDomain,
    /// libvirt's message, as sent.
    pub message: Option<LvString>,
    /// Severity.
    pub level: ErrorLevel,
    /// Extra information (often a format string such as `"%s"`).
    pub str1: Option<LvString>,
    /// Extra information.
    pub str2: Option<LvString>,
    /// Extra information.
    pub str3: Option<LvString>,
    /// Extra number: errno for [`ErrorCode::SYSTEM_ERROR`], else usually -1.
    pub int1: i32,
    /// Extra number.
    pub int2: i32,
}

impl From<WireError> for RemoteError {
    fn from(w: WireError) -> Self {
        Self {
            code: ErrorCode(w.code),
            domain: ErrorDomain(w.domain),
            message: w.message,
            level: ErrorLevel(w.level),
            str1: w.str1,
            str2: w.str2,
            str3: w.str3,
            int1: w.int1,
            int2: w.int2,
        }
        .normalized()
    }
}

impl RemoteError {
    /// An error as a daemon reports one: `code` from `domain` with `message`, level
    /// [`ErrorLevel::ERROR`], no extra strings, `int1` and `int2` -1 (for a system error, set
    /// `int1` to the errno). For peers and tests that must produce the daemon's errors.
    pub fn new(code: ErrorCode, domain: ErrorDomain, message: &str) -> Self {
        Self {
            code,
            domain,
            message: Some(message.into()),
            level: ErrorLevel::ERROR,
            str1: None,
            str2: None,
            str3: None,
            int1: -1,
            int2: -1,
        }
    }

    /// libvirt's client reports an `RPC` error "unknown procedure: N" from an older daemon
    /// as `NO_SUPPORT`; so do we (`virNetClientProgramDispatchError`).
    #[must_use]
    pub fn normalized(mut self) -> Self {
        let rpc_domain = self.domain == ErrorDomain::RPC || self.domain == ErrorDomain::REMOTE;
        let unknown_proc = self
            .message
            .as_ref()
            .is_some_and(|m| m.as_bytes().starts_with(b"unknown procedure"));
        if rpc_domain
            && self.code == ErrorCode::RPC
            && self.level == ErrorLevel::ERROR
            && unknown_proc
        {
            self.code = ErrorCode::NO_SUPPORT;
        }
        self
    }

    /// The message, lossily decoded (empty when the daemon sent none).
    pub fn message(&self) -> String {
        self.message
            .as_ref()
            .map(ToString::to_string)
            .unwrap_or_default()
    }

    /// The object the call named does not exist (domain, volume, pool, network, …).
    pub fn is_not_found(&self) -> bool {
        matches!(
            self.code,
            ErrorCode::NO_DOMAIN
                | ErrorCode::NO_STORAGE_VOL
                | ErrorCode::NO_STORAGE_POOL
                | ErrorCode::NO_NETWORK
                | ErrorCode::NO_NODE_DEVICE
                | ErrorCode::NO_INTERFACE
                | ErrorCode::NO_NWFILTER
                | ErrorCode::NO_SECRET
                | ErrorCode::NO_DOMAIN_SNAPSHOT
                | ErrorCode::NO_DOMAIN_CHECKPOINT
                | ErrorCode::NO_NETWORK_PORT
        )
    }

    /// The requested metadata element is absent (the domain itself exists).
    pub fn is_no_metadata(&self) -> bool {
        self.code == ErrorCode::NO_DOMAIN_METADATA || self.code == ErrorCode::NO_NETWORK_METADATA
    }

    /// The thing being created already exists.
    pub fn is_already_exists(&self) -> bool {
        matches!(
            self.code,
            ErrorCode::STORAGE_VOL_EXIST | ErrorCode::DOM_EXIST
        )
    }

    /// The daemon or driver does not support the call, flag or argument.
    pub fn is_unsupported(&self) -> bool {
        matches!(
            self.code,
            ErrorCode::NO_SUPPORT
                | ErrorCode::OPERATION_UNSUPPORTED
                | ErrorCode::ARGUMENT_UNSUPPORTED
                | ErrorCode::CONFIG_UNSUPPORTED
        )
    }

    /// The guest agent did not answer or is not usable right now.
    pub fn is_agent_unavailable(&self) -> bool {
        matches!(
            self.code,
            ErrorCode::AGENT_UNRESPONSIVE
                | ErrorCode::AGENT_UNSYNCED
                | ErrorCode::AGENT_COMMAND_TIMEOUT
                | ErrorCode::AGENT_COMMAND_FAILED
        )
    }

    /// The operation is not valid in the object's current state (e.g. not running).
    pub fn is_operation_invalid(&self) -> bool {
        self.code == ErrorCode::OPERATION_INVALID
    }

    /// errno, when this is a system error.
    pub fn errno(&self) -> Option<i32> {
        (self.code == ErrorCode::SYSTEM_ERROR && self.int1 > 0).then_some(self.int1)
    }
}

impl fmt::Debug for RemoteError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RemoteError")
            .field("code", &self.code)
            .field("domain", &self.domain)
            .field("message", &self.message)
            .field("level", &self.level.0)
            .field("str1", &self.str1)
            .field("str2", &self.str2)
            .field("str3", &self.str3)
            .field("int1", &self.int1)
            .field("int2", &self.int2)
            .finish()
    }
}

impl fmt::Display for RemoteError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.message {
            Some(m) => write!(f, "{m}")?,
            None => write!(f, "libvirt error")?,
        }
        write!(f, " (code {}, domain {})", self.code, self.domain)
    }
}

impl std::error::Error for RemoteError {}
