//! Domain procedures: lifecycle, definition, devices, resources, guest agent, block jobs,
//! metadata, addresses, statistics, backups, save/restore, console/screenshot streams.
//!
//! Snapshots and checkpoints live in [`super::snapshot`], typed-parameter tuning and CPU
//! pinning in [`super::domain_tune`], migration in [`super::migration`].
use bytes::Bytes;

use super::common::{
    ActiveRet, AutostartRet, NameArgs, NumRet, PersistentRet, UuidArgs, XmlArgs, XmlFlagsArgs,
    XmlRet,
};
use crate::procedures;
use crate::proto::StreamArgs;
use crate::proto::limits;
use crate::proto::types::{CharVec, Domain, TypedParam};
use crate::wire::xdr::LvString;
use crate::xdr_struct;

/// `virDomainState`, as returned by [`DomainGetState`] and [`DomainGetInfo`]; to print one,
/// [`DomainState`](crate::proto::DomainState) (or [`DomainGetStateRet::named`]).
pub mod state {
    /// No state.
    pub const NOSTATE: i32 = 0;
    /// Running.
    pub const RUNNING: i32 = 1;
    /// Blocked on a resource.
    pub const BLOCKED: i32 = 2;
    /// Paused by the user.
    pub const PAUSED: i32 = 3;
    /// Being shut down.
    pub const SHUTDOWN: i32 = 4;
    /// Shut off.
    pub const SHUTOFF: i32 = 5;
    /// Crashed.
    pub const CRASHED: i32 = 6;
    /// Suspended by guest power management.
    pub const PMSUSPENDED: i32 = 7;
}

/// `virDomainShutoffReason`: the reason [`DomainGetState`] reports with [`state::SHUTOFF`].
pub mod shutoff_reason {
    /// Unknown (also: defined and never started).
    pub const UNKNOWN: i32 = 0;
    /// Normal shutdown.
    pub const SHUTDOWN: i32 = 1;
    /// Forced poweroff (destroy).
    pub const DESTROYED: i32 = 2;
    /// The domain crashed.
    pub const CRASHED: i32 = 3;
    /// Migrated to another host.
    pub const MIGRATED: i32 = 4;
    /// Saved to a file.
    pub const SAVED: i32 = 5;
    /// The domain failed to start.
    pub const FAILED: i32 = 6;
    /// Restored from a snapshot taken while shut off.
    pub const FROM_SNAPSHOT: i32 = 7;
    /// The daemon killed it while reconnecting.
    pub const DAEMON: i32 = 8;
}

/// `virDomainModificationImpact`: which definition a change applies to. Most `*_FLAGS`
/// procedures that modify a domain take these in their low bits.
pub mod affect_flags {
    /// The current state: live if running, else the persistent config.
    pub const CURRENT: u32 = 0;
    /// The running domain.
    pub const LIVE: u32 = 1;
    /// The persistent configuration.
    pub const CONFIG: u32 = 2;
}

/// `virDomainCreateFlags` for [`DomainCreateWithFlags`] and [`DomainCreateXml`].
pub mod create_flags {
    /// Default behaviour.
    pub const NONE: u32 = 0;
    /// Leave the guest paused.
    pub const START_PAUSED: u32 = 1;
    /// Destroy the guest when the connection closes.
    pub const START_AUTODESTROY: u32 = 2;
    /// Bypass the host page cache when restoring a managed save image.
    pub const START_BYPASS_CACHE: u32 = 4;
    /// Boot, discarding any managed save image.
    pub const START_FORCE_BOOT: u32 = 8;
    /// Validate the XML against the schema.
    pub const START_VALIDATE: u32 = 16;
    /// Re-initialize NVRAM from its template.
    pub const START_RESET_NVRAM: u32 = 32;
}

/// `virDomainDefineFlags` for [`DomainDefineXmlFlags`].
pub mod define_flags {
    /// Validate the XML against the schema.
    pub const VALIDATE: u32 = 1;
}

/// `virDomainDestroyFlagsValues` for [`DomainDestroyFlags`].
pub mod destroy_flags {
    /// Kill the guest (SIGTERM, then SIGKILL).
    pub const DEFAULT: u32 = 0;
    /// Only SIGTERM; fail if the guest does not exit.
    pub const GRACEFUL: u32 = 1;
    /// Remove the domain's log files (newer daemons only).
    pub const REMOVE_LOGS: u32 = 2;
}

/// `virDomainUndefineFlagsValues` for [`DomainUndefineFlags`].
pub mod undefine_flags {
    /// Also remove the managed save image.
    pub const MANAGED_SAVE: u32 = 1;
    /// Also remove snapshot metadata.
    pub const SNAPSHOTS_METADATA: u32 = 2;
    /// Also remove NVRAM.
    pub const NVRAM: u32 = 4;
    /// Keep NVRAM.
    pub const KEEP_NVRAM: u32 = 8;
    /// Also remove checkpoint metadata.
    pub const CHECKPOINTS_METADATA: u32 = 16;
    /// Also remove TPM state.
    pub const TPM: u32 = 32;
    /// Keep TPM state.
    pub const KEEP_TPM: u32 = 64;
}

/// `virDomainShutdownFlagValues` / `virDomainRebootFlagValues` for [`DomainShutdownFlags`]
/// and [`DomainReboot`] (0 lets the hypervisor pick).
pub mod shutdown_flags {
    /// Hypervisor's choice.
    pub const DEFAULT: u32 = 0;
    /// ACPI power button.
    pub const ACPI_POWER_BTN: u32 = 1;
    /// Guest agent.
    pub const GUEST_AGENT: u32 = 2;
    /// initctl.
    pub const INITCTL: u32 = 4;
    /// A signal.
    pub const SIGNAL: u32 = 8;
    /// Paravirt guest control.
    pub const PARAVIRT: u32 = 16;
}

/// `virDomainXMLFlags` for [`DomainGetXmlDesc`].
pub mod xml_flags {
    /// Include security-sensitive data.
    pub const SECURE: u32 = 1;
    /// The persistent definition rather than the live one.
    pub const INACTIVE: u32 = 2;
    /// Update guest CPU requirements from the host.
    pub const UPDATE_CPU: u32 = 4;
    /// XML suitable for migration.
    pub const MIGRATABLE: u32 = 8;
}

/// `virDomainDeviceModifyFlags` for the attach/detach/update device procedures.
pub mod device_modify_flags {
    /// See [`super::affect_flags::CURRENT`].
    pub const CURRENT: u32 = 0;
    /// The running domain.
    pub const LIVE: u32 = 1;
    /// The persistent configuration.
    pub const CONFIG: u32 = 2;
    /// Force the change (e.g. eject a locked CD-ROM).
    pub const FORCE: u32 = 4;
}

/// `virDomainMemoryModFlags` for [`DomainSetMemoryFlags`].
pub mod mem_flags {
    /// See [`super::affect_flags::CURRENT`].
    pub const CURRENT: u32 = 0;
    /// The running domain.
    pub const LIVE: u32 = 1;
    /// The persistent configuration.
    pub const CONFIG: u32 = 2;
    /// Change the maximum rather than the current allocation.
    pub const MAXIMUM: u32 = 4;
}

/// `virDomainVcpuFlags` for [`DomainSetVcpusFlags`] and [`DomainGetVcpusFlags`].
pub mod vcpu_flags {
    /// See [`super::affect_flags::CURRENT`].
    pub const CURRENT: u32 = 0;
    /// The running domain.
    pub const LIVE: u32 = 1;
    /// The persistent configuration.
    pub const CONFIG: u32 = 2;
    /// The maximum rather than the current count.
    pub const MAXIMUM: u32 = 4;
    /// Ask the guest agent (guest-visible CPUs).
    pub const GUEST: u32 = 8;
    /// Make added vCPUs hot-unpluggable.
    pub const HOTPLUGGABLE: u32 = 16;
}

/// `virDomainSaveRestoreFlags` for save, restore and managed save.
pub mod save_restore_flags {
    /// Bypass the host page cache.
    pub const BYPASS_CACHE: u32 = 1;
    /// Run the guest after restore.
    pub const RUNNING: u32 = 2;
    /// Leave the guest paused after restore.
    pub const PAUSED: u32 = 4;
    /// Re-initialize NVRAM from its template.
    pub const RESET_NVRAM: u32 = 8;
}

/// `virDomainBlockResizeFlags` for [`DomainBlockResize`].
pub mod block_resize_flags {
    /// `size` is in bytes, not KiB.
    pub const BYTES: u32 = 1;
    /// Resize to the full capacity of the backing storage (newer daemons only).
    pub const CAPACITY: u32 = 2;
}

/// `virDomainInterfaceAddressesSource` for [`DomainInterfaceAddresses`].
pub mod interface_addresses_source {
    /// DHCP leases of libvirt-managed networks.
    pub const LEASE: u32 = 0;
    /// The guest agent.
    pub const AGENT: u32 = 1;
    /// The host's ARP table.
    pub const ARP: u32 = 2;
}

/// `virIPAddrType` in [`DomainIpAddr::kind`] (and network DHCP leases).
pub mod ip_addr_type {
    /// IPv4.
    pub const IPV4: i32 = 0;
    /// IPv6.
    pub const IPV6: i32 = 1;
}

/// `virDomainMetadataType` for [`DomainSetMetadata`] / [`DomainGetMetadata`].
pub mod metadata_type {
    /// `<description>`.
    pub const DESCRIPTION: i32 = 0;
    /// `<title>`.
    pub const TITLE: i32 = 1;
    /// An element of `<metadata>` in a namespace (needs `uri`).
    pub const ELEMENT: i32 = 2;
}

/// `virDomainGetHostnameFlags` for [`DomainGetHostname`] (0: the hypervisor's choice).
pub mod hostname_source {
    /// Use DHCP leases.
    pub const LEASE: u32 = 1;
    /// Ask the guest agent.
    pub const AGENT: u32 = 2;
}

xdr_struct! {
    /// Args holding just a domain (`remote_domain_create_args`, `…_destroy_args`, …).
    pub struct DomainArgs {
        /// The domain.
        pub dom: Domain,
    }
}

xdr_struct! {
    /// Args holding a domain and flags.
    pub struct DomainFlagsArgs {
        /// The domain.
        pub dom: Domain,
        /// Procedure-specific flags.
        pub flags: u32,
    }
}

xdr_struct! {
    /// A return holding just a domain.
    pub struct DomainRet {
        /// The domain.
        pub dom: Domain,
    }
}

/// `remote_domain_lookup_by_name_args`.
pub type DomainLookupByNameArgs = NameArgs;
/// `remote_domain_lookup_by_uuid_args`.
pub type DomainLookupByUuidArgs = UuidArgs;
/// `remote_domain_define_xml_args`.
pub type DomainDefineXmlArgs = XmlArgs;
/// `remote_domain_define_xml_flags_args` (flags: [`define_flags`]).
pub type DomainDefineXmlFlagsArgs = XmlFlagsArgs;

xdr_struct! {
    /// `remote_domain_lookup_by_id_args`.
    pub struct DomainLookupByIdArgs {
        /// Runtime id.
        pub id: i32,
    }
}

xdr_struct! {
    /// `remote_domain_create_xml_args`: start a transient domain.
    pub struct DomainCreateXmlArgs {
        /// Domain XML.
        pub xml_desc: LvString,
        /// [`create_flags`].
        pub flags: u32,
    }
}

xdr_struct! {
    /// `{ dom; xml }`: `remote_domain_attach_device_args`, `…_detach_device_args`.
    pub struct DomainXmlArgs {
        /// The domain.
        pub dom: Domain,
        /// Device XML.
        pub xml: LvString,
    }
}

xdr_struct! {
    /// `{ dom; xml; flags }`: attach/detach/update device with flags.
    pub struct DomainXmlFlagsArgs {
        /// The domain.
        pub dom: Domain,
        /// Device XML.
        pub xml: LvString,
        /// [`device_modify_flags`].
        pub flags: u32,
    }
}

xdr_struct! {
    /// `remote_domain_detach_device_alias_args`.
    pub struct DomainDetachDeviceAliasArgs {
        /// The domain.
        pub dom: Domain,
        /// Device alias (`<alias name=…>`).
        pub alias: LvString,
        /// [`device_modify_flags`].
        pub flags: u32,
    }
}

xdr_struct! {
    /// `remote_domain_get_state_ret`.
    pub struct DomainGetStateRet {
        /// [`state`].
        pub state: i32,
        /// State-specific reason.
        pub reason: i32,
    }
}

xdr_struct! {
    /// `remote_domain_get_info_ret`. rpcgen's `unsigned char` and `unsigned short` are
    /// 4 bytes on the wire, hence `u32`.
    pub struct DomainGetInfoRet {
        /// [`state`] (an `unsigned char` in C).
        pub state: u32,
        /// Maximum memory in KiB.
        pub max_mem: u64,
        /// Current memory in KiB.
        pub memory: u64,
        /// vCPU count (an `unsigned short` in C).
        pub nr_virt_cpu: u32,
        /// CPU time used, in nanoseconds.
        pub cpu_time: u64,
    }
}

xdr_struct! {
    /// `remote_domain_get_max_memory_ret`.
    pub struct DomainGetMaxMemoryRet {
        /// Maximum memory in KiB.
        pub memory: u64,
    }
}

xdr_struct! {
    /// `remote_domain_get_os_type_ret`.
    pub struct DomainGetOsTypeRet {
        /// OS type, e.g. `hvm`.
        pub kind: LvString,
    }
}

xdr_struct! {
    /// `remote_domain_set_autostart_args`.
    pub struct DomainSetAutostartArgs {
        /// The domain.
        pub dom: Domain,
        /// 1 to start with the daemon.
        pub autostart: i32,
    }
}

xdr_struct! {
    /// `remote_domain_set_memory_args` / `…_set_max_memory_args`.
    pub struct DomainSetMemoryArgs {
        /// The domain.
        pub dom: Domain,
        /// Memory in KiB.
        pub memory: u64,
    }
}

xdr_struct! {
    /// `remote_domain_set_memory_flags_args`.
    pub struct DomainSetMemoryFlagsArgs {
        /// The domain.
        pub dom: Domain,
        /// Memory in KiB.
        pub memory: u64,
        /// [`mem_flags`].
        pub flags: u32,
    }
}

xdr_struct! {
    /// `remote_domain_set_vcpus_args`.
    pub struct DomainSetVcpusArgs {
        /// The domain.
        pub dom: Domain,
        /// vCPU count.
        pub nvcpus: u32,
    }
}

xdr_struct! {
    /// `remote_domain_set_vcpus_flags_args`.
    pub struct DomainSetVcpusFlagsArgs {
        /// The domain.
        pub dom: Domain,
        /// vCPU count.
        pub nvcpus: u32,
        /// [`vcpu_flags`].
        pub flags: u32,
    }
}

xdr_struct! {
    /// `remote_vcpu_info`.
    pub struct VcpuInfo {
        /// vCPU number.
        pub number: u32,
        /// `virVcpuState` (OFFLINE 0, RUNNING 1, BLOCKED 2).
        pub state: i32,
        /// CPU time used, in nanoseconds.
        pub cpu_time: u64,
        /// Host CPU it runs on.
        pub cpu: i32,
    }
}

xdr_struct! {
    /// `remote_domain_get_vcpus_args`.
    pub struct DomainGetVcpusArgs {
        /// The domain.
        pub dom: Domain,
        /// Most entries wanted.
        pub maxinfo: i32,
        /// Bytes per CPU map (0: no maps).
        pub maplen: i32,
    }
}

xdr_struct! {
    /// `remote_domain_get_vcpus_ret`.
    pub struct DomainGetVcpusRet {
        /// One entry per vCPU.
        pub info: Vec<VcpuInfo> [limits::VCPUINFO_MAX],
        /// `maplen` bytes of affinity bitmap per vCPU, concatenated.
        pub cpumaps: Bytes [limits::CPUMAPS_MAX],
    }
}

xdr_struct! {
    /// `remote_domain_pin_vcpu_args`.
    pub struct DomainPinVcpuArgs {
        /// The domain.
        pub dom: Domain,
        /// vCPU number.
        pub vcpu: u32,
        /// Host CPU bitmap.
        pub cpumap: Bytes [limits::CPUMAP_MAX],
    }
}

xdr_struct! {
    /// `remote_domain_pin_vcpu_flags_args`.
    pub struct DomainPinVcpuFlagsArgs {
        /// The domain.
        pub dom: Domain,
        /// vCPU number.
        pub vcpu: u32,
        /// Host CPU bitmap.
        pub cpumap: Bytes [limits::CPUMAP_MAX],
        /// [`affect_flags`].
        pub flags: u32,
    }
}

xdr_struct! {
    /// `remote_domain_set_guest_vcpus_args` / `remote_domain_set_vcpu_args`.
    pub struct DomainSetGuestVcpusArgs {
        /// The domain.
        pub dom: Domain,
        /// CPU list, e.g. `1-3,^2`.
        pub cpumap: LvString,
        /// 1 to enable, 0 to disable.
        pub state: i32,
        /// Procedure-specific flags.
        pub flags: u32,
    }
}

xdr_struct! {
    /// `remote_domain_get_guest_vcpus_ret`.
    pub struct DomainGetGuestVcpusRet {
        /// `vcpus`, `online`, `offlinable` as typed parameters.
        pub params: Vec<TypedParam> [limits::DOMAIN_GUEST_VCPU_PARAMS_MAX],
    }
}

xdr_struct! {
    /// `remote_domain_core_dump_args`.
    pub struct DomainCoreDumpArgs {
        /// The domain.
        pub dom: Domain,
        /// Path on the host.
        pub to: LvString,
        /// `virDomainCoreDumpFlags`.
        pub flags: u32,
    }
}

xdr_struct! {
    /// `remote_domain_save_args`.
    pub struct DomainSaveArgs {
        /// The domain.
        pub dom: Domain,
        /// Path on the host.
        pub to: LvString,
    }
}

xdr_struct! {
    /// `remote_domain_save_flags_args`.
    pub struct DomainSaveFlagsArgs {
        /// The domain.
        pub dom: Domain,
        /// Path on the host.
        pub to: LvString,
        /// Replacement XML to store in the image.
        pub dxml: Option<LvString>,
        /// [`save_restore_flags`].
        pub flags: u32,
    }
}

xdr_struct! {
    /// `remote_domain_restore_args`.
    pub struct DomainRestoreArgs {
        /// Path on the host.
        pub from: LvString,
    }
}

xdr_struct! {
    /// `remote_domain_restore_flags_args`.
    pub struct DomainRestoreFlagsArgs {
        /// Path on the host.
        pub from: LvString,
        /// Replacement XML.
        pub dxml: Option<LvString>,
        /// [`save_restore_flags`].
        pub flags: u32,
    }
}

xdr_struct! {
    /// `remote_domain_save_image_get_xml_desc_args`.
    pub struct DomainSaveImageGetXmlDescArgs {
        /// Path of the save image.
        pub file: LvString,
        /// [`xml_flags`].
        pub flags: u32,
    }
}

xdr_struct! {
    /// `remote_domain_save_image_define_xml_args`.
    pub struct DomainSaveImageDefineXmlArgs {
        /// Path of the save image.
        pub file: LvString,
        /// Replacement XML.
        pub dxml: LvString,
        /// [`save_restore_flags`].
        pub flags: u32,
    }
}

xdr_struct! {
    /// `remote_domain_managed_save_define_xml_args`.
    pub struct DomainManagedSaveDefineXmlArgs {
        /// The domain.
        pub dom: Domain,
        /// Replacement XML.
        pub dxml: Option<LvString>,
        /// [`save_restore_flags`].
        pub flags: u32,
    }
}

xdr_struct! {
    /// `{ int result; }`: `remote_domain_has_managed_save_image_ret` and others.
    pub struct DomainResultRet {
        /// 1 for yes, 0 for no.
        pub result: i32,
    }
}

xdr_struct! {
    /// `remote_domain_is_updated_ret`.
    pub struct DomainIsUpdatedRet {
        /// 1 when the live config differs from the persistent one.
        pub updated: i32,
    }
}

xdr_struct! {
    /// `remote_domain_get_scheduler_type_ret`.
    pub struct DomainGetSchedulerTypeRet {
        /// Scheduler name, e.g. `posix`.
        pub kind: LvString,
        /// Number of scheduler parameters.
        pub nparams: i32,
    }
}

xdr_struct! {
    /// `{ dom; nparams; flags }`: the typed-parameter getters (memory, blkio, scheduler).
    /// Call with `nparams = 0` first to learn the count.
    pub struct DomainGetParamsArgs {
        /// The domain.
        pub dom: Domain,
        /// Parameters wanted (0: just report how many exist).
        pub nparams: i32,
        /// [`affect_flags`].
        pub flags: u32,
    }
}

xdr_struct! {
    /// `remote_domain_get_memory_parameters_ret`.
    pub struct DomainGetMemoryParametersRet {
        /// The parameters (`hard_limit`, `soft_limit`, …).
        pub params: Vec<TypedParam> [limits::DOMAIN_MEMORY_PARAMETERS_MAX],
        /// Number of parameters available.
        pub nparams: i32,
    }
}

xdr_struct! {
    /// `remote_domain_set_memory_parameters_args`.
    pub struct DomainSetMemoryParametersArgs {
        /// The domain.
        pub dom: Domain,
        /// The parameters to change.
        pub params: Vec<TypedParam> [limits::DOMAIN_MEMORY_PARAMETERS_MAX],
        /// [`affect_flags`].
        pub flags: u32,
    }
}

xdr_struct! {
    /// `remote_domain_get_blkio_parameters_ret`.
    pub struct DomainGetBlkioParametersRet {
        /// The parameters (`weight`, `device_weight`, …).
        pub params: Vec<TypedParam> [limits::DOMAIN_BLKIO_PARAMETERS_MAX],
        /// Number of parameters available.
        pub nparams: i32,
    }
}

xdr_struct! {
    /// `remote_domain_set_blkio_parameters_args`.
    pub struct DomainSetBlkioParametersArgs {
        /// The domain.
        pub dom: Domain,
        /// The parameters to change.
        pub params: Vec<TypedParam> [limits::DOMAIN_BLKIO_PARAMETERS_MAX],
        /// [`affect_flags`].
        pub flags: u32,
    }
}

xdr_struct! {
    /// `remote_domain_get_scheduler_parameters_flags_ret`.
    pub struct DomainGetSchedulerParametersRet {
        /// The parameters (`cpu_shares`, `vcpu_quota`, …).
        pub params: Vec<TypedParam> [limits::DOMAIN_SCHEDULER_PARAMETERS_MAX],
    }
}

xdr_struct! {
    /// `remote_domain_set_scheduler_parameters_flags_args`.
    pub struct DomainSetSchedulerParametersFlagsArgs {
        /// The domain.
        pub dom: Domain,
        /// The parameters to change.
        pub params: Vec<TypedParam> [limits::DOMAIN_SCHEDULER_PARAMETERS_MAX],
        /// [`affect_flags`].
        pub flags: u32,
    }
}

xdr_struct! {
    /// `remote_domain_block_stats_args`.
    pub struct DomainBlockStatsArgs {
        /// The domain.
        pub dom: Domain,
        /// Disk target (`vda`) or source path.
        pub path: LvString,
    }
}

xdr_struct! {
    /// `remote_domain_block_stats_ret` (-1 where unknown).
    pub struct DomainBlockStatsRet {
        /// Read requests.
        pub rd_req: i64,
        /// Bytes read.
        pub rd_bytes: i64,
        /// Write requests.
        pub wr_req: i64,
        /// Bytes written.
        pub wr_bytes: i64,
        /// Errors.
        pub errs: i64,
    }
}

xdr_struct! {
    /// `remote_domain_interface_stats_args`.
    pub struct DomainInterfaceStatsArgs {
        /// The domain.
        pub dom: Domain,
        /// Interface target device (`vnet0`) or MAC.
        pub device: LvString,
    }
}

xdr_struct! {
    /// `remote_domain_interface_stats_ret` (-1 where unknown).
    pub struct DomainInterfaceStatsRet {
        /// Bytes received.
        pub rx_bytes: i64,
        /// Packets received.
        pub rx_packets: i64,
        /// Receive errors.
        pub rx_errs: i64,
        /// Receive drops.
        pub rx_drop: i64,
        /// Bytes sent.
        pub tx_bytes: i64,
        /// Packets sent.
        pub tx_packets: i64,
        /// Send errors.
        pub tx_errs: i64,
        /// Send drops.
        pub tx_drop: i64,
    }
}

xdr_struct! {
    /// `remote_domain_memory_stats_args`.
    pub struct DomainMemoryStatsArgs {
        /// The domain.
        pub dom: Domain,
        /// Most statistics wanted.
        pub max_stats: u32,
        /// Must be 0.
        pub flags: u32,
    }
}

xdr_struct! {
    /// `remote_domain_memory_stat`.
    pub struct DomainMemoryStat {
        /// `virDomainMemoryStatTags` (`ACTUAL_BALLOON` 6, `RSS` 7, `AVAILABLE` 5, …).
        pub tag: i32,
        /// Value (KiB for sizes).
        pub val: u64,
    }
}

xdr_struct! {
    /// `remote_domain_memory_stats_ret`.
    pub struct DomainMemoryStatsRet {
        /// The statistics.
        pub stats: Vec<DomainMemoryStat> [limits::DOMAIN_MEMORY_STATS_MAX],
    }
}

xdr_struct! {
    /// `remote_domain_get_block_info_args`.
    pub struct DomainGetBlockInfoArgs {
        /// The domain.
        pub dom: Domain,
        /// Disk target or source path.
        pub path: LvString,
        /// Must be 0.
        pub flags: u32,
    }
}

xdr_struct! {
    /// `remote_domain_get_block_info_ret` (bytes).
    pub struct DomainGetBlockInfoRet {
        /// Host storage in use.
        pub allocation: u64,
        /// Guest-visible size.
        pub capacity: u64,
        /// Host physical size.
        pub physical: u64,
    }
}

xdr_struct! {
    /// `remote_domain_get_job_info_ret` (legacy; [`DomainGetJobStats`] has more).
    pub struct DomainGetJobInfoRet {
        /// `virDomainJobType` (NONE 0, BOUNDED 1, UNBOUNDED 2, COMPLETED 3, FAILED 4,
        /// CANCELLED 5).
        pub kind: i32,
        /// Milliseconds since the job started.
        pub time_elapsed: u64,
        /// Milliseconds left (bounded jobs).
        pub time_remaining: u64,
        /// Total data bytes.
        pub data_total: u64,
        /// Data bytes processed.
        pub data_processed: u64,
        /// Data bytes left.
        pub data_remaining: u64,
        /// Total memory bytes.
        pub mem_total: u64,
        /// Memory bytes processed.
        pub mem_processed: u64,
        /// Memory bytes left.
        pub mem_remaining: u64,
        /// Total file bytes.
        pub file_total: u64,
        /// File bytes processed.
        pub file_processed: u64,
        /// File bytes left.
        pub file_remaining: u64,
    }
}

xdr_struct! {
    /// `remote_domain_get_job_stats_ret`.
    pub struct DomainGetJobStatsRet {
        /// `virDomainJobType`.
        pub kind: i32,
        /// Statistics (`time_elapsed`, `data_processed`, …).
        pub params: Vec<TypedParam> [limits::DOMAIN_JOB_STATS_MAX],
    }
}

xdr_struct! {
    /// `remote_domain_open_graphics_args` = `remote_domain_open_graphics_fd_args`.
    pub struct DomainOpenGraphicsArgs {
        /// The domain.
        pub dom: Domain,
        /// Index of the graphics device in the domain XML.
        pub idx: u32,
        /// `virDomainOpenGraphicsFlags` (`SKIPAUTH` 1).
        pub flags: u32,
    }
}

xdr_struct! {
    /// `remote_domain_fd_associate_args`.
    pub struct DomainFdAssociateArgs {
        /// The domain.
        pub dom: Domain,
        /// Name the descriptors are known by in the domain XML.
        pub name: LvString,
        /// `virDomainFDAssociateFlags` (`SECLABEL_RESTORE` 1, `SECLABEL_WRITABLE` 2).
        pub flags: u32,
    }
}

xdr_struct! {
    /// `remote_domain_open_console_args`.
    pub struct DomainOpenConsoleArgs {
        /// The domain.
        pub dom: Domain,
        /// Console alias; `None` for the first console.
        pub dev_name: Option<LvString>,
        /// `virDomainConsoleFlags` (FORCE 1, SAFE 2).
        pub flags: u32,
    }
}

xdr_struct! {
    /// `remote_domain_open_channel_args`.
    pub struct DomainOpenChannelArgs {
        /// The domain.
        pub dom: Domain,
        /// Channel name; `None` for the first channel.
        pub name: Option<LvString>,
        /// `virDomainChannelFlags` (FORCE 1).
        pub flags: u32,
    }
}

xdr_struct! {
    /// `remote_domain_screenshot_args`.
    pub struct DomainScreenshotArgs {
        /// The domain.
        pub dom: Domain,
        /// Screen number.
        pub screen: u32,
        /// Must be 0.
        pub flags: u32,
    }
}

// Console, channel and screenshot streams are never sparse.
impl StreamArgs for DomainOpenConsoleArgs {}
impl StreamArgs for DomainOpenChannelArgs {}
impl StreamArgs for DomainScreenshotArgs {}

xdr_struct! {
    /// `remote_domain_screenshot_ret`.
    pub struct DomainScreenshotRet {
        /// MIME type of the image that follows on the stream.
        pub mime: Option<LvString>,
    }
}

xdr_struct! {
    /// `remote_domain_send_key_args`.
    pub struct DomainSendKeyArgs {
        /// The domain.
        pub dom: Domain,
        /// `virKeycodeSet` (LINUX 0, XT 1, …, QNUM 9).
        pub codeset: u32,
        /// Milliseconds to hold the keys.
        pub holdtime: u32,
        /// Key codes, pressed together.
        pub keycodes: Vec<u32> [limits::DOMAIN_SEND_KEY_MAX],
        /// Must be 0.
        pub flags: u32,
    }
}

xdr_struct! {
    /// `remote_domain_send_process_signal_args`.
    pub struct DomainSendProcessSignalArgs {
        /// The domain.
        pub dom: Domain,
        /// Guest process id.
        pub pid_value: i64,
        /// `virDomainProcessSignal`.
        pub signum: u32,
        /// Must be 0.
        pub flags: u32,
    }
}

xdr_struct! {
    /// `remote_domain_get_control_info_ret`.
    pub struct DomainGetControlInfoRet {
        /// `virDomainControlState`.
        pub state: u32,
        /// State-specific details.
        pub details: u32,
        /// Milliseconds in this state.
        pub state_time: u64,
    }
}

xdr_struct! {
    /// `{ dom; path; flags }`: block job abort, block job info.
    pub struct DomainBlockPathArgs {
        /// The domain.
        pub dom: Domain,
        /// Disk target or source path.
        pub path: LvString,
        /// Procedure-specific flags.
        pub flags: u32,
    }
}

xdr_struct! {
    /// `remote_domain_get_block_job_info_ret`.
    pub struct DomainGetBlockJobInfoRet {
        /// 1 when a job runs on the disk.
        pub found: i32,
        /// `virDomainBlockJobType`.
        pub kind: i32,
        /// Bandwidth limit.
        pub bandwidth: u64,
        /// Progress.
        pub cur: u64,
        /// Progress goal.
        pub end: u64,
    }
}

xdr_struct! {
    /// `{ dom; path; bandwidth; flags }`: block pull, block job set speed.
    pub struct DomainBlockBandwidthArgs {
        /// The domain.
        pub dom: Domain,
        /// Disk target or source path.
        pub path: LvString,
        /// Bandwidth limit (MiB/s unless a `BYTES` flag says otherwise).
        pub bandwidth: u64,
        /// Procedure-specific flags.
        pub flags: u32,
    }
}

xdr_struct! {
    /// `remote_domain_block_rebase_args`.
    pub struct DomainBlockRebaseArgs {
        /// The domain.
        pub dom: Domain,
        /// Disk target or source path.
        pub path: LvString,
        /// New backing file; `None` to flatten.
        pub base: Option<LvString>,
        /// Bandwidth limit.
        pub bandwidth: u64,
        /// `virDomainBlockRebaseFlags`.
        pub flags: u32,
    }
}

xdr_struct! {
    /// `remote_domain_block_commit_args`.
    pub struct DomainBlockCommitArgs {
        /// The domain.
        pub dom: Domain,
        /// Disk target or source path.
        pub disk: LvString,
        /// Commit into this image; `None` for the deepest.
        pub base: Option<LvString>,
        /// Commit from this image; `None` for the active one.
        pub top: Option<LvString>,
        /// Bandwidth limit.
        pub bandwidth: u64,
        /// `virDomainBlockCommitFlags`.
        pub flags: u32,
    }
}

xdr_struct! {
    /// `remote_domain_block_resize_args`.
    pub struct DomainBlockResizeArgs {
        /// The domain.
        pub dom: Domain,
        /// Disk target or source path.
        pub disk: LvString,
        /// New size (KiB, or bytes with [`block_resize_flags::BYTES`]).
        pub size: u64,
        /// [`block_resize_flags`].
        pub flags: u32,
    }
}

xdr_struct! {
    /// `remote_domain_set_block_threshold_args`.
    pub struct DomainSetBlockThresholdArgs {
        /// The domain.
        pub dom: Domain,
        /// Disk target, optionally with `[index]`.
        pub dev: LvString,
        /// Write offset (bytes) that fires the block threshold event; 0 disables.
        pub threshold: u64,
        /// Must be 0.
        pub flags: u32,
    }
}

xdr_struct! {
    /// `remote_domain_pm_suspend_for_duration_args`.
    pub struct DomainPmSuspendForDurationArgs {
        /// The domain.
        pub dom: Domain,
        /// `virNodeSuspendTarget` (MEM 0, DISK 1, HYBRID 2).
        pub target: u32,
        /// Seconds (0: until woken).
        pub duration: u64,
        /// Must be 0.
        pub flags: u32,
    }
}

xdr_struct! {
    /// `remote_domain_disk_error`.
    pub struct DomainDiskError {
        /// Disk target.
        pub disk: LvString,
        /// `virDomainDiskErrorCode` (NONE 0, UNSPEC 1, `NO_SPACE` 2).
        pub error: i32,
    }
}

xdr_struct! {
    /// `remote_domain_get_disk_errors_args`.
    pub struct DomainGetDiskErrorsArgs {
        /// The domain.
        pub dom: Domain,
        /// Most errors wanted (0: just count).
        pub maxerrors: u32,
        /// Must be 0.
        pub flags: u32,
    }
}

xdr_struct! {
    /// `remote_domain_get_disk_errors_ret`.
    pub struct DomainGetDiskErrorsRet {
        /// The errors.
        pub errors: Vec<DomainDiskError> [limits::DOMAIN_DISK_ERRORS_MAX],
        /// Count.
        pub nerrors: i32,
    }
}

xdr_struct! {
    /// `remote_domain_set_metadata_args`.
    pub struct DomainSetMetadataArgs {
        /// The domain.
        pub dom: Domain,
        /// [`metadata_type`].
        pub kind: i32,
        /// New value; `None` removes it.
        pub metadata: Option<LvString>,
        /// XML namespace prefix (ELEMENT only).
        pub key: Option<LvString>,
        /// XML namespace URI (ELEMENT only).
        pub uri: Option<LvString>,
        /// [`affect_flags`].
        pub flags: u32,
    }
}

xdr_struct! {
    /// `remote_domain_get_metadata_args`.
    pub struct DomainGetMetadataArgs {
        /// The domain.
        pub dom: Domain,
        /// [`metadata_type`].
        pub kind: i32,
        /// XML namespace URI (ELEMENT only).
        pub uri: Option<LvString>,
        /// [`affect_flags`].
        pub flags: u32,
    }
}

xdr_struct! {
    /// `remote_domain_get_metadata_ret`. A missing element is error 80
    /// (`NO_DOMAIN_METADATA`), not an empty string.
    pub struct DomainGetMetadataRet {
        /// The value.
        pub metadata: LvString,
    }
}

xdr_struct! {
    /// `remote_domain_get_hostname_ret`.
    pub struct DomainGetHostnameRet {
        /// Guest host name.
        pub hostname: LvString,
    }
}

xdr_struct! {
    /// `remote_domain_fstrim_args`.
    pub struct DomainFsTrimArgs {
        /// The domain.
        pub dom: Domain,
        /// Mount point; `None` for all.
        pub mount_point: Option<LvString>,
        /// Minimum contiguous free range (bytes) to discard.
        pub minimum: u64,
        /// Must be 0.
        pub flags: u32,
    }
}

xdr_struct! {
    /// `remote_domain_fsfreeze_args` / `remote_domain_fsthaw_args`.
    pub struct DomainFsFreezeArgs {
        /// The domain.
        pub dom: Domain,
        /// Mount points; empty for all.
        pub mountpoints: Vec<LvString> [limits::DOMAIN_FSFREEZE_MOUNTPOINTS_MAX],
        /// Must be 0.
        pub flags: u32,
    }
}

xdr_struct! {
    /// `remote_domain_fsfreeze_ret` / `remote_domain_fsthaw_ret`.
    pub struct DomainFsFreezeRet {
        /// File systems frozen (or thawed).
        pub filesystems: i32,
    }
}

xdr_struct! {
    /// `remote_domain_fsinfo`.
    pub struct DomainFsInfo {
        /// Mount point in the guest.
        pub mountpoint: LvString,
        /// Device name in the guest.
        pub name: LvString,
        /// File system type.
        pub fstype: LvString,
        /// Disk aliases backing it.
        pub dev_aliases: Vec<LvString> [limits::DOMAIN_FSINFO_DISKS_MAX],
    }
}

xdr_struct! {
    /// `remote_domain_get_fsinfo_ret`.
    pub struct DomainGetFsInfoRet {
        /// File systems.
        pub info: Vec<DomainFsInfo> [limits::DOMAIN_FSINFO_MAX],
        /// Count.
        pub ret: u32,
    }
}

xdr_struct! {
    /// `remote_domain_get_time_ret`: guest clock (via the agent).
    pub struct DomainGetTimeRet {
        /// Seconds since the epoch.
        pub seconds: i64,
        /// Nanoseconds.
        pub nseconds: u32,
    }
}

xdr_struct! {
    /// `remote_domain_set_time_args`.
    pub struct DomainSetTimeArgs {
        /// The domain.
        pub dom: Domain,
        /// Seconds since the epoch.
        pub seconds: i64,
        /// Nanoseconds.
        pub nseconds: u32,
        /// `virDomainSetTimeFlags` (SYNC 1: from the RTC).
        pub flags: u32,
    }
}

xdr_struct! {
    /// `remote_domain_ip_addr`.
    pub struct DomainIpAddr {
        /// [`ip_addr_type`].
        pub kind: i32,
        /// Address text.
        pub addr: LvString,
        /// Prefix length.
        pub prefix: u32,
    }
}

xdr_struct! {
    /// `remote_domain_interface`.
    pub struct DomainInterface {
        /// Interface name (host-side for LEASE/ARP, guest-side for AGENT).
        pub name: LvString,
        /// MAC address.
        pub hwaddr: Option<LvString>,
        /// Addresses.
        pub addrs: Vec<DomainIpAddr> [limits::DOMAIN_IP_ADDR_MAX],
    }
}

xdr_struct! {
    /// `remote_domain_interface_addresses_args`.
    pub struct DomainInterfaceAddressesArgs {
        /// The domain.
        pub dom: Domain,
        /// [`interface_addresses_source`].
        pub source: u32,
        /// Must be 0.
        pub flags: u32,
    }
}

xdr_struct! {
    /// `remote_domain_interface_addresses_ret`.
    pub struct DomainInterfaceAddressesRet {
        /// Interfaces.
        pub ifaces: Vec<DomainInterface> [limits::DOMAIN_INTERFACE_MAX],
    }
}

xdr_struct! {
    /// `remote_domain_set_user_password_args`.
    pub struct DomainSetUserPasswordArgs {
        /// The domain.
        pub dom: Domain,
        /// Guest user.
        pub user: Option<LvString>,
        /// New password.
        pub password: Option<LvString>,
        /// `virDomainSetUserPasswordFlags` (ENCRYPTED 1).
        pub flags: u32,
    }
}

xdr_struct! {
    /// `remote_domain_rename_args`.
    pub struct DomainRenameArgs {
        /// The domain (must be inactive).
        pub dom: Domain,
        /// New name.
        pub new_name: Option<LvString>,
        /// Must be 0.
        pub flags: u32,
    }
}

xdr_struct! {
    /// `remote_domain_rename_ret`.
    pub struct DomainRenameRet {
        /// 0 on success.
        pub retcode: i32,
    }
}

xdr_struct! {
    /// `remote_domain_set_lifecycle_action_args`.
    pub struct DomainSetLifecycleActionArgs {
        /// The domain.
        pub dom: Domain,
        /// `virDomainLifecycle` (POWEROFF 0, REBOOT 1, CRASH 2).
        pub kind: u32,
        /// `virDomainLifecycleAction` (DESTROY 0, RESTART 1, …).
        pub action: u32,
        /// [`affect_flags`].
        pub flags: u32,
    }
}

xdr_struct! {
    /// `remote_domain_get_guest_info_args`.
    pub struct DomainGetGuestInfoArgs {
        /// The domain.
        pub dom: Domain,
        /// `virDomainGuestInfoTypes` bits (USERS 1, OS 2, TIMEZONE 4, HOSTNAME 8,
        /// FILESYSTEM 16, DISKS 32, INTERFACES 64); 0 for all.
        pub types: u32,
        /// Must be 0.
        pub flags: u32,
    }
}

xdr_struct! {
    /// `remote_domain_get_guest_info_ret`.
    pub struct DomainGetGuestInfoRet {
        /// Guest information as typed parameters (`os.id`, `hostname`, `if.0.name`, …).
        pub params: Vec<TypedParam> [limits::DOMAIN_GUEST_INFO_PARAMS_MAX],
    }
}

xdr_struct! {
    /// `remote_domain_agent_set_response_timeout_args`.
    pub struct DomainAgentSetResponseTimeoutArgs {
        /// The domain.
        pub dom: Domain,
        /// Seconds; -2 blocks forever, -1 default, 0 no wait.
        pub timeout: i32,
        /// Must be 0.
        pub flags: u32,
    }
}

xdr_struct! {
    /// `remote_domain_authorized_ssh_keys_get_args`.
    pub struct DomainAuthorizedSshKeysGetArgs {
        /// The domain.
        pub dom: Domain,
        /// Guest user.
        pub user: LvString,
        /// Must be 0.
        pub flags: u32,
    }
}

xdr_struct! {
    /// `remote_domain_authorized_ssh_keys_get_ret`.
    pub struct DomainAuthorizedSshKeysGetRet {
        /// One key per entry.
        pub keys: Vec<LvString> [limits::DOMAIN_AUTHORIZED_SSH_KEYS_MAX],
    }
}

xdr_struct! {
    /// `remote_domain_authorized_ssh_keys_set_args`.
    pub struct DomainAuthorizedSshKeysSetArgs {
        /// The domain.
        pub dom: Domain,
        /// Guest user.
        pub user: LvString,
        /// Keys.
        pub keys: Vec<LvString> [limits::DOMAIN_AUTHORIZED_SSH_KEYS_MAX],
        /// `virDomainAuthorizedSSHKeysSetFlags` (APPEND 1, REMOVE 2).
        pub flags: u32,
    }
}

xdr_struct! {
    /// `remote_domain_get_messages_ret`.
    pub struct DomainGetMessagesRet {
        /// Messages (tainting, deprecations).
        pub msgs: Vec<LvString> [limits::DOMAIN_MESSAGES_MAX],
    }
}

xdr_struct! {
    /// `remote_domain_get_security_label_ret`. The label is an rpcgen `char<>`: 4 bytes per
    /// character on the wire.
    pub struct DomainGetSecurityLabelRet {
        /// Security label (NUL-terminated).
        pub label: CharVec [limits::SECURITY_LABEL_MAX],
        /// 1 when enforcing.
        pub enforcing: i32,
    }
}

xdr_struct! {
    /// `remote_domain_block_peek_args`.
    pub struct DomainBlockPeekArgs {
        /// The domain.
        pub dom: Domain,
        /// Disk target or source path.
        pub path: LvString,
        /// Byte offset into the disk.
        pub offset: u64,
        /// Bytes wanted (at most `REMOTE_DOMAIN_BLOCK_PEEK_BUFFER_MAX`).
        pub size: u32,
        /// Must be 0.
        pub flags: u32,
    }
}

xdr_struct! {
    /// `remote_domain_memory_peek_args`.
    pub struct DomainMemoryPeekArgs {
        /// The domain.
        pub dom: Domain,
        /// Start address.
        pub offset: u64,
        /// Bytes wanted (at most `REMOTE_DOMAIN_MEMORY_PEEK_BUFFER_MAX`).
        pub size: u32,
        /// `virDomainMemoryFlags` (VIRTUAL 1, PHYSICAL 2).
        pub flags: u32,
    }
}

xdr_struct! {
    /// `remote_domain_block_peek_ret`.
    pub struct DomainBlockPeekRet {
        /// The bytes read.
        pub buffer: Bytes [limits::DOMAIN_BLOCK_PEEK_BUFFER_MAX],
    }
}

xdr_struct! {
    /// `remote_domain_memory_peek_ret`.
    pub struct DomainMemoryPeekRet {
        /// The bytes read.
        pub buffer: Bytes [limits::DOMAIN_MEMORY_PEEK_BUFFER_MAX],
    }
}

xdr_struct! {
    /// `remote_domain_block_stats_flags_args`.
    pub struct DomainBlockStatsFlagsArgs {
        /// The domain.
        pub dom: Domain,
        /// Disk target or source path (empty: totals over every disk).
        pub path: LvString,
        /// Parameters wanted (0: just report how many exist).
        pub nparams: i32,
        /// `virTypedParameterFlags` (`STRING_OKAY` 4).
        pub flags: u32,
    }
}

xdr_struct! {
    /// `remote_domain_block_stats_flags_ret`.
    pub struct DomainBlockStatsFlagsRet {
        /// The statistics (`rd_bytes`, `wr_total_times`, …).
        pub params: Vec<TypedParam> [limits::DOMAIN_BLOCK_STATS_PARAMETERS_MAX],
        /// Number of parameters available.
        pub nparams: i32,
    }
}

xdr_struct! {
    /// `remote_domain_get_cpu_stats_args`.
    pub struct DomainGetCpuStatsArgs {
        /// The domain.
        pub dom: Domain,
        /// Parameters per CPU wanted (0: just report how many exist).
        pub nparams: u32,
        /// First host CPU, or -1 for the domain's total.
        pub start_cpu: i32,
        /// Host CPUs wanted (at most `REMOTE_DOMAIN_GET_CPU_STATS_NCPUS_MAX`; 1 for the total).
        pub ncpus: u32,
        /// `virTypedParameterFlags`.
        pub flags: u32,
    }
}

xdr_struct! {
    /// `remote_domain_get_cpu_stats_ret`.
    pub struct DomainGetCpuStatsRet {
        /// `nparams` statistics per CPU, CPU after CPU (`cpu_time`, `vcpu_time`, …).
        pub params: Vec<TypedParam> [limits::DOMAIN_GET_CPU_STATS_MAX],
        /// Parameters per CPU.
        pub nparams: i32,
    }
}

xdr_struct! {
    /// `remote_domain_get_security_label_list_ret`.
    pub struct DomainGetSecurityLabelListRet {
        /// One label per security driver.
        pub labels: Vec<DomainGetSecurityLabelRet> [limits::SECURITY_LABEL_LIST_MAX],
        /// Their number.
        pub ret: i32,
    }
}

xdr_struct! {
    /// `remote_domain_core_dump_with_format_args`.
    pub struct DomainCoreDumpWithFormatArgs {
        /// The domain.
        pub dom: Domain,
        /// Path on the host.
        pub to: LvString,
        /// `virDomainCoreDumpFormat` (RAW 0, `KDUMP_ZLIB` 1, `KDUMP_LZO` 2, `KDUMP_SNAPPY` 3,
        /// `WIN_DMP` 4).
        pub dumpformat: u32,
        /// `virDomainCoreDumpFlags`.
        pub flags: u32,
    }
}

xdr_struct! {
    /// `remote_domain_block_copy_args`.
    pub struct DomainBlockCopyArgs {
        /// The domain.
        pub dom: Domain,
        /// Disk target or source path.
        pub path: LvString,
        /// Destination disk XML (`<disk>`).
        pub destxml: LvString,
        /// Tuning (`bandwidth`, `granularity`, `buf-size`).
        pub params: Vec<TypedParam> [limits::DOMAIN_BLOCK_COPY_PARAMETERS_MAX],
        /// `virDomainBlockCopyFlags` (SHALLOW 1, `REUSE_EXT` 2, `TRANSIENT_JOB` 4, `SYNCHRONOUS_WRITES` 8).
        pub flags: u32,
    }
}

xdr_struct! {
    /// `remote_domain_backup_begin_args`.
    pub struct DomainBackupBeginArgs {
        /// The domain.
        pub dom: Domain,
        /// Backup XML (`<domainbackup>`).
        pub backup_xml: LvString,
        /// Checkpoint to create with the backup (`<domaincheckpoint>`).
        pub checkpoint_xml: Option<LvString>,
        /// `virDomainBackupBeginFlags` (`REUSE_EXTERNAL` 1, `PRESERVE_SHUTDOWN_DOMAIN` 2).
        pub flags: u32,
    }
}

xdr_struct! {
    /// `remote_domain_start_dirty_rate_calc_args`.
    pub struct DomainStartDirtyRateCalcArgs {
        /// The domain.
        pub dom: Domain,
        /// Measuring time in seconds.
        pub seconds: i32,
        /// `virDomainDirtyRateCalcFlags` (`PAGE_SAMPLING` 1, `DIRTY_BITMAP` 2, `DIRTY_RING` 4).
        pub flags: u32,
    }
}

xdr_struct! {
    /// `remote_domain_save_params_args`.
    pub struct DomainSaveParamsArgs {
        /// The domain.
        pub dom: Domain,
        /// `file`, `dxml`, `image_format`, … (`VIR_DOMAIN_SAVE_PARAM_*`).
        pub params: Vec<TypedParam> [limits::DOMAIN_SAVE_PARAMS_MAX],
        /// [`save_restore_flags`].
        pub flags: u32,
    }
}

xdr_struct! {
    /// `remote_domain_restore_params_args`.
    pub struct DomainRestoreParamsArgs {
        /// `file`, `dxml`, … (`VIR_DOMAIN_SAVE_PARAM_*`).
        pub params: Vec<TypedParam> [limits::DOMAIN_SAVE_PARAMS_MAX],
        /// [`save_restore_flags`].
        pub flags: u32,
    }
}

xdr_struct! {
    /// `remote_domain_graphics_reload_args`.
    pub struct DomainGraphicsReloadArgs {
        /// The domain.
        pub dom: Domain,
        /// `virDomainGraphicsReloadType` (ANY 0, VNC 1).
        pub kind: u32,
        /// Must be 0.
        pub flags: u32,
    }
}

xdr_struct! {
    /// `remote_domain_announce_interface_args` (12.5+).
    pub struct DomainAnnounceInterfaceArgs {
        /// The domain.
        pub dom: Domain,
        /// Interface alias or target device (`None`: every interface).
        pub device: Option<LvString>,
        /// Announcement tuning (rounds, intervals).
        pub params: Vec<TypedParam> [limits::DOMAIN_ANNOUNCE_INTERFACE_PARAMS_MAX],
        /// Must be 0.
        pub flags: u32,
    }
}

procedures! {
    table PROCEDURES;
    /// `virDomainAttachDevice` (live only).
    DomainAttachDevice = 8: DomainXmlArgs => (), since "0.3.0";
    /// `virDomainCreate`: start a defined domain.
    DomainCreate = 9: DomainArgs => (), since "0.3.0";
    /// `virDomainCreateXML`: start a transient domain.
    DomainCreateXml = 10: DomainCreateXmlArgs => DomainRet, since "0.3.0";
    /// `virDomainDefineXML`.
    DomainDefineXml = 11: XmlArgs => DomainRet, since "0.3.0";
    /// `virDomainDestroy`.
    DomainDestroy = 12: DomainArgs => (), since "0.3.0";
    /// `virDomainDetachDevice` (live only).
    DomainDetachDevice = 13: DomainXmlArgs => (), since "0.3.0";
    /// `virDomainGetXMLDesc` (flags: [`xml_flags`]).
    DomainGetXmlDesc = 14: DomainFlagsArgs => XmlRet, since "0.3.0";
    /// `virDomainGetAutostart`.
    DomainGetAutostart = 15: DomainArgs => AutostartRet, since "0.3.0";
    /// `virDomainGetInfo`.
    DomainGetInfo = 16: DomainArgs => DomainGetInfoRet, since "0.3.0";
    /// `virDomainGetMaxMemory`.
    DomainGetMaxMemory = 17: DomainArgs => DomainGetMaxMemoryRet, since "0.3.0";
    /// `virDomainGetMaxVcpus`.
    DomainGetMaxVcpus = 18: DomainArgs => NumRet, since "0.3.0";
    /// `virDomainGetOSType`.
    DomainGetOsType = 19: DomainArgs => DomainGetOsTypeRet, since "0.3.0";
    /// `virDomainGetVcpus`.
    DomainGetVcpus = 20: DomainGetVcpusArgs => DomainGetVcpusRet, since "0.3.0";
    /// `virDomainLookupByID`.
    DomainLookupById = 22: DomainLookupByIdArgs => DomainRet, since "0.3.0";
    /// `virDomainLookupByName`.
    DomainLookupByName = 23: NameArgs => DomainRet, since "0.3.0";
    /// `virDomainLookupByUUID`.
    DomainLookupByUuid = 24: UuidArgs => DomainRet, since "0.3.0";
    /// `virDomainPinVcpu`.
    DomainPinVcpu = 26: DomainPinVcpuArgs => (), since "0.3.0";
    /// `virDomainReboot` (flags: [`shutdown_flags`]).
    DomainReboot = 27: DomainFlagsArgs => (), since "0.3.0";
    /// `virDomainResume`.
    DomainResume = 28: DomainArgs => (), since "0.3.0";
    /// `virDomainSetAutostart`.
    DomainSetAutostart = 29: DomainSetAutostartArgs => (), since "0.3.0";
    /// `virDomainSetMaxMemory`.
    DomainSetMaxMemory = 30: DomainSetMemoryArgs => (), since "0.3.0";
    /// `virDomainSetMemory` (live).
    DomainSetMemory = 31: DomainSetMemoryArgs => (), since "0.3.0";
    /// `virDomainSetVcpus` (live).
    DomainSetVcpus = 32: DomainSetVcpusArgs => (), since "0.3.0";
    /// `virDomainShutdown`.
    DomainShutdown = 33: DomainArgs => (), since "0.3.0";
    /// `virDomainSuspend`.
    DomainSuspend = 34: DomainArgs => (), since "0.3.0";
    /// `virDomainUndefine`.
    DomainUndefine = 35: DomainArgs => (), since "0.3.0";
    /// `virDomainCoreDump`.
    DomainCoreDump = 53: DomainCoreDumpArgs => (), since "0.3.0";
    /// `virDomainRestore`.
    DomainRestore = 54: DomainRestoreArgs => (), since "0.3.0";
    /// `virDomainSave`.
    DomainSave = 55: DomainSaveArgs => (), since "0.3.0";
    /// `virDomainGetSchedulerType`.
    DomainGetSchedulerType = 56: DomainArgs => DomainGetSchedulerTypeRet, since "0.3.0";
    /// `virDomainBlockStats`.
    DomainBlockStats = 64: DomainBlockStatsArgs => DomainBlockStatsRet, since "0.3.2";
    /// `virDomainInterfaceStats`.
    DomainInterfaceStats = 65: DomainInterfaceStatsArgs => DomainInterfaceStatsRet, since "0.3.2";
    /// `virDomainBlockPeek`.
    DomainBlockPeek = 103: DomainBlockPeekArgs => DomainBlockPeekRet, since "0.4.2";
    /// `virDomainMemoryPeek`.
    DomainMemoryPeek = 104: DomainMemoryPeekArgs => DomainMemoryPeekRet, since "0.4.2";
    /// `virDomainGetSecurityLabel`.
    DomainGetSecurityLabel = 121: DomainArgs => DomainGetSecurityLabelRet, since "0.6.1";
    /// `virDomainIsActive`.
    DomainIsActive = 150: DomainArgs => ActiveRet, since "0.7.3";
    /// `virDomainIsPersistent`.
    DomainIsPersistent = 151: DomainArgs => PersistentRet, since "0.7.3";
    /// `virDomainMemoryStats`.
    DomainMemoryStats = 159: DomainMemoryStatsArgs => DomainMemoryStatsRet, since "0.7.5";
    /// `virDomainAttachDeviceFlags`.
    DomainAttachDeviceFlags = 160: DomainXmlFlagsArgs => (), since "0.7.7";
    /// `virDomainDetachDeviceFlags`.
    DomainDetachDeviceFlags = 161: DomainXmlFlagsArgs => (), since "0.7.7";
    /// `virDomainGetJobInfo`.
    DomainGetJobInfo = 163: DomainArgs => DomainGetJobInfoRet, since "0.7.7";
    /// `virDomainAbortJob`.
    DomainAbortJob = 164: DomainArgs => (), since "0.7.7";
    /// `virDomainUpdateDeviceFlags`.
    DomainUpdateDeviceFlags = 174: DomainXmlFlagsArgs => (), since "0.8.0";
    /// `virDomainManagedSave` (flags: [`save_restore_flags`]).
    DomainManagedSave = 182: DomainFlagsArgs => (), since "0.8.0";
    /// `virDomainHasManagedSaveImage` (flags must be 0).
    DomainHasManagedSaveImage = 183: DomainFlagsArgs => DomainResultRet, since "0.8.0";
    /// `virDomainManagedSaveRemove` (flags must be 0).
    DomainManagedSaveRemove = 184: DomainFlagsArgs => (), since "0.8.0";
    /// `virDomainGetBlockInfo`.
    DomainGetBlockInfo = 194: DomainGetBlockInfoArgs => DomainGetBlockInfoRet, since "0.8.1";
    /// `virDomainCreateWithFlags` (flags: [`create_flags`]); returns the new id.
    DomainCreateWithFlags = 196: DomainFlagsArgs => DomainRet, since "0.8.2";
    /// `virDomainSetMemoryParameters`.
    DomainSetMemoryParameters = 197: DomainSetMemoryParametersArgs => (), since "0.8.5";
    /// `virDomainGetMemoryParameters`.
    DomainGetMemoryParameters = 198: DomainGetParamsArgs => DomainGetMemoryParametersRet, since "0.8.5";
    /// `virDomainSetVcpusFlags`.
    DomainSetVcpusFlags = 199: DomainSetVcpusFlagsArgs => (), since "0.8.5";
    /// `virDomainGetVcpusFlags` (flags: [`vcpu_flags`]).
    DomainGetVcpusFlags = 200: DomainFlagsArgs => NumRet, since "0.8.5";
    /// `virDomainOpenConsole`. The stream is **bidirectional** (guest output arrives as
    /// download data, keystrokes are sent as upload data); it is declared `Download` because
    /// the daemon annotates it `@readstream` and the table has no bidirectional kind.
    DomainOpenConsole = 201: DomainOpenConsoleArgs => (), since "0.8.6", stream Duplex;
    /// `virDomainIsUpdated`.
    DomainIsUpdated = 202: DomainArgs => DomainIsUpdatedRet, since "0.8.6";
    /// `virDomainSetMemoryFlags`.
    DomainSetMemoryFlags = 204: DomainSetMemoryFlagsArgs => (), since "0.9.0";
    /// `virDomainSetBlkioParameters`.
    DomainSetBlkioParameters = 205: DomainSetBlkioParametersArgs => (), since "0.9.0";
    /// `virDomainGetBlkioParameters`.
    DomainGetBlkioParameters = 206: DomainGetParamsArgs => DomainGetBlkioParametersRet, since "0.9.0";
    /// `virDomainInjectNMI` (flags must be 0).
    DomainInjectNmi = 210: DomainFlagsArgs => (), since "0.9.2";
    /// `virDomainScreenshot`: the image follows as download stream data.
    DomainScreenshot = 211: DomainScreenshotArgs => DomainScreenshotRet, since "0.9.2", stream Download;
    /// `virDomainGetState` (flags must be 0).
    DomainGetState = 212: DomainFlagsArgs => DomainGetStateRet, since "0.9.2";
    /// `virDomainSetSchedulerParametersFlags`.
    DomainSetSchedulerParametersFlags = 219: DomainSetSchedulerParametersFlagsArgs => (), since "0.9.2";
    /// `virDomainGetSchedulerParametersFlags`.
    DomainGetSchedulerParametersFlags = 223: DomainGetParamsArgs => DomainGetSchedulerParametersRet, since "0.9.2";
    /// `virDomainPinVcpuFlags`.
    DomainPinVcpuFlags = 225: DomainPinVcpuFlagsArgs => (), since "0.9.3";
    /// `virDomainSendKey`.
    DomainSendKey = 226: DomainSendKeyArgs => (), since "0.9.3";
    /// `virDomainGetControlInfo`.
    DomainGetControlInfo = 229: DomainFlagsArgs => DomainGetControlInfoRet, since "0.9.3";
    /// `virDomainUndefineFlags` (flags: [`undefine_flags`]).
    DomainUndefineFlags = 231: DomainFlagsArgs => (), since "0.9.4";
    /// `virDomainSaveFlags`.
    DomainSaveFlags = 232: DomainSaveFlagsArgs => (), since "0.9.4";
    /// `virDomainRestoreFlags`.
    DomainRestoreFlags = 233: DomainRestoreFlagsArgs => (), since "0.9.4";
    /// `virDomainDestroyFlags` (flags: [`destroy_flags`]).
    DomainDestroyFlags = 234: DomainFlagsArgs => (), since "0.9.4";
    /// `virDomainSaveImageGetXMLDesc`.
    DomainSaveImageGetXmlDesc = 235: DomainSaveImageGetXmlDescArgs => XmlRet, since "0.9.4";
    /// `virDomainSaveImageDefineXML`.
    DomainSaveImageDefineXml = 236: DomainSaveImageDefineXmlArgs => (), since "0.9.4";
    /// `virDomainBlockJobAbort`.
    DomainBlockJobAbort = 237: DomainBlockPathArgs => (), since "0.9.4";
    /// `virDomainGetBlockJobInfo`.
    DomainGetBlockJobInfo = 238: DomainBlockPathArgs => DomainGetBlockJobInfoRet, since "0.9.4";
    /// `virDomainBlockJobSetSpeed`.
    DomainBlockJobSetSpeed = 239: DomainBlockBandwidthArgs => (), since "0.9.4";
    /// `virDomainBlockPull`.
    DomainBlockPull = 240: DomainBlockBandwidthArgs => (), since "0.9.4";
    /// `virDomainBlockStatsFlags`.
    DomainBlockStatsFlags = 243: DomainBlockStatsFlagsArgs => DomainBlockStatsFlagsRet, since "0.9.5";
    /// `virDomainReset` (flags must be 0).
    DomainReset = 245: DomainFlagsArgs => (), since "0.9.7";
    /// `virDomainOpenGraphics`: hand the daemon a socket (one descriptor sent with the call)
    /// to connect graphics client `idx` to.
    DomainOpenGraphics = 249: DomainOpenGraphicsArgs => (), since "0.9.7", fds Call;
    /// `virDomainBlockResize`.
    DomainBlockResize = 251: DomainBlockResizeArgs => (), since "0.9.8";
    /// `virDomainShutdownFlags` (flags: [`shutdown_flags`]).
    DomainShutdownFlags = 258: DomainFlagsArgs => (), since "0.9.10";
    /// `virDomainPMSuspendForDuration`.
    DomainPmSuspendForDuration = 261: DomainPmSuspendForDurationArgs => (), since "0.9.10";
    /// `virDomainGetCPUStats`.
    DomainGetCpuStats = 262: DomainGetCpuStatsArgs => DomainGetCpuStatsRet, since "0.9.10";
    /// `virDomainGetDiskErrors`.
    DomainGetDiskErrors = 263: DomainGetDiskErrorsArgs => DomainGetDiskErrorsRet, since "0.9.10";
    /// `virDomainSetMetadata`.
    DomainSetMetadata = 264: DomainSetMetadataArgs => (), since "0.9.10";
    /// `virDomainGetMetadata`.
    DomainGetMetadata = 265: DomainGetMetadataArgs => DomainGetMetadataRet, since "0.9.10";
    /// `virDomainBlockRebase`.
    DomainBlockRebase = 266: DomainBlockRebaseArgs => (), since "0.9.10";
    /// `virDomainPMWakeup` (flags must be 0).
    DomainPmWakeup = 267: DomainFlagsArgs => (), since "0.9.11";
    /// `virDomainGetHostname` (flags: [`hostname_source`]).
    DomainGetHostname = 277: DomainFlagsArgs => DomainGetHostnameRet, since "0.10.0";
    /// `virDomainGetSecurityLabelList`.
    DomainGetSecurityLabelList = 278: DomainArgs => DomainGetSecurityLabelListRet, since "0.10.0";
    /// `virDomainBlockCommit`.
    DomainBlockCommit = 290: DomainBlockCommitArgs => (), since "0.10.2";
    /// `virDomainFSTrim`.
    DomainFsTrim = 294: DomainFsTrimArgs => (), since "1.0.1";
    /// `virDomainSendProcessSignal`.
    DomainSendProcessSignal = 295: DomainSendProcessSignalArgs => (), since "1.0.1";
    /// `virDomainOpenChannel`. Bidirectional like [`DomainOpenConsole`]; declared `Download`.
    DomainOpenChannel = 296: DomainOpenChannelArgs => (), since "1.0.2", stream Duplex;
    /// `virDomainGetJobStats`.
    DomainGetJobStats = 298: DomainFlagsArgs => DomainGetJobStatsRet, since "1.0.3";
    /// `virDomainCreateXMLWithFiles`: [`DomainCreateXml`] passing descriptors to the guest.
    DomainCreateXmlWithFiles = 309: DomainCreateXmlArgs => DomainRet, since "1.1.1", fds Call;
    /// `virDomainCreateWithFiles`: [`DomainCreateWithFlags`] passing descriptors to the guest.
    DomainCreateWithFiles = 310: DomainFlagsArgs => DomainRet, since "1.1.1", fds Call;
    /// `virDomainCoreDumpWithFormat`.
    DomainCoreDumpWithFormat = 334: DomainCoreDumpWithFormatArgs => (), since "1.2.3";
    /// `virDomainFSFreeze`.
    DomainFsFreeze = 335: DomainFsFreezeArgs => DomainFsFreezeRet, since "1.2.5";
    /// `virDomainFSThaw`.
    DomainFsThaw = 336: DomainFsFreezeArgs => DomainFsFreezeRet, since "1.2.5";
    /// `virDomainGetTime` (flags must be 0).
    DomainGetTime = 337: DomainFlagsArgs => DomainGetTimeRet, since "1.2.5";
    /// `virDomainSetTime`.
    DomainSetTime = 338: DomainSetTimeArgs => (), since "1.2.5";
    /// `virDomainOpenGraphicsFD`: the daemon returns a connected graphics socket (one
    /// descriptor with the reply).
    DomainOpenGraphicsFd = 343: DomainOpenGraphicsArgs => (), since "1.2.8", fds Reply;
    /// `virDomainBlockCopy`.
    DomainBlockCopy = 345: DomainBlockCopyArgs => (), since "1.2.8";
    /// `virDomainGetFSInfo` (flags must be 0).
    DomainGetFsInfo = 349: DomainFlagsArgs => DomainGetFsInfoRet, since "1.2.11";
    /// `virDomainDefineXMLFlags` (flags: [`define_flags`]).
    DomainDefineXmlFlags = 350: XmlFlagsArgs => DomainRet, since "1.2.12";
    /// `virDomainInterfaceAddresses`.
    DomainInterfaceAddresses = 353: DomainInterfaceAddressesArgs => DomainInterfaceAddressesRet, since "1.2.14";
    /// `virDomainSetUserPassword`.
    DomainSetUserPassword = 357: DomainSetUserPasswordArgs => (), since "1.2.16";
    /// `virDomainRename`.
    DomainRename = 358: DomainRenameArgs => DomainRenameRet, since "1.2.19";
    /// `virDomainGetGuestVcpus` (flags must be 0).
    DomainGetGuestVcpus = 371: DomainFlagsArgs => DomainGetGuestVcpusRet, since "2.0.0";
    /// `virDomainSetGuestVcpus`.
    DomainSetGuestVcpus = 372: DomainSetGuestVcpusArgs => (), since "2.0.0";
    /// `virDomainSetVcpu`.
    DomainSetVcpu = 384: DomainSetGuestVcpusArgs => (), since "3.1.0";
    /// `virDomainSetBlockThreshold`.
    DomainSetBlockThreshold = 386: DomainSetBlockThresholdArgs => (), since "3.1.0";
    /// `virDomainManagedSaveGetXMLDesc`.
    DomainManagedSaveGetXmlDesc = 388: DomainFlagsArgs => XmlRet, since "3.7.0";
    /// `virDomainManagedSaveDefineXML`.
    DomainManagedSaveDefineXml = 389: DomainManagedSaveDefineXmlArgs => (), since "3.7.0";
    /// `virDomainSetLifecycleAction`.
    DomainSetLifecycleAction = 390: DomainSetLifecycleActionArgs => (), since "3.9.0";
    /// `virDomainDetachDeviceAlias`.
    DomainDetachDeviceAlias = 392: DomainDetachDeviceAliasArgs => (), since "4.4.0";
    /// `virDomainGetGuestInfo`.
    DomainGetGuestInfo = 418: DomainGetGuestInfoArgs => DomainGetGuestInfoRet, since "5.7.0";
    /// `virDomainAgentSetResponseTimeout`.
    DomainAgentSetResponseTimeout = 420: DomainAgentSetResponseTimeoutArgs => DomainResultRet, since "5.10.0";
    /// `virDomainBackupBegin`.
    DomainBackupBegin = 421: DomainBackupBeginArgs => (), since "6.0.0";
    /// `virDomainBackupGetXMLDesc` (flags must be 0).
    DomainBackupGetXmlDesc = 422: DomainFlagsArgs => XmlRet, since "6.0.0";
    /// `virDomainAuthorizedSSHKeysGet`.
    DomainAuthorizedSshKeysGet = 424:
        DomainAuthorizedSshKeysGetArgs => DomainAuthorizedSshKeysGetRet, since "6.10.0";
    /// `virDomainAuthorizedSSHKeysSet`.
    DomainAuthorizedSshKeysSet = 425: DomainAuthorizedSshKeysSetArgs => (), since "6.10.0";
    /// `virDomainGetMessages`.
    DomainGetMessages = 426: DomainFlagsArgs => DomainGetMessagesRet, since "7.1.0";
    /// `virDomainStartDirtyRateCalc`.
    DomainStartDirtyRateCalc = 427: DomainStartDirtyRateCalcArgs => (), since "7.2.0";
    /// `virDomainSaveParams`.
    DomainSaveParams = 440: DomainSaveParamsArgs => (), since "8.4.0";
    /// `virDomainRestoreParams`.
    DomainRestoreParams = 441: DomainRestoreParamsArgs => (), since "8.4.0";
    /// `virDomainAbortJobFlags`.
    DomainAbortJobFlags = 442: DomainFlagsArgs => (), since "8.5.0";
    /// `virDomainFDAssociate`: associate the descriptors sent with the call with `name`.
    DomainFdAssociate = 443: DomainFdAssociateArgs => (), since "9.0.0", fds Call;
    /// `virDomainGraphicsReload`.
    DomainGraphicsReload = 448: DomainGraphicsReloadArgs => (), since "10.2.0";
    /// `virDomainGetAutostartOnce`.
    DomainGetAutostartOnce = 449: DomainArgs => AutostartRet, since "11.2.0";
    /// `virDomainSetAutostartOnce`.
    DomainSetAutostartOnce = 450: DomainSetAutostartArgs => (), since "11.2.0";
    /// `virDomainAnnounceInterface`.
    DomainAnnounceInterface = 456: DomainAnnounceInterfaceArgs => (), since "12.5.0";
}
