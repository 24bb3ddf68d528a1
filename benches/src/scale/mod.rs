//! `scale`: what the client costs as the work grows — thousands of domains, bulk statistics,
//! process start to first answer, many connections and their events — `lv` and our library
//! side by side with virsh and the C library (python3-libvirt) on the same private daemons,
//! in one run, rounds alternating which client goes first.
//!
//! ```text
//! cargo build --release -p examples --bin lv -p benches --bin scale --bin fanin
//! target/release/scale [--domains 100,1000,2000] [--rounds 5] [--only list,domstats,…]
//! ```
//!
//! Sections (`--only` picks some; all by default), in run order:
//!
//! * `growth` (`growth`): the domains are defined in steps (`--domains`, through the
//!   library, many calls in flight); at each step `lv list --all`, `lv domstats`, `virsh list
//!   --all` and `virsh domstats`: wall time, client CPU, peak RSS.
//! * `list`, `domstats` (`wall`): at the last step, `--rounds` alternating rounds of `lv`
//!   against virsh; every output is compared with virsh's byte for byte.
//! * `bulk` (`wall`): `lv bench-stats` against `benches/compare/stats.py` (the C library's
//!   `getAllDomainStats`): calls/s over every domain, client CPU per domain.
//! * `idle` (`fanin`): 10, 100, 1,000 idle connections (`--idle`) in one process, ours
//!   (`fanin`) and the C library's (`fanin.py`): time to open them, peak RSS.
//! * `connect` (`connect`): process start → connect → one call → exit, `lv version` against
//!   `virsh version` over unix, TLS and an SSH exec channel.
//! * `events` (`fanin`): `--event-daemons` more daemons, `--event-conns` connections to each
//!   in one subscriber process; `--event-domains` domains defined and undefined across the
//!   daemons; every lifecycle event must reach every connection once; latency and client
//!   CPU per event.
//!
//! Daemons: private session libvirtds from the testbed (one for domains, idle connections and
//! connect latency, with a TLS listener and an sshd in front; more for the events), every
//! thread unpinned (all CPUs, as production runs). Progress on stderr; stdout gets a
//! markdown report and, last, one JSON line. The plot (`--plot`, default
//! `docs/benchmarks-growth.svg`) is drawn from this run's growth figures (`plot`).

#![allow(clippy::cast_precision_loss)] // counts and bytes far below 2^52.
// Pairs of clients and their runs read best as (a, b), (x, y).
#![allow(clippy::many_single_char_names)]

mod connect;
mod domains;
mod fanin;
mod growth;
mod plot;
mod run;
mod wall;

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Parser;
use testbed::libvirtd::Libvirtd;
use testbed::pki::ServerCert;

use crate::compare::measure::{cmd_line, cpu_model, loadavg, tree, utc_now};

type Res<T> = Result<T, String>;

const SECTIONS: [&str; 7] = [
    "growth", "list", "domstats", "bulk", "idle", "connect", "events",
];

/// Thousands of domains, bulk stats, connect latency, event fan-in and growth: `lv` and our
/// library against virsh and the C library on the same private daemons.
#[derive(Debug, Clone, Parser)]
#[command(name = "scale")]
pub(crate) struct Opts {
    /// The `lv` to measure (default: next to this binary).
    #[arg(long, value_name = "PATH")]
    pub lv: Option<PathBuf>,
    /// python3 with python3-libvirt (the C library's side).
    #[arg(long, value_name = "PATH", default_value = "/usr/bin/python3")]
    pub python: PathBuf,
    /// Where `stats.py` and `fanin.py` are.
    #[arg(long, value_name = "DIR", default_value_os_t = Path::new(env!("CARGO_MANIFEST_DIR")).join("compare"))]
    pub helpers: PathBuf,
    /// The domain counts of the growth steps; the last is the one `list`, `domstats` and
    /// `bulk` measure.
    #[arg(
        long,
        value_name = "N,…",
        default_value = "100,1000,2000",
        value_delimiter = ','
    )]
    pub domains: Vec<usize>,
    /// Alternating rounds of `list`, `domstats` and `bulk` (lv first in even rounds).
    #[arg(long, value_name = "N", default_value_t = 5)]
    pub rounds: usize,
    /// Rounds at each growth step.
    #[arg(long, value_name = "N", default_value_t = 3)]
    pub growth_rounds: usize,
    /// Calls per `bulk` run.
    #[arg(long, value_name = "N", default_value_t = 20)]
    pub bulk_calls: usize,
    /// The groups of each `bulk` measurement (`virDomainStatsTypes` bits; 0: all, what an
    /// exporter reads; 1: the state alone, what `list` needs). The first is judged against
    /// the target.
    #[arg(
        long,
        value_name = "BITS,…",
        default_value = "0,1",
        value_delimiter = ','
    )]
    pub bulk_stats: Vec<u32>,
    /// Alternating rounds per transport of `connect`.
    #[arg(long, value_name = "N", default_value_t = 15)]
    pub connect_rounds: usize,
    /// Idle connection counts.
    #[arg(
        long,
        value_name = "N,…",
        default_value = "10,100,1000",
        value_delimiter = ','
    )]
    pub idle: Vec<usize>,
    /// Daemons of the event fan-in.
    #[arg(long, value_name = "N", default_value_t = 4)]
    pub event_daemons: usize,
    /// Subscriber connections to each event daemon.
    #[arg(long, value_name = "N", default_value_t = 25)]
    pub event_conns: usize,
    /// Domains defined and undefined across the event daemons per round.
    #[arg(long, value_name = "N", default_value_t = 2000)]
    pub event_domains: usize,
    /// Rounds of the event fan-in (ours and the C library's per round).
    #[arg(long, value_name = "N", default_value_t = 2)]
    pub event_rounds: usize,
    /// Only these sections (growth, list, domstats, bulk, idle, connect, events).
    #[arg(long, value_name = "S,…", value_delimiter = ',')]
    pub only: Vec<String>,
    /// Start the main daemon (TLS listener, sshd in front), print how to reach it (`UNIX=`,
    /// `TLS=`, `SSH_CONFIG=`, `SSH=` for lv with `-F`, `SSH_VIRSH=`, `DAEMON_PID=`), wait for
    /// stdin to close: for strace, perf and ltrace by hand.
    #[arg(long)]
    pub serve: bool,
    /// Where the growth plot goes.
    #[arg(long, value_name = "FILE", default_value_os_t = Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/benchmarks-growth.svg"))]
    pub plot: PathBuf,
}

impl Opts {
    fn wants(&self, s: &str) -> bool {
        self.only.is_empty() || self.only.iter().any(|o| o == s)
    }
}

/// A target, what was measured, whether it was met (`None`: not judged).
#[derive(Debug, Clone, serde::Serialize)]
#[allow(clippy::struct_field_names)] // `target` is the JSON field's name
pub(crate) struct Target {
    pub target: String,
    pub measured: String,
    pub met: Option<bool>,
}

/// The run: options, programs, the main daemon, and what was found.
pub(crate) struct Scale {
    pub o: Opts,
    pub lv: PathBuf,
    pub work: tempfile::TempDir,
    pub report: String,
    pub targets: Vec<Target>,
    pub json: serde_json::Map<String, serde_json::Value>,
    /// Growth figures for the plot.
    pub growth: Vec<growth::Step>,
    pub idle: Vec<growth::IdleStep>,
}

impl Scale {
    pub fn target(&mut self, target: &str, measured: String, met: Option<bool>) {
        self.targets.push(Target {
            target: target.to_string(),
            measured,
            met,
        });
    }

    pub fn py(&self, script: &str) -> PathBuf {
        self.o.helpers.join(script)
    }

    /// A section's heading with the load average now.
    pub fn section(&mut self, title: &str) {
        eprintln!("== {title} (load {})", loadavg());
        let _ = writeln!(
            self.report,
            "\n### {title}\n\nStarted {}, load average {}.\n",
            utc_now(),
            loadavg()
        );
    }
}

/// `CPUS`: every CPU of the box, in taskset's syntax.
pub(crate) fn all_cpus() -> String {
    let n = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
    if n > 1 {
        format!("0-{}", n - 1)
    } else {
        "0".into()
    }
}

/// Re-pin every thread of `pid` to every CPU (the testbed pins its daemons to one).
pub(crate) fn unpin(pid: u32) -> Res<()> {
    let st = std::process::Command::new("taskset")
        .args(["-a", "-p", "-c", &all_cpus(), &pid.to_string()])
        .stdout(std::process::Stdio::null())
        .status()
        .map_err(|e| format!("taskset: {e}"))?;
    if st.success() {
        Ok(())
    } else {
        Err(format!("taskset -a -p failed ({st})"))
    }
}

/// A private daemon for many clients and domains, unpinned.
pub(crate) fn daemon(tls: bool) -> Res<Libvirtd> {
    let mut b = Libvirtd::builder()
        .config_line("max_clients = 5000")
        .config_line("max_anonymous_clients = 5000");
    if tls {
        b = b.tls(ServerCert::default());
    }
    let d = b.start().map_err(|e| format!("private libvirtd: {e}"))?;
    unpin(d.pid())?;
    Ok(d)
}

/// The `scale` binary.
pub fn main() -> ExitCode {
    let o = Opts::parse();
    match real_main(o) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

fn real_main(o: Opts) -> Res<()> {
    if let Some(bad) = o.only.iter().find(|s| !SECTIONS.contains(&s.as_str())) {
        return Err(format!(
            "unknown section {bad} (sections: {})",
            SECTIONS.join(", ")
        ));
    }
    if o.domains.is_empty() || o.rounds == 0 {
        return Err("--domains and --rounds need at least one".into());
    }
    let here = std::env::current_exe().map_err(|e| e.to_string())?;
    let lv = o.lv.clone().unwrap_or_else(|| here.with_file_name("lv"));
    for p in [&lv, &here.with_file_name("fanin"), &o.python] {
        if !p.is_file() {
            return Err(format!(
                "{} not found (cargo build --release -p examples --bin lv -p benches --bin \
                 scale --bin fanin)",
                p.display()
            ));
        }
    }
    let _ =
        nix::sys::resource::setrlimit(nix::sys::resource::Resource::RLIMIT_NOFILE, 20_000, 20_000);
    let date = utc_now();
    let load_start = loadavg();
    let work = tempfile::Builder::new()
        .prefix("lv-scale-")
        .tempdir()
        .map_err(|e| e.to_string())?;
    let mut s = Scale {
        o,
        lv,
        work,
        report: String::new(),
        targets: Vec::new(),
        json: serde_json::Map::new(),
        growth: Vec::new(),
        idle: Vec::new(),
    };
    eprintln!("scale: {date}, load average {load_start}");
    let d = daemon(true)?;
    if s.o.serve {
        let e = connect::endpoints(&d, s.work.path())?;
        println!(
            "UNIX={}\nTLS={}\nSSH_CONFIG={}\nSSH={}\nSSH_VIRSH={}\nDAEMON_PID={}",
            e.unix,
            e.tls,
            e.ssh_config,
            e.ssh_ours,
            e.ssh_virsh,
            d.pid()
        );
        let _ = std::io::Write::flush(&mut std::io::stdout());
        let _ = std::io::Read::read_to_end(&mut std::io::stdin(), &mut Vec::new());
        return Ok(());
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    growth::domains_and_growth(&mut s, &rt, &d)?;
    if s.o.wants("list") || s.o.wants("domstats") || s.o.wants("bulk") {
        wall::headline(&mut s, &d)?;
    }
    if s.o.wants("idle") {
        growth::idle(&mut s, &d)?;
    }
    if s.o.wants("connect") {
        connect::latency(&mut s, &d)?;
    }
    let n = s.o.domains.last().copied().unwrap_or(0);
    eprintln!("== undefining the {n} domains");
    rt.block_on(domains::undefine_all(&d.uri()))?;
    drop(d);
    if s.o.wants("events") {
        fanin::events(&mut s, &rt)?;
    }
    if !s.growth.is_empty() || !s.idle.is_empty() {
        plot::draw(&s.o.plot, &s.growth, &s.idle)?;
        let _ = writeln!(s.report, "\nPlot: `{}`.", s.o.plot.display());
    }
    let load_end = loadavg();
    let tree = tree();
    print!(
        "## scale — {date}\n\n* host: {} × {}; load average at start {load_start}, at end \
         {load_end}\n* tree {tree}; lv `{}`; virsh {}; the C library through python3-libvirt\n\
         * daemons: private session libvirtd {}, unpinned (all CPUs)\n* figures: median \
         (min–max) of the rounds; ratios: ours ÷ theirs, median of the rounds (min–max)\n",
        cpu_model(),
        std::thread::available_parallelism().map_or(0, std::num::NonZero::get),
        s.lv.display(),
        cmd_line("virsh", &["--version"]),
        cmd_line("libvirtd", &["--version"])
            .rsplit(' ')
            .next()
            .unwrap_or(""),
    );
    print!("{}", s.report);
    println!("\n### Targets\n\n| target | measured | met? |\n|---|---|---|");
    for t in &s.targets {
        let met = match t.met {
            Some(true) => "yes",
            Some(false) => "**no**",
            None => "—",
        };
        println!("| {} | {} | {met} |", t.target, t.measured);
    }
    s.json.insert("date".into(), date.into());
    s.json.insert("load_start".into(), load_start.into());
    s.json.insert("load_end".into(), load_end.into());
    s.json.insert("tree".into(), tree.into());
    s.json.insert(
        "targets".into(),
        serde_json::to_value(&s.targets).map_err(|e| e.to_string())?,
    );
    println!(
        "{}",
        serde_json::to_string(&s.json).map_err(|e| e.to_string())?
    );
    Ok(())
}
