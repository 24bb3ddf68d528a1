//! Golden vectors for event registration and event messages: real `virsh event` ↔
//! libvirtd 9.0.0 traffic from the decoded wire captures of the protocol reference
//! (`captures/events.decoded.txt`, `captures/event_ka.decoded.txt`), copied here so CI needs no
//! checkout of the reference. Each constant names its file and packet.

use bytes::BytesMut;
use libvirt_rpc::proto::events::{
    self, CallbackMsg, DomainEvent, EVENT_PROCS, Event, Lifecycle, callback_proc, event_id,
    event_id_of_proc, lifecycle, lifecycle_detail,
};
use libvirt_rpc::proto::procs::common::CallbackIdArgs;
use libvirt_rpc::proto::procs::connect::{
    ConnectDomainEventCallbackDeregisterAny, ConnectDomainEventCallbackRegisterAny,
    ConnectDomainEventCallbackRegisterAnyArgs,
};
use libvirt_rpc::proto::types::{Domain, Uuid};
use libvirt_rpc::proto::{Procedure, REMOTE_PROGRAM};
use libvirt_rpc::wire::frame::{self, Frame, MessageStatus, MessageType};
use libvirt_rpc::wire::xdr;

fn unhex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

fn frame(hex: &str) -> Frame {
    let mut buf = BytesMut::from(&unhex(hex)[..]);
    let f = frame::decode(&mut buf).unwrap().expect("complete packet");
    assert!(buf.is_empty());
    f
}

fn call<P: Procedure>(hex: &str, args: &P::Args) {
    let f = frame(hex);
    assert_eq!(
        (f.header.program, f.header.procedure),
        (P::PROGRAM, P::NUMBER),
        "{}",
        P::NAME
    );
    assert_eq!(f.header.kind, MessageType::Call);
    assert_eq!(
        xdr::to_bytes(args).unwrap(),
        f.payload,
        "{} args differ from virsh's",
        P::NAME
    );
}

fn register_reply(hex: &str) -> i32 {
    let f = frame(hex);
    assert_eq!(
        f.header.procedure,
        ConnectDomainEventCallbackRegisterAny::NUMBER
    );
    assert_eq!(
        (f.header.kind, f.header.status),
        (MessageType::Reply, MessageStatus::Ok)
    );
    let ret: <ConnectDomainEventCallbackRegisterAny as Procedure>::Ret =
        xdr::from_bytes(f.payload.clone()).unwrap();
    assert_eq!(xdr::to_bytes(&ret).unwrap(), f.payload);
    ret.callback_id
}

/// The domain of `events.decoded.txt`.
fn probe(id: i32) -> Domain {
    let uuid: Uuid = "e918a9b5-508d-41a1-9b91-4a1f97aed3eb".parse().unwrap();
    Domain {
        name: "rpc-rpcprobe".into(),
        uuid,
        id,
    }
}

#[test]
fn lifecycle_registration_matches_virsh() {
    call::<ConnectDomainEventCallbackRegisterAny>(
        EVENTS_C006,
        &ConnectDomainEventCallbackRegisterAnyArgs {
            event_id: event_id::LIFECYCLE,
            dom: None,
        },
    );
    assert_eq!(register_reply(EVENTS_S006), 27);
    call::<ConnectDomainEventCallbackDeregisterAny>(
        EVENTS_C008,
        &CallbackIdArgs { callback_id: 27 },
    );
}

#[test]
fn captured_lifecycle_events_decode() {
    use lifecycle_detail::{defined, resumed, shutdown, started, stopped, undefined};

    // define, start (QEMU resumes the CPUs, then libvirt reports the boot), destroy (QEMU
    // reports a host-initiated shutdown first), undefine.
    let want = [
        (EVENTS_S007, -1, lifecycle::DEFINED, defined::ADDED),
        (EVENTS_S008, 5, lifecycle::RESUMED, resumed::UNPAUSED),
        (EVENTS_S009, 5, lifecycle::STARTED, started::BOOTED),
        (EVENTS_S010, 5, lifecycle::SHUTDOWN, shutdown::HOST),
        (EVENTS_S011, -1, lifecycle::STOPPED, stopped::DESTROYED),
        (EVENTS_S012, -1, lifecycle::UNDEFINED, undefined::REMOVED),
    ];
    for (hex, id, event, detail) in want {
        let f = frame(hex);
        assert_eq!(f.header.program, REMOTE_PROGRAM);
        assert_eq!(f.header.procedure, events::procs::DOMAIN_LIFECYCLE);
        assert_eq!(
            (f.header.kind, f.header.status),
            (MessageType::Message, MessageStatus::Ok)
        );
        assert_eq!(f.header.serial, 1, "events carry serial 1, not 0");
        assert_eq!(
            event_id_of_proc(f.header.procedure),
            Some(event_id::LIFECYCLE)
        );

        let ev = events::decode(f.header.procedure, f.payload.clone())
            .unwrap()
            .unwrap();
        assert_eq!(ev.callback_id(), Some(27));
        let Event::Domain {
            callback_id: 27,
            event: de,
        } = ev
        else {
            panic!("{ev:?}")
        };
        assert_eq!(
            de,
            DomainEvent::Lifecycle(Lifecycle {
                dom: probe(id),
                event,
                detail
            })
        );
        assert_eq!(de.domain(), &probe(id));
        assert_eq!(de.event_id(), event_id::LIFECYCLE);

        // The message struct re-encodes to the captured bytes.
        let m: CallbackMsg<Lifecycle> = xdr::from_bytes(f.payload.clone()).unwrap();
        assert_eq!(xdr::to_bytes(&m).unwrap(), f.payload);
    }
}

#[test]
fn every_9_0_event_id_registration_matches_virsh() {
    // `virsh event --all` registers ids 0..=26: exactly the ids libvirt 9.0 defines.
    assert_eq!(EVENT_KA_REGISTER_CALLS.len(), event_id::COUNT_9_0 as usize);
    for (id, (call_hex, reply_hex)) in (0..).zip(
        EVENT_KA_REGISTER_CALLS
            .iter()
            .zip(EVENT_KA_REGISTER_REPLIES),
    ) {
        call::<ConnectDomainEventCallbackRegisterAny>(
            call_hex,
            &ConnectDomainEventCallbackRegisterAnyArgs {
                event_id: id,
                dom: None,
            },
        );
        // This daemon handed out callback ids equal to the event ids.
        assert_eq!(register_reply(reply_hex), id);
        let p = callback_proc(id).expect("every 9.0 id has a callback message");
        assert!(
            EVENT_PROCS.iter().any(|(n, _)| *n == p),
            "message {p} of id {id} not decoded"
        );
    }
    for (cb, hex) in (0..).zip(EVENT_KA_DEREGISTER_CALLS) {
        call::<ConnectDomainEventCallbackDeregisterAny>(hex, &CallbackIdArgs { callback_id: cb });
    }
}

#[test]
fn unknown_messages_are_skipped_not_errors() {
    // Legacy lifecycle (107) and a procedure newer than 9.0's table.
    let payload = frame(EVENTS_S007).payload;
    assert_eq!(events::decode(107, payload.clone()), Ok(None));
    assert_eq!(events::decode(455, payload), Ok(None));
}

// ---- captured packets ---------------------------------------------------------------------

/// `events.decoded.txt` C→S #006: CALL `CONNECT_DOMAIN_EVENT_CALLBACK_REGISTER_ANY` (316) serial 6 OK.
const EVENTS_C006: &str =
    "0000002420008086000000010000013c0000000000000006000000000000000000000000";
/// `events.decoded.txt` S→C #006: REPLY `CONNECT_DOMAIN_EVENT_CALLBACK_REGISTER_ANY` (316) serial 6 OK.
const EVENTS_S006: &str = "0000002020008086000000010000013c0000000100000006000000000000001b";
/// `events.decoded.txt` C→S #008: CALL `CONNECT_DOMAIN_EVENT_CALLBACK_DEREGISTER_ANY` (317) serial 7 OK.
const EVENTS_C008: &str = "0000002020008086000000010000013d0000000000000007000000000000001b";
/// `events.decoded.txt` S→C #007: MESSAGE `DOMAIN_EVENT_CALLBACK_LIFECYCLE` (318) serial 1 OK.
const EVENTS_S007: &str = "0000004c20008086000000010000013e0000000200000001000000000000001b0000000c7270632d72706370726f6265e918a9b5508d41a19b914a1f97aed3ebffffffff0000000000000000";
/// `events.decoded.txt` S→C #008: MESSAGE `DOMAIN_EVENT_CALLBACK_LIFECYCLE` (318) serial 1 OK.
const EVENTS_S008: &str = "0000004c20008086000000010000013e0000000200000001000000000000001b0000000c7270632d72706370726f6265e918a9b5508d41a19b914a1f97aed3eb000000050000000400000000";
/// `events.decoded.txt` S→C #009: MESSAGE `DOMAIN_EVENT_CALLBACK_LIFECYCLE` (318) serial 1 OK.
const EVENTS_S009: &str = "0000004c20008086000000010000013e0000000200000001000000000000001b0000000c7270632d72706370726f6265e918a9b5508d41a19b914a1f97aed3eb000000050000000200000000";
/// `events.decoded.txt` S→C #010: MESSAGE `DOMAIN_EVENT_CALLBACK_LIFECYCLE` (318) serial 1 OK.
const EVENTS_S010: &str = "0000004c20008086000000010000013e0000000200000001000000000000001b0000000c7270632d72706370726f6265e918a9b5508d41a19b914a1f97aed3eb000000050000000600000002";
/// `events.decoded.txt` S→C #011: MESSAGE `DOMAIN_EVENT_CALLBACK_LIFECYCLE` (318) serial 1 OK.
const EVENTS_S011: &str = "0000004c20008086000000010000013e0000000200000001000000000000001b0000000c7270632d72706370726f6265e918a9b5508d41a19b914a1f97aed3ebffffffff0000000500000001";
/// `events.decoded.txt` S→C #012: MESSAGE `DOMAIN_EVENT_CALLBACK_LIFECYCLE` (318) serial 1 OK.
const EVENTS_S012: &str = "0000004c20008086000000010000013e0000000200000001000000000000001b0000000c7270632d72706370726f6265e918a9b5508d41a19b914a1f97aed3ebffffffff0000000100000000";
/// `event_ka.decoded.txt` C→S CALL `CONNECT_DOMAIN_EVENT_CALLBACK_REGISTER_ANY` (316), serials 6..=32: packets #006, #007, #008, #009, #010, #011, #012, #013, #014, #015, #016, #017, #018, #019, #020, #021, #022, #023, #024, #025, #026, #027, #028, #029, #030, #031, #032.
const EVENT_KA_REGISTER_CALLS: [&str; 27] = [
    "0000002420008086000000010000013c0000000000000006000000000000000000000000",
    "0000002420008086000000010000013c0000000000000007000000000000000100000000",
    "0000002420008086000000010000013c0000000000000008000000000000000200000000",
    "0000002420008086000000010000013c0000000000000009000000000000000300000000",
    "0000002420008086000000010000013c000000000000000a000000000000000400000000",
    "0000002420008086000000010000013c000000000000000b000000000000000500000000",
    "0000002420008086000000010000013c000000000000000c000000000000000600000000",
    "0000002420008086000000010000013c000000000000000d000000000000000700000000",
    "0000002420008086000000010000013c000000000000000e000000000000000800000000",
    "0000002420008086000000010000013c000000000000000f000000000000000900000000",
    "0000002420008086000000010000013c0000000000000010000000000000000a00000000",
    "0000002420008086000000010000013c0000000000000011000000000000000b00000000",
    "0000002420008086000000010000013c0000000000000012000000000000000c00000000",
    "0000002420008086000000010000013c0000000000000013000000000000000d00000000",
    "0000002420008086000000010000013c0000000000000014000000000000000e00000000",
    "0000002420008086000000010000013c0000000000000015000000000000000f00000000",
    "0000002420008086000000010000013c0000000000000016000000000000001000000000",
    "0000002420008086000000010000013c0000000000000017000000000000001100000000",
    "0000002420008086000000010000013c0000000000000018000000000000001200000000",
    "0000002420008086000000010000013c0000000000000019000000000000001300000000",
    "0000002420008086000000010000013c000000000000001a000000000000001400000000",
    "0000002420008086000000010000013c000000000000001b000000000000001500000000",
    "0000002420008086000000010000013c000000000000001c000000000000001600000000",
    "0000002420008086000000010000013c000000000000001d000000000000001700000000",
    "0000002420008086000000010000013c000000000000001e000000000000001800000000",
    "0000002420008086000000010000013c000000000000001f000000000000001900000000",
    "0000002420008086000000010000013c0000000000000020000000000000001a00000000",
];
/// `event_ka.decoded.txt` S→C REPLY 316, serials 6..=32: packets #006, #007, #008, #009, #010, #011, #012, #013, #014, #015, #016, #017, #018, #019, #020, #021, #022, #023, #024, #025, #026, #027, #028, #029, #030, #031, #032.
const EVENT_KA_REGISTER_REPLIES: [&str; 27] = [
    "0000002020008086000000010000013c00000001000000060000000000000000",
    "0000002020008086000000010000013c00000001000000070000000000000001",
    "0000002020008086000000010000013c00000001000000080000000000000002",
    "0000002020008086000000010000013c00000001000000090000000000000003",
    "0000002020008086000000010000013c000000010000000a0000000000000004",
    "0000002020008086000000010000013c000000010000000b0000000000000005",
    "0000002020008086000000010000013c000000010000000c0000000000000006",
    "0000002020008086000000010000013c000000010000000d0000000000000007",
    "0000002020008086000000010000013c000000010000000e0000000000000008",
    "0000002020008086000000010000013c000000010000000f0000000000000009",
    "0000002020008086000000010000013c0000000100000010000000000000000a",
    "0000002020008086000000010000013c0000000100000011000000000000000b",
    "0000002020008086000000010000013c0000000100000012000000000000000c",
    "0000002020008086000000010000013c0000000100000013000000000000000d",
    "0000002020008086000000010000013c0000000100000014000000000000000e",
    "0000002020008086000000010000013c0000000100000015000000000000000f",
    "0000002020008086000000010000013c00000001000000160000000000000010",
    "0000002020008086000000010000013c00000001000000170000000000000011",
    "0000002020008086000000010000013c00000001000000180000000000000012",
    "0000002020008086000000010000013c00000001000000190000000000000013",
    "0000002020008086000000010000013c000000010000001a0000000000000014",
    "0000002020008086000000010000013c000000010000001b0000000000000015",
    "0000002020008086000000010000013c000000010000001c0000000000000016",
    "0000002020008086000000010000013c000000010000001d0000000000000017",
    "0000002020008086000000010000013c000000010000001e0000000000000018",
    "0000002020008086000000010000013c000000010000001f0000000000000019",
    "0000002020008086000000010000013c0000000100000020000000000000001a",
];
/// `event_ka.decoded.txt` C→S CALL `CONNECT_DOMAIN_EVENT_CALLBACK_DEREGISTER_ANY` (317), serials 33..=59: packets #036, #038, #039, #040, #041, #042, #043, #044, #045, #046, #047, #048, #049, #050, #051, #052, #053, #054, #055, #056, #057, #058, #059, #060, #061, #062, #063.
const EVENT_KA_DEREGISTER_CALLS: [&str; 27] = [
    "0000002020008086000000010000013d00000000000000210000000000000000",
    "0000002020008086000000010000013d00000000000000220000000000000001",
    "0000002020008086000000010000013d00000000000000230000000000000002",
    "0000002020008086000000010000013d00000000000000240000000000000003",
    "0000002020008086000000010000013d00000000000000250000000000000004",
    "0000002020008086000000010000013d00000000000000260000000000000005",
    "0000002020008086000000010000013d00000000000000270000000000000006",
    "0000002020008086000000010000013d00000000000000280000000000000007",
    "0000002020008086000000010000013d00000000000000290000000000000008",
    "0000002020008086000000010000013d000000000000002a0000000000000009",
    "0000002020008086000000010000013d000000000000002b000000000000000a",
    "0000002020008086000000010000013d000000000000002c000000000000000b",
    "0000002020008086000000010000013d000000000000002d000000000000000c",
    "0000002020008086000000010000013d000000000000002e000000000000000d",
    "0000002020008086000000010000013d000000000000002f000000000000000e",
    "0000002020008086000000010000013d0000000000000030000000000000000f",
    "0000002020008086000000010000013d00000000000000310000000000000010",
    "0000002020008086000000010000013d00000000000000320000000000000011",
    "0000002020008086000000010000013d00000000000000330000000000000012",
    "0000002020008086000000010000013d00000000000000340000000000000013",
    "0000002020008086000000010000013d00000000000000350000000000000014",
    "0000002020008086000000010000013d00000000000000360000000000000015",
    "0000002020008086000000010000013d00000000000000370000000000000016",
    "0000002020008086000000010000013d00000000000000380000000000000017",
    "0000002020008086000000010000013d00000000000000390000000000000018",
    "0000002020008086000000010000013d000000000000003a0000000000000019",
    "0000002020008086000000010000013d000000000000003b000000000000001a",
];
