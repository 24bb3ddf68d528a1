//! [`Duplex`]: a stream both sides send on (a domain's console or channel), as
//! `AsyncRead + AsyncWrite`.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use bytes::Bytes;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

use super::handle::{Handle, handle_methods};
use super::{copy_into, io_error};
use crate::conn::{StreamError, StreamItem, StreamMisuse};

/// A stream both sides send on: a domain's console or channel
/// ([`Client::domain_open_console`](crate::Client::domain_open_console),
/// [`Client::domain_open_channel`](crate::Client::domain_open_channel)). Reads yield what the
/// daemon sends (the guest's output), writes queue bytes for it (keystrokes); both directions have
/// their own backpressure (the stream window for reads, the connection's send queue for writes).
/// `tokio::io::split` gives a reader and a writer half for two tasks.
///
/// Either side ends it. The daemon's end of file (the guest closed the device) is read as end of
/// file; [`finish`](Self::finish) or `shutdown` ends it from our side (libvirt has no half-close:
/// output still in flight is dropped), [`abort`](Self::abort) aborts. A daemon error or the
/// connection's death is returned by the next read or write, as an [`io::Error`] carrying the
/// [`StreamError`] (see [`stream_error`](super::stream_error)). Dropping it aborts the stream on
/// the wire and leaves the connection usable.
pub struct Duplex {
    pub(super) h: Handle,
    /// The rest of the data item being read.
    pub(super) data: Bytes,
    /// Our finish was sent (`shutdown`).
    pub(super) finishing: bool,
}

impl std::fmt::Debug for Duplex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.h.debug(f, "Duplex").finish_non_exhaustive()
    }
}

handle_methods!(Duplex { finish, abort });

impl AsyncRead for Duplex {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let Self { h, data, .. } = self.get_mut();
        while data.is_empty() {
            match ready!(h.poll_item(cx)) {
                Some(Ok(StreamItem::Data(d))) => *data = d,
                // Never sent on a console (not sparse: the core refuses it).
                Some(Ok(StreamItem::Hole(_))) => {}
                Some(Err(e)) => return Poll::Ready(Err(io_error(e))),
                None => return Poll::Ready(Ok(())),
            }
        }
        copy_into(data, buf);
        Poll::Ready(Ok(()))
    }
}

impl AsyncWrite for Duplex {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        ready!(self.h.poll_writable(cx));
        if buf.is_empty() {
            return Poll::Ready(Ok(0));
        }
        self.h
            .command(|mut s| s.send(Bytes::copy_from_slice(buf)))
            .map_err(io_error)?;
        Poll::Ready(Ok(buf.len()))
    }

    /// Bytes are queued on the connection as they are written; nothing to flush here.
    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    /// Finish from our side and wait for the daemon's verdict (unread output is dropped).
    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        if self.h.ended {
            return Poll::Ready(Ok(()));
        }
        if !self.finishing {
            self.finishing = true;
            match self.h.command(|mut s| s.finish()) {
                // The daemon finished first: its end is the verdict.
                Ok(()) | Err(StreamError::Misuse(StreamMisuse::AfterFinish)) => {}
                Err(e) => {
                    self.h.ended = true;
                    let mut st = self.h.inner.lock();
                    let _ = st.conn.stream(self.h.id).take_end();
                    st.streams.remove(&self.h.id);
                    return Poll::Ready(Err(io_error(e)));
                }
            }
        }
        self.h.poll_end(cx).map_err(io_error)
    }
}
