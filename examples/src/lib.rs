//! Shared plumbing of the command-line tools: default URI, a global deadline and signal
//! handling that close the connection through the library's own close path, progress bars,
//! the libraries' warnings on stderr.

pub mod console;

use std::future::Future;
use std::process::ExitCode;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};
use libvirt_remote::Client;

/// Prints the libraries' log events on stderr, as virsh prints libvirt's: warnings (a TLS
/// certificate or host key not verified, a host key added to `known_hosts`, `ssh_config`
/// options not applied, …) by default, only errors with `quiet` (`-q`).
/// `LIBVIRT_DEBUG` (virsh's variable: `1`/`debug`, `2`/`info`, `3`/`warning`, `4`/`error`)
/// sets the level instead.
pub fn init_logging(quiet: bool) {
    use tracing::Level;
    let level = match std::env::var("LIBVIRT_DEBUG").ok().as_deref() {
        Some("1" | "debug") => Level::DEBUG,
        Some("2" | "info") => Level::INFO,
        Some("3" | "warning") => Level::WARN,
        Some("4" | "error") => Level::ERROR,
        _ if quiet => Level::ERROR,
        _ => Level::WARN,
    };
    let _ = tracing_subscriber::fmt()
        .with_max_level(level)
        .with_writer(std::io::stderr)
        .without_time()
        .with_target(false)
        .try_init();
}

/// The URI libvirt picks when none is given: `$LIBVIRT_DEFAULT_URI`, then libvirt.conf's
/// `uri_default`, then `qemu:///system` for root and `qemu:///session` otherwise (the
/// library's [`libvirt_remote::client::uri::default_uri`]).
pub fn default_uri() -> String {
    libvirt_remote::client::uri::default_uri()
}

/// The connection a command opened, so the deadline and signal paths can close it.
#[derive(Clone, Default)]
pub struct Slot(Arc<OnceLock<Client>>);

impl Slot {
    /// Remember the client.
    pub fn set(&self, c: &Client) {
        let _ = self.0.set(c.clone());
    }

    fn close(&self) {
        if let Some(c) = self.0.get() {
            c.close();
        }
    }
}

/// Exit code for a command that ran out of time (like `timeout(1)`).
pub const EXIT_TIMEOUT: u8 = 124;

/// Run `work` under an optional deadline and SIGINT/SIGTERM. On expiry or a signal, the
/// connection in `slot` is closed through [`Client::close`] (which never waits for the peer)
/// and the process exits at once, whatever the peer or the work is doing.
///
/// `work` runs on the calling thread; spawned tasks (the connection's driver, `lv
/// bench-calls`' callers) on `workers` runtime threads (`None`: tokio's default, one per CPU
/// the process may run on; `Some(0)`: none, everything on a current-thread runtime, what a
/// command of a few calls starts fastest on). `LV_WORKER_THREADS` in the environment
/// overrides it (a measurement knob: docs/benchmarks.md, "A current-thread runtime").
pub fn run_bounded<F>(
    timeout: Option<Duration>,
    slot: &Slot,
    workers: Option<usize>,
    work: F,
) -> ExitCode
where
    F: Future<Output = Result<(), String>>,
{
    let workers = std::env::var("LV_WORKER_THREADS")
        .ok()
        .and_then(|v| v.parse().ok())
        .or(workers);
    let mut rt = if workers == Some(0) {
        tokio::runtime::Builder::new_current_thread()
    } else {
        tokio::runtime::Builder::new_multi_thread()
    };
    if let Some(n) = workers.filter(|&n| n > 0) {
        rt.worker_threads(n);
    }
    let rt = rt.enable_all().build().expect("tokio runtime");
    let code = rt.block_on(async {
        let deadline = async {
            match timeout {
                Some(t) => tokio::time::sleep(t).await,
                None => std::future::pending().await,
            }
        };
        let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
            .expect("SIGTERM handler");
        tokio::select! {
            r = work => match r {
                Ok(()) => 0,
                Err(e) => {
                    eprintln!("error: {e}");
                    1
                }
            },
            () = deadline => {
                slot.close();
                eprintln!("error: timed out after {:?}; connection closed", timeout.unwrap_or_default());
                EXIT_TIMEOUT
            }
            _ = tokio::signal::ctrl_c() => {
                slot.close();
                eprintln!("error: interrupted; connection closed");
                130
            }
            _ = term.recv() => {
                slot.close();
                eprintln!("error: terminated; connection closed");
                143
            }
        }
    });
    if code == 0 {
        rt.shutdown_timeout(Duration::from_secs(1));
        return ExitCode::SUCCESS;
    }
    // Do not wait for blocked file I/O or a wedged peer: the connection is already closed.
    std::process::exit(i32::from(code));
}

/// A byte progress bar on stderr; hidden unless both stdout and stderr are terminals (so a
/// script or a pipe sees no bar).
pub fn progress_bar(total: u64, what: &str) -> ProgressBar {
    let pb = ProgressBar::new(total);
    pb.set_style(
        ProgressStyle::with_template(
            "{msg} [{bar:30}] {bytes}/{total_bytes} {binary_bytes_per_sec} eta {eta}",
        )
        .expect("valid template")
        .progress_chars("=> "),
    );
    pb.set_message(what.to_string());
    if !std::io::IsTerminal::is_terminal(&std::io::stdout()) {
        pb.set_draw_target(indicatif::ProgressDrawTarget::hidden());
    }
    pb
}
