//! Host and connection commands: nodeinfo, hostname, version, capabilities, iface-list,
//! nodedev-list, secret-list, nwfilter-list.

use libvirt_rpc::Client;
use libvirt_rpc::proto::procs::common::ListAllArgs;
use libvirt_rpc::proto::procs::connect::{
    ConnectGetCapabilities, ConnectGetHostname, ConnectGetLibVersion, ConnectGetType,
    ConnectGetVersion,
};
use libvirt_rpc::proto::procs::interface::{
    ConnectListAllInterfaces, ConnectListAllInterfacesFlags, InterfaceArgs, InterfaceIsActive,
};
use libvirt_rpc::proto::procs::node::NodeGetInfo;
use libvirt_rpc::proto::procs::nodedev::ConnectListAllNodeDevices;
use libvirt_rpc::proto::procs::nwfilter::ConnectListAllNwFilters;
use libvirt_rpc::proto::procs::secret::{ConnectListAllSecrets, SecretUsageType};

use crate::table::Table;
use crate::{R, err};

/// `VIR_CONNECT_LIST_NODE_DEVICES_INACTIVE` / `_ACTIVE` (libvirt 7.3).
const NODEDEV_INACTIVE: u32 = 1 << 30;
const NODEDEV_ACTIVE: u32 = 1 << 31;

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

pub async fn run(c: &Client, cmd: Cmd) -> R {
    match cmd {
        Cmd::Nodeinfo => nodeinfo(c).await,
        Cmd::Hostname => {
            let h = c.call::<ConnectGetHostname>(&()).await.map_err(err)?;
            println!("{}", h.hostname);
            Ok(())
        }
        Cmd::Version { daemon } => version(c, daemon).await,
        Cmd::Capabilities => {
            let caps = c.call::<ConnectGetCapabilities>(&()).await.map_err(err)?;
            println!("{}", caps.capabilities);
            Ok(())
        }
        Cmd::IfaceList { all, inactive } => iface_list(c, all, inactive).await,
        Cmd::NodedevList { all, inactive } => {
            let flags = match (all, inactive) {
                (true, _) => NODEDEV_ACTIVE | NODEDEV_INACTIVE,
                (false, true) => NODEDEV_INACTIVE,
                (false, false) => NODEDEV_ACTIVE,
            };
            let mut names: Vec<String> = c
                .call::<ConnectListAllNodeDevices>(&ListAllArgs {
                    need_results: 1,
                    flags,
                })
                .await
                .map_err(|e| format!("Failed to list node devices\nerror: {}", crate::msg(&e)))?
                .devices
                .into_iter()
                .map(|d| d.name.to_string())
                .collect();
            names.sort();
            for n in names {
                println!("{n}");
            }
            Ok(())
        }
        Cmd::SecretList => {
            let mut secrets = c
                .call::<ConnectListAllSecrets>(&ListAllArgs {
                    need_results: 1,
                    flags: Default::default(),
                })
                .await
                .map_err(err)?
                .secrets;
            secrets.sort_by_key(|s| s.uuid.to_string());
            let mut t = Table::new(&["UUID", "Usage"]);
            for s in secrets {
                let kind = match s.usage_type {
                    SecretUsageType::VOLUME => Some("volume"),
                    SecretUsageType::CEPH => Some("ceph"),
                    SecretUsageType::ISCSI => Some("iscsi"),
                    SecretUsageType::TLS => Some("tls"),
                    SecretUsageType::VTPM => Some("vtpm"),
                    _ => None,
                };
                let usage =
                    kind.map_or_else(|| "Unused".to_string(), |k| format!("{k} {}", s.usage_id));
                t.row(vec![s.uuid.to_string(), usage]);
            }
            print!("{}", t.render());
            Ok(())
        }
        Cmd::NwfilterList => {
            let mut filters = c
                .call::<ConnectListAllNwFilters>(&ListAllArgs {
                    need_results: 1,
                    flags: Default::default(),
                })
                .await
                .map_err(err)?
                .filters;
            filters.sort_by_key(|f| f.name.to_string());
            let mut t = Table::new(&["UUID", "Name"]);
            for f in filters {
                t.row(vec![f.uuid.to_string(), f.name.to_string()]);
            }
            print!("{}", t.render());
            Ok(())
        }
    }
}

/// `major.minor.release` from libvirt's packed version number.
fn version_text(v: u64) -> String {
    format!("{}.{}.{}", v / 1_000_000, v / 1000 % 1000, v % 1000)
}

/// virsh's lines; lv has no local C library, so the first two name lv and `Using API`
/// carries the daemon's library version.
async fn version(c: &Client, daemon: bool) -> R {
    let lib = c
        .call::<ConnectGetLibVersion>(&())
        .await
        .map_err(err)?
        .lib_ver;
    let kind = c.call::<ConnectGetType>(&()).await.map_err(err)?.kind;
    let hv = c.call::<ConnectGetVersion>(&()).await.map_err(err)?.hv_ver;
    let ours = env!("CARGO_PKG_VERSION");
    println!("Compiled against library: lv {ours}");
    println!("Using library: lv {ours}");
    println!("Using API: {kind} {}", version_text(lib));
    println!("Running hypervisor: {kind} {}", version_text(hv));
    if daemon {
        println!("Running against daemon: {}", version_text(lib));
    }
    Ok(())
}

async fn nodeinfo(c: &Client) -> R {
    let n = c.call::<NodeGetInfo>(&()).await.map_err(err)?;
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

async fn iface_list(c: &Client, all: bool, inactive: bool) -> R {
    let flags = match (all, inactive) {
        (true, _) => {
            ConnectListAllInterfacesFlags::INACTIVE.bits()
                | ConnectListAllInterfacesFlags::ACTIVE.bits()
        }
        (false, true) => ConnectListAllInterfacesFlags::INACTIVE.bits(),
        (false, false) => ConnectListAllInterfacesFlags::ACTIVE.bits(),
    };
    let mut ifaces = c
        .call::<ConnectListAllInterfaces>(&ListAllArgs {
            need_results: 1,
            flags: flags.into(),
        })
        .await
        .map_err(err)?
        .ifaces;
    ifaces.sort_by_key(|i| i.name.to_string());
    let mut t = Table::new(&["Name", "State", "MAC Address"]);
    for i in ifaces {
        let active = c
            .call::<InterfaceIsActive>(&InterfaceArgs { iface: i.clone() })
            .await
            .map_err(err)?
            .active;
        let state = if active != 0 { "active" } else { "inactive" };
        t.row(vec![i.name.to_string(), state.into(), i.mac.to_string()]);
    }
    print!("{}", t.render());
    Ok(())
}
