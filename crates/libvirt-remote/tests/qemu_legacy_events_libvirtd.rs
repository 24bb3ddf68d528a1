//! The two event families outside the callback registrations, delivered through the same
//! subscription machinery, against a real private libvirtd: the QEMU program's monitor
//! events on a running qemu domain (TCG, no disk), and the legacy domain registration
//! (`CONNECT_DOMAIN_EVENT_REGISTER`, events without a callback id) on the test driver.

use std::time::Duration;

use libvirt_remote::client::{Client, ConnectOptions, EventStream};
use libvirt_remote::proto::events::{DomainEvent, QemuMonitorEvent};
use libvirt_remote::proto::names::DomainEventType;
use libvirt_remote::proto::procs::common::XmlArgs;
use libvirt_remote::proto::procs::domain::{
    DomainArgs, DomainDefineXml, DomainDestroy, DomainResume, DomainSuspend, DomainUndefine,
};
use libvirt_remote::proto::procs::qemu::QemuMonitorEventRegisterFlags;
use libvirt_remote_testkit::live::create_domain;
use testbed::libvirtd::Libvirtd;

async fn next<E: std::fmt::Debug>(events: &mut EventStream<E>, what: &str) -> E {
    tokio::time::timeout(Duration::from_secs(20), events.next())
        .await
        .unwrap_or_else(|_| panic!("no {what} event within 20 s"))
        .unwrap_or_else(|| panic!("{what} subscription ended"))
}

/// The next monitor event named `name` (qemu may interleave others, e.g. `RTC_CHANGE`).
async fn next_named(events: &mut EventStream<QemuMonitorEvent>, name: &str) -> QemuMonitorEvent {
    loop {
        let ev = next(events, name).await;
        if ev.event.to_str().unwrap() == name {
            return ev;
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn qemu_monitor_events_reach_their_subscribers() {
    let Some(d) = Libvirtd::start_or_skip() else {
        return;
    };
    let c = Client::connect(&d.uri(), ConnectOptions::default())
        .await
        .unwrap();
    let dom = create_domain(&c, &d.minimal_domain_xml("qmp-events")).await;
    // Every event of every domain; only STOP of this one; STOP or RESUME by pattern.
    let mut all = c
        .subscribe_qemu_monitor_events(None, None, 0)
        .await
        .unwrap();
    let mut stops = c
        .subscribe_qemu_monitor_events(Some(dom.clone()), Some("STOP"), 0)
        .await
        .unwrap();
    let mut pattern = c
        .subscribe_qemu_monitor_events(
            None,
            Some("^(stop|resume)$"),
            (QemuMonitorEventRegisterFlags::REGEX | QemuMonitorEventRegisterFlags::NOCASE).bits(),
        )
        .await
        .unwrap();
    assert_ne!(all.callback_id(), stops.callback_id());

    c.call::<DomainSuspend>(&DomainArgs { dom: dom.clone() })
        .await
        .unwrap();
    let stop = next_named(&mut all, "STOP").await;
    assert_eq!(stop.dom.name, dom.name);
    assert!(stop.seconds > 1_600_000_000, "{stop:?}");
    assert_eq!(
        next(&mut stops, "STOP").await.event.to_str().unwrap(),
        "STOP"
    );
    assert_eq!(
        next(&mut pattern, "STOP").await.event.to_str().unwrap(),
        "STOP"
    );

    c.call::<DomainResume>(&DomainArgs { dom: dom.clone() })
        .await
        .unwrap();
    assert_eq!(next_named(&mut all, "RESUME").await.dom.name, dom.name);
    assert_eq!(
        next(&mut pattern, "RESUME").await.event.to_str().unwrap(),
        "RESUME"
    );
    // The STOP-only subscription saw no RESUME.
    assert!(
        tokio::time::timeout(Duration::from_millis(500), stops.next())
            .await
            .is_err()
    );
    assert_eq!(c.stats().unrouted_events, 0, "{:?}", c.stats());

    // Dropping the last subscriber deregisters; a fresh one registers again.
    drop(stops);
    drop(all);
    drop(pattern);
    let mut again = c
        .subscribe_qemu_monitor_events(Some(dom.clone()), None, 0)
        .await
        .unwrap();
    c.call::<DomainSuspend>(&DomainArgs { dom: dom.clone() })
        .await
        .unwrap();
    assert_eq!(next_named(&mut again, "STOP").await.dom.name, dom.name);
    c.call::<DomainDestroy>(&DomainArgs { dom }).await.unwrap();
}

/// The handle's form sees its own domain's events only (another domain's STOP does not
/// reach it).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_domains_monitor_subscription_sees_that_domain_only() {
    let Some(d) = Libvirtd::start_or_skip() else {
        return;
    };
    let conn = libvirt_remote::Connect::open_with(&d.uri(), ConnectOptions::default())
        .await
        .unwrap();
    let c = conn.client();
    let mine = create_domain(c, &d.minimal_domain_xml("qmp-mine")).await;
    let other = create_domain(c, &d.minimal_domain_xml("qmp-other")).await;
    let handle = conn.lookup_domain_by_name("qmp-mine").await.unwrap();
    let mut stops = handle
        .subscribe_qemu_monitor_events(Some("STOP"), 0)
        .await
        .unwrap();
    c.call::<DomainSuspend>(&DomainArgs { dom: other.clone() })
        .await
        .unwrap();
    c.call::<DomainSuspend>(&DomainArgs { dom: mine.clone() })
        .await
        .unwrap();
    let ev = next(&mut stops, "STOP").await;
    assert_eq!(ev.dom.name, mine.name, "{ev:?}");
    for dom in [mine, other] {
        c.call::<DomainDestroy>(&DomainArgs { dom }).await.unwrap();
    }
}

/// libvirtd checks an unfiltered monitor registration for duplicates against every
/// registration of the same domain (or of all domains), filtered ones included: "every
/// event of `dom`" after "STOP of `dom`", or "every event" after a pattern over all domains,
/// was refused with "event callback already tracked" (and, racing a DEREGISTER the daemon
/// had not processed yet, so was a resubscription). The core registers "every event" as
/// the match-all pattern, which the daemon never checks.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_event_next_to_a_filtered_subscription_of_the_same_domain() {
    let Some(d) = Libvirtd::start_or_skip() else {
        return;
    };
    let c = Client::connect(&d.uri(), ConnectOptions::default())
        .await
        .unwrap();
    let dom = create_domain(&c, &d.minimal_domain_xml("qmp-overlap")).await;
    let mut stops = c
        .subscribe_qemu_monitor_events(Some(dom.clone()), Some("STOP"), 0)
        .await
        .unwrap();
    let mut dom_all = c
        .subscribe_qemu_monitor_events(Some(dom.clone()), None, 0)
        .await
        .expect("every event of a domain next to STOP of the same domain");
    let mut pattern = c
        .subscribe_qemu_monitor_events(
            None,
            Some("^resume$"),
            (QemuMonitorEventRegisterFlags::REGEX | QemuMonitorEventRegisterFlags::NOCASE).bits(),
        )
        .await
        .unwrap();
    let mut all = c
        .subscribe_qemu_monitor_events(None, None, 0)
        .await
        .expect("every event of every domain next to a pattern over all domains");
    c.call::<DomainSuspend>(&DomainArgs { dom: dom.clone() })
        .await
        .unwrap();
    c.call::<DomainResume>(&DomainArgs { dom: dom.clone() })
        .await
        .unwrap();
    assert_eq!(
        next(&mut stops, "STOP").await.event.to_str().unwrap(),
        "STOP"
    );
    assert_eq!(next_named(&mut dom_all, "STOP").await.dom.name, dom.name);
    assert_eq!(next_named(&mut dom_all, "RESUME").await.dom.name, dom.name);
    assert_eq!(
        next(&mut pattern, "RESUME").await.event.to_str().unwrap(),
        "RESUME"
    );
    assert_eq!(next_named(&mut all, "STOP").await.dom.name, dom.name);
    assert_eq!(next_named(&mut all, "RESUME").await.dom.name, dom.name);
    // Dropped and subscribed again at once: no wait for the daemon's deregistration needed.
    drop(stops);
    let mut stops = c
        .subscribe_qemu_monitor_events(Some(dom.clone()), Some("STOP"), 0)
        .await
        .unwrap();
    drop(dom_all);
    let mut dom_all = c
        .subscribe_qemu_monitor_events(Some(dom.clone()), None, 0)
        .await
        .expect("every event of a domain, subscribed again right after");
    c.call::<DomainSuspend>(&DomainArgs { dom: dom.clone() })
        .await
        .unwrap();
    assert_eq!(
        next(&mut stops, "STOP").await.event.to_str().unwrap(),
        "STOP"
    );
    assert_eq!(next_named(&mut dom_all, "STOP").await.dom.name, dom.name);
    c.call::<DomainDestroy>(&DomainArgs { dom }).await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn legacy_domain_events_reach_their_subscribers() {
    let Some(d) = Libvirtd::start_or_skip() else {
        return;
    };
    let c = Client::connect(&d.test_uri(), ConnectOptions::default())
        .await
        .unwrap();
    let mut legacy = c.subscribe_domain_events_legacy().await.unwrap();
    let mut second = c.subscribe_domain_events_legacy().await.unwrap();
    // libvirtd 9.0 tracks a legacy registration and a callback one for lifecycle events
    // as the same callback on one connection: the second is refused, typed, and the
    // connection and the legacy subscription live on.
    let err = c
        .subscribe::<DomainEvent>(libvirt_remote::proto::events::event_id::LIFECYCLE, None)
        .await
        .unwrap_err();
    assert!(
        matches!(&err, libvirt_remote::conn::CallError::Remote(e) if e.code == libvirt_remote::proto::ErrorCode::INVALID_ARG),
        "{err:?}"
    );

    let xml = "<domain type='test'><name>legacy-ev</name><memory>8192</memory>\
               <os><type>hvm</type></os></domain>";
    let dom = c
        .call::<DomainDefineXml>(&XmlArgs { xml: xml.into() })
        .await
        .unwrap()
        .dom;
    for events in [&mut legacy, &mut second] {
        let DomainEvent::Lifecycle(ev) = next(events, "legacy lifecycle").await else {
            panic!("not a lifecycle event")
        };
        assert_eq!(
            (ev.dom.name.to_str().unwrap(), ev.event),
            ("legacy-ev", DomainEventType::DEFINED)
        );
    }
    // The last legacy subscriber out deregisters (an argument-less call); a new one
    // registers again and still gets events.
    drop(legacy);
    drop(second);
    let mut again = c.subscribe_domain_events_legacy().await.unwrap();
    c.call::<DomainUndefine>(&DomainArgs { dom }).await.unwrap();
    let DomainEvent::Lifecycle(ev) = next(&mut again, "legacy lifecycle").await else {
        panic!("not a lifecycle event")
    };
    assert_eq!(ev.event, DomainEventType::UNDEFINED);
    assert_eq!(c.stats().unrouted_events, 0, "{:?}", c.stats());
    assert!(!c.is_closed());
}

/// The legacy any-registration (`CONNECT_DOMAIN_EVENT_REGISTER_ANY`, ids 0..=15, void
/// reply, events without a callback id) on the session qemu driver: `REBOOT` (id 1) from a
/// reset of a running TCG domain and `LIFECYCLE` (id 0) from suspend/resume reach the
/// subscribers of their id only; id 16 (`BLOCK_JOB_2`, no legacy message) is the daemon's
/// typed refusal; the last subscriber out deregisters, and a new one registers again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn legacy_any_domain_events_reach_the_subscribers_of_their_id() {
    use libvirt_remote::proto::events::event_id;
    use libvirt_remote::proto::procs::domain::{DomainFlagsArgs, DomainReset};

    let Some(d) = Libvirtd::start_or_skip() else {
        return;
    };
    let c = Client::connect(&d.uri(), ConnectOptions::default())
        .await
        .unwrap();
    let dom = create_domain(&c, &d.minimal_domain_xml("legacy-any")).await;
    let mut reboots = c
        .subscribe_domain_events_legacy_any(event_id::REBOOT)
        .await
        .unwrap();
    let mut reboots2 = c
        .subscribe_domain_events_legacy_any(event_id::REBOOT)
        .await
        .unwrap();
    let mut lifecycle = c
        .subscribe_domain_events_legacy_any(event_id::LIFECYCLE)
        .await
        .unwrap();
    assert_eq!(
        (reboots.callback_id(), lifecycle.callback_id()),
        (event_id::REBOOT, event_id::LIFECYCLE)
    );
    // No legacy message for ids from 16 on: libvirtd refuses the registration, typed.
    let err = c
        .subscribe_domain_events_legacy_any(event_id::BLOCK_JOB_2)
        .await
        .unwrap_err();
    let libvirt_remote::conn::CallError::Remote(e) = &err else {
        panic!("{err:?}")
    };
    assert!(e.message().contains("unsupported event ID"), "{e:?}");

    c.call::<DomainReset>(&DomainFlagsArgs {
        dom: dom.clone(),
        flags: 0,
    })
    .await
    .unwrap();
    for events in [&mut reboots, &mut reboots2] {
        let ev = next(events, "legacy reboot").await;
        assert!(
            matches!(&ev, DomainEvent::Reboot(b) if b.dom.name == dom.name),
            "{ev:?}"
        );
    }
    c.call::<DomainSuspend>(&DomainArgs { dom: dom.clone() })
        .await
        .unwrap();
    let DomainEvent::Lifecycle(ev) = next(&mut lifecycle, "legacy lifecycle").await else {
        panic!("not a lifecycle event")
    };
    assert_eq!(ev.event, DomainEventType::SUSPENDED);
    // The reboot subscribers saw no lifecycle event.
    assert!(
        tokio::time::timeout(Duration::from_millis(500), reboots.next())
            .await
            .is_err()
    );

    // Last out deregisters (`DEREGISTER_ANY` with the event id); a new one registers again.
    drop(reboots);
    drop(reboots2);
    let mut again = c
        .subscribe_domain_events_legacy_any(event_id::REBOOT)
        .await
        .unwrap();
    c.call::<DomainReset>(&DomainFlagsArgs {
        dom: dom.clone(),
        flags: 0,
    })
    .await
    .unwrap();
    assert!(matches!(
        next(&mut again, "legacy reboot").await,
        DomainEvent::Reboot(_)
    ));
    assert_eq!(c.stats().unrouted_events, 0, "{:?}", c.stats());
    c.call::<DomainDestroy>(&DomainArgs { dom }).await.unwrap();
    assert!(!c.is_closed());
}

/// Nothing more of `events` within half a second (an event delivered twice would show).
async fn quiet<E: std::fmt::Debug>(events: &mut EventStream<E>, what: &str) {
    if let Ok(ev) = tokio::time::timeout(Duration::from_millis(500), events.next()).await {
        panic!("{what}: one more event: {ev:?}");
    }
}

/// The legacy registration (`CONNECT_DOMAIN_EVENT_REGISTER`, 105) and the legacy
/// any-registration of `LIFECYCLE` (id 0) on one connection, in both orders of leaving:
/// both subscribers get each lifecycle event exactly once, and the one that stays keeps
/// getting them after the other left (and after it came back).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn legacy_register_and_any_lifecycle_on_one_connection() {
    use libvirt_remote::proto::events::event_id;

    let Some(d) = Libvirtd::start_or_skip() else {
        return;
    };
    let c = Client::connect(&d.test_uri(), ConnectOptions::default())
        .await
        .unwrap();
    let lifecycle = |ev: DomainEvent| match ev {
        DomainEvent::Lifecycle(l) => (l.dom.name.to_string_lossy().into_owned(), l.event),
        other => panic!("not a lifecycle event: {other:?}"),
    };
    let mut legacy = c.subscribe_domain_events_legacy().await.unwrap();
    let mut any = c
        .subscribe_domain_events_legacy_any(event_id::LIFECYCLE)
        .await
        .unwrap_or_else(|e| panic!("any-registration of id 0 next to 105: {e:?}"));
    let xml = "<domain type='test'><name>legacy-both</name><memory>8192</memory>\
               <os><type>hvm</type></os></domain>";
    let define = || async {
        c.call::<DomainDefineXml>(&XmlArgs { xml: xml.into() })
            .await
            .unwrap()
            .dom
    };
    let dom = define().await;
    for (events, what) in [(&mut legacy, "105"), (&mut any, "any 0")] {
        assert_eq!(
            lifecycle(next(events, what).await),
            ("legacy-both".to_string(), DomainEventType::DEFINED),
            "{what}"
        );
    }
    quiet(&mut legacy, "105").await;
    quiet(&mut any, "any 0").await;

    // 105's subscriber leaves: the any-registration still gets events.
    drop(legacy);
    c.call::<DomainUndefine>(&DomainArgs { dom }).await.unwrap();
    assert_eq!(
        lifecycle(next(&mut any, "any 0").await).1,
        DomainEventType::UNDEFINED
    );
    quiet(&mut any, "any 0").await;

    // 105 again, then the any-registration leaves: 105 still gets events.
    let mut legacy = c.subscribe_domain_events_legacy().await.unwrap();
    drop(any);
    let dom = define().await;
    assert_eq!(
        lifecycle(next(&mut legacy, "105").await).1,
        DomainEventType::DEFINED
    );
    quiet(&mut legacy, "105").await;
    c.call::<DomainUndefine>(&DomainArgs { dom }).await.unwrap();
    assert_eq!(
        lifecycle(next(&mut legacy, "105").await).1,
        DomainEventType::UNDEFINED
    );

    // The other order: the any-registration first, then 105 joins it.
    drop(legacy);
    let mut any = c
        .subscribe_domain_events_legacy_any(event_id::LIFECYCLE)
        .await
        .unwrap();
    let mut legacy = c
        .subscribe_domain_events_legacy()
        .await
        .unwrap_or_else(|e| panic!("105 next to the any-registration of id 0: {e:?}"));
    assert_eq!((legacy.callback_id(), any.callback_id()), (0, 0));
    let dom = define().await;
    for (events, what) in [(&mut legacy, "105"), (&mut any, "any 0")] {
        assert_eq!(
            lifecycle(next(events, what).await).1,
            DomainEventType::DEFINED
        );
    }
    quiet(&mut legacy, "105").await;
    quiet(&mut any, "any 0").await;
    c.call::<DomainUndefine>(&DomainArgs { dom }).await.unwrap();
    assert_eq!(c.stats().unrouted_events, 0, "{:?}", c.stats());
    assert!(!c.is_closed());
}
