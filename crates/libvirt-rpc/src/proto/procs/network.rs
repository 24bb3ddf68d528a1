//! Network procedures: virtual networks, their DHCP leases and ports.

use super::common::{
    ActiveRet, AutostartRet, CallbackIdArgs, CallbackIdRet, ListAllArgs, MaxNamesArgs, NameArgs,
    NumRet, PersistentRet, UuidArgs, XmlArgs, XmlFlagsArgs, XmlRet,
};
use crate::procedures;
use crate::proto::limits;
use crate::proto::types::{Network, NetworkPort, Uuid};
use crate::wire::xdr::LvString;
use crate::xdr_struct;

/// `virConnectListAllNetworksFlags` for [`ConnectListAllNetworks`].
pub mod list_networks_flags {
    /// Inactive networks.
    pub const INACTIVE: u32 = 1;
    /// Active networks.
    pub const ACTIVE: u32 = 2;
    /// Persistent networks.
    pub const PERSISTENT: u32 = 4;
    /// Transient networks.
    pub const TRANSIENT: u32 = 8;
    /// Autostarting networks.
    pub const AUTOSTART: u32 = 16;
    /// Networks not autostarting.
    pub const NO_AUTOSTART: u32 = 32;
}

/// `virNetworkXMLFlags` for [`NetworkGetXmlDesc`].
pub mod xml_flags {
    /// The persistent definition rather than the live one.
    pub const INACTIVE: u32 = 1;
}

/// `virNetworkUpdateCommand` for [`NetworkUpdate`].
pub mod update_command {
    /// Invalid.
    pub const NONE: u32 = 0;
    /// Modify an existing element.
    pub const MODIFY: u32 = 1;
    /// Delete an element.
    pub const DELETE: u32 = 2;
    /// Add at the end.
    pub const ADD_LAST: u32 = 3;
    /// Add at the beginning.
    pub const ADD_FIRST: u32 = 4;
}

/// `virNetworkUpdateSection` for [`NetworkUpdate`].
pub mod update_section {
    /// Invalid.
    pub const NONE: u32 = 0;
    /// `<bridge>`.
    pub const BRIDGE: u32 = 1;
    /// `<domain>`.
    pub const DOMAIN: u32 = 2;
    /// `<ip>`.
    pub const IP: u32 = 3;
    /// `<ip>/<dhcp>/<host>`.
    pub const IP_DHCP_HOST: u32 = 4;
    /// `<ip>/<dhcp>/<range>`.
    pub const IP_DHCP_RANGE: u32 = 5;
    /// `<forward>`.
    pub const FORWARD: u32 = 6;
    /// `<forward>/<interface>`.
    pub const FORWARD_INTERFACE: u32 = 7;
    /// `<forward>/<pf>`.
    pub const FORWARD_PF: u32 = 8;
    /// `<portgroup>`.
    pub const PORTGROUP: u32 = 9;
    /// `<dns>/<host>`.
    pub const DNS_HOST: u32 = 10;
    /// `<dns>/<txt>`.
    pub const DNS_TXT: u32 = 11;
    /// `<dns>/<srv>`.
    pub const DNS_SRV: u32 = 12;
}

/// `virNetworkUpdateFlags` for [`NetworkUpdate`].
pub mod update_flags {
    /// The current state.
    pub const AFFECT_CURRENT: u32 = 0;
    /// The running network.
    pub const AFFECT_LIVE: u32 = 1;
    /// The persistent configuration.
    pub const AFFECT_CONFIG: u32 = 2;
}

/// `virNetworkEventID` for [`ConnectNetworkEventRegisterAny`].
pub mod network_event_id {
    /// Lifecycle changes.
    pub const LIFECYCLE: i32 = 0;
    /// Metadata changed (libvirt 9.7+).
    pub const METADATA_CHANGE: i32 = 1;
}

/// `remote_network_lookup_by_name_args`.
pub type NetworkLookupByNameArgs = NameArgs;
/// `remote_network_lookup_by_uuid_args`.
pub type NetworkLookupByUuidArgs = UuidArgs;

xdr_struct! {
    /// Args holding just a network.
    pub struct NetworkArgs {
        /// The network.
        pub net: Network,
    }
}

xdr_struct! {
    /// Args holding a network and flags.
    pub struct NetworkFlagsArgs {
        /// The network.
        pub net: Network,
        /// Procedure-specific flags.
        pub flags: u32,
    }
}

xdr_struct! {
    /// A return holding just a network.
    pub struct NetworkRet {
        /// The network.
        pub net: Network,
    }
}

xdr_struct! {
    /// `remote_network_set_autostart_args`.
    pub struct NetworkSetAutostartArgs {
        /// The network.
        pub net: Network,
        /// 1 to start with the daemon.
        pub autostart: i32,
    }
}

xdr_struct! {
    /// `remote_network_get_bridge_name_ret`.
    pub struct NetworkGetBridgeNameRet {
        /// Host bridge device.
        pub name: LvString,
    }
}

xdr_struct! {
    /// `remote_connect_list_networks_ret` (also the defined-networks list).
    pub struct ConnectListNetworksRet {
        /// Network names.
        pub names: Vec<LvString> [limits::NETWORK_LIST_MAX],
    }
}

xdr_struct! {
    /// `remote_connect_list_all_networks_ret`.
    pub struct ConnectListAllNetworksRet {
        /// The networks.
        pub nets: Vec<Network> [limits::NETWORK_LIST_MAX],
        /// Count.
        pub ret: u32,
    }
}

xdr_struct! {
    /// `remote_network_update_args`.
    pub struct NetworkUpdateArgs {
        /// The network.
        pub net: Network,
        /// [`update_command`].
        pub command: u32,
        /// [`update_section`].
        pub section: u32,
        /// Index of the parent element (e.g. which `<ip>`), -1 for any.
        pub parent_index: i32,
        /// The element's XML.
        pub xml: LvString,
        /// [`update_flags`].
        pub flags: u32,
    }
}

xdr_struct! {
    /// `remote_network_dhcp_lease`.
    pub struct NetworkDhcpLease {
        /// Network interface (bridge) name.
        pub iface: LvString,
        /// Expiry, seconds since the epoch.
        pub expirytime: i64,
        /// `virIPAddrType` (IPV4 0, IPV6 1).
        pub kind: i32,
        /// MAC address.
        pub mac: Option<LvString>,
        /// IAID (IPv6).
        pub iaid: Option<LvString>,
        /// Address.
        pub ipaddr: LvString,
        /// Prefix length.
        pub prefix: u32,
        /// Client host name.
        pub hostname: Option<LvString>,
        /// Client id or DUID.
        pub clientid: Option<LvString>,
    }
}

xdr_struct! {
    /// `remote_network_get_dhcp_leases_args`.
    pub struct NetworkGetDhcpLeasesArgs {
        /// The network.
        pub net: Network,
        /// Only leases of this MAC; `None` for all.
        pub mac: Option<LvString>,
        /// Non-zero to get the leases; zero returns only the count.
        pub need_results: i32,
        /// Must be 0.
        pub flags: u32,
    }
}

xdr_struct! {
    /// `remote_network_get_dhcp_leases_ret`.
    pub struct NetworkGetDhcpLeasesRet {
        /// The leases.
        pub leases: Vec<NetworkDhcpLease> [limits::NETWORK_DHCP_LEASES_MAX],
        /// Count.
        pub ret: u32,
    }
}

xdr_struct! {
    /// `remote_connect_network_event_register_any_args`.
    pub struct ConnectNetworkEventRegisterAnyArgs {
        /// [`network_event_id`].
        pub event_id: i32,
        /// Only this network; `None` for all.
        pub net: Option<Network>,
    }
}

xdr_struct! {
    /// `remote_network_list_all_ports_args`.
    pub struct NetworkListAllPortsArgs {
        /// The network.
        pub network: Network,
        /// Non-zero to get the ports; zero returns only the count.
        pub need_results: i32,
        /// Must be 0.
        pub flags: u32,
    }
}

xdr_struct! {
    /// `remote_network_list_all_ports_ret`.
    pub struct NetworkListAllPortsRet {
        /// The ports.
        pub ports: Vec<NetworkPort> [limits::NETWORK_PORT_LIST_MAX],
        /// Count.
        pub ret: u32,
    }
}

xdr_struct! {
    /// `remote_network_port_lookup_by_uuid_args`.
    pub struct NetworkPortLookupByUuidArgs {
        /// The network.
        pub network: Network,
        /// Port UUID.
        pub uuid: Uuid,
    }
}

xdr_struct! {
    /// `remote_network_port_create_xml_args`.
    pub struct NetworkPortCreateXmlArgs {
        /// The network.
        pub network: Network,
        /// Port XML.
        pub xml: LvString,
        /// `virNetworkPortCreateFlags`.
        pub flags: u32,
    }
}

xdr_struct! {
    /// A return holding just a network port.
    pub struct NetworkPortRet {
        /// The port.
        pub port: NetworkPort,
    }
}

xdr_struct! {
    /// Args holding a network port and flags.
    pub struct NetworkPortFlagsArgs {
        /// The port.
        pub port: NetworkPort,
        /// Must be 0.
        pub flags: u32,
    }
}

procedures! {
    table PROCEDURES;
    /// `virConnectListDefinedNetworks` (legacy; prefer [`ConnectListAllNetworks`]).
    ConnectListDefinedNetworks = 36: MaxNamesArgs => ConnectListNetworksRet;
    /// `virConnectListNetworks` (legacy).
    ConnectListNetworks = 38: MaxNamesArgs => ConnectListNetworksRet;
    /// `virNetworkCreate`: start a defined network.
    NetworkCreate = 39: NetworkArgs => ();
    /// `virNetworkCreateXML`: start a transient network.
    NetworkCreateXml = 40: XmlArgs => NetworkRet;
    /// `virNetworkDefineXML`.
    NetworkDefineXml = 41: XmlArgs => NetworkRet;
    /// `virNetworkDestroy`.
    NetworkDestroy = 42: NetworkArgs => ();
    /// `virNetworkGetXMLDesc` (flags: [`xml_flags`]).
    NetworkGetXmlDesc = 43: NetworkFlagsArgs => XmlRet;
    /// `virNetworkGetAutostart`.
    NetworkGetAutostart = 44: NetworkArgs => AutostartRet;
    /// `virNetworkGetBridgeName`.
    NetworkGetBridgeName = 45: NetworkArgs => NetworkGetBridgeNameRet;
    /// `virNetworkLookupByName`.
    NetworkLookupByName = 46: NameArgs => NetworkRet;
    /// `virNetworkLookupByUUID`.
    NetworkLookupByUuid = 47: UuidArgs => NetworkRet;
    /// `virNetworkSetAutostart`.
    NetworkSetAutostart = 48: NetworkSetAutostartArgs => ();
    /// `virNetworkUndefine`.
    NetworkUndefine = 49: NetworkArgs => ();
    /// `virConnectNumOfDefinedNetworks`.
    ConnectNumOfDefinedNetworks = 50: () => NumRet;
    /// `virConnectNumOfNetworks`: active networks.
    ConnectNumOfNetworks = 52: () => NumRet;
    /// `virNetworkIsActive`.
    NetworkIsActive = 152: NetworkArgs => ActiveRet;
    /// `virNetworkIsPersistent`.
    NetworkIsPersistent = 153: NetworkArgs => PersistentRet;
    /// `virConnectListAllNetworks` (flags: [`list_networks_flags`]).
    ConnectListAllNetworks = 283: ListAllArgs => ConnectListAllNetworksRet;
    /// `virNetworkUpdate`.
    NetworkUpdate = 291: NetworkUpdateArgs => ();
    /// `virConnectNetworkEventRegisterAny`: events arrive as `NETWORK_EVENT_*` messages.
    ConnectNetworkEventRegisterAny = 313: ConnectNetworkEventRegisterAnyArgs => CallbackIdRet;
    /// Undo [`ConnectNetworkEventRegisterAny`].
    ConnectNetworkEventDeregisterAny = 314: CallbackIdArgs => ();
    /// `virNetworkGetDHCPLeases`.
    NetworkGetDhcpLeases = 341: NetworkGetDhcpLeasesArgs => NetworkGetDhcpLeasesRet;
    /// `virNetworkListAllPorts`.
    NetworkListAllPorts = 404: NetworkListAllPortsArgs => NetworkListAllPortsRet;
    /// `virNetworkPortLookupByUUID`.
    NetworkPortLookupByUuid = 405: NetworkPortLookupByUuidArgs => NetworkPortRet;
    /// `virNetworkPortCreateXML`.
    NetworkPortCreateXml = 406: NetworkPortCreateXmlArgs => NetworkPortRet;
    /// `virNetworkPortGetXMLDesc`.
    NetworkPortGetXmlDesc = 409: NetworkPortFlagsArgs => XmlRet;
    /// `virNetworkPortDelete`.
    NetworkPortDelete = 410: NetworkPortFlagsArgs => ();
    /// `virNetworkDefineXMLFlags` (flags: VALIDATE 1).
    NetworkDefineXmlFlags = 432: XmlFlagsArgs => NetworkRet;
    /// `virNetworkCreateXMLFlags` (flags: VALIDATE 1).
    NetworkCreateXmlFlags = 437: XmlFlagsArgs => NetworkRet;
}
