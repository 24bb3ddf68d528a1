//! The tokio client against a real, private libvirtd 9.0 (started by the test, session mode,
//! unprivileged user, temp dir). Nothing here is mocked.
#![cfg(feature = "client")]
// Short names (d = daemon, c = client, p = pool) keep the scenarios readable.
#![allow(clippy::many_single_char_names)]

use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::time::{Duration, Instant};

use bytes::Bytes;
use futures::StreamExt;
use libvirt_remote::client::{
    Client, ConnectOptions, DownloadOptions, TransferError, UploadOptions,
};
use libvirt_remote::conn::handshake::HandshakeOptions;
use libvirt_remote::conn::{
    CallError, Config, ConnectionError, KeepaliveConfig, StreamError, StreamItem,
};
use libvirt_remote::proto::ErrorCode;
use libvirt_remote::proto::events::{DomainEvent, Lifecycle, event_id};
use libvirt_remote::proto::names::{DomainEventType, DomainState};
use libvirt_remote::proto::procs::connect::ConnectListAllDomainsFlags;
use libvirt_remote::proto::procs::connect::{
    ConnectGetHostname, ConnectGetLibVersion, ConnectGetType, ConnectGetUri, ConnectGetVersion,
    ConnectListAllDomains, ConnectListAllDomainsArgs,
};
use libvirt_remote::proto::procs::domain::DomainUndefineFlagsValues;
use libvirt_remote::proto::procs::domain::{
    DomainArgs, DomainCreate, DomainDefineXml, DomainDefineXmlArgs, DomainDestroy, DomainFlagsArgs,
    DomainGetState, DomainLookupByName, DomainLookupByNameArgs, DomainUndefineFlags,
};
use libvirt_remote::proto::procs::storage::{
    StoragePoolLookupByName, StoragePoolLookupByNameArgs, StorageVolCreateXml,
    StorageVolCreateXmlArgs, StorageVolDelete, StorageVolFlagsArgs,
};
use libvirt_remote::proto::procs::storage::{StorageVolCreateFlags, StorageVolDeleteFlags};
use libvirt_remote::proto::types::{NonnullStoragePool, NonnullStorageVol};
use testbed::data::{FailAfter, pattern};
use testbed::libvirtd::Libvirtd;

const MIB: u64 = 1 << 20;

fn daemon() -> Option<Libvirtd> {
    Libvirtd::start_or_skip()
}

fn opts(keepalive: Option<KeepaliveConfig>) -> ConnectOptions {
    ConnectOptions {
        config: Config {
            keepalive,
            ..Config::default()
        },
        handshake: HandshakeOptions {
            keepalive: true,
            events: true,
            close_callback: true,
            ..HandshakeOptions::default()
        },
        ..ConnectOptions::default()
    }
}

async fn connect(d: &Libvirtd) -> Client {
    Client::connect(&d.uri(), opts(None))
        .await
        .expect("connect to the private libvirtd")
}

async fn pool(c: &Client, d: &Libvirtd) -> NonnullStoragePool {
    c.call::<StoragePoolLookupByName>(&StoragePoolLookupByNameArgs {
        name: d.pool_name().into(),
    })
    .await
    .unwrap()
    .pool
}

async fn create_vol(
    c: &Client,
    pool: &NonnullStoragePool,
    name: &str,
    bytes: u64,
) -> NonnullStorageVol {
    let xml = format!(
        "<volume><name>{name}</name><capacity unit='bytes'>{bytes}</capacity><allocation>0</allocation><target><format type='raw'/></target></volume>"
    );
    c.call::<StorageVolCreateXml>(&StorageVolCreateXmlArgs {
        pool: pool.clone(),
        xml: xml.into(),
        flags: StorageVolCreateFlags::empty(),
    })
    .await
    .unwrap()
    .vol
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn handshake_and_connection_calls() {
    let Some(d) = daemon() else { return };
    let c = connect(&d).await;
    let o = c.handshake_outcome();
    assert!(
        o.keepalive && o.event_callbacks && o.close_callback,
        "{o:?}"
    );
    let v = c.call::<ConnectGetLibVersion>(&()).await.unwrap().lib_ver;
    assert!(v >= 9_000_000, "lib version {v}");
    assert_eq!(c.call::<ConnectGetType>(&()).await.unwrap().kind, "QEMU");
    assert!(c.call::<ConnectGetVersion>(&()).await.unwrap().hv_ver > 0);
    assert!(
        !c.call::<ConnectGetHostname>(&())
            .await
            .unwrap()
            .hostname
            .is_empty()
    );
    assert_eq!(
        c.call::<ConnectGetUri>(&()).await.unwrap().uri,
        "qemu:///session"
    );
    c.disconnect(Duration::from_secs(5)).await;
    assert!(matches!(
        c.error(),
        Some(ConnectionError::LocallyClosed { .. })
    ));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn test_driver_through_the_same_socket() {
    let Some(d) = daemon() else { return };
    let c = Client::connect(&d.test_uri(), opts(None)).await.unwrap();
    assert_eq!(c.call::<ConnectGetType>(&()).await.unwrap().kind, "TEST");
    let doms = c
        .call::<ConnectListAllDomains>(&ConnectListAllDomainsArgs {
            need_results: 1,
            flags: ConnectListAllDomainsFlags::empty(),
        })
        .await
        .unwrap();
    assert!(doms.domains.iter().any(|d| d.name == "test"), "{doms:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn domain_lifecycle_with_events() {
    let Some(d) = daemon() else { return };
    let c = connect(&d).await;
    let mut events = c
        .subscribe::<DomainEvent>(event_id::LIFECYCLE, None)
        .await
        .unwrap();
    let name = "lv-events";
    let dom = c
        .call::<DomainDefineXml>(&DomainDefineXmlArgs {
            xml: d.minimal_domain_xml(name).into(),
        })
        .await
        .unwrap()
        .dom;
    assert_eq!(dom.name, name);
    c.call::<DomainCreate>(&DomainArgs { dom: dom.clone() })
        .await
        .unwrap();
    let st = c
        .call::<DomainGetState>(&DomainFlagsArgs {
            dom: dom.clone(),
            flags: Default::default(),
        })
        .await
        .unwrap();
    assert_eq!(st.state, DomainState::RUNNING, "running");
    c.call::<DomainDestroy>(&DomainArgs { dom: dom.clone() })
        .await
        .unwrap();
    c.call::<DomainUndefineFlags>(&DomainFlagsArgs {
        dom: dom.clone(),
        flags: DomainUndefineFlagsValues::empty(),
    })
    .await
    .unwrap();
    // qemu also reports RESUMED on start and SHUTDOWN (host signal) on destroy.
    let mut seen = Vec::new();
    while seen.last() != Some(&DomainEventType::UNDEFINED) {
        let ev = tokio::time::timeout(Duration::from_secs(10), events.next())
            .await
            .expect("event in time")
            .expect("stream open");
        let DomainEvent::Lifecycle(Lifecycle { dom: ed, event, .. }) = ev else {
            continue;
        };
        assert_eq!(ed.name, name);
        seen.push(event);
    }
    let wanted = [
        DomainEventType::DEFINED,
        DomainEventType::STARTED,
        DomainEventType::STOPPED,
        DomainEventType::UNDEFINED,
    ];
    let mut it = seen.iter();
    assert!(
        wanted.iter().all(|w| it.any(|s| s == w)),
        "events in order {wanted:?} within {seen:?}"
    );
    let err = c
        .call::<DomainLookupByName>(&DomainLookupByNameArgs { name: name.into() })
        .await
        .unwrap_err();
    assert!(err.is_not_found(), "{err:?}");
    assert_eq!(err.remote().unwrap().code, ErrorCode::NO_DOMAIN);
}

async fn upload_bytes(
    c: &Client,
    vol: &NonnullStorageVol,
    data: &[u8],
) -> Result<u64, TransferError> {
    let up = c.vol_upload(vol, UploadOptions::new()).await?;
    up.send_all_and_finish(std::io::Cursor::new(data.to_vec()))
        .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn upload_and_download_64_mib_byte_exact() {
    let Some(d) = daemon() else { return };
    let c = connect(&d).await;
    let p = pool(&c, &d).await;
    let vol = create_vol(&c, &p, "dense.raw", 64 * MIB).await;
    let data = pattern(64 * MIB as usize, 7);
    assert_eq!(upload_bytes(&c, &vol, &data).await.unwrap(), 64 * MIB);
    assert_eq!(
        std::fs::read(d.pool_path().join("dense.raw")).unwrap(),
        data,
        "file on the daemon side"
    );
    let mut dl = c.vol_download(&vol, DownloadOptions::new()).await.unwrap();
    let mut got = Vec::with_capacity(data.len());
    while let Some(item) = dl.next().await {
        match item.unwrap() {
            StreamItem::Data(b) => got.extend_from_slice(&b),
            StreamItem::Hole(_) => panic!("hole on a non-sparse download"),
        }
    }
    assert!(got == data, "download differs");
    // Not a regular file: no seek, no truncate (virsh accepts these too).
    let dl = c.vol_download(&vol, DownloadOptions::new()).await.unwrap();
    assert_eq!(
        dl.write_to_file(Path::new("/dev/null")).await.unwrap(),
        64 * MIB
    );
    c.call::<StorageVolDelete>(&StorageVolFlagsArgs {
        vol,
        flags: StorageVolDeleteFlags::empty(),
    })
    .await
    .unwrap();
}

/// A pipe (or a device) reports size 0: its bytes must be read to the end, not skipped.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn upload_from_a_pipe_sends_everything() {
    let Some(d) = daemon() else { return };
    let c = connect(&d).await;
    let p = pool(&c, &d).await;
    let dir = tempfile::tempdir().unwrap();
    // Not a multiple of any packet size, written in small pieces (short reads on our side).
    let len = 5 * MIB as usize + 12_345;
    for (name, sparse) in [("pipe.raw", false), ("pipe-sparse.raw", true)] {
        let vol = create_vol(&c, &p, name, len as u64).await;
        let fifo = dir.path().join(format!("{name}.fifo"));
        let st = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(st.success(), "mkfifo");
        let data = pattern(len, 11);
        let writer = {
            let (fifo, data) = (fifo.clone(), data.clone());
            std::thread::spawn(move || {
                use std::io::Write;
                let mut f = std::fs::OpenOptions::new().write(true).open(fifo)?;
                data.chunks(10_000).try_for_each(|piece| f.write_all(piece))
            })
        };
        let up = c
            .vol_upload(&vol, UploadOptions::new().sparse(sparse))
            .await
            .unwrap();
        let sent = up.send_file_and_finish(&fifo).await.unwrap();
        assert_eq!(
            sent, len as u64,
            "bytes sent from the pipe (sparse: {sparse})"
        );
        writer
            .join()
            .unwrap()
            .expect("the client read the whole pipe");
        assert!(
            std::fs::read(d.pool_path().join(name)).unwrap() == data,
            "the volume differs from what went into the pipe (sparse: {sparse})"
        );
        c.call::<StorageVolDelete>(&StorageVolFlagsArgs {
            vol,
            flags: StorageVolDeleteFlags::empty(),
        })
        .await
        .unwrap();
    }
}

/// A 64 MiB file with 4 data islands of 1 MiB.
fn sparse_file(path: &Path) -> Vec<(u64, Vec<u8>)> {
    use std::io::{Seek, SeekFrom, Write};
    let mut f = std::fs::File::create(path).unwrap();
    let islands: Vec<(u64, Vec<u8>)> = [3u64, 17, 40, 63]
        .iter()
        .map(|m| (m * MIB, pattern(MIB as usize, *m)))
        .collect();
    for (off, data) in &islands {
        f.seek(SeekFrom::Start(*off)).unwrap();
        f.write_all(data).unwrap();
    }
    f.set_len(64 * MIB).unwrap();
    islands
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sparse_upload_and_download_preserve_holes() {
    let Some(d) = daemon() else { return };
    let c = connect(&d).await;
    let p = pool(&c, &d).await;
    let vol = create_vol(&c, &p, "sparse.raw", 64 * MIB).await;
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("src.raw");
    let islands = sparse_file(&src);
    let up = c
        .vol_upload(&vol, UploadOptions::new().sparse(true))
        .await
        .unwrap();
    let sent = up.send_file_and_finish(&src).await.unwrap();
    assert_eq!(sent, 4 * MIB, "only data is sent");
    let remote = d.pool_path().join("sparse.raw");
    let meta = std::fs::metadata(&remote).unwrap();
    assert_eq!(meta.len(), 64 * MIB);
    assert!(
        meta.blocks() * 512 <= 8 * MIB,
        "holes preserved on the daemon side: {} bytes allocated",
        meta.blocks() * 512
    );
    assert_eq!(
        std::fs::read(&remote).unwrap(),
        std::fs::read(&src).unwrap()
    );

    let dst = tmp.path().join("dst.raw");
    let dl = c
        .vol_download(&vol, DownloadOptions::new().sparse(true))
        .await
        .unwrap();
    assert_eq!(dl.write_to_file(&dst).await.unwrap(), 64 * MIB);
    let meta = std::fs::metadata(&dst).unwrap();
    assert!(
        meta.blocks() * 512 <= 8 * MIB,
        "holes preserved locally: {} bytes allocated",
        meta.blocks() * 512
    );
    let back = std::fs::read(&dst).unwrap();
    for (off, data) in &islands {
        assert!(back[*off as usize..*off as usize + data.len()] == data[..]);
    }
    assert_eq!(back, std::fs::read(&src).unwrap());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_error_mid_upload_then_connection_still_serves() {
    let Some(d) = daemon() else { return };
    let c = connect(&d).await;
    let p = pool(&c, &d).await;
    let vol = create_vol(&c, &p, "short.raw", 4 * MIB).await;
    // Declare 1000 bytes but send 4 MiB: the daemon answers ENOSPC mid-stream.
    let up = c
        .vol_upload(&vol, UploadOptions::new().length(1000))
        .await
        .unwrap();
    let r = tokio::time::timeout(
        Duration::from_secs(30),
        up.send_all_and_finish(std::io::Cursor::new(vec![1u8; 4 * MIB as usize])),
    )
    .await
    .expect("the upload ends (a server error must end the stream)");
    let Err(TransferError::Stream(StreamError::Remote(e))) = r else {
        panic!("{r:?}")
    };
    assert_eq!(e.code, ErrorCode::SYSTEM_ERROR, "{e:?}");
    assert_eq!(e.errno(), Some(28), "ENOSPC: {e}");
    assert!(
        c.call::<ConnectGetLibVersion>(&()).await.is_ok(),
        "same connection serves the next call"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn source_error_mid_upload_aborts_and_leaves_no_task() {
    let Some(d) = daemon() else { return };
    let c = connect(&d).await;
    let p = pool(&c, &d).await;
    let vol = create_vol(&c, &p, "src-err.raw", 64 * MIB).await;
    let metrics = tokio::runtime::Handle::current().metrics();
    let before = metrics.num_alive_tasks();
    for _ in 0..5 {
        let up = c.vol_upload(&vol, UploadOptions::new()).await.unwrap();
        let r = up
            .send_all_and_finish(FailAfter::new(3 * MIB, "source exploded"))
            .await;
        let Err(TransferError::Local(e)) = r else {
            panic!("{r:?}")
        };
        assert_eq!(e.to_string(), "source exploded", "the source's own error");
    }
    assert!(c.call::<ConnectGetLibVersion>(&()).await.is_ok());
    assert_eq!(metrics.num_alive_tasks(), before, "no task left behind");
    assert_eq!(c.stats().late_replies, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropped_transfers_leave_the_connection_usable() {
    let Some(d) = daemon() else { return };
    let c = connect(&d).await;
    let p = pool(&c, &d).await;
    let vol = create_vol(&c, &p, "drop.raw", 64 * MIB).await;
    upload_bytes(&c, &vol, &pattern(64 * MIB as usize, 3))
        .await
        .unwrap();
    // Upload dropped mid-stream.
    let mut up = c.vol_upload(&vol, UploadOptions::new()).await.unwrap();
    up.send(Bytes::from(vec![0u8; 8 * MIB as usize]))
        .await
        .unwrap();
    drop(up);
    assert!(c.call::<ConnectGetLibVersion>(&()).await.is_ok());
    // Download dropped mid-stream, and a download future dropped while opening.
    let mut dl = c.vol_download(&vol, DownloadOptions::new()).await.unwrap();
    let _ = dl.next().await.unwrap().unwrap();
    drop(dl);
    let opening = c.vol_download(&vol, DownloadOptions::new());
    drop(opening);
    assert!(c.call::<ConnectGetLibVersion>(&()).await.is_ok());
    // And a full download still works afterwards.
    let dl = c.vol_download(&vol, DownloadOptions::new()).await.unwrap();
    let n = dl.write_to(tokio::io::sink()).await.unwrap();
    assert_eq!(n, 64 * MIB);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn daemon_pings_are_answered() {
    let Some(d) = Libvirtd::builder()
        .keepalive_interval(1)
        .keepalive_count(2)
        .start_or_skip()
    else {
        return;
    };
    let c = connect(&d).await; // our own pings off: only the daemon's
    // Until three pings were answered: a loaded daemon's 1 s timer fires late, so a fixed
    // 5 s wait could hold fewer than three.
    let t = Instant::now();
    while c.stats().pings_answered < 3 {
        assert!(
            t.elapsed() < Duration::from_secs(30),
            "fewer than 3 daemon pings answered in 30 s: {:?}",
            c.stats()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(
        c.call::<ConnectGetLibVersion>(&()).await.is_ok(),
        "daemon kept us (it drops clients that do not answer after ~3 s)"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn frozen_daemon_is_declared_dead_by_keepalive() {
    let Some(d) = daemon() else { return };
    let ka = KeepaliveConfig {
        interval: Duration::from_secs(1),
        count: 3,
    };
    let c = Client::connect(&d.uri(), opts(Some(ka))).await.unwrap();
    c.call::<ConnectGetLibVersion>(&()).await.unwrap();
    d.freeze().unwrap();
    let t = Instant::now();
    let pending = {
        let c = c.clone();
        tokio::spawn(async move { c.call::<ConnectGetLibVersion>(&()).await })
    };
    let e = tokio::time::timeout(Duration::from_secs(10), c.closed())
        .await
        .expect("declared dead");
    let took = t.elapsed();
    d.thaw().unwrap();
    assert!(
        matches!(e, ConnectionError::KeepaliveTimeout { .. }),
        "{e:?}"
    );
    assert!(
        took <= ka.dead_after() + Duration::from_secs(1),
        "took {took:?}"
    );
    let r = pending.await.unwrap();
    assert!(
        matches!(
            r,
            Err(CallError::Connection(
                ConnectionError::KeepaliveTimeout { .. }
            ))
        ),
        "{r:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn killed_daemon_fails_pending_operations_within_a_second() {
    let Some(mut d) = daemon() else { return };
    let c = connect(&d).await;
    let p = pool(&c, &d).await;
    let vol = create_vol(&c, &p, "kill.raw", 1 << 40).await;
    // The upload is under way (open, its first chunk out) before the daemon freezes.
    let up = libvirt_remote_testkit::live::upload_under_way(
        &c,
        vol,
        FailAfter::new(u64::MAX, "source exploded"),
    )
    .await;
    d.freeze().unwrap();
    let call = {
        let c = c.clone();
        tokio::spawn(async move { c.call::<ConnectGetLibVersion>(&()).await })
    };
    tokio::time::sleep(Duration::from_millis(200)).await;
    let t = Instant::now();
    d.kill().unwrap();
    let r = tokio::time::timeout(Duration::from_secs(1), call)
        .await
        .expect("call ended within 1 s")
        .unwrap();
    assert!(matches!(r, Err(CallError::Connection(_))), "{r:?}");
    let r = tokio::time::timeout(Duration::from_secs(1), up)
        .await
        .expect("upload ended within 1 s")
        .unwrap();
    assert!(
        matches!(r, Err(TransferError::Stream(StreamError::Connection(_)))),
        "{r:?}"
    );
    assert!(t.elapsed() < Duration::from_secs(1));
    assert!(
        c.call::<ConnectGetLibVersion>(&()).await.is_err(),
        "dead stays dead"
    );
}

/// The pool's file for `name` exists on the daemon side.
fn vol_file_exists(d: &Libvirtd, name: &str) -> bool {
    d.pool_path().join(name).exists()
}

/// Wait (bounded) until the daemon-side file is gone: a dropped upload's delete runs on a
/// task after the daemon answered the abort.
async fn wait_vol_file_gone(d: &Libvirtd, name: &str) -> bool {
    for _ in 0..200 {
        if !vol_file_exists(d, name) {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    false
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn delete_on_failure_removes_the_half_written_volume() {
    let Some(d) = daemon() else { return };
    let c = connect(&d).await;
    let p = pool(&c, &d).await;
    // A failing source: the volume is deleted once the daemon answered the abort.
    let vol = create_vol(&c, &p, "half.raw", 16 * MIB).await;
    let up = c
        .vol_upload(&vol, UploadOptions::new().delete_on_failure(true))
        .await
        .unwrap();
    let r = up
        .send_all_and_finish(FailAfter::new(3 * MIB, "source exploded"))
        .await;
    assert!(matches!(r, Err(TransferError::Local(_))), "{r:?}");
    assert!(!vol_file_exists(&d, "half.raw"), "volume deleted");
    // A dropped upload: deleted too, by a task, after the daemon's answer.
    let vol = create_vol(&c, &p, "dropped.raw", 16 * MIB).await;
    let mut up = c
        .vol_upload(&vol, UploadOptions::new().delete_on_failure(true))
        .await
        .unwrap();
    up.send(Bytes::from(vec![1u8; 2 * MIB as usize]))
        .await
        .unwrap();
    drop(up);
    assert!(
        wait_vol_file_gone(&d, "dropped.raw").await,
        "dropped upload's volume deleted"
    );
    // Off (the default) or on with a successful finish: the volume stays.
    let vol = create_vol(&c, &p, "kept.raw", 16 * MIB).await;
    let up = c.vol_upload(&vol, UploadOptions::new()).await.unwrap();
    let r = up
        .send_all_and_finish(FailAfter::new(3 * MIB, "source exploded"))
        .await;
    assert!(r.is_err());
    assert!(
        vol_file_exists(&d, "kept.raw"),
        "kept without delete_on_failure"
    );
    let up = c
        .vol_upload(&vol, UploadOptions::new().delete_on_failure(true))
        .await
        .unwrap();
    up.send_all_and_finish(std::io::Cursor::new(pattern(MIB as usize, 2)))
        .await
        .unwrap();
    assert!(
        vol_file_exists(&d, "kept.raw"),
        "kept after a successful upload"
    );
    assert!(c.call::<ConnectGetLibVersion>(&()).await.is_ok());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn writer_and_reader_adaptors_round_trip_and_abort_when_dropped() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let Some(d) = daemon() else { return };
    let c = connect(&d).await;
    let p = pool(&c, &d).await;
    let vol = create_vol(&c, &p, "adaptor.raw", 8 * MIB).await;
    let data = pattern(8 * MIB as usize, 5);
    // Upload through AsyncWrite, progress told the total and holding state.
    let mut seen = Vec::new();
    let (tx, rx) = std::sync::mpsc::channel();
    let up = c
        .vol_upload(&vol, UploadOptions::new().length(8 * MIB))
        .await
        .unwrap()
        .with_progress(move |p| {
            seen.push(p.done);
            let _ = tx.send((seen.len(), p));
        });
    let mut w = up.into_writer();
    for chunk in data.chunks(100_000) {
        w.write_all(chunk).await.unwrap();
    }
    w.shutdown().await.unwrap();
    let last = rx.try_iter().last().unwrap();
    assert_eq!(last.1.done, 8 * MIB);
    assert_eq!(last.1.total, Some(8 * MIB));
    assert!(
        last.0 > 1,
        "several reports, counted by the callback's own state"
    );
    assert_eq!(
        std::fs::read(d.pool_path().join("adaptor.raw")).unwrap(),
        data
    );
    // Download through AsyncRead.
    let dl = c.vol_download(&vol, DownloadOptions::new()).await.unwrap();
    let mut got = Vec::new();
    dl.into_reader().read_to_end(&mut got).await.unwrap();
    assert!(got == data, "download differs");
    // Both adaptors dropped mid-transfer: the streams are aborted, the connection usable.
    let up = c.vol_upload(&vol, UploadOptions::new()).await.unwrap();
    let mut w = up.into_writer();
    w.write_all(&data[..MIB as usize]).await.unwrap();
    drop(w);
    let dl = c.vol_download(&vol, DownloadOptions::new()).await.unwrap();
    let mut r = dl.into_reader();
    let mut buf = vec![0; 1000];
    r.read_exact(&mut buf).await.unwrap();
    drop(r);
    assert!(c.call::<ConnectGetLibVersion>(&()).await.is_ok());
    // A write after the daemon failed the stream carries the typed error.
    let up = c
        .vol_upload(&vol, UploadOptions::new().length(1000))
        .await
        .unwrap();
    let mut w = up.into_writer();
    let mut err = None;
    for _ in 0..200 {
        if let Err(e) = w.write_all(&data[..MIB as usize]).await {
            err = Some(e);
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let err = err.expect("the daemon refuses more than `length` bytes");
    let se = libvirt_remote::client::stream_error(&err).expect("a StreamError inside");
    assert!(matches!(se, StreamError::Remote(_)), "{se:?}");
    drop(w);
    assert!(c.call::<ConnectGetLibVersion>(&()).await.is_ok());
}
