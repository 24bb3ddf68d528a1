//! The libvirt remote protocol (work in progress).
#![forbid(unsafe_code)]
