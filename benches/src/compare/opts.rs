//! The command line (clap) and finding `lv`.

use std::path::{Path, PathBuf};

use clap::Parser;

use super::Res;
use super::stats::MB;

const NOTES: &str = "\
--nice N: run the daemon (all its threads) and every client at nice N (e.g. -10) so that
          other work on the box disturbs the figures less; both sides get the same priority.
--daemon-cpus LIST: re-pin every daemon thread to LIST (taskset syntax, e.g. 0-1) after start;
          the testbed pins it to one CPU (see testbed::libvirtd), a production daemon is not.
--busy-poll-rounds N: busy-poll on ÷ off per round, beside off ÷ off (the same client twice):
          a single run slower than off is only a finding if the A/A pair shows fewer such runs.
--counts: instructions/syscalls/context switches per sequential call instead of timings
          (valgrind --tool=callgrind, strace -c -f, perf stat); repeatable on a loaded box.
--serve:  start the daemon, create pool, volume and source file, print them, and wait for
          stdin to close (for perf/strace by hand); then clean up.
Build lv first: cargo build --release -p examples --bin lv";

/// Our client (`lv`) side by side with virsh and the C library (python3-libvirt) on one
/// private libvirtd. Progress goes to stderr; stdout gets a markdown report and, as its last
/// line, one JSON object with every sample.
#[derive(Debug, Clone, Parser)]
#[command(name = "compare", after_help = NOTES)]
pub(super) struct Opts {
    /// The `lv` to measure (default: `lv` next to this binary, else
    /// `$CARGO_TARGET_DIR/release/lv`).
    #[arg(long, value_name = "PATH")]
    pub lv: Option<PathBuf>,
    /// python3 with python3-libvirt (the C library's side).
    #[arg(long, value_name = "PATH", default_value = "/usr/bin/python3")]
    pub python: PathBuf,
    /// Where `calls.py` and `transfer.py` are.
    #[arg(long, value_name = "DIR", default_value_os_t = Path::new(env!("CARGO_MANIFEST_DIR")).join("compare"))]
    pub helpers: PathBuf,
    /// Runs of each measurement (interleaved or rotating between clients).
    #[arg(long, value_name = "N", default_value = "3", value_parser = count::<usize>)]
    pub reps: usize,
    /// Calls per calls run.
    #[arg(long, value_name = "N", default_value = "30000", value_parser = count::<usize>)]
    pub calls: usize,
    /// Calls in flight (tasks, threads) in the concurrent calls runs.
    #[arg(long, value_name = "N", default_value = "8", value_parser = count::<usize>)]
    pub threads: usize,
    /// Size of the transferred volume, MiB.
    #[arg(long, value_name = "N", default_value = "512", value_parser = count::<u64>)]
    pub mib: u64,
    /// How fast the slow sink drains, MB/s (10^6 bytes).
    #[arg(long = "slow-rate-mb", value_name = "N", default_value = "20", value_parser = positive)]
    pub slow_rate_mb: f64,
    /// How long the slow-sink download runs, seconds.
    #[arg(long, value_name = "N", default_value = "5", value_parser = positive)]
    pub slow_secs: f64,
    /// Where the work dir goes (default: /dev/shm if it exists, else the temp dir).
    #[arg(long, value_name = "DIR")]
    local_dir: Option<PathBuf>,
    /// Use the testbed's pool on disk instead of a dir pool on tmpfs.
    #[arg(long)]
    pub pool_on_disk: bool,
    /// Run every client under `taskset -c CPU`.
    #[arg(long, value_name = "CPU")]
    pub client_cpu: Option<String>,
    /// Re-pin every daemon thread to LIST (`taskset -a`).
    #[arg(long, value_name = "LIST")]
    pub daemon_cpus: Option<String>,
    /// Skip the calls measurement.
    #[arg(long)]
    pub skip_calls: bool,
    /// Busy-poll on against off in N short interleaved rounds per schedule and mode, with an
    /// A/A control (off against off) that shows the daemon's own round-to-round noise; 0: not
    /// run.
    #[arg(long, value_name = "N", default_value = "0")]
    pub busy_poll_rounds: usize,
    /// Calls per run in the busy-poll rounds (sequential; 8 in flight runs twice as many).
    #[arg(long, value_name = "N", default_value = "10000", value_parser = count::<usize>)]
    pub busy_poll_calls: usize,
    /// Skip the transfers.
    #[arg(long)]
    pub skip_transfers: bool,
    /// Skip the slow-sink download.
    #[arg(long)]
    pub skip_slow: bool,
    /// An extra line for the daemon's libvirtd.conf (repeatable), e.g.
    /// `--daemon-conf 'max_client_requests = 16'`.
    #[arg(long, value_name = "LINE")]
    pub daemon_conf: Vec<String>,
    /// Renice the daemon's threads and this process (hence every client) to N.
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    pub nice: Option<i32>,
    /// Set up, print what was set up, wait for stdin to close, clean up.
    #[arg(long)]
    pub serve: bool,
    /// Instead of the timed runs: instructions (callgrind), syscalls (strace -c -f) and
    /// context switches (perf stat) per sequential call, for ours, the C library and the
    /// floor (needs valgrind, strace, perf).
    #[arg(long)]
    pub counts: bool,
    /// Calls per process in the two `--counts` runs (the difference is divided out).
    #[arg(long, value_name = "LO,HI", default_value = "1000,5000", value_parser = lo_hi)]
    pub count_calls: (usize, usize),
    /// Repetitions of each `--counts` measurement.
    #[arg(long, value_name = "N", default_value = "2", value_parser = count::<usize>)]
    pub count_reps: usize,
}

impl Opts {
    /// The command line; exits with clap's message on a bad one.
    pub fn from_args() -> Self {
        let mut o = Self::parse();
        o.reps = o.reps.max(1);
        o
    }

    /// Bytes per second the slow sink drains.
    pub fn slow_rate(&self) -> f64 {
        self.slow_rate_mb * MB
    }

    /// `--local-dir`, else /dev/shm, else the temp dir.
    pub fn local_dir(&self) -> PathBuf {
        let shm = Path::new("/dev/shm");
        self.local_dir.clone().unwrap_or_else(|| {
            if shm.is_dir() {
                shm.into()
            } else {
                std::env::temp_dir()
            }
        })
    }
}

/// A positive number (fractions allowed, as before: `--slow-secs 2.5`).
fn positive(s: &str) -> Result<f64, String> {
    s.parse::<f64>()
        .ok()
        .filter(|v| *v > 0.0)
        .ok_or_else(|| format!("not a positive number: {s}"))
}

/// A positive count; a fraction is truncated (`3e4` is 30000).
fn count<T: TryFrom<u64>>(s: &str) -> Result<T, String> {
    let v = positive(s)?;
    T::try_from(v as u64).map_err(|_| format!("too large: {s}"))
}

/// `LO,HI` with `LO < HI`.
fn lo_hi(s: &str) -> Result<(usize, usize), String> {
    let (a, b) = s.split_once(',').ok_or_else(|| format!("not LO,HI: {s}"))?;
    let a: usize = count(a)?;
    let b: usize = count(b)?;
    if a >= b {
        return Err(format!("LO must be below HI: {s}"));
    }
    Ok((a, b))
}

/// `--lv`, else `lv` next to this binary (same target dir), else `$CARGO_TARGET_DIR/release/lv`.
pub(super) fn find_lv(opt: Option<&Path>) -> Res<PathBuf> {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_documented_command_lines_parse() {
        let o = Opts::try_parse_from(["compare"]).unwrap();
        assert_eq!((o.reps, o.calls, o.threads, o.mib), (3, 30_000, 8, 512));
        assert!((o.slow_rate() - 20e6).abs() < 1.0);
        let o = Opts::try_parse_from([
            "compare",
            "--lv",
            "./target/release/lv",
            "--nice",
            "-10",
            "--client-cpu",
            "1",
            "--skip-slow",
            "--reps",
            "0.5",
            "--calls",
            "3e4",
            "--slow-secs",
            "2.5",
        ])
        .unwrap();
        assert_eq!(o.nice, Some(-10));
        assert_eq!(o.client_cpu.as_deref(), Some("1"));
        assert!(o.skip_slow && !o.skip_calls);
        assert_eq!(o.calls, 30_000);
        assert!((o.slow_secs - 2.5).abs() < 1e-9);
        assert!(Opts::try_parse_from(["compare", "--reps", "0"]).is_err());
        let o = Opts::try_parse_from(["compare", "--counts", "--count-calls", "200,1200"]).unwrap();
        assert!(o.counts);
        assert_eq!((o.count_calls, o.count_reps), ((200, 1200), 2));
        assert!(Opts::try_parse_from(["compare", "--count-calls", "5,5"]).is_err());
        assert!(Opts::try_parse_from(["compare", "--bogus"]).is_err());
    }
}
