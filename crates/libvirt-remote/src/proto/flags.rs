//! Typed flag families: one type per libvirt `*Flags` enum, built on the `bitflags` crate.
//!
//! Each family is declared once with [`flag_set!`](crate::proto::flags::flag_set) next to the procedures
//! that take it (`ConnectListAllDomainsFlags` in [`procs::connect`](super::procs::connect),
//! `StoragePoolCreateFlags` in [`procs::storage`](super::procs::storage), …) and sits in the
//! procedure's args struct in place of a bare `u32`. A family:
//!
//! - is `Default` = empty (libvirt's 0: "the default behaviour");
//! - encodes as the integer libvirt sends (`unsigned int`, or `unsigned long` for migration);
//! - keeps bits it does not name ([`from_bits_retain`](bitflags::Flags::from_bits_retain)), so
//!   a newer daemon's or caller's flag passes through unchanged;
//! - prints readably: `Debug` as `ConnectListAllDomainsFlags(ACTIVE | PERSISTENT)`, `Display`
//!   as `ACTIVE | PERSISTENT` (unnamed bits as hex, `0x0` when empty), the text
//!   [`bitflags::parser`] reads back.
//!
//! The combinators are `bitflags`' own: `A | B`, `contains`, `insert`, `bits`, iteration.
//! `From<u32>` (and back) converts from and to the raw number for power users.

#[doc(inline)]
pub use crate::__flag_set as flag_set;

/// Declare a flag family: a `bitflags` type with the XDR encoding of its integer, readable
/// `Debug`/`Display`, `Default` = empty and conversions from and to the integer.
///
/// ```text
/// flag_set! {
///     /// `virConnectListAllDomainsFlags` for `ConnectListAllDomains`.
///     pub struct ConnectListAllDomainsFlags: u32 {
///         /// Running or paused domains.
///         const ACTIVE = 1;
///     }
/// }
/// ```
#[doc(hidden)]
#[macro_export]
macro_rules! __flag_set {
    (
        $(#[$($m:tt)*])*
        pub struct $T:ident: $int:ty {
            $( $(#[$($fm:tt)*])* const $N:ident = $v:expr; )*
        }
    ) => {
        $crate::__bitflags::bitflags! {
            $(#[$($m)*])*
            #[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
            pub struct $T: $int {
                $( $(#[$($fm)*])* const $N = $v; )*
            }
        }

        impl $crate::wire::xdr::Encode for $T {
            fn encode(&self, enc: &mut $crate::wire::xdr::Encoder) {
                $crate::wire::xdr::Encode::encode(&self.bits(), enc);
            }
        }

        impl $crate::proto::types::TypedInt for $T {
            type Int = $int;
        }

        impl $crate::wire::xdr::Decode for $T {
            const MIN_SIZE: usize = <$int as $crate::wire::xdr::Decode>::MIN_SIZE;
            fn decode(
                dec: &mut $crate::wire::xdr::Decoder,
            ) -> ::core::result::Result<Self, $crate::wire::xdr::DecodeError> {
                <$int as $crate::wire::xdr::Decode>::decode(dec).map(Self::from_bits_retain)
            }
        }

        /// `NAME | NAME | 0xunnamed`, or `0x0` when empty.
        impl ::core::fmt::Display for $T {
            fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                if self.is_empty() {
                    f.write_str("0x0")
                } else {
                    $crate::__bitflags::parser::to_writer(self, f)
                }
            }
        }

        impl ::core::fmt::Debug for $T {
            fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                write!(f, "{}({self})", stringify!($T))
            }
        }

        impl ::core::str::FromStr for $T {
            type Err = $crate::__bitflags::parser::ParseError;
            /// The `Display` form back: `ACTIVE | PERSISTENT`, hex for unnamed bits.
            fn from_str(s: &str) -> ::core::result::Result<Self, Self::Err> {
                $crate::__bitflags::parser::from_str(s)
            }
        }

        /// The raw number, every bit kept.
        impl ::core::convert::From<$int> for $T {
            fn from(bits: $int) -> Self {
                Self::from_bits_retain(bits)
            }
        }

        impl ::core::convert::From<$T> for $int {
            fn from(flags: $T) -> Self {
                flags.bits()
            }
        }
    };
}

#[cfg(test)]
mod tests {
    use crate::proto::procs::connect::ConnectListAllDomainsFlags as F;
    use crate::proto::procs::migration::DomainMigrateFlags;
    use crate::wire::xdr;

    #[test]
    fn default_is_empty_and_encodes_as_the_integer() {
        assert_eq!(F::default(), F::empty());
        assert_eq!(F::default().bits(), 0);
        let f = F::ACTIVE | F::PERSISTENT;
        assert_eq!(f.bits(), 5);
        let b = xdr::to_bytes(&f).unwrap();
        assert_eq!(&b[..], &[0, 0, 0, 5]);
        assert_eq!(xdr::from_bytes::<F>(b).unwrap(), f);
        // The migration family is an `unsigned long`: 8 bytes.
        let m = DomainMigrateFlags::LIVE | DomainMigrateFlags::PEER2PEER;
        let b = xdr::to_bytes(&m).unwrap();
        assert_eq!(&b[..], &[0, 0, 0, 0, 0, 0, 0, 3]);
        assert_eq!(xdr::from_bytes::<DomainMigrateFlags>(b).unwrap(), m);
    }

    #[test]
    fn migration_flags_travel_as_u32_in_the_params_calls() {
        use crate::proto::procs::migration::DomainMigrateConfirm3ParamsArgs as A;
        use crate::proto::types::{NonnullDomain, Uuid};
        let dom = NonnullDomain {
            name: "d".into(),
            uuid: Uuid([0; 16]),
            id: -1,
        };
        let a = |bits| A {
            dom: dom.clone(),
            params: vec![],
            cookie_in: Default::default(),
            flags: DomainMigrateFlags::from_bits_retain(bits),
            cancelled: 1,
        };
        let b = xdr::to_bytes(&a(0x8000_0021)).unwrap();
        // ... flags as 4 bytes, then `cancelled`.
        assert_eq!(&b[b.len() - 8..], &[0x80, 0, 0, 0x21, 0, 0, 0, 1]);
        assert_eq!(xdr::from_bytes::<A>(b).unwrap(), a(0x8000_0021));
        let err = xdr::to_bytes(&a(1 << 32)).unwrap_err();
        assert_eq!(
            err,
            xdr::EncodeError::DoesNotFit {
                value: 1 << 32,
                wire: "u32"
            }
        );
        assert_eq!(err.to_string(), "0x100000000 does not fit the field's u32");
    }

    #[test]
    fn unknown_bits_survive_a_round_trip_and_print_as_hex() {
        let raw = 0x8000_0001_u32;
        let f: F = xdr::from_bytes(xdr::to_bytes(&raw).unwrap()).unwrap();
        assert_eq!(f.bits(), raw);
        assert!(f.contains(F::ACTIVE));
        assert_eq!(u32::from(f), raw);
        assert_eq!(&xdr::to_bytes(&f).unwrap()[..], &raw.to_be_bytes());
        assert_eq!(f.to_string(), "ACTIVE | 0x80000000");
        assert_eq!(F::from(raw), f);
    }

    #[test]
    fn display_and_debug_are_readable_and_parse_back() {
        let f = F::ACTIVE | F::PERSISTENT;
        assert_eq!(f.to_string(), "ACTIVE | PERSISTENT");
        assert_eq!(
            format!("{f:?}"),
            "ConnectListAllDomainsFlags(ACTIVE | PERSISTENT)"
        );
        assert_eq!(F::empty().to_string(), "0x0");
        assert_eq!(
            format!("{:?}", F::default()),
            "ConnectListAllDomainsFlags(0x0)"
        );
        assert_eq!("ACTIVE | PERSISTENT".parse::<F>().unwrap(), f);
        assert_eq!("0x0".parse::<F>().unwrap(), F::empty());
        assert_eq!(
            "ACTIVE | 0x80000000".parse::<F>().unwrap().bits(),
            0x8000_0001
        );
        assert!("NOT_A_FLAG".parse::<F>().is_err());
    }
}
