//! Convergence under faults (issue 19): create and delete fail at every step, with each fault
//! kind, and the next call converges.
//!
//! The provider runs with a hook at every arrow of its step sequence (feature
//! `fault-injection`, test-only; [`egress_kvm2::faults::Point`]) and talks to the private
//! libvirtd through a unix relay ([`common::relay`]). At one point per run the hook injects
//! one fault kind:
//!
//! | kind | what happens at the point |
//! | --- | --- |
//! | `kill` | the daemon gets `SIGKILL` (restarted before the retry; its qemu processes live on) |
//! | `cut` | every connection through the relay is closed (the shared link and a dedicated upload connection) |
//! | `error` | the next call is answered with `INTERNAL_ERROR` by the relay (scripted: the daemon cannot fail a call on demand) |
//! | `drop` | the hook never returns and the test drops the operation's future |
//! | `drop-mid-call` | the step's first call runs on the daemon; the test drops the future while its reply is held back |
//!
//! After a faulted `create`: either a retried `create` must converge (exactly one domain,
//! ours, running, with its forward; exactly the volumes it needs: base, marker, overlay,
//! seed; nothing else, no lease left), then `delete` leaves only the base and its marker; or a `delete`
//! right after the partial create must remove everything of the instance, and the next
//! `create` converges. After a faulted `delete`: a retried `delete` leaves nothing of the
//! instance. Each (point × kind × follow-up) is one run; the test prints how many it covered.
//!
//! A cut in the middle of a call is tested at every call, not only at each step's first:
//! [`reply_lost_at_every_call_converges`] counts the calls of a clean create and delete
//! through the relay, then, for each call in turn, lets it run on the daemon, drops its reply
//! and cuts the connection, and checks that the retry converges.
//! No guest OS: domains run into the BIOS and stay `Provisioning`.

use egress_kvm2_testkit as common;

use std::collections::BTreeSet;
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::relay::LibvirtRelay;
use common::*;
use egress_kvm2::Kvm2Provider;
use egress_kvm2::faults::Point;
use egress_kvm2::link::{Link, LinkPool};
use egress_provider::{CreateSpec, InstanceState, Provider, ProviderError};
use futures::FutureExt;
use libvirt_remote::proto::names::DomainState;
use libvirt_remote::proto::procs::connect::{
    ConnectListAllDomains, ConnectListAllDomainsArgs, ConnectListAllDomainsFlags,
};
use libvirt_remote::proto::procs::domain::{
    DomainDestroyFlags, DomainDestroyFlagsValues, DomainFlagsArgs, DomainGetState,
    DomainLookupByName, DomainLookupByNameArgs, DomainUndefineFlags, DomainUndefineFlagsValues,
};
use libvirt_remote::proto::procs::storage::{
    StoragePoolFlagsArgs, StoragePoolLookupByName, StoragePoolLookupByNameArgs, StoragePoolRefresh,
};
use serde_json::json;
use testbed::http::HttpServer;
use testbed::libvirtd::{Libvirtd, short_socket_dir};
use tokio::sync::Notify;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Kill,
    Cut,
    Error,
    Drop,
    DropMidCall,
    /// Not a fault: the next call's reply is held back [`SLOW_REPLY`] (a slow daemon).
    SlowReply,
}

/// How long [`Kind::SlowReply`] holds a reply back.
const SLOW_REPLY: Duration = Duration::from_secs(8);

impl Kind {
    fn as_str(self) -> &'static str {
        match self {
            Self::Kill => "kill",
            Self::Cut => "cut",
            Self::Error => "error",
            Self::Drop => "drop",
            Self::DropMidCall => "drop-mid-call",
            Self::SlowReply => "slow-reply",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Then {
    /// Retry the faulted call.
    Retry,
    /// Delete right after the faulted create.
    Delete,
}

const ENTRY_IMAGE: &str = "img";

struct Bed {
    d: Arc<Mutex<Libvirtd>>,
    relay: Arc<LibvirtRelay>,
    http: HttpServer,
    agent: tempfile::TempDir,
    entry: String,
    port: u16,
    body: Vec<u8>,
    /// The (point, kind) the hook fires at, once.
    armed: Arc<Mutex<Option<(Point, Kind)>>>,
    /// Points the hook fired at.
    fired: Arc<Mutex<Vec<Point>>>,
    /// Every point reached, armed or not, in order.
    seen: Arc<Mutex<Vec<Point>>>,
    reached: Arc<Notify>,
    /// Checks and clean-ups straight to the daemon's socket (not through the relay), so a
    /// provider bug cannot hide behind its own calls.
    host: LinkPool,
    pool: String,
    pool_path: std::path::PathBuf,
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

impl Bed {
    async fn start(entry: &str) -> Option<Self> {
        let d = Libvirtd::start_or_skip()?;
        let http = HttpServer::start().await.expect("loopback http server");
        let body = pattern(1 << 20, 41);
        http.serve("/img.raw", body.clone());
        let relay = Arc::new(LibvirtRelay::start(d.dir(), d.socket_path()));
        let host = LinkPool::new(&d.uri(), Duration::from_secs(10), Duration::from_secs(10))
            .expect("valid uri");
        Some(Self {
            pool: d.pool_name().to_owned(),
            pool_path: d.pool_path().to_path_buf(),
            d: Arc::new(Mutex::new(d)),
            relay,
            http,
            agent: short_socket_dir(),
            entry: entry.to_owned(),
            port: free_port(),
            body,
            armed: Arc::default(),
            fired: Arc::default(),
            seen: Arc::default(),
            reached: Arc::default(),
            host,
        })
    }

    fn domain(&self) -> String {
        format!("{}-u1", self.entry)
    }

    fn spec() -> CreateSpec {
        CreateSpec::new(id("u1"), "u1", id(ENTRY_IMAGE))
            .with_memory_mib(32)
            .with_tag(id("t"))
            .with_user_data(b"#cloud-config\n".to_vec())
    }

    /// A provider through the relay, with the hook.
    fn provider(&self) -> Kvm2Provider {
        self.provider_with(
            &json!({"shutdown_secs": 0, "transfer_secs": 20, "call_secs": 10, "connect_secs": 5}),
        )
    }

    /// [`provider`](Self::provider) with these budgets.
    fn provider_with(&self, budgets: &serde_json::Value) -> Kvm2Provider {
        let network = json!({"type": "user", "port_forwards": [{"host_port": self.port, "guest_port": 8888}]});
        self.provider_on(budgets, &network, &json!({}))
    }

    /// [`provider_with`](Self::provider_with) on this `network`, with the `extra` settings.
    fn provider_on(
        &self,
        budgets: &serde_json::Value,
        network: &serde_json::Value,
        extra: &serde_json::Value,
    ) -> Kvm2Provider {
        let d = self.d.lock().unwrap();
        let mut doc = json!({
            "name": self.entry, "type": "kvm2",
            "images": {ENTRY_IMAGE: image(&self.http.url("/img.raw"), &self.body)},
            "uri": self.relay.uri(), "pool": d.pool_name(), "domain_type": d.domain_type(),
            "address_sources": ["agent", "lease"],
            "agent_socket_dir": self.agent.path().display().to_string(),
            "network": network,
            "budgets": budgets,
        });
        for (k, v) in extra.as_object().expect("extra settings are an object") {
            doc[k] = v.clone();
        }
        drop(d);
        let cfg = egress_provider::ProvidersConfig::from_value(&json!({"providers": [doc]}))
            .expect("valid config");
        let e = &cfg.providers[0];
        let armed = self.armed.clone();
        let fired = self.fired.clone();
        let seen = self.seen.clone();
        let reached = self.reached.clone();
        let d = self.d.clone();
        let relay = self.relay.clone();
        let hook: egress_kvm2::faults::FaultHook = Arc::new(move |p: Point| {
            seen.lock().unwrap().push(p);
            let fire = {
                let mut a = armed.lock().unwrap();
                match *a {
                    Some((at, kind)) if at == p => {
                        *a = None;
                        Some(kind)
                    }
                    _ => None,
                }
            };
            let Some(kind) = fire else {
                return async {}.boxed();
            };
            fired.lock().unwrap().push(p);
            match kind {
                Kind::Kill => {
                    d.lock().unwrap().kill().unwrap();
                    async {}.boxed()
                }
                Kind::Cut => {
                    relay.cut();
                    async {}.boxed()
                }
                Kind::DropMidCall => {
                    relay.hold_next_reply();
                    async {}.boxed()
                }
                Kind::Error => {
                    relay.fail_next_call();
                    async {}.boxed()
                }
                Kind::SlowReply => {
                    relay.hold_next_reply();
                    let relay = relay.clone();
                    tokio::spawn(async move {
                        relay.reply_held().await;
                        tokio::time::sleep(SLOW_REPLY).await;
                        relay.release();
                    });
                    async {}.boxed()
                }
                Kind::Drop => {
                    let reached = reached.clone();
                    async move {
                        reached.notify_one();
                        std::future::pending::<()>().await;
                    }
                    .boxed()
                }
            }
        });
        Kvm2Provider::from_entry(e, e.settings().expect("valid settings"))
            .expect("provider builds")
            .with_fault_hook(hook)
    }

    fn volumes(&self) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(&self.pool_path)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    async fn link(&self) -> Arc<Link> {
        self.host.link().await.expect("the daemon answers")
    }

    async fn domains(&self) -> Vec<String> {
        let all = self
            .link()
            .await
            .call::<ConnectListAllDomains>(&ConnectListAllDomainsArgs {
                need_results: 1,
                flags: ConnectListAllDomainsFlags::empty(),
            })
            .await
            .expect("list domains");
        let mut v: Vec<String> = all.domains.iter().map(|d| d.name.to_string()).collect();
        v.sort();
        v
    }

    async fn refresh_pool(&self) {
        let link = self.link().await;
        let pool = link
            .call::<StoragePoolLookupByName>(&StoragePoolLookupByNameArgs {
                name: self.pool.as_str().into(),
            })
            .await
            .expect("pool")
            .pool;
        link.call::<StoragePoolRefresh>(&StoragePoolFlagsArgs {
            pool,
            flags: Default::default(),
        })
        .await
        .expect("pool refresh");
    }

    /// A clean create and delete of `spec`, their calls counted through the relay:
    /// (calls of the create, calls of the delete).
    async fn count_calls(&self, p: &Kvm2Provider, spec: &CreateSpec) -> (u64, u64) {
        self.clean_slate().await;
        let c0 = self.relay.calls();
        p.create(spec).await.unwrap();
        let c1 = self.relay.calls();
        p.delete(&spec.uid).await.unwrap();
        let c2 = self.relay.calls();
        (c1 - c0, c2 - c1)
    }

    /// No domain, no volume: the start of every run (straight to the daemon, not through
    /// the provider).
    async fn clean_slate(&self) {
        let link = self.link().await;
        for name in self.domains().await {
            let Ok(dom) = link
                .call::<DomainLookupByName>(&DomainLookupByNameArgs {
                    name: name.as_str().into(),
                })
                .await
            else {
                continue;
            };
            let _ = link
                .call::<DomainDestroyFlags>(&DomainFlagsArgs {
                    dom: dom.dom.clone(),
                    flags: DomainDestroyFlagsValues::empty(),
                })
                .await;
            let _ = link
                .call::<DomainUndefineFlags>(&DomainFlagsArgs {
                    dom: dom.dom,
                    flags: DomainUndefineFlagsValues::empty(),
                })
                .await;
        }
        for v in self.volumes() {
            let _ = std::fs::remove_file(self.pool_path.join(v));
        }
        self.refresh_pool().await;
        assert!(
            self.domains().await.is_empty(),
            "{:?}",
            self.domains().await
        );
        assert!(self.volumes().is_empty(), "{:?}", self.volumes());
    }

    fn base_volumes(&self) -> Vec<String> {
        let base = format!("base-{}-{ENTRY_IMAGE}.raw", self.entry);
        vec![base.clone(), format!("{base}.sha256")]
    }

    fn instance_volumes(&self) -> Vec<String> {
        let mut v = self.base_volumes();
        v.push(format!("disk-{}-u1.qcow2", self.entry));
        v.push(format!("seed-{}-u1.img", self.entry));
        v.sort();
        v
    }

    /// Exactly one domain, ours, running, with its forward; exactly the volumes it needs.
    async fn check_converged(&self, p: &Kvm2Provider, what: &str) -> Result<(), String> {
        let name = self.domain();
        if self.domains().await != [name.clone()] {
            return Err(format!(
                "{what}: domains {:?}, want [{name}]",
                self.domains().await
            ));
        }
        let link = self.link().await;
        let dom = link
            .call::<DomainLookupByName>(&DomainLookupByNameArgs {
                name: name.as_str().into(),
            })
            .await
            .map_err(|e| e.to_string())?
            .dom;
        let st = link
            .call::<DomainGetState>(&DomainFlagsArgs {
                dom: dom.clone(),
                flags: Default::default(),
            })
            .await
            .map_err(|e| e.to_string())?;
        if st.state != DomainState::RUNNING {
            return Err(format!(
                "{what}: domain {name} is in state {st:?}, want running"
            ));
        }
        match p.get(&id("u1")).await {
            Ok(i) if i.state == InstanceState::Provisioning => {}
            other => return Err(format!("{what}: get = {other:?}, want Provisioning")),
        }
        self.refresh_pool().await;
        if self.volumes() != self.instance_volumes() {
            return Err(format!(
                "{what}: volumes {:?}, want exactly {:?}",
                self.volumes(),
                self.instance_volumes()
            ));
        }
        let usernet = egress_kvm2::monitor::hmp(&link, &dom, "info usernet")
            .await
            .map_err(|e| e.to_string())?;
        let forwards =
            egress_kvm2::monitor::parse_usernet(&usernet, "hostnet0").unwrap_or_default();
        if forwards.iter().filter(|f| f.host_port == self.port).count() != 1 {
            return Err(format!(
                "{what}: forwards {forwards:?}, want one on port {}",
                self.port
            ));
        }
        Ok(())
    }

    /// Nothing of the instance: no domain, no overlay or seed (the base and its marker stay;
    /// `allow` names domains and volumes that may stay too).
    async fn check_gone(&self, what: &str, allow: impl Fn(&str) -> bool) -> Result<(), String> {
        let left: Vec<String> = self
            .domains()
            .await
            .into_iter()
            .filter(|d| !allow(d))
            .collect();
        if !left.is_empty() {
            return Err(format!("{what}: domains left {left:?}"));
        }
        let base: BTreeSet<String> = self.base_volumes().into_iter().collect();
        let left: Vec<String> = self
            .volumes()
            .into_iter()
            .filter(|v| !base.contains(v) && !allow(v))
            .collect();
        if !left.is_empty() {
            return Err(format!("{what}: volumes left {left:?}"));
        }
        Ok(())
    }

    fn restart_if_killed(&self, kind: Kind) {
        if kind == Kind::Kill {
            self.d.lock().unwrap().restart().unwrap();
        }
    }

    /// Runs `op` with the fault armed at `point`: it must fail Transient, or absorb the
    /// fault (a cut with no call in flight is noticed before the next call, which dials
    /// anew), or, for `drop`, reach the point and be dropped there. `Ok(true)`: it failed.
    async fn faulted<T: std::fmt::Debug>(
        &self,
        point: Point,
        kind: Kind,
        op: impl Future<Output = Result<T, ProviderError>>,
    ) -> Result<bool, String> {
        self.fired.lock().unwrap().clear();
        *self.armed.lock().unwrap() = Some((point, kind));
        let outcome = if kind == Kind::Drop {
            tokio::select! {
                r = op => Err(format!("finished with {r:?} without reaching the point")),
                () = self.reached.notified() => Ok(true),
            }
        } else if kind == Kind::DropMidCall {
            let r = tokio::select! {
                r = op => Err(format!("finished with {r:?} before its call's reply was held")),
                () = self.relay.reply_held() => Ok(true),
            };
            self.relay.release();
            r
        } else {
            match tokio::time::timeout(Duration::from_secs(60), op).await {
                Err(_) => Err("did not return within 60 s".to_owned()),
                Ok(Ok(_)) if kind == Kind::Cut => Ok(false),
                Ok(Ok(v)) => Err(format!("succeeded ({v:?}) despite the fault")),
                Ok(Err(e)) if e.is_transient() => Ok(true),
                Ok(Err(e)) => Err(format!(
                    "failed {} (want Transient): {}",
                    e.kind(),
                    e.chain()
                )),
            }
        };
        *self.armed.lock().unwrap() = None;
        self.relay.disarm();
        if self.fired.lock().unwrap().as_slice() != [point] {
            return Err(format!("the fault never fired (outcome {outcome:?})"));
        }
        outcome
    }
}

/// Retries `op` on Transient errors (a controller's backoff, shortened) until it succeeds.
async fn converge<T, F, Fut>(what: &str, mut op: F) -> Result<T, String>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, ProviderError>>,
{
    let mut last = None;
    for _ in 0..15 {
        match op().await {
            Ok(v) => return Ok(v),
            Err(e) if e.is_transient() => {
                last = Some(e.chain().to_string());
                tokio::time::sleep(Duration::from_millis(300)).await;
            }
            Err(e) => return Err(format!("{what}: {} error: {}", e.kind(), e.chain())),
        }
    }
    Err(format!("{what}: still Transient after 15 tries: {last:?}"))
}

/// How a run went: whether the fault made the call fail (else it was absorbed).
type RunResult = Result<bool, String>;

async fn create_run(
    bed: &Bed,
    p: &Kvm2Provider,
    point: Point,
    kind: Kind,
    then: Then,
) -> RunResult {
    bed.clean_slate().await;
    let spec = Bed::spec();
    let failed = bed.faulted(point, kind, p.create(&spec)).await?;
    bed.restart_if_killed(kind);
    match then {
        Then::Retry => {
            converge("retried create", || p.create(&spec)).await?;
            bed.check_converged(p, "after the retried create").await?;
            converge("delete", || p.delete(&spec.uid)).await?;
            bed.check_gone("after delete", |_| false).await?;
        }
        Then::Delete => {
            converge("delete after a partial create", || p.delete(&spec.uid)).await?;
            // An interrupted image fetch's unmarked base (always allowed by `check_gone`)
            // and its lease belong to the image cache: the next ensure of the key deletes
            // them (the retry runs check that).
            let image_lease = format!("lease.{}.image.", bed.entry);
            bed.check_gone("after deleting a partial create", |v| {
                v.starts_with(&image_lease)
            })
            .await?;
        }
    }
    Ok(failed)
}

async fn delete_run(bed: &Bed, p: &Kvm2Provider, point: Point, kind: Kind) -> RunResult {
    bed.clean_slate().await;
    let spec = Bed::spec();
    converge("create", || p.create(&spec)).await?;
    let failed = bed.faulted(point, kind, p.delete(&spec.uid)).await?;
    bed.restart_if_killed(kind);
    converge("retried delete", || p.delete(&spec.uid)).await?;
    bed.check_gone("after the retried delete", |_| false)
        .await?;
    match p.get(&spec.uid).await {
        Err(e) if e.is_not_found() => Ok(failed),
        other => Err(format!("get after delete = {other:?}, want NotFound")),
    }
}

async fn every_step(kind: Kind) {
    let entry = format!("f{}", kind.as_str());
    let Some(bed) = Bed::start(&entry).await else {
        return;
    };
    // One provider for the whole run, like a long-lived controller: in-process state
    // (links, locks, single flights) carries over from each fault to the next call.
    let provider = bed.provider();
    let started = Instant::now();
    let (mut covered, mut absorbed) = (0, 0);
    let mut failures = Vec::new();
    for point in Point::ALL {
        let runs: &[Option<Then>] = if point.is_create() {
            &[Some(Then::Retry), Some(Then::Delete)]
        } else {
            &[None]
        };
        for &then in runs {
            let run_started = Instant::now();
            let outcome = match then {
                Some(then) => create_run(&bed, &provider, point, kind, then).await,
                None => delete_run(&bed, &provider, point, kind).await,
            };
            let name = format!(
                "{point} × {} → {}",
                kind.as_str(),
                if then == Some(Then::Delete) {
                    "delete"
                } else {
                    "retry"
                }
            );
            match outcome {
                Ok(failed) => {
                    covered += 1;
                    absorbed += usize::from(!failed);
                    let how = if failed {
                        "failed, then converged"
                    } else {
                        "absorbed"
                    };
                    println!("ok   {name}: {how} ({:.1?})", run_started.elapsed());
                }
                Err(e) => {
                    println!("FAIL {name}: {e}");
                    failures.push(format!("{name}: {e}"));
                    // Leave the daemon usable for the next run.
                    let mut d = bed.d.lock().unwrap();
                    if !d.is_running() {
                        let _ = d.restart();
                    }
                }
            }
        }
    }
    let total = Point::ALL
        .iter()
        .map(|p| if p.is_create() { 2 } else { 1 })
        .sum::<usize>();
    println!(
        "fault kind {}: {covered} of {total} (step × follow-up) runs converged ({absorbed} absorbed the fault) in {:.1?}",
        kind.as_str(),
        started.elapsed()
    );
    assert!(
        failures.is_empty(),
        "{} of {total} runs did not converge:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn daemon_killed_at_every_step_converges() {
    every_step(Kind::Kill).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn link_cut_at_every_step_converges() {
    every_step(Kind::Cut).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropped_future_mid_call_at_every_step_converges() {
    every_step(Kind::DropMidCall).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn daemon_error_at_every_step_converges() {
    every_step(Kind::Error).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropped_future_at_every_step_converges() {
    every_step(Kind::Drop).await;
}

/// A cut in the middle of **every** call of `create` and `delete`, not only the first call of
/// each step: the call reaches the daemon and runs, its reply is lost and the connection cut.
/// The calls are counted through the relay on a clean run first.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reply_lost_at_every_call_converges() {
    let Some(bed) = Bed::start("fcall").await else {
        return;
    };
    let p = bed.provider();
    let spec = Bed::spec();
    let (creates, deletes) = bed.count_calls(&p, &spec).await;
    let started = Instant::now();
    let mut failures = Vec::new();
    let mut absorbed = 0;
    for n in 1..=creates {
        bed.clean_slate().await;
        bed.relay.lose_reply_of_call(n);
        let r = async {
            let failed = p.create(&spec).await.is_err();
            bed.relay.disarm();
            converge("retried create", || p.create(&spec)).await?;
            bed.check_converged(&p, "after the retried create").await?;
            converge("delete", || p.delete(&spec.uid)).await?;
            bed.check_gone("after delete", |_| false).await?;
            Ok::<bool, String>(failed)
        }
        .await;
        match r {
            Ok(failed) => absorbed += usize::from(!failed),
            Err(e) => failures.push(format!("create call {n} of {creates}: {e}")),
        }
    }
    for n in 1..=deletes {
        bed.clean_slate().await;
        let r = async {
            converge("create", || p.create(&spec)).await?;
            bed.relay.lose_reply_of_call(n);
            let failed = p.delete(&spec.uid).await.is_err();
            bed.relay.disarm();
            converge("retried delete", || p.delete(&spec.uid)).await?;
            bed.check_gone("after the retried delete", |_| false)
                .await?;
            Ok::<bool, String>(failed)
        }
        .await;
        match r {
            Ok(failed) => absorbed += usize::from(!failed),
            Err(e) => failures.push(format!("delete call {n} of {deletes}: {e}")),
        }
    }
    println!(
        "reply lost at each of {creates} create calls and {deletes} delete calls: {} converged ({absorbed} absorbed) in {:.1?}",
        creates + deletes - failures.len() as u64,
        started.elapsed()
    );
    assert!(
        failures.is_empty(),
        "did not converge:\n{}",
        failures.join("\n")
    );
}

/// Exploratory (not in the suite: ~40 daemon restarts): the daemon killed (`SIGKILL`) right after each
/// call of `create` reached it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "exploratory: a daemon restart per call; run by hand"]
async fn daemon_killed_during_every_call_converges() {
    let Some(bed) = Bed::start("fkcall").await else {
        return;
    };
    let p = bed.provider();
    let spec = Bed::spec();
    let (creates, _) = bed.count_calls(&p, &spec).await;
    let mut failures = Vec::new();
    for n in 1..=creates {
        bed.clean_slate().await;
        let d = bed.d.clone();
        bed.relay.after_call(n, move || {
            let _ = d.lock().unwrap().kill();
        });
        let r = async {
            let _ = p.create(&spec).await;
            bed.relay.disarm();
            bed.restart_if_killed(Kind::Kill);
            converge("retried create", || p.create(&spec)).await?;
            bed.check_converged(&p, "after the retried create").await?;
            converge("delete", || p.delete(&spec.uid)).await?;
            bed.check_gone("after delete", |_| false).await?;
            Ok::<(), String>(())
        }
        .await;
        println!("create call {n}: {r:?}");
        if let Err(e) = r {
            failures.push(format!("create call {n} of {creates}: {e}"));
            let mut d = bed.d.lock().unwrap();
            if !d.is_running() {
                let _ = d.restart();
            }
        }
    }
    assert!(
        failures.is_empty(),
        "did not converge:\n{}",
        failures.join("\n")
    );
}

/// A domain start slower than the call budget but within the start budget (qemu starting on
/// a busy host) completes the create at the first try, on the link it started on: the
/// 20-host fleet's retries came from starts that outlived the call budget (issue 19). The
/// relay holds the start's reply back for [`SLOW_REPLY`] (8 s), over the 5 s call budget.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_start_slower_than_the_call_budget_completes_at_the_first_try() {
    let Some(bed) = Bed::start("fslow").await else {
        return;
    };
    bed.clean_slate().await;
    let p = bed.provider_with(&json!({
        "shutdown_secs": 0, "transfer_secs": 20, "call_secs": 5, "start_secs": 60, "connect_secs": 5,
    }));
    let spec = Bed::spec();
    // Base image first, so that the armed point is the only slow step.
    p.ensure_image(&id(ENTRY_IMAGE))
        .await
        .expect("ensure image");
    bed.fired.lock().unwrap().clear();
    *bed.armed.lock().unwrap() = Some((Point::CreateStart, Kind::SlowReply));
    let started = Instant::now();
    let r = p.create(&spec).await;
    assert_eq!(bed.fired.lock().unwrap().as_slice(), [Point::CreateStart]);
    assert!(
        r.is_ok(),
        "a start answered after {SLOW_REPLY:?} (call budget 5 s, start budget 60 s) failed the create: {}",
        r.as_ref()
            .map_or_else(|e| e.chain().to_string(), |_| String::new())
    );
    assert!(started.elapsed() >= SLOW_REPLY, "the reply was not held");
    bed.check_converged(&p, "after a slow start").await.unwrap();
    converge("delete", || p.delete(&spec.uid)).await.unwrap();
    bed.check_gone("after delete", |_| false).await.unwrap();
}

/// The calls between two snapshots of [`LibvirtRelay::by_procedure`], by procedure name.
fn calls_between(
    before: &std::collections::BTreeMap<(u32, i32), u64>,
    after: &std::collections::BTreeMap<(u32, i32), u64>,
) -> std::collections::BTreeMap<String, u64> {
    after
        .iter()
        .filter_map(|(&(program, number), &n)| {
            let d = n - before.get(&(program, number)).copied().unwrap_or(0);
            let name = libvirt_remote::proto::procs::lookup(program, number)
                .map_or_else(|| format!("{program:#x}/{number}"), |i| i.name.to_owned());
            (d > 0).then_some((name, d))
        })
        .collect()
}

/// The calls of one create (image cached, network as in the fleet: user networking without
/// forwards), by procedure, counted through the relay: once with a prompt start and once with
/// the start's reply held back [`SLOW_REPLY`] with a 3 s lease (renewed every second), so the
/// calls a long-lasting create adds show up. Prints both tables; asserts what does not
/// depend on timing: a create's own calls, and that a slow start adds no call of its own
/// beyond the lease's renewals.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_per_create_by_procedure() {
    let Some(bed) = Bed::start("fcount").await else {
        return;
    };
    bed.clean_slate().await;
    let p = bed.provider_on(
        &json!({
            "shutdown_secs": 0, "transfer_secs": 20, "call_secs": 5, "start_secs": 60,
            "connect_secs": 5, "lease_secs": 3,
        }),
        &json!({"type": "user"}),
        &json!({}),
    );
    let spec = Bed::spec();
    p.ensure_image(&id(ENTRY_IMAGE))
        .await
        .expect("ensure image");
    let mut tables = Vec::new();
    for slow in [false, true] {
        bed.fired.lock().unwrap().clear();
        if slow {
            *bed.armed.lock().unwrap() = Some((Point::CreateStart, Kind::SlowReply));
        }
        let before = bed.relay.by_procedure();
        let started = Instant::now();
        p.create(&spec).await.expect("create");
        let took = started.elapsed();
        let calls = calls_between(&before, &bed.relay.by_procedure());
        let before = bed.relay.by_procedure();
        converge("delete", || p.delete(&spec.uid)).await.unwrap();
        let deletes = calls_between(&before, &bed.relay.by_procedure());
        if slow {
            assert_eq!(bed.fired.lock().unwrap().as_slice(), [Point::CreateStart]);
        }
        tables.push((slow, took, calls, deletes));
    }
    let names: BTreeSet<&String> = tables
        .iter()
        .flat_map(|(_, _, c, d)| c.keys().chain(d.keys()))
        .collect();
    println!("| procedure | create | create, start held {SLOW_REPLY:?} | delete |");
    println!("|---|---|---|---|");
    let cell =
        |m: &std::collections::BTreeMap<String, u64>, n: &str| m.get(n).copied().unwrap_or(0);
    for n in &names {
        println!(
            "| {n} | {} | {} | {} |",
            cell(&tables[0].2, n),
            cell(&tables[1].2, n),
            cell(&tables[0].3, n)
        );
    }
    let total = |m: &std::collections::BTreeMap<String, u64>| m.values().sum::<u64>();
    println!(
        "| **total** | {} ({:.1?}) | {} ({:.1?}) | {} |",
        total(&tables[0].2),
        tables[0].1,
        total(&tables[1].2),
        tables[1].1,
        total(&tables[0].3)
    );
    // What a slow start adds is renewals only.
    let mut extra = tables[1].2.clone();
    for (n, c) in &tables[0].2 {
        if let Some(e) = extra.get_mut(n) {
            *e = e.saturating_sub(*c);
        }
    }
    extra.retain(|n, c| *c > 0 && n != "DomainSetMetadata");
    assert!(extra.is_empty(), "a slow start added calls: {extra:?}");
}

/// A create waiting for its host's start turn holds no lease (issue 19): with one turn per
/// host and the first create's start held on the daemon, a second create (another uid) waits
/// for the turn before its uid lease, so it neither renews a lease nor keeps another
/// controller waiting while it queues. Before, it took its lease, made its volumes and defined
/// its domain, then waited at the start holding the lease (renewed every `lease_secs / 3`:
/// about five renewals per create in the 20 × 10 fleet).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_create_waiting_for_its_start_turn_holds_no_lease() {
    let Some(bed) = Bed::start("fturn").await else {
        return;
    };
    bed.clean_slate().await;
    let p = Arc::new(bed.provider_on(
        &json!({
            "shutdown_secs": 0, "transfer_secs": 20, "call_secs": 10, "start_secs": 60,
            "connect_secs": 5, "lease_secs": 3,
        }),
        &json!({"type": "user"}),
        &json!({"max_parallel_starts": 1}),
    ));
    p.ensure_image(&id(ENTRY_IMAGE))
        .await
        .expect("ensure image");
    let first = Bed::spec();
    let second = CreateSpec::new(id("u2"), "u2", id(ENTRY_IMAGE))
        .with_memory_mib(32)
        .with_tag(id("t"));
    // The first create's start runs on the daemon; its reply waits until released.
    *bed.armed.lock().unwrap() = Some((Point::CreateStart, Kind::DropMidCall));
    let a = tokio::spawn({
        let (p, spec) = (p.clone(), first.clone());
        async move { p.create(&spec).await }
    });
    bed.relay.reply_held().await;
    let from = bed.seen.lock().unwrap().len();
    let b = tokio::spawn({
        let (p, spec) = (p.clone(), second.clone());
        async move { p.create(&spec).await }
    });
    // The second create gets as far as it can while the only turn is taken.
    let adopted = || bed.seen.lock().unwrap()[from..].contains(&Point::CreateAdopt);
    let waited = Instant::now();
    while !adopted() && waited.elapsed() < Duration::from_secs(10) {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let reached = bed.seen.lock().unwrap()[from..].to_vec();
    let leases: Vec<String> = bed
        .domains()
        .await
        .into_iter()
        .filter(|d| d.starts_with("lease."))
        .collect();
    bed.relay.release();
    let (ra, rb) = (a.await.unwrap(), b.await.unwrap());
    assert!(
        !reached.contains(&Point::CreateAdopt),
        "the second create went on past its lock while the only start turn was taken: {reached:?}"
    );
    assert_eq!(
        leases,
        ["lease.fturn.uid.u1"],
        "only the create holding the turn holds a lease"
    );
    ra.expect("the first create");
    rb.expect("the second create, after the first one's start");
    for spec in [&first, &second] {
        converge("delete", || p.delete(&spec.uid)).await.unwrap();
    }
    bed.check_gone("after delete", |_| false).await.unwrap();
}
