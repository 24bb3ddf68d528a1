//! `remote_error`: libvirt's error, decoded completely and kept lossless.

use std::fmt;

use super::names::named;
use crate::proto::types::{NonnullDomain, NonnullNetwork};
use crate::wire::xdr::{LvString, xdr_struct};

named! {
    /// `virErrorNumber`: an open set, so a newtype with named constants rather than an enum
    /// (a newer daemon's code stays representable). Prints as `NO_DOMAIN(42)`.
    pub struct ErrorCode(i32) {
    /// No error.
    OK = 0,
    /// Internal error (e.g. the ARP address source's "wrong nlmsg len").
    INTERNAL_ERROR = 1,
    /// Out of memory.
    NO_MEMORY = 2,
    /// Not supported by this driver or daemon (also "unknown procedure", see [`RemoteError::normalized`]).
    NO_SUPPORT = 3,
    /// `VIR_ERR_UNKNOWN_HOST` (libvirt 0.1.0).
    UNKNOWN_HOST = 4,
    /// `VIR_ERR_NO_CONNECT` (libvirt 0.1.0).
    NO_CONNECT = 5,
    /// Invalid connection object.
    INVALID_CONN = 6,
    /// Invalid domain object.
    INVALID_DOMAIN = 7,
    /// Invalid argument.
    INVALID_ARG = 8,
    /// The operation failed (e.g. define with a duplicate name).
    OPERATION_FAILED = 9,
    /// `VIR_ERR_GET_FAILED` (libvirt 0.1.0).
    GET_FAILED = 10,
    /// `VIR_ERR_POST_FAILED` (libvirt 0.1.0).
    POST_FAILED = 11,
    /// `VIR_ERR_HTTP_ERROR` (libvirt 0.1.0).
    HTTP_ERROR = 12,
    /// `VIR_ERR_SEXPR_SERIAL` (libvirt 0.1.0).
    SEXPR_SERIAL = 13,
    /// `VIR_ERR_NO_XEN` (libvirt 0.1.0).
    NO_XEN = 14,
    /// `VIR_ERR_XEN_CALL` (libvirt 0.1.0).
    XEN_CALL = 15,
    /// `VIR_ERR_OS_TYPE` (libvirt 0.1.0).
    OS_TYPE = 16,
    /// `VIR_ERR_NO_KERNEL` (libvirt 0.1.0).
    NO_KERNEL = 17,
    /// `VIR_ERR_NO_ROOT` (libvirt 0.1.0).
    NO_ROOT = 18,
    /// `VIR_ERR_NO_SOURCE` (libvirt 0.1.0).
    NO_SOURCE = 19,
    /// `VIR_ERR_NO_TARGET` (libvirt 0.1.0).
    NO_TARGET = 20,
    /// `VIR_ERR_NO_NAME` (libvirt 0.1.0).
    NO_NAME = 21,
    /// `VIR_ERR_NO_OS` (libvirt 0.1.0).
    NO_OS = 22,
    /// `VIR_ERR_NO_DEVICE` (libvirt 0.1.0).
    NO_DEVICE = 23,
    /// `VIR_ERR_NO_XENSTORE` (libvirt 0.1.0).
    NO_XENSTORE = 24,
    /// `VIR_ERR_DRIVER_FULL` (libvirt 0.1.0).
    DRIVER_FULL = 25,
    /// `VIR_ERR_CALL_FAILED` (libvirt 0.1.0).
    CALL_FAILED = 26,
    /// XML is malformed.
    XML_ERROR = 27,
    /// The domain already exists.
    DOM_EXIST = 28,
    /// Operation forbidden on a read-only connection.
    OPERATION_DENIED = 29,
    /// `VIR_ERR_OPEN_FAILED` (libvirt 0.1.6).
    OPEN_FAILED = 30,
    /// `VIR_ERR_READ_FAILED` (libvirt 0.1.6).
    READ_FAILED = 31,
    /// `VIR_ERR_PARSE_FAILED` (libvirt 0.1.6).
    PARSE_FAILED = 32,
    /// `VIR_ERR_CONF_SYNTAX` (libvirt 0.1.6).
    CONF_SYNTAX = 33,
    /// `VIR_ERR_WRITE_FAILED` (libvirt 0.1.6).
    WRITE_FAILED = 34,
    /// Detail of an XML error.
    XML_DETAIL = 35,
    /// `VIR_ERR_INVALID_NETWORK` (libvirt 0.2.0).
    INVALID_NETWORK = 36,
    /// `VIR_ERR_NETWORK_EXIST` (libvirt 0.2.0).
    NETWORK_EXIST = 37,
    /// A system call failed; `int1` holds errno.
    SYSTEM_ERROR = 38,
    /// RPC-level error.
    RPC = 39,
    /// `VIR_ERR_GNUTLS_ERROR` (libvirt 0.2.3).
    GNUTLS_ERROR = 40,
    /// `VIR_WAR_NO_NETWORK` (libvirt 0.2.3).
    WAR_NO_NETWORK = 41,
    /// No such domain.
    NO_DOMAIN = 42,
    /// No such network.
    NO_NETWORK = 43,
    /// `VIR_ERR_INVALID_MAC` (libvirt 0.3.1).
    INVALID_MAC = 44,
    /// Authentication failed.
    AUTH_FAILED = 45,
    /// Invalid storage pool object.
    INVALID_STORAGE_POOL = 46,
    /// Invalid storage volume object.
    INVALID_STORAGE_VOL = 47,
    /// `VIR_WAR_NO_STORAGE` (libvirt 0.4.1).
    WAR_NO_STORAGE = 48,
    /// No such storage pool.
    NO_STORAGE_POOL = 49,
    /// No such storage volume.
    NO_STORAGE_VOL = 50,
    /// `VIR_WAR_NO_NODE` (libvirt 0.5.0).
    WAR_NO_NODE = 51,
    /// `VIR_ERR_INVALID_NODE_DEVICE` (libvirt 0.5.0).
    INVALID_NODE_DEVICE = 52,
    /// No such node device.
    NO_NODE_DEVICE = 53,
    /// `VIR_ERR_NO_SECURITY_MODEL` (libvirt 0.6.1).
    NO_SECURITY_MODEL = 54,
    /// Operation not valid in the object's current state (e.g. "domain is not running").
    OPERATION_INVALID = 55,
    /// `VIR_WAR_NO_INTERFACE` (libvirt 0.6.4).
    WAR_NO_INTERFACE = 56,
    /// No such interface.
    NO_INTERFACE = 57,
    /// `VIR_ERR_INVALID_INTERFACE` (libvirt 0.6.4).
    INVALID_INTERFACE = 58,
    /// `VIR_ERR_MULTIPLE_INTERFACES` (libvirt 0.7.0).
    MULTIPLE_INTERFACES = 59,
    /// `VIR_WAR_NO_NWFILTER` (libvirt 0.8.0).
    WAR_NO_NWFILTER = 60,
    /// `VIR_ERR_INVALID_NWFILTER` (libvirt 0.8.0).
    INVALID_NWFILTER = 61,
    /// No such network filter.
    NO_NWFILTER = 62,
    /// `VIR_ERR_BUILD_FIREWALL` (libvirt 0.8.0).
    BUILD_FIREWALL = 63,
    /// `VIR_WAR_NO_SECRET` (libvirt 0.7.1).
    WAR_NO_SECRET = 64,
    /// `VIR_ERR_INVALID_SECRET` (libvirt 0.7.1).
    INVALID_SECRET = 65,
    /// No such secret.
    NO_SECRET = 66,
    /// The configuration is not supported.
    CONFIG_UNSUPPORTED = 67,
    /// The operation timed out.
    OPERATION_TIMEOUT = 68,
    /// `VIR_ERR_MIGRATE_PERSIST_FAILED` (libvirt 0.7.3).
    MIGRATE_PERSIST_FAILED = 69,
    /// `VIR_ERR_HOOK_SCRIPT_FAILED` (libvirt 0.8.0).
    HOOK_SCRIPT_FAILED = 70,
    /// `VIR_ERR_INVALID_DOMAIN_SNAPSHOT` (libvirt 0.8.0).
    INVALID_DOMAIN_SNAPSHOT = 71,
    /// No such snapshot.
    NO_DOMAIN_SNAPSHOT = 72,
    /// Invalid stream.
    INVALID_STREAM = 73,
    /// An argument value is not supported (e.g. "QEMU guest agent is not configured").
    ARGUMENT_UNSUPPORTED = 74,
    /// `VIR_ERR_STORAGE_PROBE_FAILED` (libvirt 0.9.5).
    STORAGE_PROBE_FAILED = 75,
    /// `VIR_ERR_STORAGE_POOL_BUILT` (libvirt 0.9.5).
    STORAGE_POOL_BUILT = 76,
    /// `VIR_ERR_SNAPSHOT_REVERT_RISKY` (libvirt 0.9.7).
    SNAPSHOT_REVERT_RISKY = 77,
    /// The operation was aborted.
    OPERATION_ABORTED = 78,
    /// Authentication was cancelled.
    AUTH_CANCELLED = 79,
    /// The requested metadata element is not present.
    NO_DOMAIN_METADATA = 80,
    /// `VIR_ERR_MIGRATE_UNSAFE` (libvirt 0.9.11).
    MIGRATE_UNSAFE = 81,
    /// `VIR_ERR_OVERFLOW` (libvirt 0.9.11).
    OVERFLOW = 82,
    /// `VIR_ERR_BLOCK_COPY_ACTIVE` (libvirt 0.9.12).
    BLOCK_COPY_ACTIVE = 83,
    /// The operation is not supported.
    OPERATION_UNSUPPORTED = 84,
    /// `VIR_ERR_SSH` (libvirt 0.10.0).
    SSH = 85,
    /// The guest agent does not answer.
    AGENT_UNRESPONSIVE = 86,
    /// A resource is busy.
    RESOURCE_BUSY = 87,
    /// Access denied by the access-control driver.
    ACCESS_DENIED = 88,
    /// `VIR_ERR_DBUS_SERVICE` (libvirt 1.1.1).
    DBUS_SERVICE = 89,
    /// The storage volume already exists.
    STORAGE_VOL_EXIST = 90,
    /// Host CPU incompatible.
    CPU_INCOMPATIBLE = 91,
    /// XML does not validate against the schema.
    XML_INVALID_SCHEMA = 92,
    /// `VIR_ERR_MIGRATE_FINISH_OK` (libvirt 1.2.18).
    MIGRATE_FINISH_OK = 93,
    /// Authentication is unavailable.
    AUTH_UNAVAILABLE = 94,
    /// `VIR_ERR_NO_SERVER` (libvirt 1.3.3).
    NO_SERVER = 95,
    /// `VIR_ERR_NO_CLIENT` (libvirt 1.3.5).
    NO_CLIENT = 96,
    /// The guest agent is not synced.
    AGENT_UNSYNCED = 97,
    /// `VIR_ERR_LIBSSH` (libvirt 2.5.0).
    LIBSSH = 98,
    /// A device is missing.
    DEVICE_MISSING = 99,
    /// `VIR_ERR_INVALID_NWFILTER_BINDING` (libvirt 4.5.0).
    INVALID_NWFILTER_BINDING = 100,
    /// `VIR_ERR_NO_NWFILTER_BINDING` (libvirt 4.5.0).
    NO_NWFILTER_BINDING = 101,
    /// `VIR_ERR_INVALID_DOMAIN_CHECKPOINT` (libvirt 5.2.0).
    INVALID_DOMAIN_CHECKPOINT = 102,
    /// No such checkpoint.
    NO_DOMAIN_CHECKPOINT = 103,
    /// `VIR_ERR_NO_DOMAIN_BACKUP` (libvirt 5.2.0).
    NO_DOMAIN_BACKUP = 104,
    /// `VIR_ERR_INVALID_NETWORK_PORT` (libvirt 5.5.0).
    INVALID_NETWORK_PORT = 105,
    /// `VIR_ERR_NETWORK_PORT_EXIST` (libvirt 5.5.0).
    NETWORK_PORT_EXIST = 106,
    /// No such network port.
    NO_NETWORK_PORT = 107,
    /// No hostname available.
    NO_HOSTNAME = 108,
    /// `VIR_ERR_CHECKPOINT_INCONSISTENT` (libvirt 6.10.0).
    CHECKPOINT_INCONSISTENT = 109,
    /// More than one domain matched.
    MULTIPLE_DOMAINS = 110,
    /// The requested network metadata is not present.
    NO_NETWORK_METADATA = 111,
    /// A guest agent command timed out (libvirt 11.2+).
    AGENT_COMMAND_TIMEOUT = 112,
    /// A guest agent command failed (libvirt 11.2+).
    AGENT_COMMAND_FAILED = 113,
    /// `VIR_ERR_INVALID_ENCR_KEY_SECRET` (libvirt 12.1.0).
    INVALID_ENCR_KEY_SECRET = 114,
}
}

named! {
    /// `virErrorDomain`: which libvirt subsystem raised the error. Prints as `QEMU(10)`.
    pub struct ErrorDomain(i32) {
    /// No particular subsystem.
    NONE = 0,
    /// `VIR_FROM_XEN` (libvirt 0.1.0).
    XEN = 1,
    /// `VIR_FROM_XEND` (libvirt 0.1.0).
    XEND = 2,
    /// `VIR_FROM_XENSTORE` (libvirt 0.1.0).
    XENSTORE = 3,
    /// `VIR_FROM_SEXPR` (libvirt 0.1.0).
    SEXPR = 4,
    /// `VIR_FROM_XML` (libvirt 0.1.0).
    XML = 5,
    /// Domain object handling.
    DOM = 6,
    /// The RPC layer.
    RPC = 7,
    /// `VIR_FROM_PROXY` (libvirt 0.1.3).
    PROXY = 8,
    /// `VIR_FROM_CONF` (libvirt 0.1.6).
    CONF = 9,
    /// The QEMU driver.
    QEMU = 10,
    /// `VIR_FROM_NET` (libvirt 0.2.0).
    NET = 11,
    /// The test driver.
    TEST = 12,
    /// The remote driver.
    REMOTE = 13,
    /// `VIR_FROM_OPENVZ` (libvirt 0.3.1).
    OPENVZ = 14,
    /// `VIR_FROM_XENXM` (libvirt 0.4.1).
    XENXM = 15,
    /// `VIR_FROM_STATS_LINUX` (libvirt 0.4.1).
    STATS_LINUX = 16,
    /// `VIR_FROM_LXC` (libvirt 0.4.2).
    LXC = 17,
    /// The storage driver.
    STORAGE = 18,
    /// The network driver.
    NETWORK = 19,
    /// Domain configuration.
    DOMAIN = 20,
    /// `VIR_FROM_UML` (libvirt 0.5.0).
    UML = 21,
    /// Node devices.
    NODEDEV = 22,
    /// `VIR_FROM_XEN_INOTIFY` (libvirt 0.5.0).
    XEN_INOTIFY = 23,
    /// `VIR_FROM_SECURITY` (libvirt 0.6.1).
    SECURITY = 24,
    /// `VIR_FROM_VBOX` (libvirt 0.6.3).
    VBOX = 25,
    /// `VIR_FROM_INTERFACE` (libvirt 0.6.4).
    INTERFACE = 26,
    /// `VIR_FROM_ONE` (libvirt 0.6.4).
    ONE = 27,
    /// `VIR_FROM_ESX` (libvirt 0.7.0).
    ESX = 28,
    /// `VIR_FROM_PHYP` (libvirt 0.7.0).
    PHYP = 29,
    /// Secrets.
    SECRET = 30,
    /// `VIR_FROM_CPU` (libvirt 0.7.5).
    CPU = 31,
    /// `VIR_FROM_XENAPI` (libvirt 0.8.0).
    XENAPI = 32,
    /// `VIR_FROM_NWFILTER` (libvirt 0.8.0).
    NWFILTER = 33,
    /// `VIR_FROM_HOOK` (libvirt 0.8.0).
    HOOK = 34,
    /// `VIR_FROM_DOMAIN_SNAPSHOT` (libvirt 0.8.0).
    DOMAIN_SNAPSHOT = 35,
    /// `VIR_FROM_AUDIT` (libvirt 0.8.5).
    AUDIT = 36,
    /// `VIR_FROM_SYSINFO` (libvirt 0.8.6).
    SYSINFO = 37,
    /// Streams.
    STREAMS = 38,
    /// `VIR_FROM_VMWARE` (libvirt 0.8.7).
    VMWARE = 39,
    /// `VIR_FROM_EVENT` (libvirt 0.9.0).
    EVENT = 40,
    /// `VIR_FROM_LIBXL` (libvirt 0.9.0).
    LIBXL = 41,
    /// `VIR_FROM_LOCKING` (libvirt 0.9.2).
    LOCKING = 42,
    /// `VIR_FROM_HYPERV` (libvirt 0.9.5).
    HYPERV = 43,
    /// `VIR_FROM_CAPABILITIES` (libvirt 0.9.8).
    CAPABILITIES = 44,
    /// `VIR_FROM_URI` (libvirt 0.9.11).
    URI = 45,
    /// Authentication.
    AUTH = 46,
    /// `VIR_FROM_DBUS` (libvirt 0.9.12).
    DBUS = 47,
    /// `VIR_FROM_PARALLELS` (libvirt 0.10.0).
    PARALLELS = 48,
    /// `VIR_FROM_DEVICE` (libvirt 0.10.0).
    DEVICE = 49,
    /// `VIR_FROM_SSH` (libvirt 0.10.0).
    SSH = 50,
    /// `VIR_FROM_LOCKSPACE` (libvirt 1.0.0).
    LOCKSPACE = 51,
    /// `VIR_FROM_INITCTL` (libvirt 1.0.1).
    INITCTL = 52,
    /// `VIR_FROM_IDENTITY` (libvirt 1.0.4).
    IDENTITY = 53,
    /// `VIR_FROM_CGROUP` (libvirt 1.0.5).
    CGROUP = 54,
    /// Access control.
    ACCESS = 55,
    /// `VIR_FROM_SYSTEMD` (libvirt 1.1.1).
    SYSTEMD = 56,
    /// `VIR_FROM_BHYVE` (libvirt 1.2.2).
    BHYVE = 57,
    /// `VIR_FROM_CRYPTO` (libvirt 1.2.3).
    CRYPTO = 58,
    /// `VIR_FROM_FIREWALL` (libvirt 1.2.4).
    FIREWALL = 59,
    /// polkit.
    POLKIT = 60,
    /// `VIR_FROM_THREAD` (libvirt 1.2.14).
    THREAD = 61,
    /// `VIR_FROM_ADMIN` (libvirt 1.2.17).
    ADMIN = 62,
    /// `VIR_FROM_LOGGING` (libvirt 1.3.0).
    LOGGING = 63,
    /// `VIR_FROM_XENXL` (libvirt 1.3.2).
    XENXL = 64,
    /// `VIR_FROM_PERF` (libvirt 1.3.3).
    PERF = 65,
    /// `VIR_FROM_LIBSSH` (libvirt 2.5.0).
    LIBSSH = 66,
    /// `VIR_FROM_RESCTRL` (libvirt 3.7.0).
    RESCTRL = 67,
    /// `VIR_FROM_FIREWALLD` (libvirt 5.1.0).
    FIREWALLD = 68,
    /// `VIR_FROM_DOMAIN_CHECKPOINT` (libvirt 5.2.0).
    DOMAIN_CHECKPOINT = 69,
    /// `VIR_FROM_TPM` (libvirt 5.6.0).
    TPM = 70,
    /// `VIR_FROM_BPF` (libvirt 5.10.0).
    BPF = 71,
    /// `VIR_FROM_CH` (libvirt 7.5.0).
    CH = 72,
}
}

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
        pub dom: Option<NonnullDomain>,
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
        pub net: Option<NonnullNetwork>,
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

    /// The daemon refused for lack of authentication or permission (`AUTH_FAILED`,
    /// `AUTH_CANCELLED`, `AUTH_UNAVAILABLE`, `ACCESS_DENIED`).
    pub fn is_auth(&self) -> bool {
        matches!(
            self.code,
            ErrorCode::AUTH_FAILED
                | ErrorCode::AUTH_CANCELLED
                | ErrorCode::AUTH_UNAVAILABLE
                | ErrorCode::ACCESS_DENIED
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_code_and_domain_of_libvirt_12_6_is_named() {
        // virErrorNumber runs 0..=114 without gaps, virErrorDomain 0..=72.
        for n in 0..=114 {
            assert!(ErrorCode(n).name().is_some(), "code {n}");
        }
        for n in 0..=72 {
            assert!(ErrorDomain(n).name().is_some(), "domain {n}");
        }
        assert_eq!(ErrorCode(115).name(), None);
        assert_eq!(ErrorDomain(73).name(), None);
    }

    #[test]
    fn codes_print_their_names_and_unknown_ones_their_numbers() {
        // Code 5 printed as `ErrorCode(5)` before the table was complete.
        assert_eq!(ErrorCode(5).to_string(), "NO_CONNECT(5)");
        assert_eq!(ErrorCode::NO_SUPPORT.to_string(), "NO_SUPPORT(3)");
        assert_eq!(ErrorCode(41).name(), Some("WAR_NO_NETWORK"));
        assert_eq!(ErrorCode(114).name(), Some("INVALID_ENCR_KEY_SECRET"));
        assert_eq!(ErrorCode(500).to_string(), "ErrorCode(500)");
        assert_eq!(ErrorCode(-1).to_string(), "ErrorCode(-1)");
        assert_eq!(ErrorDomain(17).to_string(), "LXC(17)");
        assert_eq!(ErrorDomain(72).name(), Some("CH"));
        assert_eq!(ErrorDomain(99).to_string(), "ErrorDomain(99)");
        let e = RemoteError::new(ErrorCode(5), ErrorDomain(13), "no connection driver");
        assert_eq!(
            e.to_string(),
            "no connection driver (code NO_CONNECT(5), domain REMOTE(13))"
        );
    }

    #[test]
    fn unknown_numbers_survive_the_wire() {
        // code 4242, domain 4343, message "x", level 2, no domain, no strings, ints -1, no
        // network: as a newer daemon would send it.
        let bytes: Vec<u8> = [
            0x1092_u32,
            0x10f7,
            1,
            1,
            0x7800_0000,
            2,
            0,
            0,
            0,
            0,
            u32::MAX,
            u32::MAX,
            0,
        ]
        .iter()
        .flat_map(|w| w.to_be_bytes())
        .collect();
        let w: WireError = crate::wire::xdr::from_bytes(bytes.into()).unwrap();
        let e = RemoteError::from(w);
        assert_eq!((e.code, e.domain), (ErrorCode(4242), ErrorDomain(4343)));
    }
}
