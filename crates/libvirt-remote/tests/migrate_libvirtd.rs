//! Migration (`Client::migrate`, client-driven, every protocol version; `migrate_to_uri`,
//! peer to peer) between two private session libvirtds on this host (`pair`): the
//! destination runs under a host name and host UUID of its own (libvirt refuses to migrate
//! to its own host), the data goes over 127.0.0.1 (`migrate_uri` and `listen_address`) or a
//! unix socket in the destination's directory. The guests are TCG domains that boot into
//! the BIOS and keep running; one has a disk (shared by path, then copied).

use libvirt_remote::client::{
    Client, ConnectOptions, MigrateError, MigrateOptions, MigrateProtocol, MigrateRefusal,
    MigrateStep,
};
use libvirt_remote::conn::CallError;
use libvirt_remote::proto::names::{DomainJobType, DomainState};
use libvirt_remote::proto::procs::common::{NameArgs, XmlArgs};
use libvirt_remote::proto::procs::domain::{
    DomainArgs, DomainCreateFlags, DomainCreateXml, DomainCreateXmlArgs, DomainDefineXml,
    DomainDestroy, DomainFlagsArgs, DomainGetJobInfo, DomainGetState, DomainIsPersistent,
    DomainLookupByName, DomainResume, DomainSuspend, DomainUndefine,
};
use libvirt_remote::proto::procs::migration::{DomainMigrateFlags, DomainMigrateStartPostCopy};
use libvirt_remote::proto::types::NonnullDomain;
use libvirt_remote::proto::{ErrorCode, RemoteError};
use libvirt_remote_testkit::live::create_domain;
use testbed::libvirtd::{Libvirtd, LibvirtdError};

/// Two private daemons, the destination in a UTS namespace of its own, and a connection to
/// each; `None` (skip) when libvirtd or root is missing and the testbed is not required.
struct Pair {
    src: Libvirtd,
    dst: Libvirtd,
    s: Client,
    t: Client,
}

async fn pair() -> Option<Pair> {
    let src = Libvirtd::start_or_skip()?;
    let dst = match Libvirtd::builder().hostname("lv-migrate-dst").start() {
        Ok(d) => d,
        Err(e @ LibvirtdError::NotInstalled { .. }) if !testbed::required() => {
            eprintln!("skipping: {e}");
            return None;
        }
        Err(e) => panic!("destination libvirtd: {e}"),
    };
    let s = Client::connect(&src.uri(), ConnectOptions::default())
        .await
        .unwrap();
    let t = Client::connect(&dst.uri(), ConnectOptions::default())
        .await
        .unwrap();
    Some(Pair { src, dst, s, t })
}

async fn start(c: &Client, d: &Libvirtd, name: &str) -> NonnullDomain {
    create_domain(c, &d.minimal_domain_xml(name)).await
}

async fn state(c: &Client, dom: &NonnullDomain) -> DomainState {
    c.call::<DomainGetState>(&DomainFlagsArgs {
        dom: dom.clone(),
        flags: 0,
    })
    .await
    .unwrap()
    .state
}

async fn lookup(c: &Client, name: &str) -> Result<NonnullDomain, CallError> {
    c.call::<DomainLookupByName>(&NameArgs { name: name.into() })
        .await
        .map(|r| r.dom)
}

fn remote(e: &MigrateError) -> &RemoteError {
    match e.call_error() {
        Some(CallError::Remote(r)) => r,
        _ => panic!("not a daemon's error: {e:?}"),
    }
}

/// A unix socket in the destination's directory for the data (no TCP listener at all).
fn unix_uri(d: &Libvirtd, name: &str) -> String {
    format!("unix://{}", d.dir().join(format!("{name}.sock")).display())
}

fn opts() -> MigrateOptions {
    opts_with(DomainMigrateFlags::LIVE)
}

/// Over 127.0.0.1, a free port.
fn opts_with(flags: DomainMigrateFlags) -> MigrateOptions {
    let port = testbed::guest::free_loopback_port().unwrap();
    MigrateOptions::new(flags)
        .uri(format!("tcp://127.0.0.1:{port}"))
        .listen_address("127.0.0.1")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_running_domain_migrates_between_two_private_daemons() {
    let Some(Pair { src, dst, s, t }) = pair().await else {
        return;
    };
    let dom = start(&s, &src, "mig-a").await;

    let moved = s
        .migrate(&t, &dom, &opts())
        .await
        .unwrap_or_else(|e| panic!("{e}: {e:?}\nsource:\n{}", src.log_tail()))
        .dom;
    assert_eq!(
        (moved.name.to_str().unwrap(), moved.uuid),
        ("mig-a", dom.uuid)
    );
    assert_eq!(state(&t, &moved).await, DomainState::RUNNING);
    // A transient domain leaves the source.
    let err = lookup(&s, "mig-a").await.unwrap_err();
    assert!(err.is_not_found(), "{err:?}");

    // And back again, under another name on the way.
    let back = t
        .migrate(&s, &moved, &opts().dname("mig-a2"))
        .await
        .unwrap_or_else(|e| panic!("{e}: {e:?}"))
        .dom;
    assert_eq!(back.name.to_str().unwrap(), "mig-a2");
    assert_eq!(state(&s, &back).await, DomainState::RUNNING);
    assert!(lookup(&t, "mig-a").await.unwrap_err().is_not_found());

    // A prepare the destination refuses (a running domain of that name, another UUID):
    // the typed error names the step, the source domain keeps running, and its migration
    // job was ended (the next migration of it, renamed, goes through).
    let blocker = start(&t, &dst, "mig-a2").await;
    let err = s.migrate(&t, &back, &opts()).await.unwrap_err();
    assert_eq!(err.step(), Some(MigrateStep::Prepare), "{err:?}");
    let e = remote(&err);
    eprintln!("prepare refused: {e:?}");
    assert_eq!(e.code, ErrorCode::OPERATION_FAILED, "{e:?}");
    assert!(err.to_string().contains("prepare"), "{err}");
    assert_eq!(state(&s, &back).await, DomainState::RUNNING);
    let moved = s
        .migrate(&t, &back, &opts().dname("mig-a3"))
        .await
        .unwrap_or_else(|e| panic!("{e}: {e:?}"))
        .dom;
    assert_eq!(state(&t, &moved).await, DomainState::RUNNING);

    // Peer to peer: the source daemon itself connects to the destination daemon's socket
    // and runs the steps (one call from us), then tunnelled through that connection.
    t.migrate_to_uri(&src.uri(), &moved, &opts().dname("mig-p2p"))
        .await
        .unwrap_or_else(|e| panic!("{e}: {e:?}\ndestination:\n{}", dst.log_tail()));
    let p2p = lookup(&s, "mig-p2p").await.unwrap();
    assert_eq!(state(&s, &p2p).await, DomainState::RUNNING);
    assert!(lookup(&t, "mig-a3").await.unwrap_err().is_not_found());
    let tunnelled = MigrateOptions::new(DomainMigrateFlags::LIVE | DomainMigrateFlags::TUNNELLED)
        .dname("mig-tunnel");
    s.migrate_to_uri(&dst.uri(), &p2p, &tunnelled)
        .await
        .unwrap_or_else(|e| panic!("{e}: {e:?}\nsource:\n{}", src.log_tail()));
    let again = lookup(&t, "mig-tunnel").await.unwrap();
    assert_eq!(state(&t, &again).await, DomainState::RUNNING);
    assert!(lookup(&s, "mig-p2p").await.unwrap_err().is_not_found());

    for d in [again, blocker] {
        t.call::<DomainDestroy>(&DomainArgs { dom: d })
            .await
            .unwrap();
    }
    assert!(!s.is_closed() && !t.is_closed());
}

async fn persistent(c: &Client, dom: &NonnullDomain) -> bool {
    c.call::<DomainIsPersistent>(&DomainArgs { dom: dom.clone() })
        .await
        .unwrap()
        .persistent
        != 0
}

/// `PAUSED` and `CHANGE_PROTECTION` as libvirt's client library handles them: a domain
/// paused on the source arrives paused (the client adds `PAUSED`, else the destination
/// resumes it); an explicit `CHANGE_PROTECTION` goes through on a source that supports it
/// and is refused, before any step, on one that does not (the test driver), as virsh's
/// `--change-protection` is.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_paused_domain_arrives_paused_and_change_protection_is_checked() {
    let Some(Pair { src, dst, s, t }) = pair().await else {
        return;
    };
    let dom = start(&s, &src, "mig-paused").await;
    s.call::<DomainSuspend>(&DomainArgs { dom: dom.clone() })
        .await
        .unwrap();
    let protected = opts().flags | DomainMigrateFlags::CHANGE_PROTECTION;
    let moved = s
        .migrate(&t, &dom, &opts_with(protected))
        .await
        .unwrap_or_else(|e| panic!("{e}: {e:?}\nsource:\n{}", src.log_tail()))
        .dom;
    assert_eq!(
        state(&t, &moved).await,
        DomainState::PAUSED,
        "a domain paused on the source arrives paused"
    );
    // Resumed there, it comes back running (no PAUSED from the client this time).
    t.call::<DomainResume>(&DomainArgs { dom: moved.clone() })
        .await
        .unwrap();
    let back = t
        .migrate(&s, &moved, &opts())
        .await
        .unwrap_or_else(|e| panic!("{e}: {e:?}\ndestination:\n{}", dst.log_tail()))
        .dom;
    assert_eq!(state(&s, &back).await, DomainState::RUNNING);

    // The test driver (same daemon) supports neither change protection nor any migration
    // protocol: the client refuses before any step, with libvirt's wording.
    let m = Client::connect(&src.test_uri(), ConnectOptions::default())
        .await
        .unwrap();
    let test_dom = lookup(&m, "test").await.unwrap();
    let err = m
        .migrate(&t, &test_dom, &opts_with(protected))
        .await
        .unwrap_err();
    assert_eq!(
        err.refusal(),
        Some(&MigrateRefusal::ChangeProtectionUnsupported),
        "{err:?}"
    );
    assert_eq!(err.to_string(), "cannot enforce change protection");
    let err = m.migrate(&t, &test_dom, &opts()).await.unwrap_err();
    assert_eq!(
        err.refusal(),
        Some(&MigrateRefusal::NoCommonProtocol),
        "{err:?}"
    );
    assert_eq!(state(&m, &test_dom).await, DomainState::RUNNING);
    s.call::<DomainDestroy>(&DomainArgs { dom: back })
        .await
        .unwrap();
}

/// A perform that fails (the destination listens on 127.0.0.2, the source sends to
/// 127.0.0.1) and a finish the destination refuses (it cannot write the persistent
/// definition): the error names the step, the source domain keeps running, the
/// destination keeps nothing, and the next migration on the same connections goes through.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_perform_or_finish_leaves_the_source_running() {
    let Some(Pair { src, dst, s, t }) = pair().await else {
        return;
    };
    let dom = start(&s, &src, "mig-fail").await;

    let port = testbed::guest::free_loopback_port().unwrap();
    let astray = MigrateOptions::new(DomainMigrateFlags::LIVE)
        .uri(format!("tcp://127.0.0.1:{port}"))
        .listen_address("127.0.0.2");
    let err = s.migrate(&t, &dom, &astray).await.unwrap_err();
    eprintln!("perform failed: {err}: {err:?}");
    assert_eq!(err.step(), Some(MigrateStep::Perform), "{err:?}");
    assert!(err.to_string().contains("perform"), "{err}");
    assert_eq!(state(&s, &dom).await, DomainState::RUNNING);
    assert!(lookup(&t, "mig-fail").await.unwrap_err().is_not_found());

    // Peer to peer to a daemon that is not there: the one perform call fails.
    let nowhere = format!(
        "qemu+unix:///session?socket={}",
        dst.dir().join("no-such.sock").display()
    );
    let err = s.migrate_to_uri(&nowhere, &dom, &opts()).await.unwrap_err();
    eprintln!("p2p perform failed: {err}: {err:?}");
    assert_eq!(err.step(), Some(MigrateStep::Perform), "{err:?}");
    assert_eq!(state(&s, &dom).await, DomainState::RUNNING);

    // The destination cannot write its persistent definitions: finish fails after the data
    // arrived, the client confirms the migration as cancelled and the source resumes.
    let configs = dst.dir().join("config/libvirt/qemu");
    let mode = |m| {
        std::fs::set_permissions(&configs, std::os::unix::fs::PermissionsExt::from_mode(m))
            .unwrap();
    };
    mode(0o500);
    let persist = opts_with(DomainMigrateFlags::LIVE | DomainMigrateFlags::PERSIST_DEST);
    let err = s.migrate(&t, &dom, &persist).await;
    mode(0o700);
    let err = err.unwrap_err();
    eprintln!("finish failed: {err}: {err:?}");
    assert_eq!(err.step(), Some(MigrateStep::Finish), "{err:?}");
    assert!(err.to_string().contains("finish"), "{err}");
    assert_eq!(state(&s, &dom).await, DomainState::RUNNING);
    assert!(lookup(&t, "mig-fail").await.unwrap_err().is_not_found());

    let moved = s
        .migrate(&t, &dom, &persist)
        .await
        .unwrap_or_else(|e| panic!("{e}: {e:?}\ndestination:\n{}", dst.log_tail()))
        .dom;
    assert_eq!(state(&t, &moved).await, DomainState::RUNNING);
    assert!(persistent(&t, &moved).await);
    assert!(lookup(&s, "mig-fail").await.unwrap_err().is_not_found());
    t.call::<DomainDestroy>(&DomainArgs { dom: moved.clone() })
        .await
        .unwrap();
    t.call::<DomainUndefine>(&DomainArgs { dom: moved })
        .await
        .unwrap();
}

/// Offline migration of a shut-off persistent domain: only the definition moves (no
/// perform step), the source keeps its own.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn offline_migration_moves_the_definition() {
    let Some(Pair {
        src,
        dst: _dst,
        s,
        t,
    }) = pair().await
    else {
        return;
    };
    let dom = s
        .call::<DomainDefineXml>(&XmlArgs {
            xml: src.minimal_domain_xml("mig-offline").as_str().into(),
        })
        .await
        .unwrap()
        .dom;
    let flags = DomainMigrateFlags::OFFLINE | DomainMigrateFlags::PERSIST_DEST;
    let moved = s
        .migrate(&t, &dom, &MigrateOptions::new(flags))
        .await
        .unwrap_or_else(|e| panic!("{e}: {e:?}\nsource:\n{}", src.log_tail()))
        .dom;
    assert_eq!(moved.uuid, dom.uuid);
    assert_eq!(state(&t, &moved).await, DomainState::SHUTOFF);
    assert!(persistent(&t, &moved).await);
    assert_eq!(state(&s, &dom).await, DomainState::SHUTOFF);
    assert!(persistent(&s, &dom).await);
    for (c, d) in [(&s, dom), (&t, moved)] {
        c.call::<DomainUndefine>(&DomainArgs { dom: d })
            .await
            .unwrap();
    }
}

/// v3 without parameters (`Begin3` … `Confirm3`) and v2 (`Prepare2`, `Perform`,
/// `Finish2`), each there and back, over a unix socket; v1 is refused by the qemu driver
/// (no v1 prepare), typed, and the domain keeps running; `listen_address` cannot be sent
/// without typed parameters.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn v3_without_parameters_and_v2_migrate_and_v1_is_refused() {
    let Some(Pair { src, dst, s, t }) = pair().await else {
        return;
    };
    let dom = start(&s, &src, "mig-old").await;
    let live = |p, d: &Libvirtd, n| {
        MigrateOptions::new(DomainMigrateFlags::LIVE)
            .protocol(p)
            .uri(unix_uri(d, n))
    };
    let moved = s
        .migrate(&t, &dom, &live(MigrateProtocol::V3, &dst, "v3"))
        .await
        .unwrap_or_else(|e| panic!("{e}: {e:?}\ndestination:\n{}", dst.log_tail()))
        .dom;
    assert_eq!(state(&t, &moved).await, DomainState::RUNNING);
    assert!(lookup(&s, "mig-old").await.unwrap_err().is_not_found());
    let back = t
        .migrate(
            &s,
            &moved,
            &live(MigrateProtocol::V3, &src, "v3b").dname("mig-old3"),
        )
        .await
        .unwrap_or_else(|e| panic!("{e}: {e:?}\ndestination:\n{}", dst.log_tail()))
        .dom;
    assert_eq!(back.name.to_str().unwrap(), "mig-old3");
    assert_eq!(state(&s, &back).await, DomainState::RUNNING);

    let err = s
        .migrate(&t, &back, &live(MigrateProtocol::V1, &dst, "v1"))
        .await
        .unwrap_err();
    eprintln!("v1: {err}: {err:?}");
    assert_eq!(err.step(), Some(MigrateStep::Prepare), "{err:?}");
    assert_eq!(remote(&err).code, ErrorCode::NO_SUPPORT, "{err:?}");
    assert_eq!(state(&s, &back).await, DomainState::RUNNING);

    let err = s
        .migrate(
            &t,
            &back,
            &live(MigrateProtocol::V3, &dst, "v3").listen_address("127.0.0.1"),
        )
        .await
        .unwrap_err();
    assert_eq!(
        err.refusal(),
        Some(&MigrateRefusal::NotInProtocol {
            option: "listen_address",
            protocol: MigrateProtocol::V3
        }),
        "{err:?}"
    );

    // v2 last: libvirt 9.0's qemu driver dereferences the capabilities of a migration
    // cookie v2 does not have and dies (SIGSEGV) in Prepare2, over TCP or a unix socket.
    // Either way the source domain keeps running; a daemon that does not crash migrates.
    let mut dst = dst;
    match s
        .migrate(&t, &back, &live(MigrateProtocol::V2, &dst, "v2"))
        .await
    {
        Ok(moved) => {
            let moved = moved.dom;
            eprintln!("v2 migrated");
            assert_eq!(state(&t, &moved).await, DomainState::RUNNING);
            let again = t
                .migrate(&s, &moved, &live(MigrateProtocol::V2, &src, "v2b"))
                .await
                .unwrap_or_else(|e| panic!("{e}: {e:?}\ndestination:\n{}", dst.log_tail()))
                .dom;
            assert_eq!(state(&s, &again).await, DomainState::RUNNING);
            s.call::<DomainDestroy>(&DomainArgs { dom: again })
                .await
                .unwrap();
            return;
        }
        Err(err) => {
            eprintln!("v2: {err}: {err:?}");
            assert_eq!(err.step(), Some(MigrateStep::Prepare), "{err:?}");
            assert!(
                matches!(err.call_error(), Some(CallError::Connection(_))),
                "{err:?}"
            );
            for _ in 0..100 {
                if !dst.is_running() {
                    break;
                }
                tokio::time::sleep(std::time::Duration::from_millis(50)).await;
            }
            assert!(!dst.is_running(), "the destination daemon died in Prepare2");
            assert!(t.is_closed());
        }
    }
    assert_eq!(state(&s, &back).await, DomainState::RUNNING);
    s.call::<DomainDestroy>(&DomainArgs { dom: back })
        .await
        .unwrap();
}

/// A domain with a disk. On this one host both daemons see the same path, but libvirt
/// calls a local file system unsafe (`MIGRATE_UNSAFE` at begin); with `UNSAFE` the domain
/// moves and keeps using the same file. Back again with the disk's contents copied
/// (`NON_SHARED_DISK`, qemu's NBD server on 127.0.0.1) to another file named by the
/// destination XML.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_domain_with_a_disk_migrates_shared_and_copied() {
    let Some(Pair { src, dst, s, t }) = pair().await else {
        return;
    };
    let pool = src.pool_name().to_string();
    src.virsh(&[
        "vol-create-as",
        &pool,
        "mig-disk.qcow2",
        "16M",
        "--format",
        "qcow2",
    ])
    .unwrap();
    src.virsh(&[
        "vol-create-as",
        &pool,
        "mig-copy.qcow2",
        "16M",
        "--format",
        "qcow2",
    ])
    .unwrap();
    let disk = src.pool_path().join("mig-disk.qcow2");
    let copy = src.pool_path().join("mig-copy.qcow2");
    let disk_xml = |path: &std::path::Path| {
        format!(
            "  <devices>\n    <disk type='file' device='disk'>\n      \
             <driver name='qemu' type='qcow2'/>\n      <source file='{}'/>\n      \
             <target dev='vda' bus='virtio'/>\n    </disk>\n  </devices>\n</domain>\n",
            path.display()
        )
    };
    let xml = src
        .minimal_domain_xml("mig-disk")
        .replace("</domain>\n", &disk_xml(&disk));
    let dom = create_domain(&s, &xml).await;

    let err = s.migrate(&t, &dom, &opts()).await.unwrap_err();
    eprintln!("local disk: {err}: {err:?}");
    assert_eq!(err.step(), Some(MigrateStep::Begin), "{err:?}");
    assert_eq!(remote(&err).code, ErrorCode::MIGRATE_UNSAFE, "{err:?}");
    assert_eq!(state(&s, &dom).await, DomainState::RUNNING);

    let unsafe_ = opts_with(DomainMigrateFlags::LIVE | DomainMigrateFlags::UNSAFE);
    let moved = s
        .migrate(&t, &dom, &unsafe_)
        .await
        .unwrap_or_else(|e| panic!("{e}: {e:?}\nsource:\n{}", src.log_tail()))
        .dom;
    assert_eq!(state(&t, &moved).await, DomainState::RUNNING);
    let there = dst.virsh(&["domblklist", "mig-disk"]).unwrap();
    assert!(there.contains(&disk.display().to_string()), "{there}");

    // Copied back into another file of the source's pool.
    let dxml = dst
        .virsh(&["dumpxml", "--migratable", "mig-disk"])
        .unwrap()
        .replace(&disk.display().to_string(), &copy.display().to_string());
    let copied = opts_with(DomainMigrateFlags::LIVE | DomainMigrateFlags::NON_SHARED_DISK)
        .dest_xml(dxml)
        .migrate_disk("vda");
    let back = t
        .migrate(&s, &moved, &copied)
        .await
        .unwrap_or_else(|e| panic!("{e}: {e:?}\ndestination:\n{}", dst.log_tail()))
        .dom;
    assert_eq!(state(&s, &back).await, DomainState::RUNNING);
    let here = src.virsh(&["domblklist", "mig-disk"]).unwrap();
    assert!(here.contains(&copy.display().to_string()), "{here}");
    s.call::<DomainDestroy>(&DomainArgs { dom: back })
        .await
        .unwrap();
}

/// A guest whose RAM is a shared file under the daemon's directory, filled by the test with
/// non-zero bytes (a guest that only runs its BIOS leaves RAM zero, and qemu sends a zero page
/// in a few bytes): migrating it at 1 MiB/s takes minutes (`mib` seconds at least).
async fn start_with_busy_ram(c: &Client, d: &Libvirtd, name: &str, mib: u32) -> NonnullDomain {
    let xml = d.minimal_domain_xml(name).replace(
        "<memory unit='MiB'>64</memory>",
        &format!(
            "<memory unit='MiB'>{mib}</memory>\n  <memoryBacking>\n    \
             <source type='file'/>\n    <access mode='shared'/>\n  </memoryBacking>"
        ),
    );
    // Started paused and filled before its BIOS runs (filled under a running BIOS, its
    // working memory could be overwritten), then resumed.
    let dom = c
        .call::<DomainCreateXml>(&DomainCreateXmlArgs {
            xml_desc: xml.as_str().into(),
            flags: DomainCreateFlags::START_PAUSED,
        })
        .await
        .unwrap()
        .dom;
    let size = u64::from(mib) << 20;
    let ram = find_file(d.dir(), size)
        .unwrap_or_else(|| panic!("no {mib} MiB RAM file under {}", d.dir().display()));
    // xorshift: incompressible enough, and no page is zero. Not the first 2 MiB (the BIOS
    // runs from its shadow copy there) nor the last 4 (its tables and high zone): the guest
    // keeps running its BIOS.
    let mut x = 0x9e37_79b9_7f4a_7c15_u64;
    let mut chunk = vec![0u8; 1 << 20];
    let mut f = std::fs::OpenOptions::new().write(true).open(&ram).unwrap();
    std::io::Seek::seek(&mut f, std::io::SeekFrom::Start(2 << 20)).unwrap();
    for _ in 2..mib - 4 {
        for w in chunk.chunks_exact_mut(8) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            w.copy_from_slice(&x.to_le_bytes());
        }
        std::io::Write::write_all(&mut f, &chunk).unwrap();
    }
    c.call::<DomainResume>(&DomainArgs { dom: dom.clone() })
        .await
        .unwrap();
    dom
}

/// A regular file of exactly `size` bytes under `dir`.
fn find_file(dir: &std::path::Path, size: u64) -> Option<std::path::PathBuf> {
    for e in std::fs::read_dir(dir).ok()?.flatten() {
        let Ok(t) = e.file_type() else { continue };
        if t.is_dir() {
            if let Some(p) = find_file(&e.path(), size) {
                return Some(p);
            }
        } else if t.is_file() && e.metadata().is_ok_and(|m| m.len() == size) {
            return Some(e.path());
        }
    }
    None
}

/// Returns once the source's migration job of `dom` has moved some data (perform is under
/// way), within 120 s.
async fn perform_under_way<T: std::fmt::Debug>(
    s: &Client,
    dom: &NonnullDomain,
    mig: &mut tokio::task::JoinHandle<T>,
) {
    for _ in 0..1200 {
        let job = s
            .call::<DomainGetJobInfo>(&DomainArgs { dom: dom.clone() })
            .await
            .unwrap();
        if job.kind == DomainJobType::UNBOUNDED && job.data_processed > 0 {
            eprintln!("perform under way: {job:?}");
            return;
        }
        assert!(
            !mig.is_finished(),
            "the migration ended before perform: {:?}",
            mig.await
        );
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    panic!("no perform within 120 s");
}

/// The destination daemon dies (SIGKILL) while the source performs a bandwidth-limited
/// migration that would take minutes: the source daemon never hears of it (the data goes to
/// the destination's qemu, which outlives its daemon), so the client watches the
/// destination's connection, aborts the source's job and reports the perform step with the
/// destination's connection error, promptly. The source domain runs on, the source connection
/// works, and the destination daemon, restarted, accepts the next migration. The same death
/// during a peer-to-peer perform is noticed by the source daemon itself.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_destination_that_dies_mid_perform_fails_the_perform_step() {
    let Some(Pair { src, mut dst, s, t }) = pair().await else {
        return;
    };
    let dom = start_with_busy_ram(&s, &src, "mig-kill", 256).await;
    tokio::time::sleep(std::time::Duration::from_secs(1)).await;
    assert_eq!(state(&s, &dom).await, DomainState::RUNNING);

    let slow = opts().bandwidth(1);
    let mut mig = {
        let (s, t, dom) = (s.clone(), t.clone(), dom.clone());
        tokio::spawn(async move { s.migrate(&t, &dom, &slow).await })
    };
    perform_under_way(&s, &dom, &mut mig).await;
    dst.kill().unwrap();

    // No hang: the perform alone would take over four minutes at 1 MiB/s.
    let err = tokio::time::timeout(std::time::Duration::from_secs(120), mig)
        .await
        .expect("the migration did not end within 120 s of the destination's death")
        .unwrap()
        .unwrap_err();
    eprintln!("destination killed: {err}: {err:?}");
    assert_eq!(err.step(), Some(MigrateStep::Perform), "{err:?}");
    assert!(
        matches!(err.call_error(), Some(CallError::Connection(_))),
        "{err:?}"
    );
    assert!(t.is_closed());
    assert!(!s.is_closed());
    let st = s
        .call::<DomainGetState>(&DomainFlagsArgs {
            dom: dom.clone(),
            flags: 0,
        })
        .await
        .unwrap();
    assert_eq!(
        st.state,
        DomainState::RUNNING,
        "{st:?}\nsource:\n{}",
        src.log_tail()
    );
    let job = s
        .call::<DomainGetJobInfo>(&DomainArgs { dom: dom.clone() })
        .await
        .unwrap();
    assert_eq!(job.kind, DomainJobType::NONE, "{job:?}");

    // Peer to peer (to another destination daemon), the source daemon holds the destination
    // connection itself and notices its death: the one perform call fails, the domain runs.
    let mut dst2 = Libvirtd::builder()
        .hostname("lv-migrate-dst2")
        .start()
        .unwrap();
    let mut mig = {
        let (s, dom, uri) = (s.clone(), dom.clone(), dst2.uri());
        tokio::spawn(async move { s.migrate_to_uri(&uri, &dom, &opts().bandwidth(1)).await })
    };
    perform_under_way(&s, &dom, &mut mig).await;
    dst2.kill().unwrap();
    let err = tokio::time::timeout(std::time::Duration::from_secs(120), mig)
        .await
        .expect("the p2p migration did not end within 120 s of the destination's death")
        .unwrap()
        .unwrap_err();
    eprintln!("destination killed (p2p): {err}: {err:?}");
    assert_eq!(err.step(), Some(MigrateStep::Perform), "{err:?}");
    // The source daemon's own error about its lost connection (libvirt 9.0: RPC
    // INTERNAL_ERROR "client socket is closed"); our source connection is fine.
    assert!(
        matches!(err.call_error(), Some(CallError::Remote(_))),
        "{err:?}"
    );
    assert!(!s.is_closed());
    assert_eq!(state(&s, &dom).await, DomainState::RUNNING);

    // The first destination, restarted, cleans up the incoming domain its killed predecessor
    // left and takes the domain, at full speed this time.
    dst.restart().unwrap();
    let t = Client::connect(&dst.uri(), ConnectOptions::default())
        .await
        .unwrap();
    assert!(lookup(&t, "mig-kill").await.unwrap_err().is_not_found());
    let moved = s
        .migrate(&t, &dom, &opts())
        .await
        .unwrap_or_else(|e| panic!("{e}: {e:?}\ndestination:\n{}", dst.log_tail()))
        .dom;
    assert_eq!(state(&t, &moved).await, DomainState::RUNNING);
    assert!(lookup(&s, "mig-kill").await.unwrap_err().is_not_found());
    t.call::<DomainDestroy>(&DomainArgs { dom: moved })
        .await
        .unwrap();
}

/// `virsh qemu-monitor-command --hmp DOM 'qemu-io -d ide0-0-0 "CMD"'`: I/O by the running
/// domain's own qemu through its IDE disk `hda` (what the guest would do; a BIOS guest
/// writes nothing). qemu-io prints to qemu's stdout, the domain log: the new log lines come
/// back, checked for qemu-io's success line and no pattern failure.
fn disk_io(d: &Libvirtd, dom: &str, cmd: &str) {
    let before = d.domain_log(dom).len();
    let out = d
        .virsh(&[
            "qemu-monitor-command",
            "--hmp",
            dom,
            &format!("qemu-io -d ide0-0-0 \"{cmd}\""),
        ])
        .unwrap();
    let done = if cmd.starts_with("write") {
        "wrote "
    } else {
        "read "
    };
    let mut log = String::new();
    for _ in 0..100 {
        log = d.domain_log(dom)[before..].to_string();
        if log.contains(done) {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert!(
        log.contains(done) && !log.contains("failed") && out.trim().is_empty(),
        "{dom}: {cmd}: {out}\n{log}"
    );
}

/// The `(start, length)` of the data `qemu-img map` finds in `image` itself (depth 0), not
/// in its backing file.
fn own_data(image: &std::path::Path) -> Vec<(u64, u64)> {
    let out = std::process::Command::new("qemu-img")
        .args(["map", "--output=json", "-U", "-f", "qcow2"])
        .arg(image)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8(out.stdout).unwrap();
    let num = |entry: &str, key: &str| -> u64 {
        let at = entry.find(&format!("\"{key}\": ")).unwrap() + key.len() + 4;
        entry[at..]
            .split(|c: char| !c.is_ascii_digit())
            .next()
            .unwrap()
            .parse()
            .unwrap()
    };
    text.split('}')
        .filter(|e| e.contains("\"depth\": 0") && e.contains("\"data\": true"))
        .map(|e| (num(e, "start"), num(e, "length")))
        .collect()
}

/// Copy-storage incremental (`NON_SHARED_INC`): the disk is a qcow2 overlay over a raw
/// backing file both hosts have (an identical copy in each daemon's pool); the destination's
/// overlay is created empty over its copy. Only the overlay's data is copied: after the move the
/// destination's overlay holds exactly what the running domain wrote (and reads it back
/// through the destination's qemu), the backing file's contents show through it, and the
/// backing file is untouched.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn incremental_copy_storage_moves_only_the_overlay() {
    let Some(Pair { src, dst, s, t }) = pair().await else {
        return;
    };
    let (sp, dp) = (src.pool_name().to_string(), dst.pool_name().to_string());
    let base_bytes = vec![0x11_u8; 8 << 20];
    let mut bases = Vec::new();
    for (d, pool) in [(&src, &sp), (&dst, &dp)] {
        d.virsh(&[
            "vol-create-as",
            pool,
            "inc-base.raw",
            "8M",
            "--format",
            "raw",
        ])
        .unwrap();
        let base = d.pool_path().join("inc-base.raw");
        std::fs::write(&base, &base_bytes).unwrap();
        let mtime = std::fs::metadata(&base).unwrap().modified().unwrap();
        bases.push((base, mtime));
    }
    let overlay = |d: &Libvirtd, pool: &str, name: &str, base: &std::path::Path| {
        let b = base.display().to_string();
        d.virsh(&[
            "vol-create-as",
            pool,
            name,
            "8M",
            "--format",
            "qcow2",
            "--backing-vol",
            &b,
            "--backing-vol-format",
            "raw",
        ])
        .unwrap();
    };
    overlay(&src, &sp, "inc-top.qcow2", &bases[0].0);
    overlay(&dst, &dp, "inc-top-dst.qcow2", &bases[1].0);
    let top = src.pool_path().join("inc-top.qcow2");
    let top_dst = dst.pool_path().join("inc-top-dst.qcow2");
    assert_eq!(own_data(&top_dst), [], "a fresh overlay holds no data");

    let xml = src.minimal_domain_xml("mig-inc").replace(
        "</domain>\n",
        &format!(
            "  <devices>\n    <disk type='file' device='disk'>\n      \
             <driver name='qemu' type='qcow2'/>\n      <source file='{}'/>\n      \
             <target dev='hda' bus='ide'/>\n    </disk>\n  </devices>\n</domain>\n",
            top.display()
        ),
    );
    let dom = create_domain(&s, &xml).await;
    // The running domain writes 64 KiB at 1 MiB and 64 KiB at 5 MiB into its overlay.
    disk_io(&src, "mig-inc", "write -P 0xcd 1M 64k");
    disk_io(&src, "mig-inc", "write -P 0xef 5M 64k");
    let written = [(1 << 20, 64 << 10), (5 << 20, 64 << 10)];

    let dxml = src
        .virsh(&["dumpxml", "--migratable", "mig-inc"])
        .unwrap()
        .replace(&top.display().to_string(), &top_dst.display().to_string())
        .replace(
            &bases[0].0.display().to_string(),
            &bases[1].0.display().to_string(),
        );
    let inc = opts_with(
        DomainMigrateFlags::LIVE | DomainMigrateFlags::NON_SHARED_INC | DomainMigrateFlags::UNSAFE,
    )
    .dest_xml(dxml)
    .migrate_disk("hda");
    let moved = s
        .migrate(&t, &dom, &inc)
        .await
        .unwrap_or_else(|e| panic!("{e}: {e:?}\ndestination:\n{}", dst.log_tail()))
        .dom;
    assert_eq!(state(&t, &moved).await, DomainState::RUNNING);
    let there = dst.virsh(&["domblklist", "mig-inc"]).unwrap();
    assert!(there.contains(&top_dst.display().to_string()), "{there}");
    // The destination's qemu reads the writes and, around them, the backing file.
    for cmd in [
        "read -P 0xcd 1M 64k",
        "read -P 0xef 5M 64k",
        "read -P 0x11 0 1M",
        "read -P 0x11 7M 1M",
    ] {
        disk_io(&dst, "mig-inc", cmd);
    }
    t.call::<DomainDestroy>(&DomainArgs { dom: moved })
        .await
        .unwrap();

    // Only the overlay's data travelled: the destination's overlay holds the two writes and
    // nothing of the backing file.
    assert_eq!(own_data(&top_dst), written, "data in {}", top_dst.display());
    assert_eq!(own_data(&top), written, "data in {}", top.display());
    for (base, mtime) in &bases {
        assert!(
            std::fs::read(base).unwrap() == base_bytes,
            "{} changed",
            base.display()
        );
        assert_eq!(&std::fs::metadata(base).unwrap().modified().unwrap(), mtime);
    }
}

/// Whether an unprivileged qemu may use userfaultfd (post-copy's destination needs it): the
/// `vm.unprivileged_userfaultfd` sysctl is 1, or `/dev/userfaultfd` is open to others.
fn unprivileged_userfaultfd() -> bool {
    let sysctl = std::fs::read_to_string("/proc/sys/vm/unprivileged_userfaultfd")
        .is_ok_and(|s| s.trim() == "1");
    let dev = std::fs::metadata("/dev/userfaultfd")
        .is_ok_and(|m| std::os::unix::fs::PermissionsExt::mode(&m.permissions()) & 0o006 == 0o006);
    sysctl || dev
}

/// Post-copy (`POSTCOPY`, then `DomainMigrateStartPostCopy`). Outside a migration the switch
/// is refused, typed. The destination's qemu runs unprivileged, and post-copy needs
/// userfaultfd there: where the kernel keeps it from unprivileged processes (this box:
/// `vm.unprivileged_userfaultfd = 0`, `/dev/userfaultfd` root-only), the migration is refused
/// at prepare (qemu cannot enable `postcopy-ram`), typed, and the source domain keeps
/// running; where it is allowed, a post-copy-enabled migration goes through (without the
/// switch).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn post_copy_needs_userfaultfd_on_the_destination() {
    let Some(Pair { src, dst, s, t }) = pair().await else {
        return;
    };
    let dom = start(&s, &src, "mig-postcopy").await;
    let err = s
        .call::<DomainMigrateStartPostCopy>(&DomainFlagsArgs {
            dom: dom.clone(),
            flags: 0,
        })
        .await
        .unwrap_err();
    eprintln!("start post-copy outside a migration: {err:?}");
    match &err {
        CallError::Remote(r) => assert_eq!(r.code, ErrorCode::OPERATION_INVALID, "{r:?}"),
        e => panic!("{e:?}"),
    }

    let postcopy = opts_with(DomainMigrateFlags::LIVE | DomainMigrateFlags::POSTCOPY);
    let res = s.migrate(&t, &dom, &postcopy).await;
    if unprivileged_userfaultfd() {
        let moved = res
            .unwrap_or_else(|e| panic!("{e}: {e:?}\ndestination:\n{}", dst.log_tail()))
            .dom;
        assert_eq!(state(&t, &moved).await, DomainState::RUNNING);
        t.call::<DomainDestroy>(&DomainArgs { dom: moved })
            .await
            .unwrap();
        return;
    }
    let err = res.unwrap_err();
    eprintln!("post-copy without userfaultfd: {err}: {err:?}");
    assert_eq!(err.step(), Some(MigrateStep::Prepare), "{err:?}");
    let e = remote(&err);
    assert_eq!(e.code, ErrorCode::INTERNAL_ERROR, "{e:?}");
    assert!(e.to_string().contains("Postcopy is not supported"), "{e:?}");
    // Why, in the destination qemu's own words.
    let log = dst.domain_log("mig-postcopy");
    assert!(log.contains("userfaultfd not available"), "{log}");
    assert_eq!(state(&s, &dom).await, DomainState::RUNNING);
    assert!(lookup(&t, "mig-postcopy").await.unwrap_err().is_not_found());
    // The same domain, without post-copy, moves.
    let moved = s
        .migrate(&t, &dom, &opts())
        .await
        .unwrap_or_else(|e| panic!("{e}: {e:?}"))
        .dom;
    t.call::<DomainDestroy>(&DomainArgs { dom: moved })
        .await
        .unwrap();
}
