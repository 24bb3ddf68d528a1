//! Storage pool and volume procedures, including the upload/download streams.

use crate::proto::types::{StoragePool, StorageVol};
use crate::procedures;
use crate::wire::xdr::LvString;
use crate::xdr_struct;

/// `VIR_STORAGE_VOL_UPLOAD_SPARSE_STREAM` / `VIR_STORAGE_VOL_DOWNLOAD_SPARSE_STREAM`.
pub const VOL_STREAM_SPARSE: u32 = 1;

xdr_struct! {
    /// `remote_storage_pool_lookup_by_name_args`.
    pub struct StoragePoolLookupByNameArgs {
        /// Pool name.
        pub name: LvString,
    }
}

xdr_struct! {
    /// A return holding just a pool.
    pub struct StoragePoolRet {
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
    /// `remote_storage_vol_lookup_by_name_args`.
    pub struct StorageVolLookupByNameArgs {
        /// The pool.
        pub pool: StoragePool,
        /// Volume name.
        pub name: LvString,
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
    /// `remote_storage_vol_create_xml_args`.
    pub struct StorageVolCreateXmlArgs {
        /// The pool.
        pub pool: StoragePool,
        /// Volume XML.
        pub xml: LvString,
        /// PREALLOC_METADATA 1, REFLINK 2, VALIDATE 4.
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

procedures! {
    table PROCEDURES;
    /// `virStoragePoolRefresh`.
    StoragePoolRefresh = 83: StoragePoolFlagsArgs => ();
    /// `virStoragePoolLookupByName`.
    StoragePoolLookupByName = 84: StoragePoolLookupByNameArgs => StoragePoolRet;
    /// `virStorageVolCreateXML`.
    StorageVolCreateXml = 93: StorageVolCreateXmlArgs => StorageVolRet;
    /// `virStorageVolDelete`.
    StorageVolDelete = 94: StorageVolFlagsArgs => ();
    /// `virStorageVolLookupByName`.
    StorageVolLookupByName = 95: StorageVolLookupByNameArgs => StorageVolRet;
    /// `virStorageVolUpload`: opens a client → server stream.
    StorageVolUpload = 208: StorageVolTransferArgs => (), stream Upload;
    /// `virStorageVolDownload`: opens a server → client stream.
    StorageVolDownload = 209: StorageVolTransferArgs => (), stream Download;
}
