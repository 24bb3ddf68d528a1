//! Reconnect against a real private libvirtd, killed (SIGKILL) and restarted under the client:
//! subscriptions of every event family yield a gap and then the events of objects changed
//! after the restart; calls and streams in flight at the kill end typed, never retried; calls
//! made during the outage wait for the redial or fail at once, per the policy; a close while
//! redialling is immediate.

use std::fmt::Debug;
use std::time::{Duration, Instant, SystemTime};

use libvirt_remote::Error;
use libvirt_remote::client::{Client, ConnectOptions, EventItem, EventStream, Gap, TransferError};
use libvirt_remote::conn::reconnect::{LinkState, NewCalls, ReconnectPolicy};
use libvirt_remote::conn::{CallError, ConnectionError, StreamError};
use libvirt_remote::proto::events::{
    DomainEvent, NetworkEvent, NodeDeviceEvent, SecretEvent, StoragePoolEvent, event_id,
};
use libvirt_remote::proto::events::{
    network_event_id, node_device_event_id, pool_event_id, secret_event_id,
};
use libvirt_remote::proto::procs::common::{XmlArgs, XmlFlagsArgs};
use libvirt_remote::proto::procs::connect::ConnectGetLibVersion;
use libvirt_remote::proto::procs::domain::{DomainDefineXml, DomainDefineXmlArgs};
use libvirt_remote::proto::procs::network::NetworkDefineXml;
use libvirt_remote::proto::procs::storage::{StoragePoolDefineFlags, StoragePoolDefineXml};
use libvirt_remote_testkit::live::{make_vol, upload_under_way};
use testbed::libvirtd::Libvirtd;

/// A quick redial: the outage is what the tests time, not the backoff.
fn policy() -> ReconnectPolicy {
    ReconnectPolicy::default().backoff(Duration::from_millis(50), Duration::from_millis(400))
}

fn opts(policy: Option<ReconnectPolicy>) -> ConnectOptions {
    ConnectOptions {
        reconnect: policy,
        ..ConnectOptions::default()
    }
}

/// Wait (bounded) until `c`'s link state satisfies `want`.
async fn link_until(c: &Client, what: &str, want: impl Fn(&LinkState) -> bool) {
    let mut rx = c.watch_link();
    let wait = async {
        loop {
            if want(&rx.borrow_and_update()) {
                return;
            }
            rx.changed().await.expect("link watch alive");
        }
    };
    tokio::time::timeout(Duration::from_secs(30), wait)
        .await
        .unwrap_or_else(|_| panic!("link not {what} within 30 s: {:?}", c.link_state()));
}

fn reconnecting(s: &LinkState) -> bool {
    matches!(s, LinkState::Reconnecting { .. })
}

fn connected(s: &LinkState) -> bool {
    matches!(s, LinkState::Connected)
}

async fn item<E: Debug>(events: &mut EventStream<E>, what: &str) -> EventItem<E> {
    tokio::time::timeout(Duration::from_secs(10), events.next_item())
        .await
        .unwrap_or_else(|_| panic!("nothing on the {what} subscription within 10 s"))
        .unwrap_or_else(|| panic!("the {what} subscription ended"))
}

/// The first item after the restart is a gap, stamped in order, caused by the lost link.
async fn gap<E: Debug>(events: &mut EventStream<E>, what: &str, killed_at: SystemTime) -> Gap {
    match item(events, what).await {
        EventItem::Gap(g) => {
            assert!(
                g.lost_at >= killed_at && g.resubscribed_at >= g.lost_at,
                "{what}: gap stamps out of order: {g:?}"
            );
            assert!(
                CallError::Connection(g.cause.clone()).is_connection_dead(),
                "{what}: {g:?}"
            );
            g
        }
        EventItem::Event(e) => panic!("{what}: an event before the gap: {e:?}"),
        other => panic!("{what}: {other:?}"),
    }
}

async fn event<E: Debug>(events: &mut EventStream<E>, what: &str) -> E {
    match item(events, what).await {
        EventItem::Event(e) => e,
        other => panic!("{what}: expected an event, got {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_event_family_yields_a_gap_then_the_events_after_a_sigkill_and_restart() {
    let Some(mut d) = Libvirtd::start_or_skip() else {
        return;
    };
    // The test driver's domains, networks, pools and node devices; the session daemon's
    // secrets.
    let ct = Client::connect(&d.test_uri(), opts(Some(policy())))
        .await
        .unwrap();
    let cs = Client::connect(&d.uri(), opts(Some(policy())))
        .await
        .unwrap();
    let mut doms = ct
        .subscribe::<DomainEvent>(event_id::LIFECYCLE, None)
        .await
        .unwrap();
    let mut nets = ct
        .subscribe::<NetworkEvent>(network_event_id::LIFECYCLE, None)
        .await
        .unwrap();
    let mut pools = ct
        .subscribe::<StoragePoolEvent>(pool_event_id::LIFECYCLE, None)
        .await
        .unwrap();
    let mut devs = ct
        .subscribe::<NodeDeviceEvent>(node_device_event_id::LIFECYCLE, None)
        .await
        .unwrap();
    let mut secrets = cs
        .subscribe::<SecretEvent>(secret_event_id::LIFECYCLE, None)
        .await
        .unwrap();

    let killed_at = SystemTime::now();
    d.kill().unwrap();
    link_until(&ct, "reconnecting", reconnecting).await;
    link_until(&cs, "reconnecting", reconnecting).await;
    assert!(!ct.is_closed(), "a reconnecting client is not closed");
    d.restart().unwrap();
    let t = Instant::now();
    link_until(&ct, "connected again", connected).await;
    link_until(&cs, "connected again", connected).await;
    eprintln!("both links back {:?} after the restart", t.elapsed());

    let g = gap(&mut doms, "domain", killed_at).await;
    eprintln!(
        "domain gap: {:?} without events, cause {}",
        g.resubscribed_at
            .duration_since(g.lost_at)
            .unwrap_or_default(),
        g.cause
    );
    gap(&mut nets, "network", killed_at).await;
    gap(&mut pools, "pool", killed_at).await;
    gap(&mut devs, "node device", killed_at).await;
    gap(&mut secrets, "secret", killed_at).await;

    // Objects changed after the restart: their events arrive on the old streams.
    ct.call::<DomainDefineXml>(&DomainDefineXmlArgs {
        xml: "<domain type='test'><name>lv-rc-dom</name><memory>1024</memory>\
              <os><type>hvm</type></os></domain>"
            .into(),
    })
    .await
    .unwrap();
    match event(&mut doms, "domain").await {
        DomainEvent::Lifecycle(l) => assert_eq!(l.dom.name, "lv-rc-dom"),
        other => panic!("domain: {other:?}"),
    }
    ct.call::<NetworkDefineXml>(&XmlArgs {
        xml: "<network><name>lv-rc-net</name><bridge name='lvrcbr0'/></network>".into(),
    })
    .await
    .unwrap();
    match event(&mut nets, "network").await {
        NetworkEvent::Lifecycle(l) => assert_eq!(l.net.name, "lv-rc-net"),
        other => panic!("network: {other:?}"),
    }
    ct.call::<StoragePoolDefineXml>(&XmlFlagsArgs {
        xml: "<pool type='dir'><name>lv-rc-pool</name><target><path>/lv-rc-pool</path>\
              </target></pool>"
            .into(),
        flags: StoragePoolDefineFlags::empty(),
    })
    .await
    .unwrap();
    match event(&mut pools, "pool").await {
        StoragePoolEvent::Lifecycle(l) => assert_eq!(l.pool.name, "lv-rc-pool"),
        other => panic!("pool: {other:?}"),
    }
    let dev = libvirt_remote_testkit::live::create_vhba(&ct, 2).await;
    match event(&mut devs, "node device").await {
        NodeDeviceEvent::Lifecycle(l) => assert_eq!(l.dev.name, dev.name),
        other => panic!("node device: {other:?}"),
    }
    let secret =
        libvirt_remote_testkit::live::define_volume_secret(&cs, "/var/lib/lv-rc/disk.img").await;
    match event(&mut secrets, "secret").await {
        SecretEvent::Lifecycle(l) => assert_eq!(l.secret.uuid, secret.uuid),
        other => panic!("secret: {other:?}"),
    }
    for (name, missed) in [
        ("domain", doms.missed()),
        ("network", nets.missed()),
        ("pool", pools.missed()),
        ("node device", devs.missed()),
        ("secret", secrets.missed()),
    ] {
        assert_eq!(missed, 0, "{name} subscription missed events");
    }
    ct.close();
    cs.close();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_and_streams_in_flight_at_the_kill_end_typed_and_are_never_retried() {
    let Some(mut d) = Libvirtd::start_or_skip() else {
        return;
    };
    let c = Client::connect(&d.uri(), opts(Some(policy())))
        .await
        .unwrap();
    let vol = make_vol(&c, d.pool_name(), "rc.raw", 1 << 40).await;
    let up = upload_under_way(&c, vol, tokio::io::repeat(7)).await;
    // Calls the daemon has read and not answered when it dies.
    d.freeze().unwrap();
    let calls: Vec<_> = (0..8)
        .map(|_| {
            let c = c.clone();
            tokio::spawn(async move { c.call::<ConnectGetLibVersion>(&()).await })
        })
        .collect();
    tokio::time::sleep(Duration::from_millis(200)).await;
    let killed = Instant::now();
    d.kill().unwrap();
    // The keepalive bound is 5 s × 6; a SIGKILLed daemon's socket says EOF at once.
    for call in calls {
        let r = tokio::time::timeout(Duration::from_secs(30), call)
            .await
            .expect("call ended within the keepalive bound")
            .unwrap();
        assert!(
            matches!(r, Err(CallError::Connection(ref e)) if !matches!(e, ConnectionError::Reconnecting { .. })),
            "an in-flight call must end with the lost connection's error, got {r:?}"
        );
    }
    let r = tokio::time::timeout(Duration::from_secs(30), up)
        .await
        .expect("upload ended within the keepalive bound")
        .unwrap();
    assert!(
        matches!(r, Err(TransferError::Stream(StreamError::Connection(_)))),
        "{r:?}"
    );
    eprintln!(
        "in-flight calls and the upload ended {:?} after the kill",
        killed.elapsed()
    );
    d.restart().unwrap();
    link_until(&c, "connected again", connected).await;
    // The link works again; nothing of the dead generation was replayed: the daemon saw the
    // frozen calls never (it was killed before answering), and the new generation serves
    // new calls.
    c.call::<ConnectGetLibVersion>(&()).await.unwrap();
    c.close();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hundred_calls_during_the_outage_wait_for_the_redial_or_fail_at_once() {
    let Some(mut d) = Libvirtd::start_or_skip() else {
        return;
    };
    let waits = Client::connect(&d.uri(), opts(Some(policy())))
        .await
        .unwrap();
    let fails = Client::connect(&d.uri(), opts(Some(policy().new_calls(NewCalls::FailFast))))
        .await
        .unwrap();
    d.kill().unwrap();
    link_until(&waits, "reconnecting", reconnecting).await;
    link_until(&fails, "reconnecting", reconnecting).await;

    // Fail fast: each of 100 calls fails at once, typed.
    let t = Instant::now();
    let results =
        futures::future::join_all((0..100).map(|_| fails.call::<ConnectGetLibVersion>(&()))).await;
    let fast = t.elapsed();
    for r in &results {
        assert!(
            matches!(
                r,
                Err(CallError::Connection(ConnectionError::Reconnecting { .. }))
            ),
            "{r:?}"
        );
    }
    assert!(results[0].as_ref().unwrap_err().is_connection_dead());
    eprintln!("100 fail-fast calls during the outage failed in {fast:?}");
    // A call's own deadline bounds its wait.
    let r = waits
        .call_timeout::<ConnectGetLibVersion>(&(), Duration::from_millis(100))
        .await;
    assert!(matches!(r, Err(CallError::TimedOut)), "{r:?}");

    // Wait: 100 calls issued during the outage each succeed after the restart.
    let pending: Vec<_> = (0..100)
        .map(|_| {
            let c = waits.clone();
            tokio::spawn(async move {
                c.call_timeout::<ConnectGetLibVersion>(&(), Duration::from_secs(60))
                    .await
            })
        })
        .collect();
    tokio::time::sleep(Duration::from_millis(300)).await;
    d.restart().unwrap();
    let t = Instant::now();
    let mut ok = 0;
    for p in pending {
        let r = p.await.unwrap();
        assert!(r.is_ok(), "a waiting call failed: {r:?}");
        ok += 1;
    }
    eprintln!(
        "{ok} waiting calls succeeded {:?} after the restart",
        t.elapsed()
    );
    assert_eq!(ok, 100);
    link_until(&fails, "connected again", connected).await;
    fails.call::<ConnectGetLibVersion>(&()).await.unwrap();
    waits.close();
    fails.close();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_close_while_redialling_is_immediate_and_final() {
    let Some(mut d) = Libvirtd::start_or_skip() else {
        return;
    };
    let c = Client::connect(&d.uri(), opts(Some(policy())))
        .await
        .unwrap();
    let mut doms = c
        .subscribe::<DomainEvent>(event_id::LIFECYCLE, None)
        .await
        .unwrap();
    d.kill().unwrap();
    link_until(&c, "reconnecting", reconnecting).await;
    // Started while the link is down, so it waits for the redial (started before the kill,
    // it could be answered first).
    let waiting = {
        let c = c.clone();
        tokio::spawn(async move { c.call::<ConnectGetLibVersion>(&()).await })
    };
    // The daemon stays dead, so the redial cannot succeed meanwhile.
    tokio::time::sleep(Duration::from_millis(20)).await;
    let closing = Instant::now();
    assert!(c.close_with("test over"), "the close that ended the link");
    let took = closing.elapsed();
    assert!(c.is_closed());
    assert!(matches!(c.link_state(), LinkState::Closed(_)));
    let why = tokio::time::timeout(Duration::from_secs(1), c.closed())
        .await
        .expect("closed() resolves");
    assert!(
        matches!(why, ConnectionError::LocallyClosed { .. }),
        "{why:?}"
    );
    // The subscription ends; a call that waited for the redial fails with the close.
    assert!(
        tokio::time::timeout(Duration::from_secs(1), doms.next_item())
            .await
            .expect("the subscription ends")
            .is_none()
    );
    let r = tokio::time::timeout(Duration::from_secs(1), waiting)
        .await
        .expect("the waiting call ends")
        .unwrap();
    assert!(r.is_err(), "{r:?}");
    eprintln!("close while redialling took {took:?}");
    let err: Error = c
        .call::<ConnectGetLibVersion>(&())
        .await
        .unwrap_err()
        .into();
    assert!(err.is_connection_dead(), "{err:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_policy_that_gives_up_closes_the_link() {
    let Some(mut d) = Libvirtd::start_or_skip() else {
        return;
    };
    let c = Client::connect(&d.uri(), opts(Some(policy().max_attempts(Some(3)))))
        .await
        .unwrap();
    d.kill().unwrap();
    let e = tokio::time::timeout(Duration::from_secs(10), c.closed())
        .await
        .expect("gave up within 10 s");
    assert!(
        e.to_string().contains("gave up reconnecting after 3"),
        "{e}"
    );
    assert!(c.is_closed());
}

/// H1 with reconnect: a write stalled on a frozen daemon neither holds the redial (the
/// keepalive declares the link lost, the next generation is dialled and goes live once a
/// daemon answers) nor a close (immediate, as without reconnect).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stalled_write_holds_neither_the_redial_nor_a_close() {
    let Some(mut d) = Libvirtd::start_or_skip() else {
        return;
    };
    let mut o = opts(Some(policy()));
    o.config.keepalive = Some(libvirt_remote::conn::KeepaliveConfig {
        interval: Duration::from_millis(500),
        count: 2,
    });
    o.connect_timeout = Some(Duration::from_secs(2));
    let c = Client::connect(&d.uri(), o).await.unwrap();
    let vol = make_vol(&c, d.pool_name(), "h1.raw", 1 << 40).await;
    let up = upload_under_way(&c, vol, tokio::io::repeat(7)).await;
    // Frozen: the socket's buffers fill and the driver's write stalls; nothing answers pings.
    d.freeze().unwrap();
    link_until(&c, "reconnecting", reconnecting).await;
    let r = tokio::time::timeout(Duration::from_secs(10), up)
        .await
        .expect("the stalled upload ended")
        .unwrap();
    assert!(
        matches!(
            r,
            Err(TransferError::Stream(StreamError::Connection(
                ConnectionError::KeepaliveTimeout { .. }
            )))
        ),
        "{r:?}"
    );
    // The frozen daemon accepts and never answers: those dials time out; a live one answers.
    d.kill().unwrap();
    d.restart().unwrap();
    link_until(&c, "connected again", connected).await;
    c.call::<ConnectGetLibVersion>(&()).await.unwrap();

    // A close under a stalled write, with reconnect on, is as immediate as without.
    let vol = make_vol(&c, d.pool_name(), "h1b.raw", 1 << 40).await;
    let up = upload_under_way(&c, vol, tokio::io::repeat(7)).await;
    d.freeze().unwrap();
    tokio::time::sleep(Duration::from_millis(200)).await;
    let closing = Instant::now();
    c.close();
    let took = closing.elapsed();
    let r = tokio::time::timeout(Duration::from_secs(1), up)
        .await
        .expect("the upload ends at the close")
        .unwrap();
    assert!(r.is_err(), "{r:?}");
    assert!(matches!(c.link_state(), LinkState::Closed(_)));
    eprintln!("close under a stalled write, reconnect on: {took:?}");
    assert!(took < Duration::from_secs(1), "close took {took:?}");
    d.thaw().unwrap();
}
