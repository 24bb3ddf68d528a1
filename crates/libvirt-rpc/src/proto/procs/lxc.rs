//! The LXC program ([`LXC_PROGRAM`](crate::proto::LXC_PROGRAM)): the LXC driver's one call
//! beside the remote program. Its reply carries the container's namespace descriptors: call
//! it with `call_with_fds` on a unix socket (the plain `call` refuses it with
//! [`CallError::NeedsFdPassing`](crate::conn::CallError::NeedsFdPassing)).

use super::domain::DomainFlagsArgs;
use crate::procedures;

procedures! {
    table PROCEDURES, program LXC_PROGRAM;
    /// `virDomainLxcOpenNamespace`: the daemon returns one descriptor per namespace of the
    /// container's init (`REPLY_WITH_FDS`, no return value besides them). Flags must be 0.
    LxcDomainOpenNamespace = 1: DomainFlagsArgs => (), since "1.0.2", fds Reply;
}

/// The highest procedure number of the LXC program.
pub const HIGHEST: i32 = 1;
