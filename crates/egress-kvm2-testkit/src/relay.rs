//! A unix-socket relay between the provider and the private libvirtd that can cut every
//! connection through it, or answer the next call itself with an error.
//!
//! ```text
//!  provider ──unix──▶ relay.sock ──unix──▶ libvirtd's socket
//!                     cut(): both sides of every connection closed at once
//!                     fail_next_call(): the next remote-program CALL is not forwarded;
//!                                       the relay answers it with REPLY ERROR
//!                     lose_reply_of_call(n): the n-th CALL reaches the daemon; its reply
//!                                       is dropped and that connection cut (a cut mid-call)
//!                     after_call(n, f): f runs once the n-th CALL reached the daemon
//!                     hold_next_reply(): the next CALL reaches the daemon; its reply waits
//!                                       until release() (to drop a future mid-call)
//!                     by_procedure(): the CALLs seen so far, per (program, procedure)
//! ```
//!
//! **The injected error is scripted, not the daemon's**: libvirtd cannot be made to fail an
//! arbitrary call on demand. The reply is built with `libvirt_remote::peer` (our own framing),
//! echoes the call's header and carries `VIR_ERR_INTERNAL_ERROR` ("injected by the fault
//! harness"), which the provider classifies like any daemon error. Everything else is the
//! real daemon's bytes, relayed packet by packet.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use bytes::{Bytes, BytesMut};
use libvirt_remote::proto::REMOTE_PROGRAM;
use libvirt_remote::wire::frame::{self, MessageType};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{UnixListener, UnixStream};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

/// libvirt's `VIR_ERR_INTERNAL_ERROR` and `VIR_FROM_RPC`.
const INTERNAL_ERROR: i32 = 1;
const FROM_RPC: i32 = 7;

/// Runs once a call was written to the daemon.
type AfterCall = Box<dyn FnOnce() + Send>;

/// What happens to the reply of the next call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ReplyFate {
    Lose,
    Hold,
}

#[derive(Default)]
struct State {
    /// Remote-program calls seen (forwarded or answered by the relay).
    calls: AtomicU64,
    /// Calls of every program (remote, QEMU, …) seen, per (program, procedure).
    by_procedure: Mutex<BTreeMap<(u32, i32), u64>>,
    /// The call number (counted by `calls`) whose reply is lost, if any.
    lose_at: Mutex<Option<u64>>,
    /// Runs when the call with this number has been forwarded.
    on_call: Mutex<Option<(u64, AfterCall)>>,
    fail_next: AtomicBool,
    injected: AtomicU64,
    next_reply: Mutex<Option<ReplyFate>>,
    /// A held reply arrived.
    held: tokio::sync::Notify,
    release: tokio::sync::watch::Sender<bool>,
    conns: Mutex<Vec<JoinHandle<()>>>,
}

/// A running relay; stops (and cuts every connection) on drop.
pub struct LibvirtRelay {
    path: PathBuf,
    state: Arc<State>,
    acceptor: JoinHandle<()>,
}

impl LibvirtRelay {
    /// Listens on `dir/relay.sock`, relaying to `target`.
    pub fn start(dir: &Path, target: &Path) -> Self {
        let path = dir.join("relay.sock");
        let _ = std::fs::remove_file(&path);
        let listener = UnixListener::bind(&path).expect("bind the relay socket");
        let state = Arc::new(State::default());
        let st = state.clone();
        let target = target.to_path_buf();
        let acceptor = tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                let st2 = st.clone();
                let target = target.clone();
                let h = tokio::spawn(async move {
                    if let Ok(daemon) = UnixStream::connect(&target).await {
                        relay(client, daemon, st2).await;
                    }
                });
                st.conns.lock().unwrap().push(h);
            }
        });
        Self {
            path,
            state,
            acceptor,
        }
    }

    /// `qemu+unix:///session?socket=<relay>`.
    pub fn uri(&self) -> String {
        format!("qemu+unix:///session?socket={}", self.path.display())
    }

    /// Closes both sides of every connection through the relay now. New connections are
    /// accepted as before.
    pub fn cut(&self) {
        for h in self.state.conns.lock().unwrap().drain(..) {
            h.abort();
        }
    }

    /// The next remote-program call (on any connection) is answered by the relay with an
    /// error instead of reaching the daemon.
    pub fn fail_next_call(&self) {
        self.state.fail_next.store(true, Ordering::SeqCst);
    }

    /// The next remote-program call reaches the daemon; its reply is held back until
    /// [`release`](Self::release). [`reply_held`](Self::reply_held) resolves when it arrived.
    pub fn hold_next_reply(&self) {
        self.state.release.send_replace(false);
        *self.state.next_reply.lock().unwrap() = Some(ReplyFate::Hold);
    }

    /// Resolves once a held reply has arrived (the call ran on the daemon).
    pub async fn reply_held(&self) {
        self.state.held.notified().await;
    }

    /// Lets a held reply go.
    pub fn release(&self) {
        self.state.release.send_replace(true);
    }

    /// Disarms everything no call consumed; whether anything was still armed.
    pub fn disarm(&self) -> bool {
        let reply = self.state.next_reply.lock().unwrap().take().is_some()
            | self.state.lose_at.lock().unwrap().take().is_some()
            | self.state.on_call.lock().unwrap().take().is_some();
        self.release();
        self.state.fail_next.swap(false, Ordering::SeqCst) || reply
    }

    /// Remote-program calls seen so far.
    pub fn calls(&self) -> u64 {
        self.state.calls.load(Ordering::SeqCst)
    }

    /// The `n`-th remote-program call from now (1: the next) reaches the daemon; its reply
    /// is lost and that connection cut.
    pub fn lose_reply_of_call(&self, n: u64) {
        *self.state.lose_at.lock().unwrap() = Some(self.calls() + n);
    }

    /// Runs `f` right after the `n`-th remote-program call from now has been written to
    /// the daemon (e.g. to kill the daemon while it runs that call).
    pub fn after_call(&self, n: u64, f: impl FnOnce() + Send + 'static) {
        *self.state.on_call.lock().unwrap() = Some((self.calls() + n, Box::new(f)));
    }

    /// Calls seen so far (forwarded or answered by the relay), per (program, procedure), of
    /// every program.
    pub fn by_procedure(&self) -> BTreeMap<(u32, i32), u64> {
        self.state.by_procedure.lock().unwrap().clone()
    }

    /// Errors injected so far.
    pub fn injected(&self) -> u64 {
        self.state.injected.load(Ordering::SeqCst)
    }
}

impl Drop for LibvirtRelay {
    fn drop(&mut self) {
        self.acceptor.abort();
        self.cut();
        let _ = std::fs::remove_file(&self.path);
    }
}

/// Reads whole packets from `r` and hands them to `f` (raw bytes, length prefix included).
async fn packets(mut r: tokio::net::unix::OwnedReadHalf, mut f: impl FnMut(Bytes) -> bool) {
    let mut buf = BytesMut::with_capacity(64 << 10);
    loop {
        while buf.len() >= 4 {
            let len = u32::from_be_bytes(buf[..4].try_into().unwrap()) as usize;
            if len < 4 || buf.len() < len {
                break;
            }
            if !f(buf.split_to(len).freeze()) {
                return;
            }
        }
        match r.read_buf(&mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
    }
}

async fn relay(client: UnixStream, daemon: UnixStream, st: Arc<State>) {
    let (cr, mut cw) = client.into_split();
    let (dr, mut dw) = daemon.into_split();
    // Everything the client reads goes through one writer: daemon packets and injected
    // replies never interleave mid-packet.
    let (to_client, mut to_client_rx) = mpsc::unbounded_channel::<Bytes>();
    let (to_daemon, mut to_daemon_rx) = mpsc::unbounded_channel::<(Bytes, Option<AfterCall>)>();
    let writer_c = async move {
        while let Some(p) = to_client_rx.recv().await {
            if cw.write_all(&p).await.is_err() {
                break;
            }
        }
        let _ = cw.shutdown().await;
    };
    let writer_d = async move {
        while let Some((p, after)) = to_daemon_rx.recv().await {
            if dw.write_all(&p).await.is_err() {
                break;
            }
            if let Some(f) = after {
                f();
            }
        }
        let _ = dw.shutdown().await;
    };
    // The serial of this connection's call whose reply has a fate.
    let watched: Arc<Mutex<Option<(u32, ReplyFate)>>> = Arc::default();
    let down = {
        let to_client = to_client.clone();
        let watched = watched.clone();
        let st = st.clone();
        packets(dr, move |p| {
            let fate = {
                let mut w = watched.lock().unwrap();
                match (*w, header(&p)) {
                    (Some((serial, fate)), Some(h))
                        if h.serial == serial
                            && h.program == REMOTE_PROGRAM
                            && h.kind == MessageType::Reply =>
                    {
                        *w = None;
                        Some(fate)
                    }
                    _ => None,
                }
            };
            match fate {
                // Dropped, and the connection ends here.
                Some(ReplyFate::Lose) => false,
                Some(ReplyFate::Hold) => {
                    let to_client = to_client.clone();
                    let mut release = st.release.subscribe();
                    st.held.notify_one();
                    tokio::spawn(async move {
                        let _ = release.wait_for(|r| *r).await;
                        let _ = to_client.send(p);
                    });
                    true
                }
                None => to_client.send(p).is_ok(),
            }
        })
    };
    let up = packets(cr, move |p| {
        if let Some(h) = header(&p).filter(|h| h.kind == MessageType::Call) {
            *st.by_procedure
                .lock()
                .unwrap()
                .entry((h.program, h.procedure))
                .or_default() += 1;
        }
        if let Some(reply) = injected_reply(&p, &st) {
            return to_client.send(reply).is_ok();
        }
        if let Some(h) = header(&p).filter(is_remote_call) {
            let n = st.calls.fetch_add(1, Ordering::SeqCst) + 1;
            let mut fate = st.next_reply.lock().unwrap().take();
            let mut lose_at = st.lose_at.lock().unwrap();
            if *lose_at == Some(n) {
                *lose_at = None;
                fate = Some(ReplyFate::Lose);
            }
            if let Some(fate) = fate {
                *watched.lock().unwrap() = Some((h.serial, fate));
            }
            drop(lose_at);
            let mut on_call = st.on_call.lock().unwrap();
            if on_call.as_ref().is_some_and(|(at, _)| *at == n) {
                let (_, f) = on_call.take().expect("checked");
                return to_daemon.send((p, Some(f))).is_ok();
            }
        }
        to_daemon.send((p, None)).is_ok()
    });
    // The first direction to end ends the connection (both sockets are dropped).
    tokio::select! {
        () = up => {}
        () = down => {}
        () = writer_c => {}
        () = writer_d => {}
    }
}

fn header(packet: &Bytes) -> Option<frame::Header> {
    let head: &[u8; frame::HEADER_LEN] = packet.get(4..4 + frame::HEADER_LEN)?.try_into().ok()?;
    frame::Header::decode(head).ok()
}

fn is_remote_call(h: &frame::Header) -> bool {
    h.program == REMOTE_PROGRAM && h.kind == MessageType::Call
}

/// The error reply for `packet`, if the relay is armed and it is a remote-program call.
fn injected_reply(packet: &Bytes, st: &State) -> Option<Bytes> {
    let header = header(packet).filter(is_remote_call)?;
    if !st.fail_next.swap(false, Ordering::SeqCst) {
        return None;
    }
    st.calls.fetch_add(1, Ordering::SeqCst);
    st.injected.fetch_add(1, Ordering::SeqCst);
    let err = libvirt_remote_testkit::peer::error(
        INTERNAL_ERROR,
        FROM_RPC,
        "internal error: injected by the fault harness",
    );
    Some(libvirt_remote_testkit::peer::reply_error_to(&header, &err))
}
