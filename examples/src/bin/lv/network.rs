//! Network commands: net-list, net-info, net-dumpxml.

use libvirt_remote::prelude::*;
use libvirt_remote::proto::procs::network::{ConnectListAllNetworksFlags, NetworkXmlFlags};

use crate::table::{Table, field, yes_no};
use crate::{R, err, lookup};

#[derive(clap::Subcommand)]
#[allow(clippy::enum_variant_names, reason = "virsh's command names")]
pub enum Cmd {
    /// List networks (active ones; --all adds the inactive).
    NetList {
        /// Active and inactive networks.
        #[arg(long)]
        all: bool,
        /// Inactive networks only.
        #[arg(long)]
        inactive: bool,
    },
    /// Network information.
    NetInfo {
        /// Network name or UUID.
        network: String,
    },
    /// Network XML.
    NetDumpxml {
        /// Network name or UUID.
        network: String,
        /// The persistent definition, not the live one.
        #[arg(long)]
        inactive: bool,
    },
}

pub async fn run(c: &Connect, cmd: Cmd) -> R {
    match cmd {
        Cmd::NetList { all, inactive } => net_list(c, all, inactive).await,
        Cmd::NetInfo { network } => net_info(c, &network).await,
        Cmd::NetDumpxml { network, inactive } => {
            let net = lookup::network(c, &network).await?;
            let flags = if inactive {
                NetworkXmlFlags::INACTIVE
            } else {
                NetworkXmlFlags::empty()
            };
            print!("{}", net.xml_desc(flags).await.map_err(err)?);
            Ok(())
        }
    }
}

/// Active, persistent and autostart flags (`None` where the call failed).
async fn net_flags(net: &Network) -> (Option<bool>, Option<bool>, Option<bool>) {
    let active = net.is_active().await.ok();
    let persistent = net.is_persistent().await.ok();
    let autostart = net.autostart().await.ok();
    (active, persistent, autostart)
}

async fn net_list(c: &Connect, all: bool, inactive: bool) -> R {
    let flags = match (all, inactive) {
        (true, _) => ConnectListAllNetworksFlags::empty(),
        (false, true) => ConnectListAllNetworksFlags::INACTIVE,
        (false, false) => ConnectListAllNetworksFlags::ACTIVE,
    };
    let mut nets = c.list_all_networks(flags).await.map_err(err)?;
    nets.sort_by_key(|n| n.name().to_string().to_lowercase());
    let mut t = Table::new(&["Name", "State", "Autostart", "Persistent"]);
    for n in nets {
        let (active, persistent, autostart) = net_flags(&n).await;
        let state = if active.unwrap_or(false) {
            "active"
        } else {
            "inactive"
        };
        t.row(vec![
            n.name().to_string(),
            state.into(),
            autostart.map_or("no autostart", yes_no).into(),
            persistent.map_or("unknown", yes_no).into(),
        ]);
    }
    print!("{}", t.render());
    Ok(())
}

async fn net_info(c: &Connect, name: &str) -> R {
    let n = lookup::network(c, name).await?;
    let (active, persistent, autostart) = net_flags(&n).await;
    let mut out = field("Name:", n.name());
    out += &field("UUID:", n.uuid());
    if let Some(a) = active {
        out += &field("Active:", yes_no(a));
    }
    out += &field("Persistent:", persistent.map_or("unknown", yes_no));
    out += &field("Autostart:", autostart.map_or("no autostart", yes_no));
    if let Ok(b) = n.bridge_name().await {
        out += &field("Bridge:", b);
    }
    print!("{out}");
    Ok(())
}
