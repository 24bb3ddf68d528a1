//! What a provider reports about a VM.

use std::collections::BTreeSet;
use std::fmt;
use std::net::IpAddr;
use std::time::SystemTime;

use crate::identifier::Identifier;

/// A VM as the provider's host reports it right now.
///
/// Every field is read back from the host on each call; a provider does not
/// answer from memory of what it asked for earlier. So a VM that crashed,
/// was stopped by hand or was deleted behind the controller's back shows up
/// as such on the next `get`.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Instance {
    /// The caller-chosen identity from [`CreateSpec::uid`](crate::CreateSpec::uid).
    pub uid: Identifier,
    /// The display name from [`CreateSpec::name`](crate::CreateSpec::name).
    pub name: String,
    /// The VM's state, including its address once it is running.
    pub state: InstanceState,
    /// When the host created the VM. Unchanged by a repeated create, which
    /// is how a caller can tell that no second VM was made.
    pub created_at: SystemTime,
    /// The tags it was created with.
    pub tags: BTreeSet<Identifier>,
    /// The [`name`](crate::Provider::name) of the provider that owns it.
    pub provider: String,
}

impl Instance {
    /// An instance report with no tags.
    pub fn new(
        provider: impl Into<String>,
        uid: Identifier,
        name: impl Into<String>,
        state: InstanceState,
        created_at: SystemTime,
    ) -> Self {
        Self {
            uid,
            name: name.into(),
            state,
            created_at,
            tags: BTreeSet::new(),
            provider: provider.into(),
        }
    }

    /// Sets the tags.
    #[must_use]
    pub fn with_tags(mut self, tags: impl IntoIterator<Item = Identifier>) -> Self {
        self.tags = tags.into_iter().collect();
        self
    }

    /// The VM's address: `Some` exactly when the state is
    /// [`Running`](InstanceState::Running).
    pub fn ip(&self) -> Option<IpAddr> {
        self.state.ip()
    }
}

/// The state of a VM, as its host reports it.
///
/// New states may be added; a caller that meets one it does not know should
/// treat it like [`Provisioning`](Self::Provisioning): wait and look again.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum InstanceState {
    /// The VM exists but is not usable yet: being defined, booting, or
    /// running without a known address. A normal answer, not an error, and
    /// carries no IP. Look again later.
    Provisioning,
    /// The VM is up and reachable at `ip`. A VM that runs but whose address
    /// is not known yet is [`Provisioning`](Self::Provisioning), so a caller
    /// can route to `ip` as soon as it sees this state.
    Running {
        /// The guest's address.
        ip: IpAddr,
    },
    /// The VM exists but is powered off. It keeps its uid; delete it and
    /// create again to replace it.
    Stopped,
    /// The host gave up on the VM (failed to define or boot it, crashed).
    /// `reason` is the host's explanation for the operator. The VM still
    /// exists until deleted.
    Failed {
        /// Why, in the host's words.
        reason: String,
    },
}

impl InstanceState {
    /// The address, when running.
    pub fn ip(&self) -> Option<IpAddr> {
        match self {
            Self::Running { ip } => Some(*ip),
            _ => None,
        }
    }

    /// Whether the state is [`Running`](Self::Running).
    pub fn is_running(&self) -> bool {
        matches!(self, Self::Running { .. })
    }

    /// A short lowercase label for logs and status fields.
    pub fn as_str(&self) -> &'static str {
        match self {
            Self::Provisioning => "provisioning",
            Self::Running { .. } => "running",
            Self::Stopped => "stopped",
            Self::Failed { .. } => "failed",
        }
    }
}

impl fmt::Display for InstanceState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Running { ip } => write!(f, "running at {ip}"),
            Self::Failed { reason } => write!(f, "failed: {reason}"),
            other => f.write_str(other.as_str()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::Ipv4Addr;

    #[test]
    fn ip_only_when_running() {
        let ip = IpAddr::V4(Ipv4Addr::new(192, 0, 2, 7));
        let uid = Identifier::new("u").unwrap();
        let mut inst = Instance::new(
            "p",
            uid,
            "n",
            InstanceState::Provisioning,
            SystemTime::UNIX_EPOCH,
        );
        assert_eq!(inst.ip(), None);
        inst.state = InstanceState::Running { ip };
        assert_eq!(inst.ip(), Some(ip));
        assert_eq!(inst.state.to_string(), "running at 192.0.2.7");
        inst.state = InstanceState::Failed {
            reason: "disk".into(),
        };
        assert_eq!(inst.ip(), None);
        assert_eq!(inst.state.as_str(), "failed");
    }
}
