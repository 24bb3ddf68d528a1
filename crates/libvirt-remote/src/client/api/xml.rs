//! Typed XML for the object API (feature `xml`): the handles' XML methods with
//! [`libvirt_xml`] documents in place of strings — a domain's description as a
//! [`libvirt_xml::Domain`], a domain defined from one, and the same for networks, storage pools
//! and volumes, node devices, secrets, snapshots, and the host's capabilities.
//!
//! Each method is the string method of the same object plus parsing or writing; descriptions
//! from the daemon are parsed leniently ([`libvirt_xml::ParseOptions::lenient`]): a value a
//! newer libvirt added stays in the document, untyped, instead of failing the call, and is
//! written back when the document is defined again.
//!
//! ```no_run
//! # async fn f() -> Result<(), Box<dyn std::error::Error>> {
//! use libvirt_remote::Connect;
//! use libvirt_xml::{Disk, Domain, Interface};
//!
//! let conn = Connect::open("qemu:///session").await?;
//! let dom = conn
//!     .define_domain(&Domain::kvm("web-1").with_memory_mib(512).with_interface(Interface::user()))
//!     .await?;
//! let mut doc = dom.xml_desc_typed(Default::default()).await?;
//! doc = doc.with_disk(Disk::file("/var/lib/libvirt/images/data.raw", "vdb"));
//! conn.define_domain(&doc).await?;
//! # Ok(()) }
//! ```

use crate::client::Error;
use crate::client::handles::{
    Connect, Domain, DomainSnapshot, Network, NodeDevice, Secret, StoragePool, StorageVol,
};
use crate::conn::ErrorPredicates;
use crate::conn::error::error_predicates;
use crate::proto::RemoteError;
use crate::proto::procs::domain::{DomainCreateFlags, DomainXmlFlags};
use crate::proto::procs::network::NetworkXmlFlags;
use crate::proto::procs::snapshot::{DomainSnapshotCreateFlags, DomainSnapshotXmlFlags};
use crate::proto::procs::storage::{
    StoragePoolCreateFlags, StoragePoolDefineFlags, StorageVolCreateFlags, StorageXmlFlags,
};
use libvirt_xml::{Document, ParseOptions};

/// A typed XML call that failed: the call itself, or the document the daemon sent.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum XmlError {
    /// The call failed.
    #[error(transparent)]
    Call(#[from] Error),
    /// The daemon's document could not be read (not well-formed, or over a limit).
    #[error("reading the daemon's XML: {0}")]
    Parse(libvirt_xml::Error),
}

impl ErrorPredicates for XmlError {
    fn remote(&self) -> Option<&RemoteError> {
        match self {
            Self::Call(e) => e.remote(),
            Self::Parse(_) => None,
        }
    }

    fn is_connection_dead(&self) -> bool {
        matches!(self, Self::Call(e) if e.is_connection_dead())
    }

    fn is_auth_failed_here(&self) -> bool {
        matches!(self, Self::Call(e) if e.is_auth_failed_here())
    }
}

error_predicates!(XmlError);

fn parse<T: Document>(xml: &str) -> Result<T, XmlError> {
    T::from_xml_with(xml, &ParseOptions::lenient())
        .map(|p| p.document)
        .map_err(XmlError::Parse)
}

impl Connect {
    /// `virDomainDefineXML` from a typed document.
    pub async fn define_domain(&self, doc: &libvirt_xml::Domain) -> Result<Domain, Error> {
        self.define_domain_xml(&doc.to_xml()).await
    }

    /// `virDomainCreateXML` (a transient domain, started) from a typed document.
    pub async fn create_domain(
        &self,
        doc: &libvirt_xml::Domain,
        flags: DomainCreateFlags,
    ) -> Result<Domain, Error> {
        self.create_domain_xml(&doc.to_xml(), flags).await
    }

    /// `virNetworkDefineXML` from a typed document.
    pub async fn define_network(&self, doc: &libvirt_xml::Network) -> Result<Network, Error> {
        self.define_network_xml(&doc.to_xml()).await
    }

    /// `virNetworkCreateXML` (a transient network, started) from a typed document.
    pub async fn create_network(&self, doc: &libvirt_xml::Network) -> Result<Network, Error> {
        self.create_network_xml(&doc.to_xml()).await
    }

    /// `virStoragePoolDefineXML` from a typed document.
    pub async fn define_storage_pool(
        &self,
        doc: &libvirt_xml::StoragePool,
        flags: StoragePoolDefineFlags,
    ) -> Result<StoragePool, Error> {
        self.define_storage_pool_xml(&doc.to_xml(), flags).await
    }

    /// `virStoragePoolCreateXML` (a transient pool, started) from a typed document.
    pub async fn create_storage_pool(
        &self,
        doc: &libvirt_xml::StoragePool,
        flags: StoragePoolCreateFlags,
    ) -> Result<StoragePool, Error> {
        self.create_storage_pool_xml(&doc.to_xml(), flags).await
    }

    /// `virNodeDeviceCreateXML` (a transient device, such as an mdev) from a typed document.
    pub async fn create_node_device(
        &self,
        doc: &libvirt_xml::NodeDevice,
    ) -> Result<NodeDevice, Error> {
        self.create_node_device_xml(&doc.to_xml(), 0).await
    }

    /// `virNodeDeviceDefineXML` (a persistent device) from a typed document.
    pub async fn define_node_device(
        &self,
        doc: &libvirt_xml::NodeDevice,
    ) -> Result<NodeDevice, Error> {
        self.define_node_device_xml(&doc.to_xml(), 0).await
    }

    /// `virSecretDefineXML` from a typed document.
    pub async fn define_secret(&self, doc: &libvirt_xml::Secret) -> Result<Secret, Error> {
        self.define_secret_xml(&doc.to_xml(), 0).await
    }

    /// `virConnectGetCapabilities`, typed.
    pub async fn capabilities_typed(&self) -> Result<libvirt_xml::Capabilities, XmlError> {
        parse(&self.capabilities().await?)
    }

    /// `virConnectGetDomainCapabilities`, typed (each `None` lets the daemon choose, as with
    /// `virsh domcapabilities`).
    pub async fn domain_capabilities_typed(
        &self,
        emulatorbin: Option<&str>,
        arch: Option<&str>,
        machine: Option<&str>,
        virttype: Option<&str>,
    ) -> Result<libvirt_xml::DomainCapabilities, XmlError> {
        parse(
            &self
                .domain_capabilities(emulatorbin, arch, machine, virttype, 0)
                .await?,
        )
    }
}

impl Domain {
    /// `virDomainGetXMLDesc`, typed: the live description, or with
    /// [`DomainXmlFlags::INACTIVE`] the persistent one.
    pub async fn xml_desc_typed(
        &self,
        flags: DomainXmlFlags,
    ) -> Result<libvirt_xml::Domain, XmlError> {
        parse(&self.xml_desc(flags).await?)
    }

    /// `virDomainSnapshotCreateXML` from a typed document.
    pub async fn create_snapshot(
        &self,
        doc: &libvirt_xml::DomainSnapshot,
        flags: DomainSnapshotCreateFlags,
    ) -> Result<DomainSnapshot, Error> {
        self.snapshot_create_xml(&doc.to_xml(), flags).await
    }
}

impl DomainSnapshot {
    /// `virDomainSnapshotGetXMLDesc`, typed.
    pub async fn xml_desc_typed(
        &self,
        flags: DomainSnapshotXmlFlags,
    ) -> Result<libvirt_xml::DomainSnapshot, XmlError> {
        parse(&self.xml_desc(flags).await?)
    }
}

impl Network {
    /// `virNetworkGetXMLDesc`, typed.
    pub async fn xml_desc_typed(
        &self,
        flags: NetworkXmlFlags,
    ) -> Result<libvirt_xml::Network, XmlError> {
        parse(&self.xml_desc(flags).await?)
    }
}

impl StoragePool {
    /// `virStoragePoolGetXMLDesc`, typed.
    pub async fn xml_desc_typed(
        &self,
        flags: StorageXmlFlags,
    ) -> Result<libvirt_xml::StoragePool, XmlError> {
        parse(&self.xml_desc(flags).await?)
    }

    /// `virStorageVolCreateXML` in this pool from a typed document.
    pub async fn create_volume(
        &self,
        doc: &libvirt_xml::StorageVolume,
        flags: StorageVolCreateFlags,
    ) -> Result<StorageVol, Error> {
        self.create_volume_xml(&doc.to_xml(), flags).await
    }
}

impl StorageVol {
    /// `virStorageVolGetXMLDesc`, typed.
    pub async fn xml_desc_typed(&self) -> Result<libvirt_xml::StorageVolume, XmlError> {
        parse(&self.xml_desc(0).await?)
    }
}

impl NodeDevice {
    /// `virNodeDeviceGetXMLDesc`, typed.
    pub async fn xml_desc_typed(&self) -> Result<libvirt_xml::NodeDevice, XmlError> {
        parse(&self.xml_desc(0).await?)
    }
}

impl Secret {
    /// `virSecretGetXMLDesc`, typed.
    pub async fn xml_desc_typed(&self) -> Result<libvirt_xml::Secret, XmlError> {
        parse(&self.xml_desc(0).await?)
    }
}
