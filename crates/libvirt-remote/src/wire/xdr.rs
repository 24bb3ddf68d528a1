//! XDR (RFC 4506) as libvirt uses it, bounded and zero-copy.
//!
//! Why not `xdr-codec`: it sizes `Vec::with_capacity(len)` from the untrusted length word
//! before checking that the input holds that many bytes, requires UTF-8 for strings although
//! libvirt strings are bytes, and its error-chain error type is declared `Sync` by hand
//! without the compiler's check. See docs/decisions.md ("XDR") for the failing case.
//!
//! Rules enforced here:
//! * every variable-length item is checked against its protocol limit **and** against the
//!   bytes left in the input before anything is allocated ([`Decoder::array_len`]), and
//!   room is reserved for at most [`PREALLOC_MAX`] bytes of elements ahead of decoding them;
//! * strings and opaques are slices of the input [`Bytes`] (no copy);
//! * rpcgen's `char`/`short` are 4-byte integers, like every other int;
//! * the encoder records the first error and keeps going ("sticky"), so encode impls stay
//!   infallible and [`Encoder::finish`] reports it once.

use std::fmt;

#[doc(inline)]
pub use crate::__xdr_struct as xdr_struct;

use bytes::{BufMut, Bytes, BytesMut};

/// `REMOTE_STRING_MAX`: the longest `remote_nonnull_string` (4 MiB).
pub const STRING_MAX: usize = 4_194_304;

/// Why some bytes could not be decoded. Offsets are relative to the decoded buffer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DecodeError {
    /// The input ended inside an item.
    #[error("truncated: {needed} bytes needed at offset {offset}, {available} available")]
    Truncated {
        /// Where the item starts.
        offset: usize,
        /// Bytes the item needs.
        needed: usize,
        /// Bytes left in the input.
        available: usize,
    },
    /// A length word exceeds the field's protocol limit or what the input can hold.
    #[error("length {len} at offset {offset} exceeds the limit {max}")]
    TooLong {
        /// Where the length word starts.
        offset: usize,
        /// The length (or element count) claimed.
        len: usize,
        /// The limit it broke.
        max: usize,
    },
    /// A boolean or optional-pointer discriminant other than 0 or 1.
    #[error("invalid discriminant {value} at offset {offset} (want 0 or 1)")]
    InvalidDiscriminant {
        /// Where it starts.
        offset: usize,
        /// The value found.
        value: u32,
    },
    /// An enum or union discriminant with no known meaning.
    #[error("invalid {what} value {value}")]
    InvalidEnum {
        /// The type being decoded.
        what: &'static str,
        /// The value found.
        value: i64,
    },
    /// Bytes were left over after the whole value was decoded.
    #[error("{remaining} trailing bytes after {what}")]
    TrailingBytes {
        /// The type that was decoded.
        what: &'static str,
        /// Bytes left over.
        remaining: usize,
    },
}

/// Why a value could not be encoded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum EncodeError {
    /// A string, opaque or array is longer than its protocol limit.
    #[error("length {len} exceeds the protocol limit {max}")]
    TooLong {
        /// The length given.
        len: usize,
        /// The limit.
        max: usize,
    },
    /// A value does not fit the narrower integer its field travels as (`name: Type as Wire`
    /// in [`xdr_struct!`](crate::wire::xdr::xdr_struct)).
    #[error("{value:#x} does not fit the field's {wire}")]
    DoesNotFit {
        /// The value.
        value: u64,
        /// The field's wire type.
        wire: &'static str,
    },
}

/// Types that have an XDR encoding.
pub trait Encode {
    /// Append `self` to `enc`. Limit violations are recorded in the encoder.
    fn encode(&self, enc: &mut Encoder);
}

/// Types that can be decoded from XDR.
pub trait Decode: Sized {
    /// The fewest bytes any encoding of this type takes. Used to refuse element counts the
    /// input cannot possibly hold before allocating a vector for them.
    const MIN_SIZE: usize;
    /// Decode one value from `dec`.
    fn decode(dec: &mut Decoder) -> Result<Self, DecodeError>;
}

/// Variable-length types whose limit is given by the field they sit in.
pub trait EncodeBounded {
    /// Append `self`, refusing lengths above `max`.
    fn encode_bounded(&self, enc: &mut Encoder, max: usize);
}

/// Variable-length types whose limit is given by the field they sit in.
pub trait DecodeBounded: Sized {
    /// Decode, refusing lengths above `max` (and above what the input holds).
    fn decode_bounded(dec: &mut Decoder, max: usize) -> Result<Self, DecodeError>;
}

/// Appends XDR to a [`BytesMut`]. The first limit violation is kept and reported by
/// [`Encoder::finish`]; later writes still happen so offsets stay meaningful.
#[derive(Debug)]
pub struct Encoder<'a> {
    buf: &'a mut BytesMut,
    error: Option<EncodeError>,
}

impl<'a> Encoder<'a> {
    /// Start appending to `buf`.
    pub fn new(buf: &'a mut BytesMut) -> Self {
        Self { buf, error: None }
    }

    /// The first error seen, if any.
    pub fn finish(self) -> Result<(), EncodeError> {
        self.error.map_or(Ok(()), Err)
    }

    /// Bytes written so far to the underlying buffer (including what was there before).
    pub fn len(&self) -> usize {
        self.buf.len()
    }

    /// True when the underlying buffer is empty.
    pub fn is_empty(&self) -> bool {
        self.buf.is_empty()
    }

    fn fail(&mut self, e: EncodeError) {
        if self.error.is_none() {
            self.error = Some(e);
        }
    }

    /// `unsigned int`.
    pub fn put_u32(&mut self, v: u32) {
        self.buf.put_u32(v);
    }

    /// `int` (also rpcgen `char`, `short`).
    pub fn put_i32(&mut self, v: i32) {
        self.buf.put_i32(v);
    }

    /// `unsigned hyper`.
    pub fn put_u64(&mut self, v: u64) {
        self.buf.put_u64(v);
    }

    /// `hyper`.
    pub fn put_i64(&mut self, v: i64) {
        self.buf.put_i64(v);
    }

    /// `double`.
    pub fn put_f64(&mut self, v: f64) {
        self.buf.put_f64(v);
    }

    /// `bool`.
    pub fn put_bool(&mut self, v: bool) {
        self.buf.put_u32(u32::from(v));
    }

    /// Fixed-length opaque (`opaque x[N]`): the bytes, padded, no length word.
    pub fn put_fixed_opaque(&mut self, data: &[u8]) {
        self.buf.put_slice(data);
        self.pad(data.len());
    }

    /// Variable-length opaque or string (`opaque x<max>`, `string x<max>`).
    pub fn put_opaque(&mut self, data: &[u8], max: usize) {
        if data.len() > max {
            self.fail(EncodeError::TooLong {
                len: data.len(),
                max,
            });
        }
        self.array_len(data.len(), max);
        self.put_fixed_opaque(data);
    }

    /// A length word for a counted array, checked against `max`.
    pub fn array_len(&mut self, len: usize, max: usize) {
        match u32::try_from(len) {
            Ok(n) if len <= max => self.buf.put_u32(n),
            _ => {
                self.fail(EncodeError::TooLong { len, max });
                self.buf.put_u32(u32::MAX);
            }
        }
    }

    fn pad(&mut self, len: usize) {
        let pad = (4 - len % 4) % 4;
        self.buf.put_bytes(0, pad);
    }
}

/// Reads XDR from a [`Bytes`]; strings and opaques come out as slices of it.
#[derive(Clone)]
pub struct Decoder {
    buf: Bytes,
    pos: usize,
    normalized: bool,
}

impl fmt::Debug for Decoder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Decoder")
            .field("len", &self.buf.len())
            .field("pos", &self.pos)
            .field("normalized", &self.normalized)
            .finish()
    }
}

impl Decoder {
    /// Decode from `buf`.
    pub fn new(buf: Bytes) -> Self {
        Self {
            buf,
            pos: 0,
            normalized: false,
        }
    }

    /// Whether a value decoded so far accepted a non-canonical encoding (see
    /// [`mark_normalized`](Self::mark_normalized)). While it is false, re-encoding what was
    /// decoded reproduces the input bytes, except that padding comes out as zeros.
    pub fn normalized(&self) -> bool {
        self.normalized
    }

    /// Record that a decoder accepted a value in a form its encoder would not write (a
    /// typed-parameter boolean other than 0 or 1, an rpcgen char outside the sign-extended
    /// byte range), so re-encoding will not reproduce the input.
    pub fn mark_normalized(&mut self) {
        self.normalized = true;
    }

    /// Bytes consumed so far.
    pub fn position(&self) -> usize {
        self.pos
    }

    /// Bytes not yet consumed.
    pub fn remaining(&self) -> usize {
        self.buf.len() - self.pos
    }

    /// Fail unless every byte was consumed (`what` names the type for the error).
    pub fn finish(&self, what: &'static str) -> Result<(), DecodeError> {
        match self.remaining() {
            0 => Ok(()),
            remaining => Err(DecodeError::TrailingBytes { what, remaining }),
        }
    }

    fn take(&mut self, n: usize) -> Result<&[u8], DecodeError> {
        if self.remaining() < n {
            return Err(DecodeError::Truncated {
                offset: self.pos,
                needed: n,
                available: self.remaining(),
            });
        }
        let s = &self.buf[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N], DecodeError> {
        let mut a = [0u8; N];
        a.copy_from_slice(self.take(N)?);
        Ok(a)
    }

    /// `unsigned int`.
    pub fn u32(&mut self) -> Result<u32, DecodeError> {
        self.array().map(u32::from_be_bytes)
    }

    /// `int` (also rpcgen `char`, `short`).
    pub fn i32(&mut self) -> Result<i32, DecodeError> {
        self.array().map(i32::from_be_bytes)
    }

    /// `unsigned hyper`.
    pub fn u64(&mut self) -> Result<u64, DecodeError> {
        self.array().map(u64::from_be_bytes)
    }

    /// `hyper`.
    pub fn i64(&mut self) -> Result<i64, DecodeError> {
        self.array().map(i64::from_be_bytes)
    }

    /// `double`.
    pub fn f64(&mut self) -> Result<f64, DecodeError> {
        self.array().map(f64::from_be_bytes)
    }

    /// `bool`, or the discriminant of an optional pointer: strictly 0 or 1.
    pub fn bool(&mut self) -> Result<bool, DecodeError> {
        let offset = self.pos;
        match self.u32()? {
            0 => Ok(false),
            1 => Ok(true),
            value => Err(DecodeError::InvalidDiscriminant { offset, value }),
        }
    }

    /// An element count, checked against the field limit `max` and against the input: `len`
    /// elements of at least `min_size` bytes each must fit in what is left. Call this before
    /// allocating room for the elements.
    pub fn array_len(&mut self, max: usize, min_size: usize) -> Result<usize, DecodeError> {
        let offset = self.pos;
        let len = self.u32()? as usize;
        let fits = len
            .checked_mul(min_size)
            .is_some_and(|b| b <= self.remaining());
        if len > max || !fits {
            let max = max.min(self.remaining().checked_div(min_size).unwrap_or(usize::MAX));
            return Err(DecodeError::TooLong { offset, len, max });
        }
        Ok(len)
    }

    /// Fixed-length opaque of `n` bytes (plus padding), as a slice of the input.
    pub fn fixed_opaque(&mut self, n: usize) -> Result<Bytes, DecodeError> {
        let padded = n.next_multiple_of(4);
        let offset = self.pos;
        if self.remaining() < padded {
            return Err(DecodeError::Truncated {
                offset,
                needed: padded,
                available: self.remaining(),
            });
        }
        self.pos += padded;
        Ok(self.buf.slice(offset..offset + n))
    }

    /// Variable-length opaque or string of at most `max` bytes, as a slice of the input.
    pub fn opaque(&mut self, max: usize) -> Result<Bytes, DecodeError> {
        let len = self.array_len(max, 1)?;
        self.fixed_opaque(len)
    }
}

// ---- primitive impls -------------------------------------------------------------------

macro_rules! prim {
    ($t:ty, $put:ident, $get:ident, $size:expr) => {
        impl Encode for $t {
            fn encode(&self, enc: &mut Encoder) {
                enc.$put(*self);
            }
        }
        impl Decode for $t {
            const MIN_SIZE: usize = $size;
            fn decode(dec: &mut Decoder) -> Result<Self, DecodeError> {
                dec.$get()
            }
        }
    };
}

prim!(u32, put_u32, u32, 4);
prim!(i32, put_i32, i32, 4);
prim!(u64, put_u64, u64, 8);
prim!(i64, put_i64, i64, 8);
prim!(f64, put_f64, f64, 8);
prim!(bool, put_bool, bool, 4);

impl Encode for () {
    fn encode(&self, _: &mut Encoder) {}
}

impl Decode for () {
    const MIN_SIZE: usize = 0;
    fn decode(_: &mut Decoder) -> Result<Self, DecodeError> {
        Ok(())
    }
}

/// XDR optional pointer (`T *x`): a 0/1 discriminant, then the value when 1.
impl<T: Encode> Encode for Option<T> {
    fn encode(&self, enc: &mut Encoder) {
        match self {
            None => enc.put_bool(false),
            Some(v) => {
                enc.put_bool(true);
                v.encode(enc);
            }
        }
    }
}

impl<T: Decode> Decode for Option<T> {
    const MIN_SIZE: usize = 4;
    fn decode(dec: &mut Decoder) -> Result<Self, DecodeError> {
        if dec.bool()? {
            T::decode(dec).map(Some)
        } else {
            Ok(None)
        }
    }
}

impl<T: EncodeBounded> EncodeBounded for Option<T> {
    fn encode_bounded(&self, enc: &mut Encoder, max: usize) {
        match self {
            None => enc.put_bool(false),
            Some(v) => {
                enc.put_bool(true);
                v.encode_bounded(enc, max);
            }
        }
    }
}

impl<T: DecodeBounded> DecodeBounded for Option<T> {
    fn decode_bounded(dec: &mut Decoder, max: usize) -> Result<Self, DecodeError> {
        if dec.bool()? {
            T::decode_bounded(dec, max).map(Some)
        } else {
            Ok(None)
        }
    }
}

/// Counted array `T x<max>`.
impl<T: Encode> EncodeBounded for Vec<T> {
    fn encode_bounded(&self, enc: &mut Encoder, max: usize) {
        enc.array_len(self.len(), max);
        for v in self {
            v.encode(enc);
        }
    }
}

/// The most memory reserved ahead of decoding a counted array's elements. A count is checked
/// against the bytes left before anything is allocated, but an element may take many more
/// bytes in memory than on the wire (a string: 24 against 4): reserving `count` elements at
/// once could take several times the frame for elements a hostile frame never delivers. The
/// vector grows past this as elements actually decode.
pub const PREALLOC_MAX: usize = 64 << 10;

/// An empty vector with room for `count` elements, or for [`PREALLOC_MAX`] bytes of them if
/// that is fewer.
pub fn vec_for_count<T>(count: usize) -> Vec<T> {
    Vec::with_capacity(count.min(PREALLOC_MAX / size_of::<T>().max(1)))
}

impl<T: Decode> DecodeBounded for Vec<T> {
    fn decode_bounded(dec: &mut Decoder, max: usize) -> Result<Self, DecodeError> {
        // MIN_SIZE 0 would let a tiny frame claim a huge count; every wire type takes >= 4.
        let len = dec.array_len(max, T::MIN_SIZE.max(4))?;
        let mut v = vec_for_count(len);
        for _ in 0..len {
            v.push(T::decode(dec)?);
        }
        Ok(v)
    }
}

/// Variable-length opaque `opaque x<max>`.
impl EncodeBounded for Bytes {
    fn encode_bounded(&self, enc: &mut Encoder, max: usize) {
        enc.put_opaque(self, max);
    }
}

impl DecodeBounded for Bytes {
    fn decode_bounded(dec: &mut Decoder, max: usize) -> Result<Self, DecodeError> {
        dec.opaque(max)
    }
}

/// Bytes that are already XDR (raw call arguments), written as they are.
#[derive(Debug, Clone, Copy)]
pub struct Preencoded<'a>(pub &'a [u8]);

impl Encode for Preencoded<'_> {
    fn encode(&self, enc: &mut Encoder) {
        enc.put_fixed_opaque(self.0);
    }
}

/// Fixed-length opaque `opaque x[N]` (e.g. a UUID).
impl<const N: usize> Encode for [u8; N] {
    fn encode(&self, enc: &mut Encoder) {
        enc.put_fixed_opaque(self);
    }
}

impl<const N: usize> Decode for [u8; N] {
    const MIN_SIZE: usize = N.next_multiple_of(4);
    fn decode(dec: &mut Decoder) -> Result<Self, DecodeError> {
        let b = dec.fixed_opaque(N)?;
        let mut a = [0u8; N];
        a.copy_from_slice(&b);
        Ok(a)
    }
}

// ---- strings ---------------------------------------------------------------------------

/// A libvirt string: bytes on the wire, almost always UTF-8 but never required to be.
///
/// Decoding never fails on encoding and never copies (it is a slice of the received frame);
/// use [`LvString::to_str`] for checked text or the lossy `Display` for messages.
#[derive(Clone, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct LvString(Bytes);

impl LvString {
    /// Wrap raw bytes.
    pub fn from_bytes(b: impl Into<Bytes>) -> Self {
        Self(b.into())
    }

    /// A string from a `'static` literal, without allocating.
    pub const fn from_static(s: &'static str) -> Self {
        Self(Bytes::from_static(s.as_bytes()))
    }

    /// The raw bytes.
    pub fn as_bytes(&self) -> &[u8] {
        &self.0
    }

    /// The raw bytes, shared.
    pub fn bytes(&self) -> &Bytes {
        &self.0
    }

    /// The text, if it is UTF-8.
    pub fn to_str(&self) -> Result<&str, std::str::Utf8Error> {
        std::str::from_utf8(&self.0)
    }

    /// The text with invalid UTF-8 replaced by U+FFFD.
    pub fn to_string_lossy(&self) -> std::borrow::Cow<'_, str> {
        String::from_utf8_lossy(&self.0)
    }

    /// Length in bytes.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// True for the empty string.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// Lossy text, honouring width, fill, alignment and precision like `str` (`{:<20}` pads).
impl fmt::Display for LvString {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(&self.to_string_lossy())
    }
}

impl fmt::Debug for LvString {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&*self.to_string_lossy(), f)
    }
}

impl From<&str> for LvString {
    fn from(s: &str) -> Self {
        Self(Bytes::copy_from_slice(s.as_bytes()))
    }
}

impl From<String> for LvString {
    fn from(s: String) -> Self {
        Self(Bytes::from(s))
    }
}

impl From<&String> for LvString {
    fn from(s: &String) -> Self {
        Self::from(s.as_str())
    }
}

impl PartialEq<str> for LvString {
    fn eq(&self, other: &str) -> bool {
        self.0 == other.as_bytes()
    }
}

impl PartialEq<&str> for LvString {
    fn eq(&self, other: &&str) -> bool {
        self.0 == other.as_bytes()
    }
}

/// `remote_nonnull_string`: limited to [`STRING_MAX`] unless the field says otherwise.
impl Encode for LvString {
    fn encode(&self, enc: &mut Encoder) {
        enc.put_opaque(&self.0, STRING_MAX);
    }
}

impl Decode for LvString {
    const MIN_SIZE: usize = 4;
    fn decode(dec: &mut Decoder) -> Result<Self, DecodeError> {
        dec.opaque(STRING_MAX).map(Self)
    }
}

impl EncodeBounded for LvString {
    fn encode_bounded(&self, enc: &mut Encoder, max: usize) {
        enc.put_opaque(&self.0, max);
    }
}

impl DecodeBounded for LvString {
    fn decode_bounded(dec: &mut Decoder, max: usize) -> Result<Self, DecodeError> {
        dec.opaque(max).map(Self)
    }
}

// ---- helpers ----------------------------------------------------------------------------

/// Encode `v` (a flag family, or any value with a `u64` form) as the narrower integer `W`:
/// a field declared `name: Type as W` in [`xdr_struct!`](crate::wire::xdr::xdr_struct). A value that
/// does not fit is recorded as [`EncodeError::DoesNotFit`] (the call is not sent).
pub fn encode_as<T, W>(v: &T, enc: &mut Encoder)
where
    T: Copy + Into<u64>,
    W: TryFrom<u64> + Encode + Default,
{
    let value: u64 = (*v).into();
    if let Ok(w) = W::try_from(value) {
        w.encode(enc);
    } else {
        enc.fail(EncodeError::DoesNotFit {
            value,
            wire: std::any::type_name::<W>(),
        });
        // Keep the layout (the error already refuses the whole message).
        W::default().encode(enc);
    }
}

/// Decode the integer `W` into `T` (the other direction of [`encode_as`]; every bit kept).
pub fn decode_as<T, W>(dec: &mut Decoder) -> Result<T, DecodeError>
where
    T: From<u64>,
    W: Decode + Into<u64>,
{
    W::decode(dec).map(|w| T::from(w.into()))
}

/// Encode `v` into a fresh buffer.
pub fn to_bytes<T: Encode + ?Sized>(v: &T) -> Result<Bytes, EncodeError> {
    let mut buf = BytesMut::new();
    let mut enc = Encoder::new(&mut buf);
    v.encode(&mut enc);
    enc.finish()?;
    Ok(buf.freeze())
}

/// Decode exactly one `T` from `buf`; trailing bytes are an error.
pub fn from_bytes<T: Decode>(buf: Bytes) -> Result<T, DecodeError> {
    let mut dec = Decoder::new(buf);
    let v = T::decode(&mut dec)?;
    dec.finish(std::any::type_name::<T>())?;
    Ok(v)
}

/// Field `N` (counting from 0 in declaration order) of an [`xdr_struct!`](crate::wire::xdr::xdr_struct)
/// struct has type `Ty`: what lets the procedure table's generated handle methods take and
/// return exactly the types the wire structs declare, without restating them.
pub trait Field<const N: usize> {
    /// The field's type.
    type Ty;
}

/// The type of field `N` of struct `S` (see [`Field`]).
pub type FieldType<S, const N: usize> = <S as Field<N>>::Ty;

/// Declares an XDR struct: fields are encoded in order. A field written `name: Type [MAX]` is
/// a variable-length item (string, opaque, array, or an optional one) limited to `MAX`. A
/// field written `name: Type as Wire` holds a `Type` (a flag family) that travels as the
/// narrower integer `Wire` (the migration flags, `u64` in the v1–v3 calls, are a `u32` in the
/// `*_PARAMS` calls): bits that do not fit are an [`EncodeError::DoesNotFit`], nothing is
/// dropped silently ([`encode_as`], [`decode_as`]).
///
/// ```
/// use libvirt_remote::wire::xdr::xdr_struct;
/// use libvirt_remote::wire::xdr::{self, LvString};
/// xdr_struct! {
///     /// Example.
///     pub struct Pair {
///         /// A name.
///         pub name: LvString,
///         /// Up to 8 numbers.
///         pub nums: Vec<u32> [8],
///     }
/// }
/// let p = Pair { name: "a".into(), nums: vec![1, 2] };
/// let b = xdr::to_bytes(&p).unwrap();
/// assert_eq!(xdr::from_bytes::<Pair>(b).unwrap(), p);
/// ```
#[doc(hidden)]
#[macro_export]
macro_rules! __xdr_struct {
    (
        $(#[$meta:meta])*
        pub struct $name:ident { $($body:tt)* }
    ) => {
        $crate::__xdr_struct!(@struct [$(#[$meta])*] $name [] { $($body)* });
    };
    // One type parameter with a default: a layout shared by procedures whose `flags` field
    // belongs to different flag families (`DomainFlagsArgs<DomainDestroyFlags>`, …).
    (
        $(#[$meta:meta])*
        pub struct $name:ident<$G:ident = $D:ty> { $($body:tt)* }
    ) => {
        $crate::__xdr_struct!(@struct [$(#[$meta])*] $name [$G = $D] { $($body)* });
    };
    // The struct, its `Encode`/`Decode` and its `Field<N>` impls; `[G = D]`: the type
    // parameter and its default, if any.
    (
        @struct [$(#[$meta:meta])*] $name:ident [$($G:ident = $D:ty)?] {
            $(
                $(#[$fmeta:meta])*
                pub $field:ident : $ty:ty $([$max:expr])? $(as $wire:ty)?
            ),* $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq)]
        pub struct $name<$($G = $D)?> {
            $(
                $(#[$fmeta])*
                pub $field: $ty,
            )*
        }

        impl<$($G: $crate::wire::xdr::Encode)?> $crate::wire::xdr::Encode for $name<$($G)?> {
            #[allow(unused_variables)]
            fn encode(&self, enc: &mut $crate::wire::xdr::Encoder) {
                $( $crate::__xdr_struct!(@enc self.$field, enc $(, $max)? $(; $wire)?); )*
            }
        }

        impl<$($G: $crate::wire::xdr::Decode)?> $crate::wire::xdr::Decode for $name<$($G)?> {
            const MIN_SIZE: usize = 0 $( + $crate::__xdr_struct!(@min $ty $(, $max)? $(; $wire)?) )*;
            #[allow(unused_variables)]
            fn decode(
                dec: &mut $crate::wire::xdr::Decoder,
            ) -> ::core::result::Result<Self, $crate::wire::xdr::DecodeError> {
                Ok(Self {
                    $( $field: $crate::__xdr_struct!(@dec $ty, dec $(, $max)? $(; $wire)?), )*
                })
            }
        }

        $crate::__xdr_struct!(@fields $name [$($G)?] [] $($ty,)*);
    };
    // `Field<N>` per field, counting in unary; `[G]`: the struct's type parameter, if any.
    (@fields $name:ident [$($g:ident)?] [$($c:tt)*]) => {};
    (@fields $name:ident [$($g:ident)?] [$($c:tt)*] $ty:ty, $($rest:tt)*) => {
        #[allow(unused_braces)]
        impl<$($g)?> $crate::wire::xdr::Field<{ 0 $(+ $c)* }> for $name<$($g)?> {
            type Ty = $ty;
        }
        $crate::__xdr_struct!(@fields $name [$($g)?] [$($c)* 1] $($rest)*);
    };
    (@enc $v:expr, $enc:ident) => { $crate::wire::xdr::Encode::encode(&$v, $enc) };
    (@enc $v:expr, $enc:ident, $max:expr) => {
        $crate::wire::xdr::EncodeBounded::encode_bounded(&$v, $enc, $max)
    };
    (@enc $v:expr, $enc:ident; $wire:ty) => { $crate::wire::xdr::encode_as::<_, $wire>(&$v, $enc) };
    (@dec $ty:ty, $dec:ident) => { <$ty as $crate::wire::xdr::Decode>::decode($dec)? };
    (@dec $ty:ty, $dec:ident; $wire:ty) => { $crate::wire::xdr::decode_as::<$ty, $wire>($dec)? };
    (@dec $ty:ty, $dec:ident, $max:expr) => {
        <$ty as $crate::wire::xdr::DecodeBounded>::decode_bounded($dec, $max)?
    };
    (@min $ty:ty) => { <$ty as $crate::wire::xdr::Decode>::MIN_SIZE };
    (@min $ty:ty; $wire:ty) => { <$wire as $crate::wire::xdr::Decode>::MIN_SIZE };
    // Every bounded item starts with a 4-byte length or discriminant.
    (@min $ty:ty, $max:expr) => { 4 };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_honours_width_fill_alignment_and_precision() {
        let s = LvString::from("vm1");
        assert_eq!(format!("{s}"), "vm1");
        assert_eq!(format!("{s:<6}|"), "vm1   |");
        assert_eq!(format!("{s:>6}|"), "   vm1|");
        assert_eq!(format!("{s:^7}|"), "  vm1  |");
        assert_eq!(format!("{s:*<5}"), "vm1**");
        assert_eq!(format!("{s:.2}"), "vm");
        assert_eq!(format!("{s:<2}"), "vm1", "width never truncates");
        // Invalid UTF-8 pads by characters of its lossy text, like `str`.
        let bad = LvString::from_bytes(&b"a\xffb"[..]);
        assert_eq!(format!("{bad:<5}|"), "a\u{fffd}b  |");
    }

    #[test]
    fn string_roundtrip_pads_to_four() {
        let s = LvString::from("probe");
        let b = to_bytes(&s).unwrap();
        assert_eq!(&b[..], b"\x00\x00\x00\x05probe\x00\x00\x00");
        assert_eq!(from_bytes::<LvString>(b).unwrap(), s);
    }

    #[test]
    fn non_utf8_string_decodes_losslessly() {
        let b = Bytes::from_static(b"\x00\x00\x00\x02\xff\xfe\x00\x00");
        let s: LvString = from_bytes(b).unwrap();
        assert_eq!(s.as_bytes(), b"\xff\xfe");
        assert!(s.to_str().is_err());
        assert_eq!(s.to_string(), "\u{fffd}\u{fffd}");
    }

    #[test]
    fn huge_length_is_refused_before_allocation() {
        // 16 bytes of input claiming a 4 MiB string / a 16384-element array.
        let b = Bytes::from_static(b"\x00\x40\x00\x00abcdabcdabcd");
        let err = from_bytes::<LvString>(b.clone()).unwrap_err();
        assert!(
            matches!(
                err,
                DecodeError::TooLong {
                    len: 4_194_304,
                    max: 12,
                    ..
                }
            ),
            "{err}"
        );
        let mut d = Decoder::new(Bytes::from_static(b"\x00\x00\x40\x00abcd"));
        let err = <Vec<u64>>::decode_bounded(&mut d, 16384).unwrap_err();
        assert!(
            matches!(
                err,
                DecodeError::TooLong {
                    len: 16384,
                    max: 0,
                    ..
                }
            ),
            "{err}"
        );
    }

    #[test]
    fn limit_is_enforced_both_ways() {
        let v = vec![1u32; 3];
        let mut buf = BytesMut::new();
        let mut enc = Encoder::new(&mut buf);
        v.encode_bounded(&mut enc, 2);
        assert_eq!(enc.finish(), Err(EncodeError::TooLong { len: 3, max: 2 }));
        let b =
            Bytes::from_static(b"\x00\x00\x00\x03\x00\x00\x00\x01\x00\x00\x00\x01\x00\x00\x00\x01");
        let mut d = Decoder::new(b);
        assert!(matches!(
            <Vec<u32>>::decode_bounded(&mut d, 2),
            Err(DecodeError::TooLong { len: 3, max: 2, .. })
        ));
    }

    #[test]
    fn optional_discriminant_is_strict() {
        let b = Bytes::from_static(b"\x01\x00\x00\x00");
        assert!(matches!(
            from_bytes::<Option<u32>>(b),
            Err(DecodeError::InvalidDiscriminant {
                value: 0x0100_0000,
                ..
            })
        ));
    }

    #[test]
    fn trailing_bytes_are_reported() {
        let b = Bytes::from_static(b"\x00\x00\x00\x01\x00");
        assert!(matches!(
            from_bytes::<u32>(b),
            Err(DecodeError::TrailingBytes { remaining: 1, .. })
        ));
    }
}
