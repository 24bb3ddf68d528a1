//! Typed declarations of remote-program procedures, grouped by object.
//!
//! Written from libvirt's protocol description (`remote_protocol.x` layouts), not generated or
//! copied from it. Each object module ends with a [`procedures!`](crate::procedures) table
//! whose rows carry the number, the argument and return types, the libvirt release that
//! introduced the procedure (`since`) and the stream direction of stream procedures;
//! [`common`] holds layouts shared across objects; the protocol limits are in
//! [`proto::limits`](crate::proto::limits).
//!
//! Every call of the remote program up to [`HIGHEST`] (libvirt 12.6.0) is declared, except
//! the calls that pass file descriptors
//! (`DomainOpenGraphics`, `DomainOpenGraphicsFd`, `DomainCreateXmlWithFiles`,
//! `DomainCreateWithFiles`, `DomainFdAssociate`). Event messages are not calls: they live in
//! [`proto::events`](crate::proto::events).
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
pub mod migration;
pub mod network;
pub mod node;
pub mod nodedev;
pub mod nwfilter;
pub mod secret;
pub mod snapshot;
pub mod storage;

use super::procedure::{ProcInfo, ProcedureVisitor};

/// The highest procedure number of the remote program this table knows: libvirt 12.6.0's
/// `DOMAIN_ANNOUNCE_INTERFACE`. libvirt 9.0 ends at 443, 11.3 at 453.
pub const HIGHEST: i32 = 456;

/// The modules holding a `procedures!` table, listed once for [`TABLES`] and
/// [`visit_procedures`].
macro_rules! tables {
    ($($module:ident),* $(,)?) => {
        /// Every typed procedure, one slice per module.
        pub const TABLES: &[&[ProcInfo]] = &[$($module::PROCEDURES),*];

        /// Hand every typed procedure to `v`, in the order of [`TABLES`].
        pub fn visit_procedures(v: &mut impl ProcedureVisitor) {
            $($module::visit_procedures(v);)*
        }
    };
}

tables!(
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

/// Look a procedure up by program and number (for logging raw calls).
pub fn lookup(program: u32, number: i32) -> Option<&'static ProcInfo> {
    TABLES
        .iter()
        .flat_map(|t| t.iter())
        .find(|p| p.program == program && p.number == number)
}

/// Look a procedure up by its Rust name (e.g. `"DomainGetState"`).
pub fn lookup_name(name: &str) -> Option<&'static ProcInfo> {
    TABLES
        .iter()
        .flat_map(|t| t.iter())
        .find(|p| p.name == name)
}

/// Number of typed procedures.
pub fn count() -> usize {
    TABLES.iter().map(|t| t.len()).sum()
}

#[cfg(test)]
mod tests {
    use std::collections::{BTreeMap, HashSet};

    use super::{HIGHEST, TABLES};
    use crate::proto::procedure::{LibvirtVersion, ProcInfo};
    use crate::proto::{REMOTE_PROGRAM, events};

    /// Numbers of the remote program that are neither a declared call nor a decoded event
    /// message. libvirt assigned every number from 1 to 456, so each entry is work pending
    /// elsewhere; the coverage test fails when an entry gets declared (remove it then).
    const NOT_DECLARED: &[(i32, &str)] = &[
        // Calls that pass file descriptors (CALL_WITH_FDS / REPLY_WITH_FDS over a unix
        // socket): pending descriptor-passing support in the core.
        (249, "DOMAIN_OPEN_GRAPHICS: passes an fd"),
        (309, "DOMAIN_CREATE_XML_WITH_FILES: passes fds"),
        (310, "DOMAIN_CREATE_WITH_FILES: passes fds"),
        (343, "DOMAIN_OPEN_GRAPHICS_FD: returns an fd"),
        (443, "DOMAIN_FD_ASSOCIATE: passes fds"),
        // Event messages the event table does not decode yet (the legacy, non-callback
        // domain events and the 11.x/12.x ones): the event-table work.
        (107, "DOMAIN_EVENT_LIFECYCLE: event message"),
        (169, "DOMAIN_EVENT_REBOOT: event message"),
        (170, "DOMAIN_EVENT_RTC_CHANGE: event message"),
        (171, "DOMAIN_EVENT_WATCHDOG: event message"),
        (172, "DOMAIN_EVENT_IO_ERROR: event message"),
        (173, "DOMAIN_EVENT_GRAPHICS: event message"),
        (195, "DOMAIN_EVENT_IO_ERROR_REASON: event message"),
        (224, "DOMAIN_EVENT_CONTROL_ERROR: event message"),
        (241, "DOMAIN_EVENT_BLOCK_JOB: event message"),
        (248, "DOMAIN_EVENT_DISK_CHANGE: event message"),
        (268, "DOMAIN_EVENT_TRAY_CHANGE: event message"),
        (269, "DOMAIN_EVENT_PMWAKEUP: event message"),
        (270, "DOMAIN_EVENT_PMSUSPEND: event message"),
        (276, "DOMAIN_EVENT_BALLOON_CHANGE: event message"),
        (292, "DOMAIN_EVENT_PMSUSPEND_DISK: event message"),
        (311, "DOMAIN_EVENT_DEVICE_REMOVED: event message"),
        (453, "DOMAIN_EVENT_NIC_MAC_CHANGE: event message"),
        (454, "DOMAIN_EVENT_VCPU_REMOVED: event message"),
        (
            455,
            "DOMAIN_EVENT_CALLBACK_CHANNEL_LIFECYCLE: event message",
        ),
    ];

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
                self.0.push(ProcInfo {
                    program: P::PROGRAM,
                    number: P::NUMBER,
                    name: P::NAME,
                    stream: P::STREAM,
                    since: P::SINCE,
                });
            }
        }
        let mut seen = Collect(Vec::new());
        super::visit_procedures(&mut seen);
        assert_eq!(seen.0, rows().copied().collect::<Vec<_>>());
    }

    #[test]
    fn lookups_agree() {
        let p = super::lookup(REMOTE_PROGRAM, 212).unwrap();
        assert_eq!(p.name, "DomainGetState");
        assert_eq!(p.since, LibvirtVersion::new(0, 9, 2));
        assert_eq!(super::lookup_name("StorageVolUpload").unwrap().number, 208);
        assert!(super::lookup(REMOTE_PROGRAM, 100_000).is_none());
    }
}
