//! Typed declarations of remote-program procedures, grouped by object.
//!
//! Written from libvirt's protocol description (`remote_protocol.x` layouts), not generated or
//! copied from it. Each module ends with a [`procedures!`](crate::procedures) table.

pub mod connect;
pub mod domain;
pub mod network;
pub mod storage;

use super::procedure::ProcInfo;

/// Every typed procedure, one slice per module.
pub const TABLES: &[&[ProcInfo]] =
    &[connect::PROCEDURES, domain::PROCEDURES, storage::PROCEDURES, network::PROCEDURES];

/// Look a procedure up by program and number (for logging raw calls).
pub fn lookup(program: u32, number: i32) -> Option<&'static ProcInfo> {
    TABLES.iter().flat_map(|t| t.iter()).find(|p| p.program == program && p.number == number)
}

/// Number of typed procedures.
pub fn count() -> usize {
    TABLES.iter().map(|t| t.len()).sum()
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    #[test]
    fn numbers_and_names_are_unique() {
        let mut nums = HashSet::new();
        let mut names = HashSet::new();
        for p in super::TABLES.iter().flat_map(|t| t.iter()) {
            assert!(nums.insert((p.program, p.number)), "duplicate number {}", p.number);
            assert!(names.insert(p.name), "duplicate name {}", p.name);
        }
    }
}
