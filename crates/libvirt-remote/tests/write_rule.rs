//! Who writes next (the core's write rule, `conn::Writer`): a lone call may be written by its
//! caller; otherwise the driver writes; a half-written packet is finished first and whole;
//! the driver waits once for the callers it woke. Driven through the sans-io core against the
//! scripted peer, with a virtual clock: every packet the peer frames is checked whole and in
//! order. Deterministic: no sockets, no sleeps.

use std::time::Duration;

use bytes::Bytes;
use libvirt_remote::conn::{CALLER_WRITE_MAX, Config, KeepaliveConfig, Output, WriteTurn, Writer};
use libvirt_remote::proto::procs::connect::ConnectGetLibVersion;
use libvirt_remote::proto::procs::storage::{StorageVolTransferArgs, StorageVolUpload};
use libvirt_remote::proto::types::NonnullStorageVol;
use libvirt_remote::proto::{KEEPALIVE_PING, KEEPALIVE_PROGRAM, Procedure, REMOTE_PROGRAM};
use libvirt_remote::wire::frame::{Frame, MIN_FRAME_LEN, MessageStatus, MessageType};
use libvirt_remote_testkit::Pair;
use libvirt_remote_testkit::peer::{self, Raw};

/// A pair whose transport has a caller-side write path (a unix or TCP socket's).
fn pair() -> Pair {
    let mut p = Pair::no_keepalive();
    p.conn.set_caller_writes(true);
    p
}

fn call(p: &mut Pair) -> u32 {
    p.conn.call::<ConnectGetLibVersion>(&(), None).unwrap()
}

/// A call with `len` bytes of arguments (opaque to the core).
fn call_with_args(p: &mut Pair, len: usize) -> u32 {
    let args = Raw(Bytes::from(vec![7u8; len]));
    p.conn
        .call_raw(REMOTE_PROGRAM, ConnectGetLibVersion::NUMBER, &args, None)
        .unwrap()
}

fn serials(frames: &[Frame]) -> Vec<(MessageType, u32)> {
    frames
        .iter()
        .map(|f| (f.header.kind, f.header.serial))
        .collect()
}

/// The daemon answers `f`, and the reply is routed.
fn answer(p: &mut Pair, f: &Frame) {
    p.answer_lib_version(&f.header).unwrap();
}

#[test]
fn a_lone_call_is_written_by_its_caller() {
    let mut p = pair();
    let serial = call(&mut p);
    assert_eq!(p.conn.write_turn(), WriteTurn::Caller);
    let frames = p.caller_write(usize::MAX).expect("the caller's turn");
    assert_eq!(serials(&frames), [(MessageType::Call, serial)]);
    assert_eq!(p.conn.transmit_queued(), 0);
    assert_eq!(p.conn.writer(), Writer::Idle);
    assert!(p.conn.take_caller_wrote(), "the driver hears of the write");
    assert!(!p.conn.take_caller_wrote(), "once");
    assert!(p.flush().is_empty(), "nothing left for the driver");
}

#[test]
fn without_a_caller_write_path_the_driver_writes() {
    let mut p = Pair::no_keepalive();
    call(&mut p);
    assert_eq!(p.conn.write_turn(), WriteTurn::Driver);
    assert!(p.caller_write(usize::MAX).is_none());
    assert_eq!(p.flush().len(), 1);
}

#[test]
fn a_call_made_while_another_is_pending_is_the_drivers() {
    let mut p = pair();
    let first = call(&mut p);
    p.caller_write(usize::MAX).unwrap();
    let second = call(&mut p);
    assert_eq!(
        p.conn.write_turn(),
        WriteTurn::Driver,
        "two calls pending: the driver batches"
    );
    let frames = p.flush();
    assert_eq!(serials(&frames), [(MessageType::Call, second)]);
    answer(&mut p, &frames[0]);
    p.outputs();
    let third = call(&mut p);
    assert_eq!(
        p.conn.write_turn(),
        WriteTurn::Driver,
        "call {first} still pending beside {third}"
    );
}

#[test]
fn more_than_a_callers_share_queued_is_the_drivers() {
    let mut p = pair();
    call_with_args(&mut p, CALLER_WRITE_MAX);
    assert_eq!(p.conn.write_turn(), WriteTurn::Driver);
    let mut q = pair();
    call_with_args(&mut q, CALLER_WRITE_MAX - MIN_FRAME_LEN);
    assert_eq!(q.conn.write_turn(), WriteTurn::Caller, "exactly the limit");
}

#[test]
fn callers_leave_their_calls_to_a_driver_that_holds_packets() {
    let mut p = pair();
    call(&mut p);
    // The driver takes the call, and has not written it yet.
    let (_, f) = p.transmit().expect("the call");
    assert_eq!(p.conn.writer(), Writer::Driver);
    answer(&mut p, &f);
    p.outputs();
    let next = call(&mut p);
    assert_eq!(
        p.conn.write_turn(),
        WriteTurn::Driver,
        "a lone call, but the driver holds bytes it took before it: nothing may overtake them"
    );
    assert!(p.caller_write(usize::MAX).is_none());
    p.conn.handle_written();
    assert_eq!(p.conn.writer(), Writer::Idle);
    assert_eq!(p.conn.write_turn(), WriteTurn::Caller);
    let frames = p.caller_write(usize::MAX).unwrap();
    assert_eq!(serials(&frames), [(MessageType::Call, next)]);
}

#[test]
fn the_rest_of_a_half_written_packet_goes_first_and_whole() {
    let mut p = pair();
    let first = call_with_args(&mut p, 100);
    let frames = p.caller_write(40).unwrap();
    assert!(frames.is_empty(), "40 of 128 bytes: no whole packet yet");
    assert_eq!(p.conn.writer(), Writer::CallerPartial);
    assert_eq!(p.conn.transmit_queued(), 128 - 40);
    // Its caller gives up; the next lone call must not go out in the middle of it.
    p.conn.forget_call(first);
    let second = call(&mut p);
    assert_eq!(p.conn.write_turn(), WriteTurn::Driver);
    let frames = p.flush();
    assert_eq!(
        serials(&frames),
        [(MessageType::Call, first), (MessageType::Call, second)]
    );
    assert_eq!(frames[0].payload.len(), 100);
    assert_eq!(p.conn.writer(), Writer::Idle);
}

#[test]
fn keepalive_waits_behind_a_half_written_packet() {
    let mut p = Pair::new(Config {
        keepalive: Some(KeepaliveConfig {
            interval: Duration::from_secs(5),
            count: 6,
        }),
        ..Config::default()
    });
    p.conn.set_caller_writes(true);
    let serial = call_with_args(&mut p, 100);
    p.caller_write(10).unwrap();
    // Our own ping after 5 s of silence, and the answer to a ping of the daemon's: both jump
    // the queue, but not into the packet that is on its way.
    p.advance(Duration::from_secs(5));
    p.deliver(&peer::ping()).unwrap();
    let frames = p.flush();
    let kinds: Vec<_> = frames
        .iter()
        .map(|f| (f.header.program, f.header.kind, f.header.serial))
        .collect();
    assert_eq!(
        kinds,
        [
            (REMOTE_PROGRAM, MessageType::Call, serial),
            (KEEPALIVE_PROGRAM, MessageType::Message, 0),
            (KEEPALIVE_PROGRAM, MessageType::Message, 0),
        ]
    );
    assert!(
        frames[1..]
            .iter()
            .any(|f| f.header.procedure == KEEPALIVE_PING)
    );
}

#[test]
fn an_abort_keeps_the_rest_of_a_half_written_data_packet() {
    let mut p = pair();
    let vol = NonnullStorageVol {
        pool: "p".into(),
        name: "v".into(),
        key: "/p/v".into(),
    };
    let id = p
        .conn
        .open_stream::<StorageVolUpload>(&StorageVolTransferArgs::new(vol, 0, 0, false))
        .unwrap();
    p.accept_open(id);
    p.conn.stream(id).send(Bytes::from(vec![1u8; 64])).unwrap();
    p.conn.stream(id).send(Bytes::from(vec![2u8; 64])).unwrap();
    let serial = call(&mut p);
    // The lone call's caller writes what is queued before it too: the first data packet,
    // half of it.
    assert!(p.caller_write(60).unwrap().is_empty());
    p.conn.stream(id).abort("changed my mind").unwrap();
    let frames = p.flush();
    let got: Vec<_> = frames
        .iter()
        .map(|f| {
            (
                f.header.kind,
                f.header.status,
                f.header.serial,
                f.payload.len(),
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            // The begun packet, whole; the second one dropped by the abort.
            (MessageType::Stream, MessageStatus::Continue, id, 64),
            (MessageType::Call, MessageStatus::Ok, serial, 0),
            (MessageType::Stream, MessageStatus::Error, id, 0),
        ]
    );
}

#[test]
fn a_packet_with_descriptors_goes_whole_from_the_driver() {
    let mut p = pair();
    p.conn.set_fd_passing(true);
    let (a, _b) = std::os::unix::net::UnixStream::pair().unwrap();
    let serial = p
        .conn
        .call_raw_with_fds(REMOTE_PROGRAM, 450, &(), vec![a.into()], None)
        .unwrap();
    assert_eq!(
        p.caller_write(usize::MAX).unwrap(),
        [],
        "the caller's write stops before a packet with descriptors"
    );
    assert_eq!(p.conn.writer(), Writer::Idle);
    let (_, f) = p.transmit().unwrap();
    assert_eq!(
        (f.header.kind, f.header.serial),
        (MessageType::CallWithFds, serial)
    );
    assert_eq!(p.last_fds, 1);
}

#[test]
fn a_dead_connection_leaves_nobody_holding_anything() {
    let mut p = pair();
    call_with_args(&mut p, 100);
    p.caller_write(10).unwrap();
    assert_eq!(p.conn.writer(), Writer::CallerPartial);
    p.conn.close("test");
    assert_eq!(p.conn.writer(), Writer::Idle);
    assert_eq!(p.conn.transmit_queued(), 0);
    assert_eq!(p.conn.write_turn(), WriteTurn::Driver);
}

/// The batch rule: after routing replies to N callers, the driver waits one scheduler turn
/// before writing, unless all N next calls are queued already.
#[test]
fn the_driver_waits_once_for_woken_callers_whose_calls_are_not_queued() {
    let mut p = Pair::no_keepalive();
    for _ in 0..3 {
        call(&mut p);
    }
    let frames = p.flush();
    for f in &frames {
        answer(&mut p, f);
    }
    let done = p.outputs();
    assert_eq!(done.len(), 3);
    assert!(done.iter().all(|o| matches!(o, Output::CallDone { .. })));
    // One woken caller made its next call, and the driver took it.
    call(&mut p);
    let (len, _) = p.transmit().unwrap();
    assert!(
        p.conn.batch_wait(true, len),
        "two woken callers have not called yet: wait for them"
    );
    assert!(!p.conn.batch_wait(true, len), "once per batch");
}

#[test]
fn a_lone_woken_callers_call_already_queued_goes_without_a_wait() {
    let mut p = Pair::no_keepalive();
    call(&mut p);
    let f = p.flush().pop().unwrap();
    answer(&mut p, &f);
    p.outputs();
    call(&mut p);
    let (len, _) = p.transmit().unwrap();
    assert!(
        !p.conn.batch_wait(true, len),
        "the one woken caller's call is taken: nothing more is coming to batch with it"
    );
}
