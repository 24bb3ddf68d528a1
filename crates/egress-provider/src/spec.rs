//! What a caller asks a provider to create.

use std::collections::BTreeSet;
use std::fmt;

use crate::field::{FieldError, FieldErrors, Problem, join_index, join_key};
use crate::identifier::Identifier;

/// The longest display name accepted, in bytes.
pub const NAME_MAX_LEN: usize = 255;

/// A request to create one VM.
///
/// The [`uid`](Self::uid) is the VM's identity, chosen by the caller and
/// stable across retries: creating the same uid again returns the existing
/// instance and never makes a second VM. The rest of the spec is not compared
/// on a repeat; to change a VM, create a new uid and delete the old one.
///
/// Build with [`CreateSpec::new`] and the `with_*` methods; providers call
/// [`validate`](Self::validate) before touching a host.
///
/// ```
/// use egress_provider::{CreateSpec, Identifier};
///
/// let spec = CreateSpec::new(
///     Identifier::new("3f2c8a1e-egress-a")?,
///     "egress proxy a",
///     Identifier::new("debian-13")?,
/// )
/// .with_vcpus(2)
/// .with_memory_mib(1024)
/// .with_tag(Identifier::new("gateway-blue")?)
/// .with_user_data(b"#cloud-config\n".to_vec());
/// assert!(spec.validate().is_ok());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct CreateSpec {
    /// Stable identity chosen by the caller (e.g. the owning object's uid).
    pub uid: Identifier,
    /// Human-readable name: 1 to [`NAME_MAX_LEN`] bytes, no control characters.
    pub name: String,
    /// Key into the provider entry's `images`.
    pub image: Identifier,
    /// Virtual CPUs; at least 1.
    pub vcpus: u32,
    /// Memory in MiB; at least 1. Upper limits are the provider's to enforce.
    pub memory_mib: u64,
    /// Tags to find the instance by with
    /// [`list_by_tag`](crate::Provider::list_by_tag).
    pub tags: BTreeSet<Identifier>,
    /// cloud-init user-data, passed to the guest as is. May hold secrets, so
    /// `Debug` shows only its length.
    pub user_data: Vec<u8>,
    /// SSH public keys to authorize in the guest, one `authorized_keys` line each.
    pub ssh_authorized_keys: Vec<String>,
}

impl CreateSpec {
    /// A spec with 1 vCPU, 512 MiB, no tags, no user-data and no SSH keys.
    pub fn new(uid: Identifier, name: impl Into<String>, image: Identifier) -> Self {
        Self {
            uid,
            name: name.into(),
            image,
            vcpus: 1,
            memory_mib: 512,
            tags: BTreeSet::new(),
            user_data: Vec::new(),
            ssh_authorized_keys: Vec::new(),
        }
    }

    /// Sets the number of virtual CPUs.
    #[must_use]
    pub fn with_vcpus(mut self, vcpus: u32) -> Self {
        self.vcpus = vcpus;
        self
    }

    /// Sets the memory size in MiB.
    #[must_use]
    pub fn with_memory_mib(mut self, memory_mib: u64) -> Self {
        self.memory_mib = memory_mib;
        self
    }

    /// Adds one tag.
    #[must_use]
    pub fn with_tag(mut self, tag: Identifier) -> Self {
        self.tags.insert(tag);
        self
    }

    /// Adds several tags.
    #[must_use]
    pub fn with_tags(mut self, tags: impl IntoIterator<Item = Identifier>) -> Self {
        self.tags.extend(tags);
        self
    }

    /// Sets the cloud-init user-data.
    #[must_use]
    pub fn with_user_data(mut self, user_data: impl Into<Vec<u8>>) -> Self {
        self.user_data = user_data.into();
        self
    }

    /// Adds one SSH authorized key.
    #[must_use]
    pub fn with_ssh_authorized_key(mut self, key: impl Into<String>) -> Self {
        self.ssh_authorized_keys.push(key.into());
        self
    }

    /// Checks what the types cannot: name, sizes and key lines. Paths start
    /// with `spec.`, e.g. `spec.ssh_authorized_keys[1]`.
    ///
    /// Identifiers (uid, image, tags) are already valid by construction.
    pub fn validate(&self) -> Result<(), FieldErrors> {
        let mut errors = FieldErrors::new();
        let path = |field: &str| join_key("spec", field);

        if self.name.is_empty() {
            errors.push(FieldError::new(path("name"), Problem::Empty));
        } else if self.name.len() > NAME_MAX_LEN {
            errors.push(FieldError::invalid(
                path("name"),
                format!(
                    "is {} bytes long; at most {NAME_MAX_LEN} are allowed",
                    self.name.len()
                ),
            ));
        } else if self.name.chars().any(char::is_control) {
            errors.push(FieldError::invalid(
                path("name"),
                "must not contain control characters",
            ));
        }
        if self.vcpus == 0 {
            errors.push(FieldError::invalid(path("vcpus"), "must be at least 1"));
        }
        if self.memory_mib == 0 {
            errors.push(FieldError::invalid(
                path("memory_mib"),
                "must be at least 1",
            ));
        }
        for (i, key) in self.ssh_authorized_keys.iter().enumerate() {
            let at = join_index(&path("ssh_authorized_keys"), i);
            // A newline would smuggle a second, unvetted line into authorized_keys.
            if key.trim().is_empty() {
                errors.push(FieldError::new(at, Problem::Empty));
            } else if key.contains(['\n', '\r', '\0']) {
                errors.push(FieldError::invalid(
                    at,
                    "must be a single authorized_keys line",
                ));
            }
        }
        errors.into_result(())
    }
}

impl fmt::Debug for CreateSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CreateSpec")
            .field("uid", &self.uid)
            .field("name", &self.name)
            .field("image", &self.image)
            .field("vcpus", &self.vcpus)
            .field("memory_mib", &self.memory_mib)
            .field("tags", &self.tags)
            .field(
                "user_data",
                &format_args!("<{} bytes>", self.user_data.len()),
            )
            .field("ssh_authorized_keys", &self.ssh_authorized_keys)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(s: &str) -> Identifier {
        Identifier::new(s).unwrap()
    }

    #[test]
    fn defaults_are_valid() {
        let spec = CreateSpec::new(id("u1"), "n", id("img"));
        assert!(spec.validate().is_ok());
        assert_eq!(spec.vcpus, 1);
        assert_eq!(spec.memory_mib, 512);
    }

    #[test]
    fn invalid_fields_are_named() {
        let mut spec = CreateSpec::new(id("u1"), "", id("img"))
            .with_vcpus(0)
            .with_memory_mib(0)
            .with_ssh_authorized_key("ssh-ed25519 AAAA a@b")
            .with_ssh_authorized_key("ssh-ed25519 AAAA x\nssh-rsa BBBB evil");
        let errs = spec.validate().unwrap_err();
        for p in [
            "spec.name",
            "spec.vcpus",
            "spec.memory_mib",
            "spec.ssh_authorized_keys[1]",
        ] {
            assert!(errs.at(p).is_some(), "missing {p} in {errs}");
        }
        assert!(errs.at("spec.ssh_authorized_keys[0]").is_none());
        spec.name = "a\u{7}b".into();
        assert!(spec.validate().unwrap_err().at("spec.name").is_some());
        spec.name = "x".repeat(256);
        assert!(spec.validate().unwrap_err().at("spec.name").is_some());
    }

    #[test]
    fn debug_hides_user_data() {
        let spec =
            CreateSpec::new(id("u1"), "n", id("img")).with_user_data(b"password: hunter2".to_vec());
        let dbg = format!("{spec:?}");
        assert!(!dbg.contains("hunter2"), "{dbg}");
        assert!(dbg.contains("<17 bytes>"), "{dbg}");
    }
}
