//! One connection per URI, for programs that talk to many hosts: [`Pool`].
//!
//! ```text
//!   pool.get(uri) ──▶ entries[uri] ── live client? ──yes──▶ a clone of it
//!                                        │ no (none yet, or dead)
//!                                        ▼
//!                      dial (single flight: concurrent callers of one URI share one
//!                      attempt and its failure) ──▶ the new client, kept for the next get
//!
//!   reaper task (weak ref; ends with the pool): every idle_timeout / 2, closes the
//!   connections nobody but the pool holds that no get touched for idle_timeout
//! ```
//!
//! A dead connection is never handed out: the next [`Pool::get`] of its URI dials a new one,
//! and only that URI's. The pool never waits behind a connection's teardown:
//! [`Pool::close`] and the idle reaper take the client out under the pool's lock and close
//! it outside it ([`Client::close_with`]: the reason is published first, then the transport
//! is killed — H1). Keys are the URI strings as given: two spellings of one daemon's address
//! are two connections.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};
use std::time::Duration;

use tokio::sync::watch;
use tokio::time::Instant;

use crate::client::uri::LibvirtUri;
use crate::client::{Client, ConnectError, ConnectOptions};

/// The options a [`Pool`] dials one URI with.
pub type OptionsFn = Arc<dyn Fn(&LibvirtUri) -> ConnectOptions + Send + Sync>;

/// Default [`PoolOptions::idle_timeout`]: 5 minutes.
pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(300);

/// How a [`Pool`] dials and when it closes idle connections.
#[derive(Clone)]
pub struct PoolOptions {
    /// The connection options for a URI (default: [`ConnectOptions::default`] for every
    /// one). Its `connect_timeout` bounds each dial.
    pub connect: OptionsFn,
    /// Close a connection that nobody but the pool holds (no [`Client`] clone, no handle)
    /// once no [`Pool::get`] asked for it for this long (default [`DEFAULT_IDLE_TIMEOUT`]);
    /// `None` keeps connections until they die or [`Pool::close`].
    pub idle_timeout: Option<Duration>,
}

impl Default for PoolOptions {
    fn default() -> Self {
        Self {
            connect: Arc::new(|_| ConnectOptions::default()),
            idle_timeout: Some(DEFAULT_IDLE_TIMEOUT),
        }
    }
}

impl std::fmt::Debug for PoolOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PoolOptions")
            .field("idle_timeout", &self.idle_timeout)
            .finish_non_exhaustive()
    }
}

/// Counters of a [`Pool`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PoolStats {
    /// Connections held and alive.
    pub connections: usize,
    /// Dials attempted (failed ones included).
    pub dials: u64,
    /// Connections closed for being idle.
    pub idle_closed: u64,
}

/// A dial that failed, shared with the callers that waited for it.
struct Failed {
    at: Instant,
    error: Arc<ConnectError>,
}

/// One URI's connection.
#[derive(Default)]
struct Entry {
    /// The connection and when a `get` last handed it out.
    current: Mutex<Option<(Client, Instant)>>,
    /// Held by the dialling task only: single flight. `close` never takes it.
    dialling: tokio::sync::Mutex<Option<Failed>>,
}

impl Entry {
    fn current(&self) -> MutexGuard<'_, Option<(Client, Instant)>> {
        self.current.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The live connection, marked used now.
    fn live(&self) -> Option<Client> {
        let mut cur = self.current();
        let (client, used) = cur.as_mut().filter(|(c, _)| !c.is_closed())?;
        *used = Instant::now();
        Some(client.clone())
    }
}

struct Shared {
    options: PoolOptions,
    entries: Mutex<HashMap<String, Arc<Entry>>>,
    dials: AtomicU64,
    idle_closed: AtomicU64,
    reaper: AtomicBool,
    /// Dropped with the pool: the reaper task ends at once.
    alive: watch::Sender<()>,
}

impl Shared {
    fn entries(&self) -> MutexGuard<'_, HashMap<String, Arc<Entry>>> {
        self.entries.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// One shared connection per libvirt URI: hands out the live one, dials a new one when it
/// is dead, closes idle ones. Clones share the pool; the reaper task ends when the last
/// clone is dropped, and each connection then closes once its last [`Client`] clone is
/// gone.
///
/// ```no_run
/// # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
/// use libvirt_remote::client::{Pool, PoolOptions};
/// use libvirt_remote::proto::procs::connect::ConnectGetHostname;
///
/// let pool = Pool::new(PoolOptions::default());
/// for uri in ["qemu+ssh://root@host-a/system", "qemu+ssh://root@host-b/system"] {
///     let client = pool.get(uri).await?;
///     println!("{}", client.call::<ConnectGetHostname>(&()).await?.hostname);
/// }
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct Pool {
    shared: Arc<Shared>,
}

impl std::fmt::Debug for Pool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pool")
            .field("options", &self.shared.options)
            .field("stats", &self.stats())
            .finish()
    }
}

impl Pool {
    /// An empty pool.
    pub fn new(options: PoolOptions) -> Self {
        Self {
            shared: Arc::new(Shared {
                options,
                entries: Mutex::new(HashMap::new()),
                dials: AtomicU64::new(0),
                idle_closed: AtomicU64::new(0),
                reaper: AtomicBool::new(false),
                alive: watch::channel(()).0,
            }),
        }
    }

    /// The live connection to `uri`, or a new one. Concurrent callers for one URI share one
    /// dial and, if it fails, its error (a caller that asked after the failure dials again).
    pub async fn get(&self, uri: &str) -> Result<Client, Arc<ConnectError>> {
        self.start_reaper();
        let entry = self
            .shared
            .entries()
            .entry(uri.to_owned())
            .or_default()
            .clone();
        if let Some(c) = entry.live() {
            return Ok(c);
        }
        let asked = Instant::now();
        let mut dialling = entry.dialling.lock().await;
        if let Some(c) = entry.live() {
            return Ok(c);
        }
        if let Some(f) = dialling.as_ref().filter(|f| f.at >= asked) {
            return Err(f.error.clone());
        }
        self.shared.dials.fetch_add(1, Ordering::Relaxed);
        let dialled = match LibvirtUri::parse(uri) {
            Ok(parsed) => Client::connect(uri, (self.shared.options.connect)(&parsed)).await,
            Err(e) => Err(e.into()),
        };
        match dialled {
            Ok(client) => {
                *dialling = None;
                let old = entry.current().replace((client.clone(), Instant::now()));
                // The dead one (if any) is dropped here, outside the lock.
                drop(old);
                tracing::debug!(uri, "pool: connected");
                Ok(client)
            }
            Err(e) => {
                let error = Arc::new(e);
                *dialling = Some(Failed {
                    at: Instant::now(),
                    error: error.clone(),
                });
                Err(error)
            }
        }
    }

    /// The live connection to `uri`, without dialling.
    pub fn current(&self, uri: &str) -> Option<Client> {
        let entry = self.shared.entries().get(uri).cloned()?;
        entry.live()
    }

    /// Close the connection to `uri` with `reason` (callers holding it see
    /// [`ConnectionError::LocallyClosed`](crate::conn::ConnectionError::LocallyClosed) with it);
    /// the next [`get`](Self::get) dials a new one. Returns whether this closed it (false:
    /// there was none, or it was dead already). Never waits for the transport (H1).
    pub fn close(&self, uri: &str, reason: &str) -> bool {
        let Some(entry) = self.shared.entries().get(uri).cloned() else {
            return false;
        };
        let taken = entry.current().take();
        taken.is_some_and(|(c, _)| c.close_with(reason))
    }

    /// Close every connection (see [`close`](Self::close)).
    pub fn close_all(&self, reason: &str) {
        let entries: Vec<Arc<Entry>> = self.shared.entries().values().cloned().collect();
        for e in entries {
            let taken = e.current().take();
            if let Some((c, _)) = taken {
                c.close_with(reason);
            }
        }
    }

    /// Close the connections idle for [`PoolOptions::idle_timeout`] now (the reaper task
    /// does this on its own); returns how many. A connection someone still holds (a
    /// [`Client`] clone or a handle) is never idle.
    pub fn close_idle(&self) -> usize {
        close_idle(&self.shared)
    }

    /// Counters.
    pub fn stats(&self) -> PoolStats {
        let entries: Vec<Arc<Entry>> = self.shared.entries().values().cloned().collect();
        PoolStats {
            connections: entries
                .iter()
                .filter(|e| e.current().as_ref().is_some_and(|(c, _)| !c.is_closed()))
                .count(),
            dials: self.shared.dials.load(Ordering::Relaxed),
            idle_closed: self.shared.idle_closed.load(Ordering::Relaxed),
        }
    }

    /// Spawn the idle reaper once, on the runtime of the first `get`.
    fn start_reaper(&self) {
        let Some(idle) = self.shared.options.idle_timeout else {
            return;
        };
        if self.shared.reaper.swap(true, Ordering::AcqRel) {
            return;
        }
        let weak = Arc::downgrade(&self.shared);
        let ended = self.shared.alive.subscribe();
        tokio::spawn(reap(weak, ended, idle));
    }
}

/// Every `idle / 2` (at least 10 ms), close what is idle; ends when the pool is dropped.
async fn reap(pool: Weak<Shared>, mut ended: watch::Receiver<()>, idle: Duration) {
    let period = (idle / 2).max(Duration::from_millis(10));
    loop {
        tokio::select! {
            () = tokio::time::sleep(period) => {}
            r = ended.changed() => if r.is_err() { return },
        }
        let Some(shared) = pool.upgrade() else { return };
        close_idle(&shared);
    }
}

fn close_idle(shared: &Shared) -> usize {
    let Some(idle) = shared.options.idle_timeout else {
        return 0;
    };
    let mut closing = Vec::new();
    shared.entries().retain(|_, e| {
        let mut cur = e.current();
        let unused = match cur.as_ref() {
            // Dead: dropped (its users already read why).
            Some((c, _)) if c.is_closed() => true,
            Some((c, used)) => c.clones() == 1 && used.elapsed() >= idle,
            None => true,
        };
        if unused && let Some((c, _)) = cur.take().filter(|(c, _)| !c.is_closed()) {
            closing.push(c);
        }
        // An entry with no connection is forgotten unless a `get` holds it (it clones it
        // under the map's lock, held here).
        cur.is_some() || Arc::strong_count(e) > 1
    });
    let n = closing.len();
    for c in closing {
        c.close_with("idle in the pool");
    }
    shared.idle_closed.fetch_add(n as u64, Ordering::Relaxed);
    n
}
