//! Every sequence of the protocol reference (§3-§5) driven through the sans-io core against
//! the scripted peer, with a virtual clock. Deterministic: no sockets, no sleeps.
// Short names (p = pair, h = header, f = frame) keep the sequences readable.
#![allow(clippy::many_single_char_names)]

use std::time::Duration;

use bytes::{Bytes, BytesMut};
use libvirt_remote::conn::SubscriberId;
use libvirt_remote::conn::handshake::{Handshake, HandshakeOptions};
use libvirt_remote::conn::{
    CallError, Config, ConnectionError, KeepaliveConfig, Output, ProtocolViolation, StreamError,
    StreamItem, StreamMisuse,
};
use libvirt_remote::proto::events::{
    CallbackMsg, DomainEvent, Lifecycle, NetworkEvent, NetworkLifecycle, SecretEvent,
    SecretLifecycle,
};
use libvirt_remote::proto::events::{network_event_id, secret_event_id};
use libvirt_remote::proto::names::{SecretEventType, SecretUsageType};
use libvirt_remote::proto::procs::common::{CallbackIdArgs, CallbackIdRet};
use libvirt_remote::proto::procs::connect::{ConnectGetLibVersion, ConnectGetLibVersionRet};
use libvirt_remote::proto::procs::migration::DomainMigrateFlags;
use libvirt_remote::proto::procs::network::ConnectNetworkEventRegisterAnyArgs;
use libvirt_remote::proto::procs::storage::StorageVolStreamFlags;
use libvirt_remote::proto::procs::storage::{
    StorageVolDownload, StorageVolTransferArgs, StorageVolUpload,
};
use libvirt_remote::proto::types::{
    NonnullDomain, NonnullNetwork, NonnullSecret, NonnullStorageVol, Uuid,
};
use libvirt_remote::proto::{ErrorCode, Procedure, events};
use libvirt_remote::wire::frame::{Frame, FrameError, Header, MessageStatus, MessageType};
use libvirt_remote::wire::xdr;
use libvirt_remote_testkit::Pair;
use libvirt_remote_testkit::peer::{self, Raw};

fn vol() -> NonnullStorageVol {
    NonnullStorageVol {
        pool: "probe".into(),
        name: "rpc-rpcprobe.raw".into(),
        key: "/srv/pool/rpc-rpcprobe.raw".into(),
    }
}

fn transfer(length: u64, flags: StorageVolStreamFlags) -> StorageVolTransferArgs {
    StorageVolTransferArgs {
        vol: vol(),
        offset: 0,
        length,
        flags,
    }
}

fn hex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

/// A captured server packet re-addressed to our stream (captures use serial 10).
fn reframe(call: &Header, captured: &str) -> Vec<u8> {
    let b = hex(captured);
    let mut head = [0u8; 24];
    head.copy_from_slice(&b[4..28]);
    let cap = Header::decode(&head).unwrap();
    peer::raw(
        Header {
            serial: call.serial,
            procedure: call.procedure,
            ..cap
        },
        &b[28..],
    )
    .to_vec()
}

fn kinds(frames: &[Frame]) -> Vec<(MessageType, MessageStatus, usize)> {
    frames
        .iter()
        .map(|f| (f.header.kind, f.header.status, f.payload.len()))
        .collect()
}

/// Open a volume stream with `flags` and take its CALL, unanswered.
fn opening<P>(p: &mut Pair, flags: StorageVolStreamFlags) -> (u32, Header)
where
    P: Procedure<Args = StorageVolTransferArgs>,
{
    let id = p.conn.open_stream::<P>(&transfer(0, flags)).unwrap();
    let call = p.flush().pop().unwrap();
    (id, call.header)
}

fn open_upload(p: &mut Pair, sparse: bool) -> (u32, Header) {
    let (id, call) = opening::<StorageVolUpload>(p, StorageVolStreamFlags::from(u32::from(sparse)));
    assert_eq!(call.procedure, 208);
    p.deliver(&peer::reply_to(&call, &())).unwrap();
    assert_eq!(p.outputs(), vec![Output::StreamOpened(id)]);
    (id, call)
}

fn open_download(p: &mut Pair, sparse: bool) -> (u32, Header) {
    let (id, call) =
        opening::<StorageVolDownload>(p, StorageVolStreamFlags::from(u32::from(sparse)));
    p.deliver(&peer::reply_to(&call, &())).unwrap();
    assert_eq!(p.outputs(), vec![Output::StreamOpened(id)]);
    (id, call)
}

// ---- §5 handshake ---------------------------------------------------------------------

#[test]
fn handshake_sends_virsh_bytes() {
    // captures/version.decoded.txt, client packets #000-#005 and server #000-#005.
    let client = [
        "0000001c20008086000000010000004200000000000000000000000000",
        "0000002020008086000000010000003c0000000000000001000000000000000a",
        "00000038200080860000000100000001000000000000000200000000000000010000000e71656d753a2f2f2f73797374656d000000000000",
        "0000002020008086000000010000003c0000000000000003000000000000000e",
        "0000002020008086000000010000003c0000000000000004000000000000000f",
        "0000001c20008086000000010000016800000000000000050000000000",
    ];
    let server = [
        "000000242000808600000001000000420000000100000000000000000000000100000000",
        "0000002020008086000000010000003c00000001000000010000000000000001",
        "0000001c200080860000000100000001000000010000000200000000",
        "0000002020008086000000010000003c00000001000000030000000000000001",
        "0000002020008086000000010000003c00000001000000040000000000000001",
        "0000001c200080860000000100000168000000010000000500000000",
    ];
    let mut p = Pair::no_keepalive();
    let mut hs = Handshake::new(HandshakeOptions {
        name: Some("qemu:///system".into()),
        read_only: false,
        keepalive: true,
        events: true,
        close_callback: true,
        ..HandshakeOptions::default()
    });
    let mut i = 0;
    while let Some(call) = hs.next_call() {
        let serial = p
            .conn
            .call_raw(
                libvirt_remote::proto::REMOTE_PROGRAM,
                call.procedure,
                &Raw(call.args),
                None,
            )
            .unwrap();
        let f = p.flush().pop().unwrap();
        let mut wire = (f.payload.len() as u32 + 28).to_be_bytes().to_vec();
        let mut h = BytesMut::new();
        f.header.encode(&mut h);
        wire.extend_from_slice(&h);
        wire.extend_from_slice(&f.payload);
        // The capture's empty-payload lines are 28 bytes; compare what we have.
        assert_eq!(wire, hex(client[i])[..wire.len()], "client packet {i}");
        p.deliver(&hex(server[i])).unwrap();
        let Some(Output::CallDone { serial: s, result }) = p.outputs().pop() else {
            panic!()
        };
        assert_eq!(s, serial);
        hs.handle_reply(result).unwrap();
        i += 1;
    }
    assert_eq!(i, 6);
    let o = hs.outcome();
    assert!(o.keepalive && o.event_callbacks && o.close_callback);
    assert_eq!(o.auth_types, vec![0]);
}

/// `next_calls`: the keepalive probe and `CONNECT_OPEN` go out together, before either
/// reply (the bytes of virsh's capture, one round trip fewer); the replies, fed in order,
/// finish the handshake as one at a time would.
#[test]
fn handshake_sends_the_keepalive_probe_and_open_together() {
    let mut p = Pair::no_keepalive();
    let mut hs = Handshake::new(HandshakeOptions {
        name: Some("qemu:///system".into()),
        keepalive: true,
        ..HandshakeOptions::default()
    });
    let server = [
        "000000242000808600000001000000420000000100000000000000000000000100000000",
        "0000002020008086000000010000003c00000001000000010000000000000001",
        "0000001c200080860000000100000001000000010000000200000000",
    ];
    let mut batches = Vec::new();
    let mut i = 0;
    loop {
        let calls = hs.next_calls();
        if calls.is_empty() {
            break;
        }
        batches.push(calls.iter().map(|c| c.procedure).collect::<Vec<_>>());
        let serials: Vec<u32> = calls
            .iter()
            .map(|c| {
                p.conn
                    .call_raw(
                        libvirt_remote::proto::REMOTE_PROGRAM,
                        c.procedure,
                        &Raw(c.args.clone()),
                        None,
                    )
                    .unwrap()
            })
            .collect();
        assert_eq!(p.flush().len(), calls.len(), "all written before any reply");
        for serial in serials {
            p.deliver(&hex(server[i])).unwrap();
            i += 1;
            let Some(Output::CallDone { serial: s, result }) = p.outputs().pop() else {
                panic!()
            };
            assert_eq!(s, serial);
            hs.handle_reply(result).unwrap();
        }
    }
    assert_eq!(batches, vec![vec![66], vec![60, 1]]);
    assert!(hs.outcome().keepalive);
    // Without keepalive there is nothing to pair: one call at a time.
    let hs = Handshake::new(HandshakeOptions::default());
    assert_eq!(hs.next_calls().len(), 1);
}

// ---- §3.2 upload ----------------------------------------------------------------------

#[test]
fn upload_chunks_like_virsh_and_finishes() {
    let mut p = Pair::virsh_chunks();
    let (id, _) = open_upload(&mut p, false);
    p.conn
        .stream(id)
        .send(Bytes::from(vec![7u8; 1_126_400]))
        .unwrap();
    p.conn.stream(id).finish().unwrap();
    let frames = p.flush();
    let sizes: Vec<usize> = frames.iter().map(|f| f.payload.len()).collect();
    assert_eq!(sizes, vec![262_120, 262_120, 262_120, 262_120, 77_920, 0]);
    assert_eq!(frames.last().unwrap().header.status, MessageStatus::Ok);
    assert!(
        frames[..5]
            .iter()
            .all(|f| f.header.status == MessageStatus::Continue && f.header.serial == id)
    );
    p.deliver(&peer::stream_ok_to(&frames[0].header)).unwrap();
    assert_eq!(p.outputs(), vec![Output::StreamEnded(id)]);
    assert_eq!(p.conn.stream(id).take_end(), Some(Ok(())));
    assert_eq!(p.conn.stream_count(), 0);
    p.roundtrip_works();
}

// ---- §3.3 download ---------------------------------------------------------------------

#[test]
fn download_delivers_zero_copy_then_finishes_after_eof() {
    let mut p = Pair::no_keepalive();
    let (id, h) = open_download(&mut p, false);
    let mut bytes = Vec::new();
    for _ in 0..8 {
        bytes.extend(peer::stream_data_to(&h, &vec![1u8; 262_120]));
        bytes.extend(peer::stream_data_to(&h, &[2u8; 24]));
    }
    bytes.extend(peer::stream_data_to(&h, &[]));
    p.deliver(&bytes).unwrap();
    // EOF makes the client send the finish, like virsh.
    let fin = p.flush();
    assert_eq!(
        kinds(&fin),
        vec![(MessageType::Stream, MessageStatus::Ok, 0)]
    );
    let mut total = 0;
    while let Some(StreamItem::Data(d)) = p.conn.stream(id).recv() {
        total += d.len();
    }
    assert_eq!(total, 2 * 1024 * 1024);
    assert_eq!(p.conn.stream(id).take_end(), None, "not confirmed yet");
    p.deliver(&peer::stream_ok_to(&h)).unwrap();
    assert_eq!(p.conn.stream(id).take_end(), Some(Ok(())));
    p.roundtrip_works();
}

#[test]
fn download_window_stops_reading_until_consumed() {
    let mut p = Pair::new(Config {
        keepalive: None,
        stream_window: 1 << 20,
        ..Config::default()
    });
    let (id, h) = open_download(&mut p, false);
    let mut bytes = Vec::new();
    for _ in 0..8 {
        bytes.extend(peer::stream_data_to(&h, &vec![0u8; 262_120]));
    }
    p.deliver(&bytes).unwrap();
    assert!(!p.conn.wants_read(), "window full");
    assert!(
        p.rx.len() > 3 * 262_000,
        "rest left undecoded in the caller's buffer"
    );
    let mut got = 0;
    while let Some(StreamItem::Data(d)) = p.conn.stream(id).recv() {
        got += d.len();
    }
    // Reading stops at the first packet that fills the window.
    assert_eq!(got, 5 * 262_120);
    assert!(p.conn.wants_read());
    p.deliver(&[]).unwrap();
    while let Some(StreamItem::Data(d)) = p.conn.stream(id).recv() {
        got += d.len();
    }
    assert_eq!(got, 8 * 262_120);
}

// ---- §3.4 sparse -----------------------------------------------------------------------

#[test]
fn sparse_download_delivers_holes_in_order() {
    let mut p = Pair::no_keepalive();
    let (id, h) = open_download(&mut p, true);
    // captures/download_sparse.decoded.txt server #011-#015.
    p.deliver(&reframe(
        &h,
        "000000282000808600000001000000d1000000060000000a00000002000000000020000000000000",
    ))
    .unwrap();
    p.deliver(&peer::stream_data_to(&h, &vec![9u8; 102_400]))
        .unwrap();
    p.deliver(&reframe(
        &h,
        "000000282000808600000001000000d1000000060000000a0000000200000000001e700000000000",
    ))
    .unwrap();
    p.deliver(&peer::stream_data_to(&h, &[])).unwrap();
    let items: Vec<StreamItem> = std::iter::from_fn(|| p.conn.stream(id).recv()).collect();
    assert_eq!(
        items,
        vec![
            StreamItem::Hole(0x20_0000),
            StreamItem::Data(Bytes::from(vec![9u8; 102_400])),
            StreamItem::Hole(0x1e_7000)
        ]
    );
    p.deliver(&peer::stream_ok_to(&h)).unwrap();
    assert_eq!(p.conn.stream(id).take_end(), Some(Ok(())));
}

/// A hole costs memory to queue like data does: a daemon sending holes faster than the
/// consumer takes them fills the receive window and reading stops, as with data.
#[test]
fn holes_are_charged_against_the_receive_window() {
    let mut p = Pair::new(Config {
        keepalive: None,
        stream_window: 64 << 10,
        ..Config::default()
    });
    let (id, h) = open_download(&mut p, true);
    let mut holes = Vec::new();
    for _ in 0..100_000 {
        holes.extend_from_slice(&peer::stream_hole_to(&h, 4096));
    }
    p.deliver(&holes).unwrap();
    let queued = std::iter::from_fn(|| p.conn.stream(id).recv()).count();
    assert!(
        queued < 10_000,
        "{queued} holes queued behind a 64 KiB window ({} bytes left unread)",
        p.rx.len()
    );
    assert!(!p.rx.is_empty(), "the rest waits in the caller's buffer");
    // Consumed: reading goes on, and every hole arrives.
    let mut total = queued;
    while !p.rx.is_empty() {
        p.deliver(&[]).unwrap();
        total += std::iter::from_fn(|| p.conn.stream(id).recv()).count();
    }
    assert_eq!(total, 100_000);
}

/// Hole lengths are summed with checked arithmetic: three of `i64::MAX` bytes pass 2^64 - 1,
/// which ends that stream with a typed error and an abort; the connection goes on.
#[test]
fn hole_lengths_past_u64_end_the_stream_with_a_typed_error() {
    let mut p = Pair::no_keepalive();
    let (id, h) = open_download(&mut p, true);
    for _ in 0..3 {
        p.deliver(&peer::stream_hole_to(&h, i64::MAX)).unwrap();
    }
    let items: Vec<StreamItem> = std::iter::from_fn(|| p.conn.stream(id).recv()).collect();
    assert_eq!(items.len(), 2, "{items:?}");
    let end = p.conn.stream(id).take_end();
    assert!(
        matches!(end, Some(Err(StreamError::Overrun { limit: u64::MAX }))),
        "three holes of i64::MAX bytes: {end:?}"
    );
    let sent = p.flush();
    assert_eq!(
        kinds(&sent),
        vec![(MessageType::Stream, MessageStatus::Error, 0)],
        "the daemon is told to stop"
    );
    p.roundtrip_works();
}

/// A volume download asked for `length` bytes ends with a typed error when the daemon sends
/// more, holes included; `limit_receive` (the volume's capacity, when known) bounds one
/// asked "to the end".
#[test]
fn a_download_never_carries_more_than_its_length_or_limit() {
    let mut p = Pair::no_keepalive();
    let (id, call) = opening::<StorageVolDownload>(&mut p, StorageVolStreamFlags::SPARSE_STREAM);
    assert_eq!(p.conn.stream(id).take_end(), None);
    p.deliver(&peer::reply_to(&call, &())).unwrap();
    p.outputs();
    p.conn.stream(id).limit_receive(1000);
    p.deliver(&peer::stream_data_to(&call, &[1u8; 600]))
        .unwrap();
    p.deliver(&peer::stream_hole_to(&call, 400)).unwrap();
    p.deliver(&peer::stream_hole_to(&call, 1)).unwrap();
    let items: Vec<StreamItem> = std::iter::from_fn(|| p.conn.stream(id).recv()).collect();
    assert_eq!(items.len(), 2, "{items:?}");
    let end = p.conn.stream(id).take_end();
    assert!(
        matches!(end, Some(Err(StreamError::Overrun { limit: 1000 }))),
        "1,001 bytes on a download limited to 1,000: {end:?}"
    );
    p.outputs();

    let id = p
        .conn
        .open_stream::<StorageVolDownload>(&transfer(10, StorageVolStreamFlags::default()))
        .unwrap();
    let h = p.accept_open(id);
    p.deliver(&peer::stream_data_to(&h, &[2u8; 11])).unwrap();
    let end = p.conn.stream(id).take_end();
    assert!(
        matches!(end, Some(Err(StreamError::Overrun { limit: 10 }))),
        "11 bytes on a download of length 10: {end:?}"
    );
    p.flush();
    p.roundtrip_works();
}

#[test]
fn sparse_upload_sends_holes_and_non_sparse_refuses_them() {
    let mut p = Pair::no_keepalive();
    let (id, h) = open_upload(&mut p, true);
    p.conn.stream(id).send_hole(0x20_0000).unwrap();
    p.conn
        .stream(id)
        .send(Bytes::from_static(&[1; 100]))
        .unwrap();
    p.conn.stream(id).send_hole(4096).unwrap();
    p.conn.stream(id).finish().unwrap();
    let f = p.flush();
    assert_eq!(
        kinds(&f),
        vec![
            (MessageType::StreamHole, MessageStatus::Continue, 12),
            (MessageType::Stream, MessageStatus::Continue, 100),
            (MessageType::StreamHole, MessageStatus::Continue, 12),
            (MessageType::Stream, MessageStatus::Ok, 0),
        ]
    );
    assert_eq!(&f[0].payload[..], &hex("000000000020000000000000")[..]);
    p.deliver(&peer::stream_ok_to(&h)).unwrap();
    assert_eq!(p.conn.stream(id).take_end(), Some(Ok(())));
    p.outputs();

    // Non-sparse: refused locally, nothing on the wire (the daemon would drop the connection).
    let (id, _) = open_upload(&mut p, false);
    assert_eq!(
        p.conn.stream(id).send_hole(4096),
        Err(StreamError::Misuse(StreamMisuse::NotSparse))
    );
    assert!(p.flush().is_empty());
}

#[test]
fn hole_on_non_sparse_download_fails_only_that_stream() {
    let mut p = Pair::no_keepalive();
    let (id, h) = open_download(&mut p, false);
    p.deliver(&peer::stream_hole_to(&h, 4096)).unwrap();
    assert_eq!(
        kinds(&p.flush()),
        vec![(MessageType::Stream, MessageStatus::Error, 0)],
        "abort sent"
    );
    assert_eq!(
        p.conn.stream(id).take_end(),
        Some(Err(StreamError::UnexpectedHole))
    );
    // The daemon's answer to the abort is a straggler.
    p.deliver(&peer::stream_ok_to(&h)).unwrap();
    p.roundtrip_works();
}

// ---- §3.5 abort ------------------------------------------------------------------------

#[test]
fn source_error_aborts_and_reports_the_source_reason() {
    let mut p = Pair::no_keepalive();
    let (id, h) = open_upload(&mut p, false);
    p.conn
        .stream(id)
        .send(Bytes::from(vec![0u8; 600_000]))
        .unwrap();
    p.conn
        .stream(id)
        .abort("read /dev/sdz: Input/output error")
        .unwrap();
    let f = p.flush();
    // Queued data that was not yet taken is dropped; the abort is an empty STREAM ERROR.
    assert_eq!(
        kinds(&f),
        vec![(MessageType::Stream, MessageStatus::Error, 0)]
    );
    // captures/upload_abort: the daemon confirms with STREAM OK.
    p.deliver(&peer::stream_ok_to(&h)).unwrap();
    let Some(Err(StreamError::Aborted {
        reason,
        server: None,
    })) = p.conn.stream(id).take_end()
    else {
        panic!()
    };
    assert_eq!(&*reason, "read /dev/sdz: Input/output error");
    p.roundtrip_works();
}

#[test]
fn abort_answered_with_error_still_ends() {
    // Old daemons answered the abort with an error: the go-libvirt hang trigger.
    let mut p = Pair::no_keepalive();
    let (id, h) = open_upload(&mut p, false);
    p.conn.stream(id).abort("source failed").unwrap();
    p.flush();
    p.deliver(&peer::stream_error_to(
        &h,
        &peer::error(1, 38, "stream aborted at client request"),
    ))
    .unwrap();
    let Some(Err(StreamError::Aborted {
        server: Some(e), ..
    })) = p.conn.stream(id).take_end()
    else {
        panic!()
    };
    assert_eq!(e.code, ErrorCode::INTERNAL_ERROR);
    p.roundtrip_works();
}

#[test]
fn upload_default_packets_are_128_kib() {
    let mut p = Pair::no_keepalive();
    let (id, _) = open_upload(&mut p, false);
    p.conn
        .stream(id)
        .send(Bytes::from(vec![7u8; 300_000]))
        .unwrap();
    let sizes: Vec<usize> = p.flush().iter().map(|f| f.payload.len()).collect();
    assert_eq!(sizes, vec![131_072, 131_072, 37_856]);
}

// ---- §3.6 server error mid-stream --------------------------------------------------------

#[test]
fn server_error_mid_upload_stops_sending_and_is_sticky_for_the_stream() {
    let mut p = Pair::virsh_chunks();
    let (id, h) = open_upload(&mut p, false);
    p.conn
        .stream(id)
        .send(Bytes::from(vec![0u8; 262_120]))
        .unwrap();
    assert_eq!(p.flush().len(), 1);
    p.conn
        .stream(id)
        .send(Bytes::from(vec![0u8; 262_120 * 3]))
        .unwrap();
    // captures/upload_srverr server #011.
    p.deliver(&reframe(&h, "000000b82000808600000001000000d0000000030000000a000000010000002600000026000000010000002f63616e6e6f7420777269746520746f2073747265616d3a204e6f207370616365206c656674206f6e20646576696365000000000200000000000000010000000225730000000000010000002f63616e6e6f7420777269746520746f2073747265616d3a204e6f207370616365206c656674206f6e2064657669636500000000000000001cffffffff00000000")).unwrap();
    assert!(
        p.flush().is_empty(),
        "queued data dropped, nothing more sent"
    );
    let err = p
        .conn
        .stream(id)
        .send(Bytes::from_static(b"more"))
        .unwrap_err();
    let StreamError::Remote(e) = &err else {
        panic!("{err:?}")
    };
    assert_eq!(e.code, ErrorCode::SYSTEM_ERROR);
    assert_eq!(e.errno(), Some(28));
    assert_eq!(
        p.conn.stream(id).finish(),
        Err(err.clone()),
        "finish reports it too, sends nothing"
    );
    assert!(p.flush().is_empty());
    assert_eq!(p.conn.stream(id).take_end(), Some(Err(err)));
    p.roundtrip_works();
}

#[test]
fn go_libvirt_wedge_sequence_ends_cleanly() {
    // go-libvirt-lessons §2.3: C data, C finish, S ERROR, S trailing OK. go-libvirt parked
    // its reader holding a lock on the trailing OK and wedged the whole connection.
    let mut p = Pair::no_keepalive();
    let (id, h) = open_upload(&mut p, false);
    p.conn
        .stream(id)
        .send(Bytes::from(vec![0u8; 1 << 20]))
        .unwrap();
    p.conn.stream(id).finish().unwrap();
    p.flush();
    p.deliver(&peer::stream_error_to(
        &h,
        &peer::error(38, 38, "cannot write to stream"),
    ))
    .unwrap();
    p.deliver(&peer::stream_ok_to(&h)).unwrap();
    let Some(Err(StreamError::Remote(e))) = p.conn.stream(id).take_end() else {
        panic!()
    };
    assert_eq!(e.message(), "cannot write to stream");
    p.deliver(&peer::stream_ok_to(&h)).unwrap(); // after collection: still a straggler
    assert!(p.conn.stats().stragglers >= 1);
    p.roundtrip_works();
}

#[test]
fn abort_after_finish_still_terminates() {
    let mut p = Pair::no_keepalive();
    let (id, h) = open_upload(&mut p, false);
    p.conn.stream(id).finish().unwrap();
    p.conn.stream(id).abort("deadline").unwrap();
    p.flush();
    // The daemon answers the finish; our abort is ignored by it. Either answer ends the stream.
    p.deliver(&peer::stream_ok_to(&h)).unwrap();
    assert!(matches!(
        p.conn.stream(id).take_end(),
        Some(Err(StreamError::Aborted { .. }))
    ));
    p.roundtrip_works();
}

#[test]
fn open_refused_ends_the_stream_with_the_daemon_error() {
    let mut p = Pair::no_keepalive();
    let (id, call) = opening::<StorageVolUpload>(&mut p, StorageVolStreamFlags::empty());
    p.deliver(&peer::reply_error_to(
        &call,
        &peer::error(50, 18, "Storage volume not found"),
    ))
    .unwrap();
    assert_eq!(p.outputs(), vec![Output::StreamEnded(id)]);
    let Some(Err(StreamError::Remote(e))) = p.conn.stream(id).take_end() else {
        panic!()
    };
    assert!(e.is_not_found());
    // The error REPLY was the open call's REPLY: nothing more is due on that serial.
    assert!(
        p.deliver(&peer::reply_to(&call, &())).is_err(),
        "a second REPLY to a refused open is a violation"
    );
}

#[test]
fn dropped_download_aborts_and_drops_stragglers() {
    let mut p = Pair::no_keepalive();
    let (id, h) = open_download(&mut p, false);
    p.deliver(&peer::stream_data_to(&h, &[0u8; 1000])).unwrap();
    p.conn.stream(id).forget();
    assert_eq!(
        kinds(&p.flush()),
        vec![(MessageType::Stream, MessageStatus::Error, 0)]
    );
    p.deliver(&peer::stream_data_to(&h, &[0u8; 1000])).unwrap();
    p.deliver(&peer::stream_ok_to(&h)).unwrap();
    p.deliver(&peer::stream_data_to(&h, &[0u8; 1000])).unwrap();
    assert_eq!(p.conn.stream_count(), 0);
    assert!(
        p.outputs()
            .iter()
            .all(|o| !matches!(o, Output::StreamEnded(_)))
    );
    p.roundtrip_works();
}

#[test]
fn abort_while_opening_is_sent_once_the_stream_exists() {
    let mut p = Pair::no_keepalive();
    let (id, call) = opening::<StorageVolUpload>(&mut p, StorageVolStreamFlags::empty());
    p.conn.stream(id).abort("cancelled").unwrap();
    assert!(p.flush().is_empty());
    p.deliver(&peer::reply_to(&call, &())).unwrap();
    assert_eq!(
        kinds(&p.flush()),
        vec![(MessageType::Stream, MessageStatus::Error, 0)]
    );
    p.deliver(&peer::stream_ok_to(&call)).unwrap();
    assert!(matches!(
        p.conn.stream(id).take_end(),
        Some(Err(StreamError::Aborted { .. }))
    ));
}

/// A procedure that opens no stream, with arguments that could.
struct NoStream;
impl Procedure for NoStream {
    const PROGRAM: u32 = libvirt_remote::proto::REMOTE_PROGRAM;
    const NUMBER: i32 = 157;
    const NAME: &'static str = "NoStream";
    const STREAM: Option<libvirt_remote::proto::StreamDirection> = None;
    const SINCE: libvirt_remote::proto::LibvirtVersion =
        libvirt_remote::proto::LibvirtVersion::new(0, 3, 0);
    type Args = StorageVolTransferArgs;
    type Ret = ();
}

#[test]
fn stream_misuse_is_typed_and_sends_nothing() {
    use StreamMisuse as M;
    let mut p = Pair::no_keepalive();
    let misuse = |r: Result<(), StreamError>| match r {
        Err(StreamError::Misuse(m)) => m,
        other => panic!("not a misuse: {other:?}"),
    };

    // Before the REPLY.
    let (up, call) = opening::<StorageVolUpload>(&mut p, StorageVolStreamFlags::SPARSE_STREAM);
    assert_eq!(
        misuse(p.conn.stream(up).send(Bytes::from_static(b"x"))),
        M::NotOpenYet
    );
    assert_eq!(misuse(p.conn.stream(up).send_hole(1)), M::NotOpenYet);
    assert_eq!(misuse(p.conn.stream(up).finish()), M::NotOpenYet);
    p.deliver(&peer::reply_to(&call, &())).unwrap();
    assert_eq!(
        misuse(p.conn.stream(up).send_hole(u64::MAX)),
        M::HoleTooLong { len: u64::MAX }
    );
    p.conn.stream(up).finish().unwrap();
    assert_eq!(
        kinds(&p.flush()),
        vec![(MessageType::Stream, MessageStatus::Ok, 0)]
    );
    assert_eq!(
        misuse(p.conn.stream(up).send(Bytes::from_static(b"x"))),
        M::AfterFinish
    );
    assert_eq!(misuse(p.conn.stream(up).send_hole(1)), M::AfterFinish);
    p.deliver(&peer::stream_ok_to(&call)).unwrap();
    assert_eq!(
        misuse(p.conn.stream(up).send(Bytes::from_static(b"x"))),
        M::Finished
    );
    assert_eq!(p.conn.stream(up).take_end(), Some(Ok(())));
    p.outputs();

    let (up, _) = open_upload(&mut p, false);
    p.conn.stream(up).abort("stop").unwrap();
    p.flush();
    assert_eq!(
        misuse(p.conn.stream(up).send(Bytes::from_static(b"x"))),
        M::AfterAbort
    );
    assert_eq!(misuse(p.conn.stream(up).finish()), M::AfterAbort);
    p.outputs();

    let (down, _) = open_download(&mut p, true);
    assert_eq!(
        misuse(p.conn.stream(down).send(Bytes::from_static(b"x"))),
        M::SendOnDownload
    );
    assert_eq!(misuse(p.conn.stream(down).send_hole(1)), M::HoleOnDownload);
    assert_eq!(misuse(p.conn.stream(down).finish()), M::FinishDownload);
    assert!(p.flush().is_empty(), "a refused command sends nothing");
    assert_eq!(
        misuse(p.conn.stream(down).send(Bytes::new())).to_string(),
        "send on a download stream"
    );

    // A procedure that opens no stream, with arguments that could.
    assert_eq!(
        p.conn
            .open_stream::<NoStream>(&transfer(0, StorageVolStreamFlags::empty())),
        Err(StreamError::Misuse(M::NotAStream {
            procedure: "NoStream"
        }))
    );
    assert!(p.flush().is_empty());
    p.roundtrip_works();
}

// ---- calls -------------------------------------------------------------------------------

#[test]
fn forgotten_call_discards_its_late_reply() {
    let mut p = Pair::no_keepalive();
    let s = p.conn.call::<ConnectGetLibVersion>(&(), None).unwrap();
    let f = p.flush().pop().unwrap();
    p.conn.forget_call(s);
    p.deliver(&peer::reply_to(
        &f.header,
        &ConnectGetLibVersionRet { lib_ver: 1 },
    ))
    .unwrap();
    assert!(p.outputs().is_empty());
    assert_eq!(p.conn.stats().late_replies, 1);
    p.roundtrip_works();
}

#[test]
fn call_deadline_times_out_and_connection_stays_usable() {
    let mut p = Pair::no_keepalive();
    let s = p
        .conn
        .call::<ConnectGetLibVersion>(&(), Some(p.now + Duration::from_secs(2)))
        .unwrap();
    let f = p.flush().pop().unwrap();
    p.advance(Duration::from_secs(1));
    assert!(p.outputs().is_empty());
    p.advance(Duration::from_secs(1));
    assert_eq!(
        p.outputs(),
        vec![Output::CallDone {
            serial: s,
            result: Err(CallError::TimedOut)
        }]
    );
    p.deliver(&peer::reply_to(
        &f.header,
        &ConnectGetLibVersionRet { lib_ver: 1 },
    ))
    .unwrap();
    assert!(p.outputs().is_empty(), "late reply discarded");
    p.roundtrip_works();
}

#[test]
fn reply_nobody_waits_for_is_fatal_and_sticky() {
    let mut p = Pair::no_keepalive();
    let pending = p.conn.call::<ConnectGetLibVersion>(&(), None).unwrap();
    let mut h = p.flush().pop().unwrap().header;
    h.serial = 4242;
    let err = p
        .deliver(&peer::reply_to(&h, &ConnectGetLibVersionRet { lib_ver: 1 }))
        .unwrap_err();
    assert!(matches!(
        err,
        ConnectionError::Protocol(ProtocolViolation::UnexpectedReply { serial: 4242, .. })
    ));
    let outs = p.outputs();
    assert_eq!(
        outs,
        vec![
            Output::CallDone {
                serial: pending,
                result: Err(CallError::Connection(err.clone()))
            },
            Output::Closed(err.clone())
        ]
    );
    // Sticky: every later use returns the same error.
    assert_eq!(
        p.conn.call::<ConnectGetLibVersion>(&(), None),
        Err(CallError::Connection(err.clone()))
    );
    assert_eq!(p.deliver(&[]), Err(err.clone()));
    assert!(p.outputs().is_empty(), "Closed is reported once");
}

// ---- bad input -----------------------------------------------------------------------------

#[test]
fn bad_frames_are_typed_fatal_errors() {
    type Check = fn(&ConnectionError) -> bool;
    let h = Header {
        program: libvirt_remote::proto::REMOTE_PROGRAM,
        version: libvirt_remote::proto::REMOTE_VERSION,
        procedure: 157,
        kind: MessageType::Reply,
        serial: 0,
        status: MessageStatus::Ok,
    };
    let cases: Vec<(Vec<u8>, Check)> = vec![
        (hex("0000001b"), |e| {
            matches!(
                e,
                ConnectionError::Protocol(ProtocolViolation::Frame(FrameError::TooShort(27)))
            )
        }),
        (hex("7fffffff"), |e| {
            matches!(
                e,
                ConnectionError::Protocol(ProtocolViolation::Frame(FrameError::TooLong(_)))
            )
        }),
        (
            peer::raw(
                Header {
                    program: 0x1234,
                    ..h
                },
                &[],
            )
            .to_vec(),
            |e| {
                matches!(
                    e,
                    ConnectionError::Protocol(ProtocolViolation::UnknownProgram {
                        program: 0x1234,
                        ..
                    })
                )
            },
        ),
        (peer::raw(Header { version: 2, ..h }, &[]).to_vec(), |e| {
            matches!(
                e,
                ConnectionError::Protocol(ProtocolViolation::BadVersion { version: 2, .. })
            )
        }),
        (
            peer::raw(
                Header {
                    kind: MessageType::Call,
                    ..h
                },
                &[],
            )
            .to_vec(),
            |e| {
                matches!(
                    e,
                    ConnectionError::Protocol(ProtocolViolation::UnexpectedType { .. })
                )
            },
        ),
        (
            {
                let mut v = peer::raw(h, &[]).to_vec();
                v[16..20].copy_from_slice(&9u32.to_be_bytes());
                v
            },
            |e| {
                matches!(
                    e,
                    ConnectionError::Protocol(ProtocolViolation::Frame(FrameError::UnknownType(9)))
                )
            },
        ),
        (
            {
                let mut v = peer::raw(h, &[]).to_vec();
                v[24..28].copy_from_slice(&7u32.to_be_bytes());
                v
            },
            |e| {
                matches!(
                    e,
                    ConnectionError::Protocol(ProtocolViolation::Frame(FrameError::UnknownStatus(
                        7
                    )))
                )
            },
        ),
        (
            peer::raw(
                Header {
                    status: MessageStatus::Error,
                    ..h
                },
                &[0, 0, 0],
            )
            .to_vec(),
            |e| {
                matches!(
                    e,
                    ConnectionError::Protocol(ProtocolViolation::BadPayload { what: "error", .. })
                )
            },
        ),
    ];
    for (i, (bytes, ok)) in cases.into_iter().enumerate() {
        let mut p = Pair::no_keepalive();
        let _ = p.conn.call::<ConnectGetLibVersion>(&(), None).unwrap();
        p.flush();
        let err = p.deliver(&bytes).expect_err(&format!("case {i}"));
        assert!(ok(&err), "case {i}: {err:?}");
        assert!(p.conn.is_closed());
    }
}

#[test]
fn truncated_input_is_partial_not_an_error() {
    let mut p = Pair::no_keepalive();
    let _ = p.conn.call::<ConnectGetLibVersion>(&(), None).unwrap();
    let h = p.flush().pop().unwrap().header;
    let reply = peer::reply_to(&h, &ConnectGetLibVersionRet { lib_ver: 5 });
    for b in &reply {
        assert!(p.outputs().is_empty());
        p.deliver(&[*b]).unwrap();
    }
    assert_eq!(p.outputs().len(), 1);
}

#[test]
fn eof_fails_everything_pending_at_once() {
    let mut p = Pair::no_keepalive();
    let c1 = p.conn.call::<ConnectGetLibVersion>(&(), None).unwrap();
    let (sid, _) = open_upload(&mut p, false);
    p.conn.handle_eof();
    let outs = p.outputs();
    assert!(outs.contains(&Output::CallDone {
        serial: c1,
        result: Err(CallError::Connection(ConnectionError::PeerClosed))
    }));
    assert!(outs.contains(&Output::StreamEnded(sid)));
    assert_eq!(
        outs.last(),
        Some(&Output::Closed(ConnectionError::PeerClosed))
    );
    assert_eq!(
        p.conn.stream(sid).take_end(),
        Some(Err(StreamError::Connection(ConnectionError::PeerClosed)))
    );
}

// ---- §4 keepalive --------------------------------------------------------------------------

#[test]
fn daemon_ping_is_answered_even_with_keepalive_off() {
    let mut p = Pair::no_keepalive();
    p.deliver(&peer::ping()).unwrap();
    let f = p.flush();
    assert_eq!(f.len(), 1);
    assert_eq!(f[0].header.program, 0x6b65_6570);
    assert_eq!(f[0].header.procedure, 2, "PONG");
    assert_eq!(f[0].header.kind, MessageType::Message);
}

/// A daemon that pings faster than we write (a stalled socket, a flood) queues one PONG, not
/// one per PING: an unsent PONG already answers every PING since it was queued. Once it has
/// gone out, the next PING gets its own.
#[test]
fn at_most_one_pong_waits_to_be_sent() {
    let mut p = Pair::no_keepalive();
    let mut flood = Vec::new();
    for _ in 0..10_000 {
        flood.extend_from_slice(&peer::ping());
    }
    p.deliver(&flood).unwrap();
    let queued = p.conn.transmit_queued();
    let f = p.flush();
    let pongs = f.iter().filter(|f| f.header.procedure == 2).count();
    assert_eq!(
        pongs, 1,
        "10,000 PINGs queued {pongs} PONGs ({queued} bytes) before one was written"
    );
    assert_eq!(p.conn.stats().pings_answered, 10_000);
    p.deliver(&peer::ping()).unwrap();
    p.deliver(&peer::ping()).unwrap();
    assert_eq!(p.flush().len(), 1);
}

#[test]
fn keepalive_pings_then_declares_dead() {
    let mut p = Pair::new(Config {
        keepalive: Some(KeepaliveConfig {
            interval: Duration::from_secs(5),
            count: 6,
        }),
        ..Config::default()
    });
    let pending = p.conn.call::<ConnectGetLibVersion>(&(), None).unwrap();
    p.flush();
    let mut pings = 0;
    for _ in 0..29 {
        p.advance(Duration::from_secs(1));
        pings += p.flush().iter().filter(|f| f.header.procedure == 1).count();
    }
    assert_eq!(pings, 5);
    assert!(!p.conn.is_closed());
    p.advance(Duration::from_secs(1));
    let outs = p.outputs();
    let Some(Output::Closed(ConnectionError::KeepaliveTimeout { silent, .. })) = outs.last() else {
        panic!("{outs:?}")
    };
    assert_eq!(*silent, Duration::from_secs(30));
    assert!(outs.iter().any(|o| matches!(o, Output::CallDone { serial, result: Err(CallError::Connection(_)) } if *serial == pending)));
}

#[test]
fn pong_keeps_the_link_alive() {
    let mut p = Pair::new(Config {
        keepalive: Some(KeepaliveConfig {
            interval: Duration::from_secs(1),
            count: 3,
        }),
        ..Config::default()
    });
    for _ in 0..100 {
        p.advance(Duration::from_millis(500));
        if p.flush().iter().any(|f| f.header.procedure == 1) {
            p.deliver(&peer::pong()).unwrap();
        }
    }
    assert!(!p.conn.is_closed());
}

// ---- §8 events -----------------------------------------------------------------------------

#[test]
fn events_interleave_with_a_stream_and_unknown_ones_are_skipped() {
    let mut p = Pair::no_keepalive();
    let (id, h) = open_download(&mut p, false);
    // captures/events.decoded.txt: lifecycle event, serial 1.
    let ev = hex(
        "0000004c20008086000000010000013e0000000200000001000000000000001b0000000c7270632d72706370726f6265e918a9b5508d41a19b914a1f97aed3ebffffffff0000000000000000",
    );
    p.deliver(&peer::stream_data_to(&h, b"abc")).unwrap();
    p.deliver(&ev).unwrap_or_else(|e| panic!("{e}"));
    p.deliver(&peer::raw(
        Header {
            program: libvirt_remote::proto::REMOTE_PROGRAM,
            version: libvirt_remote::proto::REMOTE_VERSION,
            procedure: 9999,
            kind: MessageType::Message,
            serial: 1,
            status: MessageStatus::Ok,
        },
        &[1, 2, 3, 4],
    ))
    .unwrap();
    p.deliver(&peer::stream_data_to(&h, b"def")).unwrap();
    let outs = p.outputs();
    assert!(
        outs.iter().any(|o| matches!(
            o,
            Output::Event {
                event: events::Event::Domain { .. },
                ..
            }
        )),
        "{outs:?}"
    );
    assert_eq!(p.conn.stats().unknown_messages, 1);
    let data: Vec<StreamItem> = std::iter::from_fn(|| p.conn.stream(id).recv()).collect();
    assert_eq!(
        data,
        vec![
            StreamItem::Data(Bytes::from_static(b"abc")),
            StreamItem::Data(Bytes::from_static(b"def"))
        ]
    );
}

/// A download whose data (`0123456789`) and EOF arrive before its open REPLY; returns once
/// the client's finish went out (as at every EOF).
fn download_complete_before_its_reply(p: &mut Pair) -> (u32, Header) {
    let (id, call) = opening::<StorageVolDownload>(p, StorageVolStreamFlags::empty());
    p.deliver(&peer::stream_data_to(&call, b"0123456789"))
        .unwrap();
    p.deliver(&peer::stream_data_to(&call, &[])).unwrap();
    assert_eq!(
        kinds(&p.flush()),
        vec![(MessageType::Stream, MessageStatus::Ok, 0)],
        "finish sent at EOF"
    );
    (id, call)
}

#[test]
fn download_data_and_eof_before_the_open_reply() {
    // Found by the `connection` fuzz target: libvirtd registers the stream before replying,
    // so a short download can be complete before its REPLY arrives (reference §3.1).
    let mut p = Pair::no_keepalive();
    let (id, call) = download_complete_before_its_reply(&mut p);
    p.deliver(&peer::reply_to(&call, &())).unwrap();
    assert!(p.outputs().contains(&Output::StreamOpened(id)));
    assert_eq!(
        p.conn.stream(id).recv(),
        Some(StreamItem::Data(Bytes::from_static(b"0123456789")))
    );
    p.deliver(&peer::stream_ok_to(&call)).unwrap();
    assert_eq!(p.conn.stream(id).take_end(), Some(Ok(())));
    // A second REPLY for the same stream is still a violation.
    p.roundtrip_works();
}

#[test]
fn open_reply_after_a_download_was_finished_and_collected_is_a_late_reply() {
    // Seen in CI on a fresh machine (the KVM provider reading a 64-byte marker volume):
    // libvirtd's event loop sent the data, the EOF and the answer to our finish before its
    // worker thread sent the open call's REPLY. The stream had ended and been collected, so
    // the REPLY found nobody: "reply for serial 189 (proc 209) that no call is waiting for",
    // and the connection died.
    let mut p = Pair::no_keepalive();
    let (id, call) = download_complete_before_its_reply(&mut p);
    p.deliver(&peer::stream_ok_to(&call)).unwrap();
    assert_eq!(
        p.conn.stream(id).recv(),
        Some(StreamItem::Data(Bytes::from_static(b"0123456789")))
    );
    assert_eq!(p.conn.stream(id).take_end(), Some(Ok(())));
    p.deliver(&peer::reply_to(&call, &()))
        .expect("the open REPLY of a collected stream is a late reply, not a violation");
    assert!(!p.outputs().contains(&Output::StreamOpened(id)));
    p.roundtrip_works();

    // The same with the handle dropped before the daemon's answers came.
    let (id, call) = opening::<StorageVolDownload>(&mut p, StorageVolStreamFlags::empty());
    p.deliver(&peer::stream_data_to(&call, &[])).unwrap();
    p.flush();
    p.conn.stream(id).forget();
    p.deliver(&peer::stream_ok_to(&call)).unwrap();
    p.deliver(&peer::reply_to(&call, &()))
        .expect("the open REPLY of a forgotten stream is a late reply");
    // A second REPLY for that serial is still a violation.
    assert!(p.deliver(&peer::reply_to(&call, &())).is_err());
}

// ---- §8 event registrations (the core's subscription table) -------------------------------

/// REPLY to a `*_REGISTER_ANY` call with a callback id.
fn registered(call: &Header, callback_id: i32) -> Bytes {
    peer::reply_to(call, &CallbackIdRet { callback_id })
}

/// The one packet the client sent, checked to be a CALL of `procedure`.
fn one_call(frames: Vec<Frame>, procedure: i32) -> Frame {
    assert_eq!(
        frames.len(),
        1,
        "expected exactly one CALL of procedure {procedure}, got {frames:?}"
    );
    let f = frames.into_iter().next().expect("one");
    assert_eq!(
        (f.header.kind, f.header.procedure),
        (MessageType::Call, procedure),
        "{f:?}"
    );
    f
}

fn network_lifecycle(callback_id: i32) -> Bytes {
    peer::event(
        events::procs::NETWORK_LIFECYCLE,
        &CallbackMsg {
            callback_id,
            body: NetworkLifecycle {
                net: NonnullNetwork {
                    name: "default".into(),
                    uuid: Uuid([1; 16]),
                },
                event: libvirt_remote::proto::names::NetworkEventType::STARTED,
                detail: 0,
            },
        },
    )
}

/// The subscribers the single event output names.
fn routed(outs: Vec<Output>) -> Vec<SubscriberId> {
    match <[Output; 1]>::try_from(outs) {
        Ok([Output::Event { subscribers, .. }]) => subscribers,
        other => panic!("one event expected: {other:?}"),
    }
}

fn done(subscriber: SubscriberId, callback_id: i32) -> Output {
    Output::SubscriptionDone {
        subscriber,
        result: Ok(callback_id),
    }
}

const NET_REGISTER: i32 = 313;
const NET_DEREGISTER: i32 = 314;

fn subscribe_net(p: &mut Pair, event_id: i32) -> SubscriberId {
    p.conn.subscribe::<NetworkEvent>(event_id, None).unwrap()
}

/// A subscriber arrived while a DEREGISTER of its key is in flight: nothing goes out and it
/// gets no answer yet.
fn waits_for_the_deregistration(p: &mut Pair) {
    assert!(
        p.flush().is_empty(),
        "REGISTER sent before the DEREGISTER was answered"
    );
    assert_eq!(p.outputs(), vec![]);
}

#[test]
fn a_subscription_dropped_while_registering_is_undone_then_made_afresh() {
    let mut p = Pair::no_keepalive();
    let a = subscribe_net(&mut p, network_event_id::LIFECYCLE);
    let reg = one_call(p.flush(), NET_REGISTER);
    let want_args = xdr::to_bytes(&ConnectNetworkEventRegisterAnyArgs {
        event_id: network_event_id::LIFECYCLE,
        net: None,
    })
    .unwrap();
    assert_eq!(reg.payload, want_args);
    // Gone before the reply: nothing to send yet, the REGISTER is in flight.
    p.conn.unsubscribe(a);
    assert!(p.flush().is_empty());
    assert_eq!(p.conn.pending_calls(), 1, "the REGISTER is still awaited");

    // The reply comes: nobody wants it, so it is undone at once.
    p.deliver(&registered(&reg.header, 5)).unwrap();
    assert_eq!(p.outputs(), vec![], "no subscriber to tell");
    let dereg = one_call(p.flush(), NET_DEREGISTER);
    assert_eq!(
        dereg.payload,
        xdr::to_bytes(&CallbackIdArgs { callback_id: 5 }).unwrap()
    );
    // Its events reach nobody meanwhile.
    p.deliver(&network_lifecycle(5)).unwrap();
    assert_eq!(routed(p.outputs()), vec![]);

    // A new subscriber arrives while the DEREGISTER is in flight: it waits for it, then gets
    // a fresh registration.
    let b = subscribe_net(&mut p, network_event_id::LIFECYCLE);
    waits_for_the_deregistration(&mut p);
    p.deliver(&peer::reply_to(&dereg.header, &())).unwrap();
    let again = one_call(p.flush(), NET_REGISTER);
    assert_eq!(
        again.payload, want_args,
        "the same registration, made again"
    );
    p.deliver(&registered(&again.header, 6)).unwrap();
    assert_eq!(p.outputs(), vec![done(b, 6)]);
    p.deliver(&network_lifecycle(6)).unwrap();
    assert_eq!(routed(p.outputs()), vec![b]);
    assert_eq!(p.conn.pending_calls(), 0);
    p.roundtrip_works();
}

#[test]
fn a_subscriber_arriving_during_a_deregistration_waits_for_its_reply() {
    let mut p = Pair::no_keepalive();
    let a = subscribe_net(&mut p, network_event_id::LIFECYCLE);
    let reg = one_call(p.flush(), NET_REGISTER);
    p.deliver(&registered(&reg.header, 3)).unwrap();
    assert_eq!(p.outputs(), vec![done(a, 3)]);

    // The last subscriber leaves: DEREGISTER.
    p.conn.unsubscribe(a);
    let dereg = one_call(p.flush(), NET_DEREGISTER);
    // Another one arrives before its reply: no REGISTER goes out, no answer yet.
    let b = subscribe_net(&mut p, network_event_id::LIFECYCLE);
    waits_for_the_deregistration(&mut p);
    // An event of the old callback, still in the pipe, is for nobody.
    p.deliver(&network_lifecycle(3)).unwrap();
    assert_eq!(routed(p.outputs()), vec![]);

    // Even a refused DEREGISTER means the callback is gone: register anew.
    p.deliver(&peer::reply_error_to(
        &dereg.header,
        &peer::error(ErrorCode::INVALID_ARG.0, 0, "no callback 3"),
    ))
    .unwrap();
    let again = one_call(p.flush(), NET_REGISTER);
    p.deliver(&registered(&again.header, 4)).unwrap();
    assert_eq!(p.outputs(), vec![done(b, 4)]);
    p.deliver(&network_lifecycle(4)).unwrap();
    assert_eq!(routed(p.outputs()), vec![b]);
}

#[test]
fn subscribers_of_one_event_share_one_registration() {
    let mut p = Pair::no_keepalive();
    let sub = |p: &mut Pair| subscribe_net(p, network_event_id::LIFECYCLE);
    let a = sub(&mut p);
    let b = sub(&mut p);
    let reg = one_call(p.flush(), NET_REGISTER);
    p.deliver(&registered(&reg.header, 7)).unwrap();
    assert_eq!(p.outputs(), vec![done(a, 7), done(b, 7)]);
    // A third one joins the active registration: answered at once, nothing sent.
    let c = sub(&mut p);
    assert_eq!(p.outputs(), vec![done(c, 7)]);
    assert!(p.flush().is_empty());
    // Another event id is another registration.
    let m = subscribe_net(&mut p, network_event_id::METADATA_CHANGE);
    let reg_m = one_call(p.flush(), NET_REGISTER);
    p.deliver(&registered(&reg_m.header, 8)).unwrap();
    assert_eq!(p.outputs(), vec![done(m, 8)]);

    p.deliver(&network_lifecycle(7)).unwrap();
    assert_eq!(routed(p.outputs()), vec![a, b, c]);
    p.conn.unsubscribe(b);
    p.conn.unsubscribe(a);
    assert!(
        p.flush().is_empty(),
        "deregistered while a subscriber is left"
    );
    let dereg = last_one_out(&mut p, c, 7);
    p.deliver(&peer::reply_to(&dereg.header, &())).unwrap();
    assert_eq!(p.outputs(), vec![]);
    assert!(p.flush().is_empty(), "nobody waits: no new REGISTER");
    assert_eq!(p.conn.pending_calls(), 0);
}

#[test]
fn callback_ids_are_per_kind() {
    let mut p = Pair::no_keepalive();
    let dom = p
        .conn
        .subscribe::<DomainEvent>(events::event_id::LIFECYCLE, None)
        .unwrap();
    let dom_reg = one_call(p.flush(), 316);
    let sec = p
        .conn
        .subscribe::<SecretEvent>(secret_event_id::LIFECYCLE, None)
        .unwrap();
    let sec_reg = one_call(p.flush(), 380);
    // The qemu driver and the secret driver both hand out id 1.
    p.deliver(&registered(&dom_reg.header, 1)).unwrap();
    p.deliver(&registered(&sec_reg.header, 1)).unwrap();
    assert_eq!(p.outputs(), vec![done(dom, 1), done(sec, 1)]);

    let secret_event = || {
        peer::event(
            events::procs::SECRET_LIFECYCLE,
            &CallbackMsg {
                callback_id: 1,
                body: SecretLifecycle {
                    secret: NonnullSecret {
                        uuid: Uuid([3; 16]),
                        usage_type: SecretUsageType::VOLUME,
                        usage_id: "/v".into(),
                    },
                    event: SecretEventType::DEFINED,
                    detail: 0,
                },
            },
        )
    };
    // captures/events.decoded.txt's lifecycle event, re-addressed to callback 1.
    let domain_event = peer::event(
        events::procs::DOMAIN_LIFECYCLE,
        &CallbackMsg {
            callback_id: 1,
            body: Lifecycle {
                dom: NonnullDomain {
                    name: "rpc-rpcprobe".into(),
                    uuid: Uuid([7; 16]),
                    id: -1,
                },
                event: libvirt_remote::proto::names::DomainEventType::DEFINED,
                detail: libvirt_remote::proto::names::DomainEventType::DEFINED
                    .with_detail(0)
                    .detail,
            },
        },
    );
    p.deliver(&domain_event).unwrap();
    assert_eq!(routed(p.outputs()), vec![dom]);
    p.deliver(&secret_event()).unwrap();
    assert_eq!(routed(p.outputs()), vec![sec]);

    // Dropping the domain subscription deregisters the domain callback 1 only.
    p.conn.unsubscribe(dom);
    let dereg = one_call(p.flush(), 317);
    p.deliver(&peer::reply_to(&dereg.header, &())).unwrap();
    p.deliver(&secret_event()).unwrap();
    assert_eq!(routed(p.outputs()), vec![sec]);
    p.deliver(&domain_event).unwrap();
    assert_eq!(routed(p.outputs()), vec![]);
}

#[test]
fn a_refused_registration_fails_its_subscribers_and_can_be_retried() {
    let mut p = Pair::no_keepalive();
    let a = subscribe_net(&mut p, network_event_id::LIFECYCLE);
    let b = subscribe_net(&mut p, network_event_id::LIFECYCLE);
    let reg = one_call(p.flush(), NET_REGISTER);
    let err = peer::error(
        ErrorCode::INVALID_ARG.0,
        0,
        "event callback already tracked",
    );
    p.deliver(&peer::reply_error_to(&reg.header, &err)).unwrap();
    let want = Err(CallError::from(libvirt_remote::proto::RemoteError::from(
        err,
    )));
    assert_eq!(
        p.outputs(),
        vec![
            Output::SubscriptionDone {
                subscriber: a,
                result: want.clone()
            },
            Output::SubscriptionDone {
                subscriber: b,
                result: want
            },
        ]
    );
    assert!(p.flush().is_empty(), "nothing to undo");
    // The registration is gone: the next subscriber registers again.
    subscribe_net(&mut p, network_event_id::LIFECYCLE);
    one_call(p.flush(), NET_REGISTER);
}

#[test]
fn an_undecodable_registration_reply_is_fatal() {
    let mut p = Pair::no_keepalive();
    let a = subscribe_net(&mut p, network_event_id::LIFECYCLE);
    let reg = one_call(p.flush(), NET_REGISTER);
    let e = p.deliver(&peer::reply_to(&reg.header, &())).unwrap_err();
    assert!(
        matches!(
            &e,
            ConnectionError::Protocol(ProtocolViolation::BadPayload {
                what: "reply",
                procedure: NET_REGISTER,
                ..
            })
        ),
        "{e}"
    );
    assert_eq!(
        p.outputs(),
        vec![
            Output::SubscriptionDone {
                subscriber: a,
                result: Err(CallError::Connection(e.clone()))
            },
            Output::Closed(e)
        ]
    );
}

#[test]
fn connection_death_ends_every_subscription() {
    let mut p = Pair::no_keepalive();
    let sub = subscribe_net;
    // Active.
    let active = sub(&mut p, network_event_id::LIFECYCLE);
    let reg = one_call(p.flush(), NET_REGISTER);
    p.deliver(&registered(&reg.header, 1)).unwrap();
    assert_eq!(p.outputs(), vec![done(active, 1)]);
    // Registering.
    let registering = sub(&mut p, network_event_id::METADATA_CHANGE);
    one_call(p.flush(), NET_REGISTER);
    // Waiting behind a deregistration.
    p.conn.unsubscribe(active);
    one_call(p.flush(), NET_DEREGISTER);
    let behind = sub(&mut p, network_event_id::LIFECYCLE);
    let call = p.conn.call::<ConnectGetLibVersion>(&(), None).unwrap();
    assert_eq!(p.conn.pending_calls(), 3);

    p.conn.handle_eof();
    let e = ConnectionError::PeerClosed;
    let failed = |subscriber| Output::SubscriptionDone {
        subscriber,
        result: Err(CallError::Connection(e.clone())),
    };
    // The user's call completes; the table's own calls complete nobody; every waiting
    // subscriber fails; then Closed.
    assert_eq!(
        p.outputs(),
        vec![
            Output::CallDone {
                serial: call,
                result: Err(CallError::Connection(e.clone()))
            },
            failed(registering),
            failed(behind),
            Output::Closed(e.clone()),
        ]
    );
    assert_eq!(
        p.conn
            .subscribe::<NetworkEvent>(network_event_id::LIFECYCLE, None),
        Err(CallError::Connection(e))
    );
    p.conn.unsubscribe(behind);
    assert_eq!(p.outputs(), vec![]);
    assert!(p.flush().is_empty());
}

#[test]
fn open_reply_after_eof_and_abort_is_accepted_and_not_announced() {
    // The download reaches EOF before its REPLY, the caller aborts, then the REPLY comes:
    // it is the open call's answer (no violation), but the stream is being aborted, so it
    // is not reported as opened.
    let mut p = Pair::no_keepalive();
    let (id, call) = opening::<StorageVolDownload>(&mut p, StorageVolStreamFlags::empty());
    p.deliver(&peer::stream_data_to(&call, &[])).unwrap();
    p.conn.stream(id).abort("caller gave up").unwrap();
    assert_eq!(
        kinds(&p.flush()),
        vec![
            (MessageType::Stream, MessageStatus::Ok, 0),
            (MessageType::Stream, MessageStatus::Error, 0)
        ]
    );
    p.deliver(&peer::reply_to(&call, &())).unwrap();
    assert!(p.outputs().is_empty());
    p.deliver(&peer::stream_ok_to(&call)).unwrap();
    assert!(matches!(
        p.conn.stream(id).take_end(),
        Some(Err(StreamError::Aborted { .. }))
    ));
    // A second REPLY for the same stream would be a violation; this one was not.
    p.roundtrip_works();
}

#[test]
fn stream_open_reply_carries_the_procedure_return() {
    // Found against libvirtd 9.0: DOMAIN_SCREENSHOT answers its open call with the image's
    // MIME type, and the tunnelled migration prepares with a cookie; the stream must open
    // and the return must reach the caller, not be taken for a protocol violation.
    use libvirt_remote::proto::procs::domain::{
        DomainScreenshot, DomainScreenshotArgs, DomainScreenshotRet,
    };
    use libvirt_remote::proto::procs::migration::{
        DomainMigrateCookieRet, DomainMigratePrepareTunnel3, DomainMigratePrepareTunnel3Args,
    };
    use libvirt_remote::proto::types::{NonnullDomain, Uuid};
    let mut p = Pair::no_keepalive();
    let dom = NonnullDomain {
        name: "test".into(),
        uuid: Uuid::default(),
        id: 1,
    };
    let id = p
        .conn
        .open_stream::<DomainScreenshot>(&DomainScreenshotArgs {
            dom,
            screen: 0,
            flags: Default::default(),
        })
        .unwrap();
    let call = p.flush().pop().unwrap();
    let ret = DomainScreenshotRet {
        mime: Some("image/png".into()),
    };
    p.deliver(&peer::reply_to(&call.header, &ret)).unwrap();
    assert_eq!(p.outputs(), vec![Output::StreamOpened(id)]);
    let reply = p.conn.stream(id).open_reply().expect("the open reply");
    assert_eq!(xdr::from_bytes::<DomainScreenshotRet>(reply).unwrap(), ret);

    let id = p
        .conn
        .open_stream::<DomainMigratePrepareTunnel3>(&DomainMigratePrepareTunnel3Args {
            cookie_in: Bytes::from_static(b"in"),
            flags: DomainMigrateFlags::empty(),
            dname: None,
            bandwidth: 0,
            dom_xml: "<domain/>".into(),
        })
        .unwrap();
    let call = p.flush().pop().unwrap();
    assert_eq!(call.header.procedure, 215);
    let cookie = DomainMigrateCookieRet {
        cookie_out: Bytes::from_static(b"cookie"),
    };
    p.deliver(&peer::reply_to(&call.header, &cookie)).unwrap();
    assert_eq!(p.outputs(), vec![Output::StreamOpened(id)]);
    assert_eq!(
        xdr::from_bytes::<DomainMigrateCookieRet>(p.conn.stream(id).open_reply().unwrap()).unwrap(),
        cookie
    );
    p.roundtrip_works();

    // A void stream procedure still refuses a payload, and one that does not decode as the
    // procedure's return is a violation too.
    let (_, call) = opening::<StorageVolUpload>(&mut p, StorageVolStreamFlags::empty());
    let err = p
        .deliver(&peer::reply_to(&call, &ret))
        .expect_err("payload on a void stream reply");
    assert!(
        matches!(
            err,
            ConnectionError::Protocol(ProtocolViolation::BadPayload {
                what: "stream open reply",
                procedure: 208,
                ..
            })
        ),
        "{err:?}"
    );
}

#[test]
fn stream_that_dies_before_opening_ends_despite_buffered_data() {
    // Found with a bad stream open reply against libvirtd: its data had arrived first, the
    // REPLY killed the connection, and the stream never ended because the data nobody could
    // read (the stream never opened) kept `take_end` waiting: the opener hung.
    let mut p = Pair::no_keepalive();
    let (id, call) = opening::<StorageVolDownload>(&mut p, StorageVolStreamFlags::empty());
    p.deliver(&peer::stream_data_to(&call, b"early")).unwrap();
    let err = p
        .deliver(&peer::reply_to(&call, &1u32))
        .expect_err("a payload on a void stream reply");
    assert!(matches!(err, ConnectionError::Protocol(_)), "{err:?}");
    assert!(p.outputs().contains(&Output::StreamEnded(id)));
    assert!(
        matches!(
            p.conn.stream(id).take_end(),
            Some(Err(StreamError::Connection(_)))
        ),
        "a stream that never opened ends at once"
    );
}

// ---- duplex streams (console, channel) ---------------------------------------------------

fn open_console(p: &mut Pair) -> (u32, Header) {
    use libvirt_remote::proto::procs::domain::{DomainOpenConsole, DomainOpenConsoleArgs};
    let _ = p.outputs();
    let id = p
        .conn
        .open_stream::<DomainOpenConsole>(&DomainOpenConsoleArgs {
            dom: NonnullDomain {
                name: "g".into(),
                uuid: Uuid([9; 16]),
                id: 1,
            },
            dev_name: None,
            flags: Default::default(),
        })
        .unwrap();
    let call = p.flush().pop().unwrap().header;
    assert_eq!(call.procedure, 201);
    // The daemon may send guest output before its REPLY.
    p.deliver(&peer::stream_data_to(&call, b"boot")).unwrap();
    p.deliver(&peer::reply_to(&call, &())).unwrap();
    assert_eq!(
        p.outputs(),
        vec![Output::StreamReadable(id), Output::StreamOpened(id)]
    );
    (id, call)
}

fn recv_all(p: &mut Pair, id: u32) -> Vec<u8> {
    let mut got = Vec::new();
    while let Some(item) = p.conn.stream(id).recv() {
        let StreamItem::Data(d) = item else {
            panic!("{item:?}")
        };
        got.extend_from_slice(&d);
    }
    got
}

#[test]
fn duplex_sends_and_receives_then_the_client_finishes() {
    let mut p = Pair::no_keepalive();
    let (id, h) = open_console(&mut p);
    // Both directions at once on one stream.
    p.conn
        .stream(id)
        .send(Bytes::from_static(b"root\n"))
        .unwrap();
    p.deliver(&peer::stream_data_to(&h, b" log")).unwrap();
    let sent = p.flush();
    assert_eq!(
        kinds(&sent),
        vec![(MessageType::Stream, MessageStatus::Continue, 5)]
    );
    assert_eq!(sent[0].payload, &b"root\n"[..]);
    assert_eq!(recv_all(&mut p, id), b"boot log");
    // Our finish: STREAM OK out; output the daemon sent meanwhile is dropped.
    p.conn.stream(id).finish().unwrap();
    p.conn.stream(id).finish().unwrap();
    assert_eq!(
        kinds(&p.flush()),
        vec![(MessageType::Stream, MessageStatus::Ok, 0)],
        "one finish"
    );
    assert_eq!(
        p.conn.stream(id).send(Bytes::from_static(b"x")),
        Err(StreamMisuse::AfterFinish.into())
    );
    p.deliver(&peer::stream_data_to(&h, b"late")).unwrap();
    assert!(p.conn.stream(id).recv().is_none(), "straggler dropped");
    p.deliver(&peer::stream_ok_to(&h)).unwrap();
    assert_eq!(p.conn.stream(id).take_end(), Some(Ok(())));
    assert_eq!(p.conn.stream_count(), 0);
    p.roundtrip_works();
}

#[test]
fn duplex_daemon_eof_is_answered_with_our_finish() {
    let mut p = Pair::no_keepalive();
    let (id, h) = open_console(&mut p);
    p.deliver(&peer::stream_data_to(&h, &[])).unwrap();
    assert_eq!(
        kinds(&p.flush()),
        vec![(MessageType::Stream, MessageStatus::Ok, 0)]
    );
    assert_eq!(
        p.conn.stream(id).send(Bytes::from_static(b"x")),
        Err(StreamMisuse::AfterFinish.into()),
        "nothing more to send once the daemon finished"
    );
    assert_eq!(recv_all(&mut p, id), b"boot");
    p.deliver(&peer::stream_ok_to(&h)).unwrap();
    assert_eq!(p.conn.stream(id).take_end(), Some(Ok(())));
    p.roundtrip_works();
}

#[test]
fn duplex_abort_server_error_and_misuse() {
    // Abort from our side: data queued for it is dropped, the daemon's answer ends it.
    let mut p = Pair::no_keepalive();
    let (id, h) = open_console(&mut p);
    p.conn
        .stream(id)
        .send(Bytes::from(vec![1u8; 100_000]))
        .unwrap();
    p.conn.stream(id).abort("leaving").unwrap();
    assert_eq!(
        kinds(&p.flush()),
        vec![(MessageType::Stream, MessageStatus::Error, 0)]
    );
    p.deliver(&peer::stream_ok_to(&h)).unwrap();
    recv_all(&mut p, id);
    let Some(Err(StreamError::Aborted { reason, .. })) = p.conn.stream(id).take_end() else {
        panic!()
    };
    assert_eq!(&*reason, "leaving");
    // A server error mid-stream (state a real daemon produces only on a failing host
    // device: scripted) ends it and is sticky for both directions.
    let (id, h) = open_console(&mut p);
    p.deliver(&peer::stream_error_to(
        &h,
        &peer::error(1, 10, "console went away"),
    ))
    .unwrap();
    let err = p
        .conn
        .stream(id)
        .send(Bytes::from_static(b"x"))
        .unwrap_err();
    assert!(matches!(err, StreamError::Remote(_)), "{err:?}");
    assert_eq!(p.conn.stream(id).finish(), Err(err.clone()));
    recv_all(&mut p, id);
    assert_eq!(p.conn.stream(id).take_end(), Some(Err(err)));
    // Holes: a console is never sparse.
    let (id, _) = open_console(&mut p);
    assert_eq!(
        p.conn.stream(id).send_hole(10),
        Err(StreamMisuse::NotSparse.into())
    );
    assert!(p.flush().is_empty());
    // The connection dies: the stream ends with a typed connection error.
    p.conn.stream(id).send(Bytes::from_static(b"x")).unwrap();
    p.conn.handle_eof();
    recv_all(&mut p, id);
    assert!(
        matches!(
            p.conn.stream(id).take_end(),
            Some(Err(StreamError::Connection(_)))
        ),
        "connection death ends it"
    );
}

/// The legacy any-registration (`CONNECT_DOMAIN_EVENT_REGISTER_ANY`, procedure 167): keyed
/// by event id, its void reply answers the subscribers with that id, legacy messages
/// (no callback id) reach the subscribers of their own id (lifecycle also the legacy
/// 105 registration's, which shares the any-registration of `LIFECYCLE`: each subscriber
/// gets the message once), and the last one out sends `DEREGISTER_ANY` (168) with the id.
#[test]
fn legacy_any_registrations_route_by_event_id() {
    use libvirt_remote::proto::events::{DomainOnly, event_id};
    use libvirt_remote::proto::procs::connect::ConnectDomainEventRegisterAnyArgs;
    let mut p = Pair::no_keepalive();
    let dom = || NonnullDomain {
        name: "legacy".into(),
        uuid: Uuid([9; 16]),
        id: 1,
    };
    let id_args =
        |event_id| xdr::to_bytes(&ConnectDomainEventRegisterAnyArgs { event_id }).unwrap();

    let reboot = p
        .conn
        .subscribe_domain_legacy_any(event_id::REBOOT)
        .unwrap();
    let reg = one_call(p.flush(), 167);
    assert_eq!(reg.payload, id_args(event_id::REBOOT));
    p.deliver(&peer::reply_to(&reg.header, &())).unwrap();
    assert_eq!(p.outputs(), vec![done(reboot, event_id::REBOOT)]);
    // A second subscriber of the id shares the registration, answered at once.
    let reboot2 = p
        .conn
        .subscribe_domain_legacy_any(event_id::REBOOT)
        .unwrap();
    assert!(p.flush().is_empty());
    assert_eq!(p.outputs(), vec![done(reboot2, event_id::REBOOT)]);

    let life = p
        .conn
        .subscribe_domain_legacy_any(event_id::LIFECYCLE)
        .unwrap();
    let reg = one_call(p.flush(), 167);
    p.deliver(&peer::reply_to(&reg.header, &())).unwrap();
    assert_eq!(p.outputs(), vec![done(life, event_id::LIFECYCLE)]);
    // 105 is the same daemon callback as the any-registration of LIFECYCLE (libvirtd
    // refuses it as already tracked): it joins that registration, nothing is sent.
    let legacy = p.conn.subscribe_domain_legacy().unwrap();
    assert!(p.flush().is_empty());
    assert_eq!(p.outputs(), vec![done(legacy, event_id::LIFECYCLE)]);

    let reboot_msg = peer::event(
        events::procs::DOMAIN_REBOOT_LEGACY,
        &DomainOnly { dom: dom() },
    );
    p.deliver(&reboot_msg).unwrap();
    assert_eq!(routed(p.outputs()), vec![reboot, reboot2]);
    p.deliver(&peer::event(
        events::procs::DOMAIN_LIFECYCLE_LEGACY,
        &Lifecycle {
            dom: dom(),
            event: libvirt_remote::proto::names::DomainEventType::STARTED,
            detail: libvirt_remote::proto::names::DomainEventType::STARTED
                .with_detail(0)
                .detail,
        },
    ))
    .unwrap();
    let mut got = routed(p.outputs());
    got.sort_unstable();
    assert_eq!(got, vec![life, legacy]);
    // An id nobody registered reaches nobody.
    p.deliver(&peer::event(
        events::procs::DOMAIN_CONTROL_ERROR_LEGACY,
        &DomainOnly { dom: dom() },
    ))
    .unwrap();
    assert_eq!(routed(p.outputs()), vec![]);

    // The last reboot subscriber out: DEREGISTER_ANY with the event id.
    p.conn.unsubscribe(reboot);
    assert!(p.flush().is_empty());
    p.conn.unsubscribe(reboot2);
    let dereg = one_call(p.flush(), 168);
    assert_eq!(dereg.payload, id_args(event_id::REBOOT));
    p.deliver(&peer::reply_to(&dereg.header, &())).unwrap();
    p.deliver(&reboot_msg).unwrap();
    assert_eq!(routed(p.outputs()), vec![]);
    assert_eq!(p.conn.pending_calls(), 0);
    p.roundtrip_works();
}

/// A reconnect's successor: the dead connection's active registration is made again with the
/// same subscriber (a REGISTER on the new connection, then `SubscriptionDone` and its events
/// under the new callback id); a stream that ended with the death reads the same typed error
/// from the successor; serials continue, so a late `forget_call` of a dead call never names
/// a call of the new connection.
#[test]
fn a_successor_registers_the_lost_subscriptions_again_and_continues_serials() {
    let mut p = Pair::no_keepalive();
    assert!(
        p.conn.successor(p.now).is_none(),
        "a live connection has none"
    );
    let sub = active_network_subscription(&mut p, 3);
    let down = p
        .conn
        .open_stream::<StorageVolDownload>(&transfer(10, StorageVolStreamFlags::default()))
        .unwrap();
    p.accept_open(down);
    let call = p.conn.call::<ConnectGetLibVersion>(&(), None).unwrap();
    p.flush();
    p.conn.handle_eof();
    let outs = p.outputs();
    assert!(
        outs.iter().any(|o| matches!(o, Output::CallDone { serial, result: Err(CallError::Connection(ConnectionError::PeerClosed)) } if *serial == call)),
        "the call in flight ends with the lost connection's error: {outs:?}"
    );
    assert_eq!(p.conn.lost_registrations(), 1);

    let mut next = p.conn.successor(p.now).expect("a dead connection has one");
    assert!(!next.is_closed());
    assert_eq!(next.pending_calls(), 0);
    assert_eq!(
        next.transmit_queued(),
        0,
        "nothing is sent before resubscribe"
    );
    assert!(matches!(
        next.stream(down).take_end(),
        Some(Err(StreamError::Connection(ConnectionError::PeerClosed)))
    ));
    // The dead call's late forget names nothing of the new connection.
    next.forget_call(call);
    p.conn = next;
    let fresh = p.conn.call::<ConnectGetLibVersion>(&(), None).unwrap();
    assert!(fresh > call && fresh > down, "serials continue ({fresh})");
    p.flush();

    p.conn.resubscribe();
    assert_eq!(p.conn.lost_registrations(), 0);
    let reg = one_call(p.flush(), NET_REGISTER);
    assert_eq!(
        reg.payload,
        xdr::to_bytes(&ConnectNetworkEventRegisterAnyArgs {
            event_id: network_event_id::LIFECYCLE,
            net: None,
        })
        .unwrap()
    );
    p.deliver(&registered(&reg.header, 9)).unwrap();
    assert_eq!(p.outputs(), vec![done(sub, 9)]);
    // Events under the new id reach it; leaving deregisters on the new connection.
    last_one_out(&mut p, sub, 9);
}

/// A network lifecycle subscription registered under `callback_id`.
fn active_network_subscription(p: &mut Pair, callback_id: i32) -> SubscriberId {
    let sub = p
        .conn
        .subscribe::<NetworkEvent>(network_event_id::LIFECYCLE, None)
        .unwrap();
    let reg = one_call(p.flush(), NET_REGISTER);
    p.deliver(&registered(&reg.header, callback_id)).unwrap();
    assert_eq!(p.outputs(), vec![done(sub, callback_id)]);
    sub
}

/// `sub`, the last subscriber of the network registration `callback_id`, gets its event,
/// then leaves: the DEREGISTER names that id.
fn last_one_out(p: &mut Pair, sub: SubscriberId, callback_id: i32) -> Frame {
    p.deliver(&network_lifecycle(callback_id)).unwrap();
    assert_eq!(routed(p.outputs()), vec![sub]);
    p.conn.unsubscribe(sub);
    let dereg = one_call(p.flush(), NET_DEREGISTER);
    assert_eq!(
        dereg.payload,
        xdr::to_bytes(&CallbackIdArgs { callback_id }).unwrap()
    );
    dereg
}

/// A subscriber that leaves while the link is down is not registered again.
#[test]
fn a_subscriber_gone_during_the_outage_is_not_registered_again() {
    let mut p = Pair::no_keepalive();
    let sub = active_network_subscription(&mut p, 3);
    p.conn.handle_eof();
    p.outputs();
    p.conn.unsubscribe(sub);
    assert_eq!(p.conn.lost_registrations(), 0);
    let mut next = p.conn.successor(p.now).unwrap();
    next.resubscribe();
    assert_eq!(next.transmit_queued(), 0, "nothing to register");
}
