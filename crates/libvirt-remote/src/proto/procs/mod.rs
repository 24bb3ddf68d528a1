//! Typed declarations of procedures, grouped by object: the remote program's, then the QEMU
//! and LXC programs' ([`qemu`], [`lxc`]).
//!
//! Written from libvirt's protocol description (`remote_protocol.x`, `qemu_protocol.x`,
//! `lxc_protocol.x` layouts), not generated or copied from it. Each object module ends with
//! a [`procedures!`](crate::proto::procedures) table whose rows carry the number, the argument and
//! return types, the libvirt release that introduced the procedure (`since`), the stream
//! direction of stream procedures and, for the calls that pass file descriptors, which side
//! carries them ([`FdPassing`](crate::proto::FdPassing)); [`common`] holds layouts shared
//! across objects; the protocol limits are in
//! [`proto::limits`](crate::proto::limits).
//!
//! Every call of the remote program up to [`HIGHEST`] (added in [`HIGHEST_RELEASE`]; both
//! derived from the rows) is declared, and
//! every call of the QEMU and LXC programs. The calls that pass file descriptors
//! (`DomainOpenGraphics`, `DomainOpenGraphicsFd`, `DomainCreateXmlWithFiles`,
//! `DomainCreateWithFiles`, `DomainFdAssociate`, `QemuDomainMonitorCommandWithFiles`,
//! `LxcDomainOpenNamespace`) are declared with their `fds` marker: they go through
//! `call_with_fds` on a unix socket, and the plain `call` refuses them
//! ([`Procedure::refuse_fds`](crate::proto::Procedure::refuse_fds)). Event messages are not
//! calls: they live in [`proto::events`](crate::proto::events).
//!
//! `since` is the release that added the procedure's public API (`libvirt_public.syms`, the
//! API reference), but never before 0.3.0 (the first release with a remote daemon); where
//! the procedure came later than its API (the close callback, callback-based event
//! registration, `CONNECT_GET_URI`) it is the release that added the procedure. A daemon
//! older than `since` answers "unknown procedure", which the client reports as
//! [`ErrorCode::NO_SUPPORT`](crate::proto::ErrorCode::NO_SUPPORT).

pub mod common;
pub mod connect;
pub mod domain;
pub mod domain_tune;
pub mod interface;
pub mod lxc;
pub mod migration;
pub mod network;
pub mod node;
pub mod nodedev;
pub mod nwfilter;
pub mod qemu;
pub mod secret;
pub mod snapshot;
pub mod storage;

use super::procedure::{LibvirtVersion, ProcInfo, ProcedureVisitor};

/// The highest procedure number of the remote program this table knows, derived from its
/// rows (`DOMAIN_ANNOUNCE_INTERFACE`, 456, when written; libvirt 9.0 ends at 443, 11.3 at
/// 453).
pub const HIGHEST: i32 = highest().number;

/// The libvirt release that added [`HIGHEST`]: the newest release whose remote program this
/// table covers whole (derived from that row's `since`).
pub const HIGHEST_RELEASE: LibvirtVersion = highest().since;

/// The remote program's row with the highest number.
const fn highest() -> &'static ProcInfo {
    let mut best = &TABLES[0][0];
    let mut t = 0;
    while t < TABLES.len() {
        let mut r = 0;
        while r < TABLES[t].len() {
            if TABLES[t][r].number > best.number {
                best = &TABLES[t][r];
            }
            r += 1;
        }
        t += 1;
    }
    best
}

/// The modules holding a `procedures!` table, listed once for [`TABLES`],
/// [`visit_procedures`] and `for_each_table!` (`$d` is a `$`, for the macro it declares).
macro_rules! tables {
    ($d:tt $($module:ident),* $(,)?) => {
        /// Every typed procedure, one slice per module.
        pub const TABLES: &[&[ProcInfo]] = &[$($module::PROCEDURES),*];

        /// Hand every typed procedure to `v`: the remote program's in the order of
        /// [`TABLES`], then those of [`OTHER_TABLES`].
        pub fn visit_procedures(v: &mut impl ProcedureVisitor) {
            $($module::visit_procedures(v);)*
            qemu::visit_procedures(v);
            lxc::visit_procedures(v);
        }

        /// Hand the rows of every module, all three programs, to `$callback!` (each module's
        /// `rows!`): how a layer above builds what it needs from the table without the table
        /// knowing it.
        #[allow(unused_macros)]
        macro_rules! for_each_table {
            ($d callback:ident) => {
                $($crate::proto::procs::$module::rows!($d callback);)*
                $crate::proto::procs::qemu::rows!($d callback);
                $crate::proto::procs::lxc::rows!($d callback);
            };
        }
        #[allow(unused_imports)]
        pub(crate) use for_each_table;
    };
}

tables!(
    $
    connect,
    domain,
    domain_tune,
    migration,
    storage,
    network,
    node,
    snapshot,
    interface,
    nodedev,
    secret,
    nwfilter,
);

/// The typed procedures of the programs beside the remote one (QEMU, LXC).
pub const OTHER_TABLES: &[&[ProcInfo]] = &[qemu::PROCEDURES, lxc::PROCEDURES];

/// Every row of every program.
fn all() -> impl Iterator<Item = &'static ProcInfo> {
    TABLES.iter().chain(OTHER_TABLES).flat_map(|t| t.iter())
}

/// Look a procedure of any program up by program and number (for logging raw calls).
pub fn lookup(program: u32, number: i32) -> Option<&'static ProcInfo> {
    all().find(|p| p.program == program && p.number == number)
}

/// Look a procedure of any program up by its Rust name (e.g. `"DomainGetState"`,
/// `"QemuDomainMonitorCommand"`).
pub fn lookup_name(name: &str) -> Option<&'static ProcInfo> {
    all().find(|p| p.name == name)
}

/// Number of typed procedures of the remote program.
pub fn count() -> usize {
    TABLES.iter().map(|t| t.len()).sum()
}

#[cfg(test)]
mod tests {
    use std::collections::{BTreeMap, HashSet};

    use super::{HIGHEST, HIGHEST_RELEASE, TABLES};
    use crate::proto::procedure::{LibvirtVersion, ProcInfo};
    use crate::proto::{REMOTE_PROGRAM, events};

    #[test]
    fn the_highest_number_is_the_newest_release_and_no_event_is_above_it() {
        let newest = rows().map(|p| p.since).max().unwrap();
        assert_eq!(HIGHEST_RELEASE, newest);
        assert!(rows().all(|p| p.number <= HIGHEST));
        assert!(events::EVENT_PROCS.iter().all(|&(n, _)| n < HIGHEST));
    }

    /// Numbers of the remote program that are neither a declared call nor a decoded event
    /// message. libvirt assigned every number from 1 to [`HIGHEST`] and each is now a call (those
    /// that pass descriptors with their `fds` marker) or an event, so the list is empty; a
    /// newer libvirt's numbers go here, with why, until they are declared.
    const NOT_DECLARED: &[(i32, &str)] = &[];

    fn rows() -> impl Iterator<Item = &'static ProcInfo> {
        TABLES.iter().flat_map(|t| t.iter())
    }

    #[test]
    fn numbers_and_names_are_unique() {
        let mut nums = HashSet::new();
        let mut names = HashSet::new();
        for p in rows() {
            assert!(
                nums.insert((p.program, p.number)),
                "duplicate number {}",
                p.number
            );
            assert!(names.insert(p.name), "duplicate name {}", p.name);
        }
    }

    #[test]
    fn every_number_is_a_call_an_event_or_listed() {
        let calls: BTreeMap<i32, &str> = rows().map(|p| (p.number, p.name)).collect();
        let events: BTreeMap<i32, &str> = events::EVENT_PROCS.iter().copied().collect();
        let listed: BTreeMap<i32, &str> = NOT_DECLARED.iter().copied().collect();
        assert_eq!(
            listed.len(),
            NOT_DECLARED.len(),
            "allow-list has duplicates"
        );
        for p in rows() {
            assert_eq!(p.program, REMOTE_PROGRAM, "{}", p.name);
            assert!(
                (1..=HIGHEST).contains(&p.number),
                "{} = {}",
                p.name,
                p.number
            );
        }
        let mut missing = Vec::new();
        for n in 1..=HIGHEST {
            let hits = [calls.get(&n), events.get(&n), listed.get(&n)];
            match hits.iter().flatten().count() {
                1 => {}
                0 => missing.push(n),
                _ => panic!("{n} is in more than one place: {hits:?}"),
            }
        }
        assert!(missing.is_empty(), "undeclared procedures: {missing:?}");
        assert_eq!(
            calls.len() + events.len() + listed.len(),
            HIGHEST as usize,
            "calls {} + events {} + listed {}",
            calls.len(),
            events.len(),
            listed.len()
        );
    }

    #[test]
    fn every_row_names_a_plausible_release() {
        let first = LibvirtVersion::new(0, 3, 0);
        let newest = LibvirtVersion::new(12, 6, 0);
        let v9 = LibvirtVersion::new(9, 0, 0);
        for p in rows() {
            assert!(
                (first..=newest).contains(&p.since),
                "{} since {}",
                p.name,
                p.since
            );
            // libvirt 9.0 is the first release with procedure 443 and has no higher one.
            assert_eq!(
                p.number <= 443,
                p.since <= v9,
                "{} = {} since {}",
                p.name,
                p.number,
                p.since
            );
        }
    }

    #[test]
    fn releases_grow_with_procedure_numbers() {
        // Numbers are handed out in order, so a later number never comes from an earlier
        // release. The only exceptions are early: CONNECT_FIND_STORAGE_POOL_SOURCES (75)
        // was numbered with the 0.4.1 storage calls but exported in 0.4.5, and the
        // NODE_GET_*FREE_MEMORY pair (101, 102) was exported in 0.3.3 and numbered after
        // the storage calls.
        const OUTLIERS: [i32; 3] = [75, 101, 102];
        let mut by_number: Vec<&ProcInfo> = rows().collect();
        by_number.sort_by_key(|p| p.number);
        let mut newest_so_far: Option<&ProcInfo> = None;
        for p in by_number
            .into_iter()
            .filter(|p| !OUTLIERS.contains(&p.number))
        {
            if let Some(prev) = newest_so_far {
                assert!(
                    p.since >= prev.since,
                    "{} ({}) since {} is older than {} ({}) since {}",
                    p.name,
                    p.number,
                    p.since,
                    prev.name,
                    prev.number,
                    prev.since
                );
            }
            if newest_so_far.is_none_or(|prev| p.since > prev.since) {
                newest_so_far = Some(p);
            }
        }
    }

    #[test]
    fn the_visitor_sees_every_table_entry_in_order() {
        use std::fmt::Debug;

        use crate::proto::procedure::{Procedure, ProcedureVisitor};
        use crate::wire::xdr::{Decode, Encode};

        struct Collect(Vec<ProcInfo>);
        impl ProcedureVisitor for Collect {
            fn visit<P: Procedure<Args: Decode + Debug, Ret: Encode + Debug>>(&mut self) {
                self.0.push(ProcInfo::of::<P>());
            }
        }
        let mut seen = Collect(Vec::new());
        super::visit_procedures(&mut seen);
        assert_eq!(seen.0, super::all().copied().collect::<Vec<_>>());
    }

    #[test]
    fn every_qemu_and_lxc_number_is_a_call_or_an_event() {
        use crate::proto::{LXC_PROGRAM, QEMU_PROGRAM};
        let qemu_calls: BTreeMap<i32, &str> = super::qemu::PROCEDURES
            .iter()
            .map(|p| (p.number, p.name))
            .collect();
        let qemu_events: BTreeMap<i32, &str> = events::QEMU_EVENT_PROCS.iter().copied().collect();
        for n in 1..=super::qemu::HIGHEST {
            let hits = [qemu_calls.get(&n), qemu_events.get(&n)];
            assert_eq!(hits.iter().flatten().count(), 1, "QEMU {n}: {hits:?}");
        }
        assert_eq!(
            qemu_calls.len() + qemu_events.len(),
            super::qemu::HIGHEST as usize
        );
        let lxc: Vec<i32> = super::lxc::PROCEDURES.iter().map(|p| p.number).collect();
        assert_eq!(lxc, (1..=super::lxc::HIGHEST).collect::<Vec<_>>());
        for p in super::qemu::PROCEDURES {
            assert_eq!(p.program, QEMU_PROGRAM, "{}", p.name);
            assert!(p.name.starts_with("Qemu"), "{}", p.name);
        }
        for p in super::lxc::PROCEDURES {
            assert_eq!(p.program, LXC_PROGRAM, "{}", p.name);
            assert!(p.name.starts_with("Lxc"), "{}", p.name);
        }
        // The other programs' rows are plausible releases too, in number order.
        let first = LibvirtVersion::new(0, 8, 3);
        let newest = LibvirtVersion::new(12, 6, 0);
        let mut prev = first;
        for p in super::qemu::PROCEDURES {
            assert!((first..=newest).contains(&p.since), "{}", p.name);
            assert!(p.since >= prev, "{} since {} < {prev}", p.name, p.since);
            prev = p.since;
        }
    }

    #[test]
    fn names_are_unique_across_programs() {
        let mut names = HashSet::new();
        for p in super::all() {
            assert!(names.insert(p.name), "duplicate name {}", p.name);
        }
        assert_eq!(names.len(), super::count() + 6 + 1);
    }

    #[test]
    fn descriptor_passing_calls_are_marked() {
        use crate::proto::FdPassing::{self, Both, Call, Reply};
        let want: &[(&str, FdPassing)] = &[
            ("DomainOpenGraphics", Call),
            ("DomainCreateXmlWithFiles", Call),
            ("DomainCreateWithFiles", Call),
            ("DomainOpenGraphicsFd", Reply),
            ("DomainFdAssociate", Call),
            ("QemuDomainMonitorCommandWithFiles", Both),
            ("LxcDomainOpenNamespace", Reply),
        ];
        for (name, fds) in want {
            assert_eq!(super::lookup_name(name).unwrap().fds, Some(*fds), "{name}");
        }
        let marked = super::all().filter(|p| p.fds.is_some()).count();
        assert_eq!(marked, want.len(), "an unlisted row carries an fds marker");
        // No stream procedure passes descriptors.
        assert!(super::all().all(|p| p.fds.is_none() || p.stream.is_none()));
    }

    /// Every row generates an object API method except those listed here by kind: the
    /// handshake's and teardown's own calls, event registrations (the client's subscriptions
    /// own them), the daemon-to-daemon migration steps, stream procedures (the stream API
    /// owns them) and calls that pass descriptors.
    #[test]
    fn every_row_but_the_listed_kinds_has_a_method() {
        const NO_METHOD: &[&str] = &[
            "ConnectOpen",
            "ConnectClose",
            "ConnectSupportsFeature",
            "ConnectRegisterCloseCallback",
            "ConnectUnregisterCloseCallback",
            "ConnectSetIdentity",
            "ConnectDomainEventRegister",
            "ConnectDomainEventDeregister",
        ];
        let mut methods = HashSet::new();
        let mut with = 0;
        for p in super::all() {
            let internal = NO_METHOD.contains(&p.name)
                || p.name.starts_with("Auth")
                || p.name.contains("EventRegister")
                || p.name.contains("EventDeregister")
                || p.name.contains("EventCallback")
                || ["Prepare", "Perform", "Finish", "Confirm", "Begin"]
                    .iter()
                    .any(|step| p.name.starts_with(&format!("DomainMigrate{step}")));
            let expected = !internal && p.stream.is_none() && p.fds.is_none();
            assert_eq!(
                p.method.is_some(),
                expected,
                "{} method {:?}",
                p.name,
                p.method
            );
            if let Some(m) = p.method {
                with += 1;
                assert!(methods.insert(m), "two rows generate {m}");
                let (object, name) = m.split_once("::").expect("Object::method");
                assert!(!object.is_empty() && !name.starts_with("get_"), "{m}");
            }
        }
        assert_eq!(with, 351, "rows with a method");
    }

    #[test]
    fn lookups_agree() {
        let p = super::lookup(REMOTE_PROGRAM, 212).unwrap();
        assert_eq!(p.name, "DomainGetState");
        assert_eq!(p.since, LibvirtVersion::new(0, 9, 2));
        assert_eq!(super::lookup_name("StorageVolUpload").unwrap().number, 208);
        assert!(super::lookup(REMOTE_PROGRAM, 100_000).is_none());
        let q = super::lookup(crate::proto::QEMU_PROGRAM, 1).unwrap();
        assert_eq!(q.name, "QemuDomainMonitorCommand");
        assert_eq!(q.since, LibvirtVersion::new(0, 8, 3));
        assert_eq!(
            super::lookup_name("LxcDomainOpenNamespace").unwrap().number,
            1
        );
        // Same number, other program: not the remote program's ConnectOpen.
        assert_ne!(
            super::lookup(crate::proto::LXC_PROGRAM, 1).unwrap().name,
            "ConnectOpen"
        );
    }
}
