//! Typed errors, and their mapping onto `io::Error` at the `AsyncRead`/`AsyncWrite` edge.

use std::io;
use std::path::PathBuf;
use std::time::Duration;

/// Everything that can go wrong while connecting or using an [`SshStream`](crate::SshStream).
///
/// On the stream's I/O methods this arrives wrapped in an [`io::Error`] whose inner error is the
/// `SshError`: `err.get_ref().and_then(|e| e.downcast_ref::<SshError>())` recovers it.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SshError {
    /// The configuration cannot be used (for example an unknown cipher name).
    #[error("invalid ssh configuration: {reason}")]
    Config {
        /// What is wrong.
        reason: String,
    },
    /// The TCP connection could not be made.
    #[error("cannot connect to {addr}: {error}")]
    Connect {
        /// `host:port` as dialed.
        addr: String,
        /// The socket error (formatted in the message, so not also the source).
        error: io::Error,
    },
    /// Connecting, the handshake, authentication or opening the channel took longer than
    /// [`SshConfig::connect_timeout`](crate::SshConfig::connect_timeout).
    #[error("connecting to {addr} timed out after {after:?} (during {stage})")]
    ConnectTimeout {
        /// `host:port`.
        addr: String,
        /// The configured bound.
        after: Duration,
        /// What was in progress: "tcp connect", "handshake", "authentication", "channel open".
        stage: &'static str,
    },
    /// The host is in none of the `known_hosts` files (strict checking refuses unknown hosts).
    #[error(
        "host key verification failed: {host} is not in {} (server {key_type} key {fingerprint})",
        display_paths(known_hosts)
    )]
    HostKeyUnknown {
        /// The host as looked up (`host` or `[host]:port`).
        host: String,
        /// The server key's type, e.g. `ssh-ed25519`.
        key_type: String,
        /// SHA256 fingerprint of the server key, as `ssh-keygen -l` prints it.
        fingerprint: String,
        /// The `known_hosts` files consulted: the user's (a new key would be added to the
        /// first), then the system's.
        known_hosts: Vec<PathBuf>,
    },
    /// The host is known, but only by keys of other types than the one it presented (or by a
    /// `@cert-authority` line: host certificates are not accepted). Refused like a changed key
    /// (libvirt's `SSH_SERVER_FOUND_OTHER`) unless a person accepts it when asked
    /// ([`Prompt::AcceptHostKey`](crate::Prompt::AcceptHostKey) names the known types).
    #[error(
        "HOST KEY NOT RECOGNISED for {host}: the server presented a {key_type} key \
         {fingerprint}, but the host is known by {} ({known_hosts}:{line}); possibly a \
         man-in-the-middle. Add the new key to known_hosts yourself if the host changed its keys",
        known_types.join(", ")
    )]
    HostKeyOtherType {
        /// The host as looked up.
        host: String,
        /// The server key's type.
        key_type: String,
        /// SHA256 fingerprint of the key the server presented.
        fingerprint: String,
        /// The file of the first line that knows the host.
        known_hosts: PathBuf,
        /// 1-based line in that file.
        line: usize,
        /// What the host is known by: key types (`ssh-rsa`), and `@cert-authority TYPE` for a
        /// certificate authority line.
        known_types: Box<[String]>,
    },
    /// The server presented a different key of a type that `known_hosts` records for this host:
    /// possibly a man-in-the-middle, or the host was reinstalled.
    #[error(
        "HOST KEY CHANGED for {host}: server {key_type} key {fingerprint} does not match \
         {known_hosts}:{line}"
    )]
    HostKeyChanged {
        /// The host as looked up.
        host: String,
        /// The server key's type.
        key_type: String,
        /// SHA256 fingerprint of the key the server presented.
        fingerprint: String,
        /// The `known_hosts` file.
        known_hosts: PathBuf,
        /// 1-based line of the recorded key.
        line: usize,
    },
    /// The server's key is marked `@revoked` in `known_hosts`.
    #[error("host key for {host} is revoked: {key_type} {fingerprint} ({known_hosts}:{line})")]
    HostKeyRevoked {
        /// The host as looked up.
        host: String,
        /// The server key's type.
        key_type: String,
        /// SHA256 fingerprint of the key.
        fingerprint: String,
        /// The `known_hosts` file.
        known_hosts: PathBuf,
        /// 1-based line of the `@revoked` entry.
        line: usize,
    },
    /// The `known_hosts` file exists but cannot be read, or there is no home directory to find it.
    #[error("cannot read known_hosts {path}: {reason}")]
    KnownHosts {
        /// The file.
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// A configured private key file cannot be used.
    #[error("key file {path}: {reason}")]
    KeyFile {
        /// The file.
        path: PathBuf,
        /// Why.
        reason: KeyFileError,
    },
    /// The ssh-agent was the only credential source and it failed.
    #[error("ssh-agent: {reason}")]
    Agent {
        /// Why.
        reason: String,
    },
    /// Every credential was refused by the server.
    #[error(
        "authentication as {user} failed; tried: [{}]; server accepts: [{}]",
        tried.join(", "), remaining.join(", ")
    )]
    Auth {
        /// The user name.
        user: String,
        /// What was offered, e.g. `publickey /home/u/.ssh/id_ed25519 (ssh-ed25519 SHA256:…)`.
        tried: Vec<String>,
        /// Methods the server said could continue.
        remaining: Vec<String>,
    },
    /// The server refused the channel: to the remote unix socket, to the next hop
    /// (`direct-tcpip` on a jump host), or to run the remote command.
    #[error("cannot open channel to {target} on the server: {reason}")]
    ChannelOpen {
        /// The remote socket path, `host:port` of the next hop, or the command's summary.
        target: String,
        /// The server's reason.
        reason: String,
    },
    /// Reaching a jump host (`ProxyJump`) failed; `error` says how. Host key and
    /// authentication errors name the hop they happened on.
    #[error("via jump host {host}: {error}")]
    Jump {
        /// `user@host:port` of the jump host.
        host: String,
        /// What failed there.
        error: Box<SshError>,
    },
    /// SSH failed before the session was up (key exchange, protocol error, peer hung up).
    #[error("ssh {stage} failed: {message}")]
    Handshake {
        /// "handshake", "authentication" or "channel open".
        stage: &'static str,
        /// russh's description.
        message: String,
    },
    /// The session has ended; every read and write after that fails with this.
    #[error("ssh session closed: {reason}")]
    Closed {
        /// Why it ended.
        reason: CloseReason,
    },
}

/// Why a key file cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum KeyFileError {
    /// The key is encrypted and no passphrase was configured.
    #[error("the key is encrypted and no passphrase was given")]
    EncryptedKeyNoPassphrase,
    /// A passphrase was given but does not decrypt the key (or the key is corrupt).
    #[error("wrong passphrase or corrupt key: {0}")]
    BadPassphrase(String),
    /// The file cannot be read.
    #[error("cannot read: {0}")]
    Unreadable(String),
    /// The file is ours and group or others may access it: OpenSSH ignores such a key
    /// ("UNPROTECTED PRIVATE KEY FILE"), and so do we.
    #[error(
        "permissions {mode:04o} are too open: a private key must not be accessible by group or \
         others (chmod 600); it is ignored, as ssh ignores it"
    )]
    TooOpen {
        /// The file's permission bits.
        mode: u32,
    },
    /// The file is not a private key we understand.
    #[error("not a usable private key: {0}")]
    Invalid(String),
}

/// Why a session ended. Cheap to clone: every pending read/write gets its own copy.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CloseReason {
    /// [`CloseHandle::close`](crate::CloseHandle::close) was called.
    #[error("closed locally")]
    Local,
    /// The [`SshStream`](crate::SshStream) was dropped.
    #[error("stream dropped")]
    Dropped,
    /// The server did not answer `keepalive_max` keepalives in a row.
    #[error("server stopped answering keepalives")]
    KeepaliveTimeout,
    /// Nothing was received, or a socket write made no progress, for `inactivity_timeout`.
    #[error("no progress for the inactivity timeout")]
    InactivityTimeout,
    /// The server closed the channel (the remote socket closed).
    #[error("the server closed the channel")]
    ChannelClosed,
    /// The server ended the session with `SSH_MSG_DISCONNECT`.
    #[error("server disconnected: {description}")]
    Disconnected {
        /// The server's text.
        description: String,
    },
    /// The TCP connection failed (reset, unexpected EOF, ...).
    #[error("connection lost: {message}")]
    Io {
        /// The socket error's kind.
        kind: io::ErrorKind,
        /// The socket error's text.
        message: String,
    },
    /// Anything else russh reported.
    #[error("ssh protocol error: {message}")]
    Protocol {
        /// russh's description.
        message: String,
    },
    /// The exec channel's remote command ended unsuccessfully (non-zero exit, a signal, or
    /// output on stderr and no exit status), e.g. `nc: not found`, or permission denied on
    /// the daemon's socket. `stderr` is the first bytes of what it printed there.
    #[error(
        "remote command `{command}` {}{}",
        match (status, signal) {
            (_, Some(sig)) => format!("was killed by signal {sig}"),
            (Some(code), None) => format!("exited with status {code}"),
            (None, None) => "ended without an exit status".to_owned(),
        },
        if stderr.trim().is_empty() { String::new() } else { format!(": {}", stderr.trim()) }
    )]
    RemoteCommand {
        /// What ran (summary, values unquoted).
        command: String,
        /// The exit status, if the server sent one.
        status: Option<u32>,
        /// The signal that killed it, if any.
        signal: Option<String>,
        /// The start of its stderr (lossy UTF-8), at most [`STDERR_LIMIT`](crate::STDERR_LIMIT)
        /// bytes.
        stderr: String,
    },
}

impl CloseReason {
    fn io_kind(&self) -> io::ErrorKind {
        match self {
            Self::Local | Self::Dropped => io::ErrorKind::ConnectionAborted,
            Self::KeepaliveTimeout | Self::InactivityTimeout => io::ErrorKind::TimedOut,
            Self::ChannelClosed | Self::RemoteCommand { .. } => io::ErrorKind::BrokenPipe,
            Self::Disconnected { .. } => io::ErrorKind::ConnectionReset,
            Self::Io { kind, .. } => *kind,
            Self::Protocol { .. } => io::ErrorKind::InvalidData,
        }
    }

    /// Classifies the error a russh session ended with.
    pub(crate) fn from_russh(e: &russh::Error) -> Self {
        match e {
            russh::Error::KeepaliveTimeout => Self::KeepaliveTimeout,
            russh::Error::InactivityTimeout => Self::InactivityTimeout,
            russh::Error::IO(io) => Self::Io {
                kind: io.kind(),
                message: io.to_string(),
            },
            russh::Error::HUP => Self::Io {
                kind: io::ErrorKind::UnexpectedEof,
                message: "connection closed by the remote side".into(),
            },
            other => Self::Protocol {
                message: other.to_string(),
            },
        }
    }
}

impl SshError {
    /// The close reason, if this error says the session has ended.
    pub fn close_reason(&self) -> Option<&CloseReason> {
        match self {
            Self::Closed { reason } => Some(reason),
            _ => None,
        }
    }

    /// Whether this is a host key verification failure (unknown, changed or revoked key).
    pub fn is_host_key(&self) -> bool {
        match self {
            Self::Jump { error, .. } => error.is_host_key(),
            _ => matches!(
                self,
                Self::HostKeyUnknown { .. }
                    | Self::HostKeyOtherType { .. }
                    | Self::HostKeyChanged { .. }
                    | Self::HostKeyRevoked { .. }
            ),
        }
    }

    /// The error on the hop where it happened: for [`SshError::Jump`] the jump host's error,
    /// otherwise `self`.
    pub fn innermost(&self) -> &SshError {
        match self {
            Self::Jump { error, .. } => error.innermost(),
            other => other,
        }
    }

    fn io_kind(&self) -> io::ErrorKind {
        match self {
            Self::Config { .. } | Self::KeyFile { .. } => io::ErrorKind::InvalidInput,
            Self::Connect { error, .. } => error.kind(),
            Self::ConnectTimeout { .. } => io::ErrorKind::TimedOut,
            Self::HostKeyUnknown { .. }
            | Self::HostKeyOtherType { .. }
            | Self::HostKeyChanged { .. }
            | Self::HostKeyRevoked { .. }
            | Self::Auth { .. }
            | Self::Agent { .. } => io::ErrorKind::PermissionDenied,
            Self::KnownHosts { .. } => io::ErrorKind::NotFound,
            Self::ChannelOpen { .. } => io::ErrorKind::ConnectionRefused,
            Self::Handshake { .. } => io::ErrorKind::ConnectionAborted,
            Self::Closed { reason } => reason.io_kind(),
            Self::Jump { error, .. } => error.io_kind(),
        }
    }
}

/// `a, b and c` for a message.
fn display_paths(paths: &[PathBuf]) -> String {
    let names: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
    match names.split_last() {
        None => "any known_hosts file".into(),
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
    }
}

impl From<CloseReason> for SshError {
    fn from(reason: CloseReason) -> Self {
        Self::Closed { reason }
    }
}

impl From<SshError> for io::Error {
    fn from(e: SshError) -> Self {
        io::Error::new(e.io_kind(), e)
    }
}
