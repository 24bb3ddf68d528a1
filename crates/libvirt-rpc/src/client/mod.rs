//! The tokio driver (work in progress).
