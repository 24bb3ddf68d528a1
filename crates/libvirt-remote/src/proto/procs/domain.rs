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
use crate::proto::names::{
    BlockJobType, DomainJobType, DomainState, IpAddrType, MetadataType, StateReason,
};
use crate::proto::procedures;
use crate::proto::types::{CharVec, NonnullDomain, TypedParam, TypedParameterFlags};
use crate::proto::{StreamArgs, limits};
use crate::wire::xdr::{LvString, xdr_struct};

crate::proto::flags::flag_set! {
    /// `virDomainModificationImpact`: which definition a change applies to. Most `*_FLAGS`
    /// procedures that modify a domain take these in their low bits.
    pub struct DomainModificationImpact: u32 {
        /// The current state: live if running, else the persistent config.
        const CURRENT = 0;
        /// The running domain.
        const LIVE = 1;
        /// The persistent configuration.
        const CONFIG = 2;
    }
}

crate::proto::flags::flag_set! {
    /// The flags of the domain typed-parameter getters (`memtune`, `blkiotune`, `schedinfo`,
    /// `numatune`, `blkdeviotune`, `domiftune` in virsh): [`DomainModificationImpact`]
    /// (virsh's `--current`, `--live`, `--config`) and `virTypedParameterFlags`'
    /// [`STRING_OKAY`](Self::STRING_OKAY), which the generated methods add as libvirt.so does.
    pub struct DomainGetParamsFlags: u32 {
        /// `--current`: live if running, else the persistent config.
        const CURRENT = DomainModificationImpact::CURRENT.bits();
        /// `--live`: the running domain.
        const LIVE = DomainModificationImpact::LIVE.bits();
        /// `--config`: the persistent configuration.
        const CONFIG = DomainModificationImpact::CONFIG.bits();
        /// `VIR_TYPED_PARAM_STRING_OKAY`: string parameters are welcome.
        const STRING_OKAY = crate::proto::types::typed_param_flags::STRING_OKAY;
    }
}

crate::proto::flags::flag_set! {
    /// `virDomainCreateFlags` for [`DomainCreateWithFlags`] and [`DomainCreateXml`].
    pub struct DomainCreateFlags: u32 {
        /// Default behaviour.
        const NONE = 0;
        /// Leave the guest paused.
        const START_PAUSED = 1;
        /// Destroy the guest when the connection closes.
        const START_AUTODESTROY = 2;
        /// Bypass the host page cache when restoring a managed save image.
        const START_BYPASS_CACHE = 4;
        /// Boot, discarding any managed save image.
        const START_FORCE_BOOT = 8;
        /// Validate the XML against the schema.
        const START_VALIDATE = 16;
        /// Re-initialize NVRAM from its template.
        const START_RESET_NVRAM = 32;
    }
}

crate::proto::flags::flag_set! {
    /// `virDomainDefineFlags` for [`DomainDefineXmlFlags`].
    pub struct DomainDefineFlags: u32 {
        /// Validate the XML against the schema.
        const VALIDATE = 1;
    }
}

crate::proto::flags::flag_set! {
    /// `virDomainDestroyFlagsValues` for [`DomainDestroyFlags`].
    pub struct DomainDestroyFlagsValues: u32 {
        /// Kill the guest (SIGTERM, then SIGKILL).
        const DEFAULT = 0;
        /// Only SIGTERM; fail if the guest does not exit.
        const GRACEFUL = 1;
        /// Remove the domain's log files (newer daemons only).
        const REMOVE_LOGS = 2;
    }
}

crate::proto::flags::flag_set! {
    /// `virDomainUndefineFlagsValues` for [`DomainUndefineFlags`].
    pub struct DomainUndefineFlagsValues: u32 {
        /// Also remove the managed save image.
        const MANAGED_SAVE = 1;
        /// Also remove snapshot metadata.
        const SNAPSHOTS_METADATA = 2;
        /// Also remove NVRAM.
        const NVRAM = 4;
        /// Keep NVRAM.
        const KEEP_NVRAM = 8;
        /// Also remove checkpoint metadata.
        const CHECKPOINTS_METADATA = 16;
        /// Also remove TPM state.
        const TPM = 32;
        /// Keep TPM state.
        const KEEP_TPM = 64;
    }
}

crate::proto::flags::flag_set! {
    /// `virDomainShutdownFlagValues` for [`DomainShutdownFlags`] (0 lets the hypervisor pick).
    pub struct DomainShutdownFlagValues: u32 {
        /// Hypervisor's choice.
        const DEFAULT = 0;
        /// ACPI power button.
        const ACPI_POWER_BTN = 1;
        /// Guest agent.
        const GUEST_AGENT = 2;
        /// initctl.
        const INITCTL = 4;
        /// A signal.
        const SIGNAL = 8;
        /// Paravirt guest control.
        const PARAVIRT = 16;
    }
}

crate::proto::flags::flag_set! {
    /// `virDomainRebootFlagValues` for [`DomainReboot`] (0 lets the hypervisor pick; the same
    /// methods as [`DomainShutdownFlagValues`]).
    pub struct DomainRebootFlagValues: u32 {
        /// Hypervisor's choice.
        const DEFAULT = DomainShutdownFlagValues::DEFAULT.bits();
        /// ACPI power button.
        const ACPI_POWER_BTN = DomainShutdownFlagValues::ACPI_POWER_BTN.bits();
        /// Guest agent.
        const GUEST_AGENT = DomainShutdownFlagValues::GUEST_AGENT.bits();
        /// initctl.
        const INITCTL = DomainShutdownFlagValues::INITCTL.bits();
        /// A signal.
        const SIGNAL = DomainShutdownFlagValues::SIGNAL.bits();
        /// Paravirt guest control.
        const PARAVIRT = DomainShutdownFlagValues::PARAVIRT.bits();
    }
}

crate::proto::flags::flag_set! {
    /// `virDomainXMLFlags` for [`DomainGetXmlDesc`].
    pub struct DomainXmlFlags: u32 {
        /// Include security-sensitive data.
        const SECURE = 1;
        /// The persistent definition rather than the live one.
        const INACTIVE = 2;
        /// Update guest CPU requirements from the host.
        const UPDATE_CPU = 4;
        /// XML suitable for migration.
        const MIGRATABLE = 8;
    }
}

crate::proto::flags::flag_set! {
    /// `virDomainDeviceModifyFlags` for the attach/detach/update device procedures.
    pub struct DomainDeviceModifyFlags: u32 {
        /// See [`DomainModificationImpact::CURRENT`].
        const CURRENT = 0;
        /// The running domain.
        const LIVE = 1;
        /// The persistent configuration.
        const CONFIG = 2;
        /// Force the change (e.g. eject a locked CD-ROM).
        const FORCE = 4;
    }
}

crate::proto::flags::flag_set! {
    /// `virDomainMemoryModFlags` for [`DomainSetMemoryFlags`].
    pub struct DomainMemoryModFlags: u32 {
        /// See [`DomainModificationImpact::CURRENT`].
        const CURRENT = 0;
        /// The running domain.
        const LIVE = 1;
        /// The persistent configuration.
        const CONFIG = 2;
        /// Change the maximum rather than the current allocation.
        const MAXIMUM = 4;
    }
}

crate::proto::flags::flag_set! {
    /// `virDomainVcpuFlags` for [`DomainSetVcpusFlags`] and [`DomainGetVcpusFlags`].
    pub struct DomainVcpuFlags: u32 {
        /// See [`DomainModificationImpact::CURRENT`].
        const CURRENT = 0;
        /// The running domain.
        const LIVE = 1;
        /// The persistent configuration.
        const CONFIG = 2;
        /// The maximum rather than the current count.
        const MAXIMUM = 4;
        /// Ask the guest agent (guest-visible CPUs).
        const GUEST = 8;
        /// Make added vCPUs hot-unpluggable.
        const HOTPLUGGABLE = 16;
    }
}

crate::proto::flags::flag_set! {
    /// `virDomainSaveRestoreFlags` for save, restore and managed save.
    pub struct DomainSaveRestoreFlags: u32 {
        /// Bypass the host page cache.
        const BYPASS_CACHE = 1;
        /// Run the guest after restore.
        const RUNNING = 2;
        /// Leave the guest paused after restore.
        const PAUSED = 4;
        /// Re-initialize NVRAM from its template.
        const RESET_NVRAM = 8;
    }
}

crate::proto::flags::flag_set! {
    /// `virDomainBlockResizeFlags` for [`DomainBlockResize`].
    pub struct DomainBlockResizeFlags: u32 {
        /// `size` is in bytes, not KiB.
        const BYTES = 1;
        /// Resize to the full capacity of the backing storage (newer daemons only).
        const CAPACITY = 2;
    }
}

crate::proto::names::named! {
    /// `virDomainInterfaceAddressesSource` for [`DomainInterfaceAddresses`].
    pub struct InterfaceAddressesSource(u32) {
        /// DHCP leases of libvirt-managed networks.
        LEASE = 0,
        /// The guest agent.
        AGENT = 1,
        /// The host's ARP table.
        ARP = 2,
    }
}

crate::proto::flags::flag_set! {
    /// `virDomainGetHostnameFlags` for [`DomainGetHostname`] (0: the hypervisor's choice).
    pub struct DomainGetHostnameFlags: u32 {
        /// Use DHCP leases.
        const LEASE = 1;
        /// Ask the guest agent.
        const AGENT = 2;
    }
}

xdr_struct! {
    /// Args holding just a domain (`remote_domain_create_args`, `…_destroy_args`, …).
    pub struct DomainArgs {
        /// The domain.
        pub dom: NonnullDomain,
    }
}

xdr_struct! {
    /// Args holding a domain and flags.
    pub struct DomainFlagsArgs<F = u32> {
        /// The domain.
        pub dom: NonnullDomain,
        /// Procedure-specific flags.
        pub flags: F,
    }
}

xdr_struct! {
    /// A return holding just a domain.
    pub struct DomainRet {
        /// The domain.
        pub dom: NonnullDomain,
    }
}

/// `remote_domain_lookup_by_name_args`.
pub type DomainLookupByNameArgs = NameArgs;
/// `remote_domain_lookup_by_uuid_args`.
pub type DomainLookupByUuidArgs = UuidArgs;
/// `remote_domain_define_xml_args`.
pub type DomainDefineXmlArgs = XmlArgs;
/// `remote_domain_define_xml_flags_args` (flags: [`DomainDefineFlags`]).
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
        /// [`DomainCreateFlags`].
        pub flags: DomainCreateFlags,
    }
}

xdr_struct! {
    /// `{ dom; xml }`: `remote_domain_attach_device_args`, `…_detach_device_args`.
    pub struct DomainXmlArgs {
        /// The domain.
        pub dom: NonnullDomain,
        /// Device XML.
        pub xml: LvString,
    }
}

xdr_struct! {
    /// `{ dom; xml; flags }`: attach/detach/update device with flags.
    pub struct DomainXmlFlagsArgs {
        /// The domain.
        pub dom: NonnullDomain,
        /// Device XML.
        pub xml: LvString,
        /// [`DomainDeviceModifyFlags`].
        pub flags: DomainDeviceModifyFlags,
    }
}

xdr_struct! {
    /// `remote_domain_detach_device_alias_args`.
    pub struct DomainDetachDeviceAliasArgs {
        /// The domain.
        pub dom: NonnullDomain,
        /// Device alias (`<alias name=…>`).
        pub alias: LvString,
        /// [`DomainDeviceModifyFlags`].
        pub flags: DomainDeviceModifyFlags,
    }
}

/// `remote_domain_get_state_ret`: the state and the reason for it, typed by the state
/// (`StateReason::Shutoff(ShutoffReason::DESTROYED)`); prints as `virsh domstate --reason`
/// does (`shut off (destroyed)`). On the wire two `int`s, as declared; written by hand
/// (not `xdr_struct!`) because the reason decodes in the context of the state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct DomainGetStateRet {
    /// [`DomainState`].
    pub state: DomainState,
    /// The reason, typed by [`state`](Self::state) ([`StateReason::of`]); encodes as its
    /// number whatever its variant.
    pub reason: StateReason,
}

impl crate::wire::xdr::Encode for DomainGetStateRet {
    fn encode(&self, enc: &mut crate::wire::xdr::Encoder) {
        self.state.encode(enc);
        self.reason.code().encode(enc);
    }
}

impl crate::wire::xdr::Decode for DomainGetStateRet {
    const MIN_SIZE: usize = 8;
    fn decode(dec: &mut crate::wire::xdr::Decoder) -> Result<Self, crate::wire::xdr::DecodeError> {
        let state = DomainState::decode(dec)?;
        let reason = StateReason::of(state, i32::decode(dec)?);
        Ok(Self { state, reason })
    }
}

impl crate::wire::xdr::Field<0> for DomainGetStateRet {
    type Ty = DomainState;
}

impl crate::wire::xdr::Field<1> for DomainGetStateRet {
    type Ty = StateReason;
}

xdr_struct! {
    /// `remote_domain_get_info_ret`. rpcgen's `unsigned char` and `unsigned short` are
    /// 4 bytes on the wire, hence `u32`.
    pub struct DomainGetInfoRet {
        /// [`DomainState`] (an `unsigned char` in C).
        pub state: DomainState,
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
        pub dom: NonnullDomain,
        /// 1 to start with the daemon.
        pub autostart: i32,
    }
}

xdr_struct! {
    /// `remote_domain_set_memory_args` / `…_set_max_memory_args`.
    pub struct DomainSetMemoryArgs {
        /// The domain.
        pub dom: NonnullDomain,
        /// Memory in KiB.
        pub memory: u64,
    }
}

xdr_struct! {
    /// `remote_domain_set_memory_flags_args`.
    pub struct DomainSetMemoryFlagsArgs {
        /// The domain.
        pub dom: NonnullDomain,
        /// Memory in KiB.
        pub memory: u64,
        /// [`DomainMemoryModFlags`].
        pub flags: DomainMemoryModFlags,
    }
}

xdr_struct! {
    /// `remote_domain_set_vcpus_args`.
    pub struct DomainSetVcpusArgs {
        /// The domain.
        pub dom: NonnullDomain,
        /// vCPU count.
        pub nvcpus: u32,
    }
}

xdr_struct! {
    /// `remote_domain_set_vcpus_flags_args`.
    pub struct DomainSetVcpusFlagsArgs {
        /// The domain.
        pub dom: NonnullDomain,
        /// vCPU count.
        pub nvcpus: u32,
        /// [`DomainVcpuFlags`].
        pub flags: DomainVcpuFlags,
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
        pub dom: NonnullDomain,
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
        pub dom: NonnullDomain,
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
        pub dom: NonnullDomain,
        /// vCPU number.
        pub vcpu: u32,
        /// Host CPU bitmap.
        pub cpumap: Bytes [limits::CPUMAP_MAX],
        /// [`DomainModificationImpact`].
        pub flags: DomainModificationImpact,
    }
}

xdr_struct! {
    /// `remote_domain_set_guest_vcpus_args` / `remote_domain_set_vcpu_args`.
    pub struct DomainSetGuestVcpusArgs {
        /// The domain.
        pub dom: NonnullDomain,
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
        pub dom: NonnullDomain,
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
        pub dom: NonnullDomain,
        /// Path on the host.
        pub to: LvString,
    }
}

xdr_struct! {
    /// `remote_domain_save_flags_args`.
    pub struct DomainSaveFlagsArgs {
        /// The domain.
        pub dom: NonnullDomain,
        /// Path on the host.
        pub to: LvString,
        /// Replacement XML to store in the image.
        pub dxml: Option<LvString>,
        /// [`DomainSaveRestoreFlags`].
        pub flags: DomainSaveRestoreFlags,
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
        /// [`DomainSaveRestoreFlags`].
        pub flags: DomainSaveRestoreFlags,
    }
}

xdr_struct! {
    /// `remote_domain_save_image_get_xml_desc_args`.
    pub struct DomainSaveImageGetXmlDescArgs {
        /// Path of the save image.
        pub file: LvString,
        /// [`DomainXmlFlags`].
        pub flags: DomainXmlFlags,
    }
}

xdr_struct! {
    /// `remote_domain_save_image_define_xml_args`.
    pub struct DomainSaveImageDefineXmlArgs {
        /// Path of the save image.
        pub file: LvString,
        /// Replacement XML.
        pub dxml: LvString,
        /// [`DomainSaveRestoreFlags`].
        pub flags: DomainSaveRestoreFlags,
    }
}

xdr_struct! {
    /// `remote_domain_managed_save_define_xml_args`.
    pub struct DomainManagedSaveDefineXmlArgs {
        /// The domain.
        pub dom: NonnullDomain,
        /// Replacement XML.
        pub dxml: Option<LvString>,
        /// [`DomainSaveRestoreFlags`].
        pub flags: DomainSaveRestoreFlags,
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
        pub dom: NonnullDomain,
        /// Parameters wanted (0: just report how many exist).
        pub nparams: i32,
        /// [`DomainGetParamsFlags`].
        pub flags: DomainGetParamsFlags,
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
        pub dom: NonnullDomain,
        /// The parameters to change.
        pub params: Vec<TypedParam> [limits::DOMAIN_MEMORY_PARAMETERS_MAX],
        /// [`DomainModificationImpact`].
        pub flags: DomainModificationImpact,
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
        pub dom: NonnullDomain,
        /// The parameters to change.
        pub params: Vec<TypedParam> [limits::DOMAIN_BLKIO_PARAMETERS_MAX],
        /// [`DomainModificationImpact`].
        pub flags: DomainModificationImpact,
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
        pub dom: NonnullDomain,
        /// The parameters to change.
        pub params: Vec<TypedParam> [limits::DOMAIN_SCHEDULER_PARAMETERS_MAX],
        /// [`DomainModificationImpact`].
        pub flags: DomainModificationImpact,
    }
}

xdr_struct! {
    /// `remote_domain_block_stats_args`.
    pub struct DomainBlockStatsArgs {
        /// The domain.
        pub dom: NonnullDomain,
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
        pub dom: NonnullDomain,
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
        pub dom: NonnullDomain,
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
        pub dom: NonnullDomain,
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
        pub kind: DomainJobType,
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
        pub dom: NonnullDomain,
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
        pub dom: NonnullDomain,
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
        pub dom: NonnullDomain,
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
        pub dom: NonnullDomain,
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
        pub dom: NonnullDomain,
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
        pub dom: NonnullDomain,
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
        pub dom: NonnullDomain,
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
        pub dom: NonnullDomain,
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
        pub kind: BlockJobType,
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
        pub dom: NonnullDomain,
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
        pub dom: NonnullDomain,
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
        pub dom: NonnullDomain,
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
        pub dom: NonnullDomain,
        /// Disk target or source path.
        pub disk: LvString,
        /// New size (KiB, or bytes with [`DomainBlockResizeFlags::BYTES`]).
        pub size: u64,
        /// [`DomainBlockResizeFlags`].
        pub flags: DomainBlockResizeFlags,
    }
}

xdr_struct! {
    /// `remote_domain_set_block_threshold_args`.
    pub struct DomainSetBlockThresholdArgs {
        /// The domain.
        pub dom: NonnullDomain,
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
        pub dom: NonnullDomain,
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
        pub dom: NonnullDomain,
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
        pub dom: NonnullDomain,
        /// [`MetadataType`].
        pub kind: MetadataType,
        /// New value; `None` removes it.
        pub metadata: Option<LvString>,
        /// XML namespace prefix (ELEMENT only).
        pub key: Option<LvString>,
        /// XML namespace URI (ELEMENT only).
        pub uri: Option<LvString>,
        /// [`DomainModificationImpact`].
        pub flags: DomainModificationImpact,
    }
}

xdr_struct! {
    /// `remote_domain_get_metadata_args`.
    pub struct DomainGetMetadataArgs {
        /// The domain.
        pub dom: NonnullDomain,
        /// [`MetadataType`].
        pub kind: MetadataType,
        /// XML namespace URI (ELEMENT only).
        pub uri: Option<LvString>,
        /// [`DomainModificationImpact`].
        pub flags: DomainModificationImpact,
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
        pub dom: NonnullDomain,
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
        pub dom: NonnullDomain,
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
        pub dom: NonnullDomain,
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
        /// [`IpAddrType`].
        pub kind: IpAddrType,
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
        pub dom: NonnullDomain,
        /// [`InterfaceAddressesSource`].
        pub source: InterfaceAddressesSource,
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
        pub dom: NonnullDomain,
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
        pub dom: NonnullDomain,
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
        pub dom: NonnullDomain,
        /// `virDomainLifecycle` (POWEROFF 0, REBOOT 1, CRASH 2).
        pub kind: u32,
        /// `virDomainLifecycleAction` (DESTROY 0, RESTART 1, …).
        pub action: u32,
        /// [`DomainModificationImpact`].
        pub flags: DomainModificationImpact,
    }
}

xdr_struct! {
    /// `remote_domain_get_guest_info_args`.
    pub struct DomainGetGuestInfoArgs {
        /// The domain.
        pub dom: NonnullDomain,
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
        pub dom: NonnullDomain,
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
        pub dom: NonnullDomain,
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
        pub dom: NonnullDomain,
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
        pub dom: NonnullDomain,
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
        pub dom: NonnullDomain,
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
        pub dom: NonnullDomain,
        /// Disk target or source path (empty: totals over every disk).
        pub path: LvString,
        /// Parameters wanted (0: just report how many exist).
        pub nparams: i32,
        /// [`TypedParameterFlags`].
        pub flags: TypedParameterFlags,
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
        pub dom: NonnullDomain,
        /// Parameters per CPU wanted (0: just report how many exist).
        pub nparams: u32,
        /// First host CPU, or -1 for the domain's total.
        pub start_cpu: i32,
        /// Host CPUs wanted (at most `REMOTE_DOMAIN_GET_CPU_STATS_NCPUS_MAX`; 1 for the total).
        pub ncpus: u32,
        /// [`TypedParameterFlags`].
        pub flags: TypedParameterFlags,
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
        pub dom: NonnullDomain,
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
        pub dom: NonnullDomain,
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
        pub dom: NonnullDomain,
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
        pub dom: NonnullDomain,
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
        pub dom: NonnullDomain,
        /// `file`, `dxml`, `image_format`, … (`VIR_DOMAIN_SAVE_PARAM_*`).
        pub params: Vec<TypedParam> [limits::DOMAIN_SAVE_PARAMS_MAX],
        /// [`DomainSaveRestoreFlags`].
        pub flags: DomainSaveRestoreFlags,
    }
}

xdr_struct! {
    /// `remote_domain_restore_params_args`.
    pub struct DomainRestoreParamsArgs {
        /// `file`, `dxml`, … (`VIR_DOMAIN_SAVE_PARAM_*`).
        pub params: Vec<TypedParam> [limits::DOMAIN_SAVE_PARAMS_MAX],
        /// [`DomainSaveRestoreFlags`].
        pub flags: DomainSaveRestoreFlags,
    }
}

xdr_struct! {
    /// `remote_domain_graphics_reload_args`.
    pub struct DomainGraphicsReloadArgs {
        /// The domain.
        pub dom: NonnullDomain,
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
        pub dom: NonnullDomain,
        /// Interface alias or target device (`None`: every interface).
        pub device: Option<LvString>,
        /// Announcement tuning (rounds, intervals).
        pub params: Vec<TypedParam> [limits::DOMAIN_ANNOUNCE_INTERFACE_PARAMS_MAX],
        /// Must be 0.
        pub flags: u32,
    }
}

/// This module's procedure table as data: `rows!(callback)` hands every row to `callback!`,
/// as quinn's `apply_params!` does. [`procedures!`](crate::proto::procedures) declares the types
/// and the table from the rows; the client expands the same rows into the object API.
macro_rules! rows { ($callback:ident) => { $callback! {
    [domain]
    table PROCEDURES;
    /// `virDomainAttachDevice` (live only).
    DomainAttachDevice = 8: DomainXmlArgs => (), since "0.3.0";
        => Domain::attach_device(dom = self, xml);
    /// `virDomainCreate`: start a defined domain.
    DomainCreate = 9: DomainArgs => (), since "0.3.0";
        => Domain::create(dom = self);
    /// `virDomainCreateXML`: start a transient domain.
    DomainCreateXml = 10: DomainCreateXmlArgs => DomainRet, since "0.3.0";
        => Connect::create_domain_xml(xml_desc, flags) -> dom[0];
    /// `virDomainDefineXML`.
    DomainDefineXml = 11: XmlArgs => DomainRet, since "0.3.0";
        => Connect::define_domain_xml(xml) -> dom[0];
    /// `virDomainDestroy`.
    DomainDestroy = 12: DomainArgs => (), since "0.3.0";
        => Domain::destroy(dom = self);
    /// `virDomainDetachDevice` (live only).
    DomainDetachDevice = 13: DomainXmlArgs => (), since "0.3.0";
        => Domain::detach_device(dom = self, xml);
    /// `virDomainGetXMLDesc` (flags: [`DomainXmlFlags`]).
    DomainGetXmlDesc = 14: DomainFlagsArgs<DomainXmlFlags> => XmlRet, since "0.3.0";
        => Domain::xml_desc(dom = self, flags) -> xml[0];
    /// `virDomainGetAutostart`.
    DomainGetAutostart = 15: DomainArgs => AutostartRet, since "0.3.0";
        => Domain::autostart(dom = self) -> autostart[0] as bool;
    /// `virDomainGetInfo`.
    DomainGetInfo = 16: DomainArgs => DomainGetInfoRet, since "0.3.0";
        => Domain::info(dom = self);
    /// `virDomainGetMaxMemory`.
    DomainGetMaxMemory = 17: DomainArgs => DomainGetMaxMemoryRet, since "0.3.0";
        => Domain::max_memory(dom = self) -> memory[0];
    /// `virDomainGetMaxVcpus`.
    DomainGetMaxVcpus = 18: DomainArgs => NumRet, since "0.3.0";
        => Domain::max_vcpus(dom = self) -> num[0];
    /// `virDomainGetOSType`.
    DomainGetOsType = 19: DomainArgs => DomainGetOsTypeRet, since "0.3.0";
        => Domain::os_type(dom = self) -> kind[0];
    /// `virDomainGetVcpus`.
    DomainGetVcpus = 20: DomainGetVcpusArgs => DomainGetVcpusRet, since "0.3.0";
        => Domain::vcpus(dom = self, maxinfo, maplen);
    /// `virDomainLookupByID`.
    DomainLookupById = 22: DomainLookupByIdArgs => DomainRet, since "0.3.0";
        => Connect::lookup_domain_by_id(id) -> dom[0];
    /// `virDomainLookupByName`.
    DomainLookupByName = 23: NameArgs => DomainRet, since "0.3.0";
        => Connect::lookup_domain_by_name(name) -> dom[0];
    /// `virDomainLookupByUUID`.
    DomainLookupByUuid = 24: UuidArgs => DomainRet, since "0.3.0";
        => Connect::lookup_domain_by_uuid(uuid) -> dom[0];
    /// `virDomainPinVcpu`.
    DomainPinVcpu = 26: DomainPinVcpuArgs => (), since "0.3.0";
        => Domain::pin_vcpu(dom = self, vcpu, cpumap);
    /// `virDomainReboot` (flags: [`DomainRebootFlagValues`]).
    DomainReboot = 27: DomainFlagsArgs<DomainRebootFlagValues> => (), since "0.3.0";
        => Domain::reboot(dom = self, flags);
    /// `virDomainResume`.
    DomainResume = 28: DomainArgs => (), since "0.3.0";
        => Domain::resume(dom = self);
    /// `virDomainSetAutostart`.
    DomainSetAutostart = 29: DomainSetAutostartArgs => (), since "0.3.0";
        => Domain::set_autostart(dom = self, autostart);
    /// `virDomainSetMaxMemory`.
    DomainSetMaxMemory = 30: DomainSetMemoryArgs => (), since "0.3.0";
        => Domain::set_max_memory(dom = self, memory);
    /// `virDomainSetMemory` (live).
    DomainSetMemory = 31: DomainSetMemoryArgs => (), since "0.3.0";
        => Domain::set_memory(dom = self, memory);
    /// `virDomainSetVcpus` (live).
    DomainSetVcpus = 32: DomainSetVcpusArgs => (), since "0.3.0";
        => Domain::set_vcpus(dom = self, nvcpus);
    /// `virDomainShutdown`.
    DomainShutdown = 33: DomainArgs => (), since "0.3.0";
        => Domain::shutdown(dom = self);
    /// `virDomainSuspend`.
    DomainSuspend = 34: DomainArgs => (), since "0.3.0";
        => Domain::suspend(dom = self);
    /// `virDomainUndefine`.
    DomainUndefine = 35: DomainArgs => (), since "0.3.0";
        => Domain::undefine(dom = self);
    /// `virDomainCoreDump`.
    DomainCoreDump = 53: DomainCoreDumpArgs => (), since "0.3.0";
        => Domain::core_dump(dom = self, to, flags);
    /// `virDomainRestore`.
    DomainRestore = 54: DomainRestoreArgs => (), since "0.3.0";
        => Connect::domain_restore(from);
    /// `virDomainSave`.
    DomainSave = 55: DomainSaveArgs => (), since "0.3.0";
        => Domain::save(dom = self, to);
    /// `virDomainGetSchedulerType`.
    DomainGetSchedulerType = 56: DomainArgs => DomainGetSchedulerTypeRet, since "0.3.0";
        => Domain::scheduler_type(dom = self);
    /// `virDomainBlockStats`.
    DomainBlockStats = 64: DomainBlockStatsArgs => DomainBlockStatsRet, since "0.3.2";
        => Domain::block_stats(dom = self, path);
    /// `virDomainInterfaceStats`.
    DomainInterfaceStats = 65: DomainInterfaceStatsArgs => DomainInterfaceStatsRet, since "0.3.2";
        => Domain::interface_stats(dom = self, device);
    /// `virDomainBlockPeek`.
    DomainBlockPeek = 103: DomainBlockPeekArgs => DomainBlockPeekRet, since "0.4.2";
        => Domain::block_peek(dom = self, path, offset, size, flags) -> buffer[0];
    /// `virDomainMemoryPeek`.
    DomainMemoryPeek = 104: DomainMemoryPeekArgs => DomainMemoryPeekRet, since "0.4.2";
        => Domain::memory_peek(dom = self, offset, size, flags) -> buffer[0];
    /// `virDomainGetSecurityLabel`.
    DomainGetSecurityLabel = 121: DomainArgs => DomainGetSecurityLabelRet, since "0.6.1";
        => Domain::security_label(dom = self);
    /// `virDomainIsActive`.
    DomainIsActive = 150: DomainArgs => ActiveRet, since "0.7.3";
        => Domain::is_active(dom = self) -> active[0] as bool;
    /// `virDomainIsPersistent`.
    DomainIsPersistent = 151: DomainArgs => PersistentRet, since "0.7.3";
        => Domain::is_persistent(dom = self) -> persistent[0] as bool;
    /// `virDomainMemoryStats`.
    DomainMemoryStats = 159: DomainMemoryStatsArgs => DomainMemoryStatsRet, since "0.7.5";
        => Domain::memory_stats(dom = self, max_stats, flags) -> stats[0];
    /// `virDomainAttachDeviceFlags`.
    DomainAttachDeviceFlags = 160: DomainXmlFlagsArgs => (), since "0.7.7";
        => Domain::attach_device_flags(dom = self, xml, flags);
    /// `virDomainDetachDeviceFlags`.
    DomainDetachDeviceFlags = 161: DomainXmlFlagsArgs => (), since "0.7.7";
        => Domain::detach_device_flags(dom = self, xml, flags);
    /// `virDomainGetJobInfo`.
    DomainGetJobInfo = 163: DomainArgs => DomainGetJobInfoRet, since "0.7.7";
        => Domain::job_info(dom = self);
    /// `virDomainAbortJob`.
    DomainAbortJob = 164: DomainArgs => (), since "0.7.7";
        => Domain::abort_job(dom = self);
    /// `virDomainUpdateDeviceFlags`.
    DomainUpdateDeviceFlags = 174: DomainXmlFlagsArgs => (), since "0.8.0";
        => Domain::update_device_flags(dom = self, xml, flags);
    /// `virDomainManagedSave` (flags: [`DomainSaveRestoreFlags`]).
    DomainManagedSave = 182: DomainFlagsArgs<DomainSaveRestoreFlags> => (), since "0.8.0";
        => Domain::managed_save(dom = self, flags);
    /// `virDomainHasManagedSaveImage` (flags must be 0).
    DomainHasManagedSaveImage = 183: DomainFlagsArgs => DomainResultRet, since "0.8.0";
        => Domain::has_managed_save_image(dom = self, flags) -> result[0] as bool;
    /// `virDomainManagedSaveRemove` (flags must be 0).
    DomainManagedSaveRemove = 184: DomainFlagsArgs => (), since "0.8.0";
        => Domain::managed_save_remove(dom = self, flags);
    /// `virDomainGetBlockInfo`.
    DomainGetBlockInfo = 194: DomainGetBlockInfoArgs => DomainGetBlockInfoRet, since "0.8.1";
        => Domain::block_info(dom = self, path, flags);
    /// `virDomainCreateWithFlags` (flags: [`DomainCreateFlags`]); returns the new id.
    DomainCreateWithFlags = 196: DomainFlagsArgs<DomainCreateFlags> => DomainRet, since "0.8.2";
        => Domain::create_with_flags(dom = self, flags) -> dom[0];
    /// `virDomainSetMemoryParameters`.
    DomainSetMemoryParameters = 197: DomainSetMemoryParametersArgs => (), since "0.8.5";
        => Domain::set_memory_parameters(dom = self, params, flags);
    /// `virDomainGetMemoryParameters`.
    DomainGetMemoryParameters = 198: DomainGetParamsArgs => DomainGetMemoryParametersRet, since "0.8.5";
        => Domain::memory_parameters(dom = self, nparams = typed_count, flags) -> params[0];
    /// `virDomainSetVcpusFlags`.
    DomainSetVcpusFlags = 199: DomainSetVcpusFlagsArgs => (), since "0.8.5";
        => Domain::set_vcpus_flags(dom = self, nvcpus, flags);
    /// `virDomainGetVcpusFlags` (flags: [`DomainVcpuFlags`]).
    DomainGetVcpusFlags = 200: DomainFlagsArgs<DomainVcpuFlags> => NumRet, since "0.8.5";
        => Domain::vcpus_flags(dom = self, flags) -> num[0];
    /// `virDomainOpenConsole`. The stream is **bidirectional** (guest output arrives as
    /// download data, keystrokes are sent as upload data); it is declared `Download` because
    /// the daemon annotates it `@readstream` and the table has no bidirectional kind.
    DomainOpenConsole = 201: DomainOpenConsoleArgs => (), since "0.8.6", stream Duplex;
    /// `virDomainIsUpdated`.
    DomainIsUpdated = 202: DomainArgs => DomainIsUpdatedRet, since "0.8.6";
        => Domain::is_updated(dom = self) -> updated[0];
    /// `virDomainSetMemoryFlags`.
    DomainSetMemoryFlags = 204: DomainSetMemoryFlagsArgs => (), since "0.9.0";
        => Domain::set_memory_flags(dom = self, memory, flags);
    /// `virDomainSetBlkioParameters`.
    DomainSetBlkioParameters = 205: DomainSetBlkioParametersArgs => (), since "0.9.0";
        => Domain::set_blkio_parameters(dom = self, params, flags);
    /// `virDomainGetBlkioParameters`.
    DomainGetBlkioParameters = 206: DomainGetParamsArgs => DomainGetBlkioParametersRet, since "0.9.0";
        => Domain::blkio_parameters(dom = self, nparams = typed_count, flags) -> params[0];
    /// `virDomainInjectNMI` (flags must be 0).
    DomainInjectNmi = 210: DomainFlagsArgs => (), since "0.9.2";
        => Domain::inject_nmi(dom = self, flags);
    /// `virDomainScreenshot`: the image follows as download stream data.
    DomainScreenshot = 211: DomainScreenshotArgs => DomainScreenshotRet, since "0.9.2", stream Download;
    /// `virDomainGetState` (flags must be 0).
    DomainGetState = 212: DomainFlagsArgs => DomainGetStateRet, since "0.9.2";
        => Domain::state(dom = self, flags);
    /// `virDomainSetSchedulerParametersFlags`.
    DomainSetSchedulerParametersFlags = 219: DomainSetSchedulerParametersFlagsArgs => (), since "0.9.2";
        => Domain::set_scheduler_parameters_flags(dom = self, params, flags);
    /// `virDomainGetSchedulerParametersFlags`.
    DomainGetSchedulerParametersFlags = 223: DomainGetParamsArgs => DomainGetSchedulerParametersRet, since "0.9.2";
        => Domain::scheduler_parameters_flags(dom = self, nparams = typed(crate::proto::limits::DOMAIN_SCHEDULER_PARAMETERS_MAX as i32), flags) -> params[0];
    /// `virDomainPinVcpuFlags`.
    DomainPinVcpuFlags = 225: DomainPinVcpuFlagsArgs => (), since "0.9.3";
        => Domain::pin_vcpu_flags(dom = self, vcpu, cpumap, flags);
    /// `virDomainSendKey`.
    DomainSendKey = 226: DomainSendKeyArgs => (), since "0.9.3";
        => Domain::send_key(dom = self, codeset, holdtime, keycodes, flags);
    /// `virDomainGetControlInfo`.
    DomainGetControlInfo = 229: DomainFlagsArgs => DomainGetControlInfoRet, since "0.9.3";
        => Domain::control_info(dom = self, flags);
    /// `virDomainUndefineFlags` (flags: [`DomainUndefineFlagsValues`]).
    DomainUndefineFlags = 231: DomainFlagsArgs<DomainUndefineFlagsValues> => (), since "0.9.4";
        => Domain::undefine_flags(dom = self, flags);
    /// `virDomainSaveFlags`.
    DomainSaveFlags = 232: DomainSaveFlagsArgs => (), since "0.9.4";
        => Domain::save_flags(dom = self, to, dxml, flags);
    /// `virDomainRestoreFlags`.
    DomainRestoreFlags = 233: DomainRestoreFlagsArgs => (), since "0.9.4";
        => Connect::domain_restore_flags(from, dxml, flags);
    /// `virDomainDestroyFlags` (flags: [`DomainDestroyFlagsValues`]).
    DomainDestroyFlags = 234: DomainFlagsArgs<DomainDestroyFlagsValues> => (), since "0.9.4";
        => Domain::destroy_flags(dom = self, flags);
    /// `virDomainSaveImageGetXMLDesc`.
    DomainSaveImageGetXmlDesc = 235: DomainSaveImageGetXmlDescArgs => XmlRet, since "0.9.4";
        => Connect::domain_save_image_xml_desc(file, flags) -> xml[0];
    /// `virDomainSaveImageDefineXML`.
    DomainSaveImageDefineXml = 236: DomainSaveImageDefineXmlArgs => (), since "0.9.4";
        => Connect::define_domain_save_image_xml(file, dxml, flags);
    /// `virDomainBlockJobAbort`.
    DomainBlockJobAbort = 237: DomainBlockPathArgs => (), since "0.9.4";
        => Domain::block_job_abort(dom = self, path, flags);
    /// `virDomainGetBlockJobInfo`.
    DomainGetBlockJobInfo = 238: DomainBlockPathArgs => DomainGetBlockJobInfoRet, since "0.9.4";
        => Domain::block_job_info(dom = self, path, flags);
    /// `virDomainBlockJobSetSpeed`.
    DomainBlockJobSetSpeed = 239: DomainBlockBandwidthArgs => (), since "0.9.4";
        => Domain::block_job_set_speed(dom = self, path, bandwidth, flags);
    /// `virDomainBlockPull`.
    DomainBlockPull = 240: DomainBlockBandwidthArgs => (), since "0.9.4";
        => Domain::block_pull(dom = self, path, bandwidth, flags);
    /// `virDomainBlockStatsFlags`.
    DomainBlockStatsFlags = 243: DomainBlockStatsFlagsArgs => DomainBlockStatsFlagsRet, since "0.9.5";
        => Domain::block_stats_flags(dom = self, path, nparams = typed_count, flags) -> params[0];
    /// `virDomainReset` (flags must be 0).
    DomainReset = 245: DomainFlagsArgs => (), since "0.9.7";
        => Domain::reset(dom = self, flags);
    /// `virDomainOpenGraphics`: hand the daemon a socket (one descriptor sent with the call)
    /// to connect graphics client `idx` to.
    DomainOpenGraphics = 249: DomainOpenGraphicsArgs => (), since "0.9.7", fds Call;
    /// `virDomainBlockResize`.
    DomainBlockResize = 251: DomainBlockResizeArgs => (), since "0.9.8";
        => Domain::block_resize(dom = self, disk, size, flags);
    /// `virDomainShutdownFlags` (flags: [`DomainShutdownFlagValues`]).
    DomainShutdownFlags = 258: DomainFlagsArgs<DomainShutdownFlagValues> => (), since "0.9.10";
        => Domain::shutdown_flags(dom = self, flags);
    /// `virDomainPMSuspendForDuration`.
    DomainPmSuspendForDuration = 261: DomainPmSuspendForDurationArgs => (), since "0.9.10";
        => Domain::pm_suspend_for_duration(dom = self, target, duration, flags);
    /// `virDomainGetCPUStats`.
    DomainGetCpuStats = 262: DomainGetCpuStatsArgs => DomainGetCpuStatsRet, since "0.9.10";
        => Domain::cpu_stats(dom = self, nparams = typed_count, start_cpu, ncpus, flags) -> params[0];
    /// `virDomainGetDiskErrors`.
    DomainGetDiskErrors = 263: DomainGetDiskErrorsArgs => DomainGetDiskErrorsRet, since "0.9.10";
        => Domain::disk_errors(dom = self, maxerrors, flags);
    /// `virDomainSetMetadata`.
    DomainSetMetadata = 264: DomainSetMetadataArgs => (), since "0.9.10";
        => Domain::set_metadata(dom = self, kind, metadata, key, uri, flags);
    /// `virDomainGetMetadata`.
    DomainGetMetadata = 265: DomainGetMetadataArgs => DomainGetMetadataRet, since "0.9.10";
        => Domain::metadata(dom = self, kind, uri, flags) -> metadata[0];
    /// `virDomainBlockRebase`.
    DomainBlockRebase = 266: DomainBlockRebaseArgs => (), since "0.9.10";
        => Domain::block_rebase(dom = self, path, base, bandwidth, flags);
    /// `virDomainPMWakeup` (flags must be 0).
    DomainPmWakeup = 267: DomainFlagsArgs => (), since "0.9.11";
        => Domain::pm_wakeup(dom = self, flags);
    /// `virDomainGetHostname` (flags: [`DomainGetHostnameFlags`]).
    DomainGetHostname = 277: DomainFlagsArgs<DomainGetHostnameFlags> => DomainGetHostnameRet, since "0.10.0";
        => Domain::hostname(dom = self, flags) -> hostname[0];
    /// `virDomainGetSecurityLabelList`.
    DomainGetSecurityLabelList = 278: DomainArgs => DomainGetSecurityLabelListRet, since "0.10.0";
        => Domain::security_label_list(dom = self) -> labels[0];
    /// `virDomainBlockCommit`.
    DomainBlockCommit = 290: DomainBlockCommitArgs => (), since "0.10.2";
        => Domain::block_commit(dom = self, disk, base, top, bandwidth, flags);
    /// `virDomainFSTrim`.
    DomainFsTrim = 294: DomainFsTrimArgs => (), since "1.0.1";
        => Domain::fs_trim(dom = self, mount_point, minimum, flags);
    /// `virDomainSendProcessSignal`.
    DomainSendProcessSignal = 295: DomainSendProcessSignalArgs => (), since "1.0.1";
        => Domain::send_process_signal(dom = self, pid_value, signum, flags);
    /// `virDomainOpenChannel`. Bidirectional like [`DomainOpenConsole`]; declared `Download`.
    DomainOpenChannel = 296: DomainOpenChannelArgs => (), since "1.0.2", stream Duplex;
    /// `virDomainGetJobStats`.
    DomainGetJobStats = 298: DomainFlagsArgs => DomainGetJobStatsRet, since "1.0.3";
        => Domain::job_stats(dom = self, flags);
    /// `virDomainCreateXMLWithFiles`: [`DomainCreateXml`] passing descriptors to the guest.
    DomainCreateXmlWithFiles = 309: DomainCreateXmlArgs => DomainRet, since "1.1.1", fds Call;
    /// `virDomainCreateWithFiles`: [`DomainCreateWithFlags`] passing descriptors to the guest.
    DomainCreateWithFiles = 310: DomainFlagsArgs<DomainCreateFlags> => DomainRet, since "1.1.1", fds Call;
    /// `virDomainCoreDumpWithFormat`.
    DomainCoreDumpWithFormat = 334: DomainCoreDumpWithFormatArgs => (), since "1.2.3";
        => Domain::core_dump_with_format(dom = self, to, dumpformat, flags);
    /// `virDomainFSFreeze`.
    DomainFsFreeze = 335: DomainFsFreezeArgs => DomainFsFreezeRet, since "1.2.5";
        => Domain::fs_freeze(dom = self, mountpoints, flags) -> filesystems[0];
    /// `virDomainFSThaw`.
    DomainFsThaw = 336: DomainFsFreezeArgs => DomainFsFreezeRet, since "1.2.5";
        => Domain::fs_thaw(dom = self, mountpoints, flags) -> filesystems[0];
    /// `virDomainGetTime` (flags must be 0).
    DomainGetTime = 337: DomainFlagsArgs => DomainGetTimeRet, since "1.2.5";
        => Domain::time(dom = self, flags);
    /// `virDomainSetTime`.
    DomainSetTime = 338: DomainSetTimeArgs => (), since "1.2.5";
        => Domain::set_time(dom = self, seconds, nseconds, flags);
    /// `virDomainOpenGraphicsFD`: the daemon returns a connected graphics socket (one
    /// descriptor with the reply).
    DomainOpenGraphicsFd = 343: DomainOpenGraphicsArgs => (), since "1.2.8", fds Reply;
    /// `virDomainBlockCopy`.
    DomainBlockCopy = 345: DomainBlockCopyArgs => (), since "1.2.8";
        => Domain::block_copy(dom = self, path, destxml, params, flags);
    /// `virDomainGetFSInfo` (flags must be 0).
    DomainGetFsInfo = 349: DomainFlagsArgs => DomainGetFsInfoRet, since "1.2.11";
        => Domain::fs_info(dom = self, flags) -> info[0];
    /// `virDomainDefineXMLFlags` (flags: [`DomainDefineFlags`]).
    DomainDefineXmlFlags = 350: XmlFlagsArgs<DomainDefineFlags> => DomainRet, since "1.2.12";
        => Connect::define_domain_xml_flags(xml, flags) -> dom[0];
    /// `virDomainInterfaceAddresses`.
    DomainInterfaceAddresses = 353: DomainInterfaceAddressesArgs => DomainInterfaceAddressesRet, since "1.2.14";
        => Domain::interface_addresses(dom = self, source, flags) -> ifaces[0];
    /// `virDomainSetUserPassword`.
    DomainSetUserPassword = 357: DomainSetUserPasswordArgs => (), since "1.2.16";
        => Domain::set_user_password(dom = self, user, password, flags);
    /// `virDomainRename`.
    DomainRename = 358: DomainRenameArgs => DomainRenameRet, since "1.2.19";
        => Domain::rename(dom = self, new_name, flags) -> retcode[0];
    /// `virDomainGetGuestVcpus` (flags must be 0).
    DomainGetGuestVcpus = 371: DomainFlagsArgs => DomainGetGuestVcpusRet, since "2.0.0";
        => Domain::guest_vcpus(dom = self, flags) -> params[0];
    /// `virDomainSetGuestVcpus`.
    DomainSetGuestVcpus = 372: DomainSetGuestVcpusArgs => (), since "2.0.0";
        => Domain::set_guest_vcpus(dom = self, cpumap, state, flags);
    /// `virDomainSetVcpu`.
    DomainSetVcpu = 384: DomainSetGuestVcpusArgs => (), since "3.1.0";
        => Domain::set_vcpu(dom = self, cpumap, state, flags);
    /// `virDomainSetBlockThreshold`.
    DomainSetBlockThreshold = 386: DomainSetBlockThresholdArgs => (), since "3.1.0";
        => Domain::set_block_threshold(dom = self, dev, threshold, flags);
    /// `virDomainManagedSaveGetXMLDesc`.
    DomainManagedSaveGetXmlDesc = 388: DomainFlagsArgs<DomainXmlFlags> => XmlRet, since "3.7.0";
        => Domain::managed_save_xml_desc(dom = self, flags) -> xml[0];
    /// `virDomainManagedSaveDefineXML`.
    DomainManagedSaveDefineXml = 389: DomainManagedSaveDefineXmlArgs => (), since "3.7.0";
        => Domain::managed_save_define_xml(dom = self, dxml, flags);
    /// `virDomainSetLifecycleAction`.
    DomainSetLifecycleAction = 390: DomainSetLifecycleActionArgs => (), since "3.9.0";
        => Domain::set_lifecycle_action(dom = self, kind, action, flags);
    /// `virDomainDetachDeviceAlias`.
    DomainDetachDeviceAlias = 392: DomainDetachDeviceAliasArgs => (), since "4.4.0";
        => Domain::detach_device_alias(dom = self, alias, flags);
    /// `virDomainGetGuestInfo`.
    DomainGetGuestInfo = 418: DomainGetGuestInfoArgs => DomainGetGuestInfoRet, since "5.7.0";
        => Domain::guest_info(dom = self, types, flags) -> params[0];
    /// `virDomainAgentSetResponseTimeout`.
    DomainAgentSetResponseTimeout = 420: DomainAgentSetResponseTimeoutArgs => DomainResultRet, since "5.10.0";
        => Domain::agent_set_response_timeout(dom = self, timeout, flags) -> result[0];
    /// `virDomainBackupBegin`.
    DomainBackupBegin = 421: DomainBackupBeginArgs => (), since "6.0.0";
        => Domain::backup_begin(dom = self, backup_xml, checkpoint_xml, flags);
    /// `virDomainBackupGetXMLDesc` (flags must be 0).
    DomainBackupGetXmlDesc = 422: DomainFlagsArgs => XmlRet, since "6.0.0";
        => Domain::backup_xml_desc(dom = self, flags) -> xml[0];
    /// `virDomainAuthorizedSSHKeysGet`.
    DomainAuthorizedSshKeysGet = 424:
        DomainAuthorizedSshKeysGetArgs => DomainAuthorizedSshKeysGetRet, since "6.10.0";
        => Domain::authorized_ssh_keys_get(dom = self, user, flags) -> keys[0];
    /// `virDomainAuthorizedSSHKeysSet`.
    DomainAuthorizedSshKeysSet = 425: DomainAuthorizedSshKeysSetArgs => (), since "6.10.0";
        => Domain::authorized_ssh_keys_set(dom = self, user, keys, flags);
    /// `virDomainGetMessages`.
    DomainGetMessages = 426: DomainFlagsArgs => DomainGetMessagesRet, since "7.1.0";
        => Domain::messages(dom = self, flags) -> msgs[0];
    /// `virDomainStartDirtyRateCalc`.
    DomainStartDirtyRateCalc = 427: DomainStartDirtyRateCalcArgs => (), since "7.2.0";
        => Domain::start_dirty_rate_calc(dom = self, seconds, flags);
    /// `virDomainSaveParams`.
    DomainSaveParams = 440: DomainSaveParamsArgs => (), since "8.4.0";
        => Domain::save_params(dom = self, params, flags);
    /// `virDomainRestoreParams`.
    DomainRestoreParams = 441: DomainRestoreParamsArgs => (), since "8.4.0";
        => Connect::domain_restore_params(params, flags);
    /// `virDomainAbortJobFlags`.
    DomainAbortJobFlags = 442: DomainFlagsArgs => (), since "8.5.0";
        => Domain::abort_job_flags(dom = self, flags);
    /// `virDomainFDAssociate`: associate the descriptors sent with the call with `name`.
    DomainFdAssociate = 443: DomainFdAssociateArgs => (), since "9.0.0", fds Call;
    /// `virDomainGraphicsReload`.
    DomainGraphicsReload = 448: DomainGraphicsReloadArgs => (), since "10.2.0";
        => Domain::graphics_reload(dom = self, kind, flags);
    /// `virDomainGetAutostartOnce`.
    DomainGetAutostartOnce = 449: DomainArgs => AutostartRet, since "11.2.0";
        => Domain::autostart_once(dom = self) -> autostart[0] as bool;
    /// `virDomainSetAutostartOnce`.
    DomainSetAutostartOnce = 450: DomainSetAutostartArgs => (), since "11.2.0";
        => Domain::set_autostart_once(dom = self, autostart);
    /// `virDomainAnnounceInterface`.
    DomainAnnounceInterface = 456: DomainAnnounceInterfaceArgs => (), since "12.5.0";
        => Domain::announce_interface(dom = self, device, params, flags);
} } }
#[allow(unused_imports)] // expanded by the layers above, when they are built
pub(crate) use rows;

rows!(procedures);
