//! Bytes → `frame::decode`, whole and in chunks; and the whole check allocates in proportion
//! to the input (never per a length word). Checks: `libvirt_remote_testkit::fuzz::frame`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use libvirt_remote_fuzz::{PeakAlloc, peak_during};
use libvirt_remote_testkit::fuzz::frame;

#[global_allocator]
static ALLOC: PeakAlloc = PeakAlloc;

fuzz_target!(|data: &[u8]| frame::check_with(data, Some(peak_during)));
