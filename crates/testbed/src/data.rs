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

/// A source that yields `left` bytes of `0xab` (at most 64 KiB per read), then fails every
/// read with `io::Error::other(message)`: an upload whose source breaks mid-transfer.
#[derive(Debug)]
pub struct FailAfter {
    /// Bytes still to yield before failing.
    pub left: u64,
    /// The error's message.
    pub message: &'static str,
}

impl FailAfter {
    /// `left` bytes, then an error saying `message`.
    pub fn new(left: u64, message: &'static str) -> Self {
        Self { left, message }
    }
}

impl tokio::io::AsyncRead for FailAfter {
    fn poll_read(
        mut self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        if self.left == 0 {
            return std::task::Poll::Ready(Err(std::io::Error::other(self.message)));
        }
        let n = usize::try_from(self.left)
            .unwrap_or(usize::MAX)
            .min(buf.remaining())
            .min(64 << 10);
        buf.put_slice(&vec![0xab; n]);
        self.left -= n as u64;
        std::task::Poll::Ready(Ok(()))
    }
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
