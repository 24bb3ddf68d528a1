//! The libvirt remote protocol, in Rust, without libvirt.
//!
//! # Scope and layers
//!
//! **Scope.** Everything needed to talk to `libvirtd` (or `virtqemud`/`virtproxyd`) as virsh
//! does: packet framing, bounded XDR, a typed procedure table (every procedure of the remote,
//! QEMU and LXC programs), the connection state machine (calls multiplexed by serial,
//! upload/download streams including sparse holes, keepalive, events), the opening handshake
//! with SASL, and — behind the default `client` feature — a thin tokio client that dials every
//! URI virsh takes: unix sockets, TCP, TLS (feature `tls`, default: rustls with client
//! certificates, SASL SCRAM and PLAIN through feature `sasl`), SSH (feature `ssh`, through the
//! `ssh-socket` crate). On top: the object API (async, or [`blocking`]), migration, and typed
//! XML documents (feature `xml`, through `libvirt-xml`).
//!
//! **Non-scope.** libvirt's C API (this is the wire protocol, not a binding to `libvirt.so`);
//! the hypervisor drivers (the daemon runs them); libvirt's client-side configuration files
//! beyond what virsh's URIs and `auth.conf` need. File-descriptor passing works on unix
//! sockets only (it cannot cross a network or an SSH forward).
//!
//! ```text
//!   your code ──▶ client (tokio, feature "client") ──▶ conn::Connection (sans-io) ──▶ proto ──▶ wire
//!                  one driver task: socket ⇄ bytes        calls, streams, keepalive,     types,   framing,
//!                  timers ⇄ handle_timeout               events; time is an input      procs    bounded XDR
//! ```
//!
//! The layers below `client` never touch a socket, a clock or a runtime: the same core runs
//! the client, the tests' scripted peer and the fuzz targets (both in the unpublished
//! `libvirt-remote-testkit` crate).
//!
//! # Quick start
//!
//! A [`Connect`] and object handles ([`Domain`], [`StoragePool`], [`StorageVol`], …) with
//! one async method per libvirt call, named as in the `virt` crate without `get_`
//! (`hostname()`, `dom.info()`, `dom.xml_desc(flags)`, `pool.list_all_volumes(flags)`):
//!
//! ```no_run
//! use libvirt_remote::prelude::*;
//!
//! # async fn demo() -> Result<(), Error> {
//! let conn = Connect::open("qemu:///session").await?;
//! println!("{} runs libvirt {}", conn.hostname().await?, conn.lib_version().await?);
//!
//! // List every domain; start the first one that is shut off.
//! for dom in conn.list_all_domains(Default::default()).await? {
//!     let info = dom.info().await?;
//!     println!("{:<20} {} {} KiB", dom.name(), info.state, info.memory);
//! }
//! let dom = conn.lookup_domain_by_name("vm1").await?;
//! if !dom.is_active().await? {
//!     dom.create().await?;
//! }
//!
//! // Upload a raw image into an existing volume, told the bytes done and the total.
//! let pool = conn.lookup_storage_pool_by_name("default").await?;
//! let vol = pool.lookup_volume_by_name("disk.raw").await?;
//! let sent = vol
//!     .upload_file("disk.raw".as_ref(), |p| eprintln!("{} of {:?}", p.done, p.total))
//!     .await?;
//! println!("uploaded {sent} bytes");
//!
//! // Watch lifecycle events of every domain (`dom.subscribe::<…>()`: of one domain).
//! let mut events = conn.subscribe::<event_id::Lifecycle>().await?;
//! while let Some(ev) = events.next().await {
//!     println!("{}: event {} detail {}", ev.dom.name, ev.event, ev.detail);
//! }
//! # Ok(()) }
//! ```
//!
//! Values print as virsh prints them: `ev.detail` above is typed by its event
//! (`LifecycleDetail::Stopped(StoppedDetail::DESTROYED)` prints `Destroyed`), and
//! `dom.state(flags)` returns the state with a reason typed by that state
//! (`StateReason::Shutoff(ShutoffReason::DESTROYED)`, printed `shut off (destroyed)`), so one
//! `match` names both. A handle's `name()` is a `Cow<str>` (print it, compare it with
//! `== "vm1"`); `name_bytes()` has the bytes of a name that is not UTF-8.
//!
//! Failures are one [`Error`] with predicates (`is_not_found()`, `is_auth()`,
//! `is_connection_dead()`, `remote()`).
//!
//! # One name per layer
//!
//! * [`Connect`] is the handle you hold; the object handles ([`Domain`], …) carry it.
//! * [`Client`] is the transport underneath (`conn.client()`): raw calls, streams, migration.
//! * [`conn::Connection`] is the sans-io machine, for embedders that bring their own I/O.
//!
//! The crate root holds what a first program names (these, [`Error`], [`ConnectOptions`],
//! [`ConnectError`], the modules and [`prelude`]); everything else is in its module, once
//! (errors of a layer in that layer: [`conn::CallError`], [`client::tls::TlsError`], …).
//!
//! Without async, feature `blocking` has the same handles with synchronous methods
//! ([`blocking`], as reqwest's): `blocking::Connect::open(uri)?.hostname()?`.
#![forbid(unsafe_code)]

#[cfg(feature = "blocking")]
pub mod blocking;
#[cfg(feature = "client")]
pub mod client;
pub mod conn;
pub mod proto;
pub mod wire;
#[cfg(feature = "xml")]
pub use client::api::xml;

/// The object API and what a program using it needs, in one import:
/// `use libvirt_remote::prelude::*;`.
#[cfg(feature = "client")]
pub mod prelude {
    pub use crate::client::handles::{
        Connect, Domain, DomainCheckpoint, DomainSnapshot, Interface, Lift, Network, NetworkPort,
        NodeDevice, NwFilter, NwFilterBinding, Secret, StoragePool, StorageVol,
    };
    pub use crate::client::{
        ConnectError, ConnectOptions, DownloadOptions, Error, Progress, UploadOptions,
    };
    pub use crate::conn::ErrorPredicates;
    pub use crate::proto::LibvirtVersion;
    pub use crate::proto::events::event_id;
    pub use crate::proto::names::{
        BlockedReason, CrashedDetail, CrashedReason, DefinedDetail, DomainEventType, DomainState,
        LifecycleDetail, NoStateReason, PausedReason, PmSuspendedDetail, PmSuspendedReason,
        ResumedDetail, RunningReason, ShutdownDetail, ShutdownReason, ShutoffReason, StartedDetail,
        StateReason, StoppedDetail, SuspendedDetail, UndefinedDetail,
    };
    pub use crate::proto::types::Uuid;
    pub use crate::wire::xdr::LvString;
}

// The root: what a first program names. Everything else has one home, its module (see
// the front page); `tests/root.rs` lists these names so that the root only grows on purpose.
#[cfg(feature = "client")]
pub use client::handles::{
    Connect, Domain, DomainCheckpoint, DomainSnapshot, Interface, Network, NetworkPort, NodeDevice,
    NwFilter, NwFilterBinding, Secret, StoragePool, StorageVol,
};
#[cfg(feature = "client")]
pub use client::{Client, ConnectError, ConnectOptions, Error};
/// The SSH transport (feature `ssh`), for [`client::SshOptions`] (config file, credentials)
/// and for matching on [`ConnectError::Ssh`] (`ssh_socket::SshError`) without a direct
/// dependency on `ssh-socket`.
#[cfg(feature = "ssh")]
pub use ssh_socket;

/// The `bitflags` crate, for [`flag_set!`]'s expansion.
#[doc(hidden)]
pub use bitflags as __bitflags;

/// The README's examples, compiled and run as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
