//! libvirt over SSH, end to end: our client and `lv` through a real OpenSSH sshd (127.0.0.1)
//! to a private libvirtd, and `lv`'s deadline / SIGTERM paths with the SSH peer frozen.
// Short names (d = daemon, s = sshd, c = client) keep the scenarios readable.
#![allow(clippy::many_single_char_names)]

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use futures::StreamExt;
use libvirt_rpc::client::{Client, ConnectOptions, DownloadOptions, UploadOptions};
use libvirt_rpc::conn::StreamItem;
use libvirt_rpc::proto::procs::connect::{ConnectGetLibVersion, ConnectGetUri};
use testbed::libvirtd::Libvirtd;
use testbed::relay::{Relay, RelayOptions};
use testbed::sshd::{Sshd, SshdOptions};

mod common;
use common::{MIB, make_vol};

struct Bed {
    d: Libvirtd,
    s: Sshd,
}

fn bed() -> Option<Bed> {
    Some(Bed {
        d: Libvirtd::start_or_skip()?,
        s: Sshd::start_or_skip(&SshdOptions::default())?,
    })
}

impl Bed {
    fn direct_uri(&self) -> String {
        self.s.qemu_uri(self.d.socket_path())
    }

    /// A small-buffered relay in front of sshd, and a temp dir for the test's files.
    fn relay(&self) -> (Relay, tempfile::TempDir) {
        let relay = Relay::start(self.s.addr(), RelayOptions::small()).unwrap();
        (relay, tempfile::tempdir().unwrap())
    }

    /// The URI through `relay` (host keys strictly verified for its port).
    fn relay_uri(&self, relay: &Relay, dir: &Path) -> String {
        let port = relay.addr().port();
        let kh = self.s.known_hosts_for(port, dir);
        self.s.qemu_uri_via(port, &kh, self.d.socket_path())
    }
}

fn lv() -> Command {
    Command::new(env!("CARGO_BIN_EXE_lv"))
}

fn pattern(len: usize) -> Vec<u8> {
    (0..len)
        .map(|i| ((i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 29) as u8)
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn client_over_ssh_calls_and_256_mib_both_ways() {
    let Some(b) = bed() else { return };
    let c = Client::connect(&b.direct_uri(), ConnectOptions::default())
        .await
        .unwrap();
    assert!(c.call::<ConnectGetLibVersion>(&()).await.unwrap().lib_ver >= 9_000_000);
    assert_eq!(
        c.call::<ConnectGetUri>(&()).await.unwrap().uri,
        "qemu:///session"
    );
    let vol = make_vol(&c, &b.d, "ssh.raw", 256 * MIB).await;
    let data = pattern(256 * MIB as usize);
    let up = c.vol_upload(&vol, UploadOptions::new()).await.unwrap();
    assert_eq!(
        up.send_all_and_finish(std::io::Cursor::new(data.clone()))
            .await
            .unwrap(),
        256 * MIB
    );
    let mut dl = c.vol_download(&vol, DownloadOptions::new()).await.unwrap();
    let mut got = Vec::with_capacity(data.len());
    while let Some(item) = dl.next().await {
        let StreamItem::Data(d) = item.unwrap() else {
            panic!("hole")
        };
        got.extend_from_slice(&d);
    }
    assert!(got == data, "256 MiB came back different");
    c.disconnect(Duration::from_secs(5)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lv_over_ssh_uploads_and_downloads() {
    let Some(b) = bed() else { return };
    let uri = b.direct_uri();
    let c = Client::connect(&uri, ConnectOptions::default())
        .await
        .unwrap();
    make_vol(&c, &b.d, "lv.raw", 64 * MIB).await;
    c.close();
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("src");
    std::fs::write(&src, pattern(64 * MIB as usize)).unwrap();
    let out = lv().args(["-c", &uri, "version"]).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("9.0.0"));
    let pool = b.d.pool_name();
    let st = lv()
        .args(["-c", &uri, "vol-upload", "--pool", pool, "lv.raw"])
        .arg(&src)
        .status()
        .unwrap();
    assert!(st.success());
    let dst = tmp.path().join("dst");
    let st = lv()
        .args(["-c", &uri, "vol-download", "--pool", pool, "lv.raw"])
        .arg(&dst)
        .status()
        .unwrap();
    assert!(st.success());
    assert!(std::fs::read(&dst).unwrap() == std::fs::read(&src).unwrap());
    let out = lv()
        .args(["-c", &uri, "domstate", "missing"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("Domain not found"),
        "libvirt's message"
    );
}

/// Starts `lv vol-upload` of a large file through a relay, freezes the relay once bytes
/// flow, and returns the child plus when the freeze happened.
async fn frozen_upload(
    b: &Bed,
    relay: &Relay,
    extra: &[&str],
    tmp: &Path,
) -> (std::process::Child, Instant) {
    let uri = b.relay_uri(relay, tmp);
    let c = Client::connect(&b.direct_uri(), ConnectOptions::default())
        .await
        .unwrap();
    make_vol(&c, &b.d, "frozen.raw", 4096 * MIB).await;
    c.close();
    let src = tmp.join("big");
    std::fs::File::create(&src)
        .unwrap()
        .set_len(4096 * MIB)
        .unwrap();
    let child = lv()
        .args(["-c", &uri])
        .args(extra)
        .args(["vol-upload", "--pool", b.d.pool_name(), "frozen.raw"])
        .arg(&src)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    relay
        .freeze_once_flowing(16 * MIB, Duration::from_secs(30))
        .await;
    (child, Instant::now())
}

fn wait_exit(
    child: &mut std::process::Child,
    limit: Duration,
) -> (std::process::ExitStatus, Duration) {
    let t = Instant::now();
    loop {
        if let Some(st) = child.try_wait().unwrap() {
            return (st, t.elapsed());
        }
        if t.elapsed() > limit {
            let _ = child.kill();
            panic!("lv still running {limit:?} later");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lv_timeout_exits_within_a_second_under_a_frozen_peer() {
    let Some(b) = bed() else { return };
    let (relay, tmp) = b.relay();
    let started = Instant::now();
    let (mut child, frozen_at) = frozen_upload(&b, &relay, &["--timeout", "6"], tmp.path()).await;
    let deadline = started + Duration::from_secs(6);
    assert!(frozen_at < deadline, "froze before the deadline");
    let (st, _) = wait_exit(&mut child, Duration::from_secs(15));
    let late = Instant::now().saturating_duration_since(deadline);
    assert_eq!(st.code(), Some(124), "timeout exit code");
    assert!(
        late < Duration::from_secs(1),
        "exited {late:?} after its deadline"
    );
    relay.thaw();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lv_sigterm_exits_within_a_second_under_a_frozen_peer() {
    let Some(b) = bed() else { return };
    let (relay, tmp) = b.relay();
    let (mut child, _) = frozen_upload(&b, &relay, &[], tmp.path()).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let pid = rustix::process::Pid::from_raw(child.id() as i32).unwrap();
    rustix::process::kill_process(pid, rustix::process::Signal::TERM).unwrap();
    let (st, took) = wait_exit(&mut child, Duration::from_secs(10));
    assert_eq!(st.code(), Some(143));
    assert!(
        took < Duration::from_secs(1),
        "exited {took:?} after SIGTERM"
    );
    relay.thaw();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn client_close_is_bounded_with_a_frozen_ssh_peer() {
    let Some(b) = bed() else { return };
    let (relay, tmp) = b.relay();
    let c = Client::connect(&b.relay_uri(&relay, tmp.path()), ConnectOptions::default())
        .await
        .unwrap();
    common::close_is_bounded_with_a_frozen_peer(&c, &b.d, &relay, relay.addr().port(), "close.raw")
        .await;
}

/// Upload throughput over SSH, ours (exec channel, then direct-streamlocal) vs virsh (OpenSSH +
/// nc on the far side), one run each.
/// Not a pass/fail test: `cargo test --release -p examples --test lv_ssh -- --ignored
/// --nocapture bench_upload_over_ssh` prints the figures for docs/benchmarks.md.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "benchmark; run by hand"]
async fn bench_upload_over_ssh() {
    let Some(b) = bed() else { return };
    let uri = b.direct_uri();
    let mib: u64 = std::env::var("BENCH_MIB")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(512);
    let c = Client::connect(&uri, ConnectOptions::default())
        .await
        .unwrap();
    make_vol(&c, &b.d, "bench.raw", mib * MIB).await;
    c.close();
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("src");
    std::fs::write(&src, pattern((mib * MIB) as usize)).unwrap();
    // virsh runs `ssh … nc -U SOCKET` through the ssh binary: give it our key and host key.
    let ssh_cfg = tmp.path().join("ssh_config");
    std::fs::write(
        &ssh_cfg,
        format!(
            "Host 127.0.0.1\n  Port {}\n  User {}\n  IdentityFile {}\n  UserKnownHostsFile {}\n  StrictHostKeyChecking yes\n",
            b.s.port(),
            b.s.user().name,
            b.s.client_key().display(),
            b.s.known_hosts().display()
        ),
    )
    .unwrap();
    // libvirt's `command=` replaces the ssh binary: a wrapper adds our config (key, strict
    // host keys against the testbed's known_hosts) without touching ~/.ssh.
    let wrapper = tmp.path().join("ssh");
    std::fs::write(
        &wrapper,
        format!("#!/bin/sh\nexec ssh -F {} \"$@\"\n", ssh_cfg.display()),
    )
    .unwrap();
    std::fs::set_permissions(
        &wrapper,
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    let virsh_uri = format!(
        "qemu+ssh://{}@127.0.0.1:{}/session?socket={}&no_tty=1&netcat=nc&command={}",
        b.s.user().name,
        b.s.port(),
        b.d.socket_path().display(),
        wrapper.display()
    );
    let time = |label: &str, cmd: &mut Command| {
        let t = Instant::now();
        let out = cmd.output().unwrap();
        let secs = t.elapsed().as_secs_f64();
        assert!(
            out.status.success(),
            "{label}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let rusage = String::from_utf8_lossy(&out.stderr)
            .lines()
            .last()
            .unwrap_or("")
            .to_string();
        println!(
            "{label}: {mib} MiB in {secs:.2} s = {:.0} MB/s; /usr/bin/time: {rusage}",
            f64::from(u32::try_from(mib).unwrap_or(u32::MAX)) * 1.048_576 / secs
        );
        secs
    };
    let pool = b.d.pool_name();
    // Ours three times: the exec channel (libvirt's default, `proxy=auto`), the exec channel through nc, and direct-streamlocal
    // (`proxy=forward`).
    let ours_run = |label: &str, uri: &str| {
        time(
            label,
            Command::new("/usr/bin/time")
                .args(["-f", "%U user %S sys %M KiB maxrss"])
                .arg(env!("CARGO_BIN_EXE_lv"))
                .args(["-c", uri, "vol-upload", "--pool", pool, "bench.raw"])
                .arg(&src),
        )
    };
    let ours = ours_run("ours (lv, russh, exec channel)", &uri);
    // The exec channel through nc, as virsh's path runs on the far side.
    let netcat = ours_run(
        "ours (lv, russh, exec channel, proxy=netcat)",
        &format!("{uri}&proxy=netcat"),
    );
    let forward = ours_run(
        "ours (lv, russh, direct-streamlocal)",
        &format!("{uri}&proxy=forward"),
    );
    let virsh = time(
        "virsh (OpenSSH + nc)",
        Command::new("/usr/bin/time")
            .args(["-f", "%U user %S sys %M KiB maxrss"])
            .args([
                "virsh",
                "-c",
                &virsh_uri,
                "vol-upload",
                "--pool",
                pool,
                "bench.raw",
            ])
            .arg(&src),
    );
    println!(
        "ratio ours/virsh (throughput): exec channel {:.2}x, exec channel with nc {:.2}x, \
         direct-streamlocal {:.2}x",
        virsh / ours,
        virsh / netcat,
        virsh / forward
    );
}
