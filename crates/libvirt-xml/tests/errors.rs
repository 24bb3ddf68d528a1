//! Bad input: every class gives a typed error that names the place and the reason, never a
//! panic; limits hold before work.

use libvirt_xml::{AnyDocument, Domain, ErrorKind, ParseOptions, StorageVolume};

fn domain_err(xml: &str) -> libvirt_xml::Error {
    Domain::from_xml(xml).expect_err("must not parse")
}

#[test]
fn malformed_xml_is_a_syntax_error() {
    for xml in [
        "<domain><name>x</nam></domain>",
        "<domain><name>x</name>",
        "<domain type='kvm' type='qemu'/>",
        "<domain type=kvm/>",
        "<domain><name>&undefined;</name></domain>",
        "<domain><!-- a -- b --></domain>",
        "",
        "   ",
        "text",
        "<domain/><domain/>",
        "<domain/>trailing",
    ] {
        let e = Domain::from_xml(xml).expect_err(xml);
        assert!(e.is_syntax(), "{xml:?}: {e:?}");
        assert!(!e.to_string().is_empty());
    }
    // A second root is named as such.
    assert_eq!(
        domain_err("<domain/><domain/>").kind(),
        &ErrorKind::TrailingContent
    );
    assert_eq!(domain_err("").kind(), &ErrorKind::NoRoot);
    // Where the reader stood.
    assert!(
        domain_err("<domain><name>x</nam></domain>")
            .offset()
            .is_some()
    );
}

#[test]
fn a_wrong_root_is_named() {
    let e = domain_err("<network><name>n</name></network>");
    assert_eq!(
        e.kind(),
        &ErrorKind::WrongRoot {
            expected: "domain",
            found: "network".into()
        }
    );
    assert_eq!(
        e.to_string(),
        "root element <network> where <domain> was expected"
    );
    // A root in another namespace is not libvirt's domain.
    let e = domain_err("<domain xmlns='urn:other'/>");
    assert!(matches!(e.kind(), ErrorKind::WrongRoot { .. }), "{e:?}");
    let e = AnyDocument::from_xml("<html/>").expect_err("not libvirt's");
    assert!(matches!(e.kind(), ErrorKind::WrongRoot { .. }), "{e:?}");
}

#[test]
fn an_unknown_enum_value_names_its_attribute() {
    let xml = "<domain type='kvm'><devices>\
               <disk type='file' device='disk'/>\
               <disk type='floppy-drive' device='disk'/>\
               </devices></domain>";
    let e = domain_err(xml);
    assert_eq!(e.path(), "domain/devices/disk[2]/@type");
    assert_eq!(
        e.kind(),
        &ErrorKind::UnknownValue {
            value: "floppy-drive".into(),
            ty: "DiskType"
        }
    );
    assert!(
        e.to_string().starts_with(
            "domain/devices/disk[2]/@type: unknown value \"floppy-drive\" for DiskType"
        ),
        "{e}"
    );
    assert!(e.is_invalid_value());
    // On the root.
    assert_eq!(domain_err("<domain type='vmx'/>").path(), "domain/@type");
    // In element text.
    let e = domain_err("<domain><on_poweroff>explode</on_poweroff></domain>");
    assert_eq!(e.path(), "domain/on_poweroff");
    assert!(matches!(e.kind(), ErrorKind::UnknownValue { .. }), "{e:?}");
}

#[test]
fn an_out_of_range_number_names_its_place() {
    // PCI function is 0..=7 in a u8; slot a u32 (PCI or DIMM); 0x100 overflows the u8 bus.
    let xml = "<domain><devices><interface type='user'>\
               <address type='pci' domain='0x0000' bus='0x100' slot='0x01' function='0x0'/>\
               </interface></devices></domain>";
    let e = domain_err(xml);
    assert_eq!(e.path(), "domain/devices/interface[1]/address/@bus");
    assert_eq!(
        e.kind(),
        &ErrorKind::OutOfRange {
            value: "0x100".into(),
            ty: "u8"
        }
    );
    // Element text: the vcpu count.
    let e = domain_err("<domain><vcpu>70000</vcpu></domain>");
    assert_eq!(e.path(), "domain/vcpu/text()");
    assert!(matches!(e.kind(), ErrorKind::OutOfRange { .. }), "{e:?}");
    // A volume's capacity (u64 text of a scaled integer).
    let e = StorageVolume::from_xml(
        "<volume><name>v</name><capacity unit='bytes'>18446744073709551616</capacity></volume>",
    )
    .expect_err("overflow");
    assert_eq!(e.path(), "volume/capacity/text()");
    assert!(matches!(e.kind(), ErrorKind::OutOfRange { .. }), "{e:?}");
}

#[test]
fn text_that_is_not_a_number_is_invalid() {
    let e = domain_err("<domain><memory unit='KiB'>lots</memory></domain>");
    assert_eq!(e.path(), "domain/memory/text()");
    assert_eq!(
        e.kind(),
        &ErrorKind::InvalidValue {
            value: "lots".into(),
            ty: "u64"
        }
    );
    let e = domain_err("<domain><iothreads>-1</iothreads></domain>");
    assert_eq!(e.path(), "domain/iothreads");
    assert!(e.is_invalid_value(), "{e:?}");
}

#[test]
fn input_size_is_bounded_before_parsing() {
    let opts = ParseOptions::default().with_max_size(64);
    let xml = format!("<domain><name>{}</name></domain>", "x".repeat(100));
    let e = Domain::from_xml_with(&xml, &opts).expect_err("too large");
    assert_eq!(
        e.kind(),
        &ErrorKind::TooLarge {
            size: xml.len(),
            limit: 64
        }
    );
    assert!(e.is_limit());
    // The default limit is 32 MiB.
    let big = format!(
        "<domain><description>{}</description></domain>",
        "x".repeat(32 << 20)
    );
    assert!(Domain::from_xml(&big).expect_err("too large").is_limit());
}

#[test]
fn nesting_depth_is_bounded() {
    // Untyped nesting (inside <metadata>, which the schema leaves free-form).
    let deep = |n: usize| {
        format!(
            "<domain><metadata>{}{}</metadata></domain>",
            "<x>".repeat(n),
            "</x>".repeat(n)
        )
    };
    let e = Domain::from_xml(&deep(200)).expect_err("too deep");
    assert_eq!(e.kind(), &ErrorKind::TooDeep { limit: 128 });
    assert!(Domain::from_xml(&deep(100)).is_ok());
    // Typed nesting: a backing chain.
    let chain = |n: usize| {
        format!(
            "<domain><devices><disk type='file'>{}{}</disk></devices></domain>",
            "<backingStore type='file'>".repeat(n),
            "</backingStore>".repeat(n)
        )
    };
    let e = Domain::from_xml(&chain(200)).expect_err("too deep");
    assert!(e.is_limit(), "{e:?}");
    assert!(Domain::from_xml(&chain(120)).is_ok());
    // Far deeper than any limit: still an error, not a stack overflow.
    let e = Domain::from_xml(&deep(1_000_000)).expect_err("too deep");
    assert!(e.is_limit());
}

#[test]
fn the_deepest_allowed_document_fits_a_small_stack() {
    // At the default depth limit, typed recursion (the backing chain) must fit the stack of a
    // thread far smaller than the 2 MiB std gives (and the 8 MiB of a main thread).
    let n = 124;
    let xml = format!(
        "<domain><devices><disk type='file'>{}{}</disk></devices></domain>",
        "<backingStore type='file'><format type='qcow2'/>".repeat(n),
        "</backingStore>".repeat(n)
    );
    let t = std::thread::Builder::new()
        .stack_size(1 << 20)
        .spawn(move || {
            let d = Domain::from_xml(&xml).expect("at the limit");
            d.to_xml().len()
        })
        .expect("spawn");
    assert!(t.join().expect("no stack overflow") > 0);
}

#[test]
fn lenient_parsing_keeps_rejected_values_untyped() {
    let xml = "<domain type='vmx'><devices><disk type='floppy-drive'>\
               <address type='pci' bus='0x100'/></disk></devices>\
               <vcpu>lots</vcpu></domain>";
    assert!(Domain::from_xml(xml).is_err());
    let p = Domain::from_xml_with(xml, &ParseOptions::lenient()).expect("lenient");
    let d = p.document;
    assert_eq!(d.r#type, None);
    assert_eq!(
        p.untyped, 4,
        "three attributes and one text value kept untyped"
    );
    assert_eq!(d.extra.unknown_attributes()[0].value, "vmx");
    let out = d.to_xml();
    for s in [
        "type='vmx'",
        "type='floppy-drive'",
        "bus='0x100'",
        "<vcpu>lots</vcpu>",
    ] {
        assert!(out.contains(s), "{s} missing from {out}");
    }
}
