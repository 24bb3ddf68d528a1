//! `proxyctl`: drive the KVM provider (`egress-kvm2`) from the command line.
//!
//! ```text
//! proxyctl [--config FILE] [--entry NAME] [--timeout SECS]
//!          images ensure KEY
//!        | create UID --image KEY [--name NAME] [--user-data FILE] [--vcpus N] [--memory MIB] [--tag T]...
//!        | get UID | delete UID | list --tag TAG
//!        | demo
//! ```
//!
//! `--config` is a provider configuration (YAML or JSON, the operator's format); `--entry`
//! picks one `kvm2` entry (default: the only or first one). `demo` needs no configuration: it
//! builds (or reuses) the egress test guest (`scripts/build-guest-image`), starts its own
//! private libvirtd and a loopback mirror serving that image, ensures the image, creates an
//! instance whose user-data starts a proxy, waits (at most 60 s) until the guest agent
//! reports its address, sends one HTTP request through the proxy (forwarded from a host
//! loopback port) to a loopback server on the host, deletes the instance, and leaves the
//! host untouched (daemon, qemu and temp dirs are removed on exit).

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

use clap::{Parser, Subcommand};
use egress_kvm2::{ImageProgress, Kvm2Provider, Kvm2Settings, ProgressFn};
use egress_provider::{CreateSpec, Identifier, Instance, Provider, ProvidersConfig};
use examples::{Slot, progress_bar, run_bounded};
use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget};

#[derive(Parser)]
#[command(
    name = "proxyctl",
    about = "Drive the kvm2 egress-proxy provider",
    version
)]
struct Cli {
    /// Provider configuration (*.yaml, *.yml or *.json). Not needed for `demo`.
    #[arg(long, env = "PROXYCTL_CONFIG")]
    config: Option<PathBuf>,
    /// The kvm2 entry to use (default: the only or first kvm2 entry).
    #[arg(long)]
    entry: Option<String>,
    /// Bound the whole command: on expiry, exit non-zero at once.
    #[arg(long, value_name = "SECS")]
    timeout: Option<f64>,
    /// No warnings on stderr, only errors (`LIBVIRT_DEBUG=1..4` sets the log level).
    #[arg(short = 'q', long)]
    quiet: bool,
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Base images.
    Images {
        #[command(subcommand)]
        cmd: ImagesCmd,
    },
    /// Create an instance (idempotent: the same uid answers the existing one).
    Create {
        /// The instance's uid (an identifier).
        uid: String,
        /// Image key of the entry.
        #[arg(long)]
        image: String,
        /// Display name (default: the uid).
        #[arg(long)]
        name: Option<String>,
        /// cloud-init user-data file, passed verbatim.
        #[arg(long)]
        user_data: Option<PathBuf>,
        /// Virtual CPUs.
        #[arg(long, default_value_t = 1)]
        vcpus: u32,
        /// Memory in MiB.
        #[arg(long, default_value_t = 512)]
        memory: u64,
        /// Tags (repeatable).
        #[arg(long = "tag")]
        tags: Vec<String>,
    },
    /// Show an instance as the host reports it.
    Get {
        /// The instance's uid.
        uid: String,
    },
    /// Delete an instance and its volumes (success if it does not exist).
    Delete {
        /// The instance's uid.
        uid: String,
    },
    /// Instances carrying a tag.
    List {
        /// The tag.
        #[arg(long)]
        tag: String,
    },
    /// The embedded default: a private libvirtd, a loopback mirror and a real guest that
    /// carries one request through its proxy; nothing outside temp dirs is touched.
    Demo {
        /// Domain type for the guest: `qemu` (software emulation; works everywhere, also
        /// under nested virtualization) or `kvm` (faster where /dev/kvm boots real guests).
        #[arg(long, default_value = "qemu", value_parser = ["qemu", "kvm"])]
        domain_type: String,
    },
}

#[derive(Subcommand)]
enum ImagesCmd {
    /// Fetch, verify and publish the base image of KEY (or confirm it is cached).
    Ensure {
        /// Image key of the entry.
        key: String,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    examples::init_logging(cli.quiet);
    let timeout = cli.timeout.map(Duration::from_secs_f64);
    run_bounded(
        timeout,
        &Slot::default(),
        None,
        async move { run(cli).await },
    )
}

async fn run(cli: Cli) -> Result<(), String> {
    if let Cmd::Demo { domain_type } = &cli.cmd {
        return demo(domain_type).await;
    }
    let bars = Bars::new();
    let provider = load(cli.config.as_deref(), cli.entry.as_deref(), &bars)?;
    let out = command(&provider, cli.cmd).await;
    bars.clear();
    provider.shutdown().await;
    out
}

fn ident(s: &str, what: &str) -> Result<Identifier, String> {
    Identifier::new(s).map_err(|e| format!("{what} {s:?}: {e}"))
}

fn load(config: Option<&Path>, entry: Option<&str>, bars: &Bars) -> Result<Kvm2Provider, String> {
    let path =
        config.ok_or("--config FILE is required (or PROXYCTL_CONFIG); try `proxyctl demo`")?;
    let cfg = ProvidersConfig::from_file(path).map_err(|e| e.to_string())?;
    let kvm2: Vec<_> = cfg
        .providers
        .iter()
        .filter(|e| e.provider_type == Kvm2Provider::TYPE)
        .collect();
    let e = match entry {
        Some(name) => *kvm2
            .iter()
            .find(|e| e.name == name)
            .ok_or_else(|| format!("no kvm2 entry named {name:?} in {}", path.display()))?,
        None => *kvm2
            .first()
            .ok_or_else(|| format!("no entry of type kvm2 in {}", path.display()))?,
    };
    let settings: Kvm2Settings = e.settings().map_err(|e| e.to_string())?;
    let p = Kvm2Provider::from_entry(e, settings).map_err(|e| e.to_string())?;
    Ok(p.with_progress(bars.progress()))
}

async fn command(p: &Kvm2Provider, cmd: Cmd) -> Result<(), String> {
    match cmd {
        Cmd::Images {
            cmd: ImagesCmd::Ensure { key },
        } => {
            let started = Instant::now();
            let base = p
                .ensure_image(&ident(&key, "image key")?)
                .await
                .map_err(|e| e.chain().to_string())?;
            println!(
                "{} {} ({} bytes, sha256 {}) in {:.2?}",
                if base.fetched {
                    "fetched and published"
                } else {
                    "cached"
                },
                base.volume.name,
                base.capacity,
                base.digest,
                started.elapsed()
            );
        }
        Cmd::Create {
            uid,
            image,
            name,
            user_data,
            vcpus,
            memory,
            tags,
        } => {
            let uid = ident(&uid, "uid")?;
            let mut spec = CreateSpec::new(
                uid.clone(),
                name.unwrap_or_else(|| uid.to_string()),
                ident(&image, "image key")?,
            )
            .with_vcpus(vcpus)
            .with_memory_mib(memory);
            for t in tags {
                spec = spec.with_tag(ident(&t, "tag")?);
            }
            if let Some(f) = user_data {
                let bytes = std::fs::read(&f).map_err(|e| format!("{}: {e}", f.display()))?;
                spec = spec.with_user_data(bytes);
            }
            let i = p.create(&spec).await.map_err(|e| e.chain().to_string())?;
            print_instance(&i);
        }
        Cmd::Get { uid } => {
            let i = p
                .get(&ident(&uid, "uid")?)
                .await
                .map_err(|e| e.chain().to_string())?;
            print_instance(&i);
        }
        Cmd::Delete { uid } => {
            p.delete(&ident(&uid, "uid")?)
                .await
                .map_err(|e| e.chain().to_string())?;
            println!("deleted {uid}");
        }
        Cmd::List { tag } => {
            let list = p
                .list_by_tag(&ident(&tag, "tag")?)
                .await
                .map_err(|e| e.chain().to_string())?;
            if list.instances.is_empty() && list.unreadable.is_empty() {
                println!("no instances tagged {tag}");
            }
            for i in &list.instances {
                print_instance(i);
            }
            // One sick instance never hides the others: each is reported on its own line.
            for u in &list.unreadable {
                println!(
                    "{}  unreadable ({})  {}",
                    u.uid.as_ref().map_or(u.object.as_str(), Identifier::as_str),
                    u.error.kind(),
                    u.error.chain()
                );
            }
        }
        Cmd::Demo { .. } => unreachable!("handled before"),
    }
    Ok(())
}

fn print_instance(i: &Instance) {
    let tags: Vec<&str> = i.tags.iter().map(Identifier::as_str).collect();
    println!(
        "{}  {}  name={:?}  created={}  tags=[{}]  provider={}",
        i.uid,
        i.state,
        i.name,
        humantime_like(i.created_at),
        tags.join(","),
        i.provider
    );
}

fn humantime_like(t: std::time::SystemTime) -> String {
    let secs = t
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    format!("@{secs}")
}

/// Fetch and upload bars; hidden when stderr is not a terminal.
struct Bars {
    multi: MultiProgress,
    fetch: ProgressBar,
    upload: ProgressBar,
}

impl Bars {
    fn new() -> Self {
        let multi = MultiProgress::new();
        if !std::io::stderr().is_terminal() {
            multi.set_draw_target(ProgressDrawTarget::hidden());
        }
        let fetch = multi.add(progress_bar(0, "fetch "));
        let upload = multi.add(progress_bar(0, "upload"));
        Self {
            multi,
            fetch,
            upload,
        }
    }

    fn progress(&self) -> ProgressFn {
        let (fetch, upload) = (self.fetch.clone(), self.upload.clone());
        Arc::new(move |p| match p {
            ImageProgress::Fetching { total } => {
                let t = total.unwrap_or(0);
                fetch.set_length(t);
                upload.set_length(t);
            }
            ImageProgress::Fetched(n) => fetch.set_position(n),
            ImageProgress::Uploaded(n) => upload.set_position(n),
            ImageProgress::Publishing => upload.set_message("publish"),
            ImageProgress::Published { .. } => {
                fetch.finish();
                upload.finish();
            }
            _ => {}
        })
    }

    fn clear(&self) {
        let _ = self.multi.clear();
    }
}

// ---- demo -----------------------------------------------------------------------------

/// How long the demo waits for the guest to report its address.
const DEMO_RUNNING_WITHIN: Duration = Duration::from_secs(60);

/// libvirtd is missing: install what the tests install (scripts/install-deps), when this
/// binary runs from the workspace.
fn install_deps_if_missing() -> Result<(), String> {
    let have = [
        "/usr/sbin/libvirtd",
        "/usr/bin/virsh",
        "/usr/bin/qemu-system-x86_64",
    ]
    .iter()
    .all(|p| Path::new(p).exists());
    if have {
        return Ok(());
    }
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts/install-deps");
    if !script.exists() {
        return Err("libvirt and qemu are not installed: install libvirt-daemon-system, libvirt-clients and qemu-system-x86".into());
    }
    eprintln!(
        "proxyctl demo: installing libvirt and qemu with {}",
        script.display()
    );
    let ok = std::process::Command::new("bash")
        .arg(&script)
        .status()
        .map_err(|e| format!("running {}: {e}", script.display()))?
        .success();
    if ok {
        Ok(())
    } else {
        Err(format!("{} failed", script.display()))
    }
}

struct Clock(Instant);

impl Clock {
    fn say(&self, what: impl std::fmt::Display) {
        println!("[{:>6.2}s] {what}", self.0.elapsed().as_secs_f64());
    }
}

/// What the demo runs in; everything is removed when it drops.
struct DemoBed {
    lvd: testbed::libvirtd::Libvirtd,
    mirror: testbed::http::HttpServer,
    image: testbed::guest::GuestImage,
    /// Guest agent sockets and serial console logs (daemon-writable, short paths).
    dir: testbed::guest::TempDir,
}

async fn demo(domain_type: &str) -> Result<(), String> {
    let clock = Clock(Instant::now());
    println!(
        "proxyctl demo: a real egress guest on a private libvirtd; nothing outside temp dirs is touched"
    );
    tokio::task::spawn_blocking(install_deps_if_missing)
        .await
        .map_err(|e| e.to_string())??;
    let image = tokio::task::spawn_blocking(testbed::guest::image)
        .await
        .map_err(|e| e.to_string())?
        .map_err(|e| format!("cannot build the guest image: {e}"))?;
    clock.say(format_args!(
        "guest image {} ({} bytes, sha256 {}…): {} in {:.2?}",
        image.path.display(),
        image.size,
        &image.sha256[..16],
        if image.cached { "cached" } else { "built" },
        image.build_time
    ));
    let lvd = tokio::task::spawn_blocking(testbed::libvirtd::Libvirtd::start)
        .await
        .map_err(|e| e.to_string())?
        .map_err(|e| format!("cannot start the private libvirtd: {e}"))?;
    clock.say(format_args!(
        "libvirtd 9 started (session mode, {})",
        lvd.dir().display()
    ));
    let mirror = testbed::http::HttpServer::start()
        .await
        .map_err(|e| format!("cannot start the loopback mirror: {e}"))?;
    let bytes = std::fs::read(&image.path).map_err(|e| format!("{}: {e}", image.path.display()))?;
    mirror.serve("/egress-guest.raw", bytes);
    clock.say(format_args!(
        "mirror {} serves the guest image",
        mirror.url("/egress-guest.raw")
    ));
    let dir = testbed::guest::shared_dir("proxyctl-")
        .map_err(|e| format!("cannot make a temp dir: {e}"))?;
    let bed = DemoBed {
        lvd,
        mirror,
        image,
        dir,
    };
    let result = demo_steps(&clock, &bed, domain_type).await;
    if result.is_err() {
        print_serial_tail(&bed);
    }
    let lvd_dir = bed.lvd.dir().to_owned();
    let tmp = bed.dir.path().to_owned();
    tokio::task::spawn_blocking(move || drop(bed))
        .await
        .map_err(|e| e.to_string())?;
    let left: Vec<String> = [&lvd_dir, &tmp]
        .iter()
        .filter(|d| d.exists())
        .map(|d| d.display().to_string())
        .collect();
    clock.say(format_args!(
        "cleaned up: daemon and guest stopped, {} and {} {}",
        lvd_dir.display(),
        tmp.display(),
        if left.is_empty() {
            "removed".to_owned()
        } else {
            format!("STILL EXIST: {}", left.join(", "))
        }
    ));
    result
}

/// On failure: the last lines of every serial console log (the guest's own account).
fn print_serial_tail(bed: &DemoBed) {
    let Ok(entries) = std::fs::read_dir(bed.dir.path()) else {
        return;
    };
    for e in entries.flatten() {
        let path = e.path();
        if !path.to_string_lossy().ends_with(".serial.log") {
            continue;
        }
        let log = std::fs::read_to_string(&path).unwrap_or_default();
        let lines: Vec<&str> = log.lines().collect();
        eprintln!(
            "---- last lines of the guest's serial console ({}) ----",
            path.display()
        );
        for l in &lines[lines.len().saturating_sub(40)..] {
            eprintln!("{l}");
        }
        eprintln!("---- end ----");
    }
}

async fn demo_steps(clock: &Clock, bed: &DemoBed, domain_type: &str) -> Result<(), String> {
    let fwd = testbed::guest::free_loopback_port().map_err(|e| format!("no free port: {e}"))?;
    let dir = bed.dir.path().display().to_string();
    let doc = serde_json::json!({"providers": [{
        "name": "demo",
        "type": "kvm2",
        "images": {"egress-guest": {
            "url": bed.mirror.url("/egress-guest.raw"), "sha256": bed.image.sha256, "format": "raw"
        }},
        "uri": bed.lvd.uri(),
        "pool": bed.lvd.pool_name(),
        "domain_type": domain_type,
        // The agent answers once the guest is up; before that it fails and the lease source
        // (empty under user networking) makes it Provisioning.
        "address_sources": ["agent", "lease"],
        "network": {"type": "user", "port_forwards": [
            {"host_addr": "127.0.0.1", "host_port": fwd, "guest_port": testbed::guest::PROXY_PORT}
        ]},
        "agent_socket_dir": dir,
        "serial_log_dir": dir,
        "budgets": {"shutdown_secs": 5},
    }]});
    let cfg = ProvidersConfig::from_value(&doc).map_err(|e| e.to_string())?;
    let entry = &cfg.providers[0];
    let bars = Bars::new();
    let p = Kvm2Provider::from_entry(entry, entry.settings().map_err(|e| e.to_string())?)
        .map_err(|e| e.to_string())?
        .with_progress(bars.progress());
    let fail = |what: &str, e: egress_provider::ProviderError| format!("{what}: {}", e.chain());

    let started = Instant::now();
    let base = p
        .ensure_image(&ident("egress-guest", "key")?)
        .await
        .map_err(|e| fail("images ensure", e))?;
    bars.clear();
    clock.say(format_args!(
        "images ensure egress-guest: fetched, verified and published {} ({} bytes) in {:.2?}",
        base.volume.name,
        base.capacity,
        started.elapsed()
    ));

    let uid = ident(&format!("demo-{}", std::process::id()), "uid")?;
    let spec = CreateSpec::new(
        uid.clone(),
        "proxyctl demo <egress & co>",
        ident("egress-guest", "key")?,
    )
    .with_memory_mib(256)
    .with_vcpus(1)
    .with_tag(ident("demo", "tag")?)
    .with_user_data(testbed::guest::proxy_user_data().into_bytes());
    let started = Instant::now();
    let made = p.create(&spec).await.map_err(|e| fail("create", e))?;
    clock.say(format_args!(
        "create {uid}: {} in {:.2?} (domain {}, type {domain_type}, 256 MiB, 1 vCPU; \
         user-data starts tinyproxy on guest port {}; host 127.0.0.1:{fwd} forwarded to it)",
        made.state,
        started.elapsed(),
        p.domain_name(&uid),
        testbed::guest::PROXY_PORT
    ));

    let result = demo_running(clock, &p, &uid, bed, fwd).await;
    let started = Instant::now();
    let deleted = p.delete(&uid).await.map_err(|e| fail("delete", e));
    if let Err(e) = &deleted {
        eprintln!("{e}");
    } else {
        clock.say(format_args!(
            "delete {uid}: ok in {:.2?} (graceful shutdown through the agent, undefine, volumes removed)",
            started.elapsed()
        ));
    }
    result?;
    deleted?;
    match p.get(&uid).await {
        Err(e) if e.is_not_found() => clock.say(format_args!("get {uid}: not found, as expected")),
        Ok(i) => return Err(format!("get after delete answered {}", i.state)),
        Err(e) => return Err(fail("get after delete", e)),
    }
    p.shutdown().await;
    Ok(())
}

/// Waits for Running, then one request through the guest's proxy and a list.
async fn demo_running(
    clock: &Clock,
    p: &Kvm2Provider,
    uid: &Identifier,
    bed: &DemoBed,
    fwd: u16,
) -> Result<(), String> {
    let started = Instant::now();
    let mut provisioning = 0u32;
    let ip = loop {
        let i = p
            .get(uid)
            .await
            .map_err(|e| format!("get: {}", e.chain()))?;
        match i.state {
            egress_provider::InstanceState::Running { ip } => break ip,
            egress_provider::InstanceState::Provisioning => {
                if provisioning == 0 {
                    clock.say(format_args!(
                        "get {uid}: provisioning (the guest boots; its agent does not answer yet)"
                    ));
                }
                provisioning += 1;
            }
            other => return Err(format!("get {uid}: {other} while waiting for the guest")),
        }
        if started.elapsed() > DEMO_RUNNING_WITHIN {
            return Err(format!(
                "the guest did not report an address within {DEMO_RUNNING_WITHIN:?} \
                 ({provisioning} provisioning answers)"
            ));
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    };
    clock.say(format_args!(
        "get {uid}: running, ip {ip} (from the guest agent) after {:.2?}",
        started.elapsed()
    ));

    let dest = testbed::http::HttpServer::start()
        .await
        .map_err(|e| format!("cannot start the destination server: {e}"))?;
    let body = format!(
        "hello from the host's loopback, fetched by the egress guest (request {})",
        std::process::id()
    );
    dest.serve("/hello", body.clone().into_bytes());
    let url = format!("http://10.0.2.2:{}/hello", dest.addr().port());
    let proxy = std::net::SocketAddr::from(([127, 0, 0, 1], fwd));
    let started = Instant::now();
    let r = testbed::http::get_via_proxy(proxy, &url, Duration::from_secs(20))
        .await
        .map_err(|e| format!("request through the guest's proxy: {e}"))?;
    let got = String::from_utf8_lossy(&r.body);
    clock.say(format_args!(
        "GET {url} via proxy http://{proxy} (guest tinyproxy): {} in {:.2?}, body {got:?}",
        r.head.lines().next().unwrap_or_default(),
        started.elapsed()
    ));
    if r.status != 200 || got != body {
        return Err(format!(
            "the proxied request did not return the host's body: {}",
            r.head
        ));
    }
    let listed = p
        .list_by_tag(&ident("demo", "tag")?)
        .await
        .map_err(|e| format!("list: {}", e.chain()))?;
    clock.say(format_args!(
        "list --tag demo: {} instance(s): {}",
        listed.instances.len(),
        listed
            .instances
            .iter()
            .map(|i| format!("{} {}", i.uid, i.state))
            .collect::<Vec<_>>()
            .join(", ")
    ));
    let _ = &bed.image;
    Ok(())
}
