//! The error every [`Provider`](crate::Provider) call returns, and how a
//! provider classifies the errors below it.
//!
//! # Who decides
//!
//! The **provider** classifies: it is the only party that knows what a
//! libvirt error code or a refused TCP connection means for its host. The
//! **controller** acts on the [`ErrorKind`] alone: it retries
//! [`Transient`](ErrorKind::Transient) with backoff, surfaces
//! [`Permanent`](ErrorKind::Permanent) to the operator (and still retries
//! slowly, since the operator may fix things), and treats
//! [`NotFound`](ErrorKind::NotFound) from `get` as "the VM is gone".
//!
//! # Mapping rule for providers
//!
//! 1. The instance named by a uid does not exist on a host that answered:
//!    `NotFound` (only from `get`; `delete` turns absence into success).
//! 2. The same call, unchanged, could succeed later without anyone acting:
//!    `Transient`. Refused, reset or timed-out connections, a daemon socket
//!    that is missing, a host that is busy or restarting, a lock held by
//!    someone else, a full address pool.
//! 3. Someone has to change the configuration, the spec or the host first:
//!    `Permanent`, and the message says what to change. Unknown image keys,
//!    checksum mismatches, failed authentication, permission denied, an
//!    invalid spec, an unsupported feature.
//! 4. When a provider cannot tell, it picks `Transient` and keeps the
//!    lower-level error as the source. A controller's backoff is capped, so a
//!    misfiled permanent error shows up as a repeating event; a misfiled
//!    transient one would strand the resource until a human looks.
//!
//! An unreachable host is **never** `NotFound` and a failed `delete` is
//! **never** success: either would make a controller forget a VM that still
//! exists. [`classify`] and [`classify_io`] apply rules 2 to 4 to foreign
//! errors.

use std::error::Error as StdError;
use std::fmt;
use std::io;

/// A boxed error kept as a source: `Send + Sync` so errors cross tasks.
pub type BoxError = Box<dyn StdError + Send + Sync + 'static>;

/// What the caller should do about a [`ProviderError`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// Retry the same call later, with backoff. Nothing needs to change.
    Transient,
    /// An operator must act (fix configuration, spec or host); the message
    /// says what. Retrying unchanged will keep failing.
    Permanent,
    /// The named instance does not exist on a host that answered.
    NotFound,
}

impl ErrorKind {
    /// Whether retrying the same call unchanged may succeed.
    pub fn is_retryable(self) -> bool {
        matches!(self, Self::Transient)
    }

    /// A short lowercase label: `transient`, `permanent` or `not-found`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Transient => "transient",
            Self::Permanent => "permanent",
            Self::NotFound => "not-found",
        }
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The error of every provider call: a [`kind`](Self::kind), an operator-facing
/// message, and the lower-level error that caused it.
///
/// `Display` shows the kind and the message, e.g.
/// `permanent provider error: image key "debian-14" is not configured for
/// provider "kvm-a" (known: debian-13); add it under this entry's images or
/// fix the spec`. The
/// cause is available through [`source`](StdError::source) (and
/// [`chain`](Self::chain) renders the whole chain on one line).
///
/// ```
/// use egress_provider::{ErrorKind, ProviderError};
///
/// let io = std::io::Error::from(std::io::ErrorKind::ConnectionRefused);
/// let err = ProviderError::classified("cannot reach libvirt on host-a", io);
/// assert_eq!(err.kind(), ErrorKind::Transient);
/// assert!(err.is_transient());
/// assert!(std::error::Error::source(&err).is_some());
/// ```
#[derive(Debug, thiserror::Error)]
#[error("{kind} provider error: {message}")]
#[non_exhaustive]
pub struct ProviderError {
    kind: ErrorKind,
    message: String,
    #[source]
    source: Option<BoxError>,
}

impl ProviderError {
    /// An error of the given kind with an operator-facing message.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Self {
            kind,
            message: message.into(),
            source: None,
        }
    }

    /// A [`Transient`](ErrorKind::Transient) error: retry later.
    pub fn transient(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Transient, message)
    }

    /// A [`Permanent`](ErrorKind::Permanent) error. Say in `message` what the
    /// operator has to change.
    pub fn permanent(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Permanent, message)
    }

    /// A [`NotFound`](ErrorKind::NotFound) error.
    pub fn not_found(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::NotFound, message)
    }

    /// An error whose kind is [`classify`]'d from `source`, which is kept.
    pub fn classified(message: impl Into<String>, source: impl Into<BoxError>) -> Self {
        let source = source.into();
        let kind = classify(source.as_ref());
        Self::new(kind, message).with_source(source)
    }

    /// Keeps `source` as this error's cause.
    #[must_use]
    pub fn with_source(mut self, source: impl Into<BoxError>) -> Self {
        self.source = Some(source.into());
        self
    }

    /// What the caller should do.
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// The operator-facing message, without the kind label or the cause.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// Whether the kind is [`Transient`](ErrorKind::Transient).
    pub fn is_transient(&self) -> bool {
        self.kind == ErrorKind::Transient
    }

    /// Whether the kind is [`Permanent`](ErrorKind::Permanent).
    pub fn is_permanent(&self) -> bool {
        self.kind == ErrorKind::Permanent
    }

    /// Whether the kind is [`NotFound`](ErrorKind::NotFound).
    pub fn is_not_found(&self) -> bool {
        self.kind == ErrorKind::NotFound
    }

    /// Displays this error and all its causes on one line, joined by `: `.
    pub fn chain(&self) -> Chain<'_> {
        Chain(self)
    }
}

/// One-line rendering of an error and its causes; see [`ProviderError::chain`].
#[derive(Debug, Clone, Copy)]
pub struct Chain<'a>(&'a (dyn StdError + 'static));

impl<'a> Chain<'a> {
    /// Renders any error with its causes.
    pub fn of(err: &'a (dyn StdError + 'static)) -> Self {
        Self(err)
    }
}

impl fmt::Display for Chain<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)?;
        let mut next = self.0.source();
        while let Some(err) = next {
            write!(f, ": {err}")?;
            next = err.source();
        }
        Ok(())
    }
}

/// Classifies a foreign error by walking its source chain.
///
/// The first [`ProviderError`] found decides (its kind is kept). Otherwise the
/// first [`io::Error`] decides through [`classify_io`]. Anything else is
/// [`Transient`](ErrorKind::Transient), per rule 4 of the module docs.
pub fn classify(err: &(dyn StdError + 'static)) -> ErrorKind {
    let mut next = Some(err);
    while let Some(err) = next {
        if let Some(p) = err.downcast_ref::<ProviderError>() {
            return p.kind();
        }
        if let Some(io) = err.downcast_ref::<io::Error>() {
            return classify_io(io.kind());
        }
        next = err.source();
    }
    ErrorKind::Transient
}

/// Classifies an I/O error kind.
///
/// [`io::ErrorKind::NotFound`] is [`Transient`](ErrorKind::Transient), never
/// [`NotFound`](ErrorKind::NotFound) (instance `NotFound` is only ever decided
/// by a host that answered) and not [`Permanent`](ErrorKind::Permanent): the
/// kind alone cannot tell a file an operator must supply from a daemon socket
/// that is missing because the daemon is down or restarting, and a host that
/// does not answer is `Transient` (rule 2; "unreadable is not missing", H3).
/// When unsure, rule 4 applies. A provider that knows the path is a
/// configured file (a key file, say) classifies that error itself, as
/// `Permanent`.
pub fn classify_io(kind: io::ErrorKind) -> ErrorKind {
    use io::ErrorKind as K;
    match kind {
        K::PermissionDenied
        | K::InvalidInput
        | K::InvalidData
        | K::Unsupported
        | K::AlreadyExists
        | K::AddrInUse
        | K::ReadOnlyFilesystem
        | K::IsADirectory
        | K::NotADirectory
        | K::InvalidFilename => ErrorKind::Permanent,
        // Refused, reset, timed out, unreachable, missing, interrupted, out of
        // memory, and whatever else the platform reports: the host may come back.
        _ => ErrorKind::Transient,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_names_the_kind() {
        let e = ProviderError::permanent("image key \"x\" is not configured; add it");
        assert_eq!(
            e.to_string(),
            "permanent provider error: image key \"x\" is not configured; add it"
        );
        assert_eq!(
            ProviderError::transient("busy").to_string(),
            "transient provider error: busy"
        );
        assert_eq!(
            ProviderError::not_found("no instance \"a\"").to_string(),
            "not-found provider error: no instance \"a\""
        );
    }

    #[test]
    fn classify_io_kinds() {
        for k in [
            io::ErrorKind::ConnectionRefused,
            io::ErrorKind::ConnectionReset,
            io::ErrorKind::TimedOut,
            io::ErrorKind::BrokenPipe,
            io::ErrorKind::HostUnreachable,
            io::ErrorKind::UnexpectedEof,
            // A missing socket: the daemon is down (the KVM provider's rule too).
            io::ErrorKind::NotFound,
        ] {
            assert_eq!(classify_io(k), ErrorKind::Transient, "{k:?}");
        }
        for k in [io::ErrorKind::PermissionDenied, io::ErrorKind::InvalidData] {
            assert_eq!(classify_io(k), ErrorKind::Permanent, "{k:?}");
        }
    }

    #[derive(Debug, thiserror::Error)]
    #[error("libvirt call failed")]
    struct Wrapper(#[source] io::Error);

    #[derive(Debug, thiserror::Error)]
    #[error("opaque")]
    struct Opaque;

    #[test]
    fn classify_walks_the_chain() {
        let w = Wrapper(io::Error::from(io::ErrorKind::PermissionDenied));
        assert_eq!(classify(&w), ErrorKind::Permanent);
        let e = ProviderError::classified("ctx", w);
        assert!(e.is_permanent());
        assert_eq!(
            e.chain().to_string(),
            "permanent provider error: ctx: libvirt call failed: permission denied"
        );

        let inner = ProviderError::not_found("gone");
        let outer = ProviderError::classified("wrapped", inner);
        assert!(outer.is_not_found());

        assert_eq!(classify(&Opaque), ErrorKind::Transient);

        // A dial error whose socket is missing (daemon down), found down the chain.
        let down = Wrapper(io::Error::from(io::ErrorKind::NotFound));
        assert_eq!(classify(&down), ErrorKind::Transient);
    }

    #[test]
    fn errors_are_send_sync() {
        fn assert<T: Send + Sync + 'static>() {}
        assert::<ProviderError>();
    }
}
