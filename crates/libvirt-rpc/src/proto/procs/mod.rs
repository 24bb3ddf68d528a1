//! Typed declarations of remote-program procedures, grouped by object.
//!
//! Written from libvirt's protocol description (`remote_protocol.x` layouts), not generated or
//! copied from it. Each object module ends with a [`procedures!`](crate::procedures) table;
//! [`common`] holds layouts shared across objects; the protocol limits are in
//! [`proto::limits`](crate::proto::limits).
//!
//! Every declared procedure exists in libvirt 9.0 (procedures 1..=443) unless its doc says
//! otherwise. Not declared: migration, SASL, the legacy (non-callback) event registration,
//! and calls that pass file descriptors.

pub mod common;
pub mod connect;
pub mod domain;
pub mod interface;
pub mod network;
pub mod node;
pub mod nodedev;
pub mod nwfilter;
pub mod secret;
pub mod snapshot;
pub mod storage;

use super::procedure::ProcInfo;

/// Every typed procedure, one slice per module.
pub const TABLES: &[&[ProcInfo]] = &[
    connect::PROCEDURES,
    domain::PROCEDURES,
    storage::PROCEDURES,
    network::PROCEDURES,
    node::PROCEDURES,
    snapshot::PROCEDURES,
    interface::PROCEDURES,
    nodedev::PROCEDURES,
    secret::PROCEDURES,
    nwfilter::PROCEDURES,
];

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
    use std::collections::HashSet;

    use crate::proto::REMOTE_PROGRAM;

    #[test]
    fn numbers_and_names_are_unique() {
        let mut nums = HashSet::new();
        let mut names = HashSet::new();
        for p in super::TABLES.iter().flat_map(|t| t.iter()) {
            assert!(
                nums.insert((p.program, p.number)),
                "duplicate number {}",
                p.number
            );
            assert!(names.insert(p.name), "duplicate name {}", p.name);
        }
    }

    #[test]
    fn every_number_exists_in_libvirt_9_0() {
        for p in super::TABLES.iter().flat_map(|t| t.iter()) {
            assert_eq!(p.program, REMOTE_PROGRAM, "{}", p.name);
            assert!((1..=443).contains(&p.number), "{} = {}", p.name, p.number);
        }
    }

    #[test]
    fn lookups_agree() {
        let p = super::lookup(REMOTE_PROGRAM, 212).unwrap();
        assert_eq!(p.name, "DomainGetState");
        assert_eq!(super::lookup_name("StorageVolUpload").unwrap().number, 208);
        assert!(super::lookup(REMOTE_PROGRAM, 100_000).is_none());
    }
}
