//! Domain snapshot and checkpoint procedures.

use super::common::{NumRet, XmlRet};
use super::domain::{DomainFlagsArgs, DomainResultRet};
use crate::procedures;
use crate::proto::limits;
use crate::proto::types::{Domain, DomainCheckpoint, DomainSnapshot};
use crate::wire::xdr::LvString;
use crate::xdr_struct;

/// `virDomainSnapshotCreateFlags` for [`DomainSnapshotCreateXml`].
pub mod snapshot_create_flags {
    /// Restore or alter metadata of an existing snapshot.
    pub const REDEFINE: u32 = 1;
    /// Make the snapshot current.
    pub const CURRENT: u32 = 2;
    /// Metadata only; no data is saved.
    pub const NO_METADATA: u32 = 4;
    /// Stop the domain after the snapshot.
    pub const HALT: u32 = 8;
    /// Disk state only.
    pub const DISK_ONLY: u32 = 16;
    /// Reuse existing external files.
    pub const REUSE_EXT: u32 = 32;
    /// Quiesce guest file systems (needs the agent).
    pub const QUIESCE: u32 = 64;
    /// Atomic across disks.
    pub const ATOMIC: u32 = 128;
    /// Live snapshot.
    pub const LIVE: u32 = 256;
    /// Validate the XML.
    pub const VALIDATE: u32 = 512;
}

/// `virDomainSnapshotDeleteFlags` for [`DomainSnapshotDelete`].
pub mod snapshot_delete_flags {
    /// Also delete children.
    pub const CHILDREN: u32 = 1;
    /// Delete metadata only.
    pub const METADATA_ONLY: u32 = 2;
    /// Delete only the children.
    pub const CHILDREN_ONLY: u32 = 4;
}

/// `virDomainSnapshotRevertFlags` for [`DomainRevertToSnapshot`].
pub mod snapshot_revert_flags {
    /// Run after revert.
    pub const RUNNING: u32 = 1;
    /// Pause after revert.
    pub const PAUSED: u32 = 2;
    /// Allow risky reverts.
    pub const FORCE: u32 = 4;
    /// Re-initialize NVRAM.
    pub const RESET_NVRAM: u32 = 8;
}

xdr_struct! {
    /// `{ snap; flags }`: most snapshot procedures.
    pub struct SnapshotFlagsArgs {
        /// The snapshot.
        pub snap: DomainSnapshot,
        /// Procedure-specific flags.
        pub flags: u32,
    }
}

xdr_struct! {
    /// A return holding just a snapshot.
    pub struct SnapshotRet {
        /// The snapshot.
        pub snap: DomainSnapshot,
    }
}

xdr_struct! {
    /// `{ dom; xml_desc; flags }`: snapshot and checkpoint creation.
    pub struct DomainCreateChildXmlArgs {
        /// The domain.
        pub dom: Domain,
        /// Snapshot or checkpoint XML.
        pub xml_desc: LvString,
        /// [`snapshot_create_flags`] or `virDomainCheckpointCreateFlags`.
        pub flags: u32,
    }
}

xdr_struct! {
    /// `{ dom; name; flags }`: snapshot and checkpoint lookup by name.
    pub struct DomainChildLookupArgs {
        /// The domain.
        pub dom: Domain,
        /// Snapshot or checkpoint name.
        pub name: LvString,
        /// Must be 0.
        pub flags: u32,
    }
}

xdr_struct! {
    /// `remote_domain_snapshot_list_names_args`.
    pub struct DomainSnapshotListNamesArgs {
        /// The domain.
        pub dom: Domain,
        /// Most names wanted.
        pub maxnames: i32,
        /// `virDomainSnapshotListFlags`.
        pub flags: u32,
    }
}

xdr_struct! {
    /// `remote_domain_snapshot_list_names_ret`.
    pub struct SnapshotNamesRet {
        /// Snapshot names.
        pub names: Vec<LvString> [limits::DOMAIN_SNAPSHOT_LIST_MAX],
    }
}

xdr_struct! {
    /// `remote_domain_list_all_snapshots_args`.
    pub struct DomainListAllSnapshotsArgs {
        /// The domain.
        pub dom: Domain,
        /// Non-zero to get the snapshots; zero returns only the count.
        pub need_results: i32,
        /// `virDomainSnapshotListFlags`.
        pub flags: u32,
    }
}

xdr_struct! {
    /// `remote_domain_snapshot_list_all_children_args`.
    pub struct SnapshotListAllChildrenArgs {
        /// The parent snapshot.
        pub snap: DomainSnapshot,
        /// Non-zero to get the snapshots; zero returns only the count.
        pub need_results: i32,
        /// `virDomainSnapshotListFlags`.
        pub flags: u32,
    }
}

xdr_struct! {
    /// `remote_domain_list_all_snapshots_ret` (also for children).
    pub struct SnapshotListRet {
        /// The snapshots.
        pub snapshots: Vec<DomainSnapshot> [limits::DOMAIN_SNAPSHOT_LIST_MAX],
        /// Count (signed in this struct, unlike the other list-all returns).
        pub ret: i32,
    }
}

xdr_struct! {
    /// `remote_domain_snapshot_is_current_ret`.
    pub struct SnapshotIsCurrentRet {
        /// 1 when current.
        pub current: i32,
    }
}

xdr_struct! {
    /// `remote_domain_snapshot_has_metadata_ret`.
    pub struct SnapshotHasMetadataRet {
        /// 1 when libvirt has metadata for it.
        pub metadata: i32,
    }
}

xdr_struct! {
    /// `{ checkpoint; flags }`: most checkpoint procedures.
    pub struct CheckpointFlagsArgs {
        /// The checkpoint.
        pub checkpoint: DomainCheckpoint,
        /// Procedure-specific flags.
        pub flags: u32,
    }
}

xdr_struct! {
    /// A return holding just a checkpoint.
    pub struct CheckpointRet {
        /// The checkpoint.
        pub checkpoint: DomainCheckpoint,
    }
}

xdr_struct! {
    /// `remote_domain_list_all_checkpoints_args`.
    pub struct DomainListAllCheckpointsArgs {
        /// The domain.
        pub dom: Domain,
        /// Non-zero to get the checkpoints; zero returns only the count.
        pub need_results: i32,
        /// `virDomainCheckpointListFlags`.
        pub flags: u32,
    }
}

xdr_struct! {
    /// `remote_domain_checkpoint_list_all_children_args`.
    pub struct CheckpointListAllChildrenArgs {
        /// The parent checkpoint.
        pub checkpoint: DomainCheckpoint,
        /// Non-zero to get the checkpoints; zero returns only the count.
        pub need_results: i32,
        /// `virDomainCheckpointListFlags`.
        pub flags: u32,
    }
}

xdr_struct! {
    /// `remote_domain_list_all_checkpoints_ret` (also for children).
    pub struct CheckpointListRet {
        /// The checkpoints.
        pub checkpoints: Vec<DomainCheckpoint> [limits::DOMAIN_CHECKPOINT_LIST_MAX],
        /// Count.
        pub ret: i32,
    }
}

xdr_struct! {
    /// `remote_domain_snapshot_list_children_names_args`.
    pub struct DomainSnapshotListChildrenNamesArgs {
        /// The parent snapshot.
        pub snap: DomainSnapshot,
        /// Most names wanted.
        pub maxnames: i32,
        /// `virDomainSnapshotListFlags`.
        pub flags: u32,
    }
}

procedures! {
    table PROCEDURES;
    /// `virDomainSnapshotCreateXML`.
    DomainSnapshotCreateXml = 185: DomainCreateChildXmlArgs => SnapshotRet, since "0.8.0";
        => Domain::snapshot_create_xml(dom = self, xml_desc, flags) -> snap[0];
    /// `virDomainSnapshotGetXMLDesc`.
    DomainSnapshotGetXmlDesc = 186: SnapshotFlagsArgs => XmlRet, since "0.8.0";
        => DomainSnapshot::xml_desc(snap = self, flags) -> xml[0];
    /// `virDomainSnapshotNum`.
    DomainSnapshotNum = 187: DomainFlagsArgs => NumRet, since "0.8.0";
        => Domain::snapshot_num(dom = self, flags) -> num[0];
    /// `virDomainSnapshotListNames` (legacy; prefer [`DomainListAllSnapshots`]).
    DomainSnapshotListNames = 188: DomainSnapshotListNamesArgs => SnapshotNamesRet, since "0.8.0";
        => Domain::snapshot_list_names(dom = self, maxnames, flags) -> names[0];
    /// `virDomainSnapshotLookupByName`.
    DomainSnapshotLookupByName = 189: DomainChildLookupArgs => SnapshotRet, since "0.8.0";
        => Domain::snapshot_lookup_by_name(dom = self, name, flags) -> snap[0];
    /// `virDomainHasCurrentSnapshot`.
    DomainHasCurrentSnapshot = 190: DomainFlagsArgs => DomainResultRet, since "0.8.0";
        => Domain::has_current_snapshot(dom = self, flags) -> result[0] as bool;
    /// `virDomainSnapshotCurrent`.
    DomainSnapshotCurrent = 191: DomainFlagsArgs => SnapshotRet, since "0.8.0";
        => Domain::snapshot_current(dom = self, flags) -> snap[0];
    /// `virDomainRevertToSnapshot`.
    DomainRevertToSnapshot = 192: SnapshotFlagsArgs => (), since "0.8.0";
        => DomainSnapshot::revert(snap = self, flags);
    /// `virDomainSnapshotDelete`.
    DomainSnapshotDelete = 193: SnapshotFlagsArgs => (), since "0.8.0";
        => DomainSnapshot::delete(snap = self, flags);
    /// `virDomainSnapshotGetParent`.
    DomainSnapshotGetParent = 244: SnapshotFlagsArgs => SnapshotRet, since "0.9.7";
        => DomainSnapshot::parent(snap = self, flags) -> snap[0];
    /// `virDomainSnapshotNumChildren`.
    DomainSnapshotNumChildren = 246: SnapshotFlagsArgs => NumRet, since "0.9.7";
        => DomainSnapshot::num_children(snap = self, flags) -> num[0];
    /// `virDomainSnapshotListChildrenNames` (legacy; prefer
    /// [`DomainSnapshotListAllChildren`]).
    DomainSnapshotListChildrenNames = 247:
        DomainSnapshotListChildrenNamesArgs => SnapshotNamesRet, since "0.9.7";
        => DomainSnapshot::list_children_names(snap = self, maxnames, flags) -> names[0];
    /// `virDomainSnapshotIsCurrent`.
    DomainSnapshotIsCurrent = 271: SnapshotFlagsArgs => SnapshotIsCurrentRet, since "0.9.13";
        => DomainSnapshot::is_current(snap = self, flags) -> current[0] as bool;
    /// `virDomainSnapshotHasMetadata`.
    DomainSnapshotHasMetadata = 272: SnapshotFlagsArgs => SnapshotHasMetadataRet, since "0.9.13";
        => DomainSnapshot::has_metadata(snap = self, flags) -> metadata[0] as bool;
    /// `virDomainListAllSnapshots`.
    DomainListAllSnapshots = 274: DomainListAllSnapshotsArgs => SnapshotListRet, since "0.9.13";
        => Domain::list_all_snapshots(dom = self, need_results = 1, flags) -> snapshots[0];
    /// `virDomainSnapshotListAllChildren`.
    DomainSnapshotListAllChildren = 275: SnapshotListAllChildrenArgs => SnapshotListRet, since "0.9.13";
        => DomainSnapshot::list_all_children(snap = self, need_results = 1, flags) -> snapshots[0];
    /// `virDomainCheckpointCreateXML`.
    DomainCheckpointCreateXml = 411: DomainCreateChildXmlArgs => CheckpointRet, since "5.6.0";
        => Domain::checkpoint_create_xml(dom = self, xml_desc, flags) -> checkpoint[0];
    /// `virDomainCheckpointGetXMLDesc`.
    DomainCheckpointGetXmlDesc = 412: CheckpointFlagsArgs => XmlRet, since "5.6.0";
        => DomainCheckpoint::xml_desc(checkpoint = self, flags) -> xml[0];
    /// `virDomainListAllCheckpoints`.
    DomainListAllCheckpoints = 413: DomainListAllCheckpointsArgs => CheckpointListRet, since "5.6.0";
        => Domain::list_all_checkpoints(dom = self, need_results = 1, flags) -> checkpoints[0];
    /// `virDomainCheckpointListAllChildren`.
    DomainCheckpointListAllChildren = 414: CheckpointListAllChildrenArgs => CheckpointListRet, since "5.6.0";
        => DomainCheckpoint::list_all_children(checkpoint = self, need_results = 1, flags) -> checkpoints[0];
    /// `virDomainCheckpointLookupByName`.
    DomainCheckpointLookupByName = 415: DomainChildLookupArgs => CheckpointRet, since "5.6.0";
        => Domain::checkpoint_lookup_by_name(dom = self, name, flags) -> checkpoint[0];
    /// `virDomainCheckpointGetParent`.
    DomainCheckpointGetParent = 416: CheckpointFlagsArgs => CheckpointRet, since "5.6.0";
        => DomainCheckpoint::parent(checkpoint = self, flags) -> checkpoint[0];
    /// `virDomainCheckpointDelete`.
    DomainCheckpointDelete = 417: CheckpointFlagsArgs => (), since "5.6.0";
        => DomainCheckpoint::delete(checkpoint = self, flags);
}
