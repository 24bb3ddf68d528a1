//! The forwarded socket as a byte stream, and its teardown.

use std::future::Future;
use std::io;
use std::net::Shutdown;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::task::{Context, Poll};

use bytes::{Buf, Bytes};
use futures::task::AtomicWaker;
use russh::{ChannelMsg, ChannelReadHalf};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::sync::{Notify, mpsc};

use crate::{CloseReason, STDERR_LIMIT, SshError};

/// Most bytes put together into one `CHANNEL_DATA` packet, whatever the peer allows
/// (OpenSSH allows 32 KiB on the channels we open).
const PACKET_GATHER_MAX: usize = 256 << 10;

/// Longest a full packet's worth of data waits for the peer to open a full packet's worth of
/// window, once some window is open. Against OpenSSH the wait ends with its next
/// `CHANNEL_WINDOW_ADJUST` (microseconds to a millisecond); this bound is for a peer that
/// never re-opens a window that is not yet used up: the open part is sent then.
const HOLD_MAX: std::time::Duration = std::time::Duration::from_millis(2);

/// Where the stream's bytes go: the channel's writer, and the channel's open window.
///
/// `poll_write` behaves as russh's channel writer does (takes at most one packet of
/// `min(max packet, window, len)` bytes; may copy a packet, report pending, and hand that copy
/// over on the next call).
pub(crate) trait Sink: AsyncWrite + Send + Sync + Unpin {
    /// The most bytes a packet can carry now: `min(peer's max packet, open window)`.
    /// Pending only while russh's window lock is busy (it wakes `cx` then).
    fn poll_open(&mut self, cx: &mut Context<'_>) -> Poll<usize>;
}

type OpenProbe = Pin<Box<dyn Future<Output = usize> + Send + Sync>>;

/// russh's channel writer, with the channel's write half to read the open window from.
pub(crate) struct RusshSink {
    writer: Pin<Box<dyn AsyncWrite + Send + Sync>>,
    half: Arc<russh::ChannelWriteHalf<russh::client::Msg>>,
    /// The window read in progress (russh keeps the window behind an async lock).
    probe: Option<OpenProbe>,
}

impl RusshSink {
    pub(crate) fn new(half: russh::ChannelWriteHalf<russh::client::Msg>) -> Self {
        Self {
            writer: Box::pin(half.make_writer()),
            half: Arc::new(half),
            probe: None,
        }
    }
}

impl Sink for RusshSink {
    fn poll_open(&mut self, cx: &mut Context<'_>) -> Poll<usize> {
        let probe = self.probe.get_or_insert_with(|| {
            let half = Arc::clone(&self.half);
            Box::pin(async move { half.writable_packet_size().await })
        });
        let open = std::task::ready!(probe.as_mut().poll(cx));
        self.probe = None;
        Poll::Ready(open)
    }
}

impl AsyncWrite for RusshSink {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        self.writer.as_mut().poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.writer.as_mut().poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.writer.as_mut().poll_shutdown(cx)
    }
}

/// What ends a session's transport when the session finishes.
pub(crate) enum Killer {
    /// A second descriptor of the session's TCP socket, used only for `shutdown(2)`.
    Tcp(socket2::Socket),
    /// The session runs over a channel of the session before it (a jump host): finishing that
    /// one shuts its TCP socket down (or finishes the one before it), which ends every session
    /// tunnelled through it.
    Outer(Arc<Shared>),
}

/// State shared by the stream, its close handles and the two background tasks.
///
/// Nothing in here is locked across I/O: the reason is a `OnceLock` that readers only `get`,
/// the wakers are lock-free, and the killer is a second descriptor of the outermost TCP
/// socket (or the session before this one), used only for `shutdown(2)`.
pub(crate) struct Shared {
    reason: OnceLock<CloseReason>,
    /// The server sent EOF on the channel; reads end cleanly once the buffer drains.
    read_eof: AtomicBool,
    read_waker: AtomicWaker,
    write_waker: AtomicWaker,
    /// russh's session task has exited (the watcher saw its join handle resolve).
    terminated: AtomicBool,
    /// For async waiters: the reader pump, `CloseHandle::closed` and `terminated`.
    ended: Notify,
    killer: Killer,
}

impl Shared {
    pub(crate) fn new(killer: Killer) -> Self {
        Self {
            reason: OnceLock::new(),
            read_eof: AtomicBool::new(false),
            terminated: AtomicBool::new(false),
            read_waker: AtomicWaker::new(),
            write_waker: AtomicWaker::new(),
            ended: Notify::new(),
            killer,
        }
    }

    pub(crate) fn reason(&self) -> Option<&CloseReason> {
        self.reason.get()
    }

    /// The peer re-opened the channel's window (`CHANNEL_WINDOW_ADJUST`): wakes a writer
    /// waiting for window. Called from russh's session task for every adjust, so none is
    /// missed (russh's own `ChannelMsg::WindowAdjusted` is dropped when the channel's queue
    /// is full).
    pub(crate) fn window_opened(&self) {
        self.write_waker.wake();
    }

    /// Ends the session: the first reason wins, every call shuts the socket down and wakes
    /// every parked reader, writer and waiter.
    ///
    /// `shutdown(SHUT_RDWR)` on our own descriptor is what makes russh's session task stop: a
    /// write stalled in the kernel fails with `EPIPE` and a pending read sees EOF, at once.
    /// Going through russh instead (`Channel::close`, `Handle::disconnect`) queues behind that
    /// very write — see the crate docs, "Teardown".
    pub(crate) fn finish(&self, reason: CloseReason) {
        if self.reason.set(reason).is_ok()
            && let Some(r) = self.reason.get()
        {
            tracing::debug!(reason = %r, "ssh session ending");
        }
        match &self.killer {
            // ENOTCONN once the peer is gone or on a second call: nothing left to do then.
            Killer::Tcp(socket) => {
                let _ = socket.shutdown(Shutdown::Both);
            }
            Killer::Outer(outer) => outer.finish(CloseReason::Local),
        }
        self.read_waker.wake();
        self.write_waker.wake();
        self.ended.notify_waiters();
    }

    /// Resolves once [`finish`](Self::finish) has run.
    pub(crate) async fn wait_ended(&self) -> CloseReason {
        loop {
            let notified = self.ended.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if let Some(r) = self.reason.get() {
                return r.clone();
            }
            notified.await;
        }
    }

    /// Records that russh's session task has exited.
    pub(crate) fn set_terminated(&self) {
        self.terminated.store(true, Ordering::Release);
        self.ended.notify_waiters();
    }

    /// Resolves once this session's russh task and those of the hops before it have exited.
    async fn wait_terminated(&self) {
        let mut hop = self;
        loop {
            loop {
                let notified = hop.ended.notified();
                tokio::pin!(notified);
                notified.as_mut().enable();
                if hop.terminated.load(Ordering::Acquire) {
                    break;
                }
                notified.await;
            }
            match &hop.killer {
                Killer::Outer(outer) => hop = outer,
                Killer::Tcp(_) => return,
            }
        }
    }

    fn closed_locally(&self) -> Option<&CloseReason> {
        self.reason
            .get()
            .filter(|r| matches!(r, CloseReason::Local | CloseReason::Dropped))
    }
}

/// What an exec channel's remote command told us besides its stdout.
#[derive(Debug, Default)]
pub(crate) struct RemoteExit {
    /// The command's summary, for the error.
    pub command: String,
    stderr: Vec<u8>,
    status: Option<u32>,
    signal: Option<String>,
}

impl RemoteExit {
    pub(crate) fn new(command: String) -> Self {
        Self {
            command,
            ..Self::default()
        }
    }

    /// Keeps the first [`STDERR_LIMIT`] bytes of stderr.
    pub(crate) fn stderr(&mut self, data: &[u8]) {
        let room = STDERR_LIMIT.saturating_sub(self.stderr.len());
        self.stderr.extend_from_slice(&data[..room.min(data.len())]);
    }

    /// Records an `exit-status` / `exit-signal` request; `true` if it was one.
    pub(crate) fn record(&mut self, msg: &ChannelMsg) -> bool {
        match msg {
            ChannelMsg::ExitStatus { exit_status } => self.status = Some(*exit_status),
            ChannelMsg::ExitSignal {
                signal_name,
                error_message,
                ..
            } => {
                self.signal = Some(format!("{signal_name:?}"));
                self.stderr(error_message.as_bytes());
            }
            ChannelMsg::ExtendedData { data, ext: 1 } => self.stderr(data),
            _ => return false,
        }
        true
    }

    /// The command succeeded: exit status 0 (or no status and nothing on stderr).
    fn succeeded(&self) -> bool {
        self.signal.is_none()
            && match self.status {
                Some(s) => s == 0,
                None => self.stderr.iter().all(u8::is_ascii_whitespace),
            }
    }

    /// The close reason for a command that did not succeed.
    pub(crate) fn failure(&self) -> CloseReason {
        CloseReason::RemoteCommand {
            command: self.command.clone(),
            status: self.status,
            signal: self.signal.clone(),
            stderr: String::from_utf8_lossy(&self.stderr).into_owned(),
        }
    }
}

/// Moves channel data from russh into our bounded buffer, so russh's per-channel queue (whose
/// fullness parks the whole session, keepalives included) stays drained while the reader is
/// merely slow. When our buffer is full too, backpressure reaches the session: russh refills
/// the server's window on receipt, so there is no other flow control.
///
/// On an exec channel (`exec` is `Some`) the end of the stream waits for the channel's close:
/// a command that exits 0 is a clean end of stream, one that fails is an error carrying its
/// exit status and stderr (what "nc: not found" or a refused socket looks like).
pub(crate) async fn pump(
    mut channel: ChannelReadHalf,
    tx: mpsc::Sender<Bytes>,
    shared: Arc<Shared>,
    mut exec: Option<RemoteExit>,
    early: Vec<ChannelMsg>,
) {
    let mut tx = Some(tx);
    let mut early = early.into_iter();
    loop {
        let msg = if let Some(m) = early.next() {
            Some(m)
        } else {
            tokio::select! {
                _ = shared.wait_ended() => return,
                m = channel.wait() => m,
            }
        };
        match msg {
            Some(ChannelMsg::Data { data }) => {
                let Some(sender) = tx.as_ref() else { continue };
                tokio::select! {
                    _ = shared.wait_ended() => return,
                    r = sender.send(data) => if r.is_err() { return },
                }
            }
            Some(ChannelMsg::Eof) if exec.is_none() => {
                shared.read_eof.store(true, Ordering::Release);
                // The reader sees the end once it has drained what came before.
                tx = None;
            }
            Some(ChannelMsg::Close) => {
                match exec.as_ref() {
                    Some(x) if !x.succeeded() => shared.finish(x.failure()),
                    _ => {
                        shared.read_eof.store(true, Ordering::Release);
                        drop(tx.take());
                        shared.finish(CloseReason::ChannelClosed);
                    }
                }
                return;
            }
            Some(m) => {
                if let Some(x) = exec.as_mut() {
                    x.record(&m);
                }
            }
            // The session task is gone; the watcher records why.
            None => return,
        }
    }
}

/// The remote unix socket as a byte stream: `AsyncRead + AsyncWrite`.
///
/// Errors are `io::Error`s whose inner error is an [`SshError`]; once the session has ended,
/// every call fails with [`SshError::Closed`] and the reason.
///
/// # Drop behavior
///
/// Dropping the stream is [`CloseHandle::close`] with [`CloseReason::Dropped`]: the TCP socket
/// is shut down at once, without a polite channel close (which could wait behind a stalled
/// write). For an orderly end, `shutdown().await` the stream first (sends channel EOF) and read
/// until EOF, under your own timeout.
///
/// # Cancel safety
///
/// `poll_read`/`poll_write` keep no partial state that a dropped future would lose: a write
/// returns `Ok(n)` only once the stream has taken `n` bytes, and a read returns bytes only
/// when it copies them out.
///
/// # Vectored writes
///
/// A vectored write becomes SSH packets of the peer's maximum size, whatever its slices'
/// boundaries (the libvirt client hands over each message's 28-byte head and its body as
/// two slices; written one by one, the head went out as a packet of its own). What a write
/// took is queued to the session task when it returns.
///
/// # Window-driven sends
///
/// While the caller has a full packet's worth of bytes, a packet goes only once the peer's
/// window has a full packet open (or after 2 ms with some window open). Sending
/// whatever was open made a bulk upload window bound against OpenSSH: sshd re-opens its
/// window in the steps its consumer drains (16 KiB for `nc`), and each step let one 16 KiB
/// packet out, so sshd read and decrypted twice the packets per byte. The rest of a write
/// that is less than a packet (the end of the data) goes as soon as any window is open.
pub struct SshStream {
    shared: Arc<Shared>,
    rx: mpsc::Receiver<Bytes>,
    chunk: Bytes,
    writer: Box<dyn Sink>,
    /// Where a packet that spans the caller's slices is put together (one packet long).
    scratch: Vec<u8>,
    /// The size packets are made to: the peer's maximum packet size.
    packet: usize,
    /// The last `poll_write` of the writer was pending: russh may hold a packet it copied,
    /// which the next call must hand over before the window is read again.
    sink_holds: bool,
    /// Bounds a wait for a full packet's worth of window ([`HOLD_MAX`]).
    hold: Option<Pin<Box<tokio::time::Sleep>>>,
    write_shut: bool,
}

impl std::fmt::Debug for SshStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SshStream")
            .field("closed", &self.shared.reason())
            .finish_non_exhaustive()
    }
}

impl SshStream {
    /// `packet`: the peer's maximum packet size, the size vectored writes are cut to.
    pub(crate) fn new(
        shared: Arc<Shared>,
        rx: mpsc::Receiver<Bytes>,
        writer: Box<dyn Sink>,
        packet: usize,
    ) -> Self {
        let packet = packet.clamp(1, PACKET_GATHER_MAX);
        Self {
            shared,
            rx,
            chunk: Bytes::new(),
            writer,
            scratch: Vec::with_capacity(packet),
            packet,
            sink_holds: false,
            hold: None,
            write_shut: false,
        }
    }

    /// The size packets are made to.
    pub(crate) fn packet_size(&self) -> usize {
        self.packet
    }

    /// A handle that can close this stream from anywhere.
    pub fn close_handle(&self) -> CloseHandle {
        CloseHandle {
            shared: Arc::clone(&self.shared),
        }
    }

    fn end_of_reads(&self, cx: &Context<'_>) -> Poll<io::Result<()>> {
        if self.shared.read_eof.load(Ordering::Acquire) {
            return Poll::Ready(Ok(()));
        }
        self.shared.read_waker.register(cx.waker());
        match self.shared.reason() {
            Some(CloseReason::ChannelClosed) => Poll::Ready(Ok(())),
            Some(r) => Poll::Ready(Err(closed(r))),
            // The pump saw the session vanish before the watcher recorded why; it wakes us.
            None => Poll::Pending,
        }
    }
}

fn closed(reason: &CloseReason) -> io::Error {
    SshError::Closed {
        reason: reason.clone(),
    }
    .into()
}

impl AsyncRead for SshStream {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        if let Some(r) = this.shared.closed_locally() {
            return Poll::Ready(Err(closed(r)));
        }
        let start = buf.filled().len();
        while buf.remaining() > 0 {
            if !this.chunk.is_empty() {
                let n = buf.remaining().min(this.chunk.len());
                buf.put_slice(&this.chunk[..n]);
                this.chunk.advance(n);
                continue;
            }
            match this.rx.poll_recv(cx) {
                Poll::Ready(Some(b)) => this.chunk = b,
                Poll::Ready(None) if buf.filled().len() == start => return this.end_of_reads(cx),
                Poll::Pending if buf.filled().len() == start => {
                    this.shared.read_waker.register(cx.waker());
                    if let Some(r) = this.shared.closed_locally() {
                        return Poll::Ready(Err(closed(r)));
                    }
                    return Poll::Pending;
                }
                // Return what we have; the end or the wait comes on the next call.
                Poll::Ready(None) | Poll::Pending => break,
            }
        }
        Poll::Ready(Ok(()))
    }
}

impl AsyncWrite for SshStream {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        self.get_mut().write_packets(cx, &[io::IoSlice::new(buf)])
    }

    /// Cuts the slices into full-size SSH packets (see "Vectored writes" above).
    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        self.get_mut().write_packets(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        true
    }

    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        // Writes are queued to the session task, which flushes them itself.
        match self.shared.reason() {
            Some(r) => Poll::Ready(Err(closed(r))),
            None => Poll::Ready(Ok(())),
        }
    }

    /// Sends channel EOF (a half-close; the remote socket sees end of input).
    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        if let Some(r) = this.shared.reason() {
            return Poll::Ready(Err(closed(r)));
        }
        if this.write_shut {
            return Poll::Ready(Ok(()));
        }
        match Pin::new(&mut this.writer).poll_shutdown(cx) {
            Poll::Ready(Ok(())) => {
                this.write_shut = true;
                Poll::Ready(Ok(()))
            }
            Poll::Ready(Err(_)) | Poll::Pending => this.park_writer(cx),
        }
    }
}

impl SshStream {
    fn park_writer<T>(&self, cx: &Context<'_>) -> Poll<io::Result<T>> {
        self.shared.write_waker.register(cx.waker());
        match self.shared.reason() {
            Some(r) => Poll::Ready(Err(closed(r))),
            None => Poll::Pending,
        }
    }

    /// Hands the bytes of `bufs` to russh in order, one packet at a time: a slice with a
    /// packet's worth left goes as it is, a packet that spans slices is copied together
    /// first. `Ok(n)` counts what russh took; pending only when it took nothing.
    ///
    /// russh copies a packet and may then wait for room in the session's queue: the copy
    /// stays with it, and the next write completes that packet whatever bytes it passes.
    /// It is always the packet at the caller's current position (made from the same bytes:
    /// a caller repeats what was not taken), so the count it returns fits the stream.
    fn write_packets(
        &mut self,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        if let Some(r) = self.shared.reason() {
            return Poll::Ready(Err(closed(r)));
        }
        if self.write_shut {
            return Poll::Ready(Err(io::Error::new(
                io::ErrorKind::BrokenPipe,
                "write after shutdown",
            )));
        }
        let (mut taken, mut at, mut off) = (0, 0, 0);
        loop {
            while at < bufs.len() && off == bufs[at].len() {
                (at, off) = (at + 1, 0);
            }
            let Some(b) = bufs.get(at) else { break };
            let cur = &b[off..];
            let packet: &[u8] =
                if cur.len() < self.packet && bufs[at + 1..].iter().any(|b| !b.is_empty()) {
                    self.scratch.clear();
                    self.scratch.extend_from_slice(cur);
                    for b in &bufs[at + 1..] {
                        let n = (self.packet - self.scratch.len()).min(b.len());
                        self.scratch.extend_from_slice(&b[..n]);
                        if self.scratch.len() == self.packet {
                            break;
                        }
                    }
                    &self.scratch
                } else {
                    cur
                };
            if !self.sink_holds {
                let full = (packet.len() >= self.packet).then_some(self.packet);
                match poll_window(&mut *self.writer, &mut self.hold, &self.shared, cx, full) {
                    Poll::Ready(()) => {}
                    Poll::Pending if taken > 0 => break,
                    Poll::Pending => return self.park_writer(cx),
                }
            }
            let written = Pin::new(&mut *self.writer).poll_write(cx, packet);
            self.sink_holds = written.is_pending();
            let mut n = match written {
                Poll::Ready(Ok(n)) => n,
                // Come back for the rest.
                Poll::Ready(Err(_)) | Poll::Pending if taken > 0 => break,
                // russh never wakes a writer parked on window credit when the session dies,
                // and its send error does not say why. So wait on our own end signal, which
                // carries the reason and is always raised when the session ends.
                Poll::Ready(Err(_)) | Poll::Pending => return self.park_writer(cx),
            };
            taken += n;
            while n > 0 {
                let k = n.min(bufs[at].len() - off);
                (off, n) = (off + k, n - k);
                if off == bufs[at].len() {
                    (at, off) = (at + 1, 0);
                }
            }
        }
        Poll::Ready(Ok(taken))
    }
}

/// Ready when a packet may go: any window is open and either the packet is not a full one
/// (`full` is `None`: the end of the data) or `full` bytes of window are open, or some
/// window has been open for [`HOLD_MAX`]. Pending with `cx` registered for the next window adjust
/// (through [`Shared::window_opened`]) or the hold's end.
fn poll_window(
    sink: &mut dyn Sink,
    hold: &mut Option<Pin<Box<tokio::time::Sleep>>>,
    shared: &Shared,
    cx: &mut Context<'_>,
    full: Option<usize>,
) -> Poll<()> {
    // Registered before the window is read: an adjust after the read wakes us.
    shared.write_waker.register(cx.waker());
    let open = std::task::ready!(sink.poll_open(cx));
    if open == 0 {
        *hold = None;
        return Poll::Pending;
    }
    if full.is_none_or(|want| open >= want) {
        *hold = None;
        return Poll::Ready(());
    }
    let h = hold.get_or_insert_with(|| Box::pin(tokio::time::sleep(HOLD_MAX)));
    std::task::ready!(h.as_mut().poll(cx));
    *hold = None;
    Poll::Ready(())
}

impl Drop for SshStream {
    fn drop(&mut self) {
        self.shared.finish(CloseReason::Dropped);
    }
}

/// Closes an [`SshStream`] from anywhere, and tells when and why its session ended.
///
/// Cheap to clone; outliving the stream is fine.
#[derive(Clone)]
pub struct CloseHandle {
    pub(crate) shared: Arc<Shared>,
}

impl std::fmt::Debug for CloseHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CloseHandle")
            .field("closed", &self.shared.reason())
            .finish()
    }
}

impl CloseHandle {
    /// Tears the session down now: shuts the TCP socket down, so every pending and later read
    /// and write on the stream fails at once with [`SshError::Closed`] and
    /// [`CloseReason::Local`], and russh's session task ends.
    ///
    /// Synchronous, never blocks, takes no lock that a reader or writer can hold, idempotent
    /// (a later call changes nothing, including the recorded reason), and cannot fail.
    ///
    /// It deliberately does **not** close the SSH channel or send `SSH_MSG_DISCONNECT`: both
    /// go through russh's session task, which writes to the socket inline, so behind a write
    /// stalled on a vanished host they would wait for the kernel's retransmission timeout
    /// (~15 minutes) — the Go predecessor's H1 bug. The server sees the TCP connection end.
    pub fn close(&self) {
        self.shared.finish(CloseReason::Local);
    }

    /// Why the session ended, or `None` while it is up.
    pub fn closed_reason(&self) -> Option<CloseReason> {
        self.shared.reason().cloned()
    }

    /// Whether the session has ended.
    pub fn is_closed(&self) -> bool {
        self.shared.reason().is_some()
    }

    /// Resolves when the session ends, with the reason.
    pub async fn closed(&self) -> CloseReason {
        self.shared.wait_ended().await
    }

    /// Resolves once russh's session task has exited: nothing of this session is left
    /// running. Follows [`close`](Self::close) within milliseconds, whatever the peer does.
    pub async fn terminated(&self) {
        self.shared.wait_terminated().await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    /// How the fake peer opens its window.
    #[derive(Clone, Copy)]
    struct Peer {
        /// Its maximum packet size.
        packet: usize,
        /// Window opened per adjust.
        step: usize,
        /// Its whole window: an adjust never opens more than this.
        cap: usize,
        /// Adjusts only once the window is used up.
        lazy: bool,
    }

    impl Peer {
        fn steps(packet: usize, step: usize) -> Self {
            Self {
                packet,
                step,
                cap: usize::MAX,
                lazy: false,
            }
        }
    }

    /// Stands in for russh's channel writer: takes at most `min(packet, window, len)` bytes
    /// per call, and like russh it copies a packet, then may report pending (`stall`) and
    /// hand that copy over on the next call whatever that call passes. The peer opens `step`
    /// more window whenever the stream looks at a window smaller than a packet (an adjust
    /// arriving while the stream waits), and wakes the stream.
    struct Channel {
        peer: Peer,
        window: usize,
        stall: bool,
        count: usize,
        held: Option<Vec<u8>>,
        packets: Arc<Mutex<Vec<Vec<u8>>>>,
    }

    impl Sink for Channel {
        fn poll_open(&mut self, cx: &mut Context<'_>) -> Poll<usize> {
            let p = self.peer;
            let may = if p.lazy {
                self.window == 0
            } else {
                self.window.saturating_add(p.step) <= p.cap
            };
            if may && self.window < p.packet {
                self.window = self.window.saturating_add(p.step).min(p.cap);
                cx.waker().wake_by_ref();
            }
            Poll::Ready(self.window.min(p.packet))
        }
    }

    impl AsyncWrite for Channel {
        fn poll_write(
            self: Pin<&mut Self>,
            cx: &mut Context<'_>,
            buf: &[u8],
        ) -> Poll<io::Result<usize>> {
            let this = self.get_mut();
            let p = if let Some(p) = this.held.take() {
                p
            } else {
                let n = buf.len().min(this.peer.packet).min(this.window);
                assert!(n > 0, "written with no window open");
                this.window -= n;
                buf[..n].to_vec()
            };
            if this.stall {
                this.stall = false;
                this.held = Some(p);
                cx.waker().wake_by_ref();
                return Poll::Pending;
            }
            this.count += 1;
            this.stall = this.count % 3 == 1;
            let n = p.len();
            this.packets.lock().unwrap().push(p);
            Poll::Ready(Ok(n))
        }

        fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
            Poll::Ready(Ok(()))
        }

        fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
            Poll::Ready(Ok(()))
        }
    }

    fn stream(peer: Peer, window: usize) -> (SshStream, Arc<Mutex<Vec<Vec<u8>>>>) {
        let socket = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None);
        let shared = Arc::new(Shared::new(Killer::Tcp(socket.unwrap())));
        let seen = Arc::new(Mutex::new(Vec::new()));
        let channel = Channel {
            peer,
            window,
            stall: false,
            count: 0,
            held: None,
            packets: Arc::clone(&seen),
        };
        let (_tx, rx) = mpsc::channel(1);
        (
            SshStream::new(shared, rx, Box::new(channel), peer.packet),
            seen,
        )
    }

    /// Writes `msgs` as the libvirt client does (each message's 28-byte head and its body
    /// as two slices of one vectored write, repeated until all is taken); returns the
    /// packets the channel saw.
    async fn packets_for(msgs: &[Vec<u8>], peer: Peer) -> Vec<Vec<u8>> {
        let (mut s, seen) = stream(peer, 0);
        let slices: Vec<&[u8]> = msgs
            .iter()
            .flat_map(|m| [&m[..28.min(m.len())], &m[28.min(m.len())..]])
            .collect();
        let total: usize = msgs.iter().map(Vec::len).sum();
        let mut done = 0;
        let write = async {
            while done < total {
                // The caller's queue from where it stands: the rest of the slices.
                let mut skip = done;
                let mut io = Vec::new();
                for sl in &slices {
                    if skip >= sl.len() {
                        skip -= sl.len();
                        continue;
                    }
                    io.push(io::IoSlice::new(&sl[skip..]));
                    skip = 0;
                }
                let n =
                    futures::future::poll_fn(|cx| Pin::new(&mut s).poll_write_vectored(cx, &io))
                        .await
                        .unwrap();
                done += n;
            }
        };
        tokio::time::timeout(std::time::Duration::from_secs(20), write)
            .await
            .expect("the writes made no progress");
        std::mem::take(&mut *seen.lock().unwrap())
    }

    fn message(i: usize, body: usize) -> Vec<u8> {
        (0..28 + body).map(|k| (k * 31 + i * 7) as u8).collect()
    }

    const ANY_WINDOW: usize = 1 << 40;

    #[tokio::test]
    async fn vectored_writes_become_full_size_packets() {
        let msgs: Vec<Vec<u8>> = (0..6).map(|i| message(i, 128 << 10)).collect();
        let packets = packets_for(&msgs, Peer::steps(32_768, ANY_WINDOW)).await;
        let sizes: Vec<usize> = packets.iter().map(Vec::len).collect();
        let all: Vec<u8> = packets.concat();
        assert!(all == msgs.concat(), "the bytes arrive in order, each once");
        // 6 × 131,100 bytes = 24 full packets and 6 × 28 bytes left for the last one.
        assert_eq!(
            sizes.iter().filter(|&&n| n != 32_768).count(),
            1,
            "every packet but the last is full size: {sizes:?}"
        );
        assert_eq!(sizes.len(), 25, "{sizes:?}");
    }

    /// sshd behind `nc` re-opens its window 16 KiB at a time; sent at once, each step was a
    /// 16 KiB packet.
    #[tokio::test]
    async fn a_window_opened_in_small_steps_still_gets_full_packets() {
        let msgs: Vec<Vec<u8>> = (0..6).map(|i| message(i, 128 << 10)).collect();
        let packets = packets_for(&msgs, Peer::steps(32_768, 16_384)).await;
        let sizes: Vec<usize> = packets.iter().map(Vec::len).collect();
        assert!(
            packets.concat() == msgs.concat(),
            "the bytes arrive in order"
        );
        assert_eq!(
            sizes.iter().filter(|&&n| n != 32_768).count(),
            1,
            "every packet but the last is full size: {sizes:?}"
        );
    }

    #[tokio::test]
    async fn a_small_window_or_packet_limit_keeps_the_bytes_in_order() {
        let msgs: Vec<Vec<u8>> = (0..5).map(|i| message(i, 1000 + i * 40_000)).collect();
        for (packet, step) in [(32_768, 5_000), (32_768, 32_768), (1_000, 777), (40_000, 1)] {
            let all: Vec<u8> = packets_for(&msgs, Peer::steps(packet, step)).await.concat();
            assert!(all == msgs.concat(), "packet {packet}, step {step}");
        }
    }

    /// A peer whose whole window is smaller than a packet, or that re-opens only a used-up
    /// window: the open part goes after the hold, nothing waits for ever.
    #[tokio::test]
    async fn a_window_that_never_opens_a_full_packet_still_takes_the_bytes() {
        let msgs: Vec<Vec<u8>> = (0..3).map(|i| message(i, 50_000)).collect();
        for (cap, lazy) in [(20_000, false), (ANY_WINDOW, true)] {
            let peer = Peer {
                packet: 32_768,
                step: 20_000,
                cap,
                lazy,
            };
            let all: Vec<u8> = packets_for(&msgs, peer).await.concat();
            assert!(all == msgs.concat(), "cap {cap}, lazy {lazy}");
        }
    }

    /// The end of the data (less than a packet) goes at once with whatever window is open.
    #[test]
    fn the_end_of_the_data_does_not_wait_for_a_full_window() {
        let (mut s, seen) = stream(Peer::steps(32_768, 0), 16_384);
        let waker = futures::task::noop_waker();
        let mut cx = Context::from_waker(&waker);
        let data = vec![7u8; 10_000];
        let r = Pin::new(&mut s).poll_write(&mut cx, &data);
        assert!(matches!(r, Poll::Ready(Ok(10_000))), "{r:?}");
        assert!(s.hold.is_none(), "no hold armed for the end of the data");
        assert_eq!(seen.lock().unwrap().concat(), data);
    }

    #[test]
    fn the_types_fit_the_libvirt_client() {
        fn stream<T: AsyncRead + AsyncWrite + Unpin + Send + Sync + 'static>() {}
        fn handle<T: Clone + Send + Sync + 'static>() {}
        fn error<T: std::error::Error + Send + Sync + 'static>() {}
        stream::<SshStream>();
        handle::<CloseHandle>();
        error::<SshError>();
    }
}
