//! The LXC program ([`LXC_PROGRAM`](crate::proto::LXC_PROGRAM)): the LXC driver's one call
//! beside the remote program. Its reply carries the container's namespace descriptors: call
//! it with `call_with_fds` on a unix socket (the plain `call` refuses it:
//! [`Procedure::refuse_fds`](crate::proto::Procedure::refuse_fds)).

use super::domain::DomainFlagsArgs;
use crate::proto::procedures;

/// This module's procedure table as data: `rows!(callback)` hands every row to `callback!`,
/// as quinn's `apply_params!` does. [`procedures!`](crate::proto::procedures) declares the types
/// and the table from the rows; the client expands the same rows into the object API.
macro_rules! rows {
    ($callback:ident) => {
        $callback! {
            [lxc]
            table PROCEDURES, program LXC_PROGRAM;
            /// `virDomainLxcOpenNamespace`: the daemon returns one descriptor per namespace of the
            /// container's init (`REPLY_WITH_FDS`, no return value besides them). Flags must be 0.
            LxcDomainOpenNamespace = 1: DomainFlagsArgs => (), since "1.0.2", fds Reply;
        }
    };
}
#[allow(unused_imports)] // expanded by the layers above, when they are built
pub(crate) use rows;

rows!(procedures);

/// The highest procedure number of the LXC program.
pub const HIGHEST: i32 = 1;
