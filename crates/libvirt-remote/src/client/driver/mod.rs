//! The driver: one task that moves bytes between the socket and the core, and fires timers.
//!
//! It holds the state lock only to hand bytes to the core and take packets out; every read
//! and write happens without it. When the core is closed (by `close()`, an error, EOF or a
//! keepalive timeout) the driver returns at its next poll and drops the transport — it never
//! waits for a pending write to complete first.
//!
//! Each round is four named steps, as in quinn's driver: [`read`](Driver::read) the socket
//! (busy-polling it while a lone call awaits its reply, for a short while before parking:
//! `BusyPoll`, `ConnectOptions::busy_poll`), [`pump`](Driver::pump) the core (bytes and time
//! in, packets and outputs out, under the lock), [`write`](Driver::write) (unless
//! [`batch`](Driver::batch) lets just-woken callers add their calls first), and arm the
//! [`timer`](Driver::timer).
//!
//! Who writes next is the core's rule ([`Writer`](crate::conn::Writer)): on a plain unix or
//! TCP socket a caller writes its own lone call when the driver holds nothing to write
//! ([`direct`]); the driver writes what a caller could not (the rest of a half-written packet
//! comes first in the core's queue), the descriptors, and everything while it holds packets.
//! It tells the core when all it took is written (at the start of the next round, under the
//! lock it takes anyway), and asks the core whether to let woken callers add their calls
//! before a write ([`Connection::batch_wait`](crate::conn::Connection::batch_wait)).

pub(crate) mod direct;
pub(crate) mod shared;
pub(crate) mod spin;

use std::collections::{HashMap, VecDeque};
use std::future::Future;
use std::io::IoSlice;
use std::os::fd::{AsFd, OwnedFd};
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use bytes::{Buf, Bytes, BytesMut};
use tokio::sync::watch;
use tokio::time::Sleep;
use tracing::Instrument;

use super::dial::Access;
use super::transport::Io;
use super::{Client, CloseOnDrop, ConnectOptions};
use crate::conn::handshake::HandshakeOutcome;
use crate::conn::reconnect::Reconnect;
use crate::conn::{Connection, Transmit};
use shared::{Inner, State, TRANSMIT_HIGH};
use spin::{SpinGate, SpinPolicy};

/// What the receive buffer grows by.
const READ_CHUNK: usize = 64 << 10;
/// Room below which the receive buffer grows before a read (a read may be this short).
const READ_MIN: usize = 16 << 10;
/// Buffers per vectored write (Linux `UIO_MAXIOV` is 1024; more buys nothing here).
const MAX_SLICES: usize = 64;
/// Rounds with progress before yielding to the runtime.
const BUDGET: usize = 32;
/// Reads per round over a transport that returns one record per read (TLS: 16 KiB each).
const RECORDS_PER_ROUND: usize = 64;

/// One entry of the write queue: packet bytes, or a descriptor to send after them.
enum Out {
    Bytes(Bytes),
    Fd(OwnedFd),
}

impl Out {
    fn bytes(&self) -> Option<&Bytes> {
        match self {
            Self::Bytes(b) => Some(b),
            Self::Fd(_) => None,
        }
    }
}

pub(crate) struct Driver<T> {
    io: T,
    inner: Arc<Inner>,
    /// The connection generation this driver moves bytes for ([`State::generation`]): once a
    /// reconnect installed the next one, this driver touches nothing and returns.
    generation: u64,
    rbuf: BytesMut,
    /// Descriptors received with the bytes in `rbuf`, for the core.
    rx_fds: Vec<OwnedFd>,
    out: VecDeque<Out>,
    out_bytes: usize,
    flushed: bool,
    sleep: Pin<Box<Sleep>>,
    /// The core said to let just-woken callers add their calls before this round's write.
    batch: bool,
    /// The driver took packets from the core and has not told it they are all written.
    holds: bool,
    busy: Option<BusyPoll>,
    /// Over TLS: the spin happens in the TCP stream under rustls, opened through this gate
    /// for the busy-poll budget.
    gate: Option<(Arc<SpinGate>, Duration)>,
    /// When bytes last moved (or a timer fired): the busy-poll budget counts from here.
    last_progress: Instant,
    /// This round's bytes came from a busy-poll read, or while the driver was spinning.
    read_by_spin: bool,
    /// The last round rescheduled the driver to spin (instead of parking): bytes the next
    /// round reads were caught by spinning, whichever read brings them (when the runtime
    /// polled its I/O driver between two rounds of the spin, the socket's registered read
    /// sees them before the busy-poll read does, and the policy counted a miss).
    spinning: bool,
    /// The transport hands out one record per read (TLS): keep reading while the packet at
    /// the front is incomplete, instead of one pump of the core per 16 KiB record.
    records: bool,
}

impl<T> Driver<T> {
    pub(crate) fn new(
        io: T,
        inner: Arc<Inner>,
        busy: Option<BusyPoll>,
        gate: Option<(Arc<SpinGate>, Duration)>,
        records: bool,
        generation: u64,
    ) -> Self {
        Self {
            io,
            inner,
            generation,
            rbuf: BytesMut::with_capacity(READ_CHUNK),
            rx_fds: Vec::new(),
            out: VecDeque::new(),
            out_bytes: 0,
            flushed: true,
            batch: false,
            holds: false,
            sleep: Box::pin(tokio::time::sleep_until(tokio::time::Instant::now())),
            busy,
            gate,
            last_progress: Instant::now(),
            read_by_spin: false,
            spinning: false,
            records,
        }
    }
}

/// Reads the socket directly, bypassing the reactor, while a reply is due.
///
/// Parking in epoll means the daemon's reply write has to wake us, which on a VM is an IPI
/// that the daemon pays for. A `read` that returns `EAGAIN` costs well under a microsecond.
/// So for `budget` after the last progress, with a lone call pending, the driver re-polls
/// itself instead of parking. The read goes through a duplicate of the socket's descriptor
/// (owned here, dropped with the driver); tokio's readiness for the original descriptor may
/// go stale, which only costs it one `EAGAIN`.
///
/// Whether spinning pays is measured, not assumed ([`SpinPolicy`](super::spin::SpinPolicy),
/// in the shared state): with the daemon competing for the same CPUs it can make calls
/// slower. Only a lone call is spun for.
pub(crate) struct BusyPoll {
    fd: Arc<OwnedFd>,
    budget: Duration,
    /// Zeroed once, on first use: replies are small, and a bigger packet simply takes
    /// several reads.
    scratch: Vec<u8>,
}

/// Bytes per busy-poll read.
const BUSY_READ: usize = 16 << 10;

impl BusyPoll {
    pub(crate) fn new(fd: Option<Arc<OwnedFd>>, budget: Duration) -> Option<Self> {
        let fd = fd?;
        (!budget.is_zero()).then(|| Self {
            fd,
            budget,
            scratch: Vec::new(),
        })
    }

    /// `Ok(None)`: nothing to read yet.
    fn read(&mut self, into: &mut BytesMut) -> std::io::Result<Option<usize>> {
        if self.scratch.is_empty() {
            self.scratch = vec![0; BUSY_READ];
        }
        match rustix::io::read(&*self.fd, &mut self.scratch[..]) {
            Ok(n) => {
                into.extend_from_slice(&self.scratch[..n]);
                Ok(Some(n))
            }
            Err(rustix::io::Errno::AGAIN | rustix::io::Errno::INTR) => Ok(None),
            Err(e) => Err(e.into()),
        }
    }
}

enum Step {
    Progress,
    Idle,
    Done,
}

/// The core is closed: the driver returns (dropping the transport).
struct Closed;

/// What the core wants from the socket this round.
struct Interest {
    /// No download window is full.
    read: bool,
    /// A reply is due and the spin policy says spin now (a lone call when spinning pays,
    /// calls in flight together always).
    spin: bool,
    /// Calls in flight together: a spin gives the CPU away between reads.
    yields: bool,
    /// A reply may bring descriptors: read with `recvmsg`.
    fds: bool,
}

/// What one read did.
enum Read {
    /// Bytes arrived.
    Bytes,
    /// Nothing yet, and a reply is due within the busy-poll budget: stay runnable.
    Spin,
    /// Nothing; tokio wakes us when the socket is readable.
    Nothing,
}

impl<T: Io> Driver<T> {
    /// One round of the quinn-style driver loop: read, pump the core, write, arm the timer.
    fn round(&mut self, cx: &mut Context<'_>) -> Step {
        let Ok(interest) = self.interest(cx) else {
            return Step::Done;
        };
        let mut progress = false;
        let mut spin = false;
        let yields = interest.yields;
        self.read_by_spin = false;
        let spinning = std::mem::take(&mut self.spinning);
        if interest.read {
            match self.read(cx, &interest) {
                Ok(Read::Bytes) => {
                    self.read_by_spin |= spinning;
                    progress = true;
                }
                Ok(Read::Spin) => spin = true,
                Ok(Read::Nothing) => {}
                Err(Closed) => return Step::Done,
            }
        }
        let Ok(deadline) = self.pump() else {
            return Step::Done;
        };
        if self.batch(cx, progress) {
            return Step::Idle;
        }
        match self.write(cx) {
            Ok(wrote) => progress |= wrote,
            Err(e) => return self.fail(&e),
        }
        progress |= self.timer(cx, deadline);
        if progress {
            if self.spins() {
                self.last_progress = Instant::now();
            }
            Step::Progress
        } else {
            if spin {
                // Stay runnable (behind every other ready task) instead of parking.
                self.spinning = true;
                if yields {
                    // Calls in flight together: let any other thread on this CPU (the
                    // daemon's, when it shares it) run before the next read.
                    std::thread::yield_now();
                }
                cx.waker().wake_by_ref();
            }
            Step::Idle
        }
    }

    /// The driver can busy-poll (the socket, or TLS's through its gate): only then does
    /// `last_progress` matter, and is the clock read for it.
    fn spins(&self) -> bool {
        self.busy.is_some() || self.gate.is_some()
    }

    /// Register for wake-ups and ask the core what it wants read.
    fn interest(&mut self, cx: &mut Context<'_>) -> Result<Interest, Closed> {
        let mut st = lock_gen(&self.inner, self.generation)?;
        // Registered before looking at the queue: a command pushed after this wakes us.
        st.driver = Some(cx.waker().clone());
        if st.conn.is_closed() {
            return Err(Closed);
        }
        if self.holds && self.out.is_empty() && self.flushed {
            // Everything we took is on the wire: callers may write theirs after it.
            st.conn.handle_written();
            self.holds = false;
        }
        if st.conn.take_caller_wrote() && self.spins() {
            // A caller's write is progress: the busy-poll budget counts from it.
            self.last_progress = Instant::now();
        }
        let pending = st.conn.pending_calls();
        Ok(Interest {
            read: st.conn.wants_read(),
            spin: st.spin.as_ref().is_some_and(|p| p.spin(pending)),
            yields: SpinPolicy::yields(pending),
            fds: st.conn.wants_fds() && self.io.passes_fds(),
        })
    }

    /// Read what the socket has into the receive buffer, busy-polling while a reply is due
    /// (with `recvmsg`, and without busy-polling, while a reply may bring descriptors).
    /// EOF and read errors go to the core, which is then closed.
    fn read(&mut self, cx: &mut Context<'_>, interest: &Interest) -> Result<Read, Closed> {
        // Grown only when little room is left: the reply just split off the buffer still
        // shares it, so a `reserve` of a whole chunk after every packet allocated (and
        // touched) a fresh 64 KiB buffer per call.
        let need = Connection::bytes_needed(&self.rbuf);
        if self.rbuf.capacity() - self.rbuf.len() < need.max(READ_MIN) {
            self.rbuf.reserve(need.max(READ_CHUNK));
        }
        let spin_now = interest.spin;
        if let Some((gate, budget)) = &self.gate {
            // Under rustls the spin cannot yield: a lone call's only.
            gate.set(spin_now && !interest.yields && self.last_progress.elapsed() < *budget);
        }
        let mut got = if interest.fds {
            self.io.poll_recv_fds(cx, &mut self.rbuf, &mut self.rx_fds)
        } else {
            self.io.poll_read(cx, &mut self.rbuf)
        };
        let mut spin = false;
        if let Some((gate, _)) = &self.gate {
            self.read_by_spin = gate.take_hit();
        }
        if got.is_pending() && spin_now && !interest.fds {
            match self.busy_poll() {
                Some(Poll::Pending) => spin = true,
                Some(ready) => {
                    self.read_by_spin = true;
                    got = ready;
                }
                None => {}
            }
        }
        if self.records && !interest.fds && matches!(got, Poll::Ready(Ok(n)) if n > 0) {
            got = self.read_records(cx);
        }
        match got {
            Poll::Ready(Ok(0)) => {
                let mut st = lock_gen(&self.inner, self.generation)?;
                st.conn.handle_eof();
                st.dispatch();
                Err(Closed)
            }
            Poll::Ready(Ok(_)) => Ok(Read::Bytes),
            Poll::Ready(Err(e)) => {
                self.fail(&e);
                Err(Closed)
            }
            Poll::Pending if spin => Ok(Read::Spin),
            Poll::Pending => Ok(Read::Nothing),
        }
    }

    /// After a read that brought bytes, over a transport that returns one record per read:
    /// read on while the packet at the front is incomplete (a download's 256 KiB packet is 16
    /// TLS records), at most [`RECORDS_PER_ROUND`] reads. Returns a non-zero count, or an
    /// error (EOF is left for the next round's read to see).
    fn read_records(&mut self, cx: &mut Context<'_>) -> Poll<std::io::Result<usize>> {
        let mut total = 0;
        for _ in 0..RECORDS_PER_ROUND {
            let need = Connection::bytes_needed(&self.rbuf);
            if need == 0 {
                break;
            }
            self.rbuf.reserve(need);
            match self.io.poll_read(cx, &mut self.rbuf) {
                Poll::Ready(Ok(0)) | Poll::Pending => break,
                Poll::Ready(Ok(n)) => total += n,
                Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
            }
        }
        Poll::Ready(Ok(total.max(1)))
    }

    /// One direct read of the socket while the busy-poll budget lasts: `None` when
    /// busy-polling is off or its budget is spent, `Some(Pending)` when nothing is there yet.
    fn busy_poll(&mut self) -> Option<Poll<std::io::Result<usize>>> {
        let busy = self.busy.as_mut()?;
        if self.last_progress.elapsed() >= busy.budget {
            return None;
        }
        Some(match busy.read(&mut self.rbuf) {
            Ok(Some(n)) => Poll::Ready(Ok(n)),
            Ok(None) => Poll::Pending,
            Err(e) => Poll::Ready(Err(e)),
        })
    }

    /// Under the lock: hand the received bytes and the time to the core, take what it wants
    /// sent (at most [`TRANSMIT_HIGH`] queued here), and route its outputs. Returns when the
    /// timer should next fire.
    fn pump(&mut self) -> Result<Option<Instant>, Closed> {
        let mut st = lock_gen(&self.inner, self.generation)?;
        let now = Instant::now();
        if !self.rx_fds.is_empty() {
            st.conn.handle_fds(self.rx_fds.drain(..));
        }
        if !self.rbuf.is_empty() {
            // An error is recorded in the core and dispatched below.
            let _ = st.conn.handle_input(&mut self.rbuf, now);
        }
        if st.conn.poll_timeout().is_some_and(|t| t <= now) {
            st.conn.handle_timeout(now);
        }
        // Taken before this round's replies are routed: the calls of callers woken earlier (the
        // core counts both for the batch rule). The rest of a packet a caller began comes first.
        while self.out_bytes < TRANSMIT_HIGH {
            let Some(t) = st.conn.poll_transmit() else {
                break;
            };
            queue(&mut self.out, &mut self.out_bytes, t);
            self.holds = true;
        }
        let completed = st.dispatch();
        let pending = st.conn.pending_calls();
        if let Some(policy) = &mut st.spin {
            policy.observe(now, completed, pending, self.read_by_spin);
        }
        if st.conn.is_closed() {
            return Err(Closed);
        }
        self.batch = st.conn.batch_wait(!self.out.is_empty(), self.out_bytes);
        st.read_blocked = !st.conn.wants_read();
        Ok(st.conn.poll_timeout())
    }

    /// Callers we just completed usually send their next call at once. Let them run before
    /// writing a small batch, so N concurrent calls leave in one write and the daemon reads
    /// them in one wake-up instead of N (the core's batch rule, asked in the pump). True when
    /// this round yields for that.
    fn batch(&mut self, cx: &mut Context<'_>, progress: bool) -> bool {
        if !std::mem::take(&mut self.batch) {
            return false;
        }
        if progress {
            self.last_progress = Instant::now();
        }
        cx.waker().wake_by_ref();
        true
    }

    /// Write what is queued here with vectored writes until the socket would block, then
    /// flush. A descriptor goes alone, after the bytes before it. True when bytes moved.
    fn write(&mut self, cx: &mut Context<'_>) -> std::io::Result<bool> {
        let mut wrote = false;
        while let Some(front) = self.out.front() {
            if let Out::Fd(fd) = front {
                match self.io.poll_send_fd(cx, fd.as_fd()) {
                    Poll::Ready(Ok(())) => {
                        wrote = true;
                        self.flushed = false;
                        self.out.pop_front();
                        continue;
                    }
                    Poll::Ready(Err(e)) => return Err(e),
                    Poll::Pending => break,
                }
            }
            // On the stack: this runs once per write, the hot path of every call.
            let mut slices = [IoSlice::new(&[]); MAX_SLICES];
            let mut n = 0;
            for (slot, b) in slices.iter_mut().zip(self.out.iter().map_while(Out::bytes)) {
                *slot = IoSlice::new(b);
                n += 1;
            }
            let r = self.io.poll_write_vectored(cx, &slices[..n]);
            match r {
                Poll::Ready(Ok(0)) => {
                    return Err(std::io::Error::new(
                        std::io::ErrorKind::WriteZero,
                        "transport accepted no bytes",
                    ));
                }
                Poll::Ready(Ok(n)) => {
                    wrote = true;
                    self.flushed = false;
                    self.consume(n);
                }
                Poll::Ready(Err(e)) => return Err(e),
                Poll::Pending => break,
            }
        }
        if self.out.is_empty() && !self.flushed {
            match self.io.poll_flush(cx) {
                Poll::Ready(Ok(())) => self.flushed = true,
                Poll::Ready(Err(e)) => return Err(e),
                Poll::Pending => {}
            }
        }
        // A flush that completes what we took is progress: the next round tells the core.
        Ok(wrote || (self.holds && self.out.is_empty() && self.flushed))
    }

    /// Drop `n` written bytes from the front of the queue.
    fn consume(&mut self, mut n: usize) {
        self.out_bytes -= n;
        while n > 0 {
            let Some(Out::Bytes(front)) = self.out.front_mut() else {
                unreachable!("wrote at most the bytes queued before the first descriptor")
            };
            if n >= front.len() {
                n -= front.len();
                self.out.pop_front();
            } else {
                front.advance(n);
                n = 0;
            }
        }
    }

    /// Arm the one timer at `deadline`; true when it has fired.
    ///
    /// A deadline later than the armed one leaves the timer alone: the keepalive deadline
    /// moves with every packet received, and re-arming tokio's timer on every reply cost
    /// ~400 instructions per call. The armed timer then fires early, the core finds nothing
    /// due (a spurious `handle_timeout` is harmless), and the round after arms the real
    /// deadline. An earlier deadline (a call's timeout) re-arms at once.
    fn timer(&mut self, cx: &mut Context<'_>, deadline: Option<Instant>) -> bool {
        let Some(d) = deadline else {
            return false;
        };
        let d = tokio::time::Instant::from_std(d);
        if d < self.sleep.deadline() || self.sleep.is_elapsed() {
            self.sleep.as_mut().reset(d);
        }
        self.sleep.as_mut().poll(cx).is_ready()
    }

    fn fail(&mut self, e: &std::io::Error) -> Step {
        if let Ok(mut st) = lock_gen(&self.inner, self.generation) {
            st.conn.handle_transport_error(e);
            st.dispatch();
        }
        Step::Done
    }
}

/// The state, if the driver's `generation` is still the connection's (a free function, so
/// that the guard borrows only the driver's `inner` field).
fn lock_gen(inner: &Inner, generation: u64) -> Result<std::sync::MutexGuard<'_, State>, Closed> {
    let st = inner.lock();
    if st.generation == generation {
        Ok(st)
    } else {
        Err(Closed)
    }
}

/// Append one packet to the write queue: its bytes, then its descriptors.
fn queue(out: &mut VecDeque<Out>, out_bytes: &mut usize, t: Transmit) {
    for b in [t.head, t.body] {
        if !b.is_empty() {
            *out_bytes += b.len();
            out.push_back(Out::Bytes(b));
        }
    }
    out.extend(t.fds.into_iter().map(Out::Fd));
}

impl<T> Drop for Driver<T> {
    fn drop(&mut self) {
        // The callers' duplicate goes with the transport: closed with it, the socket is.
        if let Ok(mut st) = lock_gen(&self.inner, self.generation) {
            st.direct = None;
            st.conn.set_caller_writes(false);
        }
    }
}

impl<T: Io> Future for Driver<T> {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        for _ in 0..BUDGET {
            match self.round(cx) {
                Step::Progress => {}
                Step::Idle => return Poll::Pending,
                // Returning drops the transport: closing never waits behind a stalled write.
                Step::Done => return Poll::Ready(()),
            }
        }
        cx.waker().wake_by_ref();
        Poll::Pending
    }
}

impl Client {
    /// Start the connection's core and its driver task on `io` (spawned on the current
    /// runtime), with what `access` reaches under the transport.
    pub(crate) fn start_with(io: impl Io, opts: &ConnectOptions, access: Access) -> Self {
        let (closed_tx, closed_rx) = watch::channel(None);
        let link = opts.reconnect.clone().map(Reconnect::new);
        let (link_tx, link_rx) = watch::channel(link.as_ref().map_or(
            crate::conn::reconnect::LinkState::Connected,
            Reconnect::state,
        ));
        let state = State {
            conn: Connection::new(opts.config.clone(), Instant::now()),
            calls: crate::conn::serials::SerialMap::default(),
            streams: crate::conn::serials::SerialMap::default(),
            subscribers: HashMap::new(),
            writable: Vec::new(),
            driver: None,
            read_blocked: false,
            close_notice: None,
            closed_tx,
            direct: None,
            spin: None,
            kill: None,
            generation: 0,
            link,
            link_tx,
            lost: None,
            reconnector: None,
            finished: false,
        };
        let inner = Arc::new(Inner {
            state: Mutex::new(state),
            killed: std::sync::atomic::AtomicBool::new(false),
            closed_rx,
            link_rx,
        });
        Self::spawn_driver(&inner, io, opts, access, None);
        Self {
            guard: Arc::new(CloseOnDrop(inner.clone(), true)),
            inner,
            outcome: Arc::new(HandshakeOutcome::default()),
            event_queue: opts.event_queue.get(),
        }
    }

    /// A handle on `inner`'s next generation (a reconnect), started on `io`: the dead
    /// connection's successor (its serials, its ended streams, its lost registrations) with
    /// a driver of its own. The handle does not close the connection when dropped.
    pub(crate) fn restart_with(
        inner: &Arc<Inner>,
        io: impl Io,
        opts: &ConnectOptions,
        access: Access,
    ) -> Result<(Self, u64), crate::client::ConnectError> {
        let generation = {
            let mut st = inner.lock();
            let Some(next) = st.conn.successor(Instant::now()) else {
                return Err(crate::client::ConnectError::Unsupported(
                    "reconnect: the connection is still alive".into(),
                ));
            };
            if st.link.as_ref().is_none_or(Reconnect::is_closed) {
                return Err(crate::client::ConnectError::Unsupported(
                    "reconnect: the connection was closed".into(),
                ));
            }
            st.conn = next;
            st.generation
        };
        let generation = Self::spawn_driver(inner, io, opts, access, Some(generation));
        Ok((
            Self {
                guard: Arc::new(CloseOnDrop(inner.clone(), false)),
                inner: inner.clone(),
                outcome: Arc::new(HandshakeOutcome::default()),
                event_queue: opts.event_queue.get(),
            },
            generation,
        ))
    }

    /// Set `inner`'s connection up for `io` (a fresh one, or after `previous`, the next
    /// generation) and spawn its driver. Returns the generation.
    fn spawn_driver(
        inner: &Arc<Inner>,
        io: impl Io,
        opts: &ConnectOptions,
        access: Access,
        previous: Option<u64>,
    ) -> u64 {
        let generation = {
            let mut st = inner.lock();
            st.conn.set_fd_passing(io.passes_fds());
            st.conn
                .set_caller_writes(access.fd.is_some() && opts.caller_write);
            st.direct = access.fd.clone().filter(|_| opts.caller_write);
            st.spin = (!opts.busy_poll.is_zero() && (access.fd.is_some() || access.gate.is_some()))
                .then(SpinPolicy::default);
            st.kill.clone_from(&opts.kill);
            st.read_blocked = false;
            st.close_notice = None;
            st.driver = None;
            st.generation = previous.map_or(0, |g| g + 1);
            inner
                .killed
                .store(false, std::sync::atomic::Ordering::Release);
            st.generation
        };
        let gate = access
            .gate
            .filter(|_| !opts.busy_poll.is_zero())
            .map(|g| (g, opts.busy_poll));
        tokio::spawn(
            Driver::new(
                io,
                inner.clone(),
                BusyPoll::new(access.fd, opts.busy_poll),
                gate,
                access.records,
                generation,
            )
            .instrument(tracing::debug_span!("libvirt.driver", generation)),
        );
        generation
    }
}

#[cfg(test)]
mod tests {
    //! Who the busy-poll policy credits with a reply. A reply that arrives while the driver
    //! spins counts as caught by spinning whichever read brings it in: the runtime may poll
    //! its I/O driver between two rounds of the spin, and then the socket's registered read
    //! sees the bytes before the busy-poll read does. Counted as misses, those replies made
    //! the policy stop spinning where spinning was what caught them (decisions.md, "Issue
    //! 17, 2026-12-07").

    use std::io::{Read as _, Write as _};
    use std::os::unix::net::UnixStream as StdUnix;
    use std::sync::Arc;
    use std::time::Duration;

    use bytes::BytesMut;

    use crate::client::dial::Access;
    use crate::client::transport::Plain;
    use crate::client::{Client, ConnectOptions};
    use crate::proto::procs::connect::ConnectGetLibVersion;
    use crate::proto::{self, Procedure};
    use crate::wire::frame::{self, Header, MessageStatus, MessageType};

    /// How long the peer waits before each reply: far longer than a driver round, far
    /// shorter than the busy-poll budget below.
    const REPLY_AFTER: Duration = Duration::from_micros(300);
    /// Fewer than the policy's spinning window, so its counts are all still there.
    const CALLS: usize = 24;

    /// Answers [`CALLS`] calls of the remote program with an empty OK reply each, after
    /// [`REPLY_AFTER`]; anything else (keepalive) is ignored.
    fn peer(mut s: StdUnix) {
        let mut buf = BytesMut::new();
        let mut chunk = [0u8; 4096];
        let mut answered = 0;
        while answered < CALLS {
            let f = match frame::decode(&mut buf) {
                Ok(Some(f)) => f,
                Ok(None) => match s.read(&mut chunk) {
                    Ok(n) if n > 0 => {
                        buf.extend_from_slice(&chunk[..n]);
                        continue;
                    }
                    _ => return,
                },
                Err(_) => return,
            };
            if f.header.program != proto::REMOTE_PROGRAM {
                continue;
            }
            std::thread::sleep(REPLY_AFTER);
            let reply = Header {
                kind: MessageType::Reply,
                status: MessageStatus::Ok,
                ..f.header
            };
            let head = frame::encode_head(&reply, 0).expect("an empty reply fits");
            if s.write_all(&head).is_err() {
                return;
            }
            answered += 1;
        }
    }

    /// [`CALLS`] sequential calls with a long busy-poll budget, the busy-poll read pointed at
    /// a socket nothing is ever written to: every reply comes in through the registered
    /// read, in a round after the driver spun. Returns (replies the policy counted as caught
    /// by spinning, replies it counted).
    async fn spin_credit() -> (usize, usize) {
        let (ours, theirs) = StdUnix::pair().unwrap();
        let (idle, _idle_peer) = StdUnix::pair().unwrap();
        idle.set_nonblocking(true).unwrap();
        let peer = std::thread::spawn(move || peer(theirs));
        ours.set_nonblocking(true).unwrap();
        let io = tokio::net::UnixStream::from_std(ours).unwrap();
        let opts = ConnectOptions {
            busy_poll: Duration::from_millis(50),
            // The driver writes every call: the descriptor below is not the transport's.
            caller_write: false,
            ..ConnectOptions::default()
        };
        let access = Access {
            fd: Some(Arc::new(idle.into())),
            ..Access::default()
        };
        let client = Client::start_with(Plain(io), &opts, access);
        for _ in 0..CALLS {
            // The raw call takes the peer's empty reply.
            client
                .call_raw(proto::REMOTE_PROGRAM, ConnectGetLibVersion::NUMBER, &[])
                .await
                .unwrap();
        }
        let counts = client
            .inner
            .lock()
            .spin
            .as_ref()
            .expect("busy-poll is on")
            .probe_counts();
        client.close();
        peer.join().unwrap();
        counts
    }

    fn assert_credited((hits, replies): (usize, usize), runtime: &str) {
        assert!(
            replies >= CALLS - 2,
            "{runtime}: the policy saw {replies} replies"
        );
        // All of them, but for a reply that a preemption let arrive before the spin began.
        assert!(
            hits * 4 >= replies * 3,
            "{runtime}: only {hits} of {replies} replies that arrived while the driver spun \
             were counted as caught by spinning"
        );
    }

    #[tokio::test(flavor = "current_thread")]
    async fn a_reply_read_after_a_spin_round_is_the_spins_current_thread() {
        assert_credited(spin_credit().await, "current-thread runtime");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 1)]
    async fn a_reply_read_after_a_spin_round_is_the_spins_one_worker() {
        assert_credited(spin_credit().await, "one worker");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_reply_read_after_a_spin_round_is_the_spins_two_workers() {
        assert_credited(spin_credit().await, "two workers");
    }
}
