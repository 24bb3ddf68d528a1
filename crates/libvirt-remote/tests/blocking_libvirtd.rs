//! The blocking API (`libvirt_remote::blocking`) against a private libvirtd 9.0: generated
//! methods, a handle passed as an argument, a volume written through `std::io::Write` and read
//! back through `std::io::Read`, lifecycle events as an iterator. No runtime in sight: every
//! test is a plain `#[test]`.
#![cfg(feature = "blocking")]

use std::io::{Read, Write};
use std::sync::mpsc;
use std::time::Duration;

use libvirt_remote::blocking::{Connect, Events};
use libvirt_remote::client::{DownloadOptions, UploadOptions};
use libvirt_remote::proto::events::event_id;
use libvirt_remote::proto::names::DomainEventType;
use testbed::libvirtd::Libvirtd;

#[test]
fn a_volume_goes_up_through_write_and_comes_back_through_read() {
    let Some(d) = Libvirtd::start_or_skip() else {
        return;
    };
    let conn = Connect::open(&d.uri()).expect("connect");
    let pool = conn.lookup_storage_pool_by_name(d.pool_name()).unwrap();
    let vol = pool
        .create_volume_xml(
            "<volume><name>blocking-up.raw</name><capacity unit='bytes'>1048576</capacity>\
             <target><format type='raw'/></target></volume>",
            Default::default(),
        )
        .unwrap();
    assert_eq!(vol.name(), "blocking-up.raw");
    let data: Vec<u8> = (0..1_048_576u32).map(|i| (i % 251) as u8).collect();
    let mut up = vol.upload(UploadOptions::new()).unwrap();
    for chunk in data.chunks(100_000) {
        up.write_all(chunk).unwrap();
    }
    up.finish().unwrap();

    // A blocking handle is passed where a method takes an object (`&vol`).
    let copy = pool
        .create_volume_xml_from(
            "<volume><name>blocking-copy.raw</name><capacity unit='bytes'>1048576</capacity>\
             <target><format type='raw'/></target></volume>",
            &vol,
            Default::default(),
        )
        .unwrap();
    let mut back = Vec::new();
    copy.download(DownloadOptions::new())
        .unwrap()
        .read_to_end(&mut back)
        .unwrap();
    assert!(
        back == data,
        "{} bytes back, not the bytes sent",
        back.len()
    );
    copy.delete(Default::default()).unwrap();
    vol.delete(Default::default()).unwrap();
}

/// The iterator blocks: read it on a thread of its own, as a program would; (name, event).
fn on_a_thread(events: Events<event_id::Lifecycle>) -> mpsc::Receiver<(String, DomainEventType)> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for ev in events {
            if tx.send((ev.dom.name.to_string(), ev.event)).is_err() {
                break;
            }
        }
    });
    rx
}

#[test]
fn lifecycle_events_are_an_iterator() {
    let Some(d) = Libvirtd::start_or_skip() else {
        return;
    };
    let conn = Connect::open(&d.test_uri()).expect("connect");
    let events = conn.subscribe::<event_id::Lifecycle>().expect("subscribe");
    let rx = on_a_thread(events);
    let dom = conn
        .define_domain_xml(
            "<domain type='test'><name>blocking-ev</name><memory unit='KiB'>65536</memory>\
             <vcpu>1</vcpu><os><type arch='i686'>hvm</type></os></domain>",
        )
        .unwrap();
    dom.create().unwrap();
    let mut seen = Vec::new();
    while seen.len() < 2 {
        let ev = rx
            .recv_timeout(Duration::from_secs(10))
            .unwrap_or_else(|e| panic!("no event ({e}); seen {seen:?}"));
        if ev.0 == "blocking-ev" {
            seen.push(ev.1);
        }
    }
    assert_eq!(
        seen,
        [DomainEventType::DEFINED, DomainEventType::STARTED],
        "{seen:?}"
    );
    dom.destroy().unwrap();
    dom.undefine().unwrap();
}

#[test]
fn a_handles_subscription_sees_that_object_only() {
    let Some(d) = Libvirtd::start_or_skip() else {
        return;
    };
    let conn = Connect::open(&d.test_uri()).expect("connect");
    let define = |name: &str| {
        conn.define_domain_xml(&format!(
            "<domain type='test'><name>{name}</name><memory unit='KiB'>65536</memory>\
             <vcpu>1</vcpu><os><type arch='i686'>hvm</type></os></domain>"
        ))
        .unwrap()
    };
    let mine = define("blocking-mine");
    let other = define("blocking-other");
    let events = mine.subscribe::<event_id::Lifecycle>().expect("subscribe");
    let rx = on_a_thread(events);
    // The other domain's events come first on the wire; the filter keeps them out.
    other.create().unwrap();
    other.destroy().unwrap();
    mine.create().unwrap();
    let first = rx
        .recv_timeout(Duration::from_secs(10))
        .unwrap_or_else(|e| panic!("no event ({e})"));
    assert_eq!(
        first,
        ("blocking-mine".to_string(), DomainEventType::STARTED),
        "{first:?}"
    );
    mine.destroy().unwrap();
    mine.undefine().unwrap();
    other.undefine().unwrap();
}
