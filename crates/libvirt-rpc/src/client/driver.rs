//! The driver: one task that moves bytes between the socket and the core, and fires timers.
//!
//! It holds the state lock only to hand bytes to the core and take packets out; every read
//! and write happens without it. When the core is closed (by `close()`, an error, EOF or a
//! keepalive timeout) the driver returns at its next poll and drops the transport — it never
//! waits for a pending write to complete first.
//!
//! While calls await replies it may busy-poll a unix or TCP socket for a short while before
//! parking (`BusyPoll`, `ConnectOptions::busy_poll`).

use std::collections::VecDeque;
use std::future::Future;
use std::io::IoSlice;
use std::os::fd::OwnedFd;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use bytes::{Buf, Bytes, BytesMut};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::time::Sleep;

use super::shared::Inner;
use crate::conn::Connection;

/// Bytes the driver takes from the core per round; the rest stays queued there, where upload
/// backpressure can see it.
const OUT_MAX: usize = 512 << 10;
/// Minimum read size.
const READ_CHUNK: usize = 64 << 10;
/// Buffers per vectored write (Linux `UIO_MAXIOV` is 1024; more buys nothing here).
const MAX_SLICES: usize = 64;
/// Queued bytes below which a write waits one scheduler turn for more calls to batch.
const BATCH_MAX: usize = 16 << 10;
/// Rounds with progress before yielding to the runtime.
const BUDGET: usize = 32;

pub(crate) struct Driver<T> {
    io: T,
    inner: Arc<Inner>,
    rbuf: BytesMut,
    out: VecDeque<Bytes>,
    out_bytes: usize,
    flushed: bool,
    sleep: Pin<Box<Sleep>>,
    /// The last round completed calls whose tasks may be about to send more.
    callers_woken: bool,
    busy: Option<BusyPoll>,
    /// When bytes last moved (or a timer fired): the busy-poll budget counts from here.
    last_progress: Instant,
}

impl<T> Driver<T> {
    pub(crate) fn new(io: T, inner: Arc<Inner>, busy: Option<BusyPoll>) -> Self {
        Self {
            io,
            inner,
            rbuf: BytesMut::with_capacity(READ_CHUNK),
            out: VecDeque::new(),
            out_bytes: 0,
            flushed: true,
            callers_woken: false,
            sleep: Box::pin(tokio::time::sleep_until(tokio::time::Instant::now())),
            busy,
            last_progress: Instant::now(),
        }
    }
}

/// Reads the socket directly, bypassing the reactor, while a reply is due.
///
/// Parking in epoll means the daemon's reply write has to wake us, which on a VM is an IPI
/// that the daemon pays for. A `read` that returns `EAGAIN` costs well under a microsecond.
/// So for `budget` after the last progress, with calls pending, the driver re-polls itself
/// instead of parking. The read goes through a duplicate of the socket's descriptor (owned
/// here, dropped with the driver); tokio's readiness for the original descriptor may go
/// stale, which only costs it one `EAGAIN`.
pub(crate) struct BusyPoll {
    fd: OwnedFd,
    budget: Duration,
    /// Zeroed once, on first use: replies are small, and a bigger packet simply takes
    /// several reads.
    scratch: Vec<u8>,
}

/// Bytes per busy-poll read.
const BUSY_READ: usize = 16 << 10;

impl BusyPoll {
    pub(crate) fn new(fd: Option<OwnedFd>, budget: Duration) -> Option<Self> {
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
        match rustix::io::read(&self.fd, &mut self.scratch[..]) {
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

impl<T: AsyncRead + AsyncWrite + Unpin> Driver<T> {
    fn round(&mut self, cx: &mut Context<'_>) -> Step {
        let mut progress = false;
        let mut spin = false;
        let (wants_read, awaiting_reply) = {
            let mut st = self.inner.lock();
            // Registered before looking at the queue: a command pushed after this wakes us.
            st.driver = Some(cx.waker().clone());
            if st.conn.is_closed() {
                return Step::Done;
            }
            (st.conn.wants_read(), st.conn.pending_calls() > 0)
        };

        if wants_read {
            let need = Connection::bytes_needed(&self.rbuf).max(READ_CHUNK);
            self.rbuf.reserve(need);
            let mut got = tokio_util::io::poll_read_buf(Pin::new(&mut self.io), cx, &mut self.rbuf);
            if got.is_pending() && awaiting_reply {
                if let Some(busy) = &mut self.busy {
                    if self.last_progress.elapsed() < busy.budget {
                        match busy.read(&mut self.rbuf) {
                            Ok(Some(n)) => got = Poll::Ready(Ok(n)),
                            Ok(None) => spin = true,
                            Err(e) => got = Poll::Ready(Err(e)),
                        }
                    }
                }
            }
            match got {
                Poll::Ready(Ok(0)) => {
                    let mut st = self.inner.lock();
                    st.conn.handle_eof();
                    st.dispatch();
                    return Step::Done;
                }
                Poll::Ready(Ok(_)) => progress = true,
                Poll::Ready(Err(e)) => {
                    let mut st = self.inner.lock();
                    st.conn.handle_transport_error(&e);
                    st.dispatch();
                    return Step::Done;
                }
                Poll::Pending => {}
            }
        }

        let deadline = {
            let mut st = self.inner.lock();
            let now = Instant::now();
            if !self.rbuf.is_empty() {
                // An error is recorded in the core and dispatched below.
                let _ = st.conn.handle_input(&mut self.rbuf, now);
            }
            if st.conn.poll_timeout().is_some_and(|t| t <= now) {
                st.conn.handle_timeout(now);
            }
            while self.out_bytes < OUT_MAX {
                let Some(t) = st.conn.poll_transmit() else {
                    break;
                };
                for b in [t.head, t.body] {
                    if !b.is_empty() {
                        self.out_bytes += b.len();
                        self.out.push_back(b);
                    }
                }
            }
            if st.dispatch() > 0 {
                self.callers_woken = true;
            }
            if st.conn.is_closed() {
                return Step::Done;
            }
            st.read_blocked = !st.conn.wants_read();
            st.conn.poll_timeout()
        };

        // Callers we just completed usually send their next call at once. Let them run
        // before writing a lone small packet, so N concurrent calls leave in one write and
        // the daemon reads them in one wake-up instead of N.
        if self.callers_woken && !self.out.is_empty() && self.out_bytes < BATCH_MAX {
            self.callers_woken = false;
            if progress {
                self.last_progress = Instant::now();
            }
            cx.waker().wake_by_ref();
            return Step::Idle;
        }

        while !self.out.is_empty() {
            // On the stack: this runs once per write, the hot path of every call.
            let mut slices = [IoSlice::new(&[]); MAX_SLICES];
            let mut n = 0;
            for (slot, b) in slices.iter_mut().zip(&self.out) {
                *slot = IoSlice::new(b);
                n += 1;
            }
            let r = if self.io.is_write_vectored() {
                Pin::new(&mut self.io).poll_write_vectored(cx, &slices[..n])
            } else {
                Pin::new(&mut self.io).poll_write(cx, &slices[0])
            };
            match r {
                Poll::Ready(Ok(0)) => {
                    let e = std::io::Error::new(
                        std::io::ErrorKind::WriteZero,
                        "transport accepted no bytes",
                    );
                    return self.fail(&e);
                }
                Poll::Ready(Ok(mut n)) => {
                    progress = true;
                    self.flushed = false;
                    self.out_bytes -= n;
                    while n > 0 {
                        let front = self.out.front_mut().expect("wrote at most what was queued");
                        if n >= front.len() {
                            n -= front.len();
                            self.out.pop_front();
                        } else {
                            front.advance(n);
                            n = 0;
                        }
                    }
                }
                Poll::Ready(Err(e)) => return self.fail(&e),
                Poll::Pending => break,
            }
        }
        if self.out.is_empty() && !self.flushed {
            match Pin::new(&mut self.io).poll_flush(cx) {
                Poll::Ready(Ok(())) => self.flushed = true,
                Poll::Ready(Err(e)) => return self.fail(&e),
                Poll::Pending => {}
            }
        }

        if let Some(d) = deadline {
            let d = tokio::time::Instant::from_std(d);
            if self.sleep.deadline() != d {
                self.sleep.as_mut().reset(d);
            }
            if self.sleep.as_mut().poll(cx).is_ready() {
                progress = true;
            }
        }
        if progress {
            self.last_progress = Instant::now();
            Step::Progress
        } else {
            if spin {
                // Stay runnable (behind every other ready task) instead of parking.
                cx.waker().wake_by_ref();
            }
            Step::Idle
        }
    }

    fn fail(&mut self, e: &std::io::Error) -> Step {
        let mut st = self.inner.lock();
        st.conn.handle_transport_error(e);
        st.dispatch();
        Step::Done
    }
}

impl<T: AsyncRead + AsyncWrite + Unpin> Future for Driver<T> {
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
