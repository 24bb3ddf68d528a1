//! The one identifier rule for every name that may reach storage.
//!
//! Entry names, image keys, instance uids, tags and provider type names all
//! end up in volume names, file names, domain names or metadata on some host.
//! They share a single rule so that a provider never has to escape them:
//! lowercase ASCII letters, digits and `-`, starting with a letter or digit,
//! at most [`IDENTIFIER_MAX_LEN`] bytes.

use std::borrow::Borrow;
use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// The longest identifier accepted, in bytes (a DNS label's limit).
pub const IDENTIFIER_MAX_LEN: usize = 63;

/// Whether `s` obeys the identifier rule.
///
/// The rule: 1 to [`IDENTIFIER_MAX_LEN`] characters, each a lowercase ASCII
/// letter, an ASCII digit or `-`, and the first one not `-`.
///
/// ```
/// use egress_provider::is_identifier;
///
/// assert!(is_identifier("debian-13"));
/// assert!(is_identifier("0a1b"));
/// assert!(!is_identifier("Debian"));
/// assert!(!is_identifier("-x"));
/// assert!(!is_identifier("a.b"));
/// assert!(!is_identifier(""));
/// ```
pub fn is_identifier(s: &str) -> bool {
    check_identifier(s).is_ok()
}

/// Checks `s` against the identifier rule and says what is wrong.
///
/// [`is_identifier`] is this function's yes/no form; both apply the same rule.
pub fn check_identifier(s: &str) -> Result<(), IdentifierError> {
    if s.is_empty() {
        return Err(IdentifierError::Empty);
    }
    // Length first, so a huge input is rejected without scanning it.
    if s.len() > IDENTIFIER_MAX_LEN {
        return Err(IdentifierError::TooLong { len: s.len() });
    }
    for (index, ch) in s.char_indices() {
        if index == 0 && ch == '-' {
            return Err(IdentifierError::LeadingHyphen);
        }
        if !(ch.is_ascii_lowercase() || ch.is_ascii_digit() || ch == '-') {
            return Err(IdentifierError::InvalidChar { ch, index });
        }
    }
    Ok(())
}

/// Why a string is not an identifier.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum IdentifierError {
    /// The string is empty.
    #[error("must not be empty")]
    Empty,
    /// The string is longer than [`IDENTIFIER_MAX_LEN`] bytes.
    #[error("is {len} bytes long; at most {IDENTIFIER_MAX_LEN} are allowed")]
    TooLong {
        /// The string's length in bytes.
        len: usize,
    },
    /// The string starts with `-`.
    #[error("must start with a lowercase letter or a digit, not '-'")]
    LeadingHyphen,
    /// The string contains a character outside `[a-z0-9-]`.
    #[error("contains {ch:?} at byte {index}; only lowercase letters, digits and '-' are allowed")]
    InvalidChar {
        /// The offending character.
        ch: char,
        /// Its byte offset in the string.
        index: usize,
    },
}

/// A string known to obey the identifier rule (see [`is_identifier`]).
///
/// Used for instance uids, image keys, tags, entry names and provider type
/// names. Construct with [`Identifier::new`] or `parse()`; serde
/// deserialization applies the same check.
///
/// ```
/// use egress_provider::Identifier;
///
/// let key: Identifier = "debian-13".parse()?;
/// assert_eq!(key.as_str(), "debian-13");
/// assert!(Identifier::new("Debian 13").is_err());
/// # Ok::<(), egress_provider::IdentifierError>(())
/// ```
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct Identifier(String);

impl Identifier {
    /// Checks `s` and wraps it.
    pub fn new(s: impl Into<String>) -> Result<Self, IdentifierError> {
        let s = s.into();
        check_identifier(&s)?;
        Ok(Self(s))
    }

    /// The identifier as a string slice.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Unwraps the identifier into its string.
    pub fn into_string(self) -> String {
        self.0
    }
}

impl fmt::Debug for Identifier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.0, f)
    }
}

impl fmt::Display for Identifier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl FromStr for Identifier {
    type Err = IdentifierError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::new(s)
    }
}

impl TryFrom<String> for Identifier {
    type Error = IdentifierError;

    fn try_from(s: String) -> Result<Self, Self::Error> {
        Self::new(s)
    }
}

impl TryFrom<&str> for Identifier {
    type Error = IdentifierError;

    fn try_from(s: &str) -> Result<Self, Self::Error> {
        Self::new(s)
    }
}

impl From<Identifier> for String {
    fn from(id: Identifier) -> Self {
        id.0
    }
}

impl AsRef<str> for Identifier {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

// Lets maps keyed by `Identifier` be queried with a `&str`.
impl Borrow<str> for Identifier {
    fn borrow(&self) -> &str {
        &self.0
    }
}

impl PartialEq<str> for Identifier {
    fn eq(&self, other: &str) -> bool {
        self.0 == other
    }
}

impl PartialEq<&str> for Identifier {
    fn eq(&self, other: &&str) -> bool {
        self.0 == *other
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_the_rule() {
        for ok in ["a", "0", "debian-13", "a-", "a--b", &"x".repeat(63)] {
            assert!(is_identifier(ok), "{ok:?} should be accepted");
        }
    }

    #[test]
    fn rejects_with_a_reason() {
        assert_eq!(check_identifier(""), Err(IdentifierError::Empty));
        assert_eq!(
            check_identifier(&"x".repeat(64)),
            Err(IdentifierError::TooLong { len: 64 })
        );
        assert_eq!(check_identifier("-a"), Err(IdentifierError::LeadingHyphen));
        assert_eq!(
            check_identifier("aB"),
            Err(IdentifierError::InvalidChar { ch: 'B', index: 1 })
        );
        for bad in ["a_b", "a.b", "a b", "a/b", "é", "a\n", "..", "A"] {
            assert!(!is_identifier(bad), "{bad:?} should be rejected");
        }
    }

    #[test]
    fn multibyte_length_counts_bytes() {
        // 32 two-byte chars: too long by bytes even though 32 chars.
        let s = "é".repeat(32);
        assert_eq!(
            check_identifier(&s),
            Err(IdentifierError::TooLong { len: 64 })
        );
    }

    #[test]
    fn serde_applies_the_rule() {
        let id: Identifier = serde_json::from_str("\"kvm-a\"").unwrap();
        assert_eq!(id, "kvm-a");
        let err = serde_json::from_str::<Identifier>("\"KVM\"").unwrap_err();
        assert!(err.to_string().contains("only lowercase letters"), "{err}");
        assert_eq!(serde_json::to_string(&id).unwrap(), "\"kvm-a\"");
    }

    #[test]
    fn borrow_allows_str_lookup() {
        let mut map = std::collections::BTreeMap::new();
        map.insert(Identifier::new("a").unwrap(), 1);
        assert_eq!(map.get("a"), Some(&1));
    }
}
