//! One packet → the XDR type its header names (every typed procedure's Args/Ret, errors,
//! events, shared types); each decode allocates in proportion to its input. Checks:
//! `libvirt_remote_testkit::fuzz::xdr`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use libvirt_remote_fuzz::{PeakAlloc, peak_during};
use libvirt_remote_testkit::fuzz::xdr;

#[global_allocator]
static ALLOC: PeakAlloc = PeakAlloc;

fuzz_target!(|data: &[u8]| xdr::check_with(data, Some(peak_during)));
