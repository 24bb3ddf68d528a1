//! The KVM provider for egress proxies (`type: kvm2`), built on the pure-Rust
//! [`libvirt_remote`] client.
//!
//! **Scope.** One [`Kvm2Provider`] per configuration entry (one libvirt host): a per-host
//! [link pool](link) that survives dead connections, a per-entry [image cache](image)
//! (streamed fetch, sha256 verification, atomic publish, marker written last), a `NoCloud`
//! [seed] built in memory, domain XML from a real [XML writer](xml) carrying our
//! [metadata](meta), the domain lifecycle (define, start, graceful stop, destroy, undefine),
//! and address discovery with the [H3 rule](address). Errors are classified by
//! [one function](classify).
//!
//! Port forwards for user networking ([`PortForward`]) are added through the QEMU monitor
//! after every start ([`monitor`]), so a proxy in a user-networked guest is reachable on a
//! host loopback port.
//!
//! Two controllers on one host are fenced by [leases](fence) held in libvirt itself (a
//! never-started domain per uid and per image key, compared by UUID).
//!
//! **Not in scope.** Guest images themselves (`scripts/build-guest-image` builds the test
//! guest), retry policy (the controller's), and Kubernetes.
//!
//! ```text
//!   controller ──create/get/delete/list_by_tag──▶ Kvm2Provider (one per entry)
//!                                                  │        │
//!                        ImageCache ◀──ensure──────┘        │ calls (call budget)
//!            reqwest ──stream──▶ sha256+len ──▶ dedicated   ▼
//!            (fetch deadline)                  connection  LinkPool ── one shared Link per host
//!                                                  │        │   mark_dead: publish reason, then kill
//!                                                  ▼        ▼
//!                                             libvirtd (unix / tcp / ssh) ──▶ qemu/kvm
//!   pool volumes:  base-<entry>-<key>.<fmt>  (the fetched bytes, sparse; + .sha256 marker, written last)
//!                  disk-<entry>-<uid>.qcow2  (overlay)   seed-<entry>-<uid>.img  (NoCloud)
//!   domain:        <entry>-<uid>, metadata in https://egress-proxy.dev/kvm2/1
//!   leases:        lease.<entry>.uid.<uid>, lease.<entry>.image.<key> (never started)
//! ```
//!
//! # Budgets
//!
//! See [`config::Budgets`]: close 5 s, transfer 20 min (the HTTP fetch ends one minute
//! earlier), call 60 s, graceful shutdown 30 s, connect 15 s. A call over its budget marks
//! the link dead (the next call reconnects); a transfer over its budget kills its dedicated
//! connection and deletes its temporary volume. Every provider call is therefore bounded.
//!
//! # Example
//!
//! ```no_run
//! use egress_provider::{ProviderRegistry, ProvidersConfig};
//! use egress_kvm2::Kvm2Factory;
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let config = ProvidersConfig::from_yaml_str(r#"
//! providers:
//!   - name: kvm-a
//!     type: kvm2
//!     images:
//!       debian-13:
//!         url: https://images.example/debian-13.qcow2
//!         sha256: 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08
//!         format: qcow2
//!     uri: qemu+ssh://root@kvm-a.example/system?keyfile=/etc/egress/id_ed25519
//!     pool: default
//!     network: { type: bridge, name: br0 }
//! "#)?;
//! let mut registry = ProviderRegistry::new();
//! registry.register(Kvm2Factory::TYPE, Kvm2Factory::default())?;
//! let providers = registry.build(&config)?; // validates; no network I/O yet
//! # Ok(()) }
//! ```
#![forbid(unsafe_code)]

pub mod address;
pub mod classify;
pub mod config;
pub mod faults;
pub mod fence;
pub mod image;
mod keyed;
pub mod link;
pub mod meta;
pub mod monitor;
mod ops;
mod provider;
pub mod seed;
pub mod sparse;
pub mod xml;

use std::sync::Arc;

use egress_provider::{FieldErrors, Provider, ProviderEntry, ProviderFactory};

pub use classify::LvError;
pub use config::{AddressSource, Budgets, DomainType, Kvm2Settings, NetworkConfig, PortForward};
pub use image::{BaseImage, ImageProgress, ProgressFn};
pub use provider::{BuildError, Kvm2Provider, disk_volume_name, seed_volume_name};

/// Builds [`Kvm2Provider`]s for entries of `type: kvm2`.
#[derive(Clone, Default)]
pub struct Kvm2Factory {
    progress: Option<ProgressFn>,
}

impl std::fmt::Debug for Kvm2Factory {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Kvm2Factory")
            .field("progress", &self.progress.is_some())
            .finish()
    }
}

impl Kvm2Factory {
    /// The type name to register: `kvm2`.
    pub const TYPE: &'static str = Kvm2Provider::TYPE;

    /// Every built provider reports image progress to `f`.
    #[must_use]
    pub fn with_progress(mut self, f: ProgressFn) -> Self {
        self.progress = Some(f);
        self
    }
}

impl ProviderFactory for Kvm2Factory {
    type Settings = Kvm2Settings;

    fn build(
        &self,
        entry: &ProviderEntry,
        settings: Kvm2Settings,
    ) -> Result<Arc<dyn Provider>, FieldErrors> {
        let mut p = Kvm2Provider::from_entry(entry, settings)?;
        if let Some(f) = &self.progress {
            p = p.with_progress(f.clone());
        }
        Ok(Arc::new(p))
    }
}

/// The README's examples, compiled and run as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
