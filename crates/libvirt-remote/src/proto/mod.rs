//! Layer 2: libvirt's programs — constants, shared types, errors, the procedure table and
//! event messages. Pure data and codecs; no connection state.

pub(crate) mod error;
pub mod events;
pub mod flags;
pub mod limits;
pub mod names;
pub(crate) mod procedure;
pub mod procs;
pub mod typed_params;
pub mod types;

#[doc(inline)]
pub use crate::__procedures as procedures;
pub use error::{ErrorCode, ErrorDomain, ErrorLevel, RemoteError, WireError};
pub use procedure::{
    FdPassing, LibvirtVersion, NeedsFds, ProcInfo, Procedure, ProcedureVisitor, StreamArgs,
    StreamDirection,
};

/// `REMOTE_PROGRAM`: the libvirt remote program.
pub const REMOTE_PROGRAM: u32 = 0x2000_8086;
/// `REMOTE_PROTOCOL_VERSION`.
pub const REMOTE_VERSION: u32 = 1;
/// `QEMU_PROGRAM`: the QEMU driver's own calls ([`procs::qemu`]).
pub const QEMU_PROGRAM: u32 = 0x2000_8087;
/// `QEMU_PROTOCOL_VERSION`.
pub const QEMU_VERSION: u32 = 1;
/// `LXC_PROGRAM`: the LXC driver's own call ([`procs::lxc`]).
pub const LXC_PROGRAM: u32 = 0x0006_8000;
/// `LXC_PROTOCOL_VERSION`.
pub const LXC_VERSION: u32 = 1;
/// `KEEPALIVE_PROGRAM` ("keep").
pub const KEEPALIVE_PROGRAM: u32 = 0x6b65_6570;
/// `KEEPALIVE_PROTOCOL_VERSION`.
pub const KEEPALIVE_VERSION: u32 = 1;
/// `KEEPALIVE_PROC_PING`.
pub const KEEPALIVE_PING: i32 = 1;
/// `KEEPALIVE_PROC_PONG`.
pub const KEEPALIVE_PONG: i32 = 2;

/// The version we speak of each program we know; `None` for any other program (the
/// connection refuses its packets).
pub const fn program_version(program: u32) -> Option<u32> {
    match program {
        REMOTE_PROGRAM => Some(REMOTE_VERSION),
        QEMU_PROGRAM => Some(QEMU_VERSION),
        LXC_PROGRAM => Some(LXC_VERSION),
        KEEPALIVE_PROGRAM => Some(KEEPALIVE_VERSION),
        _ => None,
    }
}

/// The header of a packet a client sends. Every program we know is at version 1; a raw call to
/// one we do not know goes out at the remote program's (its reply is refused anyway).
pub fn header(
    program: u32,
    procedure: i32,
    serial: u32,
    kind: crate::wire::frame::MessageType,
    status: crate::wire::frame::MessageStatus,
) -> crate::wire::frame::Header {
    crate::wire::frame::Header {
        program,
        version: program_version(program).unwrap_or(REMOTE_VERSION),
        procedure,
        kind,
        serial,
        status,
    }
}

/// `VIR_DRV_FEATURE_PROGRAM_KEEPALIVE`: asking for it starts the daemon's pings.
pub const FEATURE_PROGRAM_KEEPALIVE: i32 = 10;
/// `VIR_DRV_FEATURE_REMOTE_EVENT_CALLBACK`: needed before `*_CALLBACK_REGISTER_ANY`.
pub const FEATURE_REMOTE_EVENT_CALLBACK: i32 = 14;
/// `VIR_DRV_FEATURE_REMOTE_CLOSE_CALLBACK`.
pub const FEATURE_REMOTE_CLOSE_CALLBACK: i32 = 15;
