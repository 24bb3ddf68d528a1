//! Detail codes of domain lifecycle events and the flags of memory failure events,
//! re-exported by [`super`]. The enum-like fields of event bodies (event types, actions,
//! phases, reasons) are named types in [`crate::proto::names`].

#[allow(unused_imports)] // for the doc links
use super::DomainEvent;
#[allow(unused_imports)] // for the doc links
use crate::proto::names::DomainEventType;

/// `detail` values of [`DomainEvent::Lifecycle`], one module per event type, for matching;
/// [`Lifecycle::named`](super::Lifecycle::named) prints them.
pub mod lifecycle_detail {
    /// Details of [`DomainEventType::DEFINED`](crate::proto::names::DomainEventType::DEFINED).
    pub mod defined {
        /// Newly created config.
        pub const ADDED: i32 = 0;
        /// Changed config.
        pub const UPDATED: i32 = 1;
        /// Renamed from another name.
        pub const RENAMED: i32 = 2;
        /// Restored from a snapshot.
        pub const FROM_SNAPSHOT: i32 = 3;
    }
    /// Details of [`DomainEventType::UNDEFINED`](crate::proto::names::DomainEventType::UNDEFINED).
    pub mod undefined {
        /// Deleted.
        pub const REMOVED: i32 = 0;
        /// Renamed to another name.
        pub const RENAMED: i32 = 1;
    }
    /// Details of [`DomainEventType::STARTED`](crate::proto::names::DomainEventType::STARTED).
    pub mod started {
        /// Normal boot.
        pub const BOOTED: i32 = 0;
        /// Incoming migration.
        pub const MIGRATED: i32 = 1;
        /// Restored from a save image.
        pub const RESTORED: i32 = 2;
        /// Restored from a snapshot.
        pub const FROM_SNAPSHOT: i32 = 3;
        /// Woken by an event.
        pub const WAKEUP: i32 = 4;
    }
    /// Details of [`DomainEventType::SUSPENDED`](crate::proto::names::DomainEventType::SUSPENDED).
    pub mod suspended {
        /// Paused by the user.
        pub const PAUSED: i32 = 0;
        /// Paused for offline migration.
        pub const MIGRATED: i32 = 1;
        /// Paused on a disk I/O error.
        pub const IOERROR: i32 = 2;
        /// Paused by the watchdog.
        pub const WATCHDOG: i32 = 3;
        /// Restored from a paused save image.
        pub const RESTORED: i32 = 4;
        /// Restored from a paused snapshot.
        pub const FROM_SNAPSHOT: i32 = 5;
        /// An API call failed.
        pub const API_ERROR: i32 = 6;
        /// Post-copy migration started.
        pub const POSTCOPY: i32 = 7;
        /// Post-copy migration failed.
        pub const POSTCOPY_FAILED: i32 = 8;
    }
    /// Details of [`DomainEventType::RESUMED`](crate::proto::names::DomainEventType::RESUMED).
    pub mod resumed {
        /// Unpaused by the user.
        pub const UNPAUSED: i32 = 0;
        /// Resumed after migration.
        pub const MIGRATED: i32 = 1;
        /// Resumed from a snapshot.
        pub const FROM_SNAPSHOT: i32 = 2;
        /// Resumed, post-copy running.
        pub const POSTCOPY: i32 = 3;
        /// Resumed after failed post-copy.
        pub const POSTCOPY_FAILED: i32 = 4;
    }
    /// Details of [`DomainEventType::STOPPED`](crate::proto::names::DomainEventType::STOPPED).
    pub mod stopped {
        /// Normal shutdown.
        pub const SHUTDOWN: i32 = 0;
        /// Forced poweroff.
        pub const DESTROYED: i32 = 1;
        /// Guest crashed.
        pub const CRASHED: i32 = 2;
        /// Migrated away.
        pub const MIGRATED: i32 = 3;
        /// Saved to a file.
        pub const SAVED: i32 = 4;
        /// Host emulator failed.
        pub const FAILED: i32 = 5;
        /// Offline snapshot loaded.
        pub const FROM_SNAPSHOT: i32 = 6;
    }
    /// Details of [`DomainEventType::PMSUSPENDED`](crate::proto::names::DomainEventType::PMSUSPENDED).
    pub mod pmsuspended {
        /// Suspended to memory.
        pub const MEMORY: i32 = 0;
        /// Suspended to disk.
        pub const DISK: i32 = 1;
    }
    /// Details of [`DomainEventType::CRASHED`](crate::proto::names::DomainEventType::CRASHED).
    pub mod crashed {
        /// Guest panicked.
        pub const PANICKED: i32 = 0;
        /// Guest crashed and loaded a crash kernel.
        pub const CRASHLOADED: i32 = 1;
    }
    /// Details of [`DomainEventType::SHUTDOWN`](crate::proto::names::DomainEventType::SHUTDOWN).
    pub mod shutdown {
        /// Guest finished shutting down.
        pub const FINISHED: i32 = 0;
        /// Guest-initiated.
        pub const GUEST: i32 = 1;
        /// Host-initiated (e.g. a signal to the emulator; seen on destroy).
        pub const HOST: i32 = 2;
    }
}

crate::flag_set! {
    /// `virDomainMemoryFailureFlags` in [`MemoryFailure`](super::MemoryFailure).
    pub struct MemoryFailureFlags: u32 {
        /// The failure must be handled at once (action required).
        const ACTION_REQUIRED = 1;
        /// A failure occurred while handling a previous one.
        const RECURSIVE = 2;
    }
}
