//! The procedure table: one declaration per procedure, typed args and return.
//!
//! Adding a procedure is one line in a [`procedures!`](crate::procedures) block (plus its
//! `xdr_struct!` args/ret types when they are not void or shared).

use crate::wire::xdr::{Decode, Encode};

/// Which way a stream procedure moves data, seen from the client.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum StreamDirection {
    /// The client sends data (`@writestream`, e.g. `STORAGE_VOL_UPLOAD`).
    Upload,
    /// The server sends data (`@readstream`, e.g. `STORAGE_VOL_DOWNLOAD`).
    Download,
}

/// The arguments of a stream procedure. They decide whether the stream is sparse (for volume
/// transfers, a flag in the arguments), so the core's hole rules follow from what was sent
/// and cannot disagree with it.
pub trait StreamArgs {
    /// True when these arguments open a sparse stream: holes may travel both ways.
    fn sparse(&self) -> bool {
        false
    }
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
/// entry, and a `&[ProcInfo]` table named by the first line.
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
    };
    (@dir) => { None };
    (@dir $dir:ident) => { Some($crate::proto::procedure::StreamDirection::$dir) };
}
