//! Round-trip properties on documents written here (libvirt's corpus is in `corpus.rs`).

use libvirt_xml::{Domain, fuzzing};

/// Parse → write → parse → write: the same text the second time, and the same tree as the
/// input.
fn stable(xml: &str) -> String {
    let out = Domain::from_xml(xml).expect("parses").to_xml();
    let again = Domain::from_xml(&out).expect("output parses").to_xml();
    assert_eq!(out, again, "not a fixpoint for {xml:?}");
    fuzzing::same_tree(xml, &out).unwrap_or_else(|e| panic!("{e}\n{xml}\n{out}"));
    out
}

#[test]
fn stray_text_in_an_element_without_text_is_kept_and_stable() {
    // Found by the fuzzer: the layout written around stray text grew on every round trip.
    let out = stable(
        "<domain><devices><video>\n  stray  <model type='virtio'/>\n</video></devices></domain>",
    );
    assert!(out.contains("stray"), "{out}");
    fuzzing::check(
        b"<domain><devices><video>\n\0\0  <model type='virtio'/>\n</video></devices></domain>",
    );
}

#[test]
fn text_beside_child_elements_gets_no_layout() {
    // `<backend>` holds a path as text, or child elements; both at once must not absorb the
    // writer's indentation into the text.
    let out = stable(
        "<domain><devices><rng model='virtio'><backend model='random'>/dev/urandom<source mode='bind'/></backend></rng></devices></domain>",
    );
    assert!(
        out.contains("<backend model='random'>/dev/urandom<source mode='bind'/></backend>"),
        "{out}"
    );
    stable(
        "<domain><os><nvram template='/t'> /var/nvram <source file='/x'/> </nvram></os></domain>",
    );
}

#[test]
fn spellings_survive_and_changed_values_are_canonical() {
    let xml = "<domain><devices><disk type=' file ' device='disk'><target dev='vda' bus='virtio'/><address type='pci' domain='0x0000' bus='0x00' slot='0x1f' function='0x7'/></disk></devices><vcpu current='+1'>02</vcpu></domain>";
    let out = stable(xml);
    for s in [
        "type=' file '",
        "bus='0x00'",
        "slot='0x1f'",
        "function='0x7'",
        "current='+1'",
        ">02<",
    ] {
        assert!(out.contains(s), "{s} missing: {out}");
    }
    let mut d = Domain::from_xml(xml).expect("parses");
    let addr = d.devices_mut().disks[0].address.as_mut().expect("address");
    assert_eq!(
        (addr.bus, addr.slot, addr.function),
        (Some(0), Some(31), Some(7))
    );
    addr.slot = Some(30);
    let out = d.to_xml();
    assert!(
        out.contains("slot='30'") && out.contains("bus='0x00'"),
        "{out}"
    );
}

#[test]
fn unknown_content_keeps_its_place_and_namespaces() {
    let xml = "<domain type='kvm' xmlns:q='http://libvirt.org/schemas/domain/qemu/1.0' future='x'>\
               <!-- before name --><name>n</name><?pi x?>\
               <devices><disk type='file'><shiny a='1'><b/></shiny><target dev='vda'/></disk></devices>\
               <q:commandline><q:arg value='-S'/></q:commandline></domain>";
    let p = Domain::from_xml_with(xml, &libvirt_xml::ParseOptions::default()).expect("parses");
    assert_eq!(p.untyped, 4, "future=, <shiny>, its a=, <b>");
    let d = p.document;
    // The qemu namespace is typed even under another prefix, and written back with it.
    assert_eq!(d.qemu_commandline.as_ref().map(|c| c.args.len()), Some(1));
    let out = stable(xml);
    assert!(
        out.contains("<q:commandline>") && out.contains("<q:arg value='-S'/>"),
        "{out}"
    );
    let comment = out.find("<!-- before name -->").expect("comment");
    assert!(comment < out.find("<name>").expect("name"), "{out}");
    assert!(out.find("<shiny a='1'>").expect("shiny") < out.find("<target").expect("target"));
}

#[test]
fn a_namespace_element_built_in_code_declares_its_namespace() {
    let mut d = Domain::kvm("n");
    d.qemu_commandline = Some(libvirt_xml::QemuCommandline {
        args: vec![libvirt_xml::QemuCommandlineArg {
            value: Some("-no-hpet".into()),
            ..Default::default()
        }],
        ..Default::default()
    });
    let out = d.to_xml();
    assert!(
        out.contains("<qemu:commandline xmlns:qemu='http://libvirt.org/schemas/domain/qemu/1.0'>"),
        "{out}"
    );
    assert_eq!(
        Domain::from_xml(&out).expect("parses").qemu_commandline,
        d.qemu_commandline
    );
}

#[test]
fn text_in_several_runs_between_children_stays_in_place() {
    // Found by the fuzzer: a value's text split by child elements was joined into one value
    // (or, rejected when lenient, one text node) written before the children, and the layout
    // the writer added then became part of it.
    let xml = "<domain><devices><rng model='virtio'><backend model='random'>/dev/a<source mode='bind'/>/dev/b</backend></rng></devices></domain>";
    let p = Domain::from_xml_with(xml, &libvirt_xml::ParseOptions::default()).expect("parses");
    assert_eq!(p.untyped, 1, "the split text is untyped");
    stable(xml);
    fuzzing::check(
        b"<domain><currentMemory unit='KiB'>21913s>\n  <emulator>/e</emulator>\n  @x/>\n  <hub type='usb'/>\n  6</currentMemory></domain>",
    );
    // One run beside children is still the typed value, whatever the layout around it.
    let d = Domain::from_xml("<domain><os><nvram template='/t'>\n  /var/n\n  <source file='/x'/>\n</nvram></os></domain>")
        .expect("parses");
    assert_eq!(
        d.os.and_then(|o| o.nvram).and_then(|n| n.value).as_deref(),
        Some("\n  /var/n\n  ")
    );
}
