//! Teardown against a real sshd when the peer stalls: the hard bounds from the issue.
//!
//! - `close()` returns in ≤ 100 ms and every pending read/write fails at once, whether
//!   russh's session task is stuck in a socket write (peer frozen, kernel buffers full) or
//!   our writer is parked on SSH window credit (peer alive but not consuming).
//! - A silent host is detected within the keepalive bound (idle) or the inactivity bound
//!   (mid-upload); a killed sshd within the keepalive bound.

mod common;

use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use common::{config, listen, spawn_checking_sink, ssh_error, sshd};
use ssh_socket::{CloseHandle, CloseReason, SshConfig, SshError, SshStream};
use testbed::relay::{Relay, RelayOptions};
use testbed::sshd::{Sshd, SshdOptions};
use tokio::io::{AsyncReadExt, AsyncWriteExt, ReadHalf, WriteHalf};
use tokio::net::UnixListener;
use tokio::task::JoinHandle;

/// The bound on `close()` and on pending calls failing after it.
const CLOSE_BOUND: Duration = Duration::from_millis(100);

/// Writes until an error, counting bytes accepted; returns the error.
fn spawn_upload(mut w: WriteHalf<SshStream>, sent: Arc<AtomicU64>) -> JoinHandle<io::Error> {
    tokio::spawn(async move {
        let chunk = vec![0x5au8; 64 << 10];
        loop {
            match w.write(&chunk).await {
                Ok(n) => {
                    sent.fetch_add(n as u64, Ordering::Relaxed);
                }
                Err(e) => return e,
            }
        }
    })
}

/// Reads until an error or EOF.
fn spawn_reader(mut r: ReadHalf<SshStream>) -> JoinHandle<io::Result<usize>> {
    tokio::spawn(async move {
        let mut buf = vec![0u8; 1 << 16];
        loop {
            match r.read(&mut buf).await {
                Ok(0) => return Ok(0),
                Ok(_) => {}
                Err(e) => return Err(e),
            }
        }
    })
}

async fn wait_for_progress(sent: &AtomicU64, at_least: u64) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while sent.load(Ordering::Relaxed) < at_least {
        assert!(Instant::now() < deadline, "upload did not get going");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// Waits until the upload has made no progress for 300 ms: the writer is parked.
async fn wait_for_stall(sent: &AtomicU64) {
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut last = sent.load(Ordering::Relaxed);
    let mut still_since = Instant::now();
    loop {
        tokio::time::sleep(Duration::from_millis(20)).await;
        let now = sent.load(Ordering::Relaxed);
        if now != last {
            last = now;
            still_since = Instant::now();
        } else if still_since.elapsed() >= Duration::from_millis(300) {
            return;
        }
        assert!(Instant::now() < deadline, "upload never stalled");
    }
}

/// Bytes the kernel still holds unsent/unacked for our socket (`tx_queue` in `/proc/net/tcp`).
fn tx_queue(local: SocketAddr) -> Option<u64> {
    let table = std::fs::read_to_string("/proc/net/tcp").ok()?;
    let want = format!(":{:04X}", local.port());
    table.lines().skip(1).find_map(|l| {
        let f: Vec<&str> = l.split_whitespace().collect();
        if f.get(1)?.ends_with(&want) {
            u64::from_str_radix(f.get(4)?.split(':').next()?, 16).ok()
        } else {
            None
        }
    })
}

/// Connects through `relay` with a small `SO_SNDBUF`, so a frozen peer blocks our writes in
/// the kernel after a few KiB rather than megabytes.
async fn connect_small_sndbuf(
    cfg: &SshConfig,
    relay: &Relay,
) -> (SshStream, CloseHandle, SocketAddr) {
    let sock = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
    sock.set_send_buffer_size(16 << 10).unwrap();
    sock.connect(&relay.addr().into()).unwrap();
    let tcp: std::net::TcpStream = sock.into();
    let local = tcp.local_addr().unwrap();
    let (s, c) = ssh_socket::connect_socket(cfg, tcp)
        .await
        .expect("connect through relay");
    (s, c, local)
}

/// Asserts the bounds: `close()` ≤ 100 ms, then the pending upload and read fail with
/// `Closed { Local }` within 100 ms, and russh's session task is gone within 100 ms.
async fn assert_bounded_close(
    close: &CloseHandle,
    upload: JoinHandle<io::Error>,
    reader: JoinHandle<io::Result<usize>>,
) {
    let t0 = Instant::now();
    close.close();
    let close_took = t0.elapsed();
    let upload_err = tokio::time::timeout(CLOSE_BOUND, upload)
        .await
        .expect("the parked write did not fail within 100 ms of close()")
        .unwrap();
    let read_res = tokio::time::timeout(CLOSE_BOUND, reader)
        .await
        .expect("the pending read did not fail within 100 ms of close()")
        .unwrap();
    let writers_done = t0.elapsed();
    tokio::time::timeout(CLOSE_BOUND, close.terminated())
        .await
        .expect("russh's session task still running 100 ms after close()");
    eprintln!(
        "close() took {close_took:?}; pending calls failed after {writers_done:?}; \
         session task gone after {:?}",
        t0.elapsed()
    );
    assert!(close_took <= CLOSE_BOUND, "close() took {close_took:?}");
    assert_eq!(
        ssh_error(&upload_err).close_reason(),
        Some(&CloseReason::Local)
    );
    let read_err = read_res.expect_err("the read must fail, not see EOF");
    assert_eq!(
        ssh_error(&read_err).close_reason(),
        Some(&CloseReason::Local)
    );
    // Idempotent, and the reason stays the first one.
    let t1 = Instant::now();
    close.close();
    close.close();
    assert!(t1.elapsed() <= CLOSE_BOUND);
    assert_eq!(close.closed_reason(), Some(CloseReason::Local));
}

fn setup(name: &str) -> Option<(Sshd, UnixListener, std::path::PathBuf)> {
    let sshd = sshd(&SshdOptions::default())?;
    let (l, path) = listen(&sshd, name);
    Some((sshd, l, path))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn close_is_bounded_when_the_session_is_stuck_in_a_socket_write() {
    let Some((sshd, l, path)) = setup("sink.sock") else {
        return;
    };
    spawn_checking_sink(l);
    let relay = Relay::start(sshd.addr(), RelayOptions::small()).unwrap();
    // Keepalive and inactivity out of the way: only close() may end this session.
    let mut cfg = config(&sshd, &path);
    cfg.keepalive_interval = None;
    cfg.inactivity_timeout = None;
    let (stream, close, local) = connect_small_sndbuf(&cfg, &relay).await;
    let (r, w) = tokio::io::split(stream);
    let sent = Arc::new(AtomicU64::new(0));
    let upload = spawn_upload(w, Arc::clone(&sent));
    let reader = spawn_reader(r);

    wait_for_progress(&sent, 8 << 20).await;
    relay.freeze();
    wait_for_stall(&sent).await;
    // The stall is in the kernel: bytes sit unsent in our socket, so russh's session task is
    // parked inside its socket write (the SSH window, 2 MiB, is far larger than the buffers).
    let queued = tx_queue(local).unwrap_or(0);
    eprintln!(
        "stalled after {} bytes; {queued} bytes queued in our socket",
        sent.load(Ordering::Relaxed)
    );
    assert!(queued > 0, "expected a socket-level stall (tx_queue 0)");

    assert_bounded_close(&close, upload, reader).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn close_is_bounded_when_the_writer_waits_for_window_credit() {
    let Some((sshd, l, path)) = setup("stuck.sock") else {
        return;
    };
    // A remote socket that accepts and never reads: sshd stops granting window, while the TCP
    // connection and russh's session task stay healthy.
    let _hold = tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((s, _)) = l.accept().await {
            held.push(s);
        }
    });
    let mut cfg = config(&sshd, &path);
    cfg.keepalive_interval = None;
    cfg.inactivity_timeout = None;
    let (stream, close) = ssh_socket::connect(&cfg).await.expect("connect");
    let (r, w) = tokio::io::split(stream);
    let sent = Arc::new(AtomicU64::new(0));
    let upload = spawn_upload(w, Arc::clone(&sent));
    let reader = spawn_reader(r);

    wait_for_progress(&sent, 1 << 20).await;
    wait_for_stall(&sent).await;
    eprintln!(
        "window exhausted after {} bytes",
        sent.load(Ordering::Relaxed)
    );
    assert!(!close.is_closed());

    assert_bounded_close(&close, upload, reader).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_silent_host_is_detected_by_keepalive_when_idle() {
    let Some((sshd, l, path)) = setup("echo.sock") else {
        return;
    };
    common::spawn_echo(l);
    let relay = Relay::start(sshd.addr(), RelayOptions::small()).unwrap();
    let mut cfg = config(&sshd, &path);
    cfg.keepalive_interval = Some(Duration::from_secs(1));
    cfg.keepalive_max = 2;
    cfg.inactivity_timeout = Some(Duration::from_secs(30));
    let (stream, close, _) = connect_small_sndbuf(&cfg, &relay).await;
    let (r, mut w) = tokio::io::split(stream);
    w.write_all(b"x").await.unwrap();
    let reader = spawn_reader(r);
    tokio::time::sleep(Duration::from_millis(200)).await;

    relay.freeze();
    let t0 = Instant::now();
    // Detected after `keepalive_max + 1` unanswered intervals.
    let bound = Duration::from_secs(3) + Duration::from_secs(1);
    let reason = tokio::time::timeout(bound, close.closed())
        .await
        .expect("silent host not detected within the keepalive bound");
    eprintln!("detected after {:?}: {reason}", t0.elapsed());
    assert_eq!(reason, CloseReason::KeepaliveTimeout);
    let err = tokio::time::timeout(CLOSE_BOUND, reader)
        .await
        .unwrap()
        .unwrap()
        .unwrap_err();
    assert_eq!(
        ssh_error(&err).close_reason(),
        Some(&CloseReason::KeepaliveTimeout)
    );
    assert_eq!(err.kind(), io::ErrorKind::TimedOut);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_silent_host_is_detected_by_the_inactivity_timeout_mid_upload() {
    let Some((sshd, l, path)) = setup("sink.sock") else {
        return;
    };
    spawn_checking_sink(l);
    let relay = Relay::start(sshd.addr(), RelayOptions::small()).unwrap();
    let mut cfg = config(&sshd, &path);
    cfg.keepalive_interval = Some(Duration::from_secs(1));
    cfg.keepalive_max = 2;
    cfg.inactivity_timeout = Some(Duration::from_secs(2));
    let (stream, close, _) = connect_small_sndbuf(&cfg, &relay).await;
    let (_r, w) = tokio::io::split(stream);
    let sent = Arc::new(AtomicU64::new(0));
    let upload = spawn_upload(w, Arc::clone(&sent));
    wait_for_progress(&sent, 4 << 20).await;

    relay.freeze();
    let t0 = Instant::now();
    // Keepalives cannot go out while the session task is stuck in a write; the inactivity
    // timeout bounds that write.
    let err = tokio::time::timeout(Duration::from_secs(2) + Duration::from_secs(2), upload)
        .await
        .expect("stalled upload not ended within the inactivity bound")
        .unwrap();
    eprintln!("upload failed after {:?}: {err}", t0.elapsed());
    let reason = ssh_error(&err).close_reason().cloned();
    assert!(
        matches!(
            reason,
            Some(CloseReason::InactivityTimeout | CloseReason::KeepaliveTimeout)
        ),
        "{err:?}"
    );
    assert!(close.is_closed());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn killed_sshd_mid_upload_is_a_typed_error_within_the_keepalive_bound() {
    let Some((mut sshd, l, path)) = setup("sink.sock") else {
        return;
    };
    spawn_checking_sink(l);
    let mut cfg = config(&sshd, &path);
    cfg.keepalive_interval = Some(Duration::from_secs(1));
    cfg.keepalive_max = 2;
    cfg.inactivity_timeout = Some(Duration::from_secs(3));
    let (stream, close) = ssh_socket::connect(&cfg).await.expect("connect");
    let (r, w) = tokio::io::split(stream);
    let sent = Arc::new(AtomicU64::new(0));
    let upload = spawn_upload(w, Arc::clone(&sent));
    let reader = spawn_reader(r);
    wait_for_progress(&sent, 16 << 20).await;

    sshd.kill();
    let t0 = Instant::now();
    let bound = Duration::from_secs(3);
    let err = tokio::time::timeout(bound, upload)
        .await
        .expect("upload still running after sshd was killed")
        .unwrap();
    eprintln!("upload failed {:?} after the kill: {err}", t0.elapsed());
    match ssh_error(&err) {
        SshError::Closed { reason } => assert_ne!(reason, &CloseReason::Local),
        e => panic!("expected Closed, got {e:?}"),
    }
    let read = tokio::time::timeout(CLOSE_BOUND, reader)
        .await
        .unwrap()
        .unwrap();
    assert!(
        read.is_err(),
        "the read must fail, not end cleanly: {read:?}"
    );
    tokio::time::timeout(CLOSE_BOUND, close.terminated())
        .await
        .unwrap();
}
