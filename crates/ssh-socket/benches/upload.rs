//! Upload throughput through the forwarded socket: ssh-socket vs OpenSSH `ssh host nc -U sock`
//! (how libvirt's own ssh transport reaches the socket), same sshd, same remote unix socket, one
//! run each, printed as a table. (`ssh -W /path/to/sock` opened no channel at all with
//! OpenSSH 9.2's client here — `ssh -v` shows none — so it cannot serve as the baseline.)
//!
//! ```text
//! cargo bench -p ssh-socket --bench upload              # 512 MiB
//! BENCH_MIB=128 cargo bench -p ssh-socket --bench upload
//! ```
//!
//! The remote socket is served by a separate sink process (this binary with `--sink`), so the
//! client CPU figures hold only the client: ours from `/proc/self/stat`, OpenSSH's from
//! `/usr/bin/time` (ssh only; the remote `nc` counts as server side). sshd's CPU is read from `/proc` before the connection closes.

use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::net::UnixListener;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use testbed::sshd::{Sshd, SshdOptions};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

const CHUNK: usize = 1 << 20;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.get(1).map(String::as_str) == Some("--sink") {
        sink(Path::new(&args[2]));
        return;
    }
    // `cargo test --all-targets` runs this binary without `--bench`: do nothing then.
    if !args.iter().any(|a| a == "--bench") {
        println!("upload benchmark: run with `cargo bench -p ssh-socket --bench upload`");
        return;
    }
    let mib: u64 = std::env::var("BENCH_MIB")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(512);
    let total = mib << 20;
    let sshd = match Sshd::start(&SshdOptions::default()) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("cannot start sshd, no benchmark: {e}");
            return;
        }
    };
    let sock = sshd.dir().join("sink.sock");
    let mut sink_proc = Command::new(std::env::current_exe().unwrap())
        .arg("--sink")
        .arg(&sock)
        .stdout(Stdio::piped())
        .spawn()
        .expect("start sink");
    // The sink prints "ready" once it listens.
    let mut line = String::new();
    BufReader::new(sink_proc.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    sshd.user().own(&sock).expect("chown sink socket");

    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    println!(
        "upload of {mib} MiB to a unix socket through a private OpenSSH 9.2 sshd on 127.0.0.1"
    );
    println!(
        "{:<44} {:>8} {:>9} {:>10} {:>10} {:>9}",
        "client", "wall s", "MB/s", "client cpu", "sshd cpu", "rss MiB"
    );
    let ours = rt.block_on(ours(&sshd, &sock, total, None));
    print_row("ssh-socket (default: aes256-gcm)", &ours, total);
    if std::env::var_os("BENCH_OURS_ONLY").is_some() {
        let _ = sink_proc.kill();
        let _ = sink_proc.wait();
        return;
    }
    let chacha = rt.block_on(ours_with(
        &sshd,
        &sock,
        total,
        Some("chacha20-poly1305@openssh.com"),
    ));
    print_row("ssh-socket (chacha20-poly1305)", &chacha, total);
    let aes128 = rt.block_on(ours_with(
        &sshd,
        &sock,
        total,
        Some("aes128-gcm@openssh.com"),
    ));
    print_row("ssh-socket (aes128-gcm)", &aes128, total);
    let ssh_default = openssh(&sshd, &sock, total, None);
    print_row(
        "ssh host nc -U (default: chacha20-poly1305)",
        &ssh_default,
        total,
    );
    let ssh_aes = openssh(&sshd, &sock, total, Some("aes256-gcm@openssh.com"));
    print_row("ssh -c aes256-gcm host nc -U", &ssh_aes, total);
    println!(
        "wall-time ratio ours/openssh: {:.2} (vs default ssh), {:.2} (vs ssh -c aes256-gcm)",
        ours.wall.as_secs_f64() / ssh_default.wall.as_secs_f64(),
        ours.wall.as_secs_f64() / ssh_aes.wall.as_secs_f64()
    );
    let _ = sink_proc.kill();
    let _ = sink_proc.wait();
}

struct Run {
    wall: Duration,
    client_cpu: Duration,
    sshd_cpu: Duration,
    rss_kib: u64,
}

#[allow(clippy::cast_precision_loss)] // display only
fn print_row(name: &str, r: &Run, total: u64) {
    println!(
        "{:<44} {:>8.2} {:>9.0} {:>9.2}s {:>9.2}s {:>9.1}",
        name,
        r.wall.as_secs_f64(),
        total as f64 / r.wall.as_secs_f64() / 1e6,
        r.client_cpu.as_secs_f64(),
        r.sshd_cpu.as_secs_f64(),
        r.rss_kib as f64 / 1024.0
    );
}

async fn ours(sshd: &Sshd, sock: &Path, total: u64, cipher: Option<&str>) -> Run {
    ours_with(sshd, sock, total, cipher).await
}

async fn ours_with(sshd: &Sshd, sock: &Path, total: u64, cipher: Option<&str>) -> Run {
    let mut cfg = ssh_socket::SshConfig::new(sshd.user().name.clone(), "127.0.0.1");
    cfg.port = sshd.port();
    cfg.key_files = vec![sshd.client_key().to_owned()];
    cfg.use_agent = false;
    cfg.known_hosts = vec![sshd.known_hosts().to_owned()];
    cfg.channel = ssh_socket::RemoteChannel::forward(sock.to_string_lossy());
    if let Some(c) = cipher {
        cfg.ciphers = vec![c.to_owned()];
    }
    let data = payload();
    let cpu0 = self_cpu();
    let sampler = Sampler::start(sshd);
    let t0 = Instant::now();
    let (mut s, close) = ssh_socket::connect(&cfg).await.expect("connect");
    let mut sent = 0;
    while sent < total {
        s.write_all(&data).await.expect("upload");
        sent += data.len() as u64;
    }
    s.shutdown().await.unwrap();
    let mut answer = String::new();
    s.read_to_string(&mut answer).await.unwrap();
    let wall = t0.elapsed();
    let client_cpu = self_cpu().saturating_sub(cpu0);
    let sshd_cpu = sampler.stop();
    assert_eq!(answer.trim(), format!("ok {total}"));
    close.close();
    Run {
        wall,
        client_cpu,
        sshd_cpu,
        rss_kib: self_hwm_kib(),
    }
}

fn openssh(sshd: &Sshd, sock: &Path, total: u64, cipher: Option<&str>) -> Run {
    let times = sshd.dir().join("time.out");
    let mut cmd = Command::new("/usr/bin/time");
    cmd.args(["-f", "%U %S %M", "-o"]).arg(&times);
    cmd.arg("ssh")
        .args(["-F", "/dev/null", "-i"])
        .arg(sshd.client_key());
    cmd.args(["-o", "BatchMode=yes", "-o", "IdentitiesOnly=yes", "-o"])
        .arg(format!(
            "UserKnownHostsFile={}",
            sshd.known_hosts().display()
        ));
    if let Some(c) = cipher {
        cmd.args(["-c", c]);
    }
    cmd.args(["-p", &sshd.port().to_string()])
        .arg(format!("{}@127.0.0.1", sshd.user().name))
        .args(["nc", "-N", "-U"])
        .arg(sock)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped());
    let data = payload();
    let sampler = Sampler::start(sshd);
    let t0 = Instant::now();
    let mut child = cmd.spawn().expect("run ssh under /usr/bin/time");
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let mut sent = 0;
    while sent < total {
        stdin.write_all(&data).expect("write to ssh");
        sent += data.len() as u64;
    }
    drop(stdin);
    let mut answer = String::new();
    stdout.read_to_string(&mut answer).unwrap();
    let wall = t0.elapsed();
    let sshd_cpu = sampler.stop();
    child.wait().unwrap();
    assert_eq!(answer.trim(), format!("ok {total}"));
    let t = std::fs::read_to_string(&times).unwrap_or_default();
    let f: Vec<f64> = t
        .split_whitespace()
        .filter_map(|x| x.parse().ok())
        .collect();
    Run {
        wall,
        client_cpu: Duration::from_secs_f64(f.first().unwrap_or(&0.0) + f.get(1).unwrap_or(&0.0)),
        sshd_cpu,
        rss_kib: f.get(2).copied().unwrap_or(0.0) as u64,
    }
}

/// 1 MiB of incompressible bytes, written repeatedly.
fn payload() -> Vec<u8> {
    let mut x = 0x2545_f491_4f6c_dd1du64;
    (0..CHUNK)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect()
}

/// Reads and discards; answers `ok <bytes>` at EOF.
fn sink(path: &Path) {
    let _ = std::fs::remove_file(path);
    let l = UnixListener::bind(path).expect("bind sink");
    println!("ready");
    std::io::stdout().flush().unwrap();
    for conn in l.incoming() {
        let Ok(mut s) = conn else { continue };
        std::thread::spawn(move || {
            let mut buf = vec![0u8; CHUNK];
            let mut n = 0u64;
            while let Ok(k) = s.read(&mut buf) {
                if k == 0 {
                    break;
                }
                n += k as u64;
            }
            let _ = writeln!(s, "ok {n}");
        });
    }
}

/// utime + stime from `/proc/<pid>/stat` (clock ticks of 10 ms).
fn cpu(pid: &str) -> Duration {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return Duration::ZERO;
    };
    let f: Vec<&str> = stat
        .rsplit_once(')')
        .map(|(_, r)| r.split_whitespace().collect())
        .unwrap_or_default();
    // After ')': state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime.
    let tick = |i: usize| f.get(i).and_then(|x| x.parse::<u64>().ok()).unwrap_or(0);
    Duration::from_millis((tick(11) + tick(12)) * 10)
}

fn self_cpu() -> Duration {
    cpu("self")
}

/// Samples the CPU time of sshd's processes every 100 ms (per-connection processes exit when
/// the connection closes, taking their counters with them), minus what they had at start.
struct Sampler {
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    thread: std::thread::JoinHandle<Duration>,
}

impl Sampler {
    fn start(sshd: &Sshd) -> Self {
        let pids = move || sshd.processes();
        let first: std::collections::HashMap<u32, Duration> = pids()
            .into_iter()
            .map(|p| (p, cpu(&p.to_string())))
            .collect();
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let root = sshd.processes();
        let flag = std::sync::Arc::clone(&stop);
        let thread = std::thread::spawn(move || {
            let mut last = first.clone();
            loop {
                let done = flag.load(std::sync::atomic::Ordering::Relaxed);
                for p in descendants_of(&root) {
                    let c = cpu(&p.to_string());
                    if c > Duration::ZERO {
                        last.insert(p, c);
                    }
                }
                if done {
                    break;
                }
                std::thread::sleep(Duration::from_millis(100));
            }
            last.iter()
                .map(|(p, c)| c.saturating_sub(*first.get(p).unwrap_or(&Duration::ZERO)))
                .sum()
        });
        Self { stop, thread }
    }

    fn stop(self) -> Duration {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        self.thread.join().unwrap()
    }
}

/// `roots` and all their descendants, via `/proc/<pid>/task/<pid>/children` (cheap, unlike a
/// scan of `/proc`, so the sampler barely shows in our own CPU figure).
fn descendants_of(roots: &[u32]) -> Vec<u32> {
    let mut out = roots.to_vec();
    let mut i = 0;
    while i < out.len() {
        let p = out[i];
        if let Ok(c) = std::fs::read_to_string(format!("/proc/{p}/task/{p}/children")) {
            out.extend(c.split_whitespace().filter_map(|x| x.parse::<u32>().ok()));
        }
        i += 1;
    }
    out
}

fn self_hwm_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}
