//! A real egress guest end to end, through the provider API only.
//!
//! The guest is the image `scripts/build-guest-image` makes (a Debian cloud kernel, a busybox
//! initramfs, qemu-ga and tinyproxy; `docs/guest-image.md`), served by a loopback mirror so
//! the provider's fetch → verify → upload → publish path runs for real, then booted from a
//! qcow2 overlay with the provider's own `NoCloud` seed under TCG (`domain_type: qemu`: this
//! machine's nested `/dev/kvm` cannot boot a real kernel) on qemu user networking. A host
//! loopback port is forwarded to the guest's proxy (the provider's `port_forwards`, added
//! through the QEMU monitor after start), and a request through it reaches a loopback HTTP
//! server on the host via the guest (`10.0.2.2` is the host's loopback inside qemu).
//!
//! ```text
//!  test ──create/get/list/delete──▶ Kvm2Provider ──▶ private libvirtd ──▶ qemu (TCG, user net)
//!  test ──GET http://10.0.2.2:P/token──▶ 127.0.0.1:FWD ═hostfwd═▶ guest tinyproxy :8888
//!                                                                      │
//!  loopback HTTP server 127.0.0.1:P ◀──────────── 10.0.2.2:P ◀─────────┘
//! ```
//!
//! The tests run one at a time (a process-wide lock): two TCG guests at once on a 2-core CI
//! machine only make both slow. On failure they print the guest's serial console log.
//! Timings go to stderr as `guest-timing:` lines (`--nocapture` to see them on success).

use egress_kvm2_testkit as common;

use std::net::{Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::*;
use egress_kvm2::Kvm2Provider;
use egress_provider::{CreateSpec, Identifier, Instance, InstanceState, Provider};
use libvirt_remote::proto::procs::qemu::QemuMonitorCommandFlags;
use serde_json::json;
use testbed::guest::{self, CONTROL_PORT, GuestImage};
use testbed::http::get_via_proxy;
use testbed::sshd::{Sshd, SshdOptions};

/// The guests run one after the other.
static ONE_GUEST: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// Bound on boot-to-Running (generous: CI machines under load; measured 6–15 s).
const RUNNING_WITHIN: Duration = Duration::from_secs(120);
/// Pause between `get`s while waiting.
const POLL: Duration = Duration::from_millis(250);
/// What qemu's user-network DHCP hands the guest.
const GUEST_IP: Ipv4Addr = Ipv4Addr::new(10, 0, 2, 15);

/// A real guest's surroundings: daemon + mirror, the image, the provider, the forwarded
/// port, the serial log dir.
struct Bed {
    env: Env,
    image: GuestImage,
    p: Arc<Kvm2Provider>,
    proxy: SocketAddr,
    logs: tempfile::TempDir,
    started: Instant,
    /// The sshds the provider's URI goes through (none over the unix socket), last hop first.
    ssh: Vec<Sshd>,
}

/// Prints the guest's serial log (and the domain's qemu log) when the test panics.
struct DumpOnPanic<'a> {
    bed: &'a Bed,
    uid: Identifier,
}

impl Drop for DumpOnPanic<'_> {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            return;
        }
        let name = self.bed.p.domain_name(&self.uid);
        if let Some(path) = self.bed.p.serial_log_path(&self.uid) {
            match std::fs::read_to_string(&path) {
                Ok(log) => {
                    eprintln!("---- serial console of {name} ({path}) ----\n{log}\n---- end ----");
                }
                Err(e) => eprintln!("---- no serial console log of {name}: {path}: {e}"),
            }
        }
        eprintln!(
            "---- qemu log of {name} ----\n{}\n---- libvirtd log tail ----\n{}",
            self.bed.env.d.domain_log(&name),
            self.bed.env.d.log_tail()
        );
        for s in &self.bed.ssh {
            eprintln!("---- sshd on port {} ----\n{}", s.port(), s.log());
        }
    }
}

/// Daemon, mirror, image, provider with a forward from a free loopback port to the guest's
/// proxy, or `None` (skip) when libvirt or the image is missing and `TESTBED_REQUIRED` is
/// not set.
async fn bed(entry_name: &str, format: &str) -> Option<Bed> {
    bed_with(entry_name, format, true).await
}

/// [`bed`]; without `serial_log` the guest's serial port is a pty console (a console stream
/// can attach to it) instead of a log file.
async fn bed_with(entry_name: &str, format: &str, serial_log: bool) -> Option<Bed> {
    bed_through(entry_name, format, serial_log, |_| {
        Some((json!({}), Vec::new()))
    })
    .await
}

/// [`bed_with`] whose provider reaches the daemon as `hops` says: `(keys, sshds)` sets `keys`
/// in the host entry (`uri`, `ssh_config`; none: the unix socket) and keeps the sshds for the
/// test; `None` skips.
async fn bed_through(
    entry_name: &str,
    format: &str,
    serial_log: bool,
    hops: impl FnOnce(&Env) -> Option<(serde_json::Value, Vec<Sshd>)>,
) -> Option<Bed> {
    let mut g = guest_bed::guest_entry(entry_name, format, serial_log).await?;
    let (keys, ssh) = hops(&g.env)?;
    for (k, v) in keys.as_object().expect("entry keys") {
        g.entry[k] = v.clone();
    }
    Some(Bed {
        p: Arc::new(build(g.entry)),
        env: g.env,
        image: g.image,
        proxy: g.proxy,
        logs: g.logs,
        started: g.started,
        ssh,
    })
}

fn spec(uid: &Identifier, user_data: String) -> CreateSpec {
    CreateSpec::new(uid.clone(), format!("egress guest {uid}"), id("guest"))
        .with_vcpus(1)
        .with_memory_mib(256)
        .with_tag(id("egress"))
        .with_user_data(user_data.into_bytes())
}

/// Polls `get` until Running; every answer before must be Provisioning (never an error).
/// Returns the instance and how many Provisioning answers came first.
async fn wait_running(p: &Kvm2Provider, uid: &Identifier) -> (Instance, usize) {
    let until = Instant::now() + RUNNING_WITHIN;
    let mut provisioning = 0;
    loop {
        let i = p
            .get(uid)
            .await
            .unwrap_or_else(|e| panic!("get while booting: {}", e.chain()));
        match i.state {
            InstanceState::Running { .. } => return (i, provisioning),
            InstanceState::Provisioning => provisioning += 1,
            ref other => panic!("get while booting answered {other}, want Provisioning or Running"),
        }
        assert!(
            Instant::now() < until,
            "no Running within {RUNNING_WITHIN:?} ({provisioning} Provisioning answers)"
        );
        tokio::time::sleep(POLL).await;
    }
}

/// `GET http://10.0.2.2:<mirror port><path>` through the forwarded proxy port.
async fn via_guest(bed: &Bed, url: &str) -> testbed::http::ProxiedResponse {
    get_via_proxy(bed.proxy, url, Duration::from_secs(20))
        .await
        .unwrap_or_else(|e| panic!("request through the guest's proxy at {}: {e}", bed.proxy))
}

/// The volumes of instance `uid` left in the pool.
fn instance_volumes(bed: &Bed, uid: &Identifier) -> Vec<String> {
    volumes(&bed.env.d)
        .into_iter()
        .filter(|v| v.contains(uid.as_str()))
        .collect()
}

/// The issue's proof, with the image in qcow2 (issue 19: the operator's format; the raw one is
/// booted by the next test): create with the real image and a user-data that starts the proxy →
/// Provisioning until the agent answers → Running at 10.0.2.15 (from the agent) → a request
/// through the forwarded proxy port reaches a loopback server on the host via the guest →
/// `list_by_tag` finds it → `delete` → `NotFound`, no volume of the instance left.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn real_guest_boots_and_carries_traffic_through_its_proxy() {
    let _one = ONE_GUEST.lock().await;
    let Some(bed) = bed("guest", "qcow2").await else {
        return;
    };
    let uid = id("g1");
    let _dump = DumpOnPanic {
        bed: &bed,
        uid: uid.clone(),
    };
    let setup = bed.started.elapsed();
    let spec = spec(&uid, guest::proxy_user_data());

    let t = Instant::now();
    let made = bed
        .p
        .create(&spec)
        .await
        .unwrap_or_else(|e| panic!("create: {}", e.chain()));
    let create_time = t.elapsed();
    assert_eq!(
        made.state,
        InstanceState::Provisioning,
        "right after start the agent cannot answer yet"
    );
    // The base is the fetched qcow2, byte for byte (no conversion, no trailing bytes).
    let fetched = std::fs::read(bed.env.d.dir().join("egress-guest.qcow2")).unwrap();
    let stored = std::fs::read(bed.env.d.pool_path().join("base-guest-guest.qcow2")).unwrap();
    assert!(
        stored == fetched,
        "stored base ({} bytes) differs from the fetched qcow2 ({} bytes)",
        stored.len(),
        fetched.len()
    );

    let t = Instant::now();
    let (running, provisioning) = wait_running(&bed.p, &uid).await;
    let boot = t.elapsed();
    assert_eq!(
        running.state,
        InstanceState::Running {
            ip: GUEST_IP.into()
        },
        "the address comes from the guest agent (the lease source answers empty here)"
    );
    assert!(provisioning > 0, "Provisioning came first");
    assert_eq!(running.created_at, made.created_at);

    // The QEMU program's typed calls on the provider's own link, against the booted guest:
    // a QMP command to its monitor and a raw command to its guest agent.
    let t = Instant::now();
    qemu_program_answers(&bed).await;
    let qemu_calls = t.elapsed();

    // Traffic: host → forwarded port → guest's tinyproxy → 10.0.2.2 (the host's loopback).
    let token = format!(
        "egress-through-the-guest-{}-{}",
        std::process::id(),
        made.created_at
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos()
    );
    bed.env.http.serve("/token", token.clone().into_bytes());
    let url = format!("http://10.0.2.2:{}/token", bed.env.http.addr().port());
    let t = Instant::now();
    let r = via_guest(&bed, &url).await;
    let request = t.elapsed();
    assert_eq!(r.status, 200, "{}", r.head);
    assert_eq!(
        String::from_utf8_lossy(&r.body),
        token,
        "the body proves the request went host → guest proxy → host"
    );
    assert_eq!(bed.env.http.hits("/token"), 1);

    // Create again (a retried create): the same instance, forwards already there.
    let again = bed.p.create(&spec).await.unwrap();
    assert_eq!(again.created_at, made.created_at);
    assert_eq!(again.state, running.state);
    assert_eq!(via_guest(&bed, &url).await.body, token.as_bytes());

    let listed = bed.p.list_by_tag(&id("egress")).await.unwrap().instances;
    assert_eq!(listed.len(), 1, "{listed:?}");
    assert_eq!(listed[0].uid, uid);
    assert_eq!(listed[0].state, running.state);

    let serial = std::fs::read_to_string(bed.p.serial_log_path(&uid).unwrap()).unwrap();
    assert!(
        serial.contains("user-data exited with status 0"),
        "{serial}"
    );
    assert!(serial.contains("tinyproxy started"), "{serial}");

    let t = Instant::now();
    bed.p.delete(&uid).await.unwrap();
    let delete = t.elapsed();
    assert_gone(&bed, &uid).await;
    eprintln!(
        "guest-timing: lifecycle: setup {setup:.2?} (image {:.2?}), create {create_time:.2?} \
         (fetch+verify+upload+publish+overlay+seed+define+start+forward), boot-to-Running \
         {boot:.2?} ({provisioning} Provisioning answers), QMP + agent command \
         {qemu_calls:.2?}, request via proxy {request:.2?}, delete {delete:.2?}, total {:.2?}",
        bed.image.build_time,
        bed.started.elapsed()
    );
    let _ = &bed.logs;
}

/// After a delete of `uid`: `get` answers `NotFound`, no volume of it and no domain is left,
/// and the forward went with the qemu process.
async fn assert_gone(bed: &Bed, uid: &Identifier) {
    let gone = bed.p.get(uid).await.unwrap_err();
    assert!(gone.is_not_found(), "{gone}");
    assert!(
        instance_volumes(bed, uid).is_empty(),
        "{:?}",
        volumes(&bed.env.d)
    );
    assert_eq!(
        bed.env
            .d
            .virsh(&["list", "--all", "--name"])
            .unwrap()
            .trim(),
        ""
    );
    assert!(
        tokio::net::TcpStream::connect(bed.proxy).await.is_err(),
        "the forwarded port still answers after delete"
    );
}

/// `QemuDomainMonitorCommand` (QMP `query-status`) and `QemuDomainAgentCommand`
/// (`guest-ping`) through the provider's link: typed calls of the QEMU program, answered by
/// the guest's qemu and its agent.
async fn qemu_program_answers(bed: &Bed) {
    use libvirt_remote::proto::procs::common::NameArgs;
    use libvirt_remote::proto::procs::domain::DomainLookupByName;
    use libvirt_remote::proto::procs::qemu::{
        QemuDomainAgentCommand, QemuDomainAgentCommandArgs, QemuDomainMonitorCommand,
        QemuDomainMonitorCommandArgs, agent_timeout,
    };
    let link = bed.p.links().link().await.expect("a live link");
    let name = bed.env.d.virsh(&["list", "--name"]).unwrap();
    let dom = link
        .call::<DomainLookupByName>(&NameArgs {
            name: name.trim().into(),
        })
        .await
        .expect("the running guest")
        .dom;
    let status = link
        .call::<QemuDomainMonitorCommand>(&QemuDomainMonitorCommandArgs {
            dom: dom.clone(),
            cmd: r#"{"execute":"query-status"}"#.into(),
            flags: QemuMonitorCommandFlags::empty(),
        })
        .await
        .unwrap_or_else(|e| panic!("QMP query-status: {e}"));
    let status = status.result.to_string_lossy().into_owned();
    assert!(
        status.contains(r#""running":true"#) || status.contains(r#""running": true"#),
        "{status}"
    );
    let pong = link
        .call::<QemuDomainAgentCommand>(&QemuDomainAgentCommandArgs {
            dom,
            cmd: r#"{"execute":"guest-ping"}"#.into(),
            timeout: agent_timeout::DEFAULT,
            flags: Default::default(),
        })
        .await
        .unwrap_or_else(|e| panic!("guest-ping: {e}"));
    let pong = pong.result.map(|r| r.to_string_lossy().into_owned());
    assert_eq!(pong.as_deref(), Some(r#"{"return":{}}"#));
}

/// H3 on a real guest, with faults injected at moments the test chooses (the user-data's
/// control server, reached through the proxy): the agent hangs → the link is killed while
/// a `get` waits in the address read → Transient; the agent stops while the guest keeps
/// running → Provisioning with no address, not an error; the proxy keeps working.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn real_guest_agent_loss_is_provisioning_and_a_dead_link_is_transient() {
    let _one = ONE_GUEST.lock().await;
    let Some(bed) = bed("h3g", "raw").await else {
        return;
    };
    let uid = id("g2");
    let _dump = DumpOnPanic {
        bed: &bed,
        uid: uid.clone(),
    };
    let made = bed
        .p
        .create(&spec(&uid, guest::proxy_user_data_with_control()))
        .await
        .unwrap_or_else(|e| panic!("create: {}", e.chain()));
    let booted = Instant::now();
    let (running, _) = wait_running(&bed.p, &uid).await;
    let boot = booted.elapsed();
    assert_eq!(
        running.state,
        InstanceState::Running {
            ip: GUEST_IP.into()
        }
    );
    let control = |what: &str| format!("http://127.0.0.1:{CONTROL_PORT}/cgi-bin/{what}");

    // 1. The agent hangs (SIGSTOP): libvirt's agent call blocks until its guest-sync times
    //    out. Kill the link while a get waits there: Transient, never "no address yet".
    let frozen = via_guest(&bed, &control("freeze-agent")).await;
    assert!(
        frozen.status == 200 && String::from_utf8_lossy(&frozen.body).contains("frozen"),
        "{frozen:?}"
    );
    let provider = bed.p.clone();
    let uid2 = uid.clone();
    let get = tokio::spawn(async move { provider.get(&uid2).await });
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert!(
        !get.is_finished(),
        "get returned within 1.5 s although the agent hangs: {:?}",
        get.await.unwrap().map(|i| i.state)
    );
    let link = bed.p.links().current().expect("the get holds a live link");
    link.mark_dead("test: link killed while get waits for the hung agent");
    let killed = Instant::now();
    let err = match tokio::time::timeout(Duration::from_secs(5), get)
        .await
        .expect("get released at once by mark_dead")
        .unwrap()
    {
        Ok(got) => panic!(
            "get = {} instance, want Transient: an unreadable address must not look like a missing one",
            got.state
        ),
        Err(e) => e,
    };
    let released = killed.elapsed();
    let msg = err.chain().to_string();
    assert!(err.is_transient(), "{msg}");
    // Killed in the address read (the only call that waits for the agent), and the reason
    // given to mark_dead is what the caller reads.
    assert!(
        msg.contains("cannot read the address") && msg.contains("hung agent"),
        "{msg}"
    );
    eprintln!("guest-timing: h3: get during the hung agent, link killed: {msg}");

    // 2. The agent stops for good (SIGCONT, then egress-stop-agent): the guest runs, the
    //    agent source fails, the lease source answers empty → Provisioning, no address,
    //    not an error. Every answer on the way is Ok.
    let stopped = via_guest(&bed, &control("stop-agent")).await;
    assert_eq!(stopped.status, 200, "{stopped:?}");
    let stop_sent = Instant::now();
    let until = stop_sent + Duration::from_secs(60);
    let mut answers = Vec::new();
    loop {
        let got = bed.p.get(&uid).await.unwrap_or_else(|e| {
            panic!(
                "get after the agent stopped: {} (answers so far {answers:?}); the agent failing \
                 while another source answers empty is Provisioning",
                e.chain()
            )
        });
        answers.push(got.state.clone());
        let stable = answers.len() >= 3
            && answers[answers.len() - 3..]
                .iter()
                .all(|s| *s == InstanceState::Provisioning);
        if stable {
            break;
        }
        assert!(
            Instant::now() < until,
            "no Provisioning after the agent stopped: {answers:?}"
        );
        tokio::time::sleep(POLL).await;
    }
    let to_provisioning = stop_sent.elapsed();
    let listed = bed.p.list_by_tag(&id("egress")).await.unwrap().instances;
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].state, InstanceState::Provisioning);

    // The guest and its proxy still run: only the agent is gone.
    bed.env.http.serve("/alive", b"still proxying".to_vec());
    let alive = format!("http://10.0.2.2:{}/alive", bed.env.http.addr().port());
    assert_eq!(via_guest(&bed, &alive).await.body, b"still proxying");
    let serial = std::fs::read_to_string(bed.p.serial_log_path(&uid).unwrap()).unwrap();
    assert!(serial.contains("qemu-ga stopped"), "{serial}");

    // Delete: the agent cannot shut it down and ACPI is ignored, so destroy after the
    // graceful budget.
    let deleting = Instant::now();
    bed.p.delete(&uid).await.unwrap();
    let delete = deleting.elapsed();
    assert!(bed.p.get(&uid).await.unwrap_err().is_not_found());
    assert!(
        instance_volumes(&bed, &uid).is_empty(),
        "{:?}",
        volumes(&bed.env.d)
    );
    eprintln!(
        "guest-timing: h3: boot-to-Running {boot:.2?}, get released {released:.2?} after \
         mark_dead, Running → Provisioning {to_provisioning:.2?} after stop-agent \
         ({} answers: {answers:?}), delete {delete:.2?}, total {:.2?}",
        answers.len(),
        bed.started.elapsed()
    );
    let _ = made;
}

/// User-data that answers every line typed on the serial console with `echo: <line>`.
const ECHO_USER_DATA: &str = "#!/bin/sh\n\
# egress test guest: a console that answers\n\
( stty -echo 2>/dev/null; echo console-echo-ready; \
while read -r line; do echo \"echo: $line\"; done ) </dev/ttyS0 >/dev/ttyS0 2>&1 &\n";

/// Read from `console` until `want` shows up in everything read so far (bounded).
async fn read_until(console: &mut libvirt_remote::client::Duplex, seen: &mut String, want: &str) {
    let found = read_until_by(console, seen, want, Instant::now() + RUNNING_WITHIN).await;
    assert!(
        found,
        "no {want:?} on the console within {RUNNING_WITHIN:?}:\n{seen}"
    );
}

/// Read from `console` until `want` shows up in everything read so far; false if `until`
/// passes first.
async fn read_until_by(
    console: &mut libvirt_remote::client::Duplex,
    seen: &mut String,
    want: &str,
    until: Instant,
) -> bool {
    use tokio::io::AsyncReadExt;
    let mut buf = [0u8; 4096];
    while !seen.contains(want) {
        let left = until.saturating_duration_since(Instant::now());
        let Ok(n) = tokio::time::timeout(left, console.read(&mut buf)).await else {
            return false;
        };
        let n = n.unwrap_or_else(|e| panic!("console read: {e}\n{seen}"));
        assert!(n > 0, "console ended before {want:?}:\n{seen}");
        seen.push_str(&String::from_utf8_lossy(&buf[..n]));
    }
    true
}

/// Issue 13's proof: the guest's serial console, opened as a duplex stream
/// (`virDomainOpenConsole`) on a pty console, shows the guest's boot messages and answers a
/// line typed into it; the stream then ends from our side, and from the daemon's when the
/// guest is destroyed while a console is open (typed, nothing parked).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn real_guest_console_shows_boot_and_answers_a_keystroke() {
    use libvirt_remote::proto::procs::common::NameArgs;
    use libvirt_remote::proto::procs::domain::{DomainArgs, DomainDestroy, DomainLookupByName};
    use tokio::io::AsyncWriteExt;
    let _one = ONE_GUEST.lock().await;
    let Some(bed) = bed_with("console", "raw", false).await else {
        return;
    };
    let uid = id("c1");
    let _dump = DumpOnPanic {
        bed: &bed,
        uid: uid.clone(),
    };
    bed.p
        .create(&spec(&uid, ECHO_USER_DATA.to_string()))
        .await
        .unwrap_or_else(|e| panic!("create: {}", e.chain()));
    let c = libvirt_remote::Client::connect(
        &bed.env.d.uri(),
        libvirt_remote::ConnectOptions::default(),
    )
    .await
    .unwrap();
    let dom = c
        .call::<DomainLookupByName>(&NameArgs {
            name: bed.p.domain_name(&uid).as_str().into(),
        })
        .await
        .unwrap()
        .dom;
    let t = Instant::now();
    let mut console = c.domain_open_console(&dom, None, 0).await.unwrap();
    let mut seen = String::new();
    // The init's own lines (docs/guest-image.md: every /init line goes to ttyS0).
    read_until(&mut console, &mut seen, "egress-guest:").await;
    read_until(&mut console, &mut seen, "console-echo-ready").await;
    let boot = t.elapsed();
    let t = Instant::now();
    console.write_all(b"hello-console\r").await.unwrap();
    read_until(&mut console, &mut seen, "echo: hello-console").await;
    eprintln!(
        "guest-timing: console boot lines in {boot:.2?}, echo in {:.2?}",
        t.elapsed()
    );
    // Our finish ends it; the connection stays usable.
    console.shutdown().await.unwrap();
    // Opened again without FORCE (the daemon refuses while another stream holds the
    // console: so our finish released it), then dropped mid-stream: the abort releases it
    // too, and it opens once more.
    let console = c.domain_open_console(&dom, None, 0).await.unwrap();
    drop(console);
    // Then the guest is destroyed under an open console: the stream ends (EOF or a typed
    // error), never hangs. (The daemon handles the dropped stream's abort on its own
    // schedule: the open is retried for a bounded while.)
    let mut reopen = 0;
    let mut console = loop {
        match c.domain_open_console(&dom, None, 0).await {
            Ok(console) => break console,
            Err(e) if reopen < 40 => {
                eprintln!("console still held after the drop: {e}");
                reopen += 1;
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            Err(e) => panic!("the dropped console was never released: {e}"),
        }
    };
    c.call::<DomainDestroy>(&DomainArgs { dom: dom.clone() })
        .await
        .unwrap();
    let mut rest = Vec::new();
    let end = tokio::time::timeout(
        Duration::from_secs(30),
        tokio::io::AsyncReadExt::read_to_end(&mut console, &mut rest),
    )
    .await
    .expect("the console stream ends when its guest dies");
    if let Err(e) = &end {
        assert!(
            libvirt_remote::client::stream_error(e).is_some(),
            "a typed stream error: {e:?}"
        );
    }
    eprintln!("console after destroy ended with {end:?}");
    assert!(
        c.call::<libvirt_remote::proto::procs::connect::ConnectGetLibVersion>(&())
            .await
            .is_ok()
    );
    drop(console);
    bed.p.delete(&uid).await.unwrap();
}

/// The virtio-serial port [`CHANNEL_USER_DATA`] answers on (not the agent's, which libvirt
/// keeps for itself).
const ECHO_CHANNEL: &str = "org.egress.echo.0";

/// User-data that waits for the virtio-serial port named [`ECHO_CHANNEL`] (hot-plugged by
/// the test), then, each time the host side connects, writes `channel-echo-ready` and
/// answers every line with `echo: <line>`. (A guest write blocks while the host side is
/// closed, and a read returns 0 once it closes: the loop reopens and waits again.)
const CHANNEL_USER_DATA: &str = "#!/bin/sh\n\
# egress test guest: a virtio-serial channel that answers\n\
( while :; do \
for p in /sys/class/virtio-ports/*; do \
[ \"$(cat $p/name 2>/dev/null)\" = org.egress.echo.0 ] && port=/dev/${p##*/} && break 2; \
done; sleep 0.2; done; \
echo \"egress-guest: echo channel on $port\" >/dev/ttyS0; \
while :; do exec 3<>$port; echo channel-echo-ready >&3; \
while read -r line <&3; do echo \"echo: $line\" >&3; done; exec 3>&-; sleep 0.1; done \
) </dev/null >/dev/null 2>&1 &\n";

/// Issue 13's proof for `virDomainOpenChannel`: a unix virtio-serial channel hot-plugged
/// into a running TCG guest, opened by name as a duplex stream, answers a line through the
/// guest's echo loop; our finish ends the stream cleanly and the channel opens again (the
/// guest answers again); a name the domain has no channel for is the daemon's typed error.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn real_guest_channel_echoes_a_line() {
    use libvirt_remote::proto::procs::common::NameArgs;
    use libvirt_remote::proto::procs::domain::{
        DomainAttachDeviceFlags, DomainDeviceModifyFlags, DomainLookupByName, DomainXmlFlagsArgs,
    };
    use tokio::io::AsyncWriteExt;
    let _one = ONE_GUEST.lock().await;
    let Some(bed) = bed("channel", "raw").await else {
        return;
    };
    let uid = id("ch1");
    let _dump = DumpOnPanic {
        bed: &bed,
        uid: uid.clone(),
    };
    bed.p
        .create(&spec(&uid, CHANNEL_USER_DATA.to_string()))
        .await
        .unwrap_or_else(|e| panic!("create: {}", e.chain()));
    let c = libvirt_remote::Client::connect(
        &bed.env.d.uri(),
        libvirt_remote::ConnectOptions::default(),
    )
    .await
    .unwrap();
    let dom = c
        .call::<DomainLookupByName>(&NameArgs {
            name: bed.p.domain_name(&uid).as_str().into(),
        })
        .await
        .unwrap()
        .dom;
    // libvirt 9.0 hot-plugs a virtio channel only on a UNIX socket (a pty channel is
    // refused: "is not using a UNIX socket"); qemu listens, the daemon connects on open.
    let sock_dir = guest::shared_dir("ekvm2-chan-").unwrap();
    let sock = sock_dir.path().join("echo.sock");
    let xml = format!(
        "<channel type='unix'><source mode='bind' path='{}'/>\
         <target type='virtio' name='{ECHO_CHANNEL}'/></channel>",
        sock.display()
    );
    c.call::<DomainAttachDeviceFlags>(&DomainXmlFlagsArgs {
        dom: dom.clone(),
        xml: xml.as_str().into(),
        flags: DomainDeviceModifyFlags::LIVE,
    })
    .await
    .unwrap_or_else(|e| panic!("hot-plug the channel: {e}"));

    // No such channel: the daemon's typed refusal, the connection lives.
    let err = c
        .domain_open_channel(&dom, Some("org.egress.none.0"), 0)
        .await
        .unwrap_err();
    assert!(
        matches!(err, libvirt_remote::conn::StreamError::Remote(_)),
        "{err:?}"
    );

    let t = Instant::now();
    let mut channel = c
        .domain_open_channel(&dom, Some(ECHO_CHANNEL), 0)
        .await
        .unwrap();
    let mut seen = String::new();
    read_until(&mut channel, &mut seen, "channel-echo-ready").await;
    let ready = t.elapsed();
    let t = Instant::now();
    channel.write_all(b"hello-channel\n").await.unwrap();
    read_until(&mut channel, &mut seen, "echo: hello-channel").await;
    eprintln!(
        "guest-timing: channel ready in {ready:.2?}, echo in {:.2?}",
        t.elapsed()
    );
    // Our finish ends it cleanly.
    channel.shutdown().await.unwrap();

    // Opened again (our finish released it): the guest's loop answers once more.
    let mut reopen = 0;
    let mut channel = loop {
        match c.domain_open_channel(&dom, Some(ECHO_CHANNEL), 0).await {
            Ok(ch) => break ch,
            Err(e) if reopen < 40 => {
                eprintln!("channel still held after the finish: {e}");
                reopen += 1;
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            Err(e) => panic!("the finished channel was never released: {e}"),
        }
    };
    // The guest may or may not see this reconnect: a disconnect and a reconnect that both
    // land before its blocked read runs again leave it reading the same port, with no new
    // `channel-echo-ready` (CI saw that wait time out); if it did see it, it reopens, and a
    // line written while its port was closed is dropped. So the line is written again until
    // it is answered: the reopened channel carries traffic both ways either way.
    let mut seen = String::new();
    let until = Instant::now() + RUNNING_WITHIN;
    loop {
        channel.write_all(b"again\n").await.unwrap();
        let retry = (Instant::now() + Duration::from_secs(2)).min(until);
        if read_until_by(&mut channel, &mut seen, "echo: again", retry).await {
            break;
        }
        assert!(
            Instant::now() < until,
            "the reopened channel never answered within {RUNNING_WITHIN:?}:\n{seen}"
        );
    }
    channel.shutdown().await.unwrap();
    assert!(
        c.call::<libvirt_remote::proto::procs::connect::ConnectGetLibVersion>(&())
            .await
            .is_ok()
    );
    bed.p.delete(&uid).await.unwrap();
}

/// Issue 16: the real guest's lifecycle with the provider's host entry at `qemu+ssh://` to an
/// sshd that refuses all forwarding, with no `socket=`: libvirt's default exec channel,
/// `virt-ssh-helper qemu:///session` on the far side, carries the shared link and the
/// image upload's dedicated connection. No forwarding was asked for.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn real_guest_over_qemu_ssh_exec_channel_where_forwarding_is_refused() {
    let _one = ONE_GUEST.lock().await;
    let Some(bed) = bed_through("sshx", "raw", true, |env| {
        let s = locked_down_sshd(&env.d)?;
        Some((json!({"uri": session_uri(&s)}), vec![s]))
    })
    .await
    else {
        return;
    };
    lifecycle_over_ssh(&bed, &id("x1"), "exec channel (virt-ssh-helper)").await;
    let s = &bed.ssh[0];
    let log = s.log();
    assert!(
        !log.contains("direct-streamlocal") && !log.contains("refused streamlocal"),
        "no forwarding was asked for:\n{log}"
    );
    let commands = s.command_log();
    assert!(
        commands.len() >= 2 && commands.iter().all(|c| c.contains("virt-ssh-helper")),
        "the link and the upload each ran virt-ssh-helper on the far side: {commands:?}"
    );
    assert!(s.nc_calls().is_empty(), "{:?}", s.nc_calls());
}

/// Issue 16: the same through a bastion, named as an operator would in an ssh config file
/// (the entry's `ssh_config`: `Host target` with `ProxyJump bastion`, each hop with its own
/// key and `known_hosts`, strict host keys): the bastion carries a `direct-tcpip` hop to the
/// target's sshd, which refuses all forwarding and runs `nc -U SOCKET` (the URI's `socket=`,
/// libvirt's netcat exec channel) for the link and the upload. (`lifecycle.rs` names the
/// bastion in the URI, `proxy_jump=`.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn real_guest_over_qemu_ssh_through_a_bastion() {
    let _one = ONE_GUEST.lock().await;
    let config = tempfile::tempdir().unwrap();
    let Some(bed) = bed_through("sshj", "raw", true, |env| {
        let target = locked_down_sshd(&env.d)?;
        let bastion = Sshd::start_or_skip(&SshdOptions::default())?;
        let dir = config.path();
        let file = dir.join("ssh_config");
        let text = bastion.ssh_config_block("bastion", bastion.port(), dir, &[])
            + &target.ssh_config_block("target", target.port(), dir, &["ProxyJump bastion"]);
        std::fs::write(&file, text).unwrap();
        let uri = format!(
            "qemu+ssh://target/session?socket={}",
            env.d.socket_path().display()
        );
        let keys = json!({"uri": uri, "ssh_config": file.display().to_string()});
        Some((keys, vec![target, bastion]))
    })
    .await
    else {
        return;
    };
    lifecycle_over_ssh(&bed, &id("j1"), "bastion, netcat on the target").await;
    let (target, bastion) = (&bed.ssh[0], &bed.ssh[1]);
    let log = bastion.log();
    assert!(
        log.matches("Accepted publickey").count() >= 2 && log.contains("direct-tcpip"),
        "the bastion did not carry the link and the upload:\n{log}"
    );
    let socket = bed.env.d.socket_path().display().to_string();
    // (The other nc runs are the `nc -q` probe libvirt's remote command line makes.)
    let nc = target.nc_calls();
    let unix: Vec<_> = nc
        .iter()
        .filter(|argv| argv.iter().any(|a| a == "-U"))
        .collect();
    assert!(
        unix.len() >= 2 && unix.iter().all(|argv| argv.last() == Some(&socket)),
        "the target ran nc -U on the daemon's socket for the link and the upload: {nc:?}"
    );
    assert!(
        !target.log().contains("direct-streamlocal"),
        "{}",
        target.log()
    );
}

/// Image ensure, create, Running with the agent's address, a request through the guest's
/// proxy, `list_by_tag`, delete, and nothing of the instance left (no domain, no volume but
/// the image's base and digest), all through the provider of `bed` (whose URI goes `path`);
/// the last hop's sshd saw at least two sessions (the link and the upload).
async fn lifecycle_over_ssh(bed: &Bed, uid: &Identifier, path: &str) {
    let _dump = DumpOnPanic {
        bed,
        uid: uid.clone(),
    };
    let setup = bed.started.elapsed();
    let t = Instant::now();
    let made = bed
        .p
        .create(&spec(uid, guest::proxy_user_data()))
        .await
        .unwrap_or_else(|e| panic!("create over {path}: {}", e.chain()));
    let create_time = t.elapsed();
    assert_eq!(made.state, InstanceState::Provisioning);
    let entry = bed.p.domain_name(uid);
    let entry = entry.as_str().strip_suffix(&format!("-{uid}")).unwrap();
    let base = [
        format!("base-{entry}-guest.raw"),
        format!("base-{entry}-guest.raw.sha256"),
    ];
    let pool = volumes(&bed.env.d);
    assert!(
        base.iter().all(|b| pool.contains(b)),
        "image ensured: {pool:?}"
    );

    // The upload's dedicated connection is gone once create returns: one exec channel left
    // on the far side, the shared link's.
    assert_eq!(remote_channels(&bed.ssh[0]), 1, "after create over {path}");

    let t = Instant::now();
    let (running, provisioning) = wait_running(&bed.p, uid).await;
    let boot = t.elapsed();
    assert_eq!(
        running.state,
        InstanceState::Running {
            ip: GUEST_IP.into()
        },
        "the address comes from the guest agent, read over {path}"
    );
    assert_eq!(running.created_at, made.created_at);

    let token = format!("egress-over-{}-{}", entry, std::process::id());
    bed.env.http.serve("/token", token.clone().into_bytes());
    let url = format!("http://10.0.2.2:{}/token", bed.env.http.addr().port());
    let r = via_guest(bed, &url).await;
    assert_eq!(r.status, 200, "{}", r.head);
    assert_eq!(r.body, token.as_bytes());

    let listed = bed.p.list_by_tag(&id("egress")).await.unwrap().instances;
    assert_eq!(listed.len(), 1, "{listed:?}");
    assert_eq!((&listed[0].uid, &listed[0].state), (uid, &running.state));

    let t = Instant::now();
    bed.p
        .delete(uid)
        .await
        .unwrap_or_else(|e| panic!("delete over {path}: {}", e.chain()));
    let delete = t.elapsed();
    assert_gone(bed, uid).await;
    assert_eq!(volumes(&bed.env.d), base, "only the image is left");
    // Closing the provider's link ends its exec channel on the far side.
    bed.p.links().close("test: lifecycle done");
    let until = Instant::now() + Duration::from_secs(5);
    while remote_channels(&bed.ssh[0]) > 0 {
        assert!(
            Instant::now() < until,
            "the link's remote command still runs 5 s after close over {path}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let log = bed.ssh[0].log();
    let sessions = log.matches("Accepted publickey").count();
    assert!(
        sessions >= 2,
        "{sessions} ssh sessions, want the link and the upload:\n{log}"
    );
    eprintln!(
        "guest-timing: over qemu+ssh ({path}): setup {setup:.2?}, create {create_time:.2?} \
         (fetch+verify+upload+publish+overlay+seed+define+start+forward), boot-to-Running \
         {boot:.2?} ({provisioning} Provisioning answers), delete {delete:.2?}, total {:.2?}",
        bed.started.elapsed()
    );
}

/// How many exec channels' remote commands (`virt-ssh-helper`, or `nc -U`) run under `s`.
fn remote_channels(s: &Sshd) -> usize {
    s.processes()
        .into_iter()
        .filter(|pid| {
            let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
            let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            comm.trim() == "virt-ssh-helper"
                || (comm.trim() == "nc" && cmdline.split(|b| *b == 0).any(|a| a == b"-U"))
        })
        .count()
}
