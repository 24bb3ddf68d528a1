//! The client-side cap on calls in flight (`Config::max_in_flight`) against a real, private
//! libvirtd 9.0 whose `max_client_requests` is 2 and whose keepalive gives up after ~3 s.
//!
//! What blocks a daemon worker: a `defineXML` whose `<emulator>` is a script that sleeps.
//! Parsing the XML makes the qemu driver probe that binary's capabilities (it runs it and
//! waits for it to exit), and the capability cache's lock makes a second such call wait for
//! the first; either way each call holds a worker — and one of the client's
//! `max_client_requests` buffers — for seconds. libvirtd reads a client only while it has a
//! free buffer (`virnetserverclient.c`), so with 2 such calls in flight it stops reading: our
//! answers to its pings sit unread and it drops the connection in the middle of the calls.
//! With the cap at 1 the second call waits in the client and the daemon keeps reading.
#![cfg(feature = "client")]

use std::num::NonZeroUsize;
use std::os::unix::fs::PermissionsExt as _;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use libvirt_remote::client::{Client, ConnectOptions};
use libvirt_remote::conn::handshake::HandshakeOptions;
use libvirt_remote::conn::{CallError, Config, ConnectionError};
use libvirt_remote::proto::procs::connect::ConnectGetLibVersion;
use libvirt_remote::proto::procs::domain::{DomainDefineXml, DomainDefineXmlArgs};
use testbed::libvirtd::{Libvirtd, LibvirtdBuilder};

/// How long the fake emulator keeps a worker: longer than the daemon's keepalive window
/// (interval 1 s, count 2: dropped after ~3 s unread).
const PROBE_SECS: u64 = 6;

/// A daemon that drops a client it cannot hear from after ~3 s.
fn impatient() -> LibvirtdBuilder {
    Libvirtd::builder().keepalive_interval(1).keepalive_count(2)
}

/// An impatient daemon that reads at most 2 messages of a client ahead.
fn daemon() -> Option<Libvirtd> {
    impatient()
        .config_line("max_client_requests = 2")
        .start_or_skip()
}

/// A qemu "binary" that sleeps, then fails: probing it blocks a worker for [`PROBE_SECS`].
fn slow_emulator(d: &Libvirtd) -> PathBuf {
    slow_emulator_for(d, PROBE_SECS)
}

/// A qemu "binary" whose probe blocks a worker for `secs`.
fn slow_emulator_for(d: &Libvirtd, secs: u64) -> PathBuf {
    let path = d.dir().join("slow-qemu");
    std::fs::write(&path, format!("#!/bin/sh\nsleep {secs}\nexit 1\n")).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

/// Our own pings off (the daemon's are answered): a drop is the daemon's doing.
async fn connect(d: &Libvirtd, max_in_flight: Option<NonZeroUsize>) -> Client {
    let opts = ConnectOptions {
        config: Config {
            keepalive: None,
            max_in_flight,
            ..Config::default()
        },
        handshake: HandshakeOptions {
            keepalive: true,
            ..HandshakeOptions::default()
        },
        ..ConnectOptions::default()
    };
    Client::connect(&d.uri(), opts).await.unwrap()
}

/// Two slow `defineXML` calls at once; their results.
async fn two_slow_defines(c: &Client, emulator: &std::path::Path) -> Vec<Result<(), CallError>> {
    slow_defines(c, emulator, 2).await
}

/// `n` slow `defineXML` calls at once; their results.
async fn slow_defines(
    c: &Client,
    emulator: &std::path::Path,
    n: usize,
) -> Vec<Result<(), CallError>> {
    let calls = (0..n).map(|i| {
        let c = c.clone();
        let xml = format!(
            "<domain type='qemu'><name>slow-{i}</name><memory unit='MiB'>64</memory>\
             <vcpu>1</vcpu><os><type arch='x86_64'>hvm</type></os>\
             <devices><emulator>{}</emulator></devices></domain>",
            emulator.display()
        );
        tokio::spawn(async move {
            c.call::<DomainDefineXml>(&DomainDefineXmlArgs { xml: xml.into() })
                .await
                .map(drop)
        })
    });
    let mut out = Vec::new();
    for h in calls.collect::<Vec<_>>() {
        out.push(h.await.unwrap());
    }
    out
}

/// The daemon closed the socket: an EOF, or a reset when it closed with our unread
/// keepalive answers still in its receive buffer.
fn dropped_by_daemon(e: &ConnectionError) -> bool {
    match e {
        ConnectionError::PeerClosed => true,
        ConnectionError::Transport { kind, .. } => *kind == std::io::ErrorKind::ConnectionReset,
        _ => false,
    }
}

/// The failure the cap prevents, reproduced: without it, 2 slow calls fill the daemon's
/// `max_client_requests`, it stops reading and drops the connection mid-call.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_the_cap_the_daemon_drops_a_client_at_its_request_limit() {
    let Some(d) = daemon() else { return };
    let emulator = slow_emulator(&d);
    let c = connect(&d, None).await;
    let t = Instant::now();
    let results = tokio::time::timeout(Duration::from_secs(60), two_slow_defines(&c, &emulator))
        .await
        .expect("the calls ended");
    let took = t.elapsed();
    let e = c.error().expect("the daemon dropped the connection");
    assert!(dropped_by_daemon(&e), "{e:?}");
    for r in &results {
        assert!(
            matches!(r, Err(CallError::Connection(e)) if dropped_by_daemon(e)),
            "a call in flight ends with the drop: {r:?}"
        );
    }
    eprintln!("dropped after {took:?}: {e}");
    assert!(
        took < Duration::from_secs(PROBE_SECS),
        "dropped after {took:?}, before the first call's {PROBE_SECS} s were up"
    );
    assert!(
        d.log_tail().contains("max requests limit") || d.log_tail().contains("keepalive"),
        "the daemon's log names why: {}",
        d.log_tail()
    );
}

/// The cap one under the daemon's limit: the second call waits in the client, the daemon
/// keeps reading (our keepalive answers reach it), both calls get the daemon's own answer
/// and the connection lives on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_the_cap_under_the_request_limit_the_connection_survives_slow_calls() {
    let Some(d) = daemon() else { return };
    let emulator = slow_emulator(&d);
    let c = connect(&d, NonZeroUsize::new(1)).await;
    let t = Instant::now();
    let results = tokio::time::timeout(Duration::from_secs(120), two_slow_defines(&c, &emulator))
        .await
        .expect("the calls ended");
    assert_eq!(
        c.error(),
        None,
        "the connection was dropped; daemon log:\n{}",
        d.log_tail()
    );
    for r in &results {
        assert!(
            matches!(r, Err(CallError::Remote(_))),
            "the daemon's own answer (the fake emulator fails its probe): {r:?}"
        );
    }
    let s = c.stats();
    eprintln!("both calls answered after {:?}; {s:?}", t.elapsed());
    assert!(s.calls_held >= 1, "the second call waited: {s:?}");
    assert!(
        s.pings_answered >= 2,
        "the daemon pinged while its worker was busy, and read our answers: {s:?}"
    );
    c.call::<ConnectGetLibVersion>(&())
        .await
        .expect("still usable");
}

/// Both sides at their defaults (libvirtd's `max_client_requests` of 5, our cap of 4): five
/// slow calls at once never starve the daemon's reads, whatever they block on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_default_cap_keeps_a_default_daemon_reading() {
    let Some(d) = impatient().start_or_skip() else {
        return;
    };
    let emulator = slow_emulator_for(&d, 4);
    let c = connect(&d, Config::default().max_in_flight).await;
    let t = Instant::now();
    let results = tokio::time::timeout(Duration::from_secs(120), slow_defines(&c, &emulator, 5))
        .await
        .expect("the calls ended");
    eprintln!(
        "5 slow calls answered after {:?}; {:?}",
        t.elapsed(),
        c.stats()
    );
    assert_eq!(
        c.error(),
        None,
        "the connection was dropped; daemon log:\n{}",
        d.log_tail()
    );
    assert!(
        results
            .iter()
            .all(|r| matches!(r, Err(CallError::Remote(_)))),
        "{results:?}"
    );
    assert!(c.stats().calls_held >= 1, "{:?}", c.stats());
}
