//! The connection pool (`client::Pool`) against real, private libvirtd 9.0 daemons: 20 URIs
//! over 4 daemons (5 spellings of each daemon's socket), one daemon killed and restarted —
//! only its 5 connections are dialled again — and no task or descriptor left behind.
#![cfg(feature = "client")]

use std::sync::Arc;
use std::time::Duration;

use libvirt_remote::client::{Client, ConnectOptions, Pool, PoolOptions};
use libvirt_remote::conn::handshake::HandshakeOptions;
use libvirt_remote::proto::procs::connect::ConnectGetLibVersion;
use testbed::libvirtd::Libvirtd;

const DAEMONS: usize = 4;

/// Five URIs of one daemon: the qemu and test drivers, and spellings of the socket's path.
fn uris(d: &Libvirtd) -> Vec<String> {
    let s = d.socket_path().display().to_string();
    let (dir, name) = s.rsplit_once('/').expect("an absolute path");
    vec![
        d.uri(),
        format!("qemu+unix:///session?socket={dir}/./{name}"),
        format!("qemu+unix:///session?socket={dir}//{name}"),
        d.test_uri(),
        format!("test+unix:///default?socket={dir}/../libvirt/{name}"),
    ]
}

fn open_fds() -> usize {
    std::fs::read_dir("/proc/self/fd").unwrap().count()
}

fn alive_tasks() -> usize {
    tokio::runtime::Handle::current()
        .metrics()
        .num_alive_tasks()
}

/// Waits (up to 10 s) for `f` to hold; false if it never did.
async fn eventually(mut f: impl FnMut() -> bool) -> bool {
    for _ in 0..200 {
        if f() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    f()
}

fn options(idle: Option<Duration>) -> PoolOptions {
    PoolOptions {
        connect: Arc::new(|_| ConnectOptions {
            handshake: HandshakeOptions {
                keepalive: true,
                ..HandshakeOptions::default()
            },
            ..ConnectOptions::default()
        }),
        idle_timeout: idle,
    }
}

/// Every URI's connection, each proven with a call.
async fn get_all(pool: &Pool, uris: &[String]) -> Vec<Client> {
    let mut out = Vec::new();
    let tasks: Vec<_> = uris
        .iter()
        .map(|u| {
            let (pool, u) = (pool.clone(), u.clone());
            tokio::spawn(async move {
                let c = pool.get(&u).await.unwrap_or_else(|e| panic!("{u}: {e}"));
                c.call::<ConnectGetLibVersion>(&()).await.unwrap();
                c
            })
        })
        .collect();
    for t in tasks {
        out.push(t.await.unwrap());
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn twenty_uris_one_daemon_restarted_only_its_connections_are_redialled() {
    let mut daemons = Vec::new();
    for _ in 0..DAEMONS {
        let Some(d) = Libvirtd::start_or_skip() else {
            return;
        };
        daemons.push(d);
    }
    let per: Vec<Vec<String>> = daemons.iter().map(uris).collect();
    let all: Vec<String> = per.concat();
    assert_eq!(all.len(), 20);
    let (fds, tasks) = (open_fds(), alive_tasks());

    let pool = Pool::new(options(None));
    let first = get_all(&pool, &all).await;
    eprintln!(
        "20 connections: {} tasks, {} descriptors",
        alive_tasks(),
        open_fds()
    );
    assert_eq!(pool.stats().connections, 20);
    assert_eq!(pool.stats().dials, 20);
    for (i, a) in first.iter().enumerate() {
        for b in &first[i + 1..] {
            assert!(!a.same_connection(b), "one connection per URI");
        }
    }
    // Asked again: the same 20, no dial.
    let again = get_all(&pool, &all).await;
    assert!(first.iter().zip(&again).all(|(a, b)| a.same_connection(b)));
    assert_eq!(pool.stats().dials, 20);
    drop(again);

    // Daemon 1 dies: its 5 connections end; the others live on.
    tokio::task::block_in_place(|| daemons[1].kill().unwrap());
    for c in &first[5..10] {
        tokio::time::timeout(Duration::from_secs(5), c.closed())
            .await
            .expect("a killed daemon's connections end");
    }
    assert!(
        first[..5]
            .iter()
            .chain(&first[10..])
            .all(|c| !c.is_closed())
    );
    assert_eq!(pool.stats().connections, 15);
    assert!(
        pool.current(&per[1][0]).is_none(),
        "a dead one is not handed out"
    );
    tokio::task::block_in_place(|| daemons[1].restart().unwrap());

    let after = get_all(&pool, &all).await;
    assert_eq!(
        pool.stats().dials,
        25,
        "only the restarted daemon's 5 were dialled"
    );
    for (i, (a, b)) in first.iter().zip(&after).enumerate() {
        let redialled = (5..10).contains(&i);
        assert_eq!(!a.same_connection(b), redialled, "{}", all[i]);
    }
    assert_eq!(pool.stats().connections, 20);

    // Everything dropped: every driver task ends and every socket closes.
    drop((first, after, pool));
    let settled = eventually(|| alive_tasks() <= tasks && open_fds() <= fds).await;
    eprintln!(
        "tasks {tasks} before, {} after; descriptors {fds} before, {} after",
        alive_tasks(),
        open_fds()
    );
    assert!(settled, "tasks or descriptors leaked");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idle_connections_are_closed_and_held_ones_kept() {
    let Some(d) = Libvirtd::start_or_skip() else {
        return;
    };
    let (fds, tasks) = (open_fds(), alive_tasks());
    let pool = Pool::new(options(Some(Duration::from_millis(300))));
    let uris = uris(&d);
    let held = pool.get(&uris[0]).await.unwrap();
    let idle = pool.get(&uris[1]).await.unwrap();
    idle.call::<ConnectGetLibVersion>(&()).await.unwrap();
    // Only the pool holds it once our clone is gone.
    drop(idle);
    assert!(
        eventually(|| pool.stats().idle_closed == 1).await,
        "{:?}",
        pool.stats()
    );
    assert!(pool.current(&uris[1]).is_none());
    assert!(
        !held.is_closed(),
        "a connection someone holds is never idle"
    );
    held.call::<ConnectGetLibVersion>(&()).await.unwrap();
    // Asked again: dialled anew.
    let back = pool.get(&uris[1]).await.unwrap();
    back.call::<ConnectGetLibVersion>(&()).await.unwrap();
    assert_eq!(pool.stats().dials, 3);
    drop((held, back, pool));
    assert!(
        eventually(|| alive_tasks() <= tasks && open_fds() <= fds).await,
        "the reaper task, a driver or a socket outlived the pool: tasks {tasks} -> {}, \
         descriptors {fds} -> {}",
        alive_tasks(),
        open_fds()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_gets_share_one_dial_and_its_failure() {
    let Some(d) = Libvirtd::start_or_skip() else {
        return;
    };
    let pool = Pool::new(options(None));
    let uri = d.uri();
    let got = futures::future::join_all((0..10).map(|_| pool.get(&uri))).await;
    let got: Vec<Client> = got.into_iter().map(Result::unwrap).collect();
    assert!(got.iter().all(|c| c.same_connection(&got[0])));
    assert_eq!(pool.stats().dials, 1);

    // A socket that takes connections and never speaks: each dial fails at its connect
    // timeout, and the callers that waited for it share that failure.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("mute");
    let _mute = std::os::unix::net::UnixListener::bind(&path).unwrap();
    let mute = format!("qemu+unix:///session?socket={}", path.display());
    let slow = Pool::new(PoolOptions {
        connect: Arc::new(|_| ConnectOptions {
            connect_timeout: Some(Duration::from_millis(500)),
            ..ConnectOptions::default()
        }),
        idle_timeout: None,
    });
    let failed = futures::future::join_all((0..10).map(|_| slow.get(&mute))).await;
    let errors: Vec<_> = failed.into_iter().map(Result::unwrap_err).collect();
    assert!(
        errors.iter().all(|e| Arc::ptr_eq(e, &errors[0])),
        "one shared failure: {errors:?}"
    );
    assert_eq!(slow.stats().dials, 1);
    // Asked after the failure: a new attempt.
    assert!(slow.get(&mute).await.is_err());
    assert_eq!(slow.stats().dials, 2);

    // close: callers holding it read the reason; the next get dials.
    assert!(pool.close(&uri, "test: closed"));
    let e = got[0].error().expect("closed");
    assert!(e.to_string().contains("test: closed"), "{e}");
    let fresh = pool.get(&uri).await.unwrap();
    assert!(!fresh.same_connection(&got[0]));
    fresh.call::<ConnectGetLibVersion>(&()).await.unwrap();
}
