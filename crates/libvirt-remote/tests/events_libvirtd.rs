//! Event subscriptions of every kind against a real private libvirtd: networks, storage pools
//! and node devices of the test driver (`test:///default` through the daemon's socket), and
//! secrets of the session daemon's own secret driver.

use std::fmt::Debug;
use std::time::Duration;

use futures::{Stream, StreamExt};
use libvirt_remote::client::{Client, ConnectOptions, EventStream};
use libvirt_remote::proto::events::{
    DomainEvent, NetworkEvent, NetworkLifecycle, NodeDeviceEvent, NodeDeviceLifecycle, SecretEvent,
    SecretLifecycle, SecretValueChanged, StoragePoolEvent, StoragePoolLifecycle,
    StoragePoolRefreshed, event_id,
};
use libvirt_remote::proto::events::{
    network_event_id, node_device_event_id, pool_event_id, secret_event_id,
};
use libvirt_remote::proto::names::{NetworkEventType, StoragePoolEventType};
use libvirt_remote::proto::procs::common::{NameArgs, XmlArgs, XmlFlagsArgs};
use libvirt_remote::proto::procs::network::{
    NetworkArgs, NetworkCreate, NetworkDefineXml, NetworkDestroy, NetworkUndefine,
};
use libvirt_remote::proto::procs::nodedev::NodeDeviceDestroy;
use libvirt_remote::proto::procs::secret::{
    SecretArgs, SecretSetValue, SecretSetValueArgs, SecretUndefine,
};
use libvirt_remote::proto::procs::storage::{
    StoragePoolArgs, StoragePoolCreate, StoragePoolDefineXml, StoragePoolDestroy,
    StoragePoolFlagsArgs, StoragePoolRefresh, StoragePoolUndefine,
};

/// `virStoragePoolEventLifecycleType` (networks number theirs the same way).
const DEFINED: i32 = StoragePoolEventType::DEFINED.0;
const UNDEFINED: i32 = StoragePoolEventType::UNDEFINED.0;
const STARTED: i32 = StoragePoolEventType::STARTED.0;
const STOPPED: i32 = StoragePoolEventType::STOPPED.0;
use libvirt_remote::proto::procs::storage::{StoragePoolCreateFlags, StoragePoolDefineFlags};
use testbed::libvirtd::Libvirtd;

/// `virNodeDeviceEventLifecycleType`.
const NODE_DEVICE_CREATED: i32 = 0;
const NODE_DEVICE_DELETED: i32 = 1;
/// `virSecretEventLifecycleType`.
const SECRET_DEFINED: i32 = 0;
const SECRET_UNDEFINED: i32 = 1;

async fn next<E: Debug>(events: &mut EventStream<E>, what: &str) -> E {
    tokio::time::timeout(Duration::from_secs(10), events.next())
        .await
        .unwrap_or_else(|_| panic!("no {what} event within 10 s"))
        .unwrap_or_else(|| panic!("{what} subscription ended"))
}

/// Nothing arrives within `wait`.
async fn quiet<S: Stream + Unpin>(events: &mut S, wait: Duration)
where
    S::Item: Debug,
{
    if let Ok(ev) = tokio::time::timeout(wait, events.next()).await {
        panic!("unexpected event: {ev:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn network_pool_and_node_device_events_from_the_test_driver() {
    let Some(d) = Libvirtd::start_or_skip() else {
        return;
    };
    let c = Client::connect(&d.test_uri(), ConnectOptions::default())
        .await
        .unwrap();
    let mut nets = c
        .subscribe::<NetworkEvent>(network_event_id::LIFECYCLE, None)
        .await
        .unwrap();
    let mut pools = c
        .subscribe::<StoragePoolEvent>(pool_event_id::LIFECYCLE, None)
        .await
        .unwrap();
    let mut refreshes = c
        .subscribe::<StoragePoolEvent>(pool_event_id::REFRESH, None)
        .await
        .unwrap();
    let mut devs = c
        .subscribe::<NodeDeviceEvent>(node_device_event_id::LIFECYCLE, None)
        .await
        .unwrap();
    // Subscribed and never fed: other kinds' events must not reach it.
    let mut doms = c
        .subscribe::<DomainEvent>(event_id::LIFECYCLE, None)
        .await
        .unwrap();

    // A network: define, start, stop, undefine.
    let net = c
        .call::<NetworkDefineXml>(&XmlArgs {
            xml: "<network><name>lv-ev-net</name><bridge name='lvevbr0'/></network>".into(),
        })
        .await
        .unwrap()
        .net;
    let args = NetworkArgs { net: net.clone() };
    c.call::<NetworkCreate>(&args).await.unwrap();
    c.call::<NetworkDestroy>(&args).await.unwrap();
    c.call::<NetworkUndefine>(&args).await.unwrap();
    let mut seen = Vec::new();
    for _ in 0..4 {
        match next(&mut nets, "network").await {
            NetworkEvent::Lifecycle(NetworkLifecycle { net: n, event, .. }) => {
                assert_eq!(n.name, "lv-ev-net");
                seen.push(i32::from(event));
            }
            other => panic!("unexpected network event {other:?}"),
        }
    }
    assert_eq!(seen, [DEFINED, STARTED, STOPPED, UNDEFINED]);
    let words: Vec<String> = seen
        .iter()
        .map(|&e| NetworkEventType(e).to_string())
        .collect();
    assert_eq!(words, ["Defined", "Started", "Stopped", "Undefined"]);

    // A pool: define, start, refresh, stop, undefine. The test driver keeps it in memory.
    let pool = c
        .call::<StoragePoolDefineXml>(&XmlFlagsArgs {
            xml: "<pool type='dir'><name>lv-ev-pool</name><target><path>/lv-ev-pool</path>\
                  </target></pool>"
                .into(),
            flags: StoragePoolDefineFlags::empty(),
        })
        .await
        .unwrap()
        .pool;
    let flags = StoragePoolFlagsArgs {
        pool: pool.clone(),
        flags: StoragePoolCreateFlags::empty(),
    };
    let args = StoragePoolArgs { pool: pool.clone() };
    c.call::<StoragePoolCreate>(&flags).await.unwrap();
    c.call::<StoragePoolRefresh>(&StoragePoolFlagsArgs {
        pool: pool.clone(),
        flags: 0,
    })
    .await
    .unwrap();
    c.call::<StoragePoolDestroy>(&args).await.unwrap();
    c.call::<StoragePoolUndefine>(&args).await.unwrap();
    let mut seen = Vec::new();
    for _ in 0..4 {
        match next(&mut pools, "pool lifecycle").await {
            StoragePoolEvent::Lifecycle(StoragePoolLifecycle { pool: p, event, .. }) => {
                assert_eq!(p.name, "lv-ev-pool");
                seen.push(i32::from(event));
            }
            other => panic!("unexpected pool event {other:?}"),
        }
    }
    assert_eq!(seen, [DEFINED, STARTED, STOPPED, UNDEFINED]);
    let words: Vec<String> = seen
        .iter()
        .map(|&e| StoragePoolEventType(e).to_string())
        .collect();
    assert_eq!(words, ["Defined", "Started", "Stopped", "Undefined"]);
    match next(&mut refreshes, "pool refresh").await {
        StoragePoolEvent::Refresh(StoragePoolRefreshed { pool: p }) => {
            assert_eq!(p.name, "lv-ev-pool");
        }
        other => panic!("unexpected pool event {other:?}"),
    }

    // A node device: an NPIV vHBA on the test driver's fc_host, created then destroyed.
    let dev = libvirt_remote_testkit::live::create_vhba(&c, 1).await;
    c.call::<NodeDeviceDestroy>(&NameArgs {
        name: dev.name.clone(),
    })
    .await
    .unwrap();
    let mut seen = Vec::new();
    for _ in 0..2 {
        match next(&mut devs, "node device").await {
            NodeDeviceEvent::Lifecycle(NodeDeviceLifecycle { dev: nd, event, .. }) => {
                assert_eq!(nd.name, dev.name);
                seen.push(i32::from(event));
            }
            other => panic!("unexpected node device event {other:?}"),
        }
    }
    assert_eq!(seen, [NODE_DEVICE_CREATED, NODE_DEVICE_DELETED]);

    quiet(&mut doms, Duration::from_millis(200)).await;
    quiet(&mut refreshes, Duration::ZERO).await;
    assert_eq!(nets.missed() + pools.missed() + devs.missed(), 0);
    c.close();
}

/// Callback ids are per kind: on the session daemon the qemu driver (domains) and the secret
/// driver number their callbacks independently. Dropping one kind's subscription must not
/// unhook another kind's subscription that happens to have the same id.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn secret_events_and_callback_ids_per_kind() {
    let Some(d) = Libvirtd::start_or_skip() else {
        return;
    };
    let c = Client::connect(&d.uri(), ConnectOptions::default())
        .await
        .unwrap();
    let doms = c
        .subscribe::<DomainEvent>(event_id::LIFECYCLE, None)
        .await
        .unwrap();
    let mut lifecycle = c
        .subscribe::<SecretEvent>(secret_event_id::LIFECYCLE, None)
        .await
        .unwrap();
    let mut values = c
        .subscribe::<SecretEvent>(secret_event_id::VALUE_CHANGED, None)
        .await
        .unwrap();
    let ids = [doms.callback_id(), lifecycle.callback_id()];
    assert_eq!(
        ids[0], ids[1],
        "expected the daemon to number domain and secret callbacks independently ({ids:?})"
    );
    drop(doms);

    let secret =
        libvirt_remote_testkit::live::define_volume_secret(&c, "/var/lib/lv-ev/disk.img").await;
    c.call::<SecretSetValue>(&SecretSetValueArgs {
        secret: secret.clone(),
        value: bytes::Bytes::from_static(b"not-a-real-key"),
        flags: 0,
    })
    .await
    .unwrap();
    c.call::<SecretUndefine>(&SecretArgs {
        secret: secret.clone(),
    })
    .await
    .unwrap();

    let mut seen = Vec::new();
    for _ in 0..2 {
        match next(&mut lifecycle, "secret lifecycle").await {
            SecretEvent::Lifecycle(SecretLifecycle {
                secret: s, event, ..
            }) => {
                assert_eq!(s.uuid, secret.uuid);
                seen.push(i32::from(event));
            }
            other => panic!("unexpected secret event {other:?}"),
        }
    }
    assert_eq!(seen, [SECRET_DEFINED, SECRET_UNDEFINED]);
    match next(&mut values, "secret value").await {
        SecretEvent::ValueChanged(SecretValueChanged { secret: s }) => {
            assert_eq!(s.uuid, secret.uuid);
        }
        other => panic!("unexpected secret event {other:?}"),
    }
    c.close();
    // The streams end, and a new subscription fails with the reason.
    assert!(next_or_end(&mut lifecycle).await.is_none());
    let err = c
        .subscribe::<SecretEvent>(secret_event_id::LIFECYCLE, None)
        .await
        .unwrap_err();
    assert!(err.is_connection(), "{err:?}");
}

async fn next_or_end<E>(events: &mut EventStream<E>) -> Option<E> {
    tokio::time::timeout(Duration::from_secs(5), events.next())
        .await
        .expect("the stream neither yielded nor ended within 5 s")
}

/// A subscription request dropped before its reply (a timed-out `select!`, a cancelled task)
/// must not leave a callback registered on the daemon, sending events nobody reads for the
/// life of the connection. Counted on the wire: the packets that arrive on that connection
/// while a network is defined and undefined (a second connection watches the events).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_subscription_dropped_in_flight_is_undone() {
    use futures::FutureExt;
    use libvirt_remote::conn::Config;
    use libvirt_remote::proto::procs::connect::ConnectGetLibVersion;
    let Some(d) = Libvirtd::start_or_skip() else {
        return;
    };
    // No keepalive: every packet counted below is a reply or an event. No busy-poll: a
    // spinning first poll could read the registration's reply before it returns, and the
    // test needs it pending (seen: "answered synchronously" on a quiet box).
    let opts = ConnectOptions {
        config: Config {
            keepalive: None,
            ..Config::default()
        },
        busy_poll: Duration::ZERO,
        ..ConnectOptions::default()
    };
    let c = Client::connect(&d.test_uri(), opts).await.unwrap();
    let watcher = Client::connect(&d.test_uri(), ConnectOptions::default())
        .await
        .unwrap();
    let mut kept = watcher
        .subscribe::<NetworkEvent>(network_event_id::LIFECYCLE, None)
        .await
        .unwrap();
    // Polled once (the registration goes out), then dropped before the reply. The reply
    // can still beat the first poll's end when this thread is descheduled between sending
    // and looking (seen on a loaded 2-core CI machine): such a subscription is complete,
    // its drop deregisters like any other, and the attempt is made again.
    let mut attempts = 0;
    loop {
        attempts += 1;
        let polled = c
            .subscribe::<NetworkEvent>(network_event_id::LIFECYCLE, None)
            .now_or_never();
        let Some(done) = polled else {
            tokio::time::sleep(Duration::from_millis(200)).await;
            break;
        };
        drop(done.unwrap_or_else(|e| panic!("a registration answered in one poll: {e}")));
        assert!(
            attempts < 20,
            "the registration answered within its first poll 20 times"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    c.call::<ConnectGetLibVersion>(&()).await.unwrap();
    // The undoing deregistration goes out when the registration's reply arrives, which a
    // loaded daemon may send after any sleep, and its reply may follow a later call's (the
    // daemon's worker threads answer in any order): count from when every call on `c` is
    // answered, not from a later call's reply.
    all_answered(&c).await;

    let before = c.stats().packets_in;
    network_churn(&c, "lv-orphan").await;
    assert_eq!(
        lifecycle_pair(&mut kept, "watcher").await,
        [DEFINED, UNDEFINED]
    );
    tokio::time::sleep(Duration::from_millis(200)).await;
    c.call::<ConnectGetLibVersion>(&()).await.unwrap();
    let packets = c.stats().packets_in - before;
    assert_eq!(
        packets, 3,
        "3 replies expected; more means the dropped registration is still live on the daemon"
    );
    // And the same subscription can be made again.
    c.subscribe::<NetworkEvent>(network_event_id::LIFECYCLE, None)
        .await
        .unwrap_or_else(|e| panic!("subscribing again after a dropped request: {e}"));
    c.close();
}

/// Wait (bounded) until every packet `c` sent is answered. Only for a connection without
/// keepalive, streams or events: then every packet out is a call and every packet in a reply.
async fn all_answered(c: &Client) {
    let t = std::time::Instant::now();
    loop {
        let s = c.stats();
        if s.packets_in == s.packets_out {
            return;
        }
        assert!(
            t.elapsed() < Duration::from_secs(30),
            "calls unanswered after 30 s: {s:?}"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// Define and undefine a network on the test driver: two lifecycle events.
async fn network_churn(c: &Client, name: &str) {
    let net = c
        .call::<NetworkDefineXml>(&XmlArgs {
            xml: format!("<network><name>{name}</name><bridge name='lvevbr3'/></network>").into(),
        })
        .await
        .unwrap()
        .net;
    c.call::<NetworkUndefine>(&NetworkArgs { net })
        .await
        .unwrap();
}

async fn lifecycle_pair(events: &mut EventStream<NetworkEvent>, who: &str) -> Vec<i32> {
    let mut seen = Vec::new();
    for _ in 0..2 {
        match next(events, who).await {
            NetworkEvent::Lifecycle(NetworkLifecycle { event, .. }) => seen.push(i32::from(event)),
            other => panic!("{who}: unexpected {other:?}"),
        }
    }
    seen
}

/// The daemon refuses a second identical registration on one connection ("event callback
/// already tracked"), so subscribers of the same event share one registration: each gets
/// every event, dropping one leaves the other, and after the last one is gone the same
/// subscription can be made again at once (it waits for the deregistration's reply).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn subscribers_of_one_event_share_a_registration() {
    let Some(d) = Libvirtd::start_or_skip() else {
        return;
    };
    let c = Client::connect(&d.test_uri(), ConnectOptions::default())
        .await
        .unwrap();
    let sub = || c.subscribe::<NetworkEvent>(network_event_id::LIFECYCLE, None);
    let mut a = sub().await.unwrap();
    let mut b = sub()
        .await
        .unwrap_or_else(|e| panic!("a second subscriber to the same event: {e}"));
    assert_eq!(a.callback_id(), b.callback_id());
    network_churn(&c, "lv-share-1").await;
    assert_eq!(lifecycle_pair(&mut a, "a").await, [DEFINED, UNDEFINED]);
    assert_eq!(lifecycle_pair(&mut b, "b").await, [DEFINED, UNDEFINED]);
    drop(a);
    network_churn(&c, "lv-share-2").await;
    assert_eq!(
        lifecycle_pair(&mut b, "b after a left").await,
        [DEFINED, UNDEFINED]
    );
    for round in 0..5 {
        drop(b);
        b = sub().await.unwrap_or_else(|e| {
            panic!("subscribing again right after the last drop ({round}): {e}")
        });
    }
    network_churn(&c, "lv-share-3").await;
    assert_eq!(
        lifecycle_pair(&mut b, "b re-subscribed").await,
        [DEFINED, UNDEFINED]
    );
    c.close();
}

/// A subscriber that never reads loses events beyond its queue, counted, and the connection
/// keeps answering calls meanwhile.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stalled_subscriber_loses_events_not_replies() {
    let Some(d) = Libvirtd::start_or_skip() else {
        return;
    };
    let opts = ConnectOptions {
        event_queue: std::num::NonZeroUsize::new(2).unwrap(),
        ..ConnectOptions::default()
    };
    let c = Client::connect(&d.test_uri(), opts).await.unwrap();
    let mut stalled = c
        .subscribe::<NetworkEvent>(network_event_id::LIFECYCLE, None)
        .await
        .unwrap();
    for i in 0..10 {
        // Each call's reply arrives although the subscriber's queue is long full.
        tokio::time::timeout(
            Duration::from_secs(10),
            network_churn(&c, &format!("lv-stall-{i}")),
        )
        .await
        .expect("calls answered while a subscriber is stalled");
    }
    // Let the last events arrive, then read what was kept.
    let t = std::time::Instant::now();
    while stalled.missed() < 18 && t.elapsed() < Duration::from_secs(10) {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(stalled.missed(), 18, "20 events, a queue of 2");
    let kept = lifecycle_pair(&mut stalled, "stalled").await;
    assert_eq!(kept, [DEFINED, UNDEFINED], "the first two are kept");
    quiet(&mut stalled, Duration::from_millis(100)).await;
    c.close();
}
