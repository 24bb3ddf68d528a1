//! Parse errors: what went wrong and where (`domain/devices/disk[2]/@type`).

use std::fmt;

/// A document that could not be read: the place in the tree, the reason, and the byte offset
/// where the reader stood.
///
/// The path names elements from the root down, 1-based positions among same-named siblings
/// where an element may repeat (`disk[2]`), and the attribute last (`@type`), or `text()` for
/// an element's text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error(Box<Inner>);

/// Boxed so a `Result` stays one word on the reader's recursion.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Inner {
    kind: ErrorKind,
    /// Path segments, innermost first (they are added while the error unwinds).
    segments: Vec<String>,
    offset: Option<u64>,
    /// The 1-based index the next (enclosing) element segment takes.
    pending_index: Option<usize>,
}

/// Why a document could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ErrorKind {
    /// Not well-formed XML.
    #[error("malformed XML: {0}")]
    Syntax(String),
    /// No root element.
    #[error("no root element")]
    NoRoot,
    /// Content after the root element (a second root, or text).
    #[error("content after the root element")]
    TrailingContent,
    /// The root element is not the one the document type has.
    #[error("root element <{found}> where <{expected}> was expected")]
    WrongRoot {
        /// The root element(s) the type accepts.
        expected: &'static str,
        /// The root element found.
        found: String,
    },
    /// A value the schema lists (an enumeration) that this one is not.
    #[error("unknown value {value:?} for {ty}")]
    UnknownValue {
        /// The text found.
        value: String,
        /// The Rust type whose values it is not one of.
        ty: &'static str,
    },
    /// A number that does not fit its type.
    #[error("{value:?} is out of range for {ty}")]
    OutOfRange {
        /// The text found.
        value: String,
        /// The Rust type.
        ty: &'static str,
    },
    /// Text that is not a value of its type (`"abc"` for a number).
    #[error("{value:?} is not a valid {ty}")]
    InvalidValue {
        /// The text found.
        value: String,
        /// What was expected.
        ty: &'static str,
    },
    /// The input is larger than the limit.
    #[error("the document is {size} bytes, over the {limit}-byte limit")]
    TooLarge {
        /// Its size.
        size: usize,
        /// The limit ([`crate::ParseOptions::max_size`]).
        limit: usize,
    },
    /// Elements nest deeper than the limit.
    #[error("elements nest deeper than {limit}")]
    TooDeep {
        /// The limit ([`crate::ParseOptions::max_depth`]).
        limit: usize,
    },
}

impl Error {
    pub(crate) fn new(kind: ErrorKind) -> Self {
        Self(Box::new(Inner {
            kind,
            segments: Vec::new(),
            offset: None,
            pending_index: None,
        }))
    }

    /// Why.
    pub fn kind(&self) -> &ErrorKind {
        &self.0.kind
    }

    /// Where: `domain/devices/disk[2]/@type` (empty when the error is about the whole input,
    /// such as its size or a syntax error before the root).
    pub fn path(&self) -> String {
        let mut s = String::new();
        for (i, seg) in self.0.segments.iter().rev().enumerate() {
            if i > 0 {
                s.push('/');
            }
            s.push_str(seg);
        }
        s
    }

    /// The byte offset in the input where the reader stood when it failed.
    pub fn offset(&self) -> Option<u64> {
        self.0.offset
    }

    /// Whether the input is not well-formed XML (or has no single root).
    pub fn is_syntax(&self) -> bool {
        matches!(
            self.0.kind,
            ErrorKind::Syntax(_) | ErrorKind::NoRoot | ErrorKind::TrailingContent
        )
    }

    /// Whether a value in a typed position was rejected (unknown enumeration value, number out
    /// of range or not a number).
    pub fn is_invalid_value(&self) -> bool {
        matches!(
            self.0.kind,
            ErrorKind::UnknownValue { .. }
                | ErrorKind::OutOfRange { .. }
                | ErrorKind::InvalidValue { .. }
        )
    }

    /// Whether a size or depth limit was hit.
    pub fn is_limit(&self) -> bool {
        matches!(
            self.0.kind,
            ErrorKind::TooLarge { .. } | ErrorKind::TooDeep { .. }
        )
    }

    pub(crate) fn at(mut self, offset: u64) -> Self {
        if self.0.offset.is_none() {
            self.0.offset = Some(offset);
        }
        self
    }

    /// Adds the enclosing element's segment, with the index a repeated field recorded.
    pub(crate) fn within(mut self, name: &str) -> Self {
        match self.0.pending_index.take() {
            Some(i) => self.0.segments.push(format!("{name}[{i}]")),
            None => self.0.segments.push(name.to_owned()),
        }
        self
    }

    pub(crate) fn attribute(mut self, name: &str) -> Self {
        self.0.segments.push(format!("@{name}"));
        self
    }

    pub(crate) fn text(mut self) -> Self {
        self.0.segments.push("text()".to_owned());
        self
    }

    pub(crate) fn indexed(mut self, index: usize) -> Self {
        self.0.pending_index = Some(index);
        self
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let path = self.path();
        if !path.is_empty() {
            write!(f, "{path}: ")?;
        }
        write!(f, "{}", self.0.kind)?;
        if let Some(o) = self.0.offset {
            write!(f, " (at byte {o})")?;
        }
        Ok(())
    }
}

impl std::error::Error for Error {}

/// Why a single value did not parse (the caller adds where).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ValueError {
    Unknown(&'static str),
    OutOfRange(&'static str),
    Invalid(&'static str),
}

impl ValueError {
    pub(crate) fn into_error(self, text: &str) -> Error {
        let value = text.to_owned();
        Error::new(match self {
            Self::Unknown(ty) => ErrorKind::UnknownValue { value, ty },
            Self::OutOfRange(ty) => ErrorKind::OutOfRange { value, ty },
            Self::Invalid(ty) => ErrorKind::InvalidValue { value, ty },
        })
    }
}
