//! Decoding reserves no memory for elements a hostile count claims but the input never
//! delivers. One test in its own process: it reads the process's peak virtual size
//! (`VmPeak`), which a large `Vec::with_capacity` raises at once, before a byte is written.

use bytes::{BufMut, BytesMut};
use libvirt_remote::wire::xdr::{Decode, DecodeBounded, DecodeError, Decoder};

/// 512 bytes in memory, 4 on the wire: the ratio that makes preallocating from the count
/// expensive. A value of 0xdead does not decode.
struct Wide(#[allow(dead_code)] [u64; 64]);

impl Decode for Wide {
    const MIN_SIZE: usize = 4;
    fn decode(dec: &mut Decoder) -> Result<Self, DecodeError> {
        match dec.u32()? {
            0xdead => Err(DecodeError::InvalidEnum {
                what: "Wide",
                value: 0xdead,
            }),
            x => Ok(Self([u64::from(x); 64])),
        }
    }
}

fn vm_peak_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmPeak:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmPeak in /proc/self/status")
}

#[test]
fn a_hostile_count_reserves_nothing_for_elements_never_decoded() {
    // A 16 MiB payload claiming 4 Mi elements (it holds 4 bytes for each, so the count
    // passes the bounds check), whose first element does not decode.
    let count: u32 = 4 << 20;
    let mut b = BytesMut::with_capacity(4 + count as usize * 4);
    b.put_u32(count);
    b.put_u32(0xdead);
    b.resize(4 + count as usize * 4, 0);
    let input = b.freeze();
    let before = vm_peak_kib();
    let r = Vec::<Wide>::decode_bounded(&mut Decoder::new(input), usize::MAX);
    let grown = vm_peak_kib() - before;
    assert!(r.is_err());
    assert!(
        grown < 64 << 10,
        "decoding a 16 MiB payload that failed at its first element reserved {} MiB",
        grown >> 10
    );
}
