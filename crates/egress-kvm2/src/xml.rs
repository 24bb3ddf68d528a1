//! Domain and volume XML, built as `libvirt-xml` documents: every string we did not write
//! ourselves (display names, pool names, paths, bridge names) is escaped by its writer.
//!
//! The display name only ever goes into `<title>` and our metadata; the domain's `<name>`
//! is `<entry>-<uid>`, two identifiers, so it is safe as a file name on the host.

use egress_provider::ImageFormat;
use libvirt_xml::{
    Channel, ChannelTarget, ChannelTargetType, CharDevice, CharDeviceTarget, CharDeviceType,
    ConsoleSource, Disk, DiskDriverType, Domain, DomainType as XmlDomainType, Interface,
    LifecycleAction, Rom, StorageVolume, VolumeFormatType, YesNo,
};

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

impl DomainType {
    /// The domain's `type` attribute.
    pub(crate) fn xml(self) -> XmlDomainType {
        match self {
            Self::Kvm => XmlDomainType::Kvm,
            Self::Qemu => XmlDomainType::Qemu,
        }
    }
}

/// A volume format in libvirt's terms.
pub(crate) fn volume_format(f: ImageFormat) -> VolumeFormatType {
    match f {
        ImageFormat::Raw => VolumeFormatType::Raw,
        ImageFormat::Qcow2 => VolumeFormatType::Qcow2,
        // A format the contract gains later: libvirt names formats as the contract does.
        other => other.as_str().parse().unwrap_or(VolumeFormatType::Raw),
    }
}

/// The network interface: one virtio NIC without an option ROM (guests boot from disk;
/// iPXE only costs boot time). Port forwards of user networking are not part of the XML:
/// libvirt 9.0 rejects `<backend type='passt'/>` (with its `<portForward>`), so they are
/// added through the monitor after start ([`crate::monitor`]); libvirt names this NIC's
/// backend `hostnet0`.
fn interface(network: &NetworkConfig) -> Interface {
    let mut nic = match network {
        NetworkConfig::User { .. } => Interface::user(),
        NetworkConfig::Bridge { name } => Interface::bridge(name.as_str()),
        NetworkConfig::Network { name } => Interface::network(name.as_str()),
    };
    nic.rom = Some(Rom {
        enabled: Some(YesNo::No),
        ..Rom::default()
    });
    nic
}

/// The domain XML.
pub fn domain_xml(d: &DomainSpec<'_>) -> String {
    let vcpus = u16::try_from(d.vcpus).unwrap_or(u16::MAX);
    let mut dom = Domain::new(d.domain_type.xml(), d.name)
        .with_title(d.title)
        .with_metadata(d.meta.to_element())
        .with_memory_mib(d.memory_mib)
        .with_vcpus(vcpus)
        .with_disk(Disk::volume(d.pool, d.disk_volume, "vda").with_format(DiskDriverType::Qcow2))
        .with_disk(
            Disk::volume(d.pool, d.seed_volume, "vdb")
                .with_format(DiskDriverType::Raw)
                .read_only(),
        )
        .with_interface(interface(d.network));
    if let Some(os) = dom.os.as_mut().and_then(|os| os.r#type.as_mut()) {
        os.arch = Some(libvirt_xml::OsTypeArch::X86_64);
    }
    dom.on_poweroff = Some(LifecycleAction::Destroy);
    dom.on_reboot = Some(LifecycleAction::Restart);
    dom.on_crash = Some(libvirt_xml::CrashAction::Destroy);
    let devices = dom.devices_mut();
    devices.channels.push(Channel {
        r#type: Some(CharDeviceType::Unix),
        sources: d
            .agent_socket
            .map(|path| ConsoleSource {
                mode: Some("bind".into()),
                path: Some(path.into()),
                ..ConsoleSource::default()
            })
            .into_iter()
            .collect(),
        target: Some(ChannelTarget {
            r#type: Some(ChannelTargetType::Virtio),
            name: Some("org.qemu.guest_agent.0".into()),
            ..ChannelTarget::default()
        }),
        ..Channel::default()
    });
    match d.serial_log {
        // libvirt adds the matching <console> (serial port 0) itself.
        Some(path) => devices.serials.push(CharDevice {
            r#type: Some(CharDeviceType::File),
            sources: vec![ConsoleSource {
                path: Some(path.into()),
                append: Some(libvirt_xml::OnOff::Off),
                ..ConsoleSource::default()
            }],
            target: Some(CharDeviceTarget {
                port: Some("0".into()),
                ..CharDeviceTarget::default()
            }),
            ..CharDevice::default()
        }),
        None => dom = dom.with_serial_console(),
    }
    dom.to_xml()
}

/// What a new volume is backed by.
#[derive(Debug, Clone, Copy)]
pub struct Backing<'a> {
    /// Path of the backing file on the host.
    pub path: &'a str,
    /// Its format.
    pub format: ImageFormat,
}

/// Volume XML: `capacity` bytes, nothing preallocated, `format` on disk, optionally backed.
pub fn volume_xml(
    name: &str,
    capacity: u64,
    format: ImageFormat,
    backing: Option<Backing<'_>>,
) -> String {
    let mut vol = StorageVolume::new(name, capacity).with_format(volume_format(format));
    if let Some(b) = backing {
        vol = vol.with_backing(b.path, volume_format(b.format));
    }
    vol.to_xml()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::SystemTime;

    use egress_provider::Identifier;
    use libvirt_xml::fuzzing::assert_schema_valid;

    fn meta(name: &str) -> Meta {
        Meta {
            uid: Identifier::new("u").unwrap(),
            name: name.into(),
            created_at: SystemTime::UNIX_EPOCH,
            entry: "e".into(),
            image: "i".into(),
            tags: std::collections::BTreeSet::new(),
        }
    }

    fn spec<'a>(meta: &'a Meta, net: &'a NetworkConfig, title: &'a str) -> DomainSpec<'a> {
        DomainSpec {
            name: "e-u",
            title,
            domain_type: DomainType::Kvm,
            memory_mib: 512,
            vcpus: 2,
            pool: "p<&>",
            disk_volume: "disk-e-u.qcow2",
            seed_volume: "seed-e-u.img",
            network: net,
            meta,
            agent_socket: Some("/run/x/<a>.agent"),
            serial_log: Some("/var/log/e/<s>.log"),
        }
    }

    #[test]
    fn hostile_strings_are_escaped() {
        let hostile = r#"x</title><devices><disk type='file'/></devices><title>"&'"#;
        let meta = meta(hostile);
        let net = NetworkConfig::Bridge {
            name: "br0' evil='1".into(),
        };
        let xml = domain_xml(&spec(&meta, &net, hostile));
        assert!(xml.contains("path='/run/x/&lt;a&gt;.agent'"), "{xml}");
        assert!(
            xml.contains("<serial type='file'>") && xml.contains("path='/var/log/e/&lt;s&gt;.log'"),
            "{xml}"
        );
        assert!(!xml.contains("<devices><disk type='file'/>"), "{xml}");
        assert!(!xml.contains("evil='1'"), "{xml}");
        assert!(xml.contains("&lt;/title&gt;"), "{xml}");
        assert!(xml.contains("p&lt;&amp;&gt;"), "{xml}");
        // Well-formed, and every string reads back verbatim.
        let back = Domain::from_xml(&xml).expect("parses");
        assert_eq!(back.title.as_deref(), Some(hostile));
        assert_eq!(
            back.interfaces()[0]
                .source
                .as_ref()
                .and_then(|s| s.bridge.as_deref()),
            Some("br0' evil='1")
        );
        let m = back
            .metadata_element(crate::meta::NAMESPACE)
            .expect("our metadata");
        assert_eq!(Meta::parse(&m.to_xml()).unwrap().name, hostile);
    }

    #[test]
    fn domains_volumes_and_leases_are_valid_for_libvirt() {
        let meta = meta("a display name");
        for net in [
            NetworkConfig::default(),
            NetworkConfig::Bridge { name: "br0".into() },
            NetworkConfig::Network {
                name: "default".into(),
            },
        ] {
            let mut s = spec(&meta, &net, "t");
            s.pool = "default";
            assert_schema_valid(&domain_xml(&s), "domain.rng");
            s.agent_socket = None;
            s.serial_log = None;
            s.domain_type = DomainType::Qemu;
            assert_schema_valid(&domain_xml(&s), "domain.rng");
        }
        assert_schema_valid(
            &volume_xml("v", 1 << 30, ImageFormat::Raw, None),
            "storagevol.rng",
        );
        assert_schema_valid(
            &volume_xml(
                "disk-e-u.qcow2",
                1 << 20,
                ImageFormat::Qcow2,
                Some(Backing {
                    path: "/p/base-e-k.raw",
                    format: ImageFormat::Raw,
                }),
            ),
            "storagevol.rng",
        );
    }

    #[test]
    fn volume_with_backing() {
        let xml = volume_xml(
            "disk-e-u.qcow2",
            1 << 20,
            ImageFormat::Qcow2,
            Some(Backing {
                path: "/p/base-e-k.raw",
                format: ImageFormat::Raw,
            }),
        );
        assert_eq!(
            xml,
            "<volume>\n  <name>disk-e-u.qcow2</name>\n  <capacity unit='bytes'>1048576</capacity>\n  \
             <allocation>0</allocation>\n  <target>\n    <format type='qcow2'/>\n  </target>\n  \
             <backingStore>\n    <path>/p/base-e-k.raw</path>\n    <format type='raw'/>\n  </backingStore>\n</volume>\n"
        );
    }
}
