//! H1 at the client: `close_with` publishes the reason before it kills, and only the first
//! closer runs the kill. A peer that never answers (an in-memory duplex) and a kill hook that
//! blocks like a close queued behind a stalled write stand in for a vanished host.
#![cfg(feature = "client")]

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::thread;
use std::time::Duration;

use libvirt_remote::client::{Client, ConnectOptions, KillFn};
use libvirt_remote::conn::{CallError, Config, ConnectionError};
use libvirt_remote::proto::procs::connect::ConnectGetLibVersion;

/// A kill hook that blocks until released (at most 20 s, so a failing run ends), counting
/// its runs and saying when it starts.
struct SlowKill {
    runs: Arc<AtomicUsize>,
    started: mpsc::Receiver<()>,
    release: mpsc::Sender<()>,
}

fn slow_kill() -> (KillFn, SlowKill) {
    let runs = Arc::new(AtomicUsize::new(0));
    let (started_tx, started) = mpsc::channel();
    let (release, release_rx) = mpsc::channel::<()>();
    let started_tx = Mutex::new(started_tx);
    let release_rx = Mutex::new(release_rx);
    let counter = runs.clone();
    let kill: KillFn = Arc::new(move || {
        counter.fetch_add(1, Ordering::SeqCst);
        let _ = started_tx.lock().unwrap().send(());
        let _ = release_rx
            .lock()
            .unwrap()
            .recv_timeout(Duration::from_secs(20));
    });
    (
        kill,
        SlowKill {
            runs,
            started,
            release,
        },
    )
}

/// Callers parked on the connection are released while the first kill still runs and read
/// its reason; a caller that closes in turn (as a pool does when its call fails) returns at
/// once instead of running the kill itself; the kill runs once.
#[tokio::test(flavor = "multi_thread", worker_threads = 3)]
async fn released_callers_read_the_reason_and_never_run_the_kill() {
    for round in 0..20 {
        let (kill, slow) = slow_kill();
        let (io, _peer_never_answers) = tokio::io::duplex(1 << 16);
        let opts = ConnectOptions {
            config: Config {
                keepalive: None,
                ..Config::default()
            },
            kill: Some(kill),
            ..ConnectOptions::default()
        };
        let client = Client::start(io, &opts);
        let parked: Vec<_> = (0..4)
            .map(|i| {
                let c = client.clone();
                tokio::spawn(async move {
                    let r = c.call::<ConnectGetLibVersion>(&()).await;
                    c.close_with(format!("caller {i}: its call failed"));
                    r
                })
            })
            .collect();
        tokio::time::sleep(Duration::from_millis(20)).await;

        let first = thread::spawn({
            let c = client.clone();
            move || c.close_with("test: budget exceeded")
        });
        slow.started
            .recv_timeout(Duration::from_secs(5))
            .expect("the kill should start");
        let mut released = true;
        let mut reasons = Vec::new();
        for p in parked {
            match tokio::time::timeout(Duration::from_secs(1), p).await {
                Ok(r) => reasons.push(r.unwrap()),
                Err(_) => released = false,
            }
        }
        let second = client.close_with("test: second closer");
        let kill_still_running = !first.is_finished();
        let _ = slow.release.send(());
        let first_closed = first.join().unwrap();

        assert!(
            released,
            "round {round}: a caller was not released while the first kill ran (it ran the kill itself?)"
        );
        assert!(
            kill_still_running,
            "round {round}: the kill should still run"
        );
        assert!(first_closed, "round {round}: the first close closed it");
        assert!(!second, "round {round}: a later close finds it closed");
        assert_eq!(
            slow.runs.load(Ordering::SeqCst),
            1,
            "round {round}: one kill"
        );
        for r in reasons {
            assert!(
                matches!(
                    &r,
                    Err(CallError::Connection(ConnectionError::LocallyClosed { reason }))
                        if &**reason == "test: budget exceeded"
                ),
                "round {round}: {r:?}"
            );
        }
        assert!(
            matches!(
                client.error(),
                Some(ConnectionError::LocallyClosed { reason }) if &*reason == "test: budget exceeded"
            ),
            "round {round}: the first reason stays"
        );
    }
}
