//! Test data: deterministic bytes, cheap to regenerate for comparison.

/// `len` pseudo-random bytes (xorshift64 from `seed`); the same `seed` gives the same bytes.
pub fn pattern(len: usize, seed: u64) -> Vec<u8> {
    let mut x = seed | 1;
    let mut v = Vec::with_capacity(len + 8);
    while v.len() < len {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        v.extend_from_slice(&x.to_le_bytes());
    }
    v.truncate(len);
    v
}

#[cfg(test)]
mod tests {
    #[test]
    fn same_seed_same_bytes() {
        assert_eq!(super::pattern(1000, 7), super::pattern(1000, 7));
        assert_ne!(super::pattern(1000, 7), super::pattern(1000, 8));
        assert_eq!(super::pattern(13, 1).len(), 13);
    }
}
