//! libvirt's XML documents as Rust types: every document type libvirt 9.0 defines (domain,
//! network, storage pool and volume, node device, secret, network filter and binding, host
//! interface, snapshot, checkpoint, backup, capabilities, domain and pool capabilities, CPU,
//! network port), generated from libvirt's own RELAX NG schemas, and lossless: what the model
//! does not know is kept and written back.
//!
//! **Scope**: parsing (`from_xml`) and writing (`to_xml`) those documents; every element and
//! attribute the schemas define has a typed field (enums where the schema lists values, sized
//! integers, optional where optional, `Vec` where repeated); elements, attributes, comments and
//! namespaces it does not know are kept in document order ([`Extra`]); constructors for the
//! common documents ([`Domain::kvm`], [`Disk::file`], [`Interface::network`],
//! [`StorageVolume::new`], …); typed errors naming the place (`domain/devices/disk[2]/@type`)
//! with bounded input size and depth.
//!
//! **Not in scope**: I/O and connections (the `libvirt-remote` crate fetches and sends these
//! documents; its `xml` feature gives its handles typed forms), validating the rules libvirt
//! checks beyond its schemas (that a PCI slot is free, that a disk's source matches its type),
//! and libvirt's internal documents (status XML, migration cookies).
//!
//! ```text
//!   libvirt-9.0 *.rng ──libvirt-xml-gen──▶ src/generated/*.rs (checked in, reproducible)
//!                                                 │  one struct per element place, one enum
//!                                                 │  per value list, `impl Node` for each
//!   &str ──quick-xml events──▶ de (one driver) ───┴──▶ Domain { name, devices, …, extra }
//!                                                              │
//!   String ◀──────────────── ser (one writer) ◀────────────────┘  unknown content, comments,
//!                                                                 order and spellings from `extra`
//! ```
//!
//! # Quick start
//!
//! A minimal bootable guest: a disk, a NIC on the default network, a serial console.
//!
//! ```
//! use libvirt_xml::{Disk, DiskDriverType, Domain, Interface};
//!
//! let domain = Domain::kvm("web-1")
//!     .with_memory_mib(1024)
//!     .with_vcpus(2)
//!     .with_disk(Disk::file("/var/lib/libvirt/images/web-1.qcow2", "vda").with_format(DiskDriverType::Qcow2))
//!     .with_interface(Interface::network("default"))
//!     .with_serial_console();
//! let xml = domain.to_xml(); // what `virDomainDefineXML` takes
//!
//! let back = Domain::from_xml(&xml)?;
//! assert_eq!(back.disks()[0].target_dev(), Some("vda"));
//! assert_eq!(back.memory.and_then(|m| m.to_bytes()), Some(1 << 30));
//! # Ok::<(), libvirt_xml::Error>(())
//! ```
//!
//! Any document, its type chosen by its root element: [`AnyDocument::from_xml`]. Reading a
//! newer libvirt's output, where an enumeration may have grown: [`ParseOptions::lenient`].
//!
//! # Lossless
//!
//! Parsing then writing gives the same XML tree: the same elements and namespaces, the same
//! attributes (their order aside), the same text (its surrounding whitespace aside), children
//! in the same order, comments and processing instructions included. Values keep their
//! spelling while unchanged (`bus='0x00'` stays `0x00`; a changed value is written in canonical
//! form). Proven on libvirt's own test suite: the 3,148 documents of libvirt 9.0's `tests/`
//! that its schemas accept parse with no untyped element or attribute and round-trip to an
//! equal tree (`tests/corpus.rs`; `scripts/libvirt-source` fetches the corpus).
//!
//! # Names
//!
//! Types are named after libvirt's define or the element's place (`Disk`, `DiskSource`,
//! `DiskDriver`, `Interface`, `InterfaceSource`, `Graphics`, `Network`, `StoragePool`,
//! `StorageVolume`); fields after the attribute or element, in snake case, plural where the
//! element repeats (`devices.disks`); the element's own text is `value`. See the crate's
//! README for the rules.

mod build;
mod de;
mod document;
mod error;
mod extra;
#[rustfmt::skip]
mod generated;
mod node;
mod ser;
pub(crate) mod value;
mod xml;

#[cfg(feature = "fuzzing")]
pub mod fuzzing;

pub use build::unit_bytes;
pub use document::{Document, ParseOptions, Parsed};
pub use error::{Error, ErrorKind};
pub use extra::Extra;
pub use generated::*;
pub use xml::{XmlAttribute, XmlElement, XmlNode};
