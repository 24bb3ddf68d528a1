//! Migration procedures: the begin/prepare/perform/finish/confirm steps of every protocol
//! version (v1, v2, v3 and v3 with typed parameters), the tunnelled prepare calls whose
//! upload stream carries the migration data, and the migration tunables (speed, downtime,
//! compression cache, post-copy).
//!
//! libvirt's client library drives these steps between a source and a destination daemon
//! (`virDomainMigrate*`); a client normally only calls the tunables or, for a peer-to-peer
//! migration, [`DomainMigratePerform3Params`] on the source. The cookies are opaque blobs
//! one daemon hands the other through the client.
//!
//! Layouts written from `remote_protocol.x`'s description of the `remote_domain_migrate_*`
//! structs. Every cookie is bounded by `REMOTE_MIGRATE_COOKIE_MAX` and every parameter list
//! by `REMOTE_DOMAIN_MIGRATE_PARAM_LIST_MAX`.

use crate::proto::{StreamArgs, limits};
use bytes::Bytes;

use super::domain::DomainFlagsArgs;
use crate::proto::procedures;
use crate::proto::types::{NonnullDomain, TypedParam};
use crate::wire::xdr::{LvString, xdr_struct};

crate::proto::flags::flag_set! {
    /// `virDomainMigrateFlags` (the `flags` of every migration step; `u64` in the v1–v3 calls,
    /// `u32` in the `*_PARAMS` calls).
    pub struct DomainMigrateFlags: u64 {
        /// Live migration (the guest keeps running).
        const LIVE = 1;
        /// The source daemon talks to the destination itself.
        const PEER2PEER = 2;
        /// Tunnel the data through the libvirt connection (needs [`PEER2PEER`]).
        const TUNNELLED = 4;
        /// Define the domain persistently on the destination.
        const PERSIST_DEST = 8;
        /// Undefine the domain on the source.
        const UNDEFINE_SOURCE = 16;
        /// Leave the domain paused on the destination.
        const PAUSED = 32;
        /// Copy non-shared storage, full disks.
        const NON_SHARED_DISK = 64;
        /// Copy non-shared storage, incremental (shared backing files).
        const NON_SHARED_INC = 128;
        /// Refuse configurations libvirt judges not safe to migrate.
        const CHANGE_PROTECTION = 256;
        /// Migrate even a configuration libvirt judges not safe.
        const UNSAFE = 512;
        /// Offline migration (definition only).
        const OFFLINE = 1024;
        /// Compress the data.
        const COMPRESSED = 2048;
        /// Cancel when a soft I/O error happens.
        const ABORT_ON_ERROR = 4096;
        /// Slow the guest down if it dirties memory too fast.
        const AUTO_CONVERGE = 8192;
        /// RDMA pin all memory.
        const RDMA_PIN_ALL = 16384;
        /// Allow switching to post-copy.
        const POSTCOPY = 32768;
        /// Encrypt with TLS.
        const TLS = 65536;
        /// Multiple parallel connections.
        const PARALLEL = 131_072;
        /// Force synchronous writes to the destination's disks while copying storage.
        const NON_SHARED_SYNCHRONOUS_WRITES = 262_144;
        /// Resume a failed post-copy migration.
        const POSTCOPY_RESUME = 524_288;
        /// Zero-copy sends.
        const ZEROCOPY = 1_048_576;
    }
}

/// Field names of the typed parameters of the `*_PARAMS` calls (`VIR_MIGRATE_PARAM_*`).
pub mod migrate_param {
    /// `VIR_MIGRATE_PARAM_URI`: the data transport URI (string).
    pub const URI: &str = "migrate_uri";
    /// `VIR_MIGRATE_PARAM_DEST_NAME`: the domain's name on the destination (string).
    pub const DEST_NAME: &str = "destination_name";
    /// `VIR_MIGRATE_PARAM_DEST_XML`: the domain XML to use on the destination (string).
    pub const DEST_XML: &str = "destination_xml";
    /// `VIR_MIGRATE_PARAM_PERSIST_XML`: the persistent XML on the destination (string).
    pub const PERSIST_XML: &str = "persistent_xml";
    /// `VIR_MIGRATE_PARAM_BANDWIDTH`: MiB/s (ullong).
    pub const BANDWIDTH: &str = "bandwidth";
    /// `VIR_MIGRATE_PARAM_GRAPHICS_URI`: where graphics clients reconnect (string).
    pub const GRAPHICS_URI: &str = "graphics_uri";
    /// `VIR_MIGRATE_PARAM_LISTEN_ADDRESS`: the destination's listen address (string).
    pub const LISTEN_ADDRESS: &str = "listen_address";
    /// `VIR_MIGRATE_PARAM_MIGRATE_DISKS`: a disk to copy (string, may repeat).
    pub const MIGRATE_DISKS: &str = "migrate_disks";
    /// `VIR_MIGRATE_PARAM_DISKS_PORT`: port of the disk-copy NBD server (int).
    pub const DISKS_PORT: &str = "disks_port";
    /// `VIR_MIGRATE_PARAM_COMPRESSION`: a compression method (string, may repeat).
    pub const COMPRESSION: &str = "compression";
    /// `VIR_MIGRATE_PARAM_PARALLEL_CONNECTIONS`: number of connections (int).
    pub const PARALLEL_CONNECTIONS: &str = "parallel.connections";
}

xdr_struct! {
    /// `remote_domain_migrate_prepare_args` (v1, destination).
    pub struct DomainMigratePrepareArgs {
        /// Transport URI the source suggested (`None`: the destination picks one).
        pub uri_in: Option<LvString>,
        /// Migration flags.
        pub flags: DomainMigrateFlags,
        /// New domain name (`None`: keep the name).
        pub dname: Option<LvString>,
        /// Bandwidth limit, MiB/s (0: none).
        pub bandwidth: u64,
    }
}

xdr_struct! {
    /// `remote_domain_migrate_prepare_ret` (v1 and v2).
    pub struct DomainMigratePrepareRet {
        /// Cookie for the perform step.
        pub cookie: Bytes [limits::MIGRATE_COOKIE_MAX],
        /// Transport URI the destination listens on, if it chose one.
        pub uri_out: Option<LvString>,
    }
}

xdr_struct! {
    /// `remote_domain_migrate_perform_args` (v1 and v2, source).
    pub struct DomainMigratePerformArgs {
        /// The domain to migrate.
        pub dom: NonnullDomain,
        /// Cookie from the prepare step.
        pub cookie: Bytes [limits::MIGRATE_COOKIE_MAX],
        /// Transport URI.
        pub uri: LvString,
        /// Migration flags.
        pub flags: DomainMigrateFlags,
        /// New domain name.
        pub dname: Option<LvString>,
        /// Bandwidth limit, MiB/s (0: none).
        pub bandwidth: u64,
    }
}

xdr_struct! {
    /// `remote_domain_migrate_finish_args` (v1, destination).
    pub struct DomainMigrateFinishArgs {
        /// Domain name on the destination.
        pub dname: LvString,
        /// Cookie from the prepare step.
        pub cookie: Bytes [limits::MIGRATE_COOKIE_MAX],
        /// Transport URI.
        pub uri: LvString,
        /// Migration flags.
        pub flags: DomainMigrateFlags,
    }
}

xdr_struct! {
    /// `remote_domain_migrate_finish_ret` / `…_finish2_ret`: the domain on the destination.
    pub struct DomainMigrateFinishRet {
        /// The migrated domain.
        pub ddom: NonnullDomain,
    }
}

xdr_struct! {
    /// `remote_domain_migrate_prepare2_args` (v2, destination).
    pub struct DomainMigratePrepare2Args {
        /// Transport URI the source suggested.
        pub uri_in: Option<LvString>,
        /// Migration flags.
        pub flags: DomainMigrateFlags,
        /// New domain name.
        pub dname: Option<LvString>,
        /// Bandwidth limit, MiB/s (0: none).
        pub bandwidth: u64,
        /// Domain XML from the source.
        pub dom_xml: LvString,
    }
}

xdr_struct! {
    /// `remote_domain_migrate_finish2_args` (v2, destination).
    pub struct DomainMigrateFinish2Args {
        /// Domain name on the destination.
        pub dname: LvString,
        /// Cookie from the prepare step.
        pub cookie: Bytes [limits::MIGRATE_COOKIE_MAX],
        /// Transport URI.
        pub uri: LvString,
        /// Migration flags.
        pub flags: DomainMigrateFlags,
        /// Result of the perform step (0: it succeeded).
        pub retcode: i32,
    }
}

xdr_struct! {
    /// `remote_domain_migrate_prepare_tunnel_args` (v2 tunnelled, destination). The
    /// migration data follows as upload stream data.
    pub struct DomainMigratePrepareTunnelArgs {
        /// Migration flags.
        pub flags: DomainMigrateFlags,
        /// New domain name.
        pub dname: Option<LvString>,
        /// Bandwidth limit, MiB/s (0: none).
        pub bandwidth: u64,
        /// Domain XML from the source.
        pub dom_xml: LvString,
    }
}

xdr_struct! {
    /// `remote_domain_migrate_set_max_downtime_args`.
    pub struct DomainMigrateSetMaxDowntimeArgs {
        /// The domain being migrated.
        pub dom: NonnullDomain,
        /// Longest tolerable pause, in milliseconds.
        pub downtime: u64,
        /// Must be 0.
        pub flags: u32,
    }
}

xdr_struct! {
    /// `remote_domain_migrate_get_max_downtime_ret`.
    pub struct DomainMigrateGetMaxDowntimeRet {
        /// Longest tolerable pause, in milliseconds.
        pub downtime: u64,
    }
}

xdr_struct! {
    /// `remote_domain_migrate_set_max_speed_args`.
    pub struct DomainMigrateSetMaxSpeedArgs {
        /// The domain.
        pub dom: NonnullDomain,
        /// MiB/s.
        pub bandwidth: u64,
        /// `virDomainMigrateMaxSpeedFlags` (POSTCOPY 1).
        pub flags: u32,
    }
}

xdr_struct! {
    /// `remote_domain_migrate_get_max_speed_ret`.
    pub struct DomainMigrateGetMaxSpeedRet {
        /// MiB/s.
        pub bandwidth: u64,
    }
}

xdr_struct! {
    /// `remote_domain_migrate_set_compression_cache_args`.
    pub struct DomainMigrateSetCompressionCacheArgs {
        /// The domain.
        pub dom: NonnullDomain,
        /// Cache size in bytes.
        pub cache_size: u64,
        /// Must be 0.
        pub flags: u32,
    }
}

xdr_struct! {
    /// `remote_domain_migrate_get_compression_cache_ret`.
    pub struct DomainMigrateGetCompressionCacheRet {
        /// Cache size in bytes.
        pub cache_size: u64,
    }
}

xdr_struct! {
    /// `remote_domain_migrate_begin3_args` (v3, source).
    pub struct DomainMigrateBegin3Args {
        /// The domain to migrate.
        pub dom: NonnullDomain,
        /// Replacement domain XML for the destination.
        pub xmlin: Option<LvString>,
        /// Migration flags.
        pub flags: DomainMigrateFlags,
        /// New domain name.
        pub dname: Option<LvString>,
        /// Bandwidth limit, MiB/s (0: none).
        pub bandwidth: u64,
    }
}

xdr_struct! {
    /// `remote_domain_migrate_begin3_ret` / `…_begin3_params_ret`.
    pub struct DomainMigrateBegin3Ret {
        /// Cookie for the prepare step.
        pub cookie_out: Bytes [limits::MIGRATE_COOKIE_MAX],
        /// Domain XML to hand to the destination.
        pub xml: LvString,
    }
}

xdr_struct! {
    /// `remote_domain_migrate_prepare3_args` (v3, destination).
    pub struct DomainMigratePrepare3Args {
        /// Cookie from the begin step.
        pub cookie_in: Bytes [limits::MIGRATE_COOKIE_MAX],
        /// Transport URI the source suggested.
        pub uri_in: Option<LvString>,
        /// Migration flags.
        pub flags: DomainMigrateFlags,
        /// New domain name.
        pub dname: Option<LvString>,
        /// Bandwidth limit, MiB/s (0: none).
        pub bandwidth: u64,
        /// Domain XML from the begin step.
        pub dom_xml: LvString,
    }
}

xdr_struct! {
    /// `remote_domain_migrate_prepare3_ret` / `…_prepare3_params_ret`.
    pub struct DomainMigratePrepare3Ret {
        /// Cookie for the perform step.
        pub cookie_out: Bytes [limits::MIGRATE_COOKIE_MAX],
        /// Transport URI the destination listens on, if it chose one.
        pub uri_out: Option<LvString>,
    }
}

xdr_struct! {
    /// `remote_domain_migrate_prepare_tunnel3_args` (v3 tunnelled, destination). The
    /// migration data follows as upload stream data.
    pub struct DomainMigratePrepareTunnel3Args {
        /// Cookie from the begin step.
        pub cookie_in: Bytes [limits::MIGRATE_COOKIE_MAX],
        /// Migration flags.
        pub flags: DomainMigrateFlags,
        /// New domain name.
        pub dname: Option<LvString>,
        /// Bandwidth limit, MiB/s (0: none).
        pub bandwidth: u64,
        /// Domain XML from the begin step.
        pub dom_xml: LvString,
    }
}

xdr_struct! {
    /// `{ opaque cookie_out<REMOTE_MIGRATE_COOKIE_MAX>; }`: the return of the tunnelled
    /// prepare and of perform (v3 and v3 with parameters).
    pub struct DomainMigrateCookieRet {
        /// Cookie for the next step.
        pub cookie_out: Bytes [limits::MIGRATE_COOKIE_MAX],
    }
}

xdr_struct! {
    /// `remote_domain_migrate_perform3_args` (v3, source).
    pub struct DomainMigratePerform3Args {
        /// The domain to migrate.
        pub dom: NonnullDomain,
        /// Replacement domain XML for the destination.
        pub xmlin: Option<LvString>,
        /// Cookie from the prepare step.
        pub cookie_in: Bytes [limits::MIGRATE_COOKIE_MAX],
        /// Destination libvirt URI (peer-to-peer migration).
        pub dconnuri: Option<LvString>,
        /// Transport URI.
        pub uri: Option<LvString>,
        /// Migration flags.
        pub flags: DomainMigrateFlags,
        /// New domain name.
        pub dname: Option<LvString>,
        /// Bandwidth limit, MiB/s (0: none).
        pub bandwidth: u64,
    }
}

xdr_struct! {
    /// `remote_domain_migrate_finish3_args` (v3, destination).
    pub struct DomainMigrateFinish3Args {
        /// Domain name on the destination.
        pub dname: LvString,
        /// Cookie from the perform step.
        pub cookie_in: Bytes [limits::MIGRATE_COOKIE_MAX],
        /// Destination libvirt URI.
        pub dconnuri: Option<LvString>,
        /// Transport URI.
        pub uri: Option<LvString>,
        /// Migration flags.
        pub flags: DomainMigrateFlags,
        /// Non-zero when the perform step failed (the destination discards the domain).
        pub cancelled: i32,
    }
}

xdr_struct! {
    /// `remote_domain_migrate_finish3_ret` / `…_finish3_params_ret`.
    pub struct DomainMigrateFinish3Ret {
        /// The migrated domain.
        pub dom: NonnullDomain,
        /// Cookie for the confirm step.
        pub cookie_out: Bytes [limits::MIGRATE_COOKIE_MAX],
    }
}

xdr_struct! {
    /// `remote_domain_migrate_confirm3_args` (v3, source).
    pub struct DomainMigrateConfirm3Args {
        /// The migrated domain.
        pub dom: NonnullDomain,
        /// Cookie from the finish step.
        pub cookie_in: Bytes [limits::MIGRATE_COOKIE_MAX],
        /// Migration flags.
        pub flags: DomainMigrateFlags,
        /// Non-zero when the migration failed (the source resumes the domain).
        pub cancelled: i32,
    }
}

xdr_struct! {
    /// `remote_domain_migrate_begin3_params_args`.
    pub struct DomainMigrateBegin3ParamsArgs {
        /// The domain to migrate.
        pub dom: NonnullDomain,
        /// [`migrate_param`] values.
        pub params: Vec<TypedParam> [limits::DOMAIN_MIGRATE_PARAM_LIST_MAX],
        /// Migration flags (an `unsigned int` here: a flag above bit 31 is an encode error).
        pub flags: DomainMigrateFlags as u32,
    }
}

xdr_struct! {
    /// `remote_domain_migrate_prepare3_params_args` and
    /// `remote_domain_migrate_prepare_tunnel3_params_args` (same layout; the tunnelled one
    /// opens an upload stream).
    pub struct DomainMigratePrepare3ParamsArgs {
        /// [`migrate_param`] values.
        pub params: Vec<TypedParam> [limits::DOMAIN_MIGRATE_PARAM_LIST_MAX],
        /// Cookie from the begin step.
        pub cookie_in: Bytes [limits::MIGRATE_COOKIE_MAX],
        /// Migration flags (an `unsigned int` here: a flag above bit 31 is an encode error).
        pub flags: DomainMigrateFlags as u32,
    }
}

xdr_struct! {
    /// `remote_domain_migrate_perform3_params_args`.
    pub struct DomainMigratePerform3ParamsArgs {
        /// The domain to migrate.
        pub dom: NonnullDomain,
        /// Destination libvirt URI (peer-to-peer migration).
        pub dconnuri: Option<LvString>,
        /// [`migrate_param`] values.
        pub params: Vec<TypedParam> [limits::DOMAIN_MIGRATE_PARAM_LIST_MAX],
        /// Cookie from the prepare step (empty for peer-to-peer).
        pub cookie_in: Bytes [limits::MIGRATE_COOKIE_MAX],
        /// Migration flags (an `unsigned int` here: a flag above bit 31 is an encode error).
        pub flags: DomainMigrateFlags as u32,
    }
}

xdr_struct! {
    /// `remote_domain_migrate_finish3_params_args`.
    pub struct DomainMigrateFinish3ParamsArgs {
        /// [`migrate_param`] values.
        pub params: Vec<TypedParam> [limits::DOMAIN_MIGRATE_PARAM_LIST_MAX],
        /// Cookie from the perform step.
        pub cookie_in: Bytes [limits::MIGRATE_COOKIE_MAX],
        /// Migration flags (an `unsigned int` here: a flag above bit 31 is an encode error).
        pub flags: DomainMigrateFlags as u32,
        /// Non-zero when the perform step failed.
        pub cancelled: i32,
    }
}

xdr_struct! {
    /// `remote_domain_migrate_confirm3_params_args`.
    pub struct DomainMigrateConfirm3ParamsArgs {
        /// The migrated domain.
        pub dom: NonnullDomain,
        /// [`migrate_param`] values.
        pub params: Vec<TypedParam> [limits::DOMAIN_MIGRATE_PARAM_LIST_MAX],
        /// Cookie from the finish step.
        pub cookie_in: Bytes [limits::MIGRATE_COOKIE_MAX],
        /// Migration flags (an `unsigned int` here: a flag above bit 31 is an encode error).
        pub flags: DomainMigrateFlags as u32,
        /// Non-zero when the migration failed.
        pub cancelled: i32,
    }
}

// The tunnelled prepares' upload streams carry migration data, never holes.
impl StreamArgs for DomainMigratePrepareTunnelArgs {}
impl StreamArgs for DomainMigratePrepareTunnel3Args {}
impl StreamArgs for DomainMigratePrepare3ParamsArgs {}

/// This module's procedure table as data: `rows!(callback)` hands every row to `callback!`,
/// as quinn's `apply_params!` does. [`procedures!`](crate::proto::procedures) declares the types
/// and the table from the rows; the client expands the same rows into the object API.
macro_rules! rows { ($callback:ident) => { $callback! {
    [migration]
    table PROCEDURES;
    /// `virDomainMigratePrepare` (v1, destination).
    DomainMigratePrepare = 61: DomainMigratePrepareArgs => DomainMigratePrepareRet, since "0.3.2";
    /// `virDomainMigratePerform` (v1 and v2, source).
    DomainMigratePerform = 62: DomainMigratePerformArgs => (), since "0.3.2";
    /// `virDomainMigrateFinish` (v1, destination).
    DomainMigrateFinish = 63: DomainMigrateFinishArgs => DomainMigrateFinishRet, since "0.3.2";
    /// `virDomainMigratePrepare2` (v2, destination).
    DomainMigratePrepare2 = 108:
        DomainMigratePrepare2Args => DomainMigratePrepareRet, since "0.5.0";
    /// `virDomainMigrateFinish2` (v2, destination).
    DomainMigrateFinish2 = 109: DomainMigrateFinish2Args => DomainMigrateFinishRet, since "0.5.0";
    /// `virDomainMigratePrepareTunnel` (v2 tunnelled, destination): the source's data
    /// follows as upload stream data.
    DomainMigratePrepareTunnel = 148:
        DomainMigratePrepareTunnelArgs => (), since "0.7.2", stream Upload;
    /// `virDomainMigrateSetMaxDowntime`.
    DomainMigrateSetMaxDowntime = 166: DomainMigrateSetMaxDowntimeArgs => (), since "0.8.0";
        => Domain::migrate_set_max_downtime(dom = self, downtime, flags);
    /// `virDomainMigrateSetMaxSpeed`.
    DomainMigrateSetMaxSpeed = 207: DomainMigrateSetMaxSpeedArgs => (), since "0.9.0";
        => Domain::migrate_set_max_speed(dom = self, bandwidth, flags);
    /// `virDomainMigrateBegin3` (v3, source).
    DomainMigrateBegin3 = 213: DomainMigrateBegin3Args => DomainMigrateBegin3Ret, since "0.9.2";
    /// `virDomainMigratePrepare3` (v3, destination).
    DomainMigratePrepare3 = 214:
        DomainMigratePrepare3Args => DomainMigratePrepare3Ret, since "0.9.2";
    /// `virDomainMigratePrepareTunnel3` (v3 tunnelled, destination): the source's data
    /// follows as upload stream data.
    DomainMigratePrepareTunnel3 = 215:
        DomainMigratePrepareTunnel3Args => DomainMigrateCookieRet, since "0.9.2", stream Upload;
    /// `virDomainMigratePerform3` (v3, source).
    DomainMigratePerform3 = 216:
        DomainMigratePerform3Args => DomainMigrateCookieRet, since "0.9.2";
    /// `virDomainMigrateFinish3` (v3, destination).
    DomainMigrateFinish3 = 217: DomainMigrateFinish3Args => DomainMigrateFinish3Ret, since "0.9.2";
    /// `virDomainMigrateConfirm3` (v3, source).
    DomainMigrateConfirm3 = 218: DomainMigrateConfirm3Args => (), since "0.9.2";
    /// `virDomainMigrateGetMaxSpeed` (flags: POSTCOPY 1).
    DomainMigrateGetMaxSpeed = 242: DomainFlagsArgs => DomainMigrateGetMaxSpeedRet, since "0.9.5";
        => Domain::migrate_get_max_speed(dom = self, flags) -> bandwidth[0];
    /// `virDomainMigrateGetCompressionCache` (flags must be 0).
    DomainMigrateGetCompressionCache = 299:
        DomainFlagsArgs => DomainMigrateGetCompressionCacheRet, since "1.0.3";
        => Domain::migrate_get_compression_cache(dom = self, flags) -> cache_size[0];
    /// `virDomainMigrateSetCompressionCache`.
    DomainMigrateSetCompressionCache = 300:
        DomainMigrateSetCompressionCacheArgs => (), since "1.0.3";
        => Domain::migrate_set_compression_cache(dom = self, cache_size, flags);
    /// `virDomainMigrateBegin3Params` (v3 with parameters, source).
    DomainMigrateBegin3Params = 302:
        DomainMigrateBegin3ParamsArgs => DomainMigrateBegin3Ret, since "1.1.0";
    /// `virDomainMigratePrepare3Params` (v3 with parameters, destination).
    DomainMigratePrepare3Params = 303:
        DomainMigratePrepare3ParamsArgs => DomainMigratePrepare3Ret, since "1.1.0";
    /// `virDomainMigratePrepareTunnel3Params` (tunnelled, destination): the source's data
    /// follows as upload stream data.
    DomainMigratePrepareTunnel3Params = 304:
        DomainMigratePrepare3ParamsArgs => DomainMigrateCookieRet, since "1.1.0", stream Upload;
    /// `virDomainMigratePerform3Params` (v3 with parameters, source; the one call of a
    /// peer-to-peer migration).
    DomainMigratePerform3Params = 305:
        DomainMigratePerform3ParamsArgs => DomainMigrateCookieRet, since "1.1.0";
    /// `virDomainMigrateFinish3Params` (v3 with parameters, destination).
    DomainMigrateFinish3Params = 306:
        DomainMigrateFinish3ParamsArgs => DomainMigrateFinish3Ret, since "1.1.0";
    /// `virDomainMigrateConfirm3Params` (v3 with parameters, source).
    DomainMigrateConfirm3Params = 307: DomainMigrateConfirm3ParamsArgs => (), since "1.1.0";
    /// `virDomainMigrateStartPostCopy` (flags must be 0).
    DomainMigrateStartPostCopy = 364: DomainFlagsArgs => (), since "1.3.3";
        => Domain::migrate_start_post_copy(dom = self, flags);
    /// `virDomainMigrateGetMaxDowntime` (flags must be 0).
    DomainMigrateGetMaxDowntime = 387:
        DomainFlagsArgs => DomainMigrateGetMaxDowntimeRet, since "3.7.0";
        => Domain::migrate_get_max_downtime(dom = self, flags) -> downtime[0];
} } }
#[allow(unused_imports)] // expanded by the layers above, when they are built
pub(crate) use rows;

rows!(procedures);

/// `remote_domain_migrate_finish2_ret` has the same layout as the v1 finish return.
pub type DomainMigrateFinish2Ret = DomainMigrateFinishRet;
/// `remote_domain_migrate_prepare2_ret` has the same layout as the v1 prepare return.
pub type DomainMigratePrepare2Ret = DomainMigratePrepareRet;
