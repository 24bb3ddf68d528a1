//! The object API without async (feature `blocking`, as reqwest's `blocking` module): the same
//! handles with synchronous methods, for programs ported from the `virt` crate and for code
//! that has no runtime.
//!
//! ```no_run
//! use libvirt_remote::blocking::Connect;
//!
//! # fn main() -> Result<(), libvirt_remote::Error> {
//! let conn = Connect::open("qemu:///session")?;
//! println!("{} runs libvirt {}", conn.hostname()?, conn.lib_version()?);
//! for dom in conn.list_all_domains(Default::default())? {
//!     println!("{:<20} {}", dom.name(), dom.info()?.state);
//! }
//! # Ok(()) }
//! ```
//!
//! ```text
//!   your thread ──block_on──▶ async handle method ──▶ Client ──▶ core
//!                              (polled on your thread)    │
//!   private thread: a current-thread tokio runtime ◀──────┘ driver task, socket, timers
//! ```
//!
//! Each [`Connect::open`] starts one private thread running a current-thread tokio runtime; the
//! connection's driver task, its socket and its timers live there, and the thread ends when the
//! connection's last handle is dropped. A method runs the async method of the same name on
//! the calling thread until it completes, so the two APIs cannot disagree: the blocking
//! methods are expanded from the same rows of the procedure table as the async ones
//! (`client::api::methods`), each calling its async twin.
//!
//! A handle here wraps the async handle and derefs to it: its accessors (`name()`, `uuid()`,
//! `wire()`) are the async handle's, and it is passed where a method takes another object
//! (`pool.create_volume_xml_from(xml, &other_vol, …)` takes `&vol` of either kind).
//! [`as_async`](Domain::as_async) hands out the async handle for the rest (the raw
//! [`Client`](crate::Client) is `conn.client()`, for use inside a runtime).
//!
//! Streams are [`std::io::Read`] ([`Download`]) and [`std::io::Write`] ([`Upload`]; both for a
//! console, [`Duplex`]); events are an [`Iterator`] ([`Events`]).
//!
//! # Not inside a runtime
//!
//! As reqwest's blocking client, a blocking method called from inside an async runtime panics
//! with a message that says so: blocking there would stall the runtime's thread (and, on a
//! current-thread runtime, deadlock it). Use the async API there, or move the blocking code to
//! `spawn_blocking` or a thread of its own.

mod stream;

use std::fmt;
use std::future::Future;
use std::ops::Deref;
use std::sync::Arc;

use crate::client::handles::{self as nb, Lift};
use crate::client::{ConnectError, ConnectOptions, Error};
use crate::proto::events::{EventKind, TypedEvent};

pub use stream::{Download, Duplex, Upload};

/// The private runtime a connection's blocking handles share: a thread running a
/// current-thread tokio runtime, stopped when the last handle is dropped.
#[derive(Clone)]
pub(crate) struct Runtime {
    handle: tokio::runtime::Handle,
    _stop: Arc<Stop>,
}

/// Ends the runtime's thread when dropped (the last handle went away).
struct Stop(Option<tokio::sync::oneshot::Sender<()>>);

impl Drop for Stop {
    fn drop(&mut self) {
        if let Some(tx) = self.0.take() {
            let _ = tx.send(());
        }
    }
}

/// What a blocking call inside an async runtime panics with.
const IN_RUNTIME: &str = "libvirt_remote::blocking called from inside an async runtime: blocking \
     here would stall the runtime's thread. Use the async API (libvirt_remote::Connect) in async \
     code, or run the blocking code in tokio::task::spawn_blocking or a thread of its own";

impl Runtime {
    fn start() -> std::io::Result<Self> {
        let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
        let (handle_tx, handle_rx) = std::sync::mpsc::channel();
        std::thread::Builder::new()
            .name("libvirt-remote-blocking".into())
            .spawn(move || {
                let rt = match tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                {
                    Ok(rt) => rt,
                    Err(e) => {
                        let _ = handle_tx.send(Err(e));
                        return;
                    }
                };
                let _ = handle_tx.send(Ok(rt.handle().clone()));
                // Drives the connection's driver task, its socket and timers until the last
                // handle is dropped; dropping the runtime then ends what is left.
                rt.block_on(async {
                    let _ = stop_rx.await;
                });
            })?;
        let handle = handle_rx
            .recv()
            .map_err(|_| std::io::Error::other("the blocking runtime's thread ended early"))??;
        Ok(Self {
            handle,
            _stop: Arc::new(Stop(Some(stop_tx))),
        })
    }

    /// Run `f` to completion on the calling thread (its I/O and timers are driven by the
    /// runtime's thread). Panics inside an async runtime.
    pub(crate) fn block_on<F: Future>(&self, f: F) -> F::Output {
        assert!(
            tokio::runtime::Handle::try_current().is_err(),
            "{IN_RUNTIME}"
        );
        self.handle.block_on(f)
    }
}

/// The blocking form of a value an async method returns: handles become blocking handles
/// on the same private runtime, lists and options element by element, everything else stays
/// as it is. The return type of a generated blocking method that returns a lifted field.
pub trait IntoBlocking {
    /// The blocking form.
    type Out;
    /// Convert, binding handles to `rt`.
    #[doc(hidden)]
    #[allow(private_interfaces)]
    fn into_blocking(self, rt: &Runtime) -> Self::Out;
}

/// Values that are the same in both APIs.
macro_rules! same_in_blocking {
    ($($t:ty),* $(,)?) => {$(
        impl $crate::blocking::IntoBlocking for $t {
            type Out = $t;
            #[allow(private_interfaces)]
            fn into_blocking(self, _: &$crate::blocking::Runtime) -> $t {
                self
            }
        }
    )*};
}
pub(crate) use same_in_blocking;

same_in_blocking!(String);

impl<T: IntoBlocking> IntoBlocking for Option<T> {
    type Out = Option<T::Out>;
    #[allow(private_interfaces)]
    fn into_blocking(self, rt: &Runtime) -> Self::Out {
        self.map(|v| v.into_blocking(rt))
    }
}

impl<T: IntoBlocking> IntoBlocking for Vec<T> {
    type Out = Vec<T::Out>;
    #[allow(private_interfaces)]
    fn into_blocking(self, rt: &Runtime) -> Self::Out {
        self.into_iter().map(|v| v.into_blocking(rt)).collect()
    }
}

/// The blocking handles, one per async handle (`for_each_handle!`); the generated methods
/// (and those written below) are their only difference.
macro_rules! blocking_handles {
    ($($name:ident),* $(,)?) => {$(
        #[doc = concat!(
            "[`crate::", stringify!($name), "`] with blocking methods (see the ",
            "[module docs](self)); derefs to it for its accessors."
        )]
        #[derive(Clone)]
        pub struct $name {
            pub(crate) inner: nb::$name,
            pub(crate) rt: Runtime,
        }

        impl $name {
            /// The async handle (same connection), for use inside a runtime.
            pub fn as_async(&self) -> &nb::$name {
                &self.inner
            }

            /// The async handle, giving up this one.
            pub fn into_async(self) -> nb::$name {
                self.inner
            }
        }

        impl Deref for $name {
            type Target = nb::$name;
            fn deref(&self) -> &nb::$name {
                &self.inner
            }
        }

        impl fmt::Debug for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                fmt::Debug::fmt(&self.inner, f)
            }
        }

        impl IntoBlocking for nb::$name {
            type Out = $name;
            #[allow(private_interfaces)]
            fn into_blocking(self, rt: &Runtime) -> $name {
                $name { inner: self, rt: rt.clone() }
            }
        }
    )*};
}

crate::client::handles::for_each_handle!(blocking_handles);

impl Connect {
    /// Connect to a libvirt URI with default options ([`crate::Connect::open`]), starting the
    /// connection's private runtime.
    pub fn open(uri: &str) -> Result<Self, ConnectError> {
        Self::open_with(uri, ConnectOptions::default())
    }

    /// Connect to a libvirt URI with `opts` ([`crate::Connect::open_with`]).
    pub fn open_with(uri: &str, opts: ConnectOptions) -> Result<Self, ConnectError> {
        let rt = Self::runtime()?;
        let inner = rt.block_on(nb::Connect::open_with(uri, opts))?;
        Ok(Self { inner, rt })
    }

    /// Connect to the URI libvirt would pick when none is given
    /// ([`crate::Connect::open_default`]).
    pub fn open_default() -> Result<Self, ConnectError> {
        let rt = Self::runtime()?;
        let inner = rt.block_on(nb::Connect::open_default())?;
        Ok(Self { inner, rt })
    }

    fn runtime() -> Result<Runtime, ConnectError> {
        Runtime::start().map_err(|e| ConnectError::Dial {
            target: "the blocking API's runtime thread".into(),
            error: e,
        })
    }

    /// A blocking handle on this connection for an object identity from the wire
    /// ([`crate::Connect::bind`]).
    pub fn bind<W: Lift>(&self, wire: W) -> <W::Out as IntoBlocking>::Out
    where
        W::Out: IntoBlocking,
    {
        self.inner.bind(wire).into_blocking(&self.rt)
    }

    /// Subscribe to one event of every object ([`crate::Connect::subscribe`]): `T` names it
    /// (`event_id::Lifecycle`, …). The [`Events`] iterator yields its bodies and ends when
    /// the connection dies. One object's events: its handle's `subscribe`
    /// ([`Domain::subscribe`], …).
    ///
    /// ```no_run
    /// # fn f(conn: &libvirt_remote::blocking::Connect) -> Result<(), libvirt_remote::Error> {
    /// use libvirt_remote::proto::events::event_id;
    ///
    /// for ev in conn.subscribe::<event_id::Lifecycle>()? {
    ///     println!("{}: event {} detail {}", ev.dom.name, ev.event, ev.detail);
    /// }
    /// # Ok(()) }
    /// ```
    #[doc(alias = "domain_event_register_any")]
    pub fn subscribe<T: TypedEvent>(&self) -> Result<Events<T>, Error> {
        Events::wait(&self.rt, self.inner.subscribe::<T>())
    }
}

/// `subscribe` on the blocking handles whose event families take an object filter.
macro_rules! blocking_subscribe {
    ($($handle:ident($wire:ident) $alias:literal $family:literal $example:literal;)*) => {$(
        impl $handle {
            #[doc = concat!(
                "Subscribe to one event of this object only ([`crate::", stringify!($handle),
                "::subscribe`]), as an [`Events`] iterator."
            )]
            #[doc(alias = $alias)]
            pub fn subscribe<T>(&self) -> Result<Events<T>, Error>
            where
                T: TypedEvent,
                T::Family: EventKind<Object = crate::proto::types::$wire>,
            {
                Events::wait(&self.rt, self.inner.subscribe::<T>())
            }
        }
    )*};
}

crate::client::api::events::filtered_event_handles!(blocking_subscribe);

/// A typed event subscription as an [`Iterator`] ([`Connect::subscribe`], a handle's
/// `subscribe`): each `next()`
/// waits for the next event; `None` once the connection is dead. Dropping it deregisters.
pub struct Events<T: TypedEvent> {
    sub: crate::client::Subscription<T>,
    rt: Runtime,
}

impl<T: TypedEvent> Events<T> {
    /// Wait on `rt` for a subscription's registration.
    fn wait(
        rt: &Runtime,
        subscribe: impl Future<Output = Result<crate::client::Subscription<T>, Error>>,
    ) -> Result<Self, Error> {
        Ok(Self {
            sub: rt.block_on(subscribe)?,
            rt: rt.clone(),
        })
    }

    /// Events dropped because this subscriber's queue was full
    /// ([`Subscription::missed`](crate::client::Subscription::missed)).
    pub fn missed(&self) -> u64 {
        self.sub.missed()
    }
}

impl<T: TypedEvent> fmt::Debug for Events<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Events").field(&self.sub).finish()
    }
}

impl<T: TypedEvent> Iterator for Events<T> {
    type Item = T::Body;

    fn next(&mut self) -> Option<T::Body> {
        self.rt.block_on(self.sub.next())
    }
}

impl NetworkPort {
    /// The network the port belongs to.
    pub fn network(&self) -> Network {
        self.inner.network().into_blocking(&self.rt)
    }
}

impl DomainSnapshot {
    /// The domain the snapshot belongs to.
    pub fn domain(&self) -> Domain {
        self.inner.domain().into_blocking(&self.rt)
    }
}

impl DomainCheckpoint {
    /// The domain the checkpoint belongs to.
    pub fn domain(&self) -> Domain {
        self.inner.domain().into_blocking(&self.rt)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    #[should_panic(expected = "called from inside an async runtime")]
    async fn refused_inside_a_runtime() {
        let _ = Connect::open("test:///default");
    }

    #[test]
    fn handles_are_send_sync_clone() {
        fn send_sync_clone<T: Send + Sync + Clone + 'static>() {}
        send_sync_clone::<(Connect, Domain, StorageVol, DomainSnapshot)>();
    }
}
