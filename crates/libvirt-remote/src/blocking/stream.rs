//! Streams as `std::io`: a volume upload is a [`Write`], a download a [`Read`], a console
//! both. Each wraps the async stream end and runs it on the connection's private runtime;
//! dropping one unfinished aborts the stream on the wire, as the async end does.

use std::fmt;
use std::io::{self, Read, Write};
use std::path::Path;

use bytes::Bytes;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::{Domain, Runtime, StorageVol};
use crate::client::{self, DownloadOptions, Error, Progress, TransferError, UploadOptions};
use crate::conn::StreamError;

/// A client → daemon stream ([`StorageVol::upload`]) as a [`Write`]: each write queues its
/// bytes (waiting while the connection's send queue is full); [`finish`](Self::finish) returns
/// the daemon's verdict. Dropping it unfinished aborts the upload. A write's error carries the
/// [`StreamError`] ([`stream_error`](crate::client::stream_error)).
pub struct Upload {
    inner: client::Upload,
    rt: Runtime,
}

impl Upload {
    /// Send a hole of `len` bytes (sparse uploads only).
    pub fn send_hole(&mut self, len: u64) -> Result<(), StreamError> {
        self.rt.block_on(self.inner.send_hole(len))
    }

    /// Bytes queued so far (data only, not holes).
    pub fn sent(&self) -> u64 {
        self.inner.sent()
    }

    /// Tell `progress` the bytes done (and the total, if known) as they go.
    #[must_use]
    pub fn with_progress(self, progress: impl FnMut(Progress) + Send + 'static) -> Self {
        Self {
            inner: self.inner.with_progress(progress),
            rt: self.rt,
        }
    }

    /// Finish and wait for the daemon's verdict.
    pub fn finish(self) -> Result<(), StreamError> {
        self.rt.block_on(self.inner.finish())
    }

    /// Send the whole of file `path` (holes as holes on a sparse upload), then finish.
    pub fn send_file_and_finish(self, path: &Path) -> Result<u64, TransferError> {
        self.rt.block_on(self.inner.send_file_and_finish(path))
    }
}

impl Write for Upload {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        let data = Bytes::copy_from_slice(buf);
        self.rt
            .block_on(self.inner.send(data))
            .map_err(client::io_error)?;
        Ok(buf.len())
    }

    /// Bytes are queued on the connection as they are written; nothing to flush.
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// A daemon → client stream ([`StorageVol::download`], [`Domain::screenshot`]) as a [`Read`]:
/// holes read as zeros, end of file once the daemon confirmed the finish. Dropping it before
/// the end aborts the download.
pub struct Download {
    inner: Option<client::Download>,
    reader: Option<client::DownloadReader>,
    rt: Runtime,
}

impl Download {
    fn new(inner: client::Download, rt: Runtime) -> Self {
        Self {
            inner: Some(inner),
            reader: None,
            rt,
        }
    }

    /// Tell `progress` the bytes done as they arrive, out of `total` if given.
    #[must_use]
    pub fn with_progress(
        mut self,
        total: Option<u64>,
        progress: impl FnMut(Progress) + Send + 'static,
    ) -> Self {
        if let Some(mut dl) = self.inner.take() {
            if let Some(total) = total {
                dl = dl.with_total(total);
            }
            self.inner = Some(dl.with_progress(progress));
        }
        self
    }

    /// Write everything to file `path` (created or truncated; holes stay holes). Returns the
    /// logical size written. Only before any `read`.
    pub fn write_to_file(mut self, path: &Path) -> Result<u64, TransferError> {
        let Some(dl) = self.inner.take() else {
            return Err(TransferError::Local(io::Error::other(
                "write_to_file after read: the download was already being read",
            )));
        };
        self.rt.block_on(dl.write_to_file(path))
    }
}

impl Read for Download {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if let Some(dl) = self.inner.take() {
            self.reader = Some(dl.into_reader());
        }
        let reader = self.reader.as_mut().expect("one of the two is set");
        self.rt.block_on(reader.read(buf))
    }
}

/// A two-way stream (a console or channel: [`Domain::open_console`]) as [`Read`] and
/// [`Write`]: guest output is read, keystrokes are written. [`finish`](Self::finish) ends it
/// from our side; dropping it aborts it.
pub struct Duplex {
    inner: client::Duplex,
    rt: Runtime,
}

impl Duplex {
    /// End the stream from our side and wait for the daemon's verdict.
    pub fn finish(self) -> Result<(), StreamError> {
        self.rt.block_on(self.inner.finish())
    }
}

impl Read for Duplex {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.rt.block_on(self.inner.read(buf))
    }
}

impl Write for Duplex {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.rt.block_on(self.inner.write(buf))
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

macro_rules! debug_as_inner {
    ($($t:ident),*) => {$(
        impl fmt::Debug for $t {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.debug_tuple(stringify!($t)).finish_non_exhaustive()
            }
        }
    )*};
}

debug_as_inner!(Upload, Download, Duplex);

impl StorageVol {
    /// Write the volume ([`crate::StorageVol::upload`]); write to the [`Upload`], then
    /// [`finish`](Upload::finish).
    ///
    /// ```no_run
    /// # fn f(vol: &libvirt_remote::blocking::StorageVol) -> Result<(), Box<dyn std::error::Error>> {
    /// use std::io::Write;
    /// use libvirt_remote::client::UploadOptions;
    ///
    /// let mut up = vol.upload(UploadOptions::new())?;
    /// up.write_all(b"hello")?;
    /// up.finish()?;
    /// # Ok(()) }
    /// ```
    pub fn upload(&self, opts: UploadOptions) -> Result<Upload, StreamError> {
        let inner = self.rt.block_on(self.inner.upload(opts))?;
        Ok(Upload {
            inner,
            rt: self.rt.clone(),
        })
    }

    /// Read the volume ([`crate::StorageVol::download`]) from the [`Download`].
    ///
    /// ```no_run
    /// # fn f(vol: &libvirt_remote::blocking::StorageVol) -> Result<(), Box<dyn std::error::Error>> {
    /// use std::io::Read;
    /// use libvirt_remote::client::DownloadOptions;
    ///
    /// let mut bytes = Vec::new();
    /// vol.download(DownloadOptions::new())?.read_to_end(&mut bytes)?;
    /// # Ok(()) }
    /// ```
    pub fn download(&self, opts: DownloadOptions) -> Result<Download, StreamError> {
        let inner = self.rt.block_on(self.inner.download(opts))?;
        Ok(Download::new(inner, self.rt.clone()))
    }

    /// Write the whole of file `path` into the volume ([`crate::StorageVol::upload_file`]).
    pub fn upload_file(
        &self,
        path: &Path,
        progress: impl FnMut(Progress) + Send + 'static,
    ) -> Result<u64, Error> {
        self.rt.block_on(self.inner.upload_file(path, progress))
    }

    /// Read the whole volume into file `path` ([`crate::StorageVol::download_to_file`]).
    pub fn download_to_file(
        &self,
        path: &Path,
        progress: impl FnMut(Progress) + Send + 'static,
    ) -> Result<u64, Error> {
        self.rt
            .block_on(self.inner.download_to_file(path, progress))
    }
}

impl Domain {
    /// The domain's console ([`crate::Domain::open_console`]) as a [`Duplex`].
    pub fn open_console(&self, dev_name: Option<&str>, flags: u32) -> Result<Duplex, StreamError> {
        let inner = self.rt.block_on(self.inner.open_console(dev_name, flags))?;
        Ok(Duplex {
            inner,
            rt: self.rt.clone(),
        })
    }

    /// The domain's channel ([`crate::Domain::open_channel`]) as a [`Duplex`].
    pub fn open_channel(&self, name: Option<&str>, flags: u32) -> Result<Duplex, StreamError> {
        let inner = self.rt.block_on(self.inner.open_channel(name, flags))?;
        Ok(Duplex {
            inner,
            rt: self.rt.clone(),
        })
    }

    /// A screenshot ([`crate::Domain::screenshot`]): the MIME type and the image as a
    /// [`Download`].
    pub fn screenshot(
        &self,
        screen: u32,
        flags: u32,
    ) -> Result<(Option<String>, Download), StreamError> {
        let (mime, image) = self.rt.block_on(self.inner.screenshot(screen, flags))?;
        Ok((mime, Download::new(image, self.rt.clone())))
    }
}
