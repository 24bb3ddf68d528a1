//! Typed per-event subscriptions against a real private libvirtd (the test driver): a
//! lifecycle subscription yields lifecycle bodies only, read with the subscription's own
//! `next()` (no `futures::StreamExt` import in this file).

use std::time::Duration;

use libvirt_remote::Connect;
use libvirt_remote::client::{Client, ConnectOptions, Subscription};
use libvirt_remote::proto::events::{TypedEvent, event_id, network_event_id};
use libvirt_remote::proto::names::{DomainEventType, NetworkEventType};
use libvirt_remote::proto::procs::common::XmlArgs;
use libvirt_remote::proto::procs::domain::{
    DomainArgs, DomainCreate, DomainDefineXml, DomainDestroy, DomainUndefine,
};
use libvirt_remote::proto::procs::network::{NetworkArgs, NetworkDefineXml, NetworkUndefine};
use testbed::libvirtd::Libvirtd;

async fn next<T: TypedEvent>(events: &mut Subscription<T>, what: &str) -> T::Body {
    tokio::time::timeout(Duration::from_secs(10), events.next())
        .await
        .unwrap_or_else(|_| panic!("no {what} event within 10 s"))
        .unwrap_or_else(|| panic!("{what} subscription ended"))
}

fn domain_xml(name: &str) -> String {
    format!(
        "<domain type='test'><name>{name}</name><memory unit='KiB'>65536</memory>\
         <vcpu>1</vcpu><os><type arch='i686'>hvm</type></os></domain>"
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_typed_subscription_yields_its_event_only() {
    let Some(d) = Libvirtd::start_or_skip() else {
        return;
    };
    let c = Client::connect(&d.test_uri(), ConnectOptions::default())
        .await
        .unwrap();
    let conn = Connect::from(c.clone());
    let mut all = conn.subscribe::<event_id::Lifecycle>().await.unwrap();
    // Reboot events of the same family go to their own subscription, never to this one.
    let mut reboots = conn.subscribe::<event_id::Reboot>().await.unwrap();
    let mut nets = conn
        .subscribe::<network_event_id::Lifecycle>()
        .await
        .unwrap();
    assert_ne!(all.callback_id(), reboots.callback_id());

    let dom = c
        .call::<DomainDefineXml>(&XmlArgs {
            xml: domain_xml("typed-ev").into(),
        })
        .await
        .unwrap()
        .dom;
    // A subscription for this one domain, opened after the define.
    let mut mine = conn
        .bind(dom.clone())
        .subscribe::<event_id::Lifecycle>()
        .await
        .unwrap();
    let args = DomainArgs { dom: dom.clone() };
    c.call::<DomainCreate>(&args).await.unwrap();
    c.call::<DomainDestroy>(&args).await.unwrap();
    c.call::<DomainUndefine>(&args).await.unwrap();

    let mut seen = Vec::new();
    for _ in 0..4 {
        let ev = next(&mut all, "domain lifecycle").await;
        assert_eq!(ev.dom.name, dom.name);
        seen.push(ev.event);
    }
    assert_eq!(
        seen,
        [
            DomainEventType::DEFINED,
            DomainEventType::STARTED,
            DomainEventType::STOPPED,
            DomainEventType::UNDEFINED
        ]
    );
    let mine_seen = [
        next(&mut mine, "this domain's lifecycle").await.event,
        next(&mut mine, "this domain's lifecycle").await.event,
        next(&mut mine, "this domain's lifecycle").await.event,
    ];
    assert_eq!(
        mine_seen,
        [
            DomainEventType::STARTED,
            DomainEventType::STOPPED,
            DomainEventType::UNDEFINED
        ]
    );

    let net = c
        .call::<NetworkDefineXml>(&XmlArgs {
            xml: "<network><name>typed-ev-net</name><bridge name='tevbr0'/></network>".into(),
        })
        .await
        .unwrap()
        .net;
    c.call::<NetworkUndefine>(&NetworkArgs { net: net.clone() })
        .await
        .unwrap();
    let n1 = next(&mut nets, "network lifecycle").await;
    let n2 = next(&mut nets, "network lifecycle").await;
    assert_eq!(
        (n1.net.name.clone(), n1.event, n2.event),
        (
            net.name,
            NetworkEventType::DEFINED,
            NetworkEventType::UNDEFINED
        )
    );

    // No reboot happened: its typed subscription stayed quiet.
    assert!(
        tokio::time::timeout(Duration::from_millis(300), reboots.next())
            .await
            .is_err(),
        "a reboot subscription received something"
    );
    assert_eq!(all.missed() + mine.missed() + nets.missed(), 0);

    // The connection's death ends a typed subscription.
    c.close();
    assert!(
        tokio::time::timeout(Duration::from_secs(5), all.next())
            .await
            .expect("ends promptly")
            .is_none()
    );
}
