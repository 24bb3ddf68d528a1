//! Connection-level procedures: authentication, features, open/close, host facts.

use crate::proto::limits;
use crate::proto::types::Domain;
use crate::procedures;
use crate::wire::xdr::LvString;
use crate::xdr_struct;

/// `remote_auth_type` values.
pub mod auth_type {
    /// No authentication needed.
    pub const NONE: i32 = 0;
    /// SASL (not implemented by this client).
    pub const SASL: i32 = 1;
    /// polkit.
    pub const POLKIT: i32 = 2;
}

/// `virConnectFlags` for `CONNECT_OPEN`.
pub mod open_flags {
    /// Read-only connection.
    pub const READ_ONLY: u32 = 1;
    /// Do not resolve URI aliases.
    pub const NO_ALIASES: u32 = 2;
}

xdr_struct! {
    /// `remote_auth_list_ret`.
    pub struct AuthListRet {
        /// Auth types the daemon requires (see [`auth_type`]).
        pub types: Vec<i32> [limits::AUTH_TYPE_LIST_MAX],
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
        /// [`open_flags`].
        pub flags: u32,
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
        /// `VIR_CONNECT_LIST_DOMAINS_*` (ACTIVE 1, INACTIVE 2, PERSISTENT 4, …).
        pub flags: u32,
    }
}

xdr_struct! {
    /// `remote_connect_list_all_domains_ret`.
    pub struct ConnectListAllDomainsRet {
        /// The domains.
        pub domains: Vec<Domain> [limits::DOMAIN_LIST_MAX],
        /// Count.
        pub ret: u32,
    }
}

procedures! {
    table PROCEDURES;
    /// `virConnectOpen`: must precede any hypervisor call.
    ConnectOpen = 1: ConnectOpenArgs => ();
    /// `virConnectClose`: the daemon closes the link after replying.
    ConnectClose = 2: () => ();
    /// `virConnectGetType`.
    ConnectGetType = 3: () => ConnectGetTypeRet;
    /// `virConnectGetVersion`.
    ConnectGetVersion = 4: () => ConnectGetVersionRet;
    /// `virConnectGetHostname`.
    ConnectGetHostname = 59: () => ConnectGetHostnameRet;
    /// Feature probe (`VIR_DRV_FEATURE_*`); feature 10 starts the daemon's keepalive pings.
    ConnectSupportsFeature = 60: ConnectSupportsFeatureArgs => ConnectSupportsFeatureRet;
    /// Authentication methods the daemon requires; always the first call.
    AuthList = 66: () => AuthListRet;
    /// polkit authentication.
    AuthPolkit = 70: () => AuthPolkitRet;
    /// `virConnectGetURI`.
    ConnectGetUri = 110: () => ConnectGetUriRet;
    /// `virConnectGetLibVersion`.
    ConnectGetLibVersion = 157: () => ConnectGetLibVersionRet;
    /// `virConnectListAllDomains`.
    ConnectListAllDomains = 273: ConnectListAllDomainsArgs => ConnectListAllDomainsRet;
    /// Ask the daemon to tell us (event 362) when it closes the connection.
    ConnectRegisterCloseCallback = 360: () => ();
    /// Undo [`ConnectRegisterCloseCallback`].
    ConnectUnregisterCloseCallback = 361: () => ();
}
