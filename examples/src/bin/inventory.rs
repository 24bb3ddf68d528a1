//! Inventory of a libvirt host through the object API: host facts, domains, storage pools
//! with their volumes, networks. `inventory [URI]` (default: libvirt's default URI).

use libvirt_remote::prelude::*;

#[tokio::main]
async fn main() -> Result<(), Error> {
    let conn = match std::env::args().nth(1) {
        Some(uri) => Connect::open(&uri).await?,
        None => Connect::open_default().await?,
    };
    let (host, version) = (conn.hostname().await?, conn.lib_version().await?);
    let node = conn.node_info().await?;
    println!("host {host} (libvirt {version})");
    println!("cpus {} memory {} KiB", node.cpus, node.memory);
    for dom in conn.list_all_domains(Default::default()).await? {
        let info = dom.info().await?;
        let state = info.state.to_string();
        println!("domain {:<20} {state:<10} {} KiB", dom.name(), info.memory);
    }
    for pool in conn.list_all_storage_pools(Default::default()).await? {
        println!("pool {} {} bytes", pool.name(), pool.info().await?.capacity);
        for vol in pool.list_all_volumes(Default::default()).await? {
            println!("  volume {} {}", vol.name(), vol.path().await?);
        }
    }
    for net in conn.list_all_networks(Default::default()).await? {
        let active = if net.is_active().await? {
            "active"
        } else {
            "inactive"
        };
        println!("network {} {active}", net.name());
    }
    Ok(())
}
