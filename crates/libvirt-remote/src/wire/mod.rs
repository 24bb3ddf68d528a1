//! Layer 1: bytes on the wire — XDR primitives and libvirt's packet framing.
//!
//! Nothing here knows about procedures or connection state. Both halves bound every length
//! before allocating: a frame by `MAX_FRAME_LEN`, a string or array by its protocol limit
//! *and* by the bytes left in the frame.

pub mod frame;
pub mod packet;
pub mod xdr;
