//! Helpers shared by the golden-vector tests: captured packets in hex, decoded and checked.
#![allow(dead_code, reason = "each test crate uses a subset")]

use bytes::BytesMut;
use libvirt_remote::proto::Procedure;
use libvirt_remote::wire::frame::{self, Frame, MessageStatus, MessageType};
use libvirt_remote::wire::xdr;

/// The bytes of a hex string (as the decoded captures print them).
pub fn unhex(s: &str) -> Vec<u8> {
    assert!(s.len() % 2 == 0, "odd hex length");
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

/// A complete captured packet.
pub fn frame(hex: &str) -> Frame {
    let mut buf = BytesMut::from(&unhex(hex)[..]);
    let f = frame::decode(&mut buf).unwrap().expect("complete packet");
    assert!(buf.is_empty(), "one packet per constant");
    f
}

/// The captured CALL is `P` and carries exactly `args` encoded.
pub fn call<P: Procedure>(hex: &str, args: &P::Args) {
    let f = frame(hex);
    assert_eq!(f.header.program, P::PROGRAM, "{}", P::NAME);
    assert_eq!(f.header.procedure, P::NUMBER, "{}", P::NAME);
    assert_eq!(f.header.kind, MessageType::Call, "{}", P::NAME);
    assert_eq!(f.header.status, MessageStatus::Ok, "{}", P::NAME);
    assert_eq!(
        xdr::to_bytes(args).unwrap(),
        f.payload,
        "{} args differ from virsh's",
        P::NAME
    );
}
