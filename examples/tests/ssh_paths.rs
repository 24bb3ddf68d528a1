//! Every SSH path virsh takes, against real OpenSSH sshds on 127.0.0.1 and a private libvirtd:
//! the exec channel (virt-ssh-helper, netcat) on an sshd that refuses forwarding, bastions
//! (`ProxyJump` from a test-local ssh config), host keys on both hops, a frozen peer on each
//! path, and an injection attempt through `socket=`.
// Short names (d = daemon, s = sshd, c = client) keep the scenarios readable.
#![allow(clippy::many_single_char_names)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use libvirt_remote::client::{Client, ConnectError, ConnectOptions};
use libvirt_remote::proto::procs::connect::ConnectGetLibVersion;
use libvirt_remote::ssh_socket::{SshConfigFile, SshError};
use libvirt_remote_testkit::live;
use testbed::libvirtd::Libvirtd;
use testbed::relay::{Relay, RelayOptions};
use testbed::sshd::{Sshd, SshdOptions};

mod common;
use common::MIB;
/// The bound on `close()`.
const CLOSE_BOUND: Duration = Duration::from_millis(100);

/// An sshd that refuses forwarding and gives every session the daemon's runtime dir, so
/// `virt-ssh-helper qemu:///session` finds the socket.
fn locked_down(d: &Libvirtd, log_commands: bool, hide_helper: bool) -> Option<Sshd> {
    let run = d.socket_path().parent()?.parent()?.display().to_string();
    Sshd::start_or_skip(&SshdOptions {
        forwarding: false,
        set_env: vec![("XDG_RUNTIME_DIR".into(), run)],
        log_commands,
        hide_virt_ssh_helper: hide_helper,
        ..SshdOptions::default()
    })
}

/// `qemu+ssh://USER@127.0.0.1:PORT/session?keyfile&known_hosts` plus `params`.
fn uri(s: &Sshd, port: u16, known_hosts: &Path, params: &str) -> String {
    format!(
        "qemu+ssh://{}@127.0.0.1:{port}/session?keyfile={}&known_hosts={}{params}",
        s.user().name,
        s.client_key().display(),
        known_hosts.display(),
    )
}

fn direct(s: &Sshd, params: &str) -> String {
    uri(s, s.port(), s.known_hosts(), params)
}

fn socket_param(d: &Libvirtd) -> String {
    format!("&socket={}", d.socket_path().display())
}

fn opts(config: Option<&Path>) -> ConnectOptions {
    let mut o = ConnectOptions::default();
    o.ssh.config_file = match config {
        Some(p) => SshConfigFile::Path(p.to_owned()),
        None => SshConfigFile::None,
    };
    o
}

async fn connect(uri: &str, config: Option<&Path>) -> Client {
    Client::connect(uri, opts(config))
        .await
        .unwrap_or_else(|e| panic!("{uri}: {e}"))
}

fn ssh_err(e: &ConnectError) -> &SshError {
    match e {
        ConnectError::Ssh(s) => s,
        other => panic!("expected an SSH error, got {other}"),
    }
}

/// Calls, a storage pool event, and `mib` MiB up and down byte-exact over `c`.
async fn calls_events_transfers(c: &Client, d: &Libvirtd, vol_name: &str, mib: u64) {
    let data = testbed::data::pattern((mib * MIB) as usize, mib);
    live::calls_events_transfers(c, d.pool_name(), vol_name, &data).await;
}

fn lv() -> Command {
    Command::new(env!("CARGO_BIN_EXE_lv"))
}

fn lv_version(uri: &str, config: Option<&Path>) {
    let mut cmd = lv();
    if let Some(f) = config {
        cmd.arg("-F").arg(f);
    } else {
        cmd.args(["-F", "none"]);
    }
    let out = cmd.args(["-c", uri, "version"]).output().unwrap();
    assert!(
        out.status.success(),
        "lv version over {uri}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("9.0.0"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exec_channel_with_virt_ssh_helper_where_forwarding_is_refused() {
    let Some(d) = Libvirtd::start_or_skip() else {
        return;
    };
    let Some(s) = locked_down(&d, false, false) else {
        return;
    };
    // Forwarding is what this sshd refuses: the old path fails on the daemon's real socket.
    let e = Client::connect(
        &direct(&s, &format!("&proxy=forward{}", socket_param(&d))),
        opts(None),
    )
    .await
    .expect_err("forwarding is refused");
    assert!(matches!(ssh_err(&e), SshError::ChannelOpen { .. }), "{e}");
    assert!(
        s.log().contains("refused streamlocal port forward"),
        "sshd did not deny forwarding:\n{}",
        s.log()
    );
    // A session URI without socket=: virt-ssh-helper finds the daemon on the far side.
    let u = direct(&s, "");
    let c = connect(&u, None).await;
    calls_events_transfers(&c, &d, "helper.raw", 256).await;
    c.close();
    lv_version(&u, None);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exec_channel_with_netcat() {
    let Some(d) = Libvirtd::start_or_skip() else {
        return;
    };
    let Some(s) = locked_down(&d, false, false) else {
        return;
    };
    let u = direct(&s, &format!("&proxy=netcat{}", socket_param(&d)));
    let c = connect(&u, None).await;
    calls_events_transfers(&c, &d, "netcat.raw", 256).await;
    c.close();
    lv_version(&u, None);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn auto_falls_back_to_netcat_and_failures_show_the_remote_stderr() {
    let Some(d) = Libvirtd::start_or_skip() else {
        return;
    };
    let Some(s) = locked_down(&d, true, true) else {
        return;
    };
    // No virt-ssh-helper on this "host": auto uses nc -U on the socket.
    let sock = d.socket_path().display().to_string();
    let c = connect(&direct(&s, &format!("&proxy=auto&socket={sock}")), None).await;
    assert!(c.call::<ConnectGetLibVersion>(&()).await.unwrap().lib_ver >= 9_000_000);
    c.close();
    let calls = s.nc_calls();
    assert!(
        calls
            .iter()
            .any(|a| a.ends_with(&["-U".to_owned(), "--".to_owned(), sock.clone()])),
        "nc was not run on the socket: {calls:?}"
    );
    // The helper only: the shell's "not found" reaches the error.
    let e = Client::connect(&direct(&s, "&proxy=native"), opts(None))
        .await
        .expect_err("no helper on the remote side");
    let text = e.to_string();
    assert!(
        text.contains("virt-ssh-helper") && text.contains("not found") && text.contains("127"),
        "{text}"
    );
    // A netcat that is not there, and a socket nc cannot open.
    let e = Client::connect(
        &direct(&s, &format!("&netcat=/nonexistent/nc&socket={sock}")),
        opts(None),
    )
    .await
    .expect_err("no such netcat");
    assert!(e.to_string().contains("/nonexistent/nc"), "{e}");
    let e = Client::connect(&direct(&s, "&socket=/nonexistent.sock"), opts(None))
        .await
        .expect_err("no such socket");
    assert!(
        e.to_string().contains("/nonexistent.sock") && e.to_string().contains("exited with status"),
        "{e}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_socket_value_reaches_nc_as_one_literal_argument() {
    let Some(d) = Libvirtd::start_or_skip() else {
        return;
    };
    let Some(s) = locked_down(&d, true, false) else {
        return;
    };
    // The remote shell runs in the user's home: an injected `touch` would leave files there.
    let home = home_of(&s.user().name);
    let tag = format!("Z{}", std::process::id() % 100_000);
    let canaries: Vec<PathBuf> = (1..=3).map(|i| home.join(format!("{tag}{i}"))).collect();
    // A real path (a symlink to the daemon's socket) whose name is an injection attempt,
    // short enough for a unix socket path (108 bytes).
    let evil_name = format!("v; touch {tag}1 ;$(touch {tag}2)`touch {tag}3`'\" $HOME *");
    let evil = s.dir().join(&evil_name);
    std::os::unix::fs::symlink(d.socket_path(), &evil).unwrap();
    let param = percent_encode(evil.to_str().unwrap());
    let c = connect(&direct(&s, &format!("&socket={param}")), None).await;
    assert!(c.call::<ConnectGetLibVersion>(&()).await.unwrap().lib_ver >= 9_000_000);
    c.close();
    let want = evil.display().to_string();
    let calls = s.nc_calls();
    assert!(
        calls
            .iter()
            .any(|a| a.len() >= 3 && a[a.len() - 3..] == ["-U", "--", want.as_str()]),
        "nc did not get the path as one argument: {calls:?}"
    );
    let injected: Vec<_> = canaries.iter().filter(|c| c.exists()).collect();
    for c in &injected {
        let _ = std::fs::remove_file(c);
    }
    assert!(injected.is_empty(), "commands were injected: {injected:?}");
    let lines = s.command_log();
    assert!(
        lines.iter().any(|l| l.starts_with("sh -c ")),
        "the remote side got: {lines:?}"
    );
}

/// The home directory of `user`, from the passwd database.
fn home_of(user: &str) -> PathBuf {
    let out = Command::new("getent")
        .args(["passwd", user])
        .output()
        .unwrap();
    let line = String::from_utf8_lossy(&out.stdout).into_owned();
    PathBuf::from(line.trim().split(':').nth(5).expect("a passwd entry"))
}

/// Every byte but `[A-Za-z0-9/._-]` as `%XX`.
fn percent_encode(s: &str) -> String {
    s.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b"/._-".contains(&b) {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}

/// The host `target` of the ssh config [`Hops::ssh_config`] writes.
const JUMP_URI: &str = "qemu+ssh://target/session";

/// A bastion (forwarding allowed) and a target that refuses forwarding, as an ssh config.
struct Hops {
    d: Libvirtd,
    bastion: Sshd,
    target: Sshd,
    dir: tempfile::TempDir,
}

impl Hops {
    fn start() -> Option<Self> {
        let d = Libvirtd::start_or_skip()?;
        let target = locked_down(&d, false, false)?;
        let bastion = Sshd::start_or_skip(&SshdOptions::default())?;
        Some(Self {
            d,
            bastion,
            target,
            dir: tempfile::tempdir().unwrap(),
        })
    }

    /// `Host bastion` and `Host target` (with `ProxyJump bastion`), the bastion reached on
    /// `bastion_port` and the target on `target_port` (relays' ports, or the sshds' own).
    fn ssh_config(&self, bastion_port: u16, target_port: u16) -> PathBuf {
        self.ssh_config_with(bastion_port, target_port, &[])
    }

    /// [`ssh_config`](Self::ssh_config) with `extra` lines in both blocks.
    fn ssh_config_with(&self, bastion_port: u16, target_port: u16, extra: &[&str]) -> PathBuf {
        let target_extra: Vec<&str> = ["ProxyJump bastion"]
            .into_iter()
            .chain(extra.iter().copied())
            .collect();
        let text = self
            .bastion
            .ssh_config_block("bastion", bastion_port, self.dir.path(), extra)
            + &self
                .target
                .ssh_config_block("target", target_port, self.dir.path(), &target_extra);
        let p = self.dir.path().join("ssh_config");
        std::fs::write(&p, text).unwrap();
        p
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn proxy_jump_through_a_bastion() {
    let Some(b) = Hops::start() else { return };
    let cfg = b.ssh_config(b.bastion.port(), b.target.port());
    let u = JUMP_URI;
    let c = connect(u, Some(&cfg)).await;
    calls_events_transfers(&c, &b.d, "jump.raw", 256).await;
    c.close();
    lv_version(u, Some(&cfg));
    // The bastion carried it: sshd logged the forwarded connection to the target.
    assert!(
        b.bastion.log().contains("direct-tcpip"),
        "no direct-tcpip on the bastion:\n{}",
        b.bastion.log()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wrong_host_key_on_either_hop_is_refused_before_authentication_there() {
    let Some(b) = Hops::start() else { return };
    let cfg = b.ssh_config(b.bastion.port(), b.target.port());
    let other = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIALUx09tPCqiWz4PtTL1zJuf9XW3HD6IeWUJo9+5AkTB";
    let kh = |alias: &str| b.dir.path().join(format!("known_hosts_{alias}"));

    // The bastion's key is wrong: refused there; the target never hears of us.
    let good = std::fs::read_to_string(kh("bastion")).unwrap();
    std::fs::write(
        kh("bastion"),
        format!("[127.0.0.1]:{} {other}\n", b.bastion.port()),
    )
    .unwrap();
    let e = Client::connect(JUMP_URI, opts(Some(&cfg)))
        .await
        .expect_err("wrong bastion key");
    let s = ssh_err(&e);
    assert!(
        matches!(s, SshError::Jump { error, .. } if matches!(**error, SshError::HostKeyChanged { .. })),
        "{s:?}"
    );
    assert!(s.is_host_key());
    assert!(
        !b.bastion.log().contains("userauth-request"),
        "bastion auth attempted"
    );
    assert!(
        !b.target.log().contains("Connection from"),
        "the target was reached"
    );
    std::fs::write(kh("bastion"), good).unwrap();

    // The target's key is wrong: the bastion lets us through, the target refuses us before
    // any authentication.
    std::fs::write(
        kh("target"),
        format!("[127.0.0.1]:{} {other}\n", b.target.port()),
    )
    .unwrap();
    let e = Client::connect(JUMP_URI, opts(Some(&cfg)))
        .await
        .expect_err("wrong target key");
    assert!(
        matches!(ssh_err(&e), SshError::HostKeyChanged { host, .. } if host.contains(&b.target.port().to_string())),
        "{e}"
    );
    assert!(
        b.bastion.log().contains("userauth-request"),
        "bastion not used"
    );
    assert!(
        b.target.log().contains("Connection from"),
        "target not reached"
    );
    assert!(
        !b.target.log().contains("userauth-request"),
        "target auth attempted:\n{}",
        b.target.log()
    );
}

/// `lv --timeout 3 vol-upload` through `uri`, frozen once flowing: exits 124 within 1 s of
/// its deadline.
async fn lv_timeout_under_frozen_peer(
    uri: &str,
    config: Option<&Path>,
    d: &Libvirtd,
    relay: &Relay,
    name: &str,
) {
    let mut cmd = lv();
    match config {
        Some(f) => cmd.arg("-F").arg(f),
        None => cmd.args(["-F", "none"]),
    };
    // 6 s, as lv_ssh's and lv_tls's: the handshakes (two through a bastion) and the upload's
    // start must fit before the deadline on a loaded box; the property is the exit after it.
    cmd.args(["-c", uri, "--timeout", "6"]);
    let (src, flowing) = (relay_src(name), Duration::from_secs(60));
    let (child, started) =
        common::frozen_lv_upload(cmd, &d.uri(), d, relay, name, &src, flowing).await;
    let (frozen_at, timeout) = (Instant::now(), Duration::from_secs(6));
    common::lv_times_out_on_time(child, relay, started, frozen_at, timeout, name);
    let _ = std::fs::remove_file(&src);
}

/// Where the sparse 4 GiB source file of an upload goes.
fn relay_src(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("ssh-paths-{}-{name}", std::process::id()))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn frozen_peer_on_the_exec_channel() {
    let Some(d) = Libvirtd::start_or_skip() else {
        return;
    };
    let Some(s) = locked_down(&d, false, false) else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    for (i, params) in ["", &format!("&proxy=netcat{}", socket_param(&d))]
        .into_iter()
        .enumerate()
    {
        let relay = Relay::start(s.addr(), RelayOptions::small()).unwrap();
        let kh = s.known_hosts_for(relay.addr().port(), tmp.path());
        let u = uri(&s, relay.addr().port(), &kh, params);
        let c = connect(&u, None).await;
        let port = relay.addr().port();
        common::close_is_bounded_with_a_frozen_peer(&c, &d, &relay, port, &format!("exec{i}.raw"))
            .await;
        let relay = Relay::start(s.addr(), RelayOptions::small()).unwrap();
        let kh = s.known_hosts_for(relay.addr().port(), tmp.path());
        let u = uri(&s, relay.addr().port(), &kh, params);
        lv_timeout_under_frozen_peer(&u, None, &d, &relay, &format!("exec-lv{i}.raw")).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn frozen_peer_on_the_bastion_hop_and_on_the_target_hop() {
    let Some(b) = Hops::start() else { return };
    // The client ↔ bastion hop frozen, then the bastion ↔ target hop.
    for hop in ["bastion", "target"] {
        for lv in [false, true] {
            let (relay, cfg, first_hop) = if hop == "bastion" {
                let r = Relay::start(b.bastion.addr(), RelayOptions::small()).unwrap();
                let port = r.addr().port();
                (r, b.ssh_config(port, b.target.port()), port)
            } else {
                let r = Relay::start(b.target.addr(), RelayOptions::small()).unwrap();
                let cfg = b.ssh_config(b.bastion.port(), r.addr().port());
                (r, cfg, b.bastion.port())
            };
            let name = format!("{hop}-{lv}.raw");
            if lv {
                lv_timeout_under_frozen_peer(JUMP_URI, Some(&cfg), &b.d, &relay, &name).await;
            } else {
                let c = connect(JUMP_URI, Some(&cfg)).await;
                common::close_is_bounded_with_a_frozen_peer(&c, &b.d, &relay, first_hop, &name)
                    .await;
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dead_hop_of_an_idle_bastion_link_is_detected_by_keepalives() {
    let Some(b) = Hops::start() else { return };
    // `ServerAliveInterval 1`, `ServerAliveCountMax 2` from the ssh config, on both hops.
    let alive = ["ServerAliveInterval 1", "ServerAliveCountMax 2"];
    // Three unanswered intervals, and a second of slack for a loaded machine.
    let bound = Duration::from_secs(3) + Duration::from_secs(1);
    for hop in ["bastion", "target"] {
        let (relay, cfg) = if hop == "bastion" {
            let r = Relay::start(b.bastion.addr(), RelayOptions::small()).unwrap();
            let cfg = b.ssh_config_with(r.addr().port(), b.target.port(), &alive);
            (r, cfg)
        } else {
            let r = Relay::start(b.target.addr(), RelayOptions::small()).unwrap();
            let cfg = b.ssh_config_with(b.bastion.port(), r.addr().port(), &alive);
            (r, cfg)
        };
        let c = connect(JUMP_URI, Some(&cfg)).await;
        assert!(c.call::<ConnectGetLibVersion>(&()).await.unwrap().lib_ver >= 9_000_000);
        relay.freeze();
        let t = Instant::now();
        let e = tokio::time::timeout(bound, c.closed())
            .await
            .unwrap_or_else(|_| panic!("a dead {hop} hop not detected within {bound:?}"));
        let took = t.elapsed();
        eprintln!("dead {hop} hop detected after {took:?}: {e}");
        assert!(c.is_closed());
        let text = format!("{e}");
        assert!(text.contains("keepalive"), "{hop}: {text}");
        // A call after that fails at once with the same reason.
        let t = Instant::now();
        let err = c
            .call::<ConnectGetLibVersion>(&())
            .await
            .expect_err("a call on a dead link");
        assert!(t.elapsed() < CLOSE_BOUND, "{:?}", t.elapsed());
        assert!(format!("{err}").contains("keepalive"), "{err}");
        relay.thaw();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn credential_callback_is_asked_for_an_unknown_host_and_no_tty_never_asks() {
    let Some(d) = Libvirtd::start_or_skip() else {
        return;
    };
    let Some(s) = locked_down(&d, false, false) else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let kh = tmp.path().join("known_hosts");
    let asked = Arc::new(std::sync::Mutex::new(Vec::new()));
    let mut o = opts(None);
    let log = Arc::clone(&asked);
    o.ssh.credentials = Some(Arc::new(move |p: &libvirt_remote::ssh_socket::Prompt| {
        log.lock().unwrap().push(format!("{p:?}"));
        Some("yes".to_owned())
    }));
    // no_tty: the callback is never consulted, the unknown host is refused.
    let e = Client::connect(&uri(&s, s.port(), &kh, "&no_tty=1"), o.clone())
        .await
        .expect_err("unknown host with no_tty");
    assert!(ssh_err(&e).is_host_key(), "{e}");
    assert!(asked.lock().unwrap().is_empty());
    // Asked, answered yes: the key is recorded and the connection made; the next one does not ask.
    let c = Client::connect(&uri(&s, s.port(), &kh, ""), o.clone())
        .await
        .unwrap();
    c.close();
    assert_eq!(
        asked.lock().unwrap().len(),
        1,
        "{:?}",
        asked.lock().unwrap()
    );
    assert!(asked.lock().unwrap()[0].contains("AcceptHostKey"));
    let recorded = std::fs::read_to_string(&kh).unwrap();
    assert!(recorded.contains(s.host_public_key()), "{recorded}");
    let c = Client::connect(&uri(&s, s.port(), &kh, ""), o)
        .await
        .unwrap();
    c.close();
    assert_eq!(asked.lock().unwrap().len(), 1);
    // known_hosts_verify=auto adds a new host without asking.
    let kh2 = tmp.path().join("auto_known_hosts");
    let c = connect(&uri(&s, s.port(), &kh2, "&known_hosts_verify=auto"), None).await;
    c.close();
    assert!(
        std::fs::read_to_string(&kh2)
            .unwrap()
            .contains(s.host_public_key())
    );
}
