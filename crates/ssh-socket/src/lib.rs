//! SSH transport for libvirt: forwards libvirtd's unix socket over a russh session.
//!
//! Skeleton: see issue "ssh-socket" for the design (strict host keys, bounded teardown).
