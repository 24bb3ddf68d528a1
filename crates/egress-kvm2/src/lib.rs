//! The KVM provider for egress proxies, built on `libvirt-rpc`.
//!
//! Skeleton: see issue "egress-kvm2".
