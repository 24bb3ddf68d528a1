//! The tokio client against the scripted peer (over an in-memory duplex), for states a real
//! daemon cannot be made to produce: a peer that stops reading, a reply that never comes,
//! a flood the consumer cannot keep up with. Real-daemon tests live in `client_libvirtd.rs`.
#![cfg(feature = "client")]

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use bytes::Bytes;
use futures::StreamExt;
use libvirt_remote::client::{
    Client, ConnectOptions, DownloadOptions, TransferError, UploadOptions,
};
use libvirt_remote::conn::{CallError, Config, ConnectionError, StreamError, StreamItem};
use libvirt_remote::proto::procs::connect::{ConnectGetLibVersion, ConnectGetLibVersionRet};
use libvirt_remote::proto::types::NonnullStorageVol;
use libvirt_remote::wire::frame::{Frame, MessageStatus, MessageType};
use libvirt_remote_testkit::peer::{self, Peer};
use tokio::io::{AsyncReadExt, AsyncWriteExt, DuplexStream};
use tokio::sync::mpsc;

fn opts() -> ConnectOptions {
    ConnectOptions {
        config: Config {
            keepalive: None,
            ..Config::default()
        },
        ..Default::default()
    }
}

fn vol() -> NonnullStorageVol {
    NonnullStorageVol {
        pool: "p".into(),
        name: "v".into(),
        key: "/p/v".into(),
    }
}

/// The daemon side: frames from the client arrive on `rx`; write answers to `tx`.
struct Server {
    frames: mpsc::UnboundedReceiver<Frame>,
    write: tokio::io::WriteHalf<DuplexStream>,
    reader: tokio::task::JoinHandle<()>,
}

impl Drop for Server {
    fn drop(&mut self) {
        // Dropping the server closes its end of the pipe entirely.
        self.reader.abort();
    }
}

impl Server {
    fn start(cap: usize) -> (Client, Self) {
        let (a, b) = tokio::io::duplex(cap);
        let client = Client::start(a, &opts());
        let (mut r, write) = tokio::io::split(b);
        let (tx, frames) = mpsc::unbounded_channel();
        let reader = tokio::spawn(async move {
            let mut peer = Peer::new();
            let mut buf = vec![0u8; 1 << 20];
            loop {
                let n = match r.read(&mut buf).await {
                    Ok(0) | Err(_) => return,
                    Ok(n) => n,
                };
                peer.feed(&buf[..n]);
                while let Some(f) = peer.recv().unwrap() {
                    if tx.send(f).is_err() {
                        return;
                    }
                }
            }
        });
        (
            client,
            Self {
                frames,
                write,
                reader,
            },
        )
    }

    async fn next(&mut self) -> Frame {
        tokio::time::timeout(Duration::from_secs(5), self.frames.recv())
            .await
            .expect("frame in time")
            .expect("open")
    }

    async fn send(&mut self, b: Bytes) {
        self.write.write_all(&b).await.unwrap();
    }

    /// Answer the `get_lib_version` CALL `f` (late, after its caller gave up), then serve.
    async fn answer_then_serve(mut self, f: &Frame) {
        let late = peer::reply_to(&f.header, &ConnectGetLibVersionRet { lib_ver: 1 });
        self.send(late).await;
        self.serve_versions();
    }

    /// Answer `get_lib_version` calls forever (in a task).
    fn serve_versions(mut self) {
        tokio::spawn(async move {
            while let Some(f) = self.frames.recv().await {
                if f.header.procedure == 157 {
                    let r = peer::reply_to(
                        &f.header,
                        &ConnectGetLibVersionRet {
                            lib_ver: u64::from(f.header.serial),
                        },
                    );
                    if self.write.write_all(&r).await.is_err() {
                        return;
                    }
                }
            }
        });
    }
}

#[tokio::test]
async fn many_tasks_share_one_connection() {
    let (client, server) = Server::start(64 << 10);
    server.serve_versions();
    let mut tasks = Vec::new();
    for _ in 0..16 {
        let c = client.clone();
        tasks.push(tokio::spawn(async move {
            for _ in 0..200 {
                c.call::<ConnectGetLibVersion>(&()).await.unwrap();
            }
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
    assert_eq!(client.stats().late_replies, 0);
}

/// The task's result, which must come within 500 ms of a close.
async fn released<T>(task: tokio::task::JoinHandle<Result<T, CallError>>) -> Result<T, CallError> {
    tokio::time::timeout(Duration::from_millis(500), task)
        .await
        .expect("call released")
        .unwrap()
}
#[tokio::test]
async fn close_does_not_wait_behind_a_stalled_write() {
    // A peer that never reads: a 4 KiB pipe fills at once and the driver's write stalls.
    let (a, _b_kept_open_but_never_read) = tokio::io::duplex(4096);
    let client = Client::start(a, &opts());
    let upload_client = client.clone();
    let pending =
        tokio::spawn(async move { upload_client.call::<ConnectGetLibVersion>(&()).await });
    // Queue lots of bytes through calls with big arguments via raw calls.
    let big = vec![0u8; 1 << 20];
    let c2 = client.clone();
    let stuck = tokio::spawn(async move {
        c2.call_raw(libvirt_remote::proto::REMOTE_PROGRAM, 11, &big)
            .await
    });
    tokio::time::sleep(Duration::from_millis(50)).await;
    let t = Instant::now();
    client.close();
    let closed_in = t.elapsed();
    assert!(
        closed_in < Duration::from_millis(100),
        "close took {closed_in:?}"
    );
    let pending = released(pending).await.map(drop);
    let stuck = released(stuck).await.map(drop);
    for r in [pending, stuck] {
        assert!(
            matches!(
                r,
                Err(CallError::Connection(ConnectionError::LocallyClosed { .. }))
            ),
            "{r:?}"
        );
    }
    // Later calls fail the same way; close is idempotent.
    client.close();
    let r = client.call::<ConnectGetLibVersion>(&()).await;
    assert!(matches!(
        r,
        Err(CallError::Connection(ConnectionError::LocallyClosed { .. }))
    ));
}

#[tokio::test]
async fn dropped_call_is_forgotten_and_its_late_reply_discarded() {
    let (client, mut server) = Server::start(64 << 10);
    let c = client.clone();
    let t = tokio::spawn(async move { c.call::<ConnectGetLibVersion>(&()).await });
    let f = server.next().await;
    t.abort();
    let _ = t.await;
    server.answer_then_serve(&f).await;
    client.call::<ConnectGetLibVersion>(&()).await.unwrap();
    assert_eq!(client.stats().late_replies, 1);
}

#[tokio::test]
async fn call_timeout_leaves_the_connection_usable() {
    let (client, mut server) = Server::start(64 << 10);
    let r = client
        .call_timeout::<ConnectGetLibVersion>(&(), Duration::from_millis(50))
        .await;
    assert_eq!(r, Err(CallError::TimedOut));
    let f = server.next().await;
    server.answer_then_serve(&f).await;
    client.call::<ConnectGetLibVersion>(&()).await.unwrap();
}

#[tokio::test]
async fn source_error_aborts_and_returns_the_source_error() {
    let (client, mut server) = Server::start(1 << 20);
    let c = client.clone();
    let up = tokio::spawn(async move {
        let u = c.vol_upload(&vol(), UploadOptions::new()).await.unwrap();
        u.send_all_and_finish(testbed::data::FailAfter::new(3 << 20, "disk on fire"))
            .await
    });
    let open = server.next().await;
    server.send(peer::reply_to(&open.header, &())).await;
    let mut data = 0;
    loop {
        let f = server.next().await;
        match (f.header.kind, f.header.status) {
            (MessageType::Stream, MessageStatus::Continue) => data += f.payload.len(),
            (MessageType::Stream, MessageStatus::Error) => {
                assert!(f.payload.is_empty(), "client abort is empty");
                break;
            }
            other => panic!("unexpected {other:?}"),
        }
    }
    assert!(data > 0);
    server.send(peer::stream_ok_to(&open.header)).await;
    let r = up.await.unwrap();
    let Err(TransferError::Local(e)) = r else {
        panic!("{r:?}")
    };
    assert_eq!(e.to_string(), "disk on fire");
    server.serve_versions();
    client.call::<ConnectGetLibVersion>(&()).await.unwrap();
}

#[tokio::test]
async fn slow_download_consumer_keeps_memory_bounded() {
    let (client, mut server) = Server::start(256 << 10);
    let c = client.clone();
    let sent = Arc::new(AtomicUsize::new(0));
    let dl = tokio::spawn(async move {
        c.vol_download(&vol(), DownloadOptions::new())
            .await
            .unwrap()
    });
    let open = server.next().await;
    server.send(peer::reply_to(&open.header, &())).await;
    let mut d = dl.await.unwrap();
    let mut server = server;
    // The peer pushes 64 MiB as fast as the pipe allows.
    let h = open.header;
    let s2 = sent.clone();
    let pusher = tokio::spawn(async move {
        let chunk = peer::stream_data_to(&h, &vec![5u8; 262_120]);
        for _ in 0..256 {
            server.write.write_all(&chunk).await.unwrap();
            s2.fetch_add(262_120, Ordering::Relaxed);
        }
        server
            .write
            .write_all(&peer::stream_data_to(&h, &[]))
            .await
            .unwrap();
        server
    });
    // Nobody reads for a while: the peer must be held back by the window + pipe.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let pushed = sent.load(Ordering::Relaxed);
    assert!(
        pushed < 8 << 20,
        "peer pushed {pushed} bytes with nobody reading"
    );
    let mut got = 0usize;
    while got < 256 * 262_120 {
        match d.next().await.unwrap().unwrap() {
            StreamItem::Data(b) => got += b.len(),
            StreamItem::Hole(_) => panic!(),
        }
    }
    let mut server = pusher.await.unwrap();
    // The client finishes after EOF; confirm it.
    let fin = server.next().await;
    assert_eq!(fin.header.status, MessageStatus::Ok);
    server.send(peer::stream_ok_to(&h)).await;
    assert!(d.next().await.is_none());
}

#[tokio::test]
async fn server_error_mid_upload_is_returned_and_connection_survives() {
    let (client, mut server) = Server::start(1 << 20);
    let c = client.clone();
    let up = tokio::spawn(async move {
        let mut u = c
            .vol_upload(&vol(), UploadOptions::new().length(1000))
            .await
            .unwrap();
        loop {
            if let Err(e) = u.send(Bytes::from(vec![0u8; 262_120])).await {
                return e;
            }
        }
    });
    let open = server.next().await;
    server.send(peer::reply_to(&open.header, &())).await;
    let _first = server.next().await;
    server
        .send(peer::stream_error_to(
            &open.header,
            &peer::error(38, 38, "cannot write to stream: No space left on device"),
        ))
        .await;
    let e = tokio::time::timeout(Duration::from_secs(5), up)
        .await
        .expect("upload ends")
        .unwrap();
    let StreamError::Remote(r) = e else {
        panic!("{e:?}")
    };
    assert_eq!(
        r.message(),
        "cannot write to stream: No space left on device"
    );
    // Drain what the client had already written, then prove the connection works.
    tokio::spawn(async move {
        let mut s = server;
        while let Some(f) = s.frames.recv().await {
            if f.header.procedure == 157 {
                let _ = s
                    .write
                    .write_all(&peer::reply_to(
                        &f.header,
                        &ConnectGetLibVersionRet { lib_ver: 7 },
                    ))
                    .await;
            }
        }
    });
    client.call::<ConnectGetLibVersion>(&()).await.unwrap();
}

#[tokio::test]
async fn peer_death_fails_everything_at_once() {
    let (client, server) = Server::start(64 << 10);
    let c = client.clone();
    let call = tokio::spawn(async move { c.call::<ConnectGetLibVersion>(&()).await });
    tokio::time::sleep(Duration::from_millis(20)).await;
    drop(server);
    let r = tokio::time::timeout(Duration::from_secs(1), call)
        .await
        .unwrap()
        .unwrap();
    assert!(matches!(r, Err(CallError::Connection(_))), "{r:?}");
    let e = tokio::time::timeout(Duration::from_secs(1), client.closed())
        .await
        .unwrap();
    assert!(
        matches!(
            e,
            ConnectionError::PeerClosed | ConnectionError::Transport { .. }
        ),
        "{e:?}"
    );
}

/// A download whose data, EOF and finish confirmation all come before the REPLY to its
/// opening call. A daemon registers the stream before it replies (reference §3.1), so this
/// can happen, but no real daemon can be made to do it on demand.
async fn download_completes_before_its_open_reply(data: &'static [u8]) {
    let (client, mut server) = Server::start(1 << 20);
    let c = client.clone();
    let dl = tokio::spawn(async move { c.vol_download(&vol(), DownloadOptions::new()).await });
    let open = server.next().await;
    if !data.is_empty() {
        server.send(peer::stream_data_to(&open.header, data)).await;
    }
    server.send(peer::stream_data_to(&open.header, &[])).await;
    let fin = server.next().await;
    assert_eq!(
        (fin.header.kind, fin.header.status),
        (MessageType::Stream, MessageStatus::Ok),
        "finish sent at EOF"
    );
    server.send(peer::stream_ok_to(&open.header)).await;
    server.send(peer::reply_to(&open.header, &())).await;
    let mut d = tokio::time::timeout(Duration::from_secs(5), dl)
        .await
        .expect("the download opens in time")
        .unwrap()
        .expect("the download opens");
    let mut got = Vec::new();
    while let Some(item) = d.next().await {
        match item.expect("no error") {
            StreamItem::Data(b) => got.extend_from_slice(&b),
            StreamItem::Hole(_) => panic!("hole on a non-sparse stream"),
        }
    }
    assert_eq!(got, data);
    server.serve_versions();
    client.call::<ConnectGetLibVersion>(&()).await.unwrap();
}

#[tokio::test]
async fn a_download_complete_before_its_open_reply_yields_its_data() {
    download_completes_before_its_open_reply(b"0123456789").await;
}

#[tokio::test]
async fn an_empty_download_complete_before_its_open_reply_opens() {
    download_completes_before_its_open_reply(b"").await;
}

// ---- duplex streams (console) ----------------------------------------------------------
// Scripted: a console whose daemon fails mid-stream, a connection lost under a console
// and split halves on two tasks are states a test cannot make a real daemon produce on cue.

fn dom() -> libvirt_remote::proto::types::NonnullDomain {
    libvirt_remote::proto::types::NonnullDomain {
        name: "g".into(),
        uuid: libvirt_remote::proto::types::Uuid([1; 16]),
        id: 1,
    }
}

/// Open a console on `client`; the scripted daemon accepts it. Returns it and its CALL.
async fn open_console(
    client: &Client,
    server: &mut Server,
) -> (
    libvirt_remote::client::Duplex,
    libvirt_remote::wire::frame::Header,
) {
    let c = client.clone();
    let opening = tokio::spawn(async move { c.domain_open_console(&dom(), None, 0).await });
    let open = server.next().await;
    assert_eq!(open.header.procedure, 201);
    server.send(peer::reply_to(&open.header, &())).await;
    (opening.await.unwrap().unwrap(), open.header)
}

async fn timed<T>(f: impl Future<Output = T>) -> T {
    tokio::time::timeout(Duration::from_secs(5), f)
        .await
        .expect("the console stream ends, never hangs")
}

#[tokio::test]
async fn duplex_halves_on_two_tasks_then_a_server_error_ends_both() {
    let (client, mut server) = Server::start(64 << 10);
    let (console, h) = open_console(&client, &mut server).await;
    let (mut rd, mut wr) = tokio::io::split(console);
    // Writer on its own task, reader on this one.
    let writer = tokio::spawn(async move {
        wr.write_all(b"ls\r").await.unwrap();
        // Keep writing until the stream's end reaches the writer.
        loop {
            if let Err(e) = wr.write_all(b"x").await {
                return e;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    });
    let keys = server.next().await;
    assert_eq!(
        (keys.header.kind, keys.header.status),
        (MessageType::Stream, MessageStatus::Continue)
    );
    assert_eq!(&keys.payload[..], b"ls\r");
    server.send(peer::stream_data_to(&h, b"file1\r\n")).await;
    let mut buf = [0u8; 64];
    let n = timed(rd.read(&mut buf)).await.unwrap();
    assert_eq!(&buf[..n], b"file1\r\n");
    server
        .send(peer::stream_error_to(&h, &peer::error(1, 10, "pty closed")))
        .await;
    let e = timed(rd.read(&mut buf)).await.unwrap_err();
    let se = libvirt_remote::client::stream_error(&e);
    assert!(matches!(se, Some(StreamError::Remote(_))), "{e:?}");
    let e = timed(writer).await.unwrap();
    assert!(
        libvirt_remote::client::stream_error(&e).is_some(),
        "the writer half gets a typed error too: {e:?}"
    );
    server.serve_versions();
    client.call::<ConnectGetLibVersion>(&()).await.unwrap();
}

#[tokio::test]
async fn duplex_lost_connection_and_dropped_handle_end_it_typed() {
    // Dropped mid-stream: an abort goes out, the connection stays usable.
    let (client, mut server) = Server::start(64 << 10);
    let (console, h) = open_console(&client, &mut server).await;
    drop(console);
    let abort = server.next().await;
    assert_eq!(
        (abort.header.kind, abort.header.status, abort.payload.len()),
        (MessageType::Stream, MessageStatus::Error, 0)
    );
    server.send(peer::stream_ok_to(&h)).await;
    server.send(peer::stream_data_to(&h, b"straggler")).await;
    let (mut console, h) = open_console(&client, &mut server).await;
    // Our finish (shutdown) ends it with the daemon's confirmation.
    let done = tokio::spawn(async move { console.shutdown().await });
    let fin = server.next().await;
    assert_eq!(
        (fin.header.kind, fin.header.status),
        (MessageType::Stream, MessageStatus::Ok)
    );
    server.send(peer::stream_ok_to(&h)).await;
    timed(done).await.unwrap().unwrap();
    // The connection is lost under an open console: reads and writes end typed.
    let (mut console, _) = open_console(&client, &mut server).await;
    drop(server);
    let mut buf = [0u8; 16];
    let e = timed(console.read(&mut buf)).await.unwrap_err();
    let se = libvirt_remote::client::stream_error(&e);
    assert!(matches!(se, Some(StreamError::Connection(_))), "{e:?}");
    let e = timed(console.write_all(b"x")).await.unwrap_err();
    assert!(libvirt_remote::client::stream_error(&e).is_some(), "{e:?}");
}
