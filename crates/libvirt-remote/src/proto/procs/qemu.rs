//! The QEMU program ([`QEMU_PROGRAM`](crate::proto::QEMU_PROGRAM)): the QEMU driver's own
//! calls beside the remote program — raw monitor and guest-agent commands, attaching to a
//! running qemu, and subscribing to QMP events. Same connection, same header; only the
//! program number differs. Its one message, the monitor event, is decoded by
//! [`proto::events::decode_message`](crate::proto::events::decode_message).
//!
//! A daemon without the QEMU driver (the test driver, LXC) answers these calls with
//! [`ErrorCode::NO_SUPPORT`](crate::proto::ErrorCode::NO_SUPPORT).

use super::common::{CallbackIdArgs, CallbackIdRet};
use super::domain::DomainRet;
use crate::proto::procedures;
use crate::proto::types::NonnullDomain;
use crate::wire::xdr::{LvString, xdr_struct};

crate::proto::flags::flag_set! {
    /// `virDomainQemuMonitorCommandFlags` for [`QemuDomainMonitorCommand`].
    pub struct QemuMonitorCommandFlags: u32 {
        /// The command is a QMP JSON object.
        const DEFAULT = 0;
        /// The command is a human monitor (HMP) command line.
        const HMP = 1;
    }
}

/// `virDomainQemuAgentCommandTimeoutValues`: special `timeout`s of [`QemuDomainAgentCommand`]
/// (other values are seconds).
pub mod agent_timeout {
    /// Wait forever.
    pub const BLOCK: i32 = -2;
    /// The daemon's default.
    pub const DEFAULT: i32 = -1;
    /// Do not wait for an answer.
    pub const NOWAIT: i32 = 0;
    /// The timeout libvirt uses for a guest shutdown.
    pub const SHUTDOWN: i32 = 60;
}

crate::proto::flags::flag_set! {
    /// `virConnectDomainQemuMonitorEventRegisterFlags` for
    /// [`QemuConnectDomainMonitorEventRegister`].
    pub struct QemuMonitorEventRegisterFlags: u32 {
        /// `event` is a regular expression.
        const REGEX = 1;
        /// Match `event` case-insensitively.
        const NOCASE = 2;
    }
}

xdr_struct! {
    /// `qemu_domain_monitor_command_args` (= `…_with_files_args`).
    pub struct QemuDomainMonitorCommandArgs {
        /// The domain.
        pub dom: NonnullDomain,
        /// The command: QMP JSON, or HMP text with [`QemuMonitorCommandFlags::HMP`].
        pub cmd: LvString,
        /// Monitor command flags.
        pub flags: QemuMonitorCommandFlags,
    }
}

xdr_struct! {
    /// `qemu_domain_monitor_command_ret` (= `…_with_files_ret`).
    pub struct QemuDomainMonitorCommandRet {
        /// The monitor's answer (QMP: a JSON object; HMP: text, often empty on success).
        pub result: LvString,
    }
}

xdr_struct! {
    /// `qemu_domain_attach_args`.
    pub struct QemuDomainAttachArgs {
        /// Process id of the qemu to take over.
        pub pid_value: u32,
        /// Must be 0.
        pub flags: u32,
    }
}

xdr_struct! {
    /// `qemu_domain_agent_command_args`.
    pub struct QemuDomainAgentCommandArgs {
        /// The domain.
        pub dom: NonnullDomain,
        /// The guest-agent command, a JSON object (`{"execute":"guest-ping"}`).
        pub cmd: LvString,
        /// Seconds to wait, or one of [`agent_timeout`].
        pub timeout: i32,
        /// Must be 0.
        pub flags: u32,
    }
}

xdr_struct! {
    /// `qemu_domain_agent_command_ret`.
    pub struct QemuDomainAgentCommandRet {
        /// The agent's answer (`None` with [`agent_timeout::NOWAIT`]).
        pub result: Option<LvString>,
    }
}

xdr_struct! {
    /// `qemu_connect_domain_monitor_event_register_args`.
    pub struct QemuConnectDomainMonitorEventRegisterArgs {
        /// One domain, or `None` for all.
        pub dom: Option<NonnullDomain>,
        /// The QMP event name to match, or `None` for all.
        pub event: Option<LvString>,
        /// Matching flags.
        pub flags: QemuMonitorEventRegisterFlags,
    }
}

/// This module's procedure table as data: `rows!(callback)` hands every row to `callback!`,
/// as quinn's `apply_params!` does. [`procedures!`](crate::proto::procedures) declares the types
/// and the table from the rows; the client expands the same rows into the object API.
macro_rules! rows { ($callback:ident) => { $callback! {
    [qemu]
    table PROCEDURES, program QEMU_PROGRAM;
    /// `virDomainQemuMonitorCommand`: one QMP or HMP command. The daemon marks the domain
    /// tainted (`custom-monitor`).
    QemuDomainMonitorCommand = 1: QemuDomainMonitorCommandArgs => QemuDomainMonitorCommandRet,
        since "0.8.3";
        => Domain::qemu_monitor_command(dom = self, cmd, flags) -> result[0];
    /// `virDomainQemuAttach`: adopt a qemu started outside libvirt.
    QemuDomainAttach = 2: QemuDomainAttachArgs => DomainRet, since "0.9.4";
        => Connect::qemu_domain_attach(pid_value, flags) -> dom[0];
    /// `virDomainQemuAgentCommand`: one raw guest-agent command.
    QemuDomainAgentCommand = 3: QemuDomainAgentCommandArgs => QemuDomainAgentCommandRet,
        since "0.10.0";
        => Domain::qemu_agent_command(dom = self, cmd, timeout, flags) -> result[0];
    /// `virConnectDomainQemuMonitorEventRegister`: QMP events arrive as
    /// [`Event::QemuMonitor`](crate::proto::events::Event::QemuMonitor) with the returned
    /// callback id.
    QemuConnectDomainMonitorEventRegister = 4: QemuConnectDomainMonitorEventRegisterArgs
        => CallbackIdRet, since "1.2.3";
    /// `virConnectDomainQemuMonitorEventDeregister`.
    QemuConnectDomainMonitorEventDeregister = 5: CallbackIdArgs => (), since "1.2.3";
    /// `virDomainQemuMonitorCommandWithFiles`: [`QemuDomainMonitorCommand`] passing
    /// descriptors to qemu, and maybe receiving some.
    QemuDomainMonitorCommandWithFiles = 7: QemuDomainMonitorCommandArgs
        => QemuDomainMonitorCommandRet, since "8.2.0", fds Both;
} } }
#[allow(unused_imports)] // expanded by the layers above, when they are built
pub(crate) use rows;

rows!(procedures);

/// The highest procedure number of the QEMU program (libvirt 8.2+).
pub const HIGHEST: i32 = 7;
