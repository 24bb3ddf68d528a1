//! Busy-polling (`ConnectOptions::busy_poll`) over a real unix socket pair, with a scripted
//! daemon on its own OS thread. Measured per thread (`/proc/thread-self`), so the
//! current-thread runtime's own CPU time and sleeps are what we see.

use std::io::{Read, Write};
use std::os::unix::net::UnixStream as StdUnix;
use std::time::Duration;

use libvirt_remote::Client;
use libvirt_remote::client::ConnectOptions;
use libvirt_remote::conn::Config;
use libvirt_remote::proto::procs::connect::{ConnectGetLibVersion, ConnectGetLibVersionRet};
use libvirt_remote_testkit::peer::{self, Peer};

/// A scripted daemon: answers every call after `delay`, until the client hangs up.
fn serve(mut s: StdUnix, delay: Duration) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        let mut peer = Peer::new();
        let mut buf = vec![0u8; 64 << 10];
        loop {
            let n = match s.read(&mut buf) {
                Ok(0) | Err(_) => return,
                Ok(n) => n,
            };
            peer.feed(&buf[..n]);
            while let Some(f) = peer.recv().unwrap() {
                std::thread::sleep(delay);
                let r = peer::reply_to(&f.header, &ConnectGetLibVersionRet { lib_ver: 9_000_000 });
                if s.write_all(&r).is_err() {
                    return;
                }
            }
        }
    })
}

fn client_opts(busy_poll: Duration) -> ConnectOptions {
    ConnectOptions {
        config: Config {
            keepalive: None,
            ..Config::default()
        },
        busy_poll,
        ..ConnectOptions::default()
    }
}

/// (ns on CPU, voluntary context switches) of the calling thread.
fn thread_usage() -> (u64, u64) {
    let sched = std::fs::read_to_string("/proc/thread-self/schedstat").unwrap();
    let ns = sched.split_whitespace().next().unwrap().parse().unwrap();
    let status = std::fs::read_to_string("/proc/thread-self/status").unwrap();
    let vol = status
        .lines()
        .find_map(|l| l.strip_prefix("voluntary_ctxt_switches:"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    (ns, vol)
}

fn pair(busy_poll: Duration, delay: Duration) -> (Client, std::thread::JoinHandle<()>) {
    let (a, b) = StdUnix::pair().unwrap();
    a.set_nonblocking(true).unwrap();
    let a = tokio::net::UnixStream::from_std(a).unwrap();
    (
        Client::start_socket(a, &client_opts(busy_poll)),
        serve(b, delay),
    )
}

/// Close, and wait for the server thread to see EOF (the driver must get to run to drop the
/// socket, so the join happens off the runtime's thread).
async fn hang_up(client: Client, server: std::thread::JoinHandle<()>) {
    client.close();
    drop(client);
    tokio::task::spawn_blocking(move || server.join().unwrap())
        .await
        .unwrap();
}

/// A reply that takes 300 ms must not cost 300 ms of spinning: the busy-poll stops after its
/// budget and the driver parks.
#[tokio::test(flavor = "current_thread")]
async fn busy_poll_stops_after_its_budget() {
    let (client, server) = pair(Duration::from_micros(500), Duration::from_millis(300));
    let (cpu0, _) = thread_usage();
    let v = client.call::<ConnectGetLibVersion>(&()).await.unwrap();
    let (cpu1, _) = thread_usage();
    assert_eq!(v.lib_ver, 9_000_000);
    let spent = Duration::from_nanos(cpu1 - cpu0);
    eprintln!("CPU while a reply took 300 ms (busy-poll 500 µs): {spent:?}");
    assert!(
        spent < Duration::from_millis(60),
        "the client thread used {spent:?} of CPU waiting 300 ms for one reply (budget 500 µs)"
    );
    hang_up(client, server).await;
}

// Whether replies within the budget are read without parking is a figure, not a test: it
// depends on the box's scheduling (`compare --counts`, context switches per call, in
// docs/benchmarks.md). The policy that decides when to spin is tested with made-up instants
// in `client/driver/spin.rs`.
