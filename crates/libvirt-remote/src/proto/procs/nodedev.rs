//! Node device procedures (PCI/USB/SCSI devices, mediated devices, …). Node devices travel
//! by name: most procedures take the name string rather than a handle.

use super::common::{
    ActiveRet, AutostartRet, CallbackIdArgs, CallbackIdRet, ListAllArgs, NameArgs, NameFlagsArgs,
    NumRet, PersistentRet, XmlRet,
};
use crate::proto::types::NonnullNodeDevice;
use crate::proto::{limits, procedures};
use crate::wire::xdr::{LvString, xdr_struct};

crate::proto::flags::flag_set! {
    /// `virConnectListAllNodeDeviceFlags` for [`ConnectListAllNodeDevices`]: devices with
    /// any of the capabilities named (none: every capability), active, inactive or both
    /// (neither flag: both; `virsh nodedev-list` asks for [`ACTIVE`](Self::ACTIVE) unless
    /// given `--inactive` or `--all`). `virsh nodedev-list --cap pci,net` sets
    /// `CAP_PCI_DEV | CAP_NET`.
    pub struct ConnectListAllNodeDevicesFlags: u32 {
        /// `--cap system`: the host itself (`computer`).
        const CAP_SYSTEM = 1 << 0;
        /// `--cap pci`.
        const CAP_PCI_DEV = 1 << 1;
        /// `--cap usb_device`.
        const CAP_USB_DEV = 1 << 2;
        /// `--cap usb`: USB interfaces.
        const CAP_USB_INTERFACE = 1 << 3;
        /// `--cap net`.
        const CAP_NET = 1 << 4;
        /// `--cap scsi_host`.
        const CAP_SCSI_HOST = 1 << 5;
        /// `--cap scsi_target`.
        const CAP_SCSI_TARGET = 1 << 6;
        /// `--cap scsi`.
        const CAP_SCSI = 1 << 7;
        /// `--cap storage`.
        const CAP_STORAGE = 1 << 8;
        /// `--cap fc_host`.
        const CAP_FC_HOST = 1 << 9;
        /// `--cap vports`: NPIV-capable.
        const CAP_VPORTS = 1 << 10;
        /// `--cap scsi_generic`.
        const CAP_SCSI_GENERIC = 1 << 11;
        /// `--cap drm`.
        const CAP_DRM = 1 << 12;
        /// `--cap mdev_types`: can create mediated devices.
        const CAP_MDEV_TYPES = 1 << 13;
        /// `--cap mdev`: a mediated device.
        const CAP_MDEV = 1 << 14;
        /// `--cap ccw`.
        const CAP_CCW_DEV = 1 << 15;
        /// `--cap css`.
        const CAP_CSS_DEV = 1 << 16;
        /// `--cap vdpa`.
        const CAP_VDPA = 1 << 17;
        /// `--cap ap_card`.
        const CAP_AP_CARD = 1 << 18;
        /// `--cap ap_queue`.
        const CAP_AP_QUEUE = 1 << 19;
        /// `--cap ap_matrix`.
        const CAP_AP_MATRIX = 1 << 20;
        /// `--cap vpd`.
        const CAP_VPD = 1 << 21;
        /// `--inactive`: defined but not active (persistent mediated devices).
        const INACTIVE = 1 << 30;
        /// Active devices (`--all` is `ACTIVE | INACTIVE`).
        const ACTIVE = 1 << 31;
    }
}

xdr_struct! {
    /// A return holding just a node device.
    pub struct NodeDeviceRet {
        /// The device.
        pub dev: NonnullNodeDevice,
    }
}

xdr_struct! {
    /// `remote_node_num_of_devices_args`.
    pub struct NodeNumOfDevicesArgs {
        /// Only devices with this capability (`pci`, `net`, …); `None` for all.
        pub cap: Option<LvString>,
        /// Must be 0.
        pub flags: u32,
    }
}

xdr_struct! {
    /// `remote_node_list_devices_args`.
    pub struct NodeListDevicesArgs {
        /// Only devices with this capability; `None` for all.
        pub cap: Option<LvString>,
        /// Most names wanted.
        pub maxnames: i32,
        /// Must be 0.
        pub flags: u32,
    }
}

xdr_struct! {
    /// `remote_node_list_devices_ret`.
    pub struct NodeListDevicesRet {
        /// Device names.
        pub names: Vec<LvString> [limits::NODE_DEVICE_LIST_MAX],
    }
}

xdr_struct! {
    /// `remote_node_device_get_parent_ret`.
    pub struct NodeDeviceGetParentRet {
        /// Parent device name, if any.
        pub parent_name: Option<LvString>,
    }
}

xdr_struct! {
    /// `remote_node_device_list_caps_args`.
    pub struct NodeDeviceListCapsArgs {
        /// Device name.
        pub name: LvString,
        /// Most names wanted.
        pub maxnames: i32,
    }
}

xdr_struct! {
    /// `remote_node_device_list_caps_ret`.
    pub struct NodeDeviceListCapsRet {
        /// Capability names.
        pub names: Vec<LvString> [limits::NODE_DEVICE_CAPS_LIST_MAX],
    }
}

xdr_struct! {
    /// `remote_node_device_lookup_scsi_host_by_wwn_args`.
    pub struct NodeDeviceLookupScsiHostByWwnArgs {
        /// World wide node name.
        pub wwnn: LvString,
        /// World wide port name.
        pub wwpn: LvString,
        /// Must be 0.
        pub flags: u32,
    }
}

xdr_struct! {
    /// `remote_node_device_detach_flags_args`.
    pub struct NodeDeviceDetachFlagsArgs {
        /// Device name.
        pub name: LvString,
        /// Host driver to bind (`vfio`); `None` for the default.
        pub driver_name: Option<LvString>,
        /// Must be 0.
        pub flags: u32,
    }
}

xdr_struct! {
    /// `{ xml_desc; flags }`: `remote_node_device_create_xml_args`, `…_define_xml_args`.
    pub struct NodeDeviceXmlArgs {
        /// Device XML.
        pub xml_desc: LvString,
        /// `VALIDATE` is 1.
        pub flags: u32,
    }
}

xdr_struct! {
    /// `remote_node_device_set_autostart_args`.
    pub struct NodeDeviceSetAutostartArgs {
        /// Device name.
        pub name: LvString,
        /// 1 to start with the daemon.
        pub autostart: i32,
    }
}

xdr_struct! {
    /// `remote_connect_list_all_node_devices_ret`.
    pub struct ConnectListAllNodeDevicesRet {
        /// The devices.
        pub devices: Vec<NonnullNodeDevice> [limits::NODE_DEVICE_LIST_MAX],
        /// Count.
        pub ret: u32,
    }
}

xdr_struct! {
    /// `remote_connect_node_device_event_register_any_args`.
    pub struct ConnectNodeDeviceEventRegisterAnyArgs {
        /// [`node_device_event_id`](crate::proto::events::node_device_event_id).
        pub event_id: i32,
        /// Only this device; `None` for all.
        pub dev: Option<NonnullNodeDevice>,
    }
}

xdr_struct! {
    /// `remote_node_device_update_args` (10.1+).
    pub struct NodeDeviceUpdateArgs {
        /// Device name.
        pub name: LvString,
        /// New device XML.
        pub xml_desc: LvString,
        /// `virNodeDeviceUpdateFlags` (`AFFECT_CURRENT` 0, LIVE 1, CONFIG 2).
        pub flags: u32,
    }
}

/// This module's procedure table as data: `rows!(callback)` hands every row to `callback!`,
/// as quinn's `apply_params!` does. [`procedures!`](crate::proto::procedures) declares the types
/// and the table from the rows; the client expands the same rows into the object API.
macro_rules! rows { ($callback:ident) => { $callback! {
    [nodedev]
    table PROCEDURES;
    /// `virNodeNumOfDevices`.
    NodeNumOfDevices = 111: NodeNumOfDevicesArgs => NumRet, since "0.5.0";
        => Connect::node_num_of_devices(cap, flags) -> num[0];
    /// `virNodeListDevices` (legacy; prefer [`ConnectListAllNodeDevices`]).
    NodeListDevices = 112: NodeListDevicesArgs => NodeListDevicesRet, since "0.5.0";
        => Connect::node_list_devices(cap, maxnames, flags) -> names[0];
    /// `virNodeDeviceLookupByName`.
    NodeDeviceLookupByName = 113: NameArgs => NodeDeviceRet, since "0.5.0";
        => Connect::lookup_node_device_by_name(name) -> dev[0];
    /// `virNodeDeviceGetXMLDesc`.
    NodeDeviceGetXmlDesc = 114: NameFlagsArgs => XmlRet, since "0.5.0";
        => NodeDevice::xml_desc(name = self, flags) -> xml[0];
    /// `virNodeDeviceGetParent`.
    NodeDeviceGetParent = 115: NameArgs => NodeDeviceGetParentRet, since "0.5.0";
        => NodeDevice::parent(name = self) -> parent_name[0];
    /// `virNodeDeviceNumOfCaps`.
    NodeDeviceNumOfCaps = 116: NameArgs => NumRet, since "0.5.0";
        => NodeDevice::num_of_caps(name = self) -> num[0];
    /// `virNodeDeviceListCaps`.
    NodeDeviceListCaps = 117: NodeDeviceListCapsArgs => NodeDeviceListCapsRet, since "0.5.0";
        => NodeDevice::list_caps(name = self, maxnames) -> names[0];
    /// `virNodeDeviceDettach` (libvirt's spelling).
    NodeDeviceDettach = 118: NameArgs => (), since "0.6.1";
        => NodeDevice::dettach(name = self);
    /// `virNodeDeviceReAttach`.
    NodeDeviceReAttach = 119: NameArgs => (), since "0.6.1";
        => NodeDevice::re_attach(name = self);
    /// `virNodeDeviceReset`.
    NodeDeviceReset = 120: NameArgs => (), since "0.6.1";
        => NodeDevice::reset(name = self);
    /// `virNodeDeviceCreateXML`: create a transient device.
    NodeDeviceCreateXml = 123: NodeDeviceXmlArgs => NodeDeviceRet, since "0.6.3";
        => Connect::create_node_device_xml(xml_desc, flags) -> dev[0];
    /// `virNodeDeviceDestroy`.
    NodeDeviceDestroy = 124: NameArgs => (), since "0.6.3";
        => NodeDevice::destroy(name = self);
    /// `virConnectListAllNodeDevices` ([`ConnectListAllNodeDevicesFlags`]).
    ConnectListAllNodeDevices = 285: ListAllArgs<ConnectListAllNodeDevicesFlags> => ConnectListAllNodeDevicesRet, since "0.10.2";
        => Connect::list_all_node_devices(need_results = 1, flags) -> devices[0];
    /// `virNodeDeviceLookupSCSIHostByWWN`.
    NodeDeviceLookupScsiHostByWwn = 297: NodeDeviceLookupScsiHostByWwnArgs => NodeDeviceRet, since "1.0.3";
        => Connect::lookup_node_device_scsi_host_by_wwn(wwnn, wwpn, flags) -> dev[0];
    /// `virNodeDeviceDetachFlags`.
    NodeDeviceDetachFlags = 301: NodeDeviceDetachFlagsArgs => (), since "1.0.5";
        => NodeDevice::detach_flags(name = self, driver_name, flags);
    /// `virConnectNodeDeviceEventRegisterAny`: events arrive as `NODE_DEVICE_EVENT_*`.
    ConnectNodeDeviceEventRegisterAny = 374: ConnectNodeDeviceEventRegisterAnyArgs => CallbackIdRet, since "2.2.0";
    /// Undo [`ConnectNodeDeviceEventRegisterAny`].
    ConnectNodeDeviceEventDeregisterAny = 375: CallbackIdArgs => (), since "2.2.0";
    /// `virNodeDeviceDefineXML`: define a persistent (mediated) device.
    NodeDeviceDefineXml = 428: NodeDeviceXmlArgs => NodeDeviceRet, since "7.3.0";
        => Connect::define_node_device_xml(xml_desc, flags) -> dev[0];
    /// `virNodeDeviceUndefine`.
    NodeDeviceUndefine = 429: NameFlagsArgs => (), since "7.3.0";
        => NodeDevice::undefine(name = self, flags);
    /// `virNodeDeviceCreate`: start a defined device.
    NodeDeviceCreate = 430: NameFlagsArgs => (), since "7.3.0";
        => NodeDevice::create(name = self, flags);
    /// `virNodeDeviceGetAutostart`.
    NodeDeviceGetAutostart = 433: NameArgs => AutostartRet, since "7.8.0";
        => NodeDevice::autostart(name = self) -> autostart[0] as bool;
    /// `virNodeDeviceSetAutostart`.
    NodeDeviceSetAutostart = 434: NodeDeviceSetAutostartArgs => (), since "7.8.0";
        => NodeDevice::set_autostart(name = self, autostart);
    /// `virNodeDeviceIsPersistent`.
    NodeDeviceIsPersistent = 435: NameArgs => PersistentRet, since "7.8.0";
        => NodeDevice::is_persistent(name = self) -> persistent[0] as bool;
    /// `virNodeDeviceIsActive`.
    NodeDeviceIsActive = 436: NameArgs => ActiveRet, since "7.8.0";
        => NodeDevice::is_active(name = self) -> active[0] as bool;
    /// `virNodeDeviceUpdate`.
    NodeDeviceUpdate = 447: NodeDeviceUpdateArgs => (), since "10.1.0";
        => NodeDevice::update(name = self, xml_desc, flags);
} } }
#[allow(unused_imports)] // expanded by the layers above, when they are built
pub(crate) use rows;

rows!(procedures);
