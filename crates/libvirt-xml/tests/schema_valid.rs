//! What the builders make is what libvirt's own schemas accept: the crate front page's quick
//! start, and the other constructors, validated with `xmllint --relaxng` against libvirt 9.0's
//! schemas (the source package's, else the installed ones).

use libvirt_xml::fuzzing::assert_schema_valid as assert_valid;
use libvirt_xml::{
    Disk, DiskDriverType, Domain, Interface, StoragePool, StorageVolume, VolumeFormatType,
    XmlElement,
};

#[test]
fn the_quick_start_domain_is_valid() {
    // The crate front page's quick start, line for line.
    let domain = Domain::kvm("web-1")
        .with_memory_mib(1024)
        .with_vcpus(2)
        .with_disk(
            Disk::file("/var/lib/libvirt/images/web-1.qcow2", "vda")
                .with_format(DiskDriverType::Qcow2),
        )
        .with_interface(Interface::network("default"))
        .with_serial_console();
    assert_valid(&domain.to_xml(), "domain.rng");
}

#[test]
fn the_other_constructors_build_valid_documents() {
    let hostile = r#"a'b"c<d>&e"#;
    let domain = Domain::qemu("q")
        .with_title(hostile)
        .with_memory_mib(64)
        .with_disk(Disk::volume("default", "v.qcow2", "vdb").with_format(DiskDriverType::Qcow2))
        .with_disk(Disk::block("/dev/sdb", "sdb"))
        .with_disk(Disk::file("/tmp/seed.iso", "hdc").cdrom())
        .with_interface(Interface::bridge("br0").with_mac("52:54:00:00:00:01"))
        .with_interface(Interface::user().with_model("e1000e"))
        .with_metadata(
            XmlElement::new("app:instance")
                .with_attribute("xmlns:app", "https://example.invalid/app/1")
                .with_child(XmlElement::new("app:name").with_text(hostile)),
        );
    let xml = domain.to_xml();
    assert_valid(&xml, "domain.rng");
    let back = Domain::from_xml(&xml).expect("parses");
    assert_eq!(back.title.as_deref(), Some(hostile));
    assert_eq!(
        back.metadata_element("https://example.invalid/app/1")
            .and_then(|e| e.element("name"))
            .map(XmlElement::text),
        Some(hostile.to_owned())
    );

    let vol = StorageVolume::new("disk.qcow2", 10 << 30)
        .with_format(VolumeFormatType::Qcow2)
        .with_backing("/var/lib/libvirt/images/base.raw", VolumeFormatType::Raw);
    assert_valid(&vol.to_xml(), "storagevol.rng");
    assert_eq!(vol.capacity_bytes(), Some(10 << 30));

    assert_valid(
        &StoragePool::dir("images", "/var/lib/libvirt/images").to_xml(),
        "storagepool.rng",
    );
}
