//! `compare`: our client (`lv`, built on `libvirt-remote`) side by side with virsh and with the C
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
//!    call (fixed start-up cost subtracted) and the daemon's CPU per call (`calls`).
//! 2. Upload and download of a `--mib` volume by `lv`, `virsh -t` and `transfer.py` (the C
//!    library through `stream.sendAll`/`recvAll`, 262,120-byte chunks like virsh; without and
//!    with libvirt's event loop thread). MB/s over the transfer proper (virsh's `--timing`,
//!    the helper's own timer, `lv`'s wall time minus its fixed cost), client CPU (user+sys from
//!    `getrusage(RUSAGE_CHILDREN)` deltas) and peak RSS (`/usr/bin/time %M`, i.e. `wait4`'s
//!    `ru_maxrss`) of each client process. Every copy is verified outside the timing
//!    (`transfers`).
//! 3. Download into a FIFO drained at `--slow-rate-mb` for `--slow-secs`: the client's RSS
//!    (`slow`).
//!
//! Progress goes to stderr; stdout gets a markdown report and, as its last line, one JSON
//! object with every sample (`json`). Nothing is left behind: the volume and pool live in
//! temp dirs, the daemon dies on drop. A run killed by a signal may leave
//! `/dev/shm/lv-compare-*`; the next run removes those whose owner pid is gone. Method and
//! results: `docs/benchmarks-compare.md`.
//!
//! Modules: `opts` (clap), `bench` (clients, one process run), `calls`,
//! `transfers`, `slow`, `measure` (/proc, rusage, host facts, UTC), `stats`,
//! `files`, `json` (serde).

#![allow(clippy::cast_precision_loss)] // byte counts and call counts far below 2^52.

mod bench;
mod busy_poll;
mod calls;
mod counts;
mod files;
mod json;
pub(crate) mod measure;
mod opts;
mod slow;
pub(crate) mod stats;
mod transfers;

use std::fmt::Write as _;
use std::fs;
use std::io::{self, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::thread;

use testbed::libvirtd::{Libvirtd, LibvirtdBuilder};

use bench::{Bench, VOL};
use files::{reap_stale, write_random_file};
use measure::{cmd_line, cpu_model, fmt_utc, loadavg, tree, utc_now};
use opts::{Opts, find_lv};

type Res<T> = Result<T, String>;

/// Our own dir pool on tmpfs (unless `--pool-on-disk`).
const OWN_POOL: &str = "cmppool";

/// The `compare` binary: parses the command line, runs, prints the report and the JSON line.
pub fn main() -> ExitCode {
    match real_main(&Opts::from_args()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

fn real_main(o: &Opts) -> Res<()> {
    let lv = find_lv(o.lv.as_deref())?;
    for (what, p) in [
        ("python", &o.python),
        ("/usr/bin/time", &PathBuf::from("/usr/bin/time")),
    ] {
        if !p.is_file() {
            return Err(format!("{what} not found at {}", p.display()));
        }
    }
    let missing = counts::tools_missing();
    if o.counts && !missing.is_empty() {
        return Err(format!("--counts needs {}", missing.join(", ")));
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

    let local_dir = o.local_dir();
    reap_stale(&local_dir);
    let work = tempfile::Builder::new()
        .prefix("lv-compare-")
        .tempdir_in(&local_dir)
        .map_err(|e| format!("temp dir in {}: {e}", local_dir.display()))?;
    fs::write(work.path().join("owner"), std::process::id().to_string())
        .map_err(|e| e.to_string())?;

    eprintln!("== starting a private libvirtd");
    let d = o
        .daemon_conf
        .iter()
        .fold(Libvirtd::builder(), LibvirtdBuilder::config_line)
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
    let r = with_daemon(o, &lv, &d, work.path(), &date, &load_start);
    drop(d);
    work.close()
        .map_err(|e| format!("removing temp dir: {e}"))?;
    let (report, json) = r?;
    print!("{report}");
    println!("{json}");
    Ok(())
}

/// Pool, volume and source file; the measurements; then the report and the JSON line.
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
    if (!o.skip_transfers && !o.counts) || o.serve {
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
        socket: d.socket_path().to_path_buf(),
        tick,
        work: work.to_path_buf(),
        src,
        report: String::new(),
        calls: None,
        transfers: None,
        slow_sink: None,
        counts: None,
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
        if o.counts {
            return b.counts();
        }
        if !b.o.skip_calls {
            b.calls()?;
        }
        if b.o.busy_poll_rounds > 0 {
            b.busy_poll_rounds()?;
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
    let git = tree();
    let mut out = header(o, lv, date, load_start, &load_end, &git);
    out.push_str(&b.report);
    let _ = writeln!(
        out,
        "\n### Targets\n\n| target | measured | met? |\n|---|---|---|"
    );
    for t in &b.targets {
        let _ = writeln!(
            out,
            "| {} | {} | {} |",
            t.target,
            t.measured,
            match t.met {
                Some(true) => "yes",
                Some(false) => "**no**",
                None => "—",
            }
        );
    }
    let json = serde_json::to_string(&json::Report {
        date,
        load_start,
        load_end: &load_end,
        tree: &git,
        pool_on_tmpfs: !o.pool_on_disk,
        calls: b.calls.as_ref(),
        transfers: b.transfers.as_ref(),
        slow_sink: b.slow_sink.as_deref(),
        counts: b.counts.as_ref(),
        targets: &b.targets,
    })
    .map_err(|e| format!("writing the JSON line: {e}"))?;
    Ok((out, json))
}

/// The report's heading: when, on what, against which versions.
fn header(o: &Opts, lv: &Path, date: &str, load_start: &str, load_end: &str, git: &str) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "## lv (libvirt-remote) vs the C library vs virsh — {date}\n\n\
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
    out
}
