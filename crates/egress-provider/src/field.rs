//! Validation errors that name the field they are about.
//!
//! Paths look like `providers[1].images.debian-13.sha256`: `.key` for map
//! keys and struct fields, `[n]` for list positions, and `["odd key"]` for
//! keys that are not plain words (so a bad key stays readable in the path).

use std::error::Error as StdError;
use std::fmt;

use crate::error::{BoxError, Chain};
use crate::identifier::IdentifierError;

/// One problem with one field, e.g.
/// `providers[1].images.debian-13.sha256: "abc" is not 64 hexadecimal digits`.
///
/// Factories and [`CreateSpec::validate`](crate::CreateSpec::validate) use it
/// too, so every validation error reads the same way.
#[derive(Debug)]
#[non_exhaustive]
pub struct FieldError {
    /// Where the problem is, e.g. `providers[1].images.debian-13.sha256`.
    pub path: String,
    /// What is wrong there.
    pub problem: Problem,
}

impl FieldError {
    /// A problem at `path`.
    pub fn new(path: impl Into<String>, problem: Problem) -> Self {
        Self {
            path: path.into(),
            problem,
        }
    }

    /// A free-form problem at `path`; `message` says what is wrong and,
    /// ideally, what to write instead.
    pub fn invalid(path: impl Into<String>, message: impl Into<String>) -> Self {
        Self::new(path, Problem::invalid(message))
    }
}

impl fmt::Display for FieldError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let path = if self.path.is_empty() {
            "(document)"
        } else {
            &self.path
        };
        write!(f, "{path}: {}", self.problem)
    }
}

impl StdError for FieldError {
    // The problem's own cause, so the chain skips the problem's text that
    // Display already shows.
    fn source(&self) -> Option<&(dyn StdError + 'static)> {
        self.problem.source()
    }
}

/// What is wrong with a field.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Problem {
    /// A required field is absent.
    #[error("is required")]
    Missing,
    /// A string or list is empty where content is required.
    #[error("must not be empty")]
    Empty,
    /// A name that will reach storage breaks the identifier rule.
    #[error("{value:?} is not a valid identifier")]
    NotIdentifier {
        /// The rejected value.
        value: String,
        /// Which part of the rule it breaks.
        #[source]
        source: IdentifierError,
    },
    /// The value repeats one that must be unique.
    #[error("{value:?} is already used at {first}; names must be unique")]
    Duplicate {
        /// The repeated value.
        value: String,
        /// The path of its first use.
        first: String,
    },
    /// A sha256 digest is not 64 hexadecimal digits.
    #[error("{value:?} is not a sha256 digest (64 hexadecimal digits)")]
    BadSha256 {
        /// The rejected value.
        value: String,
    },
    /// An image has no sha256 and its entry did not opt out of verification.
    #[error(
        "is required: images are verified by checksum unless the entry sets `allow_unverified_images: true`"
    )]
    MissingSha256,
    /// A URL does not parse.
    #[error("{value:?} is not a valid URL")]
    BadUrl {
        /// The rejected value, without what may be credentials (its userinfo and query:
        /// [`redact_url`](crate::redact_url)).
        value: String,
        /// The parser's complaint.
        #[source]
        source: url::ParseError,
    },
    /// A URL uses a scheme other than http or https.
    #[error("URL scheme {scheme:?} is not supported; use http or https")]
    UnsupportedScheme {
        /// The rejected scheme.
        scheme: String,
    },
    /// An image format other than raw or qcow2.
    #[error("{value:?} is not a supported image format; use raw or qcow2")]
    UnsupportedFormat {
        /// The rejected value.
        value: String,
    },
    /// A field nobody reads: a typo, or a setting of another provider type.
    #[error("unknown field")]
    UnknownField,
    /// An entry's `type` has no registered factory.
    #[error("provider type {value:?} is not registered; registered types: {}", display_list(.known))]
    UnknownType {
        /// The rejected type.
        value: String,
        /// The types the registry knows.
        known: Vec<String>,
    },
    /// The document (or a part of it) does not have the expected shape:
    /// a syntax error, a wrong value type, a duplicate key.
    #[error("cannot be read")]
    Parse {
        /// The parser's error; for YAML it includes line, column and a snippet.
        #[source]
        source: BoxError,
    },
    /// Anything else; the message says what is wrong.
    #[error("{message}")]
    Invalid {
        /// What is wrong and, ideally, what to write instead.
        message: String,
        /// The lower-level cause, if any.
        #[source]
        source: Option<BoxError>,
    },
}

impl Problem {
    /// A free-form problem.
    pub fn invalid(message: impl Into<String>) -> Self {
        Self::Invalid {
            message: message.into(),
            source: None,
        }
    }

    /// A free-form problem with a lower-level cause.
    pub fn invalid_because(message: impl Into<String>, source: impl Into<BoxError>) -> Self {
        Self::Invalid {
            message: message.into(),
            source: Some(source.into()),
        }
    }
}

fn display_list(items: &[String]) -> String {
    if items.is_empty() {
        "(none)".to_owned()
    } else {
        items.join(", ")
    }
}

/// All the problems found in one validation pass.
///
/// Validation collects every problem instead of stopping at the first, so an
/// operator fixes a file in one go. `Display` lists each problem with its
/// causes; [`iter`](Self::iter) gives each [`FieldError`] with its own
/// source chain.
#[derive(Debug, Default)]
pub struct FieldErrors(Vec<FieldError>);

impl FieldErrors {
    /// No errors yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds one error.
    pub fn push(&mut self, err: FieldError) {
        self.0.push(err);
    }

    /// Adds every error of `other`.
    pub fn extend(&mut self, other: Self) {
        self.0.extend(other.0);
    }

    /// Whether no error was found.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// How many errors were found.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// The errors, in the order found.
    pub fn iter(&self) -> std::slice::Iter<'_, FieldError> {
        self.0.iter()
    }

    /// The error at exactly `path`, if any.
    pub fn at(&self, path: &str) -> Option<&FieldError> {
        self.0.iter().find(|e| e.path == path)
    }

    /// The errors as a vector.
    pub fn into_vec(self) -> Vec<FieldError> {
        self.0
    }

    /// `Ok(value)` if no error was found, else `Err(self)`.
    pub fn into_result<T>(self, value: T) -> Result<T, Self> {
        if self.is_empty() {
            Ok(value)
        } else {
            Err(self)
        }
    }
}

impl fmt::Display for FieldErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0.as_slice() {
            [] => f.write_str("no problems"),
            [one] => write!(f, "{}", Chain::of(one)),
            many => {
                write!(f, "{} problems:", many.len())?;
                for e in many {
                    write!(f, "\n  - {}", Chain::of(e))?;
                }
                Ok(())
            }
        }
    }
}

// An aggregate has no single cause; each item keeps its own chain.
impl StdError for FieldErrors {}

impl From<FieldError> for FieldErrors {
    fn from(err: FieldError) -> Self {
        Self(vec![err])
    }
}

impl IntoIterator for FieldErrors {
    type Item = FieldError;
    type IntoIter = std::vec::IntoIter<FieldError>;

    fn into_iter(self) -> Self::IntoIter {
        self.0.into_iter()
    }
}

impl<'a> IntoIterator for &'a FieldErrors {
    type Item = &'a FieldError;
    type IntoIter = std::slice::Iter<'a, FieldError>;

    fn into_iter(self) -> Self::IntoIter {
        self.0.iter()
    }
}

impl Extend<FieldError> for FieldErrors {
    fn extend<I: IntoIterator<Item = FieldError>>(&mut self, iter: I) {
        self.0.extend(iter);
    }
}

/// Appends a map key or field name to a path: `.key`, or `["key"]` when the
/// key is empty or has characters other than ASCII letters, digits, `-`, `_`.
pub fn join_key(path: &str, key: &str) -> String {
    let plain = !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    match (path.is_empty(), plain) {
        (true, true) => key.to_owned(),
        (false, true) => format!("{path}.{key}"),
        (_, false) => format!("{path}[{key:?}]"),
    }
}

/// Appends a list position to a path: `path[index]`.
pub fn join_index(path: &str, index: usize) -> String {
    format!("{path}[{index}]")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths() {
        assert_eq!(join_key("", "providers"), "providers");
        assert_eq!(join_index("providers", 1), "providers[1]");
        assert_eq!(
            join_key("providers[1].images", "debian-13"),
            "providers[1].images.debian-13"
        );
        assert_eq!(
            join_key("providers[1].images", "Debian 13"),
            "providers[1].images[\"Debian 13\"]"
        );
        assert_eq!(join_key("a", ""), "a[\"\"]");
    }

    #[test]
    fn display_includes_causes() {
        let e = FieldError::new(
            "providers[0].name",
            Problem::NotIdentifier {
                value: "A".into(),
                source: IdentifierError::InvalidChar { ch: 'A', index: 0 },
            },
        );
        assert!(
            e.to_string()
                .starts_with("providers[0].name: \"A\" is not a valid identifier")
        );
        assert!(e.source().is_some());
        let mut all = FieldErrors::from(e);
        all.push(FieldError::new("providers[1].type", Problem::Missing));
        let text = all.to_string();
        assert!(text.starts_with("2 problems:"), "{text}");
        assert!(text.contains("contains 'A' at byte 0"), "{text}");
        assert!(text.contains("providers[1].type: is required"), "{text}");
        assert!(all.at("providers[1].type").is_some());
    }
}
