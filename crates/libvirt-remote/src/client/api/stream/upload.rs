//! [`Upload`]: a client → daemon stream, fed from bytes, a reader or a file (sparse files as
//! holes), and its `AsyncWrite` adaptor.

use std::future::{Future, poll_fn};
use std::io;
use std::path::Path;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, ready};

use bytes::{Bytes, BytesMut};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite};

use super::handle::{Handle, handle_methods};
use super::{TransferError, io_error};
use crate::conn::{StreamError, StreamMisuse};

/// A client → daemon stream (e.g. `virStorageVolUpload`). Call [`finish`](Self::finish) to
/// get the daemon's verdict; dropping it unfinished aborts the transfer.
pub struct Upload {
    pub(super) h: Handle,
    pub(super) sparse: bool,
    pub(super) sent: u64,
    pub(super) position: u64,
    /// Bytes read from a source per send: whole packets, so no short packet per round.
    pub(super) read_ahead: usize,
}

impl std::fmt::Debug for Upload {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.h
            .debug(f, "Upload")
            .field("sent", &self.sent)
            .finish_non_exhaustive()
    }
}

handle_methods!(Upload {
    open_reply,
    progress,
    finish,
    abort
});

impl Upload {
    /// Bytes queued so far (data only, not holes).
    pub fn sent(&self) -> u64 {
        self.sent
    }

    fn advance(&mut self, n: u64) {
        self.position += n;
        self.h.meter.report(self.position);
    }

    fn poll_writable(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        self.h.poll_writable(cx)
    }

    /// Queue `data` (sent in packets of the connection's
    /// [`stream_chunk`](crate::conn::Config::stream_chunk), without copying). Waits while more than
    /// 512 KiB is already queued. A daemon error that ended the stream is returned here.
    pub async fn send(&mut self, data: Bytes) -> Result<(), StreamError> {
        poll_fn(|cx| self.poll_writable(cx)).await;
        let len = data.len() as u64;
        self.h.command(|mut s| s.send(data))?;
        self.sent += len;
        self.advance(len);
        Ok(())
    }

    /// Send a hole of `len` bytes (sparse uploads only; refused otherwise, nothing sent).
    pub async fn send_hole(&mut self, len: u64) -> Result<(), StreamError> {
        poll_fn(|cx| self.poll_writable(cx)).await;
        self.h.command(|mut s| s.send_hole(len))?;
        self.advance(len);
        Ok(())
    }

    /// This upload as a [`tokio::io::AsyncWrite`]: each write queues a copy of its bytes
    /// (waiting while the connection's send queue is full), `shutdown` finishes and returns
    /// the daemon's verdict. Dropping the writer before `shutdown` completes aborts the
    /// upload. Errors carry the [`StreamError`] (see [`stream_error`](super::stream_error)).
    pub fn into_writer(self) -> UploadWriter {
        UploadWriter {
            state: WriterState::Writing(Box::new(self)),
        }
    }

    /// Queue a copy of `buf` once the send queue has room.
    fn poll_send(&mut self, cx: &mut Context<'_>, buf: &[u8]) -> Poll<Result<usize, StreamError>> {
        ready!(self.poll_writable(cx));
        if buf.is_empty() {
            return Poll::Ready(Ok(0));
        }
        self.h
            .command(|mut s| s.send(Bytes::copy_from_slice(buf)))?;
        self.sent += buf.len() as u64;
        self.advance(buf.len() as u64);
        Poll::Ready(Ok(buf.len()))
    }

    /// Send everything `reader` yields, then finish. A read error aborts the stream and is
    /// returned as [`TransferError::Local`] once the daemon has answered the abort.
    pub async fn send_all_and_finish<R: AsyncRead + Unpin>(
        mut self,
        mut reader: R,
    ) -> Result<u64, TransferError> {
        // One buffer, reserved again each round: once the driver has written a chunk and
        // dropped it, `reserve` reuses the same allocation instead of faulting in new pages.
        let mut buf = BytesMut::new();
        loop {
            buf.reserve(self.read_ahead);
            let mut eof = false;
            while buf.len() < self.read_ahead {
                match reader.read_buf(&mut buf).await {
                    Ok(0) => {
                        eof = true;
                        break;
                    }
                    Ok(_) => {}
                    Err(e) => {
                        return Err(self.h.fail_local(e).await);
                    }
                }
            }
            if !buf.is_empty() {
                self.send(buf.split().freeze()).await?;
            }
            if eof {
                break;
            }
        }
        let sent = self.sent;
        self.finish().await?;
        Ok(sent)
    }

    /// Upload a file. With a sparse stream, holes are found with `SEEK_DATA`/`SEEK_HOLE` and
    /// sent as holes (the daemon recreates them); otherwise every byte is sent.
    ///
    /// A regular file is read with positioned reads on the blocking pool straight into the
    /// buffers that go on the wire (no intermediate copy). Anything else (a pipe such as
    /// `/dev/stdin`, a block or character device) is read to its end, and all of it is sent
    /// as data, sparse or not.
    pub async fn send_file_and_finish(mut self, path: &Path) -> Result<u64, TransferError> {
        let opened = std::fs::File::open(path).and_then(|f| {
            let meta = f.metadata()?;
            // Only a regular file's size can be trusted: a pipe or a device reports 0.
            Ok((Arc::new(f), meta.is_file().then_some(meta.len())))
        });
        let (file, len) = self.h.local(opened).await?;
        if let Some(len) = len {
            self.h.meter.total.get_or_insert(len);
        }
        let r = match len {
            None => self.send_to_eof(&file).await,
            Some(len) if self.sparse => self.send_sparse(&file, len).await,
            Some(len) => self.send_range(&file, 0, len).await,
        };
        match r {
            Ok(()) => {
                let sent = self.sent;
                self.finish().await?;
                Ok(sent)
            }
            Err(TransferError::Local(e)) => Err(self.h.fail_local(e).await),
            Err(e) => Err(e),
        }
    }

    /// Send `file[start..end)`.
    async fn send_range(
        &mut self,
        file: &Arc<std::fs::File>,
        start: u64,
        end: u64,
    ) -> Result<(), TransferError> {
        let mut pos = start;
        while pos < end {
            let n = usize::try_from(end - pos)
                .unwrap_or(usize::MAX)
                .min(self.read_ahead);
            let chunk = read_at(file.clone(), pos, n)
                .await
                .map_err(TransferError::Local)?;
            pos += n as u64;
            self.send(chunk).await?;
        }
        Ok(())
    }

    /// Send everything `file` yields until end of file, in `read_ahead` chunks.
    async fn send_to_eof(&mut self, file: &Arc<std::fs::File>) -> Result<(), TransferError> {
        loop {
            let chunk = read_some(file.clone(), self.read_ahead)
                .await
                .map_err(TransferError::Local)?;
            if chunk.is_empty() {
                return Ok(());
            }
            self.send(chunk).await?;
        }
    }

    async fn send_sparse(
        &mut self,
        file: &Arc<std::fs::File>,
        len: u64,
    ) -> Result<(), TransferError> {
        let mut pos = 0u64;
        while pos < len {
            let data = match rustix::fs::seek(&**file, rustix::fs::SeekFrom::Data(pos)) {
                Ok(d) => d.min(len),
                Err(rustix::io::Errno::NXIO) => len,
                Err(e) => return Err(TransferError::Local(e.into())),
            };
            if data > pos {
                self.send_hole(data - pos).await?;
                pos = data;
            }
            if pos >= len {
                break;
            }
            let hole = match rustix::fs::seek(&**file, rustix::fs::SeekFrom::Hole(pos)) {
                Ok(h) => h.min(len),
                Err(e) => return Err(TransferError::Local(e.into())),
            };
            self.send_range(file, pos, hole).await?;
            pos = hole;
        }
        Ok(())
    }
}

/// An [`Upload`] as a [`tokio::io::AsyncWrite`]; see [`Upload::into_writer`].
pub struct UploadWriter {
    state: WriterState,
}

enum WriterState {
    Writing(Box<Upload>),
    Finishing(Pin<Box<dyn Future<Output = Result<(), StreamError>> + Send>>),
    Done,
}

impl std::fmt::Debug for UploadWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let state = match &self.state {
            WriterState::Writing(u) => return f.debug_tuple("UploadWriter").field(u).finish(),
            WriterState::Finishing(_) => "finishing",
            WriterState::Done => "done",
        };
        f.debug_tuple("UploadWriter").field(&state).finish()
    }
}

impl AsyncWrite for UploadWriter {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        match &mut self.state {
            WriterState::Writing(up) => up.poll_send(cx, buf).map_err(io_error),
            _ => Poll::Ready(Err(io_error(StreamMisuse::AfterFinish.into()))),
        }
    }

    /// Bytes are queued on the connection as they are written; nothing to flush here.
    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        loop {
            match &mut self.state {
                WriterState::Writing(_) => {
                    let WriterState::Writing(up) =
                        std::mem::replace(&mut self.state, WriterState::Done)
                    else {
                        unreachable!()
                    };
                    self.state = WriterState::Finishing(Box::pin((*up).finish()));
                }
                WriterState::Finishing(f) => {
                    let r = ready!(f.as_mut().poll(cx));
                    self.state = WriterState::Done;
                    return Poll::Ready(r.map_err(io_error));
                }
                WriterState::Done => return Poll::Ready(Ok(())),
            }
        }
    }
}

/// Bytes read from a source per send: about 256 KiB, in whole packets (fewer syscalls than
/// one packet per read; RSS stays ≤ 8 MiB).
pub(super) fn read_ahead(chunk: usize) -> usize {
    chunk * (READ_AHEAD_TARGET / chunk).max(1)
}

const READ_AHEAD_TARGET: usize = 256 << 10;

/// Run blocking file I/O on the blocking pool.
async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> io::Result<T> + Send + 'static,
) -> io::Result<T> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(io::Error::other)?
}

// Buffers are allocated before entering the blocking pool, not on its threads: every
// blocking thread would otherwise keep its own malloc arena of freed chunks, and RSS would
// grow with the pool.

/// `pread` of exactly `n` bytes at `offset`.
async fn read_at(file: Arc<std::fs::File>, offset: u64, n: usize) -> io::Result<Bytes> {
    let mut buf = BytesMut::zeroed(n);
    blocking(move || {
        use std::os::unix::fs::FileExt;
        file.read_exact_at(&mut buf, offset)?;
        Ok(buf.freeze())
    })
    .await
}

/// Up to `n` bytes of a sequential file (pipe, device): reads until `n` bytes or end of
/// file, so a pipe's short reads still make whole packets. Empty at end of file.
async fn read_some(file: Arc<std::fs::File>, n: usize) -> io::Result<Bytes> {
    let mut buf = Vec::with_capacity(n);
    blocking(move || {
        use std::io::Read;
        (&*file).take(n as u64).read_to_end(&mut buf)?;
        Ok(Bytes::from(buf))
    })
    .await
}
