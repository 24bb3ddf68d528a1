//! The `EgressProxy` custom resource (`egress.example.org/v1alpha1`) and its CRD.
//!
//! The CRD YAML checked in as `crd.yaml` is [`crd_yaml`]'s output (a test compares them;
//! `cargo run -p egress-controller -- crd > examples/egress-controller/crd.yaml` rewrites it).

use kube::CustomResource;
use kube::CustomResourceExt as _;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The finalizer the controller puts on every `EgressProxy` before it creates a VM: the
/// object is not removed until the VM (and so its disks) is deleted.
pub const FINALIZER: &str = "egress.example.org/instance";

/// What the operator asks for: one VM carrying an egress proxy.
///
/// Every field is fixed once the VM exists (the provider contract has no update): a change
/// is reported with the `SpecApplied=False` condition (reason `ImmutableFieldChanged`) and
/// the VM keeps running as created; see the README.
// Each `printcolumn(...)` repeats `type_ = "string"`, which the lint reads as a duplicate.
#[allow(clippy::duplicated_attributes)]
#[derive(CustomResource, Deserialize, Serialize, Clone, Debug, PartialEq, Eq, JsonSchema)]
#[kube(
    group = "egress.example.org",
    version = "v1alpha1",
    kind = "EgressProxy",
    namespaced,
    status = "EgressProxyStatus",
    shortname = "egp",
    printcolumn(name = "State", type_ = "string", json_path = ".status.state"),
    printcolumn(name = "IP", type_ = "string", json_path = ".status.ip"),
    printcolumn(name = "Provider", type_ = "string", json_path = ".spec.provider")
)]
#[serde(rename_all = "camelCase")]
pub struct EgressProxySpec {
    /// The provider entry (its `name` in the operator's provider configuration).
    pub provider: String,
    /// The image key under that entry's `images`.
    pub image: String,
    /// Virtual CPUs (default 1).
    #[serde(default = "one")]
    pub vcpus: u32,
    /// Memory in MiB (default 512).
    #[serde(default = "default_memory")]
    pub memory_mib: u64,
    /// Tags the VM carries (identifiers: lowercase letters, digits, `-`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<String>,
    /// The cloud-init user-data, read from a Secret in the object's namespace. Only the
    /// reference is ever stored or logged, never the data.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_data: Option<SecretKeyRef>,
}

impl EgressProxySpec {
    /// A spec for `image` on entry `provider`, with the defaults: 1 vCPU, 512 MiB, no tags,
    /// no user-data.
    pub fn new(provider: impl Into<String>, image: impl Into<String>) -> Self {
        Self {
            provider: provider.into(),
            image: image.into(),
            vcpus: one(),
            memory_mib: default_memory(),
            tags: Vec::new(),
            user_data: None,
        }
    }

    /// With memory `mib` and tags `tags`.
    #[must_use]
    pub fn with_size_and_tags(mut self, mib: u64, tags: &[&str]) -> Self {
        self.memory_mib = mib;
        self.tags = tags.iter().map(|t| (*t).to_owned()).collect();
        self
    }

    /// With the user-data in key `key` of Secret `name`.
    #[must_use]
    pub fn with_user_data(mut self, name: impl Into<String>, key: impl Into<String>) -> Self {
        self.user_data = Some(SecretKeyRef {
            name: name.into(),
            key: key.into(),
        });
        self
    }
}

fn one() -> u32 {
    1
}

fn default_memory() -> u64 {
    512
}

/// A key of a Secret in the object's namespace.
#[derive(Deserialize, Serialize, Clone, Debug, PartialEq, Eq, JsonSchema)]
pub struct SecretKeyRef {
    /// The Secret's name.
    pub name: String,
    /// The key in its `data`.
    pub key: String,
}

/// What the controller last saw.
#[derive(Deserialize, Serialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct EgressProxyStatus {
    /// `Provisioning`, `Running`, `Stopped`, `Failed` (the provider's state), `Pending`
    /// (no VM yet) or `Unknown` (the provider could not be read).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<String>,
    /// The proxy's address: set while `Running`, and kept for the grace period when a
    /// running VM reads as `Provisioning` (an agent restart looks like a boot).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ip: Option<String>,
    /// When a VM with a known IP was first read as `Provisioning` (RFC 3339); the IP is
    /// kept until this is older than the grace period.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provisioning_since: Option<String>,
    /// The spec the VM was created with (the provider entry it lives on included).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub applied: Option<EgressProxySpec>,
    /// `Ready`, `Failed`, `SpecApplied`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
    /// The `metadata.generation` this status describes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
}

/// A status condition, as Kubernetes' `metav1.Condition`.
#[derive(Deserialize, Serialize, Clone, Debug, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Condition {
    /// `Ready`, `Failed` or `SpecApplied`.
    #[serde(rename = "type")]
    pub type_: String,
    /// `True`, `False` or `Unknown`.
    pub status: String,
    /// A CamelCase reason.
    pub reason: String,
    /// For the operator.
    pub message: String,
    /// When `status` last changed (RFC 3339).
    pub last_transition_time: String,
    /// The generation this condition was set for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
}

/// The CRD as YAML, as checked in at `examples/egress-controller/crd.yaml`.
pub fn crd_yaml() -> String {
    serde_saphyr::to_string(&EgressProxy::crd()).expect("a CRD serializes")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checked_in_crd_is_the_generated_one() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/crd.yaml");
        let checked_in = std::fs::read_to_string(path).unwrap_or_default();
        assert!(
            checked_in == crd_yaml(),
            "{path} is not the CRD generated from the Rust type; regenerate it with \
             `cargo run -p egress-controller -- crd > examples/egress-controller/crd.yaml`"
        );
    }

    #[test]
    fn spec_defaults_and_round_trip() {
        let s: EgressProxySpec =
            serde_json::from_value(serde_json::json!({"provider": "kvm-a", "image": "debian-13"}))
                .unwrap();
        assert_eq!((s.vcpus, s.memory_mib), (1, 512));
        assert!(s.tags.is_empty() && s.user_data.is_none());
        let back: EgressProxySpec =
            serde_json::from_value(serde_json::to_value(&s).unwrap()).unwrap();
        assert_eq!(back, s);
    }
}
