//! The egress test guest: the bootable image `scripts/build-guest-image` makes (see
//! `docs/guest-image.md`), and what tests need around it.
//!
//! ```text
//!  image()  ──runs once per process──▶ scripts/build-guest-image ──▶ path, sha256, size
//!                                       (cached: ~0.2 s; cold: ~15 s, needs apt + mirrors)
//!  proxy_user_data()        #!/bin/sh user-data: tinyproxy on guest port 8888
//!  CONTROL_PORT (optional)  busybox httpd on the guest's 127.0.0.1:8081, reached through
//!                           the proxy: /cgi-bin/freeze-agent, /cgi-bin/stop-agent
//!  free_loopback_port()     a 127.0.0.1 port nobody listens on (for a host forward)
//!  shared_dir()             a short /tmp dir the daemon's user may write (agent sockets,
//!                           serial logs)
//! ```
//!
//! Nothing here starts a VM; the provider under test does.

use std::io::{self, Read as _};
use std::net::{Ipv4Addr, TcpListener};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// The temp dir [`shared_dir`] returns (re-exported so users need no `tempfile` dependency).
pub use tempfile::TempDir;

/// The guest port tinyproxy listens on in [`proxy_user_data`].
pub const PROXY_PORT: u16 = 8888;

/// The guest-local port of the control server in [`proxy_user_data_with_control`]; it
/// listens on the guest's `127.0.0.1` only, so the host reaches it only through the proxy.
pub const CONTROL_PORT: u16 = 8081;

/// How long a cold build may take before it is killed (downloads included).
pub const BUILD_TIMEOUT: Duration = Duration::from_secs(600);

/// The built (or cached) guest image.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GuestImage {
    /// The raw disk image (inside the builder's cache: read-only, use it as a backing file
    /// or serve it).
    pub path: PathBuf,
    /// Its sha256, 64 lower-case hex digits.
    pub sha256: String,
    /// Its size in bytes.
    pub size: u64,
    /// How long the builder ran in this process.
    pub build_time: Duration,
    /// Whether the builder reused a cached image.
    pub cached: bool,
}

/// Why the guest image is not available.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{0}")]
pub struct GuestError(String);

/// `scripts/build-guest-image` in this workspace.
pub fn builder_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/build-guest-image")
}

/// Runs `scripts/build-guest-image` once per process (later calls answer the first result).
/// The builder caches across processes (`$EGRESS_GUEST_CACHE`, else
/// `~/.cache/egress-guest`) and serialises concurrent builds with `flock`.
///
/// # Errors
/// The builder failed (typically: apt cannot fetch the packages), timed out after
/// [`BUILD_TIMEOUT`], or printed no `path=… sha256=… size=…` line; the message carries the
/// tail of its stderr.
pub fn image() -> Result<GuestImage, GuestError> {
    static IMAGE: OnceLock<Result<GuestImage, GuestError>> = OnceLock::new();
    IMAGE.get_or_init(build).clone()
}

/// Like [`image`], but when the image cannot be built and [`crate::required`] is false,
/// print why and return `None`.
///
/// # Panics
/// When the image cannot be built and `TESTBED_REQUIRED=1`: in CI a missing guest is a
/// failure with the builder's reason, never a skip.
pub fn image_or_skip() -> Option<GuestImage> {
    match image() {
        Ok(i) => Some(i),
        Err(e) if crate::required() => panic!("guest image unavailable (TESTBED_REQUIRED=1): {e}"),
        Err(e) => {
            eprintln!("SKIP: guest image unavailable: {e}");
            None
        }
    }
}

fn build() -> Result<GuestImage, GuestError> {
    let script = builder_path();
    let started = Instant::now();
    let mut child = Command::new("bash")
        .arg(&script)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| GuestError(format!("cannot run {}: {e}", script.display())))?;
    // Drain both pipes on threads so a chatty builder never blocks on a full pipe.
    let mut out = child.stdout.take().expect("piped");
    let mut err = child.stderr.take().expect("piped");
    let out_t = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = out.read_to_string(&mut s);
        s
    });
    let err_t = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = err.read_to_string(&mut s);
        s
    });
    let status = loop {
        match child.try_wait() {
            Ok(Some(st)) => break st,
            Ok(None) if started.elapsed() > BUILD_TIMEOUT => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(GuestError(format!(
                    "{} did not finish within {BUILD_TIMEOUT:?}",
                    script.display()
                )));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(50)),
            Err(e) => return Err(GuestError(format!("waiting for {}: {e}", script.display()))),
        }
    };
    let stdout = out_t.join().unwrap_or_default();
    let stderr = err_t.join().unwrap_or_default();
    let tail = || {
        let lines: Vec<&str> = stderr.lines().collect();
        lines[lines.len().saturating_sub(30)..].join("\n")
    };
    if !status.success() {
        return Err(GuestError(format!(
            "{} failed ({status}); if apt could not fetch, check the network and run \
             `apt-get update`; its stderr ends with:\n{}",
            script.display(),
            tail()
        )));
    }
    let last = stdout
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("");
    parse_result_line(last, started.elapsed(), stderr.contains(": cached: ")).ok_or_else(|| {
        GuestError(format!(
            "{} printed no `path=… sha256=… size=…` line (last stdout line {last:?}); stderr:\n{}",
            script.display(),
            tail()
        ))
    })
}

fn parse_result_line(line: &str, build_time: Duration, cached: bool) -> Option<GuestImage> {
    let mut path = None;
    let mut sha256 = None;
    let mut size = None;
    for kv in line.split_whitespace() {
        match kv.split_once('=') {
            Some(("path", v)) => path = Some(PathBuf::from(v)),
            Some(("sha256", v)) if v.len() == 64 && v.bytes().all(|b| b.is_ascii_hexdigit()) => {
                sha256 = Some(v.to_ascii_lowercase());
            }
            Some(("size", v)) => size = v.parse().ok(),
            _ => {}
        }
    }
    Some(GuestImage {
        path: path?,
        sha256: sha256?,
        size: size?,
        build_time,
        cached,
    })
}

/// A `127.0.0.1` TCP port that was free a moment ago (bound, then released). Another
/// process may take it before it is used; tests accept that small window.
pub fn free_loopback_port() -> io::Result<u16> {
    Ok(TcpListener::bind((Ipv4Addr::LOCALHOST, 0))?
        .local_addr()?
        .port())
}

/// A short temp dir under `/tmp` that any user may write (mode 1777), for files the test
/// daemon's unprivileged user creates: guest agent sockets (libvirt's session paths under
/// the testbed's dirs are too long for a unix socket) and serial console logs. Removed
/// (with its contents) on drop.
pub fn shared_dir(prefix: &str) -> io::Result<TempDir> {
    use std::os::unix::fs::PermissionsExt as _;
    let dir = tempfile::Builder::new().prefix(prefix).tempdir_in("/tmp")?;
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o1777))?;
    Ok(dir)
}

const TINYPROXY: &str = r#"cat >/etc/tinyproxy.conf <<'EOF'
Port 8888
Listen 0.0.0.0
Timeout 600
MaxClients 64
Allow 127.0.0.1
Allow 10.0.2.0/24
DisableViaHeader Yes
LogFile "/var/log/tinyproxy.log"
LogLevel Info
PidFile "/run/tinyproxy.pid"
EOF
tinyproxy -c /etc/tinyproxy.conf
echo "tinyproxy started"
"#;

const CONTROL: &str = r#"mkdir -p /run/egress-ctl/cgi-bin
cat >/run/egress-ctl/cgi-bin/freeze-agent <<'EOF'
#!/bin/sh
pid=$(cat /run/qemu-ga.pid 2>/dev/null)
printf 'Content-Type: text/plain\r\n\r\n'
if [ -n "$pid" ] && kill -STOP "$pid"; then
  echo "qemu-ga $pid frozen"
  echo "egress-guest: [$(cut -d' ' -f1 /proc/uptime)] qemu-ga frozen (pid $pid)" >/dev/console
else
  echo "qemu-ga not running"
fi
EOF
cat >/run/egress-ctl/cgi-bin/stop-agent <<'EOF'
#!/bin/sh
pid=$(cat /run/qemu-ga.pid 2>/dev/null)
[ -n "$pid" ] && kill -CONT "$pid" 2>/dev/null
printf 'Content-Type: text/plain\r\n\r\n'
echo "stopping qemu-ga $pid"
/usr/sbin/egress-stop-agent 0 </dev/null >/dev/null 2>&1 &
EOF
chmod 755 /run/egress-ctl/cgi-bin/*
httpd -p 127.0.0.1:8081 -h /run/egress-ctl
echo "control server started"
"#;

/// `#!/bin/sh` user-data that starts tinyproxy on guest port [`PROXY_PORT`] (the config of
/// `scripts/guest/user-data.example`: `Allow 127.0.0.1` and `Allow 10.0.2.0/24`, qemu's
/// user network, where connections forwarded from the host come from: `10.0.2.2`).
pub fn proxy_user_data() -> String {
    format!("#!/bin/sh\n# egress test guest: the proxy\nset -e\n{TINYPROXY}")
}

/// [`proxy_user_data`] plus a control server on the guest's `127.0.0.1:`[`CONTROL_PORT`]
/// (busybox httpd), reachable from the host only through the proxy, for fault injection at
/// a moment the test chooses:
///
/// * `GET http://127.0.0.1:8081/cgi-bin/freeze-agent`: `SIGSTOP` to qemu-ga (the agent
///   hangs: libvirt's calls wait for its guest-sync timeout);
/// * `GET http://127.0.0.1:8081/cgi-bin/stop-agent`: `SIGCONT`, then
///   `/usr/sbin/egress-stop-agent 0` (the agent exits; the guest and the proxy keep running).
pub fn proxy_user_data_with_control() -> String {
    format!("{}{CONTROL}", proxy_user_data())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn result_line() {
        let sha = "c9feca167f7c670c5b669636db77d983d6786fb413f312bcfc1f798d2cdb8c69";
        let i = parse_result_line(
            &format!("path=/c/img-1/disk.img sha256={sha} size=22020096"),
            Duration::from_millis(5),
            true,
        )
        .unwrap();
        assert_eq!(i.path, Path::new("/c/img-1/disk.img"));
        assert_eq!(i.sha256, sha);
        assert_eq!(i.size, 22_020_096);
        assert!(parse_result_line("path=/x sha256=abc size=1", Duration::ZERO, false).is_none());
        assert!(parse_result_line("", Duration::ZERO, false).is_none());
    }

    #[test]
    fn user_data_is_a_shell_script_that_starts_the_proxy() {
        let u = proxy_user_data_with_control();
        assert!(u.starts_with("#!/bin/sh\n"));
        assert!(u.contains("Port 8888") && u.contains("tinyproxy -c"));
        assert!(u.contains("httpd -p 127.0.0.1:8081"));
    }

    #[test]
    fn free_port_is_loopback_and_nonzero() {
        assert_ne!(free_loopback_port().unwrap(), 0);
    }
}
