//! Protocol limits (`REMOTE_*_MAX`): every limit the declarations use, in one place.
//!
//! Values were checked against `remote_protocol.x` copies from libvirt 3.0 and 11.x and a
//! binding generated from libvirt 12.0. Where libvirt raised a limit over time (three list
//! limits) we use the newest value: decoding with a larger limit is harmless (an older daemon
//! never sends more); decoding with a smaller one rejects valid replies from a newer daemon.

/// `REMOTE_STRING_MAX`.
pub const STRING_MAX: usize = crate::wire::xdr::STRING_MAX;
/// `REMOTE_DOMAIN_LIST_MAX`.
pub const DOMAIN_LIST_MAX: usize = 16_384;
/// `REMOTE_NETWORK_LIST_MAX`.
pub const NETWORK_LIST_MAX: usize = 16_384;
/// `REMOTE_INTERFACE_LIST_MAX`.
pub const INTERFACE_LIST_MAX: usize = 16_384;
/// `REMOTE_STORAGE_POOL_LIST_MAX` as of libvirt 12 (older releases: 4096).
pub const STORAGE_POOL_LIST_MAX: usize = 16_384;
/// `REMOTE_STORAGE_VOL_LIST_MAX`.
pub const STORAGE_VOL_LIST_MAX: usize = 16_384;
/// `REMOTE_NODE_DEVICE_LIST_MAX` (raised from 16384 soon after libvirt 3.0).
pub const NODE_DEVICE_LIST_MAX: usize = 65_536;
/// `REMOTE_SECRET_LIST_MAX`.
pub const SECRET_LIST_MAX: usize = 16_384;
/// `REMOTE_NWFILTER_LIST_MAX` as of libvirt 12 (older releases: 1024).
pub const NWFILTER_LIST_MAX: usize = 16_384;
/// `REMOTE_AUTH_TYPE_LIST_MAX`.
pub const AUTH_TYPE_LIST_MAX: usize = 20;
/// `REMOTE_DOMAIN_INTERFACE_MAX`.
pub const DOMAIN_INTERFACE_MAX: usize = 2_048;
/// `REMOTE_DOMAIN_IP_ADDR_MAX`.
pub const DOMAIN_IP_ADDR_MAX: usize = 2_048;
/// `REMOTE_NETWORK_DHCP_LEASES_MAX`.
pub const NETWORK_DHCP_LEASES_MAX: usize = 65_536;
/// `REMOTE_DOMAIN_SNAPSHOT_LIST_MAX`.
pub const DOMAIN_SNAPSHOT_LIST_MAX: usize = 16_384;
/// `REMOTE_DOMAIN_EVENT_TUNABLE_MAX`.
pub const DOMAIN_EVENT_TUNABLE_MAX: usize = 2_048;
/// `REMOTE_DOMAIN_JOB_STATS_MAX`.
pub const DOMAIN_JOB_STATS_MAX: usize = 64;
/// `REMOTE_DOMAIN_MEMORY_STATS_MAX`.
pub const DOMAIN_MEMORY_STATS_MAX: usize = 1_024;
/// `REMOTE_NODE_MAX_CELLS`.
pub const NODE_MAX_CELLS: usize = 1_024;
/// `REMOTE_SECRET_VALUE_MAX`.
pub const SECRET_VALUE_MAX: usize = 65_536;
/// `REMOTE_CONNECT_GET_ALL_DOMAIN_STATS_MAX` (9.0+).
pub const CONNECT_GET_ALL_DOMAIN_STATS_MAX: usize = 262_144;
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
