//! Detail codes carried inside event bodies (`virDomainEventType` and its details, agent
//! states, graphics phases, …), re-exported by [`super`].

#[allow(unused_imports)] // for the doc links
use super::{DomainEvent, NodeDeviceLifecycle};

/// `virDomainEventType` for [`DomainEvent::Lifecycle`].
pub mod lifecycle {
    /// Defined or updated.
    pub const DEFINED: i32 = 0;
    /// Undefined.
    pub const UNDEFINED: i32 = 1;
    /// Started.
    pub const STARTED: i32 = 2;
    /// Suspended.
    pub const SUSPENDED: i32 = 3;
    /// Resumed.
    pub const RESUMED: i32 = 4;
    /// Stopped.
    pub const STOPPED: i32 = 5;
    /// Shut down (guest-initiated, before stop).
    pub const SHUTDOWN: i32 = 6;
    /// PM-suspended.
    pub const PMSUSPENDED: i32 = 7;
    /// Crashed.
    pub const CRASHED: i32 = 8;
}

/// `detail` values of [`DomainEvent::Lifecycle`], one module per event type.
pub mod lifecycle_detail {
    /// Details of [`super::lifecycle::DEFINED`].
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
    /// Details of [`super::lifecycle::UNDEFINED`].
    pub mod undefined {
        /// Deleted.
        pub const REMOVED: i32 = 0;
        /// Renamed to another name.
        pub const RENAMED: i32 = 1;
    }
    /// Details of [`super::lifecycle::STARTED`].
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
    /// Details of [`super::lifecycle::SUSPENDED`].
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
    /// Details of [`super::lifecycle::RESUMED`].
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
    /// Details of [`super::lifecycle::STOPPED`].
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
    /// Details of [`super::lifecycle::PMSUSPENDED`].
    pub mod pmsuspended {
        /// Suspended to memory.
        pub const MEMORY: i32 = 0;
        /// Suspended to disk.
        pub const DISK: i32 = 1;
    }
    /// Details of [`super::lifecycle::CRASHED`].
    pub mod crashed {
        /// Guest panicked.
        pub const PANICKED: i32 = 0;
        /// Guest crashed and loaded a crash kernel.
        pub const CRASHLOADED: i32 = 1;
    }
    /// Details of [`super::lifecycle::SHUTDOWN`].
    pub mod shutdown {
        /// Guest finished shutting down.
        pub const FINISHED: i32 = 0;
        /// Guest-initiated.
        pub const GUEST: i32 = 1;
        /// Host-initiated (e.g. a signal to the emulator; seen on destroy).
        pub const HOST: i32 = 2;
    }
}

/// `virConnectDomainEventAgentLifecycleState` in [`DomainEvent::AgentLifecycle`].
pub mod agent_state {
    /// Agent connected.
    pub const CONNECTED: i32 = 1;
    /// Agent disconnected.
    pub const DISCONNECTED: i32 = 2;
}

/// `virDomainEventGraphicsPhase` in [`DomainEvent::Graphics`].
pub mod graphics_phase {
    /// Client connected.
    pub const CONNECT: i32 = 0;
    /// Client authenticated.
    pub const INITIALIZE: i32 = 1;
    /// Client disconnected.
    pub const DISCONNECT: i32 = 2;
}

/// `virDomainEventIOErrorAction` in the I/O error events.
pub mod io_error_action {
    /// No action.
    pub const NONE: i32 = 0;
    /// Guest paused.
    pub const PAUSE: i32 = 1;
    /// Error reported to the guest.
    pub const REPORT: i32 = 2;
}

/// `virConnectDomainEventBlockJobStatus` in the block job events.
pub mod block_job_status {
    /// Completed.
    pub const COMPLETED: i32 = 0;
    /// Failed.
    pub const FAILED: i32 = 1;
    /// Cancelled.
    pub const CANCELED: i32 = 2;
    /// Ready to pivot (mirror).
    pub const READY: i32 = 3;
}

/// `virStoragePoolEventLifecycleType`. Networks (`virNetworkEventLifecycleType`) use the
/// first four values and secrets the first two; node devices number theirs differently (see
/// [`NodeDeviceLifecycle::event`]).
pub mod object_lifecycle {
    /// Defined.
    pub const DEFINED: i32 = 0;
    /// Undefined.
    pub const UNDEFINED: i32 = 1;
    /// Started.
    pub const STARTED: i32 = 2;
    /// Stopped.
    pub const STOPPED: i32 = 3;
    /// Storage pool built.
    pub const CREATED: i32 = 4;
    /// Storage pool deleted.
    pub const DELETED: i32 = 5;
}
