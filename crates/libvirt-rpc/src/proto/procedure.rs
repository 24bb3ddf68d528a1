//! The procedure table: one declaration per procedure, typed args and return.
//!
//! Adding a procedure is one line in a [`procedures!`](crate::procedures) block (plus its
//! `xdr_struct!` args/ret types when they are not void or shared).

use std::fmt::Debug;

use crate::wire::xdr::{Decode, Encode};

/// Which way a stream procedure moves data, seen from the client.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum StreamDirection {
    /// The client sends data (`@writestream`, e.g. `STORAGE_VOL_UPLOAD`).
    Upload,
    /// The server sends data (`@readstream`, e.g. `STORAGE_VOL_DOWNLOAD`).
    Download,
}

/// A typed libvirt procedure.
pub trait Procedure {
    /// Program number (`REMOTE_PROGRAM` for every procedure declared here).
    const PROGRAM: u32;
    /// Procedure number (stable forever).
    const NUMBER: i32;
    /// Name for logs and errors.
    const NAME: &'static str;
    /// `Some` when a successful call opens a stream.
    const STREAM: Option<StreamDirection>;
    /// Arguments (`()` when void).
    type Args: Encode + Send + Sync;
    /// Return value (`()` when void).
    type Ret: Decode + Send + 'static;
}

/// Visits procedures with their types: [`procs::visit_procedures`](crate::proto::procs::visit_procedures)
/// calls [`visit`](Self::visit) once per declared procedure, so code that must cover every
/// procedure's `Args` and `Ret` (the XDR fuzz checks, say) iterates the table itself instead
/// of a list kept beside it.
pub trait ProcedureVisitor {
    /// Called with one procedure.
    fn visit<P: Procedure<Args: Decode + Debug, Ret: Encode + Debug>>(&mut self);
}

/// Static facts about one procedure, for lookups by number (tracing, raw calls).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProcInfo {
    /// Program number.
    pub program: u32,
    /// Procedure number.
    pub number: i32,
    /// Name.
    pub name: &'static str,
    /// Stream direction, if any.
    pub stream: Option<StreamDirection>,
}

/// Declares procedures of the remote program: a unit type implementing [`Procedure`] per
/// entry, a `&[ProcInfo]` table named by the first line, and `visit_procedures`, which
/// hands each entry's type to a [`ProcedureVisitor`] in table order.
///
/// ```text
/// procedures! {
///     table CONNECT;
///     /// doc
///     ConnectGetType = 3: () -> ConnectGetTypeRet;
///     StorageVolUpload = 208: StorageVolUploadArgs -> (), stream Upload;
/// }
/// ```
#[macro_export]
macro_rules! procedures {
    (
        table $table:ident;
        $(
            $(#[$m:meta])*
            $name:ident = $num:literal : $args:ty => $ret:ty $(, stream $dir:ident)? ;
        )*
    ) => {
        $(
            $(#[$m])*
            #[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
            pub struct $name;

            impl $crate::proto::procedure::Procedure for $name {
                const PROGRAM: u32 = $crate::proto::REMOTE_PROGRAM;
                const NUMBER: i32 = $num;
                const NAME: &'static str = stringify!($name);
                const STREAM: Option<$crate::proto::procedure::StreamDirection> =
                    $crate::procedures!(@dir $($dir)?);
                type Args = $args;
                type Ret = $ret;
            }
        )*

        /// Every procedure declared in this module.
        pub const $table: &[$crate::proto::procedure::ProcInfo] = &[
            $(
                $crate::proto::procedure::ProcInfo {
                    program: $crate::proto::REMOTE_PROGRAM,
                    number: $num,
                    name: stringify!($name),
                    stream: $crate::procedures!(@dir $($dir)?),
                },
            )*
        ];

        /// Hand every procedure declared in this module to `v`, in table order.
        pub fn visit_procedures(v: &mut impl $crate::proto::procedure::ProcedureVisitor) {
            $( v.visit::<$name>(); )*
        }
    };
    (@dir) => { None };
    (@dir $dir:ident) => { Some($crate::proto::procedure::StreamDirection::$dir) };
}
