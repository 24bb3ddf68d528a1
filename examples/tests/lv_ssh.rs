//! libvirt over SSH, end to end: our client and `lv` through a real OpenSSH sshd (127.0.0.1)
//! to a private libvirtd, and `lv`'s deadline / SIGTERM paths with the SSH peer frozen.
// Short names (d = daemon, s = sshd, c = client) keep the scenarios readable.
#![allow(clippy::many_single_char_names)]

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use futures::StreamExt;
use libvirt_remote::client::{Client, ConnectOptions, DownloadOptions, UploadOptions};
use libvirt_remote::conn::StreamItem;
use libvirt_remote::proto::procs::connect::{ConnectGetLibVersion, ConnectGetUri};
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

/// Without `keyfile=` the client offers the default key files of `$HOME/.ssh` as OpenSSH
/// and libvirt do (no agent: `SSH_AUTH_SOCK` unset); with none there it says where it
/// looked.
#[test]
fn lv_over_ssh_without_keyfile_offers_the_default_key_files() {
    let Some(b) = bed() else { return };
    let uri = b.direct_uri();
    let keyfile = format!("keyfile={}&", b.s.client_key().display());
    assert!(uri.contains(&keyfile), "{uri}");
    let bare = uri.replace(&keyfile, "");
    let home = tempfile::tempdir().unwrap();
    let run = || {
        lv().args(["-F", "none", "-c", &bare, "hostname"])
            .env("HOME", home.path())
            .env_remove("SSH_AUTH_SOCK")
            .env_remove("LIBVIRT_DEFAULT_URI")
            .output()
            .unwrap()
    };
    let none = run();
    let err = String::from_utf8_lossy(&none.stderr);
    assert!(!none.status.success());
    assert!(
        err.contains("no key file given or found (~/.ssh/id_ed25519"),
        "{err}"
    );
    std::fs::create_dir(home.path().join(".ssh")).unwrap();
    std::fs::copy(b.s.client_key(), home.path().join(".ssh/id_ed25519")).unwrap();
    let found = run();
    assert!(
        found.status.success(),
        "{}",
        String::from_utf8_lossy(&found.stderr)
    );
    assert!(!String::from_utf8_lossy(&found.stdout).trim().is_empty());
}

/// Starts `lv vol-upload` of a large file through a relay, freezes the relay once bytes
/// flow: the child and when it was spawned (its deadline counts from then, not from the
/// setup before it).
async fn frozen_upload(
    b: &Bed,
    relay: &Relay,
    extra: &[&str],
    tmp: &Path,
) -> (std::process::Child, Instant) {
    let mut cmd = lv();
    cmd.args(["-c", &b.relay_uri(relay, tmp)]).args(extra);
    let direct = b.direct_uri();
    let flowing = Duration::from_secs(30);
    let src = tmp.join("big");
    common::frozen_lv_upload(cmd, &direct, &b.d, relay, "frozen.raw", &src, flowing).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lv_timeout_exits_within_a_second_under_a_frozen_peer() {
    let Some(b) = bed() else { return };
    let (relay, tmp) = b.relay();
    let (child, started) = frozen_upload(&b, &relay, &["--timeout", "6"], tmp.path()).await;
    let frozen_at = Instant::now();
    let timeout = Duration::from_secs(6);
    common::lv_times_out_on_time(child, &relay, started, frozen_at, timeout, "ssh");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lv_sigterm_exits_within_a_second_under_a_frozen_peer() {
    let Some(b) = bed() else { return };
    let (relay, tmp) = b.relay();
    let (mut child, _) = frozen_upload(&b, &relay, &[], tmp.path()).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let pid = rustix::process::Pid::from_raw(child.id() as i32).unwrap();
    rustix::process::kill_process(pid, rustix::process::Signal::TERM).unwrap();
    let (st, took) = common::wait_exit(&mut child, Duration::from_secs(10));
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

/// CPU time of process trees, read from `/proc` while a benchmark command runs.
mod cpu {
    use std::collections::{BTreeMap, HashMap};
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::thread::JoinHandle;
    use std::time::Duration;

    /// `/proc/<pid>/stat` counts in `USER_HZ`, which is 100 on Linux whatever the kernel's `HZ`.
    const TICK: f64 = 0.01;

    /// `(command name, utime + stime ticks)` of `pid`, all its threads together.
    fn stat(pid: u32) -> Option<(String, u64)> {
        let s = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        let (head, rest) = s.rsplit_once(')')?;
        let comm = head.split_once('(')?.1.to_owned();
        let f: Vec<&str> = rest.split_whitespace().collect();
        // After the name: state(3) ppid(4) … utime(14) stime(15).
        let ticks = f.get(11)?.parse::<u64>().ok()? + f.get(12)?.parse::<u64>().ok()?;
        Some((comm, ticks))
    }

    /// `root` and everything it forked that is still running.
    fn tree(root: u32, out: &mut Vec<u32>) {
        out.push(root);
        let Ok(tasks) = std::fs::read_dir(format!("/proc/{root}/task")) else {
            return;
        };
        for t in tasks.flatten() {
            let kids = std::fs::read_to_string(t.path().join("children")).unwrap_or_default();
            for k in kids.split_whitespace().filter_map(|k| k.parse().ok()) {
                tree(k, out);
            }
        }
    }

    /// The newest figures of every process seen in the trees of `roots`.
    fn snapshot(roots: &[u32], seen: &mut HashMap<u32, (String, u64)>) {
        let mut pids = Vec::new();
        for &r in roots {
            tree(r, &mut pids);
        }
        for pid in pids {
            if let Some(s) = stat(pid) {
                seen.insert(pid, s);
            }
        }
    }

    /// Samples the trees of `roots` (and of the processes added later) every 10 ms.
    pub struct Sampler {
        stop: Arc<AtomicBool>,
        roots: Arc<std::sync::Mutex<Vec<u32>>>,
        before: HashMap<u32, (String, u64)>,
        thread: JoinHandle<HashMap<u32, (String, u64)>>,
    }

    impl Sampler {
        pub fn start(roots: &[u32]) -> Self {
            let mut before = HashMap::new();
            snapshot(roots, &mut before);
            let stop = Arc::new(AtomicBool::new(false));
            let roots = Arc::new(std::sync::Mutex::new(roots.to_vec()));
            let (s, r) = (Arc::clone(&stop), Arc::clone(&roots));
            let thread = std::thread::spawn(move || {
                let mut seen = HashMap::new();
                loop {
                    let last = s.load(Ordering::Acquire);
                    let now = r.lock().unwrap().clone();
                    snapshot(&now, &mut seen);
                    if last {
                        return seen;
                    }
                    std::thread::sleep(Duration::from_millis(10));
                }
            });
            Self {
                stop,
                roots,
                before,
                thread,
            }
        }

        /// Adds the tree of `pid` (the benchmarked command).
        pub fn add(&self, pid: u32) {
            self.roots.lock().unwrap().push(pid);
        }

        /// CPU seconds per command name since `start`. A process that exits loses what it
        /// used after its last sample (≤ 10 ms).
        pub fn finish(self) -> BTreeMap<String, f64> {
            self.stop.store(true, Ordering::Release);
            let seen = self.thread.join().unwrap();
            let mut by_name = BTreeMap::new();
            for (pid, (comm, ticks)) in seen {
                let base = self.before.get(&pid).map_or(0, |b| b.1);
                *by_name.entry(comm).or_insert(0.0) +=
                    f64::from(u32::try_from(ticks.saturating_sub(base)).unwrap_or(u32::MAX)) * TICK;
            }
            by_name.retain(|_, s| *s > 0.0);
            by_name
        }
    }
}

/// Upload throughput over SSH: ours (exec channel with virt-ssh-helper, exec channel with nc,
/// direct-streamlocal, and both exec channels through a bastion) against virsh over OpenSSH
/// (virt-ssh-helper, nc, and both through OpenSSH's `ProxyJump`), every variant once per
/// round, `BENCH_RUNS` rounds (3) interleaved after a warm-up round, each upload after a `sync`,
/// with the CPU time of every process involved.
/// Not a pass/fail test: `cargo test --release -p examples --test lv_ssh -- --ignored
/// --nocapture bench_upload_over_ssh` prints the figures for docs/benchmarks.md.
/// `BENCH_MIB` (512) sizes the upload, `BENCH_ONLY=a,b` picks variants by label prefix,
/// `BENCH_HOLD=FILE` writes the variants' commands to FILE and waits until it is deleted
/// (to strace or perf the far side by hand), `BENCH_DAEMON_CPUS=0-1` lets the testbed's
/// libvirtd (pinned to one CPU at start) run on those CPUs, as a production daemon does.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "benchmark; run by hand"]
async fn bench_upload_over_ssh() {
    let env = |k: &str| std::env::var(k).ok();
    let mib: u64 = env("BENCH_MIB").and_then(|v| v.parse().ok()).unwrap_or(512);
    let runs: usize = env("BENCH_RUNS").and_then(|v| v.parse().ok()).unwrap_or(3);
    let Some(d) = Libvirtd::start_or_skip() else {
        return;
    };
    // The target gets the daemon's runtime dir, so `virt-ssh-helper qemu:///session` (ours
    // and virsh's) finds its socket; a plain sshd is the bastion.
    let run = d.socket_path().parent().unwrap().parent().unwrap();
    let Some(s) = Sshd::start_or_skip(&SshdOptions {
        set_env: vec![("XDG_RUNTIME_DIR".into(), run.display().to_string())],
        ..SshdOptions::default()
    }) else {
        return;
    };
    let Some(bastion) = Sshd::start_or_skip(&SshdOptions::default()) else {
        return;
    };
    let socket = d.socket_path().display().to_string();
    let c = Client::connect(&s.qemu_uri(d.socket_path()), ConnectOptions::default())
        .await
        .unwrap();
    make_vol(&c, &d, "bench.raw", mib * MIB).await;
    c.close();
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("src");
    std::fs::write(&src, pattern((mib * MIB) as usize)).unwrap();
    // One ssh config for both clients: `target` direct, `jumped` through `bastion` (ours
    // reads it with `-F`, virsh's ssh through a `command=` wrapper that adds `-F`).
    let cfg = tmp.path().join("ssh_config");
    std::fs::write(
        &cfg,
        s.ssh_config_block("target", s.port(), tmp.path(), &[])
            + &s.ssh_config_block("jumped", s.port(), tmp.path(), &["ProxyJump bastion"])
            + &bastion.ssh_config_block("bastion", bastion.port(), tmp.path(), &[]),
    )
    .unwrap();
    // `ssh`: OpenSSH with its own cipher order; `ssh-gcm`: with ours first (`-c`), to tell
    // the cipher's share from the client's.
    let wrap = |name: &str, extra: &str| {
        let path = tmp.path().join(name);
        let text = format!("#!/bin/sh\nexec ssh -F {} {extra}\"$@\"\n", cfg.display());
        std::fs::write(&path, text).unwrap();
        let mode = std::os::unix::fs::PermissionsExt::from_mode(0o755);
        std::fs::set_permissions(&path, mode).unwrap();
        path
    };
    let wrapper = wrap("ssh", "");
    let wrapper_gcm = wrap("ssh-gcm", "-c aes256-gcm@openssh.com ");
    let pool = d.pool_name();
    let lv_bin = env!("CARGO_BIN_EXE_lv");
    let ours = |host: &str, q: &str| -> Vec<String> {
        [lv_bin, "-F", &cfg.display().to_string(), "-c"]
            .into_iter()
            .map(str::to_owned)
            .chain([format!("qemu+ssh://{host}/session{q}")])
            .collect()
    };
    let virsh_with = |ssh: &Path, host: &str, q: &str| -> Vec<String> {
        vec![
            "virsh".into(),
            "-c".into(),
            format!(
                "qemu+ssh://{host}/session?no_tty=1&command={}{q}",
                ssh.display()
            ),
        ]
    };
    let virsh = |host: &str, q: &str| virsh_with(&wrapper, host, q);
    let nc = format!("?socket={socket}");
    let virsh_nc = format!("&socket={socket}&netcat=nc");
    // Without `socket=` a session URI runs `virt-ssh-helper` (libvirt and ours).
    let variants: Vec<(&str, Vec<String>)> = vec![
        ("ours exec virt-ssh-helper", ours("target", "")),
        ("ours exec nc", ours("target", &nc)),
        (
            "ours direct-streamlocal",
            ours("target", &format!("{nc}&proxy=forward")),
        ),
        ("virsh exec virt-ssh-helper", virsh("target", "")),
        ("virsh exec nc", virsh("target", &virsh_nc)),
        (
            "virsh aes256-gcm exec nc",
            virsh_with(&wrapper_gcm, "target", &virsh_nc),
        ),
        ("ours bastion virt-ssh-helper", ours("jumped", "")),
        ("ours bastion nc", ours("jumped", &nc)),
        ("virsh bastion virt-ssh-helper", virsh("jumped", "")),
        ("virsh bastion nc", virsh("jumped", &virsh_nc)),
    ];
    // `BENCH_AB=VAR,…`: every variant of ours again with `VAR=1` in its environment, for
    // each VAR (an A/B switch of a build under test), labelled "ours[VAR] …".
    let ab: Vec<String> = env("BENCH_AB")
        .map(|v| v.split(',').map(str::to_owned).collect())
        .unwrap_or_default();
    let variants: Vec<(String, Vec<String>)> = variants
        .into_iter()
        .flat_map(|(l, argv)| {
            let ours = l.starts_with("ours ");
            let twins: Vec<(String, Vec<String>)> = ab
                .iter()
                .filter(|_| ours)
                .map(|var| {
                    let label = l.replacen("ours", &format!("ours[{var}]"), 1);
                    let argv = ["env".to_owned(), format!("{var}=1")]
                        .into_iter()
                        .chain(argv.iter().cloned())
                        .collect();
                    (label, argv)
                })
                .collect();
            std::iter::once((l.to_owned(), argv)).chain(twins)
        })
        .collect();
    let only: Option<Vec<String>> =
        env("BENCH_ONLY").map(|v| v.split(',').map(str::to_owned).collect());
    let variants: Vec<_> = variants
        .into_iter()
        .filter(|(l, _)| {
            only.as_ref()
                .is_none_or(|o| o.iter().any(|p| l.starts_with(p)))
        })
        .map(|(l, mut argv)| {
            argv.extend(["vol-upload", "--pool", pool, "bench.raw"].map(str::to_owned));
            argv.push(src.display().to_string());
            (l, argv)
        })
        .collect();
    let variants: Vec<(&str, Vec<String>)> = variants
        .iter()
        .map(|(l, a)| (l.as_str(), a.clone()))
        .collect();
    if let Some(hold) = env("BENCH_HOLD") {
        use std::fmt::Write as _;
        let mut text = String::new();
        for (l, argv) in &variants {
            let quoted: Vec<String> = argv.iter().map(|a| format!("'{a}'")).collect();
            let _ = writeln!(text, "# {l}\n{}", quoted.join(" "));
        }
        let _ = writeln!(
            text,
            "# sshd {:?} bastion {:?} libvirtd {}",
            s.processes(),
            bastion.processes(),
            d.pid()
        );
        std::fs::write(&hold, text).unwrap();
        println!("holding: commands in {hold}; delete it to end");
        while Path::new(&hold).exists() {
            std::thread::sleep(Duration::from_millis(200));
        }
        return;
    }
    if let Some(cpus) = env("BENCH_DAEMON_CPUS") {
        // Every thread of the daemon (`-a`); its qemu children are not involved here.
        let st = Command::new("taskset")
            .args(["-a", "-cp", &cpus, &d.pid().to_string()])
            .stdout(std::process::Stdio::null())
            .status()
            .unwrap();
        assert!(st.success(), "taskset -a -cp {cpus} {}: {st}", d.pid());
    }
    println!(
        "libvirtd on CPUs {} (BENCH_DAEMON_CPUS; the testbed pins it to one by default)",
        env("BENCH_DAEMON_CPUS").unwrap_or_else(|| "pinned".into())
    );
    let far: Vec<u32> = s
        .processes()
        .into_iter()
        .chain(bastion.processes())
        .chain([d.pid()])
        .collect();
    let bytes = f64::from(u32::try_from(mib).unwrap_or(u32::MAX)) * 1_048_576.0;
    // Runs one variant: prints its wall time, client rusage and CPU per process name.
    let time = |label: &str, argv: &[String]| -> f64 {
        let logs = [s.log().len(), bastion.log().len()];
        // Every upload leaves 512 MiB of dirty pages in the volume; written back while a
        // later variant runs (the flusher takes pages older than 30 s), they would cost
        // whichever variant that is. Not timed.
        let synced = Command::new("sync").status().unwrap();
        assert!(synced.success(), "sync: {synced}");
        let sampler = cpu::Sampler::start(&far);
        let t = Instant::now();
        let child = Command::new("/usr/bin/time")
            .args(["-f", "%U user %S sys %M KiB maxrss"])
            .args(argv)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        sampler.add(child.id());
        let out = child.wait_with_output().unwrap();
        let secs = t.elapsed().as_secs_f64();
        let cpu = sampler.finish();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{label}: {stderr}");
        let rusage = stderr.lines().last().unwrap_or("");
        let per: Vec<String> = cpu
            .iter()
            .filter(|(_, s)| **s >= 0.02)
            .map(|(n, s)| format!("{n} {s:.2} s ({:.2} ns/B)", s * 1e9 / bytes))
            .collect();
        // What each sshd negotiated with the connections of this variant (its DEBUG1 log).
        let ciphers = |log: String, from: usize, who: &str| -> Option<String> {
            let found: Vec<&str> = log
                .get(from..)?
                .lines()
                .filter_map(|l| l.split_once("kex: client->server cipher: "))
                .map(|(_, rest)| rest.split_whitespace().next().unwrap_or(""))
                .collect();
            (!found.is_empty()).then(|| format!("{who} {}", found.join("+")))
        };
        let negotiated: Vec<String> = [
            ciphers(s.log(), logs[0], "target"),
            ciphers(bastion.log(), logs[1], "bastion"),
        ]
        .into_iter()
        .flatten()
        .collect();
        println!(
            "{label}: {mib} MiB in {secs:.2} s = {:.0} MB/s; client {rusage}; cipher {}; CPU: {}",
            bytes / 1e6 / secs,
            negotiated.join(", "),
            per.join(", ")
        );
        secs
    };
    // A round first, not counted: a variant's first upload cost the daemon 1.02–1.32 ns/B
    // against 0.65–1.01 in later rounds (ours with virt-ssh-helper, ten runs, 2026-12-04);
    // ours came first and paid most of it. One upload of the first variant before the
    // rounds was not enough (the next variants' first uploads still paid).
    println!("warm-up round, not counted:");
    for (label, argv) in &variants {
        time(label, argv);
    }
    let mut all: Vec<Vec<f64>> = vec![Vec::new(); variants.len()];
    for round in 1..=runs {
        println!("round {round} of {runs}, load {}", testbed::loadavg());
        let mut secs = Vec::new();
        for (i, (label, argv)) in variants.iter().enumerate() {
            let t = time(label, argv);
            all[i].push(t);
            secs.push((*label, t));
        }
        let find = |l: &str| secs.iter().find(|(x, _)| *x == l).map(|(_, s)| *s);
        let mut ratios = Vec::new();
        for (ours, theirs) in [
            ("ours exec virt-ssh-helper", "virsh exec virt-ssh-helper"),
            ("ours exec nc", "virsh exec nc"),
            ("ours exec nc", "virsh aes256-gcm exec nc"),
            ("ours direct-streamlocal", "virsh exec nc"),
            (
                "ours bastion virt-ssh-helper",
                "virsh bastion virt-ssh-helper",
            ),
            ("ours bastion nc", "virsh bastion nc"),
        ] {
            if let (Some(o), Some(v)) = (find(ours), find(theirs)) {
                ratios.push(format!("{ours} ÷ {theirs}: {:.2}×", v / o));
            }
        }
        for var in &ab {
            for (l, _) in variants.iter().filter(|(l, _)| l.starts_with("ours ")) {
                let twin = l.replacen("ours", &format!("ours[{var}]"), 1);
                if let (Some(o), Some(t)) = (find(l), find(&twin)) {
                    ratios.push(format!("{l} ÷ {twin}: {:.2}×", t / o));
                }
            }
        }
        println!(
            "round {round} ratios (throughput), load {}:",
            testbed::loadavg()
        );
        for r in ratios {
            println!("  {r}");
        }
    }
    println!("all rounds (MB/s):");
    for ((label, _), secs) in variants.iter().zip(&all) {
        let mbs: Vec<String> = secs
            .iter()
            .map(|s| format!("{:.0}", bytes / 1e6 / s))
            .collect();
        println!("  {label}: {}", mbs.join(" / "));
    }
}
