//! The driver: one task that moves bytes between the socket and the core, and fires timers.
//!
//! It holds the state lock only to hand bytes to the core and take packets out; every read
//! and write happens without it. When the core is closed (by `close()`, an error, EOF or a
//! keepalive timeout) the driver returns at its next poll and drops the transport — it never
//! waits for a pending write to complete first.

use std::collections::VecDeque;
use std::future::Future;
use std::io::IoSlice;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Instant;

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
}

impl<T> Driver<T> {
    pub(crate) fn new(io: T, inner: Arc<Inner>) -> Self {
        Self {
            io,
            inner,
            rbuf: BytesMut::with_capacity(READ_CHUNK),
            out: VecDeque::new(),
            out_bytes: 0,
            flushed: true,
            callers_woken: false,
            sleep: Box::pin(tokio::time::sleep_until(tokio::time::Instant::now())),
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
        let wants_read = {
            let mut st = self.inner.lock();
            // Registered before looking at the queue: a command pushed after this wakes us.
            st.driver = Some(cx.waker().clone());
            if st.conn.is_closed() {
                return Step::Done;
            }
            st.conn.wants_read()
        };

        if wants_read {
            let need = Connection::bytes_needed(&self.rbuf).max(READ_CHUNK);
            self.rbuf.reserve(need);
            match tokio_util::io::poll_read_buf(Pin::new(&mut self.io), cx, &mut self.rbuf) {
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
        if progress { Step::Progress } else { Step::Idle }
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
