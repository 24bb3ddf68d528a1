//! Constructors and builders beside the generated types: the common documents in a few
//! lines, and accessors for what programs read most. Everything here only fills the generated
//! fields; nothing bypasses the writer, so every string is escaped on output.

use crate::{
    CharDevice, CharDeviceTarget, CharDeviceType, Console, Devices, Disk, DiskDevice, DiskDriver,
    DiskDriverType, DiskSource, DiskTarget, DiskType, Domain, DomainMemory, DomainType, DomainVcpu,
    Features, Interface, InterfaceMac, InterfaceModel, InterfaceSource, InterfaceType, Metadata,
    Os, OsBoot, OsBootDev, OsType, OsTypeValue, ScaledInteger, StoragePool, StoragePoolTarget,
    StoragePoolType, StorageVolume, StorageVolumeBackingStore, VolumeFormat, VolumeFormatType,
    VolumeTarget, XmlElement,
};

/// Bytes per unit of libvirt's `unit` attributes (`KiB`, `M`, `GB`, `bytes`, …), as
/// libvirt's own parser reads them (case-insensitive; `k`/`KiB` are powers of 1024, `KB`
/// of 1000).
pub fn unit_bytes(unit: &str) -> Option<u64> {
    let u = unit.to_ascii_lowercase();
    let (letter, rest) = u.split_at(u.chars().next()?.len_utf8());
    let power = match letter {
        "b" => return matches!(rest, "" | "yte" | "ytes").then_some(1),
        "k" => 1,
        "m" => 2,
        "g" => 3,
        "t" => 4,
        "p" => 5,
        "e" => 6,
        _ => return None,
    };
    let base: u64 = match rest {
        "" | "ib" => 1024,
        "b" => 1000,
        _ => return None,
    };
    base.checked_pow(power)
}

/// `value × unit`, in bytes (`None` on an unknown unit or overflow).
fn scaled(value: Option<u64>, unit: Option<&str>, default_unit: &str) -> Option<u64> {
    value?.checked_mul(unit_bytes(unit.unwrap_or(default_unit))?)
}

impl ScaledInteger {
    /// `n` of `unit` (`"KiB"`, `"MiB"`, `"bytes"`, …).
    pub fn new(n: u64, unit: &str) -> Self {
        Self {
            unit: Some(unit.to_owned()),
            value: Some(n),
            ..Self::default()
        }
    }

    /// `n` bytes (`unit='bytes'`).
    pub fn bytes(n: u64) -> Self {
        Self::new(n, "bytes")
    }

    /// `n` KiB.
    pub fn kib(n: u64) -> Self {
        Self::new(n, "KiB")
    }

    /// `n` MiB.
    pub fn mib(n: u64) -> Self {
        Self::new(n, "MiB")
    }

    /// `n` GiB.
    pub fn gib(n: u64) -> Self {
        Self::new(n, "GiB")
    }

    /// The size in bytes; without a `unit`, the value is in `default_unit` (libvirt's default
    /// differs by element: `KiB` for memory, `bytes` for storage sizes).
    pub fn to_bytes(&self, default_unit: &str) -> Option<u64> {
        scaled(self.value, self.unit.as_deref(), default_unit)
    }
}

impl DomainMemory {
    /// `n` MiB.
    pub fn mib(n: u64) -> Self {
        Self {
            unit: Some("MiB".into()),
            value: Some(n),
            ..Self::default()
        }
    }

    /// The size in bytes (libvirt's default unit here is KiB).
    pub fn to_bytes(&self) -> Option<u64> {
        scaled(self.value, self.unit.as_deref(), "KiB")
    }
}

impl Domain {
    /// A domain of the given type, named, with what a guest needs to boot from its first disk:
    /// an `hvm` OS booting from `hd`, ACPI and APIC. Add memory, vCPUs and devices with the
    /// `with_*` builders.
    pub fn new(kind: DomainType, name: impl Into<String>) -> Self {
        Self {
            r#type: Some(kind),
            name: Some(name.into()),
            os: Some(Os {
                r#type: Some(OsType {
                    value: Some(OsTypeValue::Hvm),
                    ..OsType::default()
                }),
                boots: vec![OsBoot {
                    dev: Some(OsBootDev::Hd),
                    ..OsBoot::default()
                }],
                ..Os::default()
            }),
            features: Some(Features {
                acpi: true,
                apic: Some(crate::FeaturesApic::default()),
                ..Features::default()
            }),
            ..Self::default()
        }
    }

    /// A KVM domain ([`Domain::new`] with `type='kvm'`).
    pub fn kvm(name: impl Into<String>) -> Self {
        Self::new(DomainType::Kvm, name)
    }

    /// A QEMU (TCG, no hardware acceleration) domain.
    pub fn qemu(name: impl Into<String>) -> Self {
        Self::new(DomainType::Qemu, name)
    }

    /// Sets `<memory unit='MiB'>`.
    #[must_use]
    pub fn with_memory_mib(mut self, mib: u64) -> Self {
        self.memory = Some(DomainMemory::mib(mib));
        self
    }

    /// Sets `<vcpu>`.
    #[must_use]
    pub fn with_vcpus(mut self, n: u16) -> Self {
        self.vcpu = Some(DomainVcpu {
            value: Some(n),
            ..DomainVcpu::default()
        });
        self
    }

    /// Sets `<title>`.
    #[must_use]
    pub fn with_title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// Adds an element to `<metadata>` (an application's own namespace; see
    /// [`Domain::metadata_element`]).
    #[must_use]
    pub fn with_metadata(mut self, element: XmlElement) -> Self {
        self.metadata
            .get_or_insert_with(Metadata::default)
            .elements
            .push(element);
        self
    }

    /// Adds a disk.
    #[must_use]
    pub fn with_disk(mut self, disk: Disk) -> Self {
        self.devices_mut().disks.push(disk);
        self
    }

    /// Adds a network interface.
    #[must_use]
    pub fn with_interface(mut self, interface: Interface) -> Self {
        self.devices_mut().interfaces.push(interface);
        self
    }

    /// Adds a serial port on a pseudo-terminal and the console on it (`virsh console`).
    #[must_use]
    pub fn with_serial_console(mut self) -> Self {
        let devices = self.devices_mut();
        devices.serials.push(CharDevice {
            r#type: Some(CharDeviceType::Pty),
            target: Some(CharDeviceTarget {
                port: Some("0".into()),
                ..CharDeviceTarget::default()
            }),
            ..CharDevice::default()
        });
        devices.consoles.push(Console {
            r#type: Some(CharDeviceType::Pty),
            target: Some(CharDeviceTarget {
                r#type: Some(crate::CharDeviceTargetType::Serial),
                port: Some("0".into()),
                ..CharDeviceTarget::default()
            }),
            ..Console::default()
        });
        self
    }

    /// `<devices>`, created if absent.
    pub fn devices_mut(&mut self) -> &mut Devices {
        self.devices.get_or_insert_with(Devices::default)
    }

    /// The disks (none without `<devices>`).
    pub fn disks(&self) -> &[Disk] {
        self.devices.as_ref().map_or(&[], |d| &d.disks)
    }

    /// The network interfaces.
    pub fn interfaces(&self) -> &[Interface] {
        self.devices.as_ref().map_or(&[], |d| &d.interfaces)
    }

    /// The `<metadata>` child in the given namespace (what `virDomainGetMetadata` with
    /// `VIR_DOMAIN_METADATA_ELEMENT` returns), matched by the namespace it declares.
    pub fn metadata_element(&self, namespace: &str) -> Option<&XmlElement> {
        self.metadata
            .as_ref()?
            .elements
            .iter()
            .find(|e| e.declared_namespace(e.prefix()) == Some(namespace))
    }
}

impl Disk {
    fn with(kind: DiskType, source: DiskSource, target_dev: &str) -> Self {
        Self {
            r#type: Some(kind),
            device: Some(DiskDevice::Disk),
            source: Some(source),
            target: Some(DiskTarget {
                dev: Some(target_dev.to_owned()),
                bus: Some(bus_of(target_dev)),
                ..DiskTarget::default()
            }),
            ..Self::default()
        }
    }

    /// A disk backed by an image file on the host, seen by the guest as `target_dev` (`vda`:
    /// virtio, `sda`: SATA, `hda`: IDE — the bus follows the name as virsh's
    /// `attach-disk` picks it). Format raw unless [`Disk::with_format`] says otherwise.
    pub fn file(path: impl Into<String>, target_dev: &str) -> Self {
        Self::with(
            DiskType::File,
            DiskSource {
                file: Some(path.into()),
                ..DiskSource::default()
            },
            target_dev,
        )
    }

    /// A disk backed by a host block device.
    pub fn block(dev: impl Into<String>, target_dev: &str) -> Self {
        Self::with(
            DiskType::Block,
            DiskSource {
                dev: Some(dev.into()),
                ..DiskSource::default()
            },
            target_dev,
        )
    }

    /// A disk backed by a volume of a storage pool.
    pub fn volume(pool: impl Into<String>, volume: impl Into<String>, target_dev: &str) -> Self {
        Self::with(
            DiskType::Volume,
            DiskSource {
                pool: Some(pool.into()),
                volume: Some(volume.into()),
                ..DiskSource::default()
            },
            target_dev,
        )
    }

    /// Sets the image format (`<driver name='qemu' type='…'/>`).
    #[must_use]
    pub fn with_format(mut self, format: DiskDriverType) -> Self {
        let driver = self.driver.get_or_insert_with(DiskDriver::default);
        driver.name = Some("qemu".into());
        driver.r#type = Some(format);
        self
    }

    /// Marks the disk read-only.
    #[must_use]
    pub fn read_only(mut self) -> Self {
        self.readonly = true;
        self
    }

    /// Makes it a CD-ROM (read-only).
    #[must_use]
    pub fn cdrom(mut self) -> Self {
        self.device = Some(DiskDevice::Cdrom);
        self.readonly = true;
        self
    }

    /// The guest device name (`<target dev>`).
    pub fn target_dev(&self) -> Option<&str> {
        self.target.as_ref()?.dev.as_deref()
    }

    /// Where the data comes from, as `virsh domblklist` names it: the source's file, block
    /// device, directory, network name, volume or path (the first present; a disk of one
    /// type has one of them).
    pub fn source_name(&self) -> Option<String> {
        let s = self.source.as_ref()?;
        [&s.file, &s.dev, &s.dir, &s.name, &s.volume, &s.path]
            .into_iter()
            .find_map(Clone::clone)
    }
}

/// The bus virsh picks for a target name.
fn bus_of(dev: &str) -> crate::DiskTargetBus {
    use crate::DiskTargetBus as B;
    match dev.get(..2) {
        Some("sd") => B::Sata,
        Some("hd") => B::Ide,
        Some("xv") => B::Xen,
        Some("fd") => B::Fdc,
        _ => B::Virtio,
    }
}

impl Interface {
    fn with(kind: InterfaceType, source: Option<InterfaceSource>) -> Self {
        Self {
            r#type: Some(kind),
            source,
            model: Some(InterfaceModel {
                r#type: Some("virtio".into()),
                ..InterfaceModel::default()
            }),
            ..Self::default()
        }
    }

    /// A virtio NIC on a libvirt virtual network (`default`, …).
    pub fn network(name: impl Into<String>) -> Self {
        Self::with(
            InterfaceType::Network,
            Some(InterfaceSource {
                network: Some(name.into()),
                ..InterfaceSource::default()
            }),
        )
    }

    /// A virtio NIC on a host bridge.
    pub fn bridge(name: impl Into<String>) -> Self {
        Self::with(
            InterfaceType::Bridge,
            Some(InterfaceSource {
                bridge: Some(name.into()),
                ..InterfaceSource::default()
            }),
        )
    }

    /// A virtio NIC with user-mode networking (no privileges needed).
    pub fn user() -> Self {
        Self::with(InterfaceType::User, None)
    }

    /// Sets the MAC address.
    #[must_use]
    pub fn with_mac(mut self, mac: impl Into<String>) -> Self {
        self.mac = Some(InterfaceMac {
            address: Some(mac.into()),
            ..InterfaceMac::default()
        });
        self
    }

    /// Sets the device model (`virtio`, `e1000e`, …).
    #[must_use]
    pub fn with_model(mut self, model: impl Into<String>) -> Self {
        self.model = Some(InterfaceModel {
            r#type: Some(model.into()),
            ..InterfaceModel::default()
        });
        self
    }

    /// The source as `virsh domiflist` names it: the source's network, bridge, device,
    /// name or path (the first present, in the order libvirt writes them).
    pub fn source_name(&self) -> Option<&str> {
        let s = self.source.as_ref()?;
        [&s.network, &s.bridge, &s.dev, &s.name, &s.path]
            .into_iter()
            .find_map(Option::as_deref)
    }
}

impl StorageVolume {
    /// A volume of `capacity` bytes, nothing preallocated.
    pub fn new(name: impl Into<String>, capacity: u64) -> Self {
        Self {
            name: Some(name.into()),
            capacity: Some(ScaledInteger::bytes(capacity)),
            allocation: Some(ScaledInteger {
                value: Some(0),
                ..ScaledInteger::default()
            }),
            ..Self::default()
        }
    }

    /// Sets the on-disk format (`<target><format type='…'/>`).
    #[must_use]
    pub fn with_format(mut self, format: VolumeFormatType) -> Self {
        self.target.get_or_insert_with(VolumeTarget::default).format = Some(VolumeFormat {
            r#type: Some(format),
            ..VolumeFormat::default()
        });
        self
    }

    /// Backs the volume by another file (copy-on-write overlays).
    #[must_use]
    pub fn with_backing(mut self, path: impl Into<String>, format: VolumeFormatType) -> Self {
        self.backing_store = Some(StorageVolumeBackingStore {
            path: Some(path.into()),
            format: Some(VolumeFormat {
                r#type: Some(format),
                ..VolumeFormat::default()
            }),
            ..StorageVolumeBackingStore::default()
        });
        self
    }

    /// The capacity in bytes.
    pub fn capacity_bytes(&self) -> Option<u64> {
        self.capacity.as_ref()?.to_bytes("bytes")
    }
}

impl StoragePool {
    /// A directory pool at `path`.
    pub fn dir(name: impl Into<String>, path: impl Into<String>) -> Self {
        Self {
            r#type: Some(StoragePoolType::Dir),
            name: Some(name.into()),
            target: Some(StoragePoolTarget {
                path: Some(path.into()),
                ..StoragePoolTarget::default()
            }),
            ..Self::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units() {
        assert_eq!(unit_bytes("KiB"), Some(1024));
        assert_eq!(unit_bytes("k"), Some(1024));
        assert_eq!(unit_bytes("KB"), Some(1000));
        assert_eq!(unit_bytes("bytes"), Some(1));
        assert_eq!(unit_bytes("b"), Some(1));
        assert_eq!(unit_bytes("G"), Some(1 << 30));
        assert_eq!(unit_bytes("EiB"), Some(1 << 60));
        assert_eq!(unit_bytes("ZiB"), None);
        assert_eq!(unit_bytes(""), None);
        assert_eq!(ScaledInteger::new(3, "M").to_bytes("KiB"), Some(3 << 20));
        assert_eq!(
            ScaledInteger {
                value: Some(2),
                ..ScaledInteger::default()
            }
            .to_bytes("KiB"),
            Some(2048)
        );
        assert_eq!(ScaledInteger::new(u64::MAX, "KiB").to_bytes("b"), None);
    }
}
