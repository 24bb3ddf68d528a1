//! Maps and sets keyed by call serial, with a cheap hasher.
//!
//! Every call looks its serial up several times (the core's pending calls, the client's
//! waiting slot, the abandoned set). With std's `SipHash` that was ~1,000 instructions of the
//! ~10,700 a sequential call costs in user space (docs/benchmarks.md, "Client instructions
//! per call"). The keys are serials we allocate ourselves, one after the other; the peer
//! never chooses a key that is inserted (a reply's serial is only looked up), so there is no
//! collision flooding to defend against, and a multiplicative hash spreads consecutive
//! serials over the table's buckets and control bytes.

use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};

/// A map keyed by serial (or any small integer id).
pub(crate) type SerialMap<K, V> = HashMap<K, V, BuildHasherDefault<SerialHasher>>;
/// A set of serials.
pub(crate) type SerialSet<K> = HashSet<K, BuildHasherDefault<SerialHasher>>;

/// Fibonacci hashing of an integer key: one multiplication. hashbrown takes the bucket from
/// the low bits and the control byte from the top 7, so the product's high bits are folded
/// into the low ones.
#[derive(Default, Clone, Copy)]
pub(crate) struct SerialHasher(u64);

const K: u64 = 0x9e37_79b9_7f4a_7c15;

impl Hasher for SerialHasher {
    fn finish(&self) -> u64 {
        let h = self.0.wrapping_mul(K);
        h ^ (h >> 32)
    }

    fn write(&mut self, bytes: &[u8]) {
        // Not used by integer keys; correct for any other.
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(b)).wrapping_mul(K);
        }
    }

    fn write_u32(&mut self, n: u32) {
        self.0 = (self.0.rotate_left(32) ^ u64::from(n)).wrapping_add(1);
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0.rotate_left(32) ^ n).wrapping_add(1);
    }
}

#[cfg(test)]
mod tests {
    use std::hash::BuildHasher;

    use super::*;

    #[test]
    fn consecutive_serials_spread_over_buckets_and_control_bytes() {
        let b = BuildHasherDefault::<SerialHasher>::default();
        let hashes: Vec<u64> = (0u32..1024).map(|s| b.hash_one(s)).collect();
        let buckets: HashSet<u64> = hashes.iter().map(|h| h & 1023).collect();
        let top7: HashSet<u64> = hashes.iter().map(|h| h >> 57).collect();
        assert!(
            buckets.len() > 600,
            "{} distinct buckets of 1024",
            buckets.len()
        );
        assert_eq!(top7.len(), 128, "every control byte value is used");
    }

    #[test]
    fn the_maps_work_as_maps() {
        let mut m: SerialMap<u32, u32> = SerialMap::default();
        for s in 0..10_000u32 {
            m.insert(s.wrapping_mul(7), s);
        }
        assert_eq!(m.len(), 10_000);
        assert_eq!(m.get(&(42 * 7)), Some(&42));
        let mut set: SerialSet<u64> = SerialSet::default();
        assert!(set.insert(u64::MAX) && !set.insert(u64::MAX));
    }
}
