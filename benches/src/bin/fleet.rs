//! `fleet`: one provider process, many hosts (issue 19). Each host is a private session
//! libvirtd of the testbed with its own provider entry; every instance is an OS-less domain
//! (its base image is a boot sector that halts the CPU; it stays `Provisioning`: no guest
//! OS, no address).
//!
//! ```text
//! cargo build --release -p benches --bin fleet
//! target/release/fleet [--hosts 20] [--per-host 10] [--in-flight 20] [--freeze-host 7] [--pinned] [--idle-secs 20]
//! ```
//!
//! Phases, each timed: ensure the base image on every host; `create` of `hosts × per-host`
//! instances with `in-flight` at a time; `get` of all of them; `list_by_tag` per host; `get`
//! of all of them again while one daemon is frozen with SIGSTOP (its instances must answer
//! `Transient` within the call budget, the others as before); `delete` of all. Between the
//! creates and the gets the process idles `--idle-secs` with every link connected: its CPU per
//! second there (keepalive, timers) is in every phase's figure, in proportion to the phase's
//! wall time. For each
//! phase: wall time, operations, wall latency per operation (p50, p99, max), and the
//! **provider's CPU per operation** (user + system time of this process over the phase,
//! `getrusage(RUSAGE_SELF)`: the daemons and qemu are other processes, so their work is not
//! in it), and this process's RSS (`VmRSS`, `VmHWM`). Targets (issue 19): ≤ 5 ms of provider
//! CPU per create, ≤ 1 ms per get, RSS ≤ 64 MiB, a frozen host slows no other host.
//!
//! Progress goes to stderr, the report (markdown) to stdout. Nothing is left behind: the
//! daemons (and their qemu processes) die with their temp dirs at exit.

// Statistics over a few hundred samples: f64 is exact enough.
#![allow(clippy::cast_precision_loss)]

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, Instant};

use egress_kvm2::Kvm2Provider;
use egress_provider::{
    CreateSpec, Identifier, Provider, ProviderError, ProvidersConfig, Sha256Digest,
};
use futures::StreamExt;
use nix::sys::resource::{UsageWho, getrusage};
use serde_json::json;
use sha2::Digest;
use testbed::http::HttpServer;
use testbed::libvirtd::Libvirtd;

/// Call and connect budget of every entry: a frozen host's calls end within it.
const CALL_SECS: u64 = 10;
/// Start budget (`DomainCreateWithFlags`, the provider's default): 200 qemus starting on a
/// small box take longer than a call; starts beyond `max_parallel_starts` (default 4) per
/// host wait in the provider, so the daemon always has a request slot for the other calls.
const START_SECS: u64 = 120;
/// Tries of a create or delete that answers Transient.
const RETRIES: usize = 40;

struct Args {
    hosts: usize,
    per_host: usize,
    in_flight: usize,
    freeze_host: Option<usize>,
    memory_mib: u64,
    /// Keep every daemon on the one CPU the testbed pins it to; otherwise each daemon's
    /// threads are re-pinned to every CPU after its start.
    pinned: bool,
    /// Seconds of idleness measured after the creates (every link connected, no call):
    /// the provider's background CPU (keepalive), which every phase's figure includes.
    idle_secs: u64,
}

fn args() -> Args {
    let mut a = Args {
        hosts: 20,
        per_host: 10,
        in_flight: 20,
        freeze_host: Some(7),
        memory_mib: 16,
        pinned: false,
        idle_secs: 20,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut num = || -> usize {
            it.next()
                .and_then(|v| v.parse().ok())
                .unwrap_or_else(|| panic!("{flag} needs a number"))
        };
        match flag.as_str() {
            "--hosts" => a.hosts = num(),
            "--per-host" => a.per_host = num(),
            "--in-flight" => a.in_flight = num(),
            "--freeze-host" => a.freeze_host = Some(num()),
            "--no-freeze" => a.freeze_host = None,
            "--memory-mib" => a.memory_mib = num() as u64,
            "--pinned" => a.pinned = true,
            "--idle-secs" => a.idle_secs = num() as u64,
            "-h" | "--help" => {
                eprintln!(
                    "fleet [--hosts N] [--per-host N] [--in-flight N] [--freeze-host I | --no-freeze] [--memory-mib M] [--pinned] [--idle-secs S]"
                );
                std::process::exit(0);
            }
            other => panic!("unknown argument {other}"),
        }
    }
    a
}

/// User + system CPU of this process so far.
fn cpu() -> Duration {
    let u = getrusage(UsageWho::RUSAGE_SELF).expect("getrusage");
    let t = |tv: nix::sys::time::TimeVal| {
        Duration::from_secs(tv.tv_sec() as u64) + Duration::from_micros(tv.tv_usec() as u64)
    };
    t(u.user_time()) + t(u.system_time())
}

/// (`VmRSS`, `VmHWM`) of this process, MiB.
fn rss_mib() -> (f64, f64) {
    let s = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| -> f64 {
        s.lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.split_whitespace().next()?.parse::<f64>().ok())
            .unwrap_or(0.0)
            / 1024.0
    };
    (field("VmRSS:"), field("VmHWM:"))
}

fn id(s: &str) -> Identifier {
    Identifier::new(s).expect("valid identifier")
}

/// `op` retried (after 0.5 s) while it answers Transient, at most `RETRIES` times, as a
/// controller would; `on_transient` sees each Transient answer.
async fn retried_while_transient<T, Fut>(
    mut op: impl FnMut() -> Fut,
    mut on_transient: impl FnMut(&ProviderError),
) -> Result<T, String>
where
    Fut: Future<Output = Result<T, ProviderError>>,
{
    let mut last = String::new();
    for _ in 0..RETRIES {
        match op().await {
            Ok(v) => return Ok(v),
            Err(e) if e.is_transient() => {
                last = e.chain().to_string();
                on_transient(&e);
                tokio::time::sleep(Duration::from_millis(500)).await;
            }
            Err(e) => return Err(e.chain().to_string()),
        }
    }
    Err(format!("still Transient after {RETRIES} tries: {last}"))
}

/// One operation per host (with the host's index): `op` on that host's provider.
fn on_each_host<F, Fut>(
    providers: &[Arc<Kvm2Provider>],
    op: F,
) -> Vec<(usize, impl FnOnce() -> Fut + use<F, Fut>)>
where
    F: Fn(Arc<Kvm2Provider>) -> Fut + Clone,
{
    providers
        .iter()
        .enumerate()
        .map(|(h, p)| {
            let (p, op) = (p.clone(), op.clone());
            (h, move || op(p))
        })
        .collect()
}

/// What one phase saw.
struct Phase {
    name: String,
    ops: usize,
    wall: Duration,
    cpu: Duration,
    latencies: Vec<Duration>,
    errors: Vec<String>,
    rss: (f64, f64),
}

impl Phase {
    fn pct(&self, p: f64) -> Duration {
        let mut v = self.latencies.clone();
        v.sort();
        if v.is_empty() {
            return Duration::ZERO;
        }
        let i = ((v.len() as f64 - 1.0) * p).round() as usize;
        v[i]
    }

    fn cpu_per_op(&self) -> Duration {
        self.cpu / self.ops.max(1) as u32
    }

    fn row(&self) -> String {
        format!(
            "| {} | {} | {:.2} s | {:.2} | {:.1} / {:.1} / {:.1} ms | {:.3} ms | {:.1} / {:.1} MiB | {} |",
            self.name,
            self.ops,
            self.wall.as_secs_f64(),
            self.ops as f64 / self.wall.as_secs_f64(),
            self.pct(0.5).as_secs_f64() * 1e3,
            self.pct(0.99).as_secs_f64() * 1e3,
            self.pct(1.0).as_secs_f64() * 1e3,
            self.cpu_per_op().as_secs_f64() * 1e3,
            self.rss.0,
            self.rss.1,
            self.errors.len()
        )
    }
}

/// Runs `ops` with `in_flight` at a time; each op's latency and outcome are recorded, with
/// the index of its host.
async fn phase<F, Fut>(
    name: &str,
    ops: Vec<(usize, F)>,
    in_flight: usize,
) -> (Phase, Vec<(usize, Duration, Result<(), String>)>)
where
    F: FnOnce() -> Fut,
    Fut: Future<Output = Result<(), String>>,
{
    let n = ops.len();
    eprintln!("{name}: {n} operations, {in_flight} in flight…");
    let cpu0 = cpu();
    let t0 = Instant::now();
    let results: Vec<(usize, Duration, Result<(), String>)> = futures::stream::iter(ops)
        .map(|(host, op)| async move {
            let t = Instant::now();
            let r = op().await;
            (host, t.elapsed(), r)
        })
        .buffer_unordered(in_flight)
        .collect()
        .await;
    let wall = t0.elapsed();
    let cpu = cpu().saturating_sub(cpu0);
    let p = Phase {
        name: name.to_owned(),
        ops: n,
        wall,
        cpu,
        latencies: results.iter().map(|(_, d, _)| *d).collect(),
        errors: results
            .iter()
            .filter_map(|(h, _, r)| r.as_ref().err().map(|e| format!("host {h}: {e}")))
            .collect(),
        rss: rss_mib(),
    };
    eprintln!("{}", p.row());
    (p, results)
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let a = args();
    let started = Instant::now();
    eprintln!(
        "fleet: {} hosts × {} instances, {} in flight, daemons {}; load {}",
        a.hosts,
        a.per_host,
        a.in_flight,
        if a.pinned { "pinned" } else { "unpinned" },
        testbed::loadavg()
    );

    // The hosts: private daemons, started four at a time.
    let t = Instant::now();
    let mut daemons: Vec<Libvirtd> = Vec::new();
    for chunk in (0..a.hosts).collect::<Vec<_>>().chunks(4) {
        let started: Vec<Libvirtd> = std::thread::scope(|s| {
            let handles: Vec<_> = chunk
                .iter()
                .map(|_| s.spawn(|| Libvirtd::start().expect("a private libvirtd")))
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        daemons.extend(started);
    }
    let daemons_up = t.elapsed();
    let schedule = if a.pinned {
        "daemons pinned to one CPU (the testbed's default)".to_owned()
    } else {
        let cpus = format!(
            "0-{}",
            std::thread::available_parallelism().map_or(1, std::num::NonZero::get) - 1
        );
        for d in &daemons {
            let ok = std::process::Command::new("taskset")
                .args(["-a", "-p", "-c", &cpus, &d.pid().to_string()])
                .stdout(std::process::Stdio::null())
                .status()
                .is_ok_and(|s| s.success());
            assert!(ok, "taskset could not unpin daemon {}", d.pid());
        }
        format!("daemons unpinned (CPUs {cpus})")
    };
    eprintln!("{} daemons up in {daemons_up:.1?}", daemons.len());

    let http = HttpServer::start().await.expect("loopback http server");
    // 1 MiB whose boot sector halts the CPU (`cli; hlt; jmp $-1`): the BIOS boots it and the
    // vCPU sleeps, so 200 OS-less domains idle instead of spinning in the BIOS under TCG.
    let mut body = vec![0u8; 1 << 20];
    body[..4].copy_from_slice(&[0xfa, 0xf4, 0xeb, 0xfd]);
    body[510..512].copy_from_slice(&[0x55, 0xaa]);
    let sha = Sha256Digest::from_bytes(sha2::Sha256::digest(&body).into());
    http.serve("/img.raw", body);
    let agent = tempfile::Builder::new()
        .prefix("fleet-")
        .tempdir_in("/tmp")
        .expect("agent socket dir");
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(agent.path(), std::fs::Permissions::from_mode(0o1777)).unwrap();
    }
    let providers: Vec<Arc<Kvm2Provider>> = daemons
        .iter()
        .enumerate()
        .map(|(i, d)| {
            let entry = json!({
                "name": format!("h{i:02}"), "type": "kvm2",
                "images": {"img": {"url": http.url("/img.raw"), "sha256": sha.to_string(), "format": "raw"}},
                "uri": d.uri(), "pool": d.pool_name(), "domain_type": d.domain_type(),
                "address_sources": ["agent", "lease"],
                "agent_socket_dir": agent.path().display().to_string(),
                "budgets": {"shutdown_secs": 0, "call_secs": CALL_SECS, "start_secs": START_SECS, "connect_secs": CALL_SECS, "transfer_secs": 60},
            });
            let cfg = ProvidersConfig::from_value(&json!({"providers": [entry]})).unwrap();
            let e = &cfg.providers[0];
            Arc::new(Kvm2Provider::from_entry(e, e.settings().unwrap()).unwrap())
        })
        .collect();
    let uids: Vec<(usize, Identifier)> = (0..a.hosts)
        .flat_map(|h| (0..a.per_host).map(move |i| (h, id(&format!("fleet-{h:02}-{i:02}")))))
        .collect();
    let mut phases = Vec::new();

    // Base images (one fetch per host), not counted in the create figures.
    let ops = on_each_host(&providers, |p| async move {
        p.ensure_image(&id("img"))
            .await
            .map(|_| ())
            .map_err(|e| e.chain().to_string())
    });
    phases.push(phase("ensure image", ops, a.in_flight).await.0);

    // Like a controller: a Transient create is retried (after 0.5 s) until it converges. On a
    // loaded box a domain start can outlast the call budget (the link is marked dead, the
    // start completes on the daemon, the retry adopts the domain).
    let attempts = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    // The retried Transient answers, by what they said (the first 100 characters).
    let retried: Arc<std::sync::Mutex<BTreeMap<String, usize>>> = Arc::default();
    let ops = uids
        .iter()
        .map(|(h, uid)| {
            let p = providers[*h].clone();
            let attempts = attempts.clone();
            let retried = retried.clone();
            let spec = CreateSpec::new(uid.clone(), uid.as_str(), id("img"))
                .with_memory_mib(a.memory_mib)
                .with_tag(id("fleet"));
            (*h, move || async move {
                let create = || {
                    attempts.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    p.create(&spec)
                };
                let tally = |e: &ProviderError| {
                    let what: String = e
                        .chain()
                        .to_string()
                        .replace(spec.uid.as_str(), "<uid>")
                        .replace(p.name(), "<host>")
                        .chars()
                        .take(100)
                        .collect();
                    *retried
                        .lock()
                        .unwrap_or_else(std::sync::PoisonError::into_inner)
                        .entry(what)
                        .or_default() += 1;
                };
                retried_while_transient(create, tally).await.map(|_| ())
            })
        })
        .collect();
    phases.push(phase("create", ops, a.in_flight).await.0);
    let create_attempts = attempts.load(std::sync::atomic::Ordering::Relaxed);

    // Idle: every link connected, no operation. What the process spends per second here
    // (keepalive pings and pongs, timers) is in every phase's CPU figure, in proportion to
    // the phase's wall time.
    let idle = (a.idle_secs > 0).then(|| Duration::from_secs(a.idle_secs));
    let idle_cpu = if let Some(d) = idle {
        eprintln!("idle for {d:?}…");
        let c0 = cpu();
        tokio::time::sleep(d).await;
        Some(cpu().saturating_sub(c0))
    } else {
        None
    };

    let get_ops = |label: &str| {
        let _ = label;
        uids.iter()
            .map(|(h, uid)| {
                let p = providers[*h].clone();
                let uid = uid.clone();
                (*h, move || async move {
                    match p.get(&uid).await {
                        Ok(_) => Ok(()),
                        Err(e) if e.is_transient() => Err(format!("transient: {}", e.chain())),
                        Err(e) => Err(format!("{}: {}", e.kind(), e.chain())),
                    }
                })
            })
            .collect::<Vec<_>>()
    };
    phases.push(phase("get", get_ops("get"), a.in_flight).await.0);

    let per_host = a.per_host;
    let ops = on_each_host(&providers, |p| async move {
        let l = p
            .list_by_tag(&id("fleet"))
            .await
            .map_err(|e| e.chain().to_string())?;
        if l.instances.len() == per_host && l.unreadable.is_empty() {
            Ok(())
        } else {
            Err(format!(
                "listed {} instances, {} unreadable",
                l.instances.len(),
                l.unreadable.len()
            ))
        }
    });
    phases.push(phase("list_by_tag (per host)", ops, a.in_flight).await.0);

    // One host frozen: only its instances answer Transient, within the call budget.
    let mut frozen_report = String::new();
    if let Some(f) = a.freeze_host.filter(|f| *f < a.hosts) {
        daemons[f].freeze().expect("freeze");
        let (p, results) = phase(
            &format!("get, host {f} frozen"),
            get_ops("frozen"),
            a.in_flight,
        )
        .await;
        daemons[f].thaw().expect("thaw");
        let frozen: Vec<&(usize, Duration, Result<(), String>)> =
            results.iter().filter(|(h, _, _)| *h == f).collect();
        let others: Vec<&(usize, Duration, Result<(), String>)> =
            results.iter().filter(|(h, _, _)| *h != f).collect();
        let transient = frozen
            .iter()
            .filter(|(_, _, r)| r.as_ref().is_err_and(|e| e.starts_with("transient")))
            .count();
        let slowest_frozen = frozen.iter().map(|(_, d, _)| *d).max().unwrap_or_default();
        let mut other_lat: Vec<Duration> = others.iter().map(|(_, d, _)| *d).collect();
        other_lat.sort();
        let other_max = other_lat.last().copied().unwrap_or_default();
        let other_p99 = other_lat
            .get(((other_lat.len() as f64 - 1.0) * 0.99).round() as usize)
            .copied()
            .unwrap_or_default();
        let other_errors = others.iter().filter(|(_, _, r)| r.is_err()).count();
        frozen_report = format!(
            "Host {f} frozen (SIGSTOP) during a `get` of all: its {} instances answered Transient {} times, \
             the slowest after {:.2} s (call and connect budgets {CALL_SECS} s); the other {} answered with {} errors, \
             p99 {:.1} ms, max {:.1} ms.",
            frozen.len(),
            transient,
            slowest_frozen.as_secs_f64(),
            others.len(),
            other_errors,
            other_p99.as_secs_f64() * 1e3,
            other_max.as_secs_f64() * 1e3
        );
        eprintln!("{frozen_report}");
        phases.push(p);
    }

    let ops = uids
        .iter()
        .map(|(h, uid)| {
            let p = providers[*h].clone();
            let uid = uid.clone();
            (*h, move || async move {
                // Transient (the thawed host's link died during the freeze, a slow destroy):
                // retried, as a controller would.
                retried_while_transient(|| p.delete(&uid), |_| {}).await
            })
        })
        .collect();
    phases.push(phase("delete", ops, a.in_flight).await.0);

    let left: BTreeMap<usize, usize> = daemons
        .iter()
        .enumerate()
        .map(|(i, d)| {
            let n = d
                .virsh(&["list", "--all", "--name"])
                .unwrap_or_default()
                .lines()
                .filter(|l| !l.trim().is_empty())
                .count();
            (i, n)
        })
        .filter(|(_, n)| *n > 0)
        .collect();

    println!(
        "Fleet run: {} hosts (private libvirtd 9.0 each, one provider entry each) × {} OS-less \
         instances, {} in flight, {schedule}; one provider process; load average at the end {}; \
         daemons up in {:.1} s; whole run {:.0} s.\n",
        a.hosts,
        a.per_host,
        a.in_flight,
        testbed::loadavg(),
        daemons_up.as_secs_f64(),
        started.elapsed().as_secs_f64()
    );
    println!(
        "| phase | ops | wall | ops/s | latency p50 / p99 / max | provider CPU per op | RSS / peak | errors |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    for p in &phases {
        println!("{}", p.row());
    }
    if !frozen_report.is_empty() {
        println!("\n{frozen_report}");
    }
    if let (Some(d), Some(c)) = (idle, idle_cpu) {
        let per_sec = c.as_secs_f64() * 1e3 / d.as_secs_f64();
        let create_wall = phases
            .iter()
            .find(|p| p.name == "create")
            .map_or(0.0, |p| p.wall.as_secs_f64());
        println!(
            "\nIdle ({} links connected, no operation, {:.0} s): provider CPU {per_sec:.2} ms per second; \
             over the create phase's {create_wall:.0} s that is {:.2} ms per create of background.",
            a.hosts,
            d.as_secs_f64(),
            per_sec * create_wall / uids.len().max(1) as f64
        );
    }
    let by = |n: &str| phases.iter().find(|p| p.name == n);
    let peak = phases.iter().map(|p| p.rss.1).fold(0.0, f64::max);
    println!("\nTargets:");
    if let Some(c) = by("create") {
        println!(
            "* creates: {} calls for {} instances (Transient answers retried, CPU per instance includes them)",
            create_attempts, c.ops
        );
        let retried = retried
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        for (what, n) in retried.iter().take(8) {
            println!("  * retried {n}×: {what}");
        }
        let v = c.cpu_per_op().as_secs_f64() * 1e3;
        println!(
            "* provider CPU per create {v:.2} ms (≤ 5 ms: {})",
            if v <= 5.0 { "met" } else { "NOT met" }
        );
    }
    if let Some(g) = by("get") {
        let v = g.cpu_per_op().as_secs_f64() * 1e3;
        println!(
            "* provider CPU per get {v:.3} ms (≤ 1 ms: {})",
            if v <= 1.0 { "met" } else { "NOT met" }
        );
    }
    println!(
        "* peak RSS {peak:.1} MiB (≤ 64 MiB: {})",
        if peak <= 64.0 { "met" } else { "NOT met" }
    );
    for p in &phases {
        for e in p.errors.iter().take(5) {
            println!("* {}: {e}", p.name);
        }
    }
    if !left.is_empty() {
        println!("* domains left after delete: {left:?}");
    }
}
