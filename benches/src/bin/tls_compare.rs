//! `tls_compare`: `lv` (libvirt-remote over rustls) side by side with virsh and the C library
//! over `qemu+tls://`, against one private libvirtd with a TLS listener, with the daemon
//! pinned to one CPU (the testbed's default) and unpinned (every thread re-pinned to all
//! CPUs), in one run.
//!
//! ```text
//! cargo build --release -p examples --bin lv
//! cargo build --release -p benches --bin tls_compare
//! target/release/tls_compare [--lv PATH] [--lv-arg ARG]… [--reps 3] [--calls 20000] [--mib 512]
//!     [--ciphers aes128-gcm,aes256-gcm,chacha20-poly1305] [--downloads-only]
//! ```
//!
//! `--ciphers`: after the comparison, `lv` downloads once per rep for each named cipher
//! offered first (`?tls_ciphers=`), interleaved, with the daemon's CPU per MB (all its
//! threads, from /proc, 10 ms ticks). `--downloads-only` skips the calls and the uploads.
//! `TESTBED_LIBVIRTD_GLIBC_TUNABLES=…` in the environment becomes the daemons'
//! `GLIBC_TUNABLES` (the testbed passes it on), to measure libvirtd's allocator.
//!
//! 1. Sequential calls (`get_lib_version`, one connection): `lv bench-calls` vs
//!    `benches/compare/calls.py` (the C library, what virsh is built on; virsh itself has no
//!    call loop). Calls/s as each client reports it; client CPU per call from the client
//!    process's CPU time over the calls (lv: `getrusage(RUSAGE_CHILDREN)` delta over the whole
//!    process, start-up and TLS handshake included; python: its own `process_time` around the
//!    calls).
//! 2. `--mib` upload and download of one volume: `lv vol-upload/vol-download` vs `virsh
//!    vol-upload/vol-download`, wall time of the whole command (connect included for both) and
//!    client CPU (`RUSAGE_CHILDREN` delta). Downloads are compared with the source outside the
//!    timing.
//!
//! Repetitions interleave the clients. Progress goes to stderr, a markdown report to stdout.

#![allow(clippy::cast_precision_loss)]

use std::fmt::Write as _;
use std::fs;
use std::io::{Read as _, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::time::Instant;

use nix::sys::resource::{UsageWho, getrusage};
use testbed::libvirtd::Libvirtd;
use testbed::pki::ServerCert;

type Res<T> = Result<T, String>;

const VOL: &str = "tlsvol";
/// A pool in the work dir (`/dev/shm` when it exists): the transfers measure the clients,
/// not the disk, and need no free space on it.
const POOL: &str = "tlspool";

struct Opts {
    lv: PathBuf,
    /// Extra arguments for every `lv` run (e.g. `--busy-poll-us 0`).
    lv_args: Vec<String>,
    /// Start the daemon, print the URI and pool, and wait for stdin to close.
    serve: bool,
    reps: usize,
    calls: usize,
    mib: u64,
    /// `--ciphers a,b`: also download with `?tls_ciphers=X` for each, with the daemon's CPU.
    ciphers: Vec<String>,
    /// `--downloads-only`: skip the calls and the uploads.
    downloads_only: bool,
}

fn parse() -> Res<Opts> {
    let here = std::env::current_exe().map_err(|e| e.to_string())?;
    let mut o = Opts {
        lv: here.with_file_name("lv"),
        lv_args: Vec::new(),
        serve: false,
        reps: 3,
        calls: 20_000,
        mib: 512,
        ciphers: Vec::new(),
        downloads_only: false,
    };
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut val = || args.next().ok_or(format!("{a} needs a value"));
        match a.as_str() {
            "--lv" => o.lv = PathBuf::from(val()?),
            "--lv-arg" => o.lv_args.push(val()?),
            "--serve" => o.serve = true,
            "--reps" => o.reps = val()?.parse().map_err(|e| format!("--reps: {e}"))?,
            "--calls" => o.calls = val()?.parse().map_err(|e| format!("--calls: {e}"))?,
            "--mib" => o.mib = val()?.parse().map_err(|e| format!("--mib: {e}"))?,
            "--ciphers" => o.ciphers = val()?.split(',').map(str::to_string).collect(),
            "--downloads-only" => o.downloads_only = true,
            _ => return Err(format!("unknown argument {a}")),
        }
    }
    if !o.lv.exists() {
        return Err(format!(
            "{} not found: cargo build --release -p examples --bin lv",
            o.lv.display()
        ));
    }
    Ok(o)
}

/// User + system CPU seconds of every reaped child so far.
fn children_cpu() -> f64 {
    getrusage(UsageWho::RUSAGE_CHILDREN).map_or(0.0, |u| {
        let t = |tv: nix::sys::time::TimeVal| tv.tv_sec() as f64 + tv.tv_usec() as f64 / 1e6;
        t(u.user_time()) + t(u.system_time())
    })
}

/// Run `cmd`; its stdout, wall seconds and CPU seconds.
fn run(mut cmd: Command) -> Res<(String, f64, f64)> {
    let cpu0 = children_cpu();
    let t = Instant::now();
    let out = cmd
        .env("LC_ALL", "C")
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("{cmd:?}: {e}"))?;
    let wall = t.elapsed().as_secs_f64();
    let cpu = children_cpu() - cpu0;
    if !out.status.success() {
        return Err(format!(
            "{cmd:?} failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok((String::from_utf8_lossy(&out.stdout).into_owned(), wall, cpu))
}

fn field(out: &str, key: &str) -> Res<f64> {
    out.lines()
        .find_map(|l| l.strip_prefix(key))
        .and_then(|v| v.trim().parse().ok())
        .ok_or(format!("no {key:?} in {out:?}"))
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn same(a: &Path, b: &Path) -> Res<bool> {
    let (mut fa, mut fb) = (
        fs::File::open(a).map_err(|e| e.to_string())?,
        fs::File::open(b).map_err(|e| e.to_string())?,
    );
    let (mut ba, mut bb) = (vec![0u8; 1 << 20], vec![0u8; 1 << 20]);
    loop {
        let na = fa.read(&mut ba).map_err(|e| e.to_string())?;
        let mut nb = 0;
        while nb < na {
            let n = fb.read(&mut bb[nb..na]).map_err(|e| e.to_string())?;
            if n == 0 {
                return Ok(false);
            }
            nb += n;
        }
        if na == 0 {
            return Ok(fb.read(&mut bb).map_err(|e| e.to_string())? == 0);
        }
        if ba[..na] != bb[..na] {
            return Ok(false);
        }
    }
}

#[derive(Default)]
struct Row {
    lv: Vec<f64>,
    lv_cpu: Vec<f64>,
    c: Vec<f64>,
    c_cpu: Vec<f64>,
    /// Daemon CPU ms per MB (transfers).
    lv_daemon: Vec<f64>,
    c_daemon: Vec<f64>,
}

fn mode(o: &Opts, unpinned: bool, work: &Path, src: &Path, out: &mut String) -> Res<()> {
    let d = Libvirtd::builder()
        .tls(ServerCert::default())
        .start()
        .map_err(|e| format!("private libvirtd: {e}"))?;
    let label = if unpinned {
        let cpus = format!("0-{}", thread_count()? - 1);
        let st = Command::new("taskset")
            .args(["-a", "-p", "-c", &cpus, &d.pid().to_string()])
            .stdout(Stdio::null())
            .status()
            .map_err(|e| format!("taskset: {e}"))?;
        if !st.success() {
            return Err(format!("taskset failed ({st})"));
        }
        format!("daemon unpinned (CPUs {cpus})")
    } else {
        "daemon pinned to one CPU".to_string()
    };
    eprintln!("== {label}");
    let uri = d.tls_uri();
    let bytes = o.mib << 20;
    let pool_dir = work.join(if unpinned {
        "pool-unpinned"
    } else {
        "pool-pinned"
    });
    fs::create_dir_all(&pool_dir).map_err(|e| e.to_string())?;
    let user = d.user();
    if user.switch {
        chown(&pool_dir, user.uid, user.gid)?;
    }
    let target = pool_dir.to_string_lossy().into_owned();
    for args in [
        &["pool-define-as", POOL, "dir", "--target", &target][..],
        &["pool-start", POOL],
    ] {
        d.virsh(args).map_err(|e| e.to_string())?;
    }
    d.virsh(&[
        "vol-create-as",
        POOL,
        VOL,
        &bytes.to_string(),
        "--format",
        "raw",
    ])
    .map_err(|e| e.to_string())?;
    let calls_py = Path::new(env!("CARGO_MANIFEST_DIR")).join("compare/calls.py");
    if o.serve {
        println!(
            "uri: {uri}\npool: {POOL}\nvol: {VOL}\nsrc: {}",
            src.display()
        );
        let _ = std::io::stdout().flush();
        let _ = std::io::stdin().read_to_end(&mut Vec::new());
        return Ok(());
    }

    let mut calls = Row::default();
    for rep in 0..o.reps * usize::from(!o.downloads_only) {
        eprintln!("   calls rep {rep}");
        let mut lv = Command::new(&o.lv);
        lv.args(&o.lv_args)
            .args(["-c", &uri, "bench-calls", "--calls", &o.calls.to_string()]);
        let (s, _, cpu) = run(lv)?;
        calls.lv.push(field(&s, "calls/s:")?);
        calls.lv_cpu.push(cpu / o.calls as f64 * 1e6);
        let mut py = Command::new("/usr/bin/python3");
        py.arg(&calls_py).args([&uri, &o.calls.to_string(), "1"]);
        let (s, _, _) = run(py)?;
        calls.c.push(field(&s, "calls/s:")?);
        calls
            .c_cpu
            .push(field(&s, "cpu_s:")? / o.calls as f64 * 1e6);
    }

    let mut up = Row::default();
    let mut down = Row::default();
    let dst = work.join("dst");
    let mb = bytes as f64 / 1e6;
    for rep in 0..o.reps {
        eprintln!("   transfers rep {rep}");
        for (row, verb) in [(&mut up, "vol-upload"), (&mut down, "vol-download")] {
            if o.downloads_only && verb == "vol-upload" {
                // Not measured, but the volume needs the source's bytes once.
                if rep == 0 {
                    let mut lv = Command::new(&o.lv);
                    lv.args(&o.lv_args)
                        .args(["-c", &uri, verb, "--pool", POOL, VOL])
                        .arg(src);
                    run(lv)?;
                }
                continue;
            }
            let file = if verb == "vol-upload" { src } else { &dst };
            let mut lv = Command::new(&o.lv);
            lv.args(&o.lv_args)
                .args(["-c", &uri, verb, "--pool", POOL, VOL])
                .arg(file);
            let d0 = daemon_cpu(d.pid())?;
            let (_, wall, cpu) = run(lv)?;
            row.lv_daemon.push((daemon_cpu(d.pid())? - d0) / mb * 1e3);
            if verb == "vol-download" && !same(src, &dst)? {
                return Err("lv download differs from the source".into());
            }
            row.lv.push(mb / wall);
            row.lv_cpu.push(cpu / mb * 1e3);
            let mut v = Command::new("virsh");
            v.args(["-c", &uri, verb, "--pool", POOL, VOL]).arg(file);
            let d0 = daemon_cpu(d.pid())?;
            let (_, wall, cpu) = run(v)?;
            row.c_daemon.push((daemon_cpu(d.pid())? - d0) / mb * 1e3);
            if verb == "vol-download" && !same(src, &dst)? {
                return Err("virsh download differs from the source".into());
            }
            row.c.push(mb / wall);
            row.c_cpu.push(cpu / mb * 1e3);
            let _ = fs::remove_file(&dst);
        }
    }

    // Downloads per offered cipher, interleaved: MB/s, lv CPU and daemon CPU per MB.
    let mut per_cipher: Vec<(String, Row)> = o
        .ciphers
        .iter()
        .map(|c| (c.clone(), Row::default()))
        .collect();
    for rep in 0..o.reps * usize::from(!o.ciphers.is_empty()) {
        eprintln!("   cipher downloads rep {rep}");
        for (c, row) in &mut per_cipher {
            let sep = if uri.contains('?') { '&' } else { '?' };
            let curi = format!("{uri}{sep}tls_ciphers={c}");
            let mut lv = Command::new(&o.lv);
            lv.args(&o.lv_args)
                .args(["-c", &curi, "vol-download", "--pool", POOL, VOL])
                .arg(&dst);
            let d0 = daemon_cpu(d.pid())?;
            let (_, wall, cpu) = run(lv)?;
            row.lv_daemon.push((daemon_cpu(d.pid())? - d0) / mb * 1e3);
            if !same(src, &dst)? {
                return Err(format!("lv download ({c}) differs from the source"));
            }
            row.lv.push(mb / wall);
            row.lv_cpu.push(cpu / mb * 1e3);
            let _ = fs::remove_file(&dst);
        }
    }

    let _ = writeln!(out, "\n### {label}\n");
    let _ = writeln!(
        out,
        "| what | lv | virsh / C library | ratio | lv CPU | virsh / C CPU |\n|---|---|---|---|---|---|"
    );
    let mut line = |what: &str, unit: &str, cpu_unit: &str, r: &mut Row| {
        if r.lv.is_empty() || r.c.is_empty() {
            // Not measured (`--downloads-only`).
            return;
        }
        let (a, b) = (median(&mut r.lv), median(&mut r.c));
        let (ca, cb) = (median(&mut r.lv_cpu), median(&mut r.c_cpu));
        let _ = writeln!(
            out,
            "| {what} | {a:.0} {unit} | {b:.0} {unit} | {:.2}× | {ca:.1} {cpu_unit} | {cb:.1} {cpu_unit} |",
            a / b
        );
    };
    line(
        &format!("sequential calls ({}, C library)", o.calls),
        "calls/s",
        "µs/call",
        &mut calls,
    );
    line(
        &format!("upload {} MiB (virsh)", o.mib),
        "MB/s",
        "ms/MB",
        &mut up,
    );
    line(
        &format!("download {} MiB (virsh)", o.mib),
        "MB/s",
        "ms/MB",
        &mut down,
    );
    if !down.lv_daemon.is_empty() {
        let _ = writeln!(
            out,
            "\ndaemon CPU per MB downloaded: {:.2} ms behind lv, {:.2} ms behind virsh",
            median(&mut down.lv_daemon),
            median(&mut down.c_daemon)
        );
    }
    if !per_cipher.is_empty() {
        let _ = writeln!(
            out,
            "\n| lv download, `tls_ciphers=` | MB/s (runs) | median | lv CPU ms/MB | daemon CPU ms/MB |\n|---|---|---|---|---|"
        );
        for (c, r) in &mut per_cipher {
            let runs =
                r.lv.iter()
                    .map(|v| format!("{v:.0}"))
                    .collect::<Vec<_>>()
                    .join(" / ");
            let _ = writeln!(
                out,
                "| {c} | {runs} | {:.0} | {:.2} | {:.2} |",
                median(&mut r.lv),
                median(&mut r.lv_cpu),
                median(&mut r.lv_daemon)
            );
        }
    }
    Ok(())
}

/// CPU seconds (user + system, all threads) of process `pid` so far.
fn daemon_cpu(pid: u32) -> Res<f64> {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).map_err(|e| e.to_string())?;
    // Fields after the parenthesised command name; utime and stime are fields 14 and 15.
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let f: Vec<&str> = rest.split_whitespace().collect();
    let tick = |i: usize| f.get(i).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
    // `rest` starts at field 3 (state): utime is field 14 → index 11.
    Ok((tick(11) + tick(12)) / 100.0)
}

fn chown(p: &Path, uid: u32, gid: u32) -> Res<()> {
    let st = Command::new("chown")
        .arg(format!("{uid}:{gid}"))
        .arg(p)
        .status()
        .map_err(|e| format!("chown: {e}"))?;
    if st.success() {
        Ok(())
    } else {
        Err(format!("chown {} failed", p.display()))
    }
}

fn thread_count() -> Res<usize> {
    std::thread::available_parallelism()
        .map(usize::from)
        .map_err(|e| e.to_string())
}

fn real_main() -> Res<()> {
    let o = parse()?;
    let work = tempfile::Builder::new()
        .prefix("lv-tls-compare-")
        .tempdir_in("/dev/shm")
        .or_else(|_| tempfile::tempdir())
        .map_err(|e| e.to_string())?;
    // The daemon runs as the testbed user and must reach its pool below this dir.
    {
        use std::os::unix::fs::PermissionsExt as _;
        fs::set_permissions(work.path(), fs::Permissions::from_mode(0o711))
            .map_err(|e| e.to_string())?;
    }
    let src = work.path().join("src");
    {
        let mut f = fs::File::create(&src).map_err(|e| e.to_string())?;
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut buf = vec![0u8; 1 << 20];
        for _ in 0..o.mib {
            for chunk in buf.chunks_mut(8) {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                chunk.copy_from_slice(&x.to_le_bytes()[..chunk.len()]);
            }
            f.write_all(&buf).map_err(|e| e.to_string())?;
        }
    }
    let mut out = String::new();
    let _ = writeln!(
        out,
        "## lv vs virsh over qemu+tls:// ({} reps, medians; load average at start: {})",
        o.reps,
        fs::read_to_string("/proc/loadavg")
            .unwrap_or_default()
            .trim()
    );
    if let Ok(t) = std::env::var("TESTBED_LIBVIRTD_GLIBC_TUNABLES") {
        let _ = writeln!(out, "\nlibvirtd runs with GLIBC_TUNABLES={t}");
    }
    for unpinned in [false, true] {
        mode(&o, unpinned, work.path(), &src, &mut out)?;
    }
    print!("{out}");
    Ok(())
}

fn main() -> ExitCode {
    match real_main() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("tls_compare: {e}");
            ExitCode::FAILURE
        }
    }
}
