//! `inventory` without async: the same report through `libvirt_remote::blocking`, whose handles
//! have the same methods, synchronous. `inventory_blocking [URI]` (default: libvirt's default
//! URI).

use libvirt_remote::Error;
use libvirt_remote::blocking::Connect;

fn main() -> Result<(), Error> {
    let conn = match std::env::args().nth(1) {
        Some(uri) => Connect::open(&uri)?,
        None => Connect::open_default()?,
    };
    let (host, version) = (conn.hostname()?, conn.lib_version()?);
    let node = conn.node_info()?;
    println!("host {host} (libvirt {version})");
    println!("cpus {} memory {} KiB", node.cpus, node.memory);
    for dom in conn.list_all_domains(Default::default())? {
        let info = dom.info()?;
        let state = info.state.to_string();
        println!("domain {:<20} {state:<10} {} KiB", dom.name(), info.memory);
    }
    for pool in conn.list_all_storage_pools(Default::default())? {
        println!("pool {} {} bytes", pool.name(), pool.info()?.capacity);
        for vol in pool.list_all_volumes(Default::default())? {
            println!("  volume {} {}", vol.name(), vol.path()?);
        }
    }
    for net in conn.list_all_networks(Default::default())? {
        let active = if net.is_active()? {
            "active"
        } else {
            "inactive"
        };
        println!("network {} {active}", net.name());
    }
    Ok(())
}
