//! Storage pool and volume procedures, including the upload/download streams.

use super::common::{
    ActiveRet, AutostartRet, CallbackIdArgs, CallbackIdRet, ListAllArgs, MaxNamesArgs, NameArgs,
    NumRet, PersistentRet, UuidArgs, XmlFlagsArgs, XmlRet,
};
use crate::procedures;
use crate::proto::StreamArgs;
use crate::proto::limits;
use crate::proto::types::{StoragePool, StorageVol};
use crate::wire::xdr::LvString;
use crate::xdr_struct;

/// `VIR_STORAGE_VOL_UPLOAD_SPARSE_STREAM` / `VIR_STORAGE_VOL_DOWNLOAD_SPARSE_STREAM`.
pub const VOL_STREAM_SPARSE: u32 = 1;

/// `virConnectListAllStoragePoolsFlags` for [`ConnectListAllStoragePools`].
pub mod list_pools_flags {
    /// Inactive pools.
    pub const INACTIVE: u32 = 1;
    /// Active pools.
    pub const ACTIVE: u32 = 2;
    /// Persistent pools.
    pub const PERSISTENT: u32 = 4;
    /// Transient pools.
    pub const TRANSIENT: u32 = 8;
    /// Autostarting pools.
    pub const AUTOSTART: u32 = 16;
    /// Pools not autostarting.
    pub const NO_AUTOSTART: u32 = 32;
    /// `dir` pools.
    pub const DIR: u32 = 64;
    /// `fs` pools.
    pub const FS: u32 = 128;
    /// `netfs` pools.
    pub const NETFS: u32 = 256;
    /// `logical` pools.
    pub const LOGICAL: u32 = 512;
    /// `disk` pools.
    pub const DISK: u32 = 1024;
    /// `iscsi` pools.
    pub const ISCSI: u32 = 2048;
    /// `scsi` pools.
    pub const SCSI: u32 = 4096;
    /// `mpath` pools.
    pub const MPATH: u32 = 8192;
    /// `rbd` pools.
    pub const RBD: u32 = 16_384;
    /// `sheepdog` pools.
    pub const SHEEPDOG: u32 = 32_768;
    /// `gluster` pools.
    pub const GLUSTER: u32 = 65_536;
    /// `zfs` pools.
    pub const ZFS: u32 = 131_072;
    /// `vstorage` pools.
    pub const VSTORAGE: u32 = 262_144;
    /// `iscsi-direct` pools.
    pub const ISCSI_DIRECT: u32 = 524_288;
}

/// `virStoragePoolState` in [`StoragePoolGetInfoRet::state`].
pub mod pool_state {
    /// Not running.
    pub const INACTIVE: u32 = 0;
    /// Being initialized.
    pub const BUILDING: u32 = 1;
    /// Running.
    pub const RUNNING: u32 = 2;
    /// Running, degraded.
    pub const DEGRADED: u32 = 3;
    /// Running, but not accessible.
    pub const INACCESSIBLE: u32 = 4;
}

/// `virStoragePoolBuildFlags` for [`StoragePoolBuild`].
pub mod pool_build_flags {
    /// Regular build.
    pub const NEW: u32 = 0;
    /// Repair.
    pub const REPAIR: u32 = 1;
    /// Extend.
    pub const RESIZE: u32 = 2;
    /// Refuse to overwrite existing data.
    pub const NO_OVERWRITE: u32 = 4;
    /// Overwrite existing data.
    pub const OVERWRITE: u32 = 8;
}

/// `virStoragePoolCreateFlags` for [`StoragePoolCreate`] and [`StoragePoolCreateXml`].
pub mod pool_create_flags {
    /// Just start.
    pub const NORMAL: u32 = 0;
    /// Build first.
    pub const WITH_BUILD: u32 = 1;
    /// Build first, overwriting.
    pub const WITH_BUILD_OVERWRITE: u32 = 2;
    /// Build first, never overwriting.
    pub const WITH_BUILD_NO_OVERWRITE: u32 = 4;
}

/// `virStoragePoolDeleteFlags` for [`StoragePoolDelete`].
pub mod pool_delete_flags {
    /// Delete metadata only.
    pub const NORMAL: u32 = 0;
    /// Zero all data.
    pub const ZEROED: u32 = 1;
}

/// `virStorageVolType` in [`StorageVolGetInfoRet::kind`].
pub mod vol_type {
    /// Regular file.
    pub const FILE: i32 = 0;
    /// Block device.
    pub const BLOCK: i32 = 1;
    /// Directory.
    pub const DIR: i32 = 2;
    /// Network volume.
    pub const NETWORK: i32 = 3;
    /// Network-accessible directory.
    pub const NETDIR: i32 = 4;
    /// Ploop volume.
    pub const PLOOP: i32 = 5;
}

/// `virStorageVolCreateFlags` for [`StorageVolCreateXml`] / [`StorageVolCreateXmlFrom`].
pub mod vol_create_flags {
    /// Preallocate metadata (qcow2).
    pub const PREALLOC_METADATA: u32 = 1;
    /// Reflink copy when cloning.
    pub const REFLINK: u32 = 2;
    /// Validate the XML.
    pub const VALIDATE: u32 = 4;
}

/// `virStorageVolDeleteFlags` for [`StorageVolDelete`].
pub mod vol_delete_flags {
    /// Delete metadata only.
    pub const NORMAL: u32 = 0;
    /// Zero the data first.
    pub const ZEROED: u32 = 1;
    /// Also delete snapshots.
    pub const WITH_SNAPSHOTS: u32 = 2;
}

/// `virStorageVolResizeFlags` for [`StorageVolResize`].
pub mod vol_resize_flags {
    /// Allocate the new capacity.
    pub const ALLOCATE: u32 = 1;
    /// `capacity` is a delta.
    pub const DELTA: u32 = 2;
    /// Allow shrinking.
    pub const SHRINK: u32 = 4;
}

/// `virStorageVolInfoFlags` for [`StorageVolGetInfoFlags`].
pub mod vol_info_flags {
    /// Report the physical host size as `allocation`.
    pub const GET_PHYSICAL: u32 = 1;
}

/// `virStorageVolWipeAlgorithm` for [`StorageVolWipePattern`].
pub mod wipe_algorithm {
    /// Zeroes.
    pub const ZERO: u32 = 0;
    /// NNSA NAP Air Force Manual 8.
    pub const NNSA: u32 = 1;
    /// US `DoD` 5220.22-M.
    pub const DOD: u32 = 2;
    /// BSI.
    pub const BSI: u32 = 3;
    /// Gutmann.
    pub const GUTMANN: u32 = 4;
    /// Schneier.
    pub const SCHNEIER: u32 = 5;
    /// Pfitzner 7 passes.
    pub const PFITZNER7: u32 = 6;
    /// Pfitzner 33 passes.
    pub const PFITZNER33: u32 = 7;
    /// Random data.
    pub const RANDOM: u32 = 8;
    /// Trim (discard).
    pub const TRIM: u32 = 9;
}

/// Event ids for [`ConnectStoragePoolEventRegisterAny`], declared with the events.
pub use crate::proto::events::pool_event_id;

/// `remote_storage_pool_lookup_by_name_args`.
pub type StoragePoolLookupByNameArgs = NameArgs;

xdr_struct! {
    /// A return holding just a pool.
    pub struct StoragePoolRet {
        /// The pool.
        pub pool: StoragePool,
    }
}

xdr_struct! {
    /// Args holding just a pool (`…_destroy_args`, `…_undefine_args`, …).
    pub struct StoragePoolArgs {
        /// The pool.
        pub pool: StoragePool,
    }
}

xdr_struct! {
    /// Args holding a pool and flags.
    pub struct StoragePoolFlagsArgs {
        /// The pool.
        pub pool: StoragePool,
        /// Flags.
        pub flags: u32,
    }
}

xdr_struct! {
    /// `remote_storage_pool_set_autostart_args`.
    pub struct StoragePoolSetAutostartArgs {
        /// The pool.
        pub pool: StoragePool,
        /// 1 to start with the daemon.
        pub autostart: i32,
    }
}

xdr_struct! {
    /// `remote_storage_pool_get_info_ret`. `state` is an `unsigned char` (4 bytes on the
    /// wire).
    pub struct StoragePoolGetInfoRet {
        /// [`pool_state`].
        pub state: u32,
        /// Capacity in bytes.
        pub capacity: u64,
        /// Allocation in bytes.
        pub allocation: u64,
        /// Free bytes.
        pub available: u64,
    }
}

xdr_struct! {
    /// `remote_storage_pool_list_volumes_args`.
    pub struct StoragePoolListVolumesArgs {
        /// The pool.
        pub pool: StoragePool,
        /// Most names wanted.
        pub maxnames: i32,
    }
}

xdr_struct! {
    /// `remote_storage_pool_list_volumes_ret`.
    pub struct StoragePoolListVolumesRet {
        /// Volume names.
        pub names: Vec<LvString> [limits::STORAGE_VOL_LIST_MAX],
    }
}

xdr_struct! {
    /// `remote_connect_list_storage_pools_ret` (also the defined-pools list).
    pub struct ConnectListStoragePoolsRet {
        /// Pool names.
        pub names: Vec<LvString> [limits::STORAGE_POOL_LIST_MAX],
    }
}

xdr_struct! {
    /// `remote_connect_find_storage_pool_sources_args`.
    pub struct ConnectFindStoragePoolSourcesArgs {
        /// Pool type (`netfs`, `logical`, `iscsi`, …).
        pub kind: LvString,
        /// Source specification XML.
        pub src_spec: Option<LvString>,
        /// Must be 0.
        pub flags: u32,
    }
}

xdr_struct! {
    /// `remote_connect_list_all_storage_pools_ret`.
    pub struct ConnectListAllStoragePoolsRet {
        /// The pools.
        pub pools: Vec<StoragePool> [limits::STORAGE_POOL_LIST_MAX],
        /// Count.
        pub ret: u32,
    }
}

xdr_struct! {
    /// `remote_storage_pool_list_all_volumes_args`.
    pub struct StoragePoolListAllVolumesArgs {
        /// The pool.
        pub pool: StoragePool,
        /// Non-zero to get the volumes; zero returns only the count.
        pub need_results: i32,
        /// Must be 0.
        pub flags: u32,
    }
}

xdr_struct! {
    /// `remote_storage_pool_list_all_volumes_ret`.
    pub struct StoragePoolListAllVolumesRet {
        /// The volumes.
        pub vols: Vec<StorageVol> [limits::STORAGE_VOL_LIST_MAX],
        /// Count.
        pub ret: u32,
    }
}

xdr_struct! {
    /// `remote_connect_storage_pool_event_register_any_args`.
    pub struct ConnectStoragePoolEventRegisterAnyArgs {
        /// [`pool_event_id`].
        pub event_id: i32,
        /// Only this pool; `None` for all.
        pub pool: Option<StoragePool>,
    }
}

xdr_struct! {
    /// `remote_storage_vol_lookup_by_name_args`.
    pub struct StorageVolLookupByNameArgs {
        /// The pool.
        pub pool: StoragePool,
        /// Volume name.
        pub name: LvString,
    }
}

xdr_struct! {
    /// `remote_storage_vol_lookup_by_key_args`.
    pub struct StorageVolLookupByKeyArgs {
        /// Volume key (usually the path).
        pub key: LvString,
    }
}

xdr_struct! {
    /// `remote_storage_vol_lookup_by_path_args` (also `…_pool_lookup_by_target_path`).
    pub struct StorageVolLookupByPathArgs {
        /// Path on the host.
        pub path: LvString,
    }
}

xdr_struct! {
    /// A return holding just a volume.
    pub struct StorageVolRet {
        /// The volume.
        pub vol: StorageVol,
    }
}

xdr_struct! {
    /// Args holding just a volume (`…_get_info_args`, `…_get_path_args`, …).
    pub struct StorageVolArgs {
        /// The volume.
        pub vol: StorageVol,
    }
}

xdr_struct! {
    /// `remote_storage_vol_create_xml_args`.
    pub struct StorageVolCreateXmlArgs {
        /// The pool.
        pub pool: StoragePool,
        /// Volume XML.
        pub xml: LvString,
        /// [`vol_create_flags`].
        pub flags: u32,
    }
}

xdr_struct! {
    /// `remote_storage_vol_create_xml_from_args`: create by cloning `clonevol`.
    pub struct StorageVolCreateXmlFromArgs {
        /// The pool to create in.
        pub pool: StoragePool,
        /// New volume XML.
        pub xml: LvString,
        /// The volume to copy.
        pub clonevol: StorageVol,
        /// [`vol_create_flags`].
        pub flags: u32,
    }
}

xdr_struct! {
    /// Args holding a volume and flags (`…_delete_args`, …).
    pub struct StorageVolFlagsArgs {
        /// The volume.
        pub vol: StorageVol,
        /// Flags.
        pub flags: u32,
    }
}

xdr_struct! {
    /// `remote_storage_vol_wipe_pattern_args`.
    pub struct StorageVolWipePatternArgs {
        /// The volume.
        pub vol: StorageVol,
        /// [`wipe_algorithm`].
        pub algorithm: u32,
        /// Must be 0.
        pub flags: u32,
    }
}

xdr_struct! {
    /// `remote_storage_vol_get_info_ret` / `…_get_info_flags_ret`. rpcgen's `char type` is
    /// a 4-byte int on the wire (the captured reply is 20 bytes).
    pub struct StorageVolGetInfoRet {
        /// [`vol_type`].
        pub kind: i32,
        /// Capacity in bytes.
        pub capacity: u64,
        /// Allocation in bytes.
        pub allocation: u64,
    }
}

xdr_struct! {
    /// `remote_storage_vol_get_path_ret`.
    pub struct StorageVolGetPathRet {
        /// Path on the host.
        pub name: LvString,
    }
}

xdr_struct! {
    /// `remote_storage_vol_resize_args`.
    pub struct StorageVolResizeArgs {
        /// The volume.
        pub vol: StorageVol,
        /// New capacity (or delta) in bytes.
        pub capacity: u64,
        /// [`vol_resize_flags`].
        pub flags: u32,
    }
}

xdr_struct! {
    /// `remote_storage_vol_upload_args` / `remote_storage_vol_download_args`.
    pub struct StorageVolTransferArgs {
        /// The volume.
        pub vol: StorageVol,
        /// Byte offset into the volume.
        pub offset: u64,
        /// Bytes to transfer (0 = to the end).
        pub length: u64,
        /// [`VOL_STREAM_SPARSE`] for a sparse stream.
        pub flags: u32,
    }
}

impl StorageVolTransferArgs {
    /// The whole transfer of `length` bytes (0 = to the end) from `offset`, sparse or not.
    pub fn new(vol: StorageVol, offset: u64, length: u64, sparse: bool) -> Self {
        Self {
            vol,
            offset,
            length,
            flags: if sparse { VOL_STREAM_SPARSE } else { 0 },
        }
    }
}

impl StreamArgs for StorageVolTransferArgs {
    fn sparse(&self) -> bool {
        self.flags & VOL_STREAM_SPARSE != 0
    }
}

procedures! {
    table PROCEDURES;
    /// `virConnectNumOfStoragePools`: active pools.
    ConnectNumOfStoragePools = 71: () => NumRet, since "0.4.1";
        => Connect::num_of_storage_pools() -> num[0];
    /// `virConnectListStoragePools` (legacy; prefer [`ConnectListAllStoragePools`]).
    ConnectListStoragePools = 72: MaxNamesArgs => ConnectListStoragePoolsRet, since "0.4.1";
        => Connect::list_storage_pools(maxnames) -> names[0];
    /// `virConnectNumOfDefinedStoragePools`.
    ConnectNumOfDefinedStoragePools = 73: () => NumRet, since "0.4.1";
        => Connect::num_of_defined_storage_pools() -> num[0];
    /// `virConnectListDefinedStoragePools` (legacy).
    ConnectListDefinedStoragePools = 74: MaxNamesArgs => ConnectListStoragePoolsRet, since "0.4.1";
        => Connect::list_defined_storage_pools(maxnames) -> names[0];
    /// `virConnectFindStoragePoolSources`.
    ConnectFindStoragePoolSources = 75: ConnectFindStoragePoolSourcesArgs => XmlRet, since "0.4.5";
        => Connect::find_storage_pool_sources(kind, src_spec, flags) -> xml[0];
    /// `virStoragePoolCreateXML`: start a transient pool.
    StoragePoolCreateXml = 76: XmlFlagsArgs => StoragePoolRet, since "0.4.1";
        => Connect::create_storage_pool_xml(xml, flags) -> pool[0];
    /// `virStoragePoolDefineXML`.
    StoragePoolDefineXml = 77: XmlFlagsArgs => StoragePoolRet, since "0.4.1";
        => Connect::define_storage_pool_xml(xml, flags) -> pool[0];
    /// `virStoragePoolCreate` (flags: [`pool_create_flags`]).
    StoragePoolCreate = 78: StoragePoolFlagsArgs => (), since "0.4.1";
        => StoragePool::create(pool = self, flags);
    /// `virStoragePoolBuild` (flags: [`pool_build_flags`]).
    StoragePoolBuild = 79: StoragePoolFlagsArgs => (), since "0.4.1";
        => StoragePool::build(pool = self, flags);
    /// `virStoragePoolDestroy`.
    StoragePoolDestroy = 80: StoragePoolArgs => (), since "0.4.1";
        => StoragePool::destroy(pool = self);
    /// `virStoragePoolDelete` (flags: [`pool_delete_flags`]).
    StoragePoolDelete = 81: StoragePoolFlagsArgs => (), since "0.4.1";
        => StoragePool::delete(pool = self, flags);
    /// `virStoragePoolUndefine`.
    StoragePoolUndefine = 82: StoragePoolArgs => (), since "0.4.1";
        => StoragePool::undefine(pool = self);
    /// `virStoragePoolRefresh`.
    StoragePoolRefresh = 83: StoragePoolFlagsArgs => (), since "0.4.1";
        => StoragePool::refresh(pool = self, flags);
    /// `virStoragePoolLookupByName`.
    StoragePoolLookupByName = 84: NameArgs => StoragePoolRet, since "0.4.1";
        => Connect::lookup_storage_pool_by_name(name) -> pool[0];
    /// `virStoragePoolLookupByUUID`.
    StoragePoolLookupByUuid = 85: UuidArgs => StoragePoolRet, since "0.4.1";
        => Connect::lookup_storage_pool_by_uuid(uuid) -> pool[0];
    /// `virStoragePoolLookupByVolume`.
    StoragePoolLookupByVolume = 86: StorageVolArgs => StoragePoolRet, since "0.4.1";
        => StorageVol::pool(vol = self) -> pool[0];
    /// `virStoragePoolGetInfo`.
    StoragePoolGetInfo = 87: StoragePoolArgs => StoragePoolGetInfoRet, since "0.4.1";
        => StoragePool::info(pool = self);
    /// `virStoragePoolGetXMLDesc` (flags: INACTIVE 1).
    StoragePoolGetXmlDesc = 88: StoragePoolFlagsArgs => XmlRet, since "0.4.1";
        => StoragePool::xml_desc(pool = self, flags) -> xml[0];
    /// `virStoragePoolGetAutostart`.
    StoragePoolGetAutostart = 89: StoragePoolArgs => AutostartRet, since "0.4.1";
        => StoragePool::autostart(pool = self) -> autostart[0] as bool;
    /// `virStoragePoolSetAutostart`.
    StoragePoolSetAutostart = 90: StoragePoolSetAutostartArgs => (), since "0.4.1";
        => StoragePool::set_autostart(pool = self, autostart);
    /// `virStoragePoolNumOfVolumes`.
    StoragePoolNumOfVolumes = 91: StoragePoolArgs => NumRet, since "0.4.1";
        => StoragePool::num_of_volumes(pool = self) -> num[0];
    /// `virStoragePoolListVolumes` (legacy; prefer [`StoragePoolListAllVolumes`]).
    StoragePoolListVolumes = 92: StoragePoolListVolumesArgs => StoragePoolListVolumesRet, since "0.4.1";
        => StoragePool::list_volumes(pool = self, maxnames) -> names[0];
    /// `virStorageVolCreateXML`.
    StorageVolCreateXml = 93: StorageVolCreateXmlArgs => StorageVolRet, since "0.4.1";
        => StoragePool::create_volume_xml(pool = self, xml, flags) -> vol[0];
    /// `virStorageVolDelete` (flags: [`vol_delete_flags`]).
    StorageVolDelete = 94: StorageVolFlagsArgs => (), since "0.4.1";
        => StorageVol::delete(vol = self, flags);
    /// `virStorageVolLookupByName`.
    StorageVolLookupByName = 95: StorageVolLookupByNameArgs => StorageVolRet, since "0.4.1";
        => StoragePool::lookup_volume_by_name(pool = self, name) -> vol[0];
    /// `virStorageVolLookupByKey`.
    StorageVolLookupByKey = 96: StorageVolLookupByKeyArgs => StorageVolRet, since "0.4.1";
        => Connect::lookup_storage_vol_by_key(key) -> vol[0];
    /// `virStorageVolLookupByPath`.
    StorageVolLookupByPath = 97: StorageVolLookupByPathArgs => StorageVolRet, since "0.4.1";
        => Connect::lookup_storage_vol_by_path(path) -> vol[0];
    /// `virStorageVolGetInfo`.
    StorageVolGetInfo = 98: StorageVolArgs => StorageVolGetInfoRet, since "0.4.1";
        => StorageVol::info(vol = self);
    /// `virStorageVolGetXMLDesc` (flags must be 0).
    StorageVolGetXmlDesc = 99: StorageVolFlagsArgs => XmlRet, since "0.4.1";
        => StorageVol::xml_desc(vol = self, flags) -> xml[0];
    /// `virStorageVolGetPath`.
    StorageVolGetPath = 100: StorageVolArgs => StorageVolGetPathRet, since "0.4.1";
        => StorageVol::path(vol = self) -> name[0];
    /// `virStorageVolCreateXMLFrom`: clone a volume.
    StorageVolCreateXmlFrom = 125: StorageVolCreateXmlFromArgs => StorageVolRet, since "0.6.4";
        => StoragePool::create_volume_xml_from(pool = self, xml, clonevol, flags) -> vol[0];
    /// `virStoragePoolIsActive`.
    StoragePoolIsActive = 154: StoragePoolArgs => ActiveRet, since "0.7.3";
        => StoragePool::is_active(pool = self) -> active[0] as bool;
    /// `virStoragePoolIsPersistent`.
    StoragePoolIsPersistent = 155: StoragePoolArgs => PersistentRet, since "0.7.3";
        => StoragePool::is_persistent(pool = self) -> persistent[0] as bool;
    /// `virStorageVolWipe` (flags must be 0).
    StorageVolWipe = 165: StorageVolFlagsArgs => (), since "0.8.0";
        => StorageVol::wipe(vol = self, flags);
    /// `virStorageVolUpload`: opens a client → server stream.
    StorageVolUpload = 208: StorageVolTransferArgs => (), since "0.9.0", stream Upload;
    /// `virStorageVolDownload`: opens a server → client stream.
    StorageVolDownload = 209: StorageVolTransferArgs => (), since "0.9.0", stream Download;
    /// `virStorageVolWipePattern`.
    StorageVolWipePattern = 259: StorageVolWipePatternArgs => (), since "0.9.10";
        => StorageVol::wipe_pattern(vol = self, algorithm, flags);
    /// `virStorageVolResize`.
    StorageVolResize = 260: StorageVolResizeArgs => (), since "0.9.10";
        => StorageVol::resize(vol = self, capacity, flags);
    /// `virConnectListAllStoragePools` (flags: [`list_pools_flags`]).
    ConnectListAllStoragePools = 281: ListAllArgs => ConnectListAllStoragePoolsRet, since "0.10.2";
        => Connect::list_all_storage_pools(need_results = 1, flags) -> pools[0];
    /// `virStoragePoolListAllVolumes`.
    StoragePoolListAllVolumes = 282: StoragePoolListAllVolumesArgs => StoragePoolListAllVolumesRet, since "0.10.2";
        => StoragePool::list_all_volumes(pool = self, need_results = 1, flags) -> vols[0];
    /// `virConnectStoragePoolEventRegisterAny`: events arrive as `STORAGE_POOL_EVENT_*`.
    ConnectStoragePoolEventRegisterAny = 368:
        ConnectStoragePoolEventRegisterAnyArgs => CallbackIdRet, since "2.0.0";
    /// Undo [`ConnectStoragePoolEventRegisterAny`].
    ConnectStoragePoolEventDeregisterAny = 369: CallbackIdArgs => (), since "2.0.0";
    /// `virStorageVolGetInfoFlags` (flags: [`vol_info_flags`]).
    StorageVolGetInfoFlags = 378: StorageVolFlagsArgs => StorageVolGetInfoRet, since "3.0.0";
        => StorageVol::info_flags(vol = self, flags);
    /// `virStoragePoolLookupByTargetPath`.
    StoragePoolLookupByTargetPath = 391: StorageVolLookupByPathArgs => StoragePoolRet, since "4.1.0";
        => Connect::lookup_storage_pool_by_target_path(path) -> pool[0];
}
