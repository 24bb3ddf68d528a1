//! Layer 2: libvirt's programs — constants, shared types, errors, the procedure table and
//! event messages. Pure data and codecs; no connection state.

pub mod error;
pub mod events;
pub mod procedure;
pub mod procs;
pub mod types;

pub use error::{ErrorCode, ErrorDomain, ErrorLevel, RemoteError};
pub use procedure::{LibvirtVersion, ProcInfo, Procedure, StreamDirection};

/// `REMOTE_PROGRAM`: the libvirt remote program.
pub const REMOTE_PROGRAM: u32 = 0x2000_8086;
/// `REMOTE_PROTOCOL_VERSION`.
pub const REMOTE_VERSION: u32 = 1;
/// `QEMU_PROGRAM` (qemu-specific calls; only reachable as raw calls here).
pub const QEMU_PROGRAM: u32 = 0x2000_8087;
/// `LXC_PROGRAM`.
pub const LXC_PROGRAM: u32 = 0x0006_8000;
/// `KEEPALIVE_PROGRAM` ("keep").
pub const KEEPALIVE_PROGRAM: u32 = 0x6b65_6570;
/// `KEEPALIVE_PROTOCOL_VERSION`.
pub const KEEPALIVE_VERSION: u32 = 1;
/// `KEEPALIVE_PROC_PING`.
pub const KEEPALIVE_PING: i32 = 1;
/// `KEEPALIVE_PROC_PONG`.
pub const KEEPALIVE_PONG: i32 = 2;

/// `VIR_DRV_FEATURE_PROGRAM_KEEPALIVE`: asking for it starts the daemon's pings.
pub const FEATURE_PROGRAM_KEEPALIVE: i32 = 10;
/// `VIR_DRV_FEATURE_REMOTE_EVENT_CALLBACK`: needed before `*_CALLBACK_REGISTER_ANY`.
pub const FEATURE_REMOTE_EVENT_CALLBACK: i32 = 14;
/// `VIR_DRV_FEATURE_REMOTE_CLOSE_CALLBACK`.
pub const FEATURE_REMOTE_CLOSE_CALLBACK: i32 = 15;

/// Protocol limits (`REMOTE_*_MAX`). Where libvirt raised one over time we use the newest
/// value: a larger decode limit is harmless, a smaller one would refuse a valid reply.
pub mod limits {
    /// `REMOTE_STRING_MAX`.
    pub const STRING_MAX: usize = crate::wire::xdr::STRING_MAX;
    /// `REMOTE_DOMAIN_LIST_MAX`.
    pub const DOMAIN_LIST_MAX: usize = 16_384;
    /// `REMOTE_NETWORK_LIST_MAX`.
    pub const NETWORK_LIST_MAX: usize = 16_384;
    /// `REMOTE_INTERFACE_LIST_MAX`.
    pub const INTERFACE_LIST_MAX: usize = 16_384;
    /// `REMOTE_STORAGE_POOL_LIST_MAX`.
    pub const STORAGE_POOL_LIST_MAX: usize = 16_384;
    /// `REMOTE_STORAGE_VOL_LIST_MAX`.
    pub const STORAGE_VOL_LIST_MAX: usize = 16_384;
    /// `REMOTE_NODE_DEVICE_LIST_MAX`.
    pub const NODE_DEVICE_LIST_MAX: usize = 65_536;
    /// `REMOTE_SECRET_LIST_MAX`.
    pub const SECRET_LIST_MAX: usize = 16_384;
    /// `REMOTE_NWFILTER_LIST_MAX`.
    pub const NWFILTER_LIST_MAX: usize = 16_384;
    /// `REMOTE_AUTH_TYPE_LIST_MAX`.
    pub const AUTH_TYPE_LIST_MAX: usize = 20;
    /// `REMOTE_AUTH_SASL_DATA_MAX`: bytes in one SASL message.
    pub const AUTH_SASL_DATA_MAX: usize = 65_536;
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
}
