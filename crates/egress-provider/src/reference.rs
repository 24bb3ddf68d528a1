//! The in-memory **reference provider**: the contract's executable example.
//!
//! [`InMemoryProvider`] is not a mock of KVM and touches no network. It is
//! the smallest implementation that keeps every rule of the
//! [`Provider`] contract, so the rules can be read in code and the
//! conformance suite can prove itself on it. It is also a handy backend for
//! unit-testing a controller.
//!
//! Its "host" is a map in memory, and every answer is read from that map:
//!
//! * `create` validates the spec and the image key (`Permanent` when bad),
//!   then defines the VM once per uid and answers `Provisioning`.
//! * Each observation of a VM (the `create` answer, `get`, `list_by_tag`)
//!   stands for time passing: after
//!   [`boot_observations`](InMemoryProvider::with_boot_observations) of them
//!   the VM is `Running` with an address from 192.0.2.0/24 (TEST-NET-1, RFC
//!   5737: documentation-only, a plain value here, never contacted).
//! * [`set_reachable(false)`](InMemoryProvider::set_reachable) makes every call
//!   fail as a host that refuses connections would: `Transient`.
//! * [`power_off`](InMemoryProvider::power_off) and
//!   [`fail`](InMemoryProvider::fail) change a VM behind the provider's
//!   back, as an operator or a crash would.
//! * [`set_unreadable`](InMemoryProvider::set_unreadable) makes one VM's
//!   state unreadable (as a guest whose address no source can read): `get`
//!   of it is `Transient`, and `list_by_tag` reports it in
//!   [`Listing::unreadable`] while it lists the others.

use std::collections::{BTreeMap, BTreeSet};
use std::io;
use std::net::{IpAddr, Ipv4Addr};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::SystemTime;

use async_trait::async_trait;
use serde::Deserialize;

use crate::config::ProviderEntry;
use crate::error::ProviderError;
use crate::field::FieldErrors;
use crate::identifier::Identifier;
use crate::instance::{Instance, InstanceState};
use crate::listing::{Listing, Unreadable};
use crate::provider::Provider;
use crate::registry::ProviderFactory;
use crate::spec::CreateSpec;

/// Observations that answer `Provisioning` before a VM runs, by default.
pub const DEFAULT_BOOT_OBSERVATIONS: u32 = 2;

/// The in-memory reference provider; see the [module docs](self).
#[derive(Debug)]
pub struct InMemoryProvider {
    name: String,
    images: BTreeSet<Identifier>,
    boot_observations: u32,
    host: Mutex<Host>,
}

#[derive(Debug)]
struct Host {
    reachable: bool,
    vms: BTreeMap<Identifier, Vm>,
}

#[derive(Debug)]
struct Vm {
    name: String,
    tags: BTreeSet<Identifier>,
    created_at: SystemTime,
    // Reserved at create so the address is stable once revealed.
    ip: Ipv4Addr,
    power: Power,
    // Why its state cannot be read now, if it cannot.
    unreadable: Option<String>,
}

#[derive(Debug)]
enum Power {
    Booting { remaining: u32 },
    Running,
    Stopped,
    Failed(String),
}

impl Vm {
    // One look at the VM: boot progresses, then the state is reported; a VM whose state
    // cannot be read is an error (Transient: unreadable is not missing).
    fn observe(&mut self, provider: &str, uid: &Identifier) -> Result<Instance, ProviderError> {
        if let Some(reason) = &self.unreadable {
            return Err(ProviderError::transient(format!(
                "the state of instance {:?} on provider {provider:?} cannot be read: {reason}",
                uid.as_str()
            )));
        }
        if let Power::Booting { remaining } = &mut self.power {
            if *remaining == 0 {
                self.power = Power::Running;
            } else {
                *remaining -= 1;
            }
        }
        let state = match &self.power {
            Power::Booting { .. } => InstanceState::Provisioning,
            Power::Running => InstanceState::Running {
                ip: IpAddr::V4(self.ip),
            },
            Power::Stopped => InstanceState::Stopped,
            Power::Failed(reason) => InstanceState::Failed {
                reason: reason.clone(),
            },
        };
        Ok(
            Instance::new(provider, uid.clone(), &self.name, state, self.created_at)
                .with_tags(self.tags.iter().cloned()),
        )
    }
}

impl InMemoryProvider {
    /// The `type` name [`InMemoryFactory`] is usually registered under.
    pub const TYPE: &'static str = "in-memory";

    /// A reachable provider named `name` that knows no images yet.
    pub fn new(name: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            images: BTreeSet::new(),
            boot_observations: DEFAULT_BOOT_OBSERVATIONS,
            host: Mutex::new(Host {
                reachable: true,
                vms: BTreeMap::new(),
            }),
        }
    }

    /// Adds an image key that `create` accepts.
    #[must_use]
    pub fn with_image(mut self, key: Identifier) -> Self {
        self.images.insert(key);
        self
    }

    /// Adds image keys that `create` accepts.
    #[must_use]
    pub fn with_images(mut self, keys: impl IntoIterator<Item = Identifier>) -> Self {
        self.images.extend(keys);
        self
    }

    /// How many observations of a new VM answer `Provisioning` before it
    /// runs; 0 makes `create` answer `Running` at once.
    #[must_use]
    pub fn with_boot_observations(mut self, n: u32) -> Self {
        self.boot_observations = n;
        self
    }

    /// Starts the provider with its host unreachable.
    #[must_use]
    pub fn unreachable(self) -> Self {
        self.set_reachable(false);
        self
    }

    /// Simulates the host going away (`false`) or coming back (`true`).
    /// VMs survive an outage, as on a real host.
    pub fn set_reachable(&self, reachable: bool) {
        self.lock().reachable = reachable;
    }

    /// Powers a VM off behind the provider's back. `false` if it does not exist.
    pub fn power_off(&self, uid: &Identifier) -> bool {
        self.set_power(uid, Power::Stopped)
    }

    /// Marks a VM failed behind the provider's back. `false` if it does not exist.
    pub fn fail(&self, uid: &Identifier, reason: impl Into<String>) -> bool {
        self.set_power(uid, Power::Failed(reason.into()))
    }

    /// Makes a VM's state unreadable (`Some(reason)`) or readable again (`None`), as a
    /// guest whose address no source can read. `false` if it does not exist.
    pub fn set_unreadable(&self, uid: &Identifier, reason: Option<String>) -> bool {
        match self.lock().vms.get_mut(uid) {
            Some(vm) => {
                vm.unreadable = reason;
                true
            }
            None => false,
        }
    }

    /// How many VMs the host holds, whatever their state.
    pub fn vm_count(&self) -> usize {
        self.lock().vms.len()
    }

    fn set_power(&self, uid: &Identifier, power: Power) -> bool {
        match self.lock().vms.get_mut(uid) {
            Some(vm) => {
                vm.power = power;
                true
            }
            None => false,
        }
    }

    fn lock(&self) -> MutexGuard<'_, Host> {
        // A panic elsewhere cannot leave the map half-updated: every update is
        // a single insert, remove or assignment.
        self.host.lock().unwrap_or_else(PoisonError::into_inner)
    }

    // The reachable host, or the error a refused connection maps to
    // (rule 2 of the error module: Transient, with the I/O error as source).
    fn connect(&self) -> Result<MutexGuard<'_, Host>, ProviderError> {
        let host = self.lock();
        if host.reachable {
            Ok(host)
        } else {
            Err(ProviderError::classified(
                format!("cannot reach the host of provider {:?}", self.name),
                io::Error::new(
                    io::ErrorKind::ConnectionRefused,
                    "simulated unreachable host",
                ),
            ))
        }
    }
}

fn free_ip(vms: &BTreeMap<Identifier, Vm>) -> Option<Ipv4Addr> {
    let used: BTreeSet<Ipv4Addr> = vms.values().map(|vm| vm.ip).collect();
    (1..=254)
        .map(|host| Ipv4Addr::new(192, 0, 2, host))
        .find(|ip| !used.contains(ip))
}

#[async_trait]
impl Provider for InMemoryProvider {
    fn name(&self) -> &str {
        &self.name
    }

    async fn create(&self, spec: &CreateSpec) -> Result<Instance, ProviderError> {
        // Local checks first: they need no host and must leave nothing behind.
        spec.validate().map_err(|errors| {
            ProviderError::permanent(format!(
                "invalid create spec for {:?}; fix the caller",
                spec.uid.as_str()
            ))
            .with_source(errors)
        })?;
        if !self.images.contains(&spec.image) {
            let known: Vec<&str> = self.images.iter().map(Identifier::as_str).collect();
            return Err(ProviderError::permanent(format!(
                "image key {:?} is not configured for provider {:?} (known: {}); \
                 add it under this entry's images or fix the spec",
                spec.image.as_str(),
                self.name,
                if known.is_empty() {
                    "none".to_owned()
                } else {
                    known.join(", ")
                },
            )));
        }

        let mut host = self.connect()?;
        let host = &mut *host;
        if !host.vms.contains_key(&spec.uid) {
            let ip = free_ip(&host.vms).ok_or_else(|| {
                ProviderError::transient(format!(
                    "provider {:?} has no free address in 192.0.2.0/24; retry after deleting instances",
                    self.name
                ))
            })?;
            host.vms.insert(
                spec.uid.clone(),
                Vm {
                    name: spec.name.clone(),
                    tags: spec.tags.clone(),
                    created_at: SystemTime::now(),
                    ip,
                    power: Power::Booting {
                        remaining: self.boot_observations,
                    },
                    unreadable: None,
                },
            );
        }
        let vm = host.vms.get_mut(&spec.uid).expect("inserted above");
        vm.observe(&self.name, &spec.uid)
    }

    async fn get(&self, uid: &Identifier) -> Result<Instance, ProviderError> {
        let mut host = self.connect()?;
        match host.vms.get_mut(uid) {
            Some(vm) => vm.observe(&self.name, uid),
            None => Err(ProviderError::not_found(format!(
                "instance {:?} does not exist on provider {:?}",
                uid.as_str(),
                self.name
            ))),
        }
    }

    async fn delete(&self, uid: &Identifier) -> Result<(), ProviderError> {
        // Absent is success: the caller wanted it gone, and it is.
        self.connect()?.vms.remove(uid);
        Ok(())
    }

    async fn list_by_tag(&self, tag: &Identifier) -> Result<Listing, ProviderError> {
        // The host answered: from here on, one VM's failure is that VM's, never the list's.
        let mut host = self.connect()?;
        let mut listing = Listing::default();
        for (uid, vm) in host.vms.iter_mut().filter(|(_, vm)| vm.tags.contains(tag)) {
            match vm.observe(&self.name, uid) {
                Ok(inst) => listing.instances.push(inst),
                Err(error) => {
                    let u = Unreadable::new(uid.as_str(), Some(uid.clone()), error);
                    listing.unreadable.push(u);
                }
            }
        }
        Ok(listing)
    }
}

/// The type-specific settings of an `in-memory` entry.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct InMemorySettings {
    /// See [`InMemoryProvider::with_boot_observations`]; default 2.
    #[serde(default = "default_boot_observations")]
    pub boot_observations: u32,
    /// Start with the host unreachable; default `false`.
    #[serde(default)]
    pub unreachable: bool,
}

fn default_boot_observations() -> u32 {
    DEFAULT_BOOT_OBSERVATIONS
}

/// Builds [`InMemoryProvider`]s from `in-memory` entries; the entry's image
/// keys become the accepted keys.
///
/// ```
/// use egress_provider::{ProviderRegistry, ProvidersConfig, reference::{InMemoryFactory, InMemoryProvider}};
///
/// let mut registry = ProviderRegistry::new();
/// registry.register(InMemoryProvider::TYPE, InMemoryFactory)?;
/// let config = ProvidersConfig::from_yaml_str(
///     r#"
/// providers:
///   - name: lab
///     type: in-memory
///     boot_observations: 0
///     allow_unverified_images: true
///     images:
///       debian-13: { url: "https://images.example/d13.raw", format: raw }
/// "#,
/// )?;
/// let providers = registry.build(&config)?;
/// assert_eq!(providers.get("lab").unwrap().name(), "lab");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct InMemoryFactory;

impl ProviderFactory for InMemoryFactory {
    type Settings = InMemorySettings;

    fn build(
        &self,
        entry: &ProviderEntry,
        settings: InMemorySettings,
    ) -> Result<Arc<dyn Provider>, FieldErrors> {
        let provider = InMemoryProvider::new(entry.name.as_str())
            .with_images(entry.images.keys().cloned())
            .with_boot_observations(settings.boot_observations);
        provider.set_reachable(!settings.unreachable);
        Ok(Arc::new(provider))
    }
}
