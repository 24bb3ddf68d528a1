//! Any bytes → `libvirt_xml::AnyDocument` (strict and lenient): a typed error or a document
//! that writes back to an equal tree and re-parses to the same document (a fixpoint). Checks:
//! `libvirt_xml::fuzzing::check`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| libvirt_xml::fuzzing::check(data));
