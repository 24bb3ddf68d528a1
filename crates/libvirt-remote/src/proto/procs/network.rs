//! Network procedures: virtual networks, their DHCP leases and ports.

use super::common::{
    ActiveRet, AutostartRet, CallbackIdArgs, CallbackIdRet, ListAllArgs, MaxNamesArgs, NameArgs,
    NumRet, PersistentRet, UuidArgs, XmlArgs, XmlFlagsArgs, XmlRet,
};
use crate::proto::names::{IpAddrType, MetadataType};
use crate::proto::types::{NonnullNetwork, NonnullNetworkPort, TypedParam, Uuid};
use crate::proto::{limits, procedures};
use crate::wire::xdr::{LvString, xdr_struct};

crate::proto::flags::flag_set! {
    /// `virConnectListAllNetworksFlags` for [`ConnectListAllNetworks`].
    pub struct ConnectListAllNetworksFlags: u32 {
        /// Inactive networks.
        const INACTIVE = 1;
        /// Active networks.
        const ACTIVE = 2;
        /// Persistent networks.
        const PERSISTENT = 4;
        /// Transient networks.
        const TRANSIENT = 8;
        /// Autostarting networks.
        const AUTOSTART = 16;
        /// Networks not autostarting.
        const NO_AUTOSTART = 32;
    }
}

crate::proto::flags::flag_set! {
    /// `virNetworkXMLFlags` for [`NetworkGetXmlDesc`].
    pub struct NetworkXmlFlags: u32 {
        /// The persistent definition rather than the live one.
        const INACTIVE = 1;
    }
}

crate::proto::names::named! {
    /// `virNetworkUpdateCommand` for [`NetworkUpdate`].
    pub struct NetworkUpdateCommand(u32) {
        /// Invalid.
        NONE = 0,
        /// Modify an existing element.
        MODIFY = 1,
        /// Delete an element.
        DELETE = 2,
        /// Add at the end.
        ADD_LAST = 3,
        /// Add at the beginning.
        ADD_FIRST = 4,
    }
}

crate::proto::names::named! {
    /// `virNetworkUpdateSection` for [`NetworkUpdate`].
    pub struct NetworkUpdateSection(u32) {
        /// Invalid.
        NONE = 0,
        /// `<bridge>`.
        BRIDGE = 1,
        /// `<domain>`.
        DOMAIN = 2,
        /// `<ip>`.
        IP = 3,
        /// `<ip>/<dhcp>/<host>`.
        IP_DHCP_HOST = 4,
        /// `<ip>/<dhcp>/<range>`.
        IP_DHCP_RANGE = 5,
        /// `<forward>`.
        FORWARD = 6,
        /// `<forward>/<interface>`.
        FORWARD_INTERFACE = 7,
        /// `<forward>/<pf>`.
        FORWARD_PF = 8,
        /// `<portgroup>`.
        PORTGROUP = 9,
        /// `<dns>/<host>`.
        DNS_HOST = 10,
        /// `<dns>/<txt>`.
        DNS_TXT = 11,
        /// `<dns>/<srv>`.
        DNS_SRV = 12,
    }
}

crate::proto::flags::flag_set! {
    /// `virNetworkUpdateFlags` for [`NetworkUpdate`].
    pub struct NetworkUpdateFlags: u32 {
        /// The current state.
        const AFFECT_CURRENT = 0;
        /// The running network.
        const AFFECT_LIVE = 1;
        /// The persistent configuration.
        const AFFECT_CONFIG = 2;
    }
}

/// `remote_network_lookup_by_name_args`.
pub type NetworkLookupByNameArgs = NameArgs;
/// `remote_network_lookup_by_uuid_args`.
pub type NetworkLookupByUuidArgs = UuidArgs;

crate::proto::flags::flag_set! {
    /// `virNetworkDefineFlags` for [`NetworkDefineXmlFlags`].
    pub struct NetworkDefineFlags: u32 {
        /// Validate the XML against the schema.
        const VALIDATE = 1;
    }
}

crate::proto::flags::flag_set! {
    /// `virNetworkCreateFlags` for [`NetworkCreateXmlFlags`].
    pub struct NetworkCreateFlags: u32 {
        /// Validate the XML against the schema.
        const VALIDATE = 1;
    }
}

xdr_struct! {
    /// Args holding just a network.
    pub struct NetworkArgs {
        /// The network.
        pub net: NonnullNetwork,
    }
}

xdr_struct! {
    /// Args holding a network and flags.
    pub struct NetworkFlagsArgs<F = u32> {
        /// The network.
        pub net: NonnullNetwork,
        /// Procedure-specific flags.
        pub flags: F,
    }
}

xdr_struct! {
    /// A return holding just a network.
    pub struct NetworkRet {
        /// The network.
        pub net: NonnullNetwork,
    }
}

xdr_struct! {
    /// `remote_network_set_autostart_args`.
    pub struct NetworkSetAutostartArgs {
        /// The network.
        pub net: NonnullNetwork,
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
        pub nets: Vec<NonnullNetwork> [limits::NETWORK_LIST_MAX],
        /// Count.
        pub ret: u32,
    }
}

xdr_struct! {
    /// `remote_network_update_args`.
    pub struct NetworkUpdateArgs {
        /// The network.
        pub net: NonnullNetwork,
        /// [`NetworkUpdateCommand`].
        pub command: NetworkUpdateCommand,
        /// [`NetworkUpdateSection`].
        pub section: NetworkUpdateSection,
        /// Index of the parent element (e.g. which `<ip>`), -1 for any.
        pub parent_index: i32,
        /// The element's XML.
        pub xml: LvString,
        /// [`NetworkUpdateFlags`].
        pub flags: NetworkUpdateFlags,
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
        pub kind: IpAddrType,
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
        pub net: NonnullNetwork,
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
        /// [`network_event_id`](crate::proto::events::network_event_id).
        pub event_id: i32,
        /// Only this network; `None` for all.
        pub net: Option<NonnullNetwork>,
    }
}

xdr_struct! {
    /// `remote_network_list_all_ports_args`.
    pub struct NetworkListAllPortsArgs {
        /// The network.
        pub network: NonnullNetwork,
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
        pub ports: Vec<NonnullNetworkPort> [limits::NETWORK_PORT_LIST_MAX],
        /// Count.
        pub ret: u32,
    }
}

xdr_struct! {
    /// `remote_network_port_lookup_by_uuid_args`.
    pub struct NetworkPortLookupByUuidArgs {
        /// The network.
        pub network: NonnullNetwork,
        /// Port UUID.
        pub uuid: Uuid,
    }
}

xdr_struct! {
    /// `remote_network_port_create_xml_args`.
    pub struct NetworkPortCreateXmlArgs {
        /// The network.
        pub network: NonnullNetwork,
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
        pub port: NonnullNetworkPort,
    }
}

xdr_struct! {
    /// Args holding a network port and flags.
    pub struct NetworkPortFlagsArgs {
        /// The port.
        pub port: NonnullNetworkPort,
        /// Must be 0.
        pub flags: u32,
    }
}

xdr_struct! {
    /// `remote_network_port_get_parameters_args`.
    pub struct NetworkPortGetParametersArgs {
        /// The port.
        pub port: NonnullNetworkPort,
        /// Parameters wanted (0: just report how many exist).
        pub nparams: i32,
        /// Must be 0.
        pub flags: u32,
    }
}

xdr_struct! {
    /// `remote_network_port_get_parameters_ret`.
    pub struct NetworkPortGetParametersRet {
        /// Bandwidth parameters (`inbound.average`, …).
        pub params: Vec<TypedParam> [limits::NETWORK_PORT_PARAMETERS_MAX],
        /// Number of parameters available.
        pub nparams: i32,
    }
}

xdr_struct! {
    /// `remote_network_port_set_parameters_args`.
    pub struct NetworkPortSetParametersArgs {
        /// The port.
        pub port: NonnullNetworkPort,
        /// The parameters to change.
        pub params: Vec<TypedParam> [limits::NETWORK_PORT_PARAMETERS_MAX],
        /// Must be 0.
        pub flags: u32,
    }
}

xdr_struct! {
    /// `remote_network_set_metadata_args` (9.7+).
    pub struct NetworkSetMetadataArgs {
        /// The network.
        pub network: NonnullNetwork,
        /// `virNetworkMetadataType` (DESCRIPTION 0, TITLE 1, ELEMENT 2).
        pub kind: MetadataType,
        /// New value; `None` removes it.
        pub metadata: Option<LvString>,
        /// XML namespace prefix (for ELEMENT).
        pub key: Option<LvString>,
        /// XML namespace URI (for ELEMENT).
        pub uri: Option<LvString>,
        /// `virNetworkUpdateFlags` (`AFFECT_CURRENT` 0, LIVE 1, CONFIG 2).
        pub flags: NetworkUpdateFlags,
    }
}

xdr_struct! {
    /// `remote_network_get_metadata_args` (9.7+).
    pub struct NetworkGetMetadataArgs {
        /// The network.
        pub network: NonnullNetwork,
        /// `virNetworkMetadataType`.
        pub kind: MetadataType,
        /// XML namespace URI (for ELEMENT).
        pub uri: Option<LvString>,
        /// `virNetworkUpdateFlags`.
        pub flags: NetworkUpdateFlags,
    }
}

xdr_struct! {
    /// `remote_network_get_metadata_ret`.
    pub struct NetworkGetMetadataRet {
        /// The value.
        pub metadata: LvString,
    }
}

/// This module's procedure table as data: `rows!(callback)` hands every row to `callback!`,
/// as quinn's `apply_params!` does. [`procedures!`](crate::proto::procedures) declares the types
/// and the table from the rows; the client expands the same rows into the object API.
macro_rules! rows { ($callback:ident) => { $callback! {
    [network]
    table PROCEDURES;
    /// `virConnectListDefinedNetworks` (legacy; prefer [`ConnectListAllNetworks`]).
    ConnectListDefinedNetworks = 36: MaxNamesArgs => ConnectListNetworksRet, since "0.3.0";
        => Connect::list_defined_networks(maxnames) -> names[0];
    /// `virConnectListNetworks` (legacy).
    ConnectListNetworks = 38: MaxNamesArgs => ConnectListNetworksRet, since "0.3.0";
        => Connect::list_networks(maxnames) -> names[0];
    /// `virNetworkCreate`: start a defined network.
    NetworkCreate = 39: NetworkArgs => (), since "0.3.0";
        => Network::create(net = self);
    /// `virNetworkCreateXML`: start a transient network.
    NetworkCreateXml = 40: XmlArgs => NetworkRet, since "0.3.0";
        => Connect::create_network_xml(xml) -> net[0];
    /// `virNetworkDefineXML`.
    NetworkDefineXml = 41: XmlArgs => NetworkRet, since "0.3.0";
        => Connect::define_network_xml(xml) -> net[0];
    /// `virNetworkDestroy`.
    NetworkDestroy = 42: NetworkArgs => (), since "0.3.0";
        => Network::destroy(net = self);
    /// `virNetworkGetXMLDesc` (flags: [`NetworkXmlFlags`]).
    NetworkGetXmlDesc = 43: NetworkFlagsArgs<NetworkXmlFlags> => XmlRet, since "0.3.0";
        => Network::xml_desc(net = self, flags) -> xml[0];
    /// `virNetworkGetAutostart`.
    NetworkGetAutostart = 44: NetworkArgs => AutostartRet, since "0.3.0";
        => Network::autostart(net = self) -> autostart[0] as bool;
    /// `virNetworkGetBridgeName`.
    NetworkGetBridgeName = 45: NetworkArgs => NetworkGetBridgeNameRet, since "0.3.0";
        => Network::bridge_name(net = self) -> name[0];
    /// `virNetworkLookupByName`.
    NetworkLookupByName = 46: NameArgs => NetworkRet, since "0.3.0";
        => Connect::lookup_network_by_name(name) -> net[0];
    /// `virNetworkLookupByUUID`.
    NetworkLookupByUuid = 47: UuidArgs => NetworkRet, since "0.3.0";
        => Connect::lookup_network_by_uuid(uuid) -> net[0];
    /// `virNetworkSetAutostart`.
    NetworkSetAutostart = 48: NetworkSetAutostartArgs => (), since "0.3.0";
        => Network::set_autostart(net = self, autostart);
    /// `virNetworkUndefine`.
    NetworkUndefine = 49: NetworkArgs => (), since "0.3.0";
        => Network::undefine(net = self);
    /// `virConnectNumOfDefinedNetworks`.
    ConnectNumOfDefinedNetworks = 50: () => NumRet, since "0.3.0";
        => Connect::num_of_defined_networks() -> num[0];
    /// `virConnectNumOfNetworks`: active networks.
    ConnectNumOfNetworks = 52: () => NumRet, since "0.3.0";
        => Connect::num_of_networks() -> num[0];
    /// `virNetworkIsActive`.
    NetworkIsActive = 152: NetworkArgs => ActiveRet, since "0.7.3";
        => Network::is_active(net = self) -> active[0] as bool;
    /// `virNetworkIsPersistent`.
    NetworkIsPersistent = 153: NetworkArgs => PersistentRet, since "0.7.3";
        => Network::is_persistent(net = self) -> persistent[0] as bool;
    /// `virConnectListAllNetworks` (flags: [`ConnectListAllNetworksFlags`]).
    ConnectListAllNetworks = 283: ListAllArgs<ConnectListAllNetworksFlags> => ConnectListAllNetworksRet, since "0.10.2";
        => Connect::list_all_networks(need_results = 1, flags) -> nets[0];
    /// `virNetworkUpdate`.
    NetworkUpdate = 291: NetworkUpdateArgs => (), since "0.10.2";
        => Network::update(net = self, command, section, parent_index, xml, flags);
    /// `virConnectNetworkEventRegisterAny`: events arrive as `NETWORK_EVENT_*` messages.
    ConnectNetworkEventRegisterAny = 313: ConnectNetworkEventRegisterAnyArgs => CallbackIdRet, since "1.2.1";
    /// Undo [`ConnectNetworkEventRegisterAny`].
    ConnectNetworkEventDeregisterAny = 314: CallbackIdArgs => (), since "1.2.1";
    /// `virNetworkGetDHCPLeases`.
    NetworkGetDhcpLeases = 341: NetworkGetDhcpLeasesArgs => NetworkGetDhcpLeasesRet, since "1.2.6";
        => Network::dhcp_leases(net = self, mac, need_results = 1, flags) -> leases[0];
    /// `virNetworkListAllPorts`.
    NetworkListAllPorts = 404: NetworkListAllPortsArgs => NetworkListAllPortsRet, since "5.5.0";
        => Network::list_all_ports(network = self, need_results = 1, flags) -> ports[0];
    /// `virNetworkPortLookupByUUID`.
    NetworkPortLookupByUuid = 405: NetworkPortLookupByUuidArgs => NetworkPortRet, since "5.5.0";
        => Network::lookup_port_by_uuid(network = self, uuid) -> port[0];
    /// `virNetworkPortCreateXML`.
    NetworkPortCreateXml = 406: NetworkPortCreateXmlArgs => NetworkPortRet, since "5.5.0";
        => Network::create_port_xml(network = self, xml, flags) -> port[0];
    /// `virNetworkPortGetParameters`.
    NetworkPortGetParameters = 407:
        NetworkPortGetParametersArgs => NetworkPortGetParametersRet, since "5.5.0";
        => NetworkPort::parameters(port = self, nparams = count, flags) -> params[0];
    /// `virNetworkPortSetParameters`.
    NetworkPortSetParameters = 408: NetworkPortSetParametersArgs => (), since "5.5.0";
        => NetworkPort::set_parameters(port = self, params, flags);
    /// `virNetworkPortGetXMLDesc`.
    NetworkPortGetXmlDesc = 409: NetworkPortFlagsArgs => XmlRet, since "5.5.0";
        => NetworkPort::xml_desc(port = self, flags) -> xml[0];
    /// `virNetworkPortDelete`.
    NetworkPortDelete = 410: NetworkPortFlagsArgs => (), since "5.5.0";
        => NetworkPort::delete(port = self, flags);
    /// `virNetworkDefineXMLFlags` (flags: VALIDATE 1).
    NetworkDefineXmlFlags = 432: XmlFlagsArgs<NetworkDefineFlags> => NetworkRet, since "7.7.0";
        => Connect::define_network_xml_flags(xml, flags) -> net[0];
    /// `virNetworkCreateXMLFlags` (flags: VALIDATE 1).
    NetworkCreateXmlFlags = 437: XmlFlagsArgs<NetworkCreateFlags> => NetworkRet, since "7.8.0";
        => Connect::create_network_xml_flags(xml, flags) -> net[0];
    /// `virNetworkSetMetadata`.
    NetworkSetMetadata = 444: NetworkSetMetadataArgs => (), since "9.7.0";
        => Network::set_metadata(network = self, kind, metadata, key, uri, flags);
    /// `virNetworkGetMetadata`.
    NetworkGetMetadata = 445: NetworkGetMetadataArgs => NetworkGetMetadataRet, since "9.7.0";
        => Network::metadata(network = self, kind, uri, flags) -> metadata[0];
} } }
#[allow(unused_imports)] // expanded by the layers above, when they are built
pub(crate) use rows;

rows!(procedures);
