//! A private session-mode `libvirtd`, started by a test and torn down on drop.
//!
//! Each [`Libvirtd`] gets its own temp dir under `/tmp` holding `HOME` and the `XDG_*` dirs, so
//! its socket, config, caches and storage pool are its own: tests may run many at once.
//!
//! ```text
//! /tmp/testbed-lvd-XXXXXX/            owned by the TestUser
//!   home/ config/libvirt/libvirtd.conf cache/ data/ pool/ (the dir pool's target)
//!   run/libvirt/libvirt-sock           ← socket_path(); uri() and test_uri() point here
//!   libvirtd.log                       ← the daemon's stderr; its tail is in start/virsh errors
//! ```
//!
//! The daemon runs in the foreground as our child (through `setpriv` when we are root, so the
//! child *is* libvirtd and signals reach it), as the unprivileged [`TestUser`]. Drop kills it
//! and every process that still points into the temp dir (the qemu and virtlogd it spawned
//! detach with `setsid`, so they are found through `/proc`), then removes the dir.
//!
//! Network listeners (optional, on 127.0.0.1, started with `--listen`): a TLS listener with
//! per-test certificates ([`LibvirtdBuilder::tls`], [`crate::pki`]) and a plain TCP one
//! ([`LibvirtdBuilder::tcp`]); with [`LibvirtdBuilder::sasl_user`] both demand SASL, checked
//! against a sasldb in the temp dir (`SASL_CONF_PATH`, `mech_list` from
//! [`LibvirtdBuilder::sasl_mechanisms`]).
//!
//! ```text
//!   pki/server/ pki/client/            ← the certificates (crate::pki)
//!   sasl/libvirt.conf sasl/passwd.db   ← Cyrus SASL config and users
//! ```
//!
//! Permissions, as found on Debian 12 / libvirt 9.0: the session socket is `0700` and owned by
//! the `TestUser`, and root connects anyway (DAC override); the session daemon does no peer-uid
//! check and `auth_unix_rw` defaults to `none`, so no extra config is needed for root.

use std::fmt::Write as _;
use std::fs;
use std::io;
use std::os::unix::fs::PermissionsExt as _;
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Output, Stdio};
use std::sync::{OnceLock, mpsc};
use std::thread;
use std::time::{Duration, Instant};

use rustix::process::{Pid, Signal, kill_process};
use tempfile::TempDir;

use crate::pki::{Pki, ServerCert};
use crate::user::{TestUser, UserError};

/// Name of the `dir` storage pool every daemon starts with, unless the builder says otherwise.
pub const DEFAULT_POOL: &str = "testpool";

/// How long `start()` waits for the socket by default.
pub const DEFAULT_START_TIMEOUT: Duration = Duration::from_secs(20);

/// How long [`Libvirtd::virsh`] waits. Generous: the first qemu-driver call of a daemon probes
/// qemu's capabilities, which took 8 s here when nothing was cached.
pub const VIRSH_TIMEOUT: Duration = Duration::from_secs(60);

/// Temp dirs are `/tmp/<prefix>XXXXXX`. Kept short: qemu's monitor socket path lives below it
/// and unix socket paths are limited to 107 bytes.
const DIR_PREFIX: &str = "testbed-lvd-";

const PATH: &str = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
const LOG_TAIL_LINES: usize = 30;

/// Errors from starting or driving a private libvirtd.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LibvirtdError {
    /// A program we need is not installed (`scripts/install-deps` installs it).
    #[error("{program} is not installed (scripts/install-deps installs it)")]
    NotInstalled {
        /// The missing program.
        program: &'static str,
    },
    /// The unprivileged user could not be set up.
    #[error("test user: {0}")]
    User(#[from] UserError),
    /// A file or process operation failed.
    #[error("{what}: {source}")]
    Io {
        /// What we were doing.
        what: String,
        /// The underlying error.
        #[source]
        source: io::Error,
    },
    /// The daemon exited while we waited for it.
    #[error("libvirtd exited during start ({status}); log tail:\n{log_tail}")]
    Exited {
        /// Its exit status.
        status: ExitStatus,
        /// The last lines of its log.
        log_tail: String,
    },
    /// Something did not happen in time.
    #[error("{what}: no answer after {waited:?}; libvirtd log tail:\n{log_tail}")]
    Timeout {
        /// What we waited for.
        what: String,
        /// How long we waited.
        waited: Duration,
        /// The last lines of the daemon's log.
        log_tail: String,
    },
    /// A `virsh` command failed.
    #[error("`virsh {args}` failed: {detail}; libvirtd log tail:\n{log_tail}")]
    Virsh {
        /// Its arguments.
        args: String,
        /// What it printed on stderr.
        detail: String,
        /// The last lines of the daemon's log.
        log_tail: String,
    },
    /// The daemon is not running (killed, or not restarted yet).
    #[error("libvirtd is not running")]
    NotRunning,
}

fn io_err(what: impl Into<String>) -> impl FnOnce(io::Error) -> LibvirtdError {
    let what = what.into();
    move |source| LibvirtdError::Io { what, source }
}

/// Options for a private libvirtd; [`Libvirtd::builder`] makes one.
#[derive(Debug, Clone)]
pub struct LibvirtdBuilder {
    keepalive_interval: Option<i32>,
    keepalive_count: Option<u32>,
    config_lines: Vec<String>,
    pool_name: String,
    start_timeout: Duration,
    tls: Option<ServerCert>,
    tcp: bool,
    sasl_users: Vec<(String, String)>,
    sasl_mechanisms: String,
    hostname: Option<String>,
}

impl Default for LibvirtdBuilder {
    fn default() -> Self {
        Self {
            keepalive_interval: None,
            keepalive_count: None,
            config_lines: Vec::new(),
            pool_name: DEFAULT_POOL.into(),
            start_timeout: DEFAULT_START_TIMEOUT,
            tls: None,
            tcp: false,
            sasl_users: Vec::new(),
            sasl_mechanisms: "scram-sha-256".into(),
            hostname: None,
        }
    }
}

impl LibvirtdBuilder {
    /// Run the daemon in a UTS namespace of its own under this host name, with a host UUID
    /// of its own (`host_uuid` in libvirtd.conf, derived from the name): the destination of
    /// a migration between two daemons on this host (libvirt refuses to migrate to a daemon
    /// whose host name or UUID is its own). Needs root (`unshare --uts`); otherwise the start
    /// fails with [`LibvirtdError::NotInstalled`] naming `unshare` (as root).
    #[must_use]
    pub fn hostname(mut self, name: impl Into<String>) -> Self {
        let name = name.into();
        let sum = name
            .bytes()
            .fold(0u64, |a, b| a.wrapping_mul(31).wrapping_add(b.into()));
        self.config_lines.push(format!(
            "host_uuid = \"7e570000-0000-4000-8000-{:012x}\"",
            sum & 0xffff_ffff_ffff
        ));
        self.hostname = Some(name);
        self
    }

    /// `keepalive_interval` in libvirtd.conf: seconds between server keepalive probes (-1: off).
    #[must_use]
    pub fn keepalive_interval(mut self, secs: i32) -> Self {
        self.keepalive_interval = Some(secs);
        self
    }

    /// `keepalive_count` in libvirtd.conf: unanswered probes before the server drops a client.
    #[must_use]
    pub fn keepalive_count(mut self, count: u32) -> Self {
        self.keepalive_count = Some(count);
        self
    }

    /// An extra line for libvirtd.conf, e.g. `max_client_requests = 1`.
    #[must_use]
    pub fn config_line(mut self, line: impl Into<String>) -> Self {
        self.config_lines.push(line.into());
        self
    }

    /// Name of the `dir` storage pool to create (default [`DEFAULT_POOL`]).
    #[must_use]
    pub fn pool_name(mut self, name: impl Into<String>) -> Self {
        self.pool_name = name.into();
        self
    }

    /// Listen for TLS on a free 127.0.0.1 port, with a fresh CA and this server certificate
    /// (see [`Libvirtd::tls_uri`], [`Libvirtd::pki`]). An expired certificate also sets
    /// `tls_no_sanity_certificate = 1`, or the daemon would refuse to start.
    #[must_use]
    pub fn tls(mut self, server: ServerCert) -> Self {
        self.tls = Some(server);
        self
    }

    /// Listen for plain TCP on a free 127.0.0.1 port ([`Libvirtd::tcp_port`]).
    #[must_use]
    pub fn tcp(mut self) -> Self {
        self.tcp = true;
        self
    }

    /// Demand SASL on the TLS and TCP listeners, and add this user to the sasldb.
    #[must_use]
    pub fn sasl_user(mut self, name: impl Into<String>, password: impl Into<String>) -> Self {
        self.sasl_users.push((name.into(), password.into()));
        self
    }

    /// Cyrus SASL's `mech_list` for the daemon (default `scram-sha-256`).
    #[must_use]
    pub fn sasl_mechanisms(mut self, list: impl Into<String>) -> Self {
        self.sasl_mechanisms = list.into();
        self
    }

    /// How long to wait for the daemon's socket (default [`DEFAULT_START_TIMEOUT`]).
    #[must_use]
    pub fn start_timeout(mut self, timeout: Duration) -> Self {
        self.start_timeout = timeout;
        self
    }

    #[cfg(test)]
    fn config(&self) -> String {
        self.config_with(None, Listen::default())
    }

    fn config_with(&self, pki: Option<&Path>, listen: Listen) -> String {
        let mut conf = String::from("# written by testbed::libvirtd\n");
        let auth = if self.sasl_users.is_empty() {
            "none"
        } else {
            "sasl"
        };
        let _ = writeln!(conf, "listen_addr = \"127.0.0.1\"");
        match (listen.tls, pki) {
            (Some(port), Some(pki)) => {
                let f = |n: &str| pki.join(n).display().to_string();
                let _ = writeln!(conf, "listen_tls = 1\ntls_port = \"{port}\"");
                let _ = writeln!(
                    conf,
                    "key_file = \"{}\"\ncert_file = \"{}\"\nca_file = \"{}\"",
                    f("serverkey.pem"),
                    f("servercert.pem"),
                    f("cacert.pem")
                );
                let _ = writeln!(conf, "auth_tls = \"{auth}\"");
                if self.tls.as_ref().is_some_and(|t| t.expired) {
                    let _ = writeln!(conf, "tls_no_sanity_certificate = 1");
                }
            }
            _ => {
                let _ = writeln!(conf, "listen_tls = 0");
            }
        }
        match listen.tcp {
            Some(port) => {
                let _ = writeln!(
                    conf,
                    "listen_tcp = 1\ntcp_port = \"{port}\"\nauth_tcp = \"{auth}\""
                );
            }
            None => {
                let _ = writeln!(conf, "listen_tcp = 0");
            }
        }
        if let Some(v) = self.keepalive_interval {
            let _ = writeln!(conf, "keepalive_interval = {v}");
        }
        if let Some(v) = self.keepalive_count {
            let _ = writeln!(conf, "keepalive_count = {v}");
        }
        for line in &self.config_lines {
            let _ = writeln!(conf, "{line}");
        }
        conf
    }

    /// Start the daemon and create and start its storage pool.
    pub fn start(self) -> Result<Libvirtd, LibvirtdError> {
        Libvirtd::launch(&self)
    }

    /// Like [`start`](Self::start), but when libvirt is not installed and
    /// [`crate::required`] is false, print why and return `None`.
    ///
    /// # Panics
    /// On any other start error, and when libvirt is missing but `TESTBED_REQUIRED=1`: a test
    /// that needs the daemon must fail loudly rather than pass without running.
    pub fn start_or_skip(self) -> Option<Libvirtd> {
        match self.start() {
            Ok(d) => Some(d),
            Err(e @ LibvirtdError::NotInstalled { .. }) if !crate::required() => {
                eprintln!("skipping: {e} (set TESTBED_REQUIRED=1 to make this a failure)");
                None
            }
            Err(e) => panic!("private libvirtd did not start: {e}"),
        }
    }
}

/// A short, daemon-writable directory (mode 1777 under `/tmp`) for unix sockets the daemon
/// creates, such as guest agent sockets: the session paths under a daemon's temp dir are too
/// deep for a unix socket (libvirt's default would exceed 108 bytes). Removed on drop.
pub fn short_socket_dir() -> TempDir {
    let dir = tempfile::Builder::new()
        .prefix("tbsock-")
        .tempdir_in("/tmp")
        .expect("temp dir in /tmp");
    fs::set_permissions(dir.path(), fs::Permissions::from_mode(0o1777)).expect("chmod 1777");
    dir
}

/// The programs a daemon needs, found once.
#[derive(Debug, Clone)]
struct Tools {
    libvirtd: PathBuf,
    virsh: PathBuf,
    /// Only when we switch user: unlike `runuser`, it execs, so our child is libvirtd itself.
    setpriv: Option<PathBuf>,
    /// Optional (util-linux has it everywhere): pins the daemon to one CPU.
    taskset: Option<PathBuf>,
    /// Only with [`LibvirtdBuilder::hostname`]: a UTS namespace for the daemon.
    unshare: Option<PathBuf>,
}

/// Ports of the network listeners.
#[derive(Debug, Clone, Copy, Default)]
struct Listen {
    tls: Option<u16>,
    tcp: Option<u16>,
}

/// A free 127.0.0.1 port (free now: another process may take it before the daemon binds it,
/// which `launch` retries).
fn free_port() -> Result<u16, LibvirtdError> {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .map_err(io_err("finding a free port"))
}

/// A private session-mode libvirtd; killed with everything it spawned on drop.
#[derive(Debug)]
pub struct Libvirtd {
    user: TestUser,
    tools: Tools,
    child: Option<Child>,
    pid: u32,
    /// `None` only while dropping.
    tmp: Option<TempDir>,
    dir: PathBuf,
    socket: PathBuf,
    log: PathBuf,
    pool_name: String,
    pool_path: PathBuf,
    start_timeout: Duration,
    kvm: bool,
    listen: Listen,
    pki: Option<Pki>,
    /// `SASL_CONF_PATH` of the daemon, when SASL is on.
    sasl_dir: Option<PathBuf>,
    /// Its own host name ([`LibvirtdBuilder::hostname`]).
    hostname: Option<String>,
}

impl Libvirtd {
    /// Start a daemon with default options.
    pub fn start() -> Result<Self, LibvirtdError> {
        Self::builder().start()
    }

    /// Start a daemon with default options, or skip: see [`LibvirtdBuilder::start_or_skip`].
    pub fn start_or_skip() -> Option<Self> {
        Self::builder().start_or_skip()
    }

    /// Options for a daemon.
    pub fn builder() -> LibvirtdBuilder {
        LibvirtdBuilder::default()
    }

    fn launch(opts: &LibvirtdBuilder) -> Result<Self, LibvirtdError> {
        let user = TestUser::get()?;
        let tools = Tools {
            libvirtd: find_program("libvirtd")?,
            virsh: find_program("virsh")?,
            setpriv: if user.switch {
                Some(find_program("setpriv")?)
            } else {
                None
            },
            taskset: find_program("taskset").ok(),
            unshare: match &opts.hostname {
                Some(_) if !user.switch => {
                    return Err(LibvirtdError::NotInstalled {
                        program: "unshare (as root)",
                    });
                }
                Some(_) => Some(find_program("unshare")?),
                None => None,
            },
        };
        reap_stale_dirs(&user);
        let kvm = kvm_for(&user, tools.setpriv.as_deref());

        let tmp = tempfile::Builder::new()
            .prefix(DIR_PREFIX)
            .tempdir_in("/tmp")
            .map_err(io_err("creating temp dir in /tmp"))?;
        let dir = tmp.path().to_path_buf();
        for sub in ["home", "run", "config/libvirt", "cache", "data", "pool"] {
            fs::create_dir_all(dir.join(sub)).map_err(io_err(format!("creating {sub}")))?;
        }
        // Written whole, then renamed: the reaper of another test process may read it any time.
        let stamp = owner_stamp(rustix::process::getpid()).unwrap_or_default();
        fs::write(dir.join("owner.tmp"), stamp)
            .and_then(|()| fs::rename(dir.join("owner.tmp"), dir.join("owner")))
            .map_err(io_err("writing owner stamp"))?;
        let pki = match &opts.tls {
            Some(server) => Some(
                Pki::generate(&dir.join("pki"), server)
                    .map_err(io_err("generating certificates"))?,
            ),
            None => None,
        };
        let sasl_dir = if opts.sasl_users.is_empty() {
            None
        } else {
            Some(write_sasl(
                &dir.join("sasl"),
                &opts.sasl_mechanisms,
                &opts.sasl_users,
            )?)
        };
        caps_cache::seed(&dir);
        // The dir stays 0700 (tempfile's default); root enters the user's dir by DAC override.

        let mut d = Self {
            socket: dir.join("run/libvirt/libvirt-sock"),
            log: dir.join("libvirtd.log"),
            pool_path: dir.join("pool"),
            pool_name: opts.pool_name.clone(),
            start_timeout: opts.start_timeout,
            user,
            tools,
            child: None,
            pid: 0,
            tmp: Some(tmp),
            dir,
            kvm,
            listen: Listen::default(),
            pki,
            sasl_dir,
            hostname: opts.hostname.clone(),
        };
        // A port found free may be taken before the daemon binds it: try a few.
        for attempt in 0.. {
            d.listen = Listen {
                tls: if opts.tls.is_some() {
                    Some(free_port()?)
                } else {
                    None
                },
                tcp: if opts.tcp { Some(free_port()?) } else { None },
            };
            let conf = opts.config_with(d.pki.as_ref().map(Pki::server_dir).as_deref(), d.listen);
            fs::write(d.dir.join("config/libvirt/libvirtd.conf"), conf)
                .map_err(io_err("writing libvirtd.conf"))?;
            d.user.own(&d.dir)?;
            match d.spawn() {
                Err(LibvirtdError::Exited { log_tail, .. })
                    if attempt < 3 && log_tail.contains("Address already in use") => {}
                r => {
                    r?;
                    break;
                }
            }
        }
        d.virsh(&[
            "pool-define-as",
            &d.pool_name,
            "dir",
            "--target",
            &d.pool_path.to_string_lossy(),
        ])?;
        d.virsh(&["pool-start", &d.pool_name])?;
        Ok(d)
    }

    /// Environment of the daemon: everything per-user lives in the temp dir.
    fn env(&self) -> Vec<(&'static str, String)> {
        let p = |sub: &str| self.dir.join(sub).to_string_lossy().into_owned();
        let mut env = vec![
            ("PATH", PATH.into()),
            ("LC_ALL", "C".into()),
            ("USER", self.user.name.clone()),
            ("LOGNAME", self.user.name.clone()),
            ("HOME", p("home")),
            ("XDG_RUNTIME_DIR", p("run")),
            ("XDG_CONFIG_HOME", p("config")),
            ("XDG_CACHE_HOME", p("cache")),
            ("XDG_DATA_HOME", p("data")),
        ];
        if let Some(sasl) = &self.sasl_dir {
            env.push(("SASL_CONF_PATH", sasl.to_string_lossy().into_owned()));
        }
        // For measuring the daemon's allocator (benchmarks.md, "Where the daemon's TLS
        // download CPU goes"): glibc malloc tunables for libvirtd only.
        if let Ok(t) = std::env::var("TESTBED_LIBVIRTD_GLIBC_TUNABLES") {
            env.push(("GLIBC_TUNABLES", t));
        }
        env
    }

    /// Start the process and wait until its socket accepts connections.
    fn spawn(&mut self) -> Result<(), LibvirtdError> {
        let log = fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.log)
            .map_err(io_err("opening libvirtd.log"))?;
        let log2 = log.try_clone().map_err(io_err("opening libvirtd.log"))?;
        let mut argv: Vec<std::ffi::OsString> = Vec::new();
        if let (Some(unshare), Some(name)) = (&self.tools.unshare, &self.hostname) {
            // unshare and sh both exec: our child is still libvirtd itself.
            argv.extend([
                unshare.into(),
                "--uts".into(),
                "--".into(),
                "/bin/sh".into(),
                "-c".into(),
                "hostname \"$0\" && exec \"$@\"".into(),
                name.into(),
            ]);
        }
        if let (Some(taskset), Some(cpu)) = (&self.tools.taskset, first_allowed_cpu()) {
            // libvirt invalidates its qemu capability cache when the host cpuid differs, and
            // cpuid leaf 0x1f returns the x2APIC id of the core it runs on: unpinned, the
            // shared cache missed about half the time (8 s re-probe). qemu is unaffected:
            // libvirt resets each domain's affinity to all host CPUs.
            argv.extend([taskset.into(), "-c".into(), cpu.to_string().into()]);
        }
        if let Some(setpriv) = &self.tools.setpriv {
            // --init-groups: the daemon needs the supplementary group `kvm` for /dev/kvm.
            argv.extend([
                setpriv.into(),
                format!("--reuid={}", self.user.uid).into(),
                format!("--regid={}", self.user.gid).into(),
                "--init-groups".into(),
                "--".into(),
            ]);
        }
        argv.push(self.tools.libvirtd.clone().into());
        if self.listen.tls.is_some() || self.listen.tcp.is_some() {
            argv.push("--listen".into());
        }
        let mut cmd = Command::new(&argv[0]);
        cmd.args(&argv[1..]);
        // No `-d`: a foreground child we own can be signalled and reaped reliably.
        cmd.env_clear()
            .envs(self.env())
            .current_dir(&self.dir)
            .stdin(Stdio::null())
            .stdout(log)
            .stderr(log2);
        let child = cmd.spawn().map_err(io_err(format!(
            "spawning {}",
            self.tools.libvirtd.display()
        )))?;
        self.pid = child.id();
        self.child = Some(child);

        // The socket file survives a killed daemon, so wait for a connect, not for the file.
        let start = Instant::now();
        loop {
            if let Some(status) = self
                .child
                .as_mut()
                .and_then(|c| c.try_wait().ok().flatten())
            {
                self.child = None;
                return Err(LibvirtdError::Exited {
                    status,
                    log_tail: self.log_tail(),
                });
            }
            let listening = |port: Option<u16>| {
                port.is_none_or(|p| std::net::TcpStream::connect(("127.0.0.1", p)).is_ok())
            };
            if UnixStream::connect(&self.socket).is_ok()
                && listening(self.listen.tls)
                && listening(self.listen.tcp)
            {
                return Ok(());
            }
            if start.elapsed() > self.start_timeout {
                let e = LibvirtdError::Timeout {
                    what: format!("waiting for {}", self.socket.display()),
                    waited: start.elapsed(),
                    log_tail: self.log_tail(),
                };
                self.stop_now();
                return Err(e);
            }
            thread::sleep(Duration::from_millis(20));
        }
    }

    /// SIGKILL the daemon and reap it.
    fn stop_now(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    fn signal(&self, sig: Signal) -> Result<(), LibvirtdError> {
        if self.child.is_none() {
            return Err(LibvirtdError::NotRunning);
        }
        let pid = Pid::from_raw(self.pid as i32).ok_or(LibvirtdError::NotRunning)?;
        kill_process(pid, sig).map_err(|e| LibvirtdError::Io {
            what: format!("signalling libvirtd {}", self.pid),
            source: e.into(),
        })
    }

    /// Stop the daemon (SIGSTOP): its socket still accepts, but nothing answers. Returns once
    /// all its threads are stopped (the signal is delivered asynchronously).
    pub fn freeze(&self) -> Result<(), LibvirtdError> {
        self.signal(Signal::STOP)?;
        let deadline = Instant::now() + Duration::from_secs(5);
        while !all_threads_stopped(self.pid) {
            if Instant::now() > deadline {
                return Err(LibvirtdError::Timeout {
                    what: format!("SIGSTOP of libvirtd {}", self.pid),
                    waited: Duration::from_secs(5),
                    log_tail: self.log_tail(),
                });
            }
            thread::sleep(Duration::from_millis(5));
        }
        Ok(())
    }

    /// Resume a frozen daemon (SIGCONT).
    pub fn thaw(&self) -> Result<(), LibvirtdError> {
        self.signal(Signal::CONT)
    }

    /// Kill the daemon abruptly (SIGKILL) and reap it. Domains it started keep running, as
    /// after a real crash; [`restart`](Self::restart) brings the daemon back.
    pub fn kill(&mut self) -> Result<(), LibvirtdError> {
        if self.child.is_none() {
            return Err(LibvirtdError::NotRunning);
        }
        self.stop_now();
        Ok(())
    }

    /// Stop the daemon gracefully (SIGTERM, SIGKILL after 10 s) if it runs, start it again with
    /// the same dir and config, and make sure the pool is active.
    pub fn restart(&mut self) -> Result<(), LibvirtdError> {
        if let Some(mut child) = self.child.take() {
            // A frozen daemon would hold SIGTERM pending forever.
            let _ = self.thaw_pid();
            if let Some(pid) = Pid::from_raw(self.pid as i32) {
                let _ = kill_process(pid, Signal::TERM);
            }
            let deadline = Instant::now() + Duration::from_secs(10);
            while matches!(child.try_wait(), Ok(None)) && Instant::now() < deadline {
                thread::sleep(Duration::from_millis(20));
            }
            let _ = child.kill();
            let _ = child.wait();
        }
        self.spawn()?;
        let active = self.virsh(&["pool-list", "--name"])?;
        if !active.lines().any(|l| l.trim() == self.pool_name) {
            self.virsh(&["pool-start", &self.pool_name])?;
        }
        Ok(())
    }

    fn thaw_pid(&self) -> rustix::io::Result<()> {
        match Pid::from_raw(self.pid as i32) {
            Some(pid) => kill_process(pid, Signal::CONT),
            None => Ok(()),
        }
    }

    /// Whether the daemon process is alive (frozen counts as alive).
    pub fn is_running(&mut self) -> bool {
        match &mut self.child {
            Some(c) => matches!(c.try_wait(), Ok(None)),
            None => false,
        }
    }

    /// The session socket.
    pub fn socket_path(&self) -> &Path {
        &self.socket
    }

    /// `qemu+unix:///session?socket=<socket>`: the qemu driver of this daemon.
    pub fn uri(&self) -> String {
        format!("qemu+unix:///session?socket={}", self.socket.display())
    }

    /// `test+unix:///default?socket=<socket>`: libvirt's mock `test:///default` driver, served
    /// by the same daemon and socket.
    pub fn test_uri(&self) -> String {
        format!("test+unix:///default?socket={}", self.socket.display())
    }

    /// The TLS listener's port, if [`LibvirtdBuilder::tls`] was set.
    pub fn tls_port(&self) -> Option<u16> {
        self.listen.tls
    }

    /// The plain TCP listener's port, if [`LibvirtdBuilder::tcp`] was set.
    pub fn tcp_port(&self) -> Option<u16> {
        self.listen.tcp
    }

    /// The certificates, if [`LibvirtdBuilder::tls`] was set.
    pub fn pki(&self) -> Option<&Pki> {
        self.pki.as_ref()
    }

    /// `qemu+tls://127.0.0.1:PORT/session?pkipath=<good client dir>`: the qemu driver over
    /// TLS with a client certificate the daemon accepts.
    ///
    /// # Panics
    /// Without [`LibvirtdBuilder::tls`].
    pub fn tls_uri(&self) -> String {
        let pki = self.pki.as_ref().expect("a TLS daemon");
        self.tls_uri_with("qemu", "session", &pki.good_client_dir())
    }

    /// `DRIVER+tls://127.0.0.1:PORT/PATH?pkipath=<pkipath>`.
    ///
    /// # Panics
    /// Without [`LibvirtdBuilder::tls`].
    pub fn tls_uri_with(&self, driver: &str, path: &str, pkipath: &Path) -> String {
        format!(
            "{driver}+tls://127.0.0.1:{}/{path}?pkipath={}",
            self.listen.tls.expect("a TLS daemon"),
            pkipath.display()
        )
    }

    /// Name of the running `dir` storage pool.
    pub fn pool_name(&self) -> &str {
        &self.pool_name
    }

    /// Target dir of the storage pool (volumes are files here).
    pub fn pool_path(&self) -> &Path {
        &self.pool_path
    }

    /// The daemon's temp dir.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The user the daemon runs as.
    pub fn user(&self) -> &TestUser {
        &self.user
    }

    /// Pid of the daemon (of the last one started: after [`kill`](Self::kill) it is gone).
    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// The daemon's log (its stdout and stderr).
    pub fn log_path(&self) -> &Path {
        &self.log
    }

    /// The last lines of the daemon's log.
    pub fn log_tail(&self) -> String {
        let text = fs::read_to_string(&self.log).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        lines[lines.len().saturating_sub(LOG_TAIL_LINES)..].join("\n")
    }

    /// qemu's log for domain `name` (libvirt's `<cache>/libvirt/qemu/log/NAME.log`): where to
    /// look when `virsh start` says only "the cause is unknown".
    pub fn domain_log(&self, name: &str) -> String {
        let path = self.dir.join(format!("cache/libvirt/qemu/log/{name}.log"));
        fs::read_to_string(path).unwrap_or_default()
    }

    /// Whether domains should be `type='kvm'`: the daemon's user can open `/dev/kvm`.
    pub fn kvm(&self) -> bool {
        self.kvm
    }

    /// `"kvm"` or `"qemu"` (software emulation), per [`kvm`](Self::kvm).
    pub fn domain_type(&self) -> &'static str {
        if self.kvm { "kvm" } else { "qemu" }
    }

    /// XML for a minimal domain with no OS and no disks (1 vCPU, 64 MiB): it boots into the
    /// BIOS and keeps running, which is all a lifecycle test needs.
    pub fn minimal_domain_xml(&self, name: &str) -> String {
        format!(
            "<domain type='{}'>\n  <name>{}</name>\n  <memory unit='MiB'>64</memory>\n  \
             <vcpu>1</vcpu>\n  <os>\n    <type arch='x86_64'>hvm</type>\n  </os>\n</domain>\n",
            self.domain_type(),
            xml_escape(name)
        )
    }

    /// Run `virsh` against [`uri`](Self::uri) as the current user, within [`VIRSH_TIMEOUT`];
    /// returns its stdout.
    pub fn virsh(&self, args: &[&str]) -> Result<String, LibvirtdError> {
        self.virsh_with(&self.uri(), VIRSH_TIMEOUT, args)
    }

    /// Run `virsh -c <uri>` with a timeout; returns its stdout.
    pub fn virsh_with(
        &self,
        uri: &str,
        timeout: Duration,
        args: &[&str],
    ) -> Result<String, LibvirtdError> {
        match run_virsh(&self.tools.virsh, uri, timeout, args).map_err(io_err("running virsh"))? {
            VirshRun::Done(stdout) => Ok(stdout),
            VirshRun::TimedOut(line) => Err(LibvirtdError::Timeout {
                what: format!("virsh {line}"),
                waited: timeout,
                log_tail: self.log_tail(),
            }),
            VirshRun::Failed { line, stderr } => Err(LibvirtdError::Virsh {
                args: line,
                detail: stderr,
                log_tail: self.log_tail(),
            }),
        }
    }
}

impl Drop for Libvirtd {
    fn drop(&mut self) {
        self.stop_now();
        let left = kill_processes_in(&self.dir, self.user.uid);
        if !left.is_empty() {
            eprintln!("testbed::libvirtd: processes survived SIGKILL: {left:?}");
        }
        caps_cache::harvest(&self.dir);
        if let Some(tmp) = self.tmp.take()
            && let Err(e) = tmp.close()
        {
            eprintln!("testbed::libvirtd: removing {}: {e}", self.dir.display());
        }
    }
}

/// Cyrus SASL's config for the daemon (`<dir>/libvirt.conf`) and a sasldb with `users`.
fn write_sasl(
    dir: &Path,
    mechanisms: &str,
    users: &[(String, String)],
) -> Result<PathBuf, LibvirtdError> {
    let saslpasswd2 = find_program("saslpasswd2")?;
    fs::create_dir_all(dir).map_err(io_err("creating the SASL dir"))?;
    let db = dir.join("passwd.db");
    fs::write(
        dir.join("libvirt.conf"),
        format!("mech_list: {mechanisms}\nsasldb_path: {}\n", db.display()),
    )
    .map_err(io_err("writing the SASL config"))?;
    for (name, password) in users {
        let mut child = Command::new(&saslpasswd2)
            .args(["-p", "-a", "libvirt", "-f"])
            .arg(&db)
            .args(["-c", name])
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(io_err("running saslpasswd2"))?;
        if let Some(mut stdin) = child.stdin.take() {
            use std::io::Write as _;
            stdin
                .write_all(password.as_bytes())
                .map_err(io_err("writing to saslpasswd2"))?;
        }
        let out = child
            .wait_with_output()
            .map_err(io_err("running saslpasswd2"))?;
        if !out.status.success() {
            return Err(LibvirtdError::Io {
                what: format!("saslpasswd2 for {name}"),
                source: io::Error::other(String::from_utf8_lossy(&out.stderr).into_owned()),
            });
        }
    }
    Ok(dir.to_path_buf())
}

/// The lowest CPU this process may run on (from `Cpus_allowed_list`, e.g. `0-1,4`).
fn first_allowed_cpu() -> Option<u32> {
    let status = fs::read_to_string("/proc/self/status").ok()?;
    let list = status
        .lines()
        .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))?;
    list.trim().split([',', '-']).next()?.parse().ok()
}

/// Whether every thread of `pid` is in state `T` (stopped).
fn all_threads_stopped(pid: u32) -> bool {
    let Ok(tasks) = fs::read_dir(format!("/proc/{pid}/task")) else {
        return false;
    };
    tasks.flatten().all(|t| {
        fs::read_to_string(t.path().join("stat")).is_ok_and(|s| {
            s.rsplit_once(')')
                .is_some_and(|(_, rest)| rest.trim_start().starts_with('T'))
        })
    })
}

/// Kill (SIGKILL, repeatedly for up to 5 s) processes of `uid` whose command line or
/// environment mentions `dir`. qemu and virtlogd `setsid` away from libvirtd, so neither the
/// child nor its process group reaches them. Returns the pids still there at the end.
pub(crate) fn kill_processes_in(dir: &Path, uid: u32) -> Vec<u32> {
    let needle = format!("{}/", dir.display()).into_bytes();
    let me = std::process::id();
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let found: Vec<u32> = processes_mentioning(&needle, uid)
            .into_iter()
            .filter(|&p| p != me)
            .collect();
        if found.is_empty() || Instant::now() > deadline {
            return found;
        }
        for pid in &found {
            if let Some(pid) = Pid::from_raw(*pid as i32) {
                let _ = kill_process(pid, Signal::KILL);
            }
        }
        thread::sleep(Duration::from_millis(20));
    }
}

/// Pids of `uid`'s processes whose cmdline or environ contains `needle`. Zombies have neither,
/// so they do not count.
fn processes_mentioning(needle: &[u8], uid: u32) -> Vec<u32> {
    let Ok(entries) = fs::read_dir("/proc") else {
        return Vec::new();
    };
    let mut pids = Vec::new();
    for e in entries.flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else {
            continue;
        };
        let base = e.path();
        // Status's Uid line (real, effective, ...): /proc/PID itself is root's when the
        // process is not dumpable.
        let Ok(status) = fs::read_to_string(base.join("status")) else {
            continue;
        };
        let owned = status
            .lines()
            .find_map(|l| l.strip_prefix("Uid:"))
            .is_some_and(|ids| ids.split_whitespace().any(|id| id == uid.to_string()));
        if !owned {
            continue;
        }
        let hit = ["cmdline", "environ"].iter().any(|f| {
            fs::read(base.join(f)).is_ok_and(|b| b.windows(needle.len()).any(|w| w == needle))
        });
        if hit {
            pids.push(pid);
        }
    }
    pids
}

/// "pid starttime" of a process: identifies it even after its pid is reused.
pub(crate) fn owner_stamp(pid: Pid) -> Option<String> {
    let stat = fs::read_to_string(format!("/proc/{}/stat", pid.as_raw_pid())).ok()?;
    // Field 22 (starttime); fields are counted from after the parenthesised command name.
    let start = stat.rsplit_once(')')?.1.split_whitespace().nth(19)?;
    Some(format!("{} {start}", pid.as_raw_pid()))
}

/// Temp dirs `/tmp/PREFIX*` whose owner stamp names a process that is gone: left by test
/// processes that died without dropping their daemon (SIGKILL, abort, Ctrl-C). A dir with no
/// stamp yet is skipped: a live process may be creating it right now.
pub(crate) fn stale_dirs(prefix: &str) -> Vec<PathBuf> {
    let Ok(entries) = fs::read_dir("/tmp") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with(prefix))
        .map(|e| e.path())
        .filter(|path| {
            let Ok(stamp) = fs::read_to_string(path.join("owner")) else {
                return false;
            };
            let Some(pid) = stamp.split_whitespace().next().and_then(|p| p.parse().ok()) else {
                return false;
            };
            Pid::from_raw(pid)
                .and_then(owner_stamp)
                .is_none_or(|now| now != stamp.trim())
        })
        .collect()
}

/// Remove the [`stale_dirs`] of this kind of daemon and kill what still runs in them. Once
/// per process.
fn reap_stale_dirs(user: &TestUser) {
    static ONCE: OnceLock<()> = OnceLock::new();
    ONCE.get_or_init(|| {
        for path in stale_dirs(DIR_PREFIX) {
            kill_processes_in(&path, user.uid);
            let _ = fs::remove_dir_all(&path);
        }
    });
}

/// Whether the daemon's user can use `/dev/kvm`; when we are root and it cannot, add it to
/// group `kvm` first (`/dev/kvm` is `root:kvm 0660` on Debian). Once per process.
fn kvm_for(user: &TestUser, setpriv: Option<&Path>) -> bool {
    static KVM: OnceLock<bool> = OnceLock::new();
    *KVM.get_or_init(|| {
        if !Path::new("/dev/kvm").exists() {
            return false;
        }
        let usable = || match setpriv {
            None => fs::OpenOptions::new()
                .read(true)
                .write(true)
                .open("/dev/kvm")
                .is_ok(),
            Some(setpriv) => {
                let mut c = Command::new(setpriv);
                c.arg(format!("--reuid={}", user.uid))
                    .arg(format!("--regid={}", user.gid))
                    .args(["--init-groups", "--", "sh", "-c", "exec 3<>/dev/kvm"]);
                run_with_timeout(c, Duration::from_secs(10))
                    .is_ok_and(|o| o.is_some_and(|o| o.status.success()))
            }
        };
        if usable() {
            return true;
        }
        if user.switch && group_exists("kvm") {
            // usermod takes a lock on /etc/group; parallel test processes may contend.
            for _ in 0..20 {
                let mut c = Command::new("usermod");
                c.args(["-aG", "kvm", &user.name]);
                if run_with_timeout(c, Duration::from_secs(10))
                    .is_ok_and(|o| o.is_some_and(|o| o.status.success()))
                {
                    break;
                }
                thread::sleep(Duration::from_millis(100));
            }
            if usable() {
                return true;
            }
        }
        eprintln!(
            "testbed::libvirtd: {} cannot open /dev/kvm; domains use type 'qemu'",
            user.name
        );
        false
    })
}

fn group_exists(name: &str) -> bool {
    fs::read_to_string("/etc/group")
        .is_ok_and(|g| g.lines().any(|l| l.split(':').next() == Some(name)))
}

/// How one `virsh` run ended (the daemons' `virsh` methods map it to their own error types).
pub(crate) enum VirshRun {
    /// Exit status 0: its stdout.
    Done(String),
    /// Killed at the timeout; its arguments joined by spaces.
    TimedOut(String),
    /// A non-zero exit.
    Failed {
        /// Its arguments joined by spaces.
        line: String,
        /// What it printed on stderr, trimmed.
        stderr: String,
    },
}

/// Run `virsh -c URI ARGS…` (C locale, no `LIBVIRT_DEFAULT_URI`) within `timeout`.
pub(crate) fn run_virsh(
    virsh: &Path,
    uri: &str,
    timeout: Duration,
    args: &[&str],
) -> io::Result<VirshRun> {
    let mut cmd = Command::new(virsh);
    cmd.arg("-c")
        .arg(uri)
        .args(args)
        .env_remove("LIBVIRT_DEFAULT_URI")
        .env("LC_ALL", "C");
    let line = args.join(" ");
    Ok(match run_with_timeout(cmd, timeout)? {
        None => VirshRun::TimedOut(line),
        Some(out) if out.status.success() => {
            VirshRun::Done(String::from_utf8_lossy(&out.stdout).into())
        }
        Some(out) => VirshRun::Failed {
            line,
            stderr: String::from_utf8_lossy(&out.stderr).trim().into(),
        },
    })
}

/// Run `cmd` with piped output; `None` if it did not finish within `timeout` (it is killed).
pub(crate) fn run_with_timeout(mut cmd: Command, timeout: Duration) -> io::Result<Option<Output>> {
    let child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()?;
    let pid = child.id();
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    if let Ok(r) = rx.recv_timeout(timeout) {
        return r.map(Some);
    }
    if let Some(pid) = Pid::from_raw(pid as i32) {
        let _ = kill_process(pid, Signal::KILL);
    }
    // Reap it before returning.
    let _ = rx.recv();
    Ok(None)
}

/// `name` in PATH, or in the sbin dirs a non-root PATH often lacks.
pub(crate) fn find_program(name: &'static str) -> Result<PathBuf, LibvirtdError> {
    let path = std::env::var("PATH").unwrap_or_default();
    path.split(':')
        .chain(["/usr/sbin", "/sbin", "/usr/bin", "/bin"])
        .filter(|d| !d.is_empty())
        .map(|d| Path::new(d).join(name))
        .find(|p| fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0))
        .ok_or(LibvirtdError::NotInstalled { program: name })
}

fn xml_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '\'' => out.push_str("&apos;"),
            '"' => out.push_str("&quot;"),
            c => out.push(c),
        }
    }
    out
}

/// A cache of qemu capability files shared by all daemons of this machine.
///
/// A fresh session daemon probes qemu on its first qemu-driver call: 8 s here, against 0.1 s
/// with the cache. libvirt re-validates every cached file (qemu and libvirtd ctimes, kernel,
/// microcode, /dev/kvm access) and re-probes when stale, so sharing is safe.
mod caps_cache {
    use std::os::unix::fs::{DirBuilderExt as _, MetadataExt as _};
    use std::sync::atomic::{AtomicU64, Ordering};

    use super::{Path, PathBuf, fs};

    const SUB: &str = "cache/libvirt/qemu/cache/capabilities";

    /// `/tmp/testbed-lvd-caps-<euid>`, if it is a real dir of ours (no one else's planted files).
    fn shared() -> Option<PathBuf> {
        let euid = rustix::process::geteuid().as_raw();
        let dir = PathBuf::from(format!("/tmp/testbed-lvd-caps-{euid}"));
        let _ = fs::DirBuilder::new().mode(0o700).create(&dir);
        let m = fs::symlink_metadata(&dir).ok()?;
        (m.is_dir() && m.uid() == euid && m.mode() & 0o777 == 0o700).then_some(dir)
    }

    /// Copy the shared cache into a new daemon's dir (before it is chowned).
    pub(super) fn seed(daemon_dir: &Path) {
        let Some(shared) = shared() else { return };
        let dst = daemon_dir.join(SUB);
        copy_xml(&shared, &dst, false);
    }

    /// Copy a finished daemon's capability files into the shared cache.
    pub(super) fn harvest(daemon_dir: &Path) {
        let Some(shared) = shared() else { return };
        copy_xml(&daemon_dir.join(SUB), &shared, true);
    }

    fn copy_xml(from: &Path, to: &Path, atomic: bool) {
        let Ok(entries) = fs::read_dir(from) else {
            return;
        };
        let files: Vec<_> = entries
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "xml"))
            .collect();
        if files.is_empty() || fs::create_dir_all(to).is_err() {
            return;
        }
        for src in files {
            let Some(name) = src.file_name() else {
                continue;
            };
            let dst = to.join(name);
            if atomic {
                // Daemons finish concurrently: readers must never see half a file.
                static SEQ: AtomicU64 = AtomicU64::new(0);
                let seq = SEQ.fetch_add(1, Ordering::Relaxed);
                let tmp = to.join(format!(
                    ".{}.{}.{seq}",
                    name.to_string_lossy(),
                    std::process::id()
                ));
                if fs::copy(&src, &tmp).is_ok() && fs::rename(&tmp, &dst).is_err() {
                    let _ = fs::remove_file(&tmp);
                }
            } else {
                let _ = fs::copy(&src, &dst);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn config_lines() {
        let b = Libvirtd::builder()
            .keepalive_interval(-1)
            .keepalive_count(0)
            .config_line("x = 1");
        assert!(
            b.config()
                .ends_with("keepalive_interval = -1\nkeepalive_count = 0\nx = 1\n")
        );
    }

    #[test]
    fn listener_config() {
        let b = Libvirtd::builder()
            .tls(ServerCert::default())
            .tcp()
            .sasl_user("alice", "pw");
        let listen = Listen {
            tls: Some(7001),
            tcp: Some(7002),
        };
        let c = b.config_with(Some(Path::new("/p")), listen);
        for line in [
            "listen_tls = 1",
            "tls_port = \"7001\"",
            "cert_file = \"/p/servercert.pem\"",
            "auth_tls = \"sasl\"",
            "listen_tcp = 1",
            "auth_tcp = \"sasl\"",
        ] {
            assert!(c.lines().any(|l| l == line), "{line} missing in\n{c}");
        }
        assert!(!c.contains("tls_no_sanity_certificate"));
    }

    #[test]
    fn missing_program_is_not_installed() {
        let e = find_program("testbed-no-such-program").unwrap_err();
        assert!(matches!(
            e,
            LibvirtdError::NotInstalled {
                program: "testbed-no-such-program"
            }
        ));
    }

    #[test]
    fn escapes_domain_names() {
        assert_eq!(xml_escape(r#"a<b>&'""#), "a&lt;b&gt;&amp;&apos;&quot;");
    }

    #[test]
    fn first_cpu_is_parsed() {
        assert!(first_allowed_cpu().is_some());
    }
}
