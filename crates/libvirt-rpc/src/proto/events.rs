//! Asynchronous messages of the remote program: domain, network, storage pool, node device
//! and secret events, and the close notice.
//!
//! The daemon sends these as `MESSAGE` packets (serial 1, which means nothing). Each event
//! carries the callback id returned by the matching `*_EVENT_*REGISTER_ANY` call. Only the
//! callback forms are decoded: the legacy per-connection domain events (procedures 107,
//! 169-173, …) are never sent to a client that registered through
//! `CONNECT_DOMAIN_EVENT_CALLBACK_REGISTER_ANY`. An unknown procedure is not an error:
//! [`decode`] returns `Ok(None)` and the connection counts and skips it.
//!
//! Layout note: the callback messages nest the legacy message after `callbackID`, which
//! flattens to `callbackID, dom, …` on the wire, except the three power-management events,
//! whose `reason` comes *before* the domain.

use bytes::Bytes;

use crate::proto::limits;
use crate::proto::limits::DOMAIN_EVENT_GRAPHICS_IDENTITY_MAX;
use crate::proto::types::{Domain, Network, NodeDevice, Secret, StoragePool, TypedParam};
use crate::wire::xdr::{self, DecodeError, LvString};
use crate::xdr_struct;

/// `virDomainEventID` values for `CONNECT_DOMAIN_EVENT_CALLBACK_REGISTER_ANY`; see
/// [`callback_proc`] for the message each one produces.
pub mod event_id {
    /// Lifecycle changes (defined, started, stopped, …).
    pub const LIFECYCLE: i32 = 0;
    /// Guest reboot.
    pub const REBOOT: i32 = 1;
    /// RTC offset change.
    pub const RTC_CHANGE: i32 = 2;
    /// Watchdog fired.
    pub const WATCHDOG: i32 = 3;
    /// Disk I/O error.
    pub const IO_ERROR: i32 = 4;
    /// Graphics client (dis)connect.
    pub const GRAPHICS: i32 = 5;
    /// Disk I/O error with a reason.
    pub const IO_ERROR_REASON: i32 = 6;
    /// Monitor connection trouble.
    pub const CONTROL_ERROR: i32 = 7;
    /// Block job finished (path form).
    pub const BLOCK_JOB: i32 = 8;
    /// Disk media change.
    pub const DISK_CHANGE: i32 = 9;
    /// Removable media tray opened or closed.
    pub const TRAY_CHANGE: i32 = 10;
    /// Guest woke from power-management suspend.
    pub const PMWAKEUP: i32 = 11;
    /// Guest suspended to RAM.
    pub const PMSUSPEND: i32 = 12;
    /// Balloon size changed.
    pub const BALLOON_CHANGE: i32 = 13;
    /// Guest suspended to disk.
    pub const PMSUSPEND_DISK: i32 = 14;
    /// Device removed.
    pub const DEVICE_REMOVED: i32 = 15;
    /// Block job finished (target form).
    pub const BLOCK_JOB_2: i32 = 16;
    /// Tunable parameters changed.
    pub const TUNABLE: i32 = 17;
    /// Guest agent connected or disconnected.
    pub const AGENT_LIFECYCLE: i32 = 18;
    /// Device added.
    pub const DEVICE_ADDED: i32 = 19;
    /// Migration iteration.
    pub const MIGRATION_ITERATION: i32 = 20;
    /// Job completed, with its statistics.
    pub const JOB_COMPLETED: i32 = 21;
    /// Device removal failed.
    pub const DEVICE_REMOVAL_FAILED: i32 = 22;
    /// Metadata changed.
    pub const METADATA_CHANGE: i32 = 23;
    /// Block write threshold crossed.
    pub const BLOCK_THRESHOLD: i32 = 24;
    /// Memory failure (hardware error).
    pub const MEMORY_FAILURE: i32 = 25;
    /// Memory device size changed.
    pub const MEMORY_DEVICE_SIZE_CHANGE: i32 = 26;
    /// Number of event ids libvirt 9.0 defines (0..=26).
    pub const COUNT_9_0: i32 = 27;
}

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
/// [`NodeDeviceLifecycleMsg::event`]).
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

/// Procedure numbers of the messages [`decode`] understands.
pub mod procs {
    /// `REMOTE_PROC_NETWORK_EVENT_LIFECYCLE`.
    pub const NETWORK_LIFECYCLE: i32 = 315;
    /// `REMOTE_PROC_DOMAIN_EVENT_CALLBACK_LIFECYCLE`.
    pub const DOMAIN_LIFECYCLE: i32 = 318;
    /// `REMOTE_PROC_DOMAIN_EVENT_CALLBACK_REBOOT`.
    pub const DOMAIN_REBOOT: i32 = 319;
    /// `REMOTE_PROC_DOMAIN_EVENT_CALLBACK_RTC_CHANGE`.
    pub const DOMAIN_RTC_CHANGE: i32 = 320;
    /// `REMOTE_PROC_DOMAIN_EVENT_CALLBACK_WATCHDOG`.
    pub const DOMAIN_WATCHDOG: i32 = 321;
    /// `REMOTE_PROC_DOMAIN_EVENT_CALLBACK_IO_ERROR`.
    pub const DOMAIN_IO_ERROR: i32 = 322;
    /// `REMOTE_PROC_DOMAIN_EVENT_CALLBACK_GRAPHICS`.
    pub const DOMAIN_GRAPHICS: i32 = 323;
    /// `REMOTE_PROC_DOMAIN_EVENT_CALLBACK_IO_ERROR_REASON`.
    pub const DOMAIN_IO_ERROR_REASON: i32 = 324;
    /// `REMOTE_PROC_DOMAIN_EVENT_CALLBACK_CONTROL_ERROR`.
    pub const DOMAIN_CONTROL_ERROR: i32 = 325;
    /// `REMOTE_PROC_DOMAIN_EVENT_CALLBACK_BLOCK_JOB`.
    pub const DOMAIN_BLOCK_JOB: i32 = 326;
    /// `REMOTE_PROC_DOMAIN_EVENT_CALLBACK_DISK_CHANGE`.
    pub const DOMAIN_DISK_CHANGE: i32 = 327;
    /// `REMOTE_PROC_DOMAIN_EVENT_CALLBACK_TRAY_CHANGE`.
    pub const DOMAIN_TRAY_CHANGE: i32 = 328;
    /// `REMOTE_PROC_DOMAIN_EVENT_CALLBACK_PMWAKEUP`.
    pub const DOMAIN_PMWAKEUP: i32 = 329;
    /// `REMOTE_PROC_DOMAIN_EVENT_CALLBACK_PMSUSPEND`.
    pub const DOMAIN_PMSUSPEND: i32 = 330;
    /// `REMOTE_PROC_DOMAIN_EVENT_CALLBACK_BALLOON_CHANGE`.
    pub const DOMAIN_BALLOON_CHANGE: i32 = 331;
    /// `REMOTE_PROC_DOMAIN_EVENT_CALLBACK_PMSUSPEND_DISK`.
    pub const DOMAIN_PMSUSPEND_DISK: i32 = 332;
    /// `REMOTE_PROC_DOMAIN_EVENT_CALLBACK_DEVICE_REMOVED`.
    pub const DOMAIN_DEVICE_REMOVED: i32 = 333;
    /// `REMOTE_PROC_DOMAIN_EVENT_BLOCK_JOB_2` (has a callback id despite the name).
    pub const DOMAIN_BLOCK_JOB_2: i32 = 339;
    /// `REMOTE_PROC_DOMAIN_EVENT_CALLBACK_TUNABLE`.
    pub const DOMAIN_TUNABLE: i32 = 346;
    /// `REMOTE_PROC_DOMAIN_EVENT_CALLBACK_AGENT_LIFECYCLE`.
    pub const DOMAIN_AGENT_LIFECYCLE: i32 = 348;
    /// `REMOTE_PROC_DOMAIN_EVENT_CALLBACK_DEVICE_ADDED`.
    pub const DOMAIN_DEVICE_ADDED: i32 = 354;
    /// `REMOTE_PROC_DOMAIN_EVENT_CALLBACK_MIGRATION_ITERATION`.
    pub const DOMAIN_MIGRATION_ITERATION: i32 = 359;
    /// `REMOTE_PROC_CONNECT_EVENT_CONNECTION_CLOSED`.
    pub const CONNECTION_CLOSED: i32 = 362;
    /// `REMOTE_PROC_DOMAIN_EVENT_CALLBACK_JOB_COMPLETED`.
    pub const DOMAIN_JOB_COMPLETED: i32 = 363;
    /// `REMOTE_PROC_DOMAIN_EVENT_CALLBACK_DEVICE_REMOVAL_FAILED`.
    pub const DOMAIN_DEVICE_REMOVAL_FAILED: i32 = 367;
    /// `REMOTE_PROC_STORAGE_POOL_EVENT_LIFECYCLE`.
    pub const STORAGE_POOL_LIFECYCLE: i32 = 370;
    /// `REMOTE_PROC_STORAGE_POOL_EVENT_REFRESH`.
    pub const STORAGE_POOL_REFRESH: i32 = 373;
    /// `REMOTE_PROC_NODE_DEVICE_EVENT_LIFECYCLE`.
    pub const NODE_DEVICE_LIFECYCLE: i32 = 376;
    /// `REMOTE_PROC_NODE_DEVICE_EVENT_UPDATE`.
    pub const NODE_DEVICE_UPDATE: i32 = 377;
    /// `REMOTE_PROC_DOMAIN_EVENT_CALLBACK_METADATA_CHANGE`.
    pub const DOMAIN_METADATA_CHANGE: i32 = 379;
    /// `REMOTE_PROC_SECRET_EVENT_LIFECYCLE`.
    pub const SECRET_LIFECYCLE: i32 = 382;
    /// `REMOTE_PROC_SECRET_EVENT_VALUE_CHANGED`.
    pub const SECRET_VALUE_CHANGED: i32 = 383;
    /// `REMOTE_PROC_DOMAIN_EVENT_BLOCK_THRESHOLD`.
    pub const DOMAIN_BLOCK_THRESHOLD: i32 = 385;
    /// `REMOTE_PROC_DOMAIN_EVENT_MEMORY_FAILURE`.
    pub const DOMAIN_MEMORY_FAILURE: i32 = 423;
    /// `REMOTE_PROC_DOMAIN_EVENT_MEMORY_DEVICE_SIZE_CHANGE`.
    pub const DOMAIN_MEMORY_DEVICE_SIZE_CHANGE: i32 = 438;
    /// `REMOTE_PROC_NETWORK_EVENT_CALLBACK_METADATA_CHANGE` (libvirt 9.7+).
    pub const NETWORK_METADATA_CHANGE: i32 = 446;
}

/// Callback message procedure for each `virDomainEventID`, indexed by the id.
const CALLBACK_PROCS: [i32; event_id::COUNT_9_0 as usize] = [
    procs::DOMAIN_LIFECYCLE,
    procs::DOMAIN_REBOOT,
    procs::DOMAIN_RTC_CHANGE,
    procs::DOMAIN_WATCHDOG,
    procs::DOMAIN_IO_ERROR,
    procs::DOMAIN_GRAPHICS,
    procs::DOMAIN_IO_ERROR_REASON,
    procs::DOMAIN_CONTROL_ERROR,
    procs::DOMAIN_BLOCK_JOB,
    procs::DOMAIN_DISK_CHANGE,
    procs::DOMAIN_TRAY_CHANGE,
    procs::DOMAIN_PMWAKEUP,
    procs::DOMAIN_PMSUSPEND,
    procs::DOMAIN_BALLOON_CHANGE,
    procs::DOMAIN_PMSUSPEND_DISK,
    procs::DOMAIN_DEVICE_REMOVED,
    procs::DOMAIN_BLOCK_JOB_2,
    procs::DOMAIN_TUNABLE,
    procs::DOMAIN_AGENT_LIFECYCLE,
    procs::DOMAIN_DEVICE_ADDED,
    procs::DOMAIN_MIGRATION_ITERATION,
    procs::DOMAIN_JOB_COMPLETED,
    procs::DOMAIN_DEVICE_REMOVAL_FAILED,
    procs::DOMAIN_METADATA_CHANGE,
    procs::DOMAIN_BLOCK_THRESHOLD,
    procs::DOMAIN_MEMORY_FAILURE,
    procs::DOMAIN_MEMORY_DEVICE_SIZE_CHANGE,
];

/// The `MESSAGE` procedure the daemon uses for events of `virDomainEventID` `event_id`
/// registered through `CONNECT_DOMAIN_EVENT_CALLBACK_REGISTER_ANY`; `None` for ids libvirt
/// 9.0 does not define.
pub fn callback_proc(event_id: i32) -> Option<i32> {
    usize::try_from(event_id)
        .ok()
        .and_then(|i| CALLBACK_PROCS.get(i))
        .copied()
}

/// The `virDomainEventID` whose events arrive as `procedure`; `None` for anything else.
pub fn event_id_of_proc(procedure: i32) -> Option<i32> {
    CALLBACK_PROCS
        .iter()
        .position(|p| *p == procedure)
        .map(|i| i as i32)
}

// ---- wire messages -----------------------------------------------------------------------
// One struct per callback message, flattened: `callbackID`, then the legacy message's fields.

xdr_struct! {
    /// `remote_domain_event_callback_lifecycle_msg`.
    pub struct LifecycleMsg {
        /// Callback id.
        pub callback_id: i32,
        /// The domain.
        pub dom: Domain,
        /// [`lifecycle`] event.
        pub event: i32,
        /// Event-specific detail ([`lifecycle_detail`]).
        pub detail: i32,
    }
}

xdr_struct! {
    /// `remote_domain_event_callback_reboot_msg` (and every other message that carries only
    /// a domain: control error).
    pub struct RebootMsg {
        /// Callback id.
        pub callback_id: i32,
        /// The domain.
        pub dom: Domain,
    }
}

/// `remote_domain_event_callback_control_error_msg`: same layout as [`RebootMsg`].
pub type ControlErrorMsg = RebootMsg;

xdr_struct! {
    /// `remote_domain_event_callback_rtc_change_msg`.
    pub struct RtcChangeMsg {
        /// Callback id.
        pub callback_id: i32,
        /// The domain.
        pub dom: Domain,
        /// New RTC offset from UTC, in seconds.
        pub offset: i64,
    }
}

xdr_struct! {
    /// `remote_domain_event_callback_watchdog_msg`.
    pub struct WatchdogMsg {
        /// Callback id.
        pub callback_id: i32,
        /// The domain.
        pub dom: Domain,
        /// `virDomainEventWatchdogAction` (NONE 0, PAUSE 1, RESET 2, POWEROFF 3,
        /// SHUTDOWN 4, DEBUG 5, INJECTNMI 6).
        pub action: i32,
    }
}

xdr_struct! {
    /// `remote_domain_event_callback_io_error_msg`.
    pub struct IoErrorMsg {
        /// Callback id.
        pub callback_id: i32,
        /// The domain.
        pub dom: Domain,
        /// Disk source path.
        pub src_path: LvString,
        /// Device alias.
        pub dev_alias: LvString,
        /// [`io_error_action`].
        pub action: i32,
    }
}

xdr_struct! {
    /// `remote_domain_event_callback_io_error_reason_msg`.
    pub struct IoErrorReasonMsg {
        /// Callback id.
        pub callback_id: i32,
        /// The domain.
        pub dom: Domain,
        /// Disk source path.
        pub src_path: LvString,
        /// Device alias.
        pub dev_alias: LvString,
        /// [`io_error_action`].
        pub action: i32,
        /// Reason (`enospc`, …).
        pub reason: LvString,
    }
}

xdr_struct! {
    /// `remote_domain_event_graphics_address`.
    pub struct GraphicsAddress {
        /// `virDomainEventGraphicsAddressType` (IPV4 0, IPV6 1, UNIX 2).
        pub family: i32,
        /// Address or socket path.
        pub node: LvString,
        /// Port (service).
        pub service: LvString,
    }
}

xdr_struct! {
    /// `remote_domain_event_graphics_identity`: one element of the client's identity.
    pub struct GraphicsIdentity {
        /// Identity type (`x509dname`, `saslUsername`).
        pub kind: LvString,
        /// Identity value.
        pub name: LvString,
    }
}

xdr_struct! {
    /// `remote_domain_event_callback_graphics_msg`.
    pub struct GraphicsMsg {
        /// Callback id.
        pub callback_id: i32,
        /// The domain.
        pub dom: Domain,
        /// [`graphics_phase`].
        pub phase: i32,
        /// Server address.
        pub local: GraphicsAddress,
        /// Client address.
        pub remote: GraphicsAddress,
        /// Authentication scheme.
        pub auth_scheme: LvString,
        /// Client identity.
        pub subject: Vec<GraphicsIdentity> [DOMAIN_EVENT_GRAPHICS_IDENTITY_MAX],
    }
}

xdr_struct! {
    /// `remote_domain_event_callback_block_job_msg`.
    pub struct BlockJobMsg {
        /// Callback id.
        pub callback_id: i32,
        /// The domain.
        pub dom: Domain,
        /// Disk path.
        pub path: LvString,
        /// `virDomainBlockJobType` (PULL 1, COPY 2, COMMIT 3, `ACTIVE_COMMIT` 4, BACKUP 5).
        pub kind: i32,
        /// [`block_job_status`].
        pub status: i32,
    }
}

xdr_struct! {
    /// `remote_domain_event_callback_disk_change_msg`.
    pub struct DiskChangeMsg {
        /// Callback id.
        pub callback_id: i32,
        /// The domain.
        pub dom: Domain,
        /// Previous source.
        pub old_src_path: Option<LvString>,
        /// New source.
        pub new_src_path: Option<LvString>,
        /// Device alias.
        pub dev_alias: LvString,
        /// `virConnectDomainEventDiskChangeReason` (`MISSING_ON_START` 0,
        /// `DROP_MISSING_ON_START` 1).
        pub reason: i32,
    }
}

xdr_struct! {
    /// `remote_domain_event_callback_tray_change_msg`.
    pub struct TrayChangeMsg {
        /// Callback id.
        pub callback_id: i32,
        /// The domain.
        pub dom: Domain,
        /// Device alias.
        pub dev_alias: LvString,
        /// `virDomainEventTrayChangeReason` (OPEN 0, CLOSE 1).
        pub reason: i32,
    }
}

xdr_struct! {
    /// `remote_domain_event_callback_pmwakeup_msg` / `…_pmsuspend_msg` /
    /// `…_pmsuspend_disk_msg`: **`reason` precedes the domain** in these three.
    pub struct PmMsg {
        /// Callback id.
        pub callback_id: i32,
        /// Reason (always 0 so far).
        pub reason: i32,
        /// The domain.
        pub dom: Domain,
    }
}

xdr_struct! {
    /// `remote_domain_event_callback_balloon_change_msg`.
    pub struct BalloonChangeMsg {
        /// Callback id.
        pub callback_id: i32,
        /// The domain.
        pub dom: Domain,
        /// New balloon size in KiB.
        pub actual: u64,
    }
}

xdr_struct! {
    /// `remote_domain_event_callback_device_removed_msg` (also `…_device_added_msg` and
    /// `…_device_removal_failed_msg`, which have the same layout).
    pub struct DeviceMsg {
        /// Callback id.
        pub callback_id: i32,
        /// The domain.
        pub dom: Domain,
        /// Device alias.
        pub dev_alias: LvString,
    }
}

xdr_struct! {
    /// `remote_domain_event_block_job_2_msg`.
    pub struct BlockJob2Msg {
        /// Callback id.
        pub callback_id: i32,
        /// The domain.
        pub dom: Domain,
        /// Disk target (`vda`).
        pub dst: LvString,
        /// `virDomainBlockJobType`.
        pub kind: i32,
        /// [`block_job_status`].
        pub status: i32,
    }
}

xdr_struct! {
    /// `remote_domain_event_callback_tunable_msg`.
    pub struct TunableMsg {
        /// Callback id.
        pub callback_id: i32,
        /// The domain.
        pub dom: Domain,
        /// Changed parameters (`cputune.*`, `blkdeviotune.*`, …).
        pub params: Vec<TypedParam> [limits::DOMAIN_EVENT_TUNABLE_MAX],
    }
}

xdr_struct! {
    /// `remote_domain_event_callback_agent_lifecycle_msg`.
    pub struct AgentLifecycleMsg {
        /// Callback id.
        pub callback_id: i32,
        /// The domain.
        pub dom: Domain,
        /// [`agent_state`].
        pub state: i32,
        /// `virConnectDomainEventAgentLifecycleReason` (UNKNOWN 0, `DOMAIN_STARTED` 1,
        /// CHANNEL 2).
        pub reason: i32,
    }
}

xdr_struct! {
    /// `remote_domain_event_callback_migration_iteration_msg`.
    pub struct MigrationIterationMsg {
        /// Callback id.
        pub callback_id: i32,
        /// The domain.
        pub dom: Domain,
        /// Iteration number.
        pub iteration: i32,
    }
}

xdr_struct! {
    /// `remote_domain_event_callback_job_completed_msg`.
    pub struct JobCompletedMsg {
        /// Callback id.
        pub callback_id: i32,
        /// The domain.
        pub dom: Domain,
        /// Job statistics.
        pub params: Vec<TypedParam> [limits::DOMAIN_JOB_STATS_MAX],
    }
}

xdr_struct! {
    /// `remote_domain_event_callback_metadata_change_msg`.
    pub struct MetadataChangeMsg {
        /// Callback id.
        pub callback_id: i32,
        /// The domain.
        pub dom: Domain,
        /// `virDomainMetadataType` (DESCRIPTION 0, TITLE 1, ELEMENT 2).
        pub kind: i32,
        /// Namespace URI (ELEMENT only).
        pub nsuri: Option<LvString>,
    }
}

xdr_struct! {
    /// `remote_domain_event_block_threshold_msg`.
    pub struct BlockThresholdMsg {
        /// Callback id.
        pub callback_id: i32,
        /// The domain.
        pub dom: Domain,
        /// Disk target, possibly with `[index]`.
        pub dev: LvString,
        /// Source path.
        pub path: Option<LvString>,
        /// The threshold that was crossed.
        pub threshold: u64,
        /// Bytes written past it.
        pub excess: u64,
    }
}

xdr_struct! {
    /// `remote_domain_event_memory_failure_msg`.
    pub struct MemoryFailureMsg {
        /// Callback id.
        pub callback_id: i32,
        /// The domain.
        pub dom: Domain,
        /// `virDomainMemoryFailureRecipientType` (HYPERVISOR 0, GUEST 1).
        pub recipient: i32,
        /// `virDomainMemoryFailureActionType` (IGNORE 0, INJECT 1, FATAL 2, RESET 3).
        pub action: i32,
        /// `virDomainMemoryFailureFlags` (`ACTION_REQUIRED` 1, RECURSIVE 2).
        pub flags: u32,
    }
}

xdr_struct! {
    /// `remote_domain_event_memory_device_size_change_msg`.
    pub struct MemoryDeviceSizeChangeMsg {
        /// Callback id.
        pub callback_id: i32,
        /// The domain.
        pub dom: Domain,
        /// Memory device alias.
        pub alias: LvString,
        /// New size in KiB.
        pub size: u64,
    }
}

xdr_struct! {
    /// `remote_connect_event_connection_closed_msg`.
    pub struct ConnectionClosedMsg {
        /// `virConnectCloseReason` (ERROR 0, EOF 1, KEEPALIVE 2, CLIENT 3).
        pub reason: i32,
    }
}

xdr_struct! {
    /// `remote_network_event_lifecycle_msg`.
    pub struct NetworkLifecycleMsg {
        /// Callback id.
        pub callback_id: i32,
        /// The network.
        pub net: Network,
        /// [`object_lifecycle`] event.
        pub event: i32,
        /// Detail (always 0 so far).
        pub detail: i32,
    }
}

xdr_struct! {
    /// `remote_network_event_callback_metadata_change_msg`.
    pub struct NetworkMetadataChangeMsg {
        /// Callback id.
        pub callback_id: i32,
        /// The network.
        pub net: Network,
        /// `virNetworkMetadataType` (DESCRIPTION 0, TITLE 1, ELEMENT 2).
        pub kind: i32,
        /// Namespace URI (ELEMENT only).
        pub nsuri: Option<LvString>,
    }
}

xdr_struct! {
    /// `remote_storage_pool_event_lifecycle_msg`.
    pub struct StoragePoolLifecycleMsg {
        /// Callback id.
        pub callback_id: i32,
        /// The pool.
        pub pool: StoragePool,
        /// [`object_lifecycle`] event.
        pub event: i32,
        /// Detail.
        pub detail: i32,
    }
}

xdr_struct! {
    /// `remote_storage_pool_event_refresh_msg`.
    pub struct StoragePoolRefreshMsg {
        /// Callback id.
        pub callback_id: i32,
        /// The pool.
        pub pool: StoragePool,
    }
}

xdr_struct! {
    /// `remote_node_device_event_lifecycle_msg`.
    pub struct NodeDeviceLifecycleMsg {
        /// Callback id.
        pub callback_id: i32,
        /// The device.
        pub dev: NodeDevice,
        /// `virNodeDeviceEventLifecycleType` (CREATED 0, DELETED 1, DEFINED 2,
        /// UNDEFINED 3).
        pub event: i32,
        /// Detail.
        pub detail: i32,
    }
}

xdr_struct! {
    /// `remote_node_device_event_update_msg`.
    pub struct NodeDeviceUpdateMsg {
        /// Callback id.
        pub callback_id: i32,
        /// The device.
        pub dev: NodeDevice,
    }
}

xdr_struct! {
    /// `remote_secret_event_lifecycle_msg`.
    pub struct SecretLifecycleMsg {
        /// Callback id.
        pub callback_id: i32,
        /// The secret.
        pub secret: Secret,
        /// `virSecretEventLifecycleType` (DEFINED 0, UNDEFINED 1).
        pub event: i32,
        /// Detail.
        pub detail: i32,
    }
}

xdr_struct! {
    /// `remote_secret_event_value_changed_msg`.
    pub struct SecretValueChangedMsg {
        /// Callback id.
        pub callback_id: i32,
        /// The secret.
        pub secret: Secret,
    }
}

// ---- decoded events ----------------------------------------------------------------------

/// A decoded domain event. Field meanings are on the matching `*Msg` struct.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum DomainEvent {
    /// Lifecycle change.
    Lifecycle {
        /// The domain.
        dom: Domain,
        /// [`lifecycle`] event.
        event: i32,
        /// Event-specific detail ([`lifecycle_detail`]).
        detail: i32,
    },
    /// The guest rebooted.
    Reboot {
        /// The domain.
        dom: Domain,
    },
    /// The guest changed its RTC.
    RtcChange {
        /// The domain.
        dom: Domain,
        /// New offset from UTC in seconds.
        offset: i64,
    },
    /// The watchdog fired.
    Watchdog {
        /// The domain.
        dom: Domain,
        /// `virDomainEventWatchdogAction`.
        action: i32,
    },
    /// A disk I/O error.
    IoError {
        /// The domain.
        dom: Domain,
        /// Disk source path.
        src_path: LvString,
        /// Device alias.
        dev_alias: LvString,
        /// [`io_error_action`].
        action: i32,
    },
    /// A graphics client connected, authenticated or disconnected.
    Graphics {
        /// The domain.
        dom: Domain,
        /// [`graphics_phase`].
        phase: i32,
        /// Server address.
        local: GraphicsAddress,
        /// Client address.
        remote: GraphicsAddress,
        /// Authentication scheme.
        auth_scheme: LvString,
        /// Client identity.
        subject: Vec<GraphicsIdentity>,
    },
    /// A disk I/O error, with the reason.
    IoErrorReason {
        /// The domain.
        dom: Domain,
        /// Disk source path.
        src_path: LvString,
        /// Device alias.
        dev_alias: LvString,
        /// [`io_error_action`].
        action: i32,
        /// Reason (`enospc`, …).
        reason: LvString,
    },
    /// The daemon lost or had trouble with the monitor connection.
    ControlError {
        /// The domain.
        dom: Domain,
    },
    /// A block job ended or became ready (identified by path).
    BlockJob {
        /// The domain.
        dom: Domain,
        /// Disk path.
        path: LvString,
        /// `virDomainBlockJobType`.
        kind: i32,
        /// [`block_job_status`].
        status: i32,
    },
    /// Disk media changed.
    DiskChange {
        /// The domain.
        dom: Domain,
        /// Previous source.
        old_src_path: Option<LvString>,
        /// New source.
        new_src_path: Option<LvString>,
        /// Device alias.
        dev_alias: LvString,
        /// `virConnectDomainEventDiskChangeReason`.
        reason: i32,
    },
    /// A removable media tray moved.
    TrayChange {
        /// The domain.
        dom: Domain,
        /// Device alias.
        dev_alias: LvString,
        /// `virDomainEventTrayChangeReason` (OPEN 0, CLOSE 1).
        reason: i32,
    },
    /// The guest woke from suspend.
    PmWakeup {
        /// The domain.
        dom: Domain,
        /// Reason.
        reason: i32,
    },
    /// The guest suspended to RAM.
    PmSuspend {
        /// The domain.
        dom: Domain,
        /// Reason.
        reason: i32,
    },
    /// The balloon changed size.
    BalloonChange {
        /// The domain.
        dom: Domain,
        /// New size in KiB.
        actual: u64,
    },
    /// The guest suspended to disk.
    PmSuspendDisk {
        /// The domain.
        dom: Domain,
        /// Reason.
        reason: i32,
    },
    /// A device was removed (detach finished).
    DeviceRemoved {
        /// The domain.
        dom: Domain,
        /// Device alias.
        dev_alias: LvString,
    },
    /// A block job ended or became ready (identified by target).
    BlockJob2 {
        /// The domain.
        dom: Domain,
        /// Disk target.
        dst: LvString,
        /// `virDomainBlockJobType`.
        kind: i32,
        /// [`block_job_status`].
        status: i32,
    },
    /// Tunable parameters changed.
    Tunable {
        /// The domain.
        dom: Domain,
        /// Changed parameters.
        params: Vec<TypedParam>,
    },
    /// The guest agent connected or disconnected.
    AgentLifecycle {
        /// The domain.
        dom: Domain,
        /// [`agent_state`].
        state: i32,
        /// `virConnectDomainEventAgentLifecycleReason`.
        reason: i32,
    },
    /// A device was added.
    DeviceAdded {
        /// The domain.
        dom: Domain,
        /// Device alias.
        dev_alias: LvString,
    },
    /// A migration iteration finished.
    MigrationIteration {
        /// The domain.
        dom: Domain,
        /// Iteration number.
        iteration: i32,
    },
    /// A job completed.
    JobCompleted {
        /// The domain.
        dom: Domain,
        /// Job statistics.
        params: Vec<TypedParam>,
    },
    /// Device removal failed.
    DeviceRemovalFailed {
        /// The domain.
        dom: Domain,
        /// Device alias.
        dev_alias: LvString,
    },
    /// Metadata changed.
    MetadataChange {
        /// The domain.
        dom: Domain,
        /// `virDomainMetadataType`.
        kind: i32,
        /// Namespace URI (ELEMENT only).
        nsuri: Option<LvString>,
    },
    /// A block write threshold was crossed.
    BlockThreshold {
        /// The domain.
        dom: Domain,
        /// Disk target.
        dev: LvString,
        /// Source path.
        path: Option<LvString>,
        /// The threshold.
        threshold: u64,
        /// Bytes past it.
        excess: u64,
    },
    /// A memory failure was reported.
    MemoryFailure {
        /// The domain.
        dom: Domain,
        /// `virDomainMemoryFailureRecipientType`.
        recipient: i32,
        /// `virDomainMemoryFailureActionType`.
        action: i32,
        /// `virDomainMemoryFailureFlags`.
        flags: u32,
    },
    /// A memory device changed size.
    MemoryDeviceSizeChange {
        /// The domain.
        dom: Domain,
        /// Device alias.
        alias: LvString,
        /// New size in KiB.
        size: u64,
    },
}

impl DomainEvent {
    /// The domain the event is about.
    pub fn domain(&self) -> &Domain {
        match self {
            Self::Lifecycle { dom, .. }
            | Self::Reboot { dom }
            | Self::RtcChange { dom, .. }
            | Self::Watchdog { dom, .. }
            | Self::IoError { dom, .. }
            | Self::Graphics { dom, .. }
            | Self::IoErrorReason { dom, .. }
            | Self::ControlError { dom }
            | Self::BlockJob { dom, .. }
            | Self::DiskChange { dom, .. }
            | Self::TrayChange { dom, .. }
            | Self::PmWakeup { dom, .. }
            | Self::PmSuspend { dom, .. }
            | Self::BalloonChange { dom, .. }
            | Self::PmSuspendDisk { dom, .. }
            | Self::DeviceRemoved { dom, .. }
            | Self::BlockJob2 { dom, .. }
            | Self::Tunable { dom, .. }
            | Self::AgentLifecycle { dom, .. }
            | Self::DeviceAdded { dom, .. }
            | Self::MigrationIteration { dom, .. }
            | Self::JobCompleted { dom, .. }
            | Self::DeviceRemovalFailed { dom, .. }
            | Self::MetadataChange { dom, .. }
            | Self::BlockThreshold { dom, .. }
            | Self::MemoryFailure { dom, .. }
            | Self::MemoryDeviceSizeChange { dom, .. } => dom,
        }
    }

    /// The `virDomainEventID` this event is delivered for ([`event_id`]).
    pub fn event_id(&self) -> i32 {
        use event_id as id;
        match self {
            Self::Lifecycle { .. } => id::LIFECYCLE,
            Self::Reboot { .. } => id::REBOOT,
            Self::RtcChange { .. } => id::RTC_CHANGE,
            Self::Watchdog { .. } => id::WATCHDOG,
            Self::IoError { .. } => id::IO_ERROR,
            Self::Graphics { .. } => id::GRAPHICS,
            Self::IoErrorReason { .. } => id::IO_ERROR_REASON,
            Self::ControlError { .. } => id::CONTROL_ERROR,
            Self::BlockJob { .. } => id::BLOCK_JOB,
            Self::DiskChange { .. } => id::DISK_CHANGE,
            Self::TrayChange { .. } => id::TRAY_CHANGE,
            Self::PmWakeup { .. } => id::PMWAKEUP,
            Self::PmSuspend { .. } => id::PMSUSPEND,
            Self::BalloonChange { .. } => id::BALLOON_CHANGE,
            Self::PmSuspendDisk { .. } => id::PMSUSPEND_DISK,
            Self::DeviceRemoved { .. } => id::DEVICE_REMOVED,
            Self::BlockJob2 { .. } => id::BLOCK_JOB_2,
            Self::Tunable { .. } => id::TUNABLE,
            Self::AgentLifecycle { .. } => id::AGENT_LIFECYCLE,
            Self::DeviceAdded { .. } => id::DEVICE_ADDED,
            Self::MigrationIteration { .. } => id::MIGRATION_ITERATION,
            Self::JobCompleted { .. } => id::JOB_COMPLETED,
            Self::DeviceRemovalFailed { .. } => id::DEVICE_REMOVAL_FAILED,
            Self::MetadataChange { .. } => id::METADATA_CHANGE,
            Self::BlockThreshold { .. } => id::BLOCK_THRESHOLD,
            Self::MemoryFailure { .. } => id::MEMORY_FAILURE,
            Self::MemoryDeviceSizeChange { .. } => id::MEMORY_DEVICE_SIZE_CHANGE,
        }
    }
}

/// A decoded network event.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum NetworkEvent {
    /// Lifecycle change.
    Lifecycle {
        /// The network.
        net: Network,
        /// [`object_lifecycle`] event.
        event: i32,
        /// Detail.
        detail: i32,
    },
    /// Metadata changed (libvirt 9.7+).
    MetadataChange {
        /// The network.
        net: Network,
        /// `virNetworkMetadataType`.
        kind: i32,
        /// Namespace URI (ELEMENT only).
        nsuri: Option<LvString>,
    },
}

/// A decoded storage pool event.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum StoragePoolEvent {
    /// Lifecycle change.
    Lifecycle {
        /// The pool.
        pool: StoragePool,
        /// [`object_lifecycle`] event.
        event: i32,
        /// Detail.
        detail: i32,
    },
    /// The pool was refreshed.
    Refresh {
        /// The pool.
        pool: StoragePool,
    },
}

/// A decoded node device event.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum NodeDeviceEvent {
    /// Lifecycle change.
    Lifecycle {
        /// The device.
        dev: NodeDevice,
        /// `virNodeDeviceEventLifecycleType`.
        event: i32,
        /// Detail.
        detail: i32,
    },
    /// The device was updated.
    Update {
        /// The device.
        dev: NodeDevice,
    },
}

/// A decoded secret event.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum SecretEvent {
    /// Lifecycle change.
    Lifecycle {
        /// The secret.
        secret: Secret,
        /// `virSecretEventLifecycleType`.
        event: i32,
        /// Detail.
        detail: i32,
    },
    /// The value changed.
    ValueChanged {
        /// The secret.
        secret: Secret,
    },
}

/// A decoded asynchronous message.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Event {
    /// A domain event for a registered callback.
    Domain {
        /// Callback id from the registration.
        callback_id: i32,
        /// The event.
        event: DomainEvent,
    },
    /// The daemon closed (or is closing) the connection.
    ConnectionClosed {
        /// `virConnectCloseReason` ([`crate::proto::procs::connect::close_reason`]).
        reason: i32,
    },
    /// A network event for a registered callback.
    Network {
        /// Callback id from the registration.
        callback_id: i32,
        /// The event.
        event: NetworkEvent,
    },
    /// A storage pool event for a registered callback.
    StoragePool {
        /// Callback id from the registration.
        callback_id: i32,
        /// The event.
        event: StoragePoolEvent,
    },
    /// A node device event for a registered callback.
    NodeDevice {
        /// Callback id from the registration.
        callback_id: i32,
        /// The event.
        event: NodeDeviceEvent,
    },
    /// A secret event for a registered callback.
    Secret {
        /// Callback id from the registration.
        callback_id: i32,
        /// The event.
        event: SecretEvent,
    },
}

impl Event {
    /// The registration's callback id (`None` for the close notice, which has none).
    pub fn callback_id(&self) -> Option<i32> {
        match self {
            Self::Domain { callback_id, .. }
            | Self::Network { callback_id, .. }
            | Self::StoragePool { callback_id, .. }
            | Self::NodeDevice { callback_id, .. }
            | Self::Secret { callback_id, .. } => Some(*callback_id),
            Self::ConnectionClosed { .. } => None,
        }
    }
}

/// Procedure numbers and names of the messages [`decode`] understands.
pub const EVENT_PROCS: &[(i32, &str)] = &[
    (procs::NETWORK_LIFECYCLE, "NetworkEventLifecycle"),
    (procs::DOMAIN_LIFECYCLE, "DomainEventCallbackLifecycle"),
    (procs::DOMAIN_REBOOT, "DomainEventCallbackReboot"),
    (procs::DOMAIN_RTC_CHANGE, "DomainEventCallbackRtcChange"),
    (procs::DOMAIN_WATCHDOG, "DomainEventCallbackWatchdog"),
    (procs::DOMAIN_IO_ERROR, "DomainEventCallbackIoError"),
    (procs::DOMAIN_GRAPHICS, "DomainEventCallbackGraphics"),
    (
        procs::DOMAIN_IO_ERROR_REASON,
        "DomainEventCallbackIoErrorReason",
    ),
    (
        procs::DOMAIN_CONTROL_ERROR,
        "DomainEventCallbackControlError",
    ),
    (procs::DOMAIN_BLOCK_JOB, "DomainEventCallbackBlockJob"),
    (procs::DOMAIN_DISK_CHANGE, "DomainEventCallbackDiskChange"),
    (procs::DOMAIN_TRAY_CHANGE, "DomainEventCallbackTrayChange"),
    (procs::DOMAIN_PMWAKEUP, "DomainEventCallbackPmWakeup"),
    (procs::DOMAIN_PMSUSPEND, "DomainEventCallbackPmSuspend"),
    (
        procs::DOMAIN_BALLOON_CHANGE,
        "DomainEventCallbackBalloonChange",
    ),
    (
        procs::DOMAIN_PMSUSPEND_DISK,
        "DomainEventCallbackPmSuspendDisk",
    ),
    (
        procs::DOMAIN_DEVICE_REMOVED,
        "DomainEventCallbackDeviceRemoved",
    ),
    (procs::DOMAIN_BLOCK_JOB_2, "DomainEventBlockJob2"),
    (procs::DOMAIN_TUNABLE, "DomainEventCallbackTunable"),
    (
        procs::DOMAIN_AGENT_LIFECYCLE,
        "DomainEventCallbackAgentLifecycle",
    ),
    (procs::DOMAIN_DEVICE_ADDED, "DomainEventCallbackDeviceAdded"),
    (
        procs::DOMAIN_MIGRATION_ITERATION,
        "DomainEventCallbackMigrationIteration",
    ),
    (procs::CONNECTION_CLOSED, "ConnectEventConnectionClosed"),
    (
        procs::DOMAIN_JOB_COMPLETED,
        "DomainEventCallbackJobCompleted",
    ),
    (
        procs::DOMAIN_DEVICE_REMOVAL_FAILED,
        "DomainEventCallbackDeviceRemovalFailed",
    ),
    (procs::STORAGE_POOL_LIFECYCLE, "StoragePoolEventLifecycle"),
    (procs::STORAGE_POOL_REFRESH, "StoragePoolEventRefresh"),
    (procs::NODE_DEVICE_LIFECYCLE, "NodeDeviceEventLifecycle"),
    (procs::NODE_DEVICE_UPDATE, "NodeDeviceEventUpdate"),
    (
        procs::DOMAIN_METADATA_CHANGE,
        "DomainEventCallbackMetadataChange",
    ),
    (procs::SECRET_LIFECYCLE, "SecretEventLifecycle"),
    (procs::SECRET_VALUE_CHANGED, "SecretEventValueChanged"),
    (procs::DOMAIN_BLOCK_THRESHOLD, "DomainEventBlockThreshold"),
    (procs::DOMAIN_MEMORY_FAILURE, "DomainEventMemoryFailure"),
    (
        procs::DOMAIN_MEMORY_DEVICE_SIZE_CHANGE,
        "DomainEventMemoryDeviceSizeChange",
    ),
    (
        procs::NETWORK_METADATA_CHANGE,
        "NetworkEventCallbackMetadataChange",
    ),
];

/// Decode `$msg` from `$payload` and move the named fields into an event variant.
macro_rules! from_msg {
    ($payload:ident, $msg:ident { $($f:ident),* } => Domain::$variant:ident) => {{
        let $msg { callback_id, $($f),* } = xdr::from_bytes($payload)?;
        Event::Domain { callback_id, event: DomainEvent::$variant { $($f),* } }
    }};
    (
        $payload:ident,
        $msg:ident { $($f:ident),* } => $outer:ident($inner:ident::$variant:ident)
    ) => {{
        let $msg { callback_id, $($f),* } = xdr::from_bytes($payload)?;
        Event::$outer { callback_id, event: $inner::$variant { $($f),* } }
    }};
}

/// Decode a `MESSAGE` of the remote program. `Ok(None)`: a procedure we do not decode.
pub fn decode(procedure: i32, payload: Bytes) -> Result<Option<Event>, DecodeError> {
    use procs as p;
    #[rustfmt::skip]
    let ev = match procedure {
        p::DOMAIN_LIFECYCLE => from_msg!(
            payload,
            LifecycleMsg { dom, event, detail } => Domain::Lifecycle
        ),
        p::DOMAIN_REBOOT => from_msg!(payload, RebootMsg { dom } => Domain::Reboot),
        p::DOMAIN_RTC_CHANGE => from_msg!(
            payload,
            RtcChangeMsg { dom, offset } => Domain::RtcChange
        ),
        p::DOMAIN_WATCHDOG => from_msg!(payload, WatchdogMsg { dom, action } => Domain::Watchdog),
        p::DOMAIN_IO_ERROR => {
            from_msg!(payload, IoErrorMsg { dom, src_path, dev_alias, action } => Domain::IoError)
        }
        p::DOMAIN_GRAPHICS => from_msg!(
            payload,
            GraphicsMsg { dom, phase, local, remote, auth_scheme, subject } => Domain::Graphics
        ),
        p::DOMAIN_IO_ERROR_REASON => from_msg!(
            payload,
            IoErrorReasonMsg { dom, src_path, dev_alias, action, reason } => Domain::IoErrorReason
        ),
        p::DOMAIN_CONTROL_ERROR => from_msg!(payload, RebootMsg { dom } => Domain::ControlError),
        p::DOMAIN_BLOCK_JOB => {
            from_msg!(payload, BlockJobMsg { dom, path, kind, status } => Domain::BlockJob)
        }
        p::DOMAIN_DISK_CHANGE => from_msg!(
            payload,
            DiskChangeMsg { dom, old_src_path, new_src_path, dev_alias, reason }
                => Domain::DiskChange
        ),
        p::DOMAIN_TRAY_CHANGE => {
            from_msg!(payload, TrayChangeMsg { dom, dev_alias, reason } => Domain::TrayChange)
        }
        p::DOMAIN_PMWAKEUP => from_msg!(payload, PmMsg { dom, reason } => Domain::PmWakeup),
        p::DOMAIN_PMSUSPEND => from_msg!(payload, PmMsg { dom, reason } => Domain::PmSuspend),
        p::DOMAIN_BALLOON_CHANGE => {
            from_msg!(payload, BalloonChangeMsg { dom, actual } => Domain::BalloonChange)
        }
        p::DOMAIN_PMSUSPEND_DISK => from_msg!(
            payload,
            PmMsg { dom, reason } => Domain::PmSuspendDisk
        ),
        p::DOMAIN_DEVICE_REMOVED => {
            from_msg!(payload, DeviceMsg { dom, dev_alias } => Domain::DeviceRemoved)
        }
        p::DOMAIN_BLOCK_JOB_2 => {
            from_msg!(payload, BlockJob2Msg { dom, dst, kind, status } => Domain::BlockJob2)
        }
        p::DOMAIN_TUNABLE => from_msg!(payload, TunableMsg { dom, params } => Domain::Tunable),
        p::DOMAIN_AGENT_LIFECYCLE => {
            from_msg!(payload, AgentLifecycleMsg { dom, state, reason } => Domain::AgentLifecycle)
        }
        p::DOMAIN_DEVICE_ADDED => from_msg!(
            payload,
            DeviceMsg { dom, dev_alias } => Domain::DeviceAdded
        ),
        p::DOMAIN_MIGRATION_ITERATION => from_msg!(
            payload,
            MigrationIterationMsg { dom, iteration } => Domain::MigrationIteration
        ),
        p::DOMAIN_JOB_COMPLETED => {
            from_msg!(payload, JobCompletedMsg { dom, params } => Domain::JobCompleted)
        }
        p::DOMAIN_DEVICE_REMOVAL_FAILED => {
            from_msg!(payload, DeviceMsg { dom, dev_alias } => Domain::DeviceRemovalFailed)
        }
        p::DOMAIN_METADATA_CHANGE => {
            from_msg!(payload, MetadataChangeMsg { dom, kind, nsuri } => Domain::MetadataChange)
        }
        p::DOMAIN_BLOCK_THRESHOLD => from_msg!(
            payload,
            BlockThresholdMsg { dom, dev, path, threshold, excess } => Domain::BlockThreshold
        ),
        p::DOMAIN_MEMORY_FAILURE => from_msg!(
            payload,
            MemoryFailureMsg { dom, recipient, action, flags } => Domain::MemoryFailure
        ),
        p::DOMAIN_MEMORY_DEVICE_SIZE_CHANGE => from_msg!(
            payload,
            MemoryDeviceSizeChangeMsg { dom, alias, size } => Domain::MemoryDeviceSizeChange
        ),
        p::CONNECTION_CLOSED => {
            let ConnectionClosedMsg { reason } = xdr::from_bytes(payload)?;
            Event::ConnectionClosed { reason }
        }
        p::NETWORK_LIFECYCLE => from_msg!(
            payload,
            NetworkLifecycleMsg { net, event, detail } => Network(NetworkEvent::Lifecycle)
        ),
        p::NETWORK_METADATA_CHANGE => from_msg!(
            payload,
            NetworkMetadataChangeMsg { net, kind, nsuri } => Network(NetworkEvent::MetadataChange)
        ),
        p::STORAGE_POOL_LIFECYCLE => from_msg!(
            payload,
            StoragePoolLifecycleMsg { pool, event, detail }
                => StoragePool(StoragePoolEvent::Lifecycle)
        ),
        p::STORAGE_POOL_REFRESH => from_msg!(
            payload,
            StoragePoolRefreshMsg { pool } => StoragePool(StoragePoolEvent::Refresh)
        ),
        p::NODE_DEVICE_LIFECYCLE => from_msg!(
            payload,
            NodeDeviceLifecycleMsg { dev, event, detail } => NodeDevice(NodeDeviceEvent::Lifecycle)
        ),
        p::NODE_DEVICE_UPDATE => from_msg!(
            payload,
            NodeDeviceUpdateMsg { dev } => NodeDevice(NodeDeviceEvent::Update)
        ),
        p::SECRET_LIFECYCLE => from_msg!(
            payload,
            SecretLifecycleMsg { secret, event, detail } => Secret(SecretEvent::Lifecycle)
        ),
        p::SECRET_VALUE_CHANGED => from_msg!(
            payload,
            SecretValueChangedMsg { secret } => Secret(SecretEvent::ValueChanged)
        ),
        _ => return Ok(None),
    };
    Ok(Some(ev))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::types::{TypedParamValue, Uuid};
    use crate::wire::xdr::Encode;

    fn dom() -> Domain {
        Domain {
            name: "vm".into(),
            uuid: Uuid([7; 16]),
            id: 3,
        }
    }

    fn s(t: &str) -> LvString {
        LvString::from(t)
    }

    fn roundtrip(procedure: i32, msg: &impl Encode) -> Event {
        let b = xdr::to_bytes(msg).unwrap();
        decode(procedure, b).unwrap().expect("known procedure")
    }

    /// `msg` (callback id 9, domain [`dom`]) decodes to `want`, which maps back to `procedure`.
    fn check(procedure: i32, msg: &impl Encode, want: DomainEvent) {
        assert_eq!(callback_proc(want.event_id()), Some(procedure), "{want:?}");
        assert_eq!(want.domain(), &dom());
        assert_eq!(
            roundtrip(procedure, msg),
            Event::Domain {
                callback_id: 9,
                event: want
            }
        );
    }

    #[test]
    fn callback_proc_table_is_a_bijection_over_9_0_ids() {
        for id in 0..event_id::COUNT_9_0 {
            let p = callback_proc(id).unwrap();
            assert_eq!(event_id_of_proc(p), Some(id));
            assert!(
                EVENT_PROCS.iter().any(|(n, _)| *n == p),
                "{p} missing from EVENT_PROCS"
            );
        }
        assert_eq!(callback_proc(-1), None);
        assert_eq!(callback_proc(event_id::COUNT_9_0), None);
        assert_eq!(event_id_of_proc(procs::CONNECTION_CLOSED), None);
    }

    #[test]
    fn every_listed_procedure_decodes_something() {
        // A payload no message accepts: each listed procedure must try (and fail) rather
        // than return Ok(None).
        for (p, name) in EVENT_PROCS {
            let r = decode(*p, Bytes::from_static(b"\x00"));
            assert!(r.is_err(), "{name} ({p}) returned {r:?}");
        }
    }

    #[test]
    fn unknown_procedures_are_not_errors() {
        assert_eq!(decode(107, Bytes::from_static(b"junk")), Ok(None));
        assert_eq!(decode(0, Bytes::new()), Ok(None));
        assert_eq!(decode(455, Bytes::new()), Ok(None));
    }

    #[test]
    fn every_domain_event_roundtrips() {
        use procs as p;
        let (cb, d) = (9, dom);
        let params = vec![TypedParam {
            field: s("cputune.quota"),
            value: TypedParamValue::LLong(-1),
        }];

        let (event, detail) = (lifecycle::STOPPED, lifecycle_detail::stopped::DESTROYED);
        let m = LifecycleMsg {
            callback_id: cb,
            dom: d(),
            event,
            detail,
        };
        check(
            p::DOMAIN_LIFECYCLE,
            &m,
            DomainEvent::Lifecycle {
                dom: d(),
                event,
                detail,
            },
        );
        let m = RebootMsg {
            callback_id: cb,
            dom: d(),
        };
        check(p::DOMAIN_REBOOT, &m, DomainEvent::Reboot { dom: d() });
        check(
            p::DOMAIN_CONTROL_ERROR,
            &m,
            DomainEvent::ControlError { dom: d() },
        );
        let m = RtcChangeMsg {
            callback_id: cb,
            dom: d(),
            offset: -3600,
        };
        check(
            p::DOMAIN_RTC_CHANGE,
            &m,
            DomainEvent::RtcChange {
                dom: d(),
                offset: -3600,
            },
        );
        let m = WatchdogMsg {
            callback_id: cb,
            dom: d(),
            action: 2,
        };
        check(
            p::DOMAIN_WATCHDOG,
            &m,
            DomainEvent::Watchdog {
                dom: d(),
                action: 2,
            },
        );

        let (src_path, dev_alias, action, reason) = (s("/a"), s("vd0"), 1, s("enospc"));
        let m = IoErrorMsg {
            callback_id: cb,
            dom: d(),
            src_path: src_path.clone(),
            dev_alias: dev_alias.clone(),
            action,
        };
        let want = DomainEvent::IoError {
            dom: d(),
            src_path: src_path.clone(),
            dev_alias: dev_alias.clone(),
            action,
        };
        check(p::DOMAIN_IO_ERROR, &m, want);
        let m = IoErrorReasonMsg {
            callback_id: cb,
            dom: d(),
            src_path: src_path.clone(),
            dev_alias: dev_alias.clone(),
            action,
            reason: reason.clone(),
        };
        let want = DomainEvent::IoErrorReason {
            dom: d(),
            src_path,
            dev_alias,
            action,
            reason,
        };
        check(p::DOMAIN_IO_ERROR_REASON, &m, want);

        let addr = |n: &str| GraphicsAddress {
            family: 0,
            node: s(n),
            service: s("5900"),
        };
        let subject = vec![GraphicsIdentity {
            kind: s("x509dname"),
            name: s("CN=a"),
        }];
        let m = GraphicsMsg {
            callback_id: cb,
            dom: d(),
            phase: graphics_phase::INITIALIZE,
            local: addr("127.0.0.1"),
            remote: addr("10.0.0.2"),
            auth_scheme: s("vnc"),
            subject: subject.clone(),
        };
        let want = DomainEvent::Graphics {
            dom: d(),
            phase: graphics_phase::INITIALIZE,
            local: addr("127.0.0.1"),
            remote: addr("10.0.0.2"),
            auth_scheme: s("vnc"),
            subject,
        };
        check(p::DOMAIN_GRAPHICS, &m, want);

        let m = BlockJobMsg {
            callback_id: cb,
            dom: d(),
            path: s("/p"),
            kind: 2,
            status: 3,
        };
        let want = DomainEvent::BlockJob {
            dom: d(),
            path: s("/p"),
            kind: 2,
            status: 3,
        };
        check(p::DOMAIN_BLOCK_JOB, &m, want);
        let m = BlockJob2Msg {
            callback_id: cb,
            dom: d(),
            dst: s("vda"),
            kind: 3,
            status: 0,
        };
        let want = DomainEvent::BlockJob2 {
            dom: d(),
            dst: s("vda"),
            kind: 3,
            status: 0,
        };
        check(p::DOMAIN_BLOCK_JOB_2, &m, want);

        let (old_src_path, new_src_path, dev_alias) = (Some(s("/old.iso")), None, s("sata0"));
        let m = DiskChangeMsg {
            callback_id: cb,
            dom: d(),
            old_src_path: old_src_path.clone(),
            new_src_path: new_src_path.clone(),
            dev_alias: dev_alias.clone(),
            reason: 0,
        };
        let want = DomainEvent::DiskChange {
            dom: d(),
            old_src_path,
            new_src_path,
            dev_alias: dev_alias.clone(),
            reason: 0,
        };
        check(p::DOMAIN_DISK_CHANGE, &m, want);
        let m = TrayChangeMsg {
            callback_id: cb,
            dom: d(),
            dev_alias: dev_alias.clone(),
            reason: 1,
        };
        let want = DomainEvent::TrayChange {
            dom: d(),
            dev_alias: dev_alias.clone(),
            reason: 1,
        };
        check(p::DOMAIN_TRAY_CHANGE, &m, want);

        let m = PmMsg {
            callback_id: cb,
            reason: 0,
            dom: d(),
        };
        check(
            p::DOMAIN_PMWAKEUP,
            &m,
            DomainEvent::PmWakeup {
                dom: d(),
                reason: 0,
            },
        );
        check(
            p::DOMAIN_PMSUSPEND,
            &m,
            DomainEvent::PmSuspend {
                dom: d(),
                reason: 0,
            },
        );
        check(
            p::DOMAIN_PMSUSPEND_DISK,
            &m,
            DomainEvent::PmSuspendDisk {
                dom: d(),
                reason: 0,
            },
        );
        let m = BalloonChangeMsg {
            callback_id: cb,
            dom: d(),
            actual: 1 << 20,
        };
        check(
            p::DOMAIN_BALLOON_CHANGE,
            &m,
            DomainEvent::BalloonChange {
                dom: d(),
                actual: 1 << 20,
            },
        );

        let m = DeviceMsg {
            callback_id: cb,
            dom: d(),
            dev_alias: dev_alias.clone(),
        };
        let dev = || dev_alias.clone();
        check(
            p::DOMAIN_DEVICE_REMOVED,
            &m,
            DomainEvent::DeviceRemoved {
                dom: d(),
                dev_alias: dev(),
            },
        );
        check(
            p::DOMAIN_DEVICE_ADDED,
            &m,
            DomainEvent::DeviceAdded {
                dom: d(),
                dev_alias: dev(),
            },
        );
        let want = DomainEvent::DeviceRemovalFailed {
            dom: d(),
            dev_alias: dev(),
        };
        check(p::DOMAIN_DEVICE_REMOVAL_FAILED, &m, want);

        let m = TunableMsg {
            callback_id: cb,
            dom: d(),
            params: params.clone(),
        };
        check(
            p::DOMAIN_TUNABLE,
            &m,
            DomainEvent::Tunable {
                dom: d(),
                params: params.clone(),
            },
        );
        let m = JobCompletedMsg {
            callback_id: cb,
            dom: d(),
            params: params.clone(),
        };
        check(
            p::DOMAIN_JOB_COMPLETED,
            &m,
            DomainEvent::JobCompleted { dom: d(), params },
        );

        let (state, reason) = (agent_state::CONNECTED, 2);
        let m = AgentLifecycleMsg {
            callback_id: cb,
            dom: d(),
            state,
            reason,
        };
        check(
            p::DOMAIN_AGENT_LIFECYCLE,
            &m,
            DomainEvent::AgentLifecycle {
                dom: d(),
                state,
                reason,
            },
        );
        let m = MigrationIterationMsg {
            callback_id: cb,
            dom: d(),
            iteration: 4,
        };
        let want = DomainEvent::MigrationIteration {
            dom: d(),
            iteration: 4,
        };
        check(p::DOMAIN_MIGRATION_ITERATION, &m, want);

        let (kind, nsuri) = (2, Some(s("http://x/")));
        let m = MetadataChangeMsg {
            callback_id: cb,
            dom: d(),
            kind,
            nsuri: nsuri.clone(),
        };
        check(
            p::DOMAIN_METADATA_CHANGE,
            &m,
            DomainEvent::MetadataChange {
                dom: d(),
                kind,
                nsuri,
            },
        );

        let (threshold, excess) = (1 << 30, 4096);
        let m = BlockThresholdMsg {
            callback_id: cb,
            dom: d(),
            dev: s("vda[1]"),
            path: None,
            threshold,
            excess,
        };
        let want = DomainEvent::BlockThreshold {
            dom: d(),
            dev: s("vda[1]"),
            path: None,
            threshold,
            excess,
        };
        check(p::DOMAIN_BLOCK_THRESHOLD, &m, want);
        let (recipient, action, flags) = (1, 1, 1);
        let m = MemoryFailureMsg {
            callback_id: cb,
            dom: d(),
            recipient,
            action,
            flags,
        };
        let want = DomainEvent::MemoryFailure {
            dom: d(),
            recipient,
            action,
            flags,
        };
        check(p::DOMAIN_MEMORY_FAILURE, &m, want);
        let (alias, size) = (s("virtiomem0"), 2048);
        let m = MemoryDeviceSizeChangeMsg {
            callback_id: cb,
            dom: d(),
            alias: alias.clone(),
            size,
        };
        let want = DomainEvent::MemoryDeviceSizeChange {
            dom: d(),
            alias,
            size,
        };
        check(p::DOMAIN_MEMORY_DEVICE_SIZE_CHANGE, &m, want);
    }

    #[test]
    fn pm_events_put_reason_before_the_domain() {
        let b = xdr::to_bytes(&PmMsg {
            callback_id: 1,
            reason: 0x55,
            dom: dom(),
        })
        .unwrap();
        assert_eq!(&b[4..8], &[0, 0, 0, 0x55]);
    }

    #[test]
    fn other_object_events_decode() {
        let net = Network {
            name: "default".into(),
            uuid: Uuid([1; 16]),
        };
        let pool = StoragePool {
            name: "p".into(),
            uuid: Uuid([2; 16]),
        };
        let dev = NodeDevice {
            name: "pci_0000_00_02_0".into(),
        };
        let secret = Secret {
            uuid: Uuid([3; 16]),
            usage_type: 1,
            usage_id: "/v".into(),
        };

        let m = NetworkLifecycleMsg {
            callback_id: 4,
            net: net.clone(),
            event: 2,
            detail: 0,
        };
        let e = roundtrip(procs::NETWORK_LIFECYCLE, &m);
        assert_eq!(e.callback_id(), Some(4));
        let want = NetworkEvent::Lifecycle {
            net: net.clone(),
            event: 2,
            detail: 0,
        };
        assert_eq!(
            e,
            Event::Network {
                callback_id: 4,
                event: want
            }
        );
        let m = NetworkMetadataChangeMsg {
            callback_id: 4,
            net: net.clone(),
            kind: 1,
            nsuri: None,
        };
        let want = NetworkEvent::MetadataChange {
            net,
            kind: 1,
            nsuri: None,
        };
        let e = roundtrip(procs::NETWORK_METADATA_CHANGE, &m);
        assert_eq!(
            e,
            Event::Network {
                callback_id: 4,
                event: want
            }
        );

        let m = StoragePoolLifecycleMsg {
            callback_id: 5,
            pool: pool.clone(),
            event: 4,
            detail: 0,
        };
        let want = StoragePoolEvent::Lifecycle {
            pool: pool.clone(),
            event: 4,
            detail: 0,
        };
        let e = roundtrip(procs::STORAGE_POOL_LIFECYCLE, &m);
        assert_eq!(
            e,
            Event::StoragePool {
                callback_id: 5,
                event: want
            }
        );
        let m = StoragePoolRefreshMsg {
            callback_id: 5,
            pool: pool.clone(),
        };
        let e = roundtrip(procs::STORAGE_POOL_REFRESH, &m);
        let want = StoragePoolEvent::Refresh { pool };
        assert_eq!(
            e,
            Event::StoragePool {
                callback_id: 5,
                event: want
            }
        );

        let m = NodeDeviceLifecycleMsg {
            callback_id: 6,
            dev: dev.clone(),
            event: 0,
            detail: 0,
        };
        let want = NodeDeviceEvent::Lifecycle {
            dev: dev.clone(),
            event: 0,
            detail: 0,
        };
        let e = roundtrip(procs::NODE_DEVICE_LIFECYCLE, &m);
        assert_eq!(
            e,
            Event::NodeDevice {
                callback_id: 6,
                event: want
            }
        );
        let e = roundtrip(
            procs::NODE_DEVICE_UPDATE,
            &NodeDeviceUpdateMsg {
                callback_id: 6,
                dev: dev.clone(),
            },
        );
        assert_eq!(
            e,
            Event::NodeDevice {
                callback_id: 6,
                event: NodeDeviceEvent::Update { dev }
            }
        );

        let m = SecretLifecycleMsg {
            callback_id: 7,
            secret: secret.clone(),
            event: 1,
            detail: 0,
        };
        let want = SecretEvent::Lifecycle {
            secret: secret.clone(),
            event: 1,
            detail: 0,
        };
        let e = roundtrip(procs::SECRET_LIFECYCLE, &m);
        assert_eq!(
            e,
            Event::Secret {
                callback_id: 7,
                event: want
            }
        );
        let m = SecretValueChangedMsg {
            callback_id: 7,
            secret: secret.clone(),
        };
        let e = roundtrip(procs::SECRET_VALUE_CHANGED, &m);
        assert_eq!(
            e,
            Event::Secret {
                callback_id: 7,
                event: SecretEvent::ValueChanged { secret }
            }
        );

        let e = roundtrip(procs::CONNECTION_CLOSED, &ConnectionClosedMsg { reason: 2 });
        assert_eq!(e, Event::ConnectionClosed { reason: 2 });
        assert_eq!(e.callback_id(), None);
    }

    #[test]
    fn trailing_bytes_and_oversized_lists_are_errors() {
        let mut b = xdr::to_bytes(&RebootMsg {
            callback_id: 1,
            dom: dom(),
        })
        .unwrap()
        .to_vec();
        b.extend_from_slice(&[0, 0, 0, 0]);
        let r = decode(procs::DOMAIN_REBOOT, b.into());
        assert!(matches!(r, Err(DecodeError::TrailingBytes { .. })), "{r:?}");

        // A graphics subject count above REMOTE_DOMAIN_EVENT_GRAPHICS_IDENTITY_MAX (20).
        let addr = GraphicsAddress {
            family: 0,
            node: s("a"),
            service: s("1"),
        };
        let m = GraphicsMsg {
            callback_id: 1,
            dom: dom(),
            phase: 0,
            local: addr.clone(),
            remote: addr,
            auth_scheme: s("none"),
            subject: vec![],
        };
        let mut b = xdr::to_bytes(&m).unwrap().to_vec();
        let n = b.len();
        b[n - 4..].copy_from_slice(&21u32.to_be_bytes());
        b.extend(std::iter::repeat_n(0u8, 21 * 8));
        let r = decode(procs::DOMAIN_GRAPHICS, b.into());
        assert!(
            matches!(r, Err(DecodeError::TooLong { max: 20, .. })),
            "{r:?}"
        );
    }
}
