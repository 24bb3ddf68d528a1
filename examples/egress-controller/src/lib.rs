//! An example Kubernetes controller (kube-rs) that runs egress proxies as VMs through the
//! provider contract (`egress-provider`): one `EgressProxy` object, one VM.
//!
//! * [`resource`]: the `EgressProxy` custom resource and its CRD (`crd.yaml`).
//! * [`reconcile`]: the decisions, plain async functions over `Arc<dyn Provider>`s built by
//!   the registry from the operator's YAML: create when absent, state and IP into the
//!   status, backoff on `Transient`, a `Failed` condition on `Permanent`, the IP kept for
//!   a grace period across a `Provisioning` blip, immutable fields, the reconcile budget.
//! * [`controller`]: the kube side (`runtime::Controller`, the finalizer helper, the status
//!   patch, the user-data Secret).
//!
//! See the crate's README for what is tested how and how to run it against a cluster.

pub mod controller;
pub mod reconcile;
pub mod resource;

use egress_provider::{ProviderRegistry, ProviderSet, ProvidersConfig, reference};

/// The registry of the provider types this controller links in: `kvm2` and `in-memory`.
pub fn registry() -> ProviderRegistry {
    let mut r = ProviderRegistry::new();
    r.register(
        egress_kvm2::Kvm2Factory::TYPE,
        egress_kvm2::Kvm2Factory::default(),
    )
    .expect("a fresh registry");
    r.register(
        reference::InMemoryProvider::TYPE,
        reference::InMemoryFactory,
    )
    .expect("a fresh registry");
    r
}

/// Every entry of `config` built through [`registry`].
pub fn build_providers(
    config: &ProvidersConfig,
) -> Result<ProviderSet, egress_provider::ConfigError> {
    registry().build(config)
}
