//! Types shared by many procedures: object handles, UUIDs, typed parameters.

use std::fmt;
use std::str::FromStr;

use crate::wire::xdr::xdr_struct;
use crate::wire::xdr::{
    Decode, DecodeBounded, DecodeError, Decoder, Encode, EncodeBounded, Encoder, LvString,
    vec_for_count,
};

/// A typed integer of the protocol: a flag family ([`flag_set!`](crate::proto::flags::flag_set)) or an open
/// set of named values ([`names`](crate::proto::names)). It stands in an argument, reply or
/// event struct in place of the bare integer, encodes exactly as that integer and converts
/// from and to it; layers above take and return it as it is.
pub trait TypedInt: Copy + Encode + Decode + Send + Sync + 'static {
    /// The integer on the wire.
    type Int;
}

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
    pub struct NonnullDomain {
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
    pub struct NonnullNetwork {
        /// Name.
        pub name: LvString,
        /// UUID.
        pub uuid: Uuid,
    }
}

xdr_struct! {
    /// `remote_nonnull_nwfilter`.
    pub struct NonnullNwFilter {
        /// Name.
        pub name: LvString,
        /// UUID.
        pub uuid: Uuid,
    }
}

xdr_struct! {
    /// `remote_nonnull_interface`.
    pub struct NonnullInterface {
        /// Name.
        pub name: LvString,
        /// MAC address.
        pub mac: LvString,
    }
}

xdr_struct! {
    /// `remote_nonnull_storage_pool`. The daemon finds pools by UUID.
    pub struct NonnullStoragePool {
        /// Name.
        pub name: LvString,
        /// UUID.
        pub uuid: Uuid,
    }
}

xdr_struct! {
    /// `remote_nonnull_storage_vol`. The daemon finds volumes by pool name + volume name.
    pub struct NonnullStorageVol {
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
    pub struct NonnullNodeDevice {
        /// Name.
        pub name: LvString,
    }
}

xdr_struct! {
    /// `remote_nonnull_secret`.
    pub struct NonnullSecret {
        /// UUID.
        pub uuid: Uuid,
        /// `virSecretUsageType`.
        pub usage_type: crate::proto::names::SecretUsageType,
        /// Usage id.
        pub usage_id: LvString,
    }
}

xdr_struct! {
    /// `remote_nonnull_domain_snapshot`.
    pub struct NonnullDomainSnapshot {
        /// Snapshot name.
        pub name: LvString,
        /// Owning domain.
        pub dom: NonnullDomain,
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
            6 => {
                let v = dec.i32()?;
                if v != 0 && v != 1 {
                    dec.mark_normalized();
                }
                Self::Boolean(v != 0)
            }
            7 => Self::String(LvString::decode(dec)?),
            v => {
                return Err(DecodeError::InvalidEnum {
                    what: "typed parameter type",
                    value: v.into(),
                });
            }
        })
    }
}

/// `virTypedParameterFlags`: bits the typed-parameter getters take besides their own flags.
pub mod typed_param_flags {
    /// `VIR_TYPED_PARAM_STRING_OKAY`: the caller accepts string parameters. Without it the
    /// daemon leaves string parameters out of a getter's answer (libvirt's client library
    /// sets it for you; a caller of this crate sets it itself).
    pub const STRING_OKAY: u32 = 4;
}

crate::proto::flags::flag_set! {
    /// `virTypedParameterFlags` as the flags of the getters that take nothing else
    /// (`DomainBlockStatsFlags`, `DomainGetCpuStats`, `NodeGetMemoryParameters`); the
    /// generated methods add [`STRING_OKAY`](Self::STRING_OKAY) as libvirt.so does.
    pub struct TypedParameterFlags: u32 {
        /// `VIR_TYPED_PARAM_STRING_OKAY`: string parameters are welcome.
        const STRING_OKAY = typed_param_flags::STRING_OKAY;
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

xdr_struct! {
    /// `remote_nonnull_domain_checkpoint`.
    pub struct NonnullDomainCheckpoint {
        /// Checkpoint name.
        pub name: LvString,
        /// Owning domain.
        pub dom: NonnullDomain,
    }
}

xdr_struct! {
    /// `remote_nonnull_network_port`.
    pub struct NonnullNetworkPort {
        /// Owning network.
        pub net: NonnullNetwork,
        /// Port UUID.
        pub uuid: Uuid,
    }
}

xdr_struct! {
    /// `remote_nonnull_nwfilter_binding`.
    pub struct NonnullNwFilterBinding {
        /// The port device the filter is bound to.
        pub portdev: LvString,
        /// Filter name.
        pub filtername: LvString,
    }
}

/// rpcgen `char x[N]`: **each** character is a 4-byte int on the wire (`xdr_vector` of
/// `xdr_char`), so `char model[32]` takes 128 bytes. Stored as the raw bytes.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct CharArray<const N: usize>(pub [u8; N]);

impl<const N: usize> CharArray<N> {
    /// The bytes up to the first NUL, lossily as text (C strings in fixed buffers).
    pub fn to_string_lossy(&self) -> String {
        let end = self.0.iter().position(|b| *b == 0).unwrap_or(N);
        String::from_utf8_lossy(&self.0[..end]).into_owned()
    }
}

impl<const N: usize> Default for CharArray<N> {
    fn default() -> Self {
        Self([0; N])
    }
}

impl<const N: usize> fmt::Debug for CharArray<N> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "CharArray({:?})", self.to_string_lossy())
    }
}

/// The int rpcgen's `xdr_char` writes: C `char` is signed on the platforms libvirt runs on,
/// so bytes >= 0x80 are sign-extended.
fn char_to_wire(b: u8) -> i32 {
    i32::from(b as i8)
}

/// `xdr_char` keeps the low byte of the int (and the decoder notes an int that
/// [`char_to_wire`] would not write).
fn char_from_wire(dec: &mut Decoder) -> Result<u8, DecodeError> {
    let v = dec.i32()?;
    let b = v as u8;
    if char_to_wire(b) != v {
        dec.mark_normalized();
    }
    Ok(b)
}

impl<const N: usize> Encode for CharArray<N> {
    fn encode(&self, enc: &mut Encoder) {
        for b in self.0 {
            enc.put_i32(char_to_wire(b));
        }
    }
}

impl<const N: usize> Decode for CharArray<N> {
    const MIN_SIZE: usize = 4 * N;
    fn decode(dec: &mut Decoder) -> Result<Self, DecodeError> {
        let mut a = [0u8; N];
        for b in &mut a {
            *b = char_from_wire(dec)?;
        }
        Ok(Self(a))
    }
}

/// rpcgen `char x<MAX>`: a counted array of chars, each a 4-byte int on the wire (security
/// labels, SASL data). Stored as the raw bytes.
#[derive(Clone, Default, PartialEq, Eq, Hash)]
pub struct CharVec(pub Vec<u8>);

impl CharVec {
    /// The bytes up to the first NUL, lossily as text.
    pub fn to_string_lossy(&self) -> String {
        let end = self.0.iter().position(|b| *b == 0).unwrap_or(self.0.len());
        String::from_utf8_lossy(&self.0[..end]).into_owned()
    }
}

impl fmt::Debug for CharVec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "CharVec({:?})", self.to_string_lossy())
    }
}

impl EncodeBounded for CharVec {
    fn encode_bounded(&self, enc: &mut Encoder, max: usize) {
        enc.array_len(self.0.len(), max);
        for b in &self.0 {
            enc.put_i32(char_to_wire(*b));
        }
    }
}

impl DecodeBounded for CharVec {
    fn decode_bounded(dec: &mut Decoder, max: usize) -> Result<Self, DecodeError> {
        let len = dec.array_len(max, 4)?;
        let mut v = vec_for_count(len);
        for _ in 0..len {
            v.push(char_from_wire(dec)?);
        }
        Ok(Self(v))
    }
}

/// SASL payload (`char data<REMOTE_AUTH_SASL_DATA_MAX>`): 4 bytes per byte on the wire, like
/// [`CharVec`]. `Debug` shows only the length: a PLAIN response carries the password, a SCRAM
/// proof is a password verifier.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct SaslData(pub Vec<u8>);

impl fmt::Debug for SaslData {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "SaslData({} bytes)", self.0.len())
    }
}

impl EncodeBounded for SaslData {
    fn encode_bounded(&self, enc: &mut Encoder, max: usize) {
        enc.array_len(self.0.len(), max);
        for b in &self.0 {
            enc.put_i32(char_to_wire(*b));
        }
    }
}

impl DecodeBounded for SaslData {
    fn decode_bounded(dec: &mut Decoder, max: usize) -> Result<Self, DecodeError> {
        CharVec::decode_bounded(dec, max).map(|c| Self(c.0))
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
        assert!(
            "zzd30d54-7014-447f-868e-9524694aae63"
                .parse::<Uuid>()
                .is_err()
        );
    }

    #[test]
    fn sasl_data_is_chars_and_never_shows_its_bytes() {
        let d = SaslData(b"\0alice\0secret123".to_vec());
        let mut buf = bytes::BytesMut::new();
        let mut enc = Encoder::new(&mut buf);
        d.encode_bounded(&mut enc, 64);
        enc.finish().unwrap();
        assert_eq!(buf.len(), 4 + 4 * d.0.len());
        assert_eq!(&buf[..12], b"\0\0\0\x10\0\0\0\0\0\0\0a");
        let mut dec = Decoder::new(buf.freeze());
        assert_eq!(SaslData::decode_bounded(&mut dec, 64).unwrap(), d);
        let shown = format!("{d:?}");
        assert!(
            !shown.contains("secret") && !shown.contains("alice"),
            "{shown}"
        );
    }

    #[test]
    fn chars_are_four_bytes_each_and_sign_extended() {
        let mut model = [0u8; 4];
        model[..2].copy_from_slice(b"x\xe9");
        let b = crate::wire::xdr::to_bytes(&CharArray(model)).unwrap();
        assert_eq!(&b[..], b"\0\0\0x\xff\xff\xff\xe9\0\0\0\0\0\0\0\0");
        let back: CharArray<4> = crate::wire::xdr::from_bytes(b).unwrap();
        assert_eq!(back.0, model);
        assert_eq!(CharArray(*b"ab\0c").to_string_lossy(), "ab");

        let mut buf = bytes::BytesMut::new();
        let mut enc = Encoder::new(&mut buf);
        CharVec(b"s0".to_vec()).encode_bounded(&mut enc, 8);
        enc.finish().unwrap();
        assert_eq!(&buf[..], b"\0\0\0\x02\0\0\0s\0\0\x000");
        let mut dec = Decoder::new(buf.freeze());
        assert_eq!(CharVec::decode_bounded(&mut dec, 8).unwrap().0, b"s0");
        let mut dec = Decoder::new(bytes::Bytes::from_static(b"\0\0\0\x09"));
        assert!(CharVec::decode_bounded(&mut dec, 8).is_err());
    }

    #[test]
    fn non_canonical_values_are_marked_normalized() {
        use bytes::Bytes;
        let decode = |b: &'static [u8]| {
            let mut dec = Decoder::new(Bytes::from_static(b));
            TypedParamValue::decode(&mut dec).unwrap();
            dec.normalized()
        };
        assert!(!decode(b"\0\0\0\x06\0\0\0\x01"), "boolean 1");
        assert!(decode(b"\0\0\0\x06\0\0\0\x02"), "boolean 2 reads as true");
        let chars = |b: &'static [u8]| {
            let mut dec = Decoder::new(Bytes::from_static(b));
            CharArray::<1>::decode(&mut dec).unwrap();
            dec.normalized()
        };
        assert!(!chars(b"\xff\xff\xff\xe9"), "sign-extended 0xe9");
        assert!(chars(b"\0\0\0\xe9"), "0xe9 not sign-extended");
        assert!(chars(b"\0\0\x01\x41"), "high bits dropped");
    }
}

xdr_struct! {
    /// `virNetStreamHole`: the payload of a `STREAM_HOLE` packet, in either direction.
    pub struct StreamHole {
        /// Bytes of the hole. Signed on the wire; a negative length is a protocol violation.
        pub length: i64,
        /// Always 0.
        pub flags: u32,
    }
}
