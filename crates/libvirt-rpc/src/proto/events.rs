//! Asynchronous messages of the remote program: domain events and the close notice.
//!
//! The daemon sends these as `MESSAGE` packets (serial 1, which means nothing). Each domain
//! event carries the callback id returned by `CONNECT_DOMAIN_EVENT_CALLBACK_REGISTER_ANY`.
//! An unknown procedure is not an error: [`decode`] returns `Ok(None)` and the connection
//! counts and skips it.

use bytes::Bytes;

use crate::proto::types::Domain;
use crate::wire::xdr::{self, DecodeError};
use crate::xdr_struct;

/// `virDomainEventID` values for `CONNECT_DOMAIN_EVENT_CALLBACK_REGISTER_ANY`.
pub mod event_id {
    /// Lifecycle changes (defined, started, stopped, …).
    pub const LIFECYCLE: i32 = 0;
    /// Guest reboot.
    pub const REBOOT: i32 = 1;
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

xdr_struct! {
    /// `remote_domain_event_callback_lifecycle_msg`.
    pub struct LifecycleMsg {
        /// Callback id.
        pub callback_id: i32,
        /// The domain.
        pub dom: Domain,
        /// [`lifecycle`] event.
        pub event: i32,
        /// Event-specific detail.
        pub detail: i32,
    }
}

xdr_struct! {
    /// `remote_domain_event_callback_reboot_msg`.
    pub struct RebootMsg {
        /// Callback id.
        pub callback_id: i32,
        /// The domain.
        pub dom: Domain,
    }
}

xdr_struct! {
    /// `remote_connect_event_connection_closed_msg`.
    pub struct ConnectionClosedMsg {
        /// `virConnectCloseReason` (ERROR 0, EOF 1, KEEPALIVE 2, CLIENT 3).
        pub reason: i32,
    }
}

/// A decoded domain event.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum DomainEvent {
    /// Lifecycle change.
    Lifecycle {
        /// The domain.
        dom: Domain,
        /// [`lifecycle`] event.
        event: i32,
        /// Event-specific detail.
        detail: i32,
    },
    /// The guest rebooted.
    Reboot {
        /// The domain.
        dom: Domain,
    },
}

impl DomainEvent {
    /// The domain the event is about.
    pub fn domain(&self) -> &Domain {
        match self {
            Self::Lifecycle { dom, .. } | Self::Reboot { dom } => dom,
        }
    }
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
        /// `virConnectCloseReason`.
        reason: i32,
    },
}

/// Procedure numbers and names of the messages [`decode`] understands.
pub const EVENT_PROCS: &[(i32, &str)] = &[
    (318, "DomainEventCallbackLifecycle"),
    (319, "DomainEventCallbackReboot"),
    (362, "ConnectEventConnectionClosed"),
];

/// Decode a `MESSAGE` of the remote program. `Ok(None)`: a procedure we do not decode.
pub fn decode(procedure: i32, payload: Bytes) -> Result<Option<Event>, DecodeError> {
    let ev = match procedure {
        318 => {
            let m: LifecycleMsg = xdr::from_bytes(payload)?;
            Event::Domain {
                callback_id: m.callback_id,
                event: DomainEvent::Lifecycle { dom: m.dom, event: m.event, detail: m.detail },
            }
        }
        319 => {
            let m: RebootMsg = xdr::from_bytes(payload)?;
            Event::Domain { callback_id: m.callback_id, event: DomainEvent::Reboot { dom: m.dom } }
        }
        362 => {
            let m: ConnectionClosedMsg = xdr::from_bytes(payload)?;
            Event::ConnectionClosed { reason: m.reason }
        }
        _ => return Ok(None),
    };
    Ok(Some(ev))
}
