use super::*;
use crate::proto::names::{
    AgentLifecycleReason, AgentLifecycleState, BlockJobStatus, BlockJobType, ConnectCloseReason,
    DiskChangeReason, GraphicsAddressType, GraphicsPhase, MetadataType, NetworkEventType,
    NodeDeviceEventType, SecretEventType, SecretUsageType, StartedDetail, StoppedDetail,
    StoragePoolEventType, TrayChangeReason, WatchdogAction,
};
use crate::proto::types::{TypedParamValue, Uuid};
use crate::proto::{LXC_PROGRAM, QEMU_PROGRAM, REMOTE_PROGRAM};
use crate::wire::xdr::Encode;

fn dom() -> NonnullDomain {
    NonnullDomain {
        name: "vm".into(),
        uuid: Uuid([7; 16]),
        id: 3,
    }
}

fn s(t: &str) -> LvString {
    LvString::from(t)
}

fn msg<T>(callback_id: i32, body: T) -> CallbackMsg<T> {
    CallbackMsg { callback_id, body }
}

fn roundtrip(procedure: i32, msg: &impl Encode) -> Event {
    let b = xdr::to_bytes(msg).unwrap();
    decode(procedure, b).unwrap().expect("known procedure")
}

/// `body` sent with callback id 9 (domain [`dom`]) decodes to `wrap(body)`, which maps back to
/// `procedure`.
fn check<B: Encode + Clone>(procedure: i32, body: &B, wrap: fn(B) -> DomainEvent) {
    let msg = CallbackMsg {
        callback_id: 9,
        body: body.clone(),
    };
    let want = wrap(body.clone());
    assert_eq!(callback_proc(want.event_id()), Some(procedure), "{want:?}");
    assert_eq!(want.domain(), &dom());
    assert_eq!(
        roundtrip(procedure, &msg),
        Event::Domain {
            callback_id: 9,
            event: want.clone()
        }
    );
    // Ids 0..=15 also have a legacy message: the same body without a callback id (the
    // power-management ones: the domain alone, the bodies here all have reason 0).
    let id = want.event_id();
    match DomainEvent::legacy_proc(id) {
        Some(legacy) => {
            assert!(id < event_id::FIRST_CALLBACK_ONLY, "{want:?}");
            let pm = [
                procs::DOMAIN_PMWAKEUP,
                procs::DOMAIN_PMSUSPEND,
                procs::DOMAIN_PMSUSPEND_DISK,
            ];
            let payload = if pm.contains(&procedure) {
                xdr::to_bytes(&dom()).unwrap()
            } else {
                xdr::to_bytes(body).unwrap()
            };
            let e = decode(legacy, payload).unwrap().expect("legacy procedure");
            assert_eq!(e.callback_id(), None);
            assert_eq!(e.kind(), Some(Kind::Domain));
            assert_eq!(e, Event::DomainLegacy { event: want });
        }
        None => assert!(
            id >= event_id::FIRST_CALLBACK_ONLY,
            "{want:?} has no legacy message"
        ),
    }
}

#[test]
fn callback_proc_table_is_a_bijection_over_known_ids() {
    const { assert!(event_id::COUNT_9_0 < event_id::COUNT) };
    for id in 0..event_id::COUNT {
        let p = callback_proc(id).unwrap();
        assert_eq!(event_id_of_proc(p), Some(id));
        assert!(
            EVENT_PROCS.iter().any(|(n, _)| *n == p),
            "{p} missing from EVENT_PROCS"
        );
    }
    assert_eq!(callback_proc(-1), None);
    assert_eq!(callback_proc(event_id::COUNT), None);
    assert_eq!(event_id_of_proc(procs::CONNECTION_CLOSED), None);
    // The ids newer than 9.0 as `virDomainEventID` numbers them (libvirt 12.4's
    // libvirt-domain.h: NIC_MAC_CHANGE 27, VCPU_REMOVED 28, CHANNEL_LIFECYCLE 29), and
    // by their procedures.
    assert_eq!(
        [
            event_id::NIC_MAC_CHANGE,
            event_id::VCPU_REMOVED,
            event_id::CHANNEL_LIFECYCLE,
            event_id::COUNT
        ],
        [27, 28, 29, 30]
    );
    assert_eq!(callback_proc(event_id::NIC_MAC_CHANGE), Some(453));
    assert_eq!(callback_proc(event_id::VCPU_REMOVED), Some(454));
    assert_eq!(callback_proc(event_id::CHANNEL_LIFECYCLE), Some(455));
}

#[test]
fn legacy_procedures_cover_ids_0_to_15() {
    let want = [
        107, 169, 170, 171, 172, 173, 195, 224, 241, 248, 268, 269, 270, 276, 292, 311,
    ];
    let got: Vec<i32> = (0..event_id::COUNT)
        .filter_map(DomainEvent::legacy_proc)
        .collect();
    assert_eq!(got, want);
    assert_eq!(event_id::FIRST_CALLBACK_ONLY, 16);
    for p in want {
        assert!(EVENT_PROCS.iter().any(|(n, _)| *n == p), "{p}");
        // A legacy procedure is not a callback one.
        assert_eq!(event_id_of_proc(p), None, "{p}");
    }
    assert_eq!(NetworkEvent::legacy_proc(0), None);
}

#[test]
fn object_families_map_ids_and_procedures_both_ways() {
    type Lookup = fn(i32) -> Option<i32>;
    let families: [(Lookup, Lookup); 4] = [
        (NetworkEvent::callback_proc, NetworkEvent::event_id_of_proc),
        (
            StoragePoolEvent::callback_proc,
            StoragePoolEvent::event_id_of_proc,
        ),
        (
            NodeDeviceEvent::callback_proc,
            NodeDeviceEvent::event_id_of_proc,
        ),
        (SecretEvent::callback_proc, SecretEvent::event_id_of_proc),
    ];
    for (proc_of, id_of) in families {
        for id in 0..2 {
            let p = proc_of(id).expect("ids 0 and 1 exist in every object family");
            assert_eq!(id_of(p), Some(id));
            assert_eq!(event_id_of_proc(p), None, "{p} is not a domain event");
        }
        assert_eq!(proc_of(2), None);
    }
    assert_eq!(
        NetworkEvent::callback_proc(network_event_id::METADATA_CHANGE),
        Some(procs::NETWORK_METADATA_CHANGE)
    );
    // Every procedure is listed once.
    let mut all: Vec<i32> = EVENT_PROCS.iter().map(|(p, _)| *p).collect();
    all.sort_unstable();
    all.dedup();
    assert_eq!(all.len(), EVENT_PROCS.len());
}

#[test]
fn register_procedures_per_kind() {
    assert_eq!(Kind::Domain.register_proc(), 316);
    assert_eq!(Kind::Domain.deregister_proc(), 317);
    assert_eq!(Kind::Network.register_proc(), 313);
    assert_eq!(Kind::StoragePool.register_proc(), 368);
    assert_eq!(Kind::NodeDevice.deregister_proc(), 375);
    assert_eq!(Kind::Secret.register_proc(), 380);
    assert_eq!(<SecretEvent as EventKind>::KIND, Kind::Secret);
}

#[test]
fn every_listed_procedure_decodes_something() {
    // A payload no message accepts: each listed procedure must try (and fail) rather
    // than return Ok(None).
    for (p, name) in EVENT_PROCS {
        let r = decode(*p, Bytes::from_static(b"\x00"));
        assert!(r.is_err(), "{name} ({p}) returned {r:?}");
    }
}

#[test]
fn unknown_procedures_are_not_errors() {
    // 1 is a call (CONNECT_OPEN); one past `procs::HIGHEST` is unknown.
    assert_eq!(decode(1, Bytes::from_static(b"junk")), Ok(None));
    assert_eq!(decode(0, Bytes::new()), Ok(None));
    assert_eq!(
        decode(crate::proto::procs::HIGHEST + 1, Bytes::new()),
        Ok(None)
    );
    // Another program's message is not the remote program's.
    assert_eq!(decode_message(LXC_PROGRAM, 1, Bytes::new()), Ok(None));
    assert_eq!(decode_message(QEMU_PROGRAM, 1, Bytes::new()), Ok(None));
    assert_eq!(decode_message(QEMU_PROGRAM, 455, Bytes::new()), Ok(None));
    assert!(decode_message(REMOTE_PROGRAM, 455, Bytes::new()).is_err());
}

#[test]
fn qemu_monitor_event_decodes() {
    let body = QemuMonitorEvent {
        dom: dom(),
        event: s("STOP"),
        seconds: 1_700_000_000,
        micros: 999_999,
        details: Some(s("{}")),
    };
    let b = xdr::to_bytes(&msg(11, body.clone())).unwrap();
    // callback id, then the domain (name "vm": 4 + 4, uuid 16, id 4), then the event name.
    assert_eq!(&b[..4], &[0, 0, 0, 11]);
    assert_eq!(&b[32..40], &[0, 0, 0, 4, b'S', b'T', b'O', b'P']);
    let e = decode_message(QEMU_PROGRAM, QEMU_MONITOR_EVENT, b.clone())
        .unwrap()
        .unwrap();
    assert_eq!(e.callback_id(), Some(11));
    assert_eq!(e.kind(), None);
    assert_eq!(
        e,
        Event::QemuMonitor {
            callback_id: 11,
            event: body
        }
    );
    // The remote program's procedure 6 is a call, not this message.
    assert_eq!(decode(QEMU_MONITOR_EVENT, b), Ok(None));
    assert!(decode_message(QEMU_PROGRAM, QEMU_MONITOR_EVENT, Bytes::new()).is_err());
}

#[test]
fn every_domain_event_roundtrips() {
    use DomainEvent as E;
    use procs as p;
    let d = dom;
    let params = vec![TypedParam {
        field: s("cputune.quota"),
        value: TypedParamValue::LLong(-1),
    }];

    let (event, detail) = (
        DomainEventType::STOPPED,
        LifecycleDetail::Stopped(StoppedDetail::DESTROYED),
    );
    let body = Lifecycle {
        dom: d(),
        event,
        detail,
    };
    check(p::DOMAIN_LIFECYCLE, &body, E::Lifecycle);
    let body = DomainOnly { dom: d() };
    check(p::DOMAIN_REBOOT, &body, E::Reboot);
    check(p::DOMAIN_CONTROL_ERROR, &body, E::ControlError);
    let body = RtcChange {
        dom: d(),
        offset: -3600,
    };
    check(p::DOMAIN_RTC_CHANGE, &body, E::RtcChange);
    let body = Watchdog {
        dom: d(),
        action: WatchdogAction::RESET,
    };
    check(p::DOMAIN_WATCHDOG, &body, E::Watchdog);

    let (src_path, dev_alias, action, reason) =
        (s("/a"), s("vd0"), IoErrorAction::PAUSE, s("enospc"));
    let body = IoError {
        dom: d(),
        src_path: src_path.clone(),
        dev_alias: dev_alias.clone(),
        action,
    };
    check(p::DOMAIN_IO_ERROR, &body, E::IoError);
    let body = IoErrorReason {
        dom: d(),
        src_path,
        dev_alias,
        action,
        reason,
    };
    check(p::DOMAIN_IO_ERROR_REASON, &body, E::IoErrorReason);

    let addr = |n: &str| GraphicsAddress {
        family: GraphicsAddressType::IPV4,
        node: s(n),
        service: s("5900"),
    };
    let subject = vec![GraphicsIdentity {
        kind: s("x509dname"),
        name: s("CN=a"),
    }];
    let body = Graphics {
        dom: d(),
        phase: GraphicsPhase::INITIALIZE,
        local: addr("127.0.0.1"),
        remote: addr("10.0.0.2"),
        auth_scheme: s("vnc"),
        subject,
    };
    check(p::DOMAIN_GRAPHICS, &body, E::Graphics);

    let body = BlockJob {
        dom: d(),
        path: s("/p"),
        kind: BlockJobType::COPY,
        status: BlockJobStatus::READY,
    };
    check(p::DOMAIN_BLOCK_JOB, &body, E::BlockJob);
    let body = BlockJob2 {
        dom: d(),
        dst: s("vda"),
        kind: BlockJobType::COMMIT,
        status: BlockJobStatus::COMPLETED,
    };
    check(p::DOMAIN_BLOCK_JOB_2, &body, E::BlockJob2);

    let (old_src_path, new_src_path, dev_alias) = (Some(s("/old.iso")), None, s("sata0"));
    let body = DiskChange {
        dom: d(),
        old_src_path,
        new_src_path,
        dev_alias: dev_alias.clone(),
        reason: DiskChangeReason::MISSING_ON_START,
    };
    check(p::DOMAIN_DISK_CHANGE, &body, E::DiskChange);
    let body = TrayChange {
        dom: d(),
        dev_alias: dev_alias.clone(),
        reason: TrayChangeReason::CLOSE,
    };
    check(p::DOMAIN_TRAY_CHANGE, &body, E::TrayChange);

    let body = PmReason {
        reason: 0,
        dom: d(),
    };
    check(p::DOMAIN_PMWAKEUP, &body, E::PmWakeup);
    check(p::DOMAIN_PMSUSPEND, &body, E::PmSuspend);
    check(p::DOMAIN_PMSUSPEND_DISK, &body, E::PmSuspendDisk);
    let body = BalloonChange {
        dom: d(),
        actual: 1 << 20,
    };
    check(p::DOMAIN_BALLOON_CHANGE, &body, E::BalloonChange);

    let body = DeviceAlias {
        dom: d(),
        dev_alias,
    };
    check(p::DOMAIN_DEVICE_REMOVED, &body, E::DeviceRemoved);
    check(p::DOMAIN_DEVICE_ADDED, &body, E::DeviceAdded);
    check(
        p::DOMAIN_DEVICE_REMOVAL_FAILED,
        &body,
        E::DeviceRemovalFailed,
    );

    let body = Tunable {
        dom: d(),
        params: params.clone(),
    };
    check(p::DOMAIN_TUNABLE, &body, E::Tunable);
    let body = JobCompleted { dom: d(), params };
    check(p::DOMAIN_JOB_COMPLETED, &body, E::JobCompleted);

    let (state, reason) = (
        AgentLifecycleState::CONNECTED,
        AgentLifecycleReason::CHANNEL,
    );
    let body = AgentLifecycle {
        dom: d(),
        state,
        reason,
    };
    check(p::DOMAIN_AGENT_LIFECYCLE, &body, E::AgentLifecycle);
    let body = MigrationIteration {
        dom: d(),
        iteration: 4,
    };
    check(p::DOMAIN_MIGRATION_ITERATION, &body, E::MigrationIteration);

    let body = MetadataChange {
        dom: d(),
        kind: MetadataType::ELEMENT,
        nsuri: Some(s("http://x/")),
    };
    check(p::DOMAIN_METADATA_CHANGE, &body, E::MetadataChange);

    let (threshold, excess) = (1 << 30, 4096);
    let body = BlockThreshold {
        dom: d(),
        dev: s("vda[1]"),
        path: None,
        threshold,
        excess,
    };
    check(p::DOMAIN_BLOCK_THRESHOLD, &body, E::BlockThreshold);
    let (recipient, action, flags) = (
        MemoryFailureRecipient::GUEST,
        MemoryFailureAction::INJECT,
        MemoryFailureFlags::ACTION_REQUIRED,
    );
    let body = MemoryFailure {
        dom: d(),
        recipient,
        action,
        flags,
    };
    check(p::DOMAIN_MEMORY_FAILURE, &body, E::MemoryFailure);
    let body = MemoryDeviceSizeChange {
        dom: d(),
        alias: s("virtiomem0"),
        size: 2048,
    };
    check(
        p::DOMAIN_MEMORY_DEVICE_SIZE_CHANGE,
        &body,
        E::MemoryDeviceSizeChange,
    );
    let body = NicMacChange {
        dom: d(),
        alias: s("net0"),
        old_mac: s("52:54:00:00:00:01"),
        new_mac: s("52:54:00:00:00:02"),
    };
    check(p::DOMAIN_NIC_MAC_CHANGE, &body, E::NicMacChange);
    let body = VcpuRemoved {
        dom: d(),
        vcpuid: 3,
    };
    check(p::DOMAIN_VCPU_REMOVED, &body, E::VcpuRemoved);
    let body = ChannelLifecycle {
        dom: d(),
        channel_name: s("org.qemu.guest_agent.0"),
        state: AgentLifecycleState::CONNECTED,
        reason: AgentLifecycleReason::CHANNEL,
    };
    check(p::DOMAIN_CHANNEL_LIFECYCLE, &body, E::ChannelLifecycle);
}

#[test]
fn pm_events_put_reason_before_the_domain() {
    let b = xdr::to_bytes(&CallbackMsg {
        callback_id: 1,
        body: PmReason {
            reason: 0x55,
            dom: dom(),
        },
    })
    .unwrap();
    assert_eq!(&b[4..8], &[0, 0, 0, 0x55]);
}

#[test]
fn other_object_events_decode() {
    let net = NonnullNetwork {
        name: "default".into(),
        uuid: Uuid([1; 16]),
    };
    let pool = NonnullStoragePool {
        name: "p".into(),
        uuid: Uuid([2; 16]),
    };
    let dev = NonnullNodeDevice {
        name: "pci_0000_00_02_0".into(),
    };
    let secret = NonnullSecret {
        uuid: Uuid([3; 16]),
        usage_type: SecretUsageType::VOLUME,
        usage_id: "/v".into(),
    };

    let body = NetworkLifecycle {
        net: net.clone(),
        event: NetworkEventType::STARTED,
        detail: 0,
    };
    let e = roundtrip(procs::NETWORK_LIFECYCLE, &msg(4, body.clone()));
    assert_eq!(e.callback_id(), Some(4));
    assert_eq!(
        e,
        Event::Network {
            callback_id: 4,
            event: NetworkEvent::Lifecycle(body)
        }
    );
    let body = NetworkMetadataChange {
        net,
        kind: MetadataType::TITLE,
        nsuri: None,
    };
    let e = roundtrip(procs::NETWORK_METADATA_CHANGE, &msg(4, body.clone()));
    assert_eq!(
        e,
        Event::Network {
            callback_id: 4,
            event: NetworkEvent::MetadataChange(body)
        }
    );

    let body = StoragePoolLifecycle {
        pool: pool.clone(),
        event: StoragePoolEventType::CREATED,
        detail: 0,
    };
    let e = roundtrip(procs::STORAGE_POOL_LIFECYCLE, &msg(5, body.clone()));
    assert_eq!(
        e,
        Event::StoragePool {
            callback_id: 5,
            event: StoragePoolEvent::Lifecycle(body)
        }
    );
    let body = StoragePoolRefreshed { pool };
    let e = roundtrip(procs::STORAGE_POOL_REFRESH, &msg(5, body.clone()));
    assert_eq!(
        e,
        Event::StoragePool {
            callback_id: 5,
            event: StoragePoolEvent::Refresh(body)
        }
    );

    let body = NodeDeviceLifecycle {
        dev: dev.clone(),
        event: NodeDeviceEventType::CREATED,
        detail: 0,
    };
    let e = roundtrip(procs::NODE_DEVICE_LIFECYCLE, &msg(6, body.clone()));
    assert_eq!(
        e,
        Event::NodeDevice {
            callback_id: 6,
            event: NodeDeviceEvent::Lifecycle(body)
        }
    );
    let body = NodeDeviceUpdate { dev };
    let e = roundtrip(procs::NODE_DEVICE_UPDATE, &msg(6, body.clone()));
    assert_eq!(
        e,
        Event::NodeDevice {
            callback_id: 6,
            event: NodeDeviceEvent::Update(body)
        }
    );

    let body = SecretLifecycle {
        secret: secret.clone(),
        event: SecretEventType::UNDEFINED,
        detail: 0,
    };
    let e = roundtrip(procs::SECRET_LIFECYCLE, &msg(7, body.clone()));
    assert_eq!(
        e,
        Event::Secret {
            callback_id: 7,
            event: SecretEvent::Lifecycle(body)
        }
    );
    let body = SecretValueChanged { secret };
    let e = roundtrip(procs::SECRET_VALUE_CHANGED, &msg(7, body.clone()));
    assert_eq!(
        e,
        Event::Secret {
            callback_id: 7,
            event: SecretEvent::ValueChanged(body)
        }
    );
    assert_eq!(e.kind(), Some(Kind::Secret));

    let e = roundtrip(
        procs::CONNECTION_CLOSED,
        &ConnectionClosedMsg {
            reason: ConnectCloseReason::KEEPALIVE,
        },
    );
    assert_eq!(
        e,
        Event::ConnectionClosed {
            reason: ConnectCloseReason::KEEPALIVE
        }
    );
    assert_eq!(e.callback_id(), None);
    assert_eq!(e.kind(), None);
}

#[test]
fn families_expose_object_and_lifecycle() {
    let ev = DomainEvent::Lifecycle(Lifecycle {
        dom: dom(),
        event: DomainEventType::STARTED,
        detail: StartedDetail::BOOTED.into(),
    });
    assert_eq!(ev.object(), &dom());
    assert_eq!(ev.lifecycle(), Some((DomainEventType::STARTED.0, 0)));
    assert_eq!(ev.lifecycle_event(), Some(DomainEventType::STARTED));
    assert_eq!(
        DomainEvent::Reboot(DomainOnly { dom: dom() }).lifecycle(),
        None
    );
    assert_eq!(
        <SecretEvent as EventKind>::LIFECYCLE,
        secret_event_id::LIFECYCLE
    );
    let wrapped = Event::Domain {
        callback_id: 1,
        event: ev.clone(),
    };
    assert_eq!(DomainEvent::of(&wrapped), Some(&ev));
    assert_eq!(NetworkEvent::of(&wrapped), None);
}

#[test]
fn trailing_bytes_and_oversized_lists_are_errors() {
    let mut b = xdr::to_bytes(&CallbackMsg {
        callback_id: 1,
        body: DomainOnly { dom: dom() },
    })
    .unwrap()
    .to_vec();
    b.extend_from_slice(&[0, 0, 0, 0]);
    let r = decode(procs::DOMAIN_REBOOT, b.into());
    assert!(matches!(r, Err(DecodeError::TrailingBytes { .. })), "{r:?}");

    // A graphics subject count above REMOTE_DOMAIN_EVENT_GRAPHICS_IDENTITY_MAX (20).
    let addr = GraphicsAddress {
        family: GraphicsAddressType::IPV4,
        node: s("a"),
        service: s("1"),
    };
    let m = CallbackMsg {
        callback_id: 1,
        body: Graphics {
            dom: dom(),
            phase: GraphicsPhase::CONNECT,
            local: addr.clone(),
            remote: addr,
            auth_scheme: s("none"),
            subject: vec![],
        },
    };
    let mut b = xdr::to_bytes(&m).unwrap().to_vec();
    let n = b.len();
    b[n - 4..].copy_from_slice(&21u32.to_be_bytes());
    b.extend(std::iter::repeat_n(0u8, 21 * 8));
    let r = decode(procs::DOMAIN_GRAPHICS, b.into());
    assert!(
        matches!(r, Err(DecodeError::TooLong { max: 20, .. })),
        "{r:?}"
    );
}
