//! Named points between the steps of `create` and `delete`, for the fault-injection tests.
//!
//! The provider awaits `FaultPoints::at` at each arrow of its step sequence. Without the
//! `fault-injection` feature (off unless this crate's own tests turn it on) that is an empty
//! inline function; with it, a hook installed by a test
//! (`Kvm2Provider::with_fault_hook`) runs there and
//! may kill the daemon, cut the link, arm an injected error for the next call, or never
//! return (so the test drops the operation's future). `tests/faults.rs` drives every
//! (point × fault kind) pair and checks that a retry converges.

use std::fmt;
#[cfg(feature = "fault-injection")]
use std::sync::Arc;

/// A point between two steps of `create` (`Create*`) or `delete` (`Delete*`): the hook runs
/// just before the named step's first call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum Point {
    /// After validation, before the base image is ensured (outside the per-uid lock and
    /// lease).
    CreateBase,
    /// Image fetch answered, before the base volume is created.
    CreateBaseVolume,
    /// Base volume created, before the upload into it starts.
    CreateBaseUpload,
    /// Uploaded and verified, before the lease check and the marker.
    CreateBaseMarker,
    /// Base image ensured, before the per-uid lock, the start turn and the uid lease.
    CreateLock,
    /// Before looking up an existing domain to adopt.
    CreateAdopt,
    /// Before the overlay is created (or reused).
    CreateOverlay,
    /// Before the seed is rebuilt.
    CreateSeed,
    /// Seed volume created, before its bytes are uploaded.
    CreateSeedUpload,
    /// Before the domain is defined.
    CreateDefine,
    /// Defined, before it is started.
    CreateStart,
    /// Started, before the port forwards are added.
    CreateForwards,
    /// Before the instance is read back.
    CreateReadBack,
    /// Before the per-uid lock (and the uid lease) of `delete`.
    DeleteLock,
    /// Domain found and ours, before the graceful shutdown.
    DeleteShutdown,
    /// Graceful shutdown over (or skipped), before destroy.
    DeleteDestroy,
    /// Stopped, before undefine.
    DeleteUndefine,
    /// Undefined (or absent), before the overlay and seed are deleted.
    DeleteVolumes,
}

impl Point {
    /// Every point, in step order.
    pub const ALL: [Self; 18] = [
        Self::CreateBase,
        Self::CreateBaseVolume,
        Self::CreateBaseUpload,
        Self::CreateBaseMarker,
        Self::CreateLock,
        Self::CreateAdopt,
        Self::CreateOverlay,
        Self::CreateSeed,
        Self::CreateSeedUpload,
        Self::CreateDefine,
        Self::CreateStart,
        Self::CreateForwards,
        Self::CreateReadBack,
        Self::DeleteLock,
        Self::DeleteShutdown,
        Self::DeleteDestroy,
        Self::DeleteUndefine,
        Self::DeleteVolumes,
    ];

    /// Whether the point is in `create` (else in `delete`).
    pub fn is_create(self) -> bool {
        !matches!(
            self,
            Self::DeleteLock
                | Self::DeleteShutdown
                | Self::DeleteDestroy
                | Self::DeleteUndefine
                | Self::DeleteVolumes
        )
    }

    /// A short kebab-case name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::CreateLock => "create.lock",
            Self::CreateAdopt => "create.adopt",
            Self::CreateBase => "create.base",
            Self::CreateBaseVolume => "create.base.volume",
            Self::CreateBaseUpload => "create.base.upload",
            Self::CreateBaseMarker => "create.base.marker",
            Self::CreateOverlay => "create.overlay",
            Self::CreateSeed => "create.seed",
            Self::CreateSeedUpload => "create.seed.upload",
            Self::CreateDefine => "create.define",
            Self::CreateStart => "create.start",
            Self::CreateForwards => "create.forwards",
            Self::CreateReadBack => "create.read-back",
            Self::DeleteLock => "delete.lock",
            Self::DeleteShutdown => "delete.shutdown",
            Self::DeleteDestroy => "delete.destroy",
            Self::DeleteUndefine => "delete.undefine",
            Self::DeleteVolumes => "delete.volumes",
        }
    }
}

impl fmt::Display for Point {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The hook a fault-injection test installs: runs at every [`Point`].
#[cfg(feature = "fault-injection")]
pub type FaultHook =
    Arc<dyn Fn(Point) -> futures::future::BoxFuture<'static, ()> + Send + Sync + 'static>;

/// The points of one provider: a hook with the feature, nothing without.
#[derive(Clone, Default)]
pub(crate) struct FaultPoints {
    #[cfg(feature = "fault-injection")]
    pub(crate) hook: Option<FaultHook>,
}

impl FaultPoints {
    /// Runs the hook at `p` (nothing without the `fault-injection` feature).
    #[inline]
    #[allow(clippy::unused_async)]
    pub(crate) async fn at(&self, p: Point) {
        #[cfg(feature = "fault-injection")]
        if let Some(h) = &self.hook {
            h(p).await;
        }
        let _ = p;
    }
}
