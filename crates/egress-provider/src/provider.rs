//! The provider trait.

use async_trait::async_trait;

use crate::error::ProviderError;
use crate::identifier::Identifier;
use crate::instance::Instance;
use crate::listing::Listing;
use crate::spec::CreateSpec;

/// Creates, observes and removes the VMs that carry egress proxies.
///
/// Object-safe: controllers hold providers as `Arc<dyn Provider>`.
///
/// # Semantics every implementation keeps
///
/// * **Identity.** The caller picks each VM's [`uid`](CreateSpec::uid). A
///   provider stores it on the host (domain name, metadata) so that all
///   answers are read back from the host, never from the provider's memory.
/// * **`create` is idempotent.** Creating an existing uid returns that
///   instance as it is now (whatever its state) and never makes a second
///   VM. The rest of the spec is not compared.
/// * **`get` reads the host.** [`Provisioning`](crate::InstanceState::Provisioning)
///   without an IP is a normal answer while the VM boots. An absent uid is
///   [`NotFound`](crate::ErrorKind::NotFound); a host that does not answer is
///   [`Transient`](crate::ErrorKind::Transient), never `NotFound`.
/// * **`delete` is idempotent.** Deleting a uid that does not exist is
///   success. `Ok` means gone: the next `get` is `NotFound`. A host that
///   does not answer is an error, never `Ok`.
/// * **`list_by_tag`** returns every instance on this provider's host that
///   carries the tag, in no particular order, in a [`Listing`]. One instance
///   that cannot be read (its address, its state or its record) is reported
///   in [`Listing::unreadable`] with its own error; the others are listed.
///   Only a host that does not answer fails the whole call (`Transient`).
/// * **Errors** are classified by the provider; see [`crate::error`].
/// * **Budgets.** The contract imposes no caller deadline. Each provider
///   bounds its own calls (connect timeouts, boot waits) and documents those
///   budgets, so no call hangs forever. A caller may still drop a call's
///   future; the provider must then leave the host in a state that the same
///   call, repeated, completes (idempotency is what makes this safe).
/// * **Validation.** `create` calls [`CreateSpec::validate`] first and
///   answers an invalid spec or an unknown image key with
///   [`Permanent`](crate::ErrorKind::Permanent), leaving nothing behind.
///
/// The [`reference`](crate::reference) module holds an in-memory
/// implementation that shows each rule in code, and the `conformance`
/// feature's suite checks them against any implementation.
#[async_trait]
pub trait Provider: Send + Sync {
    /// The provider entry's name (e.g. `kvm-a`), as written in configuration
    /// and reported in [`Instance::provider`].
    fn name(&self) -> &str;

    /// Creates the VM described by `spec`, or returns the existing one with
    /// the same uid. Usually answers [`Provisioning`](crate::InstanceState::Provisioning).
    async fn create(&self, spec: &CreateSpec) -> Result<Instance, ProviderError>;

    /// Reads the VM with this uid from the host.
    async fn get(&self, uid: &Identifier) -> Result<Instance, ProviderError>;

    /// Removes the VM with this uid and everything the provider made for it
    /// (disks, seed images). Success if it does not exist.
    async fn delete(&self, uid: &Identifier) -> Result<(), ProviderError>;

    /// Every VM on this provider's host carrying `tag`; the ones that cannot be read
    /// are reported one by one in [`Listing::unreadable`].
    async fn list_by_tag(&self, tag: &Identifier) -> Result<Listing, ProviderError>;
}
