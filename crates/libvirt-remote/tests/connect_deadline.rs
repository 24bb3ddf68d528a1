//! `Client::connect` has a deadline by default: a peer on loopback that accepts the TCP
//! connection and never speaks (a wedged daemon, a black-holing middlebox) is given up within
//! it, with a typed error naming the stage, over plain TCP (the libvirt handshake) and TLS
//! (the TLS handshake). No daemon: the peer is a listener that accepts and stays silent.
#![cfg(feature = "tls")]

use std::time::{Duration, Instant};

use libvirt_remote::client::{Client, ConnectError, ConnectOptions};
use tokio::net::TcpListener;

/// Accepts every connection and holds it open without a byte.
async fn silent_peer() -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = l.local_addr().unwrap().port();
    tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((s, _)) = l.accept().await {
            held.push(s);
        }
    });
    port
}

/// A `?pkipath=` with a CA (any: the handshake never gets that far).
fn pki(dir: &std::path::Path) -> std::path::PathBuf {
    testbed::pki::Pki::generate(dir, &testbed::pki::ServerCert::default()).unwrap();
    dir.join("client")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_silent_tcp_peer_is_given_up_within_the_default_deadline() {
    let tmp = tempfile::tempdir().unwrap();
    let port = silent_peer().await;
    let pkipath = pki(tmp.path());
    let tcp = format!("qemu+tcp://127.0.0.1:{port}/system");
    let tls = format!(
        "qemu+tls://127.0.0.1:{port}/system?pkipath={}",
        pkipath.display()
    );
    let connect = |uri: String| async move {
        let t = Instant::now();
        let r = tokio::time::timeout(
            Duration::from_secs(45),
            Client::connect(&uri, ConnectOptions::default()),
        )
        .await;
        (uri, r, t.elapsed())
    };
    let (a, b) = tokio::join!(connect(tcp), connect(tls));
    for (uri, r, took) in [a, b] {
        let Ok(r) = r else {
            panic!("{uri}: still connecting after {took:?}: no deadline")
        };
        let Err(e) = r else {
            panic!("{uri}: connected to a silent peer")
        };
        eprintln!("{uri}: {e} after {took:?}");
        assert!(e.is_timeout(), "{uri}: {e:?}");
        let stage = if uri.starts_with("qemu+tls") {
            "TLS handshake"
        } else {
            "libvirt handshake"
        };
        assert!(e.to_string().contains(stage), "{uri}: {e}");
        let deadline = libvirt_remote::client::DEFAULT_CONNECT_TIMEOUT;
        assert!(deadline <= Duration::from_secs(30));
        assert!(
            took >= deadline && took < deadline + Duration::from_secs(5),
            "{uri}: gave up after {took:?}, the deadline is {deadline:?}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_deadline_is_settable_and_off_only_on_request() {
    let port = silent_peer().await;
    let uri = format!("qemu+tcp://127.0.0.1:{port}/system");
    let t = Instant::now();
    let e = Client::connect(
        &uri,
        ConnectOptions {
            connect_timeout: Some(Duration::from_millis(500)),
            ..ConnectOptions::default()
        },
    )
    .await
    .expect_err("a silent peer");
    let took = t.elapsed();
    assert!(
        matches!(e, ConnectError::Timeout { after, .. } if after == Duration::from_millis(500)),
        "{e:?}"
    );
    assert!(took < Duration::from_secs(3), "{took:?}");
    // Off: still waiting after longer than that.
    let off = tokio::time::timeout(
        Duration::from_secs(2),
        Client::connect(
            &uri,
            ConnectOptions {
                connect_timeout: None,
                ..ConnectOptions::default()
            },
        ),
    )
    .await;
    assert!(
        off.is_err(),
        "gave up although the deadline is off: {off:?}"
    );
}
