//! What one SSH session (and the hops in front of it) is set up with.

use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use zeroize::Zeroizing;

use crate::SshError;
use crate::remote::RemoteCommand;

/// libvirtd's system-mode socket, the default remote socket path.
pub const SYSTEM_SOCKET: &str = "/var/run/libvirt/libvirt-sock";

/// Key files tried, in this order, when no key file is configured (as OpenSSH does with
/// no `IdentityFile`); those that do not exist are skipped. Relative to `$HOME`.
pub const DEFAULT_KEY_FILES: &[&str] = &[".ssh/id_ed25519", ".ssh/id_ecdsa", ".ssh/id_rsa"];

/// The user's `known_hosts` files when none is configured, relative to `$HOME`: OpenSSH's
/// default `UserKnownHostsFile`. New hosts' keys are added to the first.
pub const DEFAULT_KNOWN_HOSTS: &[&str] = &[".ssh/known_hosts", ".ssh/known_hosts2"];

/// The system-wide `known_hosts` files, read after the user's and never written: OpenSSH's
/// default `GlobalKnownHostsFile` (libssh, under libvirt's libssh transport, reads the first).
pub const GLOBAL_KNOWN_HOSTS: &[&str] = &["/etc/ssh/ssh_known_hosts", "/etc/ssh/ssh_known_hosts2"];

/// What the SSH session carries to the remote libvirt daemon.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum RemoteChannel {
    /// `direct-streamlocal@openssh.com`: sshd itself connects to a remote unix socket. Needs
    /// nothing on the remote host, but sshd must allow it (`AllowStreamLocalForwarding`, and
    /// on OpenSSH 9.2 also `AllowTcpForwarding`). The sockets are tried in order: the first
    /// the server connects to is used (a modular `virtqemud-sock`, then `libvirt-sock`).
    Forward {
        /// Remote socket paths, tried in order (at least one).
        sockets: Vec<String>,
    },
    /// An exec channel: the remote command's stdin and stdout are the stream, as libvirt's
    /// own client does it (`virt-ssh-helper URI`, or `nc -U SOCKET`). Works where sshd refuses
    /// forwarding. The command's stderr is kept (the first [`STDERR_LIMIT`] bytes) and shown
    /// in the error when the command fails.
    Exec {
        /// The command line, already quoted for the remote login shell.
        command: RemoteCommand,
    },
}

/// How much of an exec channel's stderr is kept for error messages.
pub const STDERR_LIMIT: usize = 4096;

impl RemoteChannel {
    /// Forward the one socket `path`.
    pub fn forward(path: impl Into<String>) -> Self {
        Self::Forward {
            sockets: vec![path.into()],
        }
    }

    /// Run `command`.
    pub fn exec(command: RemoteCommand) -> Self {
        Self::Exec { command }
    }

    /// What this channel reaches, for messages: the socket(s) or the command's summary.
    pub fn describe(&self) -> String {
        match self {
            Self::Forward { sockets } => sockets.join(" or "),
            Self::Exec { command } => command.summary().to_owned(),
        }
    }
}

/// What to do with the server's host key (libvirt's `known_hosts_verify=`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum KnownHostsVerify {
    /// A key recorded in `known_hosts` is required; a changed key is refused. An unknown host
    /// is refused too, unless [`SshConfig::credentials`] answers the
    /// [`Prompt::AcceptHostKey`] question with "yes" (then the key is added), as libvirt asks.
    #[default]
    Normal,
    /// An unknown host's key is added to `known_hosts` and accepted; a changed key is still
    /// refused (`StrictHostKeyChecking accept-new`).
    Auto,
    /// Any key is accepted (a warning is logged). libvirt's `no_verify=1` and
    /// `known_hosts_verify=ignore`.
    Ignore,
}

impl KnownHostsVerify {
    /// Parses libvirt's names: `normal`, `auto`, `ignore`.
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "normal" => Some(Self::Normal),
            "auto" => Some(Self::Auto),
            "ignore" => Some(Self::Ignore),
            _ => None,
        }
    }
}

/// One way of authenticating (libvirt's `sshauth=` names).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum AuthMethod {
    /// `agent`: the keys of the ssh-agent.
    Agent,
    /// `privkey`: the key files ([`SshConfig::key_files`], else [`DEFAULT_KEY_FILES`]).
    PrivateKey,
    /// `password`: asked from [`SshConfig::credentials`].
    Password,
    /// `keyboard-interactive`: each prompt asked from [`SshConfig::credentials`].
    KeyboardInteractive,
}

impl AuthMethod {
    /// Parses one of libvirt's names.
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "agent" => Some(Self::Agent),
            "privkey" => Some(Self::PrivateKey),
            "password" => Some(Self::Password),
            "keyboard-interactive" => Some(Self::KeyboardInteractive),
            _ => None,
        }
    }

    /// Parses an ordered, comma-separated list (`sshauth=privkey,agent`).
    pub fn parse_list(s: &str) -> Result<Vec<Self>, String> {
        let mut out = Vec::new();
        for name in s.split(',').map(str::trim).filter(|n| !n.is_empty()) {
            let m = Self::parse(name).ok_or_else(|| {
                format!(
                    "unknown ssh auth method {name:?} (agent, privkey, password, \
                     keyboard-interactive)"
                )
            })?;
            if !out.contains(&m) {
                out.push(m);
            }
        }
        if out.is_empty() {
            return Err("empty ssh auth method list".into());
        }
        Ok(out)
    }
}

/// The default order: the configured key files first (so a key named in the URI is offered
/// before agent keys use up the server's `MaxAuthTries`), then the agent, then the methods
/// that ask [`SshConfig::credentials`].
pub const DEFAULT_AUTH_METHODS: &[AuthMethod] = &[
    AuthMethod::PrivateKey,
    AuthMethod::Agent,
    AuthMethod::Password,
    AuthMethod::KeyboardInteractive,
];

/// A question the SSH transport asks the embedding program (libvirt's auth callback).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Prompt {
    /// The password of `user` on `host`.
    Password {
        /// Login name.
        user: String,
        /// `host:port`.
        host: String,
    },
    /// One prompt of a keyboard-interactive exchange.
    KeyboardInteractive {
        /// Login name.
        user: String,
        /// `host:port`.
        host: String,
        /// The server's name for the exchange (often empty).
        name: String,
        /// The server's instructions (often empty).
        instruction: String,
        /// The prompt text, e.g. `Password: ` or `Verification code: `.
        prompt: String,
        /// Whether the answer may be shown as typed.
        echo: bool,
    },
    /// The host's key is not in `known_hosts` ([`KnownHostsVerify::Normal`]): answer `yes`
    /// to accept the key and add it to the (first user) file. When `known_types` is not
    /// empty the host *is* known, by keys of other types (or a certificate authority): say so
    /// to the person answering, as OpenSSH does ("but keys of different type are already
    /// known for this host"); a presented key of another type is how a man-in-the-middle
    /// without the host's key looks.
    AcceptHostKey {
        /// The host as `known_hosts` names it (`host` or `[host]:port`).
        host: String,
        /// e.g. `ssh-ed25519`.
        key_type: String,
        /// SHA256 fingerprint, as `ssh-keygen -l` prints it.
        fingerprint: String,
        /// What `known_hosts` already knows the host by: key types (`ssh-rsa`) and
        /// `@cert-authority TYPE`; empty for a host never seen.
        known_types: Vec<String>,
    },
}

/// Answers [`Prompt`]s: passwords, keyboard-interactive prompts, unknown host keys.
///
/// Called on a blocking thread (it may read a terminal or a vault), never more than once at a
/// time per session, and bounded by [`SshConfig::connect_timeout`]. `None` declines. Answers
/// are never logged. Any `Fn(&Prompt) -> Option<String> + Send + Sync` is one.
pub trait Credentials: Send + Sync {
    /// The answer to `prompt`, or `None` to decline.
    fn answer(&self, prompt: &Prompt) -> Option<String>;
}

impl<F> Credentials for F
where
    F: Fn(&Prompt) -> Option<String> + Send + Sync,
{
    fn answer(&self, prompt: &Prompt) -> Option<String> {
        self(prompt)
    }
}

/// Settings for one SSH session carrying one [`RemoteChannel`], possibly through jump hosts.
///
/// Maps onto libvirt's `qemu+ssh://user@host:port/system?keyfile=PATH&known_hosts=PATH&
/// known_hosts_verify=…&sshauth=…&no_verify=1&socket=PATH&proxy=…` (libvirt-remote does the
/// mapping, together with `~/.ssh/config`: [`SshConfig::from_ssh_config`]). Build with
/// [`SshConfig::new`] and assign the fields you need.
///
/// `Debug` never prints the passphrase or the credential callback.
#[derive(Clone)]
#[non_exhaustive]
pub struct SshConfig {
    /// Remote login name.
    pub user: String,
    /// Host name or address to dial; also the name looked up in `known_hosts`.
    pub host: String,
    /// TCP port (22).
    pub port: u16,
    /// Private key files to offer, in order. Empty: the [`DEFAULT_KEY_FILES`] that exist.
    pub key_files: Vec<PathBuf>,
    /// Passphrase for encrypted key files. Never logged; wiped from memory when dropped.
    pub passphrase: Option<Zeroizing<String>>,
    /// Offer the keys of the ssh-agent (true). Off with `IdentitiesOnly yes`.
    pub use_agent: bool,
    /// The ssh-agent socket; `None` means `$SSH_AUTH_SOCK` (no agent when that is unset).
    pub agent_socket: Option<PathBuf>,
    /// Authentication methods, tried in this order ([`DEFAULT_AUTH_METHODS`]).
    pub auth_methods: Vec<AuthMethod>,
    /// Answers password and keyboard-interactive prompts and the unknown-host question.
    /// `None`: those methods are skipped and unknown hosts refused (libvirt's `no_tty=1`).
    pub credentials: Option<Arc<dyn Credentials>>,
    /// The user's `known_hosts` files (`UserKnownHostsFile`, libvirt's `known_hosts=`), read
    /// in order; a new host's key is added to the first. Empty: [`DEFAULT_KNOWN_HOSTS`].
    pub known_hosts: Vec<PathBuf>,
    /// System-wide `known_hosts` files (`GlobalKnownHostsFile`), read after
    /// [`known_hosts`](Self::known_hosts), never written ([`GLOBAL_KNOWN_HOSTS`]). A host
    /// known only here is known: another key it presents is refused, never learned.
    pub global_known_hosts: Vec<PathBuf>,
    /// What to do with unknown and changed host keys ([`KnownHostsVerify::Normal`]).
    pub known_hosts_verify: KnownHostsVerify,
    /// What the session carries: a forwarded socket or an exec channel (forwarding
    /// [`SYSTEM_SOCKET`]).
    pub channel: RemoteChannel,
    /// Jump hosts (`ProxyJump`), outermost first: the first is dialled over TCP, each next
    /// host (and finally this one) is reached through a `direct-tcpip` channel of the session
    /// before it. Every hop's host key is checked against its own `known_hosts` settings.
    /// Only the login and host-key fields of a jump host are used (not its `channel`,
    /// `proxy_jump` or timeouts: the session's own bound the whole dial).
    pub proxy_jump: Vec<SshConfig>,
    /// Bound on TCP connect + handshakes + authentication + channel open, over all hops (10 s).
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
            auth_methods: DEFAULT_AUTH_METHODS.to_vec(),
            credentials: None,
            known_hosts: Vec::new(),
            global_known_hosts: GLOBAL_KNOWN_HOSTS.iter().map(PathBuf::from).collect(),
            known_hosts_verify: KnownHostsVerify::Normal,
            channel: RemoteChannel::forward(SYSTEM_SOCKET),
            proxy_jump: Vec::new(),
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
        if !self.use_agent || !self.auth_methods.contains(&AuthMethod::Agent) {
            return None;
        }
        self.agent_socket
            .clone()
            .or_else(|| std::env::var_os("SSH_AUTH_SOCK").map(PathBuf::from))
    }

    /// The key files to offer, and whether they were configured (a configured file that
    /// cannot be read is an error; a missing default file is skipped).
    pub(crate) fn key_file_list(&self) -> (Vec<PathBuf>, bool) {
        if !self.auth_methods.contains(&AuthMethod::PrivateKey) {
            return (Vec::new(), true);
        }
        if !self.key_files.is_empty() {
            return (self.key_files.clone(), true);
        }
        let Some(home) = std::env::var_os("HOME").map(PathBuf::from) else {
            return (Vec::new(), false);
        };
        let found = DEFAULT_KEY_FILES
            .iter()
            .map(|f| home.join(f))
            .filter(|p| p.is_file())
            .collect();
        (found, false)
    }

    /// The `known_hosts` files to read, user files first; the first is where new keys go.
    pub(crate) fn known_hosts_files(&self) -> Result<Vec<PathBuf>, SshError> {
        let mut files = if self.known_hosts.is_empty() {
            let Some(home) = std::env::var_os("HOME").map(PathBuf::from) else {
                return Err(SshError::KnownHosts {
                    path: PathBuf::from("~/.ssh/known_hosts"),
                    reason: "HOME is not set; give known_hosts explicitly".into(),
                });
            };
            DEFAULT_KNOWN_HOSTS.iter().map(|f| home.join(f)).collect()
        } else {
            self.known_hosts.clone()
        };
        files.extend(self.global_known_hosts.iter().cloned());
        Ok(files)
    }

    /// Whether a method that asks [`credentials`](Self::credentials) may run.
    pub(crate) fn can_prompt(&self) -> bool {
        self.credentials.is_some()
            && (self.auth_methods.contains(&AuthMethod::Password)
                || self.auth_methods.contains(&AuthMethod::KeyboardInteractive))
    }

    /// `host:port` for messages.
    pub(crate) fn addr(&self) -> String {
        if self.host.contains(':') {
            format!("[{}]:{}", self.host, self.port)
        } else {
            format!("{}:{}", self.host, self.port)
        }
    }

    /// `user@host:port` for messages.
    pub(crate) fn login(&self) -> String {
        format!("{}@{}", self.user, self.addr())
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
            .field("auth_methods", &self.auth_methods)
            .field(
                "credentials",
                &self.credentials.as_ref().map(|_| "<callback>"),
            )
            .field("known_hosts", &self.known_hosts)
            .field("global_known_hosts", &self.global_known_hosts)
            .field("known_hosts_verify", &self.known_hosts_verify)
            .field("channel", &self.channel)
            .field("proxy_jump", &self.proxy_jump)
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
    fn debug_redacts_passphrase_and_callback() {
        let mut c = SshConfig::new("u", "h");
        c.passphrase = Some(Zeroizing::new("hunter2".into()));
        c.credentials = Some(Arc::new(|_: &Prompt| Some("sekrit".to_owned())));
        let s = format!("{c:?}");
        assert!(!s.contains("hunter2"), "{s}");
        assert!(s.contains("<redacted>") && s.contains("<callback>"));
    }

    #[test]
    fn libvirt_names_parse() {
        assert_eq!(
            AuthMethod::parse_list("agent, privkey,agent,keyboard-interactive"),
            Ok(vec![
                AuthMethod::Agent,
                AuthMethod::PrivateKey,
                AuthMethod::KeyboardInteractive
            ])
        );
        assert!(AuthMethod::parse_list("gssapi").is_err());
        assert!(AuthMethod::parse_list("").is_err());
        assert_eq!(
            KnownHostsVerify::parse("auto"),
            Some(KnownHostsVerify::Auto)
        );
        assert_eq!(KnownHostsVerify::parse("yes"), None);
    }
}
