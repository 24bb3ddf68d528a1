//! The per-host link pool: one libvirt connection per host, shared by every concurrent
//! operation of the entry, replaced on the next call once it is dead.
//!
//! # Death, in this order (H1)
//!
//! A link is exactly as dead as its [`Client`]: [`Link::mark_dead`] is
//! [`Client::close_with`], which first *publishes* the reason (a short critical section: no
//! await, no I/O), so every caller waiting on the link is released at once and reads it back
//! ([`Client::error`], [`Link::dead_reason`]). Only then, outside any lock, does the client
//! kill the transport (for SSH: a `shutdown(2)` of the TCP socket). Only the first close
//! kills; later ones return immediately, even while the first kill still runs. There is
//! deliberately no once-style primitive around the kill: `OnceLock::get_or_init` or
//! `std::sync::Once` would make every other caller wait for the first one's kill, which is
//! how the Go predecessor pinned a whole operator behind one stalled SSH write for the
//! kernel's 15-minute retransmission timeout. The link keeps no state of its own about it.
//!
//! # Dialling
//!
//! Every transport (unix, tcp, `qemu+ssh://`) is dialled by [`Client::connect`]; the `ssh`
//! feature of libvirt-remote maps the URI onto ssh-socket (user, port, `keyfile`,
//! `known_hosts`, `no_verify`, `socket`; no user in the URI means the local login name, as
//! ssh and libvirt use) and installs the socket kill.
//!
//! # Budgets
//!
//! Every call goes through [`Link::call`], which applies the call budget. A call over its
//! budget, or one that sees the connection die, marks the link dead with the reason; the
//! next [`LinkPool::link`] connects a new one.
//!
//! # One connection per host
//!
//! Which connection is the host's is libvirt-remote's [`Pool`]: it dials once for concurrent
//! callers (they share the attempt and its outcome), hands out the live connection and
//! dials again once it is dead. Connecting never blocks `mark_dead`, which takes no lock a
//! connecting task holds. A [`LinkPool`] wraps the pool's connection in a [`Link`].

use std::num::NonZeroUsize;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use libvirt_remote::client::uri::LibvirtUri;
use libvirt_remote::client::{Client, ConnectError, ConnectOptions, KillFn, Pool, PoolOptions};
use libvirt_remote::conn::handshake::HandshakeOptions;
use libvirt_remote::conn::{CallError, ConnectionError};
use libvirt_remote::proto::Procedure;
use libvirt_remote::ssh_socket::SshConfigFile;

use crate::classify::LvError;

/// One live (or dead) connection to a host.
pub struct Link {
    id: u64,
    client: Client,
    call_budget: Duration,
}

impl std::fmt::Debug for Link {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Link")
            .field("id", &self.id)
            .field("dead", &self.dead_reason())
            .finish_non_exhaustive()
    }
}

/// What a caller of a dead link reads: the reason given to the close, or the connection's
/// own error when it died by itself.
fn reason(e: &ConnectionError) -> Arc<str> {
    match e {
        ConnectionError::LocallyClosed { reason } => reason.clone(),
        other => other.to_string().into(),
    }
}

impl Link {
    /// Wraps a connected client; calls on it are bounded by `call_budget`.
    pub fn new(id: u64, client: Client, call_budget: Duration) -> Self {
        Self {
            id,
            client,
            call_budget,
        }
    }

    /// A number telling links of one pool apart (increases with each connect).
    pub fn id(&self) -> u64 {
        self.id
    }

    /// The client, for streams (which carry their own budgets).
    pub fn client(&self) -> &Client {
        &self.client
    }

    /// The per-call budget.
    pub fn call_budget(&self) -> Duration {
        self.call_budget
    }

    /// Why the link is dead (the first reason it was marked dead with, or why its connection
    /// ended by itself), if it is.
    pub fn dead_reason(&self) -> Option<Arc<str>> {
        self.client.error().as_ref().map(reason)
    }

    /// Dead: marked, or its connection ended by itself.
    pub fn is_dead(&self) -> bool {
        self.client.is_closed()
    }

    /// Resolves with the reason once the link is dead.
    pub async fn dead(&self) -> Arc<str> {
        reason(&self.client.closed().await)
    }

    /// Marks the link dead with `reason`: publish first (waiters are released and read the
    /// reason), then kill the transport outside any lock ([`Client::close_with`]). Only the
    /// first call kills; every later one returns at once, even while the first kill is still
    /// running.
    pub fn mark_dead(&self, reason: impl Into<Arc<str>>) {
        let reason = reason.into();
        if self.client.close_with(reason.clone()) {
            tracing::warn!(link = self.id, %reason, "libvirt link marked dead");
        }
    }

    /// The error every caller of a dead link gets: the first reason, read back.
    pub fn dead_error(&self) -> LvError {
        LvError::Dead {
            reason: self.dead_reason().unwrap_or_else(|| "closed".into()),
        }
    }

    /// One call, bounded by the call budget. A budget overrun or a connection error marks
    /// the link dead; a caller parked here is released as soon as anyone marks it dead.
    pub async fn call<P: Procedure>(&self, args: &P::Args) -> Result<P::Ret, LvError> {
        self.call_within::<P>(args, self.call_budget, "call budget")
            .await
    }

    /// [`call`](Self::call) with its own `budget` (named `what` in the error), for the
    /// calls that legitimately take longer than any other (a domain start). An overrun
    /// marks the link dead all the same: nothing tells a slow daemon from a stuck one.
    pub async fn call_within<P: Procedure>(
        &self,
        args: &P::Args,
        budget: Duration,
        what: &str,
    ) -> Result<P::Ret, LvError> {
        if self.is_dead() {
            return Err(self.dead_error());
        }
        let result = tokio::select! {
            r = self.client.call_timeout::<P>(args, budget) => r,
            _ = self.client.closed() => return Err(self.dead_error()),
        };
        match result {
            Ok(v) => Ok(v),
            Err(CallError::TimedOut) => {
                self.mark_dead(format!(
                    "{} did not answer within the {what} of {budget:?}",
                    P::NAME,
                ));
                Err(self.dead_error())
            }
            Err(CallError::Connection(e)) => {
                self.mark_dead(format!("connection lost during {}: {e}", P::NAME));
                Err(self.dead_error())
            }
            Err(e) => Err(LvError::Call(e)),
        }
    }
}

impl Drop for Link {
    fn drop(&mut self) {
        // The client closes itself when its last clone drops; say why in the logs.
        self.client.close();
    }
}

/// The link pool of one host: the one connection is [`Pool`]'s (libvirt-remote owns "one
/// connection per URI": dial once for concurrent callers, redial a dead one); this wraps it
/// in a [`Link`] with the call budget and a number.
pub struct LinkPool {
    uri: String,
    parsed: LibvirtUri,
    dial: Dial,
    call_budget: Duration,
    pool: Pool,
    /// The link around the pool's current connection.
    current: Mutex<Option<Arc<Link>>>,
    next_id: std::sync::atomic::AtomicU64,
}

impl std::fmt::Debug for LinkPool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LinkPool")
            .field("uri", &self.uri)
            .finish_non_exhaustive()
    }
}

/// How a link pool dials.
#[derive(Debug, Clone)]
struct Dial {
    ssh_config: SshConfigFile,
    connect_budget: Duration,
    max_in_flight: Option<NonZeroUsize>,
}

impl Dial {
    /// [`connect_options`] with the OpenSSH client configuration, the connect budget and
    /// the cap on calls in flight.
    fn options(&self, parsed: &LibvirtUri) -> ConnectOptions {
        let mut opts = connect_options(parsed, None);
        opts.ssh.config_file = self.ssh_config.clone();
        opts.connect_timeout = Some(self.connect_budget);
        opts.config.max_in_flight = self.max_in_flight;
        opts
    }

    /// The pool our links come from; a link is never closed for being idle (the provider
    /// keeps its one).
    fn pool(&self) -> Pool {
        let dial = self.clone();
        Pool::new(PoolOptions {
            connect: Arc::new(move |parsed| dial.options(parsed)),
            idle_timeout: None,
        })
    }
}

impl LinkPool {
    /// A pool for `uri` (checked: an unusable URI is an error here, at startup).
    pub fn new(
        uri: &str,
        connect_budget: Duration,
        call_budget: Duration,
    ) -> Result<Self, libvirt_remote::client::uri::UriError> {
        let parsed = LibvirtUri::parse(uri)?;
        let dial = Dial {
            ssh_config: SshConfigFile::default(),
            connect_budget,
            max_in_flight: ConnectOptions::default().config.max_in_flight,
        };
        Ok(Self {
            uri: uri.to_owned(),
            parsed,
            pool: dial.pool(),
            dial,
            call_budget,
            current: Mutex::new(None),
            next_id: std::sync::atomic::AtomicU64::new(1),
        })
    }

    /// This pool with `file` as the OpenSSH client configuration of its `qemu+ssh://` links
    /// (`ssh -F`; default: the process user's `~/.ssh/config`, when it exists).
    #[must_use]
    pub fn with_ssh_config(mut self, file: SshConfigFile) -> Self {
        self.dial.ssh_config = file;
        self.pool = self.dial.pool();
        self
    }

    /// This pool with its links' cap on calls in flight at `n` (at least 1; default
    /// libvirt-remote's [`DEFAULT_MAX_IN_FLIGHT`](libvirt_remote::conn::DEFAULT_MAX_IN_FLIGHT),
    /// one under libvirtd's default `max_client_requests`): calls beyond it wait in the
    /// client, so the daemon always reads our keepalive answers.
    #[must_use]
    pub fn with_max_in_flight(mut self, n: usize) -> Self {
        self.dial.max_in_flight = NonZeroUsize::new(n.max(1));
        self.pool = self.dial.pool();
        self
    }

    /// The URI.
    pub fn uri(&self) -> &str {
        &self.uri
    }

    /// The current link if it is alive (without connecting).
    pub fn current(&self) -> Option<Arc<Link>> {
        let cur = self.current.lock().unwrap_or_else(PoisonError::into_inner);
        cur.as_ref().filter(|l| !l.is_dead()).cloned()
    }

    /// The live link, or a new one (single flight: concurrent callers share one attempt and
    /// its failure).
    pub async fn link(&self) -> Result<Arc<Link>, LvError> {
        if let Some(l) = self.current() {
            return Ok(l);
        }
        let client = self
            .pool
            .get(&self.uri)
            .await
            .map_err(|e| self.connect_error(e))?;
        let mut cur = self.current.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(l) = cur.as_ref().filter(|l| l.client().same_connection(&client)) {
            return Ok(l.clone());
        }
        let id = self
            .next_id
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let link = Arc::new(Link::new(id, client, self.call_budget));
        let old = cur.replace(link.clone());
        drop(cur);
        // The dead link it replaces (if any) is dropped outside the lock.
        drop(old);
        tracing::debug!(link = id, uri = %self.uri, "libvirt link connected");
        Ok(link)
    }

    /// A new connection that is not shared (for bulk transfers), bounded by the connect
    /// budget.
    pub async fn dedicated(&self) -> Result<Client, LvError> {
        Client::connect(&self.uri, self.dial.options(&self.parsed))
            .await
            .map_err(|e| self.connect_error(Arc::new(e)))
    }

    /// What a failed dial is to the provider: a connect budget overrun, or the error.
    fn connect_error(&self, error: Arc<ConnectError>) -> LvError {
        match *error {
            ConnectError::Timeout { .. } => LvError::Budget {
                what: format!("connecting to {}", self.uri),
                budget: self.dial.connect_budget,
            },
            _ => LvError::Connect {
                uri: self.uri.clone(),
                error,
            },
        }
    }

    /// Marks the current link dead (e.g. on shutdown): the reason is published, then the
    /// transport killed, outside any lock (H1); the next [`link`](Self::link) dials.
    pub fn close(&self, reason: &str) {
        let cur = self
            .current
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        if let Some(l) = cur {
            l.mark_dead(reason);
        }
        self.pool.close(&self.uri, reason);
    }
}

impl Drop for LinkPool {
    fn drop(&mut self) {
        self.close("provider dropped");
    }
}

/// Connection options for our links: keepalive both ways, no events, no busy-polling.
///
/// Busy-polling pays for short calls answered within tens of microseconds; the provider's
/// calls are define, start, volume and stream calls the daemon takes milliseconds to
/// seconds over, with many links in flight, so every spin would be CPU burnt for nothing
/// (issue 19: provider CPU per create).
pub fn connect_options(parsed: &LibvirtUri, kill: Option<KillFn>) -> ConnectOptions {
    ConnectOptions {
        handshake: HandshakeOptions {
            name: Some(parsed.remote_name.clone()),
            keepalive: true,
            ..HandshakeOptions::default()
        },
        kill,
        busy_poll: Duration::ZERO,
        ..ConnectOptions::default()
    }
}

/// Dials `uri` (unix, tcp or ssh: [`Client::connect`]) with `opts` and runs the handshake.
pub async fn connect(uri: &str, opts: ConnectOptions) -> Result<Client, LvError> {
    Client::connect(uri, opts)
        .await
        .map_err(|e| LvError::Connect {
            uri: uri.to_owned(),
            error: Arc::new(e),
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;
    use std::thread;

    use libvirt_remote::proto::procs::connect::ConnectGetHostname;
    use testbed::libvirtd::Libvirtd;

    /// H1 regression: a slow kill must not block other callers. The kill hook blocks until
    /// released; while it runs, a caller parked on the link (its call in flight against a
    /// frozen daemon) must be released and read the reason, and a second `mark_dead` must
    /// return. A once-style primitive around the kill fails both.
    #[tokio::test(flavor = "multi_thread", worker_threads = 3)]
    async fn mark_dead_slow_kill_does_not_block_callers() {
        let Some(d) = Libvirtd::start_or_skip() else {
            return;
        };
        let (release_tx, release_rx) = mpsc::channel::<()>();
        let release_rx = Arc::new(Mutex::new(release_rx));
        let (killing_tx, killing_rx) = mpsc::channel::<()>();
        let killing_tx = Mutex::new(killing_tx);
        let armed = std::sync::atomic::AtomicBool::new(true);
        let kill: KillFn = Arc::new(move || {
            // Only the first kill is slow (the client runs the hook again when dropped).
            if !armed.swap(false, std::sync::atomic::Ordering::SeqCst) {
                return;
            }
            let _ = killing_tx.lock().unwrap().send(());
            // Blocks like a close queued behind a stalled write; bounded so a failing run
            // ends instead of hanging the suite.
            let _ = release_rx
                .lock()
                .unwrap()
                .recv_timeout(Duration::from_secs(20));
        });
        let parsed = LibvirtUri::parse(&d.uri()).unwrap();
        let client = Client::connect(&d.uri(), connect_options(&parsed, Some(kill)))
            .await
            .unwrap();
        let link = Arc::new(Link::new(1, client, Duration::from_secs(60)));

        // Park a caller: its call is in flight and the daemon does not answer.
        d.freeze().unwrap();
        let parked = tokio::spawn({
            let link = link.clone();
            async move { link.call::<ConnectGetHostname>(&()).await }
        });
        tokio::time::sleep(Duration::from_millis(300)).await;
        assert!(
            !parked.is_finished(),
            "the call should be parked on the frozen daemon"
        );

        // The first marker runs the slow kill on its own thread.
        let first = thread::spawn({
            let link = link.clone();
            move || link.mark_dead("test: call budget exceeded")
        });
        killing_rx
            .recv_timeout(Duration::from_secs(5))
            .expect("the kill hook should start");

        // While the kill runs: the parked caller is released and reads the reason...
        let released = tokio::time::timeout(Duration::from_secs(1), parked).await;
        let Ok(joined) = released else {
            let _ = release_tx.send(());
            d.thaw().unwrap();
            panic!("link not signalled dead while its kill is still running");
        };
        let outcome = joined.unwrap();
        let err = outcome.expect_err("the parked call must fail");
        let text = err.to_string();
        let ok_reason = text.contains("test: call budget exceeded");
        // ...and a second marker returns at once.
        let second = thread::spawn({
            let link = link.clone();
            move || link.mark_dead("test: second caller")
        });
        let second_returned = {
            let start = std::time::Instant::now();
            while !second.is_finished() && start.elapsed() < Duration::from_secs(1) {
                thread::sleep(Duration::from_millis(10));
            }
            second.is_finished()
        };
        let kill_still_running = !first.is_finished();
        let _ = release_tx.send(());
        first.join().unwrap();
        second.join().unwrap();
        d.thaw().unwrap();

        assert!(
            ok_reason,
            "released caller read no reason (got {text:?}): the reason must be published before the kill"
        );
        assert!(
            second_returned,
            "a second mark_dead waited for the first one's kill"
        );
        assert!(
            kill_still_running,
            "the kill should still have been running"
        );
        assert_eq!(
            link.dead_reason().as_deref(),
            Some("test: call budget exceeded"),
            "the first reason wins"
        );
        assert!(matches!(err, LvError::Dead { .. }), "{err:?}");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn dead_link_is_replaced_on_next_call() {
        let Some(d) = Libvirtd::start_or_skip() else {
            return;
        };
        let pool =
            LinkPool::new(&d.uri(), Duration::from_secs(10), Duration::from_secs(10)).unwrap();
        let a = pool.link().await.unwrap();
        a.call::<ConnectGetHostname>(&()).await.unwrap();
        assert_eq!(
            pool.link().await.unwrap().id(),
            a.id(),
            "shared while alive"
        );
        a.mark_dead("test");
        let err = a.call::<ConnectGetHostname>(&()).await.unwrap_err();
        assert!(err.to_string().contains("test"), "{err}");
        let b = pool.link().await.unwrap();
        assert_ne!(a.id(), b.id());
        b.call::<ConnectGetHostname>(&()).await.unwrap();
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn call_budget_overrun_marks_dead() {
        let Some(d) = Libvirtd::start_or_skip() else {
            return;
        };
        let pool = LinkPool::new(
            &d.uri(),
            Duration::from_secs(10),
            Duration::from_millis(300),
        )
        .unwrap();
        let a = pool.link().await.unwrap();
        d.freeze().unwrap();
        let err = a.call::<ConnectGetHostname>(&()).await.unwrap_err();
        d.thaw().unwrap();
        assert!(a.is_dead());
        assert!(err.to_string().contains("call budget"), "{err}");
        assert_eq!(
            crate::classify::kind(&err),
            egress_provider::ErrorKind::Transient
        );
        let b = pool.link().await.unwrap();
        b.call::<ConnectGetHostname>(&()).await.unwrap();
    }

    #[tokio::test]
    async fn failed_connects_are_shared_and_transient() {
        let pool = LinkPool::new(
            "qemu+unix:///system?socket=/nonexistent/egress-kvm2-test-sock",
            Duration::from_secs(2),
            Duration::from_secs(2),
        )
        .unwrap();
        let (a, b) = tokio::join!(pool.link(), pool.link());
        for r in [a, b] {
            let e = r.unwrap_err();
            assert_eq!(
                crate::classify::kind(&e),
                egress_provider::ErrorKind::Transient,
                "{e}"
            );
        }
    }
}
