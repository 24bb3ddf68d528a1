//! Secret procedures (passphrases and keys for volumes, Ceph, iSCSI, TLS, vTPM).

use bytes::Bytes;

use super::common::{
    CallbackIdArgs, CallbackIdRet, ListAllArgs, NumRet, UuidArgs, XmlFlagsArgs, XmlRet,
};
use crate::proto::names::SecretUsageType;
use crate::proto::types::NonnullSecret;
use crate::proto::{limits, procedures};
use crate::wire::xdr::{LvString, xdr_struct};

crate::proto::flags::flag_set! {
    /// `virConnectListAllSecretsFlags` for [`ConnectListAllSecrets`].
    pub struct ConnectListAllSecretsFlags: u32 {
        /// Ephemeral secrets.
        const EPHEMERAL = 1;
        /// Persistent secrets.
        const NO_EPHEMERAL = 2;
        /// Private secrets.
        const PRIVATE = 4;
        /// Non-private secrets.
        const NO_PRIVATE = 8;
    }
}

xdr_struct! {
    /// Args holding just a secret.
    pub struct SecretArgs {
        /// The secret.
        pub secret: NonnullSecret,
    }
}

xdr_struct! {
    /// Args holding a secret and flags.
    pub struct SecretFlagsArgs {
        /// The secret.
        pub secret: NonnullSecret,
        /// Procedure-specific flags.
        pub flags: u32,
    }
}

xdr_struct! {
    /// A return holding just a secret.
    pub struct SecretRet {
        /// The secret.
        pub secret: NonnullSecret,
    }
}

xdr_struct! {
    /// `{ int maxuuids; }`: `remote_connect_list_secrets_args`.
    pub struct ConnectListSecretsArgs {
        /// Most UUIDs wanted.
        pub maxuuids: i32,
    }
}

xdr_struct! {
    /// `remote_connect_list_secrets_ret`: UUIDs as text.
    pub struct ConnectListSecretsRet {
        /// Secret UUIDs.
        pub uuids: Vec<LvString> [limits::SECRET_LIST_MAX],
    }
}

xdr_struct! {
    /// `remote_secret_set_value_args`.
    pub struct SecretSetValueArgs {
        /// The secret.
        pub secret: NonnullSecret,
        /// The value (raw bytes).
        pub value: Bytes [limits::SECRET_VALUE_MAX],
        /// Must be 0.
        pub flags: u32,
    }
}

xdr_struct! {
    /// `remote_secret_get_value_ret`.
    pub struct SecretGetValueRet {
        /// The value (raw bytes).
        pub value: Bytes [limits::SECRET_VALUE_MAX],
    }
}

xdr_struct! {
    /// `remote_secret_lookup_by_usage_args`.
    pub struct SecretLookupByUsageArgs {
        /// What the secret is for.
        pub usage_type: SecretUsageType,
        /// Usage id (volume path, Ceph name, …).
        pub usage_id: LvString,
    }
}

xdr_struct! {
    /// `remote_connect_list_all_secrets_ret`.
    pub struct ConnectListAllSecretsRet {
        /// The secrets.
        pub secrets: Vec<NonnullSecret> [limits::SECRET_LIST_MAX],
        /// Count.
        pub ret: u32,
    }
}

xdr_struct! {
    /// `remote_connect_secret_event_register_any_args`.
    pub struct ConnectSecretEventRegisterAnyArgs {
        /// [`secret_event_id`](crate::proto::events::secret_event_id).
        pub event_id: i32,
        /// Only this secret; `None` for all.
        pub secret: Option<NonnullSecret>,
    }
}

/// This module's procedure table as data: `rows!(callback)` hands every row to `callback!`,
/// as quinn's `apply_params!` does. [`procedures!`](crate::proto::procedures) declares the types
/// and the table from the rows; the client expands the same rows into the object API.
macro_rules! rows { ($callback:ident) => { $callback! {
    [secret]
    table PROCEDURES;
    /// `virConnectNumOfSecrets`.
    ConnectNumOfSecrets = 139: () => NumRet, since "0.7.1";
        => Connect::num_of_secrets() -> num[0];
    /// `virConnectListSecrets` (legacy; prefer [`ConnectListAllSecrets`]).
    ConnectListSecrets = 140: ConnectListSecretsArgs => ConnectListSecretsRet, since "0.7.1";
        => Connect::list_secrets(maxuuids) -> uuids[0];
    /// `virSecretLookupByUUID`.
    SecretLookupByUuid = 141: UuidArgs => SecretRet, since "0.7.1";
        => Connect::lookup_secret_by_uuid(uuid) -> secret[0];
    /// `virSecretDefineXML`.
    SecretDefineXml = 142: XmlFlagsArgs => SecretRet, since "0.7.1";
        => Connect::define_secret_xml(xml, flags) -> secret[0];
    /// `virSecretGetXMLDesc`.
    SecretGetXmlDesc = 143: SecretFlagsArgs => XmlRet, since "0.7.1";
        => Secret::xml_desc(secret = self, flags) -> xml[0];
    /// `virSecretSetValue`.
    SecretSetValue = 144: SecretSetValueArgs => (), since "0.7.1";
        => Secret::set_value(secret = self, value, flags);
    /// `virSecretGetValue`.
    SecretGetValue = 145: SecretFlagsArgs => SecretGetValueRet, since "0.7.1";
        => Secret::value(secret = self, flags) -> value[0];
    /// `virSecretUndefine`.
    SecretUndefine = 146: SecretArgs => (), since "0.7.1";
        => Secret::undefine(secret = self);
    /// `virSecretLookupByUsage`.
    SecretLookupByUsage = 147: SecretLookupByUsageArgs => SecretRet, since "0.7.1";
        => Connect::lookup_secret_by_usage(usage_type, usage_id) -> secret[0];
    /// `virConnectListAllSecrets` (flags: [`ConnectListAllSecretsFlags`]).
    ConnectListAllSecrets = 287: ListAllArgs<ConnectListAllSecretsFlags> => ConnectListAllSecretsRet, since "0.10.2";
        => Connect::list_all_secrets(need_results = 1, flags) -> secrets[0];
    /// `virConnectSecretEventRegisterAny`: events arrive as `SECRET_EVENT_*` messages.
    ConnectSecretEventRegisterAny = 380: ConnectSecretEventRegisterAnyArgs => CallbackIdRet, since "3.0.0";
    /// Undo [`ConnectSecretEventRegisterAny`].
    ConnectSecretEventDeregisterAny = 381: CallbackIdArgs => (), since "3.0.0";
} } }
#[allow(unused_imports)] // expanded by the layers above, when they are built
pub(crate) use rows;

rows!(procedures);
