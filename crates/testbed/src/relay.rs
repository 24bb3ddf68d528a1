//! A loopback TCP relay that can freeze, to play a host that vanished mid-transfer.
//!
//! ```text
//!  client ──tcp──▶ 127.0.0.1:relay ──tcp──▶ target        freeze(): stop reading and writing
//!                  (two threads per connection)           in both directions, sockets open
//! ```
//!
//! While frozen the relay's kernel still ACKs what fits in its receive buffer and then
//! advertises a zero window, exactly like a hung host: the client's send buffer fills and its
//! writes block, and nothing it sends gets an answer. Small `SO_RCVBUF`/`SO_SNDBUF`
//! ([`RelayOptions`]) make that happen after kilobytes instead of megabytes.
//!
//! Threads, not async: the relay must keep its behaviour whatever the test's runtime does.

use std::io::{self, Read, Write};
use std::net::{Ipv4Addr, Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::Duration;

use socket2::{Domain, SockRef, Socket, Type};

/// How often blocked threads look at the freeze/kill flags.
const TICK: Duration = Duration::from_millis(10);

/// Socket buffer sizes for the relay's sockets (kernel defaults when `None`).
#[derive(Debug, Clone, Copy, Default)]
pub struct RelayOptions {
    /// `SO_RCVBUF` on both sockets of each connection (set on the listener before accept, so
    /// the advertised window is small from the first segment).
    pub rcvbuf: Option<usize>,
    /// `SO_SNDBUF` on both sockets of each connection.
    pub sndbuf: Option<usize>,
}

impl RelayOptions {
    /// Small buffers (16 KiB each way), so a frozen relay blocks the client quickly.
    pub fn small() -> Self {
        Self {
            rcvbuf: Some(16 << 10),
            sndbuf: Some(16 << 10),
        }
    }
}

#[derive(Default)]
struct State {
    frozen: Mutex<bool>,
    thawed: Condvar,
    killed: AtomicBool,
    up: AtomicU64,
    down: AtomicU64,
    accepted: AtomicU64,
    conns: Mutex<Vec<(TcpStream, TcpStream)>>,
    threads: Mutex<Vec<JoinHandle<()>>>,
}

impl State {
    /// Blocks while frozen; false once killed.
    fn wait_thawed(&self) -> bool {
        let mut frozen = self.frozen.lock().unwrap_or_else(PoisonError::into_inner);
        while *frozen && !self.killed.load(Ordering::Acquire) {
            frozen = self
                .thawed
                .wait_timeout(frozen, TICK)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
        !self.killed.load(Ordering::Acquire)
    }
}

/// A running relay; [`kill`](Relay::kill)ed on drop.
pub struct Relay {
    addr: SocketAddr,
    state: Arc<State>,
    acceptor: Option<JoinHandle<()>>,
}

impl std::fmt::Debug for Relay {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Relay")
            .field("addr", &self.addr)
            .finish_non_exhaustive()
    }
}

impl Relay {
    /// Listens on a free 127.0.0.1 port and relays every connection to `target`.
    pub fn start(target: SocketAddr, opts: RelayOptions) -> io::Result<Self> {
        let listener = Socket::new(Domain::IPV4, Type::STREAM, None)?;
        listener.set_reuse_address(true)?;
        buffers(&listener, opts)?;
        listener.bind(&SocketAddr::from((Ipv4Addr::LOCALHOST, 0)).into())?;
        listener.listen(16)?;
        let listener: TcpListener = listener.into();
        listener.set_nonblocking(true)?;
        let addr = listener.local_addr()?;
        let state = Arc::new(State::default());
        let st = Arc::clone(&state);
        let acceptor = std::thread::Builder::new()
            .name("relay-accept".into())
            .spawn(move || accept_loop(&listener, target, opts, &st))?;
        Ok(Self {
            addr,
            state,
            acceptor: Some(acceptor),
        })
    }

    /// Where clients connect.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Stops moving bytes in both directions; sockets stay open and unread.
    pub fn freeze(&self) {
        *self
            .state
            .frozen
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = true;
    }

    /// Resumes moving bytes.
    pub fn thaw(&self) {
        *self
            .state
            .frozen
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = false;
        self.state.thawed.notify_all();
    }

    /// Waits until at least `bytes` went client→target (an upload is flowing), then freezes.
    ///
    /// # Panics
    /// If that does not happen within `limit` ("upload never started").
    pub async fn freeze_once_flowing(&self, bytes: u64, limit: Duration) {
        let t = std::time::Instant::now();
        while self.relayed().0 < bytes {
            assert!(t.elapsed() < limit, "upload never started");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        self.freeze();
    }

    /// Bytes relayed client→target and target→client so far.
    pub fn relayed(&self) -> (u64, u64) {
        (
            self.state.up.load(Ordering::Relaxed),
            self.state.down.load(Ordering::Relaxed),
        )
    }

    /// Client sockets (on this machine) whose connection to the relay is still
    /// `ESTABLISHED`, from `/proc/net/tcp{,6}`: 0 once a client shut its socket down.
    pub fn established_clients(&self) -> usize {
        established_to(self.addr.port())
    }

    /// Connections accepted so far.
    pub fn accepted(&self) -> u64 {
        self.state.accepted.load(Ordering::Relaxed)
    }

    /// Resets every connection (RST, via `SO_LINGER` 0) and stops listening. Idempotent.
    pub fn kill(&mut self) {
        self.state.killed.store(true, Ordering::Release);
        self.state.thawed.notify_all();
        let conns = std::mem::take(
            &mut *self
                .state
                .conns
                .lock()
                .unwrap_or_else(PoisonError::into_inner),
        );
        for (a, b) in &conns {
            let _ = SockRef::from(a).set_linger(Some(Duration::ZERO));
            let _ = SockRef::from(b).set_linger(Some(Duration::ZERO));
        }
        drop(conns);
        if let Some(t) = self.acceptor.take() {
            let _ = t.join();
        }
        let threads = std::mem::take(
            &mut *self
                .state
                .threads
                .lock()
                .unwrap_or_else(PoisonError::into_inner),
        );
        for t in threads {
            let _ = t.join();
        }
    }
}

impl Drop for Relay {
    fn drop(&mut self) {
        self.kill();
    }
}

fn buffers(s: &Socket, opts: RelayOptions) -> io::Result<()> {
    if let Some(n) = opts.rcvbuf {
        s.set_recv_buffer_size(n)?;
    }
    if let Some(n) = opts.sndbuf {
        s.set_send_buffer_size(n)?;
    }
    Ok(())
}

fn accept_loop(listener: &TcpListener, target: SocketAddr, opts: RelayOptions, st: &Arc<State>) {
    while !st.killed.load(Ordering::Acquire) {
        let client = match listener.accept() {
            Ok((c, _)) => c,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                std::thread::sleep(TICK);
                continue;
            }
            Err(_) => return,
        };
        st.accepted.fetch_add(1, Ordering::Relaxed);
        if let Err(e) = relay_one(client, target, opts, st) {
            eprintln!("relay: connection to {target} failed: {e}");
        }
    }
}

fn relay_one(
    client: TcpStream,
    target: SocketAddr,
    opts: RelayOptions,
    st: &Arc<State>,
) -> io::Result<()> {
    client.set_nonblocking(false)?;
    buffers(&Socket::from(client.try_clone()?), opts)?;
    let upstream = Socket::new(Domain::IPV4, Type::STREAM, None)?;
    buffers(&upstream, opts)?;
    upstream.connect(&target.into())?;
    let upstream: TcpStream = upstream.into();
    for s in [&client, &upstream] {
        s.set_nodelay(true)?;
        s.set_read_timeout(Some(TICK))?;
        s.set_write_timeout(Some(TICK))?;
    }
    st.conns
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .push((client.try_clone()?, upstream.try_clone()?));
    let mut threads = st.threads.lock().unwrap_or_else(PoisonError::into_inner);
    for (src, dst, up) in [
        (client.try_clone()?, upstream.try_clone()?, true),
        (upstream, client, false),
    ] {
        let st = Arc::clone(st);
        threads.push(
            std::thread::Builder::new()
                .name("relay-copy".into())
                .spawn(move || copy(&src, &dst, &st, up))?,
        );
    }
    Ok(())
}

fn copy(mut src: &TcpStream, mut dst: &TcpStream, st: &State, up: bool) {
    let counter = if up { &st.up } else { &st.down };
    let mut buf = vec![0u8; 16 << 10];
    while st.wait_thawed() {
        let n = match src.read(&mut buf) {
            Ok(0) => {
                let _ = dst.shutdown(Shutdown::Write);
                return;
            }
            Ok(n) => n,
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                ) =>
            {
                continue;
            }
            Err(_) => return,
        };
        let mut data = &buf[..n];
        while !data.is_empty() {
            if !st.wait_thawed() {
                return;
            }
            match dst.write(data) {
                Ok(m) => {
                    data = &data[m..];
                    counter.fetch_add(m as u64, Ordering::Relaxed);
                }
                Err(e)
                    if matches!(
                        e.kind(),
                        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                    ) => {}
                Err(_) => return,
            }
        }
    }
}

/// Sockets on this machine with an `ESTABLISHED` TCP connection to remote port `port` (from
/// `/proc/net/tcp{,6}`): the client side of a hop; 0 once every client shut its socket down.
pub fn established_to(port: u16) -> usize {
    let table = std::fs::read_to_string("/proc/net/tcp").unwrap_or_default()
        + &std::fs::read_to_string("/proc/net/tcp6").unwrap_or_default();
    table
        .lines()
        .skip(1)
        .filter(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            f.len() > 3
                && f[3] == "01"
                && f[2]
                    .rsplit(':')
                    .next()
                    .and_then(|p| u16::from_str_radix(p, 16).ok())
                    == Some(port)
        })
        .count()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn echo_server() -> SocketAddr {
        let l = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
        let addr = l.local_addr().unwrap();
        std::thread::spawn(move || {
            for c in l.incoming() {
                let Ok(c) = c else { return };
                std::thread::spawn(move || {
                    let mut r = c.try_clone().unwrap();
                    let mut w = c;
                    let _ = io::copy(&mut r, &mut w);
                });
            }
        });
        addr
    }

    #[test]
    fn relays_freezes_thaws_and_resets() {
        let mut relay = Relay::start(echo_server(), RelayOptions::small()).unwrap();
        let mut c = TcpStream::connect(relay.addr()).unwrap();
        c.set_read_timeout(Some(Duration::from_millis(300)))
            .unwrap();
        let mut buf = [0u8; 5];
        c.write_all(b"hello").unwrap();
        c.read_exact(&mut buf).unwrap();
        assert_eq!(&buf, b"hello");

        relay.freeze();
        std::thread::sleep(TICK * 3);
        c.write_all(b"again").unwrap();
        let e = c.read(&mut buf).unwrap_err();
        assert!(
            matches!(
                e.kind(),
                io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
            ),
            "{e}"
        );

        relay.thaw();
        c.read_exact(&mut buf).unwrap();
        assert_eq!(&buf, b"again");
        assert_eq!(relay.accepted(), 1);
        // The counter moves just after the write that delivered the bytes.
        for _ in 0..100 {
            if relay.relayed() == (10, 10) {
                break;
            }
            std::thread::sleep(TICK);
        }
        assert_eq!(relay.relayed(), (10, 10));

        relay.kill();
        let r = c.read(&mut buf);
        assert!(
            matches!(&r, Err(e) if e.kind() == io::ErrorKind::ConnectionReset),
            "expected a reset, got {r:?}"
        );
    }
}
