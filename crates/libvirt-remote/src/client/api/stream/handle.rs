//! The core of every stream handle: [`Handle`] (open, wait for room, next item, finish,
//! abort, a failed local side, the cleanup of a failed upload), progress reporting
//! ([`Meter`]), and the public methods the three handles share (`handle_methods!`).

use std::future::poll_fn;
use std::io;
use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::Bytes;
use tracing::{Instrument, Span};

use super::{Progress, ProgressFn, TransferError};
use crate::client::Client;
use crate::client::shared::{Inner, StreamSlot, TRANSMIT_HIGH};
use crate::conn::{StreamError, StreamId, StreamItem, StreamMisuse, StreamMut};
use crate::proto::procs::storage::{StorageVolDelete, StorageVolDeleteFlags, StorageVolFlagsArgs};
use crate::proto::types::NonnullStorageVol;
use crate::proto::{Procedure, StreamArgs};
use crate::wire::xdr::{self, DecodeError};

/// The methods every stream handle shares, written once over its [`Handle`] (`h`):
/// `open_reply`, progress (`with_progress`, `with_total`), `finish`, `abort`.
macro_rules! handle_methods {
    ($T:ident { $($part:ident),* $(,)? }) => {
        impl $T {
            $( handle_methods!(@$part); )*
        }
    };
    (@open_reply) => {
        /// What the opening call returned besides the stream, as `P`'s return type (`P` is
        /// the procedure that opened it; e.g. the MIME type of `DomainScreenshot`, the cookie
        /// of `DomainMigratePrepareTunnel3`).
        ///
        /// # Errors
        ///
        /// When `P` is not the procedure that opened this stream and its return does not fit.
        pub fn open_reply<P: crate::proto::Procedure>(
            &self,
        ) -> Result<P::Ret, crate::wire::xdr::DecodeError> {
            self.h.open_reply::<P>()
        }
    };
    (@progress) => {
        /// Report progress to `f` as the transfer moves (after each chunk sent, or each item
        /// written by a download's writers or its reader; data and holes). `f` runs on the
        /// task driving the transfer, so it may hold state (`FnMut`) and needs no `Sync`.
        #[must_use]
        pub fn with_progress(
            mut self,
            f: impl FnMut(super::Progress) + Send + 'static,
        ) -> Self {
            self.h.meter.progress = Some(Box::new(f));
            self
        }

        /// Tell progress reports the transfer's total: it replaces what the options' length
        /// said; without either, an upload of a file counts the file's size, and a download
        /// has none (its stream does not announce one: the volume's capacity, say).
        #[must_use]
        pub fn with_total(mut self, total: u64) -> Self {
            self.h.meter.total = Some(total);
            self
        }
    };
    (@finish) => {
        /// Finish from our side and wait for the daemon's verdict.
        pub async fn finish(mut self) -> Result<(), crate::conn::StreamError> {
            self.h.finish().await
        }
    };
    (@abort) => {
        /// Abort on the wire and wait for the daemon's answer; returns how the stream ended.
        pub async fn abort(mut self, reason: &str) -> crate::conn::StreamError {
            self.h.abort(reason).await
        }
    };
}
pub(super) use handle_methods;

/// Progress reporting of a transfer: the callback and the total it is told.
#[derive(Default)]
pub(super) struct Meter {
    /// The whole transfer's logical bytes, when known.
    pub(super) total: Option<u64>,
    pub(super) progress: Option<ProgressFn>,
}

impl Meter {
    /// Tell the callback (if any) that `done` logical bytes are done.
    pub(super) fn report(&mut self, done: u64) {
        if let Some(p) = &mut self.progress {
            p(Progress {
                done,
                total: self.total,
            });
        }
    }
}

/// The volume an upload deletes if it fails.
pub(super) struct Cleanup {
    pub(super) client: Client,
    pub(super) vol: NonnullStorageVol,
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

/// The core every stream handle ([`Upload`], [`Download`], [`Duplex`]) is built on: the
/// stream's id and span, its end, the opening REPLY, progress reporting and the cleanup,
/// and the commands and waits they all share (open, wait for room, next item, finish,
/// abort, the local side failing).
pub(super) struct Handle {
    pub(super) inner: Arc<Inner>,
    pub(super) id: StreamId,
    pub(super) span: Span,
    pub(super) ended: bool,
    /// The payload of the REPLY that opened the stream.
    reply: Bytes,
    /// What to undo if the stream ends any way but a successful finish.
    pub(super) cleanup: Option<Cleanup>,
    /// Progress reporting.
    pub(super) meter: Meter,
}

impl Handle {
    pub(super) async fn open<P: Procedure>(
        client: &Client,
        args: &P::Args,
    ) -> Result<Self, StreamError>
    where
        P::Args: StreamArgs,
    {
        let sparse = args.sparse();
        // While the link is down, wait for it (or fail) as a call does (no deadline: only a
        // connection error can come back).
        if let Err(e) = client.admitted(None).await {
            return Err(match e {
                crate::conn::CallError::Connection(e) => StreamError::Connection(e),
                _ => StreamError::Connection(crate::conn::ConnectionError::locally_closed(
                    e.to_string(),
                )),
            });
        }
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
            meter: Meter::default(),
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

    /// `Name { id, .. }`, the start of a handle's `Debug` (which never shows data).
    pub(super) fn debug<'a, 'b>(
        &self,
        f: &'a mut std::fmt::Formatter<'b>,
        name: &str,
    ) -> std::fmt::DebugStruct<'a, 'b> {
        let mut d = f.debug_struct(name);
        d.field("id", &self.id);
        d
    }

    /// The opening REPLY decoded as `P`'s return (the core checked it decodes).
    pub(super) fn open_reply<P: Procedure>(&self) -> Result<P::Ret, DecodeError> {
        xdr::from_bytes(self.reply.clone())
    }

    /// Ready when the connection's send queue has room (or the connection is closed).
    pub(super) fn poll_writable(&mut self, cx: &mut Context<'_>) -> Poll<()> {
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
    pub(super) fn poll_item(
        &mut self,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<StreamItem, StreamError>>> {
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

    pub(super) fn poll_open(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), StreamError>> {
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

    pub(super) fn poll_end(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), StreamError>> {
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
    pub(super) async fn end(&mut self) -> Result<(), StreamError> {
        let r = poll_fn(|cx| self.poll_end(cx)).await;
        if r.is_err() {
            self.clean_up().await;
        }
        r
    }

    pub(super) async fn clean_up(&mut self) {
        if let Some(c) = self.cleanup.take() {
            c.run().instrument(self.span.clone()).await;
        }
    }

    /// Run `f` on the stream, then let the driver send what it queued.
    pub(super) fn command(
        &self,
        f: impl FnOnce(StreamMut<'_>) -> Result<(), StreamError>,
    ) -> Result<(), StreamError> {
        let mut st = self.inner.lock();
        let r = f(st.conn.stream(self.id));
        st.wake_driver();
        r
    }

    /// Pass `r` through; if the local side failed, abort first (see [`Self::fail_local`]).
    pub(super) async fn local<T>(&mut self, r: io::Result<T>) -> Result<T, TransferError> {
        match r {
            Ok(v) => Ok(v),
            Err(e) => Err(self.fail_local(e).await),
        }
    }

    /// A local source or sink failed: abort on the wire, wait for the daemon's answer, and
    /// report the local error (not the abort).
    pub(super) async fn fail_local(&mut self, e: io::Error) -> TransferError {
        let _ = self.abort(&e.to_string()).await;
        self.clean_up().await;
        TransferError::Local(e)
    }

    /// Finish from our side and wait for the daemon's verdict.
    pub(super) async fn finish(&mut self) -> Result<(), StreamError> {
        let span = self.span.clone();
        self.command(|mut s| s.finish())?;
        self.end().instrument(span).await
    }

    pub(super) async fn abort(&mut self, reason: &str) -> StreamError {
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
                meter: Meter::default(),
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
