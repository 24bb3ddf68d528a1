//! Descriptor passing through the sans-io core: `CALL_WITH_FDS` and `REPLY_WITH_FDS` byte
//! for byte as the protocol describes them (the descriptor count word after the header, one
//! descriptor byte per descriptor after the packet), the descriptors the core holds, and
//! what it closes. A descriptor is proven closed by its socket pair's other end reading EOF.
//! The bytes are derived from libvirt's description (virnetprotocol.x, virnetmessage.c's
//! `virNetMessageEncodeNumFDs`, virnetsocket.c's one-byte `SCM_RIGHTS` messages); the real
//! daemon's side is proven in `fds_libvirtd.rs`.

use std::io::{Read, Write};
use std::os::fd::OwnedFd;
use std::os::unix::net::UnixStream;
use std::time::{Duration, Instant};

use bytes::{BufMut, BytesMut};
use libvirt_remote::conn::{
    CallError, Config, Connection, ConnectionError, Output, ProtocolViolation,
};
use libvirt_remote::proto::limits::MESSAGE_NUM_FDS_MAX;
use libvirt_remote::proto::procs::domain::{
    DomainOpenGraphics, DomainOpenGraphicsArgs, DomainOpenGraphicsFd,
};
use libvirt_remote::proto::types::{NonnullDomain, Uuid};
use libvirt_remote::proto::{Procedure, REMOTE_PROGRAM};
use libvirt_remote::wire::frame::{self, Header, MessageStatus, MessageType};
use libvirt_remote_testkit::reply_payload;

fn conn(fd_passing: bool) -> (Connection, Instant) {
    let now = Instant::now();
    let mut c = Connection::new(
        Config {
            keepalive: None,
            ..Config::default()
        },
        now,
    );
    c.set_fd_passing(fd_passing);
    (c, now)
}

fn args() -> DomainOpenGraphicsArgs {
    DomainOpenGraphicsArgs {
        dom: NonnullDomain {
            name: "g".into(),
            uuid: Uuid([9; 16]),
            id: 4,
        },
        idx: 0,
        flags: Default::default(),
    }
}

fn hex(s: &str) -> Vec<u8> {
    let s: String = s.split_whitespace().collect();
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

/// A descriptor and the other end of its socket pair.
fn pair() -> (OwnedFd, UnixStream) {
    let (a, b) = UnixStream::pair().unwrap();
    b.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
    (OwnedFd::from(a), b)
}

/// True when every copy of the other end was closed.
fn closed(peer: &UnixStream) -> bool {
    matches!((&*peer).read(&mut [0u8; 1]), Ok(0))
}

/// The daemon's `REPLY_WITH_FDS` to `serial` (void payload) announcing `nfds` descriptors,
/// without the descriptor bytes.
fn reply_with_fds(procedure: i32, serial: u32, nfds: u32) -> Vec<u8> {
    let h = Header {
        program: REMOTE_PROGRAM,
        version: 1,
        procedure,
        kind: MessageType::ReplyWithFds,
        serial,
        status: MessageStatus::Ok,
    };
    let mut b = BytesMut::new();
    frame::encode_with(&mut b, &h, |b| b.put_u32(nfds)).unwrap();
    b.to_vec()
}

fn violation(c: &Connection) -> ProtocolViolation {
    match c.error() {
        Some(ConnectionError::Protocol(v)) => v.clone(),
        other => panic!("not a protocol violation: {other:?}"),
    }
}

#[test]
fn call_with_fds_encodes_the_count_word_and_hands_the_descriptors_over() {
    let (mut c, _) = conn(true);
    let (fd, _peer) = pair();
    let serial = c
        .call_with_fds::<DomainOpenGraphics>(&args(), vec![fd], None)
        .unwrap();
    assert_eq!(serial, 0);
    let t = c.poll_transmit().expect("the call");
    // len 68 | remote program, v1, proc 249, CALL_WITH_FDS (4), serial 0, OK | 1 descriptor
    // | dom "g" (padded), uuid, id 4 | idx 0 | flags 0
    let want = hex(
        "00000044 20008086 00000001 000000f9 00000004 00000000 00000000
         00000001
         00000001 67000000 09090909090909090909090909090909 00000004
         00000000 00000000",
    );
    assert_eq!(&t.head[..], &want[..]);
    assert!(t.body.is_empty());
    assert_eq!(t.fds.len(), 1, "the descriptor travels with the packet");
    assert!(c.poll_transmit().is_none());

    // No descriptors: a plain CALL, byte for byte what `call` would send.
    let (mut d, _) = conn(true);
    d.call_with_fds::<DomainOpenGraphicsFd>(&args(), Vec::new(), None)
        .unwrap();
    let t = d.poll_transmit().unwrap();
    let (mut e, _) = conn(true);
    e.call_raw(REMOTE_PROGRAM, DomainOpenGraphicsFd::NUMBER, &args(), None)
        .unwrap();
    assert_eq!(t.head, e.poll_transmit().unwrap().head);
    assert_eq!(
        Header::decode(t.head[4..28].try_into().unwrap())
            .unwrap()
            .kind,
        MessageType::Call
    );
}

#[test]
fn reply_descriptors_are_matched_to_their_bytes_and_kept_for_the_caller() {
    let (mut c, now) = conn(true);
    let serial = c
        .call_with_fds::<DomainOpenGraphicsFd>(&args(), Vec::new(), None)
        .unwrap();
    let _ = c.poll_transmit();
    assert!(c.wants_fds(), "a reply may bring descriptors");

    // The packet alone: the reply waits for its descriptor byte.
    let mut rx = BytesMut::from(&reply_with_fds(343, serial, 1)[..]);
    assert_eq!(
        &rx[..],
        &hex("00000020 20008086 00000001 00000157 00000005 00000000 00000000 00000001")[..]
    );
    c.handle_input(&mut rx, now).unwrap();
    assert!(rx.is_empty());
    assert!(
        c.poll_output().is_none(),
        "not complete without its descriptor"
    );
    assert!(c.wants_fds());

    // The descriptor byte and its descriptor (they arrive together, in one recvmsg).
    let (fd, peer) = pair();
    c.handle_fds([fd]);
    let mut rx = BytesMut::from(&[0u8][..]);
    c.handle_input(&mut rx, now).unwrap();
    let payload = reply_payload(&mut c, serial);
    assert!(payload.is_empty());
    assert!(!c.wants_fds());
    let mut fds = c.take_reply_fds(serial);
    assert_eq!(fds.len(), 1);
    // It is the descriptor that arrived.
    let mut ours = UnixStream::from(fds.pop().unwrap());
    ours.write_all(b"RFB").unwrap();
    let mut b = [0u8; 3];
    (&peer).read_exact(&mut b).unwrap();
    assert_eq!(&b, b"RFB");
    assert!(c.take_reply_fds(serial).is_empty(), "taken once");
}

#[test]
fn descriptors_nobody_waits_for_are_closed() {
    // A forgotten call's reply.
    let (mut c, now) = conn(true);
    let serial = c
        .call_with_fds::<DomainOpenGraphicsFd>(&args(), Vec::new(), None)
        .unwrap();
    c.forget_call(serial);
    let (fd, peer) = pair();
    c.handle_fds([fd]);
    let mut rx = BytesMut::from(&reply_with_fds(343, serial, 1)[..]);
    rx.put_u8(0);
    c.handle_input(&mut rx, now).unwrap();
    assert!(closed(&peer), "a late reply's descriptor was kept");
    assert_eq!(c.stats().late_replies, 1);
    assert!(!c.is_closed());

    // A reply the caller never collected, then the connection dies.
    let serial = c
        .call_with_fds::<DomainOpenGraphicsFd>(&args(), Vec::new(), None)
        .unwrap();
    let (fd, peer) = pair();
    c.handle_fds([fd]);
    let mut rx = BytesMut::from(&reply_with_fds(343, serial, 1)[..]);
    rx.put_u8(0);
    c.handle_input(&mut rx, now).unwrap();
    assert!(!closed_now(&peer), "held for the caller");
    // The connection dies before the caller collected them: the call succeeded, so its
    // descriptors stay its result (found by the connection fuzz target, which saw an `Ok`
    // reply come without its descriptor when stray ones killed the connection right after).
    c.close("test");
    assert!(!closed_now(&peer), "a completed reply lost its descriptor");
    assert_eq!(c.take_reply_fds(serial).len(), 1);
    assert!(closed(&peer), "a taken descriptor was kept");

    // A call refused locally closes what it was given.
    let (mut c, _) = conn(false);
    let (fd, peer) = pair();
    let err = c
        .call_with_fds::<DomainOpenGraphics>(&args(), vec![fd], None)
        .unwrap_err();
    assert_eq!(
        err,
        CallError::FdPassingUnavailable {
            procedure: "DomainOpenGraphics"
        }
    );
    assert!(c.poll_transmit().is_none());
    assert!(closed(&peer));
    let (mut c, _) = conn(true);
    let many: Vec<OwnedFd> = (0..=MESSAGE_NUM_FDS_MAX).map(|_| pair().0).collect();
    let err = c
        .call_with_fds::<DomainOpenGraphics>(&args(), many, None)
        .unwrap_err();
    assert_eq!(err, CallError::TooManyFds { count: 33, max: 32 });
    assert!(c.poll_transmit().is_none());
}

/// Not closed (a read that would block).
fn closed_now(peer: &UnixStream) -> bool {
    peer.set_nonblocking(true).unwrap();
    let r = closed(peer);
    peer.set_nonblocking(false).unwrap();
    r
}

#[test]
fn descriptor_framing_violations_are_fatal_and_close_what_was_held() {
    // A descriptor byte without its descriptor, for a call that asked for descriptors.
    let (mut c, now) = conn(true);
    let serial = c
        .call_with_fds::<DomainOpenGraphicsFd>(&args(), Vec::new(), None)
        .unwrap();
    let mut rx = BytesMut::from(&reply_with_fds(343, serial, 1)[..]);
    rx.put_u8(0);
    assert!(c.handle_input(&mut rx, now).is_err());
    assert_eq!(violation(&c), ProtocolViolation::MissingFds { serial });

    // A count over the limit, refused from the count word.
    let (mut c, now) = conn(true);
    let serial = c
        .call_with_fds::<DomainOpenGraphicsFd>(&args(), Vec::new(), None)
        .unwrap();
    let mut rx = BytesMut::from(&reply_with_fds(343, serial, 33)[..]);
    assert!(c.handle_input(&mut rx, now).is_err());
    assert!(
        matches!(
            violation(&c),
            ProtocolViolation::BadFdCount {
                count: Some(33),
                max: 32,
                ..
            }
        ),
        "{:?}",
        c.error()
    );

    // No room for the count word.
    let (mut c, now) = conn(true);
    let serial = c
        .call_with_fds::<DomainOpenGraphicsFd>(&args(), Vec::new(), None)
        .unwrap();
    let mut rx = BytesMut::from(&reply_with_fds(343, serial, 0)[..28]);
    rx[3] = 28;
    assert!(c.handle_input(&mut rx, now).is_err());
    assert!(matches!(
        violation(&c),
        ProtocolViolation::BadFdCount { count: None, .. }
    ));

    // Descriptors with no `*_WITH_FDS` packet to carry them: closed, and fatal.
    let (mut c, now) = conn(true);
    let (fd, peer) = pair();
    c.handle_fds([fd]);
    let mut rx = BytesMut::new();
    assert!(c.handle_input(&mut rx, now).is_err());
    assert_eq!(violation(&c), ProtocolViolation::StrayFds { count: 1 });
    assert!(closed(&peer));

    // Over a transport without descriptors, a reply announcing some for a plain call
    // just loses them (nobody asked): the reply itself is delivered.
    let (mut c, now) = conn(false);
    let serial = c
        .call_raw(REMOTE_PROGRAM, DomainOpenGraphicsFd::NUMBER, &args(), None)
        .unwrap();
    let mut rx = BytesMut::from(&reply_with_fds(343, serial, 1)[..]);
    rx.put_u8(0);
    c.handle_input(&mut rx, now).unwrap();
    assert!(matches!(
        c.poll_output(),
        Some(Output::CallDone { result: Ok(_), .. })
    ));
    assert!(c.take_reply_fds(serial).is_empty());
}

/// libvirtd 9.0's answer to `DomainOpenGraphicsFd` (serial 3), as it left the daemon
/// (recorded with `strace -e recvmsg,sendmsg` around `fds_libvirtd`): the 32-byte
/// `REPLY_WITH_FDS` packet, then one `0x00` byte sent alone with the descriptor
/// (`SCM_RIGHTS`); our `recvmsg` got all 33 bytes and the descriptor in one read.
const CAPTURED_REPLY: &str =
    "00000020 20008086 00000001 00000157 00000005 00000003 00000000 00000001 00";

#[test]
fn the_daemons_reply_with_fds_decodes_byte_exact() {
    let (mut c, now) = conn(true);
    let mut serial = 0;
    for _ in 0..4 {
        serial = c
            .call_with_fds::<DomainOpenGraphicsFd>(&args(), Vec::new(), None)
            .unwrap();
    }
    assert_eq!(serial, 3);
    let captured = hex(CAPTURED_REPLY);
    let mut ours = reply_with_fds(343, 3, 1);
    ours.push(0);
    assert_eq!(
        captured, ours,
        "our description of the reply is the daemon's"
    );
    let (fd, peer) = pair();
    c.handle_fds([fd]);
    let mut rx = BytesMut::from(&captured[..]);
    c.handle_input(&mut rx, now).unwrap();
    assert!(rx.is_empty());
    reply_payload(&mut c, 3);
    let fds = c.take_reply_fds(3);
    assert_eq!(fds.len(), 1);
    drop(fds);
    assert!(closed(&peer));
}
