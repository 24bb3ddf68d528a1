//! The handles' typed XML forms (feature `xml`) against a private libvirtd 9.0: a document
//! built with libvirt-xml defines the object, its description comes back typed, is changed and
//! defined again; on the test driver and the session (QEMU) driver.

use libvirt_remote::prelude::*;
use libvirt_remote::proto::procs::domain::DomainXmlFlags;
use libvirt_xml::{
    Disk, DiskDriverType, DomainType, Interface, Network, NetworkBridge, NetworkIp, Secret,
    SecretUsage, SecretUsageType, StorageVolume, VolumeFormatType, XmlElement, YesNo,
};
use testbed::libvirtd::Libvirtd;

#[tokio::test]
async fn domains_snapshots_and_devices_on_the_test_driver() {
    let Some(d) = Libvirtd::start_or_skip() else {
        return;
    };
    let conn = Connect::open(&d.test_uri()).await.expect("connect");
    // A domain from a typed document, a hostile title and our own metadata included.
    let title = r#"a'b"c<d>&e"#;
    let doc = libvirt_xml::Domain::new(DomainType::Test, "typed-1")
        .with_title(title)
        .with_memory_mib(64)
        .with_metadata(
            XmlElement::new("app:x")
                .with_attribute("xmlns:app", "https://example.invalid/app")
                .with_text("kept"),
        );
    let dom = conn.define_domain(&doc).await.expect("define");
    let back = dom
        .xml_desc_typed(DomainXmlFlags::INACTIVE)
        .await
        .expect("typed description");
    assert_eq!(back.name.as_deref(), Some("typed-1"));
    assert_eq!(back.title.as_deref(), Some(title));
    assert_eq!(
        back.metadata_element("https://example.invalid/app")
            .map(XmlElement::text)
            .as_deref(),
        Some("kept")
    );
    // Changed and defined again: the change is what the daemon describes next.
    let changed = back.with_memory_mib(128);
    conn.define_domain(&changed).await.expect("redefine");
    let again = dom.xml_desc_typed(DomainXmlFlags::INACTIVE).await.unwrap();
    assert_eq!(again.memory.and_then(|m| m.to_bytes()), Some(128 << 20));

    // Snapshots: created from a typed document, described typed.
    dom.create().await.unwrap();
    let snap = dom
        .create_snapshot(
            &libvirt_xml::DomainSnapshot {
                name: Some("s1".into()),
                description: Some(title.into()),
                ..Default::default()
            },
            Default::default(),
        )
        .await
        .expect("snapshot");
    let s = snap.xml_desc_typed(Default::default()).await.unwrap();
    assert_eq!(s.name.as_deref(), Some("s1"));
    assert_eq!(s.description.as_deref(), Some(title));
    assert_eq!(s.domain.and_then(|d| d.name).as_deref(), Some("typed-1"));

    // The host, node devices and pools, typed.
    let caps = conn.capabilities_typed().await.expect("capabilities");
    assert!(caps.host.is_some() && !caps.guests.is_empty(), "{caps:?}");
    let dev = conn.lookup_node_device_by_name("computer").await.unwrap();
    let nd = dev.xml_desc_typed().await.unwrap();
    assert_eq!(nd.name.as_deref(), Some("computer"));
    let pool = conn
        .lookup_storage_pool_by_name("default-pool")
        .await
        .unwrap();
    let p = pool.xml_desc_typed(Default::default()).await.unwrap();
    assert_eq!(p.name.as_deref(), Some("default-pool"));
    // A failed lookup stays the daemon's typed error.
    let missing = conn.lookup_domain_by_name("no-such").await.unwrap_err();
    assert!(missing.is_not_found());
    dom.destroy().await.unwrap();
}

#[tokio::test]
async fn volumes_networks_secrets_and_capabilities_on_the_session_driver() {
    let Some(d) = Libvirtd::start_or_skip() else {
        return;
    };
    let conn = Connect::open(&d.uri()).await.expect("connect");
    let pool = conn
        .lookup_storage_pool_by_name(d.pool_name())
        .await
        .unwrap();
    let vol = pool
        .create_volume(
            &StorageVolume::new("typed.qcow2", 8 << 20).with_format(VolumeFormatType::Qcow2),
            Default::default(),
        )
        .await
        .expect("create volume");
    let v = vol.xml_desc_typed().await.expect("volume description");
    assert_eq!(v.capacity_bytes(), Some(8 << 20));
    assert_eq!(
        v.target.and_then(|t| t.format).and_then(|f| f.r#type),
        Some(VolumeFormatType::Qcow2)
    );

    // A domain using the volume, defined from a typed document.
    let dom = conn
        .define_domain(
            &libvirt_xml::Domain::new(d.domain_type().parse().unwrap(), "typed-q")
                .with_memory_mib(64)
                .with_disk(
                    Disk::volume(d.pool_name(), "typed.qcow2", "vda")
                        .with_format(DiskDriverType::Qcow2),
                )
                .with_interface(Interface::user()),
        )
        .await
        .expect("define");
    let back = dom.xml_desc_typed(Default::default()).await.unwrap();
    assert_eq!(
        back.disks()[0].source_name().as_deref(),
        Some("typed.qcow2")
    );
    assert_eq!(back.interfaces().len(), 1);
    dom.undefine().await.unwrap();
    vol.delete(Default::default()).await.unwrap();

    // A network, defined (not started: that needs root).
    let net = conn
        .define_network(&Network {
            name: Some("typednet".into()),
            bridge: Some(NetworkBridge {
                name: Some("tnbr0".into()),
                ..Default::default()
            }),
            ips: vec![NetworkIp {
                address: Some("192.168.251.1".into()),
                prefix: Some(24),
                ..Default::default()
            }],
            ..Default::default()
        })
        .await
        .expect("define network");
    let n = net.xml_desc_typed(Default::default()).await.unwrap();
    assert_eq!(n.ips[0].prefix, Some(24));
    net.undefine().await.unwrap();

    // A secret.
    let secret = conn
        .define_secret(&Secret {
            ephemeral: Some(YesNo::No),
            private: Some(YesNo::Yes),
            description: Some("typed".into()),
            usage: Some(SecretUsage {
                r#type: Some(SecretUsageType::Volume),
                volume: Some("/x/typed.qcow2".into()),
                ..Default::default()
            }),
            ..Default::default()
        })
        .await
        .expect("define secret");
    let s = secret.xml_desc_typed().await.unwrap();
    assert_eq!(s.description.as_deref(), Some("typed"));
    secret.undefine().await.unwrap();

    let caps = conn
        .domain_capabilities_typed(None, None, None, Some("qemu"))
        .await
        .expect("domain capabilities");
    assert!(caps.os.is_some(), "{caps:?}");
}
