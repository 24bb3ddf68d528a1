//! What the driver reads and writes through: bytes, and on a unix socket file descriptors.
//!
//! [`Io`] is the driver's view of a transport. [`Plain`] wraps any `AsyncRead + AsyncWrite`
//! (TCP, TLS, an SSH channel, a test pipe) and carries no descriptors. [`UnixFds`] is a unix
//! socket that also passes descriptors as `SCM_RIGHTS` ancillary data, the way libvirt does:
//! each descriptor travels in a `sendmsg` of its own with one byte of data, after the packet
//! that announced it (the core counts those bytes, [`Connection::handle_fds`]).
//!
//! Plain reads stay the fast path: the driver reads with `recvmsg` only while the core
//! expects descriptors ([`Connection::wants_fds`]). Descriptors nobody asked for are closed
//! by the kernel on a plain read.
//!
//! [`Connection::handle_fds`]: crate::conn::Connection::handle_fds
//! [`Connection::wants_fds`]: crate::conn::Connection::wants_fds

use std::io::{self, IoSlice, IoSliceMut};
use std::mem::MaybeUninit;
use std::os::fd::{BorrowedFd, OwnedFd};
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use bytes::BytesMut;
use rustix::net::{
    RecvAncillaryBuffer, RecvAncillaryMessage, RecvFlags, ReturnFlags, SendAncillaryBuffer,
    SendAncillaryMessage, SendFlags,
};
use tokio::io::{AsyncRead, AsyncWrite, Interest};
use tokio::net::UnixStream;

use crate::proto::limits::MESSAGE_NUM_FDS_MAX;

/// Bytes per `recvmsg` (the buffer is zeroed once, on first use).
const RECV_CHUNK: usize = 64 << 10;

/// The driver's transport: bytes both ways, descriptors where the socket can carry them.
pub(crate) trait Io: Unpin + Send + 'static {
    /// Descriptors can travel ([`poll_recv_fds`](Self::poll_recv_fds),
    /// [`poll_send_fd`](Self::poll_send_fd)).
    fn passes_fds(&self) -> bool {
        false
    }

    /// Read what is there into `buf`'s spare capacity; `Ok(0)` is EOF.
    fn poll_read(&mut self, cx: &mut Context<'_>, buf: &mut BytesMut) -> Poll<io::Result<usize>>;

    /// [`poll_read`](Self::poll_read), keeping the descriptors that arrive (in order).
    fn poll_recv_fds(
        &mut self,
        cx: &mut Context<'_>,
        buf: &mut BytesMut,
        _fds: &mut Vec<OwnedFd>,
    ) -> Poll<io::Result<usize>> {
        self.poll_read(cx, buf)
    }

    /// Write from `slices` (only the first, if the stream does not do vectored writes);
    /// returns how many bytes went.
    fn poll_write_vectored(
        &mut self,
        cx: &mut Context<'_>,
        slices: &[IoSlice<'_>],
    ) -> Poll<io::Result<usize>>;

    /// Flush.
    fn poll_flush(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>>;

    /// Send one descriptor, with one byte of data, in a message of its own.
    fn poll_send_fd(&mut self, cx: &mut Context<'_>, fd: BorrowedFd<'_>) -> Poll<io::Result<()>> {
        let _ = (cx, fd);
        Poll::Ready(Err(io::Error::new(
            io::ErrorKind::Unsupported,
            "this transport cannot pass file descriptors",
        )))
    }
}

/// Any byte stream; no descriptors.
pub(crate) struct Plain<T>(pub(crate) T);

impl<T: AsyncRead + AsyncWrite + Unpin + Send + 'static> Io for Plain<T> {
    fn poll_read(&mut self, cx: &mut Context<'_>, buf: &mut BytesMut) -> Poll<io::Result<usize>> {
        tokio_util::io::poll_read_buf(Pin::new(&mut self.0), cx, buf)
    }

    fn poll_write_vectored(
        &mut self,
        cx: &mut Context<'_>,
        slices: &[IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        if self.0.is_write_vectored() {
            Pin::new(&mut self.0).poll_write_vectored(cx, slices)
        } else {
            Pin::new(&mut self.0).poll_write(cx, slices.first().map_or(&[][..], |s| &s[..]))
        }
    }

    fn poll_flush(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.0).poll_flush(cx)
    }
}

/// A unix socket that passes descriptors.
pub(crate) struct UnixFds {
    io: UnixStream,
    scratch: Vec<u8>,
}

impl UnixFds {
    pub(crate) fn new(io: UnixStream) -> Self {
        Self {
            io,
            scratch: Vec::new(),
        }
    }
}

/// One `recvmsg`: bytes into `scratch`, descriptors onto `fds`. Descriptors cut off by a
/// full control buffer are an error (the kernel closed them; the peer sent more per
/// message than the protocol allows).
fn recv_fds(sock: &UnixStream, scratch: &mut [u8], fds: &mut Vec<OwnedFd>) -> io::Result<usize> {
    let mut space = [MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(MESSAGE_NUM_FDS_MAX))];
    let mut control = RecvAncillaryBuffer::new(&mut space);
    let msg = rustix::net::recvmsg(
        sock,
        &mut [IoSliceMut::new(scratch)],
        &mut control,
        RecvFlags::CMSG_CLOEXEC,
    )?;
    for m in control.drain() {
        if let RecvAncillaryMessage::ScmRights(received) = m {
            fds.extend(received);
        }
    }
    if msg.flags.contains(ReturnFlags::CTRUNC) {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            "file descriptors were truncated in transit",
        ));
    }
    Ok(msg.bytes)
}

/// One byte of data carrying `fd`.
fn send_fd(sock: &UnixStream, fd: BorrowedFd<'_>) -> io::Result<usize> {
    let mut space = [MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(1))];
    let mut control = SendAncillaryBuffer::new(&mut space);
    let fds = [fd];
    let pushed = control.push(SendAncillaryMessage::ScmRights(&fds));
    debug_assert!(pushed, "room for one descriptor");
    Ok(rustix::net::sendmsg(
        sock,
        &[IoSlice::new(&[0])],
        &mut control,
        SendFlags::NOSIGNAL,
    )?)
}

impl Io for UnixFds {
    fn passes_fds(&self) -> bool {
        true
    }

    fn poll_read(&mut self, cx: &mut Context<'_>, buf: &mut BytesMut) -> Poll<io::Result<usize>> {
        tokio_util::io::poll_read_buf(Pin::new(&mut self.io), cx, buf)
    }

    fn poll_recv_fds(
        &mut self,
        cx: &mut Context<'_>,
        buf: &mut BytesMut,
        fds: &mut Vec<OwnedFd>,
    ) -> Poll<io::Result<usize>> {
        if self.scratch.is_empty() {
            self.scratch = vec![0; RECV_CHUNK];
        }
        loop {
            ready!(self.io.poll_read_ready(cx))?;
            let (io, scratch) = (&self.io, &mut self.scratch);
            match io.try_io(Interest::READABLE, || recv_fds(io, scratch, fds)) {
                Ok(n) => {
                    buf.extend_from_slice(&self.scratch[..n]);
                    return Poll::Ready(Ok(n));
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                Err(e) => return Poll::Ready(Err(e)),
            }
        }
    }

    fn poll_write_vectored(
        &mut self,
        cx: &mut Context<'_>,
        slices: &[IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.io).poll_write_vectored(cx, slices)
    }

    fn poll_flush(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.io).poll_flush(cx)
    }

    fn poll_send_fd(&mut self, cx: &mut Context<'_>, fd: BorrowedFd<'_>) -> Poll<io::Result<()>> {
        loop {
            ready!(self.io.poll_write_ready(cx))?;
            match self.io.try_io(Interest::WRITABLE, || send_fd(&self.io, fd)) {
                Ok(0) => {
                    return Poll::Ready(Err(io::Error::new(
                        io::ErrorKind::WriteZero,
                        "the socket took no descriptor byte",
                    )));
                }
                Ok(_) => return Poll::Ready(Ok(())),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                Err(e) => return Poll::Ready(Err(e)),
            }
        }
    }
}
