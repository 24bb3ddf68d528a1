//! The macro behind the event table in [`super`]: one row per event emits everything.

/// Declares every event family, one block per family and one row per event:
///
/// ```text
/// /// Family doc.
/// Domain => DomainEvent {
///     object: "The domain." dom: Domain,  // the first field of every body the table declares
///     ids: event_id { extra items },      // module of event-id constants (+ extra items)
///     register: ConnectDomainEventCallbackRegisterAny(   // procedure(args { event_id, object })
///         ConnectDomainEventCallbackRegisterAnyArgs { event_id, dom }
///     ),
///     deregister: ConnectDomainEventCallbackDeregisterAny,
///     lifecycle: Lifecycle = LIFECYCLE (DomainEventType), // the lifecycle event, its type
/// } {
///     /// Row doc (on the id constant and the variant).
///     LIFECYCLE = 0, DOMAIN_LIFECYCLE = 318 "DomainEventCallbackLifecycle"
///         => Lifecycle(Lifecycle { /** doc */ event: DomainEventType, /** doc */ detail: i32 });
///     /// A row whose body has the layout of an earlier one (or of a body declared by hand,
///     /// as the power-management events' with its `reason` before the domain) names it
///     /// without braces.
///     CONTROL_ERROR = 7, DOMAIN_CONTROL_ERROR = 325 "…" => ControlError(DomainOnly);
///     /// A row whose event also has a legacy message (no callback id) names it after the
///     /// callback one; only domain rows do.
///     REBOOT = 1, DOMAIN_REBOOT = 319 "DomainEventCallbackReboot",
///         legacy DOMAIN_EVENT_REBOOT = 169 "DomainEventReboot" => Reboot(DomainOnly {});
/// }
/// ```
///
/// A row emits: the body struct (`xdr_struct!`: the object, then the row's fields, in wire
/// order after the callback id),
/// its [`LegacyBody`](super::LegacyBody) impl, the variant wrapping it, the event-id and
/// procedure constants (and the legacy procedure's, with its [`decode`](super::decode) arm to
/// [`Event::DomainLegacy`](super::Event::DomainLegacy)), its entries in
/// [`EVENT_PROCS`](super::EVENT_PROCS), [`callback_proc`](super::DomainEvent::callback_proc)
/// and [`event_id_of_proc`](super::DomainEvent::event_id_of_proc), and its arm of
/// [`decode`](super::decode). A family emits its enum, its [`Kind`](super::Kind), its
/// [`Event`](super::Event) variant and its [`EventKind`](super::EventKind) impl.
macro_rules! event_table {
    (
        $(
            $(#[$fdoc:meta])*
            $Kind:ident => $Family:ident {
                object: $objdoc:literal $obj:ident: $Obj:ty,
                ids: $ids:ident $({ $($extra:item)* })?,
                register: $Reg:ident($Args:ident { event_id, $argobj:ident }),
                deregister: $Dereg:ident,
                lifecycle: $Life:ident = $LifeId:ident ($LifeTy:ty),
            } {
                $(
                    $(#[$vdoc:meta])*
                    $ID:ident = $id:literal, $PROC:ident = $proc:literal $wire:literal
                        $(, legacy $LPROC:ident = $lproc:literal $lwire:literal)?
                        => $Variant:ident($Body:ident $({
                            $( $(#[$fm:meta])* $f:ident: $fty:ty $([$max:expr])? ),* $(,)?
                        })?);
                )*
            }
        )*
    ) => {
        $(
            $(
                $(
                    crate::wire::xdr::xdr_struct! {
                        #[doc = concat!(
                            "Body of [`", stringify!($Family), "::", stringify!($Variant),
                            "`]: `", $wire, "` (procedure ", stringify!($proc),
                            ") after the callback id."
                        )]
                        pub struct $Body {
                            #[doc = $objdoc]
                            pub $obj: $Obj,
                            $( $(#[$fm])* pub $f: $fty $([$max])?, )*
                        }
                    }

                    impl LegacyBody for $Body {
                        fn decode_legacy(payload: Bytes) -> Result<Self, DecodeError> {
                            xdr::from_bytes(payload)
                        }
                    }
                )?
            )*

            $(#[$fdoc])*
            #[derive(Debug, Clone, PartialEq)]
            #[non_exhaustive]
            pub enum $Family {
                $( $(#[$vdoc])* $Variant($Body), )*
            }

            #[doc = concat!(
                "Event ids of [`", stringify!($Family), "`] (`*_EVENT_*REGISTER_ANY`)."
            )]
            pub mod $ids {
                $( $(#[$vdoc])* pub const $ID: i32 = $id; )*
                /// Number of event ids this table knows: one past the highest (derived from
                /// the rows).
                pub const COUNT: i32 = {
                    let ids = [$($id),*];
                    let mut count = 0;
                    let mut i = 0;
                    while i < ids.len() {
                        if ids[i] >= count {
                            count = ids[i] + 1;
                        }
                        i += 1;
                    }
                    count
                };
                $( $($extra)* )?
                $(
                    #[doc = concat!(
                        "The [`", stringify!($Family), "::", stringify!($Variant),
                        "`](super::", stringify!($Family), "::", stringify!($Variant),
                        ") event as a type, for typed subscriptions ([`TypedEvent`](super::TypedEvent)): \
                         its id is [`", stringify!($ID), "`], its events are [`",
                        stringify!($Body), "`](super::", stringify!($Body), ")s."
                    )]
                    #[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
                    pub struct $Variant;

                    impl super::TypedEvent for $Variant {
                        type Family = super::$Family;
                        type Body = super::$Body;
                        const ID: i32 = $id;

                        fn take(event: super::$Family) -> Option<super::$Body> {
                            match event {
                                super::$Family::$Variant(b) => Some(b),
                                #[allow(unreachable_patterns)]
                                _ => None,
                            }
                        }
                    }
                )*
            }

            impl $Family {
                /// The event id this event is delivered for.
                pub fn event_id(&self) -> i32 {
                    match self {
                        $( Self::$Variant(_) => $id, )*
                    }
                }

                /// The `MESSAGE` procedure the daemon uses for events of `event_id`; `None`
                /// for ids this table does not know.
                pub fn callback_proc(event_id: i32) -> Option<i32> {
                    match event_id {
                        $( $id => Some($proc), )*
                        _ => None,
                    }
                }

                /// The event id whose events arrive as `procedure`; `None` for anything else.
                pub fn event_id_of_proc(procedure: i32) -> Option<i32> {
                    match procedure {
                        $( $proc => Some($id), )*
                        _ => None,
                    }
                }

                /// The `MESSAGE` procedure of events of `event_id` registered through the
                /// legacy, per-connection API (no callback id); `None` for ids that have
                /// none (every id after the callback API arrived, every other family).
                pub fn legacy_proc(event_id: i32) -> Option<i32> {
                    match event_id {
                        $( $( $id => Some($lproc), )? )*
                        _ => None,
                    }
                }
            }

            impl EventKind for $Family {
                const KIND: Kind = Kind::$Kind;
                const LIFECYCLE: i32 = $ids::$LifeId;
                type Object = $Obj;
                type Register = $Reg;
                type Deregister = $Dereg;

                fn register_args(event_id: i32, object: Option<$Obj>) -> $Args {
                    $Args { event_id, $argobj: object }
                }

                fn of(event: &Event) -> Option<&Self> {
                    match event {
                        Event::$Kind { event, .. } => Some(event),
                        _ => None,
                    }
                }

                fn object(&self) -> &$Obj {
                    match self {
                        $( Self::$Variant(b) => &b.$obj, )*
                    }
                }

                type LifecycleEvent = $LifeTy;

                fn lifecycle(&self) -> Option<(i32, i32)> {
                    match self {
                        Self::$Life(b) => Some((b.event.into(), b.detail.into())),
                        #[allow(unreachable_patterns)]
                        _ => None,
                    }
                }

                fn lifecycle_event(&self) -> Option<$LifeTy> {
                    match self {
                        Self::$Life(b) => Some(b.event),
                        #[allow(unreachable_patterns)]
                        _ => None,
                    }
                }
            }
        )*

        /// The event families: part of a registration's key, since callback ids are unique
        /// only per family.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        #[non_exhaustive]
        pub enum Kind {
            $( #[doc = concat!("[`", stringify!($Family), "`]s.")] $Kind, )*
            /// [`QemuMonitorEvent`]s of the QEMU program
            /// ([`QemuConnectDomainMonitorEventRegister`](crate::proto::procs::qemu::QemuConnectDomainMonitorEventRegister)).
            QemuMonitor,
            /// Domain lifecycle events of the legacy registration
            /// ([`ConnectDomainEventRegister`](crate::proto::procs::connect::ConnectDomainEventRegister)):
            /// one per connection, its events carry no callback id.
            DomainLegacy,
            /// Domain events of one id (0 to 15) through the legacy any-registration
            /// ([`ConnectDomainEventRegisterAny`](crate::proto::procs::connect::ConnectDomainEventRegisterAny)):
            /// one per event id and connection, every domain, no callback id. Its void reply
            /// names no callback, so the registration is known by its event id.
            DomainLegacyAny,
        }

        impl Kind {
            /// The program of this family's register and deregister procedures.
            pub fn program(self) -> u32 {
                match self {
                    Self::QemuMonitor => crate::proto::QEMU_PROGRAM,
                    _ => crate::proto::REMOTE_PROGRAM,
                }
            }

            /// The `*_EVENT_*REGISTER_ANY` procedure of this family.
            pub fn register_proc(self) -> i32 {
                match self {
                    $( Self::$Kind => <$Reg as Procedure>::NUMBER, )*
                    Self::QemuMonitor => <crate::proto::procs::qemu::QemuConnectDomainMonitorEventRegister as Procedure>::NUMBER,
                    Self::DomainLegacy => <crate::proto::procs::connect::ConnectDomainEventRegister as Procedure>::NUMBER,
                    Self::DomainLegacyAny => <crate::proto::procs::connect::ConnectDomainEventRegisterAny as Procedure>::NUMBER,
                }
            }

            /// The `*_EVENT_DEREGISTER_ANY` procedure of this family.
            pub fn deregister_proc(self) -> i32 {
                match self {
                    $( Self::$Kind => <$Dereg as Procedure>::NUMBER, )*
                    Self::QemuMonitor => <crate::proto::procs::qemu::QemuConnectDomainMonitorEventDeregister as Procedure>::NUMBER,
                    Self::DomainLegacy => <crate::proto::procs::connect::ConnectDomainEventDeregister as Procedure>::NUMBER,
                    Self::DomainLegacyAny => <crate::proto::procs::connect::ConnectDomainEventDeregisterAny as Procedure>::NUMBER,
                }
            }
        }

        /// A decoded asynchronous message.
        #[derive(Debug, Clone, PartialEq)]
        #[non_exhaustive]
        pub enum Event {
            $(
                #[doc = concat!("A [`", stringify!($Family), "`] for a registered callback.")]
                $Kind {
                    /// Callback id from the registration.
                    callback_id: i32,
                    /// The event.
                    event: $Family,
                },
            )*
            /// A domain event of a legacy registration
            /// ([`ConnectDomainEventRegister`](crate::proto::procs::connect::ConnectDomainEventRegister),
            /// [`ConnectDomainEventRegisterAny`](crate::proto::procs::connect::ConnectDomainEventRegisterAny)):
            /// the daemon sends it without a callback id; it reaches the subscribers of the
            /// legacy registration of its event id.
            DomainLegacy {
                /// The event.
                event: DomainEvent,
            },
            /// A QEMU monitor event of the QEMU program, for a registration made with
            /// [`QemuConnectDomainMonitorEventRegister`](crate::proto::procs::qemu::QemuConnectDomainMonitorEventRegister).
            QemuMonitor {
                /// Callback id from the registration.
                callback_id: i32,
                /// The event.
                event: QemuMonitorEvent,
            },
            /// The daemon closed (or is closing) the connection.
            ConnectionClosed {
                /// Why ([`ConnectCloseReason`](crate::proto::names::ConnectCloseReason)).
                reason: ConnectCloseReason,
            },
        }

        impl Event {
            /// The registration's callback id (`None` for the close notice, which has none).
            pub fn callback_id(&self) -> Option<i32> {
                match self {
                    $( Self::$Kind { callback_id, .. } => Some(*callback_id), )*
                    Self::QemuMonitor { callback_id, .. } => Some(*callback_id),
                    Self::DomainLegacy { .. } | Self::ConnectionClosed { .. } => None,
                }
            }

            /// The family of a callback event (`None` for the close notice).
            pub fn kind(&self) -> Option<Kind> {
                match self {
                    $( Self::$Kind { .. } => Some(Kind::$Kind), )*
                    Self::DomainLegacy { .. } => Some(Kind::Domain),
                    Self::QemuMonitor { .. } | Self::ConnectionClosed { .. } => None,
                }
            }
        }

        /// Procedure numbers of the messages [`decode`] understands.
        pub mod procs {
            $( $(
                #[doc = concat!("`", $wire, "`.")]
                pub const $PROC: i32 = $proc;
                $(
                    #[doc = concat!("`", $lwire, "` (legacy registration, no callback id).")]
                    pub const $LPROC: i32 = $lproc;
                )?
            )* )*
            /// `ConnectEventConnectionClosed`.
            pub const CONNECTION_CLOSED: i32 = 362;
        }

        /// Procedure numbers and names of the messages [`decode`] understands.
        pub const EVENT_PROCS: &[(i32, &str)] = &[
            $( $( ($proc, $wire), $( ($lproc, $lwire), )? )* )*
            (procs::CONNECTION_CLOSED, "ConnectEventConnectionClosed"),
        ];

        /// Decode a `MESSAGE` of the remote program. `Ok(None)`: a procedure we do not decode.
        pub fn decode(procedure: i32, payload: Bytes) -> Result<Option<Event>, DecodeError> {
            Ok(Some(match procedure {
                $( $(
                    $proc => {
                        let m: CallbackMsg<$Body> = xdr::from_bytes(payload)?;
                        Event::$Kind {
                            callback_id: m.callback_id,
                            event: $Family::$Variant(m.body),
                        }
                    }
                    $(
                        $lproc => Event::DomainLegacy {
                            event: $Family::$Variant(<$Body as LegacyBody>::decode_legacy(payload)?),
                        },
                    )?
                )* )*
                procs::CONNECTION_CLOSED => {
                    let ConnectionClosedMsg { reason } = xdr::from_bytes(payload)?;
                    Event::ConnectionClosed { reason }
                }
                _ => return Ok(None),
            }))
        }
    };
}
