//! Domain and volume XML, produced with a real XML writer: every string we did not write
//! ourselves (display names, pool names, paths, bridge names) is escaped by the writer.
//!
//! The display name only ever goes into `<title>` and our metadata; the domain's `<name>`
//! is `<entry>-<uid>`, two identifiers, so it is safe as a file name on the host.

use std::io;

use quick_xml::Writer;
use quick_xml::events::BytesText;

use crate::config::{DomainType, NetworkConfig};
use crate::meta::Meta;

/// Everything a domain definition needs.
#[derive(Debug, Clone)]
pub struct DomainSpec<'a> {
    /// `<name>`: `<entry>-<uid>`.
    pub name: &'a str,
    /// `<title>`: the display name.
    pub title: &'a str,
    /// `kvm` or `qemu`.
    pub domain_type: DomainType,
    /// Memory in MiB.
    pub memory_mib: u64,
    /// Virtual CPUs.
    pub vcpus: u32,
    /// The storage pool holding both volumes.
    pub pool: &'a str,
    /// The qcow2 overlay (boot disk).
    pub disk_volume: &'a str,
    /// The `NoCloud` seed (raw, read-only).
    pub seed_volume: &'a str,
    /// The network attachment.
    pub network: &'a NetworkConfig,
    /// Our metadata.
    pub meta: &'a Meta,
    /// An explicit host path for the guest agent socket (`None`: libvirt picks).
    pub agent_socket: Option<&'a str>,
    /// A host file the serial console is written to (`None`: a pty console).
    pub serial_log: Option<&'a str>,
}

type W = Writer<Vec<u8>>;

fn text(w: &mut W, name: &str, value: &str) -> io::Result<()> {
    w.create_element(name)
        .write_text_content(BytesText::new(value))?;
    Ok(())
}

/// `<name a="…" …/>`, attribute values escaped by the writer.
fn empty(w: &mut W, name: &str, attrs: &[(&str, &str)]) -> io::Result<()> {
    w.create_element(name)
        .with_attributes(attrs.iter().copied())
        .write_empty()?;
    Ok(())
}

fn volume_disk(
    w: &mut W,
    pool: &str,
    volume: &str,
    format: &str,
    dev: &str,
    readonly: bool,
) -> io::Result<()> {
    w.create_element("disk")
        .with_attribute(("type", "volume"))
        .with_attribute(("device", "disk"))
        .write_inner_content(|w| {
            empty(w, "driver", &[("name", "qemu"), ("type", format)])?;
            empty(w, "source", &[("pool", pool), ("volume", volume)])?;
            empty(w, "target", &[("dev", dev), ("bus", "virtio")])?;
            if readonly {
                empty(w, "readonly", &[])?;
            }
            Ok(())
        })?;
    Ok(())
}

/// The network interface: one virtio NIC without an option ROM (guests boot from disk;
/// iPXE only costs boot time). Port forwards of user networking are not part of the XML:
/// libvirt 9.0 rejects `<backend type='passt'/>` (with its `<portForward>`), so they are
/// added through the monitor after start ([`crate::monitor`]); libvirt names this NIC's
/// backend `hostnet0`.
fn interface(w: &mut W, network: &NetworkConfig) -> io::Result<()> {
    let (kind, source): (&str, Option<(&str, &str)>) = match network {
        NetworkConfig::User { .. } => ("user", None),
        NetworkConfig::Bridge { name } => ("bridge", Some(("bridge", name.as_str()))),
        NetworkConfig::Network { name } => ("network", Some(("network", name.as_str()))),
    };
    w.create_element("interface")
        .with_attribute(("type", kind))
        .write_inner_content(|w| {
            if let Some(attr) = source {
                empty(w, "source", &[attr])?;
            }
            empty(w, "model", &[("type", "virtio")])?;
            empty(w, "rom", &[("enabled", "no")])?;
            Ok(())
        })?;
    Ok(())
}

/// Run `f` on a writer over a `Vec` and return the text: writing to memory cannot fail,
/// and quick-xml emits UTF-8.
pub(crate) fn render(
    mut w: Writer<Vec<u8>>,
    f: impl FnOnce(&mut Writer<Vec<u8>>) -> io::Result<()>,
) -> String {
    f(&mut w).expect("writing to a Vec cannot fail");
    String::from_utf8(w.into_inner()).expect("the writer emits UTF-8")
}

/// The domain XML.
pub fn domain_xml(d: &DomainSpec<'_>) -> String {
    render(Writer::new_with_indent(Vec::new(), b' ', 2), |w| {
        w.create_element("domain")
            .with_attribute(("type", d.domain_type.as_str()))
            .write_inner_content(|w| {
                text(w, "name", d.name)?;
                text(w, "title", d.title)?;
                w.create_element("metadata")
                    .write_inner_content(|w| d.meta.write(w))?;
                w.create_element("memory")
                    .with_attribute(("unit", "MiB"))
                    .write_text_content(BytesText::new(&d.memory_mib.to_string()))?;
                text(w, "vcpu", &d.vcpus.to_string())?;
                w.create_element("os").write_inner_content(|w| {
                    w.create_element("type")
                        .with_attribute(("arch", "x86_64"))
                        .write_text_content(BytesText::new("hvm"))?;
                    empty(w, "boot", &[("dev", "hd")])?;
                    Ok(())
                })?;
                w.create_element("features").write_inner_content(|w| {
                    empty(w, "acpi", &[])?;
                    empty(w, "apic", &[])?;
                    Ok(())
                })?;
                text(w, "on_poweroff", "destroy")?;
                text(w, "on_reboot", "restart")?;
                text(w, "on_crash", "destroy")?;
                w.create_element("devices").write_inner_content(|w| {
                    volume_disk(w, d.pool, d.disk_volume, "qcow2", "vda", false)?;
                    volume_disk(w, d.pool, d.seed_volume, "raw", "vdb", true)?;
                    interface(w, d.network)?;
                    w.create_element("channel")
                        .with_attribute(("type", "unix"))
                        .write_inner_content(|w| {
                            if let Some(path) = d.agent_socket {
                                empty(w, "source", &[("mode", "bind"), ("path", path)])?;
                            }
                            empty(
                                w,
                                "target",
                                &[("type", "virtio"), ("name", "org.qemu.guest_agent.0")],
                            )?;
                            Ok(())
                        })?;
                    if let Some(path) = d.serial_log {
                        // libvirt adds the matching <console> (serial port 0) itself.
                        w.create_element("serial")
                            .with_attribute(("type", "file"))
                            .write_inner_content(|w| {
                                empty(w, "source", &[("path", path), ("append", "off")])?;
                                empty(w, "target", &[("port", "0")])?;
                                Ok(())
                            })?;
                    } else {
                        empty(w, "serial", &[("type", "pty")])?;
                        empty(w, "console", &[("type", "pty")])?;
                    }
                    Ok(())
                })?;
                Ok(())
            })?;
        Ok(())
    })
}

/// What a new volume is backed by.
#[derive(Debug, Clone, Copy)]
pub struct Backing<'a> {
    /// Path of the backing file on the host.
    pub path: &'a str,
    /// Its format (`raw` or `qcow2`).
    pub format: &'a str,
}

/// Volume XML: `capacity` bytes, nothing preallocated, `format` on disk, optionally backed.
pub fn volume_xml(name: &str, capacity: u64, format: &str, backing: Option<Backing<'_>>) -> String {
    render(Writer::new(Vec::new()), |w| {
        w.create_element("volume").write_inner_content(|w| {
            text(w, "name", name)?;
            w.create_element("capacity")
                .with_attribute(("unit", "bytes"))
                .write_text_content(BytesText::new(&capacity.to_string()))?;
            text(w, "allocation", "0")?;
            w.create_element("target").write_inner_content(|w| {
                empty(w, "format", &[("type", format)])?;
                Ok(())
            })?;
            if let Some(b) = backing {
                w.create_element("backingStore").write_inner_content(|w| {
                    text(w, "path", b.path)?;
                    empty(w, "format", &[("type", b.format)])?;
                    Ok(())
                })?;
            }
            Ok(())
        })?;
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::SystemTime;

    use egress_provider::Identifier;

    #[test]
    fn hostile_strings_are_escaped() {
        let hostile = r#"x</title><devices><disk type='file'/></devices><title>"&'"#;
        let meta = Meta {
            uid: Identifier::new("u").unwrap(),
            name: hostile.into(),
            created_at: SystemTime::UNIX_EPOCH,
            entry: "e".into(),
            image: "i".into(),
            tags: std::collections::BTreeSet::new(),
        };
        let net = NetworkConfig::Bridge {
            name: "br0' evil='1".into(),
        };
        let xml = domain_xml(&DomainSpec {
            name: "e-u",
            title: hostile,
            domain_type: DomainType::Kvm,
            memory_mib: 512,
            vcpus: 2,
            pool: "p<&>",
            disk_volume: "disk-e-u.qcow2",
            seed_volume: "seed-e-u.img",
            network: &net,
            meta: &meta,
            agent_socket: Some("/run/x/<a>.agent"),
            serial_log: Some("/var/log/e/<s>.log"),
        });
        assert!(xml.contains("path=\"/run/x/&lt;a&gt;.agent\""), "{xml}");
        assert!(
            xml.contains("<serial type=\"file\">")
                && xml.contains("path=\"/var/log/e/&lt;s&gt;.log\""),
            "{xml}"
        );
        assert!(!xml.contains("<devices><disk type='file'/>"), "{xml}");
        assert!(!xml.contains("evil='1'"), "{xml}");
        assert!(xml.contains("&lt;/title&gt;"), "{xml}");
        assert!(xml.contains("p&lt;&amp;&gt;"), "{xml}");
        // Well-formed, and the title reads back verbatim.
        let mut r = quick_xml::Reader::from_str(&xml);
        let mut in_title = false;
        let mut title = None;
        let mut depth = 0i32;
        loop {
            match r.read_event().unwrap() {
                quick_xml::events::Event::Eof => break,
                quick_xml::events::Event::Start(e) => {
                    depth += 1;
                    in_title = e.name().as_ref() == b"title";
                }
                quick_xml::events::Event::End(_) => {
                    depth -= 1;
                    in_title = false;
                }
                quick_xml::events::Event::Text(t) if in_title => {
                    title = Some(t.unescape().unwrap().into_owned());
                }
                _ => {}
            }
        }
        assert_eq!(depth, 0);
        assert_eq!(title.as_deref(), Some(hostile));
        let m = xml.find("<metadata>").unwrap();
        let end = xml.find("</metadata>").unwrap();
        let back = Meta::parse(&xml[m + "<metadata>".len()..end]).unwrap();
        assert_eq!(back.name, hostile);
    }

    #[test]
    fn volume_with_backing() {
        let xml = volume_xml(
            "disk-e-u.qcow2",
            1 << 20,
            "qcow2",
            Some(Backing {
                path: "/p/base-e-k.raw",
                format: "raw",
            }),
        );
        assert_eq!(
            xml,
            "<volume><name>disk-e-u.qcow2</name><capacity unit=\"bytes\">1048576</capacity>\
             <allocation>0</allocation><target><format type=\"qcow2\"/></target>\
             <backingStore><path>/p/base-e-k.raw</path><format type=\"raw\"/></backingStore></volume>"
        );
    }
}
