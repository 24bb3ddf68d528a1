//! Storage pool and volume procedures, including the upload/download streams.

use super::common::{
    ActiveRet, AutostartRet, CallbackIdArgs, CallbackIdRet, ListAllArgs, MaxNamesArgs, NameArgs,
    NumRet, PersistentRet, UuidArgs, XmlFlagsArgs, XmlRet,
};
use crate::proto::names::{StoragePoolState, StorageVolType};
use crate::proto::types::{NonnullStoragePool, NonnullStorageVol};
use crate::proto::{StreamArgs, limits, procedures};
use crate::wire::xdr::{LvString, xdr_struct};

crate::proto::flags::flag_set! {
    /// `virStorageVolUploadFlags` / `virStorageVolDownloadFlags` for [`StorageVolUpload`] and
    /// [`StorageVolDownload`] (the same bit).
    pub struct StorageVolStreamFlags: u32 {
        /// A sparse stream: holes travel as hole messages.
        const SPARSE_STREAM = 1;
    }
}

crate::proto::flags::flag_set! {
    /// `virStoragePoolDefineFlags` for [`StoragePoolDefineXml`].
    pub struct StoragePoolDefineFlags: u32 {
        /// Validate the XML against the schema.
        const VALIDATE = 1;
    }
}

crate::proto::flags::flag_set! {
    /// `virStorageXMLFlags` for [`StoragePoolGetXmlDesc`].
    pub struct StorageXmlFlags: u32 {
        /// The persistent definition rather than the live one.
        const INACTIVE = 1;
    }
}

crate::proto::flags::flag_set! {
    /// `virConnectListAllStoragePoolsFlags` for [`ConnectListAllStoragePools`].
    pub struct ConnectListAllStoragePoolsFlags: u32 {
        /// Inactive pools.
        const INACTIVE = 1;
        /// Active pools.
        const ACTIVE = 2;
        /// Persistent pools.
        const PERSISTENT = 4;
        /// Transient pools.
        const TRANSIENT = 8;
        /// Autostarting pools.
        const AUTOSTART = 16;
        /// Pools not autostarting.
        const NO_AUTOSTART = 32;
        /// `dir` pools.
        const DIR = 64;
        /// `fs` pools.
        const FS = 128;
        /// `netfs` pools.
        const NETFS = 256;
        /// `logical` pools.
        const LOGICAL = 512;
        /// `disk` pools.
        const DISK = 1024;
        /// `iscsi` pools.
        const ISCSI = 2048;
        /// `scsi` pools.
        const SCSI = 4096;
        /// `mpath` pools.
        const MPATH = 8192;
        /// `rbd` pools.
        const RBD = 16_384;
        /// `sheepdog` pools.
        const SHEEPDOG = 32_768;
        /// `gluster` pools.
        const GLUSTER = 65_536;
        /// `zfs` pools.
        const ZFS = 131_072;
        /// `vstorage` pools.
        const VSTORAGE = 262_144;
        /// `iscsi-direct` pools.
        const ISCSI_DIRECT = 524_288;
    }
}

crate::proto::flags::flag_set! {
    /// `virStoragePoolBuildFlags` for [`StoragePoolBuild`].
    pub struct StoragePoolBuildFlags: u32 {
        /// Regular build.
        const NEW = 0;
        /// Repair.
        const REPAIR = 1;
        /// Extend.
        const RESIZE = 2;
        /// Refuse to overwrite existing data.
        const NO_OVERWRITE = 4;
        /// Overwrite existing data.
        const OVERWRITE = 8;
    }
}

crate::proto::flags::flag_set! {
    /// `virStoragePoolCreateFlags` for [`StoragePoolCreate`] and [`StoragePoolCreateXml`].
    pub struct StoragePoolCreateFlags: u32 {
        /// Just start.
        const NORMAL = 0;
        /// Build first.
        const WITH_BUILD = 1;
        /// Build first, overwriting.
        const WITH_BUILD_OVERWRITE = 2;
        /// Build first, never overwriting.
        const WITH_BUILD_NO_OVERWRITE = 4;
    }
}

crate::proto::flags::flag_set! {
    /// `virStoragePoolDeleteFlags` for [`StoragePoolDelete`].
    pub struct StoragePoolDeleteFlags: u32 {
        /// Delete metadata only.
        const NORMAL = 0;
        /// Zero all data.
        const ZEROED = 1;
    }
}

crate::proto::flags::flag_set! {
    /// `virStorageVolCreateFlags` for [`StorageVolCreateXml`] / [`StorageVolCreateXmlFrom`].
    pub struct StorageVolCreateFlags: u32 {
        /// Preallocate metadata (qcow2).
        const PREALLOC_METADATA = 1;
        /// Reflink copy when cloning.
        const REFLINK = 2;
        /// Validate the XML.
        const VALIDATE = 4;
    }
}

crate::proto::flags::flag_set! {
    /// `virStorageVolDeleteFlags` for [`StorageVolDelete`].
    pub struct StorageVolDeleteFlags: u32 {
        /// Delete metadata only.
        const NORMAL = 0;
        /// Zero the data first.
        const ZEROED = 1;
        /// Also delete snapshots.
        const WITH_SNAPSHOTS = 2;
    }
}

crate::proto::flags::flag_set! {
    /// `virStorageVolResizeFlags` for [`StorageVolResize`].
    pub struct StorageVolResizeFlags: u32 {
        /// Allocate the new capacity.
        const ALLOCATE = 1;
        /// `capacity` is a delta.
        const DELTA = 2;
        /// Allow shrinking.
        const SHRINK = 4;
    }
}

crate::proto::flags::flag_set! {
    /// `virStorageVolInfoFlags` for [`StorageVolGetInfoFlags`].
    pub struct StorageVolInfoFlags: u32 {
        /// Report the physical host size as `allocation`.
        const GET_PHYSICAL = 1;
    }
}

crate::proto::names::named! {
    /// `virStorageVolWipeAlgorithm` for [`StorageVolWipePattern`].
    pub struct StorageVolWipeAlgorithm(u32) {
        /// Zeroes.
        ZERO = 0,
        /// NNSA NAP Air Force Manual 8.
        NNSA = 1,
        /// US `DoD` 5220.22-M.
        DOD = 2,
        /// BSI.
        BSI = 3,
        /// Gutmann.
        GUTMANN = 4,
        /// Schneier.
        SCHNEIER = 5,
        /// Pfitzner 7 passes.
        PFITZNER7 = 6,
        /// Pfitzner 33 passes.
        PFITZNER33 = 7,
        /// Random data.
        RANDOM = 8,
        /// Trim (discard).
        TRIM = 9,
    }
}

/// `remote_storage_pool_lookup_by_name_args`.
pub type StoragePoolLookupByNameArgs = NameArgs;

xdr_struct! {
    /// A return holding just a pool.
    pub struct StoragePoolRet {
        /// The pool.
        pub pool: NonnullStoragePool,
    }
}

xdr_struct! {
    /// Args holding just a pool (`…_destroy_args`, `…_undefine_args`, …).
    pub struct StoragePoolArgs {
        /// The pool.
        pub pool: NonnullStoragePool,
    }
}

xdr_struct! {
    /// Args holding a pool and flags.
    pub struct StoragePoolFlagsArgs<F = u32> {
        /// The pool.
        pub pool: NonnullStoragePool,
        /// Flags.
        pub flags: F,
    }
}

xdr_struct! {
    /// `remote_storage_pool_set_autostart_args`.
    pub struct StoragePoolSetAutostartArgs {
        /// The pool.
        pub pool: NonnullStoragePool,
        /// 1 to start with the daemon.
        pub autostart: i32,
    }
}

xdr_struct! {
    /// `remote_storage_pool_get_info_ret`. `state` is an `unsigned char` (4 bytes on the
    /// wire).
    pub struct StoragePoolGetInfoRet {
        /// [`StoragePoolState`].
        pub state: StoragePoolState,
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
        pub pool: NonnullStoragePool,
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
        pub pools: Vec<NonnullStoragePool> [limits::STORAGE_POOL_LIST_MAX],
        /// Count.
        pub ret: u32,
    }
}

xdr_struct! {
    /// `remote_storage_pool_list_all_volumes_args`.
    pub struct StoragePoolListAllVolumesArgs {
        /// The pool.
        pub pool: NonnullStoragePool,
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
        pub vols: Vec<NonnullStorageVol> [limits::STORAGE_VOL_LIST_MAX],
        /// Count.
        pub ret: u32,
    }
}

xdr_struct! {
    /// `remote_connect_storage_pool_event_register_any_args`.
    pub struct ConnectStoragePoolEventRegisterAnyArgs {
        /// [`pool_event_id`](crate::proto::events::pool_event_id).
        pub event_id: i32,
        /// Only this pool; `None` for all.
        pub pool: Option<NonnullStoragePool>,
    }
}

xdr_struct! {
    /// `remote_storage_vol_lookup_by_name_args`.
    pub struct StorageVolLookupByNameArgs {
        /// The pool.
        pub pool: NonnullStoragePool,
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
        pub vol: NonnullStorageVol,
    }
}

xdr_struct! {
    /// Args holding just a volume (`…_get_info_args`, `…_get_path_args`, …).
    pub struct StorageVolArgs {
        /// The volume.
        pub vol: NonnullStorageVol,
    }
}

xdr_struct! {
    /// `remote_storage_vol_create_xml_args`.
    pub struct StorageVolCreateXmlArgs {
        /// The pool.
        pub pool: NonnullStoragePool,
        /// Volume XML.
        pub xml: LvString,
        /// [`StorageVolCreateFlags`].
        pub flags: StorageVolCreateFlags,
    }
}

xdr_struct! {
    /// `remote_storage_vol_create_xml_from_args`: create by cloning `clonevol`.
    pub struct StorageVolCreateXmlFromArgs {
        /// The pool to create in.
        pub pool: NonnullStoragePool,
        /// New volume XML.
        pub xml: LvString,
        /// The volume to copy.
        pub clonevol: NonnullStorageVol,
        /// [`StorageVolCreateFlags`].
        pub flags: StorageVolCreateFlags,
    }
}

xdr_struct! {
    /// Args holding a volume and flags (`…_delete_args`, …).
    pub struct StorageVolFlagsArgs<F = u32> {
        /// The volume.
        pub vol: NonnullStorageVol,
        /// Flags.
        pub flags: F,
    }
}

xdr_struct! {
    /// `remote_storage_vol_wipe_pattern_args`.
    pub struct StorageVolWipePatternArgs {
        /// The volume.
        pub vol: NonnullStorageVol,
        /// [`StorageVolWipeAlgorithm`].
        pub algorithm: StorageVolWipeAlgorithm,
        /// Must be 0.
        pub flags: u32,
    }
}

xdr_struct! {
    /// `remote_storage_vol_get_info_ret` / `…_get_info_flags_ret`. rpcgen's `char type` is
    /// a 4-byte int on the wire (the captured reply is 20 bytes).
    pub struct StorageVolGetInfoRet {
        /// [`StorageVolType`].
        pub kind: StorageVolType,
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
        pub vol: NonnullStorageVol,
        /// New capacity (or delta) in bytes.
        pub capacity: u64,
        /// [`StorageVolResizeFlags`].
        pub flags: StorageVolResizeFlags,
    }
}

xdr_struct! {
    /// `remote_storage_vol_upload_args` / `remote_storage_vol_download_args`.
    pub struct StorageVolTransferArgs {
        /// The volume.
        pub vol: NonnullStorageVol,
        /// Byte offset into the volume.
        pub offset: u64,
        /// Bytes to transfer (0 = to the end).
        pub length: u64,
        /// Sparse or not.
        pub flags: StorageVolStreamFlags,
    }
}

impl StorageVolTransferArgs {
    /// The whole transfer of `length` bytes (0 = to the end) from `offset`, sparse or not.
    pub fn new(vol: NonnullStorageVol, offset: u64, length: u64, sparse: bool) -> Self {
        Self {
            vol,
            offset,
            length,
            flags: if sparse {
                StorageVolStreamFlags::SPARSE_STREAM
            } else {
                StorageVolStreamFlags::empty()
            },
        }
    }
}

impl StreamArgs for StorageVolTransferArgs {
    fn sparse(&self) -> bool {
        self.flags.contains(StorageVolStreamFlags::SPARSE_STREAM)
    }

    /// `length` bytes when it is not 0 (0: to the end of the volume).
    fn receive_limit(&self) -> Option<u64> {
        (self.length != 0).then_some(self.length)
    }
}

/// This module's procedure table as data: `rows!(callback)` hands every row to `callback!`,
/// as quinn's `apply_params!` does. [`procedures!`](crate::proto::procedures) declares the types
/// and the table from the rows; the client expands the same rows into the object API.
macro_rules! rows { ($callback:ident) => { $callback! {
    [storage]
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
    StoragePoolCreateXml = 76: XmlFlagsArgs<StoragePoolCreateFlags> => StoragePoolRet, since "0.4.1";
        => Connect::create_storage_pool_xml(xml, flags) -> pool[0];
    /// `virStoragePoolDefineXML`.
    StoragePoolDefineXml = 77: XmlFlagsArgs<StoragePoolDefineFlags> => StoragePoolRet, since "0.4.1";
        => Connect::define_storage_pool_xml(xml, flags) -> pool[0];
    /// `virStoragePoolCreate` (flags: [`StoragePoolCreateFlags`]).
    StoragePoolCreate = 78: StoragePoolFlagsArgs<StoragePoolCreateFlags> => (), since "0.4.1";
        => StoragePool::create(pool = self, flags);
    /// `virStoragePoolBuild` (flags: [`StoragePoolBuildFlags`]).
    StoragePoolBuild = 79: StoragePoolFlagsArgs<StoragePoolBuildFlags> => (), since "0.4.1";
        => StoragePool::build(pool = self, flags);
    /// `virStoragePoolDestroy`.
    StoragePoolDestroy = 80: StoragePoolArgs => (), since "0.4.1";
        => StoragePool::destroy(pool = self);
    /// `virStoragePoolDelete` (flags: [`StoragePoolDeleteFlags`]).
    StoragePoolDelete = 81: StoragePoolFlagsArgs<StoragePoolDeleteFlags> => (), since "0.4.1";
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
    StoragePoolGetXmlDesc = 88: StoragePoolFlagsArgs<StorageXmlFlags> => XmlRet, since "0.4.1";
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
    /// `virStorageVolDelete` (flags: [`StorageVolDeleteFlags`]).
    StorageVolDelete = 94: StorageVolFlagsArgs<StorageVolDeleteFlags> => (), since "0.4.1";
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
    /// `virConnectListAllStoragePools` (flags: [`ConnectListAllStoragePoolsFlags`]).
    ConnectListAllStoragePools = 281: ListAllArgs<ConnectListAllStoragePoolsFlags> => ConnectListAllStoragePoolsRet, since "0.10.2";
        => Connect::list_all_storage_pools(need_results = 1, flags) -> pools[0];
    /// `virStoragePoolListAllVolumes`.
    StoragePoolListAllVolumes = 282: StoragePoolListAllVolumesArgs => StoragePoolListAllVolumesRet, since "0.10.2";
        => StoragePool::list_all_volumes(pool = self, need_results = 1, flags) -> vols[0];
    /// `virConnectStoragePoolEventRegisterAny`: events arrive as `STORAGE_POOL_EVENT_*`.
    ConnectStoragePoolEventRegisterAny = 368:
        ConnectStoragePoolEventRegisterAnyArgs => CallbackIdRet, since "2.0.0";
    /// Undo [`ConnectStoragePoolEventRegisterAny`].
    ConnectStoragePoolEventDeregisterAny = 369: CallbackIdArgs => (), since "2.0.0";
    /// `virStorageVolGetInfoFlags` (flags: [`StorageVolInfoFlags`]).
    StorageVolGetInfoFlags = 378: StorageVolFlagsArgs<StorageVolInfoFlags> => StorageVolGetInfoRet, since "3.0.0";
        => StorageVol::info_flags(vol = self, flags);
    /// `virStoragePoolLookupByTargetPath`.
    StoragePoolLookupByTargetPath = 391: StorageVolLookupByPathArgs => StoragePoolRet, since "4.1.0";
        => Connect::lookup_storage_pool_by_target_path(path) -> pool[0];
} } }
#[allow(unused_imports)] // expanded by the layers above, when they are built
pub(crate) use rows;

rows!(procedures);
