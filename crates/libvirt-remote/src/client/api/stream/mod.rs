//! Upload, download and duplex handles over the core's stream state machine, and the
//! `tokio::io` adaptors over them.
//!
//! Every way a stream can end reaches the caller as a value: the daemon's verdict, the
//! daemon's error, the local source's or sink's error (after aborting on the wire), or the
//! connection's death. Dropping a handle (or an adaptor) mid-stream aborts it and leaves the
//! connection usable; the adaptors report a stream's end as an [`io::Error`] whose inner
//! error is the [`StreamError`] (see [`stream_error`]).
//!
//! One job per module: [`handle`] is the core the three handles share (open, room to send,
//! the next item, finish, abort, progress, a failed local side); [`upload`], [`download`] and
//! [`duplex`] are the handles and their `tokio::io` adaptors; here are the options, the
//! errors and the `Client` methods that open them.

mod download;
mod duplex;
mod handle;
mod upload;

use std::io;

use bytes::Bytes;

pub use download::{Download, DownloadReader};
pub use duplex::Duplex;
use handle::{Cleanup, Handle};
use upload::read_ahead;
pub use upload::{Upload, UploadWriter};

use crate::client::Client;
use crate::conn::StreamError;
use crate::proto::procs::domain::{
    DomainOpenChannel, DomainOpenChannelArgs, DomainOpenConsole, DomainOpenConsoleArgs,
};
use crate::proto::procs::storage::{StorageVolDownload, StorageVolTransferArgs, StorageVolUpload};
use crate::proto::types::{NonnullDomain, NonnullStorageVol};
use crate::proto::{Procedure, StreamArgs};

/// The [`StreamError`] inside an [`io::Error`] returned by a stream adaptor
/// ([`UploadWriter`], [`DownloadReader`], [`Duplex`]), if that is what ended it.
pub fn stream_error(e: &io::Error) -> Option<&StreamError> {
    e.get_ref()?.downcast_ref::<StreamError>()
}

/// Copy what fits of `data` into `buf` and drop it from `data`; how many bytes.
fn copy_into(data: &mut Bytes, buf: &mut tokio::io::ReadBuf<'_>) -> usize {
    let n = data.len().min(buf.remaining());
    buf.put_slice(&data[..n]);
    bytes::Buf::advance(data, n);
    n
}

pub(crate) fn io_error(e: StreamError) -> io::Error {
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
    /// A sparse stream: holes arrive as [`StreamItem::Hole`](crate::conn::StreamItem::Hole).
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
    /// # async fn f(c: &libvirt_remote::Client, dom: &libvirt_remote::proto::types::NonnullDomain)
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
        dom: &NonnullDomain,
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
        dom: &NonnullDomain,
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
        })
    }

    /// `virStorageVolUpload`: write `vol` (or the part `opts` says). With
    /// [`UploadOptions::delete_on_failure`], a failed upload deletes the volume.
    ///
    /// ```no_run
    /// # async fn f(c: &libvirt_remote::Client, vol: &libvirt_remote::proto::types::NonnullStorageVol)
    /// # -> Result<(), Box<dyn std::error::Error>> {
    /// use libvirt_remote::client::UploadOptions;
    /// let up = c.vol_upload(vol, UploadOptions::new().sparse(true)).await?;
    /// let up = up.with_progress(|p| eprintln!("{} of {:?}", p.done, p.total));
    /// up.send_file_and_finish("disk.raw".as_ref()).await?;
    /// # Ok(()) }
    /// ```
    pub async fn vol_upload(
        &self,
        vol: &NonnullStorageVol,
        opts: UploadOptions,
    ) -> Result<Upload, StreamError> {
        let args = StorageVolTransferArgs::new(vol.clone(), opts.offset, opts.length, opts.sparse);
        let mut up = self.upload::<StorageVolUpload>(&args).await?;
        if opts.length != 0 {
            up.h.meter.total = Some(opts.length);
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
        vol: &NonnullStorageVol,
        opts: DownloadOptions,
    ) -> Result<Download, StreamError> {
        let args = StorageVolTransferArgs::new(vol.clone(), opts.offset, opts.length, opts.sparse);
        let mut dl = self.download::<StorageVolDownload>(&args).await?;
        if opts.length != 0 {
            dl.h.meter.total = Some(opts.length);
        }
        Ok(dl)
    }
}
