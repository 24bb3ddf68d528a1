//! Typed values: how attribute values and element text become numbers, enums and strings, and
//! back.
//!
//! Parsing follows the schema's datatypes: numbers and enumeration values may carry
//! surrounding whitespace (XSD collapses it), numbers a leading `+` or zeros. The model keeps
//! such a non-canonical spelling beside the element (see [`crate::Extra`]) and writes it back
//! as long as the value is unchanged, so `bus='0x00'` stays `0x00`; a changed or new value is
//! written in canonical form (decimal numbers).

use crate::error::ValueError;

/// A value held in a typed field.
pub(crate) trait XmlValue: Sized {
    /// Parses the text of an attribute or element.
    fn parse_xml(s: &str) -> Result<Self, ValueError>;
    /// Appends the canonical text (unescaped).
    fn write_xml(&self, out: &mut String);
    /// Whether `text` is the canonical text of this value (so no spelling needs keeping).
    fn is_canonical(&self, text: &str) -> bool;
}

impl XmlValue for String {
    fn parse_xml(s: &str) -> Result<Self, ValueError> {
        Ok(s.to_owned())
    }
    fn write_xml(&self, out: &mut String) {
        out.push_str(self);
    }
    fn is_canonical(&self, _: &str) -> bool {
        true
    }
}

/// XSD's whitespace collapse for numbers and tokens.
fn trim(s: &str) -> &str {
    s.trim_matches(|c| matches!(c, ' ' | '\t' | '\n' | '\r'))
}

macro_rules! ints {
    ($($t:ty),*) => {$(
        impl XmlValue for $t {
            fn parse_xml(s: &str) -> Result<Self, ValueError> {
                let t = trim(s);
                t.parse::<$t>().map_err(|e| int_error(&e, stringify!($t)))
            }
            fn write_xml(&self, out: &mut String) {
                out.push_str(itoa::Buffer::new().format(*self));
            }
            fn is_canonical(&self, text: &str) -> bool {
                itoa::Buffer::new().format(*self) == text
            }
        }
        impl CInt for $t {
            fn parse_c(s: &str) -> Result<Self, ValueError> {
                let t = trim(s);
                let (neg, body) = match t.as_bytes().first() {
                    Some(b'-') => (true, &t[1..]),
                    Some(b'+') => (false, &t[1..]),
                    _ => (false, t),
                };
                let (radix, digits) = if let Some(h) = body.strip_prefix("0x").or_else(|| body.strip_prefix("0X")) {
                    (16, h)
                } else if body.len() > 1 && body.starts_with('0') && body.bytes().all(|b| b.is_ascii_digit()) && body.bytes().all(|b| b < b'8') {
                    (8, &body[1..])
                } else if !body.is_empty() && body.bytes().all(|b| b.is_ascii_digit()) {
                    (10, body)
                } else {
                    // The schema's hex patterns allow bare hex digits (`slot='1f'`).
                    (16, body)
                };
                if digits.is_empty() || digits.starts_with(['+', '-']) {
                    return Err(ValueError::Invalid(stringify!($t)));
                }
                let signed = if neg { format!("-{digits}") } else { digits.to_owned() };
                <$t>::from_str_radix(&signed, radix).map_err(|e| int_error(&e, stringify!($t)))
            }
        }
    )*};
}

/// Integers in the C forms libvirt's parsers accept where the schema allows hex
/// (`strtoul(…, 0)`: `0x1f`, `017`, `31`).
pub(crate) trait CInt: XmlValue {
    fn parse_c(s: &str) -> Result<Self, ValueError>;
}

fn int_error(e: &std::num::ParseIntError, ty: &'static str) -> ValueError {
    use std::num::IntErrorKind;
    match e.kind() {
        IntErrorKind::PosOverflow | IntErrorKind::NegOverflow => ValueError::OutOfRange(ty),
        _ => ValueError::Invalid(ty),
    }
}

ints!(u8, u16, u32, u64, i8, i16, i32, i64);

impl XmlValue for f64 {
    fn parse_xml(s: &str) -> Result<Self, ValueError> {
        let t = trim(s);
        // XSD spells infinity INF; Rust's parser also takes "inf"/"infinity" and "NaN".
        let t = match t {
            "INF" | "+INF" => "inf",
            "-INF" => "-inf",
            other => other,
        };
        t.parse::<f64>().map_err(|_| ValueError::Invalid("f64"))
    }
    fn write_xml(&self, out: &mut String) {
        use std::fmt::Write;
        if self.is_infinite() {
            out.push_str(if *self > 0.0 { "INF" } else { "-INF" });
        } else {
            let _ = write!(out, "{self}");
        }
    }
    fn is_canonical(&self, text: &str) -> bool {
        let mut s = String::new();
        self.write_xml(&mut s);
        s == text
    }
}

/// Declares a generated enumeration: its variants and their XML spellings, with the parsing
/// and printing every enum shares. `: other T`: the schema also allows free values of type `T`.
macro_rules! xml_enum {
    (@literal $name:ident { $($v:ident = $s:literal,)* }) => {
        impl $name {
            /// The variant spelled `s` (an XSD token: surrounding whitespace allowed).
            fn literal(s: &str) -> Option<Self> {
                match s {
                    $($s => return Some(Self::$v),)*
                    _ => {}
                }
                match s.trim_matches(|c| matches!(c, ' ' | '\t' | '\n' | '\r')) {
                    $($s => Some(Self::$v),)*
                    _ => None,
                }
            }
        }
    };
    (@from_str $name:ident) => {
        impl ::std::str::FromStr for $name {
            type Err = $crate::Error;
            fn from_str(s: &str) -> Result<Self, Self::Err> {
                <Self as $crate::value::XmlValue>::parse_xml(s).map_err(|e| e.into_error(s))
            }
        }
    };
    (
        $(#[$m:meta])*
        pub enum $name:ident {
            $( $(#[$vm:meta])* $v:ident = $s:literal, )*
        }
    ) => {
        $(#[$m])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[non_exhaustive]
        pub enum $name {
            $( $(#[$vm])* $v, )*
        }

        impl $name {
            /// Every value, in the schema's order.
            pub const ALL: &'static [Self] = &[$(Self::$v,)*];

            /// The XML spelling.
            pub fn as_str(&self) -> &'static str {
                match self {
                    $(Self::$v => $s,)*
                }
            }
        }

        impl ::std::fmt::Display for $name {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        $crate::value::xml_enum!(@from_str $name);

        $crate::value::xml_enum!(@literal $name { $($v = $s,)* });

        impl $crate::value::XmlValue for $name {
            fn parse_xml(s: &str) -> Result<Self, $crate::error::ValueError> {
                Self::literal(s).ok_or($crate::error::ValueError::Unknown(stringify!($name)))
            }
            fn write_xml(&self, out: &mut String) {
                out.push_str(self.as_str());
            }
            fn is_canonical(&self, text: &str) -> bool {
                self.as_str() == text
            }
        }
    };
    (
        $(#[$m:meta])*
        pub enum $name:ident: other $t:ty {
            $( $(#[$vm:meta])* $v:ident = $s:literal, )*
        }
    ) => {
        $(#[$m])*
        #[derive(Debug, Clone, PartialEq)]
        #[non_exhaustive]
        pub enum $name {
            $( $(#[$vm])* $v, )*
            /// Any other value the schema allows.
            Other($t),
        }

        impl ::std::fmt::Display for $name {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                let mut s = String::new();
                $crate::value::XmlValue::write_xml(self, &mut s);
                f.write_str(&s)
            }
        }

        $crate::value::xml_enum!(@from_str $name);

        $crate::value::xml_enum!(@literal $name { $($v = $s,)* });

        impl $crate::value::XmlValue for $name {
            fn parse_xml(s: &str) -> Result<Self, $crate::error::ValueError> {
                if let Some(v) = Self::literal(s) {
                    return Ok(v);
                }
                <$t as $crate::value::XmlValue>::parse_xml(s)
                    .map(Self::Other)
                    .map_err(|_| $crate::error::ValueError::Unknown(stringify!($name)))
            }
            fn write_xml(&self, out: &mut String) {
                match self {
                    $(Self::$v => out.push_str($s),)*
                    Self::Other(v) => $crate::value::XmlValue::write_xml(v, out),
                }
            }
            fn is_canonical(&self, text: &str) -> bool {
                match self {
                    $(Self::$v => $s == text,)*
                    Self::Other(v) => $crate::value::XmlValue::is_canonical(v, text),
                }
            }
        }
    };
}
pub(crate) use xml_enum;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn c_integers() {
        assert_eq!(u8::parse_c("0x1f"), Ok(31));
        assert_eq!(u8::parse_c("0X1F"), Ok(31));
        assert_eq!(u8::parse_c("31"), Ok(31));
        assert_eq!(u8::parse_c("017"), Ok(15));
        assert_eq!(u8::parse_c("1f"), Ok(31));
        assert_eq!(u8::parse_c(" 0x00 "), Ok(0));
        assert_eq!(u8::parse_c("0x100"), Err(ValueError::OutOfRange("u8")));
        assert_eq!(u8::parse_c("0x"), Err(ValueError::Invalid("u8")));
        assert_eq!(u8::parse_c("0x+1"), Err(ValueError::Invalid("u8")));
        assert_eq!(u8::parse_c(""), Err(ValueError::Invalid("u8")));
        assert_eq!(i32::parse_c("-0x10"), Ok(-16));
    }

    #[test]
    fn decimal_integers_keep_xsd_forms() {
        assert_eq!(u32::parse_xml("+7"), Ok(7));
        assert_eq!(u32::parse_xml(" 007\n"), Ok(7));
        assert!(!7u32.is_canonical("007"));
        assert!(7u32.is_canonical("7"));
        assert_eq!(
            u32::parse_xml("4294967296"),
            Err(ValueError::OutOfRange("u32"))
        );
        assert_eq!(u32::parse_xml("-1"), Err(ValueError::Invalid("u32")));
        assert_eq!(u32::parse_xml("1e3"), Err(ValueError::Invalid("u32")));
    }

    #[test]
    fn floats() {
        assert_eq!(f64::parse_xml("1.5"), Ok(1.5));
        assert_eq!(f64::parse_xml("INF"), Ok(f64::INFINITY));
        let mut s = String::new();
        1.0f64.write_xml(&mut s);
        assert_eq!(s, "1");
        assert!(!1.0f64.is_canonical("1.0"));
    }
}
