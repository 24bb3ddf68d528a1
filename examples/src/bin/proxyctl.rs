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
//! starts its own private libvirtd and a loopback mirror serving a small generated image,
//! ensures the image, creates an instance, shows it, deletes it, and leaves the host
//! untouched (daemon and temp dirs are removed on exit).

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
    /// The embedded default: a private libvirtd and a loopback mirror, one instance
    /// created, shown and deleted; nothing outside temp dirs is touched.
    Demo,
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
    let timeout = cli.timeout.map(Duration::from_secs_f64);
    run_bounded(timeout, &Slot::default(), async move { run(cli).await })
}

async fn run(cli: Cli) -> Result<(), String> {
    if matches!(cli.cmd, Cmd::Demo) {
        return demo().await;
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
            if list.is_empty() {
                println!("no instances tagged {tag}");
            }
            for i in &list {
                print_instance(i);
            }
        }
        Cmd::Demo => unreachable!("handled before"),
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

fn sha256_hex(data: &[u8]) -> String {
    use sha2::Digest;
    use std::fmt::Write as _;
    sha2::Sha256::digest(data)
        .iter()
        .fold(String::new(), |mut s, b| {
            let _ = write!(s, "{b:02x}");
            s
        })
}

/// A small raw image of pattern data (no guest OS yet; a later issue swaps in a bootable one).
fn demo_image(len: usize) -> Vec<u8> {
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    let mut v = Vec::with_capacity(len + 8);
    while v.len() < len {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        v.extend_from_slice(&x.to_le_bytes());
    }
    v.truncate(len);
    v
}

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

async fn demo() -> Result<(), String> {
    let clock = Clock(Instant::now());
    println!(
        "proxyctl demo: a private libvirtd and a loopback mirror; nothing outside temp dirs is touched"
    );
    tokio::task::spawn_blocking(install_deps_if_missing)
        .await
        .map_err(|e| e.to_string())??;
    let d = tokio::task::spawn_blocking(testbed::libvirtd::Libvirtd::start)
        .await
        .map_err(|e| e.to_string())?
        .map_err(|e| format!("cannot start the private libvirtd: {e}"))?;
    clock.say(format_args!(
        "libvirtd 9 started (session mode, {}; domain type {})",
        d.dir().display(),
        d.domain_type()
    ));
    let http = testbed::http::HttpServer::start()
        .await
        .map_err(|e| format!("cannot start the loopback mirror: {e}"))?;
    let image = demo_image(8 << 20);
    let sha = sha256_hex(&image);
    http.serve("/demo.raw", image.clone());
    clock.say(format_args!(
        "mirror {} serves an 8 MiB raw image, sha256 {}…",
        http.url("/demo.raw"),
        &sha[..16]
    ));
    // Guest agent sockets: libvirt's session paths under the temp dir are too deep for a
    // unix socket, so they go into a short dir of our own (removed at the end).
    let agent_dir = tempfile_dir()?;
    let result = demo_steps(&clock, &d, &http, &sha, &agent_dir).await;
    let _ = std::fs::remove_dir_all(&agent_dir);
    drop(http);
    let dir = d.dir().to_owned();
    tokio::task::spawn_blocking(move || drop(d))
        .await
        .map_err(|e| e.to_string())?;
    clock.say(format_args!(
        "cleaned up: daemon stopped, {} {}",
        dir.display(),
        if dir.exists() {
            "STILL EXISTS"
        } else {
            "removed"
        }
    ));
    result
}

fn tempfile_dir() -> Result<PathBuf, String> {
    use std::os::unix::fs::PermissionsExt;
    let dir = PathBuf::from(format!("/tmp/proxyctl-ga-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o1777))
        .map_err(|e| format!("{}: {e}", dir.display()))?;
    Ok(dir)
}

async fn demo_steps(
    clock: &Clock,
    lvd: &testbed::libvirtd::Libvirtd,
    http: &testbed::http::HttpServer,
    sha: &str,
    agent_dir: &Path,
) -> Result<(), String> {
    let doc = serde_json::json!({"providers": [{
        "name": "demo",
        "type": "kvm2",
        "images": {"demo-raw": {"url": http.url("/demo.raw"), "sha256": sha, "format": "raw"}},
        "uri": lvd.uri(),
        "pool": lvd.pool_name(),
        "domain_type": lvd.domain_type(),
        // No guest OS: the agent never answers and session networking has no lease, so
        // the instance stays Provisioning (ARP fails in some sandboxes; lease answers empty).
        "address_sources": ["agent", "lease"],
        "agent_socket_dir": agent_dir.display().to_string(),
        "budgets": {"shutdown_secs": 1},
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
        .ensure_image(&ident("demo-raw", "key")?)
        .await
        .map_err(|e| fail("images ensure", e))?;
    bars.clear();
    clock.say(format_args!(
        "images ensure demo-raw: fetched, verified and published {} ({} bytes) in {:.2?}",
        base.volume.name,
        base.capacity,
        started.elapsed()
    ));

    let uid = ident(&format!("demo-{}", std::process::id()), "uid")?;
    let spec = CreateSpec::new(
        uid.clone(),
        "proxyctl demo <egress & co>",
        ident("demo-raw", "key")?,
    )
    .with_memory_mib(128)
    .with_tag(ident("demo", "tag")?)
    .with_user_data(b"#cloud-config\n".to_vec());
    let started = Instant::now();
    let made = p.create(&spec).await.map_err(|e| fail("create", e))?;
    clock.say(format_args!(
        "create {uid}: {} in {:.2?}",
        made.state,
        started.elapsed()
    ));

    let started = Instant::now();
    let got = p.get(&uid).await.map_err(|e| fail("get", e))?;
    clock.say(format_args!(
        "get {uid}: {} (domain {} runs; no guest OS, so no address yet) name={:?} tags=[demo] in {:.2?}",
        got.state,
        p.domain_name(&uid),
        got.name,
        started.elapsed()
    ));
    let listed = p
        .list_by_tag(&ident("demo", "tag")?)
        .await
        .map_err(|e| fail("list", e))?;
    clock.say(format_args!(
        "list --tag demo: {} instance(s)",
        listed.len()
    ));

    let started = Instant::now();
    p.delete(&uid).await.map_err(|e| fail("delete", e))?;
    clock.say(format_args!(
        "delete {uid}: ok in {:.2?} (graceful shutdown, then destroy, undefine, volumes removed)",
        started.elapsed()
    ));
    match p.get(&uid).await {
        Err(e) if e.is_not_found() => clock.say(format_args!("get {uid}: not found, as expected")),
        Ok(i) => return Err(format!("get after delete answered {}", i.state)),
        Err(e) => return Err(fail("get after delete", e)),
    }
    p.shutdown().await;
    Ok(())
}
