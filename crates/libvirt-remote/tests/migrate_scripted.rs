//! **Scripted peers**, not real daemons: `Client::migrate` between two scripted daemons (the
//! testkit's peer over in-memory pipes), for a state two real libvirtds cannot be made to
//! produce on demand: a confirm step that fails after the destination finished. Real-daemon
//! migration tests live in `migrate_libvirtd.rs`.
#![cfg(feature = "client")]

use std::sync::{Arc, Mutex};

use bytes::Bytes;
use libvirt_remote::client::{Client, ConnectOptions, MigrateOptions};
use libvirt_remote::conn::{CallError, Config};
use libvirt_remote::proto::procs::connect::{ConnectSupportsFeature, ConnectSupportsFeatureRet};
use libvirt_remote::proto::procs::domain::DomainGetState;
use libvirt_remote::proto::procs::migration::{
    DomainMigrateBegin3Params, DomainMigrateBegin3Ret, DomainMigrateConfirm3Params,
    DomainMigrateConfirm3ParamsArgs, DomainMigrateCookieRet, DomainMigrateFinish3Params,
    DomainMigrateFinish3Ret, DomainMigrateFlags, DomainMigratePerform3Params,
    DomainMigratePrepare3Params, DomainMigratePrepare3Ret,
};
use libvirt_remote::proto::types::{NonnullDomain, Uuid};
use libvirt_remote::proto::{ErrorCode, ErrorDomain, Procedure};
use libvirt_remote::wire::frame::Frame;
use libvirt_remote::wire::xdr;
use libvirt_remote_testkit::peer::{self, Peer};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

fn dom() -> NonnullDomain {
    NonnullDomain {
        name: "guest".into(),
        uuid: Uuid([7; 16]),
        id: 3,
    }
}

/// The procedures a scripted daemon was called with, in order, and the confirm calls' args.
#[derive(Default)]
struct Seen {
    procs: Vec<&'static str>,
    confirms: Vec<DomainMigrateConfirm3ParamsArgs>,
}

/// A scripted qemu-driver daemon answering the v3-with-parameters steps (every feature
/// supported, the domain running); `confirm_fails`: its confirm answers an error.
fn daemon(confirm_fails: bool) -> (Client, Arc<Mutex<Seen>>) {
    let (ours, theirs) = tokio::io::duplex(1 << 16);
    let opts = ConnectOptions {
        config: Config {
            keepalive: None,
            ..Config::default()
        },
        ..Default::default()
    };
    let client = Client::start(ours, &opts);
    let seen = Arc::new(Mutex::new(Seen::default()));
    let log = seen.clone();
    tokio::spawn(async move {
        let (mut rd, mut wr) = tokio::io::split(theirs);
        let mut peer = Peer::new();
        let mut buf = vec![0u8; 1 << 16];
        loop {
            let len = match rd.read(&mut buf).await {
                Ok(0) | Err(_) => return,
                Ok(len) => len,
            };
            peer.feed(&buf[..len]);
            while let Some(f) = peer.recv().unwrap() {
                let reply = answer(&f, confirm_fails, &mut log.lock().unwrap());
                if wr.write_all(&reply).await.is_err() {
                    return;
                }
            }
        }
    });
    (client, seen)
}

fn answer(f: &Frame, confirm_fails: bool, seen: &mut Seen) -> Bytes {
    let h = &f.header;
    let cookie = || Bytes::from_static(b"cookie");
    let (name, reply) = match h.procedure {
        ConnectSupportsFeature::NUMBER => (
            ConnectSupportsFeature::NAME,
            peer::reply_to(h, &ConnectSupportsFeatureRet { supported: 1 }),
        ),
        DomainGetState::NUMBER => (
            DomainGetState::NAME,
            // RUNNING, reason BOOTED.
            peer::reply_to(h, &peer::Raw(Bytes::from_static(&[0, 0, 0, 1, 0, 0, 0, 1]))),
        ),
        DomainMigrateBegin3Params::NUMBER => (
            DomainMigrateBegin3Params::NAME,
            peer::reply_to(
                h,
                &DomainMigrateBegin3Ret {
                    cookie_out: cookie(),
                    xml: "<domain/>".into(),
                },
            ),
        ),
        DomainMigratePrepare3Params::NUMBER => (
            DomainMigratePrepare3Params::NAME,
            peer::reply_to(
                h,
                &DomainMigratePrepare3Ret {
                    cookie_out: cookie(),
                    uri_out: None,
                },
            ),
        ),
        DomainMigratePerform3Params::NUMBER => (
            DomainMigratePerform3Params::NAME,
            peer::reply_to(
                h,
                &DomainMigrateCookieRet {
                    cookie_out: cookie(),
                },
            ),
        ),
        DomainMigrateFinish3Params::NUMBER => (
            DomainMigrateFinish3Params::NAME,
            peer::reply_to(
                h,
                &DomainMigrateFinish3Ret {
                    dom: dom(),
                    cookie_out: cookie(),
                },
            ),
        ),
        DomainMigrateConfirm3Params::NUMBER => {
            seen.confirms
                .push(xdr::from_bytes(f.payload.clone()).expect("confirm args decode"));
            let reply = if confirm_fails {
                peer::reply_error_to(
                    h,
                    &peer::error(
                        ErrorCode::OPERATION_FAILED.0,
                        ErrorDomain::QEMU.0,
                        "scripted: confirm failed",
                    ),
                )
            } else {
                peer::reply_to(h, &())
            };
            (DomainMigrateConfirm3Params::NAME, reply)
        }
        n => panic!("unexpected procedure {n}"),
    };
    seen.procs.push(name);
    reply
}

/// Collects the log as text.
#[derive(Clone, Default)]
struct LogText(Arc<Mutex<String>>);

impl std::io::Write for LogText {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().push_str(&String::from_utf8_lossy(b));
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// As `virDomainMigrateVersion3Full`: once the destination finished (the domain runs there),
/// a confirm the source fails is a warning, not a failed migration. The result carries the
/// confirm's error, the log has the warning, and every step ran once, in order.
#[tokio::test]
async fn a_failed_confirm_after_finish_is_a_warning_on_a_migration_that_went_through() {
    let log = LogText::default();
    let sink = log.clone();
    let _guard = tracing::subscriber::set_default(
        tracing_subscriber::fmt()
            .with_max_level(tracing::Level::WARN)
            .with_writer(move || sink.clone())
            .with_ansi(false)
            .finish(),
    );
    let (src, src_seen) = daemon(true);
    let (dst, dst_seen) = daemon(false);
    let opts = MigrateOptions::new(DomainMigrateFlags::LIVE).uri("tcp://127.0.0.1:1");
    let moved = src
        .migrate(&dst, &dom(), &opts)
        .await
        .unwrap_or_else(|e| panic!("a failed confirm failed the migration: {e}: {e:?}"));
    assert_eq!(moved.dom, dom());
    match &moved.confirm_error {
        Some(CallError::Remote(r)) => {
            assert_eq!(r.code, ErrorCode::OPERATION_FAILED, "{r:?}");
            assert!(r.to_string().contains("scripted: confirm failed"), "{r}");
        }
        other => panic!("confirm_error: {other:?}"),
    }
    let text = log.0.lock().unwrap().clone();
    assert!(
        text.contains("WARN") && text.contains("confirm failed") && text.contains("paused"),
        "{text}"
    );

    let (src_procs, confirms) = {
        let g = src_seen.lock().unwrap();
        (g.procs.clone(), g.confirms.clone())
    };
    let features = src_procs
        .iter()
        .take_while(|p| **p == ConnectSupportsFeature::NAME)
        .count();
    assert_eq!(
        &src_procs[features..],
        [
            DomainMigrateBegin3Params::NAME,
            DomainGetState::NAME,
            DomainMigratePerform3Params::NAME,
            DomainMigrateConfirm3Params::NAME
        ],
        "{src_procs:?}"
    );
    // Confirmed as a success (not cancelled), with the source's flags (change protection
    // added: the scripted source supports it).
    assert_eq!(confirms.len(), 1);
    assert_eq!(confirms[0].cancelled, 0);
    assert_eq!(
        confirms[0].flags,
        DomainMigrateFlags::LIVE | DomainMigrateFlags::CHANGE_PROTECTION
    );
    let dst_procs = dst_seen.lock().unwrap().procs.clone();
    let features = dst_procs
        .iter()
        .take_while(|p| **p == ConnectSupportsFeature::NAME)
        .count();
    assert_eq!(
        &dst_procs[features..],
        [
            DomainMigratePrepare3Params::NAME,
            DomainMigrateFinish3Params::NAME
        ]
    );

    // A confirm that succeeds leaves nothing to report.
    let (src, _) = daemon(false);
    let moved = src.migrate(&dst, &dom(), &opts).await.unwrap();
    assert_eq!(moved.confirm_error, None);
}
