//! Reaching a daemon: the URI grammar, the transports (unix, TCP, TLS, SSH) and the
//! credentials for SASL.

pub mod auth;
#[cfg(feature = "ssh")]
pub(crate) mod ssh;
#[cfg(feature = "tls")]
pub mod tls;
pub(crate) mod transport;
pub mod uri;
