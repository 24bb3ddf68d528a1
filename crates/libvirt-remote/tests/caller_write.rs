//! The caller-side write (a call made while nothing is queued goes out from the calling task)
//! over a real unix socket pair, with a scripted daemon on its own OS thread: a socket whose
//! buffer is full, which a real daemon cannot be made to hold still.
#![cfg(feature = "client")]

use std::io::{ErrorKind, Read, Write};
use std::os::unix::net::UnixStream as StdUnix;
use std::time::{Duration, Instant};

use libvirt_remote::Client;
use libvirt_remote::client::{ConnectOptions, DEFAULT_BUSY_POLL};
use libvirt_remote::conn::{CallError, Config, ConnectionError};
use libvirt_remote::proto::procs::connect::{ConnectGetLibVersion, ConnectGetLibVersionRet};
use libvirt_remote_testkit::peer::{self, Peer};

/// Write junk into the client's end until its socket buffer is full; returns how much.
fn fill(a: &StdUnix) -> usize {
    let chunk = [0u8; 4096];
    let mut total = 0;
    loop {
        match (&*a).write(&chunk) {
            Ok(n) => total += n,
            Err(e) if e.kind() == ErrorKind::WouldBlock => return total,
            Err(e) => panic!("filling the socket: {e}"),
        }
    }
}

/// A socket pair whose client end (non-blocking, as tokio wants it) is full.
fn full_pair() -> (StdUnix, StdUnix, usize) {
    let (a, b) = StdUnix::pair().unwrap();
    a.set_nonblocking(true).unwrap();
    let junk = fill(&a);
    (a, b, junk)
}

/// The client on `a`: no keepalive, busy-poll as by default (a caller that wrote its call
/// also wakes the driver to spin while the policy says it pays).
fn start(a: StdUnix) -> Client {
    let config = Config {
        keepalive: None,
        ..Config::default()
    };
    let opts = ConnectOptions {
        config,
        busy_poll: DEFAULT_BUSY_POLL,
        ..ConnectOptions::default()
    };
    Client::start_socket(tokio::net::UnixStream::from_std(a).unwrap(), &opts)
}

/// H1 on the caller's path: a call made on a socket that takes nothing (the peer stopped
/// reading) must not keep its caller inside the state lock waiting for the socket, so
/// `close()` returns at once and the call fails with the close's reason.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn close_does_not_wait_behind_a_stalled_caller_side_write() {
    let (a, _b_never_read, _) = full_pair();
    let client = start(a);
    let c = client.clone();
    let stalled = tokio::spawn(async move { c.call::<ConnectGetLibVersion>(&()).await });
    tokio::time::sleep(Duration::from_millis(50)).await;
    // From a plain thread: a close stuck on the state lock shows as a timeout here.
    let (tx, rx) = std::sync::mpsc::channel();
    let c = client.clone();
    std::thread::spawn(move || {
        let t = Instant::now();
        c.close();
        let _ = tx.send(t.elapsed());
    });
    let closed_in = rx
        .recv_timeout(Duration::from_secs(2))
        .expect("close() did not return: the caller's write holds the state lock on a full socket");
    assert!(
        closed_in < Duration::from_millis(100),
        "close took {closed_in:?}"
    );
    let r = tokio::time::timeout(Duration::from_millis(500), stalled)
        .await
        .expect("the stalled call released")
        .unwrap();
    assert!(
        matches!(
            r,
            Err(CallError::Connection(ConnectionError::LocallyClosed { .. }))
        ),
        "{r:?}"
    );
}

/// A call the full socket refused goes out through the driver once the peer reads again,
/// whole and in order; the calls after it (socket empty again) go from their callers.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_the_full_socket_refuses_is_written_by_the_driver_in_order() {
    let (a, mut b, junk) = full_pair();
    let (go, wait) = std::sync::mpsc::channel::<()>();
    let server = std::thread::spawn(move || {
        wait.recv().unwrap();
        let mut skip = vec![0u8; junk];
        b.read_exact(&mut skip).unwrap();
        let mut peer = Peer::new();
        let mut buf = vec![0u8; 64 << 10];
        let mut answered = 0u64;
        loop {
            let n = match b.read(&mut buf) {
                Ok(0) | Err(_) => return answered,
                Ok(n) => n,
            };
            peer.feed(&buf[..n]);
            while let Some(f) = peer.recv().expect("whole packets, in order") {
                answered += 1;
                let r = peer::reply_to(
                    &f.header,
                    &ConnectGetLibVersionRet {
                        lib_ver: u64::from(f.header.serial),
                    },
                );
                if b.write_all(&r).is_err() {
                    return answered;
                }
            }
        }
    });
    let client = start(a);
    let c = client.clone();
    let first = tokio::spawn(async move { c.call::<ConnectGetLibVersion>(&()).await });
    tokio::time::sleep(Duration::from_millis(20)).await;
    go.send(()).unwrap();
    let v = tokio::time::timeout(Duration::from_secs(5), first)
        .await
        .expect("the refused call completed")
        .unwrap()
        .unwrap();
    let mut last = v.lib_ver;
    for _ in 0..20 {
        let v = client.call::<ConnectGetLibVersion>(&()).await.unwrap();
        assert!(v.lib_ver > last, "replies in call order");
        last = v.lib_ver;
    }
    client.close();
    drop(client);
    let answered = tokio::task::spawn_blocking(move || server.join().unwrap())
        .await
        .unwrap();
    assert_eq!(answered, 21);
}
