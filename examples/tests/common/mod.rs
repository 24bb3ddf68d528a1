//! Helpers shared by the `lv` integration tests (each test file is its own crate and takes
//! what it needs).
#![allow(dead_code, reason = "each test crate uses a subset")]

pub mod virsh;

use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use libvirt_remote::client::{Client, ConnectOptions, UploadOptions};
use libvirt_remote::proto::types::NonnullStorageVol;
use testbed::libvirtd::Libvirtd;
use testbed::relay::{Relay, established_to};

/// One MiB.
pub const MIB: u64 = 1 << 20;

/// A raw volume of `bytes` named `name` in the daemon's pool.
pub async fn make_vol(c: &Client, d: &Libvirtd, name: &str, bytes: u64) -> NonnullStorageVol {
    libvirt_remote_testkit::live::make_vol(c, d.pool_name(), name, bytes).await
}

/// Starts `lv` (`cmd`, given its connection options) uploading a sparse 4 GiB file `src`
/// into a new volume `name` of `d`'s pool (made through `direct`, a URI that bypasses
/// `relay`), and returns once `relay` froze after 16 MiB flowed (waiting up to `flowing`):
/// the running `lv` and when it was started.
pub async fn frozen_lv_upload(
    mut cmd: Command,
    direct: &str,
    d: &Libvirtd,
    relay: &Relay,
    name: &str,
    src: &Path,
    flowing: Duration,
) -> (Child, Instant) {
    let c = Client::connect(direct, ConnectOptions::default())
        .await
        .unwrap();
    make_vol(&c, d, name, 4096 * MIB).await;
    c.close();
    std::fs::File::create(src)
        .unwrap()
        .set_len(4096 * MIB)
        .unwrap();
    let started = Instant::now();
    let child = cmd
        .args(["vol-upload", "--pool", d.pool_name(), name])
        .arg(src)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    relay.freeze_once_flowing(16 * MIB, flowing).await;
    (child, started)
}

/// Waits for `child` to exit: its status and how long that took. Kills it and panics after
/// `limit`.
pub fn wait_exit(child: &mut Child, limit: Duration) -> (ExitStatus, Duration) {
    let t = Instant::now();
    loop {
        if let Some(st) = child.try_wait().unwrap() {
            return (st, t.elapsed());
        }
        if t.elapsed() > limit {
            let _ = child.kill();
            panic!("lv still running {limit:?} later");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// H1 for `lv --timeout`: `lv`, started at `started` with a `timeout` and stuck behind
/// `relay` since `frozen_at` (before its deadline), exits 124 within 1 s of its deadline. Kills
/// it and panics if it still runs 15 s after `started`; thaws `relay` once it exited.
pub fn lv_times_out_on_time(
    mut lv: Child,
    relay: &Relay,
    started: Instant,
    frozen_at: Instant,
    timeout: Duration,
    name: &str,
) {
    let deadline = started + timeout;
    assert!(frozen_at < deadline, "froze after the deadline");
    let limit = Duration::from_secs(15).saturating_sub(started.elapsed());
    let (st, _) = wait_exit(&mut lv, limit);
    let late = Instant::now().saturating_duration_since(deadline);
    relay.thaw();
    eprintln!("{name}: lv exited {late:?} after its deadline");
    assert_eq!(st.code(), Some(124), "timeout exit code");
    assert!(
        late < Duration::from_secs(1),
        "exited {late:?} after its deadline"
    );
}

/// H1 on a transport through `relay`: with an upload of a new volume `name` stuck behind the
/// frozen relay, `close()` returns within 100 ms with the client's TCP connection to
/// `first_hop` (the port it dialled) already shut down — every session tunnelled through it
/// ended too — and the upload ends with `LocallyClosed` within 200 ms.
///
/// The socket's state is read from `/proc/net/tcp{,6}`, once, after `close()` returned: the
/// kill is a synchronous `shutdown(2)`, so no wait is allowed. (Timing that read is not a
/// measure of the kill: each read walks the kernel's whole connection hash, 5–15 ms here on an
/// idle box, and one read took over 200 ms in CI under load.)
pub async fn close_is_bounded_with_a_frozen_peer(
    c: &Client,
    d: &Libvirtd,
    relay: &Relay,
    first_hop: u16,
    name: &str,
) {
    let vol = make_vol(c, d, name, 4096 * MIB).await;
    let up = {
        let c = c.clone();
        tokio::spawn(async move {
            let mut up = c.vol_upload(&vol, UploadOptions::new()).await.unwrap();
            loop {
                if let Err(e) = up.send(bytes::Bytes::from(vec![0u8; 4 << 20])).await {
                    return (e, Instant::now());
                }
            }
        })
    };
    relay
        .freeze_once_flowing(16 * MIB, Duration::from_secs(60))
        .await;
    tokio::time::sleep(Duration::from_millis(300)).await; // let every buffer fill
    let t = Instant::now();
    c.close();
    let close_took = t.elapsed();
    let at_close = established_to(first_hop);
    let (e, ended_at) = tokio::time::timeout(Duration::from_secs(1), up)
        .await
        .expect("upload ended within 1 s")
        .unwrap();
    let ended = ended_at.saturating_duration_since(t);
    // For the log: how long until a read no longer finds it (each read costs 5–15 ms).
    while established_to(first_hop) > 0 && t.elapsed() < Duration::from_secs(2) {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let socket_gone = t.elapsed();
    let still = established_to(first_hop);
    relay.thaw();
    eprintln!(
        "{name}: close() {close_took:?}, upload ended {ended:?}, TCP socket not seen \
         established {socket_gone:?} after it ({at_close} established right after close())"
    );
    assert_eq!(
        still, 0,
        "TCP connection to port {first_hop} still up 2 s after close()"
    );
    assert_eq!(
        at_close, 0,
        "the TCP connection to port {first_hop} was still established when close() returned"
    );
    assert!(
        close_took < Duration::from_millis(100),
        "close() took {close_took:?}"
    );
    assert!(
        ended < Duration::from_millis(200),
        "upload ended {ended:?} after close()"
    );
    assert!(
        matches!(
            e,
            libvirt_remote::conn::StreamError::Connection(
                libvirt_remote::conn::ConnectionError::LocallyClosed { .. }
            )
        ),
        "{e:?}"
    );
}
