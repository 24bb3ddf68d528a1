//! Domain snapshot and checkpoint procedures.

use super::common::{NumRet, XmlRet};
use super::domain::{DomainFlagsArgs, DomainResultRet};
use crate::proto::types::{NonnullDomain, NonnullDomainCheckpoint, NonnullDomainSnapshot};
use crate::proto::{limits, procedures};
use crate::wire::xdr::{LvString, xdr_struct};

crate::proto::flags::flag_set! {
    /// `virDomainSnapshotCreateFlags` for [`DomainSnapshotCreateXml`].
    pub struct DomainSnapshotCreateFlags: u32 {
        /// Restore or alter metadata of an existing snapshot.
        const REDEFINE = 1;
        /// Make the snapshot current.
        const CURRENT = 2;
        /// Metadata only; no data is saved.
        const NO_METADATA = 4;
        /// Stop the domain after the snapshot.
        const HALT = 8;
        /// Disk state only.
        const DISK_ONLY = 16;
        /// Reuse existing external files.
        const REUSE_EXT = 32;
        /// Quiesce guest file systems (needs the agent).
        const QUIESCE = 64;
        /// Atomic across disks.
        const ATOMIC = 128;
        /// Live snapshot.
        const LIVE = 256;
        /// Validate the XML.
        const VALIDATE = 512;
    }
}

crate::proto::flags::flag_set! {
    /// `virDomainSnapshotDeleteFlags` for [`DomainSnapshotDelete`].
    pub struct DomainSnapshotDeleteFlags: u32 {
        /// Also delete children.
        const CHILDREN = 1;
        /// Delete metadata only.
        const METADATA_ONLY = 2;
        /// Delete only the children.
        const CHILDREN_ONLY = 4;
    }
}

crate::proto::flags::flag_set! {
    /// `virDomainSnapshotRevertFlags` for [`DomainRevertToSnapshot`].
    pub struct DomainSnapshotRevertFlags: u32 {
        /// Run after revert.
        const RUNNING = 1;
        /// Pause after revert.
        const PAUSED = 2;
        /// Allow risky reverts.
        const FORCE = 4;
        /// Re-initialize NVRAM.
        const RESET_NVRAM = 8;
    }
}

crate::proto::flags::flag_set! {
    /// `virDomainSnapshotListFlags` for the snapshot counts and lists
    /// ([`DomainListAllSnapshots`], [`DomainSnapshotListAllChildren`], [`DomainSnapshotNum`],
    /// …). Bits come in groups; a group with no bit set does not filter.
    pub struct DomainSnapshotListFlags: u32 {
        /// Listing a domain: only snapshots without a parent.
        const ROOTS = 1;
        /// Listing a snapshot: every descendant, not only the children (the same bit as
        /// [`ROOTS`](Self::ROOTS)).
        const DESCENDANTS = 1;
        /// Snapshots with libvirt metadata.
        const METADATA = 2;
        /// Snapshots without children.
        const LEAVES = 4;
        /// Snapshots with children.
        const NO_LEAVES = 8;
        /// Snapshots without libvirt metadata.
        const NO_METADATA = 16;
        /// Taken while the guest was shut off.
        const INACTIVE = 32;
        /// Taken while the guest was running, with its memory.
        const ACTIVE = 64;
        /// Taken while the guest was running, disks only.
        const DISK_ONLY = 128;
        /// Stored inside the disk images.
        const INTERNAL = 256;
        /// Stored in files beside the disk images.
        const EXTERNAL = 512;
        /// Parents before their children in the result.
        const TOPOLOGICAL = 1024;
    }
}

crate::proto::flags::flag_set! {
    /// `virDomainSnapshotXMLFlags` for [`DomainSnapshotGetXmlDesc`].
    pub struct DomainSnapshotXmlFlags: u32 {
        /// Include security-sensitive data.
        const SECURE = 1;
    }
}

xdr_struct! {
    /// `{ snap; flags }`: most snapshot procedures.
    pub struct SnapshotFlagsArgs<F = u32> {
        /// The snapshot.
        pub snap: NonnullDomainSnapshot,
        /// Procedure-specific flags.
        pub flags: F,
    }
}

xdr_struct! {
    /// A return holding just a snapshot.
    pub struct SnapshotRet {
        /// The snapshot.
        pub snap: NonnullDomainSnapshot,
    }
}

xdr_struct! {
    /// `{ dom; xml_desc; flags }`: snapshot and checkpoint creation.
    pub struct DomainCreateChildXmlArgs<F = u32> {
        /// The domain.
        pub dom: NonnullDomain,
        /// Snapshot or checkpoint XML.
        pub xml_desc: LvString,
        /// [`DomainSnapshotCreateFlags`] or `virDomainCheckpointCreateFlags`.
        pub flags: F,
    }
}

xdr_struct! {
    /// `{ dom; name; flags }`: snapshot and checkpoint lookup by name.
    pub struct DomainChildLookupArgs {
        /// The domain.
        pub dom: NonnullDomain,
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
        pub dom: NonnullDomain,
        /// Most names wanted.
        pub maxnames: i32,
        /// `virDomainSnapshotListFlags`.
        pub flags: DomainSnapshotListFlags,
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
        pub dom: NonnullDomain,
        /// Non-zero to get the snapshots; zero returns only the count.
        pub need_results: i32,
        /// `virDomainSnapshotListFlags`.
        pub flags: DomainSnapshotListFlags,
    }
}

xdr_struct! {
    /// `remote_domain_snapshot_list_all_children_args`.
    pub struct SnapshotListAllChildrenArgs {
        /// The parent snapshot.
        pub snap: NonnullDomainSnapshot,
        /// Non-zero to get the snapshots; zero returns only the count.
        pub need_results: i32,
        /// `virDomainSnapshotListFlags`.
        pub flags: DomainSnapshotListFlags,
    }
}

xdr_struct! {
    /// `remote_domain_list_all_snapshots_ret` (also for children).
    pub struct SnapshotListRet {
        /// The snapshots.
        pub snapshots: Vec<NonnullDomainSnapshot> [limits::DOMAIN_SNAPSHOT_LIST_MAX],
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
        pub checkpoint: NonnullDomainCheckpoint,
        /// Procedure-specific flags.
        pub flags: u32,
    }
}

xdr_struct! {
    /// A return holding just a checkpoint.
    pub struct CheckpointRet {
        /// The checkpoint.
        pub checkpoint: NonnullDomainCheckpoint,
    }
}

xdr_struct! {
    /// `remote_domain_list_all_checkpoints_args`.
    pub struct DomainListAllCheckpointsArgs {
        /// The domain.
        pub dom: NonnullDomain,
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
        pub checkpoint: NonnullDomainCheckpoint,
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
        pub checkpoints: Vec<NonnullDomainCheckpoint> [limits::DOMAIN_CHECKPOINT_LIST_MAX],
        /// Count.
        pub ret: i32,
    }
}

xdr_struct! {
    /// `remote_domain_snapshot_list_children_names_args`.
    pub struct DomainSnapshotListChildrenNamesArgs {
        /// The parent snapshot.
        pub snap: NonnullDomainSnapshot,
        /// Most names wanted.
        pub maxnames: i32,
        /// `virDomainSnapshotListFlags`.
        pub flags: DomainSnapshotListFlags,
    }
}

/// This module's procedure table as data: `rows!(callback)` hands every row to `callback!`,
/// as quinn's `apply_params!` does. [`procedures!`](crate::proto::procedures) declares the types
/// and the table from the rows; the client expands the same rows into the object API.
macro_rules! rows { ($callback:ident) => { $callback! {
    [snapshot]
    table PROCEDURES;
    /// `virDomainSnapshotCreateXML`.
    DomainSnapshotCreateXml = 185: DomainCreateChildXmlArgs<DomainSnapshotCreateFlags> => SnapshotRet, since "0.8.0";
        => Domain::snapshot_create_xml(dom = self, xml_desc, flags) -> snap[0];
    /// `virDomainSnapshotGetXMLDesc`.
    DomainSnapshotGetXmlDesc = 186: SnapshotFlagsArgs<DomainSnapshotXmlFlags> => XmlRet, since "0.8.0";
        => DomainSnapshot::xml_desc(snap = self, flags) -> xml[0];
    /// `virDomainSnapshotNum`.
    DomainSnapshotNum = 187: DomainFlagsArgs<DomainSnapshotListFlags> => NumRet, since "0.8.0";
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
    DomainRevertToSnapshot = 192: SnapshotFlagsArgs<DomainSnapshotRevertFlags> => (), since "0.8.0";
        => DomainSnapshot::revert(snap = self, flags);
    /// `virDomainSnapshotDelete`.
    DomainSnapshotDelete = 193: SnapshotFlagsArgs<DomainSnapshotDeleteFlags> => (), since "0.8.0";
        => DomainSnapshot::delete(snap = self, flags);
    /// `virDomainSnapshotGetParent`.
    DomainSnapshotGetParent = 244: SnapshotFlagsArgs => SnapshotRet, since "0.9.7";
        => DomainSnapshot::parent(snap = self, flags) -> snap[0];
    /// `virDomainSnapshotNumChildren`.
    DomainSnapshotNumChildren = 246: SnapshotFlagsArgs<DomainSnapshotListFlags> => NumRet, since "0.9.7";
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
} } }
#[allow(unused_imports)] // expanded by the layers above, when they are built
pub(crate) use rows;

rows!(procedures);
