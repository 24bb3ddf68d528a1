//! `compare`: our client (`lv`, built on `libvirt-rpc`) side by side with virsh and with the C
//! library (through python3-libvirt), on the same private libvirtd, in one run.
//!
//! ```text
//! export CARGO_TARGET_DIR=/work/target-compare
//! cargo build --release -p examples --bin lv
//! cargo build --release -p benches --bin compare
//! $CARGO_TARGET_DIR/release/compare [--lv PATH] [--reps 3] [--calls 30000] [--threads 8]
//!     [--mib 512] [--slow-rate-mb 20] [--slow-secs 5] [--local-dir /dev/shm]
//!     [--pool-on-disk] [--client-cpu N] [--nice N] [--skip-calls] [--skip-transfers]
//!     [--skip-slow] [--serve]
//! ```
//!
//! What it measures (all against one daemon started here, so ratios are fair):
//!
//! 1. Calls/s of `get_lib_version`, sequential and `--threads`-way concurrent on one
//!    connection: `lv bench-calls` vs `benches/compare/calls.py` (the C library, one
//!    `virConnectPtr` shared by threads). Repetitions interleave ours and C. Client CPU per
//!    call (fixed start-up cost subtracted) and the daemon's CPU per call.
//! 2. Upload and download of a `--mib` volume by `lv`, `virsh -t` and `transfer.py` (the C
//!    library through `stream.sendAll`/`recvAll`, 262,120-byte chunks like virsh; without and
//!    with libvirt's event loop thread). MB/s over the transfer proper (virsh's `--timing`,
//!    the helper's own timer, `lv`'s wall time minus its fixed cost), client CPU (user+sys from
//!    `getrusage(RUSAGE_CHILDREN)` deltas) and peak RSS (`/usr/bin/time %M`, i.e. `wait4`'s
//!    `ru_maxrss`) of each client process. Every copy is verified outside the timing.
//! 3. Download into a FIFO drained at `--slow-rate-mb` for `--slow-secs`: the client's RSS.
//!
//! Progress goes to stderr; stdout gets a markdown report and, as its last line, one JSON
//! object with every sample. Nothing is left behind: the volume and pool live in temp dirs,
//! the daemon dies on drop. A run killed by a signal may leave `/dev/shm/lv-compare-*`; the
//! next run removes those whose owner pid is gone. Method and results:
//! `docs/benchmarks-compare.md`.

#![allow(clippy::cast_precision_loss)] // byte counts and call counts far below 2^52.

use std::ffi::{OsStr, OsString};
use std::fmt::Write as _;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Read as _, Write as _};
use std::os::unix::fs::OpenOptionsExt as _;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::thread;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use nix::sys::resource::{UsageWho, getrusage};
use nix::sys::stat::Mode;
use testbed::libvirtd::Libvirtd;

type Res<T> = Result<T, String>;

const USAGE: &str = "\
usage: compare [--lv PATH] [--python PATH] [--helpers DIR] [--reps N] [--calls N]
               [--threads N] [--mib N] [--slow-rate-mb N] [--slow-secs N] [--local-dir DIR]
               [--pool-on-disk] [--client-cpu CPU] [--skip-calls] [--skip-transfers]
               [--skip-slow] [--nice N] [--daemon-cpus LIST] [--serve]
--nice N: run the daemon (all its threads) and every client at nice N (e.g. -10) so that
          other work on the box disturbs the figures less; both sides get the same priority.
--daemon-cpus LIST: re-pin every daemon thread to LIST (taskset syntax, e.g. 0-1) after start;
          the testbed pins it to one CPU (see testbed::libvirtd), a production daemon is not.
--serve:  start the daemon, create pool, volume and source file, print them, and wait for
          stdin to close (for perf/strace by hand); then clean up.
Build lv first: cargo build --release -p examples --bin lv";

const VOL: &str = "cmpvol";
const OWN_POOL: &str = "cmppool";
const MB: f64 = 1e6;
/// Slow-sink runs stop early (and say so) if a client grows beyond this.
const RSS_CAP_KIB: u64 = 4 << 20;

#[derive(Debug, Clone)]
struct Opts {
    lv: Option<PathBuf>,
    python: PathBuf,
    helpers: PathBuf,
    reps: usize,
    calls: usize,
    threads: usize,
    mib: u64,
    slow_rate: f64,
    slow_secs: f64,
    local_dir: PathBuf,
    pool_on_disk: bool,
    client_cpu: Option<String>,
    daemon_cpus: Option<String>,
    skip_calls: bool,
    skip_transfers: bool,
    skip_slow: bool,
    nice: Option<i32>,
    serve: bool,
}

impl Opts {
    fn parse() -> Res<Self> {
        let shm = Path::new("/dev/shm");
        let mut o = Self {
            lv: None,
            python: "/usr/bin/python3".into(),
            helpers: Path::new(env!("CARGO_MANIFEST_DIR")).join("compare"),
            reps: 3,
            calls: 30_000,
            threads: 8,
            mib: 512,
            slow_rate: 20.0 * MB,
            slow_secs: 5.0,
            local_dir: if shm.is_dir() {
                shm.into()
            } else {
                std::env::temp_dir()
            },
            pool_on_disk: false,
            client_cpu: None,
            daemon_cpus: None,
            skip_calls: false,
            skip_transfers: false,
            skip_slow: false,
            nice: None,
            serve: false,
        };
        let mut args = std::env::args().skip(1);
        while let Some(a) = args.next() {
            let mut val = || {
                args.next()
                    .ok_or_else(|| format!("{a} needs a value\n{USAGE}"))
            };
            let num = |s: String| -> Res<f64> {
                s.parse::<f64>()
                    .ok()
                    .filter(|v| *v > 0.0)
                    .ok_or_else(|| format!("{a}: not a positive number: {s}"))
            };
            match a.as_str() {
                "--lv" => o.lv = Some(val()?.into()),
                "--python" => o.python = val()?.into(),
                "--helpers" => o.helpers = val()?.into(),
                "--reps" => o.reps = num(val()?)? as usize,
                "--calls" => o.calls = num(val()?)? as usize,
                "--threads" => o.threads = num(val()?)? as usize,
                "--mib" => o.mib = num(val()?)? as u64,
                "--slow-rate-mb" => o.slow_rate = num(val()?)? * MB,
                "--slow-secs" => o.slow_secs = num(val()?)?,
                "--local-dir" => o.local_dir = val()?.into(),
                "--pool-on-disk" => o.pool_on_disk = true,
                "--client-cpu" => o.client_cpu = Some(val()?),
                "--daemon-cpus" => o.daemon_cpus = Some(val()?),
                "--skip-calls" => o.skip_calls = true,
                "--skip-transfers" => o.skip_transfers = true,
                "--skip-slow" => o.skip_slow = true,
                "--nice" => {
                    let v = val()?;
                    o.nice = Some(
                        v.parse()
                            .map_err(|_| format!("--nice: not an integer: {v}"))?,
                    );
                }
                "--serve" => o.serve = true,
                "-h" | "--help" => return Err(USAGE.into()),
                _ => return Err(format!("unknown argument {a}\n{USAGE}")),
            }
        }
        o.reps = o.reps.max(1);
        Ok(o)
    }
}

/// `--lv`, else `lv` next to this binary (same target dir), else `$CARGO_TARGET_DIR/release/lv`.
fn find_lv(opt: Option<&Path>) -> Res<PathBuf> {
    let mut tried = Vec::new();
    if let Some(p) = opt {
        tried.push(p.to_path_buf());
    } else {
        if let Some(dir) = std::env::current_exe()
            .ok()
            .and_then(|e| e.parent().map(Path::to_path_buf))
        {
            tried.push(dir.join("lv"));
        }
        if let Some(t) = std::env::var_os("CARGO_TARGET_DIR") {
            tried.push(Path::new(&t).join("release/lv"));
        }
    }
    tried.iter().find(|p| p.is_file()).cloned().ok_or_else(|| {
        format!(
            "lv not found (tried {tried:?}); build it first: \
             cargo build --release -p examples --bin lv, or pass --lv PATH"
        )
    })
}

// ---------------------------------------------------------------- measurement primitives

/// user+sys seconds of all waited-for descendants of this process.
fn children_cpu() -> f64 {
    let u = getrusage(UsageWho::RUSAGE_CHILDREN).expect("getrusage(RUSAGE_CHILDREN)");
    let s = |t: nix::sys::time::TimeVal| t.tv_sec() as f64 + t.tv_usec() as f64 / 1e6;
    s(u.user_time()) + s(u.system_time())
}

/// user+sys seconds of a live process (all its threads, dead ones included).
fn proc_cpu(pid: u32, tick: f64) -> f64 {
    let Ok(stat) = fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return f64::NAN;
    };
    let Some((_, rest)) = stat.rsplit_once(')') else {
        return f64::NAN;
    };
    let f: Vec<&str> = rest.split_whitespace().collect();
    // After the command name: state is field 3, utime 14, stime 15.
    let get = |i: usize| {
        f.get(i - 3)
            .and_then(|v| v.parse::<f64>().ok())
            .unwrap_or(f64::NAN)
    };
    (get(14) + get(15)) / tick
}

/// (busy, total) jiffies of the whole box, from the first line of /proc/stat.
fn box_jiffies() -> (u64, u64) {
    let s = fs::read_to_string("/proc/stat").unwrap_or_default();
    let v: Vec<u64> = s
        .lines()
        .next()
        .unwrap_or("")
        .split_whitespace()
        .skip(1)
        .filter_map(|x| x.parse().ok())
        .collect();
    let total: u64 = v.iter().take(8).sum();
    let idle = v.get(3).copied().unwrap_or(0) + v.get(4).copied().unwrap_or(0);
    (total - idle, total)
}

fn busy_pct(a: (u64, u64), b: (u64, u64)) -> f64 {
    let total = b.1.saturating_sub(a.1);
    if total == 0 {
        return f64::NAN;
    }
    100.0 * b.0.saturating_sub(a.0) as f64 / total as f64
}

fn loadavg() -> String {
    fs::read_to_string("/proc/loadavg")
        .unwrap_or_default()
        .split_whitespace()
        .take(3)
        .collect::<Vec<_>>()
        .join(" ")
}

/// `VmRSS` and `VmHWM` of a live process, KiB.
fn rss_kib(pid: u32) -> Option<(u64, u64)> {
    let s = fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let field = |name: &str| {
        s.lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.split_whitespace().next()?.parse().ok())
    };
    Some((field("VmRSS:")?, field("VmHWM:")?))
}

fn utc_now() -> String {
    fmt_utc(SystemTime::now())
}

#[allow(clippy::many_single_char_names)] // the names of the published algorithm
fn fmt_utc(t: SystemTime) -> String {
    let secs = t.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let days = secs / 86_400;
    let tod = secs % 86_400;
    // Howard Hinnant's civil_from_days.
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02} UTC",
        tod / 3600,
        tod / 60 % 60,
        tod % 60
    )
}

#[derive(Debug, Clone, Default)]
struct Sample {
    wall: f64,
    cpu: f64,
    rss_kib: u64,
    stdout: String,
    /// libvirtd's user+sys seconds over the run.
    daemon_cpu: f64,
    /// Both CPUs of the box: percent busy over the run (anything, not only us).
    busy: f64,
}

impl Sample {
    /// `key: value` from the client's stdout.
    fn field(&self, key: &str) -> Res<f64> {
        self.stdout
            .lines()
            .find_map(|l| l.strip_prefix(key)?.trim().parse().ok())
            .ok_or_else(|| format!("no `{key}` in output: {:?}", self.stdout))
    }
}

fn median(v: &[f64]) -> f64 {
    let mut s: Vec<f64> = v.iter().copied().filter(|x| !x.is_nan()).collect();
    if s.is_empty() {
        return f64::NAN;
    }
    s.sort_by(f64::total_cmp);
    let n = s.len();
    if n % 2 == 1 {
        s[n / 2]
    } else {
        f64::midpoint(s[n / 2 - 1], s[n / 2])
    }
}

fn min_max(v: &[f64]) -> (f64, f64) {
    v.iter()
        .filter(|x| !x.is_nan())
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &x| {
            (a.min(x), b.max(x))
        })
}

/// `1,234` style.
fn thousands(x: f64) -> String {
    if !x.is_finite() {
        return "n/a".into();
    }
    let s = format!("{:.0}", x.abs());
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    if x < 0.0 { format!("-{out}") } else { out }
}

/// "median (min–max)" with `fmt` for each number.
fn spread(v: &[f64], fmt: impl Fn(f64) -> String) -> String {
    let (lo, hi) = min_max(v);
    if v.len() < 2 {
        return fmt(median(v));
    }
    format!("{} ({}–{})", fmt(median(v)), fmt(lo), fmt(hi))
}

fn f1(x: f64) -> String {
    if x.is_finite() {
        format!("{x:.1}")
    } else {
        "n/a".into()
    }
}

fn f2(x: f64) -> String {
    if x.is_finite() {
        format!("{x:.2}")
    } else {
        "n/a".into()
    }
}

fn jnum(x: f64) -> String {
    if x.is_finite() {
        format!("{x:.4}")
    } else {
        "null".into()
    }
}

fn jarr(v: &[f64]) -> String {
    format!(
        "[{}]",
        v.iter().map(|x| jnum(*x)).collect::<Vec<_>>().join(",")
    )
}

fn jstr(s: &str) -> String {
    let mut o = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => o.push_str("\\\""),
            '\\' => o.push_str("\\\\"),
            c if (c as u32) < 0x20 => {
                let _ = write!(o, "\\u{:04x}", c as u32);
            }
            c => o.push(c),
        }
    }
    o.push('"');
    o
}

fn same_content(a: &Path, b: &Path) -> Res<bool> {
    let open = |p: &Path| File::open(p).map_err(|e| format!("{}: {e}", p.display()));
    let (mut fa, mut fb) = (open(a)?, open(b)?);
    if fa.metadata().map_err(|e| e.to_string())?.len()
        != fb.metadata().map_err(|e| e.to_string())?.len()
    {
        return Ok(false);
    }
    let (mut ba, mut bb) = (vec![0u8; 4 << 20], vec![0u8; 4 << 20]);
    loop {
        let n = read_full(&mut fa, &mut ba).map_err(|e| e.to_string())?;
        let m = read_full(&mut fb, &mut bb).map_err(|e| e.to_string())?;
        if n != m || ba[..n] != bb[..m] {
            return Ok(false);
        }
        if n == 0 {
            return Ok(true);
        }
    }
}

fn read_full(f: &mut File, buf: &mut [u8]) -> io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match f.read(&mut buf[n..])? {
            0 => break,
            k => n += k,
        }
    }
    Ok(n)
}

/// `mib` MiB of xorshift64* output: incompressible, no zero blocks, nothing sparse.
fn write_random_file(path: &Path, mib: u64) -> Res<()> {
    let mut f = File::create(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut buf = vec![0u8; 1 << 20];
    for _ in 0..mib {
        for chunk in buf.chunks_exact_mut(8) {
            x ^= x >> 12;
            x ^= x << 25;
            x ^= x >> 27;
            chunk.copy_from_slice(&x.wrapping_mul(0x2545_F491_4F6C_DD1D).to_le_bytes());
        }
        f.write_all(&buf).map_err(|e| e.to_string())?;
    }
    f.sync_all().map_err(|e| e.to_string())
}

/// Remove `lv-compare-*` dirs in `dir` whose owner (pid in `owner`) is gone.
fn reap_stale(dir: &Path) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        if !e.file_name().to_string_lossy().starts_with("lv-compare-") {
            continue;
        }
        let owner = fs::read_to_string(e.path().join("owner")).unwrap_or_default();
        if let Ok(pid) = owner.trim().parse::<u32>()
            && !Path::new(&format!("/proc/{pid}")).exists()
        {
            eprintln!("removing stale {}", e.path().display());
            let _ = fs::remove_dir_all(e.path());
        }
    }
}

// ---------------------------------------------------------------- the bench

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Client {
    Ours,
    Virsh,
    /// python3-libvirt without an event loop: the library reads the socket only inside calls.
    C,
    /// python3-libvirt with libvirt's default event loop running in a thread (like virsh).
    CEv,
}

impl Client {
    fn label(self) -> &'static str {
        match self {
            Client::Ours => "ours (lv)",
            Client::Virsh => "virsh",
            Client::C => "C library (python)",
            Client::CEv => "C library (python, event loop thread)",
        }
    }

    fn key(self) -> &'static str {
        match self {
            Client::Ours => "ours",
            Client::Virsh => "virsh",
            Client::C => "c",
            Client::CEv => "c_ev",
        }
    }
}

struct Bench {
    o: Opts,
    lv: PathBuf,
    virsh: PathBuf,
    uri: String,
    pool: String,
    pool_dir: PathBuf,
    daemon_pid: u32,
    tick: f64,
    work: PathBuf,
    src: PathBuf,
    report: String,
    json: Vec<String>,
    targets: Vec<(String, String, Option<bool>)>,
}

impl Bench {
    /// Run `prog args` to completion: wall, user+sys CPU, peak RSS.
    fn run(&self, prog: &Path, args: &[OsString]) -> Res<Sample> {
        let tf = self.work.join("time.out");
        let mut cmd = Command::new("/usr/bin/time");
        cmd.arg("-f").arg("%M").arg("-o").arg(&tf);
        if let Some(cpu) = &self.o.client_cpu {
            cmd.args(["taskset", "-c", cpu]);
        }
        cmd.arg(prog)
            .args(args)
            .env("LC_ALL", "C")
            .env_remove("LIBVIRT_DEFAULT_URI")
            .stdin(Stdio::null());
        let d0 = proc_cpu(self.daemon_pid, self.tick);
        let b0 = box_jiffies();
        let cpu0 = children_cpu();
        let t0 = Instant::now();
        let out = cmd
            .output()
            .map_err(|e| format!("running {}: {e}", prog.display()))?;
        let wall = t0.elapsed().as_secs_f64();
        let cpu = children_cpu() - cpu0;
        let busy = busy_pct(b0, box_jiffies());
        let daemon_cpu = proc_cpu(self.daemon_pid, self.tick) - d0;
        if !out.status.success() {
            return Err(format!(
                "`{} {}` failed ({}): {}",
                prog.display(),
                args.iter()
                    .map(|a| a.to_string_lossy())
                    .collect::<Vec<_>>()
                    .join(" "),
                out.status,
                String::from_utf8_lossy(&out.stderr).trim()
            ));
        }
        let rss_kib = fs::read_to_string(&tf)
            .ok()
            .and_then(|t| t.lines().last()?.trim().parse().ok())
            .unwrap_or(0);
        Ok(Sample {
            wall,
            cpu,
            rss_kib,
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            daemon_cpu,
            busy,
        })
    }

    fn py(&self, script: &str) -> OsString {
        self.o.helpers.join(script).into_os_string()
    }

    fn args<I, S>(items: I) -> Vec<OsString>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        items
            .into_iter()
            .map(|s| s.as_ref().to_os_string())
            .collect()
    }

    fn calls_cmd(&self, c: Client, n: usize, conc: usize) -> (PathBuf, Vec<OsString>) {
        match c {
            Client::Ours => (
                self.lv.clone(),
                Self::args([
                    "-c",
                    &self.uri,
                    "bench-calls",
                    "--calls",
                    &n.to_string(),
                    "--concurrency",
                    &conc.to_string(),
                ]),
            ),
            _ => (self.o.python.clone(), {
                let mut a = vec![self.py("calls.py")];
                a.extend(Self::args([&self.uri, &n.to_string(), &conc.to_string()]));
                a
            }),
        }
    }

    /// One calls run: (calls/s, whole-process sample, daemon CPU s, box busy %).
    fn calls_once(&self, c: Client, n: usize, conc: usize) -> Res<(f64, Sample, f64, f64)> {
        let (prog, args) = self.calls_cmd(c, n, conc);
        let s = self.run(&prog, &args)?;
        let rate = if n == 0 { 0.0 } else { s.field("calls/s:")? };
        let (daemon, busy) = (s.daemon_cpu, s.busy);
        Ok((rate, s, daemon, busy))
    }

    fn calls(&mut self) -> Res<()> {
        let n = self.o.calls;
        eprintln!("== calls: warm-up");
        for c in [Client::Ours, Client::C] {
            self.calls_once(c, 2000, 1)?;
            self.calls_once(c, 2000, self.o.threads)?;
        }
        // Fixed cost (start, connect, close) of each client: subtracted from its CPU.
        let mut base = [(Client::Ours, 0.0), (Client::C, 0.0)];
        for (c, cpu) in &mut base {
            let v: Vec<f64> = (0..3)
                .map(|_| self.calls_once(*c, 0, 1).map(|r| r.1.cpu))
                .collect::<Res<_>>()?;
            *cpu = median(&v);
            eprintln!("   fixed cost {}: {:.1} ms CPU", c.label(), *cpu * 1e3);
        }
        let _ = writeln!(
            self.report,
            "\n### Calls: `get_lib_version` on one connection, {} calls per run, {} runs \
             (interleaved)\n\n\
             | mode | ours calls/s | C library calls/s | ours/C | client CPU µs/call ours / C | \
             daemon CPU µs/call ours / C | box CPU busy % ours / C |\n\
             |---|---|---|---|---|---|---|",
            thousands(n as f64),
            self.o.reps
        );
        let mut json = Vec::new();
        for (mode, conc) in [("sequential", 1), ("concurrent", self.o.threads)] {
            let mut rate = [Vec::new(), Vec::new()];
            let mut ccpu = [Vec::new(), Vec::new()];
            let mut dcpu = [Vec::new(), Vec::new()];
            let mut busy = [Vec::new(), Vec::new()];
            for rep in 0..self.o.reps {
                let order = if rep % 2 == 0 { [0, 1] } else { [1, 0] };
                for i in order {
                    let (c, fixed) = base[i];
                    let (r, sample, dcpu_run, b) = self.calls_once(c, n, conc)?;
                    eprintln!(
                        "   {mode} x{conc} {}: {r:.0} calls/s, client {:.1} µs/call, daemon \
                         {:.1} µs/call, box busy {b:.0}%, load {}",
                        c.label(),
                        (sample.cpu - fixed) / n as f64 * 1e6,
                        dcpu_run / n as f64 * 1e6,
                        loadavg()
                    );
                    rate[i].push(r);
                    ccpu[i].push((sample.cpu - fixed) / n as f64 * 1e6);
                    dcpu[i].push(dcpu_run / n as f64 * 1e6);
                    busy[i].push(b);
                }
            }
            let ratio = median(&rate[0]) / median(&rate[1]);
            let _ = writeln!(
                self.report,
                "| {mode} ({conc} {}) | {} | {} | **{:.2}×** | {} / {} | {} / {} | {} / {} |",
                if conc == 1 { "task" } else { "tasks/threads" },
                spread(&rate[0], thousands),
                spread(&rate[1], thousands),
                ratio,
                f1(median(&ccpu[0])),
                f1(median(&ccpu[1])),
                f1(median(&dcpu[0])),
                f1(median(&dcpu[1])),
                thousands(median(&busy[0])),
                thousands(median(&busy[1])),
            );
            self.targets.push((
                format!("calls {mode} ≥ 1.0× C"),
                format!("{ratio:.3}×"),
                Some(ratio >= 1.0),
            ));
            json.push(format!(
                "{}:{{\"concurrency\":{conc},\"ours_calls_s\":{},\"c_calls_s\":{},\
                 \"ours_client_cpu_us\":{},\"c_client_cpu_us\":{},\"ours_daemon_cpu_us\":{},\
                 \"c_daemon_cpu_us\":{},\"ours_box_busy_pct\":{},\"c_box_busy_pct\":{},\
                 \"ratio_ours_c\":{}}}",
                jstr(mode),
                jarr(&rate[0]),
                jarr(&rate[1]),
                jarr(&ccpu[0]),
                jarr(&ccpu[1]),
                jarr(&dcpu[0]),
                jarr(&dcpu[1]),
                jarr(&busy[0]),
                jarr(&busy[1]),
                jnum(ratio)
            ));
        }
        let _ = writeln!(
            self.report,
            "\nClient CPU excludes each client's fixed cost (start, connect, close: ours {:.1} ms, \
             C/python {:.1} ms, from runs with 0 calls). Daemon CPU is libvirtd's utime+stime \
             delta over the run (10 ms ticks). The daemon runs on CPU {}.",
            base[0].1 * 1e3,
            base[1].1 * 1e3,
            self.o
                .daemon_cpus
                .as_deref()
                .unwrap_or("0 (pinned by the testbed)")
        );
        self.json
            .push(format!("\"calls\":{{\"n\":{n},{}}}", json.join(",")));
        Ok(())
    }

    fn transfer_cmd(&self, c: Client, op: &str, file: &Path) -> (PathBuf, Vec<OsString>) {
        let f = file.as_os_str();
        match c {
            Client::Ours => (self.lv.clone(), {
                let mut a = Self::args(["-c", &self.uri, op, "--pool", &self.pool, VOL]);
                a.push(f.into());
                a
            }),
            Client::Virsh => (self.virsh.clone(), {
                let mut a = Self::args(["-t", "-c", &self.uri, op, "--pool", &self.pool, VOL]);
                a.push(f.into());
                a
            }),
            Client::C | Client::CEv => (self.o.python.clone(), {
                let mut a = vec![self.py("transfer.py")];
                a.extend(Self::args([
                    op.trim_start_matches("vol-"),
                    &self.uri,
                    &self.pool,
                    VOL,
                ]));
                a.push(f.into());
                if c == Client::CEv {
                    a.push("--event-loop".into());
                }
                a
            }),
        }
    }

    /// Start + connect + lookups, no transfer.
    fn fixed_cmd(&self, c: Client) -> (PathBuf, Vec<OsString>) {
        match c {
            Client::Ours => (
                self.lv.clone(),
                Self::args(["-c", &self.uri, "vol-list", "--pool", &self.pool]),
            ),
            Client::Virsh => (
                self.virsh.clone(),
                Self::args(["-c", &self.uri, "vol-info", "--pool", &self.pool, VOL]),
            ),
            Client::C | Client::CEv => (self.o.python.clone(), {
                let mut a = vec![self.py("transfer.py")];
                a.extend(Self::args(["noop", &self.uri, &self.pool, VOL]));
                if c == Client::CEv {
                    a.push("--event-loop".into());
                }
                a
            }),
        }
    }

    /// Seconds of the transfer proper, without process start and connect: virsh's own
    /// `--timing`, the python helper's own timer, and for `lv` (no timer of its own) the wall
    /// time minus its fixed cost (start + connect + lookups: a few ms, 20 ms on a busy box).
    fn net_secs(c: Client, s: &Sample, fixed_wall: f64) -> Res<f64> {
        match c {
            Client::Ours => Ok(s.wall - fixed_wall),
            Client::Virsh => s
                .stdout
                .lines()
                .find_map(|l| {
                    l.trim()
                        .strip_prefix("(Time: ")?
                        .strip_suffix(" ms)")?
                        .parse::<f64>()
                        .ok()
                })
                .map(|ms| ms / 1e3)
                .ok_or_else(|| format!("no `(Time: … ms)` in virsh output: {:?}", s.stdout)),
            Client::C | Client::CEv => s.field("secs:"),
        }
    }

    fn transfers(&mut self) -> Res<()> {
        let bytes = self.o.mib << 20;
        let clients = [Client::Ours, Client::Virsh, Client::C, Client::CEv];
        let nc = clients.len();
        let vol_file = self.pool_dir.join(VOL);
        let dst = self.work.join("download.out");
        eprintln!("== transfers: warm-up (virsh upload + download, untimed)");
        let (prog, args) = self.transfer_cmd(Client::Virsh, "vol-upload", &self.src);
        self.run(&prog, &args)?;
        let (prog, args) = self.transfer_cmd(Client::Virsh, "vol-download", &dst);
        self.run(&prog, &args)?;
        if !same_content(&self.src, &dst)? {
            return Err("warm-up download differs from the source".into());
        }
        fs::remove_file(&dst).map_err(|e| e.to_string())?;

        let mut fixed = Vec::new();
        for c in clients {
            let v: Vec<Sample> = (0..3)
                .map(|_| {
                    let (prog, args) = self.fixed_cmd(c);
                    self.run(&prog, &args)
                })
                .collect::<Res<_>>()?;
            let wall = median(&v.iter().map(|s| s.wall).collect::<Vec<_>>());
            let cpu = median(&v.iter().map(|s| s.cpu).collect::<Vec<_>>());
            let rss = median(&v.iter().map(|s| s.rss_kib as f64).collect::<Vec<_>>());
            eprintln!(
                "   fixed cost {}: {:.1} ms wall, {:.1} ms CPU, {:.1} MiB RSS",
                c.label(),
                wall * 1e3,
                cpu * 1e3,
                rss / 1024.0
            );
            fixed.push((wall, cpu, rss));
        }

        // [op][client] -> (sample, net seconds)
        let mut res: Vec<Vec<Vec<(Sample, f64)>>> = vec![vec![Vec::new(); nc]; 2];
        let mut load = Vec::new();
        for rep in 0..self.o.reps {
            for k in 0..nc {
                let i = (rep + k) % nc;
                let c = clients[i];
                for (oi, op) in ["vol-upload", "vol-download"].iter().enumerate() {
                    let file = if oi == 0 { &self.src } else { &dst };
                    let (prog, args) = self.transfer_cmd(c, op, file);
                    let s = self.run(&prog, &args)?;
                    let net = Self::net_secs(c, &s, fixed[i].0)?;
                    eprintln!(
                        "   rep {rep} {op} {}: {:.0} MB/s net ({:.3} s, whole process {:.3} s), \
                         CPU {:.2} s, RSS {:.1} MiB, daemon CPU {:.2} s, load {}",
                        c.label(),
                        bytes as f64 / net / MB,
                        net,
                        s.wall,
                        s.cpu,
                        s.rss_kib as f64 / 1024.0,
                        s.daemon_cpu,
                        loadavg()
                    );
                    // Verify outside the timed run.
                    let copy = if oi == 0 { &vol_file } else { &dst };
                    if !same_content(&self.src, copy)? {
                        return Err(format!("{op} by {}: content differs", c.label()));
                    }
                    if oi == 1 {
                        fs::remove_file(&dst).map_err(|e| e.to_string())?;
                    }
                    res[oi][i].push((s, net));
                }
            }
            load.push(loadavg());
        }

        let _ = writeln!(
            self.report,
            "\n### Transfers: {} MiB volume, non-sparse, {} runs per client (rotating order)\n\n\
             | op | client | MB/s (transfer) | MB/s (whole process) | client CPU s (user+sys) | \
             peak RSS MiB | daemon CPU s | box CPU busy % | ours ÷ this |\n\
             |---|---|---|---|---|---|---|---|---|",
            self.o.mib, self.o.reps
        );
        let mut json = Vec::new();
        let mut net_med = vec![vec![0.0f64; nc]; 2];
        let mut rss_med = vec![vec![0.0f64; nc]; 2];
        for (oi, op) in ["upload", "download"].iter().enumerate() {
            for i in 0..nc {
                let v = &res[oi][i];
                net_med[oi][i] = median(
                    &v.iter()
                        .map(|(_, n)| bytes as f64 / n / MB)
                        .collect::<Vec<_>>(),
                );
                rss_med[oi][i] =
                    median(&v.iter().map(|(s, _)| s.rss_kib as f64).collect::<Vec<_>>());
            }
            for (i, c) in clients.iter().enumerate() {
                let v = &res[oi][i];
                let net: Vec<f64> = v.iter().map(|(_, n)| bytes as f64 / n / MB).collect();
                let gross: Vec<f64> = v.iter().map(|(s, _)| bytes as f64 / s.wall / MB).collect();
                let cpu: Vec<f64> = v.iter().map(|(s, _)| s.cpu).collect();
                let rss: Vec<f64> = v.iter().map(|(s, _)| s.rss_kib as f64 / 1024.0).collect();
                let dcpu: Vec<f64> = v.iter().map(|(s, _)| s.daemon_cpu).collect();
                let busy: Vec<f64> = v.iter().map(|(s, _)| s.busy).collect();
                let ratio = net_med[oi][0] / net_med[oi][i];
                let _ = writeln!(
                    self.report,
                    "| {op} | {} | {} | {} | {} | {} | {} | {} | {} |",
                    c.label(),
                    spread(&net, thousands),
                    spread(&gross, thousands),
                    spread(&cpu, f2),
                    spread(&rss, f1),
                    f2(median(&dcpu)),
                    thousands(median(&busy)),
                    if i == 0 {
                        "—".into()
                    } else {
                        format!("**{ratio:.2}×**")
                    }
                );
                json.push(format!(
                    "{}:{{\"net_mb_s\":{},\"gross_mb_s\":{},\"cpu_s\":{},\"rss_mib\":{},\
                     \"daemon_cpu_s\":{},\"box_busy_pct\":{},\"fixed_wall_s\":{},\
                     \"fixed_cpu_s\":{},\"fixed_rss_mib\":{}}}",
                    jstr(&format!("{op}_{}", c.key())),
                    jarr(&net),
                    jarr(&gross),
                    jarr(&cpu),
                    jarr(&rss),
                    jarr(&dcpu),
                    jarr(&busy),
                    jnum(fixed[i].0),
                    jnum(fixed[i].1),
                    jnum(fixed[i].2 / 1024.0),
                ));
            }
            let r = net_med[oi][0] / net_med[oi][2];
            self.targets
                .push((format!("{op} ≥ 1.1× C"), format!("{r:.3}×"), Some(r >= 1.1)));
            let r = net_med[oi][0] / net_med[oi][3];
            self.targets.push((
                format!("(extra) {op} ≥ 1.1× C with its event loop thread"),
                format!("{r:.3}×"),
                Some(r >= 1.1),
            ));
        }
        let up_rss = rss_med[0][0] / 1024.0;
        self.targets.push((
            "upload peak RSS ≤ 8 MiB".into(),
            format!("{up_rss:.1} MiB"),
            Some(up_rss <= 8.0),
        ));
        let _ = writeln!(
            self.report,
            "\nMB/s (transfer) excludes process start and connect: virsh's own `--timing`, the \
             python helper's own timer (vol.upload/download → finish), and for ours the wall \
             time minus its fixed cost. Fixed cost = median of 3 connect-and-lookup runs of the \
             same client (ours `lv vol-list`: {:.0} ms, virsh `vol-info`: {:.0} ms, python \
             `transfer.py noop`: {:.0} ms, with event loop {:.0} ms; their peak RSS {:.1} / \
             {:.1} / {:.1} / {:.1} MiB). MB = 10^6 bytes. Client CPU and peak RSS are of the \
             whole client process (`getrusage` / `wait4`), start-up included. Loadavg after \
             each rep: {}.",
            fixed[0].0 * 1e3,
            fixed[1].0 * 1e3,
            fixed[2].0 * 1e3,
            fixed[3].0 * 1e3,
            fixed[0].2 / 1024.0,
            fixed[1].2 / 1024.0,
            fixed[2].2 / 1024.0,
            fixed[3].2 / 1024.0,
            load.join(" | ")
        );
        self.json.push(format!(
            "\"transfers\":{{\"mib\":{},{}}}",
            self.o.mib,
            json.join(",")
        ));
        Ok(())
    }

    /// Download into a FIFO drained at `slow_rate`; RSS of the client while it runs.
    fn slow_once(&self, c: Client) -> Res<SlowResult> {
        let fifo = self.work.join("slow.fifo");
        let _ = fs::remove_file(&fifo);
        nix::unistd::mkfifo(&fifo, Mode::from_bits_truncate(0o600)).map_err(|e| e.to_string())?;
        let (prog, args) = self.transfer_cmd(c, "vol-download", &fifo);
        let mut cmd = if let Some(cpu) = &self.o.client_cpu {
            let mut c = Command::new("taskset");
            c.args(["-c", cpu]).arg(&prog);
            c
        } else {
            Command::new(&prog)
        };
        let mut child = cmd
            .args(&args)
            .env("LC_ALL", "C")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(
                File::create(self.work.join("slow.stderr"))
                    .map_or_else(|_| Stdio::null(), Stdio::from),
            )
            .spawn()
            .map_err(|e| format!("spawning {}: {e}", prog.display()))?;
        let pid = child.id();
        let opened = Arc::new(AtomicBool::new(false));
        let read = Arc::new(AtomicU64::new(0));
        let reader = {
            let (fifo, opened, read, rate) =
                (fifo.clone(), opened.clone(), read.clone(), self.o.slow_rate);
            thread::spawn(move || -> io::Result<()> {
                let mut f = File::open(&fifo)?; // blocks until the client opens it
                opened.store(true, Ordering::SeqCst);
                let t0 = Instant::now();
                let mut buf = vec![0u8; 64 << 10];
                let mut total = 0u64;
                loop {
                    let n = f.read(&mut buf)?;
                    if n == 0 {
                        return Ok(());
                    }
                    total += n as u64;
                    read.store(total, Ordering::SeqCst);
                    let due = Duration::from_secs_f64(total as f64 / rate);
                    if let Some(d) = due.checked_sub(t0.elapsed()) {
                        thread::sleep(d);
                    }
                }
            })
        };
        let deadline = Instant::now() + Duration::from_secs(30);
        while !opened.load(Ordering::SeqCst) && Instant::now() < deadline {
            if child.try_wait().map_err(|e| e.to_string())?.is_some() {
                break;
            }
            thread::sleep(Duration::from_millis(5));
        }
        let started = opened.load(Ordering::SeqCst);
        let mut series = Vec::new();
        let mut capped = false;
        if started {
            let t0 = Instant::now();
            // Every half second; the report shows ~1 s, the middle and the end.
            let steps = (self.o.slow_secs * 2.0).ceil() as usize;
            let marks: Vec<f64> = (1..=steps)
                .map(|k| (k as f64 * 0.5).min(self.o.slow_secs))
                .collect();
            let mut next = 0;
            while next < marks.len() {
                thread::sleep(Duration::from_millis(20));
                let el = t0.elapsed().as_secs_f64();
                let Some((rss, hwm)) = rss_kib(pid) else {
                    break;
                };
                if rss > RSS_CAP_KIB {
                    capped = true;
                    series.push((el, rss, hwm));
                    break;
                }
                if el >= marks[next] {
                    series.push((el, rss, hwm));
                    next += 1;
                }
            }
        }
        let alive = child.try_wait().map_err(|e| e.to_string())?.is_none();
        let _ = child.kill();
        let status = child.wait().map_err(|e| e.to_string())?;
        // Unblock a reader still waiting in open() (the client never opened the FIFO).
        if !opened.load(Ordering::SeqCst) {
            let _ = OpenOptions::new()
                .write(true)
                .custom_flags(nix::fcntl::OFlag::O_NONBLOCK.bits())
                .open(&fifo);
        }
        let _ = reader.join();
        let _ = fs::remove_file(&fifo);
        let stderr = fs::read_to_string(self.work.join("slow.stderr")).unwrap_or_default();
        if !started || series.is_empty() {
            return Err(format!(
                "slow-sink download by {} did not run (client exit: {status}): {}",
                c.label(),
                stderr.trim()
            ));
        }
        // A client may end before the deadline (small volume, or a fast sink); its samples
        // up to then still count.
        let ended = (!alive).then(|| format!("ended by itself ({status}): {}", stderr.trim()));
        Ok(SlowResult {
            series,
            read: read.load(Ordering::SeqCst),
            capped,
            ended,
        })
    }

    fn slow(&mut self) -> Res<()> {
        let cases = [
            (Client::Ours, "ours (lv)"),
            (Client::Virsh, "virsh (event loop thread)"),
            (Client::CEv, "C library (python, event loop thread)"),
            (Client::C, "C library (python, no event loop)"),
        ];
        let _ = writeln!(
            self.report,
            "\n### Download into a slow sink: FIFO read at {} MB/s, RSS of the client process\n\n\
             | client | RSS at ~1 s MiB | RSS at ~{:.1} s | RSS at ~{:.0} s | peak (VmHWM) MiB | \
             MB read by the sink |\n|---|---|---|---|---|---|",
            thousands(self.o.slow_rate / MB),
            self.o.slow_secs / 2.0,
            self.o.slow_secs
        );
        let mut json = Vec::new();
        for (c, label) in cases {
            eprintln!("== slow sink: {label}");
            let r = self.slow_once(c)?;
            let col = |k: usize| {
                let want = [1.0, self.o.slow_secs / 2.0, self.o.slow_secs][k];
                let near = r
                    .series
                    .iter()
                    .min_by(|a, b| (a.0 - want).abs().total_cmp(&(b.0 - want).abs()));
                near.map_or("—".into(), |&(t, rss, _)| {
                    format!("{} ({t:.1} s)", f1(rss as f64 / 1024.0))
                })
            };
            let hwm = r.series.iter().map(|s| s.2).max().unwrap_or(0) as f64 / 1024.0;
            eprintln!(
                "   {label}: {:?} (s, VmRSS KiB, VmHWM KiB), sink read {:.0} MB{}",
                r.series,
                r.read as f64 / MB,
                if r.capped { ", CAPPED" } else { "" }
            );
            if let Some(e) = &r.ended {
                eprintln!("   {label}: {e}");
            }
            let _ = writeln!(
                self.report,
                "| {label} | {} | {} | {} | {}{} | {} |",
                col(0),
                col(1),
                col(2),
                f1(hwm),
                match (r.capped, &r.ended) {
                    (true, _) => " (stopped at the 4 GiB cap)",
                    (false, Some(_)) => " (client ended early)",
                    (false, None) => "",
                },
                thousands(r.read as f64 / MB)
            );
            json.push(format!(
                "{{\"client\":{},\"samples\":[{}],\"sink_bytes\":{},\"capped\":{}}}",
                jstr(label),
                r.series
                    .iter()
                    .map(|(t, rss, hwm)| format!("[{},{rss},{hwm}]", jnum(*t)))
                    .collect::<Vec<_>>()
                    .join(","),
                r.read,
                r.capped
            ));
            if c == Client::Ours {
                let mid = self.o.slow_secs / 2.0;
                let first_half = r
                    .series
                    .iter()
                    .min_by(|a, b| (a.0 - mid).abs().total_cmp(&(b.0 - mid).abs()))
                    .map_or(0, |s| s.1);
                let last = r.series.last().map_or(0, |s| s.1);
                let grew = (last as f64 - first_half as f64) / 1024.0;
                let ok = hwm <= 32.0;
                self.targets.push((
                    "download RSS bounded with a slow sink".into(),
                    format!(
                        "peak {hwm:.1} MiB over {:.0} s, RSS {grew:+.1} MiB over the second half \
                         (bound: peak ≤ 32 MiB)",
                        self.o.slow_secs
                    ),
                    Some(ok),
                ));
            }
        }
        let _ = writeln!(
            self.report,
            "\nEach client downloads the volume into a FIFO; a reader thread of the harness \
             drains it at {} MB/s. Samples are `/proc/PID/status` VmRSS at the given seconds \
             after the client opened the FIFO; then the client is killed.",
            thousands(self.o.slow_rate / MB)
        );
        self.json
            .push(format!("\"slow_sink\":[{}]", json.join(",")));
        Ok(())
    }
}

struct SlowResult {
    /// (seconds since the FIFO opened, `VmRSS` KiB, `VmHWM` KiB)
    series: Vec<(f64, u64, u64)>,
    read: u64,
    capped: bool,
    /// Set when the client exited before it was killed.
    ended: Option<String>,
}

fn cmd_line(prog: &str, args: &[&str]) -> String {
    Command::new(prog)
        .args(args)
        .output()
        .ok()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default()
}

fn cpu_model() -> String {
    fs::read_to_string("/proc/cpuinfo")
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("model name"))
        .map(|l| l.trim_start_matches([' ', '\t', ':']).to_string())
        .unwrap_or_default()
}

fn main() -> ExitCode {
    match real_main() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

fn real_main() -> Res<()> {
    let o = Opts::parse()?;
    let lv = find_lv(o.lv.as_deref())?;
    for (what, p) in [
        ("python", &o.python),
        ("/usr/bin/time", &PathBuf::from("/usr/bin/time")),
    ] {
        if !p.is_file() {
            return Err(format!("{what} not found at {}", p.display()));
        }
    }
    for s in ["calls.py", "transfer.py"] {
        if !o.helpers.join(s).is_file() {
            return Err(format!("helper {} missing", o.helpers.join(s).display()));
        }
    }
    let load_start = loadavg();
    let date = utc_now();
    eprintln!(
        "compare: {date}, load average {load_start}, lv = {}",
        lv.display()
    );

    reap_stale(&o.local_dir);
    let work = tempfile::Builder::new()
        .prefix("lv-compare-")
        .tempdir_in(&o.local_dir)
        .map_err(|e| format!("temp dir in {}: {e}", o.local_dir.display()))?;
    fs::write(work.path().join("owner"), std::process::id().to_string())
        .map_err(|e| e.to_string())?;

    eprintln!("== starting a private libvirtd");
    let d = Libvirtd::builder()
        .start()
        .map_err(|e| format!("private libvirtd: {e}"))?;
    if let Some(cpus) = &o.daemon_cpus {
        // -a: every thread, including the worker pool started before we got here.
        let st = Command::new("taskset")
            .args(["-a", "-p", "-c", cpus, &d.pid().to_string()])
            .stdout(Stdio::null())
            .status()
            .map_err(|e| format!("taskset: {e}"))?;
        if !st.success() {
            return Err(format!("taskset -a -p -c {cpus} failed ({st})"));
        }
    }
    if let Some(n) = o.nice {
        // Threads are scheduled one by one: renice every thread of the daemon, and this
        // process's main thread (children and later threads inherit it).
        let mut ids: Vec<String> = fs::read_dir(format!("/proc/{}/task", d.pid()))
            .map_err(|e| e.to_string())?
            .flatten()
            .map(|t| t.file_name().to_string_lossy().into_owned())
            .collect();
        ids.push(std::process::id().to_string());
        let mut cmd = Command::new("renice");
        cmd.args(["-n", &n.to_string(), "-p"]).args(&ids);
        let st = cmd
            .stdout(Stdio::null())
            .status()
            .map_err(|e| format!("renice: {e}"))?;
        if !st.success() {
            return Err(format!("renice -n {n} failed ({st})"));
        }
    }
    let r = with_daemon(&o, &lv, &d, work.path(), &date, &load_start);
    drop(d);
    work.close()
        .map_err(|e| format!("removing temp dir: {e}"))?;
    let (report, json) = r?;
    print!("{report}");
    println!("{json}");
    Ok(())
}

fn with_daemon(
    o: &Opts,
    lv: &Path,
    d: &Libvirtd,
    work: &Path,
    date: &str,
    load_start: &str,
) -> Res<(String, String)> {
    let verr = |e: testbed::libvirtd::LibvirtdError| e.to_string();
    // Our own pool on tmpfs unless --pool-on-disk: the volume's page cache and writeback do
    // not enter the figures.
    let (pool, pool_dir) = if o.pool_on_disk {
        (d.pool_name().to_string(), d.pool_path().to_path_buf())
    } else {
        let dir = work.join("pool");
        fs::create_dir(&dir).map_err(|e| e.to_string())?;
        std::os::unix::fs::chown(&dir, Some(d.user().uid), Some(d.user().gid))
            .map_err(|e| format!("chown {}: {e}", dir.display()))?;
        // The work dir is root's 0700: let the daemon's user through to its pool.
        let mut perm = fs::metadata(work).map_err(|e| e.to_string())?.permissions();
        std::os::unix::fs::PermissionsExt::set_mode(&mut perm, 0o711);
        fs::set_permissions(work, perm).map_err(|e| e.to_string())?;
        d.virsh(&[
            "pool-define-as",
            OWN_POOL,
            "dir",
            "--target",
            &dir.to_string_lossy(),
        ])
        .map_err(verr)?;
        d.virsh(&["pool-start", OWN_POOL]).map_err(verr)?;
        (OWN_POOL.to_string(), dir)
    };
    let xml = format!(
        "<volume><name>{VOL}</name><capacity unit='bytes'>{}</capacity>\
         <allocation>0</allocation><target><format type='raw'/></target></volume>",
        o.mib << 20
    );
    let xml_path = work.join("vol.xml");
    fs::write(&xml_path, xml).map_err(|e| e.to_string())?;
    d.virsh(&["vol-create", &pool, &xml_path.to_string_lossy()])
        .map_err(verr)?;

    let src = work.join("source.bin");
    if !o.skip_transfers || o.serve {
        eprintln!("== writing {} MiB of pseudo-random data", o.mib);
        write_random_file(&src, o.mib)?;
    }
    let tick = cmd_line("getconf", &["CLK_TCK"]).parse().unwrap_or(100.0);
    let mut b = Bench {
        o: o.clone(),
        lv: lv.to_path_buf(),
        virsh: PathBuf::from("/usr/bin/virsh"),
        uri: d.uri(),
        pool: pool.clone(),
        pool_dir,
        daemon_pid: d.pid(),
        tick,
        work: work.to_path_buf(),
        src,
        report: String::new(),
        json: Vec::new(),
        targets: Vec::new(),
    };
    if o.serve {
        println!(
            "URI={}\nPOOL={pool}\nVOL={VOL}\nSRC={}\nWORK={}\nDAEMON_PID={}",
            b.uri,
            b.src.display(),
            b.work.display(),
            b.daemon_pid
        );
        let _ = io::stdout().flush();
        let _ = io::copy(&mut io::stdin(), &mut io::sink());
    }
    let result = (|| {
        if o.serve {
            return Ok(());
        }
        if !b.o.skip_calls {
            b.calls()?;
        }
        if !b.o.skip_transfers {
            b.transfers()?;
        }
        if !b.o.skip_slow {
            b.slow()?;
        }
        Ok::<(), String>(())
    })();
    // Best-effort cleanup; the daemon's and our temp dirs go anyway.
    let _ = d.virsh(&["vol-delete", "--pool", &pool, VOL]);
    if !o.pool_on_disk {
        let _ = d.virsh(&["pool-destroy", OWN_POOL]);
        let _ = d.virsh(&["pool-undefine", OWN_POOL]);
    }
    result?;

    let load_end = loadavg();
    let git = cmd_line(
        "git",
        &[
            "-C",
            env!("CARGO_MANIFEST_DIR"),
            "describe",
            "--always",
            "--dirty",
        ],
    );
    let mut out = String::new();
    let _ = writeln!(
        out,
        "## lv (libvirt-rpc) vs the C library vs virsh — {date}\n\n\
         * host: {} × {}, kernel {}; load average (1/5/15 min) at start {load_start}, at end \
         {load_end}\n\
         * daemon: private session libvirtd {} ({}), {}{}\n\
         * ours: `{}` (built {}; tree {git}); C library: libvirt {} via /usr/bin/python3 + python3-libvirt; \
         virsh {}\n\
         * figures: median (min–max) of the runs{}",
        cpu_model(),
        thread::available_parallelism().map_or(0, std::num::NonZero::get),
        cmd_line("uname", &["-r"]),
        cmd_line("libvirtd", &["--version"])
            .rsplit(' ')
            .next()
            .unwrap_or(""),
        o.daemon_cpus.as_ref().map_or_else(
            || "testbed, pinned to CPU 0".to_string(),
            |c| format!("testbed, re-pinned to CPUs {c}")
        ),
        if o.pool_on_disk {
            "volume in the testbed's disk pool"
        } else {
            "volume in a dir pool on tmpfs; local files on tmpfs"
        },
        o.client_cpu
            .as_ref()
            .map_or(String::new(), |c| format!("; clients pinned to CPU {c}")),
        lv.display(),
        fs::metadata(lv)
            .and_then(|m| m.modified())
            .map_or_else(|_| "?".into(), fmt_utc),
        cmd_line(
            &o.python.to_string_lossy(),
            &[
                "-c",
                "import libvirt; v = libvirt.getVersion(); print(f'{v//1000000}.{v//1000%1000}.{v%1000}')"
            ]
        ),
        cmd_line("virsh", &["--version"]),
        o.nice.map_or(String::new(), |n| format!(
            "; daemon and clients ran at nice {n} (`--nice {n}`)"
        )),
    );
    out.push_str(&b.report);
    let _ = writeln!(
        out,
        "\n### Targets\n\n| target | measured | met? |\n|---|---|---|"
    );
    for (t, m, ok) in &b.targets {
        let _ = writeln!(
            out,
            "| {t} | {m} | {} |",
            match ok {
                Some(true) => "yes",
                Some(false) => "**no**",
                None => "—",
            }
        );
    }
    let json = format!(
        "{{\"date\":{},\"load_start\":{},\"load_end\":{},\"tree\":{},\"pool_on_tmpfs\":{},{},\
         \"targets\":[{}]}}",
        jstr(date),
        jstr(load_start),
        jstr(&load_end),
        jstr(&git),
        !o.pool_on_disk,
        b.json.join(","),
        b.targets
            .iter()
            .map(|(t, m, ok)| format!(
                "{{\"target\":{},\"measured\":{},\"met\":{}}}",
                jstr(t),
                jstr(m),
                ok.map_or("null".into(), |b| b.to_string())
            ))
            .collect::<Vec<_>>()
            .join(",")
    );
    Ok((out, json))
}
