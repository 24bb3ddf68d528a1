//! Upload, download and duplex handles over the core's stream state machine, and the
//! `tokio::io` adaptors over them.
//!
//! Every way a stream can end reaches the caller as a value: the daemon's verdict, the
//! daemon's error, the local source's or sink's error (after aborting on the wire), or the
//! connection's death. Dropping a handle (or an adaptor) mid-stream aborts it and leaves the
//! connection usable; the adaptors report a stream's end as an [`io::Error`] whose inner
//! error is the [`StreamError`] (see [`stream_error`]).

use crate::proto::procs::storage::StorageVolDeleteFlags;
use std::future::{Future, poll_fn};
use std::io;
use std::path::Path;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, ready};

use bytes::{Buf, Bytes, BytesMut};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, ReadBuf};
use tracing::{Instrument, Span};

use crate::client::Client;
use crate::client::shared::{Inner, StreamSlot, TRANSMIT_HIGH};
use crate::conn::{StreamError, StreamId, StreamItem, StreamMisuse, StreamMut};
use crate::proto::procs::domain::{
    DomainOpenChannel, DomainOpenChannelArgs, DomainOpenConsole, DomainOpenConsoleArgs,
};
use crate::proto::procs::storage::{
    StorageVolDelete, StorageVolDownload, StorageVolFlagsArgs, StorageVolTransferArgs,
    StorageVolUpload,
};
use crate::proto::types::{Domain, StorageVol};
use crate::proto::{Procedure, StreamArgs};
use crate::wire::xdr::{self, DecodeError};

/// The [`StreamError`] inside an [`io::Error`] returned by a stream adaptor
/// ([`UploadWriter`], [`DownloadReader`], [`Duplex`]), if that is what ended it.
pub fn stream_error(e: &io::Error) -> Option<&StreamError> {
    e.get_ref()?.downcast_ref::<StreamError>()
}

fn io_error(e: StreamError) -> io::Error {
    let kind = match &e {
        StreamError::Connection(_) => io::ErrorKind::ConnectionAborted,
        _ => io::ErrorKind::Other,
    };
    io::Error::new(kind, e)
}

/// The offset/length/sparse builders both option structs share.
macro_rules! range_builders {
    () => {
        /// Start at byte `offset`.
        #[must_use]
        pub fn offset(mut self, offset: u64) -> Self {
            self.offset = offset;
            self
        }

        /// Transfer `length` bytes (0 = to the end of the volume).
        #[must_use]
        pub fn length(mut self, length: u64) -> Self {
            self.length = length;
            self
        }

        /// A sparse stream or not.
        #[must_use]
        pub fn sparse(mut self, sparse: bool) -> Self {
            self.sparse = sparse;
            self
        }
    };
}

/// How much of a volume a transfer covers: `virStorageVolUpload`'s offset, length and
/// flags. `UploadOptions::new().sparse(true)` is a whole-volume sparse upload.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct UploadOptions {
    /// Byte offset into the volume.
    pub offset: u64,
    /// Bytes to transfer; 0 = to the end of the volume.
    pub length: u64,
    /// A sparse stream: holes travel as holes (`VIR_STORAGE_VOL_UPLOAD_SPARSE_STREAM`).
    pub sparse: bool,
    /// Delete the volume (`virStorageVolDelete`) when the upload ends any way but a
    /// successful finish: no half-written volume is left behind. Off by default.
    pub delete_on_failure: bool,
}

impl UploadOptions {
    /// The whole volume, not sparse, kept on failure.
    pub fn new() -> Self {
        Self::default()
    }

    range_builders!();

    /// Delete the volume if the upload fails (see [the field](Self::delete_on_failure)).
    #[must_use]
    pub fn delete_on_failure(mut self, delete: bool) -> Self {
        self.delete_on_failure = delete;
        self
    }
}

/// How much of a volume a download covers: `virStorageVolDownload`'s offset, length and
/// flags.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct DownloadOptions {
    /// Byte offset into the volume.
    pub offset: u64,
    /// Bytes to transfer; 0 = to the end of the volume.
    pub length: u64,
    /// A sparse stream: holes arrive as [`StreamItem::Hole`].
    pub sparse: bool,
}

impl DownloadOptions {
    /// The whole volume, not sparse.
    pub fn new() -> Self {
        Self::default()
    }

    range_builders!();
}

/// How far a transfer is, given to a progress callback.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Progress {
    /// Logical bytes done (data and holes).
    pub done: u64,
    /// Logical bytes the whole transfer covers, when known: what [`Upload::with_total`] /
    /// [`Download::with_total`] was told, else the options' `length` when it is not 0, else
    /// the file's size for [`Upload::send_file_and_finish`].
    pub total: Option<u64>,
}

/// A progress callback: runs on the caller's task, inside the transfer's own await points.
type ProgressFn = Box<dyn FnMut(Progress) + Send>;

/// The volume an upload deletes if it fails.
struct Cleanup {
    client: Client,
    vol: StorageVol,
}

impl Cleanup {
    async fn run(self) {
        let name = self.vol.name.to_string();
        match self
            .client
            .call::<StorageVolDelete>(&StorageVolFlagsArgs {
                vol: self.vol,
                flags: StorageVolDeleteFlags::default(),
            })
            .await
        {
            Ok(()) => tracing::debug!(vol = %name, "failed upload: volume deleted"),
            Err(e) => tracing::warn!(vol = %name, error = %e, "failed upload: volume not deleted"),
        }
    }
}

/// A transfer failed, either on the libvirt side or on our local side.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TransferError {
    /// The local source or sink failed; the stream was aborted on the wire first.
    #[error("local I/O failed (stream aborted): {0}")]
    Local(io::Error),
    /// The stream failed (daemon error, connection death, …).
    #[error(transparent)]
    Stream(#[from] StreamError),
}

/// Shared plumbing of both handles.
struct Handle {
    inner: Arc<Inner>,
    id: StreamId,
    span: Span,
    ended: bool,
    /// The payload of the REPLY that opened the stream.
    reply: Bytes,
    /// What to undo if the stream ends any way but a successful finish.
    cleanup: Option<Cleanup>,
}

impl Handle {
    async fn open<P: Procedure>(client: &Client, args: &P::Args) -> Result<Self, StreamError>
    where
        P::Args: StreamArgs,
    {
        let sparse = args.sparse();
        let id = {
            let mut st = client.inner.lock();
            let id = st.conn.open_stream::<P>(args)?;
            st.streams.insert(id, StreamSlot::default());
            st.wake_driver();
            id
        };
        let span = tracing::debug_span!("libvirt.stream", proc = P::NAME, serial = id, sparse);
        let mut h = Self {
            inner: client.inner.clone(),
            id,
            span,
            ended: false,
            reply: Bytes::new(),
            cleanup: None,
        };
        poll_fn(|cx| h.poll_open(cx)).await?;
        h.reply = h
            .inner
            .lock()
            .conn
            .stream(id)
            .open_reply()
            .unwrap_or_default();
        Ok(h)
    }

    /// The opening REPLY decoded as `P`'s return (the core checked it decodes).
    fn open_reply<P: Procedure>(&self) -> Result<P::Ret, DecodeError> {
        xdr::from_bytes(self.reply.clone())
    }

    /// Ready when the connection's send queue has room (or the connection is closed).
    fn poll_writable(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        let mut st = self.inner.lock();
        if st.conn.is_closed() || st.conn.transmit_queued() < TRANSMIT_HIGH {
            return Poll::Ready(());
        }
        // Also wake on the stream's own end (a daemon error mid-upload). Its own waker: a
        // duplex stream's reader may wait on another task.
        if let Some(slot) = st.streams.get_mut(&self.id) {
            slot.write_waker = Some(cx.waker().clone());
        }
        st.writable.push(cx.waker().clone());
        Poll::Pending
    }

    /// The next received item, `None` once the stream ended well, or the error that ended it.
    fn poll_item(&mut self, cx: &mut Context<'_>) -> Poll<Option<Result<StreamItem, StreamError>>> {
        if self.ended {
            return Poll::Ready(None);
        }
        let id = self.id;
        let mut st = self.inner.lock();
        let mut stream = st.conn.stream(id);
        if let Some(item) = stream.recv() {
            if st.read_blocked && st.conn.wants_read() {
                st.wake_driver();
            }
            return Poll::Ready(Some(Ok(item)));
        }
        if let Some(r) = stream.take_end() {
            st.streams.remove(&id);
            drop(st);
            self.ended = true;
            return Poll::Ready(r.err().map(Err));
        }
        if st.read_blocked && st.conn.wants_read() {
            st.wake_driver();
        }
        if let Some(slot) = st.streams.get_mut(&id) {
            slot.waker = Some(cx.waker().clone());
        }
        Poll::Pending
    }

    fn poll_open(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), StreamError>> {
        let mut st = self.inner.lock();
        if st.streams.get(&self.id).is_some_and(|s| s.opened) {
            return Poll::Ready(Ok(()));
        }
        if let Some(r) = st.conn.stream(self.id).take_end() {
            // Ended before the REPLY was seen: refused, failed, or a download complete before
            // its REPLY arrived (it then opens, already ended, and yields nothing).
            st.streams.remove(&self.id);
            self.ended = true;
            return Poll::Ready(r);
        }
        if st.streams.get(&self.id).is_some_and(|s| s.ended) {
            // Ended with data still to read: a download complete before its REPLY (one that
            // failed before it would have dropped its data). It opens; the items follow.
            return Poll::Ready(Ok(()));
        }
        if let Some(slot) = st.streams.get_mut(&self.id) {
            slot.waker = Some(cx.waker().clone());
        }
        Poll::Pending
    }

    fn poll_end(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), StreamError>> {
        if self.ended {
            return Poll::Ready(Err(StreamError::Unknown));
        }
        let mut st = self.inner.lock();
        // Discard unread items: whoever waits for the end no longer wants them.
        while st.conn.stream(self.id).recv().is_some() {}
        if st.read_blocked && st.conn.wants_read() {
            st.wake_driver();
        }
        if let Some(r) = st.conn.stream(self.id).take_end() {
            st.streams.remove(&self.id);
            self.ended = true;
            return Poll::Ready(r);
        }
        if let Some(slot) = st.streams.get_mut(&self.id) {
            slot.waker = Some(cx.waker().clone());
        }
        Poll::Pending
    }

    /// Wait for the end; a failed end runs the cleanup first.
    async fn end(&mut self) -> Result<(), StreamError> {
        let r = poll_fn(|cx| self.poll_end(cx)).await;
        if r.is_err() {
            self.clean_up().await;
        }
        r
    }

    async fn clean_up(&mut self) {
        if let Some(c) = self.cleanup.take() {
            c.run().instrument(self.span.clone()).await;
        }
    }

    /// Run `f` on the stream, then let the driver send what it queued.
    fn command(
        &self,
        f: impl FnOnce(StreamMut<'_>) -> Result<(), StreamError>,
    ) -> Result<(), StreamError> {
        let mut st = self.inner.lock();
        let r = f(st.conn.stream(self.id));
        st.wake_driver();
        r
    }

    /// Pass `r` through; if the local side failed, abort first (see [`Self::fail_local`]).
    async fn local<T>(&mut self, r: io::Result<T>) -> Result<T, TransferError> {
        match r {
            Ok(v) => Ok(v),
            Err(e) => Err(self.fail_local(e).await),
        }
    }

    /// A local source or sink failed: abort on the wire, wait for the daemon's answer, and
    /// report the local error (not the abort).
    async fn fail_local(&mut self, e: io::Error) -> TransferError {
        let _ = self.abort(&e.to_string()).await;
        self.clean_up().await;
        TransferError::Local(e)
    }

    async fn abort(&mut self, reason: &str) -> StreamError {
        let _ = self.command(|mut s| s.abort(reason.to_string()));
        match self.end().await {
            Err(e) => e,
            // It had finished before the abort.
            Ok(()) => StreamMisuse::Finished.into(),
        }
    }
}

impl Drop for Handle {
    fn drop(&mut self) {
        if self.ended {
            return;
        }
        if let (Some(cleanup), Ok(rt)) =
            (self.cleanup.take(), tokio::runtime::Handle::try_current())
        {
            // Dropped with a volume to delete: abort, and hand the stream to a task that
            // waits for the daemon's answer (it always comes, or the connection dies) and
            // then deletes the volume (the daemon refuses while the upload holds it).
            let mut rest = Self {
                inner: self.inner.clone(),
                id: self.id,
                span: self.span.clone(),
                ended: false,
                reply: Bytes::new(),
                cleanup: Some(cleanup),
            };
            self.ended = true;
            let _ = rest.command(|mut s| s.abort("stream handle dropped"));
            rt.spawn(async move {
                let _ = rest.end().await;
            });
            return;
        }
        let mut st = self.inner.lock();
        st.conn.stream(self.id).forget();
        st.streams.remove(&self.id);
        st.wake_driver();
    }
}

/// A client → daemon stream (e.g. `virStorageVolUpload`). Call [`finish`](Self::finish) to
/// get the daemon's verdict; dropping it unfinished aborts the transfer.
pub struct Upload {
    h: Handle,
    sparse: bool,
    sent: u64,
    position: u64,
    total: Option<u64>,
    progress: Option<ProgressFn>,
    /// Bytes read from a source per send: whole packets, so no short packet per round.
    read_ahead: usize,
}

impl std::fmt::Debug for Upload {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Upload")
            .field("id", &self.h.id)
            .field("sent", &self.sent)
            .finish_non_exhaustive()
    }
}

impl Upload {
    /// What the opening call returned besides the stream, as `P`'s return type (`P` is the
    /// procedure that opened it; e.g. the cookie of `DomainMigratePrepareTunnel3`).
    ///
    /// # Errors
    ///
    /// When `P` is not the procedure that opened this stream and its return does not fit.
    pub fn open_reply<P: Procedure>(&self) -> Result<P::Ret, DecodeError> {
        self.h.open_reply::<P>()
    }

    /// Bytes queued so far (data only, not holes).
    pub fn sent(&self) -> u64 {
        self.sent
    }

    /// Report progress to `f` after each chunk (data and holes). `f` runs on the task
    /// driving the upload, so it may hold state (`FnMut`) and needs no `Sync`.
    #[must_use]
    pub fn with_progress(mut self, f: impl FnMut(Progress) + Send + 'static) -> Self {
        self.progress = Some(Box::new(f));
        self
    }

    /// Tell progress reports the transfer's total (replaces what the options' length said;
    /// without either, [`send_file_and_finish`](Self::send_file_and_finish) uses the file's
    /// size).
    #[must_use]
    pub fn with_total(mut self, total: u64) -> Self {
        self.total = Some(total);
        self
    }

    fn advance(&mut self, n: u64) {
        self.position += n;
        if let Some(p) = &mut self.progress {
            p(Progress {
                done: self.position,
                total: self.total,
            });
        }
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

    /// Finish and wait for the daemon's verdict.
    pub async fn finish(mut self) -> Result<(), StreamError> {
        let span = self.h.span.clone();
        self.h.command(|mut s| s.finish())?;
        self.h.end().instrument(span).await
    }

    /// Abort on the wire and wait for the daemon's answer; returns how the stream ended.
    pub async fn abort(mut self, reason: &str) -> StreamError {
        self.h.abort(reason).await
    }

    /// This upload as a [`tokio::io::AsyncWrite`]: each write queues a copy of its bytes
    /// (waiting while the connection's send queue is full), `shutdown` finishes and returns
    /// the daemon's verdict. Dropping the writer before `shutdown` completes aborts the
    /// upload. Errors carry the [`StreamError`] (see [`stream_error`]).
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
            self.total.get_or_insert(len);
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
fn read_ahead(chunk: usize) -> usize {
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

/// A daemon → client stream (e.g. `virStorageVolDownload`): a `futures::Stream` of
/// [`StreamItem`]s that ends with `None` after the daemon confirmed the finish, or yields the
/// error that ended it. Memory is bounded by the connection's stream window.
pub struct Download {
    h: Handle,
    total: Option<u64>,
    progress: Option<ProgressFn>,
}

impl std::fmt::Debug for Download {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Download")
            .field("id", &self.h.id)
            .finish_non_exhaustive()
    }
}

impl futures::Stream for Download {
    type Item = Result<StreamItem, StreamError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.h.poll_item(cx)
    }
}

impl Download {
    /// What the opening call returned besides the stream, as `P`'s return type (`P` is the
    /// procedure that opened it; e.g. the MIME type of `DomainScreenshot`).
    ///
    /// # Errors
    ///
    /// When `P` is not the procedure that opened this stream and its return does not fit.
    pub fn open_reply<P: Procedure>(&self) -> Result<P::Ret, DecodeError> {
        self.h.open_reply::<P>()
    }

    /// Report progress to `f` after each item written (data and holes) by
    /// [`write_to`](Self::write_to), [`write_to_file`](Self::write_to_file) or the
    /// [reader](Self::into_reader). `f` runs on the task driving the download, so it may hold
    /// state (`FnMut`) and needs no `Sync`.
    #[must_use]
    pub fn with_progress(mut self, f: impl FnMut(Progress) + Send + 'static) -> Self {
        self.progress = Some(Box::new(f));
        self
    }

    /// Tell progress reports the transfer's total (e.g. the volume's capacity, which the
    /// stream itself does not announce).
    #[must_use]
    pub fn with_total(mut self, total: u64) -> Self {
        self.total = Some(total);
        self
    }

    fn report(&mut self, done: u64) {
        if let Some(p) = &mut self.progress {
            p(Progress {
                done,
                total: self.total,
            });
        }
    }

    /// Abort on the wire and wait for the daemon's answer.
    pub async fn abort(mut self, reason: &str) -> StreamError {
        self.h.abort(reason).await
    }

    /// This download as a [`tokio::io::AsyncRead`]: holes read as zeros, end of file once
    /// the daemon confirmed the finish, an error if the stream failed (carrying the
    /// [`StreamError`], see [`stream_error`]). Dropping the reader before the end aborts the
    /// download.
    pub fn into_reader(self) -> DownloadReader {
        DownloadReader {
            dl: self,
            data: Bytes::new(),
            zeros: 0,
            done: 0,
        }
    }

    /// Write everything to `sink`; holes are written as zeros (a plain writer cannot seek).
    /// A write error aborts the stream and is returned as [`TransferError::Local`].
    pub async fn write_to<W: AsyncWrite + Unpin>(
        mut self,
        mut sink: W,
    ) -> Result<u64, TransferError> {
        use futures::StreamExt;
        let mut total = 0u64;
        while let Some(item) = self.next().await {
            let r = match item? {
                StreamItem::Data(d) => {
                    total += d.len() as u64;
                    sink.write_all(&d).await
                }
                StreamItem::Hole(n) => {
                    total += n;
                    let mut r = Ok(());
                    for zeros in zero_fill(n) {
                        r = sink.write_all(zeros).await;
                        if r.is_err() {
                            break;
                        }
                    }
                    r
                }
            };
            if let Err(e) = r {
                return Err(self.h.fail_local(e).await);
            }
            self.report(total);
        }
        sink.flush().await.map_err(TransferError::Local)?;
        Ok(total)
    }

    /// Write everything to a file; holes become holes (the file is extended by seeking).
    /// Returns the logical size written.
    ///
    /// The writes happen on one blocking-pool thread for the whole download, fed in order
    /// through a short queue (four batches of what had already arrived): the
    /// download task hands each packet over without waiting for its write, and the writer
    /// sleeps only when it has caught up. Progress counts what was handed over.
    pub async fn write_to_file(mut self, path: &Path) -> Result<u64, TransferError> {
        use futures::{FutureExt, StreamExt};
        let opened = std::fs::File::create(path).and_then(|f| {
            let regular = f.metadata()?.is_file();
            Ok((f, regular))
        });
        let (file, regular) = self.h.local(opened).await?;
        let (tx, rx) = tokio::sync::mpsc::channel(SINK_QUEUE);
        let writer = tokio::task::spawn_blocking(move || sink_writer(&file, regular, rx));
        let mut pos = 0u64;
        let mut batch = Vec::new();
        let mut ended = false;
        while !ended {
            let mut item = self.next().await;
            loop {
                match item {
                    None => {
                        ended = true;
                        break;
                    }
                    Some(item) => {
                        let op = match item? {
                            StreamItem::Data(d) => SinkOp::Data(d),
                            // A regular file gets a real hole (the offset just moves); a pipe
                            // or a device cannot seek and gets zeros.
                            StreamItem::Hole(n) if regular => SinkOp::Skip(n),
                            StreamItem::Hole(n) => SinkOp::Zeros(n),
                        };
                        pos += op.len();
                        batch.push(op);
                    }
                }
                if batch.len() >= SINK_BATCH {
                    break;
                }
                // Take what has already arrived into the same batch: one hand-over for it.
                match self.next().now_or_never() {
                    Some(next) => item = next,
                    None => break,
                }
            }
            if !batch.is_empty() && tx.send(std::mem::take(&mut batch)).await.is_err() {
                // The writer stopped on an error: report it.
                break;
            }
            self.report(pos);
        }
        drop(tx);
        let written = writer
            .await
            .map_err(io::Error::other)
            .and_then(|r| r)
            .and_then(|()| {
                if ended {
                    Ok(())
                } else {
                    Err(io::Error::other("the file writer stopped"))
                }
            });
        if let Err(e) = written {
            return Err(self.h.fail_local(e).await);
        }
        Ok(pos)
    }
}

/// Batches queued between a download and its file writer ([`Download::write_to_file`]).
const SINK_QUEUE: usize = 4;
/// Items per batch at most (16 × 256 KiB packets: the queue holds ≤ 16 MiB).
const SINK_BATCH: usize = 16;

/// One step of a download's file writer.
enum SinkOp {
    Data(Bytes),
    /// A hole in a regular file: the offset moves.
    Skip(u64),
    /// A hole in a sink that cannot seek.
    Zeros(u64),
}

impl SinkOp {
    fn len(&self) -> u64 {
        match self {
            Self::Data(d) => d.len() as u64,
            Self::Skip(n) | Self::Zeros(n) => *n,
        }
    }
}

/// The file writer of [`Download::write_to_file`], on the blocking pool: `pwrite` (regular
/// files) or `write` (pipes, devices) of each batch in order, and at the end the file's full
/// length (a trailing hole only moved the offset). No fsync (like virsh); callers that need
/// durability sync the file themselves. Stops at the first error.
fn sink_writer(
    file: &std::fs::File,
    regular: bool,
    mut rx: tokio::sync::mpsc::Receiver<Vec<SinkOp>>,
) -> io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::FileExt;
    let mut pos = 0u64;
    while let Some(batch) = rx.blocking_recv() {
        for op in batch {
            match &op {
                SinkOp::Data(d) if regular => file.write_all_at(d, pos)?,
                SinkOp::Data(d) => (&*file).write_all(d)?,
                SinkOp::Skip(_) => {}
                SinkOp::Zeros(n) => zero_fill(*n).try_for_each(|z| (&*file).write_all(z))?,
            }
            pos += op.len();
        }
    }
    if regular {
        file.set_len(pos)?;
    }
    Ok(())
}

/// A [`Download`] as a [`tokio::io::AsyncRead`]; see [`Download::into_reader`].
#[derive(Debug)]
pub struct DownloadReader {
    dl: Download,
    /// The rest of the data item being read.
    data: Bytes,
    /// The rest of the hole being read, as zeros.
    zeros: u64,
    /// Logical bytes handed to the reader (for progress).
    done: u64,
}

impl AsyncRead for DownloadReader {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = &mut *self;
        loop {
            if buf.remaining() == 0 {
                return Poll::Ready(Ok(()));
            }
            let n = if !this.data.is_empty() {
                let n = this.data.len().min(buf.remaining());
                buf.put_slice(&this.data[..n]);
                this.data.advance(n);
                n
            } else if this.zeros > 0 {
                let n = usize::try_from(this.zeros)
                    .unwrap_or(usize::MAX)
                    .min(buf.remaining());
                let z = zero_fill(n as u64).next().unwrap_or_default();
                buf.put_slice(z);
                this.zeros -= z.len() as u64;
                z.len()
            } else {
                match ready!(futures::Stream::poll_next(Pin::new(&mut this.dl), cx)) {
                    Some(Ok(StreamItem::Data(d))) => this.data = d,
                    Some(Ok(StreamItem::Hole(n))) => this.zeros = n,
                    Some(Err(e)) => return Poll::Ready(Err(io_error(e))),
                    None => return Poll::Ready(Ok(())),
                }
                continue;
            };
            this.done += n as u64;
            this.dl.report(this.done);
            return Poll::Ready(Ok(()));
        }
    }
}

/// A hole of `n` bytes as slices of zeros, for sinks that cannot seek: the one zero-fill of
/// both download writers.
fn zero_fill(mut n: u64) -> impl Iterator<Item = &'static [u8]> {
    static ZEROS: [u8; 64 << 10] = [0; 64 << 10];
    std::iter::from_fn(move || {
        let k = usize::try_from(n).unwrap_or(usize::MAX).min(ZEROS.len());
        n -= k as u64;
        (k > 0).then(|| &ZEROS[..k])
    })
}

/// A stream both sides send on: a domain's console or channel
/// ([`Client::domain_open_console`], [`Client::domain_open_channel`]). Reads yield what the
/// daemon sends (the guest's output), writes queue bytes for it (keystrokes); both
/// directions have their own backpressure (the stream window for reads, the connection's
/// send queue for writes). `tokio::io::split` gives a reader and a writer half for two tasks.
///
/// Either side ends it. The daemon's end of file (the guest closed the device) is read as
/// end of file; [`finish`](Self::finish) or `shutdown` ends it from our side (libvirt has no
/// half-close: output still in flight is dropped), [`abort`](Self::abort) aborts. A daemon
/// error or the connection's death is returned by the next read or write, as an
/// [`io::Error`] carrying the [`StreamError`] (see [`stream_error`]). Dropping it aborts the
/// stream on the wire and leaves the connection usable.
pub struct Duplex {
    h: Handle,
    /// The rest of the data item being read.
    data: Bytes,
    /// Our finish was sent (`shutdown`).
    finishing: bool,
}

impl std::fmt::Debug for Duplex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Duplex")
            .field("id", &self.h.id)
            .finish_non_exhaustive()
    }
}

impl Duplex {
    /// Finish from our side and wait for the daemon's verdict.
    pub async fn finish(mut self) -> Result<(), StreamError> {
        let span = self.h.span.clone();
        self.h.command(|mut s| s.finish())?;
        self.h.end().instrument(span).await
    }

    /// Abort on the wire and wait for the daemon's answer; returns how the stream ended.
    pub async fn abort(mut self, reason: &str) -> StreamError {
        self.h.abort(reason).await
    }
}

impl AsyncRead for Duplex {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = &mut *self;
        while this.data.is_empty() {
            match ready!(this.h.poll_item(cx)) {
                Some(Ok(StreamItem::Data(d))) => this.data = d,
                // Never sent on a console (not sparse: the core refuses it).
                Some(Ok(StreamItem::Hole(_))) => {}
                Some(Err(e)) => return Poll::Ready(Err(io_error(e))),
                None => return Poll::Ready(Ok(())),
            }
        }
        let n = this.data.len().min(buf.remaining());
        buf.put_slice(&this.data[..n]);
        this.data.advance(n);
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

impl Client {
    /// Open a duplex stream with a typed stream procedure (console, channel).
    pub async fn duplex<P: Procedure>(&self, args: &P::Args) -> Result<Duplex, StreamError>
    where
        P::Args: StreamArgs,
    {
        Ok(Duplex {
            h: Handle::open::<P>(self, args).await?,
            data: Bytes::new(),
            finishing: false,
        })
    }

    /// `virDomainOpenConsole`: the domain's console `dev_name` (`None`: the first one) as a
    /// [`Duplex`] stream. `flags`: `virDomainConsoleFlags` (FORCE 1 takes it over from
    /// another client, SAFE 2).
    ///
    /// ```no_run
    /// # async fn f(c: &libvirt_rpc::Client, dom: &libvirt_rpc::proto::types::Domain)
    /// # -> std::io::Result<()> {
    /// use tokio::io::{AsyncReadExt, AsyncWriteExt};
    /// let mut console = c.domain_open_console(dom, None, 0).await.map_err(std::io::Error::other)?;
    /// console.write_all(b"\n").await?;
    /// let mut buf = [0; 4096];
    /// let n = console.read(&mut buf).await?;
    /// # Ok(()) }
    /// ```
    pub async fn domain_open_console(
        &self,
        dom: &Domain,
        dev_name: Option<&str>,
        flags: u32,
    ) -> Result<Duplex, StreamError> {
        self.duplex::<DomainOpenConsole>(&DomainOpenConsoleArgs {
            dom: dom.clone(),
            dev_name: dev_name.map(Into::into),
            flags,
        })
        .await
    }

    /// `virDomainOpenChannel`: the domain's channel `name` (`None`: the first one) as a
    /// [`Duplex`] stream. `flags`: `virDomainChannelFlags` (FORCE 1).
    pub async fn domain_open_channel(
        &self,
        dom: &Domain,
        name: Option<&str>,
        flags: u32,
    ) -> Result<Duplex, StreamError> {
        self.duplex::<DomainOpenChannel>(&DomainOpenChannelArgs {
            dom: dom.clone(),
            name: name.map(Into::into),
            flags,
        })
        .await
    }
}

impl Client {
    /// Open an upload stream with a typed stream procedure; its arguments say whether it is
    /// sparse.
    pub async fn upload<P: Procedure>(&self, args: &P::Args) -> Result<Upload, StreamError>
    where
        P::Args: StreamArgs,
    {
        let h = Handle::open::<P>(self, args).await?;
        let read_ahead = read_ahead(h.inner.lock().conn.upload_chunk());
        Ok(Upload {
            h,
            sparse: args.sparse(),
            sent: 0,
            position: 0,
            total: None,
            progress: None,
            read_ahead,
        })
    }

    /// Open a download stream with a typed stream procedure; its arguments say whether it
    /// is sparse.
    pub async fn download<P: Procedure>(&self, args: &P::Args) -> Result<Download, StreamError>
    where
        P::Args: StreamArgs,
    {
        Ok(Download {
            h: Handle::open::<P>(self, args).await?,
            total: None,
            progress: None,
        })
    }

    /// `virStorageVolUpload`: write `vol` (or the part `opts` says). With
    /// [`UploadOptions::delete_on_failure`], a failed upload deletes the volume.
    ///
    /// ```no_run
    /// # async fn f(c: &libvirt_rpc::Client, vol: &libvirt_rpc::proto::types::StorageVol)
    /// # -> Result<(), Box<dyn std::error::Error>> {
    /// use libvirt_rpc::client::UploadOptions;
    /// let up = c.vol_upload(vol, UploadOptions::new().sparse(true)).await?;
    /// let up = up.with_progress(|p| eprintln!("{} of {:?}", p.done, p.total));
    /// up.send_file_and_finish("disk.raw".as_ref()).await?;
    /// # Ok(()) }
    /// ```
    pub async fn vol_upload(
        &self,
        vol: &StorageVol,
        opts: UploadOptions,
    ) -> Result<Upload, StreamError> {
        let args = StorageVolTransferArgs::new(vol.clone(), opts.offset, opts.length, opts.sparse);
        let mut up = self.upload::<StorageVolUpload>(&args).await?;
        if opts.length != 0 {
            up.total = Some(opts.length);
        }
        if opts.delete_on_failure {
            up.h.cleanup = Some(Cleanup {
                client: self.clone(),
                vol: vol.clone(),
            });
        }
        Ok(up)
    }

    /// `virStorageVolDownload`: read `vol` (or the part `opts` says).
    pub async fn vol_download(
        &self,
        vol: &StorageVol,
        opts: DownloadOptions,
    ) -> Result<Download, StreamError> {
        let args = StorageVolTransferArgs::new(vol.clone(), opts.offset, opts.length, opts.sparse);
        let mut dl = self.download::<StorageVolDownload>(&args).await?;
        if opts.length != 0 {
            dl.total = Some(opts.length);
        }
        Ok(dl)
    }
}
