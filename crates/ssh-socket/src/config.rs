//! What a `qemu+ssh://` URI maps onto.

use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

use crate::SshError;

/// libvirtd's system-mode socket, the default remote socket path.
pub const SYSTEM_SOCKET: &str = "/var/run/libvirt/libvirt-sock";

/// Settings for one SSH session forwarding one remote unix socket.
///
/// Maps onto `qemu+ssh://user@host:port/system?keyfile=PATH&known_hosts=PATH&no_verify=1&socket=PATH`:
/// `user`, `host`, `port`, `key_files` (`keyfile`), `known_hosts`, `no_verify`, `socket_path`
/// (`socket`; for `/session` set it to the remote user's session socket, since the path depends
/// on the remote uid). Build with [`SshConfig::new`] and assign the fields you need.
///
/// `Debug` never prints the passphrase.
#[derive(Clone)]
#[non_exhaustive]
pub struct SshConfig {
    /// Remote login name.
    pub user: String,
    /// Host name or address to dial; also the name looked up in `known_hosts`.
    pub host: String,
    /// TCP port (22).
    pub port: u16,
    /// Private key files to offer, in order, before the agent.
    pub key_files: Vec<PathBuf>,
    /// Passphrase for encrypted key files. Never logged.
    pub passphrase: Option<String>,
    /// Also offer the keys of the ssh-agent (true), after the key files.
    pub use_agent: bool,
    /// The ssh-agent socket; `None` means `$SSH_AUTH_SOCK` (no agent when that is unset).
    pub agent_socket: Option<PathBuf>,
    /// `known_hosts` file; `None` means `~/.ssh/known_hosts`.
    pub known_hosts: Option<PathBuf>,
    /// Accept any host key (logs a warning). Off by default: unknown and changed keys are errors.
    pub no_verify: bool,
    /// Remote unix socket to forward ([`SYSTEM_SOCKET`]).
    pub socket_path: String,
    /// Bound on TCP connect + handshake + authentication + channel open (10 s).
    pub connect_timeout: Duration,
    /// Send an SSH keepalive after this long without hearing from the server (5 s).
    pub keepalive_interval: Option<Duration>,
    /// End the session after this many unanswered keepalives in a row (3), so a silent host is
    /// detected after about `keepalive_interval * (keepalive_max + 1)`.
    pub keepalive_max: usize,
    /// End the session when nothing arrives and no socket write completes for this long (30 s).
    /// The only bound on a write stalled in the kernel while the session is busy uploading,
    /// since keepalives are not sent then.
    pub inactivity_timeout: Option<Duration>,
    /// Incoming bytes buffered between the SSH session and the reader (8 MiB). The session
    /// keeps running while this has room, so a slow reader does not stall keepalives.
    pub read_buffer: usize,
    /// Cipher preference, most preferred first (`aes256-gcm@openssh.com` first: fastest here).
    pub ciphers: Vec<String>,
}

impl SshConfig {
    /// Defaults for `user@host:22`, forwarding libvirtd's system socket.
    pub fn new(user: impl Into<String>, host: impl Into<String>) -> Self {
        Self {
            user: user.into(),
            host: host.into(),
            port: 22,
            key_files: Vec::new(),
            passphrase: None,
            use_agent: true,
            agent_socket: None,
            known_hosts: None,
            no_verify: false,
            socket_path: SYSTEM_SOCKET.to_owned(),
            connect_timeout: Duration::from_secs(10),
            keepalive_interval: Some(Duration::from_secs(5)),
            keepalive_max: 3,
            inactivity_timeout: Some(Duration::from_secs(30)),
            read_buffer: 8 << 20,
            ciphers: DEFAULT_CIPHERS.iter().map(|&c| c.to_owned()).collect(),
        }
    }

    /// The agent socket to use, if any.
    pub(crate) fn agent_path(&self) -> Option<PathBuf> {
        if !self.use_agent {
            return None;
        }
        self.agent_socket
            .clone()
            .or_else(|| std::env::var_os("SSH_AUTH_SOCK").map(PathBuf::from))
    }

    /// `host:port` for messages.
    pub(crate) fn addr(&self) -> String {
        if self.host.contains(':') {
            format!("[{}]:{}", self.host, self.port)
        } else {
            format!("{}:{}", self.host, self.port)
        }
    }
}

/// The login name ssh uses when none is given: the local user's, from the passwd entry of the
/// real uid, as OpenSSH does (`getpwuid(getuid())`; `$USER` and `$LOGNAME` are not consulted,
/// so a shell that inherited another user's environment does not change who logs in). libvirt
/// leaves the default to ssh, so `qemu+ssh://host/system` means the same user for `virsh` and
/// for us. A uid without a passwd entry is an error ("give a user in the URI"), as in ssh.
pub fn local_user() -> Result<String, SshError> {
    let uid = nix::unistd::getuid();
    match nix::unistd::User::from_uid(uid) {
        Ok(Some(u)) => Ok(u.name),
        Ok(None) => Err(SshError::Config {
            reason: format!("no user name for local uid {uid}: name the remote user (user@host)"),
        }),
        Err(e) => Err(SshError::Config {
            reason: format!("cannot look up the name of local uid {uid}: {e}"),
        }),
    }
}

/// Measured with `benches/upload.rs`: AES-GCM is the cheapest per byte on x86 with AES-NI.
const DEFAULT_CIPHERS: &[&str] = &[
    "aes256-gcm@openssh.com",
    "aes128-gcm@openssh.com",
    "chacha20-poly1305@openssh.com",
    "aes256-ctr",
    "aes192-ctr",
    "aes128-ctr",
];

impl fmt::Debug for SshConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SshConfig")
            .field("user", &self.user)
            .field("host", &self.host)
            .field("port", &self.port)
            .field("key_files", &self.key_files)
            .field(
                "passphrase",
                &self.passphrase.as_ref().map(|_| "<redacted>"),
            )
            .field("use_agent", &self.use_agent)
            .field("agent_socket", &self.agent_socket)
            .field("known_hosts", &self.known_hosts)
            .field("no_verify", &self.no_verify)
            .field("socket_path", &self.socket_path)
            .field("connect_timeout", &self.connect_timeout)
            .field("keepalive_interval", &self.keepalive_interval)
            .field("keepalive_max", &self.keepalive_max)
            .field("inactivity_timeout", &self.inactivity_timeout)
            .field("read_buffer", &self.read_buffer)
            .field("ciphers", &self.ciphers)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn local_user_is_the_passwd_name_of_the_uid() {
        let name = local_user().expect("the test user has a passwd entry");
        let by_name = nix::unistd::User::from_name(&name)
            .unwrap()
            .expect("listed");
        assert_eq!(by_name.uid, nix::unistd::getuid());
    }

    #[test]
    fn debug_redacts_passphrase() {
        let mut c = SshConfig::new("u", "h");
        c.passphrase = Some("hunter2".into());
        let s = format!("{c:?}");
        assert!(!s.contains("hunter2"), "{s}");
        assert!(s.contains("<redacted>"));
    }
}
