//! Names for the numbers users print: a domain's state and the reason for it, lifecycle
//! events and their details, the other events' enum-like fields, pool and volume states,
//! job types.
//!
//! Open sets like [`ErrorCode`](super::ErrorCode): a newtype over the wire's integer, named
//! constants, and a `Display` that prints virsh's words for known values and the number for
//! the others, so a newer daemon's value stays representable and printable. Each type
//! encodes exactly as its integer, so it sits in the reply and event structs in place of
//! the bare number. The numbering is libvirt's (`libvirt-*.h`); the words are those virsh
//! prints (`domstate --reason`, `event`, `pool-info`, `vol-info`, `domjobinfo`).

use std::fmt;

use super::procs::domain::{DomainGetInfoRet, DomainGetStateRet};

/// Declare an open set of named values: the newtype, one constant per row with an optional
/// virsh word, `name()`/`text()`, `Debug` as `NAME(n)`, `Display` as the word (else the
/// `Debug` form; an unknown value as `Type(n)`), conversions from and to the integer and the
/// integer's XDR encoding.
macro_rules! named {
    (@text) => { None };
    (@text $t:literal) => { Some($t) };
    (
        $(#[$m:meta])*
        pub struct $T:ident($int:ty) {
            $( $(#[$vm:meta])* $name:ident = $v:literal $($text:literal)?, )*
        }
    ) => {
        $(#[$m])*
        #[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
        pub struct $T(pub $int);

        impl $T {
            $( $(#[$vm])* pub const $name: Self = Self($v); )*

            /// libvirt's name for this value, if it is one we know.
            pub fn name(self) -> Option<&'static str> {
                match self.0 { $( $v => Some(stringify!($name)), )* _ => None }
            }

            /// virsh's word for this value, if it is one we know and virsh has one.
            #[allow(clippy::match_same_arms)]
            pub fn text(self) -> Option<&'static str> {
                match self.0 { $( $v => $crate::proto::names::named!(@text $($text)?), )* _ => None }
            }
        }

        impl ::std::fmt::Debug for $T {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                match self.name() {
                    Some(n) => write!(f, "{n}({})", self.0),
                    None => write!(f, "{}({})", stringify!($T), self.0),
                }
            }
        }

        impl ::std::fmt::Display for $T {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                match self.text() {
                    Some(t) => f.write_str(t),
                    None => ::std::fmt::Debug::fmt(self, f),
                }
            }
        }

        impl ::core::convert::From<$int> for $T {
            fn from(v: $int) -> Self {
                Self(v)
            }
        }

        impl ::core::convert::From<$T> for $int {
            fn from(v: $T) -> Self {
                v.0
            }
        }

        impl $crate::wire::xdr::Encode for $T {
            fn encode(&self, enc: &mut $crate::wire::xdr::Encoder) {
                $crate::wire::xdr::Encode::encode(&self.0, enc);
            }
        }

        impl $crate::wire::xdr::Decode for $T {
            const MIN_SIZE: usize = <$int as $crate::wire::xdr::Decode>::MIN_SIZE;
            fn decode(
                dec: &mut $crate::wire::xdr::Decoder,
            ) -> ::core::result::Result<Self, $crate::wire::xdr::DecodeError> {
                <$int as $crate::wire::xdr::Decode>::decode(dec).map(Self)
            }
        }

        impl $crate::proto::types::TypedInt for $T {
            type Int = $int;
        }
    };
}
pub(crate) use named;

/// `virDomainState`: what [`DomainGetState`](super::procs::domain::DomainGetState) and
/// [`DomainGetInfo`](super::procs::domain::DomainGetInfo) report.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct DomainState(pub i32);

/// `virDomainEventType`: the event of a domain lifecycle event
/// ([`Lifecycle::event`](super::events::Lifecycle::event)); its details are
/// [`detail_names`](Self::detail_names).
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct DomainEventType(pub i32);

/// One row per state: constant, number, virsh's word, the variant of the sub-code enum and
/// the per-state type of its sub-codes (`virDomain*Reason`, `virDomainEvent*DetailType`), with
/// their numbers and virsh's words. Emits the constants, `name`/`text`, the sub-code tables,
/// one [`named!`] type per row and the enum over them (`Other` for a row we do not know).
macro_rules! states {
    ($ty:ident, $what:literal, $names:ident, $texts:ident, $Enum:ident, $sub:literal;
     $( $(#[$m:meta])* $name:ident = $v:literal, $text:literal, $Var:ident($RTy:ident)
        [ $( $rname:ident = $rv:literal $rtext:literal ),* $(,)? ]; )*) => {
        impl $ty {
            $( $(#[$m])* pub const $name: Self = Self($v); )*

            #[doc = concat!("libvirt's name for this ", $what, ", if it is one we know.")]
            pub fn name(self) -> Option<&'static str> {
                match self.0 { $( $v => Some(stringify!($name)), )* _ => None }
            }

            #[doc = concat!("virsh's word for this ", $what, ", if it is one we know.")]
            pub fn text(self) -> Option<&'static str> {
                match self.0 { $( $v => Some($text), )* _ => None }
            }

            #[doc = concat!("libvirt's names of this ", $what, "'s ", $sub, "s, indexed by \
                number; empty for an unknown ", $what, ".")]
            pub fn $names(self) -> &'static [&'static str] {
                match self.0 { $( $v => &[$( stringify!($rname) ),*], )* _ => &[] }
            }

            #[doc = concat!("virsh's words for the ", $sub, "s, indexed like [`", stringify!($names), "`](Self::", stringify!($names), ").")]
            pub fn $texts(self) -> &'static [&'static str] {
                match self.0 { $( $v => &[$( $rtext ),*], )* _ => &[] }
            }
        }

        $(
            named! {
                #[doc = concat!("The ", $sub, " of [`", stringify!($ty), "::", stringify!($name),
                    "`] (", $text, "), as [`", stringify!($Enum), "::", stringify!($Var),
                    "`] carries it.")]
                pub struct $RTy(i32) {
                    $(
                        #[doc = concat!("`", stringify!($rname), "`: virsh says \"", $rtext, "\".")]
                        $rname = $rv $rtext,
                    )*
                }
            }

            impl From<$RTy> for $Enum {
                fn from(r: $RTy) -> Self {
                    Self::$Var(r)
                }
            }
        )*

        #[doc = concat!("The ", $sub, " that comes with a [`", stringify!($ty), "`], typed by it: \
            one variant per ", $what, " holding that ", $what, "'s ", $sub, " type, so one match \
            names both. Decoded from \
            the wire's `int` in the context of the ", $what, " before it \
            ([`of`](Self::of)); encodes as that `int` ([`code`](Self::code)). Prints virsh's \
            words, `", $sub, " N` for one we do not know.")]
        #[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
        #[non_exhaustive]
        pub enum $Enum {
            $(
                #[doc = concat!("Of [`", stringify!($ty), "::", stringify!($name), "`].")]
                $Var($RTy),
            )*
            #[doc = concat!("Of a ", $what, " we do not know: the number.")]
            Other(i32),
        }

        impl $Enum {
            #[doc = concat!("The ", $sub, " numbered `code` within `of`.")]
            pub fn of(of: $ty, code: i32) -> Self {
                match of.0 {
                    $( $v => Self::$Var($RTy(code)), )*
                    _ => Self::Other(code),
                }
            }

            /// The number on the wire.
            pub fn code(self) -> i32 {
                match self {
                    $( Self::$Var(r) => r.0, )*
                    Self::Other(n) => n,
                }
            }

            #[doc = concat!("libvirt's name within its ", $what, " (`DESTROYED`), if we know it.")]
            pub fn name(self) -> Option<&'static str> {
                match self {
                    $( Self::$Var(r) => r.name(), )*
                    Self::Other(_) => None,
                }
            }

            /// virsh's words for it (`destroyed`), if we know it.
            pub fn text(self) -> Option<&'static str> {
                match self {
                    $( Self::$Var(r) => r.text(), )*
                    Self::Other(_) => None,
                }
            }
        }

        #[doc = concat!("virsh's words; `", $sub, " N` for one we do not know.")]
        impl fmt::Display for $Enum {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                match self.text() {
                    Some(t) => f.write_str(t),
                    None => write!(f, concat!($sub, " {}"), self.code()),
                }
            }
        }

        impl From<$Enum> for i32 {
            fn from(r: $Enum) -> Self {
                r.code()
            }
        }
    };
}

// `virDomain*Reason` per state.
states! {
    DomainState, "state", reason_names, reason_texts, StateReason, "reason";
    /// No state.
    NOSTATE = 0, "no state", NoState(NoStateReason) [UNKNOWN = 0 "unknown"];
    /// Running.
    RUNNING = 1, "running", Running(RunningReason) [
        UNKNOWN = 0 "unknown", BOOTED = 1 "booted", MIGRATED = 2 "migrated",
        RESTORED = 3 "restored", FROM_SNAPSHOT = 4 "from snapshot", UNPAUSED = 5 "unpaused",
        MIGRATION_CANCELED = 6 "migration canceled", SAVE_CANCELED = 7 "save canceled",
        WAKEUP = 8 "event wakeup", CRASHED = 9 "crashed", POSTCOPY = 10 "post-copy",
        POSTCOPY_FAILED = 11 "post-copy failed",
    ];
    /// Blocked on a resource (virsh says "idle").
    BLOCKED = 2, "idle", Blocked(BlockedReason) [UNKNOWN = 0 "unknown"];
    /// Paused.
    PAUSED = 3, "paused", Paused(PausedReason) [
        UNKNOWN = 0 "unknown", USER = 1 "user", MIGRATION = 2 "migrating", SAVE = 3 "saving",
        DUMP = 4 "dumping", IOERROR = 5 "I/O error", WATCHDOG = 6 "watchdog",
        FROM_SNAPSHOT = 7 "from snapshot", SHUTTING_DOWN = 8 "shutting down",
        SNAPSHOT = 9 "creating snapshot", CRASHED = 10 "crashed", STARTING_UP = 11 "starting up",
        POSTCOPY = 12 "post-copy", POSTCOPY_FAILED = 13 "post-copy failed",
        API_ERROR = 14 "api error",
    ];
    /// Being shut down.
    SHUTDOWN = 4, "in shutdown", Shutdown(ShutdownReason) [
        UNKNOWN = 0 "unknown", USER = 1 "user",
    ];
    /// Shut off.
    SHUTOFF = 5, "shut off", Shutoff(ShutoffReason) [
        UNKNOWN = 0 "unknown", SHUTDOWN = 1 "shutdown", DESTROYED = 2 "destroyed",
        CRASHED = 3 "crashed", MIGRATED = 4 "migrated", SAVED = 5 "saved", FAILED = 6 "failed",
        FROM_SNAPSHOT = 7 "from snapshot", DAEMON = 8 "daemon",
    ];
    /// Crashed.
    CRASHED = 6, "crashed", Crashed(CrashedReason) [UNKNOWN = 0 "unknown", PANICKED = 1 "panicked"];
    /// Suspended by guest power management.
    PMSUSPENDED = 7, "pmsuspended", PmSuspended(PmSuspendedReason) [UNKNOWN = 0 "unknown"];
}

impl DomainState {
    /// Whether the domain runs (or could run at once): running, idle or paused.
    pub fn is_active(self) -> bool {
        matches!(self, Self::RUNNING | Self::BLOCKED | Self::PAUSED)
    }

    /// This state with a reason number, as [`DomainGetState`](super::procs::domain::DomainGetState)
    /// returns it.
    pub fn with_reason(self, reason: i32) -> DomainGetStateRet {
        DomainGetStateRet {
            state: self,
            reason: StateReason::of(self, reason),
        }
    }
}

impl fmt::Debug for DomainState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.name() {
            Some(n) => write!(f, "{n}({})", self.0),
            None => write!(f, "DomainState({})", self.0),
        }
    }
}

/// virsh's word (`shut off`); `state 9` for a state we do not know.
impl fmt::Display for DomainState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.text() {
            Some(t) => f.write_str(t),
            None => write!(f, "state {}", self.0),
        }
    }
}

impl From<i32> for DomainState {
    fn from(v: i32) -> Self {
        Self(v)
    }
}

/// A state and its reason: the reply of [`DomainGetState`](super::procs::domain::DomainGetState)
/// under the name this module used before the reason was typed.
pub type DomainStateReason = DomainGetStateRet;

impl DomainGetStateRet {
    /// libvirt's name of the reason within its state (`DESTROYED`), if we know it.
    pub fn reason_name(&self) -> Option<&'static str> {
        self.reason.name()
    }

    /// virsh's words for the reason (`destroyed`), if we know it.
    pub fn reason_text(&self) -> Option<&'static str> {
        self.reason.text()
    }

    /// Itself: the reply is typed and prints as `virsh domstate --reason` does.
    #[deprecated(note = "the reply is typed now: use it (or its `reason` field) directly")]
    #[must_use]
    pub fn named(&self) -> DomainStateReason {
        *self
    }
}

/// As `virsh domstate --reason`: `shut off (destroyed)`; an unknown reason prints its
/// number (`paused (reason 42)`).
impl fmt::Display for DomainGetStateRet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.state, self.reason)
    }
}

impl crate::wire::xdr::Encode for DomainState {
    fn encode(&self, enc: &mut crate::wire::xdr::Encoder) {
        self.0.encode(enc);
    }
}

/// Four bytes, as libvirt's `int` (and its `unsigned char` in `DomainGetInfo`, which never
/// exceeds 7: a larger one reads as what its bits say as an `int`).
impl crate::wire::xdr::Decode for DomainState {
    const MIN_SIZE: usize = 4;
    fn decode(dec: &mut crate::wire::xdr::Decoder) -> Result<Self, crate::wire::xdr::DecodeError> {
        i32::decode(dec).map(Self)
    }
}

impl super::types::TypedInt for DomainState {
    type Int = i32;
}

// `virDomainEvent*DetailType` per event type (virsh's words).
states! {
    DomainEventType, "lifecycle event", detail_names, detail_texts, LifecycleDetail, "detail";
    /// Defined or updated.
    DEFINED = 0, "Defined", Defined(DefinedDetail) [
        ADDED = 0 "Added", UPDATED = 1 "Updated", RENAMED = 2 "Renamed",
        FROM_SNAPSHOT = 3 "Snapshot",
    ];
    /// Undefined.
    UNDEFINED = 1, "Undefined", Undefined(UndefinedDetail) [
        REMOVED = 0 "Removed", RENAMED = 1 "Renamed",
    ];
    /// Started.
    STARTED = 2, "Started", Started(StartedDetail) [
        BOOTED = 0 "Booted", MIGRATED = 1 "Migrated", RESTORED = 2 "Restored",
        FROM_SNAPSHOT = 3 "Snapshot", WAKEUP = 4 "Event wakeup",
    ];
    /// Suspended.
    SUSPENDED = 3, "Suspended", Suspended(SuspendedDetail) [
        PAUSED = 0 "Paused", MIGRATED = 1 "Migrated", IOERROR = 2 "I/O Error",
        WATCHDOG = 3 "Watchdog", RESTORED = 4 "Restored", FROM_SNAPSHOT = 5 "Snapshot",
        API_ERROR = 6 "API error", POSTCOPY = 7 "Post-copy", POSTCOPY_FAILED = 8 "Post-copy Error",
    ];
    /// Resumed.
    RESUMED = 4, "Resumed", Resumed(ResumedDetail) [
        UNPAUSED = 0 "Unpaused", MIGRATED = 1 "Migrated", FROM_SNAPSHOT = 2 "Snapshot",
        POSTCOPY = 3 "Post-copy", POSTCOPY_FAILED = 4 "Post-copy Error",
    ];
    /// Stopped.
    STOPPED = 5, "Stopped", Stopped(StoppedDetail) [
        SHUTDOWN = 0 "Shutdown", DESTROYED = 1 "Destroyed", CRASHED = 2 "Crashed",
        MIGRATED = 3 "Migrated", SAVED = 4 "Saved", FAILED = 5 "Failed",
        FROM_SNAPSHOT = 6 "Snapshot",
    ];
    /// Shut down (guest-initiated, before stop).
    SHUTDOWN = 6, "Shutdown", Shutdown(ShutdownDetail) [
        FINISHED = 0 "Finished", GUEST = 1 "Finished after guest request",
        HOST = 2 "Finished after host request",
    ];
    /// PM-suspended.
    PMSUSPENDED = 7, "PMSuspended", PmSuspended(PmSuspendedDetail) [
        MEMORY = 0 "Memory", DISK = 1 "Disk",
    ];
    /// Crashed.
    CRASHED = 8, "Crashed", Crashed(CrashedDetail) [
        PANICKED = 0 "Panicked", CRASHLOADED = 1 "Crashloaded",
    ];
}

impl DomainEventType {
    /// This event with a detail number.
    pub fn with_detail(self, detail: i32) -> DomainLifecycle {
        DomainLifecycle {
            event: self,
            detail: LifecycleDetail::of(self, detail),
        }
    }
}

impl fmt::Debug for DomainEventType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.name() {
            Some(n) => write!(f, "{n}({})", self.0),
            None => write!(f, "DomainEventType({})", self.0),
        }
    }
}

/// virsh's word (`Stopped`); `event 12` for one we do not know.
impl fmt::Display for DomainEventType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.text() {
            Some(t) => f.write_str(t),
            None => write!(f, "event {}", self.0),
        }
    }
}

impl From<i32> for DomainEventType {
    fn from(v: i32) -> Self {
        Self(v)
    }
}

impl From<DomainEventType> for i32 {
    fn from(v: DomainEventType) -> Self {
        v.0
    }
}

impl crate::wire::xdr::Encode for DomainEventType {
    fn encode(&self, enc: &mut crate::wire::xdr::Encoder) {
        self.0.encode(enc);
    }
}

impl crate::wire::xdr::Decode for DomainEventType {
    const MIN_SIZE: usize = 4;
    fn decode(dec: &mut crate::wire::xdr::Decoder) -> Result<Self, crate::wire::xdr::DecodeError> {
        i32::decode(dec).map(Self)
    }
}

impl super::types::TypedInt for DomainEventType {
    type Int = i32;
}

/// A lifecycle event and its detail without the domain
/// ([`Lifecycle`](super::events::Lifecycle) carries all three).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct DomainLifecycle {
    /// The event.
    pub event: DomainEventType,
    /// The event's detail, typed by the event.
    pub detail: LifecycleDetail,
}

impl DomainLifecycle {
    /// libvirt's name of the detail within its event (`DESTROYED`), if we know it.
    pub fn detail_name(&self) -> Option<&'static str> {
        self.detail.name()
    }

    /// virsh's words for the detail (`Destroyed`), if we know it.
    pub fn detail_text(&self) -> Option<&'static str> {
        self.detail.text()
    }
}

/// As `virsh event --event lifecycle` prints it: `Stopped Destroyed`; an unknown detail
/// prints its number (`Stopped detail 42`).
impl fmt::Display for DomainLifecycle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.event, self.detail)
    }
}

named! {
    /// `virNetworkEventLifecycleType` in
    /// [`NetworkLifecycle::event`](super::events::NetworkLifecycle::event).
    pub struct NetworkEventType(i32) {
        /// Defined.
        DEFINED = 0 "Defined",
        /// Undefined.
        UNDEFINED = 1 "Undefined",
        /// Started.
        STARTED = 2 "Started",
        /// Stopped.
        STOPPED = 3 "Stopped",
    }
}

named! {
    /// `virStoragePoolEventLifecycleType` in
    /// [`StoragePoolLifecycle::event`](super::events::StoragePoolLifecycle::event).
    pub struct StoragePoolEventType(i32) {
        /// Defined.
        DEFINED = 0 "Defined",
        /// Undefined.
        UNDEFINED = 1 "Undefined",
        /// Started.
        STARTED = 2 "Started",
        /// Stopped.
        STOPPED = 3 "Stopped",
        /// Built (`pool-build`).
        CREATED = 4 "Created",
        /// Deleted (`pool-delete`).
        DELETED = 5 "Deleted",
    }
}

named! {
    /// `virNodeDeviceEventLifecycleType` in
    /// [`NodeDeviceLifecycle::event`](super::events::NodeDeviceLifecycle::event).
    pub struct NodeDeviceEventType(i32) {
        /// Created.
        CREATED = 0 "Created",
        /// Deleted.
        DELETED = 1 "Deleted",
        /// Defined (persistent mediated devices).
        DEFINED = 2 "Defined",
        /// Undefined.
        UNDEFINED = 3 "Undefined",
    }
}

named! {
    /// `virSecretEventLifecycleType` in
    /// [`SecretLifecycle::event`](super::events::SecretLifecycle::event).
    pub struct SecretEventType(i32) {
        /// Defined.
        DEFINED = 0 "Defined",
        /// Undefined.
        UNDEFINED = 1 "Undefined",
    }
}

named! {
    /// `virDomainEventWatchdogAction` in [`Watchdog`](super::events::Watchdog).
    pub struct WatchdogAction(i32) {
        /// No action, the watchdog was ignored.
        NONE = 0 "none",
        /// The guest was paused.
        PAUSE = 1 "pause",
        /// The guest was reset.
        RESET = 2 "reset",
        /// The guest was powered off.
        POWEROFF = 3 "poweroff",
        /// The guest was shut down.
        SHUTDOWN = 4 "shutdown",
        /// No action, a debug message was logged.
        DEBUG = 5 "debug",
        /// An NMI was injected.
        INJECTNMI = 6 "inject-nmi",
    }
}

named! {
    /// `virDomainEventIOErrorAction` in [`IoError`](super::events::IoError) and
    /// [`IoErrorReason`](super::events::IoErrorReason).
    pub struct IoErrorAction(i32) {
        /// No action.
        NONE = 0 "none",
        /// The guest was paused.
        PAUSE = 1 "pause",
        /// The error was reported to the guest.
        REPORT = 2 "report",
    }
}

named! {
    /// `virDomainEventGraphicsPhase` in [`Graphics`](super::events::Graphics).
    pub struct GraphicsPhase(i32) {
        /// The client connected.
        CONNECT = 0 "connect",
        /// The client authenticated.
        INITIALIZE = 1 "initialize",
        /// The client disconnected.
        DISCONNECT = 2 "disconnect",
    }
}

named! {
    /// `virDomainEventGraphicsAddressType` in
    /// [`GraphicsAddress`](super::events::GraphicsAddress).
    pub struct GraphicsAddressType(i32) {
        /// IPv4.
        IPV4 = 0 "IPv4",
        /// IPv6.
        IPV6 = 1 "IPv6",
        /// A UNIX socket.
        UNIX = 2 "unix",
    }
}

named! {
    /// `virDomainBlockJobType` in the block job events and
    /// [`DomainGetBlockJobInfoRet`](super::procs::domain::DomainGetBlockJobInfoRet).
    pub struct BlockJobType(i32) {
        /// Unknown.
        UNKNOWN = 0 "Unknown job",
        /// `blockpull`.
        PULL = 1 "Block Pull",
        /// `blockcopy`.
        COPY = 2 "Block Copy",
        /// `blockcommit` of a backing image.
        COMMIT = 3 "Block Commit",
        /// `blockcommit` of the active layer.
        ACTIVE_COMMIT = 4 "Active Block Commit",
        /// A backup job.
        BACKUP = 5 "Backup",
    }
}

named! {
    /// `virConnectDomainEventBlockJobStatus` in the block job events.
    pub struct BlockJobStatus(i32) {
        /// Completed.
        COMPLETED = 0 "completed",
        /// Failed.
        FAILED = 1 "failed",
        /// Cancelled.
        CANCELED = 2 "canceled",
        /// Ready to pivot (mirror).
        READY = 3 "ready",
    }
}

named! {
    /// `virConnectDomainEventDiskChangeReason` in [`DiskChange`](super::events::DiskChange).
    pub struct DiskChangeReason(i32) {
        /// The source was missing at start: the old source was changed.
        MISSING_ON_START = 0 "changed",
        /// The source was missing at start: the disk was dropped.
        DROP_MISSING_ON_START = 1 "dropped",
    }
}

named! {
    /// `virDomainEventTrayChangeReason` in [`TrayChange`](super::events::TrayChange).
    pub struct TrayChangeReason(i32) {
        /// The tray opened.
        OPEN = 0 "opened",
        /// The tray closed.
        CLOSE = 1 "closed",
    }
}

named! {
    /// `virConnectDomainEventAgentLifecycleState` in
    /// [`AgentLifecycle`](super::events::AgentLifecycle) (also the state of
    /// [`ChannelLifecycle`](super::events::ChannelLifecycle)).
    pub struct AgentLifecycleState(i32) {
        /// The agent (channel) connected.
        CONNECTED = 1 "connected",
        /// The agent (channel) disconnected.
        DISCONNECTED = 2 "disconnected",
    }
}

named! {
    /// `virConnectDomainEventAgentLifecycleReason` in
    /// [`AgentLifecycle`](super::events::AgentLifecycle) (also the reason of
    /// [`ChannelLifecycle`](super::events::ChannelLifecycle)).
    pub struct AgentLifecycleReason(i32) {
        /// Unknown.
        UNKNOWN = 0 "unknown",
        /// The domain started.
        DOMAIN_STARTED = 1 "domain started",
        /// The channel changed state.
        CHANNEL = 2 "channel event",
    }
}

named! {
    /// `virDomainMetadataType` (also `virNetworkMetadataType`): which metadata
    /// [`DomainGetMetadata`](super::procs::domain::DomainGetMetadata) reads and the metadata
    /// change events report.
    pub struct MetadataType(i32) {
        /// `<description>`.
        DESCRIPTION = 0 "description",
        /// `<title>`.
        TITLE = 1 "title",
        /// An element of `<metadata>` in a namespace (needs a URI).
        ELEMENT = 2 "element",
    }
}

named! {
    /// `virDomainMemoryFailureRecipientType` in
    /// [`MemoryFailure`](super::events::MemoryFailure).
    pub struct MemoryFailureRecipient(i32) {
        /// The hypervisor.
        HYPERVISOR = 0 "hypervisor",
        /// The guest.
        GUEST = 1 "guest",
    }
}

named! {
    /// `virDomainMemoryFailureActionType` in [`MemoryFailure`](super::events::MemoryFailure).
    pub struct MemoryFailureAction(i32) {
        /// Ignored.
        IGNORE = 0 "ignore",
        /// Injected into the guest.
        INJECT = 1 "inject",
        /// Fatal: the hypervisor exits.
        FATAL = 2 "fatal",
        /// The guest was reset.
        RESET = 3 "reset",
    }
}

named! {
    /// `virConnectCloseReason`: why the daemon closed the connection
    /// ([`Event::ConnectionClosed`](super::events::Event::ConnectionClosed)).
    pub struct ConnectCloseReason(i32) {
        /// A misc I/O error.
        ERROR = 0 "error",
        /// End of file from the server.
        EOF = 1 "end of file",
        /// The keepalive timer fired.
        KEEPALIVE = 2 "keepalive timeout",
        /// Closed by the client.
        CLIENT = 3 "closed by client",
    }
}

named! {
    /// `virStoragePoolState` in
    /// [`StoragePoolGetInfoRet`](super::procs::storage::StoragePoolGetInfoRet) (an
    /// `unsigned char`, 4 bytes on the wire); words as `virsh pool-info` prints them.
    pub struct StoragePoolState(u32) {
        /// Not running.
        INACTIVE = 0 "inactive",
        /// Being built.
        BUILDING = 1 "building",
        /// Running.
        RUNNING = 2 "running",
        /// Running degraded.
        DEGRADED = 3 "degraded",
        /// Running but not accessible.
        INACCESSIBLE = 4 "inaccessible",
    }
}

named! {
    /// `virStorageVolType` in
    /// [`StorageVolGetInfoRet`](super::procs::storage::StorageVolGetInfoRet); words as
    /// `virsh vol-info` prints them.
    pub struct StorageVolType(i32) {
        /// A regular file.
        FILE = 0 "file",
        /// A block device.
        BLOCK = 1 "block",
        /// A directory-passthrough volume.
        DIR = 2 "dir",
        /// A network volume (RBD, Sheepdog, Gluster, …).
        NETWORK = 3 "network",
        /// A network-accessible directory.
        NETDIR = 4 "netdir",
        /// A ploop volume.
        PLOOP = 5 "ploop",
    }
}

named! {
    /// `virDomainJobType` in [`DomainGetJobInfoRet`](super::procs::domain::DomainGetJobInfoRet);
    /// words as `virsh domjobinfo` prints them.
    pub struct DomainJobType(i32) {
        /// No job.
        NONE = 0 "None",
        /// A job with a known end.
        BOUNDED = 1 "Bounded",
        /// A job without a known end.
        UNBOUNDED = 2 "Unbounded",
        /// The job finished.
        COMPLETED = 3 "Completed",
        /// The job failed.
        FAILED = 4 "Failed",
        /// The job was cancelled.
        CANCELLED = 5 "Cancelled",
    }
}

named! {
    /// `virSecretUsageType`: what a secret is for.
    pub struct SecretUsageType(i32) {
        /// No usage.
        NONE = 0 "none",
        /// A volume's encryption.
        VOLUME = 1 "volume",
        /// A Ceph client.
        CEPH = 2 "ceph",
        /// An iSCSI target.
        ISCSI = 3 "iscsi",
        /// A TLS key.
        TLS = 4 "tls",
        /// A vTPM's state.
        VTPM = 5 "vtpm",
    }
}

named! {
    /// `virIPAddrType` in [`DomainIpAddr`](super::procs::domain::DomainIpAddr) and network
    /// DHCP leases.
    pub struct IpAddrType(i32) {
        /// IPv4.
        IPV4 = 0 "ipv4",
        /// IPv6.
        IPV6 = 1 "ipv6",
    }
}

named! {
    /// `virCPUCompareResult` returned by
    /// [`ConnectCompareCpu`](super::procs::connect::ConnectCompareCpu).
    pub struct CpuCompareResult(i32) {
        /// Error.
        ERROR = -1 "error",
        /// The host CPU cannot run the given CPU.
        INCOMPATIBLE = 0 "incompatible",
        /// Identical.
        IDENTICAL = 1 "identical",
        /// The host CPU is a superset.
        SUPERSET = 2 "superset",
    }
}

impl DomainGetInfoRet {
    /// The state, named (libvirt's C type is an `unsigned char`; four bytes above
    /// `i32::MAX`, which libvirt cannot send, read as the negative `int` they spell).
    pub fn domain_state(&self) -> DomainState {
        self.state
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::xdr;

    #[test]
    fn states_print_as_virsh_does_and_unknown_ones_stay_numbers() {
        assert_eq!(DomainState::RUNNING.to_string(), "running");
        assert_eq!(DomainState::SHUTOFF.to_string(), "shut off");
        assert_eq!(DomainState::BLOCKED.to_string(), "idle");
        assert_eq!(format!("{:?}", DomainState::PAUSED), "PAUSED(3)");
        assert_eq!(DomainState(9).to_string(), "state 9");
        assert_eq!(format!("{:?}", DomainState(9)), "DomainState(9)");
        assert_eq!(DomainState(-1).name(), None);
        assert!(DomainState(9).reason_names().is_empty());
        // The constants agree with the wire constants of the domain procedures.
        for (n, s) in [
            (DomainState::NOSTATE, DomainState::NOSTATE),
            (DomainState::RUNNING, DomainState::RUNNING),
            (DomainState::BLOCKED, DomainState::BLOCKED),
            (DomainState::PAUSED, DomainState::PAUSED),
            (DomainState::SHUTDOWN, DomainState::SHUTDOWN),
            (DomainState::SHUTOFF, DomainState::SHUTOFF),
            (DomainState::CRASHED, DomainState::CRASHED),
            (DomainState::PMSUSPENDED, DomainState::PMSUSPENDED),
        ] {
            assert_eq!(n, s);
            assert!(s.name().is_some() && s.text().is_some());
            assert_eq!(s.reason_names().len(), s.reason_texts().len(), "{s:?}");
            assert_eq!(s.reason_names()[0], "UNKNOWN");
        }
        assert!(DomainState::PAUSED.is_active() && !DomainState::SHUTOFF.is_active());
    }

    #[test]
    fn reasons_are_named_per_state() {
        let r = DomainState::SHUTOFF.with_reason(ShutoffReason::DESTROYED.0);
        assert_eq!(r.to_string(), "shut off (destroyed)");
        assert_eq!(r.reason_name(), Some("DESTROYED"));
        assert_eq!(
            DomainState::SHUTOFF
                .with_reason(ShutoffReason::DAEMON.0)
                .reason_name(),
            Some("DAEMON")
        );
        // The same number means different things in different states.
        assert_eq!(
            DomainState::RUNNING.with_reason(1).to_string(),
            "running (booted)"
        );
        assert_eq!(
            DomainState::PAUSED.with_reason(1).to_string(),
            "paused (user)"
        );
        assert_eq!(
            DomainState::PAUSED.with_reason(14).reason_name(),
            Some("API_ERROR")
        );
        assert_eq!(
            DomainState::RUNNING.with_reason(11).reason_name(),
            Some("POSTCOPY_FAILED")
        );
        // Unknown reasons and states print their numbers.
        assert_eq!(
            DomainState::PAUSED.with_reason(42).to_string(),
            "paused (reason 42)"
        );
        assert_eq!(DomainState::PAUSED.with_reason(-1).reason_name(), None);
        assert_eq!(
            DomainState(12).with_reason(0).to_string(),
            "state 12 (reason 0)"
        );
    }

    #[test]
    fn replies_expose_named_states() {
        let st = DomainGetStateRet {
            state: DomainState::PAUSED,
            reason: PausedReason::IOERROR.into(),
        };
        assert_eq!(st.to_string(), "paused (I/O error)");
        assert_eq!(st.reason_name(), Some("IOERROR"));
        assert_eq!(st, DomainState::PAUSED.with_reason(5));
        let info = DomainGetInfoRet {
            state: DomainState::RUNNING,
            max_mem: 0,
            memory: 0,
            nr_virt_cpu: 1,
            cpu_time: 0,
        };
        assert_eq!(info.domain_state(), DomainState::RUNNING);
        // An `unsigned char` above `i32::MAX` cannot come from libvirt; its four bytes read
        // as the `int` they spell.
        let mut wire = xdr::to_bytes(&info).unwrap().to_vec();
        wire[..4].copy_from_slice(&u32::MAX.to_be_bytes());
        let odd: DomainGetInfoRet = xdr::from_bytes(wire.into()).unwrap();
        assert_eq!(odd.domain_state(), DomainState(-1));
    }

    #[test]
    fn reasons_and_details_are_typed_fields_with_the_wire_bytes_unchanged() {
        // state 5 (shut off), reason 2 (destroyed)
        let wire = [0, 0, 0, 5, 0, 0, 0, 2];
        let st: DomainGetStateRet = xdr::from_bytes(wire.to_vec().into()).unwrap();
        assert_eq!(st.reason, StateReason::Shutoff(ShutoffReason::DESTROYED));
        assert!(matches!(
            st.reason,
            StateReason::Shutoff(ShutoffReason::DESTROYED)
        ));
        assert_eq!(st.to_string(), "shut off (destroyed)");
        assert_eq!(st.reason.to_string(), "destroyed");
        assert_eq!(&xdr::to_bytes(&st).unwrap()[..], &wire);
        // The same number is another reason in another state.
        assert_eq!(
            StateReason::of(DomainState::RUNNING, 2),
            StateReason::Running(RunningReason::MIGRATED)
        );
        // An unknown state keeps its reason as a number, and the bytes.
        let wire = [0, 0, 0, 12, 0, 0, 0, 3];
        let st: DomainGetStateRet = xdr::from_bytes(wire.to_vec().into()).unwrap();
        assert_eq!(st.reason, StateReason::Other(3));
        assert_eq!(st.to_string(), "state 12 (reason 3)");
        assert_eq!(&xdr::to_bytes(&st).unwrap()[..], &wire);
        // An unknown reason of a known state stays typed by the state.
        assert_eq!(
            StateReason::of(DomainState::PAUSED, 42),
            StateReason::Paused(PausedReason(42))
        );
        assert_eq!(PausedReason(42).to_string(), "PausedReason(42)");
        assert_eq!(i32::from(StateReason::Paused(PausedReason(42))), 42);

        let l = DomainEventType::STOPPED.with_detail(1);
        assert_eq!(l.detail, LifecycleDetail::Stopped(StoppedDetail::DESTROYED));
        assert_eq!(l.to_string(), "Stopped Destroyed");
        assert_eq!(l.detail_name(), Some("DESTROYED"));
        assert_eq!(
            DomainEventType(12).with_detail(4).detail,
            LifecycleDetail::Other(4)
        );
        assert_eq!(
            DomainEventType(12).with_detail(4).to_string(),
            "event 12 detail 4"
        );
        assert_eq!(
            DomainEventType::STOPPED.with_detail(42).to_string(),
            "Stopped detail 42"
        );
        // The typed constants agree with the tables that name them.
        for s in 0..8 {
            let s = DomainState(s);
            for (i, n) in s.reason_names().iter().enumerate() {
                let r = StateReason::of(s, i as i32);
                assert_eq!(r.name(), Some(*n), "{s:?} {i}");
                assert_eq!(r.text(), Some(s.reason_texts()[i]));
            }
        }
        for e in 0..9 {
            let e = DomainEventType(e);
            for (i, n) in e.detail_names().iter().enumerate() {
                assert_eq!(
                    LifecycleDetail::of(e, i as i32).name(),
                    Some(*n),
                    "{e:?} {i}"
                );
            }
        }
    }
}
