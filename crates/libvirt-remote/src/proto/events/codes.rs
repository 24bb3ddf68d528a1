//! The flags of memory failure events, re-exported by [`super`]. The enum-like fields of
//! event bodies (event types and their details, actions, phases, reasons) are named types
//! in [`crate::proto::names`].

#[allow(unused_imports)] // for the doc links
use super::DomainEvent;
#[allow(unused_imports)] // for the doc links
use crate::proto::names::DomainEventType;

crate::proto::flags::flag_set! {
    /// `virDomainMemoryFailureFlags` in [`MemoryFailure`](super::MemoryFailure).
    pub struct MemoryFailureFlags: u32 {
        /// The failure must be handled at once (action required).
        const ACTION_REQUIRED = 1;
        /// A failure occurred while handling a previous one.
        const RECURSIVE = 2;
    }
}
