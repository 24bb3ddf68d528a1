//! TLS and SASL against real private libvirtd daemons listening on 127.0.0.1 with per-test
//! certificates (`testbed::pki`) and a sasldb: calls, events and 256 MiB both ways over TLS with
//! a client certificate and with SCRAM-SHA-256 on top; every refusal as its typed error
//! within 2 s; passwords nowhere in logs, errors or `Debug`.

use std::fmt::Write as _;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use libvirt_remote::client::tls::TlsError;
use libvirt_remote::client::{Client, ConnectError, ConnectOptions};
use libvirt_remote::conn::handshake::HandshakeError;
use libvirt_remote::conn::sasl::{CredentialCallback, Credentials, SaslError};
use libvirt_remote::proto::procs::connect::{ConnectGetLibVersion, ConnectGetUri, ConnectIsSecure};
use libvirt_remote_testkit::live;
use testbed::data::pattern;
use testbed::libvirtd::Libvirtd;
use testbed::pki::{ClientPki, ServerCert};

const MIB: u64 = 1 << 20;
const PASSWORD: &str = "s3cret-Pa55word";
/// Every refusal must be typed and quick.
const ERROR_BOUND: Duration = Duration::from_secs(2);

fn tls_daemon() -> Option<Libvirtd> {
    Libvirtd::builder()
        .tls(ServerCert::default())
        .start_or_skip()
}

fn sasl_daemon(mechs: &str) -> Option<Libvirtd> {
    Libvirtd::builder()
        .tls(ServerCert::default())
        .sasl_user("alice", PASSWORD)
        .sasl_mechanisms(mechs)
        .start_or_skip()
}

/// An auth.conf for 127.0.0.1 in `dir`; returns its path.
fn auth_conf(dir: &std::path::Path, user: &str, password: &str) -> std::path::PathBuf {
    let p = dir.join("auth.conf");
    std::fs::write(
        &p,
        format!(
            "[credentials-t]\nauthname={user}\npassword={password}\n[auth-libvirt-127.0.0.1]\ncredentials=t\n"
        ),
    )
    .unwrap();
    p
}

/// A secure connection, calls, a storage pool event, and `mib` MiB up and down byte-exact.
async fn exercise(c: &Client, d: &Libvirtd, vol_name: &str, mib: u64) {
    assert_eq!(c.call::<ConnectIsSecure>(&()).await.unwrap().secure, 1);
    let data = pattern((mib * MIB) as usize, 15);
    live::calls_events_transfers(c, d.pool_name(), vol_name, &data).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tls_with_client_certificate_calls_events_and_256_mib_both_ways() {
    let Some(d) = tls_daemon() else { return };
    let c = Client::connect(&d.tls_uri(), ConnectOptions::default())
        .await
        .unwrap();
    assert_eq!(c.handshake_outcome().sasl_mechanism, None);
    exercise(&c, &d, "tls.raw", 256).await;
    c.disconnect(Duration::from_secs(5)).await;

    // The test driver through the same listener, and `qemu://host/` meaning TLS.
    let pki = d.pki().unwrap().good_client_dir();
    let c = Client::connect(
        &d.tls_uri_with("test", "default", &pki),
        ConnectOptions::default(),
    )
    .await
    .unwrap();
    assert_eq!(
        c.call::<ConnectGetUri>(&()).await.unwrap().uri,
        "test:///default"
    );
    c.close();
    let bare = d
        .tls_uri_with("qemu", "session", &pki)
        .replace("qemu+tls://", "qemu://");
    let c = Client::connect(&bare, ConnectOptions::default())
        .await
        .unwrap();
    assert_eq!(
        c.call::<ConnectGetUri>(&()).await.unwrap().uri,
        "qemu:///session"
    );
    c.close();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scram_sha_256_over_tls_calls_events_and_256_mib_both_ways() {
    let Some(d) = sasl_daemon("scram-sha-256") else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let conf = auth_conf(tmp.path(), "alice", PASSWORD);
    let uri = format!("{}&authfile={}", d.tls_uri(), conf.display());
    let c = authenticated(&d, &uri, "SCRAM-SHA-256").await;
    exercise(&c, &d, "scram.raw", 256).await;
    c.disconnect(Duration::from_secs(5)).await;

    // The embedding program's callback, when no auth.conf has an entry.
    let empty = tmp.path().join("empty.conf");
    std::fs::write(&empty, "").unwrap();
    let mut opts = ConnectOptions::default();
    opts.handshake.sasl.credentials = Some(CredentialCallback::fixed(Credentials::new(
        "alice", PASSWORD,
    )));
    let uri = format!(
        "{}&authfile={}&auth=sasl.scram-sha-256",
        d.tls_uri(),
        empty.display()
    );
    let c = Client::connect(&uri, opts).await.unwrap();
    assert!(c.call::<ConnectGetLibVersion>(&()).await.is_ok());
    c.close();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scram_sha_1_when_that_is_all_the_daemon_offers_and_plain_only_when_asked() {
    let Some(d) = sasl_daemon("scram-sha-1") else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let conf = auth_conf(tmp.path(), "alice", PASSWORD);
    let uri = format!("{}&authfile={}", d.tls_uri(), conf.display());
    authenticated(&d, &uri, "SCRAM-SHA-1").await.close();

    // PLAIN hands the daemon the password itself: only when asked for, and never to a
    // daemon whose certificate was not verified.
    let Some(d) = sasl_daemon("plain") else {
        return;
    };
    let uri = format!("{}&authfile={}", d.tls_uri(), conf.display());
    let e = match Client::connect(&uri, ConnectOptions::default()).await {
        Ok(c) => {
            let m = c.handshake_outcome().sasl_mechanism.clone();
            c.close();
            panic!("authenticated with {m:?} although nobody asked for PLAIN")
        }
        Err(e) => e,
    };
    assert!(
        matches!(sasl(&e), Some(SaslError::PlainNotRequested { .. })),
        "{e:?}"
    );
    assert!(e.to_string().contains("auth=sasl.plain"), "{e}");
    authenticated(&d, &format!("{uri}&auth=sasl.plain"), "PLAIN")
        .await
        .close();
    let e = refused(
        &format!("{uri}&auth=sasl.plain&no_verify=1"),
        ConnectOptions::default(),
    )
    .await;
    assert!(
        matches!(sasl(&e), Some(SaslError::PlainUnverified)),
        "{e:?}"
    );
}

/// Connected to `uri` with the default options, authenticated with `mechanism`, a call made.
async fn authenticated(d: &Libvirtd, uri: &str, mechanism: &str) -> Client {
    let c = Client::connect(uri, ConnectOptions::default())
        .await
        .unwrap_or_else(|e| panic!("{mechanism}: {e}\n{}", d.log_tail()));
    assert_eq!(
        c.handshake_outcome().sasl_mechanism.as_deref(),
        Some(mechanism)
    );
    assert!(c.call::<ConnectGetLibVersion>(&()).await.is_ok());
    c
}

/// The SASL error inside a handshake failure, if that is what `e` is.
fn sasl(e: &ConnectError) -> Option<&SaslError> {
    match e {
        ConnectError::Handshake(HandshakeError::Sasl(s)) => Some(s),
        _ => None,
    }
}

async fn refused(uri: &str, opts: ConnectOptions) -> ConnectError {
    let t = Instant::now();
    let Ok(r) = tokio::time::timeout(ERROR_BOUND * 5, Client::connect(uri, opts)).await else {
        panic!("{uri}: no answer within {:?}", ERROR_BOUND * 5)
    };
    let took = t.elapsed();
    let Err(e) = r else {
        panic!("{uri}: connected")
    };
    eprintln!("{took:>10.1?}  {e}");
    assert!(took < ERROR_BOUND, "{uri}: {e} took {took:?}");
    e
}

/// libvirt's client reads `cacrl.pem` beside the CA (`virNetTLSContextLocateCredentials`):
/// a daemon whose certificate the CA revoked is refused, with its own typed error, quickly;
/// a revocation list that does not name it changes nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_revoked_server_certificate_is_refused() {
    let Some(d) = tls_daemon() else { return };
    let pki = d.pki().unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let dir = pki
        .client_dir(&tmp.path().join("revoked"), ClientPki::Good)
        .unwrap();
    pki.write_crl(&dir, true).unwrap();
    let uri = d.tls_uri_with("qemu", "session", &dir);
    let Ok(r) = tokio::time::timeout(
        ERROR_BOUND * 5,
        Client::connect(&uri, ConnectOptions::default()),
    )
    .await
    else {
        panic!("no answer within {:?}", ERROR_BOUND * 5)
    };
    let e = match r {
        Ok(c) => {
            c.close();
            panic!("connected to a daemon whose certificate is on the CA's revocation list")
        }
        Err(e) => e,
    };
    assert!(
        matches!(&e, ConnectError::Tls(TlsError::Revoked { .. })),
        "{e:?}"
    );
    assert!(e.to_string().contains("revoked"), "{e}");

    let clean = pki
        .client_dir(&tmp.path().join("clean"), ClientPki::Good)
        .unwrap();
    pki.write_crl(&clean, false).unwrap();
    let c = Client::connect(
        &d.tls_uri_with("qemu", "session", &clean),
        ConnectOptions::default(),
    )
    .await
    .expect("a revocation list without the server's certificate");
    assert!(c.call::<ConnectGetLibVersion>(&()).await.is_ok());
    c.close();

    // A revocation list that does not parse is an error naming it, not ignored.
    std::fs::write(dir.join("cacrl.pem"), "not a CRL").unwrap();
    let e = refused(&uri, ConnectOptions::default()).await;
    assert!(e.to_string().contains("cacrl.pem"), "{e}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_tls_refusal_is_typed_and_quick() {
    let Some(d) = tls_daemon() else { return };
    let pki = d.pki().unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let dir = |kind| {
        pki.client_dir(&tmp.path().join(format!("{kind:?}")), kind)
            .unwrap()
    };
    let uri = |p: &std::path::Path| d.tls_uri_with("qemu", "session", p);
    let opts = ConnectOptions::default;

    // Our CA did not sign the server's certificate.
    let e = refused(&uri(&dir(ClientPki::ForeignCa)), opts()).await;
    assert!(
        matches!(e, ConnectError::Tls(TlsError::UnknownCa { .. })),
        "{e:?}"
    );

    // The daemon refuses a client without a certificate, and one its CA did not sign.
    for kind in [ClientPki::NoClientCert, ClientPki::ForeignClientCert] {
        let e = refused(&uri(&dir(kind)), opts()).await;
        assert!(
            matches!(
                e,
                ConnectError::Handshake(HandshakeError::TlsRefused { .. })
            ),
            "{kind:?}: {e:?}"
        );
    }

    // A PKI file that is not there is named.
    let empty = tmp.path().join("nothing");
    std::fs::create_dir_all(&empty).unwrap();
    let e = refused(&uri(&empty), opts()).await;
    match &e {
        ConnectError::Tls(TlsError::MissingPkiFile { path, .. }) => {
            assert_eq!(path, &empty.join("cacert.pem"));
            assert!(
                e.to_string()
                    .contains(&*empty.join("cacert.pem").to_string_lossy())
            );
        }
        other => panic!("{other:?}"),
    }

    // Nothing listening.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let e = refused(
        &format!(
            "qemu+tls://127.0.0.1:{port}/session?pkipath={}",
            pki.good_client_dir().display()
        ),
        opts(),
    )
    .await;
    assert!(
        matches!(&e, ConnectError::Dial { error, .. } if error.kind() == std::io::ErrorKind::ConnectionRefused),
        "{e:?}"
    );

    // `no_verify=1` accepts a certificate our CA did not sign.
    let c = Client::connect(
        &format!("{}&no_verify=1", uri(&tmp.path().join("ForeignCa"))),
        opts(),
    )
    .await;
    // The foreign dir's client certificate is not the daemon's: it is still refused, but
    // only after our side accepted the server.
    assert!(
        matches!(
            c,
            Err(ConnectError::Handshake(HandshakeError::TlsRefused { .. }))
        ),
        "{c:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wrong_host_name_and_expired_certificate_are_refused() {
    let Some(d) = Libvirtd::builder()
        .tls(ServerCert {
            names: vec!["other.example".into()],
            expired: false,
        })
        .start_or_skip()
    else {
        return;
    };
    let e = refused(&d.tls_uri(), ConnectOptions::default()).await;
    assert!(
        matches!(e, ConnectError::Tls(TlsError::NameMismatch { .. })),
        "{e:?}"
    );
    drop(d);

    let Some(d) = Libvirtd::builder()
        .tls(ServerCert {
            expired: true,
            ..ServerCert::default()
        })
        .start_or_skip()
    else {
        return;
    };
    let e = refused(&d.tls_uri(), ConnectOptions::default()).await;
    assert!(
        matches!(e, ConnectError::Tls(TlsError::Expired { .. })),
        "{e:?}"
    );
}

/// Collects every log line at TRACE level.
#[derive(Clone, Default)]
struct Capture(Arc<Mutex<Vec<u8>>>);

impl std::io::Write for Capture {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_sasl_refusal_is_typed_and_quick_and_no_password_leaks() {
    let Some(d) = Libvirtd::builder()
        .tls(ServerCert::default())
        .tcp()
        .sasl_user("alice", PASSWORD)
        .start_or_skip()
    else {
        return;
    };
    let log = Capture::default();
    let sink = log.clone();
    let _guard = tracing::subscriber::set_default(
        tracing_subscriber::fmt()
            .with_max_level(tracing::Level::TRACE)
            .with_writer(move || sink.clone())
            .with_ansi(false)
            .finish(),
    );
    let tmp = tempfile::tempdir().unwrap();
    let wrong = auth_conf(tmp.path(), "alice", "not-the-password");
    let mut shown = String::new();

    // Wrong password: the daemon rejects it.
    let e = refused(
        &format!("{}&authfile={}", d.tls_uri(), wrong.display()),
        ConnectOptions::default(),
    )
    .await;
    assert!(
        matches!(&e, ConnectError::Handshake(HandshakeError::AuthRejected { mechanism, .. }) if mechanism == "SCRAM-SHA-256"),
        "{e:?}"
    );
    assert!(matches!(&e, ConnectError::Handshake(h) if h.is_auth_failed()));
    write!(shown, "{e} {e:?}").unwrap();

    // No credentials anywhere.
    let empty = tmp.path().join("empty.conf");
    std::fs::write(&empty, "").unwrap();
    let e = refused(
        &format!("{}&authfile={}", d.tls_uri(), empty.display()),
        ConnectOptions::default(),
    )
    .await;
    assert!(
        matches!(sasl(&e), Some(SaslError::NoCredentials { .. })),
        "{e:?}"
    );

    // A mechanism the daemon does not offer.
    let right = tmp.path().join("right");
    std::fs::create_dir_all(&right).unwrap();
    let right = auth_conf(&right, "alice", PASSWORD);
    let e = refused(
        &format!(
            "{}&authfile={}&auth=sasl.plain",
            d.tls_uri(),
            right.display()
        ),
        ConnectOptions::default(),
    )
    .await;
    assert!(
        matches!(sasl(&e), Some(SaslError::MechanismUnavailable { .. })),
        "{e:?}"
    );

    // SASL over plain TCP: refused before any SASL exchange, saying why.
    let e = refused(
        &format!(
            "qemu+tcp://127.0.0.1:{}/session?authfile={}",
            d.tcp_port().unwrap(),
            right.display()
        ),
        ConnectOptions::default(),
    )
    .await;
    assert!(
        matches!(sasl(&e), Some(SaslError::NeedsSecurityLayer)),
        "{e:?}"
    );
    let msg = e.to_string();
    assert!(
        msg.contains("security layer") && msg.contains("GSSAPI"),
        "{msg}"
    );

    // And the right password works, with its Debug and the outcome free of it too.
    let c = Client::connect(
        &format!("{}&authfile={}", d.tls_uri(), right.display()),
        ConnectOptions::default(),
    )
    .await
    .unwrap();
    c.call::<ConnectGetLibVersion>(&()).await.unwrap();
    write!(shown, "{c:?} {:?}", c.handshake_outcome()).unwrap();
    c.close();

    let logged = String::from_utf8_lossy(&log.0.lock().unwrap()).into_owned();
    assert!(
        logged.contains("SASL credentials from auth.conf"),
        "trace captured"
    );
    for secret in [PASSWORD, "not-the-password"] {
        assert!(!logged.contains(secret), "password in the log:\n{logged}");
        assert!(!shown.contains(secret), "password shown: {shown}");
    }
}
