//! SASL against a scripted daemon (labelled as such: a real libvirtd's iteration count is
//! the Cyrus SASL default, 4096, which costs nothing to derive): the SCRAM key derivation the
//! daemon's iteration count asks for runs off the runtime's worker thread, so other tasks on
//! that runtime keep running while a client authenticates.
#![cfg(all(feature = "client", feature = "sasl"))]

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use libvirt_remote::client::{Client, ConnectOptions};
use libvirt_remote::conn::Config;
use libvirt_remote::conn::sasl::{CredentialCallback, Credentials};
use libvirt_remote::proto::procs::connect::{
    AuthListRet, AuthSaslInitRet, AuthSaslStartArgs, AuthSaslStepRet, auth_type,
};
use libvirt_remote::proto::types::SaslData;
use libvirt_remote::wire::xdr::{self, LvString};
use libvirt_remote_testkit::peer::{self, Peer};
use tokio::io::{AsyncReadExt, AsyncWriteExt, DuplexStream};

/// PBKDF2 rounds the scripted daemon asks for: seconds in a debug build.
const ITERATIONS: u32 = 100_000;

/// A daemon that demands SASL, offers SCRAM-SHA-256, answers the client's first message with
/// `ITERATIONS` and refuses whatever comes next.
async fn scram_daemon(io: DuplexStream) {
    let (mut r, mut w) = tokio::io::split(io);
    let mut peer = Peer::new();
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let n = match r.read(&mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(n) => n,
        };
        peer.feed(&buf[..n]);
        while let Some(f) = peer.recv().unwrap() {
            let h = &f.header;
            let reply = match h.procedure {
                66 => peer::reply_to(
                    h,
                    &AuthListRet {
                        types: vec![auth_type::SASL],
                    },
                ),
                67 => peer::reply_to(
                    h,
                    &AuthSaslInitRet {
                        mechlist: LvString::from("SCRAM-SHA-256"),
                    },
                ),
                68 => {
                    let args: AuthSaslStartArgs = xdr::from_bytes(f.payload.clone()).unwrap();
                    let first = String::from_utf8(args.data.0).unwrap();
                    let nonce = first.rsplit_once("r=").unwrap().1;
                    let server_first =
                        format!("r={nonce}srv,s=W22ZaJ0SNY7soEsUEjb6gQ==,i={ITERATIONS}");
                    peer::reply_to(
                        h,
                        &AuthSaslStepRet {
                            complete: 0,
                            nil: 0,
                            data: SaslData(server_first.into_bytes()),
                        },
                    )
                }
                _ => peer::reply_error_to(h, &peer::error(45, 7, "authentication failed")),
            };
            if w.write_all(&reply).await.is_err() {
                return;
            }
        }
    }
}

#[tokio::test(flavor = "current_thread")]
async fn scram_key_derivation_does_not_block_the_runtime() {
    let (client_io, daemon_io) = tokio::io::duplex(1 << 16);
    tokio::spawn(scram_daemon(daemon_io));
    // A task on the same (only) thread: how long it is kept from running.
    let worst = Arc::new(Mutex::new(Duration::ZERO));
    let w = Arc::clone(&worst);
    let ticker = tokio::spawn(async move {
        let mut last = Instant::now();
        loop {
            tokio::time::sleep(Duration::from_millis(2)).await;
            let now = Instant::now();
            let mut m = w.lock().unwrap();
            *m = (*m).max(now - last);
            last = now;
        }
    });
    let mut opts = ConnectOptions {
        config: Config {
            keepalive: None,
            ..Config::default()
        },
        ..ConnectOptions::default()
    };
    opts.handshake.sasl.credentials = Some(CredentialCallback::fixed(Credentials::new(
        "alice", "pencil",
    )));
    let t = Instant::now();
    let r = Client::handshake(client_io, opts).await;
    let took = t.elapsed();
    // Let the ticker see the end of any gap before it is read.
    tokio::time::sleep(Duration::from_millis(20)).await;
    ticker.abort();
    assert!(r.is_err(), "the scripted daemon refuses the final message");
    let worst = *worst.lock().unwrap();
    eprintln!("handshake {took:?}, the other task waited at most {worst:?}");
    assert!(
        took > Duration::from_millis(300),
        "the derivation took only {took:?}: raise ITERATIONS so the test means something"
    );
    assert!(
        worst < Duration::from_millis(150),
        "another task on the runtime was kept waiting {worst:?} while SCRAM derived its key \
         ({took:?} in all): the derivation ran on the worker"
    );
}
