//! Typed declarations of remote-program procedures, grouped by object.
//!
//! Written from libvirt's protocol description (`remote_protocol.x` layouts), not generated or
//! copied from it. Each object module ends with a [`procedures!`](crate::procedures) table;
//! [`common`] holds layouts shared across objects and [`limits`] the protocol limits the
//! declarations need beyond [`proto::limits`](crate::proto::limits).
//!
//! Every declared procedure exists in libvirt 9.0 (procedures 1..=443) unless its doc says
//! otherwise. Not declared: migration, SASL, the legacy (non-callback) event registration,
//! and calls that pass file descriptors.

pub mod common;
pub mod connect;
pub mod domain;
pub mod interface;
pub mod limits;
pub mod network;
pub mod node;
pub mod nodedev;
pub mod nwfilter;
pub mod secret;
pub mod snapshot;
pub mod storage;

use super::procedure::{ProcInfo, ProcedureVisitor};

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
    connect, domain, storage, network, node, snapshot, interface, nodedev, secret, nwfilter,
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
    fn the_visitor_sees_every_table_entry_in_order() {
        use std::fmt::Debug;

        use crate::proto::procedure::{ProcInfo, Procedure, ProcedureVisitor};
        use crate::wire::xdr::{Decode, Encode};

        struct Collect(Vec<ProcInfo>);
        impl ProcedureVisitor for Collect {
            fn visit<P: Procedure<Args: Decode + Debug, Ret: Encode + Debug>>(&mut self) {
                self.0.push(ProcInfo {
                    program: P::PROGRAM,
                    number: P::NUMBER,
                    name: P::NAME,
                    stream: P::STREAM,
                });
            }
        }
        let mut seen = Collect(Vec::new());
        super::visit_procedures(&mut seen);
        let table: Vec<ProcInfo> = super::TABLES
            .iter()
            .flat_map(|t| t.iter())
            .copied()
            .collect();
        assert_eq!(seen.0, table);
    }

    #[test]
    fn lookups_agree() {
        let p = super::lookup(REMOTE_PROGRAM, 212).unwrap();
        assert_eq!(p.name, "DomainGetState");
        assert_eq!(super::lookup_name("StorageVolUpload").unwrap().number, 208);
        assert!(super::lookup(REMOTE_PROGRAM, 100_000).is_none());
    }
}
