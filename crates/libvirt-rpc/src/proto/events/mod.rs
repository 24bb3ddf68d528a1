//! Asynchronous messages of the remote program: domain, network, storage pool, node device
//! and secret events, and the close notice, declared in one table (`event_table!`, in
//! `events/table.rs`): one block per family, one row per event.
//!
//! The daemon sends these as `MESSAGE` packets (serial 1, which means nothing). Each event
//! carries the callback id returned by the matching `*_EVENT_*REGISTER_ANY` call: on the wire
//! a [`CallbackMsg`] (callback id, then the event's body). Only the callback forms are
//! decoded: the legacy per-connection domain events (procedures 107, 169-173, …) are never
//! sent to a client that registered through `CONNECT_DOMAIN_EVENT_CALLBACK_REGISTER_ANY`. An
//! unknown procedure is not an error: [`decode`] returns `Ok(None)` and the connection counts
//! and skips it.
//!
//! Wire quirks the table spells out: the callback messages nest the legacy message after
//! `callbackID`, which flattens to `callbackID, dom, …`, except the three power-management
//! events, whose `reason` comes *before* the domain ([`PmReason`]); `BLOCK_JOB_2`,
//! `BLOCK_THRESHOLD`, `MEMORY_FAILURE` and `MEMORY_DEVICE_SIZE_CHANGE` carry a callback id
//! although their names lack `CALLBACK`; several events share one layout ([`DomainOnly`],
//! [`PmReason`], [`DeviceAlias`]).

use bytes::Bytes;

use crate::proto::Procedure;
use crate::proto::limits;
use crate::proto::limits::DOMAIN_EVENT_GRAPHICS_IDENTITY_MAX;
use crate::proto::procs::common::{CallbackIdArgs, CallbackIdRet};
use crate::proto::procs::connect::{
    ConnectDomainEventCallbackDeregisterAny, ConnectDomainEventCallbackRegisterAny,
    ConnectDomainEventCallbackRegisterAnyArgs,
};
use crate::proto::procs::network::{
    ConnectNetworkEventDeregisterAny, ConnectNetworkEventRegisterAny,
    ConnectNetworkEventRegisterAnyArgs,
};
use crate::proto::procs::nodedev::{
    ConnectNodeDeviceEventDeregisterAny, ConnectNodeDeviceEventRegisterAny,
    ConnectNodeDeviceEventRegisterAnyArgs,
};
use crate::proto::procs::secret::{
    ConnectSecretEventDeregisterAny, ConnectSecretEventRegisterAny,
    ConnectSecretEventRegisterAnyArgs,
};
use crate::proto::procs::storage::{
    ConnectStoragePoolEventDeregisterAny, ConnectStoragePoolEventRegisterAny,
    ConnectStoragePoolEventRegisterAnyArgs,
};
use crate::proto::types::{Domain, Network, NodeDevice, Secret, StoragePool, TypedParam};
use crate::wire::xdr::{self, Decode, DecodeError, Decoder, Encode, Encoder, LvString};
use crate::xdr_struct;

mod codes;
#[macro_use]
mod table;
#[cfg(test)]
mod tests;

pub use codes::{
    agent_state, block_job_status, graphics_phase, io_error_action, lifecycle, lifecycle_detail,
    object_lifecycle,
};

/// One event family, for code generic over families (subscriptions, routing): what to
/// register with, what it filters on, and how to find its events among decoded messages.
/// Implemented by each family's event enum ([`DomainEvent`], [`NetworkEvent`], …).
pub trait EventKind: Sized + Clone + std::fmt::Debug + Send + 'static {
    /// The family, part of a registration's key (callback ids are unique only per family).
    const KIND: Kind;
    /// The family's lifecycle event id (0 in every family).
    const LIFECYCLE: i32;
    /// The object an event is about, and the type of a subscription's object filter.
    type Object;
    /// The `*_EVENT_*REGISTER_ANY` procedure: event id and object filter in, callback id out.
    type Register: Procedure<Ret = CallbackIdRet>;
    /// The `*_EVENT_DEREGISTER_ANY` procedure.
    type Deregister: Procedure<Args = CallbackIdArgs, Ret = ()>;

    /// The register call's arguments: one event id, one object or (`None`) all.
    fn register_args(
        event_id: i32,
        object: Option<Self::Object>,
    ) -> <Self::Register as Procedure>::Args;
    /// This family's event inside a decoded message, if it is one of this family.
    fn of(event: &Event) -> Option<&Self>;
    /// The object the event is about.
    fn object(&self) -> &Self::Object;
    /// `(event, detail)` of a lifecycle event; `None` for the family's other events.
    fn lifecycle(&self) -> Option<(i32, i32)>;
}

/// A callback event message as it travels: the registration's callback id, then the body.
#[derive(Debug, Clone, PartialEq)]
pub struct CallbackMsg<T> {
    /// Callback id from the registration.
    pub callback_id: i32,
    /// The event's fields.
    pub body: T,
}

impl<T: Encode> Encode for CallbackMsg<T> {
    fn encode(&self, enc: &mut Encoder) {
        self.callback_id.encode(enc);
        self.body.encode(enc);
    }
}

impl<T: Decode> Decode for CallbackMsg<T> {
    const MIN_SIZE: usize = 4 + T::MIN_SIZE;
    fn decode(dec: &mut Decoder) -> Result<Self, DecodeError> {
        Ok(Self {
            callback_id: i32::decode(dec)?,
            body: T::decode(dec)?,
        })
    }
}

xdr_struct! {
    /// `remote_connect_event_connection_closed_msg`: the close notice (no callback id).
    pub struct ConnectionClosedMsg {
        /// `virConnectCloseReason` (ERROR 0, EOF 1, KEEPALIVE 2, CLIENT 3).
        pub reason: i32,
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
    /// Body of the three power-management events ([`DomainEvent::PmWakeup`],
    /// [`DomainEvent::PmSuspend`], [`DomainEvent::PmSuspendDisk`]): the one layout whose
    /// `reason` **precedes the domain** on the wire, hence declared here, not in the table.
    pub struct PmReason {
        /// Reason (always 0 so far).
        pub reason: i32,
        /// The domain.
        pub dom: Domain,
    }
}

event_table! {
    /// A decoded domain event (`virDomainEventID`).
    Domain => DomainEvent {
        object: "The domain." dom: Domain,
        ids: event_id {
            /// Number of event ids libvirt 9.0 defines (0..=26).
            pub const COUNT_9_0: i32 = 27;
        },
        register: ConnectDomainEventCallbackRegisterAny(
            ConnectDomainEventCallbackRegisterAnyArgs { event_id, dom }
        ),
        deregister: ConnectDomainEventCallbackDeregisterAny,
        lifecycle: Lifecycle = LIFECYCLE,
    } {
        /// Lifecycle changes (defined, started, stopped, …).
        LIFECYCLE = 0, DOMAIN_LIFECYCLE = 318 "DomainEventCallbackLifecycle"
            => Lifecycle(Lifecycle {
                /// [`lifecycle`] event.
                event: i32,
                /// Event-specific detail ([`lifecycle_detail`]).
                detail: i32,
            });
        /// The guest rebooted.
        REBOOT = 1, DOMAIN_REBOOT = 319 "DomainEventCallbackReboot" => Reboot(DomainOnly {});
        /// The guest changed its RTC.
        RTC_CHANGE = 2, DOMAIN_RTC_CHANGE = 320 "DomainEventCallbackRtcChange"
            => RtcChange(RtcChange {
                /// New RTC offset from UTC, in seconds.
                offset: i64,
            });
        /// The watchdog fired.
        WATCHDOG = 3, DOMAIN_WATCHDOG = 321 "DomainEventCallbackWatchdog"
            => Watchdog(Watchdog {
                /// `virDomainEventWatchdogAction` (NONE 0, PAUSE 1, RESET 2, POWEROFF 3,
                /// SHUTDOWN 4, DEBUG 5, INJECTNMI 6).
                action: i32,
            });
        /// A disk I/O error.
        IO_ERROR = 4, DOMAIN_IO_ERROR = 322 "DomainEventCallbackIoError" => IoError(IoError {
            /// Disk source path.
            src_path: LvString,
            /// Device alias.
            dev_alias: LvString,
            /// [`io_error_action`].
            action: i32,
        });
        /// A graphics client connected, authenticated or disconnected.
        GRAPHICS = 5, DOMAIN_GRAPHICS = 323 "DomainEventCallbackGraphics"
            => Graphics(Graphics {
                /// [`graphics_phase`].
                phase: i32,
                /// Server address.
                local: GraphicsAddress,
                /// Client address.
                remote: GraphicsAddress,
                /// Authentication scheme.
                auth_scheme: LvString,
                /// Client identity.
                subject: Vec<GraphicsIdentity> [DOMAIN_EVENT_GRAPHICS_IDENTITY_MAX],
            });
        /// A disk I/O error, with the reason.
        IO_ERROR_REASON = 6, DOMAIN_IO_ERROR_REASON = 324 "DomainEventCallbackIoErrorReason"
            => IoErrorReason(IoErrorReason {
                /// Disk source path.
                src_path: LvString,
                /// Device alias.
                dev_alias: LvString,
                /// [`io_error_action`].
                action: i32,
                /// Reason (`enospc`, …).
                reason: LvString,
            });
        /// The daemon lost or had trouble with the monitor connection (the layout of
        /// `Reboot`).
        CONTROL_ERROR = 7, DOMAIN_CONTROL_ERROR = 325 "DomainEventCallbackControlError"
            => ControlError(DomainOnly);
        /// A block job ended or became ready (identified by path).
        BLOCK_JOB = 8, DOMAIN_BLOCK_JOB = 326 "DomainEventCallbackBlockJob"
            => BlockJob(BlockJob {
                /// Disk path.
                path: LvString,
                /// `virDomainBlockJobType` (PULL 1, COPY 2, COMMIT 3, `ACTIVE_COMMIT` 4,
                /// BACKUP 5).
                kind: i32,
                /// [`block_job_status`].
                status: i32,
            });
        /// Disk media changed.
        DISK_CHANGE = 9, DOMAIN_DISK_CHANGE = 327 "DomainEventCallbackDiskChange"
            => DiskChange(DiskChange {
                /// Previous source.
                old_src_path: Option<LvString>,
                /// New source.
                new_src_path: Option<LvString>,
                /// Device alias.
                dev_alias: LvString,
                /// `virConnectDomainEventDiskChangeReason` (`MISSING_ON_START` 0,
                /// `DROP_MISSING_ON_START` 1).
                reason: i32,
            });
        /// A removable media tray opened or closed.
        TRAY_CHANGE = 10, DOMAIN_TRAY_CHANGE = 328 "DomainEventCallbackTrayChange"
            => TrayChange(TrayChange {
                /// Device alias.
                dev_alias: LvString,
                /// `virDomainEventTrayChangeReason` (OPEN 0, CLOSE 1).
                reason: i32,
            });
        /// The guest woke from power-management suspend.
        PMWAKEUP = 11, DOMAIN_PMWAKEUP = 329 "DomainEventCallbackPmWakeup"
            => PmWakeup(PmReason);
        /// The guest suspended to RAM.
        PMSUSPEND = 12, DOMAIN_PMSUSPEND = 330 "DomainEventCallbackPmSuspend"
            => PmSuspend(PmReason);
        /// The balloon changed size.
        BALLOON_CHANGE = 13, DOMAIN_BALLOON_CHANGE = 331 "DomainEventCallbackBalloonChange"
            => BalloonChange(BalloonChange {
                /// New balloon size in KiB.
                actual: u64,
            });
        /// The guest suspended to disk.
        PMSUSPEND_DISK = 14, DOMAIN_PMSUSPEND_DISK = 332 "DomainEventCallbackPmSuspendDisk"
            => PmSuspendDisk(PmReason);
        /// A device was removed (detach finished).
        DEVICE_REMOVED = 15, DOMAIN_DEVICE_REMOVED = 333 "DomainEventCallbackDeviceRemoved"
            => DeviceRemoved(DeviceAlias {
                /// Device alias.
                dev_alias: LvString,
            });
        /// A block job ended or became ready (identified by target; has a callback id
        /// despite its name).
        BLOCK_JOB_2 = 16, DOMAIN_BLOCK_JOB_2 = 339 "DomainEventBlockJob2"
            => BlockJob2(BlockJob2 {
                /// Disk target (`vda`).
                dst: LvString,
                /// `virDomainBlockJobType`.
                kind: i32,
                /// [`block_job_status`].
                status: i32,
            });
        /// Tunable parameters changed.
        TUNABLE = 17, DOMAIN_TUNABLE = 346 "DomainEventCallbackTunable" => Tunable(Tunable {
            /// Changed parameters (`cputune.*`, `blkdeviotune.*`, …).
            params: Vec<TypedParam> [limits::DOMAIN_EVENT_TUNABLE_MAX],
        });
        /// The guest agent connected or disconnected.
        AGENT_LIFECYCLE = 18, DOMAIN_AGENT_LIFECYCLE = 348 "DomainEventCallbackAgentLifecycle"
            => AgentLifecycle(AgentLifecycle {
                /// [`agent_state`].
                state: i32,
                /// `virConnectDomainEventAgentLifecycleReason` (UNKNOWN 0, `DOMAIN_STARTED`
                /// 1, CHANNEL 2).
                reason: i32,
            });
        /// A device was added.
        DEVICE_ADDED = 19, DOMAIN_DEVICE_ADDED = 354 "DomainEventCallbackDeviceAdded"
            => DeviceAdded(DeviceAlias);
        /// A migration iteration finished.
        MIGRATION_ITERATION = 20, DOMAIN_MIGRATION_ITERATION = 359
            "DomainEventCallbackMigrationIteration"
            => MigrationIteration(MigrationIteration {
                /// Iteration number.
                iteration: i32,
            });
        /// A job completed, with its statistics.
        JOB_COMPLETED = 21, DOMAIN_JOB_COMPLETED = 363 "DomainEventCallbackJobCompleted"
            => JobCompleted(JobCompleted {
                /// Job statistics.
                params: Vec<TypedParam> [limits::DOMAIN_JOB_STATS_MAX],
            });
        /// Device removal failed.
        DEVICE_REMOVAL_FAILED = 22, DOMAIN_DEVICE_REMOVAL_FAILED = 367
            "DomainEventCallbackDeviceRemovalFailed" => DeviceRemovalFailed(DeviceAlias);
        /// Metadata changed.
        METADATA_CHANGE = 23, DOMAIN_METADATA_CHANGE = 379 "DomainEventCallbackMetadataChange"
            => MetadataChange(MetadataChange {
                /// `virDomainMetadataType` (DESCRIPTION 0, TITLE 1, ELEMENT 2).
                kind: i32,
                /// Namespace URI (ELEMENT only).
                nsuri: Option<LvString>,
            });
        /// A block write threshold was crossed (has a callback id despite its name).
        BLOCK_THRESHOLD = 24, DOMAIN_BLOCK_THRESHOLD = 385 "DomainEventBlockThreshold"
            => BlockThreshold(BlockThreshold {
                /// Disk target, possibly with `[index]`.
                dev: LvString,
                /// Source path.
                path: Option<LvString>,
                /// The threshold that was crossed.
                threshold: u64,
                /// Bytes written past it.
                excess: u64,
            });
        /// A memory failure (hardware error) was reported (has a callback id despite its
        /// name).
        MEMORY_FAILURE = 25, DOMAIN_MEMORY_FAILURE = 423 "DomainEventMemoryFailure"
            => MemoryFailure(MemoryFailure {
                /// `virDomainMemoryFailureRecipientType` (HYPERVISOR 0, GUEST 1).
                recipient: i32,
                /// `virDomainMemoryFailureActionType` (IGNORE 0, INJECT 1, FATAL 2, RESET 3).
                action: i32,
                /// `virDomainMemoryFailureFlags` (`ACTION_REQUIRED` 1, RECURSIVE 2).
                flags: u32,
            });
        /// A memory device changed size (has a callback id despite its name).
        MEMORY_DEVICE_SIZE_CHANGE = 26, DOMAIN_MEMORY_DEVICE_SIZE_CHANGE = 438
            "DomainEventMemoryDeviceSizeChange"
            => MemoryDeviceSizeChange(MemoryDeviceSizeChange {
                /// Memory device alias.
                alias: LvString,
                /// New size in KiB.
                size: u64,
            });
    }

    /// A decoded network event (`virNetworkEventID`).
    Network => NetworkEvent {
        object: "The network." net: Network,
        ids: network_event_id,
        register: ConnectNetworkEventRegisterAny(
            ConnectNetworkEventRegisterAnyArgs { event_id, net }
        ),
        deregister: ConnectNetworkEventDeregisterAny,
        lifecycle: Lifecycle = LIFECYCLE,
    } {
        /// Lifecycle changes.
        LIFECYCLE = 0, NETWORK_LIFECYCLE = 315 "NetworkEventLifecycle"
            => Lifecycle(NetworkLifecycle {
                /// [`object_lifecycle`] event.
                event: i32,
                /// Detail (always 0 so far).
                detail: i32,
            });
        /// Metadata changed (libvirt 9.7+).
        METADATA_CHANGE = 1, NETWORK_METADATA_CHANGE = 446 "NetworkEventCallbackMetadataChange"
            => MetadataChange(NetworkMetadataChange {
                /// `virNetworkMetadataType` (DESCRIPTION 0, TITLE 1, ELEMENT 2).
                kind: i32,
                /// Namespace URI (ELEMENT only).
                nsuri: Option<LvString>,
            });
    }

    /// A decoded storage pool event (`virStoragePoolEventID`).
    StoragePool => StoragePoolEvent {
        object: "The pool." pool: StoragePool,
        ids: pool_event_id,
        register: ConnectStoragePoolEventRegisterAny(
            ConnectStoragePoolEventRegisterAnyArgs { event_id, pool }
        ),
        deregister: ConnectStoragePoolEventDeregisterAny,
        lifecycle: Lifecycle = LIFECYCLE,
    } {
        /// Lifecycle changes.
        LIFECYCLE = 0, STORAGE_POOL_LIFECYCLE = 370 "StoragePoolEventLifecycle"
            => Lifecycle(StoragePoolLifecycle {
                /// [`object_lifecycle`] event.
                event: i32,
                /// Detail.
                detail: i32,
            });
        /// The pool was refreshed.
        REFRESH = 1, STORAGE_POOL_REFRESH = 373 "StoragePoolEventRefresh"
            => Refresh(StoragePoolRefreshed {});
    }

    /// A decoded node device event (`virNodeDeviceEventID`).
    NodeDevice => NodeDeviceEvent {
        object: "The device." dev: NodeDevice,
        ids: node_device_event_id,
        register: ConnectNodeDeviceEventRegisterAny(
            ConnectNodeDeviceEventRegisterAnyArgs { event_id, dev }
        ),
        deregister: ConnectNodeDeviceEventDeregisterAny,
        lifecycle: Lifecycle = LIFECYCLE,
    } {
        /// Lifecycle changes.
        LIFECYCLE = 0, NODE_DEVICE_LIFECYCLE = 376 "NodeDeviceEventLifecycle"
            => Lifecycle(NodeDeviceLifecycle {
                /// `virNodeDeviceEventLifecycleType` (CREATED 0, DELETED 1, DEFINED 2,
                /// UNDEFINED 3).
                event: i32,
                /// Detail.
                detail: i32,
            });
        /// The device was updated.
        UPDATE = 1, NODE_DEVICE_UPDATE = 377 "NodeDeviceEventUpdate"
            => Update(NodeDeviceUpdate {});
    }

    /// A decoded secret event (`virSecretEventID`).
    Secret => SecretEvent {
        object: "The secret." secret: Secret,
        ids: secret_event_id,
        register: ConnectSecretEventRegisterAny(
            ConnectSecretEventRegisterAnyArgs { event_id, secret }
        ),
        deregister: ConnectSecretEventDeregisterAny,
        lifecycle: Lifecycle = LIFECYCLE,
    } {
        /// Lifecycle changes.
        LIFECYCLE = 0, SECRET_LIFECYCLE = 382 "SecretEventLifecycle"
            => Lifecycle(SecretLifecycle {
                /// `virSecretEventLifecycleType` (DEFINED 0, UNDEFINED 1).
                event: i32,
                /// Detail.
                detail: i32,
            });
        /// The value changed.
        VALUE_CHANGED = 1, SECRET_VALUE_CHANGED = 383 "SecretEventValueChanged"
            => ValueChanged(SecretValueChanged {});
    }
}

impl DomainEvent {
    /// The domain the event is about.
    pub fn domain(&self) -> &Domain {
        EventKind::object(self)
    }
}

/// [`DomainEvent::callback_proc`]: the `MESSAGE` procedure of domain events of `event_id`
/// registered through `CONNECT_DOMAIN_EVENT_CALLBACK_REGISTER_ANY`; `None` for ids libvirt 9.0
/// does not define.
pub fn callback_proc(event_id: i32) -> Option<i32> {
    DomainEvent::callback_proc(event_id)
}

/// [`DomainEvent::event_id_of_proc`]: the `virDomainEventID` whose events arrive as
/// `procedure`; `None` for anything else.
pub fn event_id_of_proc(procedure: i32) -> Option<i32> {
    DomainEvent::event_id_of_proc(procedure)
}
