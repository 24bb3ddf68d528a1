//! Host and connection commands: nodeinfo, hostname, version, capabilities, iface-list,
//! nodedev-list, secret-list, nwfilter-list.

use libvirt_remote::prelude::*;
use libvirt_remote::proto::names::SecretUsageType;
use libvirt_remote::proto::procs::interface::ConnectListAllInterfacesFlags;

use crate::table::Table;
use crate::{R, err};

#[derive(clap::Subcommand)]
pub enum Cmd {
    /// Host CPU and memory.
    Nodeinfo,
    /// The host's name.
    Hostname,
    /// Library, API and hypervisor versions.
    Version {
        /// Also the daemon's version.
        #[arg(long)]
        daemon: bool,
    },
    /// The host's capabilities XML.
    Capabilities,
    /// List host interfaces (active ones; --all adds the inactive).
    IfaceList {
        /// Active and inactive interfaces.
        #[arg(long)]
        all: bool,
        /// Inactive interfaces only.
        #[arg(long)]
        inactive: bool,
    },
    /// List host devices (active ones; --all adds the inactive).
    NodedevList {
        /// Active and inactive devices.
        #[arg(long)]
        all: bool,
        /// Inactive devices only.
        #[arg(long)]
        inactive: bool,
    },
    /// List secrets.
    SecretList,
    /// List network filters.
    NwfilterList,
}

pub async fn run(c: &Connect, cmd: Cmd) -> R {
    match cmd {
        Cmd::Nodeinfo => nodeinfo(c).await,
        Cmd::Hostname => {
            println!("{}", c.hostname().await.map_err(err)?);
            Ok(())
        }
        Cmd::Version { daemon } => version(c, daemon).await,
        Cmd::Capabilities => {
            println!("{}", c.capabilities().await.map_err(err)?);
            Ok(())
        }
        Cmd::IfaceList { all, inactive } => iface_list(c, all, inactive).await,
        Cmd::NodedevList { all, inactive } => {
            use libvirt_remote::proto::procs::nodedev::ConnectListAllNodeDevicesFlags as F;
            let flags = match (all, inactive) {
                (true, _) => F::ACTIVE | F::INACTIVE,
                (false, true) => F::INACTIVE,
                (false, false) => F::ACTIVE,
            };
            let devices = c
                .list_all_node_devices(flags)
                .await
                .map_err(|e| format!("Failed to list node devices\nerror: {}", crate::msg(&e)))?;
            let mut names: Vec<String> = devices.iter().map(|d| d.name().to_string()).collect();
            names.sort();
            for n in names {
                println!("{n}");
            }
            Ok(())
        }
        Cmd::SecretList => {
            let mut secrets = match c.list_all_secrets(Default::default()).await {
                Err(e) if unsupported(&e) => {
                    let n = c
                        .num_of_secrets()
                        .await
                        .map_err(|e| failed("count secrets", &e))?;
                    let uuids = c
                        .list_secrets(n)
                        .await
                        .map_err(|e| failed("list secrets", &e))?;
                    let mut found = Vec::new();
                    for u in uuids.iter().filter_map(|u| u.parse().ok()) {
                        // As virsh: one that went away meanwhile is skipped.
                        found.extend(c.lookup_secret_by_uuid(u).await.ok());
                    }
                    found
                }
                r => r.map_err(err)?,
            };
            secrets.sort_by_key(|s| s.uuid().to_string());
            let mut t = Table::new(&["UUID", "Usage"]);
            for s in secrets {
                let kind = match s.usage_type() {
                    SecretUsageType::VOLUME => Some("volume"),
                    SecretUsageType::CEPH => Some("ceph"),
                    SecretUsageType::ISCSI => Some("iscsi"),
                    SecretUsageType::TLS => Some("tls"),
                    SecretUsageType::VTPM => Some("vtpm"),
                    _ => None,
                };
                let usage =
                    kind.map_or_else(|| "Unused".to_string(), |k| format!("{k} {}", s.usage_id()));
                t.row(vec![s.uuid().to_string(), usage]);
            }
            print!("{}", t.render());
            Ok(())
        }
        Cmd::NwfilterList => {
            let mut filters = match c.list_all_nw_filters(Default::default()).await {
                Err(e) if unsupported(&e) => {
                    let count = c.num_of_nw_filters().await;
                    let n = count.map_err(|e| failed("count network filters", &e))?;
                    let names = c.list_nw_filters(n).await;
                    let names = names.map_err(|e| failed("list network filters", &e))?;
                    let mut found = Vec::new();
                    for name in &names {
                        found.extend(c.lookup_nw_filter_by_name(name).await.ok());
                    }
                    found
                }
                r => r.map_err(err)?,
            };
            filters.sort_by_key(|f| f.name().to_string());
            let mut t = Table::new(&["UUID", "Name"]);
            for f in filters {
                t.row(vec![f.uuid().to_string(), f.name().to_string()]);
            }
            print!("{}", t.render());
            Ok(())
        }
    }
}

/// The daemon or driver lacks a `ConnectListAll*` call: virsh then falls back to the older
/// count-then-list calls, and so does lv.
fn unsupported(e: &Error) -> bool {
    e.remote()
        .is_some_and(|r| r.code == libvirt_remote::proto::ErrorCode::NO_SUPPORT)
}

/// virsh's `Failed to WHAT` line, then libvirt's reason.
fn failed(what: &str, e: &Error) -> String {
    format!("Failed to {what}\nerror: {}", crate::msg(e))
}

/// virsh's lines; lv has no local C library, so the first two name lv and `Using API`
/// carries the daemon's library version.
async fn version(c: &Connect, daemon: bool) -> R {
    // Three independent calls in flight at once: one round trip instead of three.
    let (lib, kind, hv) =
        tokio::try_join!(c.lib_version(), c.driver_type(), c.hyp_version()).map_err(err)?;
    let ours = env!("CARGO_PKG_VERSION");
    println!("Compiled against library: lv {ours}");
    println!("Using library: lv {ours}");
    println!("Using API: {kind} {lib}");
    println!("Running hypervisor: {kind} {hv}");
    if daemon {
        println!("Running against daemon: {lib}");
    }
    Ok(())
}

async fn nodeinfo(c: &Connect) -> R {
    let n = c.node_info().await.map_err(err)?;
    let line = |label: &str, v: String| println!("{label:<20} {v}");
    line("CPU model:", n.model.to_string_lossy());
    line("CPU(s):", n.cpus.to_string());
    line("CPU frequency:", format!("{} MHz", n.mhz));
    line("CPU socket(s):", n.sockets.to_string());
    line("Core(s) per socket:", n.cores.to_string());
    line("Thread(s) per core:", n.threads.to_string());
    line("NUMA cell(s):", n.nodes.to_string());
    line("Memory size:", format!("{} KiB", n.memory));
    Ok(())
}

async fn iface_list(c: &Connect, all: bool, inactive: bool) -> R {
    let flags = match (all, inactive) {
        (true, _) => {
            ConnectListAllInterfacesFlags::INACTIVE | ConnectListAllInterfacesFlags::ACTIVE
        }
        (false, true) => ConnectListAllInterfacesFlags::INACTIVE,
        (false, false) => ConnectListAllInterfacesFlags::ACTIVE,
    };
    let mut ifaces = c.list_all_interfaces(flags).await.map_err(err)?;
    ifaces.sort_by_key(|i| i.name().to_string());
    let mut t = Table::new(&["Name", "State", "MAC Address"]);
    for i in ifaces {
        let state = if i.is_active().await.map_err(err)? {
            "active"
        } else {
            "inactive"
        };
        t.row(vec![
            i.name().to_string(),
            state.into(),
            i.mac().to_string(),
        ]);
    }
    print!("{}", t.render());
    Ok(())
}
