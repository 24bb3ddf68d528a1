//! [`Download`]: a daemon → client stream, as a `futures::Stream` of items, written to a
//! sink or a file (holes as holes), and its `AsyncRead` adaptor.

use std::io;
use std::path::Path;
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use bytes::Bytes;
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt, ReadBuf};

use super::handle::{Handle, handle_methods};
use super::{TransferError, copy_into, io_error};
use crate::conn::{StreamError, StreamItem};

/// A daemon → client stream (e.g. `virStorageVolDownload`): a `futures::Stream` of
/// [`StreamItem`]s that ends with `None` after the daemon confirmed the finish, or yields the
/// error that ended it. Memory is bounded by the connection's stream window.
pub struct Download {
    pub(super) h: Handle,
}

impl std::fmt::Debug for Download {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.h.debug(f, "Download").finish_non_exhaustive()
    }
}

impl futures::Stream for Download {
    type Item = Result<StreamItem, StreamError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.h.poll_item(cx)
    }
}

handle_methods!(Download {
    open_reply,
    progress,
    abort
});

impl Download {
    /// The most the daemon may send on this download, data and holes counted, when the
    /// caller knows it (a volume's size on the host; [`DownloadOptions::length`] sets it for
    /// a part). More ends the download with [`StreamError::Overrun`] and aborts it
    /// ([`StreamMut::limit_receive`](crate::conn::StreamMut::limit_receive)).
    ///
    /// [`DownloadOptions::length`]: super::DownloadOptions::length
    #[must_use]
    pub fn limit_to(self, max: u64) -> Self {
        let _ = self.h.command(|mut s| {
            s.limit_receive(max);
            Ok(())
        });
        self
    }

    fn report(&mut self, done: u64) {
        self.h.meter.report(done);
    }

    /// This download as a [`tokio::io::AsyncRead`]: holes read as zeros, end of file once the
    /// daemon confirmed the finish, an error if the stream failed (carrying the [`StreamError`],
    /// see [`stream_error`](super::stream_error)). Dropping the reader before the end aborts the
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
                copy_into(&mut this.data, buf)
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
