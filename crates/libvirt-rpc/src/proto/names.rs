//! Names for the numbers users print: a domain's state and the reason for it.
//!
//! Open sets like [`ErrorCode`](super::ErrorCode): a newtype over the wire's `int`, named
//! constants, and a `Display` that prints virsh's words for known values and the number for
//! the others, so a newer daemon's value stays representable and printable. The numbering is
//! libvirt's (`virDomainState`, `virDomain*Reason` in `libvirt-domain.h`); the words are
//! those `virsh domstate --reason` prints.

use std::fmt;

use super::procs::domain::{DomainGetInfoRet, DomainGetStateRet};

/// `virDomainState`: what [`DomainGetState`](super::procs::domain::DomainGetState) and
/// [`DomainGetInfo`](super::procs::domain::DomainGetInfo) report.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct DomainState(pub i32);

/// One row per state: constant, number, virsh's word, the reasons (`virDomain*Reason`, in
/// number order from 0) with virsh's words.
macro_rules! states {
    ($( $(#[$m:meta])* $name:ident = $v:literal, $text:literal,
        reasons [ $( $rname:ident $rtext:literal ),* $(,)? ]; )*) => {
        impl DomainState {
            $( $(#[$m])* pub const $name: Self = Self($v); )*

            /// libvirt's name for this state (`RUNNING`), if it is one we know.
            pub fn name(self) -> Option<&'static str> {
                match self.0 { $( $v => Some(stringify!($name)), )* _ => None }
            }

            /// virsh's word for this state (`running`, `shut off`), if it is one we know.
            pub fn text(self) -> Option<&'static str> {
                match self.0 { $( $v => Some($text), )* _ => None }
            }

            /// libvirt's names of this state's reasons, indexed by reason number
            /// (`virDomainShutoffReason` for [`SHUTOFF`](Self::SHUTOFF): `UNKNOWN`,
            /// `SHUTDOWN`, `DESTROYED`, …); empty for an unknown state.
            pub fn reason_names(self) -> &'static [&'static str] {
                match self.0 { $( $v => &[$( stringify!($rname) ),*], )* _ => &[] }
            }

            /// virsh's words for this state's reasons, indexed like
            /// [`reason_names`](Self::reason_names).
            pub fn reason_texts(self) -> &'static [&'static str] {
                match self.0 { $( $v => &[$( $rtext ),*], )* _ => &[] }
            }
        }
    };
}

states! {
    /// No state.
    NOSTATE = 0, "no state", reasons [UNKNOWN "unknown"];
    /// Running.
    RUNNING = 1, "running", reasons [
        UNKNOWN "unknown", BOOTED "booted", MIGRATED "migrated", RESTORED "restored",
        FROM_SNAPSHOT "from snapshot", UNPAUSED "unpaused",
        MIGRATION_CANCELED "migration canceled", SAVE_CANCELED "save canceled",
        WAKEUP "event wakeup", CRASHED "crashed", POSTCOPY "post-copy",
        POSTCOPY_FAILED "post-copy failed",
    ];
    /// Blocked on a resource (virsh says "idle").
    BLOCKED = 2, "idle", reasons [UNKNOWN "unknown"];
    /// Paused.
    PAUSED = 3, "paused", reasons [
        UNKNOWN "unknown", USER "user", MIGRATION "migrating", SAVE "saving",
        DUMP "dumping", IOERROR "I/O error", WATCHDOG "watchdog",
        FROM_SNAPSHOT "from snapshot", SHUTTING_DOWN "shutting down",
        SNAPSHOT "creating snapshot", CRASHED "crashed", STARTING_UP "starting up",
        POSTCOPY "post-copy", POSTCOPY_FAILED "post-copy failed", API_ERROR "api error",
    ];
    /// Being shut down.
    SHUTDOWN = 4, "in shutdown", reasons [UNKNOWN "unknown", USER "user"];
    /// Shut off.
    SHUTOFF = 5, "shut off", reasons [
        UNKNOWN "unknown", SHUTDOWN "shutdown", DESTROYED "destroyed", CRASHED "crashed",
        MIGRATED "migrated", SAVED "saved", FAILED "failed", FROM_SNAPSHOT "from snapshot",
        DAEMON "daemon",
    ];
    /// Crashed.
    CRASHED = 6, "crashed", reasons [UNKNOWN "unknown", PANICKED "panicked"];
    /// Suspended by guest power management.
    PMSUSPENDED = 7, "pmsuspended", reasons [UNKNOWN "unknown"];
}

impl DomainState {
    /// Whether the domain runs (or could run at once): running, idle or paused.
    pub fn is_active(self) -> bool {
        matches!(self, Self::RUNNING | Self::BLOCKED | Self::PAUSED)
    }

    /// This state with a reason number.
    pub fn with_reason(self, reason: i32) -> DomainStateReason {
        DomainStateReason {
            state: self,
            reason,
        }
    }
}

impl fmt::Debug for DomainState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.name() {
            Some(n) => write!(f, "{n}({})", self.0),
            None => write!(f, "DomainState({})", self.0),
        }
    }
}

/// virsh's word (`shut off`); `state 9` for a state we do not know.
impl fmt::Display for DomainState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.text() {
            Some(t) => f.write_str(t),
            None => write!(f, "state {}", self.0),
        }
    }
}

impl From<i32> for DomainState {
    fn from(v: i32) -> Self {
        Self(v)
    }
}

/// A state and its reason, whose meaning depends on the state (`virDomainRunningReason`,
/// `virDomainShutoffReason`, …).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct DomainStateReason {
    /// The state.
    pub state: DomainState,
    /// The state-specific reason number.
    pub reason: i32,
}

impl DomainStateReason {
    /// libvirt's name of the reason within its state (`DESTROYED`), if we know it.
    pub fn reason_name(&self) -> Option<&'static str> {
        let i = usize::try_from(self.reason).ok()?;
        self.state.reason_names().get(i).copied()
    }

    /// virsh's words for the reason (`destroyed`), if we know it.
    pub fn reason_text(&self) -> Option<&'static str> {
        let i = usize::try_from(self.reason).ok()?;
        self.state.reason_texts().get(i).copied()
    }
}

/// As `virsh domstate --reason`: `shut off (destroyed)`; an unknown reason prints its
/// number (`paused (reason 42)`).
impl fmt::Display for DomainStateReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.reason_text() {
            Some(r) => write!(f, "{} ({r})", self.state),
            None => write!(f, "{} (reason {})", self.state, self.reason),
        }
    }
}

impl DomainGetStateRet {
    /// The state and reason, named.
    pub fn named(&self) -> DomainStateReason {
        DomainState(self.state).with_reason(self.reason)
    }
}

impl DomainGetInfoRet {
    /// The state, named (a state above `i32::MAX` cannot be sent by libvirt, whose C type
    /// is an `unsigned char`; it reads as -1).
    pub fn domain_state(&self) -> DomainState {
        DomainState(i32::try_from(self.state).unwrap_or(-1))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::procs::domain::{shutoff_reason, state};

    #[test]
    fn states_print_as_virsh_does_and_unknown_ones_stay_numbers() {
        assert_eq!(DomainState::RUNNING.to_string(), "running");
        assert_eq!(DomainState::SHUTOFF.to_string(), "shut off");
        assert_eq!(DomainState::BLOCKED.to_string(), "idle");
        assert_eq!(format!("{:?}", DomainState::PAUSED), "PAUSED(3)");
        assert_eq!(DomainState(9).to_string(), "state 9");
        assert_eq!(format!("{:?}", DomainState(9)), "DomainState(9)");
        assert_eq!(DomainState(-1).name(), None);
        assert!(DomainState(9).reason_names().is_empty());
        // The constants agree with the wire constants of the domain procedures.
        for (n, s) in [
            (state::NOSTATE, DomainState::NOSTATE),
            (state::RUNNING, DomainState::RUNNING),
            (state::BLOCKED, DomainState::BLOCKED),
            (state::PAUSED, DomainState::PAUSED),
            (state::SHUTDOWN, DomainState::SHUTDOWN),
            (state::SHUTOFF, DomainState::SHUTOFF),
            (state::CRASHED, DomainState::CRASHED),
            (state::PMSUSPENDED, DomainState::PMSUSPENDED),
        ] {
            assert_eq!(DomainState::from(n), s);
            assert!(s.name().is_some() && s.text().is_some());
            assert_eq!(s.reason_names().len(), s.reason_texts().len(), "{s:?}");
            assert_eq!(s.reason_names()[0], "UNKNOWN");
        }
        assert!(DomainState::PAUSED.is_active() && !DomainState::SHUTOFF.is_active());
    }

    #[test]
    fn reasons_are_named_per_state() {
        let r = DomainState::SHUTOFF.with_reason(shutoff_reason::DESTROYED);
        assert_eq!(r.to_string(), "shut off (destroyed)");
        assert_eq!(r.reason_name(), Some("DESTROYED"));
        assert_eq!(
            DomainState::SHUTOFF
                .with_reason(shutoff_reason::DAEMON)
                .reason_name(),
            Some("DAEMON")
        );
        // The same number means different things in different states.
        assert_eq!(
            DomainState::RUNNING.with_reason(1).to_string(),
            "running (booted)"
        );
        assert_eq!(
            DomainState::PAUSED.with_reason(1).to_string(),
            "paused (user)"
        );
        assert_eq!(
            DomainState::PAUSED.with_reason(14).reason_name(),
            Some("API_ERROR")
        );
        assert_eq!(
            DomainState::RUNNING.with_reason(11).reason_name(),
            Some("POSTCOPY_FAILED")
        );
        // Unknown reasons and states print their numbers.
        assert_eq!(
            DomainState::PAUSED.with_reason(42).to_string(),
            "paused (reason 42)"
        );
        assert_eq!(DomainState::PAUSED.with_reason(-1).reason_name(), None);
        assert_eq!(
            DomainState(12).with_reason(0).to_string(),
            "state 12 (reason 0)"
        );
    }

    #[test]
    fn replies_expose_named_states() {
        let st = DomainGetStateRet {
            state: state::PAUSED,
            reason: 5,
        };
        assert_eq!(st.named().to_string(), "paused (I/O error)");
        assert_eq!(st.named().reason_name(), Some("IOERROR"));
        let info = DomainGetInfoRet {
            state: 1,
            max_mem: 0,
            memory: 0,
            nr_virt_cpu: 1,
            cpu_time: 0,
        };
        assert_eq!(info.domain_state(), DomainState::RUNNING);
        let odd = DomainGetInfoRet {
            state: u32::MAX,
            ..info
        };
        assert_eq!(odd.domain_state(), DomainState(-1));
    }
}
