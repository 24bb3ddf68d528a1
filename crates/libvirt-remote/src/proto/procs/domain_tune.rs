//! Domain tuning procedures: the typed-parameter getters and setters (scheduler, NUMA,
//! interface bandwidth, block I/O limits, throttle groups, perf events, launch security),
//! CPU pinning (vCPUs, emulator, I/O threads) and I/O-thread management.
//!
//! The getters follow libvirt's two-call pattern: ask with `nparams = 0` to learn how many
//! parameters exist, then ask again with that count. Every parameter list is bounded by its
//! `REMOTE_*_MAX`; every CPU map by `REMOTE_CPUMAP_MAX` (one map) or `REMOTE_CPUMAPS_MAX`
//! (all maps of a reply).

use crate::proto::limits;
use bytes::Bytes;

use super::domain::DomainModificationImpact;
use super::domain::{DomainFlagsArgs, DomainGetParamsArgs, DomainGetParamsFlags};
use crate::proto::procedures;
use crate::proto::types::{NonnullDomain, TypedParam};
use crate::wire::xdr::{LvString, xdr_struct};

xdr_struct! {
    /// `remote_domain_get_scheduler_parameters_args` (legacy; prefer the `…_FLAGS` call).
    pub struct DomainGetSchedulerParametersArgs {
        /// The domain.
        pub dom: NonnullDomain,
        /// Parameters wanted (from `DomainGetSchedulerType`).
        pub nparams: i32,
    }
}

xdr_struct! {
    /// `remote_domain_set_scheduler_parameters_args` (legacy; prefer the `…_FLAGS` call).
    pub struct DomainSetSchedulerParametersArgs {
        /// The domain.
        pub dom: NonnullDomain,
        /// The parameters to change.
        pub params: Vec<TypedParam> [limits::DOMAIN_SCHEDULER_PARAMETERS_MAX],
    }
}

xdr_struct! {
    /// `{ params<REMOTE_DOMAIN_SCHEDULER_PARAMETERS_MAX>; }`: the legacy scheduler getter's
    /// return.
    pub struct DomainGetSchedulerParametersLegacyRet {
        /// The parameters (`cpu_shares`, …).
        pub params: Vec<TypedParam> [limits::DOMAIN_SCHEDULER_PARAMETERS_MAX],
    }
}

xdr_struct! {
    /// `remote_domain_get_vcpu_pin_info_args`.
    pub struct DomainGetVcpuPinInfoArgs {
        /// The domain.
        pub dom: NonnullDomain,
        /// Number of vCPU maps wanted.
        pub ncpumaps: i32,
        /// Bytes per map (host CPUs / 8, rounded up).
        pub maplen: i32,
        /// Which definition.
        pub flags: DomainModificationImpact,
    }
}

xdr_struct! {
    /// `remote_domain_get_vcpu_pin_info_ret`.
    pub struct DomainGetVcpuPinInfoRet {
        /// `maplen` bytes per vCPU, concatenated.
        pub cpumaps: Bytes [limits::CPUMAPS_MAX],
        /// Number of maps filled.
        pub num: i32,
    }
}

xdr_struct! {
    /// `remote_domain_pin_emulator_args`.
    pub struct DomainPinEmulatorArgs {
        /// The domain.
        pub dom: NonnullDomain,
        /// Host CPU bitmap for the emulator threads.
        pub cpumap: Bytes [limits::CPUMAP_MAX],
        /// Which definition.
        pub flags: DomainModificationImpact,
    }
}

xdr_struct! {
    /// `remote_domain_get_emulator_pin_info_args`.
    pub struct DomainGetEmulatorPinInfoArgs {
        /// The domain.
        pub dom: NonnullDomain,
        /// Bytes of the map wanted.
        pub maplen: i32,
        /// Which definition.
        pub flags: DomainModificationImpact,
    }
}

xdr_struct! {
    /// `remote_domain_get_emulator_pin_info_ret`.
    pub struct DomainGetEmulatorPinInfoRet {
        /// The emulator threads' host CPU bitmap.
        pub cpumaps: Bytes [limits::CPUMAPS_MAX],
        /// 1 when a map was returned, 0 when none is set.
        pub ret: i32,
    }
}

xdr_struct! {
    /// `remote_domain_set_block_io_tune_args`.
    pub struct DomainSetBlockIoTuneArgs {
        /// The domain.
        pub dom: NonnullDomain,
        /// Disk target (`vda`) or source path.
        pub disk: LvString,
        /// The limits to change (`total_bytes_sec`, `read_iops_sec`, …).
        pub params: Vec<TypedParam> [limits::DOMAIN_BLOCK_IO_TUNE_PARAMETERS_MAX],
        /// Which definition.
        pub flags: DomainModificationImpact,
    }
}

xdr_struct! {
    /// `remote_domain_get_block_io_tune_args`.
    pub struct DomainGetBlockIoTuneArgs {
        /// The domain.
        pub dom: NonnullDomain,
        /// Disk target or source path (`None` only when `nparams` is 0).
        pub disk: Option<LvString>,
        /// Parameters wanted (0: just report how many exist).
        pub nparams: i32,
        /// [`DomainGetParamsFlags`].
        pub flags: DomainGetParamsFlags,
    }
}

xdr_struct! {
    /// `remote_domain_get_block_io_tune_ret`.
    pub struct DomainGetBlockIoTuneRet {
        /// The limits.
        pub params: Vec<TypedParam> [limits::DOMAIN_BLOCK_IO_TUNE_PARAMETERS_MAX],
        /// Number of parameters available.
        pub nparams: i32,
    }
}

xdr_struct! {
    /// `remote_domain_set_numa_parameters_args`.
    pub struct DomainSetNumaParametersArgs {
        /// The domain.
        pub dom: NonnullDomain,
        /// The parameters to change (`numa_mode`, `numa_nodeset`).
        pub params: Vec<TypedParam> [limits::DOMAIN_NUMA_PARAMETERS_MAX],
        /// Which definition.
        pub flags: DomainModificationImpact,
    }
}

xdr_struct! {
    /// `remote_domain_get_numa_parameters_ret`.
    pub struct DomainGetNumaParametersRet {
        /// The parameters.
        pub params: Vec<TypedParam> [limits::DOMAIN_NUMA_PARAMETERS_MAX],
        /// Number of parameters available.
        pub nparams: i32,
    }
}

xdr_struct! {
    /// `remote_domain_set_interface_parameters_args`.
    pub struct DomainSetInterfaceParametersArgs {
        /// The domain.
        pub dom: NonnullDomain,
        /// Interface target device or MAC address.
        pub device: LvString,
        /// The bandwidth parameters to change (`inbound.average`, …).
        pub params: Vec<TypedParam> [limits::DOMAIN_INTERFACE_PARAMETERS_MAX],
        /// Which definition.
        pub flags: DomainModificationImpact,
    }
}

xdr_struct! {
    /// `remote_domain_get_interface_parameters_args`.
    pub struct DomainGetInterfaceParametersArgs {
        /// The domain.
        pub dom: NonnullDomain,
        /// Interface target device or MAC address.
        pub device: LvString,
        /// Parameters wanted (0: just report how many exist).
        pub nparams: i32,
        /// [`DomainGetParamsFlags`].
        pub flags: DomainGetParamsFlags,
    }
}

xdr_struct! {
    /// `remote_domain_get_interface_parameters_ret`.
    pub struct DomainGetInterfaceParametersRet {
        /// The bandwidth parameters.
        pub params: Vec<TypedParam> [limits::DOMAIN_INTERFACE_PARAMETERS_MAX],
        /// Number of parameters available.
        pub nparams: i32,
    }
}

xdr_struct! {
    /// `remote_domain_set_memory_stats_period_args`.
    pub struct DomainSetMemoryStatsPeriodArgs {
        /// The domain.
        pub dom: NonnullDomain,
        /// Balloon statistics period in seconds (0: off).
        pub period: i32,
        /// Which definition.
        pub flags: DomainModificationImpact,
    }
}

xdr_struct! {
    /// `remote_domain_iothread_info`: one I/O thread and its pinning.
    pub struct DomainIoThreadInfo {
        /// I/O thread id.
        pub iothread_id: u32,
        /// Host CPU bitmap.
        pub cpumap: Bytes [limits::CPUMAP_MAX],
    }
}

xdr_struct! {
    /// `remote_domain_get_iothread_info_ret`.
    pub struct DomainGetIoThreadInfoRet {
        /// The I/O threads.
        pub info: Vec<DomainIoThreadInfo> [limits::IOTHREAD_INFO_MAX],
        /// Their number.
        pub ret: u32,
    }
}

xdr_struct! {
    /// `remote_domain_pin_iothread_args`.
    pub struct DomainPinIoThreadArgs {
        /// The domain.
        pub dom: NonnullDomain,
        /// I/O thread id.
        pub iothreads_id: u32,
        /// Host CPU bitmap.
        pub cpumap: Bytes [limits::CPUMAP_MAX],
        /// Which definition.
        pub flags: DomainModificationImpact,
    }
}

xdr_struct! {
    /// `remote_domain_add_iothread_args` / `remote_domain_del_iothread_args`.
    pub struct DomainIoThreadIdArgs {
        /// The domain.
        pub dom: NonnullDomain,
        /// I/O thread id.
        pub iothread_id: u32,
        /// Which definition.
        pub flags: DomainModificationImpact,
    }
}

xdr_struct! {
    /// `remote_domain_set_iothread_params_args`.
    pub struct DomainSetIoThreadParamsArgs {
        /// The domain.
        pub dom: NonnullDomain,
        /// I/O thread id.
        pub iothread_id: u32,
        /// The parameters (`poll_max_ns`, `poll_grow`, …).
        pub params: Vec<TypedParam> [limits::DOMAIN_IOTHREAD_PARAMS_MAX],
        /// Which definition.
        pub flags: DomainModificationImpact,
    }
}

xdr_struct! {
    /// `remote_domain_get_perf_events_ret`.
    pub struct DomainGetPerfEventsRet {
        /// One boolean per perf event (`cmt`, `mbmt`, …).
        pub params: Vec<TypedParam> [limits::DOMAIN_PERF_EVENTS_MAX],
    }
}

xdr_struct! {
    /// `remote_domain_set_perf_events_args`.
    pub struct DomainSetPerfEventsArgs {
        /// The domain.
        pub dom: NonnullDomain,
        /// The events to enable or disable.
        pub params: Vec<TypedParam> [limits::DOMAIN_PERF_EVENTS_MAX],
        /// Which definition.
        pub flags: DomainModificationImpact,
    }
}

xdr_struct! {
    /// `remote_domain_get_launch_security_info_ret`.
    pub struct DomainGetLaunchSecurityInfoRet {
        /// Launch security facts (`sev-measurement`, …).
        pub params: Vec<TypedParam> [limits::DOMAIN_LAUNCH_SECURITY_INFO_PARAMS_MAX],
    }
}

xdr_struct! {
    /// `remote_domain_set_launch_security_state_args`.
    pub struct DomainSetLaunchSecurityStateArgs {
        /// The domain.
        pub dom: NonnullDomain,
        /// The secret to inject (`sev-secret`, `sev-secret-header`, …).
        pub params: Vec<TypedParam> [limits::DOMAIN_LAUNCH_SECURITY_STATE_PARAMS_MAX],
        /// Must be 0.
        pub flags: u32,
    }
}

xdr_struct! {
    /// `remote_domain_set_throttle_group_args` (11.2+).
    pub struct DomainSetThrottleGroupArgs {
        /// The domain.
        pub dom: NonnullDomain,
        /// Throttle group name.
        pub group: LvString,
        /// The group's limits (the block I/O tune parameter names).
        pub params: Vec<TypedParam> [limits::DOMAIN_BLOCK_IO_TUNE_PARAMETERS_MAX],
        /// Which definition.
        pub flags: DomainModificationImpact,
    }
}

xdr_struct! {
    /// `remote_domain_del_throttle_group_args` (11.2+).
    pub struct DomainDelThrottleGroupArgs {
        /// The domain.
        pub dom: NonnullDomain,
        /// Throttle group name.
        pub group: Option<LvString>,
        /// Which definition.
        pub flags: DomainModificationImpact,
    }
}

/// This module's procedure table as data: `rows!(callback)` hands every row to `callback!`,
/// as quinn's `apply_params!` does. [`procedures!`](crate::proto::procedures) declares the types
/// and the table from the rows; the client expands the same rows into the object API.
macro_rules! rows { ($callback:ident) => { $callback! {
    [domain_tune]
    table PROCEDURES;
    /// `virDomainGetSchedulerParameters` (legacy, live values).
    DomainGetSchedulerParameters = 57:
        DomainGetSchedulerParametersArgs => DomainGetSchedulerParametersLegacyRet, since "0.3.0";
        => Domain::scheduler_parameters(dom = self, nparams) -> params[0];
    /// `virDomainSetSchedulerParameters` (legacy, live values).
    DomainSetSchedulerParameters = 58: DomainSetSchedulerParametersArgs => (), since "0.3.0";
        => Domain::set_scheduler_parameters(dom = self, params);
    /// `virDomainGetVcpuPinInfo`.
    DomainGetVcpuPinInfo = 230: DomainGetVcpuPinInfoArgs => DomainGetVcpuPinInfoRet, since "0.9.3";
        => Domain::vcpu_pin_info(dom = self, ncpumaps, maplen, flags);
    /// `virDomainSetBlockIoTune`.
    DomainSetBlockIoTune = 252: DomainSetBlockIoTuneArgs => (), since "0.9.8";
        => Domain::set_block_io_tune(dom = self, disk, params, flags);
    /// `virDomainGetBlockIoTune`.
    DomainGetBlockIoTune = 253: DomainGetBlockIoTuneArgs => DomainGetBlockIoTuneRet, since "0.9.8";
        => Domain::block_io_tune(dom = self, disk, nparams = typed_count, flags) -> params[0];
    /// `virDomainSetNumaParameters`.
    DomainSetNumaParameters = 254: DomainSetNumaParametersArgs => (), since "0.9.9";
        => Domain::set_numa_parameters(dom = self, params, flags);
    /// `virDomainGetNumaParameters`.
    DomainGetNumaParameters = 255: DomainGetParamsArgs => DomainGetNumaParametersRet, since "0.9.9";
        => Domain::numa_parameters(dom = self, nparams = typed_count, flags) -> params[0];
    /// `virDomainSetInterfaceParameters`.
    DomainSetInterfaceParameters = 256: DomainSetInterfaceParametersArgs => (), since "0.9.9";
        => Domain::set_interface_parameters(dom = self, device, params, flags);
    /// `virDomainGetInterfaceParameters`.
    DomainGetInterfaceParameters = 257:
        DomainGetInterfaceParametersArgs => DomainGetInterfaceParametersRet, since "0.9.9";
        => Domain::interface_parameters(dom = self, device, nparams = typed_count, flags) -> params[0];
    /// `virDomainPinEmulator`.
    DomainPinEmulator = 279: DomainPinEmulatorArgs => (), since "0.10.0";
        => Domain::pin_emulator(dom = self, cpumap, flags);
    /// `virDomainGetEmulatorPinInfo`.
    DomainGetEmulatorPinInfo = 280:
        DomainGetEmulatorPinInfoArgs => DomainGetEmulatorPinInfoRet, since "0.10.0";
        => Domain::emulator_pin_info(dom = self, maplen, flags);
    /// `virDomainSetMemoryStatsPeriod`.
    DomainSetMemoryStatsPeriod = 308: DomainSetMemoryStatsPeriodArgs => (), since "1.1.1";
        => Domain::set_memory_stats_period(dom = self, period, flags);
    /// `virDomainGetIOThreadInfo` (flags: `virDomainModificationImpact`).
    DomainGetIoThreadInfo = 351: DomainFlagsArgs => DomainGetIoThreadInfoRet, since "1.2.14";
        => Domain::io_thread_info(dom = self, flags) -> info[0];
    /// `virDomainPinIOThread`.
    DomainPinIoThread = 352: DomainPinIoThreadArgs => (), since "1.2.14";
        => Domain::pin_io_thread(dom = self, iothreads_id, cpumap, flags);
    /// `virDomainAddIOThread`.
    DomainAddIoThread = 355: DomainIoThreadIdArgs => (), since "1.2.15";
        => Domain::add_io_thread(dom = self, iothread_id, flags);
    /// `virDomainDelIOThread`.
    DomainDelIoThread = 356: DomainIoThreadIdArgs => (), since "1.2.15";
        => Domain::del_io_thread(dom = self, iothread_id, flags);
    /// `virDomainGetPerfEvents` (flags: `virDomainModificationImpact`).
    DomainGetPerfEvents = 365: DomainFlagsArgs => DomainGetPerfEventsRet, since "1.3.3";
        => Domain::perf_events(dom = self, flags) -> params[0];
    /// `virDomainSetPerfEvents`.
    DomainSetPerfEvents = 366: DomainSetPerfEventsArgs => (), since "1.3.3";
        => Domain::set_perf_events(dom = self, params, flags);
    /// `virDomainGetLaunchSecurityInfo` (flags must be 0).
    DomainGetLaunchSecurityInfo = 396:
        DomainFlagsArgs => DomainGetLaunchSecurityInfoRet, since "4.5.0";
        => Domain::launch_security_info(dom = self, flags) -> params[0];
    /// `virDomainSetIOThreadParams`.
    DomainSetIoThreadParams = 402: DomainSetIoThreadParamsArgs => (), since "4.10.0";
        => Domain::set_io_thread_params(dom = self, iothread_id, params, flags);
    /// `virDomainSetLaunchSecurityState`.
    DomainSetLaunchSecurityState = 439: DomainSetLaunchSecurityStateArgs => (), since "8.0.0";
        => Domain::set_launch_security_state(dom = self, params, flags);
    /// `virDomainSetThrottleGroup`.
    DomainSetThrottleGroup = 451: DomainSetThrottleGroupArgs => (), since "11.2.0";
        => Domain::set_throttle_group(dom = self, group, params, flags);
    /// `virDomainDelThrottleGroup`.
    DomainDelThrottleGroup = 452: DomainDelThrottleGroupArgs => (), since "11.2.0";
        => Domain::del_throttle_group(dom = self, group, flags);
} } }
#[allow(unused_imports)] // expanded by the layers above, when they are built
pub(crate) use rows;

rows!(procedures);
