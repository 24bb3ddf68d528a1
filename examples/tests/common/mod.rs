//! Helpers shared by the `lv` integration tests (each test file is its own crate and takes
//! what it needs).
#![allow(dead_code, reason = "each test crate uses a subset")]

use std::time::{Duration, Instant};

use libvirt_rpc::client::{Client, UploadOptions};
use libvirt_rpc::proto::types::StorageVol;
use testbed::libvirtd::Libvirtd;
use testbed::relay::{Relay, established_to};

/// One MiB.
pub const MIB: u64 = 1 << 20;

/// A raw volume of `bytes` named `name` in the daemon's pool.
pub async fn make_vol(c: &Client, d: &Libvirtd, name: &str, bytes: u64) -> StorageVol {
    libvirt_rpc_testkit::live::make_vol(c, d.pool_name(), name, bytes).await
}

/// H1 on a transport through `relay`: with an upload of a new volume `name` stuck behind the
/// frozen relay, `close()` returns within 100 ms, the upload ends with `LocallyClosed` within
/// 200 ms, and the client's TCP connection to `first_hop` (the port it dialled) is gone within
/// 200 ms — every session tunnelled through it ended too.
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
                    return e;
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
    let e = tokio::time::timeout(Duration::from_secs(1), up)
        .await
        .expect("upload ended within 1 s")
        .unwrap();
    let ended = t.elapsed();
    // The TCP socket under the session must be shut down, not left stuck behind its write.
    while established_to(first_hop) > 0 && t.elapsed() < Duration::from_secs(2) {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let socket_gone = t.elapsed();
    let still = established_to(first_hop);
    relay.thaw();
    eprintln!(
        "{name}: close() {close_took:?}, upload ended {ended:?}, TCP socket gone {socket_gone:?} after it"
    );
    assert_eq!(
        still, 0,
        "TCP connection to port {first_hop} still up 2 s after close()"
    );
    assert!(
        socket_gone < Duration::from_millis(200),
        "TCP socket shut down {socket_gone:?} after close()"
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
            libvirt_rpc::StreamError::Connection(
                libvirt_rpc::ConnectionError::LocallyClosed { .. }
            )
        ),
        "{e:?}"
    );
}
