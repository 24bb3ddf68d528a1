//! The LXC driver of a private **privileged** libvirtd ([`testbed::lxcd`], root only; the
//! tests skip when not root): application containers (`<os><type>exe</type>`, the host's
//! filesystem, a private network namespace with only `lo`), reached through the LXC program's
//! `LxcDomainOpenNamespace` (descriptors in the reply) and the remote program's
//! `DomainCreateXmlWithFiles` / `DomainCreateWithFiles` (descriptors in the call), with the
//! containers' lifecycle events.

use std::io::{BufRead as _, BufReader};
use std::os::fd::{AsRawFd as _, OwnedFd};
use std::sync::mpsc;
use std::time::Duration;

use libvirt_remote::Connect;
use libvirt_remote::client::{Client, ConnectOptions, Subscription};
use libvirt_remote::conn::CallError;
use libvirt_remote::proto::ErrorCode;
use libvirt_remote::proto::events::{TypedEvent, event_id};
use libvirt_remote::proto::names::DomainEventType;
use libvirt_remote::proto::procs::common::{UuidArgs, XmlArgs};
use libvirt_remote::proto::procs::domain::{
    DomainArgs, DomainCreateWithFiles, DomainCreateXmlArgs, DomainCreateXmlWithFiles,
    DomainDefineXml, DomainDestroy, DomainFlagsArgs, DomainGetState, DomainLookupByUuid,
    DomainUndefine,
};
use libvirt_remote::proto::procs::lxc::LxcDomainOpenNamespace;
use libvirt_remote::proto::types::NonnullDomain;
use testbed::lxcd::{Lxcd, container_init_pid, ns_link};

/// An application container running `script` under `/bin/sh` as its init, on the host's
/// filesystem, with a network namespace of its own (`privnet`: only `lo`).
fn container_xml(name: &str, script: &str) -> String {
    format!(
        "<domain type='lxc'><name>{name}</name><memory unit='MiB'>64</memory>\
         <os><type>exe</type><init>/bin/sh</init><initarg>-c</initarg>\
         <initarg>{}</initarg></os>\
         <features><privnet/></features>\
         <devices><console type='pty'/></devices></domain>",
        script
            .replace('&', "&amp;")
            .replace('<', "&lt;")
            .replace('>', "&gt;")
    )
}

/// A container name unique to this test process (the driver keys cgroups by it).
fn name(what: &str) -> String {
    format!("tb-{what}-{}", std::process::id())
}

async fn connect(d: &Lxcd) -> Client {
    Client::connect(&d.uri(), ConnectOptions::default())
        .await
        .unwrap_or_else(|e| panic!("connect {}: {e}", d.uri()))
}

async fn next<T: TypedEvent>(events: &mut Subscription<T>, what: &str) -> T::Body {
    tokio::time::timeout(Duration::from_secs(30), events.next())
        .await
        .unwrap_or_else(|_| panic!("no {what} event within 30 s"))
        .unwrap_or_else(|| panic!("{what} subscription ended"))
}

/// The first line the container writes into the pipe whose read end is `read`, within 30 s.
fn line_from(read: OwnedFd, what: &str) -> String {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        let r = BufReader::new(std::fs::File::from(read)).read_line(&mut line);
        let _ = tx.send(r.map(|_| line));
    });
    rx.recv_timeout(Duration::from_secs(30))
        .unwrap_or_else(|_| panic!("{what}: nothing from the container within 30 s"))
        .unwrap_or_else(|e| panic!("{what}: reading the pipe: {e}"))
}

/// `LxcDomainOpenNamespace` on a container just started: the driver learns the init's pid
/// from the controller after the start has answered ("Init pid is not yet available",
/// `OPERATION_INVALID`, until then), so that answer is retried for up to 30 s.
async fn open_namespace(c: &Client, dom: &NonnullDomain) -> Vec<OwnedFd> {
    try_open_namespace(c, dom, Duration::from_secs(30))
        .await
        .expect("open namespace: the daemon did not learn the init pid within 30 s")
}

/// `LxcDomainOpenNamespace`, its `OPERATION_INVALID` (init pid not known yet) retried for
/// `within`; `None` if it still answers that then.
async fn try_open_namespace(
    c: &Client,
    dom: &NonnullDomain,
    within: Duration,
) -> Option<Vec<OwnedFd>> {
    let deadline = std::time::Instant::now() + within;
    loop {
        let args = DomainFlagsArgs {
            dom: dom.clone(),
            flags: 0,
        };
        match c
            .call_with_fds::<LxcDomainOpenNamespace>(&args, Vec::new())
            .await
        {
            Ok(((), fds)) => return Some(fds),
            Err(CallError::Remote(e)) if e.code == ErrorCode::OPERATION_INVALID => {
                if std::time::Instant::now() > deadline {
                    return None;
                }
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            Err(e) => panic!("open namespace: {e}"),
        }
    }
}

/// A transient container `name(what)` running `script`, returned once the daemon knows its
/// init's pid, which namespace calls and a shutdown by signal need. libvirtd 9.0 sometimes
/// never learns it (known-gaps.md, "LXC"): the controller sends its one init event as it
/// accepts the daemon's monitor connection, and the daemon can read it before it has set up
/// the monitor to take it. Such a container is destroyed and a fresh one (`name(what)-2`, …)
/// started, at most three in all; what the tests check is then done on the fresh one.
async fn start_with_known_init(c: &Client, d: &Lxcd, what: &str, script: &str) -> NonnullDomain {
    for start in 1..=3 {
        let n = if start == 1 {
            name(what)
        } else {
            format!("{}-{start}", name(what))
        };
        let dom = c
            .call_with_fds::<DomainCreateXmlWithFiles>(
                &DomainCreateXmlArgs {
                    xml_desc: container_xml(&n, script).as_str().into(),
                    flags: Default::default(),
                },
                Vec::new(),
            )
            .await
            .unwrap_or_else(|e| panic!("start: {e}; log:\n{}", d.log_tail()))
            .0
            .dom;
        if try_open_namespace(c, &dom, Duration::from_secs(10))
            .await
            .is_some()
        {
            return dom;
        }
        eprintln!("libvirtd never learned the init pid of {n} (its dropped init event): again");
        c.call::<DomainDestroy>(&DomainArgs { dom }).await.unwrap();
    }
    panic!(
        "libvirtd learned the init pid of none of 3 containers {}",
        name(what)
    )
}

/// Our descriptors that are `link` (e.g. `net:[4026532184]`).
fn our_fds_to(link: &str) -> usize {
    std::fs::read_dir("/proc/self/fd")
        .unwrap()
        .flatten()
        .filter(|e| std::fs::read_link(e.path()).is_ok_and(|l| l.to_string_lossy() == link))
        .count()
}

/// The container's init, found through the controller whose pid is the domain id.
fn init_of(d: &Lxcd, dom: &NonnullDomain) -> u32 {
    assert!(dom.id > 0, "a running container has an id: {dom:?}");
    container_init_pid(dom.id).unwrap_or_else(|| {
        panic!(
            "no init below controller {}; container log:\n{}",
            dom.id,
            d.domain_log(&dom.name.to_string())
        )
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn open_namespace_hands_over_the_containers_namespaces() {
    let Some(d) = Lxcd::start_or_skip() else {
        return;
    };
    let c = connect(&d).await;
    let dom = start_with_known_init(&c, &d, "ns", "exec sleep 600").await;
    let init = init_of(&d, &dom);
    let me = std::process::id();

    let fds = open_namespace(&c, &dom).await;
    // libvirt opens /proc/INIT/ns/{user,ipc,uts,net,pid,mnt}, skipping what is not there.
    let got: Vec<String> = fds
        .iter()
        .map(|fd| {
            std::fs::read_link(format!("/proc/self/fd/{}", fd.as_raw_fd()))
                .unwrap()
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    eprintln!("{} descriptors: {got:?}", got.len());
    let kinds: Vec<&str> = got.iter().filter_map(|l| l.split(':').next()).collect();
    for kind in ["ipc", "uts", "net", "pid", "mnt"] {
        assert!(kinds.contains(&kind), "no {kind} namespace among {got:?}");
    }
    for link in &got {
        let kind = link.split(':').next().unwrap();
        let theirs = ns_link(init, kind).unwrap();
        assert_eq!(link, &theirs, "descriptor {link} vs the init's {kind}");
    }
    // The container's own namespaces, not ours (privnet: a network namespace of its own).
    for kind in ["uts", "net", "pid", "mnt", "ipc"] {
        let ours = ns_link(me, kind).unwrap();
        let theirs = got.iter().find(|l| l.starts_with(kind)).unwrap();
        assert_ne!(&ours, theirs, "{kind}: the container shares ours");
    }

    // The plain call path refuses it: the reply brings descriptors.
    let err = c
        .call::<LxcDomainOpenNamespace>(&DomainFlagsArgs {
            dom: dom.clone(),
            flags: 0,
        })
        .await
        .unwrap_err();
    assert!(matches!(err, CallError::NeedsFdPassing { .. }), "{err:?}");

    c.call::<DomainDestroy>(&DomainArgs { dom: dom.clone() })
        .await
        .unwrap();
    // A stopped container has no namespaces to open: the driver's typed error.
    let err = c
        .call_with_fds::<LxcDomainOpenNamespace>(&DomainFlagsArgs { dom, flags: 0 }, Vec::new())
        .await
        .unwrap_err();
    assert!(matches!(err, CallError::Remote(_)), "{err:?}");
    assert!(!c.is_closed());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn create_with_files_hands_the_container_our_descriptors() {
    let Some(d) = Lxcd::start_or_skip() else {
        return;
    };
    let c = connect(&d).await;
    let mut events = Connect::from(c.clone())
        .subscribe::<event_id::Lifecycle>()
        .await
        .unwrap();

    // Transient: DomainCreateXmlWithFiles. The LXC driver gives the init our descriptors as
    // fds 3, 4, …, in order; the init writes into the pipe we passed.
    let (read, write) = std::io::pipe().unwrap();
    let script = "echo xml-three >&3; exec 3>&-; exec sleep 600";
    let transient = c
        .call_with_fds::<DomainCreateXmlWithFiles>(
            &DomainCreateXmlArgs {
                xml_desc: container_xml(&name("xml"), script).as_str().into(),
                flags: Default::default(),
            },
            vec![OwnedFd::from(write)],
        )
        .await
        .unwrap_or_else(|e| panic!("create: {e}; log:\n{}", d.log_tail()))
        .0
        .dom;
    assert_eq!(line_from(read.into(), "create-xml"), "xml-three\n");
    init_of(&d, &transient);

    // Persistent: define, then DomainCreateWithFiles with two pipes (fds 3 and 4).
    let (read3, write3) = std::io::pipe().unwrap();
    let (read4, write4) = std::io::pipe().unwrap();
    let script = "echo three >&3; echo four >&4; exec 3>&- 4>&-; exec sleep 600";
    let defined = c
        .call::<DomainDefineXml>(&XmlArgs {
            xml: container_xml(&name("def"), script).as_str().into(),
        })
        .await
        .unwrap()
        .dom;
    let started = c
        .call_with_fds::<DomainCreateWithFiles>(
            &DomainFlagsArgs {
                dom: defined.clone(),
                flags: Default::default(),
            },
            vec![OwnedFd::from(write3), OwnedFd::from(write4)],
        )
        .await
        .unwrap_or_else(|e| panic!("create: {e}; log:\n{}", d.log_tail()))
        .0
        .dom;
    assert_eq!(line_from(read3.into(), "fd 3"), "three\n");
    assert_eq!(line_from(read4.into(), "fd 4"), "four\n");
    assert_eq!((&started.name, started.uuid), (&defined.name, defined.uuid));
    // libvirtd 9.0 answers with the handle as looked up before the start (id -1: the LXC
    // driver, unlike qemu's, does not update it); a lookup gives the running id.
    let running = c
        .call::<DomainLookupByUuid>(&UuidArgs { uuid: defined.uuid })
        .await
        .unwrap()
        .dom;
    init_of(&d, &running);
    let state = c
        .call::<DomainGetState>(&DomainFlagsArgs {
            dom: started.clone(),
            flags: 0,
        })
        .await
        .unwrap();
    assert_eq!(
        state.state,
        libvirt_remote::proto::names::DomainState::RUNNING
    );

    for dom in [&transient, &started] {
        c.call::<DomainDestroy>(&DomainArgs { dom: dom.clone() })
            .await
            .unwrap();
    }
    c.call::<DomainUndefine>(&DomainArgs {
        dom: defined.clone(),
    })
    .await
    .unwrap();

    // Lifecycle events of the LXC domains, in order per domain, until the last ones expected
    // (the transient's STOPPED, the persistent one's UNDEFINED) have come. libvirtd 9.0's LXC
    // driver sometimes announces a destroyed container's STOPPED twice (the destroy call and
    // the controller's exit both report it; seen once in CI on a fresh machine:
    // `[STARTED, STOPPED, STOPPED]`), so a repeat of the event just before it is collapsed,
    // and only a STOPPED may repeat.
    let (xml_name, def_name) = (transient.name.to_string(), defined.name.to_string());
    let mut seen: Vec<(String, DomainEventType)> = Vec::new();
    let done = |seen: &[(String, DomainEventType)]| {
        seen.contains(&(xml_name.clone(), DomainEventType::STOPPED))
            && seen.contains(&(def_name.clone(), DomainEventType::UNDEFINED))
    };
    while !done(&seen) {
        assert!(seen.len() < 12, "too many lifecycle events: {seen:?}");
        let ev = next(&mut events, "lxc lifecycle").await;
        seen.push((ev.dom.name.to_string(), ev.event));
    }
    let of = |n: &str| -> Vec<DomainEventType> {
        let mut per: Vec<DomainEventType> = Vec::new();
        for (_, e) in seen.iter().filter(|(m, _)| m == n) {
            if per.last() == Some(e) {
                assert_eq!(*e, DomainEventType::STOPPED, "repeated {e:?}: {seen:?}");
                continue;
            }
            per.push(*e);
        }
        per
    };
    assert_eq!(
        of(&transient.name.to_string()),
        [DomainEventType::STARTED, DomainEventType::STOPPED],
        "{seen:?}"
    );
    assert_eq!(
        of(&defined.name.to_string()),
        [
            DomainEventType::DEFINED,
            DomainEventType::STARTED,
            DomainEventType::STOPPED,
            DomainEventType::UNDEFINED
        ],
        "{seen:?}"
    );
    assert!(!c.is_closed());
}

/// Several `LxcDomainOpenNamespace` calls in flight at once on one connection, between plain
/// calls, on two containers: every reply gets its own six descriptors, those of its own
/// container (the descriptor bytes stay in step with the packets that announce them).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn namespace_replies_in_flight_keep_their_own_descriptors() {
    let Some(d) = Lxcd::start_or_skip() else {
        return;
    };
    let c = connect(&d).await;
    let mut doms = Vec::new();
    let mut counts = Vec::new();
    for what in ["par-a", "par-b"] {
        let dom = start_with_known_init(&c, &d, what, "exec sleep 600").await;
        let init = init_of(&d, &dom);
        counts.push(open_namespace(&c, &dom).await.len());
        doms.push((dom, init));
    }

    // user, ipc, uts, net, pid, mnt.
    assert_eq!(counts, [6, 6], "descriptors per reply");
    let calls = (0..16).map(|i| {
        let c = c.clone();
        let (dom, init) = doms[i % 2].clone();
        async move {
            if i % 4 == 3 {
                let v = c
                    .call::<libvirt_remote::proto::procs::connect::ConnectGetLibVersion>(&())
                    .await
                    .unwrap();
                assert!(v.lib_ver >= 9_000_000);
                return;
            }
            let ((), fds) = c
                .call_with_fds::<LxcDomainOpenNamespace>(
                    &DomainFlagsArgs { dom, flags: 0 },
                    Vec::new(),
                )
                .await
                .unwrap();
            assert_eq!(fds.len(), 6, "call {i}");
            for fd in &fds {
                let link = std::fs::read_link(format!("/proc/self/fd/{}", fd.as_raw_fd()))
                    .unwrap()
                    .to_string_lossy()
                    .into_owned();
                let kind = link.split(':').next().unwrap();
                assert_eq!(Some(&link), ns_link(init, kind).as_ref(), "call {i}");
            }
        }
    });
    futures::future::join_all(calls).await;
    for (dom, _) in doms {
        c.call::<DomainDestroy>(&DomainArgs { dom }).await.unwrap();
    }
    assert!(!c.is_closed());
}

/// `DomainOpenConsole` on a container: a duplex stream to the init's console (a pty the
/// controller relays). What we write reaches the init's stdin; what it prints comes back.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_containers_console_is_a_duplex_stream() {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    let Some(d) = Lxcd::start_or_skip() else {
        return;
    };
    let c = connect(&d).await;
    let script = "while read l; do echo \"got:$l:\"; done";
    let dom = c
        .call_with_fds::<DomainCreateXmlWithFiles>(
            &DomainCreateXmlArgs {
                xml_desc: container_xml(&name("con"), script).as_str().into(),
                flags: Default::default(),
            },
            Vec::new(),
        )
        .await
        .unwrap_or_else(|e| panic!("start: {e}; log:\n{}", d.log_tail()))
        .0
        .dom;
    let mut console = c.domain_open_console(&dom, None, 0).await.unwrap();
    console.write_all(b"hello lxc\n").await.unwrap();
    console.flush().await.unwrap();
    let mut seen = Vec::new();
    let found = tokio::time::timeout(Duration::from_secs(30), async {
        let mut buf = [0u8; 4096];
        loop {
            let n = console.read(&mut buf).await.unwrap();
            assert!(
                n > 0,
                "console closed; read {:?}",
                String::from_utf8_lossy(&seen)
            );
            seen.extend_from_slice(&buf[..n]);
            if String::from_utf8_lossy(&seen).contains("got:hello lxc:") {
                return;
            }
        }
    })
    .await;
    assert!(
        found.is_ok(),
        "no answer on the console within 30 s; read {:?}",
        String::from_utf8_lossy(&seen)
    );
    drop(console);
    c.call::<DomainDestroy>(&DomainArgs { dom }).await.unwrap();
    assert!(!c.is_closed());
}

fn param_text(v: &libvirt_remote::proto::types::TypedParamValue) -> String {
    use libvirt_remote::proto::types::TypedParamValue as V;
    match v {
        V::Int(n) => n.to_string(),
        V::UInt(n) => n.to_string(),
        V::LLong(n) => n.to_string(),
        V::ULLong(n) => n.to_string(),
        V::Double(n) => n.to_string(),
        V::Boolean(b) => u8::from(*b).to_string(),
        V::String(s) => s.to_string(),
    }
}

/// `name : value` lines of a virsh report, `name` trimmed.
fn virsh_fields(out: &str) -> Vec<(String, String)> {
    out.lines()
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
        .collect()
}

/// The calls a user makes on a container, answered by the LXC driver and checked against
/// virsh on the same daemon: type, OS type, info, scheduler and memory parameters, memory
/// stats; suspend and resume (the freezer cgroup) and a shutdown by signal, with their events.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_lxc_driver_answers_the_everyday_calls() {
    use libvirt_remote::proto::names::{DomainState, LifecycleDetail, StoppedDetail};
    use libvirt_remote::proto::procs::connect::ConnectGetType;
    use libvirt_remote::proto::procs::domain::{
        DomainGetInfo, DomainGetMemoryParameters, DomainGetOsType, DomainGetParamsArgs,
        DomainGetSchedulerParametersFlags, DomainGetSchedulerType, DomainMemoryStats,
        DomainMemoryStatsArgs, DomainResume, DomainShutdownFlagValues, DomainShutdownFlags,
        DomainSuspend,
    };
    let Some(d) = Lxcd::start_or_skip() else {
        return;
    };
    let c = connect(&d).await;
    assert_eq!(
        c.call::<ConnectGetType>(&())
            .await
            .unwrap()
            .kind
            .to_string(),
        "LXC"
    );
    let mut events = Connect::from(c.clone())
        .subscribe::<event_id::Lifecycle>()
        .await
        .unwrap();
    // An init that leaves on SIGTERM (a pid 1 ignores signals it has no handler for).
    let script = "trap 'exit 0' TERM; while :; do sleep 1 & wait $!; done";
    // Its init's pid known, for the shutdown by signal; a container started again for that
    // has another name, and its predecessor's events are skipped below.
    let dom = start_with_known_init(&c, &d, "calls", script).await;
    let n = dom.name.to_string();
    let args = DomainArgs { dom: dom.clone() };
    let os = c.call::<DomainGetOsType>(&args).await.unwrap().kind;
    assert_eq!(os.to_string(), "exe");
    let info = c.call::<DomainGetInfo>(&args).await.unwrap();
    assert_eq!(info.state, DomainState::RUNNING);
    assert_eq!((info.max_mem, info.nr_virt_cpu), (65536, 1), "{info:?}");

    // Scheduler parameters: the same names and values virsh schedinfo prints.
    let sched = c.call::<DomainGetSchedulerType>(&args).await.unwrap();
    let params_args = |nparams| DomainGetParamsArgs {
        dom: dom.clone(),
        nparams,
        flags: Default::default(),
    };
    let ours: Vec<(String, String)> = c
        .call_typed_params::<DomainGetSchedulerParametersFlags>(&params_args(sched.nparams))
        .await
        .unwrap()
        .params
        .iter()
        .map(|p| (p.field.to_string(), param_text(&p.value)))
        .collect();
    let virsh = virsh_fields(&d.virsh(&["schedinfo", &n]).unwrap());
    assert_eq!(
        virsh[0],
        ("Scheduler".into(), sched.kind.to_string()),
        "{virsh:?}"
    );
    assert_eq!(ours, virsh[1..], "schedinfo");
    assert!(ours.iter().any(|(k, _)| k == "cpu_shares"), "{ours:?}");

    // Memory parameters: the count first, then that many; virsh memtune names the same.
    let count = c
        .call_typed_params::<DomainGetMemoryParameters>(&params_args(0))
        .await
        .unwrap()
        .nparams;
    let mem = c
        .call_typed_params::<DomainGetMemoryParameters>(&params_args(count))
        .await
        .unwrap();
    let names: Vec<String> = mem.params.iter().map(|p| p.field.to_string()).collect();
    let virsh: Vec<String> = virsh_fields(&d.virsh(&["memtune", &n]).unwrap())
        .into_iter()
        .map(|(k, _)| k)
        .collect();
    assert_eq!(names, virsh, "memtune");
    assert_eq!(names.len(), count as usize);

    // Memory stats: the tags and values virsh dommemstat prints (actual=6, rss=7, …).
    let stats = c
        .call::<DomainMemoryStats>(&DomainMemoryStatsArgs {
            dom: dom.clone(),
            max_stats: 16,
            flags: 0,
        })
        .await
        .unwrap()
        .stats;
    let virsh = d.virsh(&["dommemstat", &n]).unwrap();
    let virsh: Vec<&str> = virsh.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(stats.len(), virsh.len(), "{stats:?} vs {virsh:?}");
    let actual = stats.iter().find(|s| s.tag == 6).expect("actual balloon");
    assert!(
        virsh.contains(&format!("actual {}", actual.val).as_str()),
        "{virsh:?}"
    );

    // Suspend and resume: the freezer.
    c.call::<DomainSuspend>(&args).await.unwrap();
    let state = c
        .call::<DomainGetState>(&DomainFlagsArgs {
            dom: dom.clone(),
            flags: 0,
        })
        .await
        .unwrap();
    assert_eq!(state.state, DomainState::PAUSED);
    assert_eq!(d.virsh(&["domstate", &n]).unwrap().trim(), "paused");
    c.call::<DomainResume>(&args).await.unwrap();

    // Shutdown by signal: the init leaves, the container stops.
    c.call::<DomainShutdownFlags>(&DomainFlagsArgs {
        dom: dom.clone(),
        flags: DomainShutdownFlagValues::SIGNAL,
    })
    .await
    .unwrap();
    let mut seen = Vec::new();
    while seen.len() < 4 {
        let ev = next(&mut events, "lxc lifecycle").await;
        if ev.dom.name.to_string() == n {
            seen.push((ev.event, ev.detail));
        }
    }
    let kinds: Vec<DomainEventType> = seen.iter().map(|(e, _)| *e).collect();
    assert_eq!(
        kinds,
        [
            DomainEventType::STARTED,
            DomainEventType::SUSPENDED,
            DomainEventType::RESUMED,
            DomainEventType::STOPPED
        ],
        "{seen:?}"
    );
    assert_eq!(
        seen[3].1,
        LifecycleDetail::Stopped(StoppedDetail::SHUTDOWN),
        "{seen:?}"
    );
    assert!(!c.is_closed());
}

/// Namespace calls given up by their callers after being sent: the descriptors their replies
/// bring are closed, not kept, and the next call still gets its own six.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn descriptors_of_abandoned_namespace_calls_are_closed() {
    let Some(d) = Lxcd::start_or_skip() else {
        return;
    };
    let c = connect(&d).await;
    let dom = start_with_known_init(&c, &d, "drop", "exec sleep 600").await;
    let init = init_of(&d, &dom);
    drop(open_namespace(&c, &dom).await);
    let net = ns_link(init, "net").unwrap();
    assert_eq!(our_fds_to(&net), 0, "{net} before");

    // Rounds of four calls: three given up once they are on the wire, the fourth awaited,
    // so the given-up replies arrive while a descriptor call is still pending and are read
    // with their descriptors, which the core must close.
    for _ in 0..6 {
        let args = DomainFlagsArgs {
            dom: dom.clone(),
            flags: 0,
        };
        let sent = c.stats().packets_out + 4;
        let mut calls: Vec<_> = (0..4)
            .map(|_| {
                Some(Box::pin(
                    c.call_with_fds::<LxcDomainOpenNamespace>(&args, Vec::new()),
                ))
            })
            .collect();
        // One poll each (it queues or writes the call), then only wait for the packets to
        // leave: the calls are not polled again, so their replies are not taken.
        let mut answered = Vec::new();
        for slot in &mut calls {
            if let Some(r) = slot.as_mut().and_then(futures::FutureExt::now_or_never) {
                answered.push(r.unwrap().1.len());
                *slot = None;
            }
        }
        while c.stats().packets_out < sent {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        let kept = calls.pop().unwrap();
        drop(calls);
        let fds = match kept {
            Some(call) => call.await.unwrap().1,
            None => open_namespace(&c, &dom).await,
        };
        assert!(answered.iter().all(|&n| n == 6), "{answered:?}");
        assert_eq!(fds.len(), 6);
    }
    let fds = open_namespace(&c, &dom).await;
    assert_eq!(fds.len(), 6);
    for fd in &fds {
        let link = std::fs::read_link(format!("/proc/self/fd/{}", fd.as_raw_fd())).unwrap();
        let link = link.to_string_lossy();
        let kind = link.split(':').next().unwrap();
        assert_eq!(Some(link.as_ref()), ns_link(init, kind).as_deref());
    }
    // Only the six we hold stay open (one of them the network namespace), once the
    // given-up replies (libvirtd may answer them after ours) have been read.
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while our_fds_to(&net) != 1 && std::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(
        our_fds_to(&net),
        1,
        "{net}: descriptors of given-up replies were kept"
    );
    assert!(
        c.stats().late_replies > 0,
        "no reply came after its call was given up"
    );
    drop(fds);
    assert_eq!(our_fds_to(&net), 0, "{net} after");
    c.call::<DomainDestroy>(&DomainArgs { dom }).await.unwrap();
    assert!(!c.is_closed());
}
