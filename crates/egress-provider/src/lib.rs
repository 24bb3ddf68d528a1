//! The provider contract the egress controller codes against to create,
//! observe and remove the VMs that carry its egress proxies.
//!
//! **Scope.** The [`Provider`] trait and its data ([`CreateSpec`],
//! [`Instance`], [`InstanceState`]); the classified [`ProviderError`]; the
//! operator's provider configuration ([`ProvidersConfig`], loaded from YAML
//! or JSON and validated with field paths); the [`ProviderRegistry`] that
//! builds providers from configuration by `type`; an in-memory
//! [`reference`](mod@reference) provider; and, with the `conformance` feature, the suite
//! every provider must pass.
//!
//! **Not in scope.** Talking to any real host (the KVM provider is its own
//! crate and implements this contract), downloading or verifying images,
//! retry and backoff policy (the controller's), and Kubernetes itself.
//!
//! ```text
//!   operator YAML/JSON                 embedding program
//!          |                                  | register(type, factory)
//!          v                                  v
//!   ProvidersConfig --------------------> ProviderRegistry
//!   (validated, field paths)                  | build()
//!                                             v
//!                                        ProviderSet: name -> Arc<dyn Provider>
//!                                             |
//!   controller reconcile loop                 |
//!     create / get / delete / list_by_tag --->+---> KVM host, in-memory, ...
//!     <--- Instance {state, ip}                |
//!     <--- Listing {instances, unreadable}     |
//!     <--- ProviderError {Transient | Permanent | NotFound}
//! ```
//!
//! The contract in brief (details on [`Provider`] and in
//! `docs/provider-contract.md`): the caller picks a stable uid, so `create`
//! is idempotent; `get` reads the host and answers `Provisioning` without an
//! IP while a VM boots; `delete` of what is gone succeeds; the provider
//! classifies errors and the controller retries `Transient` ones. The
//! contract imposes no deadline; each provider documents its own budgets.
//!
//! # Example
//!
//! Build providers from configuration and drive one VM to `Running`, as a
//! controller's reconcile loop would (here on the in-memory reference
//! provider):
//!
//! ```
//! use std::time::Duration;
//! use egress_provider::{
//!     CreateSpec, ErrorKind, Identifier, InstanceState, ProviderRegistry, ProvidersConfig,
//!     reference::{InMemoryFactory, InMemoryProvider},
//! };
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! # tokio::runtime::Builder::new_current_thread().enable_time().build()?.block_on(async {
//! let config = ProvidersConfig::from_yaml_str(
//!     r#"
//! providers:
//!   - name: lab
//!     type: in-memory
//!     images:
//!       debian-13:
//!         url: https://images.example/debian-13.qcow2
//!         sha256: 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08
//!         format: qcow2
//! "#,
//! )?;
//! let mut registry = ProviderRegistry::new();
//! registry.register(InMemoryProvider::TYPE, InMemoryFactory)?;
//! let providers = registry.build(&config)?;
//! let lab = providers.get("lab").expect("configured above");
//!
//! let spec = CreateSpec::new(
//!     Identifier::new("0b7e2c1d-egress-a")?,
//!     "egress proxy a",
//!     Identifier::new("debian-13")?,
//! )
//! .with_tag(Identifier::new("gateway-blue")?);
//!
//! lab.create(&spec).await?; // safe to repeat: same uid, same VM
//! let ip = loop {
//!     match lab.get(&spec.uid).await {
//!         Ok(inst) => match inst.state {
//!             InstanceState::Running { ip } => break ip,
//!             // Booting: a normal answer. Look again later.
//!             _ => tokio::time::sleep(Duration::from_millis(10)).await,
//!         },
//!         Err(e) if e.kind() == ErrorKind::Transient => {
//!             tokio::time::sleep(Duration::from_millis(10)).await;
//!         }
//!         Err(e) => return Err(e.into()),
//!     }
//! };
//! assert!(ip.to_string().starts_with("192.0.2."));
//!
//! lab.delete(&spec.uid).await?;
//! lab.delete(&spec.uid).await?; // gone already: still success
//! assert!(lab.get(&spec.uid).await.unwrap_err().is_not_found());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! # })
//! # }
//! ```
//!
//! # Features
//!
//! * `conformance`: the `conformance` module, the reusable suite a
//!   provider crate runs from its integration tests. Pulls in tokio's timer.

#![forbid(unsafe_code)]

pub mod config;
#[cfg(feature = "conformance")]
pub mod conformance;
pub mod error;
pub mod field;
mod identifier;
mod instance;
mod listing;
mod provider;
mod redact;
pub mod reference;
pub mod registry;
mod spec;

pub use config::{
    ConfigError, ConfigFormat, ImageFormat, ImageSource, ProviderEntry, ProvidersConfig,
    Sha256Digest,
};
pub use error::{BoxError, ErrorKind, ProviderError, classify, classify_io};
pub use field::{FieldError, FieldErrors, Problem};
pub use identifier::{
    IDENTIFIER_MAX_LEN, Identifier, IdentifierError, check_identifier, is_identifier,
};
pub use instance::{Instance, InstanceState};
pub use listing::{Listing, Unreadable};
pub use provider::Provider;
pub use redact::{redact_url, redact_urls_in};
pub use registry::{NoSettings, ProviderFactory, ProviderRegistry, ProviderSet, RegistryError};
pub use spec::{CreateSpec, NAME_MAX_LEN};

/// The README's examples, compiled and run as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
