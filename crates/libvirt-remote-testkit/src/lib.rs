//! Test support for `libvirt-remote`, shared by its tests, the benchmarks and the fuzz targets.
//! Not published, and not part of `libvirt-remote`'s API.
//!
//! * [`peer`]: a scripted daemon-side peer ([`Peer`] and packet builders). **Not libvirtd**:
//!   only for states a real daemon cannot be made to produce on demand.
//! * [`Pair`]: a client [`Connection`](libvirt_remote::conn::Connection) wired to a [`Peer`] in
//!   memory, with a virtual clock; [`reply_payload`] takes a call's reply from a bare
//!   [`Connection`](libvirt_remote::conn::Connection).
//! * [`fuzz`]: the checks behind the cargo-fuzz targets (`frame_decode`, `xdr_decode`,
//!   `connection`), also run by `cargo test` over the checked-in corpus.
//!
//! * [`live`] (feature `live`): the calls, event and transfers every transport's tests run
//!   through the tokio client against a real daemon.
//!
//! Everything else here is sans-io, like the core it drives: no sockets, no clock, no runtime.

pub mod fuzz;
#[cfg(feature = "live")]
pub mod live;
mod pair;
pub mod peer;

pub use pair::{Pair, reply_payload};
pub use peer::Peer;
