//! What `list_by_tag` answers: the instances it could read, and, one by one, what it could
//! not.

use crate::error::ProviderError;
use crate::identifier::Identifier;
use crate::instance::Instance;

/// The answer of [`Provider::list_by_tag`](crate::Provider::list_by_tag).
///
/// One sick VM never hides the others. An instance whose state, address or record cannot
/// be read is reported in [`unreadable`](Self::unreadable), with its own error, and every
/// other instance is listed as usual. Only a host that does not answer at all (a dead
/// connection, an unreachable host) fails the whole call, as `Transient`.
///
/// ```
/// # use egress_provider::{Listing, Provider, Identifier, ProviderError};
/// # async fn orphans(provider: &dyn Provider, live: &std::collections::BTreeSet<String>)
/// #     -> Result<(), ProviderError> {
/// let listing = provider.list_by_tag(&Identifier::new("egress-controller").expect("valid")).await?;
/// for sick in &listing.unreadable {
///     // Report it; do not treat it as gone, and do not forget what you knew about it.
///     eprintln!("{}: {}", sick.object, sick.error);
/// }
/// for vm in &listing.instances {
///     if !live.contains(vm.uid.as_str()) {
///         provider.delete(&vm.uid).await?;
///     }
/// }
/// # Ok(()) }
/// ```
#[derive(Debug, Default)]
#[non_exhaustive]
pub struct Listing {
    /// Every readable instance carrying the tag, in no order; each answered as `get`
    /// would answer it.
    pub instances: Vec<Instance>,
    /// Objects on the host that are, or may be, this provider's instances but could not be
    /// read now, each with its own error. One whose record (and so its tags) could not be
    /// read is reported whatever the tag asked for.
    pub unreadable: Vec<Unreadable>,
}

impl Listing {
    /// A listing of `instances`, with nothing unreadable.
    pub fn new(instances: Vec<Instance>) -> Self {
        Self {
            instances,
            unreadable: Vec::new(),
        }
    }

    /// Adds an unreadable object.
    #[must_use]
    pub fn with_unreadable(mut self, u: Unreadable) -> Self {
        self.unreadable.push(u);
        self
    }

    /// Whether every object could be read.
    pub fn is_complete(&self) -> bool {
        self.unreadable.is_empty()
    }

    /// The uids of the listed and of the unreadable instances whose uid is known.
    pub fn uids(&self) -> impl Iterator<Item = &Identifier> {
        self.instances
            .iter()
            .map(|i| &i.uid)
            .chain(self.unreadable.iter().filter_map(|u| u.uid.as_ref()))
    }
}

/// One object `list_by_tag` could not read.
#[derive(Debug)]
#[non_exhaustive]
pub struct Unreadable {
    /// The host's name for it (for KVM: the domain name).
    pub object: String,
    /// Its uid, when the host's name or record tells it.
    pub uid: Option<Identifier>,
    /// Why it could not be read, classified like any provider error: usually `Transient`
    /// (an address that cannot be read right now), `Permanent` when an operator must act
    /// (a damaged record).
    pub error: ProviderError,
}

impl Unreadable {
    /// An unreadable object.
    pub fn new(object: impl Into<String>, uid: Option<Identifier>, error: ProviderError) -> Self {
        Self {
            object: object.into(),
            uid,
            error,
        }
    }
}
