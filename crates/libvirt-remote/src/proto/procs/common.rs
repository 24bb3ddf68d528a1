//! Small argument and return shapes that many procedures share.
//!
//! libvirt declares one struct per procedure, but hundreds of them have the same layout
//! (`{ remote_nonnull_string xml; }`, `{ int num; }`, …). Identical layouts share one type
//! here; the per-object modules add type aliases where a procedure-specific name helps.

use crate::proto::types::Uuid;
use crate::wire::xdr::{LvString, xdr_struct};

xdr_struct! {
    /// `{ unsigned int flags; }` (e.g. `CONNECT_GET_SYSINFO`, `INTERFACE_CHANGE_BEGIN`).
    pub struct FlagsArgs {
        /// Procedure-specific flags.
        pub flags: u32,
    }
}

xdr_struct! {
    /// `{ remote_nonnull_string name; }`: lookups by name.
    pub struct NameArgs {
        /// Object name.
        pub name: LvString,
    }
}

xdr_struct! {
    /// `{ remote_nonnull_string name; unsigned int flags; }` (node devices are named, not
    /// passed as handles).
    pub struct NameFlagsArgs {
        /// Object name.
        pub name: LvString,
        /// Procedure-specific flags.
        pub flags: u32,
    }
}

xdr_struct! {
    /// `{ remote_uuid uuid; }`: lookups by UUID.
    pub struct UuidArgs {
        /// Object UUID.
        pub uuid: Uuid,
    }
}

xdr_struct! {
    /// `{ remote_nonnull_string xml; }`: defines and creates without flags.
    pub struct XmlArgs {
        /// Object XML.
        pub xml: LvString,
    }
}

xdr_struct! {
    /// `{ remote_nonnull_string xml; unsigned int flags; }`: defines and creates with flags.
    pub struct XmlFlagsArgs<F = u32> {
        /// Object XML.
        pub xml: LvString,
        /// Procedure-specific flags (`VALIDATE` is 1 for most defines).
        pub flags: F,
    }
}

xdr_struct! {
    /// `{ remote_nonnull_string xml; }` as a return: every `*_GET_XML_DESC`.
    pub struct XmlRet {
        /// The XML document.
        pub xml: LvString,
    }
}

xdr_struct! {
    /// `{ int num; }`: every `*_NUM_OF_*` count.
    pub struct NumRet {
        /// The count.
        pub num: i32,
    }
}

xdr_struct! {
    /// `{ int active; }`: every `*_IS_ACTIVE`.
    pub struct ActiveRet {
        /// 1 when active, 0 when not.
        pub active: i32,
    }
}

xdr_struct! {
    /// `{ int persistent; }`: every `*_IS_PERSISTENT`.
    pub struct PersistentRet {
        /// 1 when persistent (defined), 0 when transient.
        pub persistent: i32,
    }
}

xdr_struct! {
    /// `{ int autostart; }`: every `*_GET_AUTOSTART`.
    pub struct AutostartRet {
        /// 1 when the object starts with the daemon.
        pub autostart: i32,
    }
}

xdr_struct! {
    /// `{ int maxnames; }`: the legacy name-list calls (`CONNECT_LIST_NETWORKS`, …).
    pub struct MaxNamesArgs {
        /// Most names wanted.
        pub maxnames: i32,
    }
}

xdr_struct! {
    /// `{ int need_results; unsigned int flags; }`: every `CONNECT_LIST_ALL_*`.
    pub struct ListAllArgs<F = u32> {
        /// Non-zero to get the objects; zero returns only the count.
        pub need_results: i32,
        /// Filter flags of the object type (`list_*_flags` modules).
        pub flags: F,
    }
}

xdr_struct! {
    /// `{ int callbackID; }` as arguments: every `*_EVENT_DEREGISTER_ANY`.
    pub struct CallbackIdArgs {
        /// Id returned by the matching register call.
        pub callback_id: i32,
    }
}

xdr_struct! {
    /// `{ int callbackID; }` as a return: every `*_EVENT_REGISTER_ANY`.
    pub struct CallbackIdRet {
        /// Id the daemon puts in each event message for this registration.
        pub callback_id: i32,
    }
}
