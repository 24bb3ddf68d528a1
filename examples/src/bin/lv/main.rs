//! `lv`: a pure-Rust virsh. The commands a virsh user types daily, with virsh's names,
//! positional arguments and output (`lv list --all`, `lv dominfo NAME`, `lv vol-list POOL`, …),
//! plus a few of our own (`bench-calls`, `event --kind`). `lv help` lists them.
//!
//! One module per command family; each command's libvirt calls sit in small functions of
//! [`lookup`] and the family modules, so moving them to object handles is mechanical.

// Doc comments below are clap's help text, read in a terminal: no Markdown there.
#![allow(clippy::doc_markdown)]

mod bench;
mod domain;
mod event;
mod host;
mod lookup;
mod network;
mod stats;
mod storage;
mod table;
mod xmlcmds;

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::{Parser, Subcommand};
use examples::{Slot, default_uri, run_bounded};
use libvirt_remote::Connect;
use libvirt_remote::client::ConnectOptions;
use libvirt_remote::conn::handshake::HandshakeOptions;
use libvirt_remote::conn::reconnect::ReconnectPolicy;
use libvirt_remote::ssh_socket::SshConfigFile;

/// `-q`: no table headers, no confirmations, no footer (virsh's quiet mode).
pub static QUIET: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Whether `-q` is on.
pub fn quiet() -> bool {
    QUIET.load(std::sync::atomic::Ordering::Relaxed)
}

/// A confirmation (`Domain 'x' started`): printed unless `-q`, like virsh's `vshPrintExtra`.
#[macro_export]
macro_rules! say {
    ($($t:tt)*) => {
        if !$crate::quiet() {
            print!($($t)*);
        }
    };
}

/// What a command returns: its error is printed as `error: …` (libvirt's message included).
pub type R<T = ()> = Result<T, String>;

/// A failed call, from the raw client ([`libvirt_remote::conn::CallError`]) or from a handle method
/// ([`libvirt_remote::Error`]).
pub trait Failure: std::fmt::Display {
    /// The daemon's error, if it sent one.
    fn remote_error(&self) -> Option<&libvirt_remote::proto::RemoteError>;
}

impl Failure for libvirt_remote::conn::CallError {
    fn remote_error(&self) -> Option<&libvirt_remote::proto::RemoteError> {
        self.remote()
    }
}

impl Failure for libvirt_remote::Error {
    fn remote_error(&self) -> Option<&libvirt_remote::proto::RemoteError> {
        self.remote()
    }
}

/// A call's error as virsh prints it: libvirt's message alone when the daemon sent one,
/// our error's text otherwise.
#[allow(clippy::needless_pass_by_value, reason = "used as `map_err(err)`")]
pub fn err(e: impl Failure) -> String {
    msg(&e)
}

/// [`err`] for a borrowed error.
pub fn msg(e: &impl Failure) -> String {
    match e.remote_error().and_then(|r| r.message.as_ref()) {
        Some(m) => m.to_string(),
        None => e.to_string(),
    }
}

/// Any other error as text.
pub fn text(e: impl std::fmt::Display) -> String {
    e.to_string()
}

const AFTER_HELP: &str = "\
Differences from virsh, on purpose:
  version       the first two lines name lv, not the C library; `Using API` carries the
                daemon's library version (lv has no local libvirt).
  domain and volume lookups that fail add libvirt's reason on a second `error:` line.
  snapshot-list prints creation times in UTC (+0000), whatever TZ says.
  event --all   graphics, tunable, job-completed and memory-failure events print as
                `event 'NAME' for domain 'DOM'` without their details; `event --list`
                also names the event types added after libvirt 9.0.
  event         prints `waiting for events` on stderr once it listens.
  event --reconnect  (lv's own) redials a lost connection and keeps printing events across
                a daemon restart (virsh's `event --loop` exits), saying on stderr when the
                connection is lost and when it is back.
  vol-dumpxml, pool-dumpxml, nodedev-dumpxml: no --xpath/--wrap (lv evaluates no XPath).
  progress bars on vol-upload/vol-download, on stderr, only when stdout is a terminal.";

#[derive(Parser)]
#[command(name = "lv", about = "A pure-Rust virsh", version, after_help = AFTER_HELP)]
struct Cli {
    /// Hypervisor connection URI (default: $LIBVIRT_DEFAULT_URI, then libvirt.conf's uri_default, then qemu:///system as root, qemu:///session otherwise).
    #[arg(short = 'c', long = "connect", value_name = "URI")]
    uri: Option<String>,
    /// Read-only connection, as virsh -r.
    #[arg(short = 'r', long)]
    readonly: bool,
    /// Quiet mode, as virsh -q: no table headers, confirmations or trailing empty line, and
    /// no warnings on stderr (LIBVIRT_DEBUG=1..4 sets the log level as with virsh).
    #[arg(short = 'q', long)]
    quiet: bool,
    /// Bound the whole command: on expiry, close the connection and exit non-zero.
    #[arg(long, value_name = "SECS")]
    timeout: Option<f64>,
    /// Busy-poll the socket this long while a reply is due (0 = park at once; default 100).
    #[arg(long, value_name = "MICROS")]
    busy_poll_us: Option<u64>,
    /// Leave every call to the driver task: no caller-side write (for measurements).
    #[arg(long)]
    no_caller_write: bool,
    /// Runtime worker threads for lv's tasks (0: a current-thread runtime; default: 1 for
    /// transfers, events, console and the benchmarks, 0 for everything else; see
    /// docs/decisions.md; for measurements).
    #[arg(long, value_name = "N")]
    worker_threads: Option<u16>,
    /// Calls on the wire at most, the rest held in the client (0: no cap; default 4, one
    /// under libvirtd's `max_client_requests`; for measurements).
    #[arg(long, value_name = "N")]
    max_in_flight: Option<usize>,
    /// Upload packet payload in bytes (default 131072; virsh sends 262120).
    #[arg(long, value_name = "BYTES")]
    packet_size: Option<usize>,
    /// OpenSSH client config for qemu+ssh:// hosts, like ssh -F ("none": no file; default
    /// ~/.ssh/config).
    #[arg(short = 'F', long, value_name = "FILE")]
    ssh_config: Option<PathBuf>,
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    #[command(flatten)]
    Domain(domain::Cmd),
    #[command(flatten)]
    Storage(storage::Cmd),
    #[command(flatten)]
    Network(network::Cmd),
    #[command(flatten)]
    Host(host::Cmd),
    #[command(flatten)]
    Xml(xmlcmds::Cmd),
    /// Wait for domain events (virsh's form: --all, --event, --domain, --loop, --timeout),
    /// or print lifecycle events of one kind of object, one per line (lv's form: --kind).
    Event(event::Args),
    /// Statistics of every domain or of the named ones (virsh's domstats).
    Domstats(stats::Args),
    /// Throughput of `get_lib_version` calls.
    BenchCalls(bench::Args),
    /// Throughput of bulk stats calls (every domain's statistics in one call).
    BenchStats(bench::StatsArgs),
}

impl Cmd {
    /// Whether the command streams, waits or loops (a runtime worker pays off) rather than
    /// making a few calls.
    fn long_running(&self) -> bool {
        match self {
            Cmd::Domain(c) => c.long_running(),
            Cmd::Storage(c) => c.long_running(),
            Cmd::Event(_) | Cmd::BenchCalls(_) | Cmd::BenchStats(_) => true,
            Cmd::Network(_) | Cmd::Host(_) | Cmd::Xml(_) | Cmd::Domstats(_) => false,
        }
    }
}

async fn connect(cli: &Cli, uri: &str, slot: &Slot) -> R<Connect> {
    let mut opts = ConnectOptions {
        handshake: HandshakeOptions {
            keepalive: true,
            read_only: cli.readonly,
            ..HandshakeOptions::default()
        },
        ..ConnectOptions::default()
    };
    if let Some(us) = cli.busy_poll_us {
        opts.busy_poll = Duration::from_micros(us);
    }
    opts.caller_write = !cli.no_caller_write;
    if let Cmd::Event(a) = &cli.cmd
        && a.reconnect()
    {
        opts.reconnect = Some(ReconnectPolicy::default());
    }
    if let Some(n) = cli.packet_size {
        opts.config.stream_chunk = n;
    }
    if let Some(n) = cli.max_in_flight {
        opts.config.max_in_flight = std::num::NonZeroUsize::new(n);
    }
    opts.ssh.config_file = match &cli.ssh_config {
        None => SshConfigFile::User,
        Some(p) if p.as_os_str() == "none" => SshConfigFile::None,
        Some(p) => SshConfigFile::Path(p.clone()),
    };
    let c = Connect::open_with(uri, opts).await.map_err(text)?;
    slot.set(c.client());
    Ok(c)
}

async fn run(cli: Cli, slot: Slot) -> R {
    let uri = cli.uri.clone().unwrap_or_else(default_uri);
    let c = connect(&cli, &uri, &slot).await?;
    // virsh ends every command's output with an empty line; lv's own commands do not.
    let footer = match cli.cmd {
        Cmd::Domain(cmd) => domain::run(&c, cmd).await.map(|()| true),
        Cmd::Storage(cmd) => storage::run(&c, cmd).await.map(|()| true),
        Cmd::Network(cmd) => network::run(&c, cmd).await.map(|()| true),
        Cmd::Host(cmd) => host::run(&c, cmd).await.map(|()| true),
        Cmd::Xml(cmd) => xmlcmds::run(&c, cmd).await.map(|()| true),
        Cmd::Domstats(args) => stats::domstats(&c, args).await.map(|()| true),
        Cmd::Event(args) => event::run(&c, args).await,
        Cmd::BenchCalls(args) => bench::run(c.client(), args).await.map(|()| false),
        Cmd::BenchStats(args) => bench::stats(&c, args).await.map(|()| false),
    }?;
    if footer && !quiet() {
        println!();
    }
    c.client().disconnect(Duration::from_secs(2)).await;
    Ok(())
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    QUIET.store(cli.quiet, std::sync::atomic::Ordering::Relaxed);
    examples::init_logging(cli.quiet);
    let timeout = cli.timeout.map(Duration::from_secs_f64);
    let slot = Slot::default();
    let s2 = slot.clone();
    // A command of a few calls runs on a current-thread runtime: no worker thread to start
    // and no hand-offs between threads (docs/decisions.md, "Issue 36: start-up"). Transfers,
    // events, the console and the benchmarks keep one runtime worker (lv's commands run on
    // the main thread): a second one only adds hand-offs (decisions.md, "Issue 17,
    // 2026-12-07").
    let workers = cli
        .worker_threads
        .map_or_else(|| usize::from(cli.cmd.long_running()), usize::from);
    run_bounded(timeout, &slot, Some(workers), run(cli, s2))
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    use super::Cli;

    #[test]
    fn the_command_line_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn objects_go_positionally_or_as_options_as_in_virsh() {
        use clap::Parser;
        for args in [
            &["lv", "dominfo", "d"][..],
            &["lv", "dominfo", "--domain", "d"],
            &["lv", "vol-list", "p"],
            &["lv", "vol-list", "--pool", "p"],
            &["lv", "vol-upload", "--pool", "p", "v", "f"],
            &["lv", "vol-upload", "v", "f", "--pool", "p", "--sparse"],
            &["lv", "qemu-monitor-command", "d", "--hmp", "info", "status"],
            &["lv", "snapshot-create-as", "d", "s1", "first"],
        ] {
            assert!(Cli::try_parse_from(args).is_ok(), "{args:?}");
        }
        for args in [
            &["lv", "dominfo"][..],
            &["lv", "dominfo", "d", "--domain", "d"],
            &["lv", "vol-list"],
        ] {
            assert!(Cli::try_parse_from(args).is_err(), "{args:?}");
        }
    }
}
