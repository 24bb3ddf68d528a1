//! Asynchronous messages of the remote program: domain, network, storage pool, node device
//! and secret events, and the close notice, declared in one table (`event_table!`, in
//! `events/table.rs`): one block per family, one row per event.
//!
//! The daemon sends these as `MESSAGE` packets (serial 1, which means nothing). Each event
//! carries the callback id returned by the matching `*_EVENT_*REGISTER_ANY` call: on the wire
//! a [`CallbackMsg`] (callback id, then the event's body). The legacy per-connection domain
//! events (procedures 107, 169-173, …, 311: ids 0 to 15 registered through
//! `CONNECT_DOMAIN_EVENT_REGISTER{,_ANY}`) carry no callback id; they decode to
//! [`Event::DomainLegacy`] with the same bodies, routed by their event id to the legacy
//! registrations ([`Kind::DomainLegacy`] for lifecycle, [`Kind::DomainLegacyAny`] per id).
//! The QEMU program's monitor event
//! decodes through [`decode_message`] to [`Event::QemuMonitor`]. An unknown procedure is not
//! an error: [`decode`] returns `Ok(None)` and the connection counts and skips it.
//!
//! Wire quirks the table spells out: the callback messages nest the legacy message after
//! `callbackID`, which flattens to `callbackID, dom, …`, except the three power-management
//! events, whose `reason` comes *before* the domain ([`PmReason`]); `BLOCK_JOB_2`,
//! `BLOCK_THRESHOLD`, `MEMORY_FAILURE` and `MEMORY_DEVICE_SIZE_CHANGE` carry a callback id
//! although their names lack `CALLBACK`; several events share one layout ([`DomainOnly`],
//! [`PmReason`], [`DeviceAlias`]).

use bytes::Bytes;

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
use crate::proto::types::{
    NonnullDomain, NonnullNetwork, NonnullNodeDevice, NonnullSecret, NonnullStoragePool, TypedParam,
};
use crate::proto::{Procedure, limits};
use crate::wire::xdr::{self, Decode, DecodeError, Decoder, Encode, Encoder, LvString, xdr_struct};

mod codes;
#[macro_use]
mod table;
#[cfg(test)]
mod tests;

pub use codes::MemoryFailureFlags;

use crate::proto::names::{
    AgentLifecycleReason, AgentLifecycleState, BlockJobStatus, BlockJobType, ConnectCloseReason,
    DiskChangeReason, DomainEventType, DomainLifecycle, GraphicsAddressType, GraphicsPhase,
    IoErrorAction, LifecycleDetail, MemoryFailureAction, MemoryFailureRecipient, MetadataType,
    NetworkEventType, NodeDeviceEventType, SecretEventType, StoragePoolEventType, TrayChangeReason,
    WatchdogAction,
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
    /// The family's lifecycle event type (`DomainEventType`, `NetworkEventType`, …): prints
    /// as virsh's word (`Started`).
    type LifecycleEvent: Copy + std::fmt::Debug + std::fmt::Display + Into<i32>;
    /// `(event, detail)` of a lifecycle event as numbers; `None` for the family's other
    /// events.
    fn lifecycle(&self) -> Option<(i32, i32)>;
    /// The event of a lifecycle event, named; `None` for the family's other events.
    fn lifecycle_event(&self) -> Option<Self::LifecycleEvent>;
}

/// One event of one family as a type (`event_id::Lifecycle`, `network_event_id::Lifecycle`,
/// `event_id::Reboot`, …, one per table row): what a typed subscription
/// (`conn.subscribe::<T>()`, `dom.subscribe::<T>()` in the client) registers for and yields.
pub trait TypedEvent {
    /// The family the event belongs to.
    type Family: EventKind;
    /// The event's body, what a typed subscription yields.
    type Body: Clone + std::fmt::Debug + Send + 'static;
    /// The event id to register.
    const ID: i32;
    /// The body, if `event` is this event.
    fn take(event: Self::Family) -> Option<Self::Body>;
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
        /// Why the connection closed.
        pub reason: ConnectCloseReason,
    }
}

xdr_struct! {
    /// `remote_domain_event_graphics_address`.
    pub struct GraphicsAddress {
        /// IPv4, IPv6 or a UNIX socket.
        pub family: GraphicsAddressType,
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
        pub dom: NonnullDomain,
    }
}

/// How a body decodes from a legacy message (no callback id, see [`Event::DomainLegacy`]):
/// the body's own layout, except [`PmReason`], whose legacy messages carry only the domain.
pub trait LegacyBody: Sized {
    /// Decode the legacy message's payload.
    fn decode_legacy(payload: Bytes) -> Result<Self, DecodeError>;
}

impl LegacyBody for PmReason {
    /// The legacy power-management messages are the domain alone: `reason` reads 0 (the
    /// only value libvirt has ever sent).
    fn decode_legacy(payload: Bytes) -> Result<Self, DecodeError> {
        Ok(Self {
            reason: 0,
            dom: xdr::from_bytes(payload)?,
        })
    }
}

/// Body of [`DomainEvent::Lifecycle`]: `DomainEventCallbackLifecycle` (procedure 318) after
/// the callback id, and the legacy `DomainEventLifecycle` (107). The detail is typed by the
/// event (`LifecycleDetail::Stopped(StoppedDetail::DESTROYED)`); prints as `virsh event`
/// does (`Stopped Destroyed`). On the wire the domain and two `int`s; declared here, not in
/// the table, because the detail decodes in the context of the event.
#[derive(Debug, Clone, PartialEq)]
pub struct Lifecycle {
    /// The domain.
    pub dom: NonnullDomain,
    /// The event.
    pub event: DomainEventType,
    /// The detail, typed by [`event`](Self::event) ([`LifecycleDetail::of`]); encodes as its
    /// number whatever its variant.
    pub detail: LifecycleDetail,
}

impl Encode for Lifecycle {
    fn encode(&self, enc: &mut Encoder) {
        self.dom.encode(enc);
        self.event.encode(enc);
        self.detail.code().encode(enc);
    }
}

impl Decode for Lifecycle {
    const MIN_SIZE: usize = NonnullDomain::MIN_SIZE + 8;
    fn decode(dec: &mut Decoder) -> Result<Self, DecodeError> {
        let dom = NonnullDomain::decode(dec)?;
        let event = DomainEventType::decode(dec)?;
        let detail = LifecycleDetail::of(event, i32::decode(dec)?);
        Ok(Self { dom, event, detail })
    }
}

impl LegacyBody for Lifecycle {
    fn decode_legacy(payload: Bytes) -> Result<Self, DecodeError> {
        xdr::from_bytes(payload)
    }
}

/// `Stopped Destroyed`: the event and its detail as `virsh event` prints them (the domain
/// is [`dom`](Lifecycle::dom)).
impl std::fmt::Display for Lifecycle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}", self.event, self.detail)
    }
}

xdr_struct! {
    /// `qemu_domain_monitor_event_msg` after the callback id: one QMP event of a domain,
    /// for [`Event::QemuMonitor`].
    pub struct QemuMonitorEvent {
        /// The domain.
        pub dom: NonnullDomain,
        /// The QMP event name (`STOP`, `BLOCK_JOB_COMPLETED`, …).
        pub event: LvString,
        /// When qemu sent it: seconds since the epoch.
        pub seconds: i64,
        /// Microseconds within that second.
        pub micros: u32,
        /// The event's `data` as JSON, if it has any.
        pub details: Option<LvString>,
    }
}

/// `QEMU_PROC_DOMAIN_MONITOR_EVENT`: the QEMU program's only message.
pub const QEMU_MONITOR_EVENT: i32 = 6;

/// Procedure numbers and names of the QEMU program's messages [`decode_message`] understands.
pub const QEMU_EVENT_PROCS: &[(i32, &str)] = &[(QEMU_MONITOR_EVENT, "QemuDomainMonitorEvent")];

/// Decode a `MESSAGE` of any program: the remote program's through [`decode`], the QEMU
/// program's monitor event; `Ok(None)` for anything else (the LXC program has no messages).
pub fn decode_message(
    program: u32,
    procedure: i32,
    payload: Bytes,
) -> Result<Option<Event>, DecodeError> {
    match (program, procedure) {
        (crate::proto::REMOTE_PROGRAM, _) => decode(procedure, payload),
        (crate::proto::QEMU_PROGRAM, QEMU_MONITOR_EVENT) => {
            let m: CallbackMsg<QemuMonitorEvent> = xdr::from_bytes(payload)?;
            Ok(Some(Event::QemuMonitor {
                callback_id: m.callback_id,
                event: m.body,
            }))
        }
        _ => Ok(None),
    }
}

event_table! {
    /// A decoded domain event (`virDomainEventID`).
    Domain => DomainEvent {
        object: "The domain." dom: NonnullDomain,
        ids: event_id {
            /// Number of event ids libvirt 9.0 defines (0..=26).
            pub const COUNT_9_0: i32 = 27;
            /// The first id without a legacy message: events of later ids reach only
            /// callback registrations.
            pub const FIRST_CALLBACK_ONLY: i32 = BLOCK_JOB_2;
        },
        register: ConnectDomainEventCallbackRegisterAny(
            ConnectDomainEventCallbackRegisterAnyArgs { event_id, dom }
        ),
        deregister: ConnectDomainEventCallbackDeregisterAny,
        lifecycle: Lifecycle = LIFECYCLE (DomainEventType),
    } {
        /// Lifecycle changes (defined, started, stopped, …).
        LIFECYCLE = 0, DOMAIN_LIFECYCLE = 318 "DomainEventCallbackLifecycle",
            legacy DOMAIN_LIFECYCLE_LEGACY = 107 "DomainEventLifecycle"
            => Lifecycle(Lifecycle);
        /// The guest rebooted.
        REBOOT = 1, DOMAIN_REBOOT = 319 "DomainEventCallbackReboot",
            legacy DOMAIN_REBOOT_LEGACY = 169 "DomainEventReboot" => Reboot(DomainOnly {});
        /// The guest changed its RTC.
        RTC_CHANGE = 2, DOMAIN_RTC_CHANGE = 320 "DomainEventCallbackRtcChange",
            legacy DOMAIN_RTC_CHANGE_LEGACY = 170 "DomainEventRtcChange"
            => RtcChange(RtcChange {
                /// New RTC offset from UTC, in seconds.
                offset: i64,
            });
        /// The watchdog fired.
        WATCHDOG = 3, DOMAIN_WATCHDOG = 321 "DomainEventCallbackWatchdog",
            legacy DOMAIN_WATCHDOG_LEGACY = 171 "DomainEventWatchdog"
            => Watchdog(Watchdog {
                /// What the watchdog did.
                action: WatchdogAction,
            });
        /// A disk I/O error.
        IO_ERROR = 4, DOMAIN_IO_ERROR = 322 "DomainEventCallbackIoError",
            legacy DOMAIN_IO_ERROR_LEGACY = 172 "DomainEventIoError" => IoError(IoError {
            /// Disk source path.
            src_path: LvString,
            /// Device alias.
            dev_alias: LvString,
            /// What was done about the error.
            action: IoErrorAction,
        });
        /// A graphics client connected, authenticated or disconnected.
        GRAPHICS = 5, DOMAIN_GRAPHICS = 323 "DomainEventCallbackGraphics",
            legacy DOMAIN_GRAPHICS_LEGACY = 173 "DomainEventGraphics"
            => Graphics(Graphics {
                /// Connect, initialize or disconnect.
                phase: GraphicsPhase,
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
        IO_ERROR_REASON = 6, DOMAIN_IO_ERROR_REASON = 324 "DomainEventCallbackIoErrorReason",
            legacy DOMAIN_IO_ERROR_REASON_LEGACY = 195 "DomainEventIoErrorReason"
            => IoErrorReason(IoErrorReason {
                /// Disk source path.
                src_path: LvString,
                /// Device alias.
                dev_alias: LvString,
                /// What was done about the error.
                action: IoErrorAction,
                /// Reason (`enospc`, …).
                reason: LvString,
            });
        /// The daemon lost or had trouble with the monitor connection (the layout of
        /// `Reboot`).
        CONTROL_ERROR = 7, DOMAIN_CONTROL_ERROR = 325 "DomainEventCallbackControlError",
            legacy DOMAIN_CONTROL_ERROR_LEGACY = 224 "DomainEventControlError"
            => ControlError(DomainOnly);
        /// A block job ended or became ready (identified by path).
        BLOCK_JOB = 8, DOMAIN_BLOCK_JOB = 326 "DomainEventCallbackBlockJob",
            legacy DOMAIN_BLOCK_JOB_LEGACY = 241 "DomainEventBlockJob"
            => BlockJob(BlockJob {
                /// Disk path.
                path: LvString,
                /// The job's type.
                kind: BlockJobType,
                /// How it ended (or that it is ready).
                status: BlockJobStatus,
            });
        /// Disk media changed.
        DISK_CHANGE = 9, DOMAIN_DISK_CHANGE = 327 "DomainEventCallbackDiskChange",
            legacy DOMAIN_DISK_CHANGE_LEGACY = 248 "DomainEventDiskChange"
            => DiskChange(DiskChange {
                /// Previous source.
                old_src_path: Option<LvString>,
                /// New source.
                new_src_path: Option<LvString>,
                /// Device alias.
                dev_alias: LvString,
                /// Why the media changed.
                reason: DiskChangeReason,
            });
        /// A removable media tray opened or closed.
        TRAY_CHANGE = 10, DOMAIN_TRAY_CHANGE = 328 "DomainEventCallbackTrayChange",
            legacy DOMAIN_TRAY_CHANGE_LEGACY = 268 "DomainEventTrayChange"
            => TrayChange(TrayChange {
                /// Device alias.
                dev_alias: LvString,
                /// Opened or closed.
                reason: TrayChangeReason,
            });
        /// The guest woke from power-management suspend.
        PMWAKEUP = 11, DOMAIN_PMWAKEUP = 329 "DomainEventCallbackPmWakeup",
            legacy DOMAIN_PMWAKEUP_LEGACY = 269 "DomainEventPmWakeup"
            => PmWakeup(PmReason);
        /// The guest suspended to RAM.
        PMSUSPEND = 12, DOMAIN_PMSUSPEND = 330 "DomainEventCallbackPmSuspend",
            legacy DOMAIN_PMSUSPEND_LEGACY = 270 "DomainEventPmSuspend"
            => PmSuspend(PmReason);
        /// The balloon changed size.
        BALLOON_CHANGE = 13, DOMAIN_BALLOON_CHANGE = 331 "DomainEventCallbackBalloonChange",
            legacy DOMAIN_BALLOON_CHANGE_LEGACY = 276 "DomainEventBalloonChange"
            => BalloonChange(BalloonChange {
                /// New balloon size in KiB.
                actual: u64,
            });
        /// The guest suspended to disk.
        PMSUSPEND_DISK = 14, DOMAIN_PMSUSPEND_DISK = 332 "DomainEventCallbackPmSuspendDisk",
            legacy DOMAIN_PMSUSPEND_DISK_LEGACY = 292 "DomainEventPmSuspendDisk"
            => PmSuspendDisk(PmReason);
        /// A device was removed (detach finished).
        DEVICE_REMOVED = 15, DOMAIN_DEVICE_REMOVED = 333 "DomainEventCallbackDeviceRemoved",
            legacy DOMAIN_DEVICE_REMOVED_LEGACY = 311 "DomainEventDeviceRemoved"
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
                /// The job's type.
                kind: BlockJobType,
                /// How it ended (or that it is ready).
                status: BlockJobStatus,
            });
        /// Tunable parameters changed.
        TUNABLE = 17, DOMAIN_TUNABLE = 346 "DomainEventCallbackTunable" => Tunable(Tunable {
            /// Changed parameters (`cputune.*`, `blkdeviotune.*`, …).
            params: Vec<TypedParam> [limits::DOMAIN_EVENT_TUNABLE_MAX],
        });
        /// The guest agent connected or disconnected.
        AGENT_LIFECYCLE = 18, DOMAIN_AGENT_LIFECYCLE = 348 "DomainEventCallbackAgentLifecycle"
            => AgentLifecycle(AgentLifecycle {
                /// Connected or disconnected.
                state: AgentLifecycleState,
                /// Why.
                reason: AgentLifecycleReason,
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
                /// Which metadata changed.
                kind: MetadataType,
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
                /// Who received the failure.
                recipient: MemoryFailureRecipient,
                /// What was done.
                action: MemoryFailureAction,
                /// `virDomainMemoryFailureFlags`.
                flags: MemoryFailureFlags,
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
        /// A network interface's MAC address changed (libvirt 11.2+; has a callback id
        /// despite its name).
        NIC_MAC_CHANGE = 27, DOMAIN_NIC_MAC_CHANGE = 453 "DomainEventNicMacChange"
            => NicMacChange(NicMacChange {
                /// Interface alias.
                alias: LvString,
                /// The previous MAC address.
                old_mac: LvString,
                /// The new MAC address.
                new_mac: LvString,
            });
        /// An asynchronous vCPU unplug finished (libvirt 12.4+; has a callback id despite
        /// its name).
        VCPU_REMOVED = 28, DOMAIN_VCPU_REMOVED = 454 "DomainEventVcpuRemoved"
            => VcpuRemoved(VcpuRemoved {
                /// The vCPU id of the domain XML.
                vcpuid: u32,
            });
        /// A virtio-serial channel connected or disconnected (libvirt 12.4+; every channel,
        /// the guest agent's included).
        CHANNEL_LIFECYCLE = 29, DOMAIN_CHANNEL_LIFECYCLE = 455
            "DomainEventCallbackChannelLifecycle"
            => ChannelLifecycle(ChannelLifecycle {
                /// The channel's target name (`org.qemu.guest_agent.0`, …).
                channel_name: LvString,
                /// Connected or disconnected (`virConnectDomainEventChannelLifecycleState`,
                /// numbered as the agent's).
                state: AgentLifecycleState,
                /// Why (`virConnectDomainEventChannelLifecycleReason`, numbered as the agent's).
                reason: AgentLifecycleReason,
            });
    }

    /// A decoded network event (`virNetworkEventID`).
    Network => NetworkEvent {
        object: "The network." net: NonnullNetwork,
        ids: network_event_id,
        register: ConnectNetworkEventRegisterAny(
            ConnectNetworkEventRegisterAnyArgs { event_id, net }
        ),
        deregister: ConnectNetworkEventDeregisterAny,
        lifecycle: Lifecycle = LIFECYCLE (NetworkEventType),
    } {
        /// Lifecycle changes.
        LIFECYCLE = 0, NETWORK_LIFECYCLE = 315 "NetworkEventLifecycle"
            => Lifecycle(NetworkLifecycle {
                /// The event.
                event: NetworkEventType,
                /// Detail (always 0 so far).
                detail: i32,
            });
        /// Metadata changed (libvirt 9.7+).
        METADATA_CHANGE = 1, NETWORK_METADATA_CHANGE = 446 "NetworkEventCallbackMetadataChange"
            => MetadataChange(NetworkMetadataChange {
                /// Which metadata changed (`virNetworkMetadataType`, numbered as the domain's).
                kind: MetadataType,
                /// Namespace URI (ELEMENT only).
                nsuri: Option<LvString>,
            });
    }

    /// A decoded storage pool event (`virStoragePoolEventID`).
    StoragePool => StoragePoolEvent {
        object: "The pool." pool: NonnullStoragePool,
        ids: pool_event_id,
        register: ConnectStoragePoolEventRegisterAny(
            ConnectStoragePoolEventRegisterAnyArgs { event_id, pool }
        ),
        deregister: ConnectStoragePoolEventDeregisterAny,
        lifecycle: Lifecycle = LIFECYCLE (StoragePoolEventType),
    } {
        /// Lifecycle changes.
        LIFECYCLE = 0, STORAGE_POOL_LIFECYCLE = 370 "StoragePoolEventLifecycle"
            => Lifecycle(StoragePoolLifecycle {
                /// The event.
                event: StoragePoolEventType,
                /// Detail.
                detail: i32,
            });
        /// The pool was refreshed.
        REFRESH = 1, STORAGE_POOL_REFRESH = 373 "StoragePoolEventRefresh"
            => Refresh(StoragePoolRefreshed {});
    }

    /// A decoded node device event (`virNodeDeviceEventID`).
    NodeDevice => NodeDeviceEvent {
        object: "The device." dev: NonnullNodeDevice,
        ids: node_device_event_id,
        register: ConnectNodeDeviceEventRegisterAny(
            ConnectNodeDeviceEventRegisterAnyArgs { event_id, dev }
        ),
        deregister: ConnectNodeDeviceEventDeregisterAny,
        lifecycle: Lifecycle = LIFECYCLE (NodeDeviceEventType),
    } {
        /// Lifecycle changes.
        LIFECYCLE = 0, NODE_DEVICE_LIFECYCLE = 376 "NodeDeviceEventLifecycle"
            => Lifecycle(NodeDeviceLifecycle {
                /// The event.
                event: NodeDeviceEventType,
                /// Detail.
                detail: i32,
            });
        /// The device was updated.
        UPDATE = 1, NODE_DEVICE_UPDATE = 377 "NodeDeviceEventUpdate"
            => Update(NodeDeviceUpdate {});
    }

    /// A decoded secret event (`virSecretEventID`).
    Secret => SecretEvent {
        object: "The secret." secret: NonnullSecret,
        ids: secret_event_id,
        register: ConnectSecretEventRegisterAny(
            ConnectSecretEventRegisterAnyArgs { event_id, secret }
        ),
        deregister: ConnectSecretEventDeregisterAny,
        lifecycle: Lifecycle = LIFECYCLE (SecretEventType),
    } {
        /// Lifecycle changes.
        LIFECYCLE = 0, SECRET_LIFECYCLE = 382 "SecretEventLifecycle"
            => Lifecycle(SecretLifecycle {
                /// The event.
                event: SecretEventType,
                /// Detail.
                detail: i32,
            });
        /// The value changed.
        VALUE_CHANGED = 1, SECRET_VALUE_CHANGED = 383 "SecretEventValueChanged"
            => ValueChanged(SecretValueChanged {});
    }
}

impl Lifecycle {
    /// The event and its detail without the domain.
    pub fn named(&self) -> DomainLifecycle {
        DomainLifecycle {
            event: self.event,
            detail: self.detail,
        }
    }
}

impl DomainEvent {
    /// The domain the event is about.
    pub fn domain(&self) -> &NonnullDomain {
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
