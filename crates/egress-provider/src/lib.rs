//! The provider contract the egress operator codes against.
//!
//! Skeleton: see issue "egress-provider".
