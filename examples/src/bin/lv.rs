//! `lv`: a small pure-Rust virsh for the operations the egress operator needs.
//!
//! ```text
//! lv [-c URI] [-F SSH_CONFIG] [--timeout SECS] [--busy-poll-us N] [--packet-size BYTES] version | list | domstate NAME | vol-list --pool P
//!    | vol-upload --pool P VOL FILE [--sparse] | vol-download --pool P VOL FILE [--sparse]
//!    | bench-calls --calls N --concurrency C
//!    | event [--kind domain|network|pool|nodedev|secret] [--count N]
//! ```

// Doc comments below are clap's help text, read in a terminal: no Markdown there.
#![allow(clippy::doc_markdown)]

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

use clap::{Parser, Subcommand};
use examples::{Slot, default_uri, progress_bar, run_bounded};
use libvirt_rpc::Client;
use libvirt_rpc::client::ConnectOptions;
use libvirt_rpc::conn::handshake::HandshakeOptions;
use libvirt_rpc::proto::procs::connect::{
    ConnectGetHostname, ConnectGetLibVersion, ConnectGetType, ConnectGetVersion,
    ConnectListAllDomains, ConnectListAllDomainsArgs,
};
use libvirt_rpc::proto::procs::domain::{
    DomainFlagsArgs, DomainGetState, DomainLookupByName, DomainLookupByNameArgs,
};
use libvirt_rpc::proto::procs::storage::{
    StoragePoolListAllVolumes, StoragePoolListAllVolumesArgs, StoragePoolLookupByName,
    StoragePoolLookupByNameArgs, StorageVolGetInfo, StorageVolLookupByName,
    StorageVolLookupByNameArgs,
};
use libvirt_rpc::proto::types::StorageVol;
use libvirt_rpc::ssh_socket::SshConfigFile;

#[derive(Parser)]
#[command(name = "lv", about = "A small pure-Rust virsh", version)]
struct Cli {
    /// libvirt URI (default: $LIBVIRT_DEFAULT_URI, then libvirt.conf's uri_default, then qemu:///system as root, qemu:///session otherwise).
    #[arg(short = 'c', long = "connect")]
    uri: Option<String>,
    /// Bound the whole command: on expiry, close the connection and exit non-zero.
    #[arg(long, value_name = "SECS")]
    timeout: Option<f64>,
    /// Busy-poll the socket this long while a reply is due (0 = park at once; default 50).
    #[arg(long, value_name = "MICROS")]
    busy_poll_us: Option<u64>,
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
    /// Library, daemon and hypervisor versions.
    Version,
    /// All domains with their state.
    List,
    /// A domain's state.
    Domstate {
        /// Domain name.
        name: String,
    },
    /// Volumes of a pool.
    VolList {
        /// Pool name.
        #[arg(long)]
        pool: String,
    },
    /// Upload a file into a volume.
    VolUpload {
        /// Pool name.
        #[arg(long)]
        pool: String,
        /// Volume name.
        vol: String,
        /// Local file; a pipe (e.g. /dev/stdin) or a device is read to its end.
        file: PathBuf,
        /// Keep holes (SEEK_DATA/SEEK_HOLE) instead of sending zeros.
        #[arg(long)]
        sparse: bool,
    },
    /// Download a volume into a file.
    VolDownload {
        /// Pool name.
        #[arg(long)]
        pool: String,
        /// Volume name.
        vol: String,
        /// Local file.
        file: PathBuf,
        /// Keep holes.
        #[arg(long)]
        sparse: bool,
    },
    /// Print lifecycle events of one kind of object, one per line, until --count events
    /// (or --timeout, or Ctrl-C).
    Event {
        /// Which objects.
        #[arg(long, value_enum, default_value_t = EventKind::Domain)]
        kind: EventKind,
        /// Stop after this many events.
        #[arg(long)]
        count: Option<u64>,
    },
    /// Throughput of `get_lib_version` calls.
    BenchCalls {
        /// Total calls.
        #[arg(long, default_value_t = 10_000)]
        calls: u32,
        /// Concurrent tasks on the one connection.
        #[arg(long, default_value_t = 1)]
        concurrency: usize,
    },
}

/// Object kinds for `lv event`.
#[derive(Clone, Copy, clap::ValueEnum)]
enum EventKind {
    Domain,
    Network,
    Pool,
    Nodedev,
    Secret,
}

/// The name of lifecycle event `e`: `virDomainEventType` for domains, the lifecycle enums of
/// networks and pools, node devices and secrets otherwise.
fn event_name(kind: EventKind, e: i32) -> &'static str {
    let names: &[&str] = match kind {
        EventKind::Domain => &[
            "defined",
            "undefined",
            "started",
            "suspended",
            "resumed",
            "stopped",
            "shutdown",
            "pmsuspended",
            "crashed",
        ],
        EventKind::Network | EventKind::Pool => &[
            "defined",
            "undefined",
            "started",
            "stopped",
            "created",
            "deleted",
        ],
        EventKind::Nodedev => &["created", "deleted", "defined", "undefined"],
        EventKind::Secret => &["defined", "undefined"],
    };
    usize::try_from(e)
        .ok()
        .and_then(|i| names.get(i))
        .copied()
        .unwrap_or("unknown")
}

/// Subscribe to the lifecycle events of `kind` and render each as one line.
async fn event_lines(
    c: &Client,
    kind: EventKind,
) -> Result<futures::stream::BoxStream<'static, String>, libvirt_rpc::CallError> {
    use libvirt_rpc::proto::events::{
        DomainEvent, NetworkEvent, NodeDeviceEvent, SecretEvent, StoragePoolEvent,
    };
    match kind {
        EventKind::Domain => lifecycle_lines::<DomainEvent>(c, kind, |d| &d.name).await,
        EventKind::Network => lifecycle_lines::<NetworkEvent>(c, kind, |n| &n.name).await,
        EventKind::Pool => lifecycle_lines::<StoragePoolEvent>(c, kind, |p| &p.name).await,
        EventKind::Nodedev => lifecycle_lines::<NodeDeviceEvent>(c, kind, |d| &d.name).await,
        EventKind::Secret => lifecycle_lines::<SecretEvent>(c, kind, |s| &s.usage_id).await,
    }
}

/// One output line per event of family `K`: `KIND OBJECT: EVENT` for a lifecycle event (the
/// object named by `name`), the decoded event otherwise.
async fn lifecycle_lines<K: libvirt_rpc::proto::events::EventKind>(
    c: &Client,
    kind: EventKind,
    name: fn(&K::Object) -> &libvirt_rpc::LvString,
) -> Result<futures::stream::BoxStream<'static, String>, libvirt_rpc::CallError> {
    use clap::ValueEnum;
    use futures::StreamExt;
    let events = c.subscribe::<K>(K::LIFECYCLE, None).await?;
    let label = kind.to_possible_value().expect("no skipped variants");
    Ok(events
        .map(move |ev| match ev.lifecycle() {
            Some((e, _)) => format!(
                "{} {}: {}",
                label.get_name(),
                name(ev.object()),
                event_name(kind, e)
            ),
            None => format!("{}: {ev:?}", label.get_name()),
        })
        .boxed())
}

fn state_name(s: i32) -> &'static str {
    match s {
        1 => "running",
        2 => "idle",
        3 => "paused",
        4 => "in shutdown",
        5 => "shut off",
        6 => "crashed",
        7 => "pmsuspended",
        _ => "no state",
    }
}

fn version_text(v: u64) -> String {
    format!("{}.{}.{}", v / 1_000_000, v / 1000 % 1000, v % 1000)
}

async fn connect(cli: &Cli, uri: &str, slot: &Slot) -> Result<Client, String> {
    let mut opts = ConnectOptions {
        handshake: HandshakeOptions {
            keepalive: true,
            ..HandshakeOptions::default()
        },
        ..ConnectOptions::default()
    };
    if let Some(us) = cli.busy_poll_us {
        opts.busy_poll = Duration::from_micros(us);
    }
    if let Some(n) = cli.packet_size {
        opts.config.stream_chunk = n;
    }
    opts.ssh.config_file = match &cli.ssh_config {
        None => SshConfigFile::User,
        Some(p) if p.as_os_str() == "none" => SshConfigFile::None,
        Some(p) => SshConfigFile::Path(p.clone()),
    };
    let c = Client::connect(uri, opts)
        .await
        .map_err(|e| e.to_string())?;
    slot.set(&c);
    Ok(c)
}

async fn lookup_vol(c: &Client, pool: &str, vol: &str) -> Result<StorageVol, String> {
    let pool = c
        .call::<StoragePoolLookupByName>(&StoragePoolLookupByNameArgs { name: pool.into() })
        .await
        .map_err(|e| e.to_string())?
        .pool;
    Ok(
        c.call::<StorageVolLookupByName>(&StorageVolLookupByNameArgs {
            pool,
            name: vol.into(),
        })
        .await
        .map_err(|e| e.to_string())?
        .vol,
    )
}

async fn run(cli: Cli, slot: Slot) -> Result<(), String> {
    let uri = cli.uri.clone().unwrap_or_else(default_uri);
    let c = connect(&cli, &uri, &slot).await?;
    let e = |e: libvirt_rpc::CallError| e.to_string();
    match cli.cmd {
        Cmd::Version => {
            let lib = c
                .call::<ConnectGetLibVersion>(&())
                .await
                .map_err(e)?
                .lib_ver;
            let kind = c.call::<ConnectGetType>(&()).await.map_err(e)?.kind;
            let hv = c.call::<ConnectGetVersion>(&()).await.map_err(e)?.hv_ver;
            let host = c.call::<ConnectGetHostname>(&()).await.map_err(e)?.hostname;
            println!("Compiled against library: lv {}", env!("CARGO_PKG_VERSION"));
            println!("Using API: {kind} {}", version_text(lib));
            println!("Running against daemon: {}", version_text(lib));
            println!("Running hypervisor: {kind} {}", version_text(hv));
            println!("Host: {host}");
        }
        Cmd::List => {
            let doms = c
                .call::<ConnectListAllDomains>(&ConnectListAllDomainsArgs {
                    need_results: 1,
                    flags: 0,
                })
                .await
                .map_err(e)?
                .domains;
            println!(" {:<5} {:<30} State", "Id", "Name");
            println!("{}", "-".repeat(50));
            for d in doms {
                let st = c
                    .call::<DomainGetState>(&DomainFlagsArgs {
                        dom: d.clone(),
                        flags: 0,
                    })
                    .await
                    .map_err(e)?;
                let id = if d.id < 0 {
                    "-".to_string()
                } else {
                    d.id.to_string()
                };
                println!(" {id:<5} {:<30} {}", d.name, state_name(st.state));
            }
        }
        Cmd::Domstate { name } => {
            let dom = c
                .call::<DomainLookupByName>(&DomainLookupByNameArgs { name: name.into() })
                .await
                .map_err(e)?
                .dom;
            let st = c
                .call::<DomainGetState>(&DomainFlagsArgs { dom, flags: 0 })
                .await
                .map_err(e)?;
            println!("{}", state_name(st.state));
        }
        Cmd::VolList { pool } => {
            let p = c
                .call::<StoragePoolLookupByName>(&StoragePoolLookupByNameArgs { name: pool.into() })
                .await
                .map_err(e)?
                .pool;
            let vols = c
                .call::<StoragePoolListAllVolumes>(&StoragePoolListAllVolumesArgs {
                    pool: p,
                    need_results: 1,
                    flags: 0,
                })
                .await
                .map_err(e)?
                .vols;
            println!(" {:<30} Path", "Name");
            println!("{}", "-".repeat(60));
            for v in vols {
                println!(" {:<30} {}", v.name, v.key);
            }
        }
        Cmd::VolUpload {
            pool,
            vol,
            file,
            sparse,
        } => {
            let v = lookup_vol(&c, &pool, &vol).await?;
            let len = std::fs::metadata(&file)
                .map_err(|err| format!("{}: {err}", file.display()))?
                .len();
            let pb = progress_bar(len, "upload");
            let pb2 = pb.clone();
            let up = c
                .vol_upload(&v, libvirt_rpc::client::UploadOptions::new().sparse(sparse))
                .await
                .map_err(|err| err.to_string())?;
            let up = up.with_progress(move |p| pb2.set_position(p.done));
            up.send_file_and_finish(&file)
                .await
                .map_err(|err| err.to_string())?;
            pb.finish_and_clear();
        }
        Cmd::VolDownload {
            pool,
            vol,
            file,
            sparse,
        } => {
            let v = lookup_vol(&c, &pool, &vol).await?;
            let cap = c
                .call::<StorageVolGetInfo>(&libvirt_rpc::proto::procs::storage::StorageVolArgs {
                    vol: v.clone(),
                })
                .await
                .map_err(e)?
                .capacity;
            let pb = progress_bar(cap, "download");
            let pb2 = pb.clone();
            let dl = c
                .vol_download(
                    &v,
                    libvirt_rpc::client::DownloadOptions::new().sparse(sparse),
                )
                .await
                .map_err(|err| err.to_string())?;
            let dl = dl.with_progress(move |p| pb2.set_position(p.done));
            dl.write_to_file(&file)
                .await
                .map_err(|err| err.to_string())?;
            pb.finish_and_clear();
        }
        Cmd::Event { kind, count } => {
            use futures::StreamExt;
            let mut lines = event_lines(&c, kind).await.map_err(e)?;
            // On stderr, so that scripts and tests know when events will be seen.
            eprintln!("waiting for events");
            let mut seen = 0u64;
            while count.is_none_or(|n| seen < n) {
                let Some(line) = lines.next().await else {
                    // The stream ends when the connection dies: say why.
                    return Err(c.closed().await.to_string());
                };
                println!("{line}");
                seen += 1;
            }
        }
        Cmd::BenchCalls { calls, concurrency } => {
            let concurrency = concurrency.max(1);
            let t = Instant::now();
            let mut tasks = Vec::new();
            let left = Arc::new(std::sync::atomic::AtomicU32::new(calls));
            for _ in 0..concurrency {
                let c = c.clone();
                let left = left.clone();
                tasks.push(tokio::spawn(async move {
                    while left
                        .fetch_update(
                            std::sync::atomic::Ordering::Relaxed,
                            std::sync::atomic::Ordering::Relaxed,
                            |n| n.checked_sub(1),
                        )
                        .is_ok()
                    {
                        c.call::<ConnectGetLibVersion>(&()).await?;
                    }
                    Ok::<(), libvirt_rpc::CallError>(())
                }));
            }
            for t in tasks {
                t.await.map_err(|err| err.to_string())?.map_err(e)?;
            }
            let secs = t.elapsed().as_secs_f64();
            println!("calls/s: {:.0}", f64::from(calls) / secs);
        }
    }
    c.disconnect(Duration::from_secs(2)).await;
    Ok(())
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let timeout = cli.timeout.map(Duration::from_secs_f64);
    let slot = Slot::default();
    let s2 = slot.clone();
    run_bounded(timeout, &slot, run(cli, s2))
}
