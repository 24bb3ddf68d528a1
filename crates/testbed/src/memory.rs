//! Whether this process's memory still holds a secret after everything that held it was
//! dropped: the check behind "secrets live in zeroizing buffers".
//!
//! [`Needle::new`] keeps the secret only masked (each byte XOR `0xA5`), so the pattern being
//! searched for is not itself in memory; [`Needle::is_in_memory`] reads every private writable
//! mapping of the process (`/proc/self/maps`, `/proc/self/mem`: heap, anonymous memory, thread
//! stacks) and looks for the unmasked bytes. Freed memory keeps its bytes until it is reused,
//! so a secret dropped without being wiped is found unless something overwrote it since.
//! Linux only.

use std::fs::File;
use std::os::unix::fs::FileExt;

const MASK: u8 = 0xa5;

/// A secret to look for, held masked.
#[derive(Clone)]
pub struct Needle(Vec<u8>);

impl std::fmt::Debug for Needle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Needle({} bytes)", self.0.len())
    }
}

impl Needle {
    /// Masks `secret` (at least 8 bytes, so chance matches do not count). The caller wipes
    /// its own copy.
    pub fn new(secret: &[u8]) -> Self {
        assert!(secret.len() >= 8, "a needle of at least 8 bytes");
        Self(secret.iter().map(|b| b ^ MASK).collect())
    }

    /// The masked secret occurs somewhere in the process's private writable memory.
    pub fn is_in_memory(&self) -> bool {
        let Ok(maps) = std::fs::read_to_string("/proc/self/maps") else {
            return false;
        };
        let Ok(mem) = File::open("/proc/self/mem") else {
            return false;
        };
        let first = self.0[0] ^ MASK;
        let mut buf = vec![0u8; 1 << 20];
        for line in maps.lines() {
            let mut f = line.split_whitespace();
            let (Some(range), Some(perms)) = (f.next(), f.next()) else {
                continue;
            };
            if !perms.starts_with("rw") || !perms.ends_with('p') {
                continue;
            }
            let Some((a, b)) = range.split_once('-') else {
                continue;
            };
            let (Ok(start), Ok(end)) = (u64::from_str_radix(a, 16), u64::from_str_radix(b, 16))
            else {
                continue;
            };
            // Overlapping reads, so a secret across two chunks is seen.
            let step = (buf.len() - self.0.len()) as u64;
            let mut at = start;
            while at < end {
                let want = usize::try_from(end - at).map_or(buf.len(), |n| n.min(buf.len()));
                let Ok(n) = mem.read_at(&mut buf[..want], at) else {
                    break;
                };
                if n == 0 {
                    break;
                }
                let hay = &buf[..n];
                let found = hay
                    .windows(self.0.len())
                    .any(|w| w[0] == first && w.iter().zip(&self.0).all(|(b, m)| *b == m ^ MASK));
                if found {
                    return true;
                }
                at += step;
            }
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_a_secret_until_it_is_wiped() {
        let mut secret = format!(
            "needle-{}-{:?}",
            std::process::id(),
            std::time::Instant::now()
        )
        .into_bytes();
        let needle = Needle::new(&secret);
        assert!(needle.is_in_memory(), "a live secret is found");
        secret.fill(0);
        std::hint::black_box(&secret);
        drop(secret);
        assert!(!needle.is_in_memory(), "a wiped secret is not");
    }
}
