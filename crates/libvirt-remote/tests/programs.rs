//! The QEMU and LXC programs and the descriptor-passing calls through the sans-io core,
//! against the scripted peer: a QEMU call goes out under the QEMU program number and its
//! reply decodes; a call that passes descriptors is refused before anything is queued; the
//! QEMU monitor event and a legacy domain event decode to their typed values.

use std::time::Instant;

use bytes::BytesMut;
use libvirt_remote::conn::{CallError, Config, Connection, Output};
use libvirt_remote::proto::events::{self, CallbackMsg, DomainEvent, Event, QemuMonitorEvent};
use libvirt_remote::proto::procs::domain::DomainCreateFlags;
use libvirt_remote::proto::procs::domain::{
    DomainCreateWithFiles, DomainFdAssociate, DomainFdAssociateArgs, DomainFlagsArgs,
    DomainOpenGraphics, DomainOpenGraphicsArgs, DomainOpenGraphicsFd,
};
use libvirt_remote::proto::procs::lxc::LxcDomainOpenNamespace;
use libvirt_remote::proto::procs::qemu::{
    QemuDomainMonitorCommand, QemuDomainMonitorCommandArgs, QemuDomainMonitorCommandRet,
    QemuDomainMonitorCommandWithFiles, QemuMonitorCommandFlags,
};
use libvirt_remote::proto::types::{NonnullDomain, Uuid};
use libvirt_remote::proto::{FdPassing, LXC_PROGRAM, Procedure, QEMU_PROGRAM};
use libvirt_remote::wire::frame::{Header, MessageStatus, MessageType};
use libvirt_remote::wire::xdr;
use libvirt_remote_testkit::peer::{self, Peer};

fn conn() -> (Connection, Peer, Instant) {
    let now = Instant::now();
    let c = Connection::new(
        Config {
            keepalive: None,
            ..Config::default()
        },
        now,
    );
    (c, Peer::new(), now)
}

fn dom() -> NonnullDomain {
    NonnullDomain {
        name: "g".into(),
        uuid: Uuid([9; 16]),
        id: 4,
    }
}

#[test]
fn qemu_monitor_command_goes_out_under_the_qemu_program() {
    let (mut c, mut p, now) = conn();
    let args = QemuDomainMonitorCommandArgs {
        dom: dom(),
        cmd: "info status".into(),
        flags: QemuMonitorCommandFlags::HMP,
    };
    let serial = c.call::<QemuDomainMonitorCommand>(&args, None).unwrap();
    while let Some(t) = c.poll_transmit() {
        p.feed(&t.head);
        p.feed(&t.body);
    }
    let f = p.recv().unwrap().expect("the call");
    assert_eq!(
        (f.header.program, f.header.procedure, f.header.serial),
        (QEMU_PROGRAM, 1, serial)
    );
    assert_eq!(f.header.kind, MessageType::Call);
    assert_eq!(f.payload, xdr::to_bytes(&args).unwrap());

    let ret = QemuDomainMonitorCommandRet {
        result: "VM status: running\r\n".into(),
    };
    let mut rx = BytesMut::from(&peer::reply_to(&f.header, &ret)[..]);
    c.handle_input(&mut rx, now).unwrap();
    let payload = libvirt_remote_testkit::reply_payload(&mut c, serial);
    assert_eq!(
        c.decode_reply::<QemuDomainMonitorCommand>(serial, payload)
            .unwrap(),
        ret
    );
}

#[test]
fn descriptor_passing_calls_are_refused_before_anything_is_queued() {
    let (mut c, _, _) = conn();
    let graphics = DomainOpenGraphicsArgs {
        dom: dom(),
        idx: 0,
        flags: 0,
    };
    let flags = DomainFlagsArgs {
        dom: dom(),
        flags: DomainCreateFlags::empty(),
    };
    let refusals = [
        c.call::<DomainOpenGraphics>(&graphics, None).unwrap_err(),
        c.call::<DomainOpenGraphicsFd>(&graphics, None).unwrap_err(),
        c.call::<DomainCreateWithFiles>(&flags, None).unwrap_err(),
        c.call::<DomainFdAssociate>(
            &DomainFdAssociateArgs {
                dom: dom(),
                name: "fds".into(),
                flags: 0,
            },
            None,
        )
        .unwrap_err(),
        c.call::<QemuDomainMonitorCommandWithFiles>(
            &QemuDomainMonitorCommandArgs {
                dom: dom(),
                cmd: "{}".into(),
                flags: QemuMonitorCommandFlags::empty(),
            },
            None,
        )
        .unwrap_err(),
        c.call::<LxcDomainOpenNamespace>(
            &DomainFlagsArgs {
                dom: dom(),
                flags: 0,
            },
            None,
        )
        .unwrap_err(),
    ];
    let want = [
        ("DomainOpenGraphics", FdPassing::Call),
        ("DomainOpenGraphicsFd", FdPassing::Reply),
        ("DomainCreateWithFiles", FdPassing::Call),
        ("DomainFdAssociate", FdPassing::Call),
        ("QemuDomainMonitorCommandWithFiles", FdPassing::Both),
        ("LxcDomainOpenNamespace", FdPassing::Reply),
    ];
    for (e, (name, fds)) in refusals.iter().zip(want) {
        assert_eq!(
            e,
            &CallError::NeedsFdPassing {
                procedure: name,
                fds
            }
        );
        assert!(e.to_string().contains("file descriptors"), "{e}");
    }
    assert!(c.poll_transmit().is_none(), "a refused call sent something");
    assert_eq!(LxcDomainOpenNamespace::PROGRAM, LXC_PROGRAM);
    // The connection is untouched: an ordinary call still goes out.
    c.call::<QemuDomainMonitorCommand>(
        &QemuDomainMonitorCommandArgs {
            dom: dom(),
            cmd: "{}".into(),
            flags: QemuMonitorCommandFlags::empty(),
        },
        None,
    )
    .unwrap();
    assert!(c.poll_transmit().is_some());
}

#[test]
fn qemu_monitor_and_legacy_events_decode_without_subscribers() {
    let (mut c, _, now) = conn();
    let body = QemuMonitorEvent {
        dom: dom(),
        event: "STOP".into(),
        seconds: 1,
        micros: 2,
        details: None,
    };
    let payload = xdr::to_bytes(&CallbackMsg {
        callback_id: 3,
        body: body.clone(),
    })
    .unwrap();
    let h = Header {
        program: QEMU_PROGRAM,
        version: 1,
        procedure: events::QEMU_MONITOR_EVENT,
        kind: MessageType::Message,
        serial: 1,
        status: MessageStatus::Ok,
    };
    let mut rx = BytesMut::from(&peer::raw(h, &payload)[..]);
    // A legacy reboot: the domain alone, no callback id.
    rx.extend_from_slice(&peer::event(events::procs::DOMAIN_REBOOT_LEGACY, &dom()));
    c.handle_input(&mut rx, now).unwrap();
    let outs: Vec<Output> = std::iter::from_fn(|| c.poll_output()).collect();
    let [
        Output::Event {
            event: qemu,
            subscribers: s1,
        },
        Output::Event {
            event: legacy,
            subscribers: s2,
        },
    ] = &outs[..]
    else {
        panic!("{outs:?}")
    };
    assert_eq!(
        qemu,
        &Event::QemuMonitor {
            callback_id: 3,
            event: body
        }
    );
    let Event::DomainLegacy {
        event: DomainEvent::Reboot(r),
    } = legacy
    else {
        panic!("{legacy:?}")
    };
    assert_eq!(r.dom, dom());
    assert!(s1.is_empty() && s2.is_empty());
    assert_eq!(c.stats().unknown_messages, 0);
    assert_eq!(c.stats().unrouted_events, 2);
    assert_eq!(c.stats().malformed_events, 0);
}
