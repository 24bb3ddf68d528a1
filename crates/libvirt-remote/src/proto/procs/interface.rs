//! Host network interface procedures (the netcf/udev interface driver).

use super::common::{
    ActiveRet, FlagsArgs, ListAllArgs, MaxNamesArgs, NameArgs, NumRet, XmlFlagsArgs, XmlRet,
};
use crate::proto::types::NonnullInterface;
use crate::proto::{limits, procedures};
use crate::wire::xdr::{LvString, xdr_struct};

crate::proto::flags::flag_set! {
    /// `virConnectListAllInterfacesFlags` for [`ConnectListAllInterfaces`].
    pub struct ConnectListAllInterfacesFlags: u32 {
        /// Inactive interfaces.
        const INACTIVE = 1;
        /// Active interfaces.
        const ACTIVE = 2;
    }
}

xdr_struct! {
    /// Args holding just an interface.
    pub struct InterfaceArgs {
        /// The interface.
        pub iface: NonnullInterface,
    }
}

xdr_struct! {
    /// Args holding an interface and flags.
    pub struct InterfaceFlagsArgs {
        /// The interface.
        pub iface: NonnullInterface,
        /// Procedure-specific flags.
        pub flags: u32,
    }
}

xdr_struct! {
    /// A return holding just an interface.
    pub struct InterfaceRet {
        /// The interface.
        pub iface: NonnullInterface,
    }
}

xdr_struct! {
    /// `remote_interface_lookup_by_mac_string_args`.
    pub struct InterfaceLookupByMacStringArgs {
        /// MAC address text.
        pub mac: LvString,
    }
}

xdr_struct! {
    /// `remote_connect_list_interfaces_ret` (also the defined-interfaces list).
    pub struct ConnectListInterfacesRet {
        /// Interface names.
        pub names: Vec<LvString> [limits::INTERFACE_LIST_MAX],
    }
}

xdr_struct! {
    /// `remote_connect_list_all_interfaces_ret`.
    pub struct ConnectListAllInterfacesRet {
        /// The interfaces.
        pub ifaces: Vec<NonnullInterface> [limits::INTERFACE_LIST_MAX],
        /// Count.
        pub ret: u32,
    }
}

/// This module's procedure table as data: `rows!(callback)` hands every row to `callback!`,
/// as quinn's `apply_params!` does. [`procedures!`](crate::proto::procedures) declares the types
/// and the table from the rows; the client expands the same rows into the object API.
macro_rules! rows { ($callback:ident) => { $callback! {
    [interface]
    table PROCEDURES;
    /// `virConnectNumOfInterfaces`: active interfaces.
    ConnectNumOfInterfaces = 126: () => NumRet, since "0.6.4";
        => Connect::num_of_interfaces() -> num[0];
    /// `virConnectListInterfaces` (legacy; prefer [`ConnectListAllInterfaces`]).
    ConnectListInterfaces = 127: MaxNamesArgs => ConnectListInterfacesRet, since "0.6.4";
        => Connect::list_interfaces(maxnames) -> names[0];
    /// `virInterfaceLookupByName`.
    InterfaceLookupByName = 128: NameArgs => InterfaceRet, since "0.6.4";
        => Connect::lookup_interface_by_name(name) -> iface[0];
    /// `virInterfaceLookupByMACString`.
    InterfaceLookupByMacString = 129: InterfaceLookupByMacStringArgs => InterfaceRet, since "0.6.4";
        => Connect::lookup_interface_by_mac_string(mac) -> iface[0];
    /// `virInterfaceGetXMLDesc` (flags: INACTIVE 1).
    InterfaceGetXmlDesc = 130: InterfaceFlagsArgs => XmlRet, since "0.6.4";
        => Interface::xml_desc(iface = self, flags) -> xml[0];
    /// `virInterfaceDefineXML`.
    InterfaceDefineXml = 131: XmlFlagsArgs => InterfaceRet, since "0.6.4";
        => Connect::define_interface_xml(xml, flags) -> iface[0];
    /// `virInterfaceUndefine`.
    InterfaceUndefine = 132: InterfaceArgs => (), since "0.6.4";
        => Interface::undefine(iface = self);
    /// `virInterfaceCreate`.
    InterfaceCreate = 133: InterfaceFlagsArgs => (), since "0.6.4";
        => Interface::create(iface = self, flags);
    /// `virInterfaceDestroy`.
    InterfaceDestroy = 134: InterfaceFlagsArgs => (), since "0.6.4";
        => Interface::destroy(iface = self, flags);
    /// `virConnectNumOfDefinedInterfaces`.
    ConnectNumOfDefinedInterfaces = 137: () => NumRet, since "0.7.0";
        => Connect::num_of_defined_interfaces() -> num[0];
    /// `virConnectListDefinedInterfaces` (legacy).
    ConnectListDefinedInterfaces = 138: MaxNamesArgs => ConnectListInterfacesRet, since "0.7.0";
        => Connect::list_defined_interfaces(maxnames) -> names[0];
    /// `virInterfaceIsActive`.
    InterfaceIsActive = 156: InterfaceArgs => ActiveRet, since "0.7.3";
        => Interface::is_active(iface = self) -> active[0] as bool;
    /// `virInterfaceChangeBegin`.
    InterfaceChangeBegin = 220: FlagsArgs => (), since "0.9.2";
        => Connect::interface_change_begin(flags);
    /// `virInterfaceChangeCommit`.
    InterfaceChangeCommit = 221: FlagsArgs => (), since "0.9.2";
        => Connect::interface_change_commit(flags);
    /// `virInterfaceChangeRollback`.
    InterfaceChangeRollback = 222: FlagsArgs => (), since "0.9.2";
        => Connect::interface_change_rollback(flags);
    /// `virConnectListAllInterfaces` (flags: [`ConnectListAllInterfacesFlags`]).
    ConnectListAllInterfaces = 284: ListAllArgs<ConnectListAllInterfacesFlags> => ConnectListAllInterfacesRet, since "0.10.2";
        => Connect::list_all_interfaces(need_results = 1, flags) -> ifaces[0];
} } }
#[allow(unused_imports)] // expanded by the layers above, when they are built
pub(crate) use rows;

rows!(procedures);
