//! Protocol limits (`REMOTE_*_MAX`) used by the procedure declarations that
//! [`proto::limits`](crate::proto::limits) does not carry.
//!
//! Values were checked against `remote_protocol.x` copies from libvirt 3.0 and 11.x and a
//! binding generated from libvirt 12.0. Three limits were raised upstream over time; the
//! raised values are declared here and used for every list of that kind. Decoding with a
//! larger limit is harmless (an older daemon never sends more); decoding with a smaller one
//! rejects valid replies from a newer daemon.

/// `REMOTE_STORAGE_POOL_LIST_MAX` as of libvirt 12 (older releases: 4096).
pub const STORAGE_POOL_LIST_MAX: usize = 16_384;
/// `REMOTE_NODE_DEVICE_LIST_MAX` (raised from 16384 soon after libvirt 3.0).
pub const NODE_DEVICE_LIST_MAX: usize = 65_536;
/// `REMOTE_NWFILTER_LIST_MAX` as of libvirt 12 (older releases: 1024).
pub const NWFILTER_LIST_MAX: usize = 16_384;

/// `REMOTE_NODE_DEVICE_CAPS_LIST_MAX`.
pub const NODE_DEVICE_CAPS_LIST_MAX: usize = 65_536;
/// `REMOTE_NWFILTER_BINDING_LIST_MAX`.
pub const NWFILTER_BINDING_LIST_MAX: usize = 16_384;
/// `REMOTE_NETWORK_PORT_LIST_MAX`.
pub const NETWORK_PORT_LIST_MAX: usize = 16_384;
/// `REMOTE_DOMAIN_CHECKPOINT_LIST_MAX`.
pub const DOMAIN_CHECKPOINT_LIST_MAX: usize = 16_384;
/// `REMOTE_CPUMAP_MAX`: bytes of one CPU bitmap.
pub const CPUMAP_MAX: usize = 2_048;
/// `REMOTE_CPUMAPS_MAX`: bytes of all vCPU bitmaps of one reply.
pub const CPUMAPS_MAX: usize = 8_388_608;
/// `REMOTE_VCPUINFO_MAX`.
pub const VCPUINFO_MAX: usize = 16_384;
/// `REMOTE_NODE_CPU_STATS_MAX`.
pub const NODE_CPU_STATS_MAX: usize = 16;
/// `REMOTE_NODE_MEMORY_STATS_MAX`.
pub const NODE_MEMORY_STATS_MAX: usize = 16;
/// `REMOTE_NODE_MEMORY_PARAMETERS_MAX`.
pub const NODE_MEMORY_PARAMETERS_MAX: usize = 64;
/// `REMOTE_DOMAIN_SCHEDULER_PARAMETERS_MAX`.
pub const DOMAIN_SCHEDULER_PARAMETERS_MAX: usize = 16;
/// `REMOTE_DOMAIN_MEMORY_PARAMETERS_MAX`.
pub const DOMAIN_MEMORY_PARAMETERS_MAX: usize = 16;
/// `REMOTE_DOMAIN_BLKIO_PARAMETERS_MAX`.
pub const DOMAIN_BLKIO_PARAMETERS_MAX: usize = 16;
/// `REMOTE_DOMAIN_BLOCK_IO_TUNE_PARAMETERS_MAX`.
pub const DOMAIN_BLOCK_IO_TUNE_PARAMETERS_MAX: usize = 32;
/// `REMOTE_DOMAIN_SEND_KEY_MAX`: key codes per `DOMAIN_SEND_KEY`.
pub const DOMAIN_SEND_KEY_MAX: usize = 16;
/// `REMOTE_DOMAIN_DISK_ERRORS_MAX`.
pub const DOMAIN_DISK_ERRORS_MAX: usize = 256;
/// `REMOTE_DOMAIN_FSFREEZE_MOUNTPOINTS_MAX`.
pub const DOMAIN_FSFREEZE_MOUNTPOINTS_MAX: usize = 256;
/// `REMOTE_DOMAIN_FSINFO_MAX`.
pub const DOMAIN_FSINFO_MAX: usize = 256;
/// `REMOTE_DOMAIN_FSINFO_DISKS_MAX`.
pub const DOMAIN_FSINFO_DISKS_MAX: usize = 256;
/// `REMOTE_DOMAIN_GUEST_VCPU_PARAMS_MAX`.
pub const DOMAIN_GUEST_VCPU_PARAMS_MAX: usize = 64;
/// `REMOTE_DOMAIN_GUEST_INFO_PARAMS_MAX`.
pub const DOMAIN_GUEST_INFO_PARAMS_MAX: usize = 2_048;
/// `REMOTE_DOMAIN_AUTHORIZED_SSH_KEYS_MAX`.
pub const DOMAIN_AUTHORIZED_SSH_KEYS_MAX: usize = 2_048;
/// `REMOTE_DOMAIN_MESSAGES_MAX`.
pub const DOMAIN_MESSAGES_MAX: usize = 2_048;
/// `REMOTE_CPU_BASELINE_MAX`: CPU descriptions per baseline call.
pub const CPU_BASELINE_MAX: usize = 256;
/// `REMOTE_CONNECT_CPU_MODELS_MAX`.
pub const CONNECT_CPU_MODELS_MAX: usize = 8_192;
/// `REMOTE_SECURITY_MODEL_MAX` (= `VIR_SECURITY_MODEL_BUFLEN`).
pub const SECURITY_MODEL_MAX: usize = 257;
/// `REMOTE_SECURITY_DOI_MAX` (= `VIR_SECURITY_DOI_BUFLEN`).
pub const SECURITY_DOI_MAX: usize = 257;
/// `REMOTE_SECURITY_LABEL_MAX` (= `VIR_SECURITY_LABEL_BUFLEN`).
pub const SECURITY_LABEL_MAX: usize = 4_097;
/// `REMOTE_SECURITY_LABEL_LIST_MAX`.
pub const SECURITY_LABEL_LIST_MAX: usize = 64;
/// `REMOTE_DOMAIN_EVENT_GRAPHICS_IDENTITY_MAX`: subject entries of a graphics event.
pub const DOMAIN_EVENT_GRAPHICS_IDENTITY_MAX: usize = 20;
/// `REMOTE_MIGRATE_COOKIE_MAX`: bytes of one migration cookie.
pub const MIGRATE_COOKIE_MAX: usize = 4_194_304;
/// `REMOTE_DOMAIN_MIGRATE_PARAM_LIST_MAX`: typed parameters of one `*_MIGRATE_*_PARAMS` call.
pub const DOMAIN_MIGRATE_PARAM_LIST_MAX: usize = 64;
/// `REMOTE_DOMAIN_BLOCK_PEEK_BUFFER_MAX`.
pub const DOMAIN_BLOCK_PEEK_BUFFER_MAX: usize = 4_194_304;
/// `REMOTE_DOMAIN_MEMORY_PEEK_BUFFER_MAX`.
pub const DOMAIN_MEMORY_PEEK_BUFFER_MAX: usize = 4_194_304;
/// `REMOTE_DOMAIN_NUMA_PARAMETERS_MAX`.
pub const DOMAIN_NUMA_PARAMETERS_MAX: usize = 16;
/// `REMOTE_DOMAIN_PERF_EVENTS_MAX`.
pub const DOMAIN_PERF_EVENTS_MAX: usize = 64;
/// `REMOTE_DOMAIN_BLOCK_COPY_PARAMETERS_MAX`.
pub const DOMAIN_BLOCK_COPY_PARAMETERS_MAX: usize = 16;
/// `REMOTE_DOMAIN_BLOCK_STATS_PARAMETERS_MAX`.
pub const DOMAIN_BLOCK_STATS_PARAMETERS_MAX: usize = 16;
/// `REMOTE_DOMAIN_INTERFACE_PARAMETERS_MAX`.
pub const DOMAIN_INTERFACE_PARAMETERS_MAX: usize = 16;
/// `REMOTE_DOMAIN_GET_CPU_STATS_NCPUS_MAX`: host CPUs one `DOMAIN_GET_CPU_STATS` may ask for.
pub const DOMAIN_GET_CPU_STATS_NCPUS_MAX: usize = 128;
/// `REMOTE_DOMAIN_GET_CPU_STATS_MAX`: typed parameters of one `DOMAIN_GET_CPU_STATS` reply.
pub const DOMAIN_GET_CPU_STATS_MAX: usize = 2_048;
/// `REMOTE_DOMAIN_SAVE_PARAMS_MAX`.
pub const DOMAIN_SAVE_PARAMS_MAX: usize = 64;
/// `REMOTE_IOTHREAD_INFO_MAX`.
pub const IOTHREAD_INFO_MAX: usize = 16_384;
/// `REMOTE_DOMAIN_IOTHREAD_PARAMS_MAX`.
pub const DOMAIN_IOTHREAD_PARAMS_MAX: usize = 64;
/// `REMOTE_NODE_SEV_INFO_MAX`.
pub const NODE_SEV_INFO_MAX: usize = 64;
/// `REMOTE_DOMAIN_LAUNCH_SECURITY_INFO_PARAMS_MAX`.
pub const DOMAIN_LAUNCH_SECURITY_INFO_PARAMS_MAX: usize = 64;
/// `REMOTE_DOMAIN_LAUNCH_SECURITY_STATE_PARAMS_MAX`.
pub const DOMAIN_LAUNCH_SECURITY_STATE_PARAMS_MAX: usize = 64;
/// `REMOTE_NETWORK_PORT_PARAMETERS_MAX`.
pub const NETWORK_PORT_PARAMETERS_MAX: usize = 16;
/// `REMOTE_CONNECT_IDENTITY_PARAMS_MAX`.
pub const CONNECT_IDENTITY_PARAMS_MAX: usize = 20;
/// `REMOTE_DOMAIN_ANNOUNCE_INTERFACE_PARAMS_MAX` (12.5+).
pub const DOMAIN_ANNOUNCE_INTERFACE_PARAMS_MAX: usize = 16;
