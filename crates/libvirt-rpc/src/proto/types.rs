//! Types shared by many procedures: object handles, UUIDs, typed parameters.

use std::fmt;
use std::str::FromStr;

use crate::wire::xdr::{Decode, DecodeError, Decoder, Encode, Encoder, LvString};
use crate::xdr_struct;

/// `remote_uuid`: 16 raw bytes.
#[derive(Clone, Copy, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Uuid(pub [u8; 16]);

impl fmt::Display for Uuid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, b) in self.0.iter().enumerate() {
            if matches!(i, 4 | 6 | 8 | 10) {
                f.write_str("-")?;
            }
            write!(f, "{b:02x}")?;
        }
        Ok(())
    }
}

impl fmt::Debug for Uuid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Uuid({self})")
    }
}

/// A string that is not a UUID.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("not a UUID: {0:?}")]
pub struct ParseUuidError(pub String);

impl FromStr for Uuid {
    type Err = ParseUuidError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let hex: Vec<u8> = s.bytes().filter(|b| *b != b'-').collect();
        if hex.len() != 32 || s.len() > 36 {
            return Err(ParseUuidError(s.into()));
        }
        let mut out = [0u8; 16];
        for (i, pair) in hex.chunks(2).enumerate() {
            let txt = std::str::from_utf8(pair).map_err(|_| ParseUuidError(s.into()))?;
            out[i] = u8::from_str_radix(txt, 16).map_err(|_| ParseUuidError(s.into()))?;
        }
        Ok(Self(out))
    }
}

impl Encode for Uuid {
    fn encode(&self, enc: &mut Encoder) {
        enc.put_fixed_opaque(&self.0);
    }
}

impl Decode for Uuid {
    const MIN_SIZE: usize = 16;
    fn decode(dec: &mut Decoder) -> Result<Self, DecodeError> {
        <[u8; 16]>::decode(dec).map(Self)
    }
}

xdr_struct! {
    /// `remote_nonnull_domain`. The daemon finds domains by UUID; `id` is -1 when inactive.
    pub struct Domain {
        /// Name.
        pub name: LvString,
        /// UUID (what the daemon looks the domain up by).
        pub uuid: Uuid,
        /// Runtime id, -1 when inactive.
        pub id: i32,
    }
}

xdr_struct! {
    /// `remote_nonnull_network`.
    pub struct Network {
        /// Name.
        pub name: LvString,
        /// UUID.
        pub uuid: Uuid,
    }
}

xdr_struct! {
    /// `remote_nonnull_nwfilter`.
    pub struct NwFilter {
        /// Name.
        pub name: LvString,
        /// UUID.
        pub uuid: Uuid,
    }
}

xdr_struct! {
    /// `remote_nonnull_interface`.
    pub struct Interface {
        /// Name.
        pub name: LvString,
        /// MAC address.
        pub mac: LvString,
    }
}

xdr_struct! {
    /// `remote_nonnull_storage_pool`. The daemon finds pools by UUID.
    pub struct StoragePool {
        /// Name.
        pub name: LvString,
        /// UUID.
        pub uuid: Uuid,
    }
}

xdr_struct! {
    /// `remote_nonnull_storage_vol`. The daemon finds volumes by pool name + volume name.
    pub struct StorageVol {
        /// Pool name.
        pub pool: LvString,
        /// Volume name.
        pub name: LvString,
        /// Key (informational; usually the path).
        pub key: LvString,
    }
}

xdr_struct! {
    /// `remote_nonnull_node_device`.
    pub struct NodeDevice {
        /// Name.
        pub name: LvString,
    }
}

xdr_struct! {
    /// `remote_nonnull_secret`.
    pub struct Secret {
        /// UUID.
        pub uuid: Uuid,
        /// `virSecretUsageType`.
        pub usage_type: i32,
        /// Usage id.
        pub usage_id: LvString,
    }
}

xdr_struct! {
    /// `remote_nonnull_domain_snapshot`.
    pub struct DomainSnapshot {
        /// Snapshot name.
        pub name: LvString,
        /// Owning domain.
        pub dom: Domain,
    }
}

/// `remote_typed_param_value`: a union over `virTypedParameterType` (1..=7).
#[derive(Debug, Clone, PartialEq)]
pub enum TypedParamValue {
    /// `VIR_TYPED_PARAM_INT`.
    Int(i32),
    /// `VIR_TYPED_PARAM_UINT`.
    UInt(u32),
    /// `VIR_TYPED_PARAM_LLONG`.
    LLong(i64),
    /// `VIR_TYPED_PARAM_ULLONG`.
    ULLong(u64),
    /// `VIR_TYPED_PARAM_DOUBLE`.
    Double(f64),
    /// `VIR_TYPED_PARAM_BOOLEAN` (an int on the wire).
    Boolean(bool),
    /// `VIR_TYPED_PARAM_STRING`.
    String(LvString),
}

impl Encode for TypedParamValue {
    fn encode(&self, enc: &mut Encoder) {
        match self {
            Self::Int(v) => {
                enc.put_i32(1);
                enc.put_i32(*v);
            }
            Self::UInt(v) => {
                enc.put_i32(2);
                enc.put_u32(*v);
            }
            Self::LLong(v) => {
                enc.put_i32(3);
                enc.put_i64(*v);
            }
            Self::ULLong(v) => {
                enc.put_i32(4);
                enc.put_u64(*v);
            }
            Self::Double(v) => {
                enc.put_i32(5);
                enc.put_f64(*v);
            }
            Self::Boolean(v) => {
                enc.put_i32(6);
                enc.put_i32(i32::from(*v));
            }
            Self::String(s) => {
                enc.put_i32(7);
                s.encode(enc);
            }
        }
    }
}

impl Decode for TypedParamValue {
    const MIN_SIZE: usize = 8;
    fn decode(dec: &mut Decoder) -> Result<Self, DecodeError> {
        Ok(match dec.i32()? {
            1 => Self::Int(dec.i32()?),
            2 => Self::UInt(dec.u32()?),
            3 => Self::LLong(dec.i64()?),
            4 => Self::ULLong(dec.u64()?),
            5 => Self::Double(dec.f64()?),
            6 => Self::Boolean(dec.i32()? != 0),
            7 => Self::String(LvString::decode(dec)?),
            v => return Err(DecodeError::InvalidEnum { what: "typed parameter type", value: v.into() }),
        })
    }
}

xdr_struct! {
    /// `remote_typed_param`: a named typed value.
    pub struct TypedParam {
        /// Field name (`VIR_TYPED_PARAM_FIELD_LENGTH` is 80 on the C side).
        pub field: LvString,
        /// Value.
        pub value: TypedParamValue,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uuid_text_roundtrip() {
        let u: Uuid = "60d30d54-7014-447f-868e-9524694aae63".parse().unwrap();
        assert_eq!(u.to_string(), "60d30d54-7014-447f-868e-9524694aae63");
        assert_eq!(u.0[0], 0x60);
        assert!("60d30d54".parse::<Uuid>().is_err());
        assert!("zzd30d54-7014-447f-868e-9524694aae63".parse::<Uuid>().is_err());
    }
}
