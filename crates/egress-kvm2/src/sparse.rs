//! Zero detection for image uploads: a fetched byte stream becomes data and holes.
//!
//! Raw disk images are mostly zeros. Sent as they are, every zero crosses the link and is
//! written to the host's disk; sent as holes (a sparse upload stream), they cost one small
//! packet and leave the volume's file sparse. The digest is still computed over every byte
//! as fetched; only what is *sent* changes, and a hole reads back as zeros, so the volume
//! is byte-identical to the image.
//!
//! Runs of zero bytes that cover at least [`MIN_HOLE`] bytes of whole, aligned [`BLOCK`]s
//! become holes; shorter zero runs are sent as data (a hole is a packet of its own, and the
//! file system allocates in blocks anyway). Data is handed out with the chunk that brought
//! it, in segments of at most [`MAX_DATA`] bytes; only an incomplete block and a pending
//! zero run wait for the next chunk. Pure: no I/O, fed chunk by chunk in any sizes.

use bytes::{Bytes, BytesMut};

/// Zero detection works on aligned blocks of this size (file systems allocate 4 KiB).
pub const BLOCK: usize = 4096;
/// The shortest zero run sent as a hole.
pub const MIN_HOLE: u64 = 64 << 10;
/// Data is handed out in segments of at most this many bytes.
pub const MAX_DATA: usize = 1 << 20;

/// One piece of the upload.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Segment {
    /// Bytes to send.
    Data(Bytes),
    /// This many zero bytes, sent as a hole.
    Hole(u64),
}

/// Splits a byte stream into [`Segment`]s.
#[derive(Debug, Default)]
pub struct ZeroRuns {
    /// Bytes of an incomplete block, carried to the next chunk.
    carry: BytesMut,
    /// Zero bytes seen and not yet handed out (whole blocks).
    zeros: u64,
    /// Data not yet handed out.
    data: BytesMut,
    /// Bytes handed out as holes so far.
    holes: u64,
}

static ZEROS: [u8; MIN_HOLE as usize] = [0; MIN_HOLE as usize];

fn is_zero(b: &[u8]) -> bool {
    // Word-sized compare through the chunks; the compiler vectorises it.
    b.iter().all(|&x| x == 0)
}

impl ZeroRuns {
    /// A splitter at offset 0.
    pub fn new() -> Self {
        Self::default()
    }

    /// Bytes sent as holes so far.
    pub fn hole_bytes(&self) -> u64 {
        self.holes
    }

    /// Feeds `chunk`; complete segments are pushed to `out`.
    pub fn push(&mut self, chunk: &[u8], out: &mut Vec<Segment>) {
        let mut rest = chunk;
        if !self.carry.is_empty() {
            let need = BLOCK - self.carry.len();
            let take = need.min(rest.len());
            self.carry.extend_from_slice(&rest[..take]);
            rest = &rest[take..];
            if self.carry.len() < BLOCK {
                return;
            }
            let block = self.carry.split().freeze();
            self.block(&block, out);
        }
        let whole = rest.len() / BLOCK * BLOCK;
        for block in rest[..whole].chunks_exact(BLOCK) {
            self.block(block, out);
        }
        self.carry.extend_from_slice(&rest[whole..]);
        // Data goes out with the chunk that brought it (the upload stream packs small
        // pieces into full packets); only an incomplete block and a zero run wait.
        self.flush_data(out);
    }

    /// The end of the stream: everything left is pushed to `out`.
    pub fn finish(&mut self, out: &mut Vec<Segment>) {
        let tail = self.carry.split().freeze();
        if !tail.is_empty() && is_zero(&tail) {
            self.zeros += tail.len() as u64;
            self.flush_zeros(out);
        } else {
            self.flush_zeros(out);
            self.data.extend_from_slice(&tail);
        }
        self.flush_data(out);
    }

    fn block(&mut self, block: &[u8], out: &mut Vec<Segment>) {
        if is_zero(block) {
            self.zeros += block.len() as u64;
            return;
        }
        self.flush_zeros(out);
        self.data.extend_from_slice(block);
        if self.data.len() >= MAX_DATA {
            self.flush_data(out);
        }
    }

    /// Hands out the pending zero run: a hole when long enough, else data.
    fn flush_zeros(&mut self, out: &mut Vec<Segment>) {
        if self.zeros == 0 {
            return;
        }
        if self.zeros >= MIN_HOLE {
            self.flush_data(out);
            out.push(Segment::Hole(self.zeros));
            self.holes += self.zeros;
        } else {
            // Shorter than MIN_HOLE, so it fits the static zeros.
            self.data.extend_from_slice(&ZEROS[..self.zeros as usize]);
            if self.data.len() >= MAX_DATA {
                self.flush_data(out);
            }
        }
        self.zeros = 0;
    }

    fn flush_data(&mut self, out: &mut Vec<Segment>) {
        if !self.data.is_empty() {
            out.push(Segment::Data(self.data.split().freeze()));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Feeds `input` in chunks of `step` and rebuilds the stream from the segments.
    fn run(input: &[u8], step: usize) -> (Vec<Segment>, Vec<u8>) {
        let mut z = ZeroRuns::new();
        let mut out = Vec::new();
        for c in input.chunks(step.max(1)) {
            z.push(c, &mut out);
        }
        z.finish(&mut out);
        let mut back = Vec::new();
        for s in &out {
            match s {
                Segment::Data(d) => back.extend_from_slice(d),
                Segment::Hole(n) => back.resize(back.len() + *n as usize, 0),
            }
        }
        assert_eq!(
            z.hole_bytes(),
            out.iter()
                .map(|s| match s {
                    Segment::Hole(n) => *n,
                    Segment::Data(_) => 0,
                })
                .sum::<u64>()
        );
        (out, back)
    }

    fn image() -> Vec<u8> {
        // data, a long zero run, a short zero run inside data, data, a zero tail (not a
        // whole block), and an odd length.
        let mut v = vec![7u8; 5000];
        v.resize(v.len() + (300 << 10), 0);
        v.extend_from_slice(&[1u8; 10_000]);
        v.resize(v.len() + 8192, 0);
        v.extend_from_slice(&[2u8; 3]);
        v.resize(v.len() + (200 << 10) + 123, 0);
        v
    }

    #[test]
    fn any_chunking_rebuilds_every_byte() {
        let img = image();
        for step in [1, 7, 4095, 4096, 4097, 65_536, 1 << 20, img.len()] {
            let (_, back) = run(&img, step);
            assert_eq!(back.len(), img.len(), "step {step}");
            assert!(back == img, "step {step}: bytes differ");
        }
    }

    #[test]
    fn long_zero_runs_become_holes_short_ones_stay_data() {
        let img = image();
        let (segs, _) = run(&img, 16 << 10);
        let holes: Vec<u64> = segs
            .iter()
            .filter_map(|s| match s {
                Segment::Hole(n) => Some(*n),
                Segment::Data(_) => None,
            })
            .collect();
        // The 300 KiB run (minus the part sharing a block with data) and the tail.
        assert_eq!(holes.len(), 2, "{segs:?}");
        assert!(holes[0] >= 290 << 10 && holes[0] <= 300 << 10, "{holes:?}");
        assert!(holes[1] >= 190 << 10, "{holes:?}");
        // The 8 KiB zero run inside data is sent as data.
        let data: usize = segs
            .iter()
            .map(|s| match s {
                Segment::Data(d) => d.len(),
                Segment::Hole(_) => 0,
            })
            .sum();
        assert!(data >= 5000 + 10_000 + 8192 + 3, "{data}");
    }

    #[test]
    fn all_zero_and_empty_streams() {
        let (segs, back) = run(&vec![0u8; 3 << 20], 100_000);
        assert_eq!(segs, [Segment::Hole(3 << 20)]);
        assert_eq!(back.len(), 3 << 20);
        let (segs, back) = run(&[], 1);
        assert!(segs.is_empty() && back.is_empty());
        let (segs, _) = run(&[0u8; 10], 3);
        assert_eq!(segs, [Segment::Data(Bytes::from_static(&[0u8; 10]))]);
    }

    #[test]
    fn data_segments_are_bounded() {
        let dense = vec![9u8; 5 << 20];
        let (segs, back) = run(&dense, 300_000);
        assert!(back == dense);
        assert!(
            segs.iter()
                .all(|s| matches!(s, Segment::Data(d) if d.len() <= MAX_DATA + BLOCK))
        );
    }
}
