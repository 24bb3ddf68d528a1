//! Building providers from configuration by `type`.
//!
//! The embedding program registers one [`ProviderFactory`] per provider type
//! it links in (say `kvm`), then builds every configured entry at once, so
//! one controller can run several entries (two KVM hosts, for example).

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

use serde::Deserialize;
use serde::de::DeserializeOwned;

use crate::config::{ConfigError, ProviderEntry, ProvidersConfig};
use crate::field::{FieldErrors, Problem};
use crate::identifier::{Identifier, IdentifierError};
use crate::provider::Provider;

/// Builds the providers of one `type` from their entries.
///
/// The registry deserializes the entry's type-specific keys into
/// [`Settings`](Self::Settings) before calling [`build`](Self::build), and
/// rejects every key the settings type does not read, with the entry's path
/// (`providers[1].prot: unknown field`). `#[serde(deny_unknown_fields)]` on
/// the settings type is therefore optional: without it every unknown key is
/// reported at once, with it serde stops at the first. Extra checks go into
/// `build`, reported with [`ProviderEntry::field_error`] so they carry the
/// entry's path too.
///
/// The common keys (`name`, `type`, `images`, `allow_unverified_images`)
/// are parsed and validated by [`ProvidersConfig`] and are not part of the
/// settings; read them from the [`ProviderEntry`].
///
/// `build` should not do network I/O: a host that is down at startup must
/// not keep the controller from running its other entries. Connect lazily
/// and report an unreachable host as a [`Transient`](crate::ErrorKind::Transient)
/// error from the calls.
///
/// ```
/// use std::sync::Arc;
/// use egress_provider::{
///     FieldErrors, Problem, Provider, ProviderEntry, ProviderFactory, reference::InMemoryProvider,
/// };
///
/// #[derive(serde::Deserialize)]
/// struct LabSettings {
///     boot_observations: u32,
/// }
///
/// struct LabFactory;
///
/// impl ProviderFactory for LabFactory {
///     type Settings = LabSettings;
///
///     fn build(
///         &self,
///         entry: &ProviderEntry,
///         settings: LabSettings,
///     ) -> Result<Arc<dyn Provider>, FieldErrors> {
///         if settings.boot_observations > 100 {
///             return Err(entry
///                 .field_error("boot_observations", Problem::invalid("must be at most 100"))
///                 .into());
///         }
///         let provider = InMemoryProvider::new(entry.name.as_str())
///             .with_images(entry.images.keys().cloned())
///             .with_boot_observations(settings.boot_observations);
///         Ok(Arc::new(provider))
///     }
/// }
/// ```
pub trait ProviderFactory: Send + Sync + 'static {
    /// The entry's type-specific keys, e.g. host and credentials. Use
    /// [`NoSettings`] for a type that has none.
    type Settings: DeserializeOwned;

    /// Builds the provider for `entry`. The provider's
    /// [`name`](Provider::name) must be the entry's name.
    fn build(
        &self,
        entry: &ProviderEntry,
        settings: Self::Settings,
    ) -> Result<Arc<dyn Provider>, FieldErrors>;
}

/// [`ProviderFactory::Settings`] for a type without type-specific keys: any
/// key besides the common ones is an error.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NoSettings {}

// The object-safe face of a factory: settings are decoded inside.
trait ErasedFactory: Send + Sync {
    fn build(&self, entry: &ProviderEntry) -> Result<Arc<dyn Provider>, FieldErrors>;
}

impl<F: ProviderFactory> ErasedFactory for F {
    fn build(&self, entry: &ProviderEntry) -> Result<Arc<dyn Provider>, FieldErrors> {
        let settings = entry.settings::<F::Settings>()?;
        ProviderFactory::build(self, entry, settings)
    }
}

/// Why a factory could not be registered.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RegistryError {
    /// The type name breaks the identifier rule.
    #[error("provider type {value:?} is not a valid identifier")]
    InvalidType {
        /// The rejected name.
        value: String,
        /// Which part of the rule it breaks.
        #[source]
        source: IdentifierError,
    },
    /// A factory for this type is already registered.
    #[error("provider type {0:?} is already registered")]
    DuplicateType(String),
}

/// Factories by provider type.
#[derive(Default)]
pub struct ProviderRegistry {
    factories: BTreeMap<Identifier, Box<dyn ErasedFactory>>,
}

impl ProviderRegistry {
    /// An empty registry.
    pub fn new() -> Self {
        Self::default()
    }

    /// Registers `factory` for entries whose `type` is `provider_type`.
    pub fn register<F: ProviderFactory>(
        &mut self,
        provider_type: &str,
        factory: F,
    ) -> Result<&mut Self, RegistryError> {
        let ty = Identifier::new(provider_type).map_err(|source| RegistryError::InvalidType {
            value: provider_type.to_owned(),
            source,
        })?;
        if self.factories.contains_key(&ty) {
            return Err(RegistryError::DuplicateType(ty.into_string()));
        }
        self.factories.insert(ty, Box::new(factory));
        Ok(self)
    }

    /// The registered types, sorted.
    pub fn types(&self) -> impl Iterator<Item = &str> {
        self.factories.keys().map(Identifier::as_str)
    }

    /// Whether a factory is registered for `provider_type`.
    pub fn contains(&self, provider_type: &str) -> bool {
        self.factories.contains_key(provider_type)
    }

    /// Builds one entry's provider.
    pub fn build_entry(&self, entry: &ProviderEntry) -> Result<Arc<dyn Provider>, FieldErrors> {
        let Some(factory) = self.factories.get(&entry.provider_type) else {
            return Err(entry
                .field_error(
                    "type",
                    Problem::UnknownType {
                        value: entry.provider_type.to_string(),
                        known: self.types().map(str::to_owned).collect(),
                    },
                )
                .into());
        };
        let provider = factory.build(entry)?;
        if provider.name() != entry.name.as_str() {
            return Err(entry
                .field_error(
                    "name",
                    Problem::invalid(format!(
                        "the {} factory built a provider named {:?}; it must use the entry's name",
                        entry.provider_type,
                        provider.name()
                    )),
                )
                .into());
        }
        Ok(provider)
    }

    /// Builds every entry, reporting the problems of all entries together.
    pub fn build(&self, config: &ProvidersConfig) -> Result<ProviderSet, ConfigError> {
        let mut errors = FieldErrors::new();
        let mut providers = Vec::with_capacity(config.providers.len());
        for entry in &config.providers {
            match self.build_entry(entry) {
                Ok(p) => providers.push((entry.name.clone(), p)),
                Err(e) => errors.extend(e),
            }
        }
        Ok(errors.into_result(ProviderSet { providers })?)
    }
}

impl fmt::Debug for ProviderRegistry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ProviderRegistry")
            .field("types", &self.types().collect::<Vec<_>>())
            .finish()
    }
}

/// The built providers, by entry name, in configuration order.
#[derive(Clone, Default)]
pub struct ProviderSet {
    providers: Vec<(Identifier, Arc<dyn Provider>)>,
}

impl ProviderSet {
    /// The provider of the entry with this name.
    pub fn get(&self, name: &str) -> Option<&Arc<dyn Provider>> {
        self.providers
            .iter()
            .find(|(n, _)| n.as_str() == name)
            .map(|(_, p)| p)
    }

    /// Entry names and providers, in configuration order.
    pub fn iter(&self) -> impl Iterator<Item = (&Identifier, &Arc<dyn Provider>)> {
        self.providers.iter().map(|(n, p)| (n, p))
    }

    /// Entry names, in configuration order.
    pub fn names(&self) -> impl Iterator<Item = &Identifier> {
        self.providers.iter().map(|(n, _)| n)
    }

    /// How many providers were built.
    pub fn len(&self) -> usize {
        self.providers.len()
    }

    /// Whether no provider was built.
    pub fn is_empty(&self) -> bool {
        self.providers.is_empty()
    }
}

impl fmt::Debug for ProviderSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.names()).finish()
    }
}
