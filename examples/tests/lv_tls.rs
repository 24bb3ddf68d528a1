//! libvirt over TLS, end to end: `lv` against a private libvirtd's TLS listener (with a
//! client certificate, and with SCRAM-SHA-256 from an auth.conf), and teardown with the TLS
//! peer frozen behind a relay: `Client::close()` kills the TCP socket under the TLS session,
//! and `lv --timeout` exits on time.
#![allow(clippy::many_single_char_names)]

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use libvirt_remote::client::{Client, ConnectOptions};
use testbed::data::pattern;
use testbed::libvirtd::Libvirtd;
use testbed::pki::ServerCert;
use testbed::relay::{Relay, RelayOptions};

mod common;
use common::{MIB, make_vol};

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
/// bytes flow: the child and when it was spawned (its deadline counts from then, not from
/// the setup before it).
async fn frozen_upload(
    d: &Libvirtd,
    relay: &Relay,
    extra: &[&str],
    tmp: &Path,
) -> (std::process::Child, Instant) {
    let mut cmd = lv();
    cmd.args(["-c", &uri_via(d, relay.addr().port())])
        .args(extra);
    let src = tmp.join("big");
    let flowing = Duration::from_secs(30);
    common::frozen_lv_upload(cmd, &d.tls_uri(), d, relay, "frozen.raw", &src, flowing).await
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
    let (child, started) = frozen_upload(&d, &relay, &["--timeout", "6"], tmp.path()).await;
    let frozen_at = Instant::now();
    let timeout = Duration::from_secs(6);
    common::lv_times_out_on_time(child, &relay, started, frozen_at, timeout, "tls");
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
    common::close_is_bounded_with_a_frozen_peer(&c, &d, &relay, relay.addr().port(), "close.raw")
        .await;
}

/// `no_verify` is an integer as in libvirt: `no_verify=false` (or `no`, `off`, empty) is an
/// invalid URI, never a switch that turns certificate checking off; so is `no_verify=0` a
/// checked connection. The server's certificate here is not signed by the CA the client
/// trusts.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lv_no_verify_false_refuses_an_unknown_ca() {
    let Some(d) = tls_daemon() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let foreign = d
        .pki()
        .unwrap()
        .client_dir(
            &tmp.path().join("foreign"),
            testbed::pki::ClientPki::ForeignCa,
        )
        .unwrap();
    let uri = d.tls_uri_with("qemu", "session", &foreign);
    for v in ["false", "no", "off", "", "0"] {
        let out = lv()
            .args(["-c", &format!("{uri}&no_verify={v}"), "version"])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            !out.status.success(),
            "no_verify={v} connected to a server whose CA the client does not trust: {}",
            String::from_utf8_lossy(&out.stdout)
        );
        assert!(
            err.contains("no_verify") || err.contains("not signed by a trusted CA"),
            "no_verify={v}: {err}"
        );
        assert!(!err.contains("NOT verified"), "no_verify={v}: {err}");
    }
}
