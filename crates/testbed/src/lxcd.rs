//! A private **privileged** libvirtd running only the LXC driver. **Root only.**
//!
//! libvirt's LXC driver exists only in a privileged daemon (`lxc:///system`), and a privileged
//! daemon keeps its state under fixed paths: `/run/libvirt` (`lxc/NAME.pid`, the controllers'
//! sockets, `/dev` and `devpts` dirs), `/var/lib/libvirt/lxc`, `/var/log/libvirt/lxc/NAME.log`
//! and `/etc/libvirt/lxc` (persistent definitions). Debian 12's libvirt 9.0 has no
//! `virtlxcd`, so the daemon is the monolithic `libvirtd`, which would load every driver of
//! the host (qemu, network with its autostarted default bridge, storage, …).
//!
//! So the daemon gets:
//! - a **mount namespace of its own** (`unshare --mount --propagation private`) in which
//!   `/run`, `/var/lib/libvirt`, `/var/log/libvirt` and `/etc/libvirt` are bind mounts of
//!   dirs in its temp dir: nothing of it is written to those host paths, and several daemons
//!   (tests in parallel, other processes) never see each other's state. No lock serialises
//!   them: the only host-wide names left are the cgroups `machine/lxc-<controller pid>-<name>`,
//!   unique per controller (a lock file only guards the removal of the shared `machine`
//!   partitions, below);
//! - **only the LXC driver**: `LIBVIRT_DRIVER_DIR` names a dir holding nothing but a link to
//!   `libvirt_driver_lxc.so`, so no qemu, network, storage, … driver starts;
//! - its sockets in its temp dir (`unix_sock_dir`), `--pid-file` there, no TCP (no `--listen`);
//! - on a hybrid cgroup layout (v1 controllers plus `/sys/fs/cgroup/unified`), the v2 mount
//!   unmounted in that namespace: libvirt 9.0's container setup fails there with "Unable to
//!   create directory /sys/fs/cgroup/unified" (seen on this box), and uses v1 without it.
//!
//! ```text
//! /tmp/testbed-lxcd-XXXXXX/             root's, removed on drop
//!   libvirtd.conf  libvirtd.pid  owner
//!   drivers/libvirt_driver_lxc.so       → the installed module (LIBVIRT_DRIVER_DIR)
//!   sock/libvirt-sock                   ← socket_path(); uri() points here
//!   libvirtd.log                        ← the daemon's stderr and log file
//!   root/run  root/lib  root/log  root/etc   bound on /run, /var/lib/libvirt, /var/log/libvirt,
//!                                       /etc/libvirt in the daemon's namespace
//! ```
//!
//! Drop destroys the running containers through the daemon, kills it, then kills whatever
//! still belongs to it — in its mount namespace (held open from the start, so that its
//! number, which the kernel hands to the next namespace made once one dies, stays the
//! daemon's), or with its bind mounts in its own (the
//! `libvirt_lxc` controllers detach and unshare one) — with their descendants, and removes
//! their cgroups and the temp dir. The last daemon of the process removes the driver's
//! `machine` cgroup partitions if they were not there before the first and no other process
//! has a daemon alive (a shared `flock` on `/tmp/testbed-lxcd.lock`). Dirs left by a test
//! process that died are reaped the same way by the next start (its partitions stay).
//!
//! When we are not root the tests skip with a message ([`Lxcd::start_or_skip`]), whatever
//! `TESTBED_REQUIRED` says; as root with `TESTBED_REQUIRED=1` a daemon that cannot start is a
//! failure.

use std::collections::{HashMap, HashSet};
use std::fs;
use std::io;
use std::os::fd::AsRawFd as _;
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Mutex, OnceLock};
use std::thread;
use std::time::{Duration, Instant};

use rustix::process::{Pid, Signal, kill_process};
use tempfile::TempDir;

use crate::libvirtd::{
    LibvirtdError, VirshRun, find_program, kill_processes_in, owner_stamp, run_virsh, stale_dirs,
};

/// How long [`Lxcd::start`] waits for the socket.
pub const START_TIMEOUT: Duration = Duration::from_secs(20);

/// How long [`Lxcd::virsh`] waits.
pub const VIRSH_TIMEOUT: Duration = Duration::from_secs(60);

const DIR_PREFIX: &str = "testbed-lxcd-";
const DRIVER: &str = "libvirt_driver_lxc.so";
const PATH: &str = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
const LOG_TAIL_LINES: usize = 30;

/// The fixed state paths of a privileged daemon, each bound from `root/<dir>` in its namespace.
const BINDS: &[(&str, &str)] = &[
    ("run", "/run"),
    ("lib", "/var/lib/libvirt"),
    ("log", "/var/log/libvirt"),
    ("etc", "/etc/libvirt"),
];

/// Runs inside the new mount namespace as `sh -c SCRIPT sh DIR LIBVIRTD` and becomes the
/// daemon (`exec`), so our child *is* libvirtd.
const SCRIPT: &str = r#"set -e
if mountpoint -q /sys/fs/cgroup/unified && mountpoint -q /sys/fs/cgroup/memory; then
  umount /sys/fs/cgroup/unified
fi
mkdir -p /var/lib/libvirt /var/log/libvirt /etc/libvirt
mount --bind "$1/root/run" /run
mount --bind "$1/root/lib" /var/lib/libvirt
mount --bind "$1/root/log" /var/log/libvirt
mount --bind "$1/root/etc" /etc/libvirt
exec "$2" --config "$1/libvirtd.conf" --pid-file "$1/libvirtd.pid"
"#;

/// Errors from starting or driving the privileged LXC daemon.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LxcdError {
    /// The daemon needs root (a privileged libvirtd, mount namespaces, cgroups).
    #[error("the LXC driver needs a privileged libvirtd: run the tests as root")]
    NotRoot,
    /// A program or the LXC driver module is not installed (`scripts/install-deps`).
    #[error("{what} is not installed (scripts/install-deps installs it)")]
    NotInstalled {
        /// What is missing.
        what: &'static str,
    },
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
    #[error("libvirtd (lxc) exited during start ({status}); log tail:\n{log_tail}")]
    Exited {
        /// Its exit status.
        status: ExitStatus,
        /// The last lines of its log.
        log_tail: String,
    },
    /// Something did not happen in time.
    #[error("{what}: no answer after {waited:?}; libvirtd (lxc) log tail:\n{log_tail}")]
    Timeout {
        /// What we waited for.
        what: String,
        /// How long we waited.
        waited: Duration,
        /// The last lines of the daemon's log.
        log_tail: String,
    },
    /// A `virsh` command failed.
    #[error("`virsh {args}` failed: {detail}; libvirtd (lxc) log tail:\n{log_tail}")]
    Virsh {
        /// Its arguments.
        args: String,
        /// What it printed on stderr.
        detail: String,
        /// The last lines of the daemon's log.
        log_tail: String,
    },
}

fn io_err(what: impl Into<String>) -> impl FnOnce(io::Error) -> LxcdError {
    let what = what.into();
    move |source| LxcdError::Io { what, source }
}

fn program(name: &'static str) -> Result<PathBuf, LxcdError> {
    find_program(name).map_err(|e| match e {
        LibvirtdError::NotInstalled { program } => LxcdError::NotInstalled { what: program },
        other => LxcdError::Io {
            what: format!("looking for {name}"),
            source: io::Error::other(other.to_string()),
        },
    })
}

/// A running privileged libvirtd with the LXC driver only; see the [module docs](self).
#[derive(Debug)]
pub struct Lxcd {
    tmp: Option<TempDir>,
    dir: PathBuf,
    socket: PathBuf,
    log: PathBuf,
    virsh: PathBuf,
    child: Option<Child>,
    pid: u32,
    mnt_ns: String,
    /// `/proc/PID/ns/mnt` of the daemon, held open until the teardown is done: while it is
    /// open the namespace lives on even when every process in it has died, so its number
    /// (`mnt_ns`) cannot be handed to a namespace made later (the kernel reuses a dead
    /// namespace's number at once) and the teardown kills only what is the daemon's.
    #[allow(dead_code, reason = "held, never read: it keeps the namespace alive")]
    mnt_ns_pin: Option<fs::File>,
    // Last field: dropped after everything else of the daemon is gone.
    _live: Live,
}

/// Daemons alive in this process; the `machine` cgroup partitions that did not exist before
/// the first of them; and, while any is alive, a shared `flock` on [`LOCK_FILE`] that says so
/// to other processes. The last daemon of the process removes those partitions only if it
/// gets the lock exclusively (no other process has a daemon that may be creating cgroups
/// there), all under the mutex, so no start of this process runs meanwhile.
static LIVE: Mutex<Option<LiveSet>> = Mutex::new(None);

/// Held by every process with a daemon alive (shared), by the one removing partitions
/// (exclusive).
const LOCK_FILE: &str = "/tmp/testbed-lxcd.lock";

#[derive(Debug)]
struct LiveSet {
    count: usize,
    new_partitions: Vec<PathBuf>,
    lock: Option<fs::File>,
}

/// Counts a daemon in [`LIVE`] from before its start until its drop.
#[derive(Debug)]
struct Live;

impl Live {
    fn enter() -> Self {
        use rustix::fs::{FlockOperation, flock};
        let mut live = LIVE
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let set = live.get_or_insert_with(|| {
            // Blocks while another process removes partitions; then they are gone or kept.
            let lock = fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(LOCK_FILE)
                .ok()
                .filter(|f| flock(f, FlockOperation::LockShared).is_ok());
            LiveSet {
                count: 0,
                new_partitions: machine_partitions()
                    .into_iter()
                    .filter(|p| !p.exists())
                    .collect(),
                lock,
            }
        });
        set.count += 1;
        Live
    }
}

impl Drop for Live {
    fn drop(&mut self) {
        use rustix::fs::{FlockOperation, flock};
        let mut live = LIVE
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let Some(set) = live.as_mut() else {
            return;
        };
        set.count -= 1;
        if set.count > 0 {
            return;
        }
        let set = live.take().expect("checked");
        if let Some(lock) = &set.lock
            && flock(lock, FlockOperation::NonBlockingLockExclusive).is_ok()
        {
            for p in &set.new_partitions {
                // Fails while anything else has a cgroup there.
                let _ = fs::remove_dir(p);
            }
        }
        // Closing the file releases the lock.
    }
}

impl Lxcd {
    /// Start the daemon and wait until its socket answers.
    pub fn start() -> Result<Self, LxcdError> {
        if !rustix::process::geteuid().is_root() {
            return Err(LxcdError::NotRoot);
        }
        let libvirtd = program("libvirtd")?;
        let virsh = program("virsh")?;
        let unshare = program("unshare")?;
        for p in ["mount", "umount", "mountpoint"] {
            program(p)?;
        }
        let module = driver_module().ok_or(LxcdError::NotInstalled {
            what: "libvirt's LXC driver (libvirt-daemon-driver-lxc)",
        })?;
        reap_stale_dirs();
        let live = Live::enter();

        let tmp = tempfile::Builder::new()
            .prefix(DIR_PREFIX)
            .tempdir_in("/tmp")
            .map_err(io_err("creating the temp dir"))?;
        let dir = tmp.path().to_path_buf();
        let stamp = owner_stamp(rustix::process::getpid()).unwrap_or_default();
        fs::write(dir.join("owner.tmp"), stamp)
            .and_then(|()| fs::rename(dir.join("owner.tmp"), dir.join("owner")))
            .map_err(io_err("writing the owner stamp"))?;
        for sub in ["drivers", "sock"]
            .into_iter()
            .map(String::from)
            .chain(BINDS.iter().map(|(d, _)| format!("root/{d}")))
        {
            fs::create_dir_all(dir.join(&sub)).map_err(io_err(format!("creating {sub}")))?;
        }
        std::os::unix::fs::symlink(&module, dir.join("drivers").join(DRIVER))
            .map_err(io_err("linking the LXC driver"))?;
        let log = dir.join("libvirtd.log");
        let sock_dir = dir.join("sock");
        fs::write(
            dir.join("libvirtd.conf"),
            format!(
                "unix_sock_dir = \"{}\"\nunix_sock_rw_perms = \"0700\"\n\
                 auth_unix_rw = \"none\"\nauth_unix_ro = \"none\"\n\
                 log_outputs = \"3:file:{}\"\n",
                sock_dir.display(),
                log.display()
            ),
        )
        .map_err(io_err("writing libvirtd.conf"))?;

        let out = fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&log)
            .map_err(io_err("opening the log"))?;
        let err = out.try_clone().map_err(io_err("opening the log"))?;
        let mut cmd = Command::new(&unshare);
        cmd.args([
            "--mount",
            "--propagation",
            "private",
            "--",
            "sh",
            "-c",
            SCRIPT,
            "sh",
        ])
        .arg(&dir)
        .arg(&libvirtd)
        .env_clear()
        .env("PATH", PATH)
        .env("LC_ALL", "C")
        .env("LIBVIRT_DRIVER_DIR", dir.join("drivers"))
        .current_dir(&dir)
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err);
        let child = cmd.spawn().map_err(io_err("spawning unshare … libvirtd"))?;
        let mut d = Lxcd {
            tmp: Some(tmp),
            socket: sock_dir.join("libvirt-sock"),
            log,
            virsh,
            pid: child.id(),
            child: Some(child),
            mnt_ns: String::new(),
            mnt_ns_pin: None,
            _live: live,
            dir,
        };
        d.wait_for_socket()?;
        // The number is read through the pinning descriptor: it names the namespace held.
        let pin = fs::File::open(format!("/proc/{}/ns/mnt", d.pid))
            .map_err(io_err("opening the daemon's mount namespace"))?;
        d.mnt_ns = fs::read_link(format!("/proc/self/fd/{}", pin.as_raw_fd()))
            .map_err(io_err("reading the daemon's mount namespace"))?
            .to_string_lossy()
            .into_owned();
        d.mnt_ns_pin = Some(pin);
        Ok(d)
    }

    /// [`start`](Self::start), or `None` with a message on stderr when we are not root, or
    /// (unless [`crate::required`]) when libvirt's LXC driver is not installed.
    ///
    /// # Panics
    /// As root, on any other start error, and on a missing driver when `TESTBED_REQUIRED=1`.
    pub fn start_or_skip() -> Option<Self> {
        match Self::start() {
            Ok(d) => Some(d),
            Err(e @ LxcdError::NotRoot) => {
                eprintln!("skipping: {e} (privileged, root-only tests)");
                None
            }
            Err(e @ LxcdError::NotInstalled { .. }) if !crate::required() => {
                eprintln!("skipping: {e} (set TESTBED_REQUIRED=1 to make this a failure)");
                None
            }
            Err(e) => panic!("private privileged libvirtd (lxc) did not start: {e}"),
        }
    }

    fn wait_for_socket(&mut self) -> Result<(), LxcdError> {
        let start = Instant::now();
        loop {
            if let Some(status) = self
                .child
                .as_mut()
                .and_then(|c| c.try_wait().ok().flatten())
            {
                self.child = None;
                return Err(LxcdError::Exited {
                    status,
                    log_tail: self.log_tail(),
                });
            }
            if UnixStream::connect(&self.socket).is_ok() {
                return Ok(());
            }
            if start.elapsed() > START_TIMEOUT {
                let e = LxcdError::Timeout {
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

    fn stop_now(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// `lxc+unix:///system?socket=…`: the LXC driver through this daemon's socket.
    pub fn uri(&self) -> String {
        format!("lxc+unix:///system?socket={}", self.socket.display())
    }

    /// The read-write socket.
    pub fn socket_path(&self) -> &Path {
        &self.socket
    }

    /// The temp dir (see the layout in the [module docs](self)).
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The daemon's pid.
    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// The daemon's mount namespace, as `/proc/PID/ns/mnt` reads (`mnt:[inode]`).
    pub fn mount_namespace(&self) -> &str {
        &self.mnt_ns
    }

    /// The last lines of the daemon's log.
    pub fn log_tail(&self) -> String {
        tail(&self.log)
    }

    /// The LXC driver's log of container `name` (`/var/log/libvirt/lxc/NAME.log` in the
    /// daemon's namespace): the controller's command line and its errors.
    pub fn domain_log(&self, name: &str) -> String {
        fs::read_to_string(self.dir.join(format!("root/log/lxc/{name}.log"))).unwrap_or_default()
    }

    /// Run `virsh -c` [`uri`](Self::uri) within [`VIRSH_TIMEOUT`]; its stdout.
    pub fn virsh(&self, args: &[&str]) -> Result<String, LxcdError> {
        match run_virsh(&self.virsh, &self.uri(), VIRSH_TIMEOUT, args)
            .map_err(io_err("running virsh"))?
        {
            VirshRun::Done(stdout) => Ok(stdout),
            VirshRun::TimedOut(line) => Err(LxcdError::Timeout {
                what: format!("virsh {line}"),
                waited: VIRSH_TIMEOUT,
                log_tail: self.log_tail(),
            }),
            VirshRun::Failed { line, stderr } => Err(LxcdError::Virsh {
                args: line,
                detail: stderr,
                log_tail: self.log_tail(),
            }),
        }
    }
}

impl Drop for Lxcd {
    fn drop(&mut self) {
        if self.child.is_some() {
            // Destroyed through the daemon, containers leave no cgroups behind.
            if let Ok(names) = self.virsh(&["list", "--name"]) {
                for name in names.lines().map(str::trim).filter(|n| !n.is_empty()) {
                    let _ = self.virsh(&["destroy", name]);
                }
            }
        }
        self.stop_now();
        let left = sweep(&self.dir, &self.mnt_ns);
        if !left.is_empty() {
            eprintln!("testbed::lxcd: processes survived SIGKILL: {left:?}");
        }
        if let Some(tmp) = self.tmp.take()
            && let Err(e) = tmp.close()
        {
            eprintln!("testbed::lxcd: removing {}: {e}", self.dir.display());
        }
    }
}

/// The pid of the init of the container whose domain id is `id`: libvirt's LXC driver uses
/// the pid of the container's controller (`libvirt_lxc`) as domain id, and the init is that
/// controller's one child.
pub fn container_init_pid(id: i32) -> Option<u32> {
    let children = fs::read_to_string(format!("/proc/{id}/task/{id}/children")).ok()?;
    let mut pids = children.split_whitespace().filter_map(|p| p.parse().ok());
    let first = pids.next()?;
    pids.next().is_none().then_some(first)
}

/// What `/proc/PID/ns/KIND` points at, e.g. `net:[4026531833]`.
pub fn ns_link(pid: u32, kind: &str) -> Option<String> {
    fs::read_link(format!("/proc/{pid}/ns/{kind}"))
        .ok()
        .map(|p| p.to_string_lossy().into_owned())
}

/// `connection-driver/libvirt_driver_lxc.so` under the usual library dirs.
fn driver_module() -> Option<PathBuf> {
    let mut dirs = vec![PathBuf::from("/usr/lib64"), PathBuf::from("/usr/lib")];
    if let Ok(entries) = fs::read_dir("/usr/lib") {
        dirs.extend(entries.flatten().map(|e| e.path()));
    }
    dirs.into_iter()
        .map(|d| d.join("libvirt/connection-driver").join(DRIVER))
        .find(|p| p.is_file())
}

fn tail(path: &Path) -> String {
    let text = fs::read_to_string(path).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(LOG_TAIL_LINES)..].join("\n")
}

/// SIGKILL (repeatedly, for up to 5 s) every process of the daemon whose temp dir is `dir`
/// and whose mount namespace was `ns` (held open by the caller, so that the number is still
/// the daemon's; empty when it is not held): those in that namespace, those whose mounts name the
/// dir (the `libvirt_lxc` controllers unshare a mount namespace of their own, which inherits
/// the daemon's bind mounts of `dir/root/…`), and all their descendants (the containers).
/// Then remove the controllers' cgroups. Returns the pids still there at the end.
fn sweep(dir: &Path, ns: &str) -> Vec<u32> {
    // Never the host's (our own) namespace: that would be every process of the box.
    let ns = Some(ns).filter(|ns| {
        !ns.is_empty() && ns_link(std::process::id(), "mnt").is_some_and(|own| own != *ns)
    });
    let needle = format!(" {}/root/", dir.display());
    let me = std::process::id();
    let mut controllers = HashSet::new();
    let deadline = Instant::now() + Duration::from_secs(5);
    let left = loop {
        let (in_ns, parents) = scan_processes(ns, &needle);
        controllers.extend(in_ns.iter().copied());
        let mut doomed: HashSet<u32> = in_ns.into_iter().filter(|&p| p != me).collect();
        // Descendants: repeat until no new child of a doomed process appears.
        loop {
            let more: Vec<u32> = parents
                .iter()
                .filter(|(pid, ppid)| doomed.contains(ppid) && !doomed.contains(pid))
                .map(|(pid, _)| *pid)
                .filter(|&p| p != me)
                .collect();
            if more.is_empty() {
                break;
            }
            doomed.extend(more);
        }
        if doomed.is_empty() || Instant::now() > deadline {
            break doomed.into_iter().collect();
        }
        for pid in &doomed {
            if let Some(pid) = Pid::from_raw(*pid as i32) {
                let _ = kill_process(pid, Signal::KILL);
            }
        }
        thread::sleep(Duration::from_millis(20));
    };
    remove_cgroups(&controllers);
    left
}

/// Pids whose mount namespace is `ns` or whose `mountinfo` contains `needle`, and every
/// live process's parent.
fn scan_processes(ns: Option<&str>, needle: &str) -> (Vec<u32>, HashMap<u32, u32>) {
    let mut in_ns = Vec::new();
    let mut parents = HashMap::new();
    let Ok(entries) = fs::read_dir("/proc") else {
        return (in_ns, parents);
    };
    for e in entries.flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else {
            continue;
        };
        let Ok(stat) = fs::read_to_string(e.path().join("stat")) else {
            continue;
        };
        // After the parenthesised name: state, ppid, …; zombies (Z) are already dead.
        let mut rest = stat
            .rsplit_once(')')
            .map_or("", |(_, r)| r)
            .split_whitespace();
        if rest.next() == Some("Z") {
            continue;
        }
        if let Some(ppid) = rest.next().and_then(|p| p.parse().ok()) {
            parents.insert(pid, ppid);
        }
        let ours = ns.is_some_and(|ns| ns_link(pid, "mnt").is_some_and(|l| l == ns))
            || fs::read_to_string(e.path().join("mountinfo")).is_ok_and(|m| m.contains(needle));
        if ours {
            in_ns.push(pid);
        }
    }
    (in_ns, parents)
}

/// `rmdir` the cgroups libvirt makes for a controller pid (`machine/lxc-PID-NAME.libvirt-lxc`
/// in every hierarchy) when a killed container left them.
fn remove_cgroups(controllers: &HashSet<u32>) {
    if controllers.is_empty() {
        return;
    }
    for root in machine_partitions() {
        let Ok(groups) = fs::read_dir(&root) else {
            continue;
        };
        for g in groups.flatten() {
            let name = g.file_name().to_string_lossy().into_owned();
            let pid = name
                .strip_prefix("lxc-")
                .and_then(|r| r.split('-').next())
                .and_then(|p| p.parse::<u32>().ok());
            if pid.is_some_and(|p| controllers.contains(&p)) {
                let _ = fs::remove_dir(g.path());
            }
        }
    }
}

/// `machine` (libvirt's default partition) in every cgroup hierarchy and at the top.
fn machine_partitions() -> Vec<PathBuf> {
    let Ok(hierarchies) = fs::read_dir("/sys/fs/cgroup") else {
        return Vec::new();
    };
    hierarchies
        .flatten()
        .map(|h| h.path())
        .filter(|h| h.is_dir())
        .chain([PathBuf::from("/sys/fs/cgroup")])
        .map(|h| h.join("machine"))
        .collect()
}

/// Remove the [`stale_dirs`] of LXC daemons and kill what still runs for them. Once per
/// process.
fn reap_stale_dirs() {
    static ONCE: OnceLock<()> = OnceLock::new();
    ONCE.get_or_init(|| {
        for path in stale_dirs(DIR_PREFIX) {
            kill_processes_in(&path, 0);
            // By mounts only: the dead owner's namespace number may be another's now.
            sweep(&path, "");
            let _ = fs::remove_dir_all(&path);
        }
    });
}
