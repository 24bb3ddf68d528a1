//! The commands that read libvirt's XML documents, through `libvirt-xml`'s typed model:
//! domiflist, domblklist, snapshot-info; and the dumps virsh prints as the daemon sends them:
//! vol-dumpxml, pool-dumpxml, nodedev-dumpxml, domcapabilities.
//!
//! XML from the daemon is parsed leniently: a value a newer libvirt added stays untyped
//! instead of failing the command.

use libvirt_remote::prelude::*;
use libvirt_remote::proto::procs::domain::DomainXmlFlags;
use libvirt_remote::proto::procs::snapshot::DomainSnapshotListFlags;
use libvirt_remote::proto::procs::storage::StorageXmlFlags;
use libvirt_remote::xml::XmlError;
use libvirt_xml::{Document, ParseOptions};

use crate::domain::DomArg;
use crate::storage::PoolArg;
use crate::table::{Table, field, yes_no};
use crate::{R, err, lookup, text};

#[derive(clap::Subcommand)]
pub enum Cmd {
    /// List all domain virtual interfaces.
    Domiflist {
        #[command(flatten)]
        domain: DomArg,
        /// The persistent definition, not the live one.
        #[arg(long)]
        inactive: bool,
    },
    /// List all domain blocks.
    Domblklist {
        #[command(flatten)]
        domain: DomArg,
        /// The persistent definition, not the live one.
        #[arg(long)]
        inactive: bool,
        /// Type and device too.
        #[arg(long)]
        details: bool,
    },
    /// Snapshot information.
    SnapshotInfo {
        #[command(flatten)]
        domain: DomArg,
        /// Snapshot name.
        #[arg(value_name = "SNAPSHOTNAME")]
        snapshotname: Option<String>,
        /// Snapshot name, as an option.
        #[arg(
            long = "snapshotname",
            value_name = "SNAPSHOTNAME",
            conflicts_with = "snapshotname"
        )]
        snapshotname_opt: Option<String>,
        /// The current snapshot.
        #[arg(long)]
        current: bool,
    },
    /// Volume XML.
    VolDumpxml {
        /// Volume name, key or path.
        vol: String,
        /// Pool name or UUID.
        #[arg(long)]
        pool: Option<String>,
    },
    /// Storage pool XML.
    PoolDumpxml {
        #[command(flatten)]
        pool: PoolArg,
        /// The persistent definition, not the live one.
        #[arg(long)]
        inactive: bool,
    },
    /// Node device XML.
    NodedevDumpxml {
        /// Device name, or `wwnn,wwpn` of a SCSI host.
        device: String,
    },
    /// Domain capabilities of a hypervisor.
    Domcapabilities {
        /// Virtualization type (`kvm`, `qemu`).
        #[arg(long)]
        virttype: Option<String>,
        /// Emulator binary.
        #[arg(long)]
        emulatorbin: Option<String>,
        /// Guest architecture.
        #[arg(long)]
        arch: Option<String>,
        /// Machine type.
        #[arg(long)]
        machine: Option<String>,
    },
}

pub async fn run(c: &Connect, cmd: Cmd) -> R {
    match cmd {
        Cmd::Domiflist { domain, inactive } => domiflist(c, &domain, inactive).await,
        Cmd::Domblklist {
            domain,
            inactive,
            details,
        } => domblklist(c, &domain, inactive, details).await,
        Cmd::SnapshotInfo {
            domain,
            snapshotname,
            snapshotname_opt,
            current,
        } => {
            let name = snapshotname.or(snapshotname_opt);
            snapshot_info(c, &domain, name.as_deref(), current).await
        }
        Cmd::VolDumpxml { vol, pool } => {
            let v = lookup::vol(c, pool.as_deref(), &vol).await?;
            print!("{}", v.xml_desc(0).await.map_err(err)?);
            Ok(())
        }
        Cmd::PoolDumpxml { pool, inactive } => {
            let p = lookup::pool(c, pool.name()).await?;
            let mut flags = StorageXmlFlags::empty();
            flags.set(StorageXmlFlags::INACTIVE, inactive);
            print!("{}", p.xml_desc(flags).await.map_err(err)?);
            Ok(())
        }
        Cmd::NodedevDumpxml { device } => {
            let dev = match device.split_once(',') {
                Some((wwnn, wwpn)) => c.lookup_node_device_scsi_host_by_wwn(wwnn, wwpn, 0).await,
                None => c.lookup_node_device_by_name(&device).await,
            }
            .map_err(|e| {
                format!(
                    "Could not find matching device '{device}'\nerror: {}",
                    crate::msg(&e)
                )
            })?;
            print!("{}", dev.xml_desc(0).await.map_err(err)?);
            Ok(())
        }
        Cmd::Domcapabilities {
            virttype,
            emulatorbin,
            arch,
            machine,
        } => {
            let caps = c
                .domain_capabilities(
                    emulatorbin.as_deref(),
                    arch.as_deref(),
                    machine.as_deref(),
                    virttype.as_deref(),
                    0,
                )
                .await
                .map_err(|e| {
                    format!(
                        "failed to get emulator capabilities\nerror: {}",
                        crate::msg(&e)
                    )
                })?;
            // virsh adds a newline to the document's own.
            println!("{caps}");
            Ok(())
        }
    }
}

/// A document from the daemon, typed (leniently: see the module docs).
fn parse<T: Document>(xml: &str) -> R<T> {
    T::from_xml_with(xml, &ParseOptions::lenient())
        .map(|p| p.document)
        .map_err(text)
}

/// A typed call's failure as virsh prints it.
fn xml_err(e: XmlError) -> String {
    match e {
        XmlError::Call(e) => err(e),
        other => other.to_string(),
    }
}

async fn domain_doc(c: &Connect, name: &str, inactive: bool) -> R<libvirt_xml::Domain> {
    let dom = lookup::domain(c, name).await?;
    let mut flags = DomainXmlFlags::empty();
    flags.set(DomainXmlFlags::INACTIVE, inactive);
    dom.xml_desc_typed(flags).await.map_err(xml_err)
}

/// `domiflist`: virsh's columns; the source is the first of the source's `bridge`, `dev`,
/// `network`, `name`, `path` in libvirt's attribute order (network before bridge, as libvirt
/// writes a running network interface).
async fn domiflist(c: &Connect, name: &str, inactive: bool) -> R {
    let doc = domain_doc(c, name, inactive).await?;
    let mut t = Table::new(&["Interface", "Type", "Source", "Model", "MAC"]);
    for i in doc.interfaces() {
        let dash = || "-".to_owned();
        t.row(vec![
            i.target
                .as_ref()
                .and_then(|t| t.dev.clone())
                .unwrap_or_else(dash),
            i.r#type.map(|t| t.as_str().to_owned()).unwrap_or_default(),
            i.source_name().map_or_else(dash, str::to_owned),
            i.model
                .as_ref()
                .and_then(|m| m.r#type.clone())
                .unwrap_or_else(dash),
            i.mac
                .as_ref()
                .and_then(|m| m.address.clone())
                .unwrap_or_else(dash),
        ]);
    }
    print!("{}", t.render());
    Ok(())
}

/// `domblklist [--details]`: virsh's columns and its refusals.
async fn domblklist(c: &Connect, name: &str, inactive: bool, details: bool) -> R {
    let doc = domain_doc(c, name, inactive).await?;
    let mut t = if details {
        Table::new(&["Type", "Device", "Target", "Source"])
    } else {
        Table::new(&["Target", "Source"])
    };
    for d in doc.disks() {
        let kind = d.r#type.map(|t| t.as_str());
        let device = d.device.map(|d| d.as_str());
        if details && (kind.is_none() || device.is_none()) {
            // virsh prints this without a newline and fails.
            print!("unable to query block list details");
            return Err(String::new());
        }
        let target = d.target_dev().ok_or("unable to query block list")?;
        let source = if kind == Some("nvme") {
            Some(nvme_source(d).ok_or("Unable to query NVMe disk address")?)
        } else {
            d.source_name()
        };
        let source = source.unwrap_or_else(|| "-".to_owned());
        if details {
            t.row(vec![
                kind.unwrap_or_default().to_owned(),
                device.unwrap_or_default().to_owned(),
                target.to_owned(),
                source,
            ]);
        } else {
            t.row(vec![target.to_owned(), source]);
        }
    }
    print!("{}", t.render());
    Ok(())
}

/// `nvme://DDDD:BB:SS.F/NS`, as virsh names an NVMe disk.
fn nvme_source(d: &libvirt_xml::Disk) -> Option<String> {
    let s = d.source.as_ref()?;
    let a = s.address.as_ref()?;
    Some(format!(
        "nvme://{:04x}:{:02x}:{:02x}.{}/{}",
        a.domain.unwrap_or(0),
        a.bus.unwrap_or(0),
        a.slot.unwrap_or(0),
        a.function.unwrap_or(0),
        s.namespace?
    ))
}

/// `snapshot-info`: what virsh prints, from the snapshot's XML and its counts.
async fn snapshot_info(c: &Connect, domain: &str, name: Option<&str>, current: bool) -> R {
    let dom = lookup::domain(c, domain).await?;
    let snap = match (name, current) {
        (Some(_), true) => return Err("--snapshotname and --current are mutually exclusive".into()),
        (Some(n), false) => dom.snapshot_lookup_by_name(n, 0).await.map_err(err)?,
        (None, true) => dom.snapshot_current(0).await.map_err(err)?,
        (None, false) => return Err("--snapshotname or --current is required".into()),
    };
    print!("{}", field("Name:", snap.name()));
    print!("{}", field("Domain:", dom.name()));
    // virsh falls back to "no" when the daemon cannot tell.
    let is_current = snap.is_current(0).await.unwrap_or(false);
    print!("{}", field("Current:", yes_no(is_current)));
    let xml = snap.xml_desc(Default::default()).await.map_err(err)?;
    // What the snapshot's XML tells, taken out before the next calls (the document, with its
    // domain inside, stays out of this future).
    let (state, location, parent) = summary(&xml)?;
    print!("{}", field("State:", state));
    print!("{}", field("Location:", location));
    print!("{}", field("Parent:", parent.as_deref().unwrap_or("-")));
    let children = snap
        .num_children(DomainSnapshotListFlags::empty())
        .await
        .map_err(err)?;
    print!("{}", field("Children:", children));
    let descendants = snap
        .num_children(DomainSnapshotListFlags::DESCENDANTS)
        .await
        .map_err(err)?;
    print!("{}", field("Descendants:", descendants));
    let metadata = match snap.has_metadata(0).await {
        Ok(m) => Some(m),
        Err(_) => dom
            .snapshot_num(DomainSnapshotListFlags::METADATA)
            .await
            .ok()
            .map(|n| n > 0),
    };
    if let Some(m) = metadata {
        print!("{}", field("Metadata:", yes_no(m)));
    }
    Ok(())
}

/// A snapshot's state, location and parent, from its XML.
fn summary(xml: &str) -> R<(&'static str, &'static str, Option<String>)> {
    let doc: libvirt_xml::DomainSnapshot = parse(xml)?;
    let state = doc
        .state
        .as_ref()
        .ok_or("unexpected problem reading snapshot xml")?
        .as_str();
    let location = if external(&doc) {
        "external"
    } else {
        "internal"
    };
    Ok((state, location, doc.parent.and_then(|p| p.name)))
}

/// Whether a snapshot is stored outside the disk images: with a `<memory>` element, when its
/// memory or one of its disks is external; without (before libvirt 1.0.1), when it is a
/// disk-only snapshot.
fn external(doc: &libvirt_xml::DomainSnapshot) -> bool {
    use libvirt_xml::{DomainSnapshotMemorySnapshot, SnapshotDiskSnapshot, SnapshotState};
    match &doc.memory {
        Some(m) => {
            m.snapshot == Some(DomainSnapshotMemorySnapshot::External)
                || doc.disks.as_ref().is_some_and(|d| {
                    d.disks
                        .iter()
                        .any(|d| d.snapshot == Some(SnapshotDiskSnapshot::External))
                })
        }
        None => doc.state == Some(SnapshotState::DiskSnapshot),
    }
}
