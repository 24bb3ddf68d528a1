//! Connection-level procedures: authentication, features, open/close, host facts, domain
//! event registration (callback and legacy), statistics of many domains, the identity a
//! proxy daemon acts as.

use super::common::{CallbackIdArgs, CallbackIdRet, FlagsArgs, MaxNamesArgs, NumRet};
use crate::proto::names::CpuCompareResult;
use crate::proto::types::{NonnullDomain, SaslData, TypedParam};
use crate::proto::{limits, procedures};
use crate::wire::xdr::{LvString, xdr_struct};

/// `remote_auth_type` values.
pub mod auth_type {
    /// No authentication needed.
    pub const NONE: i32 = 0;
    /// SASL (`AUTH_SASL_INIT` / `START` / `STEP`).
    pub const SASL: i32 = 1;
    /// polkit.
    pub const POLKIT: i32 = 2;
}

crate::proto::flags::flag_set! {
    /// `virConnectFlags` for `CONNECT_OPEN`.
    pub struct ConnectFlags: u32 {
        /// Read-only connection.
        const READ_ONLY = 1;
        /// Do not resolve URI aliases.
        const NO_ALIASES = 2;
    }
}

crate::proto::flags::flag_set! {
    /// `virConnectListAllDomainsFlags` for [`ConnectListAllDomains`] (combine with `|`; within
    /// each pair, neither bit means "both").
    pub struct ConnectListAllDomainsFlags: u32 {
        /// Running or paused domains.
        const ACTIVE = 1;
        /// Shut-off domains.
        const INACTIVE = 2;
        /// Domains with a persistent definition.
        const PERSISTENT = 4;
        /// Transient domains.
        const TRANSIENT = 8;
        /// Running domains.
        const RUNNING = 16;
        /// Paused domains.
        const PAUSED = 32;
        /// Shut-off domains (state, not activity).
        const SHUTOFF = 64;
        /// Domains in any other state.
        const OTHER = 128;
        /// Domains with a managed save image.
        const MANAGEDSAVE = 256;
        /// Domains without a managed save image.
        const NO_MANAGEDSAVE = 512;
        /// Domains marked autostart.
        const AUTOSTART = 1024;
        /// Domains not marked autostart.
        const NO_AUTOSTART = 2048;
        /// Domains with snapshots.
        const HAS_SNAPSHOT = 4096;
        /// Domains without snapshots.
        const NO_SNAPSHOT = 8192;
        /// Domains with checkpoints.
        const HAS_CHECKPOINT = 16_384;
        /// Domains without checkpoints.
        const NO_CHECKPOINT = 32_768;
    }
}

crate::proto::flags::flag_set! {
    /// `virConnectGetAllDomainStatsFlags` for [`ConnectGetAllDomainStats`]: the filters of
    /// [`ConnectListAllDomainsFlags`] (same bits) plus options.
    pub struct ConnectGetAllDomainStatsFlags: u32 {
        /// Running or paused domains.
        const ACTIVE = ConnectListAllDomainsFlags::ACTIVE.bits();
        /// Shut-off domains.
        const INACTIVE = ConnectListAllDomainsFlags::INACTIVE.bits();
        /// Domains with a persistent definition.
        const PERSISTENT = ConnectListAllDomainsFlags::PERSISTENT.bits();
        /// Transient domains.
        const TRANSIENT = ConnectListAllDomainsFlags::TRANSIENT.bits();
        /// Running domains.
        const RUNNING = ConnectListAllDomainsFlags::RUNNING.bits();
        /// Paused domains.
        const PAUSED = ConnectListAllDomainsFlags::PAUSED.bits();
        /// Shut-off domains (state).
        const SHUTOFF = ConnectListAllDomainsFlags::SHUTOFF.bits();
        /// Domains in any other state.
        const OTHER = ConnectListAllDomainsFlags::OTHER.bits();
        /// Report what is at hand without waiting for a job lock.
        const NOWAIT = 1 << 29;
        /// Include backing chain statistics of block devices.
        const BACKING = 1 << 30;
        /// Fail if a requested group of statistics is not supported.
        const ENFORCE_STATS = 1 << 31;
    }
}

crate::proto::flags::flag_set! {
    /// `virDomainStatsTypes`: the groups of statistics [`ConnectGetAllDomainStats`] reports.
    pub struct DomainStatsTypes: u32 {
        /// `state.*`.
        const STATE = 1;
        /// `cpu.*`.
        const CPU_TOTAL = 2;
        /// `balloon.*`.
        const BALLOON = 4;
        /// `vcpu.*`.
        const VCPU = 8;
        /// `net.*`.
        const INTERFACE = 16;
        /// `block.*`.
        const BLOCK = 32;
        /// `perf.*`.
        const PERF = 64;
        /// `iothread.*`.
        const IOTHREAD = 128;
        /// `memory.*`.
        const MEMORY = 256;
        /// `dirtyrate.*`.
        const DIRTYRATE = 512;
        /// `vm.*`.
        const VM = 1024;
    }
}

crate::proto::flags::flag_set! {
    /// `virConnectCompareCPUFlags` for [`ConnectCompareCpu`] and
    /// [`ConnectCompareHypervisorCpu`].
    pub struct ConnectCompareCpuFlags: u32 {
        /// Report an incompatible CPU as an error.
        const FAIL_INCOMPATIBLE = 1;
        /// Validate the XML against the schema.
        const VALIDATE_XML = 2;
    }
}

crate::proto::flags::flag_set! {
    /// `virConnectBaselineCPUFlags` for [`ConnectBaselineCpu`] and
    /// [`ConnectBaselineHypervisorCpu`].
    pub struct ConnectBaselineCpuFlags: u32 {
        /// List every feature, including those of the CPU model.
        const EXPAND_FEATURES = 1;
        /// Leave out features that block migration.
        const MIGRATABLE = 2;
    }
}

xdr_struct! {
    /// `remote_auth_list_ret`.
    pub struct AuthListRet {
        /// Auth types the daemon requires (see [`auth_type`]).
        pub types: Vec<i32> [limits::AUTH_TYPE_LIST_MAX],
    }
}

xdr_struct! {
    /// `remote_auth_sasl_init_ret`.
    pub struct AuthSaslInitRet {
        /// The mechanisms the daemon offers, separated by spaces or commas (Cyrus SASL's list).
        pub mechlist: LvString,
    }
}

xdr_struct! {
    /// `remote_auth_sasl_start_args`.
    pub struct AuthSaslStartArgs {
        /// The chosen mechanism.
        pub mech: LvString,
        /// 1 when there is no initial response (distinct from an empty one).
        pub nil: i32,
        /// The initial response.
        pub data: SaslData [limits::AUTH_SASL_DATA_MAX],
    }
}

xdr_struct! {
    /// `remote_auth_sasl_start_ret`, also `remote_auth_sasl_step_ret`.
    pub struct AuthSaslStepRet {
        /// 1 when the daemon considers the exchange complete (and successful).
        pub complete: i32,
        /// 1 when there is no challenge (distinct from an empty one).
        pub nil: i32,
        /// The challenge (or, with `complete`, the server's final message).
        pub data: SaslData [limits::AUTH_SASL_DATA_MAX],
    }
}

xdr_struct! {
    /// `remote_auth_sasl_step_args`.
    pub struct AuthSaslStepArgs {
        /// 1 when there is no response (distinct from an empty one).
        pub nil: i32,
        /// The response.
        pub data: SaslData [limits::AUTH_SASL_DATA_MAX],
    }
}

xdr_struct! {
    /// `remote_auth_polkit_ret`.
    pub struct AuthPolkitRet {
        /// Non-zero when authentication completed.
        pub complete: i32,
    }
}

xdr_struct! {
    /// `remote_connect_open_args`.
    pub struct ConnectOpenArgs {
        /// URI to open on the daemon side (`None`: the daemon's default).
        pub name: Option<LvString>,
        /// Open flags.
        pub flags: ConnectFlags,
    }
}

xdr_struct! {
    /// `remote_connect_supports_feature_args`.
    pub struct ConnectSupportsFeatureArgs {
        /// `VIR_DRV_FEATURE_*`.
        pub feature: i32,
    }
}

xdr_struct! {
    /// `remote_connect_supports_feature_ret`.
    pub struct ConnectSupportsFeatureRet {
        /// Non-zero when supported.
        pub supported: i32,
    }
}

xdr_struct! {
    /// `remote_connect_get_type_ret`.
    pub struct ConnectGetTypeRet {
        /// Driver name, e.g. `QEMU`.
        pub kind: LvString,
    }
}

xdr_struct! {
    /// `remote_connect_get_version_ret`.
    pub struct ConnectGetVersionRet {
        /// Hypervisor version, major·10⁶ + minor·10³ + micro.
        pub hv_ver: u64,
    }
}

xdr_struct! {
    /// `remote_connect_get_lib_version_ret`.
    pub struct ConnectGetLibVersionRet {
        /// libvirt version, major·10⁶ + minor·10³ + micro.
        pub lib_ver: u64,
    }
}

xdr_struct! {
    /// `remote_connect_get_hostname_ret`.
    pub struct ConnectGetHostnameRet {
        /// Host name.
        pub hostname: LvString,
    }
}

xdr_struct! {
    /// `remote_connect_get_uri_ret`.
    pub struct ConnectGetUriRet {
        /// The canonical URI of the connection.
        pub uri: LvString,
    }
}

xdr_struct! {
    /// `remote_connect_list_all_domains_args`.
    pub struct ConnectListAllDomainsArgs {
        /// Non-zero to get the list (zero returns only the count).
        pub need_results: i32,
        /// Filters (empty = every domain).
        pub flags: ConnectListAllDomainsFlags,
    }
}

xdr_struct! {
    /// `remote_connect_list_all_domains_ret`.
    pub struct ConnectListAllDomainsRet {
        /// The domains.
        pub domains: Vec<NonnullDomain> [limits::DOMAIN_LIST_MAX],
        /// Count.
        pub ret: u32,
    }
}

xdr_struct! {
    /// `remote_connect_get_max_vcpus_args`.
    pub struct ConnectGetMaxVcpusArgs {
        /// Virtualization type (e.g. `kvm`); `None` for the driver's default.
        pub kind: Option<LvString>,
    }
}

xdr_struct! {
    /// `remote_connect_get_max_vcpus_ret`.
    pub struct ConnectGetMaxVcpusRet {
        /// Most vCPUs one guest may have.
        pub max_vcpus: i32,
    }
}

xdr_struct! {
    /// `remote_connect_get_capabilities_ret` (also the domain and storage capability calls).
    pub struct ConnectCapabilitiesRet {
        /// Capabilities XML.
        pub capabilities: LvString,
    }
}

xdr_struct! {
    /// `remote_connect_get_sysinfo_ret`.
    pub struct ConnectGetSysinfoRet {
        /// Host SMBIOS information as XML.
        pub sysinfo: LvString,
    }
}

xdr_struct! {
    /// `remote_connect_is_secure_ret`.
    pub struct ConnectIsSecureRet {
        /// 1 when the link is encrypted or local.
        pub secure: i32,
    }
}

xdr_struct! {
    /// `remote_connect_list_domains_ret`: ids of running domains (legacy list call).
    pub struct ConnectListDomainsRet {
        /// Runtime ids.
        pub ids: Vec<i32> [limits::DOMAIN_LIST_MAX],
    }
}

xdr_struct! {
    /// `{ int maxids; }`: `remote_connect_list_domains_args`.
    pub struct ConnectListDomainsArgs {
        /// Most ids wanted.
        pub maxids: i32,
    }
}

xdr_struct! {
    /// `remote_connect_list_defined_domains_ret`: names of inactive domains (legacy).
    pub struct ConnectListDefinedDomainsRet {
        /// Domain names.
        pub names: Vec<LvString> [limits::DOMAIN_LIST_MAX],
    }
}

xdr_struct! {
    /// `remote_connect_get_domain_capabilities_args`; every `None` lets the daemon choose.
    pub struct ConnectGetDomainCapabilitiesArgs {
        /// Emulator binary path.
        pub emulatorbin: Option<LvString>,
        /// Guest architecture.
        pub arch: Option<LvString>,
        /// Machine type.
        pub machine: Option<LvString>,
        /// Virtualization type (`kvm`, `qemu`).
        pub virttype: Option<LvString>,
        /// Must be 0.
        pub flags: u32,
    }
}

xdr_struct! {
    /// `remote_connect_compare_cpu_args`.
    pub struct ConnectCompareCpuArgs {
        /// CPU XML.
        pub xml: LvString,
        /// `VIR_CONNECT_COMPARE_CPU_*`.
        pub flags: ConnectCompareCpuFlags,
    }
}

xdr_struct! {
    /// `remote_connect_compare_cpu_ret` (also the hypervisor variant).
    pub struct ConnectCompareCpuRet {
        /// The comparison's result.
        pub result: CpuCompareResult,
    }
}

xdr_struct! {
    /// `remote_connect_baseline_cpu_args`.
    pub struct ConnectBaselineCpuArgs {
        /// CPU descriptions to intersect.
        pub xml_cpus: Vec<LvString> [limits::CPU_BASELINE_MAX],
        /// `VIR_CONNECT_BASELINE_CPU_*`.
        pub flags: ConnectBaselineCpuFlags,
    }
}

xdr_struct! {
    /// `remote_connect_baseline_cpu_ret` (also the hypervisor variant).
    pub struct ConnectBaselineCpuRet {
        /// The baseline CPU XML.
        pub cpu: LvString,
    }
}

xdr_struct! {
    /// `remote_connect_compare_hypervisor_cpu_args`.
    pub struct ConnectCompareHypervisorCpuArgs {
        /// Emulator binary path.
        pub emulator: Option<LvString>,
        /// Architecture.
        pub arch: Option<LvString>,
        /// Machine type.
        pub machine: Option<LvString>,
        /// Virtualization type.
        pub virttype: Option<LvString>,
        /// CPU XML.
        pub xml_cpu: LvString,
        /// `VIR_CONNECT_COMPARE_CPU_*`.
        pub flags: ConnectCompareCpuFlags,
    }
}

xdr_struct! {
    /// `remote_connect_baseline_hypervisor_cpu_args`.
    pub struct ConnectBaselineHypervisorCpuArgs {
        /// Emulator binary path.
        pub emulator: Option<LvString>,
        /// Architecture.
        pub arch: Option<LvString>,
        /// Machine type.
        pub machine: Option<LvString>,
        /// Virtualization type.
        pub virttype: Option<LvString>,
        /// CPU descriptions to intersect.
        pub xml_cpus: Vec<LvString> [limits::CPU_BASELINE_MAX],
        /// `VIR_CONNECT_BASELINE_CPU_*`.
        pub flags: ConnectBaselineCpuFlags,
    }
}

xdr_struct! {
    /// `remote_connect_get_cpu_model_names_args`.
    pub struct ConnectGetCpuModelNamesArgs {
        /// Architecture (e.g. `x86_64`).
        pub arch: LvString,
        /// Non-zero to get the names; zero returns only the count.
        pub need_results: i32,
        /// Must be 0.
        pub flags: u32,
    }
}

xdr_struct! {
    /// `remote_connect_get_cpu_model_names_ret`.
    pub struct ConnectGetCpuModelNamesRet {
        /// Model names.
        pub models: Vec<LvString> [limits::CONNECT_CPU_MODELS_MAX],
        /// Count.
        pub ret: i32,
    }
}

xdr_struct! {
    /// `remote_connect_domain_xml_from_native_args`.
    pub struct ConnectDomainXmlFromNativeArgs {
        /// Native format (e.g. `qemu-argv`).
        pub native_format: LvString,
        /// The native configuration.
        pub native_config: LvString,
        /// Must be 0.
        pub flags: u32,
    }
}

xdr_struct! {
    /// `remote_connect_domain_xml_from_native_ret`.
    pub struct ConnectDomainXmlFromNativeRet {
        /// Domain XML.
        pub domain_xml: LvString,
    }
}

xdr_struct! {
    /// `remote_connect_domain_xml_to_native_args`.
    pub struct ConnectDomainXmlToNativeArgs {
        /// Native format (e.g. `qemu-argv`).
        pub native_format: LvString,
        /// Domain XML.
        pub domain_xml: LvString,
        /// Must be 0.
        pub flags: u32,
    }
}

xdr_struct! {
    /// `remote_connect_domain_xml_to_native_ret`.
    pub struct ConnectDomainXmlToNativeRet {
        /// The native configuration.
        pub native_config: LvString,
    }
}

xdr_struct! {
    /// `remote_connect_domain_event_callback_register_any_args`.
    pub struct ConnectDomainEventCallbackRegisterAnyArgs {
        /// `virDomainEventID` ([`crate::proto::events::event_id`]).
        pub event_id: i32,
        /// Only events of this domain; `None` for every domain.
        pub dom: Option<NonnullDomain>,
    }
}

/// `remote_connect_domain_event_callback_register_any_ret`.
pub type ConnectDomainEventCallbackRegisterAnyRet = CallbackIdRet;
/// `remote_connect_domain_event_callback_deregister_any_args`.
pub type ConnectDomainEventCallbackDeregisterAnyArgs = CallbackIdArgs;

xdr_struct! {
    /// `remote_connect_domain_event_register_ret` / `…_deregister_ret` (legacy lifecycle
    /// callback registration).
    pub struct ConnectDomainEventRegisterRet {
        /// Unused: libvirt's daemon never sets it (0 on the wire from 9.0, seen against
        /// libvirtd); a failed registration is an error reply instead.
        pub cb_registered: i32,
    }
}

xdr_struct! {
    /// `remote_connect_domain_event_register_any_args` /
    /// `remote_connect_domain_event_deregister_any_args` (legacy, one registration per event
    /// id and connection; the events arrive as the non-callback `DOMAIN_EVENT_*` messages).
    pub struct ConnectDomainEventRegisterAnyArgs {
        /// `virDomainEventID` ([`crate::proto::events::event_id`]).
        pub event_id: i32,
    }
}

xdr_struct! {
    /// `remote_connect_get_all_domain_stats_args`.
    pub struct ConnectGetAllDomainStatsArgs {
        /// The domains (empty: every domain the `flags` select).
        pub doms: Vec<NonnullDomain> [limits::DOMAIN_LIST_MAX],
        /// The groups of statistics wanted (empty: all).
        pub stats: DomainStatsTypes,
        /// Filters and options.
        pub flags: ConnectGetAllDomainStatsFlags,
    }
}

xdr_struct! {
    /// `remote_domain_stats_record`: the statistics of one domain.
    pub struct DomainStatsRecord {
        /// The domain.
        pub dom: NonnullDomain,
        /// Its statistics (`state.state`, `cpu.time`, `block.0.name`, …).
        pub params: Vec<TypedParam> [limits::CONNECT_GET_ALL_DOMAIN_STATS_MAX],
    }
}

xdr_struct! {
    /// `remote_connect_get_all_domain_stats_ret`.
    pub struct ConnectGetAllDomainStatsRet {
        /// One record per domain.
        pub ret_stats: Vec<DomainStatsRecord> [limits::DOMAIN_LIST_MAX],
    }
}

xdr_struct! {
    /// `remote_connect_set_identity_args`: the identity the daemon acts as (for a proxy
    /// daemon calling a driver daemon).
    pub struct ConnectSetIdentityArgs {
        /// `user-name`, `unix-user-id`, `selinux-context`, … (`VIR_CONNECT_IDENTITY_*`).
        pub params: Vec<TypedParam> [limits::CONNECT_IDENTITY_PARAMS_MAX],
        /// Must be 0.
        pub flags: u32,
    }
}

/// This module's procedure table as data: `rows!(callback)` hands every row to `callback!`,
/// as quinn's `apply_params!` does. [`procedures!`](crate::proto::procedures) declares the types
/// and the table from the rows; the client expands the same rows into the object API.
macro_rules! rows { ($callback:ident) => { $callback! {
    [connect]
    table PROCEDURES;
    /// `virConnectOpen`: must precede any hypervisor call.
    ConnectOpen = 1: ConnectOpenArgs => (), since "0.3.0";
    /// `virConnectClose`: the daemon closes the link after replying.
    ConnectClose = 2: () => (), since "0.3.0";
    /// `virConnectGetType`.
    ConnectGetType = 3: () => ConnectGetTypeRet, since "0.3.0";
        => Connect::driver_type() -> kind[0];
    /// `virConnectGetVersion`.
    ConnectGetVersion = 4: () => ConnectGetVersionRet, since "0.3.0";
        => Connect::hyp_version() -> hv_ver[0] as version;
    /// `virConnectGetMaxVcpus`.
    ConnectGetMaxVcpus = 5: ConnectGetMaxVcpusArgs => ConnectGetMaxVcpusRet, since "0.3.0";
        => Connect::max_vcpus(kind) -> max_vcpus[0];
    /// `virConnectGetCapabilities`: host capabilities XML.
    ConnectGetCapabilities = 7: () => ConnectCapabilitiesRet, since "0.3.0";
        => Connect::capabilities() -> capabilities[0];
    /// `virConnectListDefinedDomains` (legacy; prefer [`ConnectListAllDomains`]).
    ConnectListDefinedDomains = 21: MaxNamesArgs => ConnectListDefinedDomainsRet, since "0.3.0";
        => Connect::list_defined_domains(maxnames) -> names[0];
    /// `virConnectNumOfDefinedDomains`.
    ConnectNumOfDefinedDomains = 25: () => NumRet, since "0.3.0";
        => Connect::num_of_defined_domains() -> num[0];
    /// `virConnectListDomains` (legacy; prefer [`ConnectListAllDomains`]).
    ConnectListDomains = 37: ConnectListDomainsArgs => ConnectListDomainsRet, since "0.3.0";
        => Connect::list_domains(maxids) -> ids[0];
    /// `virConnectNumOfDomains`: running domains.
    ConnectNumOfDomains = 51: () => NumRet, since "0.3.0";
        => Connect::num_of_domains() -> num[0];
    /// `virConnectGetHostname`.
    ConnectGetHostname = 59: () => ConnectGetHostnameRet, since "0.3.0";
        => Connect::hostname() -> hostname[0];
    /// Feature probe (`VIR_DRV_FEATURE_*`); feature 10 starts the daemon's keepalive pings.
    ConnectSupportsFeature = 60: ConnectSupportsFeatureArgs => ConnectSupportsFeatureRet, since "0.3.2";
    /// Authentication methods the daemon requires; always the first call.
    AuthList = 66: () => AuthListRet, since "0.4.0";
    /// SASL: the daemon's mechanism list. Allowed before authentication.
    AuthSaslInit = 67: () => AuthSaslInitRet, since "0.4.0";
    /// SASL: the chosen mechanism and its initial response.
    AuthSaslStart = 68: AuthSaslStartArgs => AuthSaslStepRet, since "0.4.0";
    /// SASL: one more response, until the daemon says `complete`.
    AuthSaslStep = 69: AuthSaslStepArgs => AuthSaslStepRet, since "0.4.0";
    /// polkit authentication.
    AuthPolkit = 70: () => AuthPolkitRet, since "0.4.0";
    /// `virConnectDomainEventRegister` (legacy): lifecycle events arrive as
    /// `DOMAIN_EVENT_LIFECYCLE` messages without a callback id.
    ConnectDomainEventRegister = 105: () => ConnectDomainEventRegisterRet, since "0.5.0";
    /// `virConnectDomainEventDeregister` (legacy): undo [`ConnectDomainEventRegister`].
    ConnectDomainEventDeregister = 106: () => ConnectDomainEventRegisterRet, since "0.5.0";
    /// `virConnectGetURI`.
    ConnectGetUri = 110: () => ConnectGetUriRet, since "0.5.0";
        => Connect::uri() -> uri[0];
    /// `virConnectDomainXMLFromNative`.
    ConnectDomainXmlFromNative = 135:
        ConnectDomainXmlFromNativeArgs => ConnectDomainXmlFromNativeRet, since "0.6.4";
        => Connect::domain_xml_from_native(native_format, native_config, flags) -> domain_xml[0];
    /// `virConnectDomainXMLToNative`.
    ConnectDomainXmlToNative = 136: ConnectDomainXmlToNativeArgs => ConnectDomainXmlToNativeRet, since "0.6.4";
        => Connect::domain_xml_to_native(native_format, domain_xml, flags) -> native_config[0];
    /// `virConnectIsSecure`. (`virConnectIsAlive` is client-side only: no procedure.)
    ConnectIsSecure = 149: () => ConnectIsSecureRet, since "0.7.3";
        => Connect::is_secure() -> secure[0] as bool;
    /// `virConnectGetLibVersion`.
    ConnectGetLibVersion = 157: () => ConnectGetLibVersionRet, since "0.7.3";
        => Connect::lib_version() -> lib_ver[0] as version;
    /// `virConnectCompareCPU`.
    ConnectCompareCpu = 158: ConnectCompareCpuArgs => ConnectCompareCpuRet, since "0.7.5";
        => Connect::compare_cpu(xml, flags) -> result[0];
    /// `virConnectBaselineCPU`.
    ConnectBaselineCpu = 162: ConnectBaselineCpuArgs => ConnectBaselineCpuRet, since "0.7.7";
        => Connect::baseline_cpu(xml_cpus, flags) -> cpu[0];
    /// `virConnectDomainEventRegisterAny` (legacy, before the callback API): events arrive
    /// as `DOMAIN_EVENT_*` messages without a callback id.
    ConnectDomainEventRegisterAny = 167: ConnectDomainEventRegisterAnyArgs => (), since "0.8.0";
    /// `virConnectDomainEventDeregisterAny` (legacy): undo [`ConnectDomainEventRegisterAny`].
    ConnectDomainEventDeregisterAny = 168: ConnectDomainEventRegisterAnyArgs => (), since "0.8.0";
    /// `virConnectGetSysinfo` (flags must be 0).
    ConnectGetSysinfo = 203: FlagsArgs => ConnectGetSysinfoRet, since "0.8.8";
        => Connect::sysinfo(flags) -> sysinfo[0];
    /// `virConnectListAllDomains`.
    ConnectListAllDomains = 273: ConnectListAllDomainsArgs => ConnectListAllDomainsRet, since "0.9.13";
        => Connect::list_all_domains(need_results = 1, flags) -> domains[0];
    /// `virConnectGetCPUModelNames`.
    ConnectGetCpuModelNames = 312: ConnectGetCpuModelNamesArgs => ConnectGetCpuModelNamesRet, since "1.1.3";
        => Connect::cpu_model_names(arch, need_results = 1, flags) -> models[0];
    /// `virConnectDomainEventRegisterAny` over the callback API: events arrive as
    /// `DOMAIN_EVENT_CALLBACK_*` messages carrying the returned id. Needs feature 14.
    ConnectDomainEventCallbackRegisterAny = 316:
        ConnectDomainEventCallbackRegisterAnyArgs => CallbackIdRet, since "1.2.1";
    /// Undo [`ConnectDomainEventCallbackRegisterAny`].
    ConnectDomainEventCallbackDeregisterAny = 317: CallbackIdArgs => (), since "1.2.1";
    /// `virConnectGetDomainCapabilities`.
    ConnectGetDomainCapabilities = 342: ConnectGetDomainCapabilitiesArgs => ConnectCapabilitiesRet, since "1.2.7";
        => Connect::domain_capabilities(emulatorbin, arch, machine, virttype, flags) -> capabilities[0];
    /// `virConnectGetAllDomainStats` / `virDomainListGetStats`.
    ConnectGetAllDomainStats = 344:
        ConnectGetAllDomainStatsArgs => ConnectGetAllDomainStatsRet, since "1.2.8";
        => Connect::all_domain_stats(doms, stats, flags) -> ret_stats[0];
    /// Ask the daemon to tell us (event 362) when it closes the connection.
    ConnectRegisterCloseCallback = 360: () => (), since "1.3.2";
    /// Undo [`ConnectRegisterCloseCallback`].
    ConnectUnregisterCloseCallback = 361: () => (), since "1.3.2";
    /// `virConnectCompareHypervisorCPU`.
    ConnectCompareHypervisorCpu = 393: ConnectCompareHypervisorCpuArgs => ConnectCompareCpuRet, since "4.4.0";
        => Connect::compare_hypervisor_cpu(emulator, arch, machine, virttype, xml_cpu, flags) -> result[0];
    /// `virConnectBaselineHypervisorCPU`.
    ConnectBaselineHypervisorCpu = 394: ConnectBaselineHypervisorCpuArgs => ConnectBaselineCpuRet, since "4.4.0";
        => Connect::baseline_hypervisor_cpu(emulator, arch, machine, virttype, xml_cpus, flags) -> cpu[0];
    /// `virConnectGetStoragePoolCapabilities` (flags must be 0).
    ConnectGetStoragePoolCapabilities = 403: FlagsArgs => ConnectCapabilitiesRet, since "5.2.0";
        => Connect::storage_pool_capabilities(flags) -> capabilities[0];
    /// `virConnectSetIdentity`.
    ConnectSetIdentity = 419: ConnectSetIdentityArgs => (), since "5.8.0";
} } }
#[allow(unused_imports)] // expanded by the layers above, when they are built
pub(crate) use rows;

rows!(procedures);
