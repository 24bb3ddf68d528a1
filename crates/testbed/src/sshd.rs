//! A private OpenSSH `sshd` on 127.0.0.1, run as the [`TestUser`].
//!
//! Each [`Sshd`] gets a temp dir holding a generated host key, a generated client key
//! authorised for the test user, a `known_hosts` with the `[127.0.0.1]:port` entry, the config
//! and the log. sshd runs in the foreground (`-D -e`) and logs at DEBUG1 to `sshd.log`, so
//! tests can see what the server did (e.g. that no `userauth-request` arrived).
//!
//! Running sshd as an ordinary user (OpenSSH 9.2) works with:
//! - `UsePAM no`: PAM account/session modules need root.
//! - `StrictModes no`: the temp dir's modes and owner are not what sshd wants for `~/.ssh`.
//! - `PidFile` in the temp dir: `/run/sshd.pid` is not writable.
//! - No privilege-separation dir: `/run/sshd` is only required when sshd runs as root
//!   (`privsep_chroot` needs uid 0); unprivileged, it skips the chroot and the `sshd` user.
//! - Keys owned by the user with mode 0600: sshd refuses group/world-readable host keys.
//! - `AllowTcpForwarding` must allow `local` for `direct-streamlocal` (the default here;
//!   [`SshdOptions::forwarding`] turns both off): OpenSSH 9.2 keeps one permission set for TCP
//!   and streamlocal forwarding (`do_authenticated`, "XXX - streamlocal?"), so
//!   `AllowTcpForwarding no` denies `direct-streamlocal` too ("Received request to connect to
//!   path …, but the request was denied"), whatever `AllowStreamLocalForwarding` says.
//! - Only that user can log in, and it must have a real shell (`TestUser` uses `/bin/sh`).
//!   Its password being locked does not matter: unprivileged sshd cannot read
//!   `/etc/shadow`, so the locked-account check does not fire.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::fs;
use std::io::Read;
use std::net::{Ipv4Addr, SocketAddr, TcpListener};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::user::{TestUser, UserError};

/// Where Debian's openssh-server installs sshd. sshd must be started by absolute path (it
/// re-executes itself per connection).
pub const SSHD: &str = "/usr/sbin/sshd";

/// Key types for the host and client keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum KeyType {
    /// `ssh-ed25519`.
    Ed25519,
    /// `ecdsa-sha2-nistp256`.
    Ecdsa,
    /// `ssh-rsa` (3072 bits), signed with rsa-sha2-256/512.
    Rsa,
}

impl KeyType {
    fn keygen_args(self) -> &'static [&'static str] {
        match self {
            Self::Ed25519 => &["-t", "ed25519"],
            Self::Ecdsa => &["-t", "ecdsa", "-b", "256"],
            Self::Rsa => &["-t", "rsa", "-b", "3072"],
        }
    }

    /// The key type as OpenSSH names it in `known_hosts`.
    pub fn ssh_name(self) -> &'static str {
        match self {
            Self::Ed25519 => "ssh-ed25519",
            Self::Ecdsa => "ecdsa-sha2-nistp256",
            Self::Rsa => "ssh-rsa",
        }
    }
}

/// How to set up an [`Sshd`].
#[derive(Debug, Clone)]
pub struct SshdOptions {
    /// Host key type (ed25519).
    pub host_key: KeyType,
    /// Client key type (ed25519).
    pub client_key: KeyType,
    /// Encrypt the client key with this passphrase (none).
    pub client_passphrase: Option<String>,
    /// Allow `direct-streamlocal` and `direct-tcpip` (true). False writes
    /// `AllowStreamLocalForwarding no` and `AllowTcpForwarding no`, the hardening that makes
    /// libvirt clients fall back to an exec channel.
    pub forwarding: bool,
    /// Environment of every session (`SetEnv NAME=VALUE`), e.g. `XDG_RUNTIME_DIR` pointing at
    /// a private libvirtd's run dir, so `virt-ssh-helper qemu:///session` finds its socket.
    pub set_env: Vec<(String, String)>,
    /// Run every exec request through a `ForceCommand` wrapper that logs the command line
    /// ([`Sshd::command_log`]) and puts a logging `nc` first in `PATH` ([`Sshd::nc_calls`]);
    /// the command then runs as sshd would run it (`/bin/sh -c`).
    pub log_commands: bool,
    /// With `log_commands`: a `PATH` holding only `sh`, `grep` and the logging `nc`, so the
    /// remote side has no `virt-ssh-helper` (libvirt's `proxy=auto` falls back to netcat).
    pub hide_virt_ssh_helper: bool,
    /// Extra `sshd_config` lines, appended last (sshd takes the first value of an option, so
    /// these cannot override the ones above).
    pub extra_config: Vec<String>,
}

impl Default for SshdOptions {
    fn default() -> Self {
        Self {
            host_key: KeyType::Ed25519,
            client_key: KeyType::Ed25519,
            client_passphrase: None,
            forwarding: true,
            set_env: Vec::new(),
            log_commands: false,
            hide_virt_ssh_helper: false,
            extra_config: Vec::new(),
        }
    }
}

/// The `ForceCommand` wrapper: logs the original command (NUL-terminated), then runs it.
const WRAPPER: &str = r#"#!/bin/sh
printf '%s\0' "$SSH_ORIGINAL_COMMAND" >> "@DIR@/commands.log"
PATH="@PATH@"
export PATH
exec /bin/sh -c "$SSH_ORIGINAL_COMMAND"
"#;

/// The logging `nc`: one file per call with its arguments, NUL-terminated, then the real nc.
const NC_SHIM: &str = r#"#!/bin/sh
for a in "$@"; do printf '%s\0' "$a"; done > "@DIR@/nc-argv/$$"
exec /usr/bin/nc "$@"
"#;

/// Why an sshd could not be set up.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SshdError {
    /// `/usr/sbin/sshd` or `ssh-keygen` is missing (`apt-get install openssh-server`).
    #[error("{0} not found: install openssh-server and openssh-client")]
    NotInstalled(String),
    /// The test user could not be set up.
    #[error(transparent)]
    User(#[from] UserError),
    /// A file operation failed.
    #[error("{what}: {source}")]
    Io {
        /// What we were doing.
        what: String,
        /// The error.
        #[source]
        source: std::io::Error,
    },
    /// `ssh-keygen` failed.
    #[error("ssh-keygen failed: {0}")]
    Keygen(String),
    /// sshd exited or did not start listening; `log` is its output.
    #[error("sshd did not start: {reason}\n--- sshd log ---\n{log}")]
    Start {
        /// What went wrong.
        reason: String,
        /// sshd's stderr.
        log: String,
    },
}

fn io_err(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> SshdError {
    let what = what.into();
    move |source| SshdError::Io { what, source }
}

/// A running sshd; killed (with every per-connection process) and cleaned up on drop.
#[derive(Debug)]
pub struct Sshd {
    child: Option<Child>,
    dir: tempfile::TempDir,
    port: u16,
    user: TestUser,
    client_key: PathBuf,
    known_hosts: PathBuf,
    host_public_key: String,
    log: PathBuf,
}

impl Sshd {
    /// Generates keys and starts sshd on a free 127.0.0.1 port, retrying on bind races.
    pub fn start(opts: &SshdOptions) -> Result<Self, SshdError> {
        if !Path::new(SSHD).exists() {
            return Err(SshdError::NotInstalled(SSHD.into()));
        }
        let user = TestUser::get()?;
        let dir = tempfile::Builder::new()
            .prefix("testbed-sshd-")
            .tempdir()
            .map_err(io_err("creating temp dir"))?;
        let d = dir.path();
        keygen(&d.join("host_key"), opts.host_key, None)?;
        let client_key = d.join("client_key");
        keygen(
            &client_key,
            opts.client_key,
            opts.client_passphrase.as_deref(),
        )?;
        fs::copy(d.join("client_key.pub"), d.join("authorized_keys"))
            .map_err(io_err("writing authorized_keys"))?;
        let host_public_key = read_public(&d.join("host_key.pub"))?;
        let log = d.join("sshd.log");
        let mut sshd = Self {
            child: None,
            port: 0,
            user,
            client_key,
            known_hosts: d.join("known_hosts"),
            host_public_key,
            log,
            dir,
        };
        sshd.user.own(sshd.dir.path())?;

        let mut last = None;
        for _ in 0..5 {
            match sshd.spawn(opts) {
                Ok(()) => {
                    let line = format!("[127.0.0.1]:{} {}\n", sshd.port, sshd.host_public_key);
                    fs::write(&sshd.known_hosts, line).map_err(io_err("writing known_hosts"))?;
                    return Ok(sshd);
                }
                // Someone took the port between our probe and sshd's bind: try another.
                Err(SshdError::Start { log, .. }) if log.contains("Address already in use") => {
                    last = Some(log);
                }
                Err(e) => return Err(e),
            }
        }
        Err(SshdError::Start {
            reason: "no free port after 5 tries".into(),
            log: last.unwrap_or_default(),
        })
    }

    fn spawn(&mut self, opts: &SshdOptions) -> Result<(), SshdError> {
        let port = free_port().map_err(io_err("finding a free port"))?;
        let d = self.dir.path().display().to_string();
        let mut config = format!(
            "ListenAddress 127.0.0.1:{port}\n\
             HostKey {d}/host_key\n\
             PidFile {d}/sshd.pid\n\
             AuthorizedKeysFile {d}/authorized_keys\n\
             UsePAM no\n\
             StrictModes no\n\
             PubkeyAuthentication yes\n\
             AuthenticationMethods publickey\n\
             PasswordAuthentication no\n\
             KbdInteractiveAuthentication no\n\
             X11Forwarding no\n\
             PermitTTY no\n\
             PrintMotd no\n\
             MaxStartups 100\n\
             LogLevel DEBUG1\n"
        );
        if opts.forwarding {
            config.push_str("AllowStreamLocalForwarding yes\nAllowTcpForwarding local\n");
        } else {
            config.push_str("AllowStreamLocalForwarding no\nAllowTcpForwarding no\n");
        }
        for (k, v) in &opts.set_env {
            let _ = writeln!(config, "SetEnv {k}={v}");
        }
        if opts.log_commands {
            let wrapper = self.write_wrapper(opts.hide_virt_ssh_helper)?;
            let _ = writeln!(config, "ForceCommand {}", wrapper.display());
        }
        for line in &opts.extra_config {
            config.push_str(line);
            config.push('\n');
        }
        let config_path = self.dir.path().join("sshd_config");
        fs::write(&config_path, config).map_err(io_err("writing sshd_config"))?;
        let log = fs::File::create(&self.log).map_err(io_err("creating sshd.log"))?;
        let log2 = log.try_clone().map_err(io_err("cloning log fd"))?;
        let mut cmd = self.user.command(SSHD);
        cmd.args(["-D", "-e", "-f"])
            .arg(&config_path)
            .stdin(Stdio::null())
            .stdout(log)
            .stderr(log2);
        let child = cmd.spawn().map_err(io_err(format!("spawning {SSHD}")))?;
        self.child = Some(child);
        self.port = port;

        let ready = format!("Server listening on 127.0.0.1 port {port}");
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let text = self.log();
            if text.contains(&ready) {
                return Ok(());
            }
            let exited = self
                .child
                .as_mut()
                .and_then(|c| c.try_wait().ok().flatten());
            if let Some(status) = exited {
                self.child = None;
                return Err(SshdError::Start {
                    reason: format!("sshd exited: {status}"),
                    log: text,
                });
            }
            if Instant::now() > deadline {
                self.kill();
                return Err(SshdError::Start {
                    reason: "not listening after 10 s".into(),
                    log: self.log(),
                });
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Writes the `ForceCommand` wrapper and the `nc` shim (`bin/`), owned by the user.
    fn write_wrapper(&self, hide_helper: bool) -> Result<PathBuf, SshdError> {
        use std::os::unix::fs::PermissionsExt as _;
        let d = self.dir.path();
        let bin = d.join("bin");
        fs::create_dir_all(bin.join("..").join("nc-argv")).map_err(io_err("creating nc-argv"))?;
        fs::create_dir_all(&bin).map_err(io_err("creating bin"))?;
        let dir = d.display().to_string();
        let path = if hide_helper {
            for tool in ["sh", "grep"] {
                let link = bin.join(tool);
                if !link.exists() {
                    std::os::unix::fs::symlink(format!("/usr/bin/{tool}"), &link)
                        .map_err(io_err(format!("linking {tool}")))?;
                }
            }
            bin.display().to_string()
        } else {
            format!("{}:/usr/local/bin:/usr/bin:/bin", bin.display())
        };
        let exec = |p: &Path, text: String| -> Result<(), SshdError> {
            fs::write(p, text).map_err(io_err(format!("writing {}", p.display())))?;
            fs::set_permissions(p, fs::Permissions::from_mode(0o755))
                .map_err(io_err("chmod wrapper"))
        };
        let wrapper = d.join("force-command");
        exec(
            &wrapper,
            WRAPPER.replace("@DIR@", &dir).replace("@PATH@", &path),
        )?;
        exec(&bin.join("nc"), NC_SHIM.replace("@DIR@", &dir))?;
        self.user.own(d)?;
        Ok(wrapper)
    }

    /// The command lines of the exec requests so far (with [`SshdOptions::log_commands`]),
    /// as the remote side received them.
    pub fn command_log(&self) -> Vec<String> {
        fs::read(self.dir.path().join("commands.log"))
            .map(|b| split_nul(&b))
            .unwrap_or_default()
    }

    /// The arguments of every `nc` run so far (with [`SshdOptions::log_commands`]), one list
    /// per run, in no particular order.
    pub fn nc_calls(&self) -> Vec<Vec<String>> {
        let Ok(dir) = fs::read_dir(self.dir.path().join("nc-argv")) else {
            return Vec::new();
        };
        dir.flatten()
            .filter_map(|e| fs::read(e.path()).ok())
            .map(|b| split_nul(&b))
            .collect()
    }

    /// An `ssh_config` block naming this sshd `alias`: `HostName 127.0.0.1`, `Port port` (this
    /// sshd's, or a relay's in front of it), its user, client key and a `known_hosts` for
    /// that port (written into `dir`), strict host keys; plus `extra` lines (`ProxyJump …`).
    pub fn ssh_config_block(&self, alias: &str, port: u16, dir: &Path, extra: &[&str]) -> String {
        let kh = dir.join(format!("known_hosts_{alias}"));
        fs::write(
            &kh,
            format!("[127.0.0.1]:{port} {}\n", self.host_public_key.trim()),
        )
        .expect("write known_hosts");
        let mut s = format!(
            "Host {alias}\n  HostName 127.0.0.1\n  Port {port}\n  User {}\n  IdentityFile {}\n  \
             IdentitiesOnly yes\n  UserKnownHostsFile {}\n  StrictHostKeyChecking yes\n",
            self.user.name,
            self.client_key.display(),
            kh.display()
        );
        for line in extra {
            s.push_str("  ");
            s.push_str(line);
            s.push('\n');
        }
        s
    }

    /// Starts sshd, or returns `None` (skip, with the reason on stderr) when it cannot start
    /// and `TESTBED_REQUIRED` is unset. With `TESTBED_REQUIRED=1` (CI) a failed start fails
    /// the test with the reason.
    pub fn start_or_skip(opts: &SshdOptions) -> Option<Self> {
        match Self::start(opts) {
            Ok(s) => Some(s),
            Err(e) if crate::required() => {
                panic!("sshd could not start (TESTBED_REQUIRED=1): {e}")
            }
            Err(e) => {
                eprintln!("SKIP: sshd could not start: {e}");
                None
            }
        }
    }

    /// `qemu+ssh://USER@127.0.0.1:PORT/session?keyfile=…&known_hosts=…&socket=SOCKET`: a
    /// libvirt URI reaching the unix socket `socket` through this sshd, with its client key
    /// and strict host keys.
    pub fn qemu_uri(&self, socket: &Path) -> String {
        self.qemu_uri_via(self.port, &self.known_hosts, socket)
    }

    /// [`qemu_uri`](Self::qemu_uri) through another port that leads here (a relay), with a
    /// `known_hosts` naming that port ([`known_hosts_for`](Self::known_hosts_for)).
    pub fn qemu_uri_via(&self, port: u16, known_hosts: &Path, socket: &Path) -> String {
        format!(
            "qemu+ssh://{}@127.0.0.1:{port}/session?keyfile={}&known_hosts={}&socket={}",
            self.user.name,
            self.client_key.display(),
            known_hosts.display(),
            socket.display()
        )
    }

    /// Writes `dir/known_hosts_relay` naming this host key at `[127.0.0.1]:port` (a relay's
    /// port), so host keys stay strictly verified through it.
    pub fn known_hosts_for(&self, port: u16, dir: &Path) -> PathBuf {
        let p = dir.join("known_hosts_relay");
        fs::write(
            &p,
            format!("[127.0.0.1]:{port} {}\n", self.host_public_key.trim()),
        )
        .expect("write known_hosts");
        p
    }

    /// The TCP port on 127.0.0.1.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// `127.0.0.1:port`.
    pub fn addr(&self) -> SocketAddr {
        SocketAddr::from((Ipv4Addr::LOCALHOST, self.port))
    }

    /// The user sshd runs as, and the only one that can log in.
    pub fn user(&self) -> &TestUser {
        &self.user
    }

    /// Private half of the authorised client key.
    pub fn client_key(&self) -> &Path {
        &self.client_key
    }

    /// A `known_hosts` file holding `[127.0.0.1]:port <host key>`.
    pub fn known_hosts(&self) -> &Path {
        &self.known_hosts
    }

    /// The host public key as `type base64` (no comment).
    pub fn host_public_key(&self) -> &str {
        &self.host_public_key
    }

    /// The temp dir (owned by [`user`](Self::user)); a place for sockets sshd must reach.
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// Everything sshd logged so far.
    pub fn log(&self) -> String {
        let mut s = String::new();
        if let Ok(mut f) = fs::File::open(&self.log) {
            let _ = f.read_to_string(&mut s);
        }
        s
    }

    /// Pids of sshd and every process it forked (per-connection and privsep children).
    pub fn processes(&self) -> Vec<u32> {
        let Some(child) = &self.child else {
            return Vec::new();
        };
        let mut all = descendants(child.id());
        all.push(child.id());
        all
    }

    /// SIGKILLs sshd and every process it forked (the per-connection sshd processes call
    /// `setsid`, so a process group would miss them): established connections die too, as if
    /// the host crashed with its kernel still up (peers see RST/FIN).
    pub fn kill(&mut self) {
        let Some(mut child) = self.child.take() else {
            return;
        };
        let root = child.id();
        // Collect first: once the listener dies its children are reparented and untraceable.
        let mut victims = descendants(root);
        victims.push(root);
        for &pid in &victims {
            if let Some(pid) = rustix::process::Pid::from_raw(pid as i32) {
                let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
            }
        }
        let _ = child.wait();
        // The grandchildren are not ours to reap: wait until each is gone or a zombie (its
        // sockets are closed by then), so the port is really shut when we return.
        let deadline = Instant::now() + Duration::from_secs(5);
        while victims.iter().any(|p| alive(*p)) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(5));
        }
    }
}

impl Drop for Sshd {
    fn drop(&mut self) {
        self.kill();
    }
}

fn split_nul(b: &[u8]) -> Vec<String> {
    b.split(|&c| c == 0)
        .filter(|p| !p.is_empty())
        .map(|p| String::from_utf8_lossy(p).into_owned())
        .collect()
}

fn free_port() -> std::io::Result<u16> {
    Ok(TcpListener::bind((Ipv4Addr::LOCALHOST, 0))?
        .local_addr()?
        .port())
}

fn keygen(path: &Path, kind: KeyType, passphrase: Option<&str>) -> Result<(), SshdError> {
    let out = Command::new("ssh-keygen")
        .args(["-q"])
        .args(kind.keygen_args())
        .args(["-N", passphrase.unwrap_or(""), "-C", "testbed", "-f"])
        .arg(path)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| {
            if e.kind() == std::io::ErrorKind::NotFound {
                SshdError::NotInstalled("ssh-keygen".into())
            } else {
                SshdError::Keygen(e.to_string())
            }
        })?;
    if !out.status.success() {
        return Err(SshdError::Keygen(
            String::from_utf8_lossy(&out.stderr).into_owned(),
        ));
    }
    Ok(())
}

fn read_public(path: &Path) -> Result<String, SshdError> {
    let text = fs::read_to_string(path).map_err(io_err("reading host public key"))?;
    Ok(text
        .split_whitespace()
        .take(2)
        .collect::<Vec<_>>()
        .join(" "))
}

/// Whether `pid` exists and is not a zombie.
fn alive(pid: u32) -> bool {
    fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        stat.rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().next())
            != Some("Z")
    })
}

/// Every process below `root`, from `/proc/*/stat`.
fn descendants(root: u32) -> Vec<u32> {
    let mut children: HashMap<u32, Vec<u32>> = HashMap::new();
    for entry in fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|s| s.parse::<u32>().ok())
        else {
            continue;
        };
        let Ok(stat) = fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        // "pid (comm) state ppid ...": comm may contain spaces and parens, so split after ')'.
        let ppid = stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().nth(1))
            .and_then(|p| p.parse::<u32>().ok());
        if let Some(ppid) = ppid {
            children.entry(ppid).or_default().push(pid);
        }
    }
    let mut out = Vec::new();
    let mut todo = vec![root];
    while let Some(p) = todo.pop() {
        for &c in children.get(&p).map(Vec::as_slice).unwrap_or_default() {
            out.push(c);
            todo.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn starts_on_loopback_and_kill_takes_the_connections_down() {
        let mut sshd = match Sshd::start(&SshdOptions::default()) {
            Ok(s) => s,
            Err(e) if crate::required() => panic!("sshd could not start: {e}"),
            Err(e) => {
                eprintln!("SKIP: {e}");
                return;
            }
        };
        let kh = fs::read_to_string(sshd.known_hosts()).unwrap();
        assert_eq!(
            kh.trim(),
            format!("[127.0.0.1]:{} {}", sshd.port(), sshd.host_public_key())
        );
        assert!(sshd.host_public_key().starts_with("ssh-ed25519 "));
        // A client connection gets sshd's banner, then a per-connection process exists.
        let mut c = std::net::TcpStream::connect(sshd.addr()).unwrap();
        c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        let mut banner = [0u8; 8];
        c.read_exact(&mut banner).unwrap();
        assert_eq!(&banner, b"SSH-2.0-");
        let before = sshd.processes().len();
        assert!(before >= 2, "listener and per-connection process: {before}");

        sshd.kill();
        assert!(sshd.processes().is_empty());
        // The established connection died with it (EOF or reset, not a timeout).
        let mut rest = Vec::new();
        if let Err(e) = c.read_to_end(&mut rest) {
            assert_ne!(
                e.kind(),
                std::io::ErrorKind::WouldBlock,
                "connection still up"
            );
        }
        assert!(
            std::net::TcpStream::connect(sshd.addr()).is_err(),
            "port still open"
        );
    }
}
