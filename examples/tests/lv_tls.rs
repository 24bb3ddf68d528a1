//! libvirt over TLS, end to end: `lv` against a private libvirtd's TLS listener (with a
//! client certificate, and with SCRAM-SHA-256 from an auth.conf), and teardown with the TLS
//! peer frozen behind a relay: `Client::close()` kills the TCP socket under the TLS session,
//! and `lv --timeout` exits on time.
#![allow(clippy::many_single_char_names)]

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use libvirt_rpc::client::{Client, ConnectOptions};
use libvirt_rpc::proto::procs::storage::{
    StoragePoolLookupByName, StoragePoolLookupByNameArgs, StorageVolCreateXml,
    StorageVolCreateXmlArgs,
};
use libvirt_rpc::proto::types::StorageVol;
use testbed::data::pattern;
use testbed::libvirtd::Libvirtd;
use testbed::pki::ServerCert;
use testbed::relay::{Relay, RelayOptions};

const MIB: u64 = 1 << 20;

fn lv() -> Command {
    Command::new(env!("CARGO_BIN_EXE_lv"))
}

fn tls_daemon() -> Option<Libvirtd> {
    Libvirtd::builder()
        .tls(ServerCert::default())
        .start_or_skip()
}

/// The daemon's TLS URI, through `port` instead of its own (the server certificate names
/// 127.0.0.1, so a relay on 127.0.0.1 is still verified).
fn uri_via(d: &Libvirtd, port: u16) -> String {
    d.tls_uri().replacen(
        &format!(":{}/", d.tls_port().unwrap()),
        &format!(":{port}/"),
        1,
    )
}

async fn make_vol(c: &Client, d: &Libvirtd, name: &str, bytes: u64) -> StorageVol {
    let pool = c
        .call::<StoragePoolLookupByName>(&StoragePoolLookupByNameArgs {
            name: d.pool_name().into(),
        })
        .await
        .unwrap()
        .pool;
    let xml = format!(
        "<volume><name>{name}</name><capacity unit='bytes'>{bytes}</capacity><allocation>0</allocation><target><format type='raw'/></target></volume>"
    );
    c.call::<StorageVolCreateXml>(&StorageVolCreateXmlArgs {
        pool,
        xml: xml.into(),
        flags: 0,
    })
    .await
    .unwrap()
    .vol
}

fn ok(out: &std::process::Output) -> String {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lv_over_tls_with_a_certificate_and_with_scram() {
    let Some(d) = Libvirtd::builder()
        .tls(ServerCert::default())
        .sasl_user("alice", "lv-tls-pw")
        .start_or_skip()
    else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let auth = tmp.path().join("auth.conf");
    std::fs::write(
        &auth,
        "[credentials-a]\nauthname=alice\npassword=lv-tls-pw\n[auth-libvirt-127.0.0.1]\ncredentials=a\n",
    )
    .unwrap();
    let uri = d.tls_uri();
    // $LIBVIRT_AUTH_FILE, as with virsh.
    let out = lv()
        .args(["-c", &uri, "version"])
        .env("LIBVIRT_AUTH_FILE", &auth)
        .output()
        .unwrap();
    assert!(ok(&out).contains("9.0.0"));
    let out = lv()
        .args(["-c", &uri, "version"])
        .env("LIBVIRT_AUTH_FILE", "/dev/null")
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no credentials"), "{err}");

    let uri = format!("{uri}&authfile={}", auth.display());
    let c = Client::connect(&uri, ConnectOptions::default())
        .await
        .unwrap();
    make_vol(&c, &d, "lv.raw", 64 * MIB).await;
    c.close();
    let src = tmp.path().join("src");
    std::fs::write(&src, pattern(64 * MIB as usize, 15)).unwrap();
    let pool = d.pool_name();
    ok(&lv()
        .args(["-c", &uri, "vol-upload", "--pool", pool, "lv.raw"])
        .arg(&src)
        .output()
        .unwrap());
    let dst = tmp.path().join("dst");
    ok(&lv()
        .args(["-c", &uri, "vol-download", "--pool", pool, "lv.raw"])
        .arg(&dst)
        .output()
        .unwrap());
    assert!(std::fs::read(&dst).unwrap() == std::fs::read(&src).unwrap());
}

/// Starts `lv vol-upload` of a large sparse file through a relay, freezes the relay once
/// bytes flow, and returns the child.
async fn frozen_upload(
    d: &Libvirtd,
    relay: &Relay,
    extra: &[&str],
    tmp: &Path,
) -> std::process::Child {
    let c = Client::connect(&d.tls_uri(), ConnectOptions::default())
        .await
        .unwrap();
    make_vol(&c, d, "frozen.raw", 4096 * MIB).await;
    c.close();
    let src = tmp.join("big");
    std::fs::File::create(&src)
        .unwrap()
        .set_len(4096 * MIB)
        .unwrap();
    let child = lv()
        .args(["-c", &uri_via(d, relay.addr().port())])
        .args(extra)
        .args(["vol-upload", "--pool", d.pool_name(), "frozen.raw"])
        .arg(&src)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    relay
        .freeze_once_flowing(16 * MIB, Duration::from_secs(30))
        .await;
    child
}

fn wait_exit(child: &mut std::process::Child, limit: Duration) -> std::process::ExitStatus {
    let t = Instant::now();
    loop {
        if let Some(st) = child.try_wait().unwrap() {
            return st;
        }
        if t.elapsed() > limit {
            let _ = child.kill();
            panic!("lv still running {limit:?} later");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lv_timeout_exits_within_a_second_under_a_frozen_tls_peer() {
    let Some(d) = tls_daemon() else { return };
    let relay = Relay::start(
        ([127, 0, 0, 1], d.tls_port().unwrap()).into(),
        RelayOptions::small(),
    )
    .unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let started = Instant::now();
    let mut child = frozen_upload(&d, &relay, &["--timeout", "6"], tmp.path()).await;
    let deadline = started + Duration::from_secs(6);
    assert!(Instant::now() < deadline, "froze before the deadline");
    let st = wait_exit(&mut child, Duration::from_secs(15));
    let late = Instant::now().saturating_duration_since(deadline);
    assert_eq!(st.code(), Some(124), "timeout exit code");
    assert!(
        late < Duration::from_secs(1),
        "exited {late:?} after its deadline"
    );
    relay.thaw();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn client_close_is_bounded_with_a_frozen_tls_peer() {
    let Some(d) = tls_daemon() else { return };
    let relay = Relay::start(
        ([127, 0, 0, 1], d.tls_port().unwrap()).into(),
        RelayOptions::small(),
    )
    .unwrap();
    let c = Client::connect(&uri_via(&d, relay.addr().port()), ConnectOptions::default())
        .await
        .unwrap();
    let vol = make_vol(&c, &d, "close.raw", 4096 * MIB).await;
    let up = {
        let c = c.clone();
        tokio::spawn(async move {
            let mut up = c.vol_upload(&vol, 0, 0, false).await.unwrap();
            loop {
                if let Err(e) = up.send(bytes::Bytes::from(vec![0u8; 4 << 20])).await {
                    return e;
                }
            }
        })
    };
    relay
        .freeze_once_flowing(16 * MIB, Duration::from_secs(30))
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
    // The TCP socket under the TLS session must be shut down, not left behind its write.
    let t2 = Instant::now();
    while relay.established_clients() > 0 && t2.elapsed() < Duration::from_secs(2) {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let socket_gone = t.elapsed();
    let still = relay.established_clients();
    relay.thaw();
    assert_eq!(
        still, 0,
        "client TCP socket to the relay still ESTABLISHED 2 s after close()"
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
